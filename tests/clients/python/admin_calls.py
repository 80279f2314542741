"""The admin calls a provisioning script makes, one after the other, each reported on its own,
through confluent-kafka's AdminClient (the same contract as tests/clients/java AdminCalls):

    admin_calls.py BOOTSTRAP TOPIC
      -> {"describe_cluster": {"ok": true, "controller": ID|null, "nodes": N},
          "create_topics": {...}, "create_partitions": {...}, "describe_topics": {...},
          "delete_topics": {...}}        (a failed call: {"ok": false, "error": "..."})
"""
import json, sys
from confluent_kafka.admin import AdminClient, NewTopic, NewPartitions
bs, topic = sys.argv[1], sys.argv[2]
a = AdminClient({"bootstrap.servers": bs})
res = {}
def attempt(name, fn):
    out = {}
    try:
        fn(out); out["ok"] = True
    except Exception as e:
        out["ok"] = False; out["error"] = repr(e)
    res[name] = out
def dc(out):
    d = a.describe_cluster(request_timeout=15).result(20)
    out["controller"] = d.controller.id if d.controller else None
    out["nodes"] = len(d.nodes)
attempt("describe_cluster", dc)
attempt("create_topics", lambda o: a.create_topics([NewTopic(topic, 2)], request_timeout=15)[topic].result(20))
attempt("create_partitions", lambda o: a.create_partitions([NewPartitions(topic, 3)], request_timeout=15)[topic].result(20))
attempt("describe_topics", lambda o: o.__setitem__("partitions", len(a.list_topics(topic, timeout=15).topics[topic].partitions)))
attempt("delete_topics", lambda o: a.delete_topics([topic], request_timeout=15)[topic].result(20))
print(json.dumps(res))
