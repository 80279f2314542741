/*
 * iamsign: MSK IAM tokens built by the bench itself, written from the public
 * descriptions of the two formats (docs/msk-behaviors.md#iam-tokens: the
 * aws-msk-iam-auth README's payload, the AWS signer libraries' token, AWS's
 * SigV4 query-string authentication) rather than from broker/iam/sigv4.c, so
 * the broker's verifier is checked against an independent signer: SigV4
 * query-string presign of GET / with host as the only signed header, service
 * kafka-cluster, HMAC-SHA256 from OpenSSL.
 * Long-term keys only (no X-Amz-Security-Token).
 */
#ifndef IAMSIGN_H
#define IAMSIGN_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    const char *akid, *secret, *region;
    int expires_s; /* X-Amz-Expires */
} iam_signer;

/* OAUTHBEARER token: base64url (no padding) of the presigned https://<host>/?...
 * URL, NUL-terminated into out. Returns the token's expiry in ms since the
 * epoch (X-Amz-Date + X-Amz-Expires), or -1 when cap is too small. */
int64_t iam_sign_oauth_token(const iam_signer *s, const char *host, int64_t now_ms, char *out, size_t cap);

/* The SASL/OAUTHBEARER client-first message carrying a token: n,,^Aauth=Bearer <token>^A^A. Returns its length. */
size_t iam_oauth_message(const char *token, char *out, size_t cap);

/* AWS_MSK_IAM first message (JSON) signed for the broker host the client dialled.
 * Returns its length, 0 when cap is too small. */
size_t iam_sign_msk_iam_payload(const iam_signer *s, const char *host, int64_t now_ms, char *out, size_t cap);

#endif
