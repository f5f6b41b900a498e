#!/usr/bin/env python3
"""The man pages and the bash completion of mtperf, from the binary's own option descriptions.

Every command's --help comes from its boost::program_options description
(platform/command_line.hpp). Under MTPERF_HELP_FORMAT=json the same --help prints that description
as JSON: `mtperf --help` the commands, transports (with their -O keys) and workloads, `mtperf CMD
--help` a command's options, `mtperf GROUP --help` a group's subcommands. This script reads them
and writes roff and bash, so the pages and the completion say what --help says and nothing is
copied by hand.

  gen_docs.py --mtperf build/cli/mtperf --man-dir DIR --completion FILE
"""

import argparse
import gzip
import json
import os
import re
import subprocess
import sys
import textwrap

# Exit statuses of every command (cli/commands.hpp).
EXIT_STATUS = [
    ("0", "success"),
    ("1", "the test or its set-up failed; one line on standard error says why"),
    ("2", "bad usage: the option is named as typed, with a suggestion where one is close"),
    ("3", "a \\-\\-check threshold failed (the test ran)"),
    ("130", "interrupted (SIGINT or SIGTERM): the partial result is printed, marked interrupted, "
            "and whatever the run built is removed"),
]

# What a page's EXAMPLES section shows; a command without an entry shows its --help.
EXAMPLES = {
    "run": [("A 5 s request/response test against an in-process server on 127.0.0.1",
             "mtperf run -w rr -r 1,1 -l 5"),
            ("Four TCP streams to a host that runs mtperf serve", "mtperf run -H far-host -w stream -P 4 -l 10"),
            ("Every byte checked, with pass/fail thresholds",
             "mtperf run -H dut -w stream --verify --check 'throughput>=9G,errors==0'")],
    "serve": [("Serve on the default control port 12865", "mtperf serve"),
              ("Keyed (the key in a file of mode 600, read again on SIGHUP), one network, a "
               "tighter memory budget",
               "mtperf serve --key-file /etc/mtperf/key --allow 10.0.0.0/8 --max-memory 512M"),
              ("Counters for Prometheus on a management address",
               "mtperf serve --metrics 192.0.2.1:9112"),
              ("As a systemd service, its options in /etc/default/mtperf",
               "systemctl enable --now mtperf-serve.service")],
    "suite": [("Every workload on every usable transport for 2 s each", "mtperf suite -l 2")],
    "sweep": [("Throughput against the message size", "mtperf sweep --message-size 8K,32K,64K -l 10"),
              ("The load curve of request/response", "mtperf sweep -w rr --flows 1..16 -l 10")],
    "compare": [("Two transports side by side, five iterations each",
                 "mtperf compare -T socket,uring -w stream,rr -i 5")],
    "fleet": [("Every pair of a Slurm allocation", "srun -N4 --ntasks-per-node=1 mtperf fleet -w stream -l 2")],
    "report": [("Run, compare and sweep documents as one HTML page",
                "mtperf report run.json cmp.json sweep.json -o report.html")],
    "transports": [("What is compiled in and usable here", "mtperf transports")],
    "topology": [("Adapters, PCI controllers and interrupt CPUs as JSON", "mtperf topology --format json")],
    "testbed": [("Two namespaces joined by four veth pairs", "mtperf testbed up --adapters 4"),
                ("Remove them", "mtperf testbed down")],
}

SEE_ALSO = ["netperf(1)", "iperf3(1)", "ib_send_bw(1)"]


def mtperf_help(binary, words):
    env = dict(os.environ, MTPERF_HELP_FORMAT="json")
    out = subprocess.run([binary, *words, "--help"], env=env, check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)


def describe(binary):
    """Everything the pages and the completion need, read from the binary."""
    top = mtperf_help(binary, [])
    for c in top["commands"]:
        if c["group"]:
            group = mtperf_help(binary, [c["name"]])
            c["subcommands"] = group["subcommands"]
            for sub in c["subcommands"]:
                sub["spec"] = mtperf_help(binary, [c["name"], sub["name"]])
        else:
            c["spec"] = mtperf_help(binary, [c["name"]])
    return top


# ---- roff ---------------------------------------------------------------------------------------

def roff(text):
    """Plain text as roff: escapes, minus signs, characters outside ASCII by code point."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    # A break point after a comma inside a word: lists such as 'a>=1,b<=2,c==0' may wrap.
    text = re.sub(r",(?=\S)", ",\\:", text)
    text = "".join(ch if ord(ch) < 128 else "\\[u%04X]" % ord(ch) for ch in text)
    return text


def roff_lines(text):
    """Paragraphs of text as roff input lines: no line starts with a control character."""
    out = []
    for para in re.split(r"\n\s*\n", text.strip()):
        if out:
            out.append(".PP")
        for line in para.split("\n"):
            line = roff(line.strip())
            if not line:
                continue
            if line[0] in ".'":
                line = "\\&" + line
            out.append(line)
    return out


def option_head(o):
    names = []
    if o["short"]:
        names.append("\\fB\\-%s\\fR" % roff(o["short"]))
    names.append("\\fB\\-\\-%s\\fR" % roff(o["long"]))
    head = ", ".join(names)
    if o["takes_value"]:
        arg = "\\fI%s\\fR" % roff(o["arg"]) + ("..." if o["repeats"] else "")
        head += " [" + arg + "]" if o["optional_arg"] else " " + arg
    return head


def option_text(o):
    text = o["help"]
    if o["takes_value"]:
        if o["implicit"]:
            text += " (%s when not given: %s)" % (o["arg"], o["implicit"])
        if o["default"]:
            text += " (default %s)" % o["default"]
    return text


def options_roff(spec):
    out = []
    for o in spec["options"]:
        out += [".TP", option_head(o)] + roff_lines(option_text(o))
    if spec["aliases"]:
        olds = ", ".join("\\-\\-%s (\\-\\-%s)" % (roff(a["old"]), roff(a["now"])) for a in spec["aliases"])
        out += [".PP", "Old spellings, still read: " + olds + "."]
    return out


def page_head(name, summary, version):
    return ['.TH "%s" 1 "" "mtperf %s" "mtperf manual"' % (roff(name.upper()), roff(version)),
            # Left-justified, no hyphenation: option names are never split or stretched.
            ".ad l", ".nh", ".SH NAME", "%s \\- %s" % (roff(name), roff(summary))]


def synopsis_roff(words, synopsis):
    line = "\\fBmtperf %s\\fR" % roff(words)
    if synopsis:
        line += " " + roff(synopsis)
    return [".SH SYNOPSIS", ".nf", line, ".fi"]


def examples_roff(name):
    out = [".SH EXAMPLES"]
    for what, cmd in EXAMPLES.get(name, [("The options of this command", "mtperf %s --help" % name)]):
        out += [".PP", roff(what) + ":", ".PP", ".RS 4", ".nf", roff(cmd), ".fi", ".RE"]
    return out


def files_roff(name):
    files = [("/etc/default/mtperf",
              "MTPERF_SERVE_OPTS: the options mtperf-serve.service gives mtperf serve"),
             ("/etc/default/mtperf-INSTANCE",
              "the options of the instance mtperf-serve@INSTANCE.service, read after /etc/default/mtperf"),
             ("/lib/systemd/system/mtperf-serve.service",
              "the systemd unit that runs mtperf serve, sandboxed (mtperf-serve@.service: one per instance)")]
    if name in ("testbed", "atm", "run", "sweep"):
        files.append(("/run/mtperf", "the state files of the testbeds and lines that are up"))
    out = [".SH FILES"]
    for path, what in files:
        out += [".TP", "\\fI%s\\fR" % roff(path), roff(what)]
    return out


def exit_roff():
    out = [".SH EXIT STATUS"]
    for code, what in EXIT_STATUS:
        out += [".TP", "\\fB%s\\fR" % code, what if "\\" in what else roff(what)]
    return out


def see_also_roff(pages):
    refs = ["\\fB%s\\fR(%s)" % (roff(p.split("(")[0]), p.split("(")[1].rstrip(")")) for p in pages]
    return [".SH SEE ALSO", ",\n".join(refs)]


def command_page(top, c):
    name = "mtperf-" + c["name"]
    out = page_head(name, c["summary"], top["version"])
    if c["group"]:
        subs = "|".join(s["name"] for s in c["subcommands"])
        out += [".SH SYNOPSIS", ".nf", "\\fBmtperf %s\\fR %s [\\fIoptions\\fR]" % (roff(c["name"]), roff(subs)),
                ".fi", ".SH DESCRIPTION"] + roff_lines(c["summary"][0].upper() + c["summary"][1:] + ".")
        out += [".SH SUBCOMMANDS"]
        for s in c["subcommands"]:
            spec = s["spec"]
            out += [".SS \"%s\"" % roff("mtperf %s %s" % (c["name"], s["name"])), ".nf",
                    "\\fBmtperf %s %s\\fR %s" % (roff(c["name"]), roff(s["name"]), roff(spec["synopsis"])), ".fi",
                    ".PP"] + roff_lines(spec["summary"])
            if spec["about"]:
                out += [".PP"] + roff_lines(spec["about"])
            out += [".PP", "Options:"] + options_roff(spec)
    else:
        spec = c["spec"]
        out += synopsis_roff(c["name"], spec["synopsis"])
        out += [".SH DESCRIPTION"] + roff_lines(spec["summary"])
        if spec["about"]:
            out += [".PP"] + roff_lines(spec["about"])
        out += [".SH OPTIONS"] + options_roff(spec)
        if spec["forward_unknown"]:
            out += [".PP", "Options it does not list are those of \\fBmtperf\\-run\\fR(1), given to every run."]
    out += exit_roff() + examples_roff(c["name"]) + files_roff(c["name"])
    others = ["mtperf(1)"] + (["mtperf-run(1)"] if c["name"] != "run" else [])
    return out + see_also_roff(others + SEE_ALSO)


def main_page(top):
    out = page_head("mtperf", "measure and compare network transport stacks", top["version"])
    out += [".SH SYNOPSIS", ".nf", "\\fBmtperf\\fR \\fICOMMAND\\fR [\\fIoptions\\fR]",
            "\\fBmtperf\\fR \\fICOMMAND\\fR \\fB\\-\\-help\\fR", "\\fBmtperf \\-\\-version\\fR", ".fi"]
    out += [".SH DESCRIPTION"] + roff_lines(
        "mtperf measures and compares network transport stacks on the same hardware: one workload "
        "runner drives stream, reverse-stream, bidirectional, request/response and "
        "connect/request/response tests over any transport compiled in, and reports throughput, "
        "transaction rate, latency percentiles, CPU utilization and service demand on both ends, "
        "interrupt rates and Jain's fairness over repeated iterations with confidence intervals.")
    out += [".SH COMMANDS"]
    for c in top["commands"]:
        out += [".TP", "\\fBmtperf %s\\fR" % roff(c["name"]),
                roff(c["summary"]) + "; see \\fBmtperf\\-%s\\fR(1)." % roff(c["name"])]
    out += [".SH TRANSPORTS", "Given to \\fB\\-T\\fR; each takes \\fB\\-O\\fR \\fIKEY\\fR=\\fIVALUE\\fR options."]
    for t in top["transports"]:
        out += [".TP", "\\fB%s\\fR" % roff(t["name"])] + roff_lines(t["summary"])
        for o in t["options"]:
            out += [".br", "\\fB\\-O %s\\fR=\\fI%s\\fR: %s" % (roff(o["key"]), roff(o["default"]), roff(o["help"]))]
    out += [".SH WORKLOADS", "Given to \\fB\\-w\\fR: " + ", ".join("\\fB%s\\fR" % roff(w) for w in top["workloads"]) + "."]
    out += exit_roff()
    out += [".SH EXAMPLES"]
    for name in ("run", "serve"):
        for what, cmd in EXAMPLES[name][:2]:
            out += [".PP", roff(what) + ":", ".PP", ".RS 4", ".nf", roff(cmd), ".fi", ".RE"]
    out += files_roff("mtperf")
    return out + see_also_roff(["mtperf-%s(1)" % c["name"] for c in top["commands"]] + SEE_ALSO)


def write_man(top, man_dir):
    os.makedirs(man_dir, exist_ok=True)
    pages = {"mtperf.1": main_page(top)}
    for c in top["commands"]:
        pages["mtperf-%s.1" % c["name"]] = command_page(top, c)
    for file, lines in pages.items():
        text = "\n".join(lines) + "\n"
        with open(os.path.join(man_dir, file), "w", encoding="ascii") as f:
            f.write(text)
        # Debian installs pages compressed, without a time stamp (reproducible).
        with open(os.path.join(man_dir, file + ".gz"), "wb") as raw:
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=9, mtime=0) as z:
                z.write(text.encode("ascii"))


# ---- /etc/default/mtperf ------------------------------------------------------------------------

def write_default(top, path):
    """The service's environment file: MTPERF_SERVE_OPTS, and serve's options as comments."""
    spec = next(c["spec"] for c in top["commands"] if c["name"] == "serve")
    lines = ["# Options of mtperf serve as the systemd units run it (mtperf-serve.service,",
             "# mtperf-serve@NAME.service, which then reads /etc/default/mtperf-NAME). After a change:",
             "#   systemctl restart mtperf-serve.service",
             "# A key goes in MTPERF_KEY below, never on the command line (--key is refused: argv",
             "# shows in ps). systemd reads this file as root and hands the key to serve in its",
             "# environment; keep the file mode 0600 when it holds one (chmod 600 /etc/default/mtperf).",
             "# A changed MTPERF_KEY takes a restart; a --key-file is read again on reload.",
             "#",
             "# The options (mtperf serve --help, mtperf-serve(1)):"]
    for o in spec["options"]:
        if o["long"] == "help":
            continue
        head = ("-%s, " % o["short"] if o["short"] else "") + "--" + o["long"]
        if o["takes_value"]:
            head += " " + o["arg"] + ("..." if o["repeats"] else "")
        lines.append("#   " + head)
        lines += ["#       " + line for line in textwrap.wrap(option_text(o), 92)]
    lines += ["#", "# e.g. MTPERF_SERVE_OPTS=\"--allow 10.0.0.0/8 --max-sessions 4\"",
              "#      MTPERF_KEY=\"a-long-random-key\"",
              "MTPERF_SERVE_OPTS=\"\""]
    with open(path, "w", encoding="ascii") as f:
        f.write("\n".join(lines) + "\n")


# ---- bash completion ----------------------------------------------------------------------------

def value_words(o):
    """The values an option takes when its description lists them: "tcp | udp" -> tcp udp."""
    m = re.match(r"^([a-z0-9-]+(?: \| [a-z0-9-]+)+)(?:$|[ (,;])", o["help"])
    return m.group(1).split(" | ") if m else []


def option_words(spec):
    longs, shorts, valued, values, files = [], [], [], {}, []
    for o in spec["options"]:
        longs.append("--" + o["long"])
        if o["short"]:
            shorts.append("-" + o["short"])
        if o["takes_value"]:
            spellings = ["--" + o["long"]] + (["-" + o["short"]] if o["short"] else [])
            valued += spellings
            words = value_words(o)
            if o["arg"] in ("FILE", "DIR") or "FILE" in o["arg"]:
                files += spellings
            for s in spellings:
                if words:
                    values[s] = words
    return longs + shorts, valued, values, files


def sh_quote(words):
    return "'" + " ".join(words).replace("'", "'\\''") + "'"


def write_completion(top, path):
    run_spec = next(c["spec"] for c in top["commands"] if c["name"] == "run")
    lines = [
        "# bash completion for mtperf, generated from its option descriptions (packaging/gen_docs.py).",
        "# shellcheck shell=bash",
        "declare -gA _mtperf_opts=() _mtperf_valued=() _mtperf_values=() _mtperf_files=() _mtperf_topts=()",
        "_mtperf_commands=%s" % sh_quote([c["name"] for c in top["commands"]] + ["--help", "--version"]),
        "_mtperf_transports=%s" % sh_quote([t["name"] for t in top["transports"]]),
        "_mtperf_workloads=%s" % sh_quote(top["workloads"]),
    ]
    for t in top["transports"]:
        lines.append("_mtperf_topts[%s]=%s" % (t["name"], sh_quote([o["key"] + "=" for o in t["options"]])))
    specs = {}
    groups = {}
    for c in top["commands"]:
        if c["group"]:
            groups[c["name"]] = [s["name"] for s in c["subcommands"]]
            for s in c["subcommands"]:
                specs["%s_%s" % (c["name"], s["name"])] = s["spec"]
        else:
            specs[c["name"]] = c["spec"]
    for key, spec in specs.items():
        words, valued, values, files = option_words(spec)
        if spec["forward_unknown"]:
            run_words, run_valued, run_values, run_files = option_words(run_spec)
            words += [w for w in run_words if w not in words]
            valued += [w for w in run_valued if w not in valued]
            files += [w for w in run_files if w not in files]
            for k, v in run_values.items():
                values.setdefault(k, v)
        lines.append("_mtperf_opts[%s]=%s" % (key, sh_quote(words)))
        lines.append("_mtperf_valued[%s]=%s" % (key, sh_quote(valued)))
        lines.append("_mtperf_files[%s]=%s" % (key, sh_quote(files)))
        for opt, v in values.items():
            lines.append("_mtperf_values[%s%s]=%s" % (key, opt, sh_quote(v)))
    for g, subs in groups.items():
        lines.append("_mtperf_opts[%s]=%s" % (g, sh_quote(subs + ["--help"])))
    lines.append("_mtperf_groups=%s" % sh_quote(list(groups)))
    lines.append(COMPLETION_FUNCTION)
    with open(path, "w", encoding="ascii") as f:
        f.write("\n".join(lines) + "\n")


COMPLETION_FUNCTION = r'''
# The transport the words name with -T/--transport (its first when a list), else the default.
_mtperf_transport() {
  local i w t=''
  for ((i = 2; i < ${#COMP_WORDS[@]}; i++)); do
    w=${COMP_WORDS[i]}
    case $w in
      -T | --transport) t=${COMP_WORDS[i + 1]} ;;
      --transport=*) t=${w#--transport=} ;;
      -T?*) t=${w#-T} ;;
    esac
  done
  t=${t%%,*}
  echo "${t:-%DEFAULT%}"
}

_mtperf() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev='' key w
  ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
  COMPREPLY=()
  if ((COMP_CWORD == 1)); then
    mapfile -t COMPREPLY < <(compgen -W "$_mtperf_commands" -- "$cur")
    return
  fi
  key=${COMP_WORDS[1]}
  for w in $_mtperf_groups; do
    if [[ $key == "$w" ]]; then
      if ((COMP_CWORD == 2)); then
        mapfile -t COMPREPLY < <(compgen -W "${_mtperf_opts[$key]}" -- "$cur")
        return
      fi
      key=${key}_${COMP_WORDS[2]}
    fi
  done
  [[ -n ${_mtperf_opts[$key]+set} ]] || return
  if [[ " ${_mtperf_valued[$key]} " == *" $prev "* ]]; then
    case $prev in
      -T | --transport)
        local list=${cur%"${cur##*,}"}
        mapfile -t COMPREPLY < <(compgen -P "$list" -W "$_mtperf_transports" -- "${cur##*,}")
        ;;
      -w | --workload)
        local list=${cur%"${cur##*,}"}
        mapfile -t COMPREPLY < <(compgen -P "$list" -W "$_mtperf_workloads" -- "${cur##*,}")
        ;;
      -O | --topt)
        mapfile -t COMPREPLY < <(compgen -W "${_mtperf_topts[$(_mtperf_transport)]}" -- "$cur")
        compopt -o nospace 2>/dev/null || true  # outside a completion (a test) there is none
        ;;
      *)
        if [[ -n ${_mtperf_values[$key$prev]+set} ]]; then
          mapfile -t COMPREPLY < <(compgen -W "${_mtperf_values[$key$prev]}" -- "$cur")
        elif [[ " ${_mtperf_files[$key]} " == *" $prev "* ]]; then
          mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        fi
        ;;
    esac
    return
  fi
  if [[ $cur == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "${_mtperf_opts[$key]}" -- "$cur")
  else
    mapfile -t COMPREPLY < <(compgen -f -- "$cur")
  fi
}
complete -F _mtperf mtperf
'''


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mtperf", required=True, help="the mtperf binary")
    ap.add_argument("--man-dir", help="where to write mtperf.1, mtperf-COMMAND.1 and their .gz")
    ap.add_argument("--completion", help="the bash completion file to write")
    ap.add_argument("--default", help="the /etc/default/mtperf file to write")
    args = ap.parse_args()
    top = describe(args.mtperf)
    default = next((t["name"] for t in top["transports"] if t.get("default")), top["transports"][0]["name"])
    global COMPLETION_FUNCTION
    COMPLETION_FUNCTION = COMPLETION_FUNCTION.replace("%DEFAULT%", default)
    if args.man_dir:
        write_man(top, args.man_dir)
    if args.completion:
        write_completion(top, args.completion)
    if args.default:
        write_default(top, args.default)
    return 0


if __name__ == "__main__":
    sys.exit(main())
