"""DeleteRecords, DescribeLogDirs and ListPartitionReassignments with real clients.

The module's broker runs the kafka profile, where Apache Kafka's DeleteRecords and
DescribeLogDirs are served: confluent-kafka, the Java AdminClient and kafkajs delete records,
consumers from the beginning then start at the new log start, also after a restart. The default
(serverless) profile leaves both out of ApiVersions and closes the connection on them, as MSK
Serverless does, but answers ListPartitionReassignments (always empty). IAM: DeleteRecords needs
kafka-cluster:DeleteTopic on the topic, the other two kafka-cluster:DescribeCluster.
"""

import time

import pytest

import authz
import iam
import kafka_wire as kw
from harness import Broker, run_client, running

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import (AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource,  # noqa: E402
                                   NewTopic, OffsetSpec, ResourceType)

API_DELETE_RECORDS, API_DESCRIBE_LOG_DIRS, API_LIST_REASSIGNMENTS = 21, 35, 46
ERR_OFFSET_OUT_OF_RANGE, ERR_UNKNOWN_TOPIC_OR_PARTITION = 1, 3
ERR_TOPIC_AUTHORIZATION_FAILED, ERR_CLUSTER_AUTHORIZATION_FAILED = 29, 31


@pytest.fixture(scope="module")
def broker_config():
    return {"profile": "kafka"}


# -- helpers ------------------------------------------------------------------------------

def create_topic(bootstrap, name, partitions):
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, partitions)])[name].result(timeout=30)
    return name


def produce(bootstrap, topic, partition, count, per_batch=5):
    """count records "v<i>" to one partition, flushed every per_batch so that they land in several batches."""
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for i in range(count):
        p.produce(topic, value=b"v%d" % i, partition=partition)
        if (i + 1) % per_batch == 0:
            assert p.flush(30) == 0
    assert p.flush(30) == 0


def consume_from_beginning(bootstrap, topic, partition, expect, timeout=30):
    """The offsets a consumer assigned at OFFSET_BEGINNING reads, until it has `expect` records."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "admin-apis-reader", "enable.auto.commit": False,
                  "auto.offset.reset": "earliest"})
    c.assign([TopicPartition(topic, partition, OFFSET_BEGINNING)])
    offsets = []
    deadline = time.monotonic() + timeout
    try:
        while len(offsets) < expect and time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is None:
                continue
            assert m.error() is None, m.error()
            offsets.append(m.offset())
    finally:
        c.close()
    return offsets


def earliest(bootstrap, topic, partition):
    admin = AdminClient({"bootstrap.servers": bootstrap})
    tp = TopicPartition(topic, partition)
    return admin.list_offsets({tp: OffsetSpec.earliest()})[tp].result(timeout=30).offset


def delete_records(bootstrap, topic, partition, offset):
    """confluent-kafka's delete_records: the low watermark, or the KafkaError it failed with."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    tp = TopicPartition(topic, partition, offset)
    try:
        return admin.delete_records([tp], operation_timeout=10)[tp].result(timeout=30).low_watermark
    except KafkaException as e:
        return e.args[0]


def leaders(bootstrap, topic):
    md = AdminClient({"bootstrap.servers": bootstrap}).list_topics(topic, timeout=30)
    return {p.id: p.leader for p in md.topics[topic].partitions.values()}


# Flexible (compact) encoding for the raw requests below: request header v2, response header v1.

def compact_array(items, enc):
    return kw.uvarint(0) if items is None else kw.uvarint(len(items) + 1) + b"".join(enc(x) for x in items)


def flex_request(api_key, version, corr, body):
    payload = kw.i16(api_key) + kw.i16(version) + kw.i32(corr) + kw.string("admin-apis-it") + b"\x00" + body
    return kw.i32(len(payload)) + payload


def delete_records_v2(corr, topic, partition, offset):
    part = kw.i32(partition) + kw.i64(offset) + b"\x00"
    t = kw.compact_string(topic) + compact_array([part], lambda p: p) + b"\x00"
    return flex_request(API_DELETE_RECORDS, 2, corr, compact_array([t], lambda t: t) + kw.i32(5000) + b"\x00")


def list_reassignments(port, corr=1):
    """Raw ListPartitionReassignments v0 for every reassignment: (error_code, message, topic count)."""
    s = kw.connect(port)
    try:
        s.sendall(flex_request(API_LIST_REASSIGNMENTS, 0, corr, kw.i32(30000) + compact_array(None, None) + b"\x00"))
        got, body = kw.recv_frame(s)
    finally:
        s.close()
    assert got == corr
    r = kw.Reader(body)
    assert r.i8() == 0  # response header tagged fields: none
    r.i32()  # throttle_time_ms
    err = r.i16()
    n = r.i8()  # compact nullable string: 0 null, else length + 1 (short messages: one byte)
    message = None if n == 0 else r.take(n - 1).decode()
    topics = r.i8() - 1  # compact array count + 1
    return err, message, topics


def describe_log_dirs_denied(port, version):
    """Raw DescribeLogDirs (flexible v2+) for every topic: (top-level error or None before v3, result count)."""
    s = kw.connect(port)
    try:
        s.sendall(flex_request(API_DESCRIBE_LOG_DIRS, version, 1, compact_array(None, None) + b"\x00"))
        _, body = kw.recv_frame(s)
    finally:
        s.close()
    r = kw.Reader(body)
    r.i8(), r.i32()  # header tags, throttle_time_ms
    err = r.i16() if version >= 3 else None
    return err, r.i8() - 1


def api_versions(port):
    """ApiVersions v2 (header v1; v2 is where MSK Serverless's floor is): {key: (min, max)}."""
    s = kw.connect(port)
    try:
        s.sendall(kw.api_versions_request(1, "admin-apis-it", version=2))
        _, body = kw.recv_frame(s)
    finally:
        s.close()
    err, keys, _ = kw.parse_api_versions_v0(body)  # v1+ only appends throttle_time_ms
    assert err == 0
    return keys


# -- the serverless profile (MSK Serverless) ------------------------------------------------

@pytest.fixture(scope="module")
def serverless():
    with running(Broker()) as b:
        yield b


def test_serverless_leaves_out_delete_records_and_describe_log_dirs(serverless):
    keys = api_versions(serverless.port)
    assert API_DELETE_RECORDS not in keys and API_DESCRIBE_LOG_DIRS not in keys, keys
    assert keys[API_LIST_REASSIGNMENTS] == (0, 0)
    create_topic(serverless.bootstrap, "sl-topic", 1)
    produce(serverless.bootstrap, "sl-topic", 0, 3)

    since = serverless.log_size()
    s = kw.connect(serverless.port)
    s.sendall(delete_records_v2(7, "sl-topic", 0, -1))
    outcome = kw.wait_closed(s)
    s.close()
    assert outcome is None, outcome
    assert serverless.wait_for_log(r"refused DeleteRecords \(key 21\) v2 corr=7: MSK does not serve this API",
                                   since=since), serverless.log_tail()
    assert earliest(serverless.bootstrap, "sl-topic", 0) == 0


def test_serverless_java_admin_is_told_the_broker_does_not_support_them(serverless):
    create_topic(serverless.bootstrap, "sl-java", 1)
    res = run_client("java", ["delete-records", "--bootstrap", serverless.bootstrap, "--topic", "sl-java",
                              "--partition", 0, "--offset", 0])
    assert not res["ok"] and res["error"].startswith("UnsupportedVersionException"), res
    res = run_client("java", ["describe-log-dirs", "--bootstrap", serverless.bootstrap])
    assert not res["ok"] and res["error"].startswith("UnsupportedVersionException"), res
    res = run_client("java", ["list-reassignments", "--bootstrap", serverless.bootstrap])
    assert res == {"reassignments": {}, "ok": True}


def test_serverless_list_partition_reassignments_is_empty(serverless):
    assert list_reassignments(serverless.port) == (0, None, 0)
    res = run_client("node", ["list-reassignments", "--bootstrap", serverless.bootstrap])
    assert res == {"ok": True, "topics": []}, res


def test_broker_configs_invalid_request_on_serverless(serverless, broker):
    """Regression (broker_configs_cluster_authorization): MSK Serverless answers DescribeConfigs
    for a BROKER resource with INVALID_REQUEST, which kafka-ui's MSK Serverless support (PR #2737)
    catches; mskmock answered CLUSTER_AUTHORIZATION_FAILED, which sent such tools down their
    permission-error path. The kafka profile serves the broker's configs."""
    from confluent_kafka.admin import ConfigResource
    since = serverless.log_size()
    admin = AdminClient({"bootstrap.servers": serverless.bootstrap})
    res = ConfigResource(ConfigResource.Type.BROKER, "41")
    with pytest.raises(KafkaException) as e:
        admin.describe_configs([res])[res].result(timeout=30)
    assert e.value.args[0].code() == confluent_kafka.KafkaError.INVALID_REQUEST, e.value.args[0]
    assert serverless.wait_for_log(r"refused error=INVALID_REQUEST\(42\): broker 41 configs: MSK Serverless does "
                                   r"not expose broker configurations", since=since), serverless.log_tail()
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    res = ConfigResource(ConfigResource.Type.BROKER, "1")
    configs = admin.describe_configs([res])[res].result(timeout=30)
    assert configs["auto.create.topics.enable"].value in ("true", "false"), configs


# -- the kafka profile: DeleteRecords ---------------------------------------------------------

def test_kafka_profile_advertises_them(broker):
    keys = api_versions(broker.port)
    assert keys[API_DELETE_RECORDS] == (0, 2)
    # kafka.version=latest (4.x): DescribeLogDirs v0 was removed by KIP-896
    assert keys[API_DESCRIBE_LOG_DIRS] == (1, 4)
    assert keys[API_LIST_REASSIGNMENTS] == (0, 0)


def test_delete_records_python_moves_the_log_start_and_survives_a_restart(broker):
    topic = create_topic(broker.bootstrap, "dr-py", 2)
    produce(broker.bootstrap, topic, 0, 20)  # batches 0-4, 5-9, 10-14, 15-19
    produce(broker.bootstrap, topic, 1, 5)
    since = broker.log_size()
    assert delete_records(broker.bootstrap, topic, 0, 7) == 7  # the middle of batch 5-9
    assert broker.wait_for_log(r"DeleteRecords: dr-py-0 log start offset 0 -> 7", since=since), broker.log_tail()
    assert earliest(broker.bootstrap, topic, 0) == 7
    assert consume_from_beginning(broker.bootstrap, topic, 0, 13) == list(range(7, 20))
    assert consume_from_beginning(broker.bootstrap, topic, 1, 5) == list(range(5))  # untouched

    broker.restart()
    assert earliest(broker.bootstrap, topic, 0) == 7
    assert consume_from_beginning(broker.bootstrap, topic, 0, 13) == list(range(7, 20))
    # below the log start nothing moves; the answer is the current log start
    assert delete_records(broker.bootstrap, topic, 0, 3) == 7
    produce(broker.bootstrap, topic, 0, 1)
    assert consume_from_beginning(broker.bootstrap, topic, 0, 14) == list(range(7, 21))


def test_delete_records_python_refusals(broker):
    topic = create_topic(broker.bootstrap, "dr-refused", 1)
    produce(broker.bootstrap, topic, 0, 5)
    err = delete_records(broker.bootstrap, topic, 0, 6)  # above the high watermark
    assert err.code() == confluent_kafka.KafkaError.OFFSET_OUT_OF_RANGE, err
    assert earliest(broker.bootstrap, topic, 0) == 0


def test_delete_records_raw_errors_per_partition(broker):
    topic = create_topic(broker.bootstrap, "dr-raw", 1)
    port = broker.ports[[1, 2, 3].index(leaders(broker.bootstrap, topic)[0])]
    s = kw.connect(port)
    try:
        answers = []
        for corr, (t, p, off) in enumerate([(topic, 0, 1), (topic, 4, 0), ("dr-nope", 0, 0), (topic, 0, -1)], 1):
            s.sendall(delete_records_v2(corr, t, p, off))
            got, body = kw.recv_frame(s)
            assert got == corr
            # header tags, throttle, topics[1]: name; partitions[1]: index, low watermark, error
            r = kw.Reader(body)
            r.i8(), r.i32(), r.i8()
            r.take(r.i8() - 1)
            r.i8()
            answers.append((r.i32(), r.i64(), r.i16()))
    finally:
        s.close()
    assert answers == [(0, -1, ERR_OFFSET_OUT_OF_RANGE), (4, -1, ERR_UNKNOWN_TOPIC_OR_PARTITION),
                       (0, -1, ERR_UNKNOWN_TOPIC_OR_PARTITION), (0, 0, 0)]


def test_delete_records_java(broker):
    topic = create_topic(broker.bootstrap, "dr-java", 1)
    produce(broker.bootstrap, topic, 0, 10)
    res = run_client("java", ["delete-records", "--bootstrap", broker.bootstrap, "--topic", topic,
                              "--partition", 0, "--offset", 4])
    assert res == {"low_watermark": 4, "ok": True}, res
    assert consume_from_beginning(broker.bootstrap, topic, 0, 6) == list(range(4, 10))
    res = run_client("java", ["delete-records", "--bootstrap", broker.bootstrap, "--topic", topic,
                              "--partition", 0, "--offset", 11])
    assert not res["ok"] and res["error"].startswith("OffsetOutOfRangeException"), res


def test_delete_records_kafkajs_to_the_high_watermark(broker):
    topic = create_topic(broker.bootstrap, "dr-node", 3)
    produce(broker.bootstrap, topic, 2, 10)
    res = run_client("node", ["delete-records", "--bootstrap", broker.bootstrap, "--topic", topic,
                              "--partition", 2, "--offset", -1])
    assert res == {"ok": True, "low": 10, "high": 10}, res
    produce(broker.bootstrap, topic, 2, 2)
    assert consume_from_beginning(broker.bootstrap, topic, 2, 2) == [10, 11]


# -- the kafka profile: DescribeLogDirs and ListPartitionReassignments -------------------------

def test_describe_log_dirs_java_lists_each_broker_s_partitions_with_sizes(broker):
    topic = create_topic(broker.bootstrap, "ld-java", 6)
    for p in range(6):
        produce(broker.bootstrap, topic, p, p + 1)
    led = leaders(broker.bootstrap, topic)
    res = run_client("java", ["describe-log-dirs", "--bootstrap", broker.bootstrap, "--topic", topic])
    assert res["ok"], res
    assert sorted(res["brokers"]) == ["1", "2", "3"]
    sizes = {}
    for node, dirs in res["brokers"].items():
        assert list(dirs) == ["%s/broker-%s" % (broker.data_dir, node)], dirs
        d = dirs["%s/broker-%s" % (broker.data_dir, node)]
        assert d["error"] is None
        assert d["total_bytes"] > 0 and 0 < d["usable_bytes"] <= d["total_bytes"], d
        for name, info in d["replicas"].items():
            p = int(name.rsplit("-", 1)[1])
            assert led[p] == int(node), (name, node, led)  # only the partitions it leads
            assert info["offset_lag"] == 0 and info["future"] is False
            sizes[p] = info["size"]
    assert sorted(sizes) == list(range(6))
    # one record more, a few bytes more: sizes grow with the records
    assert all(sizes[p] < sizes[p + 1] for p in range(5)), sizes

    # DeleteRecords past a whole batch gives its bytes back
    assert delete_records(broker.bootstrap, topic, 5, 6) == 6
    res = run_client("java", ["describe-log-dirs", "--bootstrap", broker.bootstrap, "--topic", topic])
    node = str(led[5])
    assert res["brokers"][node]["%s/broker-%s" % (broker.data_dir, node)]["replicas"]["ld-java-5"]["size"] < sizes[5]


def log_dir_size(b, topic, partition):
    """What Java's describeLogDirs says partition's replica holds, from its leader."""
    node = str(leaders(b.bootstrap, topic)[partition])
    res = run_client("java", ["describe-log-dirs", "--bootstrap", b.bootstrap, "--topic", topic])
    assert res["ok"], res
    return res["brokers"][node]["%s/broker-%s" % (b.data_dir, node)]["replicas"]["%s-%d" % (topic, partition)]["size"]


def test_partition_sizes_after_kill9_and_clean_stop(tmp_path):
    """partitions.bytes counts only the batches below its end, the rest are summed when read
    (schema migration 21): DescribeLogDirs and retention.bytes see the same sizes after a kill -9
    that leaves batches past the producer snapshot, after removals and after a clean stop."""
    with running(Broker(config={"profile": "kafka", "log.retention.check.interval.ms": 200})) as b:
        topic = create_topic(b.bootstrap, "ld-kill9", 1)
        produce(b.bootstrap, topic, 0, 8, per_batch=1)  # a batch per record, as the offsets below assume
        b.restart()  # the clean stop's snapshot counts them in the partitions row
        produce(b.bootstrap, topic, 0, 8, per_batch=1)  # 8 more, past the snapshot
        full = log_dir_size(b, topic, 0)
        assert full > 0
        b.kill9()
        assert log_dir_size(b, topic, 0) == full

        assert delete_records(b.bootstrap, topic, 0, 4) == 4  # batches below the snapshot's end
        trimmed = log_dir_size(b, topic, 0)
        assert 0 < trimmed < full
        b.kill9()
        assert log_dir_size(b, topic, 0) == trimmed
        b.restart()
        assert log_dir_size(b, topic, 0) == trimmed

        # one batch past the snapshot, a kill -9, then a limit one byte under the size: exactly the
        # oldest batch goes (a size missing the batches past the snapshot would drop none)
        produce(b.bootstrap, topic, 0, 1)
        grown = log_dir_size(b, topic, 0)
        b.kill9()
        admin = AdminClient({"bootstrap.servers": b.bootstrap})
        res = ConfigResource(ResourceType.TOPIC, topic, incremental_configs=[
            ConfigEntry("retention.bytes", str(grown - 1), incremental_operation=AlterConfigOpType.SET)])
        admin.incremental_alter_configs([res])[res].result(timeout=20)
        assert b.wait_for_log(r"retention: ld-kill9-0 log start offset 4 -> 5"), b.log_tail(40)
        c = Consumer({"bootstrap.servers": b.bootstrap, "group.id": "ld-kill9"})
        assert c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10, cached=False) == (5, 17)
        c.close()
        assert 0 < log_dir_size(b, topic, 0) < grown


def test_list_partition_reassignments_java_and_kafkajs(broker):
    topic = create_topic(broker.bootstrap, "lr-topic", 2)
    assert list_reassignments(broker.ports[1]) == (0, None, 0)
    res = run_client("java", ["list-reassignments", "--bootstrap", broker.bootstrap, "--topic", topic,
                              "--partition", 1])
    assert res == {"reassignments": {}, "ok": True}, res
    res = run_client("node", ["list-reassignments", "--bootstrap", broker.bootstrap, "--topic", topic,
                              "--partition", 0])
    assert res == {"ok": True, "topics": []}, res


# -- IAM ----------------------------------------------------------------------------------------

def test_iam_delete_records_needs_delete_topic_and_the_others_describe_cluster(tmp_path):
    """The plaintext listener acts as a principal allowed everything on its topics but DeleteTopic,
    and Connect on the cluster but not DescribeCluster."""
    user = authz.user("trimmer", 35, authz.allow("kafka-cluster:Connect", authz.CLUSTER_ARN),
                      authz.allow(["kafka-cluster:CreateTopic", "kafka-cluster:DescribeTopic",
                                   "kafka-cluster:WriteData", "kafka-cluster:ReadData"], authz.topic_arn("*")),
                      authz.allow(["kafka-cluster:DescribeGroup", "kafka-cluster:AlterGroup"], authz.group_arn("*")))
    ids = iam.write_identities(tmp_path / "identities.json", identities=(user,), roles=())
    cfg = dict(iam.iam_config(ids), **authz.CONFIG, profile="kafka")
    cfg["plaintext.principal"] = user.principal
    with running(Broker(config=cfg)) as b:
        topic = create_topic(b.bootstrap, "iam-dr", 1)
        produce(b.bootstrap, topic, 0, 3)
        since = b.log_size()
        err = delete_records(b.bootstrap, topic, 0, 1)
        assert err.code() == confluent_kafka.KafkaError.TOPIC_AUTHORIZATION_FAILED, err
        authz.refusal(b, since, "TOPIC_AUTHORIZATION_FAILED(29)", r"kafka-cluster:DeleteTopic on .*topic/.*/iam-dr")
        assert earliest(b.bootstrap, topic, 0) == 0
        assert list_reassignments(b.port) == (ERR_CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed.", 0)
        assert describe_log_dirs_denied(b.port, 4) == (ERR_CLUSTER_AUTHORIZATION_FAILED, 0)
        assert describe_log_dirs_denied(b.port, 2) == (None, 0)  # before v3 only an empty list says so
        authz.refusal(b, since, "CLUSTER_AUTHORIZATION_FAILED(31)", r"kafka-cluster:DescribeCluster on .*cluster/")

