#!/usr/bin/env bash
# Configures and builds mtperf into ${BUILD_DIR:-build} (warnings are errors here).
# Arguments are the targets to build (default: all of them, the tests included).
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/deps.sh
build=${BUILD_DIR:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMTPERF_WERROR=ON >/dev/null
targets=()
[ $# -gt 0 ] && targets=(--target "$@")
cmake --build "$build" -j"$(nproc)" "${targets[@]}"
