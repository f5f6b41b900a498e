// The tests' precompiled header (MTPERF_PCH): the common one and Catch2, compiled once for every
// test executable.
#pragma once

#include "cmake/pch/common.hpp"

#include <catch2/catch.hpp>
