"""KIP-848's online migration between the classic and the consumer group protocols.

Java kafka-clients 4.x consumers (`group-consume`, groups.py) in a classic group are restarted one
by one with group.protocol=consumer: the first consumer-protocol member turns the classic group
into a consumer group whose classic members carry on (JoinGroup/SyncGroup/Heartbeat served by the
consumer group), and the committed offsets carry on, so nothing is lost or consumed twice. The
rolling restart back to classic ends, when the last consumer-protocol member leaves, with a
classic group again. ConsumerGroupDescribe (raw, v1: MemberType), DescribeGroups (raw) and the
admin API show the type change; the broker is restarted (kill -9 and SIGTERM) in the middle
of a mixed group; group.consumer.migration.policy=disabled refuses the upgrade.
"""

import json
import time
import urllib.request

import pytest

from groups import (ConsumerPool, assert_exactly_once, assert_no_errors, expected_records,
                    wait_all_committed, wait_balanced, wait_consumed)
from harness import Broker, run_client
import kafka_wire as kw
from test_consumer_protocol import describe, heartbeat, node_of

PARTITIONS = 6
BATCH = 300
SESSION_MS = 6000
JOIN_TIMEOUT = 90

ERR_GROUP_ID_NOT_FOUND = 69
TYPE_CLASSIC, TYPE_CONSUMER = 0, 1


@pytest.fixture(scope="module")
def broker_config():
    return {"profile": "provisioned", "kafka.version": "4.0",
            "group.initial.rebalance.delay.ms": 0,
            "group.consumer.session.timeout.ms": SESSION_MS,
            "group.consumer.min.session.timeout.ms": 1000,
            "group.consumer.heartbeat.interval.ms": 500,
            "group.consumer.min.heartbeat.interval.ms": 100}


@pytest.fixture
def pool():
    p = ConsumerPool()
    yield p
    p.cleanup()


def create_topic(bootstrap, topic):
    assert run_client("python", ["create-topic", "--bootstrap", bootstrap, "--topic", topic,
                                 "--partitions", PARTITIONS], timeout=60) == {"created": topic}


def produce(bootstrap, topic, start):
    assert run_client("python", ["produce", "--bootstrap", bootstrap, "--topic", topic,
                                 "--count", BATCH, "--partitions", PARTITIONS,
                                 "--compression", "none", "--start", start],
                      timeout=120) == {"produced": BATCH}


def start(pool, b, group, name, protocol):
    # range: the classic RangeAssignor (eager) and the broker's range assignor alike
    return pool.start("java", b.bootstrap, group, group, assignor="range", name=name,
                      session_timeout_ms=SESSION_MS if protocol == "classic" else None,
                      extra_args=["--group-protocol", protocol])


def admin_state(broker, group):
    with urllib.request.urlopen(broker.admin_url + "/v1/groups/" + group, timeout=10) as r:
        return json.loads(r.read().decode())


def describe_groups(broker, group):
    """DescribeGroups v0 (raw) at the group's coordinator: state, protocol type and member ids."""
    s = kw.connect(broker.ports[node_of(broker, group)])
    try:
        s.sendall(kw.request(15, 0, 3, "migrate-it", kw.array([group], kw.string)))
        corr, body = kw.recv_frame(s)
    finally:
        s.close()
    r = kw.Reader(body)

    def member(x):
        m = {"member_id": x.string(), "client_id": x.string(), "client_host": x.string()}
        x.take(x.i32())
        x.take(x.i32())
        return m

    g = r.array(lambda x: {"error": x.i16(), "group_id": x.string(), "state": x.string(),
                           "protocol_type": x.string(), "protocol": x.string(),
                           "members": x.array(member)})[0]
    assert g["error"] == 0, g
    return g


def member_types(broker, group):
    """{member id: MemberType} from ConsumerGroupDescribe v1; None for a classic group."""
    d = describe(broker, node_of(broker, group), group)
    if d["error"] == ERR_GROUP_ID_NOT_FOUND:
        return None
    assert d["error"] == 0, d
    return sorted(m["type"] for m in d["members"])


def wait_reconciled(broker, group, timeout):
    """Until every member of a consumer group is at the group's epoch (a classic group: at once).

    A classic member of a consumer group learns of a new group epoch only at its next heartbeat,
    which Kafka answers with REBALANCE_IN_PROGRESS so it rejoins (GroupMetadataManager's
    classicGroupHeartbeatToConsumerGroup); a downgrade before then makes a classic group at the
    group epoch, and that member's next heartbeat, still at its old generation, is fenced with
    ILLEGAL_GENERATION (validateClassicGroupHeartbeat), which clients report as partitions lost.
    mskmock does the same, so a rolling step waits for this, as an operator would."""
    deadline = time.monotonic() + timeout
    while True:
        st = admin_state(broker, group)
        if st.get("type") != "consumer" or all(m["member_epoch"] == st["group_epoch"] for m in st["members"]):
            return
        assert time.monotonic() < deadline, "members not at the group epoch: %s" % st
        time.sleep(0.1)


class Run:
    """The group's consumers so far (current ones last) and the records written so far."""

    def __init__(self, broker, pool, group):
        self.b, self.pool, self.group = broker, pool, group
        self.all, self.live, self.written, self.n = [], [], 0, 0

    def add(self, protocol):
        c = start(self.pool, self.b, self.group, "%s-%d" % (protocol, self.n), protocol)
        self.n += 1
        self.all.append(c)
        self.live.append(c)
        return c

    def replace(self, old, protocol):
        wait_all_committed(self.live)
        old.stop()
        self.live.remove(old)
        return self.add(protocol)

    def settle_and_consume(self):
        wait_balanced(self.live, PARTITIONS, timeout=JOIN_TIMEOUT)
        wait_reconciled(self.b, self.group, timeout=JOIN_TIMEOUT)
        produce(self.b.bootstrap, self.group, self.written)
        self.written += BATCH
        wait_consumed(self.all, expected_records(self.written, PARTITIONS), timeout=JOIN_TIMEOUT)
        # clean handovers at committed offsets: every record exactly once across the restarts
        assert_exactly_once(self.all, expected_records(self.written, PARTITIONS))


def test_rolling_upgrade_to_consumer_and_downgrade_back_to_classic(broker, pool):
    group = "migrate-rolling"
    create_topic(broker.bootstrap, group)
    run = Run(broker, pool, group)
    for _ in range(3):
        run.add("classic")
    run.settle_and_consume()
    assert member_types(broker, group) is None  # a classic group: not a consumer group
    d = describe_groups(broker, group)
    assert (d["state"], d["protocol_type"], d["protocol"], len(d["members"])) == \
        ("Stable", "consumer", "range", 3), d
    assert admin_state(broker, group)["type"] == "classic"

    # one by one onto the consumer protocol; the first one upgrades the group
    for i in range(3):
        run.replace(run.live[0], "consumer")
        run.settle_and_consume()
        types = member_types(broker, group)
        assert types == sorted([TYPE_CLASSIC] * (2 - i) + [TYPE_CONSUMER] * (i + 1)), types
        # DescribeGroups of a consumer group: its state and the consumer type, no members
        d = describe_groups(broker, group)
        assert d["protocol_type"] == "consumer" and d["members"] == [], d
        assert admin_state(broker, group)["type"] == "consumer"
    assert "the classic group (generation" in broker.log_text()
    st = admin_state(broker, group)
    assert st["type"] == "consumer" and {m["protocol"] for m in st["members"]} == {"consumer"}, st

    # and back: the last consumer-protocol member leaving downgrades the group
    for i in range(3):
        run.replace(run.live[0], "classic")
        run.settle_and_consume()
        if i < 2:
            types = member_types(broker, group)
            assert types == sorted([TYPE_CLASSIC] * (i + 1) + [TYPE_CONSUMER] * (2 - i)), types
    assert member_types(broker, group) is None
    d = describe_groups(broker, group)
    assert (d["state"], d["protocol"], len(d["members"])) == ("Stable", "range", 3), d
    assert "becomes a classic group (the online downgrade)" in broker.log_text()
    assert admin_state(broker, group)["type"] == "classic"
    for c in run.live:
        c.stop()
    assert_no_errors(run.all)


@pytest.mark.parametrize("how", ["kill9", "sigterm"])
def test_broker_restart_in_the_middle_of_a_mixed_group(broker, pool, how):
    """Two classic members and one on the consumer protocol: the mixed group, its member types
    and assignments survive a restart of the broker, and consuming carries on."""
    group = "migrate-restart-" + how
    create_topic(broker.bootstrap, group)
    run = Run(broker, pool, group)
    for _ in range(3):
        run.add("classic")
    run.settle_and_consume()
    run.replace(run.live[0], "consumer")
    run.settle_and_consume()
    before = admin_state(broker, group)
    assert member_types(broker, group) == [TYPE_CLASSIC, TYPE_CLASSIC, TYPE_CONSUMER]
    wait_all_committed(run.live)
    if how == "kill9":
        broker.kill9()
    else:
        broker.restart()
    assert "consumer group loaded at epoch" in broker.log_text()
    after = admin_state(broker, group)
    assert after["type"] == "consumer", after
    key = lambda st: sorted((m["member_id"], m["protocol"]) for m in st["members"])  # noqa: E731
    assert key(after) == key(before), (before, after)
    run.settle_and_consume()
    assert member_types(broker, group) == [TYPE_CLASSIC, TYPE_CLASSIC, TYPE_CONSUMER]
    for c in run.live:
        c.stop()
    assert_no_errors(run.all)


def test_policy_disabled_refuses_the_upgrade(pool):
    b = Broker(config={"profile": "provisioned", "kafka.version": "4.0",
                       "group.initial.rebalance.delay.ms": 0,
                       "group.consumer.migration.policy": "disabled"})
    b.start()
    try:
        group = "migrate-disabled"
        create_topic(b.bootstrap, group)
        c = start(pool, b, group, "classic-0", "classic")
        wait_balanced([c], PARTITIONS, timeout=JOIN_TIMEOUT)
        r = heartbeat(b, node_of(b, group), group, member_id="m-consumer", topics=[group],
                      owned=[], version=1)
        assert r["error"] == ERR_GROUP_ID_NOT_FOUND, r
        assert r["message"] == "Group %s is not a consumer group." % group, r
        assert "because the online upgrade is disabled" in b.log_text()
        assert describe_groups(b, group)["state"] == "Stable"
        c.stop()
        assert_no_errors([c])
    finally:
        b.stop()
        b.cleanup()

