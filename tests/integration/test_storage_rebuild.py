"""The index rebuilt from the segment files (issue 35, finding 1): record bytes are the truth.

  test_page2_damage_then_salvage_keeps_every_record
                                           the topics table's page overwritten (and, in a second
                                           run, the index on topic names too): --salvage recreates
                                           the topics, named from that index or recovered-topic-<id>,
                                           and every acknowledged record is consumed at its offset
  test_unreadable_schema_then_salvage_rebuilds_topics_from_segments
                                           the schema page overwritten: nothing is readable, and
                                           --salvage rebuilds the topics and their partitions from
                                           the segment files, every record at its offset; a topic
                                           created after it takes a new id
  test_rebuild_index_of_a_compacted_topic_has_no_duplicated_offsets
                                           the cleaner's rewrites sit in the segments beside the old
                                           copies of the same offsets: --rebuild-index keeps the
                                           newest copy only, and the consumer sees what it saw before
  test_torn_last_batch_drops_only_that_batch
                                           a few bytes cut off a partition's segment: --rebuild-index
                                           drops that one batch, says so and keeps its bytes aside
  test_idempotent_producer_continues_after_rebuild
                                           the producer state comes from the rebuilt batch rows: the
                                           same producer goes on without OUT_OF_ORDER_SEQUENCE
"""

import glob
import os
import re
import struct
import subprocess
import time
import urllib.request
import json

import pytest

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

from harness import Broker  # noqa: E402


def page_size(db):
    """The database's page size, from its header (new databases have 1 KiB pages, older ones 4 KiB)."""
    with open(db, "rb") as f:
        f.seek(16)
        n = int.from_bytes(f.read(2), "big")
    return 65536 if n == 1 else n


@pytest.fixture
def broker():
    b = Broker(config={"storage.sync": "normal", "log.cleaner.backoff.ms": 3_600_000})
    yield b
    b.stop(check=False)
    b.cleanup()


def create(b, name, partitions=3, **config):
    a = AdminClient({"bootstrap.servers": b.bootstrap})
    cfg = {k.replace("_", "."): str(v) for k, v in config.items()}
    a.create_topics([NewTopic(name, partitions, config=cfg)])[name].result(30)


def produce(b, topic, count, partitions=3, per_batch=1, **conf):
    """count records, key i, to partition i % partitions, acks=all; {(partition, offset): (key, value)} acknowledged."""
    p = Producer({"bootstrap.servers": b.bootstrap, "acks": "all", "linger.ms": 0, **conf})
    acked, errors = {}, []

    def on(err, m):
        if err:
            errors.append(err)
        else:
            acked[(m.partition(), m.offset())] = (m.key(), m.value())

    for i in range(count):
        p.produce(topic, key=b"%d" % i, value=(b"%d-" % i) * 40, partition=i % partitions, on_delivery=on)
        if (i + 1) % per_batch == 0:
            p.flush(20)
    assert p.flush(20) == 0 and not errors, errors
    return acked


def consume(b, topic, partitions=3, timeout=30):
    """Every record of topic from the start, in the order served: [(partition, offset, key, value)]."""
    c = Consumer({"bootstrap.servers": b.bootstrap, "group.id": "rebuild-check", "enable.auto.commit": False,
                  "enable.partition.eof": True})
    c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
    out, eof = [], set()
    import time
    deadline = time.time() + timeout
    try:
        while len(eof) < partitions and time.time() < deadline:
            m = c.poll(0.5)
            if m is None:
                continue
            if m.error():
                if m.error().code() == KafkaError._PARTITION_EOF:
                    eof.add(m.partition())
                    continue
                raise AssertionError("consume error: %s" % m.error())
            out.append((m.partition(), m.offset(), m.key(), m.value()))
    finally:
        c.close()
    assert len(eof) == partitions, "did not reach the end of every partition of %s" % topic
    return out


def as_map(records):
    got = {(p, o): (k, v) for p, o, k, v in records}
    assert len(got) == len(records), "an offset was served twice"
    return got


def topics(b):
    md = AdminClient({"bootstrap.servers": b.bootstrap}).list_topics(timeout=10)
    return {name: len(t.partitions) for name, t in md.topics.items()}


def run_salvage(b, *args):
    p = subprocess.run([str(b.binary), *args], env=b.env(), capture_output=True, text=True, timeout=120)
    print(p.stdout + p.stderr)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stderr


def salvage(b):
    db = str(b.db_path)
    os.rename(db, db + ".damaged")
    return run_salvage(b, "--salvage", db + ".damaged")


def damage_pages(db, names):
    import sqlite3
    con = sqlite3.connect(db)
    pages = [r[0] for r in con.execute("SELECT pageno FROM dbstat WHERE name IN (%s)" % ",".join("?" * len(names)),
                                       names)]
    con.close()
    assert pages
    size = page_size(db)
    with open(db, "r+b") as f:
        for page in pages:
            f.seek((page - 1) * size)
            f.write(os.urandom(size))


def segment_batches(path):
    """[(base offset, position)] of the record batches of one segment file, as far as they parse."""
    out, pos = [], 0
    with open(path, "rb") as f:
        data = f.read()
    while pos + 12 <= len(data):
        base, length = struct.unpack(">qi", data[pos:pos + 12])
        if length < 49 or pos + 12 + length > len(data):
            break
        out.append((base, pos))
        pos += 12 + length
    return out


@pytest.mark.parametrize("lose_names", [False, True], ids=["names-readable", "names-lost"])
def test_page2_damage_then_salvage_keeps_every_record(broker, lose_names):
    broker.start()
    acked = {}
    for t in ("a", "b"):
        create(broker, t)
        acked[t] = produce(broker, t, 300, per_batch=20)
    broker.stop(check=True)
    damage_pages(str(broker.db_path), ["topics", "sqlite_autoindex_topics_1"] if lose_names else ["topics"])
    out = salvage(broker)
    assert len(re.findall(r"its topics row was lost; recreated as", out)) == 2, out
    names = {"a": "a", "b": "b"}
    if lose_names:
        ids = dict(re.findall(r"topic id (\d+): its topics row was lost; recreated as '(recovered-topic-\d+)'", out))
        assert len(ids) == 2, out
        names = {"a": ids["1"], "b": ids["2"]}  # created in that order
    broker.start()
    have = topics(broker)
    for t, name in names.items():
        assert have.get(name) == 3, have
        assert as_map(consume(broker, name)) == acked[t]
    assert not (broker.data_dir / "orphaned").exists(), "a salvage that kept the topics moved files aside"


def test_unreadable_schema_then_salvage_rebuilds_topics_from_segments(broker):
    broker.start()
    create(broker, "old")
    acked = produce(broker, "old", 300, per_batch=20)
    broker.stop(check=True)
    size = page_size(broker.db_path)
    with open(broker.db_path, "r+b") as f:  # the schema page past the file header: no table can be found
        f.seek(100)
        f.write(os.urandom(size - 100))
    out = salvage(broker)
    assert "recreated as 'recovered-topic-1' (a placeholder name), 3 partitions" in out, out
    rebuilt = re.findall(r"rebuilt topic 'recovered-topic-1' \(id 1\) partition (\d) from 1 segment files: (\d+) "
                         r"batches, (\d+) records kept", out)
    assert sorted(p for p, _, _ in rebuilt) == ["0", "1", "2"], out
    assert sum(int(n) for _, _, n in rebuilt) == 300, out
    assert "salvage: done" in out and "3 partitions rebuilt" in out, out

    broker.start()
    assert as_map(consume(broker, "recovered-topic-1")) == acked
    create(broker, "new")
    assert produce(broker, "new", 30)
    broker.stop(check=True)
    # the new topic took an id no directory had: the old files are where they were, whole
    broker.start()
    assert as_map(consume(broker, "recovered-topic-1")) == acked
    assert len(consume(broker, "new")) == 30
    broker.stop(check=True)
    assert "moved aside" not in broker.log_text()


def test_salvage_with_nothing_readable_and_no_segments_fails(broker):
    broker.start()
    broker.stop(check=True)
    size = page_size(broker.db_path)
    with open(broker.db_path, "r+b") as f:
        f.seek(100)
        f.write(os.urandom(size - 100))
    db = str(broker.db_path)
    os.rename(db, db + ".damaged")
    p = subprocess.run([str(broker.binary), "--salvage", db + ".damaged"], env=broker.env(), capture_output=True,
                       text=True, timeout=60)
    assert p.returncode != 0, p.stderr
    assert "nothing was salvaged" in p.stderr and "salvage: done" not in p.stderr, p.stderr
    assert not os.path.exists(db)


def test_rebuild_index_of_a_compacted_topic_has_no_duplicated_offsets(broker):
    broker.config["log.cleaner.min.compaction.lag.ms"] = 600_000  # the topic config is not MSK Serverless's to set
    broker.start()
    # Since issue 37 a pass moves every batch of its range to a cleaned segment, and the old
    # segments die; one survives with dead copies when it also holds batches past the pass's end.
    # min.compaction.lag.ms makes the last round such batches: the first two are an hour old.
    create(broker, "c", partitions=1, cleanup_policy="compact")
    old = int(time.time() * 1000) - 3_600_000
    # 200 keys, then every other key again: each first-round batch loses half its records
    p = Producer({"bootstrap.servers": broker.bootstrap, "acks": "all", "linger.ms": 0})
    for rnd, step in ((0, 1), (1, 2)):
        for i in range(0, 200, step):
            p.produce("c", key=b"k%d" % i, value=b"r%d-%d" % (rnd, i) * 20, partition=0, timestamp=old)
            if i % 20 == 0:
                p.flush(20)
    assert p.flush(20) == 0
    for i in range(10):  # too young to compact: the pass ends before them, their segment stays
        p.produce("c", key=b"k%d" % i, value=b"r2-%d" % i * 20, partition=0)
    assert p.flush(20) == 0
    req = urllib.request.Request(broker.admin_url + "/v1/compaction", data=json.dumps({"force": True}).encode(),
                                 method="POST")
    with urllib.request.urlopen(req, timeout=60) as r:
        r.read()
    assert broker.wait_for_log(r"compaction: c-0 offsets", timeout=10), broker.log_tail()
    before = consume(broker, "c", partitions=1)
    assert 0 < len(before) < 310
    broker.stop(check=True)
    seen = {}
    for path in glob.glob(str(broker.data_dir / "*.segments" / "*-0" / "*.log")):
        for base, _ in segment_batches(path):
            seen[base] = seen.get(base, 0) + 1
    assert any(n > 1 for n in seen.values()), "no dead copy left on disk: the test proves nothing (%s)" % seen

    out = run_salvage(broker, "--rebuild-index")
    m = re.search(r"rebuilt topic 'c' \(id \d+\) partition 0 .* (\d+) superseded copies", out)
    assert m and int(m.group(1)) > 0, out
    aside = [f for f in glob.glob(str(broker.db_path) + ".before-rebuild-*") if not f.endswith(("-wal", "-shm"))]
    assert len(aside) == 1, os.listdir(broker.data_dir)  # kept, never deleted
    broker.start()
    after = consume(broker, "c", partitions=1)
    offsets = [o for _, o, _, _ in after]
    assert offsets == sorted(set(offsets)), "offsets served twice or out of order"
    # every record kept before is there at its offset; batches the cleaner removed whole may be
    # back (their bytes were still in the segment), older values of their keys, never newer ones
    assert set(before) <= set(after)
    assert latest(after) == latest(before)
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "hw"})
    assert c.get_watermark_offsets(TopicPartition("c", 0), timeout=10)[1] == 310
    c.close()
    # the rebuild reset the cleaner's checkpoint: the next pass removes them again
    since = broker.log_size()
    req = urllib.request.Request(broker.admin_url + "/v1/compaction", data=json.dumps({"force": True}).encode(),
                                 method="POST")
    with urllib.request.urlopen(req, timeout=60) as r:
        r.read()
    assert broker.wait_for_log(r"compaction: c-0 offsets", since=since, timeout=10), broker.log_tail()
    assert consume(broker, "c", partitions=1) == before


def latest(records):
    """{key: (offset, value)} of each key's newest record."""
    out = {}
    for _, o, k, v in records:
        out[k] = (o, v)
    return out


def test_torn_last_batch_drops_only_that_batch(broker):
    broker.start()
    create(broker, "t")
    acked = produce(broker, "t", 90)  # one record per batch
    broker.stop(check=True)
    segs = sorted(glob.glob(str(broker.data_dir / "*.segments" / "*-0" / "*.log")))
    size = os.path.getsize(segs[-1])
    os.truncate(segs[-1], size - 7)
    out = run_salvage(broker, "--rebuild-index")
    line = [ln for ln in out.splitlines() if "rebuilt topic 't'" in ln and "partition 0 " in ln]
    assert len(line) == 1, out
    last = max(o for p, o in acked if p == 0)
    assert "29 batches, 29 records kept, offsets 0..%d" % (last - 1) in line[0], line[0]
    m = re.search(r"segment 1 at byte (\d+): [^:]+: (\d+) bytes dropped, copied to ([^;\s]+)", line[0])
    assert m, line[0]
    assert os.path.getsize(m.group(3)) == int(m.group(2)) == size - 7 - int(m.group(1))
    broker.start()
    want = {k: v for k, v in acked.items() if k != (0, last)}
    assert as_map(consume(broker, "t")) == want


def test_idempotent_producer_continues_after_rebuild(broker):
    broker.start()
    create(broker, "idem", partitions=1)
    p = Producer({"bootstrap.servers": broker.bootstrap, "enable.idempotence": True, "linger.ms": 0})
    errors = []

    def on(err, m):
        if err:
            errors.append(err)

    for i in range(50):
        p.produce("idem", value=b"first-%d" % i, partition=0, on_delivery=on)
        if i % 10 == 9:
            p.flush(20)
    assert p.flush(20) == 0 and not errors
    broker.stop(check=True)
    run_salvage(broker, "--rebuild-index")
    broker.start()
    # the same producer (same id and epoch) goes on with its next sequence numbers
    for i in range(50):
        p.produce("idem", value=b"second-%d" % i, partition=0, on_delivery=on)
    assert p.flush(60) == 0
    assert not errors, errors
    got = consume(broker, "idem", partitions=1)
    assert [o for _, o, _, _ in got] == list(range(100))
    assert [v for _, _, _, v in got] == [b"first-%d" % i for i in range(50)] + [b"second-%d" % i for i in range(50)]
