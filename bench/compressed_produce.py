#!/usr/bin/env python3
"""Produce of compressed batches to a plain topic (issue 35): what reading every compressed
batch's records on append costs (decompression and a record walk, as Kafka's LogValidator does).

    .venv/bin/python bench/compressed_produce.py --binary build/mskmock [--binary-before OLD]
        [--runs 3] [--mb 64] [--codecs none,gzip,snappy,lz4,zstd]

Each run starts mskmock afresh (3 brokers, its defaults, fresh temp dir, --ports auto, MSK's
quotas and request-rate cap off) and, per codec, creates a 1-partition topic on its defaults
(compression.type=producer: batches are stored as produced) and produces --mb MB of records
(keys "key-<n>", 200-byte values of hex digits: about 2x compressible) with confluent-kafka
(acks=all, linger.ms=5, batch.size 1 MiB, that codec). Reported per codec: records/s and MB/s
(10^6 bytes of keys and values) from the first produce() to the end of flush(), and the broker's
CPU over that window. With --binary-before the same runs are made against that binary too,
interleaved, so both see the same machine. Prints one JSON line per measurement, then medians
[min-max].
"""

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compaction import Broker, create  # noqa: E402
from txn_throughput import CpuWindow, wait_quiet  # noqa: E402

from confluent_kafka import Producer  # noqa: E402


def produce(bootstrap, topic, codec, mb):
    rng = random.Random(7)
    values = [("%x" % rng.getrandbits(800)).rjust(200, "0").encode() for _ in range(1000)]
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "compression.type": codec, "acks": "all",
                  "batch.size": 1 << 20, "queue.buffering.max.kbytes": 1 << 20, "enable.idempotence": False})
    n = (mb * 10**6) // 210
    t0 = time.perf_counter()
    for i in range(n):
        while True:
            try:
                p.produce(topic, key=b"key-%d" % (i % 10000), value=values[i % 1000])
                break
            except BufferError:
                p.poll(0.01)
        if i % 1000 == 0:
            p.poll(0)
    if p.flush(300):
        raise RuntimeError("produce did not finish")
    return n, time.perf_counter() - t0


def one(binary, codec, mb, tmp, label):
    data = tempfile.mkdtemp(dir=tmp)
    b = Broker(binary, data, [])
    try:
        create(b.bootstrap, "t")
        wait_quiet(20)
        w = CpuWindow(b.pid)
        n, wall = produce(b.bootstrap, "t", codec, mb)
        cpu = w.done()
        return {"binary": label, "codec": codec, "records": n, "wall_s": round(wall, 3),
                "records_per_s": round(n / wall), "mb_per_s": round(n * 210 / 1e6 / wall, 1), **cpu}
    finally:
        b.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default="build/mskmock")
    ap.add_argument("--binary-before")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--mb", type=int, default=64)
    ap.add_argument("--codecs", default="none,gzip,snappy,lz4,zstd")
    a = ap.parse_args()
    binaries = [("after", a.binary)] + ([("before", a.binary_before)] if a.binary_before else [])
    rows = []
    with tempfile.TemporaryDirectory(prefix="czbench-") as tmp:
        for _ in range(a.runs):
            for codec in a.codecs.split(","):
                for label, binary in binaries:
                    r = one(os.path.abspath(binary), codec, a.mb, tmp, label)
                    print(json.dumps(r), flush=True)
                    rows.append(r)

    def med(vals):
        return "%s [%s-%s]" % (statistics.median(vals), min(vals), max(vals))

    for codec in a.codecs.split(","):
        for label, _ in binaries:
            rs = [r for r in rows if r["codec"] == codec and r["binary"] == label]
            print("%-6s %-6s records/s %s  MB/s %s  broker CPU s %s" % (
                codec, label, med([r["records_per_s"] for r in rs]), med([r["mb_per_s"] for r in rs]),
                med([r["broker_cpu_s"] for r in rs])))


if __name__ == "__main__":
    main()
