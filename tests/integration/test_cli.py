"""The Kafka client in the mskmock binary (issue 31, item 1): `mskmock topic|produce|consume`
from a bare shell, against the serverless profile (the module's broker) and profile=kafka.
What it writes is checked with confluent-kafka (a real client reads what the CLI produced) and
what confluent-kafka writes is read back with the CLI, for every compression codec."""

import os
import re
import subprocess
import time
import uuid

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from harness import Broker, broker_binary, broker_env, running

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]


def cli(bootstrap, *args, input=None, timeout=60, env=None):
    """Runs `mskmock ARGS -b BOOTSTRAP`; the CompletedProcess (text)."""
    argv = [str(broker_binary()), *args]
    if bootstrap:
        argv += ["-b", bootstrap]
    return subprocess.run(argv, input=input, capture_output=True, text=True, timeout=timeout,
                          env=env if env is not None else broker_env())


def ok(p):
    assert p.returncode == 0, "exit %d\nstdout: %s\nstderr: %s" % (p.returncode, p.stdout, p.stderr)
    return p.stdout


def name(prefix):
    return "%s-%s" % (prefix, uuid.uuid4().hex[:8])


def create(bootstrap, partitions=1, *extra):
    t = name("cli")
    ok(cli(bootstrap, "topic", "create", t, "-p", str(partitions), *extra))
    return t


def read_all(bootstrap, topic, count, partitions=None):
    """count records of topic with confluent-kafka, as (key, value, partition, offset, headers)."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": name("g"), "enable.auto.commit": False,
                  "auto.offset.reset": "earliest"})
    try:
        if partitions is None:
            md = c.list_topics(topic, timeout=10)
            partitions = list(md.topics[topic].partitions)
        c.assign([TopicPartition(topic, p, 0) for p in partitions])
        got, deadline = [], time.monotonic() + 20
        while len(got) < count and time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is None or m.error():
                continue
            got.append((m.key(), m.value(), m.partition(), m.offset(), m.headers()))
        return got
    finally:
        c.close()


# -- topics ---------------------------------------------------------------------------

def test_topic_create_list_describe_delete(bootstrap):
    t = name("cli")
    out = ok(cli(bootstrap, "topic", "create", t, "-p", "3", "-c", "retention.ms=600000"))
    assert out == "created topic %s: 3 partitions, replication factor 3\n" % t, out

    rows = [line.split() for line in ok(cli(bootstrap, "topic", "list")).splitlines()]
    assert rows[0] == ["NAME", "PARTITIONS", "REPLICAS"], rows
    assert [t, "3", "3"] in rows, rows

    out = ok(cli(bootstrap, "topic", "describe", t))
    assert re.search(r"^NAME\s+%s$" % t, out, re.M) and re.search(r"^PARTITIONS\s+3$", out, re.M), out
    parts = re.findall(r"^(\d+)\s+(\d+)\s+(\d+)\s+([\d,]+)\s+([\d,]+)$", out, re.M)
    assert [p[0] for p in parts] == ["0", "1", "2"], out
    for _, leader, _, replicas, isr in parts:
        assert len(replicas.split(",")) == 3 and replicas.split(",")[0] == leader, out
        assert sorted(isr.split(",")) == sorted(replicas.split(",")), out
    # configs through DescribeConfigs: the one set says where it came from
    assert re.search(r"^  retention\.ms=600000  \(topic", out, re.M), out
    assert re.search(r"^  cleanup\.policy=delete  \(default", out, re.M), out

    assert ok(cli(bootstrap, "topic", "delete", t)) == "deleted topic %s\n" % t
    assert t not in ok(cli(bootstrap, "topic", "list"))
    p = cli(bootstrap, "topic", "describe", t)
    assert p.returncode == 1 and "UNKNOWN_TOPIC_OR_PARTITION" in p.stderr, p
    p = cli(bootstrap, "topic", "delete", t)
    assert p.returncode == 1 and "UNKNOWN_TOPIC_OR_PARTITION" in p.stderr, p


def test_refused_create_prints_kafkas_error_and_fails(bootstrap):
    """MSK Serverless does not let a client set segment.bytes: INVALID_CONFIG, exit 1, no topic."""
    t = name("seg")
    p = cli(bootstrap, "topic", "create", t, "-c", "segment.bytes=1048576")
    assert p.returncode == 1, p
    assert "mskmock topic create: %s: INVALID_CONFIG: " % t in p.stderr and "segment.bytes" in p.stderr, p.stderr
    assert p.stdout == ""
    assert t not in ok(cli(bootstrap, "topic", "list"))
    p = cli(bootstrap, "topic", "create", create(bootstrap))
    assert p.returncode == 1 and "TOPIC_ALREADY_EXISTS" in p.stderr, p


def test_unknown_topic_on_produce_fails_with_its_name(bootstrap):
    p = cli(bootstrap, "produce", name("absent"), input="one\n")
    assert p.returncode == 1, p
    assert "UNKNOWN_TOPIC_OR_PARTITION" in p.stderr and "acknowledged" not in p.stdout, p
    t = create(bootstrap, 2)
    p = cli(bootstrap, "produce", t, "-p", "2", input="one\n")
    assert p.returncode == 1 and "partition 2: UNKNOWN_TOPIC_OR_PARTITION" in p.stderr, p


def test_produce_retries_a_partition_whose_leader_moved(broker):
    """NOT_LEADER_OR_FOLLOWER (Apache Kafka answers it for a moment after creating a topic) is
    retried after reading the leaders again, as Kafka's producers do: the records are acknowledged
    once, in order (test_cli_apache_kafka failed in CI on it)."""
    import json
    import urllib.request
    t = create(broker.bootstrap, 2)
    rule = json.dumps({"api": "Produce", "topic": t, "error": "NOT_LEADER_OR_FOLLOWER", "count": 2}).encode()
    with urllib.request.urlopen(urllib.request.Request(broker.admin_url + "/v1/faults", data=rule, method="POST"),
                                timeout=10) as r:
        assert r.status in (200, 201)
    out = ok(cli(broker.bootstrap, "produce", t, "-p", "1", input="a\nb\nc\n"))
    assert out.startswith("acknowledged 3 record(s) to %s: partition 1 offsets 0-2" % t), out
    assert [v for _, v, _, _, _ in read_all(broker.bootstrap, t, 3, [1])] == [b"a", b"b", b"c"]
    # an error that is not about the leader still ends the command at once
    rule = json.dumps({"api": "Produce", "topic": t, "error": "CORRUPT_MESSAGE", "count": 1}).encode()
    with urllib.request.urlopen(urllib.request.Request(broker.admin_url + "/v1/faults", data=rule, method="POST"),
                                timeout=10) as r:
        assert r.status in (200, 201)
    p = cli(broker.bootstrap, "produce", t, "-p", "1", input="d\n")
    assert p.returncode == 1 and "partition 1: CORRUPT_MESSAGE" in p.stderr, p


# -- produce and consume --------------------------------------------------------------

def test_produce_keys_and_headers_then_consume_them_back(bootstrap):
    t = create(bootstrap, 3)
    lines = ["key-%d:value %d: with a colon" % (i, i) for i in range(100)]
    out = ok(cli(bootstrap, "produce", t, "-k", ":", "-H", "app=cli", "-H", "trace=x=1", input="\n".join(lines) + "\n"))
    m = re.fullmatch(r"acknowledged 100 record\(s\) to %s: (.*)\n" % t, out)
    assert m, out
    ranges = {int(p): (int(a), int(b)) for p, a, b in re.findall(r"partition (\d+) offsets (\d+)-(\d+)", m.group(1))}
    assert sum(b - a + 1 for a, b in ranges.values()) == 100 and all(a == 0 for a, _ in ranges.values()), out

    p = cli(bootstrap, "consume", t, "-n", "100", "-f", "%k|%v|%p|%o|%h\\n", "--timeout", "10")
    got = ok(p).splitlines()
    assert p.stderr == "mskmock consume: 100 record(s)\n", p.stderr
    assert len(got) == 100, got
    recs = [g.split("|") for g in got]
    assert sorted((k, v) for k, v, *_ in recs) == sorted(("key-%d" % i, "value %d: with a colon" % i) for i in range(100))
    assert {h for *_, h in recs} == {"app=cli,trace=x=1"}
    by_part = {}
    for k, v, part, off, _ in recs:
        by_part.setdefault(int(part), []).append(int(off))
    for part, offs in by_part.items():
        assert offs == list(range(len(offs))) and ranges[part] == (0, len(offs) - 1), (part, offs, out)

    # a real client reads the same records, keys where the Java partitioner (librdkafka's
    # murmur2_random) puts them
    seen = read_all(bootstrap, t, 100)
    assert sorted((k.decode(), v.decode(), p, o) for k, v, p, o, _ in seen) == \
        sorted((k, v, int(p), int(o)) for k, v, p, o, _ in recs)
    assert all(h == [("app", b"cli"), ("trace", b"x=1")] for *_, h in seen)
    t2 = create(bootstrap, 3)
    prod = Producer({"bootstrap.servers": bootstrap, "partitioner": "murmur2_random"})
    for i in range(100):
        prod.produce(t2, key="key-%d" % i, value=b"v")
    assert prod.flush(15) == 0
    java_part = {k.decode(): p for k, _, p, _, _ in read_all(bootstrap, t2, 100)}
    assert {k: int(p) for k, _, p, _, _ in recs} == java_part


def test_consume_from_an_offset_the_end_and_a_timestamp(bootstrap):
    t = create(bootstrap, 1)
    ok(cli(bootstrap, "produce", t, input="".join("first %d\n" % i for i in range(10))))
    assert ok(cli(bootstrap, "consume", t, "-o", "5", "-n", "5", "-f", "%o %v\\n")) == \
        "".join("%d first %d\n" % (i, i) for i in range(5, 10))
    time.sleep(0.05)
    since = int(time.time() * 1000)
    time.sleep(0.05)
    ok(cli(bootstrap, "produce", t, "--acks", "1", input="second 0\nsecond 1\n"))
    p = cli(bootstrap, "consume", t, "-o", "@%d" % since, "--timeout", "1", "-f", "%o %v %T\\n")
    rows = [r.split(" ") for r in ok(p).splitlines()]
    assert [(r[0], r[2]) for r in rows] == [("10", "0"), ("11", "1")], rows
    assert all(int(r[3]) >= since for r in rows), rows
    # from the end: nothing old, then stops when the timeout passes with nothing new
    t0 = time.monotonic()
    p = cli(bootstrap, "consume", t, "-o", "end", "--timeout", "1")
    assert ok(p) == "" and p.stderr == "mskmock consume: 0 record(s)\n" and time.monotonic() - t0 < 10
    # a time after every record: the end as well
    assert ok(cli(bootstrap, "consume", t, "-o", "@%d" % (since + 3600_000), "--timeout", "0.5")) == ""
    # acks=0 gets no answer: the records still arrive
    out = ok(cli(bootstrap, "produce", t, "--acks", "0", input="third\n"))
    assert out == "sent 1 record(s) to %s with acks=0: none acknowledged\n" % t
    assert ok(cli(bootstrap, "consume", t, "-o", "12", "-n", "1", "--timeout", "10")) == "third\n"


def test_consume_one_partition(bootstrap):
    t = create(bootstrap, 3)
    ok(cli(bootstrap, "produce", t, "-p", "1", input="a\nb\n"))
    ok(cli(bootstrap, "produce", t, "-p", "2", input="c\n"))
    assert ok(cli(bootstrap, "consume", t, "-p", "1", "--timeout", "1", "-f", "%p:%v,")) == "1:a,1:b,"


@pytest.mark.parametrize("codec", CODECS)
def test_compression_codecs_round_trip_with_a_real_client(bootstrap, codec):
    t = create(bootstrap, 2)
    values = ["%s record %d " % (codec, i) + "x" * (i % 50) for i in range(60)]
    ok(cli(bootstrap, "produce", t, "--compression", codec, "-k", "\t",
           input="".join("k%d\t%s\n" % (i, v) for i, v in enumerate(values))))
    seen = read_all(bootstrap, t, 60)
    assert sorted((k.decode(), v.decode()) for k, v, *_ in seen) == sorted(("k%d" % i, v) for i, v in enumerate(values))

    t2 = create(bootstrap, 1)
    prod = Producer({"bootstrap.servers": bootstrap, "compression.type": codec, "linger.ms": 50})
    for i, v in enumerate(values):
        prod.produce(t2, key="k%d" % i, value=v.encode(), headers={"codec": codec.encode()})
    assert prod.flush(15) == 0
    out = ok(cli(bootstrap, "consume", t2, "-n", "60", "-f", "%o %k %h %v\\n", "--timeout", "10"))
    assert out == "".join("%d k%d codec=%s %s\n" % (i, i, codec, v) for i, v in enumerate(values))


# -- the binary's own interface -------------------------------------------------------

def test_help_and_usage():
    p = subprocess.run([str(broker_binary()), "--help"], capture_output=True, text=True, env=broker_env())
    assert p.returncode == 0 and "mskmock topic create|list|describe|delete" in p.stdout
    assert "mskmock produce TOPIC" in p.stdout and "mskmock consume TOPIC" in p.stdout
    for cmd, words in (("topic", "topic create NAME"), ("produce", "--compression"), ("consume", "@TIMESTAMP_MS")):
        p = subprocess.run([str(broker_binary()), cmd, "--help"], capture_output=True, text=True, env=broker_env())
        assert p.returncode == 0 and words in p.stdout and "--bootstrap" in p.stdout, p
    p = cli(None, "produce", "t", "--acks", "2")
    assert p.returncode == 2 and "--acks takes -1 (all), 0 or 1" in p.stderr, p
    p = cli(None, "topic", "frobnicate", "x")
    assert p.returncode == 2 and "unknown subcommand frobnicate" in p.stderr, p


def test_no_broker_there_fails_with_the_address():
    p = cli("127.0.0.1:1", "topic", "list", timeout=30)
    assert p.returncode == 1 and "no bootstrap broker answered (127.0.0.1:1)" in p.stderr, p


def test_bootstrap_from_the_environment_which_the_broker_ignores(bootstrap):
    env = dict(broker_env(), MSKMOCK_CLI_BOOTSTRAP=bootstrap)
    t = create(bootstrap)
    assert t in ok(cli(None, "topic", "list", env=env))
    # the same shell starts a broker: MSKMOCK_CLI_BOOTSTRAP is a tooling name, not an unknown key
    p = subprocess.run([str(broker_binary()), "--probe", "--data-dir", ":memory:"], capture_output=True, text=True,
                       env=env, timeout=30)
    assert p.returncode in (0, 1) and "unknown key" not in p.stdout + p.stderr, p


# -- profile=kafka --------------------------------------------------------------------

def test_kafka_profile_round_trip_and_segment_bytes():
    b = Broker(config={"profile": "kafka"})
    with running(b):
        t = name("k")
        out = ok(cli(b.bootstrap, "topic", "create", t, "-p", "2", "-r", "3", "-c", "segment.bytes=1048576"))
        assert out.startswith("created topic %s: 2 partitions" % t), out
        assert re.search(r"^  segment\.bytes=1048576  \(topic", ok(cli(b.bootstrap, "topic", "describe", t)), re.M)
        ok(cli(b.bootstrap, "produce", t, "-k", "=", "--compression", "zstd", input="a=1\nb=2\nc=3\n"))
        got = ok(cli(b.bootstrap, "consume", t, "-n", "3", "-f", "%k%v\\n", "--timeout", "10")).split()
        assert sorted(got) == ["a1", "b2", "c3"]
        assert ok(cli(b.bootstrap, "topic", "delete", t)) == "deleted topic %s\n" % t


# -- one variable for the ports ---------------------------------------------------------

def test_port_base_points_the_broker_and_the_cli_at_the_same_ports(tmp_path):
    """export MSKMOCK_PORT_BASE=N moves the broker's ports (port.base) and the CLI's default
    bootstrap together, so the README's commands work unchanged where 9080-9100 are taken."""
    from harness import find_free_port_range
    base = find_free_port_range(21)
    env = dict(broker_env(), MSKMOCK_PORT_BASE=str(base))
    ready = tmp_path / "ready.json"
    proc = subprocess.Popen([str(broker_binary()), "--data-dir", str(tmp_path / "data"), "--ready-file", str(ready)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        w = subprocess.run([str(broker_binary()), "--wait-ready", str(ready), "--pid", str(proc.pid)], env=env,
                           capture_output=True, text=True, timeout=30)
        assert w.returncode == 0, w
        t = name("base")
        assert ok(cli(None, "topic", "create", t, "-p", "1", env=env)) == \
            "created topic %s: 1 partition, replication factor 3\n" % t
        ok(cli(None, "produce", t, input="hello\n", env=env))
        assert ok(cli(None, "consume", t, "-n", "1", env=env)) == "hello\n"
        # TLS goes to the IAM listener, base + 18: the broker there wants SASL first, and says so
        p = cli(None, "topic", "list", "--tls", "--ca-file", str(tmp_path / "data" / "tls" / "ca.pem"), env=env)
        assert p.returncode == 1 and "localhost:%d" % (base + 18) in p.stderr, p
    finally:
        proc.terminate()
        assert proc.wait(10) == 0
