"""Cluster policies in authorization decisions, and IAM Conditions on the control plane (issue 34;
docs/control-plane.md#authorization), with boto3 on aws.port and confluent-kafka with the official
MSK IAM signer on the IAM listener:

  1. a cluster policy naming an identity whose own policies grant nothing lets it call
     GetBootstrapBrokers and produce over IAM; deleted, it no longer does;
  2. a cluster policy's Deny beats the identity's Allow, on the control plane (AWS's "explicit
     deny in a resource-based policy") and on the data plane (TOPIC_AUTHORIZATION_FAILED), with
     the log line naming the cluster policy's statement; it is still in force after a restart;
  3. conditions on aws:SourceIp and aws:RequestedRegion decide kafka: calls; a condition key
     mskmock does not know is refused by PutClusterPolicy, naming it;
  4. a cluster CreateClusterV2 made has its own policy, which decides for it and not for the
     configured cluster.

One broker for the module (3 synthetic brokers, Serverless profile); every test removes the
cluster policy it puts.
"""

import json
import re

import pytest

import iam
from authz import CLUSTER_ARN, CONFIG, allow, deny, policy, topic_arn
from harness import running
from iam import ACCOUNT, REGION, AwsBroker, Identity, aws_env, run_client_env

pytestmark = pytest.mark.timeout(300)

EVERYTHING = (policy(allow("*", "*")),)
ALICE = Identity("AKIAMSKMOCKPOLICY001", "aLiCe/p0l1cy+kEy/0123456789abcdefGHIJKLMN",
                 "arn:aws:iam::%s:user/alice" % ACCOUNT, policies=EVERYTHING)
# no "policies": under iam.authorization.default=auto, with policies elsewhere in the file,
# allowed nothing of its own, as on MSK
FRANK = Identity("AKIAMSKMOCKPOLICY002", "fRaNk/p0l1cy+kEy/0123456789abcdefGHIJKLMN",
                 "arn:aws:iam::%s:user/frank" % ACCOUNT)
# control-plane grants that hold only from some addresses, or in some region
VPC = Identity("AKIAMSKMOCKPOLICY003", "vPc/p0l1cy+kEy/0123456789abcdefGHIJKLMNOP",
               "arn:aws:iam::%s:user/vpc" % ACCOUNT,
               policies=(policy(
                   dict(allow("kafka:DescribeClusterV2", CLUSTER_ARN, "Loopback"),
                        Condition={"IpAddress": {"aws:SourceIp": ["127.0.0.0/8", "::1/128"]}}),
                   dict(allow("kafka:GetBootstrapBrokers", CLUSTER_ARN, "OnlyFromVpc"),
                        Condition={"IpAddress": {"aws:SourceIp": "10.0.0.0/8"}}),
                   dict(allow("kafka:ListClustersV2", "*", "OnlyEu"),
                        Condition={"StringEquals": {"aws:RequestedRegion": "eu-west-1"}}),
                   dict(allow("kafka:ListTagsForResource", CLUSTER_ARN, "OnlyHere"),
                        Condition={"StringEquals": {"aws:RequestedRegion": REGION}}),
                   dict(deny("kafka:DescribeClusterV2", CLUSTER_ARN, "NotOutsideTheRegion"),
                        Condition={"StringNotEquals": {"aws:RequestedRegion": REGION}})),))


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    ids = iam.write_identities(tmp_path_factory.mktemp("policy") / "identities.json",
                               identities=(ALICE, FRANK, VPC), roles=())
    with running(AwsBroker(ids, broker_count=3, credentials_endpoint=False,
                           config=dict(CONFIG, **{"aws.cluster.transition.ms": 0}))) as b:
        yield b


def boto(b, service, identity=ALICE):
    boto3 = pytest.importorskip("boto3")
    return boto3.client(service, endpoint_url=b.aws_url, region_name=REGION,
                        aws_access_key_id=identity.access_key_id,
                        aws_secret_access_key=identity.secret_access_key)


def client_error(fn):
    """The botocore ClientError fn raises: (code, message, HTTP status)."""
    from botocore.exceptions import ClientError
    with pytest.raises(ClientError) as e:
        fn()
    r = e.value.response
    return r["Error"]["Code"], r["Error"]["Message"], r["ResponseMetadata"]["HTTPStatusCode"]


def cluster_statement(effect, principal, actions, resources, sid):
    return {"Sid": sid, "Effect": effect, "Principal": {"AWS": principal}, "Action": actions,
            "Resource": resources}


def put_policy(b, *statements):
    since = b.log_size()
    v = boto(b, "kafka").put_cluster_policy(ClusterArn=CLUSTER_ARN, Policy=json.dumps(policy(*statements)))
    assert b.wait_for_log(r"PutClusterPolicy version=%s \(in force\)" % v["CurrentVersion"], since=since), \
        b.log_tail()
    return v


def delete_policy(b):
    boto(b, "kafka").delete_cluster_policy(ClusterArn=CLUSTER_ARN)


def sec(b):
    return ["--security-protocol", "SASL_SSL", "--mechanism", "OAUTHBEARER", "--region", REGION,
            "--ca", b.ca_path]


def create_topic(b, who, topic, check=True):
    return run_client_env("python", ["create-topic", "--bootstrap", b.iam_bootstrap, "--topic", topic,
                                     "--partitions", 1, "--timeout", 30] + sec(b),
                          aws_env(who), timeout=90, check=check)


def produce(b, who, topic, check=True, count=5):
    return run_client_env("python", ["produce", "--bootstrap", b.iam_bootstrap, "--topic", topic,
                                     "--partitions", 1, "--count", count, "--start", 0,
                                     "--compression", "none"] + sec(b),
                          aws_env(who), timeout=120, check=check)


def refusal(b, since, code, pattern):
    rx = r"refused error=%s: %s" % (re.escape(code), pattern)
    line = b.wait_for_log(rx, since=since, timeout=10)
    assert line, "no refusal /%s/ in the broker log\n%s" % (rx, b.log_tail())
    return line


def test_cluster_policy_grants_an_identity_without_grants(broker):
    frank = boto(broker, "kafka", FRANK)
    code, msg, status = client_error(lambda: frank.get_bootstrap_brokers(ClusterArn=CLUSTER_ARN))
    assert (code, status) == ("AccessDeniedException", 403) and FRANK.principal in msg, msg
    put_policy(broker,
               cluster_statement("Allow", FRANK.principal, "kafka:GetBootstrapBrokers", CLUSTER_ARN, "Bootstrap"),
               cluster_statement("Allow", FRANK.principal, ["kafka-cluster:Connect", "kafka-cluster:DescribeCluster"],
                                 CLUSTER_ARN, "Connect"),
               # the account's root: every principal of the account, frank included
               cluster_statement("Allow", "arn:aws:iam::%s:root" % ACCOUNT,
                                 ["kafka-cluster:CreateTopic", "kafka-cluster:DescribeTopic",
                                  "kafka-cluster:WriteData"], topic_arn("frank-*"), "Topics"))
    try:
        r = frank.get_bootstrap_brokers(ClusterArn=CLUSTER_ARN)
        assert r["BootstrapBrokerStringSaslIam"].split(",")[0] == broker.iam_bootstrap, r
        create_topic(broker, FRANK, "frank-orders")
        produce(broker, FRANK, "frank-orders")
        # outside the cluster policy's topics: still nothing
        since = broker.log_size()
        assert create_topic(broker, FRANK, "other-orders", check=False).rc != 0
        refusal(broker, since, "TOPIC_AUTHORIZATION_FAILED(29)",
                re.escape("kafka-cluster:CreateTopic on %s: no statement allowed it (neither of the caller's "
                          "policies nor of the cluster policy)" % topic_arn("other-orders")))
    finally:
        delete_policy(broker)
    code, _, status = client_error(lambda: frank.get_bootstrap_brokers(ClusterArn=CLUSTER_ARN))
    assert (code, status) == ("AccessDeniedException", 403)
    since = broker.log_size()
    r = produce(broker, FRANK, "frank-orders", check=False)
    assert r.rc != 0, r.describe()
    assert broker.wait_for_log(r"kafka-cluster:Connect on %s: no statement allowed it" % re.escape(CLUSTER_ARN),
                               since=since), broker.log_tail()


def test_cluster_policy_deny_beats_identity_allow(broker):
    alice = boto(broker, "kafka", ALICE)
    alice.get_bootstrap_brokers(ClusterArn=CLUSTER_ARN)
    create_topic(broker, ALICE, "locked-1")
    put_policy(broker,
               cluster_statement("Deny", ALICE.principal, "kafka:GetBootstrapBrokers", CLUSTER_ARN, "NoBootstrap"),
               cluster_statement("Deny", ACCOUNT, "kafka-cluster:WriteData", topic_arn("locked-*"), "NoLocked"))
    try:
        for attempt in ("before", "after a restart"):  # the stored policy is in force from start-up
            since = broker.log_size()
            code, msg, status = client_error(lambda: alice.get_bootstrap_brokers(ClusterArn=CLUSTER_ARN))
            assert (code, status) == ("AccessDeniedException", 403), attempt
            assert msg == ("User: %s is not authorized to perform: kafka:GetBootstrapBrokers on resource: %s with "
                           "an explicit deny in a resource-based policy" % (ALICE.principal, CLUSTER_ARN)), msg
            assert broker.wait_for_log(r"AccessDeniedException: kafka:GetBootstrapBrokers denied by cluster policy "
                                       r"Statement\[0\] \(Sid NoBootstrap\)", since=since), broker.log_tail()
            alice.describe_cluster_v2(ClusterArn=CLUSTER_ARN)  # what the Deny does not name stays allowed
            since = broker.log_size()
            r = produce(broker, ALICE, "locked-1", check=False)
            assert r.rc != 0, r.describe()
            assert re.search(r"[Tt]opic authorization failed|TOPIC_AUTHORIZATION_FAILED", r.stderr), r.describe()
            line = refusal(broker, since, "TOPIC_AUTHORIZATION_FAILED(29)",
                           re.escape("kafka-cluster:WriteData on %s: denied by cluster policy Statement[1] "
                                     "(Sid NoLocked)" % topic_arn("locked-1")))
            assert "principal=IAM.%s" % ALICE.principal in line, line
            if attempt == "before":
                broker.restart()
                assert broker.wait_for_log(r"iam: cluster policy of %s in force" % re.escape(CLUSTER_ARN)), \
                    broker.log_tail()
    finally:
        delete_policy(broker)
    alice.get_bootstrap_brokers(ClusterArn=CLUSTER_ARN)
    produce(broker, ALICE, "locked-1", count=3)


def test_conditions_decide_kafka_calls(broker):
    vpc = boto(broker, "kafka", VPC)
    since = broker.log_size()
    # from 127.0.0.1: the loopback statement's IpAddress holds
    assert vpc.describe_cluster_v2(ClusterArn=CLUSTER_ARN)["ClusterInfo"]["ClusterArn"] == CLUSTER_ARN
    # ... and 10.0.0.0/8's does not: no statement allows it
    code, msg, status = client_error(lambda: vpc.get_bootstrap_brokers(ClusterArn=CLUSTER_ARN))
    assert (code, status) == ("AccessDeniedException", 403) and msg.endswith("on resource: %s" % CLUSTER_ARN), msg
    assert broker.wait_for_log(r"AccessDeniedException: kafka:GetBootstrapBrokers allowed by no statement of the "
                               r"caller's policies on", since=since), broker.log_tail()
    # aws:RequestedRegion is the signing region (us-east-1, the only one mskmock answers)
    code, _, status = client_error(lambda: vpc.list_clusters_v2())
    assert (code, status) == ("AccessDeniedException", 403)
    assert vpc.list_tags_for_resource(ResourceArn=CLUSTER_ARN)["Tags"] == {}

    # the same in a cluster policy: the IpAddress condition on its Allow decides for frank
    frank = boto(broker, "kafka", FRANK)
    put_policy(broker, dict(cluster_statement("Allow", FRANK.principal, "kafka:DescribeClusterV2", CLUSTER_ARN,
                                              "FromHere"),
                            Condition={"IpAddress": {"aws:SourceIp": ["127.0.0.0/8", "::1/128"]}}),
               dict(cluster_statement("Allow", FRANK.principal, "kafka:GetBootstrapBrokers", CLUSTER_ARN,
                                      "FromVpc"),
                    Condition={"IpAddress": {"aws:SourceIp": "10.0.0.0/8"}}))
    try:
        frank.describe_cluster_v2(ClusterArn=CLUSTER_ARN)
        code, _, status = client_error(lambda: frank.get_bootstrap_brokers(ClusterArn=CLUSTER_ARN))
        assert (code, status) == ("AccessDeniedException", 403)
    finally:
        delete_policy(broker)


@pytest.mark.parametrize("condition, words", [
    ({"StringEquals": {"aws:PrincipalOrgID": "o-1"}}, "the condition key aws:PrincipalOrgID is not evaluated"),
    ({"StringEqualsAnyCase": {"aws:SourceIp": "x"}}, "Condition operator StringEqualsAnyCase is not evaluated"),
    ({"IpAddress": {"aws:SourceIp": "10.0.0.0/40"}}, "is not an IP address or CIDR block"),
])
def test_conditions_mskmock_cannot_evaluate_are_refused(broker, condition, words):
    from botocore.exceptions import ClientError
    doc = policy(dict(cluster_statement("Allow", "*", "kafka:DescribeClusterV2", CLUSTER_ARN, "X"),
                      Condition=condition))
    with pytest.raises(ClientError) as e:
        boto(broker, "kafka").put_cluster_policy(ClusterArn=CLUSTER_ARN, Policy=json.dumps(doc))
    r = e.value.response
    assert (r["Error"]["Code"], r["ResponseMetadata"]["HTTPStatusCode"]) == ("BadRequestException", 400), r
    assert words in r["Error"]["Message"] and r.get("InvalidParameter") == "policy", r
    code, _, status = client_error(lambda: boto(broker, "kafka").get_cluster_policy(ClusterArn=CLUSTER_ARN))
    assert (code, status) == ("NotFoundException", 404)


def test_a_created_cluster_has_its_own_policy(broker):
    alice = boto(broker, "kafka", ALICE)
    arn = alice.create_cluster_v2(ClusterName="policy-own",
                                  Serverless={"VpcConfigs": [{"SubnetIds": ["subnet-0a1b2c3d"]}]})["ClusterArn"]
    try:
        alice.put_cluster_policy(ClusterArn=arn, Policy=json.dumps(policy(
            cluster_statement("Deny", ALICE.principal, "kafka:GetBootstrapBrokers", arn, "NotThisOne"))))
        code, msg, status = client_error(lambda: alice.get_bootstrap_brokers(ClusterArn=arn))
        assert (code, status) == ("AccessDeniedException", 403) and "resource-based policy" in msg, msg
        alice.get_bootstrap_brokers(ClusterArn=CLUSTER_ARN)  # the configured cluster has no policy
        code, _, status = client_error(lambda: alice.get_cluster_policy(ClusterArn=CLUSTER_ARN))
        assert (code, status) == ("NotFoundException", 404)
        assert "NotThisOne" in alice.get_cluster_policy(ClusterArn=arn)["Policy"]
    finally:
        alice.delete_cluster(ClusterArn=arn)
