#!/usr/bin/env bash
# The whole test suite. Each test executable is compiled once, in the sanitized build:
#   suite     the release build (gcc, warnings are errors) of what ships and what benchmarks:
#             mtperf, its man pages and completion, bench/; formatting; the layering check; the
#             tests that run that binary alone through programs of others (ctest -L release: the
#             JSON Schema checks, the HTML render, the fleet under Slurm, mpirun and podman
#             (beside the sanitize stage when it follows), the soft-RoCE guest), at full speed; the
#             Debian package, installed, used and purged;
#   sanitize  ci/sanitize.sh: every other test in one clang build under ASan+UBSan (warnings are
#             errors there too), and the threaded parts under TSan;
#   fuzz      every fuzz target for ${FUZZ_SECONDS} s (ci/fuzz.sh, in the ASan build).
#   all       not in the default: the gcc build of everything and every ctest test in it, the
#             quick loop (TEST_STAGES=all) for a change that needs no sanitizer.
# Tests that need root or a device they lack are reported as skipped, with the reason.
# Time of each stage on a fresh clone of a 2-core machine: README.md, Testing.
set -euo pipefail
cd "$(dirname "$0")/.."
stages=" ${TEST_STAGES:-suite sanitize fuzz} "
start=$(date +%s)
# Each stage ends with its time and the disk left: a CI machine's disk can be the limit (the
# three build folders take about 2.5 GB together).
free_disk() { echo "$(df -Ph . | awk 'NR == 2 { print $4 }') free on disk"; }
stage_done() { echo "ci/test.sh: $1 done at $(($(date +%s) - start)) s; $(free_disk)"; }
# finish_beside PID LOG WHAT [STATUS...]: waits for what ran beside a stage, shows its log and
# exits with its status unless that is 0 or one of STATUS (77: skipped, with the reason).
finish_beside() {
  local pid=$1 log=$2 what=$3 status=0
  shift 3
  wait "$pid" || status=$?
  cat "$log"
  rm -f "$log"
  echo "ci/test.sh: $what exited $status"
  [ $status -eq 0 ] || [[ " $* " == *" $status "* ]] || exit $status
}
echo "ci/test.sh: $(free_disk)"
if [[ $stages == *" all "* ]]; then
  bash ci/build.sh
  ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j2 --timeout 300
  stage_done all
fi
if [[ $stages == *" suite "* ]]; then
  # The targets of everything that ships or is measured (bench/: its micro-benchmarks and the
  # floor), not the test executables: ci/sanitize.sh compiles those.
  bash ci/build.sh mtperf mtperf_docs floor $(cd bench && ls bench_*.cpp | sed 's/\.cpp$//')
  bash ci/format.sh
  bash ci/layers.sh
  # Functions over 50 lines: never more than the bound (lower it as they are split); the list
  # when it fails, their count otherwise.
  if ! long=$(python3 ci/long_functions.py --max-count 29); then echo "$long"; exit 1; fi
  echo "ci/long_functions.py: ${long##*$'\n'}"
  # The fleet under Slurm, mpirun and podman mostly waits (on daemons, the archive, joins, clock
  # exchanges, short streams): when the sanitize stage follows, they run beside its build, as the
  # install test does, and their log is shown (and their status checked) when that stage is done.
  beside_tests='^fleet/(slurm|mpirun|podman)$'
  if [[ $stages == *" sanitize "* ]]; then
    ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j2 --timeout 300 -L release \
      -E "$beside_tests"
  else
    ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j2 --timeout 300 -L release
  fi
  # The Debian package from the same build, installed, used and purged in a minimal Debian 12
  # root (exit 77: skipped, with the reason it printed). Fetching that root is most of its 1 to
  # 2.5 min and takes little CPU: when the sanitize stage follows, it runs beside that stage's
  # build, and its log is shown (and its status checked) when the sanitize stage is done.
  bash ci/package.sh
  if [[ $stages == *" sanitize "* ]]; then
    install_log=$(mktemp)
    bash ci/install-test.sh >"$install_log" 2>&1 &
    install_pid=$!
    fleet_log=$(mktemp)
    ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure --timeout 400 -R "$beside_tests" \
      >"$fleet_log" 2>&1 &
    fleet_pid=$!
    echo "ci/test.sh: ci/install-test.sh and the fleet's Slurm, mpirun and podman tests run" \
      "beside the sanitize stage"
  else
    rc=0
    bash ci/install-test.sh || rc=$?
    [ $rc -eq 0 ] || [ $rc -eq 77 ] || exit $rc
  fi
  stage_done suite
fi
if [[ $stages == *" sanitize "* ]]; then
  rc=0
  bash ci/sanitize.sh || rc=$?
  [ -z "${install_pid:-}" ] || finish_beside "$install_pid" "$install_log" ci/install-test.sh 77
  [ -z "${fleet_pid:-}" ] ||
    finish_beside "$fleet_pid" "$fleet_log" "the fleet's Slurm, mpirun and podman tests"
  [ $rc -eq 0 ] || exit $rc
  stage_done sanitize
fi
if [[ $stages == *" fuzz "* ]]; then
  FUZZ_SECONDS=${FUZZ_SECONDS:-5} bash ci/fuzz.sh
  stage_done fuzz
fi
