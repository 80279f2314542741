"""The admin API stays up under abuse (issue 35, item 4): health and readiness answered while one
peer keeps 80 slow-header connections open and re-opens each one closed; a path that is not UTF-8
answered 404, not 500; two Authorization headers refused (400) rather than one of them chosen."""

import socket
import threading
import time
import urllib.error
import urllib.request

import pytest

from harness import Broker, running


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    b = Broker(config={"admin.token": "s3cret"}, data_dir=tmp_path_factory.mktemp("surfaces"))
    with running(b):
        yield b


def raw(broker, request, timeout=5):
    """(status, the whole answer) of one request sent as the bytes given."""
    with socket.create_connection(("127.0.0.1", broker.admin_port), timeout=timeout) as s:
        s.sendall(request)
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    return int(data.split(b" ", 2)[1]), data


class SlowHeaders:
    """n connections from one peer, each sending a request head a byte a second and never ending
    it; a connection the broker closes is opened again at once (the slowloris of the review)."""

    def __init__(self, port, n):
        self.port, self.n, self.stop, self.reopened = port, n, threading.Event(), 0
        self.thread = threading.Thread(target=self.run, daemon=True)

    def open_one(self):
        s = socket.socket()
        s.setblocking(False)
        try:
            s.connect(("127.0.0.1", self.port))
        except BlockingIOError:
            pass
        return s

    def run(self):
        socks = [self.open_one() for _ in range(self.n)]
        started = [False] * self.n
        while not self.stop.is_set():
            for i, s in enumerate(socks):
                try:
                    s.send(b"GET /v1/health HTTP/1.1\r\nX-Slow: " if not started[i] else b"a")
                    started[i] = True
                    s.setblocking(False)
                    if s.recv(4096) == b"":
                        raise ConnectionResetError
                except (BlockingIOError, InterruptedError):
                    pass
                except OSError:
                    s.close()
                    socks[i], started[i] = self.open_one(), False
                    self.reopened += 1
            self.stop.wait(0.05)
        for s in socks:
            s.close()

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join(10)


def probe(broker, path):
    try:
        with urllib.request.urlopen(broker.admin_url + path, timeout=2) as r:
            return r.status
    except (OSError, urllib.error.URLError) as e:
        return getattr(e, "code", None) or repr(e)


def test_health_under_80_slow_header_peers(broker):
    """One local peer holding 80 slow-header connections (more than the 64 slots) and re-opening
    each one closed: every health and readiness probe, from the same address, is answered."""
    since = broker.log_size()
    with SlowHeaders(broker.admin_port, 80) as flood:
        time.sleep(1.5)  # the flood holds every slot it can
        answers = []
        for i in range(12):
            answers.append(probe(broker, "/v1/health" if i % 2 == 0 else "/v1/ready"))
            time.sleep(0.25)
        reopened = flood.reopened
    assert answers == [200] * 12, answers
    assert reopened > 0  # the broker did close slow connections to make room
    assert broker.wait_for_log(r"admin: peer=\S+ closed with \d+ bytes of an unfinished request to make room",
                               since=since)
    broker.assert_alive()


def test_not_utf8_path_is_404(broker):
    status, body = raw(broker, b"GET /v1/\xff\xfe%C3%28 HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status == 404, body
    assert b'"NotFound"' in body
    status, body = raw(broker, b"GET /v1/topics/%FF%FE HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cret\r\n\r\n")
    assert status == 404, body
    status, body = raw(broker, b"GET /v1/clusters/%FF/v1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cret\r\n\r\n")
    assert status == 404, body


def test_unknown_paths_are_404(broker):
    for path in (b"/", b"/v2/health", b"/v1/health/x", b"/v1//health", b"/%2e%2e/v1/health", b"/metrics/x"):
        status, body = raw(broker, b"GET " + path + b" HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cret\r\n\r\n")
        assert status == 404, (path, body)


def test_two_authorization_headers_refused(broker):
    status, body = raw(broker, b"GET /v1/topics HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cret\r\n"
                               b"Authorization: Bearer s3cret\r\n\r\n")
    assert status == 400 and b"more than one Authorization header" in body, body
    # split so that joining them with ", " or "" would read as the token
    status, body = raw(broker, b"GET /v1/topics HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3c\r\n"
                               b"Authorization: ret\r\n\r\n")
    assert status == 400, body
    status, _ = raw(broker, b"GET /v1/topics HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cret\r\n\r\n")
    assert status == 200
