"""The compaction cleaner's thread runs at the lowest priority (SCHED_IDLE), so the loop must never
wait for anything that thread holds (issue 37, goal 4: a neighbour's produce latency during a
pass). A regression test for the priority inversion of handing a pass back through libuv's
uv_async_send under a mutex. It asserts an upper bound on the loop's stalls with the broker pinned
beside busy processes: listed in serial-modules.txt.
"""

import os
import re
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness import Broker, running

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import Producer  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

PAD = b"x" * 200


def create(bootstrap, name, **config):
    a = AdminClient({"bootstrap.servers": bootstrap})
    cfg = {k.replace("_", "."): str(v) for k, v in config.items()}
    for f in a.create_topics([NewTopic(name, 1, -1, config=cfg)]).values():
        f.result(30)


def _api_versions_rtt(sock, corr):
    """One ApiVersions v0 round trip on sock, in seconds: it waits for whatever holds the loop."""
    body = struct.pack(">hhih", 18, 0, corr, 5) + b"probe"
    t = time.monotonic()
    sock.sendall(struct.pack(">i", len(body)) + body)

    def recv(n):
        buf = b""
        while len(buf) < n:
            chunk = sock.recv(n - len(buf))
            assert chunk, "the broker closed the probe's connection"
            buf += chunk
        return buf
    recv(struct.unpack(">i", recv(4))[0])
    return time.monotonic() - t


def _pin(pid, cpu):
    for task in Path("/proc/%d/task" % pid).iterdir():
        try:
            os.sched_setaffinity(int(task.name), {cpu})
        except ProcessLookupError:
            pass


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or not Path("/proc/self/task").is_dir(),
                    reason="Linux's CPU affinity and /proc")
def test_priority_inversion_the_loop_never_waits_for_the_idle_cleaner_thread():
    """The cleaner's thread runs at SCHED_IDLE, so anything the loop waits for must never be held
    by it: handed back through libuv's uv_async_send under a mutex, the loop woke inside the call,
    preempted the thread there, then spun and yielded (uv__async_spin) or blocked on the mutex
    until the thread got the core back, which
    took 1-1.5 s with two busy normal-priority processes on that core. Here the broker and two such
    processes share one core while small passes run back to back; a probe's longest ApiVersions
    round trip bounds the loop's stalls (the loop itself waits a few scheduler slices at most)."""
    with running(Broker(config={"log.cleaner.backoff.ms": 50})) as broker:
        topic = "offloop-inversion"
        create(broker.bootstrap, topic, cleanup_policy="compact")
        p = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0})
        since = broker.log_size()
        host, port = broker.bootstrap.split(",")[0].rsplit(":", 1)
        sock = socket.create_connection((host, int(port)))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        hogs = [subprocess.Popen([sys.executable, "-c", "import os\nos.sched_setaffinity(0, {0})\nwhile True: pass"])
                for _ in range(2)]
        others = os.sched_getaffinity(0)
        try:
            if len(others) > 1:
                os.sched_setaffinity(0, others - {0})  # this process, the producer and the probe elsewhere
            worst, corr, passes = 0.0, 0, 0
            deadline = time.monotonic() + 60
            while passes < 8 and time.monotonic() < deadline:
                for i in range(300):
                    p.produce(topic, key=b"k%d" % (i % 10), value=PAD)
                assert p.flush(30) == 0
                _pin(broker.proc.pid, 0)  # the cleaner's thread too, once it exists
                t_next = time.monotonic() + 0.2
                while time.monotonic() < t_next:
                    corr += 1
                    worst = max(worst, _api_versions_rtt(sock, corr))
                passes = len(re.findall(r"compaction: %s-0 offsets \[" % topic, broker.log_since(since)))
        finally:
            os.sched_setaffinity(0, others)
            for hog in hogs:
                hog.kill()
                hog.wait()
            sock.close()
        assert passes >= 3, broker.log_tail()
        # before the fix: 1,089 and 1,576 ms; after it 63 ms (on a machine at load average 115)
        assert worst < 0.25, "the loop was held %.0f ms over %d passes" % (worst * 1000, passes)
