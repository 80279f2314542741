"""MSK IAM authentication against real clients: Python (confluent-kafka + the official signer
aws-msk-iam-sasl-signer-python, OAUTHBEARER) and Java (kafka-clients 4.4 + aws-msk-iam-auth,
AWS_MSK_IAM and its OAUTHBEARER handler), against MSK's listeners and authentication as
docs/msk-behaviors.md describes them (#listeners-and-connections, #authentication).

  1. create a topic, produce and consume 1,000 records over SASL_SSL (the generated CA) and
     SASL_PLAINTEXT, with long-term keys from the identities file and with a role's credentials
     that the client's AWS SDK fetches from mskmock's container-credentials endpoint;
  2. refusals as a real client sees them: a wrong secret ([<uuid>]: Access denied, the same
     uuid in the broker log with the failed check), a plaintext client on the TLS port, PLAIN
     and SCRAM (UNSUPPORTED_SASL_MECHANISM), Produce before authentication;
  3. KIP-368: with connections.max.reauth.ms=10000, Java and librdkafka clients produce and
     consume for 60 s across several re-authentications without an error;
  4. a raw client that never re-authenticates is disconnected at its first request after
     expiry (no reply) and a new connection works; one that re-authenticates by hand keeps going.
"""

import re
import time

import pytest

import iam
import kafka_wire as kw
from iam import ALICE, BOB, REGION, ROLE, IamBroker, SaslConn, aws_env, run_client_env

PARTITIONS = 3
RECORDS = 1000
REAUTH_MS = 10000
REAUTH_RUN_S = 60  # the issue asks for 60 s across several re-authentications
UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
CLIENT_ID = {"python": "mskmock-it-python", "java": "mskmock-test-java"}

pytestmark = pytest.mark.timeout(300)


# -- brokers ------------------------------------------------------------------------------

def _start(ids, **kw_):
    b = IamBroker(ids, broker_count=3, **kw_)
    try:
        b.start()
    except pytest.fail.Exception:
        if re.search(r"unknown key 'iam\.credentials\.port'", b.log_text()):
            # The credentials endpoint is not wired yet: run everything else with long-term keys.
            b.cleanup()
            b = IamBroker(ids, broker_count=3, credentials_endpoint=False, **kw_)
            b.start()
        else:
            b.cleanup()
            raise
    return b


def _stop(b):
    try:
        b.assert_alive()
        b.stop(check=True)
    finally:
        b.cleanup()


@pytest.fixture(scope="module")
def identities(tmp_path_factory):
    return iam.write_identities(tmp_path_factory.mktemp("iam") / "identities.json")


@pytest.fixture(scope="module")
def iam_broker(identities):
    """Default sessions: the token's 900 s (no connections.max.reauth.ms)."""
    b = _start(identities)
    yield b
    _stop(b)


@pytest.fixture(scope="module")
def reauth_broker(identities):
    b = _start(identities, config={"connections.max.reauth.ms": REAUTH_MS})
    yield b
    _stop(b)


# -- helpers ------------------------------------------------------------------------------

def credentials_env(broker, creds):
    if creds == "keys":
        return aws_env(ALICE)
    if creds == "bob":
        return aws_env(BOB)
    assert creds == "role"
    if not broker.credentials_endpoint:
        pytest.skip("the broker does not accept iam.credentials.port yet (no credentials endpoint)")
    return aws_env(role_uri=broker.role_uri(ROLE))


def principal_of(creds):
    return {"keys": ALICE.principal, "bob": BOB.principal, "role": ROLE.principal}[creds]


def security_args(broker, protocol, mechanism):
    args = ["--security-protocol", protocol, "--mechanism", mechanism, "--region", REGION]
    if protocol == "SASL_SSL":
        args += ["--ca", broker.ca_path]
    return args


def bootstrap_for(broker, protocol):
    return broker.iam_bootstrap if protocol == "SASL_SSL" else broker.sasl_plaintext_bootstrap


def conn_events(text):
    """Per connection id from the broker log: listener, client, and auth lines."""
    conns = {}
    for m in re.finditer(r"conn=(\d+) open peer=\S+ node=\d+ listener=(\w+)", text):
        conns.setdefault(int(m.group(1)), {"auth": [], "reauth": []})["listener"] = m.group(2)
    rx = re.compile(r"conn=(\d+) client=(\S+) (authenticated|re-authenticated) as (\S+) via (\S+), "
                    r"session (-?\d+) ms, request-id=(\S+)")
    for m in rx.finditer(text):
        c = conns.setdefault(int(m.group(1)), {"auth": [], "reauth": []})
        c["client"] = m.group(2)
        kind = "auth" if m.group(3) == "authenticated" else "reauth"
        c[kind].append({"principal": m.group(4), "mechanism": m.group(5),
                        "session_ms": int(m.group(6)), "request_id": m.group(7)})
    return conns


def sasl_refusals(text, client_id=None):
    lines = [ln for ln in text.splitlines()
             if re.search(r"refused|SASL session expired|before SASL authentication", ln)]
    if client_id:
        lines = [ln for ln in lines if "client=%s " % client_id in ln]
    return lines


def run_ok(broker, lang, args, env, since, timeout=120):
    """run_client_env that, on failure, also shows what the broker refused (with its reason)."""
    r = run_client_env(lang, args, env, timeout=timeout, check=False)
    if r.rc != 0 or r.json is None:
        refusals = sasl_refusals(broker.log_since(since))
        pytest.fail("%s\n--- broker refusals ---\n%s" % (r.describe(), "\n".join(refusals[-10:])))
    print("%s: %s -> %s (%.1f s)" % (lang, args[0], r.json, r.seconds))
    return r


# -- 1. round trips -----------------------------------------------------------------------

ROUNDTRIPS = [
    # lang, mechanism, security protocol, credentials
    ("python", "OAUTHBEARER", "SASL_SSL", "keys"),
    ("python", "OAUTHBEARER", "SASL_PLAINTEXT", "keys"),
    ("python", "OAUTHBEARER", "SASL_SSL", "role"),
    ("java", "AWS_MSK_IAM", "SASL_SSL", "keys"),
    ("java", "OAUTHBEARER", "SASL_SSL", "keys"),
    ("java", "AWS_MSK_IAM", "SASL_PLAINTEXT", "keys"),
    ("java", "OAUTHBEARER", "SASL_PLAINTEXT", "keys"),
    ("java", "AWS_MSK_IAM", "SASL_SSL", "role"),
    ("java", "OAUTHBEARER", "SASL_SSL", "role"),
]


@pytest.mark.parametrize("lang,mechanism,protocol,creds", ROUNDTRIPS,
                         ids=["-".join(c) for c in ROUNDTRIPS])
def test_roundtrip(iam_broker, lang, mechanism, protocol, creds):
    b = iam_broker
    env = credentials_env(b, creds)
    topic = "iam-%s-%s-%s-%s" % (lang, mechanism.lower(), protocol.lower(), creds)
    common = ["--bootstrap", bootstrap_for(b, protocol), "--topic", topic,
              "--partitions", PARTITIONS] + security_args(b, protocol, mechanism)
    since = b.log_size()

    r = run_ok(b, lang, ["create-topic"] + common, env, since, timeout=90)
    assert r.json == {"created": topic}
    r = run_ok(b, lang, ["produce"] + common + ["--count", RECORDS, "--compression", "none"],
               env, since)
    assert r.json == {"produced": RECORDS}
    r = run_ok(b, lang, ["consume"] + common + ["--count", RECORDS], env, since)
    assert r.json["consumed"] == RECORDS, r.json

    text = b.log_since(since)
    assert not sasl_refusals(text), "refusals during a good run:\n%s" % "\n".join(sasl_refusals(text))
    conns = {cid: c for cid, c in conn_events(text).items() if c["auth"]}
    assert conns, "no 'authenticated as' line in the broker log\n%s" % b.log_tail()
    want_listener = "iam" if protocol == "SASL_SSL" else "sasl_plaintext"
    for cid, c in sorted(conns.items()):
        a = c["auth"][0]
        assert c["client"].startswith(CLIENT_ID[lang]), (cid, c)
        assert a["principal"] == "IAM." + principal_of(creds), (cid, c)
        assert a["mechanism"] == mechanism, (cid, c)
        # The token's 900 s (or 899 s for Java's rounding), minus the time since signing.
        assert 880000 <= a["session_ms"] <= 900000, (cid, c)
        assert c.get("listener") == want_listener, (
            "conn %d authenticated on listener %r, expected %r (the client must stay on the "
            "listener it bootstrapped from)" % (cid, c.get("listener"), want_listener))
    if creds == "role":
        served = re.findall(r"GET /role/%s 200 role=%s access_key_id=(ASIA\w+)" % (ROLE.name, ROLE.name),
                            text)
        assert served, "the client's SDK never fetched the role from the credentials endpoint\n%s" \
            % b.log_tail()


# -- 2. refusals ---------------------------------------------------------------------------

@pytest.mark.parametrize("lang,mechanism", [("python", "OAUTHBEARER"), ("java", "AWS_MSK_IAM")])
def test_wrong_secret_access_denied(iam_broker, lang, mechanism):
    b = iam_broker
    env = aws_env(ALICE, secret="not/the+right/secret0123456789abcdefghij")
    since = b.log_size()
    args = ["create-topic", "--bootstrap", b.iam_bootstrap, "--topic", "never", "--partitions", 1]
    if lang == "python":
        args += ["--timeout", 30]
    r = run_client_env(lang, args + security_args(b, "SASL_SSL", mechanism), env, timeout=90,
                       check=False)
    assert r.rc != 0, "the client succeeded with a wrong secret\n" + r.describe()
    # librdkafka: "SASL authentication error: [<uuid>]: Access denied (after N ms in state
    # AUTH_REQ)"; Java: "SaslAuthenticationException: [<uuid>]: Access denied".
    prefix = {"python": r"SASL authentication error: ", "java": r"SaslAuthenticationException: "}[lang]
    m = re.search(prefix + r"\[(%s)\]: Access denied" % UUID, r.stderr)
    assert m, "the client did not report MSK's '[<uuid>]: Access denied'\n" + r.describe()
    rid = m.group(1)
    line = b.wait_for_log(r"request-id=%s\b" % rid, since=since, timeout=5)
    assert line, "no broker log line with request-id=%s\n%s" % (rid, b.log_tail())
    assert "signature does not match" in line, line
    assert "SASL_AUTHENTICATION_FAILED(58)" in line and "Access denied" in line, line
    assert ALICE.access_key_id in line, line
    assert "not/the+right" not in b.log_text(), "the log shows the secret"


def test_plaintext_client_on_tls_port_is_refused(iam_broker):
    """A client without TLS (and without SASL) on the IAM port gets no Kafka answer: the
    broker fails the TLS handshake and logs it."""
    b = iam_broker
    since = b.log_size()
    p = iam.start_client("python", ["create-topic", "--bootstrap", b.iam_bootstrap,
                                    "--topic", "never-plain", "--partitions", 1, "--timeout", 60],
                         aws_env())
    try:
        line = b.wait_for_log(r"TLS handshake failed", since=since, timeout=20)
        rc = p.poll()
    finally:
        if p.poll() is None:
            p.terminate()
        out, err = p.communicate(timeout=30)
    assert line, "no 'TLS handshake failed' line\n%s\n--- client stderr ---\n%s" % (b.log_tail(), err)
    assert rc is None or rc != 0, "a plaintext client succeeded on the TLS port:\n%s" % out
    cid = int(re.search(r"conn=(\d+)", line).group(1))
    assert conn_events(b.log_since(since)).get(cid, {}).get("listener") == "iam", line
    assert "never-plain" not in b.log_since(since)  # no CreateTopics got through


@pytest.mark.parametrize("lang,mechanism", [("python", "PLAIN"), ("python", "SCRAM-SHA-512"),
                                            ("java", "PLAIN"), ("java", "SCRAM-SHA-256")])
def test_unsupported_mechanism(iam_broker, lang, mechanism):
    b = iam_broker
    since = b.log_size()
    args = ["create-topic", "--bootstrap", b.iam_bootstrap, "--topic", "never-mech",
            "--partitions", 1] + security_args(b, "SASL_SSL", mechanism)
    if lang == "python":
        args += ["--timeout", 30]
    r = run_client_env(lang, args, aws_env(ALICE), timeout=90, check=False)
    assert r.rc != 0, r.describe()
    if lang == "python":
        want = r"Unsupported SASL mechanism: broker's supported mechanisms: AWS_MSK_IAM,OAUTHBEARER"
    else:
        want = (r"UnsupportedSaslMechanismException: Client SASL mechanism '%s' not enabled in the "
                r"server, enabled mechanisms are \[AWS_MSK_IAM, OAUTHBEARER\]" % mechanism)
    assert re.search(want, r.stderr), r.describe()
    line = b.wait_for_log(r"api=SaslHandshake v\d .*refused error=UNSUPPORTED_SASL_MECHANISM\(33\): "
                          r"mechanism '%s' is not enabled" % re.escape(mechanism), since=since)
    assert line, b.log_tail()


def test_produce_before_authentication_closes(iam_broker):
    b = iam_broker
    since = b.log_size()
    with SaslConn(b.sasl_plaintext_port) as c:
        apis = c.api_versions()
        assert 17 in apis and 36 in apis, "SaslHandshake/SaslAuthenticate not advertised: %s" % apis
        batch = kw.record_batch([(b"k", b"v", ())])
        c.send(lambda corr, cid: kw.produce_request(kw.PRODUCE_V, corr, cid, "iam-before-auth", 0, batch))
        left = kw.wait_closed(c.sock, timeout=5)
        assert left is None, "Produce before authentication: %s" % left
    line = b.wait_for_log(r"client=mskmock-it-raw refused Produce before SASL authentication on the "
                          r"sasl_plaintext listener", since=since)
    assert line, b.log_tail()


# -- 3. KIP-368 re-authentication with real clients ---------------------------------------

REAUTH_CLIENTS = {
    # name: (lang, mechanism, credentials, log client-id prefix)
    "python-oauthbearer": ("python", "OAUTHBEARER", "keys", "mskmock-it-python"),
    "java-aws_msk_iam": ("java", "AWS_MSK_IAM", "bob", "mskmock-test-java"),
    "java-oauthbearer": ("java", "OAUTHBEARER", "role", "mskmock-test-java"),
}


@pytest.fixture(scope="module")
def reauth_runs(reauth_broker):
    """The three clients produce and consume at the same time for REAUTH_RUN_S seconds."""
    b = reauth_broker
    envs = {}
    for name, (lang, mech, creds, _) in REAUTH_CLIENTS.items():
        if creds == "role" and not b.credentials_endpoint:
            creds = "keys"
        envs[name] = (credentials_env(b, creds), creds)
        run_client_env("python", ["create-topic", "--bootstrap", b.iam_bootstrap, "--topic",
                                  "reauth-" + name, "--partitions", PARTITIONS]
                       + security_args(b, "SASL_SSL", "OAUTHBEARER"), aws_env(ALICE), timeout=60)
    since = b.log_size()
    procs = {}
    t0 = time.monotonic()
    for name, (lang, mech, _, _) in REAUTH_CLIENTS.items():
        procs[name] = iam.start_client(
            lang, ["produce-consume", "--bootstrap", b.iam_bootstrap, "--topic", "reauth-" + name,
                   "--partitions", PARTITIONS, "--duration", REAUTH_RUN_S]
            + security_args(b, "SASL_SSL", mech), envs[name][0])
    runs = {name: iam.finish_client(p, REAUTH_RUN_S + 90, check=False, t0=t0)
            for name, p in procs.items()}
    return {"runs": runs, "log": b.log_since(since), "creds": {n: e[1] for n, e in envs.items()},
            "broker": b}


@pytest.mark.parametrize("name", list(REAUTH_CLIENTS))
def test_reauthentication(reauth_runs, name):
    lang, mech, _, client_prefix = REAUTH_CLIENTS[name]
    creds = reauth_runs["creds"][name]
    r = reauth_runs["runs"][name]
    text = reauth_runs["log"]
    res = r.json
    assert res is not None, "no result line\n" + r.describe()
    assert res["errors"] == [], "%d errors during the run, the first: %s\n%s" % (
        len(res["errors"]), res["errors"][:3], r.describe())
    assert r.rc == 0, r.describe()
    # ~20 records a second; allow a slow machine to fall behind, but not by much.
    assert res["produced"] >= REAUTH_RUN_S * 20 * 0.5, res
    assert res["acked"] == res["produced"] == res["consumed"], res
    if lang == "java":
        assert res["failed_reauths"] == 0 and res["failed_authentications"] == 0, res
        assert res["connections_closed"] == 0, "the client lost connections: %s" % res
        assert res["reauths"] >= 2 * (REAUTH_RUN_S * 1000 // REAUTH_MS - 1), res
    else:
        assert res["disconnects"] == 0, "librdkafka counted broker disconnects: %s" % res

    # The broker's side: this client's connections re-authenticated, with its principal and
    # mechanism, and none was cut for an expired session.
    conns = {cid: c for cid, c in conn_events(text).items()
             if c.get("client", "").startswith(client_prefix)
             and (c["auth"] or c["reauth"])
             and (c["auth"] + c["reauth"])[0]["mechanism"] == mech
             and (c["auth"] + c["reauth"])[0]["principal"] == "IAM." + principal_of(creds)}
    assert conns, "no connection of %s in the broker log" % name
    reauths = {cid: len(c["reauth"]) for cid, c in conns.items()}
    print("%s: %s; broker re-authentications per connection %s" % (name, res, reauths))
    busiest = max(reauths.values())
    # 60 s of 10 s sessions, re-authenticated at 85-95 % (Java) or 90 % (librdkafka): >= 3 each.
    assert busiest >= REAUTH_RUN_S * 1000 // REAUTH_MS - 1, \
        "re-authentications per connection: %s" % reauths
    for cid, c in conns.items():
        for a in c["auth"] + c["reauth"]:
            assert 0 < a["session_ms"] <= REAUTH_MS, (cid, a)
    cut = [ln for ln in text.splitlines() if "SASL session expired" in ln
           and any("conn=%d " % cid in ln for cid in conns)]
    assert not cut, "connections cut at expiry instead of re-authenticating:\n" + "\n".join(cut)
    refused = [ln for ln in sasl_refusals(text)
               if any("conn=%d " % cid in ln for cid in conns)]
    assert not refused, "\n".join(refused)


# -- 4. a client that never re-authenticates ----------------------------------------------

def test_session_lifetime_without_reauth_cap(iam_broker):
    """Without connections.max.reauth.ms the session is the token's: X-Amz-Date + 900 s - now."""
    with SaslConn(iam_broker.sasl_plaintext_port) as c:
        resp = c.login_oauthbearer(ALICE)
    assert resp["auth_bytes"] == b"", "OAUTHBEARER success must carry empty auth bytes: %r" % resp
    assert 880000 <= resp["session_lifetime_ms"] <= 900000, resp


def test_expired_session_is_closed_and_reconnect_works(reauth_broker):
    b = reauth_broker
    since = b.log_size()
    lazy = SaslConn(b.sasl_plaintext_port, client_id="mskmock-it-lazy")
    eager = SaslConn(b.sasl_plaintext_port, client_id="mskmock-it-eager")
    try:
        resp = lazy.login_oauthbearer(ALICE)
        authed_at = time.monotonic()
        life = resp["session_lifetime_ms"]
        assert 0 < life <= REAUTH_MS, resp
        assert life >= REAUTH_MS - 2000, resp
        eager.login_oauthbearer(BOB)
        eager_authed_at = time.monotonic()
        # Before expiry both are served.
        for c in (lazy, eager):
            kw.parse_metadata(kw.METADATA_V, c.roundtrip(iam.metadata, None))

        # eager re-authenticates by hand halfway (KIP-368: SaslHandshake + SaslAuthenticate on the
        # authenticated connection, no ApiVersions).
        time.sleep(max(0.0, eager_authed_at + life / 2000.0 - time.monotonic()))
        err, _ = eager.handshake("OAUTHBEARER")
        assert err == 0, "re-authentication SaslHandshake: error %d" % err
        token, _ = iam.oauthbearer_token(BOB)
        re_resp = eager.authenticate(iam.oauthbearer_message(token))
        assert re_resp["error"] == 0, re_resp
        assert 0 < re_resp["session_lifetime_ms"] <= REAUTH_MS, re_resp

        # Wait out the lazy session (this wait is the point of the test).
        time.sleep(max(0.0, authed_at + life / 1000.0 + 0.3 - time.monotonic()))
        lazy.send(iam.metadata, None)
        left = kw.wait_closed(lazy.sock, timeout=5)
        assert left is None, "Metadata after session expiry: %s" % left
        # The re-authenticated connection outlives the first session.
        md = kw.parse_metadata(kw.METADATA_V, eager.roundtrip(iam.metadata, None))
        assert md["brokers"], md
    finally:
        lazy.close()
        eager.close()
    line = b.wait_for_log(r"client=mskmock-it-lazy principal=IAM\.%s: SASL session expired at \S+; "
                          r"Metadata closes the connection without a reply" % re.escape(ALICE.principal),
                          since=since)
    assert line, b.log_tail()
    assert b.wait_for_log(r"client=mskmock-it-eager re-authenticated as IAM\.%s via OAUTHBEARER"
                          % re.escape(BOB.principal), since=since), b.log_tail()

    # Reconnecting is the cure: a new connection authenticates and is served.
    with SaslConn(b.sasl_plaintext_port, client_id="mskmock-it-lazy") as again:
        resp = again.login_oauthbearer(ALICE)
        assert 0 < resp["session_lifetime_ms"] <= REAUTH_MS, resp
        md = kw.parse_metadata(kw.METADATA_V, again.roundtrip(iam.metadata, None))
        assert md["brokers"], md
