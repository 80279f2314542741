"""Consumer groups with kafkajs and franz-go: balance, exactly-once hand-over, resumed commits,
and the MSK Serverless refusal of kafkajs 2.2.1's JoinGroup (kafkajs #1449).

Members are `group-consume` processes of tests/clients/node (kafkajs, RoundRobinAssigner) and
tests/clients/go (franz-go, --assignor cooperative-sticky or range), driven through groups.py;
records are written by the Python client's `produce` (record i -> partition i % 6, offset
i // 6, key "key-<i>"), so every check compares exact partition and record sets.

  test_three_members_*            3 members split 6 partitions 2/2/2; 600 records consumed
                                  exactly once; one member leaves cleanly, the other two take
                                  its partitions (3/3) and read only what was not committed.
  test_commits_resume_*           a member stops after 250 of 600 records; a new member of the
                                  group reads exactly the other 350, then another exactly the
                                  next 60 produced.
  test_kafkajs_221_*              kafkajs 2.2.1 declares ConsumerProtocolSubscription v1 but
                                  sends the v0 body: the serverless profile answers JoinGroup with
                                  INVALID_REQUEST (42) and logs why; with
                                  group.consumer.protocol.validation=lenient it joins.
  test_kafkajs_224_*              kafkajs 2.2.4 (fixed) joins the serverless profile.

MSKMOCK_IT_EXTERNAL_BOOTSTRAP=host:port runs the client-behaviour tests against an already
running broker (an Apache Kafka, to check the tests themselves) instead of mskmock; the tests
that read mskmock's log or need its serverless strictness are skipped then.
"""

import os
import re
import subprocess
import uuid

import pytest

from groups import (
    ConsumerPool,
    assert_exactly_once,
    assert_no_errors,
    expected_records,
    split_state,
    wait_balanced,
    wait_consumed,
    wait_until,
)
from harness import Broker, run_client

EXTERNAL = os.environ.get("MSKMOCK_IT_EXTERNAL_BOOTSTRAP")
PARTITIONS = 6
SESSION_MS = 6000
GROUP_CONFIG = {"group.initial.rebalance.delay.ms": 0}

# (id, lang, assignor)
CLIENTS = [
    ("kafkajs-2.2.4", "node", None),
    ("franz-go-cooperative-sticky", "go", "cooperative-sticky"),
    ("franz-go-range", "go", "range"),
]


def only_mskmock():
    if EXTERNAL:
        pytest.skip("checks mskmock itself (MSKMOCK_IT_EXTERNAL_BOOTSTRAP is set)")


@pytest.fixture(scope="module")
def broker_config():
    return dict(GROUP_CONFIG)


@pytest.fixture(scope="module")
def bootstrap(request):
    if EXTERNAL:
        return EXTERNAL
    return request.getfixturevalue("broker").bootstrap


@pytest.fixture(scope="module")
def lenient_bootstrap():
    """A second broker that keeps consumer-protocol bytes opaque, as Apache Kafka does."""
    if EXTERNAL:
        yield EXTERNAL
        return
    b = Broker(config=dict(GROUP_CONFIG, **{"group.consumer.protocol.validation": "lenient"}))
    b.start()
    try:
        yield b.bootstrap
        b.assert_alive()
        b.stop(check=True)
    finally:
        b.cleanup()


@pytest.fixture
def pool():
    p = ConsumerPool()
    yield p
    p.cleanup()


def name9():
    """A topic name of exactly 9 characters, like the kafkajs #1449 capture's "testtopic":
    kafkajs 2.2.1's subscription for one such topic is 21 bytes long."""
    return "t" + uuid.uuid4().hex[:8]


def create_topic(bootstrap, topic):
    assert run_client("python", ["create-topic", "--bootstrap", bootstrap, "--topic", topic,
                                 "--partitions", PARTITIONS], timeout=60) == {"created": topic}


def produce(bootstrap, topic, count, start=0):
    """Records start..start+count-1 (record i -> partition i % 6, offset i // 6)."""
    assert run_client("python", ["produce", "--bootstrap", bootstrap, "--topic", topic,
                                 "--count", count, "--partitions", PARTITIONS,
                                 "--compression", "none", "--start", start],
                      timeout=120) == {"produced": count}


def start_member(pool, client, bootstrap, group, topic, index, **kw):
    cid, lang, assignor = client
    return pool.start(lang, bootstrap, group, topic, assignor=assignor,
                      session_timeout_ms=SESSION_MS, name="%s#%d" % (cid, index), **kw)


def run_to_max(consumer, count, timeout=60):
    """Waits for a --max-records member to read its `count` records and close by itself.
    (groups.wait_exit closes stdin, which would stop it early, so wait for the records first.)"""
    consumer.wait_records(count, timeout=timeout)
    consumer.wait_exit(timeout=timeout)


def events_of(consumer, kind):
    return [ev for _, ev in list(consumer.events) if ev["event"] == kind]


def committed_union(consumers):
    """{partition: highest next offset committed by any of the consumers}."""
    out = {}
    for c in consumers:
        for p, o in c.committed().items():
            out[p] = max(o, out.get(p, -1))
    return out


def wait_committed_all(consumers, next_offset, timeout=60):
    """Waits until every partition's committed offset (by any consumer) reached next_offset."""
    want = {p: next_offset for p in range(PARTITIONS)}
    wait_until(lambda: all(committed_union(consumers).get(p, -1) >= o for p, o in want.items()),
               timeout, "commits %s (have %s)" % (want, committed_union(consumers)), consumers)
    assert committed_union(consumers) == want, "committed past the end of the partitions"


def assert_records_within_assignment(consumers):
    """Every record a consumer read belongs to a partition it had been assigned at some point."""
    for c in consumers:
        ever = set()
        for _, parts, _ in c.assignments():
            ever |= parts
        stray = sorted({p for p, _, _ in c.records()} - ever)
        assert not stray, "%s read partitions %s it was never assigned\n%s" % (c.name, stray,
                                                                                 c.describe())


def assert_prefixes(records, start=None):
    """The records of every partition are consecutive offsets, from start[p] (default 0)."""
    by_p = {}
    for p, o, _ in records:
        by_p.setdefault(p, []).append(o)
    for p, offs in by_p.items():
        first = (start or {}).get(p, 0)
        assert offs == list(range(first, first + len(offs))), \
            "partition %d: offsets %s, expected consecutive from %d" % (p, offs[:20], first)


# -- balance, exactly once, hand-over on a clean leave -----------------------------------

@pytest.mark.parametrize("client", CLIENTS, ids=[c[0] for c in CLIENTS])
def test_three_members_split_consume_exactly_once_and_hand_over(request, bootstrap, pool, client):
    topic, group = name9(), "g-three-" + uuid.uuid4().hex[:8]
    create_topic(bootstrap, topic)
    members = [start_member(pool, client, bootstrap, group, topic, i) for i in range(3)]

    split = wait_balanced(members, PARTITIONS, timeout=60)
    assert sorted(len(s) for s in split.values()) == [2, 2, 2], split_state(members)
    changes = [len(m.assignments()) for m in members]

    first = expected_records(600, PARTITIONS)
    produce(bootstrap, topic, 600)
    wait_consumed(members, first, timeout=60)
    wait_committed_all(members, 100)
    assert_exactly_once(members, first)
    for m in members:  # each read exactly its partitions, from offset 0
        mine = {po: k for po, k in first.items() if po[0] in m.assigned_partitions()}
        assert {(p, o): k for p, o, k in m.records()} == mine, m.describe()
        assert_prefixes(m.records())
    assert [len(m.assignments()) for m in members] == changes, \
        "assignment changed while nobody joined or left: %s" % split_state(members)
    assert_no_errors(members)

    # One member leaves cleanly; the other two take over its partitions at the committed offsets.
    leaver, rest = members[0], members[1:]
    leaver.stop()
    wait_balanced(rest, PARTITIONS, timeout=60)
    assert sorted(len(m.assigned_partitions()) for m in rest) == [3, 3], split_state(rest)

    produce(bootstrap, topic, 600, start=600)
    every = expected_records(1200, PARTITIONS)
    second = {po: k for po, k in every.items() if po not in first}
    wait_consumed(rest, second, timeout=60)
    wait_committed_all(rest, 200)
    # Over all three: nothing read twice (the two did not re-read what the leaver committed).
    assert_exactly_once(members, every)
    for m in rest:
        got = {(p, o): k for p, o, k in m.records() if (p, o) in second}
        mine = {po: k for po, k in second.items() if po[0] in m.assigned_partitions()}
        assert got == mine, m.describe()
    assert_records_within_assignment(members)
    assert_no_errors(members)
    for m in rest:
        m.terminate()  # SIGTERM is a clean close too
    if not EXTERNAL:
        request.getfixturevalue("broker").assert_alive()


# -- committed offsets survive the member ------------------------------------------------

@pytest.mark.parametrize("client", CLIENTS, ids=[c[0] for c in CLIENTS])
def test_commits_resume_after_member_restart(request, bootstrap, pool, client):
    topic, group = name9(), "g-resume-" + uuid.uuid4().hex[:8]
    create_topic(bootstrap, topic)
    produce(bootstrap, topic, 600)
    every = expected_records(600, PARTITIONS)

    one = start_member(pool, client, bootstrap, group, topic, 1, max_records=250)
    run_to_max(one, 250)
    got1 = one.records()
    assert len(got1) == 250, one.describe()
    assert_prefixes(got1)
    last = {}
    for p, o, _ in got1:
        last[p] = max(o + 1, last.get(p, 0))
    assert one.committed() == last, \
        "committed %s, but the records read end at %s" % (one.committed(), last)

    two = start_member(pool, client, bootstrap, group, topic, 2, max_records=350)
    run_to_max(two, 350)
    assert len(two.records()) == 350, two.describe()
    assert_prefixes(two.records(), start=last)  # each partition resumes at its commit
    assert_exactly_once([one, two], every)
    assert committed_union([one, two]) == {p: 100 for p in range(PARTITIONS)}, two.describe()

    produce(bootstrap, topic, 60, start=600)
    three = start_member(pool, client, bootstrap, group, topic, 3, max_records=60)
    run_to_max(three, 60)
    assert_exactly_once([one, two, three], expected_records(660, PARTITIONS))
    assert_no_errors([one, two, three])
    if not EXTERNAL:
        request.getfixturevalue("broker").assert_alive()


# -- kafkajs #1449: v1 declared, v0 sent ---------------------------------------------------

def consume_all(pool, bootstrap, kafkajs_version, count=60):
    """One kafkajs member reads `count` records of a new topic and stops: it joined."""
    topic, group = name9(), "g-kafkajs-%s-%s" % (kafkajs_version, uuid.uuid4().hex[:8])
    create_topic(bootstrap, topic)
    produce(bootstrap, topic, count)
    c = pool.start("node", bootstrap, group, topic, session_timeout_ms=SESSION_MS,
                   max_records=count, name="kafkajs-" + kafkajs_version,
                   extra_args=["--kafkajs", kafkajs_version])
    run_to_max(c, count)
    assert c.assignments() and c.assignments()[0][1] == frozenset(range(PARTITIONS)), c.describe()
    assert_exactly_once([c], expected_records(count, PARTITIONS))
    assert c.committed() == {p: count // PARTITIONS for p in range(PARTITIONS)}, c.describe()
    assert_no_errors([c])


def test_kafkajs_221_join_refused_by_serverless_profile(request, pool):
    only_mskmock()
    broker = request.getfixturevalue("broker")
    topic, group = name9(), "g-kafkajs-221-" + uuid.uuid4().hex[:8]
    create_topic(broker.bootstrap, topic)
    since = broker.log_size()
    c = pool.start("node", broker.bootstrap, group, topic, session_timeout_ms=SESSION_MS,
                   name="kafkajs-2.2.1", extra_args=["--kafkajs", "2.2.1"])
    c.expect_exit = True  # it crashes: INVALID_REQUEST is not retriable in kafkajs
    wait_until(lambda: events_of(c, "error"), 60, "kafkajs 2.2.1's join error", [c])
    err = events_of(c, "error")[0]
    assert err.get("code") == 42 and err.get("type") == "INVALID_REQUEST", c.describe()
    assert err.get("restart") is False, c.describe()
    try:
        rc = c.proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail("kafkajs 2.2.1 did not exit after its crash\n" + c.describe())
    assert rc == 1 and not c.closed(), "a crashed consumer exits 1\n" + c.describe()
    assert not c.assignments(), "it must never get an assignment\n" + c.describe()

    line = broker.wait_for_log(r"INVALID_REQUEST.*group %s\b" % re.escape(group), since=since)
    assert line, "no refusal logged for group %s\n%s" % (group, broker.log_tail())
    for part in ("protocol RoundRobinAssigner", "declares v1", "byte 21", "owned_partitions",
                 "client=mskmock-test-kafkajs"):
        assert part in line, "%r missing from the log line %r" % (part, line)
    broker.assert_alive()


def test_kafkajs_221_joins_with_lenient_validation(lenient_bootstrap, pool):
    consume_all(pool, lenient_bootstrap, "2.2.1")


def test_kafkajs_224_joins_serverless_profile(bootstrap, pool):
    consume_all(pool, bootstrap, "2.2.4")
