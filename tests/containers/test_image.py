"""The image as `docker run` users meet it: healthy fast, reachable from the host through the
published ports, a clean and quick stop, data kept in the volume, no root, no zombies."""

import time
import uuid

import pytest

from docker_env import IMAGE, consume, create_topic, docker, free_ports, inspect, logs, produce, wait_healthy


@pytest.fixture(scope="module")
def ext_port():
    return free_ports(3)


@pytest.fixture(scope="module")
def volume():
    name = "mskmock-ct-" + uuid.uuid4().hex[:8]
    docker("volume", "create", name)
    yield name
    docker("volume", "rm", "-f", name, check=False)


@pytest.fixture(scope="module")
def container(ext_port, volume):
    name = "mskmock-ct-" + uuid.uuid4().hex[:8]
    t0 = time.monotonic()
    docker("run", "-d", "--name", name, "-v", volume + ":/data",
           "-e", "MSKMOCK_EXTERNAL_PORT=%d" % ext_port,
           "-p", "127.0.0.1:%d-%d:%d-%d" % (ext_port, ext_port + 2, ext_port, ext_port + 2), IMAGE)
    wait_healthy(name)
    print("docker run to healthy: %.2f s" % (time.monotonic() - t0))
    yield name
    docker("rm", "-f", name, check=False)


def test_healthy_and_runs_as_non_root(container):
    assert inspect(container, "{{.State.Health.Status}}") == "healthy"
    assert inspect(container, "{{.Config.User}}") == "mskmock"
    uid = docker("exec", container, "id", "-u").stdout.strip()
    assert uid != "0"
    # the broker is PID 1 itself (no shell in between), so it gets docker stop's SIGTERM
    assert docker("exec", container, "cat", "/proc/1/cmdline").stdout.split("\0")[0] == "mskmock"


def test_host_client_produces_and_consumes_through_published_port(container, ext_port):
    bootstrap = "localhost:%d" % ext_port
    create_topic(bootstrap, "smoke")
    values = ["v%d" % i for i in range(50)]
    produce(bootstrap, "smoke", values)
    assert sorted(consume(bootstrap, "smoke", len(values))) == sorted(values)


def test_health_checks_do_not_fill_the_log(container):
    before = len(logs(container).splitlines())
    time.sleep(3.5)  # three or more health checks
    new = logs(container).splitlines()[before:]
    # the checks run inside the container (peer 127.0.0.1); host clients come through Docker's gateway
    assert not [ln for ln in new if "mskmock-probe" in ln or "peer=127.0.0.1:" in ln], new


def test_orphans_are_reaped_by_pid_1(container):
    """A process whose parent exits is re-parented to PID 1 (mskmock); it must not stay a zombie."""
    docker("exec", container, "sh", "-c", "(sleep 0.2 &) ; exit 0")
    time.sleep(1.0)
    states = docker("exec", container, "sh", "-c", "cat /proc/[0-9]*/stat").stdout
    zombies = [ln for ln in states.splitlines() if ln.split(") ", 1)[-1].startswith("Z")]
    assert not zombies, zombies


def test_data_survives_restart_and_stop_is_clean_and_quick(container, ext_port):
    bootstrap = "localhost:%d" % ext_port
    create_topic(bootstrap, "durable")
    produce(bootstrap, "durable", ["before-restart"])
    t0 = time.monotonic()
    docker("restart", "-t", "10", container)
    wait_healthy(container)
    print("docker restart to healthy: %.2f s" % (time.monotonic() - t0))
    assert consume(bootstrap, "durable", 1) == ["before-restart"]

    t0 = time.monotonic()
    docker("stop", "-t", "10", container)
    took = time.monotonic() - t0
    assert inspect(container, "{{.State.ExitCode}}") == "0", logs(container)[-2000:]
    assert took < 2.0, "docker stop took %.2f s" % took
    assert "signal 15: shutting down" in logs(container)
