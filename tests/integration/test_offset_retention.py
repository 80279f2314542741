"""Committed offsets expire as Kafka's KIP-211 rules say; an explicit OffsetCommit v2
retention_time_ms sets the expiry of that commit. Raw requests, so the versions are exact."""

import time

import pytest

import kafka_wire as kw

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

OFFSET_COMMIT, OFFSET_FETCH = 8, 9


@pytest.fixture(scope="module")
def broker_config():
    return {"offsets.retention.check.interval.ms": 100}


@pytest.fixture(scope="module")
def topic(broker):
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic("ret-offsets", 1)])["ret-offsets"].result(timeout=30)
    return "ret-offsets"


def commit_v2(sock, group, topic, partition, offset, retention_ms):
    body = (kw.string(group) + kw.i32(-1) + kw.string("") + kw.i64(retention_ms)
            + kw.array([kw.string(topic) + kw.array([kw.i32(partition) + kw.i64(offset) + kw.string("m")],
                                                     lambda p: p)], lambda t: t))
    sock.sendall(kw.request(OFFSET_COMMIT, 2, 7, "retention", body))
    _, body = kw.recv_frame(sock)
    r = kw.Reader(body)
    topics = r.array(lambda r: (r.string(), r.array(lambda r: (r.i32(), r.i16()))))
    return topics[0][1][0][1]


def fetch_v1(sock, group, topic, partition):
    body = kw.string(group) + kw.array([kw.string(topic) + kw.array([kw.i32(partition)], lambda p: p)], lambda t: t)
    sock.sendall(kw.request(OFFSET_FETCH, 1, 8, "retention", body))
    _, body = kw.recv_frame(sock)
    r = kw.Reader(body)
    topics = r.array(lambda r: (r.string(), r.array(lambda r: (r.i32(), r.i64(), r.string(), r.i16()))))
    _, offset, metadata, err = topics[0][1][0]
    return offset, metadata, err


def test_explicit_retention_time_expires_the_commit(broker, topic):
    port = kw.coordinator_port(broker.port, "ret-group")
    s = kw.connect(port)
    assert commit_v2(s, "ret-group", "ret-offsets", 0, 42, 600) == 0
    assert fetch_v1(s, "ret-group", "ret-offsets", 0) == (42, "m", 0)
    deadline = time.time() + 10
    while time.time() < deadline and fetch_v1(s, "ret-group", "ret-offsets", 0)[0] == 42:
        time.sleep(0.1)
    assert fetch_v1(s, "ret-group", "ret-offsets", 0) == (-1, "", 0)
    s.close()
    assert broker.wait_for_log(r"group ret-group: 1 committed offsets expired")


def test_default_retention_keeps_offsets(broker, topic):
    port = kw.coordinator_port(broker.port, "kept-group")
    s = kw.connect(port)
    assert commit_v2(s, "kept-group", "ret-offsets", 0, 7, -1) == 0
    time.sleep(0.5)  # several expiry sweeps (every 100 ms) pass
    assert fetch_v1(s, "kept-group", "ret-offsets", 0) == (7, "m", 0)
    s.close()


def test_int64_max_retention_time_keeps_the_commit(broker, topic):
    """Issue 35: retention_time_ms = INT64_MAX overflowed now + retention (undefined behaviour; the
    sanitized broker stopped). It saturates: the commit is kept, as with a long retention."""
    port = kw.coordinator_port(broker.port, "max-ret-group")
    s = kw.connect(port)
    assert commit_v2(s, "max-ret-group", "ret-offsets", 0, 11, (1 << 63) - 1) == 0
    time.sleep(0.5)  # several expiry sweeps (every 100 ms) pass
    assert fetch_v1(s, "max-ret-group", "ret-offsets", 0) == (11, "m", 0)
    s.close()
    broker.assert_alive()
