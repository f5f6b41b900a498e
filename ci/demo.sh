#!/usr/bin/env bash
# mtperf's main job on the embedded default: every workload on every transport usable here,
# against an in-process server on 127.0.0.1, printed side by side.
# Installs only what building and running mtperf need (ci/deps.sh build: no browser, clang,
# Slurm or tshark, which only the tests use) and builds the mtperf command alone: the test
# executables are most of a full build and the demo runs none of them (ci/test.sh builds them),
# eight sources of a library compiled as one (MTPERF_FAST, ci/build.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
bash ci/deps.sh build
installed=$((SECONDS - start))
MTPERF_DEPS=build MTPERF_FAST=ON bash ci/build.sh mtperf >/dev/null
took=$((SECONDS - start))
echo "ci/demo.sh: packages in $((installed / 60)) min $((installed % 60)) s, mtperf built in" \
  "$(((took - installed) / 60)) min $(((took - installed) % 60)) s" >&2
exec "${BUILD_DIR:-build}/cli/mtperf" suite "$@"
