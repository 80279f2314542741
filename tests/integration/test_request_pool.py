"""queued.max.request.bytes (issue 35, item 2): Kafka's memory pool for request bytes read and not
yet answered (KIP-72), per listener kind. Five plaintext peers, unauthenticated, each send a 40 MiB
Produce frame slowly; with the pool at 80 MiB, three are granted (the pool grants a whole frame
while any room is left) and two are not read until bytes are released. The broker's peak RSS
stays near the pool plus one frame (without it: every frame at once), a small client on the same
listener is answered meanwhile, and every big frame is read whole and answered in the end:
nothing is dropped."""

import threading
import time

import pytest

import kafka_wire as kw
from harness import Broker, running

pytestmark = pytest.mark.timeout(300)

FRAME = 40 << 20
POOL = 80 << 20
PEERS = 5


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    b = Broker(broker_count=1, config={"queued.max.request.bytes": POOL, "iam.port": 0,
                                       "default.replication.factor": 1},
               data_dir=tmp_path_factory.mktemp("reqpool"))
    with running(b):
        yield b


def status_kib(broker, field):
    with open("/proc/%d/status" % broker.proc.pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise AssertionError(field)


def big_produce(corr, topic):
    """A Produce frame of about FRAME bytes. The batch's CRC is left 0 (computing CRC-32C over
    40 MiB in Python takes long): the broker reads it whole and answers CORRUPT_MESSAGE, which
    shows it was read and processed as well as an accepted one would."""
    value = bytes(FRAME - 200)
    rec = kw.record(0, b"k", value)
    after_crc = (kw.i16(0) + kw.i32(0) + kw.i64(0) + kw.i64(0) + kw.i64(-1) + kw.i16(-1) + kw.i32(-1)
                 + kw.i32(1) + rec)
    after_length = kw.i32(-1) + kw.i8(2) + kw.u32(0) + after_crc
    batch = kw.i64(0) + kw.i32(len(after_length)) + after_length
    return kw.produce_request(kw.PRODUCE_V, corr, "pool-hog", topic, 0, batch)


def test_slow_huge_frames_bounded_and_small_client_served(broker):
    topic = "pool"
    with kw.connect(broker.port) as s:
        s.sendall(kw.create_topics_request(kw.CREATE_TOPICS_V, 1, "it", topic, 1, 1))
        kw.recv_frame(s)
    frames = [big_produce(100 + i, topic) for i in range(PEERS)]
    hwm_before = status_kib(broker, "VmHWM")
    since = broker.log_size()
    answers, errors = {}, []

    def peer(i):
        try:
            with kw.connect(broker.port, timeout=60) as s:
                f = frames[i]
                # 1 MiB every 50 ms: ~20 MiB/s, slow enough that all five have begun before any ends
                for off in range(0, len(f), 1 << 20):
                    s.sendall(f[off:off + (1 << 20)])
                    time.sleep(0.05)
                answers[i] = kw.recv_frame(s)
        except Exception as e:  # reported below
            errors.append((i, repr(e)))

    threads = [threading.Thread(target=peer, args=(i,), daemon=True) for i in range(PEERS)]
    for t in threads:
        t.start()
    assert POOL < 0 or broker.wait_for_log(r"waits: its \d+-byte frame does not fit in queued\.max\.request\.bytes=%d" % POOL,
                               since=since, timeout=20), broker.log_tail()
    # a small client on the same listener is answered while the big ones wait
    t0 = time.monotonic()
    with kw.connect(broker.port, timeout=5) as s:
        s.sendall(kw.api_versions_request(7, "small"))
        corr, body = kw.recv_frame(s)
        assert corr == 7 and kw.parse_api_versions(body)[0] == 0
        s.sendall(kw.produce_request(kw.PRODUCE_V, 8, "small", topic, 0, kw.record_batch([(b"k", b"v", ())])))
        corr, body = kw.recv_frame(s)
        assert corr == 8 and kw.parse_produce(kw.PRODUCE_V, body)[0]["partitions"][0]["error"] == 0
    small_s = time.monotonic() - t0
    for t in threads:
        t.join(120)
    assert not errors, errors
    # every frame read whole and answered, none dropped
    assert sorted(answers) == list(range(PEERS)), answers.keys()
    for i, (corr, body) in answers.items():
        assert corr == 100 + i
        assert kw.parse_produce(kw.PRODUCE_V, body)[0]["partitions"][0]["error"] in (0, 2, 10)
    grown = (status_kib(broker, "VmHWM") - hwm_before) / 1024
    print("small client answered in %.3f s; peak RSS grew %.0f MiB (%d frames of %d MiB, pool %d MiB)"
          % (small_s, grown, PEERS, FRAME >> 20, POOL >> 20))
    assert small_s < 2, small_s
    # the pool plus one frame (granted while room was left: 2 x 40 MiB leaves a few bytes), and
    # slack for the rest of the broker; unbounded, all five frames are held at once (200 MiB)
    assert POOL < 0 or grown < (POOL + FRAME) / (1 << 20) + 16, grown
    broker.assert_alive()
