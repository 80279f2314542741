"""The AWS APIs over HTTPS (aws.tls=true; issue 34, docs/control-plane.md "HTTPS") with real
clients: aws-cli (--ca-bundle) and boto3 (verify=) trusting the CA file the ready file names.

  1. the ready file's aws_url says https:// and its ca_file is the local CA;
  2. STS get-caller-identity and kafka list-clusters-v2 through aws-cli and boto3, each request
     logged as over HTTP;
  3. a client that does not trust the CA fails verification, and the broker logs the handshake
     the client broke off;
  4. a plaintext HTTP request to the port is answered 400 in plaintext, and logged; a handshake
     that stalls is closed at the listener's 10 s limit, and logged;
  5. the kafka profile, which has no IAM listener, still gets the certificate for aws.port.

One broker for the module (1 synthetic broker, Serverless profile).
"""

import http.client
import json
import socket
import subprocess
import time

import pytest

import iam
from harness import running
from iam import ALICE, REGION, AwsBroker, aws_env
from test_aws_api import aws_cli

pytestmark = pytest.mark.timeout(300)


class HttpsAwsBroker(AwsBroker):
    """An AwsBroker whose aws.port serves HTTPS (aws.tls), with a ready file."""

    def __init__(self, identities_file, **kw):
        super().__init__(identities_file, **kw)
        self.config["aws.tls"] = True
        self.config["ready.file"] = str(self.data_dir / "ready.json")

    @property
    def aws_url(self):
        return "https://127.0.0.1:%d" % self.aws_port

    def ready(self):
        return json.loads((self.data_dir / "ready.json").read_text())


@pytest.fixture(scope="module")
def identities(tmp_path_factory):
    return iam.write_identities(tmp_path_factory.mktemp("aws-https") / "identities.json", identities=(ALICE,))


@pytest.fixture(scope="module")
def broker(identities):
    with running(HttpsAwsBroker(identities)) as b:
        yield b


def aws(b, *args, ca=True, check=True):
    env = aws_env(ALICE)
    env["AWS_ENDPOINT_URL"] = b.aws_url
    extra = ["--ca-bundle", str(b.ca_path)] if ca else []
    p = subprocess.run([aws_cli(), *map(str, args), *extra, "--output", "json"], env=env, capture_output=True,
                       text=True, timeout=120)
    if check:
        assert p.returncode == 0, "aws %s: rc %d\n%s\n%s" % (" ".join(map(str, args)), p.returncode, p.stderr,
                                                             b.log_tail())
        return json.loads(p.stdout)
    return p


def boto(b, service, verify):
    boto3 = pytest.importorskip("boto3")
    from botocore.config import Config
    return boto3.client(service, endpoint_url=b.aws_url, region_name=REGION, verify=verify,
                        aws_access_key_id=ALICE.access_key_id, aws_secret_access_key=ALICE.secret_access_key,
                        config=Config(retries={"max_attempts": 1}))


# -- 1. the ready file ----------------------------------------------------------------------

def test_ready_file_names_https_and_the_ca(broker):
    r = broker.ready()
    assert r["aws_url"] == broker.aws_url, r
    assert r["ca_file"] and r["ca_file"].endswith("tls/ca.pem"), r
    assert broker.wait_for_log(r"aws: the kafka control plane and STS on https://127\.0\.0\.1:%d " % broker.aws_port)


# -- 2. the clients, trusting the CA --------------------------------------------------------

def test_awscli_over_https(broker):
    since = broker.log_size()
    out = aws(broker, "sts", "get-caller-identity")
    assert out["Arn"] == ALICE.principal, out
    clusters = aws(broker, "kafka", "list-clusters-v2")["ClusterInfoList"]
    assert len(clusters) == 1 and clusters[0]["State"] == "ACTIVE", clusters
    assert broker.wait_for_log(r"aws: .* POST / 200 GetCallerIdentity", since=since)
    assert broker.wait_for_log(r"aws: .* GET /api/v2/clusters 200 ListClustersV2", since=since)
    assert "TLS handshake failed" not in broker.log_since(since)


def test_boto3_over_https(broker):
    assert boto(broker, "sts", str(broker.ca_path)).get_caller_identity()["Arn"] == ALICE.principal
    clusters = boto(broker, "kafka", str(broker.ca_path)).list_clusters_v2()["ClusterInfoList"]
    assert clusters[0]["ClusterArn"] == broker.ready()["cluster_arn"], clusters


# -- 3. a client that does not trust the CA -------------------------------------------------

def test_awscli_without_the_ca_fails_verification(broker):
    since = broker.log_size()
    p = aws(broker, "sts", "get-caller-identity", ca=False, check=False)
    assert p.returncode != 0 and "certificate verify failed" in p.stderr, p.stderr
    line = broker.wait_for_log(r"aws: peer=\S+ TLS handshake failed: .*unknown ca", since=since)
    assert line and "does not trust the CA" in line, broker.log_tail()
    assert "GetCallerIdentity" not in broker.log_since(since)


def test_boto3_without_the_ca_fails_verification(broker):
    from botocore.exceptions import SSLError
    with pytest.raises(SSLError, match="certificate verify failed"):
        boto(broker, "sts", True).get_caller_identity()  # the system's CAs only


# -- 4. plaintext and stalled handshakes ----------------------------------------------------

def test_plaintext_http_refused(broker):
    since = broker.log_size()
    c = http.client.HTTPConnection("127.0.0.1", broker.aws_port, timeout=10)
    c.request("POST", "/", body="Action=GetCallerIdentity&Version=2011-06-15",
              headers={"Content-Type": "application/x-www-form-urlencoded"})
    r = c.getresponse()
    body = r.read().decode()
    c.close()
    assert r.status == 400 and "plain HTTP request was sent to the HTTPS port" in body, (r.status, body)
    assert broker.wait_for_log(r"aws: peer=\S+ TLS handshake failed: .*plaintext HTTP request", since=since)
    assert broker.wait_for_log(r"aws: peer=\S+ - - 400 The plain HTTP request was sent to the HTTPS port",
                               since=since)


def test_stalled_handshake_closed(broker):
    since = broker.log_size()
    with socket.create_connection(("127.0.0.1", broker.aws_port), timeout=20) as s:
        s.sendall(b"\x16\x03\x01")  # a TLS record header begun, never finished
        start = time.monotonic()
        assert s.recv(16) == b""
        waited = time.monotonic() - start
    assert 9 <= waited <= 15, waited
    assert broker.wait_for_log(r"aws: peer=\S+ closed: the TLS handshake did not complete within 10000 ms",
                               since=since)
    broker.assert_alive()


# -- 5. no IAM listener ---------------------------------------------------------------------

def test_kafka_profile_without_iam_listener(identities):
    with running(HttpsAwsBroker(identities, config={"profile": "kafka", "iam.port": 0})) as b:
        assert b.wait_for_log(r"tls: created local CA")
        assert "iam" not in b.ready()["bootstrap"], b.ready()
        assert aws(b, "sts", "get-caller-identity")["Arn"] == ALICE.principal
