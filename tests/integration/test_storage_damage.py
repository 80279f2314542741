"""A damaged or emptied database is refused at start-up, loudly, and the documented way out
(mskmock --salvage) brings back what is readable:

  test_zero_length_database_is_refused     truncated to 0 bytes: not a new empty cluster
  test_damaged_header_names_the_real_step  garbage over the header: "reading the database header"
  test_mid_file_damage_is_refused_then_recovered
                                           pages of the batches table overwritten: quick_check names
                                           the damage, the broker exits without touching the file;
                                           --salvage copies what is readable into a new database,
                                           reports the damaged table, rebuilds the lost batch rows
                                           from the segment files, and the broker starts on the
                                           result with every record of both topics
  test_page2_damage_then_salvage_then_start_keeps_every_segment_file
                                           the topics table's page overwritten: the salvage recreates
                                           the topics (test_storage_rebuild.py checks their records);
                                           the start after it moves nothing aside and deletes nothing
  test_new_topic_after_unreadable_schema_salvage_does_not_overwrite_the_orphaned_segment
                                           the schema page overwritten: the salvage rebuilds the
                                           topic from its segments; a new topic takes an id no
                                           directory has, the old segment files keep their bytes
"""

import hashlib
import os
import re
import sqlite3
import subprocess

import pytest
from confluent_kafka import Producer

from harness import Broker
from test_durability import create_topic, read_all


def page_size(db):
    """The database's page size, from its header (new databases have 1 KiB pages, older ones 4 KiB)."""
    with open(db, "rb") as f:
        f.seek(16)
        n = int.from_bytes(f.read(2), "big")
    return 65536 if n == 1 else n


def failed_start(b, timeout=20):
    """Runs the broker once on b's config and data dir; returns (exit code, its output)."""
    if b.port is None:
        b.start()
        b.stop(check=True)
    p = subprocess.run([str(b.binary)], env=b.env(), cwd=str(b.data_dir), stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout + p.stderr


def fill(b, topic, count, size=3000, batch_size=16384):
    create_topic(b.bootstrap, topic)
    p = Producer({"bootstrap.servers": b.bootstrap, "acks": "all", "linger.ms": 0, "batch.size": batch_size})
    for i in range(count):
        p.produce(topic, key=b"%d" % i, value=(b"%d-" % i) * (size // 6), partition=i % 3)
    assert p.flush(20) == 0


@pytest.fixture
def broker():
    b = Broker(config={"storage.sync": "normal"})
    yield b
    b.stop(check=False)
    b.cleanup()


def test_zero_length_database_is_refused(broker):
    broker.start()
    fill(broker, "kept", 30)
    broker.stop(check=True)
    os.truncate(broker.db_path, 0)
    rc, out = failed_start(broker)
    assert rc != 0, out
    assert "the database file exists but is empty (0 bytes)" in out and str(broker.db_path) in out, out
    assert os.path.getsize(broker.db_path) == 0, "the refused start wrote to the file"


def test_damaged_header_names_the_real_step(broker):
    broker.start()
    broker.stop(check=True)
    with open(broker.db_path, "r+b") as f:
        f.write(b"this is no longer an SQLite database header.....")
    rc, out = failed_start(broker)
    assert rc != 0, out
    assert "reading the database header: file is not a database" in out, out
    assert "PRAGMA synchronous" not in out, out


def test_mid_file_damage_is_refused_then_recovered(broker):
    broker.start()
    # one record per batch: the batches table's rows (its record bytes are in segment files) fill
    # enough leaf pages to damage some in the middle and keep others whole
    fill(broker, "kept", 200, batch_size=3100)     # written first: its rows come first
    fill(broker, "damaged", 600, batch_size=3100)  # then these, behind them
    before = read_all(broker.bootstrap, "kept")
    before_damaged = read_all(broker.bootstrap, "damaged")
    broker.stop(check=True)
    con = sqlite3.connect(broker.db_path)
    leaves = [r[0] for r in con.execute("SELECT pageno FROM dbstat WHERE name = 'batches' AND pagetype = 'leaf'"
                                        " ORDER BY path")]
    con.close()
    assert len(leaves) >= 8, leaves
    size = page_size(broker.db_path)
    with open(broker.db_path, "r+b") as f:  # two leaf pages of garbage, three quarters into the table
        for page in leaves[len(leaves) * 3 // 4:len(leaves) * 3 // 4 + 2]:
            f.seek((page - 1) * size)
            f.write(os.urandom(size))
    with open(broker.db_path, "rb") as f:
        damaged = f.read()

    rc, out = failed_start(broker)
    assert rc != 0, out
    assert "is damaged (PRAGMA quick_check:" in out and "refusing to start on it, the file is unchanged" in out, out
    assert "mskmock --salvage DB.damaged" in out, out
    with open(broker.db_path, "rb") as f:
        assert f.read() == damaged, "the refused start changed the damaged file"
    db = str(broker.db_path)
    for suffix in ("-wal", "-shm", "-journal"):
        assert not os.path.exists(db + suffix), "the refused start left %s behind" % (db + suffix)

    # the way out the message and the README give
    os.rename(db, db + ".damaged")
    p = subprocess.run([str(broker.binary), "--salvage", db + ".damaged"], env=broker.env(),
                       capture_output=True, text=True, timeout=60)
    print(p.stdout + p.stderr)
    assert p.returncode == 0, p.stdout + p.stderr
    # the garbage lands on record pages (those rows are unreadable) or on the table's tree pages
    # (the rows under them are not even listed): either way the batches table is reported damaged
    m = re.search(r"salvage: table batches: (\d+) rows copied, (\d+) unreadable(, and rows under damaged tree "
                  r"pages not even listed)?", p.stderr)
    assert m and (int(m.group(2)) > 0 or m.group(3)), p.stderr
    # the rows under the damage are rebuilt from the segment files
    assert "rebuilding every partition's index from its segment files" in p.stderr, p.stderr
    assert "salvage: done" in p.stderr, p.stderr
    # a second salvage never overwrites the first
    p2 = subprocess.run([str(broker.binary), "--salvage", db + ".damaged"], env=broker.env(),
                        capture_output=True, text=True, timeout=60)
    assert p2.returncode != 0 and "exists: salvage writes a new database" in p2.stderr, p2.stderr

    broker.start()
    assert read_all(broker.bootstrap, "kept") == before
    assert read_all(broker.bootstrap, "damaged") == before_damaged
    broker.stop(check=True)


def segment_files(b):
    """{sha256: size} of every file under b's data directory, at any depth (moved aside or not)."""
    out = {}
    for root, _, files in os.walk(b.data_dir):
        if "segments" not in root and "orphaned" not in root:
            continue
        for name in files:
            with open(os.path.join(root, name), "rb") as f:
                data = f.read()
            out[hashlib.sha256(data).hexdigest()] = len(data)
    return out


def salvage(b):
    db = str(b.db_path)
    os.rename(db, db + ".damaged")
    p = subprocess.run([str(b.binary), "--salvage", db + ".damaged"], env=b.env(),
                       capture_output=True, text=True, timeout=60)
    print(p.stdout + p.stderr)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stderr


def test_page2_damage_then_salvage_then_start_keeps_every_segment_file(broker):
    broker.start()
    for t in ("a", "b"):
        fill(broker, t, 300)
    broker.stop(check=True)
    before = segment_files(broker)
    assert sum(before.values()) > 500_000, before
    con = sqlite3.connect(broker.db_path)
    pages = [r[0] for r in con.execute("SELECT pageno FROM dbstat WHERE name = 'topics'")]
    con.close()
    size = page_size(broker.db_path)
    with open(broker.db_path, "r+b") as f:  # the topics table: the rows every partition hangs from
        for page in pages:
            f.seek((page - 1) * size)
            f.write(os.urandom(size))
    rc, out = failed_start(broker)
    assert rc != 0, out
    salvage(broker)

    broker.start()
    broker.stop(check=True)
    after = segment_files(broker)
    lost = {h: n for h, n in before.items() if h not in after}
    assert not lost, "segment files gone after salvage and start: %s" % lost
    # the salvage recreated both topics: every partition directory is accounted for again
    assert "moved aside" not in broker.log_text(), broker.log_text()
    assert not (broker.data_dir / "orphaned").exists()


def test_new_topic_after_unreadable_schema_salvage_does_not_overwrite_the_orphaned_segment(broker):
    broker.start()
    fill(broker, "old", 300)
    broker.stop(check=True)
    before = segment_files(broker)
    assert sum(before.values()) > 200_000, before
    size = page_size(broker.db_path)
    with open(broker.db_path, "r+b") as f:  # the schema page past the file header: no table can be found
        f.seek(100)
        f.write(os.urandom(size - 100))
    rc, out = failed_start(broker)
    assert rc != 0, out
    salvage(broker)

    broker.start()
    fill(broker, "new", 30)
    broker.stop(check=True)
    after = segment_files(broker)
    lost = {h: n for h, n in before.items() if h not in after}
    assert not lost, "old segment files changed by a new topic: %s" % lost
    # the rebuilt topic's directories are the database's again: a second start keeps them in place
    broker.start()
    assert len(read_all(broker.bootstrap, "new")) == 30
    assert len(read_all(broker.bootstrap, "recovered-topic-1")) == 300
    broker.stop(check=True)
    after = segment_files(broker)
    assert not {h: n for h, n in before.items() if h not in after}
    assert "moved aside" not in broker.log_text()
