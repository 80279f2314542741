"""GET /metrics (docs/admin-api.md, "Metrics"): the Prometheus text exposition, read with the
official Python parser (prometheus_client), after real traffic: confluent-kafka producing,
consuming in a group, a raw produce to a topic that does not exist, requests that close the
connection, and SASL/OAUTHBEARER logins that succeed and fail on the SASL_PLAINTEXT listener.

One broker for the module (IamBroker: plaintext and SASL listeners), so every test reads
counters that the others may also have moved: each asserts on differences across its own
traffic, or on the topic and group names it alone uses.
"""

import time
import urllib.request

import pytest

import iam
import kafka_wire as kw
from harness import running

confluent_kafka = pytest.importorskip("confluent_kafka")
prometheus_parser = pytest.importorskip("prometheus_client.parser")
from confluent_kafka import Consumer, Producer  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    ids = iam.write_identities(tmp_path_factory.mktemp("metrics-ids") / "identities.json")
    b = iam.IamBroker(ids, broker_count=1, credentials_endpoint=False,
                      config={"group.initial.rebalance.delay.ms": 0},
                      data_dir=tmp_path_factory.mktemp("metrics"))
    with running(b):
        yield b


def scrape_text(broker):
    with urllib.request.urlopen(broker.admin_url + "/metrics", timeout=10) as r:
        assert r.status == 200
        assert r.headers["Content-Type"] == CONTENT_TYPE
        return r.read().decode()


class Scrape:
    """One scrape, parsed: families by name, and sample values by (name, labels)."""

    def __init__(self, broker):
        self.text = scrape_text(broker)
        self.families = {f.name: f for f in prometheus_parser.text_string_to_metric_families(self.text)}
        self.samples = {}
        for f in self.families.values():
            for s in f.samples:
                key = (s.name, tuple(sorted(s.labels.items())))
                assert key not in self.samples, "duplicate series %r" % (key,)
                self.samples[key] = s.value

    def value(self, name, **labels):
        """The sample's value; 0 for a labelled counter series not (yet) exposed."""
        return self.samples.get((name, tuple(sorted(labels.items()))), 0.0)

    def series(self, name, **match):
        """{labels: value} of every sample of name whose labels include match."""
        return {k[1]: v for k, v in self.samples.items()
                if k[0] == name and all(dict(k[1]).get(lk) == lv for lk, lv in match.items())}

    def requests(self, api, error=None):
        return sum(self.series("mskmock_requests_total", api=api,
                               **({"error": error} if error else {})).values())


def create_topic(bootstrap, name, partitions):
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, num_partitions=partitions, replication_factor=1)])[name].result(20)


def wait_for(pred, timeout=10, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = pred()
        if got:
            return got
        time.sleep(0.1)
    pytest.fail("timed out waiting for " + what)


# -- the format --------------------------------------------------------------------------------

def test_exposition_is_valid_and_typed(broker):
    m = Scrape(broker)
    assert m.value("mskmock_up") == 1
    info = m.series("mskmock_build_info")
    assert len(info) == 1 and dict(next(iter(info)))["profile"] == "serverless"
    # every family has HELP and TYPE, and counters follow the _total convention
    for line in m.text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, typ = line.split(" ", 3)
            assert "# HELP %s " % name in m.text
            assert typ in ("counter", "gauge", "histogram"), line
            assert name.endswith("_total") == (typ == "counter"), line
            assert name.startswith("mskmock_"), line
    expected = {
        "mskmock_requests": "counter", "mskmock_request_duration_seconds": "histogram",
        "mskmock_connections": "gauge", "mskmock_connections_opened": "counter",
        "mskmock_sasl_authentications": "counter", "mskmock_sasl_reauthentications": "counter",
        "mskmock_throttle_seconds": "counter", "mskmock_throttles": "counter",
        "mskmock_topics": "gauge", "mskmock_partitions": "gauge",
        "mskmock_topic_bytes_in": "counter", "mskmock_topic_bytes_out": "counter",
        "mskmock_topic_records_in": "counter", "mskmock_groups": "gauge",
        "mskmock_group_rebalances": "counter", "mskmock_group_generations": "counter",
        "mskmock_storage_commit_duration_seconds": "histogram", "mskmock_storage_database_bytes": "gauge",
        "mskmock_storage_wal_bytes": "gauge", "mskmock_storage_segment_bytes": "gauge",
        "mskmock_storage_segments": "gauge", "mskmock_fault_rules_fired": "counter",
        "mskmock_process_resident_memory_bytes": "gauge", "mskmock_uptime_seconds": "gauge",
    }
    for name, typ in expected.items():
        assert name in m.families, "no family %s in\n%s" % (name, m.text)
        assert m.families[name].type == typ, name
    assert m.value("mskmock_process_resident_memory_bytes") > 1 << 20
    assert m.value("mskmock_storage_database_bytes") > 0
    # scrapes are logged at debug (as health checks), not once per scrape interval at info
    assert "GET /metrics" not in broker.log_text()


# -- traffic -----------------------------------------------------------------------------------

def test_produce_consume_group(broker):
    topic, group, n, payload = "metrics-traffic", "metrics-group", 200, b"p" * 100
    before = Scrape(broker)
    create_topic(broker.bootstrap, topic, 2)
    p = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 5})
    for i in range(n):
        p.produce(topic, key=b"k%d" % i, value=payload)
    assert p.flush(30) == 0

    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group,
                  "auto.offset.reset": "earliest", "enable.auto.commit": False})
    try:
        c.subscribe([topic])
        got, deadline = 0, time.monotonic() + 60
        while got < n and time.monotonic() < deadline:
            msg = c.poll(0.5)
            if msg is not None and not msg.error():
                got += 1
        assert got == n
        c.commit(asynchronous=False)
        during = Scrape(broker)
    finally:
        c.close()
    after = Scrape(broker)

    for api in ("Produce", "Fetch", "JoinGroup", "SyncGroup", "OffsetCommit", "CreateTopics", "Metadata"):
        assert during.requests(api, "NONE") > before.requests(api, "NONE"), api
    # the version label is the one the client used (librdkafka's newest Produce we serve)
    versions = {dict(k)["version"] for k in during.series("mskmock_requests_total", api="Produce", error="NONE")}
    assert versions and all(v.isdigit() for v in versions)

    assert after.value("mskmock_topic_records_in_total", topic=topic) == n
    assert after.value("mskmock_topic_bytes_in_total", topic=topic) >= n * len(payload)
    assert after.value("mskmock_topic_bytes_out_total", topic=topic) >= n * len(payload)
    assert after.value("mskmock_topics") >= 1 and after.value("mskmock_partitions") >= 2

    # the group was Stable while its member consumed; joining started a rebalance and a generation
    assert during.value("mskmock_groups", state="Stable") >= 1
    assert during.value("mskmock_group_rebalances_total") > before.value("mskmock_group_rebalances_total")
    assert during.value("mskmock_group_generations_total") > before.value("mskmock_group_generations_total")
    assert sum(after.series("mskmock_groups").values()) >= 1

    assert during.value("mskmock_connections", listener="plaintext") > 0
    assert during.value("mskmock_connections_opened_total", listener="plaintext") > \
        before.value("mskmock_connections_opened_total", listener="plaintext")
    assert during.series("mskmock_connections", listener="iam")  # every listener on has its series

    # acknowledged produces waited for storage commits
    assert after.value("mskmock_storage_commit_duration_seconds_count") > \
        before.value("mskmock_storage_commit_duration_seconds_count")
    check_histogram(after, "mskmock_storage_commit_duration_seconds")
    for api in ("Produce", "Fetch", "JoinGroup"):
        check_histogram(after, "mskmock_request_duration_seconds", api=api)


def check_histogram(m, name, **labels):
    """Cumulative buckets that end in +Inf == _count, and a _sum that fits."""
    buckets = sorted(((float(dict(k)["le"]), v) for k, v in m.series(name + "_bucket", **labels).items()),
                     key=lambda b: b[0])
    count = m.value(name + "_count", **labels)
    assert count > 0, (name, labels)
    assert buckets[-1] == (float("inf"), count)
    assert all(a[1] <= b[1] for a, b in zip(buckets, buckets[1:])), buckets
    total = m.value(name + "_sum", **labels)
    assert total >= 0
    # every observation is at most its bucket's bound: the sum cannot exceed what the buckets allow
    finite = [b for b in buckets if b[0] != float("inf")]
    if buckets[-2][1] == count:
        bound, prev = 0.0, 0
        for le, cum in finite:
            bound += (cum - prev) * le
            prev = cum
        assert total <= bound + 1e-6, (name, labels, total, bound)


def test_refused_request_counts_its_error(broker):
    """A produce to a topic that does not exist: answered, with UNKNOWN_TOPIC_OR_PARTITION."""
    before = Scrape(broker)
    batch = kw.record_batch([(None, b"x", ())])
    with kw.connect(broker.port) as s:
        s.sendall(kw.produce_request(kw.PRODUCE_V, 1, "metrics-raw", "metrics-no-such-topic", 0, batch))
        corr, body = kw.recv_frame(s)
    assert corr == 1
    err = kw.parse_produce(kw.PRODUCE_V, body)[0]["partitions"][0]["error"]
    assert err == 3  # UNKNOWN_TOPIC_OR_PARTITION
    after = Scrape(broker)
    labels = dict(api="Produce", version=str(kw.PRODUCE_V), error="UNKNOWN_TOPIC_OR_PARTITION")
    assert after.value("mskmock_requests_total", **labels) == before.value("mskmock_requests_total", **labels) + 1


def test_requests_closed_unanswered(broker):
    """An API key nobody serves, and Metadata below MSK Serverless' floor: the connection closes."""
    before = Scrape(broker)
    with kw.connect(broker.port) as s:
        s.sendall(kw.request(99, 0, 1, "metrics-raw", b""))
        assert kw.wait_closed(s) is None
    with kw.connect(broker.port) as s:
        s.sendall(kw.metadata_request(1, 1, "metrics-raw", None))
        assert kw.wait_closed(s) is None

    def counted():
        m = Scrape(broker)
        return m if m.value("mskmock_requests_total", api="Metadata", version="1", error="CONNECTION_CLOSED") > \
            before.value("mskmock_requests_total", api="Metadata", version="1", error="CONNECTION_CLOSED") else None

    after = wait_for(counted, what="the closed Metadata v1 in the metrics")
    unknown = dict(api="Unknown", version="unsupported", error="CONNECTION_CLOSED")
    assert after.value("mskmock_requests_total", **unknown) == before.value("mskmock_requests_total", **unknown) + 1


# -- SASL --------------------------------------------------------------------------------------

def sasl_login(broker, identity):
    """OAUTHBEARER on the SASL_PLAINTEXT listener with identity's keys: the SaslAuthenticate answer."""
    with iam.SaslConn(broker.sasl_plaintext_port, client_id="metrics-sasl") as conn:
        conn.api_versions()
        err, _ = conn.handshake("OAUTHBEARER")
        assert err == 0
        token, _ = iam.oauthbearer_token(identity)
        return conn.authenticate(iam.oauthbearer_message(token))


def test_sasl_outcomes(broker):
    pytest.importorskip("aws_msk_iam_sasl_signer")
    mech = dict(mechanism="OAUTHBEARER")
    before = Scrape(broker)
    assert sasl_login(broker, iam.ALICE)["error"] == 0
    wrong_secret = iam.Identity(iam.ALICE.access_key_id, "not/the+right/secret0123456789abcdefghij",
                                iam.ALICE.principal)
    assert sasl_login(broker, wrong_secret)["error"] == iam.ERR_SASL_AUTHENTICATION_FAILED
    stranger = iam.Identity("AKIAMSKMOCKNOBODY999", "s3cret/of+nobody0123456789abcdefghijklmn",
                            "arn:aws:iam::%s:user/nobody" % iam.ACCOUNT)
    assert sasl_login(broker, stranger)["error"] == iam.ERR_SASL_AUTHENTICATION_FAILED
    after = Scrape(broker)

    def delta(**labels):
        name = "mskmock_sasl_authentications_total"
        return after.value(name, **mech, **labels) - before.value(name, **mech, **labels)

    assert delta(outcome="success") == 1
    assert delta(outcome="failure", reason="signature") == 1
    assert delta(outcome="failure", reason="unknown_key") == 1
    # every failure carries a reason from the fixed set, never free text
    reasons = {dict(k)["reason"] for k in after.series("mskmock_sasl_authentications_total", outcome="failure")}
    assert reasons <= {"too_many_connects", "invalid_payload", "region", "host", "unknown_key", "session_token",
                       "signature", "token_expired", "future_date", "credentials_expired",
                       "credentials_superseded", "session_expired", "session_too_short", "not_authorized",
                       "principal_changed", "internal_error"}
    # the refused SaslAuthenticate requests were answered with their error before the close
    assert after.requests("SaslAuthenticate", "SASL_AUTHENTICATION_FAILED") - \
        before.requests("SaslAuthenticate", "SASL_AUTHENTICATION_FAILED") == 2
    assert after.value("mskmock_connections_opened_total", listener="sasl_plaintext") - \
        before.value("mskmock_connections_opened_total", listener="sasl_plaintext") == 3
