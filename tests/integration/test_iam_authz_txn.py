"""IAM authorization of transactions as on MSK Serverless
(docs/msk-behaviors.md#actions-and-resources): the transactional id is a resource
(arn:...:transactional-id/<cluster>/<uuid>/<id>), and a transactional producer needs
kafka-cluster:DescribeTransactionalId (FindCoordinator) and AlterTransactionalId (InitProducerId,
AddPartitionsToTxn, EndTxn, ...) on it, else TRANSACTIONAL_ID_AUTHORIZATION_FAILED (53). Seen by
confluent-kafka over the IAM listener with the official signer:

  1. a policy granting both actions on orders-tx-*: commits and aborts work, read_committed
     shows exactly the committed records;
  2. the same principal with a transactional id outside the grant fails init_transactions, and
     the broker logs the action, the transactional-id ARN and that no statement allowed it;
  3. a principal with DescribeTransactionalId but not AlterTransactionalId finds its coordinator
     and is refused at InitProducerId.
"""

import pytest

import iam
from authz import (ARN, CLUSTER, CONFIG, CONNECT, IDEMPOTENT, ORDERS, ORDERS_GROUPS, UUID, allow, group_arn,
                    refusal, user)
from harness import running
from iam import REGION, IamBroker, aws_env, run_client_env

pytestmark = pytest.mark.timeout(300)


def txn_arn(name):
    return ARN + "transactional-id/%s/%s/%s" % (CLUSTER, UUID, name)


TXN_BOTH = allow(["kafka-cluster:DescribeTransactionalId", "kafka-cluster:AlterTransactionalId"],
                 txn_arn("orders-tx-*"), "OrdersTxn")
TXN_DESCRIBE = allow("kafka-cluster:DescribeTransactionalId", txn_arn("*"), "DescribeTxn")
# the reading client's own (generated) consumer group
ANY_GROUP = allow(["kafka-cluster:DescribeGroup", "kafka-cluster:AlterGroup"], group_arn("*"), "AnyGroup")
TXUSER = user("txuser", 31, CONNECT, ORDERS, ORDERS_GROUPS, ANY_GROUP, IDEMPOTENT, TXN_BOTH)
DESCRIBER = user("txdescriber", 32, CONNECT, ORDERS, ORDERS_GROUPS, IDEMPOTENT, TXN_DESCRIBE)


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    ids = iam.write_identities(tmp_path_factory.mktemp("authz-txn") / "identities.json",
                               identities=(TXUSER, DESCRIBER), roles=())
    with running(IamBroker(ids, broker_count=3, credentials_endpoint=False,
                           config=dict(CONFIG, **{"iam.authorization.default": "deny"}))) as b:
        yield b


def sec(b):
    return ["--security-protocol", "SASL_SSL", "--mechanism", "OAUTHBEARER", "--region", REGION,
            "--ca", b.ca_path]


def create_topic(b, who, topic):
    run_client_env("python", ["create-topic", "--bootstrap", b.iam_bootstrap, "--topic", topic,
                              "--partitions", 3, "--timeout", 30] + sec(b), aws_env(who), timeout=90)


def txn_produce(b, who, topic, txn_id, check=True):
    return run_client_env("python", ["txn-produce", "--bootstrap", b.iam_bootstrap, "--topic", topic,
                                     "--partitions", 3, "--commits", 2, "--aborts", 1, "--records", 6,
                                     "--transactional-id", txn_id, "--init-timeout", 10] + sec(b),
                          aws_env(who), timeout=120, check=check)


def test_granted_transactional_id_commits_and_aborts(broker):
    create_topic(broker, TXUSER, "orders-txn")
    txn_produce(broker, TXUSER, "orders-txn", "orders-tx-1")
    got = run_client_env("python", ["txn-consume", "--bootstrap", broker.iam_bootstrap, "--topic", "orders-txn",
                                    "--partitions", 3, "--isolation", "read_committed"] + sec(broker),
                         aws_env(TXUSER), timeout=90).json
    values = [r[3] for r in got["records"]]
    assert all(str(v).endswith("-commit") for v in values), got
    assert len(values) == 2 * 6, got


def test_transactional_id_outside_the_grant_is_refused(broker):
    create_topic(broker, TXUSER, "orders-txn-denied")
    since = broker.log_size()
    r = txn_produce(broker, TXUSER, "orders-txn-denied", "payments-tx-1", check=False)
    assert r.rc != 0, r.describe()
    assert "TRANSACTIONAL_ID_AUTHORIZATION_FAILED" in r.stderr + r.stdout, r.describe()
    refusal(broker, since, "TRANSACTIONAL_ID_AUTHORIZATION_FAILED(53)",
            r"kafka-cluster:DescribeTransactionalId on %s: .*" % txn_arn("payments-tx-1").replace(".", r"\."))


def test_describe_without_alter_is_refused_at_init_producer_id(broker):
    create_topic(broker, DESCRIBER, "orders-txn-describer")
    since = broker.log_size()
    r = txn_produce(broker, DESCRIBER, "orders-txn-describer", "orders-tx-2", check=False)
    assert r.rc != 0, r.describe()
    line = refusal(broker, since, "TRANSACTIONAL_ID_AUTHORIZATION_FAILED(53)",
                   r"kafka-cluster:AlterTransactionalId on %s: .*" % txn_arn("orders-tx-2").replace(".", r"\."))
    assert "InitProducerId" in line, line
