#!/usr/bin/env bash
# The bash completion, generated from the binary's option descriptions (packaging/gen_docs.py),
# sourced in bash and asked what a user's TAB would be asked: the commands, a command's options,
# -T's transports and -O's keys from the registry, -w's workloads, a group's subcommands.
#   bash_completion_check.sh MTPERF GEN_DOCS.PY
set -euo pipefail
mtperf=$1 gen=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
python3 "$gen" --mtperf "$mtperf" --completion "$out/mtperf"
# shellcheck source=/dev/null
source "$out/mtperf"
status=0
# complete LINE: COMPREPLY for the cursor at the end of LINE (a trailing space: a new word).
complete_line() {
  local line=$1
  read -r -a COMP_WORDS <<<"$line"
  [[ $line == *" " ]] && COMP_WORDS+=("")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMP_LINE=$line COMP_POINT=${#line}
  _mtperf
}
# expect LINE WORD...: each WORD is among the completions.
expect() {
  local line=$1 w
  shift
  complete_line "$line"
  for w in "$@"; do
    if [[ " ${COMPREPLY[*]} " != *" $w "* ]]; then
      echo "FAIL: '$line<TAB>' gives '${COMPREPLY[*]}', without '$w'"
      status=1
    fi
  done
}
# only LINE WORD...: the completions are exactly these.
only() {
  local line=$1
  shift
  complete_line "$line"
  if [[ "${COMPREPLY[*]}" != "$*" ]]; then
    echo "FAIL: '$line<TAB>' gives '${COMPREPLY[*]}', expected '$*'"
    status=1
  fi
}
only "mtperf r" run report
only "mtperf ser" serve
expect "mtperf " run serve sweep compare transports --version
expect "mtperf run -T " socket
only "mtperf run -T soc" socket
expect "mtperf run --transport=socket -w " stream maerts bidir rr crr
expect "mtperf run -w stream,r" stream,rr
expect "mtperf run --" --length --workload --transport --flows --help --quiet
only "mtperf run --len" --length
expect "mtperf run -p " tcp udp
expect "mtperf run --format " text json csv junit
expect "mtperf serve --" --port --key-file --allow --max-sessions
expect "mtperf testbed " up down status
expect "mtperf testbed up --" --adapters --name
# sweep forwards run's options to every run
expect "mtperf sweep --" --message-size --length
# -O keys are the transport's own, as `mtperf transports` lists them: those of the first transport
# that declares some, after -T and after --transport=
topts=$("$mtperf" transports | awk '/^[a-z]/ && NR > 1 { t = $1 } $1 == "-O" { sub(/=.*/, "=", $2); print t, $2 }')
if [ -z "$topts" ]; then
  echo "FAIL: no transport of this build declares -O options; nothing to complete"
  status=1
else
  t=$(head -1 <<<"$topts" | cut -d' ' -f1)
  mapfile -t keys < <(awk -v t="$t" '$1 == t { print $2 }' <<<"$topts")
  expect "mtperf run -T $t -O " "${keys[@]}"
  expect "mtperf compare --transport=$t -w rr -O " "${keys[@]}"
  only "mtperf run -T $t -O ${keys[0]%=}" "${keys[0]}"
fi
[ $status -eq 0 ] && echo "ok: the completions of commands, options, transports, workloads and -O keys"
exit $status
