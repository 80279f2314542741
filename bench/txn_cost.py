#!/usr/bin/env python3
"""Transactions (issue 37, goal 2): what one transaction costs the broker, for interleaving two
builds and for attaching a profiler to the measured transactions only.

    .venv/bin/python bench/txn_cost.py --targets BIN_A,BIN_B,mock [--rounds 5] [--txns 2000]
        [--warmup 200] [--prof 'perf record -g -p {pid} -o perf.data'] [--callgrind] [--quiet-wait 0]

Each target is a path to an mskmock binary (started as bench/txn_throughput.py starts its
"mskmock" target: defaults, storage.sync=normal, a fresh temp dir, 3 brokers) or "mock"
(librdkafka's mock cluster in a child process). A binary may be followed by ":KEY=VALUE;..."
(settings given with --set, e.g. BIN:storage.sync=off; BIN:data.dir=:memory: runs it with
--data-dir :memory:, as txn_throughput.py's "mskmock-mem") and a target preceded by "LABEL=" (a name
for the output's "label", e.g. off=BIN:storage.sync=off; else the target as written). Per round,
every target in turn: start it, create one 3-partition topic, run --warmup transactions, then
--txns measured ones with bench/txn_throughput.py's own measure_txns (10 records of 100 bytes over partitions 0, 1, 2;
begin, produce, commit_transaction), and stop it. One JSON line per measurement. With
--quiet-wait S, before each target's run it waits up to S seconds for the machine to be quiet, as
bench/txn_throughput.py does (busy_cores_before: what it saw).

--prof runs a command (with {pid}, the broker's) over the measured transactions only and sends
it SIGINT at the end (perf record, strace -c -f, perf stat). --callgrind runs mskmock targets
under valgrind's callgrind and zeroes its counters when the measured transactions start and
dumps them when they end, so "instructions" is every broker thread's user-space instructions
per measured transaction (for machines whose perf has no hardware counters, as in a VM); its CPU
and rate figures are valgrind's and mean nothing.
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import txn_throughput as tb  # noqa: E402


def callgrind_total(path):
    """Instructions in a callgrind dump: the summary line."""
    with open(path) as f:
        for line in f:
            if line.startswith("summary:") or line.startswith("totals:"):
                return int(line.split()[1])
    return None


def parse_target(spec):
    """LABEL=BIN:K=V;K=V -> (label, BIN or "mock", [K=V, ...])."""
    label = spec
    head, eq, rest = spec.partition("=")
    if eq and "/" not in head and ":" not in head:
        label, spec = head, rest
    binary, _, sets = spec.partition(":")
    return label, binary, [kv for kv in sets.split(";") if kv]


def run_one(spec, a, rnd):
    label, target, sets = parse_target(spec)
    topics = ["txn-%s" % uuid.uuid4().hex[:8]]
    cg_dir = None
    busy = tb.wait_quiet(a.quiet_wait) if a.quiet_wait > 0 else None
    if target == "mock":
        b = tb.Mock(topics)
    else:
        binary = target
        if a.callgrind:
            cg_dir = tempfile.mkdtemp(prefix="txncost-cg-")
            wrap = os.path.join(cg_dir, "wrap.sh")
            with open(wrap, "w") as f:
                f.write("#!/bin/sh\nexec valgrind --tool=callgrind --callgrind-out-file=%s/cg.out %s \"$@\" 2>%s/vg.log\n"
                        % (cg_dir, os.path.abspath(target), cg_dir))
            os.chmod(wrap, 0o755)
            binary = wrap
        # the data dir is an argument of its own (--data-dir), which a --set would not override
        memory = "data.dir=:memory:" in sets
        b = tb.Mskmock(binary, [kv for kv in sets if kv != "data.dir=:memory:"], memory=memory)
        b.create_topics(topics)
    try:
        m = argparse.Namespace(txns=a.warmup, warmup=0, records_per_txn=10, value_size=100, producer_set=[])
        if a.warmup:
            tb.measure_txns(b, topics[0], m)
        m.txns = a.txns
        prof = None
        if a.prof:
            prof = subprocess.Popen(a.prof.format(pid=b.pid), shell=True, start_new_session=True)
            time.sleep(1.0)
        if cg_dir:
            subprocess.run(["callgrind_control", "-z", str(b.pid)], check=True, capture_output=True)
        r = tb.measure_txns(b, topics[0], m)
        if cg_dir:
            subprocess.run(["callgrind_control", "-d", str(b.pid)], check=True, capture_output=True)
        if prof:
            os.killpg(prof.pid, signal.SIGINT)
            prof.wait()
        out = {"round": rnd, "target": spec, "label": label, "busy_cores_before": busy,
               "loadavg": open("/proc/loadavg").read().split()[0]}
        out.update({k: r[k] for k in ("txn_per_s", "broker_cpu_us_per_txn", "commit_p50_ms", "client_errors")})
        if cg_dir:
            total = callgrind_total(os.path.join(cg_dir, "cg.out.1"))
            out["instructions_per_txn"] = round(total / a.txns) if total else None
            out["callgrind_dump"] = os.path.join(cg_dir, "cg.out.1")
        print(json.dumps(out), flush=True)
    finally:
        b.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--targets", required=True,
                    help="comma-separated: [LABEL=]mskmock binaries[:KEY=VALUE;...] and/or mock")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--txns", type=int, default=2000)
    ap.add_argument("--warmup", type=int, default=200)
    ap.add_argument("--prof", default="", help="a command run over the measured transactions; {pid}: the broker's")
    ap.add_argument("--callgrind", action="store_true", help="mskmock targets under callgrind (instructions)")
    ap.add_argument("--quiet-wait", type=float, default=0,
                    help="before each target's run, wait up to this many seconds for the machine to be quiet; 0: don't")
    a = ap.parse_args()
    for rnd in range(a.rounds):
        for t in a.targets.split(","):
            run_one(t, a, rnd)


if __name__ == "__main__":
    main()
