#!/usr/bin/env bash
# Runs a command inside a throwaway qemu guest that has soft-RoCE (rdma_rxe), for the RDMA tests
# on hosts whose kernel has no RDMA.
#
#   bash ci/rdma-guest/guest.sh [--timeout S] [--out DIR] [-e NAME=VALUE]... -- COMMAND...
#
# The guest boots Debian 12's stock kernel under TCG (KVM crawls on a paravirtual /dev/kvm), with
# 2 CPUs and 1.5 GiB, on the host's own root filesystem: shared read-only over 9p with a tmpfs
# overlay on top, so every binary, library and build tree of the host is there at the same path,
# and what the guest writes vanishes with it, except under $MTPERF_GUEST_OUT. Before COMMAND it
# brings up lo and a soft-RoCE device rxe0 on dummy0, address 10.10.0.1/24 (only inside the
# guest; RDMA traffic must go there, not to 127.0.0.1, which rxe does not serve). COMMAND runs as
# root in the guest's root network namespace (rxe on Linux 6.1 receives only there), in the
# repository root: one word is a shell command line (bash -c), several are run as they are.
# Its environment has MTPERF_GUEST=1, MTPERF_GUEST_ADDR=10.10.0.1, MTPERF_GUEST_DEV=rxe0 and
# MTPERF_GUEST_OUT (the results share; the host sees it as --out DIR).
#
# Its stdout and stderr come back on ours as they are written, and we exit with its status.
# Exit 77 with a "SKIPPED: ..." line when no guest can be had here (not root, no qemu, no kernel
# package, no network for apt); 124 when the guest outlived --timeout (default 600 s; the boot
# included, not the first run's downloads). No qemu process outlives this script, even killed.
# --out DIR keeps the serial console (console.log), the command's stdout/stderr and whatever it
# wrote under $MTPERF_GUEST_OUT; without --out a temporary folder is used, kept (and named) only
# when something failed. -e sets an environment variable for COMMAND. MTPERF_GUEST_VERBOSE=1
# reports the guest's run time.
#
# Build on the host first: the guest sees the build tree but should not build (TCG is slow).
# Examples, from the repository root:
#   bash ci/rdma-guest/guest.sh -- 'ibv_devinfo -d rxe0'
#   bash ci/rdma-guest/guest.sh -- ctest --test-dir build -R rdma --output-on-failure
#   bash ci/rdma-guest/guest.sh -- build/tests/transports/transports_test_inet '[some tag]'
#       (tests/D/test_X.cpp builds build/tests/D/D_test_X, D's slashes made underscores)
#   bash ci/rdma-guest/guest.sh -- 'build/cli/mtperf serve --bind 10.10.0.1 & sleep 3;
#       build/cli/mtperf run -T rdma -H 10.10.0.1 -w stream -l 3'
# In a ctest entry: COMMAND bash ${PROJECT_SOURCE_DIR}/ci/rdma-guest/guest.sh --timeout 420 -- ...
# with SKIP_RETURN_CODE 77 and a TIMEOUT above --timeout (see tests/rdma_guest/CMakeLists.txt);
# ci/rdma-guest/lib.sh has helpers for server/client pairs over rdma_cm. Boot to a ready guest
# takes about 10 s on a quiet host; the first run also installs qemu and downloads the kernel
# (about a minute; cached in $MTPERF_GUEST_CACHE, by default
# ${XDG_CACHE_HOME:-/var/cache}/mtperf-rdma-guest).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
timeout_s=600
out=
envs=()
usage() { sed -n '2,40p' "$0" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --timeout) timeout_s=${2:?}; shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    -e) envs+=("${2:?}"); shift 2 ;;
    --) shift; break ;;
    -h|--help) usage ;;
    *) echo "guest.sh: unknown option $1" >&2; usage ;;
  esac
done
[ $# -gt 0 ] || usage
if ! [[ $timeout_s =~ ^[1-9][0-9]*$ ]]; then
  echo "guest.sh: bad --timeout $timeout_s" >&2
  exit 2
fi
for e in ${envs[@]+"${envs[@]}"}; do
  [[ $e =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || { echo "guest.sh: bad -e $e" >&2; exit 2; }
done

skip() { echo "SKIPPED: $*" >&2; exit 77; }
log() { echo "guest.sh: $*" >&2; }

[ "$(id -u)" -eq 0 ] || skip "the RDMA guest needs root (apt-get, the host's root shared over 9p)"
[ "$(uname -m)" = x86_64 ] || skip "the RDMA guest needs an x86_64 host"

cache=${MTPERF_GUEST_CACHE:-${XDG_CACHE_HOME:-/var/cache}/mtperf-rdma-guest}
mkdir -p "$cache"
# One preparation at a time (apt, the kernel, the initrd); running guests hold no lock.
exec 9>"$cache/.lock"
flock 9

# --- host packages -------------------------------------------------------------------------
apt_updated=0
apt_update() {
  [ $apt_updated -eq 1 ] && return 0
  apt_updated=1
  log "apt-get update"
  apt-get -o DPkg::Lock::Timeout=300 update -qq >/dev/null 2>&1
}
apt_install() {
  apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends "$@" >/dev/null 2>&1
}
pkgs=(qemu-system-x86 busybox-static kmod cpio rdma-core ibverbs-providers ibverbs-utils
      rdmacm-utils perftest libibverbs-dev librdmacm-dev iproute2 procps xz-utils)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  command -v apt-get >/dev/null || skip "no apt-get to install ${missing[*]}"
  log "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  if ! apt_install "${missing[@]}"; then
    apt_update || skip "apt-get update failed (no network for apt?)"
    apt_install "${missing[@]}" || skip "apt-get could not install ${missing[*]}"
  fi
fi
qemu=$(command -v qemu-system-x86_64) || skip "qemu-system-x86_64 not found"

# --- the guest kernel: Debian's linux-image, unpacked into the cache, never installed --------
wanted_kernel() {   # the package linux-image-amd64 depends on, e.g. linux-image-6.1.0-57-amd64
  apt-cache show --no-all-versions linux-image-amd64 2>/dev/null |
    sed -n 's/^Depends:.*\(linux-image-[0-9][^ ,]*-amd64\).*/\1/p' | head -n1
}
download() {   # apt-get download $1 into $cache/dl
  log "downloading $1"
  rm -rf "$cache/dl"
  mkdir -p "$cache/dl"
  (cd "$cache/dl" && apt-get download -qq "$1" >/dev/null 2>&1)
}
unpack_kernel() {   # $cache/dl/*.deb -> $cache/$1, modules indexed by depmod
  local d=$cache/$1 v
  rm -rf "$d" "$d.tmp"
  dpkg -x "$cache"/dl/*.deb "$d.tmp"
  rm -rf "$cache/dl"
  v=$(ls "$d.tmp/lib/modules")
  # What a guest on 9p with soft-RoCE never loads: the cache holds 200 MB instead of 400.
  (cd "$d.tmp/lib/modules/$v/kernel" && rm -rf sound drivers/{gpu,media,staging,net/wireless} &&
    rm -rf drivers/{bluetooth,iio,hid,input,usb,scsi,md,mtd,isdn,comedi})
  depmod -b "$d.tmp" "$v"
  touch "$d.tmp/.complete"
  mv "$d.tmp" "$d"
}
have_kernel() {   # $cache/$1 is there, or is made
  [ -n "$1" ] && { [ -e "$cache/$1/.complete" ] || { download "$1" && unpack_kernel "$1"; }; }
}
kpkg=$(wanted_kernel || true)
if ! have_kernel "$kpkg"; then
  apt_update || true
  kpkg=$(wanted_kernel || true)   # the mirror may have moved on
  if ! have_kernel "$kpkg"; then
    # Offline: an older kernel in the cache does as well.
    kpkg=$(find "$cache" -mindepth 2 -maxdepth 2 -path '*/linux-image-*/.complete' -printf '%h\n' |
      sort -V | tail -n1 | xargs -r basename)
    [ -n "$kpkg" ] || skip "no guest kernel: apt could not fetch linux-image-amd64's (network?)"
  fi
fi
kdir=$cache/$kpkg
kver=$(ls "$kdir/lib/modules")
kernel=$kdir/boot/vmlinuz-$kver
[ -r "$kernel" ] || { log "no $kernel in $kpkg"; exit 1; }
# The bzImage's own XZ decompression takes seconds under TCG; qemu boots the uncompressed ELF
# directly (PVH entry, CONFIG_PVH=y), so it is decompressed once, here.
if [ ! -e "$kdir/vmlinux" ] && [ ! -e "$kdir/.no-vmlinux" ]; then
  off=$(LC_ALL=C grep -abo -m1 $'\xfd7zXZ\x00' "$kernel" | head -n1 | cut -d: -f1 || true)
  t=$kdir/vmlinux.tmp
  if [ -n "$off" ] && xz -dcq --single-stream < <(tail -c +$((off + 1)) "$kernel") > "$t" &&
     [ "$(head -c4 "$t" | od -An -c | tr -d ' ')" = '177ELF' ]; then
    mv "$t" "$kdir/vmlinux"
  else
    rm -f "$t"
    touch "$kdir/.no-vmlinux"
  fi
fi
[ -e "$kdir/vmlinux" ] && kernel=$kdir/vmlinux

# --- the initrd: busybox, the modules that reach the shared root, /init ---------------------
modpath() {   # the modules.dep path of module $1 ('-' and '_' alike), empty if built in
  local p
  p=$(awk -F: -v n="${1//-/_}" '{ b = $1; sub(/.*\//, "", b); sub(/\.ko.*/, "", b)
                                  gsub("-", "_", b); if (b == n) { print $1; exit } }' \
      "$kdir/lib/modules/$kver/modules.dep")
  if [ -n "$p" ]; then echo "$p"; return 0; fi
  grep -q "/${1}.ko" "$kdir/lib/modules/$kver/modules.builtin" && return 0
  log "module $1 is neither in modules.dep nor built in"
  return 1
}
declare -A seen=()
order=()
add_with_deps() {   # depth-first: a module's dependencies before the module
  local p=$1 d
  [ -n "${seen[$p]:-}" ] && return 0
  seen[$p]=1
  for d in $(grep -m1 "^$p:" "$kdir/lib/modules/$kver/modules.dep" | cut -d: -f2); do
    add_with_deps "$d"
  done
  order+=("$p")
}
initrd_modules=(virtio_pci 9pnet_virtio 9p overlay)
initrd_sum=$({ cat "$here/init.sh" /bin/busybox; echo "${initrd_modules[*]}"; } | sha256sum)
initrd_sum=${initrd_sum:0:16}
initrd=$kdir/initrd-$initrd_sum.gz
if [ ! -e "$initrd" ]; then
  for m in "${initrd_modules[@]}"; do
    p=$(modpath "$m")
    [ -n "$p" ] && add_with_deps "$p"
  done
  stage=$(mktemp -d)
  mkdir -p "$stage"/{bin,dev,proc,sys,lower,rw,newroot,results,modules}
  cp /bin/busybox "$stage/bin/busybox"
  ln -s busybox "$stage/bin/sh"
  cp "$here/init.sh" "$stage/init"
  chmod 755 "$stage/init"
  for p in ${order[@]+"${order[@]}"}; do
    f=$kdir/lib/modules/$kver/$p
    b=$(basename "$p")
    case $b in   # busybox insmod takes plain .ko files
      *.ko.xz) xz -dc "$f" > "$stage/modules/${b%.xz}"; b=${b%.xz} ;;
      *.ko.zst) zstd -qdc "$f" > "$stage/modules/${b%.zst}"; b=${b%.zst} ;;
      *.ko.gz) gzip -dc "$f" > "$stage/modules/${b%.gz}"; b=${b%.gz} ;;
      *) cp "$f" "$stage/modules/$b" ;;
    esac
    echo "$b" >> "$stage/modules/order"
  done
  (cd "$stage" && find . | cpio -o -H newc --quiet | gzip -1) > "$initrd.tmp"
  rm -rf "$stage"
  rm -f "$kdir"/initrd-*.gz   # made from an older init.sh
  mv "$initrd.tmp" "$initrd"
fi
flock -u 9
exec 9>&-

# --- the run -----------------------------------------------------------------------------------
keep=1
if [ -z "$out" ]; then
  out=$(mktemp -d /tmp/mtperf-guest.XXXXXX)
  keep=0
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out"/{status,stdout,stderr,console.log,qemu.pid,command,guest.conf}
if [ $# -eq 1 ]; then
  printf '%s\n' "$1" > "$out/command"
else
  printf '%q ' "$@" > "$out/command"
  echo >> "$out/command"
fi
{
  printf 'GUEST_REPO=%q\n' "$repo"
  printf 'GUEST_KVER=%q\n' "$kver"
  printf 'GUEST_MODULES=%q\n' "$kdir/lib/modules/$kver"
  for e in ${envs[@]+"${envs[@]}"}; do printf 'export %s=%q\n' "${e%%=*}" "${e#*=}"; done
} > "$out/guest.conf"

qpid=
tails=()
# shellcheck disable=SC2317  # reached through the trap
cleanup() {
  local rc=$?
  if [ -n "$qpid" ] && kill -0 "$qpid" 2>/dev/null; then
    kill -KILL "$qpid" 2>/dev/null || true
  fi
  if [ -s "$out/qemu.pid" ]; then
    local q
    q=$(cat "$out/qemu.pid" 2>/dev/null || true)
    if [ -n "$q" ] && [ "$(cat "/proc/$q/comm" 2>/dev/null)" = qemu-system-x86 ]; then
      kill -KILL "$q" 2>/dev/null || true
    fi
  fi
  for t in ${tails[@]+"${tails[@]}"}; do kill "$t" 2>/dev/null || true; done
  if [ "$keep" -eq 0 ]; then
    if [ "$rc" -eq 0 ] || [ "$rc" -eq 77 ]; then rm -rf "$out"; else log "kept $out"; fi
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

: > "$out/stdout"
: > "$out/stderr"
start=$(date +%s%N)
# clocksource=tsc: the guest's clock reads are vDSO reads of the TSC, as on hardware; without it
# the kernel picks HPET under TCG, where every clock_gettime is a system call and an emulated
# device read, which adds to every round trip mtperf times and perftest (reading the TSC
# itself) does not. tsc=reliable: TCG's TSC is the host's monotonic clock,
# the same on both virtual CPUs; the watchdog would otherwise reject it during boot.
# Each process dies with its parent: nothing of the guest survives this script, even killed.
setpriv --pdeathsig KILL -- timeout --kill-after=5 "$timeout_s" \
  setpriv --pdeathsig KILL -- "$qemu" \
  -nodefaults -no-user-config -M pc -accel tcg,thread=multi,tb-size=64 -cpu max -smp 2 -m 1536 \
  -nographic -no-reboot -serial "file:$out/console.log" -monitor none -nic none \
  -pidfile "$out/qemu.pid" \
  -kernel "$kernel" -initrd "$initrd" \
  -append "console=ttyS0 panic=-1 quiet mitigations=off 8250.nr_uarts=1 clocksource=tsc tsc=reliable" \
  -fsdev local,id=root,path=/,security_model=none,readonly=on,multidevs=remap \
  -device virtio-9p-pci,fsdev=root,mount_tag=hostroot \
  -fsdev "local,id=out,path=$out,security_model=none,multidevs=remap" \
  -device virtio-9p-pci,fsdev=out,mount_tag=results \
  < /dev/null > "$out/qemu.log" 2>&1 &
qpid=$!
# The command's output as it comes.
setpriv --pdeathsig KILL -- tail -q -n +1 -s 0.2 -F --pid=$qpid "$out/stdout" 2>/dev/null &
tails+=($!)
setpriv --pdeathsig KILL -- tail -q -n +1 -s 0.2 -F --pid=$qpid "$out/stderr" >&2 2>/dev/null &
tails+=($!)
qrc=0
wait "$qpid" || qrc=$?
qpid=
for t in "${tails[@]}"; do wait "$t" 2>/dev/null || true; done
tails=()
elapsed=$((($(date +%s%N) - start) / 1000000))

if [ -s "$out/status" ]; then
  rc=$(cat "$out/status")
  [[ $rc =~ ^[0-9]+$ ]] || rc=1
  [ -n "${MTPERF_GUEST_VERBOSE:-}" ] && log "guest ran ${elapsed} ms, command exited $rc"
  exit "$rc"
fi
if [ $qrc -eq 124 ] || [ $qrc -eq 137 ]; then
  log "the guest outlived --timeout $timeout_s s; serial console: $out/console.log"
  tail -n 20 "$out/console.log" >&2 || true
  exit 124
fi
log "the guest stopped without a result (qemu exit $qrc); serial console: $out/console.log"
tail -n 20 "$out/qemu.log" "$out/console.log" >&2 || true
exit 1
