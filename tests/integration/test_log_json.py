"""log.format=json: every line one JSON object with ts, level and component, and while a
connection or request is served its conn id, client id, principal and API; a refusal carries
the Kafka error_code. Driven by confluent-kafka and raw requests."""

import json

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

import kafka_wire as kw
from harness import Broker, running


@pytest.fixture(scope="module")
def broker():
    with running(Broker(broker_count=1, config={"log.format": "json", "default.replication.factor": 1})) as b:
        yield b


def lines(broker):
    """Every line the broker logged, parsed. The harness's file also holds its own "=== harness"
    markers and the broker's stdout, whose one line is "mskmock ready {...}"."""
    out = []
    for ln in broker.log_text().splitlines():
        if ln.startswith(("=== harness", "mskmock ready ")) or not ln.strip():
            continue
        out.append(json.loads(ln))  # fails the test on a line that is not JSON
    return out


def test_every_line_is_a_json_object_with_the_fixed_fields(broker):
    a = AdminClient({"bootstrap.servers": broker.bootstrap, "client.id": "json-admin"})
    a.create_topics([NewTopic("logged", num_partitions=1)])["logged"].result(20)
    p = Producer({"bootstrap.servers": broker.bootstrap, "client.id": "json-producer"})
    p.produce("logged", b"v")
    assert p.flush(20) == 0
    got = lines(broker)
    assert got
    for o in got:
        assert set(o) >= {"ts", "level", "component", "message"}, o
        assert o["ts"].endswith("Z") and o["level"] in ("error", "warn", "info", "debug")
    ready = [o for o in got if "ready in" in o["message"]]
    assert ready and ready[0]["component"] == "main" and "conn" not in ready[0]
    opened = [o for o in got if o.get("client") == "json-producer" and " open " in o["message"]]
    assert opened and opened[0]["component"] == "net" and isinstance(opened[0]["conn"], int)


def test_a_refusal_carries_conn_client_api_and_error_code(broker):
    since = broker.log_size()
    with kw.connect(broker.port) as s:
        s.sendall(kw.produce_request(kw.PRODUCE_V, 6, "json-raw", "no-such-topic", 0,
                                     kw.record_batch([(None, b"x", ())])))
        kw.recv_frame(s)
    assert broker.wait_for_log("no-such-topic", since=since)
    refusal = [o for o in lines(broker) if "no-such-topic" in o["message"]][0]
    assert refusal["level"] == "warn" and refusal["component"] == "api"
    assert refusal["client"] == "json-raw" and refusal["api"] == "Produce" and refusal["principal"] == "ANONYMOUS"
    assert refusal["error_code"] == 3 and isinstance(refusal["conn"], int)


def test_lines_outside_a_request_name_no_connection(broker):
    """The close line names its connection; a line written afterwards by the same callback
    does not inherit it."""
    since = broker.log_size()
    with kw.connect(broker.port) as s:
        s.sendall(kw.request(3, 1, 5, "json-old", kw.i32(0)))  # Metadata v1: below the floor, closed
        assert kw.wait_closed(s) is None
    assert broker.wait_for_log("json-old.*reason=request refused", since=since)
    mine = [o for o in lines(broker) if o.get("client") == "json-old"]
    assert [o["message"].split(" ")[1] for o in mine] == ["open", "client=json-old", "close"]
    assert mine[1]["api"] == "Metadata" and "error_code" not in mine[1]
    assert "api" not in mine[2], "the close line is the connection's, not the request's"
