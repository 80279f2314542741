"""Hostile and careless batches against the record pass that topic configs make the broker run
(keys of a compacted topic, the timestamp window, recompression): malformed records inside a
compressed batch, a codec that does not decode, a decompression bomb, a record that runs past
itself. A plain topic reads the records of every compressed batch too, as Kafka's LogValidator
does: garbage labelled gzip, snappy, lz4 or zstd is refused there, not stored to fail consumers. Each is refused with Kafka's code and a log line, nothing of it is stored, and the broker
goes on serving. Raw Produce v8 requests; run under ASan/UBSan by tools/run-sanitized.
"""

import gzip
import time
import zlib

import pytest

import kafka_wire as kw

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

PRODUCE_V = 8
CODEC = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


def batch(records_bytes, count, codec=0, ts=None):
    """A batch v2 of `count` records whose records section is records_bytes, as given (already
    compressed when codec is not 0): the header claims what the caller says."""
    ts = int(time.time() * 1000) if ts is None else ts
    after_crc = (kw.i16(codec) + kw.i32(count - 1) + kw.i64(ts) + kw.i64(ts) + kw.i64(-1) + kw.i16(-1)
                 + kw.i32(-1) + kw.i32(count) + records_bytes)
    after_length = kw.i32(-1) + kw.i8(2) + kw.u32(kw.crc32c(after_crc)) + after_crc
    return kw.i64(0) + kw.i32(len(after_length)) + after_length


def records(n, key=b"k"):
    return b"".join(kw.record(i, key + b"%d" % i if key else None, b"v%d" % i) for i in range(n))


@pytest.fixture(scope="module")
def topics(broker):
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    fs = admin.create_topics([
        NewTopic("hostile-compact", 1, config={"cleanup.policy": "compact"}),
        NewTopic("hostile-zstd", 1, config={"compression.type": "zstd"}),
        NewTopic("hostile-window", 1, config={"message.timestamp.difference.max.ms": "60000"}),
        NewTopic("hostile-plain", 1),
    ])
    for f in fs.values():
        f.result(30)
    return broker


def leader_port(broker, topic):
    sock = kw.connect(broker.port)
    try:
        body = kw.roundtrip(sock, lambda corr: kw.metadata_request(kw.METADATA_V, corr, "hostile", [topic]))
        md = kw.parse_metadata(kw.METADATA_V, body)
    finally:
        sock.close()
    leader = md["topics"][0]["partitions"][0]["leader"]
    return md["brokers"][leader][1]


def produce(broker, topic, data):
    sock = kw.connect(leader_port(broker, topic))
    try:
        body = kw.roundtrip(sock, lambda corr: kw.produce_request(PRODUCE_V, corr, "hostile", topic, 0, data))
        return kw.parse_produce(PRODUCE_V, body)[0]["partitions"][0]
    finally:
        sock.close()


def gz(b):
    return gzip.compress(b)


def gzip_bomb(size):
    """A gzip stream of `size` zero bytes, made without holding them."""
    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk, out = b"\0" * (1 << 20), []
    for _ in range(size >> 20):
        out.append(z.compress(chunk))
    out.append(z.flush())
    return b"".join(out)


CASES = [
    # (name, topic, batch, expected error, log text)
    ("count above what the gzip section holds", "hostile-compact", lambda: batch(gz(records(2)), 3, CODEC["gzip"]),
     87, "fewer records"),
    ("bytes after the declared records", "hostile-zstd", lambda: batch(gz(records(3)), 2, CODEC["gzip"]),
     87, "bytes left after"),
    ("gzip that is not gzip", "hostile-zstd", lambda: batch(b"\x1f\x8b" + b"\x00" * 40, 1, CODEC["gzip"]),
     2, "gzip"),
    ("snappy that is not snappy", "hostile-compact", lambda: batch(b"\xff" * 64, 1, CODEC["snappy"]),
     2, "snappy"),
    ("a decompression bomb", "hostile-zstd", lambda: batch(gzip_bomb(260 << 20), 1, CODEC["gzip"]),
     10, "decompress to more than the topic allows"),
    ("a key that runs past its record", "hostile-compact",
     lambda: batch(kw.varint(4) + kw.i8(0) + kw.varint(0) + kw.varint(0) + kw.varint(50), 1), 87, "key runs past"),
    ("no key on a compacted topic, inside lz4's neighbour gzip", "hostile-compact",
     lambda: batch(gz(records(2, key=None)), 2, CODEC["gzip"]), 87, "without key"),
    ("an hour-old timestamp in a gzip batch", "hostile-window",
     lambda: batch(gz(records(1)), 1, CODEC["gzip"], ts=int(time.time() * 1000) - 3_600_000), 32, "out of range"),
    # garbage compressed payloads on a plain topic (before: stored with error 0)
    ("garbage gzip on a plain topic", "hostile-plain", lambda: batch(b"\x1f\x8b" + b"\x5a" * 40, 1, CODEC["gzip"]),
     2, "gzip"),
    ("garbage snappy on a plain topic", "hostile-plain", lambda: batch(b"\xff" * 64, 1, CODEC["snappy"]),
     2, "snappy"),
    ("garbage lz4 on a plain topic", "hostile-plain", lambda: batch(b"\x04\x22\x4d\x18" + b"\x5a" * 40, 1, CODEC["lz4"]),
     2, "lz4"),
    ("garbage zstd on a plain topic", "hostile-plain", lambda: batch(b"\x5a" * 64, 1, CODEC["zstd"]),
     2, "zstd"),
    ("plain records labelled zstd on a plain topic", "hostile-plain", lambda: batch(records(2), 2, CODEC["zstd"]),
     2, "zstd"),
    ("gzip with fewer records than its count, plain topic", "hostile-plain",
     lambda: batch(gz(records(2)), 3, CODEC["gzip"]), 87, "fewer records"),
    ("a decompression bomb on a plain topic", "hostile-plain", lambda: batch(gzip_bomb(260 << 20), 1, CODEC["gzip"]),
     10, "decompress to more than the topic allows"),
]


@pytest.mark.parametrize("name,topic,make,code,why", CASES, ids=[c[0] for c in CASES])
def test_refused_with_a_reason_and_nothing_stored(topics, name, topic, make, code, why):
    broker = topics
    since = broker.log_size()
    r = produce(broker, topic, make())
    assert r["error"] == code, r
    assert broker.wait_for_log(r"%s-0: .*%s" % (topic, why), since=since, timeout=2), broker.log_tail()
    broker.assert_alive()


def test_good_batches_still_go_in(topics):
    broker = topics
    for topic in ("hostile-compact", "hostile-zstd", "hostile-window", "hostile-plain"):
        r = produce(broker, topic, batch(gz(records(3)), 3, CODEC["gzip"]))
        assert r["error"] == 0, (topic, r)
        assert r["base_offset"] == 0, "a refused batch took offsets"
    # a record without a timestamp (-1) is let through the window, as Kafka does
    r = produce(broker, "hostile-window", batch(records(1), 1, ts=-1))
    assert r["error"] == 0
