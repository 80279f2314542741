"""Numbers a client chooses at the edge of their type (issue 35), over raw sockets.

  test_int64_max_producer_id_exhausts_ids_without_overflow   see below
  test_partition_counts_past_one_operation_are_refused       CreateTopics / CreatePartitions of
        2^31-1 partitions held the broker's loop for good with max.partitions=0 (no limit);
        Kafka's KRaft controller refuses an operation of more than 10000 records
        (QuorumController.MAX_RECORDS_PER_USER_OP) with POLICY_VIOLATION, and so do we

An idempotent producer may ask for the next epoch of the producer id it holds (InitProducerId
v3+, KIP-360), and the broker's next producer id then follows it so that it never hands that id
out again. With producer_id = INT64_MAX the broker computed INT64_MAX + 1: undefined behaviour
(the sanitized broker stopped). Now the next id saturates, and once no block of ids fits below
INT64_MAX, InitProducerId answers UNKNOWN_SERVER_ERROR (-1), as Kafka does when its producer
ids are exhausted (ProducerIdControlManager), instead of overflowing; the broker goes on.
"""

import pytest

import kafka_wire as kw
from harness import Broker, running

pytestmark = pytest.mark.timeout(120)

INIT_V = 4
INT64_MAX = (1 << 63) - 1
INT32_MAX = (1 << 31) - 1
API_CREATE_PARTITIONS = 37
POLICY_VIOLATION = 44


@pytest.fixture
def broker():
    with running(Broker(broker_count=1, config={"default.replication.factor": 1})) as b:
        yield b


def init_producer_id(port, transactional_id=None, producer_id=-1, epoch=-1, corr=1):
    if transactional_id:
        port = kw.coordinator_port(port, transactional_id, key_type=1)
    with kw.connect(port) as s:
        s.sendall(kw.init_producer_id_request(INIT_V, corr, "bounds", transactional_id, 60000, producer_id, epoch))
        _, body = kw.recv_frame(s)
    return kw.parse_init_producer_id(INIT_V, body)


def test_int64_max_producer_id_exhausts_ids_without_overflow(broker):
    r = init_producer_id(broker.port, producer_id=INT64_MAX, epoch=0)
    assert r == {"error": 0, "producer_id": INT64_MAX, "producer_epoch": 1}
    since = broker.log_size()
    assert init_producer_id(broker.port, corr=2) == {"error": -1, "producer_id": -1, "producer_epoch": -1}
    assert broker.wait_for_log(r"refused error=UNKNOWN_SERVER_ERROR\(-1\): no producer id left to give", since=since)
    assert broker.wait_for_log(r"producer ids are exhausted", since=since)
    r = init_producer_id(broker.port, transactional_id="bounds-txn", corr=3)
    assert r == {"error": -1, "producer_id": -1, "producer_epoch": -1}
    broker.assert_alive()


def create_partitions(port, topic, count):
    """CreatePartitions v1 of one topic, no assignments: (error, message)."""
    body = (kw.array([kw.string(topic) + kw.i32(count) + kw.i32(-1)], lambda t: t)  # assignments: null
            + kw.i32(30000) + kw.boolean(False))
    with kw.connect(port, timeout=10) as s:
        s.sendall(kw.request(API_CREATE_PARTITIONS, 1, 5, "bounds", body))
        _, body = kw.recv_frame(s)
    r = kw.Reader(body)
    r.i32()  # throttle_time_ms
    (res,) = r.array(lambda r: (r.string(), r.i16(), r.string()))
    return res[1], res[2]


def create_topic(port, name, partitions):
    with kw.connect(port, timeout=10) as s:
        s.sendall(kw.create_topics_request(kw.CREATE_TOPICS_V, 1, "bounds", name, partitions, 1))
        _, body = kw.recv_frame(s)
    (t,) = kw.parse_create_topics(kw.CREATE_TOPICS_V, body)
    return t["error"], t["message"]


def test_partition_counts_past_one_operation_are_refused():
    with running(Broker(broker_count=1, config={"default.replication.factor": 1, "max.partitions": 0})) as b:
        for count in (INT32_MAX, 10000):
            assert create_topic(b.port, "huge", count) == (POLICY_VIOLATION,
                                                           "Unable to perform excessively large batch operation.")
        assert create_topic(b.port, "small", 1)[0] == 0
        assert create_partitions(b.port, "small", INT32_MAX) == (
            POLICY_VIOLATION, "Unable to perform excessively large batch operation.")
        assert create_partitions(b.port, "small", 3)[0] == 0
        b.assert_alive()
