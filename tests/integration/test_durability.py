"""kill -9 at any moment loses no acknowledged record; a clean restart serves everything as before.

Two sync modes are covered, both on WAL: storage.sync=normal (the default) and storage.sync=off,
which syncs nothing (and once had a rollback journal instead).

A confluent-kafka producer (acks=all) writes while the broker is killed with SIGKILL at a
random moment. Every record whose delivery was acknowledged must be readable after the
restart, at the offset the acknowledgement named, with its content.
"""

import random
import threading
import time

import pytest

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

from harness import Broker  # noqa: E402

PARTITIONS = 3


def create_topic(bootstrap, name):
    admin = AdminClient({"bootstrap.servers": bootstrap})  # must outlive the future
    fs = admin.create_topics([NewTopic(name, PARTITIONS)])
    fs[name].result(timeout=30)


def read_all(bootstrap, topic, timeout=30):
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "durability-check",
                  "enable.auto.commit": False, "enable.partition.eof": True})
    c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(PARTITIONS)])
    seen, eof, deadline = {}, set(), time.time() + timeout
    try:
        while len(eof) < PARTITIONS and time.time() < deadline:
            m = c.poll(0.5)
            if m is None:
                continue
            if m.error():
                if m.error().code() == confluent_kafka.KafkaError._PARTITION_EOF:
                    eof.add(m.partition())
                    continue
                raise AssertionError("consume error: %s" % m.error())
            seen[(m.partition(), m.offset())] = (m.key(), m.value())
    finally:
        c.close()
    assert len(eof) == PARTITIONS, "did not reach the end of every partition"
    return seen


@pytest.mark.parametrize("sync", ["normal", "off"])
@pytest.mark.parametrize("run", range(3))
def test_kill9_loses_no_acknowledged_record(run, sync):
    b = Broker(config={"storage.sync": sync})
    b.start()
    try:
        topic = "durable-%d" % run
        create_topic(b.bootstrap, topic)
        acked, lock = {}, threading.Lock()

        def on_delivery(err, msg):
            if err is None:
                with lock:
                    acked[(msg.partition(), msg.offset())] = (msg.key(), msg.value())

        p = Producer({"bootstrap.servers": b.bootstrap, "acks": "all", "linger.ms": 2,
                      "message.timeout.ms": 3000, "enable.idempotence": True})
        # the kill lands at a random moment after the first acknowledgement, so the test
        # always has acknowledged records to check, whatever the build's speed
        killer = threading.Timer(random.uniform(0.05, 0.8), lambda: b.kill9(restart=False))
        deadline = time.time() + 30
        i, armed = 0, False
        while time.time() < deadline and not killer.finished.is_set():
            if not armed:
                with lock:
                    armed = bool(acked)
                if armed:
                    killer.start()
            key = b"k%d" % i
            try:
                p.produce(topic, key=key, value=b"v%d-" % i + b"x" * (i % 100), partition=i % PARTITIONS,
                          on_delivery=on_delivery)
            except BufferError:
                p.poll(0.01)
                continue
            i += 1
            if i % 100 == 0:
                p.poll(0)
        killer.join()
        # Serve the delivery reports of acknowledgements already received, then drop what can
        # no longer be acknowledged instead of waiting out message.timeout.ms: purged records
        # report an error and so do not count as acknowledged.
        p.poll(0.5)
        p.purge(in_queue=True, in_flight=True)
        p.flush(1)
        with lock:
            acknowledged = dict(acked)
        assert acknowledged, "nothing was acknowledged before the kill; the test proves nothing"

        b.start()
        stored = read_all(b.bootstrap, topic)
        missing = [k for k in acknowledged if k not in stored]
        assert not missing, "%d acknowledged records lost, e.g. %s" % (len(missing), missing[:5])
        wrong = [k for k, v in acknowledged.items() if stored[k] != v]
        assert not wrong, "acknowledged records changed: %s" % wrong[:5]
    finally:
        b.stop(check=False)
        b.cleanup()


@pytest.mark.parametrize("sync", ["normal", "off", "full"])
def test_restart_serves_topics_configs_and_offsets(sync):
    b = Broker(config={"storage.sync": sync})
    b.start()
    try:
        create_topic(b.bootstrap, "kept")
        p = Producer({"bootstrap.servers": b.bootstrap, "acks": "all"})
        for i in range(300):
            p.produce("kept", key=b"%d" % i, value=b"value-%d" % i, partition=i % PARTITIONS)
        assert p.flush(10) == 0
        before = read_all(b.bootstrap, "kept")
        assert len(before) == 300
        b.restart()
        after = read_all(b.bootstrap, "kept")
        assert after == before
        md = AdminClient({"bootstrap.servers": b.bootstrap}).list_topics(timeout=10)
        assert len(md.topics["kept"].partitions) == PARTITIONS
    finally:
        b.stop(check=True)
        b.cleanup()


def test_data_dir_mode_does_not_depend_on_start_up_order(tmp_path):
    """Regression (data_dir_mode_raced): storage and the IAM listener's TLS material start side
    by side, and both created a missing data directory, TLS with mode 0700 and storage with 0755.
    The directory is now made first, readable as before (0755 under the usual umask). Its tls/
    directory is readable too (test_ready_probe.py::test_ca_readable_by_other_users_keys_are_not:
    an app container of another user reads ca.pem); the keys in it are 0600."""
    import os
    import stat
    for i in range(5):
        data_dir = tmp_path / ("fresh-%d" % i) / "data"
        data_dir.parent.mkdir()
        b = Broker(config={"data.dir": str(data_dir)})  # the harness's own dir stays its cwd
        b.start()
        try:
            mode = stat.S_IMODE(os.stat(data_dir).st_mode)
            tls_mode = stat.S_IMODE(os.stat(data_dir / "tls").st_mode)
        finally:
            b.stop(check=True)
            b.cleanup()
        umask = os.umask(0)
        os.umask(umask)
        assert mode == 0o755 & ~umask, "start %d: data dir mode %o" % (i, mode)
        assert tls_mode == 0o755 & ~umask, "start %d: tls dir mode %o" % (i, tls_mode)
