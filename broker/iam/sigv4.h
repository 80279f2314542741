/*
 * sigv4: AWS Signature Version 4. Two levels: the presigned GET every MSK IAM token is
 * (query-string authentication, host as the only signed header, empty payload; sigv4.c), and
 * whole HTTP requests as the AWS APIs receive them, signed in the Authorization header or in
 * the query (sigv4_request.c), which the AWS API listener verifies. Pure: no I/O, no globals.
 * Each step is exposed so unit tests can hold it against the AWS test-suite vectors.
 * Spec: https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html and
 * https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-query-string-auth.html; test vectors:
 * AWS's SigV4 test suite (awslabs/aws-c-auth, tests/aws-signing-test-suite/v4) and
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
#define SIGV4_UNSIGNED_PAYLOAD "UNSIGNED-PAYLOAD"
#define SIGV4_MAX_SECRET 1024        /* longer secrets are refused (AWS secrets are 40 characters) */

/* One query parameter, decoded (raw bytes, NUL-terminated), or one HTTP header. */
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

/* From a canonical request on: its hash (copied to creq_sha256_hex if not NULL), the string to
 * sign, the signing key of amz_date's day, the hex signature. Both signature computations above
 * end here. Returns 0, or -1 (amz_date shorter than 8 characters, OpenSSL failure). */
int sigv4_sign_canonical(const char *creq, const char *amz_date, const char *region, const char *service,
                         const char *secret, char creq_sha256_hex[SIGV4_HEX_LEN + 1],
                         char signature_hex[SIGV4_HEX_LEN + 1]);

/* Whether given equals expected (a computed 64-character hex signature). The contents are
 * compared in constant time (CRYPTO_memcmp); only the length of given may leak. */
bool sigv4_hex_equal(const char *expected, const char *given);

/* ---- whole requests (sigv4_request.c) ---- */

/* A request as SigV4 signs it: header-based signing (Authorization: AWS4-HMAC-SHA256 ...), as
 * the AWS SDKs and aws-cli sign, or query-string signing (X-Amz-Algorithm... in the query). */
typedef struct sigv4_request {
    const char *method;              /* "GET", "POST", ... */
    const char *raw_path;            /* the path exactly as sent (percent-encoded), without the query; "" = "/" */
    const char *query;               /* the raw query string (after '?'), or NULL */
    const sigv4_pair *headers;       /* every request header as received: names in any case, values raw */
    size_t n_headers;
    const char *payload_sha256_hex;  /* lower-case hex SHA-256 of the body as received */
    bool s3_path;                    /* false for every service but S3: the canonical URI is the path
                                        normalized and URI-encoded once more (botocore, aws-sdk) */
} sigv4_request;

/* What the Authorization header (or, presigned, the X-Amz-* query parameters) says. */
typedef struct sigv4_auth {
    char access_key_id[129];
    char date8[9];                   /* the scope's yyyymmdd */
    char region[64];
    char service[64];
    char signed_headers[1024];       /* "host;x-amz-date", lower case, ';'-separated, as given */
    char signature[SIGV4_HEX_LEN + 1];
    char amz_date[17];               /* X-Amz-Date header (or the Date header in ISO basic form) / query parameter */
    char security_token[4096];       /* X-Amz-Security-Token, "" when absent */
    int64_t expires_s;               /* presigned X-Amz-Expires; -1 for header signing */
    bool presigned;
} sigv4_auth;

/* The longest X-Amz-Expires a presigned request may carry: 7 days, as AWS allows
 * (https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-query-string-auth.html). */
#define SIGV4_MAX_EXPIRES_S 604800

/* Parse the request's Authorization header or presigned query. 0, or -1 with *why set to a
 * static explanation (no Authorization and no X-Amz-Algorithm: "missing"; malformed
 * Credential/SignedHeaders/Signature; a signed header that the request lacks; host not signed).
 * Also refused: both an Authorization header and X-Amz-Algorithm, an algorithm other than
 * AWS4-HMAC-SHA256, SignedHeaders not in ascending order, an X-Amz-Date (or Date) missing or not
 * a date, a scope date other than X-Amz-Date's first 8 characters, X-Amz-Expires outside
 * 0..SIGV4_MAX_EXPIRES_S, any of these given twice. The caller checks clock skew and expiry. */
int sigv4_request_auth(const sigv4_request *rq, sigv4_auth *out, const char **why);

/* The signature the request should carry with secret: canonical request (method, canonical URI,
 * canonical query without X-Amz-Signature, canonical headers of auth->signed_headers with
 * values trimmed and inner whitespace runs collapsed, signed headers, payload hash), string to
 * sign, signing key. Optionally returns the canonical request's hash.
 * 0, or -1 (bad input; out of memory aborts by the project's kp_mem policy).
 * The payload hash: UNSIGNED-PAYLOAD when the request's x-amz-content-sha256 header says so,
 * or for a presigned S3 request (botocore's S3SigV4QueryAuth); otherwise payload_sha256_hex,
 * also for presigned requests to other services (botocore's SigV4QueryAuth and the test suite
 * sign the body's hash there, the empty one for a GET). An x-amz-content-sha256 naming another
 * hash is not trusted: the body's own hash is signed, so a lying header fails to verify. */
int sigv4_request_signature(const sigv4_request *rq, const sigv4_auth *auth, const char *secret,
                            char creq_sha256_hex[SIGV4_HEX_LEN + 1], char signature_hex[SIGV4_HEX_LEN + 1]);

/* The canonical request sigv4_request_signature hashes (AWS shows it in SignatureDoesNotMatch
 * messages, which helps whoever wrote the client). malloc'd (never NULL by kp_mem's policy
 * when the input is good); NULL on bad input. */
char *sigv4_request_canonical(const sigv4_request *rq, const sigv4_auth *auth);

/* The canonical URI of raw_path: as given for S3; otherwise dot segments and empty segments
 * removed (RFC 3986 section 5.2.4, as botocore's remove_dot_segments) and every byte but
 * unreserved ones and '/' percent-encoded again. "" gives "/". malloc'd, never NULL. */
char *sigv4_canonical_uri(const char *raw_path, bool s3_path);

#endif
