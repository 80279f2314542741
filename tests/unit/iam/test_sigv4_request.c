/*
 * SigV4 for whole HTTP requests (sigv4_request.c), which the AWS API listener verifies:
 * - AWS's SigV4 test suite (awslabs/aws-c-auth, tests/aws-signing-test-suite/v4; key
 *   AKIDEXAMPLE, region us-east-1, service "service", 2015-08-30T12:36:00Z), each request
 *   transcribed from its header-signed-request.txt / query-signed-request.txt and checked for
 *   the signature the suite gives (and, for some, its canonical request text). The test suite's
 *   request lines carry the path as a signer saw it before encoding ("/example space/"), which
 *   is what our single encoding pass turns into the suite's canonical URI; on the wire such a
 *   path arrives encoded, and the botocore requests below check that case.
 * - Requests botocore 1.44.8 signs for the `kafka` API (GetBootstrapBrokers, ListClustersV2 with
 *   a session token, CreateClusterV2 with a body, and a presigned GetBootstrapBrokers URL), with
 *   the clock frozen at 2025-01-02T03:04:05Z and the same example key; the expected signatures
 *   and canonical-request hashes were printed by botocore itself (its debug log), pasted here.
 * - Refusals while parsing (missing, malformed parts, host unsigned, a signed header absent)
 *   and signatures that must not match (wrong secret, changed path, a lying payload header).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "iam/sigv4.h"

#define SECRET "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
#define DATE "20150830T123600Z"
#define CRED "AKIDEXAMPLE/20150830/us-east-1/service/aws4_request"
#define GOOD_SIG "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"
#define SUITE_AUTH(signed, sig) \
    "Authorization:AWS4-HMAC-SHA256 Credential=" CRED ", SignedHeaders=" signed ", Signature=" sig "\n"
#define PRESIGN_Q(signed) \
    "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIDEXAMPLE%2F20150830%2Fus-east-1%2Fservice%2Faws4_request" \
    "&X-Amz-Date=20150830T123600Z&X-Amz-SignedHeaders=" signed "&X-Amz-Expires=3600"

/* ---- a request as text, the way the test suite writes it ---- */

#define MAX_HEADERS 16

typedef struct {
    char *text; /* the copy the pointers below point into */
    char method[16];
    char *path, *query, *body;
    sigv4_pair headers[MAX_HEADERS];
    size_t n_headers;
    char body_sha[SIGV4_HEX_LEN + 1];
    sigv4_request rq;
} http_text;

/* "METHOD target HTTP/1.1\nName:value\n...\n\nbody": a line starting with a space continues the
 * previous header's value (obs-fold, kept with its newline as get-header-value-multiline has it). */
static void http_parse(http_text *h, const char *src, bool s3_path) {
    memset(h, 0, sizeof *h);
    h->text = strdup(src);
    assert_non_null(h->text);
    char *line_end = strchr(h->text, '\n');
    assert_non_null(line_end);
    *line_end = '\0';
    char *sp = strchr(h->text, ' ');
    char *proto = strstr(h->text, " HTTP/1.1");
    assert_true(sp && proto && sp < proto && (size_t)(sp - h->text) < sizeof h->method);
    memcpy(h->method, h->text, (size_t)(sp - h->text));
    *proto = '\0';
    h->path = sp + 1;
    char *q = strchr(h->path, '?');
    if (q) {
        *q = '\0';
        h->query = q + 1;
    }
    char *p = line_end + 1;
    while (*p && *p != '\n') {
        char *e = strchr(p, '\n');
        if (e) *e = '\0';
        if (*p == ' ') {
            /* obs-fold: glue onto the previous value, newline included */
            assert_true(h->n_headers > 0);
            p[-1] = '\n';
        } else {
            assert_true(h->n_headers < MAX_HEADERS);
            char *colon = strchr(p, ':');
            assert_non_null(colon);
            *colon = '\0';
            h->headers[h->n_headers].name = p;
            h->headers[h->n_headers].value = colon + 1;
            h->n_headers++;
        }
        if (!e) {
            p += strlen(p);
            break;
        }
        p = e + 1;
    }
    h->body = *p == '\n' ? p + 1 : p;
    assert_int_equal(sigv4_sha256_hex(h->body, strlen(h->body), h->body_sha), 0);
    h->rq = (sigv4_request){h->method, h->path, h->query, h->headers, h->n_headers, h->body_sha, s3_path};
}

static void http_free(http_text *h) {
    free(h->text);
}

/* Parses src, checks that its claim parses and that the signature computed with the example
 * secret is expected and equal to the claimed one; optionally the canonical request too. */
static void check_signed(const char *src, bool s3_path, const char *expected_sig, const char *expected_creq) {
    http_text h;
    http_parse(&h, src, s3_path);
    sigv4_auth a;
    const char *why = NULL;
    int rc = sigv4_request_auth(&h.rq, &a, &why);
    if (rc) fail_msg("refused: %s\n%s", why, src);
    assert_string_equal(a.access_key_id, "AKIDEXAMPLE");
    char creq_hash[SIGV4_HEX_LEN + 1], sig[SIGV4_HEX_LEN + 1];
    assert_int_equal(sigv4_request_signature(&h.rq, &a, SECRET, creq_hash, sig), 0);
    if (strcmp(sig, expected_sig) != 0) {
        char *creq = sigv4_request_canonical(&h.rq, &a);
        fail_msg("signature %s, expected %s; canonical request:\n%s", sig, expected_sig, creq ? creq : "(null)");
    }
    assert_true(sigv4_hex_equal(sig, a.signature));
    if (expected_creq) {
        char *creq = sigv4_request_canonical(&h.rq, &a);
        assert_non_null(creq);
        assert_string_equal(creq, expected_creq);
        char hash[SIGV4_HEX_LEN + 1];
        assert_int_equal(sigv4_sha256_hex(creq, strlen(creq), hash), 0);
        assert_string_equal(hash, creq_hash);
        free(creq);
    }
    http_free(&h);
}

/* Parses src and expects sigv4_request_auth to refuse it with why. */
static void check_refused(const char *src, const char *expected_why) {
    http_text h;
    http_parse(&h, src, false);
    sigv4_auth a;
    const char *why = NULL;
    assert_int_equal(sigv4_request_auth(&h.rq, &a, &why), -1);
    assert_non_null(why);
    if (strcmp(why, expected_why) != 0) fail_msg("why: \"%s\", expected \"%s\"\n%s", why, expected_why, src);
    http_free(&h);
}

/* ---- AWS test suite, header signing ---- */

static void test_suite_header_vanilla(void **state) {
    (void)state;
    check_signed("GET / HTTP/1.1\nHost:example.amazonaws.com\nX-Amz-Date:" DATE "\n" SUITE_AUTH(
                     "host;x-amz-date", "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"),
                 false, "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31",
                 "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n" SIGV4_EMPTY_SHA256);
    check_signed("POST / HTTP/1.1\nHost:example.amazonaws.com\nX-Amz-Date:" DATE "\n" SUITE_AUTH(
                     "host;x-amz-date", "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"),
                 false, "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b", NULL);
}

static void test_suite_header_query(void **state) {
    (void)state;
    /* get-vanilla-query-order-key-case */
    check_signed("GET /?Param2=value2&Param1=value1 HTTP/1.1\nHost:example.amazonaws.com\nX-Amz-Date:" DATE
                 "\n" SUITE_AUTH("host;x-amz-date", "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500"),
                 false, "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500",
                 "GET\n/\nParam1=value1&Param2=value2\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\n"
                 "host;x-amz-date\n" SIGV4_EMPTY_SHA256);
    /* get-vanilla-query-unreserved */
    check_signed("GET /?-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz="
                 "-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz HTTP/1.1\n"
                 "Host:example.amazonaws.com\nX-Amz-Date:" DATE "\n" SUITE_AUTH(
                     "host;x-amz-date", "9c3e54bfcdf0b19771a7f523ee5669cdf59bc7cc0884027167c21bb143a40197"),
                 false, "9c3e54bfcdf0b19771a7f523ee5669cdf59bc7cc0884027167c21bb143a40197", NULL);
    /* get-vanilla-query-order-encoded: %E1%88%B4 sorts before "Param" */
    check_signed("GET /?Param-3=Value3&Param=Value2&%E1%88%B4=Value1 HTTP/1.1\nHost:example.amazonaws.com\n"
                 "X-Amz-Date:" DATE "\n" SUITE_AUTH(
                     "host;x-amz-date", "371d3713e185cc334048618a97f809c9ffe339c62934c032af5a0e595648fcac"),
                 false, "371d3713e185cc334048618a97f809c9ffe339c62934c032af5a0e595648fcac", NULL);
    /* get-vanilla-utf8-query: a raw UTF-8 name */
    check_signed("GET /?\xe1\x88\xb4=bar HTTP/1.1\nHost:example.amazonaws.com\nX-Amz-Date:" DATE "\n" SUITE_AUTH(
                     "host;x-amz-date", "2cdec8eed098649ff3a119c94853b13c643bcf08f8b0a1d91e12c9027818dd04"),
                 false, "2cdec8eed098649ff3a119c94853b13c643bcf08f8b0a1d91e12c9027818dd04", NULL);
    /* get-vanilla-empty-query-key, post-vanilla-query */
    check_signed("GET /?Param1=value1 HTTP/1.1\nHost:example.amazonaws.com\nX-Amz-Date:" DATE "\n" SUITE_AUTH(
                     "host;x-amz-date", "a67d582fa61cc504c4bae71f336f98b97f1ea3c7a6bfe1b6e45aec72011b9aeb"),
                 false, "a67d582fa61cc504c4bae71f336f98b97f1ea3c7a6bfe1b6e45aec72011b9aeb", NULL);
    check_signed("POST /?Param1=value1 HTTP/1.1\nHost:example.amazonaws.com\nX-Amz-Date:" DATE "\n" SUITE_AUTH(
                     "host;x-amz-date", "28038455d6de14eafc1f9222cf5aa6f1a96197d7deb8263271d420d138af7f11"),
                 false, "28038455d6de14eafc1f9222cf5aa6f1a96197d7deb8263271d420d138af7f11", NULL);
}

static void test_suite_header_paths(void **state) {
    (void)state;
    /* get-utf8, get-space-normalized, get-unreserved */
    check_signed("GET /\xe1\x88\xb4 HTTP/1.1\nHost:example.amazonaws.com\nX-Amz-Date:" DATE "\n" SUITE_AUTH(
                     "host;x-amz-date", "8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85"),
                 false, "8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85",
                 "GET\n/%E1%88%B4\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n" SIGV4_EMPTY_SHA256);
    check_signed("GET /example space/ HTTP/1.1\nHost:example.amazonaws.com\nX-Amz-Date:" DATE "\n" SUITE_AUTH(
                     "host;x-amz-date", "652487583200325589f1fba4c7e578f72c47cb61beeca81406b39ddec1366741"),
                 false, "652487583200325589f1fba4c7e578f72c47cb61beeca81406b39ddec1366741", NULL);
    check_signed("GET /-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz HTTP/1.1\n"
                 "Host:example.amazonaws.com\nX-Amz-Date:" DATE "\n" SUITE_AUTH(
                     "host;x-amz-date", "07ef7494c76fa4850883e2b006601f940f8a34d404d0cfa977f52a65bbf5f24f"),
                 false, "07ef7494c76fa4850883e2b006601f940f8a34d404d0cfa977f52a65bbf5f24f", NULL);
    /* the *-normalized variants: all but two name the root */
    static const struct {
        const char *path, *sig;
    } norm[] = {
        {"//", "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"},
        {"/./", "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"},
        {"/example/..", "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"},
        {"/example1/example2/../..", "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"},
        {"//example//", "9a624bd73a37c9a373b5312afbebe7a714a789de108f0bdfe846570885f57e84"},
        {"/./example", "ef75d96142cf21edca26f06005da7988e4f8dc83a165a80865db7089db637ec5"},
    };
    for (size_t i = 0; i < sizeof norm / sizeof norm[0]; i++) {
        char req[512];
        snprintf(req, sizeof req,
                 "GET %s HTTP/1.1\nHost:example.amazonaws.com\nX-Amz-Date:" DATE
                 "\nAuthorization:AWS4-HMAC-SHA256 Credential=" CRED ", SignedHeaders=host;x-amz-date, Signature=%s\n",
                 norm[i].path, norm[i].sig);
        check_signed(req, false, norm[i].sig, NULL);
    }
    /* the *-unnormalized variants are what S3 signs: the path as it is */
    static const struct {
        const char *path, *sig;
    } raw[] = {
        {"//", "c88bcd3d312d75078c0cd961d6deae3f4c754924b01669efcfcb439fd5e5b76e"},
        {"/./", "68714168e6557f8f2de0ef956fc24dc2593a4bd2961f8df51898d8a134695145"},
        {"/example/..", "eca7ead57bb5aa5c8e28007acd4ff04e1ff9a0ff3b237ec1554a184887ff9282"},
        {"/example1/example2/../..", "dc33e0856fd4baca4d7aa2146c38958283844764f38c74252a333df5e613003b"},
        {"//example//", "87cca117541a147f6df867677d98a7d80dff226d2bfca9e4ffa899665623c7e5"},
        {"/./example", "beb03f223f7deae4146464f06e29eebbee9c8afbe15c290cf07aa8b119e14cff"},
        {"/example%20space/", "652487583200325589f1fba4c7e578f72c47cb61beeca81406b39ddec1366741"},
    };
    for (size_t i = 0; i < sizeof raw / sizeof raw[0]; i++) {
        char req[512];
        snprintf(req, sizeof req,
                 "GET %s HTTP/1.1\nHost:example.amazonaws.com\nX-Amz-Date:" DATE
                 "\nAuthorization:AWS4-HMAC-SHA256 Credential=" CRED ", SignedHeaders=host;x-amz-date, Signature=%s\n",
                 raw[i].path, raw[i].sig);
        check_signed(req, true, raw[i].sig, NULL);
    }
}

static void test_suite_header_values(void **state) {
    (void)state;
    /* get-header-value-trim */
    check_signed("GET / HTTP/1.1\nHost:example.amazonaws.com\nMy-Header1: value1\nMy-Header2: \"a   b   c\"\n"
                 "X-Amz-Date:" DATE "\n" SUITE_AUTH("host;my-header1;my-header2;x-amz-date",
                                                    "acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736"),
                 false, "acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736",
                 "GET\n/\n\nhost:example.amazonaws.com\nmy-header1:value1\nmy-header2:\"a b c\"\n"
                 "x-amz-date:20150830T123600Z\n\nhost;my-header1;my-header2;x-amz-date\n" SIGV4_EMPTY_SHA256);
    /* get-header-value-multiline (obs-fold) */
    check_signed("GET / HTTP/1.1\nHost:example.amazonaws.com\nMy-Header1:value1\n  value2\n     value3\n"
                 "X-Amz-Date:" DATE "\n" SUITE_AUTH("host;my-header1;x-amz-date",
                                                    "cfd34249e4b1c8d6b91ef74165d41a32e5fab3306300901bb65a51a73575eefd"),
                 false, "cfd34249e4b1c8d6b91ef74165d41a32e5fab3306300901bb65a51a73575eefd", NULL);
    /* get-header-key-duplicate, get-header-value-order: repeated headers joined with ',' in order */
    check_signed("GET / HTTP/1.1\nHost:example.amazonaws.com\nMy-Header1:value2\nMy-Header1:value2\n"
                 "My-Header1:value1\nX-Amz-Date:" DATE "\n" SUITE_AUTH(
                     "host;my-header1;x-amz-date", "c9d5ea9f3f72853aea855b47ea873832890dbdd183b4468f858259531a5138ea"),
                 false, "c9d5ea9f3f72853aea855b47ea873832890dbdd183b4468f858259531a5138ea", NULL);
    check_signed("GET / HTTP/1.1\nHost:example.amazonaws.com\nMy-Header1:value4\nMy-Header1:value1\n"
                 "My-Header1:value3\nMy-Header1:value2\nX-Amz-Date:" DATE "\n" SUITE_AUTH(
                     "host;my-header1;x-amz-date", "08c7e5a9acfcfeb3ab6b2185e75ce8b1deb5e634ec47601a50643f830c755c01"),
                 false, "08c7e5a9acfcfeb3ab6b2185e75ce8b1deb5e634ec47601a50643f830c755c01", NULL);
    /* post-header-key-sort, post-header-value-case */
    check_signed("POST / HTTP/1.1\nHost:example.amazonaws.com\nMy-Header1:value1\nX-Amz-Date:" DATE "\n" SUITE_AUTH(
                     "host;my-header1;x-amz-date", "c5410059b04c1ee005303aed430f6e6645f61f4dc9e1461ec8f8916fdf18852c"),
                 false, "c5410059b04c1ee005303aed430f6e6645f61f4dc9e1461ec8f8916fdf18852c", NULL);
    check_signed("POST / HTTP/1.1\nHost:example.amazonaws.com\nMy-Header1:VALUE1\nX-Amz-Date:" DATE "\n" SUITE_AUTH(
                     "host;my-header1;x-amz-date", "cdbc9802e29d2942e5e10b5bccfdd67c5f22c7c4e8ae67b53629efa58b974b7d"),
                 false, "cdbc9802e29d2942e5e10b5bccfdd67c5f22c7c4e8ae67b53629efa58b974b7d", NULL);
}

static void test_suite_header_body_and_token(void **state) {
    (void)state;
    /* post-x-www-form-urlencoded(-parameters): the body's hash signed, also in x-amz-content-sha256 */
    check_signed("POST / HTTP/1.1\nContent-Type:application/x-www-form-urlencoded\nHost:example.amazonaws.com\n"
                 "Content-Length:13\nX-Amz-Date:" DATE "\n"
                 "x-amz-content-sha256:9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e\n" SUITE_AUTH(
                     "content-length;content-type;host;x-amz-content-sha256;x-amz-date",
                     "d3875051da38690788ef43de4db0d8f280229d82040bfac253562e56c3f20e0b") "\nParam1=value1",
                 false, "d3875051da38690788ef43de4db0d8f280229d82040bfac253562e56c3f20e0b",
                 "POST\n/\n\ncontent-length:13\ncontent-type:application/x-www-form-urlencoded\n"
                 "host:example.amazonaws.com\n"
                 "x-amz-content-sha256:9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e\n"
                 "x-amz-date:20150830T123600Z\n\ncontent-length;content-type;host;x-amz-content-sha256;x-amz-date\n"
                 "9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e");
    check_signed("POST / HTTP/1.1\nContent-Type:application/x-www-form-urlencoded; charset=utf-8\n"
                 "Host:example.amazonaws.com\nContent-Length:13\nX-Amz-Date:" DATE "\n"
                 "x-amz-content-sha256:9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e\n" SUITE_AUTH(
                     "content-length;content-type;host;x-amz-content-sha256;x-amz-date",
                     "328d1b9eaadca9f5818ef05e8392801e091653bafec24fcab71e7344e7f51422") "\nParam1=value1",
                 false, "328d1b9eaadca9f5818ef05e8392801e091653bafec24fcab71e7344e7f51422", NULL);
    /* get-vanilla-with-session-token, post-sts-header-before: the token signed as a header */
    check_signed("GET / HTTP/1.1\nHost:example.amazonaws.com\n"
                 "X-Amz-Security-Token:6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267\n"
                 "X-Amz-Date:" DATE "\n" SUITE_AUTH("host;x-amz-date;x-amz-security-token",
                                                    "07ec1639c89043aa0e3e2de82b96708f198cceab042d4a97044c66dd9f74e7f8"),
                 false, "07ec1639c89043aa0e3e2de82b96708f198cceab042d4a97044c66dd9f74e7f8", NULL);
    const char *sts_token =
        "AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmxfpSPfIeoIYRqTflfKD8YUu"
        "wthAx7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE8phUZampKsburEDy0KPkyQDYwT7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQ"
        "cHNVXAkiY9q6d+xo0rKwT38xVqr7ZD0u0iPPkUL64lIZbqBAz+scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICC"
        "R/oLxBA==";
    char req[2048];
    snprintf(req, sizeof req,
             "POST / HTTP/1.1\nHost:example.amazonaws.com\nX-Amz-Security-Token:%s\nX-Amz-Date:" DATE "\n" SUITE_AUTH(
                 "host;x-amz-date;x-amz-security-token", "85d96828115b5dc0cfc3bd16ad9e210dd772bbebba041836c64533a82be05ead"),
             sts_token);
    check_signed(req, false, "85d96828115b5dc0cfc3bd16ad9e210dd772bbebba041836c64533a82be05ead", NULL);
    http_text h;
    http_parse(&h, req, false);
    sigv4_auth a;
    const char *why;
    assert_int_equal(sigv4_request_auth(&h.rq, &a, &why), 0);
    assert_string_equal(a.security_token, sts_token);
    assert_false(a.presigned);
    assert_int_equal(a.expires_s, -1);
    assert_string_equal(a.date8, "20150830");
    assert_string_equal(a.region, "us-east-1");
    assert_string_equal(a.service, "service");
    assert_string_equal(a.amz_date, DATE);
    assert_string_equal(a.signed_headers, "host;x-amz-date;x-amz-security-token");
    http_free(&h);
}

/* ---- AWS test suite, query signing ---- */

static void test_suite_presigned(void **state) {
    (void)state;
    check_signed("GET /?" PRESIGN_Q("host") "&X-Amz-Signature=e93c787ed7f371d5c6b165c1b38ede9550f4dce4144713e844b25b7192d3865d"
                 " HTTP/1.1\nHost:example.amazonaws.com\n",
                 false, "e93c787ed7f371d5c6b165c1b38ede9550f4dce4144713e844b25b7192d3865d",
                 "GET\n/\nX-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIDEXAMPLE%2F20150830%2Fus-east-1%2Fservice"
                 "%2Faws4_request&X-Amz-Date=20150830T123600Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=host\n"
                 "host:example.amazonaws.com\n\nhost\n" SIGV4_EMPTY_SHA256);
    check_signed("GET /\xe1\x88\xb4?" PRESIGN_Q("host") "&X-Amz-Signature="
                 "10eae3f14a260bd3911cc6d008d3c576d143b05b62f09782a7a4b37f52178e44 HTTP/1.1\nHost:example.amazonaws.com\n",
                 false, "10eae3f14a260bd3911cc6d008d3c576d143b05b62f09782a7a4b37f52178e44", NULL);
    check_signed("GET /example space/?" PRESIGN_Q("host") "&X-Amz-Signature="
                 "7a1f416954786484c9824d93c1f26ef64acb9b1b6c9154d08c9f07d0e394abf6 HTTP/1.1\nHost:example.amazonaws.com\n",
                 false, "7a1f416954786484c9824d93c1f26ef64acb9b1b6c9154d08c9f07d0e394abf6", NULL);
    check_signed("GET //example//?" PRESIGN_Q("host") "&X-Amz-Signature="
                 "c1834e8fb0307243711f0f907f6ab7311ed300d87f13792d7ee4da89ab93e082 HTTP/1.1\nHost:example.amazonaws.com\n",
                 false, "c1834e8fb0307243711f0f907f6ab7311ed300d87f13792d7ee4da89ab93e082", NULL);
    check_signed("GET /?Param2=value2&Param1=value1&" PRESIGN_Q("host") "&X-Amz-Signature="
                 "86012e2c9ad4d77369f5d81c11f75158aae4f895a085212cc6d3f923d300bed5 HTTP/1.1\nHost:example.amazonaws.com\n",
                 false, "86012e2c9ad4d77369f5d81c11f75158aae4f895a085212cc6d3f923d300bed5", NULL);
    check_signed("GET /?\xe1\x88\xb4=bar&" PRESIGN_Q("host") "&X-Amz-Signature="
                 "0bdd809b1519ac4f0c1dc3540e2cc46bd0c7f778eda408b2ebf3b913d21ff600 HTTP/1.1\nHost:example.amazonaws.com\n",
                 false, "0bdd809b1519ac4f0c1dc3540e2cc46bd0c7f778eda408b2ebf3b913d21ff600", NULL);
    check_signed("GET /?" PRESIGN_Q("host%3Bmy-header1") "&X-Amz-Signature="
                 "3349ee0b81b4b589da0ff28a395c3591e04de515651dd74f298fa992d1507a97 HTTP/1.1\nHost:example.amazonaws.com\n"
                 "My-Header1:value2\nMy-Header1:value2\nMy-Header1:value1\n",
                 false, "3349ee0b81b4b589da0ff28a395c3591e04de515651dd74f298fa992d1507a97", NULL);
    /* post-x-www-form-urlencoded: a presigned POST outside S3 signs its body's hash */
    check_signed("POST /?" PRESIGN_Q("content-length%3Bcontent-type%3Bhost") "&X-Amz-Signature="
                 "89a40deed0f26f9461242825a082d2222717248abc7ab41f552ad84a94ad46e9 HTTP/1.1\n"
                 "Content-Type:application/x-www-form-urlencoded\nHost:example.amazonaws.com\nContent-Length:13\n"
                 "\nParam1=value1",
                 false, "89a40deed0f26f9461242825a082d2222717248abc7ab41f552ad84a94ad46e9", NULL);
    /* get-vanilla-with-session-token, post-sts-header-before: the token in the query, signed */
    check_signed("GET /?" PRESIGN_Q("host") "&X-Amz-Security-Token="
                 "6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267&X-Amz-Signature="
                 "7ff2b50b376cb4d151970630573d6291dc128cc5c2a12ffb237f73cc53f67b6c HTTP/1.1\nHost:example.amazonaws.com\n",
                 false, "7ff2b50b376cb4d151970630573d6291dc128cc5c2a12ffb237f73cc53f67b6c", NULL);
    const char *req =
        "POST /?" PRESIGN_Q("host") "&X-Amz-Security-Token=AQoDYXdzEPT%2F%2F%2F%2F%2F%2F%2F%2F%2F%2FwEXAMPLEtc764bNrC9"
        "SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmxfpSPfIeoIYRqTflfKD8YUuwthAx7mSEI%2FqkPpKPi%2FkMcGdQrmGdeehM4"
        "IC1NtBmUpp2wUE8phUZampKsburEDy0KPkyQDYwT7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQcHNVXAkiY9q6d%2Bxo0rKwT38xVqr7ZD0u"
        "0iPPkUL64lIZbqBAz%2BscqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICCR%2FoLxBA%3D%3D&X-Amz-Signature="
        "46c2e3c63c1dbe7d39f8ada16fe7f001c1f56c5791441565323677f96308871c HTTP/1.1\nHost:example.amazonaws.com\n";
    check_signed(req, false, "46c2e3c63c1dbe7d39f8ada16fe7f001c1f56c5791441565323677f96308871c", NULL);
    http_text h;
    http_parse(&h, req, false);
    sigv4_auth a;
    const char *why;
    assert_int_equal(sigv4_request_auth(&h.rq, &a, &why), 0);
    assert_true(a.presigned);
    assert_int_equal(a.expires_s, 3600);
    assert_string_equal(a.amz_date, DATE);
    assert_string_equal(a.signed_headers, "host");
    assert_int_equal(strncmp(a.security_token, "AQoDYXdzEPT//////////wEXAMPLE", 29), 0); /* decoded */
    assert_non_null(strstr(a.security_token, "q6d+xo0r"));
    http_free(&h);
}

/* ---- botocore's requests to the kafka API ---- */

#define KAFKA_ARN_PATH                                                                                    \
    "/v1/clusters/arn%3Aaws%3Akafka%3Aus-east-1%3A123456789012%3Acluster%2Fdemo%2F0b1c2d3e-4f50-6172-8394-" \
    "a5b6c7d8e9f0-s1/bootstrap-brokers"
#define BOTO_UA \
    "User-Agent:Botocore/1.44.8 ua/2.1 os/linux#6.18.44-fc-v1272 md/arch#x86_64 lang/python#3.11.7 md/pyimpl#CPython\n"
#define KAFKA_CRED "AKIDEXAMPLE/20250102/us-east-1/kafka/aws4_request"

static void test_botocore_kafka(void **state) {
    (void)state;
    /* GetBootstrapBrokers: the ARN percent-encoded in the path, encoded once more when signed;
     * unsigned headers (User-Agent, amz-sdk-*, Accept-Encoding) around the signed ones. */
    const char *get_bb =
        "GET " KAFKA_ARN_PATH " HTTP/1.1\nHost:127.0.0.1:4566\nAccept-Encoding:identity\n" BOTO_UA
        "X-Amz-Date:20250102T030405Z\n"
        "Authorization:AWS4-HMAC-SHA256 Credential=" KAFKA_CRED ", SignedHeaders=host;x-amz-date, "
        "Signature=7064ab30091fbda29c235fbed552fc8815a8f1b3ebabbbce2a8a5341f67494e7\n"
        "amz-sdk-invocation-id:87fe5b3d-1424-466a-9263-c2dc83fbc7a4\namz-sdk-request:attempt=1; max=3\n";
    check_signed(get_bb, false, "7064ab30091fbda29c235fbed552fc8815a8f1b3ebabbbce2a8a5341f67494e7", NULL);
    http_text h;
    http_parse(&h, get_bb, false);
    sigv4_auth a;
    const char *why;
    assert_int_equal(sigv4_request_auth(&h.rq, &a, &why), 0);
    assert_string_equal(a.service, "kafka");
    assert_string_equal(a.security_token, "");
    char creq_hash[SIGV4_HEX_LEN + 1], sig[SIGV4_HEX_LEN + 1];
    assert_int_equal(sigv4_request_signature(&h.rq, &a, SECRET, creq_hash, sig), 0);
    assert_string_equal(creq_hash, "67e11b10cb04f57c121ceebaf5a22733ec8fda63f126bc3d3f2ff8d616060027");
    http_free(&h);

    /* ListClustersV2 with a session token; the filter's space and plus as botocore encodes them */
    check_signed("GET /api/v2/clusters?clusterNameFilter=de%20mo%2Bx&maxResults=5 HTTP/1.1\nHost:127.0.0.1:4566\n" BOTO_UA
                 "X-Amz-Date:20250102T030405Z\nX-Amz-Security-Token:FQoGZXIvYXdzEXAMPLE/+token==\n"
                 "Authorization:AWS4-HMAC-SHA256 Credential=" KAFKA_CRED
                 ", SignedHeaders=host;x-amz-date;x-amz-security-token, "
                 "Signature=01c1b61f45cc0aca3ef1e113d4bd297d4ddd7244f1d6e2f2ea051af68d7fbe95\n",
                 false, "01c1b61f45cc0aca3ef1e113d4bd297d4ddd7244f1d6e2f2ea051af68d7fbe95", NULL);

    /* CreateClusterV2: a JSON body, its hash signed (botocore's canonical request, verbatim) */
    check_signed("POST /api/v2/clusters HTTP/1.1\nHost:127.0.0.1:4566\nContent-Type:application/json\n" BOTO_UA
                 "X-Amz-Date:20250102T030405Z\n"
                 "Authorization:AWS4-HMAC-SHA256 Credential=" KAFKA_CRED ", SignedHeaders=content-type;host;x-amz-date, "
                 "Signature=3f01e2a092a6a6a58525e25202b5cc85d2b2c5992140d13f94639dcf03de516a\nContent-Length:146\n\n"
                 "{\"clusterName\": \"demo\", \"serverless\": {\"vpcConfigs\": [{\"subnetIds\": [\"subnet-1\"]}], "
                 "\"clientAuthentication\": {\"sasl\": {\"iam\": {\"enabled\": true}}}}}",
                 false, "3f01e2a092a6a6a58525e25202b5cc85d2b2c5992140d13f94639dcf03de516a",
                 "POST\n/api/v2/clusters\n\ncontent-type:application/json\nhost:127.0.0.1:4566\n"
                 "x-amz-date:20250102T030405Z\n\ncontent-type;host;x-amz-date\n"
                 "1f5ad0714c1508c1c270aeee4736198c45f93698b2d5b335a709f9ae92d74a3c");

    /* generate_presigned_url("get_bootstrap_brokers", ExpiresIn=900): the empty payload's hash,
     * not UNSIGNED-PAYLOAD (that is S3's presigner) */
    check_signed("GET " KAFKA_ARN_PATH "?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIDEXAMPLE%2F20250102%2F"
                 "us-east-1%2Fkafka%2Faws4_request&X-Amz-Date=20250102T030405Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host"
                 "&X-Amz-Signature=7f4656f0bca0b96fcf4f570d7624569e0b31f5c798e01290b9ad9952224f6a20 HTTP/1.1\n"
                 "Host:127.0.0.1:4566\n",
                 false, "7f4656f0bca0b96fcf4f570d7624569e0b31f5c798e01290b9ad9952224f6a20",
                 "GET\n/v1/clusters/arn%253Aaws%253Akafka%253Aus-east-1%253A123456789012%253Acluster%252Fdemo%252F"
                 "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0-s1/bootstrap-brokers\nX-Amz-Algorithm=AWS4-HMAC-SHA256&"
                 "X-Amz-Credential=AKIDEXAMPLE%2F20250102%2Fus-east-1%2Fkafka%2Faws4_request&X-Amz-Date=20250102T030405Z&"
                 "X-Amz-Expires=900&X-Amz-SignedHeaders=host\nhost:127.0.0.1:4566\n\nhost\n" SIGV4_EMPTY_SHA256);
}

/* ---- what must not verify ---- */

static void expect_mismatch(const char *src, const char *secret) {
    http_text h;
    http_parse(&h, src, false);
    sigv4_auth a;
    const char *why;
    assert_int_equal(sigv4_request_auth(&h.rq, &a, &why), 0);
    char sig[SIGV4_HEX_LEN + 1];
    assert_int_equal(sigv4_request_signature(&h.rq, &a, secret, NULL, sig), 0);
    assert_false(sigv4_hex_equal(sig, a.signature));
    http_free(&h);
}

static void test_mismatches(void **state) {
    (void)state;
    const char *auth = SUITE_AUTH("host;x-amz-date", "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
    char req[1024];
    /* another secret */
    snprintf(req, sizeof req, "GET / HTTP/1.1\nHost:example.amazonaws.com\nX-Amz-Date:" DATE "\n%s", auth);
    expect_mismatch(req, "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEZ");
    /* another path, host, date, query, method */
    snprintf(req, sizeof req, "GET /x HTTP/1.1\nHost:example.amazonaws.com\nX-Amz-Date:" DATE "\n%s", auth);
    expect_mismatch(req, SECRET);
    snprintf(req, sizeof req, "GET / HTTP/1.1\nHost:example.amazonaws.com:80\nX-Amz-Date:" DATE "\n%s", auth);
    expect_mismatch(req, SECRET);
    snprintf(req, sizeof req, "GET / HTTP/1.1\nHost:example.amazonaws.com\nX-Amz-Date:20150830T123601Z\n%s", auth);
    expect_mismatch(req, SECRET);
    snprintf(req, sizeof req, "GET /?a=b HTTP/1.1\nHost:example.amazonaws.com\nX-Amz-Date:" DATE "\n%s", auth);
    expect_mismatch(req, SECRET);
    snprintf(req, sizeof req, "HEAD / HTTP/1.1\nHost:example.amazonaws.com\nX-Amz-Date:" DATE "\n%s", auth);
    expect_mismatch(req, SECRET);
    /* a '+' in the query is a plus, not a space: "a+b" signs as "a%2Bb", "a%20b" differently */
#define PLUS_REQ(q)                                                                                             \
    "GET /?k=" q " HTTP/1.1\nHost:h\nX-Amz-Date:" DATE "\nAuthorization:AWS4-HMAC-SHA256 Credential=" CRED \
    ", SignedHeaders=host;x-amz-date, Signature=" GOOD_SIG "\n"
    const char *plus_forms[] = {PLUS_REQ("a%2Bb"), PLUS_REQ("a+b"), PLUS_REQ("a%2bb"), PLUS_REQ("a%20b")};
    char *creqs[4];
    for (size_t i = 0; i < 4; i++) {
        http_text h;
        http_parse(&h, plus_forms[i], false);
        sigv4_auth a;
        const char *why;
        assert_int_equal(sigv4_request_auth(&h.rq, &a, &why), 0);
        creqs[i] = sigv4_request_canonical(&h.rq, &a);
        assert_non_null(creqs[i]);
        http_free(&h);
    }
    assert_non_null(strstr(creqs[0], "\nk=a%2Bb\n"));
    assert_string_equal(creqs[0], creqs[1]);
    assert_string_equal(creqs[0], creqs[2]); /* lower-case hex decodes to the same byte */
    assert_non_null(strstr(creqs[3], "\nk=a%20b\n"));
    for (size_t i = 0; i < 4; i++) free(creqs[i]);

    /* a body other than the one x-amz-content-sha256 names: the body's own hash is signed */
    expect_mismatch("POST / HTTP/1.1\nContent-Type:application/x-www-form-urlencoded\nHost:example.amazonaws.com\n"
                    "Content-Length:13\nX-Amz-Date:" DATE "\n"
                    "x-amz-content-sha256:9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e\n" SUITE_AUTH(
                        "content-length;content-type;host;x-amz-content-sha256;x-amz-date",
                        "d3875051da38690788ef43de4db0d8f280229d82040bfac253562e56c3f20e0b") "\nParam1=value2",
                    SECRET);
}

static void test_payload_choice(void **state) {
    (void)state;
    sigv4_auth a;
    const char *why;
    /* x-amz-content-sha256: UNSIGNED-PAYLOAD is signed as such, whatever the body */
    http_text h;
    http_parse(&h,
               "PUT /k HTTP/1.1\nHost:h\nx-amz-content-sha256: UNSIGNED-PAYLOAD\nX-Amz-Date:" DATE "\n"
               "Authorization:AWS4-HMAC-SHA256 Credential=" CRED ", SignedHeaders=host;x-amz-content-sha256;x-amz-date, "
               "Signature=0000000000000000000000000000000000000000000000000000000000000000\n\nbody",
               false);
    assert_int_equal(sigv4_request_auth(&h.rq, &a, &why), 0);
    char *c = sigv4_request_canonical(&h.rq, &a);
    size_t n = strlen(c), u = strlen("\nUNSIGNED-PAYLOAD");
    assert_true(n > u && strcmp(c + n - u, "\nUNSIGNED-PAYLOAD") == 0);
    free(c);
    http_free(&h);
    /* a presigned S3 request: UNSIGNED-PAYLOAD, the path kept as sent */
    http_parse(&h, "GET /bucket/a%2Fb?" PRESIGN_Q("host") "&X-Amz-Signature=0000000000000000000000000000000000000000000000000000000000000000 HTTP/1.1\nHost:h\n", true);
    assert_int_equal(sigv4_request_auth(&h.rq, &a, &why), 0);
    c = sigv4_request_canonical(&h.rq, &a);
    assert_int_equal(strncmp(c, "GET\n/bucket/a%2Fb\n", 18), 0);
    n = strlen(c);
    assert_true(n > u && strcmp(c + n - u, "\nUNSIGNED-PAYLOAD") == 0);
    free(c);
    http_free(&h);
}

/* ---- canonical URIs ---- */

static void expect_uri(const char *raw, bool s3, const char *want) {
    char *got = sigv4_canonical_uri(raw, s3);
    assert_non_null(got);
    /* raw may be NULL (the path was absent): name it so, %s of NULL is undefined */
    if (strcmp(got, want) != 0)
        fail_msg("canonical URI of \"%s\": \"%s\", expected \"%s\"", raw ? raw : "(null)", got, want);
    free(got);
}

static void test_canonical_uri(void **state) {
    (void)state;
    expect_uri("", false, "/");
    expect_uri(NULL, false, "/");
    expect_uri("", true, "/");
    expect_uri("/", false, "/");
    expect_uri("/a%2Fb", false, "/a%252Fb");
    expect_uri("/a/./b/../c/", false, "/a/c/");
    expect_uri("/..", false, "/");
    expect_uri("/../../a", false, "/a");
    expect_uri("/a b~*", false, "/a%20b~%2A");
    expect_uri("/a//b/.//c", true, "/a//b/.//c");
}

/* ---- refusals while parsing ---- */

#define WITH_AUTH(authz) "GET / HTTP/1.1\nHost:example.amazonaws.com\nX-Amz-Date:" DATE "\nAuthorization:" authz "\n"

static void test_refusals(void **state) {
    (void)state;
    check_refused("GET / HTTP/1.1\nHost:example.amazonaws.com\nX-Amz-Date:" DATE "\n", "missing");
    check_refused("GET /?Action=GetCallerIdentity&X-Amz-Date=" DATE " HTTP/1.1\nHost:h\n", "missing");
    check_refused(WITH_AUTH("AWS4-HMAC-SHA512 Credential=" CRED ", SignedHeaders=host;x-amz-date, Signature=" GOOD_SIG),
                  "unsupported algorithm in the Authorization header (only AWS4-HMAC-SHA256)");
    check_refused(WITH_AUTH("AWS AKIDEXAMPLE:abc"),
                  "unsupported algorithm in the Authorization header (only AWS4-HMAC-SHA256)");
    /* Credential */
    const char *bad_cred[] = {
        "AKIDEXAMPLE/20150830/us-east-1/service",
        "AKIDEXAMPLE/20150830/us-east-1/service/aws4_request/x",
        "AKIDEXAMPLE/2015083/us-east-1/service/aws4_request",
        "AKIDEXAMPLE/2015083x/us-east-1/service/aws4_request",
        "AKIDEXAMPLE/20150830/us-east-1/service/aws5_request",
        "/20150830/us-east-1/service/aws4_request",
        "AKIDEXAMPLE/20150830//service/aws4_request",
        "AKIDEXAMPLE/20150830/us-east-1//aws4_request",
    };
    for (size_t i = 0; i < sizeof bad_cred / sizeof bad_cred[0]; i++) {
        char req[512];
        snprintf(req, sizeof req,
                 "GET / HTTP/1.1\nHost:h\nX-Amz-Date:" DATE "\nAuthorization:AWS4-HMAC-SHA256 Credential=%s, "
                 "SignedHeaders=host;x-amz-date, Signature=" GOOD_SIG "\n",
                 bad_cred[i]);
        check_refused(req, "malformed Credential in the Authorization header");
    }
    /* SignedHeaders: upper case, unsorted, repeated, empty name, empty */
    const char *bad_sh[] = {"Host;x-amz-date", "x-amz-date;host", "host;host;x-amz-date", "host;;x-amz-date", "",
                            "host;x amz"};
    for (size_t i = 0; i < sizeof bad_sh / sizeof bad_sh[0]; i++) {
        char req[512];
        snprintf(req, sizeof req,
                 "GET / HTTP/1.1\nHost:h\nX-Amz-Date:" DATE "\nAuthorization:AWS4-HMAC-SHA256 Credential=" CRED
                 ", SignedHeaders=%s, Signature=" GOOD_SIG "\n",
                 bad_sh[i]);
        check_refused(req, "malformed SignedHeaders in the Authorization header");
    }
    /* Signature: short, upper case, not hex */
    check_refused(WITH_AUTH("AWS4-HMAC-SHA256 Credential=" CRED ", SignedHeaders=host;x-amz-date, Signature=5fa00f"),
                  "malformed Signature in the Authorization header");
    check_refused(WITH_AUTH("AWS4-HMAC-SHA256 Credential=" CRED ", SignedHeaders=host;x-amz-date, Signature="
                            "5FA00FA31553B73EBF1942676E86291E8372FF2A2260956D9B8AAE1D763FBF31"),
                  "malformed Signature in the Authorization header");
    check_refused(WITH_AUTH("AWS4-HMAC-SHA256 Credential=" CRED ", SignedHeaders=host;x-amz-date"),
                  "malformed Authorization header (no Signature)");
    check_refused(WITH_AUTH("AWS4-HMAC-SHA256 Credential=" CRED ", SignedHeaders=host;x-amz-date, Signature=" GOOD_SIG
                            ", Extra=1"),
                  "malformed Authorization header (a part other than Credential, SignedHeaders, Signature)");
    check_refused(WITH_AUTH("AWS4-HMAC-SHA256 Credential=" CRED ", Credential=" CRED
                            ", SignedHeaders=host;x-amz-date, Signature=" GOOD_SIG),
                  "malformed Credential in the Authorization header");
    /* host unsigned; a signed header the request lacks */
    check_refused(WITH_AUTH("AWS4-HMAC-SHA256 Credential=" CRED ", SignedHeaders=x-amz-date, Signature=" GOOD_SIG),
                  "host not signed");
    check_refused(WITH_AUTH("AWS4-HMAC-SHA256 Credential=" CRED ", SignedHeaders=host;my-header1;x-amz-date, "
                            "Signature=" GOOD_SIG),
                  "a signed header is missing from the request");
    /* dates */
    check_refused("GET / HTTP/1.1\nHost:h\nAuthorization:AWS4-HMAC-SHA256 Credential=" CRED
                  ", SignedHeaders=host, Signature=" GOOD_SIG "\n",
                  "no X-Amz-Date or Date header");
    check_refused("GET / HTTP/1.1\nHost:h\nX-Amz-Date:2015-08-30T12:36:00Z\nAuthorization:AWS4-HMAC-SHA256 Credential=" CRED
                  ", SignedHeaders=host, Signature=" GOOD_SIG "\n",
                  "malformed X-Amz-Date (yyyymmddTHHMMSSZ)");
    check_refused("GET / HTTP/1.1\nHost:h\nX-Amz-Date:20150831T000000Z\nAuthorization:AWS4-HMAC-SHA256 Credential=" CRED
                  ", SignedHeaders=host, Signature=" GOOD_SIG "\n",
                  "malformed Credential (its date is not X-Amz-Date's day)");
    check_refused("GET / HTTP/1.1\nHost:h\nDate:yesterday\nAuthorization:AWS4-HMAC-SHA256 Credential=" CRED
                  ", SignedHeaders=host, Signature=" GOOD_SIG "\n",
                  "malformed Date header");
    /* twice, or both ways */
    check_refused("GET / HTTP/1.1\nHost:h\nX-Amz-Date:" DATE "\nAuthorization:AWS4-HMAC-SHA256 Credential=" CRED
                  ", SignedHeaders=host, Signature=" GOOD_SIG "\nauthorization:AWS4-HMAC-SHA256 Credential=" CRED
                  ", SignedHeaders=host, Signature=" GOOD_SIG "\n",
                  "more than one Authorization header");
    check_refused("GET /?X-Amz-Algorithm=AWS4-HMAC-SHA256 HTTP/1.1\nHost:h\nX-Amz-Date:" DATE
                  "\nAuthorization:AWS4-HMAC-SHA256 Credential=" CRED ", SignedHeaders=host, Signature=" GOOD_SIG "\n",
                  "both an Authorization header and X-Amz-Algorithm in the query (only one way of signing)");
    /* presigned */
    check_refused("GET /?" PRESIGN_Q("host") " HTTP/1.1\nHost:h\n", "malformed Signature (no X-Amz-Signature)");
    check_refused("GET /?" PRESIGN_Q("host") "&X-Amz-Signature=" GOOD_SIG "&X-Amz-Expires=60 HTTP/1.1\nHost:h\n",
                  "an X-Amz-* query parameter given more than once");
    check_refused("GET /?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIDEXAMPLE%2F20150830%2Fus-east-1%2Fservice"
                  "%2Faws4_request&X-Amz-Date=20150830T123600Z&X-Amz-SignedHeaders=host&X-Amz-Expires=604801"
                  "&X-Amz-Signature=" GOOD_SIG " HTTP/1.1\nHost:h\n",
                  "malformed X-Amz-Expires (seconds, at most 604800)");
    check_refused("GET /?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIDEXAMPLE%2F20150830%2Fus-east-1%2Fservice"
                  "%2Faws4_request&X-Amz-Date=20150830T123600Z&X-Amz-SignedHeaders=x-amz-date&X-Amz-Expires=60"
                  "&X-Amz-Signature=" GOOD_SIG " HTTP/1.1\nHost:h\n",
                  "host not signed");
    check_refused("GET /?X-Amz-Algorithm=AWS4-HMAC-SHA1&X-Amz-Credential=x HTTP/1.1\nHost:h\n",
                  "no X-Amz-Date in the presigned query");
    check_refused("GET /?" PRESIGN_Q("host") "&X-Amz-Signature=" GOOD_SIG "&x=%zz HTTP/1.1\nHost:h\n",
                  "malformed query string (a '%' not followed by two hex digits, or %00)");
    check_refused("GET /?" PRESIGN_Q("host") "&X-Amz-Signature=" GOOD_SIG "&x=%00 HTTP/1.1\nHost:h\n",
                  "malformed query string (a '%' not followed by two hex digits, or %00)");
}

static void test_date_header(void **state) {
    (void)state;
    /* No X-Amz-Date: the Date header, in RFC 7231's form or ISO basic, becomes amz_date */
    const char *forms[] = {"Sun, 30 Aug 2015 12:36:00 GMT", "20150830T123600Z", " Sun, 30 Aug 2015 12:36:00 GMT "};
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        char req[512];
        snprintf(req, sizeof req,
                 "GET / HTTP/1.1\nHost:h\nDate:%s\nAuthorization:AWS4-HMAC-SHA256 Credential=" CRED
                 ", SignedHeaders=date;host, Signature=" GOOD_SIG "\n",
                 forms[i]);
        http_text h;
        http_parse(&h, req, false);
        sigv4_auth a;
        const char *why = NULL;
        if (sigv4_request_auth(&h.rq, &a, &why)) fail_msg("refused %s: %s", forms[i], why);
        assert_string_equal(a.amz_date, DATE);
        http_free(&h);
    }
    /* X-Amz-Date wins over Date */
    http_text h;
    http_parse(&h,
               "GET / HTTP/1.1\nHost:h\nDate:Mon, 31 Aug 2015 00:00:00 GMT\nX-Amz-Date:" DATE
               "\nAuthorization:AWS4-HMAC-SHA256 Credential=" CRED ", SignedHeaders=host, Signature=" GOOD_SIG "\n",
               false);
    sigv4_auth a;
    const char *why;
    assert_int_equal(sigv4_request_auth(&h.rq, &a, &why), 0);
    assert_string_equal(a.amz_date, DATE);
    http_free(&h);
}

static void test_signature_bad_input(void **state) {
    (void)state;
    http_text h;
    http_parse(&h, WITH_AUTH("AWS4-HMAC-SHA256 Credential=" CRED ", SignedHeaders=host;x-amz-date, Signature=" GOOD_SIG),
               false);
    sigv4_auth a;
    const char *why;
    assert_int_equal(sigv4_request_auth(&h.rq, &a, &why), 0);
    char sig[SIGV4_HEX_LEN + 1];
    assert_int_equal(sigv4_request_signature(&h.rq, &a, NULL, NULL, sig), -1);
    sigv4_auth b = a;
    memcpy(b.date8, "20150831", 8); /* scope day not X-Amz-Date's */
    assert_int_equal(sigv4_request_signature(&h.rq, &b, SECRET, NULL, sig), -1);
    b = a;
    strcpy(b.signed_headers, "host;my-header1;x-amz-date"); /* a header the request lacks */
    assert_int_equal(sigv4_request_signature(&h.rq, &b, SECRET, NULL, sig), -1);
    sigv4_request r = h.rq;
    r.payload_sha256_hex = "E3B0";
    assert_int_equal(sigv4_request_signature(&r, &a, SECRET, NULL, sig), -1);
    r = h.rq;
    r.payload_sha256_hex = NULL;
    assert_int_equal(sigv4_request_signature(&r, &a, SECRET, NULL, sig), -1);
    r = h.rq;
    r.query = "a=%4";
    assert_int_equal(sigv4_request_signature(&r, &a, SECRET, NULL, sig), -1);
    assert_int_equal(sigv4_request_auth(NULL, &a, &why), -1);
    http_free(&h);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_suite_header_vanilla),
        cmocka_unit_test(test_suite_header_query),
        cmocka_unit_test(test_suite_header_paths),
        cmocka_unit_test(test_suite_header_values),
        cmocka_unit_test(test_suite_header_body_and_token),
        cmocka_unit_test(test_suite_presigned),
        cmocka_unit_test(test_botocore_kafka),
        cmocka_unit_test(test_mismatches),
        cmocka_unit_test(test_payload_choice),
        cmocka_unit_test(test_canonical_uri),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_date_header),
        cmocka_unit_test(test_signature_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
