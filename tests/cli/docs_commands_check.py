#!/usr/bin/env python3
"""The documented commands are tests.

Every command in README.md's "Using it" block and in the examples of docs/*.md is either run here,
on this host, with short lengths (-l 0.2, --warmup 0.1, two iterations), or listed as not run
with the reason (a far host, a cluster, a real NIC, an RDMA device). A command in the docs that
this table does not know fails the check, so the docs and the test move together.

For each command run: the exit status the docs give (0 unless said), the fields the docs show in
its output, and nothing left behind: no namespace of a process it started, no testbed or ATM
state file, no daemon, no file but those it was asked to write (in a folder of its own, removed
after).

Example output is checked too: docs/cli.md's example of serve's log against the lines serve
writes for a keyed client's rr test, a client without the key and a SIGHUP (every key the
example shows is in the real line).

  docs_commands_check.py MTPERF SOURCE_DIR      (as root; exit 77 otherwise)
"""
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time

MTPERF, SRC = os.path.abspath(sys.argv[1]), sys.argv[2]
SHORT = ["-l", "0.2", "--warmup", "0.1"]

# Not run on one host, and why.
FAR = "needs a far host running mtperf serve (-H)"
CLUSTER = "needs a cluster and its launcher"
NIC = "needs real adapters with their own interrupts"
RDMA = "needs an RDMA device and a far host"
OUTPUT = "a line of output the docs show, not a command"
# The peers' servers this test starts on loopback for the interop commands (docs/interop.md): the
# doc's far-host becomes 127.0.0.1 and a free port.
PEERS = {"iperf3": ["iperf3", "-s", "-p"], "sockperf": ["sockperf", "sr", "--tcp", "-i", "127.0.0.1", "-p"]}


def cmd(*words):
    return list(words)


# doc command -> [(mtperf words, expected status, output checks, files it writes)], or a reason
# string for one that is not run. Checks are regular expressions over stdout, or "json:KEY.KEY"
# for a key of the JSON document stdout holds.
def table():
    rr_text = [r"transaction rate +[0-9.]+ trans/s", r"latency \(us\) +mean"]
    stream_text = [r"throughput +[0-9.]+ Mbit/s", r"local cpu"]
    sweep_text = [r"Mbit/s|trans/s"]
    return {
        "mtperf serve": "serve",
        "mtperf serve --key-file /etc/mtperf/key --allow 10.0.0.0/8 --max-memory 512M": "serve",
        "mtperf run -H far-host -w stream -P 4 -l 10": FAR,
        "mtperf run -w rr -r 1,1 -l 5": [(cmd("run", "-w", "rr", "-r", "1,1", *SHORT), 0, rr_text, [])],
        "mtperf run -w rr -p udp -r 1024,2048 --format json": [
            (cmd("run", "-w", "rr", "-p", "udp", "-r", "1024,2048", "--format", "json", *SHORT), 0,
             ["json:summary.transaction_rate", "json:summary.latency_us.p99"], [])],
        "mtperf run -w stream -p udp --rate 100M": [
            (cmd("run", "-w", "stream", "-p", "udp", "--rate", "100M", *SHORT), 0,
             stream_text + [r"udp loss +[0-9.]+ %"], [])],
        "mtperf run -w stream -P 4 -l 5 -i 5,3 -I 95,5 --format json": [
            (cmd("run", "-w", "stream", "-P", "4", "-i", "3,2", "-I", "95,5", "--format", "json",
                 *SHORT), 0, ["json:confidence.width_percent", "json:iterations"], [])],
        "mtperf run -w crr -P 4": [
            (cmd("run", "-w", "crr", "-P", "4", *SHORT), 0, rr_text + [r"connect \(us\) +mean"], [])],
        "mtperf run -H dut -w stream -l 60 --verify --check 'throughput>=9G,verify==0,errors==0' "
        "--format junit -o results.xml": FAR,
        "mtperf run -H dut -l 3600 --verify --interval 1 --check 'throughput>=9G' --stop-on-error": FAR,
        "mtperf transports": [(cmd("transports"), 0, [r"socket", r"uring"], [])],
        "mtperf topology [--format json]": [
            (cmd("topology"), 0, [r"."], []),
            (cmd("topology", "--format", "json"), 0, ["json:adapters"], [])],
        "mtperf testbed up --adapters 4": [
            (cmd("testbed", "up", "--adapters", "4"), 0,
             [r"testbed default: mtperf-default-near mtperf-default-far",
              r"mtperf3n 10\.231\.3\.1/24"], [])],
        "mtperf run --testbed --adapters auto:4 -P 2 --cpus 0-1": [
            (cmd("run", "--testbed", "--adapters", "auto:4", "-P", "2", "--cpus", "0-1",
                 *SHORT), 0, stream_text + [r"placement: 4 adapter\(s\), 8 flow\(s\), pin irq"], [])],
        "mtperf sweep --testbed --adapters 1..4 -l 10": [
            (cmd("sweep", "--testbed", "--adapters", "1..2", "-w", "stream", "-w", "rr", *SHORT), 0,
             sweep_text + [r"efficiency"], [])],
        "mtperf sweep -T clip --atm-rate oc3 --adapters 1..8": [
            (cmd("sweep", "-T", "clip", "--atm-rate", "oc3", "--adapters", "1..2", "-w", "stream",
                 *SHORT), 0, sweep_text, [])],
        "mtperf sweep --message-size 8K,32K,64K -l 10": [
            (cmd("sweep", "--message-size", "8K,64K", "-w", "stream", *SHORT), 0, sweep_text, [])],
        "mtperf sweep -w rr --flows 1..16 -l 10": [
            (cmd("sweep", "-w", "rr", "--flows", "1..2", *SHORT), 0, sweep_text, [])],
        "mtperf sweep --testbed --mtu 1500,9000": [
            (cmd("sweep", "--testbed", "--mtu", "1500,9000", "-w", "stream", *SHORT), 0, sweep_text,
             [])],
        "mtperf compare -T socket,uring -w stream,rr -i 5": [
            (cmd("compare", "-T", "socket,uring", "-w", "stream,rr", "-i", "2", *SHORT), 0,
             [r"configuration +median", r"baseline"], [])],
        "mtperf compare --variant cc=cubic --variant cc=bbr -w stream -P 4 -i 10": [
            (cmd("compare", "--variant", "cc=cubic", "--variant", "cc=bbr", "-w", "stream", "-P",
                 "4", "-i", "2", *SHORT), 0, [r"cc=bbr"], [])],
        "mtperf report run.json cmp.json sweep.json -o report.html": [
            (cmd("run", "-w", "rr", "--format", "json", "-o", "run.json", *SHORT), 0, [], ["run.json"]),
            (cmd("compare", "-T", "socket,socket", "-w", "rr", "-i", "2", "--format", "json", "-o",
                 "cmp.json", *SHORT), 0, [], ["cmp.json"]),
            (cmd("sweep", "-w", "rr", "--flows", "1..2", "--format", "json", "-o", "sweep.json",
                 *SHORT), 0, [], ["sweep.json"]),
            (cmd("report", "run.json", "cmp.json", "sweep.json", "-o", "report.html"), 0, [],
             ["report.html"])],
        "mtperf run -H far --adapters auto:2 --per-controller 1 --pin irq": NIC,
        "mtperf run -T uring -w rr -P 100 --threads 2": [
            (cmd("run", "-T", "uring", "-w", "rr", "-P", "100", "--threads", "2", *SHORT), 0,
             rr_text, [])],
        "mtperf run -T rdma -H host -w stream -O verb=write": RDMA,
        # docs/interop.md, perftest: run in the soft-RoCE guest by rdma_guest/perftest instead.
        "mtperf run -T rdma --peer perftest -H SERVER -w stream -O verb=send -m 64K --count 1000":
            RDMA,
        "mtperf run -T rdma --peer perftest -H SERVER -w maerts -O verb=read -m 64K --count 1000":
            RDMA,
        "mtperf run -T rdma --peer perftest -H SERVER -w rr -O verb=write -r 64 --count 1000": RDMA,
        "mtperf run -T clip -w stream --atm-rate oc3": [
            (cmd("run", "-T", "clip", "-w", "stream", "--atm-rate", "oc3", *SHORT), 0, stream_text,
             [])],
        "mtperf atm up --mode lane --adapters 2 --atm-rate oc12 && mtperf run -T lane --testbed "
        "default --adapters auto:2": [
            (cmd("atm", "up", "--mode", "lane", "--adapters", "2", "--atm-rate", "oc12"), 0, [], []),
            (cmd("run", "-T", "lane", "--testbed", "default", "--adapters", "auto:2", *SHORT), 0,
             stream_text, [])],
        "mtperf atm status; mtperf atm down": [
            (cmd("atm", "status"), 0, [r"cells/s of", r"hosts: mtperf-atm-default-near"], []),
            (cmd("atm", "down"), 0, [r"is down"], [])],
        "mtperf atm cells --vpi 0 --vci 32 --encap llc --hex 45000014": [
            (cmd("atm", "cells", "--vpi", "0", "--vci", "32", "--encap", "llc", "--hex",
                 "45000014"), 0, [r"^[0-9a-f]{106}$"], [])],
        "srun -N4 --ntasks-per-node=1 mtperf fleet -w stream -T socket,uring --pattern all-pairs -l 2":
            CLUSTER,
        "mpirun -np 16 mtperf fleet --rendezvous /shared/rv --pattern shift --check "
        "'pair.throughput>=0.93*max'": CLUSTER,
        "mtperf fleet --emit kubernetes --size 8 -w rr": [
            (cmd("fleet", "--emit", "kubernetes", "--size", "8", "-w", "rr"), 0, [r"kind: Job"], [])],
        "mtperf report fleet.json -o fleet.html": CLUSTER + " (fleet.json is a fleet's document)",
        # docs/cli.md
        "mtperf COMMAND [SUBCOMMAND] [options]": "a synopsis, not a command",
        "mtperf --help | -h | help          the list of commands (exit 0)": [
            (cmd(h), 0, [r"^  run "], []) for h in ("--help", "-h", "help")],
        "mtperf --version | -V | version    \"mtperf VERSION\" (exit 0)": [
            (cmd(v), 0, [r"^mtperf [0-9]"], []) for v in ("--version", "-V", "version")],
        "mtperf compare -T socket --variant cc=cubic --variant cc=bbr -w stream -P 4 -i 10": [
            (cmd("compare", "-T", "socket", "--variant", "cc=cubic", "--variant", "cc=bbr", "-w",
                 "stream", "-P", "4", "-i", "2", *SHORT), 0, [r"cc=cubic"], [])],
        "mtperf compare -T socket,socket -w rr -i 5": [
            (cmd("compare", "-T", "socket,socket", "-w", "rr", "-i", "2", *SHORT), 0,
             [r"socket#2"], [])],
        "mtperf compare -T socket,uring,clip,lane -w rr -r 1024,2048 -p udp --format csv -o "
        "udp-rr.csv": [
            (cmd("compare", "-T", "socket,uring,clip,lane", "-w", "rr", "-r", "1024,2048", "-p",
                 "udp", "-i", "2", "--format", "csv", "-o", "udp-rr.csv", *SHORT), 0, [],
             ["udp-rr.csv"])],
        "srun -N4 --ntasks-per-node=1 mtperf fleet -w stream -T socket,uring -l 2": CLUSTER,
        "mpirun -np 16 mtperf fleet --rendezvous /shared/rv --pattern shift --format mpigraph":
            CLUSTER,
        "mtperf fleet --rank 0 --size 2 --coordinator h0 &": CLUSTER + " (two hosts, h0 and h1)",
        "mtperf run -w rr -l 5 --format json > rr.json": [
            (cmd("run", "-w", "rr", "--format", "json", "-o", "rr.json", *SHORT), 0, [], ["rr.json"])],
        "mtperf compare -T socket,uring -w stream,rr -i 5 --format json > cmp.json": [
            (cmd("compare", "-T", "socket,uring", "-w", "stream,rr", "-i", "2", "--format", "json",
                 "-o", "cmp.json", *SHORT), 0, [], ["cmp.json"])],
        "mtperf sweep -w rr --flows 1..16 --format json > load.json": [
            (cmd("sweep", "-w", "rr", "--flows", "1..2", "--format", "json", "-o", "load.json",
                 *SHORT), 0, [], ["load.json"])],
        "mtperf report rr.json cmp.json load.json -o report.html": [
            (cmd("report", "rr.json", "cmp.json", "load.json", "-o", "report.html"), 0, [],
             ["report.html"])],
        # docs/atm.md
        "mtperf atm cells --vpi 0 --vci 32 --encap llc --hex 4500...": [
            (cmd("atm", "cells", "--vpi", "0", "--vci", "32", "--encap", "llc", "--hex",
                 "45000014"), 0, [r"^[0-9a-f]{106}$"], [])],
        "mtperf atm cells ... | mtperf atm decode [--encap lane]": [
            (cmd("atm", "cells", "--vpi", "0", "--vci", "32", "--encap", "llc", "--hex",
                 "4500001400"), 0, [], []),
            (cmd("atm", "decode"), 0, [r"^pdu 1: vpi 0 vci 32 encap llc .*bytes 5$", r"^4500001400$"],
             [], "piped")],
        "mtperf run -T clip --capture clip.pcapng [--capture-format sunatm|erf-aal5|erf-cells]": [
            (cmd("run", "-T", "clip", "--capture", "clip.pcapng", *SHORT), 0, stream_text,
             ["clip.pcapng"]),
            (cmd("run", "-T", "clip", "--capture", "cells.pcapng", "--capture-format", "erf-cells",
                 *SHORT), 0, stream_text, ["cells.pcapng"])],
        "mtperf run -T clip -O capture=clip.pcapng [-O capture_format=...] ...": [
            (cmd("run", "-T", "clip", "-O", "capture=aal5.pcapng", "-O", "capture_format=erf-aal5",
                 *SHORT), 0, stream_text, ["aal5.pcapng"])],
        "mtperf atm up --mode lane --name lab --capture lane.pcapng [--capture-format FORMAT]": [
            (cmd("atm", "up", "--mode", "lane", "--name", "lab", "--capture", "lane.pcapng"), 0,
             [], []),
            (cmd("atm", "down", "--name", "lab"), 0, [r"is down"], ["lane.pcapng"])],
        # docs/fleet.md
        "srun -N4 --ntasks-per-node=1 mtperf fleet --key-file /shared/mtperf.key -w stream -T "
        "socket,uring -l 2": CLUSTER,
        "mpirun -np 4 --map-by ppr:1:node mtperf fleet --key-file /shared/mtperf.key --rendezvous "
        "/shared/mtperf.rv -w rr": CLUSTER,
        "mtperf fleet --emit slurm|mpirun|kubernetes|pdsh -w stream -l 5": [
            (cmd("fleet", "--emit", e, "-w", "stream", "-l", "5"), 0, [want], [])
            for e, want in (("slurm", r"srun "), ("mpirun", r"mpirun "),
                            ("kubernetes", r"kind: Job"), ("pdsh", r"pdsh "))],
        "mtperf report fleet.json -o fleet.html": CLUSTER + " (fleet.json is a fleet's document)",
        "srun -N64 --ntasks-per-node=1 mtperf fleet --key-file /shared/mtperf.key --groups slurm "
        "--pattern within-group -l 5": CLUSTER + " (tests/fleet/slurm_fleet.sh runs it on 4 nodes)",
        "srun -N64 --ntasks-per-node=1 mtperf fleet --key-file /shared/mtperf.key --groups racks.txt "
        "--pattern across-groups -l 5": CLUSTER,
        "mtperf fleet: rank 2 of 4, launched by Slurm (SLURM_PROCID=2 SLURM_NTASKS=4, coordinator "
        "node1 (first host of SLURM_STEP_NODELIST))": OUTPUT,
        # docs/interop.md: against the peers' own servers on loopback
        "mtperf run --peer iperf3 -H far-host -w stream -P 4 -l 10": [
            (cmd("run", "--peer", "iperf3", "-H", "@iperf3", "-w", "stream", "-P", "4", "-l", "1"),
             0, stream_text + [r"iperf3"], [])],
        "mtperf run --peer iperf3 -H far-host:5202 -w maerts -m 128K --cc bbr --format json": [
            (cmd("run", "--peer", "iperf3", "-H", "@iperf3", "-w", "maerts", "-m", "128K", "--cc",
                 "bbr", "-l", "1", "--format", "json"), 0,
             ["json:summary.throughput_bps", "json:peer.streams"], [])],
        "mtperf run --peer iperf3 -H far-host -w bidir -P 2 --warmup 2 -l 10": [
            (cmd("run", "--peer", "iperf3", "-H", "@iperf3", "-w", "bidir", "-P", "2", "--warmup",
                 "1", "-l", "1"), 0, stream_text, [])],
        "mtperf run --peer iperf3 -H far-host -w maerts -p udp --rate 100M -m 1400 -l 10": [
            (cmd("run", "--peer", "iperf3", "-H", "@iperf3", "-w", "maerts", "-p", "udp", "--rate",
                 "100M", "-m", "1400", "-l", "1"), 0,
             stream_text + [r"datagrams: iperf3 sent [0-9]+, here received [0-9]+"], [])],
        "mtperf serve --iperf3 5201 --metrics 127.0.0.1:9100": "serve",
        "mtperf run --peer sockperf -H far-host -w rr -r 64 -l 10 --format json": [
            (cmd("run", "--peer", "sockperf", "-H", "@sockperf", "-w", "rr", "-r", "64", "-l", "1",
                 "--format", "json"), 0, ["json:summary.latency_us.p99", "json:peer.streams"], [])],
        "mtperf run --peer sockperf -H far-host:11112 -w rr -p udp -r 256 -l 10": [
            (cmd("run", "--peer", "sockperf", "-H", "@sockperf-udp", "-w", "rr", "-p", "udp", "-r",
                 "256", "-l", "1"), 0, rr_text, [])],
        "mtperf run --peer sockperf -H far-host -w stream -m 1024 -l 10": [
            (cmd("run", "--peer", "sockperf", "-H", "@sockperf", "-w", "stream", "-m", "1024", "-l",
                 "1"), 0, [r"sockperf"], [])],
        "mtperf serve --sockperf 11111": "serve",
        # docs/validation.md
        "mtperf run -H dut -w stream -P 4 -l 60 --verify --check "
        "'throughput>=9G,verify==0,errors==0,retransmits<=100' --format junit -o results.xml": FAR,
        "mtperf atm up --mode clip --atm-rate oc3 --name faulty --seed 7 --corrupt-after-crc every:97 "
        "--duplicate every:89 --reorder every:83 --fault-dir near-to-far --fault-min-payload 1024": [
            (cmd("atm", "up", "--mode", "clip", "--atm-rate", "oc3", "--name", "faulty", "--seed",
                 "7", "--corrupt-after-crc", "every:97", "--duplicate", "every:89", "--reorder",
                 "every:83", "--fault-dir", "near-to-far", "--fault-min-payload", "1024"), 0, [],
             [])],
        "mtperf run -T clip --testbed faulty -w stream -p udp --rate 20M --verify -l 2": [
            (cmd("run", "-T", "clip", "--testbed", "faulty", "-w", "stream", "-p", "udp", "--rate",
                 "20M", "--verify", "-l", "1"), 0,
             [r"verify +[0-9]+ bytes checked: [1-9][0-9]* receive\(s\) CORRUPTED"], [])],
        "mtperf atm status --name faulty": [
            (cmd("atm", "status", "--name", "faulty"), 0, [r"after CRC: .*corrupted [1-9]"], []),
            (cmd("atm", "down", "--name", "faulty"), 0, [r"is down"], [])],
    }


def doc_commands():
    """(source, block, command) for each command line in the README's "Using it" and in
    docs/*.md (a line continued with a backslash is one); the commands of one block share a
    folder (one writes what the next reads)."""
    out = []
    docs = sorted(f for f in os.listdir(os.path.join(SRC, "docs")) if f.endswith(".md"))
    for path, start, end in [("README.md", "## Using it", "## Layout")] + [
            ("docs/" + f, None, None) for f in docs]:
        text = open(os.path.join(SRC, path)).read()
        if start:
            text = text[text.index(start):text.index(end)]
        for n, block in enumerate(re.findall(r"```[a-z]*\n(.*?)```", text, re.S)):
            for line in re.sub(r"\s*\\\n\s*", " ", block).splitlines():
                line = re.sub(r"\s+# .*$", "", line.strip()).strip()
                if re.match(r"(mtperf( |$)|srun |mpirun )", line):
                    out.append((path, n, line))
    return out


def namespaces():
    r = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    return {l.split()[0] for l in r.stdout.splitlines() if l.startswith("mtperf-")}


def state_files():
    try:
        return {f for f in os.listdir("/run/mtperf") if f.startswith(("testbed-default", "atm-default"))}
    except FileNotFoundError:
        return set()


def free_port(proto):
    """A port nothing on loopback holds now, for a server started next."""
    import socket
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM if proto == "tcp" else socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(port, proto, deadline_s=10):
    """Whether something listens on the port before the deadline (ss: TCP listeners, UDP
    sockets bound to it)."""
    end = time.monotonic() + deadline_s
    flag = "-Hltn" if proto == "tcp" else "-Huan"
    while time.monotonic() < end:
        r = subprocess.run(["ss", flag, f"sport = :{port}"], capture_output=True, text=True)
        if r.stdout.strip():
            return True
        time.sleep(0.1)
    return False


def json_key(doc, path):
    for k in path.split("."):
        if not isinstance(doc, dict) or k not in doc or doc[k] is None:
            return False
        doc = doc[k]
    return True


class Check:
    def __init__(self):
        self.failures = []
        self.pids = []
        self.last_out = ""  # what the last step printed, for a step its output is piped into
        self.peers = {}  # "@iperf3" -> "127.0.0.1:PORT" of a peer's server started here
        self.peer_procs = []

    def start_peers(self):
        """The peers' own servers on loopback, each on a free port, for docs/interop.md."""
        for name, argv, proto in (("@iperf3", PEERS["iperf3"], "tcp"),
                                  ("@sockperf", PEERS["sockperf"], "tcp"),
                                  ("@sockperf-udp", [a for a in PEERS["sockperf"] if a != "--tcp"],
                                   "udp")):
            port = free_port(proto)
            p = subprocess.Popen(argv + [str(port)], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
            self.peer_procs.append(p)
            self.peers[name] = f"127.0.0.1:{port}"
            if not listening(port, proto):
                self.fail(f"{' '.join(argv)} {port} did not come up")

    def stop_peers(self):
        for p in self.peer_procs:
            p.terminate()
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def fail(self, what):
        self.failures.append(what)
        print("FAIL: " + what, flush=True)

    def step(self, where, words, status, checks, files, cwd, feed=None):
        t0 = time.monotonic()
        words = [self.peers.get(w, w) for w in words]
        p = subprocess.Popen([MTPERF] + words, cwd=cwd, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True,
                             stdin=subprocess.PIPE if feed else subprocess.DEVNULL)
        self.pids.append(p.pid)
        try:
            out, err = p.communicate(input=self.last_out if feed else None, timeout=120)
            self.last_out = out
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            self.fail(f"{where}: mtperf {shlex.join(words)} ran over 120 s")
            return
        print(f"  {time.monotonic() - t0:5.2f} s  rc {p.returncode}  mtperf {shlex.join(words)}",
              flush=True)
        if p.returncode != status:
            self.fail(f"{where}: mtperf {shlex.join(words)}: exit {p.returncode}, the docs give "
                      f"{status}\n{err[-2000:]}")
            return
        doc = None
        for c in checks:
            if c.startswith("json:"):
                if doc is None:
                    try:
                        doc = json.loads(out)
                    except ValueError:
                        self.fail(f"{where}: mtperf {shlex.join(words)}: stdout is not JSON")
                        return
                if not json_key(doc, c[5:]):
                    self.fail(f"{where}: mtperf {shlex.join(words)}: no {c[5:]} in its document")
            elif not re.search(c, out, re.M):
                self.fail(f"{where}: mtperf {shlex.join(words)}: no /{c}/ in\n{out[-2000:]}")
        for f in files:
            if not os.path.getsize(os.path.join(cwd, f)):
                self.fail(f"{where}: mtperf {shlex.join(words)}: {f} is empty")

    def serve(self, where, line, cwd):
        words = shlex.split(line)[1:] + ["--port", "0"]
        # The extra listeners' documented ports become ones the kernel picks (port 0).
        for i, w in enumerate(words[:-1]):
            if w in ("--iperf3", "--sockperf", "--metrics"):
                words[i + 1] = re.sub(r"[0-9]+$", "0", words[i + 1])
        if "--key-file" in words:
            key = os.path.join(cwd, "key")
            with open(key, "w") as f:
                f.write("a documented key\n")
            os.chmod(key, 0o600)
            words[words.index("--key-file") + 1] = key
        p = subprocess.Popen([MTPERF] + words, cwd=cwd, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
        self.pids.append(p.pid)
        time.sleep(0.5)
        if p.poll() is not None:
            self.fail(f"{where}: {line}: exited {p.returncode} at once:\n{p.stdout.read()}")
            return
        p.send_signal(signal.SIGTERM)
        try:
            rc = p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            self.fail(f"{where}: {line}: still running 10 s after SIGTERM")
            return
        print(f"  serve rc {rc}  mtperf {shlex.join(words)}", flush=True)
        if rc != 0:  # docs/cli.md: serve stops on SIGINT/SIGTERM and exits 0
            self.fail(f"{where}: {line}: exit {rc} after SIGTERM, the docs give 0")
        if os.path.exists(os.path.join(cwd, "key")):
            os.remove(os.path.join(cwd, "key"))

    def leftovers(self, where, before_ns, before_state):
        ns = namespaces() - before_ns
        mine = {n for n in ns for pid in self.pids if n.startswith(f"mtperf-{pid}-")}
        if "mtperf-default-near" in ns and not state_files():
            mine.add("mtperf-default-near")
        if mine:
            self.fail(f"{where}: namespaces left behind: {sorted(mine)}")
        for pid in self.pids:
            try:
                os.kill(pid, 0)
                if open(f"/proc/{pid}/stat").read().split()[2] != "Z":
                    self.fail(f"{where}: process {pid} still running")
            except (ProcessLookupError, FileNotFoundError):
                pass


def serve_log_example():
    """docs/cli.md's example of serve's log: the lines of the block after "serve logs one line"."""
    text = open(os.path.join(SRC, "docs/cli.md")).read()
    at = text.index("serve logs one line")
    block = re.search(r"```\n(.*?)```", text[at:], re.S).group(1)
    return [l for l in block.splitlines() if l.strip()]


def log_keys(line):
    return {w.split("=", 1)[0] for w in shlex.split(line) if "=" in w}


def check_serve_log(check):
    """The example of serve's log in docs/cli.md against serve's own lines: a keyed client's rr
    test, a client without the key, a SIGHUP; each documented line's keys are in the real one."""
    where = "docs/cli.md, serve's log"
    with tempfile.TemporaryDirectory(prefix="mtperf-docs-") as d:
        key = os.path.join(d, "key")
        with open(key, "w") as f:
            f.write("a documented key\n")
        os.chmod(key, 0o600)
        log = open(os.path.join(d, "serve.log"), "w+")
        p = subprocess.Popen([MTPERF, "serve", "--bind", "127.0.0.1", "--port", "0", "--key-file",
                              key], stdout=log, stderr=subprocess.STDOUT, text=True)
        port = None
        for _ in range(100):
            log.seek(0)
            m = re.search(r"listening on \S+ port ([0-9]+)", log.read())
            if m:
                port = m.group(1)
                break
            time.sleep(0.1)
        try:
            if port is None:
                check.fail(f"{where}: serve did not say where it listens")
                return
            env = dict(os.environ, MTPERF_KEY="a documented key")
            run = [MTPERF, "run", "-H", f"127.0.0.1:{port}", "-w", "rr", *SHORT]
            ok = subprocess.run(run + ["-P", "4"], env=env, capture_output=True, text=True,
                                timeout=120)
            keyless = subprocess.run(run, capture_output=True, text=True, timeout=120)
            if ok.returncode != 0 or keyless.returncode == 0:
                check.fail(f"{where}: keyed run exited {ok.returncode}, keyless {keyless.returncode}"
                           f"\n{ok.stderr[-1000:]}")
            p.send_signal(signal.SIGHUP)
            time.sleep(0.5)
        finally:
            p.send_signal(signal.SIGTERM)
            p.wait(timeout=10)
        log.seek(0)
        real = log.read().splitlines()
    shown = {"reload": "event=reload", "refused": "result=refused", "ok": "result=ok"}
    for doc_line in serve_log_example():
        kind = next((k for k, mark in shown.items() if mark in doc_line), None)
        if kind is None:
            print(f"  not produced here: {doc_line[:60]}... (an error mid-test)")
            continue
        mine = [l for l in real if shown[kind] in l and ("workload=rr" in l or kind != "ok")]
        if not mine:
            check.fail(f"{where}: no {shown[kind]} line in serve's log:\n" + "\n".join(real))
            continue
        missing = log_keys(doc_line) - log_keys(mine[0])
        if missing:
            check.fail(f"{where}: the documented line has {sorted(missing)}, serve's has not:\n"
                       f"  docs: {doc_line}\n  real: {mine[0]}")
        else:
            print(f"  serve's log: {mine[0][:100]}")
    refused = [l for l in real if "result=refused" in l]
    if refused and 'reason="authentication failed' not in refused[0]:
        check.fail(f"{where}: a keyless client is not logged as an authentication failure: {refused[0]}")


def main():
    if os.geteuid() != 0:
        print("SKIPPED: the documented commands include testbeds and ATM lines (root)")
        return 77
    known = table()
    commands = doc_commands()
    check = Check()
    unknown = [(p, c) for p, _, c in commands if c not in known]
    for p, c in unknown:
        check.fail(f"{p}: `{c}` is neither run by tests/cli/docs_commands_check.py nor listed "
                   "as not run with its reason")
    before_ns, before_state = namespaces(), state_files()
    if before_state:
        print(f"SKIPPED: a testbed or ATM line named default is up ({sorted(before_state)})")
        return 77
    not_run = []
    started = time.monotonic()
    seen = set()
    folders = {}  # (path, block) -> (its folder, the files its commands were asked to write)
    for path, block, line in commands:
        if line in seen or line not in known:
            continue
        seen.add(line)
        what = known[line]
        if isinstance(what, str) and what != "serve":
            not_run.append(f"{path}: {line}\n    not run: {what}")
            continue
        print(f"{path}: {line}", flush=True)
        if (path, block) not in folders:
            folders[(path, block)] = (tempfile.TemporaryDirectory(prefix="mtperf-docs-"), set())
        folder, expected = folders[(path, block)]
        if what == "serve":
            check.serve(path, line, folder.name)
        else:
            for words, status, checks, files, *feed in what:
                if any(w.startswith("@") for w in words) and not check.peers:
                    check.start_peers()
                check.step(path, words, status, checks, files, folder.name, feed=bool(feed))
                expected |= set(files)
        check.leftovers(path + ": " + line, before_ns, before_state)
    for (path, block), (folder, expected) in folders.items():
        extra = set(os.listdir(folder.name)) - expected
        if extra:
            check.fail(f"{path}, block {block + 1}: left {sorted(extra)} in its folder")
        folder.cleanup()
    check.stop_peers()
    print("docs/cli.md: the example of serve's log", flush=True)
    check_serve_log(check)
    # The testbed `testbed up` made is the README's to keep; the test removes it.
    subprocess.run([MTPERF, "testbed", "down"], capture_output=True)
    subprocess.run([MTPERF, "atm", "down"], capture_output=True)
    if state_files() or (namespaces() - before_ns) & {"mtperf-default-near", "mtperf-atm-default-near"}:
        check.fail("the default testbed or ATM line is still up after `down`")
    print("\nnot run here:\n" + "\n".join(not_run))
    print(f"\n{len(seen) - len(not_run)} commands run, {len(not_run)} not run, "
          f"{time.monotonic() - started:.1f} s; {len(check.failures)} failure(s)")
    return 1 if check.failures else 0


if __name__ == "__main__":
    sys.exit(main())
