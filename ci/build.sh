#!/usr/bin/env bash
# Configures and builds mtperf into ${BUILD_DIR:-build} (warnings are errors here).
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/deps.sh
build=${BUILD_DIR:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMTPERF_WERROR=ON >/dev/null
cmake --build "$build" -j"$(nproc)"
