"""Idempotent producer state across restarts now that it is a snapshot plus the batches after it
(issue 37, schema migration 18) rather than an index over every batch.

Over raw sockets, as test_produce_rules.py: a clean stop writes the snapshot, batches produced
after it are only in the log when a kill -9 follows, and DeleteRecords trims the snapshot of
the partition whose batches it removes (schema migration 19: the producers whose newest batch it
removed are gone, as Kafka's truncateHead drops them; the others keep their state) (the kafka
profile, which serves DeleteRecords). In each case a retry of one of the producer's last five
batches is still answered as a duplicate with its original offset, a sequence gap with
OUT_OF_ORDER_SEQUENCE_NUMBER (45) and an older epoch with INVALID_PRODUCER_EPOCH (47), as
Apache Kafka's ProducerStateManager answers after loading its snapshot and replaying the log.
"""

import time

import pytest

import kafka_wire as kw

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

PRODUCE_V = 8


@pytest.fixture(scope="module")
def broker_config():
    return {"profile": "kafka"}  # DeleteRecords: MSK Serverless has none (test_admin_apis.py)


def idempotent_batch(pid, epoch, seq, count):
    ts = int(time.time() * 1000)
    recs = b"".join(kw.record(i, b"k%d" % (seq + i), b"v%d" % (seq + i)) for i in range(count))
    after_crc = (kw.i16(0) + kw.i32(count - 1) + kw.i64(ts) + kw.i64(ts)
                 + kw.i64(pid) + kw.i16(epoch) + kw.i32(seq) + kw.i32(count) + recs)
    after_length = kw.i32(-1) + kw.i8(2) + kw.u32(kw.crc32c(after_crc)) + after_crc
    return kw.i64(0) + kw.i32(len(after_length)) + after_length


def produce(broker, topic, batch):
    """One Produce (acks=all) to partition 0's leader: (error, base_offset)."""
    with kw.connect(broker.port) as s:
        s.sendall(kw.metadata_request(kw.METADATA_V, 1, "snap", [topic]))
        md = kw.parse_metadata(kw.METADATA_V, kw.recv_frame(s)[1])
    leader = md["topics"][0]["partitions"][0]["leader"]
    with kw.connect(md["brokers"][leader][1]) as s:
        s.sendall(kw.produce_request(PRODUCE_V, 2, "snap", topic, 0, batch, acks=-1))
        p = kw.parse_produce(PRODUCE_V, kw.recv_frame(s)[1])[0]["partitions"][0]
    return p["error"], p["base_offset"]


def create(broker, name):
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(name, 1)])[name].result(timeout=30)


def test_duplicate_after_kill9_past_the_snapshot(broker):
    create(broker, "snap-kill9")
    pid = 880001
    for i in range(6):  # offsets 0..11, sequences 0..11
        assert produce(broker, "snap-kill9", idempotent_batch(pid, 0, 2 * i, 2)) == (0, 2 * i)
    broker.restart()  # the clean stop writes the snapshot
    for i in range(6, 9):  # in the log only: no snapshot covers them when the kill comes
        assert produce(broker, "snap-kill9", idempotent_batch(pid, 0, 2 * i, 2)) == (0, 2 * i)
    broker.kill9()
    # the newest batch, and the oldest of the last five (covered by the snapshot): duplicates
    assert produce(broker, "snap-kill9", idempotent_batch(pid, 0, 16, 2)) == (0, 16)
    assert produce(broker, "snap-kill9", idempotent_batch(pid, 0, 8, 2)) == (0, 8)
    assert produce(broker, "snap-kill9", idempotent_batch(pid, 0, 20, 1))[0] == 45
    assert produce(broker, "snap-kill9", idempotent_batch(pid, 1, 0, 1)) == (0, 18)
    broker.kill9()
    assert produce(broker, "snap-kill9", idempotent_batch(pid, 0, 18, 1))[0] == 47
    assert produce(broker, "snap-kill9", idempotent_batch(pid, 1, 0, 1)) == (0, 18)
    assert produce(broker, "snap-kill9", idempotent_batch(pid, 1, 1, 1)) == (0, 19)


def test_duplicate_after_delete_records_drops_the_snapshot(broker):
    create(broker, "snap-deleted")
    pid = 880002
    for i in range(6):
        assert produce(broker, "snap-deleted", idempotent_batch(pid, 0, 2 * i, 2)) == (0, 2 * i)
    broker.restart()
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    tp = TopicPartition("snap-deleted", 0, 8)
    assert admin.delete_records([tp], operation_timeout=10)[tp].result(timeout=30).low_watermark == 8
    broker.kill9()
    # the state now comes from the batches left (offsets 8..11), as it did from the index: a retry
    # of a removed batch is no duplicate any more
    assert produce(broker, "snap-deleted", idempotent_batch(pid, 0, 4, 2))[0] == 45
    assert produce(broker, "snap-deleted", idempotent_batch(pid, 0, 10, 2)) == (0, 10)
    assert produce(broker, "snap-deleted", idempotent_batch(pid, 0, 8, 2)) == (0, 8)
    assert produce(broker, "snap-deleted", idempotent_batch(pid, 0, 12, 1)) == (0, 12)
    broker.restart()
    assert produce(broker, "snap-deleted", idempotent_batch(pid, 0, 12, 1)) == (0, 12)
    assert produce(broker, "snap-deleted", idempotent_batch(pid, 0, 14, 1))[0] == 45


def test_delete_records_trims_the_snapshot_to_the_producers_left(broker):
    """DeleteRecords past one producer's batches trims the snapshot rather than dropping it
    (issue 37, migration 19): the other producer's state, read from the trimmed snapshot after a
    kill -9, answers its retries as a fold of the batches left would."""
    create(broker, "snap-trimmed")
    gone, kept = 880003, 880004
    for i in range(3):  # offsets 0..5
        assert produce(broker, "snap-trimmed", idempotent_batch(gone, 0, 2 * i, 2)) == (0, 2 * i)
    for i in range(6):  # offsets 6..17
        assert produce(broker, "snap-trimmed", idempotent_batch(kept, 0, 2 * i, 2)) == (0, 6 + 2 * i)
    broker.restart()  # the clean stop writes the snapshot of both
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    tp = TopicPartition("snap-trimmed", 0, 10)
    assert admin.delete_records([tp], operation_timeout=10)[tp].result(timeout=30).low_watermark == 10
    broker.kill9()
    # the kept producer: its batches from offset 10 on are duplicates, the removed ones are not
    assert produce(broker, "snap-trimmed", idempotent_batch(kept, 0, 10, 2)) == (0, 16)
    assert produce(broker, "snap-trimmed", idempotent_batch(kept, 0, 4, 2)) == (0, 10)
    assert produce(broker, "snap-trimmed", idempotent_batch(kept, 0, 2, 2))[0] == 45
    assert produce(broker, "snap-trimmed", idempotent_batch(kept, 0, 14, 1))[0] == 45
    assert produce(broker, "snap-trimmed", idempotent_batch(kept, 0, 12, 1)) == (0, 18)
    broker.restart()
    assert produce(broker, "snap-trimmed", idempotent_batch(kept, 0, 12, 1)) == (0, 18)
    assert produce(broker, "snap-trimmed", idempotent_batch(kept, 0, 13, 1)) == (0, 19)
