"""Integration-test harness: the mskmock process and the client programs.

  Broker         one mskmock process on a temp data dir and a free port range:
                 start()/stop()/restart()/kill9()/log_text()/wait_for_log()/assert_alive().
  run_client(lang, args, timeout)  runs tests/clients/<lang> per the client CONTRACT and
                 returns the JSON object printed on its last stdout line.
  client_command(lang)  how to run that client, or None when it is not built.
"""

import contextlib
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CLIENTS = ROOT / "tests" / "clients"
START_TIMEOUT_S = float(os.environ.get("MSKMOCK_START_TIMEOUT", "10"))
STOP_TIMEOUT_S = 10.0


def broker_binary():
    path = Path(os.environ.get("MSKMOCK_BIN", ROOT / "build" / "mskmock"))
    if not path.is_absolute():
        path = ROOT / path
    return path


def _port_free(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        # No SO_REUSEADDR: a port with a lingering listener or TIME_WAIT peer counts as busy.
        s.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        s.close()


PORTS_LO, PORTS_HI = 20000, 32000


def worker_port_slice():
    """[lo, hi) of the ports this pytest process may pick from. Under pytest-xdist each worker
    has a slice of its own, so two workers never check the same port free and then both bind
    it; within a worker tests run one after another."""
    n = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    w = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    i = int(w[2:]) if w.startswith("gw") and w[2:].isdigit() else 0
    size = (PORTS_HI - PORTS_LO) // max(n, 1)
    return PORTS_LO + i * size, PORTS_LO + (i + 1) * size


def find_free_port_range(count, lo=None, hi=None, attempts=200):
    """Returns base such that base..base+count-1 are all free on 127.0.0.1.

    The range lies below Linux's ephemeral range (32768+), so outgoing client connections
    cannot take one of our ports between the check and the broker's bind; by default it is
    this worker's slice of it (worker_port_slice).
    """
    if lo is None or hi is None:
        lo, hi = worker_port_slice()
    rng = random.Random(os.getpid() ^ time.monotonic_ns())
    with _handed_lock:
        now = time.monotonic()
        for _ in range(attempts):
            base = rng.randrange(lo, hi - count)
            ports = range(base, base + count)
            # a range handed out a moment ago may not be bound yet (threads of one test start
            # brokers side by side, e.g. test_iam_node_go's rotation runs)
            if any(now - _handed.get(p, -1e9) < HANDED_HOLD_S for p in ports):
                continue
            if all(_port_free(p) for p in ports):
                _handed.update((p, now) for p in ports)
                return base
    raise RuntimeError("no %d consecutive free ports in %d..%d" % (count, lo, hi))


HANDED_HOLD_S = 30
_handed = {}
_handed_lock = threading.Lock()


def broker_env():
    """The environment for a broker process: the caller's, without its MSKMOCK_* variables, which
    would configure the broker (MSKMOCK_START_TIMEOUT is not a key: the broker would refuse it)."""
    return {k: v for k, v in os.environ.items() if not k.startswith("MSKMOCK_") or k == "MSKMOCK_BIN"}


def env_key(key):
    return "MSKMOCK_" + key.replace(".", "_").upper()


class Broker:
    """One mskmock process (N synthetic brokers on consecutive ports) on a temp data dir."""

    def __init__(self, broker_count=3, config=None, log_level="info", binary=None, data_dir=None):
        self.binary = Path(binary) if binary else broker_binary()
        self.broker_count = broker_count
        self.config = dict(config or {})
        self.log_level = log_level
        self._own_dir = data_dir is None
        self.data_dir = Path(data_dir or tempfile.mkdtemp(prefix="mskmock-it-"))
        self.log_path = self.data_dir.parent / (self.data_dir.name + ".stderr.log")
        self.port = None
        self.proc = None
        self.starts = 0
        self.exit_codes = []  # exit status of every process this Broker stopped or killed

    # -- addresses --------------------------------------------------------------------
    @property
    def ports(self):
        return [self.port + i for i in range(self.broker_count)]

    @property
    def iam_port(self):
        return self.port + self.broker_count

    @property
    def iam_bootstrap(self):
        return "127.0.0.1:%d" % self.iam_port

    @property
    def bootstrap(self):
        return "127.0.0.1:%d" % self.port

    @property
    def admin_port(self):
        # after the plaintext and IAM listeners' ports
        return self.port + 2 * self.broker_count

    @property
    def admin_url(self):
        return "http://127.0.0.1:%d" % self.admin_port

    @property
    def db_path(self):
        return self.data_dir / "mskmock.db"

    # -- lifecycle --------------------------------------------------------------------
    def env(self):
        env = broker_env()  # the caller's environment must not configure the test broker
        cfg = {
            "plaintext.port": self.port,
            # the IAM (TLS + SASL) listener takes the ports right after the plaintext ones
            "iam.port": self.iam_port,
            "admin.port": self.admin_port,
            "broker.count": self.broker_count,
            "bind.address": "127.0.0.1",
            # Advertise the address we bind: "localhost" may resolve to ::1 first.
            "advertised.host": "127.0.0.1",
            "data.dir": str(self.data_dir),
            "log.level": self.log_level,
        }
        # MSK's throughput quotas (5 MiB/s into a partition, ...) would pace every test that moves
        # data; test_quotas.py turns them on with small values.
        # The same for the partition mutation quota (120 partitions created or deleted per 5 min).
        for q in ("partition.ingress", "partition.egress", "cluster.ingress", "cluster.egress"):
            cfg["quota.%s.bytes.per.second" % q] = 0
        cfg["max.partition.mutations.per.5.minutes"] = 0
        cfg.update(self.config)
        for k, v in cfg.items():
            env[env_key(k)] = str(v).lower() if isinstance(v, bool) else str(v)
        return env

    def start(self):
        assert self.proc is None, "broker already running"
        if not self.binary.exists():
            pytest.fail("broker binary %s does not exist (run tools/build)" % self.binary)
        if self.port is None:
            self.port = find_free_port_range(2 * self.broker_count + 1)
        self.starts += 1
        with open(self.log_path, "ab") as f:
            f.write(b"=== harness: start #%d, ports %d-%d ===\n"
                    % (self.starts, self.ports[0], self.ports[-1]))
        log = open(self.log_path, "ab")
        try:
            self.proc = subprocess.Popen(
                [str(self.binary)],
                env=self.env(),
                cwd=str(self.data_dir),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
            )
        finally:
            log.close()
        self._wait_ready()
        return self

    def _wait_ready(self):
        deadline = time.monotonic() + START_TIMEOUT_S
        pending = list(self.ports)
        while pending:
            rc = self.proc.poll()
            if rc is not None:
                self.proc = None
                self.exit_codes.append(rc)
                pytest.fail("mskmock exited with status %d during start-up\n%s"
                            % (rc, self.log_tail()))
            try:
                with socket.create_connection(("127.0.0.1", pending[0]), timeout=0.5):
                    pending.pop(0)
                    continue
            except OSError:
                pass
            if time.monotonic() > deadline:
                self._kill()
                pytest.fail("mskmock did not accept connections on port(s) %s within %.0f s\n%s"
                            % (pending, START_TIMEOUT_S, self.log_tail()))
            time.sleep(0.05)

    def stop(self, check=True):
        """SIGTERM and wait; with check, fails the test unless the process exited 0."""
        if self.proc is None:
            return None
        proc, self.proc = self.proc, None
        proc.send_signal(signal.SIGTERM)
        try:
            rc = proc.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            self.exit_codes.append("hung")
            if check:
                pytest.fail("mskmock did not exit within %.0f s of SIGTERM\n%s"
                            % (STOP_TIMEOUT_S, self.log_tail()))
            return None
        self.exit_codes.append(rc)
        if check and rc != 0:
            pytest.fail("mskmock exited with status %d after SIGTERM (expected 0)\n%s"
                        % (rc, self.log_tail()))
        return rc

    def _kill(self):
        if self.proc is not None:
            self.proc.kill()
            self.exit_codes.append(self.proc.wait())
            self.proc = None

    def restart(self):
        """Clean stop (SIGTERM, exit 0 checked), then start again on the same data dir and ports."""
        self.stop(check=True)
        return self.start()

    def kill9(self, restart=True):
        """SIGKILL (no chance to flush anything), then by default start again."""
        assert self.proc is not None, "broker not running"
        self.proc.send_signal(signal.SIGKILL)
        self.exit_codes.append(self.proc.wait())
        self.proc = None
        if restart:
            self.start()
        return self

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def assert_alive(self):
        if self.proc is None:
            pytest.fail("mskmock is not running")
        rc = self.proc.poll()
        if rc is not None:
            self.proc = None
            self.exit_codes.append(rc)
            pytest.fail("mskmock died with status %d\n%s" % (rc, self.log_tail()))

    def cleanup(self):
        self._kill()
        if self._own_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)
            try:
                self.log_path.unlink()
            except OSError:
                pass

    # -- log --------------------------------------------------------------------------
    def log_text(self):
        """Everything the broker wrote to stderr/stdout, across restarts."""
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def log_size(self):
        try:
            return self.log_path.stat().st_size
        except FileNotFoundError:
            return 0

    def log_since(self, offset):
        with open(self.log_path, "rb") as f:
            f.seek(offset)
            return f.read().decode(errors="replace")

    def wait_for_log(self, pattern, since=0, timeout=5.0, flags=re.IGNORECASE):
        """Waits until a log line written after byte offset `since` matches `pattern`.

        Returns the line; on timeout returns None (the caller asserts with its own message).
        """
        rx = re.compile(pattern, flags)
        deadline = time.monotonic() + timeout
        while True:
            for line in self.log_since(since).splitlines():
                if rx.search(line):
                    return line
            if time.monotonic() > deadline:
                return None
            time.sleep(0.05)

    def log_tail(self, lines=60):
        text = self.log_text().splitlines()
        return "--- mskmock log (%s, last %d lines) ---\n%s\n--- end of log ---" % (
            self.log_path, min(lines, len(text)), "\n".join(text[-lines:]))


# -- client programs ------------------------------------------------------------------

def admin_call(broker, method, path, body=None):
    """(status, JSON body) of an admin API call to broker (docs/admin-api.md); 4xx answers too."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(broker.admin_url + path, method=method, data=data)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


@contextlib.contextmanager
def running(broker):
    """Starts broker and yields it; afterwards checks that it is still alive and stops it (exit
    0 checked), and removes its files either way. For module fixtures: `with running(B(...)) as
    b: yield b`."""
    broker.start()
    try:
        yield broker
        broker.assert_alive()
        broker.stop(check=True)
    finally:
        broker.cleanup()


def _venv_python():
    py = ROOT / ".venv" / "bin" / "python"
    return str(py) if py.exists() else sys.executable


def _glob_one(pattern_dir, pattern):
    hits = sorted(Path(pattern_dir).glob(pattern)) if Path(pattern_dir).exists() else []
    return hits[0] if hits else None


def client_command(lang):
    """The argv prefix that runs the client for `lang`, or None if it is not built.

    python and kcat need nothing built. node, java and go are built by their install.sh
    (called from tools/install-deps --test); their `run` wrapper is used once the build
    output exists (node_modules/, target/*.jar, the go binary).
    """
    d = CLIENTS / lang
    if not d.is_dir():
        return None
    if lang == "python":
        return [_venv_python(), str(d / "client.py")]
    if lang == "kcat":
        return ["bash", str(d / "client.sh")] if shutil.which("kcat") else None
    run = d / "run"
    if lang == "node":
        built = (d / "node_modules").is_dir()
        fallback = ["node", str(d / "client.js")]
    elif lang == "java":
        jar = _glob_one(d / "target", "client.jar") or _glob_one(d / "target", "*.jar")
        built = jar is not None
        fallback = ["java", "-jar", str(jar)] if jar else None
    elif lang == "go":
        exe = d / "client"
        built = exe.is_file() and os.access(exe, os.X_OK)
        fallback = [str(exe)]
    else:
        return None
    if not built:
        return None
    if run.is_file() and os.access(run, os.X_OK):
        return [str(run)]
    return fallback


ALL_CLIENTS = ("python", "kcat", "node", "java", "go")


def available_clients():
    return [lang for lang in ALL_CLIENTS if client_command(lang) is not None]


def run_client(lang, args, timeout=120):
    """Runs a client program; returns the JSON object on its last stdout line.

    Fails the test (with the command, exit status, stdout and stderr) on a non-zero exit,
    a time-out or output that does not end in a JSON object.
    """
    cmd = client_command(lang)
    if cmd is None:
        pytest.skip("%s client is not built" % lang)
    argv = cmd + [str(a) for a in args]
    shown = " ".join(argv)
    t0 = time.monotonic()
    try:
        p = subprocess.run(argv, cwd=str(ROOT), stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        pytest.fail("client timed out after %d s: %s\n--- stdout ---\n%s\n--- stderr ---\n%s"
                    % (timeout, shown, _text(e.stdout)[-4000:], _text(e.stderr)[-4000:]))
    took = time.monotonic() - t0
    if p.returncode != 0:
        pytest.fail("client exited %d after %.1f s: %s\n--- stdout ---\n%s\n--- stderr ---\n%s"
                    % (p.returncode, took, shown, p.stdout[-4000:], p.stderr[-8000:]))
    lines = [ln for ln in p.stdout.splitlines() if ln.strip()]
    try:
        result = json.loads(lines[-1])
        assert isinstance(result, dict)
    except (IndexError, ValueError, AssertionError):
        pytest.fail("client printed no JSON object on its last line: %s\n--- stdout ---\n%s"
                    "\n--- stderr ---\n%s" % (shown, p.stdout[-4000:], p.stderr[-4000:]))
    print("%s: %s -> %s (%.1f s)" % (lang, " ".join(str(a) for a in args[:1]), result, took))
    return result


def _text(b):
    if b is None:
        return ""
    return b.decode(errors="replace") if isinstance(b, bytes) else b
