"""The kafka control plane's v1 cluster operations on aws.port (docs/control-plane.md) with
aws-cli and boto3: DescribeCluster, ListClusters and ListKafkaVersions.

  1. a provisioned cluster: list-clusters and describe-cluster give the same ClusterInfo, parsed
     by botocore (CreationTime a datetime), with the facts DescribeClusterV2 gives (ARN, name,
     creation, currentVersion, tags, brokers, client authentications) and the v1 ones (Kafka
     version, a KRaft one: no ZooKeeper connect string; encryption in transit of the listeners);
     clusterNameFilter as a prefix; maxResults and nextToken refused outside what was handed out;
  2. ListKafkaVersions: the table, ascending, ACTIVE and DEPRECATED; paged by maxResults through
     botocore's paginator and aws-cli's; a token of another operation refused;
  3. Serverless through v1: ListClusters lists it not (ListClustersV2 does), DescribeCluster on
     its ARN is MSK's refusal of provisioned-only operations;
  4. refusals: an unknown ARN, a sub-resource still not served (not taken for DescribeCluster),
     kafka:DescribeCluster on the ARN and kafka:ListClusters / kafka:ListKafkaVersions on "*"
     decided by the caller's policies.

Two brokers for the module: provisioned (2 synthetic brokers) and Serverless (1).
"""

import datetime
import json
import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

import iam
from harness import running
from iam import ACCOUNT, REGION, AwsBroker, Identity, aws_env

pytestmark = pytest.mark.timeout(300)

EVERYTHING = ({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]},)
ALICE = Identity(iam.ALICE.access_key_id, iam.ALICE.secret_access_key, iam.ALICE.principal, policies=EVERYTHING)
CLUSTERS = "arn:aws:kafka:%s:%s:cluster/mskmock/*" % (REGION, ACCOUNT)
# describes through v2 only, and lists versions; List* on the clusters' ARNs covers no listing
ERIN = Identity("AKIAMSKMOCKERIN00005", "3r1n/SeCrEt+kEy/abcdefghij0123456789KLMN",
                "arn:aws:iam::%s:user/erin" % ACCOUNT,
                policies=({"Version": "2012-10-17", "Statement": [
                    {"Effect": "Allow", "Action": ["kafka:DescribeClusterV2", "kafka:List*"], "Resource": CLUSTERS},
                    {"Effect": "Allow", "Action": "kafka:ListKafkaVersions", "Resource": "*"}]},))
# describes and lists through v1, and is denied the versions
FRANK = Identity("AKIAMSKMOCKFRANK0006", "fr4nk/SeCrEt+kEy/abcdefghij0123456789KLM",
                 "arn:aws:iam::%s:user/frank" % ACCOUNT,
                 policies=({"Version": "2012-10-17", "Statement": [
                     {"Effect": "Allow", "Action": "kafka:DescribeCluster", "Resource": CLUSTERS},
                     {"Effect": "Allow", "Action": "kafka:ListClusters", "Resource": "*"},
                     {"Sid": "NoVersions", "Effect": "Deny", "Action": "kafka:ListKafkaVersions",
                      "Resource": "*"}]},))
KRAFT_VERSION = "3.8.x.kraft"  # the provisioned profile's kafka.version, 3.8


@pytest.fixture(scope="module")
def identities(tmp_path_factory):
    return iam.write_identities(tmp_path_factory.mktemp("aws-v1") / "identities.json",
                                identities=(ALICE, ERIN, FRANK), roles=())


@pytest.fixture(scope="module")
def provisioned(identities):
    with running(AwsBroker(identities, broker_count=2, config={"profile": "provisioned"})) as b:
        yield b


@pytest.fixture(scope="module")
def serverless(identities):
    with running(AwsBroker(identities, broker_count=1)) as b:
        yield b


def boto(b, identity=ALICE, validate=True):
    boto3 = pytest.importorskip("boto3")
    from botocore.config import Config
    return boto3.client("kafka", endpoint_url=b.aws_url, region_name=REGION,
                        aws_access_key_id=identity.access_key_id,
                        aws_secret_access_key=identity.secret_access_key,
                        config=Config(parameter_validation=validate))


def client_error(fn):
    """The botocore ClientError fn raises: (code, message, HTTP status, the parsed response)."""
    from botocore.exceptions import ClientError
    with pytest.raises(ClientError) as e:
        fn()
    r = e.value.response
    return r["Error"]["Code"], r["Error"]["Message"], r["ResponseMetadata"]["HTTPStatusCode"], r


def aws_cli():
    exe = Path(sys.executable).parent / "aws"
    if exe.exists():
        return str(exe)
    found = shutil.which("aws")
    if not found:
        pytest.skip("aws-cli is not installed (the awscli package of tests/integration/requirements.txt)")
    return found


def aws(b, *args, identity=ALICE, check=True):
    env = aws_env(identity)
    env["AWS_ENDPOINT_URL"] = b.aws_url
    p = subprocess.run([aws_cli(), "kafka", *map(str, args), "--output", "json"], env=env, capture_output=True,
                       text=True, timeout=60)
    if check:
        assert p.returncode == 0, "aws kafka %s: rc %d\n%s\n%s" % (" ".join(map(str, args)), p.returncode,
                                                                   p.stderr, b.log_tail())
        return json.loads(p.stdout) if p.stdout.strip() else None
    return p


def v2_cluster(b):
    return boto(b).list_clusters_v2()["ClusterInfoList"][0]


# -- 1. a provisioned cluster -----------------------------------------------------------------

def test_list_and_describe_awscli(provisioned):
    since = provisioned.log_size()
    out = aws(provisioned, "list-clusters")
    assert len(out["ClusterInfoList"]) == 1 and "NextToken" not in out, out
    c = out["ClusterInfoList"][0]
    v2 = v2_cluster(provisioned)
    assert c["ClusterArn"] == v2["ClusterArn"], (c, v2)
    assert (c["ClusterName"], c["State"], c["CurrentVersion"]) == ("mskmock", "ACTIVE", v2["CurrentVersion"]), c
    assert c["NumberOfBrokerNodes"] == 2 == v2["Provisioned"]["NumberOfBrokerNodes"], c
    assert c["ClientAuthentication"] == v2["Provisioned"]["ClientAuthentication"] == {
        "Sasl": {"Iam": {"Enabled": True}}, "Unauthenticated": {"Enabled": True}}, c
    assert c["CurrentBrokerSoftwareInfo"] == {"KafkaVersion": KRAFT_VERSION}, c
    # the IAM listener is TLS, the plaintext one not
    assert c["EncryptionInfo"] == {"EncryptionInTransit": {"ClientBroker": "TLS_PLAINTEXT"}}, c
    assert (c["EnhancedMonitoring"], c["StorageMode"]) == ("DEFAULT", "LOCAL"), c
    # KRaft: no ZooKeeper; no VPC, no instance type, no KMS key made up
    assert "ZookeeperConnectString" not in c and "ZookeeperConnectStringTls" not in c, c
    assert c["BrokerNodeGroupInfo"] == {"ClientSubnets": [], "SecurityGroups": [], "BrokerAZDistribution": "DEFAULT"}, c
    assert aws(provisioned, "describe-cluster", "--cluster-arn", c["ClusterArn"]) == {"ClusterInfo": c}
    text = provisioned.log_since(since)
    assert re.search(r"aws: .* GET /v1/clusters 200 ListClusters clusters=1", text), text
    assert re.search(r"aws: .* GET /v1/clusters/\S+ 200 DescribeCluster", text), text


def test_boto3_shapes_and_tags(provisioned):
    kafka = boto(provisioned)
    arn = v2_cluster(provisioned)["ClusterArn"]
    kafka.tag_resource(ResourceArn=arn, Tags={"team": "payments"})
    try:
        info = kafka.describe_cluster(ClusterArn=arn)["ClusterInfo"]
        v2 = kafka.describe_cluster_v2(ClusterArn=arn)["ClusterInfo"]
        assert isinstance(info["CreationTime"], datetime.datetime) and info["CreationTime"] == v2["CreationTime"]
        age = datetime.datetime.now(datetime.timezone.utc) - info["CreationTime"]
        assert datetime.timedelta(0) <= age < datetime.timedelta(minutes=10), info["CreationTime"]
        assert info["Tags"] == v2["Tags"] == {"team": "payments"}, (info, v2)
        assert kafka.list_clusters()["ClusterInfoList"] == [info]
        # the version the cluster reports is one MSK lists, and ACTIVE
        versions = {v["Version"]: v["Status"] for v in kafka.list_kafka_versions()["KafkaVersions"]}
        assert versions[info["CurrentBrokerSoftwareInfo"]["KafkaVersion"]] == "ACTIVE", versions
    finally:
        kafka.untag_resource(ResourceArn=arn, TagKeys=["team"])


@pytest.mark.parametrize("prefix, listed", [("", True), ("msk", True), ("mskmock", True), ("mskmock-", False),
                                            ("other", False), ("MSK", False)])
def test_name_filter_is_a_prefix(provisioned, prefix, listed):
    args = ("--cluster-name-filter", prefix) if prefix else ()
    out = aws(provisioned, "list-clusters", *args)
    assert len(out["ClusterInfoList"]) == (1 if listed else 0), out


def test_paging_refusals(provisioned):
    kafka = boto(provisioned)
    assert len(kafka.list_clusters(MaxResults=1)["ClusterInfoList"]) == 1
    assert kafka.list_clusters(MaxResults=100)["ClusterInfoList"]
    code, msg, status, r = client_error(lambda: kafka.list_clusters(MaxResults=101))
    assert (code, status, r.get("InvalidParameter")) == ("BadRequestException", 400, "maxResults"), r
    assert msg == "maxResults must be between 1 and 100.", msg
    # botocore refuses 0 on its own: sent without its check
    code, _, status, r = client_error(lambda: boto(provisioned, validate=False).list_clusters(MaxResults=0))
    assert (code, status, r.get("InvalidParameter")) == ("BadRequestException", 400, "maxResults"), r
    # one cluster fits one page: no token was ever handed out, so none is taken
    for token in ("bogus", "ListClusters.1", "ListClusters.0", "ListKafkaVersions.1"):
        code, msg, status, r = client_error(lambda: kafka.list_clusters(NextToken=token))
        assert (code, status, r.get("InvalidParameter")) == ("BadRequestException", 400, "nextToken"), (token, r)
        assert msg == "The nextToken is not valid.", msg


# -- 2. ListKafkaVersions ---------------------------------------------------------------------

def version_key(v):
    return [int(x) if x.isdigit() else x for x in v.split(".")]


def test_list_kafka_versions(provisioned):
    since = provisioned.log_size()
    out = aws(provisioned, "list-kafka-versions")
    versions = out["KafkaVersions"]
    assert "NextToken" not in out, out
    names = [v["Version"] for v in versions]
    assert len(names) == len(set(names)) and names == sorted(names, key=version_key), names
    status = {v["Version"]: v["Status"] for v in versions}
    assert set(status.values()) == {"ACTIVE", "DEPRECATED"}, status
    # from the first MSK offered to 4.x, KRaft only from 4.0 on
    assert names[0] == "1.1.1" and status["1.1.1"] == "DEPRECATED", names
    assert status["2.8.2.tiered"] == status["3.5.1"] == "DEPRECATED", status
    for v in ("3.8.x", "3.8.x.kraft", "3.9.x", "3.9.x.kraft", "4.0.x.kraft", "4.1.x.kraft"):
        assert status[v] == "ACTIVE", (v, status)
    assert "4.0.x" not in status and "4.1.x" not in status, status
    assert re.search(r"GET /v1/kafka-versions 200 ListKafkaVersions versions=%d" % len(names),
                     provisioned.log_since(since)), provisioned.log_tail()


def test_list_kafka_versions_paged(provisioned):
    kafka = boto(provisioned)
    everything = kafka.list_kafka_versions()["KafkaVersions"]
    first = kafka.list_kafka_versions(MaxResults=10)
    assert first["KafkaVersions"] == everything[:10] and first["NextToken"], first
    second = kafka.list_kafka_versions(MaxResults=10, NextToken=first["NextToken"])
    assert second["KafkaVersions"] == everything[10:20], second
    pages = list(kafka.get_paginator("list_kafka_versions").paginate(PaginationConfig={"PageSize": 7}))
    assert all(len(p["KafkaVersions"]) <= 7 for p in pages) and len(pages) == -(-len(everything) // 7), pages
    assert [v for p in pages for v in p["KafkaVersions"]] == everything
    assert "NextToken" not in pages[-1], pages[-1]
    # aws-cli pages with --page-size and gives them back as one list
    assert aws(provisioned, "list-kafka-versions", "--page-size", 5)["KafkaVersions"] == everything
    last = kafka.list_kafka_versions(MaxResults=100)
    assert last["KafkaVersions"] == everything and "NextToken" not in last, last
    # a token of another operation, past the end, or made up
    for token in ("ListClusters.10", "ListKafkaVersions.%d" % len(everything), "ListKafkaVersions.010", "x"):
        code, _, status, r = client_error(lambda: kafka.list_kafka_versions(NextToken=token))
        assert (code, status, r.get("InvalidParameter")) == ("BadRequestException", 400, "nextToken"), (token, r)
    code, _, status, r = client_error(lambda: kafka.list_kafka_versions(MaxResults=101))
    assert (code, status, r.get("InvalidParameter")) == ("BadRequestException", 400, "maxResults"), r


# -- 3. Serverless through v1 -----------------------------------------------------------------

def test_serverless_not_listed_by_v1(serverless):
    kafka = boto(serverless)
    assert kafka.list_clusters()["ClusterInfoList"] == []
    assert aws(serverless, "list-clusters", "--cluster-name-filter", "msk") == {"ClusterInfoList": []}
    assert [c["ClusterType"] for c in kafka.list_clusters_v2()["ClusterInfoList"]] == ["SERVERLESS"]
    # a filter or token is still checked on an empty list
    code, _, status, r = client_error(lambda: kafka.list_clusters(NextToken="ListClusters.1"))
    assert (code, status, r.get("InvalidParameter")) == ("BadRequestException", 400, "nextToken"), r
    assert kafka.list_kafka_versions()["KafkaVersions"]


def test_serverless_describe_refused(serverless):
    arn = v2_cluster(serverless)["ClusterArn"]
    assert arn.endswith("-s1"), arn
    since = serverless.log_size()
    code, msg, status, r = client_error(lambda: boto(serverless).describe_cluster(ClusterArn=arn))
    assert (code, status) == ("BadRequestException", 400), r
    assert msg == "This operation cannot be performed on serverless clusters.", msg
    p = aws(serverless, "describe-cluster", "--cluster-arn", arn, check=False)
    assert p.returncode != 0 and "(BadRequestException) when calling the DescribeCluster operation: This operation " \
        "cannot be performed on serverless clusters." in p.stderr, p.stderr
    assert serverless.wait_for_log(r"GET /v1/clusters/\S+ 400 BadRequestException: This operation cannot be "
                                   r"performed on serverless clusters", since=since), serverless.log_tail()


# -- 4. refusals ------------------------------------------------------------------------------

def test_unknown_cluster_and_sub_resources(provisioned):
    kafka = boto(provisioned)
    other = "arn:aws:kafka:%s:%s:cluster/other/%s-3" % (REGION, ACCOUNT, uuid.uuid4())
    code, msg, status, r = client_error(lambda: kafka.describe_cluster(ClusterArn=other))
    assert (code, status, r.get("InvalidParameter")) == ("NotFoundException", 404, "clusterArn"), r
    assert other in msg, msg
    # a sub-resource of a cluster's ARN is not DescribeCluster: still answered as not served
    arn = v2_cluster(provisioned)["ClusterArn"]
    since = provisioned.log_size()
    code, _, status, _ = client_error(lambda: kafka.list_cluster_operations(ClusterArn=arn))
    assert (code, status) == ("UnknownOperationException", 404)
    assert provisioned.wait_for_log(r"kafka:ListClusterOperations is not served by mskmock yet", since=since)


def test_policies_decide(provisioned):
    arn = v2_cluster(provisioned)["ClusterArn"]
    since = provisioned.log_size()
    erin, frank = boto(provisioned, ERIN), boto(provisioned, FRANK)
    # erin: DescribeClusterV2 but not DescribeCluster on the ARN; List* on the ARNs covers no listing
    assert erin.describe_cluster_v2(ClusterArn=arn)["ClusterInfo"]["ClusterArn"] == arn
    code, msg, status, _ = client_error(lambda: erin.describe_cluster(ClusterArn=arn))
    assert (code, status) == ("AccessDeniedException", 403), msg
    assert msg == "User: %s is not authorized to perform: kafka:DescribeCluster on resource: %s" % (ERIN.principal, arn)
    code, msg, status, _ = client_error(lambda: erin.list_clusters())
    assert (code, status) == ("AccessDeniedException", 403), msg
    assert msg == "User: %s is not authorized to perform: kafka:ListClusters on resource: *" % ERIN.principal
    assert erin.list_kafka_versions()["KafkaVersions"]
    # frank: v1 describe and list, versions denied
    assert frank.describe_cluster(ClusterArn=arn)["ClusterInfo"]["ClusterArn"] == arn
    assert [c["ClusterArn"] for c in frank.list_clusters()["ClusterInfoList"]] == [arn]
    code, msg, status, _ = client_error(lambda: frank.list_kafka_versions())
    assert (code, status) == ("AccessDeniedException", 403), msg
    assert msg == ("User: %s is not authorized to perform: kafka:ListKafkaVersions on resource: * with an explicit "
                   "deny in an identity-based policy" % FRANK.principal), msg
    # decided before the cluster is looked up
    other = "arn:aws:kafka:%s:%s:cluster/other/%s-3" % (REGION, ACCOUNT, uuid.uuid4())
    code, _, status, _ = client_error(lambda: erin.describe_cluster(ClusterArn=other))
    assert (code, status) == ("AccessDeniedException", 403)
    text = provisioned.log_since(since)
    assert "AccessDeniedException: kafka:ListClusters allowed by no statement of the caller's policies on *" in text, text
    assert re.search(r"AccessDeniedException: kafka:ListKafkaVersions denied by \S+identities\.json: "
                     r"identities\[2\]\.policies\[0\] Statement\[2\] \(Sid NoVersions\) on \*", text), text


def test_still_running(provisioned, serverless):
    for b in (provisioned, serverless):
        b.assert_alive()
