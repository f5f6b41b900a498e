#!/usr/bin/env bash
# mtperf against the floor (bench/floor/: the same system calls in a bare loop) on loopback:
# alternating runs, medians, spread and the ratio mtperf/floor per workload.
#
#   bench/floor.sh [-l SECONDS] [-n PAIRS] [-b MTPERF] [-f FLOOR] [-p PINNING]... [-v] [CASE...]
#
# CASE is one of: stream64k stream8k stream1k maerts bidir rr udp_rr crr (default: all of
# these), or an io_uring case, mtperf -T uring against floor -e uring (the same ring operations
# in a bare loop): uring_stream64k uring_maerts uring_rr uring_flows100 (100 rr flows on one
# thread each side: -P 100 --threads 1); `uring` stands for the four.
# PINNING is `cross` (client workers on CPU 0, server workers on CPU 1: --cpus 0
# --server-cpus 1, floor -c 0 -s 1) or `one` (everything on CPU 0: taskset -c 0 and both sides
# pinned to 0); default: both. Each case runs PAIRS times mtperf then the floor, alternately,
# and prints for each side the median, the min..max spread and the CPU time of the process per
# unit (µs per transaction, per MB for streams; it moves much less than the rates when other
# jobs share the host), then the ratio of the medians mtperf/floor (above 0.95 is the target)
# and cpu_r, the floor's CPU per unit over mtperf's (below 1: mtperf spends more per unit;
# set-up and warm-up count, which weighs on mtperf in short runs).
# -v prints every run's figure. The load average before and after is printed: rerun a batch
# that another job disturbed. Defaults: 5 pairs of 5 s, build/cli/mtperf, build/bench/floor
# (where others build too, measure a copy: -b /tmp/mtperf, so no relink lands mid-batch).
set -euo pipefail

len=5
pairs=5
bin=${MTPERF:-build/cli/mtperf}
floor=${FLOOR:-build/bench/floor}
pinnings=()
verbose=0
while getopts "l:n:b:f:p:vh" opt; do
  case $opt in
    l) len=$OPTARG ;;
    n) pairs=$OPTARG ;;
    b) bin=$OPTARG ;;
    f) floor=$OPTARG ;;
    p) pinnings+=("$OPTARG") ;;
    v) verbose=1 ;;
    *) sed -n '2,21p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
cases=("$@")
[ ${#cases[@]} -eq 0 ] && cases=(stream64k stream8k stream1k maerts bidir rr udp_rr crr)
uring_cases=(uring_stream64k uring_maerts uring_rr uring_flows100)
expanded=()
for c in "${cases[@]}"; do
  if [ "$c" = uring ]; then expanded+=("${uring_cases[@]}"); else expanded+=("$c"); fi
done
cases=("${expanded[@]}")
[ ${#pinnings[@]} -eq 0 ] && pinnings=(cross one)

# "MTPERF ARGS|FLOOR ARGS" of a case
args_of() {
  case $1 in
    stream64k) echo "-w stream -m 64K|-w stream -m 64K" ;;
    stream8k) echo "-w stream -m 8K|-w stream -m 8K" ;;
    stream1k) echo "-w stream -m 1K|-w stream -m 1K" ;;
    maerts) echo "-w maerts -m 64K|-w maerts -m 64K" ;;
    bidir) echo "-w bidir -m 64K|-w bidir -m 64K" ;;
    rr) echo "-w rr -r 1,1|-w rr -r 1,1" ;;
    udp_rr) echo "-w rr -p udp -r 1024,2048|-w udp_rr -r 1024,2048" ;;
    crr) echo "-w crr -r 1,1|-w crr -r 1,1" ;;
    uring_stream64k) echo "-T uring -w stream -m 64K|-e uring -w stream -m 64K" ;;
    uring_maerts) echo "-T uring -w maerts -m 64K|-e uring -w maerts -m 64K" ;;
    uring_rr) echo "-T uring -w rr -r 1,1|-e uring -w rr -r 1,1" ;;
    uring_flows100) echo "-T uring -w rr -r 1,1 -P 100 --threads 1|-e uring -w rr -r 1,1 -P 100" ;;
    *) echo "unknown case $1" >&2; exit 2 ;;
  esac
}

# One run of a command printing a JSON document or line with mtperf's summary keys: prints
# "FIGURE CPU": Mbit/s for streams, transactions/s otherwise, and the process's CPU time (user
# + sys, warm-up included) in µs per transaction or per MB.
figure() {
  python3 - "$@" <<'PY'
import json, resource, subprocess, sys
out = subprocess.run(sys.argv[1:], check=True, capture_output=True, text=True).stdout
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu_us = (ru.ru_utime + ru.ru_stime) * 1e6
d = json.loads(out)
s = d.get("summary", d)
if s.get("transaction_rate"):
    print(s["transaction_rate"], cpu_us / max(s["transaction_rate"] * s["window_s"], 1))
else:
    mb = s["throughput_bps"] / 8e6 * s["window_s"]
    print(s["throughput_bps"] / 1e6, cpu_us / max(mb, 1e-9))
PY
}

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
spread() { printf '%s\n' "$@" | sort -g | awk 'NR==1 {lo=$1} {hi=$1} END {printf "%.0f..%.0f", lo, hi}'; }

echo "# $(date -u +%FT%TZ) $(uname -r), $(nproc) CPUs, $pairs pairs of $len s, pinnings: ${pinnings[*]}"
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-5s %-14s %10s %-17s %8s %10s %-17s %8s %6s %6s\n' pin case mtperf spread cpu_us floor \
  spread cpu_us ratio cpu_r
for pin in "${pinnings[@]}"; do
  case $pin in
    cross) wrap=() mcpus=(--cpus 0 --server-cpus 1) fcpus=(-c 0 -s 1) ;;
    one) wrap=(taskset -c 0) mcpus=(--cpus 0 --server-cpus 0) fcpus=(-c 0 -s 0) ;;
    *) echo "unknown pinning $pin" >&2; exit 2 ;;
  esac
  for c in "${cases[@]}"; do
    IFS='|' read -r margs fargs <<<"$(args_of "$c")"
    read -ra ma <<<"$margs"
    read -ra fa <<<"$fargs"
    m=() mc=() f=() fc=()
    for ((i = 0; i < pairs; i++)); do
      out=$(figure "${wrap[@]}" "$bin" run "${ma[@]}" "${mcpus[@]}" -l "$len" -q --format json) ||
        { echo "mtperf failed: $pin $c" >&2; exit 1; }
      read -r x u <<<"$out"
      m+=("$x") mc+=("$u")
      out=$(figure "${wrap[@]}" "$floor" "${fa[@]}" "${fcpus[@]}" -l "$len") ||
        { echo "floor failed: $pin $c" >&2; exit 1; }
      read -r x u <<<"$out"
      f+=("$x") fc+=("$u")
    done
    mm=$(median "${m[@]}") fm=$(median "${f[@]}")
    mu=$(median "${mc[@]}") fu=$(median "${fc[@]}")
    printf '%-5s %-14s %10.1f %-17s %8.2f %10.1f %-17s %8.2f %6.2f %6.2f\n' "$pin" "$c" "$mm" \
      "$(spread "${m[@]}")" "$mu" "$fm" "$(spread "${f[@]}")" "$fu" \
      "$(echo "$mm / $fm" | bc -l)" "$(echo "$fu / $mu" | bc -l)"
    if [ $verbose = 1 ]; then
      echo "#   mtperf: ${m[*]}"
      echo "#   floor:  ${f[*]}"
    fi
  done
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
