"""A bystander producer for the tests that measure whether one client's work stalls the others:
a real producer (confluent-kafka) to its own topic, one record every 2 ms (linger.ms=0,
acks=all), recording each record's latency from produce() to its delivery report."""

import threading
import time

from confluent_kafka import Producer


class Bystander:
    def __init__(self, bootstrap, topic):
        self.topic = topic
        self.p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0, "acks": "all"})
        self.p.produce(topic, b"warm-up")
        assert self.p.flush(10) == 0
        self.lat, self.errors, self.stop = [], [], threading.Event()
        self.t = threading.Thread(target=self.run)

    def run(self):
        while not self.stop.is_set():
            t0 = time.perf_counter()

            def done(err, msg, t0=t0):
                (self.errors.append(err) if err else self.lat.append(time.perf_counter() - t0))

            self.p.produce(self.topic, b"v" * 100, on_delivery=done)
            self.p.poll(0)
            time.sleep(0.002)
        self.p.flush(10)

    def __enter__(self):
        self.t.start()
        time.sleep(0.3)
        return self

    def __exit__(self, *exc):
        time.sleep(0.3)
        self.stop.set()
        self.t.join(30)
