#!/usr/bin/env bash
# Runs inside the RDMA guest (see CMakeLists.txt here): mtperf's client against Debian 12's
# unmodified perftest servers over rxe0, one of each program it speaks:
#
#   ib_send_bw   mtperf run -T rdma --peer perftest -w stream -O verb=send
#   ib_write_bw  ... -w stream -O verb=write
#   ib_read_bw   ... -w maerts -O verb=read      (the client reads the server's memory)
#   ib_send_lat  ... -w rr -O verb=send
#   ib_write_lat ... -w rr -O verb=write
#
# Each server is started as mtperf prints it must be (`-n N -s SIZE -F`), without -R: the queue
# pairs are brought up by perftest's own exchange on TCP 18515. Checked for each: both exit 0;
# mtperf completed all N messages or round trips, with no error in its report and a throughput
# or latency (its --check: exit 3 otherwise); and the count
# perftest prints (its "#iterations" column) is N. ib_send_bw and the latency servers count what
# they received themselves; ib_write_bw and ib_read_bw's servers are passive and print the
# client's report, which this side sent them.
#
#   bash tests/rdma_guest/perftest_interop.sh MTPERF [PROGRAM...]
set -euo pipefail
. ci/rdma-guest/lib.sh
mtperf=${1:?usage: perftest_interop.sh MTPERF [PROGRAM...]}
shift
dev=${MTPERF_GUEST_DEV:-rxe0}
addr=${MTPERF_GUEST_ADDR:-10.10.0.1}
out=${MTPERF_GUEST_OUT:-$(mktemp -d)}
n=200
fail() { echo "FAIL: $*" >&2; exit 1; }

# program workload verb size-option
cases=(
  "send_bw stream send -m 65536"
  "write_bw stream write -m 65536"
  "read_bw maerts read -m 65536"
  "send_lat rr send -r 64"
  "write_lat rr write -r 64"
)

one() {
  local prog=$1 wl=$2 verb=$3 sizeopt=$4 size=$5
  local slog=$out/$prog.server.log clog=$out/$prog.client.log json=$out/$prog.json
  local args=(run -T rdma --peer perftest -w "$wl" -O "verb=$verb" "$sizeopt" "$size"
    --count "$n" --format json -o "$json")
  # mtperf counts an error when fewer than N completed: errors==0 is all N.
  local checks=errors==0,throughput\>0
  [[ $prog == *_lat ]] && checks=errors==0,latency_p50\>0
  # The command mtperf says the server must run: its first words are the program and flags.
  local want
  want=$("$mtperf" "${args[@]}" -H 127.0.0.1:1 2>&1 >/dev/null | sed -n 's/.*must run as: //p' | head -n1) || true
  [ -n "$want" ] || fail "$prog: mtperf did not print the server's command"
  echo "== $prog: server: $want -d $dev"
  timeout 120 $want -d "$dev" > "$slog" 2>&1 &
  local spid=$! rc=0 src=0
  tcp_wait_listen 18515 || { kill $spid; fail "$prog: perftest's server never listened"; }
  timeout 120 "$mtperf" "${args[@]}" -H "$addr" --check "$checks" 2> "$clog" || rc=$?
  [ $rc -eq 0 ] || { for _ in {1..50}; do kill -0 $spid 2>/dev/null || break; sleep 0.2; done; kill $spid 2>/dev/null || true; }
  wait $spid || src=$?
  if [ $rc -ne 0 ] || [ $src -ne 0 ]; then
    echo "-- mtperf said:"; tail -n 20 "$clog"
    echo "-- perftest said:"; tail -n 30 "$slog"
    fail "$prog: mtperf exited $rc, perftest $src"
  fi
  # perftest's servers tell a client no count: nothing may be shown as one, nor disagree.
  ! grep -q '"agree": *false' "$json" || fail "$prog: a count shown as perftest's disagrees"
  local iters
  iters=$(awk '/#bytes/ { getline; print $2; exit }' "$slog")
  echo "$prog: perftest's server counted ${iters:-nothing}"
  [ "$iters" = "$n" ] || { cat "$slog"; fail "$prog: perftest counted ${iters:-no} iterations, not $n"; }
}

for c in "${cases[@]}"; do
  read -r prog wl verb sizeopt size <<<"$c"
  if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$prog"; then continue; fi
  one "$prog" "$wl" "$verb" "$sizeopt" "$size"
done
echo "perftest interop: ok"
