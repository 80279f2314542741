"""Compaction off the loop (issue 37): a pass's key map and rewrite run on a worker thread, and the
loop swaps the result in. What that must not change, with real clients:

- kill -9 while the worker is in the middle of a pass loses no acknowledged record, leaves every
  offset where it was, and leaves no file of the pass behind (no .cleaned file, nothing moved
  aside as an orphan);
- records produced while the worker runs are kept, and not cleaned by that pass (Kafka's cleaner
  stops at the first dirty offset it captured when it started);
- a reader fetching while the pass runs and is swapped in sees every key's newest value in
  order;
- DeleteRecords while the worker runs: the log start stays where DeleteRecords put it, and
  nothing below it comes back (the worker skips batches whose segment went; the swap leaves
  alone a row that moved or went);
- deleting the topic while the worker runs ends the pass cleanly: its files go, a topic of the
  same name starts empty, and the next start finds nothing to move aside.
- SIGTERM while the worker runs stops the broker cleanly (exit 0, "stopped"), the pass dropped,
  its files gone, every record kept;
- the worker is a thread of the cleaner's own at the lowest priority (SCHED_IDLE), which the
  produce path's threads (libuv's threadpool) are not;
- log.cleaner.io.max.bytes.per.second throttles the worker as it does Kafka's cleaner, and a stop
  does not wait for a throttled pass.

Each race is retried over a few rounds until the action lands inside a pass (the log's "starts"
line before the action, the pass's end line after it), and each test asserts that one did.
"""

import random
import re
import time
from pathlib import Path

import pytest

from harness import Broker, admin_call, running

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

# No pass while a round is produced; then a restart with a short backoff starts one over the whole
# partition, and the test acts once its "starts" line is in the log.
IDLE = {"log.cleaner.backoff.ms": 3_600_000}
SOON = {"log.cleaner.backoff.ms": 500}
PAD = b"x" * 200


def create(bootstrap, name, **config):
    a = AdminClient({"bootstrap.servers": bootstrap})
    cfg = {k.replace("_", "."): str(v) for k, v in config.items()}
    for f in a.create_topics([NewTopic(name, 1, -1, config=cfg)]).values():
        f.result(30)


def produce_keyed(bootstrap, topic, records, **conf):
    """Produce [(key, value)] in order; [(offset)] of each, as acknowledged."""
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "compression.type": "zstd", **conf})
    acked = [None] * len(records)
    errors = []

    def cb(i):
        def on(err, msg):
            if err:
                errors.append(err)
            else:
                acked[i] = msg.offset()
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


def read_all(bootstrap, topic, timeout=60):
    """Every record from the beginning to the high watermark: [(offset, key, value)]."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "read-%s-%f" % (topic, time.time()),
                  "enable.auto.commit": False, "enable.partition.eof": True})
    c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    out = []
    deadline = time.monotonic() + timeout
    try:
        while True:
            assert time.monotonic() < deadline, "did not reach the end of %s" % topic
            m = c.poll(0.5)
            if m is None:
                continue
            if m.error():
                if m.error().code() == KafkaError._PARTITION_EOF:
                    break
                raise AssertionError(m.error())
            out.append((m.offset(), m.key(), m.value()))
    finally:
        c.close()
    return out


def newest(records, acked):
    want = {}
    for (k, v), off in zip(records, acked):
        want[k] = (off, v)
    return want


def check_log(got, want, low=0):
    offsets = [off for off, _, _ in got]
    assert offsets == sorted(set(offsets)), "offsets out of order or repeated"
    assert not offsets or offsets[0] >= low
    seen = {}
    for off, k, v in got:
        seen[k] = (off, v)
    assert seen == want, "a key lost its newest value"


def fill_round(broker, topic, rng, seq, keys=5000, n=300_000):
    records = [(b"key-%d" % rng.randrange(keys), b"value-%d" % (seq + i) + PAD) for i in range(n)]
    return records, produce_keyed(broker.bootstrap, topic, records, **{"enable.idempotence": True})


def restart_for_a_pass(broker, topic):
    """Stop, start with a short backoff, and wait for the pass over topic to start; the log offset before it."""
    broker.stop(check=True)
    broker.config.update(SOON)
    since = broker.log_size()
    broker.start()
    assert broker.wait_for_log(r"compaction: %s-0 starts" % topic, since=since, timeout=30), broker.log_tail()
    return since


def pass_ended(broker, topic, since):
    return broker.wait_for_log(r"compaction: %s-0 offsets \[" % topic, since=since, timeout=0)


def leftovers(broker):
    """Files of a pass left in the data directory, and anything moved aside as an orphan."""
    data = Path(broker.data_dir)
    return sorted(str(p.relative_to(data)) for p in data.rglob("*")
                  if p.name.endswith(".cleaned") or p.name.endswith(".deleted") or p.name == "orphaned")


def test_kill9_while_the_worker_is_mid_pass_loses_nothing():
    rng = random.Random(37)
    with running(Broker(config=dict(IDLE))) as broker:
        topic = "offloop-kill9"
        create(broker.bootstrap, topic, cleanup_policy="compact")
        want, seq, interrupted, rounds = {}, 0, 0, 0
        while rounds < 2 or (interrupted == 0 and rounds < 6):
            rounds += 1
            records, acked = fill_round(broker, topic, rng, seq)
            seq += len(records)
            want.update(newest(records, acked))
            since = restart_for_a_pass(broker, topic)
            time.sleep(rng.uniform(0, 0.08))
            broker.kill9(restart=False)
            if not pass_ended(broker, topic, since):
                interrupted += 1
            broker.config.update(IDLE)
            broker.start()
            check_log(read_all(broker.bootstrap, topic), want)
            assert leftovers(broker) == [], "a pass left files behind"
        assert interrupted >= 1, "no kill landed inside a pass:\n" + "\n".join(
            line for line in broker.log_text().splitlines() if "compaction" in line or "harness" in line)
        # the next pass finishes the job
        broker.stop(check=True)
        broker.config.update(SOON)
        since = broker.log_size()
        broker.start()
        assert broker.wait_for_log(r"compaction: %s-0 offsets \[" % topic, since=since, timeout=60), broker.log_tail()
        got = read_all(broker.bootstrap, topic)
        check_log(got, want)
        assert len(got) == len(want)
        assert leftovers(broker) == []


def test_stop_while_the_worker_is_mid_pass_exits_cleanly():
    rng = random.Random(38)
    with running(Broker(config=dict(IDLE))) as broker:
        topic = "offloop-stop"
        create(broker.bootstrap, topic, cleanup_policy="compact")
        want, seq, interrupted, rounds = {}, 0, 0, 0
        while rounds < 2 or (interrupted == 0 and rounds < 6):
            rounds += 1
            records, acked = fill_round(broker, topic, rng, seq)
            seq += len(records)
            want.update(newest(records, acked))
            since = restart_for_a_pass(broker, topic)
            time.sleep(rng.uniform(0, 0.05))
            broker.stop(check=True)  # exit 0 within the harness's stop timeout
            if not pass_ended(broker, topic, since):
                interrupted += 1
            assert broker.wait_for_log(r"\bstopped$", since=since, timeout=0), broker.log_tail()
            assert leftovers(broker) == [], "a stopped pass left files behind"
            broker.config.update(IDLE)
            broker.start()
            check_log(read_all(broker.bootstrap, topic), want)
        assert interrupted >= 1, "no stop landed inside a pass:\n" + "\n".join(
            line for line in broker.log_text().splitlines() if "compaction" in line or "harness" in line)


def scheduling_policies(pid):
    """{thread id: scheduling policy} of a process (field 41 of /proc/<pid>/task/<tid>/stat, sched(7))."""
    out = {}
    for task in Path("/proc/%d/task" % pid).iterdir():
        stat = (task / "stat").read_text()
        out[int(task.name)] = int(stat[stat.rindex(")") + 2:].split()[38])
    return out


SCHED_IDLE = 5


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="Linux's /proc")
def test_the_worker_runs_on_a_thread_of_its_own_at_idle_priority():
    rng = random.Random(39)
    with running(Broker(config=dict(IDLE))) as broker:
        topic = "offloop-idle"
        create(broker.bootstrap, topic, cleanup_policy="compact")
        assert SCHED_IDLE not in scheduling_policies(broker.proc.pid).values()  # created at the first pass
        fill_round(broker, topic, rng, 0, n=50_000)
        since = restart_for_a_pass(broker, topic)
        assert broker.wait_for_log(r"compaction: %s-0 offsets \[" % topic, since=since, timeout=60), broker.log_tail()
        policies = scheduling_policies(broker.proc.pid)
        # one thread at SCHED_IDLE (it stays for the next pass); the loop and the threadpool keep theirs
        assert list(policies.values()).count(SCHED_IDLE) == 1, policies
        assert policies[broker.proc.pid] != SCHED_IDLE


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="Linux's /proc")
def test_first_swap_does_not_wait_for_the_threadpool_to_start():
    """libuv starts its threadpool at the first request queued to it, and the queuing thread waits
    until every one of its threads has run: that was the loop at the first swap (its dead segment's
    unlink), 0.5 ms under strace and 175 ms once on a loaded machine. The pool now starts with the
    cleaner: a pass and its dead segment's removal start no new thread (but storage's own, below)."""
    rng = random.Random(41)
    # no host name to resolve: uv_getaddrinfo would start the pool at start-up either way
    with running(Broker(config=dict(IDLE, **{"advertised.host": "127.0.0.1"}))) as broker:
        topic = "offloop-pool"
        create(broker.bootstrap, topic, cleanup_policy="compact")
        before = set(scheduling_policies(broker.proc.pid))
        fill_round(broker, topic, rng, 0, n=50_000)
        status, _ = admin_call(broker, "POST", "/v1/compaction", {"force": True})
        assert status == 200
        seg_dir = next(Path(broker.data_dir).glob("*.segments"))

        def old_files():  # the segment the pass emptied, and its removal
            return list(seg_dir.rglob("*.deleted")) + sorted(seg_dir.rglob("*.log"))[:-1]

        deadline = time.time() + 30
        while old_files() and time.time() < deadline:
            time.sleep(0.05)
        assert not old_files(), "the dead segment was not removed"
        after = scheduling_policies(broker.proc.pid)
        # one thread of storage's starts with the first writes, with or without the fix; libuv's pool was 4 more
        new = [tid for tid in after if tid not in before]
        assert len(new) <= 1, (sorted(before), after)


@pytest.mark.parametrize("sync", ["normal", "off"])  # off: no fsync anywhere, the swap's included
def test_records_produced_during_a_pass_are_kept_and_read_in_order(sync):
    """Produce and fetch race the worker and the swap: the new records (same keys, newer values)
    all stay, past the pass's end; a reader during the pass sees each key's newest value in order."""
    rng = random.Random(38)
    with running(Broker(config=dict(IDLE, **{"storage.sync": sync}))) as broker:
        topic = "offloop-produce"
        create(broker.bootstrap, topic, cleanup_policy="compact")
        want, seq, landed = {}, 0, 0
        for _ in range(4):
            records, acked = fill_round(broker, topic, rng, seq)
            seq += len(records)
            want.update(newest(records, acked))
            before = dict(want)
            since = restart_for_a_pass(broker, topic)
            more = [(b"key-%d" % rng.randrange(5000), b"racing-%d" % (seq + i)) for i in range(200)]
            seq += len(more)
            more_acked = produce_keyed(broker.bootstrap, topic, more, **{"linger.ms": 0, "batch.num.messages": 20})
            acted = broker.log_size()
            during = read_all(broker.bootstrap, topic)
            ended = broker.wait_for_log(r"compaction: %s-0 offsets \[\d+, (\d+)\)" % topic, since=since, timeout=60)
            assert ended, broker.log_tail()
            want.update(newest(more, more_acked))
            # the reader saw a whole log: the values before the pass, or newer ones
            offsets = [off for off, _, _ in during]
            assert offsets == sorted(set(offsets))
            seen = {k: (off, v) for off, k, v in during}
            assert all(seen[k][0] >= off for k, (off, _) in before.items())
            end = int(ended.split("offsets [")[1].split(",")[1].split(")")[0])
            assert end <= min(more_acked), "the pass went past the first dirty offset it started with"
            if pass_ended(broker, topic, acted):
                landed += 1
            # nothing produced during the pass was cleaned by it: every racing record is still there
            got = read_all(broker.bootstrap, topic)
            by_offset = {off: (k, v) for off, k, v in got}
            for (k, v), off in zip(more, more_acked):
                if off >= end:
                    assert by_offset.get(off) == (k, v), "a record produced during the pass is gone"
            check_log(got, want)
            broker.config.update(IDLE)
            if landed >= 1:
                break
        assert landed >= 1, "no produce landed inside a pass"
        assert leftovers(broker) == []


def test_delete_records_during_a_pass_is_kept():
    rng = random.Random(39)
    with running(Broker(config=dict(IDLE, profile="kafka"))) as broker:  # MSK Serverless has no DeleteRecords
        topic = "offloop-delete-records"
        create(broker.bootstrap, topic, cleanup_policy="compact,delete")  # Kafka refuses DeleteRecords on compact alone
        want, seq, landed = {}, 0, 0
        for _ in range(4):
            records, acked = fill_round(broker, topic, rng, seq)
            seq += len(records)
            want.update(newest(records, acked))
            since = restart_for_a_pass(broker, topic)
            admin = AdminClient({"bootstrap.servers": broker.bootstrap})
            cut = acked[len(acked) // 2]
            tp = TopicPartition(topic, 0, cut)
            low = admin.delete_records([tp], operation_timeout=10)[tp].result(timeout=30).low_watermark
            assert low == cut
            acted = broker.log_size()
            assert broker.wait_for_log(r"compaction: %s-0 offsets \[" % topic, since=since, timeout=60)
            # the worker either no longer found the removed batches, or the swap found their rows gone
            if broker.wait_for_log(r"compaction: %s-0 offsets \[" % topic, since=acted, timeout=0):
                landed += 1
            want = {k: (off, v) for k, (off, v) in want.items() if off >= cut}
            got = read_all(broker.bootstrap, topic)
            check_log(got, want, low=cut)
            c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "wm"})
            assert c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)[0] == cut
            c.close()
            broker.restart()  # what the swap committed reads back the same
            check_log(read_all(broker.bootstrap, topic), want, low=cut)
            broker.config.update(IDLE)
            if landed:
                break
        assert landed >= 1, "no DeleteRecords landed inside a pass"
        assert leftovers(broker) == []


def test_topic_deleted_during_a_pass_ends_it_cleanly():
    rng = random.Random(40)
    with running(Broker(config=dict(IDLE))) as broker:
        landed = 0
        for round_ in range(4):
            topic = "offloop-delete-topic-%d" % round_
            create(broker.bootstrap, topic, cleanup_policy="compact")
            fill_round(broker, topic, rng, 0)
            since = restart_for_a_pass(broker, topic)
            admin = AdminClient({"bootstrap.servers": broker.bootstrap})
            for f in admin.delete_topics([topic], operation_timeout=10).values():
                f.result(30)
            stopped = broker.wait_for_log(r"compaction: the partition being compacted was deleted; the pass stops",
                                          since=since, timeout=30)
            if stopped:
                landed += 1
                assert not pass_ended(broker, topic, since), "a pass over a deleted topic was swapped in"
            # a topic of the same name starts empty and works
            create(broker.bootstrap, topic, cleanup_policy="compact")
            records = [(b"k%d" % i, b"v%d" % i) for i in range(10)]
            acked = produce_keyed(broker.bootstrap, topic, records)
            check_log(read_all(broker.bootstrap, topic), newest(records, acked))
            broker.config.update(IDLE)
            since = broker.log_size()
            broker.restart()
            assert not broker.wait_for_log(r"orphan|moved aside", since=since, timeout=0), broker.log_tail()
            assert leftovers(broker) == []
            if landed:
                break
        assert landed >= 1, "no topic deletion landed inside a pass"


PASS_LINE = r"compaction: %s-0 offsets \[\d+, \d+\): \d+ records -> \d+, (\d+) bytes -> (\d+), .* in ([\d.]+) ms"


def test_the_worker_is_throttled_by_log_cleaner_io_max_bytes_per_second():
    """Kafka's log.cleaner.io.max.bytes.per.second: a pass's reads and writes average at most that
    many bytes a second (a first pass reads the partition twice: the key map, then the rewrite),
    and a broker stopped while the throttled worker sleeps stops at once, the pass dropped."""
    rng = random.Random(40)
    rate = 2_000_000

    def incompressible_round(n=10_000):  # the producer's compression would leave too few stored bytes
        records = [(b"key-%d" % rng.randrange(5000), rng.randbytes(300)) for _ in range(n)]
        return records, produce_keyed(broker.bootstrap, topic, records)

    with running(Broker(config=dict(IDLE, **{"log.cleaner.io.max.bytes.per.second": rate}))) as broker:
        topic = "offloop-throttle"
        create(broker.bootstrap, topic, cleanup_policy="compact")
        records, acked = incompressible_round()
        since = restart_for_a_pass(broker, topic)
        line = broker.wait_for_log(PASS_LINE % topic, since=since, timeout=60)
        assert line, broker.log_tail()
        bytes_in, bytes_out, ms = re.search(PASS_LINE % topic, line).groups()
        least_s = (2 * int(bytes_in) + int(bytes_out)) / rate
        assert least_s > 2, "too little data to see the throttle: %s" % line
        assert float(ms) / 1000 >= 0.95 * least_s, line
        want = newest(records, acked)
        check_log(read_all(broker.bootstrap, topic), want)

        # at 100 kB/s the next pass would take minutes: the stop does not wait for it
        want.update(newest(*incompressible_round()))
        broker.config.update({"log.cleaner.io.max.bytes.per.second": 100_000})
        since = restart_for_a_pass(broker, topic)
        time.sleep(0.5)
        broker.stop(check=True)
        assert not pass_ended(broker, topic, since), broker.log_tail()
        assert broker.wait_for_log(r"\bstopped$", since=since, timeout=0), broker.log_tail()
        assert leftovers(broker) == []
        broker.config.update(IDLE)
        broker.start()
        check_log(read_all(broker.bootstrap, topic), want)
