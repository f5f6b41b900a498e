#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, clang, ASan+UBSan) into ${FUZZ_BUILD_DIR:-build-fuzz} and
# runs each for ${FUZZ_SECONDS:-20} s from the committed corpus, a fresh set of seeds and the
# inputs that once failed. A crash, a sanitizer report, a leak, a timeout or a broken invariant
# fails the script; libFuzzer leaves the input under $build/findings/<target>/ (replay it with
# `$build/fuzz/fuzz_<target> FILE`, and commit it to fuzz/regressions/<target>/ with the fix).
#
# Built at ${FUZZ_OPT:--O0}: the coverage instrumentation doubles clang's -O1 build time, and CI
# runs each target briefly; a long run is worth an optimized build of its own, e.g.
#   FUZZ_BUILD_DIR=build-fuzz-O1 FUZZ_OPT=-O1 FUZZ_SECONDS=3600 FUZZ_TARGETS=atm_lane bash ci/fuzz.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/deps.sh
build=${FUZZ_BUILD_DIR:-build-fuzz}
seconds=${FUZZ_SECONDS:-20}
start=$(date +%s)

cmake -S . -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=${FUZZ_OPT:--O0} -gline-tables-only" \
  -DMTPERF_FUZZ=ON -DMTPERF_TESTS=OFF -DMTPERF_BENCH=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target fuzz_all
rm -rf "$build/seeds"
"$build/fuzz/fuzz_make_seeds" "$build/seeds"
built=$(date +%s)

targets=${FUZZ_TARGETS:-$(cat "$build/fuzz/targets.txt")}
failed=()
for t in $targets; do
  work="$build/corpus/$t" findings="$build/findings/$t"
  mkdir -p "$work" "$findings"
  dirs=("$work" "fuzz/corpus/$t" "$build/seeds/$t")
  [ -d "fuzz/regressions/$t" ] && dirs+=("fuzz/regressions/$t")
  dict=()
  [[ $t == control_* ]] && dict=(-dict=fuzz/control.dict)
  log="$build/findings/$t.log"
  # New inputs go to the first folder (build-fuzz/corpus/<target>), so a later run goes on from
  # where this one stopped; the committed corpus is only read.
  if "$build/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -max_len=70000 -print_final_stats=1 -artifact_prefix="$findings/" "${dict[@]}" \
    "${dirs[@]}" >"$log" 2>&1; then
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    echo "ci/fuzz.sh: $t: ${execs:-?} executions in ${seconds} s, no finding"
  else
    tail -n 40 "$log"
    echo "ci/fuzz.sh: $t FAILED (log $log, input under $findings/)"
    failed+=("$t")
  fi
done
echo "ci/fuzz.sh: build $((built - start)) s, fuzzing $(($(date +%s) - built)) s"
if [ ${#failed[@]} -gt 0 ]; then
  echo "ci/fuzz.sh: findings in ${failed[*]}"
  exit 1
fi
