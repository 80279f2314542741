"""Transactions V2 (KIP-890 part 2) with real clients: the Java producer (kafka-clients 4.4) on
a broker that finalizes transaction.version 2 (the kafka profile) and on one that does not (the
serverless profile), and librdkafka (confluent-kafka 2.16, which has no KIP-890 support:
https://github.com/confluentinc/librdkafka/issues/5423) on the V2 broker, as a V1 client.

Proof that the Java producer runs V2 comes from its own log (TransactionManager at debug):
"Updating isTV2 enabled to true with FinalizedFeaturesEpoch N" once it read the features, and
"ProducerId set to P with epoch E" after every EndTxn, the epoch one more each time (V1 keeps
it: the log line comes once, from InitProducerId). read_committed consumers must see exactly
the committed records either way.
"""

import collections
import json
import os
import re
import subprocess
import time
import uuid

import pytest

from harness import ROOT, Broker, client_command, running

PARTITIONS = 3
PER_TXN = 6
TM = "org.apache.kafka.clients.producer.internals.TransactionManager"

pytestmark = pytest.mark.timeout(240)


@pytest.fixture(scope="module")
def broker_config():
    return {"profile": "kafka"}


@pytest.fixture(scope="module", autouse=True)
def java_built():
    if client_command("java") is None:
        if os.environ.get("CI"):
            pytest.fail("java client is not built (tools/install-deps --test builds it)")
        pytest.skip("java client is not built (tests/clients/java/install.sh)")


def unique(prefix):
    return "%s-%s" % (prefix, uuid.uuid4().hex[:8])


def java_logged(*args, timeout=90):
    """A Java client run with TransactionManager logging at debug: (JSON result, stderr)."""
    env = dict(os.environ, KAFKA_CLIENT_LOG_LEVEL="info",
               JAVA_TOOL_OPTIONS="-Dorg.slf4j.simpleLogger.log.%s=debug" % TM)
    argv = client_command("java") + [str(a) for a in args]
    p = subprocess.run(argv, cwd=str(ROOT), stdin=subprocess.DEVNULL, capture_output=True, text=True,
                       timeout=timeout, env=env)
    assert p.returncode == 0, "%s exited %d\n%s\n%s" % (argv, p.returncode, p.stdout[-3000:], p.stderr[-6000:])
    lines = [ln for ln in p.stdout.splitlines() if ln.strip()]
    return json.loads(lines[-1]), p.stderr


def create_topic(bootstrap, topic):
    res, _ = java_logged("create-topic", "--bootstrap", bootstrap, "--topic", topic, "--partitions", PARTITIONS)
    assert res == {"created": topic}


def produce(bootstrap, topic, txn_id, commits, aborts):
    return java_logged("txn-produce", "--bootstrap", bootstrap, "--topic", topic, "--transactional-id", txn_id,
                       "--commit", commits, "--abort", aborts, "--records-per-txn", PER_TXN)


def read_committed(bootstrap, topic):
    res, _ = java_logged("txn-consume", "--bootstrap", bootstrap, "--topic", topic, "--isolation",
                         "read_committed", "--idle-ms", 1500, "--timeout-s", 40)
    assert res["complete"], res
    return res["values"]


def tv2_enabled(stderr):
    """The values of "Updating isTV2 enabled to X" the producer logged."""
    return re.findall(r"Updating isTV2 enabled to (true|false) with FinalizedFeaturesEpoch", stderr)


def producer_ids(stderr):
    """(producer id, epoch) of each "ProducerId set to P with epoch E", in order."""
    return [(int(p), int(e)) for p, e in re.findall(r"ProducerId set to (\d+) with epoch (\d+)", stderr)]


def check_committed(bootstrap, topic, res):
    got = read_committed(bootstrap, topic)
    assert collections.Counter(got) == collections.Counter(res["committed"]), (
        "read_committed must show exactly the %d committed records: got %d, aborted among them %s"
        % (len(res["committed"]), len(got), sorted(v for v in got if v.startswith("a-"))[:10]))


def test_java_producer_runs_transactions_v2(broker):
    b, topic = broker.bootstrap, unique("txn-v2-java")
    create_topic(b, topic)
    commits, aborts = 3, 2
    res, log = produce(b, topic, unique("txn-v2-java"), commits, aborts)
    assert "true" in tv2_enabled(log), (
        "the Java producer did not switch to transactions V2 (no 'Updating isTV2 enabled to true'); "
        "its log:\n%s" % log[-4000:])
    ids = producer_ids(log)
    # InitProducerId gives epoch 0, every EndTxn (commit or abort) one more
    assert len(ids) == 1 + commits + aborts, ids
    assert len({p for p, _ in ids}) == 1 and [e for _, e in ids] == list(range(len(ids))), (
        "the producer epoch must grow by one at every EndTxn: %s" % ids)
    check_committed(b, topic, res)


def test_java_producer_stays_on_v1_on_serverless():
    with running(Broker()) as sb:
        b, topic = sb.bootstrap, unique("txn-v1-java")
        create_topic(b, topic)
        res, log = produce(b, topic, unique("txn-v1-java"), 2, 1)
        assert "true" not in tv2_enabled(log), log[-4000:]
        ids = producer_ids(log)
        assert len(ids) == 1, "V1: the epoch is set once, by InitProducerId: %s" % ids
        check_committed(b, topic, res)


def test_librdkafka_v1_client_on_the_v2_broker(broker):
    pytest.importorskip("confluent_kafka")
    from confluent_kafka import Consumer, Producer, TopicPartition, OFFSET_BEGINNING, KafkaError
    b, topic = broker.bootstrap, unique("txn-v2-rdkafka")
    create_topic(b, topic)
    p = Producer({"bootstrap.servers": b, "transactional.id": unique("txn-v2-rdkafka"), "log_level": 2})
    p.init_transactions(10)
    want = []
    for t, commit in enumerate([True, False, True]):
        p.begin_transaction()
        for i in range(PER_TXN):
            p.produce(topic, value=b"%d-%d" % (t, i), partition=i % PARTITIONS)
        if commit:
            p.commit_transaction(10)
            want += [b"%d-%d" % (t, i) for i in range(PER_TXN)]
        else:
            p.abort_transaction(10)
    p.flush(10)
    c = Consumer({"bootstrap.servers": b, "group.id": unique("rd"), "isolation.level": "read_committed",
                  "enable.partition.eof": True, "log_level": 2})
    c.assign([TopicPartition(topic, i, OFFSET_BEGINNING) for i in range(PARTITIONS)])
    got, eof = [], set()
    deadline = time.monotonic() + 30
    while len(eof) < PARTITIONS and time.monotonic() < deadline:
        m = c.poll(0.5)
        if m is None:
            continue
        if m.error():
            if m.error().code() == KafkaError._PARTITION_EOF:
                eof.add(m.partition())
            continue
        got.append(m.value())
    c.close()
    assert len(eof) == PARTITIONS and collections.Counter(got) == collections.Counter(want), (got, want)


def test_java_consume_transform_produce_on_v2_across_a_crash():
    """test_txn_java's consume-transform-produce (a crashed run, then a second one fencing it) on
    the V2 broker; its debug log shows V2's requests served and V1's add requests never sent."""
    import test_txn_java
    with running(Broker(config={"profile": "kafka", "group.initial.rebalance.delay.ms": 0,
                                "transaction.abort.timed.out.transaction.cleanup.interval.ms": 500},
                        log_level="debug")) as b:
        test_txn_java.test_consume_transform_produce_exactly_once_across_a_crash(b)
        served = collections.Counter(re.findall(r"conn=\d+ (\w+) v(\d+) corr=\d+ handled", b.log_text()))
    for api, v in (("Produce", "12"), ("EndTxn", "5"), ("TxnOffsetCommit", "5")):
        assert served[(api, v)] > 0, "%s v%s never served: %s" % (api, v, sorted(served))
    added = {k: n for k, n in served.items() if k[0] in ("AddPartitionsToTxn", "AddOffsetsToTxn")}
    assert not added, "a V2 producer adds no partition or group itself: %s" % added


@pytest.fixture(scope="module")
def markers_delayed():
    """A V2 broker whose markers follow EndTxn 20 ms apart per partition, as test_txn_clients runs."""
    import test_txn_clients
    cfg = dict(test_txn_clients.TXN_CONFIG, profile="kafka")
    cfg["group.initial.rebalance.delay.ms"] = 0
    with running(Broker(config=cfg, log_level="debug")) as b:
        yield b


@pytest.mark.parametrize("client", ["franz-go-aborts", "kafkajs-aborts"])
def test_transform_on_v2_while_markers_are_written(markers_delayed, client):
    """test_txn_clients' consume-transform-produce on the V2 broker. franz-go runs V2 (Produce v12,
    EndTxn v5): its first write of each transaction comes while the last one's markers are being
    written, which Kafka's broker waits out (KAFKA-18654) rather than answer NOT_ENOUGH_REPLICAS,
    which franz-go retries only after a metadata refresh (5 s a transaction: the run timed out)."""
    import test_txn_clients
    [spec] = [t for t in test_txn_clients.TRANSFORMS if t[0] == client]
    t0 = time.monotonic()
    test_txn_clients.test_transform_exactly_once(markers_delayed.bootstrap, spec)
    print("%s: %.1f s" % (client, time.monotonic() - t0))
    if client.startswith("franz-go"):
        served = collections.Counter(re.findall(r"conn=\d+ (\w+ v\d+) corr=\d+ handled", markers_delayed.log_text()))
        assert served["EndTxn v5"] > 0 and served["Produce v12"] > 0, sorted(served)
