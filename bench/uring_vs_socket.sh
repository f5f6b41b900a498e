#!/usr/bin/env bash
# io_uring vs socket transport on loopback: alternating runs, medians, ratio uring/socket.
#
#   bench/uring_vs_socket.sh [-l SECONDS] [-n RUNS] [-b MTPERF] [-O KEY=VALUE]... [CASE...]
#
# CASE is one of: stream rr udp_rr flows100 (default: all). Each case runs socket and uring in
# turn, RUNS times each, and prints the median of each and uring/socket. -O options go to uring.
# The figure is throughput (Mbit/s) for streams and transactions/s for request/response.
set -euo pipefail

len=5
runs=3
bin=${MTPERF:-build-uring/cli/mtperf}
uring_opts=()
while getopts "l:n:b:O:h" opt; do
  case $opt in
    l) len=$OPTARG ;;
    n) runs=$OPTARG ;;
    b) bin=$OPTARG ;;
    O) uring_opts+=(-O "$OPTARG") ;;
    *) sed -n '2,9p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
cases=("$@")
[ ${#cases[@]} -eq 0 ] && cases=(stream rr udp_rr flows100)

args_of() {
  case $1 in
    stream) echo "-w stream -m 65536" ;;
    rr) echo "-w rr" ;;
    udp_rr) echo "-w rr -p udp -r 1024,2048" ;;
    flows100) echo "-w rr -P 100 --threads 2" ;;
    *) echo "unknown case $1" >&2; exit 2 ;;
  esac
}

# One run: prints the headline figure (Mbit/s for streams, transactions/s otherwise).
figure() {
  local json
  json=$("$bin" run "$@" -l "$len" --format json -q)
  python3 -c '
import json, sys
s = json.load(sys.stdin)["summary"]
print(s["transaction_rate"] if s.get("transactions") else s["throughput_bps"] / 1e6)' <<<"$json"
}

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

printf '%-9s %14s %14s %7s   (%s runs of %s s, uring %s)\n' case socket uring ratio "$runs" "$len" \
  "${uring_opts[*]:-defaults}"
for c in "${cases[@]}"; do
  read -ra a <<<"$(args_of "$c")"
  s=() u=()
  for ((i = 0; i < runs; i++)); do
    s+=("$(figure -T socket "${a[@]}")")
    u+=("$(figure -T uring "${uring_opts[@]}" "${a[@]}")")
  done
  ms=$(median "${s[@]}") mu=$(median "${u[@]}")
  printf '%-9s %14.1f %14.1f %7.2f\n' "$c" "$ms" "$mu" "$(echo "$mu / $ms" | bc -l)"
done
