"""The request path's buffers (issue 37, cutting its per-request costs): answers are encoded in one
pass with their size patched in afterwards, small frames are copied out of a read buffer the loop
keeps as a spare, and a flush of many answers takes the heap path for its arrays. Each test checks
the bytes on the wire: a wrong size prefix would misframe every answer after it, so each ends
with an ApiVersions request whose answer must parse.
"""

import pytest

import kafka_wire as kw
from harness import Broker


@pytest.fixture(scope="module")
def one_broker():
    b = Broker(broker_count=1)
    b.start()
    yield b
    try:
        b.stop(check=True)
    finally:
        b.cleanup()


def create(sock, topic, partitions=1):
    sock.sendall(kw.create_topics_request(kw.CREATE_TOPICS_V, 1, "reqpath", topic, partitions, 1))
    corr, body = kw.recv_frame(sock)
    assert corr == 1
    t = kw.parse_create_topics(kw.CREATE_TOPICS_V, body)[0]
    assert t["error"] == 0, t


def still_framed(sock, corr=999):
    sock.sendall(kw.api_versions_request(corr, "reqpath"))
    got, body = kw.recv_frame(sock)
    assert got == corr, "answer %d where the ApiVersions' %d was due: the stream is misframed" % (got, corr)
    err, _, left = kw.parse_api_versions(body)
    assert err == 0 and left == 0, (err, left)


def test_answers_of_every_size_are_framed_exactly(one_broker):
    """A Produce answer (small), Fetch answers whose records are inline and larger than the
    answer's first buffer (2 KiB), referenced (20 KiB), and a Metadata answer of 64 partitions
    (grown several times): each parses whole and the stream stays framed."""
    with kw.connect(one_broker.port, timeout=30) as s:
        create(s, "sizes")
        values = [b"a" * 2048, b"b" * 20000]
        for i, v in enumerate(values):
            s.sendall(kw.produce_request(kw.PRODUCE_V, 10 + i, "reqpath", "sizes", 0, kw.record_batch([(None, v, ())])))
            corr, body = kw.recv_frame(s)
            assert corr == 10 + i
            p = kw.parse_produce(kw.PRODUCE_V, body)[0]["partitions"][0]
            assert p["error"] == 0 and p["base_offset"] == i, p
        for i, v in enumerate(values):
            s.sendall(kw.fetch_request(20 + i, "reqpath", "sizes", 0, i, max_bytes=1 << 20))
            corr, body = kw.recv_frame(s)
            assert corr == 20 + i
            p = kw.parse_fetch(kw.FETCH_V, body)["topics"][0]["partitions"][0]
            assert p["error"] == 0, p
            assert v in p["records"], "the fetched batch does not hold the value produced"
        still_framed(s)
        create(s, "wide", partitions=64)
        s.sendall(kw.metadata_request(kw.METADATA_V, 30, "reqpath", ["wide"]))
        corr, body = kw.recv_frame(s)
        assert corr == 30
        md = kw.parse_metadata(kw.METADATA_V, body)
        assert len(md["topics"][0]["partitions"]) == 64
        still_framed(s)


def test_many_pipelined_answers_leave_whole_and_in_order(one_broker):
    """60 small requests in one write: answered in order, many in one flush (more than its
    arrays on the stack hold), then the stream is still framed."""
    with kw.connect(one_broker.port, timeout=30) as s:
        create(s, "pipelined")
        frames = b"".join(kw.produce_request(kw.PRODUCE_V, 100 + i, "reqpath", "pipelined", 0,
                                             kw.record_batch([(None, b"v%d" % i, ())]), acks=1)
                          for i in range(60))
        s.sendall(frames)
        for i in range(60):
            corr, body = kw.recv_frame(s)
            assert corr == 100 + i, "answer %d out of order (expected %d)" % (corr, 100 + i)
            p = kw.parse_produce(kw.PRODUCE_V, body)[0]["partitions"][0]
            assert p["error"] == 0 and p["base_offset"] == i, p
        still_framed(s)


def test_small_and_large_frames_in_turn_on_many_connections(one_broker):
    """Connections take the loop's spare read buffer in turn; a frame of at least 4 KiB takes the
    read buffer itself. Interleaved small and large frames on three connections are all stored
    intact (read back with Fetch)."""
    socks = [kw.connect(one_broker.port, timeout=30) for _ in range(3)]
    try:
        create(socks[0], "turns")
        sent = []
        for i in range(12):
            s = socks[i % 3]
            v = (b"%02d" % i) * (3000 if i % 2 else 10)
            s.sendall(kw.produce_request(kw.PRODUCE_V, 200 + i, "reqpath", "turns", 0, kw.record_batch([(None, v, ())])))
            corr, body = kw.recv_frame(s)
            assert corr == 200 + i
            p = kw.parse_produce(kw.PRODUCE_V, body)[0]["partitions"][0]
            assert p["error"] == 0, p
            sent.append((p["base_offset"], v))
        for off, v in sent:
            socks[1].sendall(kw.fetch_request(300 + off, "reqpath", "turns", 0, off, max_bytes=1 << 20))
            corr, body = kw.recv_frame(socks[1])
            assert corr == 300 + off
            p = kw.parse_fetch(kw.FETCH_V, body)["topics"][0]["partitions"][0]
            assert p["error"] == 0 and v in p["records"], "offset %d: not the bytes produced" % off
        for s in socks:
            still_framed(s)
    finally:
        for s in socks:
            s.close()


def test_topics_by_name_past_the_list_pass(one_broker):
    """Past 8 topics topic_find looks names up in an index (broker/name_index.c): with 20
    topics each is found by name, a deleted one is not (UNKNOWN_TOPIC_OR_PARTITION, 3), and one
    created again under the same name is found again."""
    from confluent_kafka.admin import AdminClient

    names = ["index-%02d" % i for i in range(20)]
    with kw.connect(one_broker.port, timeout=30) as s:
        for n in names:
            create(s, n)

        def produce(topic, corr):
            s.sendall(kw.produce_request(kw.PRODUCE_V, corr, "reqpath", topic, 0, kw.record_batch([(None, b"x", ())])))
            got, body = kw.recv_frame(s)
            assert got == corr
            return kw.parse_produce(kw.PRODUCE_V, body)[0]["partitions"][0]["error"]

        for i, n in enumerate(names):
            assert produce(n, 400 + i) == 0, n
        admin = AdminClient({"bootstrap.servers": one_broker.bootstrap})
        for f in admin.delete_topics(names[5:8], operation_timeout=10).values():
            f.result(timeout=30)
        for i, n in enumerate(names):
            assert produce(n, 500 + i) == (3 if n in names[5:8] else 0), n
        create(s, names[6])
        assert produce(names[6], 600) == 0
        still_framed(s)
