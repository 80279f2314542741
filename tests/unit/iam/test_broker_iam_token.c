/*
 * MSK IAM tokens: SigV4 against AWS's own vectors (the query-string variants of the SigV4 test
 * suite, as kept in awslabs/aws-c-auth tests/aws-signing-test-suite/v4, and the key-derivation
 * example of https://docs.aws.amazon.com/general/latest/gr/signature-v4-examples.html); tokens
 * made by the public signers with their clock set to 2025-01-02T03:04:05Z and AWS's example
 * keys (aws-msk-iam-sasl-signer-python 1.0.2 on botocore, npm aws-msk-iam-sasl-signer-js 1.0.3
 * and @jm18457/kafkajs-msk-iam-authentication-mechanism 4.0.0; the Python and JS tokens carry
 * the same signature, which cross-checks them); and every refusal with its MSK result class
 * and the reason the log will show.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <openssl/evp.h>

#include "iam/iam_token.h"
#include "iam/sigv4.h"

#define AKID "AKIDEXAMPLE"
#define SECRET "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
#define SESSION "FQoGZXIvYXdzEXAMPLE/+token=="
#define ARN "arn:aws:sts::123456789012:assumed-role/demo/session-1"
#define REGIONAL_HOST "kafka.us-east-1.amazonaws.com"
#define BROKER_HOST "b-1.demo.abc123.c2.kafka.us-east-1.amazonaws.com"
#define SIGNED_AT_MS 1735787045000LL /* 2025-01-02T03:04:05Z */
#define NOW_MS 1735787100000LL       /* 2025-01-02T03:05:00Z */
#define TOKEN_EXPIRY_MS 1735787945000LL

/* ---- signer output, verbatim: Python and JS tokens (A: long-term key, B: session token), kafkajs JSON (C) ---- */

static const char *PY_A =
    "aHR0cHM6Ly9rYWZrYS51cy1lYXN0LTEuYW1hem9uYXdzLmNvbS8_QWN0aW9uPWthZmthLWNsdXN0ZXIlM0FDb25uZWN0JlgtQW16LUFsZ29yaXRobT1BV1M0LUhNQUMtU0hBMjU2JlgtQW16LUNyZWRlbnRpYWw9QUtJREVYQU1QTEUlMkYyMDI1MDEwMiUyRnVzLWVhc3QtMSUyRmthZmthLWNsdXN0ZXIlMkZhd3M0X3JlcXVlc3QmWC1BbXotRGF0ZT0yMDI1MDEwMlQwMzA0MDVaJlgtQW16LUV4cGlyZXM9OTAwJlgtQW16LVNpZ25lZEhlYWRlcnM9aG9zdCZYLUFtei1TaWduYXR1cmU9ZThjMzc4MDhhNDQ4OGEzYTBlNzdmMjgyMDRmYzg4MGM4NjdhODlkYTkxYzEyNTkwMDhjNWJiMTE4ZTA3NzFhNiZVc2VyLUFnZW50PWF3cy1tc2staWFtLXNhc2wtc2lnbmVyLXB5dGhvbiUyRjEuMC4y";
static const char *JS_A =
    "aHR0cHM6Ly9rYWZrYS51cy1lYXN0LTEuYW1hem9uYXdzLmNvbS8_QWN0aW9uPWthZmthLWNsdXN0ZXIlM0FDb25uZWN0JlVzZXItQWdlbnQ9YXdzLW1zay1pYW0tc2FzbC1zaWduZXItanMlMkYxLjAuMyZYLUFtei1BbGdvcml0aG09QVdTNC1ITUFDLVNIQTI1NiZYLUFtei1DcmVkZW50aWFsPUFLSURFWEFNUExFJTJGMjAyNTAxMDIlMkZ1cy1lYXN0LTElMkZrYWZrYS1jbHVzdGVyJTJGYXdzNF9yZXF1ZXN0JlgtQW16LURhdGU9MjAyNTAxMDJUMDMwNDA1WiZYLUFtei1FeHBpcmVzPTkwMCZYLUFtei1TaWduYXR1cmU9ZThjMzc4MDhhNDQ4OGEzYTBlNzdmMjgyMDRmYzg4MGM4NjdhODlkYTkxYzEyNTkwMDhjNWJiMTE4ZTA3NzFhNiZYLUFtei1TaWduZWRIZWFkZXJzPWhvc3Q";
static const char *PY_B =
    "aHR0cHM6Ly9rYWZrYS51cy1lYXN0LTEuYW1hem9uYXdzLmNvbS8_QWN0aW9uPWthZmthLWNsdXN0ZXIlM0FDb25uZWN0JlgtQW16LUFsZ29yaXRobT1BV1M0LUhNQUMtU0hBMjU2JlgtQW16LUNyZWRlbnRpYWw9QUtJREVYQU1QTEUlMkYyMDI1MDEwMiUyRnVzLWVhc3QtMSUyRmthZmthLWNsdXN0ZXIlMkZhd3M0X3JlcXVlc3QmWC1BbXotRGF0ZT0yMDI1MDEwMlQwMzA0MDVaJlgtQW16LUV4cGlyZXM9OTAwJlgtQW16LVNpZ25lZEhlYWRlcnM9aG9zdCZYLUFtei1TZWN1cml0eS1Ub2tlbj1GUW9HWlhJdllYZHpFWEFNUExFJTJGJTJCdG9rZW4lM0QlM0QmWC1BbXotU2lnbmF0dXJlPTQwNmRiNzJkNGE4MzQxZTFhNTA1YmQ0ZmY3OWVmYjI4YjhiMTVhMGQyNjJmMWMzZDFiNWI1Y2IzNzdiMTUwZmUmVXNlci1BZ2VudD1hd3MtbXNrLWlhbS1zYXNsLXNpZ25lci1weXRob24lMkYxLjAuMg";
static const char *JS_B =
    "aHR0cHM6Ly9rYWZrYS51cy1lYXN0LTEuYW1hem9uYXdzLmNvbS8_QWN0aW9uPWthZmthLWNsdXN0ZXIlM0FDb25uZWN0JlVzZXItQWdlbnQ9YXdzLW1zay1pYW0tc2FzbC1zaWduZXItanMlMkYxLjAuMyZYLUFtei1BbGdvcml0aG09QVdTNC1ITUFDLVNIQTI1NiZYLUFtei1DcmVkZW50aWFsPUFLSURFWEFNUExFJTJGMjAyNTAxMDIlMkZ1cy1lYXN0LTElMkZrYWZrYS1jbHVzdGVyJTJGYXdzNF9yZXF1ZXN0JlgtQW16LURhdGU9MjAyNTAxMDJUMDMwNDA1WiZYLUFtei1FeHBpcmVzPTkwMCZYLUFtei1TZWN1cml0eS1Ub2tlbj1GUW9HWlhJdllYZHpFWEFNUExFJTJGJTJCdG9rZW4lM0QlM0QmWC1BbXotU2lnbmF0dXJlPTQwNmRiNzJkNGE4MzQxZTFhNTA1YmQ0ZmY3OWVmYjI4YjhiMTVhMGQyNjJmMWMzZDFiNWI1Y2IzNzdiMTUwZmUmWC1BbXotU2lnbmVkSGVhZGVycz1ob3N0";

static const char *PY_A_URL =
    "https://kafka.us-east-1.amazonaws.com/?Action=kafka-cluster%3AConnect&X-Amz-Algorithm=AWS4-HMAC-SHA256"
    "&X-Amz-Credential=AKIDEXAMPLE%2F20250102%2Fus-east-1%2Fkafka-cluster%2Faws4_request&X-Amz-Date=20250102T030405Z"
    "&X-Amz-Expires=900&X-Amz-SignedHeaders=host"
    "&X-Amz-Signature=e8c37808a4488a3a0e77f28204fc880c867a89da91c1259008c5bb118e0771a6"
    "&User-Agent=aws-msk-iam-sasl-signer-python%2F1.0.2";

static const char *JSON_C =
    "{\"version\":\"2020_10_22\",\"user-agent\":\"MSK_IAM\",\"host\":\"b-1.demo.abc123.c2.kafka.us-east-1.amazonaws."
    "com\",\"action\":\"kafka-cluster:Connect\",\"x-amz-credential\":\"AKIDEXAMPLE/20250102/us-east-1/kafka-cluster/"
    "aws4_request\",\"x-amz-algorithm\":\"AWS4-HMAC-SHA256\",\"x-amz-date\":\"20250102T030405Z\",\"x-amz-"
    "signedheaders\":\"host\",\"x-amz-expires\":\"900\",\"x-amz-signature\":"
    "\"bb3883540933fab4fabfdd9db53a2e0534b2a34c995c32d4d7eecf6a78d174a2\"}";
static const char *JSON_C_SESSION =
    "{\"version\":\"2020_10_22\",\"user-agent\":\"MSK_IAM\",\"host\":\"b-1.demo.abc123.c2.kafka.us-east-1.amazonaws."
    "com\",\"action\":\"kafka-cluster:Connect\",\"x-amz-credential\":\"AKIDEXAMPLE/20250102/us-east-1/kafka-cluster/"
    "aws4_request\",\"x-amz-algorithm\":\"AWS4-HMAC-SHA256\",\"x-amz-date\":\"20250102T030405Z\",\"x-amz-security-"
    "token\":\"FQoGZXIvYXdzEXAMPLE/+token==\",\"x-amz-signedheaders\":\"host\",\"x-amz-expires\":\"900\",\"x-amz-"
    "signature\":\"2401894b67a467c66f84371a4ec7f41e4923ee1513feb36589b5785dff85e316\"}";

/* ---- helpers ---- */

static char *b64url(const char *s) {
    size_t n = strlen(s);
    char *out = malloc((n + 2) / 3 * 4 + 1);
    assert_non_null(out);
    EVP_EncodeBlock((unsigned char *)out, (const unsigned char *)s, (int)n);
    char *w = out;
    for (char *r = out; *r; r++) {
        if (*r == '=') continue;
        *w++ = *r == '+' ? '-' : *r == '/' ? '_' : *r;
    }
    *w = '\0';
    return out;
}

/* "n,,\x01auth=Bearer <token>\x01\x01" into buf; returns its length. */
static size_t client_first(char *buf, size_t cap, const char *token) {
    int n = snprintf(buf, cap, "n,,\001auth=Bearer %s\001\001", token);
    assert_true(n > 0 && (size_t)n < cap);
    return (size_t)n;
}

typedef struct {
    const char *akid;
    iam_credential cred;
} fake_store;

static int lookup(void *ctx, const char *akid, iam_credential *out) {
    fake_store *s = ctx;
    if (strcmp(akid, s->akid)) return -1;
    *out = s->cred;
    return 0;
}

static fake_store store_long_term(void) {
    return (fake_store){AKID, {SECRET, NULL, -1, ARN}};
}

static fake_store store_temporary(void) {
    return (fake_store){AKID, {SECRET, SESSION, SIGNED_AT_MS + 3600 * 1000, ARN}};
}

static const char *const ob_hosts[] = {REGIONAL_HOST, "kafka-serverless.us-east-1.amazonaws.com"};
static const char *const broker_hosts[] = {BROKER_HOST};

static iam_verifier verifier(fake_store *s, bool broker) {
    return (iam_verifier){.region = "us-east-1",
                          .allowed_hosts = broker ? broker_hosts : ob_hosts,
                          .n_allowed_hosts = broker ? 1 : 2,
                          .max_skew_ms = IAM_DEFAULT_SKEW_MS,
                          .lookup = lookup,
                          .lookup_ctx = s};
}

typedef struct {
    iam_result r;
    char reason[IAM_REASON_MAX];
    iam_verified ok;
} outcome;

static outcome run_msg(const void *msg, size_t len, bool json, fake_store *s, int64_t now) {
    outcome o;
    memset(&o, 0, sizeof o);
    iam_token tok;
    o.r = json ? iam_parse_aws_msk_iam(msg, len, &tok, o.reason, sizeof o.reason)
               : iam_parse_oauthbearer(msg, len, &tok, o.reason, sizeof o.reason);
    if (o.r == IAM_OK) {
        iam_verifier v = verifier(s, json);
        o.r = iam_verify(&tok, &v, now, &o.ok, o.reason, sizeof o.reason);
    }
    iam_token_free(&tok);
    return o;
}

static outcome run_token(const char *token, fake_store *s, int64_t now) {
    static char buf[IAM_MAX_MESSAGE * 2];
    size_t n = client_first(buf, sizeof buf, token);
    return run_msg(buf, n, false, s, now);
}

static outcome run_url(const char *url, fake_store *s, int64_t now) {
    char *tok = b64url(url);
    outcome o = run_token(tok, s, now);
    free(tok);
    return o;
}

static outcome run_json(const char *json, fake_store *s, int64_t now) { return run_msg(json, strlen(json), true, s, now); }

static void expect(outcome o, iam_result r, const char *reason_part) {
    if (o.r != r || !strstr(o.reason, reason_part))
        fail_msg("got %s (%s), want %s with '%s'", iam_result_message(o.r), o.reason, iam_result_message(r),
                 reason_part);
}

/* A URL whose signature is valid for pairs (in the given order), signed with secret; ua appended unsigned. */
static char *signed_url(const char *host, const sigv4_pair *pairs, size_t n, const char *secret, const char *ua) {
    sigv4_presign p = {host, pairs, n, NULL, "us-east-1", "kafka-cluster"};
    for (size_t i = 0; i < n; i++)
        if (!strcmp(pairs[i].name, "X-Amz-Date")) p.amz_date = pairs[i].value;
    char sig[SIGV4_HEX_LEN + 1];
    assert_int_equal(sigv4_presign_signature(&p, secret, NULL, sig), 0);
    char *url = malloc(8192);
    assert_non_null(url);
    size_t at = (size_t)snprintf(url, 8192, "https://%s/?", host);
    for (size_t i = 0; i < n; i++) {
        at += sigv4_uri_encode(pairs[i].name, strlen(pairs[i].name), url + at, 8192 - at);
        url[at++] = '=';
        at += sigv4_uri_encode(pairs[i].value, strlen(pairs[i].value), url + at, 8192 - at);
        url[at++] = '&';
    }
    at += (size_t)snprintf(url + at, 8192 - at, "X-Amz-Signature=%s", sig);
    if (ua) snprintf(url + at, 8192 - at, "&User-Agent=%s", ua);
    return url;
}

static const sigv4_pair STD_PAIRS[] = {
    {"Action", "kafka-cluster:Connect"},
    {"X-Amz-Algorithm", "AWS4-HMAC-SHA256"},
    {"X-Amz-Credential", "AKIDEXAMPLE/20250102/us-east-1/kafka-cluster/aws4_request"},
    {"X-Amz-Date", "20250102T030405Z"},
    {"X-Amz-Expires", "900"},
    {"X-Amz-SignedHeaders", "host"},
};
#define N_STD (sizeof STD_PAIRS / sizeof *STD_PAIRS)

/* Replace the first occurrence of from in s by to; malloc'd. */
static char *replace(const char *s, const char *from, const char *to) {
    const char *at = strstr(s, from);
    assert_non_null(at);
    size_t n = strlen(s) - strlen(from) + strlen(to);
    char *out = malloc(n + 1);
    assert_non_null(out);
    size_t pre = (size_t)(at - s);
    memcpy(out, s, pre);
    strcpy(out + pre, to);
    strcat(out, at + strlen(from));
    return out;
}

/* ---- AWS SigV4 test suite, query variants (aws-c-auth tests/aws-signing-test-suite/v4/get-vanilla-*) ---- */

static const sigv4_pair SUITE_PAIRS[] = {
    {"X-Amz-Algorithm", "AWS4-HMAC-SHA256"},
    {"X-Amz-Credential", "AKIDEXAMPLE/20150830/us-east-1/service/aws4_request"},
    {"X-Amz-Date", "20150830T123600Z"},
    {"X-Amz-Expires", "3600"},
    {"X-Amz-SignedHeaders", "host"},
};

static void suite_sign(const sigv4_pair *extra, size_t n_extra, char hash[65], char sig[65]) {
    sigv4_pair pairs[8];
    size_t n = 0;
    /* Extras first: canonicalization must sort them. */
    for (size_t i = 0; i < n_extra; i++) pairs[n++] = extra[i];
    for (size_t i = 0; i < 5; i++) pairs[n++] = SUITE_PAIRS[i];
    sigv4_presign p = {"example.amazonaws.com", pairs, n, "20150830T123600Z", "us-east-1", "service"};
    assert_int_equal(sigv4_presign_signature(&p, SECRET, hash, sig), 0);
}

static void test_uri_encode(void **state) {
    (void)state;
    char out[64];
    const char *in = "a b/c~-_.+=:\xe1\x88\xb4";
    size_t n = sigv4_uri_encode(in, strlen(in), out, sizeof out);
    assert_string_equal(out, "a%20b%2Fc~-_.%2B%3D%3A%E1%88%B4");
    assert_int_equal(n, strlen(out));
    char small[5];
    assert_int_equal(sigv4_uri_encode("a/b", 3, small, sizeof small), 5);
    assert_string_equal(small, "a%2F");
}

static void test_get_vanilla_query(void **state) {
    (void)state;
    char *query = sigv4_canonical_query(SUITE_PAIRS, 5);
    assert_string_equal(query, "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIDEXAMPLE%2F20150830%2Fus-east-1%"
                               "2Fservice%2Faws4_request&X-Amz-Date=20150830T123600Z&X-Amz-Expires=3600&X-Amz-"
                               "SignedHeaders=host");
    char *creq = sigv4_canonical_request(query, "example.amazonaws.com");
    char want[1024];
    snprintf(want, sizeof want,
             "GET\n/\n%s\nhost:example.amazonaws.com\n\nhost\n"
             "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
             query);
    assert_string_equal(creq, want);
    char hash[65], sig[65];
    assert_int_equal(sigv4_sha256_hex(creq, strlen(creq), hash), 0);
    assert_string_equal(hash, "bb7705b4aa3cb8e8f5e1e0b3d4c0b64030797a313c8ceee43e33117cc43eadc5");
    char *sts = sigv4_string_to_sign("20150830T123600Z", "us-east-1", "service", hash);
    assert_string_equal(sts, "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n"
                             "bb7705b4aa3cb8e8f5e1e0b3d4c0b64030797a313c8ceee43e33117cc43eadc5");
    suite_sign(NULL, 0, hash, sig);
    assert_string_equal(hash, "bb7705b4aa3cb8e8f5e1e0b3d4c0b64030797a313c8ceee43e33117cc43eadc5");
    assert_string_equal(sig, "e93c787ed7f371d5c6b165c1b38ede9550f4dce4144713e844b25b7192d3865d");
    free(query);
    free(creq);
    free(sts);
}

static void test_get_vanilla_with_session_token(void **state) {
    (void)state;
    sigv4_pair tok = {"X-Amz-Security-Token", "6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267"};
    char hash[65], sig[65];
    suite_sign(&tok, 1, hash, sig);
    assert_string_equal(hash, "cb30434103085aa9e73780fc60dc9a9df818fd2a7b1de12a9f6f4d791f898761");
    assert_string_equal(sig, "7ff2b50b376cb4d151970630573d6291dc128cc5c2a12ffb237f73cc53f67b6c");
    sigv4_pair all[6] = {SUITE_PAIRS[0], SUITE_PAIRS[1], SUITE_PAIRS[2], SUITE_PAIRS[3], SUITE_PAIRS[4], tok};
    char *query = sigv4_canonical_query(all, 6);
    assert_non_null(strstr(query, "&X-Amz-Security-Token=6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf19"
                                  "4267&X-Amz-SignedHeaders=host"));
    free(query);
}

static void test_get_vanilla_query_order_key_case(void **state) {
    (void)state;
    sigv4_pair extra[] = {{"Param2", "value2"}, {"Param1", "value1"}};
    char hash[65], sig[65];
    suite_sign(extra, 2, hash, sig);
    assert_string_equal(sig, "86012e2c9ad4d77369f5d81c11f75158aae4f895a085212cc6d3f923d300bed5");
}

static void test_get_vanilla_utf8_query(void **state) {
    (void)state;
    sigv4_pair extra[] = {{"\xe1\x88\xb4", "bar"}};
    char hash[65], sig[65];
    suite_sign(extra, 1, hash, sig);
    assert_string_equal(sig, "0bdd809b1519ac4f0c1dc3540e2cc46bd0c7f778eda408b2ebf3b913d21ff600");
}

static void test_get_vanilla_empty_query_key(void **state) {
    (void)state;
    sigv4_pair extra[] = {{"Param1", "value1"}};
    char hash[65], sig[65];
    suite_sign(extra, 1, hash, sig);
    assert_string_equal(sig, "49096700cbbaa5753443850f40df10f904fc2fdb544dc9512203cc77c471a9de");
}

/* ---- signing key (AWS's key-derivation example; then the same chain for kafka-cluster) ---- */

static void hmac_hex(const uint8_t *key, size_t kl, const char *msg, uint8_t out[32], char hex[65]) {
    assert_int_equal(sigv4_hmac_sha256(key, kl, msg, strlen(msg), out), 0);
    sigv4_hex(out, 32, hex);
}

static void test_signing_key_derivation(void **state) {
    (void)state;
    uint8_t k[32], k2[32];
    char hex[65];
    const char *k0 = "AWS4" SECRET;
    hmac_hex((const uint8_t *)k0, strlen(k0), "20120215", k, hex);
    assert_string_equal(hex, "969fbb94feb542b71ede6f87fe4d5fa29c789342b0f407474670f0c2489e0a0d");
    hmac_hex(k, 32, "us-east-1", k2, hex);
    assert_string_equal(hex, "69daa0209cd9c5ff5c8ced464a696fd4252e981430b10e3d3fd8e2f197d7a70c");
    hmac_hex(k2, 32, "iam", k, hex);
    assert_string_equal(hex, "f72cfd46f26bc4643f06a11eabb6c0ba18780c19a8da0c31ace671265e3c87fa");
    hmac_hex(k, 32, "aws4_request", k2, hex);
    assert_string_equal(hex, "f4780e2d9f65fa895f9c67b32ce1baf0b0d8a43505a000a1a9e090d414db404d");

    assert_int_equal(sigv4_signing_key(SECRET, "20120215", "us-east-1", "iam", k), 0);
    sigv4_hex(k, 32, hex);
    assert_string_equal(hex, "f4780e2d9f65fa895f9c67b32ce1baf0b0d8a43505a000a1a9e090d414db404d");
    assert_int_equal(sigv4_signing_key(SECRET, "20250102", "us-east-1", "kafka-cluster", k), 0);
    sigv4_hex(k, 32, hex);
    assert_string_equal(hex, "53ca265522082e8c8e9e7c2f78e3378b6191ac0ef00517acb0e1003bf9388e35");
}

static void test_hex_equal(void **state) {
    (void)state;
    const char *a = "e8c37808a4488a3a0e77f28204fc880c867a89da91c1259008c5bb118e0771a6";
    assert_true(sigv4_hex_equal(a, a));
    assert_false(sigv4_hex_equal(a, "e8c37808a4488a3a0e77f28204fc880c867a89da91c1259008c5bb118e0771a7"));
    assert_false(sigv4_hex_equal(a, "E8C37808A4488A3A0E77F28204FC880C867A89DA91C1259008C5BB118E0771A6"));
    assert_false(sigv4_hex_equal(a, "e8c3"));
    assert_false(sigv4_hex_equal(a, ""));
}

/* ---- the SigV4 steps of A, B and C ---- */

static void test_msk_vector_a_canonical_request(void **state) {
    (void)state;
    char *query = sigv4_canonical_query(STD_PAIRS, N_STD);
    char *creq = sigv4_canonical_request(query, REGIONAL_HOST);
    assert_string_equal(creq, "GET\n/\nAction=kafka-cluster%3AConnect&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-"
                              "Credential=AKIDEXAMPLE%2F20250102%2Fus-east-1%2Fkafka-cluster%2Faws4_request&X-Amz-"
                              "Date=20250102T030405Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host\n"
                              "host:kafka.us-east-1.amazonaws.com\n\nhost\n"
                              "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    char hash[65];
    assert_int_equal(sigv4_sha256_hex(creq, strlen(creq), hash), 0);
    char *sts = sigv4_string_to_sign("20250102T030405Z", "us-east-1", "kafka-cluster", hash);
    assert_string_equal(sts, "AWS4-HMAC-SHA256\n20250102T030405Z\n20250102/us-east-1/kafka-cluster/aws4_request\n"
                             "618d8c70f444c42e5f4c7bbaf26688f636f6e04bb4c8fb7e23fd63c0fddabdf6");
    sigv4_presign p = {REGIONAL_HOST, STD_PAIRS, N_STD, "20250102T030405Z", "us-east-1", "kafka-cluster"};
    char sig[65];
    assert_int_equal(sigv4_presign_signature(&p, SECRET, hash, sig), 0);
    assert_string_equal(sig, "e8c37808a4488a3a0e77f28204fc880c867a89da91c1259008c5bb118e0771a6");
    free(query);
    free(creq);
    free(sts);
}

static void test_msk_vectors_b_c_hashes(void **state) {
    (void)state;
    sigv4_pair pairs[N_STD + 1];
    memcpy(pairs, STD_PAIRS, sizeof STD_PAIRS);
    pairs[N_STD] = (sigv4_pair){"X-Amz-Security-Token", SESSION};
    char *query = sigv4_canonical_query(pairs, N_STD + 1);
    assert_non_null(strstr(query, "&X-Amz-Security-Token=FQoGZXIvYXdzEXAMPLE%2F%2Btoken%3D%3D&X-Amz-SignedHeaders=host"));
    free(query);
    char hash[65], sig[65];
    sigv4_presign p = {REGIONAL_HOST, pairs, N_STD + 1, "20250102T030405Z", "us-east-1", "kafka-cluster"};
    assert_int_equal(sigv4_presign_signature(&p, SECRET, hash, sig), 0);
    assert_string_equal(hash, "b8921e7b803c44f7c3284bf46b0e4723e44e9e650afaedcaeffadf6b7d13216e");
    assert_string_equal(sig, "406db72d4a8341e1a505bd4ff79efb28b8b15a0d262f1c3d1b5b5cb377b150fe");

    p.host = BROKER_HOST;
    p.n_params = N_STD;
    assert_int_equal(sigv4_presign_signature(&p, SECRET, hash, sig), 0);
    assert_string_equal(hash, "4dc2c09decd7ff3fd4f515a564ad5051da47632e8ee2f95829eb6dcb573489ee");
    assert_string_equal(sig, "bb3883540933fab4fabfdd9db53a2e0534b2a34c995c32d4d7eecf6a78d174a2");
    p.n_params = N_STD + 1;
    assert_int_equal(sigv4_presign_signature(&p, SECRET, hash, sig), 0);
    assert_string_equal(hash, "c62a8b84cb83af994b0ad613eb3f12e03b54fe9257e05572f02eeb243163f905");
    assert_string_equal(sig, "2401894b67a467c66f84371a4ec7f41e4923ee1513feb36589b5785dff85e316");
}

/* ---- the signer tokens verify ---- */

static void test_python_token_parses_to_the_documented_url(void **state) {
    (void)state;
    char msg[4096];
    size_t n = client_first(msg, sizeof msg, PY_A);
    iam_token tok;
    char reason[IAM_REASON_MAX];
    assert_int_equal(iam_parse_oauthbearer(msg, n, &tok, reason, sizeof reason), IAM_OK);
    assert_int_equal(tok.mechanism, IAM_MECH_OAUTHBEARER);
    assert_string_equal(tok.host, REGIONAL_HOST);
    assert_int_equal(tok.n_params, 6);
    assert_string_equal(tok.access_key_id, AKID);
    assert_string_equal(tok.scope_date, "20250102");
    assert_string_equal(tok.region, "us-east-1");
    assert_string_equal(tok.service, "kafka-cluster");
    assert_string_equal(tok.amz_date, "20250102T030405Z");
    assert_int_equal(tok.date_ms, SIGNED_AT_MS);
    assert_int_equal(tok.expires_s, 900);
    assert_null(tok.session_token);
    assert_string_equal(tok.signature, "e8c37808a4488a3a0e77f28204fc880c867a89da91c1259008c5bb118e0771a6");
    assert_string_equal(tok.user_agent, "aws-msk-iam-sasl-signer-python/1.0.2");
    assert_null(tok.authzid);
    assert_int_equal(tok.n_extensions, 0);
    iam_token_free(&tok);
    /* The token is exactly the documented URL, base64url without padding. */
    char *again = b64url(PY_A_URL);
    assert_string_equal(again, PY_A);
    free(again);
}

static void expect_ok(outcome o, int64_t cred_expiry) {
    if (o.r != IAM_OK) fail_msg("refused: %s (%s)", iam_result_message(o.r), o.reason);
    assert_string_equal(o.ok.principal_arn, ARN);
    assert_int_equal(o.ok.token_expiry_ms, TOKEN_EXPIRY_MS);
    assert_int_equal(o.ok.credential_expiry_ms, cred_expiry);
}

static void test_signer_tokens_verify(void **state) {
    (void)state;
    fake_store lt = store_long_term(), tmp = store_temporary();
    expect_ok(run_token(PY_A, &lt, NOW_MS), -1);
    expect_ok(run_token(JS_A, &lt, NOW_MS), -1);
    expect_ok(run_token(PY_B, &tmp, NOW_MS), SIGNED_AT_MS + 3600 * 1000);
    expect_ok(run_token(JS_B, &tmp, NOW_MS), SIGNED_AT_MS + 3600 * 1000);
}

/*
 * Regression: aws-msk-iam-auth's Java OAUTHBEARER handler writes
 * "https://kafka.<region>.amazonaws.com?Action=..." with no "/" before the
 * query; real MSK accepts it (an empty https path is "/"), mskmock refused it
 * with "URL path is not '/'".
 */
static void test_java_token_without_path_verifies(void **state) {
    (void)state;
    fake_store lt = store_long_term();
    char *url = signed_url("kafka.us-east-1.amazonaws.com", STD_PAIRS, N_STD, SECRET, "aws-msk-iam-auth%2F2.4.0");
    char *no_slash = replace(url, "amazonaws.com/?", "amazonaws.com?");
    expect_ok(run_url(no_slash, &lt, NOW_MS), -1);
    free(no_slash);
    free(url);
}

static void test_aws_msk_iam_payloads_verify(void **state) {
    (void)state;
    fake_store lt = store_long_term(), tmp = store_temporary();
    expect_ok(run_json(JSON_C, &lt, NOW_MS), -1);
    expect_ok(run_json(JSON_C_SESSION, &tmp, NOW_MS), SIGNED_AT_MS + 3600 * 1000);

    iam_token tok;
    char reason[IAM_REASON_MAX];
    assert_int_equal(iam_parse_aws_msk_iam(JSON_C_SESSION, strlen(JSON_C_SESSION), &tok, reason, sizeof reason), IAM_OK);
    assert_int_equal(tok.mechanism, IAM_MECH_AWS_MSK_IAM);
    assert_string_equal(tok.host, BROKER_HOST);
    assert_string_equal(tok.session_token, SESSION);
    assert_string_equal(tok.user_agent, "MSK_IAM");
    assert_int_equal(tok.n_params, 7);
    iam_token_free(&tok);

    /* The broker host is what AWS_MSK_IAM signs: it is refused where only regional names are allowed. */
    iam_verifier v = verifier(&lt, false);
    iam_verified ok;
    assert_int_equal(iam_parse_aws_msk_iam(JSON_C, strlen(JSON_C), &tok, reason, sizeof reason), IAM_OK);
    assert_int_equal(iam_verify(&tok, &v, NOW_MS, &ok, reason, sizeof reason), IAM_ACCESS_DENIED);
    assert_non_null(strstr(reason, "signed host '" BROKER_HOST "' is not an allowed host"));
    iam_token_free(&tok);
}

static void test_fractional_expires_is_invalid_payload(void **state) {
    (void)state;
    fake_store lt = store_long_term();
    sigv4_pair pairs[N_STD];
    memcpy(pairs, STD_PAIRS, sizeof STD_PAIRS);
    pairs[4].value = "300.5";
    char *url = signed_url(REGIONAL_HOST, pairs, N_STD, SECRET, "aws-msk-iam-sasl-signer-js%2F1.0.3");
    expect(run_url(url, &lt, NOW_MS), IAM_INVALID_PAYLOAD, "X-Amz-Expires '300.5' is not an integer");
    free(url);
    char *json = replace(JSON_C, "\"x-amz-expires\":\"900\"", "\"x-amz-expires\":\"300.5\"");
    expect(run_json(json, &lt, NOW_MS), IAM_INVALID_PAYLOAD, "X-Amz-Expires '300.5' is not an integer");
    free(json);

    pairs[4].value = "604801";
    url = signed_url(REGIONAL_HOST, pairs, N_STD, SECRET, NULL);
    expect(run_url(url, &lt, NOW_MS), IAM_INVALID_PAYLOAD, "X-Amz-Expires '604801' is more than 604800 seconds");
    free(url);
    /* A shorter integer lifetime is fine and shortens the token. */
    pairs[4].value = "300";
    url = signed_url(REGIONAL_HOST, pairs, N_STD, SECRET, NULL);
    outcome o = run_url(url, &lt, NOW_MS);
    assert_int_equal(o.r, IAM_OK);
    assert_int_equal(o.ok.token_expiry_ms, SIGNED_AT_MS + 300000);
    free(url);
}

/* ---- refusals ---- */

static void test_tampered_signature(void **state) {
    (void)state;
    fake_store lt = store_long_term();
    char *url = replace(PY_A_URL, "e8c37808", "e8c37809");
    expect(run_url(url, &lt, NOW_MS), IAM_ACCESS_DENIED, "signature does not match (access key AKIDEXAMPLE)");
    free(url);
    char *json = replace(JSON_C, "bb388354", "bb388355");
    expect(run_json(json, &lt, NOW_MS), IAM_ACCESS_DENIED, "signature does not match (access key AKIDEXAMPLE)");
    free(json);
    /* A signed parameter changed after signing. */
    url = replace(PY_A_URL, "X-Amz-Expires=900", "X-Amz-Expires=901");
    outcome o = run_url(url, &lt, NOW_MS);
    expect(o, IAM_ACCESS_DENIED, "signature does not match");
    assert_null(strstr(o.reason, "e8c37808"));
    free(url);
}

static void test_wrong_secret(void **state) {
    (void)state;
    fake_store s = store_long_term();
    s.cred.secret_access_key = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYOTHERKEY0";
    outcome o = run_token(PY_A, &s, NOW_MS);
    expect(o, IAM_ACCESS_DENIED, "signature does not match (access key AKIDEXAMPLE)");
    assert_null(strstr(o.reason, "OTHERKEY"));
}

static void test_unknown_key(void **state) {
    (void)state;
    fake_store s = store_long_term();
    s.akid = "AKIDSOMEONEELSE";
    expect(run_token(PY_A, &s, NOW_MS), IAM_ACCESS_DENIED, "unknown access key 'AKIDEXAMPLE'");
}

static void test_expired_token(void **state) {
    (void)state;
    fake_store lt = store_long_term();
    expect(run_token(PY_A, &lt, TOKEN_EXPIRY_MS), IAM_ACCESS_DENIED,
           "token expired at 2025-01-02T03:19:05Z, now 2025-01-02T03:19:05Z");
    expect(run_token(JS_A, &lt, TOKEN_EXPIRY_MS + 55000), IAM_ACCESS_DENIED,
           "token expired at 2025-01-02T03:19:05Z, now 2025-01-02T03:20:00Z");
    /* One ms before the end it is still good. */
    assert_int_equal(run_token(JS_A, &lt, TOKEN_EXPIRY_MS - 1).r, IAM_OK);
}

static void test_expired_credential(void **state) {
    (void)state;
    fake_store tmp = store_temporary();
    tmp.cred.expiry_ms = NOW_MS - 1000;
    expect(run_token(PY_B, &tmp, NOW_MS), IAM_ACCESS_DENIED,
           "credentials of access key 'AKIDEXAMPLE' expired at 2025-01-02T03:04:59Z, now 2025-01-02T03:05:00Z");
    tmp.cred.expiry_ms = NOW_MS + 60000;
    outcome o = run_token(PY_B, &tmp, NOW_MS);
    assert_int_equal(o.r, IAM_OK);
    assert_int_equal(o.ok.credential_expiry_ms, NOW_MS + 60000);
}

static void test_token_from_the_future(void **state) {
    (void)state;
    fake_store lt = store_long_term();
    /* Signed 03:04:05; five minutes of skew allowed. */
    assert_int_equal(run_token(PY_A, &lt, SIGNED_AT_MS - IAM_DEFAULT_SKEW_MS).r, IAM_OK);
    expect(run_token(PY_A, &lt, SIGNED_AT_MS - IAM_DEFAULT_SKEW_MS - 1000), IAM_ACCESS_DENIED,
           "X-Amz-Date 2025-01-02T03:04:05Z is more than 300000 ms in the future, now 2025-01-02T02:59:04Z");
}

static void test_wrong_region(void **state) {
    (void)state;
    fake_store lt = store_long_term();
    sigv4_pair pairs[N_STD];
    memcpy(pairs, STD_PAIRS, sizeof STD_PAIRS);
    pairs[2].value = "AKIDEXAMPLE/20250102/eu-west-1/kafka-cluster/aws4_request";
    char *url = signed_url(REGIONAL_HOST, pairs, N_STD, SECRET, NULL);
    expect(run_url(url, &lt, NOW_MS), IAM_ACCESS_DENIED,
           "credential scope region 'eu-west-1' is not the configured region 'us-east-1'");
    free(url);
}

static void test_wrong_host(void **state) {
    (void)state;
    fake_store lt = store_long_term();
    char *url = signed_url("kafka.evil.example.com", STD_PAIRS, N_STD, SECRET, NULL);
    expect(run_url(url, &lt, NOW_MS), IAM_ACCESS_DENIED, "signed host 'kafka.evil.example.com' is not an allowed host");
    free(url);
    /* Allowed hosts compare case-insensitively; the host is signed in lower case. */
    url = signed_url("kafka-serverless.us-east-1.amazonaws.com", STD_PAIRS, N_STD, SECRET, NULL);
    char *upper = replace(url, "kafka-serverless.us-east-1", "KAFKA-Serverless.US-east-1");
    assert_int_equal(run_url(upper, &lt, NOW_MS).r, IAM_OK);
    free(upper);
    free(url);
}

static void test_session_token_mismatches(void **state) {
    (void)state;
    fake_store tmp = store_temporary(), lt = store_long_term();
    expect(run_token(PY_A, &tmp, NOW_MS), IAM_ACCESS_DENIED,
           "missing X-Amz-Security-Token: access key 'AKIDEXAMPLE' is a temporary credential");
    expect(run_json(JSON_C, &tmp, NOW_MS), IAM_ACCESS_DENIED, "missing X-Amz-Security-Token");
    tmp.cred.session_token = "FQoGZXIvYXdzOTHER";
    outcome o = run_token(JS_B, &tmp, NOW_MS);
    expect(o, IAM_ACCESS_DENIED, "X-Amz-Security-Token is not the session token of access key 'AKIDEXAMPLE'");
    assert_null(strstr(o.reason, "FQoG"));
    o = run_token(PY_B, &lt, NOW_MS);
    expect(o, IAM_ACCESS_DENIED, "X-Amz-Security-Token sent for the long-term access key 'AKIDEXAMPLE'");
    assert_null(strstr(o.reason, "FQoG"));
}

static void test_bad_bearer_tokens(void **state) {
    (void)state;
    fake_store lt = store_long_term();
    expect(run_token("not.base64ur", &lt, NOW_MS), IAM_INVALID_PAYLOAD, "bearer token is not base64url ('.' at offset 3)");
    expect(run_token("abcde", &lt, NOW_MS), IAM_INVALID_PAYLOAD, "bearer token length 5 is not a base64url length");
    /* Padding is outside Kafka's token alphabet. */
    char padded[2048];
    snprintf(padded, sizeof padded, "%s==", PY_A);
    expect(run_token(padded, &lt, NOW_MS), IAM_INVALID_PAYLOAD, "(base64 padding is not allowed)");
    /* base64url of something that is not an https URL. */
    char *t = b64url("http://kafka.us-east-1.amazonaws.com/?Action=x");
    expect(run_token(t, &lt, NOW_MS), IAM_INVALID_PAYLOAD, "not an https:// URL");
    free(t);
    t = b64url("https://kafka.us-east-1.amazonaws.com/\x01?");
    expect(run_token(t, &lt, NOW_MS), IAM_INVALID_PAYLOAD, "has byte 0x01 at offset 38");
    free(t);
    expect(run_url("https://kafka.us-east-1.amazonaws.com/path?Action=x", &lt, NOW_MS), IAM_INVALID_PAYLOAD,
           "URL path is not '/'");
    expect(run_url("https://kafka.us-east-1.amazonaws.com/", &lt, NOW_MS), IAM_INVALID_PAYLOAD, "missing Action");
    expect(run_url("https://kafka.us-east-1.amazonaws.com/?", &lt, NOW_MS), IAM_INVALID_PAYLOAD, "missing Action");
}

static void test_query_refusals(void **state) {
    (void)state;
    fake_store lt = store_long_term();
    char *url = replace(PY_A_URL, "&User-Agent", "&X-Amz-Expires=900&User-Agent");
    expect(run_url(url, &lt, NOW_MS), IAM_INVALID_PAYLOAD, "parameter 'X-Amz-Expires' appears twice");
    free(url);
    url = replace(PY_A_URL, "&User-Agent=", "&User-Agent=x&User-Agent=");
    expect(run_url(url, &lt, NOW_MS), IAM_INVALID_PAYLOAD, "parameter 'User-Agent' appears twice");
    free(url);

    sigv4_pair pairs[N_STD];
    memcpy(pairs, STD_PAIRS, sizeof STD_PAIRS);
    pairs[0].value = "kafka-cluster:DescribeCluster";
    url = signed_url(REGIONAL_HOST, pairs, N_STD, SECRET, NULL);
    expect(run_url(url, &lt, NOW_MS), IAM_INVALID_PAYLOAD,
           "Action 'kafka-cluster:DescribeCluster' is not 'kafka-cluster:Connect'");
    free(url);

    url = replace(PY_A_URL, "&X-Amz-Signature=e8c37808a4488a3a0e77f28204fc880c867a89da91c1259008c5bb118e0771a6", "");
    expect(run_url(url, &lt, NOW_MS), IAM_INVALID_PAYLOAD, "missing X-Amz-Signature");
    free(url);

    url = replace(PY_A_URL, "%3AConnect", "%3GConnect");
    expect(run_url(url, &lt, NOW_MS), IAM_INVALID_PAYLOAD, "malformed percent escape in query parameter 'Action=kafka-cluster%3GConnect'");
    free(url);
    url = replace(PY_A_URL, "python%2F1.0.2", "python%2");
    expect(run_url(url, &lt, NOW_MS), IAM_INVALID_PAYLOAD, "malformed percent escape");
    free(url);
    url = replace(PY_A_URL, "X-Amz-Algorithm", "X-Amz-Algorithm%00");
    expect(run_url(url, &lt, NOW_MS), IAM_INVALID_PAYLOAD, "malformed percent escape");
    free(url);

    url = replace(PY_A_URL, "AWS4-HMAC-SHA256", "AWS4-HMAC-SHA1");
    expect(run_url(url, &lt, NOW_MS), IAM_INVALID_PAYLOAD, "X-Amz-Algorithm 'AWS4-HMAC-SHA1' is not 'AWS4-HMAC-SHA256'");
    free(url);
    url = replace(PY_A_URL, "SignedHeaders=host", "SignedHeaders=host%3Bx-amz-date");
    expect(run_url(url, &lt, NOW_MS), IAM_INVALID_PAYLOAD, "X-Amz-SignedHeaders 'host;x-amz-date' is not 'host'");
    free(url);
    url = replace(PY_A_URL, "%2Fkafka-cluster%2F", "%2Fkafka%2F");
    expect(run_url(url, &lt, NOW_MS), IAM_INVALID_PAYLOAD, "credential scope service 'kafka' is not 'kafka-cluster'");
    free(url);
    url = replace(PY_A_URL, "%2Faws4_request", "%2Faws4_request%2Fmore");
    expect(run_url(url, &lt, NOW_MS), IAM_INVALID_PAYLOAD, "does not have 5 '/'-separated parts");
    free(url);
    url = replace(PY_A_URL, "AKIDEXAMPLE%2F20250102", "AKIDEXAMPLE%2F20250101");
    expect(run_url(url, &lt, NOW_MS), IAM_INVALID_PAYLOAD,
           "credential scope date '20250101' is not the date of X-Amz-Date '20250102T030405Z'");
    free(url);
    url = replace(PY_A_URL, "Date=20250102T030405Z", "Date=20250230T030405Z");
    expect(run_url(url, &lt, NOW_MS), IAM_INVALID_PAYLOAD, "X-Amz-Date '20250230T030405Z' is not a yyyymmddTHHMMSSZ time");
    free(url);
    url = replace(PY_A_URL, "Expires=900", "Expires=");
    expect(run_url(url, &lt, NOW_MS), IAM_INVALID_PAYLOAD, "X-Amz-Expires '' is not an integer");
    free(url);
    url = replace(PY_A_URL, "Expires=900", "Expires=-900");
    expect(run_url(url, &lt, NOW_MS), IAM_INVALID_PAYLOAD, "X-Amz-Expires '-900' is not an integer");
    free(url);
    url = replace(PY_A_URL, "&X-Amz-Date", "&&X-Amz-Date");
    expect(run_url(url, &lt, NOW_MS), IAM_INVALID_PAYLOAD, "empty query parameter");
    free(url);
}

static void test_unsigned_user_agent_is_ignored(void **state) {
    (void)state;
    fake_store lt = store_long_term();
    char *url = replace(PY_A_URL, "python%2F1.0.2", "java%2F2.3.6%20with%20spaces");
    assert_int_equal(run_url(url, &lt, NOW_MS).r, IAM_OK);
    free(url);
    /* An unknown parameter is signed like any other (SigV4 presign rule). */
    sigv4_pair pairs[N_STD + 1];
    memcpy(pairs, STD_PAIRS, sizeof STD_PAIRS);
    pairs[N_STD] = (sigv4_pair){"Extra Param", "v/1"};
    url = signed_url(REGIONAL_HOST, pairs, N_STD + 1, SECRET, "ua");
    assert_int_equal(run_url(url, &lt, NOW_MS).r, IAM_OK);
    char *changed = replace(url, "v%2F1", "v%2F2");
    expect(run_url(changed, &lt, NOW_MS), IAM_ACCESS_DENIED, "signature does not match");
    free(changed);
    free(url);
}

static void test_json_refusals(void **state) {
    (void)state;
    fake_store lt = store_long_term();
    char half[1024];
    snprintf(half, sizeof half, "%.*s", (int)strlen(JSON_C) / 2, JSON_C);
    expect(run_json(half, &lt, NOW_MS), IAM_INVALID_PAYLOAD, "payload is not JSON:");

    size_t big = IAM_MAX_MESSAGE + 100;
    char *huge = malloc(big + 1);
    memset(huge, ' ', big);
    memcpy(huge, JSON_C, strlen(JSON_C));
    huge[big] = '\0';
    expect(run_json(huge, &lt, NOW_MS), IAM_INVALID_PAYLOAD, "payload is 16484 bytes, more than 16384");
    free(huge);

    char *j = replace(JSON_C, "\"x-amz-expires\":\"900\"", "\"x-amz-expires\":900");
    expect(run_json(j, &lt, NOW_MS), IAM_INVALID_PAYLOAD, "payload key 'x-amz-expires' is not a string");
    free(j);
    j = replace(JSON_C, "\"user-agent\":\"MSK_IAM\"", "\"user-agent\":{\"a\":\"b\"}");
    expect(run_json(j, &lt, NOW_MS), IAM_INVALID_PAYLOAD, "payload key 'user-agent' is not a string");
    free(j);
    j = replace(JSON_C, "\"user-agent\":\"MSK_IAM\"", "\"x-amz-expires\":\"900\"");
    expect(run_json(j, &lt, NOW_MS), IAM_INVALID_PAYLOAD, "payload is not JSON: duplicate object key");
    free(j);
    expect(run_json("[\"2020_10_22\"]", &lt, NOW_MS), IAM_INVALID_PAYLOAD, "payload is not a JSON object");
    expect(run_json("\"x\"", &lt, NOW_MS), IAM_INVALID_PAYLOAD, "payload is not");
    j = replace(JSON_C, "2020_10_22", "2019_01_01");
    expect(run_json(j, &lt, NOW_MS), IAM_INVALID_PAYLOAD, "version '2019_01_01' is not '2020_10_22'");
    free(j);
    j = replace(JSON_C, "\"version\":\"2020_10_22\",", "");
    expect(run_json(j, &lt, NOW_MS), IAM_INVALID_PAYLOAD, "missing version");
    free(j);
    j = replace(JSON_C, "\"host\":\"b-1.demo.abc123.c2.kafka.us-east-1.amazonaws.com\",", "");
    expect(run_json(j, &lt, NOW_MS), IAM_INVALID_PAYLOAD, "missing host");
    free(j);
    j = replace(JSON_C, "\"action\":\"kafka-cluster:Connect\",", "");
    expect(run_json(j, &lt, NOW_MS), IAM_INVALID_PAYLOAD, "missing Action");
    free(j);
    j = replace(JSON_C, "\"action\"", "\"Action\"");
    expect(run_json(j, &lt, NOW_MS), IAM_INVALID_PAYLOAD, "missing Action");
    free(j);
    j = replace(JSON_C, "\"MSK_IAM\"", "\"MSK\\u0000IAM\"");
    expect(run_json(j, &lt, NOW_MS), IAM_INVALID_PAYLOAD, "payload is not JSON:");
    free(j);
    j = replace(JSON_C, "}", "} x");
    expect(run_json(j, &lt, NOW_MS), IAM_INVALID_PAYLOAD, "payload is not JSON:");
    free(j);
    /* Unknown keys are ignored; host case does not matter. */
    j = replace(JSON_C, "\"user-agent\":\"MSK_IAM\"", "\"user-agent\":\"MSK_IAM\",\"something-new\":\"1\"");
    char *j2 = replace(j, "b-1.demo", "B-1.Demo");
    assert_int_equal(run_json(j2, &lt, NOW_MS).r, IAM_OK);
    free(j2);
    free(j);
    expect(run_json("", &lt, NOW_MS), IAM_INVALID_PAYLOAD, "empty payload");
}

static outcome run_raw(const char *fmt, const char *token) {
    static char buf[4096];
    int n = snprintf(buf, sizeof buf, fmt, token);
    assert_true(n > 0 && (size_t)n < sizeof buf);
    fake_store lt = store_long_term();
    return run_msg(buf, (size_t)n, false, &lt, NOW_MS);
}

static void test_client_first_message_framing(void **state) {
    (void)state;
    assert_int_equal(run_raw("n,,\001auth=Bearer %s\001\001", PY_A).r, IAM_OK);
    expect(run_raw("n,,\001auth=Bearer %s\001", PY_A), IAM_INVALID_PAYLOAD,
           "client-first message does not end with 0x01 0x01");
    expect(run_raw("n,,\001auth=Bearer %s", PY_A), IAM_INVALID_PAYLOAD, "value of key 'auth' is not terminated by 0x01");
    expect(run_raw("n,,\001auth=Bearer %s\001\001\001", PY_A), IAM_INVALID_PAYLOAD, "1 unexpected byte(s) after the terminating 0x01");
    expect(run_raw("y,,\001auth=Bearer %s\001\001", PY_A), IAM_INVALID_PAYLOAD, "does not start with the GS2 header");
    expect(run_raw("n,\001auth=Bearer %s\001\001", PY_A), IAM_INVALID_PAYLOAD, "GS2 header is not");
    expect(run_raw("n,,auth=Bearer %s\001\001", PY_A), IAM_INVALID_PAYLOAD, "no 0x01 separator after the GS2 header");
    expect(run_raw("n,,\001%s\001", "\001"), IAM_INVALID_PAYLOAD, "1 unexpected byte(s) after the terminating 0x01");
    expect(run_raw("n,,\001%s", "\001"), IAM_INVALID_PAYLOAD, "no 'auth' key");
    expect(run_raw("n,,\001x=%s\001\001", "y"), IAM_INVALID_PAYLOAD, "no 'auth' key");
    expect(run_raw("n,,\001auth=Basic %s\001\001", PY_A), IAM_INVALID_PAYLOAD, "auth scheme 'Basic' is not 'Bearer'");
    expect(run_raw("n,,\001auth=Bearer%s\001\001", PY_A), IAM_INVALID_PAYLOAD, "auth value is not '<scheme> <token>'");
    expect(run_raw("n,,\001auth=Bearer %s \001\001", PY_A), IAM_INVALID_PAYLOAD, "byte 0x20");
    expect(run_raw("n,,\001auth=Bearer %s\001auth=Bearer x\001\001", PY_A), IAM_INVALID_PAYLOAD, "key 'auth' appears twice");
    expect(run_raw("n,,\001auth=Bearer %s\0011x=y\001\001", PY_A), IAM_INVALID_PAYLOAD, "[A-Za-z]+ key");
    expect(run_raw("n,,\001auth=Bearer %s\001x=\001\001", PY_A), IAM_INVALID_PAYLOAD, "empty value for key 'x'");
    expect(run_raw("n,,\001auth=Bearer %s\001x=\x7f\001\001", PY_A), IAM_INVALID_PAYLOAD, "empty value for key 'x'");
    /* Scheme case and repeated spaces are accepted, as Apache Kafka does. */
    assert_int_equal(run_raw("n,,\001auth=BEARER   %s\001\001", PY_A).r, IAM_OK);
    fake_store lt = store_long_term();
    expect(run_msg("", 0, false, &lt, NOW_MS), IAM_INVALID_PAYLOAD, "empty client-first message");
}

static void test_authzid_and_extensions_accepted(void **state) {
    (void)state;
    char buf[4096];
    int n = snprintf(buf, sizeof buf, "n,a=user=2Cname=3D1,\001auth=Bearer %s\001\001", PY_A);
    iam_token tok;
    char reason[IAM_REASON_MAX];
    assert_int_equal(iam_parse_oauthbearer(buf, (size_t)n, &tok, reason, sizeof reason), IAM_OK);
    assert_string_equal(tok.authzid, "user,name=1");
    iam_token_free(&tok);
    assert_int_equal(run_raw("n,a=arn:aws:iam::123456789012:user/x,\001auth=Bearer %s\001\001", PY_A).r, IAM_OK);
    expect(run_raw("n,a=,\001auth=Bearer %s\001\001", PY_A), IAM_INVALID_PAYLOAD, "empty authzid");
    expect(run_raw("n,a=x=2D,\001auth=Bearer %s\001\001", PY_A), IAM_INVALID_PAYLOAD, "authzid has '='");

    n = snprintf(buf, sizeof buf, "n,,\001traceId=abc 123\001auth=Bearer %s\001logicalCluster=lkc-1\001\001", JS_A);
    assert_int_equal(iam_parse_oauthbearer(buf, (size_t)n, &tok, reason, sizeof reason), IAM_OK);
    assert_int_equal(tok.n_extensions, 2);
    iam_token_free(&tok);
    fake_store lt = store_long_term();
    assert_int_equal(run_msg(buf, (size_t)n, false, &lt, NOW_MS).r, IAM_OK);
}

static void test_sizes_are_bounded(void **state) {
    (void)state;
    fake_store lt = store_long_term();
    size_t big = IAM_MAX_MESSAGE + 1;
    char *m = malloc(big);
    memset(m, 'A', big);
    expect(run_msg(m, big, false, &lt, NOW_MS), IAM_INVALID_PAYLOAD, "more than 16384");
    free(m);
    /* Too many signed parameters. */
    char url[4096];
    size_t at = (size_t)snprintf(url, sizeof url, "%s", PY_A_URL);
    for (int i = 0; i < IAM_MAX_PARAMS; i++) at += (size_t)snprintf(url + at, sizeof url - at, "&P%d=v", i);
    expect(run_url(url, &lt, NOW_MS), IAM_INVALID_PAYLOAD, "more than 16 signed parameters");
    /* Client values in reasons are cut and made printable. */
    char *long_action = replace(PY_A_URL, "kafka-cluster%3AConnect",
                                "%0A%1Bxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
    outcome o = run_url(long_action, &lt, NOW_MS);
    expect(o, IAM_INVALID_PAYLOAD, "Action '??xxxxxxxx");
    assert_non_null(strstr(o.reason, "x...' is not"));
    free(long_action);
}

static void test_format_time(void **state) {
    (void)state;
    char s[32];
    iam_format_time(SIGNED_AT_MS, s);
    assert_string_equal(s, "2025-01-02T03:04:05Z");
    iam_format_time(0, s);
    assert_string_equal(s, "1970-01-01T00:00:00Z");
    iam_format_time(-1, s);
    assert_string_equal(s, "1969-12-31T23:59:59.999Z");
    iam_format_time(951782400123LL, s);
    assert_string_equal(s, "2000-02-29T00:00:00.123Z");
    assert_string_equal(iam_result_message(IAM_INVALID_PAYLOAD), "Invalid authentication payload");
    assert_string_equal(iam_result_message(IAM_ACCESS_DENIED), "Access denied");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_uri_encode),
        cmocka_unit_test(test_get_vanilla_query),
        cmocka_unit_test(test_get_vanilla_with_session_token),
        cmocka_unit_test(test_get_vanilla_query_order_key_case),
        cmocka_unit_test(test_get_vanilla_utf8_query),
        cmocka_unit_test(test_get_vanilla_empty_query_key),
        cmocka_unit_test(test_signing_key_derivation),
        cmocka_unit_test(test_hex_equal),
        cmocka_unit_test(test_msk_vector_a_canonical_request),
        cmocka_unit_test(test_msk_vectors_b_c_hashes),
        cmocka_unit_test(test_python_token_parses_to_the_documented_url),
        cmocka_unit_test(test_signer_tokens_verify),
        cmocka_unit_test(test_java_token_without_path_verifies),
        cmocka_unit_test(test_aws_msk_iam_payloads_verify),
        cmocka_unit_test(test_fractional_expires_is_invalid_payload),
        cmocka_unit_test(test_tampered_signature),
        cmocka_unit_test(test_wrong_secret),
        cmocka_unit_test(test_unknown_key),
        cmocka_unit_test(test_expired_token),
        cmocka_unit_test(test_expired_credential),
        cmocka_unit_test(test_token_from_the_future),
        cmocka_unit_test(test_wrong_region),
        cmocka_unit_test(test_wrong_host),
        cmocka_unit_test(test_session_token_mismatches),
        cmocka_unit_test(test_bad_bearer_tokens),
        cmocka_unit_test(test_query_refusals),
        cmocka_unit_test(test_unsigned_user_agent_is_ignored),
        cmocka_unit_test(test_json_refusals),
        cmocka_unit_test(test_client_first_message_framing),
        cmocka_unit_test(test_authzid_and_extensions_accepted),
        cmocka_unit_test(test_sizes_are_bounded),
        cmocka_unit_test(test_format_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
