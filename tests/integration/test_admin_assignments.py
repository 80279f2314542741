"""Replica assignments given to CreateTopics and CreatePartitions, with confluent-kafka (librdkafka).

Regression for issue 30 item 4: librdkafka's own test 0081_admin found mskmock ignoring the
assignments it was given (49 mismatches across 9 topics) and accepting invalid ones (broker 99,
the same broker twice). Apache Kafka's KRaft controller (ReplicationControlManager.createTopic,
createPartitions and validateManualPartitionAssignment) keeps a valid assignment, which
Metadata then lists, leads each partition by its first replica up, and refuses an invalid one
with INVALID_REPLICA_ASSIGNMENT (39) and a message naming what is wrong. The module's broker runs
the kafka profile (node ids 1, 2, 3); the checks are the same in every profile.
"""

import re

import pytest

from harness import admin_call

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import KafkaError, Producer  # noqa: E402
from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic  # noqa: E402


@pytest.fixture(scope="module")
def broker_config():
    return {"profile": "kafka"}


def admin(broker):
    # every broker as bootstrap: one of them may be down (the failover test)
    return AdminClient({"bootstrap.servers": ",".join("127.0.0.1:%d" % p for p in broker.ports)})




def create(broker, name, assignment):
    """CreateTopics with a replica assignment; None, or the KafkaError it got."""
    a = admin(broker)  # alive until the result: a destroyed handle fails its futures
    f = a.create_topics([NewTopic(name, len(assignment), replica_assignment=assignment)])[name]
    try:
        f.result(timeout=20)
        return None
    except confluent_kafka.KafkaException as e:
        return e.args[0]


def grow(broker, name, count, assignment):
    a = admin(broker)
    f = a.create_partitions([NewPartitions(name, count, replica_assignment=assignment)])[name]
    try:
        f.result(timeout=20)
        return None
    except confluent_kafka.KafkaException as e:
        return e.args[0]


def layout(broker, name):
    """{partition: (leader, replicas, isr)} as librdkafka's Metadata sees it."""
    md = admin(broker).list_topics(name, timeout=20).topics[name]
    assert md.error is None, md.error
    return {p.id: (p.leader, list(p.replicas), list(p.isrs)) for p in md.partitions.values()}


def exists(broker, name):
    return name in admin(broker).list_topics(timeout=20).topics


# assignments the default placement (consecutive brokers from a start) never makes
ASSIGNED = [[3, 1], [1, 3], [2, 1]]


def test_create_topics_keeps_replica_assignment(broker):
    assert create(broker, "assigned", ASSIGNED) is None
    want = {i: (r[0], r, r) for i, r in enumerate(ASSIGNED)}
    assert layout(broker, "assigned") == want
    # the admin API shows the same replicas
    status, t = admin_call(broker, "GET", "/v1/topics/assigned")
    assert status == 200
    assert [(p["leader"], p["replicas"]) for p in t["partitions"]] == [(r[0], r) for r in ASSIGNED]


def test_create_partitions_keeps_replica_assignment(broker):
    assert create(broker, "grown", [[2, 3]]) is None
    assert grow(broker, "grown", 3, [[3, 1], [1, 2]]) is None
    assert layout(broker, "grown") == {0: (2, [2, 3], [2, 3]), 1: (3, [3, 1], [3, 1]), 2: (1, [1, 2], [1, 2])}
    # and without one, new partitions get the default placement with as many replicas as partition 0
    a = admin(broker)
    a.create_partitions([NewPartitions("grown", 4)])["grown"].result(timeout=20)
    assert len(layout(broker, "grown")[3][1]) == 2


def test_create_topics_refuses_invalid_replica_assignment(broker):
    since = broker.log_size()
    cases = [
        ("bad-unknown", [[1, 99]], "includes broker 99, but no such broker is registered"),
        ("bad-twice", [[2, 2], [1, 3]], "includes the broker 2 more than once"),
        ("bad-uneven", [[1, 2], [2, 3, 1]], "includes a partition with 3 replica(s), but this is not consistent "
                                            "with previous partitions, which have 2 replica(s)"),
    ]
    for name, assignment, message in cases:
        err = create(broker, name, assignment)
        assert err is not None and err.code() == KafkaError.INVALID_REPLICA_ASSIGNMENT, (name, err)
        assert message in err.str(), err.str()
        assert not exists(broker, name)
        assert broker.wait_for_log(r"refused error=INVALID_REPLICA_ASSIGNMENT\(39\): topic '%s': .*%s"
                                   % (name, re.escape(message)), since=since)


def test_create_partitions_refuses_invalid_replica_assignment(broker):
    assert create(broker, "grow-bad", [[1, 2]]) is None
    cases = [
        (3, [[3, 1]], "Attempted to add 2 additional partition(s), but only 1 assignment(s) were specified."),
        (2, [[3, 99]], "The manual partition assignment includes broker 99, but no such broker is registered."),
        (2, [[3]], "includes a partition with 1 replica(s), but this is not consistent with previous partitions, "
                   "which have 2 replica(s)."),
    ]
    for count, assignment, message in cases:
        err = grow(broker, "grow-bad", count, assignment)
        assert err is not None and err.code() == KafkaError.INVALID_REPLICA_ASSIGNMENT, err
        assert message in err.str(), err.str()
    assert list(layout(broker, "grow-bad")) == [0]


def test_failover_follows_the_replica_assignment(broker):
    """Broker 1 leads [1, 3]: down, its second replica (3) leads, not the next broker (2); both down,
    the partition is offline; back up, the preferred replica leads again, and records flow."""
    assert create(broker, "failover", [[1, 3]]) is None
    assert admin_call(broker, "POST", "/v1/topics/failover/partitions/0/leader", {"broker": 2})[0] == 409  # not a replica
    try:
        assert admin_call(broker, "POST", "/v1/brokers/1/down")[0] == 200
        assert layout(broker, "failover")[0] == (3, [1, 3], [3])
        assert admin_call(broker, "POST", "/v1/brokers/3/down")[0] == 200
        md = admin(broker).list_topics("failover", timeout=20).topics["failover"].partitions[0]
        assert md.leader == -1 and md.error is not None and md.error.code() == KafkaError.LEADER_NOT_AVAILABLE
        assert admin_call(broker, "GET", "/v1/topics/failover")[1]["partitions"][0]["leader"] == -1
        assert admin_call(broker, "POST", "/v1/brokers/3/up")[0] == 200
        assert layout(broker, "failover")[0] == (3, [1, 3], [3])
    finally:
        admin_call(broker, "POST", "/v1/brokers/3/up")
        admin_call(broker, "POST", "/v1/brokers/1/up")
    assert layout(broker, "failover")[0] == (1, [1, 3], [1, 3])
    p = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0})
    p.produce("failover", value=b"after", partition=0)
    assert p.flush(30) == 0
    assert admin_call(broker, "GET", "/v1/topics/failover")[1]["partitions"][0]["high_watermark"] == 1


def test_replica_assignment_survives_restart(broker):
    assert create(broker, "kept", ASSIGNED) is None
    want = {i: (r[0], r, r) for i, r in enumerate(ASSIGNED)}
    assert layout(broker, "kept") == want
    broker.restart()
    assert layout(broker, "kept") == want
    broker.kill9()
    assert layout(broker, "kept") == want
