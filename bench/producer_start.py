#!/usr/bin/env python3
"""Start-up time with many idempotent producers' batches stored (issue 37, the batch row's producer
index): what loading the producers' state costs a start, before and after a change to how it is
stored.

    .venv/bin/python bench/producer_start.py --bins OLD,NEW [--producers 100] [--batches 1000]
        [--partitions 10] [--starts 5] [--callgrind] [--seed DIR]

One data directory is filled by the first binary (the oldest schema, so every binary can open a
copy): --producers idempotent confluent-kafka producers (linger 0, one record per batch), producer
i writing --batches batches to partition i % --partitions of one topic. Then, interleaved, each
binary starts --starts times on a fresh copy of that directory (its first start on that schema:
an upgrade, for a newer binary) and once more on the directory its previous start stopped cleanly
in. Each start is timed by the broker's own "ready in" line. --callgrind runs each start under
valgrind's callgrind instead and reports its instructions from exec to the end of the clean stop
(every thread; load-independent, for a loaded machine). --seed DIR keeps the filled directory in
DIR, or reuses it when DIR exists. Prints one JSON line per start, then medians.
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

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic


class Broker:
    def __init__(self, binary, data_dir, callgrind=False):
        self.log = data_dir / "broker.log"
        ready = data_dir / "ready.json"
        if ready.exists():
            ready.unlink()
        self.since = self.log.stat().st_size if self.log.exists() else 0
        env = dict(os.environ, MSKMOCK_DATA_DIR=str(data_dir), MSKMOCK_PORTS_AUTO="true",
                   MSKMOCK_READY_FILE=str(ready), MSKMOCK_IAM_PORT="0", MSKMOCK_ADMIN_PORT="0")
        self.cg = data_dir / "callgrind.out" if callgrind else None
        argv = ["valgrind", "--tool=callgrind", "--callgrind-out-file=%s" % self.cg, binary] if callgrind else [binary]
        with open(self.log, "ab") as f:
            self.proc = subprocess.Popen(argv, env=env, stdout=f, stderr=f, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 300
        while not ready.exists() or not ready.read_text().strip():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                sys.exit("broker did not start:\n" + self.log.read_text()[-3000:])
            time.sleep(0.01)
        self.bootstrap = json.loads(ready.read_text())["bootstrap"]["plaintext"]

    def ready_ms(self):
        text = self.log.read_text()[self.since:]
        return float(re.search(r"ready in ([0-9.]+) ms", text).group(1))

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(300)

    def instructions(self):
        text = self.cg.read_text(errors="replace")
        m = re.search(r"^summary: (\d+)", text, re.M) or re.search(r"^totals: (\d+)", text, re.M)
        self.cg.unlink()
        return int(m.group(1))


def fill(bootstrap, a):
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic("idem", a.partitions)])["idem"].result(60)
    ps = [Producer({"bootstrap.servers": bootstrap, "linger.ms": 0, "batch.num.messages": 1,
                    "enable.idempotence": True}) for _ in range(a.producers)]
    for n in range(a.batches):
        for i, p in enumerate(ps):
            while True:
                try:
                    p.produce("idem", b"r%d" % n, partition=i % a.partitions)
                    break
                except BufferError:
                    p.poll(0.01)
            p.poll(0)
    for p in ps:
        assert p.flush(600) == 0
    del ps, admin


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bins", required=True)
    ap.add_argument("--producers", type=int, default=100)
    ap.add_argument("--batches", type=int, default=1000)
    ap.add_argument("--partitions", type=int, default=10)
    ap.add_argument("--starts", type=int, default=5)
    ap.add_argument("--callgrind", action="store_true")
    ap.add_argument("--seed", default="")
    a = ap.parse_args()
    bins = a.bins.split(",")
    what = "instructions" if a.callgrind else "ready_ms"
    with tempfile.TemporaryDirectory() as tmp:
        seed = Path(a.seed) if a.seed else Path(tmp) / "seed"
        if not seed.exists():
            seed.mkdir()
            b = Broker(bins[0], seed)
            t0 = time.monotonic()
            try:
                fill(b.bootstrap, a)
            finally:
                b.stop()
            print("filled in %.1f s" % (time.monotonic() - t0), file=sys.stderr)
            (seed / "broker.log").unlink()
        res = {}
        for r in range(a.starts):
            for k, binary in enumerate(bins):
                d = Path(tmp) / ("run-%d-%d" % (r, k))
                shutil.copytree(seed, d)
                for kind in ("copied", "after a clean stop"):
                    br = Broker(binary, d, a.callgrind)
                    br.stop()
                    row = {"binary": binary, "start": kind, "ready_ms": br.ready_ms(),
                           "loadavg": os.getloadavg()[0]}
                    if a.callgrind:
                        row["instructions"] = br.instructions()
                    print(json.dumps(row), flush=True)
                    res.setdefault((binary, kind), []).append(row[what])
                shutil.rmtree(d)
        for (binary, kind), v in res.items():
            print("%s, %s: %s %.1f [%.1f-%.1f] (median of %d)" % (binary, kind, what, statistics.median(v),
                                                                min(v), max(v), len(v)))


if __name__ == "__main__":
    main()
