"""Clusters created and deleted through the `kafka` control plane (issue 34) leave nothing behind
in the process: no thread, open descriptor, listening socket or data directory per deleted
cluster, and the heap they used goes back to the OS once the process is idle.
bench/clusters.py measures the same over rounds of 50 clusters (docs/benchmarks.md).

A broker per test (3 synthetic brokers, Serverless profile: the heap test needs one that never
held clusters), CREATING and DELETING over at once (aws.cluster.transition.ms=0); boto3 signs
with a key of the identities file.
"""

import os
import time

import pytest

import iam
from harness import running
from iam import REGION, AwsBroker

pytestmark = pytest.mark.timeout(300)

N = 20  # clusters a round


@pytest.fixture
def broker(tmp_path):
    ids = iam.write_identities(tmp_path / "identities.json")
    config = {"aws.cluster.transition.ms": 0, "aws.max.clusters": N}
    with running(AwsBroker(ids, broker_count=3, config=config)) as b:
        yield b


@pytest.fixture
def kafka(broker):
    boto3 = pytest.importorskip("boto3")
    return boto3.client("kafka", endpoint_url=broker.aws_url, region_name=REGION,
                        aws_access_key_id=iam.ALICE.access_key_id,
                        aws_secret_access_key=iam.ALICE.secret_access_key)


def create(kafka, name):
    return kafka.create_cluster_v2(ClusterName=name, Serverless={
        "VpcConfigs": [{"SubnetIds": ["subnet-1"]}],
        "ClientAuthentication": {"Sasl": {"Iam": {"Enabled": True}}}})["ClusterArn"]


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        return next(int(ln.split()[1]) for ln in f if ln.startswith("VmRSS:"))


def holdings(b):
    """What the process holds: threads, open descriptors, listening TCP sockets, and the entries of
    data.dir/clusters/."""
    pid = b.proc.pid
    fds = os.listdir("/proc/%d/fd" % pid)
    sockets = set()
    for fd in fds:
        try:
            target = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except OSError:
            continue
        if target.startswith("socket:["):
            sockets.add(target[8:-1])
    listening = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        if os.path.exists(table):
            for ln in open(table).read().splitlines()[1:]:
                f = ln.split()
                listening += f[3] == "0A" and f[9] in sockets
    clusters = b.data_dir / "clusters"
    return {"threads": len(os.listdir("/proc/%d/task" % pid)), "fds": len(fds), "listening": listening,
            "cluster_dirs": sorted(os.listdir(clusters)) if clusters.exists() else []}


def wait_for(pred, seconds):
    deadline = time.monotonic() + seconds
    while not pred() and time.monotonic() < deadline:
        time.sleep(0.1)
    return pred()


def test_deleted_clusters_leave_no_thread_descriptor_listener_or_directory(broker, kafka):
    before = holdings(broker)
    for rnd in range(2):
        arns = [create(kafka, "churn-%d-%d" % (rnd, i)) for i in range(N)]
        full = holdings(broker)
        # each cluster: its listeners (IAM and plaintext, 3 brokers each) and its storage's files
        assert full["listening"] == before["listening"] + 6 * N, full
        assert len(full["cluster_dirs"]) == N, full
        for arn in arns:
            kafka.delete_cluster(ClusterArn=arn)
        assert wait_for(lambda: holdings(broker) == before, 5), (before, holdings(broker), broker.log_tail())


def test_deleted_clusters_heap_was_never_given_back(broker, kafka):
    """Regression: the heap was trimmed only after a second without Kafka requests following some,
    so what deleted clusters freed (about a megabyte each) stayed in the process: 50 created and
    deleted took it from 12 to 73 MiB of RSS for good."""
    time.sleep(2.5)  # any trim owed from earlier done
    base = rss_kib(broker.proc.pid)
    arns = [create(kafka, "heap-%d" % i) for i in range(N)]
    peak = rss_kib(broker.proc.pid)
    assert peak - base > 8 * 1024, (base, peak)  # the clusters' heap, or this test measures nothing
    for arn in arns:
        kafka.delete_cluster(ClusterArn=arn)
    # the housekeeping tick trims after a second without requests
    assert wait_for(lambda: rss_kib(broker.proc.pid) - base < (peak - base) / 3, 6), \
        (base, peak, rss_kib(broker.proc.pid))
