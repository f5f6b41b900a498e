#!/usr/bin/env bash
# Configures and builds mtperf into ${BUILD_DIR:-build} (warnings are errors here).
# Arguments are the targets to build (default: all of them, the tests included).
# MTPERF_DEPS=build installs only what building needs (ci/deps.sh build), not the test tools.
# MTPERF_FAST=ON: ci/demo.sh's build, for time: eight sources of a library compiled as one
# (CMAKE_UNITY_BUILD). Off by default, so that this build checks that every source includes what
# it uses and compiles alone.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/deps.sh ${MTPERF_DEPS:-}
build=${BUILD_DIR:-build}
# Debug information at -g1: function names and line tables (backtraces, perf's symbols and
# annotations), not variables; it compiles in two thirds of the CPU time of -g (measured on
# workloads/spec.cpp: 7.0 s against 10.9 s user). For gdb's variables: -DCMAKE_CXX_FLAGS_RELWITHDEBINFO=
# "-O2 -g -DNDEBUG" on a build folder of your own.
flags="-O2 -g1 -DNDEBUG"
fast=${MTPERF_FAST:-OFF}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMTPERF_WERROR=ON \
  -DCMAKE_UNITY_BUILD="$fast" -DCMAKE_UNITY_BUILD_BATCH_SIZE=8 \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$flags" >/dev/null
targets=()
[ $# -gt 0 ] && targets=(--target "$@")
cmake --build "$build" -j"$(nproc)" "${targets[@]}"
