"""Large frames that arrive in many pieces, over plaintext and over TLS (the IAM listener).

The broker reads a large frame straight into a buffer of its own once the frame has begun to
arrive (broker/net/net.c). These tests send a ~400 KiB Produce frame in small, paced chunks, with
an ApiVersions request in the same byte stream right behind it, and check that:
  - both requests are answered, in order, and the batch is stored intact (read back with
    confluent-kafka and compared byte for byte);
  - a client that announces a large frame and hangs up mid-way is logged and costs nothing else.
"""

import socket
import ssl
import time

import pytest

import iam
import kafka_wire as kw
from iam import ALICE, IamBroker, SaslConn

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

PRODUCE_V = 8
RECORDS = 50
VALUE_BYTES = 8000
CHUNK = 997  # not a divisor of anything in the frame, so chunk edges fall everywhere


def big_batch(seed):
    rnd = __import__("random").Random(seed)
    values = [bytes(rnd.getrandbits(8) for _ in range(VALUE_BYTES)) for _ in range(RECORDS)]
    batch = kw.record_batch([(b"k%d" % i, v, [(b"h", b"%d" % i)]) for i, v in enumerate(values)])
    return batch, values


def send_in_pieces(sock, data):
    """Sends data in CHUNK-byte pieces, pausing now and then so the broker reads it in many
    separate reads rather than a few large ones."""
    for i in range(0, len(data), CHUNK):
        sock.sendall(data[i:i + CHUNK])
        if (i // CHUNK) % 40 == 0:
            time.sleep(0.002)


def create_topic(bootstrap, name, config=None):
    admin = AdminClient({"bootstrap.servers": bootstrap, **(config or {})})
    admin.create_topics([NewTopic(name, 1)])[name].result(timeout=30)


def leader_port(sock_factory, topic):
    """Port of the leader of partition 0 of topic, asked over a connection from sock_factory."""
    s = sock_factory()
    try:
        s.sendall(kw.metadata_request(kw.METADATA_V, 1, "framing", [topic]))
        _, body = kw.recv_frame(s)
    finally:
        s.close()
    md = kw.parse_metadata(kw.METADATA_V, body)
    leader = md["topics"][0]["partitions"][0]["leader"]
    return md["brokers"][leader][1]


def produce_in_pieces_then_api_versions(sock, topic, batch):
    frame = kw.produce_request(PRODUCE_V, 7, "framing", topic, 0, batch)
    assert len(frame) > 300 * 1024
    send_in_pieces(sock, frame + kw.api_versions_request(8, "framing"))
    corr, body = kw.recv_frame(sock)
    assert corr == 7, "first answer has correlation id %d, expected the Produce's 7" % corr
    p = kw.parse_produce(PRODUCE_V, body)[0]["partitions"][0]
    assert p["error"] == 0 and p["base_offset"] == 0, p
    corr, body = kw.recv_frame(sock)
    assert corr == 8, "second answer has correlation id %d, expected the ApiVersions' 8" % corr
    err, _, _ = kw.parse_api_versions(body)
    assert err == 0


def read_back(conf, topic, values):
    c = Consumer({"group.id": "framing", "enable.auto.commit": False, **conf})
    c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    got = []
    deadline = time.time() + 30
    while len(got) < len(values) and time.time() < deadline:
        m = c.poll(0.5)
        if m is None:
            continue
        assert not m.error(), m.error()
        got.append(m.value())
    c.close()
    assert len(got) == len(values), "read %d of %d records back" % (len(got), len(values))
    assert got == values, "records read back differ from those produced"


def test_large_frame_in_pieces_plaintext(broker):
    topic = "framing-plain"
    create_topic(broker.bootstrap, topic)
    port = leader_port(lambda: kw.connect(broker.port), topic)
    batch, values = big_batch(1)
    with kw.connect(port) as s:
        produce_in_pieces_then_api_versions(s, topic, batch)
    read_back({"bootstrap.servers": broker.bootstrap}, topic, values)


def test_announced_frame_then_hang_up(broker):
    """A client announces a 50 MB frame (under socket.request.max.bytes), sends 100 KB of it and
    closes: the broker logs it and keeps serving."""
    since = broker.log_size()
    with kw.connect(broker.port) as s:
        s.sendall(kw.i32(50 * 1000 * 1000) + kw.i16(kw.API_PRODUCE) + kw.i16(PRODUCE_V) + kw.i32(1))
        send_in_pieces(s, b"\0" * 100000)
    line = broker.wait_for_log(r"closed by peer inside a frame \((\d+) bytes pending\)", since=since)
    assert line is not None, broker.log_since(since)
    broker.assert_alive()
    with kw.connect(broker.port) as s:
        s.sendall(kw.api_versions_request(1, "framing"))
        corr, _ = kw.recv_frame(s)
        assert corr == 1


# -- TLS: the same through the IAM listener ---------------------------------------------------

@pytest.fixture(scope="module")
def tls_broker(tmp_path_factory):
    ids = iam.write_identities(tmp_path_factory.mktemp("iam") / "identities.json")
    b = IamBroker(ids, broker_count=3, credentials_endpoint=False)
    b.start()
    yield b
    try:
        b.assert_alive()
        b.stop(check=True)
    finally:
        b.cleanup()


class TlsSaslConn(SaslConn):
    """SaslConn over TLS, trusting the broker's generated CA."""

    def __init__(self, broker, port):
        ctx = ssl.create_default_context(cafile=str(broker.ca_path))
        ctx.check_hostname = False
        raw = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.sock = ctx.wrap_socket(raw, server_hostname="localhost")
        self.client_id = "framing-tls"
        self.corr = 0


def test_large_frame_in_pieces_tls(tls_broker):
    b = tls_broker
    topic = "framing-tls"
    create_topic(b.sasl_plaintext_bootstrap, topic, {"security.protocol": "SASL_PLAINTEXT",
                                                     "sasl.mechanisms": "OAUTHBEARER",
                                                     "oauth_cb": _oauth_cb})

    def login(port):
        c = TlsSaslConn(b, port)
        c.login_oauthbearer(ALICE)
        return c

    first = login(b.iam_port)
    try:
        first.sock.sendall(kw.metadata_request(kw.METADATA_V, 99, "framing-tls", [topic]))
        _, body = kw.recv_frame(first.sock)
    finally:
        first.close()
    md = kw.parse_metadata(kw.METADATA_V, body)
    leader = md["topics"][0]["partitions"][0]["leader"]
    port = md["brokers"][leader][1]
    batch, values = big_batch(2)
    c = login(port)
    try:
        produce_in_pieces_then_api_versions(c.sock, topic, batch)
    finally:
        c.close()
    read_back({"bootstrap.servers": b.sasl_plaintext_bootstrap, "security.protocol": "SASL_PLAINTEXT",
               "sasl.mechanisms": "OAUTHBEARER", "oauth_cb": _oauth_cb}, topic, values)


def _oauth_cb(_config):
    token, expiry_ms = iam.oauthbearer_token(ALICE)
    return token, expiry_ms / 1000.0
