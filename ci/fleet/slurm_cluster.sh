#!/usr/bin/env bash
# A real Slurm cluster on this host, for testing `mtperf fleet` under srun: one slurmctld and one
# slurmd per emulated node, each node in its own network, UTS and mount namespace (its own
# address 10.77.0.I on a veth into a bridge, its own hostname nodeI, an /etc/hosts naming every
# node), munge with its own key and socket, Slurm with its own ports, state and spool under DIR,
# so nothing collides with a system Slurm. Root only. The nodes hang off two leaf switches under a
# spine (topology/tree: leaf1 the first half of the nodes, leaf2 the rest), which
# `scontrol show topology` reports and `mtperf fleet --groups slurm` reads.
#
#   slurm_cluster.sh up DIR [NODES]   # prints "export SLURM_CONF=DIR/slurm.conf"
#   slurm_cluster.sh down DIR         # stops the daemons, removes the namespaces and the bridge
#
# Exit 77 (skip) where Slurm or munge is not installed. Traffic stays on the bridge.
set -euo pipefail
cmd=${1:?usage: slurm_cluster.sh up|down DIR [NODES]}
dir=${2:?usage: slurm_cluster.sh up|down DIR [NODES]}
nodes=${3:-4}
bridge=mtpfbr0
prefix=10.77.0
ns() { echo "mtpf-node$1"; }

down() {
  for f in "$dir"/run/slurmd.*.pid "$dir"/run/slurmctld.pid "$dir"/run/munged.pid; do
    [ -f "$f" ] || continue
    pid=$(cat "$f" 2>/dev/null || true)
    [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  done
  # Each daemon takes a moment to exit on SIGTERM; then nothing may stay.
  for _ in $(seq 50); do
    alive=0
    for f in "$dir"/run/*.pid; do
      [ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null && alive=1
    done
    [ $alive -eq 0 ] && break
    sleep 0.2
  done
  for f in "$dir"/run/*.pid; do
    [ -f "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null || true
  done
  for i in $(seq 1 64); do
    if ip netns list | grep -qw "$(ns "$i")"; then
      for pid in $(ip netns pids "$(ns "$i")" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
      ip netns del "$(ns "$i")" 2>/dev/null || true
    fi
  done
  ip link del "$bridge" 2>/dev/null || true
  rm -f "$dir"/run/*.pid
}

if [ "$cmd" = down ]; then
  down
  exit 0
fi
[ "$cmd" = up ] || { echo "slurm_cluster.sh: $cmd is not up or down" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "slurm_cluster.sh: needs root (namespaces)" >&2; exit 77; }
for tool in slurmctld slurmd srun munged nsenter unshare; do
  command -v "$tool" >/dev/null || { echo "slurm_cluster.sh: $tool is not installed" >&2; exit 77; }
done

mkdir -p "$dir"/{run,log,state,spool,etc}
chmod 700 "$dir"/etc
# munge: its own key, socket, pid and seed files.
dd if=/dev/urandom of="$dir/etc/munge.key" bs=1024 count=1 status=none
chmod 400 "$dir/etc/munge.key"
munged --force --socket="$dir/run/munge.sock" --key-file="$dir/etc/munge.key" \
  --pid-file="$dir/run/munged.pid" --log-file="$dir/log/munged.log" \
  --seed-file="$dir/state/munged.seed"

ip link add "$bridge" type bridge
ip addr add "$prefix.254/24" dev "$bridge"
ip link set "$bridge" up
{
  echo "127.0.0.1 localhost"
  echo "$prefix.254 ctl"
  for i in $(seq 1 "$nodes"); do echo "$prefix.$i node$i"; done
} >"$dir/etc/hosts"
source "$(dirname "$0")/ns_on_bridge.sh"
for i in $(seq 1 "$nodes"); do ns_on_bridge "$(ns "$i")" "mtpfv$i" "$bridge" "$prefix.$i/24"; done

cat >"$dir/slurm.conf" <<CONF
ClusterName=mtpf
SlurmctldHost=$(hostname -s)($prefix.254)
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/run/munge.sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/linear
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
TopologyPlugin=topology/tree
CONF
half=$(((nodes + 1) / 2))
{
  echo "SwitchName=leaf1 Nodes=node[1-$half]"
  if [ "$nodes" -gt "$half" ]; then
    echo "SwitchName=leaf2 Nodes=node[$((half + 1))-$nodes]"
    echo "SwitchName=spine Switches=leaf[1-2]"
  fi
} >"$dir/topology.conf"
for i in $(seq 1 "$nodes"); do
  echo "NodeName=node$i NodeAddr=$prefix.$i CPUs=$(nproc) State=UNKNOWN" >>"$dir/slurm.conf"
done
echo "PartitionName=fleet Nodes=ALL Default=YES MaxTime=INFINITE State=UP" >>"$dir/slurm.conf"
export SLURM_CONF="$dir/slurm.conf"

slurmctld -f "$SLURM_CONF" -i
# Each slurmd in its node's network namespace (nsenter: `ip netns exec` would remount /sys),
# with a UTS and mount namespace of its own for its hostname and /etc/hosts.
for i in $(seq 1 "$nodes"); do
  mkdir -p "$dir/spool/node$i"
  nsenter --net="/run/netns/$(ns "$i")" unshare --uts --mount --propagation private \
    sh -c "hostname node$i && mount --bind '$dir/etc/hosts' /etc/hosts && \
           exec slurmd -f '$SLURM_CONF' -N node$i" </dev/null
done
for _ in $(seq 100); do
  idle=$(timeout 5 sinfo -h -N -o '%T' 2>/dev/null | grep -c '^idle' || true)
  [ "$idle" -eq "$nodes" ] && break
  sleep 0.3
done
if [ "${idle:-0}" -ne "$nodes" ]; then
  echo "slurm_cluster.sh: only ${idle:-0} of $nodes nodes came up idle:" >&2
  timeout 5 sinfo -N >&2 || true
  tail -n 20 "$dir"/log/*.log >&2 || true
  exit 1
fi
echo "export SLURM_CONF=$SLURM_CONF"
