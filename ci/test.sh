#!/usr/bin/env bash
# The whole test suite: dependencies, a warning-free build, formatting, every ctest test.
# Tests that need root or a device they lack are reported as skipped, with the reason.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/build.sh
bash ci/format.sh
bash ci/layers.sh
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j2 --timeout 300
