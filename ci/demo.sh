#!/usr/bin/env bash
# mtperf's main job on the embedded default: every workload on every transport usable here,
# against an in-process server on 127.0.0.1, printed side by side.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/build.sh >/dev/null
exec "${BUILD_DIR:-build}/cli/mtperf" suite "$@"
