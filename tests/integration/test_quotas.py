"""MSK Serverless's throughput quotas with small values and real clients: a librdkafka producer and
consumer paced to the per-partition quota with their throttle callbacks fired, and a raw client
that ignores throttle_time_ms muted anyway. The semantics are Kafka's (KIP-219), as
conf/mskmock.properties says."""

import json
import os
import re
import struct
import subprocess
import time

import pytest

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

import kafka_wire as kw
from harness import CLIENTS, Broker, broker_binary, running

MIB = 1 << 20


def start(config):
    # one synthetic broker: the raw client below talks to the partition's leader
    return Broker(broker_count=1, config=dict(config, **{"group.initial.rebalance.delay.ms": 0,
                                                          "default.replication.factor": 1}))


def create(bootstrap, topic, partitions=1):
    a = AdminClient({"bootstrap.servers": bootstrap})
    a.create_topics([NewTopic(topic, num_partitions=partitions)])[topic].result(20)


def test_producer_paced_to_partition_ingress_quota():
    """1 MiB/s into the partition: 6 MiB take ~5 s after the 1 s burst; librdkafka's throttle
    callback fires with the broker's throttle time."""
    b = start({"quota.partition.ingress.bytes.per.second": MIB})
    with running(b):
        create(b.bootstrap, "paced")
        throttles = []
        p = Producer({"bootstrap.servers": b.bootstrap, "linger.ms": 5, "throttle_cb": throttles.append,
                      "queue.buffering.max.kbytes": 16384})
        value = os.urandom(1024)
        total = 6 * MIB
        t0 = time.monotonic()
        for _ in range(total // len(value)):
            while True:
                try:
                    p.produce("paced", value)
                    break
                except BufferError:
                    p.poll(0.05)
            p.poll(0)
        assert p.flush(60) == 0
        took = time.monotonic() - t0
        rate = (total - MIB) / took / MIB  # what passed beyond the burst, per second
        print("produced %d MiB in %.2f s: %.2f MiB/s past the burst, %d throttle events" %
              (total // MIB, took, rate, len(throttles)))
        assert 0.8 <= rate <= 1.2, rate
        assert throttles and max(ev.throttle_time for ev in throttles) > 0
        # Regression (throttle_line_names_the_quota): the line said "quota.*.bytes.per.second",
        # not which of the four quotas, its value, or the partition
        assert b.wait_for_log(r"client=rdkafka: Produce throttled \d+ ms by a quota \(quota\.partition\.ingress\."
                              r"bytes\.per\.second=1048576 on paced-0\); the connection is muted that long")


def test_cluster_ingress_quota_throttles_and_is_named():
    """The cluster's ingress quota binds across partitions, each under its own: the throttle
    line names the cluster quota and its value, without a partition."""
    b = start({"quota.cluster.ingress.bytes.per.second": MIB // 2})
    with running(b):
        create(b.bootstrap, "wide", partitions=4)
        throttles = []
        p = Producer({"bootstrap.servers": b.bootstrap, "linger.ms": 5, "throttle_cb": throttles.append})
        for i in range(3 * 512):
            p.produce("wide", os.urandom(1024), partition=i % 4)
            p.poll(0)
        assert p.flush(60) == 0
        assert throttles and max(ev.throttle_time for ev in throttles) > 0
        assert b.wait_for_log(r"client=rdkafka: Produce throttled \d+ ms by a quota \(quota\.cluster\.ingress\."
                              r"bytes\.per\.second=524288\); the connection")


def test_refused_too_large_batch_counts_against_ingress_quota():
    """Regression (issue 31, bug 9e): Kafka's produce quota counts the bytes a client sent, a batch
    refused as too large (MESSAGE_TOO_LARGE, 10) included; mskmock charged stored batches only, so
    a client resending oversized batches was never throttled."""
    b = start({"quota.partition.ingress.bytes.per.second": 64 * 1024})
    with running(b):
        a = AdminClient({"bootstrap.servers": b.bootstrap})
        a.create_topics([NewTopic("too-large", num_partitions=1,
                                  config={"max.message.bytes": "1000"})])["too-large"].result(20)
        batch = kw.record_batch([(None, os.urandom(200 * 1024), ())])
        s = kw.connect(b.port)
        try:
            s.sendall(kw.produce_request(kw.PRODUCE_V, 1, "too-large-client", "too-large", 0, batch))
            _, body = kw.recv_frame(s)
        finally:
            s.close()
        assert kw.parse_produce(kw.PRODUCE_V, body)[0]["partitions"][0]["error"] == 10
        throttle_ms = struct.unpack(">i", body[-4:])[0]
        assert 1500 <= throttle_ms <= 3000, throttle_ms  # (200 KiB - the 64 KiB burst) at 64 KiB/s
        assert b.wait_for_log(r"client=too-large-client: Produce throttled \d+ ms by a quota "
                              r"\(quota\.partition\.ingress\.bytes\.per\.second=65536 on too-large-0\)")


def test_consumer_paced_to_partition_egress_quota_and_loses_nothing():
    """1 MiB/s out of the partition: a throttled Fetch comes back without records, so a consumer
    reads everything, just paced, and its throttle callback fires."""
    b = start({"quota.partition.egress.bytes.per.second": MIB})
    with running(b):
        create(b.bootstrap, "drained")
        p = Producer({"bootstrap.servers": b.bootstrap, "linger.ms": 5})
        n = 4 * 1024
        for i in range(n):
            p.produce("drained", os.urandom(1016) + struct.pack(">q", i))
            p.poll(0)
        assert p.flush(30) == 0
        throttles = []
        c = Consumer({"bootstrap.servers": b.bootstrap, "group.id": "drain", "auto.offset.reset": "earliest",
                      "throttle_cb": throttles.append, "enable.auto.commit": False})
        c.assign([TopicPartition("drained", 0, 0)])
        seen, t0 = set(), time.monotonic()
        while len(seen) < n and time.monotonic() - t0 < 60:
            m = c.poll(0.5)
            if m is not None and not m.error():
                seen.add(struct.unpack(">q", m.value()[-8:])[0])
        took = time.monotonic() - t0
        c.close()
        assert seen == set(range(n))
        rate = (n * 1024 - MIB) / took / MIB
        print("consumed 4 MiB in %.2f s: %.2f MiB/s past the burst, %d throttle events" % (took, rate, len(throttles)))
        assert rate <= 1.2, rate
        assert throttles
        assert b.wait_for_log(r"client=rdkafka: Fetch throttled \d+ ms by a quota \(quota\.partition\.egress\."
                              r"bytes\.per\.second=1048576 on drained-0\)")


def test_fetch_larger_than_egress_burst_is_served():
    """Regression (egress_quota_starves_large_fetch): a fetch response larger than one second of
    the egress quota was refused on every try (its bytes taken back each time), so a consumer with
    the default 1 MiB max.partition.fetch.bytes read nothing, forever, under a 64 KiB/s quota. It
    now goes out whole when nothing is owed, and the excess is paid as throttle time."""
    b = start({"quota.partition.egress.bytes.per.second": 64 * 1024})
    with running(b):
        create(b.bootstrap, "bulky")
        p = Producer({"bootstrap.servers": b.bootstrap, "linger.ms": 50})
        n = 300
        for i in range(n):
            p.produce("bulky", os.urandom(1016) + struct.pack(">q", i))
        assert p.flush(30) == 0
        throttles = []
        c = Consumer({"bootstrap.servers": b.bootstrap, "group.id": "bulky", "enable.auto.commit": False,
                      "throttle_cb": throttles.append})
        c.assign([TopicPartition("bulky", 0, 0)])
        seen, t0 = set(), time.monotonic()
        while len(seen) < n and time.monotonic() - t0 < 30:
            m = c.poll(0.5)
            if m is not None and not m.error():
                seen.add(struct.unpack(">q", m.value()[-8:])[0])
        c.close()
        assert seen == set(range(n)), "read %d of %d records in 30 s\n%s" % (len(seen), n, b.log_tail())
        # the excess over the burst was paid for: the response carried a throttle time
        assert throttles and max(ev.throttle_time for ev in throttles) > 1.0, [ev.throttle_time for ev in throttles]


def test_client_ignoring_throttle_time_is_muted():
    """Produce past the quota, then send the next request at once: the broker answers the first
    with throttle_time_ms and reads nothing more from the connection for that long."""
    b = start({"quota.partition.ingress.bytes.per.second": 64 * 1024})
    with running(b):
        create(b.bootstrap, "ignored")
        batch = kw.record_batch([(None, os.urandom(1000), ()) for _ in range(200)])  # ~200 KB
        with kw.connect(b.port, timeout=20) as s:
            s.sendall(kw.produce_request(kw.PRODUCE_V, 1, "rude", "ignored", 0, batch))
            _, body = kw.recv_frame(s)
            t1 = time.monotonic()
            (throttle,) = struct.unpack(">i", body[-4:])  # v1-v8: throttle_time_ms ends the response
            assert throttle > 1500, throttle  # (~200 KB - 64 KB burst) at 64 KB/s
            s.sendall(kw.produce_request(kw.PRODUCE_V, 2, "rude", "ignored", 0, kw.record_batch([(None, b"x", ())])))
            corr, body = kw.recv_frame(s)
            waited = (time.monotonic() - t1) * 1000
        assert corr == 2
        assert waited >= throttle * 0.9, (waited, throttle)


def test_serverless_profile_defaults_are_msks():
    """Without the harness's overrides the serverless profile has MSK's quotas and the kafka profile none."""
    out = subprocess.run([str(broker_binary()), "--man"], capture_output=True, text=True, check=True).stdout
    for key, value in (("quota.partition.ingress.bytes.per.second", "serverless 5242880"),
                       ("quota.cluster.egress.bytes.per.second", "serverless 419430400"),
                       ("max.request.rate", "serverless 15000")):
        section = out.split(".B " + key.replace("-", "\\-"), 1)[1].split(".TP", 1)[0]
        assert value in section and "kafka 0" in section, section


def test_java_producer_metrics_show_the_throttle():
    """1 MiB/s into the partition: the Java producer's own produce-throttle-time-avg/-max metrics
    report the broker's throttle, and 6 MiB take about 5 s past the burst."""
    jar = CLIENTS / "java" / "target" / "client.jar"
    if not jar.is_file():
        pytest.skip("java client is not built")
    b = start({"quota.partition.ingress.bytes.per.second": MIB})
    with running(b):
        create(b.bootstrap, "java-paced")
        p = subprocess.run(["java", "-cp", str(jar), "mskmock.client.ThrottledProduce", b.bootstrap, "java-paced",
                            str(6 * MIB)], capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr[-3000:]
        res = json.loads(p.stdout.strip().splitlines()[-1])
    print(res)
    rate = (res["bytes"] - MIB) / res["seconds"] / MIB
    assert 0.8 <= rate <= 1.2, res
    assert res["produce_throttle_time_avg"] > 0 and res["produce_throttle_time_max"] > 0, res


def test_request_rate_paces_librdkafka_and_fires_its_throttle_callback():
    """max.request.rate=50: 300 one-record produce requests, each flushed before the next, go at
    about 50 a second past the one-second burst, and librdkafka's throttle callback fires."""
    b = start({"max.request.rate": 50})
    with running(b):
        create(b.bootstrap, "rate")
        throttles = []
        p = Producer({"bootstrap.servers": b.bootstrap, "linger.ms": 0, "throttle_cb": throttles.append})
        p.produce("rate", b"warm-up")
        assert p.flush(30) == 0
        time.sleep(1.2)  # the burst refills
        n = 300
        t0 = time.monotonic()
        for _ in range(n):
            p.produce("rate", b"x")
            assert p.flush(30) == 0
        took = time.monotonic() - t0
        rate = (n - 50) / took
        print("%d produce requests in %.2f s: %.1f a second past the burst, %d throttle events"
              % (n, took, rate, len(throttles)))
        assert 40 <= rate <= 60, rate
        assert throttles and max(ev.throttle_time for ev in throttles) > 0
        assert b.wait_for_log(r"Produce throttled \d+ ms by a quota \(max.request.rate=50\)")


def test_request_rate_mutes_a_client_that_ignores_it():
    """max.request.rate=40 and 120 Metadata requests written at once: the first 40 are the burst,
    later answers carry throttle_time_ms, and the rest are read no faster than the rate, though
    the client never waits."""
    b = start({"max.request.rate": 40})
    with running(b):
        frame = lambda corr: kw.metadata_request(kw.METADATA_V, corr, "rude", [])
        with kw.connect(b.port, timeout=20) as s:
            t0 = time.monotonic()
            s.sendall(b"".join(frame(i) for i in range(120)))
            throttles = []
            for i in range(120):
                corr, body = kw.recv_frame(s)
                assert corr == i
                throttles.append(struct.unpack(">i", body[:4])[0])  # v6: throttle_time_ms comes first
            took = time.monotonic() - t0
        assert throttles[0] == 0 and max(throttles) > 0, throttles
        assert took >= (120 - 40) / 40 * 0.9, took


def create_topics_v6(corr, name, partitions):
    """CreateTopics v6 (flexible; the first version that can carry THROTTLING_QUOTA_EXCEEDED)."""
    topic = (kw.compact_string(name) + kw.i32(partitions) + kw.i16(1)
             + kw.uvarint(1) + kw.uvarint(1) + kw.uvarint(0))  # no assignments, no configs, no tags
    body = kw.uvarint(2) + topic + kw.i32(10000) + kw.i8(0) + kw.uvarint(0)
    payload = kw.i16(19) + kw.i16(6) + kw.i32(corr) + kw.string("mutations") + kw.uvarint(0) + body
    return kw.i32(len(payload)) + payload


def parse_create_topics_v6(body):
    """(throttle_time_ms, error_code of the first topic): the body after the correlation id."""
    r = kw.Reader(body)
    r.i8()  # response header v1's tagged fields (none)
    throttle = r.i32()
    r.i8()  # topics: compact array length
    n = r.i8() - 1  # compact string length (short names)
    r.take(n)
    return throttle, r.i16()


def test_partition_mutation_quota():
    """600 partitions per 5 minutes (2 a second): a request is taken while the quota is not used up
    (this one goes 2 past it), then v6 gets THROTTLING_QUOTA_EXCEEDED with the wait, and an older
    client (librdkafka's AdminClient) is served and muted instead."""
    b = start({"max.partition.mutations.per.5.minutes": 600})
    with running(b):
        with kw.connect(b.port) as s:
            s.sendall(create_topics_v6(1, "m1", 602))
            throttle, code = parse_create_topics_v6(kw.recv_frame(s)[1])
            assert code == 0 and 900 <= throttle <= 1100, (code, throttle)  # 2 over, refilled at 2/s
            s.sendall(create_topics_v6(2, "m2", 1))
            throttle, code = parse_create_topics_v6(kw.recv_frame(s)[1])
            assert code == 89 and throttle > 0, (code, throttle)
        assert re.search(r"THROTTLING_QUOTA_EXCEEDED\(89\): topic 'm2': 1 partition\(s\) created or deleted would go "
                         r"past max\.partition\.mutations\.per\.5\.minutes=600", b.log_text())
        time.sleep(1.2)  # the quota has room again
        a = AdminClient({"bootstrap.servers": b.bootstrap})
        t0 = time.monotonic()
        a.create_topics([NewTopic("m3", num_partitions=4)])["m3"].result(20)  # takes it 3 over: 1.5 s
        a.create_topics([NewTopic("m4", num_partitions=1)])["m4"].result(20)  # waits out the mute
        assert time.monotonic() - t0 >= 1.2
