"""docker/compose-iam.yaml as a user runs it: the app container waits for the broker to be healthy,
reaches it by service name over TLS, authenticates over IAM with credentials from the ECS-style
container-credentials endpoint (rotating role credentials, an IAM policy that allows it), and
round-trips records; a program on the host uses the external listener at the same time."""

import json
import os
import subprocess
import urllib.request
import uuid

import pytest

from docker_env import ROOT, consume, create_topic, produce, wait_healthy

COMPOSE = os.environ.get("DOCKER_COMPOSE", "docker-compose")
FILE = os.path.join(ROOT, "docker", "compose-iam.yaml")


def compose(project, *args, timeout=600, check=True, file=FILE):
    r = subprocess.run([COMPOSE, "-f", file, "-p", project, *args], capture_output=True, text=True,
                       timeout=timeout, cwd=ROOT)
    if check and r.returncode != 0:
        raise AssertionError("docker-compose %s failed (%d):\n%s\n%s" % (" ".join(args), r.returncode,
                                                                       r.stdout[-4000:], r.stderr[-4000:]))
    return r


@pytest.fixture(scope="module")
def stack():
    project = "msk" + uuid.uuid4().hex[:6]
    try:
        compose(project, "build")
        yield project
    finally:
        compose(project, "down", "-v", "--remove-orphans", timeout=120, check=False)


def test_app_authenticates_over_iam_by_service_name(stack):
    r = compose(stack, "up", "--exit-code-from", "app", timeout=300, check=False)
    out = r.stdout + r.stderr
    result = [ln.split("|", 1)[-1].strip() for ln in out.splitlines() if '"ok"' in ln]
    assert r.returncode == 0, out[-6000:]
    assert result and json.loads(result[-1][result[-1].index("{"):])["ok"] is True, out[-3000:]
    # the broker log, as shown by compose: the role's session principal, via the service name
    assert "authenticated as IAM.arn:aws:sts::123456789012:assumed-role/app/ecs-task via OAUTHBEARER" in out
    assert "sni=msk" in out
    assert "cred: peer=169.254.170." in out and " 200 role=app " in out


def test_host_uses_the_external_listener(stack):
    compose(stack, "up", "-d", "msk", timeout=120)
    wait_healthy(stack + "_msk_1")
    create_topic("localhost:19092", "from-host")
    produce("localhost:19092", "from-host", ["h1", "h2"])
    assert sorted(consume("localhost:19092", "from-host", 2)) == ["h1", "h2"]


def test_standalone_compose_file(stack):
    """docker/compose.yaml: the broker alone, healthy, reachable from the host on 19092, its admin
    API on 19080."""
    compose(stack, "down", "-v", timeout=120)  # the IAM stack holds the same host ports
    solo = "mskmock-solo" + uuid.uuid4().hex[:4]
    file = os.path.join(ROOT, "docker", "compose.yaml")
    try:
        compose(solo, "up", "-d", file=file, timeout=300)
        wait_healthy(solo + "_msk_1")
        create_topic("localhost:19092", "solo")
        produce("localhost:19092", "solo", ["s"])
        assert consume("localhost:19092", "solo", 1) == ["s"]
        # the admin API is published too (issue 31: it was not), and makes topics without a client
        req = urllib.request.Request("http://127.0.0.1:19080/v1/topics", method="POST",
                                     data=json.dumps({"name": "from-admin", "partitions": 2}).encode())
        with urllib.request.urlopen(req, timeout=10) as r:
            assert json.loads(r.read())["name"] == "from-admin"
        produce("localhost:19092", "from-admin", ["a"])
    finally:
        compose(solo, "down", "-v", "--remove-orphans", file=file, timeout=120, check=False)
