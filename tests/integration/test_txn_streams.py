"""Kafka Streams 4.4 WordCount with processing.guarantee=exactly_once_v2 (issue 15).

The Streams program is the Java client's `streams-wordcount` (StreamsWordCount.java): lines from
an input topic, split into words, re-keyed through a repartition topic, counted in a RocksDB
store with a changelog, every new count written to a counts topic (String word, Long count),
commit.interval.ms=100, transaction.timeout.ms=5000, the record cache off, an uncaught-exception
handler that replaces a dead stream thread, and JSON event lines on stdout (state changes,
uncaught exceptions).

A deterministic corpus (2,000 lines, 20,000 words, 300 distinct) is fed by confluent-kafka
(idempotent) while WordCount runs; mid-run either the Streams JVM is killed with SIGKILL and
started again on the same state directory (twice), or the broker is killed with SIGKILL and
restarted. The kafka profile finalizes transaction.version 2, so Streams' producers run
transactions V2 (KIP-890 part 2: an epoch bump at every commit, partitions and offsets added by
the broker), which each test checks in their log. At the end a read_committed reader must see, for every word, exactly the counts
1, 2, ..., N in order (N its number of occurrences in the corpus): the last value equals the
expected count, and no count was lost or written twice.

The broker runs the kafka profile: Streams creates its internal topics with configs such as
segment.bytes that the serverless profile's topic-config policy refuses, and purges the
repartition topic with DeleteRecords, which MSK Serverless does not serve. Every wait is
bounded, and a stream thread dying before anything was killed fails the test at once with its
exception.
"""

import collections
import json
import os
import random
import re
import struct
import subprocess
import threading
import time

import pytest

from harness import ROOT, client_command, run_client

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

PARTITIONS = 3
LINES = 2000
WORDS_PER_LINE = 10
VOCABULARY = 300
FIRST_COUNTS_TIMEOUT = 60   # Streams start-up, internal topics, first rebalance, first commit
RECOVERY_TIMEOUT = 60       # after a kill: the group settles, state is restored, processing resumes
FINAL_TIMEOUT = 90          # from the last kill until every count is right

pytestmark = pytest.mark.timeout(300)

TXN_MANAGER = "org.apache.kafka.clients.producer.internals.TransactionManager"


@pytest.fixture(scope="module")
def broker_config():
    return {"profile": "kafka", "group.initial.rebalance.delay.ms": 0,
            "transaction.abort.timed.out.transaction.cleanup.interval.ms": 1000}


@pytest.fixture(scope="module", autouse=True)
def java_built():
    if client_command("java") is None:
        if os.environ.get("CI"):
            pytest.fail("java client is not built (tools/install-deps --test builds it)")
        pytest.skip("java client is not built (tests/clients/java/install.sh)")


# -- the corpus ---------------------------------------------------------------------------

def corpus(seed=15):
    """(lines, Counter of words): LINES lines of WORDS_PER_LINE words from VOCABULARY made-up
    words with Zipf-like frequencies (the commonest about 3,200 times, the rarest 6)."""
    rng = random.Random(seed)
    syllables = ["ka", "lo", "mi", "ra", "te", "su", "no", "vi", "de", "po", "ba", "fu"]
    vocab = set()
    while len(vocab) < VOCABULARY:
        vocab.add("".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))))
    vocab = sorted(vocab)
    rng.shuffle(vocab)
    weights = [1.0 / (r + 1) for r in range(len(vocab))]
    lines = []
    counts = collections.Counter()
    for _ in range(LINES):
        words = rng.choices(vocab, weights=weights, k=WORDS_PER_LINE)
        # Mixed case and punctuation: WordCount lower-cases and splits on non-word characters.
        shown = [w.upper() if rng.random() < 0.1 else w for w in words]
        lines.append(" ".join(shown) + rng.choice(["", ".", "!", " ,"]))
        counts.update(words)
    return lines, counts


# -- helpers ------------------------------------------------------------------------------

def create_topics(bootstrap, *names):
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(n, PARTITIONS) for n in names])
    for n, f in futures.items():
        f.result(timeout=30)


class Feeder:
    """Produces corpus lines to the input topic (idempotent confluent-kafka producer), either at
    once or at a steady rate in a background thread; every delivery must succeed."""

    def __init__(self, bootstrap, topic):
        self.topic = topic
        # log_level 2: no "Connection refused" lines while the broker is down
        self.producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True,
                                  "linger.ms": 5, "message.timeout.ms": 60000, "log_level": 2})
        self.delivered = 0
        self.failed = []
        self.thread = None

    def _cb(self, err, _msg):
        if err is not None:
            self.failed.append(str(err))
        else:
            self.delivered += 1

    def _send(self, lines, rate):
        t0 = time.monotonic()
        for i, line in enumerate(lines):
            if rate:
                ahead = t0 + i / rate - time.monotonic()
                if ahead > 0:
                    time.sleep(ahead)
            while True:
                try:
                    self.producer.produce(self.topic, value=line.encode(), on_delivery=self._cb)
                    break
                except BufferError:
                    self.producer.poll(0.1)
            self.producer.poll(0)
        self.producer.flush(60)

    def send(self, lines):
        self._send(lines, None)

    def start(self, lines, rate):
        self.thread = threading.Thread(target=self._send, args=(lines, rate), daemon=True)
        self.thread.start()

    def wait(self, expected, timeout=90):
        if self.thread is not None:
            self.thread.join(timeout)
            assert not self.thread.is_alive(), "the feeder did not finish within %d s" % timeout
        left = len(self.producer) if self.producer is not None else 0
        assert not self.failed and left == 0 and self.delivered == expected, (
            "feeding the input: %d of %d lines delivered, %d still queued, failures: %s"
            % (self.delivered, expected, left, self.failed[:5]))


class StreamsApp:
    """One `streams-wordcount` JVM and the JSON events it printed."""

    def __init__(self, bootstrap, app_id, src, dst, state_dir, name, log_dir):
        self.name = name
        self.argv = client_command("java") + [
            "streams-wordcount", "--bootstrap", bootstrap, "--application-id", app_id, "--input", src,
            "--output", dst, "--state-dir", str(state_dir), "--commit-interval-ms", "100",
            "--transaction-timeout-ms", "5000", "--session-timeout-ms", "6000"]
        # Kept after the test (pytest's tmp_path): KAFKA_CLIENT_LOG_LEVEL=info makes it verbose.
        self.stderr_path = log_dir / (name + ".stderr.log")
        self.stderr = open(self.stderr_path, "w+b")
        self.events = []
        self.bad = []
        self.cv = threading.Condition()
        # the producers' TransactionManager at debug: its log says whether it runs transactions V2
        env = dict(os.environ, JAVA_TOOL_OPTIONS="-Dorg.slf4j.simpleLogger.log.%s=debug" % TXN_MANAGER)
        self.proc = subprocess.Popen(self.argv, cwd=str(ROOT), stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=self.stderr, env=env)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for raw in self.proc.stdout:
            line = raw.decode(errors="replace").strip()
            if not line:
                continue
            try:
                ev = json.loads(line)
            except ValueError:
                ev = None
            with self.cv:
                if isinstance(ev, dict) and "event" in ev:
                    self.events.append(ev)
                else:
                    self.bad.append(line)
                self.cv.notify_all()

    def uncaught(self):
        with self.cv:
            return [e for e in self.events if e["event"] == "uncaught"]

    def state(self):
        with self.cv:
            states = [e["to"] for e in self.events if e["event"] == "state"]
        return states[-1] if states else None

    def alive(self):
        return self.proc.poll() is None

    def stderr_tail(self, n=6000):
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace")[-n:]

    def tv2(self):
        """Each "Updating isTV2 enabled to X" its producers logged (KIP-890 part 2), X as a bool."""
        self.stderr.seek(0)
        text = self.stderr.read().decode(errors="replace")
        return [x == "true" for x in re.findall(r"Updating isTV2 enabled to (true|false)", text)]

    def describe(self):
        return ("%s (%s): exit %s, state %s, uncaught %s\n--- its stderr (%s, tail) ---\n%s"
                % (self.name, " ".join(self.argv[-16:]), self.proc.poll(), self.state(),
                   [e.get("root") or e.get("error") for e in self.uncaught()][:5], self.stderr_path,
                   self.stderr_tail()))

    def kill9(self):
        self.proc.kill()
        self.proc.wait()

    def terminate(self, timeout=25):
        """SIGTERM: KafkaStreams.close(15 s); True if it said it closed cleanly."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                return False
        with self.cv:
            return any(e["event"] == "closed" and e.get("clean") for e in self.events)


class CountsWatcher:
    """A read_committed consumer of the counts topic in a thread: every (word, count) in order."""

    def __init__(self, bootstrap, topic):
        self.consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "wc-watcher-" + topic,
                                  "enable.auto.commit": False, "isolation.level": "read_committed",
                                  "auto.offset.reset": "earliest", "fetch.wait.max.ms": 100,
                                  "log_level": 2})
        self.consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(PARTITIONS)])
        self.seq = collections.defaultdict(list)
        self.total = 0
        self.errors = []
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stop.is_set():
            m = self.consumer.poll(0.2)
            if m is None:
                continue
            if m.error() is not None:
                if m.error().code() != KafkaError._PARTITION_EOF:
                    with self.lock:
                        self.errors.append(str(m.error()))
                continue
            with self.lock:
                self.seq[m.key().decode()].append(struct.unpack(">q", m.value())[0])
                self.total += 1
        self.consumer.close()

    def last(self):
        with self.lock:
            return {k: v[-1] for k, v in self.seq.items()}

    def close(self):
        self.stop.set()
        self.thread.join(10)


def over_counted(last, expected):
    return {w: (c, expected.get(w, 0)) for w, c in last.items() if c > expected.get(w, 0)}


def wait_progress(watcher, apps, broker, min_total, timeout, fail_on_uncaught):
    """Waits until the watcher has seen min_total counts; fails at once if an app dies or, with
    fail_on_uncaught, reports a dead stream thread; fails with everything known on time-out."""
    deadline = time.monotonic() + timeout
    while watcher.total < min_total:
        for app in apps:
            if not app.alive():
                pytest.fail("the Streams JVM exited: %s\n%s" % (app.describe(), broker.log_tail(40)))
            if fail_on_uncaught and app.uncaught():
                pytest.fail("a stream thread died before anything was killed: %s\n%s"
                            % (app.describe(), broker.log_tail(40)))
        if time.monotonic() > deadline:
            pytest.fail("only %d of the %d counts wanted reached the counts topic (read_committed) "
                        "within %d s: %s\n%s"
                        % (watcher.total, min_total, timeout, "\n".join(a.describe() for a in apps),
                           broker.log_tail(40)))
        time.sleep(0.2)


def wait_final(watcher, expected, apps, broker, timeout):
    """Waits until the watcher's last count of every word is the corpus'; returns {} then, or at
    once the words counted too high {word: (count, expected)} (the caller gets a second opinion
    from the Java reader before failing). Fails on a dead JVM or on time-out."""
    deadline = time.monotonic() + timeout
    while True:
        last = watcher.last()
        over = over_counted(last, expected)
        if over:
            return over
        if last == dict(expected):
            return {}
        for app in apps:
            if not app.alive():
                pytest.fail("the Streams JVM exited: %s\n%s" % (app.describe(), broker.log_tail(40)))
        if time.monotonic() > deadline:
            short = {w: (last.get(w), n) for w, n in expected.items() if last.get(w) != n}
            pytest.fail("%d of %d words still without their final count %d s after the last kill "
                        "(word: (last seen, expected)): %s\nwatcher errors: %s\n%s\n%s"
                        % (len(short), len(expected), timeout, dict(list(short.items())[:10]),
                           watcher.errors[:5], "\n".join(a.describe() for a in apps), broker.log_tail(40)))
        time.sleep(0.2)


def verify_counts(bootstrap, topic, expected):
    """A fresh read_committed read (the Java consumer): per word exactly 1, 2, ..., N in order."""
    res = run_client("java", ["txn-consume", "--bootstrap", bootstrap, "--topic", topic, "--isolation",
                              "read_committed", "--value-type", "long", "--idle-ms", 1500, "--timeout-s", 40],
                     timeout=90)
    assert res["complete"], "the read_committed reader did not reach the last stable offsets: %s" % {
        k: res[k] for k in ("positions", "end_offsets", "count")}
    seq = collections.defaultdict(list)
    for _p, _o, k, v in res["records"]:
        seq[k].append(v)
    last = {k: v[-1] for k, v in seq.items()}
    assert set(last) == set(expected), "words missing: %s, unknown words: %s" % (
        sorted(set(expected) - set(last))[:10], sorted(set(last) - set(expected))[:10])
    wrong = {w: (last[w], n) for w, n in expected.items() if last[w] != n}
    assert not wrong, "last count per word differs from the corpus (word: (last, expected)): %s" % (
        dict(list(wrong.items())[:10]))
    bad = {w: s for w, s in seq.items() if s != list(range(1, expected[w] + 1))}
    assert not bad, ("under exactly-once each word's committed counts are 1..N once each, in order; "
                     "%d words are not, e.g. %s" % (len(bad), {w: s[:30] for w, s in list(bad.items())[:3]}))
    assert res["count"] == sum(expected.values())


def input_diagnosis(bootstrap, topic, lines):
    """For a failure message: does the input topic hold the corpus exactly once? A line stored
    twice (the idempotent producer's retries across a broker kill) over-counts its words as well
    as a record processed twice would, so the failure says which of the two it was."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "wc-diagnosis", "enable.auto.commit": False,
                  "enable.partition.eof": True, "log_level": 2})
    c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(PARTITIONS)])
    got = collections.Counter()
    eof = set()
    deadline = time.monotonic() + 20
    try:
        while len(eof) < PARTITIONS and time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is None:
                continue
            if m.error() is not None:
                if m.error().code() == KafkaError._PARTITION_EOF:
                    eof.add(m.partition())
                continue
            got[m.value().decode()] += 1
    finally:
        c.close()
    want = collections.Counter(lines)
    twice, missing = got - want, want - got
    return ("input topic %s: %d records (%s), %d lines stored too often %s, %d missing %s"
            % (topic, sum(got.values()), "read to the end" if len(eof) == PARTITIONS else "NOT read to the end",
               sum(twice.values()), list(twice)[:3], sum(missing.values()), list(missing)[:3]))


def run_wordcount(broker, tmp_path, name, rate, kill):
    """Feeds the corpus while WordCount runs (the first 30% at once, the rest at `rate` lines a
    second), calls kill(...) mid-run, checks the counts."""
    b = broker.bootstrap
    src, dst, app_id = name + "-lines", name + "-counts", name + "-app"
    create_topics(b, src, dst)
    lines, expected = corpus()
    state = tmp_path / "state"
    state.mkdir()
    watcher = CountsWatcher(b, dst)
    feeder = Feeder(b, src)
    apps = [StreamsApp(b, app_id, src, dst, state, name + "-1", tmp_path)]
    try:
        head = LINES * 3 // 10
        feeder.send(lines[:head])
        wait_progress(watcher, apps, broker, 500, FIRST_COUNTS_TIMEOUT, fail_on_uncaught=True)
        feeder.start(lines[head:], rate=rate)
        kill(apps, state, lambda: StreamsApp(b, app_id, src, dst, state, "%s-%d" % (name, len(apps) + 1),
                                             tmp_path), watcher)
        feeder.wait(LINES)
        try:
            over = wait_final(watcher, expected, apps[-1:], broker, FINAL_TIMEOUT)
            if not over:
                time.sleep(2)  # nothing more may come: a later count would be one too many
                over = wait_final(watcher, expected, apps[-1:], broker, 1)
        except pytest.fail.Exception as e:
            raise AssertionError("%s\n%s" % (e, input_diagnosis(b, src, lines))) from None
        problems = []
        if over:
            problems.append("the confluent-kafka read_committed watcher saw counts above the corpus' "
                            "(word: (count, expected)): %s" % dict(list(over.items())[:10]))
        if watcher.errors:
            problems.append("the watcher's consumer errors: %s" % watcher.errors[:5])
        try:
            verify_counts(b, dst, expected)
        except AssertionError as e:
            problems.append("the Java read_committed reader: %s" % e)
        if problems:
            raise AssertionError("\n".join(problems + [input_diagnosis(b, src, lines)]))
        uncaught = [e.get("root") for a in apps for e in a.uncaught()]
        print("%s: %d Streams JVMs, stream threads replaced: %d %s"
              % (name, len(apps), len(uncaught), uncaught[:3]))
        # the kafka profile finalizes transaction.version 2: Streams' producers run transactions V2
        tv2 = [x for a in apps for x in a.tv2()]
        assert tv2 and all(tv2), ("Streams' producers must switch to transactions V2 (transaction.version=2 "
                                  "finalized): they logged %s\n%s" % (tv2, apps[0].describe()))
        assert apps[-1].terminate(), "WordCount did not close cleanly: %s" % apps[-1].describe()
    finally:
        for a in apps:
            if a.alive():
                a.kill9()
        watcher.close()


# -- 1. the Streams JVM killed with SIGKILL, twice -----------------------------------------

def test_wordcount_exactly_once_across_streams_kill9(broker, tmp_path):
    def kill(apps, _state, start, watcher):
        for _ in range(2):
            time.sleep(1.5)        # mid-run: input is arriving, transactions are open
            apps[-1].kill9()
            seen = watcher.total
            apps.append(start())   # same application id and state directory
            # the restarted instance takes over the tasks and produces again
            wait_progress(watcher, apps[-1:], broker, min(seen + 200, LINES * WORDS_PER_LINE),
                          RECOVERY_TIMEOUT, fail_on_uncaught=False)

    # 1,400 lines at 70 a second: input keeps arriving across both kills and restarts.
    run_wordcount(broker, tmp_path, "wc-streams-kill", 70, kill)


# -- 2. the broker killed with SIGKILL -----------------------------------------------------

def test_wordcount_exactly_once_across_broker_kill9(broker, tmp_path):
    def kill(apps, _state, _start, watcher):
        time.sleep(1.5)            # mid-run
        broker.kill9(restart=True)  # same ports and data directory
        seen = watcher.total
        wait_progress(watcher, apps, broker, min(seen + 200, LINES * WORDS_PER_LINE), RECOVERY_TIMEOUT,
                      fail_on_uncaught=False)

    run_wordcount(broker, tmp_path, "wc-broker-kill", 150, kill)
