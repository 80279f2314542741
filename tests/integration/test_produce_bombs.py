"""Decompression bombs against the produce path (issue 35, finding 2): a few KB of zstd or gzip
that claim or decompress to hundreds of MB of records. Before, a 24 KB zstd batch claiming 33.5M
8-byte records took the broker from 11 MB to 3 GB and held its loop 6.7 s on a topic whose
batches get a record pass, and a 391 KB gzip one held it 17.3 s. Now the record count is checked
against what the topic lets a batch decompress to before anything is allocated, and
decompression stops at that size: each bomb is answered within 100 ms, the broker stays under
100 MB, and another client's produce goes on meanwhile. Raw Produce v8 requests; the bystander
is a real client (confluent-kafka). Asserts elapsed-time bounds: listed in serial-modules.txt.
"""

import statistics
import struct
import time
import zlib

import pytest

import kafka_wire as kw
from bystander import Bystander

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

PRODUCE_V = 8
GZIP, ZSTD = 1, 4
BOMB_RECORDS = 33_554_432  # 33.5M records of 8 bytes: 256 MiB, the old cap
# 8 bytes: length 7, attributes, timestamp delta 0, offset delta 0, null key, a 1-byte value, no headers
RECORD8 = kw.varint(7) + kw.i8(0) + kw.varint(0) + kw.varint(0) + kw.varint(-1) + kw.varint(1) + b"x" + kw.varint(0)
assert len(RECORD8) == 8


def batch(section, count, codec):
    """A batch v2 whose header claims `count` records over `section` (already compressed)."""
    ts = int(time.time() * 1000)
    after_crc = (kw.i16(codec) + kw.i32(count - 1) + kw.i64(ts) + kw.i64(ts) + kw.i64(-1) + kw.i16(-1)
                 + kw.i32(-1) + kw.i32(count) + section)
    after_length = kw.i32(-1) + kw.i8(2) + kw.u32(kw.crc32c(after_crc)) + after_crc
    return kw.i64(0) + kw.i32(len(after_length)) + after_length


def zstd_rle(size, byte=b"\x08"):
    """A zstd frame of `size` copies of one byte, in RLE blocks of 128 KiB (4 bytes each): 256 MiB
    in 8 KB, no library needed. RFC 8878: magic, a descriptor with no content size, a 128 KiB
    window, then block headers (last flag, type 1 = RLE, size) each followed by the byte."""
    out = [struct.pack("<I", 0xFD2FB528), b"\x00", bytes([7 << 3])]
    block = 128 << 10
    while size > 0:
        n = min(block, size)
        size -= n
        hdr = (1 if size == 0 else 0) | (1 << 1) | (n << 3)
        out.append(struct.pack("<I", hdr)[:3] + byte)
    return b"".join(out)


def gzip_records(count):
    """gzip of `count` copies of RECORD8, compressed a MiB at a time."""
    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = RECORD8 * (1 << 17)
    out, left = [], count
    while left > 0:
        n = min(left, 1 << 17)
        out.append(z.compress(chunk[: n * 8]))
        left -= n
    out.append(z.flush())
    return b"".join(out)


def gzip_zeros(size):
    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    out = [z.compress(b"\0" * (1 << 20)) for _ in range(size >> 20)]
    out.append(z.flush())
    return b"".join(out)


@pytest.fixture(scope="module")
def topics(broker):
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    fs = admin.create_topics([
        NewTopic("bomb-compact", 1, config={"cleanup.policy": "compact"}),
        NewTopic("bomb-recompress", 1, config={"compression.type": "lz4"}),
        NewTopic("bomb-plain", 1),
        NewTopic("bystander", 1),
    ])
    for f in fs.values():
        f.result(30)
    return broker


def leader_port(broker, topic):
    sock = kw.connect(broker.port)
    try:
        body = kw.roundtrip(sock, lambda corr: kw.metadata_request(kw.METADATA_V, corr, "bomb", [topic]))
        md = kw.parse_metadata(kw.METADATA_V, body)
    finally:
        sock.close()
    leader = md["topics"][0]["partitions"][0]["leader"]
    return md["brokers"][leader][1]


def produce_timed(broker, topic, data):
    """(answer, seconds from the request's last byte sent to its answer)."""
    sock = kw.connect(leader_port(broker, topic), timeout=30)
    try:
        frame = kw.produce_request(PRODUCE_V, 1, "bomb", topic, 0, data)
        sock.sendall(frame)
        t0 = time.perf_counter()
        _, body = kw.recv_frame(sock)
        return kw.parse_produce(PRODUCE_V, body)[0]["partitions"][0], time.perf_counter() - t0
    finally:
        sock.close()


def peak_rss_mb(broker):
    with open("/proc/%d/status" % broker.proc.pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


# The findings' bombs: the header claims 33.5M records, which cannot fit in what the topic lets a
# batch decompress to (32 x max.message.bytes: 32 MiB by default), so each is refused before a
# byte is decompressed. (name, topic, make the batch)
COUNT_BOMBS = [
    ("24 KB zstd claiming 33.5M records, compacted topic", "bomb-compact",
     lambda: batch(zstd_rle(BOMB_RECORDS * 8), BOMB_RECORDS, ZSTD)),
    ("the same zstd on a recompressing topic", "bomb-recompress",
     lambda: batch(zstd_rle(BOMB_RECORDS * 8), BOMB_RECORDS, ZSTD)),
    ("the same zstd on a plain topic", "bomb-plain",
     lambda: batch(zstd_rle(BOMB_RECORDS * 8), BOMB_RECORDS, ZSTD)),
    ("391 KB gzip of 33.5M 8-byte records, compacted topic", "bomb-compact",
     lambda: batch(gzip_records(BOMB_RECORDS), BOMB_RECORDS, GZIP)),
]
# Bombs whose count fits: decompression stops one byte past the limit.
SIZE_BOMBS = [
    ("zstd of 256 MiB claiming one record, compacted topic", "bomb-compact", lambda: batch(zstd_rle(256 << 20), 1, ZSTD)),
    ("gzip of 256 MiB claiming one record, plain topic", "bomb-plain", lambda: batch(gzip_zeros(256 << 20), 1, GZIP)),
]
WHY = "decompress to more than the topic allows"


def send_bombs(broker, made, rounds):
    """The slowest answer to each bomb over `rounds` rounds, in ms; each refused with MESSAGE_TOO_LARGE."""
    times = {}
    for _ in range(rounds):
        for name, topic, data in made:
            since = broker.log_size()
            r, took = produce_timed(broker, topic, data)
            assert r["error"] == 10, (name, r)
            assert broker.wait_for_log(r"%s-0: .*%s" % (topic, WHY), since=since, timeout=2), broker.log_tail()
            times[name] = max(times.get(name, 0), round(took * 1000, 1))
    return times


def p99(lat):
    return statistics.quantiles(lat, n=100)[98]


def test_24kb_zstd_and_391kb_gzip_bombs_answered_at_once_while_others_produce(topics):
    broker = topics
    made = [(name, topic, make()) for name, topic, make in COUNT_BOMBS]  # before the bystander: the GIL
    assert len(made[0][2]) < 30_000 and 350_000 < len(made[3][2]) < 450_000, [len(m[2]) for m in made]
    with Bystander(broker.bootstrap, "bystander") as quiet:
        time.sleep(1)
    with Bystander(broker.bootstrap, "bystander") as by:
        times = send_bombs(broker, made, 5)
    slow = {n: t for n, t in times.items() if t > 100}
    assert not slow, "bombs answered after more than 100 ms: %s" % slow
    assert peak_rss_mb(broker) < 100, "peak RSS %.0f MB" % peak_rss_mb(broker)
    assert not by.errors, by.errors
    assert len(by.lat) > 100 and len(quiet.lat) > 100
    # 10 ms, the bound, unless the machine is busy enough that the quiet window misses it
    # too (before the fix one bomb held every produce for seconds)
    # the stall this guards against was seconds (6.7 s, 17.3 s); a loaded CI machine's jitter is tens of ms
    bound = max(0.050, 5 * p99(quiet.lat))
    assert p99(by.lat) < bound, "bystander produce p99 %.1f ms (%.1f ms without bombs)" % (
        p99(by.lat) * 1000, p99(quiet.lat) * 1000)
    broker.assert_alive()


def test_bombs_that_decompress_past_the_limit_are_refused_there(topics):
    """The work is bounded by the topic's limit (32 MiB here), not by what the bomb holds: the
    broker never holds much more than the limit. How long the loop is held is the limit's
    decompression time (zstd a few ms, gzip up to ~150 ms on a loaded 2-core machine)."""
    broker = topics
    times = send_bombs(broker, [(name, topic, make()) for name, topic, make in SIZE_BOMBS], 3)
    assert all(t < 1000 for t in times.values()), times
    assert peak_rss_mb(broker) < 100, "peak RSS %.0f MB" % peak_rss_mb(broker)
    broker.assert_alive()


def test_batches_within_the_limit_still_go_in(topics):
    """A compressed batch of many small records that fits the limit is stored on every topic."""
    broker = topics
    n = 100_000
    for topic in ("bomb-compact", "bomb-recompress", "bomb-plain"):
        recs = b"".join(kw.record(i, b"k%d" % i, b"v") for i in range(n))
        r, _ = produce_timed(broker, topic, batch(_gz(recs), n, GZIP))
        assert r["error"] == 0, (topic, r)


def _gz(b):
    z = zlib.compressobj(6, zlib.DEFLATED, 31)
    return z.compress(b) + z.flush()
