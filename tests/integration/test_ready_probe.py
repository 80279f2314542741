"""What a container or a test harness uses to run mskmock: the ready file (ready.file), the
health check (mskmock --probe), the external listeners that advertise another host name, and
what `cmake --install` and --version give a packager."""

import json
import os
import re
import signal
import socket
import subprocess
import time

import pytest

import kafka_wire as kw
from harness import ROOT, Broker, broker_binary, find_free_port_range, running


def probe(broker, **extra):
    env = broker.env()
    env.update(extra)
    return subprocess.run([str(broker.binary), "--probe"], env=env, capture_output=True, text=True, timeout=20)


def metadata_brokers(port):
    with kw.connect(port) as s:
        s.sendall(kw.metadata_request(kw.METADATA_V, 7, "ready-test", []))
        return kw.parse_metadata(kw.METADATA_V, kw.recv_frame(s)[1])["brokers"]


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    ext = find_free_port_range(6)
    ready = tmp_path_factory.mktemp("ready") / "mskmock.ready"
    b = Broker(config={"ready.file": str(ready), "external.port": ext, "external.iam.port": ext + 3,
                       "external.advertised.host": "host.example.test"})
    b.ready_file, b.ext = ready, ext
    with running(b):
        yield b


def test_ready_file_names_every_bound_port(broker):
    doc = json.loads(broker.ready_file.read_text())
    assert doc["pid"] == broker.proc.pid
    assert [x["ports"]["plaintext"] for x in doc["brokers"]] == broker.ports
    assert [x["ports"]["iam"] for x in doc["brokers"]] == [broker.iam_port + i for i in range(3)]
    assert [x["ports"]["external"] for x in doc["brokers"]] == [broker.ext + i for i in range(3)]
    assert [x["ports"]["external_iam"] for x in doc["brokers"]] == [broker.ext + 3 + i for i in range(3)]
    assert doc["external_advertised_host"] == "host.example.test"
    assert doc["ca_file"].endswith("tls/ca.pem") and os.path.exists(doc["ca_file"])


def test_external_listener_advertises_its_own_host_and_ports(broker):
    """Clients of the external listener (outside a container network) get the external host and
    ports; clients of the plaintext listener keep advertised.host (the harness sets 127.0.0.1)."""
    ext = metadata_brokers(broker.ext)
    assert sorted(ext.values()) == [("host.example.test", broker.ext + i) for i in range(3)]
    internal = metadata_brokers(broker.port)
    assert sorted(internal.values()) == [("127.0.0.1", p) for p in broker.ports]


def test_generated_certificate_covers_the_external_host(broker):
    pem = (broker.data_dir / "tls" / "server.pem").read_text()
    text = subprocess.run(["openssl", "x509", "-noout", "-ext", "subjectAltName"], input=pem, capture_output=True,
                          text=True, check=True).stdout
    assert "DNS:host.example.test" in text


def test_probe_passes_on_every_listener_and_logs_nothing_at_info(broker):
    before = broker.log_size()
    r = probe(broker)
    assert r.returncode == 0, r.stdout + r.stderr
    # the ready file says all were bound: the first broker's plaintext, iam, external, external_iam
    assert re.search(r"ok, 4 listener\(s\) on 127\.0\.0\.1 answered", r.stdout), r.stdout
    time.sleep(0.3)
    assert "conn=" not in broker.log_since(before), "health checks must not fill the log at info"


def test_probe_fails_without_a_ready_file(broker, tmp_path):
    r = probe(broker, MSKMOCK_READY_FILE=str(tmp_path / "absent"))
    assert r.returncode == 1
    assert "not ready" in r.stdout and "no such file" in r.stdout


def test_probe_from_configuration_alone_fails_on_a_closed_port(broker):
    """Without a ready file the probe checks the configured ports; one nobody listens on fails it."""
    free = find_free_port_range(3)
    r = probe(broker, MSKMOCK_READY_FILE="", MSKMOCK_PLAINTEXT_PORT=str(free), MSKMOCK_IAM_PORT="0",
              MSKMOCK_EXTERNAL_PORT="0", MSKMOCK_EXTERNAL_IAM_PORT="0")
    assert r.returncode == 1
    assert "plaintext listener on 127.0.0.1:%d" % free in r.stdout and "refused" in r.stdout


def test_probe_fails_when_the_loop_does_not_answer(broker):
    """A stopped event loop still has its ports bound (the kernel accepts); the probe needs an answer."""
    broker.proc.send_signal(signal.SIGSTOP)
    try:
        t0 = time.monotonic()
        r = probe(broker)
        assert r.returncode == 1
        assert "no ApiVersions answer" in r.stdout
        assert time.monotonic() - t0 < 5
    finally:
        broker.proc.send_signal(signal.SIGCONT)


def test_ready_file_removed_at_exit_and_stale_one_replaced(tmp_path):
    ready = tmp_path / "ready.json"
    ready.write_text('{"pid": 1, "brokers": []}')  # left behind by a killed broker
    b = Broker(config={"ready.file": str(ready)})
    with running(b):
        assert json.loads(ready.read_text())["pid"] == b.proc.pid
    assert not ready.exists()


def test_sigterm_during_start_up_stops_cleanly(tmp_path):
    """Regression (a durability test's broker died of SIGTERM, exit -15): the signal handlers
    were installed only after start-up (TLS set-up, storage, listeners), so a SIGTERM meanwhile
    (a harness stopping a broker it thought ready) took its default action. Now SIGTERM is held
    from the start of main until the handlers are in: sent as soon as the broker has locked its
    data directory, it stops the broker cleanly (exit 0, the lock and ready file gone)."""
    for i in range(5):
        b = Broker(data_dir=tmp_path / ("d%d" % i), config={"ready.file": "ready.json"})
        b.port = find_free_port_range(7)
        lock = b.data_dir / ".lock"
        p = subprocess.Popen([str(b.binary)], env=b.env(), cwd=str(tmp_path), stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 20
            while not lock.exists():
                assert p.poll() is None, p.stderr.read().decode(errors="replace")
                assert time.monotonic() < deadline, "no %s" % lock
                time.sleep(0.0002)
            p.send_signal(signal.SIGTERM)
            rc = p.wait(timeout=20)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        assert rc == 0, "start %d: exit %d\n%s" % (i, rc, p.stderr.read().decode(errors="replace"))


def test_overlapping_external_port_is_refused(tmp_path):
    base = find_free_port_range(6)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MSKMOCK_")}  # tools/run-tests sets some
    env.update(MSKMOCK_PLAINTEXT_PORT=str(base), MSKMOCK_EXTERNAL_PORT=str(base + 1), MSKMOCK_DATA_DIR=str(tmp_path))
    r = subprocess.run([str(broker_binary())], env=env, capture_output=True, text=True, timeout=10)
    assert r.returncode == 2
    assert "plaintext.port %d and external.port %d overlap" % (base, base + 1) in r.stderr


def test_version_names_the_git_revision():
    out = subprocess.run([str(broker_binary()), "--version"], capture_output=True, text=True, check=True).stdout
    rev = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"], capture_output=True,
                         text=True).stdout.strip()
    assert re.fullmatch(r"mskmock \d+\.\d+\.\d+ \(\S+\)\n", out), out
    if rev:
        assert rev in out


def test_cmake_install_puts_binary_config_and_man_page(tmp_path):
    build = broker_binary().parent
    subprocess.run(["cmake", "--install", str(build), "--prefix", str(tmp_path)], check=True, capture_output=True)
    assert (tmp_path / "bin" / "mskmock").exists()
    assert (tmp_path / "share" / "doc" / "mskmock" / "examples" / "mskmock.properties").exists()
    page = (tmp_path / "share" / "man" / "man1" / "mskmock.1").read_text()
    # every key of the binary is documented in the page
    keys = re.findall(r"^  (\S+) ", subprocess.run([str(broker_binary()), "--help"], capture_output=True,
                                                   text=True).stdout, re.M)
    assert len(keys) > 50
    for k in keys:
        assert "\n.B " + k.replace("-", "\\-") + "\n" in page, k
    rendered = subprocess.run(["man", "-l", "-"], input=page, capture_output=True, text=True,
                              env=dict(os.environ, MANWIDTH="100"))
    if rendered.returncode == 0:
        assert "ready.file" in rendered.stdout


def test_ca_readable_by_other_users_keys_are_not(broker):
    """Regression: tls/ was made 0700, so an app container running as another user and sharing the
    broker's volume could not read ca.pem (the compose IAM example failed with Permission denied)."""
    tls = broker.data_dir / "tls"
    assert tls.stat().st_mode & 0o005 == 0o005
    assert (tls / "ca.pem").stat().st_mode & 0o004
    for key in tls.glob("*.key"):
        assert key.stat().st_mode & 0o077 == 0, key


# -- mskmock --wait-ready (issue 31, item 4): waiting that cannot lie ------------------------------

def wait_ready(*args, timeout=30):
    return subprocess.run([str(broker_binary()), "--wait-ready", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout)


def start_raw(tmp_path, *args):
    """The binary as a person starts it from a shell: its log in a file, its pid for --wait-ready."""
    log = tmp_path / "broker.log"
    ready = tmp_path / "ready.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MSKMOCK_")}
    with open(log, "w") as f:
        proc = subprocess.Popen([str(broker_binary()), "--data-dir", str(tmp_path / "data"), "--ready-file",
                                 str(ready), *map(str, args)], stdout=subprocess.DEVNULL, stderr=f, env=env)
    return proc, ready, log


def test_wait_ready_reports_the_broker_it_started(tmp_path):
    proc, ready, log = start_raw(tmp_path, "--ports", "auto")
    try:
        w = wait_ready(ready, "--pid", proc.pid, "--log", log)
        assert w.returncode == 0, w.stdout
        assert "ok, pid %d serves" % proc.pid in w.stdout and "plaintext localhost:" in w.stdout, w.stdout
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0


def test_wait_ready_fails_at_once_when_the_broker_dies_at_start(tmp_path):
    """Another program holds the port: the broker exits, and the wait says so with its log's last
    lines instead of spinning until its timeout (the documented `until --probe` loop spun for
    300 s, or reported the other program's broker as up)."""
    base = find_free_port_range(7)
    holder = socket_listening(base)
    try:
        proc, ready, log = start_raw(tmp_path, "--set", "plaintext.port=%d" % base, "--set",
                                     "iam.port=%d" % (base + 3), "--set", "admin.port=%d" % (base + 6))
        w = wait_ready(ready, "--pid", proc.pid, "--log", log, "--timeout", 300, timeout=60)
        assert proc.wait(10) != 0
    finally:
        holder.close()
    assert w.returncode == 1
    assert "the broker (pid %d) exited before it was ready" % proc.pid in w.stdout, w.stdout
    # the log's last line names the key that moves the port, and the knob
    assert re.search(r"cannot listen on 127\.0\.0\.1:%d .*address already in use; another program holds it: "
                     r"move plaintext\.port \(now %d; broker i listens on it \+ i\) .*, move every port together with "
                     r"--port-base N \(or MSKMOCK_PORT_BASE=N\), or start with --ports auto" % (base, base),
                     w.stdout), w.stdout


def test_wait_ready_never_reports_a_killed_brokers_file(tmp_path):
    proc, ready, log = start_raw(tmp_path, "--ports", "auto")
    assert wait_ready(ready, "--pid", proc.pid).returncode == 0
    proc.kill()
    proc.wait(10)
    assert ready.exists()  # kill -9 leaves it behind
    w = wait_ready(ready, "--timeout", 1)
    assert w.returncode == 1
    assert "was written by pid %d, which is gone" % proc.pid in w.stdout, w.stdout


def test_wait_ready_never_reports_another_brokers_file(broker):
    """The file of a broker that serves, but not the one this wait was told about."""
    other = subprocess.Popen(["sleep", "30"])
    try:
        w = wait_ready(broker.ready_file, "--pid", other.pid, "--timeout", 1)
    finally:
        other.kill()
        other.wait()
    assert w.returncode == 1
    assert "was written by pid %d, not %d" % (broker.proc.pid, other.pid) in w.stdout, w.stdout


def test_taken_admin_port_names_its_key(tmp_path):
    base = find_free_port_range(7)
    holder = socket_listening(base + 6)
    try:
        proc, ready, log = start_raw(tmp_path, "--set", "plaintext.port=%d" % base, "--set",
                                     "iam.port=%d" % (base + 3), "--set", "admin.port=%d" % (base + 6))
        assert proc.wait(10) != 0
    finally:
        holder.close()
    assert re.search(r"admin: cannot listen on 127\.0\.0\.1:%d: address already in use; another program holds it: "
                     r"move admin\.port \(now %d\) to a free port below 32768" % (base + 6, base + 6),
                     log.read_text()), log.read_text()


def socket_listening(port):
    s = socket.socket()
    s.bind(("127.0.0.1", port))
    s.listen()
    return s


def test_port_base_moves_every_listener_past_taken_defaults(tmp_path):
    """Another program holds the default ports: one knob moves the listeners and the admin API
    together (issue 31, item 3)."""
    base = find_free_port_range(21)
    held = []
    try:
        for port in (9080, 9092):
            try:
                held.append(socket_listening(port))
            except OSError:
                pass  # already taken on this machine: the point of the test either way
        proc, ready, log = start_raw(tmp_path, "--port-base", base)
        try:
            w = wait_ready(ready, "--pid", proc.pid, "--log", log)
            assert w.returncode == 0, w.stdout
            doc = json.loads(ready.read_text())
            assert [b["ports"]["plaintext"] for b in doc["brokers"]] == [base + 12, base + 13, base + 14]
            assert [b["ports"]["iam"] for b in doc["brokers"]] == [base + 18, base + 19, base + 20]
            assert doc["admin_port"] == base
        finally:
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(10) == 0
    finally:
        for s in held:
            s.close()
