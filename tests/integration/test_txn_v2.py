"""Transactions V2 (KIP-890 part 2) over raw sockets: what a Kafka 4.x producer sends once a
broker finalizes transaction.version 2, and the refusals Kafka answers.

  | case                                                                  | Kafka's answer             |
  |-----------------------------------------------------------------------|----------------------------|
  | ApiVersions v3: serverless, provisioned 3.8 / kafka, provisioned 4.0 / transaction.version=1 | no TV, v11-4-4 / TV 2, v12-5-5 / TV 1, v11-4-4 |
  | Produce v12 with no AddPartitionsToTxn, then EndTxn v5 commit / abort | 0, (pid, epoch + 1)        |
  | the ended transaction's late batch (old epoch), Produce v12 / v11     | 47 / 47                    |
  | EndTxn v5 retried with the epoch before the bump                      | 0, the same (pid, epoch)   |
  | EndTxn v5 commit again with the new epoch and nothing added           | 48                         |
  | EndTxn v5 abort with nothing added                                    | 0, epoch + 1               |
  | EndTxn v5 with an epoch neither current nor the one before            | 90                         |
  | Produce v12: an epoch ahead of the id's / an unknown producer id      | 47 / 49                    |
  | Produce v12 while the markers are written (PrepareCommit)             | 19 (NOT_ENOUGH_REPLICAS)   |
  | TxnOffsetCommit v5 with no AddOffsetsToTxn                            | 0, committed with the txn  |
  | EndTxn v5 at epoch 32766 (Short.MAX_VALUE - 1)                        | 0, (new pid, 0); retry too |
  | a TV1 client (AddPartitionsToTxn v3, Produce v11, EndTxn v4), same broker | unchanged: no bump      |

The epoch near exhaustion is set in the database while the broker is stopped: 32 thousand
transactions would take minutes.
"""

import sqlite3
import struct

import pytest

import kafka_wire as kw
from harness import Broker, running
from test_txn_bad_input import (Conn, Txn, committed, create_topic, fetch, leader, log_refusal,
                                unique, visible_committed, COMMITTED, key)

pytestmark = pytest.mark.timeout(180)

ERR_NOT_ENOUGH_REPLICAS = 19
ERR_INVALID_PRODUCER_EPOCH = 47
ERR_INVALID_TXN_STATE = 48
ERR_INVALID_PRODUCER_ID_MAPPING = 49
ERR_PRODUCER_FENCED = 90


@pytest.fixture(scope="module")
def broker_config():
    return {"profile": "kafka"}


@pytest.fixture(scope="module")
def delayed():
    # debug: the tests wait for the delayed markers' "committed" line, logged at debug
    with running(Broker(config={"profile": "kafka", "transaction.marker.delay.ms": 2000, "log.level": "debug"})) as b:
        yield b


@pytest.fixture(scope="module")
def topic(broker):
    return create_topic(broker, "txn-v2")


def with_version(frame, version):
    """A frame built for one version, sent as another whose body is the same (Produce v12 is v11,
    EndTxn v5's request is v4's, TxnOffsetCommit v5 is v4)."""
    return frame[:6] + struct.pack(">h", version) + frame[8:]


def end_v5(t, commit, epoch=None, pid=None):
    """EndTxn v5: (error, producer_id, producer_epoch)."""
    frame_fn = lambda corr, cid: with_version(kw.end_txn_request(
        4, corr, cid, t.id, t.pid if pid is None else pid, t.epoch if epoch is None else epoch,
        commit), 5)
    body = t.c.call(frame_fn)
    r = kw.response_reader(kw.API_END_TXN, 5, body)
    r.i32()
    out = (r.i16(), r.i64(), r.i16())
    r.end()
    return out


def produce_v12(t, topic, partition, values, epoch=None, pid=None, version=12):
    """One transactional batch with no AddPartitionsToTxn before it: the partition's answer."""
    pid = t.pid if pid is None else pid
    epoch = t.epoch if epoch is None else epoch
    seq = t.seq.get((pid, epoch, partition), 0)
    t.seq[(pid, epoch, partition)] = seq + len(values)
    b = kw.producer_batch([(None, v, ()) for v in values], pid, epoch, seq, transactional=True)
    with leader(t.broker, topic, partition, t.client_id) as c:
        frame_fn = lambda corr, cid: with_version(kw.produce_request_txn(
            11, corr, cid, t.id, [(topic, partition, b)]), version)
        res = kw.parse_produce_any(11, c.call(frame_fn))
        corr = c.corr
    return res[(topic, partition)], corr


def read_committed(broker, topic, partition):
    return visible_committed(fetch(broker, topic, partition, kw.ISOLATION_READ_COMMITTED))


def api_versions_v3(port):
    """ApiVersions v3: ({key: (min, max)}, {finalized feature: level}, finalized epoch,
    {supported feature: (min, max)})."""
    c = Conn(port, "txn-v2-versions")
    try:
        body = c.call(lambda corr, cid: kw.api_versions_request(corr, cid, version=3))
    finally:
        c.close()
    r = kw.FlexReader(body, True)
    assert r.i16() == 0

    def api(r):
        k = (r.i16(), r.i16(), r.i16())
        r.skip_tags()
        return k

    keys = {k: (lo, hi) for k, lo, hi in r.compact_array(api)}
    r.i32()
    supported, finalized, epoch = {}, {}, -1
    for _ in range(r.uvarint()):
        tag, size = r.uvarint(), r.uvarint()
        sub = kw.FlexReader(r.take(size), True)
        if tag == 0:
            for name, lo, hi in sub.compact_array(lambda s: (s.compact_string(), s.i16(), s.i16(), s.skip_tags())[:3]):
                supported[name] = (lo, hi)
        elif tag == 1:
            epoch = sub.i64()
        elif tag == 2:
            for name, hi, _lo in sub.compact_array(lambda s: (s.compact_string(), s.i16(), s.i16(), s.skip_tags())[:3]):
                finalized[name] = hi
    return keys, finalized, epoch, supported


@pytest.mark.parametrize("config,level,maxima", [
    ({}, None, (11, 4, 4)),                                 # serverless: V1, no feature listed
    ({"transaction.version": 2}, 2, (12, 5, 5)),            # ... unless configured
    ({"profile": "provisioned"}, None, (11, 4, 4)),         # kafka.version 3.8: no transaction.version
    ({"profile": "provisioned", "kafka.version": "4.0"}, 2, (12, 5, 5)),
    ({"profile": "kafka"}, 2, (12, 5, 5)),
    ({"profile": "kafka", "transaction.version": 1}, 1, (11, 4, 4)),
])
def test_api_versions_advertise_transaction_version(config, level, maxima):
    with running(Broker(broker_count=1, config=config)) as b:
        keys, finalized, epoch, _supported = api_versions_v3(b.port)
    assert finalized.get("transaction.version") == level, finalized
    # the Java client takes the finalized features only from an epoch above -1
    assert level is None or epoch >= 0, epoch
    got = (keys[kw.API_PRODUCE][1], keys[kw.API_END_TXN][1], keys[kw.API_TXN_OFFSET_COMMIT][1])
    assert got == maxima, "Produce, EndTxn, TxnOffsetCommit maxima %r with %r" % (got, config)


def test_epoch_bump_at_every_end_txn_fences_the_late_batch(broker, topic):
    t = Txn(broker, "txn-v2-bump", unique("txn-v2"))
    t.init()
    pid, e0 = t.pid, t.epoch
    res, _ = produce_v12(t, topic, 0, [b"c1", b"c2"])
    assert res["error"] == 0, res
    err, npid, nepoch = end_v5(t, True)
    assert (err, npid, nepoch) == (0, pid, e0 + 1), "EndTxn v5 commit: %r" % ((err, npid, nepoch),)
    committed(broker, topic, 0, [b"c1", b"c2"])
    # the answer was lost: the retry with the epoch before the bump gets it again
    assert end_v5(t, True, epoch=e0) == (0, pid, e0 + 1)

    # a batch of the committed transaction arriving late: its epoch is the old one
    since = broker.log_size()
    res, corr = produce_v12(t, topic, 0, [b"late"], epoch=e0)
    assert res["error"] == ERR_INVALID_PRODUCER_EPOCH, res
    log_refusal(broker, since, t.client_id, "Produce", ERR_INVALID_PRODUCER_EPOCH, "fenced", 12, corr)
    res, _ = produce_v12(t, topic, 0, [b"late11"], epoch=e0, version=11)
    assert res["error"] == ERR_INVALID_PRODUCER_EPOCH, res

    t.epoch = nepoch
    # commit again with nothing added: INVALID_TXN_STATE; an epoch two behind: fenced
    assert end_v5(t, True)[0] == ERR_INVALID_TXN_STATE
    assert end_v5(t, True, epoch=nepoch + 5)[0] == ERR_PRODUCER_FENCED

    # the next transaction aborts: its records never show, the epoch bumps again
    res, _ = produce_v12(t, topic, 0, [b"a1"])
    assert res["error"] == 0, res
    assert end_v5(t, False) == (0, pid, e0 + 2)
    t.epoch = e0 + 2
    # an abort with nothing added (the client cannot know whether a produce added a partition)
    assert end_v5(t, False) == (0, pid, e0 + 3)
    t.epoch = e0 + 3
    res, _ = produce_v12(t, topic, 0, [b"c3"])
    assert res["error"] == 0, res
    assert end_v5(t, True) == (0, pid, e0 + 4)
    committed(broker, topic, 0, [b"c3"])
    assert read_committed(broker, topic, 0) == COMMITTED[key(broker, topic)][0]
    t.close()


def test_produce_v12_refused_outside_the_producers_transaction(broker, topic):
    t = Txn(broker, "txn-v2-refuse", unique("txn-v2"))
    t.init()
    since = broker.log_size()
    res, corr = produce_v12(t, topic, 1, [b"x"], epoch=t.epoch + 1)
    assert res["error"] == ERR_INVALID_PRODUCER_EPOCH, res
    log_refusal(broker, since, t.client_id, "Produce", ERR_INVALID_PRODUCER_EPOCH, "fenced", 12, corr)
    res, corr = produce_v12(t, topic, 1, [b"x"], pid=t.pid + 1000)
    assert res["error"] == ERR_INVALID_PRODUCER_ID_MAPPING, res
    log_refusal(broker, since, t.client_id, "Produce", ERR_INVALID_PRODUCER_ID_MAPPING,
                "does not have producer id", 12, corr)
    t.close()


def test_produce_v12_while_the_markers_are_written(delayed):
    tp = create_topic(delayed, "txn-v2-delayed")
    t = Txn(delayed, "txn-v2-delayed", unique("txn-v2"))
    t.init()
    assert produce_v12(t, tp, 0, [b"d1"])[0]["error"] == 0
    assert produce_v12(t, tp, 1, [b"d2"])[0]["error"] == 0
    err, pid, epoch = end_v5(t, True)
    assert err == 0 and epoch == t.epoch + 1
    t.epoch = epoch
    since = delayed.log_size()
    res, corr = produce_v12(t, tp, 0, [b"next"])
    assert res["error"] == ERR_NOT_ENOUGH_REPLICAS, res
    log_refusal(delayed, since, t.client_id, "Produce", ERR_NOT_ENOUGH_REPLICAS, "PrepareCommit", 12, corr)
    assert delayed.wait_for_log(r"transactional id %s: committed" % t.id, since=since, timeout=10)
    t.seq.clear()  # the refused batch took no sequence
    res, _ = produce_v12(t, tp, 0, [b"next"])
    assert res["error"] == 0, res
    since = delayed.log_size()
    assert end_v5(t, True)[0] == 0
    assert delayed.wait_for_log(r"transactional id %s: committed" % t.id, since=since, timeout=10)
    assert read_committed(delayed, tp, 0) == [b"d1", b"next"]
    t.close()


def test_txn_offset_commit_v5_adds_the_group(broker, topic):
    group = unique("txn-v2-group")
    t = Txn(broker, "txn-v2-offsets", unique("txn-v2"))
    t.init()
    assert produce_v12(t, topic, 2, [b"o1"])[0]["error"] == 0
    gport = kw.coordinator_port(broker.port, group)
    c = Conn(gport, "txn-v2-offsets")
    frame_fn = lambda corr, cid: with_version(kw.txn_offset_commit_request(
        4, corr, cid, t.id, group, t.pid, t.epoch, topic, {2: 42}), 5)
    assert kw.parse_txn_offset_commit(5, c.call(frame_fn)) == {(topic, 2): 0}
    err, _pid, epoch = end_v5(t, True)
    assert err == 0
    committed(broker, topic, 2, [b"o1"])
    r = kw.parse_offset_fetch(1, c.call(kw.offset_fetch_request, 1, group, topic, [2]))
    assert r["partitions"][(topic, 2)]["offset"] == 42, r
    c.close()
    t.close()


def test_epoch_overflow_rotates_the_producer_id():
    b = Broker(broker_count=1, config={"profile": "kafka"})
    with running(b):
        tp = create_topic(b, "txn-v2-overflow", partitions=1)
        t = Txn(b, "txn-v2-overflow", unique("txn-v2"))
        t.init()
        t.close()
        b.stop()
        con = sqlite3.connect(b.db_path)
        with con:
            con.execute("UPDATE txns SET producer_epoch = 32766 WHERE transactional_id = ?", (t.id,))
        con.close()
        b.start()
        t = Txn(b, "txn-v2-overflow", t.id)
        t.pid = sqlite3.connect(b.db_path).execute(
            "SELECT producer_id FROM txns WHERE transactional_id = ?", (t.id,)).fetchone()[0]
        t.epoch = 32766
        old = t.pid
        assert produce_v12(t, tp, 0, [b"last"])[0]["error"] == 0
        err, npid, nepoch = end_v5(t, True)
        assert err == 0 and npid != old and npid >= 0 and nepoch == 0, (err, npid, nepoch)
        # the answer was lost: the old producer id at the exhausted epoch is a retry
        assert end_v5(t, True) == (0, npid, 0)
        t.pid, t.epoch = npid, 0
        assert produce_v12(t, tp, 0, [b"first"])[0]["error"] == 0
        assert end_v5(t, True) == (0, npid, 1)
        assert read_committed(b, tp, 0) == [b"last", b"first"]
        t.close()


def test_tv1_client_on_the_same_broker_keeps_its_epoch(broker, topic):
    t = Txn(broker, "txn-v2-tv1", unique("txn-v1"))
    t.init()
    e0 = t.epoch
    for n in range(2):
        t.add_ok(topic, [1])
        res, _ = t.produce(topic, 1, [b"v1-%d" % n], version=11)
        assert res["error"] == 0, res
        assert t.end(True, version=4) == 0
        committed(broker, topic, 1, [b"v1-%d" % n])
    assert t.describe()["producer_epoch"] == e0
    assert read_committed(broker, topic, 1) == COMMITTED[key(broker, topic)][1]
    t.close()
