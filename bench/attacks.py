#!/usr/bin/env python3
"""attacks: the broker's RSS under the resource attacks of issue 11, each on a fresh broker.

  huge-frames   10 unauthenticated connections on the SASL_PLAINTEXT listener each announce a
                90 MB frame and send as much of it as the broker reads (bounded at 90 MB each)
  never-reads   one plaintext connection sends 750 Fetch requests, each answered with ~1 MB,
                and reads nothing for 5 s
  drip          700 connections each send one byte of a frame per second, for 8 s past
                request.read.timeout.ms (set to 5 s here; 120 s by default)

For each: RSS before, the peak (VmHWM) during, RSS after, and how many attack connections the
broker still held at the end. --unprotected sets the limits to what the broker had before
(sasl.server.max.receive.size = socket.request.max.bytes, no response queue bound, no read
deadline) for the comparison.

  .venv/bin/python bench/attacks.py [--binary build/mskmock] [--unprotected] [--only NAME]

Runs only against 127.0.0.1, with bounded counts and times, and stops by itself.
"""

import argparse
import json
import socket
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "integration"))

import kafka_wire as kw  # noqa: E402
from iam import IamBroker, write_identities  # noqa: E402

DRIP_TIMEOUT_MS = 5000


def status_mib(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


def open_conns(broker, kind):
    """Connections the broker still has open from 127.0.0.1 on the listener's port."""
    port = {"plaintext": broker.port, "sasl": broker.sasl_plaintext_port}[kind]
    n = 0
    with open("/proc/net/tcp") as f:
        for line in f.readlines()[1:]:
            local, st = line.split()[1], line.split()[3]
            if int(local.split(":")[1], 16) == port and st == "01":  # ESTABLISHED
                n += 1
    return n


def huge_frames(broker):
    socks = []
    for _ in range(10):
        s = kw.connect(broker.sasl_plaintext_port, timeout=2)
        s.sendall(kw.i32(90 << 20))
        socks.append(s)
    chunk = b"\0" * (1 << 20)
    sent = [0] * len(socks)
    live = set(range(len(socks)))
    deadline = time.monotonic() + 60
    while live and time.monotonic() < deadline:
        for i in list(live):
            try:
                socks[i].sendall(chunk)
                sent[i] += 1
                if sent[i] >= 90:
                    live.discard(i)
            except OSError:
                live.discard(i)
    time.sleep(1)
    return socks, {"MiB accepted per connection": sent}


def never_reads(broker):
    topic = "attack-fetch"
    with kw.connect(broker.port) as s:
        s.sendall(kw.create_topics_request(1, 1, "attack", topic, 1, 1))
        kw.recv_frame(s)
        for i in range(4):
            batch = kw.record_batch([(b"k", bytes([65 + i]) * (250 << 10), ())])
            s.sendall(kw.produce_request(3, 10 + i, "attack", topic, 0, batch))
            kw.recv_frame(s)
    hog = kw.connect(broker.port, timeout=2)
    hog.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 10)
    hog.setblocking(False)
    frames = b"".join(kw.fetch_request(1000 + i, "attack", topic, 0, 0) for i in range(750))
    sent, deadline = 0, time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            if sent < len(frames):
                sent += hog.send(frames[sent:])
        except BlockingIOError:
            pass
        time.sleep(0.05)
    return [hog], {"request bytes the broker took": sent, "of": len(frames)}


def drip(broker):
    socks = []
    for _ in range(700):
        socks.append(kw.connect(broker.port, timeout=2))
    frame = kw.api_versions_request(1, "drip")
    end = time.monotonic() + DRIP_TIMEOUT_MS / 1000 + 8
    i = 0
    while time.monotonic() < end:
        for s in socks:
            try:
                s.send(frame[i % len(frame):i % len(frame) + 1])
            except OSError:
                pass
        i += 1
        time.sleep(1)
    return socks, {}


ATTACKS = {"huge-frames": (huge_frames, "sasl"), "never-reads": (never_reads, "plaintext"),
           "drip": (drip, "plaintext")}


def run(name, binary, unprotected, workdir):
    ids = write_identities(Path(workdir) / ("ids-%s.json" % name))
    cfg = {"request.read.timeout.ms": DRIP_TIMEOUT_MS, "default.replication.factor": 1}
    if unprotected:
        cfg.update({"sasl.server.max.receive.size": 104857600,
                    "socket.response.queue.max.bytes": 1 << 62, "request.read.timeout.ms": 0})
    b = IamBroker(ids, broker_count=1, credentials_endpoint=False, config=cfg, binary=binary,
                  log_level="warn")
    b.start()
    try:
        pid = b.proc.pid
        before = status_mib(pid, "VmRSS")
        fn, kind = ATTACKS[name]
        socks, extra = fn(b)
        res = {"attack": name, "protected": not unprotected, "rss_before_mib": round(before, 1),
               "rss_peak_mib": round(status_mib(pid, "VmHWM"), 1),
               "rss_during_mib": round(status_mib(pid, "VmRSS"), 1),
               "attack_connections_still_open": open_conns(b, kind), **extra}
        for s in socks:
            s.close()
        b.stop(check=True)
        return res
    finally:
        b.cleanup()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default=str(ROOT / "build" / "mskmock"))
    ap.add_argument("--unprotected", action="store_true")
    ap.add_argument("--only", choices=sorted(ATTACKS))
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        for name in [a.only] if a.only else ATTACKS:
            print(json.dumps(run(name, a.binary, a.unprotected, d)), flush=True)


if __name__ == "__main__":
    main()
