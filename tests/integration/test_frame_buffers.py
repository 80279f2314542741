"""Frames that share one read (broker/net/net.c, take_rbuf): a whole frame at the start of the
connection's read buffer takes the buffer itself, shrunk to it, and only the bytes behind it are
copied into a new read buffer (issue 37: one copy of each frame fewer). These tests send
several requests in one write, the last one cut short, and check that every request is
answered, in order, and that the batches are stored intact (read back with Fetch).
"""

import time

import pytest

import kafka_wire as kw
from harness import Broker, running

PRODUCE_V = kw.PRODUCE_V


@pytest.fixture(scope="module")
def broker():
    with running(Broker(broker_count=1)) as b:  # one node: it leads every partition
        yield b


def create_topic(broker, name):
    with kw.connect(broker.port) as s:
        s.sendall(kw.create_topics_request(kw.CREATE_TOPICS_V, 1, "fb", name, 1, 1))
        _, body = kw.recv_frame(s)
    assert kw.parse_create_topics(kw.CREATE_TOPICS_V, body)[0]["error"] == 0, body


def produce_frame(corr, topic, value):
    return kw.produce_request(PRODUCE_V, corr, "fb", topic, 0, kw.record_batch([(b"k", value, ())]))


def check_produce(sock, corr, want_offset):
    got, body = kw.recv_frame(sock)
    assert got == corr, "answer to correlation id %d came where %d was due" % (got, corr)
    (p,) = kw.parse_produce(PRODUCE_V, body)[0]["partitions"]
    assert p["error"] == 0 and p["base_offset"] == want_offset, p


def stored(broker, topic):
    with kw.connect(broker.port) as s:
        s.sendall(kw.fetch_request(99, "fb", topic, 0, 0, max_bytes=8 << 20))
        _, body = kw.recv_frame(s)
    (p,) = kw.parse_fetch(kw.FETCH_V, body)["topics"][0]["partitions"]
    assert p["error"] == 0, p
    return p["records"] or b""


def test_frames_sharing_a_read_are_answered_in_order_and_stored_intact(broker):
    topic = "frame-buffers"
    create_topic(broker, topic)
    big1 = bytes(range(256)) * 120          # ~30 KiB: the first frame, more than what follows it
    small = b"small" * 20
    big2 = bytes(reversed(range(256))) * 100
    alone = b"alone" * 1000
    f1 = produce_frame(11, topic, big1)
    f2 = kw.api_versions_request(12, "fb")
    f3 = produce_frame(13, topic, small)
    f4 = produce_frame(14, topic, big2)
    with kw.connect(broker.port, timeout=10) as s:
        # f1 whole with fewer bytes behind it than its own: f1 takes the buffer, f2, f3 and the
        # first 10 bytes of f4 move to a new one; f4's rest completes it there
        s.sendall(f1 + f2 + f3 + f4[:10])
        time.sleep(0.3)
        s.sendall(f4[10:])
        check_produce(s, 11, 0)
        got, body = kw.recv_frame(s)
        assert got == 12 and kw.parse_api_versions(body)[0] == 0, (got, body[:16])
        check_produce(s, 13, 1)
        check_produce(s, 14, 2)
        # a frame alone in its read: the buffer is handed over with nothing to copy out
        s.sendall(produce_frame(15, topic, alone))
        check_produce(s, 15, 3)
        # a small frame followed by a larger one: the small one is copied, the larger one then
        # starts the buffer
        s.sendall(produce_frame(16, topic, small) + produce_frame(17, topic, big1))
        check_produce(s, 16, 4)
        check_produce(s, 17, 5)
    records = stored(broker, topic)
    for name, v in (("big1", big1), ("small", small), ("big2", big2), ("alone", alone)):
        assert v in records, "%s is not stored intact" % name
    assert records.count(big1) == 2 and records.count(small) == 2
    broker.assert_alive()
