/*
 * iam_condition: parsing and evaluating IAM Condition blocks; see iam_condition.h. Each
 * policy value is read once at parse time into what its operator compares (a number, a
 * time, an address and prefix), so that a value the operator cannot read is refused when the
 * policy loads rather than failing to match later.
 */
#include "iam_condition.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "clock.h"
#include "iam_policy.h"
#include "kp_mem.h"

typedef enum op_kind {
    OP_STRING_EQUALS,
    OP_STRING_EQUALS_IGNORE_CASE,
    OP_STRING_LIKE,
    OP_ARN_LIKE, /* ArnEquals and ArnLike alike: both take wildcards per ARN segment */
    OP_NUMERIC,
    OP_DATE,
    OP_BOOL,
    OP_IP,
    OP_NULL,
} op_kind;

typedef enum cmp { CMP_EQ, CMP_LT, CMP_LE, CMP_GT, CMP_GE } cmp;

static const struct {
    const char *name;
    op_kind kind;
    bool negated;
    cmp cmp;
} ops[] = {
    {"StringEquals", OP_STRING_EQUALS, false, CMP_EQ},
    {"StringNotEquals", OP_STRING_EQUALS, true, CMP_EQ},
    {"StringEqualsIgnoreCase", OP_STRING_EQUALS_IGNORE_CASE, false, CMP_EQ},
    {"StringNotEqualsIgnoreCase", OP_STRING_EQUALS_IGNORE_CASE, true, CMP_EQ},
    {"StringLike", OP_STRING_LIKE, false, CMP_EQ},
    {"StringNotLike", OP_STRING_LIKE, true, CMP_EQ},
    {"ArnEquals", OP_ARN_LIKE, false, CMP_EQ},
    {"ArnLike", OP_ARN_LIKE, false, CMP_EQ},
    {"ArnNotEquals", OP_ARN_LIKE, true, CMP_EQ},
    {"ArnNotLike", OP_ARN_LIKE, true, CMP_EQ},
    {"NumericEquals", OP_NUMERIC, false, CMP_EQ},
    {"NumericNotEquals", OP_NUMERIC, true, CMP_EQ},
    {"NumericLessThan", OP_NUMERIC, false, CMP_LT},
    {"NumericLessThanEquals", OP_NUMERIC, false, CMP_LE},
    {"NumericGreaterThan", OP_NUMERIC, false, CMP_GT},
    {"NumericGreaterThanEquals", OP_NUMERIC, false, CMP_GE},
    {"DateEquals", OP_DATE, false, CMP_EQ},
    {"DateNotEquals", OP_DATE, true, CMP_EQ},
    {"DateLessThan", OP_DATE, false, CMP_LT},
    {"DateLessThanEquals", OP_DATE, false, CMP_LE},
    {"DateGreaterThan", OP_DATE, false, CMP_GT},
    {"DateGreaterThanEquals", OP_DATE, false, CMP_GE},
    {"Bool", OP_BOOL, false, CMP_EQ},
    {"IpAddress", OP_IP, false, CMP_EQ},
    {"NotIpAddress", OP_IP, true, CMP_EQ},
    {"Null", OP_NULL, false, CMP_EQ},
};

typedef enum set_kind { SET_NONE, SET_ANY, SET_ALL } set_kind;

typedef struct ip_net {
    int family; /* AF_INET or AF_INET6 */
    uint8_t addr[16];
    int bits;
} ip_net;

typedef struct cvalue {
    char *text;
    double num;  /* OP_NUMERIC */
    int64_t ms;  /* OP_DATE */
    bool flag;   /* OP_BOOL, OP_NULL */
    ip_net net;  /* OP_IP */
} cvalue;

typedef struct clause {
    op_kind kind;
    bool negated, if_exists;
    cmp cmp;
    set_kind set;
    char *key;
    cvalue *v;
    size_t nv;
} clause;

struct iam_cond {
    int refs;
    clause *c;
    size_t n, cap;
};

/* ---- reading values ---------------------------------------------------------------------- */

static bool parse_number(const char *s, double *out) {
    if (!*s || isspace((unsigned char)*s)) return false;
    char *end;
    errno = 0;
    double d = strtod(s, &end);
    if (*end || errno || !isfinite(d)) return false;
    *out = d;
    return true;
}

static bool digits(const char *s, int n, int *out) {
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i])) return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return true;
}

/*
 * A date as IAM reads them: ISO 8601 (2026-12-31, 2026-12-31T08:00:00Z, with a fraction or a
 * +hh:mm offset) or seconds since the epoch (aws:EpochTime's form). Milliseconds since the epoch.
 */
static bool parse_date(const char *s, int64_t *ms) {
    size_t len = strlen(s);
    bool all_digits = len > 0;
    for (size_t i = 0; i < len; i++) all_digits = all_digits && isdigit((unsigned char)s[i]);
    if (all_digits && len <= 12) {
        *ms = strtoll(s, NULL, 10) * 1000;
        return true;
    }
    int y, mo, d, h = 0, mi = 0, se = 0, frac_ms = 0, off = 0;
    if (len < 10 || !digits(s, 4, &y) || s[4] != '-' || !digits(s + 5, 2, &mo) || s[7] != '-' || !digits(s + 8, 2, &d))
        return false;
    if (mo < 1 || mo > 12 || d < 1 || d > 31) return false;
    const char *p = s + 10;
    if (*p == 'T') {
        if (strlen(p) < 9 || !digits(p + 1, 2, &h) || p[3] != ':' || !digits(p + 4, 2, &mi) || p[6] != ':' ||
            !digits(p + 7, 2, &se) || h > 23 || mi > 59 || se > 60)
            return false;
        p += 9;
        if (*p == '.') {
            int k = 0, scale = 100;
            for (p++; isdigit((unsigned char)*p); p++, k++) {
                frac_ms += (*p - '0') * scale;
                scale /= 10;
            }
            if (!k) return false;
        }
        if (*p == 'Z') p++;
        else if (*p == '+' || *p == '-') {
            int oh, om;
            if (strlen(p) != 6 || !digits(p + 1, 2, &oh) || p[3] != ':' || !digits(p + 4, 2, &om)) return false;
            off = (oh * 60 + om) * (*p == '+' ? 1 : -1);
            p += 6;
        } else {
            return false;
        }
    }
    if (*p) return false;
    int64_t secs = clk_days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 + mi * 60 + se - off * 60;
    *ms = secs * 1000 + frac_ms;
    return true;
}

/* An address, IPv4-mapped IPv6 ones read as IPv4 (a dual-stack listener's peers). */
static bool parse_addr(const char *s, ip_net *out) {
    uint8_t a[16];
    if (inet_pton(AF_INET, s, a) == 1) {
        out->family = AF_INET;
        memcpy(out->addr, a, 4);
        out->bits = 32;
        return true;
    }
    if (inet_pton(AF_INET6, s, a) != 1) return false;
    static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (!memcmp(a, mapped, 12)) {
        out->family = AF_INET;
        memcpy(out->addr, a + 12, 4);
        out->bits = 32;
    } else {
        out->family = AF_INET6;
        memcpy(out->addr, a, 16);
        out->bits = 128;
    }
    return true;
}

/* 203.0.113.0/24, 2001:db8::/32, or one address. */
static bool parse_cidr(const char *s, ip_net *out) {
    char buf[64];
    const char *slash = strchr(s, '/');
    size_t l = slash ? (size_t)(slash - s) : strlen(s);
    if (l >= sizeof buf) return false;
    memcpy(buf, s, l);
    buf[l] = '\0';
    uint8_t a[16];
    if (inet_pton(AF_INET, buf, a) == 1) {
        out->family = AF_INET;
        memcpy(out->addr, a, 4);
        out->bits = 32;
    } else if (inet_pton(AF_INET6, buf, a) == 1) {
        out->family = AF_INET6;
        memcpy(out->addr, a, 16);
        out->bits = 128;
    } else {
        return false;
    }
    if (slash) {
        char *end;
        long b = strtol(slash + 1, &end, 10);
        if (!slash[1] || *end || b < 0 || b > out->bits) return false;
        out->bits = (int)b;
    }
    return true;
}

static bool in_net(const ip_net *net, const ip_net *a) {
    if (net->family != a->family) return false;
    int full = net->bits / 8, rest = net->bits % 8;
    if (memcmp(net->addr, a->addr, (size_t)full)) return false;
    if (!rest) return true;
    uint8_t mask = (uint8_t)(0xff << (8 - rest));
    return (net->addr[full] & mask) == (a->addr[full] & mask);
}

/* ---- keys -------------------------------------------------------------------------------- */

static const char *const known_keys[] = {
    "aws:SourceIp",         "aws:PrincipalArn",  "aws:PrincipalAccount", "aws:PrincipalType",
    "aws:RequestedRegion",  "aws:SecureTransport", "aws:CurrentTime",     "aws:EpochTime",
    "aws:TagKeys",          NULL,
};

bool iam_cond_key_known(const char *key) {
    for (int i = 0; known_keys[i]; i++)
        if (!strcasecmp(key, known_keys[i])) return true;
    static const char *const tagged[] = {"aws:ResourceTag/", "aws:RequestTag/"};
    for (size_t i = 0; i < 2; i++) {
        size_t l = strlen(tagged[i]);
        if (!strncasecmp(key, tagged[i], l) && key[l]) return true;
    }
    return false;
}

/* ---- parsing ----------------------------------------------------------------------------- */

static int fail(char *err, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t n, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, n, fmt, ap);
    va_end(ap);
    return -1;
}

static void clause_free(clause *c) {
    for (size_t i = 0; i < c->nv; i++) free(c->v[i].text);
    free(c->v);
    free(c->key);
}

iam_cond *iam_cond_ref(iam_cond *c) {
    if (c) c->refs++;
    return c;
}

void iam_cond_free(iam_cond *c) {
    if (!c || --c->refs > 0) return;
    for (size_t i = 0; i < c->n; i++) clause_free(&c->c[i]);
    free(c->c);
    free(c);
}

/* The value's text as IAM reads a policy value: JSON strings, numbers and booleans alike. */
static bool value_text(const json_t *v, char *out, size_t cap) {
    if (json_is_string(v)) snprintf(out, cap, "%s", json_string_value(v));
    else if (json_is_integer(v)) snprintf(out, cap, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v)) snprintf(out, cap, "%.17g", json_real_value(v));
    else if (json_is_boolean(v)) snprintf(out, cap, "%s", json_is_true(v) ? "true" : "false");
    else return false;
    return true;
}

static int parse_value(clause *cl, const char *opname, const json_t *j, cvalue *out, char *err, size_t n) {
    char text[2048];
    if (!value_text(j, text, sizeof text))
        return fail(err, n, "Condition %s on %s: a value must be a string, a number or a boolean", opname, cl->key);
    if (strstr(text, "${"))
        return fail(err, n, "Condition %s on %s: '%.64s': policy variables are not evaluated by mskmock", opname,
                    cl->key, text);
    bool ok = true;
    switch (cl->kind) {
    case OP_NUMERIC: ok = parse_number(text, &out->num); break;
    case OP_DATE: ok = parse_date(text, &out->ms); break;
    case OP_BOOL:
    case OP_NULL:
        ok = !strcasecmp(text, "true") || !strcasecmp(text, "false");
        out->flag = !strcasecmp(text, "true");
        break;
    case OP_IP: ok = parse_cidr(text, &out->net); break;
    default: break;
    }
    if (!ok) {
        static const char *const what[] = {[OP_NUMERIC] = "a number", [OP_DATE] = "a date (ISO 8601 or epoch seconds)",
                                           [OP_BOOL] = "true or false", [OP_NULL] = "true or false",
                                           [OP_IP] = "an IP address or CIDR block"};
        return fail(err, n, "Condition %s on %s: '%.64s' is not %s", opname, cl->key, text, what[cl->kind]);
    }
    out->text = xstrdup(text);
    return 0;
}

/* "ForAnyValue:StringLikeIfExists" -> the operator's row, set and IfExists; -1 when unknown. */
static int read_operator(const char *name, set_kind *set, bool *if_exists) {
    *set = SET_NONE;
    if (!strncmp(name, "ForAnyValue:", 12)) *set = SET_ANY, name += 12;
    else if (!strncmp(name, "ForAllValues:", 13)) *set = SET_ALL, name += 13;
    size_t l = strlen(name);
    *if_exists = l > 8 && !strcmp(name + l - 8, "IfExists");
    if (*if_exists) l -= 8;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strlen(ops[i].name) == l && !strncmp(ops[i].name, name, l)) return (int)i;
    return -1;
}

int iam_cond_parse(const json_t *cond, iam_cond **out, char *err, size_t n) {
    *out = NULL;
    if (!json_is_object(cond)) return fail(err, n, "Condition must be a JSON object");
    if (!json_object_size(cond)) return fail(err, n, "Condition is an empty object");
    iam_cond *c = xcalloc(1, sizeof *c);
    c->refs = 1;
    const char *opname, *key;
    json_t *block, *vals;
    json_object_foreach((json_t *)cond, opname, block) {
        set_kind set;
        bool if_exists;
        int row = read_operator(opname, &set, &if_exists);
        if (row < 0) {
            fail(err, n, "Condition operator %s is not evaluated by mskmock (it knows String*, Arn*, Numeric*, "
                         "Date*, Bool, IpAddress, NotIpAddress, Null, with IfExists, ForAnyValue:, ForAllValues:)",
                 opname);
            goto bad;
        }
        if (ops[row].kind == OP_NULL && (if_exists || set != SET_NONE)) {
            fail(err, n, "Condition operator %s: Null takes neither IfExists nor a set prefix", opname);
            goto bad;
        }
        if (!json_is_object(block) || !json_object_size(block)) {
            fail(err, n, "Condition %s must be an object of condition keys and values", opname);
            goto bad;
        }
        json_object_foreach(block, key, vals) {
            if (!iam_cond_key_known(key)) {
                fail(err, n, "Condition %s on %s: the condition key %s is not evaluated by mskmock (it knows "
                             "aws:SourceIp, aws:PrincipalArn, aws:PrincipalAccount, aws:PrincipalType, "
                             "aws:RequestedRegion, aws:SecureTransport, aws:CurrentTime, aws:EpochTime, "
                             "aws:ResourceTag/<key>, aws:RequestTag/<key>, aws:TagKeys)",
                     opname, key, key);
                goto bad;
            }
            size_t k = json_is_array(vals) ? json_array_size(vals) : 1;
            if (!k) {
                fail(err, n, "Condition %s on %s: an empty list of values", opname, key);
                goto bad;
            }
            XGROW(c->c, c->cap, c->n + 1, 4);
            clause *cl = &c->c[c->n++];
            *cl = (clause){.kind = ops[row].kind, .negated = ops[row].negated, .cmp = ops[row].cmp,
                           .if_exists = if_exists, .set = set, .key = xstrdup(key),
                           .v = xcalloc(k, sizeof(cvalue))};
            for (size_t i = 0; i < k; i++) {
                if (parse_value(cl, opname, json_is_array(vals) ? json_array_get(vals, i) : vals, &cl->v[i], err, n))
                    goto bad;
                cl->nv++;
            }
        }
    }
    *out = c;
    return 0;
bad:
    iam_cond_free(c);
    return -1;
}

/* ---- the context ------------------------------------------------------------------------- */

typedef struct ctx_key {
    char *key;
    char **v;
    size_t n;
} ctx_key;

struct iam_ctx {
    ctx_key *k;
    size_t n, cap;
};

iam_ctx *iam_ctx_new(void) { return xcalloc(1, sizeof(iam_ctx)); }

void iam_ctx_free(iam_ctx *x) {
    if (!x) return;
    for (size_t i = 0; i < x->n; i++) {
        for (size_t j = 0; j < x->k[i].n; j++) free(x->k[i].v[j]);
        free(x->k[i].v);
        free(x->k[i].key);
    }
    free(x->k);
    free(x);
}

static ctx_key *find_key(const iam_ctx *x, const char *key) {
    for (size_t i = 0; x && i < x->n; i++)
        if (!strcasecmp(x->k[i].key, key)) return &x->k[i];
    return NULL;
}

void iam_ctx_add(iam_ctx *x, const char *key, const char *value) {
    ctx_key *k = find_key(x, key);
    if (!k) {
        XGROW(x->k, x->cap, x->n + 1, 8);
        k = &x->k[x->n++];
        *k = (ctx_key){.key = xstrdup(key)};
    }
    k->v = xrealloc(k->v, (k->n + 1) * sizeof *k->v);
    k->v[k->n++] = xstrdup(value);
}

const char *const *iam_ctx_get(const iam_ctx *x, const char *key, size_t *n) {
    const ctx_key *k = find_key(x, key);
    *n = k ? k->n : 0;
    return k ? (const char *const *)k->v : NULL;
}

/* ---- evaluation -------------------------------------------------------------------------- */

static bool compare(cmp c, double a, double b) {
    switch (c) {
    case CMP_EQ: return a == b;
    case CMP_LT: return a < b;
    case CMP_LE: return a <= b;
    case CMP_GT: return a > b;
    case CMP_GE: return a >= b;
    }
    return false;
}

/* Does the context value match the policy value (the positive form of the operator)? */
static bool match_one(const clause *cl, const cvalue *pv, const char *cv) {
    switch (cl->kind) {
    case OP_STRING_EQUALS: return !strcmp(pv->text, cv);
    case OP_STRING_EQUALS_IGNORE_CASE: return !strcasecmp(pv->text, cv);
    case OP_STRING_LIKE: return iam_glob(pv->text, cv, false);
    case OP_ARN_LIKE: return iam_arn_glob(pv->text, cv);
    case OP_NUMERIC: {
        double d;
        return parse_number(cv, &d) && compare(cl->cmp, d, pv->num);
    }
    case OP_DATE: {
        int64_t ms;
        return parse_date(cv, &ms) && compare(cl->cmp, (double)ms, (double)pv->ms);
    }
    case OP_BOOL: return !strcasecmp(cv, pv->flag ? "true" : "false");
    case OP_IP: {
        ip_net a;
        return parse_addr(cv, &a) && in_net(&pv->net, &a);
    }
    case OP_NULL: return false;
    }
    return false;
}

/* One context value against the clause's values: any matches (OR), or, negated, none does. */
static bool value_holds(const clause *cl, const char *cv) {
    bool any = false;
    for (size_t i = 0; i < cl->nv && !any; i++) any = match_one(cl, &cl->v[i], cv);
    return any != cl->negated;
}

static bool clause_holds(const clause *cl, const iam_ctx *ctx) {
    size_t n;
    const char *const *cv = iam_ctx_get(ctx, cl->key, &n);
    if (cl->kind == OP_NULL) return cl->v[0].flag == (n == 0) || (cl->nv > 1 && (n == 0) == cl->v[1].flag);
    if (cl->set == SET_ANY) {
        for (size_t i = 0; i < n; i++)
            if (value_holds(cl, cv[i])) return true;
        return n == 0 && cl->if_exists;
    }
    if (cl->set == SET_ALL) {
        for (size_t i = 0; i < n; i++)
            if (!value_holds(cl, cv[i])) return false;
        return true;
    }
    if (n == 0) return cl->if_exists || cl->negated;
    /* a single-valued operator on several values: a positive one needs one to match, a negated one none */
    bool any = false;
    for (size_t i = 0; i < n && !any; i++)
        for (size_t j = 0; j < cl->nv && !any; j++) any = match_one(cl, &cl->v[j], cv[i]);
    return any != cl->negated;
}

bool iam_cond_eval(const iam_cond *c, const iam_ctx *ctx) {
    for (size_t i = 0; c && i < c->n; i++)
        if (!clause_holds(&c->c[i], ctx)) return false;
    return true;
}
