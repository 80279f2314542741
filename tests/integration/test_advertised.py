"""Advertised listeners set after start (issue 31, item 5): PUT /v1/listeners/NAME/advertised.

A container's external listener is bound on a port inside the container and published on a host
port Docker picks at start. Here a TCP relay stands in for Docker's port mapping: the client dials
only the relay, and a round trip works only if Metadata and FindCoordinator name the relay's port
once the wrapper has told the broker. Plaintext with librdkafka, and TLS + OAUTHBEARER (the
official Python signer) on the external IAM listener.
"""

import socket
import threading
import uuid

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from harness import admin_call, find_free_port_range, running
from iam import ALICE, REGION, IamBroker, oauthbearer_token, write_identities


class Relay:
    """Accepts on a free loopback port and pipes each connection to target: a published port."""

    def __init__(self, target_port):
        self.target = target_port
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            try:
                u = socket.create_connection(("127.0.0.1", self.target))
            except OSError:
                c.close()
                continue
            for a, b in ((c, u), (u, c)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(a, b):
        try:
            while True:
                d = a.recv(65536)
                if not d:
                    break
                b.sendall(d)
        except OSError:
            pass
        finally:
            for s in (a, b):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self):
        self.sock.close()




@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    ids = write_identities(tmp_path_factory.mktemp("ids") / "identities.json")
    ext = find_free_port_range(2)
    b = IamBroker(ids, broker_count=1, config={
        "external.port": ext, "external.iam.port": ext + 1, "external.advertised.host": "127.0.0.1",
        "group.initial.rebalance.delay.ms": 0, "default.replication.factor": 1})
    with running(b):
        yield b


@pytest.fixture
def relays(broker):
    made = []

    def make(listener):
        status, doc = admin_call(broker, "GET", "/v1/listeners")
        assert status == 200, doc
        bound = {l["name"]: l["ports"] for l in doc["listeners"]}[listener]
        r = Relay(bound[0])
        made.append((listener, r))
        return r

    yield make
    for listener, r in made:
        admin_call(broker, "DELETE", "/v1/listeners/%s/advertised" % listener)
        r.close()


def round_trip(conf, topic):
    admin = AdminClient(conf)
    for f in admin.create_topics([NewTopic(topic, 1)]).values():
        f.result(15)
    p = Producer(conf)
    p.produce(topic, b"through the mapped port")
    assert p.flush(15) == 0
    c = Consumer(dict(conf, **{"group.id": "g-" + topic, "auto.offset.reset": "earliest"}))
    try:
        c.subscribe([topic])
        for _ in range(60):
            m = c.poll(0.5)
            if m is not None and m.error() is None:
                c.commit(m, asynchronous=False)  # through the coordinator FindCoordinator named
                return m.value()
    finally:
        c.close()


def test_external_listener_advertises_the_mapped_port(broker, relays):
    relay = relays("external")
    conf = {"bootstrap.servers": "127.0.0.1:%d" % relay.port}
    before = AdminClient(conf).list_topics(timeout=10)
    assert [b.port for b in before.brokers.values()] != [relay.port]  # the container's own port

    status, doc = admin_call(broker, "PUT", "/v1/listeners/external/advertised", {"ports": [relay.port]})
    assert status == 200, doc
    assert doc["advertised_ports"] == [relay.port] and doc["overridden"] is True
    assert doc["bootstrap"] == "127.0.0.1:%d" % relay.port
    md = AdminClient(conf).list_topics(timeout=10)
    assert [(b.host, b.port) for b in md.brokers.values()] == [("127.0.0.1", relay.port)]
    assert round_trip(conf, "adv-" + uuid.uuid4().hex[:6]) == b"through the mapped port"
    assert broker.wait_for_log(r"external listener advertised by the admin API: clients are now told 127\.0\.0\.1, "
                               r"port %d \(bound on \d+\)" % relay.port)

    # the plaintext listener inside the "container network" is untouched
    inside = AdminClient({"bootstrap.servers": broker.bootstrap}).list_topics(timeout=10)
    assert [b.port for b in inside.brokers.values()] == [broker.port]


def test_external_iam_listener_with_tls_and_oauthbearer_through_the_mapped_port(broker, relays):
    relay = relays("external_iam")
    status, doc = admin_call(broker, "PUT", "/v1/listeners/external_iam/advertised",
                       {"host": "localhost", "ports": [relay.port]})
    assert status == 200, doc
    conf = {"bootstrap.servers": "localhost:%d" % relay.port, "security.protocol": "SASL_SSL",
            "sasl.mechanisms": "OAUTHBEARER", "ssl.ca.location": str(broker.ca_path),
            "oauth_cb": lambda _cfg: (lambda t: (t[0], t[1] / 1000))(oauthbearer_token(ALICE, REGION))}
    md = AdminClient(conf).list_topics(timeout=15)
    assert [(b.host, b.port) for b in md.brokers.values()] == [("localhost", relay.port)]
    assert round_trip(conf, "adv-iam-" + uuid.uuid4().hex[:6]) == b"through the mapped port"


def test_delete_goes_back_to_the_configured_listener(broker, relays):
    relay = relays("external")
    assert admin_call(broker, "PUT", "/v1/listeners/external/advertised", {"ports": [relay.port]})[0] == 200
    status, doc = admin_call(broker, "DELETE", "/v1/listeners/external/advertised")
    assert status == 200 and doc["overridden"] is False and doc["advertised_ports"] == doc["ports"]
    md = AdminClient({"bootstrap.servers": "127.0.0.1:%d" % relay.port}).list_topics(timeout=10)
    assert [b.port for b in md.brokers.values()] == doc["ports"]


@pytest.mark.parametrize("path,body,status,code,text", [
    ("external", {}, 400, "MissingField", "give host, ports, or both"),
    ("external", {"ports": [1, 2]}, 400, "InvalidField", "an array of 1 port, one per broker"),
    ("external", {"ports": [0]}, 400, "InvalidField", "ports[0] must be a port number"),
    ("external", {"host": "two words"}, 400, "InvalidField", "is not a host name"),
    ("external", {"port": 5}, 400, None, "port"),
    ("external_iam", {"host": "kafka.example.com"}, 409, "HostNotCovered",
     "set external.advertised.host or tls.hosts to it at start"),
    ("nosuch", {"ports": [1]}, 404, "NotFound", "no listener 'nosuch'"),
])
def test_advertised_refusals_name_the_problem(broker, path, body, status, code, text):
    got, doc = admin_call(broker, "PUT", "/v1/listeners/%s/advertised" % path, body)
    assert got == status, doc
    if code:
        assert doc["code"] == code
    assert text in doc["message"]
    assert admin_call(broker, "GET", "/v1/listeners")[1]["listeners"][0]["overridden"] is False


def test_a_listener_that_is_off_cannot_be_advertised(tmp_path):
    from harness import Broker
    b = Broker(broker_count=1)
    with running(b):
        status, doc = admin_call(b, "PUT", "/v1/listeners/external/advertised", {"ports": [1234]})
        assert status == 409 and doc["code"] == "ListenerOff", doc
        assert "listeners on: plaintext" in doc["message"]
