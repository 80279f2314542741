"""Ephemeral ports for parallel tests: `--ports auto` binds every listener to a port the OS
picks, and the broker says which on one stdout line ("mskmock ready {JSON}") and in
--ready-file. Ten brokers started at once all come up, and clients reach every synthetic broker
through the ports Metadata advertises."""

import json
import select
import signal
import subprocess
import time
import urllib.request

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

import kafka_wire as kw
from harness import broker_binary, broker_env


def start(data_dir, *extra):
    argv = [str(broker_binary()), "--ports", "auto", "--data-dir", str(data_dir),
            "--ready-file", str(data_dir / "ready.json"), "--set", "advertised.host=127.0.0.1",
            "--set", "group.initial.rebalance.delay.ms=0", *extra]
    return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, env=broker_env(),
                            stderr=open(data_dir / "broker.log", "wb"), text=True)


def ready_line(proc, timeout=20):
    """The JSON of the broker's "mskmock ready" line."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if select.select([proc.stdout], [], [], 0.2)[0]:
            line = proc.stdout.readline()
            assert line.startswith("mskmock ready "), line
            return json.loads(line[len("mskmock ready "):])
        assert proc.poll() is None, "broker exited %s" % proc.returncode
    pytest.fail("no ready line within %d s" % timeout)


def stop(proc):
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=20) == 0


def api_versions_ok(port):
    with kw.connect(port) as s:
        s.sendall(kw.api_versions_request(1, "ports-auto"))
        _, body = kw.recv_frame(s)
    return kw.parse_api_versions(body)[0] == 0


def test_ten_brokers_started_at_once_all_come_up(tmp_path):
    dirs = [tmp_path / ("b%d" % i) for i in range(10)]
    for d in dirs:
        d.mkdir()
    procs = [start(d, "--set", "iam.credentials.port=1") for d in dirs]
    try:
        docs = [ready_line(p) for p in procs]
        ports = []
        for d, doc in zip(dirs, docs):
            assert json.loads((d / "ready.json").read_text()) == doc, "the file says what the line says"
            for b in doc["brokers"]:
                ports += b["ports"].values()
                assert api_versions_ok(b["ports"]["plaintext"])
            assert doc["credentials_port"] > 0
            ports.append(doc["credentials_port"])
            # the admin API takes a free port too, and answers at the URL the line gives
            assert doc["admin_url"] == "http://127.0.0.1:%d" % doc["admin_port"]
            with urllib.request.urlopen(doc["admin_url"] + "/v1/ready", timeout=10) as r:
                assert json.loads(r.read()) == {"status": "ready"}
            ports.append(doc["admin_port"])
            plain = ",".join("127.0.0.1:%d" % b["ports"]["plaintext"] for b in doc["brokers"])
            assert doc["bootstrap"]["plaintext"] == plain
            assert doc["cluster_arn"].startswith("arn:aws:kafka:us-east-1:123456789012:cluster/mskmock/")
        assert len(ports) == len(set(ports)) == 10 * (3 * 2 + 2), "every listener its own port"
    finally:
        for p in procs:
            stop(p)


def test_clients_reach_every_synthetic_broker_through_advertised_ports(tmp_path):
    proc = start(tmp_path)
    try:
        doc = ready_line(proc)
        bootstrap = doc["bootstrap"]["plaintext"].split(",")[0]  # one seed: the rest come from Metadata
        admin = AdminClient({"bootstrap.servers": bootstrap})
        admin.create_topics([NewTopic("spread", num_partitions=3)])["spread"].result(20)
        p = Producer({"bootstrap.servers": bootstrap})
        for i in range(30):
            p.produce("spread", value=b"v%d" % i, partition=i % 3)
        assert p.flush(20) == 0
        c = Consumer({"bootstrap.servers": bootstrap, "group.id": "g", "auto.offset.reset": "earliest"})
        c.subscribe(["spread"])
        got = set()
        deadline = time.monotonic() + 30
        while len(got) < 30 and time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is not None and not m.error():
                got.add(m.value())
        c.close()
        assert len(got) == 30
        leaders = {pm.leader for pm in admin.list_topics("spread", timeout=10).topics["spread"].partitions.values()}
        assert len(leaders) == 3, "the partitions' leaders are the three synthetic brokers"
    finally:
        stop(proc)


def test_probe_reads_the_ports_from_the_ready_file(tmp_path):
    proc = start(tmp_path)
    try:
        ready_line(proc)
        ok = subprocess.run([str(broker_binary()), "--probe", "--ports", "auto", "--ready-file",
                             str(tmp_path / "ready.json")], capture_output=True, text=True, timeout=20,
                            env=broker_env())
        assert ok.returncode == 0, ok.stdout + ok.stderr
        blind = subprocess.run([str(broker_binary()), "--probe", "--ports", "auto"], capture_output=True, text=True,
                               timeout=20, env=broker_env())
        assert blind.returncode == 1 and "set ready.file" in blind.stdout + blind.stderr
    finally:
        stop(proc)


def test_ports_takes_only_auto(tmp_path):
    p = subprocess.run([str(broker_binary()), "--ports", "9092", "--data-dir", str(tmp_path)], capture_output=True,
                       text=True, timeout=10, env=broker_env())
    assert p.returncode == 2 and "--ports takes auto" in p.stderr
