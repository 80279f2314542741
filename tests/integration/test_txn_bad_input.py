"""Refused transactional requests over raw sockets (kafka_wire, no client library).

Each test drives the transaction coordinator into one refusal Apache Kafka defines (TV1,
KIP-98/KIP-360/KIP-890 part 1) and checks three things: the error code Kafka answers, one
broker log line naming the request (client id, API, version, correlation id) that gives that
code and says why, and that nothing was left half-written: the partitions the test touched
have a last stable offset equal to their high watermark once its transaction is ended, and a
read_committed fetch shows exactly the records the test committed.

  | case                                                          | Kafka's code            |
  |---------------------------------------------------------------|-------------------------|
  | AddPartitionsToTxn before InitProducerId                      | 49                      |
  | stale epoch: AddPartitionsToTxn / EndTxn v2+ (v0-1)           | 90 (47)                 |
  | EndTxn in Empty                                               | 48                      |
  | abort after commit                                            | 48                      |
  | commit retried after the commit                               | 0 (nothing written)     |
  | EndTxn while PrepareCommit (transaction.marker.delay.ms)      | 51 (48 for the abort)   |
  | TxnOffsetCommit without AddOffsetsToTxn v3 / v4               | 48 / 120                |
  | transactional Produce before AddPartitionsToTxn v<=10 / v11   | 48 / 120                |
  | non-transactional batch of a producer with an open txn        | 48                      |
  | InitProducerId timeout > transaction.max.timeout.ms (or <= 0) | 50                      |
  | transactional id ""                                           | 42                      |
  | "" or a timeout above the maximum, sent to a non-coordinator  | 42 / 50 (checked first) |
  | transactional records in a Produce without transactional id   | 53 (every partition)    |
  | FindCoordinator key_type 1; a non-coordinator node            | a node; 16              |
  | AddPartitionsToTxn v4 on the IAM (SASL) listener              | 31                      |

Brokers: the module's `broker` (3 nodes, transaction.max.timeout.ms=60000), `delayed` (markers
2 s apart, transaction.marker.delay.ms=2000, so PrepareCommit lasts long enough to be seen) and
`iam_broker` (1 node with the SASL_PLAINTEXT listener; raw SASL OAUTHBEARER login).
"""

import inspect
import itertools
import re
import time
import uuid

import pytest

import kafka_wire as kw
from harness import Broker, running

pytestmark = pytest.mark.timeout(180)

MAX_TIMEOUT_MS = 60000
MARKER_DELAY_MS = 2000
PARTITIONS = 3

INIT_V = 4        # librdkafka's InitProducerId version (flexible)
ADD_V = 3         # the Java client's AddPartitionsToTxn version (flexible)
END_V = 3
ADD_OFFSETS_V = 3
PRODUCE_V = kw.PRODUCE_V  # 7, the serverless floor
LIST_OFFSETS_V = 5

_corr = itertools.count(1)

# (broker data dir, topic) -> {partition: [values committed]}: what read_committed must show at
# the end of the module (test_nothing_half_written).
COMMITTED = {}
TOUCHED = {}


@pytest.fixture(scope="module")
def broker_config():
    # debug: test_commit_retry_after_commit counts the "committed" line, logged at debug
    return {"transaction.max.timeout.ms": MAX_TIMEOUT_MS, "log.level": "debug"}


@pytest.fixture(scope="module")
def delayed():
    with running(Broker(config={"transaction.max.timeout.ms": MAX_TIMEOUT_MS,
                                "transaction.marker.delay.ms": MARKER_DELAY_MS})) as b:
        yield b


@pytest.fixture(scope="module")
def iam_broker(tmp_path_factory):
    import iam
    ids = iam.write_identities(tmp_path_factory.mktemp("txn-iam") / "identities.json")
    with running(iam.IamBroker(ids, broker_count=1)) as b:
        yield b


# -- wire helpers -------------------------------------------------------------------------

def unique(prefix):
    return "%s-%s" % (prefix, uuid.uuid4().hex[:8])


class Conn:
    """One raw connection with a client id; call() sends frame_fn(corr, client_id, ...) and
    returns the body; .corr is the last correlation id (the log line names it)."""

    def __init__(self, port, client_id):
        self.sock = kw.connect(port, timeout=10)
        self.port = port
        self.client_id = client_id
        self.corr = None

    def call(self, frame_fn, *args, **kwargs):
        """kafka_wire's builders take (correlation_id, client_id, ...), or (version,
        correlation_id, client_id, ...) when their first parameter is the version: then the
        first of args is it."""
        self.corr = next(_corr)
        if next(iter(inspect.signature(frame_fn).parameters)) == "version":
            frame = frame_fn(args[0], self.corr, self.client_id, *args[1:], **kwargs)
        else:
            frame = frame_fn(self.corr, self.client_id, *args, **kwargs)
        self.sock.sendall(frame)
        got, body = kw.recv_frame(self.sock)
        assert got == self.corr, "correlation id %d, sent %d" % (got, self.corr)
        return body

    def close(self):
        self.sock.close()


class Txn:
    """A transactional id driven by hand: its coordinator connection and producer id/epoch."""

    def __init__(self, broker, client_id, txn_id=None, timeout_ms=30000):
        self.broker = broker
        self.id = txn_id or unique("txn-bad")
        self.client_id = client_id
        self.coord_port = coordinator_port(broker, self.id, 1)
        self.c = Conn(self.coord_port, client_id)
        self.pid = self.epoch = -1
        self.seq = {}
        self.timeout_ms = timeout_ms

    def init(self, version=INIT_V, timeout_ms=None, expect=0):
        body = self.c.call(kw.init_producer_id_request, version, self.id,
                           self.timeout_ms if timeout_ms is None else timeout_ms)
        r = kw.parse_init_producer_id(version, body)
        assert r["error"] == expect, "InitProducerId v%d of %r: %r, expected error %d" % (
            version, self.id, r, expect)
        if expect == 0:
            assert r["producer_id"] >= 0 and r["producer_epoch"] >= 0, r
            self.pid, self.epoch = r["producer_id"], r["producer_epoch"]
        return r

    def add(self, topic, partitions, version=ADD_V, pid=None, epoch=None):
        body = self.c.call(kw.add_partitions_to_txn_request, version, self.id,
                           self.pid if pid is None else pid,
                           self.epoch if epoch is None else epoch, {topic: list(partitions)})
        res = kw.parse_add_partitions_to_txn(version, body)
        assert set(res) == {(topic, p) for p in partitions}, res
        return res

    def add_ok(self, topic, partitions):
        res = self.add(topic, partitions)
        assert all(e == 0 for e in res.values()), "AddPartitionsToTxn of %s: %r" % (self.id, res)
        for p in partitions:
            TOUCHED.setdefault(key(self.broker, topic), set()).add(p)

    def end(self, commit, version=END_V, epoch=None):
        return kw.parse_end_txn(version, self.c.call(
            kw.end_txn_request, version, self.id, self.pid, self.epoch if epoch is None else epoch,
            commit))

    def batch(self, topic, partition, values, transactional=True):
        seq = self.seq.get((topic, partition), 0)
        self.seq[(topic, partition)] = seq + len(values)
        return kw.producer_batch([(None, v, ()) for v in values], self.pid, self.epoch, seq,
                                 transactional=transactional)

    def produce(self, topic, partition, values, version=PRODUCE_V, transactional_id="self",
                transactional=True, batch=None):
        """One batch to the partition's leader: the answer of that partition."""
        tid = self.id if transactional_id == "self" else transactional_id
        b = batch or self.batch(topic, partition, values, transactional)
        with leader(self.broker, topic, partition, self.client_id) as c:
            res = kw.parse_produce_any(version, c.call(kw.produce_request_txn, version, tid,
                                                       [(topic, partition, b)]))
            corr = c.corr
        TOUCHED.setdefault(key(self.broker, topic), set()).add(partition)
        return res[(topic, partition)], corr

    def describe(self):
        return kw.parse_describe_transactions(
            self.c.call(kw.describe_transactions_request, [self.id]))[self.id]

    def close(self):
        self.c.close()


def key(broker, topic):
    return (str(broker.data_dir), topic)


def coordinator_port(broker, key_, key_type):
    """FindCoordinator v2 (the serverless floor) of a group (0) or transactional id (1): the
    node's port, checked to be one of the broker's."""
    c = Conn(broker.port, "txn-bad-find")
    try:
        r = kw.parse_find_coordinator(2, c.call(kw.find_coordinator_request, key_, key_type))
    finally:
        c.close()
    assert r["error"] == 0, "FindCoordinator key_type %d of %r: %r" % (key_type, key_, r)
    assert r["port"] in broker.ports and r["host"] == "127.0.0.1", (r, broker.ports)
    return r["port"]


class leader:
    """Context manager: a Conn to the leader of topic-partition (Metadata v6)."""

    def __init__(self, broker, topic, partition, client_id):
        self.broker, self.topic, self.partition = broker, topic, partition
        self.client_id = client_id

    def __enter__(self):
        c = Conn(self.broker.port, self.client_id)
        try:
            md = kw.parse_metadata(kw.METADATA_V, c.call(kw.metadata_request, kw.METADATA_V,
                                                          [self.topic]))
        finally:
            c.close()
        [t] = md["topics"]
        assert t["error"] == 0, t
        [p] = [p for p in t["partitions"] if p["index"] == self.partition]
        self.conn = Conn(md["brokers"][p["leader"]][1], self.client_id)
        return self.conn

    def __exit__(self, *exc):
        self.conn.close()


def create_topic(broker, name, partitions=PARTITIONS):
    c = Conn(broker.port, "txn-bad-admin")
    try:
        [t] = kw.parse_create_topics(3, c.call(kw.create_topics_request, 3, name, partitions,
                                               min(3, broker.broker_count)))
    finally:
        c.close()
    assert t["error"] == 0, t
    COMMITTED.setdefault(key(broker, name), {p: [] for p in range(partitions)})
    return name


@pytest.fixture(scope="module")
def topic(broker):
    return create_topic(broker, "txn-bad-input")


def offsets(broker, topic, partition):
    """(high watermark, last stable offset) from ListOffsets v5 latest at both isolation
    levels, on the partition's leader."""
    out = []
    with leader(broker, topic, partition, "txn-bad-lo") as c:
        for iso in (kw.ISOLATION_READ_UNCOMMITTED, kw.ISOLATION_READ_COMMITTED):
            r = kw.parse_list_offsets(LIST_OFFSETS_V, c.call(
                kw.list_offsets_request, LIST_OFFSETS_V, topic, [partition], isolation_level=iso))
            p = r[(topic, partition)]
            assert p["error"] == 0, p
            out.append(p["offset"])
    return tuple(out)


def fetch(broker, topic, partition, isolation):
    """A Fetch v10 from offset 0: the partition's answer with its batches parsed."""
    with leader(broker, topic, partition, "txn-bad-fetch") as c:
        f = kw.parse_fetch(kw.FETCH_V, c.call(kw.fetch_request_iso, topic, partition, 0,
                                              isolation))
    [t] = f["topics"]
    [p] = t["partitions"]
    assert p["error"] == 0, p
    p["batches"] = kw.parse_batches(p["records"])
    return p


def visible_committed(p):
    """The values a read_committed consumer shows from a Fetch answer, filtering as Kafka's
    clients do (CompletedFetch): a producer's transactional batches are skipped from the first
    offset of one of its aborted transactions until its ABORT marker; control batches never
    show."""
    aborted = sorted(p["aborted_transactions"] or [], key=lambda a: a[1])
    skipping, out = set(), []
    for b in p["batches"]:
        while aborted and aborted[0][1] <= b["last_offset"]:
            skipping.add(aborted.pop(0)[0])
        if b["control"]:
            if b["records"] and b["records"][0][1][2:4] == b"\x00\x00":  # ABORT marker
                skipping.discard(b["producer_id"])
            continue
        if b["transactional"] and b["producer_id"] in skipping:
            continue
        out.extend(v for _o, _k, v in b["records"] if b["base_offset"] < p["last_stable_offset"])
    return out


def assert_stable(broker, topic, partitions=range(PARTITIONS)):
    """No transaction is open on these partitions: LSO == HW under ListOffsets and Fetch, and
    read_committed shows exactly what the tests committed, in order."""
    for part in partitions:
        hw, lso = offsets(broker, topic, part)
        assert lso == hw, ("%s-%d: ListOffsets read_committed (last stable offset) %d, "
                           "read_uncommitted (high watermark) %d, with no transaction open"
                           % (topic, part, lso, hw))
        p = fetch(broker, topic, part, kw.ISOLATION_READ_COMMITTED)
        assert p["high_watermark"] == hw and p["last_stable_offset"] == hw, (
            "%s-%d: read_committed Fetch: high watermark %d, last stable offset %d; ListOffsets "
            "said %d" % (topic, part, p["high_watermark"], p["last_stable_offset"], hw))
        assert p["aborted_transactions"] is not None, (
            "%s-%d: read_committed Fetch answered aborted_transactions null" % (topic, part))
        want = COMMITTED.get(key(broker, topic), {}).get(part, [])
        got = visible_committed(p)
        assert got == want, "%s-%d: read_committed shows %r, committed were %r" % (
            topic, part, got, want)


def log_refusal(broker, since, conn_or_cid, api, code, why, version=None, corr=None):
    """Asserts one log line since `since` of a refusal by this client (and correlation id) of
    `api` with error `code`, whose explanation matches `why`."""
    cid = conn_or_cid if isinstance(conn_or_cid, str) else conn_or_cid.client_id
    if corr is None and not isinstance(conn_or_cid, str):
        corr = conn_or_cid.corr
    pattern = (r"client=%s .*api=%s v%s corr=%s refused error=[A-Z_]+\(%d\): .*(%s)"
               % (re.escape(cid), api, version if version is not None else r"\d+",
                  corr if corr is not None else r"\d+", code, why))
    line = broker.wait_for_log(pattern, since=since, timeout=5)
    assert line is not None, ("no log line explaining %s's refusal with %d (/%s/); the log since "
                              "the test started:\n%s" % (api, code, pattern,
                                                         broker.log_since(since)[-5000:]))
    return line


def committed(broker, topic, partition, values):
    COMMITTED.setdefault(key(broker, topic), {}).setdefault(partition, []).extend(values)


# -- the cases ----------------------------------------------------------------------------

@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_add_partitions_before_init_producer_id(broker, topic, version):
    since = broker.log_size()
    t = Txn(broker, "txn-bad-noinit-v%d" % version)
    try:
        res = t.add(topic, [0, 1], version=version, pid=4242, epoch=0)
        assert res == {(topic, 0): kw.ERR_INVALID_PRODUCER_ID_MAPPING,
                       (topic, 1): kw.ERR_INVALID_PRODUCER_ID_MAPPING}, (
            "AddPartitionsToTxn v%d for an id that never had InitProducerId: %r (Kafka: 49 "
            "INVALID_PRODUCER_ID_MAPPING on every partition)" % (version, res))
        log_refusal(broker, since, t.c, "AddPartitionsToTxn", 49, r"InitProducerId|unknown",
                    version=version)
        # nor does EndTxn find a transaction to end
        assert t.end(True) == kw.ERR_INVALID_PRODUCER_ID_MAPPING
        log_refusal(broker, since, t.c, "EndTxn", 49, r"InitProducerId|unknown")
        assert t.describe()["error"] == 105, "DescribeTransactions of an id never initialised"
    finally:
        t.close()
    assert_stable(broker, topic, [0, 1])


STALE = [  # (API, version, Kafka's code): PRODUCER_FENCED from v2, INVALID_PRODUCER_EPOCH before
    ("AddPartitionsToTxn", 0, kw.ERR_INVALID_PRODUCER_EPOCH),
    ("AddPartitionsToTxn", 1, kw.ERR_INVALID_PRODUCER_EPOCH),
    ("AddPartitionsToTxn", 2, kw.ERR_PRODUCER_FENCED),
    ("AddPartitionsToTxn", 3, kw.ERR_PRODUCER_FENCED),
    ("EndTxn", 0, kw.ERR_INVALID_PRODUCER_EPOCH),
    ("EndTxn", 1, kw.ERR_INVALID_PRODUCER_EPOCH),
    ("EndTxn", 2, kw.ERR_PRODUCER_FENCED),
    ("EndTxn", 3, kw.ERR_PRODUCER_FENCED),
    ("EndTxn", 4, kw.ERR_PRODUCER_FENCED),
]


@pytest.mark.parametrize("api,version,code", STALE, ids=["%s-v%d" % (a, v) for a, v, _ in STALE])
def test_stale_epoch_is_fenced(broker, topic, api, version, code):
    since = broker.log_size()
    t = Txn(broker, "txn-bad-stale-%s-v%d" % (api, version))
    try:
        t.init()
        old = t.epoch
        t.add_ok(topic, [2])
        res, _ = t.produce(topic, 2, [b"zombie-%s-v%d" % (api.encode(), version)])
        assert res["error"] == 0, res
        # a second producer of the id: its InitProducerId fences the open transaction (51, then
        # the retry gets the epoch after the fencing one)
        newer = Txn(broker, t.client_id + "-new", txn_id=t.id)
        try:
            r = newer.init(expect=kw.ERR_CONCURRENT_TRANSACTIONS)
            deadline = time.monotonic() + 10
            while r["error"] == kw.ERR_CONCURRENT_TRANSACTIONS and time.monotonic() < deadline:
                time.sleep(0.05)
                r = kw.parse_init_producer_id(INIT_V, newer.c.call(
                    kw.init_producer_id_request, INIT_V, t.id, 30000))
            assert r["error"] == 0 and r["producer_id"] == t.pid, r
            assert r["producer_epoch"] == old + 2, (
                "InitProducerId after fencing an open transaction: epoch %d, Kafka's is %d "
                "(one bump to fence and abort, one for the new producer)"
                % (r["producer_epoch"], old + 2))
        finally:
            newer.close()
        if api == "AddPartitionsToTxn":
            res = t.add(topic, [0], version=version)
            assert res == {(topic, 0): code}, (
                "AddPartitionsToTxn v%d with the fenced epoch %d: %r, Kafka answers %d"
                % (version, old, res, code))
        else:
            got = t.end(True, version=version)
            assert got == code, "EndTxn v%d with the fenced epoch %d: %d, Kafka answers %d" % (
                version, old, got, code)
        log_refusal(broker, since, t.c, api, code, r"fenced|epoch", version=version)
        # the fenced transaction was aborted; the new producer's epoch starts an Empty one
        d = t.describe()
        assert d["state"] == "Empty" and d["producer_epoch"] == old + 2, d
        # and the zombie's records are refused: its epoch is older than the ABORT marker's
        if api == "EndTxn" and version == 0:
            before = offsets(broker, topic, 2)
            res, corr = t.produce(topic, 2, [b"zombie-again"])
            assert res["error"] == kw.ERR_INVALID_PRODUCER_EPOCH, (
                "a transactional batch of the fenced producer: %r, Kafka answers 47" % res)
            log_refusal(broker, since, t.client_id, "Produce", 47, r"fenced|epoch", corr=corr)
            assert offsets(broker, topic, 2) == before
    finally:
        t.close()
    assert_stable(broker, topic, [0, 2])


@pytest.mark.parametrize("commit", [True, False], ids=["commit", "abort"])
def test_end_txn_in_empty(broker, topic, commit):
    since = broker.log_size()
    t = Txn(broker, "txn-bad-empty-%s" % ("commit" if commit else "abort"))
    try:
        t.init()
        got = t.end(commit)
        assert got == kw.ERR_INVALID_TXN_STATE, (
            "EndTxn(%s) with no partition added: %d, Kafka answers 48 INVALID_TXN_STATE"
            % (commit, got))
        log_refusal(broker, since, t.c, "EndTxn", 48, r"Empty")
        assert t.describe()["state"] == "Empty"
    finally:
        t.close()


def _committed_txn(broker, topic, client_id, partition=1):
    t = Txn(broker, client_id)
    t.init()
    t.add_ok(topic, [partition])
    values = [b"%s-%d" % (client_id.encode(), i) for i in range(3)]
    res, _ = t.produce(topic, partition, values)
    assert res["error"] == 0, res
    assert t.end(True) == 0
    committed(broker, topic, partition, values)
    return t


def test_abort_after_commit(broker, topic):
    since = broker.log_size()
    t = _committed_txn(broker, topic, "txn-bad-abort-after-commit")
    try:
        got = t.end(False)
        assert got == kw.ERR_INVALID_TXN_STATE, (
            "EndTxn(abort) after the commit completed: %d, Kafka answers 48" % got)
        log_refusal(broker, since, t.c, "EndTxn", 48, r"CompleteCommit")
        assert t.describe()["state"] == "CompleteCommit"
    finally:
        t.close()
    assert_stable(broker, topic, [1])


def test_commit_retry_after_commit(broker, topic):
    since = broker.log_size()
    t = _committed_txn(broker, topic, "txn-bad-commit-retry")
    try:
        hw_before = offsets(broker, topic, 1)
        got = t.end(True)
        assert got == 0, "EndTxn(commit) retried after the commit: %d, Kafka answers 0" % got
        assert t.end(True, version=0) == 0
        assert offsets(broker, topic, 1) == hw_before, (
            "the retried commit wrote something: offsets %r before, %r after"
            % (hw_before, offsets(broker, topic, 1)))
        lines = [ln for ln in broker.log_since(since).splitlines()
                 if re.search(r"transactional id %s: committed" % re.escape(t.id), ln)]
        assert len(lines) == 1, "the commit was logged %d times: %s" % (len(lines), lines)
        assert not re.search(r"client=%s .*refused" % re.escape(t.client_id),
                             broker.log_since(since)), "a commit retry was refused"
        assert t.describe()["state"] == "CompleteCommit"
    finally:
        t.close()
    assert_stable(broker, topic, [1])


def test_end_txn_while_prepare_commit(delayed):
    b = delayed
    topic = create_topic(b, unique("txn-bad-prepare"))
    since = b.log_size()
    t = Txn(b, "txn-bad-prepare")
    try:
        t.init()
        t.add_ok(topic, [0, 1, 2])
        values = {p: [b"prepare-%d-%d" % (p, i) for i in range(2)] for p in range(PARTITIONS)}
        for p in range(PARTITIONS):
            res, _ = t.produce(topic, p, values[p])
            assert res["error"] == 0, res
        t0 = time.monotonic()
        assert t.end(True) == 0
        answered = time.monotonic() - t0
        assert answered < MARKER_DELAY_MS / 1000.0, (
            "EndTxn took %.2f s: it should be answered once PrepareCommit is stored, before the "
            "first marker (transaction.marker.delay.ms=%d)" % (answered, MARKER_DELAY_MS))
        d = t.describe()
        assert d["state"] == "PrepareCommit", d
        # the commit again: CONCURRENT_TRANSACTIONS, the client retries
        got = t.end(True)
        assert got == kw.ERR_CONCURRENT_TRANSACTIONS, (
            "EndTxn(commit) while PrepareCommit: %d, Kafka answers 51" % got)
        log_refusal(b, since, t.c, "EndTxn", 51, r"PrepareCommit|being completed|retry")
        # the opposite decision: INVALID_TXN_STATE
        got = t.end(False)
        assert got == kw.ERR_INVALID_TXN_STATE, (
            "EndTxn(abort) while PrepareCommit: %d, Kafka answers 48" % got)
        log_refusal(b, since, t.c, "EndTxn", 48, r"PrepareCommit")
        # the next transaction cannot start before the markers are written
        res = t.add(topic, [0])
        assert res == {(topic, 0): kw.ERR_CONCURRENT_TRANSACTIONS}, res
        log_refusal(b, since, t.c, "AddPartitionsToTxn", 51, r"PrepareCommit")
        # nor can a new producer of the id take over
        r = t.init(expect=kw.ERR_CONCURRENT_TRANSACTIONS)
        assert r["producer_id"] == -1, r
        log_refusal(b, since, t.c, "InitProducerId", 51, r"PrepareCommit")
        deadline = time.monotonic() + (PARTITIONS + 3) * MARKER_DELAY_MS / 1000.0
        while t.describe()["state"] != "CompleteCommit" and time.monotonic() < deadline:
            time.sleep(0.1)
        assert t.describe()["state"] == "CompleteCommit", t.describe()
        assert t.end(True) == 0, "the commit retried after its markers: Kafka answers 0"
    finally:
        t.close()
    for p in range(PARTITIONS):
        committed(b, topic, p, values[p])
    assert_stable(b, topic)


@pytest.mark.parametrize("version,code", [(3, kw.ERR_INVALID_TXN_STATE),
                                          (4, kw.ERR_TRANSACTION_ABORTABLE)])
def test_txn_offset_commit_without_add_offsets(broker, topic, version, code):
    since = broker.log_size()
    group = unique("txn-bad-group")
    t = Txn(broker, "txn-bad-offsets-v%d" % version)
    try:
        t.init()
        t.add_ok(topic, [0])
        res, _ = t.produce(topic, 0, [b"offsets-v%d" % version])
        assert res["error"] == 0, res
        g = Conn(coordinator_port(broker, group, 0), t.client_id)
        try:
            res = kw.parse_txn_offset_commit(version, g.call(
                kw.txn_offset_commit_request, version, t.id, group, t.pid, t.epoch, topic,
                {0: 1, 1: 7}))
            assert res == {(topic, 0): code, (topic, 1): code}, (
                "TxnOffsetCommit v%d without AddOffsetsToTxn: %r, Kafka answers %d"
                % (version, res, code))
            log_refusal(broker, since, g, "TxnOffsetCommit", code, r"AddOffsetsToTxn",
                        version=version)
            assert t.end(False) == 0
            for v in (5, 7):
                of = kw.parse_offset_fetch(v, g.call(kw.offset_fetch_request, v, group, topic,
                                                     [0, 1], require_stable=True))
                assert of["error"] == 0
                for p in (0, 1):
                    assert of["partitions"][(topic, p)]["offset"] == -1, (
                        "the refused TxnOffsetCommit left a committed offset: %r" % of)
        finally:
            g.close()
    finally:
        t.close()
    assert_stable(broker, topic, [0, 1])


@pytest.mark.parametrize("version,code", [(7, kw.ERR_INVALID_TXN_STATE),
                                          (10, kw.ERR_INVALID_TXN_STATE),
                                          (11, kw.ERR_TRANSACTION_ABORTABLE)])
def test_produce_before_add_partitions(broker, topic, version, code):
    since = broker.log_size()
    t = Txn(broker, "txn-bad-produce-v%d" % version)
    try:
        t.init()
        before = offsets(broker, topic, 2)
        res, corr = t.produce(topic, 2, [b"not-added-v%d" % version], version=version)
        assert res["error"] == code and res["base_offset"] == -1, (
            "Produce v%d of a transactional batch to a partition not added: %r, Kafka answers %d"
            % (version, res, code))
        log_refusal(broker, since, t.client_id, "Produce", code, r"AddPartitionsToTxn",
                    version=version, corr=corr)
        # also with the transaction ongoing on another partition
        t.add_ok(topic, [0])
        t.seq.clear()
        res, corr = t.produce(topic, 2, [b"not-added-v%d" % version], version=version)
        assert res["error"] == code, res
        log_refusal(broker, since, t.client_id, "Produce", code, r"AddPartitionsToTxn",
                    version=version, corr=corr)
        assert offsets(broker, topic, 2) == before, "the refused batches were appended"
        assert t.end(False) == 0
    finally:
        t.close()
    assert_stable(broker, topic, [0, 2])


def test_non_transactional_batch_inside_a_transaction(broker, topic):
    since = broker.log_size()
    t = Txn(broker, "txn-bad-plain-in-txn")
    try:
        t.init()
        t.add_ok(topic, [1])
        res, _ = t.produce(topic, 1, [b"inside-txn-0"])
        assert res["error"] == 0, res
        before = offsets(broker, topic, 1)
        # the same producer id and epoch, the next sequence, an idempotent batch
        res, corr = t.produce(topic, 1, [b"plain-inside-txn"], transactional=False,
                              transactional_id=None)
        assert res["error"] == kw.ERR_INVALID_TXN_STATE, (
            "a non-transactional batch of a producer whose transaction is open on the "
            "partition: %r, Kafka answers 48" % res)
        log_refusal(broker, since, t.client_id, "Produce", 48, r"non-transactional",
                    corr=corr)
        assert offsets(broker, topic, 1) == before
        assert t.end(True) == 0
        committed(broker, topic, 1, [b"inside-txn-0"])
    finally:
        t.close()
    assert_stable(broker, topic, [1])


@pytest.mark.parametrize("timeout_ms", [MAX_TIMEOUT_MS + 1, 0, -5])
def test_init_producer_id_timeout_above_max(broker, timeout_ms):
    since = broker.log_size()
    t = Txn(broker, "txn-bad-timeout")
    try:
        for v in (1, INIT_V):
            r = t.init(version=v, timeout_ms=timeout_ms, expect=kw.ERR_INVALID_TRANSACTION_TIMEOUT)
            assert r["producer_id"] == -1, r
            log_refusal(broker, since, t.c, "InitProducerId", 50,
                        r"transaction\.max\.timeout\.ms|timeout", version=v)
        assert t.describe()["error"] == 105, "a refused InitProducerId created the id"
        r = t.init(timeout_ms=MAX_TIMEOUT_MS)  # the maximum itself is fine
    finally:
        t.close()


def test_empty_transactional_id(broker, topic):
    since = broker.log_size()
    port = coordinator_port(broker, "", 1)
    c = Conn(port, "txn-bad-empty-id")
    try:
        r = kw.parse_init_producer_id(INIT_V, c.call(kw.init_producer_id_request, INIT_V, "",
                                                     30000))
        assert r["error"] == kw.ERR_INVALID_REQUEST, (
            "InitProducerId with transactional id \"\": %r, Kafka answers 42" % r)
        log_refusal(broker, since, c, "InitProducerId", 42, r"empty")
        res = kw.parse_add_partitions_to_txn(ADD_V, c.call(
            kw.add_partitions_to_txn_request, ADD_V, "", 0, 0, {topic: [0]}))
        assert res == {(topic, 0): kw.ERR_INVALID_REQUEST}, res
        log_refusal(broker, since, c, "AddPartitionsToTxn", 42, r"empty")
        err = kw.parse_end_txn(END_V, c.call(kw.end_txn_request, END_V, "", 0, 0, True))
        assert err == kw.ERR_INVALID_REQUEST, "EndTxn with transactional id \"\": %d" % err
        log_refusal(broker, since, c, "EndTxn", 42, r"empty")
    finally:
        c.close()
    assert_stable(broker, topic, [0])


def leaders(broker, topic):
    """{partition: leader port} from Metadata v6."""
    c = Conn(broker.port, "txn-bad-md")
    try:
        md = kw.parse_metadata(kw.METADATA_V, c.call(kw.metadata_request, kw.METADATA_V, [topic]))
    finally:
        c.close()
    [t] = md["topics"]
    return {p["index"]: md["brokers"][p["leader"]][1] for p in t["partitions"]}


def test_transactional_records_without_transactional_id(broker):
    # 4 partitions on 3 nodes: two of them share a leader, for the mixed request below
    topic = create_topic(broker, unique("txn-bad-no-id"), 4)
    by_port = {}
    for p, port in sorted(leaders(broker, topic).items()):
        by_port.setdefault(port, []).append(p)
    [(port, (tp, pp))] = [(port, ps[:2]) for port, ps in by_port.items() if len(ps) >= 2][:1]
    since = broker.log_size()
    t = Txn(broker, "txn-bad-no-id")
    try:
        t.init()
        t.add_ok(topic, [tp])   # the partition is in the transaction: only the missing id is wrong
        before = {p: offsets(broker, topic, p) for p in (tp, pp)}
        res, corr = t.produce(topic, tp, [b"no-id"], transactional_id=None)
        assert res["error"] == kw.ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED, (
            "transactional records in a Produce without a transactional id: %r, Kafka "
            "answers 53" % res)
        log_refusal(broker, since, t.client_id, "Produce", 53, r"transactional id",
                    corr=corr)
        # Kafka refuses the whole request (KafkaApis.handleProduceRequest answers every
        # partition 53): a plain batch for another partition of the same request is not
        # appended either
        t.seq.clear()
        mixed = [(topic, tp, t.batch(topic, tp, [b"no-id-txn"])),
                 (topic, pp, kw.record_batch([(None, b"plain-beside-txn", ())]))]
        c = Conn(port, t.client_id)
        try:
            res = kw.parse_produce_any(PRODUCE_V, c.call(kw.produce_request_txn, PRODUCE_V, None,
                                                         mixed))
        finally:
            c.close()
        TOUCHED.setdefault(key(broker, topic), set()).update({tp, pp})
        assert res[(topic, tp)]["error"] == kw.ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED, res
        after = {p: offsets(broker, topic, p) for p in (tp, pp)}
        assert after == before, (
            "batches of a refused Produce were appended (offsets (HW, LSO) per partition %r -> "
            "%r); answers %r" % (before, after, res))
        assert res[(topic, pp)]["error"] == kw.ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED, (
            "a plain batch in a Produce that also carries transactional records without a "
            "transactional id: %r; Kafka refuses the whole request with 53" % res[(topic, pp)])
        assert t.end(False) == 0
    finally:
        t.close()
    assert_stable(broker, topic, [tp, pp])


def test_find_coordinator_and_not_coordinator(broker, topic):
    since = broker.log_size()
    txn_id = unique("txn-bad-coord")
    port = coordinator_port(broker, txn_id, 1)
    assert coordinator_port(broker, txn_id, 1) == port, "FindCoordinator answers differ"
    # every node gives the same answer
    for p in broker.ports:
        c = Conn(p, "txn-bad-find-each")
        try:
            r = kw.parse_find_coordinator(2, c.call(kw.find_coordinator_request, txn_id, 1))
        finally:
            c.close()
        assert r["error"] == 0 and r["port"] == port, (p, r)
    others = [p for p in broker.ports if p != port]
    assert others, "one node only: no non-coordinator to ask"
    c = Conn(others[0], "txn-bad-not-coord")
    try:
        r = kw.parse_init_producer_id(INIT_V, c.call(kw.init_producer_id_request, INIT_V, txn_id,
                                                     30000))
        assert r["error"] == kw.ERR_NOT_COORDINATOR, (
            "InitProducerId on a node that does not coordinate the id: %r, Kafka answers 16" % r)
        log_refusal(broker, since, c, "InitProducerId", 16, r"coordinated by")
        res = kw.parse_add_partitions_to_txn(ADD_V, c.call(
            kw.add_partitions_to_txn_request, ADD_V, txn_id, 1, 0, {topic: [0]}))
        assert res == {(topic, 0): kw.ERR_NOT_COORDINATOR}, res
        log_refusal(broker, since, c, "AddPartitionsToTxn", 16, r"coordinated by")
        err = kw.parse_add_offsets_to_txn(ADD_OFFSETS_V, c.call(
            kw.add_offsets_to_txn_request, ADD_OFFSETS_V, txn_id, 1, 0, "g"))
        assert err == kw.ERR_NOT_COORDINATOR, "AddOffsetsToTxn on a non-coordinator: %d" % err
        log_refusal(broker, since, c, "AddOffsetsToTxn", 16, r"coordinated by")
        err = kw.parse_end_txn(END_V, c.call(kw.end_txn_request, END_V, txn_id, 1, 0, True))
        assert err == kw.ERR_NOT_COORDINATOR, "EndTxn on a non-coordinator: %d" % err
        log_refusal(broker, since, c, "EndTxn", 16, r"coordinated by")
    finally:
        c.close()
    # the coordinator serves it
    t = Txn(broker, "txn-bad-coord-ok", txn_id=txn_id)
    try:
        assert t.coord_port == port
        t.init()
    finally:
        t.close()


def test_validated_before_the_coordinator_lookup(broker, topic):
    """Kafka checks an empty transactional id (InitProducerId, AddPartitionsToTxn, EndTxn) and
    InitProducerId's timeout before it looks for the id's coordinator
    (TransactionCoordinator.handleInitProducerId/handleAddPartitionsToTransaction/endTransaction),
    so any node answers 42 / 50 rather than NOT_COORDINATOR."""
    since = broker.log_size()
    empty_coord = coordinator_port(broker, "", 1)
    txn_id = unique("txn-bad-timeout-elsewhere")
    id_coord = coordinator_port(broker, txn_id, 1)
    got = {}
    for port in broker.ports:
        c = Conn(port, "txn-bad-validate-%d" % port)
        try:
            if port != empty_coord:
                got[("InitProducerId \"\"", port)] = kw.parse_init_producer_id(INIT_V, c.call(
                    kw.init_producer_id_request, INIT_V, "", 30000))["error"]
                got[("AddPartitionsToTxn \"\"", port)] = kw.parse_add_partitions_to_txn(
                    ADD_V, c.call(kw.add_partitions_to_txn_request, ADD_V, "", 0, 0,
                                  {topic: [0]}))[(topic, 0)]
                got[("EndTxn \"\"", port)] = kw.parse_end_txn(END_V, c.call(
                    kw.end_txn_request, END_V, "", 0, 0, True))
            if port != id_coord:
                got[("InitProducerId timeout", port)] = kw.parse_init_producer_id(INIT_V, c.call(
                    kw.init_producer_id_request, INIT_V, txn_id, MAX_TIMEOUT_MS + 1))["error"]
        finally:
            c.close()
    want = {k: (kw.ERR_INVALID_TRANSACTION_TIMEOUT if "timeout" in k[0] else kw.ERR_INVALID_REQUEST)
            for k in got}
    assert got == want, ("requests to nodes that do not coordinate the id: %r; Kafka answers "
                         "42 (empty id) and 50 (timeout) on every node" % got)
    log_refusal(broker, since, "txn-bad-validate-%d" % [p for p in broker.ports
                                                        if p != id_coord][0],
                "InitProducerId", 50, r"transaction\.max\.timeout\.ms")


def test_add_partitions_v4_on_iam_listener(request):
    pytest.importorskip("aws_msk_iam_sasl_signer")  # the raw SASL login's token signer
    iam_broker = request.getfixturevalue("iam_broker")
    import iam
    b = iam_broker
    since = b.log_size()
    create_topic(b, "txn-bad-iam", 1)
    with iam.SaslConn(b.sasl_plaintext_port, client_id="txn-bad-iam") as c:
        c.login_oauthbearer(iam.ALICE)
        body = c.roundtrip(lambda corr, cid: kw.add_partitions_to_txn_batch_request(
            4, corr, cid, [("txn-bad-iam-id", 1, 0, True, {"txn-bad-iam": [0]})]))
        res = kw.parse_add_partitions_to_txn(4, body)
        assert res["error"] == kw.ERR_CLUSTER_AUTHORIZATION_FAILED, (
            "AddPartitionsToTxn v4 (the inter-broker form) from an IAM principal: %r; Kafka "
            "needs ClusterAction, which MSK's IAM cannot grant: 31" % res)
        log_refusal(b, since, "txn-bad-iam", "AddPartitionsToTxn", 31, r"ClusterAction",
                    version=4, corr=c.corr)
        # the client form (v3) is served on the same connection
        body = c.roundtrip(lambda corr, cid: kw.add_partitions_to_txn_request(
            3, corr, cid, "txn-bad-iam-id", 1, 0, {"txn-bad-iam": [0]}))
        res = kw.parse_add_partitions_to_txn(3, body)
        assert res == {("txn-bad-iam", 0): kw.ERR_INVALID_PRODUCER_ID_MAPPING}, res


def test_nothing_half_written(broker, delayed):
    """Last: every partition the module's transactions touched has LSO == HW and read_committed
    shows exactly the committed records; DescribeTransactions finds no transaction open."""
    checked = 0
    for b in (broker, delayed):
        for (data_dir, topic), parts in sorted(TOUCHED.items()):
            if data_dir != str(b.data_dir):
                continue
            assert_stable(b, topic, sorted(parts))
            checked += 1
    assert checked, "no partition was touched by the tests before this one"
