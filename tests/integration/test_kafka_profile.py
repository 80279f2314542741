"""The kafka and provisioned profiles as Apache Kafka: internal topics listed, and min.insync.replicas
taken from Kafka (1) or MSK (2) and enforced against in-sync replicas.

Found by running franz-go v1.22.3's own integration suite against the kafka profile: Kafka lists
__consumer_offsets in Metadata as an internal topic (KafkaApis/KRaftMetadataCache set is_internal by
Topic.isInternal), and __transaction_state once a transactional producer has looked for its
coordinator; mskmock answered UNKNOWN_TOPIC_OR_PARTITION for them. And min.insync.replicas was
reported as 2 and never enforced: an RF=1 topic took acks=all, where Kafka's
Partition.appendRecordsToLeader answers NOT_ENOUGH_REPLICAS. Driven by raw requests (to see error
codes and the is_internal flag) and confluent-kafka.
"""

import json
import urllib.request

import pytest
from confluent_kafka import KafkaError, Producer
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic

import kafka_wire as kw
from harness import Broker, running

INVALID_TOPIC_EXCEPTION, NOT_ENOUGH_REPLICAS = 17, 19


@pytest.fixture(scope="module")
def kafka():
    with running(Broker(config={"profile": "kafka"})) as b:
        yield b


def metadata(broker, topics=None, brokers=False):
    for port in broker.ports:  # any broker up (one may have been taken down)
        try:
            s = kw.connect(port)
            break
        except ConnectionRefusedError:
            continue
    with s:
        body = kw.roundtrip(s, lambda c: kw.metadata_request(8, c, "meta", topics))
    m = kw.parse_metadata(8, body)
    topics = {t["name"]: t for t in m["topics"]}
    return (topics, m["brokers"]) if brokers else topics


def produce_raw(broker, topic, acks=-1):
    """One record to partition 0 through its leader; its error code."""
    topics, brokers = metadata(broker, [topic], brokers=True)
    port = brokers[topics[topic]["partitions"][0]["leader"]][1]
    batch = kw.record_batch([(b"k", b"v", ())])
    with kw.connect(port) as s:
        body = kw.roundtrip(s, lambda c: kw.produce_request(8, c, "raw-producer", topic, 0, batch, acks=acks))
    return kw.parse_produce(8, body)[0]["partitions"][0]["error"]


def admin_call(broker, method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(broker.admin_url + path, data=data, method=method)
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def create(broker, name, rf=-1, **config):
    a = AdminClient({"bootstrap.servers": broker.bootstrap})
    a.create_topics([NewTopic(name, 1, rf, config={k.replace("_", "."): str(v) for k, v in config.items()})])[
        name].result(30)


def test_consumer_offsets_is_listed_as_internal_with_kafkas_shape(kafka):
    all_topics = metadata(kafka)
    t = all_topics["__consumer_offsets"]
    assert t["error"] == 0 and t["internal"] is True
    assert len(t["partitions"]) == 50
    assert all(len(p["replicas"]) == 3 and p["leader"] in (1, 2, 3) for p in t["partitions"])
    a = AdminClient({"bootstrap.servers": kafka.bootstrap})
    desc = a.describe_topics(__import__("confluent_kafka").TopicCollection(["__consumer_offsets"]))
    assert desc["__consumer_offsets"].result(20).is_internal is True
    cfg = a.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, "__consumer_offsets")])
    got = list(cfg.values())[0].result(20)
    assert got["cleanup.policy"].value == "compact"
    assert "created internal topic __consumer_offsets: 50 partitions" in kafka.log_text()


def test_internal_topics_are_read_only(kafka):
    since = kafka.log_size()
    code = produce_raw(kafka, "__consumer_offsets")
    assert code == INVALID_TOPIC_EXCEPTION
    assert kafka.wait_for_log(r"Cannot append to internal topic __consumer_offsets", since=since)
    a = AdminClient({"bootstrap.servers": kafka.bootstrap})
    from confluent_kafka import TopicPartition
    fut = a.delete_records([TopicPartition("__consumer_offsets", 0, 0)])
    with pytest.raises(Exception) as e:
        list(fut.values())[0].result(20)
    assert e.value.args[0].code() == KafkaError.TOPIC_EXCEPTION
    assert kafka.wait_for_log(r"Cannot delete records of internal topic __consumer_offsets", since=since)
    # the name is taken, as in Kafka
    res = a.create_topics([NewTopic("__consumer_offsets", 1, 1)])["__consumer_offsets"]
    with pytest.raises(Exception) as e:
        res.result(20)
    assert e.value.args[0].code() == KafkaError.TOPIC_ALREADY_EXISTS


def test_transaction_state_appears_once_a_transactional_producer_starts(kafka):
    assert "__transaction_state" not in metadata(kafka)
    p = Producer({"bootstrap.servers": kafka.bootstrap, "transactional.id": "tx-internal"})
    p.init_transactions(20)
    t = metadata(kafka)["__transaction_state"]
    assert t["internal"] is True and len(t["partitions"]) == 50
    a = AdminClient({"bootstrap.servers": kafka.bootstrap})
    got = list(a.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, "__transaction_state")]).values())[0]
    assert got.result(20)["min.insync.replicas"].value == "2"


def test_admin_reset_keeps_the_internal_topics(kafka):
    admin_call(kafka, "POST", "/v1/reset", {})
    assert "__consumer_offsets" in metadata(kafka)


def test_serverless_lists_no_internal_topic():
    with running(Broker(broker_count=3)) as b:
        all_topics = metadata(b)
        assert not [n for n in all_topics if n.startswith("__")]
        p = Producer({"bootstrap.servers": b.bootstrap, "transactional.id": "tx-serverless"})
        p.init_transactions(20)
        assert not [n for n in metadata(b) if n.startswith("__")]


def test_min_insync_replicas_defaults_to_kafkas_one_and_rf1_takes_acks_all(kafka):
    create(kafka, "rf1", rf=1)
    a = AdminClient({"bootstrap.servers": kafka.bootstrap})
    got = list(a.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, "rf1")]).values())[0].result(20)
    assert got["min.insync.replicas"].value == "1"
    assert produce_raw(kafka, "rf1") == 0


def test_min_insync_replicas_above_the_replication_factor_refuses_acks_all(kafka):
    """Kafka's answer: NOT_ENOUGH_REPLICAS for acks=all, while acks=1 is stored."""
    create(kafka, "rf1-isr2", rf=1, min_insync_replicas=2)
    since = kafka.log_size()
    assert produce_raw(kafka, "rf1-isr2", acks=-1) == NOT_ENOUGH_REPLICAS
    assert kafka.wait_for_log(r"rf1-isr2-0: 1 in-sync replica\(s\) \(replication factor 1\), min.insync.replicas is 2",
                              since=since)
    assert produce_raw(kafka, "rf1-isr2", acks=1) == 0


def test_brokers_down_below_min_insync_refuse_acks_all():
    """Serverless: min.insync.replicas 2 (MSK's), RF 3; with two of a partition's three brokers down
    acks=all is refused until one comes back."""
    with running(Broker(broker_count=3)) as b:
        create(b, "isr")
        a = AdminClient({"bootstrap.servers": b.bootstrap})
        got = list(a.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, "isr")]).values())[0].result(20)
        assert got["min.insync.replicas"].value == "2"
        t = metadata(b, ["isr"])["isr"]
        leader = t["partitions"][0]["leader"]
        others = [n for n in t["partitions"][0]["replicas"] if n != leader]
        admin_call(b, "POST", "/v1/brokers/%d/down" % others[0], {})
        assert produce_raw(b, "isr") == 0  # two in sync: enough
        admin_call(b, "POST", "/v1/brokers/%d/down" % others[1], {})
        assert produce_raw(b, "isr") == NOT_ENOUGH_REPLICAS
        assert produce_raw(b, "isr", acks=1) == 0
        admin_call(b, "POST", "/v1/brokers/%d/up" % others[1], {})
        assert produce_raw(b, "isr") == 0


def test_min_insync_replicas_default_follows_a_small_cluster():
    """A one-broker serverless cluster defaults to 1, as MSK sets 1 for clusters in two Availability
    Zones: acks=all still works there."""
    with running(Broker(broker_count=1, config={"default.replication.factor": 1})) as b:
        create(b, "small")
        a = AdminClient({"bootstrap.servers": b.bootstrap})
        got = list(a.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, "small")]).values())[0].result(20)
        assert got["min.insync.replicas"].value == "1"
        assert produce_raw(b, "small") == 0
