#!/usr/bin/env bash
# Dependencies point one way: cli -> fleet -> harness (the run layer) -> report -> peers -> control -> bindings ->
# workloads -> transports -> (atmlink, verbs) -> (platform, stats). bindings/ instantiates the
# workload template over each transport's engine type, so that neither workloads/ nor transports/
# includes the other. atmlink/ (the emulated ATM link and its commands) is a library the clip and
# lane transports use, verbs/ (RDMA device and connection plumbing) one the rdma transport uses;
# only transports/ includes them, they include none of transports/ and neither includes the other.
# Fails when a file includes a header of a layer above its own.
set -euo pipefail
cd "$(dirname "$0")/.."
bad=0
while IFS= read -r f; do
  case "$f" in
    platform/*|stats/*) up='atmlink|verbs|transports|workloads|bindings|control|peers|report|harness|fleet|cli' ;;
    atmlink/*) up='verbs|transports|workloads|bindings|control|peers|report|harness|fleet|cli' ;;
    verbs/*) up='atmlink|transports|workloads|bindings|control|peers|report|harness|fleet|cli' ;;
    transports/*) up='workloads|bindings|control|peers|report|harness|fleet|cli' ;;
    workloads/*) up='bindings|control|peers|report|harness|fleet|cli' ;;
    bindings/*) up='control|peers|report|harness|fleet|cli' ;;
    control/*) up='peers|report|harness|fleet|cli' ;;
    peers/*) up='report|harness|fleet|cli' ;;
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
  # Above transports/, every layer knows the transport interface (transports/api/) and the
  # generated lists, never a transport's own code: the bindings reach the engines through the
  # generated engine list, the run layer and the command line reach a transport's line and its
  # own commands through the registry entry's line hook (transports/api/line.hpp). A library
  # under a transport (atmlink/, verbs/) is that transport's own code too.
  if [[ $f =~ ^(workloads|bindings|control|peers|report|harness|fleet|cli)/ ]]; then
    while IFS= read -r hit; do
      [ -z "$hit" ] && continue
      echo "ci/layers.sh: $f:$hit includes a transport's own header (${f%%/*}/ sees transports/api/ only)" >&2
      bad=1
    done < <(grep -nE '#include "(transports|atmlink|verbs)/' "$f" | grep -v '"transports/api/' || true)
  fi
done < <(git ls-files '*.cpp' '*.hpp' '*.h')
# Only transports/ name a transport; the rest asks the registry entry's fields (its Caps, its line
# hook) or the generated lists (kDefaultTransport). So no declared name appears as a string literal
# outside transports/ and the libraries under them (atmlink/, the link under clip and lane;
# verbs/, the rdma transport's options and plumbing) (tests, benchmarks and fuzzers aside), compared or not; comments may name
# them. A literal that only spells the same word (the request's "socket" options object) says so
# on its line: `// not a transport name`. The names are every transport declared
# (mtperf_transport() in transports/*/), as the build lists them; generated files are in the build
# folder, not among the sources checked.
list=${BUILD_DIR:-build}/transport_names.txt
if [ ! -s "$list" ]; then
  echo "ci/layers.sh: $list is missing: configure a build first (bash ci/build.sh); it is" \
       "generated from the transports' declarations" >&2
  exit 1
fi
names="\"($(paste -sd'|' "$list"))\""
hits=$(git ls-files '*.cpp' '*.hpp' '*.h' | grep -vE '^(transports|atmlink|verbs|tests|bench|fuzz)/' |
       xargs grep -nE "$names" | grep -v '// not a transport name' |
       awk -v re="$names" '{ code = $0; sub(/^[^:]*:[0-9]*:/, "", code); sub(/\/\/.*$/, "", code)
                             if (code ~ re) print }' || true)
if [ -n "$hits" ]; then
  echo "ci/layers.sh: a transport's name is written outside transports/ (ask the registry entry):" >&2
  echo "$hits" >&2
  bad=1
fi
exit $bad
