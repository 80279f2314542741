/*
 * SigV4 for whole HTTP requests, as the AWS API listener receives them from the SDKs, aws-cli
 * and Terraform: parsing what the Authorization header (or a presigned query) claims, and
 * computing the signature the request should carry, so the caller compares the two. Pure and
 * separate from sigv4.c, whose presigned-GET path MSK IAM tokens take and which this reuses
 * (query encoding, string to sign, key derivation).
 *
 * The canonical request follows https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html
 * and, where the page is silent, what botocore's SigV4Auth signs (botocore/auth.py): the path
 * normalized and encoded a second time for every service but S3; header values trimmed with
 * every whitespace run collapsed to one space, repeated headers joined with ','. Query names and
 * values are decoded and encoded again, so an SDK that encodes a little differently (a '~'
 * escaped, lower-case hex) still matches; '+' stays a plus, as SigV4 encodes it (%2B).
 */
#include "sigv4.h"

#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>

#include "kp_mem.h"

/* ---- small helpers ---- */

static char lower(char c) {
    return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

/* ASCII case-insensitive equality (header names; no locale). */
static bool ieq(const char *a, const char *b) {
    for (; *a && *b; a++, b++)
        if (lower(*a) != lower(*b)) return false;
    return *a == *b;
}

static bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

static bool is_lower_hex(const char *s, size_t n) {
    if (strlen(s) != n) return false;
    for (size_t i = 0; i < n; i++)
        if (!is_digit(s[i]) && !(s[i] >= 'a' && s[i] <= 'f')) return false;
    return true;
}

/* What Python's str.split() treats as whitespace in ASCII, which botocore's header-value
 * trimming (' '.join(value.split())) uses. */
static bool is_ws(unsigned char c) {
    return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
}

/* Copies s (len bytes) into out[cap] with its NUL; false if it does not fit or is empty. */
static bool copy_field(char *out, size_t cap, const char *s, size_t len) {
    if (len == 0 || len >= cap) return false;
    memcpy(out, s, len);
    out[len] = '\0';
    return true;
}

/* The value of the one header named name; NULL when absent. *count says how many there were. */
static const char *header_get(const sigv4_request *rq, const char *name, size_t *count) {
    const char *v = NULL;
    size_t n = 0;
    for (size_t i = 0; i < rq->n_headers; i++) {
        if (!rq->headers[i].name || !rq->headers[i].value || !ieq(rq->headers[i].name, name)) continue;
        if (!n++) v = rq->headers[i].value;
    }
    if (count) *count = n;
    return v;
}

/* A growing string. */
typedef struct {
    char *p;
    size_t len, cap;
} strbuf;

static void sb_add(strbuf *b, const char *s, size_t n) {
    XGROW(b->p, b->cap, b->len + n + 1, 256);
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void sb_str(strbuf *b, const char *s) {
    sb_add(b, s, strlen(s));
}

static void sb_chr(strbuf *b, char c) {
    sb_add(b, &c, 1);
}

/* ---- the query string ---- */

static int hexval(char c) {
    if (is_digit(c)) return c - '0';
    c = lower(c);
    return (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
}

/* Percent-decodes s[0..len) into a malloc'd string; '+' is kept (SigV4 reads it as a plus).
 * NULL for a '%' not followed by two hex digits, or a decoded NUL (neither has a canonical
 * form any signer produces). */
static char *pct_decode(const char *s, size_t len) {
    char *out = xmalloc(len + 1);
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] != '%') {
            out[n++] = s[i];
            continue;
        }
        if (len - i < 3 || hexval(s[i + 1]) < 0 || hexval(s[i + 2]) < 0) {
            free(out);
            return NULL;
        }
        char c = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
        if (c == '\0') {
            free(out);
            return NULL;
        }
        out[n++] = c;
        i += 2;
    }
    out[n] = '\0';
    return out;
}

typedef struct {
    sigv4_pair *v; /* names and values malloc'd */
    size_t n, cap;
} qlist;

static void qlist_free(qlist *q) {
    for (size_t i = 0; i < q->n; i++) {
        free((char *)q->v[i].name);
        free((char *)q->v[i].value);
    }
    free(q->v);
    q->v = NULL;
    q->n = q->cap = 0;
}

/* Splits the raw query on '&' (empty pieces skipped, "name" alone has the empty value) and
 * decodes each name and value. -1 when a piece does not decode. */
static int qlist_parse(const char *query, qlist *q) {
    q->v = NULL;
    q->n = q->cap = 0;
    if (!query) return 0;
    const char *p = query;
    while (*p) {
        size_t len = strcspn(p, "&");
        if (len) {
            const char *eq = memchr(p, '=', len);
            size_t nl = eq ? (size_t)(eq - p) : len;
            char *name = pct_decode(p, nl);
            char *value = eq ? pct_decode(eq + 1, len - nl - 1) : xstrdup("");
            if (!name || !value) {
                free(name);
                free(value);
                qlist_free(q);
                return -1;
            }
            XGROW(q->v, q->cap, q->n + 1, 8);
            q->v[q->n].name = name;
            q->v[q->n].value = value;
            q->n++;
        }
        p += len;
        if (*p == '&') p++;
    }
    return 0;
}

/* The value of the query parameter named exactly name (SigV4's parameter names are
 * case-sensitive); NULL when absent. *count says how many there were. */
static const char *qlist_get(const qlist *q, const char *name, size_t *count) {
    const char *v = NULL;
    size_t n = 0;
    for (size_t i = 0; i < q->n; i++) {
        if (strcmp(q->v[i].name, name) != 0) continue;
        if (!n++) v = q->v[i].value;
    }
    *count = n;
    return v;
}

/* ---- the parts of the claim ---- */

/* "AKID/yyyymmdd/region/service/aws4_request". */
static bool parse_credential(const char *s, size_t len, sigv4_auth *out) {
    const char *part[5];
    size_t plen[5], k = 0;
    const char *start = s, *end = s + len;
    for (const char *p = s; p <= end; p++) {
        if (p == end || *p == '/') {
            if (k == 5) return false;
            part[k] = start;
            plen[k] = (size_t)(p - start);
            k++;
            start = p + 1;
        }
    }
    if (k != 5) return false;
    for (size_t i = 0; i < plen[0]; i++)
        if (is_ws((unsigned char)part[0][i]) || (unsigned char)part[0][i] < 0x20 || part[0][i] == ',') return false;
    if (!copy_field(out->access_key_id, sizeof out->access_key_id, part[0], plen[0])) return false;
    if (plen[1] != 8) return false;
    for (size_t i = 0; i < 8; i++)
        if (!is_digit(part[1][i])) return false;
    memcpy(out->date8, part[1], 8);
    out->date8[8] = '\0';
    if (!copy_field(out->region, sizeof out->region, part[2], plen[2])) return false;
    if (!copy_field(out->service, sizeof out->service, part[3], plen[3])) return false;
    return plen[4] == strlen(SIGV4_TERMINATOR) && memcmp(part[4], SIGV4_TERMINATOR, plen[4]) == 0;
}

/* Header names in lower case, ';'-separated, strictly ascending (so each once, and the order
 * every signer writes: the canonical headers are listed in this order). */
static bool parse_signed_headers(const char *s, size_t len, sigv4_auth *out) {
    if (!copy_field(out->signed_headers, sizeof out->signed_headers, s, len)) return false;
    const char *prev = NULL;
    size_t prev_len = 0;
    const char *p = out->signed_headers;
    while (true) {
        size_t n = strcspn(p, ";");
        if (n == 0) return false;
        for (size_t i = 0; i < n; i++) {
            unsigned char c = (unsigned char)p[i];
            if (c <= 0x20 || c >= 0x7f || c == ':' || c == ',' || (c >= 'A' && c <= 'Z')) return false;
        }
        if (prev) {
            size_t m = prev_len < n ? prev_len : n;
            int c = memcmp(prev, p, m);
            if (c > 0 || (c == 0 && prev_len >= n)) return false;
        }
        prev = p;
        prev_len = n;
        if (!p[n]) break;
        p += n + 1;
    }
    return true;
}

/* Whether the ';'-list has name. */
static bool list_has(const char *list, const char *name) {
    size_t nl = strlen(name);
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ";");
        if (n == nl && memcmp(p, name, n) == 0) return true;
        p += n;
        if (*p == ';') p++;
    }
    return false;
}

static bool parse_signature(const char *s, size_t len, sigv4_auth *out) {
    if (len != SIGV4_HEX_LEN) return false;
    memcpy(out->signature, s, len);
    out->signature[len] = '\0';
    return is_lower_hex(out->signature, SIGV4_HEX_LEN);
}

static bool in_range(const char *s, size_t n, int lo, int hi) {
    int v = 0;
    for (size_t i = 0; i < n; i++) {
        if (!is_digit(s[i])) return false;
        v = v * 10 + (s[i] - '0');
    }
    return v >= lo && v <= hi;
}

/* yyyymmddTHHMMSSZ, fields in range (60 seconds for a leap second). */
static bool iso_basic(const char *s) {
    return strlen(s) == 16 && in_range(s, 4, 0, 9999) && in_range(s + 4, 2, 1, 12) && in_range(s + 6, 2, 1, 31) &&
           s[8] == 'T' && in_range(s + 9, 2, 0, 23) && in_range(s + 11, 2, 0, 59) && in_range(s + 13, 2, 0, 60) &&
           s[15] == 'Z';
}

/* A Date header in RFC 7231's IMF-fixdate ("Sun, 30 Aug 2015 12:36:00 GMT", what botocore's
 * formatdate writes when a request carries Date and no X-Amz-Date) or already in ISO basic
 * form, into out[17]. */
static bool date_header(const char *v, char out[17]) {
    static const char *months = "JanFebMarAprMayJunJulAugSepOctNovDec";
    while (is_ws((unsigned char)*v)) v++;
    size_t len = strlen(v);
    while (len && is_ws((unsigned char)v[len - 1])) len--;
    if (len == 16) {
        memcpy(out, v, 16);
        out[16] = '\0';
        return iso_basic(out);
    }
    /* "Ddd, DD Mon YYYY HH:MM:SS GMT" */
    if (len != 29 || v[3] != ',' || v[4] != ' ' || v[7] != ' ' || v[11] != ' ' || v[16] != ' ' || v[19] != ':' ||
        v[22] != ':' || memcmp(v + 25, " GMT", 4) != 0)
        return false;
    int month = 0;
    for (int m = 0; m < 12; m++)
        if (memcmp(v + 8, months + 3 * m, 3) == 0) month = m + 1;
    if (!month) return false;
    out[0] = v[12], out[1] = v[13], out[2] = v[14], out[3] = v[15];
    out[4] = (char)('0' + month / 10), out[5] = (char)('0' + month % 10);
    out[6] = v[5], out[7] = v[6], out[8] = 'T';
    out[9] = v[17], out[10] = v[18], out[11] = v[20], out[12] = v[21], out[13] = v[23], out[14] = v[24];
    out[15] = 'Z', out[16] = '\0';
    return iso_basic(out);
}

/* ---- sigv4_request_auth ---- */

/* "AWS4-HMAC-SHA256 Credential=..., SignedHeaders=..., Signature=..." in any order of the
 * three, with optional whitespace around the commas. */
static int parse_authorization(const char *v, sigv4_auth *out, const char **why) {
    size_t alen = strlen(SIGV4_ALGORITHM);
    while (is_ws((unsigned char)*v)) v++;
    size_t word = 0;
    while (v[word] && !is_ws((unsigned char)v[word])) word++;
    if (word != alen || memcmp(v, SIGV4_ALGORITHM, alen) != 0) {
        *why = "unsupported algorithm in the Authorization header (only AWS4-HMAC-SHA256)";
        return -1;
    }
    const char *p = v + word;
    bool cred = false, sh = false, sig = false;
    while (*p) {
        while (is_ws((unsigned char)*p)) p++;
        size_t n = strcspn(p, ",");
        size_t m = n;
        while (m && is_ws((unsigned char)p[m - 1])) m--;
        const char *eq = memchr(p, '=', m);
        if (!eq) {
            *why = "malformed Authorization header (a part without '=')";
            return -1;
        }
        size_t kl = (size_t)(eq - p), vl = m - kl - 1;
        const char *val = eq + 1;
        if (kl == 10 && memcmp(p, "Credential", 10) == 0) {
            if (cred || !parse_credential(val, vl, out)) {
                *why = "malformed Credential in the Authorization header";
                return -1;
            }
            cred = true;
        } else if (kl == 13 && memcmp(p, "SignedHeaders", 13) == 0) {
            if (sh || !parse_signed_headers(val, vl, out)) {
                *why = "malformed SignedHeaders in the Authorization header";
                return -1;
            }
            sh = true;
        } else if (kl == 9 && memcmp(p, "Signature", 9) == 0) {
            if (sig || !parse_signature(val, vl, out)) {
                *why = "malformed Signature in the Authorization header";
                return -1;
            }
            sig = true;
        } else {
            *why = "malformed Authorization header (a part other than Credential, SignedHeaders, Signature)";
            return -1;
        }
        p += n;
        if (*p == ',') p++;
    }
    if (!cred || !sh || !sig) {
        *why = !cred ? "malformed Authorization header (no Credential)"
               : !sh ? "malformed Authorization header (no SignedHeaders)"
                     : "malformed Authorization header (no Signature)";
        return -1;
    }
    return 0;
}

static int auth_from_headers(const sigv4_request *rq, const char *authz, sigv4_auth *out, const char **why) {
    if (parse_authorization(authz, out, why)) return -1;
    size_t n = 0;
    const char *date = header_get(rq, "x-amz-date", &n);
    if (n > 1) {
        *why = "X-Amz-Date given more than once";
        return -1;
    }
    if (date) {
        while (is_ws((unsigned char)*date)) date++;
        size_t len = strlen(date);
        while (len && is_ws((unsigned char)date[len - 1])) len--;
        if (len != 16) {
            *why = "malformed X-Amz-Date (yyyymmddTHHMMSSZ)";
            return -1;
        }
        memcpy(out->amz_date, date, 16);
        out->amz_date[16] = '\0';
        if (!iso_basic(out->amz_date)) {
            *why = "malformed X-Amz-Date (yyyymmddTHHMMSSZ)";
            return -1;
        }
    } else {
        /* The spec takes Date when there is no X-Amz-Date. */
        const char *d = header_get(rq, "date", &n);
        if (!d) {
            *why = "no X-Amz-Date or Date header";
            return -1;
        }
        if (n > 1 || !date_header(d, out->amz_date)) {
            *why = "malformed Date header";
            return -1;
        }
    }
    const char *token = header_get(rq, "x-amz-security-token", &n);
    if (n > 1) {
        *why = "X-Amz-Security-Token given more than once";
        return -1;
    }
    if (token) {
        while (is_ws((unsigned char)*token)) token++;
        size_t len = strlen(token);
        while (len && is_ws((unsigned char)token[len - 1])) len--;
        if (len && !copy_field(out->security_token, sizeof out->security_token, token, len)) {
            *why = "X-Amz-Security-Token too long";
            return -1;
        }
    }
    out->expires_s = -1;
    out->presigned = false;
    return 0;
}

/* The one value of a presigned parameter; NULL with *why set when absent or repeated. */
static const char *presigned_param(const qlist *q, const char *name, bool required, const char *missing,
                                   const char **why, bool *bad) {
    size_t n = 0;
    const char *v = qlist_get(q, name, &n);
    /* the first problem found is the one reported */
    if (n > 1) {
        if (!*bad) *why = "an X-Amz-* query parameter given more than once";
        *bad = true;
        return NULL;
    }
    if (!v && required) {
        if (!*bad) *why = missing;
        *bad = true;
    }
    return v;
}

static int auth_from_query(const qlist *q, sigv4_auth *out, const char **why) {
    bool bad = false;
    const char *alg = presigned_param(q, "X-Amz-Algorithm", true, "missing", why, &bad);
    const char *cred = presigned_param(q, "X-Amz-Credential", true, "malformed Credential (no X-Amz-Credential)", why, &bad);
    const char *date = presigned_param(q, "X-Amz-Date", true, "no X-Amz-Date in the presigned query", why, &bad);
    const char *exp = presigned_param(q, "X-Amz-Expires", true, "no X-Amz-Expires in the presigned query", why, &bad);
    const char *sh = presigned_param(q, "X-Amz-SignedHeaders", true, "malformed SignedHeaders (no X-Amz-SignedHeaders)", why, &bad);
    const char *sig = presigned_param(q, "X-Amz-Signature", true, "malformed Signature (no X-Amz-Signature)", why, &bad);
    const char *token = presigned_param(q, "X-Amz-Security-Token", false, NULL, why, &bad);
    if (bad) return -1;
    if (strcmp(alg, SIGV4_ALGORITHM) != 0) {
        *why = "unsupported X-Amz-Algorithm (only AWS4-HMAC-SHA256)";
        return -1;
    }
    if (!parse_credential(cred, strlen(cred), out)) {
        *why = "malformed Credential in X-Amz-Credential";
        return -1;
    }
    if (!parse_signed_headers(sh, strlen(sh), out)) {
        *why = "malformed SignedHeaders in X-Amz-SignedHeaders";
        return -1;
    }
    if (!parse_signature(sig, strlen(sig), out)) {
        *why = "malformed Signature in X-Amz-Signature";
        return -1;
    }
    if (strlen(date) != 16 || !iso_basic(date)) {
        *why = "malformed X-Amz-Date (yyyymmddTHHMMSSZ)";
        return -1;
    }
    memcpy(out->amz_date, date, 17);
    size_t el = strlen(exp);
    int64_t e = 0;
    bool ok = el > 0 && el <= 7;
    for (size_t i = 0; ok && i < el; i++) {
        if (!is_digit(exp[i])) ok = false;
        else e = e * 10 + (exp[i] - '0');
    }
    if (!ok || e > SIGV4_MAX_EXPIRES_S) {
        *why = "malformed X-Amz-Expires (seconds, at most 604800)";
        return -1;
    }
    out->expires_s = e;
    if (token && *token && !copy_field(out->security_token, sizeof out->security_token, token, strlen(token))) {
        *why = "X-Amz-Security-Token too long";
        return -1;
    }
    out->presigned = true;
    return 0;
}

int sigv4_request_auth(const sigv4_request *rq, sigv4_auth *out, const char **why) {
    static const char *dummy;
    if (!why) why = &dummy;
    if (!rq || !out || (rq->n_headers && !rq->headers)) {
        *why = "no request";
        return -1;
    }
    memset(out, 0, sizeof *out);
    out->expires_s = -1;
    size_t n_authz = 0;
    const char *authz = header_get(rq, "authorization", &n_authz);
    qlist q;
    if (qlist_parse(rq->query, &q)) {
        *why = "malformed query string (a '%' not followed by two hex digits, or %00)";
        return -1;
    }
    size_t n_alg = 0;
    qlist_get(&q, "X-Amz-Algorithm", &n_alg);
    int rc = -1;
    if (n_authz > 1) {
        *why = "more than one Authorization header";
    } else if (authz && n_alg) {
        *why = "both an Authorization header and X-Amz-Algorithm in the query (only one way of signing)";
    } else if (authz) {
        rc = auth_from_headers(rq, authz, out, why);
    } else if (n_alg) {
        rc = auth_from_query(&q, out, why);
    } else {
        *why = "missing";
    }
    qlist_free(&q);
    if (rc) return -1;
    if (memcmp(out->date8, out->amz_date, 8) != 0) {
        *why = "malformed Credential (its date is not X-Amz-Date's day)";
        return -1;
    }
    if (!list_has(out->signed_headers, "host")) {
        *why = "host not signed";
        return -1;
    }
    for (const char *p = out->signed_headers; *p;) {
        size_t n = strcspn(p, ";");
        char name[sizeof out->signed_headers];
        memcpy(name, p, n);
        name[n] = '\0';
        if (!header_get(rq, name, NULL)) {
            *why = "a signed header is missing from the request";
            return -1;
        }
        p += n;
        if (*p == ';') p++;
    }
    return 0;
}

/* ---- the canonical request ---- */

char *sigv4_canonical_uri(const char *raw_path, bool s3_path) {
    if (!raw_path || !*raw_path) return xstrdup("/");
    if (s3_path) return xstrdup(raw_path);
    /* Remove dot segments and empty segments (AWS asks for consecutive slashes to be merged). */
    size_t len = strlen(raw_path);
    const char **seg = xmalloc((len + 1) * sizeof *seg);
    size_t *seg_len = xmalloc((len + 1) * sizeof *seg_len);
    size_t n = 0;
    for (const char *p = raw_path;;) {
        size_t l = strcspn(p, "/");
        if (l == 2 && p[0] == '.' && p[1] == '.') {
            if (n) n--;
        } else if (l && !(l == 1 && p[0] == '.')) {
            seg[n] = p;
            seg_len[n] = l;
            n++;
        }
        if (!p[l]) break;
        p += l + 1;
    }
    strbuf b = {0};
    sb_str(&b, "");
    if (raw_path[0] == '/') sb_chr(&b, '/');
    char enc[4];
    for (size_t i = 0; i < n; i++) {
        if (i) sb_chr(&b, '/');
        for (size_t j = 0; j < seg_len[i]; j++) {
            size_t el = sigv4_uri_encode(seg[i] + j, 1, enc, sizeof enc);
            sb_add(&b, enc, el);
        }
    }
    if (raw_path[len - 1] == '/' && n) sb_chr(&b, '/');
    free(seg);
    free(seg_len);
    return b.p;
}

/* Appends value with leading and trailing whitespace dropped and each inner run made one space. */
static void add_trimmed(strbuf *b, const char *v) {
    bool pending = false, any = false;
    for (; *v; v++) {
        if (is_ws((unsigned char)*v)) {
            pending = any;
            continue;
        }
        if (pending) sb_chr(b, ' ');
        pending = false;
        any = true;
        sb_chr(b, *v);
    }
}

static bool valid_auth(const sigv4_auth *a) {
    return a->date8[0] && a->region[0] && a->service[0] && a->signed_headers[0] && iso_basic(a->amz_date) &&
           memcmp(a->date8, a->amz_date, 8) == 0 && strlen(a->date8) == 8;
}

char *sigv4_request_canonical(const sigv4_request *rq, const sigv4_auth *auth) {
    if (!rq || !auth || !rq->method || !*rq->method || (rq->n_headers && !rq->headers) || !valid_auth(auth))
        return NULL;
    /* The payload line first: it may refuse the request. */
    size_t n_sha = 0;
    const char *content_sha = header_get(rq, "x-amz-content-sha256", &n_sha);
    strbuf trimmed_sha = {0};
    if (content_sha) add_trimmed(&trimmed_sha, content_sha);
    bool unsigned_payload = (n_sha == 1 && trimmed_sha.p && strcmp(trimmed_sha.p, SIGV4_UNSIGNED_PAYLOAD) == 0) ||
                            (auth->presigned && rq->s3_path);
    free(trimmed_sha.p);
    const char *payload = unsigned_payload ? SIGV4_UNSIGNED_PAYLOAD : rq->payload_sha256_hex;
    if (!unsigned_payload && (!payload || !is_lower_hex(payload, SIGV4_HEX_LEN))) return NULL;

    qlist q;
    if (qlist_parse(rq->query, &q)) return NULL;
    /* The signature cannot sign itself: a presigned request's X-Amz-Signature is left out. */
    if (auth->presigned) {
        size_t k = 0;
        for (size_t i = 0; i < q.n; i++) {
            if (strcmp(q.v[i].name, "X-Amz-Signature") == 0) {
                free((char *)q.v[i].name);
                free((char *)q.v[i].value);
            } else {
                q.v[k++] = q.v[i];
            }
        }
        q.n = k;
    }
    char *query = sigv4_canonical_query(q.v, q.n);
    qlist_free(&q);
    if (!query) xoom("sigv4 canonical query", 0);

    strbuf b = {0};
    sb_str(&b, rq->method);
    sb_chr(&b, '\n');
    char *uri = sigv4_canonical_uri(rq->raw_path, rq->s3_path);
    sb_str(&b, uri);
    free(uri);
    sb_chr(&b, '\n');
    sb_str(&b, query);
    free(query);
    sb_chr(&b, '\n');
    for (const char *p = auth->signed_headers; *p;) {
        size_t n = strcspn(p, ";");
        char name[sizeof auth->signed_headers];
        memcpy(name, p, n);
        name[n] = '\0';
        sb_str(&b, name);
        sb_chr(&b, ':');
        size_t found = 0;
        for (size_t i = 0; i < rq->n_headers; i++) {
            if (!rq->headers[i].name || !rq->headers[i].value || !ieq(rq->headers[i].name, name)) continue;
            if (found++) sb_chr(&b, ',');
            add_trimmed(&b, rq->headers[i].value);
        }
        if (!found) {
            free(b.p);
            return NULL;
        }
        sb_chr(&b, '\n');
        p += n;
        if (*p == ';') p++;
    }
    sb_chr(&b, '\n');
    sb_str(&b, auth->signed_headers);
    sb_chr(&b, '\n');
    sb_str(&b, payload);
    return b.p;
}

int sigv4_request_signature(const sigv4_request *rq, const sigv4_auth *auth, const char *secret,
                            char creq_sha256_hex[SIGV4_HEX_LEN + 1], char signature_hex[SIGV4_HEX_LEN + 1]) {
    if (!secret || !signature_hex) return -1;
    char *creq = sigv4_request_canonical(rq, auth);
    if (!creq) return -1;
    /* the scope's date is auth->date8, which sigv4_request_auth checked against amz_date */
    int rc = sigv4_sign_canonical(creq, auth->amz_date, auth->region, auth->service, secret, creq_sha256_hex,
                                  signature_hex);
    free(creq);
    return rc;
}
