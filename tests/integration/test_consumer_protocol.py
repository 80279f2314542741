"""The consumer group protocol (KIP-848): ConsumerGroupHeartbeat and ConsumerGroupDescribe.

Real clients with group.protocol=consumer (the Java kafka-clients 4.x consumer, librdkafka
through confluent-kafka and franz-go's kgo.ServerSideBalancer), each member a `group-consume`
process (groups.py), and raw requests (kafka_wire.py framing) for what a client never sends:
wrong epochs, unknown members, unknown assignors, regular expressions. One provisioned-profile
broker on kafka.version 4.0 serves the module, with a short consumer session timeout so a crash
is noticed within seconds.
"""

import json
import re
import struct
import time
import uuid

import pytest

from groups import (ConsumerPool, assert_exactly_once, assert_no_errors, expected_records,
                    split_state, wait_all_committed, wait_balanced, wait_consumed)
from harness import Broker, run_client
import kafka_wire as kw

PARTITIONS = 6
BATCH = 600
SESSION_MS = 6000
JOIN_TIMEOUT = 60

API_CGH = 68
API_CGD = 69
ERR_UNKNOWN_MEMBER_ID = 25
ERR_INVALID_REQUEST = 42
ERR_GROUP_ID_NOT_FOUND = 69
ERR_FENCED_MEMBER_EPOCH = 110
ERR_UNRELEASED_INSTANCE_ID = 111
ERR_UNSUPPORTED_ASSIGNOR = 112


@pytest.fixture(scope="module")
def broker_config():
    # kafka.version 4.0 (MSK Provisioned's 4.0): provisioned's default, 3.8, predates KIP-848's GA
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


def create_topic(bootstrap, topic, partitions=PARTITIONS):
    assert run_client("python", ["create-topic", "--bootstrap", bootstrap, "--topic", topic,
                                 "--partitions", partitions], timeout=60) == {"created": topic}


def produce(bootstrap, topic, start, count=BATCH, partitions=PARTITIONS):
    assert run_client("python", ["produce", "--bootstrap", bootstrap, "--topic", topic,
                                 "--count", count, "--partitions", partitions,
                                 "--compression", "none", "--start", start],
                      timeout=120) == {"produced": count}


# -- raw requests ---------------------------------------------------------------------------

def _frame(api_key, version, corr, body):
    hdr = kw.i16(api_key) + kw.i16(version) + kw.i32(corr) + kw.string("kip848-it") + kw.tags()
    payload = hdr + body
    return kw.i32(len(payload)) + payload


def _call(broker, api_key, version, body, node=0):
    s = kw.connect(broker.ports[node])
    try:
        s.sendall(_frame(api_key, version, 7, body))
        corr, resp = kw.recv_frame(s)
        assert corr == 7
        r = kw.FlexReader(resp, flex=True)
        r.skip_tags()  # response header v1
        return r
    finally:
        s.close()


def heartbeat(broker, node, group, member_id="", epoch=0, instance=None, rebalance_ms=30000,
              topics=None, assignor=None, owned=None, regex=None, version=0):
    body = kw.compact_string(group) + kw.compact_string(member_id) + kw.i32(epoch)
    body += kw.compact_nullable_string(instance) + kw.compact_nullable_string(None)
    body += kw.i32(rebalance_ms)
    body += kw.compact_array(topics, kw.compact_string)
    if version >= 1:
        body += kw.compact_nullable_string(regex)
    body += kw.compact_nullable_string(assignor)
    body += kw.compact_array(owned, lambda tp: tp[0] + kw.compact_array(tp[1], kw.i32) + kw.tags())
    body += kw.tags()
    r = _call(broker, API_CGH, version, body, node)
    out = {"throttle": r.i32(), "error": r.i16(), "message": r.compact_string(),
           "member_id": r.compact_string(), "epoch": r.i32(), "interval": r.i32()}
    if r.i8() >= 0:
        def tp(x):
            t = (x.take(16), x.compact_array(lambda y: y.i32()))
            x.skip_tags()
            return t
        out["assignment"] = r.compact_array(tp)
        r.skip_tags()
    else:
        out["assignment"] = None
    return out


def describe(broker, node, group, version=1):
    body = kw.compact_array([group], kw.compact_string) + kw.i8(0) + kw.tags()
    r = _call(broker, API_CGD, version, body, node)
    r.i32()

    def assignment(x):
        def tp(y):
            t = (y.take(16), y.compact_string(), y.compact_array(lambda z: z.i32()))
            y.skip_tags()
            return t
        a = x.compact_array(tp)
        x.skip_tags()
        return a

    def member(x):
        m = {"member_id": x.compact_string(), "instance_id": x.compact_string(),
             "rack_id": x.compact_string(), "epoch": x.i32(), "client_id": x.compact_string(),
             "client_host": x.compact_string(),
             "topics": x.compact_array(lambda y: y.compact_string()),
             "regex": x.compact_string(), "assignment": assignment(x), "target": assignment(x)}
        if version >= 1:
            m["type"] = x.i8()
        x.skip_tags()
        return m

    def grp(x):
        g = {"error": x.i16(), "message": x.compact_string(), "group_id": x.compact_string(),
             "state": x.compact_string(), "group_epoch": x.i32(), "assignment_epoch": x.i32(),
             "assignor": x.compact_string(), "members": x.compact_array(member),
             "ops": x.i32()}
        x.skip_tags()
        return g
    return r.compact_array(grp)[0]


def node_of(broker, group):
    """Tries every node until one is the coordinator (NOT_COORDINATOR elsewhere)."""
    for n in range(len(broker.ports)):
        if describe(broker, n, group)["error"] != 16:
            return n
    raise AssertionError("no node coordinates %s" % group)


def owned_of(assignment):
    return [(t, ps) for t, ps in assignment or []]


def join(broker, node, group, topic, **kw_):
    r = heartbeat(broker, node, group, member_id=kw_.pop("member_id", str(uuid.uuid4())),
                  topics=[topic], owned=[], version=kw_.pop("version", 1), **kw_)
    return r


# -- ApiVersions ----------------------------------------------------------------------------

def api_range(port, key):
    s = kw.connect(port)
    try:
        s.sendall(kw.api_versions_request(1, "kip848-it"))
        _, body = kw.recv_frame(s)
        return kw.parse_api_versions(body)[1].get(key)
    finally:
        s.close()


def test_provisioned_profile_on_kafka_4_advertises_kip848(broker):
    assert api_range(broker.ports[0], API_CGH) == (0, 1)
    assert api_range(broker.ports[0], API_CGD) == (0, 1)


@pytest.mark.parametrize("config", [{"profile": "provisioned", "kafka.version": "3.8"},
                                    {"profile": "kafka",
                                     "group.coordinator.rebalance.protocols": "classic"}],
                         ids=["provisioned-3.8", "kafka-classic-only"])
def test_kip848_not_advertised_before_4_0_or_when_switched_off(config):
    b = Broker(config=config)
    b.start()
    try:
        assert api_range(b.ports[0], API_CGH) is None
        assert api_range(b.ports[0], API_CGD) is None
    finally:
        b.stop(check=True)
        b.cleanup()


def test_serverless_profile_does_not_advertise_kip848():
    b = Broker(config={"profile": "serverless"})
    b.start()
    try:
        assert api_range(b.ports[0], API_CGH) is None
        assert api_range(b.ports[0], API_CGD) is None
    finally:
        b.stop(check=True)
        b.cleanup()


# -- bad input: Kafka's error, a log line, no state change ------------------------------------

def test_bad_heartbeats_are_refused_without_state_change(broker):
    b = broker
    topic = group = "kip848-bad"
    create_topic(b.bootstrap, topic)
    node = None
    # the coordinator: the node that does not answer NOT_COORDINATOR to a join
    mid = str(uuid.uuid4())
    for n in range(len(b.ports)):
        r = join(b, n, group, topic, member_id=mid)
        if r["error"] != 16:
            node = n
            break
    assert r["error"] == 0, r
    assert r["epoch"] == 1 and r["member_id"] == mid
    assert sorted(sum((ps for _, ps in r["assignment"]), [])) == list(range(PARTITIONS))
    # acknowledge the assignment
    r = heartbeat(b, node, group, member_id=mid, epoch=1, owned=owned_of(r["assignment"]))
    assert r["error"] == 0 and r["epoch"] == 1
    before = describe(b, node, group)
    assert before["error"] == 0 and before["state"] == "Stable", before
    assert before["members"][0]["type"] == 1

    cases = [
        ("a greater epoch", dict(member_id=mid, epoch=5), ERR_FENCED_MEMBER_EPOCH,
         "FENCED_MEMBER_EPOCH"),
        ("an unknown member", dict(member_id="nobody", epoch=1), ERR_UNKNOWN_MEMBER_ID,
         "UNKNOWN_MEMBER_ID"),
        ("an unknown assignor", dict(member_id=str(uuid.uuid4()), epoch=0, topics=[topic], owned=[],
                                     assignor="sticky"), ERR_UNSUPPORTED_ASSIGNOR,
         "UNSUPPORTED_ASSIGNOR"),
        ("an invalid regular expression", dict(member_id=str(uuid.uuid4()), epoch=0, regex="kip848-(",
                                               owned=[], version=1), 128,
         "INVALID_REGULAR_EXPRESSION"),
        ("an invalid epoch", dict(member_id=mid, epoch=-3), ERR_INVALID_REQUEST,
         "MemberEpoch is invalid"),
    ]
    for what, args, code, line in cases:
        since = b.log_size()
        r = heartbeat(b, node, group, **args)
        assert r["error"] == code, (what, r)
        assert r["message"], (what, r)
        b.wait_for_log(line, since=since)
        after = describe(b, node, group)
        assert (after["group_epoch"], after["assignment_epoch"], after["members"]) == \
            (before["group_epoch"], before["assignment_epoch"], before["members"]), what
    # the member carries on, then leaves
    r = heartbeat(b, node, group, member_id=mid, epoch=1)
    assert r["error"] == 0 and r["epoch"] == 1
    r = heartbeat(b, node, group, member_id=mid, epoch=-1)
    assert r["error"] == 0 and r["epoch"] == -1
    assert describe(b, node, group)["state"] == "Empty"


def test_reconciliation_waits_for_revocation_and_survives_kill9(broker):
    """Two raw members: the second gets a partition only once the first revoked it; after a
    kill -9 both carry on at their epochs."""
    b = broker
    topic = group = "kip848-reconcile"
    create_topic(b.bootstrap, topic, partitions=4)
    a = str(uuid.uuid4())
    node = None
    for n in range(len(b.ports)):
        r = join(b, n, group, topic, member_id=a)
        if r["error"] != 16:
            node = n
            break
    assert r["error"] == 0 and r["epoch"] == 1
    a_owned = owned_of(r["assignment"])
    heartbeat(b, node, group, member_id=a, epoch=1, owned=a_owned)
    # b joins: the group epoch moves to 2; b gets nothing until a revoked half
    bm = str(uuid.uuid4())
    r = join(b, node, group, topic, member_id=bm)
    assert r["error"] == 0 and r["epoch"] == 2, r
    assert sum(len(ps) for _, ps in r["assignment"]) == 0, r
    d = describe(b, node, group)
    assert d["group_epoch"] == 2 and d["state"] == "Reconciling", d
    # a still owns everything: it is asked to revoke two (its epoch stays 1)
    r = heartbeat(b, node, group, member_id=a, epoch=1, owned=a_owned)
    assert r["error"] == 0 and r["epoch"] == 1, r
    keep = owned_of(r["assignment"])
    assert sum(len(ps) for _, ps in keep) == 2
    # b asks again: still nothing, a has not revoked
    r = heartbeat(b, node, group, member_id=bm, epoch=2, owned=[])
    assert r["error"] == 0 and not sum(len(ps) for _, ps in (r["assignment"] or [])), r
    # a revokes: it moves to epoch 2
    r = heartbeat(b, node, group, member_id=a, epoch=1, owned=keep)
    assert r["error"] == 0 and r["epoch"] == 2, r
    # now b gets the two
    r = heartbeat(b, node, group, member_id=bm, epoch=2, owned=[])
    assert r["error"] == 0 and sum(len(ps) for _, ps in r["assignment"]) == 2, r
    b_owned = owned_of(r["assignment"])
    r = heartbeat(b, node, group, member_id=bm, epoch=2, owned=b_owned)
    d = describe(b, node, group)
    assert d["state"] == "Stable", d

    b.kill9()
    d2 = describe(b, node, group)
    assert (d2["group_epoch"], d2["assignment_epoch"], d2["state"]) == (2, 2, "Stable"), d2
    assert sorted(m["member_id"] for m in d2["members"]) == sorted([a, bm])
    for m, owned in ((a, keep), (bm, b_owned)):
        r = heartbeat(b, node, group, member_id=m, epoch=2, owned=owned)
        assert r["error"] == 0 and r["epoch"] == 2, r
    assert describe(b, node, group)["group_epoch"] == 2


def test_static_member_rejoins_with_its_assignment(broker):
    b = broker
    topic = group = "kip848-static"
    create_topic(b.bootstrap, topic, partitions=2)
    m1 = str(uuid.uuid4())
    node = None
    for n in range(len(b.ports)):
        r = join(b, n, group, topic, member_id=m1, instance="i-1")
        if r["error"] != 16:
            node = n
            break
    assert r["error"] == 0
    first = sorted(sum((ps for _, ps in r["assignment"]), []))
    # the instance id is taken while its member is in the group
    r = join(b, node, group, topic, member_id=str(uuid.uuid4()), instance="i-1")
    assert r["error"] == ERR_UNRELEASED_INSTANCE_ID, r
    # a temporary leave (-2) releases it; the new member gets the same partitions at once
    r = heartbeat(b, node, group, member_id=m1, epoch=-2, instance="i-1")
    assert r["error"] == 0 and r["epoch"] == -2
    m2 = str(uuid.uuid4())
    r = join(b, node, group, topic, member_id=m2, instance="i-1")
    assert r["error"] == 0 and r["member_id"] == m2, r
    assert sorted(sum((ps for _, ps in r["assignment"]), [])) == first
    d = describe(b, node, group)
    assert [m["member_id"] for m in d["members"]] == [m2]


# -- real clients ---------------------------------------------------------------------------

def start(pool, lang, b, name, i, assignor="uniform", instance_id=None, protocol="consumer"):
    return pool.start(lang, b, name, name, assignor=assignor, instance_id=instance_id,
                      name="m%d" % i, extra_args=["--group-protocol", protocol])


def test_java_three_members_leave_crash_and_static_rejoin(broker, pool):
    name = "kip848-java3"
    b = broker.bootstrap
    create_topic(b, name)
    m = [start(pool, "java", b, name, i) for i in range(3)]
    wait_balanced(m, PARTITIONS, timeout=JOIN_TIMEOUT)
    assert sorted(len(c.assigned_partitions()) for c in m) == [2, 2, 2], split_state(m)
    produce(b, name, 0)
    wait_consumed(m, expected_records(BATCH, PARTITIONS))
    assert_exactly_once(m, expected_records(BATCH, PARTITIONS))

    # a clean leave (epoch -1): the other two take its partitions at its committed offsets
    wait_all_committed(m)
    m[2].stop()
    wait_balanced(m[:2], PARTITIONS, timeout=JOIN_TIMEOUT)
    produce(b, name, BATCH)
    wait_consumed(m, expected_records(2 * BATCH, PARTITIONS))
    assert_exactly_once(m, expected_records(2 * BATCH, PARTITIONS))

    # kill -9: the survivor gets everything once the session (6 s) expired
    wait_all_committed(m[:2])
    m[1].kill()
    produce(b, name, 2 * BATCH)
    m[0].wait_assigned(range(PARTITIONS), timeout=SESSION_MS / 1000 + JOIN_TIMEOUT)
    wait_consumed(m, expected_records(3 * BATCH, PARTITIONS))
    assert_exactly_once(m, expected_records(3 * BATCH, PARTITIONS))
    m[0].stop()
    assert_no_errors(m)


def test_java_static_members_and_kill9_of_the_broker(broker, pool):
    """Static members carry on over a broker kill -9 (their epochs and assignment are stored);
    records written after the restart are consumed exactly once."""
    name = "kip848-java-static"
    b = broker.bootstrap
    create_topic(b, name)
    m = [start(pool, "java", b, name, i, instance_id="inst-%d" % i) for i in range(2)]
    wait_balanced(m, PARTITIONS, timeout=JOIN_TIMEOUT)
    produce(b, name, 0)
    wait_consumed(m, expected_records(BATCH, PARTITIONS))
    wait_all_committed(m)
    split = {c.name: c.assigned_partitions() for c in m}
    broker.kill9()
    produce(b, name, BATCH)
    wait_consumed(m, expected_records(2 * BATCH, PARTITIONS), timeout=JOIN_TIMEOUT)
    assert_exactly_once(m, expected_records(2 * BATCH, PARTITIONS))
    assert {c.name: c.assigned_partitions() for c in m} == split
    for c in m:
        c.stop()
    assert_no_errors(m)


def test_librdkafka_two_members_exactly_once(broker, pool):
    name = "kip848-rdkafka"
    b = broker.bootstrap
    create_topic(b, name)
    m = [start(pool, "python", b, name, i) for i in range(2)]
    wait_balanced(m, PARTITIONS, timeout=JOIN_TIMEOUT)
    produce(b, name, 0)
    wait_consumed(m, expected_records(BATCH, PARTITIONS))
    assert_exactly_once(m, expected_records(BATCH, PARTITIONS))
    wait_all_committed(m)
    for c in m:
        c.stop()
    assert_no_errors(m)


def test_franz_go_three_members_join_and_one_leaves(broker, pool):
    """franz-go's KIP-848 consumer (kgo.ServerSideBalancer, v1.22+): three members split the
    partitions on a group the broker shows as a consumer group (franz-go stays on the classic
    protocol by itself when it finds no ConsumerGroupHeartbeat v1), and a clean leave (epoch -1)
    moves the leaver's partitions to the other two at its committed offsets."""
    name = "kip848-franz3"
    b = broker.bootstrap
    create_topic(b, name)
    m = [start(pool, "go", b, name, i) for i in range(3)]
    wait_balanced(m, PARTITIONS, timeout=JOIN_TIMEOUT)
    assert sorted(len(c.assigned_partitions()) for c in m) == [2, 2, 2], split_state(m)
    state = json.loads(kw_admin(broker, "/v1/groups/" + name))
    assert state["type"] == "consumer" and len(state["members"]) == 3, state
    assert all(x["member_epoch"] >= 1 for x in state["members"]), state
    produce(b, name, 0)
    wait_consumed(m, expected_records(BATCH, PARTITIONS))
    assert_exactly_once(m, expected_records(BATCH, PARTITIONS))

    wait_all_committed(m)
    moved = m[2].assigned_partitions()
    m[2].stop()
    wait_balanced(m[:2], PARTITIONS, timeout=JOIN_TIMEOUT)
    assert sorted(len(c.assigned_partitions()) for c in m[:2]) == [3, 3], split_state(m[:2])
    assert moved <= m[0].assigned_partitions() | m[1].assigned_partitions()
    state = json.loads(kw_admin(broker, "/v1/groups/" + name))
    assert (state["type"], len(state["members"])) == ("consumer", 2), state
    produce(b, name, BATCH)
    wait_consumed(m, expected_records(2 * BATCH, PARTITIONS))
    assert_exactly_once(m, expected_records(2 * BATCH, PARTITIONS))
    for c in m[:2]:
        c.stop()
    assert_no_errors(m)


def test_list_and_describe_groups_show_the_consumer_type(broker, pool):
    name = "kip848-list"
    b = broker.bootstrap
    create_topic(b, name)
    m = [start(pool, "java", b, name, 0)]
    wait_balanced(m, PARTITIONS, timeout=JOIN_TIMEOUT)
    state = json.loads(kw_admin(broker, "/v1/groups/" + name))
    assert state["type"] == "consumer" and state["members"][0]["member_epoch"] >= 1, state
    m[0].stop()


def kw_admin(broker, path):
    import urllib.request
    with urllib.request.urlopen(broker.admin_url + path, timeout=10) as r:
        return r.read().decode()


@pytest.mark.parametrize("protocol", ["classic", "consumer"])
def test_time_to_stable_assignment(broker, pool, protocol):
    """Not a timing assertion: prints how long 3 Java members take to split the partitions."""
    name = "kip848-time-%s" % protocol
    b = broker.bootstrap
    create_topic(b, name)
    t0 = time.monotonic()
    m = [start(pool, "java", b, name, i, assignor="range", protocol=protocol) for i in range(3)]
    wait_balanced(m, PARTITIONS, timeout=JOIN_TIMEOUT)
    print("\n3 Java members, %s protocol: balanced %.2f s after the first start" %
          (protocol, time.monotonic() - t0))
    for c in m:
        c.stop()


# -- the Java AdminClient ------------------------------------------------------------------

def admin(b, *args):
    r = run_client("java", list(args) + ["--bootstrap", b.bootstrap], timeout=90)
    assert r["ok"], r
    return r


def test_java_admin_describes_and_lists_consumer_groups_by_type(broker, pool):
    """describeConsumerGroups shows GroupType.CONSUMER, the member epochs and each member's
    assignment; listGroups and listConsumerGroups with a types filter keep consumer and classic
    groups apart."""
    name = "kip848-admin"
    classic = "kip848-admin-classic"
    b = broker.bootstrap
    create_topic(b, name)
    create_topic(b, classic, partitions=2)
    m = [start(pool, "java", b, name, i) for i in range(2)]
    c = [start(pool, "java", b, classic, 9, assignor="range", protocol="classic")]
    wait_balanced(m, PARTITIONS, timeout=JOIN_TIMEOUT)
    wait_balanced(c, 2, timeout=JOIN_TIMEOUT)
    d = admin(broker, "describe-groups", "--group", name)
    assert (d["type"], d["state"], d["assignor"]) == ("CONSUMER", "STABLE", "uniform"), d
    assert d["group_epoch"] >= 2 and d["target_assignment_epoch"] == d["group_epoch"], d
    assert len(d["members"]) == 2, d
    for mem in d["members"]:
        assert mem["member_epoch"] == d["group_epoch"], d
        assert mem["target_assignment"] == mem["assignment"], d
    # each member's assignment is what one of the consumers holds
    seen = sorted(sorted(int(tp.rsplit("-", 1)[1]) for tp in mem["assignment"]) for mem in d["members"])
    held = sorted(sorted(x.assigned_partitions()) for x in m)
    assert seen == held, (d, held)
    dc = admin(broker, "describe-groups", "--group", classic)
    assert (dc["type"], dc["state"]) == ("CLASSIC", "STABLE"), dc
    assert [mem["member_epoch"] for mem in dc["members"]] == [None], dc

    consumer_only = admin(broker, "list-groups", "--type", "consumer")["groups"]
    assert consumer_only.get(name) == {"type": "CONSUMER", "protocol": "consumer", "state": "STABLE"}, \
        consumer_only
    assert classic not in consumer_only, consumer_only
    classic_only = admin(broker, "list-groups", "--type", "classic")["groups"]
    assert classic_only.get(classic, {}).get("type") == "CLASSIC", classic_only
    assert name not in classic_only, classic_only
    every = admin(broker, "list-groups")["groups"]
    assert name in every and classic in every, every
    # the older listConsumerGroups (kafka-consumer-groups.sh --list --type) filters the same way
    consumer_only = admin(broker, "list-consumer-groups", "--type", "consumer")["groups"]
    assert consumer_only.get(name) == {"type": "CONSUMER", "simple": False, "state": "STABLE"}, consumer_only
    assert classic not in consumer_only, consumer_only
    classic_only = admin(broker, "list-consumer-groups", "--type", "classic")["groups"]
    assert classic_only.get(classic) == {"type": "CLASSIC", "simple": False, "state": "STABLE"}, classic_only
    assert name not in classic_only, classic_only
    every = admin(broker, "list-consumer-groups")["groups"]
    assert name in every and classic in every, every
    for x in m + c:
        x.stop()


# -- IAM --------------------------------------------------------------------------------------

def test_iam_group_and_topic_grants(tmp_path):
    """Over the IAM listener, a member whose principal may not use its group gets
    GROUP_AUTHORIZATION_FAILED, and one that may not describe a subscribed topic
    TOPIC_AUTHORIZATION_FAILED (KafkaApis.handleConsumerGroupHeartbeat's order); neither joins."""
    import iam
    from authz import CONFIG, CONNECT, allow, group_arn, refusal, topic_arn, user
    topics = allow(["kafka-cluster:DescribeTopic", "kafka-cluster:ReadData"], topic_arn("kip848-iam*"))
    groups = allow(["kafka-cluster:DescribeGroup", "kafka-cluster:AlterGroup"], group_arn("kip848-iam*"))
    nogroup = user("kip848-nogroup", 848, CONNECT, topics)
    notopic = user("kip848-notopic", 849, CONNECT, groups)
    ok = user("kip848-ok", 850, CONNECT, topics, groups)
    ids = iam.write_identities(tmp_path / "identities.json", identities=(nogroup, notopic, ok), roles=())
    b = iam.IamBroker(ids, credentials_endpoint=False,
                      config=dict(CONFIG, **{"profile": "provisioned", "kafka.version": "4.0",
                                             "iam.authorization.default": "deny"}))
    b.start()
    try:
        def hb(who, group, topic):
            with iam.SaslConn(b.sasl_plaintext_port) as c:
                c.login_oauthbearer(who)
                body = c.roundtrip(lambda corr, cid: _frame(API_CGH, 0, corr, (
                    kw.compact_string(group) + kw.compact_string(str(uuid.uuid4())) + kw.i32(0)
                    + kw.compact_nullable_string(None) + kw.compact_nullable_string(None)
                    + kw.i32(30000) + kw.compact_array([topic], kw.compact_string)
                    + kw.compact_nullable_string(None) + kw.compact_array([], None) + kw.tags())))
            r = kw.FlexReader(body, flex=True)
            r.skip_tags()
            r.i32()
            return r.i16(), r.compact_string()

        since = b.log_size()
        assert hb(nogroup, "kip848-iam-g", "kip848-iam-t")[0] == 30  # GROUP_AUTHORIZATION_FAILED
        refusal(b, since, "GROUP_AUTHORIZATION_FAILED(30)",
                re.escape("kafka-cluster:AlterGroup on %s: no statement allowed it"
                          % group_arn("kip848-iam-g")))
        since = b.log_size()
        assert hb(notopic, "kip848-iam-g", "kip848-iam-t")[0] == 29  # TOPIC_AUTHORIZATION_FAILED
        refusal(b, since, "TOPIC_AUTHORIZATION_FAILED(29)",
                re.escape("kafka-cluster:DescribeTopic on %s: no statement allowed it"
                          % topic_arn("kip848-iam-t")))
        # neither joined: the principal with both grants is the group's first member
        err, _ = hb(ok, "kip848-iam-g", "kip848-iam-t")
        assert err == 0, err
        state = json.loads(kw_admin(b, "/v1/groups/kip848-iam-g"))
        assert len(state["members"]) == 1, state
    finally:
        b.stop(check=True)
        b.cleanup()
