#!/usr/bin/env python3
"""What quota accounting costs on the produce and fetch path, in instructions per request.

Throughput on this 2-core VM varies by 2x between runs of the same build, which hides a
difference of a few percent; instruction counts do not. Each build runs under valgrind's
callgrind (the machine exposes no hardware counters) while a raw client sends N Produce v7
requests of one 1 KiB record each, then N Fetch v10 requests of one record each, one at a
time. Two runs, N and 2N, are subtracted, so start-up and shutdown cancel out and what is left
is the broker's instructions for N more produce and N more fetch requests.

    bench/quota_cost.py NAME=BINARY[:key=value,...] ...   [--requests N]

e.g. bench/quota_cost.py before=build-bench/snapshot-a34c579/build/mskmock \\
        after=build-bench/snapshot-08bb779/build/mskmock \\
        on=build-bench/snapshot-08bb779/build/mskmock:quotas=on

Every quota and cap a binary knows is off (0) unless the spec says quotas=on, which leaves the
serverless defaults (5 MiB/s a partition, 15,000 requests/s...: far above what this sends).
"""

import argparse
import re
import signal
import socket
import subprocess
import sys
import tempfile
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


def start(binary, quotas_on, workdir):
    port = free_port()
    help_text = subprocess.run([binary, "--help"], capture_output=True, text=True).stdout
    sets = ["plaintext.port=%d" % port, "iam.port=0", "broker.count=1", "data.dir=:memory:",
            "log.level=warn", "default.replication.factor=1"]
    if not quotas_on:
        sets += ["%s=0" % k for k in QUOTA_KEYS if re.search(r"^  %s " % re.escape(k), help_text, re.M)]
    out = Path(workdir) / ("callgrind.%d" % port)
    argv = ["valgrind", "--tool=callgrind", "--callgrind-out-file=%s" % out, binary]
    for kv in sets:
        argv += ["--set", kv]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc, port, out
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


def instructions(binary, quotas_on, n):
    with tempfile.TemporaryDirectory() as d:
        proc, port, out = start(binary, quotas_on, d)
        try:
            workload(port, n)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=120)
        text = out.read_text(errors="replace")
        m = re.search(r"^summary: (\d+)", text, re.M) or re.search(r"^totals: (\d+)", text, re.M)
        return int(m.group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("specs", nargs="+")
    ap.add_argument("--requests", type=int, default=2000)
    a = ap.parse_args()
    n = a.requests
    print("| build | instructions per produce + fetch request pair | vs the first |")
    print("|---|---|---|")
    first = None
    for spec in a.specs:
        name, rest = spec.split("=", 1)
        binary, _, opts = rest.partition(":")
        on = "quotas=on" in opts
        per = (instructions(binary, on, 2 * n) - instructions(binary, on, n)) / n
        first = first or per
        print("| %s | %.0f | %+.2f%% |" % (name, per, 100 * (per / first - 1)), flush=True)


if __name__ == "__main__":
    main()
