/* SigV4 presigned-GET signing with OpenSSL; see sigv4.h. */
#include "sigv4.h"

#include <limits.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool unreserved(unsigned char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
           c == '.' || c == '~';
}

static void put(char *out, size_t cap, size_t at, char c) {
    if (at + 1 < cap) out[at] = c;
}

size_t sigv4_uri_encode(const char *s, size_t len, char *out, size_t cap) {
    static const char hex[] = "0123456789ABCDEF";
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (unreserved(c)) {
            put(out, cap, n++, (char)c);
        } else {
            put(out, cap, n++, '%');
            put(out, cap, n++, hex[c >> 4]);
            put(out, cap, n++, hex[c & 15]);
        }
    }
    if (cap > 0) out[n < cap ? n : cap - 1] = '\0';
    return n;
}

/* malloc'd UriEncode of a NUL-terminated string. */
static char *encode_dup(const char *s) {
    size_t len = strlen(s);
    if (len > (SIZE_MAX - 1) / 3) return NULL;
    char *out = malloc(len * 3 + 1);
    if (out) sigv4_uri_encode(s, len, out, len * 3 + 1);
    return out;
}

typedef struct {
    char *name;
    char *value;
} enc_pair;

static int enc_pair_cmp(const void *a, const void *b) {
    const enc_pair *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->value, y->value);
}

char *sigv4_canonical_query(const sigv4_pair *pairs, size_t n) {
    if (n > SIZE_MAX / sizeof(enc_pair)) return NULL;
    enc_pair *e = calloc(n ? n : 1, sizeof *e);
    if (!e) return NULL;
    char *out = NULL;
    size_t total = 1;
    for (size_t i = 0; i < n; i++) {
        e[i].name = encode_dup(pairs[i].name);
        e[i].value = encode_dup(pairs[i].value);
        if (!e[i].name || !e[i].value) goto done;
        size_t add = strlen(e[i].name) + strlen(e[i].value) + 2; /* '=' and '&' */
        if (add > SIZE_MAX - total) goto done;
        total += add;
    }
    qsort(e, n, sizeof *e, enc_pair_cmp);
    out = malloc(total);
    if (!out) goto done;
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        if (i) out[at++] = '&';
        size_t nl = strlen(e[i].name), vl = strlen(e[i].value);
        memcpy(out + at, e[i].name, nl);
        at += nl;
        out[at++] = '=';
        memcpy(out + at, e[i].value, vl);
        at += vl;
    }
    out[at] = '\0';
done:
    for (size_t i = 0; i < n; i++) {
        free(e[i].name);
        free(e[i].value);
    }
    free(e);
    return out;
}

__attribute__((format(printf, 1, 2))) static char *xasprintf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return NULL;
    char *s = malloc((size_t)n + 1);
    if (!s) return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

char *sigv4_canonical_request(const char *canonical_query, const char *host) {
    return xasprintf("GET\n/\n%s\nhost:%s\n\nhost\n%s", canonical_query, host, SIGV4_EMPTY_SHA256);
}

char *sigv4_string_to_sign(const char *amz_date, const char *region, const char *service,
                           const char *creq_sha256_hex) {
    if (strlen(amz_date) < 8) return NULL;
    return xasprintf("%s\n%s\n%.8s/%s/%s/%s\n%s", SIGV4_ALGORITHM, amz_date, amz_date, region, service,
                     SIGV4_TERMINATOR, creq_sha256_hex);
}

void sigv4_hex(const uint8_t *in, size_t n, char *out) {
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = hex[in[i] >> 4];
        out[2 * i + 1] = hex[in[i] & 15];
    }
    out[2 * n] = '\0';
}

int sigv4_sha256_hex(const void *data, size_t len, char out[SIGV4_HEX_LEN + 1]) {
    uint8_t md[EVP_MAX_MD_SIZE];
    unsigned int md_len = 0;
    if (!EVP_Digest(data, len, md, &md_len, EVP_sha256(), NULL) || md_len != 32) return -1;
    sigv4_hex(md, 32, out);
    return 0;
}

int sigv4_hmac_sha256(const void *key, size_t key_len, const void *msg, size_t msg_len,
                      uint8_t out[SIGV4_KEY_LEN]) {
    unsigned int out_len = 0;
    if (key_len > INT_MAX) return -1;
    if (!HMAC(EVP_sha256(), key, (int)key_len, msg, msg_len, out, &out_len) || out_len != SIGV4_KEY_LEN) return -1;
    return 0;
}

int sigv4_signing_key(const char *secret, const char *date8, const char *region, const char *service,
                      uint8_t out[SIGV4_KEY_LEN]) {
    size_t sl = strlen(secret);
    if (sl > SIGV4_MAX_SECRET) return -1;
    uint8_t k0[4 + SIGV4_MAX_SECRET], k1[SIGV4_KEY_LEN], k2[SIGV4_KEY_LEN], k3[SIGV4_KEY_LEN];
    memcpy(k0, "AWS4", 4);
    memcpy(k0 + 4, secret, sl);
    int rc = sigv4_hmac_sha256(k0, 4 + sl, date8, strlen(date8), k1) ||
                     sigv4_hmac_sha256(k1, sizeof k1, region, strlen(region), k2) ||
                     sigv4_hmac_sha256(k2, sizeof k2, service, strlen(service), k3) ||
                     sigv4_hmac_sha256(k3, sizeof k3, SIGV4_TERMINATOR, strlen(SIGV4_TERMINATOR), out)
                 ? -1
                 : 0;
    OPENSSL_cleanse(k0, sizeof k0);
    OPENSSL_cleanse(k1, sizeof k1);
    OPENSSL_cleanse(k2, sizeof k2);
    OPENSSL_cleanse(k3, sizeof k3);
    return rc;
}

int sigv4_presign_signature(const sigv4_presign *p, const char *secret,
                            char creq_sha256_hex[SIGV4_HEX_LEN + 1], char signature_hex[SIGV4_HEX_LEN + 1]) {
    if (!p || !secret || !p->host || !p->amz_date || !p->region || !p->service || (p->n_params && !p->params))
        return -1;
    if (strlen(p->amz_date) < 8) return -1;
    int rc = -1;
    char *query = NULL, *creq = NULL;
    if (!(query = sigv4_canonical_query(p->params, p->n_params))) goto done;
    if (!(creq = sigv4_canonical_request(query, p->host))) goto done;
    rc = sigv4_sign_canonical(creq, p->amz_date, p->region, p->service, secret, creq_sha256_hex, signature_hex);
done:
    free(query);
    free(creq);
    return rc;
}

int sigv4_sign_canonical(const char *creq, const char *amz_date, const char *region, const char *service,
                         const char *secret, char creq_sha256_hex[SIGV4_HEX_LEN + 1],
                         char signature_hex[SIGV4_HEX_LEN + 1]) {
    if (strlen(amz_date) < 8) return -1;
    int rc = -1;
    char *sts = NULL;
    char hash[SIGV4_HEX_LEN + 1], date8[9];
    uint8_t key[SIGV4_KEY_LEN], sig[SIGV4_KEY_LEN];
    if (sigv4_sha256_hex(creq, strlen(creq), hash)) goto done;
    if (!(sts = sigv4_string_to_sign(amz_date, region, service, hash))) goto done;
    memcpy(date8, amz_date, 8);
    date8[8] = '\0';
    if (sigv4_signing_key(secret, date8, region, service, key)) goto done;
    if (sigv4_hmac_sha256(key, sizeof key, sts, strlen(sts), sig)) goto done;
    sigv4_hex(sig, sizeof sig, signature_hex);
    if (creq_sha256_hex) memcpy(creq_sha256_hex, hash, sizeof hash);
    rc = 0;
done:
    OPENSSL_cleanse(key, sizeof key);
    free(sts);
    return rc;
}

bool sigv4_hex_equal(const char *expected, const char *given) {
    size_t n = strlen(expected);
    if (strlen(given) != n) return false;
    return CRYPTO_memcmp(expected, given, n) == 0;
}
