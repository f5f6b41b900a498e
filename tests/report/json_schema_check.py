#!/usr/bin/env python3
"""Runs the real mtperf binary and validates its JSON against docs/json-schema/*.schema.json.

    json_schema_check.py --mtperf BINARY --schemas DIR run|testbed|suite|sweep

run      `mtperf run` of every workload (TCP, and UDP where valid) on loopback against the
         in-process server, one with iterations, one with interim intervals, one with
         --server-cpus; then the negative checks: documents with a required field removed, an
         unknown field added or a figure of the wrong type must fail, so the check cannot pass
         vacuously.
testbed  `mtperf run --testbed --adapters auto:2`, `mtperf sweep --testbed` (every row, 1..2
         adapters) and `mtperf sweep --testbed --mtu 1500,9000` between two namespaces. Needs
         root: skipped (exit 77) otherwise.
suite    `mtperf suite -l 0.1 --format json`: every case on every transport usable here.
compare  `mtperf compare -T socket,socket -w stream,rr -i 2`, then its negative checks.
sweep    `mtperf sweep --message-size` and `--flows` on loopback against the in-process server,
         then the sweep document's negative checks.

Beyond the schemas it checks what the schemas cannot say: rr splits its bytes by direction
(requests client to server, responses back), --server-cpus keeps its order, a multi-adapter run
names each flow's server. Exit 0 when everything validated, 1 with every violation listed, 77
with "SKIPPED: why" when a requirement is missing.
"""
import argparse
import copy
import json
import os
import shutil
import subprocess
import sys
import time

SKIP = 77

try:
    import jsonschema
except ImportError:
    print("SKIPPED: the Python module jsonschema is missing (Debian: python3-jsonschema; "
          "ci/deps.sh installs it)", file=sys.stderr)
    sys.exit(SKIP)

SCHEMAS = ("run.schema.json", "sweep.schema.json", "suite.schema.json", "compare.schema.json")
failures = []


def fail(what):
    failures.append(what)
    print("FAIL: " + what, file=sys.stderr)


def validators(schema_dir):
    """One validator per schema; suite.schema.json refers to run.schema.json by file name."""
    schemas = {}
    for name in SCHEMAS:
        with open(os.path.join(schema_dir, name)) as f:
            schemas[name] = json.load(f)
        jsonschema.Draft202012Validator.check_schema(schemas[name])
    try:  # jsonschema >= 4.18
        from referencing import Registry, Resource
        registry = Registry().with_resources(
            (name, Resource.from_contents(s)) for name, s in schemas.items())
        return {n.split(".")[0]: jsonschema.Draft202012Validator(s, registry=registry)
                for n, s in schemas.items()}
    except ImportError:  # Debian 12: jsonschema 4.10, references resolved from file URIs
        from pathlib import Path
        uri = {n: Path(schema_dir, n).resolve().as_uri() for n in schemas}
        store = {uri[n]: s for n, s in schemas.items()}
        return {n.split(".")[0]: jsonschema.Draft202012Validator(
            s, resolver=jsonschema.RefResolver(uri[n], s, store=store))
            for n, s in schemas.items()}


def errors_of(validator, doc):
    return ["%s: %s" % (e.json_path, e.message[:300]) for e in validator.iter_errors(doc)]


def check_valid(validator, doc, what):
    errs = errors_of(validator, doc)
    for e in errs[:20]:
        fail("%s: %s" % (what, e))
    if len(errs) > 20:
        fail("%s: ... %d more violations" % (what, len(errs) - 20))
    return not errs


def mtperf(binary, args, timeout=120):
    """Runs mtperf, returns its parsed JSON document (None after reporting a failure)."""
    cmd = [binary] + args
    started = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=timeout)
    took = time.monotonic() - started
    print("%5.1f s  rc %d  mtperf %s" % (took, p.returncode, " ".join(args)))
    if p.returncode != 0:
        fail("mtperf %s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr.strip()[-500:]))
        return None
    try:
        return json.loads(p.stdout)
    except ValueError as e:
        fail("mtperf %s: not JSON (%s): %s" % (" ".join(args), e, p.stdout[:200]))
        return None


def close(a, b, rel=0.01):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1.0)


def check_directions(doc, what, ratio=None, strict=True):
    """c2s + s2c = the whole; rr carries bytes both ways, in the ratio of its sizes. Not strict:
    a window too short to be sure that both directions moved (the suite's)."""
    s = doc["summary"]
    c2s, s2c, total = s["throughput_c2s_bps"], s["throughput_s2c_bps"], s["throughput_bps"]
    if not close(c2s + s2c, total):
        fail("%s: throughput_c2s_bps %g + throughput_s2c_bps %g != throughput_bps %g"
             % (what, c2s, s2c, total))
    workload = doc["test"]["workload"]
    moved = s["transactions"] > 0 if workload in ("rr", "crr") else workload == "bidir"
    if strict and moved and (c2s <= 0 or s2c <= 0):
        fail("%s: %s must carry bytes both ways: c2s %g, s2c %g" % (what, workload, c2s, s2c))
    if workload == "stream" and s2c != 0:
        fail("%s: a stream has nothing server to client: %g" % (what, s2c))
    if workload == "maerts" and c2s != 0:
        fail("%s: maerts has nothing client to server: %g" % (what, c2s))
    if ratio is not None and c2s > 0 and not (ratio / 1.5 <= s2c / c2s <= ratio * 1.5):
        fail("%s: s2c / c2s is %.2f, the response / request sizes %.2f" % (what, s2c / c2s, ratio))


def run_cases():
    base = ["-l", "1", "--warmup", "0.2", "--format", "json"]
    cases = [
        ("stream tcp", ["-w", "stream"], None),
        ("stream udp", ["-w", "stream", "-p", "udp", "--rate", "100M"], None),
        ("maerts tcp", ["-w", "maerts"], None),
        ("maerts udp", ["-w", "maerts", "-p", "udp", "--rate", "100M"], None),
        ("bidir tcp --verify", ["-w", "bidir", "-P", "2", "--verify"], None),
        ("bidir udp", ["-w", "bidir", "-p", "udp", "--rate", "100M"], None),
        ("rr tcp", ["-w", "rr", "-r", "100,1000"], 10.0),
        ("rr udp --verify", ["-w", "rr", "-p", "udp", "-r", "1024,2048", "--verify"], 2.0),
        ("crr tcp", ["-w", "crr", "-r", "100,300"], 3.0),
        ("stream tcp uring, intervals", ["-w", "stream", "-T", "uring", "--interval", "0.25"],
         None),
    ]
    return [(what, ["run"] + args + base, ratio) for what, args, ratio in cases]


def mode_run(binary, v):
    docs = {}
    for what, args, ratio in run_cases():
        doc = mtperf(binary, args)
        if doc is None:
            continue
        if check_valid(v["run"], doc, what):
            check_directions(doc, what, ratio)
            checked = (doc["summary"]["verify"] or {}).get("bytes_checked", 0)
            if "--verify" in args and not checked > 0:
                fail("%s: verify checked %r bytes" % (what, checked))
        docs[what] = doc
    # Iterations to a confidence target: every iteration a summary, the interval over them.
    doc = mtperf(binary, ["run", "-w", "rr", "-l", "0.5", "--warmup", "0.1", "-i", "3,3",
                          "-I", "95,50", "--format", "json"])
    if doc is not None and check_valid(v["run"], doc, "rr -i 3,3"):
        if len(doc["iterations"]) != 3 or not doc["confidence"]:
            fail("rr -i 3,3: %d iterations, confidence %r"
                 % (len(doc["iterations"]), doc["confidence"]))
        elif doc["confidence"]["iterations"] != 3 or doc["omni"]["CONFIDENCE_ITERATION"] != 3:
            fail("rr -i 3,3: confidence over %r iterations" % doc["confidence"]["iterations"])
    if (os.cpu_count() or 1) >= 2:
        doc = mtperf(binary, ["run", "-w", "stream", "-P", "2", "--server-cpus", "1,0",
                              "-l", "0.3", "--warmup", "0.1", "--format", "json"])
        if doc is not None and check_valid(v["run"], doc, "--server-cpus 1,0"):
            if doc["test"].get("server_cpus") != [1, 0]:
                fail("--server-cpus 1,0: test.server_cpus is %r" % doc["test"].get("server_cpus"))
    else:
        print("one CPU: --server-cpus 1,0 not tried")
    if "rr tcp" in docs and "stream tcp" in docs:
        negative_checks(v, docs["rr tcp"], docs["stream tcp"])
    else:
        fail("no rr or stream document to mutate: the negative checks did not run")


SWEEP_DOC = {
    "schema": 3,
    "sweep": {
        "transport": "socket", "hosts": "testbed a -> b (veth, 2 links)", "length_s": 1.0,
        "axis": {"name": "adapters", "values": [1, 2]},
        "rows": [{"name": "outbound", "label": "TCP outbound", "figure": "throughput_bps",
                  "service_demand_unit": "us/KB",
                  "cells": [{"at": 1, "adapters": 1, "throughput_bps": 1e9,
                             "transaction_rate": None, "local_cpu_percent": 50.0,
                             "remote_cpu_percent": None, "local_service_demand": 0.5,
                             "remote_service_demand": None, "jain_fairness_adapters": None,
                             "scaling_efficiency": 1.0, "errors": []}]}],
    },
}

FLOWS_DOC = {
    "schema": 3,
    "sweep": {
        "transport": "socket", "hosts": "this host -> an in-process server", "length_s": 1.0,
        "axis": {"name": "flows", "values": [1, 2]},
        "rows": [{"name": "tcp-rr", "label": "TCP rr 1 byte", "figure": "transaction_rate",
                  "service_demand_unit": "us/transaction", "peak_at": 2,
                  "cpu_saturated_at": None,
                  "cells": [{"at": n, "throughput_bps": None, "transaction_rate": 1000.0 * n,
                             "local_cpu_percent": 50.0, "remote_cpu_percent": 40.0,
                             "local_service_demand": 10.0, "remote_service_demand": 8.0,
                             "latency_mean_us": 20.0, "latency_p99_us": 40.0, "errors": []}
                            for n in (1, 2)]}],
    },
}


def without(doc, *path):
    d = copy.deepcopy(doc)
    node = d
    for key in path[:-1]:
        node = node[key]
    del node[path[-1]]
    return d


def with_value(doc, value, *path):
    d = copy.deepcopy(doc)
    node = d
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return d


def must_fail(v, bad):
    for name, doc, what in bad:
        if not errors_of(v[name], doc):
            fail("negative check passed validation: " + what)
    print("%d negative checks" % len(bad))


def negative_checks(v, rr, stream):
    """Each mutation breaks one documented rule; the schema must catch every one."""
    suite_ok = {"schema": 1, "suite": {"length_s": 1.0, "transports": ["socket"], "unusable": [],
                                       "cases": [{"label": "TCP rr", "args": ["-w", "rr"],
                                                  "results": [{"transport": "socket",
                                                               "status": "ok", "report": rr,
                                                               "message": None}]}]}}
    # The unmutated documents are valid: otherwise every "must fail" below passes vacuously.
    for name, doc in (("run", rr), ("run", stream), ("suite", suite_ok)):
        check_valid(v[name], doc, "negative-check base (%s)" % name)
    result = ("suite", "cases", 0, "results", 0)
    bad = [
        ("run", without(rr, "summary", "throughput_bps"), "summary.throughput_bps missing"),
        ("run", without(rr, "test", "workload"), "test.workload missing"),
        ("run", without(rr, "summary", "flows", 0, "latency_mean_us"),
         "flows[0].latency_mean_us missing"),
        ("run", without(rr, "schema"), "schema missing"),
        ("run", with_value(rr, 2, "schema"), "schema 2 in a run document"),
        ("run", with_value(rr, "42", "summary", "transactions"), "transactions a string"),
        ("run", with_value(rr, -5.0, "summary", "throughput_s2c_bps"), "negative throughput"),
        ("run", with_value(rr, 0, "summary", "bogus_field"), "an undocumented summary field"),
        ("run", with_value(rr, "x", "test", "bogus_field"), "an undocumented test field"),
        ("run", with_value(stream, 0.0, "summary", "flows", 0, "latency_mean_us"),
         "a stream flow with latency_mean_us 0.0 instead of null"),
        ("run", with_value(stream, {"count": 1, "mean": 1, "stddev": 0, "min": 1, "max": 1,
                                    "p50": 1, "p90": 1, "p99": 1, "p99_9": 1},
                           "summary", "latency_us"), "a stream with a latency"),
        ("run", with_value(rr, {"bytes_checked": 1, "bad_receives": 0, "bad_bytes": 0,
                                "first_mismatches": []}, "summary", "verify"),
         "verify figures without test.verify_seed"),
        ("run", with_value(rr, "sideways", "summary", "flows", 0, "direction"),
         "an unknown flow direction"),
        ("run", with_value(rr, {"bind": "irq", "adapters": [], "flows": [], "notes": []},
                           "placement"), "a placement without test.flow_servers"),
        ("suite", without(suite_ok, *result, "status"), "suite result without status"),
        ("suite", with_value(suite_ok, None, *result, "report"), "suite result ok without report"),
        ("suite", with_value(suite_ok, without(rr, "omni"), *result, "report"),
         "suite result whose report lacks omni"),
    ]
    must_fail(v, bad)


def sweep_negative_checks(v):
    """The sweep document's rules: each mutation breaks one, the schema must catch every one."""
    for doc in (SWEEP_DOC, FLOWS_DOC):
        check_valid(v["sweep"], doc, "negative-check base (sweep %s)"
                    % doc["sweep"]["axis"]["name"])
    cell = ("sweep", "rows", 0, "cells", 0)
    row = ("sweep", "rows", 0)
    message_size = with_value(without(SWEEP_DOC, *cell, "adapters"), "message_size",
                              "sweep", "axis", "name")
    for field in ("jain_fairness_adapters", "scaling_efficiency"):
        message_size = without(message_size, *cell, field)
    bad = [
        ("sweep", without(SWEEP_DOC, *cell, "throughput_bps"), "sweep cell without throughput_bps"),
        ("sweep", with_value(SWEEP_DOC, 1000.0, *cell, "value"),
         "sweep cell with the old Mbit/s value"),
        ("sweep", with_value(SWEEP_DOC, 1, "schema"), "sweep schema 1"),
        ("sweep", with_value(SWEEP_DOC, 2, "schema"), "sweep schema 2"),
        ("sweep", with_value(SWEEP_DOC, [1, 2], "sweep", "adapters"),
         "schema 2's sweep.adapters beside the axis"),
        ("sweep", with_value(SWEEP_DOC, 5.0, *cell, "transaction_rate"),
         "a throughput row's cell with a transaction rate"),
        ("sweep", without(SWEEP_DOC, *cell, "at"), "a cell without at"),
        ("sweep", without(SWEEP_DOC, *cell, "adapters"), "an adapters cell without adapters"),
        ("sweep", with_value(SWEEP_DOC, "packets", "sweep", "axis", "name"), "an unknown axis"),
        ("sweep", with_value(SWEEP_DOC, 10.0, *cell, "latency_mean_us"),
         "a throughput row's cell with a latency"),
        ("sweep", with_value(SWEEP_DOC, "us/transaction", *row, "service_demand_unit"),
         "a throughput row in us/transaction"),
        ("sweep", with_value(SWEEP_DOC, 1, *row, "peak_at"), "an adapters row with peak_at"),
        ("sweep", with_value(message_size, 1, *cell, "adapters"),
         "a message-size cell with adapters"),
        ("sweep", with_value(message_size, "transaction_rate", *row, "figure"),
         "a message-size sweep with an rr row"),
        ("sweep", without(FLOWS_DOC, *row, "peak_at"), "a flows row without peak_at"),
        ("sweep", without(FLOWS_DOC, *cell, "latency_p99_us"), "an rr cell without its p99"),
        ("sweep", with_value(FLOWS_DOC, 0.5, *cell, "jain_fairness_adapters"),
         "a flows cell with adapter fairness"),
        ("sweep", with_value(FLOWS_DOC, "x", *cell, "bogus_field"), "an undocumented cell field"),
    ]
    if errors_of(v["sweep"], message_size):
        fail("negative-check base (sweep message_size) does not validate: %s"
             % errors_of(v["sweep"], message_size)[:3])
    must_fail(v, bad)


def why_no_namespaces():
    if os.geteuid() != 0:
        return "the testbed cases need root (network namespaces)"
    if shutil.which("ip") is None:
        return "the testbed cases need the ip command (iproute2)"
    if shutil.which("unshare") and subprocess.run(["unshare", "--net", "true"]).returncode != 0:
        return "unshare --net failed: no network namespaces here (a container without " \
               "CAP_SYS_ADMIN?)"
    return ""


def mode_testbed(binary, v):
    why = why_no_namespaces()
    if why:
        print("SKIPPED: " + why, file=sys.stderr)
        sys.exit(SKIP)
    tag = "jsck%d" % os.getpid()
    doc = mtperf(binary, ["run", "--testbed", tag, "--adapters", "auto:2", "-w", "rr",
                          "-r", "100,1000", "-l", "0.5", "--warmup", "0.1", "--format", "json"])
    if doc is not None and check_valid(v["run"], doc, "run --testbed --adapters auto:2"):
        check_directions(doc, "run --testbed", 10.0)
        servers = doc["test"].get("flow_servers")
        remotes = [f["remote_address"] for f in doc["summary"]["flows"]]
        if not servers or servers != remotes:
            fail("run --testbed: test.flow_servers %r, the flows' remote addresses %r"
                 % (servers, remotes))
    doc = mtperf(binary, ["sweep", "--testbed", tag, "--adapters", "1..2", "-l", "0.3",
                          "--warmup", "0.1", "--format", "json"], timeout=240)
    if doc is not None and check_valid(v["sweep"], doc, "sweep --testbed --adapters 1..2"):
        rows = doc["sweep"]["rows"]
        if len(rows) != 6:
            fail("sweep: %d rows, not the six" % len(rows))
        for row in rows:
            for cell in row["cells"]:
                figure = cell[row["figure"]]
                if not cell["errors"] and not (figure and figure > 0):
                    fail("sweep %s with %d adapter(s): %s is %r"
                         % (row["name"], cell["at"], row["figure"], figure))
        # bit/s, not Mbit/s: a loopback veth carries more than 10^6 bits/s.
        outbound = [r for r in rows if r["name"] == "outbound"]
        if outbound and (outbound[0]["cells"][0]["throughput_bps"] or 0) < 1e6:
            fail("sweep outbound: %r bit/s is not in bit/s"
                 % outbound[0]["cells"][0]["throughput_bps"])


    doc = mtperf(binary, ["sweep", "--testbed", tag, "--mtu", "1500,9000", "-w", "stream",
                          "-w", "rr", "-l", "0.3", "--warmup", "0.1", "--format", "json"])
    if doc is not None and check_valid(v["sweep"], doc, "sweep --testbed --mtu 1500,9000"):
        check_measured(doc, "sweep --mtu")
        if doc["sweep"]["axis"] != {"name": "mtu", "values": [1500, 9000]}:
            fail("sweep --mtu: axis %r" % doc["sweep"]["axis"])


def check_measured(doc, what):
    """Every cell without errors measured its row's figure."""
    for row in doc["sweep"]["rows"]:
        for cell in row["cells"]:
            figure = cell[row["figure"]]
            if cell["errors"] or not (figure and figure > 0):
                fail("%s %s at %d: %s is %r, errors %r"
                     % (what, row["name"], cell["at"], row["figure"], figure, cell["errors"]))


def mode_sweep(binary, v):
    base = ["-l", "0.3", "--warmup", "0.1", "--format", "json"]
    doc = mtperf(binary, ["sweep", "--message-size", "8K,64K", "-w", "stream", "-w", "maerts",
                          "-w", "bidir"] + base)
    if doc is not None and check_valid(v["sweep"], doc, "sweep --message-size 8K,64K"):
        check_measured(doc, "sweep --message-size")
        if doc["sweep"]["axis"] != {"name": "message_size", "values": [8192, 65536]}:
            fail("sweep --message-size: axis %r" % doc["sweep"]["axis"])
    doc = mtperf(binary, ["sweep", "--flows", "1,2", "-w", "rr"] + base)
    if doc is not None and check_valid(v["sweep"], doc, "sweep --flows 1,2 -w rr"):
        check_measured(doc, "sweep --flows")
        row = doc["sweep"]["rows"][0]
        if row["peak_at"] not in (1, 2):
            fail("sweep --flows: peak_at %r" % row["peak_at"])
        if any(c["latency_mean_us"] is None for c in row["cells"]):
            fail("sweep --flows: an rr cell without its mean latency")
    sweep_negative_checks(v)


def mode_suite(binary, v):
    doc = mtperf(binary, ["suite", "-l", "0.1", "--format", "json"], timeout=240)
    if doc is None or not check_valid(v["suite"], doc, "suite -l 0.1"):
        return
    suite = doc["suite"]
    if "socket" not in suite["transports"]:
        fail("suite: socket is not among the transports: %r" % suite["transports"])
    ran = 0
    for case in suite["cases"]:
        got = [r["transport"] for r in case["results"]]
        if got != suite["transports"]:
            fail("suite case %s: results for %r, transports %r" % (case["label"], got,
                                                                    suite["transports"]))
        for r in case["results"]:
            if r["report"] is not None:
                ran += 1
                check_directions(r["report"], "suite %s on %s" % (case["label"], r["transport"]),
                                 strict=False)
    print("suite: %d cases, %d reports on %s" % (len(suite["cases"]), ran,
                                                 ", ".join(suite["transports"])))
    if len(suite["cases"]) < 8 or ran == 0:
        fail("suite: %d cases, %d reports" % (len(suite["cases"]), ran))


def mode_compare(binary, v):
    """`mtperf compare` of a configuration with itself: valid, every sample measured, a baseline
    and a verdict per cell; then the negative checks on the document it wrote."""
    doc = mtperf(binary, ["compare", "-T", "socket,socket", "-w", "stream,rr", "-i", "2",
                          "-l", "0.2", "--warmup", "0.1", "--format", "json"])
    if doc is None or not check_valid(v["compare"], doc, "compare -T socket,socket"):
        return
    c = doc["compare"]
    if [cfg["name"] for cfg in c["configurations"]] != ["socket", "socket#2"]:
        fail("compare: configurations %r" % c["configurations"])
    for row in c["rows"]:
        verdicts = [cell["verdict"] for cell in row["cells"]]
        if verdicts[0] != "baseline" or verdicts[1] not in ("no_difference", "faster", "slower"):
            fail("compare %s: verdicts %r" % (row["workload"], verdicts))
        for cell in row["cells"]:
            if cell["measured"] != 2 or not all(s["value"] > 0 for s in cell["samples"]):
                fail("compare %s on %s: samples %r"
                     % (row["workload"], cell["configuration"], cell["samples"]))
        if row["figure"] != ("transaction_rate" if row["workload"] == "rr" else "throughput_bps"):
            fail("compare %s: figure %r" % (row["workload"], row["figure"]))
    cell = ("compare", "rows", 0, "cells", 1)
    bad = [
        ("compare", without(doc, *cell, "p_value"), "compare cell without p_value"),
        ("compare", with_value(doc, "better", *cell, "verdict"), "an unknown verdict"),
        ("compare", with_value(doc, 1.5, *cell, "p_value"), "p above 1"),
        ("compare", with_value(doc, 1, "compare", "iterations"), "one iteration"),
        ("compare", with_value(doc, 95, "compare", "level"), "a level in percent"),
        ("compare", with_value(doc, "x", *cell, "bogus_field"), "an undocumented cell field"),
        ("compare", with_value(doc, "us/MB", "compare", "rows", 0, "service_demand_unit"),
         "an unknown service demand unit"),
    ]
    must_fail(v, bad)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mtperf", required=True, help="the mtperf binary")
    ap.add_argument("--schemas", required=True, help="docs/json-schema")
    ap.add_argument("mode", choices=["run", "testbed", "suite", "sweep", "compare"])
    a = ap.parse_args()
    v = validators(a.schemas)
    started = time.monotonic()
    {"run": lambda: mode_run(a.mtperf, v),
     "testbed": lambda: mode_testbed(a.mtperf, v),
     "suite": lambda: mode_suite(a.mtperf, v),
     "sweep": lambda: mode_sweep(a.mtperf, v),
     "compare": lambda: mode_compare(a.mtperf, v)}[a.mode]()
    print("%s: %d failure(s) in %.1f s (jsonschema %s)"
          % (a.mode, len(failures), time.monotonic() - started, jsonschema_version()))
    return 1 if failures else 0


def jsonschema_version():
    try:
        from importlib.metadata import version
        return version("jsonschema")
    except Exception:  # noqa: BLE001 - a version is only informative
        return "?"


if __name__ == "__main__":
    sys.exit(main())
