#!/usr/bin/env bash
# Soak `mtperf serve`: does a long-running server end where it started?
#
#   bench/soak_server.sh [-b MTPERF] [-c CLIENTS] [-m MINUTES] [-n TESTS] [-l SECONDS]
#
# One server on 127.0.0.1 (a free port), then:
#   1. CLIENTS (default 8) concurrent clients, each running a mix of workloads in turn (TCP
#      stream, maerts, bidir, rr with a burst, crr, UDP stream and UDP rr; 1 to 4 flows) for
#      MINUTES (default 3; fractions allowed);
#   2. TESTS (default 10000) short tests in sequence (-l SECONDS, default 0.05, no warm-up),
#      rr and stream in turn;
#   3. a client killed with SIGKILL in the middle of its test: the server must be back to the
#      descriptors and threads it had before that test within 1 s.
# The server's open descriptors, threads and resident memory (from /proc/PID) are printed before
# and after each phase. Exit status: 0 when descriptors and threads end where they started and
# the killed client was cleaned up within 1 s; 1 otherwise. RSS may grow by what the allocator
# keeps; it is printed, not judged.
set -euo pipefail

bin=${MTPERF:-build/cli/mtperf}
clients=8
minutes=3
tests=10000
len=0.05
while getopts "b:c:m:n:l:h" opt; do
  case $opt in
    b) bin=$OPTARG ;;
    c) clients=$OPTARG ;;
    m) minutes=$OPTARG ;;
    n) tests=$OPTARG ;;
    l) len=$OPTARG ;;
    *) sed -n '2,19p' "$0"; exit 2 ;;
  esac
done
[ -x "$bin" ] || { echo "soak: no mtperf binary at $bin (-b PATH)" >&2; exit 2; }

work=$(mktemp -d)
server_pid=
# shellcheck disable=SC2317  # called by the trap
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

"$bin" serve --bind 127.0.0.1 --port 0 --max-sessions 16 >"$work/serve.out" 2>"$work/serve.err" &
server_pid=$!
port=
for _ in $(seq 100); do
  port=$(sed -n 's/.* port \([0-9]*\).*/\1/p' "$work/serve.out" | head -1)
  [ -n "$port" ] && break
  sleep 0.05
done
[ -n "$port" ] || { echo "soak: the server did not start: $(cat "$work/serve.err")" >&2; exit 1; }
server=127.0.0.1:$port

fds() { find "/proc/$server_pid/fd" -mindepth 1 -maxdepth 1 | wc -l; }
threads() { awk '/^Threads:/ {print $2}' "/proc/$server_pid/status"; }
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$server_pid/status"; }
snapshot() { printf '%-28s fds %4s  threads %3s  rss %7s KiB\n' "$1" "$(fds)" "$(threads)" "$(rss_kib)"; }
# Waits (up to $3 s) until the server is idle again: back to $1 threads and $2 descriptors.
settle() {
  local want_threads=$1 want_fds=$2 limit=$3 t=0
  while { [ "$(threads)" -gt "$want_threads" ] || [ "$(fds)" -gt "$want_fds" ]; } &&
    [ "$(echo "$t < $limit" | bc)" = 1 ]; do
    sleep 0.05
    t=$(echo "$t + 0.05" | bc)
  done
}

run() { "$bin" run -H "$server" -q "$@" >/dev/null 2>>"$work/client.err"; }

mix=(
  "-w stream -P 2"
  "-w maerts"
  "-w bidir -P 2"
  "-w rr --burst 4 -P 3"
  "-w crr -P 2"
  "-p udp -w stream --rate 50M"
  "-p udp -w rr -r 64,64 -P 4"
)

base_fds=$(fds)
base_threads=$(threads)
snapshot "start"

# 1. concurrent clients, mixed workloads
end=$(( $(date +%s) + $(echo "$minutes * 60 / 1" | bc) ))
client_loop() {
  local i=$1 k=$1 done=0 failed=0
  while [ "$(date +%s)" -lt "$end" ]; do
    # shellcheck disable=SC2086
    if run ${mix[$((k % ${#mix[@]}))]} -l 1 --warmup 0.1; then done=$((done + 1)); else failed=$((failed + 1)); fi
    k=$((k + 1))
  done
  echo "$done $failed" >"$work/client.$i"
}
loops=()
for i in $(seq "$clients"); do
  client_loop "$i" &
  loops+=($!)
done
wait "${loops[@]}"
ok=0
bad=0
for i in $(seq "$clients"); do
  read -r d f <"$work/client.$i"
  ok=$((ok + d))
  bad=$((bad + f))
done
settle "$base_threads" "$base_fds" 5
snapshot "after $clients x ${minutes} min"
echo "  concurrent tests: $ok passed, $bad failed"

# 2. short tests in sequence
ok=0
bad=0
t0=$(date +%s.%N)
for i in $(seq "$tests"); do
  if [ $((i % 2)) = 0 ]; then w="-w rr"; else w="-w stream"; fi
  # shellcheck disable=SC2086
  if run $w -l "$len" --warmup 0; then ok=$((ok + 1)); else bad=$((bad + 1)); fi
done
t1=$(date +%s.%N)
settle "$base_threads" "$base_fds" 5
snapshot "after $tests short tests"
printf '  short tests: %d passed, %d failed, %.1f per second\n' "$ok" "$bad" \
  "$(echo "$tests / ($t1 - $t0)" | bc -l)"

# 3. a client killed mid-test
before_fds=$(fds)
before_threads=$(threads)
"$bin" run -H "$server" -q -w stream -P 4 -l 30 --warmup 0 >/dev/null 2>&1 &
victim=$!
for _ in $(seq 100); do
  [ "$(threads)" -gt "$before_threads" ] && break
  sleep 0.02
done
sleep 0.5
snapshot "client running"
kill -9 "$victim"
wait "$victim" 2>/dev/null || true
t0=$(date +%s.%N)
cleaned=
while :; do
  now=$(date +%s.%N)
  if [ "$(fds)" -le "$before_fds" ] && [ "$(threads)" -le "$before_threads" ]; then
    cleaned=$(echo "$now - $t0" | bc -l)
    break
  fi
  [ "$(echo "$now - $t0 > 5" | bc)" = 1 ] && break
  sleep 0.01
done
snapshot "after SIGKILL"
status=0
if [ -n "$cleaned" ] && [ "$(echo "$cleaned <= 1" | bc)" = 1 ]; then
  printf '  killed client cleaned up in %.3f s\n' "$cleaned"
else
  echo "  killed client NOT cleaned up within 1 s (${cleaned:-over 5} s)"
  status=1
fi

end_fds=$(fds)
end_threads=$(threads)
echo "server: fds $base_fds -> $end_fds, threads $base_threads -> $end_threads, rss $(rss_kib) KiB"
if [ "$end_fds" != "$base_fds" ] || [ "$end_threads" != "$base_threads" ]; then
  echo "soak: the server did not end where it started" >&2
  status=1
fi
if [ -s "$work/client.err" ]; then
  echo "client errors (first 5 distinct):"
  sort "$work/client.err" | uniq -c | sort -rn | head -5
fi
exit $status
