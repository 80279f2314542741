"""The record pass of big batches off the loop (issue 35, item 2): a valid batch of millions of
tiny records (a few KB of zstd, within the decompression cap) to a topic whose batches get a
record pass (here cleanup.policy=compact; the records are renumbered, so the batch is rebuilt)
held the broker's one loop 100 ms to 3 s, and every other client with it. It is now checked on
libuv's threadpool while its request is parked: stored whole and consumable, another client's
produce goes on meanwhile, a connection closed or a broker stopped while the check runs drops
its result safely, and one idempotent producer's big batches land in the order sent. Raw
Produce v8 requests; the bystander and the consumer are real clients (confluent-kafka). Asserts
elapsed-time bounds: listed in serial-modules.txt.
"""

import ctypes
import socket
import statistics
import time

import pytest

import kafka_wire as kw
from bystander import Bystander
from harness import Broker

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import Consumer  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

PRODUCE_V = 8
ZSTD = 4
RECORDS = 2_000_000
# 9 bytes: key "k", value "v", offset delta 0: every record the same, so the batch compresses to
# 2 KB; the broker renumbers the deltas (Kafka's LogValidator rewrites such batches too)
RECORD9 = kw.record(0, b"k", b"v")
assert len(RECORD9) == 9
BIG_TOPIC = {"cleanup.policy": "compact", "max.message.bytes": "8388608"}  # the rebuilt batch is 1.6 MB


@pytest.fixture(scope="module")
def broker_config():
    return {"log.cleaner.enable": False}  # the consumer counts every record the batch held


def zstd(data):
    z = ctypes.CDLL("libzstd.so.1")
    z.ZSTD_compressBound.restype = ctypes.c_size_t
    z.ZSTD_compressBound.argtypes = [ctypes.c_size_t]
    z.ZSTD_isError.argtypes = [ctypes.c_size_t]
    z.ZSTD_compress.restype = ctypes.c_size_t
    z.ZSTD_compress.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int]
    cap = z.ZSTD_compressBound(len(data))
    out = ctypes.create_string_buffer(cap)
    n = z.ZSTD_compress(out, cap, data, len(data), 3)
    assert not z.ZSTD_isError(n)
    return out.raw[:n]


def big_batch(count=RECORDS, producer_id=-1, epoch=-1, base_sequence=-1):
    section = zstd(RECORD9 * count)
    ts = int(time.time() * 1000)
    after_crc = (kw.i16(ZSTD) + kw.i32(count - 1) + kw.i64(ts) + kw.i64(ts) + kw.i64(producer_id) + kw.i16(epoch)
                 + kw.i32(base_sequence) + kw.i32(count) + section)
    after_length = kw.i32(-1) + kw.i8(2) + kw.u32(kw.crc32c(after_crc)) + after_crc
    return kw.i64(0) + kw.i32(len(after_length)) + after_length


def create(bootstrap, *names, config=BIG_TOPIC):
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(n, 1, config=config) for n in names]).values():
        f.result(30)


def leader_port(broker, topic):
    sock = kw.connect(broker.port)
    try:
        md = kw.parse_metadata(kw.METADATA_V, kw.roundtrip(
            sock, lambda corr: kw.metadata_request(kw.METADATA_V, corr, "offloop", [topic])))
    finally:
        sock.close()
    return md["brokers"][md["topics"][0]["partitions"][0]["leader"]][1]


def answer(sock):
    corr, body = kw.recv_frame(sock)
    return corr, kw.parse_produce(PRODUCE_V, body)[0]["partitions"][0]


def end_offset(bootstrap, topic):
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "offloop-end"})
    try:
        return c.get_watermark_offsets(confluent_kafka.TopicPartition(topic, 0), timeout=10)[1]
    finally:
        c.close()


def p99(lat):
    return statistics.quantiles(lat, n=100)[98]


def test_big_batches_with_a_record_pass_are_checked_off_the_loop_while_others_produce(broker):
    create(broker.bootstrap, "offloop-load")
    create(broker.bootstrap, "offloop-bystander", config={})
    frame = kw.produce_request(PRODUCE_V, 1, "offloop", "offloop-load", 0, big_batch())
    assert len(frame) < 10_000
    sock = kw.connect(leader_port(broker, "offloop-load"), timeout=60)
    with Bystander(broker.bootstrap, "offloop-bystander") as quiet:
        time.sleep(1.5)
    took = []
    with Bystander(broker.bootstrap, "offloop-bystander") as by:
        end = time.perf_counter() + 3
        while time.perf_counter() < end or len(took) < 3:
            t0 = time.perf_counter()
            sock.sendall(frame)
            _, r = answer(sock)
            assert r["error"] == 0, r
            took.append(time.perf_counter() - t0)
    sock.close()
    assert not by.errors, by.errors
    assert len(by.lat) > 200 and len(quiet.lat) > 200
    # The bar is 10 ms. On a shared 2-core machine one core goes to the worker checking
    # the batch and the bystander's own p99 moves with the load (measured 3-9 ms here, release
    # build; more under ASan), so the bound follows the quiet window, and never exceeds 100 ms:
    # before, each batch held every produce 0.3-1.7 s (docs/benchmarks.md).
    bound = min(0.100, max(0.010, 5 * p99(quiet.lat)))
    assert p99(by.lat) < bound, "bystander produce p99 %.1f ms (%.1f ms without big batches), big batches %s ms" % (
        p99(by.lat) * 1000, p99(quiet.lat) * 1000, [round(t * 1000) for t in took])
    assert end_offset(broker.bootstrap, "offloop-load") == len(took) * RECORDS
    broker.assert_alive()


def test_big_batch_checked_off_the_loop_is_stored_whole_and_consumable(broker):
    create(broker.bootstrap, "offloop-one")
    sock = kw.connect(leader_port(broker, "offloop-one"), timeout=60)
    sock.sendall(kw.produce_request(PRODUCE_V, 1, "offloop", "offloop-one", 0, big_batch()))
    _, r = answer(sock)
    sock.close()
    assert r["error"] == 0 and r["base_offset"] == 0, r
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "offloop-consumer",
                  "auto.offset.reset": "earliest", "enable.auto.commit": False})
    c.subscribe(["offloop-one"])
    n, first, last = 0, None, None
    deadline = time.time() + 120
    try:
        while n < RECORDS and time.time() < deadline:
            for m in c.consume(num_messages=100_000, timeout=1):
                assert not m.error(), m.error()
                if first is None:
                    first = m
                assert m.offset() == n, (m.offset(), n)
                n += 1
                last = m
    finally:
        c.close()
    assert n == RECORDS, n
    assert (first.key(), first.value(), last.key(), last.value()) == (b"k", b"v", b"k", b"v")


def test_connection_closed_while_its_batch_is_checked_drops_the_result(broker):
    """No crash and nothing freed twice or leaked (the sanitized run checks that); a dropped
    batch is not stored in part."""
    create(broker.bootstrap, "offloop-closed")
    port = leader_port(broker, "offloop-closed")
    frame = kw.produce_request(PRODUCE_V, 1, "offloop", "offloop-closed", 0, big_batch())
    for delay in (0.0, 0.02, 0.05, 0.1):
        socks = []
        for _ in range(3):  # two checks run at once, the third waits for a worker
            s = kw.connect(port, timeout=60)
            s.sendall(frame)
            socks.append(s)
        time.sleep(delay)
        for s in socks:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")  # RST
            s.close()
    time.sleep(3)  # the workers finish what they had
    broker.assert_alive()
    assert end_offset(broker.bootstrap, "offloop-closed") % RECORDS == 0
    sock = kw.connect(port, timeout=60)
    sock.sendall(frame)
    _, r = answer(sock)
    sock.close()
    assert r["error"] == 0, r


def test_two_big_batches_of_one_idempotent_producer_land_in_order(broker):
    """Pipelined on one connection, as max.in.flight=5 allows: the first is parked while its
    batch is checked and the second waits behind it (the connection is muted), so the sequence
    checks see them in the order sent."""
    create(broker.bootstrap, "offloop-idem")
    port = leader_port(broker, "offloop-idem")
    sock = kw.connect(port, timeout=60)
    ip = kw.parse_init_producer_id(4, kw.roundtrip(sock, lambda corr: kw.init_producer_id_request(4, corr, "offloop",
                                                                                                   None, 60000)))
    assert ip["error"] == 0, ip
    pid, epoch = ip["producer_id"], ip["producer_epoch"]
    first = kw.produce_request(PRODUCE_V, 11, "offloop", "offloop-idem", 0, big_batch(RECORDS, pid, epoch, 0))
    second = kw.produce_request(PRODUCE_V, 12, "offloop", "offloop-idem", 0, big_batch(RECORDS, pid, epoch, RECORDS))
    small = kw.produce_request(PRODUCE_V, 13, "offloop", "offloop-idem", 0,
                               kw.producer_batch([(b"k", b"after", [])], pid, epoch, 2 * RECORDS))
    sock.sendall(first + second + small)
    answers = [answer(sock) for _ in range(3)]
    sock.close()
    assert [a[0] for a in answers] == [11, 12, 13]
    assert [a[1]["error"] for a in answers] == [0, 0, 0], answers
    assert [a[1]["base_offset"] for a in answers] == [0, RECORDS, 2 * RECORDS], answers


def test_sigterm_while_batches_are_checked_exits_0():
    b = Broker(config={"log.cleaner.enable": False})
    b.start()
    try:
        create(b.bootstrap, "offloop-stop")
        port = leader_port(b, "offloop-stop")
        frame = kw.produce_request(PRODUCE_V, 1, "offloop", "offloop-stop", 0, big_batch())
        socks = []
        for _ in range(4):  # two checks running, two waiting for a worker
            s = kw.connect(port, timeout=60)
            s.sendall(frame)
            socks.append(s)
        time.sleep(0.05)
        assert b.stop(check=True) == 0
        for s in socks:
            s.close()
    finally:
        b.cleanup()
