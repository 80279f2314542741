#!/usr/bin/env python3
"""Consumer groups on the KIP-848 protocol (issue 36, "Measure"): how long a group takes to
settle and to recover from a crash, beside the classic protocol with the same client, and what
heartbeats cost the broker at 1,000 members in one group and in 500 groups.

    /work/main/.venv/bin/python bench/consumer_groups.py [--binary build/mskmock] [--runs 3]
        [--parts java,load,cost] [--hb-ms 5000] [--window 30] [--cost-rounds 3] [--log-dir DIR]

The figures in docs/benchmarks.md ("Consumer groups on the consumer protocol (issue 36)") came
from `--runs 3` with a build-test binary (-O2).

1. java: 3 members of the Java test client (kafka-clients 4.4, `group-consume`, one JVM each,
   assignor range) on a fresh 6-partition topic and group, once with --group-protocol consumer
   and once with classic, alternating, against a fresh provisioned-profile broker on
   kafka.version 4.0 (3 synthetic brokers). Both protocols get a 6 s session timeout (the
   consumer protocol from group.consumer.session.timeout.ms, the classic one from the client's
   session.timeout.ms) and a 1 s heartbeat interval: the test client sets the classic
   heartbeat.interval.ms to session/6 capped at 1 s (GroupConsume.java), and --java-hb-ms
   (default 1000) is group.consumer.heartbeat.interval.ms. (Before, the consumer protocol got
   3 s against the classic client's 1 s, which made it look slower.)
   group.initial.rebalance.delay.ms=0.
     stable_from_spawn_s  the 3 processes started at once -> every member holds 2 partitions
                          (JVM start and bootstrap included, the same for both protocols)
     stable_from_first_s  the first member's first assignment callback -> the same
     crash_move_s         kill -9 of one member -> the two others hold all 6 partitions
                          (bounded below by the 6 s session timeout)
   --log-dir keeps each run's broker log at log.level=debug (joins, epochs, every member's
   reconciliation step with its time), to read where the time goes.
2. load: raw ConsumerGroupHeartbeat v0 requests (tests/integration/kafka_wire.py encoding) from
   this process to a one-node broker (provisioned, kafka.version 4.0,
   group.consumer.heartbeat.interval.ms=--hb-ms, max group size 2000): members join (epoch 0),
   then each heartbeats every --hb-ms carrying its epoch and, when its assignment changed, the
   partitions it owns (as the Java client does: the full subscription only on join). Requests are
   pipelined over 16 connections. Shapes: 100, 300 and 1,000 members in one group (a 1,000
   partition topic); 500 groups of 2 members (1,000 members, a 4-partition topic each). Once no
   member's epoch moved for 2 heartbeat intervals, the broker's CPU (every thread's schedstat)
   and RSS are read over --window seconds of steady heartbeats.
     cpu_us_per_hb        broker CPU / heartbeats answered in the window
     cpu_ms_per_member_s  broker CPU per member per second of heartbeating
     rss_mb               the broker's VmRSS at the end; rss_kb_per_member against an idle broker

3. cost: the broker's instructions per steady heartbeat, independent of the machine's load
   (--parts cost, not in the default parts). The broker runs under valgrind's callgrind (this
   VM exposes no hardware counters, so `perf stat -e instructions` reads nothing) with
   instrumentation off; the members of a shape join and settle in rounds (every member sends
   one heartbeat and every answer is read) until two rounds change nothing; one more round, then
   `callgrind_control -i on`, --cost-rounds rounds, `-i off`. The count covers exactly those
   rounds' heartbeats (and whatever else the loop did meanwhile: timers, nothing else here);
   --keep-callgrind DIR keeps the profile for callgrind_annotate.
     instr_per_hb         the broker's instructions / (rounds x members)

Prints one JSON line per measurement and a table of medians [min-max].
"""

import argparse
import heapq
import json
import os
import selectors
import socket
import struct
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "integration"))

import kafka_wire as kw  # noqa: E402
from harness import Broker, run_client  # noqa: E402
from groups import ConsumerPool, is_balanced, wait_balanced  # noqa: E402

API_CGH = 68
PARTITIONS = 6


def proc_cpu_s(pid):
    total = 0
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                total += int(f.read().split()[0])
        except OSError:
            pass
    return total / 1e9


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def emit(row):
    print(json.dumps(row), flush=True)
    return row


# -- 1. Java members -----------------------------------------------------------------------

def java_run(binary, protocol, run, log_dir=None, hb_ms=1000):
    b = Broker(binary=binary, log_level="debug" if log_dir else "info", config={
        "profile": "provisioned", "kafka.version": "4.0", "group.initial.rebalance.delay.ms": 0,
        "group.consumer.session.timeout.ms": 6000, "group.consumer.heartbeat.interval.ms": hb_ms,
        "group.consumer.min.session.timeout.ms": 1000, "group.consumer.min.heartbeat.interval.ms": 100})
    b.start()
    pool = ConsumerPool()
    try:
        name = "bench-%s-%d" % (protocol, run)
        assert run_client("python", ["create-topic", "--bootstrap", b.bootstrap, "--topic", name,
                                     "--partitions", PARTITIONS], timeout=60) == {"created": name}
        # one JVM run first: the run script writes its class archive on the first run after a
        # build and then does not exec java, so a kill -9 would hit the script, not the client
        assert run_client("java", ["list-groups", "--bootstrap", b.bootstrap], timeout=90)["ok"]
        t0 = time.monotonic()
        m = [pool.start("java", b.bootstrap, name, name, assignor="range", name="m%d" % i,
                        session_timeout_ms=6000 if protocol == "classic" else None,
                        extra_args=["--group-protocol", protocol]) for i in range(3)]
        wait_balanced(m, PARTITIONS, timeout=120)
        t1 = time.monotonic()
        first = min(c.assignments()[0][0] for c in m)
        time.sleep(1)  # let commits and heartbeats go on for a moment before the crash
        t2 = time.monotonic()
        m[2].kill()
        deadline = t2 + 120
        while not is_balanced(m[:2], PARTITIONS):
            if time.monotonic() > deadline:
                raise RuntimeError("survivors never took the partitions")
            time.sleep(0.02)
        t3 = time.monotonic()
        for c in m[:2]:
            c.stop()
        return emit({"part": "java", "protocol": protocol, "run": run,
                     "stable_from_spawn_s": round(t1 - t0, 2),
                     "stable_from_first_s": round(t1 - first, 2),
                     "crash_move_s": round(t3 - t2, 2)})
    finally:
        pool.cleanup()
        b.stop(check=False)
        if log_dir:  # the broker's debug log, to read the timeline of the joins and revocations
            Path(log_dir).mkdir(parents=True, exist_ok=True)
            Path(log_dir, "java-%s-%d.log" % (protocol, run)).write_bytes(b.log_path.read_bytes())
        b.cleanup()


# -- 2. raw heartbeats ---------------------------------------------------------------------

def cgh_frame(corr, group, member_id, epoch, topics=None, owned=None, rebalance_ms=None):
    body = kw.compact_string(group) + kw.compact_string(member_id) + kw.i32(epoch)
    body += kw.compact_nullable_string(None) + kw.compact_nullable_string(None)
    body += kw.i32(-1 if rebalance_ms is None else rebalance_ms)
    body += kw.compact_array(topics, kw.compact_string)
    body += kw.compact_nullable_string(None)
    body += kw.compact_array(owned, lambda tp: tp[0] + kw.compact_array(tp[1], kw.i32) + kw.tags())
    body += kw.tags()
    hdr = kw.i16(API_CGH) + kw.i16(0) + kw.i32(corr) + kw.string("cg-bench") + kw.tags()
    return kw.i32(len(hdr) + len(body)) + hdr + body


def parse_cgh(resp):
    r = kw.FlexReader(resp, flex=True)
    r.skip_tags()
    r.i32()
    err = r.i16()
    r.compact_string()
    r.compact_string()
    epoch = r.i32()
    r.i32()
    assignment = None
    if r.i8() >= 0:
        def tp(x):
            t = (x.take(16), x.compact_array(lambda y: y.i32()))
            x.skip_tags()
            return t
        assignment = r.compact_array(tp)
    return err, epoch, assignment


class Member:
    __slots__ = ("group", "topic", "mid", "epoch", "owned", "send_owned", "due", "joined")

    def __init__(self, group, topic):
        self.group, self.topic, self.mid = group, topic, str(uuid.uuid4())
        self.epoch, self.owned, self.send_owned, self.due, self.joined = 0, [], True, 0.0, False


class Conn:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.setblocking(False)
        self.inbuf = bytearray()
        self.out = bytearray()
        self.waiting = {}  # corr -> member


def drive(port, members, hb_s, until_pred, nconns=16):
    """Heartbeats every member every hb_s until until_pred(stats) is true; returns stats."""
    sel = selectors.DefaultSelector()
    conns = [Conn(port) for _ in range(nconns)]
    for c in conns:
        sel.register(c.sock, selectors.EVENT_READ, c)
    now = time.monotonic()
    for i, m in enumerate(members):  # joins spread over one interval, as clients starting
        m.due = now + hb_s * i / len(members)
    corr = 0
    st = {"answered": 0, "errors": {}, "last_epoch_change": now, "t": now}
    heap = [(m.due, i) for i, m in enumerate(members)]
    heapq.heapify(heap)
    while not until_pred(st):
        now = time.monotonic()
        st["t"] = now
        while heap and heap[0][0] <= now:
            _, i = heapq.heappop(heap)
            m = members[i]
            corr += 1
            c = conns[i % nconns]
            if not m.joined:
                f = cgh_frame(corr, m.group, m.mid, 0, topics=[m.topic], owned=[], rebalance_ms=300000)
            else:
                f = cgh_frame(corr, m.group, m.mid, m.epoch,
                              owned=m.owned if m.send_owned else None)
            m.send_owned = False
            c.out += f
            c.waiting[corr] = i
            heapq.heappush(heap, (now + hb_s, i))
        for c in conns:
            if c.out:
                try:
                    n = c.sock.send(c.out)
                    del c.out[:n]
                except BlockingIOError:
                    pass
        timeout = max(0.0, min(0.05, (heap[0][0] - time.monotonic()) if heap else 0.05))
        for key, _ in sel.select(timeout):
            c = key.data
            data = c.sock.recv(1 << 20)
            if not data:
                raise RuntimeError("broker closed a connection")
            c.inbuf += data
            while len(c.inbuf) >= 4:
                n = struct.unpack(">i", c.inbuf[:4])[0]
                if len(c.inbuf) < 4 + n:
                    break
                frame = bytes(c.inbuf[4:4 + n])
                del c.inbuf[:4 + n]
                rc = struct.unpack(">i", frame[:4])[0]
                m = members[c.waiting.pop(rc)]
                err, epoch, assignment = parse_cgh(frame[4:])
                st["answered"] += 1
                if err:
                    st["errors"][err] = st["errors"].get(err, 0) + 1
                    continue
                m.joined = True
                if epoch != m.epoch:
                    st["last_epoch_change"] = time.monotonic()
                    m.epoch = epoch
                if assignment is not None:
                    owned = [(t, sorted(ps)) for t, ps in assignment]
                    if owned != m.owned:
                        m.owned = owned
                        m.send_owned = True
                        st["last_epoch_change"] = time.monotonic()
    for c in conns:
        sel.unregister(c.sock)
        c.sock.close()
    return st


def load_run(binary, shape, nmembers, ngroups, hb_ms, window, run):
    b = Broker(binary=binary, broker_count=1, log_level="warn", config={
        "profile": "provisioned", "kafka.version": "4.0",
        "group.consumer.heartbeat.interval.ms": hb_ms,
        "group.consumer.session.timeout.ms": max(45000, 3 * hb_ms),
        "group.consumer.min.heartbeat.interval.ms": 100,
        "group.consumer.max.size": 2000})
    b.start()
    try:
        pid = b.proc.pid
        per_group = nmembers // ngroups
        parts = 1000 if ngroups == 1 else 4
        topics = ["load-t%d" % g for g in range(ngroups)] if ngroups > 1 else ["load-t0"]
        create_many(b.ports[0], topics, parts)
        time.sleep(1)
        rss_idle = rss_kb(pid)
        members = [Member("load-g%d" % g, topics[g]) for g in range(ngroups) for _ in range(per_group)]
        hb_s = hb_ms / 1000.0
        t_start = time.monotonic()
        st = drive(b.ports[0], members, hb_s,
                   lambda s: s["t"] - s["last_epoch_change"] > 2 * hb_s and
                   all(m.joined for m in members) or s["t"] - t_start > 600)
        settle = round(st["last_epoch_change"] - t_start, 1)
        c0, a0 = proc_cpu_s(pid), st["answered"]
        w0 = time.monotonic()
        st2 = drive(b.ports[0], members, hb_s, lambda s: s["t"] - w0 > window)
        cpu = proc_cpu_s(pid) - c0
        secs = time.monotonic() - w0
        hbs = st2["answered"]
        rss = rss_kb(pid)
        return emit({"part": "load", "shape": shape, "run": run, "members": nmembers,
                     "groups": ngroups, "settle_s": settle, "heartbeats": hbs,
                     "hb_per_s": round(hbs / secs, 1), "errors": st2["errors"],
                     "join_errors": st["errors"], "window_s": round(secs, 1),
                     "cpu_pct": round(100 * cpu / secs, 2),
                     "cpu_us_per_hb": round(cpu / max(1, hbs) * 1e6, 1),
                     "cpu_ms_per_member_s": round(cpu / secs / nmembers * 1e3, 4),
                     "rss_mb": round(rss / 1024, 1),
                     "rss_kb_per_member": round((rss - rss_idle) / nmembers, 2)})
    finally:
        b.stop(check=False)
        b.cleanup()


# -- 3. instructions per heartbeat ----------------------------------------------------------

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rounds(port, members, n=None, nconns=16):
    """Every member heartbeats once and every answer is read, round after round: n rounds, or
    (n None) until two rounds in a row changed no member's epoch or assignment. The count of
    heartbeats is exact, so two runs subtract. Returns the rounds done."""
    conns = [Conn(port) for _ in range(nconns)]
    for c in conns:
        c.sock.setblocking(True)
    corr, done, quiet = 0, 0, 0
    try:
        while (n is None and quiet < 2) or (n is not None and done < n):
            for i, m in enumerate(members):
                corr += 1
                if not m.joined:
                    f = cgh_frame(corr, m.group, m.mid, 0, topics=[m.topic], owned=[], rebalance_ms=300000)
                else:
                    f = cgh_frame(corr, m.group, m.mid, m.epoch, owned=m.owned if m.send_owned else None)
                m.send_owned = False
                c = conns[i % nconns]
                c.sock.sendall(f)
                c.waiting[corr] = i
            changed = False
            for c in conns:
                while c.waiting:
                    rc, body = kw.recv_frame(c.sock)
                    m = members[c.waiting.pop(rc)]
                    err, epoch, assignment = parse_cgh(body)
                    if err:
                        raise RuntimeError("heartbeat error %d" % err)
                    m.joined = True
                    changed |= epoch != m.epoch
                    m.epoch = epoch
                    if assignment is not None:
                        owned = [(t, sorted(ps)) for t, ps in assignment]
                        if owned != m.owned:
                            m.owned, m.send_owned, changed = owned, True, True
            done += 1
            quiet = 0 if changed else quiet + 1
    finally:
        for c in conns:
            c.sock.close()
    return done


def cost_instructions(binary, nmembers, ngroups, steady_rounds, keep=None):
    """The broker under callgrind (this machine exposes no hardware counters to perf), with
    instrumentation off while members join and settle and on (callgrind_control -i on) for
    steady_rounds rounds of heartbeats only: the broker's instructions per steady heartbeat."""
    import re
    import subprocess
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        port = free_port()
        out = Path(d) / "callgrind.out"
        argv = ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--callgrind-out-file=%s" % out, binary]
        for kv in ["plaintext.port=%d" % port, "iam.port=0", "admin.port=0", "broker.count=1",
                   "data.dir=%s" % d, "log.level=warn", "profile=provisioned", "kafka.version=4.0",
                   "group.consumer.max.size=2000", "group.consumer.session.timeout.ms=600000",
                   "group.consumer.max.session.timeout.ms=600000",
                   "group.consumer.heartbeat.interval.ms=5000"]:
            argv += ["--set", kv]
        err = open(Path(d) / "stderr.log", "wb")  # a pipe nobody reads would block the broker
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err)
        try:
            deadline = time.monotonic() + 120
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    if time.monotonic() > deadline or proc.poll() is not None:
                        raise RuntimeError("broker did not start: %s" % (Path(d) / "stderr.log").read_text()[-2000:])
                    time.sleep(0.3)
            topics = ["load-t%d" % g for g in range(ngroups)] if ngroups > 1 else ["load-t0"]
            create_many(port, topics, 1000 if ngroups == 1 else 4)
            per_group = nmembers // ngroups
            members = [Member("load-g%d" % g, topics[g]) for g in range(ngroups) for _ in range(per_group)]
            settle = rounds(port, members)
            rounds(port, members, 1)  # every connection warm
            subprocess.run(["callgrind_control", "-i", "on", str(proc.pid)], check=True, capture_output=True)
            rounds(port, members, steady_rounds)
            subprocess.run(["callgrind_control", "-i", "off", str(proc.pid)], check=True, capture_output=True)
        finally:
            proc.send_signal(15)
            proc.wait(timeout=300)
            err.close()
        text = out.read_text(errors="replace")
        if keep:  # for callgrind_annotate
            Path(keep).mkdir(parents=True, exist_ok=True)
            Path(keep, "callgrind.%s.%dx%d" % (Path(binary).name, ngroups, nmembers // ngroups)).write_text(text)
        # with instrumentation toggled, "summary:" stays 0 and "totals:" has the count
        return sum(int(x) for x in re.findall(r"^totals: (\d+)", text, re.M)), settle


def cost_run(binary, shape, nmembers, ngroups, steady, run, keep=None):
    instr, settle = cost_instructions(binary, nmembers, ngroups, steady, keep)
    return emit({"part": "cost", "shape": shape, "run": run, "binary": binary, "members": nmembers,
                 "groups": ngroups, "settle_rounds": settle, "instructions": instr,
                 "instr_per_hb": round(instr / (steady * nmembers))})


def create_many(port, topics, parts):
    """CreateTopics v5 in batches of 50 (one python client per topic would take minutes)."""
    s = kw.connect(port)
    try:
        for i in range(0, len(topics), 50):
            batch = topics[i:i + 50]
            body = kw.compact_array(batch, lambda t: kw.compact_string(t) + kw.i32(parts) + kw.i16(-1)
                                    + kw.compact_array([], None) + kw.compact_array([], None)
                                    + kw.tags())
            body += kw.i32(60000) + kw.i8(0) + kw.tags()
            hdr = kw.i16(19) + kw.i16(5) + kw.i32(i + 1) + kw.string("cg-bench") + kw.tags()
            payload = hdr + body
            s.sendall(kw.i32(len(payload)) + payload)
            kw.recv_frame(s)
    finally:
        s.close()


def summary(vals):
    vals = sorted(vals)
    return "%s [%s-%s]" % (vals[len(vals) // 2], vals[0], vals[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default=os.environ.get("MSKMOCK_BIN", str(ROOT / "build" / "mskmock")))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--parts", default="java,load")
    ap.add_argument("--hb-ms", type=int, default=5000)
    ap.add_argument("--window", type=float, default=30)
    ap.add_argument("--shapes", default="1x100,1x300,1x1000,500x2")
    ap.add_argument("--cost-rounds", type=int, default=3)
    ap.add_argument("--keep-callgrind", help="cost: keep each run's callgrind output here")
    ap.add_argument("--java-hb-ms", type=int, default=1000,
                    help="java: group.consumer.heartbeat.interval.ms (the classic client uses 1000)")
    ap.add_argument("--log-dir", help="java: keep each run's broker log (log.level=debug) here")
    a = ap.parse_args()
    os.environ["MSKMOCK_BIN"] = a.binary
    rows = []
    for run in range(a.runs):
        if "java" in a.parts:
            for protocol in (("consumer", "classic") if run % 2 == 0 else ("classic", "consumer")):
                rows.append(java_run(a.binary, protocol, run, a.log_dir, a.java_hb_ms))
        if "cost" in a.parts:
            for shape in a.shapes.split(","):
                g, per = (int(x) for x in shape.split("x"))
                rows.append(cost_run(a.binary, shape, g * per, g, a.cost_rounds, run, a.keep_callgrind))
        if "load" in a.parts:
            for shape in a.shapes.split(","):
                g, per = (int(x) for x in shape.split("x"))
                rows.append(load_run(a.binary, shape, g * per, g, a.hb_ms, a.window, run))
    print()
    for protocol in ("consumer", "classic"):
        rs = [r for r in rows if r["part"] == "java" and r["protocol"] == protocol]
        if rs:
            print("java %-8s stable_from_spawn %s s, stable_from_first %s s, crash_move %s s" % (
                protocol, summary([r["stable_from_spawn_s"] for r in rs]),
                summary([r["stable_from_first_s"] for r in rs]),
                summary([r["crash_move_s"] for r in rs])))
    for shape in a.shapes.split(","):
        rs = [r for r in rows if r["part"] == "cost" and r["shape"] == shape]
        if rs:
            print("cost %-7s %s instructions per heartbeat" % (shape, summary([r["instr_per_hb"] for r in rs])))
    for shape in a.shapes.split(","):
        rs = [r for r in rows if r["part"] == "load" and r["shape"] == shape]
        if rs:
            print("load %-7s %s hb/s, cpu %s us/hb, %s ms/member/s, rss %s MB (%s kB/member)" % (
                shape, summary([r["hb_per_s"] for r in rs]), summary([r["cpu_us_per_hb"] for r in rs]),
                summary([r["cpu_ms_per_member_s"] for r in rs]), summary([r["rss_mb"] for r in rs]),
                summary([r["rss_kb_per_member"] for r in rs])))


if __name__ == "__main__":
    main()
