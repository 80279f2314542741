#!/usr/bin/env python3
"""mskmock integration-test client for Python (confluent-kafka, i.e. librdkafka).

Implements the CLI contract shared by every client ecosystem under tests/clients/:

  create-topic --bootstrap B --topic T --partitions P
  produce      --bootstrap B --topic T --count N --partitions P --compression C [--idempotent]
  consume      --bootstrap B --topic T --count N --partitions P

Record i (0-based) goes to partition i % P, key "key-<i>", value "value-<i>-" + "x" * (i % 50),
headers [("idx", "<i>"), ("codec", C)]. The last stdout line is one JSON object; any error
exits non-zero with a message on stderr.
"""

import argparse
import json
import sys
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
    # are failures. The rest is shown on stderr for whoever reads a failed test's output.
    log("librdkafka error: %s" % err)
    if err.fatal():
        raise Failure("fatal librdkafka error: %s" % err)


def base_conf(bootstrap):
    return {
        "bootstrap.servers": bootstrap,
        "client.id": "mskmock-it-python",
        "error_cb": error_cb,
    }


def cmd_create_topic(a):
    admin = AdminClient(base_conf(a.bootstrap))
    futures = admin.create_topics(
        [NewTopic(a.topic, num_partitions=a.partitions, replication_factor=-1)],
        operation_timeout=30,
        request_timeout=30,
    )
    try:
        futures[a.topic].result(timeout=60)
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

    for i in range(a.count):
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
    # On a fresh topic the broker must hand out offsets 0..n-1 in every partition.
    for part in range(a.partitions):
        want = len(range(part, a.count, a.partitions))
        got = sorted(offsets.get(part, []))
        if got != list(range(want)):
            raise Failure("partition %d: acked offsets are not 0..%d (first differing: %s)"
                          % (part, want - 1, _first_diff(got, list(range(want)))))
    return {"produced": acked}


def _first_diff(got, want):
    for k, (g, w) in enumerate(zip(got, want)):
        if g != w:
            return "index %d got %d want %d" % (k, g, w)
    return "got %d offsets, want %d" % (len(got), len(want))


def cmd_consume(a):
    conf = base_conf(a.bootstrap)
    conf.update({
        # librdkafka wants a group.id even for a manually assigned consumer; we never
        # subscribe or commit, so no group request reaches the broker.
        "group.id": "mskmock-it-python-unused",
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "auto.offset.reset": "earliest",
        "enable.partition.eof": False,
    })
    c = Consumer(conf)
    c.assign([TopicPartition(a.topic, part, OFFSET_BEGINNING) for part in range(a.partitions)])
    per_part = {part: 0 for part in range(a.partitions)}
    expected = {part: len(range(part, a.count, a.partitions)) for part in range(a.partitions)}
    codec_seen = None
    total = 0
    deadline = time.monotonic() + CONSUME_TIMEOUT_S
    try:
        while total < a.count:
            if time.monotonic() > deadline:
                raise Failure("timed out after %.0f s with %d of %d records; per partition %s"
                              % (CONSUME_TIMEOUT_S, total, a.count, per_part))
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
                part = m.partition()
                if part not in per_part:
                    raise Failure("record from unassigned partition %s" % part)
                n = per_part[part]
                where = "partition %d offset %d" % (part, m.offset())
                if m.offset() != n:
                    raise Failure("%s: expected offset %d (offsets must be consecutive from 0)"
                                  % (where, n))
                if n >= expected[part]:
                    raise Failure("%s: more records than the %d produced to this partition"
                                  % (where, expected[part]))
                i = part + n * a.partitions
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
                if codec not in CODECS or (codec_seen is not None and codec != codec_seen):
                    raise Failure("%s: codec header %r (earlier records had %r)"
                                  % (where, codec, codec_seen))
                codec_seen = codec
                per_part[part] = n + 1
                total += 1
    finally:
        c.close()
    return {"consumed": total, "per_partition": {str(k): v for k, v in per_part.items()}}


def main(argv):
    ap = argparse.ArgumentParser(prog="client.py")
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("create-topic", "produce", "consume"):
        sp = sub.add_parser(name)
        sp.add_argument("--bootstrap", required=True)
        sp.add_argument("--topic", required=True)
        sp.add_argument("--partitions", type=int, required=True)
        if name != "create-topic":
            sp.add_argument("--count", type=int, required=True)
        if name == "produce":
            sp.add_argument("--compression", choices=CODECS, required=True)
            sp.add_argument("--idempotent", action="store_true")
    a = ap.parse_args(argv)
    handler = {"create-topic": cmd_create_topic, "produce": cmd_produce,
               "consume": cmd_consume}[a.cmd]
    try:
        result = handler(a)
    except Failure as e:
        print("client.py %s: %s" % (a.cmd, e), file=sys.stderr)
        return 1
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
