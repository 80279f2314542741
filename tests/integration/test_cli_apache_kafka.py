"""The built-in client against a real Apache Kafka 4.x (issue 31, item 1): one KRaft node from
bench/kafka/fetch.sh and start.sh. The jars are cached in build-bench/kafka/libs (shared with
bench/run.sh); fetching them takes Maven and Java, which tools/install-deps --test installs for
the Java client, so CI runs this module. Without Java, or when Maven cannot fetch the jars
outside CI, it is skipped with the reason."""

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

import pytest

from harness import ROOT, find_free_port_range
from test_cli import cli, name, ok

LIBS = ROOT / "build-bench" / "kafka" / "libs"
FETCH_TIMEOUT_S = 600
START_TIMEOUT_S = 90

pytestmark = pytest.mark.timeout(FETCH_TIMEOUT_S + 300)


def _unavailable(why):
    if os.environ.get("CI"):
        pytest.fail("Apache Kafka is needed in CI: %s" % why)
    pytest.skip(why)


def _kafka_libs():
    if not shutil.which("java"):
        _unavailable("no java on PATH (tests/clients/java/install.sh's JDK runs Apache Kafka)")
    if not list(LIBS.glob("kafka_2.13-*.jar")):
        if not shutil.which("mvn"):
            _unavailable("no Apache Kafka jars in %s and no mvn to fetch them (bench/kafka/fetch.sh)" % LIBS)
        try:
            p = subprocess.run(["bash", str(ROOT / "bench/kafka/fetch.sh"), str(LIBS.parent)], capture_output=True,
                               text=True, timeout=FETCH_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            _unavailable("bench/kafka/fetch.sh did not finish within %d s" % FETCH_TIMEOUT_S)
        if p.returncode != 0:
            _unavailable("bench/kafka/fetch.sh failed (exit %d): %s" % (p.returncode, (p.stdout + p.stderr)[-2000:]))
    return LIBS


@pytest.fixture(scope="module")
def kafka():
    libs = _kafka_libs()
    d = tempfile.mkdtemp(prefix="mskmock-it-kafka-")
    port = find_free_port_range(2)
    log = open(os.path.join(d, "kafka.log"), "wb")
    proc = subprocess.Popen(["bash", str(ROOT / "bench/kafka/start.sh"), str(libs), d, str(port)], stdout=log,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    bootstrap = "127.0.0.1:%d" % port
    try:
        deadline, last = time.monotonic() + START_TIMEOUT_S, None
        while True:
            if proc.poll() is not None:
                pytest.fail("Apache Kafka exited %d at start-up:\n%s" % (proc.returncode, _tail(d)))
            last = cli(bootstrap, "topic", "list", "--request-timeout", "5", timeout=20)
            if last.returncode == 0:
                break
            if time.monotonic() > deadline:
                pytest.fail("Apache Kafka did not answer within %d s: %s\n%s" % (START_TIMEOUT_S, last.stderr, _tail(d)))
            time.sleep(0.5)
        yield bootstrap
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()
        shutil.rmtree(d, ignore_errors=True)


def _tail(d):
    try:
        with open(os.path.join(d, "kafka.log"), errors="replace") as f:
            return "".join(f.readlines()[-40:])
    except OSError:
        return "(no log)"


def table(out, header):
    lines = out.splitlines()
    i = next(k for k, ln in enumerate(lines) if ln.startswith(header))
    return [ln.split() for ln in lines[i + 1:] if ln.strip()]


def test_topics_records_and_groups_against_apache_kafka(kafka):
    t, g = name("ak"), name("akg")
    out = ok(cli(kafka, "topic", "create", t, "-p", "3", "-r", "1", "-c", "segment.bytes=1048576"))
    assert out == "created topic %s: 3 partitions, replication factor 1\n" % t, out
    assert [t, "3", "1"] in [r.split() for r in ok(cli(kafka, "topic", "list")).splitlines()]
    assert re.search(r"^  segment\.bytes=1048576  \(topic", ok(cli(kafka, "topic", "describe", t)), re.M)

    out = ok(cli(kafka, "produce", t, "-k", ":", "--compression", "zstd",
                 input="".join("k%d:v%d\n" % (i, i) for i in range(30))))
    assert out.startswith("acknowledged 30 record(s) to %s" % t), out
    got = ok(cli(kafka, "consume", t, "-n", "30", "-f", "%k=%v\\n", "--timeout", "20")).split()
    assert sorted(got) == sorted("k%d=v%d" % (i, i) for i in range(30))

    # a member of a group on Kafka's classic coordinator: what it printed is committed
    first = ok(cli(kafka, "consume", t, "-g", g, "-n", "12", "-f", "%p:%o\\n", "--timeout", "30")).split()
    assert len(first) == 12
    rest = ok(cli(kafka, "consume", t, "-g", g, "--timeout", "3", "-f", "%p:%o\\n")).split()
    assert sorted(first + rest) == sorted(set(first + rest)) and len(first + rest) == 30, (first, rest)

    listed = [r for r in table(ok(cli(kafka, "group", "list")), "GROUP") if r[0] == g]
    assert listed and listed[0][1] == "Empty" and listed[0][2] == "consumer", listed
    out = ok(cli(kafka, "group", "describe", g))
    offs = table(out, "TOPIC")
    assert len(offs) == 3 and sum(int(r[2]) for r in offs) == 30 and all(r[4] == "0" for r in offs), out
    out = ok(cli(kafka, "group", "seek", g, "--to", "beginning"))
    assert [r[3] for r in table(out, "TOPIC")] == ["0", "0", "0"], out
    assert len(ok(cli(kafka, "consume", t, "-g", g, "--timeout", "3", "-f", "%o\\n")).split()) == 30
    assert ok(cli(kafka, "group", "delete", g)) == "deleted group %s\n" % g
    assert ok(cli(kafka, "topic", "delete", t)) == "deleted topic %s\n" % t
