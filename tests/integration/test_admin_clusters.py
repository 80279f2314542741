"""The admin API on every cluster of the process (issue 34; docs/admin-api.md "Clusters"): a
provisioned cluster created with boto3's CreateClusterV2 (unauthenticated clients, plaintext) is
listed by GET /v1/clusters with its brokers' ports and bootstrap strings; under
/v1/clusters/{name or ARN}/ the same calls as the configured cluster's act on it alone: one of
its brokers down and up (Metadata of a confluent-kafka client of that cluster changes), a fault
rule, topics, reset, its own metrics; the configured cluster's calls at their usual paths are
unchanged. An unknown cluster, and one DELETING, are 404 with a log line; process-wide routes
(health, IAM) are not under a cluster; with admin.token, nothing under /v1/clusters/ is told
without it.

Two brokers: the module's (3 synthetic brokers, aws.cluster.transition.ms=0) and, for the
CREATING and DELETING states, one with a transition of a few seconds and admin.token.
"""

import json
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient

import iam
from groups import wait_until
from harness import running
from iam import REGION, AwsBroker

pytestmark = pytest.mark.timeout(300)

CREATED = "side"


def call(broker, method, path, body=None, headers=None):
    """(status, JSON body) of one admin API request."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(broker.admin_url + path, method=method, data=data, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            body = r.read()
            return r.status, json.loads(body) if r.headers.get_content_type() == "application/json" else body
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def ok(broker, method, path, body=None, status=200):
    got, j = call(broker, method, path, body)
    assert got == status, "%s %s: %d %s\n%s" % (method, path, got, j, broker.log_tail())
    return j


def kafka(b):
    boto3 = pytest.importorskip("boto3")
    return boto3.client("kafka", endpoint_url=b.aws_url, region_name=REGION,
                        aws_access_key_id=iam.ALICE.access_key_id,
                        aws_secret_access_key=iam.ALICE.secret_access_key)


def create_provisioned(b, name, brokers=3):
    """A provisioned cluster for unauthenticated clients over plaintext: its ARN."""
    k = kafka(b)
    version = next(v["Version"] for v in k.list_kafka_versions()["KafkaVersions"] if v["Status"] == "ACTIVE")
    r = k.create_cluster_v2(ClusterName=name, Provisioned={
        "BrokerNodeGroupInfo": {"ClientSubnets": ["subnet-%d" % i for i in range(brokers)],
                                "InstanceType": "kafka.m5.large"},
        "KafkaVersion": version, "NumberOfBrokerNodes": brokers,
        "ClientAuthentication": {"Unauthenticated": {"Enabled": True}},
        "EncryptionInfo": {"EncryptionInTransit": {"ClientBroker": "TLS_PLAINTEXT"}}})
    return r["ClusterArn"]


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    ids = iam.write_identities(tmp_path_factory.mktemp("ids") / "identities.json")
    b = AwsBroker(ids, broker_count=3, data_dir=tmp_path_factory.mktemp("admin-clusters"),
                  config={"aws.cluster.transition.ms": 0, "group.initial.rebalance.delay.ms": 0})
    with running(b):
        yield b


@pytest.fixture(scope="module")
def created(broker):
    """The ARN of the cluster CreateClusterV2 made for the module."""
    return create_provisioned(broker, CREATED)


def at(arn_or_name, path=""):
    """The admin path of a cluster's call: its name or ARN percent-encoded, slashes too."""
    return "/v1/clusters/%s%s" % (urllib.parse.quote(arn_or_name, safe=""), path)


def listed(b, name):
    return next(c for c in ok(b, "GET", "/v1/clusters")["clusters"] if c["name"] == name)


def metadata_brokers(bootstrap):
    """The broker ids a new confluent-kafka client of that bootstrap is told by Metadata."""
    a = AdminClient({"bootstrap.servers": bootstrap, "socket.timeout.ms": 5000})
    return sorted(a.list_topics(timeout=15).brokers)


def produce(bootstrap, topic, n):
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0, "retry.backoff.ms": 50})
    for i in range(n):
        p.produce(topic, value=b"v%d" % i)
    assert p.flush(30) == 0


# -- the list ---------------------------------------------------------------------------------

def test_clusters_listed_with_their_brokers_and_bootstrap(broker, created):
    clusters = ok(broker, "GET", "/v1/clusters")["clusters"]
    assert len(clusters) == 2
    configured, side = clusters
    assert configured["configured"] and not side["configured"]
    assert configured == ok(broker, "GET", "/v1")  # the configured cluster's own call, at its path
    assert configured["bootstrap"]["plaintext"] == ",".join("127.0.0.1:%d" % p for p in broker.ports)
    assert [x["id"] for x in configured["brokers"]] == [x["id"] for x in ok(broker, "GET", "/v1/brokers")["brokers"]]

    assert (side["name"], side["arn"], side["type"], side["state"]) == (CREATED, created, "PROVISIONED", "ACTIVE")
    assert side["uuid"] and created.endswith("/" + side["uuid"])
    assert len(side["brokers"]) == 3 and all(x["up"] for x in side["brokers"])
    # unauthenticated clients only: the plaintext listener, on ports of its own
    assert [lsn["name"] for lsn in side["listeners"]] == ["plaintext"] and list(side["bootstrap"]) == ["plaintext"]
    ports = [x["ports"]["plaintext"] for x in side["brokers"]]
    assert not set(ports) & set(broker.ports)
    assert side["bootstrap"]["plaintext"] == ",".join("127.0.0.1:%d" % p for p in ports)
    assert side["listeners"][0]["ports"] == ports

    # by name, by ARN percent-encoded, by ARN as it is: the same cluster
    assert ok(broker, "GET", at(CREATED)) == side
    assert ok(broker, "GET", at(created)) == side
    assert ok(broker, "GET", "/v1/clusters/" + created) == side
    assert ok(broker, "GET", at(configured["name"])) == configured
    assert ok(broker, "GET", at(CREATED, "/brokers"))["brokers"] == side["brokers"]
    assert ok(broker, "GET", at(CREATED, "/listeners"))["listeners"] == side["listeners"]


# -- brokers down and up ----------------------------------------------------------------------

def test_broker_down_and_up_on_the_created_cluster(broker, created):
    side = listed(broker, CREATED)
    boot = side["bootstrap"]["plaintext"]
    ids = [x["id"] for x in side["brokers"]]
    assert metadata_brokers(boot) == sorted(ids)
    victim = ids[1]

    r = ok(broker, "POST", at(created, "/brokers/%d/down" % victim))
    assert r["id"] == victim and not r["up"]
    wait_until(lambda: metadata_brokers(boot) == sorted(set(ids) - {victim}), 30,
               "Metadata of the created cluster without broker %d" % victim)
    assert not next(x for x in listed(broker, CREATED)["brokers"] if x["id"] == victim)["up"]
    # the configured cluster's brokers and Metadata are as they were
    assert all(x["up"] for x in ok(broker, "GET", "/v1/brokers")["brokers"])
    assert metadata_brokers(broker.bootstrap) == sorted(x["id"] for x in ok(broker, "GET", "/v1/brokers")["brokers"])

    r = ok(broker, "POST", at(CREATED, "/brokers/%d/up" % victim))
    assert r["id"] == victim and r["up"]
    wait_until(lambda: metadata_brokers(boot) == sorted(ids), 30, "Metadata of the created cluster with every broker")
    assert broker.wait_for_log(r"admin: .*POST /v1/clusters/%s/brokers/%d/up 200" % (CREATED, victim))


# -- a fault rule, topics, reset, metrics: the created cluster's alone -------------------------

def test_fault_rule_on_the_created_cluster_only(broker, created):
    boot = listed(broker, CREATED)["bootstrap"]["plaintext"]
    for path in ("/v1/topics", at(CREATED, "/topics")):
        ok(broker, "POST", path, {"name": "orders", "partitions": 1})
    rule = ok(broker, "POST", at(created, "/faults"),
              {"api": "Produce", "topic": "orders", "error": "NOT_LEADER_OR_FOLLOWER", "count": 2}, status=201)
    assert ok(broker, "GET", "/v1/faults")["faults"] == []

    produce(broker.bootstrap, "orders", 3)  # the configured cluster: no rule there
    assert ok(broker, "GET", at(CREATED, "/faults/%d" % rule["id"]))["fired"] == 0
    produce(boot, "orders", 3)  # librdkafka retries past the two refusals
    got = ok(broker, "GET", at(CREATED, "/faults/%d" % rule["id"]))
    assert got["fired"] == 2 and not got["active"]
    assert ok(broker, "GET", at(CREATED, "/topics/orders"))["partitions"][0]["high_watermark"] == 3
    assert ok(broker, "GET", "/v1/topics/orders")["partitions"][0]["high_watermark"] == 3

    # each cluster's counters at its own /metrics
    def fired(text):
        return [line for line in text.decode().splitlines()
                if line.startswith('mskmock_fault_rules_fired_total{action="error"}')]
    assert fired(call(broker, "GET", at(CREATED, "/metrics"))[1]) == ['mskmock_fault_rules_fired_total{action="error"} 2']
    assert fired(call(broker, "GET", "/metrics")[1]) == ['mskmock_fault_rules_fired_total{action="error"} 0']
    assert 'profile="provisioned"} 1' in call(broker, "GET", at(CREATED, "/metrics"))[1].decode()

    # a reset of the created cluster leaves the configured one's topics
    r = ok(broker, "POST", at(CREATED, "/reset"), {})
    assert r["topics_deleted"] == 1 and r["fault_rules_removed"] == 1
    assert ok(broker, "GET", at(CREATED, "/topics"))["topics"] == []
    assert [t["name"] for t in ok(broker, "GET", "/v1/topics")["topics"]] == ["orders"]
    ok(broker, "POST", "/v1/reset", {})


# -- what is not a cluster's, and what is not there ---------------------------------------------

def test_unknown_cluster_and_process_routes(broker, created):
    since = broker.log_size()
    status, e = call(broker, "GET", at("nope", "/brokers"))
    assert status == 404 and e["code"] == "NotFound" and "no cluster 'nope'" in e["message"]
    assert broker.wait_for_log(r"admin: .*GET /v1/clusters/nope/brokers 404 no cluster 'nope'", since=since)
    unknown = created.rsplit("/", 1)[0] + "/00000000-0000-0000-0000-000000000000-2"
    status, e = call(broker, "POST", at(unknown, "/brokers/1/down"))
    assert status == 404 and e["code"] == "NotFound" and unknown in e["message"]
    # routes of the process are at their own path only
    for path in ("/health", "/ready", "/iam", "/iam/reload", "/clusters"):
        method = "POST" if path.endswith("reload") else "GET"
        status, e = call(broker, method, at(CREATED, path), {} if method == "POST" else None)
        assert status == 404 and e["code"] == "NotFound" and "no route" in e["message"], path
    status, e = call(broker, "GET", at(CREATED, "/nothing"))
    assert status == 404 and "no route" in e["message"]
    status, e = call(broker, "PATCH", at(CREATED, "/brokers"))
    assert status == 405 and e["code"] == "MethodNotAllowed"


def test_creating_and_deleting_clusters_with_a_token(tmp_path):
    token = "clusters-admin-token"
    ids = iam.write_identities(tmp_path / "identities.json")
    (tmp_path / "data").mkdir()
    b = AwsBroker(ids, broker_count=1, data_dir=tmp_path / "data",
                  config={"aws.cluster.transition.ms": 4000, "admin.token": token})
    auth = {"Authorization": "Bearer " + token}
    with running(b):
        arn = create_provisioned(b, "doomed", brokers=1)
        status, j = call(b, "GET", "/v1/clusters", headers=auth)
        doomed = next(c for c in j["clusters"] if c["name"] == "doomed")
        assert status == 200 and doomed["state"] == "CREATING" and len(doomed["brokers"]) == 1
        # a CREATING cluster's listeners are up already: its calls are served
        assert call(b, "GET", at("doomed", "/brokers"), headers=auth)[0] == 200
        # without the token nothing under /v1/clusters/ is told, not even which exist
        for path in (at("doomed", "/brokers"), at("nope", "/brokers"), "/v1/clusters"):
            status, e = call(b, "GET", path)
            assert status == 401 and e["code"] == "Unauthorized", path

        kafka(b).delete_cluster(ClusterArn=arn)
        since = b.log_size()
        status, j = call(b, "GET", "/v1/clusters", headers=auth)
        doomed = next(c for c in j["clusters"] if c["name"] == "doomed")
        assert doomed["state"] == "DELETING" and doomed["brokers"] == [] and doomed["bootstrap"] == {}
        for path in (at("doomed", "/brokers"), at(arn, "/topics")):
            status, e = call(b, "GET", path, headers=auth)
            assert status == 404 and e["code"] == "NotFound" and "DELETING" in e["message"], path
        assert b.wait_for_log(r"admin: .*GET /v1/clusters/doomed/brokers 404 cluster .* is DELETING", since=since)
        # once gone it is not listed, and unknown
        wait_until(lambda: all(c["name"] != "doomed"
                               for c in call(b, "GET", "/v1/clusters", headers=auth)[1]["clusters"]),
                   20, "the deleted cluster gone")
        status, e = call(b, "GET", at("doomed"), headers=auth)
        assert status == 404 and "no cluster 'doomed'" in e["message"]
