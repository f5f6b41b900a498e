#!/usr/bin/env bash
# What measuring costs: the same test with all measurement on (latency samples, CPU and
# interrupt readings, TCP_INFO) and with --no-measure (counters only), alternating, medians.
#
#   bench/measure_cost.sh [-l SECONDS] [-n RUNS] [-b MTPERF] [-c CPUS] [-- RUN OPTIONS...]
#
# Default test: 1-byte TCP rr on loopback against the in-process server. The whole process runs
# under `taskset -c CPUS` (default 0): on a small VM an unpinned rr flips between "client and
# server on one CPU" and "on two" from run to run (a factor of 4), which would drown a 2% effect.
# Prints both medians and measured/unmeasured; the target is a ratio above 0.98.
set -euo pipefail

len=5
runs=7
bin=${MTPERF:-build/cli/mtperf}
cpus=0
while getopts "l:n:b:c:h" opt; do
  case $opt in
    l) len=$OPTARG ;;
    n) runs=$OPTARG ;;
    b) bin=$OPTARG ;;
    c) cpus=$OPTARG ;;
    *) sed -n '2,11p' "$0"; exit 2 ;;
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

on=() off=()
for ((i = 0; i < runs; i++)); do
  # Alternate which goes first, so a drift in the machine's speed hits both alike.
  if ((i % 2 == 0)); then
    on+=("$(figure)")
    off+=("$(figure --no-measure)")
  else
    off+=("$(figure --no-measure)")
    on+=("$(figure)")
  fi
done
m_on=$(median "${on[@]}") m_off=$(median "${off[@]}")
printf 'test: %s (%s runs of %s s, cpus %s)\n' "${test_args[*]}" "$runs" "$len" "$cpus"
printf 'measured    %s\n' "${on[*]}"
printf 'unmeasured  %s\n' "${off[*]}"
printf 'median measured %.1f  unmeasured %.1f  ratio %.4f\n' "$m_on" "$m_off" \
  "$(echo "$m_on / $m_off" | bc -l)"
