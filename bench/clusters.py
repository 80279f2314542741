#!/usr/bin/env python3
"""Clusters made by the `kafka` control plane (issue 34): how fast a created cluster takes its first
record, what each extra cluster costs the process idle, and whether creating and deleting them
leaks.

    .venv/bin/python bench/clusters.py [--bin build/mskmock] [--part first-record,memory,churn]
        [--runs 20] [--counts 0,10,50] [--idle-s 30] [--rounds 5] [--per-round 50]
        [--kind serverless|provisioned] [--set KEY=VALUE]...

One mskmock per part: a fresh data directory, the configured cluster (3 synthetic brokers,
serverless profile), the AWS APIs on a free port (aws.port with --ports auto), an identities file
with iam.ALICE of tests/integration/iam.py, aws.cluster.transition.ms=0 (CREATING and DELETING
over at once) and aws.max.clusters above what the part creates. Requests are boto3's, SigV4-signed
with ALICE's key; the Kafka clients are confluent-kafka (librdkafka), the IAM one with the official
MSK signer (aws-msk-iam-sasl-signer-python) in oauth_cb, as the integration tests use them.

first-record: --runs times, for each of a provisioned cluster (unauthenticated, clientBroker
  TLS_PLAINTEXT: the plaintext bootstrap string) and a serverless one (IAM: TLS and SASL/OAUTHBEARER
  on the IAM bootstrap string): CreateClusterV2, DescribeClusterV2 until ACTIVE,
  GetBootstrapBrokers, a topic created through that string (AdminClient), then one record produced
  through it and its delivery report. Each step is timed client-side, the constructors of the two
  clients apart (confluent-kafka's with an oauth_cb take about a second, before any connection);
  the cluster is deleted after the run. Also timed, for the split: a signed call that does nothing (DescribeClusterV2 of the
  configured cluster), and the broker's loop-thread CPU during CreateClusterV2.
memory: the process's VmRSS (/proc/PID/status), Pss (/proc/PID/smaps_rollup), threads and open
  descriptors with each of --counts clusters created (of --kind), 3 s after the last request (the
  loop hands idle heap back after 1 s without requests); then --idle-s seconds without any
  request: CPU (utime+stime of /proc/PID/stat) and wake-ups (voluntary context switches summed
  over /proc/PID/task/*/status), for the loop thread and for the others.
churn: --rounds rounds of --per-round clusters created then deleted; after each round the RSS,
  Pss, descriptors, listening sockets of the process (/proc/net/tcp{,6} entries in LISTEN whose
  inode is one of /proc/PID/fd), threads, and the entries left in data.dir/clusters/.

Prints one JSON line per measurement, then a summary per part.
"""

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "integration"))
import iam  # noqa: E402

import boto3  # noqa: E402
from confluent_kafka import Producer  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")


# ---- the process, from /proc ----------------------------------------------------------------

def status_kib(pid, key):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return -1


def pss_kib(pid):
    with open("/proc/%d/smaps_rollup" % pid) as f:
        for line in f:
            if line.startswith("Pss:"):
                return int(line.split()[1])
    return -1


def cpu_ticks(pid):
    """utime + stime of the whole process (every thread, ended ones included), in clock ticks."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # fields 14 and 15 of proc(5)


def threads(pid):
    """{tid: (name, voluntary switches, schedstat run ns)} of every live thread."""
    out = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        base = "/proc/%d/task/%s/" % (pid, tid)
        try:
            name = open(base + "comm").read().strip()
            vol = next(int(ln.split()[1]) for ln in open(base + "status") if ln.startswith("voluntary_ctxt_switches"))
            run_ns = int(open(base + "schedstat").read().split()[0])
        except (OSError, StopIteration):
            continue  # ended meanwhile
        out[int(tid)] = (name, vol, run_ns)
    return out


def fds(pid):
    return os.listdir("/proc/%d/fd" % pid)


def listening(pid):
    """The process's sockets in LISTEN (TCP, v4 and v6)."""
    inodes = set()
    for fd in fds(pid):
        try:
            target = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    n = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = open(table).read().splitlines()[1:]
        except OSError:
            continue
        for ln in lines:
            f = ln.split()
            if f[3] == "0A" and f[9] in inodes:
                n += 1
    return n


def snapshot(pid, data_dir):
    clusters = Path(data_dir) / "clusters"
    return {"rss_kib": status_kib(pid, "VmRSS"), "pss_kib": pss_kib(pid), "threads": len(threads(pid)),
            "fds": len(fds(pid)), "listening": listening(pid),
            "cluster_dirs": len(os.listdir(clusters)) if clusters.exists() else 0}


# ---- the broker ------------------------------------------------------------------------------

class Broker:
    def __init__(self, binary, sets, max_clusters):
        self.tmp = tempfile.mkdtemp(prefix="clusterbench-")
        self.data = os.path.join(self.tmp, "data")
        os.mkdir(self.data)
        ids = iam.write_identities(os.path.join(self.tmp, "identities.json"))
        ready = os.path.join(self.tmp, "ready.json")
        argv = [binary, "--data-dir", self.data, "--ports", "auto", "--ready-file", ready,
                "--set", "broker.count=3", "--set", "advertised.host=127.0.0.1", "--set", "bind.address=127.0.0.1",
                "--set", "aws.port=9081",  # any port: --ports auto gives it a free one
                "--set", "iam.identities.file=%s" % ids, "--set", "aws.cluster.transition.ms=0",
                "--set", "aws.max.clusters=%d" % max_clusters, "--set", "max.request.rate=0"]
        for kv in sets:
            argv += ["--set", kv]
        env = {k: v for k, v in os.environ.items() if not k.startswith("MSKMOCK_")}
        self.log = open(os.path.join(self.tmp, "mskmock.log"), "wb")
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=self.log, stdin=subprocess.DEVNULL,
                                     env=env, text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("mskmock ready "):
            self.proc.kill()
            raise RuntimeError("mskmock did not start: %r; log %s" % (line, self.log.name))
        self.ready = json.loads(line[len("mskmock ready "):])
        self.pid = self.proc.pid
        self.kafka = boto3.client("kafka", endpoint_url=self.ready["aws_url"], region_name=iam.REGION,
                                  aws_access_key_id=iam.ALICE.access_key_id,
                                  aws_secret_access_key=iam.ALICE.secret_access_key)
        self.kafka.list_clusters_v2()  # the service model loads on the first call: not in any timing

    def loop_thread_ns(self):
        return threads(self.pid)[self.pid][2]

    def create(self, name, kind):
        if kind == "serverless":
            r = self.kafka.create_cluster_v2(
                ClusterName=name, Serverless={"VpcConfigs": [{"SubnetIds": ["subnet-1"]}],
                                              "ClientAuthentication": {"Sasl": {"Iam": {"Enabled": True}}}})
        else:
            r = self.kafka.create_cluster_v2(ClusterName=name, Provisioned={
                "BrokerNodeGroupInfo": {"ClientSubnets": ["subnet-1", "subnet-2", "subnet-3"],
                                        "InstanceType": "kafka.m7g.large"},
                "KafkaVersion": "3.9.x", "NumberOfBrokerNodes": 3,
                "ClientAuthentication": {"Unauthenticated": {"Enabled": True}},
                "EncryptionInfo": {"EncryptionInTransit": {"ClientBroker": "TLS_PLAINTEXT"}}})
        return r["ClusterArn"]

    def delete(self, arn):
        self.kafka.delete_cluster(ClusterArn=arn)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(timeout=120)
        self.log.close()
        if rc != 0:
            raise RuntimeError("mskmock exited %d; log %s" % (rc, self.log.name))
        shutil.rmtree(self.tmp, ignore_errors=True)


def emit(doc):
    print(json.dumps(doc), flush=True)


def ms(t0, t1):
    return round((t1 - t0) * 1000, 2)


# ---- first-record ----------------------------------------------------------------------------

class Signer:
    """oauth_cb for confluent-kafka: an MSK IAM token for ALICE's key, with the call counted and timed."""

    def __init__(self):
        from aws_msk_iam_sasl_signer import MSKAuthTokenProvider
        from botocore.credentials import CredentialProvider, Credentials

        class Static(CredentialProvider):
            METHOD = "static"

            def load(self):
                return Credentials(iam.ALICE.access_key_id, iam.ALICE.secret_access_key)

        self.provider, self.static = MSKAuthTokenProvider, Static()
        self.seconds = 0.0

    def __call__(self, _config):
        t0 = time.perf_counter()
        token, expiry_ms = self.provider.generate_auth_token_from_credentials_provider(iam.REGION, self.static)
        self.seconds += time.perf_counter() - t0
        return token, expiry_ms / 1000.0


def first_record(b, kind, i):
    """One run: a new cluster to its first delivered record; the step times in ms."""
    name = "fr-%s-%d" % (kind[0], i)
    errors = []
    t = {}
    noop0 = time.perf_counter()
    b.kafka.describe_cluster_v2(ClusterArn=b.ready["cluster_arn"])
    t["signed_noop"] = ms(noop0, time.perf_counter())
    cpu0 = b.loop_thread_ns()
    t0 = time.perf_counter()
    arn = b.create(name, kind)
    t1 = time.perf_counter()
    t["broker_loop_cpu_create"] = round((b.loop_thread_ns() - cpu0) / 1e6, 2)
    while b.kafka.describe_cluster_v2(ClusterArn=arn)["ClusterInfo"]["State"] != "ACTIVE":
        pass
    t2 = time.perf_counter()
    bs = b.kafka.get_bootstrap_brokers(ClusterArn=arn)
    bootstrap = bs["BootstrapBrokerStringSaslIam"] if kind == "serverless" else bs["BootstrapBrokerString"]
    t3 = time.perf_counter()
    conf = {"bootstrap.servers": bootstrap, "error_cb": lambda e: errors.append(str(e))}
    signer = None
    if kind == "serverless":
        signer = Signer()
        conf.update({"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER", "oauth_cb": signer,
                     "ssl.ca.location": b.ready["ca_file"]})
    ta = time.perf_counter()
    admin = AdminClient(dict(conf))
    tb = time.perf_counter()
    admin.create_topics([NewTopic("first", 1, 3)], operation_timeout=30)["first"].result(30)
    t4 = time.perf_counter()
    done = []
    p = Producer(dict(conf, **{"acks": "all", "linger.ms": 0}))
    tc = time.perf_counter()
    p.produce("first", b"v", on_delivery=lambda err, msg: done.append(err))
    while not done:
        p.poll(0.001)
    t5 = time.perf_counter()
    if done[0] is not None:
        errors.append(str(done[0]))
    del p, admin
    b.delete(arn)
    inits = (tb - ta) + (tc - t4)
    t.update({"create_call": ms(t0, t1), "until_active": ms(t1, t2), "get_bootstrap": ms(t2, t3),
              "client_constructors": round(inits * 1000, 2), "create_topic": ms(tb, t4), "produce_first": ms(tc, t5),
              "total": ms(t0, t5), "total_but_constructors": round((t5 - t0 - inits) * 1000, 2)})
    if signer:
        t["signer"] = round(signer.seconds * 1000, 2)
    return t, errors


def part_first_record(a):
    b = Broker(a.bin, a.set, a.runs + 5)
    out = {}
    try:
        for kind in ("provisioned", "serverless"):
            first_record(b, kind, -1)  # warm-up: librdkafka and the signer's first use
            rows = []
            for i in range(a.runs):
                t, errors = first_record(b, kind, i)
                emit({"part": "first-record", "kind": kind, "run": i, "ms": t, "errors": errors})
                if errors:
                    raise RuntimeError("client errors: %s" % errors)
                rows.append(t)
            out[kind] = {k: summary([r[k] for r in rows]) for k in rows[0]}
    finally:
        b.stop()
    return out


def summary(xs):
    xs = sorted(xs)
    p95 = xs[min(len(xs) - 1, int(round(0.95 * (len(xs) - 1))))]
    return {"median": round(statistics.median(xs), 2), "p95": round(p95, 2), "min": xs[0], "max": xs[-1]}


# ---- memory and idle CPU ---------------------------------------------------------------------

def idle(b, seconds):
    """CPU and wake-ups over `seconds` without a request: the whole process, its loop thread (the
    main one) and its other threads (SQLite checkpoint threads, one per cluster on disk)."""
    th0, c0 = threads(b.pid), cpu_ticks(b.pid)
    time.sleep(seconds)
    th1, c1 = threads(b.pid), cpu_ticks(b.pid)
    per = {}
    for tid, (_name, vol, run) in th1.items():
        v0, r0 = (th0[tid][1], th0[tid][2]) if tid in th0 else (0, 0)
        e = per.setdefault("loop" if tid == b.pid else "others", {"threads": 0, "wakeups": 0, "cpu_ms": 0.0})
        e["threads"] += 1
        e["wakeups"] += vol - v0
        e["cpu_ms"] = round(e["cpu_ms"] + (run - r0) / 1e6, 2)
    return {"cpu_ms": round((c1 - c0) * 1000 / CLK_TCK, 1),
            "wakeups": sum(e["wakeups"] for e in per.values()), "threads": per}


def part_memory(a):
    counts = sorted(int(x) for x in a.counts.split(","))
    b = Broker(a.bin, a.set, max(counts) + 5)
    out = []
    try:
        made = 0
        for n in counts:
            while made < n:
                b.create("mem-%d" % made, a.kind)
                made += 1
            time.sleep(3)
            row = {"clusters": n, **snapshot(b.pid, b.data), "idle_%ds" % a.idle_s: idle(b, a.idle_s)}
            emit({"part": "memory", "kind": a.kind, **row})
            out.append(row)
    finally:
        b.stop()
    base = out[0]
    for r in out[1:]:
        k = r["clusters"] - base["clusters"]
        r["per_cluster"] = {"rss_kib": round((r["rss_kib"] - base["rss_kib"]) / k, 1),
                            "pss_kib": round((r["pss_kib"] - base["pss_kib"]) / k, 1),
                            "threads": round((r["threads"] - base["threads"]) / k, 2),
                            "fds": round((r["fds"] - base["fds"]) / k, 2)}
    return out


# ---- churn -----------------------------------------------------------------------------------

def part_churn(a):
    b = Broker(a.bin, a.set, a.per_round + 5)
    rows = []
    try:
        time.sleep(1)
        rows.append({"round": 0, **snapshot(b.pid, b.data)})
        emit({"part": "churn", **rows[-1]})
        for r in range(1, a.rounds + 1):
            t0 = time.perf_counter()
            arns = [b.create("churn-%d" % i, a.kind) for i in range(a.per_round)]
            t1 = time.perf_counter()
            full = snapshot(b.pid, b.data)
            for arn in arns:
                b.delete(arn)
            t2 = time.perf_counter()
            time.sleep(3)  # the loop trims the heap after 1 s without requests
            rows.append({"round": r, **snapshot(b.pid, b.data), "with_clusters": full,
                         "create_s": round(t1 - t0, 2), "delete_s": round(t2 - t1, 2)})
            emit({"part": "churn", **rows[-1]})
    finally:
        b.stop()
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", "--binary", default=str(ROOT / "build" / "mskmock"))
    ap.add_argument("--part", default="first-record,memory,churn")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--counts", default="0,10,50")
    ap.add_argument("--idle-s", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--per-round", type=int, default=50)
    ap.add_argument("--kind", choices=("serverless", "provisioned"), default="serverless")
    ap.add_argument("--set", action="append", default=[], help="KEY=VALUE for mskmock")
    a = ap.parse_args()
    result = {}
    for part in a.part.split(","):
        result[part] = {"first-record": part_first_record, "memory": part_memory, "churn": part_churn}[part](a)
    print(json.dumps({"summary": result}, indent=1))


if __name__ == "__main__":
    main()
