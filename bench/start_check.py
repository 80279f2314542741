#!/usr/bin/env python3
"""What storage.verify costs (issue 35): the start-up check of segment files against the index, and
the CRC check of every batch a Fetch serves with storage.verify=full.

    .venv/bin/python bench/start_check.py [--bin build/mskmock] [--partitions 1000]
        [--batches 20] [--batch-bytes 1000] [--starts 5] [--consume-mb 300]

start: one data directory with --partitions partitions (10 topics), each given --batches batches
  of one record of --batch-bytes bytes (confluent-kafka, linger 0, so each record is a batch);
  then --starts starts with each of storage.verify=off, start and full, in turn. Each start is
  timed by the broker itself: the "segment files checked" line (the check alone) and the "ready
  in" line (the whole start).
fetch: in the kafka profile (the serverless one's per-partition egress quota would pace the read),
  one partition holding --consume-mb MB of 1 KB records (batches of about 64 KB); a
  confluent-kafka consumer reads it all from offset 0, three times with each of
  storage.verify=start and full. Measured: the broker's CPU (utime+stime of /proc/PID/stat)
  during the read, and the wall time of the read.

Prints one JSON line per measurement, then medians.
"""

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

ROOT = Path(__file__).resolve().parents[1]
CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid):
    fields = Path("/proc/%d/stat" % pid).read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


class Broker:
    def __init__(self, binary, data_dir, verify, profile="serverless"):
        self.log = data_dir / ("broker-%s.log" % verify)
        ready = data_dir / "ready.json"
        if ready.exists():
            ready.unlink()
        env = dict(os.environ, MSKMOCK_DATA_DIR=str(data_dir), MSKMOCK_STORAGE_VERIFY=verify,
                   MSKMOCK_PORTS_AUTO="true", MSKMOCK_READY_FILE=str(ready), MSKMOCK_IAM_PORT="0",
                   MSKMOCK_ADMIN_PORT="0", MSKMOCK_DEFAULT_REPLICATION_FACTOR="3", MSKMOCK_PROFILE=profile)
        with open(self.log, "ab") as f:
            self.proc = subprocess.Popen([binary], env=env, stdout=f, stderr=f, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while not ready.exists() or not ready.read_text().strip():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                sys.exit("broker did not start:\n" + self.log.read_text()[-3000:])
            time.sleep(0.02)
        info = json.loads(ready.read_text())
        self.bootstrap = info["bootstrap"]["plaintext"]

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(60)


def fill(bootstrap, topics, partitions_each, batches, size):
    a = AdminClient({"bootstrap.servers": bootstrap})
    for f in a.create_topics([NewTopic(t, partitions_each) for t in topics]).values():
        f.result(60)
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0, "batch.num.messages": 1, "acks": "all"})
    value = b"x" * size
    for _ in range(batches):
        for t in topics:
            for part in range(partitions_each):
                p.produce(t, value, partition=part)
                p.poll(0)
    assert p.flush(120) == 0
    del p, a  # closed before the broker stops, so they do not retry into the log


def start_part(args, binary, tmp):
    data = tmp / "start"
    data.mkdir()
    b = Broker(binary, data, "start")
    topics = ["t%02d" % i for i in range(10)]
    fill(b.bootstrap, topics, args.partitions // 10, args.batches, args.batch_bytes)
    b.stop()
    out = {}
    for verify in ("off", "start", "full"):
        for _ in range(args.starts):
            log = data / ("broker-%s.log" % verify)
            since = log.stat().st_size if log.exists() else 0
            br = Broker(binary, data, verify)
            br.stop()
            text = log.read_text()[since:]
            ready = float(re.search(r"ready in ([0-9.]+) ms", text).group(1))
            m = re.search(r"(\d+) segment files checked .* (\d+) batches read, (\d+) bytes\) in (\d+) ms", text)
            row = {"part": "start", "verify": verify, "ready_ms": ready,
                   "check_ms": int(m.group(4)) if m else 0, "segments": int(m.group(1)) if m else 0,
                   "batches_read": int(m.group(2)) if m else 0, "bytes_read": int(m.group(3)) if m else 0}
            print(json.dumps(row), flush=True)
            out.setdefault(verify, []).append(row)
    for verify, rows in out.items():
        print("start, storage.verify=%-5s: check %5.1f ms, whole start %6.1f ms (medians of %d; %d segments, %d "
              "batches and %d bytes read)" % (verify, statistics.median(r["check_ms"] for r in rows),
                                               statistics.median(r["ready_ms"] for r in rows), len(rows),
                                               rows[0]["segments"], rows[0]["batches_read"], rows[0]["bytes_read"]))


def fetch_part(args, binary, tmp):
    data = tmp / "fetch"
    data.mkdir()
    b = Broker(binary, data, "start", "kafka")
    admin = AdminClient({"bootstrap.servers": b.bootstrap})
    admin.create_topics([NewTopic("big", 1)])["big"].result(60)
    p = Producer({"bootstrap.servers": b.bootstrap, "linger.ms": 20, "batch.size": 65536})
    n = args.consume_mb * 1000
    value = b"y" * 1000
    for _ in range(n):
        while True:
            try:
                p.produce("big", value, partition=0)
                break
            except BufferError:
                p.poll(0.05)
        p.poll(0)
    assert p.flush(300) == 0
    del p, admin
    b.stop()
    out = {}
    for verify in ("start", "full") * 3:
        br = Broker(binary, data, verify, "kafka")
        c = Consumer({"bootstrap.servers": br.bootstrap, "group.id": "bench-%s-%f" % (verify, time.time()),
                      "enable.auto.commit": False, "fetch.max.bytes": 52428800,
                      "max.partition.fetch.bytes": 10485760})
        c.assign([TopicPartition("big", 0, 0)])
        got, cpu0, t0 = 0, cpu_s(br.proc.pid), time.monotonic()
        while got < n:
            for m in c.consume(10000, 5):
                if not m.error():
                    got += 1
        wall, cpu = time.monotonic() - t0, cpu_s(br.proc.pid) - cpu0
        c.close()
        br.stop()
        row = {"part": "fetch", "verify": verify, "records": got, "wall_s": round(wall, 3), "broker_cpu_s": cpu}
        print(json.dumps(row), flush=True)
        out.setdefault(verify, []).append(row)
    for verify, rows in out.items():
        print("fetch of %d MB, storage.verify=%-5s: broker CPU %.2f s, read %.2f s (medians of %d)" % (
            args.consume_mb, verify, statistics.median(r["broker_cpu_s"] for r in rows),
            statistics.median(r["wall_s"] for r in rows), len(rows)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=str(ROOT / "build" / "mskmock"))
    ap.add_argument("--part", default="start,fetch")
    ap.add_argument("--partitions", type=int, default=1000)
    ap.add_argument("--batches", type=int, default=20)
    ap.add_argument("--batch-bytes", type=int, default=1000)
    ap.add_argument("--starts", type=int, default=5)
    ap.add_argument("--consume-mb", type=int, default=300)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="mskmock-bench-verify-"))
    try:
        if "start" in args.part:
            start_part(args, args.bin, tmp)
        if "fetch" in args.part:
            fetch_part(args, args.bin, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
