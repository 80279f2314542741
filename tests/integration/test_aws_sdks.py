"""The AWS listener (aws.port; issue 34, docs/control-plane.md) through the official AWS SDKs of
the other ecosystems, each from its own registry, in the per-language test clients (static
credentials from the environment, the SDK's endpoint override at aws_url):

  - aws-sdk-go-v2 (service/sts, service/kafka; tests/clients/go), the SDK the Terraform AWS
    provider is built on. aws-calls (awsapi.go): GetCallerIdentity, ListClustersV2,
    DescribeClusterV2 of the ARN found, GetBootstrapBrokers; then aws_msk_serverless_cluster's
    read of an existing cluster; and ListClustersV2 signed with a wrong secret.
    terraform-serverless (tfserverless.go): the provider's calls for aws_msk_serverless_cluster
    on apply (CreateClusterV2 with tags, DescribeClusterV2 polled until ACTIVE, the read) and on
    destroy (DeleteCluster, DescribeClusterV2 polled until NotFoundException); between the two,
    franz-go with aws-msk-iam-sasl-signer-go produces and consumes over IAM on the created
    cluster, through the bootstrap string the read returned, as an identity whose policy names
    only that cluster, and is refused on the configured one;
  - the AWS SDK for JavaScript v3 (@aws-sdk/client-sts, @aws-sdk/client-kafka;
    tests/clients/node): aws-calls (the calls and refusal of the Go one, without the Terraform
    replay), and aws-serverless: CreateClusterV2, DescribeClusterV2 polled until ACTIVE,
    GetBootstrapBrokers, DeleteCluster, polled until NotFoundException;
  - the AWS SDK for Java v2 (software.amazon.awssdk:sts and :kafka over the url-connection HTTP
    client; tests/clients/java): aws-calls (AwsCalls.java), GetCallerIdentity and its refusal;
    aws-serverless (AwsServerless.java), the Node one's calls plus ListClustersV2. Its :kafka
    module is pinned at 2.50.2 beside the rest of the SDK at 2.59.1 (tests/clients/java/pom.xml
    says why).

The answers are checked against the broker's ready file (the configured cluster's ARN and IAM
listeners) and its log. One broker for the module (3 synthetic brokers, Serverless profile),
with aws.cluster.transition.ms short enough to keep the module fast and long enough that every
poller sees CREATING, and DELETING, before the state it waits for.
"""
import json
import re
import socket

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

# The cluster terraform-serverless creates, and an application's identity whose policy names it
# (and nothing else) the way a Terraform module writes it before the cluster's uuid is known:
# the cluster, its topics and its groups under cluster/NAME/*, topic/NAME/*, group/NAME/*.
TF_CLUSTER = "tf-serverless"
KAFKA_ARN = "arn:aws:kafka:%s:%s:" % (REGION, ACCOUNT)
APP_POLICY = {"Version": "2012-10-17", "Statement": [{
    "Sid": "TfServerlessOnly", "Effect": "Allow", "Action": "kafka-cluster:*",
    "Resource": [KAFKA_ARN + "%s/%s/*" % (kind, TF_CLUSTER) for kind in ("cluster", "topic", "group")]}]}
APP = Identity("AKIAMSKMOCKSDKAPP005", "sdk/App+sEcReT/0123456789abcdefghijKLMNOP",
               "arn:aws:iam::%s:user/tf-app" % ACCOUNT, policies=(APP_POLICY,))
# CREATING and DELETING last this long. The provider's waits poll at 0, 200 and 600 ms, so
# 600 gives it two CREATING (DELETING) answers and the third the end state, and the first poll a
# margin of 600 ms minus CreateClusterV2's own time (the CREATING clock starts before the
# cluster's brokers and storage do): a few pollings, at no cost over a shorter one.
TRANSITION_MS = 600
UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    d = tmp_path_factory.mktemp("aws-sdks")
    ids = iam.write_identities(d / "identities.json", identities=(ALICE, APP), roles=())
    config = {"ready.file": str(d / "ready.json"), "aws.cluster.transition.ms": TRANSITION_MS}
    with running(AwsBroker(ids, broker_count=3, config=config)) as b:
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


def terraform(b, *args):
    argv = ["terraform-serverless"] + list(args) + ["--endpoint", b.aws_url, "--region", REGION]
    return run_client_env("go", argv, aws_env(ALICE), timeout=120).json


def check_waited(wait, pending, target):
    """A poll that saw the pending state, then the target, and nothing else."""
    states = wait["states"]
    assert wait["polls"] == len(states) >= 2, wait
    assert states[0] == pending and states[-1] == target and set(states[:-1]) == {pending}, wait


def check_iam_bootstrap(bootstrap, b):
    """Three IAM listeners on loopback, none of the configured cluster's."""
    hosts = bootstrap.split(",")
    assert len(hosts) == 3 and all(re.fullmatch(r"127\.0\.0\.1:\d+", h) for h in hosts), bootstrap
    assert not set(hosts) & set(b.ready["bootstrap"]["iam"].split(",")), (bootstrap, b.ready)
    return hosts


def kafka_iam(b, bootstrap, command, *args, check=True):
    """franz-go with aws-msk-iam-sasl-signer-go (OAUTHBEARER over TLS) as APP."""
    argv = [command, "--bootstrap", bootstrap] + [str(a) for a in args] + [
        "--security-protocol", "SASL_SSL", "--mechanism", "OAUTHBEARER", "--region", REGION, "--ca", b.ca_path]
    return run_client_env("go", argv, aws_env(APP), timeout=120, check=check)


def test_go_sdk_v2_terraform_serverless_cluster(broker):
    """aws_msk_serverless_cluster's apply and destroy, call by call, and the cluster in between
    used over IAM through the bootstrap string Terraform read."""
    since = broker.log_size()
    tags = {"team": "payments", "env": "it"}
    out = terraform(broker, "apply", "--cluster-name", TF_CLUSTER, "--subnet", "subnet-0a1b2c3d4e5f60001",
                    "--subnet", "subnet-0a1b2c3d4e5f60002", *["--tag=%s=%s" % kv for kv in tags.items()])
    arn = out["arn"]
    assert re.fullmatch(r"%scluster/%s/%s-s1" % (re.escape(KAFKA_ARN), TF_CLUSTER, UUID), arn), out
    assert out["create"] == {"name": TF_CLUSTER, "type": "SERVERLESS", "state": "CREATING"}, out
    check_waited(out["wait"], "CREATING", "ACTIVE")
    read = out["read"]
    hosts = check_iam_bootstrap(read.pop("bootstrap_brokers_sasl_iam"), broker)
    assert read == {"arn": arn, "cluster_name": TF_CLUSTER, "cluster_uuid": arn.rsplit("/", 1)[1], "state": "ACTIVE",
                    "tags": tags, "client_authentication_sasl_iam": True,
                    "vpc_config": [{"subnet_ids": ["subnet-0a1b2c3d4e5f60001", "subnet-0a1b2c3d4e5f60002"],
                                    "security_group_ids": None}]}, out
    text = broker.log_since(since)
    # the provider's read takes the tags from the Cluster shape: no ListTagsForResource
    for op in ("CreateClusterV2", "DescribeClusterV2", "GetBootstrapBrokers"):
        assert " 200 %s" % op in text, (op, text)
    assert "ListTagsForResource" not in text, text

    # the application, on the cluster Terraform made, with the string Terraform read
    since = broker.log_size()
    bootstrap = ",".join(hosts)
    common = ["--topic", "orders", "--partitions", 3]
    assert kafka_iam(broker, bootstrap, "create-topic", *common).json == {"created": "orders"}
    assert kafka_iam(broker, bootstrap, "produce", *common, "--count", 100, "--compression", "none").json == {
        "produced": 100}
    assert kafka_iam(broker, bootstrap, "consume", *common, "--count", 100).json["consumed"] == 100
    text = broker.log_since(since)
    assert re.search(r"authenticated as IAM\.%s via OAUTHBEARER" % re.escape(APP.principal), text), text
    assert "refused" not in text, text

    # ... and refused on the configured cluster, whose ARN its policy does not name
    since = broker.log_size()
    r = kafka_iam(broker, broker.ready["bootstrap"]["iam"], "create-topic", *common, check=False)
    assert r.rc != 0 and "Access denied" in r.stderr, r.describe()
    print("go: refused in %.1f s: %s" % (r.seconds, r.stderr.strip().splitlines()[-1]))
    line = broker.wait_for_log(r"principal=IAM\.%s api=SaslAuthenticate mechanism=OAUTHBEARER refused "
                               r"error=SASL_AUTHENTICATION_FAILED\(58\) .*Access denied: kafka-cluster:Connect on %s: "
                               r"no statement allowed it" % (re.escape(APP.principal), re.escape(broker.ready["cluster_arn"])),
                               since=since, timeout=10)
    assert line, broker.log_since(since)

    out = terraform(broker, "destroy", "--arn", arn)
    assert out["delete"] == {"arn": arn, "state": "DELETING"}, out
    check_waited(out["wait"], "DELETING", "NotFoundException")
    for h in hosts:  # its listeners are closed
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", int(h.rsplit(":", 1)[1])), timeout=2).close()


def test_javascript_sdk_v3(broker):
    out = aws_calls(broker, "node")
    check_caller(out)
    check_cluster_and_bootstrap(broker, out)
    assert (out["refused"]["code"], out["refused"]["status"]) == ("InvalidSignatureException", 403), out


def test_javascript_sdk_v3_serverless_cluster(broker):
    """CreateClusterV2, the polls, GetBootstrapBrokers and DeleteCluster through client-kafka."""
    since = broker.log_size()
    args = ["aws-serverless", "--endpoint", broker.aws_url, "--region", REGION, "--cluster-name", "js-serverless",
            "--tag", "owner=js"]
    out = run_client_env("node", args, aws_env(ALICE), timeout=120).json
    arn = out["arn"]
    assert re.fullmatch(r"%scluster/js-serverless/%s-s1" % (re.escape(KAFKA_ARN), UUID), arn), out
    assert out["create"] == {"name": "js-serverless", "type": "SERVERLESS", "state": "CREATING"}, out
    check_waited(out["created"], "CREATING", "ACTIVE")
    assert out["describe"] == {"state": "ACTIVE", "type": "SERVERLESS", "tags": {"owner": "js"}}, out
    check_iam_bootstrap(out["bootstrap"]["sasl_iam"], broker)
    assert out["bootstrap"]["plaintext"] == "", out  # Serverless: IAM only
    assert out["delete"] == {"arn": arn, "state": "DELETING"}, out
    check_waited(out["deleted"], "DELETING", "NotFoundException")
    text = broker.log_since(since)
    for op in ("CreateClusterV2", "GetBootstrapBrokers", "DeleteCluster"):
        assert " 200 %s" % op in text, (op, text)


def test_java_sdk_v2_sts(broker):
    out = aws_calls(broker, "java")
    check_caller(out)
    # STS is a query-protocol service: its code for a bad signature is SignatureDoesNotMatch
    assert (out["refused"]["code"], out["refused"]["status"]) == ("SignatureDoesNotMatch", 403), out


def test_java_sdk_v2_serverless_cluster(broker):
    """CreateClusterV2, the polls, GetBootstrapBrokers, ListClustersV2 and DeleteCluster through
    software.amazon.awssdk:kafka."""
    since = broker.log_size()
    args = ["aws-serverless", "--endpoint", broker.aws_url, "--region", REGION, "--cluster-name", "java-serverless",
            "--subnet", "subnet-0a1b2c3d4e5f60003", "--tag", "owner=java", "--tag", "env=it"]
    out = run_client_env("java", args, aws_env(ALICE), timeout=120).json
    arn = out["arn"]
    assert re.fullmatch(r"%scluster/java-serverless/%s-s1" % (re.escape(KAFKA_ARN), UUID), arn), out
    assert out["create"] == {"name": "java-serverless", "type": "SERVERLESS", "state": "CREATING"}, out
    check_waited(out["created"], "CREATING", "ACTIVE")
    assert out["describe"] == {"state": "ACTIVE", "type": "SERVERLESS", "tags": {"owner": "java", "env": "it"}}, out
    check_iam_bootstrap(out["bootstrap"]["sasl_iam"], broker)
    assert (out["bootstrap"]["plaintext"], out["bootstrap"]["tls"]) == ("", ""), out  # Serverless: IAM only
    assert out["listed"] == [{"arn": arn, "name": "java-serverless", "type": "SERVERLESS", "state": "ACTIVE"}], out
    # the configured cluster first, then the created ones by creation
    assert out["list_names"][0] == "mskmock" and "java-serverless" in out["list_names"], out
    assert out["delete"] == {"arn": arn, "state": "DELETING"}, out
    check_waited(out["deleted"], "DELETING", "NotFoundException")
    assert out["deleted"]["status"] == 404, out
    text = broker.log_since(since)
    for op in ("CreateClusterV2", "DescribeClusterV2", "GetBootstrapBrokers", "ListClustersV2", "DeleteCluster"):
        assert " 200 %s" % op in text, (op, text)
