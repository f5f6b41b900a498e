#!/usr/bin/env bash
# mtperf against its peers' own programs on loopback, alternating runs, medians and ratios from
# the same run (the machine's noise hits both sides of a pair alike):
#   iperf3 -c against `mtperf serve --iperf3` vs against `iperf3 -s`, -P 1 and -P 4 (bits/s);
#   `mtperf run --peer iperf3 -m 128K` vs `iperf3 -c` (128 KiB writes both), both against
#   `iperf3 -s` (bits/s);
#   `sockperf pp --full-rtt` against `mtperf serve --sockperf` vs against `sockperf sr`
#   (round trips, p50 and p99, µs);
#   `mtperf run --peer sockperf -w rr` vs `sockperf pp --full-rtt`, both against `sockperf sr`.
# Ratios are mtperf's figure over the peer's: throughput wants >= 1, latency <= 1.
#
# usage: bench/interop.sh [-n ROUNDS] [-l SECONDS] [--mtperf PATH] [--only WORD]
# (--only: the cases whose name has WORD: iperf3, sockperf, serve, peer)
# Needs iperf3 and sockperf (Debian: apt-get install iperf3 sockperf); traffic on 127.0.0.1 only.
set -euo pipefail
rounds=5
secs=2
mtperf=${MTPERF:-build/cli/mtperf}
only=
while [ $# -gt 0 ]; do
  case $1 in
    -n) rounds=$2; shift 2 ;;
    -l) secs=$2; shift 2 ;;
    --mtperf) mtperf=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    *) echo "usage: $0 [-n ROUNDS] [-l SECONDS] [--mtperf PATH] [--only WORD]" >&2; exit 2 ;;
  esac
done
for tool in iperf3 sockperf python3 "$mtperf"; do
  command -v "$tool" >/dev/null || { echo "$0: $tool not found" >&2; exit 1; }
done

# A port nothing listens on now, from the kernel.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_tcp() { for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/"$1") 2>/dev/null && return 0; sleep 0.05; done; echo "$0: nothing listens on $1" >&2; exit 1; }

pids=()
cleanup() { for p in "${pids[@]}"; do kill -INT "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

ip3=$(free_port); sp=$(free_port); mt=$(free_port); mt3=$(free_port); mts=$(free_port)
iperf3 -s -B 127.0.0.1 -p "$ip3" >/dev/null 2>&1 & pids+=($!)
sockperf sr --tcp -i 127.0.0.1 -p "$sp" >/dev/null 2>&1 & pids+=($!)
"$mtperf" serve --bind 127.0.0.1 --port "$mt" --iperf3 "127.0.0.1:$mt3" --sockperf "127.0.0.1:$mts" \
  >/dev/null 2>&1 & pids+=($!)
wait_tcp "$ip3"; wait_tcp "$sp"; wait_tcp "$mt3"; wait_tcp "$mts"

# Figures, one per line on stdout.
iperf3_client() {  # PORT ARGS...: bits/s the server received
  local port=$1; shift
  iperf3 -c 127.0.0.1 -p "$port" -t "$secs" -J "$@" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"])'
}
mtperf_iperf3() {
  "$mtperf" run --peer iperf3 -H "127.0.0.1:$ip3" -l "$secs" --format json "$@" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["summary"]["throughput_bps"])'
}
sockperf_pp() {  # PORT: "p50 p99", round trips, µs
  sockperf pp --tcp -i 127.0.0.1 -p "$1" -t "$secs" -m 64 --full-rtt 2>&1 |
    python3 -c 'import re,sys; t=sys.stdin.read(); g=lambda p: re.search(r"percentile %s = +([0-9.]+)" % p, t).group(1); print(g("50.000"), g("99.000"))'
}
mtperf_sockperf() {
  "$mtperf" run --peer sockperf -H "127.0.0.1:$sp" -w rr -r 64 -l "$secs" --format json |
    python3 -c 'import json,sys; l=json.load(sys.stdin)["summary"]["latency_us"]; print(l["p50"], l["p99"])'
}

# CASE NAME_A NAME_B CMD_A CMD_B [higher|lower]: alternating rounds, then the medians, the
# ratio of the medians (A over B) and each round's ratio's median.
compare() {
  local name=$1 a_name=$2 b_name=$3 a_cmd=$4 b_cmd=$5 want=$6
  local a=() b=()
  case $name in *"$only"*) ;; *) return 0 ;; esac
  for r in $(seq "$rounds"); do
    if [ $((r % 2)) -eq 1 ]; then
      a+=("$(eval "$a_cmd")"); b+=("$(eval "$b_cmd")")
    else
      b+=("$(eval "$b_cmd")"); a+=("$(eval "$a_cmd")")
    fi
  done
  python3 - "$name" "$a_name" "$b_name" "$want" "${#a[@]}" "${a[@]}" "${b[@]}" <<'EOF'
import statistics, sys
name, an, bn, want, n = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
rows = sys.argv[6:]
a = [list(map(float, x.split())) for x in rows[:n]]
b = [list(map(float, x.split())) for x in rows[n:]]
labels = ["Gbit/s"] if want == "higher" else ["p50 us", "p99 us"]
for i, lab in enumerate(labels):
    scale = 1e9 if want == "higher" else 1
    am = statistics.median(x[i] for x in a) / scale
    bm = statistics.median(x[i] for x in b) / scale
    per = statistics.median(x[i] / y[i] for x, y in zip(a, b))
    print(f"{name:44s} {lab:7s} {an} {am:9.3f}  {bn} {bm:9.3f}  ratio of medians {am / bm:.3f}"
          f"  median of round ratios {per:.3f}  ({n} rounds, want {'>=' if want == 'higher' else '<='} 1)")
EOF
}

echo "bench/interop.sh: $rounds alternating rounds of $secs s on 127.0.0.1; $(nproc) CPUs"
for P in 1 4; do
  compare "iperf3 -c -P $P: serve --iperf3 / iperf3 -s" "serve" "iperf3-s" \
    "iperf3_client $mt3 -P $P" "iperf3_client $ip3 -P $P" higher
done
# The same writes on both sides: iperf3's default length for TCP is 128 KiB.
compare "iperf3 -s: mtperf run --peer / iperf3 -c" "mtperf" "iperf3-c" \
  "mtperf_iperf3 -w stream -m 128K" "iperf3_client $ip3" higher
compare "sockperf pp 64 B: serve --sockperf / sr" "serve" "sr" \
  "sockperf_pp $mts" "sockperf_pp $sp" lower
compare "sockperf sr: mtperf run --peer / pp" "mtperf" "pp" \
  "mtperf_sockperf" "sockperf_pp $sp" lower
