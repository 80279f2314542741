"""IAM-test helpers shared by the IAM integration tests (test_iam_*.py): fake identities, a
broker with every IAM listener on, the environment an AWS SDK in a client needs, clients run
with that environment, and raw SaslHandshake/SaslAuthenticate for wire-level tests.

  REGION, ALICE (long-term key), BOB (a second long-term key), ROLE (served by the credentials
  endpoint)                          the fake identities every IAM test can use
  write_identities(path, ...)        writes an iam.identities.file (broker/iam/iam_store.h format)
  IamBroker(identities_file, ...)    harness.Broker with four listener groups on consecutive
                                     ports: plaintext base+i, IAM (TLS+SASL) base+n+i,
                                     SASL_PLAINTEXT base+2n+i, and the container-credentials
                                     endpoint base+3n; attributes iam_bootstrap,
                                     sasl_plaintext_port/_bootstrap, cred_port, ca_path,
                                     role_uri(role)
  iam_config(identities_file, ...)   the config dict IamBroker uses (for a plain Broker too)
  ca_path(broker)                    <data_dir>/tls/ca.pem, the generated CA clients must trust
  aws_env(identity=None, role_uri=None)  an environment holding exactly one AWS credential
                                     source (no profile, no IMDS: nothing leaves the machine)
  run_client_env(lang, args, env, timeout, check=True)
                                     like harness.run_client, with that environment; returns a
                                     ClientRun (rc, json, stdout, stderr, seconds)
  oauthbearer_token(identity, region)  an MSK IAM token from the official Python signer
  sasl_* / SaslConn                  SaslHandshake v1 and SaslAuthenticate v1 by hand (frame
                                     builders take (correlation_id, client_id, ...) like
                                     kafka_wire's)

Everything here reads only the standard library, harness and kafka_wire, except
oauthbearer_token (aws-msk-iam-sasl-signer-python, imported when called).
"""

import json
import os
import socket
import struct
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

import kafka_wire as kw
from harness import ROOT, Broker, client_command, find_free_port_range

REGION = "us-east-1"
ACCOUNT = "123456789012"


@dataclass(frozen=True)
class Identity:
    """A long-term (or fixed temporary) key in the identities file."""
    access_key_id: str
    secret_access_key: str
    principal: str
    session_token: str = None
    expiration: str = None  # ISO-8601 UTC, e.g. "2030-01-01T00:00:00Z"
    policies: tuple = None  # IAM policy documents (dicts) or file paths; None: no "policies"

    def entry(self):
        e = {"access_key_id": self.access_key_id, "secret_access_key": self.secret_access_key,
             "session_token": self.session_token, "expiration": self.expiration,
             "principal": self.principal}
        if self.policies is not None:
            e["policies"] = list(self.policies)
        return e


@dataclass(frozen=True)
class Role:
    """A role whose temporary credentials mskmock issues, rotates and serves."""
    name: str
    arn: str
    session_name: str
    policies: tuple = None

    def entry(self):
        e = {"name": self.name, "arn": self.arn, "session_name": self.session_name}
        if self.policies is not None:
            e["policies"] = list(self.policies)
        return e

    @property
    def principal(self):
        return "arn:aws:sts::%s:assumed-role/%s/%s" % (ACCOUNT, self.name, self.session_name)


# Secrets with "/" and "+" so any encoding slip in a signer or the verifier shows.
ALICE = Identity("AKIAMSKMOCKALICE0001", "aLiCe/SeCrEt+kEy/0123456789abcdefGHIJKLMN",
                 "arn:aws:iam::%s:user/alice" % ACCOUNT)
BOB = Identity("AKIAMSKMOCKBOB000002", "b0b+SeCrEt/kEy+9876543210zyxwvuTSRQPONML",
               "arn:aws:iam::%s:user/bob" % ACCOUNT)
ROLE = Role("app", "arn:aws:iam::%s:role/app" % ACCOUNT, "app-session")


def write_identities(path, identities=(ALICE, BOB), roles=(ROLE,)):
    path = Path(path)
    path.write_text(json.dumps({"identities": [i.entry() for i in identities],
                                "roles": [r.entry() for r in roles]}, indent=1))
    return path


def iam_config(identities_file, sasl_plaintext_port=None, cred_port=None, **extra):
    """Config keys for IAM: the identities file, the region, and optionally the SASL_PLAINTEXT
    listener and the credentials endpoint. extra: more keys, with dots written as "__"
    (connections__max__reauth__ms=10000) or pass a dict as extra["config"]."""
    cfg = {"iam.identities.file": str(identities_file), "iam.region": REGION}
    if sasl_plaintext_port:
        cfg["sasl.plaintext.port"] = sasl_plaintext_port
    if cred_port:
        cfg["iam.credentials.port"] = cred_port
    cfg.update(extra.pop("config", {}) or {})
    cfg.update({k.replace("__", "."): v for k, v in extra.items()})
    return cfg


def ca_path(broker):
    return Path(broker.data_dir) / "tls" / "ca.pem"


class IamBroker(Broker):
    """A Broker with the IAM listener, the SASL_PLAINTEXT listener and the credentials
    endpoint, on one free range of 3n+1 consecutive ports."""

    def __init__(self, identities_file, broker_count=1, config=None, sasl_plaintext=True,
                 credentials_endpoint=True, **kw_):
        self.identities_file = Path(identities_file)
        self.sasl_plaintext = sasl_plaintext
        self.credentials_endpoint = credentials_endpoint
        super().__init__(broker_count=broker_count, config=dict(config or {}), **kw_)

    @property
    def sasl_plaintext_port(self):
        return self.port + 2 * self.broker_count if self.sasl_plaintext else None

    @property
    def sasl_plaintext_bootstrap(self):
        return "127.0.0.1:%d" % self.sasl_plaintext_port

    @property
    def cred_port(self):
        return self.port + 3 * self.broker_count if self.credentials_endpoint else None

    @property
    def admin_port(self):
        # after the SASL-without-TLS listeners and the credentials endpoint
        return self.port + 3 * self.broker_count + 1

    @property
    def ca_path(self):
        return ca_path(self)

    def role_uri(self, role=ROLE):
        return "http://127.0.0.1:%d/role/%s" % (self.cred_port, getattr(role, "name", role))

    def env(self):
        saved = self.config
        self.config = dict(iam_config(self.identities_file, self.sasl_plaintext_port,
                                      self.cred_port), **saved)
        try:
            return super().env()
        finally:
            self.config = saved

    def start(self):
        if self.port is None:
            self.port = find_free_port_range(3 * self.broker_count + 2)
        super().start()
        deadline = time.monotonic() + 10
        while not self.ca_path.exists():  # written before the listeners open; be sure anyway
            if time.monotonic() > deadline:
                pytest.fail("no CA at %s after start-up\n%s" % (self.ca_path, self.log_tail()))
            time.sleep(0.05)
        return self


# -- the environment of a client ---------------------------------------------------------

_AWS_VARS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
             "AWS_SECURITY_TOKEN", "AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_ROLE_ARN",
             "AWS_ROLE_SESSION_NAME", "AWS_WEB_IDENTITY_TOKEN_FILE",
             "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
             "AWS_CONTAINER_AUTHORIZATION_TOKEN", "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
             "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_STS")


def aws_env(identity=None, role_uri=None, region=REGION, secret=None, base=None):
    """os.environ (or base) with exactly one AWS credential source: identity's keys (secret
    overrides its secret, for wrong-secret tests), or the container endpoint role_uri, or none.
    Profiles and EC2 instance metadata are switched off so no SDK looks anywhere else."""
    env = dict(os.environ if base is None else base)
    for k in _AWS_VARS:
        env.pop(k, None)
    env["AWS_CONFIG_FILE"] = os.devnull
    env["AWS_SHARED_CREDENTIALS_FILE"] = os.devnull
    env["AWS_EC2_METADATA_DISABLED"] = "true"
    env["AWS_REGION"] = region
    env["AWS_DEFAULT_REGION"] = region
    if identity is not None:
        env["AWS_ACCESS_KEY_ID"] = identity.access_key_id
        env["AWS_SECRET_ACCESS_KEY"] = secret if secret is not None else identity.secret_access_key
        if identity.session_token:
            env["AWS_SESSION_TOKEN"] = identity.session_token
    if role_uri is not None:
        env["AWS_CONTAINER_CREDENTIALS_FULL_URI"] = role_uri
    return env


@dataclass
class ClientRun:
    argv: list
    rc: int
    stdout: str
    stderr: str
    seconds: float
    json: dict = None

    def describe(self):
        return ("client exited %s after %.1f s: %s\n--- stdout ---\n%s\n--- stderr ---\n%s"
                % (self.rc, self.seconds, " ".join(self.argv), self.stdout[-4000:],
                   self.stderr[-8000:]))


def _last_json(stdout):
    for line in reversed([ln for ln in stdout.splitlines() if ln.strip()]):
        try:
            obj = json.loads(line)
        except ValueError:
            return None
        return obj if isinstance(obj, dict) else None
    return None


def client_argv(lang, args):
    cmd = client_command(lang)
    if cmd is None:
        if os.environ.get("CI"):
            pytest.fail("%s client is not built (tests/clients/%s/install.sh)" % (lang, lang))
        pytest.skip("%s client is not built" % lang)
    return cmd + [str(a) for a in args]


def start_client(lang, args, env):
    """Popen of a client with env; stdout and stderr are pipes (text)."""
    return subprocess.Popen(client_argv(lang, args), cwd=str(ROOT), env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def finish_client(p, timeout, check=True, t0=None):
    t0 = t0 if t0 is not None else time.monotonic()
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        run = ClientRun(p.args, "timeout", out or "", err or "", time.monotonic() - t0)
        pytest.fail("client timed out after %s s\n%s" % (timeout, run.describe()))
    run = ClientRun(p.args, p.returncode, out, err, time.monotonic() - t0, _last_json(out))
    if check:
        if run.rc != 0:
            pytest.fail(run.describe())
        if run.json is None:
            pytest.fail("client printed no JSON object on its last line\n" + run.describe())
    return run


def run_client_env(lang, args, env, timeout=120, check=True):
    """Runs a client per the CONTRACT with env. check: fail the test unless it exits 0 with a
    JSON object on its last stdout line. Returns the ClientRun either way."""
    t0 = time.monotonic()
    run = finish_client(start_client(lang, args, env), timeout, check, t0)
    if check:
        print("%s: %s -> %s (%.1f s)" % (lang, args[0], run.json, run.seconds))
    return run


# -- tokens and raw SASL -----------------------------------------------------------------

def oauthbearer_token(identity, region=REGION):
    """(token, expiry_ms) from aws-msk-iam-sasl-signer-python for identity's keys."""
    from aws_msk_iam_sasl_signer import MSKAuthTokenProvider
    from botocore.credentials import CredentialProvider, Credentials

    class Static(CredentialProvider):
        METHOD = "static"

        def load(self):
            return Credentials(identity.access_key_id, identity.secret_access_key,
                               identity.session_token)

    return MSKAuthTokenProvider.generate_auth_token_from_credentials_provider(region, Static())


def oauthbearer_message(token):
    """RFC 7628 client initial response: n,,^Aauth=Bearer <token>^A^A."""
    tok = token.encode() if isinstance(token, str) else token
    return b"n,,\x01auth=Bearer " + tok + b"\x01\x01"


API_SASL_HANDSHAKE = 17
API_SASL_AUTHENTICATE = 36
ERR_SASL_AUTHENTICATION_FAILED = 58
ERR_UNSUPPORTED_SASL_MECHANISM = 33
ERR_ILLEGAL_SASL_STATE = 34


def sasl_handshake_request(correlation_id, client_id, mechanism, version=1):
    return kw.request(API_SASL_HANDSHAKE, version, correlation_id, client_id, kw.string(mechanism))


def parse_sasl_handshake(body):
    r = kw.Reader(body)
    return r.i16(), r.array(lambda r: r.string())


def sasl_authenticate_request(correlation_id, client_id, auth_bytes, version=1):
    assert version in (0, 1)
    return kw.request(API_SASL_AUTHENTICATE, version, correlation_id, client_id,
                      kw.bytes_(auth_bytes))


def parse_sasl_authenticate(body, version=1):
    """{"error", "message", "auth_bytes", "session_lifetime_ms" (v1)}."""
    r = kw.Reader(body)
    out = {"error": r.i16(), "message": r.string()}
    n = r.i32()
    out["auth_bytes"] = None if n < 0 else r.take(n)
    if version >= 1:
        out["session_lifetime_ms"] = r.i64()
    return out


class SaslConn:
    """A raw connection (plain TCP, e.g. to sasl.plaintext.port) that speaks SASL by hand."""

    def __init__(self, port, timeout=10.0, client_id="mskmock-it-raw"):
        self.sock = kw.connect(port, timeout=timeout)
        self.client_id = client_id
        self.corr = 0

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def send(self, frame_fn, *args, **kwargs):
        """Sends frame_fn(correlation_id, client_id, *args, **kwargs) (the kafka_wire shape)."""
        self.corr += 1
        self.sock.sendall(frame_fn(self.corr, self.client_id, *args, **kwargs))
        return self.corr

    def roundtrip(self, frame_fn, *args, **kwargs):
        corr = self.send(frame_fn, *args, **kwargs)
        got, body = kw.recv_frame(self.sock)
        assert got == corr, "correlation id %d, expected %d" % (got, corr)
        return body

    def api_versions(self):
        """ApiVersions v2 (the serverless floor): {key: (min, max)}."""
        err, apis, _ = kw.parse_api_versions(self.roundtrip(kw.api_versions_request))
        assert err == 0, "ApiVersions error %d" % err
        return apis

    def handshake(self, mechanism):
        return parse_sasl_handshake(self.roundtrip(sasl_handshake_request, mechanism))

    def authenticate(self, auth_bytes):
        return parse_sasl_authenticate(self.roundtrip(sasl_authenticate_request, auth_bytes))

    def login_oauthbearer(self, identity, region=REGION):
        """ApiVersions, SaslHandshake v1 OAUTHBEARER, SaslAuthenticate v1 with a signer token;
        asserts success and returns the SaslAuthenticate response."""
        self.api_versions()
        err, mechs = self.handshake("OAUTHBEARER")
        assert err == 0, "SaslHandshake OAUTHBEARER: error %d (mechanisms %s)" % (err, mechs)
        token, _ = oauthbearer_token(identity, region)
        resp = self.authenticate(oauthbearer_message(token))
        assert resp["error"] == 0, "SaslAuthenticate failed: %r" % (resp,)
        return resp


class AwsBroker(IamBroker):
    """An IamBroker with the AWS APIs (aws.port) on the port after its others."""

    @property
    def aws_port(self):
        return self.port + 3 * self.broker_count + 2

    @property
    def aws_url(self):
        return "http://127.0.0.1:%d" % self.aws_port

    def start(self):
        if self.port is None:
            self.port = find_free_port_range(3 * self.broker_count + 3)
        self.config["aws.port"] = self.aws_port
        return super().start()


def metadata(correlation_id, client_id, topics=None):
    """Metadata v6 (kw.METADATA_V, the serverless floor); all topics by default."""
    return kw.metadata_request(kw.METADATA_V, correlation_id, client_id, topics)
