#!/usr/bin/env bash
# mtperf fleet under a real Slurm cluster on this host (ci/fleet/slurm_cluster.sh: slurmctld,
# one slurmd per node, each node in its own namespaces; 8 nodes): srun -N4 all-pairs over socket
# and uring; srun -N8 with --groups slurm (leaf1: node1-4, leaf2: node5-8) with within-group and
# across-groups, the pairs run matching the leaf switches; within-group with node8's veth
# throttled to a tenth of --line-rate, named the suspect with its leaf switch, its pairs retested
# twice; across-groups under an unreachable line, retested twice, four pairs of eight hosts at
# once; then strangers in the join window (one without the key, one of
# another job with it, 50 connections that say nothing): refused,
# named, the fleet's result unchanged; a forged coordinator on node1's fleet port before rank 0
# (no challenge; a ROUND toward a port outside the roster; a modified frame; a replayed frame):
# each rank refuses it, named, and no traffic reaches the port; a rank stalled mid-RESULTS: lost
# at the deadline, the other pairs measured; then a rank SIGKILLed mid-run: named, its cells
# empty, the partial document written, exit 1, bounded. Skipped (77) without root or Slurm.
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
out=$(bash "$cluster" up "$dir" 8)
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
# The start spread bound: a quarter of the 2 s window, so a round's pairs measure the same moment
# for three quarters of it at least. Wrong clock offsets show as seconds; a loaded host's late
# wake-ups as tens of ms (112 ms seen with every CPU busy).
check "$dir/all.json" --ranks 4 --transports socket,uring --max-spread-ms 500
python3 - "$dir/all.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
hosts = [m["host"] for m in d["roster"]]
# Four nodes of the cluster, rank i on the step's i-th node: Slurm picks either leaf switch's four.
assert hosts in (["node1", "node2", "node3", "node4"], ["node5", "node6", "node7", "node8"]), hosts
assert d["fleet"]["launcher"] == "Slurm", d["fleet"]["launcher"]
print("roster:", ", ".join(f"{m['host']} {m['address']}" for m in d["roster"]))
PY

echo "== --groups slurm over 8 nodes and Slurm's two leaf switches (leaf1: node1-4, leaf2: node5-8)"
groups_start=$(date +%s.%N)
timeout 10 scontrol show topology
# Short windows: the pairs' figures are not what is checked here, the pairs are.
short=(-w stream -l 0.3 --warmup 0.1)
# within-group, node8's veth throttled to a tenth of --line-rate, --retest 2: each leaf's pairs;
# node8 named the suspect with its leaf switch; its pairs (failing) retried twice.
# Both directions: node8's own egress and the bridge port's towards it.
tc qdisc add dev mtpfv8 root tbf rate 100mbit burst 64kb latency 100ms
tc -n mtpf-node8 qdisc add dev eth0 root tbf rate 100mbit burst 64kb latency 100ms
# failing_fleet PATTERN LINE-RATE: srun -N8, --groups slurm, the pattern, every pair checked
# against half the line, --retest 2, into $dir/PATTERN.json; the status in $rc (3: a check failed).
failing_fleet() {
  set +e
  timeout 180 srun -N8 --ntasks-per-node=1 "$mtperf" fleet --key-file "$key" "${short[@]}" \
    --groups slurm --pattern "$1" --line-rate "$2" --check 'pair.throughput>=0.5*line' \
    --retest 2 --format json -o "$dir/$1.json"
  rc=$?
  set -e
}
failing_fleet within-group 1G
tc qdisc del dev mtpfv8 root
tc -n mtpf-node8 qdisc del dev eth0 root
[ $rc -eq 3 ] || { echo "the throttled fleet ended with $rc, not 3 (a check failed)"; exit 1; }
# across-groups, every pair under a line it cannot reach (--line-rate 1T), --retest 2: the pairs
# across the spine; each retest pass reruns them all, the four pairs of eight hosts side by side.
failing_fleet across-groups 1T
[ $rc -eq 3 ] || { echo "the across-groups fleet ended with $rc, not 3 (a check failed)"; exit 1; }
python3 - "$dir" "$root/docs/json-schema/fleet.schema.json" <<'PY'
import json, sys, jsonschema
dir, schema = sys.argv[1], json.load(open(sys.argv[2]))
leaf1, leaf2 = range(0, 4), range(4, 8)
# within-group: each leaf's pairs, both ways; across-groups (two groups of 4, round 0 of the
# groups' circle): a[j] <-> b[j], both ways.
want = {"within-group": {(a, b) for g in (leaf1, leaf2) for a in g for b in g if a != b},
        "across-groups": {p for j in range(4) for p in ((j, 4 + j), (4 + j, j))}}
for pattern, pairs in want.items():
    d = json.load(open(f"{dir}/{pattern}.json"))
    jsonschema.validate(d, schema)
    groups = [m.get("group") for m in d["roster"]]
    assert groups == ["leaf1"] * 4 + ["leaf2"] * 4, groups
    assert [m["host"] for m in d["roster"]] == [f"node{i}" for i in range(1, 9)], d["roster"]
    assert d["fleet"]["groups_from"] == "slurm", d["fleet"]["groups_from"]
    ran = {(r["src"], r["dst"]) for r in d["results"]}
    assert ran == pairs and len(d["results"]) == len(pairs), (pattern, sorted(ran))
    assert all(r["ok"] for r in d["results"]), [r.get("error") for r in d["results"]]
    g = d["matrices"]["socket"]["throughput"]["groups"]
    assert g["names"] == ["leaf1", "leaf2"], g
    filled = {(a, b) for a in range(2) for b in range(2) if g["cells"][a][b] is not None}
    assert filled == ({(0, 0), (1, 1)} if pattern == "within-group" else {(0, 1), (1, 0)}), g
    print(f"{pattern}: {len(ran)} pairs, group cells {sorted(filled)}")

# The throttled node: the suspect, with its leaf switch; the checks fail exactly its pairs, and
# --retest 2 tried those three times, the others once.
d = json.load(open(f"{dir}/within-group.json"))
named = d["suspects"]["named"]
assert named and named[0]["host"] == "node8" and named[0]["group"] == "leaf2", d["suspects"]
for c in d["checks"]:
    r = d["results"][c["result"]]
    assert c["passed"] == (7 not in (r["src"], r["dst"])), (r["src"], r["dst"], c)
for r in d["results"]:
    assert r["tries"] == (3 if 7 in (r["src"], r["dst"]) else 1), r
print("suspect:", named[0]["evidence"])

# --retest 2 in parallel: every pair tried three times; a result is its last try's, of the step
# that ran it: the eight pairs in two steps of four, each of eight different hosts.
d = json.load(open(f"{dir}/across-groups.json"))
assert all(r["tries"] == 3 for r in d["results"]), [r["tries"] for r in d["results"]]
last = {}
for r in d["results"]:
    last.setdefault(r["step"], []).append((r["src"], r["dst"]))
assert sorted(len(p) for p in last.values()) == [4, 4], last
for pairs in last.values():
    assert len({x for p in pairs for x in p}) == 8, pairs
print("the last retest's steps:", sorted(last.items()))
PY
echo "groups, the throttled node and the retests: $(echo "$(date +%s.%N) - $groups_start" | bc) s"

echo "== strangers in the join window: a wrong key, a rank of another job with the right one, 50 idle connections"
# They wait in node4, outside the job, retrying their JOIN (at most 3 s apart) until the
# coordinator on node1 listens; the job's own ranks 1 and 2 start 8 s after rank 0, so both
# strangers have asked before them.
wrong="$dir/wrong.key"
(umask 077 && head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$wrong")
in_node4=(nsenter --net=/run/netns/mtpf-node4)
set +e
"${in_node4[@]}" timeout 90 "$mtperf" fleet --rank 1 --size 3 --coordinator 10.77.0.1 \
  --key-file "$wrong" --join-timeout 30 -w stream -l 1 >"$dir/stranger-key.out" 2>&1 &
stranger_key=$!
"${in_node4[@]}" env SLURM_PROCID=2 SLURM_NTASKS=3 SLURM_JOB_ID=999999 SLURM_STEP_NODELIST=node1 \
  timeout 90 "$mtperf" fleet --coordinator 10.77.0.1 --key-file "$key" --join-timeout 30 \
  -w stream -l 1 >"$dir/stranger-job.out" 2>&1 &
stranger_job=$!
# And 50 connections that say nothing, held open from node4 through the join window.
"${in_node4[@]}" timeout 60 python3 - >"$dir/idle.out" 2>&1 <<'PY' &
import socket, time
held, deadline = [], time.time() + 20
while len(held) < 50 and time.time() < deadline:
    s = socket.socket()
    s.settimeout(1)
    try:
        s.connect(("10.77.0.1", 12866))
        held.append(s)
    except OSError:
        s.close()
        time.sleep(0.1)
print("idle connections held:", len(held), flush=True)
time.sleep(12)
PY
idle=$!
timeout 240 srun -N3 -w node1,node2,node3 --ntasks-per-node=1 bash -c \
  '[ "$SLURM_PROCID" = 0 ] || sleep 8; exec "$@"' rank "$mtperf" fleet --key-file "$key" \
  -w stream -l 1 --format json -o "$dir/strangers.json" 2>"$dir/strangers.err"
rc=$?
wait $idle
wait $stranger_key
rc_key=$?
wait $stranger_job
rc_job=$?
set -e
[ $rc -eq 0 ] || { echo "the fleet with strangers ended with $rc"; cat "$dir/strangers.err"; exit 1; }
check "$dir/strangers.json" --ranks 3 --transports socket
python3 - "$dir/strangers.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
hosts = [m["host"] for m in d["roster"]]
assert hosts == ["node1", "node2", "node3"], hosts
errors = "\n".join(d["fleet"]["errors"])
assert "connecting from 10.77.0.4 was refused: authentication failed" in errors, errors
assert "is of job '999999'" in errors, errors
print("refused and named:", "; ".join(e for e in d["fleet"]["errors"] if "10.77.0.4" in e or "999999" in e))
PY
grep -q "idle connections held: 50" "$dir/idle.out" ||
  { echo "the 50 idle connections were not all held in the join window:"; cat "$dir/idle.out"; exit 1; }
[ $rc_key -ne 0 ] && grep -q "authentication failed\|refused" "$dir/stranger-key.out" ||
  { echo "the stranger with a wrong key ended with $rc_key:"; cat "$dir/stranger-key.out"; exit 1; }
[ $rc_job -ne 0 ] && grep -q "999999" "$dir/stranger-job.out" ||
  { echo "the rank of another job ended with $rc_job:"; cat "$dir/stranger-job.out"; exit 1; }

echo "== a forged coordinator on node1's fleet port before rank 0: each rank refuses it, named"
# tests/fleet/fleet_impostor.py, written from the wire description alone. node2's rank gets no
# challenge (a downgrade); node3's a keyed coordinator's ROUND toward a port outside the roster,
# then a FINISH modified on the path; node4's a sealed CLOCK replayed.
in_node1=(nsenter --net=/run/netns/mtpf-node1)
"${in_node1[@]}" timeout 60 python3 "$here/fleet_impostor.py" coordinator --port 12866 \
  --key-file "$key" --target-port 12999 --seconds 40 \
  --plan 10.77.0.2=no-challenge,10.77.0.3=outside-roster,10.77.0.4=replay >"$dir/impostor.out" 2>&1 &
impostor=$!
for _ in $(seq 50); do grep -q listening "$dir/impostor.out" && break; sleep 0.1; done
set +e
timeout 60 srun -N4 -l --ntasks-per-node=1 "$mtperf" fleet --key-file "$key" -w stream -l 1 \
  --join-timeout 20 >"$dir/forged.out" 2>&1
rc=$?
wait $impostor
set -e
cat "$dir/impostor.out"
[ $rc -ne 0 ] || { echo "the fleet under a forged coordinator exited 0"; cat "$dir/forged.out"; exit 1; }
expect() {
  grep -q -- "$1" "$2" || { echo "missing \"$1\" in $2:"; cat "$dir/forged.out" "$dir/impostor.out"; exit 1; }
}
expect "^0: .*12866" "$dir/forged.out"
expect "^1: .*does not ask for the key.*refusing to join unauthenticated" "$dir/forged.out"
expect "^2: .*refused by rank 2: server 10.77.0.1:12999 is not rank 0's" "$dir/forged.out"
expect "^2: .*FINISH frame failed its integrity check" "$dir/forged.out"
expect "^3: .*CLOCK frame failed its integrity check" "$dir/forged.out"
expect "10.77.0.2 no-challenge: the rank hung up without a JOIN" "$dir/impostor.out"
expect "10.77.0.3 outside-roster: rank 2 refused 2 of 2 runs; it hung up on the modified FINISH" "$dir/impostor.out"
expect "10.77.0.4 replay: rank 3 hung up on the replayed CLOCK" "$dir/impostor.out"
expect "target connections: 0" "$dir/impostor.out"
grep -E "^[0-3]: .*(12866|refus|integrity)" "$dir/forged.out" | cut -c1-200

echo "== rank 2 stalled mid-RESULTS (on its path, half the frame): lost at the deadline, the rest measured"
start=$(date +%s)
set +e
timeout 120 srun -N3 -w node1,node2,node3 --ntasks-per-node=1 bash -c '
  if [ "$SLURM_PROCID" = 2 ]; then
    python3 "$1" stall --listen 12998 --to 10.77.0.1:12866 --seconds 40 >"$2" 2>&1 &
    sleep 0.5
    set -- "${@:3}" --coordinator "$(hostname):12998"
  else
    set -- "${@:3}"
  fi
  exec "$@"' rank "$here/fleet_impostor.py" "$dir/stall.out" "$mtperf" fleet --key-file "$key" \
  -w stream --pattern shift -l 1 --pair-timeout 4 --format json -o "$dir/stalled.json" \
  2>"$dir/stalled.err"
rc=$?
set -e
took=$(($(date +%s) - start))
cat "$dir/stall.out"
[ $rc -eq 1 ] || { echo "the fleet with a stalled rank ended with $rc, not 1"; cat "$dir/stalled.err"; exit 1; }
check "$dir/stalled.json" --ranks 3 --transports socket --lost 2
grep -q "no RESULTS of step" "$dir/stalled.json" ||
  { echo "rank 2 is not named for its RESULTS"; cat "$dir/stalled.err"; exit 1; }
grep -q "the coordinator hung up" "$dir/stall.out" ||
  { echo "the coordinator kept the stalled connection"; exit 1; }
[ $took -le 40 ] || { echo "the run took $took s with a stalled rank (per-pair deadline 4 s)"; exit 1; }
echo "stalled rank: the run ended in $took s, rank 2 named lost"

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
