"""The built-in container-credentials endpoint (iam.credentials.port), driven by botocore's own
container provider exactly as an SDK in an ECS task or EKS pod uses it: the test only sets
AWS_CONTAINER_CREDENTIALS_FULL_URI (and the authorization token, which mskmock ignores).

  - botocore gets the credentials the endpoint serves (same access key as the broker logged for
    that request and as a plain GET returns), with the role's ARN and an ISO-8601 expiration;
  - after a rotation (iam.credentials.rotation.interval.ms=1000) a new botocore session gets a new
    key, the ECS behaviour behind docs/msk-behaviors.md#credential-rotation;
  - an unknown role is a 404 that botocore reports, other methods a 405, the secret never logged;
  - with iam.credentials.authorization.token (or its .file) set, botocore with the same
    AWS_CONTAINER_AUTHORIZATION_TOKEN (or _FILE) gets the credentials, without it 401, with
    another 403 (issue 35: the endpoint served role secrets to any peer).

Skips, with the reason, while the broker does not know the iam.credentials.* keys yet.
"""

import http.client
import json
import os
import re
import time
from datetime import datetime, timezone

import pytest

from harness import Broker, find_free_port_range

botocore_session = pytest.importorskip(
    "botocore.session", reason="botocore is not installed (tests/integration/requirements.txt)")
botocore_exceptions = pytest.importorskip("botocore.exceptions")

ROLE = "app"
ROLE_ARN = "arn:aws:iam::123456789012:role/app"
ROTATION_MS = 1000
# Above botocore's 15-minute advisory refresh window: a shorter lifetime would make every access
# to the credentials refetch them (botocore's RefreshableCredentials: advisory refresh 15 minutes,
# mandatory 10 minutes before expiry).
LIFETIME_MS = 3600000


@pytest.fixture(scope="module")
def cred_broker(tmp_path_factory):
    d = tmp_path_factory.mktemp("iam")
    ids = d / "identities.json"
    ids.write_text(json.dumps({
        "identities": [{"access_key_id": "AKIAIOSFODNN7EXAMPLE",
                        "secret_access_key": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                        "principal": "arn:aws:iam::123456789012:user/alice"}],
        "roles": [{"name": ROLE, "arn": ROLE_ARN, "session_name": "app-session"}],
    }))
    # One free range for the broker's plaintext and IAM ports (harness layout) and the endpoint's,
    # so none can take another's.
    base = find_free_port_range(4)  # plaintext, IAM, admin (harness layout), then the endpoint
    b = Broker(broker_count=1, config={
        "iam.port": 0,  # no TLS listener needed here
        "iam.identities.file": str(ids),
        "iam.credentials.port": base + 3,
        "iam.credentials.rotation.interval.ms": ROTATION_MS,
        "iam.credentials.lifetime.ms": LIFETIME_MS,
    })
    b.port = base
    b.cred_port = base + 3
    try:
        try:
            b.start()
        except pytest.fail.Exception:
            m = re.search(r"unknown key '(iam\.credentials\.[a-z.]+|iam\.identities\.file)'", b.log_text())
            if m:
                pytest.skip("the broker does not know %s yet: the credentials endpoint is not wired "
                            "into the broker (config keys iam.credentials.*)" % m.group(1))
            raise
        yield b
        b.assert_alive()
        b.stop(check=True)
    finally:
        b.cleanup()


@pytest.fixture
def container_env(cred_broker, monkeypatch):
    """The environment of a container whose SDK must use the endpoint and nothing else."""
    for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
              "AWS_DEFAULT_PROFILE", "AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE",
              "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", os.devnull)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", role_uri(cred_broker, ROLE))
    monkeypatch.setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", "mskmock-ignores-this")
    return cred_broker


def role_uri(b, role):
    return "http://127.0.0.1:%d/role/%s" % (b.cred_port, role)


def http_request(b, method, path, headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", b.cred_port, timeout=10)
    try:
        conn.request(method, path, headers=headers or {})
        r = conn.getresponse()
        return r.status, dict(r.getheaders()), r.read()
    finally:
        conn.close()


def botocore_credentials():
    """What a fresh botocore session resolves, as the MSK IAM signer does on every token."""
    creds = botocore_session.get_session().get_credentials()
    assert creds is not None, "botocore found no credentials"
    assert creds.method == "container-role", "botocore used %r, not the container provider" % creds.method
    return creds


def served_key_in_log(b, since, timeout=5.0):
    line = b.wait_for_log(r"cred: .* GET /role/%s 200 role=%s access_key_id=(\S+)" % (ROLE, ROLE),
                          since=since, timeout=timeout)
    assert line, "no log line for the credentials request\n%s" % b.log_tail()
    return re.search(r"access_key_id=(\S+)", line).group(1)


def test_botocore_gets_the_served_credentials(container_env):
    b = container_env
    since = b.log_size()
    creds = botocore_credentials()
    frozen = creds.get_frozen_credentials()
    assert re.fullmatch(r"ASIA[A-Z2-7]{16}", frozen.access_key), frozen.access_key
    assert len(frozen.secret_key) == 40
    assert frozen.token and len(frozen.token) >= 100
    # The key botocore holds is the one the broker logged serving to it ...
    assert served_key_in_log(b, since) == frozen.access_key
    # ... with the expiration the endpoint announced: issue time + iam.credentials.lifetime.ms.
    left_s = (creds._expiry_time - datetime.now(timezone.utc)).total_seconds()
    assert LIFETIME_MS / 1000 - 10 < left_s <= LIFETIME_MS / 1000 + 1, left_s
    # The secret and the session token never reach the log.
    log = b.log_text()
    assert frozen.secret_key not in log
    assert frozen.token not in log


def test_endpoint_json_matches_botocore(container_env):
    b = container_env
    # A rotation may land between two fetches: retry until two plain GETs around the botocore
    # fetch agree, then botocore must have the same key.
    for _ in range(20):
        status, headers, body = http_request(b, "GET", "/role/%s" % ROLE)
        assert status == 200, body
        before = json.loads(body)
        key = botocore_credentials().get_frozen_credentials().access_key
        after = json.loads(http_request(b, "GET", "/role/%s" % ROLE)[2])
        if before["AccessKeyId"] == after["AccessKeyId"]:
            break
    else:
        pytest.fail("the served key changed around every fetch")
    assert key == before["AccessKeyId"]
    assert headers.get("Content-Type") == "application/json"
    assert set(before) >= {"AccessKeyId", "SecretAccessKey", "Token", "Expiration", "RoleArn"}
    assert before["RoleArn"] == ROLE_ARN
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", before["Expiration"]), before["Expiration"]
    # The EKS path and a query string serve the same role.
    status, _, body = http_request(b, "GET", "/v2/credentials/%s?x=1" % ROLE)
    assert status == 200 and json.loads(body)["RoleArn"] == ROLE_ARN


def test_rotation_gives_a_new_session_a_new_key(container_env):
    b = container_env
    first = botocore_credentials().get_frozen_credentials()
    deadline = time.monotonic() + 10 * ROTATION_MS / 1000
    keys = {first.access_key}
    while time.monotonic() < deadline:
        time.sleep(ROTATION_MS / 1000 * 1.5)
        second = botocore_credentials().get_frozen_credentials()
        keys.add(second.access_key)
        if second.access_key != first.access_key:
            break
    else:
        pytest.fail("botocore got the same key %s for %.0f s with rotation every %d ms\n%s"
                    % (first.access_key, 10 * ROTATION_MS / 1000, ROTATION_MS, b.log_tail()))
    assert second.secret_key != first.secret_key
    assert second.token != first.token
    assert re.fullmatch(r"ASIA[A-Z2-7]{16}", second.access_key)
    b.assert_alive()


def test_unknown_role_and_other_methods(container_env, monkeypatch):
    b = container_env
    status, headers, body = http_request(b, "GET", "/role/nope")
    assert status == 404
    err = json.loads(body)
    assert err["code"] == "NotFound" and "nope" in err["message"] and ROLE in err["message"]
    status, headers, _ = http_request(b, "POST", "/role/%s" % ROLE)
    assert status == 405 and headers.get("Allow") == "GET"
    status, _, _ = http_request(b, "GET", "/latest/meta-data/")
    assert status == 404
    # botocore reports the 404 instead of falling back to something else
    monkeypatch.setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", role_uri(b, "nope"))
    with pytest.raises(botocore_exceptions.CredentialRetrievalError) as e:
        botocore_session.get_session().get_credentials()
    assert "404" in str(e.value) or "nope" in str(e.value)
    assert b.wait_for_log(r"cred: .* GET /role/nope 404"), b.log_tail()


def test_start_up_line_counts_users_and_roles(cred_broker):
    """Regression (iam_identities_counted_roles_credentials): the start-up line counted every
    credential held, a role's issued ones too, as "identities"; it now says users and roles."""
    log = cred_broker.log_text()
    assert re.search(r"iam: identities from \S+identities\.json: users=1 roles=1, region \S+, "
                     r"credentials endpoint on", log), log[:3000]


TOKEN = "tok-3f9a7c-not-a-secret-anywhere-else"


def token_broker(tmp_path_factory, config):
    d = tmp_path_factory.mktemp("iamtok")
    ids = d / "identities.json"
    ids.write_text(json.dumps({"identities": [], "roles": [{"name": ROLE, "arn": ROLE_ARN}]}))
    base = find_free_port_range(4)
    b = Broker(broker_count=1, config=dict({"iam.port": 0, "iam.identities.file": str(ids),
                                            "iam.credentials.port": base + 3}, **config), data_dir=d)
    b.port, b.cred_port = base, base + 3
    return b


@pytest.fixture(scope="module", params=["key", "file"])
def token_required(request, tmp_path_factory):
    """The endpoint with the token required, given as the key or as a file (ending in a newline,
    as `echo` writes it)."""
    if request.param == "key":
        config = {"iam.credentials.authorization.token": TOKEN}
    else:
        f = tmp_path_factory.mktemp("tokfile") / "token"
        f.write_text(TOKEN + "\n")
        config = {"iam.credentials.authorization.token.file": str(f)}
    b = token_broker(tmp_path_factory, config)
    try:
        b.start()
        yield b
        b.assert_alive()
        b.stop(check=True)
    finally:
        b.cleanup()


def test_token_required_botocore(token_required, container_env_for, monkeypatch, tmp_path):
    b = token_required
    container_env_for(b)
    monkeypatch.setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", TOKEN)
    assert botocore_credentials().get_frozen_credentials().access_key.startswith("ASIA")
    # the _FILE variant, as EKS Pod Identity mounts it (botocore reads it whole: no newline)
    f = tmp_path / "sdk-token"
    f.write_text(TOKEN)
    monkeypatch.delenv("AWS_CONTAINER_AUTHORIZATION_TOKEN")
    monkeypatch.setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", str(f))
    assert botocore_credentials().get_frozen_credentials().access_key.startswith("ASIA")
    monkeypatch.delenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE")
    # without the token, and with another one, botocore gets nothing
    for token, status in ((None, 401), ("wrong-" + TOKEN, 403)):
        if token:
            monkeypatch.setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", token)
        with pytest.raises(botocore_exceptions.CredentialRetrievalError) as e:
            botocore_session.get_session().get_credentials()
        assert str(status) in str(e.value), e.value
    log = b.log_text()
    assert TOKEN not in log
    assert re.search(r"cred: .* GET /role/app 401 no authorization token", log), log[-3000:]
    assert re.search(r"cred: .* GET /role/app 403 wrong authorization token", log), log[-3000:]


def test_token_required_plain_http(token_required):
    b = token_required
    assert http_request(b, "GET", "/role/app")[0] == 401
    assert http_request(b, "GET", "/role/app", {"Authorization": "x" + TOKEN})[0] == 403
    assert http_request(b, "GET", "/role/app", {"Authorization": TOKEN[:-1]})[0] == 403
    assert http_request(b, "GET", "/role/app", {"Authorization": TOKEN})[0] == 200
    # refused before the path is looked at: which roles exist is not told without the token
    status, _, body = http_request(b, "GET", "/role/nope")
    assert status == 401 and b"app" not in body
    assert http_request(b, "GET", "/role/nope", {"Authorization": TOKEN})[0] == 404


@pytest.fixture
def container_env_for(monkeypatch):
    def setup(b):
        for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
                  "AWS_DEFAULT_PROFILE", "AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE",
                  "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
                  "AWS_CONTAINER_AUTHORIZATION_TOKEN"):
            monkeypatch.delenv(k, raising=False)
        monkeypatch.setenv("AWS_CONFIG_FILE", os.devnull)
        monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", os.devnull)
        monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
        monkeypatch.setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", role_uri(b, ROLE))
    return setup


def test_token_config_errors(tmp_path_factory):
    """Both keys, or a missing or empty file, stop start-up with the reason."""
    empty = tmp_path_factory.mktemp("tokempty") / "empty"
    empty.write_text("\n")
    for config, why in (({"iam.credentials.authorization.token": TOKEN,
                          "iam.credentials.authorization.token.file": str(empty)}, "not both"),
                        ({"iam.credentials.authorization.token.file": "/nonexistent/token"}, "No such file"),
                        ({"iam.credentials.authorization.token.file": str(empty)}, "is empty")):
        b = token_broker(tmp_path_factory, config)
        try:
            with pytest.raises(pytest.fail.Exception):
                b.start()
            assert why in b.log_text(), b.log_tail()
        finally:
            b.cleanup()


def test_wildcard_bind_without_token_warns(tmp_path_factory):
    b = token_broker(tmp_path_factory, {"bind.address": "0.0.0.0"})
    try:
        b.start()
        assert b.wait_for_log(r"cred: the credentials endpoint listens on 0\.0\.0\.0 without "
                              r"iam\.credentials\.authorization\.token")
        b.stop(check=True)
    finally:
        b.cleanup()
