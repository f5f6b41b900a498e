#!/usr/bin/env bash
# Dependencies point one way: cli -> harness (the run layer) -> report -> control -> workloads ->
# transports -> (platform, stats). Fails when a file includes a header of a layer above its own.
#
# One known exception is listed below: each transport's registry file instantiates the workload
# template over its engine (Worker<E>), so that the hot path has no virtual call. Moving those
# instantiations to a layer above both is the open part of the layering work; no other file may
# join the list.
set -euo pipefail
cd "$(dirname "$0")/.."
allowed='^transports/(socket/socket|uring/uring|rdma/rdma)_transport\.cpp:[0-9]+:#include "workloads/(engine_config|worker)\.hpp"$'
bad=0
while IFS= read -r f; do
  case "$f" in
    platform/*|stats/*) up='transports|workloads|control|report|harness|cli' ;;
    transports/*) up='workloads|control|report|harness|cli' ;;
    workloads/*) up='control|report|harness|cli' ;;
    control/*) up='report|harness|cli' ;;
    report/*) up='harness|cli' ;;
    harness/*) up='cli' ;;
    *) continue ;;
  esac
  while IFS= read -r hit; do
    [ -z "$hit" ] && continue
    if ! grep -qE "$allowed" <<<"$f:$hit"; then
      echo "ci/layers.sh: $f:$hit includes a higher layer" >&2
      bad=1
    fi
  done < <(grep -nE "#include \"($up)/" "$f" || true)
done < <(git ls-files '*.cpp' '*.hpp' '*.h')
# Only transports/ ask which transport they hold; the rest asks the registry entry's fields and
# Caps. (An emulated testbed's kind, clip or lane, is the line's mode, not a transport choice.)
names='"(socket|uring|rdma|clip|lane)"'
hits=$(git ls-files '*.cpp' '*.hpp' | grep -vE '^(transports|tests|bench|fuzz)/' |
       xargs grep -nE "(transport|name|n)\)? *(==|!=) *$names|$names *(==|!=) *[a-z_.]*(transport|name)" || true)
if [ -n "$hits" ]; then
  echo "ci/layers.sh: a transport's name is tested outside transports/:" >&2
  echo "$hits" >&2
  bad=1
fi
exit $bad
