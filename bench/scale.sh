#!/usr/bin/env bash
# Many flows on one host pair: what each flow costs and what the flows get. For each workload and
# flow count, one run against the in-process server (both sides in one process, so its peak RSS
# is client + server) with two worker threads a side:
#
#   bench/scale.sh [-l SECONDS] [-b MTPERF] [-t THREADS] [-f "100 1000 10000"]
#                  [-w "stream rr"] [-x TRANSPORT] [-s] [-p CPUS:SERVER_CPUS]
#
# -s: the server in a process of its own (`mtperf serve` on a loopback port, started for each
# run), so that each side has the whole open-file limit; the peak RSS is then the client's plus
# the server's.
# -p: the client's workers pinned to CPUS and the server's to SERVER_CPUS (`--cpus`,
# `--server-cpus`), e.g. -p 0:1 with -t 1: one thread a side, each on a CPU of its own, so the
# figures are not the scheduler's placement of four threads on two CPUs.
#
# Columns: the aggregate (Mbit/s for streams, trans/s for rr), Jain's index over the flows, the
# set-up time (TEST request to the last connection, from the report), the peak RSS, and the RSS
# per flow: (peak RSS at N flows - peak RSS at 1 flow) / (N - 1), both sides together. The last
# line is the largest per-flow RSS seen, the figure the 32 KiB target is about.
set -euo pipefail

len=3
bin=${MTPERF:-build/cli/mtperf}
threads=2
counts="100 1000 10000"
workloads="stream rr"
transport=socket
separate=0
pin=()
while getopts "l:b:t:f:w:x:sp:h" opt; do
  case $opt in
    l) len=$OPTARG ;;
    b) bin=$OPTARG ;;
    t) threads=$OPTARG ;;
    f) counts=$OPTARG ;;
    w) workloads=$OPTARG ;;
    x) transport=$OPTARG ;;
    s) separate=1 ;;
    p) pin=(--cpus "${OPTARG%%:*}" --server-cpus "${OPTARG##*:}") ;;
    *) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
  esac
done
[ -x "$bin" ] || { echo "bench/scale.sh: no mtperf binary at $bin (-b)" >&2; exit 2; }
tmp=$(mktemp -d)

# One run: prints "aggregate jain setup_s max_rss_kib", or "FAIL" with mtperf's error on stderr
# (a run over this host's file or port limit fails before any traffic, naming it).
# -s: a server of its own for one run; its peak RSS (KiB) is in $tmp/srss once it has stopped.
port=$((20000 + RANDOM % 10000))
server_pid=
start_server() {
  /usr/bin/time -f '%M' -o "$tmp/srss" "$bin" serve --bind 127.0.0.1 --port "$port" >/dev/null \
    2>"$tmp/serr" &
  server_pid=$!
  for _ in $(seq 50); do
    "$bin" run -H "127.0.0.1:$port" -l 0.05 --warmup 0 -q >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "bench/scale.sh: mtperf serve did not start: $(cat "$tmp/serr")" >&2
  exit 1
}
# The server is /usr/bin/time's child: it is the one told to stop, so that time, still
# waiting, writes its peak RSS (a TERM to time itself would leave the server running and
# write nothing).
stop_server() {
  pkill -TERM -P "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
}
trap 'stop_server 2>/dev/null; rm -rf "$tmp"' EXIT

one() {
  local w=$1 n=$2 where=() srss=0
  if [ "$separate" = 1 ]; then
    start_server
    where=(-H "127.0.0.1:$port")
  fi
  local ok=1
  /usr/bin/time -f '%M' -o "$tmp/rss" \
    "$bin" run "${where[@]}" "${pin[@]}" -w "$w" -P "$n" --threads "$threads" \
    -T "$transport" -l "$len" --warmup 0.5 -q --format json >"$tmp/out.json" 2>"$tmp/err" || ok=0
  if [ "$separate" = 1 ]; then
    stop_server
    srss=$(tail -1 "$tmp/srss" 2>/dev/null)
    [[ "$srss" =~ ^[0-9]+$ ]] || { echo "bench/scale.sh: no peak RSS from the server" >&2; exit 1; }
  fi
  if [ $ok = 0 ]; then
    grep -v '^Command exited' "$tmp/err" | sed "s/^/$w -P $n: /" >&2 || true
    echo FAIL
    return 0
  fi
  python3 - "$tmp/out.json" "$(($(cat "$tmp/rss") + srss))" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
agg = s["transaction_rate"] if s.get("transaction_rate") else s["throughput_bps"] / 1e6
print(f'{agg:.0f} {s["jain_fairness"] or 0:.4f} {s.get("setup_s", 0):.3f} {sys.argv[2]}')
PY
}

printf '%-8s %-8s %7s %14s %7s %9s %10s %12s\n' transport workload flows aggregate Jain setup_s \
  "RSS MiB" "RSS/flow KiB"
worst=0
for w in $workloads; do
  read -r agg _ _ base < <(one "$w" 1)
  [ "$agg" != FAIL ] || { echo "bench/scale.sh: one $w flow failed" >&2; exit 1; }
  for n in $counts; do
    read -r agg jain setup rss < <(one "$w" "$n")
    [ "$agg" = FAIL ] && continue
    per=$(( (rss - base) / (n - 1) ))
    [ "$per" -gt "$worst" ] && worst=$per
    unit=$([ "$w" = rr ] && echo "trans/s" || echo "Mbit/s")
    printf '%-8s %-8s %7d %14s %7s %9s %10.1f %12d\n' "$transport" "$w" "$n" "$agg $unit" \
      "$jain" "$setup" "$(echo "$rss / 1024" | bc -l)" "$per"
  done
done
echo "RSS per flow (client + server, largest above): $worst KiB"
