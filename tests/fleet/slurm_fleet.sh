#!/usr/bin/env bash
# mtperf fleet under a real Slurm cluster on this host (ci/fleet/slurm_cluster.sh: slurmctld,
# one slurmd per node, each node in its own namespaces): srun -N4 all-pairs over socket and uring,
# then a rank SIGKILLed mid-run: named, its cells empty, the partial document written, exit 1,
# bounded. Skipped (77) without root or Slurm.
set -euo pipefail
mtperf=${1:?usage: slurm_fleet.sh MTPERF}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
[ "$(id -u)" -eq 0 ] || { echo "skipped: needs root (the nodes are namespaces)"; exit 77; }
command -v slurmctld >/dev/null || { echo "skipped: Slurm is not installed (slurmctld slurmd slurm-client munge)"; exit 77; }
dir=$(mktemp -d)
cluster="$root/ci/fleet/slurm_cluster.sh"
cleanup() {
  bash "$cluster" down "$dir" || true
  rm -rf "$dir"
}
trap cleanup EXIT
set +e
out=$(bash "$cluster" up "$dir" 4)
rc=$?
set -e
[ $rc -eq 77 ] && exit 77
[ $rc -eq 0 ] || { echo "the Slurm cluster did not come up"; exit 1; }
eval "$out"
check() { python3 "$here/fleet_check.py" --schema "$root/docs/json-schema/fleet.schema.json" "$@"; }
# The fleet's key as the emitted recipe makes it: a file on the filesystem every node shares,
# this user's alone; never on a command line.
key="$dir/fleet.key"
(umask 077 && head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$key")

echo "== without a key, beyond loopback: refused before anything starts (exit 2)"
set +e
out=$(timeout 60 srun -N2 --ntasks-per-node=1 "$mtperf" fleet -w stream -l 1 2>&1)
rc=$?
set -e
[ $rc -eq 2 ] || { echo "a keyless fleet ended with $rc, not 2: $out"; exit 1; }
grep -q "no key" <<<"$out" && grep -q -- "--key-file" <<<"$out" ||
  { echo "the refusal does not say how to make a key: $out"; exit 1; }

echo "== srun -N4 mtperf fleet -w stream -T socket,uring --pattern all-pairs -l 2"
timeout 240 srun -N4 --ntasks-per-node=1 "$mtperf" fleet --key-file "$key" -w stream \
  -T socket,uring --pattern all-pairs -l 2 --format json -o "$dir/all.json"
check "$dir/all.json" --ranks 4 --transports socket,uring --max-spread-ms 50
python3 - "$dir/all.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
hosts = [m["host"] for m in d["roster"]]
assert hosts == ["node1", "node2", "node3", "node4"], hosts
assert d["fleet"]["launcher"] == "Slurm", d["fleet"]["launcher"]
print("roster:", ", ".join(f"{m['host']} {m['address']}" for m in d["roster"]))
PY

echo "== rank 2 SIGKILLed mid-run"
start=$(date +%s)
set +e
timeout 240 srun -N4 --ntasks-per-node=1 "$mtperf" fleet --key-file "$key" -w stream \
  --pattern shift -l 2 --pair-timeout 10 --format json -o "$dir/killed.json" &
srun_pid=$!
victim=""
for _ in $(seq 100); do
  sleep 0.1
  victim=$(for p in $(ip netns pids mtpf-node3); do
    [ "$(cat /proc/$p/comm 2>/dev/null)" = mtperf ] && echo "$p"; done | head -1)
  [ -n "$victim" ] && break
done
sleep 3  # into the first round
[ -n "$victim" ] && kill -9 "$victim"
wait $srun_pid
set -e
took=$(($(date +%s) - start))
[ -n "$victim" ] || { echo "rank 2's mtperf was never seen in node3"; exit 1; }
[ -s "$dir/killed.json" ] || { echo "no partial document"; exit 1; }
check "$dir/killed.json" --ranks 4 --transports socket --lost 2
[ $took -le 40 ] || { echo "the run took $took s after a kill (per-pair deadline 10 s)"; exit 1; }
echo "killed rank: the run ended in $took s, rank 2 named lost"
echo "slurm_fleet.sh: all passed"
