#!/usr/bin/env python3
"""Another client's produce latency while one client sends valid big compressed batches whose
records get a pass (issue 35: the record pass off the loop).

    .venv/bin/python bench/produce_stall.py --binary build/mskmock [--binary-before OLD]
        [--runs 3] [--seconds 10] [--records 2000000] [--codec zstd] [--set KEY=VALUE ...]

Each run starts mskmock afresh (3 brokers, its defaults, fresh temp dir, --ports auto, MSK's
quotas and request-rate cap off) and creates two 1-partition topics: "big", compacted
(cleanup.policy=compact, max.message.bytes 8 MiB: the rebuilt batch, its offset deltas
renumbered, compresses less well than the one sent), and "bystander", on its defaults. The bystander, a confluent-kafka producer (acks=all, linger.ms=0),
sends one 100-byte record every 2 ms; its latency is produce() to the delivery report. First
--seconds without load, then --seconds while another client sends, one after another on one
connection, a raw Produce v8 of one batch of --records identical 9-byte keyed records ("k" ->
"v", offset deltas 0, so the broker renumbers them and rebuilds the batch: a valid batch Kafka
rewrites too) compressed with --codec. Reported: the bystander's p50, p99 and max without and
with the big batches, how many big batches were answered and their median answer time. With
--binary-before the same runs are made against that binary too, interleaved.
"""

import argparse
import ctypes
import json
import os
import statistics
import sys
import tempfile
import threading
import time
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "integration"))
from compaction import Broker, create  # noqa: E402

import kafka_wire as kw  # noqa: E402
from confluent_kafka import Producer  # noqa: E402

GZIP, ZSTD = 1, 4
RECORD9 = kw.record(0, b"k", b"v")
assert len(RECORD9) == 9


def zstd(data):
    z = ctypes.CDLL("libzstd.so.1")
    z.ZSTD_compressBound.restype = ctypes.c_size_t
    z.ZSTD_compressBound.argtypes = [ctypes.c_size_t]
    z.ZSTD_compress.restype = ctypes.c_size_t
    z.ZSTD_compress.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int]
    z.ZSTD_isError.argtypes = [ctypes.c_size_t]
    cap = z.ZSTD_compressBound(len(data))
    out = ctypes.create_string_buffer(cap)
    n = z.ZSTD_compress(out, cap, data, len(data), 3)
    if z.ZSTD_isError(n):
        raise RuntimeError("ZSTD_compress failed")
    return out.raw[:n]


def big_batch(n, codec):
    recs = RECORD9 * n
    section = zstd(recs) if codec == "zstd" else zlib.compress(recs, 6, 31) if codec == "gzip" else recs
    attr = {"zstd": ZSTD, "gzip": GZIP, "none": 0}[codec]
    ts = int(time.time() * 1000)
    after_crc = (kw.i16(attr) + kw.i32(n - 1) + kw.i64(ts) + kw.i64(ts) + kw.i64(-1) + kw.i16(-1) + kw.i32(-1)
                 + kw.i32(n) + section)
    after_length = kw.i32(-1) + kw.i8(2) + kw.u32(kw.crc32c(after_crc)) + after_crc
    return kw.i64(0) + kw.i32(len(after_length)) + after_length


def leader_port(bootstrap, topic):
    sock = kw.connect(int(bootstrap.rsplit(":", 1)[1]))
    try:
        md = kw.parse_metadata(kw.METADATA_V, kw.roundtrip(sock, lambda c: kw.metadata_request(kw.METADATA_V, c, "b", [topic])))
    finally:
        sock.close()
    return md["brokers"][md["topics"][0]["partitions"][0]["leader"]][1]


def bystander(bootstrap, seconds):
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0, "acks": "all"})
    p.produce("bystander", b"warm-up")
    p.flush(10)
    lat, errors = [], []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        t0 = time.perf_counter()
        p.produce("bystander", b"v" * 100,
                  on_delivery=lambda err, msg, t0=t0: errors.append(err) if err else lat.append(time.perf_counter() - t0))
        p.poll(0)
        time.sleep(0.002)
    p.flush(30)
    if errors:
        raise RuntimeError("bystander errors: %s" % errors[:3])
    return lat


def pct(lat, q):
    return round(statistics.quantiles(lat, n=100)[q - 1] * 1000, 2)


def one(binary, a, frame, tmp, label):
    data = tempfile.mkdtemp(dir=tmp)
    b = Broker(binary, data, a.set)
    try:
        create(b.bootstrap, "big", {"cleanup.policy": "compact", "max.message.bytes": "8388608"})
        create(b.bootstrap, "bystander")
        quiet = bystander(b.bootstrap, a.seconds)
        stop, answers = threading.Event(), []

        def load():
            sock = kw.connect(leader_port(b.bootstrap, "big"), timeout=120)
            while not stop.is_set():
                t0 = time.perf_counter()
                sock.sendall(frame)
                _, body = kw.recv_frame(sock)
                err = kw.parse_produce(8, body)[0]["partitions"][0]["error"]
                if err:
                    raise RuntimeError("big batch refused: error %d" % err)
                answers.append(time.perf_counter() - t0)
            sock.close()

        t = threading.Thread(target=load)
        t.start()
        time.sleep(0.5)
        loaded = bystander(b.bootstrap, a.seconds)
        stop.set()
        t.join(120)
        return {"binary": label, "quiet_p50_ms": pct(quiet, 50), "quiet_p99_ms": pct(quiet, 99),
                "quiet_max_ms": round(max(quiet) * 1000, 1), "p50_ms": pct(loaded, 50), "p99_ms": pct(loaded, 99),
                "max_ms": round(max(loaded) * 1000, 1), "big_batches": len(answers),
                "big_answer_ms": round(statistics.median(answers) * 1000, 1) if answers else None}
    finally:
        b.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default="build/mskmock")
    ap.add_argument("--binary-before")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--records", type=int, default=2_000_000)
    ap.add_argument("--codec", default="zstd", choices=["zstd", "gzip", "none"])
    ap.add_argument("--set", action="append", default=[], help="KEY=VALUE for mskmock, repeatable")
    a = ap.parse_args()
    frame = kw.produce_request(8, 1, "big", "big", 0, big_batch(a.records, a.codec))
    print("big batch: %d records, %d bytes of %s" % (a.records, len(frame), a.codec), flush=True)
    binaries = [("after", a.binary)] + ([("before", a.binary_before)] if a.binary_before else [])
    rows = []
    with tempfile.TemporaryDirectory(prefix="stallbench-") as tmp:
        for _ in range(a.runs):
            for label, binary in binaries:
                r = one(os.path.abspath(binary), a, frame, tmp, label)
                print(json.dumps(r), flush=True)
                rows.append(r)
    for label, _ in binaries:
        rs = [r for r in rows if r["binary"] == label]
        print("%-6s " % label + "  ".join("%s %s" % (k, statistics.median([r[k] for r in rs])) for k in rs[0]
                                          if k != "binary" and rs[0][k] is not None), flush=True)


if __name__ == "__main__":
    main()
