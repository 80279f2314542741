"""Committed offset metadata is a string with a length, not a C string (issue 30, librdkafka 0099).

librdkafka's test 0099_commit_metadata commits the 12 bytes "Hello\\0world!" and reads back all 12
from Apache Kafka; mskmock returned 5, for OffsetCommit and TxnOffsetCommit alike. Python's
confluent-kafka refuses a str with a NUL before it reaches librdkafka, so the same commits go
through kafka-clients (a Java string may hold U+0000), and the bytes are read back again over the
raw wire after a restart, from storage.
"""

import pytest

import kafka_wire as kw
from harness import run_client

METADATA = "Hello\0world!"
TOPIC, GROUP = "commit-metadata", "commit-metadata-group"


@pytest.fixture(scope="module")
def broker_config():
    return {"profile": "kafka"}


def offset_fetch(port, group, topic, partitions):
    s = kw.connect(kw.coordinator_port(port, group))
    try:
        s.sendall(kw.offset_fetch_request(5, 2, "metadata-test", group, topic, partitions))
        return kw.parse_offset_fetch(5, kw.recv_frame(s)[1])
    finally:
        s.close()


def test_commit_metadata_with_nul_keeps_every_byte(broker):
    s = kw.connect(broker.port)
    s.sendall(kw.create_topics_request(kw.CREATE_TOPICS_V, 1, "metadata-test", TOPIC, 2, 1))
    created = kw.parse_create_topics(kw.CREATE_TOPICS_V, kw.recv_frame(s)[1])
    assert [(t["name"], t["error"]) for t in created] == [(TOPIC, 0)], created
    s.close()

    res = run_client("java", ["commit-metadata", "--bootstrap", broker.bootstrap, "--topic", TOPIC,
                              "--group", GROUP, "--metadata-hex", METADATA.encode().hex()])
    assert res["ok"], res
    assert bytes.fromhex(res["plain"]) == METADATA.encode()          # OffsetCommit
    assert bytes.fromhex(res["transactional"]) == METADATA.encode()  # TxnOffsetCommit, then EndTxn

    broker.restart()
    got = offset_fetch(broker.port, GROUP, TOPIC, [0, 1])
    assert got["partitions"][(TOPIC, 0)]["offset"] == 7
    assert got["partitions"][(TOPIC, 0)]["metadata"] == METADATA
    assert got["partitions"][(TOPIC, 1)]["offset"] == 9
    assert got["partitions"][(TOPIC, 1)]["metadata"] == METADATA
