"""Topic configs that do what they say, with real clients (issue: topic semantics).

- cleanup.policy=compact: 10,000 records over 100 keys keep the newest value of each key at its
  original offset, as librdkafka and a Kafka Connect-style Java reader (KafkaBasedLog: every
  partition from the beginning to the end offsets) see it; tombstones go after
  delete.retention.ms; records without a key are refused; kill -9 in the middle of a compaction
  loses no key's newest value and leaves every offset where it was.
- compression.type: an lz4 (or other) producer's batches are fetched in the topic's codec and
  read back by every client of the suite (Java, librdkafka, kafkajs, franz-go, kcat).
- message.timestamp.difference.max.ms: records outside the window get INVALID_TIMESTAMP from the
  Java and librdkafka producers.
- DescribeConfigs from the Java AdminClient: sources, read-only flags, synonyms, documentation.
- The replication factor CreateTopics takes is what Metadata lists.
"""

import calendar
import json
import random
import threading
import time
import urllib.request

import pytest

import kafka_wire as kw
from harness import Broker, client_command, run_client, running

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

# Tombstones live this long after the compaction that kept them. A read_all (a new librdkafka
# consumer each time) takes about 0.5 s on an idle machine and seconds with other test workers
# busy, and test_tombstones_go_after_delete_retention must see them in that window.
TOMBSTONE_MS = 6000


@pytest.fixture(scope="module")
def broker_config():
    # the background cleaner looks often; tombstones live TOMBSTONE_MS after the compaction that kept them
    return {"log.cleaner.backoff.ms": 100, "log.cleaner.delete.retention.ms": TOMBSTONE_MS}


def require(lang):
    if client_command(lang) is None:
        pytest.skip("%s client is not built" % lang)


def admin_post(broker, path, body=None):
    req = urllib.request.Request(broker.admin_url + path, data=json.dumps(body or {}).encode(), method="POST")
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read())


def create(bootstrap, name, partitions=1, rf=-1, **config):
    a = AdminClient({"bootstrap.servers": bootstrap})
    cfg = {k.replace("_", "."): str(v) for k, v in config.items()}
    for f in a.create_topics([NewTopic(name, partitions, rf, config=cfg)]).values():
        f.result(30)


def produce_keyed(bootstrap, topic, records, **conf):
    """Produce [(key, value)] in order; returns [(partition, offset)] of each, as acknowledged."""
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, **conf})
    acked = [None] * len(records)
    errors = []

    def cb(i):
        def on(err, msg):
            if err:
                errors.append(err)
            else:
                acked[i] = (msg.partition(), msg.offset())
        return on

    for i, (k, v) in enumerate(records):
        while True:
            try:
                p.produce(topic, key=k, value=v, on_delivery=cb(i))
                break
            except BufferError:
                p.poll(0.1)
        p.poll(0)
    assert p.flush(60) == 0
    assert not errors, errors[:3]
    return acked


def read_all(bootstrap, topic, partitions=1, timeout=30):
    """Every record from the beginning to the high watermarks: [(partition, offset, key, value)]."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "read-%s-%f" % (topic, time.time()),
                  "enable.auto.commit": False, "enable.partition.eof": True})
    tps = [TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)]
    c.assign(tps)
    out, eof = [], set()
    deadline = time.monotonic() + timeout
    try:
        while len(eof) < partitions:
            assert time.monotonic() < deadline, "did not reach the end of %s" % topic
            m = c.poll(0.5)
            if m is None:
                continue
            if m.error():
                if m.error().code() == KafkaError._PARTITION_EOF:
                    eof.add(m.partition())
                    continue
                raise AssertionError(m.error())
            eof.discard(m.partition())
            out.append((m.partition(), m.offset(), m.key(), m.value()))
    finally:
        c.close()
    return out


def expected_latest(records, acked):
    latest = {}
    for (k, v), (p, off) in zip(records, acked):
        latest[k] = (p, off, v)
    return latest


# -- compaction ---------------------------------------------------------------------------

def test_compacted_topic_keeps_the_newest_value_of_each_key_at_its_offset(broker):
    b, topic = broker.bootstrap, "compact-10k"
    create(b, topic, partitions=3, cleanup_policy="compact")
    records = [(b"key-%d" % (i % 100), b"value-%d" % i) for i in range(10_000)]
    acked = produce_keyed(b, topic, records, **{"compression.type": "lz4", "enable.idempotence": True})
    want = expected_latest(records, acked)
    # the background cleaner may have compacted some of it already: force the rest now
    admin_post(broker, "/v1/compaction", {"force": True})
    got = read_all(b, topic, partitions=3)
    assert len(got) == 100
    assert {k: (p, off, v) for p, off, k, v in got} == want  # offsets unchanged, newest values
    assert broker.wait_for_log(r"compaction: compact-10k-\d starts", timeout=1)
    # the high watermarks did not move: offsets are never reused
    c = Consumer({"bootstrap.servers": b, "group.id": "hw"})
    assert sum(c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in range(3)) == 10_000
    c.close()
    # a Kafka Connect-style reader (KafkaBasedLog) sees the same
    if client_command("java") is not None:
        out = run_client("java", ["compacted-read", "--bootstrap", b, "--topic", topic], timeout=120)
        assert out["ok"], out
        assert out["records"] == 100
        assert {k.encode(): (off, v.encode()) for k, (off, v) in out["latest"].items()} == \
            {k: (off, v) for k, (p, off, v) in want.items()}


def test_tombstones_go_after_delete_retention(broker):
    b, topic = broker.bootstrap, "compact-tombstones"
    create(b, topic, cleanup_policy="compact")
    # values and tombstones in one produce: with two, the background cleaner could pass between
    # them, and the tombstones alone are then under min.cleanable.dirty.ratio (0.5) of the log, so
    # nothing more is compacted (Kafka's rule; this test failed so under a busy second worker)
    since = broker.log_size()
    produce_keyed(b, topic, [(b"k%d" % i, b"v%d" % i) for i in range(10)] + [(b"k%d" % i, None) for i in range(5)])
    # the background cleaner (log.cleaner.backoff.ms=100) compacts on its own: the deleted keys'
    # values go, their tombstones stay so that a consumer catching up sees the deletes
    deadline = time.monotonic() + 20 + TOMBSTONE_MS / 1000
    while True:
        got = read_all(b, topic)
        if len(got) == 10:
            break
        assert time.monotonic() < deadline, got
        time.sleep(0.2)
    assert sorted(k for _, _, k, v in got if v is None) == [b"k%d" % i for i in range(5)]
    assert broker.wait_for_log(r"compaction: compact-tombstones-0 offsets", since=since, timeout=1)
    # ... until delete.retention.ms after that compaction; their batch, the partition's last, is
    # emptied but stays, so that a consumer still reaches the end of the log (read_all does)
    while True:
        got = read_all(b, topic)
        if len(got) == 5:
            break
        assert time.monotonic() < deadline, got
        time.sleep(0.2)
    assert sorted((k, v) for _, _, k, v in got) == [(b"k%d" % i, b"v%d" % i) for i in range(5, 10)]
    assert broker.wait_for_log(r"compaction: compact-tombstones-0 .* 5 tombstone\(s\)", since=since, timeout=1)


def test_record_without_key_is_refused_on_a_compacted_topic(broker):
    b, topic = broker.bootstrap, "compact-nokey"
    create(b, topic, cleanup_policy="compact")
    p = Producer({"bootstrap.servers": b, "retries": 0})
    errs = []
    p.produce(topic, value=b"no key", on_delivery=lambda err, msg: errs.append(err))
    p.flush(30)
    p.produce(topic, key=b"k", value=b"keyed", on_delivery=lambda err, msg: errs.append(err))
    p.flush(30)
    assert errs[0] is not None and errs[0].code() == KafkaError.INVALID_RECORD, errs
    assert errs[1] is None  # a batch of keyed records goes in (one bad record fails its whole batch, as in Kafka)
    line = broker.wait_for_log(r"INVALID_RECORD\(87\): compact-nokey-0: .*without key", timeout=2)
    assert line, broker.log_tail()


def test_aborted_records_leave_and_never_hide_a_committed_value(broker):
    """Records of aborted transactions are not a key's newest value (the committed one before them
    stays) and are removed by compaction, as Kafka's cleaner does."""
    b, topic = broker.bootstrap, "compact-txn"
    create(b, topic, cleanup_policy="compact")
    p = Producer({"bootstrap.servers": b, "transactional.id": "compact-txn"})
    p.init_transactions(30)
    for records, commit in (([(b"k5", b"committed"), (b"k6", b"old")], True),
                            ([(b"k5", b"aborted"), (b"k7", b"aborted")], False),
                            ([(b"k6", b"new")], True)):
        p.begin_transaction()
        for k, v in records:
            p.produce(topic, key=k, value=v)
        p.flush(30)  # in the log before the decision
        (p.commit_transaction if commit else p.abort_transaction)(30)
    admin_post(broker, "/v1/compaction", {"force": True})
    for isolation in ("read_committed", "read_uncommitted"):
        c = Consumer({"bootstrap.servers": b, "group.id": "t-" + isolation, "isolation.level": isolation,
                      "enable.partition.eof": True, "enable.auto.commit": False})
        c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        got = []
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is None:
                continue
            if m.error():
                if m.error().code() == KafkaError._PARTITION_EOF:
                    break
                raise AssertionError(m.error())
            got.append((m.key(), m.value()))
        c.close()
        assert sorted(got) == [(b"k5", b"committed"), (b"k6", b"new")], isolation
    assert broker.wait_for_log(r"compaction: compact-txn-0 .* 2 aborted record\(s\) removed", timeout=1), \
        broker.log_tail()


def test_compaction_interrupted_by_kill9_loses_nothing():
    """kill -9 at random points of compactions that run in slices across many commits: every
    key's newest value survives at its offset, and the next pass finishes the job."""
    rng = random.Random(16)
    keys = 5000
    # No pass runs while a round is produced (log.cleaner.backoff.ms of an hour); then the broker
    # restarts with a short backoff so that one pass starts over the whole round, and the kill
    # lands after it starts. Regression (test_compaction_interrupted_by_kill9_loses_nothing): with
    # a 2 s backoff throughout, a pass could start near the end of a slow produce (CI, loaded
    # machine) and leave too little dirty for another one, and the test waited 20 s in vain.
    idle = {"log.cleaner.backoff.ms": 3_600_000, "log.cleaner.slice.ms": 1}
    with running(Broker(config=dict(idle))) as broker:
        b, topic = broker.bootstrap, "compact-kill9"
        create(b, topic, cleanup_policy="compact")
        want, seq, interrupted, rounds = {}, 0, 0, 0
        # Three rounds, and up to six until a kill lands inside a pass. The padding (cheap on the
        # wire with zstd) gives the cleaner more bytes to rewrite, so a pass lasts about a second.
        pad = b"x" * 200
        while rounds < 3 or (interrupted == 0 and rounds < 6):
            rounds += 1
            records = [(b"key-%d" % rng.randrange(keys), b"value-%d" % (seq + i) + pad) for i in range(300_000)]
            seq += len(records)
            acked = produce_keyed(b, topic, records, **{"compression.type": "zstd", "enable.idempotence": True})
            want.update(expected_latest(records, acked))
            broker.stop(check=True)
            broker.config["log.cleaner.backoff.ms"] = 100
            since = broker.log_size()
            broker.start()
            assert broker.wait_for_log(r"compaction: compact-kill9-0 starts", since=since, timeout=20), \
                broker.log_tail()
            time.sleep(rng.uniform(0, 0.05))
            broker.kill9(restart=False)
            if not broker.wait_for_log(r"compaction: compact-kill9-0 offsets", since=since, timeout=0):
                interrupted += 1
            broker.config.update(idle)
            broker.start()
            got = read_all(b, topic, timeout=60)
            offsets = [off for _, off, _, _ in got]
            assert offsets == sorted(set(offsets)), "offsets out of order or repeated"
            newest = {}
            for p, off, k, v in got:
                newest[k] = (p, off, v)
            assert newest == want, "a key lost its newest value"
        print("kills inside a compaction: %d of %d" % (interrupted, rounds))
        assert interrupted >= 1, "no kill landed inside a compaction:\n" + "\n".join(
            line for line in broker.log_text().splitlines() if "compaction" in line or "harness" in line)
        admin_post(broker, "/v1/compaction", {"force": True})
        got = read_all(b, topic, timeout=60)
        assert {k: (p, off, v) for p, off, k, v in got} == want
        assert len(got) == len(want)


def _log_time(line):
    """The wall-clock time of a log line (2026-12-04T14:21:42.232Z ...)."""
    return calendar.timegm(time.strptime(line[:19], "%Y-%m-%dT%H:%M:%S")) + int(line[20:23]) / 1000


def test_compaction_runs_between_requests():
    """Regression (test_compaction_runs_between_requests): the cleaner re-armed a 0-ms libuv
    timer for its next slice, which libuv runs again in the same loop iteration, so a whole pass
    held the loop and every produce waited for its end. Produce requests sent while a pass runs
    must be acknowledged before it ends. Since issue 37 a pass runs on a worker thread and takes
    tens of milliseconds here, so a producer sends one record after another from before the pass
    starts until after it ends, and some must be acknowledged between its start and its end."""
    cfg = {"log.cleaner.backoff.ms": 3_600_000, "log.cleaner.slice.ms": 1}
    with running(Broker(config=cfg)) as broker:
        b = broker.bootstrap
        create(b, "big", cleanup_policy="compact")
        create(b, "other")
        rng = random.Random(3)
        value = b"x" * 400
        produce_keyed(b, "big", [(b"k%d" % rng.randrange(20_000), value) for _ in range(150_000)])
        broker.stop(check=True)
        broker.config["log.cleaner.backoff.ms"] = 1000  # the producer below is connected by then
        since = broker.log_size()
        broker.start()
        acks, stop = [], threading.Event()

        def send():
            p = Producer({"bootstrap.servers": b, "linger.ms": 0})
            i = 0
            while not stop.is_set():
                p.produce("other", value=b"%d" % i, on_delivery=lambda err, msg: acks.append((time.time(), err)))
                p.flush(10)
                i += 1
        t = threading.Thread(target=send)
        t.start()
        try:
            start = broker.wait_for_log(r"compaction: big-0 starts", since=since, timeout=30)
            end = broker.wait_for_log(r"compaction: big-0 offsets", since=since, timeout=60)
        finally:
            stop.set()
            t.join(30)
        assert start and end, broker.log_tail()
        assert all(err is None for _, err in acks)
        inside = [at for at, _ in acks if _log_time(start) < at < _log_time(end)]
        assert inside, "no produce was acknowledged while the pass ran (%s to %s)" % (start[:23], end[:23])


# -- compression.type -------------------------------------------------------------------------

COUNT = 2000
PARTITIONS = 3
# (topic codec, producer codec): every codec we write, each from a producer that used another
RECOMPRESS = [("zstd", "lz4"), ("gzip", "zstd"), ("snappy", "none"), ("lz4", "snappy")]
CODEC_IDS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


@pytest.fixture(scope="module")
def recompressed(broker):
    """One topic per topic codec, filled by the Python (librdkafka) client in another codec."""
    topics = {}
    for target, source in RECOMPRESS:
        topic = "codec-%s-from-%s" % (target, source)
        create(broker.bootstrap, topic, partitions=PARTITIONS, compression_type=target)
        assert run_client("python", ["produce", "--bootstrap", broker.bootstrap, "--topic", topic, "--count", COUNT,
                                     "--partitions", PARTITIONS, "--compression", source]) == {"produced": COUNT}
        topics[target] = topic
    return topics


@pytest.mark.parametrize("target", [t for t, _ in RECOMPRESS])
def test_batches_are_fetched_in_the_topic_codec(broker, recompressed, target):
    for p in range(PARTITIONS):
        for port in broker.ports:  # the partition's leader answers; the others say NOT_LEADER_OR_FOLLOWER
            sock = kw.connect(port)
            try:
                data = kw.roundtrip(sock, kw.fetch_request, "codec-check", recompressed[target], p, 0)
            finally:
                sock.close()
            part = kw.parse_fetch(kw.FETCH_V, data)["topics"][0]["partitions"][0]
            if part["error"] == 0:
                break
        assert part["error"] == 0 and part["high_watermark"] > 0, part
        batches = kw.parse_batches(part["records"])
        assert batches
        assert {bt["attributes"] & 7 for bt in batches} == {CODEC_IDS[target]}


@pytest.fixture(scope="module")
def provisioned():
    # kcat (librdkafka 2.0.2) speaks versions below MSK Serverless's floors (see test_roundtrip.py)
    with running(Broker(config={"profile": "provisioned"})) as b:
        yield b


@pytest.mark.parametrize("lang", ["python", "java", "node", "go", "kcat"])
@pytest.mark.parametrize("target", [t for t, _ in RECOMPRESS])
def test_every_client_reads_recompressed_batches(request, broker, recompressed, lang, target):
    require(lang)
    if lang == "kcat":
        b = request.getfixturevalue("provisioned")
        topic = "codec-%s" % target
        create(b.bootstrap, topic, partitions=PARTITIONS, compression_type=target)
        assert run_client("python", ["produce", "--bootstrap", b.bootstrap, "--topic", topic, "--count", COUNT,
                                     "--partitions", PARTITIONS, "--compression", dict(RECOMPRESS)[target]]) == \
            {"produced": COUNT}
        bootstrap = b.bootstrap
    else:
        topic, bootstrap = recompressed[target], broker.bootstrap
    out = run_client(lang, ["consume", "--bootstrap", bootstrap, "--topic", topic, "--count", COUNT,
                            "--partitions", PARTITIONS], timeout=120)
    assert out == {"consumed": COUNT,
                   "per_partition": {str(p): len(range(p, COUNT, PARTITIONS)) for p in range(PARTITIONS)}}


# -- the timestamp window ----------------------------------------------------------------------

HOUR = 3_600_000


def test_timestamps_outside_the_window_are_invalid_timestamp(broker):
    b, topic = broker.bootstrap, "ts-window"
    create(b, topic, message_timestamp_difference_max_ms=HOUR)
    now = int(time.time() * 1000)
    # librdkafka
    p = Producer({"bootstrap.servers": b, "retries": 0})
    errs = []
    for ts in (now - 2 * HOUR, now + 2 * HOUR, now - HOUR // 2):
        p.produce(topic, key=b"k", value=b"v", timestamp=ts, on_delivery=lambda err, msg: errs.append(err))
        p.flush(30)
    assert [e.code() if e else None for e in errs] == [KafkaError.INVALID_TIMESTAMP, KafkaError.INVALID_TIMESTAMP,
                                                       None]
    assert broker.wait_for_log(r"INVALID_TIMESTAMP\(32\): ts-window-0: .*is out of range", timeout=2)
    # Java
    if client_command("java") is not None:
        out = run_client("java", ["produce-at", "--bootstrap", b, "--topic", topic, "--timestamp-ms",
                                  str(now - 2 * HOUR)], timeout=60)
        assert not out["ok"] and out["error"].startswith("InvalidTimestampException"), out
        out = run_client("java", ["produce-at", "--bootstrap", b, "--topic", topic, "--timestamp-ms",
                                  str(int(time.time() * 1000))], timeout=60)
        assert out["ok"], out


# -- DescribeConfigs and the replication factor ------------------------------------------------

def test_describe_configs_from_the_java_admin_client(broker):
    require("java")
    b, topic = broker.bootstrap, "described"
    create(b, topic, cleanup_policy="compact", retention_ms=HOUR)
    out = run_client("java", ["describe-configs", "--bootstrap", b, "--topic", topic], timeout=60)
    assert out["ok"], out
    c = out["configs"]
    # set at creation: dynamic; cleanup.policy can no longer change on MSK Serverless
    assert c["retention.ms"]["value"] == str(HOUR)
    assert c["retention.ms"]["source"] == "DYNAMIC_TOPIC_CONFIG"
    assert c["retention.ms"]["read_only"] is False
    assert c["cleanup.policy"]["source"] == "DYNAMIC_TOPIC_CONFIG"
    assert c["cleanup.policy"]["read_only"] is True
    # defaults, alterable or not
    assert c["compression.type"] == dict(c["compression.type"], value="producer", source="DEFAULT_CONFIG",
                                         read_only=False, default=True)
    assert c["segment.bytes"]["source"] == "DEFAULT_CONFIG"
    assert c["segment.bytes"]["read_only"] is True
    assert c["max.message.bytes"]["read_only"] is False
    # synonyms: the override first, then the broker config the default comes from
    assert c["retention.ms"]["synonyms"] == [["retention.ms", str(HOUR), "DYNAMIC_TOPIC_CONFIG"],
                                             ["log.retention.ms", "604800000", "DEFAULT_CONFIG"]]
    assert c["max.message.bytes"]["synonyms"] == [["message.max.bytes", "1048588", "DEFAULT_CONFIG"]]
    assert all(v["documentation"] for v in c.values())


def test_replication_factor_agrees_between_create_topics_and_metadata(broker):
    b = broker.bootstrap
    create(b, "rf-two", rf=2)
    create(b, "rf-default")
    md = AdminClient({"bootstrap.servers": b}).list_topics(timeout=10)
    assert {len(p.replicas) for p in md.topics["rf-two"].partitions.values()} == {2}
    assert {len(p.replicas) for p in md.topics["rf-default"].partitions.values()} == {3}
