#!/usr/bin/env bash
# mtperf's RDMA transport against perftest on one RDMA device: alternating runs, medians, ratio
# mtperf/perftest.
#
#   bench/rdma_vs_perftest.sh [-l SECONDS] [-n RUNS] [-N ITERS] [-s SIZES] [-b MTPERF] [-d DEV]
#                             [-a ADDR] [-c SERVER_CPU,CLIENT_CPU | -c none] [-p] [-v] [CASE...]
#
# CASE is one of send_bw write_bw read_bw send_lat write_lat (default: all).
#   *_bw:  ib_{send,write,read}_bw -R -D SECONDS -s SIZE  vs  mtperf -w stream -O verb=V -m SIZE
#          -l SECONDS, for each SIZE of -s (bytes, comma-separated; default 65536); both with
#          their defaults: perftest's tx depth 128 and CQ moderation 100, mtperf's -O tx_depth
#          and -O signal the same; figure: Mbit/s (10^6 bits/s; perftest's MB/s are 2^20
#          bytes/s, converted).
#   *_lat: ib_{send,write}_lat -R -n ITERS -s 2  vs  mtperf -w rr -r 2,2 -O verb=V -l SECONDS;
#          figure: one-way latency in us, perftest's t_typical against half of mtperf's p50
#          round trip (perftest reports half round trips); t_avg against half the mean is
#          printed beside it. Lower is better here, higher for bandwidth.
#   mtperf runs with --wait spin: perftest busy-polls its completion queue (it has no -e here).
# -p: the two clients against the same kind of server, an unmodified perftest server started
#   for each run without -R (its exchange on TCP 18515): perftest's own client against
#   `mtperf run -T rdma --peer perftest`, both -n ITERS, read_bw as mtperf's -w maerts. Bandwidth
#   is then perftest's BW average against mtperf's throughput, both over the ITERS messages; -l
#   is not used.
# Each case runs perftest and mtperf RUNS times (default 3), in turn, the first of each pair
# alternating, both ends on this host over DEV (default rxe0) at ADDR (default 10.10.0.1):
# perftest server and client via rdma_cm, `mtperf serve --bind ADDR` and `mtperf run -H ADDR`
# (the loopback address is not on the RDMA device). Servers run on CPU 0 and clients on CPU 1
# for both tools (-c). A run that fails does not count; -v prints every run's figures. Without
# an mtperf that has the rdma transport, the mtperf column says why and perftest still runs.
#
# On a host without an RDMA device it runs itself inside the soft-RoCE guest
# (ci/rdma-guest/guest.sh), both sides in that guest. Figures under the guest's TCG emulation
# are functional, not representative: compare the two tools only within one run. On a busy host
# a round trip waits for the host to run both virtual CPUs, and latency jumps from tens of us
# to milliseconds from one run to the next.
set -euo pipefail

len=5
runs=3
iters=1000
bin=${MTPERF:-build/cli/mtperf}
dev=${MTPERF_GUEST_DEV:-rxe0}
addr=${MTPERF_GUEST_ADDR:-10.10.0.1}
verbose=0
peer=0
cpus=0,1
sizes=65536
while getopts "l:n:N:s:b:d:a:c:pvh" opt; do
  case $opt in
    l) len=$OPTARG ;;
    s) sizes=$OPTARG ;;
    n) runs=$OPTARG ;;
    N) iters=$OPTARG ;;
    b) bin=$OPTARG ;;
    d) dev=$OPTARG ;;
    a) addr=$OPTARG ;;
    c) cpus=$OPTARG ;;
    p) peer=1 ;;
    v) verbose=1 ;;
    *) sed -n '2,35p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
cases=("$@")
[ ${#cases[@]} -eq 0 ] && cases=(send_bw write_bw read_bw send_lat write_lat)
for c in "${cases[@]}"; do
  case $c in send_bw|write_bw|read_bw|send_lat|write_lat) ;; *) echo "unknown case $c" >&2; exit 2 ;; esac
done
for v in "$len" "$runs" "$iters"; do
  [[ $v =~ ^[1-9][0-9]*$ ]] || { echo "-l, -n and -N take positive integers" >&2; exit 2; }
done
[[ $sizes =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || { echo "-s takes sizes in bytes, comma-separated" >&2; exit 2; }
IFS=, read -r -a size_list <<<"$sizes"

pin_server=() pin_client=()
if [ "$cpus" != none ]; then
  [[ $cpus =~ ^[0-9]+,[0-9]+$ ]] || { echo "-c takes SERVER_CPU,CLIENT_CPU or none" >&2; exit 2; }
  pin_server=(taskset -c "${cpus%,*}") pin_client=(taskset -c "${cpus#*,}")
fi

[ "${bin#/}" = "$bin" ] && [ -e "$bin" ] && bin=$PWD/$bin   # as given, else from the repository
cd "$(dirname "$0")/.."
if [ -z "${MTPERF_GUEST:-}" ] && [ -z "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
  # Boot, then per pair: two runs of up to SECONDS plus set-up, which is slow under TCG.
  limit=$((180 + ${#cases[@]} * ${#size_list[@]} * runs * (2 * len + 90)))
  echo "# no RDMA device here: running in the soft-RoCE guest (ci/rdma-guest/guest.sh, up to $limit s)" >&2
  args=(-l "$len" -n "$runs" -N "$iters" -s "$sizes" -b "$bin" -d "$dev" -a "$addr" -c "$cpus")
  [ $verbose = 1 ] && args+=(-v)
  [ $peer = 1 ] && args+=(-p)
  exec bash ci/rdma-guest/guest.sh --timeout "$limit" -- bash bench/rdma_vs_perftest.sh "${args[@]}" "${cases[@]}"
fi
. ci/rdma-guest/lib.sh

pport=18515
cport=12865
scratch=$(mktemp -d)
spid=
cleanup() {
  [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
  rm -rf "$scratch"
}
trap cleanup EXIT

# Why mtperf cannot take part, or nothing.
mtperf_missing() {
  [ -x "$bin" ] || { echo "no $bin (build it, or -b)"; return; }
  "$bin" transports 2>/dev/null | awk -v b="$bin" '$1 == "rdma" { found = 1
    if ($2 != "yes" || $3 != "yes") { $1 = $2 = $3 = ""; sub(/^ +/, ""); print b ": rdma: " $0 } }
    END { if (!found) print b " lists no rdma transport" }'
}
mtperf_why=$(mtperf_missing)
if [ -z "$mtperf_why" ] && [ $peer = 0 ]; then
  ${pin_server[@]+"${pin_server[@]}"} "$bin" serve --bind "$addr" --port "$cport" > "$scratch/serve.log" 2>&1 &
  spid=$!
  for _ in $(seq 100); do
    [ -n "$(ss -Hltn "sport = :$cport" 2>/dev/null)" ] && break
    kill -0 "$spid" 2>/dev/null || break
    sleep 0.2
  done
  if [ -z "$(ss -Hltn "sport = :$cport" 2>/dev/null)" ]; then
    mtperf_why="mtperf serve did not listen on $addr:$cport: $(tail -n1 "$scratch/serve.log")"
  fi
fi

verb_of() { echo "${1%_*}"; }

# perftest: prints "FIGURE SECOND": Mbit/s and 0 for bandwidth, t_typical and t_avg (us) for
# latency; nothing when the run failed (its output on stderr).
perftest() {
  local c=$1 size=$2 tool="ib_$1" args out fig pair=rdma_cm_pair
  if [ $peer = 1 ]; then
    pair=tcp_pair
    args="-d $dev -F -n $iters -s $size"
    [[ $c == *_bw ]] || args="-d $dev -F -n $iters -s 2"
  elif [[ $c == *_bw ]]; then args="-d $dev -R -F -p $pport -D $len -s $size"
  else args="-d $dev -R -F -p $pport -n $iters -s 2"; fi
  if ! out=$("$pair" "$pport" "${pin_server[*]} $tool $args" "${pin_client[*]} $tool $args $addr" $((3 * len + iters / 10 + 60)) 2>"$scratch/err"); then
    { cat "$scratch/err"; tail -n 5 <<<"$out"; } | sed 's/^/#   perftest: /' | tail -n 20 >&2
    return 0
  fi
  if [[ $c == *_bw ]]; then
    fig=$(awk '/#bytes/ { getline; if ($4 ~ /^[0-9.]+$/ && $4 + 0 > 0) printf "%.3f 0\n", $4 * 1048576 * 8 / 1e6; exit }' <<<"$out")
  else
    fig=$(awk '/#bytes/ { getline; if ($5 ~ /^[0-9.]+$/ && $5 + 0 > 0) printf "%.3f %.3f\n", $5, $6; exit }' <<<"$out")
  fi
  # Under emulation perftest's clock calibration can fail ("r^2 < 0.9"): its figures are then
  # 0 or inf, and the run does not count.
  [ -n "$fig" ] || { grep -hF 'r^2' "$scratch/err" - <<<"$out"; sed -n '/#bytes/,+1p' <<<"$out"; } |
    sed 's/^/#   perftest said: /' >&2
  echo "$fig"
}

# mtperf --peer perftest against a perftest server of the case, started as mtperf prints it.
mtperf_peer_run() {
  local c=$1 a=("${@:2}") want spid rc=0
  want=$("$bin" run -T rdma --peer perftest "${a[@]}" -H 127.0.0.1:1 2>&1 >/dev/null |
    sed -n 's/.*must run as: //p')
  ${pin_server[@]+"${pin_server[@]}"} $want -d "$dev" > "$scratch/server" 2>&1 &
  spid=$!
  tcp_wait_listen "$pport" || { kill "$spid"; wait "$spid"; return 1; }
  timeout $((iters / 10 + 120)) ${pin_client[@]+"${pin_client[@]}"} "$bin" run -H "$addr" -T rdma \
    --peer perftest "${a[@]}" --format json -q > "$scratch/json" 2> "$scratch/err" || rc=$?
  [ $rc -eq 0 ] || kill "$spid" 2>/dev/null
  wait "$spid" || rc=1
  return $rc
}

# mtperf: the same figures from its JSON (throughput_bps; latency_us p50 and mean are round trips).
mtperf() {
  local c=$1 size=$2 verb a
  verb=$(verb_of "$c")
  if [ $peer = 1 ]; then
    if [[ $c == *_bw ]]; then a=(-w stream -m "$size"); else a=(-w rr -r 2); fi
    [ "$c" = read_bw ] && a=(-w maerts -m "$size")
    a+=(-O "verb=$verb" --count "$iters")
    if ! mtperf_peer_run "$c" "${a[@]}"; then
      sed 's/^/#   mtperf: /' "$scratch/err" | tail -n 5 >&2
      return 0
    fi
  else
    # perftest busy-polls its completion queue (no -e): so does mtperf here.
    if [[ $c == *_bw ]]; then a=(-w stream -m "$size"); else a=(-w rr -r "2,2"); fi
    a+=(--wait spin)
    if ! timeout $((4 * len + 120)) ${pin_client[@]+"${pin_client[@]}"} "$bin" run -H "$addr:$cport" -T rdma -O "verb=$verb" "${a[@]}" \
        -l "$len" --format json -q > "$scratch/json" 2> "$scratch/err"; then
      sed 's/^/#   mtperf: /' "$scratch/err" | tail -n 5 >&2
      return 0
    fi
  fi
  python3 - "$scratch/json" "$c" <<'PY' || true
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
if sys.argv[2].endswith("_bw"):
    print("%.3f 0" % (s["throughput_bps"] / 1e6))
else:
    lat = s["latency_us"]
    print("%.3f %.3f" % (lat["p50"] / 2, lat["mean"] / 2))
PY
}

median() {
  [ $# -eq 0 ] && { echo nan; return; }
  printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "nan" || b == "nan" || b == 0) print "-"; else printf "%.2f\n", a / b }'; }

mode="$len s each, latency -n $iters"
[ $peer = 1 ] && mode="both clients against perftest's servers, -n $iters"
echo "# $(date -u +%FT%TZ) $(uname -r) $dev at $addr, $runs runs per case, $mode${MTPERF_GUEST:+, inside the soft-RoCE guest (TCG)}"
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg)"
[ -n "$mtperf_why" ] && echo "# mtperf: $mtperf_why"
printf '%-16s %-18s %10s %10s %6s %10s %10s %6s\n' case unit perftest mtperf ratio p_avg m_avg ratio
for c in "${cases[@]}"; do
  csizes=("${size_list[@]}")
  [[ $c == *_bw ]] || csizes=(2)
  for size in "${csizes[@]}"; do
    p=() m=() pa=() ma=()
    label=$c
    [[ $c == *_bw ]] && label="$c/$size"
    for ((i = 0; i < runs; i++)); do
      order=(perftest mtperf)
      [ $((i % 2)) -eq 1 ] && order=(mtperf perftest)
      for tool in "${order[@]}"; do
        [ "$tool" = mtperf ] && [ -n "$mtperf_why" ] && continue
        read -r f g <<<"$("$tool" "$c" "$size")" || true
        [ -z "${f:-}" ] && { echo "#   $label: $tool run $((i + 1)) failed" >&2; continue; }
        if [ "$tool" = perftest ]; then p+=("$f") pa+=("$g"); else m+=("$f") ma+=("$g"); fi
        [ $verbose = 1 ] && echo "#   $label run $((i + 1)) $tool: $f $g"
        f='' g=''
      done
    done
    mp=$(median ${p[@]+"${p[@]}"}) mm=$(median ${m[@]+"${m[@]}"})
    if [[ $c == *_bw ]]; then
      printf '%-16s %-18s %10s %10s %6s\n' "$label" Mbit/s "$mp" "$mm" "$(ratio "$mm" "$mp")"
    else
      mpa=$(median ${pa[@]+"${pa[@]}"}) mma=$(median ${ma[@]+"${ma[@]}"})
      printf '%-16s %-18s %10s %10s %6s %10s %10s %6s\n' "$label" "us one-way p50" "$mp" "$mm" \
        "$(ratio "$mm" "$mp")" "$mpa" "$mma" "$(ratio "$mma" "$mpa")"
    fi
  done
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
