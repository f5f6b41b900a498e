#!/bin/bash
# Second stage of the RDMA guest, PID 1 on the host's root (read-only, tmpfs overlay): brings up
# lo and soft-RoCE (rxe0 on dummy0, 10.10.0.1/24), runs the command from the results share
# (/run/mtperf-guest) in the repository, stores its output and exit status there, powers off.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8 TERM=dumb
res=/run/mtperf-guest

poweroff_now() {
  sync
  umount "$res" 2>/dev/null
  echo o > /proc/sysrq-trigger
  # Builtins only from here: the 9p root goes away with the devices.
  while :; do read -r -t 30 _ < /dev/console; done 2>/dev/null
}

# shellcheck source=/dev/null
. "$res/guest.conf"
export MTPERF_GUEST=1 MTPERF_GUEST_OUT=$res MTPERF_GUEST_ADDR=10.10.0.1 MTPERF_GUEST_DEV=rxe0

# One ip for all links: every binary comes over 9p, and each exec costs under TCG.
setup() {
  modprobe rdma_rxe &&
    ip -batch - <<'IP' &&
link set lo up
link add dummy0 type dummy
addr add 10.10.0.1/24 dev dummy0
link set dummy0 up
IP
    rdma link add rxe0 type rxe netdev dummy0
}
if ! setup_log=$(setup 2>&1); then
  printf 'guest: soft-RoCE set-up failed: %s\n' "$setup_log" >> "$res/stderr"
  echo 1 > "$res/status"
  poweroff_now
fi
echo "guest: rxe0 up at $(cut -d' ' -f1 /proc/uptime) s" > /dev/console

cd "$GUEST_REPO" || { echo 1 > "$res/status"; poweroff_now; }
# The command writes into pipes, not into the 9p files: a file reopened through /dev/stdout
# (tee /dev/stderr, > /dev/stdout) loses its writes on 9p. It runs in its own process group
# (set -m), a child rather than PID 1 (which ignores signals it may rely on), and what it
# leaves running in that group is killed so that the pipes close.
exec 3> >(exec cat >> "$res/stdout")
p3=$!
exec 4> >(exec cat >> "$res/stderr")
p4=$!
set -m
bash -c "$(< "$res/command")" < /dev/null >&3 2>&4 3>&- 4>&- &
cpid=$!
set +m
wait "$cpid"
rc=$?
kill -KILL -- -"$cpid" 2>/dev/null
exec 3>&- 4>&-
# What it started in other process groups (timeout makes its own) may still hold the pipes:
# after 5 s all that is left is killed.
(sleep 5; kill -KILL -1) 2>/dev/null &
timer=$!
wait "$p3" "$p4"
kill -KILL "$timer" 2>/dev/null
wait "$timer" 2>/dev/null
echo "guest: command exited $rc at $(cut -d' ' -f1 /proc/uptime) s" > /dev/console
echo "$rc" > "$res/status"
poweroff_now
