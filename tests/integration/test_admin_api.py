"""The HTTP admin API (docs/admin-api.md) with real clients: health and readiness, state, reset
between two tests (franz-go and librdkafka), a synthetic broker taken down under a Java consumer
that resumes, leader moves, the bearer token, and bad input (4xx JSON errors, Kafka keeps
serving). Fault rules: test_admin_faults.py; metrics: test_admin_metrics.py; IAM events:
test_iam_node_go.py (rotate and expire on demand)."""

import json
import socket
import time
import urllib.error
import urllib.request

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from groups import GroupConsumer, wait_until
from harness import Broker, run_client, running


def call(broker, method, path, body=None, raw=None, headers=None):
    """(status, JSON body) of one admin API request."""
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    req = urllib.request.Request(broker.admin_url + path, method=method, data=data, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    b = Broker(config={"group.initial.rebalance.delay.ms": 0}, data_dir=tmp_path_factory.mktemp("admin"))
    with running(b):
        yield b


@pytest.fixture
def clean(broker):
    """Every test starts on an empty cluster: the reset the API offers for exactly this."""
    status, _ = call(broker, "POST", "/v1/reset", {})
    assert status == 200
    return broker


def everyone(broker):
    """A bootstrap list of every synthetic broker: one of them may be down."""
    return ",".join("127.0.0.1:%d" % p for p in broker.ports)


def produce(broker, topic, n, partitions=None, prefix="v"):
    p = Producer({"bootstrap.servers": everyone(broker), "linger.ms": 0})
    for i in range(n):
        kw = {"partition": i % partitions} if partitions else {}
        p.produce(topic, key=b"key-%d" % i, value=b"%s%d" % (prefix.encode(), i), **kw)
    assert p.flush(30) == 0


def create_topic(broker, name, partitions):
    admin = AdminClient({"bootstrap.servers": everyone(broker)})  # kept alive until the result
    admin.create_topics([NewTopic(name, num_partitions=partitions)])[name].result(20)


def kafka_serves(broker):
    """Kafka traffic still works: a topic created, a record produced and read back."""
    name = "alive-%d" % int(time.monotonic() * 1000)
    create_topic(broker, name, 1)
    produce(broker, name, 1)
    status, t = call(broker, "GET", "/v1/topics/" + name)
    return status == 200 and t["partitions"][0]["high_watermark"] == 1


# -- health, readiness, state ----------------------------------------------------------------

def test_health_and_ready(broker):
    status, h = call(broker, "GET", "/v1/health")
    assert status == 200 and h["status"] == "up" and h["uptime_ms"] >= 0
    assert call(broker, "GET", "/v1/ready") == (200, {"status": "ready"})
    # probes log at debug, not once a second at info in a container's log
    assert "GET /v1/ready" not in broker.log_text()


def test_state_lists_topics_groups_and_connections(clean):
    b = clean
    create_topic(b, "orders", 3)
    produce(b, "orders", 30, partitions=3)
    c = Consumer({"bootstrap.servers": b.bootstrap, "group.id": "billing", "client.id": "billing-app",
                  "auto.offset.reset": "earliest", "enable.auto.commit": False})
    c.subscribe(["orders"])
    got = 0
    deadline = time.monotonic() + 30
    while got < 30 and time.monotonic() < deadline:
        m = c.poll(0.5)
        if m is not None and not m.error():
            got += 1
    # partition 0 committed at 4 of its 10 records: a lag of 6 there, none elsewhere
    c.commit(offsets=[TopicPartition("orders", 0, 4), TopicPartition("orders", 1, 10),
                      TopicPartition("orders", 2, 10)], asynchronous=False)
    try:
        status, t = call(b, "GET", "/v1/topics/orders")
        assert status == 200 and len(t["partitions"]) == 3
        assert sum(p["high_watermark"] for p in t["partitions"]) == 30
        assert all(p["log_start_offset"] == 0 and p["log_end_offset"] == p["high_watermark"] for p in t["partitions"])
        assert {p["leader"] for p in t["partitions"]} == {x["id"] for x in call(b, "GET", "/v1/brokers")[1]["brokers"]}
        assert [x["name"] for x in call(b, "GET", "/v1/topics")[1]["topics"]] == ["orders"]

        status, g = call(b, "GET", "/v1/groups/billing")
        assert status == 200 and g["state"] == "Stable" and g["protocol_type"] == "consumer"
        assert [m["client_id"] for m in g["members"]] == ["billing-app"] and g["members"][0]["leader"]
        assert sum(o["committed_offset"] for o in g["offsets"]) == 24 and g["lag"] == 6, g
        assert all(o["lag"] == o["high_watermark"] - o["committed_offset"] for o in g["offsets"])

        conns = call(b, "GET", "/v1/connections")[1]["connections"]
        mine = [k for k in conns if k["client_id"] == "billing-app"]
        assert mine and all(k["listener"] == "plaintext" and k["principal"] is None for k in mine)
        assert call(b, "GET", "/v1/groups/nope")[0] == 404 and call(b, "GET", "/v1/topics/nope")[0] == 404
    finally:
        c.close()


# -- reset between two tests -----------------------------------------------------------------

def test_reset_first_test_leaves_state(clean):
    """The first of two tests: franz-go creates a topic and a group commits offsets."""
    b = clean
    run_client("go", ["create-topic", "--bootstrap", b.bootstrap, "--topic", "left-over", "--partitions", "2"])
    run_client("go", ["produce", "--bootstrap", b.bootstrap, "--topic", "left-over", "--count", "20",
                      "--partitions", "2", "--compression", "none"])
    create_topic(b, "keep-me", 1)
    produce(b, "keep-me", 5)
    g = GroupConsumer("go", b.bootstrap, "left-group", "left-over", max_records=20)
    try:
        wait_until(lambda: g.record_count() >= 20, 60, "the go member read 20 records", [g])
    finally:
        g.stop()
    groups = call(b, "GET", "/v1/groups")[1]["groups"]
    assert [x["group_id"] for x in groups] == ["left-group"]


def test_reset_second_test_starts_clean(broker):
    """The second: one reset (keeping one named topic with its records) and nothing of the first
    is left, as seen by franz-go and by the API; the kept topic still holds its records."""
    b = broker
    status, r = call(b, "POST", "/v1/reset", {"keep_topics": ["keep-me"]})
    assert status == 200, r
    assert r["topics_deleted"] >= 1 and r["groups_deleted"] == 1 and r["topics_kept"] == 1, r
    listed = run_client("go", ["list-topics", "--bootstrap", b.bootstrap])
    assert listed["topics"] == ["keep-me"]
    assert call(b, "GET", "/v1/groups")[1]["groups"] == []
    assert call(b, "GET", "/v1/topics/keep-me")[1]["partitions"][0]["high_watermark"] == 5
    # the same names are free again: a new topic and group start from offset 0 and generation 1
    run_client("go", ["create-topic", "--bootstrap", b.bootstrap, "--topic", "left-over", "--partitions", "1"])
    assert call(b, "GET", "/v1/topics/left-over")[1]["partitions"][0]["high_watermark"] == 0
    assert call(b, "POST", "/v1/reset", {"keep_topics": ["nope"]})[0] == 400
    assert call(b, "POST", "/v1/reset", {"keep_topics": "keep-me"})[0] == 400


# -- brokers down and up ---------------------------------------------------------------------

def test_broker_down_moves_leadership_and_java_consumer_resumes(clean):
    b = clean
    create_topic(b, "failover", 3)
    produce(b, "failover", 30, partitions=3, prefix="before")
    g = GroupConsumer("java", everyone(b), "failover-group", "failover")
    try:
        wait_until(lambda: g.record_count() >= 30, 90, "the java member read the first 30 records", [g])
        group = call(b, "GET", "/v1/groups/failover-group")[1]
        victim = group["coordinator"]  # its groups' coordination moves too
        before = {p["partition"]: p for p in call(b, "GET", "/v1/topics/failover")[1]["partitions"]}
        status, down = call(b, "POST", "/v1/brokers/%d/down" % victim)
        assert status == 200 and not down["up"] and down["connections"] == 0, down
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", down["ports"]["plaintext"]), timeout=5).close()
        after = {p["partition"]: p for p in call(b, "GET", "/v1/topics/failover")[1]["partitions"]}
        moved = [i for i in before if before[i]["leader"] == victim]
        assert moved and down["leaders_moved"] == len(moved)
        for i in before:
            if i in moved:
                assert after[i]["leader"] != victim and after[i]["leader_epoch"] == before[i]["leader_epoch"] + 1
            else:
                assert after[i] == before[i]
        assert call(b, "GET", "/v1/groups/failover-group")[1]["coordinator"] != victim
        meta = AdminClient({"bootstrap.servers": everyone(b)}).list_topics("failover", timeout=10)
        assert victim not in meta.brokers
        produce(b, "failover", 30, partitions=3, prefix="after")
        wait_until(lambda: g.record_count() >= 60, 90, "the java member read on after the failover", [g])
        assert not [e for e in g.errors() if "Fenced" not in e and "NotLeader" not in e], g.errors()
        values = sorted(set(k for _, _, k in g.records()))
        assert len(g.records()) >= 60 and len(values) == 30  # keys key-0..29, each produced twice

        status, up = call(b, "POST", "/v1/brokers/%d/up" % victim)
        assert status == 200 and up["up"] and up["leaders_moved"] == len(moved)
        back = {p["partition"]: p for p in call(b, "GET", "/v1/topics/failover")[1]["partitions"]}
        assert all(back[i]["leader"] == victim and back[i]["leader_epoch"] == before[i]["leader_epoch"] + 2
                   for i in moved)
        produce(b, "failover", 3, partitions=3, prefix="back")
        wait_until(lambda: g.record_count() >= 63, 90, "the java member read on after the broker came back", [g])
    finally:
        g.stop()


def test_move_partition_leader(clean):
    b = clean
    create_topic(b, "moving", 1)
    p0 = call(b, "GET", "/v1/topics/moving")[1]["partitions"][0]
    others = [x["id"] for x in call(b, "GET", "/v1/brokers")[1]["brokers"] if x["id"] != p0["leader"]]
    status, r = call(b, "POST", "/v1/topics/moving/partitions/0/leader", {"broker": others[0]})
    assert status == 200 and r["leader"] == others[0] and r["leader_epoch"] == p0["leader_epoch"] + 1
    produce(b, "moving", 5)  # librdkafka: NOT_LEADER_OR_FOLLOWER from the old leader, metadata, retry
    assert call(b, "GET", "/v1/topics/moving")[1]["partitions"][0]["high_watermark"] == 5
    assert call(b, "POST", "/v1/topics/moving/partitions/7/leader", {"broker": others[0]})[0] == 404
    assert call(b, "POST", "/v1/topics/moving/partitions/0/leader", {"broker": 12345})[0] == 400
    assert call(b, "POST", "/v1/topics/moving/partitions/0/leader", {})[0] == 400


def test_last_broker_cannot_go_down(tmp_path):
    with running(Broker(broker_count=1, data_dir=tmp_path)) as b:
        only = call(b, "GET", "/v1/brokers")[1]["brokers"][0]["id"]
        status, e = call(b, "POST", "/v1/brokers/%d/down" % only)
        assert status == 409 and "last one up" in e["message"]
        assert call(b, "POST", "/v1/brokers/999/down")[0] == 404
        assert call(b, "POST", "/v1/brokers/abc/down")[0] == 400


# -- the token, bad input --------------------------------------------------------------------

def test_admin_token(tmp_path):
    token = "s3cr3t-admin-token"
    with running(Broker(broker_count=1, data_dir=tmp_path, config={"admin.token": token})) as b:
        assert call(b, "GET", "/v1/health")[0] == 200 and call(b, "GET", "/v1/ready")[0] == 200
        status, e = call(b, "GET", "/v1/topics")
        assert status == 401 and e["code"] == "Unauthorized"
        assert call(b, "GET", "/v1/topics", headers={"Authorization": "Bearer wrong"})[0] == 401
        assert call(b, "GET", "/v1/topics", headers={"Authorization": "Bearer " + token})[0] == 200
        assert call(b, "POST", "/v1/reset", {}, headers={"Authorization": "bearer " + token})[0] == 200
        assert token not in b.log_text()


def raw_http(broker, data, read_timeout=10):
    with socket.create_connection(("127.0.0.1", broker.admin_port), timeout=read_timeout) as s:
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        out = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return out
            out += chunk


def test_bad_input_gets_4xx_json_and_kafka_keeps_serving(clean):
    b = clean
    cases = [
        ("GET", "/v1/nothing", None, 404, "NotFound"),
        ("DELETE", "/v1/topics", None, 405, "MethodNotAllowed"),
        ("POST", "/v1/reset", b"{not json", 400, "MalformedJSON"),
        ("POST", "/v1/reset", b"[1, 2]", 400, "MalformedJSON"),
        ("POST", "/v1/reset", b'{"keep_topics": [], "keep_topics": []}', 400, "MalformedJSON"),
        ("POST", "/v1/reset", b'{"wipe": true}', 400, "UnknownField"),
        ("POST", "/v1/iam/roles/nobody/rotate", b"{}", 404, "NotFound"),
        ("POST", "/v1/iam/credentials/AKIANOPE/expire", b"{}", 404, "NotFound"),
        ("POST", "/v1/iam/sessions/close", b"{}", 400, "MissingField"),
        ("POST", "/v1/iam/sessions/close", b'{"principal": 5}', 400, "InvalidField"),
        ("POST", "/v1/iam/sessions/close", b'{"principal": "x", "mode": "nuke"}', 400, "InvalidField"),
        ("POST", "/v1/iam/reload", b"{}", 409, "ReloadRefused"),
        ("POST", "/v1/reset", b"x" * (300 * 1024), 413, "PayloadTooLarge"),
    ]
    for method, path, raw, want, code in cases:
        status, e = call(b, method, path, raw=raw)
        assert (status, e["code"]) == (want, code), (method, path, status, e)
        assert e["message"], e
    # a 405 says what the path takes
    req = urllib.request.Request(b.admin_url + "/v1/health", method="POST", data=b"{}")
    with pytest.raises(urllib.error.HTTPError) as ei:
        urllib.request.urlopen(req, timeout=10)
    assert ei.value.headers["Allow"] == "GET"
    # malformed HTTP and an oversized head, from a raw socket
    assert raw_http(b, b"NOT HTTP AT ALL\r\n\r\n").startswith(b"HTTP/1.1 400 ")
    big = b"GET /v1/health HTTP/1.1\r\nX-Pad: " + b"a" * 9000 + b"\r\n\r\n"
    assert raw_http(b, big).startswith(b"HTTP/1.1 431 ")
    # a request cut short gets nothing, and nothing else suffers
    assert raw_http(b, b"POST /v1/reset HTTP/1.1\r\nContent-Length: 10\r\n\r\n{}") == b""
    assert kafka_serves(b)
    assert call(b, "GET", "/v1/health")[0] == 200


def test_leader_epochs_survive_a_restart(tmp_path):
    """A moved leader and its epoch are stored: after a restart Metadata goes on from them, never
    back to epoch 0 (the Java client ignores metadata older than what it saw and would be stuck)."""
    with running(Broker(data_dir=tmp_path)) as b:
        create_topic(b, "kept", 2)
        p0 = call(b, "GET", "/v1/topics/kept")[1]["partitions"][0]
        other = [x["id"] for x in call(b, "GET", "/v1/brokers")[1]["brokers"] if x["id"] != p0["leader"]][0]
        call(b, "POST", "/v1/topics/kept/partitions/0/leader", {"broker": other})
        call(b, "POST", "/v1/topics/kept/partitions/0/leader", {"broker": p0["leader"]})
        moved = call(b, "GET", "/v1/topics/kept")[1]["partitions"]
        assert moved[0]["leader_epoch"] == 2 and moved[1]["leader_epoch"] == 0
        b.restart()
        assert call(b, "GET", "/v1/topics/kept")[1]["partitions"] == moved
        b.kill9()
        assert call(b, "GET", "/v1/topics/kept")[1]["partitions"] == moved
