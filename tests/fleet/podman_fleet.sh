#!/usr/bin/env bash
# mtperf fleet in four podman containers, each in its own network namespace, started as the
# Kubernetes recipe (`mtperf fleet --emit kubernetes`) starts its pods:
#   - the base image debian:12 is made by mmdebstrap from Debian's packages (this host's apt
#     archive) and imported; no registry is asked;
#   - the image is the Containerfile's, its runtime stage installing the libraries mtperf links,
#     around the mtperf under test (`--target prebuilt`), tagged as the recipe's default image;
#   - each rank is a container running the recipe's command with the recipe's image,
#     JOB_COMPLETION_INDEX, capabilities and key mount (read-only, mode 0400), in a network
#     namespace of its own on a bridge (as hostNetwork on its own node), rank 0 named as the
#     headless Service names it;
#   - rank 0's document: every pair measured, bytes equal both ways, the schema, the launcher
#     Kubernetes, the roster the four pods by name and address.
# Everything podman keeps (images, containers, layers) lives under a folder of this test, removed
# at the end with the namespaces and the bridge; only podman's blob-info cache, a database of
# layer digests it writes to /var/lib/containers/cache whatever its storage root, stays, as
# apt's caches do. Skipped (77) without root, podman, runc or mmdebstrap.
#   podman_fleet.sh MTPERF
set -euo pipefail
mtperf=${1:?usage: podman_fleet.sh MTPERF}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
[ "$(id -u)" -eq 0 ] || { echo "skipped: needs root (podman's namespaces, the bridge)"; exit 77; }
for tool in podman runc mmdebstrap; do
  command -v $tool >/dev/null ||
    { echo "skipped: $tool is not installed (apt-get install podman runc mmdebstrap)"; exit 77; }
done
start=$(date +%s)
step() { echo "podman_fleet.sh: $* ($(($(date +%s) - start)) s)"; }
size=4
bridge=mtpfpbr0
prefix=10.78.0
ns() { echo "mtpf-pod$1"; }
dir=$(mktemp -d /tmp/mtperf-podman.XXXXXX)
# Its own storage and state: nothing of the host's podman is read or changed. runc: crun does
# not run on a host whose cgroups mix v1 and v2. The limits: podman's defaults raise the open
# files' and processes' limits, which fails where root lacks CAP_SYS_RESOURCE; the ranks get
# this shell's limit of open files and 4,096 processes.
pm=(podman --root "$dir/storage" --runroot "$dir/run" --tmpdir "$dir/tmp" --runtime runc
    --cgroup-manager cgroupfs --events-backend file)
limits=(--ulimit "nofile=$(ulimit -Hn):$(ulimit -Hn)" --ulimit nproc=4096:4096)
cleanup() {
  "${pm[@]}" rm -af -t 0 >/dev/null 2>&1 || true
  "${pm[@]}" system reset -f >/dev/null 2>&1 || true
  for i in $(seq 1 $size); do ip netns del "$(ns "$i")" 2>/dev/null || true; done
  ip link del "$bridge" 2>/dev/null || true
  awk -v d="$dir/" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r |
    xargs -r umount -l || true
  rm -rf --one-file-system "$dir"
}
trap cleanup EXIT

echo "== the base image: mmdebstrap from Debian's packages, imported as debian:12"
sources=/etc/apt/sources.list.d/debian.sources
[ -f "$sources" ] || sources=/etc/apt/sources.list
mmdebstrap --quiet --variant=apt --format=tar bookworm - "$sources" |
  "${pm[@]}" import -q - docker.io/library/debian:12 >/dev/null
step "debian:12 made and imported"

echo "== the recipe: mtperf fleet --emit kubernetes"
"$mtperf" fleet --emit kubernetes --size $size -w stream -l 0.5 --warmup 0.1 --format json \
  -o /out/fleet.json >"$dir/recipe.yaml"
# What a pod gets from the Job: the image, the name, the command, the capabilities, the key's
# mount.
eval "$(python3 - "$dir/recipe.yaml" <<'PY'
import shlex, sys, yaml
job = next(d for d in yaml.safe_load_all(open(sys.argv[1])) if d["kind"] == "Job")
pod = job["spec"]["template"]["spec"]
c = pod["containers"][0]
mount = c["volumeMounts"][0]
assert pod["volumes"][0]["secret"]["defaultMode"] == 0o400, pod["volumes"]
print("image=" + shlex.quote(c["image"]))
print("name=" + shlex.quote(job["metadata"]["name"]))
print("command=(" + " ".join(shlex.quote(w) for w in c["command"]) + ")")
caps = c["securityContext"]["capabilities"]["add"]
print("caps=(" + " ".join(shlex.quote(x) for x in caps) + ")")
print("key_dir=" + shlex.quote(mount["mountPath"]))
PY
)"

echo "== the Containerfile's image around this mtperf (--target prebuilt), as the recipe names it"
mkdir -p "$dir/context" "$dir/tmp" "$dir/out"
cp "$mtperf" "$dir/context/mtperf"
# The runtime stage's apt-get reaches the archive through this host's network, as apt here does.
"${pm[@]}" build -q --pull=never --network host "${limits[@]}" --target prebuilt -t "$image" \
  -f "$root/Containerfile" "$dir/context" >/dev/null
want=$("$mtperf" --version)
got=$("${pm[@]}" run --rm --network none "${limits[@]}" "$image" mtperf --version)
[ "$got" = "$want" ] || { echo "the image's mtperf says '$got', not '$want'"; exit 1; }
step "$image built: its mtperf runs with the image's libraries ($got)"

echo "== four network namespaces on a bridge, one a pod"
ip link add "$bridge" type bridge
ip link set "$bridge" up
source "$root/ci/fleet/ns_on_bridge.sh"
for i in $(seq 1 $size); do ns_on_bridge "$(ns "$i")" "mtpfp$i" "$bridge" "$prefix.$i/24"; done

echo "== the recipe's Job, one container per index"
key="$dir/fleet.key"
(umask 077 && head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$key")
chmod 0400 "$key"  # the recipe's Secret: defaultMode 0400
# The headless Service's names: NAME-I.NAME for pod I.
hosts=()
for i in $(seq 0 $((size - 1))); do hosts+=(--add-host "$name-$i.$name:$prefix.$((i + 1))"); done
for i in $(seq 0 $((size - 1))); do
  "${pm[@]}" run -d --name "$name-$i" --hostname "$name-$i" \
    --network "ns:/run/netns/$(ns $((i + 1)))" "${hosts[@]}" "${limits[@]}" \
    "${caps[@]/#/--cap-add=}" -e JOB_COMPLETION_INDEX=$i \
    -v "$key:$key_dir/key:ro" -v "$dir/out:/out" "$image" "${command[@]}" >/dev/null
done
failed=0
for i in $(seq 0 $((size - 1))); do
  rc=$(timeout 120 "${pm[@]}" wait "$name-$i" || echo timeout)
  if [ "$rc" != 0 ]; then
    echo "pod $name-$i ended with $rc:"
    "${pm[@]}" logs "$name-$i" | tail -20
    failed=1
  fi
done
[ $failed -eq 0 ] || exit 1
"${pm[@]}" logs "$name-0" | tail -12
step "the fleet ran in $size containers"

python3 "$here/fleet_check.py" --schema "$root/docs/json-schema/fleet.schema.json" \
  "$dir/out/fleet.json" --ranks $size --transports socket
python3 - "$dir/out/fleet.json" "$name" "$prefix" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
name, prefix = sys.argv[2], sys.argv[3]
f = d["fleet"]
assert f["launcher"] == "Kubernetes", f["launcher"]
assert f["complete"] and not f["errors"], (f["complete"], f["errors"])
hosts = [m["host"] for m in d["roster"]]
assert hosts == [f"{name}-{i}" for i in range(4)], hosts
addrs = [m["address"] for m in d["roster"]]
assert addrs == [f"{prefix}.{i + 1}" for i in range(4)], addrs
assert len(d["results"]) == 12 and all(r["ok"] and r["throughput_bps"] > 0 for r in d["results"])
print("roster:", ", ".join(f"{m['host']} {m['address']}" for m in d["roster"]))
PY
step "ok"
