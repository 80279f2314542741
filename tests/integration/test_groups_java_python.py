"""Consumer groups with the Java client (kafka-clients) and confluent-kafka (librdkafka).

Every member is a `group-consume` process (see groups.py for the event contract); data is
written with the Python client's `produce`. One broker serves the module, with
group.initial.rebalance.delay.ms=0 so a new group forms at once. Each test uses its own topic
and group. Checks are exact: which partitions each member owns, which records (partition,
offset, key) each member consumed, and which offsets it committed.
"""

import time

import pytest

from groups import (ConsumerPool, assert_exactly_once, assert_no_errors,
                    assert_no_new_assignment, assert_records_owned, expected_records,
                    split_state, wait_all_committed, wait_balanced, wait_consumed)
from harness import run_client

PARTITIONS = 6
BATCH = 600            # records per produce batch: 100 per partition
SESSION_MS = 6000      # dynamic members
STATIC_SESSION_MS = 10000
JOIN_TIMEOUT = 60      # upper bound for a group to form or settle (JVM start-up included)


@pytest.fixture(scope="module")
def broker_config():
    return {"group.initial.rebalance.delay.ms": 0}


@pytest.fixture
def pool():
    p = ConsumerPool()
    yield p
    p.cleanup()


def create_topic(bootstrap, topic, partitions=PARTITIONS):
    assert run_client("python", ["create-topic", "--bootstrap", bootstrap, "--topic", topic,
                                 "--partitions", partitions], timeout=60) == {"created": topic}


def produce(bootstrap, topic, start, count=BATCH, partitions=PARTITIONS):
    """Writes records start..start+count-1 (record i: partition i % P, offset i // P)."""
    assert run_client("python", ["produce", "--bootstrap", bootstrap, "--topic", topic,
                                 "--count", count, "--partitions", partitions,
                                 "--compression", "none", "--start", start],
                      timeout=120) == {"produced": count}


def partitions_of(records):
    return {p for p, _, _ in records}


# -- 1. three members share the partitions; leave and crash are covered --------------------

@pytest.mark.parametrize("lang,assignor", [
    ("java", "range"),
    ("java", "cooperative-sticky"),
    ("python", "range"),
], ids=["java-range", "java-cooperative-sticky", "python-range"])
def test_three_members_leave_and_crash(broker, pool, lang, assignor):
    name = "g3-%s-%s" % (lang, assignor)
    b = broker.bootstrap
    create_topic(b, name)

    def member(i):
        return pool.start(lang, b, name, name, assignor=assignor,
                          session_timeout_ms=SESSION_MS, name="m%d" % i)

    m = [member(i) for i in range(3)]
    split = wait_balanced(m, PARTITIONS, timeout=JOIN_TIMEOUT)
    assert sorted(len(s) for s in split.values()) == [2, 2, 2], split_state(m)

    # Every record once, each by the member that owns its partition.
    produce(b, name, 0)
    wait_consumed(m, expected_records(BATCH, PARTITIONS))
    assert_exactly_once(m, expected_records(BATCH, PARTITIONS))
    for c in m:
        assert partitions_of(c.records()) == c.assigned_partitions(), split_state(m)

    # A clean leave: the other two take over its partitions at its committed offsets.
    wait_all_committed(m)
    m[2].stop()
    wait_balanced(m[:2], PARTITIONS, timeout=JOIN_TIMEOUT)
    assert sorted(len(c.assigned_partitions()) for c in m[:2]) == [3, 3], split_state(m)
    produce(b, name, BATCH)
    wait_consumed(m, expected_records(2 * BATCH, PARTITIONS))
    assert_exactly_once(m, expected_records(2 * BATCH, PARTITIONS))

    # kill -9: the last member gets everything once the session timed out. Records written
    # right after the crash wait in the dead member's partitions until then; none is lost.
    wait_all_committed(m[:2])
    m[1].kill()
    killed = time.monotonic()
    produce(b, name, 2 * BATCH)
    m[0].wait_assigned(range(PARTITIONS), timeout=SESSION_MS / 1000 + JOIN_TIMEOUT)
    took = m[0].assignments()[-1][0] - killed
    assert took >= SESSION_MS / 1000 - 1.5, \
        "the survivor got the dead member's partitions %.1f s after kill -9, before the " \
        "%d ms session timeout could expire" % (took, SESSION_MS)
    wait_consumed(m, expected_records(3 * BATCH, PARTITIONS))
    assert_exactly_once(m, expected_records(3 * BATCH, PARTITIONS))
    assert_records_owned(m)

    m[0].stop()
    assert_no_errors(m)


# -- 2. committed offsets are where a new member resumes ------------------------------------

def check_prefix_committed(c):
    """A member that stopped after --max-records committed exactly what it consumed: in
    every partition offsets 0..next-1 in order, and next committed."""
    committed = c.committed()
    for p in range(PARTITIONS):
        offs = [o for q, o, _ in c.records() if q == p]
        nxt = committed.get(p, 0)
        assert offs == list(range(nxt)), \
            "%s partition %d: consumed offsets %s... but committed %d" % (c.name, p, offs[:5], nxt)
    return committed


def check_resumed_at(c, committed):
    """`c` started in every partition at the committed offset (no gap, nothing re-read)."""
    for p in range(PARTITIONS):
        offs = [o for q, o, _ in c.records() if q == p]
        if offs:
            assert offs[0] == committed.get(p, 0), \
                "%s partition %d: first offset %d, committed was %d" % (
                    c.name, p, offs[0], committed.get(p, 0))
            assert offs == list(range(offs[0], offs[0] + len(offs))), \
                "%s partition %d: offsets not consecutive" % (c.name, p)


@pytest.mark.parametrize("lang", ["java", "python"])
def test_commits_resume(broker, pool, lang):
    name = "resume-%s" % lang
    b = broker.bootstrap
    create_topic(b, name)
    produce(b, name, 0)
    expected = expected_records(BATCH, PARTITIONS)

    first = pool.start(lang, b, name, name, session_timeout_ms=SESSION_MS, max_records=250,
                       name="first")
    first.wait_exit()
    assert len(first.records()) == 250
    committed = check_prefix_committed(first)

    second = pool.start(lang, b, name, name, session_timeout_ms=SESSION_MS, name="second")
    wait_consumed([first, second], expected)
    second.stop()
    check_resumed_at(second, committed)
    assert_exactly_once([first, second], expected)
    assert_no_errors([first, second])


@pytest.mark.parametrize("lang", ["java", "python"])
def test_commits_resume_across_broker_restart(broker, pool, lang):
    """Commits survive a restart between two members, and a member that stays up across a
    second restart goes on from where it was."""
    name = "resume-restart-%s" % lang
    b = broker.bootstrap
    create_topic(b, name)
    produce(b, name, 0)

    first = pool.start(lang, b, name, name, session_timeout_ms=SESSION_MS, max_records=250,
                       name="first")
    first.wait_exit()
    assert len(first.records()) == 250
    committed = check_prefix_committed(first)

    broker.restart()

    second = pool.start(lang, b, name, name, session_timeout_ms=SESSION_MS, name="second")
    wait_consumed([first, second], expected_records(BATCH, PARTITIONS))
    check_resumed_at(second, committed)
    assert_exactly_once([first, second], expected_records(BATCH, PARTITIONS))

    wait_all_committed([second])
    broker.restart()
    produce(b, name, BATCH)
    wait_consumed([first, second], expected_records(2 * BATCH, PARTITIONS), timeout=90)
    second.stop()
    assert_exactly_once([first, second], expected_records(2 * BATCH, PARTITIONS))
    assert_records_owned([first, second])


# -- 3. static membership: a quick restart is not a rebalance -------------------------------

@pytest.mark.parametrize("victim_id", ["s0", "s1"], ids=["leader", "follower"])
def test_static_member_restart_keeps_assignment(broker, pool, victim_id):
    """s0 joins first and so leads the group; restarting the leader is the harder case (its
    rejoin must not make it recompute and change the assignment)."""
    name = "static-java-%s" % victim_id
    b = broker.bootstrap
    create_topic(b, name)

    def member(iid, label=None):
        return pool.start("java", b, name, name, assignor="range", instance_id=iid,
                          session_timeout_ms=STATIC_SESSION_MS, name=label or iid)

    s = {"s0": member("s0")}
    s["s0"].wait_assigned(range(PARTITIONS), timeout=JOIN_TIMEOUT)
    s.update({iid: member(iid) for iid in ("s1", "s2")})
    wait_balanced(list(s.values()), PARTITIONS, timeout=JOIN_TIMEOUT)
    produce(b, name, 0)
    wait_consumed(list(s.values()), expected_records(BATCH, PARTITIONS))
    wait_all_committed(list(s.values()))

    victim = s[victim_id]
    old_parts, old_gen = victim.assigned_partitions(), victim.generation()
    others = [c for iid, c in sorted(s.items()) if iid != victim_id]
    other_gens = [c.generation() for c in others]
    assert len(set(other_gens + [old_gen])) == 1, split_state(s.values())

    victim.kill()
    killed = time.monotonic()
    back = member(victim_id, victim_id + "-restarted")
    back.wait_assigned(timeout=STATIC_SESSION_MS / 1000)
    took = back.assignments()[0][0] - killed
    assert took < STATIC_SESSION_MS / 1000, \
        "restarted member joined %.1f s after kill -9, not within the session timeout" % took
    assert back.assigned_partitions() == old_parts, \
        "restarted static member got %s, had %s" % (sorted(back.assigned_partitions()),
                                                     sorted(old_parts))
    assert back.generation() == old_gen, \
        "static rejoin moved the generation %s -> %s (a rebalance)" % (old_gen, back.generation())

    # Everyone keeps consuming its own partitions; the restarted member resumes at the
    # victim's commits.
    produce(b, name, BATCH)
    everyone = list(s.values()) + [back]
    wait_consumed(everyone, expected_records(2 * BATCH, PARTITIONS))
    assert partitions_of(back.records()) == old_parts
    # No rebalance until well past the moment the dead member's session would have expired.
    assert_no_new_assignment(others + [back], killed + STATIC_SESSION_MS / 1000 + 3,
                             "static member restart")
    assert [c.generation() for c in others] == other_gens
    assert_exactly_once(everyone, expected_records(2 * BATCH, PARTITIONS))
    assert_records_owned(everyone)
    for c in others + [back]:
        c.stop()  # static members close without leaving the group
    assert_no_errors(everyone)


# -- 4. Java and librdkafka members in one group -----------------------------------------

def test_mixed_java_python_group(broker, pool):
    name = "mixed-java-python"
    b = broker.bootstrap
    create_topic(b, name)
    m = [pool.start("java", b, name, name, assignor="range", session_timeout_ms=SESSION_MS,
                    name="java-0"),
         pool.start("java", b, name, name, assignor="range", session_timeout_ms=SESSION_MS,
                    name="java-1"),
         pool.start("python", b, name, name, assignor="range", session_timeout_ms=SESSION_MS,
                    name="python-0")]
    split = wait_balanced(m, PARTITIONS, timeout=JOIN_TIMEOUT)
    assert sorted(len(v) for v in split.values()) == [2, 2, 2], split_state(m)
    produce(b, name, 0)
    wait_consumed(m, expected_records(BATCH, PARTITIONS))
    assert_exactly_once(m, expected_records(BATCH, PARTITIONS))
    for c in m:
        assert partitions_of(c.records()) == c.assigned_partitions(), split_state(m)
    for c in m:
        c.stop()
    assert_records_owned(m)
    assert_no_errors(m)
