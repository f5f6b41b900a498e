#!/usr/bin/env python3
"""mtperf fleet --emit: the recipes as the tools that read them see them.

recipes_check.py MTPERF
- kubernetes: parsed as YAML; the headless Service and the Indexed Job checked field by field
  (selector = pod labels, completions = parallelism = size, subdomain = the Service, one pod per
  node, the rank-0 name, the key a file from the Secret); and every field of the Job that
  `kubectl create job --dry-run=client -o yaml` writes for the same image and command is there,
  of the same type (skipped with the reason where kubectl is missing);
- slurm, pdsh, mpirun: `bash -n` accepts them.
Exit 0 when all hold, 1 with one line per failure.
"""
import shutil
import subprocess
import sys

import yaml

mtperf = sys.argv[1]
bad = []


def emit(kind, *extra):
    return subprocess.run([mtperf, "fleet", "--emit", kind, "--size", "4", *extra, "-w", "stream",
                           "-T", "socket", "-l", "5"],
                          check=True, capture_output=True, text=True).stdout


def expect(cond, what):
    if not cond:
        bad.append(what)


docs = list(yaml.safe_load_all(emit("kubernetes", "--key-secret", "fleet-key",
                                    "--image", "registry.example/mtperf:1")))
kinds = {d["kind"]: d for d in docs}
expect(set(kinds) == {"Service", "Job"}, f"kinds {sorted(kinds)}")
svc, job = kinds["Service"], kinds["Job"]
name = job["metadata"]["name"]
expect(svc["metadata"]["name"] == name, "the Service and the Job share a name")
expect(svc["spec"]["clusterIP"] == "None", "the Service is headless")
spec = job["spec"]
tmpl = spec["template"]
expect(spec["completionMode"] == "Indexed", "an Indexed Job")
expect(spec["completions"] == 4 and spec["parallelism"] == 4, "completions = parallelism = 4")
expect(svc["spec"]["selector"].items() <= tmpl["metadata"]["labels"].items(),
       "the Service selects the Job's pods")
pod = tmpl["spec"]
expect(pod["subdomain"] == name, "the pods' subdomain is the Service")
expect(pod["hostNetwork"] is True, "host network")
expect(pod["restartPolicy"] == "Never", "restartPolicy Never")
anti = pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
expect(anti["topologyKey"] == "kubernetes.io/hostname", "one pod per node")
expect(anti["labelSelector"]["matchLabels"].items() <= tmpl["metadata"]["labels"].items(),
       "the anti-affinity matches the Job's own pods")
c = pod["containers"][0]
expect(c["image"] == "registry.example/mtperf:1", "the image")
cmd = c["command"]
expect(cmd[:6] == ["mtperf", "fleet", "--size", "4", "--coordinator", f"{name}-0.{name}"],
       f"the command names the size and rank 0: {cmd[:6]}")
expect(cmd[6:8] == ["--key-file", "/etc/mtperf-key/key"], "the key from a file")
expect("--key" not in cmd and not any("MTPERF_KEY" in a for a in cmd), "no key on argv")
expect("-w" in cmd and cmd[cmd.index("-w") + 1] == "stream", "the fleet's options follow")
mounts = {m["name"]: m for m in c.get("volumeMounts", [])}
expect(mounts.get("fleet-key", {}).get("mountPath") == "/etc/mtperf-key" and
       mounts["fleet-key"].get("readOnly") is True, "the key's volume mounted read-only")
vols = {v["name"]: v for v in pod.get("volumes", [])}
secret = vols.get("fleet-key", {}).get("secret", {})
expect(secret.get("secretName") == "fleet-key", "the key's volume is the Secret")
expect(secret.get("defaultMode") == 0o400, "the key file is the container user's alone")

kubectl = shutil.which("kubectl")
if kubectl:
    ref = yaml.safe_load(subprocess.run(
        [kubectl, "create", "job", name, "--image=registry.example/mtperf:1", "--dry-run=client",
         "-o", "yaml", "--", *cmd], check=True, capture_output=True, text=True).stdout)

    def paths(node, prefix=""):
        if isinstance(node, dict):
            for k, v in node.items():
                if k in ("creationTimestamp", "status", "resources"):
                    continue
                yield from paths(v, f"{prefix}.{k}")
        elif isinstance(node, list):
            for v in node[:1]:
                yield from paths(v, prefix + "[0]")
        else:
            yield prefix, type(node)

    def lookup(node, path):
        for part in path.strip(".").replace("[0]", ".[0]").split("."):
            if not part:
                continue
            node = node[0] if part == "[0]" else node[part]
        return node

    for path, t in paths(ref):
        try:
            mine = lookup(job, path)
        except (KeyError, IndexError, TypeError):
            if not path.endswith(".name") or "containers" not in path:
                bad.append(f"kubectl's Job has {path}, ours does not")
            continue
        expect(isinstance(mine, t), f"{path}: {type(mine).__name__}, kubectl's {t.__name__}")
    print(f"recipes_check: the Job has every field kubectl create job writes ({kubectl})")
else:
    print("recipes_check: kubectl not installed: the comparison with its Job was not made")

for kind in ("slurm", "pdsh", "mpirun"):
    text = emit(kind)
    r = subprocess.run(["bash", "-n"], input=text, capture_output=True, text=True)
    expect(r.returncode == 0, f"{kind}: bash -n: {r.stderr.strip()}")
for line in bad:
    print("recipes_check:", line)
if not bad:
    print("recipes_check: kubernetes, slurm, pdsh and mpirun recipes hold")
sys.exit(1 if bad else 0)
