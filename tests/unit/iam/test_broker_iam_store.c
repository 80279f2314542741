/*
 * iam_store (identities file, issued role credentials, rotation, forgetting) and the
 * container-credentials endpoint (cred_endpoint), the latter served on a loopback port by a
 * libuv loop in this thread and driven by a blocking client in a second thread.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <cmocka.h>

#include <jansson.h>
#include <uv.h>

#include "clock.h"
#include "fixtures.h"
#include "iam/cred_endpoint.h"
#include "iam/iam_policy.h"
#include "iam/iam_store.h"
#include "iam/iam_token.h"
#include "log.h"

#define T0 1800000000000LL /* 2027-01-15T08:00:00Z */
#define HOUR 3600000LL

static const char *const GOOD =
    "{\"identities\": ["
    " {\"access_key_id\": \"AKIAIOSFODNN7EXAMPLE\", \"secret_access_key\": \"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\","
    "  \"session_token\": null, \"expiration\": null, \"principal\": \"arn:aws:iam::123456789012:user/alice\"},"
    " {\"access_key_id\": \"ASIAEXAMPLETEMPORARY\", \"secret_access_key\": \"s3cr3t\", \"session_token\": \"tok+/=\","
    "  \"expiration\": \"2026-12-31T00:00:00Z\", \"principal\": \"arn:aws:sts::123456789012:assumed-role/ops/bob\"},"
    " {\"access_key_id\": \"AKIDEXAMPLE\", \"secret_access_key\": \"x\","
    "  \"expiration\": \"2024-02-29T12:34:56.789Z\", \"principal\": \"arn:aws-cn:iam::123456789012:user/carol\"}"
    "],"
    " \"roles\": ["
    "  {\"name\": \"app\", \"arn\": \"arn:aws:iam::123456789012:role/app\", \"session_name\": \"app-session\"},"
    "  {\"name\": \"ci\", \"arn\": \"arn:aws-us-gov:iam::111122223333:role/team/ci-runner\"}"
    "]}";

/* ---------- helpers ---------- */

static char tmp_paths[128][64];
static int ntmp;

static const char *write_file(const char *text) {
    assert_true(ntmp < 128);
    char *p = tmp_paths[ntmp++];
    tmp_file_write(p, sizeof tmp_paths[0], "iam", ".json", text);
    return p;
}

static int teardown_files(void **state) {
    (void)state;
    for (int i = 0; i < ntmp; i++) unlink(tmp_paths[i]);
    ntmp = 0;
    return 0;
}

static iam_store *open_text(const char *text, int64_t interval, int64_t lifetime, bool new_names) {
    iam_store_settings set = {write_file(text), interval, lifetime, new_names, IAM_AUTHZ_DEFAULT_ALLOW};
    iam_store *st = NULL;
    char err[512] = "";
    if (iam_store_open(&st, &set, T0, err, sizeof err) != 0) fail_msg("iam_store_open: %s", err);
    assert_non_null(st);
    return st;
}

/* Opens text expecting failure; the error must be "<path>: <expected>". */
static void expect_error(const char *text, const char *expected) {
    const char *path = write_file(text);
    iam_store_settings set = {path, HOUR, 6 * HOUR, false, IAM_AUTHZ_DEFAULT_ALLOW};
    iam_store *st = (iam_store *)1;
    char err[512] = "", want[768];
    assert_int_equal(iam_store_open(&st, &set, T0, err, sizeof err), -1);
    assert_null(st);
    snprintf(want, sizeof want, "%s: %s", path, expected);
    if (strcmp(err, want) != 0) fail_msg("for %s\n  got:  %s\n  want: %s", text, err, want);
}

static void assert_chars(const char *s, const char *alphabet) {
    for (; *s; s++)
        if (!strchr(alphabet, *s)) fail_msg("unexpected character '%c'", *s);
}

#define B64 "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

/* ---------- file parsing ---------- */

static void test_good_file(void **state) {
    (void)state;
    iam_store *st = open_text(GOOD, HOUR, 2 * HOUR, false);
    assert_int_equal(iam_store_count(st), 5);

    const iam_cred *a = iam_store_lookup(st, "AKIAIOSFODNN7EXAMPLE");
    assert_non_null(a);
    assert_string_equal(a->access_key_id, "AKIAIOSFODNN7EXAMPLE");
    assert_string_equal(a->secret_access_key, "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY");
    assert_null(a->session_token);
    assert_int_equal(a->expiry_ms, -1);
    assert_int_equal(a->superseded_ms, -1);
    assert_string_equal(a->principal, "arn:aws:iam::123456789012:user/alice");
    assert_null(a->role);

    const iam_cred *b = iam_store_lookup(st, "ASIAEXAMPLETEMPORARY");
    assert_non_null(b);
    assert_string_equal(b->session_token, "tok+/=");
    assert_int_equal(b->expiry_ms, 1798675200000LL);
    assert_string_equal(b->principal, "arn:aws:sts::123456789012:assumed-role/ops/bob");

    const iam_cred *c = iam_store_lookup(st, "AKIDEXAMPLE");
    assert_non_null(c);
    assert_int_equal(c->expiry_ms, 1709210096789LL); /* fraction kept */

    assert_null(iam_store_lookup(st, "AKIAUNKNOWN"));
    assert_null(iam_store_lookup(st, "akiaiosfodnn7example")); /* case matters */
    assert_null(iam_store_lookup(st, ""));
    assert_null(iam_store_lookup(st, NULL));

    assert_int_equal(iam_store_role_count(st), 2);
    assert_string_equal(iam_store_role_name(st, 0), "app");
    assert_string_equal(iam_store_role_name(st, 1), "ci");
    assert_null(iam_store_role_name(st, 2));
    assert_string_equal(iam_store_role_arn(st, "app"), "arn:aws:iam::123456789012:role/app");
    assert_null(iam_store_role_arn(st, "nope"));

    const iam_cred *r = iam_store_current(st, "app");
    assert_non_null(r);
    assert_int_equal(strlen(r->access_key_id), 20);
    assert_memory_equal(r->access_key_id, "ASIA", 4);
    assert_chars(r->access_key_id, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567");
    assert_int_equal(strlen(r->secret_access_key), 40);
    assert_chars(r->secret_access_key, B64);
    assert_non_null(r->session_token);
    assert_int_equal(strlen(r->session_token), 200);
    assert_chars(r->session_token, B64);
    assert_int_equal(r->expiry_ms, T0 + 2 * HOUR);
    assert_int_equal(r->superseded_ms, -1);
    assert_string_equal(r->principal, "arn:aws:sts::123456789012:assumed-role/app/app-session");
    assert_string_equal(r->role, "app");
    assert_ptr_equal(iam_store_lookup(st, r->access_key_id), r);

    /* the role name in the principal is the ARN's (path dropped), the partition kept, the session defaulted */
    const iam_cred *ci = iam_store_current(st, "ci");
    assert_non_null(ci);
    assert_string_equal(ci->principal, "arn:aws-us-gov:sts::111122223333:assumed-role/ci-runner/mskmock");
    assert_string_equal(ci->role, "ci");
    assert_string_not_equal(ci->access_key_id, r->access_key_id);
    assert_string_not_equal(ci->secret_access_key, r->secret_access_key);
    assert_null(iam_store_current(st, "nope"));
    assert_null(iam_store_current(st, NULL));
    iam_store_free(st);
}

static void test_expiry_whole_seconds(void **state) {
    (void)state;
    iam_store_settings set = {write_file("{\"roles\": [{\"name\": \"app\", \"arn\": \"arn:aws:iam::1:role/app\"}]}"),
                              0, 900000, false, IAM_AUTHZ_DEFAULT_ALLOW};
    iam_store *st = NULL;
    char err[256];
    assert_int_equal(iam_store_open(&st, &set, T0 + 1234, err, sizeof err), 0);
    assert_int_equal(iam_store_current(st, "app")->expiry_ms, T0 + 901000);
    iam_store_free(st);
}

/* STS AssumeRole's credentials: the role's policies, the session's principal, their own expiry,
 * untouched by rotation, forgotten an hour after they expire. */
static void test_assume(void **state) {
    (void)state;
    iam_store *st = open_text("{\"roles\": [{\"name\": \"app\", \"arn\": \"arn:aws:iam::123456789012:role/app\", "
                              "\"max_session_duration\": 7200}, {\"name\": \"b\", \"arn\": \"arn:aws:iam::1:role/b\"}]}",
                              HOUR, 6 * HOUR, false);
    assert_int_equal(iam_store_role_max_session_s(st, "arn:aws:iam::123456789012:role/app"), 7200);
    assert_int_equal(iam_store_role_max_session_s(st, "arn:aws:iam::1:role/b"), IAM_ROLE_MAX_SESSION_DEFAULT_S);
    assert_int_equal(iam_store_role_max_session_s(st, "arn:aws:iam::1:role/none"), -1);
    assert_null(iam_store_assume(st, "arn:aws:iam::1:role/none", "s1", 900000, T0));
    assert_null(iam_store_assume(st, "arn:aws:iam::1:role/b", "s", 900000, T0));     /* session name too short */
    assert_null(iam_store_assume(st, "arn:aws:iam::1:role/b", "a b", 900000, T0));   /* not in the alphabet */
    const iam_cred *cr = iam_store_assume(st, "arn:aws:iam::123456789012:role/app", "build-7", 900000, T0 + 500);
    assert_non_null(cr);
    assert_int_equal(iam_store_assumed_count(st), 1);
    assert_memory_equal(cr->access_key_id, "ASIA", 4);
    assert_int_equal(strlen(cr->access_key_id), 20);
    assert_non_null(cr->session_token);
    assert_string_equal(cr->principal, "arn:aws:sts::123456789012:assumed-role/app/build-7");
    assert_string_equal(cr->role, "app");
    assert_int_equal(cr->expiry_ms, T0 + 900000);
    assert_int_equal(cr->superseded_ms, -1);
    char akid[32];
    snprintf(akid, sizeof akid, "%s", cr->access_key_id);
    assert_ptr_equal(iam_store_lookup(st, akid), cr);
    assert_ptr_not_equal(iam_store_current(st, "app"), cr);
    /* rotation leaves them alone; an hour past their expiry they are forgotten */
    assert_int_equal(iam_store_rotate_role(st, "app", T0 + 1000), 0);
    assert_ptr_equal(iam_store_lookup(st, akid), cr);
    assert_int_equal(cr->superseded_ms, -1);
    iam_store_rotate_due(st, T0 + 900000 + IAM_FORGET_AFTER_MS - 1);
    assert_non_null(iam_store_lookup(st, akid));
    iam_store_rotate_due(st, T0 + 900000 + IAM_FORGET_AFTER_MS + 1);
    assert_null(iam_store_lookup(st, akid));
    assert_int_equal(iam_store_assumed_count(st), 0);
    iam_store_free(st);
}

static void test_no_file(void **state) {
    (void)state;
    const char *files[] = {NULL, ""};
    for (int i = 0; i < 2; i++) {
        iam_store_settings set = {files[i], HOUR, HOUR, false, IAM_AUTHZ_DEFAULT_ALLOW};
        iam_store *st = NULL;
        char err[256];
        assert_int_equal(iam_store_open(&st, &set, T0, err, sizeof err), 0);
        assert_int_equal(iam_store_count(st), 0);
        assert_int_equal(iam_store_role_count(st), 0);
        assert_null(iam_store_lookup(st, "AKIAIOSFODNN7EXAMPLE"));
        assert_null(iam_store_current(st, "app"));
        assert_int_equal(iam_store_next_rotation(st), -1);
        assert_int_equal(iam_store_rotate_due(st, T0 + 100 * HOUR), 0);
        iam_store_free(st);
    }
    /* empty arrays and an empty object are fine too */
    iam_store *st = open_text("{}", HOUR, HOUR, false);
    assert_int_equal(iam_store_count(st), 0);
    iam_store_free(st);
    st = open_text("{\"identities\": [], \"roles\": []}", HOUR, HOUR, false);
    assert_int_equal(iam_store_count(st), 0);
    iam_store_free(st);
}

#define ID_OK "{\"access_key_id\": \"AKIA1\", \"secret_access_key\": \"s\", \"principal\": \"arn:aws:iam::1:user/u\"}"
#define ID_OK2 "{\"access_key_id\": \"AKIA2\", \"secret_access_key\": \"s\", \"principal\": \"arn:aws:iam::1:user/v\"}"
#define ROLE_OK "{\"name\": \"app\", \"arn\": \"arn:aws:iam::123456789012:role/app\"}"

static void test_file_errors(void **state) {
    (void)state;
    /* the brief's own example: the third entry lacks its key id */
    expect_error("{\"identities\": [" ID_OK "," ID_OK2 ", {\"secret_access_key\": \"s\", \"principal\": "
                 "\"arn:aws:iam::1:user/w\"}]}",
                 "identities[2]: access_key_id missing");
    expect_error("{\"identities\": [{\"access_key_id\": \"AKIA1\", \"principal\": \"arn:aws:iam::1:user/u\"}]}",
                 "identities[0]: secret_access_key missing");
    expect_error("{\"identities\": [{\"access_key_id\": \"AKIA1\", \"secret_access_key\": \"s\"}]}",
                 "identities[0]: principal missing");
    expect_error("{\"identities\": [{\"access_key_id\": null, \"secret_access_key\": \"s\", \"principal\": "
                 "\"arn:aws:iam::1:user/u\"}]}",
                 "identities[0]: access_key_id missing");
    expect_error("{\"identities\": [{\"access_key_id\": 12, \"secret_access_key\": \"s\", \"principal\": "
                 "\"arn:aws:iam::1:user/u\"}]}",
                 "identities[0]: access_key_id must be a string");
    expect_error("{\"identities\": [{\"access_key_id\": \"\", \"secret_access_key\": \"s\", \"principal\": "
                 "\"arn:aws:iam::1:user/u\"}]}",
                 "identities[0]: access_key_id is empty");
    expect_error("{\"identities\": [{\"access_key_id\": \"AKIA-1\", \"secret_access_key\": \"s\", \"principal\": "
                 "\"arn:aws:iam::1:user/u\"}]}",
                 "identities[0]: access_key_id 'AKIA-1' is not 1-128 letters and digits");
    expect_error("{\"identities\": [{\"access_key_id\": \"AKIA1\", \"secret_access_key\": \"a b\", \"principal\": "
                 "\"arn:aws:iam::1:user/u\"}]}",
                 "identities[0]: secret_access_key is not printable ASCII of at most 256 characters");
    /* a typo is refused, not ignored */
    expect_error("{\"identities\": [{\"acess_key_id\": \"AKIA1\", \"secret_access_key\": \"s\", \"principal\": "
                 "\"arn:aws:iam::1:user/u\"}]}",
                 "identities[0]: unknown key 'acess_key_id' (known: access_key_id, secret_access_key, "
                 "session_token, expiration, principal, policies)");
    expect_error("{\"identity\": []}", "top level: unknown key 'identity' (known: identities, roles)");
    expect_error("{\"identities\": [" ID_OK ", {\"access_key_id\": \"AKIA3\", \"secret_access_key\": \"s\", "
                 "\"principal\": \"aws:iam::1:user/u\"}]}",
                 "identities[1]: principal 'aws:iam::1:user/u' does not start with \"arn:aws\"");
    expect_error("{\"identities\": [{\"access_key_id\": \"AKIA3\", \"secret_access_key\": \"s\", "
                 "\"principal\": \"arn:aws:iam:user/u\"}]}",
                 "identities[0]: principal 'arn:aws:iam:user/u' is not "
                 "arn:<partition>:<service>:<region>:<account>:<resource>");
    const char *bad_times[] = {"2026-12-31 00:00:00Z", "2026-02-29T00:00:00Z", "2026-12-31T00:00:00+01:00",
                               "2026-12-31T00:00:00", "2026-12-31T24:00:00Z", "2026-13-01T00:00:00Z",
                               "2026-12-31T00:00:00.Z", "tomorrow", "2026-12-31T00:00:00ZZ"};
    for (size_t i = 0; i < sizeof bad_times / sizeof *bad_times; i++) {
        char text[512], want[256];
        snprintf(text, sizeof text,
                 "{\"identities\": [{\"access_key_id\": \"AKIA1\", \"secret_access_key\": \"s\", \"expiration\": "
                 "\"%s\", \"principal\": \"arn:aws:iam::1:user/u\"}]}",
                 bad_times[i]);
        snprintf(want, sizeof want,
                 "identities[0]: expiration '%s' is not an ISO-8601 UTC time like 2026-12-31T00:00:00Z", bad_times[i]);
        expect_error(text, want);
    }
    expect_error("{\"identities\": [{\"access_key_id\": \"AKIA1\", \"secret_access_key\": \"s\", \"expiration\": "
                 "1798675200, \"principal\": \"arn:aws:iam::1:user/u\"}]}",
                 "identities[0]: expiration must be a string");
    expect_error("{\"identities\": [" ID_OK ", " ID_OK2 ", " ID_OK "]}",
                 "identities[2]: access_key_id 'AKIA1' is already used by identities[0]");
    expect_error("{\"identities\": [" ID_OK ", 7]}", "identities[1]: not a JSON object");
    expect_error("{\"identities\": {}}", "identities must be an array");
    expect_error("{\"roles\": \"app\"}", "roles must be an array");
    expect_error("[]", "not a JSON object");

    expect_error("{\"roles\": [{\"arn\": \"arn:aws:iam::1:role/app\"}]}", "roles[0]: name missing");
    expect_error("{\"roles\": [" ROLE_OK ", {\"name\": \"ci\"}]}", "roles[1]: arn missing");
    expect_error("{\"roles\": [{\"name\": \"app\", \"arn\": \"arn:aws:iam::1:user/app\"}]}",
                 "roles[0]: arn 'arn:aws:iam::1:user/app' is not an IAM role ARN (arn:aws:iam::<account>:role/<name>)");
    expect_error("{\"roles\": [{\"name\": \"app\", \"arn\": \"arn:aws:sts::1:role/app\"}]}",
                 "roles[0]: arn 'arn:aws:sts::1:role/app' is not an IAM role ARN (arn:aws:iam::<account>:role/<name>)");
    expect_error("{\"roles\": [{\"name\": \"app\", \"arn\": \"arn:aws:iam:::role/app\"}]}",
                 "roles[0]: arn 'arn:aws:iam:::role/app' is not an IAM role ARN (arn:aws:iam::<account>:role/<name>)");
    expect_error("{\"roles\": [{\"name\": \"app\", \"arn\": \"arn:aws:iam::1:role/\"}]}",
                 "roles[0]: arn 'arn:aws:iam::1:role/' is not an IAM role ARN (arn:aws:iam::<account>:role/<name>)");
    expect_error("{\"roles\": [{\"name\": \"app\", \"arn\": \"iam::1:role/app\"}]}",
                 "roles[0]: arn 'iam::1:role/app' does not start with \"arn:aws\"");
    expect_error("{\"roles\": [" ROLE_OK ", " ROLE_OK "]}", "roles[1]: name 'app' is already used by roles[0]");
    expect_error("{\"roles\": [{\"name\": \"app\", \"arn\": \"arn:aws:iam::1:role/app\", \"sesion_name\": \"x\"}]}",
                 "roles[0]: unknown key 'sesion_name' (known: name, arn, session_name, policies, "
                 "max_session_duration)");
    expect_error("{\"roles\": [{\"name\": \"app\", \"arn\": \"arn:aws:iam::1:role/app\", \"max_session_duration\": 900}]}",
                 "roles[0]: max_session_duration must be seconds, 3600 to 43200");
    expect_error("{\"roles\": [{\"name\": \"app\", \"arn\": \"arn:aws:iam::1:role/app\", \"session_name\": \"x\"}]}",
                 "roles[0]: session_name 'x' is not 2-64 of A-Z a-z 0-9 +=,.@_-");
    expect_error("{\"roles\": [{\"name\": \"a/b\", \"arn\": \"arn:aws:iam::1:role/app\"}]}",
                 "roles[0]: name 'a/b' is not 1-64 of A-Z a-z 0-9 +=,.@_-");

    /* JSON syntax errors name the file, line and column */
    expect_error("{\"identities\": [\n  {\"access_key_id\": \"AKIA1\",,}\n]}",
                 "line 2 column 29: string or '}' expected near ','");
    expect_error("{\"roles\": [], \"roles\": []}", "line 1 column 21: duplicate object key near '\"roles\"'");

    /* a missing file */
    iam_store_settings set = {"/nonexistent/identities.json", HOUR, HOUR, false, IAM_AUTHZ_DEFAULT_ALLOW};
    iam_store *st = NULL;
    char err[512];
    assert_int_equal(iam_store_open(&st, &set, T0, err, sizeof err), -1);
    assert_non_null(strstr(err, "/nonexistent/identities.json"));
    assert_non_null(strstr(err, "No such file"));

    /* settings */
    iam_store_settings bad = {NULL, -1, HOUR, false, IAM_AUTHZ_DEFAULT_ALLOW};
    assert_int_equal(iam_store_open(&st, &bad, T0, err, sizeof err), -1);
    assert_string_equal(err, "iam store: rotation interval must not be negative");
    bad = (iam_store_settings){NULL, HOUR, 0, false, IAM_AUTHZ_DEFAULT_ALLOW};
    assert_int_equal(iam_store_open(&st, &bad, T0, err, sizeof err), -1);
    assert_string_equal(err, "iam store: credential lifetime must be positive");
}

/* ---------- rotation ---------- */

static void test_rotation(void **state) {
    (void)state;
    /* rotated hourly, valid two hours: the ECS pattern at a shorter scale */
    iam_store *st = open_text(GOOD, HOUR, 2 * HOUR, false);
    const iam_cred *c0 = iam_store_current(st, "app");
    char key0[32], secret0[48];
    snprintf(key0, sizeof key0, "%s", c0->access_key_id);
    snprintf(secret0, sizeof secret0, "%s", c0->secret_access_key);
    assert_int_equal(iam_store_next_rotation(st), T0 + HOUR);

    assert_int_equal(iam_store_rotate_due(st, T0 + HOUR - 1), 0);
    assert_ptr_equal(iam_store_current(st, "app"), c0);
    assert_int_equal(iam_store_count(st), 5);

    assert_int_equal(iam_store_rotate_due(st, T0 + HOUR), 2); /* both roles */
    const iam_cred *c1 = iam_store_current(st, "app");
    assert_ptr_not_equal(c1, c0);
    assert_string_not_equal(c1->access_key_id, key0);
    assert_string_not_equal(c1->secret_access_key, secret0);
    assert_int_equal(c1->expiry_ms, T0 + 3 * HOUR);
    assert_int_equal(c1->superseded_ms, -1);
    assert_string_equal(c1->principal, "arn:aws:sts::123456789012:assumed-role/app/app-session"); /* same session */
    assert_int_equal(iam_store_count(st), 7);
    assert_int_equal(iam_store_next_rotation(st), T0 + 2 * HOUR);

    /* the old credential keeps working until its own expiry, marked superseded */
    const iam_cred *old = iam_store_lookup(st, key0);
    assert_ptr_equal(old, c0);
    assert_string_equal(old->secret_access_key, secret0);
    assert_int_equal(old->superseded_ms, T0 + HOUR);
    assert_int_equal(old->expiry_ms, T0 + 2 * HOUR);

    /* nothing due in between */
    assert_int_equal(iam_store_rotate_due(st, T0 + HOUR + 1), 0);
    assert_ptr_equal(iam_store_current(st, "app"), c1);

    assert_int_equal(iam_store_rotate_due(st, T0 + 2 * HOUR), 2);
    const iam_cred *c2 = iam_store_current(st, "app");
    assert_int_equal(c1->superseded_ms, T0 + 2 * HOUR);
    assert_int_equal(iam_store_count(st), 9);

    /* c0 expired at T0+2h: still known an hour later (its tokens get a clear "expired") ... */
    assert_int_equal(iam_store_rotate_due(st, T0 + 3 * HOUR), 2); /* c1 superseded... */
    assert_ptr_equal(iam_store_lookup(st, key0), c0);
    assert_int_equal(iam_store_count(st), 11);
    /* ... and forgotten once its expiry passed more than an hour ago */
    assert_int_equal(iam_store_rotate_due(st, T0 + 3 * HOUR + 1), 0);
    assert_null(iam_store_lookup(st, key0));
    assert_int_equal(iam_store_count(st), 9); /* c0 of both roles */
    /* c1 (expiry T0+3h) still known; c2 still current; long-term keys never forgotten, expired or not */
    assert_non_null(iam_store_lookup(st, c1->access_key_id));
    assert_ptr_equal(iam_store_lookup(st, c2->access_key_id), c2);
    assert_non_null(iam_store_lookup(st, "AKIAIOSFODNN7EXAMPLE"));
    assert_non_null(iam_store_lookup(st, "AKIDEXAMPLE"));

    /* a late timer: one rotation, not a burst, and the next one an interval later */
    assert_int_equal(iam_store_rotate_due(st, T0 + 10 * HOUR), 2);
    assert_int_equal(iam_store_next_rotation(st), T0 + 11 * HOUR);
    const iam_cred *c3 = iam_store_current(st, "app");
    assert_int_equal(c3->expiry_ms, T0 + 12 * HOUR);
    /* everything superseded and expired over an hour ago is gone: roles keep only the current ones */
    assert_int_equal(iam_store_count(st), 3 + 2);
    iam_store_free(st);
}

static void test_rotation_expiry_before_rotation(void **state) {
    (void)state;
    /* the lead's defaults: lifetime == interval, the old credentials expire as they are superseded */
    iam_store *st = open_text("{\"roles\": [" ROLE_OK "]}", 6 * HOUR, 6 * HOUR, false);
    const iam_cred *c0 = iam_store_current(st, "app");
    assert_int_equal(c0->expiry_ms, T0 + 6 * HOUR);
    assert_int_equal(iam_store_rotate_due(st, T0 + 6 * HOUR), 1);
    assert_int_equal(c0->superseded_ms, T0 + 6 * HOUR);
    assert_int_equal(iam_store_current(st, "app")->expiry_ms, T0 + 12 * HOUR);
    iam_store_free(st);
}

static void test_new_session_names(void **state) {
    (void)state;
    iam_store *st = open_text(GOOD, HOUR, 2 * HOUR, true);
    const iam_cred *c0 = iam_store_current(st, "app");
    assert_string_equal(c0->principal, "arn:aws:sts::123456789012:assumed-role/app/app-session");
    char p0[256];
    snprintf(p0, sizeof p0, "%s", c0->principal);
    assert_int_equal(iam_store_rotate_due(st, T0 + HOUR), 2);
    assert_string_equal(iam_store_current(st, "app")->principal,
                        "arn:aws:sts::123456789012:assumed-role/app/app-session-1");
    assert_string_equal(iam_store_current(st, "ci")->principal,
                        "arn:aws-us-gov:sts::111122223333:assumed-role/ci-runner/mskmock-1");
    /* the superseded credential keeps its own principal */
    assert_string_equal(iam_store_lookup(st, c0->access_key_id)->principal, p0);
    assert_int_equal(iam_store_rotate_due(st, T0 + 2 * HOUR), 2);
    assert_string_equal(iam_store_current(st, "app")->principal,
                        "arn:aws:sts::123456789012:assumed-role/app/app-session-2");
    iam_store_free(st);

    /* a 64-character session name is shortened to make room for the suffix */
    char text[512], name64[65];
    memset(name64, 's', 64);
    name64[64] = '\0';
    snprintf(text, sizeof text,
             "{\"roles\": [{\"name\": \"app\", \"arn\": \"arn:aws:iam::1:role/app\", \"session_name\": \"%s\"}]}",
             name64);
    st = open_text(text, HOUR, 2 * HOUR, true);
    for (int i = 1; i <= 12; i++) assert_int_equal(iam_store_rotate_due(st, T0 + i * HOUR), 1);
    const char *p = iam_store_current(st, "app")->principal;
    const char *session = strrchr(p, '/') + 1;
    assert_int_equal(strlen(session), 64);
    assert_string_equal(session + 61, "-12");
    iam_store_free(st);
}

static void test_next_rotation(void **state) {
    (void)state;
    /* interval 0: never rotates, whatever the time */
    iam_store *st = open_text(GOOD, 0, HOUR, false);
    const iam_cred *c0 = iam_store_current(st, "app");
    assert_int_equal(iam_store_next_rotation(st), -1);
    assert_int_equal(iam_store_rotate_due(st, T0 + 1000 * HOUR), 0);
    assert_ptr_equal(iam_store_current(st, "app"), c0); /* expired, but still the role's (and known) */
    assert_ptr_equal(iam_store_lookup(st, c0->access_key_id), c0);
    iam_store_free(st);

    /* identities only: nothing to rotate */
    st = open_text("{\"identities\": [" ID_OK "]}", HOUR, HOUR, false);
    assert_int_equal(iam_store_next_rotation(st), -1);
    iam_store_free(st);

    st = open_text(GOOD, 1000, HOUR, false);
    assert_int_equal(iam_store_next_rotation(st), T0 + 1000);
    assert_int_equal(iam_store_rotate_due(st, T0 + 1500), 2);
    assert_int_equal(iam_store_next_rotation(st), T0 + 2500);
    iam_store_free(st);
}

static void test_many_credentials(void **state) {
    (void)state;
    /* every second for ~1.4 hours with a 2-hour lifetime: thousands of live keys, all found */
    iam_store *st = open_text("{\"roles\": [" ROLE_OK "]}", 1000, 2 * HOUR, false);
    enum { N = 5000 };
    char(*keys)[24] = calloc(N, sizeof *keys);
    assert_non_null(keys);
    for (int i = 0; i < N; i++) {
        snprintf(keys[i], sizeof keys[i], "%s", iam_store_current(st, "app")->access_key_id);
        assert_int_equal(iam_store_rotate_due(st, T0 + (i + 1) * 1000LL), 1);
    }
    assert_int_equal(iam_store_count(st), N + 1);
    for (int i = 0; i < N; i++) {
        const iam_cred *c = iam_store_lookup(st, keys[i]);
        if (!c) fail_msg("key %d (%s) not found", i, keys[i]);
        assert_string_equal(c->access_key_id, keys[i]);
        assert_int_equal(c->superseded_ms, T0 + (i + 1) * 1000LL);
        for (int j = i + 1; j < i + 4 && j < N; j++) assert_string_not_equal(keys[i], keys[j]);
    }
    /* jump past every expiry + 1 h: only the current credential remains */
    assert_int_equal(iam_store_rotate_due(st, T0 + 10 * HOUR), 1);
    assert_int_equal(iam_store_count(st), 1);
    for (int i = 0; i < N; i++) assert_null(iam_store_lookup(st, keys[i]));
    const iam_cred *cur = iam_store_current(st, "app");
    assert_ptr_equal(iam_store_lookup(st, cur->access_key_id), cur);
    free(keys);
    iam_store_free(st);
}

/* ---------- the credentials endpoint ---------- */

enum { MAX_REQS = 24, RESP_MAX = 16384 };

typedef struct exchange {
    const char *request;  /* sent as is */
    size_t len;           /* 0: strlen(request) */
    bool byte_by_byte;
    char response[RESP_MAX];
    size_t rlen;
} exchange;

typedef struct client_job {
    int port;
    exchange *ex;
    int nex;
    uv_async_t *done;     /* signalled when the client thread is finished */
    uv_async_t *advance;  /* asks the loop thread to move the clock (slow-client test) */
    int mode;             /* 0: exchanges; 1: slow client; 2: too many clients */
    bool slow_closed;     /* mode 1: the server closed the idle connection without answering */
    int refused_eof;      /* mode 2: connections beyond the limit that saw EOF at once */
    bool after_ok;        /* mode 2: a request once the others closed got its answer */
} client_job;

static int dial(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0); /* no cmocka assertions off the main thread */
    if (fd < 0) return -1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct timeval tv = {.tv_sec = 10};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static size_t read_all(int fd, char *buf, size_t cap) {
    size_t n = 0;
    for (;;) {
        ssize_t r = recv(fd, buf + n, cap - 1 - n, 0);
        if (r <= 0) break;
        n += (size_t)r;
        if (n == cap - 1) break;
    }
    buf[n] = '\0';
    return n;
}

static void do_exchange(int port, exchange *e) {
    int fd = dial(port);
    if (fd < 0) return;
    size_t len = e->len ? e->len : strlen(e->request);
    if (e->byte_by_byte) {
        for (size_t i = 0; i < len; i++) {
            if (send(fd, e->request + i, 1, MSG_NOSIGNAL) != 1) break;
            usleep(200);
        }
    } else {
        size_t off = 0;
        while (off < len) {
            ssize_t w = send(fd, e->request + off, len - off, MSG_NOSIGNAL);
            if (w <= 0) break;
            off += (size_t)w;
        }
    }
    e->rlen = read_all(fd, e->response, sizeof e->response);
    close(fd);
}

static void client_main(void *arg) {
    client_job *j = arg;
    if (j->mode == 0) {
        for (int i = 0; i < j->nex; i++) do_exchange(j->port, &j->ex[i]);
    } else if (j->mode == 1) {
        int fd = dial(j->port);
        if (fd >= 0) {
            send(fd, "GET /ro", 7, MSG_NOSIGNAL);
            usleep(100000);
            uv_async_send(j->advance); /* the loop thread moves the clock past the deadline */
            char buf[256];
            /* a request begun and not finished in time: 408, then the connection closes */
            ssize_t n = read_all(fd, buf, sizeof buf);
            j->slow_closed = n > 13 && !strncmp(buf, "HTTP/1.1 408 ", 13);
            close(fd);
        }
    } else {
        int fds[CRED_MAX_CLIENTS];
        for (int i = 0; i < CRED_MAX_CLIENTS; i++) fds[i] = dial(j->port);
        usleep(200000);
        for (int k = 0; k < 3; k++) {
            int fd = dial(j->port);
            char buf[64];
            if (fd >= 0 && read_all(fd, buf, sizeof buf) == 0) j->refused_eof++;
            if (fd >= 0) close(fd);
        }
        for (int i = 0; i < CRED_MAX_CLIENTS; i++)
            if (fds[i] >= 0) close(fds[i]);
        usleep(200000);
        exchange e = {.request = "GET /role/app HTTP/1.1\r\nHost: x\r\n\r\n"};
        do_exchange(j->port, &e);
        j->after_ok = strncmp(e.response, "HTTP/1.1 200 OK\r\n", 17) == 0;
    }
    uv_async_send(j->done);
}

typedef struct loop_ctx {
    cred_endpoint *ep;
    uv_async_t done, advance;
} loop_ctx;

static void on_done(uv_async_t *a) {
    loop_ctx *x = a->data;
    cred_endpoint_close(x->ep);
    uv_close((uv_handle_t *)&x->done, NULL);
    uv_close((uv_handle_t *)&x->advance, NULL);
}

static void on_advance(uv_async_t *a) {
    (void)a;
    clk_advance(CRED_CLIENT_TIMEOUT_MS + 1000);
}

/* Runs an endpoint over st on a free loopback port until the client thread is done. */
static void run_endpoint(iam_store *st, client_job *j) {
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    loop_ctx x;
    memset(&x, 0, sizeof x);
    char err[256];
    if (cred_endpoint_start(&loop, "127.0.0.1", 0, st, NULL, &x.ep, err, sizeof err) != 0) fail_msg("start: %s", err);
    j->port = cred_endpoint_port(x.ep);
    assert_true(j->port > 0);
    uv_async_init(&loop, &x.done, on_done);
    uv_async_init(&loop, &x.advance, on_advance);
    x.done.data = x.advance.data = &x;
    j->done = &x.done;
    j->advance = &x.advance;
    uv_thread_t th;
    assert_int_equal(uv_thread_create(&th, client_main, j), 0);
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_thread_join(&th);
    /* every handle (listener, timer, clients) closed and the endpoint freed */
    assert_int_equal(uv_loop_close(&loop), 0);
}

static json_t *body_of(const exchange *e) {
    const char *b = strstr(e->response, "\r\n\r\n");
    assert_non_null(b);
    json_error_t je;
    json_t *j = json_loads(b + 4, 0, &je);
    if (!j) fail_msg("body is not JSON (%s): %s", je.text, e->response);
    return j;
}

static void assert_status(const exchange *e, const char *status_line) {
    if (strncmp(e->response, status_line, strlen(status_line)) != 0)
        fail_msg("request %.40s...: got\n%s\nwant %s", e->request, e->response, status_line);
}

static void assert_header(const exchange *e, const char *header) {
    const char *end = strstr(e->response, "\r\n\r\n");
    const char *h = strstr(e->response, header);
    if (!h || !end || h > end) fail_msg("no header '%s' in\n%s", header, e->response);
}

static void assert_credentials(const exchange *e, const iam_cred *c, const char *arn) {
    assert_status(e, "HTTP/1.1 200 OK\r\n");
    assert_header(e, "\r\nContent-Type: application/json\r\n");
    assert_header(e, "\r\nConnection: close\r\n");
    json_t *j = body_of(e);
    char when[32];
    iam_format_time(c->expiry_ms, when);
    assert_string_equal(json_string_value(json_object_get(j, "AccessKeyId")), c->access_key_id);
    assert_string_equal(json_string_value(json_object_get(j, "SecretAccessKey")), c->secret_access_key);
    assert_string_equal(json_string_value(json_object_get(j, "Token")), c->session_token);
    assert_string_equal(json_string_value(json_object_get(j, "Expiration")), when);
    assert_int_equal(strlen(when), 20); /* 2026-12-02T15:04:05Z: whole seconds */
    assert_string_equal(json_string_value(json_object_get(j, "RoleArn")), arn);
    assert_string_equal(json_string_value(json_object_get(j, "AccountId")), "123456789012");
    /* Content-Length is the body's */
    const char *cl = strstr(e->response, "Content-Length: ");
    assert_non_null(cl);
    assert_int_equal(strtoul(cl + 16, NULL, 10), strlen(strstr(e->response, "\r\n\r\n") + 4));
    json_decref(j);
}

static void assert_error(const exchange *e, const char *status_line, const char *code, const char *in_message) {
    assert_status(e, status_line);
    assert_header(e, "\r\nContent-Type: application/json\r\n");
    json_t *j = body_of(e);
    assert_string_equal(json_string_value(json_object_get(j, "code")), code);
    const char *m = json_string_value(json_object_get(j, "message"));
    assert_non_null(m);
    if (in_message && !strstr(m, in_message)) fail_msg("message '%s' lacks '%s'", m, in_message);
    json_decref(j);
}

static void test_endpoint(void **state) {
    (void)state;
    iam_store_settings set = {write_file(GOOD), HOUR, 6 * HOUR, false, IAM_AUTHZ_DEFAULT_ALLOW};
    iam_store *st = NULL;
    char err[256];
    assert_int_equal(iam_store_open(&st, &set, clk_now_ms(), err, sizeof err), 0);

    static char big[12000];
    int bl = snprintf(big, sizeof big, "GET /role/app HTTP/1.1\r\nX-Filler: ");
    memset(big + bl, 'a', sizeof big - (size_t)bl - 5);
    memcpy(big + sizeof big - 5, "\r\n\r\n", 5);

    static exchange ex[] = {
        /* 0: what botocore sends, with the authorization token */
        {.request = "GET /role/app HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: Botocore/1.44.5\r\n"
                    "Accept-Encoding: identity\r\nAccept: application/json\r\n"
                    "Authorization: Bearer abc\r\nConnection: keep-alive\r\n\r\n"},
        /* 1: the EKS path, a query string, HTTP/1.0 */
        {.request = "GET /v2/credentials/ci?x=1&y=2 HTTP/1.0\r\n\r\n"},
        /* 2: unknown role */
        {.request = "GET /role/nope HTTP/1.1\r\nHost: x\r\n\r\n"},
        /* 3: unknown path */
        {.request = "GET /latest/meta-data/ HTTP/1.1\r\nHost: x\r\n\r\n"},
        /* 4: another method */
        {.request = "POST /role/app HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"},
        /* 5: garbage */
        {.request = "hello there\r\n\r\n"},
        /* 6: not HTTP/1.x */
        {.request = "GET /role/app HTTP/2.0\r\n\r\n"},
        /* 7: a header without a colon */
        {.request = "GET /role/app HTTP/1.1\r\nHost x\r\n\r\n"},
        /* 8: a head over 8 KiB */
        {.request = big},
        /* 9: one byte at a time, bare LF line ends */
        {.request = "GET /role/app HTTP/1.1\nHost: x\n\n", .byte_by_byte = true},
        /* 10: percent-encoded role name */
        {.request = "GET /role/%61pp HTTP/1.1\r\n\r\n"},
        /* 11: a bad escape */
        {.request = "GET /role/a%zzp HTTP/1.1\r\n\r\n"},
        /* 12: trailing slash, sub-path: not a role */
        {.request = "GET /role/app/ HTTP/1.1\r\n\r\n"},
        /* 13: a NUL in the head */
        {.request = "GET /role/app HTTP/1.1\r\nHost: a\0b\r\n\r\n", .len = 37},
        /* 14: absolute-form target */
        {.request = "GET http://127.0.0.1/role/app HTTP/1.1\r\n\r\n"},
        /* 15: HEAD is not served */
        {.request = "HEAD /role/app HTTP/1.1\r\n\r\n"},
        /* 16: a control character in a header value */
        {.request = "GET /role/app HTTP/1.1\r\nHost: a\x01z\r\n\r\n"},
        /* 17: obsolete line folding */
        {.request = "GET /role/app HTTP/1.1\r\nHost: a\r\n  folded\r\n\r\n"},
        /* 18: /role/ with no name */
        {.request = "GET /role/ HTTP/1.1\r\n\r\n"},
    };
    enum { NEX = sizeof ex / sizeof *ex };
    client_job j = {.ex = ex, .nex = NEX};
    run_endpoint(st, &j);

    const iam_cred *app = iam_store_current(st, "app");
    assert_credentials(&ex[0], app, "arn:aws:iam::123456789012:role/app");
    json_t *b1 = body_of(&ex[1]);
    assert_status(&ex[1], "HTTP/1.1 200 OK\r\n");
    assert_string_equal(json_string_value(json_object_get(b1, "AccessKeyId")),
                        iam_store_current(st, "ci")->access_key_id);
    assert_string_equal(json_string_value(json_object_get(b1, "AccountId")), "111122223333");
    json_decref(b1);
    assert_error(&ex[2], "HTTP/1.1 404 Not Found\r\n", "NotFound", "no role 'nope' in iam.identities.file (roles: app, ci)");
    assert_error(&ex[3], "HTTP/1.1 404 Not Found\r\n", "NotFound", "/role/<role name>");
    assert_error(&ex[4], "HTTP/1.1 405 Method Not Allowed\r\n", "MethodNotAllowed", "GET");
    assert_header(&ex[4], "\r\nAllow: GET\r\n");
    assert_error(&ex[5], "HTTP/1.1 400 Bad Request\r\n", "BadRequest", "malformed HTTP request");
    assert_error(&ex[6], "HTTP/1.1 400 Bad Request\r\n", "BadRequest", "HTTP/1.1");
    assert_error(&ex[7], "HTTP/1.1 400 Bad Request\r\n", "BadRequest", "header");
    assert_error(&ex[8], "HTTP/1.1 431 Request Header Fields Too Large\r\n", "RequestHeaderFieldsTooLarge", "8192");
    assert_credentials(&ex[9], app, "arn:aws:iam::123456789012:role/app");
    assert_credentials(&ex[10], app, "arn:aws:iam::123456789012:role/app");
    assert_error(&ex[11], "HTTP/1.1 400 Bad Request\r\n", "BadRequest", "percent");
    assert_error(&ex[12], "HTTP/1.1 404 Not Found\r\n", "NotFound", NULL);
    assert_error(&ex[13], "HTTP/1.1 400 Bad Request\r\n", "BadRequest", NULL);
    assert_credentials(&ex[14], app, "arn:aws:iam::123456789012:role/app");
    assert_error(&ex[15], "HTTP/1.1 405 Method Not Allowed\r\n", "MethodNotAllowed", NULL);
    assert_error(&ex[16], "HTTP/1.1 400 Bad Request\r\n", "BadRequest", "header");
    /* obsolete line folding: http-parser reads it as a space, which RFC 9112 section 5.2 allows */
    assert_credentials(&ex[17], app, "arn:aws:iam::123456789012:role/app");
    assert_error(&ex[18], "HTTP/1.1 404 Not Found\r\n", "NotFound", NULL);
    /* the secret never appears in anything but the 200 bodies */
    for (int i = 2; i < NEX; i++)
        if (i != 9 && i != 10 && i != 14 && i != 17) assert_null(strstr(ex[i].response, app->secret_access_key));

    /* after a rotation the endpoint serves the new credentials */
    assert_int_equal(iam_store_rotate_due(st, clk_now_ms() + HOUR), 2);
    static exchange again[] = {{.request = "GET /role/app HTTP/1.1\r\n\r\n"}};
    client_job j2 = {.ex = again, .nex = 1};
    run_endpoint(st, &j2);
    const iam_cred *app2 = iam_store_current(st, "app");
    assert_ptr_not_equal(app2, app);
    assert_credentials(&again[0], app2, "arn:aws:iam::123456789012:role/app");
    iam_store_free(st);
}

static void test_endpoint_slow_client(void **state) {
    (void)state;
    iam_store_settings set = {write_file(GOOD), HOUR, 6 * HOUR, false, IAM_AUTHZ_DEFAULT_ALLOW};
    iam_store *st = NULL;
    char err[256];
    assert_int_equal(iam_store_open(&st, &set, clk_now_ms(), err, sizeof err), 0);
    client_job j = {.mode = 1};
    run_endpoint(st, &j);
    assert_true(j.slow_closed);
    iam_store_free(st);
}

static void test_endpoint_too_many_clients(void **state) {
    (void)state;
    iam_store_settings set = {write_file(GOOD), HOUR, 6 * HOUR, false, IAM_AUTHZ_DEFAULT_ALLOW};
    iam_store *st = NULL;
    char err[256];
    assert_int_equal(iam_store_open(&st, &set, clk_now_ms(), err, sizeof err), 0);
    client_job j = {.mode = 2};
    run_endpoint(st, &j);
    assert_int_equal(j.refused_eof, 3);
    assert_true(j.after_ok);
    iam_store_free(st);
}

static void test_endpoint_start_errors(void **state) {
    (void)state;
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    cred_endpoint *a = NULL, *b = (cred_endpoint *)1;
    char err[256];
    assert_int_equal(cred_endpoint_start(&loop, "127.0.0.1", 0, NULL, NULL, &a, err, sizeof err), 0);
    int port = cred_endpoint_port(a);
    assert_int_equal(cred_endpoint_start(&loop, "127.0.0.1", port, NULL, NULL, &b, err, sizeof err), -1);
    assert_null(b);
    assert_non_null(strstr(err, "cannot listen on 127.0.0.1:"));
    assert_int_equal(cred_endpoint_start(&loop, "not-an-ip", 0, NULL, NULL, &b, err, sizeof err), -1);
    assert_non_null(strstr(err, "'not-an-ip' is not an IP address"));
    assert_int_equal(cred_endpoint_start(&loop, "127.0.0.1", 70000, NULL, NULL, &b, err, sizeof err), -1);
    /* IPv6 loopback, when the machine has it */
    cred_endpoint *c = NULL;
    if (cred_endpoint_start(&loop, "::1", 0, NULL, NULL, &c, err, sizeof err) == 0) assert_true(cred_endpoint_port(c) > 0);
    cred_endpoint_close(c);
    cred_endpoint_close(a);
    cred_endpoint_close(NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
}

/* ---------- policies ---------- */

#define POLICY_CONNECT                                                                                          \
    "{\"Version\": \"2012-10-17\", \"Statement\": {\"Effect\": \"Allow\", \"Action\": \"kafka-cluster:Connect\", " \
    "\"Resource\": \"*\"}}"
#define CLUSTER_ARN "arn:aws:kafka:us-east-1:123456789012:cluster/c/u"

/* Inline documents, a file path relative to the identities file, roles, and the default. */
static void test_policies(void **state) {
    (void)state;
    char dir[64], path[128];
    tmp_dir_new(dir, sizeof dir, "iam-pol");
    snprintf(path, sizeof path, "%s/reader.json", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"Statement\": [{\"Effect\": \"Allow\", \"Action\": \"kafka-cluster:ReadData\", \"Resource\": \"*\"}]}", f);
    fclose(f);
    char ids[256], text[2048];
    snprintf(ids, sizeof ids, "%s/identities.json", dir);
    snprintf(text, sizeof text,
             "{\"identities\": ["
             " {\"access_key_id\": \"AKIAONE\", \"secret_access_key\": \"s\", \"principal\": \"arn:aws:iam::1:user/one\","
             "  \"policies\": [" POLICY_CONNECT ", \"reader.json\"]},"
             " {\"access_key_id\": \"AKIATWO\", \"secret_access_key\": \"s\", \"principal\": \"arn:aws:iam::1:user/two\"},"
             " {\"access_key_id\": \"AKIATHREE\", \"secret_access_key\": \"s\", \"principal\": \"arn:aws:iam::1:user/3\","
             "  \"policies\": []}],"
             " \"roles\": [{\"name\": \"app\", \"arn\": \"arn:aws:iam::1:role/app\", \"policies\": [" POLICY_CONNECT "]}]}");
    f = fopen(ids, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);

    for (int mode = 0; mode < 2; mode++) {
        iam_store_settings set = {ids, HOUR, HOUR, false, mode};
        iam_store *st = NULL;
        char err[512] = "";
        if (iam_store_open(&st, &set, T0, err, sizeof err) != 0) fail_msg("%s", err);
        const iam_cred *one = iam_store_lookup(st, "AKIAONE");
        assert_non_null(one->policy);
        assert_int_equal(iam_policy_statement_count(one->policy), 2);
        assert_int_equal(iam_policy_eval(one->policy, IAM_CONNECT, CLUSTER_ARN).effect, IAM_ALLOW);
        iam_decision d = iam_policy_eval(one->policy, IAM_READ_DATA, "arn:aws:kafka:r:1:topic/c/u/t");
        assert_int_equal(d.effect, IAM_ALLOW);
        assert_non_null(strstr(d.by, "reader.json Statement[0]")); /* named by the file it came from */
        d = iam_policy_eval(one->policy, IAM_CONNECT, CLUSTER_ARN);
        assert_non_null(strstr(d.by, "identities.json: identities[0].policies[0] Statement"));
        /* no "policies": everything (allow), or an empty set (deny) */
        const iam_cred *two = iam_store_lookup(st, "AKIATWO");
        if (mode == IAM_AUTHZ_DEFAULT_ALLOW) {
            assert_null(two->policy);
        } else {
            assert_non_null(two->policy);
            assert_int_equal(iam_policy_eval(two->policy, IAM_CONNECT, CLUSTER_ARN).effect, IAM_IMPLICIT_DENY);
        }
        /* "policies": [] is an empty set in both modes */
        const iam_cred *three = iam_store_lookup(st, "AKIATHREE");
        assert_non_null(three->policy);
        assert_int_equal(iam_policy_eval(three->policy, IAM_CONNECT, CLUSTER_ARN).effect, IAM_IMPLICIT_DENY);
        /* a role's credentials carry the role's policies, across rotation */
        const iam_cred *app = iam_store_current(st, "app");
        assert_non_null(app->policy);
        assert_int_equal(iam_store_rotate_due(st, T0 + HOUR), 1);
        assert_ptr_equal(iam_store_current(st, "app")->policy, app->policy);
        /* plaintext.principal lookups: by principal ARN, access key id, role name or role ARN */
        const char *who;
        bool found;
        assert_ptr_equal(iam_store_policy_of(st, "arn:aws:iam::1:user/one", &who, &found), one->policy);
        assert_true(found);
        assert_string_equal(who, "arn:aws:iam::1:user/one");
        assert_ptr_equal(iam_store_policy_of(st, "AKIAONE", &who, &found), one->policy);
        assert_ptr_equal(iam_store_policy_of(st, "app", &who, &found), app->policy);
        assert_string_equal(who, "arn:aws:iam::1:role/app");
        assert_ptr_equal(iam_store_policy_of(st, "arn:aws:iam::1:role/app", &who, &found), app->policy);
        assert_null(iam_store_policy_of(st, "nobody", &who, &found));
        assert_false(found);
        iam_store_free(st);
    }
    tmp_dir_remove(dir);
}

/* A policy that cannot be read stops the load with the file, the entry and the reason. */
static void test_policy_errors(void **state) {
    (void)state;
    static const char *const id = "{\"identities\": [{\"access_key_id\": \"AKIAONE\", \"secret_access_key\": \"s\","
                                  " \"principal\": \"arn:aws:iam::1:user/one\", \"policies\": %s}]}";
    char text[1024];
    snprintf(text, sizeof text, id, "{}");
    expect_error(text, "identities[0]: policies must be a list of policy documents or file paths");
    snprintf(text, sizeof text, id, "[{\"Statement\": {\"Effect\": \"Allow\", \"Action\": \"kafka-cluster:Connect\", "
                                    "\"Resource\": \"*\", \"Condition\": {\"Bool\": {\"aws:SecureTransport\": \"true\"}}}}]");
    expect_error(text, "identities[0].policies[0]: Statement: Condition Bool on aws:SecureTransport is not evaluated by "
                       "mskmock on kafka-cluster: actions (only on kafka: and sts: ones); remove it or keep it out of "
                       "the policies given to mskmock");
    snprintf(text, sizeof text, id, "[{\"Statement\": {\"Effect\": \"Permit\"}}]");
    expect_error(text, "identities[0].policies[0]: Statement: Effect must be \"Allow\" or \"Deny\", not 'Permit'");

    /* a policy file that is missing, or not JSON: its path, line and column */
    char dir[64], ids[160], pol[160];
    tmp_dir_new(dir, sizeof dir, "iam-pol");
    snprintf(pol, sizeof pol, "%s/bad.json", dir);
    FILE *f = fopen(pol, "w");
    assert_non_null(f);
    fputs("{\"Statement\": [\n  {\"Effect\": \"Allow\",}\n]}", f);
    fclose(f);
    snprintf(ids, sizeof ids, "%s/identities.json", dir);
    for (int i = 0; i < 2; i++) {
        snprintf(text, sizeof text, id, i == 0 ? "[\"bad.json\"]" : "[\"missing.json\"]");
        f = fopen(ids, "w");
        assert_non_null(f);
        fputs(text, f);
        fclose(f);
        iam_store_settings set = {ids, HOUR, HOUR, false, IAM_AUTHZ_DEFAULT_ALLOW};
        iam_store *st = NULL;
        char err[512] = "";
        assert_int_equal(iam_store_open(&st, &set, T0, err, sizeof err), -1);
        assert_null(st);
        char want[512];
        if (i == 0)
            snprintf(want, sizeof want, "%s: identities[0].policies[0]: %s: line 2 column", ids, pol);
        else
            snprintf(want, sizeof want, "%s: identities[0].policies[0]: unable to open %s/missing.json", ids, dir);
        if (!strstr(err, want)) fail_msg("got: %s\nwant: %s...", err, want);
    }
    tmp_dir_remove(dir);
}

int main(void) {
    const char *lvl = getenv("MSKMOCK_TEST_LOG");
    log_level ll = LOG_ERROR;
    if (lvl) log_level_parse(lvl, &ll);
    log_threshold = ll;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_good_file, teardown_files),
        cmocka_unit_test_teardown(test_expiry_whole_seconds, teardown_files),
        cmocka_unit_test_teardown(test_no_file, teardown_files),
        cmocka_unit_test_teardown(test_assume, teardown_files),
        cmocka_unit_test_teardown(test_file_errors, teardown_files),
        cmocka_unit_test_teardown(test_rotation, teardown_files),
        cmocka_unit_test_teardown(test_rotation_expiry_before_rotation, teardown_files),
        cmocka_unit_test_teardown(test_new_session_names, teardown_files),
        cmocka_unit_test_teardown(test_next_rotation, teardown_files),
        cmocka_unit_test_teardown(test_many_credentials, teardown_files),
        cmocka_unit_test_teardown(test_endpoint, teardown_files),
        cmocka_unit_test_teardown(test_endpoint_slow_client, teardown_files),
        cmocka_unit_test_teardown(test_endpoint_too_many_clients, teardown_files),
        cmocka_unit_test_teardown(test_endpoint_start_errors, teardown_files),
        cmocka_unit_test_teardown(test_policies, teardown_files),
        cmocka_unit_test_teardown(test_policy_errors, teardown_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
