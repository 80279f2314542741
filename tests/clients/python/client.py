#!/usr/bin/env python3
"""mskmock integration-test client for Python (confluent-kafka, i.e. librdkafka).

Implements the CLI contract shared by every client ecosystem under tests/clients/:

  create-topic --bootstrap B --topic T --partitions P
  produce      --bootstrap B --topic T --count N --partitions P --compression C [--idempotent]
               [--start S]
  consume      --bootstrap B --topic T --count N --partitions P
  group-consume --bootstrap B --group G --topic T [--assignor NAME] [--group-protocol classic|consumer] [--instance-id ID]
               [--session-timeout-ms MS] [--max-records N] [--commit sync|async|none]
  produce-consume --bootstrap B --topic T --partitions P --duration S [--interval-ms MS]
  txn-transform, txn-produce, txn-consume, txn-committed: transactions (see txn.py)

Every command also takes the security options of MSK's IAM listener:
  --security-protocol PLAINTEXT|SSL|SASL_PLAINTEXT|SASL_SSL   (default PLAINTEXT)
  --ca FILE            PEM CA bundle that signs the broker's certificate (SSL, SASL_SSL)
  --mechanism M        OAUTHBEARER: an MSK IAM token from the official signer
                       (aws-msk-iam-sasl-signer-python) via oauth_cb, with credentials from the
                       standard AWS chain (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY/
                       AWS_SESSION_TOKEN, or AWS_CONTAINER_CREDENTIALS_FULL_URI ...);
                       PLAIN, SCRAM-SHA-256, SCRAM-SHA-512: dummy user/password (MSK refuses
                       them; for refusal tests). librdkafka has no AWS_MSK_IAM.
  --region R           region the token is scoped to (default $AWS_REGION or us-east-1)
  --timeout S          how long create-topic waits for the broker (default 60)
A SASL authentication failure ends any command at once (exit 1, librdkafka's message on
stderr, e.g. "SASL authentication error: [<uuid>]: Access denied ...").

Record i (0-based) goes to partition i % P, key "key-<i>", value "value-<i>-" + "x" * (i % 50),
headers [("idx", "<i>"), ("codec", C)]. The last stdout line is one JSON object; any error
exits non-zero with a message on stderr.

produce --start S writes records S..S+N-1 instead of 0..N-1, to append a further batch to a
topic that already holds records 0..S-1 (the acked offsets must then be consecutive in every
partition rather than 0..n-1). group-consume prints JSON event lines instead (see its docstring).

produce-consume --duration S keeps one producer and one consumer (assigned to every partition
from the beginning) busy for S seconds: record i every --interval-ms (default 50), each consumed
record checked as in consume. It ends by waiting for every produced record to be acknowledged
and consumed, and prints {"produced": N, "consumed": N, "acked": N, "tokens": K,
"disconnects": D, "errors": [...]} where tokens counts oauth_cb calls and disconnects the
broker disconnects librdkafka counted (statistics); it exits 1 when errors is not empty.
Every error librdkafka reports (error_cb), every failed delivery and every wrong record is an
error, so a session that ends in a disconnect instead of a KIP-368 re-authentication shows up.
"""

import argparse
import json
import os
import signal
import sys
import threading
import time

from confluent_kafka import (
    OFFSET_BEGINNING,
    Consumer,
    KafkaError,
    KafkaException,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient, NewTopic

SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
MECHANISMS = ("OAUTHBEARER", "AWS_MSK_IAM", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
CONSUME_TIMEOUT_S = 60.0


class Failure(Exception):
    pass


def key_of(i):
    return "key-%d" % i


def value_of(i):
    return "value-%d-%s" % (i, "x" * (i % 50))


def log(msg):
    print("client.py: " + msg, file=sys.stderr, flush=True)


def error_cb(err):
    # librdkafka reports connection trouble here; it retries by itself, so only fatal errors
    # and failed SASL authentication (it would retry the same credentials forever) are
    # failures. The rest is shown on stderr for whoever reads a failed test's output.
    log("librdkafka error: %s" % err)
    if err.fatal():
        raise Failure("fatal librdkafka error: %s" % err)
    if err.code() == KafkaError._AUTHENTICATION:
        raise Failure("SASL authentication failed: %s" % err.str())


class Security:
    """The security part of every configuration (--security-protocol, --ca, --mechanism,
    --region) and the OAUTHBEARER token callback with its call count."""

    def __init__(self, a):
        self.protocol = a.security_protocol
        self.ca = a.ca
        self.mechanism = a.mechanism
        self.region = a.region or os.environ.get("AWS_REGION") or "us-east-1"
        self.tokens = 0
        if self.mechanism == "AWS_MSK_IAM":
            raise Failure("librdkafka has no AWS_MSK_IAM mechanism; use OAUTHBEARER with the signer")
        if self.mechanism and not self.protocol.startswith("SASL_"):
            raise Failure("--mechanism needs --security-protocol SASL_SSL or SASL_PLAINTEXT")
        if self.protocol.startswith("SASL_") and not self.mechanism:
            raise Failure("--security-protocol %s needs --mechanism" % self.protocol)

    def oauth_cb(self, oauth_config):
        # Imported here so clients without IAM do not need boto3/botocore.
        from aws_msk_iam_sasl_signer import MSKAuthTokenProvider
        try:
            token, expiry_ms = MSKAuthTokenProvider.generate_auth_token(self.region)
        except Exception as e:  # shown by librdkafka as the token refresh failure
            log("MSK signer failed: %r" % e)
            raise
        self.tokens += 1
        # confluent-kafka wants the expiry in seconds since the epoch (the signer's README).
        return token, expiry_ms / 1000.0

    def conf(self):
        c = {"security.protocol": self.protocol}
        if self.ca and self.protocol in ("SSL", "SASL_SSL"):
            c["ssl.ca.location"] = self.ca
        if self.mechanism == "OAUTHBEARER":
            c["sasl.mechanism"] = "OAUTHBEARER"
            c["oauth_cb"] = self.oauth_cb
        elif self.mechanism:
            c["sasl.mechanism"] = self.mechanism
            c["sasl.username"] = "mskmock-it"
            c["sasl.password"] = "not-a-password"
        return c


SECURITY = None  # the Security of this run (main sets it)


def base_conf(bootstrap):
    conf = {
        "bootstrap.servers": bootstrap,
        "client.id": "mskmock-it-python",
        "error_cb": error_cb,
    }
    if SECURITY is not None:
        conf.update(SECURITY.conf())
    return conf


def cmd_create_topic(a):
    admin = AdminClient(base_conf(a.bootstrap))
    futures = admin.create_topics(
        [NewTopic(a.topic, num_partitions=a.partitions, replication_factor=-1)],
        operation_timeout=30,
        request_timeout=30,
    )
    fut = futures[a.topic]
    deadline = time.monotonic() + a.timeout
    # poll() serves error_cb (and oauth_cb), so a refused authentication ends the wait at once.
    while not fut.done():
        if time.monotonic() > deadline:
            raise Failure("CreateTopics %s: no answer within %.0f s" % (a.topic, a.timeout))
        admin.poll(0.1)
    try:
        fut.result(timeout=0)
    except KafkaException as e:
        raise Failure("CreateTopics %s failed: %s" % (a.topic, e.args[0]))
    return {"created": a.topic}


def cmd_produce(a):
    conf = base_conf(a.bootstrap)
    conf.update({
        "acks": "all",
        "compression.type": a.compression,
        "enable.idempotence": bool(a.idempotent),
        "linger.ms": 5,
        # A broker that never answers should fail the run rather than hang it.
        "message.timeout.ms": 60000,
    })
    p = Producer(conf)
    acked = 0
    errors = []
    offsets = {}  # partition -> offsets the broker assigned

    def on_delivery(err, msg):
        nonlocal acked
        if err is not None:
            errors.append("record key=%r partition=%s: %s"
                          % (msg.key(), msg.partition(), err))
            return
        acked += 1
        offsets.setdefault(msg.partition(), []).append(msg.offset())

    for i in range(a.start, a.start + a.count):
        while True:
            try:
                p.produce(
                    a.topic,
                    key=key_of(i).encode(),
                    value=value_of(i).encode(),
                    partition=i % a.partitions,
                    headers=[("idx", str(i).encode()), ("codec", a.compression.encode())],
                    on_delivery=on_delivery,
                )
                break
            except BufferError:
                p.poll(0.1)  # local queue full: serve delivery reports, then retry
        p.poll(0)
        if errors:
            break

    deadline = time.monotonic() + 90
    while len(p) > 0 and time.monotonic() < deadline:
        p.flush(1.0)
    if errors:
        raise Failure("%d delivery errors, first: %s" % (len(errors), errors[0]))
    if len(p) > 0:
        raise Failure("%d records still unacknowledged after 90 s" % len(p))
    if acked != a.count:
        raise Failure("acked %d records, expected %d" % (acked, a.count))
    # On a fresh topic the broker must hand out offsets 0..n-1 in every partition; appended
    # records (--start) must get consecutive offsets.
    for part in range(a.partitions):
        want_n = len([i for i in range(a.start, a.start + a.count) if i % a.partitions == part])
        got = sorted(offsets.get(part, []))
        first = 0 if a.start == 0 or not got else got[0]
        want = list(range(first, first + want_n))
        if got != want:
            raise Failure("partition %d: acked offsets are not %d..%d (first differing: %s)"
                          % (part, first, first + want_n - 1, _first_diff(got, want)))
    return {"produced": acked}


def _first_diff(got, want):
    for k, (g, w) in enumerate(zip(got, want)):
        if g != w:
            return "index %d got %d want %d" % (k, g, w)
    return "got %d offsets, want %d" % (len(got), len(want))


class Checker:
    """Checks consumed records against the CONTRACT: record n of partition p is at offset n and
    is record i = p + n * P (key, value, headers idx and codec). expected (partition -> count),
    when given, also refuses records beyond what was produced."""

    def __init__(self, partitions, expected=None):
        self.partitions = partitions
        self.expected = expected
        self.per_part = {part: 0 for part in range(partitions)}
        self.codec_seen = None
        self.total = 0

    def add(self, m):
        part = m.partition()
        if part not in self.per_part:
            raise Failure("record from unassigned partition %s" % part)
        n = self.per_part[part]
        where = "partition %d offset %d" % (part, m.offset())
        if m.offset() != n:
            raise Failure("%s: expected offset %d (offsets must be consecutive from 0)"
                          % (where, n))
        if self.expected is not None and n >= self.expected[part]:
            raise Failure("%s: more records than the %d produced to this partition"
                          % (where, self.expected[part]))
        i = part + n * self.partitions
        key = m.key().decode() if m.key() is not None else None
        value = m.value().decode() if m.value() is not None else None
        if key != key_of(i):
            raise Failure("%s: key %r, expected %r" % (where, key, key_of(i)))
        if value != value_of(i):
            raise Failure("%s: value %r, expected %r" % (where, value, value_of(i)))
        headers = [(k, v.decode() if v is not None else None)
                   for k, v in (m.headers() or [])]
        if len(headers) != 2 or headers[0] != ("idx", str(i)) or headers[1][0] != "codec":
            raise Failure("%s: headers %r, expected [('idx', '%d'), ('codec', C)]"
                          % (where, headers, i))
        codec = headers[1][1]
        if codec not in CODECS or (self.codec_seen is not None and codec != self.codec_seen):
            raise Failure("%s: codec header %r (earlier records had %r)"
                          % (where, codec, self.codec_seen))
        self.codec_seen = codec
        self.per_part[part] = n + 1
        self.total += 1


def consumer_conf(bootstrap):
    conf = base_conf(bootstrap)
    conf.update({
        # librdkafka wants a group.id even for a manually assigned consumer; we never
        # subscribe or commit, so no group request reaches the broker.
        "group.id": "mskmock-it-python-unused",
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "auto.offset.reset": "earliest",
        "enable.partition.eof": False,
    })
    return conf


def cmd_consume(a):
    c = Consumer(consumer_conf(a.bootstrap))
    c.assign([TopicPartition(a.topic, part, OFFSET_BEGINNING) for part in range(a.partitions)])
    expected = {part: len(range(part, a.count, a.partitions)) for part in range(a.partitions)}
    chk = Checker(a.partitions, expected)
    deadline = time.monotonic() + CONSUME_TIMEOUT_S
    try:
        while chk.total < a.count:
            if time.monotonic() > deadline:
                raise Failure("timed out after %.0f s with %d of %d records; per partition %s"
                              % (CONSUME_TIMEOUT_S, chk.total, a.count, chk.per_part))
            msgs = c.consume(num_messages=1000, timeout=1.0)
            for m in msgs:
                err = m.error()
                if err is not None:
                    if err.code() == KafkaError._PARTITION_EOF:
                        continue
                    if err.fatal() or not err.retriable():
                        raise Failure("consume error on partition %s: %s" % (m.partition(), err))
                    log("retriable consume error: %s" % err)
                    continue
                chk.add(m)
    finally:
        c.close()
    return {"consumed": chk.total, "per_partition": {str(k): v for k, v in chk.per_part.items()}}


# -- produce-consume --duration ------------------------------------------------------------

def cmd_produce_consume(a):
    errors = []

    def note(msg):
        log(msg)
        if len(errors) < 100:
            errors.append(msg)

    def on_error(err):
        note("librdkafka error: %s" % err)

    disconnects = {}  # client name -> broker disconnects in the latest statistics

    def stats_cb_for(name):
        def on_stats(js):
            try:
                st = json.loads(js)
                disconnects[name] = sum(b.get("disconnects", 0)
                                        for b in st.get("brokers", {}).values())
            except (ValueError, AttributeError) as e:
                note("unreadable statistics: %r" % e)
        return on_stats

    pconf = base_conf(a.bootstrap)
    pconf.update({"acks": "all", "enable.idempotence": False, "linger.ms": 0,
                  "message.timeout.ms": 30000, "error_cb": on_error,
                  "statistics.interval.ms": 1000, "stats_cb": stats_cb_for("producer")})
    cconf = consumer_conf(a.bootstrap)
    cconf.update({"fetch.wait.max.ms": 100, "error_cb": on_error,
                  "statistics.interval.ms": 1000, "stats_cb": stats_cb_for("consumer")})
    p = Producer(pconf)
    c = Consumer(cconf)
    c.assign([TopicPartition(a.topic, part, OFFSET_BEGINNING) for part in range(a.partitions)])
    chk = Checker(a.partitions)
    acked = 0
    produced = 0

    def on_delivery(err, msg):
        nonlocal acked
        if err is not None:
            note("delivery of key=%r to partition %s failed: %s" % (msg.key(), msg.partition(), err))
        else:
            acked += 1

    def consume_some(timeout):
        for m in c.consume(num_messages=500, timeout=timeout):
            err = m.error()
            if err is not None:
                if err.code() != KafkaError._PARTITION_EOF:
                    note("consume error on partition %s: %s" % (m.partition(), err))
                continue
            try:
                chk.add(m)
            except Failure as e:
                note(str(e))

    interval = a.interval_ms / 1000.0
    start = time.monotonic()
    end = start + a.duration
    next_at = start
    try:
        while time.monotonic() < end:
            now = time.monotonic()
            if now >= next_at:
                i = produced
                p.produce(a.topic, key=key_of(i).encode(), value=value_of(i).encode(),
                          partition=i % a.partitions,
                          headers=[("idx", str(i).encode()), ("codec", b"none")],
                          on_delivery=on_delivery)
                produced += 1
                next_at += interval
            p.poll(0)
            consume_some(max(0.0, min(interval / 2, next_at - time.monotonic())))
        # Drain: every record acknowledged and consumed.
        deadline = time.monotonic() + 30
        while len(p) > 0 and time.monotonic() < deadline:
            p.flush(0.5)
        if len(p) > 0:
            note("%d records unacknowledged 30 s after the run" % len(p))
        deadline = time.monotonic() + 30
        while chk.total < acked and time.monotonic() < deadline:
            consume_some(0.2)
            p.poll(0)
        if chk.total < acked:
            note("consumed %d of %d acknowledged records 30 s after the run; per partition %s"
                 % (chk.total, acked, chk.per_part))
        p.poll(1.2)  # one more statistics round
        consume_some(0)
    finally:
        c.close()
    result = {"produced": produced, "acked": acked, "consumed": chk.total,
              "tokens": SECURITY.tokens if SECURITY else 0,
              "disconnects": sum(disconnects.values()), "errors": errors}
    if acked != produced:
        errors.append("acked %d of %d produced records" % (acked, produced))
    print(json.dumps(result), flush=True)
    if errors:
        raise Failure("%d errors, first: %s" % (len(errors), errors[0]))
    return None


# -- group-consume ----------------------------------------------------------------------

ASSIGNORS = ("range", "roundrobin", "cooperative-sticky", "uniform")
_emit_lock = threading.Lock()


def emit(event):
    with _emit_lock:
        sys.stdout.write(json.dumps(event, separators=(",", ":")) + "\n")
        sys.stdout.flush()


def cmd_group_consume(a):
    """One member of a consumer group (classic protocol); prints one JSON event per line:

      {"event":"assigned","partitions":[...]}     after every rebalance callback that completes an
            assignment (also when the set is unchanged, so every rebalance is visible), and for
            cooperative-sticky also after an incremental revoke; always the full current set
      {"event":"record","p":P,"o":OFFSET,"k":"key"}   every record handed to the program
      {"event":"committed","offsets":{"P":next_offset,...}}   after each successful commit
      {"event":"error","message":"..."}           any error librdkafka reports
      {"event":"closed"}                          after a clean close

    Offsets of processed records are committed after each consume batch (sync, async or none)
    and synchronously for partitions being revoked. Runs until --max-records records were
    processed, stdin reaches EOF, or SIGTERM; then commits, closes (a dynamic member leaves the
    group, a static one does not) and returns 0.
    """
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda signum, frame: stop.set())

    def watch_stdin():
        # os.read on the raw descriptor: a daemon thread blocked in sys.stdin's buffered reader
        # would abort the interpreter at exit ("could not acquire lock ... at shutdown").
        try:
            while os.read(0, 256):
                pass
        except (OSError, ValueError):
            pass
        stop.set()

    threading.Thread(target=watch_stdin, name="stdin-watch", daemon=True).start()

    kip848 = a.group_protocol == "consumer"
    # KIP-848 reconciles incrementally: the callbacks see what is added and revoked
    cooperative = kip848 or a.assignor == "cooperative-sticky"
    owned = set()
    pending = {}    # partition -> next offset of processed records, not committed yet
    processed = {}  # partition -> next offset of every processed record

    def on_error(err):
        emit({"event": "error", "message": "librdkafka: %s" % err})

    def report_commit(results):
        ok = {}
        for tp in results or []:
            if tp.error is not None:
                emit({"event": "error", "message": "commit %s[%d]: %s"
                      % (tp.topic, tp.partition, tp.error)})
            else:
                ok[tp.partition] = tp.offset
        if ok:
            emit({"event": "committed",
                  "offsets": {str(part): off for part, off in sorted(ok.items())}})
        return ok

    def on_commit(err, partitions):  # async commits only (librdkafka serves it in consume)
        if err is not None:
            emit({"event": "error", "message": "commit: %s" % err})
            return
        report_commit(partitions)

    conf = {
        "bootstrap.servers": a.bootstrap,
        "client.id": "mskmock-it-python",
        "group.id": a.group,
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "auto.offset.reset": "earliest",
        "enable.partition.eof": False,
        "fetch.wait.max.ms": 200,
        # Also the JoinGroup rebalance timeout: bounds how long a rebalance waits for a member.
        "max.poll.interval.ms": 60000,
        "error_cb": on_error,
    }
    if kip848:
        # the broker assigns (group.remote.assignor); session and heartbeat come from the broker
        conf["group.protocol"] = "consumer"
        conf["group.remote.assignor"] = a.assignor
    else:
        conf["partition.assignment.strategy"] = a.assignor
    if SECURITY is not None:
        conf.update(SECURITY.conf())
    if a.commit == "async":
        conf["on_commit"] = on_commit
    if a.instance_id:
        conf["group.instance.id"] = a.instance_id
    if a.session_timeout_ms and not kip848:
        conf["session.timeout.ms"] = a.session_timeout_ms
        # Frequent heartbeats: members learn of a rebalance within about a second.
        conf["heartbeat.interval.ms"] = max(100, min(1000, a.session_timeout_ms // 6))
    c = Consumer(conf)

    def commit(parts, asynchronous=False):
        """Commits pending offsets of `parts`; a failed sync commit keeps them for a retry."""
        if a.commit == "none":
            return
        batch = {part: pending[part] for part in parts if part in pending}
        if not batch:
            return
        offsets = [TopicPartition(a.topic, part, off) for part, off in sorted(batch.items())]
        if asynchronous:
            for part in batch:
                del pending[part]
            c.commit(offsets=offsets, asynchronous=True)
            return
        try:
            ok = report_commit(c.commit(offsets=offsets, asynchronous=False))
        except KafkaException as e:
            emit({"event": "error", "message": "commit: %s" % e.args[0]})
            return
        for part, off in ok.items():
            if pending.get(part) == off:
                del pending[part]

    def assigned():
        emit({"event": "assigned", "partitions": sorted(owned)})

    def on_assign(consumer, partitions):
        if not cooperative:
            owned.clear()
        owned.update(tp.partition for tp in partitions if tp.topic == a.topic)
        assigned()  # confluent-kafka (incremental_)assigns these after the callback returns

    def on_revoke(consumer, partitions):
        parts = {tp.partition for tp in partitions if tp.topic == a.topic}
        commit(parts)  # before another member gets them
        for part in parts:
            pending.pop(part, None)
        owned.difference_update(parts)
        if cooperative and parts:
            assigned()

    def on_lost(consumer, partitions):
        parts = {tp.partition for tp in partitions if tp.topic == a.topic}
        for part in parts:
            pending.pop(part, None)
        owned.difference_update(parts)
        emit({"event": "error", "message": "partitions lost: %s" % sorted(parts)})
        assigned()

    c.subscribe([a.topic], on_assign=on_assign, on_revoke=on_revoke, on_lost=on_lost)
    consumed = 0
    try:
        while not stop.is_set() and (a.max_records is None or consumed < a.max_records):
            for m in c.consume(num_messages=500, timeout=0.2):
                err = m.error()
                if err is not None:
                    emit({"event": "error", "message": "consume: %s" % err})
                    if err.fatal():
                        raise Failure("fatal consumer error: %s" % err)
                    continue
                if a.max_records is not None and consumed >= a.max_records:
                    break  # the rest of the batch is neither processed nor committed
                key = m.key()
                emit({"event": "record", "p": m.partition(), "o": m.offset(),
                      "k": key.decode() if key is not None else None})
                consumed += 1
                pending[m.partition()] = m.offset() + 1
                processed[m.partition()] = m.offset() + 1
            commit(list(pending), asynchronous=a.commit == "async")
        if a.commit == "async":
            # In-flight async commits may still fail: commit everything owned once more.
            pending.update({part: off for part, off in processed.items() if part in owned})
        commit(list(pending))
    finally:
        c.close()
    emit({"event": "closed"})
    return None


def add_security_options(sp):
    sp.add_argument("--security-protocol", choices=SECURITY_PROTOCOLS, default="PLAINTEXT")
    sp.add_argument("--ca")
    sp.add_argument("--mechanism", choices=MECHANISMS)
    sp.add_argument("--region")


def main(argv):
    global SECURITY
    ap = argparse.ArgumentParser(prog="client.py")
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("create-topic", "produce", "consume", "produce-consume"):
        sp = sub.add_parser(name)
        add_security_options(sp)
        sp.add_argument("--bootstrap", required=True)
        sp.add_argument("--topic", required=True)
        sp.add_argument("--partitions", type=int, required=True)
        if name == "create-topic":
            sp.add_argument("--timeout", type=float, default=60.0)
        elif name == "produce-consume":
            sp.add_argument("--duration", type=float, required=True)
            sp.add_argument("--interval-ms", type=float, default=50.0)
        else:
            sp.add_argument("--count", type=int, required=True)
        if name == "produce":
            sp.add_argument("--compression", choices=CODECS, required=True)
            sp.add_argument("--idempotent", action="store_true")
            sp.add_argument("--start", type=int, default=0)
    sp = sub.add_parser("group-consume")
    add_security_options(sp)
    sp.add_argument("--bootstrap", required=True)
    sp.add_argument("--group", required=True)
    sp.add_argument("--topic", required=True)
    sp.add_argument("--assignor", choices=ASSIGNORS, default="range")
    sp.add_argument("--group-protocol", choices=("classic", "consumer"), default="classic")
    sp.add_argument("--instance-id")
    sp.add_argument("--session-timeout-ms", type=int)
    sp.add_argument("--max-records", type=int)
    sp.add_argument("--commit", choices=("sync", "async", "none"), default="sync")
    # txn.py does `import client`: let that be this module, not a second copy of it.
    sys.modules.setdefault("client", sys.modules[__name__])
    import txn
    txn.add_parsers(sub, add_security_options)
    a = ap.parse_args(argv)
    handler = {"create-topic": cmd_create_topic, "produce": cmd_produce,
               "consume": cmd_consume, "group-consume": cmd_group_consume,
               "produce-consume": cmd_produce_consume, **txn.COMMANDS}[a.cmd]
    try:
        SECURITY = Security(a)
        result = handler(a)
    except Failure as e:
        print("client.py %s: %s" % (a.cmd, e), file=sys.stderr)
        return 1
    if result is not None:
        print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
