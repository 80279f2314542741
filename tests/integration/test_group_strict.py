"""MSK Serverless decodes the consumer-protocol bytes inside JoinGroup strictly (kafkajs #1449).

Raw JoinGroup v5 requests carry the exact 21 bytes kafkajs 2.2.0/2.2.1 send (declares
ConsumerProtocolSubscription v1, holds only the v0 body). The serverless profile answers
INVALID_REQUEST (42) and logs which byte and field were missing; the lenient setting (Apache
Kafka's behaviour) lets the same member join.
"""

import pytest

import kafka_wire as kw
from harness import Broker

KAFKAJS_221 = bytes.fromhex("000100000001000974657374746f70696300000000")
KAFKAJS_222 = bytes.fromhex("000000000001000974657374746f70696300000000")
JOIN_GROUP = 11


def join_v5(sock, corr, group, member_id, metadata, protocol="RoundRobinAssigner"):
    body = (kw.string(group) + kw.i32(30000) + kw.i32(60000) + kw.string(member_id) + kw.string(None)
            + kw.string("consumer") + kw.array([kw.string(protocol) + kw.bytes_(metadata)], lambda p: p))
    sock.sendall(kw.request(JOIN_GROUP, 5, corr, "kafkajs-strict", body))
    c, body = kw.recv_frame(sock)
    assert c == corr
    r = kw.Reader(body)
    r.i32()  # throttle
    res = {"error": r.i16(), "generation": r.i32(), "protocol": r.string(), "leader": r.string(),
           "member_id": r.string()}
    res["members"] = r.array(lambda r: (r.string(), r.string(), read_bytes(r)))
    assert r.remaining() == 0
    return res


def read_bytes(r):
    n = r.i32()
    return None if n < 0 else r.take(n)


def join_until_member(port, group, metadata):
    """The KIP-394 dance: first join gets MEMBER_ID_REQUIRED, the second carries the id."""
    s = kw.connect(port)
    first = join_v5(s, 1, group, "", metadata)
    if first["error"] != 79:
        s.close()
        return first
    second = join_v5(s, 2, group, first["member_id"], metadata)
    s.close()
    return second


@pytest.fixture(scope="module")
def broker_config():
    return {"group.initial.rebalance.delay.ms": 0}


def test_kafkajs_221_metadata_is_refused_by_serverless(broker):
    port = kw.coordinator_port(broker.port, "strict-kafkajs")
    res = join_until_member(port, "strict-kafkajs", KAFKAJS_221)
    assert res["error"] == 42  # INVALID_REQUEST
    line = broker.wait_for_log(r"INVALID_REQUEST\(42\).*group strict-kafkajs")
    assert line, broker.log_tail()
    for part in ("client=kafkajs-strict", "protocol RoundRobinAssigner", "declares v1", "byte 21",
                 "owned_partitions"):
        assert part in line, "%r missing from %r" % (part, line)


def test_kafkajs_222_metadata_joins(broker):
    port = kw.coordinator_port(broker.port, "strict-fixed")
    res = join_until_member(port, "strict-fixed", KAFKAJS_222)
    assert res["error"] == 0 and res["generation"] >= 1
    assert res["protocol"] == "RoundRobinAssigner"
    assert res["members"] == [(res["member_id"], None, KAFKAJS_222)]  # the leader sees its own subscription


def test_lenient_accepts_what_apache_kafka_accepts():
    b = Broker(config={"group.initial.rebalance.delay.ms": 0, "group.consumer.protocol.validation": "lenient"})
    b.start()
    try:
        port = kw.coordinator_port(b.port, "lenient-kafkajs")
        res = join_until_member(port, "lenient-kafkajs", KAFKAJS_221)
        assert res["error"] == 0 and res["protocol"] == "RoundRobinAssigner"
    finally:
        b.stop(check=True)
        b.cleanup()


def test_group_request_on_the_wrong_node_is_not_coordinator(broker):
    """Groups are spread over the synthetic brokers; another node answers NOT_COORDINATOR (16)."""
    port = kw.coordinator_port(broker.port, "spread-group")
    other = next(p for p in broker.ports if p != port)
    s = kw.connect(other)
    res = join_v5(s, 1, "spread-group", "", KAFKAJS_222)
    s.close()
    assert res["error"] == 16
    assert broker.wait_for_log(r"NOT_COORDINATOR\(16\).*group spread-group is coordinated by node")
    # the coordinator itself takes the join
    s = kw.connect(port)
    assert join_v5(s, 2, "spread-group", "", KAFKAJS_222)["error"] == 79  # MEMBER_ID_REQUIRED
    s.close()
