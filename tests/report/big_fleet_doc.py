#!/usr/bin/env python3
"""A synthetic all-pairs fleet document of N ranks, the fields `mtperf report` reads.

Ranks in groups of G (leaf0, leaf1, ...), every pair at 9 to 9.9 Gbit/s, rank SLOW (default: two
thirds of the way) at 2 Gbit/s both ways, pair 1->3 failed, the group matrix as `mtperf fleet
--format json` writes it. For html_render_check.py and bench/fleet_html.sh:

    big_fleet_doc.py N G OUT.json [SLOW]
"""
import json
import sys


def big_fleet_doc(n, group, slow=None):
    slow = n * 2 // 3 if slow is None else slow
    cells = [[None if r == c or (r, c) == (1, 3) else
              2e9 if slow in (r, c) else (9 + 0.1 * ((r * 7 + c * 3) % 10)) * 1e9
              for c in range(n)] for r in range(n)]
    k = (n + group - 1) // group
    return {
        "schema": 1,
        "fleet": {"size": n, "launcher": "Slurm", "workload": "stream", "transports": ["socket"],
                  "plan": {"pattern": "all-pairs", "concurrency": "round",
                           "ordered_pairs": n * (n - 1)},
                  "start_spread_max_ns": 5e6, "errors": []},
        "roster": [{"rank": r, "host": f"node{r}", "group": f"leaf{r // group}"}
                   for r in range(n)],
        "results": [{"transport": 0, "src": 1, "dst": 3, "ok": False, "error": "refused"}],
        "matrices": {"socket": {"throughput": {
            "unit": "bits/s", "cells": cells, "rows": [], "columns": [],
            "groups": {"names": [f"leaf{g}" for g in range(k)],
                       "cells": [[9.4e9] * k for _ in range(k)],
                       "pairs": [[group * group] * k for _ in range(k)]}}}},
    }


if __name__ == "__main__":
    n, group, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    slow = int(sys.argv[4]) if len(sys.argv) > 4 else None
    with open(path, "w") as f:
        json.dump(big_fleet_doc(n, group, slow), f)
