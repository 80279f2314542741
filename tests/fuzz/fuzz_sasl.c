/*
 * SaslAuthenticate payloads of both IAM mechanisms: parsed as the broker does, then verified
 * against one known credential (any access key id resolves to it), with the signature check,
 * the time window and the host and region rules all reached. The first byte picks the
 * mechanism; the rest is the payload.
 */
#include <stdlib.h>
#include <string.h>

#include "iam/iam_token.h"

static int lookup(void *ctx, const char *akid, iam_credential *out) {
    (void)ctx;
    if (akid[0] == 'X') return -1; /* an unknown key, too */
    /* tests/integration/iam.py's ALICE, who signed the seed tokens (tools/fuzz-seeds) */
    out->secret_access_key = "aLiCe/SeCrEt+kEy/0123456789abcdefGHIJKLMN";
    out->session_token = akid[0] == 'A' && akid[1] == 'S' ? "session-token" : NULL;
    out->expiry_ms = akid[0] == 'A' && akid[1] == 'S' ? 1796200000000 : -1;
    out->principal_arn = "arn:aws:iam::123456789012:user/fuzz";
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    static const char *const oauth_hosts[] = {"kafka.us-east-1.amazonaws.com"};
    static const char *const broker_hosts[] = {"127.0.0.1", "localhost"};
    bool oauth = data[0] & 1;
    iam_token tok;
    memset(&tok, 0, sizeof tok);
    char reason[512];
    iam_result r = oauth ? iam_parse_oauthbearer(data + 1, size - 1, &tok, reason, sizeof reason)
                         : iam_parse_aws_msk_iam(data + 1, size - 1, &tok, reason, sizeof reason);
    if (r == IAM_OK) {
        iam_verifier v = {"us-east-1", oauth ? oauth_hosts : broker_hosts, oauth ? 1 : 2, 300000, lookup, NULL};
        iam_verified out;
        /* from the token's own signing time on, so that both sides of the time window are reached */
        iam_verify(&tok, &v, tok.date_ms + (data[0] >> 1) * 10000LL, &out, reason, sizeof reason);
        iam_quote(tok.host);
        iam_quote(tok.signature);
    }
    iam_token_free(&tok);
    return 0;
}
