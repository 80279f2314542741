"""A full disk, on a small tmpfs holding the data directory: the broker refuses writes with
KAFKA_STORAGE_ERROR (56) and says why, keeps serving reads, frees space on DeleteTopics, resumes
writing by itself when space returns, loses nothing it acknowledged, and leaves a database that
passes integrity_check.

  test_produce_refused_before_the_disk_is_full   storage.min.free.bytes: produce gets 56 while
                                                 the reserve would be touched; DeleteTopics works
                                                 and gives the space back to produce
  test_failed_commit_is_survived                 no reserve: the disk fills for real, the commit
                                                 fails, its produce requests get 56, the broker
                                                 goes on; an OffsetCommit whose commit fails gets
                                                 NOT_COORDINATOR and its offsets are not served;
                                                 writes resume once a file is deleted
  test_delete_topics_on_a_full_disk_without_reserve   no reserve and the disk 100 % full:
                                                 DeleteTopics works (issue 35: it exited 3)

Regression tests for issue 11: before, the first failed commit stopped the broker (exit 3) and
every restart crashed again on the next write.
"""

import hashlib
import os
import sqlite3
import subprocess

import pytest

import kafka_wire as kw
from harness import Broker
from test_durability import read_all

pytestmark = pytest.mark.timeout(300)

VALUE = 256 << 10
ERR_STORAGE = 56


@pytest.fixture
def small_fs(tmp_path):
    """A 48 MiB tmpfs, mounted for the test and unmounted after it."""
    mnt = tmp_path / "fs"
    mnt.mkdir()
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", str(mnt)], capture_output=True, text=True)
    if p.returncode != 0:
        if os.environ.get("CI"):
            pytest.fail("cannot mount a tmpfs (CI runs as root): %s" % p.stderr)
        pytest.skip("cannot mount a tmpfs: %s" % p.stderr.strip())
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def start(small_fs, config):
    """The broker's data directory on the small disk; its log stays on the harness's own (a
    full disk must not swallow the lines the test reads)."""
    b = Broker(broker_count=1, config=dict({"data.dir": str(small_fs / "data"), "default.replication.factor": 1},
                                           **config))
    b.small_db = small_fs / "data" / "mskmock.db"
    b.start()
    return b


def create(b, name, partitions=3):
    with kw.connect(b.port) as s:
        s.sendall(kw.create_topics_request(kw.CREATE_TOPICS_V, 1, "it", name, partitions, 1))
        _, body = kw.recv_frame(s)
    assert kw.parse_create_topics(kw.CREATE_TOPICS_V, body)[0]["error"] == 0


def delete_topic(b, name):
    from confluent_kafka.admin import AdminClient
    admin = AdminClient({"bootstrap.servers": b.bootstrap})
    admin.delete_topics([name])[name].result(timeout=30)


class Writer:
    """Raw Produce v7, acks=-1, one batch of one record per request; remembers what was acked."""

    def __init__(self, b):
        self.sock = kw.connect(b.port, timeout=30)
        self.corr = 0
        self.acked = {}  # (topic, partition, offset) -> sha1 of the value

    def produce(self, topic, i):
        self.corr += 1
        value = hashlib.sha256(b"%d" % i).digest() * (VALUE // 32)
        partition = i % 3
        batch = kw.record_batch([(b"key-%d" % i, value, ())])
        self.sock.sendall(kw.produce_request(kw.PRODUCE_V, self.corr, "it", topic, partition, batch))
        corr, body = kw.recv_frame(self.sock)
        assert corr == self.corr
        (p,) = kw.parse_produce(kw.PRODUCE_V, body)[0]["partitions"]
        if p["error"] == 0:
            self.acked[(topic, partition, p["base_offset"])] = hashlib.sha1(value).hexdigest()
        return p["error"]

    def fill(self, topic, limit=400):
        """Produces until the broker answers 56; returns how many were acked before."""
        for i in range(limit):
            err = self.produce(topic, i)
            if err == ERR_STORAGE:
                return i
            assert err == 0, "produce %d: error %d" % (i, err)
        pytest.fail("no KAFKA_STORAGE_ERROR after %d records of %d KiB on a 48 MiB disk" % (limit, VALUE >> 10))

    def close(self):
        self.sock.close()


def commit_offsets(b, topic, partitions, offset, metadata=""):
    """A simple consumer's OffsetCommit v2 for group "full-disk": {(topic, partition): error}."""
    with kw.connect(b.port, timeout=30) as s:
        s.sendall(kw.offset_commit_request(1, "it", "full-disk", topic, {p: offset for p in partitions}, metadata))
        _, body = kw.recv_frame(s)
    return kw.parse_offset_commit(body)


def committed(b, topic, partitions):
    from confluent_kafka import Consumer, TopicPartition
    c = Consumer({"bootstrap.servers": b.bootstrap, "group.id": "full-disk", "enable.auto.commit": False})
    try:
        return [tp.offset for tp in c.committed([TopicPartition(topic, p) for p in partitions], timeout=10)]
    finally:
        c.close()


def check_acked(b, w, topic):
    got = read_all(b.bootstrap, topic)
    want = {(p, o): h for (t, p, o), h in w.acked.items() if t == topic}
    have = {(p, o): hashlib.sha1(v).hexdigest() for (p, o), (k, v) in got.items()}
    missing = [k for k in want if have.get(k) != want[k]]
    assert not missing, "acknowledged records missing or changed: %s" % missing[:5]
    return len(want)


def integrity(b):
    db = sqlite3.connect(str(b.small_db))
    try:
        return db.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        db.close()


def test_produce_refused_before_the_disk_is_full(small_fs):
    b = start(small_fs, {"storage.min.free.bytes": 8 << 20})
    w = Writer(b)
    try:
        create(b, "filler")
        create(b, "keep")
        since = b.log_size()
        n = w.fill("filler")
        assert n > 20, "refused after only %d records" % n
        line = b.wait_for_log(r"refused error=KAFKA_STORAGE_ERROR\(56\): filler-\d: storage is full: \d+ bytes free "
                              r"for .*storage\.min\.free\.bytes=8388608", since=since)
        assert line, b.log_tail()
        print("broker: " + line)
        assert w.produce("keep", 0) == ERR_STORAGE  # every topic: the disk is what is full
        assert check_acked(b, w, "filler") == n     # reads go on

        delete_topic(b, "filler")                   # works on the full disk, and frees its pages
        for i in range(10):
            assert w.produce("keep", i) == 0, "produce after the delete %d" % i
        b.assert_alive()
        w.close()
        b.stop(check=True)
        assert integrity(b) == "ok"
        b.start()
        assert check_acked(b, w, "keep") == 10
    finally:
        w.close()
        b.stop(check=False)
        b.cleanup()


def test_failed_commit_is_survived(small_fs):
    filler = small_fs / "other-files"
    filler.write_bytes(b"\0" * (8 << 20))  # someone else's file on the same disk
    b = start(small_fs, {"storage.min.free.bytes": 0})
    w = Writer(b)
    try:
        create(b, "t")
        create(b, "wide", partitions=1500)
        since = b.log_size()
        n = w.fill("t")
        # Record bytes go to a segment file before their commit (storage/stor_segments.c), so a
        # full disk usually shows there first: that produce is refused and nothing is appended.
        # Should the segment write pass and the commit fail, the commit's produces are refused.
        line = b.wait_for_log(r"refused error=KAFKA_STORAGE_ERROR\(56\): (t-\d: append to segment \d+: No space left "
                              r"on device|1 partition\(s\): the storage commit that held their batches failed)",
                              since=since)
        assert line, b.log_tail()
        print("broker: " + line)
        b.assert_alive()
        assert check_acked(b, w, "t") == n  # every acknowledged record, nothing of the failed commit

        # An offset commit on the full disk (1500 partitions with 4000 bytes of metadata each: more
        # than the log's unused space takes): its commit fails too, it is answered NOT_COORDINATOR
        # (Kafka's answer when __consumer_offsets cannot be written), and the offsets it would have
        # set are not served; the broker goes on (before, it stopped with exit 3 here).
        since = b.log_size()
        errs = commit_offsets(b, "wide", range(1500), 7, "m" * 4000)
        assert set(errs.values()) == {16}, sorted(set(errs.values()))
        line = b.wait_for_log(r"storage commit failed: .*committed offsets were read again from storage.*"
                              r"reads go on", since=since)
        assert line, b.log_tail()
        print("broker: " + line)
        assert b.wait_for_log(r"refused error=NOT_COORDINATOR\(16\): 1500 partition\(s\): the storage commit that "
                              r"held their offsets failed", since=since), b.log_tail()
        b.assert_alive()
        assert committed(b, "wide", [0, 1499]) == [-1001, -1001]

        filler.unlink()                     # space returns: writes resume by themselves
        for i in range(n, n + 5):
            assert w.produce("t", i) == 0
        assert set(commit_offsets(b, "wide", range(10), 9).values()) == {0}
        assert committed(b, "wide", [0, 9]) == [9, 9]
        w.close()
        b.stop(check=True)
        assert integrity(b) == "ok"
        b.start()
        assert check_acked(b, w, "t") == n + 5
    finally:
        w.close()
        b.stop(check=False)
        b.cleanup()


def fill_to_the_last_byte(small_fs):
    """Someone else's file takes every byte left: the disk is 100 % full."""
    with open(small_fs / "last-bytes", "wb", buffering=0) as f:
        for size in (1 << 20, 4096, 1):
            try:
                while True:
                    f.write(b"\0" * size)
            except OSError:
                pass
    assert os.statvfs(small_fs).f_bavail == 0


def produce_small_batches(b, topic, count):
    """count one-record batches, pipelined on one connection (acks=1): many index rows, few bytes."""
    with kw.connect(b.port, timeout=60) as s:
        for start in range(0, count, 1000):
            n = min(1000, count - start)
            s.sendall(b"".join(kw.produce_request(kw.PRODUCE_V, start + i, "it", topic, (start + i) % 3,
                                                  kw.record_batch([(b"k", b"v%d" % (start + i), ())]), acks=1)
                               for i in range(n)))
            for _ in range(n):
                _, body = kw.recv_frame(s)
                assert kw.parse_produce(kw.PRODUCE_V, body)[0]["partitions"][0]["error"] == 0


def test_delete_topics_on_a_full_disk_without_reserve(small_fs):
    """Issue 35: with storage.min.free.bytes=0 and the disk 100 % full, DeleteTopics stopped the
    broker (exit 3): the delete's pages had no room in the WAL (a fresh one after a restart), so
    its commit failed. Deleting must always be possible: the storage reserve gives that room."""
    b = start(small_fs, {"storage.min.free.bytes": 0})
    try:
        create(b, "doomed")
        create(b, "keep")
        produce_small_batches(b, "doomed", 30000)
        b.stop(check=True)  # the WAL goes with the last connection: the delete will need new room
        b.start()
        fill_to_the_last_byte(small_fs)
        since = b.log_size()
        delete_topic(b, "doomed")
        assert b.wait_for_log(r"deleted topic doomed", since=since), b.log_tail()
        line = b.wait_for_log(r"topic doomed: deleting it failed .*freed the storage reserve", since=since)
        assert line, b.log_tail()
        print("broker: " + line)
        b.assert_alive()
        assert os.statvfs(small_fs).f_bavail > 0  # its segments went
        (small_fs / "last-bytes").unlink()
        w = Writer(b)
        for i in range(5):
            assert w.produce("keep", i) == 0, "produce after the delete %d" % i
        w.close()
        b.stop(check=True)
        assert integrity(b) == "ok"
        b.start()
        assert check_acked(b, w, "keep") == 5
        assert not [t for t in kw_topics(b) if t == "doomed"]  # and it stays deleted
    finally:
        b.stop(check=False)
        b.cleanup()


def kw_topics(b):
    from confluent_kafka.admin import AdminClient
    return list(AdminClient({"bootstrap.servers": b.bootstrap}).list_topics(timeout=10).topics)
