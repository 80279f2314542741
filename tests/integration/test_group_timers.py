"""A parked group request never stops the broker (issue 30, found by librdkafka's 0084_destroy_flags).

Member A (session 60 s) and member B (session 6 s) join one generation with JoinGroup v2 and the
default 3 s initial rebalance delay; B sends SyncGroup and the leader A never does. Apache Kafka
keeps B alive while its SyncGroup waits (MemberMetadata.hasSatisfiedHeartbeat) and goes on
serving. mskmock used to re-arm the group's timer at B's past session deadline on every pass,
which libuv 1.44 runs again before any I/O: from +6 s no listener answered, SIGTERM was ignored.

Raw wire: a fresh ApiVersions every second for 15 s while the SyncGroup is parked must be
answered, the parked SyncGroup must then get its answer once the leader syncs, and the broker
must still stop on SIGTERM (the module fixture checks exit 0).
"""

import socket
import time

import pytest

import kafka_wire as kw

JOIN_GROUP, SYNC_GROUP = 11, 14
# ConsumerProtocolSubscription v0: topic "testtopic", empty user data
SUBSCRIPTION = bytes.fromhex("000000000001000974657374746f70696300000000")


@pytest.fixture(scope="module")
def broker_config():
    # the kafka profile, as the clients' own suites run; the default initial rebalance delay (3 s)
    return {"profile": "kafka"}


def send_join_v2(sock, corr, group, session_ms, rebalance_ms, member_id=""):
    body = (kw.string(group) + kw.i32(session_ms) + kw.i32(rebalance_ms) + kw.string(member_id)
            + kw.string("consumer") + kw.array([kw.string("range") + kw.bytes_(SUBSCRIPTION)], lambda p: p))
    sock.sendall(kw.request(JOIN_GROUP, 2, corr, "timer-test", body))


def read_join_v2(sock, corr):
    c, body = kw.recv_frame(sock)
    assert c == corr
    r = kw.Reader(body)
    r.i32()  # throttle
    return {"error": r.i16(), "generation": r.i32(), "protocol": r.string(), "leader": r.string(),
            "member_id": r.string()}


def send_sync_v1(sock, corr, group, generation, member_id, assignments=()):
    body = (kw.string(group) + kw.i32(generation) + kw.string(member_id)
            + kw.array(list(assignments), lambda a: kw.string(a[0]) + kw.bytes_(a[1])))
    sock.sendall(kw.request(SYNC_GROUP, 1, corr, "timer-test", body))


def read_sync_v1(sock, corr):
    c, body = kw.recv_frame(sock)
    assert c == corr
    r = kw.Reader(body)
    r.i32()  # throttle
    error = r.i16()
    n = r.i32()
    return error, (None if n < 0 else r.take(n))


def api_versions_answered(port, timeout=2.0):
    s = None
    try:
        s = kw.connect(port, timeout=timeout)
        s.sendall(kw.api_versions_request(7, "timer-probe"))
        c, _ = kw.recv_frame(s)
        return c == 7
    except (socket.timeout, OSError):
        return False
    finally:
        if s is not None:
            s.close()


def test_parked_sync_past_session_timeout_keeps_broker_serving(broker):
    group = "parked-sync"
    port = kw.coordinator_port(broker.port, group, client_id="timer-test")
    a, b = kw.connect(port, timeout=30), kw.connect(port, timeout=30)
    send_join_v2(a, 1, group, 60000, 60000)
    time.sleep(0.2)  # A first, so A leads
    send_join_v2(b, 1, group, 6000, 60000)
    ja, jb = read_join_v2(a, 1), read_join_v2(b, 1)
    assert ja["error"] == 0 and jb["error"] == 0, (ja, jb)
    assert ja["leader"] == ja["member_id"] and jb["generation"] == ja["generation"]

    send_sync_v1(b, 2, group, jb["generation"], jb["member_id"])  # parked: the leader never syncs
    parked_at = time.monotonic()
    missed = []
    for second in range(15):
        if not api_versions_answered(broker.port):
            missed.append(second)
        time.sleep(max(0.0, parked_at + second + 1 - time.monotonic()))
    assert not missed, "ApiVersions unanswered at +%s s of the parked SyncGroup\n%s" % (missed, broker.log_tail())

    # B outlived its 6 s session while parked, as in Kafka; the leader's sync answers it now
    assignment = b"\x00\x00\x00\x00\x00\x00\x00\x00"
    send_sync_v1(a, 2, group, ja["generation"], ja["member_id"],
                 [(ja["member_id"], assignment), (jb["member_id"], assignment)])
    assert read_sync_v1(a, 2) == (0, assignment)
    assert read_sync_v1(b, 2) == (0, assignment)
    a.close()
    b.close()
