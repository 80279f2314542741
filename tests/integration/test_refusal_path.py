"""The refusal path keeps its promises: answers queued before a refusal still go out, in order,
and every refused request is logged once (issue 31, bugs 9a and 9d).

- A client that pipelines requests (ApiVersions v0 and Metadata v0 in one write, as old clients
  do) to the serverless profile, whose floor closes Metadata v0 unanswered, used to lose the
  ApiVersions answer on 20 of 20 connections: the connection was closed before the answer
  queued ahead of the refused request was written. Kafka answers a connection's requests in
  order, so the first answer arrives, then the connection closes.
- A refused Fetch was logged three times with one connection and correlation id: the egress
  quota's passes resolved the topic again and logged its refusal each time.
"""

import re

import pytest

import kafka_wire as kw



@pytest.fixture(scope="module")
def broker_config():
    # MSK Serverless's egress quota on, as by default (the harness turns quotas off)
    return {"quota.partition.egress.bytes.per.second": 10485760}


def read_answers_until_closed(sock):
    """Correlation ids of the answers read before the broker closed the connection."""
    corrs = []
    while True:
        try:
            corr, _ = kw.recv_frame(sock)
        except (kw.Closed, ConnectionError, EOFError, OSError):
            return corrs
        corrs.append(corr)


def closed_after(sock):
    try:
        return read_answers_until_closed(sock)
    finally:
        sock.close()


def test_answer_before_a_refused_request_is_written(broker):
    """Serverless: Metadata v0 is below the floor and closes the connection, ApiVersions v0 is served."""
    for i in range(20):
        s = kw.connect(broker.port)
        s.sendall(kw.api_versions_request(1, "pipelined", version=0)
                  + kw.request(3, 0, 2, "pipelined", kw.array(["t"], kw.string)))  # Metadata v0
        assert closed_after(s) == [1], "connection %d: the ApiVersions answer was lost\n%s" % (i, broker.log_tail())
    assert broker.wait_for_log(r"refused Metadata v0 corr=2: .*closing as MSK does")


def test_answer_before_an_unknown_api_key_is_written():
    from harness import Broker
    b = Broker(config={"profile": "kafka"})
    b.start()
    try:
        s = kw.connect(b.port)
        s.sendall(kw.api_versions_request(1, "pipelined") + kw.request(999, 0, 2, "pipelined", b""))
        assert closed_after(s) == [1], b.log_tail()
        assert b.wait_for_log(r"refused request \(key 999\) v0 corr=2: unknown or unserved API key")
    finally:
        b.stop(check=True)
        b.cleanup()


def test_refused_fetch_is_logged_once(broker):
    """A fetch of a topic that does not exist, with the egress quota on: one refusal line."""
    since = broker.log_size()
    s = kw.connect(broker.port)
    try:
        s.sendall(kw.fetch_request(4242, "once", "no-such-topic", 0, 0))
        corr, _ = kw.recv_frame(s)
        assert corr == 4242
    finally:
        s.close()
    assert broker.wait_for_log(r"corr=4242 .*no-such-topic", since=since)
    logged = broker.log_path.read_bytes()[since:].decode(errors="replace")
    lines = [ln for ln in logged.splitlines() if re.search(r"corr=4242\b", ln) and "no-such-topic" in ln]
    assert len(lines) == 1, lines
