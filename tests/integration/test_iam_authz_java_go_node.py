"""IAM authorization as on MSK Serverless (docs/msk-behaviors.md#authorization) seen by Java
kafka-clients 4.x (aws-msk-iam-auth, AWS_MSK_IAM), kafkajs (aws-msk-iam-sasl-signer-js) and
franz-go (aws-msk-iam-sasl-signer-go), over the IAM listener with TLS, one broker for the module:

  test_java_idempotent_producer_*   a topic-only policy: Java's idempotent producer fails with
                                    ClusterAuthorizationException (InitProducerId refused with
                                    31), and works once WriteDataIdempotently is granted
  test_kafkajs_admin_*              no CreateTopic: kafkajs' admin gets "Not authorized to access
                                    topics: [Topic authorization failed]"
  test_franz_go_lists_*             DescribeTopic on one prefix: listing topics shows only those
  test_franz_go_deny_*              a Deny statement beats "kafka-cluster:*"

The broker's log names the principal, the action, the ARN and the deciding statement of every
refusal (authz.refusal).
"""

import re

import pytest

import iam
from authz import (CLUSTER_ARN, CONFIG, CONNECT, IDEMPOTENT, ORDERS, ORDERS_GROUPS, allow, deny, refusal,
                   topic_arn, user)
from harness import running
from iam import REGION, IamBroker, aws_env, run_client_env

pytestmark = pytest.mark.timeout(300)

ADMIN = user("admin", 11, allow("kafka-cluster:*", "*"))
# The topic-only policy of a Terraform module, and the same plus the cluster grant.
WRITER = user("java-writer", 12, CONNECT, ORDERS, ORDERS_GROUPS)
IDEM = user("java-idem", 13, CONNECT, ORDERS, ORDERS_GROUPS, IDEMPOTENT)
# Describes and writes every topic but may not create one.
NOCREATE = user("nocreate", 14, CONNECT,
                allow(["kafka-cluster:DescribeTopic", "kafka-cluster:WriteData"], topic_arn("*"), "Topics"))
# May describe the orders topics only.
LISTER = user("lister", 15, CONNECT, allow("kafka-cluster:DescribeTopic", topic_arn("orders-*"), "Orders"))
# Everything, except writing secrets.
DENIER = user("go-denier", 16, allow("kafka-cluster:*", "*"),
              deny("kafka-cluster:WriteData", topic_arn("secret*"), "NoSecrets"))
USERS = (ADMIN, WRITER, IDEM, NOCREATE, LISTER, DENIER)

MECHANISM = {"java": "AWS_MSK_IAM", "node": "OAUTHBEARER", "go": "OAUTHBEARER"}


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    ids = iam.write_identities(tmp_path_factory.mktemp("authz") / "identities.json", identities=USERS,
                               roles=())
    with running(IamBroker(ids, broker_count=3, credentials_endpoint=False,
                           config=dict(CONFIG, **{"iam.authorization.default": "deny"}))) as b:
        yield b


def client(lang, b, who, command, *args, check=True):
    argv = [command, "--bootstrap", b.iam_bootstrap] + list(args) + [
        "--security-protocol", "SASL_SSL", "--mechanism", MECHANISM[lang], "--region", REGION,
        "--ca", b.ca_path]
    return run_client_env(lang, argv, aws_env(who), timeout=120, check=check)


def create_topic(lang, b, who, topic, check=True):
    return client(lang, b, who, "create-topic", "--topic", topic, "--partitions", 1, check=check)


def produce(lang, b, who, topic, idempotent=False, check=True, count=20):
    args = ["--topic", topic, "--partitions", 1, "--count", count, "--compression", "none"]
    r = client(lang, b, who, "produce", *(args + (["--idempotent"] if idempotent else [])), check=check)
    if check:
        assert r.json == {"produced": count}, r.describe()
    return r


def test_java_idempotent_producer_needs_write_data_idempotently(broker):
    create_topic("java", broker, WRITER, "orders-java")
    produce("java", broker, WRITER, "orders-java")  # acks=all, not idempotent: WriteData is enough

    since = broker.log_size()
    r = produce("java", broker, WRITER, "orders-java", idempotent=True, check=False)
    assert r.rc != 0, "an idempotent producer without WriteDataIdempotently succeeded\n" + r.describe()
    assert "org.apache.kafka.common.errors.ClusterAuthorizationException" in r.stderr, r.describe()
    line = refusal(broker, since, "CLUSTER_AUTHORIZATION_FAILED(31)",
                   re.escape("kafka-cluster:WriteDataIdempotently on %s: no statement allowed it"
                             % CLUSTER_ARN))
    assert "principal=IAM.%s" % WRITER.principal in line and "api=InitProducerId" in line, line

    # the same policy plus WriteDataIdempotently on the cluster
    since = broker.log_size()
    produce("java", broker, IDEM, "orders-java", idempotent=True, count=10)
    assert "refused" not in broker.log_since(since), broker.log_since(since)


def test_kafkajs_admin_without_create_topic(broker):
    since = broker.log_size()
    r = create_topic("node", broker, NOCREATE, "orders-node", check=False)
    assert r.rc != 0, r.describe()
    assert "Not authorized to access topics: [Topic authorization failed]" in r.stderr, r.describe()
    refusal(broker, since, "TOPIC_AUTHORIZATION_FAILED(29)",
            re.escape("kafka-cluster:CreateTopic on %s: no statement allowed it" % topic_arn("orders-node")))
    # an identity that may create it can; then NOCREATE may write to it
    create_topic("node", broker, ADMIN, "orders-node")
    produce("node", broker, NOCREATE, "orders-node", count=5)


def test_franz_go_lists_only_the_topics_it_may_describe(broker):
    for t in ("orders-go-a", "orders-go-b", "payments-go"):
        create_topic("go", broker, ADMIN, t)
    seen_by_admin = client("go", broker, ADMIN, "list-topics").json["topics"]
    assert {"orders-go-a", "orders-go-b", "payments-go"} <= set(seen_by_admin), seen_by_admin

    since = broker.log_size()
    seen = client("go", broker, LISTER, "list-topics").json["topics"]
    assert {"orders-go-a", "orders-go-b"} <= set(seen), seen
    assert all(t.startswith("orders-") for t in seen), seen
    assert set(seen) == {t for t in seen_by_admin if t.startswith("orders-")}, (seen, seen_by_admin)
    # A Metadata request for all topics leaves out what the principal may not describe, as
    # Kafka does; it is not a refusal.
    assert "refused" not in broker.log_since(since), broker.log_since(since)


def test_franz_go_deny_beats_allow_all(broker):
    create_topic("go", broker, DENIER, "public-go")
    create_topic("go", broker, DENIER, "secret-go")  # the Deny names WriteData only
    produce("go", broker, DENIER, "public-go", count=5)
    since = broker.log_size()
    r = produce("go", broker, DENIER, "secret-go", check=False, count=5)
    assert r.rc != 0, r.describe()
    assert "TOPIC_AUTHORIZATION_FAILED" in r.stderr, r.describe()
    line = refusal(broker, since, "TOPIC_AUTHORIZATION_FAILED(29)",
                   re.escape("kafka-cluster:WriteData on %s: denied by " % topic_arn("secret-go")))
    assert "Statement[1] (Sid NoSecrets)" in line and "principal=IAM.%s" % DENIER.principal in line, line
