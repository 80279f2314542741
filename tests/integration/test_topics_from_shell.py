"""Topics without a Kafka client (issue 31, item 2): topics.create at start, in the compose
convention of KAFKA_CREATE_TOPICS, and POST /v1/topics / DELETE /v1/topics/NAME on the admin
API. Both go through CreateTopics' checks, so the serverless profile (the default here) refuses
the configs MSK Serverless refuses, with Kafka's error names; a record then goes through with
librdkafka, as a newcomer's first one would."""

import subprocess

from confluent_kafka import Consumer, Producer

from harness import Broker, admin_call, broker_binary, broker_env, running




def round_trip(broker, topic):
    p = Producer({"bootstrap.servers": broker.bootstrap})
    p.produce(topic, b"first record", partition=0)
    assert p.flush(15) == 0
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "shell-" + topic, "auto.offset.reset": "earliest"})
    try:
        c.subscribe([topic])
        for _ in range(40):
            m = c.poll(0.5)
            if m is not None and m.error() is None:
                return m.value()
    finally:
        c.close()


def test_topics_create_makes_them_at_start_and_leaves_them_at_restart():
    b = Broker(config={"topics.create": "orders:3, events:2:compact,audit:1:3:retention.ms=600000,plain"})
    with running(b):
        status, topics = admin_call(b, "GET", "/v1/topics")
        got = {t["name"]: t for t in topics["topics"]}
        assert sorted(got) == ["audit", "events", "orders", "plain"], got
        assert len(got["orders"]["partitions"]) == 3 and len(got["plain"]["partitions"]) == 1
        assert admin_call(b, "GET", "/v1/topics/events")[1]["configs"]["cleanup.policy"] == "compact"
        assert admin_call(b, "GET", "/v1/topics/audit")[1]["configs"]["retention.ms"] == "600000"
        assert b.wait_for_log(r"created topic orders \(topics\.create\): 3 partitions")
        assert round_trip(b, "orders") == b"first record"
        # a topic changed since is left as it is at the next start
        since = b.log_size()
        assert admin_call(b, "POST", "/v1/topics", {"name": "extra"})[0] == 200
        b.restart()
        assert b.wait_for_log(r"topics\.create: topic orders exists; left as it is", since=since)
        assert len(admin_call(b, "GET", "/v1/topics")[1]["topics"]) == 5


def start_fails(topics_create):
    """The broker's stderr when topics.create stops its start (exit not 0)."""
    p = subprocess.run([str(broker_binary()), "--ports", "auto", "--data-dir", ":memory:", "--set", "admin.port=0"],
                       env=dict(broker_env(), MSKMOCK_TOPICS_CREATE=topics_create), capture_output=True, text=True,
                       timeout=20)
    assert p.returncode != 0, p.stderr
    return p.stderr


def test_bad_topics_create_entry_stops_start_with_the_entry_quoted():
    err = start_fails("orders:3,broken:x")
    assert "topics.create: entry 'broken:x': partitions 'x' is not a positive number" in err, err
    # refused as CreateTopics would refuse it: MSK Serverless does not let clients set segment.bytes
    err = start_fails("seg:1:segment.bytes=1048576")
    assert "topics.create: entry 'seg:1:segment.bytes=1048576': INVALID_CONFIG(40):" in err, err


def test_admin_api_creates_and_deletes_topics_with_createtopics_checks():
    b = Broker()
    with running(b):
        status, t = admin_call(b, "POST", "/v1/topics", {"name": "clicks", "partitions": 2,
                                                   "configs": {"retention.ms": "3600000"}})
        assert status == 200, t
        assert t["name"] == "clicks" and len(t["partitions"]) == 2 and t["configs"]["retention.ms"] == "3600000"
        assert round_trip(b, "clicks") == b"first record"
        status, e = admin_call(b, "POST", "/v1/topics", {"name": "clicks"})
        assert (status, e["code"]) == (409, "TOPIC_ALREADY_EXISTS"), e
        status, e = admin_call(b, "POST", "/v1/topics", {"name": "seg", "configs": {"segment.bytes": "1048576"}})
        assert (status, e["code"]) == (400, "INVALID_CONFIG"), e
        status, e = admin_call(b, "POST", "/v1/topics", {"name": "bad name!"})
        assert (status, e["code"]) == (400, "INVALID_TOPIC_EXCEPTION"), e
        status, e = admin_call(b, "POST", "/v1/topics", {"name": "x", "partitions": 0})
        assert (status, e["code"]) == (400, "INVALID_PARTITIONS"), e
        assert admin_call(b, "DELETE", "/v1/topics/clicks") == (200, {"deleted": "clicks"})
        status, e = admin_call(b, "DELETE", "/v1/topics/clicks")
        assert (status, e["code"]) == (404, "NotFound"), e
        assert b.wait_for_log(r"deleted topic clicks \(admin API\)")


def test_refusal_texts_name_the_profile_that_chose_them():
    """'as on MSK Serverless' only where the serverless profile chose the behaviour (issue 31,
    item 6): the provisioned profile refused auto-creation 'as on MSK Serverless' too."""
    import kafka_wire as kw
    for profile, note in (("serverless", "as on MSK Serverless"), ("provisioned", "MSK's default configuration")):
        b = Broker(config={"profile": profile})
        with running(b):
            with kw.connect(b.port) as s:
                s.sendall(kw.metadata_request(kw.METADATA_V, 3, "profile-note", ["no-such-topic"]))
                kw.recv_frame(s)
            line = b.wait_for_log(r"topic 'no-such-topic' does not exist \(auto\.create\.topics\.enable=false")
            assert line and note in line, (profile, line)
            assert profile == "serverless" or "MSK Serverless" not in line, line
