#!/usr/bin/env python3
"""Log compaction (issue 16): how fast the cleaner compacts, and what a compaction running in the
background does to the latency of produce requests to other topics.

    .venv/bin/python bench/compaction.py [--binary build/mskmock] [--runs 3] [--mb 64] [--keys 10000]
        [--value-size 200] [--codecs none,lz4] [--rate 1000] [--slice-ms 2,10] [--quiet-wait 60]
        [--set KEY=VALUE]...
        [--warmup S] [--trace MS] [--idle-hog spin|copy] [--keep]

Each run starts mskmock afresh (3 brokers, its defaults: storage.sync=normal, SQLite in WAL mode,
on a fresh temp dir, --ports auto; MSK's quotas and request-rate cap off as bench/run.sh sets them;
--set adds settings to every start, e.g. --set storage.sync=off) and measures, with confluent-kafka (the librdkafka it bundles) as the client:

1. Throughput, per codec of --codecs. The background cleaner is held off
   (log.cleaner.backoff.ms=1h). A 1-partition topic with cleanup.policy=compact is filled with
   --mb MB of records: keys "key-<n>" for n drawn uniformly from --keys, values of --value-size
   bytes (hex digits: about 2x compressible), produced with that codec, acks=all, linger.ms=20.
   Then POST /v1/compaction {"force": true} runs one pass over the whole partition. Reported:
   the pass's own time and the stored bytes it read (from its log line), MB/s (10^6 bytes) over
   that time, the records and bytes left, and the broker's CPU over the call.

2. Produce latency while a compaction runs, per --slice-ms. The topic of step 1 (codec none) is
   filled with the cleaner held off; the broker is stopped and started again with
   log.cleaner.backoff.ms=100 and log.cleaner.slice.ms=S, so a pass over the whole partition
   starts 100 ms later, in the background. Meanwhile a producer (acks=all, linger.ms=0) sends
   1-KiB records to another topic at --rate records/s. Reported: p50, p99 and max of the time
   from produce() to the acknowledgement as librdkafka's broker thread saw it (Message.latency();
   before 2026-12-07 the time at which this script polled the delivery report, still given as
   polled_p99_ms), over the records sent while the pass ran (its start
   and end lines in the log), and the same over a window of equal length after it ended and one
   before it started (with --warmup at least the pass's length), each a baseline: same broker, same
   producer, no compaction; the ratios of the p99 during the pass to the p99 after it ("p99_ratio",
   as before 2026-12-07) and to the p99 of the records of both baselines together
   ("p99_ratio_baseline", issue 37's goal: within 1.2x). Meanwhile a probe on a connection of its
   own sends ApiVersions one at a time, as fast as they are answered: the longest round trip
   during the pass is the longest the loop was held ("loop lag max"), and in each baseline window
   the same.

--warmup S (issue 37, goal 4): without it the pass starts ~0.1 s after the restarted broker, racing
the neighbour producer's start; in some runs it sent nothing during the pass, in others its first
records (connection set-up) fell in it. With it the topic is filled with cleanup.policy=delete and
made compacted (IncrementalAlterConfigs; the broker runs with topic.config.policy=kafka) after S
seconds of the neighbour producing, so the pass starts within a backoff with the producer warm.
With ~45-90 records sent during a 64 MB pass its p99 is its slowest record or two; --mb 256 (or a
higher --rate) puts more records in the pass. --trace MS prints (to stderr) every probe round trip
and produce slower than MS with its time from the pass's start; --keep keeps the brokers' logs
(--set log.level=debug for the swap's own figures).

Since issue 37 a pass runs on a worker thread with a database on disk and log.cleaner.slice.ms
bounds only the loop's swap of its result (and an in-memory database's passes); before, it was
the slice of the pass itself on the loop.

Prints one JSON line per measurement, then medians [min-max] over the runs.
"""

import argparse
import json
import multiprocessing
import os
import random
import re
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from txn_throughput import MSKMOCK_OFF, CpuWindow, wait_quiet  # noqa: E402

from confluent_kafka import Producer  # noqa: E402
from confluent_kafka.admin import (AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource,  # noqa: E402
                                   NewTopic)

ROOT = Path(__file__).resolve().parents[1]
PASS_LINE = re.compile(r"(\S+) info  compaction: (\S+)-(\d+) offsets \[\d+, \d+\): (\d+) records -> (\d+), "
                       r"(\d+) bytes -> (\d+), .* in ([\d.]+) ms")
START_LINE = re.compile(r"(\S+) info  compaction: (\S+)-(\d+) starts")


class Broker:
    def __init__(self, binary, data, sets):
        argv = [binary, "--data-dir", data, "--ports", "auto", "--set", "broker.count=3",
                "--set", "advertised.host=127.0.0.1"]
        for kv in ["%s=0" % k for k in MSKMOCK_OFF] + list(sets):
            argv += ["--set", kv]
        env = {k: v for k, v in os.environ.items() if not k.startswith("MSKMOCK_")}
        self.log_path = data + ".log"
        self.log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=self.log, stdin=subprocess.DEVNULL,
                                     env=env, text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("mskmock ready "):
            self.proc.kill()
            raise RuntimeError("mskmock did not start: %r; log %s" % (line, self.log_path))
        ready = json.loads(line[len("mskmock ready "):])
        self.bootstrap = ready["bootstrap"]["plaintext"]
        self.admin_url = ready["admin_url"]
        self.pid = self.proc.pid

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(timeout=120)
        self.log.close()
        if rc != 0:
            raise RuntimeError("mskmock exited %d; log %s" % (rc, self.log_path))

    def log_text(self):
        return Path(self.log_path).read_text(errors="replace")

    def log_text_if_grown(self, seen):
        """The log's text when it grew since seen[0] bytes, else None. The producing loop looks every
        50 ms until the pass ends; reading the log and searching it with PASS_LINE took ~0.7 ms of
        this loop's thread each time (its leading group of non-spaces backtracks at every
        character), during the pass and not after it, and lifted the neighbour's p99 during a pass
        by about a third (docs/benchmarks.md, "The benchmark's own look at the log"). A stat costs
        microseconds, and the broker writes no line while a pass runs."""
        size = os.path.getsize(self.log_path)
        if size == seen[0]:
            return None
        seen[0] = size
        return self.log_text()


def post(url, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
    with urllib.request.urlopen(req, timeout=600) as r:
        return json.loads(r.read())


def create(bootstrap, name, config=None):
    admin = AdminClient({"bootstrap.servers": bootstrap})  # alive until the futures resolve
    for f in admin.create_topics([NewTopic(name, 1, 3, config=config or {})]).values():
        f.result(30)


def make_compacted(bootstrap, name):
    admin = AdminClient({"bootstrap.servers": bootstrap})
    res = ConfigResource(ConfigResource.Type.TOPIC, name,
                         incremental_configs=[ConfigEntry("cleanup.policy", "compact",
                                                          incremental_operation=AlterConfigOpType.SET)])
    for f in admin.incremental_alter_configs([res]).values():
        f.result(30)


def fill(bootstrap, topic, a, codec):
    rng = random.Random(7)
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "compression.type": codec,
                  "batch.size": 1 << 20, "queue.buffering.max.kbytes": 1 << 20})
    n = (a.mb * 10**6) // (a.value_size + 10)
    for i in range(n):
        value = ("%x" % rng.getrandbits(4 * a.value_size)).rjust(a.value_size, "0").encode()
        while True:
            try:
                p.produce(topic, key=b"key-%d" % rng.randrange(a.keys), value=value)
                break
            except BufferError:
                p.poll(0.05)
        if i % 1000 == 0:
            p.poll(0)
    if p.flush(300):
        raise RuntimeError("fill did not finish")
    return n


def last_pass(text, topic):
    m = None
    for m in PASS_LINE.finditer(text):
        pass
    if not m or m.group(2) != topic:
        raise RuntimeError("no compaction line for %s" % topic)
    return {"records_in": int(m.group(4)), "records_out": int(m.group(5)), "bytes_in": int(m.group(6)),
            "bytes_out": int(m.group(7)), "pass_ms": float(m.group(8))}


def throughput(a, codec, tmp):
    data = os.path.join(tmp, "tp-" + codec)
    os.mkdir(data)
    b = Broker(a.binary, data, a.set + ["log.cleaner.backoff.ms=3600000"])
    try:
        create(b.bootstrap, "c", {"cleanup.policy": "compact"})
        fill(b.bootstrap, "c", a, codec)
        time.sleep(1)
        w = CpuWindow(b.pid)
        t0 = time.perf_counter()
        passes = post(b.admin_url + "/v1/compaction", {"force": True})["passes"]
        wall = time.perf_counter() - t0
        r = dict(last_pass(b.log_text(), "c"), passes=passes, wall_s=round(wall, 3), **w.done())
        r["mb_per_s"] = round(r["bytes_in"] / 1e6 / (r["pass_ms"] / 1000), 1)
        return r
    finally:
        b.stop()


def ts(line_time):
    # 2026-12-04T14:21:42.232Z
    return time.mktime(time.strptime(line_time[:19], "%Y-%m-%dT%H:%M:%S")) - time.timezone + \
        float("0." + line_time[20:23])


def _probe(bootstrap, stop, out):
    host, port = bootstrap.split(",")[0].rsplit(":", 1)
    sock = socket.create_connection((host, int(port)))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    samples, corr = [], 0

    def recv(n):
        buf = b""
        while len(buf) < n:
            chunk = sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("closed")
            buf += chunk
        return buf
    try:
        while not stop.is_set():
            corr += 1
            body = struct.pack(">hhih", 18, 0, corr, 5) + b"probe"
            t = time.time()
            sock.sendall(struct.pack(">i", len(body)) + body)
            recv(struct.unpack(">i", recv(4))[0])
            samples.append((t, time.time() - t))
            time.sleep(0.0005)
    except (OSError, ConnectionError):
        pass
    sock.close()
    out.send(samples)


class LoopProbe:
    """The broker's loop lag, seen from outside: ApiVersions v0 on a connection of its own, one
    at a time, as fast as answers come, from a process of its own (in this one the GIL would add
    its own waits); each answer's round trip with its send time. A request waits for whatever
    holds the loop, so the longest round trip while a pass runs bounds the longest stall the
    pass caused (plus one round trip of about 0.1 ms)."""

    def __init__(self, bootstrap):
        self.stop = multiprocessing.Event()
        self.rx, tx = multiprocessing.Pipe(duplex=False)
        self.proc = multiprocessing.Process(target=_probe, args=(bootstrap, self.stop, tx), daemon=True)
        self.proc.start()
        self.samples = []  # (send time, round trip s)

    def close(self):
        self.stop.set()
        if self.rx.poll(10):
            self.samples = self.rx.recv()
        self.proc.join(5)

    def max_ms(self, t0, t1):
        xs = [rtt for t, rtt in self.samples if t0 <= t <= t1]
        return round(max(xs) * 1000, 2) if xs else None


def _idle_hog(seconds, kind):
    """A core's worth of work at the pass worker's priority (SCHED_IDLE) and nothing else: "spin"
    with no memory traffic, no lock, no system call but the clock's; "copy" copying 64 MiB
    buffers, about the memory traffic of a pass (which reads ~2 GB/s) and still no lock and no
    system call."""
    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    end = time.time() + seconds
    if kind == "copy":
        src, dst = bytearray(64 << 20), bytearray(64 << 20)
        while time.time() < end:
            dst[:] = src
    while time.time() < end:
        pass


def latency(a, slice_ms, tmp):
    data = os.path.join(tmp, "lat-%d" % slice_ms)
    os.mkdir(data)
    b = Broker(a.binary, data, a.set + ["log.cleaner.backoff.ms=3600000"])
    create(b.bootstrap, "c", {"cleanup.policy": "delete" if a.warmup else "compact"})
    create(b.bootstrap, "p")
    fill(b.bootstrap, "c", a, "none")
    b.stop()
    b = Broker(a.binary, data, a.set + ["log.cleaner.backoff.ms=100", "log.cleaner.slice.ms=%d" % slice_ms] +
               (["topic.config.policy=kafka"] if a.warmup else []))
    try:
        sent = []  # (send time, latency)
        probe = LoopProbe(b.bootstrap)
        p = Producer({"bootstrap.servers": b.bootstrap, "linger.ms": 0, "acks": "all"})
        p.produce("p", value=b"x")
        p.flush(10)
        value = b"v" * 1024
        interval = 1.0 / a.rate
        t_next = time.time()
        stop_at, next_look, log_seen = None, 0.0, [0]
        hog, hog_at, hog_s = None, None, 0.0
        deadline = time.time() + 600
        compact_at = time.time() + a.warmup if a.warmup else None
        while time.time() < deadline and (stop_at is None or time.time() < stop_at):
            now = time.time()
            if compact_at and now >= compact_at:  # the producer is warm: the pass may start
                compact_at = None
                make_compacted(b.bootstrap, "c")
            if now >= t_next:
                p.produce("p", value=value, on_delivery=lambda err, msg, t=now: sent.append(
                    (t, (msg.latency() if not err else None), time.time() - t, err)))
                t_next += interval
            p.poll(0)
            if stop_at is None and now >= next_look:  # the log, every 50 ms: the pass's end starts the baseline
                next_look = now + 0.05
                text = b.log_text_if_grown(log_seen)
                if text and PASS_LINE.search(text):
                    start, end = ts(START_LINE.search(text).group(1)), ts(PASS_LINE.search(text).group(1))
                    stop_at = end + 0.2 + (end - start) + 0.5
                    if a.idle_hog:  # a third window: the same length with a SCHED_IDLE hog instead of a pass
                        hog_at, hog_s = stop_at, end - start
                        stop_at = hog_at + hog_s + 0.3
            if hog_at is not None and hog is None and now >= hog_at:
                hog = multiprocessing.Process(target=_idle_hog, args=(hog_s, a.idle_hog), daemon=True)
                hog.start()
            time.sleep(max(0.0, min(t_next - time.time(), 0.0005)))
        p.flush(30)
        probe.close()
        if hog is not None:
            hog.join(10)
        text = b.log_text()
        start = ts(START_LINE.search(text).group(1))
        end = ts(PASS_LINE.search(text).group(1))
        # the pass, and windows of its length 0.2 s after it and (with --warmup at least the pass's
        # length) 0.2 s before it: the neighbour's p99 drifts over a run by as much as a pass moves
        # it, so a baseline after the pass alone credits the pass with the drift; both together are
        # the baseline of the goal
        span = {"during": (start, end), "after": (end + 0.2, end + 0.2 + (end - start)),
                "before": (start - 0.2 - (end - start), start - 0.2)}

        def window(name, polled=False):
            lo, hi = span[name]
            return [(seen if polled else lat) for t, lat, seen, err in sent
                    if lo <= t <= hi and not err and lat is not None]
        during, after, before = window("during"), window("after"), window("before")
        errors = sum(1 for *_, err in sent if err)
        if a.trace:
            slow = [("probe", t, rtt) for t, rtt in probe.samples if rtt > a.trace / 1000] + \
                [("produce", t, lat) for t, lat, _, err in sent if lat is not None and lat > a.trace / 1000]
            for what, t, x in sorted(slow, key=lambda e: e[1]):
                if start - 0.05 <= t <= span["after"][1]:
                    print("trace %-7s at %+8.1f ms from the start (pass %.1f ms): %.2f ms" % (
                        what, (t - start) * 1000, (end - start) * 1000, x * 1000), file=sys.stderr)

        def stats(xs):
            xs = sorted(xs)
            if not xs:
                return {}
            return {"n": len(xs), "p50_ms": round(xs[len(xs) // 2] * 1000, 2),
                    "p99_ms": round(xs[min(len(xs) - 1, int(len(xs) * 0.99))] * 1000, 2),
                    "max_ms": round(xs[-1] * 1000, 2)}

        def ratio(x, y, key="p99_ms"):
            return round(x[key] / y[key], 2) if x.get(key) and y.get(key) else None
        d, f, bf, both = stats(during), stats(after), stats(before), stats(before + after)
        # the same records timed as before 2026-12-07: at the delivery callback, when this loop polled
        d["polled_p99_ms"] = stats(window("during", True)).get("p99_ms")
        f["polled_p99_ms"] = stats(window("after", True)).get("p99_ms")
        for name, x in (("during", d), ("after", f), ("before", bf)):
            x["loop_lag_max_ms"] = probe.max_ms(*span[name])
        both["loop_lag_max_ms"] = max([x for x in (f["loop_lag_max_ms"], bf["loop_lag_max_ms"]) if x is not None],
                                      default=None)
        extra = {}
        if hog_at is not None:  # its process starts ~50 ms after hog_at (multiprocessing's start)
            span["hog"] = (hog_at + 0.1, hog_at + hog_s)
            h = stats(window("hog"))
            h["loop_lag_max_ms"] = probe.max_ms(*span["hog"])
            extra = {"idle_hog": h, "hog_p99_ratio": ratio(h, f)}
        return {"slice_ms": slice_ms, "pass_s": round(end - start, 3), "during": d, "after": f, "before": bf,
                "baseline": both, **extra,
                "p99_ratio": ratio(d, f), "p99_ratio_before": ratio(d, bf), "p99_ratio_baseline": ratio(d, both),
                "polled_p99_ratio": ratio(d, f, "polled_p99_ms"),
                "errors": errors, **last_pass(text, "c")}
    finally:
        b.stop()


def summary(vals):
    vals = [v for v in vals if v is not None]
    if not vals:
        return "-"
    return "%s [%s-%s]" % (round(statistics.median(vals), 2), round(min(vals), 2), round(max(vals), 2))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default=os.environ.get("MSKMOCK_BIN", str(ROOT / "build" / "mskmock")))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--mb", type=int, default=64)
    ap.add_argument("--keys", type=int, default=10000)
    ap.add_argument("--value-size", type=int, default=200)
    ap.add_argument("--codecs", default="none,lz4")
    ap.add_argument("--rate", type=int, default=1000)
    ap.add_argument("--slice-ms", default="2,10")
    ap.add_argument("--quiet-wait", type=float, default=60)
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="a broker setting for every start (repeatable), e.g. storage.sync=off")
    ap.add_argument("--warmup", type=float, default=0,
                    help="latency step: fill the topic with cleanup.policy=delete and make it compacted after this "
                         "many seconds of the neighbour producing, so the pass starts with the producer warm "
                         "(0: compacted from the start; the pass then starts ~0.1 s after the broker, sometimes "
                         "before the producer sends anything)")
    ap.add_argument("--idle-hog", choices=["spin", "copy"],
                    help="after the baseline window a third one, as long as the pass, with a process at "
                         "SCHED_IDLE instead of a pass, spinning or copying memory: what idle-priority work alone "
                         "costs the neighbour")
    ap.add_argument("--keep", action="store_true", help="keep each run's temp dir (data and the brokers' logs)")
    ap.add_argument("--trace", type=float, default=0,
                    help="print the probe's round trips and the produces slower than this many ms, with their time")
    a = ap.parse_args()
    rows = []
    for run in range(a.runs):
        tmp = tempfile.mkdtemp(prefix="compactbench-")
        try:
            for codec in a.codecs.split(","):
                busy = wait_quiet(a.quiet_wait)
                r = dict(throughput(a, codec, tmp), measure="throughput", codec=codec, run=run, busy_cores_before=busy)
                print(json.dumps(r), flush=True)
                rows.append(r)
            for s in [int(x) for x in a.slice_ms.split(",")]:
                busy = wait_quiet(a.quiet_wait)
                r = dict(latency(a, s, tmp), measure="latency", run=run, busy_cores_before=busy)
                print(json.dumps(r), flush=True)
                rows.append(r)
        finally:
            if a.keep:
                print("kept %s (the brokers' logs: *.log)" % tmp, file=sys.stderr)
            else:
                subprocess.run(["rm", "-rf", tmp])
    print()
    for codec in a.codecs.split(","):
        rs = [r for r in rows if r["measure"] == "throughput" and r["codec"] == codec]
        print("throughput %-5s MB/s %s  pass ms %s  bytes in %s  broker cpu s %s" % (
            codec, summary([r["mb_per_s"] for r in rs]), summary([r["pass_ms"] for r in rs]),
            summary([r["bytes_in"] for r in rs]), summary([r["broker_cpu_s"] for r in rs])))
    for s in [int(x) for x in a.slice_ms.split(",")]:
        rs = [r for r in rows if r["measure"] == "latency" and r["slice_ms"] == s]
        for w in ("before", "during", "after", "baseline"):
            print("latency slice %3d ms %-8s p50 %s  p99 %s  max %s  loop lag max %s  (pass s %s)" % (
                s, w, summary([r.get(w, {}).get("p50_ms") for r in rs]), summary([r.get(w, {}).get("p99_ms") for r in rs]),
                summary([r.get(w, {}).get("max_ms") for r in rs]), summary([r.get(w, {}).get("loop_lag_max_ms") for r in rs]),
                summary([r["pass_s"] for r in rs])))
        if any("idle_hog" in r for r in rs):
            print("latency slice %3d ms idle hog p50 %s  p99 %s  max %s  loop lag max %s" % (
                s, summary([r["idle_hog"].get("p50_ms") for r in rs]), summary([r["idle_hog"].get("p99_ms") for r in rs]),
                summary([r["idle_hog"].get("max_ms") for r in rs]),
                summary([r["idle_hog"].get("loop_lag_max_ms") for r in rs])))
            print("latency slice %3d ms p99 with the SCHED_IDLE hog / after %s" % (
                s, summary([r.get("hog_p99_ratio") for r in rs])))
        print("latency slice %3d ms p99 during / after %s" % (s, summary([r["p99_ratio"] for r in rs])))
        print("latency slice %3d ms p99 during / before %s" % (s, summary([r.get("p99_ratio_before") for r in rs])))
        print("latency slice %3d ms p99 during / before and after together (the goal's baseline) %s" % (
            s, summary([r.get("p99_ratio_baseline") for r in rs])))
        print("latency slice %3d ms p99 during / after, timed when polled (the method before 2026-12-07) %s" % (
            s, summary([r["polled_p99_ratio"] for r in rs])))


if __name__ == "__main__":
    main()
