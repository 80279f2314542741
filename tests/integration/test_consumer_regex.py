"""
KIP-848 subscriptions by regular expression (ConsumerGroupHeartbeat v1's SubscribedTopicRegex),
as Kafka 4.x's coordinator serves them: the whole topic name must match (RE2/J's matches(); here
PCRE2 without its backtracking constructs), internal topics match like any other, topics
created or deleted later are picked up or dropped at a following heartbeat, and a pattern that
is not a valid regular expression, or uses a construct RE2 does not have, gets
INVALID_REGULAR_EXPRESSION with a log line and changes nothing. Raw requests, then librdkafka's
consumer protocol and the Java consumer's subscribe(SubscriptionPattern).
"""
import time
import uuid

import pytest
from confluent_kafka import Consumer
from confluent_kafka.admin import AdminClient

import kafka_wire as kw
from groups import assert_no_errors, wait_until
from test_consumer_protocol import (JOIN_TIMEOUT, PARTITIONS, _call, broker_config,  # noqa: F401
                                    create_topic, describe, heartbeat, owned_of, pool, produce)

ERR_INVALID_REGULAR_EXPRESSION = 128


def delete_topic(b, name):
    admin = AdminClient({"bootstrap.servers": b.bootstrap})
    admin.delete_topics([name])[name].result(timeout=30)


def join_regex(b, group, regex, mid=None):
    """Joins on whichever node coordinates the group; returns (node, member id, response)."""
    mid = mid or str(uuid.uuid4())
    for n in range(len(b.ports)):
        r = heartbeat(b, n, group, member_id=mid, regex=regex, owned=[], version=1)
        if r["error"] != 16:
            return n, mid, r
    raise AssertionError("no coordinator for %s" % group)


def assigned_topics(b, node, group, mid):
    """The member's assignment by topic name (ConsumerGroupDescribe), {topic: [partitions]}."""
    for m in describe(b, node, group)["members"]:
        if m["member_id"] == mid:
            return {name: sorted(ps) for _, name, ps in m["assignment"]}
    raise AssertionError("member %s not in %s" % (mid, group))


def settle(b, node, group, mid, epoch, owned, want, timeout=15):
    """Heartbeats (acknowledging each assignment) until the member owns exactly `want`."""
    deadline = time.time() + timeout
    while True:
        r = heartbeat(b, node, group, member_id=mid, epoch=epoch, owned=owned, version=1)
        assert r["error"] == 0, r
        epoch = r["epoch"]
        if r["assignment"] is not None:
            owned = owned_of(r["assignment"])
        got = assigned_topics(b, node, group, mid)
        if got == want:
            return epoch, owned
        assert time.time() < deadline, (got, want)
        time.sleep(0.2)


def test_regex_subscription_follows_topic_creation_and_deletion(broker):
    b = broker
    group = "kip848-rx-follow"
    create_topic(b.bootstrap, "kip848-rx-a", 2)
    create_topic(b.bootstrap, "kip848-rx-b", 3)
    create_topic(b.bootstrap, "other-kip848-rx-c", 2)  # does not match as a whole name
    node, mid, r = join_regex(b, group, "kip848-rx-.*")
    assert r["error"] == 0, r
    b.wait_for_log(r"regular expression `kip848-rx-\.\*` now matches 2 topics")
    want = {"kip848-rx-a": [0, 1], "kip848-rx-b": [0, 1, 2]}
    epoch, owned = settle(b, node, group, mid, r["epoch"], owned_of(r["assignment"]), want)
    d = describe(b, node, group)
    assert d["members"][0]["regex"] == "kip848-rx-.*" and d["members"][0]["topics"] == [], d
    before = d["group_epoch"]

    # a topic created later that matches: the assignment grows at a following heartbeat
    create_topic(b.bootstrap, "kip848-rx-new", 1)
    want["kip848-rx-new"] = [0]
    epoch, owned = settle(b, node, group, mid, epoch, owned, want)
    assert describe(b, node, group)["group_epoch"] > before
    # one that does not match changes nothing
    before = describe(b, node, group)["group_epoch"]
    create_topic(b.bootstrap, "kip848-other", 1)
    epoch, owned = settle(b, node, group, mid, epoch, owned, want)
    assert describe(b, node, group)["group_epoch"] == before

    # a deleted one drops out
    delete_topic(b, "kip848-rx-a")
    del want["kip848-rx-a"]
    epoch, owned = settle(b, node, group, mid, epoch, owned, want)

    # a match-all regex takes every topic, internal ones too (Kafka filters only by DESCRIBE)
    r = heartbeat(b, node, group, member_id=mid, epoch=epoch, regex=".*", owned=owned, version=1)
    assert r["error"] == 0, r
    got = {}
    for _ in range(30):
        got = assigned_topics(b, node, group, mid)
        if "other-kip848-rx-c" in got:
            break
        r = heartbeat(b, node, group, member_id=mid, epoch=r["epoch"], owned=owned_of(r["assignment"])
                      if r["assignment"] is not None else owned, version=1)
        owned = owned_of(r["assignment"]) if r["assignment"] is not None else owned
        time.sleep(0.2)
    assert "other-kip848-rx-c" in got and "kip848-other" in got, got
    assert got.get("__consumer_offsets") == list(range(50)), got
    r = heartbeat(b, node, group, member_id=mid, epoch=-1, version=1)
    assert r["error"] == 0


def test_regex_matches_internal_topics_as_kafka_does(broker):
    """Regression: internal topics were left out of every regex's topics, where Kafka's
    GroupMetadataManager.refreshRegularExpressions matches every topic of its metadata image and
    filters only by DESCRIBE: a pattern naming __consumer_offsets gets its partitions (franz-go's
    Test848RegexBrokerResolves, run against apache/kafka:latest, waits for that)."""
    b = broker
    group = "kip848-rx-internal"
    node, mid, r = join_regex(b, group, "__consumer_offsets")
    assert r["error"] == 0, r
    b.wait_for_log(r"regular expression `__consumer_offsets` now matches 1 topics")
    settle(b, node, group, mid, r["epoch"], owned_of(r["assignment"]), {"__consumer_offsets": list(range(50))})
    r = heartbeat(b, node, group, member_id=mid, epoch=-1, version=1)
    assert r["error"] == 0


def test_a_new_topic_reaches_every_member_with_the_regex(broker):
    """One member's heartbeat after a topic creation moves the other's subscription too."""
    b = broker
    group = "kip848-rx-two"
    create_topic(b.bootstrap, "kip848-rx2-a", 2)
    node, ma, ra = join_regex(b, group, "kip848-rx2-.*")
    _, mb, rb = join_regex(b, group, "kip848-rx2-.*")
    assert ra["error"] == 0 and rb["error"] == 0, (ra, rb)
    epoch = describe(b, node, group)["group_epoch"]
    create_topic(b.bootstrap, "kip848-rx2-b", 4)
    r = heartbeat(b, node, group, member_id=ma, epoch=ra["epoch"], version=1)
    assert r["error"] == 0, r
    d = describe(b, node, group)
    assert d["group_epoch"] == epoch + 1, d
    targets = {m["member_id"]: {(name, p) for _, name, ps in m["target"] for p in ps} for m in d["members"]}
    assert targets[ma] | targets[mb] == {("kip848-rx2-a", 0), ("kip848-rx2-a", 1)} | \
        {("kip848-rx2-b", p) for p in range(4)}, targets
    assert len(targets[ma]) == len(targets[mb]) == 3, targets


def test_bad_regular_expressions_are_refused_without_state_change(broker):
    b = broker
    group = "kip848-rx-bad"
    create_topic(b.bootstrap, "kip848-rxbad", 1)
    node, mid, r = join_regex(b, group, "kip848-rxbad")
    assert r["error"] == 0, r
    before = describe(b, node, group)
    cases = [("(", "missing closing parenthesis"),
             ("a(?=b)", "lookaround"),
             ("(a)\\1", "backreferences are not supported"),
             ("(?>a+)b", "atomic groups"),
             ("x" * 2000, "longer than 1024 bytes")]
    for regex, why in cases:
        for joining in (True, False):
            since = b.log_size()
            if joining:
                r = heartbeat(b, node, group, member_id=str(uuid.uuid4()), regex=regex, owned=[], version=1)
            else:
                r = heartbeat(b, node, group, member_id=mid, epoch=r_epoch(before, mid), regex=regex, version=1)
            assert r["error"] == ERR_INVALID_REGULAR_EXPRESSION, (regex, r)
            assert "is not a valid regular expression" in r["message"] and why in r["message"], r
            b.wait_for_log("INVALID_REGULAR_EXPRESSION.*not a valid regular expression", since=since)
            after = describe(b, node, group)
            assert (after["group_epoch"], after["members"]) == (before["group_epoch"], before["members"]), regex


def r_epoch(d, mid):
    return [m["epoch"] for m in d["members"] if m["member_id"] == mid][0]


def test_pathological_regex_answers(broker):
    b = broker
    group = "kip848-rx-patho"
    name = "a" * 200 + "b"
    create_topic(b.bootstrap, name, 1)
    # exponential for a backtracking matcher against that name; linear without backtracking
    node, mid, r = join_regex(b, group, "(a+)+$")
    assert r["error"] == 0, r
    r = heartbeat(b, node, group, member_id=mid, epoch=r["epoch"], regex="(a|aa)+(a+)+c", owned=[], version=1)
    assert r["error"] == 0, r
    assert assigned_topics(b, node, group, mid) == {}
    r = heartbeat(b, node, group, member_id=mid, epoch=r["epoch"], regex="(a+)+b", owned=[], version=1)
    assert r["error"] == 0, r
    settle(b, node, group, mid, r["epoch"], [], {name: [0]})


def test_regex_survives_a_restart(broker):
    b = broker
    group = "kip848-rx-restart"
    create_topic(b.bootstrap, "kip848-rxr-1", 2)
    node, mid, r = join_regex(b, group, "kip848-rxr-[0-9]+")
    assert r["error"] == 0, r
    epoch, owned = settle(b, node, group, mid, r["epoch"], owned_of(r["assignment"]), {"kip848-rxr-1": [0, 1]})
    before = describe(b, node, group)
    b.restart()
    after = describe(b, node, group)
    assert after["members"][0]["regex"] == "kip848-rxr-[0-9]+"
    # the first heartbeat resolves the regex again: the same topics, so no new epoch
    r = heartbeat(b, node, group, member_id=mid, epoch=epoch, owned=owned, version=1)
    assert r["error"] == 0 and r["epoch"] == epoch, r
    assert describe(b, node, group)["group_epoch"] == before["group_epoch"]
    create_topic(b.bootstrap, "kip848-rxr-2", 1)
    settle(b, node, group, mid, epoch, owned, {"kip848-rxr-1": [0, 1], "kip848-rxr-2": [0]})


def test_librdkafka_subscribes_by_regex(broker):
    b = broker
    for t in ("kip848-regex-x", "kip848-regex-y"):
        create_topic(b.bootstrap, t, 2)
    c = Consumer({"bootstrap.servers": b.bootstrap, "group.id": "kip848-rx-librdkafka",
                  "group.protocol": "consumer", "auto.offset.reset": "earliest"})
    try:
        c.subscribe(["^kip848-regex-.*"])
        deadline = time.time() + 60
        got = set()
        while time.time() < deadline:
            c.poll(0.5)
            got = {(tp.topic, tp.partition) for tp in c.assignment()}
            if len(got) == 4:
                break
        assert got == {(t, p) for t in ("kip848-regex-x", "kip848-regex-y") for p in (0, 1)}, got
        b.wait_for_log(r"regular expression `\^?kip848-regex-\.\*` now matches 2 topics")
    finally:
        c.close()


# -- the Java consumer's subscribe(SubscriptionPattern) (kafka-clients 4.x, KIP-848) -----------

def java_pattern(pool, b, group, pattern, name):
    """A Java group-consume member subscribed with SubscriptionPattern(pattern), no commits."""
    return pool.start("java", b.bootstrap, group, None, assignor="uniform", commit="none", name=name,
                      extra_args=["--group-protocol", "consumer", "--pattern", pattern])


def topics_of(c):
    """The member's current assignment, {topic: [partitions]} (its last assigned event)."""
    evs = [ev for _, ev in c.events if ev["event"] == "assigned"]
    return {t: sorted(ps) for t, ps in evs[-1]["topics"].items()} if evs else None


def records_of(c, topic):
    return sorted((ev["p"], ev["o"]) for _, ev in c.events
                  if ev["event"] == "record" and ev.get("t") == topic)


def test_java_subscription_pattern_gets_matching_and_new_topics(broker, pool):
    """subscribe(SubscriptionPattern): the broker resolves the RE2/J pattern, the whole name must
    match, a topic created afterwards is assigned and consumed, and a second member with the same
    pattern takes its share."""
    b = broker
    group = "kip848-jrx-group"
    create_topic(b.bootstrap, "kip848-jrx-a", 2)
    create_topic(b.bootstrap, "kip848-jrx-b", 3)
    create_topic(b.bootstrap, "x-kip848-jrx-c", 1)  # contains a match but is not one as a whole
    m1 = java_pattern(pool, b, group, "kip848-jrx-[a-z]+", "jrx-1")
    want = {"kip848-jrx-a": [0, 1], "kip848-jrx-b": [0, 1, 2]}
    m1.wait_for(lambda: topics_of(m1) == want, JOIN_TIMEOUT, "assignment %s" % want)
    b.wait_for_log(r"regular expression `kip848-jrx-\[a-z\]\+` now matches 2 topics")

    # a topic created after the subscription: assigned at a following heartbeat, and consumed
    create_topic(b.bootstrap, "kip848-jrx-new", 2)
    create_topic(b.bootstrap, "kip848-jrx-9", 1)  # does not match
    want["kip848-jrx-new"] = [0, 1]
    m1.wait_for(lambda: topics_of(m1) == want, JOIN_TIMEOUT, "assignment %s" % want)
    produce(b.bootstrap, "kip848-jrx-new", 0, count=20, partitions=2)
    m1.wait_for(lambda: len(records_of(m1, "kip848-jrx-new")) >= 20, JOIN_TIMEOUT, "20 records")
    assert records_of(m1, "kip848-jrx-new") == [(p, o) for p in (0, 1) for o in range(10)]

    # a second member with the same pattern: the 7 partitions split between the two, once each
    m2 = java_pattern(pool, b, group, "kip848-jrx-[a-z]+", "jrx-2")

    def split():
        a, c = topics_of(m1) or {}, topics_of(m2) or {}
        tps = [(t, p) for side in (a, c) for t, ps in side.items() for p in ps]
        return sorted(tps) == sorted((t, p) for t, ps in want.items() for p in ps) \
            and {len(x) for x in ([1 for ps in a.values() for _ in ps],
                                  [1 for ps in c.values() for _ in ps])} <= {3, 4}
    wait_until(split, JOIN_TIMEOUT, "7 partitions split 3/4 between the members", [m1, m2],
               detail=lambda: (topics_of(m1), topics_of(m2)))
    for c in (m2, m1):
        c.stop()
    assert_no_errors([m1, m2])


@pytest.mark.parametrize("pattern,why", [("kip848-jrx-(", "missing closing parenthesis"),
                                         ("kip848-(?=jrx).*", "lookaround")],
                         ids=["unbalanced", "lookahead"])
def test_java_invalid_subscription_pattern_is_the_clients_error(broker, pool, pattern, why):
    """The Java client sends the pattern as it is (a lookahead is fine for java.util.regex but
    not RE2/J); the broker's INVALID_REGULAR_EXPRESSION reaches the application as
    InvalidRegularExpression from poll(), and the member never joins."""
    b = broker
    group = "kip848-jrx-bad-%s" % why.split()[0]
    since = b.log_size()
    c = java_pattern(pool, b, group, pattern, "jrx-bad")
    rc = c.wait_exit(timeout=JOIN_TIMEOUT, check=False)
    errors = c.errors()
    assert rc == 1 and any("InvalidRegularExpression" in e and why in e for e in errors), \
        (rc, c.describe())
    b.wait_for_log("INVALID_REGULAR_EXPRESSION.*not a valid regular expression", since=since)
    for n in range(len(b.ports)):
        d = describe(b, n, group)
        assert d["error"] in (16, 69) or d["members"] == [], d  # NOT_COORDINATOR, GROUP_ID_NOT_FOUND


def metadata_v12(b, topics):
    """Metadata v12 for [(topic id bytes, name or None)]: {(id, name): (error, partition count)}."""
    body = kw.compact_array(topics, lambda t: t[0] + kw.compact_nullable_string(t[1]) + kw.tags())
    body += kw.boolean(False) + kw.boolean(False) + kw.tags()
    r = _call(b, 3, 12, body)
    r.i32()

    def broker(x):
        x.i32(), x.compact_string(), x.i32(), x.compact_string()
        x.skip_tags()
    r.compact_array(broker)
    r.compact_string(), r.i32()

    def partition(x):
        x.i16(), x.i32(), x.i32(), x.i32()
        for _ in range(3):
            x.compact_array(lambda y: y.i32())
        x.skip_tags()

    def topic(x):
        err, name, tid, _ = x.i16(), x.compact_string(), x.take(16), x.i8()
        n = len(x.compact_array(partition))
        x.i32()
        x.skip_tags()
        return (tid, name), (err, n)
    return dict(r.compact_array(topic))


def test_metadata_by_topic_id_with_an_empty_name(broker):
    """Regression: a Metadata request naming a topic by id leaves the name at the Java client's
    default "" (MetadataRequest.Builder.forTopicIds, which a consumer subscribed with a
    SubscriptionPattern sends for its assignment); mskmock looked the topic up by that empty
    name (INVALID_TOPIC_EXCEPTION) where Kafka uses the id whenever one is given."""
    b = broker
    create_topic(b.bootstrap, "kip848-md-byid", 3)
    ((tid, name), (err, n)), = metadata_v12(b, [(bytes(16), "kip848-md-byid")]).items()
    assert (name, err, n) == ("kip848-md-byid", 0, 3) and tid != bytes(16)
    for asked in ("", None):
        assert metadata_v12(b, [(tid, asked)]) == {(tid, "kip848-md-byid"): (0, 3)}, asked
    unknown = uuid.uuid4().bytes
    assert metadata_v12(b, [(unknown, "")]) == {(unknown, None): (100, 0)}  # UNKNOWN_TOPIC_ID
