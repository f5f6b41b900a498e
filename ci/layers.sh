#!/usr/bin/env bash
# Dependencies point one way: cli -> fleet -> harness (the run layer) -> report -> control -> bindings ->
# workloads -> transports -> (platform, stats). bindings/ instantiates the workload template over
# each transport's engine type, so that neither workloads/ nor transports/ includes the other.
# Fails when a file includes a header of a layer above its own.
set -euo pipefail
cd "$(dirname "$0")/.."
bad=0
while IFS= read -r f; do
  case "$f" in
    platform/*|stats/*) up='transports|workloads|bindings|control|report|harness|fleet|cli' ;;
    transports/*) up='workloads|bindings|control|report|harness|fleet|cli' ;;
    workloads/*) up='bindings|control|report|harness|fleet|cli' ;;
    bindings/*) up='control|report|harness|fleet|cli' ;;
    control/*) up='report|harness|fleet|cli' ;;
    report/*) up='harness|fleet|cli' ;;
    harness/*) up='fleet|cli' ;;
    fleet/*) up='cli' ;;
    *) continue ;;
  esac
  while IFS= read -r hit; do
    [ -z "$hit" ] && continue
    echo "ci/layers.sh: $f:$hit includes a higher layer" >&2
    bad=1
  done < <(grep -nE "#include \"($up)/" "$f" || true)
  # The workload, the bindings (through the generated engine list), the control protocol and
  # the report know the transport interface, never a transport's own code.
  if [[ $f =~ ^(workloads|bindings|control|report|fleet)/ ]]; then
    while IFS= read -r hit; do
      [ -z "$hit" ] && continue
      echo "ci/layers.sh: $f:$hit includes a transport's own header (${f%%/*}/ sees transports/api/ only)" >&2
      bad=1
    done < <(grep -nE '#include "transports/' "$f" | grep -v '"transports/api/' || true)
  fi
done < <(git ls-files '*.cpp' '*.hpp' '*.h')
# Only transports/ ask which transport they hold; the rest asks the registry entry's fields and
# Caps. (An emulated testbed's kind, clip or lane, is the line's mode, not a transport choice.)
# The names are every transport declared (mtperf_transport() in transports/*/), as the build
# lists them.
list=${BUILD_DIR:-build}/transport_names.txt
if [ ! -s "$list" ]; then
  echo "ci/layers.sh: $list is missing: configure a build first (bash ci/build.sh); it is" \
       "generated from the transports' declarations" >&2
  exit 1
fi
names="\"($(paste -sd'|' "$list"))\""
hits=$(git ls-files '*.cpp' '*.hpp' | grep -vE '^(transports|tests|bench|fuzz)/' |
       xargs grep -nE "(transport|name|n)\)? *(==|!=) *$names|$names *(==|!=) *[a-z_.]*(transport|name)" || true)
if [ -n "$hits" ]; then
  echo "ci/layers.sh: a transport's name is tested outside transports/:" >&2
  echo "$hits" >&2
  bad=1
fi
exit $bad
