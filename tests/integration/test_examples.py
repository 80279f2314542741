"""The example projects under examples/ (issue 31, item 6), built and run as a person would after
copying one: `mvn package` and `java -jar`, `go build`, `npm ci` and `node`, a venv from
requirements.txt and `python`. Each project is copied out of the repository first, so a file it
needs but does not hold fails here. One broker (the serverless profile, IAM listener, the
identity of examples/identities.json with its policy) serves every run; each example runs once
over plaintext and once over IAM, and must report 10 records produced and 10 consumed. The
broker's admin API confirms it: the example's topic has 3 partitions of 3 replicas and its group
committed offsets summing to 10; the broker's log shows the IAM runs authenticated as the
example's principal with the mechanism its README names. With CA_FILE= (the system's CAs, as for
MSK) each must fail at once with exit status 1 and the certificate error, not retry until its
60 s deadline. The examples pin the versions tests/clients run, which the docs' tables name.

The builds use the caches tools/install-deps --test filled (~/.m2, the Go module cache, npm's
cache, pip's); a missing toolchain skips locally and fails under CI.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request

import pytest

from harness import ROOT, running
from iam import Identity, IamBroker, aws_env

EXAMPLES = ROOT / "examples"
COUNT = 10
BUILD_TIMEOUT_S = 600  # a cold Maven repository or module cache downloads for minutes
RUN_TIMEOUT_S = 120  # each example gives up by itself after 60 s
LANGS = ["java", "go", "node", "python"]
MECHANISM = {"java": "AWS_MSK_IAM", "go": "AWS_MSK_IAM", "node": "OAUTHBEARER", "python": "OAUTHBEARER"}
TOOLS = {"java": ("mvn", "java"), "go": ("go",), "node": ("npm", "node"), "python": ()}

pytestmark = pytest.mark.timeout(1200)


def example_identity():
    entry = json.loads((EXAMPLES / "identities.json").read_text())["identities"][0]
    return Identity(entry["access_key_id"], entry["secret_access_key"], entry["principal"])


@pytest.fixture(scope="module")
def broker():
    # the identities file the examples' README starts the broker with, policy and all
    b = IamBroker(EXAMPLES / "identities.json", broker_count=3, sasl_plaintext=False,
                  credentials_endpoint=False)
    with running(b):
        yield b


def _step(argv, cwd, timeout, env=None, check=True):
    t0 = time.monotonic()
    try:
        p = subprocess.run(argv, cwd=str(cwd), env=env, stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else e.stderr or ""
        pytest.fail("%s timed out after %d s in %s\n%s" % (" ".join(argv), timeout, cwd, err[-4000:]))
    took = time.monotonic() - t0
    if check and p.returncode != 0:
        pytest.fail("%s exited %d after %.1f s in %s\n--- stdout ---\n%s\n--- stderr ---\n%s"
                    % (" ".join(argv), p.returncode, took, cwd, p.stdout[-4000:], p.stderr[-8000:]))
    return p, took


def build(lang, tmp):
    """Copies examples/<lang> (without anything a local build left in it), builds it with its
    README's commands and returns the command that runs it."""
    missing = [t for t in TOOLS[lang] if shutil.which(t) is None]
    if missing:
        if os.environ.get("CI"):
            pytest.fail("%s not on PATH (tools/install-deps --test)" % ", ".join(missing))
        pytest.skip("%s not on PATH" % ", ".join(missing))
    src = tmp / lang
    outputs = {"target", "node_modules", ".venv", "example"}  # at the project's top only
    shutil.copytree(EXAMPLES / lang, src,
                    ignore=lambda d, names: outputs & set(names) if d == str(EXAMPLES / lang) else ())
    t0 = time.monotonic()
    if lang == "java":
        _step(["mvn", "-B", "-q", "-Dstyle.color=never", "package"], src, BUILD_TIMEOUT_S)
        run = ["java", "-jar", "target/example.jar"]
    elif lang == "go":
        # readonly: go.mod and go.sum must be complete as committed; local: no toolchain download
        env = dict(os.environ, GOTOOLCHAIN="local", GOFLAGS="-mod=readonly")
        _step(["go", "build", "-o", "example", "."], src, BUILD_TIMEOUT_S, env)
        run = ["./example"]
    elif lang == "node":
        _step(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], src, BUILD_TIMEOUT_S)
        run = ["node", "index.js"]
    else:
        _step([sys.executable, "-m", "venv", ".venv"], src, 120)
        _step([".venv/bin/pip", "install", "-q", "--disable-pip-version-check", "-r",
               "requirements.txt"], src, BUILD_TIMEOUT_S)
        run = [".venv/bin/python", "main.py"]
    print("%s: built in %.1f s" % (lang, time.monotonic() - t0))
    return src, run


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """lang -> (directory, argv): each project built once for the module, on first use."""
    tmp = tmp_path_factory.mktemp("examples")
    cache = {}

    def get(lang):
        if lang not in cache:
            cache[lang] = build(lang, tmp)
        return cache[lang]
    return get


def admin_get(broker, path):
    with urllib.request.urlopen(broker.admin_url + path, timeout=10) as r:
        return json.loads(r.read())


@pytest.mark.parametrize("mode", ["plaintext", "iam"])
@pytest.mark.parametrize("lang", LANGS)
def test_example(broker, built, lang, mode):
    src, run = built(lang)
    identity = example_identity()
    if mode == "iam":
        env = aws_env(identity)  # the keys from the environment, as the README exports them
        env.update(IAM="1", BOOTSTRAP=broker.iam_bootstrap, CA_FILE=str(broker.ca_path))
    else:
        env = aws_env(None)  # no credentials at all: plaintext needs none
        env.update(BOOTSTRAP=broker.bootstrap)
        env.pop("IAM", None)
    log_from = broker.log_size()
    p, took = _step(run, src, RUN_TIMEOUT_S, env)
    print("%s %s: ran in %.1f s: %s" % (lang, mode, took, p.stdout.strip()))

    lines = p.stdout.strip().splitlines()
    summary = json.loads(lines[-1]) if lines else None
    assert summary is not None and summary.get("lang") == lang, p.stdout
    assert (summary["produced"], summary["consumed"], summary["iam"]) == (COUNT, COUNT, mode == "iam")
    topic = summary["topic"]
    assert re.fullmatch(r"example-%s-[0-9a-f]{8}" % lang, topic)

    # What the broker holds, independently of what the example says it did.
    partitions = admin_get(broker, "/v1/topics/" + topic)["partitions"]
    assert [len(pt["replicas"]) for pt in partitions] == [3, 3, 3]
    assert sum(pt["high_watermark"] for pt in partitions) == COUNT
    group = admin_get(broker, "/v1/groups/" + topic)  # each example names its group after its topic
    assert sum(o["committed_offset"] for o in group["offsets"] if o["topic"] == topic) == COUNT

    if mode == "iam":
        who = "IAM.%s via %s" % (identity.principal, MECHANISM[lang])
        assert broker.wait_for_log(re.escape("authenticated as " + who), since=log_from,
                                   timeout=1), broker.log_since(log_from)[-3000:]


@pytest.mark.parametrize("lang", LANGS)
def test_example_fails_fast_without_the_ca(broker, built, lang):
    """CA_FILE= (empty) trusts the system's CAs, as against MSK. mskmock's CA is not among them,
    so the example must stop with exit status 1 and the reason, not retry until its deadline."""
    src, run = built(lang)
    env = aws_env(example_identity())
    env.update(IAM="1", BOOTSTRAP=broker.iam_bootstrap, CA_FILE="")
    p, took = _step(run, src, RUN_TIMEOUT_S, env, check=False)
    print("%s without the CA: exit %d after %.1f s: %s" % (lang, p.returncode, took, p.stderr.strip()[-300:]))
    assert p.returncode == 1, p.stdout + p.stderr
    failed = [ln for ln in p.stderr.splitlines() if ln.startswith("example failed:")]
    assert failed and re.search(r"certificate|PKIX|SSL", failed[-1]), p.stderr[-3000:]
    assert took < 40  # the example's own deadline is 60 s


def _versions(text, pattern):
    return dict(re.findall(pattern, text))


def test_examples_pin_the_versions_the_test_clients_run():
    """The docs' tables name the versions tests/clients run; the examples must be the same ones."""
    clients = ROOT / "tests" / "clients"
    pom, test_pom = (EXAMPLES / "java" / "pom.xml").read_text(), (clients / "java" / "pom.xml").read_text()
    props = _versions(test_pom, r"<([\w.]+)\.version>([^<]+)<")
    deps = _versions(pom, r"<artifactId>([\w.-]+)</artifactId>\s*<version>([^<]+)<")
    assert deps["kafka-clients"] == props["kafka"]
    assert deps["aws-msk-iam-auth"] == props["msk.iam"]
    assert deps["slf4j-simple"] == deps["slf4j-api"] == props["slf4j"]

    gomod = _versions((EXAMPLES / "go" / "go.mod").read_text(), r"(?m)^\s*(\S+) (v\S+)")
    test_gomod = _versions((clients / "go" / "go.mod").read_text(), r"(?m)^\s*(\S+) (v\S+)")
    assert gomod.items() <= test_gomod.items(), set(gomod.items()) - set(test_gomod.items())

    pkg = json.loads((EXAMPLES / "node" / "package.json").read_text())["dependencies"]
    test_pkg = json.loads((clients / "node" / "package.json").read_text())["dependencies"]
    assert pkg == {k: test_pkg[k] for k in pkg}

    pins = _versions((EXAMPLES / "python" / "requirements.txt").read_text(), r"(?m)^([\w-]+)==(\S+)")
    test_pins = _versions((ROOT / "tests" / "integration" / "requirements.txt").read_text(),
                          r"(?m)^([\w-]+)==(\S+)")
    assert set(pins) == {"confluent-kafka", "aws-msk-iam-sasl-signer-python"}
    assert pins == {k: test_pins[k] for k in pins}
