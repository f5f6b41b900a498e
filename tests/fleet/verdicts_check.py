#!/usr/bin/env python3
"""Verdicts against the line, retests and suspects, baselines and compare, end to end on loopback.

verdicts_check.py MTPERF SCHEMA
Two ranks of `mtperf fleet` on 127.0.0.1 (a rendezvous file in a temporary folder): a check
against a line no loopback pair reaches (--line-rate 1000T) fails every pair, each retested
twice, the suspect analysis present; then a run judged against the first as its baseline, and
`mtperf compare` of the two, drawn by `mtperf report` as a ratio heatmap. Every document validates against docs/json-schema/fleet.schema.json;
`mtperf report` draws the suspects. Exit 0 when it all holds; 1 with one line per failure.
"""
import json
import os
import subprocess
import sys
import tempfile


def fleet(mtperf, tmp, name, extra):
    rv = os.path.join(tmp, name + ".rv")
    out = os.path.join(tmp, name + ".json")
    common = ["fleet", "--size", "2", "--rendezvous", rv, "--port", "0", "--bind", "127.0.0.1",
              "-w", "stream", "-l", "0.3", "--warmup", "0.1", "--join-timeout", "30"] + extra
    r0 = subprocess.Popen([mtperf] + common + ["--rank", "0", "--format", "json", "-o", out],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    r1 = subprocess.Popen([mtperf] + common + ["--rank", "1"], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
    _, e0 = r0.communicate(timeout=120)
    _, e1 = r1.communicate(timeout=120)
    return r0.returncode, r1.returncode, out, e0 + e1


def main():
    mtperf, schema_file = sys.argv[1], sys.argv[2]
    try:
        import jsonschema
    except ImportError:
        print("SKIPPED: no python3 jsonschema (ci/deps.sh installs python3-jsonschema)")
        return 77
    schema = json.load(open(schema_file))
    bad = []

    def valid(doc, what):
        for e in jsonschema.Draft202012Validator(schema).iter_errors(doc):
            bad.append(f"{what}: schema: {e.message} at {list(e.absolute_path)}")

    with tempfile.TemporaryDirectory() as tmp:
        rc0, rc1, out, err = fleet(mtperf, tmp, "line", [
            "--check", "pair.throughput>=0.9*line", "--line-rate", "1000T", "--retest", "2"])
        if rc0 != 3 or rc1 != 0:
            bad.append(f"line: exit {rc0}/{rc1}, expected 3 (a check failed) and 0: {err}")
        doc = json.load(open(out))
        valid(doc, "line")
        if doc["fleet"]["line_rate_bps"] != 1e15:
            bad.append(f"line: fleet.line_rate_bps {doc['fleet']['line_rate_bps']}")
        for r in doc["results"]:
            pair = f"{r['src']}->{r['dst']}"
            if r["line_source"] != "--line-rate" or r["line_bps"] != 1e15:
                bad.append(f"line: {pair}: line {r['line_bps']} from {r['line_source']}")
            if r["tries"] != 3:
                bad.append(f"line: {pair}: {r['tries']} tries, expected 3 (--retest 2)")
        for m in doc["roster"]:
            if m["adapter"] != "lo" or m["speed_bps"] is not None:
                bad.append(f"line: rank {m['rank']}: adapter {m['adapter']} {m['speed_bps']}")
        if not all(not c["passed"] for c in doc["checks"]):
            bad.append("line: a pair passed 0.9 of a petabit")
        s = doc.get("suspects")
        if not s or s["failing"] != 2 or s["pairs"] != 2:
            bad.append(f"line: suspects {s}")
        html = os.path.join(tmp, "line.html")
        r = subprocess.run([mtperf, "report", out, "-o", html], capture_output=True, text=True)
        if r.returncode != 0 or "suspects" not in open(html).read():
            bad.append(f"report: exit {r.returncode}, suspects drawn: {r.stderr}")

        rc0, rc1, out2, err = fleet(mtperf, tmp, "base", [
            "--check", "pair.throughput>=0.001*baseline", "--baseline", out])
        if rc0 != 0 or rc1 != 0:
            bad.append(f"baseline: exit {rc0}/{rc1}, expected 0: {err}")
        doc2 = json.load(open(out2))
        valid(doc2, "baseline")
        if not all(c["passed"] for c in doc2["checks"]):
            bad.append(f"baseline: {doc2['checks']}")
        r = subprocess.run([mtperf, "compare", out, out2, "--format", "json"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            bad.append(f"compare: exit {r.returncode}: {r.stderr}")
        else:
            c = json.loads(r.stdout)["fleet_compare"][0]
            if c["b_rank"] != [0, 1] or c["ratio"][0][1] is None:
                bad.append(f"compare: {c}")
            cmp_json = os.path.join(tmp, "compare.json")
            cmp_html = os.path.join(tmp, "compare.html")
            with open(cmp_json, "w") as f:
                f.write(r.stdout)
            r = subprocess.run([mtperf, "report", cmp_json, "-o", cmp_html], capture_output=True,
                               text=True)
            page = open(cmp_html).read() if r.returncode == 0 else ""
            if "<svg" not in page or "pairs that moved" not in page:
                bad.append(f"report of the compare: exit {r.returncode}: {r.stderr}")
        r = subprocess.run([mtperf, "fleet", "--rank", "0", "--size", "2", "--check",
                            "pair.throughput>=0.9*baseline"], capture_output=True, text=True)
        if r.returncode != 2 or "--baseline" not in r.stderr:
            bad.append(f"a baseline check without --baseline: exit {r.returncode}: {r.stderr}")
        r = subprocess.run([mtperf, "fleet", "--rank", "0", "--size", "2", "--line-rate", "fast"],
                           capture_output=True, text=True)
        if r.returncode != 2 or "--line-rate" not in r.stderr:
            bad.append(f"--line-rate fast: exit {r.returncode}: {r.stderr}")
    for line in bad:
        print("verdicts_check:", line)
    if not bad:
        print("verdicts_check: line, retests, suspects, baseline and compare hold")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
