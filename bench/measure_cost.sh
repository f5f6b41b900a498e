#!/usr/bin/env bash
# What an option costs: the same test without and with it, alternating, medians. By default
# the option is --no-measure, so this is what measuring costs: all measurement on (latency
# samples, CPU and interrupt readings, TCP_INFO) against counters only; -x --verify gives what
# payload verification costs.
#
#   bench/measure_cost.sh [-l SECONDS] [-n RUNS] [-b MTPERF] [-c CPUS] [-x OPTION]
#                         [-- RUN OPTIONS...]
#
# Default test: 1-byte TCP rr on loopback against the in-process server. The whole process runs
# under `taskset -c CPUS` (default 0): on a small VM an unpinned rr flips between "client and
# server on one CPU" and "on two" from run to run (a factor of 4), which would drown a 2% effect.
# Prints both medians and their ratio, with/without. Target for --no-measure: below 1.02
# (measuring costs under 2%); the --verify figures are in docs/validation.md.
set -euo pipefail

len=5
runs=7
bin=${MTPERF:-build/cli/mtperf}
cpus=0
option=--no-measure
while getopts "l:n:b:c:x:h" opt; do
  case $opt in
    l) len=$OPTARG ;;
    n) runs=$OPTARG ;;
    b) bin=$OPTARG ;;
    c) cpus=$OPTARG ;;
    x) option=$OPTARG ;;
    *) sed -n '2,16p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
test_args=("$@")
[ ${#test_args[@]} -eq 0 ] && test_args=(-w rr -r 1,1)

figure() {
  local json
  json=$(taskset -c "$cpus" "$bin" run "${test_args[@]}" "$@" -l "$len" --format json -q)
  python3 -c '
import json, sys
s = json.load(sys.stdin)["summary"]
print(s["transaction_rate"] if s.get("transactions") else s["throughput_bps"] / 1e6)' <<<"$json"
}

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

with=() without=()
for ((i = 0; i < runs; i++)); do
  # Alternate which goes first, so a drift in the machine's speed hits both alike.
  if ((i % 2 == 0)); then
    without+=("$(figure)")
    with+=("$(figure "$option")")
  else
    with+=("$(figure "$option")")
    without+=("$(figure)")
  fi
done
m_with=$(median "${with[@]}") m_without=$(median "${without[@]}")
printf 'test: %s (%s runs of %s s, cpus %s)\n' "${test_args[*]}" "$runs" "$len" "$cpus"
printf 'without %s  %s\n' "$option" "${without[*]}"
printf 'with %s     %s\n' "$option" "${with[*]}"
printf 'median without %.1f  with %.1f  ratio with/without %.4f\n' "$m_without" "$m_with" \
  "$(echo "$m_with / $m_without" | bc -l)"
