"""A damaged or emptied database is refused at start-up, loudly, and the documented way out
(mskmock --salvage) brings back what is readable:

  test_zero_length_database_is_refused     truncated to 0 bytes: not a new empty cluster
  test_damaged_header_names_the_real_step  garbage over the header: "reading the database header"
  test_mid_file_damage_is_refused_then_recovered
                                           pages of the batches table overwritten: quick_check names
                                           the damage, the broker exits without touching the file;
                                           --salvage copies what is readable into a new database,
                                           reports the damaged table, and the broker starts on the
                                           result with every record of the untouched topic
"""

import os
import re
import sqlite3
import subprocess

import pytest
from confluent_kafka import Producer

from harness import Broker
from test_durability import create_topic, read_all

PAGE = 4096


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
    broker.stop(check=True)
    con = sqlite3.connect(broker.db_path)
    leaves = [r[0] for r in con.execute("SELECT pageno FROM dbstat WHERE name = 'batches' AND pagetype = 'leaf'"
                                        " ORDER BY path")]
    con.close()
    assert len(leaves) >= 8, leaves
    with open(broker.db_path, "r+b") as f:  # two leaf pages of garbage, three quarters into the table
        for page in leaves[len(leaves) * 3 // 4:len(leaves) * 3 // 4 + 2]:
            f.seek((page - 1) * PAGE)
            f.write(os.urandom(PAGE))
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
    assert "salvage: done" in p.stderr, p.stderr
    # a second salvage never overwrites the first
    p2 = subprocess.run([str(broker.binary), "--salvage", db + ".damaged"], env=broker.env(),
                        capture_output=True, text=True, timeout=60)
    assert p2.returncode != 0 and "exists: salvage writes a new database" in p2.stderr, p2.stderr

    broker.start()
    assert read_all(broker.bootstrap, "kept") == before
    damaged_left = read_all(broker.bootstrap, "damaged")
    assert 0 < len(damaged_left) < 600, len(damaged_left)
    broker.stop(check=True)
