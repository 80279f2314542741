#!/usr/bin/env python3
"""How cost grows (issue 17): broker CPU per record produced, produce rate and broker memory
with 1, 10 and 100 topics of 8 partitions (one producer), and with 1, 10 and 50 producers at
once (one topic of 8 partitions), on mskmock's default storage.

    .venv/bin/python bench/scaling.py [--binary build/mskmock] [--runs 3] [--records 200000]
        [--size 1024] [--topics 1,10,100] [--producers 1,10,50] [--quiet-wait 60] [--set KEY=VALUE]...
        [--idle-clients 0]

Every point starts a fresh mskmock (3 synthetic brokers, data dir in a fresh temp dir, MSK's
quotas and request-rate cap off, as bench/run.sh does), creates the topics, measures the
broker's resident memory (VmRSS) idle with those topics, then produces --records records of
--size bytes with acks=all (librdkafka's defaults otherwise, linger.ms=5), spread evenly over
the producers and round-robin over every topic, and waits for every delivery report. Reported:
broker CPU per 100,000 records (every thread's run time from /proc/PID/task/*/schedstat),
records/s from the first produce() to the last delivery, and VmRSS after the load. The producers
are confluent-kafka clients in this process; each is its own librdkafka instance with its own
connections, so the broker sees them as separate clients. Points are interleaved within a run.
With --idle-clients N, each run also measures the memory of idle connected clients (issue 37,
goal 3), as docs/benchmarks.md's "Memory (issue 37, goal 3)" did by hand: a fresh mskmock, its
VmRSS 0.5 s after start, then N plaintext connections each sending ApiVersions v0 and Metadata v6
(all topics) and then idling, VmRSS again 0.5 s later; reported: (with - without) / N.
Prints one JSON line per measurement, then medians [min-max] per point.
"""

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

sys.path.insert(0, str(Path(__file__).resolve().parent))
from txn_throughput import Mskmock, proc_cpu_s, wait_quiet  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "integration"))
import kafka_wire as kw  # noqa: E402

PARTITIONS = 8


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def point(binary, sets, ntopics, nproducers, records, size):
    m = Mskmock(binary, sets)
    try:
        names = ["scale-%d" % i for i in range(ntopics)]
        admin = AdminClient({"bootstrap.servers": m.bootstrap})
        for f in admin.create_topics([NewTopic(n, PARTITIONS, 3) for n in names]).values():
            f.result(60)
        time.sleep(0.5)
        idle = rss_kib(m.pid)
        producers = [Producer({"bootstrap.servers": m.bootstrap, "acks": "all", "linger.ms": 5,
                               "queue.buffering.max.messages": 1000000}) for _ in range(nproducers)]
        for p in producers:  # metadata and connections before the clock
            p.list_topics(timeout=30)
        value = os.urandom(size)
        done = [0, 0]

        def report(err, _msg):
            done[0] += 1
            if err:
                done[1] += 1

        cpu0, t0 = proc_cpu_s(m.pid), time.perf_counter()
        for i in range(records):
            p = producers[i % nproducers]
            while True:
                try:
                    p.produce(names[(i // nproducers) % ntopics], value, on_delivery=report)
                    break
                except BufferError:
                    p.poll(0.01)
            if i % 1000 == 0:
                p.poll(0)
        for p in producers:
            p.flush(120)
        wall = time.perf_counter() - t0
        cpu = proc_cpu_s(m.pid) - cpu0
        if done[0] != records or done[1]:
            raise RuntimeError("%d of %d delivered, %d failed" % (done[0], records, done[1]))
        return {"topics": ntopics, "partitions": ntopics * PARTITIONS, "producers": nproducers,
                "broker_cpu_s_per_100k": round(cpu * 100000 / records, 4), "msgs_per_s": round(records / wall),
                "rss_idle_kib": idle, "rss_after_kib": rss_kib(m.pid)}
    finally:
        m.stop()


def idle_clients(binary, sets, n):
    m = Mskmock(binary, sets)
    socks = []
    try:
        time.sleep(0.5)
        before = rss_kib(m.pid)
        port = int(m.bootstrap.split(",")[0].rsplit(":", 1)[1])
        for i in range(n):
            s = kw.connect(port, timeout=30)
            socks.append(s)
            s.sendall(kw.api_versions_request(1, "idle-%d" % i, version=0))
            kw.recv_frame(s)
            s.sendall(kw.metadata_request(6, 2, "idle-%d" % i, None))
            kw.recv_frame(s)
        time.sleep(0.5)
        after = rss_kib(m.pid)
        return {"idle_clients": n, "rss_idle_kib": before, "rss_clients_kib": after,
                "rss_per_idle_client_kib": round((after - before) / n, 2)}
    finally:
        for s in socks:
            s.close()
        m.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default=os.environ.get("MSKMOCK_BIN", str(Path(__file__).resolve().parents[1] / "build/mskmock")))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--records", type=int, default=200000)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--topics", default="1,10,100")
    ap.add_argument("--producers", default="1,10,50")
    ap.add_argument("--quiet-wait", type=float, default=60)
    ap.add_argument("--set", action="append", default=[])
    ap.add_argument("--idle-clients", type=int, default=0, help="also RSS per idle connected client, N clients")
    a = ap.parse_args()
    points = [(int(t), 1) for t in a.topics.split(",")] + [(1, int(p)) for p in a.producers.split(",") if int(p) != 1]
    results = {}
    for run in range(a.runs):
        order = points[run % len(points):] + points[:run % len(points)]
        for t, p in order:
            busy = wait_quiet(a.quiet_wait)
            r = point(a.binary, a.set, t, p, a.records, a.size)
            r.update(run=run, busy_cores_before=busy)
            print(json.dumps(r), flush=True)
            results.setdefault((t, p), []).append(r)
        if a.idle_clients > 0:
            busy = wait_quiet(a.quiet_wait)
            r = idle_clients(a.binary, a.set, a.idle_clients)
            r.update(run=run, busy_cores_before=busy)
            print(json.dumps(r), flush=True)
            results.setdefault("idle", []).append(r)

    def med(rs, k):
        v = [r[k] for r in rs]
        return "%s [%s-%s]" % (statistics.median(v), min(v), max(v))

    print("\n| topics x 8 partitions | producers | broker CPU s per 100k | records/s | RSS idle KiB | RSS after KiB |")
    print("|---|---|---|---|---|---|")
    for (t, p) in points:
        rs = results[(t, p)]
        print("| %d | %d | %s | %s | %s | %s |" % (t, p, med(rs, "broker_cpu_s_per_100k"), med(rs, "msgs_per_s"),
                                                 med(rs, "rss_idle_kib"), med(rs, "rss_after_kib")))
    if a.idle_clients > 0:
        print("\n%d idle clients: RSS per client KiB %s (idle %s, with them %s)" % (
            a.idle_clients, med(results["idle"], "rss_per_idle_client_kib"), med(results["idle"], "rss_idle_kib"),
            med(results["idle"], "rss_clients_kib")))


if __name__ == "__main__":
    main()
