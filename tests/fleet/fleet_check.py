#!/usr/bin/env python3
"""Checks a fleet JSON document: its schema, and that every cell the plan claims is filled.

fleet_check.py DOC --ranks N --transports a,b [--cells all|off-diagonal] [--max-spread-ms MS]
               [--lost RANK] [--schema FILE]
Exit 0 when it holds; 1 with one line per failure.
"""
import argparse
import json
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("doc")
    ap.add_argument("--ranks", type=int, required=True)
    ap.add_argument("--transports", required=True)
    ap.add_argument("--figure", default="throughput")
    ap.add_argument("--max-spread-ms", type=float)
    ap.add_argument("--lost", type=int, help="this rank was killed: its later pairs failed, with the reason")
    ap.add_argument("--schema")
    a = ap.parse_args()
    d = json.load(open(a.doc))
    f = d["fleet"]
    bad = []
    if a.schema:
        import jsonschema
        try:
            jsonschema.validate(d, json.load(open(a.schema)))
        except jsonschema.ValidationError as e:
            bad.append(f"schema: {e.message} at {list(e.absolute_path)}")
    if f["size"] != a.ranks:
        bad.append(f"size {f['size']}, expected {a.ranks}")
    for t in a.transports.split(","):
        cells = d["matrices"][t][a.figure]["cells"]
        if len(cells) != a.ranks or any(len(r) != a.ranks for r in cells):
            bad.append(f"{t}: not a {a.ranks}x{a.ranks} matrix")
            continue
        for i in range(a.ranks):
            for j in range(a.ranks):
                if a.lost in (i, j) and i != j:
                    continue  # measured before it died, or empty with the reason
                want = i != j
                if (cells[i][j] is not None) != want:
                    bad.append(f"{t}: cell [{i}][{j}] is {cells[i][j]}, expected "
                               f"{'a figure' if want else 'empty'}")
    for r in d["results"]:
        if not r["ok"]:
            if a.lost is None or a.lost not in (r["src"], r["dst"]):
                bad.append(f"pair {r['src']}->{r['dst']} failed: {r.get('error')}")
            elif not r.get("error"):
                bad.append(f"pair {r['src']}->{r['dst']} failed without a reason")
            continue
        if r["server_counted"] and (r["c2s_sent"] != r["c2s_received"] or
                                    r["s2c_sent"] != r["s2c_received"]):
            bad.append(f"pair {r['src']}->{r['dst']}: bytes sent {r['c2s_sent']}/"
                       f"{r['s2c_sent']} received {r['c2s_received']}/{r['s2c_received']}")
    if a.lost is not None:
        if not any(not r["ok"] and a.lost in (r["src"], r["dst"]) for r in d["results"]):
            bad.append(f"no pair of rank {a.lost} failed")
        if not d["roster"][a.lost].get("lost"):
            bad.append(f"rank {a.lost} is not marked lost")
        if not any("lost" in e for e in f["errors"]):
            bad.append("no error names the lost rank")
    spread = f.get("start_spread_max_ns")
    if a.max_spread_ms is not None:
        if spread is None:
            bad.append("no start spread reported")
        elif spread / 1e6 > a.max_spread_ms:
            bad.append(f"start spread {spread / 1e6:.2f} ms > {a.max_spread_ms} ms")
    for line in bad:
        print("fleet_check:", line)
    if not bad:
        ms = "n/a" if spread is None else f"{spread / 1e6:.2f} ms"
        print(f"fleet_check: {a.doc}: {len(d['results'])} pairs as planned, start spread {ms}")
    return 1 if bad else 0


sys.exit(main())
