"""Transactional commands of the confluent-kafka test client (client.py dispatches txn-* here).

  txn-transform --bootstrap B --group G --input T --output O --transactional-id ID
                [--batch N] [--abort-every K] [--init-timeout S] [--timeout S]
      Consume-transform-produce with exactly-once semantics. A consumer of group G
      (isolation.level=read_committed, enable.auto.commit=false) reads T; each batch of up to N
      records (default 20) becomes one transaction: begin_transaction, every record produced to
      O with the same key and partition, the value upper-cased and the input's headers plus
      ("src", "<partition>:<offset>"), flush, send_offsets_to_transaction(consumer.position(...),
      consumer.consumer_group_metadata()), commit_transaction. With --abort-every K every K-th
      transaction is aborted instead (after its records were acknowledged, so they are in O's
      log as aborted records); the consumer's committed offsets are then read back (they must
      still be those before the aborted batch) and the consumer seeks back to them, so the batch
      is processed again in a later transaction. Runs until the committed offsets reach T's
      high watermarks (read when it starts), or fails after --timeout S (default 60);
      init_transactions waits at most --init-timeout S (default 10).
      -> {"committed_txns": C, "aborted_txns": A, "records_committed": R, "records_aborted": X,
          "end_offsets": {"P": off}, "committed_offsets": {"P": off}}

  txn-produce --bootstrap B --topic T --partitions P --commits N --aborts M --records R
              [--transactional-id ID] [--init-timeout S] [--timeout S]
      N + M transactions of R records each. Transaction t (0-based) is aborted when it is odd and
      fewer than M were aborted so far, or once all N commits are done (txn_aborted below; with
      N=3, M=2: commit, abort, commit, abort, commit). Record j of transaction t goes to
      partition j % P with key "txn-<t>-<j>", value "txn-<t>-<j>-commit" (or "-abort") and
      header ("txn", "<t>"). Each transaction is flushed (every record acknowledged) before it
      is committed or aborted.
      -> {"commits": N, "aborts": M, "records": R, "acked": (N+M)*R, "schedule": "CACAC"}

  txn-consume --bootstrap B --topic T --partitions P --isolation read_committed|read_uncommitted
              [--timeout S]
      Reads every partition from the beginning (no group) until librdkafka reports the end of
      each partition at or past its high watermark (read_uncommitted, queried at the start), so a
      read_committed read also waits for every open transaction to end (its last stable offset).
      -> {"count": n, "per_partition": {"P": n}, "high_watermarks": {"P": off},
          "records": [[partition, offset, key, value, {header: value}], ...]}

  txn-committed --bootstrap B --group G --topic T --partitions P
      The group's committed offsets (OffsetFetch with require_stable, as a read_committed
      consumer asks) and the topic's high watermarks.
      -> {"committed": {"P": off or null}, "high_watermarks": {"P": off}}

The last stdout line is one JSON object; any error exits non-zero with a message on stderr.
The transactional producers log librdkafka's "eos" debug context on stderr (what a failed
init_transactions or commit_transaction waited for); MSKMOCK_IT_RDKAFKA_DEBUG sets other
contexts, or none when empty.
"""

import os
import time

from confluent_kafka import (
    OFFSET_BEGINNING,
    Consumer,
    KafkaError,
    KafkaException,
    Producer,
    TopicPartition,
)

import client
from client import Failure, log


class ErrorLog:
    """error_cb that keeps the last librdkafka errors to show them in a failure's message (a
    refused transaction usually ends in a plain time-out, the reason being in these)."""

    def __init__(self, name):
        self.name = name
        self.seen = []

    def __call__(self, err):
        log("%s: librdkafka error: %s" % (self.name, err))
        self.seen.append(str(err))
        del self.seen[:-5]
        if err.fatal():
            raise Failure("%s: fatal librdkafka error: %s" % (self.name, err))

    def tail(self):
        return "; last librdkafka errors: %s" % self.seen if self.seen else ""


def describe(e):
    """A KafkaException's KafkaError with its name and flags."""
    err = e.args[0] if e.args else None
    if not isinstance(err, KafkaError):
        return repr(e)
    flags = [f for f, on in (("fatal", err.fatal()), ("retriable", err.retriable()),
                             ("txn_requires_abort", err.txn_requires_abort())) if on]
    return "%s (%s%s)" % (err.str(), err.name(), ", " + ", ".join(flags) if flags else "")


def remaining(deadline, cap=30.0):
    left = deadline - time.monotonic()
    if left <= 0:
        raise Failure("overall time-out reached")
    return max(1.0, min(cap, left))


def txn_producer(a, errs):
    conf = client.base_conf(a.bootstrap)
    conf.update({
        "transactional.id": a.transactional_id,
        "transaction.timeout.ms": 30000,
        "message.timeout.ms": 30000,  # at most transaction.timeout.ms
        "acks": "all",
        "linger.ms": 5,
        "error_cb": errs,
        # librdkafka's transaction log on stderr: a refused or stuck transaction times out
        # without naming the broker's error; these lines name it.
        "debug": os.environ.get("MSKMOCK_IT_RDKAFKA_DEBUG", "eos"),
    })
    if not conf["debug"]:
        del conf["debug"]
    p = Producer(conf)
    t0 = time.monotonic()
    try:
        p.init_transactions(a.init_timeout)
    except KafkaException as e:
        raise Failure("init_transactions (transactional.id %s) failed after %.1f s: %s%s"
                      % (a.transactional_id, time.monotonic() - t0, describe(e), errs.tail()))
    return p


def txn_step(what, fn, errs):
    try:
        return fn()
    except KafkaException as e:
        raise Failure("%s failed: %s%s" % (what, describe(e), errs.tail()))


def flush_all(p, deadline, errs, delivery_errors):
    while len(p) > 0 and time.monotonic() < deadline:
        p.flush(0.5)
    if delivery_errors:
        raise Failure("%d delivery errors, first: %s%s"
                      % (len(delivery_errors), delivery_errors[0], errs.tail()))
    if len(p) > 0:
        raise Failure("%d records unacknowledged at the deadline%s" % (len(p), errs.tail()))


def partitions_of(c, topic):
    md = c.list_topics(topic, timeout=10)
    t = md.topics.get(topic)
    if t is None or t.error is not None:
        raise Failure("metadata of %s: %s" % (topic, t.error if t is not None else "missing"))
    return sorted(t.partitions)


# -- txn-transform ----------------------------------------------------------------------

def cmd_txn_transform(a):
    deadline = time.monotonic() + a.timeout
    perrs, cerrs = ErrorLog("producer"), ErrorLog("consumer")
    cconf = client.base_conf(a.bootstrap)
    cconf.update({
        "group.id": a.group,
        "isolation.level": "read_committed",
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "auto.offset.reset": "earliest",
        "enable.partition.eof": False,
        "fetch.wait.max.ms": 100,
        "session.timeout.ms": 10000,
        "heartbeat.interval.ms": 1000,
        "error_cb": cerrs,
    })
    c = Consumer(cconf)
    p = None
    try:
        parts = partitions_of(c, a.input)
        end = {}
        for part in parts:
            _, high = c.get_watermark_offsets(TopicPartition(a.input, part), timeout=10,
                                              cached=False)
            end[part] = high
        # Where the group starts: its committed offsets, else the beginning. (Some brokers
        # answer GROUP_ID_NOT_FOUND for a group that never committed, as newer OffsetFetch
        # versions may.)
        try:
            start = c.committed([TopicPartition(a.input, part) for part in parts], timeout=10)
        except KafkaException as e:
            if e.args[0].code() != KafkaError.GROUP_ID_NOT_FOUND:
                raise Failure("committed offsets of group %s: %s%s"
                              % (a.group, describe(e), cerrs.tail()))
            start = [TopicPartition(a.input, part, -1001) for part in parts]
        next_off = {}
        for tp in start:
            if tp.error is not None:
                raise Failure("committed offset of %s[%d]: %s" % (tp.topic, tp.partition, tp.error))
            next_off[tp.partition] = tp.offset if tp.offset >= 0 else 0

        p = txn_producer(a, perrs)
        c.subscribe([a.input])

        committed_txns = aborted_txns = records_committed = records_aborted = 0
        txn_no = 0
        delivery_errors = []

        def on_delivery(err, msg):
            if err is not None:
                delivery_errors.append("key=%r partition %s: %s"
                                       % (msg.key(), msg.partition(), err))

        while any(next_off[part] < end[part] for part in parts):
            if time.monotonic() > deadline:
                raise Failure("timed out after %.0f s: committed offsets %s, end offsets %s, "
                              "%d transactions committed, %d aborted%s%s"
                              % (a.timeout, next_off, end, committed_txns, aborted_txns,
                                 perrs.tail(), cerrs.tail()))
            batch = []
            for m in c.consume(num_messages=a.batch, timeout=0.5):
                err = m.error()
                if err is not None:
                    if err.fatal():
                        raise Failure("fatal consumer error: %s" % err)
                    log("consume error: %s" % err)
                    continue
                batch.append(m)
            if not batch:
                continue
            first, last = {}, {}
            for m in batch:
                part, off = m.partition(), m.offset()
                if part not in first:
                    first[part] = off
                    if off != next_off[part]:
                        raise Failure("partition %d: consumed from offset %d, but the committed "
                                      "offset is %d (records skipped or repeated)"
                                      % (part, off, next_off[part]))
                elif off != last[part] + 1:
                    raise Failure("partition %d: offset %d follows %d" % (part, off, last[part]))
                last[part] = off

            txn_no += 1
            abort = a.abort_every > 0 and txn_no % a.abort_every == 0
            txn_step("begin_transaction #%d" % txn_no, p.begin_transaction, perrs)
            for m in batch:
                value = m.value()
                headers = list(m.headers() or [])
                headers.append(("src", ("%d:%d" % (m.partition(), m.offset())).encode()))
                while True:
                    try:
                        p.produce(a.output, key=m.key(),
                                  value=value.upper() if value is not None else None,
                                  partition=m.partition(), headers=headers,
                                  on_delivery=on_delivery)
                        break
                    except BufferError:
                        p.poll(0.1)
            flush_all(p, deadline, perrs, delivery_errors)

            tps = [TopicPartition(a.input, part) for part in sorted(last)]
            positions = c.position(tps)
            for tp in positions:
                if tp.offset != last[tp.partition] + 1:
                    raise Failure("consumer.position of partition %d is %d after offset %d"
                                  % (tp.partition, tp.offset, last[tp.partition]))
            txn_step("send_offsets_to_transaction #%d" % txn_no,
                     lambda: p.send_offsets_to_transaction(positions,
                                                           c.consumer_group_metadata(),
                                                           remaining(deadline)), perrs)
            if abort:
                txn_step("abort_transaction #%d" % txn_no,
                         lambda: p.abort_transaction(remaining(deadline)), perrs)
                aborted_txns += 1
                records_aborted += len(batch)
                # The aborted offsets must not have become the group's: read them back and seek.
                back = txn_step("committed offsets after abort #%d" % txn_no,
                                lambda: c.committed(tps, timeout=remaining(deadline, 10)), cerrs)
                for tp in back:
                    want = first[tp.partition]
                    got = tp.offset if tp.offset >= 0 else 0
                    if tp.error is not None or got != want:
                        raise Failure("after aborting transaction #%d the committed offset of "
                                      "partition %d is %s (error %s), expected %d"
                                      % (txn_no, tp.partition, tp.offset, tp.error, want))
                    c.seek(TopicPartition(a.input, tp.partition, want))
            else:
                txn_step("commit_transaction #%d" % txn_no,
                         lambda: p.commit_transaction(remaining(deadline)), perrs)
                committed_txns += 1
                records_committed += len(batch)
                for part, off in last.items():
                    next_off[part] = off + 1
    finally:
        c.close()
        if p is not None:
            p.flush(1.0)
    return {"committed_txns": committed_txns, "aborted_txns": aborted_txns,
            "records_committed": records_committed, "records_aborted": records_aborted,
            "end_offsets": {str(k): v for k, v in sorted(end.items())},
            "committed_offsets": {str(k): v for k, v in sorted(next_off.items())}}


# -- txn-produce ------------------------------------------------------------------------

def txn_aborted(t, commits, aborts):
    """Whether transaction t (0-based) of commits + aborts is aborted (see the module doc)."""
    c = ab = 0
    for k in range(t + 1):
        abort = ab < aborts and (k % 2 == 1 or c >= commits)
        if k == t:
            return abort
        if abort:
            ab += 1
        else:
            c += 1
    return False


def cmd_txn_produce(a):
    deadline = time.monotonic() + a.timeout
    errs = ErrorLog("producer")
    p = txn_producer(a, errs)
    acked = 0
    delivery_errors = []
    schedule = ""

    def on_delivery(err, msg):
        nonlocal acked
        if err is not None:
            delivery_errors.append("key=%r partition %s: %s" % (msg.key(), msg.partition(), err))
        else:
            acked += 1

    try:
        for t in range(a.commits + a.aborts):
            abort = txn_aborted(t, a.commits, a.aborts)
            txn_step("begin_transaction #%d" % t, p.begin_transaction, errs)
            for j in range(a.records):
                key = "txn-%d-%d" % (t, j)
                p.produce(a.topic, key=key.encode(),
                          value=("%s-%s" % (key, "abort" if abort else "commit")).encode(),
                          partition=j % a.partitions, headers=[("txn", str(t).encode())],
                          on_delivery=on_delivery)
            flush_all(p, deadline, errs, delivery_errors)
            if abort:
                txn_step("abort_transaction #%d" % t,
                         lambda: p.abort_transaction(remaining(deadline)), errs)
            else:
                txn_step("commit_transaction #%d" % t,
                         lambda: p.commit_transaction(remaining(deadline)), errs)
            schedule += "A" if abort else "C"
    finally:
        p.flush(1.0)
    return {"commits": a.commits, "aborts": a.aborts, "records": a.records, "acked": acked,
            "schedule": schedule}


# -- txn-consume, txn-committed ---------------------------------------------------------

def high_watermarks(bootstrap, topic, partitions):
    conf = client.consumer_conf(bootstrap)
    conf["isolation.level"] = "read_uncommitted"
    c = Consumer(conf)
    try:
        return {part: c.get_watermark_offsets(TopicPartition(topic, part), timeout=10,
                                              cached=False)[1]
                for part in range(partitions)}
    finally:
        c.close()


def cmd_txn_consume(a):
    deadline = time.monotonic() + a.timeout
    hwm = high_watermarks(a.bootstrap, a.topic, a.partitions)
    conf = client.consumer_conf(a.bootstrap)
    errs = ErrorLog("consumer")
    conf.update({"isolation.level": a.isolation, "enable.partition.eof": True,
                 "fetch.wait.max.ms": 100, "error_cb": errs})
    c = Consumer(conf)
    c.assign([TopicPartition(a.topic, part, OFFSET_BEGINNING) for part in range(a.partitions)])
    eof = {}
    records = []
    try:
        while any(eof.get(part, -1) < hwm[part] for part in range(a.partitions)):
            if time.monotonic() > deadline:
                raise Failure("%s read of %s timed out after %.0f s: end of partition reported "
                              "at %s, high watermarks %s, %d records%s"
                              % (a.isolation, a.topic, a.timeout, eof, hwm, len(records),
                                 errs.tail()))
            for m in c.consume(num_messages=1000, timeout=0.5):
                err = m.error()
                if err is not None:
                    if err.code() == KafkaError._PARTITION_EOF:
                        eof[m.partition()] = m.offset()
                        continue
                    if err.fatal() or not err.retriable():
                        raise Failure("consume error on partition %s: %s" % (m.partition(), err))
                    log("retriable consume error: %s" % err)
                    continue
                key, value = m.key(), m.value()
                records.append([m.partition(), m.offset(),
                                key.decode() if key is not None else None,
                                value.decode() if value is not None else None,
                                {k: (v.decode() if v is not None else None)
                                 for k, v in (m.headers() or [])}])
    finally:
        c.close()
    per = {}
    for r in records:
        per[str(r[0])] = per.get(str(r[0]), 0) + 1
    return {"count": len(records), "per_partition": per,
            "high_watermarks": {str(k): v for k, v in hwm.items()},
            "records": sorted(records, key=lambda r: (r[0], r[1]))}


def cmd_txn_committed(a):
    conf = client.base_conf(a.bootstrap)
    errs = ErrorLog("consumer")
    conf.update({"group.id": a.group, "isolation.level": "read_committed",
                 "enable.auto.commit": False, "error_cb": errs})
    c = Consumer(conf)
    try:
        got = txn_step("committed offsets of group %s" % a.group,
                       lambda: c.committed([TopicPartition(a.topic, part)
                                            for part in range(a.partitions)], timeout=15), errs)
    finally:
        c.close()
    out = {}
    for tp in got:
        if tp.error is not None:
            raise Failure("committed offset of %s[%d]: %s" % (tp.topic, tp.partition, tp.error))
        out[str(tp.partition)] = tp.offset if tp.offset >= 0 else None
    return {"committed": out,
            "high_watermarks": {str(k): v for k, v in
                                high_watermarks(a.bootstrap, a.topic, a.partitions).items()}}


COMMANDS = {
    "txn-transform": cmd_txn_transform,
    "txn-produce": cmd_txn_produce,
    "txn-consume": cmd_txn_consume,
    "txn-committed": cmd_txn_committed,
}


def add_parsers(sub, add_security_options):
    """Adds the txn-* subcommands to client.py's argparse subparsers."""
    sp = sub.add_parser("txn-transform")
    add_security_options(sp)
    sp.add_argument("--bootstrap", required=True)
    sp.add_argument("--group", required=True)
    sp.add_argument("--input", required=True)
    sp.add_argument("--output", required=True)
    sp.add_argument("--transactional-id", required=True)
    sp.add_argument("--batch", type=int, default=20)
    sp.add_argument("--abort-every", type=int, default=0)
    sp.add_argument("--init-timeout", type=float, default=10.0)
    sp.add_argument("--timeout", type=float, default=60.0)

    sp = sub.add_parser("txn-produce")
    add_security_options(sp)
    sp.add_argument("--bootstrap", required=True)
    sp.add_argument("--topic", required=True)
    sp.add_argument("--partitions", type=int, required=True)
    sp.add_argument("--commits", type=int, required=True)
    sp.add_argument("--aborts", type=int, required=True)
    sp.add_argument("--records", type=int, required=True)
    sp.add_argument("--transactional-id", default="mskmock-it-python-txn-produce")
    sp.add_argument("--init-timeout", type=float, default=10.0)
    sp.add_argument("--timeout", type=float, default=60.0)

    sp = sub.add_parser("txn-consume")
    add_security_options(sp)
    sp.add_argument("--bootstrap", required=True)
    sp.add_argument("--topic", required=True)
    sp.add_argument("--partitions", type=int, required=True)
    sp.add_argument("--isolation", choices=("read_committed", "read_uncommitted"), required=True)
    sp.add_argument("--timeout", type=float, default=30.0)

    sp = sub.add_parser("txn-committed")
    add_security_options(sp)
    sp.add_argument("--bootstrap", required=True)
    sp.add_argument("--group", required=True)
    sp.add_argument("--topic", required=True)
    sp.add_argument("--partitions", type=int, required=True)
