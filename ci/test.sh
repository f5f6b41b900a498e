#!/usr/bin/env bash
# The whole test suite: dependencies, a warning-free build, formatting, every ctest test.
# Tests that need root or a device they lack are reported as skipped, with the reason.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/build.sh
bash ci/format.sh
bash ci/layers.sh
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j2 --timeout 300
# The sanitizer and fuzz stages (ci/sanitize.sh: the suite under ASan+UBSan, the threaded parts
# under TSan; ci/fuzz.sh: every fuzz target for a bounded time) run on their own; they are not
# part of this command until their time on a fresh 2-core machine is measured.
