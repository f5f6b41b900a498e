#!/usr/bin/env bash
# The Debian package as a user meets it: a minimal Debian 12 root (mmdebstrap, from this host's
# configured apt archive), `apt-get install ./mtperf_*.deb` inside it through chroot, then
# `mtperf --version`, a 1 s `mtperf run`, `man mtperf-run`, the bash completion loaded and asked,
# and `apt-get purge mtperf` leaving no file behind. Root (chroot, mounts); exit 77 (skipped,
# with the reason) without root. ci/test.sh runs it after the suite (about 1 to 2.5 min: it fetches
# a root of about 100 MB from the archive).
#   bash ci/install-test.sh [dist/mtperf_VERSION_ARCH.deb]
set -euo pipefail
cd "$(dirname "$0")/.."
deb=${1:-$(ls dist/mtperf_*.deb 2>/dev/null | head -1)}
if [ -z "$deb" ] || [ ! -f "$deb" ]; then
  echo "ci/install-test.sh: no package; bash ci/package.sh first" >&2
  exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "SKIPPED: ci/install-test.sh needs root (chroot and mounts)"
  exit 77
fi
if ! command -v mmdebstrap >/dev/null; then
  echo "ci/install-test.sh: installing mmdebstrap"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mmdebstrap >/dev/null
fi
start=$(date +%s)
step() { echo "ci/install-test.sh: $* ($(($(date +%s) - start)) s)"; }
root=$(mktemp -d /tmp/mtperf-install-test.XXXXXX)
mounted=()
cleanup() {
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[i]}" || true; done
  rm -rf --one-file-system "$root"
}
trap cleanup EXIT
# The archive this host installs from (deb822 or one-line sources), so the test needs no other.
sources=/etc/apt/sources.list.d/debian.sources
[ -f "$sources" ] || sources=/etc/apt/sources.list
# Its package lists kept: apt-get install ./the.deb fetches the libraries it depends on.
mmdebstrap --quiet --variant=apt --include=man-db,bash-completion --skip=cleanup/apt/lists \
  bookworm "$root" "$sources"
step "minimal root made"
for fs in proc sys dev; do
  case $fs in
    proc) mount -t proc proc "$root/proc" ;;
    *) mount --rbind "/$fs" "$root/$fs" ;;
  esac
  mounted+=("$root/$fs")
done
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
  LANG=C.UTF-8 "$@"; }
# What is there before the package: after its purge the same files must be, and no other. The
# backups of /etc/group and the like (/etc/gshadow-) are left out: libibverbs1's postinst adds a
# group, and the backup stays with the group.
listing() {
  in_root find / -xdev \( -path /proc -o -path /sys -o -path /dev -o -path /tmp -o -path /run \
    -o -path /var/cache -o -path /var/lib/apt -o -path /var/lib/dpkg -o -path /var/log \) -prune \
    -o -print | sort | grep -v '^/etc/[a-z]*-$'
}
listing >"$root/tmp/before"
cp "$deb" "$root/tmp/"
in_root apt-get install -y -q --no-install-recommends "/tmp/$(basename "$deb")" | tail -n 20
step "installed $(basename "$deb") with its dependencies"
in_root mtperf --version
in_root mtperf run -l 1 -q | tail -3
in_root sh -c 'MANWIDTH=80 man mtperf-run 2>&1 >/dev/null' | { ! grep .; } ||
  { echo "FAIL: man mtperf-run warns" && exit 1; }
in_root sh -c 'MANWIDTH=80 man mtperf-run | grep -q -- "--length"' ||
  { echo "FAIL: man mtperf-run has no --length" && exit 1; }
in_root bash -c 'source /usr/share/bash-completion/bash_completion
  _completion_loader mtperf
  COMP_WORDS=(mtperf run -T ""); COMP_CWORD=3; _mtperf
  [[ " ${COMPREPLY[*]} " == *" socket "* ]]' ||
  { echo "FAIL: the completion of 'mtperf run -T ' lacks socket" && exit 1; }
step "mtperf runs, man mtperf-run formats without a warning, the completion loads"
[ -f "$root/etc/default/mtperf" ] && [ -f "$root/lib/systemd/system/mtperf-serve.service" ]
in_root apt-get purge -y -qq --autoremove mtperf >/dev/null  # and the libraries it brought
listing >"$root/tmp/after"
if ! diff -u "$root/tmp/before" "$root/tmp/after"; then
  echo "FAIL: apt-get purge mtperf leaves the files above"
  exit 1
fi
step "apt-get purge mtperf leaves nothing; ok"
