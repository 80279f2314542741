"""Produce-path rules over raw sockets, each against what Apache Kafka answers.

Idempotent producer (duplicate of a recent batch acknowledged with its original offset,
sequence gap -> OUT_OF_ORDER_SEQUENCE_NUMBER 45, older epoch -> INVALID_PRODUCER_EPOCH 47),
max.message.bytes -> MESSAGE_TOO_LARGE 10, invalid acks -> 21, a partition led by another
node -> NOT_LEADER_OR_FOLLOWER 6, acks=0 never answered, LogAppendTime rewrite, and MSK
Serverless's topic-config policy -> INVALID_CONFIG 40. Topics are set up with confluent-kafka's
admin client; the requests under test are hand-built.
"""

import time

import pytest

import kafka_wire as kw

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic  # noqa: E402

PRODUCE_V = 8


def idempotent_batch(pid, epoch, seq, count, attributes=0, ts=None):
    """Record batch v2 with producer id, epoch and base sequence."""
    ts = int(time.time() * 1000) if ts is None else ts
    recs = b"".join(kw.record(i, b"k%d" % (seq + i), b"v%d" % (seq + i)) for i in range(count))
    after_crc = (kw.i16(attributes) + kw.i32(count - 1) + kw.i64(ts) + kw.i64(ts)
                 + kw.i64(pid) + kw.i16(epoch) + kw.i32(seq) + kw.i32(count) + recs)
    after_length = kw.i32(-1) + kw.i8(2) + kw.u32(kw.crc32c(after_crc)) + after_crc
    return kw.i64(0) + kw.i32(len(after_length)) + after_length


class Conn:
    def __init__(self, port):
        self.sock = kw.connect(port)
        self.corr = 0

    def produce(self, topic, partition, batch, acks=-1):
        self.corr += 1
        self.sock.sendall(kw.produce_request(PRODUCE_V, self.corr, "produce-rules", topic, partition,
                                             batch, acks=acks))
        if acks == 0:
            return None
        corr, body = kw.recv_frame(self.sock)
        assert corr == self.corr
        return kw.parse_produce(PRODUCE_V, body)[0]["partitions"][0]

    def metadata(self, topics):
        self.corr += 1
        self.sock.sendall(kw.metadata_request(kw.METADATA_V, self.corr, "produce-rules", topics))
        corr, body = kw.recv_frame(self.sock)
        assert corr == self.corr
        return kw.parse_metadata(kw.METADATA_V, body)

    def close(self):
        self.sock.close()


@pytest.fixture(scope="module")
def admin(broker):
    return AdminClient({"bootstrap.servers": broker.bootstrap})


def create(admin, name, partitions=1, config=None):
    fs = admin.create_topics([NewTopic(name, partitions, config=config or {})])
    fs[name].result(timeout=30)


def leader_conn(broker, name, partition=0):
    c = Conn(broker.port)
    md = c.metadata([name])
    c.close()
    leader = md["topics"][0]["partitions"][partition]["leader"]
    port = md["brokers"][leader][1]
    return Conn(port), md, leader


def test_idempotent_duplicate_gap_and_epoch(broker, admin):
    create(admin, "idem")
    c, _, _ = leader_conn(broker, "idem")
    pid = 777001
    first = c.produce("idem", 0, idempotent_batch(pid, 0, 0, 3))
    assert (first["error"], first["base_offset"]) == (0, 0)
    second = c.produce("idem", 0, idempotent_batch(pid, 0, 3, 2))
    assert (second["error"], second["base_offset"]) == (0, 3)
    # a retry of the first batch: acknowledged again with its original offset, not appended
    dup = c.produce("idem", 0, idempotent_batch(pid, 0, 0, 3))
    assert (dup["error"], dup["base_offset"]) == (0, 0)
    third = c.produce("idem", 0, idempotent_batch(pid, 0, 5, 1))
    assert (third["error"], third["base_offset"]) == (0, 5), "the duplicate must not have been appended"
    gap = c.produce("idem", 0, idempotent_batch(pid, 0, 9, 1))
    assert gap["error"] == 45  # OUT_OF_ORDER_SEQUENCE_NUMBER
    bumped = c.produce("idem", 0, idempotent_batch(pid, 1, 0, 1))
    assert (bumped["error"], bumped["base_offset"]) == (0, 6)
    stale = c.produce("idem", 0, idempotent_batch(pid, 0, 6, 1))
    assert stale["error"] == 47  # INVALID_PRODUCER_EPOCH
    c.close()
    assert broker.wait_for_log(r"OUT_OF_ORDER_SEQUENCE_NUMBER\(45\).*sequence gap")
    assert broker.wait_for_log(r"INVALID_PRODUCER_EPOCH\(47\)")


def test_idempotent_state_survives_restart(broker, admin):
    create(admin, "idem-restart")
    c, _, _ = leader_conn(broker, "idem-restart")
    pid = 777002
    assert c.produce("idem-restart", 0, idempotent_batch(pid, 0, 0, 2))["base_offset"] == 0
    c.close()
    broker.restart()
    c, _, _ = leader_conn(broker, "idem-restart")
    dup = c.produce("idem-restart", 0, idempotent_batch(pid, 0, 0, 2))
    assert (dup["error"], dup["base_offset"]) == (0, 0)
    assert c.produce("idem-restart", 0, idempotent_batch(pid, 0, 5, 1))["error"] == 45
    c.close()


def test_message_too_large(broker, admin):
    create(admin, "small", config={"max.message.bytes": "2000"})
    c, _, _ = leader_conn(broker, "small")
    ok = c.produce("small", 0, kw.record_batch([(b"k", b"x" * 500, ())]))
    assert ok["error"] == 0
    big = c.produce("small", 0, kw.record_batch([(b"k", b"x" * 5000, ())]))
    assert big["error"] == 10  # MESSAGE_TOO_LARGE
    c.close()
    assert broker.wait_for_log(r"MESSAGE_TOO_LARGE\(10\).*max\.message\.bytes is 2000")


def test_invalid_acks_and_wrong_leader(broker, admin):
    create(admin, "spread", partitions=3)
    c, md, leader = leader_conn(broker, "spread", 0)
    assert c.produce("spread", 0, kw.record_batch([(b"k", b"v", ())]), acks=2)["error"] == 21
    c.close()
    other = next(p for n, (_, p) in md["brokers"].items() if n != leader)
    w = Conn(other)
    assert w.produce("spread", 0, kw.record_batch([(b"k", b"v", ())]))["error"] == 6
    w.close()
    assert broker.wait_for_log(r"NOT_LEADER_OR_FOLLOWER\(6\).*spread-0 is led by node %d" % leader)


def test_acks0_is_never_answered(broker, admin):
    create(admin, "fire")
    c, _, _ = leader_conn(broker, "fire")
    assert c.produce("fire", 0, kw.record_batch([(b"k", b"v", ())]), acks=0) is None
    # the next request on the connection gets the next answer: nothing was sent for acks=0
    md = c.metadata(["fire"])
    assert md["topics"][0]["name"] == "fire"
    assert c.produce("fire", 0, kw.record_batch([(b"k", b"w", ())]))["base_offset"] == 1
    c.close()


def test_log_append_time(broker, admin):
    create(admin, "lat", config={"message.timestamp.type": "LogAppendTime"})
    c, _, _ = leader_conn(broker, "lat")
    before = int(time.time() * 1000)
    res = c.produce("lat", 0, kw.record_batch([(b"k", b"v", ())], base_timestamp=1000))
    assert res["error"] == 0 and res["log_append_time"] >= before
    c.close()
    cons = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "lat", "enable.auto.commit": False})
    cons.assign([TopicPartition("lat", 0, OFFSET_BEGINNING)])
    m = None
    deadline = time.time() + 20
    while m is None and time.time() < deadline:
        m = cons.poll(0.5)
    cons.close()
    assert m is not None and not m.error(), "no record read back (the rewritten CRC must verify)"
    assert m.timestamp() == (confluent_kafka.TIMESTAMP_LOG_APPEND_TIME, res["log_append_time"])


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # legacy AlterConfigs is the point
def test_serverless_topic_config_policy(broker, admin):
    fs = admin.create_topics([NewTopic("segbytes", 1, config={"segment.bytes": "52428800"})])
    with pytest.raises(confluent_kafka.KafkaException) as e:
        fs["segbytes"].result(timeout=30)
    err = e.value.args[0]
    assert err.code() == confluent_kafka.KafkaError.INVALID_CONFIG
    assert "Amazon MSK Serverless can't alter topic configuration segment.bytes" in err.str()

    create(admin, "alterable", config={"cleanup.policy": "delete"})
    res = ConfigResource(ConfigResource.Type.TOPIC, "alterable", set_config={"retention.ms": "3600000"})
    admin.alter_configs([res])[res].result(timeout=30)
    desc = admin.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, "alterable")])
    configs = list(desc.values())[0].result(timeout=30)
    assert configs["retention.ms"].value == "3600000"
    assert configs["cleanup.policy"].value == "delete"
    # legacy AlterConfigs re-sending cleanup.policy is what tools trip on
    res = ConfigResource(ConfigResource.Type.TOPIC, "alterable",
                         set_config={"retention.ms": "7200000", "cleanup.policy": "delete"})
    with pytest.raises(confluent_kafka.KafkaException) as e:
        admin.alter_configs([res])[res].result(timeout=30)
    assert "can't alter topic configuration cleanup.policy" in e.value.args[0].str()
    # regression (alter_configs_refusal_unquoted_topic): the log quotes the topic as CreateTopics' does
    assert broker.wait_for_log(r"api=AlterConfigs .*INVALID_CONFIG\(40\): topic 'alterable': .*cleanup\.policy")
