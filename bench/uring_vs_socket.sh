#!/usr/bin/env bash
# io_uring vs socket transport on loopback: alternating runs, medians, ratio uring/socket.
#
#   bench/uring_vs_socket.sh [-l SECONDS] [-n RUNS] [-b MTPERF] [-O KEY=VALUE]...
#                            [-c 'KEY=VALUE ...']... [-t CPUS] [-v] [CASE...]
#
# CASE is one of: stream rr udp_rr flows100 (default: all). Each case runs socket and every
# uring configuration in turn, RUNS times each (socket, uring A, uring B, ..., socket, ...), and
# prints the median of each and its ratio to the socket median of the same batch. -O options
# go to every uring configuration; each -c adds one configuration (a space-separated list of
# uring options; "" is the defaults). Without -c there is one: the -O options alone. -v prints
# every run's figure. -t runs everything under `taskset -c CPUS` (e.g. -t 0: client and server
# share one CPU, so the rate follows the CPU cost of a transaction and not the scheduler).
# The figure is throughput (Mbit/s) for streams and transactions/s for request/response; cpu_us is the CPU time of the mtperf process (both ends) per transaction
# (per MB for streams), cpu_r its ratio to socket: lower is better, and it moves much less
# than the rates when other jobs share the host. The load average before and after is
# printed: rerun a batch that another job disturbed.
set -euo pipefail

len=5
runs=3
bin=${MTPERF:-build-uring/cli/mtperf}
common=()
configs=()
verbose=0
pin=()
while getopts "l:n:b:O:c:t:vh" opt; do
  case $opt in
    l) len=$OPTARG ;;
    n) runs=$OPTARG ;;
    b) bin=$OPTARG ;;
    O) common+=(-O "$OPTARG") ;;
    c) configs+=("$OPTARG") ;;
    t) pin=(taskset -c "$OPTARG") ;;
    v) verbose=1 ;;
    *) sed -n '2,19p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
cases=("$@")
[ ${#cases[@]} -eq 0 ] && cases=(stream rr udp_rr flows100)
[ ${#configs[@]} -eq 0 ] && configs=("")

args_of() {
  case $1 in
    stream) echo "-w stream -m 65536" ;;
    rr) echo "-w rr" ;;
    udp_rr) echo "-w rr -p udp -r 1024,2048" ;;
    flows100) echo "-w rr -P 100 --threads 2" ;;
    *) echo "unknown case $1" >&2; exit 2 ;;
  esac
}

# "-O a=1 -O b=2" from "a=1 b=2"
opts_of() {
  local o
  for o in $1; do printf -- '-O %s ' "$o"; done
}

# One run: prints "FIGURE CPU": the headline figure (Mbit/s for streams, transactions/s
# otherwise) and the CPU time of the mtperf process (client and embedded server, user + sys,
# warm-up included) per transaction in microseconds, or per MB for streams. Other jobs on the
# host move the first figure much more than the second.
figure() {
  python3 - "${pin[@]}" "$bin" run "$@" -l "$len" --format json -q <<'PY'
import json, resource, subprocess, sys
out = subprocess.run(sys.argv[1:], check=True, capture_output=True, text=True).stdout
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu_us = (ru.ru_utime + ru.ru_stime) * 1e6
s = json.load(__import__("io").StringIO(out))["summary"]
if s.get("transactions"):
    print(s["transaction_rate"], cpu_us / max(s["transactions"], 1))
else:
    mb = s["throughput_bps"] / 8e6 * s["window_s"]
    print(s["throughput_bps"] / 1e6, cpu_us / max(mb, 1e-9))
PY
}

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

echo "# $(date -u +%FT%TZ) $(uname -r), $runs runs of $len s, common uring options: ${common[*]:-none}${pin[*]:+, ${pin[*]}}"
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-9s %-34s %12s %6s %9s %6s\n' case transport median ratio cpu_us cpu_r
for c in "${cases[@]}"; do
  read -ra a <<<"$(args_of "$c")"
  declare -A fig=() cpu=()
  s=() sc=()
  for ((i = 0; i < runs; i++)); do
    read -r f u <<<"$(figure -T socket "${a[@]}")"
    s+=("$f") sc+=("$u")
    for k in "${!configs[@]}"; do
      read -ra o <<<"$(opts_of "${configs[$k]}")"
      read -r f u <<<"$(figure -T uring "${common[@]}" "${o[@]}" "${a[@]}")"
      fig[$k]+="$f " cpu[$k]+="$u "
    done
  done
  ms=$(median "${s[@]}") mc=$(median "${sc[@]}")
  printf '%-9s %-34s %12.1f %6s %9.2f %6s\n' "$c" socket "$ms" 1.00 "$mc" 1.00
  [ $verbose = 1 ] && echo "#   runs: ${s[*]} / cpu ${sc[*]}"
  for k in "${!configs[@]}"; do
    read -ra u <<<"${fig[$k]}"
    read -ra uc <<<"${cpu[$k]}"
    mu=$(median "${u[@]}") muc=$(median "${uc[@]}")
    printf '%-9s %-34s %12.1f %6.2f %9.2f %6.2f\n' "$c" "uring ${configs[$k]:-defaults}" "$mu" \
      "$(echo "$mu / $ms" | bc -l)" "$muc" "$(echo "$muc / $mc" | bc -l)"
    [ $verbose = 1 ] && echo "#   runs: ${u[*]} / cpu ${uc[*]}"
  done
  unset fig cpu
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
