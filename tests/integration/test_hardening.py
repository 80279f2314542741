"""A hostile or careless peer cannot make the broker hold memory or connections without bound
(raw sockets, one broker with every listener for the module):

  test_unauthenticated_huge_frames_*   ten connections announce 90 MB frames before
                                       authenticating (SASL_PLAINTEXT and TLS): each is closed
                                       after the size prefix (sasl.server.max.receive.size), the
                                       broker's peak RSS stays small; an authenticated
                                       connection still sends a frame above that cap
  test_client_that_never_reads         300 Fetch requests of ~1 MB answers never read: the broker
                                       stops reading that connection (socket.response.queue.max.bytes),
                                       RSS stays bounded, other clients are served, and the
                                       answers all arrive in order once the client reads
  test_dripping_sender_*               a frame (or TLS handshake) that does not arrive whole within
                                       request.read.timeout.ms closes its connection with a log line
"""

import socket
import ssl
import time

import pytest

import kafka_wire as kw
from harness import running
from iam import ALICE, IamBroker, SaslConn, write_identities

pytestmark = pytest.mark.timeout(300)

READ_TIMEOUT_MS = 2000
HUGE = 90 << 20


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    ids = write_identities(tmp_path_factory.mktemp("hardening") / "identities.json")
    with running(IamBroker(ids, broker_count=1, credentials_endpoint=False,
                           config={"request.read.timeout.ms": READ_TIMEOUT_MS,
                                   "default.replication.factor": 1})) as b:
        yield b


def status_kib(broker, field):
    """VmRSS or VmHWM of the broker process, in KiB."""
    with open("/proc/%d/status" % broker.proc.pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise AssertionError("no %s in /proc/%d/status" % (field, broker.proc.pid))


def api_versions_ok(port):
    with kw.connect(port) as s:
        s.sendall(kw.api_versions_request(7, "probe"))
        corr, body = kw.recv_frame(s)
    assert corr == 7 and kw.parse_api_versions(body)[0] == 0


def flood(sockets, total):
    """Sends up to `total` bytes on each socket, 1 MiB at a time, round robin, until each
    has been closed by the broker; returns how many bytes each took."""
    chunk = b"\0" * (1 << 20)
    sent = [0] * len(sockets)
    open_ = set(range(len(sockets)))
    deadline = time.monotonic() + 60
    while open_ and time.monotonic() < deadline:
        for i in list(open_):
            try:
                sockets[i].sendall(chunk)
                sent[i] += len(chunk)
                if sent[i] >= total:
                    open_.discard(i)
            except (socket.timeout, BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
                open_.discard(i)
    return sent


def create_topic(broker, name):
    with kw.connect(broker.port) as s:
        s.sendall(kw.create_topics_request(kw.CREATE_TOPICS_V, 1, "it", name, 1, 1))
        _, body = kw.recv_frame(s)
    assert kw.parse_create_topics(kw.CREATE_TOPICS_V, body)[0]["error"] == 0, body


def produce(sock, topic, value, corr):
    sock.sendall(kw.produce_request(kw.PRODUCE_V, corr, "it", topic, 0, kw.record_batch([(b"k", value, ())])))
    got, body = kw.recv_frame(sock)
    assert got == corr
    (p,) = kw.parse_produce(kw.PRODUCE_V, body)[0]["partitions"]
    assert p["error"] == 0, p
    return p["base_offset"]


def test_unauthenticated_huge_frames_sasl_plaintext(broker):
    before = status_kib(broker, "VmHWM")
    since = broker.log_size()
    socks = [kw.connect(broker.sasl_plaintext_port, timeout=5) for _ in range(10)]
    try:
        for s in socks:
            s.sendall(kw.i32(HUGE))
        sent = flood(socks, HUGE)
        for s in socks:
            assert kw.wait_closed(s, timeout=5) is None, "a connection announcing %d bytes stayed open" % HUGE
    finally:
        for s in socks:
            s.close()
    grown = (status_kib(broker, "VmHWM") - before) / 1024
    print("sent before the close: %s MiB; peak RSS grew %.1f MiB" % ([n >> 20 for n in sent], grown))
    assert grown < 16, "the broker's peak RSS grew %.1f MiB while 10 strangers sent 90 MB frames" % grown
    line = broker.wait_for_log(r"refused frame: size %d is outside \[0, sasl\.server\.max\.receive\.size=524288\] "
                               r"before authentication" % HUGE, since=since)
    assert line, broker.log_tail()
    api_versions_ok(broker.port)


def test_unauthenticated_huge_frames_tls(broker):
    ctx = ssl.create_default_context(cafile=str(broker.ca_path))
    before = status_kib(broker, "VmHWM")
    since = broker.log_size()
    socks = []
    try:
        for _ in range(10):
            s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", broker.iam_port), timeout=5),
                                server_hostname="localhost")
            s.sendall(kw.i32(HUGE))
            socks.append(s)
        flood(socks, HUGE)
        for s in socks:
            s.settimeout(5)
            try:
                assert s.recv(1) == b"", "a TLS connection announcing %d bytes stayed open" % HUGE
            except (ConnectionResetError, ssl.SSLError):
                pass
    finally:
        for s in socks:
            s.close()
    grown = (status_kib(broker, "VmHWM") - before) / 1024
    assert grown < 16, "the broker's peak RSS grew %.1f MiB (TLS)" % grown
    assert broker.wait_for_log(r"size %d is outside \[0, sasl\.server\.max\.receive\.size=524288\]" % HUGE,
                               since=since), broker.log_tail()


def test_authenticated_frame_above_the_pre_authentication_cap(broker):
    create_topic(broker, "hardening-big")
    with SaslConn(broker.sasl_plaintext_port) as c:
        c.login_oauthbearer(ALICE)
        value = b"v" * (700 << 10)  # above the 512 KiB cap, below message.max.bytes
        assert produce(c.sock, "hardening-big", value, 100) == 0


def test_client_that_never_reads(broker):
    topic = "hardening-fetch"
    create_topic(broker, topic)
    with kw.connect(broker.port) as s:
        for i in range(4):  # ~1 MB in the partition: every Fetch below answers ~1 MB
            produce(s, topic, bytes([65 + i]) * (250 << 10), 200 + i)
    rss_before = status_kib(broker, "VmRSS")
    count = 300
    hog = kw.connect(broker.port, timeout=10)
    hog.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 10)
    try:
        hog.setblocking(False)
        frames = b"".join(kw.fetch_request(1000 + i, "hog", topic, 0, 0) for i in range(count))
        sent, t_end = 0, time.monotonic() + 10
        while sent < len(frames) and time.monotonic() < t_end:  # the broker stops reading: not all may go
            try:
                sent += hog.send(frames[sent:])
            except BlockingIOError:
                time.sleep(0.05)
        time.sleep(2)  # let the broker answer what it read
        grown = (status_kib(broker, "VmRSS") - rss_before) / 1024
        print("requests sent %d of %d bytes; broker RSS grew %.1f MiB" % (sent, len(frames), grown))
        assert grown < 64, "RSS grew %.1f MiB with %d Fetch answers unread" % (grown, count)
        # other clients are served meanwhile
        api_versions_ok(broker.port)
        with kw.connect(broker.port) as other:
            produce(other, topic, b"other", 300)

        # once the client reads, every answer arrives, in order, and the rest of its requests are read
        hog.setblocking(True)
        hog.settimeout(20)
        while sent < len(frames):
            sent += hog.send(frames[sent:])
        for i in range(count):
            corr, body = kw.recv_frame(hog)
            assert corr == 1000 + i, "answer %d has correlation id %d" % (i, corr)
            assert len(body) > 900 << 10, "answer %d is only %d bytes" % (i, len(body))
    finally:
        hog.close()
    broker.assert_alive()


def test_dripping_sender_is_closed(broker):
    since = broker.log_size()
    with kw.connect(broker.port, timeout=10) as s:
        frame = kw.api_versions_request(1, "drip")
        t0 = time.monotonic()
        closed = None
        for b in frame:
            try:
                s.sendall(bytes([b]))
            except (BrokenPipeError, ConnectionResetError):
                closed = time.monotonic() - t0
                break
            time.sleep(0.5)
            if time.monotonic() - t0 > 10:
                break
        if closed is None:
            assert kw.wait_closed(s, timeout=3) is None, "a frame dripping one byte per 0.5 s was never cut off"
        elapsed = time.monotonic() - t0
    assert READ_TIMEOUT_MS / 1000 <= elapsed < READ_TIMEOUT_MS / 1000 + 4, elapsed
    line = broker.wait_for_log(r"closed: .*request\.read\.timeout\.ms=%d" % READ_TIMEOUT_MS, since=since)
    assert line, broker.log_tail()


def test_dripping_tls_handshake_is_closed(broker):
    since = broker.log_size()
    with kw.connect(broker.iam_port, timeout=10) as s:
        s.sendall(b"\x16\x03\x01")  # the start of a TLS record, and nothing more
        t0 = time.monotonic()
        assert kw.wait_closed(s, timeout=READ_TIMEOUT_MS / 1000 + 4) is None
        elapsed = time.monotonic() - t0
    assert elapsed >= READ_TIMEOUT_MS / 1000 - 0.5, elapsed
    assert broker.wait_for_log(r"the TLS handshake did not complete within request\.read\.timeout\.ms=%d"
                               % READ_TIMEOUT_MS, since=since), broker.log_tail()


def test_slow_but_steady_frame_under_the_deadline_is_served(broker):
    with kw.connect(broker.port, timeout=10) as s:
        frame = kw.api_versions_request(5, "steady")
        half = len(frame) // 2
        s.sendall(frame[:half])
        time.sleep(READ_TIMEOUT_MS / 2000)
        s.sendall(frame[half:])
        corr, body = kw.recv_frame(s)
    assert corr == 5 and kw.parse_api_versions(body)[0] == 0
