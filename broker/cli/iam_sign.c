/* MSK IAM authentication messages (iam_sign.h). */
#include "iam_sign.h"

#include <ctype.h>
#include <jansson.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "iam/sigv4.h"
#include "kp_mem.h"

#define SERVICE "kafka-cluster"
#define ACTION "kafka-cluster:Connect"
#define USER_AGENT "mskmock-cli/" MSKMOCK_VERSION

/* The presign's parameters and signature: what both mechanisms carry. */
typedef struct signed_req {
    char date[17], credential[400], expires[16], signature[SIGV4_HEX_LEN + 1];
    sigv4_pair p[7];
    size_t np;
} signed_req;

static int sign(signed_req *s, const cli_aws_creds *cr, const char *region, const char *host, int64_t now_ms,
                char *err, size_t n) {
    time_t t = (time_t)(now_ms / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(s->date, sizeof s->date, "%Y%m%dT%H%M%SZ", &tm);
    snprintf(s->credential, sizeof s->credential, "%s/%.8s/%s/" SERVICE "/" SIGV4_TERMINATOR, cr->access_key_id,
             s->date, region);
    snprintf(s->expires, sizeof s->expires, "%d", CLI_IAM_EXPIRES_S);
    s->np = 0;
    s->p[s->np++] = (sigv4_pair){"Action", ACTION};
    s->p[s->np++] = (sigv4_pair){"X-Amz-Algorithm", SIGV4_ALGORITHM};
    s->p[s->np++] = (sigv4_pair){"X-Amz-Credential", s->credential};
    s->p[s->np++] = (sigv4_pair){"X-Amz-Date", s->date};
    s->p[s->np++] = (sigv4_pair){"X-Amz-Expires", s->expires};
    s->p[s->np++] = (sigv4_pair){"X-Amz-SignedHeaders", "host"};
    if (*cr->session_token) s->p[s->np++] = (sigv4_pair){"X-Amz-Security-Token", cr->session_token};
    sigv4_presign ps = {.host = host, .params = s->p, .n_params = s->np, .amz_date = s->date, .region = region,
                        .service = SERVICE};
    if (sigv4_presign_signature(&ps, cr->secret_access_key, NULL, s->signature) != 0) {
        snprintf(err, n, "SigV4 signing failed (secret of %zu bytes)", strlen(cr->secret_access_key));
        return -1;
    }
    return 0;
}

static char *aws_msk_iam(const signed_req *s, const char *host, size_t *len, char *err, size_t n) {
    json_t *o = json_pack("{s:s, s:s, s:s, s:s}", "version", "2020_10_22", "host", host, "user-agent", USER_AGENT,
                          "action", ACTION);
    for (size_t i = 1; o && i < s->np; i++) { /* x-amz-*: the keys are the parameters in lower case */
        char k[64];
        size_t j = 0;
        for (; s->p[i].name[j] && j < sizeof k - 1; j++) k[j] = (char)tolower((unsigned char)s->p[i].name[j]);
        k[j] = 0;
        json_object_set_new(o, k, json_string(s->p[i].value));
    }
    if (o) json_object_set_new(o, "x-amz-signature", json_string(s->signature));
    char *out = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (!out) snprintf(err, n, "cannot build the AWS_MSK_IAM payload");
    else *len = strlen(out);
    return out;
}

static char *oauthbearer(const signed_req *s, const char *region, size_t *len, char *err, size_t n) {
    char *query = sigv4_canonical_query(s->p, s->np);
    char ua[128];
    sigv4_uri_encode(USER_AGENT, strlen(USER_AGENT), ua, sizeof ua);
    char *url = NULL, *msg = NULL;
    if (query && asprintf(&url, "https://kafka.%s.amazonaws.com/?%s&X-Amz-Signature=%s&User-Agent=%s", region, query,
                          s->signature, ua) < 0)
        url = NULL;
    free(query);
    if (!url) goto fail;
    size_t ul = strlen(url);
    char *b64 = xmalloc(4 * (ul / 3 + 1) + 1);
    int bl = EVP_EncodeBlock((unsigned char *)b64, (const unsigned char *)url, (int)ul);
    while (bl > 0 && b64[bl - 1] == '=') bl--; /* unpadded base64url */
    for (int i = 0; i < bl; i++) b64[i] = b64[i] == '+' ? '-' : b64[i] == '/' ? '_' : b64[i];
    int ml = asprintf(&msg, "n,,\001auth=Bearer %.*s\001\001", bl, b64);
    free(b64);
    free(url);
    if (ml < 0) goto fail;
    *len = (size_t)ml;
    return msg;
fail:
    snprintf(err, n, "cannot build the OAUTHBEARER token");
    return NULL;
}

char *cli_iam_message(cli_mech mech, const cli_aws_creds *cr, const char *region, const char *host, int64_t now_ms,
                      size_t *len, char *err, size_t n) {
    signed_req s;
    char signed_host[300];
    /* OAUTHBEARER tokens are signed for the regional endpoint, AWS_MSK_IAM payloads for the broker */
    if (mech == CLI_MECH_OAUTHBEARER) snprintf(signed_host, sizeof signed_host, "kafka.%s.amazonaws.com", region);
    else snprintf(signed_host, sizeof signed_host, "%s", host);
    if (sign(&s, cr, region, signed_host, now_ms, err, n) != 0) return NULL;
    char *out = mech == CLI_MECH_OAUTHBEARER ? oauthbearer(&s, region, len, err, n) : aws_msk_iam(&s, host, len, err, n);
    OPENSSL_cleanse(s.signature, sizeof s.signature);
    return out;
}
