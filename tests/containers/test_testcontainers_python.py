"""The Testcontainers recipe for Python (docs/containers.md), run as written: one broker, its
external listener bound to the same port on the host so Metadata advertises what the host dials,
ready when Docker's health check (mskmock --probe) says so."""

import uuid

from testcontainers.core.container import DockerContainer
from testcontainers.core.wait_strategies import HealthcheckWaitStrategy

from docker_env import IMAGE, consume, create_topic, free_ports, produce


def mskmock_container(port):
    return (DockerContainer(IMAGE)
            .with_env("MSKMOCK_BROKER_COUNT", "1")
            .with_env("MSKMOCK_DEFAULT_REPLICATION_FACTOR", "1")  # MSK's 3 needs 3 brokers
            .with_env("MSKMOCK_EXTERNAL_PORT", str(port))
            .with_env("MSKMOCK_EXTERNAL_ADVERTISED_HOST", "localhost")
            .with_bind_ports(port, port)
            .waiting_for(HealthcheckWaitStrategy()))


def test_testcontainers_python_round_trip():
    port = free_ports(1)
    with mskmock_container(port) as msk:
        bootstrap = "localhost:%d" % port
        topic = "tc-" + uuid.uuid4().hex[:6]
        create_topic(bootstrap, topic, partitions=1)
        produce(bootstrap, topic, ["a", "b", "c"])
        assert consume(bootstrap, topic, 3) == ["a", "b", "c"]
        assert "ready in" in msk.get_logs()[1].decode()
