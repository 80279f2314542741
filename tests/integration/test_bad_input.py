"""Malformed and refused requests over raw sockets (no Kafka client library).

Each test sends one bad thing, checks the broker's reaction (close, or the Kafka error answer),
then checks that a fresh connection still gets a correct ApiVersions answer and that the log
explains the refusal in one line.
"""

import itertools
import re

import pytest

import kafka_wire as kw

MAX_REQUEST_BYTES = 1 << 20
_corr = itertools.count(1)


@pytest.fixture(scope="module")
def broker_config():
    return {"socket.request.max.bytes": MAX_REQUEST_BYTES}


def api_versions(port, client_id="probe"):
    """A clean ApiVersions v2 exchange (what current clients send) on a fresh connection; returns
    {key: (min, max)}."""
    v = kw.API_VERSIONS_V
    corr = next(_corr)
    with kw.connect(port) as s:
        s.sendall(kw.api_versions_request(corr, client_id, version=v))
        got_corr, body = kw.recv_frame(s)
    assert got_corr == corr, "ApiVersions v%d: correlation id %d, sent %d" % (v, got_corr, corr)
    err, ranges, rest = kw.parse_api_versions(body, v)
    assert err == kw.ERR_NONE, "ApiVersions v%d answered error %d" % (v, err)
    assert rest == 0, "ApiVersions v%d answer has %d trailing bytes" % (v, rest)
    assert kw.API_API_VERSIONS in ranges, "ApiVersions v%d answer lacks ApiVersions itself" % v
    lo, hi = ranges[kw.API_API_VERSIONS]
    assert lo <= v and hi >= 3, "ApiVersions range %d-%d, expected %d-3 or wider" % (lo, hi, v)
    return ranges


@pytest.fixture(scope="module")
def ranges(broker):
    return api_versions(broker.port)


@pytest.fixture
def after_check(broker):
    """Yields a function asserting: broker alive, fresh ApiVersions OK, and a log line
    written since the test started that matches `pattern` (and, if given, names client_id)."""
    start = broker.log_size()

    def check(pattern, what, client_id=None):
        # The log is read before the probe connection so that only the bad connection's
        # lines are candidates.
        line = broker.wait_for_log(
            pattern if client_id is None else re.escape(client_id) + ".*(" + pattern + ")"
            + "|(" + pattern + ").*" + re.escape(client_id),
            since=start)
        new = broker.log_since(start).strip() or "(nothing)"
        broker.assert_alive()
        api_versions(broker.port)
        assert line is not None, (
            "no log line explaining the refusal (%s); wanted /%s/%s. Log lines since the "
            "test started:\n%s" % (what, pattern,
                                   " with client id %r" % client_id if client_id else "", new))

    return check


def pick_version(ranges, api_key, lo, hi, prefer):
    """The version to use for api_key: `prefer` when advertised, else the lowest advertised
    version within the encoder's lo..hi."""
    assert api_key in ranges, "broker does not advertise API key %d" % api_key
    blo, bhi = ranges[api_key]
    if blo <= prefer <= bhi:
        return prefer
    for v in range(max(lo, blo), min(hi, bhi) + 1):
        return v
    pytest.fail("broker advertises API %d v%d-%d; this encoder speaks v%d-%d"
                % (api_key, blo, bhi, lo, hi))


def test_api_versions_baseline(broker, ranges):
    # The advertised table is what the rest of this file relies on.
    assert kw.API_PRODUCE in ranges and kw.API_METADATA in ranges
    for key, (lo, hi) in ranges.items():
        assert 0 <= lo <= hi, "API %d advertised with range %d-%d" % (key, lo, hi)


def test_truncated_frame_then_close(broker, after_check):
    with kw.connect(broker.port) as s:
        frame = kw.api_versions_request(next(_corr), "bad-truncated")
        # Announce 100 bytes of payload, send only part of the request, then hang up.
        s.sendall(kw.i32(100) + frame[4:14])
    after_check(r"trunc|partial|incomplete|(mid|inside a|within a|in a)[ -]frame|unexpected (eof|end)|before .*complete"
                r"|of 100\b|100 bytes", "client closed mid-frame")


def test_frame_above_socket_request_max_bytes_closes(broker, after_check):
    size = 2 * MAX_REQUEST_BYTES
    with kw.connect(broker.port) as s:
        s.sendall(kw.i32(size) + kw.i16(kw.API_API_VERSIONS) + kw.i16(kw.API_VERSIONS_V) + kw.i32(1))
        outcome = kw.wait_closed(s)
    assert outcome is None, "frame of %d bytes (limit %d): %s" % (size, MAX_REQUEST_BYTES, outcome)
    after_check(r"%d|socket\.request\.max\.bytes|too (large|big)|exceed" % size,
                "frame size %d above socket.request.max.bytes" % size)


@pytest.mark.parametrize("garbage,reason", [
    # Read as a size, "GET " is 1195725856: far above the limit.
    (b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n", r"1195725856|too (large|big)|exceed"),
    # A negative size.
    (b"\xff\xff\xff\xfe" + b"\x00" * 16, r"-2\b|negative|invalid"),
    # A frame too short to hold a request header.
    (b"\x00\x00\x00\x03abc", r"short|trunc|header|invalid|malformed"),
    # A complete frame whose header is all 0xff: API key -1, version -1.
    (b"\x00\x00\x00\x0a" + b"\xff" * 10, r"-1\b|unknown|unsupported|invalid|malformed"),
], ids=["http", "negative-size", "short-header", "all-ff-header"])
def test_garbage_bytes_close(broker, after_check, garbage, reason):
    with kw.connect(broker.port) as s:
        s.sendall(garbage)
        outcome = kw.wait_closed(s)
    assert outcome is None, "after garbage %r: %s" % (garbage[:24], outcome)
    after_check(reason, "garbage %r" % garbage[:24])


def test_unknown_api_key_closes(broker, after_check):
    client_id = "bad-unknown-api-key"
    with kw.connect(broker.port) as s:
        s.sendall(kw.request(9999, 0, next(_corr), client_id, b""))
        outcome = kw.wait_closed(s)
    assert outcome is None, "request with API key 9999: %s" % outcome
    after_check(r"9999", "unknown API key 9999", client_id=client_id)


def test_api_versions_v99_answers_unsupported_version(broker, ranges, after_check):
    client_id = "bad-api-versions-v99"
    corr = next(_corr)
    with kw.connect(broker.port) as s:
        s.sendall(kw.api_versions_request(corr, client_id, version=99))
        got_corr, body = kw.recv_frame(s)
        # The connection stays usable: the client retries with a version it finds in the answer.
        s.sendall(kw.api_versions_request(corr + 1000, client_id))
        retry_corr, retry_body = kw.recv_frame(s)
    assert got_corr == corr
    err, answered, rest = kw.parse_api_versions_v0(body)
    assert err == kw.ERR_UNSUPPORTED_VERSION, (
        "ApiVersions v99: error %d, expected 35 UNSUPPORTED_VERSION (body %r)" % (err, body[:64]))
    assert rest == 0, "ApiVersions v99 answer is not a v0 body: %d trailing bytes" % rest
    assert kw.API_API_VERSIONS in answered, (
        "ApiVersions v99 answer lacks the ApiVersions range: %r" % answered)
    for key, rng in answered.items():
        assert ranges.get(key) == rng, (
            "ApiVersions v99 answer gives API %d range %r, the normal answer %r"
            % (key, rng, ranges.get(key)))
    assert retry_corr == corr + 1000
    assert kw.parse_api_versions(retry_body)[0] == kw.ERR_NONE
    after_check(r"unsupported|UNSUPPORTED_VERSION|\b35\b|v99|version 99",
                "ApiVersions v99", client_id=client_id)


def _leader_port(broker, ranges, topic, partition, client_id):
    """Metadata (v6, the serverless floor, when advertised) for topic; returns the port of
    partition's leader."""
    mv = pick_version(ranges, kw.API_METADATA, 1, 8, prefer=kw.METADATA_V)
    corr = next(_corr)
    with kw.connect(broker.port) as s:
        s.sendall(kw.metadata_request(mv, corr, client_id, [topic]))
        got_corr, body = kw.recv_frame(s)
    assert got_corr == corr
    md = kw.parse_metadata(mv, body)
    assert len(md["brokers"]) == broker.broker_count, "Metadata v%d brokers: %r" % (mv, md["brokers"])
    [t] = md["topics"]
    assert t["error"] == 0 and t["name"] == topic, "Metadata v%d topic entry: %r" % (mv, t)
    [p] = [p for p in t["partitions"] if p["index"] == partition]
    assert p["error"] == 0 and p["leader"] in md["brokers"], "Metadata v%d partition: %r (brokers %r)" % (
        mv, p, md["brokers"])
    host, port = md["brokers"][p["leader"]]
    assert port in broker.ports, "leader %d advertised at %s:%d, not one of our ports %r" % (
        p["leader"], host, port, broker.ports)
    return port


def _create_topic(broker, ranges, name, partitions, client_id):
    cv = pick_version(ranges, kw.API_CREATE_TOPICS, 0, 4, prefer=kw.CREATE_TOPICS_V)
    corr = next(_corr)
    with kw.connect(broker.port) as s:
        s.sendall(kw.create_topics_request(cv, corr, client_id, name, partitions, 3))
        got_corr, body = kw.recv_frame(s)
    assert got_corr == corr
    [t] = kw.parse_create_topics(cv, body)
    assert t["name"] == name and t["error"] == 0, "CreateTopics v%d %s: %r" % (cv, name, t)


def test_produce_with_corrupt_crc_is_refused(broker, ranges, after_check):
    client_id = "bad-produce-crc"
    topic = "bad-input-crc"
    _create_topic(broker, ranges, topic, 1, client_id)
    port = _leader_port(broker, ranges, topic, 0, client_id)
    pv = pick_version(ranges, kw.API_PRODUCE, 3, 8, prefer=kw.PRODUCE_V)
    recs = [(b"k%d" % i, b"v%d" % i, [(b"h", b"%d" % i)]) for i in range(3)]

    corr = next(_corr)
    with kw.connect(port) as s:
        s.sendall(kw.produce_request(pv, corr, client_id, topic, 0,
                                     kw.record_batch(recs, corrupt_crc=True)))
        got_corr, body = kw.recv_frame(s)
        assert got_corr == corr
        [t] = kw.parse_produce(pv, body)
        [p] = t["partitions"]
        assert (t["name"], p["index"]) == (topic, 0)
        assert p["error"] == kw.ERR_CORRUPT_MESSAGE, (
            "Produce v%d with a corrupted CRC: partition error %d, expected 2 CORRUPT_MESSAGE "
            "(%r)" % (pv, p["error"], p))
        assert p["base_offset"] == -1, "refused batch got base_offset %d" % p["base_offset"]

        # The same batch with the right CRC on the same connection is accepted at offset 0:
        # the refused one appended nothing.
        corr = next(_corr)
        s.sendall(kw.produce_request(pv, corr, client_id, topic, 0, kw.record_batch(recs)))
        got_corr, body = kw.recv_frame(s)
        assert got_corr == corr
        [t] = kw.parse_produce(pv, body)
        [p] = t["partitions"]
        assert p["error"] == 0 and p["base_offset"] == 0, (
            "Produce v%d of a valid batch after the corrupt one: %r (expected error 0, "
            "base_offset 0)" % (pv, p))
    after_check(r"crc|corrupt", "Produce with corrupted CRC", client_id=client_id)
