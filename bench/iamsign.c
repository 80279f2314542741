/*
 * The bench's own MSK IAM signer (iamsign.h): a SigV4 query-string presign of GET / for
 * kafka-cluster:Connect, wrapped as an OAUTHBEARER token (base64url of the URL) or as the
 * AWS_MSK_IAM JSON payload. Written from AWS's public description of SigV4 and OpenSSL's HMAC,
 * not from broker/iam/, so a bench run also checks the broker's verifier against a second signer.
 */
#include "iamsign.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define SERVICE "kafka-cluster"
#define EMPTY_SHA256 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

static void hex(const unsigned char *in, size_t n, char *out) {
    static const char d[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) out[2 * i] = d[in[i] >> 4], out[2 * i + 1] = d[in[i] & 15];
    out[2 * n] = 0;
}

static void hmac(const void *key, size_t klen, const char *msg, unsigned char out[32]) {
    unsigned int len = 32;
    HMAC(EVP_sha256(), key, (int)klen, (const unsigned char *)msg, strlen(msg), out, &len);
}

/* RFC 3986 unreserved bytes bare, everything else %XX (upper-case hex): SigV4's UriEncode for query values. */
static size_t uri_encode(const char *s, char *out) {
    static const char d[] = "0123456789ABCDEF";
    size_t n = 0;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
            c == '.' || c == '~') {
            out[n++] = (char)c;
        } else {
            out[n++] = '%';
            out[n++] = d[c >> 4];
            out[n++] = d[c & 15];
        }
    }
    out[n] = 0;
    return n;
}

typedef struct {
    char amz_date[17], date8[9];
    char credential[256];
    char query[1024]; /* canonical query string, also the URL's query before the signature */
    char signature[65];
} presign;

/* The SigV4 query-string presign of GET https://<host>/: canonical request, string to sign, key chain. */
static int do_presign(const iam_signer *s, const char *host, int64_t now_ms, presign *p) {
    time_t t = (time_t)(now_ms / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(p->amz_date, sizeof p->amz_date, "%Y%m%dT%H%M%SZ", &tm);
    memcpy(p->date8, p->amz_date, 8);
    p->date8[8] = 0;
    snprintf(p->credential, sizeof p->credential, "%s/%s/%s/%s/aws4_request", s->akid, p->date8, s->region, SERVICE);
    char enc_cred[768];
    uri_encode(p->credential, enc_cred);
    /* already in byte order of the encoded names: Action < X-Amz-Algorithm < -Credential < -Date < -Expires < -SignedHeaders */
    int n = snprintf(p->query, sizeof p->query,
                     "Action=kafka-cluster%%3AConnect&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=%s"
                     "&X-Amz-Date=%s&X-Amz-Expires=%d&X-Amz-SignedHeaders=host",
                     enc_cred, p->amz_date, s->expires_s);
    if (n < 0 || (size_t)n >= sizeof p->query) return -1;
    char creq[2048];
    n = snprintf(creq, sizeof creq, "GET\n/\n%s\nhost:%s\n\nhost\n%s", p->query, host, EMPTY_SHA256);
    if (n < 0 || (size_t)n >= sizeof creq) return -1;
    unsigned char h[32];
    SHA256((const unsigned char *)creq, (size_t)n, h);
    char hh[65];
    hex(h, 32, hh);
    char sts[512];
    snprintf(sts, sizeof sts, "AWS4-HMAC-SHA256\n%s\n%s/%s/%s/aws4_request\n%s", p->amz_date, p->date8, s->region, SERVICE, hh);
    char k0[300];
    snprintf(k0, sizeof k0, "AWS4%s", s->secret);
    unsigned char k1[32], k2[32], k3[32], k4[32], sig[32];
    hmac(k0, strlen(k0), p->date8, k1);
    hmac(k1, 32, s->region, k2);
    hmac(k2, 32, SERVICE, k3);
    hmac(k3, 32, "aws4_request", k4);
    hmac(k4, 32, sts, sig);
    hex(sig, 32, p->signature);
    return 0;
}

int64_t iam_sign_oauth_token(const iam_signer *s, const char *host, int64_t now_ms, char *out, size_t cap) {
    presign p;
    if (do_presign(s, host, now_ms, &p)) return -1;
    char url[2048];
    int n = snprintf(url, sizeof url, "https://%s/?%s&X-Amz-Signature=%s&User-Agent=mskbench", host, p.query, p.signature);
    if (n < 0 || (size_t)n >= sizeof url) return -1;
    /* base64url without padding */
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t need = ((size_t)n + 2) / 3 * 4 + 1;
    if (need > cap) return -1;
    size_t o = 0;
    const unsigned char *u = (const unsigned char *)url;
    for (int i = 0; i < n; i += 3) {
        unsigned v = (unsigned)u[i] << 16 | (i + 1 < n ? (unsigned)u[i + 1] << 8 : 0) | (i + 2 < n ? u[i + 2] : 0);
        out[o++] = b64[(v >> 18) & 63];
        out[o++] = b64[(v >> 12) & 63];
        if (i + 1 < n) out[o++] = b64[(v >> 6) & 63];
        if (i + 2 < n) out[o++] = b64[v & 63];
    }
    out[o] = 0;
    return (now_ms / 1000) * 1000 + (int64_t)s->expires_s * 1000;
}

size_t iam_oauth_message(const char *token, char *out, size_t cap) {
    int n = snprintf(out, cap, "n,,\x01" "auth=Bearer %s\x01\x01", token);
    return n < 0 || (size_t)n >= cap ? 0 : (size_t)n;
}

size_t iam_sign_msk_iam_payload(const iam_signer *s, const char *host, int64_t now_ms, char *out, size_t cap) {
    presign p;
    if (do_presign(s, host, now_ms, &p)) return 0;
    /* values raw (not URL-encoded), keys lower case (the aws-msk-iam-auth README's payload) */
    int n = snprintf(out, cap,
                     "{\"version\":\"2020_10_22\",\"host\":\"%s\",\"user-agent\":\"mskbench\",\"action\":\"kafka-cluster:Connect\","
                     "\"x-amz-algorithm\":\"AWS4-HMAC-SHA256\",\"x-amz-credential\":\"%s\",\"x-amz-date\":\"%s\","
                     "\"x-amz-signedheaders\":\"host\",\"x-amz-expires\":\"%d\",\"x-amz-signature\":\"%s\"}",
                     host, p.credential, p.amz_date, s->expires_s, p.signature);
    return n < 0 || (size_t)n >= cap ? 0 : (size_t)n;
}
