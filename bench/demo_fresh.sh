#!/usr/bin/env bash
# The README's first command on a machine without mtperf's packages, timed: a minimal Debian 12
# root (mmdebstrap, from this host's configured apt archive: apt and nothing of mtperf's), a
# fresh clone of this checkout's HEAD copied in, then `bash ci/demo.sh` inside it through chroot,
# on this host's CPUs. Prints the demo's own line (packages, build) and the whole time to its
# table. Root (chroot, mounts, the demo's namespaces); the root is removed at the end.
#   bash bench/demo_fresh.sh [DEMO OPTIONS...]
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "bench/demo_fresh.sh: needs root (chroot and mounts)" >&2; exit 2; }
command -v mmdebstrap >/dev/null || { echo "bench/demo_fresh.sh: apt-get install mmdebstrap" >&2; exit 2; }
root=$(mktemp -d /tmp/mtperf-demo-fresh.XXXXXX)
mounted=()
cleanup() {
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[i]}" || true; done
  rm -rf --one-file-system "$root"
}
trap cleanup EXIT
sources=/etc/apt/sources.list.d/debian.sources
[ -f "$sources" ] || sources=/etc/apt/sources.list
t0=$(date +%s)
# The demo runs `apt-get update` itself (ci/deps.sh), as on a new machine: no lists kept here.
mmdebstrap --quiet --variant=apt bookworm "$root" "$sources"
echo "bench/demo_fresh.sh: minimal root made in $(($(date +%s) - t0)) s (not counted)"
git clone -q . "$root/src/mtperf"
# The root a mount point of its own, as a machine's is: `ip netns add` remounts / as a slave.
mount --bind "$root" "$root"
mounted+=("$root")
for fs in proc sys dev run; do
  case $fs in
    proc) mount -t proc proc "$root/proc" ;;
    run) mount -t tmpfs tmpfs "$root/run" ;;
    *) mount --rbind "/$fs" "$root/$fs" ;;
  esac
  mounted+=("$root/$fs")
done
start=$(date +%s)
rc=0
chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
  bash -c 'cd /src/mtperf && bash ci/demo.sh "$@"' demo "$@" | tee "$root/tmp/table" || rc=$?
took=$(($(date +%s) - start))
grep -q "^workload" "$root/tmp/table" || { echo "bench/demo_fresh.sh: the demo printed no table" >&2; exit 1; }
echo "bench/demo_fresh.sh: from a fresh clone without the packages to the table:" \
  "$((took / 60)) min $((took % 60)) s (the demo exited $rc)"
