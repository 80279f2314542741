/*
 * iam_store: the fake identities and the role credentials mskmock issues and rotates; see
 * iam_store.h. Credentials are kept one allocation each (so pointers handed out survive
 * later insertions) in an array, with an open-addressing hash table on the access key id
 * for lookups. Removal (forgetting long-expired credentials) is rare and rebuilds the table.
 */
#include "iam_store.h"
#include "iam_policy.h"
#include "iam_token.h"

#include "clock.h"
#include "hash.h"
#include "kp_mem.h"

#include <jansson.h>
#include <libgen.h>
#include <limits.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_KEY_ID 128
#define MAX_SECRET 256
#define MAX_TOKEN 8192
#define MAX_ARN 2048
#define MAX_SESSION_NAME 64
#define MAX_ROLE_NAME 64
#define DEFAULT_SESSION_NAME "mskmock"

typedef struct role_rec role_rec;

typedef struct cred_rec {
    iam_cred pub;      /* its strings point into mem */
    role_rec *role;    /* NULL for long-term keys */
    char *mem;
    iam_policy *own_policy; /* a long-term key's policies (pub.policy points here); roles own theirs */
    bool assumed;      /* issued by AssumeRole (iam_store_assume): lives until it expires, then is forgotten */
} cred_rec;

struct role_rec {
    char *name;          /* what the endpoint serves */
    char *arn;
    char *session_name;  /* base session name */
    char *sts_prefix;    /* arn:<partition>:sts::<account>:assumed-role/<role name>/ */
    cred_rec *current;
    iam_policy *policy;  /* NULL: the role has no "policies" */
    int64_t next_rotation_ms; /* -1: never */
    uint64_t rotations;
    int64_t max_session_s; /* AssumeRole's bound on DurationSeconds (IAM's MaxSessionDuration) */
};

struct iam_store {
    cred_rec **creds;
    size_t ncreds, cap;
    cred_rec **slots;  /* hash table, nslots a power of two, at most half full */
    size_t nslots;
    role_rec *roles;
    size_t nroles;
    int64_t interval_ms, lifetime_ms;
    bool new_session_name;
    int authz_default;  /* IAM_AUTHZ_DEFAULT_ALLOW or _DENY: iam.authorization.default, AUTO resolved */
    bool has_policies;  /* some entry of the file has "policies" */
};

/* ---- errors ---------------------------------------------------------------------------- */

__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t n, const char *fmt, ...) {
    if (err && n) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* ---- hash table ------------------------------------------------------------------------ */

static uint64_t hash(const char *s) { return hash_fnv64(s, strlen(s)); }

static void slots_put(cred_rec **slots, size_t nslots, cred_rec *c) {
    size_t i = (size_t)hash(c->pub.access_key_id) & (nslots - 1);
    while (slots[i]) i = (i + 1) & (nslots - 1);
    slots[i] = c;
}

static void rebuild(iam_store *st, size_t nslots) {
    cred_rec **slots = xcalloc(nslots, sizeof *slots);
    for (size_t i = 0; i < st->ncreds; i++) slots_put(slots, nslots, st->creds[i]);
    free(st->slots);
    st->slots = slots;
    st->nslots = nslots;
}

static cred_rec *find(const iam_store *st, const char *akid) {
    if (!st || !akid || !st->nslots) return NULL;
    size_t i = (size_t)hash(akid) & (st->nslots - 1);
    for (cred_rec *c; (c = st->slots[i]); i = (i + 1) & (st->nslots - 1))
        if (strcmp(c->pub.access_key_id, akid) == 0) return c;
    return NULL;
}

static void add(iam_store *st, cred_rec *c) {
    XGROW(st->creds, st->cap, st->ncreds + 1, 16);
    if ((st->ncreds + 1) * 2 > st->nslots) {
        size_t nslots = st->nslots ? st->nslots : 32;
        while ((st->ncreds + 1) * 2 > nslots) nslots *= 2;
        rebuild(st, nslots);
    }
    st->creds[st->ncreds++] = c;
    slots_put(st->slots, st->nslots, c);
}

/* One allocation holding the record and copies of its strings (NULL stays NULL). */
static cred_rec *cred_new(const char *akid, const char *secret, const char *token, const char *principal) {
    size_t la = strlen(akid) + 1, ls = strlen(secret) + 1, lt = token ? strlen(token) + 1 : 0,
           lp = strlen(principal) + 1;
    cred_rec *c = xcalloc(1, sizeof *c);
    char *m = xmalloc(la + ls + lt + lp);
    c->mem = m;
    c->pub.access_key_id = memcpy(m, akid, la), m += la;
    c->pub.secret_access_key = memcpy(m, secret, ls), m += ls;
    if (token) c->pub.session_token = memcpy(m, token, lt), m += lt;
    c->pub.principal = memcpy(m, principal, lp);
    c->pub.expiry_ms = -1;
    c->pub.superseded_ms = -1;
    return c;
}

static void cred_free(cred_rec *c) {
    if (!c) return;
    iam_policy_free(c->own_policy);
    free(c->mem);
    free(c);
}

/* ---- time ------------------------------------------------------------------------------ */

static int digits(const char *s, int n) {
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

/* "YYYY-MM-DDTHH:MM:SS[.fff...]Z" (UTC only) into ms since the epoch; -1 when malformed. */
static int parse_time(const char *s, int64_t *out) {
    if (strlen(s) < 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':') return -1;
    int y = digits(s, 4), mo = digits(s + 5, 2), d = digits(s + 8, 2), h = digits(s + 11, 2),
        mi = digits(s + 14, 2), se = digits(s + 17, 2);
    if (y < 1970 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || se < 0 || se > 59)
        return -1;
    static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (d > mdays[mo - 1] + (mo == 2 && leap)) return -1;
    const char *p = s + 19;
    int64_t ms = 0;
    if (*p == '.') {
        int nd = 0;
        for (p++; *p >= '0' && *p <= '9'; p++, nd++)
            if (nd < 3) ms = ms * 10 + (*p - '0');
        if (nd == 0) return -1;
        for (; nd < 3; nd++) ms *= 10;
    }
    if (p[0] != 'Z' || p[1]) return -1;
    *out = (clk_days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 + mi * 60 + se) * 1000 + ms;
    return 0;
}

/* ---- field checks ---------------------------------------------------------------------- */

static bool all_chars(const char *s, const char *extra) {
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                  (extra && c && strchr(extra, c));
        if (!ok) return false;
    }
    return true;
}

static bool printable(const char *s) {
    for (; *s; s++)
        if ((unsigned char)*s <= 0x20 || (unsigned char)*s >= 0x7f) return false;
    return true;
}


/* ---- file parsing ---------------------------------------------------------------------- */

typedef struct parse_ctx {
    const char *file;
    char where[48]; /* "identities[2]" */
    int64_t authz_default; /* iam_store_settings.authz_default */
    char *err;
    size_t n;
} parse_ctx;

static int refuse_unknown(parse_ctx *p, json_t *obj, const char *const *known) {
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v) {
        bool ok = false;
        for (int i = 0; known[i]; i++) ok = ok || strcmp(key, known[i]) == 0;
        if (ok) continue;
        char list[256] = "";
        size_t l = 0;
        for (int i = 0; known[i] && l < sizeof list; i++)
            l += (size_t)snprintf(list + l, sizeof list - l, "%s%s", i ? ", " : "", known[i]);
        return fail(p->err, p->n, "%s: %s: unknown key '%s' (known: %s)", p->file, p->where, iam_quote(key).s, list);
    }
    return 0;
}

/* A string member. *out is NULL when absent or null and that is allowed. */
static int get_str(parse_ctx *p, json_t *obj, const char *key, bool required, const char **out) {
    json_t *v = json_object_get(obj, key);
    *out = NULL;
    if (!v || json_is_null(v)) {
        if (required) return fail(p->err, p->n, "%s: %s: %s missing", p->file, p->where, key);
        return 0;
    }
    if (!json_is_string(v)) return fail(p->err, p->n, "%s: %s: %s must be a string", p->file, p->where, key);
    *out = json_string_value(v);
    if (!**out) return fail(p->err, p->n, "%s: %s: %s is empty", p->file, p->where, key);
    return 0;
}

static int check_arn(parse_ctx *p, const char *key, const char *arn) {
    if (strncmp(arn, "arn:aws", 7) != 0)
        return fail(p->err, p->n, "%s: %s: %s '%s' does not start with \"arn:aws\"", p->file, p->where, key,
                    iam_quote(arn).s);
    if (strlen(arn) > MAX_ARN || !printable(arn))
        return fail(p->err, p->n, "%s: %s: %s '%s' is not printable ASCII of at most %d characters", p->file,
                    p->where, key, iam_quote(arn).s, MAX_ARN);
    int colons = 0;
    for (const char *s = arn; *s; s++) colons += *s == ':';
    if (colons < 5)
        return fail(p->err, p->n, "%s: %s: %s '%s' is not arn:<partition>:<service>:<region>:<account>:<resource>",
                    p->file, p->where, key, iam_quote(arn).s);
    return 0;
}

/*
 * "policies": a list whose entries are policy documents inline or paths to .json files
 * (relative to the identities file). Absent: *out stays NULL (allowed everything, unless
 * iam.authorization.default=deny, which gives an empty set: nothing allowed).
 */
static int parse_policies(parse_ctx *p, json_t *e, iam_policy **out) {
    json_t *list = json_object_get(e, "policies");
    *out = NULL;
    if (!list && p->authz_default == IAM_AUTHZ_DEFAULT_ALLOW) return 0;
    if (list && !json_is_array(list))
        return fail(p->err, p->n, "%s: %s: policies must be a list of policy documents or file paths", p->file,
                    p->where);
    iam_policy *pol = iam_policy_new();
    size_t i;
    json_t *doc;
    json_array_foreach(list, i, doc) {
        char where[PATH_MAX + 64];
        int rc;
        if (json_is_string(doc)) {
            const char *path = json_string_value(doc);
            char full[PATH_MAX];
            if (path[0] == '/') {
                snprintf(full, sizeof full, "%s", path);
            } else {
                char dir[PATH_MAX];
                snprintf(dir, sizeof dir, "%s", p->file);
                snprintf(full, sizeof full, "%s/%s", dirname(dir), path);
            }
            json_error_t je;
            json_t *loaded = json_load_file(full, JSON_REJECT_DUPLICATES, &je);
            if (!loaded) {
                iam_policy_free(pol);
                if (je.line > 0)
                    return fail(p->err, p->n, "%s: %s.policies[%zu]: %s: line %d column %d: %s", p->file, p->where, i,
                                full, je.line, je.column, je.text);
                return fail(p->err, p->n, "%s: %s.policies[%zu]: %s", p->file, p->where, i, je.text);
            }
            snprintf(where, sizeof where, "%s", full);
            rc = iam_policy_add(pol, loaded, where, p->err, p->n);
            json_decref(loaded);
        } else {
            snprintf(where, sizeof where, "%s: %s.policies[%zu]", p->file, p->where, i);
            rc = iam_policy_add(pol, doc, where, p->err, p->n);
        }
        if (rc) {
            iam_policy_free(pol);
            return -1;
        }
    }
    *out = pol;
    return 0;
}

static int parse_identity(iam_store *st, parse_ctx *p, json_t *e) {
    static const char *const known[] = {"access_key_id", "secret_access_key", "session_token", "expiration",
                                        "principal", "policies", NULL};
    if (!json_is_object(e)) return fail(p->err, p->n, "%s: %s: not a JSON object", p->file, p->where);
    if (refuse_unknown(p, e, known)) return -1;
    const char *akid, *secret, *token, *exp, *principal;
    if (get_str(p, e, "access_key_id", true, &akid) || get_str(p, e, "secret_access_key", true, &secret) ||
        get_str(p, e, "session_token", false, &token) || get_str(p, e, "expiration", false, &exp) ||
        get_str(p, e, "principal", true, &principal))
        return -1;
    if (strlen(akid) > MAX_KEY_ID || !all_chars(akid, NULL))
        return fail(p->err, p->n, "%s: %s: access_key_id '%s' is not 1-%d letters and digits", p->file, p->where,
                    iam_quote(akid).s, MAX_KEY_ID);
    if (strlen(secret) > MAX_SECRET || !printable(secret))
        return fail(p->err, p->n, "%s: %s: secret_access_key is not printable ASCII of at most %d characters",
                    p->file, p->where, MAX_SECRET);
    if (token && (strlen(token) > MAX_TOKEN || !printable(token)))
        return fail(p->err, p->n, "%s: %s: session_token is not printable ASCII of at most %d characters", p->file,
                    p->where, MAX_TOKEN);
    int64_t expiry = -1;
    if (exp && parse_time(exp, &expiry) != 0)
        return fail(p->err, p->n, "%s: %s: expiration '%s' is not an ISO-8601 UTC time like 2026-12-31T00:00:00Z",
                    p->file, p->where, iam_quote(exp).s);
    if (check_arn(p, "principal", principal)) return -1;
    cred_rec *dup = find(st, akid);
    if (dup) {
        size_t i = 0;
        while (st->creds[i] != dup) i++;
        return fail(p->err, p->n, "%s: %s: access_key_id '%s' is already used by identities[%zu]", p->file, p->where,
                    iam_quote(akid).s, i);
    }
    iam_policy *pol;
    if (parse_policies(p, e, &pol)) return -1;
    cred_rec *c = cred_new(akid, secret, token, principal);
    add(st, c);
    c->own_policy = pol;
    c->pub.policy = pol;
    c->pub.expiry_ms = expiry;
    return 0;
}

static int parse_role(iam_store *st, parse_ctx *p, json_t *e, role_rec *r) {
    static const char *const known[] = {"name", "arn", "session_name", "policies", "max_session_duration", NULL};
    if (!json_is_object(e)) return fail(p->err, p->n, "%s: %s: not a JSON object", p->file, p->where);
    if (refuse_unknown(p, e, known)) return -1;
    const char *name, *arn, *session;
    if (get_str(p, e, "name", true, &name) || get_str(p, e, "arn", true, &arn) ||
        get_str(p, e, "session_name", false, &session))
        return -1;
    if (strlen(name) > MAX_ROLE_NAME || !all_chars(name, "+=,.@_-"))
        return fail(p->err, p->n, "%s: %s: name '%s' is not 1-%d of A-Z a-z 0-9 +=,.@_-", p->file, p->where,
                    iam_quote(name).s, MAX_ROLE_NAME);
    for (size_t i = 0; &st->roles[i] != r; i++) /* the roles parsed before this one */
        if (strcmp(st->roles[i].name, name) == 0)
            return fail(p->err, p->n, "%s: %s: name '%s' is already used by roles[%zu]", p->file, p->where, name, i);
    if (!session) session = DEFAULT_SESSION_NAME;
    if (strlen(session) < 2 || strlen(session) > MAX_SESSION_NAME || !all_chars(session, "+=,.@_-"))
        return fail(p->err, p->n, "%s: %s: session_name '%s' is not 2-%d of A-Z a-z 0-9 +=,.@_-", p->file, p->where,
                    iam_quote(session).s, MAX_SESSION_NAME);
    if (check_arn(p, "arn", arn)) return -1;
    /* arn:<partition>:iam::<account>:role/[<path>/]<name> */
    const char *f[6];
    f[0] = arn;
    for (int i = 1; i < 6; i++) f[i] = strchr(f[i - 1], ':') + 1; /* check_arn counted five colons */
    size_t plen = (size_t)(f[2] - f[1] - 1), alen = (size_t)(f[5] - f[4] - 1);
    const char *rname = strrchr(f[5], '/');
    if (strncmp(f[2], "iam::", 5) != 0 || alen == 0 || strncmp(f[5], "role/", 5) != 0 || !rname[1] ||
        strchr(f[5], ':'))
        return fail(p->err, p->n, "%s: %s: arn '%s' is not an IAM role ARN (arn:aws:iam::<account>:role/<name>)",
                    p->file, p->where, iam_quote(arn).s);
    rname++;
    /* IAM's MaxSessionDuration: 1 to 12 hours, 1 hour unless set
     * (https://docs.aws.amazon.com/IAM/latest/UserGuide/id_roles_update-role-settings.html) */
    json_t *max = json_object_get(e, "max_session_duration");
    r->max_session_s = IAM_ROLE_MAX_SESSION_DEFAULT_S;
    if (max && !json_is_null(max)) {
        if (!json_is_integer(max) || json_integer_value(max) < 3600 || json_integer_value(max) > 43200)
            return fail(p->err, p->n, "%s: %s: max_session_duration must be seconds, 3600 to 43200", p->file,
                        p->where);
        r->max_session_s = json_integer_value(max);
    }
    if (parse_policies(p, e, &r->policy)) return -1;
    size_t need = strlen("arn::sts:::assumed-role//") + plen + alen + strlen(rname) + 1;
    r->name = xstrdup(name);
    r->arn = xstrdup(arn);
    r->session_name = xstrdup(session);
    r->sts_prefix = xmalloc(need);
    snprintf(r->sts_prefix, need, "arn:%.*s:sts::%.*s:assumed-role/%s/", (int)plen, f[1], (int)alen, f[4], rname);
    return 0;
}

/* Whether any entry of a list (identities or roles) has "policies", whatever they hold. */
static bool any_policies(json_t *list) {
    size_t i;
    json_t *e;
    if (!json_is_array(list)) return false;
    json_array_foreach(list, i, e) if (json_is_object(e) && json_object_get(e, "policies")) return true;
    return false;
}

static int load_file(iam_store *st, const char *file, int64_t authz_default, char *err, size_t n) {
    json_error_t je;
    json_t *root = json_load_file(file, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        if (je.line > 0) return fail(err, n, "%s: line %d column %d: %s", file, je.line, je.column, je.text);
        return fail(err, n, "%s: %s", file, je.text);
    }
    parse_ctx p = {.file = file, .authz_default = authz_default, .err = err, .n = n};
    int rc = -1;
    static const char *const known[] = {"identities", "roles", NULL};
    snprintf(p.where, sizeof p.where, "top level");
    if (!json_is_object(root)) {
        fail(err, n, "%s: not a JSON object", file);
        goto out;
    }
    if (refuse_unknown(&p, root, known)) goto out;
    json_t *ids = json_object_get(root, "identities"), *roles = json_object_get(root, "roles");
    st->has_policies = any_policies(ids) || any_policies(roles);
    if (authz_default == IAM_AUTHZ_DEFAULT_AUTO)
        p.authz_default = st->has_policies ? IAM_AUTHZ_DEFAULT_DENY : IAM_AUTHZ_DEFAULT_ALLOW;
    st->authz_default = (int)p.authz_default;
    if (ids && !json_is_array(ids)) {
        fail(err, n, "%s: identities must be an array", file);
        goto out;
    }
    if (roles && !json_is_array(roles)) {
        fail(err, n, "%s: roles must be an array", file);
        goto out;
    }
    size_t i;
    json_t *e;
    json_array_foreach(ids, i, e) {
        snprintf(p.where, sizeof p.where, "identities[%zu]", i);
        if (parse_identity(st, &p, e)) goto out;
    }
    if (json_array_size(roles)) {
        st->roles = xcalloc(json_array_size(roles), sizeof *st->roles);
    }
    json_array_foreach(roles, i, e) {
        snprintf(p.where, sizeof p.where, "roles[%zu]", i);
        role_rec *r = &st->roles[st->nroles++];
        if (parse_role(st, &p, e, r)) goto out;
    }
    rc = 0;
out:
    json_decref(root);
    return rc;
}

/* ---- issuing --------------------------------------------------------------------------- */

/* n characters drawn uniformly from alphabet (length <= 256) with RAND_bytes. */
static int random_chars(char *out, size_t n, const char *alphabet) {
    size_t k = strlen(alphabet), limit = 256 - 256 % k, i = 0;
    unsigned char b[64];
    while (i < n) {
        if (RAND_bytes(b, sizeof b) != 1) return -1;
        for (size_t j = 0; j < sizeof b && i < n; j++)
            if (b[j] < limit) out[i++] = alphabet[b[j] % k];
    }
    out[n] = '\0';
    return 0;
}

/* Base64 of nbytes random bytes (nbytes a multiple of 3: no padding) into out. */
static int random_base64(char *out, size_t nbytes) {
    unsigned char b[150];
    if (nbytes > sizeof b || RAND_bytes(b, (int)nbytes) != 1) return -1;
    EVP_EncodeBlock((unsigned char *)out, b, (int)nbytes);
    return 0;
}

/* New credentials of role r for the given session name, valid lifetime_ms from now_ms. */
static cred_rec *issue_session(iam_store *st, role_rec *r, const char *session, int64_t lifetime_ms, int64_t now_ms) {
    char akid[21], secret[41], token[201], principal[MAX_ARN + MAX_SESSION_NAME + 64];
    memcpy(akid, "ASIA", 4);
    for (int tries = 0;; tries++) {
        if (tries == 8 || random_chars(akid + 4, 16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") != 0) return NULL;
        if (!find(st, akid)) break;
    }
    if (random_base64(secret, 30) != 0 || random_base64(token, 150) != 0) return NULL;
    snprintf(principal, sizeof principal, "%s%s", r->sts_prefix, session);
    cred_rec *c = cred_new(akid, secret, token, principal);
    add(st, c);
    c->role = r;
    c->pub.role = r->name;
    c->pub.policy = r->policy;
    c->pub.expiry_ms = (now_ms + lifetime_ms) / 1000 * 1000;
    return c;
}

static cred_rec *issue(iam_store *st, role_rec *r, int64_t now_ms) {
    char session[MAX_SESSION_NAME + 1];
    if (st->new_session_name && r->rotations) {
        char suffix[24];
        int ls = snprintf(suffix, sizeof suffix, "-%llu", (unsigned long long)r->rotations);
        int keep = MAX_SESSION_NAME - ls;
        snprintf(session, sizeof session, "%.*s%s", keep, r->session_name, suffix);
    } else {
        snprintf(session, sizeof session, "%s", r->session_name);
    }
    return issue_session(st, r, session, st->lifetime_ms, now_ms);
}

/* ---- API ------------------------------------------------------------------------------- */

int iam_store_open(iam_store **out, const iam_store_settings *set, int64_t now_ms, char *err, size_t n) {
    *out = NULL;
    if (set->rotation_interval_ms < 0) return fail(err, n, "iam store: rotation interval must not be negative");
    if (set->lifetime_ms <= 0) return fail(err, n, "iam store: credential lifetime must be positive");
    iam_store *st = xcalloc(1, sizeof *st);
    st->authz_default = set->authz_default == IAM_AUTHZ_DEFAULT_DENY ? IAM_AUTHZ_DEFAULT_DENY : IAM_AUTHZ_DEFAULT_ALLOW;
    st->interval_ms = set->rotation_interval_ms;
    st->lifetime_ms = set->lifetime_ms;
    st->new_session_name = set->new_session_name;
    if (set->file && *set->file && load_file(st, set->file, set->authz_default, err, n) != 0) {
        iam_store_free(st);
        return -1;
    }
    for (size_t i = 0; i < st->nroles; i++) {
        role_rec *r = &st->roles[i];
        r->current = issue(st, r, now_ms);
        if (!r->current) {
            iam_store_free(st);
            return fail(err, n, "%s: roles[%zu]: cannot issue credentials (RAND_bytes or memory failed)", set->file,
                        i);
        }
        r->next_rotation_ms = st->interval_ms > 0 ? now_ms + st->interval_ms : -1;
    }
    *out = st;
    return 0;
}

void iam_store_free(iam_store *st) {
    if (!st) return;
    for (size_t i = 0; i < st->ncreds; i++) cred_free(st->creds[i]);
    for (size_t i = 0; i < st->nroles; i++) {
        free(st->roles[i].name);
        free(st->roles[i].arn);
        free(st->roles[i].session_name);
        free(st->roles[i].sts_prefix);
        iam_policy_free(st->roles[i].policy);
    }
    free(st->roles);
    free(st->creds);
    free(st->slots);
    free(st);
}

const iam_cred *iam_store_lookup(const iam_store *st, const char *access_key_id) {
    cred_rec *c = find(st, access_key_id);
    return c ? &c->pub : NULL;
}

static role_rec *find_role(const iam_store *st, const char *role) {
    if (!st || !role) return NULL;
    for (size_t i = 0; i < st->nroles; i++)
        if (strcmp(st->roles[i].name, role) == 0) return &st->roles[i];
    return NULL;
}

const iam_cred *iam_store_current(const iam_store *st, const char *role) {
    role_rec *r = find_role(st, role);
    return r ? &r->current->pub : NULL;
}

const char *iam_store_role_arn(const iam_store *st, const char *role) {
    role_rec *r = find_role(st, role);
    return r ? r->arn : NULL;
}

size_t iam_store_role_count(const iam_store *st) { return st ? st->nroles : 0; }

const char *iam_store_role_name(const iam_store *st, size_t i) {
    return st && i < st->nroles ? st->roles[i].name : NULL;
}

static void forget_expired(iam_store *st, int64_t now_ms) {
    size_t kept = 0;
    for (size_t i = 0; i < st->ncreds; i++) {
        cred_rec *c = st->creds[i];
        bool forget = c->role && (c->pub.superseded_ms >= 0 || c->assumed) && c->pub.expiry_ms >= 0 &&
                      now_ms - c->pub.expiry_ms > IAM_FORGET_AFTER_MS;
        if (forget)
            cred_free(c);
        else
            st->creds[kept++] = c;
    }
    if (kept == st->ncreds) return;
    st->ncreds = kept;
    /* Rebuilding in place cannot fail for want of memory: reuse the table. */
    memset(st->slots, 0, st->nslots * sizeof *st->slots);
    for (size_t i = 0; i < st->ncreds; i++) slots_put(st->slots, st->nslots, st->creds[i]);
}

int iam_store_rotate_due(iam_store *st, int64_t now_ms) {
    if (!st) return 0;
    int rotated = 0;
    for (size_t i = 0; i < st->nroles; i++) {
        role_rec *r = &st->roles[i];
        if (r->next_rotation_ms < 0 || now_ms < r->next_rotation_ms) continue;
        r->rotations++;
        cred_rec *c = issue(st, r, now_ms);
        if (!c) {
            /* Keep the current credentials and retry in a second rather than spin. */
            r->rotations--;
            r->next_rotation_ms = now_ms + 1000;
            continue;
        }
        r->current->pub.superseded_ms = now_ms;
        r->current = c;
        r->next_rotation_ms = now_ms + st->interval_ms;
        rotated++;
    }
    forget_expired(st, now_ms);
    return rotated;
}

int iam_store_rotate_role(iam_store *st, const char *role, int64_t now_ms) {
    role_rec *r = find_role(st, role);
    if (!r) return -1;
    r->rotations++; /* before issue: the n-th rotation's session name counts it */
    cred_rec *c = issue(st, r, now_ms);
    if (!c) {
        r->rotations--;
        return -1;
    }
    r->current->pub.superseded_ms = now_ms;
    r->current = c;
    /* the schedule starts again from now, as a credentials provider's refresh would */
    if (st->interval_ms > 0) r->next_rotation_ms = now_ms + st->interval_ms;
    return 0;
}

const iam_cred *iam_store_expire(iam_store *st, const char *access_key_id, int64_t now_ms, bool *rotated) {
    *rotated = false;
    cred_rec *c = find(st, access_key_id);
    if (!c) return NULL;
    c->pub.expiry_ms = now_ms;
    /* a role's current credentials that expired are replaced, as STS would issue new ones */
    if (c->role && c->role->current == c && iam_store_rotate_role(st, c->role->name, now_ms) == 0) *rotated = true;
    return &c->pub;
}

const iam_cred *iam_store_assume(iam_store *st, const char *role_arn, const char *session_name, int64_t duration_ms,
                                 int64_t now_ms) {
    role_rec *r = NULL;
    for (size_t i = 0; st && i < st->nroles && !r; i++)
        if (!strcmp(st->roles[i].arn, role_arn)) r = &st->roles[i];
    size_t sl = strlen(session_name);
    if (!r || sl < 2 || sl > MAX_SESSION_NAME || !all_chars(session_name, "+=,.@_-") || duration_ms <= 0) return NULL;
    cred_rec *c = issue_session(st, r, session_name, duration_ms, now_ms);
    if (c) c->assumed = true;
    return c ? &c->pub : NULL;
}

size_t iam_store_assumed_count(const iam_store *st) {
    size_t n = 0;
    for (size_t i = 0; st && i < st->ncreds; i++) n += st->creds[i]->assumed;
    return n;
}

int64_t iam_store_role_max_session_s(const iam_store *st, const char *role_arn) {
    for (size_t i = 0; st && i < st->nroles; i++)
        if (!strcmp(st->roles[i].arn, role_arn)) return st->roles[i].max_session_s;
    return -1;
}

const iam_cred *iam_store_at(const iam_store *st, size_t i) { return st && i < st->ncreds ? &st->creds[i]->pub : NULL; }

int64_t iam_store_next_rotation(const iam_store *st) {
    int64_t next = -1;
    for (size_t i = 0; st && i < st->nroles; i++) {
        int64_t t = st->roles[i].next_rotation_ms;
        if (t >= 0 && (next < 0 || t < next)) next = t;
    }
    return next;
}

size_t iam_store_count(const iam_store *st) { return st ? st->ncreds : 0; }

const iam_policy *iam_store_policy_of(const iam_store *st, const char *name, const char **principal, bool *found) {
    *found = false;
    *principal = NULL;
    if (!st || !name) return NULL;
    for (size_t i = 0; i < st->nroles; i++)
        if (strcmp(st->roles[i].name, name) == 0 || strcmp(st->roles[i].arn, name) == 0) {
            *found = true;
            *principal = st->roles[i].arn;
            return st->roles[i].policy;
        }
    for (size_t i = 0; i < st->ncreds; i++) {
        const cred_rec *c = st->creds[i];
        if (!c->role && (strcmp(c->pub.principal, name) == 0 || strcmp(c->pub.access_key_id, name) == 0)) {
            *found = true;
            *principal = c->pub.principal;
            return c->pub.policy;
        }
    }
    return NULL;
}

/* Move one policy set in: the old one goes, and so does every cached pointer to it. */
static void swap_policy(iam_policy **mine, iam_policy **theirs) {
    iam_policy_free(*mine);
    *mine = *theirs;
    *theirs = NULL;
}

int iam_store_authz_default(const iam_store *st) { return st->authz_default; }
bool iam_store_has_policies(const iam_store *st) { return st->has_policies; }

int iam_store_take_policies(iam_store *st, iam_store *from, char *note, size_t n) {
    int changed = 0;
    /* under AUTO the reloaded file may decide the other way: its entries were parsed that way */
    st->authz_default = from->authz_default;
    st->has_policies = from->has_policies;
    size_t l = 0;
    note[0] = '\0';
    for (size_t i = 0; i < st->ncreds; i++) { /* long-term keys, by access key id */
        cred_rec *c = st->creds[i];
        if (c->role) continue;
        cred_rec *f = find(from, c->pub.access_key_id);
        if (!f || f->role) {
            l += (size_t)snprintf(note + l, l < n ? n - l : 0, "%sidentity %s is gone from the file", l ? "; " : "",
                                  c->pub.access_key_id);
            continue;
        }
        swap_policy(&c->own_policy, &f->own_policy);
        c->pub.policy = c->own_policy;
        f->pub.policy = NULL;
        changed++;
    }
    for (size_t i = 0; i < from->ncreds; i++)
        if (!from->creds[i]->role && !find(st, from->creds[i]->pub.access_key_id))
            l += (size_t)snprintf(note + l, l < n ? n - l : 0, "%sidentity %s is new", l ? "; " : "",
                                  from->creds[i]->pub.access_key_id);
    for (size_t i = 0; i < st->nroles; i++) { /* roles, by name; their issued credentials follow */
        role_rec *r = &st->roles[i], *f = find_role(from, r->name);
        if (!f) {
            l += (size_t)snprintf(note + l, l < n ? n - l : 0, "%srole %s is gone from the file", l ? "; " : "", r->name);
            continue;
        }
        swap_policy(&r->policy, &f->policy);
        for (size_t k = 0; k < st->ncreds; k++)
            if (st->creds[k]->role == r) st->creds[k]->pub.policy = r->policy;
        for (size_t k = 0; k < from->ncreds; k++)
            if (from->creds[k]->role == f) from->creds[k]->pub.policy = NULL;
        changed++;
    }
    for (size_t i = 0; i < from->nroles; i++)
        if (!find_role(st, from->roles[i].name))
            l += (size_t)snprintf(note + l, l < n ? n - l : 0, "%srole %s is new", l ? "; " : "", from->roles[i].name);
    return changed;
}
