#!/usr/bin/env bash
# systemd-analyze on the units as installed, but for ExecStart's binary (this build's mtperf: the
# units name /usr/bin/mtperf, which verify wants to exist) and their man page (this machine's
# manual may not hold mtperf-serve(1), so a stand-in page answers `man mtperf-serve`).
#   systemd_units_check.sh MTPERF UNIT_DIR MAX_EXPOSURE
set -euo pipefail
mtperf=$1 units=$2 max=$3
if ! command -v systemd-analyze >/dev/null; then
  echo "SKIPPED: no systemd-analyze (apt-get install systemd)"
  exit 77
fi
version=$(systemd-analyze --version | awk 'NR == 1 { print $2 }')
if [ "${version%%.*}" -lt 252 ]; then
  echo "SKIPPED: systemd $version; security --offline needs 252"
  exit 77
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/man/man1"
printf '.TH MTPERF-SERVE 1\n.SH NAME\nmtperf-serve \\- stand-in\n' >"$dir/man/man1/mtperf-serve.1"
for unit in "$units"/*.service; do
  sed "s#/usr/bin/mtperf#$(realpath "$mtperf")#" "$unit" >"$dir/$(basename "$unit")"
done
cp "$dir/mtperf-serve@.service" "$dir/mtperf-serve@check.service"
status=0
cd "$dir"
for unit in mtperf-serve.service mtperf-serve@check.service; do
  if out=$(MANPATH=$dir/man systemd-analyze verify "./$unit" 2>&1) && [ -z "$out" ]; then
    echo "$unit: systemd-analyze verify ok"
  else
    echo "FAIL: systemd-analyze verify $unit:"
    echo "$out"
    status=1
  fi
  score=$(systemd-analyze security --offline=yes "./$unit" 2>&1 |
    sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
  if [ -z "$score" ] || ! awk -v s="$score" -v m="$max" 'BEGIN { exit !(s <= m) }'; then
    echo "FAIL: $unit: exposure '${score}' above $max"
    status=1
  else
    echo "$unit: exposure $score (at most $max)"
  fi
done
exit $status
