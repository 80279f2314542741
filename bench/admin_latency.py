#!/usr/bin/env python3
"""How long the admin API takes to answer, as a test harness sees it.

One broker (3 synthetic brokers, data.dir :memory:) holds T topics of 8 partitions with a few
records each and G consumer groups with committed offsets; then each call below is made N times,
one at a time, each on a new connection (the API answers Connection: close, so that is what
every client pays). Reported: median, p99 and max in milliseconds, client-side wall clock from
connect to the last byte.

    bench/admin_latency.py BINARY [--topics 100] [--groups 20] [--requests 500]

The reset is measured separately: each run rebuilds the T topics and G groups, then times one
POST /v1/reset (median of --reset-runs).
"""

import argparse
import http.client
import json
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "integration"))
import kafka_wire as kw  # noqa: E402


def start(binary):
    ready = Path(tempfile.mkdtemp()) / "ready.json"
    argv = [binary, "--ports", "auto", "--ready-file", str(ready), "--data-dir", ":memory:",
            "--set", "log.level=warn", "--set", "iam.port=0", "--set", "max.partition.mutations.per.5.minutes=0",
            "--set", "max.request.rate=0"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = proc.stdout.readline()
    doc = json.loads(line[len("mskmock ready "):])
    return proc, doc


def request(port, method, path, body=None):
    t0 = time.perf_counter()
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    c.request(method, path, body=json.dumps(body) if body is not None else None)
    r = c.getresponse()
    data = r.read()
    c.close()
    dt = (time.perf_counter() - t0) * 1000
    if r.status >= 300:
        raise SystemExit("%s %s: %d %s" % (method, path, r.status, data[:300]))
    return dt, data


def populate(doc, topics, groups):
    """T topics of 8 partitions (the first 20 with 5 records in each partition) and G groups
    with an offset committed for each partition of one topic, through raw Kafka requests."""
    ports = {b["id"]: b["ports"]["plaintext"] for b in doc["brokers"]}
    first = doc["brokers"][0]["ports"]["plaintext"]  # the controller Metadata names
    names = ["bench-%03d" % i for i in range(topics)]
    corr = 0
    with kw.connect(first) as s:
        for name in names:
            corr += 1
            s.sendall(kw.create_topics_request(3, corr, "bench", name, 8, 3))
            kw.recv_frame(s)
        corr += 1
        s.sendall(kw.metadata_request(8, corr, "bench", names[:20]))
        _, body = kw.recv_frame(s)
    meta = kw.parse_metadata(8, body)
    batch = kw.record_batch([(b"k", b"x" * 100, ()) for _ in range(5)])
    for t in meta["topics"]:
        for p in t["partitions"]:
            with kw.connect(ports[p["leader"]]) as s:
                corr += 1
                s.sendall(kw.produce_request(7, corr, "bench", t["name"], p["index"], batch))
                kw.recv_frame(s)
    for g in range(groups):
        group = "bench-group-%d" % g
        with kw.connect(first) as s:
            corr += 1
            s.sendall(kw.find_coordinator_request(corr, "bench", group))
            _, body = kw.recv_frame(s)
        node = kw.parse_find_coordinator(2, body)["node_id"]
        with kw.connect(ports[node]) as s:
            corr += 1
            s.sendall(kw.offset_commit_request(corr, "bench", group, names[g % topics], {p: 3 for p in range(8)}))
            kw.recv_frame(s)


def summary(xs):
    xs = sorted(xs)
    return {"median_ms": round(statistics.median(xs), 3), "p99_ms": round(xs[int(len(xs) * 0.99) - 1], 3),
            "max_ms": round(xs[-1], 3)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--topics", type=int, default=100)
    ap.add_argument("--groups", type=int, default=20)
    ap.add_argument("--requests", type=int, default=500)
    ap.add_argument("--reset-runs", type=int, default=5)
    a = ap.parse_args()
    proc, doc = start(a.binary)
    try:
        port = doc["admin_port"]
        populate(doc, a.topics, a.groups)
        calls = [("GET", "/v1/health", None), ("GET", "/v1/ready", None), ("GET", "/v1/topics", None),
                 ("GET", "/v1/topics/bench-000", None), ("GET", "/v1/groups", None),
                 ("GET", "/v1/connections", None), ("GET", "/metrics", None)]
        results = {}
        for method, path, body in calls:
            request(port, method, path, body)  # warm
            results["%s %s" % (method, path)] = summary([request(port, method, path, body)[0]
                                                         for _ in range(a.requests)])
        # a fault rule created and deleted: the round trip a test pays around each case
        times = []
        for _ in range(a.requests):
            dt1, data = request(port, "POST", "/v1/faults", {"api": "Produce", "error": "NOT_LEADER_OR_FOLLOWER",
                                                              "count": 1})
            dt2, _ = request(port, "DELETE", "/v1/faults/%d" % json.loads(data)["id"])
            times.append(dt1 + dt2)
        results["POST /v1/faults + DELETE /v1/faults/{id}"] = summary(times)
        resets = []
        for _ in range(a.reset_runs):
            populate(doc, a.topics, a.groups)
            resets.append(request(port, "POST", "/v1/reset", {})[0])
        results["POST /v1/reset (%d topics x 8 partitions, %d groups)" % (a.topics, a.groups)] = summary(resets)
        print(json.dumps({"topics": a.topics, "groups": a.groups, "requests": a.requests, "results": results},
                         indent=2))
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)


if __name__ == "__main__":
    main()
