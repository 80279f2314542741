"""Creates a topic, produces 10 records and reads them back in a consumer group: confluent-kafka
against mskmock (or MSK). Plaintext by default; IAM=1 for SASL_SSL with OAUTHBEARER tokens from
the official MSK IAM signer. Prints one JSON line; exits 1 on any failure, within 60 s."""

import json
import os
import signal
import sys
import uuid

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic

COUNT = 10
TIMEOUT_S = 60
IAM = os.environ.get("IAM") == "1"
BOOTSTRAP = os.environ.get("BOOTSTRAP", "localhost:9098" if IAM else "localhost:9092")
# The region tokens are signed for: mskmock's iam.region (us-east-1 unless set), or your cluster's.
REGION = os.environ.get("AWS_REGION", "us-east-1")
# mskmock's local CA, as written by a broker started from the repository's root. Empty for MSK,
# whose certificates chain to the system's CAs.
CA_FILE = os.environ.get("CA_FILE", "../../data/tls/ca.pem")


def oauth_cb(_config):
    from aws_msk_iam_sasl_signer import MSKAuthTokenProvider

    # Credentials come from botocore's default chain: environment, profile, container, instance.
    token, expiry_ms = MSKAuthTokenProvider.generate_auth_token(REGION)
    return token, expiry_ms / 1000


def on_error(err):
    # librdkafka retries everything on its own, even a refused login or an untrusted
    # certificate; an example should say so at once instead of waiting for its deadline.
    if err.fatal() or err.code() in (KafkaError._AUTHENTICATION, KafkaError._SSL):
        raise KafkaException(err)


def config(**extra):
    c = {"bootstrap.servers": BOOTSTRAP, "error_cb": on_error}
    if IAM:
        c.update({"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER", "oauth_cb": oauth_cb})
        if CA_FILE:
            c["ssl.ca.location"] = CA_FILE
    c.update(extra)
    return c


def main():
    topic = "example-python-" + uuid.uuid4().hex[:8]

    # MSK Serverless creates no topic on first use. The replication factor is left to the
    # broker: MSK Serverless allows only 3, its default.
    admin = AdminClient(config())
    created = admin.create_topics([NewTopic(topic, num_partitions=3)])[topic]
    while not created.done():
        admin.poll(0.1)  # serves error_cb, which fails a refused login at once
    created.result()

    failed = []
    producer = Producer(config())
    for i in range(COUNT):
        producer.produce(topic, key=b"key-%d" % i, value=b"value-%d" % i,
                         on_delivery=lambda err, _msg: err and failed.append(err))
    left = producer.flush(30)
    if failed or left:
        raise RuntimeError("%d records not delivered: %s" % (len(failed) + left, failed[:1]))

    consumed = set()
    consumer = Consumer(config(**{"group.id": topic, "auto.offset.reset": "earliest"}))
    consumer.subscribe([topic])
    try:
        while len(consumed) < COUNT:
            msg = consumer.poll(1.0)
            if msg is None:
                continue
            if msg.error():
                raise KafkaException(msg.error())
            consumed.add(msg.value())
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()

    print(json.dumps({"lang": "python", "topic": topic, "iam": IAM,
                      "produced": COUNT, "consumed": len(consumed)}))


def on_timeout(_signum, _frame):
    raise TimeoutError("not done within %d s (is the broker at %s?)" % (TIMEOUT_S, BOOTSTRAP))


if __name__ == "__main__":
    signal.signal(signal.SIGALRM, on_timeout)
    signal.alarm(TIMEOUT_S)
    try:
        main()
    except Exception as e:  # one line a person can read, not a traceback through librdkafka
        print("example failed: %s: %s" % (type(e).__name__, e), file=sys.stderr)
        sys.exit(1)
