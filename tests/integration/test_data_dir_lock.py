"""One broker per data directory: DATA_DIR/.lock, held by the process (Kafka's LogManager.lockLogDirs).

  test_second_broker_on_the_dir_is_refused
                                   a second mskmock on a running broker's data directory exits 2 at
                                   once with one line naming the directory, the holder's pid and what
                                   to do; the first keeps serving, its records and its ready file intact
  test_start_after_kill9_takes_the_lock
                                   the lock goes with a process killed with SIGKILL: the next start on
                                   the directory works and serves what was acknowledged
  test_salvage_and_rebuild_index_refused_while_a_broker_runs
                                   --salvage and --rebuild-index refuse the same way and touch nothing
                                   (no database moved aside or replaced); once the broker stopped,
                                   --rebuild-index runs
  test_read_only_reader_beside_a_running_broker
                                   sqlite3 opens the running broker's mskmock.db read-only, as tests
                                   and users do: the lock is a separate file
"""

import os
import re
import sqlite3
import subprocess

import pytest

from harness import Broker, find_free_port_range


@pytest.fixture
def broker():
    b = Broker(config={"ready.file": "ready.json"})
    b.start()
    yield b
    b.stop(check=False)
    b.cleanup()


def cli(b, *args, stdin=None):
    p = subprocess.run([str(b.binary), *args, "-b", b.bootstrap], input=stdin, capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout


def produce(b, topic, lines):
    cli(b, "produce", topic, stdin="".join("%s\n" % l for l in lines))


def consume_all(b, topic, n):
    out = cli(b, "consume", topic, "-o", "beginning", "-n", str(n))
    return out.splitlines()


def second(b, *args):
    """Another mskmock on b's data directory with its own ports; (exit code, stderr). Without the
    lock it would start and serve, and the timeout fails the test."""
    other = Broker(data_dir=b.data_dir, config={"ready.file": "ready.json"})
    other.port = find_free_port_range(7)
    try:
        p = subprocess.run([str(b.binary), *args], env=other.env(), cwd=str(b.data_dir), capture_output=True,
                           text=True, timeout=20)
    except subprocess.TimeoutExpired:
        pytest.fail("a second mskmock %s ran on a data directory a broker holds" % " ".join(args))
    return p.returncode, p.stdout + p.stderr


def refusal_line(b, text):
    lines = [l for l in text.splitlines() if "is in use by another process" in l]
    assert len(lines) == 1, text
    line = lines[0]
    assert str(b.data_dir) in line, line
    assert "(pid %d)" % b.proc.pid in line, line
    assert re.search(r"stop that one first", line), line
    return line


def test_second_broker_on_the_dir_is_refused(broker):
    cli(broker, "topic", "create", "t", "-p", "1")
    produce(broker, "t", ["a", "b"])
    ready = broker.data_dir / "ready.json"
    assert ready.exists()
    rc, text = second(broker)
    assert rc == 2, text
    refusal_line(broker, text)
    assert "ready in" not in text, text  # it never got as far as serving
    broker.assert_alive()
    assert ready.exists(), "the refused broker removed the running one's ready file"
    produce(broker, "t", ["c"])
    assert consume_all(broker, "t", 3) == ["a", "b", "c"]
    with open(broker.data_dir / ".lock") as f:
        assert f.read().strip() == str(broker.proc.pid)


def test_start_after_kill9_takes_the_lock(broker):
    cli(broker, "topic", "create", "t", "-p", "1")
    produce(broker, "t", ["a", "b"])
    old = broker.proc.pid
    broker.kill9(restart=True)  # harness fails the test if the restart exits
    assert broker.proc.pid != old
    assert consume_all(broker, "t", 2) == ["a", "b"]
    rc, text = second(broker)
    assert rc == 2, text
    refusal_line(broker, text)


def test_salvage_and_rebuild_index_refused_while_a_broker_runs(broker):
    cli(broker, "topic", "create", "t", "-p", "1")
    produce(broker, "t", ["a", "b"])
    before = sorted(os.listdir(broker.data_dir))
    rc, text = second(broker, "--rebuild-index")
    assert rc == 2, text
    assert "--rebuild-index: " in refusal_line(broker, text)
    rc, text = second(broker, "--salvage", str(broker.data_dir / "elsewhere.db"))
    assert rc == 2, text
    assert "--salvage: " in refusal_line(broker, text)
    assert sorted(os.listdir(broker.data_dir)) == before
    broker.assert_alive()
    assert consume_all(broker, "t", 2) == ["a", "b"]
    broker.stop()
    rc, text = second(broker, "--rebuild-index")
    assert rc == 0, text
    assert any(n.startswith("mskmock.db.before-rebuild-") for n in os.listdir(broker.data_dir))
    broker.start()
    assert consume_all(broker, "t", 2) == ["a", "b"]


def test_read_only_reader_beside_a_running_broker(broker):
    cli(broker, "topic", "create", "t", "-p", "1")
    con = sqlite3.connect("file:%s?mode=ro" % broker.db_path, uri=True)
    try:
        names = [r[0] for r in con.execute("SELECT name FROM topics")]
    finally:
        con.close()
    assert "t" in names
    broker.assert_alive()
