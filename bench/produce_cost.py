#!/usr/bin/env python3
"""What the broker spends per MB produced in large batches (issue 37, goal 1): user-space
instructions (callgrind, every thread) or system calls (strace -c -f) per MB of 1 KiB records.

A confluent-kafka producer (acks=all, linger.ms=5, batch.size 1 MB, no compression: close to
librdkafka's defaults in mskbench's produce phase) sends N and then, to a second broker, 2N
records of 1 KiB to a topic of P partitions; the two counts are subtracted so start-up, topic
creation and shutdown cancel out. The data dir is on disk with the binary's defaults
(storage.sync=normal), so the count includes the segment writes and the commits.

    bench/produce_cost.py NAME=BINARY ... [--records N] [--partitions P] [--strace] [--json] [--keep DIR]

Instruction counts do not depend on the machine's load; the syscall counts depend a little on
it (how many reads a frame takes depends on how fast the client sends).
"""

import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from confluent_kafka import Producer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "integration"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import kafka_wire as kw  # noqa: E402
from request_cost import QUOTA_KEYS, callgrind_instructions, free_port  # noqa: E402  (the same broker set-up as request_cost.py's)


def start(binary, workdir, use_strace):
    port = free_port()
    help_text = subprocess.run([binary, "--help"], capture_output=True, text=True).stdout
    data = Path(workdir) / "data"
    data.mkdir()
    sets = ["plaintext.port=%d" % port, "iam.port=0", "broker.count=1", "data.dir=%s" % data,
            "log.level=warn", "default.replication.factor=1"]
    sets += ["%s=0" % k for k in QUOTA_KEYS if re.search(r"^  %s " % re.escape(k), help_text, re.M)]
    if re.search(r"^  admin.port ", help_text, re.M):
        sets.append("admin.port=0")
    out = Path(workdir) / "trace"
    if use_strace:
        argv = ["strace", "-c", "-f", "-o", str(out), binary]
    else:
        argv = ["valgrind", "--tool=callgrind", "--dump-instr=no", "--callgrind-out-file=%s" % out, binary]
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


def workload(port, n, partitions):
    with kw.connect(port, timeout=60) as s:
        s.sendall(kw.create_topics_request(kw.CREATE_TOPICS_V, 1, "bench", "big", partitions, 1))
        kw.recv_frame(s)
    p = Producer({"bootstrap.servers": "127.0.0.1:%d" % port, "acks": "all", "linger.ms": 5,
                  "batch.size": 1000000, "compression.type": "none", "enable.idempotence": False})
    value = b"v" * 1024
    failed = []

    def cb(err, _msg):
        if err is not None:
            failed.append(err)
    for i in range(n):
        while True:
            try:
                p.produce("big", value, partition=i % partitions, on_delivery=cb)
                break
            except BufferError:
                p.poll(0.01)
    if p.flush(120) != 0 or failed:
        raise RuntimeError("produce failed: %s" % failed[:3])


def measure(name, binary, n, partitions, use_strace, keep):
    with tempfile.TemporaryDirectory(dir="/tmp") as d:
        proc, port, out = start(binary, d, use_strace)
        try:
            workload(port, n, partitions)
        finally:
            if use_strace:
                # strace does not pass SIGTERM on to the broker: the broker is its child
                kids = Path("/proc/%d/task/%d/children" % (proc.pid, proc.pid)).read_text().split()
                for k in kids:
                    os.kill(int(k), signal.SIGTERM)
            else:
                proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=300)
        text = out.read_text(errors="replace")
        if keep:
            Path(keep).mkdir(parents=True, exist_ok=True)
            kind = "strace" if use_strace else "callgrind"
            (Path(keep) / ("%s.p%d.n%d.%s" % (name, partitions, n, kind))).write_text(text)
        if use_strace:
            calls = {}
            for line in text.splitlines():
                f = line.split()
                if len(f) >= 5 and f[-1] != "total" and f[3].isdigit():
                    calls[f[-1]] = int(f[3])
            return calls
        return callgrind_instructions(text)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("specs", nargs="+")
    ap.add_argument("--records", type=int, default=50000)
    ap.add_argument("--partitions", type=int, default=1)
    ap.add_argument("--strace", action="store_true")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--keep", help="a directory to keep each run's callgrind or strace output in")
    a = ap.parse_args()
    mb = a.records * 1024 / 1e6
    for spec in a.specs:
        name, binary = spec.split("=", 1)
        one = measure(name, binary, a.records, a.partitions, a.strace, a.keep)
        two = measure(name, binary, 2 * a.records, a.partitions, a.strace, a.keep)
        if a.strace:
            per = {k: round((two.get(k, 0) - one.get(k, 0)) / mb, 1) for k in set(one) | set(two)}
            per = {k: v for k, v in sorted(per.items(), key=lambda kv: -kv[1]) if v >= 0.5}
            total = round(sum(per.values()), 1)
            print("%-10s P=%d syscalls per MB %.1f  %s" % (name, a.partitions, total, per))
            if a.json:
                print(json.dumps({"name": name, "partitions": a.partitions, "syscalls_per_mb": total, "by_call": per}))
        else:
            per = (two - one) / mb
            print("%-10s P=%d instructions per MB %.0f" % (name, a.partitions, per))
            if a.json:
                print(json.dumps({"name": name, "partitions": a.partitions, "instructions_per_mb": round(per)}))


if __name__ == "__main__":
    main()
