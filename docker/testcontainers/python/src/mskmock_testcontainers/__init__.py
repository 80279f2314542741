"""mskmock (a local AWS MSK Serverless broker) as a Testcontainers module.

    with MskMockContainer("mskmock:latest") as msk:
        bootstrap = msk.get_bootstrap_servers()

No image is published: build it from the mskmock repository with
`docker build -f docker/Dockerfile -t mskmock:latest .` (docs/containers.md).
"""

import io
import json
import secrets
import string
import tarfile
import tempfile
import urllib.request

from testcontainers.core.container import DockerContainer
from testcontainers.core.exceptions import ContainerStartException
from testcontainers.core.wait_strategies import HealthcheckWaitStrategy

__all__ = ["MskMockContainer"]

# The external listeners bind these ports inside the container (broker i on port + i) and
# Docker publishes each on a host port it picks. Metadata names the host ports once start()
# has told the broker them (PUT /v1/listeners/NAME/advertised). IAM starts 100 above so no
# broker count the module allows makes the two ranges meet.
PLAINTEXT_PORT = 19092
IAM_PORT = 19192
ADMIN_PORT = 9080
CREDENTIALS_PORT = 9180
# The image's own listeners use 9092-9097 and 9098 up: more brokers would make them collide.
MAX_BROKERS = 6
IDENTITIES_PATH = "/etc/mskmock/testcontainers-identities.json"
CA_PATH = "/data/tls/ca.pem"
ROLE = "testcontainers"
ACCOUNT = "123456789012"
PROFILES = ("serverless", "provisioned", "kafka")


def config_env_name(key):
    """The environment variable the broker reads a configuration key from (docs/containers.md)."""
    return "MSKMOCK_" + key.replace(".", "_").upper()


def _random(alphabet, n):
    return "".join(secrets.choice(alphabet) for _ in range(n))


class MskMockContainer(DockerContainer):
    """mskmock with its external listeners on ephemeral host ports, an IAM identity of its own
    and its CA at hand. Configure before start(); read the getters after."""

    def __init__(self, image="mskmock:latest", **kwargs):
        super().__init__(image, **kwargs)
        self._broker_count = 1
        # Generated per container, like a real key pair: AKIA + 16 of A-Z2-7, a 40-character secret.
        self.access_key_id = "AKIA" + _random(string.ascii_uppercase + "234567", 16)
        self.secret_access_key = _random(string.ascii_letters + string.digits + "+/", 40)
        self._host = None
        self._ca_pem = None
        self._ca_file = None
        # Defaults a test wants and MSK does not have: a group's first join waits 3 s for more
        # members there. with_env/with_config after the constructor override them.
        self.with_env("MSKMOCK_GROUP_INITIAL_REBALANCE_DELAY_MS", "0")

    def with_broker_count(self, n):
        if not 1 <= n <= MAX_BROKERS:
            raise ValueError("broker count must be 1 to %d, not %d" % (MAX_BROKERS, n))
        self._broker_count = n
        return self

    def with_profile(self, profile):
        if profile not in PROFILES:
            raise ValueError("profile must be one of %s, not %r" % (", ".join(PROFILES), profile))
        return self.with_env("MSKMOCK_PROFILE", profile)

    def with_config(self, key, value):
        """Any key of conf/mskmock.properties, e.g. with_config("log.level", "debug")."""
        return self.with_env(config_env_name(key), str(value))

    def _configure(self):
        n = self._broker_count
        # The listeners, the identities and the broker count are the module's: the getters
        # depend on them. MSK's replication factor 3 needs 3 brokers, so fewer get n unless set.
        if n < 3:
            self.env.setdefault("MSKMOCK_DEFAULT_REPLICATION_FACTOR", str(n))
        self.env.update({
            "MSKMOCK_BROKER_COUNT": str(n),
            "MSKMOCK_EXTERNAL_PORT": str(PLAINTEXT_PORT),
            "MSKMOCK_EXTERNAL_IAM_PORT": str(IAM_PORT),
            # SASL tokens and the TLS certificate name the host: it has to be known at creation.
            "MSKMOCK_EXTERNAL_ADVERTISED_HOST": self._host_before_start(),
            "MSKMOCK_IAM_IDENTITIES_FILE": IDENTITIES_PATH,
        })
        self.with_exposed_ports(*self._ports(PLAINTEXT_PORT), *self._ports(IAM_PORT),
                                ADMIN_PORT, CREDENTIALS_PORT)
        self.with_copy_into_container(self._identities().encode(), IDENTITIES_PATH)
        self.waiting_for(HealthcheckWaitStrategy())

    def _host_before_start(self):
        # Where Testcontainers itself runs in a container it may reach others by their gateway,
        # which only exists once the container does; the Docker host (or
        # TESTCONTAINERS_HOST_OVERRIDE) is the name known before.
        try:
            self._host = self.get_container_host_ip()
        except ContainerStartException:
            self._host = self.get_docker_client().host()
        return self._host

    def _ports(self, base):
        return [base + i for i in range(self._broker_count)]

    def _identities(self):
        return json.dumps({
            "identities": [{"access_key_id": self.access_key_id,
                            "secret_access_key": self.secret_access_key,
                            "principal": "arn:aws:iam::%s:user/testcontainers" % ACCOUNT}],
            "roles": [{"name": ROLE, "arn": "arn:aws:iam::%s:role/%s" % (ACCOUNT, ROLE),
                       "session_name": ROLE}],
        })

    def start(self):
        super().start()  # returns once Docker's health check (mskmock --probe) passes
        self._advertise("external", self._mapped(PLAINTEXT_PORT))
        self._advertise("external_iam", self._mapped(IAM_PORT))
        self._ca_pem = self._read_file(CA_PATH).decode()
        return self

    def _read_file(self, path):
        chunks, _ = self.get_wrapped_container().get_archive(path)
        with tarfile.open(fileobj=io.BytesIO(b"".join(chunks))) as tar:
            return tar.extractfile(tar.getmembers()[0]).read()

    def stop(self, *args, **kwargs):
        if self._ca_file is not None:
            self._ca_file.close()  # removes it
            self._ca_file = None
        super().stop(*args, **kwargs)

    def _mapped(self, base):
        return [int(self.get_exposed_port(p)) for p in self._ports(base)]

    def _advertise(self, listener, ports):
        req = urllib.request.Request(
            "%s/v1/listeners/%s/advertised" % (self.get_admin_url(), listener), method="PUT",
            data=json.dumps({"ports": ports}).encode(), headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:  # raises HTTPError on 4xx/5xx
            r.read()

    def _bootstrap(self, base):
        return ",".join("%s:%d" % (self._host, p) for p in self._mapped(base))

    def get_bootstrap_servers(self):
        """Plaintext, no authentication."""
        return self._bootstrap(PLAINTEXT_PORT)

    def get_iam_bootstrap_servers(self):
        """SASL_SSL (OAUTHBEARER or AWS_MSK_IAM); trust get_ca_pem()/get_ca_file()."""
        return self._bootstrap(IAM_PORT)

    def get_admin_url(self):
        return "http://%s:%d" % (self._host, int(self.get_exposed_port(ADMIN_PORT)))

    def get_ca_pem(self):
        """The CA the broker's generated certificate chains to (PEM text)."""
        return self._ca_pem

    def get_ca_file(self):
        """The CA as a file (librdkafka's ssl.ca.location), removed by stop()."""
        if self._ca_file is None:
            self._ca_file = tempfile.NamedTemporaryFile("w", prefix="mskmock-ca-", suffix=".pem")
            self._ca_file.write(self._ca_pem)
            self._ca_file.flush()
        return self._ca_file.name

    def get_region(self):
        """The region IAM tokens must be signed for (iam.region)."""
        return self.env.get("MSKMOCK_IAM_REGION", "us-east-1")

    def get_access_key_id(self):
        """A long-term key the broker accepts, allowed everything (no policies)."""
        return self.access_key_id

    def get_secret_access_key(self):
        return self.secret_access_key

    def get_credentials_uri(self):
        """For AWS_CONTAINER_CREDENTIALS_FULL_URI: the role's temporary credentials, rotated as on
        ECS. AWS SDKs accept a plain-HTTP full URI only on loopback (or ECS/EKS link-local
        addresses), so this works where the Docker host is localhost."""
        return "http://%s:%d/role/%s" % (self._host,
                                         int(self.get_exposed_port(CREDENTIALS_PORT)), ROLE)
