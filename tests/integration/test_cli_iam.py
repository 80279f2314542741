"""The built-in client over TLS and IAM (issue 31, item 1): `--sasl-mechanism AWS_MSK_IAM` and
`OAUTHBEARER` against the IAM listener with the CA the broker generated, credentials from the
environment, a shared credentials file with AWS_PROFILE, and the broker's own
container-credentials endpoint; the broker's refusal text on a wrong secret; KIP-368
re-authentication during a long consume."""

import re

import pytest

import iam
from harness import broker_env, running
from test_cli import cli, name, ok

MECHS = ["AWS_MSK_IAM", "OAUTHBEARER"]


@pytest.fixture(scope="module")
def ib(tmp_path_factory):
    ids = iam.write_identities(tmp_path_factory.mktemp("ids") / "identities.json")
    with running(iam.IamBroker(ids, broker_count=3)) as b:
        yield b


def secure(b, mech, *args):
    return list(args) + ["--sasl-mechanism", mech, "--ca-file", str(b.ca_path)]


def env_with(source, b, tmp_path):
    """An environment whose only AWS credentials come from source (and the region from AWS_REGION)."""
    base = broker_env()
    if source == "env":
        return iam.aws_env(iam.ALICE, base=base), iam.ALICE.principal
    if source == "profile":
        creds = tmp_path / "credentials"
        creds.write_text("[default]\naws_access_key_id = AKIAWRONGWRONGWRONG0\naws_secret_access_key = nope\n\n"
                         "[cli-test]\naws_access_key_id = %s\naws_secret_access_key = %s\n"
                         % (iam.BOB.access_key_id, iam.BOB.secret_access_key))
        env = iam.aws_env(base=base)
        env.update(AWS_SHARED_CREDENTIALS_FILE=str(creds), AWS_PROFILE="cli-test")
        return env, iam.BOB.principal
    assert source == "container"
    env = iam.aws_env(role_uri=b.role_uri(), base=base)
    env["AWS_CONTAINER_AUTHORIZATION_TOKEN"] = "sent-and-ignored"
    return env, iam.ROLE.principal


@pytest.mark.parametrize("source", ["env", "profile", "container"])
@pytest.mark.parametrize("mech", MECHS)
def test_topics_and_records_over_tls_and_iam(ib, tmp_path, mech, source):
    env, principal = env_with(source, ib, tmp_path)
    bs = ib.iam_bootstrap
    since = ib.log_size()
    t = name("iam")
    assert ok(cli(bs, *secure(ib, mech, "topic", "create", t, "-p", "2"), env=env)).startswith("created topic %s" % t)
    out = ok(cli(bs, *secure(ib, mech, "produce", t, "-k", ":"), input="a:1\nb:2\nc:3\n", env=env))
    assert out.startswith("acknowledged 3 record(s) to %s" % t), out
    got = ok(cli(bs, *secure(ib, mech, "consume", t, "-n", "3", "-f", "%k=%v\\n", "--timeout", "10"), env=env))
    assert sorted(got.split()) == ["a=1", "b=2", "c=3"]
    assert t in ok(cli(bs, *secure(ib, mech, "topic", "list"), env=env))
    # the broker checked a token of this mechanism signed with these credentials
    line = ib.wait_for_log(r"client=mskmock-cli authenticated as IAM\.%s via %s" % (re.escape(principal), mech), since)
    assert line, ib.log_tail()


def test_group_commands_over_iam(ib):
    env = iam.aws_env(iam.ALICE, base=broker_env())
    bs, t, g = ib.iam_bootstrap, name("iamg"), name("g")
    ok(cli(bs, *secure(ib, "OAUTHBEARER", "topic", "create", t, "-p", "1"), env=env))
    ok(cli(bs, *secure(ib, "OAUTHBEARER", "produce", t), input="x\ny\n", env=env))
    assert ok(cli(bs, *secure(ib, "AWS_MSK_IAM", "consume", t, "-g", g, "-n", "2"), env=env)) == "x\ny\n"
    out = ok(cli(bs, *secure(ib, "AWS_MSK_IAM", "group", "describe", g), env=env))
    assert re.search(r"^%s\s+0\s+2\s+2\s+0\s+-$" % t, out, re.M), out


@pytest.mark.parametrize("mech", MECHS)
def test_a_wrong_secret_fails_with_the_brokers_refusal(ib, mech):
    env = iam.aws_env(iam.ALICE, secret="not/the+secret/at/all/0123456789abcdefgh", base=broker_env())
    p = cli(ib.iam_bootstrap, *secure(ib, mech, "topic", "list"), env=env)
    assert p.returncode == 1 and p.stdout == "", p
    # MSK's text with its request id, as the broker sent it, and where the key came from
    m = re.search(r"SASL %s authentication failed: SASL_AUTHENTICATION_FAILED: \[([0-9a-f-]{36})\]: Access denied"
                  % mech, p.stderr)
    assert m, p.stderr
    assert "credentials from the environment (AWS_ACCESS_KEY_ID), key %s" % iam.ALICE.access_key_id in p.stderr, p
    assert ib.wait_for_log(re.escape(m.group(1))), "the broker's log names the same request id"


def test_what_is_missing_is_named(ib, tmp_path):
    bs, env = ib.iam_bootstrap, iam.aws_env(iam.ALICE, base=broker_env())
    p = cli(bs, "topic", "list", "--sasl-mechanism", "AWS_MSK_IAM", env=env)   # no --ca-file
    assert p.returncode == 1 and "the broker's certificate is not trusted" in p.stderr and "--ca-file" in p.stderr, p
    p = cli(bs, "topic", "list", "--tls", "--ca-file", str(ib.ca_path), env=env)   # TLS without SASL
    assert p.returncode == 1 and "connection closed by the broker" in p.stderr and "--sasl-mechanism" in p.stderr, p
    p = cli(bs, *secure(ib, "AWS_MSK_IAM", "topic", "list"), env=iam.aws_env(base=broker_env()))
    assert p.returncode == 1 and "no AWS credentials" in p.stderr, p
    noregion = dict(env)
    del noregion["AWS_REGION"], noregion["AWS_DEFAULT_REGION"]
    p = cli(bs, *secure(ib, "AWS_MSK_IAM", "topic", "list"), env=noregion)
    assert p.returncode == 1 and "no AWS region" in p.stderr, p
    assert ok(cli(bs, *secure(ib, "AWS_MSK_IAM", "topic", "list", "--region", iam.REGION), env=noregion))
    cfg = tmp_path / "credentials"
    cfg.write_text("[default]\nrole_arn = arn:aws:iam::123456789012:role/app\nsource_profile = base\n")
    penv = dict(iam.aws_env(base=broker_env()), AWS_SHARED_CREDENTIALS_FILE=str(cfg))
    p = cli(bs, *secure(ib, "AWS_MSK_IAM", "topic", "list"), env=penv)
    assert p.returncode == 1 and "gets its credentials through role_arn" in p.stderr, p
    p = cli(bs, *secure(ib, "AWS_MSK_IAM", "topic", "list"), env=dict(penv, AWS_PROFILE="absent"))
    assert p.returncode == 1 and "AWS_PROFILE names profile absent" in p.stderr, p
    cenv = iam.aws_env(role_uri="http://192.0.2.1:80/role/app", base=broker_env())
    p = cli(bs, *secure(ib, "AWS_MSK_IAM", "topic", "list"), env=cenv)
    assert p.returncode == 1 and "plain http only to a loopback address" in p.stderr, p
    p = cli(bs, *secure(ib, "OAUTHBEARER", "topic", "list"),
            env=iam.aws_env(role_uri=ib.role_uri("nobody"), base=broker_env()))
    assert p.returncode == 1 and "answered HTTP 404" in p.stderr and "no role 'nobody'" in p.stderr, p
    for args, words in ((["--security-protocol", "SASL_SSL"], "needs --sasl-mechanism"),
                        (["--security-protocol", "SSL", "--sasl-mechanism", "OAUTHBEARER"], "needs --security-protocol SASL_SSL"),
                        (["--security-protocol", "PLAINTEXT", "--ca-file", "x.pem"], "--ca-file goes with TLS")):
        p = cli(bs, "topic", "list", *args, env=env)
        assert p.returncode == 1 and words in p.stderr, (args, p)
    p = cli(bs, "topic", "list", "--sasl-mechanism", "PLAIN", env=env)
    assert p.returncode == 2, p


def test_sasl_without_tls(ib):
    env = iam.aws_env(iam.ALICE, base=broker_env())
    out = ok(cli(ib.sasl_plaintext_bootstrap, "topic", "list", "--security-protocol", "SASL_PLAINTEXT",
                 "--sasl-mechanism", "OAUTHBEARER", env=env))
    assert out.startswith("NAME"), out


def test_a_long_consume_re_authenticates_before_its_session_ends(tmp_path):
    """connections.max.reauth.ms=2000: without KIP-368 re-authentication the broker would close
    every connection at its first request after two seconds and the consume would fail."""
    ids = iam.write_identities(tmp_path / "identities.json")
    b = iam.IamBroker(ids, broker_count=3, config={"connections.max.reauth.ms": 2000})
    b.start()
    try:
        env = iam.aws_env(role_uri=b.role_uri(), base=broker_env())
        t, g = name("reauth"), name("g")
        ok(cli(b.iam_bootstrap, *secure(b, "AWS_MSK_IAM", "topic", "create", t, "-p", "2"), env=env))
        p = cli(b.iam_bootstrap, *secure(b, "OAUTHBEARER", "consume", t, "-g", g, "--timeout", "6"), env=env)
        assert ok(p) == "" and p.stderr.endswith("mskmock consume: 0 record(s)\n"), p
        reauths = re.findall(r"client=mskmock-cli re-authenticated as IAM\.\S+ via OAUTHBEARER, session \d+ ms",
                             b.log_text())
        assert len(reauths) >= 2, b.log_tail()
        b.assert_alive()
        b.stop(check=True)
    finally:
        b.cleanup()
