"""MSK Serverless's API surface: version floors (api.versions.min) and ceilings
(api.versions.max), and which responses name a controller (controller.visibility), checked on
the wire and with the admin clients of five ecosystems, kafka-python 2.0.2 and kafka-go; and the
provisioned and kafka profiles' kafka.version: an Apache Kafka release's ranges and features."""

import json
import logging
import shutil
import struct
import subprocess
import sys
import uuid

import pytest

import kafka_wire as kw
from harness import CLIENTS, ROOT, Broker, broker_binary, broker_env, client_command, running

ADMIN_CALLS = ("describe_cluster", "create_topics", "create_partitions", "describe_topics", "delete_topics")


@pytest.fixture(scope="module")
def broker():
    with running(Broker()) as b:
        yield b


@pytest.fixture(scope="module")
def pinned():
    """A broker pinned to what the 2022 Serverless capture advertised at most."""
    with running(Broker(broker_count=1, config={"api.versions.max": "Metadata=11, Produce=9,Fetch=12",
                                                "api.versions.min": "Produce=7,Fetch=10,Metadata=6,ApiVersions=2"})) as b:
        yield b


def exchange(port, frame):
    """Sends one request frame; returns the response body after the correlation id, or None
    when the broker closed the connection without answering."""
    with kw.connect(port) as s:
        s.sendall(frame)
        try:
            return kw.recv_frame(s)[1]
        except kw.Closed:
            return None


def api_versions(port, version):
    """ApiVersions v0-2 (header v1): (error code, {key: (min, max)})."""
    body = exchange(port, kw.request(18, version, 7, "it-versions", b""))
    assert body is not None, "ApiVersions v%d was not answered" % version
    err, n = struct.unpack_from(">hi", body)
    ranges = {}
    for i in range(n):
        k, lo, hi = struct.unpack_from(">hhh", body, 6 + 6 * i)
        ranges[k] = (lo, hi)
    return err, ranges


def metadata_frame(version):
    """Metadata v1-8 asking for no topics (the encoding does not change between them but for
    the flags v4 and v8 add)."""
    body = kw.i32(0)
    if version >= 4:
        body += b"\x00"
    if version >= 8:
        body += b"\x00\x00"
    return kw.request(3, version, 9, "it-versions", body)


def test_api_versions_advertises_the_serverless_floors(broker):
    err, ranges = api_versions(broker.port, 2)
    assert err == 0
    assert ranges[3][0] == 6 and ranges[0][0] == 7 and ranges[1][0] == 10 and ranges[18][0] == 0
    assert ranges[17] == (1, 1), "SaslHandshake v1 only"
    # kafkajs tops out below the 2022 capture's minima of these, and works on Serverless;
    # librdkafka below LeaveGroup's (see conf/mskmock.properties)
    assert ranges[2][0] == 0 and ranges[8][0] == 0 and ranges[9][0] == 0 and ranges[20][0] == 0
    assert ranges[13][0] == 0
    assert 21 not in ranges and 35 not in ranges, "DeleteRecords and DescribeLogDirs are not served on MSK"


def test_request_below_its_floor_is_dropped_unanswered(broker):
    since = broker.log_size()
    assert exchange(broker.port, metadata_frame(5)) is None
    assert broker.wait_for_log(r"refused Metadata v5 corr=9: served versions are 6-\d+ \(api.versions.min\); "
                               r"closing as MSK does", since=since)
    assert exchange(broker.port, metadata_frame(6)) is not None


def test_api_versions_below_its_floor_gets_the_v0_error_with_ranges(pinned):
    err, ranges = api_versions(pinned.port, 0)
    assert err == 35
    assert ranges[3][0] == 6 and ranges[18][0] == 2


def test_api_versions_v0_answered_as_kafka_go_needs(broker):
    """Regression (api_versions_floor_refused_kafka_go): the serverless default floored
    ApiVersions at v2 (the 2022 capture), so kafka-go, which opens every connection with
    ApiVersions v0 and gives up on any error, failed at once, while kafka-go 0.4.34 could write
    to MSK Serverless (kafka-go #967). v0 is answered without an error; the other floors stay."""
    err, ranges = api_versions(broker.port, 0)
    assert err == 0
    assert ranges[18][0] == 0 and ranges[3][0] == 6 and ranges[0][0] == 7


def test_ceiling_pins_what_a_generation_advertised(pinned):
    err, ranges = api_versions(pinned.port, 2)
    assert err == 0 and ranges[3][1] == 11 and ranges[0][1] == 9 and ranges[1] == (10, 12)
    since = pinned.log_size()
    # refused on its version alone, before its (flexible) header or body is read
    assert exchange(pinned.port, kw.request(3, 12, 9, "it-versions", b"")) is None
    assert pinned.wait_for_log(r"refused Metadata v12 corr=9: served versions are 6-11 \(api.versions.max\)", since=since)


@pytest.mark.parametrize("value, why", [
    ("Nope=3", "'Nope' is not an API mskmock knows"),
    ("Metadata=x", "'x' is not a version of Metadata"),
    ("Metadata", "'Metadata' is not Name=version"),
])
def test_a_bad_floor_list_refuses_to_start(tmp_path, value, why):
    p = subprocess.run([str(broker_binary()), "--data-dir", str(tmp_path), "--set", "api.versions.min=" + value],
                       capture_output=True, text=True, timeout=10, env=broker_env())
    assert p.returncode != 0
    assert "api.versions.min: " + why in p.stderr


def test_floors_by_numeric_key_and_the_kafka_profile_has_none(tmp_path):
    with running(Broker(broker_count=1, config={"profile": "kafka"})) as kafka, \
            running(Broker(broker_count=1, config={"api.versions.min": "3=8,32=1"})) as keyed:
        _, ranges = api_versions(kafka.port, 2)
        assert ranges[3][0] == 0 and ranges[0][0] == 0 and 21 in ranges and 35 in ranges
        _, ranges = api_versions(keyed.port, 2)
        assert ranges[3][0] == 8 and ranges[32][0] == 1 and ranges[0][0] == 0


KAFKA_PYTHON_PRODUCE = r"""
import sys
from kafka import KafkaProducer
from kafka.errors import KafkaError
try:
    p = KafkaProducer(bootstrap_servers=sys.argv[1], max_block_ms=4000, request_timeout_ms=4000)
    p.send(sys.argv[2], b"v").get(timeout=10)
    print("sent")
except (KafkaError, AssertionError) as e:  # 2.0.2 asserts on an ApiVersions error
    print(type(e).__name__)
"""


def kafka_python_2_0_2(bootstrap, topic):
    import kafka
    assert kafka.__version__ == "2.0.2"
    p = subprocess.run([sys.executable, "-c", KAFKA_PYTHON_PRODUCE, bootstrap, topic],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr[-3000:]
    return p.stdout.strip().splitlines()[-1]


def test_kafka_python_2_0_2_is_cut_off_by_the_floors_as_on_msk(broker):
    """signer-python #24: kafka-python 2.0.2 fails on Serverless where provisioned MSK works.
    Its version probes and Metadata v0 fall below the floors, so it never gets metadata."""
    since = broker.log_size()
    # which error depends on how its probes race: UnrecognizedBrokerVersion, or a time-out
    # waiting for metadata once its Metadata v0 and v1 were dropped
    assert kafka_python_2_0_2(broker.bootstrap, "t-kp") in ("UnrecognizedBrokerVersion", "KafkaTimeoutError")
    assert broker.wait_for_log(r"client=kafka-python-producer-\d+ refused Metadata v[01] corr=\d+: served "
                               r"versions are 6-", since=since)


def test_kafka_python_2_0_2_works_without_floors():
    with running(Broker(broker_count=1, config={"profile": "provisioned", "auto.create.topics.enable": True})) as b:
        assert kafka_python_2_0_2(b.bootstrap, "t-kp") == "sent"


def kafka_go(b, name):
    """segmentio/kafka-go (tests/clients/go kafka-go): writes 5 records to a new one-partition
    topic, reads them back on partition 0, then through a consumer group; each step reported."""
    go = client_command("go")
    if go is None:
        pytest.skip("go client is not built")
    topic = "%s-%s" % (name, uuid.uuid4().hex[:6])
    p = subprocess.run(go + ["create-topic", "--bootstrap", b.bootstrap, "--topic", topic, "--partitions", "1"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr[-2000:]
    p = subprocess.run(go + ["kafka-go", "--bootstrap", b.bootstrap, "--topic", topic, "--group", topic,
                             "--count", "5", "--timeout", "8"], capture_output=True, text=True, timeout=90)
    assert p.returncode == 0, p.stderr[-2000:]
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert out["kafka_go"] == "v0.4.51"
    return topic, out


def test_kafka_go_writes_and_reads_but_its_group_path_is_below_the_floors(broker):
    """Regression (api_versions_floor_refused_kafka_go): with ApiVersions floored at v2, kafka-go
    failed at its first request. Now its Writer and partition Reader work, as kafka-go #967 saw
    writes work on MSK Serverless; its group path (FindCoordinator v0) is still below the floors."""
    since = broker.log_size()
    _, out = kafka_go(broker, "kg-serverless")
    assert out["write"] == {"ok": True, "produced": 5}, out
    assert out["read_partition"] == {"ok": True, "consumed": 5}, out
    assert not out["read_group"]["ok"], out
    assert any("Unable to establish connection to consumer group coordinator" in m
               for m in out["read_group"]["logged"]), out
    assert broker.wait_for_log(r"client=mskmock-test-kafka-go refused FindCoordinator v0 corr=\d+: served versions "
                               r"are 2-\d+ \(api.versions.min\); closing as MSK does", since=since)


def test_kafka_go_group_meets_strict_decoding_without_floors():
    """kafka-go #1156 with the real client: with the floors off, its JoinGroup carries a
    subscription that declares v1 without owned_partitions, and strict decoding refuses it."""
    with running(Broker(config={"api.versions.min": ""})) as b:
        topic, out = kafka_go(b, "kg-strict")
        assert out["write"]["ok"] and out["read_partition"]["ok"], out
        assert not out["read_group"]["ok"], out
        assert any(m.startswith("Failed to join group %s: [42] Invalid Request" % topic)
                   for m in out["read_group"]["logged"]), out
        assert b.wait_for_log(r"client=mskmock-test-kafka-go principal=ANONYMOUS api=JoinGroup v\d corr=\d+ "
                              r"refused error=INVALID_REQUEST\(42\): group %s member '' protocol range: "
                              r"ConsumerProtocolSubscription declares v1 but ends at byte \d+ before owned_partitions"
                              % topic)


def test_kafka_go_group_works_on_provisioned():
    with running(Broker(config={"profile": "provisioned"})) as b:
        _, out = kafka_go(b, "kg-provisioned")
        assert out["read_group"] == {"ok": True, "consumed": 5}, out


def test_librdkafka_2_0_2_finds_no_metadata_version_in_common(broker):
    """Debian's kcat carries librdkafka 2.0.2, whose Metadata stops at v4: it refuses on its own
    to talk to a broker whose floor is above that, as it would to MSK Serverless (librdkafka
    reached Metadata v12 in 2.3.0, about when MSK IAM came to librdkafka through OAUTHBEARER)."""
    if not shutil.which("kcat"):
        pytest.skip("kcat is not installed")
    p = subprocess.run(["kcat", "-b", broker.bootstrap, "-L", "-m", "5"], capture_output=True, text=True,
                       timeout=30)
    assert p.returncode != 0
    assert "Required feature not supported by broker" in p.stderr, p.stderr[-2000:]


def admin_calls(lang, bootstrap, topic):
    """The five admin calls through one client library (see tests/clients/*/admin*)."""
    if lang == "confluent":
        argv = [sys.executable, str(CLIENTS / "python" / "admin_calls.py")]
    elif lang == "java":
        jar = CLIENTS / "java" / "target" / "client.jar"
        if not jar.is_file():
            pytest.skip("java client is not built")
        argv = ["java", "-cp", str(jar), "mskmock.client.AdminCalls"]
    elif lang == "kafkajs":
        if client_command("node") is None:
            pytest.skip("node client is not built")
        argv = ["node", str(CLIENTS / "node" / "admin-calls.js")]
    else:
        cmd = client_command("go")
        if cmd is None:
            pytest.skip("go client is not built")
        argv = [str(CLIENTS / "go" / "client"), "admin-calls", lang]
    p = subprocess.run(argv + [bootstrap, topic], cwd=str(ROOT), capture_output=True, text=True, timeout=150)
    assert p.returncode == 0 or lang == "sarama", "%s: %s" % (argv, p.stderr[-3000:])
    if p.returncode != 0:
        return {"error": p.stderr.strip().splitlines()[-1]}
    return json.loads(p.stdout.strip().splitlines()[-1])


LIBS = ["java", "kafkajs", "franz", "sarama", "confluent"]
# Which API each library's describeCluster uses: DescribeCluster (no controller on MSK) or Metadata.
USES_DESCRIBE_CLUSTER = {"java", "sarama"}


@pytest.mark.parametrize("lang", LIBS)
def test_admin_calls_work_with_no_controller_in_describe_cluster(broker, lang):
    """Serverless (controller.visibility=metadata): DescribeCluster names no controller, as
    kafka-ui found on MSK; Metadata names one, where every library sends CreateTopics."""
    res = admin_calls(lang, broker.bootstrap, "t-admin-%s-%s" % (lang, uuid.uuid4().hex[:6]))
    for call in ADMIN_CALLS:
        assert res[call]["ok"], "%s %s: %s" % (lang, call, res[call])
    assert res["describe_topics"]["partitions"] == 3
    assert res["describe_cluster"]["nodes"] == 3
    controller = res["describe_cluster"]["controller"]
    if lang in USES_DESCRIBE_CLUSTER:
        assert controller is None
    else:
        assert controller == 41, "Metadata names the first synthetic broker"


@pytest.mark.parametrize("lang", ["kafkajs", "franz", "sarama"])
def test_no_controller_anywhere_breaks_topic_admin(lang):
    """controller.visibility=none: why Serverless cannot be like that. These libraries send
    CreateTopics/DeleteTopics to the Metadata controller and fail without one (Java and
    librdkafka time out waiting for one), while users do manage topics on MSK Serverless."""
    with running(Broker(config={"controller.visibility": "none"})) as b:
        res = admin_calls(lang, b.bootstrap, "t-none-%s" % lang)
    if lang == "sarama":
        assert "controller is not available" in res["error"]  # NewClusterAdmin refuses
        return
    assert res["describe_cluster"]["ok"] and res["describe_cluster"]["controller"] is None
    for call in ("create_topics", "create_partitions", "delete_topics"):
        assert not res[call]["ok"], "%s %s: %s" % (lang, call, res[call])


# -- kafka.version: the ranges and features of an Apache Kafka release ----------------------

@pytest.fixture(scope="module")
def kafka36():
    with running(Broker(broker_count=1, config={"profile": "provisioned", "kafka.version": "3.6"})) as b:
        yield b


@pytest.fixture(scope="module")
def kafka40():
    with running(Broker(broker_count=1, config={"profile": "kafka", "kafka.version": "4.0",
                                                "group.initial.rebalance.delay.ms": 0})) as b:
        yield b


def api_versions_flex(port, version):
    body = exchange(port, kw.api_versions_request(11, "it-versions", version))
    assert body is not None, "ApiVersions v%d was not answered" % version
    return kw.parse_api_versions_flex(body)


# Apache Kafka's ranges (validVersions of the message specs at the 3.6.0 tag, where OffsetCommit v9
# is latestVersionUnstable; 4.0 with KIP-896's removals, Produce still listed from v0 by
# KAFKA-18659), before they meet what mskmock serves
KAFKA_RANGES = {
    "3.6": {0: (0, 9), 1: (0, 15), 2: (0, 8), 3: (0, 12), 8: (0, 8), 11: (0, 9), 18: (0, 3), 19: (0, 7)},
    "4.0": {0: (0, 12), 1: (4, 17), 2: (1, 10), 3: (0, 13), 8: (2, 9), 11: (2, 9), 18: (0, 4), 19: (2, 7)},
}


@pytest.mark.parametrize("version", ["3.6", "4.0"])
def test_kafka_version_answers_that_releases_ranges(broker, kafka36, kafka40, version):
    """Each range is Kafka's, capped where mskmock serves less (the serverless broker, whose
    floors are its own, lists mskmock's maxima): Kafka 4.0's Produce 12 and Metadata 13 are
    offered only once mskmock serves them."""
    _, served = api_versions(broker.port, 2)
    b = kafka36 if version == "3.6" else kafka40
    got = api_versions_flex(b.port, 3)["ranges"]
    # Produce 12 is transactions V2's: the serverless broker (transaction.version 1) caps it at 11
    mskmock_max = {key: served[key][1] for key in served}
    mskmock_max[0] = 12
    for key, (lo, hi) in KAFKA_RANGES[version].items():
        assert got[key] == (lo, min(hi, mskmock_max[key])), (version, key, got[key])
    # KIP-848 (test_consumer_protocol.py): Kafka 4.0 enables it by default, 3.6 does not
    want = {"3.6": None, "4.0": (0, 1)}[version]
    assert got.get(68) == want and got.get(69) == want, (version, got.get(68), got.get(69))


def test_serverless_refuses_a_kafka_version(tmp_path):
    """MSK Serverless names no Kafka version: the serverless profile refuses the key at start-up."""
    p = subprocess.run([str(broker_binary()), "--data-dir", str(tmp_path), "--set", "kafka.version=4.0"],
                       capture_output=True, text=True, timeout=10, env=broker_env())
    assert p.returncode != 0
    assert "kafka.version: the serverless profile has none" in p.stderr, p.stderr


def produce_v2_frame(corr):
    """Produce v2 with no topics: acks, timeout, an empty array."""
    return kw.request(0, 2, corr, "it-versions", kw.i16(1) + kw.i32(1000) + kw.i32(0))


def fetch_v3_frame(corr):
    """Fetch v3 with no topics: replica_id, max_wait_ms, min_bytes, max_bytes, an empty array."""
    return kw.request(1, 3, corr, "it-versions", kw.i32(-1) + kw.i32(0) + kw.i32(0) + kw.i32(1024) + kw.i32(0))


def test_kip_896_removals_apply_from_4_0(kafka36, kafka40):
    """Kafka 4.0 removed Produce v0-2 (still listed from v0: KAFKA-18659) and Fetch v0-3, and
    closes the connection on them; 3.6 answers both."""
    assert exchange(kafka36.port, produce_v2_frame(21)) is not None
    assert exchange(kafka36.port, fetch_v3_frame(22)) is not None
    assert api_versions_flex(kafka40.port, 3)["ranges"][0][0] == 0
    since = kafka40.log_size()
    assert exchange(kafka40.port, produce_v2_frame(23)) is None
    assert exchange(kafka40.port, fetch_v3_frame(24)) is None
    assert kafka40.wait_for_log(r"refused Produce v2 corr=23: served versions are 3-\d+ \(kafka.version 4.0\); "
                                r"closing as Kafka does", since=since)
    assert kafka40.wait_for_log(r"refused Fetch v3 corr=24: served versions are 4-17 \(kafka.version 4.0\); "
                                r"closing as Kafka does", since=since)


def test_kafka_version_features_never_claim_what_is_not_implemented(kafka36, kafka40):
    """ApiVersions v3+ features as Kafka of the release reports them (metadata.version at its
    production level), transaction.version 2 as Kafka 4.0 finalizes it (transactions V2, up to the
    transaction.version key, test_txn_v2.py) and group.version only with ConsumerGroupHeartbeat."""
    v = api_versions_flex(kafka36.port, 3)
    assert v["supported"] == {"metadata.version": (1, 14)} and v["finalized"] == {"metadata.version": 14}
    v = api_versions_flex(kafka40.port, 4)
    assert v["supported"]["metadata.version"] == (7, 25) and v["finalized"]["metadata.version"] == 25
    assert v["supported"]["kraft.version"] == (0, 1) and "kraft.version" not in v["finalized"]
    assert v["supported"]["transaction.version"] == (0, 2) and v["finalized"]["transaction.version"] == 2
    if 68 in v["ranges"]:
        assert v["supported"]["group.version"] == (0, 1) and v["finalized"]["group.version"] == 1
    else:
        assert "group.version" not in v["supported"] and "group.version" not in v["finalized"]
    # v3: no supported feature whose lowest level is 0 (KAFKA-17492), as Kafka answers older clients
    v3 = api_versions_flex(kafka40.port, 3)
    assert set(v3["supported"]) == {"metadata.version"} and v3["finalized"] == v["finalized"]


def test_librdkafka_sees_kafka_4_0s_ranges_and_works_within_them(kafka40):
    """confluent-kafka (librdkafka) reads the 4.0 ranges (its APIVERSION debug lines) and
    produces and consumes through them: its Fetch and ListOffsets are above KIP-896's floors."""
    from confluent_kafka import Consumer, Producer
    lines = []

    class Keep(logging.Handler):
        def emit(self, record):
            lines.append(record.getMessage())
    log = logging.getLogger("it-kversions")
    log.addHandler(Keep())
    log.setLevel(logging.DEBUG)
    topic = "kv40-" + uuid.uuid4().hex[:6]
    p = Producer({"bootstrap.servers": kafka40.bootstrap, "debug": "feature", "logger": log})
    p.produce(topic, b"v")
    assert p.flush(20) == 0
    c = Consumer({"bootstrap.servers": kafka40.bootstrap, "group.id": topic, "auto.offset.reset": "earliest"})
    c.subscribe([topic])
    msg = None
    for _ in range(30):
        msg = c.poll(1)
        if msg is not None and not msg.error():
            break
    c.close()
    assert msg is not None and msg.value() == b"v"
    assert any("ApiKey Fetch (1) Versions 4..17" in l for l in lines), lines[:20]
    assert any("ApiKey CreateTopics (19) Versions 2..7" in l for l in lines), lines[:20]
