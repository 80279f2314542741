/*
 * MSK IAM token parsing and verification; see iam_token.h. The order of the checks is mskmock's
 * own, fitted to the answers MSK gives (docs/msk-behaviors.md#refusal-messages): everything a
 * client could get wrong in the shape of the token is an invalid payload and is found while
 * parsing; what depends on the configuration (region, hosts, credentials, clock) is access denied
 * and found by iam_verify.
 */
#include "iam_token.h"

#include "clock.h"

#include <jansson.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- reasons --------------------------------------------------------------------------- */

__attribute__((format(printf, 4, 5))) static iam_result fail(iam_result r, char *reason, size_t cap,
                                                              const char *fmt, ...) {
    if (reason && cap) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(reason, cap, fmt, ap);
        va_end(ap);
    }
    return r;
}

iam_qstr iam_quote(const char *v) {
    iam_qstr o;
    size_t n = 0, i = 0;
    if (!v) v = "(null)";
    for (; v[i] && n < 64; i++) {
        unsigned char c = (unsigned char)v[i];
        o.s[n++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    if (v[i]) {
        memcpy(o.s + n, "...", 3);
        n += 3;
    }
    o.s[n] = '\0';
    return o;
}


typedef struct {
    char s[32];
} tstr;

static tstr t(int64_t ms) {
    tstr o;
    iam_format_time(ms, o.s);
    return o;
}

/* ---- calendar: clk_days_from_civil / clk_civil_from_days (clock.c) ---------------------- */

void iam_format_time(int64_t ms, char out[32]) {
    int64_t days = ms / 86400000, rem = ms % 86400000;
    if (rem < 0) {
        rem += 86400000;
        days--;
    }
    int64_t y;
    unsigned m, d;
    clk_civil_from_days(days, &y, &m, &d);
    int sec = (int)(rem / 1000), frac = (int)(rem % 1000);
    char buf[96]; /* wide enough for any int64 year; real times need 25 bytes */
    if (frac)
        snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02d:%02d:%02d.%03dZ", (long long)y, m, d, sec / 3600,
                 sec / 60 % 60, sec % 60, frac);
    else
        snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02d:%02d:%02dZ", (long long)y, m, d, sec / 3600, sec / 60 % 60,
                 sec % 60);
    snprintf(out, 32, "%.31s", buf);
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static unsigned digits(const char *s, int n) {
    unsigned v = 0;
    for (int i = 0; i < n; i++) v = v * 10 + (unsigned)(s[i] - '0');
    return v;
}

/* ^\d{8}T\d{6}Z$ naming a real instant. */
static bool parse_amz_date(const char *s, int64_t *ms) {
    if (strlen(s) != 16 || s[8] != 'T' || s[15] != 'Z') return false;
    for (int i = 0; i < 15; i++)
        if (i != 8 && !is_digit(s[i])) return false;
    unsigned y = digits(s, 4), mo = digits(s + 4, 2), d = digits(s + 6, 2);
    unsigned h = digits(s + 9, 2), mi = digits(s + 11, 2), se = digits(s + 13, 2);
    static const unsigned mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || h > 23 || mi > 59 || se > 59) return false;
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (mo == 2 && d == 29 && !leap) return false;
    *ms = (clk_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se) * 1000;
    return true;
}

/* ---- ASCII helpers --------------------------------------------------------------------- */

static char lower(char c) { return (c >= 'A' && c <= 'Z') ? (char)(c + 32) : c; }

static bool ascii_ieq(const char *a, const char *b, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (lower(a[i]) != lower(b[i])) return false;
    return true;
}

static bool alpha(unsigned char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
static bool alnum(unsigned char c) { return alpha(c) || (c >= '0' && c <= '9'); }

/* Host names, IPv4 and bracketed IPv6 literals; a port would be caught by the allow-list. */
static bool host_char(unsigned char c) { return alnum(c) || c == '.' || c == '-' || c == ':' || c == '[' || c == ']'; }

static int hexval(unsigned char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

/* ---- the token's own memory ------------------------------------------------------------ */

static int mem_init(iam_token *tok, size_t cap) {
    tok->mem_ = malloc(cap);
    tok->mem_cap_ = tok->mem_ ? cap : 0;
    tok->mem_used_ = 0;
    return tok->mem_ ? 0 : -1;
}

static char *mem_alloc(iam_token *tok, size_t n) {
    if (n > tok->mem_cap_ - tok->mem_used_) return NULL;
    char *p = tok->mem_ + tok->mem_used_;
    tok->mem_used_ += n;
    return p;
}

static char *mem_dup(iam_token *tok, const char *s, size_t n) {
    if (n == SIZE_MAX) return NULL;
    char *p = mem_alloc(tok, n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

void iam_token_free(iam_token *tok) {
    if (!tok) return;
    free(tok->mem_);
    memset(tok, 0, sizeof *tok);
}

const char *iam_result_message(iam_result r) {
    switch (r) {
    case IAM_OK: return "OK";
    case IAM_INVALID_PAYLOAD: return "Invalid authentication payload";
    case IAM_ACCESS_DENIED: return "Access denied";
    case IAM_INTERNAL_ERROR: break;
    }
    return "Internal error";
}

/* ---- parameters, shared by both mechanisms --------------------------------------------- */

static const char *param(const iam_token *tok, const char *name) {
    for (size_t i = 0; i < tok->n_params; i++)
        if (!strcmp(tok->params[i].name, name)) return tok->params[i].value;
    return NULL;
}

static iam_result add_param(iam_token *tok, const char *name, const char *value, char *reason, size_t cap) {
    const char **slot = NULL;
    if (!strcmp(name, "X-Amz-Signature"))
        slot = &tok->signature;
    else if (!strcmp(name, "User-Agent"))
        slot = &tok->user_agent;
    if (slot ? *slot != NULL : param(tok, name) != NULL)
        return fail(IAM_INVALID_PAYLOAD, reason, cap, "parameter '%s' appears twice", iam_quote(name).s);
    if (slot) {
        *slot = value;
        return IAM_OK;
    }
    if (tok->n_params == IAM_MAX_PARAMS)
        return fail(IAM_INVALID_PAYLOAD, reason, cap, "more than %d signed parameters", IAM_MAX_PARAMS);
    tok->params[tok->n_params++] = (sigv4_pair){name, value};
    return IAM_OK;
}

/* The configuration-independent checks of step 3, and the derived fields. */
static iam_result normalize(iam_token *tok, char *reason, size_t cap) {
    static const char *const required[] = {"Action",        "X-Amz-Algorithm", "X-Amz-Credential",
                                           "X-Amz-Date",    "X-Amz-Expires",   "X-Amz-SignedHeaders"};
    for (size_t i = 0; i < sizeof required / sizeof *required; i++)
        if (!param(tok, required[i])) return fail(IAM_INVALID_PAYLOAD, reason, cap, "missing %s", required[i]);
    if (!tok->signature) return fail(IAM_INVALID_PAYLOAD, reason, cap, "missing X-Amz-Signature");

    const char *action = param(tok, "Action");
    if (strcmp(action, IAM_ACTION_CONNECT))
        return fail(IAM_INVALID_PAYLOAD, reason, cap, "Action '%s' is not '" IAM_ACTION_CONNECT "'", iam_quote(action).s);
    const char *alg = param(tok, "X-Amz-Algorithm");
    if (strcmp(alg, SIGV4_ALGORITHM))
        return fail(IAM_INVALID_PAYLOAD, reason, cap, "X-Amz-Algorithm '%s' is not '" SIGV4_ALGORITHM "'", iam_quote(alg).s);
    const char *sh = param(tok, "X-Amz-SignedHeaders");
    if (strcmp(sh, "host"))
        return fail(IAM_INVALID_PAYLOAD, reason, cap, "X-Amz-SignedHeaders '%s' is not 'host'", iam_quote(sh).s);

    const char *date = param(tok, "X-Amz-Date");
    if (!parse_amz_date(date, &tok->date_ms))
        return fail(IAM_INVALID_PAYLOAD, reason, cap, "X-Amz-Date '%s' is not a yyyymmddTHHMMSSZ time", iam_quote(date).s);
    tok->amz_date = date;

    const char *cred = param(tok, "X-Amz-Credential");
    char *c = mem_dup(tok, cred, strlen(cred));
    if (!c) return fail(IAM_INTERNAL_ERROR, reason, cap, "out of memory");
    char *part[5];
    size_t n = 0;
    for (char *p = c;; p++) {
        if (n < 5) part[n] = p;
        n++;
        p = strchr(p, '/');
        if (!p) break;
        *p = '\0';
    }
    if (n != 5)
        return fail(IAM_INVALID_PAYLOAD, reason, cap, "X-Amz-Credential '%s' does not have 5 '/'-separated parts",
                    iam_quote(cred).s);
    if (!*part[0]) return fail(IAM_INVALID_PAYLOAD, reason, cap, "X-Amz-Credential '%s' has no access key id", iam_quote(cred).s);
    if (strcmp(part[3], IAM_SERVICE))
        return fail(IAM_INVALID_PAYLOAD, reason, cap, "credential scope service '%s' is not '" IAM_SERVICE "'",
                    iam_quote(part[3]).s);
    if (strcmp(part[4], SIGV4_TERMINATOR))
        return fail(IAM_INVALID_PAYLOAD, reason, cap, "credential scope terminator '%s' is not '" SIGV4_TERMINATOR "'",
                    iam_quote(part[4]).s);
    if (strlen(part[1]) != 8 || memcmp(part[1], date, 8))
        return fail(IAM_INVALID_PAYLOAD, reason, cap, "credential scope date '%s' is not the date of X-Amz-Date '%s'",
                    iam_quote(part[1]).s, date);
    tok->access_key_id = part[0];
    tok->scope_date = part[1];
    tok->region = part[2];
    tok->service = part[3];

    const char *exp = param(tok, "X-Amz-Expires");
    size_t el = strlen(exp);
    bool all_digits = el > 0;
    for (size_t i = 0; i < el; i++) all_digits = all_digits && is_digit(exp[i]);
    if (!all_digits) return fail(IAM_INVALID_PAYLOAD, reason, cap, "X-Amz-Expires '%s' is not an integer", iam_quote(exp).s);
    int64_t secs = 0;
    for (size_t i = 0; i < el && secs <= IAM_MAX_EXPIRES_S; i++) secs = secs * 10 + (exp[i] - '0');
    if (secs > IAM_MAX_EXPIRES_S)
        return fail(IAM_INVALID_PAYLOAD, reason, cap, "X-Amz-Expires '%s' is more than %d seconds", iam_quote(exp).s,
                    IAM_MAX_EXPIRES_S);
    tok->expires_s = secs;
    tok->session_token = param(tok, "X-Amz-Security-Token");
    return IAM_OK;
}

/* ---- OAUTHBEARER ------------------------------------------------------------------------ */

/* Percent-decode [s, s+n) into the token's memory; NULL when an escape is malformed or decodes to NUL. */
static char *pct_decode(iam_token *tok, const char *s, size_t n, bool *oom) {
    char *out = mem_alloc(tok, n + 1);
    *oom = out == NULL;
    if (!out) return NULL;
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '%') {
            out[o++] = s[i];
            continue;
        }
        if (n - i < 3) return NULL;
        int hi = hexval((unsigned char)s[i + 1]), lo = hexval((unsigned char)s[i + 2]);
        if (hi < 0 || lo < 0 || (hi | lo) == 0) return NULL;
        out[o++] = (char)(hi * 16 + lo);
        i += 2;
    }
    out[o] = '\0';
    return out;
}

static iam_result parse_query(iam_token *tok, const char *qs, size_t n, char *reason, size_t cap) {
    if (n == 0) return IAM_OK; /* "/?" alone: normalize reports what is missing */
    size_t i = 0;
    while (i <= n) {
        size_t e = i;
        while (e < n && qs[e] != '&') e++;
        if (e == i) return fail(IAM_INVALID_PAYLOAD, reason, cap, "empty query parameter at offset %zu of the query", i);
        const char *eq = memchr(qs + i, '=', e - i);
        size_t nl = eq ? (size_t)(eq - (qs + i)) : e - i;
        const char *vs = eq ? eq + 1 : qs + e;
        size_t vl = (size_t)(qs + e - vs);
        if (nl == 0) return fail(IAM_INVALID_PAYLOAD, reason, cap, "query parameter with an empty name at offset %zu", i);
        bool oom;
        char *name = pct_decode(tok, qs + i, nl, &oom);
        char *value = name ? pct_decode(tok, vs, vl, &oom) : NULL;
        if (!value) {
            if (oom) return fail(IAM_INTERNAL_ERROR, reason, cap, "out of memory");
            char raw[72];
            snprintf(raw, sizeof raw, "%.*s", (int)(e - i < 64 ? e - i : 64), qs + i);
            return fail(IAM_INVALID_PAYLOAD, reason, cap, "malformed percent escape in query parameter '%s'", iam_quote(raw).s);
        }
        iam_result r = add_param(tok, name, value, reason, cap);
        if (r != IAM_OK) return r;
        i = e + 1;
    }
    return IAM_OK;
}

static iam_result parse_url(iam_token *tok, const char *url, size_t n, char *reason, size_t cap) {
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)url[i];
        if (c < 0x21 || c > 0x7e)
            return fail(IAM_INVALID_PAYLOAD, reason, cap,
                        "decoded bearer token has byte 0x%02x at offset %zu: not a printable ASCII URL", c, i);
    }
    if (n < 8 || !ascii_ieq(url, "https://", 8))
        return fail(IAM_INVALID_PAYLOAD, reason, cap, "decoded bearer token is not an https:// URL");
    size_t hs = 8, h = hs;
    while (h < n && url[h] != '/' && url[h] != '?' && url[h] != '#') h++;
    char *host = mem_dup(tok, url + hs, h - hs);
    if (!host) return fail(IAM_INTERNAL_ERROR, reason, cap, "out of memory");
    if (!*host) return fail(IAM_INVALID_PAYLOAD, reason, cap, "URL has no host");
    for (char *p = host; *p; p++) {
        if (!host_char((unsigned char)*p))
            return fail(IAM_INVALID_PAYLOAD, reason, cap, "URL host '%s' is not a host name", iam_quote(host).s);
        *p = lower(*p);
    }
    tok->host = host;
    if (memchr(url, '#', n)) return fail(IAM_INVALID_PAYLOAD, reason, cap, "URL has a fragment");
    /* an empty path is "/" (RFC 3986 for https; aws-msk-iam-auth's Java tokens have none) */
    size_t q = h;
    if (q < n && url[q] == '/') q++;
    if (q < n && url[q] != '?') return fail(IAM_INVALID_PAYLOAD, reason, cap, "URL path is not '/'");
    if (q >= n) return IAM_OK; /* no query: normalize reports what is missing */
    return parse_query(tok, url + q + 1, n - q - 1, reason, cap);
}

/* Unpadded base64url, decoded with OpenSSL after translating to the standard alphabet. */
static iam_result b64url_decode(iam_token *tok, const unsigned char *in, size_t n, char **out, size_t *out_len,
                                char *reason, size_t cap) {
    if (n % 4 == 1)
        return fail(IAM_INVALID_PAYLOAD, reason, cap, "bearer token length %zu is not a base64url length", n);
    size_t padded = (n + 3) / 4 * 4;
    unsigned char *tmp = malloc(padded + 1);
    char *dst = mem_alloc(tok, padded / 4 * 3 + 1);
    if (!tmp || !dst) {
        free(tmp);
        return fail(IAM_INTERNAL_ERROR, reason, cap, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = in[i];
        if (c == '.') {
            free(tmp);
            return fail(IAM_INVALID_PAYLOAD, reason, cap, "bearer token is not base64url ('.' at offset %zu)", i);
        }
        tmp[i] = c == '-' ? '+' : c == '_' ? '/' : c;
    }
    for (size_t i = n; i < padded; i++) tmp[i] = '=';
    tmp[padded] = '\0';
    int r = EVP_DecodeBlock((unsigned char *)dst, tmp, (int)padded);
    free(tmp);
    if (r < 0 || (size_t)r < padded - n)
        return fail(IAM_INVALID_PAYLOAD, reason, cap, "bearer token is not base64url");
    /* EVP_DecodeBlock counts the bytes the padding stands for; drop them. */
    *out_len = (size_t)r - (padded - n);
    dst[*out_len] = '\0';
    *out = dst;
    return IAM_OK;
}

/* Extension values: [\x21-\x7E \t\r\n]+ (Apache Kafka OAuthBearerClientInitialResponse). */
static bool kv_value_char(unsigned char c) {
    return (c >= 0x21 && c <= 0x7e) || c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static bool token_char(unsigned char c) { return alnum(c) || c == '-' || c == '_' || c == '.'; }

static iam_result parse_gs2(iam_token *tok, const unsigned char *m, size_t len, size_t *pos, char *reason,
                            size_t cap) {
    if (len < 2 || m[0] != 'n' || m[1] != ',')
        return fail(IAM_INVALID_PAYLOAD, reason, cap, "client-first message does not start with the GS2 header 'n,'");
    size_t i = 2;
    if (i + 1 < len && m[i] == 'a' && m[i + 1] == '=') {
        i += 2;
        char *a = mem_alloc(tok, len - i + 1);
        if (!a) return fail(IAM_INTERNAL_ERROR, reason, cap, "out of memory");
        size_t o = 0;
        while (i < len && m[i] != ',') {
            if (m[i] == '=') {
                if (i + 2 < len && m[i + 1] == '2' && m[i + 2] == 'C')
                    a[o++] = ',';
                else if (i + 2 < len && m[i + 1] == '3' && m[i + 2] == 'D')
                    a[o++] = '=';
                else
                    return fail(IAM_INVALID_PAYLOAD, reason, cap, "authzid has '=' not followed by 2C or 3D");
                i += 3;
                continue;
            }
            if (m[i] == 0 || m[i] > 0x7f)
                return fail(IAM_INVALID_PAYLOAD, reason, cap, "authzid has byte 0x%02x", m[i]);
            a[o++] = (char)m[i++];
        }
        if (o == 0) return fail(IAM_INVALID_PAYLOAD, reason, cap, "empty authzid in the GS2 header");
        a[o] = '\0';
        tok->authzid = a;
    }
    if (i >= len || m[i] != ',')
        return fail(IAM_INVALID_PAYLOAD, reason, cap, "GS2 header is not 'n,[a=authzid],'");
    i++;
    if (i >= len || m[i] != 0x01)
        return fail(IAM_INVALID_PAYLOAD, reason, cap, "no 0x01 separator after the GS2 header");
    *pos = i + 1;
    return IAM_OK;
}

iam_result iam_parse_oauthbearer(const void *msg, size_t len, iam_token *tok, char *reason, size_t cap) {
    const unsigned char *m = msg;
    memset(tok, 0, sizeof *tok);
    tok->mechanism = IAM_MECH_OAUTHBEARER;
    if (len == 0) return fail(IAM_INVALID_PAYLOAD, reason, cap, "empty client-first message");
    if (len > IAM_MAX_MESSAGE)
        return fail(IAM_INVALID_PAYLOAD, reason, cap, "client-first message is %zu bytes, more than %d", len,
                    IAM_MAX_MESSAGE);
    /* authzid, decoded URL, host, decoded parameters and the credential copy are each at most len bytes. */
    if (mem_init(tok, 5 * len + 64)) return fail(IAM_INTERNAL_ERROR, reason, cap, "out of memory");

    size_t i = 0;
    iam_result r = parse_gs2(tok, m, len, &i, reason, cap);
    if (r != IAM_OK) return r;

    const unsigned char *auth = NULL;
    size_t auth_len = 0;
    for (;;) {
        if (i >= len)
            return fail(IAM_INVALID_PAYLOAD, reason, cap, "client-first message does not end with 0x01 0x01");
        if (m[i] == 0x01) {
            if (i + 1 != len)
                return fail(IAM_INVALID_PAYLOAD, reason, cap, "%zu unexpected byte(s) after the terminating 0x01", len - i - 1);
            break;
        }
        size_t ks = i;
        while (i < len && alpha(m[i])) i++;
        if (i == ks || i >= len || m[i] != '=')
            return fail(IAM_INVALID_PAYLOAD, reason, cap,
                        "key/value pair at offset %zu does not start with a [A-Za-z]+ key and '='", ks);
        size_t kl = i - ks;
        size_t vs = ++i;
        while (i < len && kv_value_char(m[i])) i++;
        char key[72];
        snprintf(key, sizeof key, "%.*s", (int)(kl < 64 ? kl : 64), (const char *)m + ks);
        if (i == vs) return fail(IAM_INVALID_PAYLOAD, reason, cap, "empty value for key '%s'", key);
        if (i >= len || m[i] != 0x01)
            return fail(IAM_INVALID_PAYLOAD, reason, cap, "value of key '%s' is not terminated by 0x01", key);
        if (kl == 4 && !memcmp(m + ks, "auth", 4)) {
            if (auth) return fail(IAM_INVALID_PAYLOAD, reason, cap, "key 'auth' appears twice");
            auth = m + vs;
            auth_len = i - vs;
        } else {
            tok->n_extensions++;
        }
        i++;
    }
    if (!auth) return fail(IAM_INVALID_PAYLOAD, reason, cap, "client-first message has no 'auth' key");

    size_t j = 0;
    while (j < auth_len && (alnum(auth[j]) || auth[j] == '_')) j++;
    if (j == 0 || j >= auth_len || auth[j] != ' ')
        return fail(IAM_INVALID_PAYLOAD, reason, cap, "auth value is not '<scheme> <token>'");
    if (j != 6 || !ascii_ieq((const char *)auth, "bearer", 6)) {
        char scheme[72];
        snprintf(scheme, sizeof scheme, "%.*s", (int)(j < 64 ? j : 64), (const char *)auth);
        return fail(IAM_INVALID_PAYLOAD, reason, cap, "auth scheme '%s' is not 'Bearer'", scheme);
    }
    while (j < auth_len && auth[j] == ' ') j++;
    const unsigned char *token = auth + j;
    size_t tl = auth_len - j;
    if (tl == 0) return fail(IAM_INVALID_PAYLOAD, reason, cap, "empty bearer token");
    for (size_t k = 0; k < tl; k++) {
        if (!token_char(token[k]))
            return fail(IAM_INVALID_PAYLOAD, reason, cap, "bearer token has byte 0x%02x at offset %zu, outside [-_.A-Za-z0-9]%s",
                        token[k], k, token[k] == '=' ? " (base64 padding is not allowed)" : "");
    }
    char *url = NULL;
    size_t url_len = 0;
    r = b64url_decode(tok, token, tl, &url, &url_len, reason, cap);
    if (r != IAM_OK) return r;
    r = parse_url(tok, url, url_len, reason, cap);
    if (r != IAM_OK) return r;
    return normalize(tok, reason, cap);
}

/* ---- AWS_MSK_IAM ------------------------------------------------------------------------ */

static const struct {
    const char *key, *name;
} json_names[] = {
    {"action", "Action"},
    {"x-amz-algorithm", "X-Amz-Algorithm"},
    {"x-amz-credential", "X-Amz-Credential"},
    {"x-amz-date", "X-Amz-Date"},
    {"x-amz-expires", "X-Amz-Expires"},
    {"x-amz-signedheaders", "X-Amz-SignedHeaders"},
    {"x-amz-security-token", "X-Amz-Security-Token"},
    {"x-amz-signature", "X-Amz-Signature"},
    {"user-agent", "User-Agent"},
};

static iam_result parse_json_object(iam_token *tok, json_t *root, char *reason, size_t cap) {
    if (!json_is_object(root)) return fail(IAM_INVALID_PAYLOAD, reason, cap, "payload is not a JSON object");
    const char *key;
    json_t *val;
    const char *version = NULL;
    json_object_foreach(root, key, val) {
        if (!json_is_string(val))
            return fail(IAM_INVALID_PAYLOAD, reason, cap, "payload key '%s' is not a string", iam_quote(key).s);
        size_t vl = json_string_length(val);
        char *v = mem_dup(tok, json_string_value(val), vl);
        if (!v) return fail(IAM_INTERNAL_ERROR, reason, cap, "out of memory");
        if (!strcmp(key, "version")) {
            version = v;
        } else if (!strcmp(key, "host")) {
            for (char *p = v; *p; p++) {
                if (!host_char((unsigned char)*p))
                    return fail(IAM_INVALID_PAYLOAD, reason, cap, "host '%s' is not a host name", iam_quote(v).s);
                *p = lower(*p);
            }
            tok->host = v;
        } else {
            for (size_t i = 0; i < sizeof json_names / sizeof *json_names; i++) {
                if (strcmp(key, json_names[i].key)) continue;
                iam_result r = add_param(tok, json_names[i].name, v, reason, cap);
                if (r != IAM_OK) return r;
                break;
            }
            /* Other keys are not signed and carry nothing MSK reads: ignored. */
        }
    }
    if (!version) return fail(IAM_INVALID_PAYLOAD, reason, cap, "missing version");
    if (strcmp(version, IAM_PAYLOAD_VERSION))
        return fail(IAM_INVALID_PAYLOAD, reason, cap, "version '%s' is not '" IAM_PAYLOAD_VERSION "'", iam_quote(version).s);
    if (!tok->host || !*tok->host) return fail(IAM_INVALID_PAYLOAD, reason, cap, "missing host");
    return normalize(tok, reason, cap);
}

iam_result iam_parse_aws_msk_iam(const void *payload, size_t len, iam_token *tok, char *reason, size_t cap) {
    memset(tok, 0, sizeof *tok);
    tok->mechanism = IAM_MECH_AWS_MSK_IAM;
    if (len == 0) return fail(IAM_INVALID_PAYLOAD, reason, cap, "empty payload");
    if (len > IAM_MAX_MESSAGE)
        return fail(IAM_INVALID_PAYLOAD, reason, cap, "payload is %zu bytes, more than %d", len, IAM_MAX_MESSAGE);
    /* Decoded strings are no longer than their JSON form; the credential copy is once more. */
    if (mem_init(tok, 2 * len + 64)) return fail(IAM_INTERNAL_ERROR, reason, cap, "out of memory");
    json_error_t err;
    json_t *root = json_loadb(payload, len, JSON_REJECT_DUPLICATES, &err);
    if (!root)
        return fail(IAM_INVALID_PAYLOAD, reason, cap, "payload is not JSON: %s (line %d, column %d)", iam_quote(err.text).s,
                    err.line, err.column);
    iam_result r = parse_json_object(tok, root, reason, cap);
    json_decref(root);
    return r;
}

/* ---- verification ----------------------------------------------------------------------- */

static bool host_allowed(const iam_verifier *v, const char *host) {
    size_t hl = strlen(host);
    for (size_t i = 0; i < v->n_allowed_hosts; i++) {
        const char *a = v->allowed_hosts[i];
        if (a && strlen(a) == hl && ascii_ieq(a, host, hl)) return true;
    }
    return false;
}

static bool secret_equal(const char *a, const char *b) {
    size_t n = strlen(a);
    return strlen(b) == n && CRYPTO_memcmp(a, b, n) == 0;
}

/* A refusal by check c of iam_verify: kept in out for the caller's counters, explained in reason. */
#define REFUSE(c, r, ...) (out->refused_by = (c), fail((r), reason, cap, __VA_ARGS__))

iam_result iam_verify(const iam_token *tok, const iam_verifier *v, int64_t now_ms, iam_verified *out, char *reason,
                      size_t cap) {
    if (!tok->access_key_id || !tok->host || !tok->signature || !v->region || !v->lookup)
        return REFUSE(IAM_CHECK_INTERNAL, IAM_INTERNAL_ERROR, "token not parsed or verifier not configured");
    if (strcmp(tok->region, v->region))
        return REFUSE(IAM_CHECK_REGION, IAM_ACCESS_DENIED,
                      "credential scope region '%s' is not the configured region '%s'", iam_quote(tok->region).s,
                      v->region);
    if (!host_allowed(v, tok->host))
        return REFUSE(IAM_CHECK_HOST, IAM_ACCESS_DENIED, "signed host '%s' is not an allowed host",
                      iam_quote(tok->host).s);

    iam_credential cred = {.expiry_ms = -1};
    if (v->lookup(v->lookup_ctx, tok->access_key_id, &cred) != 0)
        return REFUSE(IAM_CHECK_UNKNOWN_KEY, IAM_ACCESS_DENIED, "unknown access key '%s'",
                      iam_quote(tok->access_key_id).s);
    if (!cred.secret_access_key || !cred.principal_arn)
        return REFUSE(IAM_CHECK_INTERNAL, IAM_INTERNAL_ERROR, "credential of access key '%s' has no secret or principal",
                      iam_quote(tok->access_key_id).s);
    if (cred.session_token && !tok->session_token)
        return REFUSE(IAM_CHECK_SESSION_TOKEN, IAM_ACCESS_DENIED,
                      "missing X-Amz-Security-Token: access key '%s' is a temporary credential",
                      iam_quote(tok->access_key_id).s);
    if (!cred.session_token && tok->session_token)
        return REFUSE(IAM_CHECK_SESSION_TOKEN, IAM_ACCESS_DENIED,
                      "X-Amz-Security-Token sent for the long-term access key '%s'", iam_quote(tok->access_key_id).s);
    if (cred.session_token && !secret_equal(cred.session_token, tok->session_token))
        return REFUSE(IAM_CHECK_SESSION_TOKEN, IAM_ACCESS_DENIED,
                      "X-Amz-Security-Token is not the session token of access key '%s'",
                      iam_quote(tok->access_key_id).s);

    sigv4_presign p = {.host = tok->host,
                       .params = tok->params,
                       .n_params = tok->n_params,
                       .amz_date = tok->amz_date,
                       .region = tok->region,
                       .service = tok->service};
    char sig[SIGV4_HEX_LEN + 1];
    if (sigv4_presign_signature(&p, cred.secret_access_key, NULL, sig))
        return REFUSE(IAM_CHECK_INTERNAL, IAM_INTERNAL_ERROR, "could not compute the signature for access key '%s'",
                      iam_quote(tok->access_key_id).s);
    bool match = sigv4_hex_equal(sig, tok->signature);
    OPENSSL_cleanse(sig, sizeof sig);
    if (!match)
        return REFUSE(IAM_CHECK_SIGNATURE, IAM_ACCESS_DENIED, "signature does not match (access key %s)",
                      iam_quote(tok->access_key_id).s);

    int64_t token_expiry = tok->date_ms + tok->expires_s * 1000;
    if (now_ms >= token_expiry)
        return REFUSE(IAM_CHECK_TOKEN_EXPIRED, IAM_ACCESS_DENIED, "token expired at %s, now %s", t(token_expiry).s,
                      t(now_ms).s);
    int64_t skew = v->max_skew_ms < 0 ? 0 : v->max_skew_ms;
    if (tok->date_ms > now_ms && tok->date_ms - now_ms > skew)
        return REFUSE(IAM_CHECK_FUTURE_DATE, IAM_ACCESS_DENIED, "X-Amz-Date %s is more than %lld ms in the future, now %s",
                      t(tok->date_ms).s, (long long)skew, t(now_ms).s);
    if (cred.expiry_ms >= 0 && now_ms >= cred.expiry_ms)
        return REFUSE(IAM_CHECK_CREDENTIALS_EXPIRED, IAM_ACCESS_DENIED,
                      "credentials of access key '%s' expired at %s, now %s", iam_quote(tok->access_key_id).s,
                      t(cred.expiry_ms).s, t(now_ms).s);

    size_t al = strlen(cred.principal_arn);
    if (al > IAM_MAX_ARN)
        return REFUSE(IAM_CHECK_INTERNAL, IAM_INTERNAL_ERROR, "principal ARN of access key '%s' is longer than %d",
                      iam_quote(tok->access_key_id).s, IAM_MAX_ARN);
    out->refused_by = IAM_CHECK_NONE;
    memcpy(out->principal_arn, cred.principal_arn, al + 1);
    out->token_expiry_ms = token_expiry;
    out->credential_expiry_ms = cred.expiry_ms >= 0 ? cred.expiry_ms : -1;
    if (reason && cap) reason[0] = '\0';
    return IAM_OK;
}
#undef REFUSE
