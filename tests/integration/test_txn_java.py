"""Kafka transactions with the Java client (kafka-clients 4.4; issue 15).

The Java programs are `tests/clients/java` commands (Transactions.java): `txn-produce` (N
committed and M aborted transactions interleaved, optionally one left open), `txn-consume`
(every partition from the beginning with an isolation level, until caught up with the end
offsets -- the last stable offset for read_committed), `txn-fence` (a second producer with the
same transactional.id fences the first), `txn-ctp` (consume-transform-produce with
sendOffsetsToTransaction(offsets, groupMetadata), KIP-447) and `committed-offsets`.

Every expectation is computed here from the options passed, never taken from the program under
test: what read_committed must show (exactly the committed records, in order per partition),
what read_uncommitted must show (aborted records too), where the offsets must end (one control
record per transaction and partition), which exception fences a zombie, and that a crashed
consume-transform-produce run followed by a second one commits every input offset once and writes
exactly one copy of every input record.

The module's broker runs the default (serverless) profile.
"""

import collections
import os
import time

import pytest

from harness import Broker, client_command, run_client, running

PARTITIONS = 3
PER_TXN = 10          # records per transaction, record i to partition i % PARTITIONS
CLIENT_TIMEOUT = 90   # bound on any one Java run (its own calls are bounded at 20-60 s)

pytestmark = pytest.mark.timeout(240)

TXN_KEYS = {
    # a transaction left open past its timeout is aborted within about half a second
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": 500,
}


def txn_config(extra=None):
    return {**TXN_KEYS, **(extra or {})}


@pytest.fixture(scope="module")
def broker_config():
    cfg = {"group.initial.rebalance.delay.ms": 0}
    cfg.update(txn_config())
    return cfg


@pytest.fixture(scope="module", autouse=True)
def java_built():
    if client_command("java") is None:
        if os.environ.get("CI"):
            pytest.fail("java client is not built (tools/install-deps --test builds it)")
        pytest.skip("java client is not built (tests/clients/java/install.sh)")


# -- helpers ------------------------------------------------------------------------------

def java(*args, timeout=CLIENT_TIMEOUT):
    return run_client("java", [str(a) for a in args], timeout=timeout)


def create_topic(bootstrap, topic, partitions=PARTITIONS):
    assert java("create-topic", "--bootstrap", bootstrap, "--topic", topic,
                "--partitions", partitions) == {"created": topic}


def txn_values(name, per_txn=PER_TXN):
    """The values of one transaction `name` (e.g. "c-0"): name-0 .. name-(R-1)."""
    return ["%s-%d" % (name, i) for i in range(per_txn)]


def interleaved(commits, aborts, prefix=""):
    """The transactions txn-produce runs, in order: c-0 a-0 c-1 a-1 ... then the rest."""
    names = []
    for t in range(max(commits, aborts)):
        if t < commits:
            names.append(prefix + "c-%d" % t)
        if t < aborts:
            names.append(prefix + "a-%d" % t)
    return names


def per_partition(values, partitions=PARTITIONS):
    """{p: [values in log order]} for values "<txn>-<i>" written to partition i % P, in that order."""
    out = {p: [] for p in range(partitions)}
    for v in values:
        out[int(v.rsplit("-", 1)[1]) % partitions].append(v)
    return out


def consume(bootstrap, topic, isolation, idle_ms=1500, timeout_s=40):
    """txn-consume; fails the test unless it caught up with the end offsets."""
    res = java("txn-consume", "--bootstrap", bootstrap, "--topic", topic, "--isolation", isolation,
               "--idle-ms", idle_ms, "--timeout-s", timeout_s)
    assert res["complete"], ("%s consumer of %s did not reach the end offsets within %d s: "
                             "positions %s, end offsets %s, %d records"
                             % (isolation, topic, timeout_s, res["positions"], res["end_offsets"],
                                res["count"]))
    return res


def log_order(res):
    """{p: [values in offset order]} from a txn-consume result, offsets checked increasing."""
    out = collections.defaultdict(list)
    last = {}
    for p, o, _k, v in res["records"]:
        assert o > last.get(p, -1), "partition %d: offset %d after %d" % (p, o, last[p])
        last[p] = o
        out[p].append(v)
    return {p: out.get(p, []) for p in range(PARTITIONS)}


def ends(res):
    return {int(p): o for p, o in res["end_offsets"].items()}


def produce_txns(bootstrap, topic, txn_id, commits, aborts, *extra):
    res = java("txn-produce", "--bootstrap", bootstrap, "--topic", topic, "--transactional-id", txn_id,
               "--commit", commits, "--abort", aborts, "--records-per-txn", PER_TXN, *extra)
    return res


# -- 1. commit and abort, seen through both isolation levels -------------------------------

def test_commit_and_abort_by_isolation_level(broker):
    b, topic = broker.bootstrap, "txn-isolation"
    create_topic(b, topic)
    commits, aborts = 4, 3
    res = produce_txns(b, topic, "txn-isolation-1", commits, aborts)
    order = interleaved(commits, aborts)
    committed = [v for t in order if t.startswith("c-") for v in txn_values(t)]
    everything = [v for t in order for v in txn_values(t)]
    assert res["order"] == order and res["committed"] == committed and res["partitions"] == PARTITIONS, res

    rc = consume(b, topic, "read_committed")
    assert collections.Counter(rc["values"]) == collections.Counter(committed), (
        "read_committed must show exactly the %d committed records, each once: got %d records, "
        "aborted among them: %s" % (len(committed), rc["count"],
                                    sorted(v for v in rc["values"] if v.startswith("a-"))[:20]))
    assert log_order(rc) == per_partition(committed), "committed records out of order"

    ru = consume(b, topic, "read_uncommitted")
    assert collections.Counter(ru["values"]) == collections.Counter(everything), (
        "read_uncommitted must show every record, aborted ones included: got %d of %d"
        % (ru["count"], len(everything)))
    assert log_order(ru) == per_partition(everything), "records out of order"

    # Every transaction wrote to every partition (10 records over 3), so each partition holds one
    # control record (marker) per transaction: the end offset is records + markers; with nothing
    # open the last stable offset (read_committed's end) is the high watermark.
    markers = commits + aborts
    want_end = {p: len(vs) + markers for p, vs in per_partition(everything).items()}
    assert ends(ru) == want_end, "end offsets %s, expected records + %d markers: %s" % (
        ends(ru), markers, want_end)
    assert ends(rc) == want_end, "last stable offsets %s, expected %s (no open transaction)" % (
        ends(rc), want_end)


# -- 2. an open transaction holds read_committed back until it times out --------------------

def test_open_transaction_holds_back_read_committed_until_aborted(broker):
    b, topic = broker.bootstrap, "txn-open"
    create_topic(b, topic)
    timeout_ms = 20000
    t0 = time.monotonic()
    x = produce_txns(b, topic, "txn-open-x", 2, 0, "--prefix", "x-", "--open", 1,
                     "--transaction-timeout-ms", timeout_ms)
    x_committed = txn_values("x-c-0") + txn_values("x-c-1")
    x_open = txn_values("x-o-0")
    assert x["committed"] == x_committed and x["open"] == x_open, x
    # Another producer commits after the open transaction's records, on every partition.
    y = produce_txns(b, topic, "txn-open-y", 1, 0, "--prefix", "y-")
    y_committed = txn_values("y-c-0")
    assert y["committed"] == y_committed, y

    rc = consume(b, topic, "read_committed", idle_ms=1000)
    elapsed = time.monotonic() - t0
    assert elapsed < timeout_ms / 1000.0, (
        "the machine took %.1f s, past the open transaction's %d ms timeout: nothing to observe"
        % (elapsed, timeout_ms))
    assert rc["values"] == [v for vs in per_partition(x_committed).values() for v in vs], (
        "while x's transaction is open, read_committed must stop at its first record (the last "
        "stable offset): only x's committed records, not y's later ones; got %s" % rc["values"])
    ru = consume(b, topic, "read_uncommitted", idle_ms=500)
    assert collections.Counter(ru["values"]) == collections.Counter(x_committed + x_open + y_committed)
    assert all(ends(rc)[p] < ends(ru)[p] for p in range(PARTITIONS)), (
        "last stable offsets %s must lie below the high watermarks %s" % (ends(rc), ends(ru)))

    # The broker aborts the open transaction once its timeout has passed (checked every
    # transaction.abort.timed.out.transaction.cleanup.interval.ms); then y's records show.
    interval_s = TXN_KEYS["transaction.abort.timed.out.transaction.cleanup.interval.ms"] / 1000.0
    deadline = t0 + timeout_ms / 1000.0 + interval_s + 25
    while True:
        rc = consume(b, topic, "read_committed", idle_ms=500)
        if set(y_committed) <= set(rc["values"]) or time.monotonic() > deadline:
            break
        time.sleep(1)
    assert collections.Counter(rc["values"]) == collections.Counter(x_committed + y_committed), (
        "%.0f s after the open transaction began (timeout %d ms), read_committed must show x's and "
        "y's committed records and none of the timed-out transaction's: got %s\n%s"
        % (time.monotonic() - t0, timeout_ms, rc["values"], broker.log_tail(30)))
    ru = consume(b, topic, "read_uncommitted", idle_ms=500)
    assert ends(rc) == ends(ru), "an aborted transaction leaves no open offset: %s vs %s" % (
        ends(rc), ends(ru))

    # The timed-out producer's transactional.id is usable again.
    again = produce_txns(b, topic, "txn-open-x", 1, 0, "--prefix", "x2-")
    assert again["committed"] == txn_values("x2-c-0")
    rc = consume(b, topic, "read_committed", idle_ms=500)
    assert collections.Counter(rc["values"]) == collections.Counter(
        x_committed + y_committed + txn_values("x2-c-0"))


# -- 3. fencing ---------------------------------------------------------------------------

def test_second_producer_fences_the_first(broker):
    b, topic = broker.bootstrap, "txn-fence"
    create_topic(b, topic)
    res = java("txn-fence", "--bootstrap", b, "--topic", topic, "--transactional-id", "txn-fence-1",
               "--records-per-txn", PER_TXN)
    f1, f2 = txn_values("f1"), txn_values("f2")
    assert res["p1_commit"] == "failed", (
        "producer 1's commitTransaction succeeded after producer 2 initialised the same "
        "transactional.id: no fencing (%s)" % res)
    assert res["fenced"] and res["p1_error"] in ("ProducerFencedException", "InvalidProducerEpochException"), (
        "producer 1 must fail with ProducerFencedException or InvalidProducerEpochException, got %s "
        "(chain %s: %s)" % (res["p1_error"], res["p1_error_chain"], res.get("p1_error_message")))
    print("fenced with", res["p1_error"], res["p1_error_chain"])
    assert res["p1_values"] == f1 and res["p2_values"] == f2

    rc = consume(b, topic, "read_committed")
    assert collections.Counter(rc["values"]) == collections.Counter(f2), (
        "read_committed must show producer 2's records only (producer 1's transaction was aborted "
        "when producer 2 initialised): %s" % rc["values"])
    assert log_order(rc) == per_partition(f2)
    ru = consume(b, topic, "read_uncommitted")
    assert collections.Counter(ru["values"]) == collections.Counter(f1 + f2), (
        "producer 1's flushed records stay in the log as aborted: %s" % ru["values"])
    assert log_order(ru) == per_partition(f1 + f2)


# -- 4. consume-transform-produce: offsets and output exactly once across a crash -----------

def test_consume_transform_produce_exactly_once_across_a_crash(broker):
    b = broker.bootstrap
    src, dst, group, txn_id = "ctp-in", "ctp-out", "ctp-group", "ctp-1"
    count = 600
    create_topic(b, src)
    create_topic(b, dst)
    assert java("produce", "--bootstrap", b, "--topic", src, "--count", count, "--partitions", PARTITIONS,
                "--compression", "none", "--idempotent") == {"produced": count}
    # Record i: partition i % P, key "key-<i>", value "value-<i>-" + "x" * (i % 50) (Client.java).
    inputs = [("key-%d" % i, "value-%d-%s" % (i, "x" * (i % 50))) for i in range(count)]

    common = ["--bootstrap", b, "--input", src, "--output", dst, "--group", group, "--transactional-id",
              txn_id, "--max-poll-records", 40, "--session-timeout-ms", 6000, "--idle-ms", 2000]
    first = java("txn-ctp", *common, "--crash-after-txns", 3, "--timeout-s", 60)
    assert first["crashed"] and first["transactions"] == 3, first
    assert 0 < first["consumed"] < count and first["open_transaction_records"] > 0, first
    # The second run fences the first's transactional.id (its open transaction is aborted, with its
    # pending offsets) and resumes the group from the offsets the committed transactions stored.
    second = java("txn-ctp", *common, "--timeout-s", 75)
    assert not second["crashed"], second
    assert first["consumed"] + second["consumed"] == count, (
        "the two runs consumed %d + %d records in committed transactions, expected %d in all: the "
        "second run must resume exactly at the offsets the first one's committed transactions "
        "stored" % (first["consumed"], second["consumed"], count))

    offsets = java("committed-offsets", "--bootstrap", b, "--group", group, "--topic", src)
    want = {str(p): count // PARTITIONS for p in range(PARTITIONS)}
    assert offsets["end"] == want, offsets
    assert offsets["committed"] == want, (
        "the group's committed offsets must equal the input's end offsets %s: %s"
        % (want, offsets["committed"]))

    rc = consume(b, dst, "read_committed")
    got = collections.Counter((k, v) for _p, _o, k, v in rc["records"])
    expected = collections.Counter((k, "ctp:" + v) for k, v in inputs)
    missing = expected - got
    extra = got - expected
    assert not missing and not extra, (
        "read_committed output must hold exactly one copy of every input record: %d missing "
        "(e.g. %s), %d extra or duplicated (e.g. %s)"
        % (sum(missing.values()), list(missing)[:5], sum(extra.values()), list(extra)[:5]))
    # Input partition p went to output partition p, in order.
    by_p = collections.defaultdict(list)
    for p, _o, k, v in rc["records"]:
        by_p[p].append(k)
    for p in range(PARTITIONS):
        assert by_p[p] == ["key-%d" % i for i in range(p, count, PARTITIONS)], "partition %d out of order" % p
    # The crashed run's open transaction is in the log, aborted: read_uncommitted shows its copies.
    ru = consume(b, dst, "read_uncommitted")
    assert ru["count"] == count + first["open_transaction_records"], (
        "read_uncommitted: %d records, expected the %d committed plus the crashed transaction's %d"
        % (ru["count"], count, first["open_transaction_records"]))


def settled(br, topic, timeout, what):
    """Reads topic with both isolation levels until no transaction is open on it (the last
    stable offsets equal the high watermarks); returns (read_committed, read_uncommitted)."""
    deadline = time.monotonic() + timeout
    while True:
        rc = java("txn-consume", "--bootstrap", br.bootstrap, "--topic", topic, "--isolation", "read_committed",
                  "--idle-ms", 500, "--timeout-s", 10)
        ru = consume(br.bootstrap, topic, "read_uncommitted", idle_ms=500)
        done = rc["complete"] and ends(rc) == ends(ru)
        if done or time.monotonic() > deadline:
            break
        time.sleep(1)
    assert done, ("%s must be completed on every partition within %d s (last stable offsets %s, high "
                  "watermarks %s)\n%s" % (what, timeout, ends(rc), ends(ru), br.log_tail(40)))
    return rc, ru


# -- 5. the broker killed while it writes a decision's markers -----------------------------

@pytest.mark.parametrize("decision", ["commit", "abort"])
def test_decision_survives_broker_kill9_between_markers(decision):
    """transaction.marker.delay.ms (a test knob) spaces the markers of an EndTxn out, one
    partition per second, after the answer: kill -9 right after commitTransaction or
    abortTransaction returns lands between them; after the restart the decision is completed."""
    cfg = {"group.initial.rebalance.delay.ms": 0}
    cfg.update(txn_config({"transaction.marker.delay.ms": 1000}))
    with running(Broker(config=cfg)) as br:
        b, topic = br.bootstrap, "txn-markers-" + decision
        create_topic(b, topic)
        commits, aborts = (1, 0) if decision == "commit" else (0, 1)
        name = "c-0" if decision == "commit" else "a-0"
        res = produce_txns(b, topic, "txn-markers-" + decision, commits, aborts)
        assert res["order"] == [name], res
        br.kill9(restart=True)
        want_rc = txn_values(name) if decision == "commit" else []
        rc, ru = settled(br, topic, 30, "after the restart the %s" % decision)
        assert collections.Counter(rc["values"]) == collections.Counter(want_rc), rc["values"]
        assert collections.Counter(ru["values"]) == collections.Counter(txn_values(name))
        # One marker per partition, no more (a repeated marker would take another offset).
        assert ends(ru) == {p: len(vs) + 1 for p, vs in per_partition(txn_values(name)).items()}
        # The same transactional.id goes on after the restart.
        nxt = produce_txns(b, topic, "txn-markers-" + decision, 1, 0, "--prefix", "n-")
        assert nxt["committed"] == txn_values("n-c-0")
        # its markers follow one partition a second too
        rc, _ = settled(br, topic, 30, "the next commit")
        assert collections.Counter(rc["values"]) == collections.Counter(want_rc + txn_values("n-c-0"))
