/*
 * iam_token: parses and verifies MSK IAM authentication as MSK does, in its two forms:
 * SASL/OAUTHBEARER whose bearer token is a base64url SigV4 presigned URL (the AWS signer
 * libraries), and the AWS_MSK_IAM JSON payload (aws-msk-iam-auth and its ports). Both parse
 * into one iam_token; iam_verify checks it against the configured region, hosts and
 * credentials. Pure: no I/O, no globals, the time is passed in.
 * Spec: the aws-msk-iam-auth README ("Details") and the AWS signer libraries
 * (aws-msk-iam-sasl-signer-python, -js, -go and -net), summed up with MSK's answers in
 * docs/msk-behaviors.md#authentication.
 *
 * Use:  iam_token t;
 *       iam_result r = iam_parse_oauthbearer(bytes, len, &t, reason, sizeof reason);
 *       if (r == IAM_OK) r = iam_verify(&t, &verifier, now_ms, &ok, reason, sizeof reason);
 *       iam_token_free(&t);      (always, whatever the result)
 * The reason names the failed check and the values involved; it never holds a secret, a
 * session token or a signature, and client-supplied values in it are truncated and made
 * printable, so it can go to the log as is.
 */
#ifndef IAM_TOKEN_H
#define IAM_TOKEN_H

#include <stddef.h>
#include <stdint.h>

#include "sigv4.h"

#define IAM_MAX_MESSAGE 16384        /* bytes of a client-first message or a JSON payload */
#define IAM_MAX_PARAMS 16            /* signed query parameters in one token */
#define IAM_MAX_EXPIRES_S 604800     /* SigV4 caps presigned URLs at 7 days */
#define IAM_MAX_ARN 2048
#define IAM_REASON_MAX 512           /* a reason buffer this large is never truncated in practice */
#define IAM_DEFAULT_SKEW_MS 300000   /* how far X-Amz-Date may be ahead of now (SigV4's 5 minutes) */
#define IAM_SERVICE "kafka-cluster"
#define IAM_ACTION_CONNECT "kafka-cluster:Connect"
#define IAM_PAYLOAD_VERSION "2020_10_22"

typedef enum {
    IAM_OK = 0,
    IAM_INVALID_PAYLOAD, /* malformed message or token: MSK "Invalid authentication payload" */
    IAM_ACCESS_DENIED,   /* well formed but refused (unknown key, bad signature, expired, wrong
                            region/host, session token mismatch): MSK "Access denied" */
    IAM_INTERNAL_ERROR,  /* out of memory, or a credential the lookup returned is unusable */
} iam_result;

typedef enum { IAM_MECH_OAUTHBEARER, IAM_MECH_AWS_MSK_IAM } iam_mechanism;

/* A parsed token. Every string is NUL-terminated and owned by the token (freed by
 * iam_token_free); a field not reached by a failed parse is NULL / 0. */
typedef struct {
    iam_mechanism mechanism;
    const char *host;                   /* lower case; what is signed as "host:" */
    sigv4_pair params[IAM_MAX_PARAMS];  /* decoded signed parameters: everything but X-Amz-Signature
                                           and User-Agent, canonical names (Action, X-Amz-Date, ...) */
    size_t n_params;
    /* From the parameters, filled once the parse succeeded: */
    const char *access_key_id;          /* X-Amz-Credential, part 1 */
    const char *scope_date;             /* part 2, yyyymmdd (equals amz_date[0:8]) */
    const char *region;                 /* part 3 */
    const char *service;                /* part 4, always kafka-cluster */
    const char *amz_date;               /* yyyymmddTHHMMSSZ */
    int64_t date_ms;                    /* amz_date in ms since the epoch */
    int64_t expires_s;                  /* X-Amz-Expires */
    const char *session_token;          /* X-Amz-Security-Token, NULL when absent */
    const char *signature;              /* X-Amz-Signature as sent */
    const char *user_agent;             /* not signed; NULL when absent */
    /* OAUTHBEARER only: */
    const char *authzid;                /* a= of the GS2 header (=2C, =3D decoded), NULL when absent */
    size_t n_extensions;                /* SASL extensions present (ignored) */
    /* private */
    char *mem_;
    size_t mem_cap_, mem_used_;
} iam_token;

/* One configured fake credential, as the lookup callback reports it. The strings must stay
 * valid until iam_verify returns. */
typedef struct {
    const char *secret_access_key;
    const char *session_token;  /* NULL for a long-term key; tokens must then carry none */
    int64_t expiry_ms;          /* credential expiry in ms since the epoch, -1 = never */
    const char *principal_arn;  /* e.g. arn:aws:sts::123456789012:assumed-role/role/session */
} iam_credential;

/* Returns 0 and fills *out when access_key_id is known, -1 when it is not. */
typedef int (*iam_credential_lookup)(void *ctx, const char *access_key_id, iam_credential *out);

typedef struct {
    const char *region;                /* e.g. us-east-1; the credential scope must name it */
    const char *const *allowed_hosts;  /* signed hosts accepted (exact, ASCII case-insensitive):
                                          for OAUTHBEARER kafka.<region>.amazonaws.com and friends,
                                          for AWS_MSK_IAM the broker host names clients dial */
    size_t n_allowed_hosts;
    int64_t max_skew_ms;               /* X-Amz-Date may be at most this far after now */
    iam_credential_lookup lookup;
    void *lookup_ctx;
} iam_verifier;

/* Which check of iam_verify refused a token: a small fixed set, for counting refusals by kind
 * (the reason text says the same with the values). */
typedef enum {
    IAM_CHECK_NONE,                /* not refused */
    IAM_CHECK_REGION,
    IAM_CHECK_HOST,
    IAM_CHECK_UNKNOWN_KEY,
    IAM_CHECK_SESSION_TOKEN,       /* missing, unexpected or not the credential's */
    IAM_CHECK_SIGNATURE,
    IAM_CHECK_TOKEN_EXPIRED,
    IAM_CHECK_FUTURE_DATE,         /* X-Amz-Date beyond the allowed skew */
    IAM_CHECK_CREDENTIALS_EXPIRED,
    IAM_CHECK_INTERNAL,
} iam_check;

/* What a successful verification yields; the caller derives the KIP-368 session lifetime
 * from min(token_expiry_ms, credential_expiry_ms if >= 0) - now. On a refusal only
 * refused_by is set. */
typedef struct {
    char principal_arn[IAM_MAX_ARN + 1];
    int64_t token_expiry_ms;       /* X-Amz-Date + X-Amz-Expires */
    int64_t credential_expiry_ms;  /* -1 when the credential does not expire */
    iam_check refused_by;
} iam_verified;

/* A SASL/OAUTHBEARER client-first message (RFC 7628 §3.1, as Apache Kafka's broker parses it):
 * "n," ["a=" authzid] "," 0x01 "auth=Bearer <token>" 0x01 [key=value 0x01]* 0x01, where the
 * token is the unpadded base64url of https://<host>/?<query>. */
iam_result iam_parse_oauthbearer(const void *msg, size_t len, iam_token *tok, char *reason, size_t reason_cap);

/* An AWS_MSK_IAM first message: a JSON object of strings, lower-case keys, version 2020_10_22. */
iam_result iam_parse_aws_msk_iam(const void *payload, size_t len, iam_token *tok, char *reason,
                                 size_t reason_cap);

/* Region, host, credential, session token, signature, then the time window, in that order.
 * On IAM_OK fills *out. */
iam_result iam_verify(const iam_token *tok, const iam_verifier *v, int64_t now_ms, iam_verified *out,
                      char *reason, size_t reason_cap);

void iam_token_free(iam_token *tok);

/* MSK's error text for a result: "Invalid authentication payload", "Access denied", ... */
const char *iam_result_message(iam_result r);

/* "2025-01-02T03:04:05Z" (".123" before the Z when ms is not whole seconds) into out. */
void iam_format_time(int64_t ms, char out[32]);

/* A client-supplied value made safe for a log line: printable ASCII, at most 64 characters (+ "..."). */
typedef struct {
    char s[72];
} iam_qstr;
iam_qstr iam_quote(const char *v);

#endif
