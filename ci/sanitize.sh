#!/usr/bin/env bash
# The test suite under the sanitizers, each build in its own folder:
#   ${ASAN_BUILD_DIR:-build-asan}  clang, ASan + UBSan (float-cast-overflow included), every
#                                  ctest test;
#   ${TSAN_BUILD_DIR:-build-tsan}  g++, TSan, the tests of the threaded parts: the runner, the
#                                  control client and server, the sockperf server, the loopback
#                                  integration runs.
# Any report fails: every report is fatal in the process that meets it (the flags make UBSan's
# so, the options below the others'), and every process a test starts (the mtperf binary, forked
# children) inherits these options and also writes its reports under $build/sanitizer/, which
# must stay empty — so a report in a child whose exit status a test does not look at still
# fails the stage.
#
# SANITIZE_STAGES="asan tsan" (the default) picks the stages.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/deps.sh

source ci/clang-asan.sh

# Runs ctest (under the command in the array `wrap`, if any) with the reports of every process
# collected under $build/sanitizer/; fails when a test fails or any report was written.
wrap=()
run_tests() {  # build-dir [ctest args...]
  local build=$1
  shift
  local reports
  reports="$(cd "$build" && pwd)/sanitizer"
  rm -rf "$reports"
  mkdir -p "$reports"
  local common="halt_on_error=1:abort_on_error=1:print_summary=1:log_exe_name=1"
  local status=0
  ASAN_OPTIONS="$common:log_path=$reports/asan:detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1" \
    UBSAN_OPTIONS="$common:log_path=$reports/ubsan:print_stacktrace=1" \
    TSAN_OPTIONS="$common:log_path=$reports/tsan:second_deadlock_stack=1" \
    "${wrap[@]}" ctest --test-dir "$build" --output-on-failure -j"${jobs:-2}" --timeout 600 "$@" ||
    status=$?
  if compgen -G "$reports/*" >/dev/null; then
    for f in "$reports"/*; do
      echo "=== $f"
      head -n 80 "$f"
    done
    echo "ci/sanitize.sh: sanitizer reports in $build (above, and under $reports)"
    status=1
  fi
  return $status
}

# The tests of the runner, the control protocol and the loopback runs (ctest -R), and the fuzz
# replays of the control inputs.
readonly kTsanTests='^(workloads/|control/|integration/test_loopback$|peers/test_sockperf_serve$|fuzz/control_)'

asan_stage() {
  local build=${ASAN_BUILD_DIR:-build-asan} t0=$(date +%s)
  # clang: with GCC, UBSan beside ASan writes its reports to stderr only, never to log_path, so
  # a child's report could pass unseen. Warnings are errors (-Wall -Wextra), as in the GCC build
  # of what ships: this is where ci/test.sh compiles the test executables.
  # The fuzz targets are built here too (ci/fuzz.sh runs them from this folder).
  configure_clang_asan "$build" || return 1
  cmake --build "$build" -j"$(nproc)" || return 1
  local t1=$(date +%s)
  local rc=0
  # Every test but those that ci/test.sh runs in the release build (ctest -L release): their
  # time goes to programs other than ours — the JSON Schema checks (the binary some 40 times over
  # code the other tests run too, then a validator), the HTML render (a browser); the fleet
  # under Slurm and mpirun and the soft-RoCE guest are not registered in a sanitized build (the
  # fleet's own code runs under ASan in fleet/test_fleet_run).
  # Four at once on 2 cores: at two, the CPUs were idle a third of the time (138% of 200: tests
  # that wait on their peers, on timers, on the ATM line's pacing), and the stage took 405 s
  # against 335 s at four. The tests that need the CPUs to themselves say so (RUN_SERIAL).
  jobs=4 run_tests "$build" -LE release || rc=$?
  echo "ci/sanitize.sh: ASan+UBSan: build $((t1 - t0)) s, tests $(($(date +%s) - t1)) s"
  return $rc
}

tsan_stage() {
  local build=${TSAN_BUILD_DIR:-build-tsan} t0=$(date +%s)
  # -O0, as the ASan build: clang's -O1 about doubles the compile time, for a few seconds of tests.
  configure_build "$build" clang++ thread "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O0 -gline-tables-only" ||
    return 1
  # Only what those tests run: mtperf, and each test's executable (ctest -N lists the configured
  # tests; test a/b/test_x is the executable a_b_test_x, fuzz/x is replay_x).
  local targets=(mtperf)
  mapfile -t -O 1 targets < <(ctest --test-dir "$build" -N -R "$kTsanTests" 2>/dev/null |
    sed -n 's/^ *Test *#[0-9]*: *//p' | sed 's|^fuzz/|replay_|; s|/|_|g')
  cmake --build "$build" -j"$(nproc)" --target "${targets[@]}" || return 1
  local t1=$(date +%s)
  # TSan needs its fixed shadow layout: a kernel with more mmap randomness than it expects makes
  # it fail at start, so the tests run without address randomization (setarch -R), when allowed.
  setarch "$(uname -m)" -R true 2>/dev/null && wrap=(setarch "$(uname -m)" -R)
  local rc=0
  run_tests "$build" -R "$kTsanTests" || rc=$?
  wrap=()
  echo "ci/sanitize.sh: TSan: build $((t1 - t0)) s, tests $(($(date +%s) - t1)) s"
  return $rc
}

# A stage runs in a condition (errexit is off inside it), so it checks every step itself.
failed=()
for stage in ${SANITIZE_STAGES:-asan tsan}; do
  "${stage}_stage" || failed+=("$stage")
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "ci/sanitize.sh: failed: ${failed[*]}"
  exit 1
fi
