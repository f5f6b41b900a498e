#!/usr/bin/env bash
# The whole test suite: dependencies, a warning-free build, formatting, every ctest test.
# Tests that need root or a device they lack are reported as skipped, with the reason.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/build.sh
bash ci/format.sh
bash ci/layers.sh
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j2 --timeout 300
# The same suite under ASan+UBSan and, for the threaded parts, TSan; then every fuzz target for a
# bounded time. Each fails on any sanitizer report or fuzz finding.
bash ci/sanitize.sh
bash ci/fuzz.sh
