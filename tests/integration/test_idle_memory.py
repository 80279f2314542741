"""What an idle broker keeps (issue 37, memory) and that nothing was lost by keeping less.

  - libsnappy (and the C++ runtime it needs) is loaded at the first snappy batch, not at start;
    snappy batches are then stored and read back as before.
  - OpenSSL's server context is made at the first TLS connection: the local CA is still written
    at start, the first handshake works at once, and only then does libcrypto's resident share
    grow (it grew by ~2 MiB at start before).
  - A connection with 64 KiB of requests not yet answered is not read until answers go out:
    a client that pipelines 1.5 MiB of produce requests in one burst still gets every answer,
    in order.
  - A whole frame cut from a read holds a buffer of its own size, not of everything left in the
    read (each small frame of a 64 KiB read held up to 64 KiB until answered).
"""

import socket
import ssl
import threading
import time

import pytest

import kafka_wire as kw
from harness import Broker

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402


@pytest.fixture
def fresh():
    """A broker per test: what is mapped depends on what the broker has done."""
    b = Broker()
    b.start()
    yield b
    try:
        b.stop(check=True)
    finally:
        b.cleanup()


def maps(pid):
    with open("/proc/%d/maps" % pid) as f:
        return f.read()


def rss_kib(pid, lib):
    """Resident KiB of every mapping of the file whose name contains lib."""
    total, inside = 0, False
    with open("/proc/%d/smaps" % pid) as f:
        for line in f:
            head = line.split()
            if head and "-" in head[0] and ":" not in head[0]:
                inside = len(head) > 5 and lib in head[5]
            elif inside and head[0] == "Rss:":
                total += int(head[1])
    return total


def create_topic(bootstrap, name):
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(name, 1, 3)]).values():
        f.result(30)


def test_snappy_is_loaded_at_the_first_snappy_batch(fresh):
    pid = fresh.proc.pid
    at_start = maps(pid)
    assert "libsnappy" not in at_start, "an idle broker should not map libsnappy"
    if "libasan" not in at_start:  # the sanitizers' runtime brings the C++ runtime itself
        assert "libstdc++" not in at_start, "an idle broker should not map the C++ runtime"
    create_topic(fresh.bootstrap, "snappy-lazy")
    p = Producer({"bootstrap.servers": fresh.bootstrap, "compression.type": "snappy", "linger.ms": 50})
    values = [b"snappy %d " % i * 40 for i in range(20)]
    for v in values:
        p.produce("snappy-lazy", v)
    assert p.flush(30) == 0
    assert "libsnappy" in maps(pid)
    c = Consumer({"bootstrap.servers": fresh.bootstrap, "group.id": "snappy-lazy", "enable.auto.commit": False})
    c.assign([TopicPartition("snappy-lazy", 0, OFFSET_BEGINNING)])
    got = []
    while len(got) < len(values):
        m = c.poll(10)
        assert m is not None, "only %d of %d records came back" % (len(got), len(values))
        assert m.error() is None, m.error()
        got.append(m.value())
    c.close()
    assert got == values


def test_tls_context_is_made_at_the_first_connection(fresh):
    ca = fresh.data_dir / "tls" / "ca.pem"
    assert ca.exists(), "ca.pem must be written at start, for clients to trust at once"
    assert "created local CA" in fresh.log_tail(200)
    pid = fresh.proc.pid
    before = rss_kib(pid, "libcrypto")
    ctx = ssl.create_default_context(cafile=str(ca))
    with socket.create_connection(("127.0.0.1", fresh.iam_port), timeout=10) as s:
        with ctx.wrap_socket(s, server_hostname="127.0.0.1") as t:
            assert t.version() in ("TLSv1.2", "TLSv1.3")
    after = rss_kib(pid, "libcrypto")
    # OpenSSL's set-up (providers, DRBG, ciphers) touches >1.5 MiB of libcrypto; at start it
    # must not have happened yet
    assert after - before > 512, "libcrypto resident %d KiB before the first TLS connection, %d after" % (before, after)


def test_pipelined_burst_beyond_the_read_ahead_is_answered_in_order(fresh):
    create_topic(fresh.bootstrap, "burst")
    md = AdminClient({"bootstrap.servers": fresh.bootstrap}).list_topics(timeout=30)
    leader = md.brokers[md.topics["burst"].partitions[0].leader]
    n, value = 200, b"v" * 7000  # 1.4 MB of requests, 22 times the 64 KiB read-ahead
    frames = b"".join(kw.produce_request(8, 1000 + i, "burst", "burst", 0,
                                         kw.record_batch([(b"k%d" % i, value, [])]))
                      for i in range(n))
    s = kw.connect(leader.port, timeout=30)
    sender = threading.Thread(target=s.sendall, args=(frames,))
    sender.start()
    offsets = []
    for i in range(n):
        corr, body = kw.recv_frame(s)
        assert corr == 1000 + i
        part = kw.parse_produce(8, body)[0]["partitions"][0]
        assert part["error"] == 0, part
        offsets.append(part["base_offset"])
    sender.join(30)
    s.close()
    assert offsets == list(range(n))


def vm_rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_whole_frames_cut_from_one_read_hold_only_their_own_size(fresh):
    """Regression (issue 37): a whole frame cut out of the read buffer was given a buffer the
    size of everything left in it, so each of the 250 small frames of one 60 KB read held up to
    60 KB (~1 MiB resident per connection here, 53 MB of frame buffers for 19 MB of frames under
    50 producers). A parked Fetch (long poll on an empty partition) keeps the frames behind it
    queued, and so their buffers alive, while the RSS is read."""
    create_topic(fresh.bootstrap, "held")
    md = AdminClient({"bootstrap.servers": fresh.bootstrap}).list_topics(timeout=30)
    leader = md.brokers[md.topics["held"].partitions[0].leader]
    nconn, nframes, client = 16, 250, "c" * 200  # 250 frames of ~230 bytes: one 57 KB write
    burst = kw.fetch_request(1, "held", "held", 0, 0, max_wait_ms=10000, min_bytes=1)
    burst += b"".join(kw.api_versions_request(2 + i, client, version=0) for i in range(nframes))
    assert len(burst) < 64 << 10
    socks = [kw.connect(leader.port, timeout=30) for _ in range(nconn)]
    try:
        before = vm_rss_kib(fresh.proc.pid)
        for s in socks:
            s.sendall(burst)
        time.sleep(1.0)  # the reads are done; the Fetch waits 10 s
        grown = vm_rss_kib(fresh.proc.pid) - before
        # measured: ~2 MiB with the fix (frames, their requests, socket buffers), ~17.8 MiB with the bug
        assert grown < 6 * 1024, "RSS grew %d KiB with %d connections of %d queued frames" % (grown, nconn, nframes)
        for s in socks:  # nothing lost: the Fetch answers at its max wait, then every ApiVersions in order
            assert kw.recv_frame(s)[0] == 1
            for i in range(nframes):
                assert kw.recv_frame(s)[0] == 2 + i
    finally:
        for s in socks:
            s.close()
