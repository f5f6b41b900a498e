#!/usr/bin/env bash
# The man pages, generated from the binary's option descriptions (packaging/gen_docs.py), as man
# formats them at 80 columns: any warning of man or groff fails; every command has its page and
# every option of `mtperf run --help` is in mtperf-run(1).
#   man_pages_check.sh MTPERF GEN_DOCS.PY
set -euo pipefail
mtperf=$1 gen=$2
if ! command -v man >/dev/null; then
  echo "SKIPPED: no man command (apt-get install man-db; ci/deps.sh installs it)"
  exit 77
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
python3 "$gen" --mtperf "$mtperf" --man-dir "$out/man1"
status=0
for page in "$out"/man1/*.1; do
  warnings=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null || true)
  if [ -n "$warnings" ]; then
    echo "FAIL: $(basename "$page"):"
    echo "$warnings"
    status=1
  fi
done
for cmd in run serve suite sweep compare fleet report transports topology testbed; do
  [ -f "$out/man1/mtperf-$cmd.1" ] || { echo "FAIL: no mtperf-$cmd.1" && status=1; }
done
text=$(MANWIDTH=80 man -l "$out/man1/mtperf-run.1" 2>/dev/null)
for opt in $("$mtperf" run --help | grep -o -- '--[a-z][a-z0-9-]*' | sort -u); do
  grep -q -- "$opt" <<<"$text" || { echo "FAIL: mtperf-run(1) lacks $opt" && status=1; }
done
for section in NAME SYNOPSIS DESCRIPTION OPTIONS "EXIT STATUS" EXAMPLES FILES "SEE ALSO"; do
  grep -q "^$section" <<<"$text" || { echo "FAIL: mtperf-run(1) has no $section" && status=1; }
done
[ $status -eq 0 ] && echo "ok: $(ls "$out"/man1/*.1 | wc -l) pages, no warnings at MANWIDTH=80"
exit $status
