"""IAM authorization as on MSK Serverless (docs/msk-behaviors.md#authorization), seen by
confluent-kafka (librdkafka) with the official Python signer over the IAM listener: policies in
the identities file decide every request.

  1. no kafka-cluster:Connect: SaslAuthenticate fails with "[<uuid>]: Access denied";
  2. a topic-scoped policy: produce works, an idempotent producer fails InitProducerId with
     CLUSTER_AUTHORIZATION_FAILED (no KIP-679 relaxation, librdkafka #4452) until the policy
     also grants kafka-cluster:WriteDataIdempotently on the cluster;
  3. a topic outside the policy: CreateTopics gets TOPIC_AUTHORIZATION_FAILED;
  4. a consumer without AlterGroup on its group: GROUP_AUTHORIZATION_FAILED;
  5. an explicit Deny beats "kafka-cluster:*";
and every refusal has a broker log line with the principal, action, ARN and deciding statement.
"""

import re
import signal

import pytest

import iam
from authz import (CLUSTER_ARN, CONFIG, CONNECT, IDEMPOTENT, ORDERS, ORDERS_GROUPS, allow, deny,
                   group_arn, policy, refusal, topic_arn, user)
from groups import GroupConsumer
from harness import running
from iam import REGION, Identity, IamBroker, aws_env, run_client_env

pytestmark = pytest.mark.timeout(300)

# A topic-only policy (the Terraform most teams start with), and the same plus the cluster grant.
WRITER = user("writer", 1, CONNECT, ORDERS, ORDERS_GROUPS)
IDEM = user("idem", 2, CONNECT, ORDERS, ORDERS_GROUPS, IDEMPOTENT)
# May consume but not join its group: DescribeGroup without AlterGroup.
NOGROUP = user("nogroup", 3, CONNECT, ORDERS,
               allow("kafka-cluster:DescribeGroup", group_arn("*")),
               allow("kafka-cluster:AlterGroup", group_arn("other-*")))
# Everything, except writing secrets.
DENIER = user("denier", 4, allow("kafka-cluster:*", "*"),
              deny("kafka-cluster:WriteData", topic_arn("secret*"), "NoSecrets"))
# Everything on topics, nothing on the cluster.
NOCONNECT = user("noconnect", 5, allow("kafka-cluster:*Topic*", topic_arn("*")))
USERS = (WRITER, IDEM, NOGROUP, DENIER, NOCONNECT)


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    ids = iam.write_identities(tmp_path_factory.mktemp("authz") / "identities.json", identities=USERS,
                               roles=())
    with running(IamBroker(ids, broker_count=3, credentials_endpoint=False,
                           config=dict(CONFIG, **{"iam.authorization.default": "deny"}))) as b:
        yield b


def sec(b):
    return ["--security-protocol", "SASL_SSL", "--mechanism", "OAUTHBEARER", "--region", REGION,
            "--ca", b.ca_path]


def create_topic(b, who, topic, check=True, partitions=1):
    return run_client_env("python", ["create-topic", "--bootstrap", b.iam_bootstrap, "--topic", topic,
                                     "--partitions", partitions, "--timeout", 30] + sec(b),
                          aws_env(who), timeout=90, check=check)


def produce(b, who, topic, idempotent=False, check=True, count=20, start=0):
    """start: how many records the topic already holds (the client checks the offsets)."""
    args = ["produce", "--bootstrap", b.iam_bootstrap, "--topic", topic, "--partitions", 1,
            "--count", count, "--start", start, "--compression", "none"] + sec(b)
    if idempotent:
        args.append("--idempotent")
    return run_client_env("python", args, aws_env(who), timeout=120, check=check)


def test_startup_prints_the_resource_arns(broker):
    assert re.search(r"iam: resource ARNs: cluster %s," % re.escape(CLUSTER_ARN), broker.log_text())


def test_no_connect_is_access_denied(broker):
    since = broker.log_size()
    r = create_topic(broker, NOCONNECT, "orders-noconnect", check=False)
    assert r.rc != 0, r.describe()
    m = re.search(r"SASL authentication error: \[([0-9a-f-]{36})\]: Access denied", r.stderr)
    assert m, r.describe()
    line = broker.wait_for_log(r"request-id=%s\b" % m.group(1), since=since)
    assert line and "kafka-cluster:Connect on %s: no statement allowed it" % CLUSTER_ARN in line, line
    assert NOCONNECT.principal in broker.log_since(since)


def test_topic_policy_produces_but_idempotence_needs_the_cluster(broker):
    create_topic(broker, WRITER, "orders-idem")
    produce(broker, WRITER, "orders-idem")  # acks=all, not idempotent: WriteData is enough

    since = broker.log_size()
    r = produce(broker, WRITER, "orders-idem", idempotent=True, check=False)
    assert r.rc != 0, "an idempotent producer without WriteDataIdempotently succeeded\n" + r.describe()
    assert re.search(r"[Cc]luster authorization failed|CLUSTER_AUTHORIZATION_FAILED", r.stderr), r.describe()
    line = refusal(broker, since, "CLUSTER_AUTHORIZATION_FAILED(31)",
                   re.escape("kafka-cluster:WriteDataIdempotently on %s: no statement allowed it" % CLUSTER_ARN))
    assert "principal=IAM.%s" % WRITER.principal in line and "api=InitProducerId" in line, line

    # the same policy plus WriteDataIdempotently on the cluster: the idempotent producer works
    produce(broker, IDEM, "orders-idem", idempotent=True, count=10, start=20)


def test_topic_outside_the_policy(broker):
    since = broker.log_size()
    r = create_topic(broker, WRITER, "payments", check=False)
    assert r.rc != 0, r.describe()
    assert re.search(r"[Tt]opic authorization failed|TOPIC_AUTHORIZATION_FAILED", r.stderr), r.describe()
    refusal(broker, since, "TOPIC_AUTHORIZATION_FAILED(29)",
            re.escape("kafka-cluster:CreateTopic on %s: no statement allowed it" % topic_arn("payments")))


def test_consumer_without_alter_group(broker):
    create_topic(broker, NOGROUP, "orders-grp")
    produce(broker, NOGROUP, "orders-grp", count=5)
    since = broker.log_size()
    c = GroupConsumer("python", broker.iam_bootstrap, "orders-readers", "orders-grp",
                      extra_args=sec(broker), env=aws_env(NOGROUP))
    try:
        c.wait_for(lambda: any(re.search(r"[Gg]roup authorization failed|GROUP_AUTHORIZATION_FAILED", e)
                               for e in c.errors()), 60, "a group authorization error")
        assert not c.records(), "records consumed without AlterGroup: %s" % c.records()[:3]
    finally:
        c.kill()
        c.cleanup()
    refusal(broker, since, "GROUP_AUTHORIZATION_FAILED(30)",
            re.escape("kafka-cluster:AlterGroup on %s: no statement allowed it" % group_arn("orders-readers")))


def test_explicit_deny_beats_allow_all(broker):
    create_topic(broker, DENIER, "public-x")
    create_topic(broker, DENIER, "secret-x")  # the Deny names WriteData only
    produce(broker, DENIER, "public-x", count=5)
    since = broker.log_size()
    r = produce(broker, DENIER, "secret-x", check=False, count=5)
    assert r.rc != 0, r.describe()
    assert re.search(r"[Tt]opic authorization failed|TOPIC_AUTHORIZATION_FAILED", r.stderr), r.describe()
    line = refusal(broker, since, "TOPIC_AUTHORIZATION_FAILED(29)",
                   re.escape("kafka-cluster:WriteData on %s: denied by " % topic_arn("secret-x")))
    assert "Statement[1] (Sid NoSecrets)" in line, line


def log_time(line):
    """Seconds of the day from a broker log line's timestamp (2026-12-02T20:26:19.389Z)."""
    m = re.match(r"\d{4}-\d\d-\d\dT(\d\d):(\d\d):(\d\d\.\d+)Z", line)
    assert m, line
    return int(m.group(1)) * 3600 + int(m.group(2)) * 60 + float(m.group(3))


def test_sighup_reloads_policies_after_the_propagation_delay(tmp_path):
    """A policy fix reaches a running broker with SIGHUP, after iam.policy.propagation.ms;
    a file that does not load is refused and the policies in force stay."""
    ids = tmp_path / "identities.json"
    iam.write_identities(ids, identities=(WRITER,), roles=())
    b = IamBroker(ids, broker_count=1, credentials_endpoint=False,
                  config=dict(CONFIG, **{"iam.policy.propagation.ms": 1500,
                                         "default.replication.factor": 1}))
    b.start()
    try:
        create_topic(b, WRITER, "orders-reload")
        r = produce(b, WRITER, "orders-reload", idempotent=True, check=False, count=5)
        assert r.rc != 0, r.describe()

        fixed = Identity(WRITER.access_key_id, WRITER.secret_access_key, WRITER.principal,
                         policies=(policy(CONNECT, ORDERS, ORDERS_GROUPS), policy(IDEMPOTENT)))
        iam.write_identities(ids, identities=(fixed,), roles=())
        since = b.log_size()
        b.proc.send_signal(signal.SIGHUP)
        read = b.wait_for_log(r"iam: SIGHUP: policies read from .*they apply in 1500 ms", since=since)
        applied = b.wait_for_log(r"iam: reloaded policies applied to 1 identities and roles", since=since,
                                 timeout=10)
        assert read and applied, b.log_tail()
        assert log_time(applied) - log_time(read) >= 1.4, (read, applied)
        produce(b, WRITER, "orders-reload", idempotent=True, count=5)

        # a broken file: refused with its position, and the fixed policies stay
        ids.write_text('{"identities": [\n  {"access_key_id": }\n]}')
        since = b.log_size()
        b.proc.send_signal(signal.SIGHUP)
        line = b.wait_for_log(r"iam: SIGHUP: reload refused, the current policies stay: .*line 2", since=since)
        assert line, b.log_tail()
        produce(b, WRITER, "orders-reload", idempotent=True, count=5, start=5)
        b.assert_alive()
        b.stop(check=True)
    finally:
        b.cleanup()


# An identity with no "policies" at all, beside ones that have them.
BARE = Identity("AKIAMSKMOCKAUTHZ0006", "s3cret/bare+key/0123456789abcdefghijklmnop",
                "arn:aws:iam::%s:user/bare" % iam.ACCOUNT)


def test_default_auto_refuses_an_identity_without_policies_once_the_file_has_any(tmp_path):
    """iam.authorization.default=auto, the default (issue 34): as on MSK, an identity whose
    policies grant nothing cannot log in ("Access denied") as soon as the identities file gives
    any identity policies; a file with no policies anywhere keeps allowing everything, and the
    start-up line says which way it went."""
    ids = tmp_path / "identities.json"
    iam.write_identities(ids, identities=(WRITER, BARE), roles=())
    b = IamBroker(ids, broker_count=1, credentials_endpoint=False, config=dict(CONFIG, **{"default.replication.factor": 1}))
    with running(b):
        assert "identities without policies are denied everything, as on MSK (iam.authorization.default=auto" \
            in b.log_text(), b.log_tail()
        r = create_topic(b, BARE, "orders-bare", check=False)
        assert r.rc != 0, r.describe()
        assert re.search(r"SASL authentication error: \[[0-9a-f-]{36}\]: Access denied", r.stderr), r.describe()
        create_topic(b, WRITER, "orders-written")  # the identity with policies is served as before

    iam.write_identities(ids, identities=(BARE,), roles=())
    b = IamBroker(ids, broker_count=1, credentials_endpoint=False, config=dict(CONFIG, **{"default.replication.factor": 1}))
    with running(b):
        assert "identities without policies are allowed everything (iam.authorization.default=auto, and no " \
            "identity or role" in b.log_text(), b.log_tail()
        create_topic(b, BARE, "anything-goes")
