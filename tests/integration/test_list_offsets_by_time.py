"""ListOffsets by time answers a record, not its batch (issue 30, librdkafka 0054 and 0081).

Ten records in one batch (offsets 0-9, timestamps b + i*1000): Kafka answers b+5000 with offset 5
and timestamp b+5000, an exact b with 0 and b, and after DeleteRecords to 3 a lookup of b with 3
(the log start), never below it. MAX_TIMESTAMP (-3) answers the record with the largest timestamp
(KIP-734, KAFKA-16310), not the batch's last offset. mskmock answered the batch: offset 0 and its
max timestamp b+9000 every time, and 0 below the log start, after which the consumer got
OFFSET_OUT_OF_RANGE. Driven with librdkafka (confluent-kafka's offsets_for_times, list_offsets,
delete_records), over compressed and uncompressed batches.
"""

import time

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic, OffsetSpec

BASE = 1_700_000_000_000  # CreateTime of record 0; well inside the default timestamp window (none)


@pytest.fixture(scope="module")
def broker_config():
    return {"profile": "kafka"}


@pytest.fixture(scope="module")
def admin(broker):
    return AdminClient({"bootstrap.servers": broker.bootstrap})


def one_batch(broker, admin, topic, timestamps, compression="none"):
    """The records in one produced batch (linger long enough, one flush), at the given CreateTimes."""
    for f in admin.create_topics([NewTopic(topic, 1, 1)]).values():
        f.result(10)
    p = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 2000, "compression.type": compression,
                  "batch.num.messages": 1000})
    delivered = []
    for i, ts in enumerate(timestamps):
        p.produce(topic, value=b"v%d" % i, partition=0, timestamp=ts,
                  on_delivery=lambda err, msg: delivered.append((err, msg.offset())))
    assert p.flush(15) == 0
    assert [e for e, _ in delivered] == [None] * len(timestamps)
    assert sorted(o for _, o in delivered) == list(range(len(timestamps)))


def offset_for(broker, topic, ts):
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "by-time"})
    try:
        return c.offsets_for_times([TopicPartition(topic, 0, ts)], timeout=10)[0].offset
    finally:
        c.close()


def listed(admin, topic, spec):
    res = admin.list_offsets({TopicPartition(topic, 0): spec})
    info = res[TopicPartition(topic, 0)].result(10)
    return info.offset, info.timestamp


@pytest.mark.parametrize("compression", ["none", "zstd"])
def test_offsets_for_times_resolves_to_the_record_not_the_batch(broker, admin, compression):
    topic = "by-time-" + compression
    one_batch(broker, admin, topic, [BASE + i * 1000 for i in range(10)], compression)
    assert offset_for(broker, topic, BASE + 5000) == 5
    assert offset_for(broker, topic, BASE + 4500) == 5
    assert offset_for(broker, topic, BASE) == 0
    assert listed(admin, topic, OffsetSpec.for_timestamp(BASE + 5000)) == (5, BASE + 5000)
    assert listed(admin, topic, OffsetSpec.for_timestamp(BASE)) == (0, BASE)
    assert listed(admin, topic, OffsetSpec.for_timestamp(BASE + 9000)) == (9, BASE + 9000)
    assert listed(admin, topic, OffsetSpec.for_timestamp(BASE + 9001))[0] == -1  # nothing that late


def test_offsets_for_times_never_answers_below_the_log_start(broker, admin):
    topic = "by-time-deleted"
    one_batch(broker, admin, topic, [BASE + i * 1000 for i in range(10)])
    res = admin.delete_records([TopicPartition(topic, 0, 3)])
    assert res[TopicPartition(topic, 0)].result(10).low_watermark == 3
    assert offset_for(broker, topic, BASE) == 3
    assert listed(admin, topic, OffsetSpec.for_timestamp(BASE)) == (3, BASE + 3000)
    assert listed(admin, topic, OffsetSpec.for_timestamp(BASE + 6000)) == (6, BASE + 6000)
    # a consumer seeking by time then reads from there, not OFFSET_OUT_OF_RANGE
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "by-time-seek",
                  "auto.offset.reset": "error"})
    try:
        c.assign(c.offsets_for_times([TopicPartition(topic, 0, BASE)], timeout=10))
        deadline, got = time.monotonic() + 10, None
        while got is None and time.monotonic() < deadline:
            got = c.poll(0.5)
        assert got is not None and got.error() is None, got and got.error()
        assert got.offset() == 3 and got.value() == b"v3"
    finally:
        c.close()


def test_max_timestamp_is_the_record_with_the_largest_timestamp(broker, admin):
    topic = "by-time-max"
    one_batch(broker, admin, topic, [BASE, BASE + 7000, BASE + 2000, BASE + 7000, BASE + 1000])
    # the first of the two records carrying the largest timestamp, not the batch's last offset (4)
    assert listed(admin, topic, OffsetSpec.max_timestamp()) == (1, BASE + 7000)


def many_batches(broker, admin, topic, timestamps, size=900):
    """One batch per record (each produce flushed), so the log passes the time index's 4 KiB interval many times."""
    for f in admin.create_topics([NewTopic(topic, 1, 1)]).values():
        f.result(10)
    p = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0})
    for i, ts in enumerate(timestamps):
        p.produce(topic, value=b"%05d" % i + b"x" * size, partition=0, timestamp=ts)
        assert p.flush(10) == 0


def expected_for(timestamps, start, target):
    """Kafka's answer from the records: the first offset at or past start whose timestamp reaches target."""
    for o in range(start, len(timestamps)):
        if timestamps[o] >= target:
            return o, timestamps[o]
    return -1, -1


def test_sparse_time_index_answers_every_target(broker, admin):
    """The time index keeps an entry about every 4 KiB of log (migration 17, as Kafka's time index),
    and a look-up reads the batches past the entry below the target: every target, between entries,
    on equal timestamps, out of order, after DeleteRecords removed the batch with the largest
    timestamp, and after a kill -9 and restart, answers what the records say."""
    topic = "by-time-sparse"
    ts = [BASE + (i * 7919) % 60 * 1000 for i in range(60)]
    ts[10:20] = [BASE + 30_000] * 10
    ts[25] = BASE + 90_000  # far ahead of the rest
    many_batches(broker, admin, topic, ts)

    def check(start, a=admin):
        for target in range(BASE - 1000, BASE + 92_000, 500):
            assert listed(a, topic, OffsetSpec.for_timestamp(target)) == expected_for(ts, start, target), target
        best = max(range(start, len(ts)), key=lambda o: (ts[o], -o))
        assert listed(a, topic, OffsetSpec.max_timestamp()) == (best, ts[best])

    check(0)
    res = admin.delete_records([TopicPartition(topic, 0, 30)])
    assert res[TopicPartition(topic, 0)].result(10).low_watermark == 30
    check(30)
    broker.kill9()
    after = AdminClient({"bootstrap.servers": broker.bootstrap})  # the module's client lost its connections
    check(30, after)
    more = [BASE + 91_000, BASE + 5_000, BASE + 91_000]
    p = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0})
    for i, t in enumerate(more):
        p.produce(topic, value=b"m%d" % i, partition=0, timestamp=t)
        assert p.flush(10) == 0
    ts += more
    check(30, after)
