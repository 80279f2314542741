"""The Python Testcontainers module (docker/testcontainers/python, docs/containers.md) as a user
would use it: one line starts mskmock on ephemeral host ports; then a plaintext round trip and
an IAM one over SASL_SSL with the official signer, the module's CA and its credentials."""

import json
import urllib.request
import uuid

import pytest
from aws_msk_iam_sasl_signer import MSKAuthTokenProvider
from botocore.credentials import ContainerProvider, CredentialProvider, Credentials
from confluent_kafka.admin import AdminClient
from mskmock_testcontainers import MskMockContainer

from docker_env import IMAGE, consume, create_topic, produce


@pytest.fixture(scope="module")
def msk():
    with MskMockContainer(IMAGE) as msk:
        yield msk


def port_of(bootstrap):
    return int(bootstrap.rsplit(":", 1)[1])


def test_ports_are_docker_picked_and_advertised(msk):
    plain, iam = port_of(msk.get_bootstrap_servers()), port_of(msk.get_iam_bootstrap_servers())
    # nothing bound them: Docker picked host ports, never the container's 19092/19192
    assert (plain, iam) != (19092, 19192)
    with urllib.request.urlopen(msk.get_admin_url() + "/v1/listeners", timeout=10) as r:
        listeners = {ls["name"]: ls for ls in json.load(r)["listeners"]}
    assert listeners["external"]["advertised_ports"] == [plain]
    assert listeners["external_iam"]["advertised_ports"] == [iam]


def test_plaintext_round_trip(msk):
    bootstrap = msk.get_bootstrap_servers()
    topic = "tc-" + uuid.uuid4().hex[:6]
    create_topic(bootstrap, topic, partitions=1)
    produce(bootstrap, topic, ["a", "b", "c"])
    assert consume(bootstrap, topic, 3) == ["a", "b", "c"]


class Static(CredentialProvider):
    METHOD = "static"

    def __init__(self, access_key, secret_key):
        super().__init__()
        self.creds = Credentials(access_key, secret_key)

    def load(self):
        return self.creds


def sasl_ssl(msk, provider):
    def oauth_cb(_config):
        token, expiry_ms = MSKAuthTokenProvider.generate_auth_token_from_credentials_provider(
            msk.get_region(), provider)
        return token, expiry_ms / 1000
    return {"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER", "oauth_cb": oauth_cb,
            "ssl.ca.location": msk.get_ca_file()}


def test_iam_round_trip(msk):
    """The producer signs with the module's long-term key, the consumer with the role's
    credentials that botocore fetches from get_credentials_uri(), as on ECS."""
    bootstrap = msk.get_iam_bootstrap_servers()
    key = Static(msk.get_access_key_id(), msk.get_secret_access_key())
    role = ContainerProvider(environ={"AWS_CONTAINER_CREDENTIALS_FULL_URI": msk.get_credentials_uri()})
    assert role.load().access_key.startswith("ASIA")
    topic = "tc-iam-" + uuid.uuid4().hex[:6]
    create_topic(bootstrap, topic, partitions=1, **sasl_ssl(msk, key))
    produce(bootstrap, topic, ["x", "y"], **sasl_ssl(msk, key))
    assert consume(bootstrap, topic, 2, **sasl_ssl(msk, role)) == ["x", "y"]


def test_config_and_profile_become_environment():
    # nothing started: only the environment the container would get
    c = MskMockContainer(IMAGE).with_profile("provisioned").with_config("log.level", "debug")
    assert c.env["MSKMOCK_PROFILE"] == "provisioned"
    assert c.env["MSKMOCK_LOG_LEVEL"] == "debug"
    with pytest.raises(ValueError):
        c.with_profile("dedicated")


def test_three_brokers_each_on_its_own_port():
    with MskMockContainer(IMAGE).with_broker_count(3) as msk:
        bootstrap = msk.get_bootstrap_servers()
        assert len(set(bootstrap.split(","))) == 3
        topic = "tc3-" + uuid.uuid4().hex[:6]
        create_topic(bootstrap, topic, partitions=3)  # replication factor: MSK's 3
        md = AdminClient({"bootstrap.servers": bootstrap}).list_topics(topic, timeout=10)
        # Metadata names every broker by its own mapped port
        assert sorted("%s:%d" % (b.host, b.port) for b in md.brokers.values()) == sorted(bootstrap.split(","))
        assert all(len(p.replicas) == 3 for p in md.topics[topic].partitions.values())
        produce(bootstrap, topic, ["a", "b", "c", "d"])
        assert sorted(consume(bootstrap, topic, 4)) == ["a", "b", "c", "d"]
