#!/usr/bin/env python3
"""Attackers of an mtperf fleet for tests/fleet/slurm_fleet.sh, written from the wire description
of control/protocol.hpp and control/link.hpp (frames, proofs, sealed frames), not from the code
that speaks it: what they do is refused only if mtperf keeps the rules those files state.

  fleet_impostor.py coordinator --port P --key-file F --plan ADDR=ACT[,ADDR=ACT...] \
      --target-port T
    A coordinator that took the fleet's port before rank 0. To the rank connecting from ADDR:
      no-challenge    a WELCOME that does not ask for the key (a downgrade): a keyed rank must
                      refuse to join;
      outside-roster  with the key: a ROUND naming this host's --target-port (no rank's server)
                      and a rank not in the roster; the RESULTS must be refusals; then a FINISH
                      modified on the path (one body byte flipped), which must end the rank;
      replay          with the key: a sealed CLOCK, then the same bytes again.
    A listener on --target-port counts the connections made to it: none must come.
    One line per rank: "ADDR ACT: ..."; then "target connections: N".

  fleet_impostor.py stall --listen PORT --to HOST:PORT
    On the path between one rank and its coordinator: every frame forwarded both ways until the
    rank's RESULTS, of which half is forwarded; then nothing, until the coordinator hangs up.
"""
import argparse
import hashlib
import hmac
import json
import os
import secrets
import socket
import sys
import threading
import time

MAGIC = b"MTPF"
VERSION = 3
HEADER = 12
TRAILER = 32
TYPES = {"hello": 1, "welcome": 2, "error": 9, "join": 13, "roster": 14, "clock": 15,
         "round": 16, "results": 17, "finish": 18}
NAMES = {v: k for k, v in TYPES.items()}
IO_S = 20


def canonical(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def mac(key, *parts):
    return hmac.new(key, b"\0".join(parts), hashlib.sha256).digest()


def recv_exact(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise EOFError(f"the peer closed after {len(data)} of {n} bytes")
        data += chunk
    return data


class Conn:
    """One control connection, plain until seal(): then each frame carries
    HMAC-SHA256(K_dir, seq | header | body), seq counting each direction's frames from 0."""

    def __init__(self, sock):
        self.sock = sock
        self.send_key = self.recv_key = None
        self.send_seq = self.recv_seq = 0

    def seal(self, key, initiator, nonce_init, nonce_resp):
        init = mac(key, b"mtperf seal", b"initiator", nonce_init, nonce_resp)
        resp = mac(key, b"mtperf seal", b"responder", nonce_init, nonce_resp)
        self.send_key, self.recv_key = (init, resp) if initiator else (resp, init)

    def frame(self, kind, body):
        data = canonical(body)
        plain = MAGIC + bytes([VERSION, TYPES[kind], 0, 0]) + len(data).to_bytes(4, "big") + data
        if self.send_key is None:
            return plain
        tag = hmac.new(self.send_key, self.send_seq.to_bytes(8, "big") + plain,
                       hashlib.sha256).digest()
        self.send_seq += 1
        return plain + tag

    def send(self, kind, body):
        self.sock.sendall(self.frame(kind, body))

    def recv(self):
        header = recv_exact(self.sock, HEADER)
        if header[:4] != MAGIC or header[4] != VERSION:
            raise ValueError(f"not an mtperf frame: {header!r}")
        length = int.from_bytes(header[8:12], "big")
        if length > 1 << 20:
            raise ValueError(f"a frame of {length} bytes")
        body = recv_exact(self.sock, length)
        if self.recv_key is not None:
            tag = recv_exact(self.sock, TRAILER)
            want = hmac.new(self.recv_key, self.recv_seq.to_bytes(8, "big") + header + body,
                            hashlib.sha256).digest()
            if not hmac.compare_digest(tag, want):
                raise ValueError(f"frame {self.recv_seq} of the rank fails its MAC")
            self.recv_seq += 1
        return NAMES.get(header[5], str(header[5])), json.loads(body)


def welcome_keyed(conn, key):
    """HELLO, WELCOME with a challenge and the coordinator's proof, the JOIN; sealed after."""
    kind, hello = conn.recv()
    assert kind == "hello", kind
    nonce = hello["nonce"].encode()
    challenge = secrets.token_hex(16).encode()
    proof = mac(key, b"mtperf prove", b"coordinator", nonce, challenge).hex()
    conn.send("welcome", {"version": VERSION, "challenge": challenge.decode(), "proof": proof})
    kind, join = conn.recv()
    assert kind == "join", kind
    conn.seal(key, False, nonce, challenge)
    return join["member"]["rank"]


def closed_by_peer(sock, seconds=IO_S):
    """Whether the rank hangs up (rather than answering) within `seconds`."""
    sock.settimeout(seconds)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


def no_challenge(conn, key):
    kind, _ = conn.recv()
    assert kind == "hello", kind
    conn.send("welcome", {"version": VERSION})
    # A rank fooled into going on would send its JOIN now.
    return "the rank hung up without a JOIN" if closed_by_peer(conn.sock) else "a JOIN came"


def outside_roster(conn, key, address, target_port):
    rank = welcome_keyed(conn, key)
    peers = [[0, "10.77.0.1:12865"], [rank, f"{address}:9"]]
    conn.send("roster", {"size": 4, "peers": peers, "pattern": "all-pairs", "steps": 1,
                         "wait_ms": 5000})
    runs = [{"index": 0, "transport": 0, "dst": 0, "server": f"10.77.0.1:{target_port}"},
            {"index": 1, "transport": 0, "dst": 3, "server": f"10.77.0.1:{target_port}"}]
    conn.send("round", {"step": 0, "start_ns": 0, "runs": runs})
    while True:
        kind, body = conn.recv()
        if kind == "results":
            break
        assert kind == "clock", kind
    errors = [r["result"].get("error", "") for r in body["results"]]
    refused = sum(1 for e in errors if e.startswith(f"refused by rank {rank}"))
    tampered = bytearray(conn.frame("finish", {"ok": True}))
    tampered[HEADER + 2] ^= 0x01
    conn.sock.sendall(bytes(tampered))
    gone = closed_by_peer(conn.sock)
    return (f"rank {rank} refused {refused} of {len(runs)} runs; " +
            ("it hung up on the modified FINISH" if gone else "it took the modified FINISH"))


def replay(conn, key):
    rank = welcome_keyed(conn, key)
    frame = conn.frame("clock", {})
    conn.sock.sendall(frame)
    kind, _ = conn.recv()
    assert kind == "clock", kind
    conn.sock.sendall(frame)
    gone = closed_by_peer(conn.sock)
    return f"rank {rank} " + ("hung up on the replayed CLOCK" if gone else "answered the replay")


def coordinator(a):
    with open(a.key_file, "rb") as f:
        key = f.read().strip()
    plan = dict(item.split("=", 1) for item in a.plan.split(","))
    target = socket.create_server(("0.0.0.0", a.target_port))
    target.settimeout(0.2)
    listener = socket.create_server(("0.0.0.0", a.port))
    listener.settimeout(1)
    print("listening", flush=True)
    taken = 0
    done = []

    def serve(sock, address):
        conn = Conn(sock)
        sock.settimeout(IO_S)
        act = plan[address]
        try:
            if act == "no-challenge":
                said = no_challenge(conn, key)
            elif act == "outside-roster":
                said = outside_roster(conn, key, address, a.target_port)
            else:
                said = replay(conn, key)
        except Exception as e:  # an attacker's view: report what happened, go on
            said = f"{type(e).__name__}: {e}"
        finally:
            sock.close()
        print(f"{address} {act}: {said}", flush=True)
        done.append(address)

    threads = []
    deadline = time.time() + a.seconds
    while len(done) < len(plan) and time.time() < deadline:
        try:
            target.accept()[0].close()
            taken += 1
        except socket.timeout:
            pass
        if len(threads) < len(plan):
            try:
                sock, (address, _) = listener.accept()
            except socket.timeout:
                continue
            if address not in plan:
                sock.close()
                continue
            t = threading.Thread(target=serve, args=(sock, address))
            t.start()
            threads.append(t)
    for t in threads:
        t.join()
    print(f"target connections: {taken}", flush=True)


def stall(a):
    host, port = a.to.rsplit(":", 1)
    listener = socket.create_server(("0.0.0.0", a.listen))
    listener.settimeout(a.seconds)
    rank, _ = listener.accept()
    up = socket.create_connection((host, int(port)), timeout=IO_S)
    sealed = False

    def down():  # the coordinator's frames, as they come
        try:
            while True:
                data = up.recv(65536)
                if not data:
                    break
                rank.sendall(data)
        except OSError:
            pass
        rank.close()

    threading.Thread(target=down, daemon=True).start()
    rank.settimeout(None)
    while True:
        header = recv_exact(rank, HEADER)
        length = int.from_bytes(header[8:12], "big")
        rest = recv_exact(rank, length + (TRAILER if sealed else 0))
        if header[5] == TYPES["results"]:
            whole = header + rest
            up.sendall(whole[:len(whole) // 2])
            print(f"forwarded {len(whole) // 2} of the {len(whole)} bytes of RESULTS", flush=True)
            break
        up.sendall(header + rest)
        sealed = sealed or header[5] == TYPES["join"]
    up.settimeout(a.seconds)
    try:
        gone = up.recv(1) == b""
    except (socket.timeout, ConnectionResetError):
        gone = False
    print("the coordinator hung up" if gone else "the coordinator kept waiting", flush=True)
    up.close()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="mode", required=True)
    c = sub.add_parser("coordinator")
    c.add_argument("--port", type=int, default=12866)
    c.add_argument("--key-file", required=True)
    c.add_argument("--plan", required=True)
    c.add_argument("--target-port", type=int, required=True)
    c.add_argument("--seconds", type=float, default=60)
    s = sub.add_parser("stall")
    s.add_argument("--listen", type=int, required=True)
    s.add_argument("--to", required=True)
    s.add_argument("--seconds", type=float, default=60)
    a = p.parse_args()
    coordinator(a) if a.mode == "coordinator" else stall(a)


if __name__ == "__main__":
    sys.exit(main())
