"""An app as it would run on ECS against MSK Serverless: confluent-kafka with the official MSK IAM
signer, credentials from the container-credentials endpoint (AWS_CONTAINER_CREDENTIALS_FULL_URI),
TLS to port 9098. Here the broker is the compose service `msk` and the endpoint is mskmock's.

It creates a topic, produces COUNT records, reads them back as a consumer group and prints one
JSON line with what happened; exit 0 only if every record came back."""

import json
import os
import sys
import time
import uuid

from aws_msk_iam_sasl_signer import MSKAuthTokenProvider
from confluent_kafka import Consumer, KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic

REGION = os.environ.get("AWS_REGION", "us-east-1")
TOPIC = os.environ.get("TOPIC", "orders")
COUNT = int(os.environ.get("COUNT", "20"))


def oauth_cb(_config):
    # signs with whatever botocore's default chain finds: here the container-credentials endpoint
    token, expiry_ms = MSKAuthTokenProvider.generate_auth_token(REGION)
    return token, expiry_ms / 1000


def conf(**extra):
    c = {
        "bootstrap.servers": os.environ.get("BOOTSTRAP", "msk:9098"),
        "security.protocol": "SASL_SSL",
        "sasl.mechanisms": "OAUTHBEARER",
        "oauth_cb": oauth_cb,
        "ssl.ca.location": os.environ.get("CA_FILE", "/msk/tls/ca.pem"),
    }
    c.update(extra)
    return c


def main():
    t0 = time.monotonic()
    admin = AdminClient(conf())
    fut = admin.create_topics([NewTopic(TOPIC, num_partitions=3)])[TOPIC]
    try:
        fut.result(30)
    except KafkaException as e:
        if e.args[0].name() != "TOPIC_ALREADY_EXISTS":
            raise

    run = uuid.uuid4().hex[:8]
    producer = Producer(conf(**{"enable.idempotence": True}))
    for i in range(COUNT):
        producer.produce(TOPIC, key=b"k%d" % i, value=("%s-%d" % (run, i)).encode())
    left = producer.flush(30)

    consumer = Consumer(conf(**{"group.id": "app-" + run, "auto.offset.reset": "earliest"}))
    consumer.subscribe([TOPIC])
    seen = set()
    deadline = time.monotonic() + 60
    while len(seen) < COUNT and time.monotonic() < deadline:
        m = consumer.poll(1.0)
        if m is None or m.error():
            continue
        v = m.value().decode()
        if v.startswith(run + "-"):
            seen.add(v)
    consumer.close()
    ok = left == 0 and len(seen) == COUNT
    print(json.dumps({"ok": ok, "produced": COUNT - left, "consumed": len(seen), "topic": TOPIC,
                      "seconds": round(time.monotonic() - t0, 2)}), flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
