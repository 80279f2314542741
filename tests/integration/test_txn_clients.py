"""Kafka transactions (issue 15) with real clients: exactly-once consume-transform-produce with
confluent-kafka, franz-go and kafkajs, and confluent-kafka's transactional producer.

Programs (tests/clients/*; see each file's doc):
  python client.py txn-transform   consumer (read_committed, no auto-commit) + transactional
                                   producer: begin, produce, send_offsets_to_transaction,
                                   commit (or abort every K-th, then seek back)   (txn.py)
  go client txn-transform          kgo.GroupTransactSession: Begin, ProduceSync, End   (txn.go)
  node client.js txn-transform     producer.transaction(), send, sendOffsets, commit/abort;
                                   a kafkajs consumer reads committed by default   (txn.js)
  python client.py txn-produce     N committed and M aborted transactions of deterministic records
  python client.py txn-consume     every partition from the beginning to its end, read_committed
                                   or read_uncommitted
  python client.py txn-committed   a group's committed offsets (OffsetFetch, require_stable)

  test_transform_exactly_once[*]   300 records over 3 partitions (record i -> partition i % 3,
                                   offset i // 3, written without a transaction) are transformed
                                   (same key and partition, value upper-cased, header src=p:o) by
                                   one client in transactions of up to 20 records, aborting every
                                   3rd for the *-aborts variants. Then: read_committed sees exactly
                                   one transformed copy of every input record and nothing else;
                                   the group's committed offsets are the input's end offsets; when
                                   transactions were aborted, read_uncommitted sees exactly the
                                   aborted records more.
  test_produce_commit_and_abort    4 committed and 3 aborted transactions of 12 records:
                                   read_committed sees exactly the committed records, at the
                                   offsets Kafka gives them (each transaction's marker takes one
                                   offset in every partition it wrote to), read_uncommitted all.

Every client bounds its own wait (InitProducerId within 10 s, the whole run within 60 s), so a
broker that refuses transactions fails each test in seconds rather than hanging it.

MSKMOCK_IT_EXTERNAL_BOOTSTRAP=host:port runs the tests against an
already running broker instead (an Apache Kafka, to check the tests themselves).
"""

import collections
import os
import uuid

import pytest

from harness import client_command, run_client

EXTERNAL = os.environ.get("MSKMOCK_IT_EXTERNAL_BOOTSTRAP")
PARTITIONS = 3
INPUT_COUNT = 300
BATCH = 20
ABORT_EVERY = 3
CLIENT_TIMEOUT_S = 60     # each client's own bound on its run
INIT_TIMEOUT_S = 10       # ... and on InitProducerId (a transaction coordinator must answer)
RUN_TIMEOUT_S = 90        # the harness's bound on a client process

TXN_CONFIG = {
    "transaction.max.timeout.ms": 60000,          # the clients ask for 30 s
    "transactional.id.expiration.ms": 3600000,
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": 1000,
    "transaction.marker.delay.ms": 20,            # markers a little after EndTxn, as on Kafka
}

# (test id, client, --abort-every)
TRANSFORMS = [
    ("confluent-kafka", "python", 0),
    ("confluent-kafka-aborts", "python", ABORT_EVERY),
    ("franz-go-aborts", "go", ABORT_EVERY),
    ("kafkajs-aborts", "node", ABORT_EVERY),
]


@pytest.fixture(scope="module")
def broker_config():
    cfg = dict(TXN_CONFIG)
    cfg["group.initial.rebalance.delay.ms"] = 0
    return cfg


@pytest.fixture(scope="module")
def bootstrap(request):
    if EXTERNAL:
        return EXTERNAL
    return request.getfixturevalue("broker").bootstrap


def need_client(lang):
    if client_command(lang) is None:
        if os.environ.get("CI"):
            pytest.fail("%s client is not built (tools/install-deps --test builds it)" % lang)
        pytest.skip("%s client is not built" % lang)


def unique(prefix):
    return "%s-%s" % (prefix, uuid.uuid4().hex[:10])


# -- records --------------------------------------------------------------------------

def key_of(i):
    return "key-%d" % i


def value_of(i):
    return "value-%d-%s" % (i, "x" * (i % 50))


def per_partition_counts(count):
    return {p: len(range(p, count, PARTITIONS)) for p in range(PARTITIONS)}


def txn_aborted(t, commits, aborts):
    """txn-produce's schedule: transaction t is aborted when it is odd and fewer than `aborts`
    were aborted before it, or once all `commits` are done."""
    c = ab = 0
    for k in range(t + 1):
        abort = ab < aborts and (k % 2 == 1 or c >= commits)
        if k == t:
            return abort
        ab, c = (ab + 1, c) if abort else (ab, c + 1)
    return False


# -- client steps ---------------------------------------------------------------------

def create_topic(bootstrap, topic):
    assert run_client("python", ["create-topic", "--bootstrap", bootstrap, "--topic", topic,
                                 "--partitions", PARTITIONS], timeout=60) == {"created": topic}


def produce_input(bootstrap, topic, count):
    assert run_client("python", ["produce", "--bootstrap", bootstrap, "--topic", topic,
                                 "--count", count, "--partitions", PARTITIONS,
                                 "--compression", "none"], timeout=90) == {"produced": count}


def read(bootstrap, topic, isolation):
    res = run_client("python", ["txn-consume", "--bootstrap", bootstrap, "--topic", topic,
                                "--partitions", PARTITIONS, "--isolation", isolation,
                                "--timeout", 30], timeout=60)
    assert res["count"] == len(res["records"])
    return res


def committed_offsets(bootstrap, group, topic):
    return run_client("python", ["txn-committed", "--bootstrap", bootstrap, "--group", group,
                                 "--topic", topic, "--partitions", PARTITIONS], timeout=60)


def first(items, n=5):
    items = list(items)
    return "%s%s" % (items[:n], " ... (%d in all)" % len(items) if len(items) > n else "")


# -- tests ----------------------------------------------------------------------------

@pytest.mark.parametrize("client", TRANSFORMS, ids=[t[0] for t in TRANSFORMS])
def test_transform_exactly_once(bootstrap, client):
    cid, lang, abort_every = client
    need_client(lang)
    src, dst = unique("txn-in"), unique("txn-out")
    group, txn_id = unique("txn-group-" + cid), unique("txn-id-" + cid)
    create_topic(bootstrap, src)
    create_topic(bootstrap, dst)
    produce_input(bootstrap, src, INPUT_COUNT)

    res = run_client(lang, ["txn-transform", "--bootstrap", bootstrap, "--group", group,
                            "--input", src, "--output", dst, "--transactional-id", txn_id,
                            "--batch", BATCH, "--abort-every", abort_every,
                            "--init-timeout", INIT_TIMEOUT_S, "--timeout", CLIENT_TIMEOUT_S],
                     timeout=RUN_TIMEOUT_S)
    want_end = {str(p): n for p, n in per_partition_counts(INPUT_COUNT).items()}
    assert res["end_offsets"] == want_end, res
    assert res["committed_offsets"] == want_end, res
    assert res["records_committed"] == INPUT_COUNT, res
    if abort_every:
        assert res["aborted_txns"] >= 1 and res["records_aborted"] >= 1, \
            "no transaction was aborted: %s" % res

    # read_committed: one transformed copy of every input record, nothing else.
    committed = read(bootstrap, dst, "read_committed")
    seen = collections.Counter(r[2] for r in committed["records"])
    expected = {key_of(i): i for i in range(INPUT_COUNT)}
    missing = [k for k in expected if k not in seen]
    duplicated = {k: n for k, n in seen.items() if n > 1}
    unexpected = [k for k in seen if k not in expected]
    assert not missing and not duplicated and not unexpected, (
        "read_committed of the output: %d records; missing %s; duplicated %s; unexpected %s"
        % (committed["count"], first(missing), first(duplicated.items()), first(unexpected)))
    wrong = []
    for p, o, key, value, headers in committed["records"]:
        i = expected[key]
        want = (i % PARTITIONS, value_of(i).upper(), str(i),
                "%d:%d" % (i % PARTITIONS, i // PARTITIONS))
        if (p, value, headers.get("idx"), headers.get("src")) != want:
            wrong.append(((p, o, key, value, headers), want))
    assert not wrong, "transformed records differ from their input: %s" % first(wrong, 3)
    assert committed["count"] == INPUT_COUNT

    # The group's committed offsets are the input's end offsets.
    offs = committed_offsets(bootstrap, group, src)
    assert offs["high_watermarks"] == want_end, offs
    assert offs["committed"] == want_end, "group %s: committed %s, input end offsets %s" % (
        group, offs["committed"], offs["high_watermarks"])

    # Aborted transactions' records are in the log, visible to read_uncommitted only.
    uncommitted = read(bootstrap, dst, "read_uncommitted")
    if res["aborted_txns"]:
        assert uncommitted["count"] > committed["count"], (uncommitted["count"], committed["count"])
    assert uncommitted["count"] == committed["count"] + res["records_aborted"], (
        "read_uncommitted %d records, read_committed %d, the client aborted %d"
        % (uncommitted["count"], committed["count"], res["records_aborted"]))
    useen = collections.Counter(r[2] for r in uncommitted["records"])
    assert all(useen[k] >= 1 for k in expected)
    assert not [k for k in useen if k not in expected]
    if abort_every == 0:
        assert res["aborted_txns"] == res.get("unplanned_aborts", 0)


def test_produce_commit_and_abort(bootstrap):
    commits, aborts, per_txn = 4, 3, 12
    topic = unique("txn-produce")
    create_topic(bootstrap, topic)
    res = run_client("python", ["txn-produce", "--bootstrap", bootstrap, "--topic", topic,
                                "--partitions", PARTITIONS, "--commits", commits,
                                "--aborts", aborts, "--records", per_txn,
                                "--transactional-id", unique("txn-id-produce"),
                                "--init-timeout", INIT_TIMEOUT_S, "--timeout", CLIENT_TIMEOUT_S],
                     timeout=RUN_TIMEOUT_S)
    total = commits + aborts
    schedule = "".join("A" if txn_aborted(t, commits, aborts) else "C" for t in range(total))
    assert schedule.count("C") == commits and schedule.count("A") == aborts
    assert res["schedule"] == schedule, res
    assert res["acked"] == total * per_txn, res

    # Offsets as Kafka gives them: per partition, each transaction's records and then its marker.
    per_part = per_txn // PARTITIONS
    assert per_txn % PARTITIONS == 0

    def rec(t, j):
        key = "txn-%d-%d" % (t, j)
        return [j % PARTITIONS, t * (per_part + 1) + j // PARTITIONS, key,
                "%s-%s" % (key, "abort" if schedule[t] == "A" else "commit"), {"txn": str(t)}]

    every = sorted((rec(t, j) for t in range(total) for j in range(per_txn)),
                   key=lambda r: (r[0], r[1]))
    want_hwm = {str(p): total * (per_part + 1) for p in range(PARTITIONS)}

    committed = read(bootstrap, topic, "read_committed")
    assert committed["high_watermarks"] == want_hwm, (
        "high watermarks %s, expected %s (%d records and %d markers per partition)"
        % (committed["high_watermarks"], want_hwm, total * per_part, total))
    want = [r for r in every if schedule[int(r[2].split("-")[1])] == "C"]
    got = committed["records"]
    assert got == want, (
        "read_committed: %d records, expected %d; unexpected %s; missing %s"
        % (len(got), len(want), first(r for r in got if r not in want),
           first(r for r in want if r not in got)))

    uncommitted = read(bootstrap, topic, "read_uncommitted")
    got = uncommitted["records"]
    assert got == every, (
        "read_uncommitted: %d records, expected %d; unexpected %s; missing %s"
        % (len(got), len(every), first(r for r in got if r not in every),
           first(r for r in every if r not in got)))
