#!/usr/bin/env bash
# Runs each libFuzzer target (fuzz/, clang, ASan+UBSan) for ${FUZZ_SECONDS:-20} s, FUZZ_JOBS
# (default: one per CPU) at a time, from the committed corpus, a fresh set of seeds and the
# inputs that once failed. A crash, a sanitizer report, a leak, a timeout or a broken invariant
# fails the script; libFuzzer leaves the input under $build/findings/<target>/ (replay it with
# `$build/fuzz/fuzz_<target> FILE`, and commit it to fuzz/regressions/<target>/ with the fix).
#
# The targets are built in ${FUZZ_BUILD_DIR:-build-asan}, the folder ci/sanitize.sh builds the
# sanitized suite in (ci/clang-asan.sh: one compilation of the libraries serves both), at
# ${FUZZ_OPT:--O0}. A long run is worth an optimized folder of its own, e.g.
#   FUZZ_BUILD_DIR=build-fuzz-O1 FUZZ_OPT=-O1 FUZZ_SECONDS=3600 FUZZ_TARGETS=atm_lane bash ci/fuzz.sh
# FUZZ_RUNS=N stops each target after N executions instead (FUZZ_SECONDS still caps it),
# FUZZ_MAX_LEN bounds the inputs libFuzzer makes (default 70000: a whole control frame), and
# FUZZ_SANITIZERS chooses the sanitizers of a folder of its own (default address,undefined;
# `undefined` alone runs several times faster, for runs of millions of executions).
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/deps.sh
source ci/clang-asan.sh
build=${FUZZ_BUILD_DIR:-build-asan}
seconds=${FUZZ_SECONDS:-20}
runs=${FUZZ_RUNS:--1}
max_len=${FUZZ_MAX_LEN:-70000}
start=$(date +%s)

configure_clang_asan "$build" "${FUZZ_OPT:--O0}" "${FUZZ_SANITIZERS:-address,undefined}"
cmake --build "$build" -j"$(nproc)" --target fuzz_all
rm -rf "$build/seeds"
"$build/fuzz/fuzz_make_seeds" "$build/seeds"
built=$(date +%s)

targets=${FUZZ_TARGETS:-$(cat "$build/fuzz/targets.txt")}
jobs=${FUZZ_JOBS:-$(nproc)}

# fuzz_one TARGET: one libFuzzer run; its exit status, its output in findings/TARGET.log.
fuzz_one() {
  local t=$1
  local work="$build/corpus/$t" findings="$build/findings/$t"
  # A target fuzz_make_seeds writes no seeds for starts from its committed corpus alone.
  mkdir -p "$work" "$findings" "$build/seeds/$t"
  local dirs=("$work" "fuzz/corpus/$t" "$build/seeds/$t")
  [ -d "fuzz/regressions/$t" ] && dirs+=("fuzz/regressions/$t")
  local dict=()
  [[ $t == control_* ]] && dict=(-dict=fuzz/control.dict)
  # New inputs go to the first folder (build-fuzz/corpus/<target>), so a later run goes on from
  # where this one stopped; the committed corpus is only read.
  "$build/fuzz/fuzz_$t" -max_total_time="$seconds" -runs="$runs" -timeout=10 -rss_limit_mb=2048 \
    -max_len="$max_len" -print_final_stats=1 -artifact_prefix="$findings/" "${dict[@]}" \
    "${dirs[@]}" >"$build/findings/$t.log" 2>&1
}

# FUZZ_JOBS targets at a time (default: one per CPU), each single-threaded; each leaves its exit
# status in findings/TARGET.rc.
for t in $targets; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
    wait -n || true
  done
  rm -f "$build/findings/$t.rc"
  (
    rc=0
    fuzz_one "$t" || rc=$?
    echo "$rc" >"$build/findings/$t.rc"
  ) &
done
wait
failed=()
for t in $targets; do
  log="$build/findings/$t.log"
  if [ "$(cat "$build/findings/$t.rc" 2>/dev/null)" = 0 ]; then
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
    echo "ci/fuzz.sh: $t: ${execs:-?} executions (${rate:-?}/s), no finding"
  else
    tail -n 40 "$log"
    echo "ci/fuzz.sh: $t FAILED (log $log, input under $build/findings/$t/)"
    failed+=("$t")
  fi
done
echo "ci/fuzz.sh: build $((built - start)) s, fuzzing $(($(date +%s) - built)) s"
if [ ${#failed[@]} -gt 0 ]; then
  echo "ci/fuzz.sh: findings in ${failed[*]}"
  exit 1
fi
