#!/usr/bin/env python3
"""Container figures for docs/benchmarks.md: image size, `docker run` to the first Kafka answer
and to healthy, idle memory, idle CPU of the per-second health check, and `docker stop` time.

  bench/container.py [--image mskmock:test] [--runs 5] [--idle-seconds 20] [--health-interval 30s]

Needs a running dockerd (tools/container-env) and the image (tools/run-containers builds it).
Each run starts a fresh container with its plaintext ports published on 127.0.0.1, polls
ApiVersions from the host every 5 ms until the broker answers, then Docker's health status
every 20 ms until healthy. Prints one JSON object per run and a summary (median [min-max]).
"""

import argparse
import json
import socket
import statistics
import struct
import subprocess
import time
import uuid

DOCKER = "/usr/bin/docker"


def docker(*args):
    return subprocess.run([DOCKER, *args], capture_output=True, text=True, check=True, timeout=120).stdout.strip()


def api_versions_answers(port):
    req = struct.pack(">hhih", 18, 0, 1, 5) + b"bench"
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2) as s:
            s.sendall(struct.pack(">i", len(req)) + req)
            head = s.recv(10)
            return len(head) >= 10 and struct.unpack(">h", head[8:10])[0] == 0
    except OSError:
        return False


def free_base():
    for base in range(23100, 30000, 10):
        try:
            for p in range(base, base + 3):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", p))
            return base
        except OSError:
            continue
    raise RuntimeError("no free ports")


def cgroup_memory(cid):
    """The container's memory as its cgroup counts it (v1 or v2), minus the page cache."""
    for path in ("/sys/fs/cgroup/memory/docker/%s/memory.stat" % cid, "/sys/fs/cgroup/system.slice/docker-%s.scope/memory.stat" % cid):
        try:
            stat = dict(ln.split() for ln in open(path))
        except OSError:
            continue
        if "total_rss" in stat:
            return int(stat["total_rss"]) + int(stat.get("total_mapped_file", 0))
        return int(stat["anon"]) + int(stat.get("file_mapped", 0))
    return None


def cpu_ns(cid):
    for path in ("/sys/fs/cgroup/cpuacct/docker/%s/cpuacct.usage" % cid,):
        try:
            return int(open(path).read())
        except OSError:
            pass
    return None


def one_run(image, idle_s, measure_idle, health_interval=None):
    base = free_base()
    name = "mskbench-" + uuid.uuid4().hex[:8]
    t0 = time.monotonic()
    extra = ["--health-interval", health_interval] if health_interval else []
    subprocess.run([DOCKER, "run", "-d", "--name", name, *extra, "-p", "127.0.0.1:%d-%d:9092-9094" % (base, base + 2),
                    image], check=True, capture_output=True, timeout=60)
    t_run = time.monotonic() - t0
    while not api_versions_answers(base):
        time.sleep(0.005)
    t_answer = time.monotonic() - t0
    while docker("inspect", "-f", "{{.State.Health.Status}}", name) != "healthy":
        time.sleep(0.02)
    t_healthy = time.monotonic() - t0
    r = {"docker_run_s": round(t_run, 3), "first_answer_s": round(t_answer, 3), "healthy_s": round(t_healthy, 3)}
    cid = docker("inspect", "-f", "{{.Id}}", name)
    if measure_idle:
        time.sleep(2)
        c0, w0 = cpu_ns(cid), time.monotonic()
        time.sleep(idle_s)
        c1, w1 = cpu_ns(cid), time.monotonic()
        if c0 is not None:
            r["idle_cpu_pct"] = round(100.0 * (c1 - c0) / 1e9 / (w1 - w0), 3)
        mem = cgroup_memory(cid)
        if mem is not None:
            r["idle_mem_mib"] = round(mem / 1048576, 2)
        r["docker_stats_mem"] = docker("stats", "--no-stream", "--format", "{{.MemUsage}}", name)
        pid = docker("inspect", "-f", "{{.State.Pid}}", name)
        for ln in open("/proc/%s/status" % pid):
            if ln.startswith("VmRSS"):
                r["broker_rss_mib"] = round(int(ln.split()[1]) / 1024, 2)
    t0 = time.monotonic()
    docker("stop", "-t", "10", name)
    r["stop_s"] = round(time.monotonic() - t0, 3)
    r["exit_code"] = int(docker("inspect", "-f", "{{.State.ExitCode}}", name))
    docker("rm", "-v", name)
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--image", default="mskmock:test")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--idle-seconds", type=float, default=20)
    ap.add_argument("--health-interval", help="override the image's (1s), e.g. 30s: what idle costs without checks")
    a = ap.parse_args()
    size = int(docker("image", "inspect", "-f", "{{.Size}}", a.image))
    base = int(docker("image", "inspect", "-f", "{{.Size}}", "debian:bookworm-slim"))
    print(json.dumps({"image_mb": round(size / 1e6, 1), "above_base_mb": round((size - base) / 1e6, 1)}))
    runs = []
    for i in range(a.runs):
        r = one_run(a.image, a.idle_seconds, measure_idle=(i == 0), health_interval=a.health_interval)
        print(json.dumps(r), flush=True)
        runs.append(r)
    summary = {}
    for k in ("docker_run_s", "first_answer_s", "healthy_s", "stop_s"):
        v = sorted(r[k] for r in runs)
        summary[k] = "%.3f [%.3f-%.3f]" % (statistics.median(v), v[0], v[-1])
    print(json.dumps({"summary": summary}))


if __name__ == "__main__":
    main()
