"""kill -9 of the broker in every phase of a Kafka transaction; after the restart each
transaction ends as Apache Kafka ends it.

A confluent-kafka (librdkafka) transactional producer writes to a 3-partition topic and the
broker is killed with SIGKILL at a chosen point; transaction.marker.delay.ms (the broker's
test knob: EndTxn is answered once PrepareCommit/PrepareAbort is stored, then one partition's
marker per delay) holds a decided transaction between its markers long enough to kill it there.
What is read back uses confluent-kafka consumers (read_committed and read_uncommitted) and raw
ListOffsets, DescribeTransactions and OffsetFetch requests (kafka_wire).

  test_kill9_while_ongoing                records written, no EndTxn: after the restart the
                                          transaction is still open (DescribeTransactions
                                          Ongoing, the last stable offset held at its first
                                          record) until its transaction.timeout.ms; then it is
                                          aborted: read_committed never sees it,
                                          read_uncommitted does
  test_kill9_between_markers[commit]      EndTxn(commit) acknowledged, some markers written:
                                          after the restart CompleteCommit and every record
                                          visible to read_committed on every partition
  test_kill9_between_markers[abort]       the same for an abort: none visible
  test_kill9_between_markers[*-before-first-marker]  the same, killed once the decision is
                                          stored and before any marker
  test_kill9_right_after_commit           transaction.marker.delay.ms=0: kill as soon as
                                          commit_transaction() returns: everything visible
  test_kill9_pending_offsets[killed]      consume-transform-produce with
                                          send_offsets_to_transaction, killed before the
                                          commit: the group's committed offsets stay the old
                                          ones (require_stable answers UNSTABLE_OFFSET_COMMIT
                                          until the timeout aborts the transaction)
  test_kill9_pending_offsets[committed]   killed right after the commit: the new offsets
  test_kill9_pending_offsets[between-markers]  killed in PrepareCommit (markers 1.5 s apart):
                                          the restart completes it with the new offsets
  test_kill9_during_fence_abort           a second producer's InitProducerId fences an open
                                          transaction; killed while its ABORT markers are
                                          written: CompleteAbort at the fencing epoch after
                                          the restart, and the next epoch for the new producer
  test_kill9_interleaved_transactions     two producers' transactions interleaved on every
                                          partition, one aborted and one open at the kill; both
                                          producers live on: read_committed shows exactly the
                                          committed one's records, also after one more kill -9
  test_kill9_after_deleting_a_topic_of_an_open_transaction  a topic of an open transaction
                                          deleted, another created, kill -9: the transaction
                                          names only the topic left; its timeout abort writes
                                          no marker to the new topic

After every restart, once no transaction is open, ListOffsets read_committed (the last stable
offset) equals the high watermark on every partition.
"""

import contextlib
import re
import time
import uuid

import pytest

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import (OFFSET_BEGINNING, Consumer, KafkaError, Producer,  # noqa: E402
                             TopicPartition)
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

import kafka_wire as kw  # noqa: E402
from harness import Broker  # noqa: E402

pytestmark = pytest.mark.timeout(120)

PARTITIONS = 3
MARKER_DELAY_MS = 1500
TXN_TIMEOUT_MS = 4000        # the producers' transaction.timeout.ms
ABORT_CHECK_MS = 250         # transaction.abort.timed.out.transaction.cleanup.interval.ms
PER_PARTITION = 4            # records per partition per transaction


@contextlib.contextmanager
def broker_with(marker_delay_ms):
    b = Broker(config={
        "transaction.marker.delay.ms": marker_delay_ms,
        "transaction.abort.timed.out.transaction.cleanup.interval.ms": ABORT_CHECK_MS,
        "transaction.max.timeout.ms": 60000,
        "group.initial.rebalance.delay.ms": 0,
    })
    b.start()
    try:
        yield b
        b.assert_alive()
        b.stop(check=True)
    finally:
        b.cleanup()


def unique(prefix):
    return "%s-%s" % (prefix, uuid.uuid4().hex[:8])


# -- clients ------------------------------------------------------------------------------

def create_topic(b, name, partitions=PARTITIONS):
    admin = AdminClient({"bootstrap.servers": b.bootstrap})
    admin.create_topics([NewTopic(name, partitions)])[name].result(timeout=20)
    return name


def txn_producer(b, txn_id, timeout_ms=TXN_TIMEOUT_MS):
    p = Producer({"bootstrap.servers": b.bootstrap, "transactional.id": txn_id,
                  "transaction.timeout.ms": timeout_ms, "linger.ms": 0,
                  "socket.timeout.ms": 3000, "message.timeout.ms": timeout_ms,
                  "reconnect.backoff.max.ms": 200,
                  "log_level": 2})   # not the connection refusals of every kill
    p.init_transactions(15)
    return p


def drop(producer):
    """Destroys a producer whose broker is gone (or whose transaction is left open): no flush,
    no abort; librdkafka's destroy is bounded by its own timeouts."""
    producer.purge()
    del producer


def values_of(tag, partition, n=PER_PARTITION):
    return [b"%s-p%d-%d" % (tag.encode(), partition, i) for i in range(n)]


def produce_all(p, topic, tag):
    """One transaction's records: PER_PARTITION to every partition, flushed (acknowledged)."""
    errors = []

    def cb(err, _msg):
        if err is not None:
            errors.append(err)

    want = {}
    for part in range(PARTITIONS):
        want[part] = values_of(tag, part)
        for v in want[part]:
            p.produce(topic, value=v, partition=part, on_delivery=cb)
    assert p.flush(15) == 0, "records of %s not acknowledged" % tag
    assert not errors, errors
    return want


def read(b, topic, isolation, partitions=PARTITIONS, timeout=20):
    """Every partition from the beginning to its end (the last stable offset under
    read_committed): {partition: [values]}."""
    c = Consumer({"bootstrap.servers": b.bootstrap, "group.id": unique("txn-dur-reader"),
                  "enable.auto.commit": False, "enable.partition.eof": True,
                  "isolation.level": isolation, "log_level": 2})
    c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
    seen = {p: [] for p in range(partitions)}
    eof, deadline = set(), time.monotonic() + timeout
    try:
        while len(eof) < partitions and time.monotonic() < deadline:
            m = c.poll(0.2)
            if m is None:
                continue
            if m.error():
                if m.error().code() == KafkaError._PARTITION_EOF:
                    eof.add(m.partition())
                    continue
                raise AssertionError("consume error: %s" % m.error())
            seen[m.partition()].append(m.value())
    finally:
        c.close()
    assert len(eof) == partitions, "%s: did not reach the end of every partition of %s (%s)" % (
        isolation, topic, sorted(eof))
    return seen


# -- raw requests -------------------------------------------------------------------------

_corr = iter(range(1, 1 << 30))


def call(port, frame_fn, *args, version=None):
    with kw.connect(port, timeout=10) as s:
        corr = next(_corr)
        if version is None:
            s.sendall(frame_fn(corr, "txn-durability", *args))
        else:
            s.sendall(frame_fn(version, corr, "txn-durability", *args))
        got, body = kw.recv_frame(s)
    assert got == corr
    return body


def leader_ports(b, topic):
    md = kw.parse_metadata(kw.METADATA_V, call(b.port, kw.metadata_request, [topic],
                                               version=kw.METADATA_V))
    [t] = md["topics"]
    assert t["error"] == 0, t
    return {p["index"]: md["brokers"][p["leader"]][1] for p in t["partitions"]}


def offsets(b, topic):
    """{partition: (high watermark, last stable offset)} from ListOffsets v5 latest under
    read_uncommitted and read_committed."""
    out = {}
    for part, port in leader_ports(b, topic).items():
        got = []
        for iso in (kw.ISOLATION_READ_UNCOMMITTED, kw.ISOLATION_READ_COMMITTED):
            r = kw.parse_list_offsets(5, call(port, kw.list_offsets_request, topic, [part], -1, iso,
                                              version=5))[(topic, part)]
            assert r["error"] == 0, r
            got.append(r["offset"])
        out[part] = tuple(got)
    return out


def coordinator(b, key, key_type):
    r = kw.parse_find_coordinator(2, call(b.port, kw.find_coordinator_request, key, key_type))
    assert r["error"] == 0, r
    return r["port"]


def describe(b, txn_id):
    d = kw.parse_describe_transactions(call(coordinator(b, txn_id, 1),
                                            kw.describe_transactions_request, [txn_id]))
    return d[txn_id]


def wait_state(b, txn_id, states, timeout):
    deadline = time.monotonic() + timeout
    while True:
        d = describe(b, txn_id)
        if d["state"] in states or time.monotonic() > deadline:
            return d
        time.sleep(0.1)


def committed_offsets(b, group, topic, require_stable):
    """OffsetFetch v7 of the group: {partition: (offset, error)}."""
    r = kw.parse_offset_fetch(7, call(coordinator(b, group, 0), kw.offset_fetch_request, group,
                                      topic, list(range(PARTITIONS)), require_stable, version=7))
    assert r["error"] == 0, r
    return {p: (v["offset"], v["error"]) for (_t, p), v in r["partitions"].items()}


def assert_lso_is_hw(b, topic, why):
    offs = offsets(b, topic)
    held = {p: o for p, o in offs.items() if o[0] != o[1]}
    assert not held, ("%s: with no transaction open the last stable offset must equal the high "
                      "watermark; (HW, LSO) per partition: %s" % (why, offs))
    return offs


# -- the matrix ---------------------------------------------------------------------------

def test_kill9_while_ongoing():
    with broker_with(0) as b:
        topic = create_topic(b, unique("txn-dur-ongoing"))
        txn_id = unique("txn-dur-ongoing-id")
        p = txn_producer(b, txn_id)
        p.begin_transaction()
        before = produce_all(p, topic, "committed")
        p.commit_transaction(15)
        base = assert_lso_is_hw(b, topic, "after the first commit")
        p.begin_transaction()
        open_ = produce_all(p, topic, "open")
        assert describe(b, txn_id)["state"] == "Ongoing"
        b.kill9(restart=False)
        killed_at = time.monotonic()
        drop(p)
        restarted = b.log_size()
        b.start()

        # the transaction survived the crash, still open: LSO held at its first record
        d = describe(b, txn_id)
        assert d["state"] == "Ongoing", (
            "after kill -9 and a restart %.1f s later the open transaction is %s; it must stay "
            "Ongoing until transaction.timeout.ms=%d: %r"
            % (time.monotonic() - killed_at, d["state"], TXN_TIMEOUT_MS, d))
        assert sorted(d["topics"].get(topic, [])) == list(range(PARTITIONS)), d
        offs = offsets(b, topic)
        for part in range(PARTITIONS):
            hw, lso = offs[part]
            assert lso == base[part][0], (
                "%s-%d: last stable offset %d after the restart; the open transaction starts "
                "at %d and must hold it there" % (topic, part, lso, base[part][0]))
            assert hw == base[part][0] + PER_PARTITION, (topic, part, offs[part], base[part])
        assert read(b, topic, "read_committed") == before

        # then its timeout aborts it
        d = wait_state(b, txn_id, ("CompleteAbort",), TXN_TIMEOUT_MS / 1000.0 + 10)
        assert d["state"] == "CompleteAbort", (
            "the transaction open across the crash was not aborted after its timeout: %r\n%s"
            % (d, b.log_tail(30)))
        assert d["producer_epoch"] > 0, d
        assert b.wait_for_log(r"transactional id %s: .*(past its transaction\.timeout\.ms|"
                              r"timed out)" % re.escape(txn_id), since=restarted, timeout=1), (
            "no log line says the transaction timed out:\n%s" % b.log_since(restarted)[-3000:])
        offs = assert_lso_is_hw(b, topic, "after the timeout abort")
        for part in range(PARTITIONS):
            assert offs[part][0] == base[part][0] + PER_PARTITION + 1, (
                "%s-%d: high watermark %d; the aborted records and one ABORT marker follow %d"
                % (topic, part, offs[part][0], base[part][0]))
        assert read(b, topic, "read_committed") == before, "read_committed shows aborted records"
        everything = {part: before[part] + open_[part] for part in range(PARTITIONS)}
        assert read(b, topic, "read_uncommitted") == everything
        # the fenced producer (the epoch before the abort) is refused
        err = kw.parse_end_txn(3, call(coordinator(b, txn_id, 1), kw.end_txn_request, txn_id,
                                       d["producer_id"], d["producer_epoch"] - 1, True, version=3))
        assert err == kw.ERR_PRODUCER_FENCED, (
            "EndTxn v3 of the producer whose transaction timed out: %d, Kafka answers 90" % err)
        # the abort survives another crash: the aborted records stay hidden from read_committed
        b.kill9(restart=True)
        assert_lso_is_hw(b, topic, "after a second kill -9")
        assert read(b, topic, "read_committed") == before, (
            "read_committed shows the aborted records after a second kill -9")
        assert read(b, topic, "read_uncommitted") == everything


def _kill_between_markers(b, topic, txn_id, commit, before_first):
    """A transaction over every partition decided (commit or abort) with markers
    MARKER_DELAY_MS apart, killed after the first marker and before the last (before_first:
    before any marker); returns the records and the data end offsets."""
    p = txn_producer(b, txn_id)
    p.begin_transaction()
    want = produce_all(p, topic, "commit" if commit else "abort")
    data_end = {part: hw for part, (hw, _lso) in offsets(b, topic).items()}
    t0 = time.monotonic()
    if commit:
        p.commit_transaction(15)
    else:
        p.abort_transaction(15)
    took = time.monotonic() - t0
    assert took < MARKER_DELAY_MS / 1000.0, (
        "%s_transaction() took %.2f s: EndTxn should be answered once the decision is stored, "
        "before the markers (transaction.marker.delay.ms=%d)"
        % ("commit" if commit else "abort", took, MARKER_DELAY_MS))
    prepare = "PrepareCommit" if commit else "PrepareAbort"
    d = describe(b, txn_id)
    assert d["state"] == prepare, d
    # an undecided partition (no marker yet) holds the last stable offset at the data
    offs = offsets(b, topic)
    for part in range(PARTITIONS):
        hw, lso = offs[part]
        if hw == data_end[part]:
            assert lso == data_end[part] - PER_PARTITION, (
                "%s-%d before its marker: LSO %d, the transaction's first record is at %d"
                % (topic, part, lso, data_end[part] - PER_PARTITION))
    deadline = time.monotonic() + (PARTITIONS + 2) * MARKER_DELAY_MS / 1000.0
    marked = []
    while not before_first and time.monotonic() < deadline:
        offs = offsets(b, topic)
        marked = [part for part in range(PARTITIONS) if offs[part][0] > data_end[part]]
        if marked:
            break
        time.sleep(0.05)
    if before_first:
        offs = offsets(b, topic)
        marked = [part for part in range(PARTITIONS) if offs[part][0] > data_end[part]]
    b.kill9(restart=False)
    if before_first:
        assert not marked, "wanted to kill before the first marker; marked: %s" % marked
    else:
        assert 0 < len(marked) < PARTITIONS, (
            "wanted to kill between the markers; partitions with a marker: %s" % marked)
    drop(p)
    return want, data_end


MARKER_KILLS = [(True, False), (False, False), (True, True), (False, True)]


@pytest.mark.parametrize("commit,before_first", MARKER_KILLS,
                         ids=["commit", "abort", "commit-before-first-marker",
                              "abort-before-first-marker"])
def test_kill9_between_markers(commit, before_first):
    with broker_with(MARKER_DELAY_MS) as b:
        topic = create_topic(b, unique("txn-dur-markers"))
        txn_id = unique("txn-dur-markers-id")
        want, data_end = _kill_between_markers(b, topic, txn_id, commit, before_first)
        since = b.log_size()
        b.start()
        complete = "CompleteCommit" if commit else "CompleteAbort"
        d = wait_state(b, txn_id, (complete,), (PARTITIONS + 2) * MARKER_DELAY_MS / 1000.0)
        assert d["state"] == complete, (
            "after kill -9 between the markers and a restart the transaction is %r; Kafka "
            "completes the decision (%s)\n%s" % (d, complete, b.log_since(since)[-3000:]))
        assert not d["topics"], d
        offs = assert_lso_is_hw(b, topic, "after completing the %s" % complete)
        for part in range(PARTITIONS):
            # a marker on every partition (a restarted coordinator may repeat one, as Kafka's)
            assert data_end[part] + 1 <= offs[part][0] <= data_end[part] + 2, (
                "%s-%d: high watermark %d after the restart; data ends at %d, so its marker "
                "must follow" % (topic, part, offs[part][0], data_end[part]))
        committed = read(b, topic, "read_committed")
        if commit:
            assert committed == want, (
                "read_committed after kill -9 between the COMMIT markers: %r; the committed "
                "records are %r" % (committed, want))
        else:
            assert committed == {part: [] for part in range(PARTITIONS)}, (
                "read_committed shows records of an aborted transaction: %r" % committed)
        assert read(b, topic, "read_uncommitted") == want
        if before_first or not commit:
            return
        # the producer's id can go on: a new producer of it commits a transaction
        p = txn_producer(b, txn_id)
        p.begin_transaction()
        more = produce_all(p, topic, "after")
        p.commit_transaction(15)
        d = wait_state(b, txn_id, ("CompleteCommit",), (PARTITIONS + 2) * MARKER_DELAY_MS / 1000.0)
        assert d["state"] == "CompleteCommit", d
        got = read(b, topic, "read_committed")
        assert got == {part: (want[part] if commit else []) + more[part]
                       for part in range(PARTITIONS)}, got
        assert_lso_is_hw(b, topic, "after the next transaction")
        drop(p)


def test_kill9_right_after_commit():
    with broker_with(0) as b:
        topic = create_topic(b, unique("txn-dur-commit"))
        txn_id = unique("txn-dur-commit-id")
        p = txn_producer(b, txn_id)
        want = {part: [] for part in range(PARTITIONS)}
        for round_ in range(2):
            p.begin_transaction()
            got = produce_all(p, topic, "r%d" % round_)
            p.commit_transaction(15)
            b.kill9(restart=False)   # as soon as the commit is acknowledged
            for part in range(PARTITIONS):
                want[part] += got[part]
            b.start()
            d = describe(b, txn_id)
            assert d["state"] == "CompleteCommit", d
            assert_lso_is_hw(b, topic, "after kill -9 right after commit %d" % round_)
            committed = read(b, topic, "read_committed")
            assert committed == want, (
                "read_committed after kill -9 right after commit_transaction() returned: %r; "
                "acknowledged commits hold %r" % (committed, want))
        drop(p)


@pytest.mark.parametrize("outcome", ["killed", "committed", "between-markers"])
def test_kill9_pending_offsets(outcome):
    with broker_with(MARKER_DELAY_MS if outcome == "between-markers" else 0) as b:
        src = create_topic(b, unique("txn-dur-in"))
        dst = create_topic(b, unique("txn-dur-out"))
        group = unique("txn-dur-group")
        txn_id = unique("txn-dur-ctp-id")
        n = 2 * PER_PARTITION
        plain = Producer({"bootstrap.servers": b.bootstrap, "linger.ms": 0, "log_level": 2})
        for part in range(PARTITIONS):
            for i in range(n):
                plain.produce(src, value=b"in-p%d-%d" % (part, i), partition=part)
        assert plain.flush(15) == 0

        consumer = Consumer({"bootstrap.servers": b.bootstrap, "group.id": group,
                             "enable.auto.commit": False, "isolation.level": "read_committed",
                             "auto.offset.reset": "earliest", "log_level": 2})
        consumer.assign([TopicPartition(src, part, 0) for part in range(PARTITIONS)])
        producer = txn_producer(b, txn_id)

        def transform(count):
            """Consumes `count` records per partition, produces them upper-cased to the same
            partition of dst, and sends the consumed offsets to the transaction."""
            got = {part: [] for part in range(PARTITIONS)}
            deadline = time.monotonic() + 15
            while sum(map(len, got.values())) < count * PARTITIONS and time.monotonic() < deadline:
                m = consumer.poll(0.2)
                if m is None or m.error():
                    continue
                if len(got[m.partition()]) < count:
                    got[m.partition()].append((m.offset(), m.value()))
                else:  # not in this transaction: read it again next time
                    consumer.seek(TopicPartition(src, m.partition(), m.offset()))
            assert all(len(v) == count for v in got.values()), got
            for part, recs in got.items():
                for _o, v in recs:
                    producer.produce(dst, value=v.upper(), partition=part)
            assert producer.flush(15) == 0
            offs = [TopicPartition(src, part, recs[-1][0] + 1) for part, recs in got.items()]
            producer.send_offsets_to_transaction(offs, consumer.consumer_group_metadata(), 15)
            return {part: [v.upper() for _o, v in recs] for part, recs in got.items()}

        producer.begin_transaction()
        first = transform(PER_PARTITION)
        producer.commit_transaction(15)
        old = {part: (PER_PARTITION, 0) for part in range(PARTITIONS)}
        d = wait_state(b, txn_id, ("CompleteCommit",), (PARTITIONS + 3) * MARKER_DELAY_MS / 1000.0)
        assert d["state"] == "CompleteCommit", d
        assert committed_offsets(b, group, src, True) == old

        producer.begin_transaction()
        second = transform(PER_PARTITION)
        if outcome != "killed":
            producer.commit_transaction(15)
        if outcome == "between-markers":
            d = describe(b, txn_id)
            assert d["state"] == "PrepareCommit", d
            time.sleep(MARKER_DELAY_MS * 1.5 / 1000.0)   # one marker written, not all
            d = describe(b, txn_id)
            assert d["state"] == "PrepareCommit", d
        b.kill9(restart=False)
        killed_at = time.monotonic()
        drop(producer)
        consumer.close()
        b.start()

        if outcome != "killed":
            d = wait_state(b, txn_id, ("CompleteCommit",),
                           (PARTITIONS + 3) * MARKER_DELAY_MS / 1000.0)
            assert d["state"] == "CompleteCommit", d
            new = {part: (n, 0) for part in range(PARTITIONS)}
            got = committed_offsets(b, group, src, True)
            assert got == new, ("the group's committed offsets after kill -9 right after the "
                                "commit: %r, the transaction committed %r" % (got, new))
            assert read(b, dst, "read_committed") == {
                part: first[part] + second[part] for part in range(PARTITIONS)}
        else:
            d = describe(b, txn_id)
            assert d["state"] == "Ongoing", (
                "the transaction killed before its commit, %.1f s after: %r"
                % (time.monotonic() - killed_at, d))
            # the pending offsets are not the group's: the old ones are, and require_stable
            # (KIP-447) says a transaction may still change them
            got = committed_offsets(b, group, src, False)
            assert got == old, ("the group's committed offsets with a transaction pending after "
                                "the restart: %r, expected the old %r" % (got, old))
            stable = committed_offsets(b, group, src, True)
            assert all(e == kw.ERR_UNSTABLE_OFFSET_COMMIT for _o, e in stable.values()), (
                "OffsetFetch require_stable with transactional offsets pending: %r (Kafka: 88 "
                "UNSTABLE_OFFSET_COMMIT)" % stable)
            d = wait_state(b, txn_id, ("CompleteAbort",), TXN_TIMEOUT_MS / 1000.0 + 10)
            assert d["state"] == "CompleteAbort", d
            got = committed_offsets(b, group, src, True)
            assert got == old, ("the group's committed offsets after the transaction killed "
                                "before its commit was aborted: %r, expected %r" % (got, old))
            assert read(b, dst, "read_committed") == first
        assert_lso_is_hw(b, dst, "after the restart (%s)" % outcome)


def test_kill9_during_fence_abort():
    """A second producer's InitProducerId fences an open transaction (Kafka: the epoch is
    bumped, the transaction aborted with it, CONCURRENT_TRANSACTIONS answered so the producer
    retries); kill -9 while the ABORT markers are being written: after the restart the
    transaction is CompleteAbort at the fencing epoch, none of it is visible, and the retried
    InitProducerId gets the epoch after it."""
    with broker_with(MARKER_DELAY_MS) as b:
        topic = create_topic(b, unique("txn-dur-fence"))
        txn_id = unique("txn-dur-fence-id")
        p = txn_producer(b, txn_id)
        p.begin_transaction()
        want = produce_all(p, topic, "fenced")
        d = describe(b, txn_id)
        assert d["state"] == "Ongoing", d
        epoch = d["producer_epoch"]
        port = coordinator(b, txn_id, 1)
        r = kw.parse_init_producer_id(4, call(port, kw.init_producer_id_request, txn_id,
                                              TXN_TIMEOUT_MS, version=4))
        assert r["error"] == kw.ERR_CONCURRENT_TRANSACTIONS, (
            "InitProducerId while another producer's transaction is open: %r (Kafka fences and "
            "answers 51)" % r)
        d = describe(b, txn_id)
        assert d["state"] == "PrepareAbort" and d["producer_epoch"] == epoch + 1, d
        b.kill9(restart=False)
        drop(p)
        b.start()
        d = wait_state(b, txn_id, ("CompleteAbort",), (PARTITIONS + 2) * MARKER_DELAY_MS / 1000.0)
        assert d["state"] == "CompleteAbort" and d["producer_epoch"] == epoch + 1, d
        assert_lso_is_hw(b, topic, "after the fence-abort was completed")
        assert read(b, topic, "read_committed") == {part: [] for part in range(PARTITIONS)}
        assert read(b, topic, "read_uncommitted") == want
        r = kw.parse_init_producer_id(4, call(port, kw.init_producer_id_request, txn_id,
                                              TXN_TIMEOUT_MS, version=4))
        assert r["error"] == 0 and r["producer_epoch"] == epoch + 2, (
            "the retried InitProducerId after the fence: %r; Kafka gives epoch %d" % (r, epoch + 2))


def test_kill9_interleaved_transactions():
    """Two producers' transactions interleaved on every partition: A's records, B's, A's again,
    A aborts; kill -9 with B still open, and both producers stay alive across the restart. B's
    transaction (Ongoing after the restart) holds the last stable offset at its first record
    and then commits: read_committed shows exactly B's records, skipping A's aborted ones on
    both sides of B's, and so it stays after one more kill -9 (the aborted-transaction index
    is durable)."""
    with broker_with(0) as b:
        topic = create_topic(b, unique("txn-dur-interleaved"))
        a = txn_producer(b, unique("txn-dur-a"), timeout_ms=20000)
        bp = txn_producer(b, unique("txn-dur-b"), timeout_ms=20000)
        a.begin_transaction()
        bp.begin_transaction()
        a1 = produce_all(a, topic, "a1")
        b1 = produce_all(bp, topic, "b1")
        a2 = produce_all(a, topic, "a2")
        a.abort_transaction(15)
        b.kill9(restart=True)

        n = PER_PARTITION
        offs = offsets(b, topic)
        for part in range(PARTITIONS):
            assert offs[part] == (3 * n + 1, n), (
                "%s-%d after the restart: (HW, LSO) %r; A's records, B's, A's, A's ABORT "
                "marker make HW %d, and B's open transaction holds the LSO at %d"
                % (topic, part, offs[part], 3 * n + 1, n))
        assert read(b, topic, "read_committed") == {part: [] for part in range(PARTITIONS)}

        b2 = produce_all(bp, topic, "b2")   # the same producer, reconnected
        bp.commit_transaction(15)
        want = {part: b1[part] + b2[part] for part in range(PARTITIONS)}
        every = {part: a1[part] + b1[part] + a2[part] + b2[part] for part in range(PARTITIONS)}
        assert_lso_is_hw(b, topic, "after B's commit")
        assert read(b, topic, "read_committed") == want
        assert read(b, topic, "read_uncommitted") == every
        b.kill9(restart=True)
        assert_lso_is_hw(b, topic, "after another kill -9")
        assert read(b, topic, "read_committed") == want, "A's aborted records show after kill -9"
        assert read(b, topic, "read_uncommitted") == every
        drop(a)
        drop(bp)


def test_kill9_after_deleting_a_topic_of_an_open_transaction():
    """The transaction's partitions are stored in its coordinator row (migration 18): deleting
    a topic takes its partitions out of that row in the deletion's own commit. After a kill -9
    the open transaction names only the topic that is left, and a topic created after the
    deletion (which may get the deleted one's storage id) gets no marker of it."""
    with broker_with(0) as b:
        kept = create_topic(b, unique("txn-dur-kept"))
        gone = create_topic(b, unique("txn-dur-gone"))
        txn_id = unique("txn-dur-deleted-id")
        p = txn_producer(b, txn_id)
        p.begin_transaction()
        open_kept = produce_all(p, kept, "kept")
        produce_all(p, gone, "gone")
        admin = AdminClient({"bootstrap.servers": b.bootstrap})
        admin.delete_topics([gone])[gone].result(timeout=20)
        after = create_topic(b, unique("txn-dur-after"))
        assert describe(b, txn_id)["topics"] == {kept: list(range(PARTITIONS))}
        b.kill9(restart=False)
        drop(p)
        restarted = b.log_size()
        b.start()

        d = describe(b, txn_id)
        assert d["state"] == "Ongoing", d
        assert d["topics"] == {kept: list(range(PARTITIONS))}, (
            "after kill -9 the open transaction names %r; only %s is left of its topics"
            % (d["topics"], kept))
        log = b.log_since(restarted)
        assert "no longer exists" not in log, (
            "the stored transaction still named the deleted topic's partitions:\n%s" % log[-3000:])
        d = wait_state(b, txn_id, ("CompleteAbort",), TXN_TIMEOUT_MS / 1000.0 + 10)
        assert d["state"] == "CompleteAbort", d
        offs = assert_lso_is_hw(b, kept, "after the timeout abort")
        for part in range(PARTITIONS):
            assert offs[part][0] == PER_PARTITION + 1, (kept, part, offs[part])
        for part, (hw, lso) in offsets(b, after).items():
            assert (hw, lso) == (0, 0), (
                "%s-%d, created after the deletion: (HW, LSO) (%d, %d); the aborted transaction "
                "never wrote to it, so no ABORT marker belongs there" % (after, part, hw, lso))
        assert read(b, kept, "read_committed") == {part: [] for part in range(PARTITIONS)}
        assert read(b, kept, "read_uncommitted") == open_kept


def snapshot_txn_firsts(b, topic):
    """{partition: [txn_first, ...]} of the topic's producer snapshot rows with an open
    transaction, read from the stopped broker's database."""
    import sqlite3
    db = sqlite3.connect(str(b.db_path))
    try:
        rows = db.execute("SELECT s.partition, s.txn_first FROM producer_snapshot s JOIN topics t"
                          " ON t.id = s.topic_id WHERE t.name = ? AND s.txn_first >= 0"
                          " ORDER BY s.partition, s.txn_first", (topic,)).fetchall()
    finally:
        db.close()
    out = {}
    for part, first in rows:
        out.setdefault(part, []).append(first)
    return out


def test_kill9_open_transactions_across_the_producer_snapshot():
    """Open transactions have no row of their own: a clean stop folds A's (open) into the
    producer snapshot, B's begins after it and is found in the batch rows past the snapshot.
    After kill -9 both hold the last stable offset (at A's first record, the older); B's
    commit leaves it there, A's abort releases it: read_committed shows exactly B's records,
    and so it stays after one more kill -9."""
    with broker_with(0) as b:
        topic = create_topic(b, unique("txn-dur-snapshot"))
        a = txn_producer(b, unique("txn-dur-snap-a"), timeout_ms=30000)
        bp = txn_producer(b, unique("txn-dur-snap-b"), timeout_ms=30000)
        a.begin_transaction()
        a1 = produce_all(a, topic, "a1")
        b.stop(check=True)
        assert snapshot_txn_firsts(b, topic) == {part: [0] for part in range(PARTITIONS)}, (
            "the clean stop's producer snapshot does not hold A's open transaction")
        b.start()
        n = PER_PARTITION
        for part, (hw, lso) in offsets(b, topic).items():
            assert (hw, lso) == (n, 0), (topic, part, hw, lso)

        bp.begin_transaction()
        b1 = produce_all(bp, topic, "b1")     # opens past the snapshot, at offset n
        a2 = produce_all(a, topic, "a2")
        b.kill9(restart=True)

        offs = offsets(b, topic)
        for part in range(PARTITIONS):
            assert offs[part] == (3 * n, 0), (
                "%s-%d after kill -9: (HW, LSO) %r; A's transaction, open since before the "
                "snapshot, holds the LSO at 0" % (topic, part, offs[part]))
        assert read(b, topic, "read_committed") == {part: [] for part in range(PARTITIONS)}

        bp.commit_transaction(15)
        offs = offsets(b, topic)
        for part in range(PARTITIONS):
            assert offs[part] == (3 * n + 1, 0), ("B's commit must leave A's hold", part, offs[part])
        a.abort_transaction(15)
        offs = assert_lso_is_hw(b, topic, "after A's abort")
        for part in range(PARTITIONS):
            assert offs[part][0] == 3 * n + 2, (part, offs[part])
        want = {part: b1[part] for part in range(PARTITIONS)}
        every = {part: a1[part] + b1[part] + a2[part] for part in range(PARTITIONS)}
        assert read(b, topic, "read_committed") == want
        assert read(b, topic, "read_uncommitted") == every
        b.kill9(restart=True)
        assert_lso_is_hw(b, topic, "after another kill -9")
        assert read(b, topic, "read_committed") == want
        drop(a)
        drop(bp)


def test_kill9_transaction_begun_past_the_snapshot_is_decided_by_its_marker():
    """B opens past the snapshot and is aborted before kill -9: the fold past the snapshot sees
    its ABORT markers and finds nothing open (the LSO is the high watermark), while C, begun
    after them, holds it; C then commits after the restart."""
    with broker_with(0) as b:
        topic = create_topic(b, unique("txn-dur-snapshot-b"))
        bp = txn_producer(b, unique("txn-dur-snap-b"), timeout_ms=30000)
        cp = txn_producer(b, unique("txn-dur-snap-c"), timeout_ms=30000)
        b.restart()                           # a snapshot before anything: every row is past it
        bp.begin_transaction()
        produce_all(bp, topic, "b1")
        bp.abort_transaction(15)
        n = PER_PARTITION
        cp.begin_transaction()
        c1 = produce_all(cp, topic, "c1")     # at n + 1, after B's ABORT marker
        b.kill9(restart=True)
        offs = offsets(b, topic)
        for part in range(PARTITIONS):
            assert offs[part] == (2 * n + 1, n + 1), (part, offs[part])
        cp.commit_transaction(15)
        assert_lso_is_hw(b, topic, "after C's commit")
        assert read(b, topic, "read_committed") == c1
        drop(bp)
        drop(cp)
