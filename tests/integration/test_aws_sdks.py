"""The AWS listener (aws.port; issue 34, docs/control-plane.md) through the official AWS SDKs of
the other ecosystems, each from its own registry, in the per-language test clients' aws-calls
command (static credentials from the environment, the SDK's endpoint override at aws_url):

  - aws-sdk-go-v2 (service/sts, service/kafka; tests/clients/go/awsapi.go), the SDK the
    Terraform AWS provider is built on: GetCallerIdentity, ListClustersV2, DescribeClusterV2 of
    the ARN found, GetBootstrapBrokers; then aws_msk_serverless_cluster's read of an existing
    cluster (DescribeClusterV2 until ACTIVE, then GetBootstrapBrokers); and ListClustersV2 signed
    with a wrong secret;
  - the AWS SDK for JavaScript v3 (@aws-sdk/client-sts, @aws-sdk/client-kafka;
    tests/clients/node/aws-calls.js): the same calls and refusal, without the Terraform replay;
  - the AWS SDK for Java v2 (software.amazon.awssdk:sts over the url-connection HTTP client;
    tests/clients/java AwsCalls.java): GetCallerIdentity and its refusal. Its :kafka module is
    not served by the Maven registry our machines and CI reach.

The answers are checked against the broker's ready file: the cluster ARN, and the bootstrap
string = the IAM listeners. One broker for the module (3 synthetic brokers, Serverless profile).
"""

import json

import pytest

import iam
from harness import running
from iam import ACCOUNT, REGION, AwsBroker, Identity, aws_env, run_client_env

pytestmark = pytest.mark.timeout(300)

# The file gives policies, so under iam.authorization.default=auto an entry without any would be
# allowed nothing, as on MSK: alice is given everything.
EVERYTHING = ({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]},)
ALICE = Identity(iam.ALICE.access_key_id, iam.ALICE.secret_access_key, iam.ALICE.principal, policies=EVERYTHING)
WRONG_SECRET = "not/the+right/secret0123456789abcdefghij"


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    d = tmp_path_factory.mktemp("aws-sdks")
    ids = iam.write_identities(d / "identities.json", identities=(ALICE,), roles=())
    with running(AwsBroker(ids, broker_count=3, config={"ready.file": str(d / "ready.json")})) as b:
        b.ready = json.loads((d / "ready.json").read_text())
        yield b


def aws_calls(b, lang):
    args = ["aws-calls", "--endpoint", b.aws_url, "--region", REGION, "--wrong-secret", WRONG_SECRET]
    return run_client_env(lang, args, aws_env(ALICE), timeout=120).json


def check_caller(out):
    assert out["caller"]["arn"] == ALICE.principal and out["caller"]["account"] == ACCOUNT, out
    assert out["caller"]["user_id"].startswith("AIDA"), out


def check_cluster_and_bootstrap(b, out):
    arn, iam_bootstrap = b.ready["cluster_arn"], b.ready["bootstrap"]["iam"]
    assert iam_bootstrap.split(",") == ["127.0.0.1:%d" % (b.iam_port + i) for i in range(3)], b.ready
    want = {"arn": arn, "name": "mskmock", "type": "SERVERLESS", "state": "ACTIVE", "serverless_iam": True}
    assert out["clusters"] == [want], out
    assert out["describe"] == want, out
    # a Serverless cluster serves IAM only: every other string is absent
    assert out["bootstrap"] == {"sasl_iam": iam_bootstrap, "plaintext": "", "tls": "", "sasl_scram": "",
                                "public_sasl_iam": ""}, out


def test_go_sdk_v2(broker):
    since = broker.log_size()
    out = aws_calls(broker, "go")
    check_caller(out)
    check_cluster_and_bootstrap(broker, out)
    assert out["terraform_read"] == {"polls": 1, "state": "ACTIVE",
                                     "bootstrap_brokers_sasl_iam": broker.ready["bootstrap"]["iam"]}, out
    assert (out["refused"]["code"], out["refused"]["status"]) == ("InvalidSignatureException", 403), out
    text = broker.log_since(since)
    for op in ("GetCallerIdentity", "ListClustersV2", "DescribeClusterV2", "GetBootstrapBrokers"):
        assert " 200 %s" % op in text, (op, text)
    assert "access key %s: signature mismatch" % ALICE.access_key_id in text, text


def test_javascript_sdk_v3(broker):
    out = aws_calls(broker, "node")
    check_caller(out)
    check_cluster_and_bootstrap(broker, out)
    assert (out["refused"]["code"], out["refused"]["status"]) == ("InvalidSignatureException", 403), out


def test_java_sdk_v2_sts(broker):
    out = aws_calls(broker, "java")
    check_caller(out)
    # STS is a query-protocol service: its code for a bad signature is SignatureDoesNotMatch
    assert (out["refused"]["code"], out["refused"]["status"]) == ("SignatureDoesNotMatch", 403), out
