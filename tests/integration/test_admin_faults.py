"""Fault rules of the admin API (POST /v1/faults) against real clients and raw sockets.

A NOT_LEADER_OR_FOLLOWER rule with count 2 makes librdkafka retry and deliver once; a latency
rule shows in the producer's round trip; a close rule makes it reconnect and deliver; a dropped
answer is skipped while the next one on the connection still arrives; a count rule stops after
N fires and stays listed, inactive; bad rule bodies get a 4xx JSON {"code", "message"} and the
broker keeps serving Kafka.
"""

import http.client
import json
import time
import uuid

import pytest

import kafka_wire as kw

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

ERR_UNKNOWN_TOPIC_OR_PARTITION, ERR_LEADER_NOT_AVAILABLE = 3, 5


# -- helpers ------------------------------------------------------------------------------

def admin(broker, method, path, body=None, raw=None):
    """(status, decoded JSON body) of one admin API call."""
    conn = http.client.HTTPConnection("127.0.0.1", broker.admin_port, timeout=10)
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    headers = {"Content-Type": "application/json"} if data is not None else {}
    conn.request(method, path, body=data, headers=headers)
    resp = conn.getresponse()
    text = resp.read()
    conn.close()
    return resp.status, (json.loads(text) if text else None)


def add_rule(broker, **rule):
    status, body = admin(broker, "POST", "/v1/faults", rule)
    assert status == 201, "POST /v1/faults %r: %d %r" % (rule, status, body)
    assert body["active"] is True and body["fired"] == 0 and body["matched"] == 0, body
    return body["id"]


def get_rule(broker, rule_id):
    status, body = admin(broker, "GET", "/v1/faults/%d" % rule_id)
    assert status == 200, body
    return body


def create_topic(bootstrap, partitions=1):
    name = "faults-" + uuid.uuid4().hex[:8]
    client = AdminClient({"bootstrap.servers": bootstrap})  # kept alive until the result is in
    client.create_topics([NewTopic(name, partitions)])[name].result(timeout=30)
    return name


def produce_one(producer, topic, value):
    """Produce one record to partition 0 and wait for its delivery report: (error, seconds taken)."""
    result = {}
    start = time.monotonic()
    producer.produce(topic, value=value, partition=0,
                     on_delivery=lambda err, msg: result.update(err=err, at=time.monotonic()))
    assert producer.flush(30) == 0, "record not delivered within 30 s"
    return result["err"], result["at"] - start


def count_value(bootstrap, topic, value, expect_total, timeout=20):
    """How many records of partition 0 hold value, reading until expect_total records were seen."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "faults-reader-" + uuid.uuid4().hex[:6],
                  "enable.auto.commit": False})
    c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    seen, hits = 0, 0
    deadline = time.monotonic() + timeout
    try:
        while seen < expect_total and time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is None or m.error():
                continue
            seen += 1
            hits += m.value() == value
        # anything beyond what was expected (a duplicate) would arrive now
        end = time.monotonic() + 1.0
        while time.monotonic() < end:
            m = c.poll(0.2)
            if m is not None and not m.error():
                seen += 1
                hits += m.value() == value
    finally:
        c.close()
    assert seen >= expect_total, "read %d of %d records" % (seen, expect_total)
    return hits


def producer(bootstrap, **extra):
    conf = {"bootstrap.servers": bootstrap, "linger.ms": 0, "retry.backoff.ms": 50,
            "message.timeout.ms": 20000}
    conf.update(extra)
    return Producer(conf)


def metadata(port, corr, client_id, topics, version=kw.METADATA_V):
    with kw.connect(port) as s:
        s.sendall(kw.metadata_request(version, corr, client_id, topics))
        got, body = kw.recv_frame(s)
    assert got == corr
    return kw.parse_metadata(version, body)


@pytest.fixture(autouse=True)
def no_rules(broker):
    yield
    admin(broker, "DELETE", "/v1/faults")


# -- with librdkafka ----------------------------------------------------------------------

def test_not_leader_twice_then_delivered_once(broker, bootstrap):
    topic = create_topic(bootstrap)
    rule = add_rule(broker, api="Produce", topic=topic, partition=0, error="NOT_LEADER_OR_FOLLOWER", count=2)
    start = broker.log_size()
    p = producer(bootstrap)
    err, _ = produce_one(p, topic, b"once")
    assert err is None, err
    r = get_rule(broker, rule)
    assert r["fired"] == 2 and r["remaining"] == 0 and r["active"] is False, r
    assert r["error"] == "NOT_LEADER_OR_FOLLOWER" and r["error_code"] == 6, r
    assert count_value(bootstrap, topic, b"once", 1) == 1
    # the Kafka-side refusal line says where the error came from
    assert broker.wait_for_log(r"refused error=NOT_LEADER_OR_FOLLOWER\(6\): by fault rule %d" % rule, since=start)


def test_latency_shows_in_round_trip(broker, bootstrap):
    topic = create_topic(bootstrap)
    p = producer(bootstrap)
    produce_one(p, topic, b"warm-up")  # connections and metadata in place
    base = min(produce_one(p, topic, b"base%d" % i)[1] for i in range(3))
    rule = add_rule(broker, api="Produce", topic=topic, latency_ms=300, count=1)
    err, held = produce_one(p, topic, b"slow")
    assert err is None, err
    assert held - base >= 0.28, "round trip %.3f s with a 300 ms rule, %.3f s without" % (held, base)
    assert get_rule(broker, rule)["fired"] == 1
    # served after the delay, not instead of it
    assert count_value(bootstrap, topic, b"slow", 5) == 1


def test_close_reconnects_and_delivers(broker, bootstrap):
    topic = create_topic(bootstrap)
    p = producer(bootstrap)
    produce_one(p, topic, b"before")
    rule = add_rule(broker, api="Produce", topic=topic, close=True, count=1)
    start = broker.log_size()
    err, _ = produce_one(p, topic, b"after-close")
    assert err is None, err
    assert get_rule(broker, rule)["fired"] == 1
    assert broker.wait_for_log(r"closing the connection unanswered: fault rule %d" % rule, since=start)
    assert count_value(bootstrap, topic, b"after-close", 2) == 1


@pytest.mark.parametrize("idempotent, copies", [(False, 2), (True, 1)])
def test_dropped_answer_is_retried(broker, bootstrap, idempotent, copies):
    """The answer is lost after the append: the producer times out (socket.timeout.ms bounds a
    ProduceRequest) and sends the batch again; without idempotence it is stored twice, as with a
    real broker losing a response, and with it the broker recognises the duplicate."""
    topic = create_topic(bootstrap)
    p = producer(bootstrap, **{"socket.timeout.ms": 1000, "enable.idempotence": idempotent})
    produce_one(p, topic, b"before")
    rule = add_rule(broker, api="Produce", topic=topic, drop=True, count=1)
    start = broker.log_size()
    err, took = produce_one(p, topic, b"dropped")
    assert err is None, err
    assert took >= 0.9, "delivered in %.3f s, before the request could time out" % took
    assert get_rule(broker, rule)["fired"] == 1
    assert broker.wait_for_log(r"its answer dropped: fault rule %d" % rule, since=start)
    assert count_value(bootstrap, topic, b"dropped", 1 + copies) == copies


# -- raw sockets ----------------------------------------------------------------------------

def test_drop_skips_one_answer_and_later_ones_still_arrive(broker):
    rule = add_rule(broker, api="Metadata", client_id="drop-probe", drop=True, count=1)
    with kw.connect(broker.port) as s:
        s.sendall(kw.metadata_request(kw.METADATA_V, 1, "drop-probe", [])
                  + kw.metadata_request(kw.METADATA_V, 2, "drop-probe", [])
                  + kw.api_versions_request(3, "drop-probe"))
        assert kw.recv_frame(s)[0] == 2
        assert kw.recv_frame(s)[0] == 3
    r = get_rule(broker, rule)
    assert r["fired"] == 1 and r["matched"] == 1 and r["active"] is False, r


def test_count_rule_expires_after_n_fires(broker, bootstrap):
    topic = create_topic(bootstrap)
    rule = add_rule(broker, api="Metadata", topic=topic, error="LEADER_NOT_AVAILABLE", count=2)
    errors = [metadata(broker.port, i, "count-probe", [topic])["topics"][0]["error"] for i in range(4)]
    assert errors == [ERR_LEADER_NOT_AVAILABLE, ERR_LEADER_NOT_AVAILABLE, 0, 0]
    r = get_rule(broker, rule)
    assert (r["matched"], r["fired"], r["remaining"], r["active"]) == (2, 2, 0, False), r
    # kept in the list until deleted
    status, listed = admin(broker, "GET", "/v1/faults")
    assert status == 200 and [f["id"] for f in listed["faults"]] == [rule]
    assert admin(broker, "DELETE", "/v1/faults/%d" % rule)[0] == 200
    assert admin(broker, "GET", "/v1/faults/%d" % rule)[0] == 404


def test_metadata_error_only_on_the_rule_topic(broker, bootstrap):
    """The handler's answer (brokers and all) carries the error on the rule's topic only."""
    hit, other = create_topic(bootstrap), create_topic(bootstrap)
    add_rule(broker, api="Metadata", topic=hit, error="UNKNOWN_TOPIC_OR_PARTITION", count=1)
    md = metadata(broker.port, 1, "md-probe", [hit, other])
    assert len(md["brokers"]) == 3
    errors = {t["name"]: t["error"] for t in md["topics"]}
    assert errors == {hit: ERR_UNKNOWN_TOPIC_OR_PARTITION, other: 0}


def test_probability_with_seed_fires_on_some(broker):
    rule = add_rule(broker, api="Metadata", client_id="coin", error="UNKNOWN_SERVER_ERROR", probability=0.5,
                    seed=7)
    with kw.connect(broker.port) as s:
        for i in range(40):
            s.sendall(kw.api_versions_request(i, "coin") if i % 2 else kw.metadata_request(kw.METADATA_V, i, "coin", []))
            kw.recv_frame(s)
    r = get_rule(broker, rule)
    assert r["matched"] == 20 and 0 < r["fired"] < 20, r
    assert r["seed"] == "7" and r["probability"] == 0.5 and r["active"] is True


# -- refusals of the admin API ------------------------------------------------------------

@pytest.mark.parametrize("body, code, words", [
    ({"api": "Produce", "count": 1}, "MissingField", "exactly one action"),
    ({"api": "Produce", "error": "NOT_LEADER_OR_FOLLOWER", "close": True}, "ConflictingFields", "exactly one"),
    ({"api": "Produce", "error": "NOT_LEADER_OR_FOLLOWER", "colour": 1}, "UnknownField", "colour"),
    ({"api": "Produc", "close": True}, "UnknownApi", "Produc"),
    ({"api": 999, "close": True}, "UnknownApi", "999"),
    ({"error": "NOT_LEADER_OR_FOLLOWER"}, "MissingField", "api"),
    ({"api": "Produce", "error": "REBALANCE_IN_PROGRESS"}, "ErrorNotValidForApi", "consumer group"),
    ({"api": "Heartbeat", "error": "NOT_LEADER_OR_FOLLOWER"}, "ErrorNotValidForApi", "partition"),
    ({"api": "Produce", "error": "NO_SUCH_ERROR"}, "InvalidField", "NO_SUCH_ERROR"),
    ({"api": "Produce", "error": 0}, "InvalidField", "NONE"),
    ({"api": "Produce", "close": True, "count": -1}, "InvalidField", "count"),
    ({"api": "Produce", "close": True, "count": 0}, "InvalidField", "count"),
    ({"api": "Produce", "close": True, "probability": 1.5}, "InvalidField", "probability"),
    ({"api": "Produce", "close": True, "probability": 0}, "InvalidField", "probability"),
    ({"api": "Produce", "close": True, "duration_ms": -5}, "InvalidField", "duration_ms"),
    ({"api": "Produce", "close": True, "partition": 0}, "InvalidField", "topic"),
    ({"api": "Produce", "close": True, "listener": "carrier-pigeon"}, "InvalidField", "plaintext"),
    ({"api": "Produce", "close": True, "broker": 12345}, "InvalidField", "12345"),
    ({"api": "Produce", "latency_ms": 0}, "InvalidField", "latency_ms"),
    ({"api": "Produce", "close": True, "version_min": 5, "version_max": 3}, "InvalidField", "version_min"),
])
def test_bad_rule_refused(broker, body, code, words):
    status, got = admin(broker, "POST", "/v1/faults", body)
    assert status == 400, (status, got)
    assert got["code"] == code and words in got["message"], got


def test_bad_requests_then_kafka_still_served(broker, bootstrap):
    status, got = admin(broker, "POST", "/v1/faults", raw=b"{not json")
    assert status == 400 and got["code"] == "MalformedJSON" and got["message"], got
    status, got = admin(broker, "DELETE", "/v1/faults/424242")
    assert status == 404 and "424242" in got["message"], got
    status, got = admin(broker, "GET", "/v1/faults/abc")
    assert status == 404 and got["code"], got
    assert admin(broker, "GET", "/v1/faults")[1] == {"faults": []}
    # nothing was created, and Kafka traffic goes on
    topic = create_topic(bootstrap)
    assert produce_one(producer(bootstrap), topic, b"still")[0] is None


def test_delete_all_counts(broker):
    for _ in range(3):
        add_rule(broker, api="Fetch", client_id="nobody", latency_ms=10)
    status, got = admin(broker, "DELETE", "/v1/faults")
    assert status == 200 and got == {"deleted": 3}


def test_unknown_fault_rule_is_notfound_as_documented(broker):
    """Regression (issue 31, item 6): docs/admin-api.md lists NotFound; the route answered NoSuchFault."""
    for method in ("GET", "DELETE"):
        status, got = admin(broker, method, "/v1/faults/987654")
        assert (status, got["code"]) == (404, "NotFound"), (method, got)
