#!/usr/bin/env bash
# mtperf's main job on the embedded default: every workload on every transport usable here,
# against an in-process server on 127.0.0.1, printed side by side.
# Builds the mtperf command alone: the test executables are most of a full build and the demo
# runs none of them (ci/test.sh builds them).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
bash ci/build.sh mtperf >/dev/null
took=$((SECONDS - start))
echo "ci/demo.sh: mtperf built in $((took / 60)) min $((took % 60)) s" >&2
exec "${BUILD_DIR:-build}/cli/mtperf" suite "$@"
