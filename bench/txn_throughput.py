#!/usr/bin/env python3
"""Transactions (issue 15): transactions per second, and read_committed against read_uncommitted
consume throughput, for mskmock and librdkafka's mock cluster, driven by the same client
(confluent-kafka, the librdkafka it bundles) with the same settings.

    .venv/bin/python bench/txn_throughput.py [--binary build/mskmock] [--targets mskmock,mskmock-off,mock]
        [--runs 3] [--txns 2000] [--warmup 200] [--records-per-txn 10] [--value-size 100]
        [--fill-records 100000] [--fill-txn-records 100] [--abort-every 10] [--consumes 2]
        [--quiet-wait 60] [--producer-set KEY=VALUE]...

The figures in docs/benchmarks.md ("Transactions (issue 15)") came from
    .venv/bin/python bench/txn_throughput.py --binary build-txnbench/mskmock \
        --targets mskmock,mskmock-off,mskmock-mem,mock --runs 5 --quiet-wait 120

Targets, each started fresh for every run, with 3 brokers:
  mskmock       the binary (--binary, else $MSKMOCK_BIN, else build/mskmock) with its defaults
                (storage.sync=normal: SQLite in WAL mode) on a data dir in a fresh temp dir,
                free ports (--ports auto), advertised.host=127.0.0.1; MSK's quotas and request
                rate cap are off (as bench/run.sh sets them), MSKMOCK_* variables not passed on.
  mskmock-off   the same with storage.sync=off (nothing fsynced: what CI usually sets).
  mskmock-mem   the same with data.dir=:memory: (nothing persisted, as the mock).
  mock          librdkafka's mock cluster (rd_kafka_mock_cluster_new, 3 brokers) in a child
                process of its own, so that its CPU is its own as mskmock's is. The child loads
                the librdkafka that confluent-kafka bundles through ctypes: a client with
                "test.mock.num.brokers" starts the same mock, but then the topics can only be
                auto-created, with the mock's default of 4 partitions (the mock serves no
                CreateTopics), while rd_kafka_mock_topic_create makes them with 3.

Each run, per target:
  1. Transactions per second. One transactional producer (init_transactions outside the clock)
     runs --warmup transactions, then --txns measured ones: begin_transaction, --records-per-txn
     records of --value-size bytes (no key) to partitions 0, 1, 2, 0, ... of a 3-partition topic,
     commit_transaction. Reported: txn/s over the measured ones; p50/p99 of commit_transaction
     (the client's flush of the records, then EndTxn) and of the whole transaction; the broker's
     CPU per transaction (every live thread's run time from /proc/PID/task/*/schedstat, to the
     nanosecond, where /proc/PID/stat counts 10 ms ticks) and the client's (getrusage).
  2. Fill. Another transactional producer writes transactions of --fill-txn-records records to a
     second 3-partition topic until --fill-records records are committed; every --abort-every-th
     transaction is aborted instead (its records flushed first, so they are in the log). Values
     start with "C" (committed) or "A" (aborted).
  3. Consume, --consumes times per isolation level, alternating the order: a fresh consumer
     (fetch.wait.max.ms=100, enable.partition.eof, no group membership) reads the topic's
     metadata and watermarks, then assign()s the 3 partitions at their low watermarks and reads
     until librdkafka reports the end of every partition. Reported: records delivered per second
     and payload MB/s (10^6 bytes) from the first record to the last, the time from assign() to
     the last record (and records/s over it), the broker's and the client's CPU, and whether the
     right records came back: read_committed must deliver exactly the committed records and none
     of the aborted ones, read_uncommitted all of them. The client is Python: it spends about
     1 µs per record delivered, which bounds the rate near 1M records/s whatever the broker.

Before each target's run the bench waits (up to --quiet-wait s) for the machine to be quiet (under
0.15 busy cores besides itself), as bench/run.sh does (busy_cores_before: what it saw), and each measurement records how much CPU other processes
used meanwhile (other_cpu_s: /proc/stat's busy time minus this process's and the broker's).
Targets are interleaved within a run, in an order that rotates from run to run.

Prints one JSON line per measurement, then a table of medians [min-max]. Exits 1 if any
transaction failed or any consume of an mskmock target read back the wrong records. The mock's
read_committed consumes do (its Fetch ignores isolation.level: every aborted record comes back);
that is reported, not counted as a failure.
"""

import argparse
import ctypes
import json
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

ROOT = Path(__file__).resolve().parents[1]
TICK = os.sysconf("SC_CLK_TCK")  # /proc/stat's unit
PARTITIONS = 3

MSKMOCK_OFF = ("quota.partition.ingress.bytes.per.second", "quota.partition.egress.bytes.per.second",
               "quota.cluster.ingress.bytes.per.second", "quota.cluster.egress.bytes.per.second",
               "max.request.rate", "max.partition.mutations.per.5.minutes")


# ---- CPU accounting ---------------------------------------------------------------------------

def proc_cpu_s(pid):
    """CPU time of every live thread of pid, to the nanosecond (schedstat), where /proc/PID/stat
    counts 10 ms ticks: a consume costs mskmock a few tens of milliseconds."""
    total = 0
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                total += int(f.read().split()[0])
        except OSError:
            pass  # the thread ended
    return total / 1e9


def self_cpu_s():
    """This process's CPU, ended threads included (librdkafka's, of clients closed meanwhile)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def machine_busy_s():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal
    return (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / TICK


class CpuWindow:
    """CPU of the broker, of this process and of everyone else over a phase."""

    def __init__(self, broker_pid):
        self.pid = broker_pid
        self.t0 = time.perf_counter()
        self.b0, self.s0, self.m0 = proc_cpu_s(broker_pid), self_cpu_s(), machine_busy_s()

    def done(self):
        b, s, m = proc_cpu_s(self.pid), self_cpu_s(), machine_busy_s()
        broker, client = b - self.b0, s - self.s0
        return {"broker_cpu_s": round(broker, 4), "client_cpu_s": round(client, 3),
                "other_cpu_s": round(max(0.0, (m - self.m0) - broker - client), 2)}


def wait_quiet(max_wait_s, limit_cores=0.15):
    """Wait until other processes use under limit_cores over a 1-s window; returns the busy cores seen."""
    deadline = time.monotonic() + max_wait_s
    while True:
        m0, s0 = machine_busy_s(), self_cpu_s()
        time.sleep(1.0)
        busy = (machine_busy_s() - m0) - (self_cpu_s() - s0)
        if busy < limit_cores or time.monotonic() > deadline:
            return round(busy, 2)


# ---- targets ----------------------------------------------------------------------------------

class Mskmock:
    def __init__(self, binary, sets, memory=False):
        self.tmp = tempfile.mkdtemp(prefix="txnbench-")
        data = ":memory:" if memory else os.path.join(self.tmp, "data")
        if not memory:
            os.mkdir(data)
        argv = [binary, "--data-dir", data, "--ports", "auto", "--set", "broker.count=3",
                "--set", "advertised.host=127.0.0.1"]
        for kv in ["%s=0" % k for k in MSKMOCK_OFF] + list(sets):
            argv += ["--set", kv]
        env = {k: v for k, v in os.environ.items() if not k.startswith("MSKMOCK_")}
        self.log = open(os.path.join(self.tmp, "mskmock.log"), "wb")
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=self.log, stdin=subprocess.DEVNULL,
                                     env=env, text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("mskmock ready "):
            self.proc.kill()
            raise RuntimeError("mskmock did not start: %r; log %s" % (line, self.log.name))
        self.bootstrap = json.loads(line[len("mskmock ready "):])["bootstrap"]["plaintext"]
        self.pid = self.proc.pid

    def create_topics(self, names):
        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        for f in admin.create_topics([NewTopic(n, PARTITIONS, 3) for n in names]).values():
            f.result(30)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(timeout=60)
        self.log.close()
        if rc != 0:
            raise RuntimeError("mskmock exited %d; log %s" % (rc, self.log.name))
        subprocess.run(["rm", "-rf", self.tmp])


class Mock:
    """librdkafka's mock cluster in a child process (this script with --serve-mock)."""

    def __init__(self, topics):
        argv = [sys.executable, os.path.abspath(__file__), "--serve-mock", ",".join(topics)]
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("mock ready "):
            self.proc.kill()
            raise RuntimeError("mock did not start: %r" % line)
        self.bootstrap = line.split()[2]
        self.pid = self.proc.pid

    def create_topics(self, names):
        pass  # made by the child at start, with 3 partitions

    def stop(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def serve_mock(topics):
    """Child: a mock cluster of 3 brokers holding `topics` (3 partitions, RF 3) until stdin closes."""
    maps = open("/proc/self/maps").read().split("\n")
    path = next(ln.split()[-1] for ln in maps if "librdkafka" in ln)  # the one confluent_kafka loaded
    lib = ctypes.CDLL(path)
    lib.rd_kafka_conf_new.restype = ctypes.c_void_p
    lib.rd_kafka_conf_set.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                                      ctypes.c_size_t]
    lib.rd_kafka_new.restype = ctypes.c_void_p
    lib.rd_kafka_new.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.rd_kafka_mock_cluster_new.restype = ctypes.c_void_p
    lib.rd_kafka_mock_cluster_new.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.rd_kafka_mock_cluster_bootstraps.restype = ctypes.c_char_p
    lib.rd_kafka_mock_cluster_bootstraps.argtypes = [ctypes.c_void_p]
    lib.rd_kafka_mock_topic_create.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
    errstr = ctypes.create_string_buffer(512)
    conf = lib.rd_kafka_conf_new()
    lib.rd_kafka_conf_set(conf, b"log_level", b"3", errstr, 512)
    rk = lib.rd_kafka_new(0, conf, errstr, 512)
    if not rk:
        raise SystemExit("rd_kafka_new: %s" % errstr.value.decode())
    mc = lib.rd_kafka_mock_cluster_new(rk, 3)
    for t in topics:
        err = lib.rd_kafka_mock_topic_create(mc, t.encode(), PARTITIONS, 3)
        if err:
            raise SystemExit("rd_kafka_mock_topic_create %s: error %d" % (t, err))
    print("mock ready %s" % lib.rd_kafka_mock_cluster_bootstraps(mc).decode(), flush=True)
    sys.stdin.read()
    os._exit(0)  # no destroy: rd_kafka_mock_cluster_destroy may take a second, and nothing needs it


def start_target(name, a, topics):
    if name == "mock":
        b = Mock(topics)
    elif name == "mskmock":
        b = Mskmock(a.binary, [])
    elif name == "mskmock-off":
        b = Mskmock(a.binary, ["storage.sync=off"])
    elif name == "mskmock-mem":
        b = Mskmock(a.binary, [], memory=True)
    else:
        raise SystemExit("unknown target %s" % name)
    b.create_topics(topics)
    return b


# ---- measurements -----------------------------------------------------------------------------

def errors_to(seen):
    def cb(err):
        seen.append(str(err))
    return cb


def txn_producer(bootstrap, errs, a):
    conf = {"bootstrap.servers": bootstrap, "transactional.id": "txnbench-" + uuid.uuid4().hex[:12],
            "error_cb": errors_to(errs)}
    conf.update(kv.split("=", 1) for kv in a.producer_set)
    p = Producer(conf)
    p.init_transactions(30)
    return p


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def measure_txns(b, topic, a):
    errs = []
    p = txn_producer(b.bootstrap, errs, a)
    value = b"v" * a.value_size

    def one():
        t0 = time.perf_counter()
        p.begin_transaction()
        for j in range(a.records_per_txn):
            p.produce(topic, value, partition=j % PARTITIONS)
        t1 = time.perf_counter()
        p.commit_transaction(30)
        t2 = time.perf_counter()
        return t2 - t1, t2 - t0

    for _ in range(a.warmup):
        one()
    cpu = CpuWindow(b.pid)
    t0 = time.perf_counter()
    lat = [one() for _ in range(a.txns)]
    elapsed = time.perf_counter() - t0
    r = cpu.done()
    commit = [x[0] * 1000 for x in lat]
    whole = [x[1] * 1000 for x in lat]
    r.update({"txns": a.txns, "records_per_txn": a.records_per_txn, "txn_per_s": round(a.txns / elapsed, 1),
              "records_per_s": round(a.txns * a.records_per_txn / elapsed),
              "commit_p50_ms": round(pct(commit, 0.5), 3), "commit_p99_ms": round(pct(commit, 0.99), 3),
              "txn_p50_ms": round(pct(whole, 0.5), 3), "txn_p99_ms": round(pct(whole, 0.99), 3),
              "broker_cpu_us_per_txn": round(r["broker_cpu_s"] / a.txns * 1e6, 1),
              "client_errors": len(errs)})
    p.flush(10)
    return r


def fill(b, topic, a):
    errs = []
    p = txn_producer(b.bootstrap, errs, a)
    commit_v = b"C" * a.value_size
    abort_v = b"A" * a.value_size
    committed = aborted = i = 0
    cpu = CpuWindow(b.pid)
    t0 = time.perf_counter()
    while committed < a.fill_records:
        abort = a.abort_every > 0 and i % a.abort_every == a.abort_every - 1
        p.begin_transaction()
        v = abort_v if abort else commit_v
        for j in range(a.fill_txn_records):
            p.produce(topic, v, partition=j % PARTITIONS)
        if abort:
            p.flush(30)  # the records are in the log, so read_committed has something to skip
            p.abort_transaction(30)
            aborted += a.fill_txn_records
        else:
            p.commit_transaction(30)
            committed += a.fill_txn_records
        i += 1
    elapsed = time.perf_counter() - t0
    r = cpu.done()
    r.update({"txns": i, "committed_records": committed, "aborted_records": aborted,
              "broker_cpu_us_per_txn": round(r["broker_cpu_s"] / i * 1e6, 1),
              "records_per_s": round((committed + aborted) / elapsed), "client_errors": len(errs)})
    return r


def consume(b, topic, isolation, expect, a):
    c = Consumer({"bootstrap.servers": b.bootstrap, "group.id": "txnbench-" + uuid.uuid4().hex[:8],
                  "enable.auto.commit": False, "enable.partition.eof": True, "fetch.wait.max.ms": 100,
                  "isolation.level": isolation, "auto.offset.reset": "earliest"})
    c.list_topics(topic, timeout=10)
    marks = [c.get_watermark_offsets(TopicPartition(topic, p), timeout=10) for p in range(PARTITIONS)]
    cpu = CpuWindow(b.pid)
    t_assign = time.perf_counter()
    c.assign([TopicPartition(topic, p, marks[p][0]) for p in range(PARTITIONS)])
    n = aborted_seen = 0
    t_first = t_last = None
    eof = set()
    deadline = time.monotonic() + 300
    while len(eof) < PARTITIONS:
        if time.monotonic() > deadline:
            raise RuntimeError("consume %s: no end after 300 s (%d records)" % (isolation, n))
        # what is queued now, without waiting (consume(n, t) would wait for n records or t, and so
        # stamp them late); when nothing is, wait for the next one
        msgs = c.consume(1000, 0)
        if not msgs:
            m = c.poll(0.1)
            if m is None:
                continue
            msgs = [m]
        got = 0
        for m in msgs:
            e = m.error()
            if e is not None:
                if e.code() == KafkaError._PARTITION_EOF:
                    eof.add(m.partition())
                    continue
                raise RuntimeError("consume %s: %s" % (isolation, e))
            got += 1
            if m.value()[0] == 65:  # "A"
                aborted_seen += 1
        if got:
            t_last = time.perf_counter()
            if t_first is None:
                t_first = t_last
            n += got
    r = cpu.done()
    c.close()
    steady = t_last - t_first if t_last and t_last > t_first else float("nan")
    r.update({"isolation": isolation, "records": n, "aborted_records_delivered": aborted_seen,
              "expected_records": expect, "log_offsets": sum(h - lo for lo, h in marks),
              "low_watermarks": [m[0] for m in marks],
              "records_per_s": round(n / steady) if steady == steady else None,
              "records_per_s_from_assign": round(n / (t_last - t_assign)),
              "mb_per_s": round(n * a.value_size / steady / 1e6, 1) if steady == steady else None,
              "assign_to_last_ms": round((t_last - t_assign) * 1000, 1),
              "first_record_ms": round((t_first - t_assign) * 1000, 1), "correct": n == expect and (
                  isolation == "read_uncommitted" or aborted_seen == 0)})
    return r


# ---- driver -----------------------------------------------------------------------------------

def emit(rows, target, run, measure, r):
    row = {"target": target, "run": run, "measure": measure, **r}
    print(json.dumps(row), flush=True)
    rows.append(row)


def summary(vals, fmt):
    vals = sorted(v for v in vals if v is not None)
    if not vals:
        return "-"
    med = statistics.median(vals)
    if vals[0] == vals[-1]:
        return fmt % med
    return "%s [%s–%s]" % (fmt % med, fmt % vals[0], fmt % vals[-1])


def table(rows, targets):
    def pick(measure, key, iso=None):
        return {t: [r.get(key) for r in rows if r["target"] == t and r["measure"] == measure
                    and (iso is None or r.get("isolation") == iso)] for t in targets}

    lines = [("transactions/s", pick("txn", "txn_per_s"), "%.0f"),
             ("commit_transaction p50 (ms)", pick("txn", "commit_p50_ms"), "%.2f"),
             ("commit_transaction p99 (ms)", pick("txn", "commit_p99_ms"), "%.2f"),
             ("whole transaction p50 (ms)", pick("txn", "txn_p50_ms"), "%.2f"),
             ("broker CPU per transaction (µs)", pick("txn", "broker_cpu_us_per_txn"), "%.0f"),
             ("client CPU, txn phase (s)", pick("txn", "client_cpu_s"), "%.2f"),
             ("other processes' CPU, txn phase (s)", pick("txn", "other_cpu_s"), "%.2f"),
             ("fill: records/s (committed and aborted)", pick("fill", "records_per_s"), "%.0f"),
             ("  broker CPU per fill transaction (µs)", pick("fill", "broker_cpu_us_per_txn"), "%.0f"),
             ("consume read_uncommitted (records/s)", pick("consume", "records_per_s", "read_uncommitted"), "%.0f"),
             ("consume read_uncommitted (MB/s)", pick("consume", "mb_per_s", "read_uncommitted"), "%.1f"),
             ("  assign to last record (ms)", pick("consume", "assign_to_last_ms", "read_uncommitted"), "%.0f"),
             ("  records/s from assign", pick("consume", "records_per_s_from_assign", "read_uncommitted"), "%.0f"),
             ("  broker CPU (s)", pick("consume", "broker_cpu_s", "read_uncommitted"), "%.3f"),
             ("  client CPU (s)", pick("consume", "client_cpu_s", "read_uncommitted"), "%.2f"),
             ("  records delivered", pick("consume", "records", "read_uncommitted"), "%d"),
             ("consume read_committed (records/s)", pick("consume", "records_per_s", "read_committed"), "%.0f"),
             ("consume read_committed (MB/s)", pick("consume", "mb_per_s", "read_committed"), "%.1f"),
             ("  assign to last record (ms)", pick("consume", "assign_to_last_ms", "read_committed"), "%.0f"),
             ("  records/s from assign", pick("consume", "records_per_s_from_assign", "read_committed"), "%.0f"),
             ("  broker CPU (s)", pick("consume", "broker_cpu_s", "read_committed"), "%.3f"),
             ("  client CPU (s)", pick("consume", "client_cpu_s", "read_committed"), "%.2f"),
             ("  records delivered", pick("consume", "records", "read_committed"), "%d"),
             ("  aborted records delivered", pick("consume", "aborted_records_delivered", "read_committed"), "%d"),
             ("other processes' CPU, consumes (s)", pick("consume", "other_cpu_s"), "%.2f")]
    print("| figure | %s |" % " | ".join(targets))
    print("|---|%s" % ("---|" * len(targets)))
    for name, per, fmt in lines:
        print("| %s | %s |" % (name, " | ".join(summary(per[t], fmt) for t in targets)))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--serve-mock":
        serve_mock(sys.argv[2].split(","))
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--binary", default=os.environ.get("MSKMOCK_BIN", str(ROOT / "build" / "mskmock")))
    ap.add_argument("--targets", default="mskmock,mskmock-off,mock")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--txns", type=int, default=2000)
    ap.add_argument("--warmup", type=int, default=200)
    ap.add_argument("--records-per-txn", type=int, default=10)
    ap.add_argument("--value-size", type=int, default=100)
    ap.add_argument("--fill-records", type=int, default=100000,
                    help="committed records (the mock keeps 5 MiB per partition: 100,000 of 100 bytes, "
                         "with the aborted ones, fit)")
    ap.add_argument("--fill-txn-records", type=int, default=100)
    ap.add_argument("--abort-every", type=int, default=10, help="every K-th fill transaction is aborted; 0: none")
    ap.add_argument("--consumes", type=int, default=2, help="consumes per isolation level per run")
    ap.add_argument("--producer-set", action="append", default=[], metavar="KEY=VALUE",
                    help="a librdkafka setting for both transactional producers (repeatable); default: none")
    ap.add_argument("--quiet-wait", type=float, default=60,
                    help="before each target's run, wait up to this many seconds for the machine to be quiet; 0: don't")
    a = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so that `finally` stops the broker
    targets = a.targets.split(",")
    import confluent_kafka
    print(json.dumps({"client": "confluent-kafka %s, librdkafka %s" % (confluent_kafka.__version__,
                                                                        confluent_kafka.libversion()[0]),
                      "binary": a.binary, "nproc": os.cpu_count(), "loadavg": open("/proc/loadavg").read().split()[:3]}),
          flush=True)
    rows = []
    wrong = set()
    for run in range(a.runs):
        order = targets[run % len(targets):] + targets[:run % len(targets)]
        for t in order:
            quiet = wait_quiet(a.quiet_wait) if a.quiet_wait > 0 else None
            topics = ["txn-%s" % uuid.uuid4().hex[:8], "fill-%s" % uuid.uuid4().hex[:8]]
            b = start_target(t, a, topics)
            try:
                r = measure_txns(b, topics[0], a)
                r["busy_cores_before"] = quiet
                r["loadavg"] = open("/proc/loadavg").read().split()[0]
                emit(rows, t, run, "txn", r)
                f = fill(b, topics[1], a)
                emit(rows, t, run, "fill", f)
                expect = {"read_committed": f["committed_records"],
                          "read_uncommitted": f["committed_records"] + f["aborted_records"]}
                for k in range(a.consumes):
                    isos = ["read_uncommitted", "read_committed"]
                    if (run + k) % 2:
                        isos.reverse()
                    for iso in isos:
                        r = consume(b, topics[1], iso, expect[iso], a)
                        emit(rows, t, run, "consume", r)
                        if not r["correct"]:
                            wrong.add(t)
            finally:
                b.stop()
    table(rows, targets)
    for t in sorted(wrong):
        print("%s: some consumes read back the wrong records (\"correct\": false above)%s" % (
            t, "; expected of librdkafka's mock, whose Fetch ignores isolation.level" if t == "mock" else ""))
    sys.exit(1 if wrong - {"mock"} else 0)


if __name__ == "__main__":
    main()
