#!/usr/bin/env python3
"""What the broker spends on the produce and fetch path, in instructions per request, to compare
builds and settings: quota accounting (issue 13), fault-rule checks and metrics (issue 14).

Throughput on this 2-core VM varies by 2x between runs of the same build, which hides a
difference of a few percent; instruction counts do not. Each build runs under valgrind's
callgrind (the machine exposes no hardware counters) while a raw client sends N Produce v7
requests of one 1 KiB record each, then N Fetch v10 requests of one record each, one at a
time. Two runs, N and 2N, are subtracted, so start-up and shutdown cancel out and what is left
is the broker's instructions for N more produce and N more fetch requests.

    bench/request_cost.py NAME=BINARY[:option,...] ...   [--requests N] [--json]

e.g. bench/request_cost.py before=build-bench/snapshot-a34c579/build/mskmock \\
        after=build-bench/snapshot-08bb779/build/mskmock \\
        on=build-bench/snapshot-08bb779/build/mskmock:quotas=on

Every quota and cap a binary knows is off (0) unless the spec says quotas=on, which leaves the
serverless defaults (5 MiB/s a partition, 15,000 requests/s...: far above what this sends).
Options for a binary with the admin API (admin.port): rules=K adds K fault rules that match
none of these requests (JoinGroup rules for other groups) before the workload, so every request
is checked against K rules; scrape=on scrapes /metrics once a second during the run, as a
Prometheus would. admin=off turns the admin API off (admin.port=0).

The data is in memory (data.dir=:memory:) unless the spec says data=disk: then a data dir in a
fresh temp dir with the binary's default storage (storage.sync=normal: SQLite in WAL mode and
segment files), so the count includes the commits, the segment writes and the checkpoint thread
of the default durable mode (every thread is counted); data=disk,sync=off sets storage.sync=off
too. --json prints one JSON line per spec after its table row (name, instructions_per_pair).
"""

import argparse
import http.client
import json
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "integration"))
import kafka_wire as kw  # noqa: E402

QUOTA_KEYS = ("quota.partition.ingress.bytes.per.second", "quota.partition.egress.bytes.per.second",
              "quota.cluster.ingress.bytes.per.second", "quota.cluster.egress.bytes.per.second",
              "max.request.rate", "max.partition.mutations.per.5.minutes")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def knows(help_text, key):
    return re.search(r"^  %s " % re.escape(key), help_text, re.M) is not None


def start(binary, opts, workdir):
    port = free_port()
    help_text = subprocess.run([binary, "--help"], capture_output=True, text=True).stdout
    data = ":memory:"
    if opts.get("data") == "disk":
        data = str(Path(workdir) / "data")
        Path(data).mkdir()
    sets = ["plaintext.port=%d" % port, "iam.port=0", "broker.count=1", "data.dir=%s" % data,
            "log.level=warn", "default.replication.factor=1"]
    if opts.get("sync"):
        sets.append("storage.sync=%s" % opts["sync"])
    if opts.get("quotas") != "on":
        sets += ["%s=0" % k for k in QUOTA_KEYS if knows(help_text, k)]
    admin = None
    if knows(help_text, "admin.port"):
        admin = None if opts.get("admin") == "off" else free_port()
        sets.append("admin.port=%d" % (admin or 0))
    out = Path(workdir) / ("callgrind.%d" % port)
    argv = ["valgrind", "--tool=callgrind", "--callgrind-out-file=%s" % out, binary]
    for kv in sets:
        argv += ["--set", kv]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc, port, out, admin
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError("broker did not start: %s" % proc.stderr.read()[-2000:])


def workload(port, n):
    with kw.connect(port, timeout=60) as s:
        s.sendall(kw.create_topics_request(kw.CREATE_TOPICS_V, 1, "bench", "q", 1, 1))
        kw.recv_frame(s)
        value = b"v" * 1024
        for i in range(n):
            s.sendall(kw.produce_request(kw.PRODUCE_V, 10 + i, "bench", "q", 0,
                                         kw.record_batch([(None, value, ())]), acks=1))
            kw.recv_frame(s)
        for i in range(n):
            s.sendall(kw.fetch_request(10 + n + i, "bench", "q", 0, i, max_bytes=2048))
            kw.recv_frame(s)


def admin_call(admin, method, path, body=None):
    c = http.client.HTTPConnection("127.0.0.1", admin, timeout=60)
    c.request(method, path, body=json.dumps(body) if body is not None else None)
    r = c.getresponse()
    r.read()
    c.close()
    if r.status >= 300:
        raise RuntimeError("%s %s: %d" % (method, path, r.status))


def scraper(admin, stop):
    while not stop.wait(1.0):
        admin_call(admin, "GET", "/metrics")


def instructions(binary, opts, n):
    with tempfile.TemporaryDirectory() as d:
        proc, port, out, admin = start(binary, opts, d)
        stop = threading.Event()
        try:
            for k in range(int(opts.get("rules", 0))):
                admin_call(admin, "POST", "/v1/faults", {"api": "JoinGroup", "group": "not-this-one-%d" % k,
                                                         "error": "REBALANCE_IN_PROGRESS"})
            if opts.get("scrape") == "on":
                threading.Thread(target=scraper, args=(admin, stop), daemon=True).start()
            workload(port, n)
        finally:
            stop.set()
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=120)
        return callgrind_instructions(out.read_text(errors="replace"))


def callgrind_instructions(text):
    """Every thread's instructions in a callgrind dump: its summary (or totals) line."""
    m = re.search(r"^summary: (\d+)", text, re.M) or re.search(r"^totals: (\d+)", text, re.M)
    return int(m.group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("specs", nargs="+")
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--json", action="store_true", help="also one JSON line per spec")
    a = ap.parse_args()
    n = a.requests
    print("| build | instructions per produce + fetch request pair | vs the first |")
    print("|---|---|---|")
    first = None
    for spec in a.specs:
        name, rest = spec.split("=", 1)
        binary, _, spec_opts = rest.partition(":")
        opts = dict(kv.split("=", 1) for kv in spec_opts.split(",") if kv)
        per = (instructions(binary, opts, 2 * n) - instructions(binary, opts, n)) / n
        first = first or per
        print("| %s | %.0f | %+.2f%% |" % (name, per, 100 * (per / first - 1)), flush=True)
        if a.json:
            print(json.dumps({"name": name, "binary": binary, "options": opts, "requests": n,
                              "instructions_per_pair": round(per)}), flush=True)


if __name__ == "__main__":
    main()
