"""Group configs (KIP-848, config resource type 32) with franz-go and confluent-kafka.

Regression for issue 30 item 5: franz-go's own tests describe and alter a group's configs and
got INVALID_REQUEST "Unsupported resource type 32". Apache Kafka 4.0 answers DescribeConfigs on
a GROUP with its GroupConfig set (defaults for a group that does not exist), and lets
IncrementalAlterConfigs and AlterConfigs set them within the broker's bounds
(group.consumer.min/max.*), INVALID_CONFIG with GroupConfig.validate's message otherwise. The
module's broker runs the kafka profile (group.configs.enable); the serverless profile answers
INVALID_REQUEST, as a broker without group configs does. IAM: kafka-cluster:DescribeGroup and
AlterGroup on the group's ARN.
"""

import json
import urllib.request

import pytest

import authz
import iam
from harness import Broker, run_client, running

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import Consumer, TopicPartition  # noqa: E402
from confluent_kafka.admin import (AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource,  # noqa: E402
                                   ConfigSource, NewTopic, ResourceType)

DEFAULTS = {  # Kafka 4.0's GroupConfig with Kafka's broker defaults (mskmock's too)
    "consumer.session.timeout.ms": "45000", "consumer.heartbeat.interval.ms": "5000",
    "share.session.timeout.ms": "45000", "share.heartbeat.interval.ms": "5000",
    "share.record.lock.duration.ms": "30000", "share.auto.offset.reset": "latest",
}
DEFAULT_CONFIG, GROUP_CONFIG = 5, 8  # DescribeConfigs' config sources
INVALID_CONFIG, INVALID_REQUEST, GROUP_AUTHORIZATION_FAILED = 40, 42, 30


@pytest.fixture(scope="module")
def broker_config():
    return {"profile": "kafka"}


def group_config(broker, group, *sets, deletes=()):
    """franz-go: one IncrementalAlterConfigs (when asked), then DescribeConfigs of the group."""
    args = ["group-config", "--bootstrap", broker.bootstrap, "--group", group]
    for s in sets:
        args += ["--set", s]
    for d in deletes:
        args += ["--delete", d]
    return run_client("go", args)


def values(described):
    return {k: (v["value"], v["source"]) for k, v in described["configs"].items()}


def test_describe_configs_of_a_group_answers_its_configs(broker):
    res = group_config(broker, "never-joined")
    assert res["alter"] is None
    d = res["describe"]
    assert d["error_code"] == 0, d
    assert values(d) == {k: (v, DEFAULT_CONFIG) for k, v in DEFAULTS.items()}
    assert d["configs"]["consumer.session.timeout.ms"]["type"] == 3  # INT
    assert d["configs"]["share.auto.offset.reset"]["type"] == 2  # STRING


def test_incremental_alter_configs_sets_group_configs_within_bounds(broker):
    res = group_config(broker, "tuned", "consumer.session.timeout.ms=50000", "consumer.heartbeat.interval.ms=6000")
    assert res["alter"] == {"error_code": 0, "error_message": None}, res
    got = values(res["describe"])
    assert got["consumer.session.timeout.ms"] == ("50000", GROUP_CONFIG)
    assert got["consumer.heartbeat.interval.ms"] == ("6000", GROUP_CONFIG)
    assert values(group_config(broker, "untuned")["describe"])["consumer.session.timeout.ms"] == ("45000",
                                                                                                  DEFAULT_CONFIG)
    since = broker.log_size()
    refused = [
        ("consumer.session.timeout.ms=70000",
         "consumer.session.timeout.ms must be less than or equal to group.consumer.max.session.timeout.ms"),
        ("consumer.heartbeat.interval.ms=1000",
         "consumer.heartbeat.interval.ms must be greater than or equal to group.consumer.min.heartbeat.interval.ms"),
        ("session.timeout.ms=50000", "Unknown group config name: session.timeout.ms"),
        ("share.auto.offset.reset=none",
         "Invalid value none for configuration share.auto.offset.reset: String must be one of: latest, earliest"),
    ]
    for setting, message in refused:
        res = group_config(broker, "tuned", setting)
        assert res["alter"] == {"error_code": INVALID_CONFIG, "error_message": message}, res
        assert values(res["describe"])["consumer.session.timeout.ms"] == ("50000", GROUP_CONFIG)  # unchanged
    assert broker.wait_for_log(r"refused error=INVALID_CONFIG\(40\): group 'tuned' configs: Unknown group config "
                               r"name: session.timeout.ms", since=since)
    res = group_config(broker, "tuned", deletes=["consumer.heartbeat.interval.ms"])
    assert res["alter"]["error_code"] == 0
    assert values(res["describe"])["consumer.heartbeat.interval.ms"] == ("5000", DEFAULT_CONFIG)


def test_confluent_kafka_describes_and_alters_group_configs(broker):
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    res = ConfigResource(ResourceType.GROUP, "rdkafka-group", incremental_configs=[
        ConfigEntry("share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET)])
    admin.incremental_alter_configs([res])[res].result(timeout=20)
    [(_, fut)] = admin.describe_configs([ConfigResource(ResourceType.GROUP, "rdkafka-group")]).items()
    entries = fut.result(timeout=20)
    assert {k: e.value for k, e in entries.items()} == dict(DEFAULTS, **{"share.auto.offset.reset": "earliest"})
    assert entries["share.auto.offset.reset"].source == ConfigSource.GROUP_CONFIG.value
    assert entries["consumer.session.timeout.ms"].source == ConfigSource.DEFAULT_CONFIG.value
    bad = ConfigResource(ResourceType.GROUP, "rdkafka-group", incremental_configs=[
        ConfigEntry("consumer.session.timeout.ms", "1", incremental_operation=AlterConfigOpType.SET)])
    with pytest.raises(confluent_kafka.KafkaException) as ei:
        admin.incremental_alter_configs([bad])[bad].result(timeout=20)
    assert ei.value.args[0].code() == confluent_kafka.KafkaError.INVALID_CONFIG


def test_group_configs_survive_restart_and_show_in_the_admin_api(broker):
    assert group_config(broker, "kept-group", "consumer.session.timeout.ms=55000")["alter"]["error_code"] == 0
    # the group exists once it commits an offset; its view lists its overrides
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic("kept-topic", 1)])["kept-topic"].result(timeout=20)
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "kept-group", "enable.auto.commit": False})
    c.commit(offsets=[TopicPartition("kept-topic", 0, 0)], asynchronous=False)
    c.close()

    def admin_view():
        with urllib.request.urlopen(broker.admin_url + "/v1/groups/kept-group", timeout=10) as r:
            return json.loads(r.read())["configs"]

    assert admin_view() == {"consumer.session.timeout.ms": "55000"}
    broker.restart()
    assert values(group_config(broker, "kept-group")["describe"])["consumer.session.timeout.ms"] == ("55000",
                                                                                                    GROUP_CONFIG)
    assert admin_view() == {"consumer.session.timeout.ms": "55000"}


def test_serverless_refuses_group_config_resources(tmp_path):
    with running(Broker(data_dir=tmp_path)) as b:
        since = b.log_size()
        res = group_config(b, "g", "consumer.session.timeout.ms=50000")
        unsupported = {"error_code": INVALID_REQUEST, "error_message": "Unsupported resource type 32"}
        assert res["alter"] == unsupported, res
        assert {k: res["describe"][k] for k in unsupported} == unsupported, res
        assert b.wait_for_log(r"refused error=INVALID_REQUEST\(42\): resource type 32 is not served \(GROUP: "
                              r"group.configs.enable=false", since=since)


def test_iam_group_configs_need_describe_group_and_alter_group(tmp_path):
    """The plaintext listener acts as a principal with DescribeGroup on groups readable-*, and
    AlterGroup on none: it reads their configs, changes none, and reads no other group's."""
    user = authz.user("group-reader", 36, authz.allow("kafka-cluster:Connect", authz.CLUSTER_ARN),
                      authz.allow("kafka-cluster:DescribeGroup", authz.group_arn("readable-*")))
    ids = iam.write_identities(tmp_path / "identities.json", identities=(user,), roles=())
    cfg = dict(iam.iam_config(ids), **authz.CONFIG, profile="kafka")
    cfg["plaintext.principal"] = user.principal
    with running(Broker(config=cfg)) as b:
        since = b.log_size()
        res = group_config(b, "readable-1")
        assert res["describe"]["error_code"] == 0 and len(res["describe"]["configs"]) == len(DEFAULTS)
        res = group_config(b, "readable-1", "consumer.session.timeout.ms=50000")
        assert res["alter"]["error_code"] == GROUP_AUTHORIZATION_FAILED, res
        authz.refusal(b, since, r"GROUP_AUTHORIZATION_FAILED(30)",
                      r"kafka-cluster:AlterGroup on .*group/.*/readable-1: no statement allowed it")
        assert values(res["describe"])["consumer.session.timeout.ms"] == ("45000", DEFAULT_CONFIG)
        assert group_config(b, "other-1")["describe"]["error_code"] == GROUP_AUTHORIZATION_FAILED
