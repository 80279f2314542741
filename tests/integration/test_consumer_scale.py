"""A consumer group (KIP-848) of hundreds of raw members: the coordinator finds each member
through its index by member id and instance id, keeps the group's subscribed topics and the
members' deadlines without a pass over the group (broker/group/consumer_members.c), and finds
the group through the index of groups (broker/name_index.c). These check what a stale index or
deadline bound would break: members answered UNKNOWN_MEMBER_ID while in the group, members
that left still answered, a static member's replacement not found under its new id, members
lost across a kill -9, a silent member never fenced while the others keep heartbeating, a topic
subscribed by a member that joins later left out of the assignment."""

import time
import uuid

import kafka_wire as kw
import pytest
from harness import run_client

SESSION_MS = 6000
API_CGH = 68
API_CGD = 69
ERR_NOT_COORDINATOR = 16
ERR_UNKNOWN_MEMBER_ID = 25
ERR_FENCED_INSTANCE_ID = 82


@pytest.fixture(scope="module")
def broker_config():
    return {"profile": "provisioned", "kafka.version": "4.0",
            "group.consumer.session.timeout.ms": SESSION_MS,
            "group.consumer.min.session.timeout.ms": 1000,
            "group.consumer.heartbeat.interval.ms": 500,
            "group.consumer.min.heartbeat.interval.ms": 100,
            "group.consumer.max.size": 1000}


OWNED = {}  # member id -> the partitions it was last assigned, reported at every heartbeat


class Conn:
    """One connection to the coordinator, requests one at a time."""

    def __init__(self, port):
        self.s = kw.connect(port, timeout=30)
        self.corr = 0

    def call(self, key, body):
        self.corr += 1
        hdr = kw.i16(key) + kw.i16(1 if key == API_CGD else 0) + kw.i32(self.corr) + kw.string("scale-it") + kw.tags()
        self.s.sendall(kw.i32(len(hdr) + len(body)) + hdr + body)
        corr, resp = kw.recv_frame(self.s)
        assert corr == self.corr
        r = kw.FlexReader(resp, flex=True)
        r.skip_tags()
        return r

    def heartbeat(self, group, member_id, epoch, instance=None, topics=None):
        """Reports what the member was last given, as a client that revokes at once does."""
        owned = OWNED.get(member_id, []) if epoch >= 0 else None
        body = kw.compact_string(group) + kw.compact_string(member_id) + kw.i32(epoch)
        body += kw.compact_nullable_string(instance) + kw.compact_nullable_string(None)
        body += kw.i32(30000 if epoch == 0 else -1)
        body += kw.compact_array(topics, kw.compact_string)
        body += kw.compact_nullable_string(None)
        body += kw.compact_array(owned, lambda tp: tp[0] + kw.compact_array(tp[1], kw.i32) + kw.tags())
        body += kw.tags()
        r = self.call(API_CGH, body)
        r.i32()
        out = {"error": r.i16(), "message": r.compact_string(), "member_id": r.compact_string(),
               "epoch": r.i32()}
        r.i32()
        if out["error"] == 0 and r.i8() >= 0:
            def tp(x):
                t = (x.take(16), x.compact_array(lambda y: y.i32()))
                x.skip_tags()
                return t
            OWNED[out["member_id"]] = r.compact_array(tp)
        return out

    def members(self, group):
        """ConsumerGroupDescribe v1: (error, group epoch, member ids, subscribed topics)."""
        r = self.call(API_CGD, kw.compact_array([group], kw.compact_string) + kw.i8(0) + kw.tags())
        r.i32()

        def assignment(x):
            def tp(y):
                y.take(16)
                y.compact_string()
                y.compact_array(lambda z: z.i32())
                y.skip_tags()
            x.compact_array(tp)
            x.skip_tags()

        def member(x):
            mid = x.compact_string()
            x.compact_string(), x.compact_string(), x.i32(), x.compact_string(), x.compact_string()
            topics = x.compact_array(lambda y: y.compact_string())
            x.compact_string()
            assignment(x)
            assignment(x)
            x.i8()
            x.skip_tags()
            return mid, topics

        def grp(x):
            err = x.i16()
            x.compact_string(), x.compact_string(), x.compact_string()
            epoch = x.i32()
            x.i32()
            x.compact_string()
            ms = x.compact_array(member)
            x.i32()
            x.skip_tags()
            return err, epoch, ms
        return r.compact_array(grp)[0]

    def close(self):
        self.s.close()


def coordinator(b, group):
    for port in b.ports:
        c = Conn(port)
        if c.members(group)[0] != ERR_NOT_COORDINATOR:
            return c
        c.close()
    raise AssertionError("no coordinator for %s" % group)


def create_topic(bootstrap, topic, partitions):
    assert run_client("python", ["create-topic", "--bootstrap", bootstrap, "--topic", topic,
                                 "--partitions", partitions], timeout=60) == {"created": topic}


def test_large_group_members_found_through_leaves_static_replacement_restart_and_expiry(broker):
    b = broker
    group = topic = "scale-one-group"
    create_topic(b.bootstrap, topic, 64)
    c = coordinator(b, group)
    epochs = {}
    static = {}  # member id -> instance id
    for i in range(300):
        mid = str(uuid.uuid4())
        inst = "inst-%d" % i if i % 10 == 0 else None
        r = c.heartbeat(group, mid, 0, instance=inst, topics=[topic])
        assert r["error"] == 0, r
        epochs[mid] = r["epoch"]
        if inst:
            static[mid] = inst
    ids = list(epochs)
    # every third leaves for good, in an order unlike the joins'
    gone = set(ids[::3][::-1])
    for mid in gone:
        r = c.heartbeat(group, mid, -1, instance=static.get(mid))
        assert r["error"] == 0, r
    for mid in gone:
        r = c.heartbeat(group, mid, epochs[mid], instance=static.get(mid))
        assert r["error"] == ERR_UNKNOWN_MEMBER_ID, (mid, r)
    # the rest are all found (they may be asked to move on: any epoch they are told is fine)
    here = [m for m in ids if m not in gone]
    for mid in here:
        r = c.heartbeat(group, mid, epochs[mid], instance=static.get(mid))
        assert r["error"] == 0, (mid, r)
        epochs[mid] = r["epoch"]
    err, _, ms = c.members(group)
    assert err == 0 and sorted(m for m, _ in ms) == sorted(here)

    # a static member leaves for now; its replacement is found under the new id, the old id is fenced
    old = next(m for m in here if m in static)
    inst = static.pop(old)
    assert c.heartbeat(group, old, -2, instance=inst)["error"] == 0
    new = str(uuid.uuid4())
    r = c.heartbeat(group, new, 0, instance=inst, topics=[topic])
    assert r["error"] == 0 and r["member_id"] == new, r
    here[here.index(old)] = new
    epochs[new], static[new] = r["epoch"], inst
    r = c.heartbeat(group, new, epochs[new], instance=inst)
    assert r["error"] == 0, r
    epochs[new] = r["epoch"]
    assert c.heartbeat(group, old, epochs[new], instance=inst)["error"] == ERR_FENCED_INSTANCE_ID

    # a member joining with a second topic: the group's topics follow (it is assigned from it)
    create_topic(b.bootstrap, "scale-second", 4)
    extra = str(uuid.uuid4())
    r = c.heartbeat(group, extra, 0, topics=[topic, "scale-second"])
    assert r["error"] == 0, r
    epochs[extra] = r["epoch"]
    here.append(extra)
    err, _, ms = c.members(group)
    assert dict(ms)[extra] == sorted([topic, "scale-second"])
    c.close()

    # kill -9: every member is found again after the load
    b.kill9()
    c = coordinator(b, group)
    for mid in here:
        r = c.heartbeat(group, mid, epochs[mid], instance=static.get(mid))
        assert r["error"] == 0, (mid, r)
        epochs[mid] = r["epoch"]

    # five go silent while the others keep heartbeating: those five, and only they, are fenced
    silent = set(here[:5])
    alive = [m for m in here if m not in silent]
    fenced = False
    for _ in range(60):  # each round takes a moment: bounded by rounds, not by time
        for mid in alive:
            r = c.heartbeat(group, mid, epochs[mid], instance=static.get(mid))
            assert r["error"] == 0, (mid, r)
            epochs[mid] = r["epoch"]
        err, _, ms = c.members(group)
        left = {m for m, _ in ms}
        assert set(alive) <= left
        if not (silent & left):
            fenced = True
            break
        time.sleep(0.5)
    assert fenced, "the silent members were never fenced"
    c.close()


def test_many_groups_found_by_id(broker):
    """Hundreds of groups side by side: each member's heartbeat reaches its own group."""
    b = broker
    topic = "scale-groups"
    create_topic(b.bootstrap, topic, 2)
    conns = {}
    members = {}
    for g in range(200):
        group = "scale-g-%d" % g
        port_conn = None
        for port in b.ports:
            if port not in conns:
                conns[port] = Conn(port)
            if conns[port].members(group)[0] != ERR_NOT_COORDINATOR:
                port_conn = conns[port]
                break
        mid = str(uuid.uuid4())
        r = port_conn.heartbeat(group, mid, 0, topics=[topic])
        assert r["error"] == 0, r
        members[group] = (port_conn, mid, r["epoch"])
    for group, (c, mid, epoch) in members.items():
        assert c.heartbeat(group, mid, epoch)["error"] == 0
        # the member is known in its group only
        other = "scale-g-%d" % ((int(group.rsplit("-", 1)[1]) + 1) % 200)
        assert c.members(group)[2][0][0] == mid
        assert all(m != mid for m, _ in (c.members(other)[2] if c.members(other)[0] == 0 else []))
    for c in conns.values():
        c.close()
