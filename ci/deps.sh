#!/usr/bin/env bash
# Installs what mtperf needs, from Debian 12 packages. Idempotent: quiet and quick when
# everything is already there.
#   bash ci/deps.sh          what building and testing need (ci/test.sh)
#   bash ci/deps.sh build    what building and running mtperf need, no more (ci/demo.sh): the
#                            test tools (a browser, clang, Slurm, Open MPI, tshark) are most of
#                            the download
set -euo pipefail
# Building mtperf (Catch2: the build configures its tests) and running it (namespaces, sysctl).
pkgs=(cmake ninja-build g++ pkg-config
      liburing-dev libibverbs-dev librdmacm-dev libboost-program-options-dev catch2
      nlohmann-json3-dev libfmt-dev libisal-dev libssl-dev
      iproute2 procps)
[ "${1:-}" = build ] || pkgs+=(clang-format libbenchmark-dev
      iperf3 sockperf  # tests/peers, tests/cli/docs_commands: the peers' own programs
      python3-jsonschema  # tests/report/json_schema_check.py: the JSON output against docs/json-schema
      slurmctld slurmd slurm-client munge openmpi-bin  # tests/fleet: mtperf fleet under srun and mpirun
      python3-yaml  # tests/fleet/recipes_check.py: the Kubernetes recipe as YAML
      chromium  # tests/report/html_render_check.py: the HTML report parsed and rendered headless
      tshark  # tests/integration/test_atm_capture: the ATM captures decoded as Wireshark does
      man-db  # tests/cli/man_pages_check.sh: the generated man pages formatted without a warning
      mmdebstrap  # ci/install-test.sh, tests/fleet/podman_fleet.sh: minimal Debian 12 roots
      podman runc  # tests/fleet/podman_fleet.sh: a fleet of four containers
      clang libclang-rt-14-dev llvm  # ci/fuzz.sh: libFuzzer and its sanitizers, llvm-symbolizer
      lld)  # ci/clang-asan.sh: links the sanitized builds' ~180 executables and libraries
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "ci/deps.sh: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
# wireshark-common asks whether non-root users may capture: no (nothing here captures live).
echo "wireshark-common wireshark-common/install-setuid boolean false" |
  "${sudo_cmd[@]}" debconf-set-selections
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
