#!/usr/bin/env bash
# The sandboxed service at work: a Debian 12 root with systemd (mmdebstrap) and the package
# installed, booted under systemd-nspawn (host network), where mtperf-serve.service and
# mtperf-serve@lab.service are started from /etc/default/mtperf and /etc/default/mtperf-lab and
# must serve stream, maerts, bidir, rr, crr, UDP and io_uring tests to the installed mtperf, as
# a dynamic user without capabilities. Root; exit 77 (skipped, with the reason) without root,
# mmdebstrap or systemd-nspawn. Not part of ci/test.sh: it fetches a root from the archive.
#   bash ci/service-test.sh [dist/mtperf_VERSION_ARCH.deb]
# PORT (default 12987) and PORT+1 are the two servers' control ports, on the host's network.
set -euo pipefail
cd "$(dirname "$0")/.."
deb=${1:-$(find dist -name 'mtperf_*.deb' 2>/dev/null | head -1)}
if [ -z "$deb" ] || [ ! -f "$deb" ]; then
  echo "ci/service-test.sh: no package; bash ci/package.sh first" >&2
  exit 1
fi
for tool in mmdebstrap systemd-nspawn; do
  if ! command -v "$tool" >/dev/null; then
    echo "SKIPPED: no $tool (apt-get install mmdebstrap systemd-container)"
    exit 77
  fi
done
if [ "$(id -u)" -ne 0 ]; then
  echo "SKIPPED: ci/service-test.sh needs root (mmdebstrap, systemd-nspawn)"
  exit 77
fi
port=${PORT:-12987}
start=$(date +%s)
step() { echo "ci/service-test.sh: $* ($(($(date +%s) - start)) s)"; }
root=$(mktemp -d /tmp/mtperf-service-test.XXXXXX)
boot=
# shellcheck disable=SC2317  # called by the trap
cleanup() {
  [ -n "$boot" ] && kill "$boot" 2>/dev/null && wait "$boot" 2>/dev/null
  rm -rf --one-file-system "$root"
}
trap cleanup EXIT
sources=/etc/apt/sources.list.d/debian.sources
[ -f "$sources" ] || sources=/etc/apt/sources.list
mmdebstrap --quiet --variant=apt --include=systemd,systemd-sysv,dbus --skip=cleanup/apt/lists \
  bookworm "$root" "$sources"
cp "$deb" "$root/tmp/"
chroot "$root" apt-get install -y -qq --no-install-recommends "/tmp/$(basename "$deb")" >/dev/null
echo "MTPERF_SERVE_OPTS=\"--port $port\"" >"$root/etc/default/mtperf"
echo "MTPERF_SERVE_OPTS=\"--port $((port + 1)) --max-sessions 2\"" >"$root/etc/default/mtperf-lab"
step "root with systemd and $(basename "$deb") made"
systemd-nspawn -D "$root" --boot --register=no --keep-unit --console=pipe -q >/dev/null 2>&1 &
boot=$!
# The container's systemd: the child of systemd-nspawn.
pid=
for _ in $(seq 100); do
  pid=$(pgrep -P "$boot" -x systemd || true)
  [ -n "$pid" ] && break
  sleep 0.2
done
[ -n "$pid" ] || { echo "FAIL: systemd did not start under systemd-nspawn" && exit 1; }
inside() { nsenter -t "$pid" -a "$@"; }
# Up once its manager answers on the bus (running, or degraded: a container lacks some units).
state=
for _ in $(seq 60); do
  state=$(inside systemctl is-system-running --wait 2>/dev/null || true)
  [[ $state == running || $state == degraded ]] && break
  sleep 0.5
done
[[ $state == running || $state == degraded ]] ||
  { echo "FAIL: the container's systemd is not up ('$state')" && exit 1; }
inside systemctl start mtperf-serve.service mtperf-serve@lab.service
sleep 1
status=0
for unit in mtperf-serve.service mtperf-serve@lab.service; do
  if ! inside systemctl -q is-active "$unit"; then
    echo "FAIL: $unit is not running:"
    inside journalctl --no-pager -u "$unit" | tail -5
    status=1
    continue
  fi
  main=$(inside systemctl show -P MainPID "$unit")
  # shellcheck disable=SC2016
  uid=$(inside awk '/^Uid:/ { print $2 }' "/proc/$main/status")
  # shellcheck disable=SC2016
  caps=$(inside awk '/^CapBnd:/ { print $2 }' "/proc/$main/status")
  # DynamicUser's users are allocated from 61184..65519.
  if [ "$uid" -lt 61184 ] || [ "$uid" -gt 65519 ] || [ "$caps" != 0000000000000000 ]; then
    echo "FAIL: $unit runs as uid $uid with capability bounding set $caps"
    status=1
  fi
done
step "both units started, each a dynamic user without capabilities"
for test in "-w stream" "-w maerts" "-w bidir" "-w rr" "-w crr" "-p udp -w stream" \
  "-p udp -w rr -r 64" "-T uring -w rr -P 4"; do
  # shellcheck disable=SC2086
  if ! out=$(inside mtperf run -H "127.0.0.1:$port" $test -l 1 -q 2>&1); then
    echo "FAIL: mtperf run $test against mtperf-serve.service:"
    echo "$out" | tail -3
    status=1
  fi
done
if ! inside mtperf run -H "127.0.0.1:$((port + 1))" -w rr -l 1 -q >/dev/null; then
  echo "FAIL: mtperf run against mtperf-serve@lab.service"
  status=1
fi
[ $status -eq 0 ] && step "the sandboxed servers served every test; ok"
inside systemctl poweroff >/dev/null 2>&1 || true
wait "$boot" 2>/dev/null || true
boot=
exit $status
