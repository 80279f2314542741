"""IAM authentication with kafkajs and franz-go: MSK's TLS + SASL listener, both mechanisms,
long-term keys and role credentials from mskmock's container-credentials endpoint, KIP-368
re-authentication, the credential-rotation failures ("every six hours on ECS"), and the JS
signer's fractional X-Amz-Expires.

Clients (tests/clients/node, tests/clients/go; options in their headers):
  kafkajs 2.2.4   OAUTHBEARER with aws-msk-iam-sasl-signer-js (oauthBearerProvider), AWS_MSK_IAM
                  with @jm18457/kafkajs-msk-iam-authentication-mechanism
  franz-go        OAUTHBEARER with aws-msk-iam-sasl-signer-go (pkg/sasl/oauth), AWS_MSK_IAM with
                  franz-go's pkg/sasl/aws
  kafka-go        AWS_MSK_IAM with kafka-go's sasl/aws_msk_iam_v2 (test_kafka_go_aws_msk_iam)
Credentials always come from the AWS SDKs' default chains (iam.aws_env: keys in the environment,
or AWS_CONTAINER_CREDENTIALS_FULL_URI = the broker's endpoint).

  test_roundtrip_sasl_ssl            each client x mechanism x (keys, role): create a topic,
                                     produce and consume 1,000 records over SASL_SSL trusting the
                                     generated CA; the broker authenticated exactly that principal
                                     with exactly that mechanism and refused nothing
  test_roundtrip_sasl_plaintext      the same over the SASL listener without TLS (100 records)
  test_reauthentication              connections.max.reauth.ms=10000: both clients produce and
                                     consume for 60 s (one record every 50 ms) with no error,
                                     every record arrives, the log shows each client
                                     re-authenticating with each mechanism
  test_rotation_*                    role credentials rotated every 4 s, valid 6 s; franz-go with
                                     the Go signer (flat 900 s tokens), optionally caching the
                                     token as librdkafka and the Java client do; one run per
                                     iam.token.invalidation mode, each asserting that mode's
                                     defining effect (docs/reproductions/credential-rotation.md)
  test_js_signer_fractional_expires  credentials 300.5 s from expiry: the JS signer writes a
                                     fractional X-Amz-Expires and MSK (and so mskmock) answers
                                     "[<uuid>]: Invalid authentication payload"
  test_reauth_*_kafka_rule           two KIP-368 rules of Apache Kafka's SocketServer/KafkaChannel
                                     checked on the wire (regression tests: mskmock broke both
                                     at first)

Runtime: about 2 minutes (the 60 s re-authentication run and five 12 s rotation runs dominate).
"""

import contextlib
import concurrent.futures
import json
import re
import time
import urllib.request
import uuid
from datetime import datetime, timezone

import pytest

from harness import running
from iam import (
    ALICE,
    ERR_ILLEGAL_SASL_STATE,
    REGION,
    ROLE,
    IamBroker,
    SaslConn,
    aws_env,
    finish_client,
    oauthbearer_message,
    oauthbearer_token,
    run_client_env,
    start_client,
    write_identities,
)

CLIENT_ID = {"node": "mskmock-test-kafkajs", "go": "mskmock-test-franz-go"}
MECHANISMS = ("OAUTHBEARER", "AWS_MSK_IAM")
UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
SESSION_MIN_MS = 1000  # iam.session.min.ms default


# -- helpers -----------------------------------------------------------------------------

@contextlib.contextmanager
def iam_broker(tmp_path, config=None, broker_count=3):
    """A running IamBroker (3 brokers: clients create topics with the default replication
    factor, which MSK fixes at 3) with ALICE, BOB and ROLE; stopped (exit 0 checked) after."""
    ids = write_identities(tmp_path / "identities.json")
    with running(IamBroker(ids, broker_count=broker_count, config=config)) as b:
        yield b


def iam_args(broker, mechanism, protocol="SASL_SSL"):
    args = ["--security-protocol", protocol, "--mechanism", mechanism, "--region", REGION]
    if protocol == "SASL_SSL":
        args += ["--ca", broker.ca_path]
    return args


def bootstrap(broker, protocol="SASL_SSL"):
    return broker.iam_bootstrap if protocol == "SASL_SSL" else broker.sasl_plaintext_bootstrap


def creds_env(broker, creds):
    return aws_env(identity=ALICE) if creds == "keys" else aws_env(role_uri=broker.role_uri())


def signer_tokens(stderr):
    """The `signer-token {...}` lines both clients write for every OAUTHBEARER token."""
    return [json.loads(m) for m in re.findall(r"^signer-token (\{.*\})$", stderr, re.M)]


def events(stdout):
    """Duration mode: (events, summary) from a client's JSON lines."""
    objs = [json.loads(ln) for ln in stdout.splitlines() if ln.startswith("{")]
    assert objs, "no JSON output"
    return objs[:-1], objs[-1]


def log_ms(line):
    """Unix ms of a broker log line ("2026-12-02T09:27:23.024Z info ...")."""
    return iso_ms(line.split(" ", 1)[0])


def iso_ms(s):
    fmt = "%Y-%m-%dT%H:%M:%S.%fZ" if "." in s else "%Y-%m-%dT%H:%M:%SZ"
    return int(datetime.strptime(s, fmt).replace(tzinfo=timezone.utc).timestamp() * 1000)


def log_lines(broker, since=0, pattern=None):
    lines = broker.log_since(since).splitlines()
    rx = re.compile(pattern) if pattern else None
    return [ln for ln in lines if re.match(r"\d{4}-\d\d-\d\dT", ln) and (not rx or rx.search(ln))]


def refusals(broker, since=0):
    return log_lines(broker, since, r"refused error=SASL_AUTHENTICATION_FAILED")


def create_topic(lang, broker, topic, partitions, mechanism, env, protocol="SASL_SSL", extra=()):
    run_client_env(lang, ["create-topic", "--bootstrap", bootstrap(broker, protocol), "--topic", topic,
                          "--partitions", partitions] + iam_args(broker, mechanism, protocol) + list(extra), env)


# -- 1. produce and consume over the IAM listeners -----------------------------------------

@pytest.fixture(scope="module")
def shared_broker(tmp_path_factory):
    with iam_broker(tmp_path_factory.mktemp("iam-node-go")) as b:
        yield b


def roundtrip(broker, lang, mechanism, creds, count, protocol):
    since = broker.log_size()
    env = creds_env(broker, creds)
    topic = "iam-%s-%s-%s-%s" % (lang, mechanism.lower().replace("_", "-"), creds, uuid.uuid4().hex[:6])
    iam = iam_args(broker, mechanism, protocol)
    b = bootstrap(broker, protocol)
    create_topic(lang, broker, topic, 3, mechanism, env, protocol)
    produced = run_client_env(lang, ["produce", "--bootstrap", b, "--topic", topic, "--partitions", 3,
                                     "--count", count, "--compression", "none"] + iam, env)
    assert produced.json == {"produced": count}
    consumed = run_client_env(lang, ["consume", "--bootstrap", b, "--topic", topic, "--partitions", 3,
                                     "--count", count] + iam, env)
    assert consumed.json["consumed"] == count, consumed.describe()

    log = broker.log_since(since)
    principal = ALICE.principal if creds == "keys" else ROLE.principal
    auths = re.findall(r"client=%s authenticated as IAM\.(\S+) via (\S+), session (\d+) ms"
                       % CLIENT_ID[lang], log)
    assert auths, "no authentication of %s in the broker log\n%s" % (CLIENT_ID[lang], broker.log_tail())
    wrong = [a for a in auths if (a[0], a[1]) != (principal, mechanism)]
    assert not wrong, "expected every session as %s via %s, got %s" % (principal, mechanism, wrong)
    # a 900 s token (or 6 h role credentials): the session runs to the token's expiry
    assert all(800000 < int(a[2]) <= 900000 for a in auths), auths
    assert not refusals(broker, since), "\n".join(refusals(broker, since))
    if creds == "role":
        served = re.findall(r"cred: peer=\S+ GET /role/%s 200 role=%s access_key_id=(ASIA\w+)"
                            % (ROLE.name, ROLE.name), log)
        assert served, "the client never fetched the role's credentials from the endpoint"
    if mechanism == "OAUTHBEARER":
        tokens = [t for r in (produced, consumed) for t in signer_tokens(r.stderr)]
        assert tokens, "no signer-token line on stderr"
        for t in tokens:
            assert t["host"] == "kafka.%s.amazonaws.com" % REGION, t
            assert t["x_amz_expires"] == "900", t
            assert t["session_token"] == (creds == "role"), t
            if creds == "keys":
                assert t["akid"] == ALICE.access_key_id, t
            else:
                assert t["akid"] in served, (t, served)


@pytest.mark.parametrize("creds", ["keys", "role"])
@pytest.mark.parametrize("lang,mechanism", [("node", "OAUTHBEARER"), ("node", "AWS_MSK_IAM"),
                                            ("go", "OAUTHBEARER"), ("go", "AWS_MSK_IAM")],
                         ids=["kafkajs-oauthbearer", "kafkajs-aws-msk-iam",
                              "franz-go-oauthbearer", "franz-go-aws-msk-iam"])
def test_roundtrip_sasl_ssl(shared_broker, lang, mechanism, creds):
    roundtrip(shared_broker, lang, mechanism, creds, 1000, "SASL_SSL")


@pytest.mark.parametrize("lang,mechanism,creds", [("node", "OAUTHBEARER", "keys"),
                                                  ("node", "AWS_MSK_IAM", "role"),
                                                  ("go", "OAUTHBEARER", "role"),
                                                  ("go", "AWS_MSK_IAM", "keys")],
                         ids=["kafkajs-oauthbearer-keys", "kafkajs-aws-msk-iam-role",
                              "franz-go-oauthbearer-role", "franz-go-aws-msk-iam-keys"])
def test_roundtrip_sasl_plaintext(shared_broker, lang, mechanism, creds):
    roundtrip(shared_broker, lang, mechanism, creds, 100, "SASL_PLAINTEXT")


@pytest.mark.parametrize("creds", ["keys", "role"])
def test_kafka_go_aws_msk_iam(shared_broker, creds):
    """segmentio/kafka-go 0.4.51 with its own AWS_MSK_IAM mechanism (sasl/aws_msk_iam_v2,
    aws-sdk-go-v2's v4 signer) over TLS: its Writer and partition Reader authenticate as the
    identity or role and work; a wrong secret is refused with 58 (kafka-go prints no reason)."""
    broker, since = shared_broker, shared_broker.log_size()
    env = creds_env(broker, creds)
    topic = "iam-kafka-go-%s-%s" % (creds, uuid.uuid4().hex[:6])
    create_topic("go", broker, topic, 1, "AWS_MSK_IAM", env)
    def args(timeout_s):
        return ["kafka-go", "--bootstrap", broker.iam_bootstrap, "--topic", topic, "--group", topic, "--count", 20,
                "--timeout", timeout_s] + iam_args(broker, "AWS_MSK_IAM")
    out = run_client_env("go", args(6), env).json
    assert out["write"] == {"ok": True, "produced": 20}, out
    assert out["read_partition"] == {"ok": True, "consumed": 20}, out
    principal = ALICE.principal if creds == "keys" else ROLE.principal
    auths = re.findall(r"client=mskmock-test-kafka-go authenticated as IAM\.(\S+) via (\S+),", broker.log_since(since))
    assert auths and set(auths) == {(principal, "AWS_MSK_IAM")}, auths
    assert not refusals(broker, since), "\n".join(refusals(broker, since))
    if creds == "keys":
        since = broker.log_size()
        bad = run_client_env("go", args(2), aws_env(identity=ALICE, secret="wrong" * 8)).json
        assert not bad["write"]["ok"] and "[58] SASL Authentication Failed" in bad["write"]["error"], bad
        assert any("signature does not match (access key %s)" % ALICE.access_key_id in ln
                   for ln in refusals(broker, since)), broker.log_tail()


# -- 2. KIP-368 re-authentication ------------------------------------------------------------

REAUTH_MS = 10000
RUN_S = 60  # the issue asks for 60 s across several re-authentications


def test_reauthentication(tmp_path):
    """Sessions capped at 10 s: 60 s of produce and consume need ~6 re-authentications per
    connection. kafkajs re-authenticates when less than reauthenticationThreshold is left; its
    default (10 s) equals the whole session, so it would re-authenticate before every request,
    which Apache Kafka refuses more often than once a second (test_reauth_twice_within_one_second):
    2 s is what a user with 10 s sessions sets."""
    with iam_broker(tmp_path, {"connections.max.reauth.ms": REAUTH_MS}) as b:
        keys, role = aws_env(identity=ALICE), aws_env(role_uri=b.role_uri())
        create_topic("go", b, "reauth-go", 3, "OAUTHBEARER", keys)
        kjs = ["--reauth-threshold-ms", 2000]
        create_topic("node", b, "reauth-node", 3, "OAUTHBEARER", role, extra=kjs)
        since = b.log_size()
        specs = {
            # name: (lang, args, env)
            "franz-go produce (OAUTHBEARER, keys)": ("go", ["produce", "--topic", "reauth-go", "--duration", RUN_S]
                                                     + iam_args(b, "OAUTHBEARER"), keys),
            "franz-go consume (AWS_MSK_IAM, keys)": ("go", ["consume", "--topic", "reauth-go", "--duration", RUN_S + 4]
                                                     + iam_args(b, "AWS_MSK_IAM"), keys),
            "kafkajs produce (OAUTHBEARER, role)": ("node", ["produce", "--topic", "reauth-node", "--duration", RUN_S]
                                                    + iam_args(b, "OAUTHBEARER") + kjs, role),
            "kafkajs consume (AWS_MSK_IAM, role)": ("node", ["consume", "--topic", "reauth-node", "--duration", RUN_S + 4]
                                                    + iam_args(b, "AWS_MSK_IAM") + kjs, role),
        }
        t0 = time.monotonic()
        procs = {name: start_client(lang, args[:1] + ["--bootstrap", b.iam_bootstrap, "--partitions", 3] + args[1:], env)
                 for name, (lang, args, env) in specs.items()}
        runs = {name: finish_client(p, timeout=RUN_S + 60, t0=t0) for name, p in procs.items()}

        problems = []
        summaries = {}
        for name, run in runs.items():
            evs, summary = events(run.stdout)
            summaries[name] = summary
            print("%s: %s" % (name, summary))
            bad = [e for e in evs if e["event"] in ("error", "log-error", "connect-error")
                   or (e["event"] == "log" and e.get("level") == "ERROR")]
            if bad or summary["errors"]:
                problems.append("%s: %d error(s), e.g. %s\n%s" % (name, summary["errors"], bad[:3], run.stderr[-3000:]))
        assert not problems, "\n".join(problems)
        for lang, prod, cons in (("franz-go", "franz-go produce (OAUTHBEARER, keys)", "franz-go consume (AWS_MSK_IAM, keys)"),
                                 ("kafkajs", "kafkajs produce (OAUTHBEARER, role)", "kafkajs consume (AWS_MSK_IAM, role)")):
            n = summaries[prod]["produced"]
            # one record per 50 ms is 800; a loaded 2-core machine gets fewer, never this few
            assert n >= RUN_S * 20 * 0.4, "%s produced only %d records in %d s" % (lang, n, RUN_S)
            assert summaries[cons]["consumed"] == n, (
                "%s consumed %d of the %d records produced" % (lang, summaries[cons]["consumed"], n))

        reauths = log_lines(b, since, r" re-authenticated as ")
        for lang in ("node", "go"):
            for mech in MECHANISMS:
                mine = [ln for ln in reauths if "client=%s " % CLIENT_ID[lang] in ln and " via %s," % mech in ln]
                assert len(mine) >= 2, ("%s re-authenticated %d time(s) via %s in %d s with %d ms sessions\n%s"
                                        % (CLIENT_ID[lang], len(mine), mech, RUN_S, REAUTH_MS, b.log_tail()))
        assert all(re.search(r"session 10000 ms", ln) for ln in reauths), reauths[:5]
        assert not refusals(b, since), "\n".join(refusals(b, since))
        # An idle connection may re-authenticate after its expiry (test_reauth_after_session_expiry).
        # franz-go re-authenticates 1 s before the end, but a request it checked in time can reach
        # the wire later on a loaded 2-core machine (seen once in CI, 1.4 s late): the broker closes
        # that connection as MSK would and the client retries unharmed (no error above). One such
        # close is the client's scheduling; more means re-authentication is not keeping up.
        expired = log_lines(b, since, r"SASL session expired at")
        print("\n".join(["sessions that expired before their client re-authenticated:"] + expired))
        assert len(expired) <= 1, "\n".join(expired)


# -- 3. credential rotation: the "every six hours on ECS" class of bugs -----------------------

ROTATION_MS = 4000
LIFETIME_MS = 6000
ROTATION_RUN_S = 12


def rotation_run(tmp_path, mode, token_cache):
    """franz-go produces one record every 50 ms for 12 s with OAUTHBEARER tokens from the Go
    signer (always X-Amz-Expires=900) signed with the role's credentials from the endpoint.
    Returns everything the assertions and the reproduction document need."""
    config = {
        "iam.credentials.rotation.interval.ms": ROTATION_MS,
        "iam.credentials.lifetime.ms": LIFETIME_MS,
        "iam.token.invalidation": mode,
        # re-authenticate every ~3 s, so tokens are presented again across rotations and expiries
        "connections.max.reauth.ms": 3000,
    }
    with iam_broker(tmp_path, config) as b:
        env = aws_env(role_uri=b.role_uri())
        create_topic("go", b, "rot", 1, "OAUTHBEARER", env)
        since = b.log_size()
        args = ["produce", "--bootstrap", b.iam_bootstrap, "--topic", "rot", "--partitions", 1,
                "--duration", ROTATION_RUN_S] + iam_args(b, "OAUTHBEARER")
        if token_cache:
            args.append("--token-cache")
        run = finish_client(start_client("go", args, env), timeout=ROTATION_RUN_S + 60)
        evs, summary = events(run.stdout)
        log = log_lines(b, since)
        full_log = log_lines(b)

    tokens = [e for e in evs if e["event"] == "token"]
    assert tokens, "no token was signed\n" + run.stderr[-3000:]
    c0 = tokens[0]["akid"]
    served = {}
    for ln in full_log:
        m = re.search(r"cred: .* access_key_id=(\w+) expiration=(\S+)", ln)
        if m:
            served.setdefault(m.group(1), iso_ms(m.group(2)))
    assert c0 in served, "the endpoint never served %s" % c0
    rotations = [log_ms(ln) for ln in full_log if "iam: rotated the credentials" in ln]
    r = {
        "mode": mode, "cache": token_cache, "events": evs, "summary": summary, "log": log,
        "c0": c0, "c0_expiry": served[c0], "served": served,
        "rotations": rotations,
        "first_rotation_after_c0": min(t for t in rotations if t > tokens[0]["t"] - 50),
        "client_errors": [e for e in evs if e["event"] in ("error", "connect-error")],
        "refusals": [ln for ln in log if "refused error=SASL_AUTHENTICATION_FAILED" in ln],
        "expired_closes": [ln for ln in log if "SASL session expired at" in ln],
        "superseded": [ln for ln in log if "superseded by rotation" in ln and "session ends" in ln],
        "akids": sorted({t["akid"] for t in tokens}),
        "t0": tokens[0]["t"],
    }
    print_timeline(r)
    return r


def print_timeline(r):
    """What the client saw, relative to its first token (for the reproduction document); one
    print, so that runs finishing together do not interleave their lines."""
    t0 = r["t0"]
    out = ["\n== iam.token.invalidation=%s, token cache %s ==" % (r["mode"], "on" if r["cache"] else "off"),
           "C0 = %s, expires at +%d ms; rotations at %s"
           % (r["c0"], r["c0_expiry"] - t0, ", ".join("+%d" % (t - t0) for t in r["rotations"] if t >= t0 - 50))]
    for e in r["events"]:
        if e["event"] in ("connect",) or (e["event"] == "log" and e.get("level") != "ERROR"):
            continue
        what = {k: v for k, v in e.items() if k in ("akid", "x_amz_expires", "node", "message", "err", "i")}
        out.append("  +%6d ms  %-13s %s" % (e["t"] - t0, e["event"], json.dumps(what)[:240]))
    for ln in r["log"]:
        if any(s in ln for s in ("refused", "expired at", "superseded", "rotated", "re-authenticated")):
            out.append("  broker +%6d ms  %s" % (log_ms(ln) - t0, ln.split(" ", 3)[-1][:230]))
    out.append("  summary: %s" % r["summary"])
    print("\n".join(out))


ROTATION_CASES = [("credential-expiry", True), ("credential-expiry", False), ("rotation", True),
                  ("rotation", False), ("token-expiry", True)]


@pytest.fixture(scope="module")
def rotation_runs(tmp_path_factory):
    """The five rotation runs at once, each with its own broker and client: the 12 s of schedule
    they wait through pass once for all of them instead of five times. A run that failed is
    re-raised by the test that reads it (rotation_result), not by the others."""
    with concurrent.futures.ThreadPoolExecutor(len(ROTATION_CASES)) as ex:
        futures = {case: ex.submit(rotation_run, tmp_path_factory.mktemp("rotation"), *case) for case in ROTATION_CASES}
        concurrent.futures.wait(futures.values())
    return futures


def rotation_result(runs, mode, token_cache):
    return runs[(mode, token_cache)].result()


def first_failure(r):
    times = [e["t"] for e in r["client_errors"]] + [log_ms(ln) for ln in r["refusals"]]
    return min(times) if times else None


def test_rotation_credential_expiry_cached_token(rotation_runs):
    """MSK's behaviour: rotation does not invalidate anything; a token is good until the
    credentials that signed it expire. A client that reuses a token for 80 % of the flat 900 s
    the signer advertised (librdkafka, the Java login refresh) keeps presenting it after the
    rotation and starts failing when those old credentials run out ("Session too short" in the
    last iam.session.min.ms, then "Access denied"), and never recovers within the token's
    advertised life."""
    r = rotation_result(rotation_runs, "credential-expiry", True)
    assert r["akids"] == [r["c0"]], "the cached token should be the only one"
    fail = first_failure(r)
    assert fail is not None, "no failure although credentials %s expired at +%d ms" % (r["c0"], r["c0_expiry"] - r["t0"])
    rot = r["first_rotation_after_c0"]
    assert rot < r["c0_expiry"]
    # the defining effect: nothing ends at the rotation, failures begin with the old credentials' expiry
    assert not r["superseded"] and not closed_at(r, rot), (
        "a session ended at the rotation:\n" + "\n".join(r["superseded"] + r["expired_closes"]))
    assert fail >= r["c0_expiry"] - SESSION_MIN_MS - 50, (
        "first failure at +%d ms, before credentials %s were within iam.session.min.ms of their "
        "expiry (+%d ms); rotation at +%d ms" % (fail - r["t0"], r["c0"], r["c0_expiry"] - r["t0"], rot - r["t0"]))
    msgs = [e.get("message", "") for e in r["client_errors"]]
    assert msgs and all(re.search(r"\[%s\]: (Session too short|Access denied)" % UUID, m) for m in msgs), msgs
    assert any(re.search(r"\[%s\]: Access denied" % UUID, m) for m in msgs), msgs
    assert all(re.search(r": (Session too short|Access denied): ", ln) for ln in r["refusals"]), r["refusals"]
    late = [ln for ln in r["refusals"] if log_ms(ln) >= r["c0_expiry"]]
    assert late and all("Access denied: credentials of access key '%s' expired" % r["c0"] in ln for ln in late), late
    # no recovery: the client keeps the token for 720 s
    assert r["summary"]["errors"] >= 1


def test_rotation_credential_expiry_fresh_token(rotation_runs):
    """The same broker, but a token signed anew at every (re-)authentication (franz-go's own
    pattern): each one uses the credentials the endpoint serves now, so rotations go unnoticed."""
    r = rotation_result(rotation_runs, "credential-expiry", False)
    assert not r["client_errors"] and not r["refusals"], (r["client_errors"], r["refusals"])
    assert len(r["akids"]) >= 2, "expected tokens signed with rotated credentials, got %s" % r["akids"]
    assert not r["superseded"] and not r["expired_closes"], r["superseded"] + r["expired_closes"]
    assert r["summary"]["produced"] >= ROTATION_RUN_S * 20 * 0.4, r["summary"]


def session_ends_after(r, when):
    """How each session marked at the rotation `when` ended: (log ms, how) for a close at its
    next request, or for the re-authentication the client happened to send first (refused with a
    cached token, accepted with a fresh one); both are the broker acting on the rotation."""
    conns = {m.group(1) for m in (re.search(r" conn=(\d+) ", ln) for ln in r["superseded"]) if m}
    ends = [(t, "closed at its next request") for t in closed_at(r, when)]
    for ln in r["log"]:
        m = re.search(r" conn=(\d+) ", ln)
        if not m or m.group(1) not in conns or log_ms(ln) < when:
            continue
        if "api=SaslAuthenticate" in ln and "refused" in ln:
            ends.append((log_ms(ln), "re-authentication refused"))
        elif "re-authenticated as" in ln:
            ends.append((log_ms(ln), "re-authenticated with new credentials"))
    return sorted(ends)


def rotation_ends_sessions(r):
    """iam.token.invalidation=rotation: at the rotation every session signed with the superseded
    credentials is marked, and the next request on it (the producer sends every 50 ms) closes
    the connection without a reply; the client sees a disconnect. When the client's own
    re-authentication comes first, that is the next request: refused for a cached token."""
    rot = r["first_rotation_after_c0"]
    assert any(r["c0"] in ln for ln in r["superseded"]), (
        "no session signed with %s was ended at the rotation\n%s" % (r["c0"], "\n".join(r["log"])))
    ends = session_ends_after(r, rot)
    assert ends and ends[0][0] - rot < 1500, (
        "the producer's next request after the rotation (+%d ms) did not end its session; on the marked "
        "connections after it:\n%s" % (rot - r["t0"], "\n".join("+%d ms %s" % (t - r["t0"], how) for t, how in ends)))
    if ends[0][1] != "re-authenticated with new credentials":
        disconnects = [e["t"] for e in r["events"] if e["event"] == "disconnect" and e["t"] >= rot]
        assert disconnects and min(disconnects) - rot < 2000, "client saw no disconnect after the rotation"
    return rot


def test_rotation_rotation_mode_cached_token(rotation_runs):
    """iam.token.invalidation=rotation (not MSK's behaviour): superseded credentials count as
    expired from the rotation on. The session ends at its next request after the rotation, and
    the cached token is refused from then on, before the old credentials' own expiry."""
    r = rotation_result(rotation_runs, "rotation", True)
    rot = rotation_ends_sessions(r)
    fail = first_failure(r)
    assert fail is not None and fail >= rot, "first failure at %s, rotation at %d" % (fail, rot)
    assert r["refusals"] and all("superseded by rotation" in ln and "Access denied" in ln for ln in r["refusals"]), r["refusals"]
    first_refusal = min(log_ms(ln) for ln in r["refusals"])
    assert first_refusal < r["c0_expiry"], (
        "with rotation mode the refusals start at the rotation (+%d ms), not at the credentials' "
        "expiry (+%d ms); first refusal +%d ms" % (rot - r["t0"], r["c0_expiry"] - r["t0"], first_refusal - r["t0"]))
    msgs = [e.get("message", "") for e in r["client_errors"]]
    assert msgs and all(re.search(r"\[%s\]: Access denied" % UUID, m) for m in msgs), msgs


def test_rotation_rotation_mode_fresh_token(rotation_runs):
    """Rotation mode with a fresh token per authentication: the session still ends at the
    rotation, and the client recovers on a new connection with the new credentials without a
    failed record."""
    r = rotation_result(rotation_runs, "rotation", False)
    rot = rotation_ends_sessions(r)
    assert not r["client_errors"] and not r["refusals"], (r["client_errors"], r["refusals"])
    after = [e for e in r["events"] if e["event"] == "token" and e["t"] > rot]
    assert after and after[0]["akid"] != r["c0"], "no token signed with the new credentials after the rotation"


def test_rotation_token_expiry_mode_cached_token(rotation_runs):
    """iam.token.invalidation=token-expiry (plain SigV4 semantics): only the token's own 900 s
    count. The one cached token keeps re-authenticating long after the credentials that signed
    it expired: no failure within the token's lifetime."""
    r = rotation_result(rotation_runs, "token-expiry", True)
    assert r["akids"] == [r["c0"]]
    assert not r["client_errors"] and not r["refusals"], (r["client_errors"], r["refusals"])
    assert not r["superseded"] and not r["expired_closes"], r["superseded"] + r["expired_closes"]
    late = [ln for ln in r["log"] if "client=%s re-authenticated" % CLIENT_ID["go"] in ln
            and log_ms(ln) > r["c0_expiry"]]
    assert late, "no re-authentication after credentials %s expired (+%d ms)" % (r["c0"], r["c0_expiry"] - r["t0"])
    assert r["summary"]["produced"] >= ROTATION_RUN_S * 20 * 0.4, r["summary"]


def closed_at(r, when):
    """Log times of connections closed because their session, which ended at `when` (±50 ms),
    had expired."""
    out = []
    for ln in r["expired_closes"]:
        m = re.search(r"SASL session expired at (\S+);", ln)
        if m and abs(iso_ms(m.group(1)) - when) <= 50:
            out.append(log_ms(ln))
    return out


def admin_post(broker, path, body=None):
    req = urllib.request.Request(broker.admin_url + path, method="POST",
                                 data=json.dumps(body or {}).encode())
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())


def test_rotation_on_demand_admin_api(tmp_path):
    """The seed reproduction (credential-expiry, cached token) without waiting for schedules: the
    role never rotates by itself and its credentials live an hour; the admin API rotates it now
    (MSK: nothing happens to the session), then expires the superseded credentials now. The
    session they signed ends at its next request and the cached token is refused with MSK's
    "Access denied", exactly as when the old credentials run out after a real rotation."""
    config = {"iam.credentials.rotation.interval.ms": 0, "iam.credentials.lifetime.ms": 3600000,
              "iam.token.invalidation": "credential-expiry"}
    with iam_broker(tmp_path, config) as b:
        env = aws_env(role_uri=b.role_uri())
        create_topic("go", b, "rot-now", 1, "OAUTHBEARER", env)
        since = b.log_size()
        args = ["produce", "--bootstrap", b.iam_bootstrap, "--topic", "rot-now", "--partitions", 1,
                "--duration", 8, "--token-cache"] + iam_args(b, "OAUTHBEARER")
        p = start_client("go", args, env)
        time.sleep(2.5)
        with urllib.request.urlopen(b.admin_url + "/v1/iam", timeout=10) as r:
            listing = r.read().decode()
        roles = {x["name"]: x for x in json.loads(listing)["roles"]}
        old = roles[ROLE.name]["current"]["access_key_id"]
        # the admin API lists identities without their secrets or session tokens
        with urllib.request.urlopen(b.role_uri(), timeout=10) as r:
            served = json.loads(r.read())
        assert served["AccessKeyId"] == old
        for secret in (served["SecretAccessKey"], served["Token"], ALICE.secret_access_key):
            assert secret not in listing
        rotated = admin_post(b, "/v1/iam/roles/%s/rotate" % ROLE.name)
        t_rotate = time.time() * 1000
        time.sleep(2)
        log = log_lines(b, since)
        c0 = [ln for ln in log if "client=%s authenticated" % CLIENT_ID["go"] in ln]
        assert c0, "the producer never authenticated\n" + "\n".join(log)
        assert rotated["current"]["access_key_id"] != old
        assert "SecretAccessKey" not in json.dumps(rotated) and "secret" not in json.dumps(rotated).lower()
        expired = admin_post(b, "/v1/iam/credentials/%s/expire" % old)
        t_expire = time.time() * 1000
        run = finish_client(p, timeout=60)
        evs, summary = events(run.stdout)
        log = log_lines(b, since)
    assert expired["sessions_ended"] >= 1 and not expired["role_rotated"], expired
    errors = [e for e in evs if e["event"] in ("error", "connect-error")]
    # the rotation alone changes nothing (MSK); the expiry ends the session and the cached token fails
    assert not [e for e in errors if e["t"] < t_expire - 50], errors
    assert errors and min(e["t"] for e in errors) - t_expire < 3000, (errors, summary)
    msgs = [e.get("message", "") for e in errors]
    assert any(re.search(r"\[%s\]: Access denied" % UUID, m) for m in msgs), msgs
    assert any("Access denied: credentials of access key '%s' expired" % old in ln for ln in log), "\n".join(log)
    assert any("admin API" in ln and "rotated now" in ln for ln in log)
    assert t_rotate < t_expire


# -- 4. the JS signer's fractional X-Amz-Expires ---------------------------------------------

def test_js_signer_fractional_expires(tmp_path):
    """aws-msk-iam-sasl-signer-js >= 1.0.1 caps the token at the credentials' expiry without
    rounding: with role credentials 300.5 s from expiry it signs X-Amz-Expires=300.4xx, a valid
    SigV4 signature that MSK refuses (aws/aws-sdk-net #4020 and #4254, the same bug in the .NET
    signer; docs/msk-behaviors.md#iam-tokens). The Go signer (always 900) and the kafkajs
    AWS_MSK_IAM mechanism (ttl "900") authenticate with the same credentials."""
    with iam_broker(tmp_path, {"iam.credentials.lifetime.ms": 300500}) as b:
        env = aws_env(role_uri=b.role_uri())
        iam = iam_args(b, "OAUTHBEARER")
        for attempt in range(3):
            since = b.log_size()
            run = run_client_env("node", ["create-topic", "--bootstrap", b.iam_bootstrap, "--topic", "frac",
                                          "--partitions", 1] + iam, env, check=False)
            tokens = signer_tokens(run.stderr)
            assert tokens, "no signer-token line\n" + run.describe()
            if "." in tokens[0]["x_amz_expires"]:
                break  # a whole-millisecond signing instant gives an integer (1 in 1000): sign again
        expires = tokens[0]["x_amz_expires"]
        assert re.fullmatch(r"\d+\.\d+", expires) and 290 < float(expires) < 301, tokens[0]
        assert run.rc != 0, "kafkajs authenticated with X-Amz-Expires=%s\n%s" % (expires, run.describe())
        m = re.search(r"\[(%s)\]: Invalid authentication payload" % UUID, run.stderr)
        assert m, "kafkajs did not report MSK's message\n" + run.describe()
        line = [ln for ln in refusals(b, since) if "request-id=%s" % m.group(1) in ln]
        assert line and "X-Amz-Expires '%s' is not an integer" % expires in line[0], (line, refusals(b, since))

        # the same credentials through signers that write an integer
        create_topic("go", b, "frac-go", 1, "OAUTHBEARER", env)
        create_topic("node", b, "frac-node", 1, "AWS_MSK_IAM", env)


# -- KIP-368 rules of Apache Kafka that mskmock does not follow yet ------------------------

@pytest.fixture
def raw_reauth_broker(tmp_path):
    pytest.importorskip("aws_msk_iam_sasl_signer", reason="the Python signer signs the raw tokens")
    with iam_broker(tmp_path, {"connections.max.reauth.ms": 2000}, broker_count=1) as b:
        yield b


def test_reauth_after_session_expiry_kafka_rule(raw_reauth_broker):
    """Apache Kafka (SocketServer.processCompletedReceives) checks expiry only for requests that
    do not start a re-authentication: a SaslHandshake on an expired session begins one (KIP-368),
    and the SaslAuthenticate that follows is handled by the authenticator, so a client past its
    session expiry can still re-authenticate as long as its next request is a SaslHandshake.
    franz-go and kafkajs both re-authenticate lazily before the next request, so a connection
    idle past its session expiry (a metadata or coordinator connection) does exactly this.
    Regression: mskmock first answered the handshake, then closed the connection at
    SaslAuthenticate ("SASL session expired ...; SaslAuthenticate closes the connection")."""
    b = raw_reauth_broker
    with SaslConn(b.sasl_plaintext_port) as c:
        first = c.login_oauthbearer(ALICE)
        assert first["session_lifetime_ms"] == 2000
        time.sleep(2.5)  # the point: let the session expire
        err, _ = c.handshake("OAUTHBEARER")
        assert err == 0
        token, _ = oauthbearer_token(ALICE)
        resp = c.authenticate(oauthbearer_message(token))
        assert resp["error"] == 0 and resp["session_lifetime_ms"] == 2000, resp


def test_reauth_twice_within_one_second_kafka_rule(raw_reauth_broker):
    """KafkaChannel.maybeBeginServerReauthentication refuses to start a re-authentication less
    than 1 s (MIN_REAUTH_INTERVAL_ONE_SECOND_NANOS) after the previous one started; the
    SaslHandshake then goes the normal request path and is answered ILLEGAL_SASL_STATE (34).
    This is what kafkajs with its default reauthenticationThreshold (10 s) meets against short
    sessions. Regression: mskmock used to accept any number of re-authentications back to back."""
    b = raw_reauth_broker
    with SaslConn(b.sasl_plaintext_port) as c:
        c.login_oauthbearer(ALICE)
        token, _ = oauthbearer_token(ALICE)
        err, _ = c.handshake("OAUTHBEARER")  # the first re-authentication: allowed at any time
        assert err == 0
        assert c.authenticate(oauthbearer_message(token))["error"] == 0
        err, _ = c.handshake("OAUTHBEARER")  # a second one within 1 s of the first's start
        assert err == ERR_ILLEGAL_SASL_STATE, "SaslHandshake answered %d, expected ILLEGAL_SASL_STATE (34)" % err
