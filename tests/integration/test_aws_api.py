"""The AWS APIs on aws.port (issue 34; docs/control-plane.md) with real clients: aws-cli and
boto3 from PyPI, and confluent-kafka with the official MSK IAM signer on the Kafka side.

  1. STS: get-caller-identity with a long-term key of the identities file (aws-cli and boto3);
     AssumeRole of a role of the file, then get-caller-identity and an IAM produce/consume on
     the Kafka IAM listener with the assumed credentials;
  2. the kafka control plane: list-clusters-v2, describe-cluster-v2 and get-bootstrap-brokers
     give the addresses a Kafka client then uses; list-nodes refused on Serverless; an unknown
     cluster ARN; an operation MSK has and mskmock does not serve yet; tags on the cluster
     (aws-cli and boto3: tag, list, untag, AWS's tag rules, another ARN, kafka:*Tag* refused by
     the caller's policies, kept across a restart and a kill -9); cluster policies (put with
     currentVersion, get, delete, documents refused, kept across a restart; how they decide:
     test_aws_policy.py);
  3. refusals as AWS gives them, each with a log line saying why: unsigned, wrong secret,
     unknown key, a clock 10 minutes off either way, expired assumed credentials (the admin
     API's expire: AssumeRole's 900 s floor is too long to wait for), a missing session token,
     AssumeRole by a caller whose policies do not allow it, of an unknown role, or outside
     900 s .. the role's max_session_duration; kafka:* and sts:AssumeRole decided by the
     caller's policies (allowed, implicitly and explicitly denied).

One broker for the module (3 synthetic brokers, Serverless profile).
"""

import datetime
import hashlib
import hmac
import http.client
import json
import re
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from pathlib import Path

import pytest

import iam
from harness import running
from iam import ACCOUNT, REGION, AwsBroker, Identity, Role, aws_env, run_client_env

pytestmark = pytest.mark.timeout(300)

# The file gives policies (carol's, dave's), so under iam.authorization.default=auto an entry
# without any is allowed nothing, as on MSK: alice and the role are given everything.
EVERYTHING = ({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]},)
ALICE = Identity(iam.ALICE.access_key_id, iam.ALICE.secret_access_key, iam.ALICE.principal, policies=EVERYTHING)
ROLE = Role(iam.ROLE.name, iam.ROLE.arn, iam.ROLE.session_name, policies=EVERYTHING)
# an identity whose policies grant the Kafka data plane only: the control plane and AssumeRole
# are refused to it
CAROL = Identity("AKIAMSKMOCKCAROL0003", "c4r0l/SeCrEt+kEy/abcdefghij0123456789KLMN",
                 "arn:aws:iam::%s:user/carol" % ACCOUNT,
                 policies=({"Version": "2012-10-17",
                            "Statement": [{"Effect": "Allow", "Action": "kafka-cluster:*",
                                           "Resource": "*"}]},))
# one whose policies name control-plane actions: some allowed, one denied
DAVE = Identity("AKIAMSKMOCKDAVE00004", "d4v3/SeCrEt+kEy/abcdefghij0123456789KLMNO",
                "arn:aws:iam::%s:user/dave" % ACCOUNT,
                policies=({"Version": "2012-10-17", "Statement": [
                    {"Effect": "Allow", "Action": "sts:AssumeRole", "Resource": ROLE.arn},
                    {"Effect": "Allow", "Action": "kafka:ListClustersV2", "Resource": "*"},
                    {"Effect": "Allow", "Action": ["kafka:Describe*", "kafka:GetBootstrapBrokers"],
                     "Resource": "arn:aws:kafka:%s:%s:cluster/mskmock/*" % (REGION, ACCOUNT)},
                    {"Sid": "NoBootstrap", "Effect": "Deny", "Action": "kafka:GetBootstrapBrokers",
                     "Resource": "*"}]},))
UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    ids = iam.write_identities(tmp_path_factory.mktemp("aws") / "identities.json",
                               identities=(ALICE, CAROL, DAVE), roles=(ROLE,))
    with running(AwsBroker(ids, broker_count=3)) as b:
        yield b


def boto(b, service, identity=ALICE, secret=None, token=None):
    boto3 = pytest.importorskip("boto3")
    return boto3.client(service, endpoint_url=b.aws_url, region_name=REGION,
                        aws_access_key_id=identity.access_key_id,
                        aws_secret_access_key=secret or identity.secret_access_key,
                        aws_session_token=token or identity.session_token)


def client_error(fn):
    """The botocore ClientError fn raises: (code, message, HTTP status, response headers)."""
    from botocore.exceptions import ClientError
    with pytest.raises(ClientError) as e:
        fn()
    r = e.value.response
    return (r["Error"]["Code"], r["Error"]["Message"], r["ResponseMetadata"]["HTTPStatusCode"],
            r["ResponseMetadata"]["HTTPHeaders"])


def aws_cli():
    """aws-cli from the test environment (tests/integration/requirements.txt)."""
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
    p = subprocess.run([aws_cli(), *map(str, args), "--output", "json"], env=env, capture_output=True,
                       text=True, timeout=60)
    if check:
        assert p.returncode == 0, "aws %s: rc %d\n%s\n%s" % (" ".join(map(str, args)), p.returncode,
                                                             p.stderr, b.log_tail())
        return json.loads(p.stdout) if p.stdout.strip() else None
    return p


def assumed(b, session="it-session", duration=900):
    r = boto(b, "sts").assume_role(RoleArn=ROLE.arn, RoleSessionName=session, DurationSeconds=duration)
    c = r["Credentials"]
    ident = Identity(c["AccessKeyId"], c["SecretAccessKey"], r["AssumedRoleUser"]["Arn"],
                     session_token=c["SessionToken"])
    return r, ident


# -- 1. STS ---------------------------------------------------------------------------------

def test_get_caller_identity_awscli(broker):
    since = broker.log_size()
    out = aws(broker, "sts", "get-caller-identity")
    assert out["Arn"] == ALICE.principal and out["Account"] == ACCOUNT, out
    assert re.fullmatch(r"AIDA[A-Z2-7]{17}", out["UserId"]), out
    line = broker.wait_for_log(r"aws: .* POST / 200 GetCallerIdentity", since=since)
    assert line and "principal=%s" % ALICE.principal in line, broker.log_tail()


def test_get_caller_identity_boto3(broker):
    r = boto(broker, "sts").get_caller_identity()
    assert (r["Arn"], r["Account"]) == (ALICE.principal, ACCOUNT), r
    assert re.fullmatch(UUID, r["ResponseMetadata"]["RequestId"]), r
    # the same caller, the same id
    assert r["UserId"] == boto(broker, "sts").get_caller_identity()["UserId"]


def test_assume_role_then_kafka_over_iam(broker):
    """AssumeRole's credentials work on this endpoint and on the Kafka IAM listener, and the
    bootstrap string the control plane gives is the one the Kafka client uses."""
    r, ident = assumed(broker, "it-produce")
    principal = "arn:aws:sts::%s:assumed-role/%s/it-produce" % (ACCOUNT, ROLE.name)
    assert r["AssumedRoleUser"]["Arn"] == principal, r
    assert re.fullmatch(r"AROA[A-Z2-7]{17}:it-produce", r["AssumedRoleUser"]["AssumedRoleId"]), r
    c = r["Credentials"]
    assert re.fullmatch(r"ASIA[A-Z2-7]{16}", c["AccessKeyId"]), c
    left = (c["Expiration"] - datetime.datetime.now(datetime.timezone.utc)).total_seconds()
    assert 880 <= left <= 900, c["Expiration"]
    assert boto(broker, "sts", ident).get_caller_identity()["Arn"] == principal
    assert aws(broker, "sts", "get-caller-identity", identity=ident)["Arn"] == principal

    kafka = boto(broker, "kafka", ident)
    arn = kafka.list_clusters_v2()["ClusterInfoList"][0]["ClusterArn"]
    bootstrap = kafka.get_bootstrap_brokers(ClusterArn=arn)["BootstrapBrokerStringSaslIam"]
    assert bootstrap.split(",") == ["127.0.0.1:%d" % (broker.iam_port + i) for i in range(3)], bootstrap

    since = broker.log_size()
    env = aws_env(ident)
    common = ["--bootstrap", bootstrap, "--topic", "assumed", "--partitions", 3,
              "--security-protocol", "SASL_SSL", "--mechanism", "OAUTHBEARER", "--region", REGION,
              "--ca", broker.ca_path]
    assert run_client_env("python", ["create-topic"] + common, env, timeout=90).json == {"created": "assumed"}
    assert run_client_env("python", ["produce"] + common + ["--count", 100, "--compression", "none"], env).json == {"produced": 100}
    assert run_client_env("python", ["consume"] + common + ["--count", 100], env).json["consumed"] == 100
    text = broker.log_since(since)
    assert re.search(r"authenticated as IAM\.%s via OAUTHBEARER" % re.escape(principal), text), broker.log_tail()
    assert "refused" not in text, text


# -- 2. the kafka control plane --------------------------------------------------------------

def test_list_describe_bootstrap_awscli(broker):
    out = aws(broker, "kafka", "list-clusters-v2")
    assert len(out["ClusterInfoList"]) == 1, out
    c = out["ClusterInfoList"][0]
    arn = c["ClusterArn"]
    assert re.fullmatch(r"arn:aws:kafka:%s:%s:cluster/mskmock/%s-s1" % (REGION, ACCOUNT, UUID), arn), arn
    assert (c["ClusterName"], c["ClusterType"], c["State"]) == ("mskmock", "SERVERLESS", "ACTIVE"), c
    assert c["Serverless"]["ClientAuthentication"] == {"Sasl": {"Iam": {"Enabled": True}}}, c
    assert aws(broker, "kafka", "describe-cluster-v2", "--cluster-arn", arn)["ClusterInfo"] == c
    assert aws(broker, "kafka", "get-bootstrap-brokers", "--cluster-arn", arn) == {
        "BootstrapBrokerStringSaslIam": ",".join("127.0.0.1:%d" % (broker.iam_port + i) for i in range(3))}
    # the filters
    assert aws(broker, "kafka", "list-clusters-v2", "--cluster-type-filter", "SERVERLESS")["ClusterInfoList"]
    assert aws(broker, "kafka", "list-clusters-v2", "--cluster-name-filter", "msk")["ClusterInfoList"]
    assert not aws(broker, "kafka", "list-clusters-v2", "--cluster-type-filter", "PROVISIONED")["ClusterInfoList"]
    assert not aws(broker, "kafka", "list-clusters-v2", "--cluster-name-filter", "other")["ClusterInfoList"]


def test_list_nodes_refused_on_serverless(broker):
    arn = boto(broker, "kafka").list_clusters_v2()["ClusterInfoList"][0]["ClusterArn"]
    p = aws(broker, "kafka", "list-nodes", "--cluster-arn", arn, check=False)
    assert p.returncode != 0 and "(BadRequestException) when calling the ListNodes operation: This operation " \
        "cannot be performed on serverless clusters." in p.stderr, p.stderr


def test_unknown_cluster_not_found(broker):
    kafka = boto(broker, "kafka")
    arn = "arn:aws:kafka:%s:%s:cluster/other/%s-s1" % (REGION, ACCOUNT, uuid.uuid4())
    code, msg, status, headers = client_error(lambda: kafka.describe_cluster_v2(ClusterArn=arn))
    assert (code, status) == ("NotFoundException", 404) and arn in msg, msg
    assert headers["x-amzn-errortype"] == "NotFoundException", headers
    code, _, status, _ = client_error(lambda: kafka.get_bootstrap_brokers(ClusterArn=arn))
    assert (code, status) == ("NotFoundException", 404)


def test_operation_not_served_yet(broker):
    since = broker.log_size()
    code, _, status, _ = client_error(lambda: boto(broker, "kafka").list_configurations())
    assert (code, status) == ("UnknownOperationException", 404)
    assert broker.wait_for_log(r"kafka:ListConfigurations is not served by mskmock yet", since=since), \
        broker.log_tail()


def cluster_arn(b):
    return boto(b, "kafka").list_clusters_v2()["ClusterInfoList"][0]["ClusterArn"]


def test_tags_boto3(broker):
    kafka = boto(broker, "kafka")
    arn = cluster_arn(broker)
    since = broker.log_size()
    kafka.tag_resource(ResourceArn=arn, Tags={"team": "payments", "env": "dev", "empty": ""})
    kafka.tag_resource(ResourceArn=arn, Tags={"env": "prod"})  # the last value wins
    tags = {"team": "payments", "env": "prod", "empty": ""}
    assert kafka.list_tags_for_resource(ResourceArn=arn)["Tags"] == tags
    assert kafka.describe_cluster_v2(ClusterArn=arn)["ClusterInfo"]["Tags"] == tags
    assert kafka.list_clusters_v2()["ClusterInfoList"][0]["Tags"] == tags
    # untagging a key that is not there is no error, as on AWS
    r = kafka.untag_resource(ResourceArn=arn, TagKeys=["team", "empty", "absent"])
    assert r["ResponseMetadata"]["HTTPStatusCode"] == 204
    assert kafka.list_tags_for_resource(ResourceArn=arn)["Tags"] == {"env": "prod"}
    kafka.untag_resource(ResourceArn=arn, TagKeys=["env"])
    assert kafka.list_tags_for_resource(ResourceArn=arn)["Tags"] == {}
    text = broker.log_since(since)
    assert "TagResource 3 tag(s), 3 now" in text and "UntagResource 3 key(s)" in text, text


def test_tags_awscli(broker):
    arn = cluster_arn(broker)
    assert aws(broker, "kafka", "tag-resource", "--resource-arn", arn, "--tags", "owner=ops,tier=gold") is None
    assert aws(broker, "kafka", "list-tags-for-resource", "--resource-arn", arn) == {
        "Tags": {"owner": "ops", "tier": "gold"}}
    assert aws(broker, "kafka", "describe-cluster-v2", "--cluster-arn", arn)["ClusterInfo"]["Tags"] == {
        "owner": "ops", "tier": "gold"}
    aws(broker, "kafka", "untag-resource", "--resource-arn", arn, "--tag-keys", "owner", "tier")
    assert aws(broker, "kafka", "list-tags-for-resource", "--resource-arn", arn) == {"Tags": {}}


@pytest.mark.parametrize("tags, field, words", [
    ({"k%02d" % i: "v" for i in range(51)}, "tags", "at most 50 tags"),
    ({"k" * 129: "v"}, "tags", "1 to 128 characters"),
    ({"": "v"}, "tags", "1 to 128 characters"),
    ({"k": "v" * 257}, "tags", "0 to 256 characters"),
    ({"aws:owner": "me"}, "tags", "reserved for AWS"),
])
def test_bad_tags(broker, tags, field, words):
    kafka = boto(broker, "kafka")
    arn = cluster_arn(broker)
    kafka.tag_resource(ResourceArn=arn, Tags={"keep": "me"})
    from botocore.exceptions import ClientError
    with pytest.raises(ClientError) as e:
        kafka.tag_resource(ResourceArn=arn, Tags=tags)
    r = e.value.response
    assert (r["Error"]["Code"], r["ResponseMetadata"]["HTTPStatusCode"]) == ("BadRequestException", 400), r
    assert words in r["Error"]["Message"] and r.get("InvalidParameter") == field, r
    # refused whole: nothing of it stored
    assert kafka.list_tags_for_resource(ResourceArn=arn)["Tags"] == {"keep": "me"}
    kafka.untag_resource(ResourceArn=arn, TagKeys=["keep"])


def test_bad_tag_requests(broker):
    kafka = boto(broker, "kafka")
    arn = cluster_arn(broker)
    # the 50 are counted with the tags the cluster has
    kafka.tag_resource(ResourceArn=arn, Tags={"k%02d" % i: "v" for i in range(50)})
    code, msg, status, _ = client_error(lambda: kafka.tag_resource(ResourceArn=arn, Tags={"one": "more"}))
    assert (code, status) == ("BadRequestException", 400) and "at most 50 tags" in msg, msg
    kafka.tag_resource(ResourceArn=arn, Tags={"k00": "again"})  # an existing key is no new tag
    kafka.untag_resource(ResourceArn=arn, TagKeys=["k%02d" % i for i in range(50)])
    for keys, words in ((["aws:x"], "reserved for AWS"), (["k" * 129], "1 to 128 characters")):
        code, msg, status, _ = client_error(lambda: kafka.untag_resource(ResourceArn=arn, TagKeys=keys))
        assert (code, status) == ("BadRequestException", 400) and words in msg, msg
    # a body that is not the TagResource shape, and UntagResource without keys, signed by hand
    path = "/v1/tags/" + urllib.parse.quote(arn, safe="")
    canonical = "/".join(urllib.parse.quote(seg, safe="-_.~") for seg in path.split("/"))  # encoded twice

    def signed(method, body):
        when = datetime.datetime.now(datetime.timezone.utc)
        return http_call(broker, method, path, body.encode(),
                         sigv4_headers(broker, ALICE, "kafka", method, canonical, body, when))

    for body, field in (('{"tags": {"a": 1}}', "tags"), ('{"tags": {}}', "tags"), ('{"tags": []}', "tags"),
                        ('{"tags": {"a": "b"}, "extra": 1}', "extra"), ('not json', None)):
        status, headers, text = signed("POST", body)
        assert status == 400 and headers["x-amzn-errortype"] == "BadRequestException", (body, text)
        assert json.loads(text).get("invalidParameter") == field, (body, text)
    status, headers, text = signed("DELETE", "")
    assert status == 400 and json.loads(text)["invalidParameter"] == "tagKeys", text
    assert kafka.list_tags_for_resource(ResourceArn=arn)["Tags"] == {}


def test_tags_of_another_arn_not_found(broker):
    kafka = boto(broker, "kafka")
    other = "arn:aws:kafka:%s:%s:cluster/other/%s-s1" % (REGION, ACCOUNT, uuid.uuid4())
    for call in (lambda: kafka.tag_resource(ResourceArn=other, Tags={"a": "b"}),
                 lambda: kafka.untag_resource(ResourceArn=other, TagKeys=["a"]),
                 lambda: kafka.list_tags_for_resource(ResourceArn=other)):
        code, msg, status, _ = client_error(call)
        assert (code, status) == ("NotFoundException", 404) and other in msg, msg


def test_tags_unauthorized(broker):
    arn = cluster_arn(broker)
    since = broker.log_size()
    for who in (CAROL, DAVE):  # carol: kafka-cluster:* only; dave: no kafka:*Tag* action
        kafka = boto(broker, "kafka", who)
        for op, call in (("TagResource", lambda: kafka.tag_resource(ResourceArn=arn, Tags={"a": "b"})),
                         ("UntagResource", lambda: kafka.untag_resource(ResourceArn=arn, TagKeys=["a"])),
                         ("ListTagsForResource", lambda: kafka.list_tags_for_resource(ResourceArn=arn))):
            code, msg, status, _ = client_error(call)
            assert (code, status) == ("AccessDeniedException", 403), msg
            assert msg == "User: %s is not authorized to perform: kafka:%s on resource: %s" % (
                who.principal, op, arn), msg
    assert boto(broker, "kafka").list_tags_for_resource(ResourceArn=arn)["Tags"] == {}
    assert "AccessDeniedException: kafka:TagResource allowed by no statement" in broker.log_since(since)


def test_tags_survive_a_restart(tmp_path):
    ids = iam.write_identities(tmp_path / "identities.json", identities=(ALICE,), roles=())
    b = AwsBroker(ids, broker_count=1)
    b.start()
    try:
        arn = cluster_arn(b)
        boto(b, "kafka").tag_resource(ResourceArn=arn, Tags={"env": "dev", "team": "payments"})
        boto(b, "kafka").untag_resource(ResourceArn=arn, TagKeys=["team"])
        b.restart()
        assert cluster_arn(b) == arn
        assert boto(b, "kafka").list_tags_for_resource(ResourceArn=arn)["Tags"] == {"env": "dev"}
        assert boto(b, "kafka").describe_cluster_v2(ClusterArn=arn)["ClusterInfo"]["Tags"] == {"env": "dev"}
        b.kill9()  # committed before answered: kill -9 loses nothing
        assert boto(b, "kafka").list_tags_for_resource(ResourceArn=arn)["Tags"] == {"env": "dev"}
        b.assert_alive()
        b.stop(check=True)
    finally:
        b.cleanup()


def cluster_policy(arn, principal="arn:aws:iam::%s:root" % ACCOUNT, **extra):
    st = {"Sid": "CrossAccount", "Effect": "Allow", "Principal": {"AWS": principal},
          "Action": ["kafka:CreateVpcConnection", "kafka:GetBootstrapBrokers", "kafka:DescribeClusterV2"],
          "Resource": arn}
    st.update(extra)
    return json.dumps({"Version": "2012-10-17", "Statement": [st]})


def test_cluster_policy_boto3(broker):
    kafka = boto(broker, "kafka")
    arn = cluster_arn(broker)
    code, _, status, _ = client_error(lambda: kafka.get_cluster_policy(ClusterArn=arn))
    assert (code, status) == ("NotFoundException", 404)
    since = broker.log_size()
    doc = cluster_policy(arn)
    v1 = kafka.put_cluster_policy(ClusterArn=arn, Policy=doc)["CurrentVersion"]
    assert re.fullmatch(r"[A-Z0-9]{14}", v1), v1
    assert broker.wait_for_log(r"PutClusterPolicy version=%s \(in force\)" % v1, since=since), broker.log_tail()
    r = kafka.get_cluster_policy(ClusterArn=arn)
    assert (r["CurrentVersion"], r["Policy"]) == (v1, doc), r
    # currentVersion: the version the caller read, or refused
    code, msg, status, _ = client_error(lambda: kafka.put_cluster_policy(ClusterArn=arn, Policy=doc,
                                                                         CurrentVersion="NOTTHEVERSION1"))
    assert (code, status) == ("BadRequestException", 400) and "currentVersion" in msg, msg
    v2 = kafka.put_cluster_policy(ClusterArn=arn, Policy=cluster_policy(arn, "*"), CurrentVersion=v1)["CurrentVersion"]
    assert v2 != v1 and kafka.get_cluster_policy(ClusterArn=arn)["CurrentVersion"] == v2
    kafka.delete_cluster_policy(ClusterArn=arn)
    code, _, status, _ = client_error(lambda: kafka.get_cluster_policy(ClusterArn=arn))
    assert (code, status) == ("NotFoundException", 404)


@pytest.mark.parametrize("doc, words", [
    ("not json", "not a JSON object"),
    ("[]", "not a JSON object"),
    (json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "kafka:*",
                                                         "Resource": "*"}]}), "Principal"),
    ("BAD_EFFECT", "Effect"),
    ("CONDITION", "Condition"),
])
def test_bad_cluster_policy(broker, doc, words):
    kafka = boto(broker, "kafka")
    arn = cluster_arn(broker)
    if doc == "BAD_EFFECT":
        doc = cluster_policy(arn, Effect="Maybe")
    elif doc == "CONDITION":
        # refused on the data plane's actions, as in identity policies (and aws:PrincipalOrgID is a
        # key mskmock does not know)
        doc = cluster_policy(arn, Action="kafka-cluster:Connect",
                             Condition={"StringEquals": {"aws:PrincipalOrgID": "o-1"}})
    from botocore.exceptions import ClientError
    with pytest.raises(ClientError) as e:
        kafka.put_cluster_policy(ClusterArn=arn, Policy=doc)
    r = e.value.response
    assert (r["Error"]["Code"], r["ResponseMetadata"]["HTTPStatusCode"]) == ("BadRequestException", 400), r
    assert words in r["Error"]["Message"] and r.get("InvalidParameter") == "policy", r
    code, _, status, _ = client_error(lambda: kafka.get_cluster_policy(ClusterArn=arn))
    assert (code, status) == ("NotFoundException", 404)


def test_cluster_policy_refusals(broker):
    arn = cluster_arn(broker)
    other = "arn:aws:kafka:%s:%s:cluster/other/%s-s1" % (REGION, ACCOUNT, uuid.uuid4())
    kafka = boto(broker, "kafka")
    code, _, status, _ = client_error(lambda: kafka.put_cluster_policy(ClusterArn=other,
                                                                       Policy=cluster_policy(other)))
    assert (code, status) == ("NotFoundException", 404)
    carol = boto(broker, "kafka", CAROL)
    for op, call in (("PutClusterPolicy", lambda: carol.put_cluster_policy(ClusterArn=arn,
                                                                           Policy=cluster_policy(arn))),
                     ("GetClusterPolicy", lambda: carol.get_cluster_policy(ClusterArn=arn)),
                     ("DeleteClusterPolicy", lambda: carol.delete_cluster_policy(ClusterArn=arn))):
        code, msg, status, _ = client_error(call)
        assert (code, status) == ("AccessDeniedException", 403), msg
        assert "kafka:%s on resource: %s" % (op, arn) in msg, msg


def test_cluster_policy_awscli_and_restart(tmp_path):
    ids = iam.write_identities(tmp_path / "identities.json", identities=(ALICE,), roles=())
    b = AwsBroker(ids, broker_count=1)
    b.start()
    try:
        arn = cluster_arn(b)
        doc = cluster_policy(arn)
        v = aws(b, "kafka", "put-cluster-policy", "--cluster-arn", arn, "--policy", doc)["CurrentVersion"]
        b.restart()
        assert aws(b, "kafka", "get-cluster-policy", "--cluster-arn", arn) == {"CurrentVersion": v, "Policy": doc}
        aws(b, "kafka", "delete-cluster-policy", "--cluster-arn", arn)
        p = aws(b, "kafka", "get-cluster-policy", "--cluster-arn", arn, check=False)
        assert p.returncode != 0 and "(NotFoundException)" in p.stderr, p.stderr
        b.assert_alive()
        b.stop(check=True)
    finally:
        b.cleanup()


# -- 3. refusals ----------------------------------------------------------------------------

def http_call(b, method, path, body=None, headers=None):
    c = http.client.HTTPConnection("127.0.0.1", b.aws_port, timeout=10)
    c.request(method, path, body=body, headers=headers or {})
    r = c.getresponse()
    out = (r.status, {k.lower(): v for k, v in r.getheaders()}, r.read().decode())
    c.close()
    return out


def test_unsigned(broker):
    since = broker.log_size()
    status, headers, body = http_call(broker, "GET", "/api/v2/clusters")
    assert status == 403 and headers["x-amzn-errortype"] == "MissingAuthenticationTokenException", (headers, body)
    assert json.loads(body) == {"message": "Missing Authentication Token"}
    assert re.fullmatch(UUID, headers["x-amzn-requestid"]), headers
    status, headers, body = http_call(broker, "POST", "/", "Action=GetCallerIdentity&Version=2011-06-15",
                                      {"Content-Type": "application/x-www-form-urlencoded"})
    assert status == 403 and headers["content-type"] == "text/xml", (headers, body)
    assert "<Code>MissingAuthenticationToken</Code>" in body and "<Type>Sender</Type>" in body, body
    assert "<RequestId>%s</RequestId>" % headers["x-amzn-requestid"] in body, body
    text = broker.log_since(since)
    assert len(re.findall(r"403 MissingAuthenticationToken(Exception)?: no SigV4 signature", text)) == 2, text


def test_wrong_secret(broker):
    since = broker.log_size()
    bad = "not/the+right/secret0123456789abcdefghij"
    code, msg, status, _ = client_error(lambda: boto(broker, "kafka", secret=bad).list_clusters_v2())
    assert (code, status) == ("InvalidSignatureException", 403), (code, msg)
    assert msg.startswith("The request signature we calculated does not match the signature you provided."), msg
    code, _, status, _ = client_error(lambda: boto(broker, "sts", secret=bad).get_caller_identity())
    assert (code, status) == ("SignatureDoesNotMatch", 403)
    text = broker.log_since(since)
    assert len(re.findall(r"access key %s: signature mismatch" % ALICE.access_key_id, text)) == 2, text
    assert bad not in broker.log_text() and ALICE.secret_access_key not in broker.log_text()


def test_unknown_key(broker):
    nobody = Identity("AKIANOBODY0000000000", "x" * 40, "arn:aws:iam::%s:user/nobody" % ACCOUNT)
    code, msg, status, _ = client_error(lambda: boto(broker, "kafka", nobody).list_clusters_v2())
    assert (code, msg, status) == ("UnrecognizedClientException",
                                   "The security token included in the request is invalid.", 403)
    code, msg, status, _ = client_error(lambda: boto(broker, "sts", nobody).get_caller_identity())
    assert (code, msg, status) == ("InvalidClientTokenId", "The security token included in the request is invalid.", 403)
    assert broker.wait_for_log(r"access key AKIANOBODY0000000000 not in iam\.identities\.file")


def sigv4_headers(b, identity, service, method, path, body, when):
    """A SigV4 Authorization for a request signed at `when` (the SigV4 spec, by hand: botocore
    always signs with the current time)."""
    amz_date = when.strftime("%Y%m%dT%H%M%SZ")
    host = "127.0.0.1:%d" % b.aws_port
    payload = hashlib.sha256(body.encode()).hexdigest()
    headers = {"host": host, "x-amz-date": amz_date}
    if body:
        headers["content-type"] = "application/x-www-form-urlencoded"
    signed = ";".join(sorted(headers))
    creq = "\n".join([method, path, "", "".join("%s:%s\n" % (k, headers[k]) for k in sorted(headers)),
                      signed, payload])
    scope = "%s/%s/%s/aws4_request" % (amz_date[:8], REGION, service)
    sts = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(creq.encode()).hexdigest()])
    key = ("AWS4" + identity.secret_access_key).encode()
    for part in (amz_date[:8], REGION, service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    sig = hmac.new(key, sts.encode(), hashlib.sha256).hexdigest()
    headers["authorization"] = "AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, Signature=%s" % (
        identity.access_key_id, scope, signed, sig)
    return headers


@pytest.mark.parametrize("minutes", [0, -10, 10])
def test_clock_skew(broker, minutes):
    when = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(minutes=minutes)
    since = broker.log_size()
    # the same hand-made signature is good when the clock agrees: the refusal is for the date alone
    status, headers, body = http_call(broker, "GET", "/api/v2/clusters", "",
                                      sigv4_headers(broker, ALICE, "kafka", "GET", "/api/v2/clusters", "", when))
    form = "Action=GetCallerIdentity&Version=2011-06-15"
    s_status, _, s_body = http_call(broker, "POST", "/", form, sigv4_headers(broker, ALICE, "sts", "POST", "/", form, when))
    if minutes == 0:
        assert status == 200 and json.loads(body)["clusterInfoList"], body
        assert s_status == 200 and "<Arn>%s</Arn>" % ALICE.principal in s_body, s_body
        return
    assert status == 403 and headers["x-amzn-errortype"] == "InvalidSignatureException", (status, headers)
    want = "Signature expired: " if minutes < 0 else "Signature not yet current: "
    assert json.loads(body)["message"].startswith(want), body
    assert s_status == 403 and "<Code>SignatureDoesNotMatch</Code>" in s_body and want in s_body, s_body
    side = "behind" if minutes < 0 else "ahead of"
    assert len(re.findall(r"is \d+ s %s the broker's clock" % side, broker.log_since(since))) == 2, broker.log_tail()


def test_expired_assumed_credentials(broker):
    """AssumeRole's floor is 900 s: the admin API expires the credentials now instead."""
    _, ident = assumed(broker, "it-expire")
    assert boto(broker, "sts", ident).get_caller_identity()["Arn"] == ident.principal
    req = urllib.request.Request("%s/v1/iam/credentials/%s/expire" % (broker.admin_url, ident.access_key_id),
                                 method="POST", data=b"")
    with urllib.request.urlopen(req, timeout=10) as r:
        assert r.status == 200
    since = broker.log_size()
    code, msg, status, _ = client_error(lambda: boto(broker, "kafka", ident).list_clusters_v2())
    assert (code, msg, status) == ("ExpiredTokenException",
                                   "The security token included in the request is expired", 403)
    code, _, status, _ = client_error(lambda: boto(broker, "sts", ident).get_caller_identity())
    assert (code, status) == ("ExpiredToken", 403)
    assert len(re.findall(r"access key %s expired" % ident.access_key_id, broker.log_since(since))) == 2


def test_session_token_required(broker):
    _, ident = assumed(broker, "it-token")
    no_token = Identity(ident.access_key_id, ident.secret_access_key, ident.principal)
    code, _, status, _ = client_error(lambda: boto(broker, "sts", no_token).get_caller_identity())
    assert (code, status) == ("InvalidClientTokenId", 403)
    wrong = Identity(ident.access_key_id, ident.secret_access_key, ident.principal, session_token="x" * 200)
    code, _, status, _ = client_error(lambda: boto(broker, "kafka", wrong).list_clusters_v2())
    assert (code, status) == ("UnrecognizedClientException", 403)
    assert broker.wait_for_log(r"access key %s: session token does not match" % ident.access_key_id)


def test_assume_role_refusals(broker):
    since = broker.log_size()
    sts = boto(broker, "sts")
    code, msg, status, _ = client_error(lambda: boto(broker, "sts", CAROL).assume_role(
        RoleArn=ROLE.arn, RoleSessionName="carol"))
    assert (code, status) == ("AccessDenied", 403), msg
    assert msg == "User: %s is not authorized to perform: sts:AssumeRole on resource: %s" % (CAROL.principal, ROLE.arn)
    assert broker.wait_for_log(r"AccessDenied: sts:AssumeRole allowed by no statement of the caller's policies "
                               r"on %s" % re.escape(ROLE.arn), since=since)
    unknown = "arn:aws:iam::%s:role/nope" % ACCOUNT
    code, msg, status, _ = client_error(lambda: sts.assume_role(RoleArn=unknown, RoleSessionName="s1"))
    assert (code, status) == ("AccessDenied", 403) and unknown in msg, msg
    code, msg, status, _ = client_error(lambda: sts.assume_role(RoleArn=ROLE.arn, RoleSessionName="s1",
                                                                DurationSeconds=7200))
    assert (code, status) == ("ValidationError", 400) and "MaxSessionDuration" in msg, msg
    # below 900 s botocore refuses on its own; by hand:
    p = aws(broker, "sts", "assume-role", "--role-arn", ROLE.arn, "--role-session-name", "s1",
            "--duration-seconds", 899, check=False)
    assert p.returncode != 0 and ("greater than or equal to 900" in p.stderr or "899" in p.stderr), p.stderr
    code, _, status, _ = client_error(lambda: boto(broker, "sts").get_session_token())
    assert (code, status) == ("InvalidAction", 400)


def test_policies_decide_the_control_plane(broker):
    since = broker.log_size()
    # carol's policies name only kafka-cluster: actions
    code, msg, status, headers = client_error(lambda: boto(broker, "kafka", CAROL).list_clusters_v2())
    assert (code, status) == ("AccessDeniedException", 403), msg
    assert msg == "User: %s is not authorized to perform: kafka:ListClustersV2 on resource: *" % CAROL.principal
    assert headers["x-amzn-errortype"] == "AccessDeniedException"
    # dave's allow listing, describing and AssumeRole, and deny GetBootstrapBrokers
    kafka = boto(broker, "kafka", DAVE)
    arn = kafka.list_clusters_v2()["ClusterInfoList"][0]["ClusterArn"]
    assert kafka.describe_cluster_v2(ClusterArn=arn)["ClusterInfo"]["State"] == "ACTIVE"
    code, msg, status, _ = client_error(lambda: kafka.get_bootstrap_brokers(ClusterArn=arn))
    assert (code, status) == ("AccessDeniedException", 403), msg
    assert msg == ("User: %s is not authorized to perform: kafka:GetBootstrapBrokers on resource: %s with an "
                   "explicit deny in an identity-based policy" % (DAVE.principal, arn)), msg
    # decided before the cluster is looked up, as IAM decides before the service
    other = "arn:aws:kafka:%s:%s:cluster/other/%s-s1" % (REGION, ACCOUNT, uuid.uuid4())
    code, _, status, _ = client_error(lambda: kafka.describe_cluster_v2(ClusterArn=other))
    assert (code, status) == ("AccessDeniedException", 403)
    r = boto(broker, "sts", DAVE).assume_role(RoleArn=ROLE.arn, RoleSessionName="dave")
    assert r["AssumedRoleUser"]["Arn"].endswith(":assumed-role/app/dave"), r
    text = broker.log_since(since)
    assert "AccessDeniedException: kafka:ListClustersV2 allowed by no statement of the caller's policies on *" in text
    assert re.search(r"AccessDeniedException: kafka:GetBootstrapBrokers denied by \S+identities\.json: "
                     r"identities\[2\]\.policies\[0\] Statement\[3\] \(Sid NoBootstrap\) on %s request_id="
                     % re.escape(arn), text), text


def test_no_policies_nothing_allowed_once_the_file_has_some(broker, tmp_path):
    """iam.authorization.default=auto (the default): an identity without policies in a file where
    others have some is allowed nothing, here as on the Kafka listeners."""
    bob = iam.BOB  # in the file without policies
    ids = iam.write_identities(tmp_path / "identities.json", identities=(ALICE, bob), roles=())
    b = AwsBroker(ids, broker_count=1)
    b.start()
    try:
        code, msg, status, _ = client_error(lambda: boto(b, "kafka", bob).list_clusters_v2())
        assert (code, status) == ("AccessDeniedException", 403), msg
        assert boto(b, "kafka", ALICE).list_clusters_v2()["ClusterInfoList"]
        # GetCallerIdentity needs no permission, as on AWS
        assert boto(b, "sts", bob).get_caller_identity()["Arn"] == bob.principal
        b.assert_alive()
        b.stop(check=True)
    finally:
        b.cleanup()


def test_provisioned_profile(tmp_path):
    """The provisioned profile: a PROVISIONED cluster of broker.count nodes, and the bootstrap
    strings of its client authentications (plaintext and IAM)."""
    ids = iam.write_identities(tmp_path / "identities.json", identities=(ALICE,), roles=())
    b = AwsBroker(ids, broker_count=2, config={"profile": "provisioned"})
    b.start()
    try:
        kafka = boto(b, "kafka")
        c = kafka.list_clusters_v2(ClusterTypeFilter="PROVISIONED")["ClusterInfoList"][0]
        arn = c["ClusterArn"]
        assert c["ClusterType"] == "PROVISIONED" and "Serverless" not in c, c
        assert c["Provisioned"]["NumberOfBrokerNodes"] == 2, c
        assert c["Provisioned"]["ClientAuthentication"] == {"Sasl": {"Iam": {"Enabled": True}},
                                                            "Unauthenticated": {"Enabled": True}}, c
        assert not kafka.list_clusters_v2(ClusterTypeFilter="SERVERLESS")["ClusterInfoList"]
        r = kafka.get_bootstrap_brokers(ClusterArn=arn)
        assert r["BootstrapBrokerString"] == "127.0.0.1:%d,127.0.0.1:%d" % (b.port, b.port + 1), r
        assert r["BootstrapBrokerStringSaslIam"] == "127.0.0.1:%d,127.0.0.1:%d" % (b.iam_port, b.iam_port + 1), r
        # ListNodes of a provisioned cluster is not served yet: answered as an unknown operation
        since = b.log_size()
        code, _, status, _ = client_error(lambda: kafka.list_nodes(ClusterArn=arn))
        assert (code, status) == ("UnknownOperationException", 404)
        assert b.wait_for_log(r"kafka:ListNodes is not served by mskmock yet", since=since)
        b.assert_alive()
        b.stop(check=True)
    finally:
        b.cleanup()


def test_presigned_get_caller_identity(broker):
    """Query-string signing (X-Amz-Algorithm ... in the URL), as boto3's generate_presigned_url
    makes it (with GET, as `aws eks get-token` does: botocore signs STS's POST otherwise, and a
    URL signed for POST does not verify as a GET, here as on AWS): accepted until X-Amz-Expires
    has passed."""
    sts = boto(broker, "sts")
    post_signed = sts.generate_presigned_url("get_caller_identity", ExpiresIn=60)
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(post_signed, timeout=10)
    assert e.value.code == 403
    url = sts.generate_presigned_url("get_caller_identity", ExpiresIn=60, HttpMethod="GET")
    assert "X-Amz-Signature=" in url and "Authorization" not in url, url
    with urllib.request.urlopen(url, timeout=10) as r:
        body = r.read().decode()
    assert "<Arn>%s</Arn>" % ALICE.principal in body, body
    url = sts.generate_presigned_url("get_caller_identity", ExpiresIn=1, HttpMethod="GET")
    time.sleep(2.1)
    since = broker.log_size()
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(url, timeout=10)
    assert e.value.code == 403
    assert "<Code>SignatureDoesNotMatch</Code>" in e.value.read().decode()
    assert broker.wait_for_log(r"presigned request expired", since=since)
