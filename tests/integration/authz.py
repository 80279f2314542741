"""Policies and users for the IAM authorization tests (test_iam_authz_*.py): the ARNs mskmock
gives its resources for one cluster name and uuid, and IAM policy documents in AWS's JSON."""

import re

import iam
from iam import REGION, Identity

CLUSTER = "it-authz"
UUID = "0b5e2f4c-8d7a-4e61-9c3b-2a1f0e9d8c7b-s1"
ARN = "arn:aws:kafka:%s:%s:" % (REGION, iam.ACCOUNT)
CLUSTER_ARN = ARN + "cluster/%s/%s" % (CLUSTER, UUID)
# the broker config that gives the resources these ARNs
CONFIG = {"msk.cluster.name": CLUSTER, "msk.cluster.uuid": UUID}


def topic_arn(name):
    return ARN + "topic/%s/%s/%s" % (CLUSTER, UUID, name)


def group_arn(name):
    return ARN + "group/%s/%s/%s" % (CLUSTER, UUID, name)


def allow(actions, resources, sid=None):
    st = {"Effect": "Allow", "Action": actions, "Resource": resources}
    if sid:
        st["Sid"] = sid
    return st


def deny(actions, resources, sid=None):
    return dict(allow(actions, resources, sid), Effect="Deny")


def policy(*statements):
    return {"Version": "2012-10-17", "Statement": list(statements)}


def user(name, key, *statements):
    """An identity with long-term keys and one policy of these statements; key makes the
    access key id unique across test modules."""
    return Identity("AKIAMSKMOCKAUTHZ%04d" % key, "s3cret/%s+key/0123456789abcdefghijklmnop" % name,
                    "arn:aws:iam::%s:user/%s" % (iam.ACCOUNT, name), policies=(policy(*statements),))


CONNECT = allow(["kafka-cluster:Connect", "kafka-cluster:DescribeCluster"], CLUSTER_ARN, "Connect")
ORDERS = allow(["kafka-cluster:CreateTopic", "kafka-cluster:DescribeTopic", "kafka-cluster:WriteData",
                "kafka-cluster:ReadData"], topic_arn("orders*"), "Orders")
ORDERS_GROUPS = allow(["kafka-cluster:DescribeGroup", "kafka-cluster:AlterGroup"], group_arn("orders-*"))
IDEMPOTENT = allow("kafka-cluster:WriteDataIdempotently", CLUSTER_ARN, "Idempotent")


def refusal(broker, since, code, pattern):
    """The broker's refusal line with this error code whose reason matches pattern."""
    rx = r"refused error=%s: %s" % (re.escape(code), pattern)
    line = broker.wait_for_log(rx, since=since, timeout=10)
    assert line, "no refusal /%s/ in the broker log\n%s" % (rx, broker.log_tail())
    print("broker: " + line)
    return line
