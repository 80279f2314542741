"""Segment files are checked against the index (storage.verify, storage/stor_verify.c):

  test_truncated_segment_is_refused_then_salvaged
                                 a segment cut in half: start is refused naming the file and
                                 the fix; --salvage keeps every batch whose bytes are whole, the
                                 broker starts, the other partitions are untouched
  test_emptied_segment_is_refused
                                 a segment of 0 bytes: refused, naming the file
  test_swapped_segments_of_two_partitions_are_refused
                                 two partitions' segment files swapped: refused, and the bigger
                                 file is not cut to the other partition's length
  test_swapped_segments_of_one_partition_are_refused
                                 two segments of one partition swapped: refused
  test_scribbled_middle_batch_start_passes_full_refuses_then_salvaged
                                 garbage in a batch in the middle of a segment: storage.verify=start
                                 reads only each file's newest batch and starts; =full refuses;
                                 --salvage drops that one batch and keeps every other
  test_scribbled_while_running_full_fetch_refuses_that_partition_only
                                 garbage written under a running broker with storage.verify=full:
                                 a Fetch of that batch gets KAFKA_STORAGE_ERROR (56) for its
                                 partition with a log line naming topic, partition, offset and
                                 file; the batches before it are served, another partition is
                                 consumed whole, the bad bytes are never sent
"""

import os
import re
import sqlite3
import struct
import subprocess
import time

import pytest

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

import kafka_wire as kw  # noqa: E402
from harness import Broker  # noqa: E402

KAFKA_STORAGE_ERROR = 56


@pytest.fixture
def broker():
    b = Broker(broker_count=1, config={"storage.sync": "normal"})
    yield b
    b.stop(check=False)
    b.cleanup()


def failed_start(b, timeout=20):
    """Runs the broker once on b's config and data dir; returns (exit code, its output)."""
    p = subprocess.run([str(b.binary)], env=b.env(), cwd=str(b.data_dir), stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout + p.stderr


def salvage(b):
    db = str(b.db_path)
    os.rename(db, db + ".damaged")
    p = subprocess.run([str(b.binary), "--salvage", db + ".damaged"], env=b.env(),
                       capture_output=True, text=True, timeout=60)
    print(p.stdout + p.stderr)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stderr


def fill(b, topic, counts, size=1000):
    """counts[p] records of about size bytes into partition p, one batch per record."""
    admin = AdminClient({"bootstrap.servers": b.bootstrap})
    admin.create_topics([NewTopic(topic, len(counts), replication_factor=1)])[topic].result(timeout=30)
    p = Producer({"bootstrap.servers": b.bootstrap, "acks": "all", "linger.ms": 0, "batch.size": size + 200,
                  "compression.type": "none"})
    for part, n in enumerate(counts):
        for i in range(n):
            p.produce(topic, key=b"%d-%d" % (part, i), value=(b"%d-%d|" % (part, i)) * (size // 8), partition=part)
            p.poll(0)
    assert p.flush(30) == 0


def read_all(b, topic, partitions, timeout=30):
    """{(partition, offset): value} of everything the broker serves of topic."""
    c = Consumer({"bootstrap.servers": b.bootstrap, "group.id": "verify-check", "enable.auto.commit": False,
                  "enable.partition.eof": True})
    c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
    seen, eof, deadline = {}, set(), time.time() + timeout
    try:
        while len(eof) < partitions and time.time() < deadline:
            m = c.poll(0.5)
            if m is None:
                continue
            if m.error():
                if m.error().code() == confluent_kafka.KafkaError._PARTITION_EOF:
                    eof.add(m.partition())
                    continue
                raise AssertionError("consume error: %s" % m.error())
            seen[(m.partition(), m.offset())] = m.value()
    finally:
        c.close()
    assert len(eof) == partitions, "did not reach the end of every partition"
    return seen


def segment(b, topic, partition, seg=1):
    con = sqlite3.connect(b.db_path)
    (tid,) = con.execute("SELECT id FROM topics WHERE name = ?", (topic,)).fetchone()
    con.close()
    return b.data_dir / "mskmock.db.segments" / ("%d-%d" % (tid, partition)) / ("%020d.log" % seg)


def batches(data):
    """[(byte position, size, base offset, last offset)] of the record batches back to back in data."""
    out, pos = [], 0
    while pos + 61 <= len(data):
        base, length = struct.unpack(">qi", data[pos:pos + 12])
        (delta,) = struct.unpack(">i", data[pos + 23:pos + 27])
        out.append((pos, 12 + length, base, base + delta))
        pos += 12 + length
    return out


def offsets_of(bs):
    return {o for (_, _, base, last) in bs for o in range(base, last + 1)}


def assert_refused(b, path, *phrases):
    rc, out = failed_start(b)
    assert rc != 0, out
    assert str(path) in out, out
    assert "refusing to start on it" in out and "mskmock --salvage DB.damaged" in out, out
    for phrase in phrases:
        assert re.search(phrase, out), (phrase, out)
    return out


def test_truncated_segment_is_refused_then_salvaged(broker):
    broker.start()
    fill(broker, "t", [40, 30, 20])
    before = read_all(broker, "t", 3)
    broker.stop(check=True)
    path = segment(broker, "t", 1)
    data = path.read_bytes()
    cut = len(data) // 2
    os.truncate(path, cut)
    assert_refused(broker, path, r"is %d bytes, the index needs %d" % (cut, len(data)), r"topic t partition 1")
    assert path.stat().st_size == cut, "the refused start changed the file"

    salvage(broker)
    broker.start()
    after = read_all(broker, "t", 3)
    whole = offsets_of([bt for bt in batches(data) if bt[0] + bt[1] <= cut])
    assert whole and len(whole) < 30
    assert {o for (p, o) in after if p == 1} == whole, "salvage kept other than every whole batch"
    assert {k: v for k, v in after.items() if k[0] == 1} == {k: v for k, v in before.items()
                                                             if k[0] == 1 and k[1] in whole}
    assert {k: v for k, v in after.items() if k[0] != 1} == {k: v for k, v in before.items() if k[0] != 1}


def test_emptied_segment_is_refused(broker):
    broker.start()
    fill(broker, "t", [10, 10])
    broker.stop(check=True)
    path = segment(broker, "t", 0)
    os.truncate(path, 0)
    assert_refused(broker, path, r"is 0 bytes, the index needs \d+")


def test_swapped_segments_of_two_partitions_are_refused(broker):
    """Partition 0 holds more (and so longer) batches than partition 1: whichever file the check
    reads first, its length or its newest batch's offsets differ from the index."""
    broker.start()
    fill(broker, "t", [40, 15])
    broker.stop(check=True)
    p0, p1 = segment(broker, "t", 0), segment(broker, "t", 1)
    d0, d1 = p0.read_bytes(), p1.read_bytes()
    p0.write_bytes(d1)
    p1.write_bytes(d0)
    out = assert_refused(broker, p0, r"the index needs|swapped or overwritten")
    # nothing was cut: stor_recover, which truncates to the index's length, never ran
    assert p1.read_bytes() == d0 and p0.read_bytes() == d1, out


def test_swapped_segments_of_one_partition_are_refused(broker):
    broker.config["storage.segment.bytes"] = 1048576
    broker.start()
    fill(broker, "t", [2500], size=1500)  # more than two segments of 1 MiB
    broker.stop(check=True)
    s1, s2 = segment(broker, "t", 0, 1), segment(broker, "t", 0, 2)
    assert segment(broker, "t", 0, 3).exists()
    d1, d2 = s1.read_bytes(), s2.read_bytes()
    s1.write_bytes(d2)
    s2.write_bytes(d1)
    # seg 2's bytes in seg 1's place: shorter than seg 1's rows need, or another batch where its newest should be
    assert_refused(broker, s1, r"00000000000000000001\.log (is \d+ bytes, the index needs \d+|: the batch at byte \d+ "
                               r"\(offsets \d+-\d+ in the index\) is (offsets \d+-\d+, the index says \d+-\d+|not a record "
                               r"batch).* \(swapped or overwritten\?\))")
    assert s1.read_bytes() == d2 and s2.read_bytes() == d1


def counts_exact(b):
    """segments.live and .used as stored match the batch rows (what a start folds: migration 22)."""
    con = sqlite3.connect(b.db_path)
    try:
        return con.execute(
            "SELECT count(*) FROM segments d WHERE live != (SELECT count(*) FROM batches b"
            " WHERE b.topic_id = d.topic_id AND b.partition = d.partition AND b.seg = d.id)"
            " OR used < (SELECT coalesce(max(pos + size), 0) FROM batches b"
            " WHERE b.topic_id = d.topic_id AND b.partition = d.partition AND b.seg = d.id)").fetchone()[0] == 0
    finally:
        con.close()


def test_kill9_with_segments_filled_past_the_snapshot_keeps_every_record(broker):
    """Since schema migration 22 the batches appended after the last producer snapshot (up to
    4,096) are not counted in segments.live or .used until the snapshot's commit or the next start
    folds them. A kill -9 after filling more than two segments with such batches: the start cuts
    nothing acknowledged, the full check passes, the sweep keeps the filled segments while their
    rows are unfolded, and DeleteRecords after the restart still removes the dead ones."""
    broker.config["storage.segment.bytes"] = 1048576
    broker.config["profile"] = "kafka"  # DeleteRecords
    broker.start()
    fill(broker, "t", [2500], size=1500)  # more than two segments of 1 MiB, one batch per record
    before = read_all(broker, "t", 1)
    assert len(before) == 2500
    con = sqlite3.connect(broker.db_path)
    assert con.execute("SELECT sum(live) FROM segments").fetchone()[0] == 0  # none folded yet
    con.close()
    assert segment(broker, "t", 0, 3).exists()
    broker.kill9(restart=False)
    broker.config["storage.verify"] = "full"
    broker.start()
    assert read_all(broker, "t", 1) == before
    assert counts_exact(broker)
    s1, s2 = segment(broker, "t", 0, 1), segment(broker, "t", 0, 2)
    assert s1.exists() and s2.exists()
    # removed by offsets past segment 2's last batch: segments 1 and 2 die and go after the commit
    con = sqlite3.connect(broker.db_path)
    tid = con.execute("SELECT id FROM topics WHERE name = 't'").fetchone()[0]
    (upto,) = con.execute("SELECT min(base_offset) FROM batches WHERE topic_id = ? AND seg = 3", (tid,)).fetchone()
    con.close()
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    tp = TopicPartition("t", 0, upto)
    assert admin.delete_records([tp], operation_timeout=10)[tp].result(timeout=30).low_watermark == upto
    deadline = time.time() + 10
    while (s1.exists() or s2.exists()) and time.time() < deadline:
        time.sleep(0.05)
    assert not s1.exists() and not s2.exists()
    broker.stop(check=True)
    broker.start()
    assert read_all(broker, "t", 1) == {k: v for k, v in before.items() if k[1] >= upto}
    broker.stop(check=True)
    assert counts_exact(broker)


def scribble_middle(path):
    """Garbage in the records of the middle batch of the file; returns that batch."""
    data = path.read_bytes()
    bs = batches(data)
    assert len(bs) >= 5
    pos, size, base, last = bs[len(bs) // 2]
    with open(path, "r+b") as f:
        f.seek(pos + size - 40)
        f.write(b"\xa5" * 20)
    return pos, size, base, last


def test_scribbled_middle_batch_start_passes_full_refuses_then_salvaged(broker):
    """storage.verify=start reads only the newest batch of each segment file (its cost is one read
    per file), so a batch written over in the middle is not seen at start; full reads them all."""
    broker.start()
    fill(broker, "t", [30, 20])
    before = read_all(broker, "t", 2)
    broker.stop(check=True)
    path = segment(broker, "t", 0)
    _, _, base, last = scribble_middle(path)

    broker.config["storage.verify"] = "start"
    broker.start()
    broker.stop(check=True)
    assert re.search(r"storage: 2 segment files checked against the index \(storage.verify=start: 2 batches read",
                     broker.log_text()), broker.log_text()

    broker.config["storage.verify"] = "full"
    assert_refused(broker, path, r"the batch at byte \d+ \(offsets %d-%d in the index\) has a CRC mismatch \(overwritten\?\)"
                   % (base, last), r"storage.verify=full")

    salvage(broker)
    broker.start()
    after = read_all(broker, "t", 2)
    assert after == {k: v for k, v in before.items() if not (k[0] == 0 and base <= k[1] <= last)}


def fetch(b, topic, partition, offset):
    with kw.connect(b.port) as s:
        s.sendall(kw.fetch_request(7, "verify", topic, partition, offset))
        _, body = kw.recv_frame(s)
    (p,) = kw.parse_fetch(kw.FETCH_V, body)["topics"][0]["partitions"]
    return p


def test_scribbled_while_running_full_fetch_refuses_that_partition_only(broker):
    broker.config["storage.verify"] = "full"
    broker.start()
    fill(broker, "t", [30, 20])
    path = segment(broker, "t", 0)
    clean = path.read_bytes()
    pos, size, base, last = scribble_middle(path)  # the broker reads the same page cache

    ok = fetch(broker, "t", 1, 0)
    assert ok["error"] == 0 and ok["records"], ok
    served = fetch(broker, "t", 0, 0)  # the batches before the damaged one, and nothing of it
    assert served["error"] == 0 and served["records"] == clean[:pos], served["error"]
    since = broker.log_size()
    bad = fetch(broker, "t", 0, base)
    assert bad["error"] == KAFKA_STORAGE_ERROR and not bad["records"], bad
    broker.wait_for_log(r"refused error=KAFKA_STORAGE_ERROR\(56\): t-0: reading the log failed: the batch at offset %d "
                        r"\(offsets %d-%d, in segment %s at byte %d\) has a CRC mismatch; not served \(storage.verify=full\)"
                        % (base, base, last, re.escape(str(path)), pos), since=since)

    # a real consumer: partition 1 whole, partition 0 up to the damaged batch and never past it
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "verify-full", "enable.auto.commit": False,
                  "enable.partition.eof": True})
    c.assign([TopicPartition("t", p, OFFSET_BEGINNING) for p in range(2)])
    got, eof, deadline = {0: set(), 1: set()}, False, time.time() + 15
    try:
        while time.time() < deadline and not (eof and len(got[0]) >= base):
            m = c.poll(0.5)
            if m is None:
                continue
            if m.error():
                eof = eof or (m.error().code() == confluent_kafka.KafkaError._PARTITION_EOF and m.partition() == 1)
                continue
            got[m.partition()].add(m.offset())
        time.sleep(2)  # its retries of the damaged batch bring nothing
        while (m := c.poll(0.2)) is not None:
            if not m.error():
                got[m.partition()].add(m.offset())
    finally:
        c.close()
    assert got[1] == set(range(20)), got[1]
    assert got[0] == set(range(base)), got[0]
    broker.assert_alive()
