#!/bin/sh
# /init of the RDMA guest's initrd (busybox): loads the virtio, 9p and overlay modules, builds the
# new root from the host's root (9p, read-only) under a tmpfs overlay, shows the unpacked
# kernel's modules at /lib/modules, mounts the results share, and switch_roots into stage2.sh.
# switch_root, not chroot: the kernel's module autoload (crc32 for rdma_rxe) needs the real root.
/bin/busybox --install -s /bin
export PATH=/bin

fail() {
  echo "guest init: $*"
  echo o > /proc/sysrq-trigger
  sleep 5
  exit 1
}

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
echo "guest init: up $(cut -d' ' -f1 /proc/uptime) s"

while read -r m; do
  insmod "/modules/$m" || fail "insmod $m failed"
done < /modules/order

p9="trans=virtio,version=9p2000.L,msize=262144"
mount -t 9p -o "$p9,ro,cache=loose" hostroot /lower || fail "cannot mount the host's root"
mount -t 9p -o "$p9,cache=none" results /results || fail "cannot mount the results share"
# shellcheck source=/dev/null
. /results/guest.conf || fail "no guest.conf"

mount -t tmpfs -o mode=755 rw /rw
mkdir -p /rw/upper /rw/work
mount -t overlay overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work /newroot ||
  fail "cannot mount the overlay"

mkdir -p "/newroot/lib/modules/$GUEST_KVER"
mount -o bind "/newroot$GUEST_MODULES" "/newroot/lib/modules/$GUEST_KVER" ||
  fail "cannot bind the kernel's modules"
mount -t tmpfs -o mode=755 run /newroot/run
mkdir -p /newroot/run/mtperf-guest
mount --move /results /newroot/run/mtperf-guest
mount --move /dev /newroot/dev
mkdir -p /newroot/dev/shm /newroot/dev/pts
# What udev would add to devtmpfs: bash's <(...) and /dev/stdout need them.
ln -sf /proc/self/fd /newroot/dev/fd
for i in 0:stdin 1:stdout 2:stderr; do ln -sf "/proc/self/fd/${i%%:*}" "/newroot/dev/${i#*:}"; done
mount -t tmpfs -o mode=1777 shm /newroot/dev/shm
mount -t devpts -o gid=5,mode=620 devpts /newroot/dev/pts
# The host's names and resolver mean nothing here; a lone guest needs only its own.
hostname mtperf-guest
echo "127.0.0.1 localhost mtperf-guest" > /newroot/etc/hosts
echo "guest init: root ready $(cut -d' ' -f1 /proc/uptime) s"
for d in proc sys; do mount --move "/$d" "/newroot/$d"; done

exec switch_root /newroot /bin/bash "$GUEST_REPO/ci/rdma-guest/stage2.sh"
