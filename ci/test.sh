#!/usr/bin/env bash
# The whole test suite: dependencies, a warning-free build, formatting, the layering check, every
# ctest test; then the suite again under ASan+UBSan and its threaded parts under TSan
# (ci/sanitize.sh), and every fuzz target for ${FUZZ_SECONDS} s (ci/fuzz.sh, in the ASan build).
# Tests that need root or a device they lack are reported as skipped, with the reason.
#
# TEST_STAGES picks stages (default "suite sanitize fuzz"); e.g. TEST_STAGES=suite for the
# quick loop. Time of each stage on a fresh clone of a 2-core machine: README.md, Testing.
set -euo pipefail
cd "$(dirname "$0")/.."
stages=" ${TEST_STAGES:-suite sanitize fuzz} "
start=$(date +%s)
# Each stage ends with its time and the disk left: a CI machine's disk can be the limit (the
# three build folders take about 2.5 GB together).
free_disk() { echo "$(df -Ph . | awk 'NR == 2 { print $4 }') free on disk"; }
stage_done() { echo "ci/test.sh: $1 done at $(($(date +%s) - start)) s; $(free_disk)"; }
echo "ci/test.sh: $(free_disk)"
if [[ $stages == *" suite "* ]]; then
  bash ci/build.sh
  bash ci/format.sh
  bash ci/layers.sh
  ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j2 --timeout 300
  # The Debian package from the same build, installed, used and purged in a minimal Debian 12
  # root (exit 77: skipped, with the reason it printed).
  bash ci/package.sh
  rc=0
  bash ci/install-test.sh || rc=$?
  [ $rc -eq 0 ] || [ $rc -eq 77 ] || exit $rc
  stage_done suite
fi
if [[ $stages == *" sanitize "* ]]; then
  bash ci/sanitize.sh
  stage_done sanitize
fi
if [[ $stages == *" fuzz "* ]]; then
  FUZZ_SECONDS=${FUZZ_SECONDS:-15} bash ci/fuzz.sh
  stage_done fuzz
fi
