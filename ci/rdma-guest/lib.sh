# shellcheck shell=bash
# Helpers for scripts that run inside the RDMA guest (ci/rdma-guest/guest.sh); sourced by bash.
#
#   rdma_cm_wait_listen PORT [SECONDS [PID]]
#   tcp_wait_listen PORT [SECONDS]
#   rdma_cm_pair PORT 'SERVER COMMAND' 'CLIENT COMMAND' [SECONDS]
#   tcp_pair PORT 'SERVER COMMAND' 'CLIENT COMMAND' [SECONDS]

# Waits until an rdma_cm id listens on PORT (default 30 s), of process PID if given (a listener
# that has just exited can still be listed); 1 if none did.
rdma_cm_wait_listen() {
  local port=$1 deadline=$((SECONDS + ${2:-30})) pid=${3:-[0-9]*}
  until rdma resource show cm_id 2>/dev/null |
      grep -q "state LISTEN .*pid $pid .*:$port\( \|$\)"; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.2
  done
}

# Waits until something listens on TCP port PORT (default 30 s): perftest's servers without -R,
# before their exchange; 1 if nothing did.
tcp_wait_listen() {
  local port=$1 deadline=$((SECONDS + ${2:-30}))
  until ss -Htln "sport = :$port" | grep -q .; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.2
  done
}

# As rdma_cm_pair, for a server that listens on TCP (perftest without -R).
tcp_pair() {
  PAIR_WAIT=tcp_wait_listen rdma_cm_pair "$@"
}

# The process timeout $1 runs (its child), once it is there.
server_pid() {
  local c
  for _ in {1..50}; do
    c=$(pgrep -P "$1" | head -n1)
    [ -n "$c" ] && { echo "$c"; return; }
    sleep 0.1
  done
  echo '[0-9]*'
}

# Runs a server in the background and, once it listens on PORT, its client; prints the client's
# output. Fails, with the server's output on stderr, when either side fails or outlives SECONDS
# (default 120). perftest and rping servers exit after one client. PAIR_WAIT names the function
# that waits for the listener (default rdma_cm_wait_listen).
rdma_cm_pair() {
  local port=$1 server=$2 client=$3 limit=${4:-120} slog spid rc=0 src=0
  slog=$(mktemp)
  # exec: the listener is this very process (timeout runs it as its child).
  timeout "$limit" bash -c "exec $server" > "$slog" 2>&1 &
  spid=$!
  if ! "${PAIR_WAIT:-rdma_cm_wait_listen}" "$port" 30 "$(server_pid "$spid")"; then
    echo "no listener on port $port after 30 s: $server" >&2
    kill "$spid" 2>/dev/null
    wait "$spid"
    cat "$slog" >&2
    rm -f "$slog"
    return 1
  fi
  timeout "$limit" bash -c "$client" > "$slog.client" 2>&1 || rc=$?
  if [ $rc -ne 0 ]; then   # a server whose client failed may wait for it until its limit
    for _ in {1..50}; do kill -0 "$spid" 2>/dev/null || break; sleep 0.2; done
    kill "$spid" 2>/dev/null
  fi
  wait "$spid" || src=$?
  cat "$slog.client"
  if [ $rc -ne 0 ] || [ $src -ne 0 ]; then
    echo "client exited $rc ($client), server $src ($server)" >&2
    echo "-- the client said:" >&2
    tail -n 30 "$slog.client" >&2
    echo "-- the server said:" >&2
    tail -n 30 "$slog" >&2
  fi
  rm -f "$slog" "$slog.client"
  [ $rc -eq 0 ] && [ $src -eq 0 ]
}
