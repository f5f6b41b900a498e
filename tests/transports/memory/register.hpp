#pragma once
#include "transports/api/registry.hpp"

namespace mtperf::test {
// In-memory byte pipes between the client and the server of one process: tests only.
const TransportEntry& memory_transport_entry();
}  // namespace mtperf::test
