/*
 * sigv4: the parts of AWS Signature Version 4 that a presigned GET needs (query-string
 * authentication, host as the only signed header, empty payload), which is what every MSK
 * IAM token is. Pure: no I/O, no globals. iam_token uses it to check tokens; each step is
 * exposed so unit tests can hold it against the AWS test-suite vectors.
 * Spec: https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-query-string-auth.html; test
 * vectors: AWS's SigV4 test suite (awslabs/aws-c-auth, tests/aws-signing-test-suite/v4) and
 * https://docs.aws.amazon.com/general/latest/gr/signature-v4-examples.html.
 */
#ifndef SIGV4_H
#define SIGV4_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SIGV4_ALGORITHM "AWS4-HMAC-SHA256"
#define SIGV4_TERMINATOR "aws4_request"
#define SIGV4_EMPTY_SHA256 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define SIGV4_KEY_LEN 32             /* HMAC-SHA256 output */
#define SIGV4_HEX_LEN 64             /* lower-case hex of a SHA-256 or an HMAC-SHA256 */
#define SIGV4_MAX_SECRET 1024        /* longer secrets are refused (AWS secrets are 40 characters) */

/* One query parameter, decoded (raw bytes, NUL-terminated). */
typedef struct {
    const char *name;
    const char *value;
} sigv4_pair;

/* What a presigned GET / signs. */
typedef struct {
    const char *host;              /* signed as "host:<host>", used as given */
    const sigv4_pair *params;      /* every query parameter but X-Amz-Signature (and unsigned extras) */
    size_t n_params;
    const char *amz_date;          /* yyyymmddTHHMMSSZ; its first 8 characters are the scope date */
    const char *region;
    const char *service;
} sigv4_presign;

/* UriEncode for query names and values: RFC 3986 unreserved bytes (A-Z a-z 0-9 - _ . ~) bare,
 * every other byte %XX with upper-case hex ('/' too, space is %20). Writes at most cap bytes
 * including the NUL; returns the full encoded length like snprintf (>= cap means truncated). */
size_t sigv4_uri_encode(const char *s, size_t len, char *out, size_t cap);

/* Canonical query string: names and values encoded, sorted by encoded name then encoded value
 * (byte order), joined "n=v&n=v". Returns a malloc'd string, NULL when out of memory. */
char *sigv4_canonical_query(const sigv4_pair *pairs, size_t n);

/* "GET\n/\n<query>\nhost:<host>\n\nhost\n<SHA-256 of the empty payload>". malloc'd or NULL. */
char *sigv4_canonical_request(const char *canonical_query, const char *host);

/* "AWS4-HMAC-SHA256\n<amz_date>\n<amz_date[0:8]>/<region>/<service>/aws4_request\n<creq hash>".
 * malloc'd, NULL when out of memory or amz_date is shorter than 8 characters. */
char *sigv4_string_to_sign(const char *amz_date, const char *region, const char *service,
                           const char *creq_sha256_hex);

/* Lower-case hex of n bytes into out (2n + 1 bytes). */
void sigv4_hex(const uint8_t *in, size_t n, char *out);
/* Lower-case hex SHA-256. Returns 0, or -1 if OpenSSL fails. */
int sigv4_sha256_hex(const void *data, size_t len, char out[SIGV4_HEX_LEN + 1]);
/* HMAC-SHA256. Returns 0, or -1 if OpenSSL fails or the key is too long. */
int sigv4_hmac_sha256(const void *key, size_t key_len, const void *msg, size_t msg_len,
                      uint8_t out[SIGV4_KEY_LEN]);

/* kSigning = HMAC(HMAC(HMAC(HMAC("AWS4"+secret, date8), region), service), "aws4_request").
 * Intermediate keys are wiped. Returns 0, or -1 (OpenSSL failure, secret longer than SIGV4_MAX_SECRET). */
int sigv4_signing_key(const char *secret, const char *date8, const char *region, const char *service,
                      uint8_t out[SIGV4_KEY_LEN]);

/* The whole computation: canonical request, its hash (copied to creq_sha256_hex if not NULL),
 * string to sign, signing key, hex signature. Returns 0, or -1 (out of memory, bad input). */
int sigv4_presign_signature(const sigv4_presign *p, const char *secret,
                            char creq_sha256_hex[SIGV4_HEX_LEN + 1], char signature_hex[SIGV4_HEX_LEN + 1]);

/* Whether given equals expected (a computed 64-character hex signature). The contents are
 * compared in constant time (CRYPTO_memcmp); only the length of given may leak. */
bool sigv4_hex_equal(const char *expected, const char *given);

#endif
