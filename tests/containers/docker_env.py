"""The container tests' helpers: the docker CLI (Debian's, matching the engine), the image under
test (MSKMOCK_IMAGE, built by tools/run-containers), and a Kafka round trip from the host."""

import json
import os
import socket
import subprocess
import time
import uuid

from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

DOCKER = os.environ.get("DOCKER", "/usr/bin/docker")
IMAGE = os.environ.get("MSKMOCK_IMAGE", "mskmock:test")
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def docker(*args, timeout=60, check=True, **kw):
    r = subprocess.run([DOCKER, *args], capture_output=True, text=True, timeout=timeout, **kw)
    if check and r.returncode != 0:
        raise AssertionError("docker %s failed (%d): %s%s" % (" ".join(args), r.returncode, r.stdout, r.stderr))
    return r


def inspect(name, fmt):
    return docker("inspect", "-f", fmt, name).stdout.strip()


def wait_healthy(name, timeout=30):
    """Seconds until docker reports the container healthy (its HEALTHCHECK is mskmock --probe)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        state = json.loads(docker("inspect", "-f", "{{json .State}}", name).stdout)
        if state.get("Health", {}).get("Status") == "healthy":
            return time.monotonic() - t0
        if not state["Running"]:
            raise AssertionError("container %s exited with %s:\n%s" % (name, state["ExitCode"], logs(name)))
        time.sleep(0.05)
    raise AssertionError("container %s not healthy within %d s:\n%s" % (name, timeout, logs(name)))


def logs(name):
    r = docker("logs", name, check=False)
    return r.stdout + r.stderr


def free_ports(count):
    """A base port with count consecutive free ports on the host (below the ephemeral range)."""
    for base in range(21000 + os.getpid() % 5000, 31000, 7):
        socks = []
        try:
            for p in range(base, base + count):
                s = socket.socket()
                s.bind(("127.0.0.1", p))
                socks.append(s)
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise RuntimeError("no free port range")


def create_topic(bootstrap, topic, partitions=3, **security):
    admin = AdminClient({"bootstrap.servers": bootstrap, **security})
    admin.create_topics([NewTopic(topic, num_partitions=partitions)])[topic].result(30)


def produce(bootstrap, topic, values, **security):
    p = Producer({"bootstrap.servers": bootstrap, **security})
    for v in values:
        p.produce(topic, value=v.encode())
    assert p.flush(30) == 0, "records left unacknowledged"


def consume(bootstrap, topic, count, timeout=30, **security):
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "ct-" + uuid.uuid4().hex[:8],
                  "auto.offset.reset": "earliest", **security})
    c.subscribe([topic])
    got, deadline = [], time.monotonic() + timeout
    while len(got) < count and time.monotonic() < deadline:
        m = c.poll(0.5)
        if m is not None and not m.error():
            got.append(m.value().decode())
    c.close()
    return got
