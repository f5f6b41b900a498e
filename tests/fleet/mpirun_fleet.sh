#!/usr/bin/env bash
# mtperf fleet under Open MPI's mpirun on this host (the ranks meet through a rendezvous file):
# 4 ranks all-pairs over socket and uring, 16 ranks with shift, and a pair file. Each document
# is checked by fleet_check.py (schema, every planned cell filled, bytes equal each way).
# Skipped (77) where Open MPI is not installed.
set -euo pipefail
mtperf=${1:?usage: mpirun_fleet.sh MTPERF}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
command -v mpirun >/dev/null || { echo "skipped: mpirun is not installed (openmpi-bin)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
check() { python3 "$here/fleet_check.py" --schema "$root/docs/json-schema/fleet.schema.json" "$@"; }
fleet() {
  local np=$1
  shift
  timeout 240 mpirun --oversubscribe -np "$np" "$mtperf" fleet --rendezvous "$tmp/rendezvous" \
    --bind 127.0.0.1 --port 0 --join-timeout 30 "$@"
}

echo "== 4 ranks, all-pairs, socket and uring"
fleet 4 -w stream -T socket,uring -l 0.5 --warmup 0.2 --format json -o "$tmp/all.json"
# Start spread at most half the window: the pairs of a round overlap for most of what they
# measure; wrong clock offsets would show as seconds. The spread is of the data starts (each
# client's flows connected, after its control handshake), put on rank 0's clock with offsets
# measured after the step: ranks sharing this host's CPUs reach 160 ms with every CPU busy.
check "$tmp/all.json" --ranks 4 --transports socket,uring --max-spread-ms 250
[ ! -e "$tmp/rendezvous" ] || { echo "the rendezvous file was left behind"; exit 1; }

echo "== 16 ranks, shift (every rank sends at once)"
# 16 handshakes at once on this host's cores: 65-85 ms measured beside a compiler; the window
# is long enough that half of it leaves room for twice that load.
fleet 16 -w stream --pattern shift -l 0.5 --warmup 0.1 -m 16K --format json -o "$tmp/shift.json"
check "$tmp/shift.json" --ranks 16 --transports socket --max-spread-ms 250

echo "== a pair file, rr, checks and JUnit"
printf '# round a b\n1 0 1\n1 2 3\n2 3 0\n' >"$tmp/pairs"
fleet 4 -w rr --pairs "$tmp/pairs" -l 0.3 --warmup 0.1 --format json -o "$tmp/pairs.json" \
  --check 'pair.transaction_rate>=1'
python3 - "$tmp/pairs.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
got = sorted((r["src"], r["dst"]) for r in d["results"])
assert got == [(0, 1), (2, 3), (3, 0)], got
assert all(r["ok"] and r["transaction_rate"] > 0 and r["p99_us"] for r in d["results"]), d["results"]
assert all(c["passed"] for c in d["checks"]), d["checks"]
print("pairs file: 3 pairs as written, all measured and passed")
PY
set +e
fleet 4 -w rr --pairs "$tmp/pairs" -l 0.3 --warmup 0.1 --format junit -o "$tmp/j.xml" \
  --check 'pair.transaction_rate>=1G'
rc=$?
set -e
[ $rc -eq 3 ] || { echo "a failed check exits $rc, expected 3"; exit 1; }
grep -q 'failures="3"' "$tmp/j.xml" || { echo "JUnit does not count 3 failures"; cat "$tmp/j.xml"; exit 1; }
echo "mpirun_fleet.sh: all passed"
