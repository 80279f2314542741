/*
 * iam_policy: parsing and evaluating IAM identity policies; see iam_policy.h. Each
 * statement's Action/NotAction list is resolved at parse time into a bit set of the
 * kafka-cluster actions it covers, so evaluation is a bit test and resource globs.
 */
#include "iam_policy.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "arn.h"
#include "iam_condition.h"
#include "iam_token.h"
#include "kp_mem.h"

#define MAX_PATTERN 2048 /* longer Action or Resource strings are refused */
#define MAX_STATEMENTS 1000
#define BIT(a) (1u << (a))
#define ALL_ACTIONS ((1u << IAM_ACTION_COUNT) - 1)

/* ---- the action table (https://docs.aws.amazon.com/msk/latest/developerguide/kafka-actions.html) ---- */

#define CONNECT BIT(IAM_CONNECT)
static const iam_action_info actions[IAM_ACTION_COUNT] = {
    [IAM_CONNECT] = {"kafka-cluster:Connect", IAM_RES_CLUSTER, 0},
    [IAM_DESCRIBE_CLUSTER] = {"kafka-cluster:DescribeCluster", IAM_RES_CLUSTER, CONNECT},
    [IAM_ALTER_CLUSTER] = {"kafka-cluster:AlterCluster", IAM_RES_CLUSTER, CONNECT | BIT(IAM_DESCRIBE_CLUSTER)},
    [IAM_DESCRIBE_CLUSTER_DYNAMIC_CONFIGURATION] = {"kafka-cluster:DescribeClusterDynamicConfiguration",
                                                    IAM_RES_CLUSTER, CONNECT},
    [IAM_ALTER_CLUSTER_DYNAMIC_CONFIGURATION] = {"kafka-cluster:AlterClusterDynamicConfiguration", IAM_RES_CLUSTER,
                                                 CONNECT | BIT(IAM_DESCRIBE_CLUSTER_DYNAMIC_CONFIGURATION)},
    [IAM_WRITE_DATA_IDEMPOTENTLY] = {"kafka-cluster:WriteDataIdempotently", IAM_RES_CLUSTER,
                                     CONNECT | BIT(IAM_WRITE_DATA)},
    [IAM_CREATE_TOPIC] = {"kafka-cluster:CreateTopic", IAM_RES_TOPIC, CONNECT},
    [IAM_DESCRIBE_TOPIC] = {"kafka-cluster:DescribeTopic", IAM_RES_TOPIC, CONNECT},
    [IAM_ALTER_TOPIC] = {"kafka-cluster:AlterTopic", IAM_RES_TOPIC, CONNECT | BIT(IAM_DESCRIBE_TOPIC)},
    [IAM_DELETE_TOPIC] = {"kafka-cluster:DeleteTopic", IAM_RES_TOPIC, CONNECT | BIT(IAM_DESCRIBE_TOPIC)},
    [IAM_DESCRIBE_TOPIC_DYNAMIC_CONFIGURATION] = {"kafka-cluster:DescribeTopicDynamicConfiguration", IAM_RES_TOPIC,
                                                  CONNECT},
    [IAM_ALTER_TOPIC_DYNAMIC_CONFIGURATION] = {"kafka-cluster:AlterTopicDynamicConfiguration", IAM_RES_TOPIC,
                                               CONNECT | BIT(IAM_DESCRIBE_TOPIC_DYNAMIC_CONFIGURATION)},
    [IAM_READ_DATA] = {"kafka-cluster:ReadData", IAM_RES_TOPIC,
                       CONNECT | BIT(IAM_DESCRIBE_TOPIC) | BIT(IAM_ALTER_GROUP)},
    [IAM_WRITE_DATA] = {"kafka-cluster:WriteData", IAM_RES_TOPIC, CONNECT | BIT(IAM_DESCRIBE_TOPIC)},
    [IAM_DESCRIBE_GROUP] = {"kafka-cluster:DescribeGroup", IAM_RES_GROUP, CONNECT},
    [IAM_ALTER_GROUP] = {"kafka-cluster:AlterGroup", IAM_RES_GROUP, CONNECT | BIT(IAM_DESCRIBE_GROUP)},
    [IAM_DELETE_GROUP] = {"kafka-cluster:DeleteGroup", IAM_RES_GROUP, CONNECT | BIT(IAM_DESCRIBE_GROUP)},
    [IAM_DESCRIBE_TRANSACTIONAL_ID] = {"kafka-cluster:DescribeTransactionalId", IAM_RES_TRANSACTIONAL_ID, CONNECT},
    [IAM_ALTER_TRANSACTIONAL_ID] = {"kafka-cluster:AlterTransactionalId", IAM_RES_TRANSACTIONAL_ID,
                                    CONNECT | BIT(IAM_DESCRIBE_TRANSACTIONAL_ID) | BIT(IAM_WRITE_DATA)},
};

const iam_action_info *iam_action_get(iam_action a) { return (unsigned)a < IAM_ACTION_COUNT ? &actions[a] : NULL; }

const char *iam_resource_type_name(iam_resource_type t) {
    static const char *const names[] = {"cluster", "topic", "group", "transactional-id"};
    return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "?";
}

/* ---- globs ------------------------------------------------------------------------------ */

/* Glob over lengths (no terminator needed): greedy, with one backtrack point, since every '*' is alike. */
static bool glob_n(const char *p, size_t pn, const char *t, size_t tn, bool nocase) {
    size_t pi = 0, ti = 0, star = (size_t)-1, resume = 0;
    while (ti < tn) {
        if (pi < pn && p[pi] == '*') {
            star = ++pi;
            resume = ti;
        } else if (pi < pn && (p[pi] == '?' || p[pi] == t[ti] ||
                               (nocase && tolower((unsigned char)p[pi]) == tolower((unsigned char)t[ti])))) {
            pi++, ti++;
        } else if (star != (size_t)-1) {
            pi = star;
            ti = ++resume;
        } else {
            return false;
        }
    }
    while (pi < pn && p[pi] == '*') pi++;
    return pi == pn;
}

bool iam_glob(const char *p, const char *t, bool nocase) { return glob_n(p, strlen(p), t, strlen(t), nocase); }

/*
 * Could some continuation of the prefix t match p? By dynamic programming over the pattern
 * (a '*' inside a segment cannot cross a ':'); slow, but eval_any caches its answers.
 */
static bool arn_match_some_tail(const char *p, const char *t) {
    size_t m = strlen(p);
    if (m > MAX_PATTERN) return false;
    bool a[MAX_PATTERN + 1], b[MAX_PATTERN + 1];
    bool *cur = a, *next = b;
    memset(cur, 0, (m + 1) * sizeof *cur);
    cur[0] = true;
    for (size_t i = 0; i < m && p[i] == '*'; i++) cur[i + 1] = true;
    for (; *t; t++) {
        memset(next, 0, (m + 1) * sizeof *next);
        bool any = false;
        for (size_t i = 0; i < m; i++) {
            if (!cur[i]) continue;
            char pc = p[i];
            if (pc == '*') {
                bool unbounded = p[i + 1] == '\0' || p[i + 1] == ':';
                if (unbounded || *t != ':') next[i] = any = true;
            } else if ((pc == '?' && *t != ':') || pc == *t) {
                next[i + 1] = any = true;
            }
        }
        if (!any) return false;
        /* a '*' may also match nothing: carry each state past the stars that follow it */
        for (size_t i = 0; i < m; i++)
            if (next[i] && p[i] == '*') next[i + 1] = true;
        bool *tmp = cur;
        cur = next, next = tmp;
    }
    return true; /* some state is alive: a tail can finish it */
}

/*
 * Segment by segment: the first five colon-separated segments each match on their own (a
 * wildcard stays inside its segment); a segment whose pattern ends in '*' may run on, so from
 * there the rest matches as one glob; the resource (everything after the fifth colon, where
 * group ids may hold colons) matches as one glob. Linear for the patterns policies hold.
 */
bool iam_arn_glob(const char *p, const char *t) {
    for (int seg = 0; seg < 5; seg++) {
        const char *pc = strchr(p, ':'), *tc = strchr(t, ':');
        size_t pn = pc ? (size_t)(pc - p) : strlen(p), tn = tc ? (size_t)(tc - t) : strlen(t);
        if (pn && p[pn - 1] == '*') return glob_n(p, strlen(p), t, strlen(t), false);
        if (!glob_n(p, pn, t, tn, false)) return false;
        if (!pc || !tc) return !pc && !tc;
        p = pc + 1, t = tc + 1;
    }
    return glob_n(p, strlen(p), t, strlen(t), false);
}

/* Does the pattern match every ARN that starts with prefix? (A final '*' takes any tail.) */
static bool arn_covers_all(const char *pattern, const char *prefix) {
    size_t m = strlen(pattern);
    return m && pattern[m - 1] == '*' && iam_arn_glob(pattern, prefix);
}

/* ---- the policy set --------------------------------------------------------------------- */

/*
 * A resource policy statement's Principal: "*" (any), or IAM ARNs as written (an account id is
 * kept as arn:aws:iam::<account>:root), or "service:<name>" for a service principal, which no
 * caller of mskmock is.
 */
typedef struct pset {
    bool any;
    char **arns;
    size_t n;
} pset;

static void pset_free(pset *w) {
    for (size_t i = 0; w && i < w->n; i++) free(w->arns[i]);
    if (w) free(w->arns);
    free(w);
}

static pset *pset_copy(const pset *w) {
    if (!w) return NULL;
    pset *c = xcalloc(1, sizeof *c);
    c->any = w->any;
    c->n = w->n;
    c->arns = xcalloc(w->n ? w->n : 1, sizeof *c->arns);
    for (size_t i = 0; i < w->n; i++) c->arns[i] = xstrdup(w->arns[i]);
    return c;
}

/*
 * As IAM matches a resource policy's Principal within an account
 * (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_principal.html):
 * the account's root ARN (or its id) stands for every principal of the account, a role ARN for
 * the role's assumed-role sessions, a user or session ARN for itself.
 */
static bool pset_matches(const pset *w, const iam_principal *who) {
    if (!w || w->any) return true;
    for (size_t i = 0; i < w->n; i++) {
        const char *a = w->arns[i];
        size_t l = strlen(a);
        if (l > 5 && !strcmp(a + l - 5, ":root") && strstr(a, ":iam::")) {
            char acct[64];
            if (who->account && arn_account(a, acct, sizeof acct) && !strcmp(acct, who->account)) return true;
        } else if ((who->arn && !strcmp(a, who->arn)) || (who->role_arn && !strcmp(a, who->role_arn))) {
            return true;
        }
    }
    return false;
}

typedef struct stmt {
    bool deny;
    uint32_t actions;   /* the kafka-cluster actions it applies to (NotAction resolved) */
    bool not_resource;
    char **resources;
    size_t nresources;
    char *label;        /* "<where> Statement[i] (Sid x)" */
    pset *who;          /* a resource policy's Principal; NULL in identity policies */
} stmt;

/*
 * Every statement without a Condition once more, its patterns as written, for the actions of the
 * AWS APIs around a cluster (kafka:DescribeClusterV2, sts:AssumeRole), which are named, not
 * numbered, and whose resources are not Kafka's (a role's ARN, "*" for listings).
 */
typedef struct named_stmt {
    bool deny, not_action, not_resource;
    char **actions, **resources;
    size_t nactions, nresources;
    char *label;
    iam_cond *cond;     /* NULL: none */
    pset *who;          /* as stmt's */
} named_stmt;

struct iam_policy {
    stmt *s;
    size_t n, cap;
    named_stmt *named;
    size_t nnamed, capnamed;
    size_t ignored;
    /* eval_any answers, per action, for the prefix last asked (the loop asks few prefixes) */
    char *any_prefix[IAM_ACTION_COUNT];
    iam_decision any[IAM_ACTION_COUNT];
};

iam_policy *iam_policy_new(void) { return xcalloc(1, sizeof(iam_policy)); }

static void stmt_free(stmt *s) {
    for (size_t i = 0; i < s->nresources; i++) free(s->resources[i]);
    free(s->resources);
    free(s->label);
    pset_free(s->who);
}

static void named_free(named_stmt *s) {
    for (size_t i = 0; i < s->nactions; i++) free(s->actions[i]);
    for (size_t i = 0; i < s->nresources; i++) free(s->resources[i]);
    free(s->actions);
    free(s->resources);
    free(s->label);
    iam_cond_free(s->cond);
    pset_free(s->who);
}

void iam_policy_free(iam_policy *p) {
    if (!p) return;
    for (size_t i = 0; i < p->n; i++) stmt_free(&p->s[i]);
    for (size_t i = 0; i < p->nnamed; i++) named_free(&p->named[i]);
    free(p->named);
    for (int a = 0; a < IAM_ACTION_COUNT; a++) free(p->any_prefix[a]);
    free(p->s);
    free(p);
}

size_t iam_policy_statement_count(const iam_policy *p) { return p ? p->n : 0; }
size_t iam_policy_ignored_count(const iam_policy *p) { return p ? p->ignored : 0; }

/* ---- parsing ---------------------------------------------------------------------------- */

typedef struct pctx {
    const char *where;
    char at[48]; /* "Statement[2]" */
    char *err;
    size_t n;
    bool resource_policy; /* statements name a Principal (a cluster policy) */
} pctx;

__attribute__((format(printf, 2, 3))) static int fail(pctx *c, const char *fmt, ...) {
    if (c->err && c->n) {
        int l = snprintf(c->err, c->n, "%s: %s%s", c->where, c->at, c->at[0] ? ": " : "");
        if (l >= 0 && (size_t)l < c->n) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(c->err + l, c->n - (size_t)l, fmt, ap);
            va_end(ap);
        }
    }
    return -1;
}

/* A string or a non-empty list of strings, each non-empty and at most MAX_PATTERN long. */
static int string_list(pctx *c, const json_t *v, const char *key, const char ***out, size_t *count) {
    *out = NULL;
    *count = 0;
    size_t k = json_is_array(v) ? json_array_size(v) : 1;
    if (!json_is_array(v) && !json_is_string(v)) return fail(c, "%s must be a string or a list of strings", key);
    if (k == 0) return fail(c, "%s is an empty list", key);
    const char **a = xcalloc(k, sizeof *a);
    for (size_t i = 0; i < k; i++) {
        const json_t *e = json_is_array(v) ? json_array_get(v, i) : v;
        if (!json_is_string(e)) {
            free(a);
            return fail(c, "%s[%zu] is not a string", key, i);
        }
        const char *str = json_string_value(e);
        if (!str[0] || strlen(str) > MAX_PATTERN) {
            free(a);
            return fail(c, "%s '%s' is empty or longer than %d characters", key, iam_quote(str).s, MAX_PATTERN);
        }
        a[i] = str;
    }
    *out = a;
    *count = k;
    return 0;
}

/*
 * The kafka-cluster actions a list of action patterns names. *other: some pattern is of
 * another service. A kafka-cluster pattern that names no action is refused as a typo.
 */
static int resolve_actions(pctx *c, const char *key, const char **pat, size_t k, uint32_t *bits, bool *other) {
    *bits = 0;
    *other = false;
    for (size_t i = 0; i < k; i++) {
        const char *colon = strchr(pat[i], ':');
        if (strcmp(pat[i], "*") != 0 && (!colon || colon == pat[i] || !colon[1]))
            return fail(c, "%s '%s' is not <service>:<action>", key, iam_quote(pat[i]).s);
        uint32_t b = 0;
        for (int a = 0; a < IAM_ACTION_COUNT; a++)
            if (iam_glob(pat[i], actions[a].name, true)) b |= BIT(a);
        bool ours = colon && (size_t)(colon - pat[i]) == strlen("kafka-cluster") &&
                    strncasecmp(pat[i], "kafka-cluster", (size_t)(colon - pat[i])) == 0;
        if (ours && !b) return fail(c, "%s '%s' names no kafka-cluster action", key, iam_quote(pat[i]).s);
        if (!b) *other = true;
        *bits |= b;
    }
    return 0;
}

/* "*" or arn:<partition>:kafka:<region>:<account>:<cluster|topic|group|transactional-id>/... */
static int check_resource(pctx *c, const char *key, const char *r) {
    if (strstr(r, "${")) return fail(c, "%s '%s': policy variables are not evaluated by mskmock", key, iam_quote(r).s);
    if (strcmp(r, "*") == 0) return 0;
    const char *seg[6];
    seg[0] = r;
    for (int i = 1; i < 6; i++) {
        const char *colon = strchr(seg[i - 1], ':');
        if (!colon) return fail(c, "%s '%s' is not an ARN (arn:<partition>:kafka:<region>:<account>:<resource>)", key, iam_quote(r).s);
        seg[i] = colon + 1;
    }
    if (strncmp(seg[0], "arn:", 4) != 0 || strncmp(seg[2], "kafka:", 6) != 0)
        return fail(c, "%s '%s' is not an MSK ARN (arn:<partition>:kafka:...)", key, iam_quote(r).s);
    static const char *const types[] = {"cluster/", "topic/", "group/", "transactional-id/"};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strncmp(seg[5], types[i], strlen(types[i])) == 0) return 0;
    /* a wildcard before the first '/' may stand for the type */
    const char *slash = strchr(seg[5], '/');
    size_t tl = slash ? (size_t)(slash - seg[5]) : strlen(seg[5]);
    if (memchr(seg[5], '*', tl) || memchr(seg[5], '?', tl)) return 0;
    return fail(c, "%s '%s' names no MSK resource type (cluster/, topic/, group/, transactional-id/)", key,
                iam_quote(r).s);
}

static int refuse_unknown(pctx *c, const json_t *obj, const char *const *known, const char *what) {
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)obj, key, v) {
        bool ok = false;
        for (int i = 0; known[i]; i++) ok = ok || strcmp(key, known[i]) == 0;
        if (!ok) return fail(c, "unknown %s element '%s'", what, iam_quote(key).s);
    }
    return 0;
}

/* The first operator and key of a Condition block, for the refusal. */
static void describe_condition(json_t *cond, char *out, size_t n) {
    const char *op, *key;
    json_t *v, *w;
    snprintf(out, n, "(empty)");
    json_object_foreach(cond, op, v) {
        snprintf(out, n, "%s", iam_quote(op).s);
        json_object_foreach(v, key, w) { /* no iteration when v is not an object */
            snprintf(out, n, "%s on %s", iam_quote(op).s, iam_quote(key).s);
            return;
        }
        return;
    }
}

static char *stmt_label(const pctx *c, const json_t *sid) {
    size_t ll = strlen(c->where) + strlen(c->at) + (sid ? strlen(json_string_value(sid)) : 0) + 16;
    char *label = xmalloc(ll);
    if (sid && json_string_value(sid)[0]) snprintf(label, ll, "%s %s (Sid %s)", c->where, c->at, json_string_value(sid));
    else snprintf(label, ll, "%s %s", c->where, c->at);
    return label;
}

static void push_named(iam_policy *p, const pctx *c, const json_t *sid, bool deny, bool not_action, const char **apat,
                       size_t ak, bool not_resource, const char **rpat, size_t rk, iam_cond *cond, const pset *who) {
    XGROW(p->named, p->capnamed, p->nnamed + 1, 8);
    named_stmt *s = &p->named[p->nnamed++];
    *s = (named_stmt){.deny = deny, .not_action = not_action, .not_resource = not_resource,
                      .actions = xcalloc(ak, sizeof(char *)), .resources = xcalloc(rk, sizeof(char *)),
                      .nactions = ak, .nresources = rk, .label = stmt_label(c, sid), .cond = iam_cond_ref(cond),
                      .who = pset_copy(who)};
    for (size_t i = 0; i < ak; i++) s->actions[i] = xstrdup(apat[i]);
    for (size_t i = 0; i < rk; i++) s->resources[i] = xstrdup(rpat[i]);
}

/* One Principal value: "*", an account id, or an IAM/STS ARN of a root, user, role or role session. */
static int principal_arn(pctx *c, const char *v, pset *w) {
    if (!strcmp(v, "*")) {
        w->any = true;
        return 0;
    }
    size_t l = strlen(v);
    bool account = l == 12 && strspn(v, "0123456789") == 12;
    char *arn;
    if (account) {
        arn = xmalloc(l + 32);
        snprintf(arn, l + 32, "arn:aws:iam::%s:root", v);
    } else {
        const char *f[6] = {v};
        for (int i = 1; i < 6 && f[i - 1]; i++) f[i] = strchr(f[i - 1], ':'), f[i] = f[i] ? f[i] + 1 : NULL;
        bool iam = f[5] && !strncmp(v, "arn:", 4) && !strncmp(f[2], "iam::", 5) &&
                   (!strcmp(f[5], "root") || !strncmp(f[5], "user/", 5) || !strncmp(f[5], "role/", 5));
        bool sts = f[5] && !strncmp(v, "arn:", 4) && !strncmp(f[2], "sts::", 5) && !strncmp(f[5], "assumed-role/", 13);
        if (!iam && !sts)
            return fail(c, "Principal '%s' is neither \"*\", an account id nor the ARN of an account root, user, role "
                        "or assumed-role session", iam_quote(v).s);
        if (strpbrk(v, "*?"))
            return fail(c, "Principal '%s': IAM takes no wildcard in a principal ARN (only \"*\" alone)", iam_quote(v).s);
        arn = xstrdup(v);
    }
    w->arns = xrealloc(w->arns, (w->n + 1) * sizeof *w->arns);
    w->arns[w->n++] = arn;
    return 0;
}

/* A resource policy statement's Principal: "*", or {"AWS": ..., "Service": ...} with a string or a list each. */
static int parse_principal(pctx *c, const json_t *pr, pset **out) {
    pset *w = xcalloc(1, sizeof *w);
    *out = w;
    if (json_is_string(pr)) {
        if (strcmp(json_string_value(pr), "*"))
            return fail(c, "Principal must be \"*\" or an object such as {\"AWS\": \"<ARN>\"}, not '%s'",
                        iam_quote(json_string_value(pr)).s);
        w->any = true;
        return 0;
    }
    if (!json_is_object(pr) || !json_object_size(pr))
        return fail(c, "a cluster policy statement names a Principal (a string or an object)");
    const char *type;
    json_t *v;
    json_object_foreach((json_t *)pr, type, v) {
        bool aws = !strcmp(type, "AWS"), service = !strcmp(type, "Service");
        if (!aws && !service)
            return fail(c, "Principal type '%s' is not evaluated by mskmock (it knows AWS and Service)", iam_quote(type).s);
        const char **vals;
        size_t k;
        if (string_list(c, v, aws ? "Principal.AWS" : "Principal.Service", &vals, &k)) return -1;
        for (size_t i = 0; i < k; i++) {
            if (service) { /* an AWS service: never one of mskmock's callers, so it never matches */
                size_t l = strlen(vals[i]) + 16;
                w->arns = xrealloc(w->arns, (w->n + 1) * sizeof *w->arns);
                w->arns[w->n] = xmalloc(l);
                snprintf(w->arns[w->n++], l, "service:%s", vals[i]);
            } else if (principal_arn(c, vals[i], w)) {
                free(vals);
                return -1;
            }
        }
        free(vals);
    }
    return 0;
}

/* Could an action pattern name one of the AWS APIs' actions mskmock decides (kafka:*, sts:*)? */
static bool names_aws_api(const char **pat, size_t k) {
    for (size_t i = 0; i < k; i++) {
        const char *colon = strchr(pat[i], ':');
        if (!colon) return true;
        char svc[64];
        size_t l = (size_t)(colon - pat[i]);
        if (l >= sizeof svc) continue;
        memcpy(svc, pat[i], l);
        svc[l] = '\0';
        if (iam_glob(svc, "kafka", true) || iam_glob(svc, "sts", true)) return true;
    }
    return false;
}

static int parse_statement(iam_policy *p, pctx *c, const json_t *st, stmt *out) {
    static const char *const known[] = {"Sid", "Effect", "Action", "NotAction", "Resource", "NotResource",
                                        "Condition", "Principal", "NotPrincipal", NULL};
    if (!json_is_object(st)) return fail(c, "a statement must be a JSON object");
    if (refuse_unknown(c, st, known, "statement")) return -1;
    pset *who = NULL;
    if (!c->resource_policy) {
        if (json_object_get(st, "Principal") || json_object_get(st, "NotPrincipal"))
            return fail(c, "Principal and NotPrincipal belong in resource policies, not identity policies");
    } else {
        if (json_object_get(st, "NotPrincipal"))
            return fail(c, "NotPrincipal is not evaluated by mskmock; name the principals in Principal");
        const json_t *pr = json_object_get(st, "Principal");
        if (!pr) return fail(c, "a cluster policy statement names a Principal (a string or an object)");
        int rc = parse_principal(c, pr, &who);
        if (rc) {
            pset_free(who);
            return -1;
        }
    }
    int rc = -1;
    const char **pat = NULL, **apat = NULL;
    iam_cond *cnd = NULL;
    size_t k, ak;
    const json_t *sid = json_object_get(st, "Sid"), *eff = json_object_get(st, "Effect");
    if (sid && !json_is_string(sid)) {
        fail(c, "Sid must be a string");
        goto out;
    }
    if (!eff) {
        fail(c, "Effect missing");
        goto out;
    }
    const char *e = json_is_string(eff) ? json_string_value(eff) : "";
    if (strcmp(e, "Allow") != 0 && strcmp(e, "Deny") != 0) {
        fail(c, "Effect must be \"Allow\" or \"Deny\", not '%s'", json_is_string(eff) ? iam_quote(e).s : "(not a string)");
        goto out;
    }

    const json_t *act = json_object_get(st, "Action"), *nact = json_object_get(st, "NotAction");
    if (!!act == !!nact) {
        fail(c, "a statement needs exactly one of Action and NotAction");
        goto out;
    }
    const char *akey = act ? "Action" : "NotAction";
    if (string_list(c, act ? act : nact, akey, &apat, &ak)) goto out;
    uint32_t bits;
    bool other;
    if (resolve_actions(c, akey, apat, ak, &bits, &other)) goto out;
    if (nact) bits = ALL_ACTIONS & ~bits;

    const json_t *res = json_object_get(st, "Resource"), *nres = json_object_get(st, "NotResource");
    if (!!res == !!nres) {
        fail(c, "a statement needs exactly one of Resource and NotResource");
        goto out;
    }
    const char *rkey = res ? "Resource" : "NotResource";
    if (string_list(c, res ? res : nres, rkey, &pat, &k)) goto out;
    const json_t *cond = json_object_get(st, "Condition");

    if (cond && bits) {
        /* MSK documents no condition key of its own for kafka-cluster: actions that mskmock could give */
        char what[160];
        if (!json_is_object(cond)) snprintf(what, sizeof what, "(not an object)");
        else describe_condition((json_t *)cond, what, sizeof what);
        fail(c, "Condition %s is not evaluated by mskmock on kafka-cluster: actions (only on kafka: and sts: ones); "
             "remove it or keep it out of the policies given to mskmock", what);
        goto out;
    }
    if (cond && (nact || names_aws_api(apat, ak))) {
        /* it may decide an AWS API call: evaluated, so whatever mskmock cannot evaluate is refused now */
        char why[400];
        if (iam_cond_parse(cond, &cnd, why, sizeof why)) {
            fail(c, "%s", why);
            goto out;
        }
    }
    if (!bits) { /* only other services' actions: it cannot decide a Kafka request */
        /* the AWS APIs' actions may be among them; a Condition of other services only is never evaluated */
        if (!cond || cnd) push_named(p, c, sid, e[0] == 'D', nact != NULL, apat, ak, nres != NULL, pat, k, cnd, who);
        p->ignored++;
        rc = 1;
        goto out;
    }
    for (size_t i = 0; i < k; i++)
        if (check_resource(c, rkey, pat[i])) goto out;
    push_named(p, c, sid, e[0] == 'D', nact != NULL, apat, ak, nres != NULL, pat, k, NULL, who);

    out->deny = e[0] == 'D';
    out->actions = bits;
    out->not_resource = nres != NULL;
    out->resources = xcalloc(k, sizeof *out->resources);
    out->label = stmt_label(c, sid);
    out->who = who;
    who = NULL;
    for (size_t i = 0; i < k; i++) {
        out->resources[i] = xstrdup(pat[i]);
        out->nresources++;
    }
    rc = 0;
out:
    free(apat);
    free(pat);
    iam_cond_free(cnd);
    pset_free(who);
    return rc;
}

static int add_document(iam_policy *p, const json_t *doc, const char *where, bool resource_policy, char *err, size_t n) {
    pctx c = {.where = where, .err = err, .n = n, .resource_policy = resource_policy};
    static const char *const known[] = {"Version", "Id", "Statement", NULL};
    if (!json_is_object(doc)) return fail(&c, "a policy document must be a JSON object");
    if (refuse_unknown(&c, doc, known, "policy")) return -1;
    const json_t *ver = json_object_get(doc, "Version");
    if (ver && (!json_is_string(ver) || (strcmp(json_string_value(ver), "2012-10-17") != 0 &&
                                         strcmp(json_string_value(ver), "2008-10-17") != 0)))
        return fail(&c, "Version must be \"2012-10-17\" or \"2008-10-17\"");
    const json_t *id = json_object_get(doc, "Id");
    if (id && !json_is_string(id)) return fail(&c, "Id must be a string");
    const json_t *sts = json_object_get(doc, "Statement");
    if (!sts) return fail(&c, "Statement missing");
    size_t k = json_is_array(sts) ? json_array_size(sts) : 1;
    if (k == 0) return fail(&c, "Statement is an empty list");
    if (p->n + k > MAX_STATEMENTS) return fail(&c, "more than %d statements", MAX_STATEMENTS);
    if (p->n + k > p->cap) {
        size_t cap = p->n + k;
        p->s = xrealloc(p->s, cap * sizeof *p->s);
        p->cap = cap;
    }
    size_t first = p->n, ignored = p->ignored, first_named = p->nnamed;
    for (size_t i = 0; i < k; i++) {
        if (json_is_array(sts)) snprintf(c.at, sizeof c.at, "Statement[%zu]", i);
        else snprintf(c.at, sizeof c.at, "Statement");
        stmt *s = &p->s[p->n];
        memset(s, 0, sizeof *s);
        int rc = parse_statement(p, &c, json_is_array(sts) ? json_array_get(sts, i) : sts, s);
        if (rc < 0) {
            stmt_free(s);
            while (p->n > first) stmt_free(&p->s[--p->n]); /* nothing of a refused document stays */
            p->ignored = ignored;
            while (p->nnamed > first_named) named_free(&p->named[--p->nnamed]);
            return -1;
        }
        if (rc == 0) p->n++;
    }
    return 0;
}

int iam_policy_add(iam_policy *p, const json_t *doc, const char *where, char *err, size_t n) {
    return add_document(p, doc, where, false, err, n);
}

int iam_policy_add_resource(iam_policy *p, const json_t *doc, const char *where, char *err, size_t n) {
    return add_document(p, doc, where, true, err, n);
}

/* ---- evaluation ------------------------------------------------------------------------- */

static bool stmt_matches(const stmt *s, const char *resource) {
    bool hit = false;
    for (size_t i = 0; i < s->nresources && !hit; i++) hit = iam_arn_glob(s->resources[i], resource);
    return hit != s->not_resource;
}

iam_decision iam_decision_join(iam_decision identity, iam_decision resource) {
    if (identity.effect == IAM_EXPLICIT_DENY) return identity;
    if (resource.effect == IAM_EXPLICIT_DENY) return resource;
    return identity.effect == IAM_ALLOW ? identity : resource;
}

iam_decision iam_decision_join_cross(iam_decision identity, iam_decision resource) {
    if (identity.effect == IAM_EXPLICIT_DENY) return identity;
    if (resource.effect == IAM_EXPLICIT_DENY) return resource;
    return identity.effect != IAM_ALLOW ? identity : resource;
}

iam_decision iam_policy_eval(const iam_policy *p, iam_action a, const char *resource) {
    iam_decision d = {IAM_IMPLICIT_DENY, NULL};
    if (!p || (unsigned)a >= IAM_ACTION_COUNT) return d;
    for (size_t i = 0; i < p->n; i++) {
        const stmt *s = &p->s[i];
        if (!(s->actions & BIT(a)) || !stmt_matches(s, resource)) continue;
        if (s->deny) return (iam_decision){IAM_EXPLICIT_DENY, s->label};
        if (d.effect == IAM_IMPLICIT_DENY) d = (iam_decision){IAM_ALLOW, s->label};
    }
    return d;
}

iam_decision iam_policy_eval_named(const iam_policy *p, const char *action, const char *resource, const iam_ctx *ctx) {
    iam_decision d = {IAM_IMPLICIT_DENY, NULL};
    for (size_t i = 0; p && i < p->nnamed; i++) {
        const named_stmt *s = &p->named[i];
        bool act = false, hit = false;
        for (size_t j = 0; j < s->nactions && !act; j++) act = iam_glob(s->actions[j], action, true);
        for (size_t j = 0; j < s->nresources && !hit; j++)
            hit = !strcmp(s->resources[j], "*") || iam_arn_glob(s->resources[j], resource);
        if (act == s->not_action || hit == s->not_resource) continue;
        if (s->cond && !iam_cond_eval(s->cond, ctx)) continue;
        if (s->deny) return (iam_decision){IAM_EXPLICIT_DENY, s->label};
        if (d.effect == IAM_IMPLICIT_DENY) d = (iam_decision){IAM_ALLOW, s->label};
    }
    return d;
}

/* Can the statement match some ARN starting with prefix (allow side), or every one (deny side)? */
static bool stmt_some(const stmt *s, const char *prefix) {
    if (s->not_resource) { /* excluded only if a NotResource pattern covers every such ARN */
        for (size_t i = 0; i < s->nresources; i++)
            if (arn_covers_all(s->resources[i], prefix)) return false;
        return true;
    }
    for (size_t i = 0; i < s->nresources; i++)
        if (strcmp(s->resources[i], "*") == 0 || arn_match_some_tail(s->resources[i], prefix)) return true;
    return false;
}

static iam_decision eval_any_uncached(const iam_policy *p, iam_action a, const char *arn_prefix);

static bool stmt_every(const stmt *s, const char *prefix) {
    if (s->not_resource) {
        for (size_t i = 0; i < s->nresources; i++)
            if (arn_match_some_tail(s->resources[i], prefix)) return false;
        return true;
    }
    for (size_t i = 0; i < s->nresources; i++)
        if (arn_covers_all(s->resources[i], prefix)) return true;
    return false;
}

iam_decision iam_policy_eval_any(const iam_policy *p, iam_action a, const char *arn_prefix) {
    iam_decision d = {IAM_IMPLICIT_DENY, NULL};
    if (!p || (unsigned)a >= IAM_ACTION_COUNT) return d;
    /*
     * The answer depends only on the policy, the action and the prefix, and the prefix walk is
     * slow (dynamic programming): keep it. The cache is the only thing that changes in a
     * policy after it is built, and only the loop thread evaluates policies.
     */
    iam_policy *mp = (iam_policy *)p;
    if (mp->any_prefix[a] && strcmp(mp->any_prefix[a], arn_prefix) == 0) return mp->any[a];
    d = eval_any_uncached(p, a, arn_prefix);
    char *copy = xstrdup(arn_prefix);
    free(mp->any_prefix[a]);
    mp->any_prefix[a] = copy;
    mp->any[a] = d;
    return d;
}

static iam_decision eval_any_uncached(const iam_policy *p, iam_action a, const char *arn_prefix) {
    iam_decision d = {IAM_IMPLICIT_DENY, NULL};
    for (size_t i = 0; i < p->n; i++) {
        const stmt *s = &p->s[i];
        if (!(s->actions & BIT(a))) continue;
        if (s->deny && stmt_every(s, arn_prefix)) return (iam_decision){IAM_EXPLICIT_DENY, s->label};
        if (!s->deny && d.effect == IAM_IMPLICIT_DENY && stmt_some(s, arn_prefix))
            d = (iam_decision){IAM_ALLOW, s->label};
    }
    return d;
}

/* ---- resource policies -------------------------------------------------------------------- */

iam_policy *iam_policy_for_principal(const iam_policy *rp, const iam_principal *who) {
    iam_policy *p = iam_policy_new();
    for (size_t i = 0; rp && i < rp->n; i++) {
        const stmt *s = &rp->s[i];
        if (!pset_matches(s->who, who)) continue;
        XGROW(p->s, p->cap, p->n + 1, 4);
        stmt *t = &p->s[p->n++];
        *t = (stmt){.deny = s->deny, .actions = s->actions, .not_resource = s->not_resource,
                    .resources = xcalloc(s->nresources, sizeof(char *)), .nresources = s->nresources,
                    .label = xstrdup(s->label)};
        for (size_t j = 0; j < s->nresources; j++) t->resources[j] = xstrdup(s->resources[j]);
    }
    for (size_t i = 0; rp && i < rp->nnamed; i++) {
        const named_stmt *s = &rp->named[i];
        if (!pset_matches(s->who, who)) continue;
        XGROW(p->named, p->capnamed, p->nnamed + 1, 4);
        named_stmt *t = &p->named[p->nnamed++];
        *t = (named_stmt){.deny = s->deny, .not_action = s->not_action, .not_resource = s->not_resource,
                          .actions = xcalloc(s->nactions, sizeof(char *)), .nactions = s->nactions,
                          .resources = xcalloc(s->nresources, sizeof(char *)), .nresources = s->nresources,
                          .label = xstrdup(s->label), .cond = iam_cond_ref(s->cond)};
        for (size_t j = 0; j < s->nactions; j++) t->actions[j] = xstrdup(s->actions[j]);
        for (size_t j = 0; j < s->nresources; j++) t->resources[j] = xstrdup(s->resources[j]);
    }
    return p;
}
