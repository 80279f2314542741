"""Produce and consume 10,000 records with every client and codec, across a broker restart.

One broker serves the whole module (each case uses its own topic), and a second, in the
provisioned profile, serves kcat: Debian's kcat carries librdkafka 2.0.2, which speaks
Metadata v0-4 only, below MSK Serverless's floor (test_api_versions.py shows it refused there),
while provisioned MSK, like the provisioned profile, has no floors. A client whose program is
not built is skipped locally; under CI (CI set) it fails, since .ci/run builds every client.
"""

import os

import pytest

from harness import ALL_CLIENTS, Broker, client_command, run_client, running

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
COUNT = 10_000
PARTITIONS = 3
IDEMPOTENT_CODECS = ("none", "zstd")


@pytest.fixture(scope="module")
def provisioned():
    with running(Broker(config={"profile": "provisioned"})) as b:
        yield b


def broker_for(lang, request):
    return request.getfixturevalue("provisioned" if lang == "kcat" else "broker")


def require_client(lang):
    if client_command(lang) is not None:
        return
    if os.environ.get("CI"):
        pytest.fail("%s client is not built (tools/install-deps --test builds it)" % lang)
    pytest.skip("%s client is not built" % lang)


def roundtrip(broker, lang, topic, codec, idempotent=False):
    bootstrap = broker.bootstrap
    assert run_client(lang, ["create-topic", "--bootstrap", bootstrap, "--topic", topic,
                             "--partitions", PARTITIONS], timeout=60) == {"created": topic}

    produce = ["produce", "--bootstrap", bootstrap, "--topic", topic, "--count", COUNT,
               "--partitions", PARTITIONS, "--compression", codec]
    if idempotent:
        produce.append("--idempotent")
    assert run_client(lang, produce, timeout=180) == {"produced": COUNT}

    consume = ["consume", "--bootstrap", bootstrap, "--topic", topic, "--count", COUNT,
               "--partitions", PARTITIONS]
    expected = {"consumed": COUNT,
                "per_partition": {str(p): len(range(p, COUNT, PARTITIONS))
                                  for p in range(PARTITIONS)}}
    assert run_client(lang, consume, timeout=120) == expected

    broker.restart()
    assert run_client(lang, consume, timeout=120) == expected, "after restart"


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("lang", ALL_CLIENTS)
def test_roundtrip(request, lang, codec):
    require_client(lang)
    roundtrip(broker_for(lang, request), lang, "rt-%s-%s" % (lang, codec), codec)


@pytest.mark.parametrize("codec", IDEMPOTENT_CODECS)
@pytest.mark.parametrize("lang", ALL_CLIENTS)
def test_roundtrip_idempotent(request, lang, codec):
    require_client(lang)
    roundtrip(broker_for(lang, request), lang, "rt-idem-%s-%s" % (lang, codec), codec, idempotent=True)


def test_acknowledged_records_survive_kill9(broker):
    """kill -9 right after the producer saw every ack loses nothing."""
    topic = "rt-kill9"
    b = broker.bootstrap
    run_client("python", ["create-topic", "--bootstrap", b, "--topic", topic,
                          "--partitions", PARTITIONS], timeout=60)
    assert run_client("python", ["produce", "--bootstrap", b, "--topic", topic, "--count", COUNT,
                                 "--partitions", PARTITIONS, "--compression", "lz4"],
                      timeout=180) == {"produced": COUNT}
    broker.kill9()
    got = run_client("python", ["consume", "--bootstrap", broker.bootstrap, "--topic", topic,
                                "--count", COUNT, "--partitions", PARTITIONS], timeout=120)
    assert got["consumed"] == COUNT
