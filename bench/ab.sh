#!/usr/bin/env bash
# Two mtperf binaries, the same test, alternating: has a change moved a figure? Medians of each
# binary's runs and the ratio B/A, measured in the same run (the host's noise hits both alike),
# and the median of each pair's own ratio.
#
#   bench/ab.sh -a MTPERF_A -b MTPERF_B [-l SECONDS] [-n PAIRS] [-- RUN OPTIONS...]
#
# Default test: a 64 KiB TCP stream, client on CPU 0 and server on CPU 1, 5 pairs of 5 s. The
# figure is the summary's throughput (Mbit/s) or, for rr and crr, its transaction rate.
#   bench/ab.sh -a /tmp/old/mtperf -b build/cli/mtperf -- -w rr --cpus 0 --server-cpus 1
set -euo pipefail

a=
b=
len=5
pairs=5
while getopts "a:b:l:n:h" opt; do
  case $opt in
    a) a=$OPTARG ;;
    b) b=$OPTARG ;;
    l) len=$OPTARG ;;
    n) pairs=$OPTARG ;;
    *) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ -n "$a" ] && [ -n "$b" ] || { echo "bench/ab.sh: -a and -b name the two binaries" >&2; exit 2; }
run_opts=("$@")
[ ${#run_opts[@]} -gt 0 ] || run_opts=(-w stream --cpus 0 --server-cpus 1)

# One run's figure: the transaction rate of rr/crr, else the throughput in Mbit/s.
figure() {
  "$1" run "${run_opts[@]}" -l "$len" -q --format json |
    python3 -c 'import json,sys
s = json.load(sys.stdin)["summary"]
print(s["transaction_rate"] if s.get("transaction_rate") else s["throughput_bps"] / 1e6)'
}

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

fa=()
fb=()
for ((i = 0; i < pairs; i++)); do
  # Alternate which goes first, so that neither always follows the other.
  if ((i % 2 == 0)); then
    fa+=("$(figure "$a")"); fb+=("$(figure "$b")")
  else
    fb+=("$(figure "$b")"); fa+=("$(figure "$a")")
  fi
done
ma=$(printf '%s\n' "${fa[@]}" | median)
mb=$(printf '%s\n' "${fb[@]}" | median)
echo "test: mtperf run ${run_opts[*]} -l $len ($pairs pairs)"
echo "A $a: median $ma  (${fa[*]})"
echo "B $b: median $mb  (${fb[*]})"
awk -v a="$ma" -v b="$mb" 'BEGIN {printf "B/A %.3f\n", b / a}'
# The two runs of a pair are back to back, so a pair's ratio cancels a load that drifts over the
# whole run (another job starting or ending) which the medians above still carry.
rp=$(for ((i = 0; i < pairs; i++)); do awk -v a="${fa[i]}" -v b="${fb[i]}" 'BEGIN {print b / a}'; done | median)
awk -v r="$rp" 'BEGIN {printf "B/A of each pair: median %.3f\n", r}'
