/* authz: IAM authorization of requests; see authz.h. */
#include "authz.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "hash.h"
#include "ids.h"
#include "iam_store.h"
#include "kp_mem.h"
#include "log.h"
#include "net/net.h"
#include "sasl.h"

#define UUID_SETTING "msk.cluster.uuid"
#define CACHE_SLOTS 32 /* per connection, direct-mapped */
#define CACHE_NAME 120 /* longer resource names are decided every time */
#define ARN_INLINE 512 /* longer ARNs (long group ids) are built on the heap */
#define PER_PRINCIPAL 64 /* the cluster policy's statements per caller, kept for this many callers */

/* The statements of the cluster policy that apply to one caller (iam_policy_for_principal). */
typedef struct principal_view {
    char *arn;
    iam_policy *policy;
} principal_view;

struct authz {
    char base[160];               /* arn:aws:kafka:<region>:<account>: */
    char suffix[260];             /* <cluster name>/<uuid> */
    char cluster_arn[440];
    bool plaintext_restricted;    /* plaintext.principal is set */
    const iam_policy *plaintext_policy;
    const char *plaintext_name;   /* its principal ARN, for log lines */
    iam_store *pending;           /* reloaded policies waiting for iam.policy.propagation.ms */
    uv_timer_t apply;
    iam_policy *cluster_policy;   /* the cluster's resource-based policy (PutClusterPolicy); NULL: none */
    principal_view views[PER_PRINCIPAL];
    size_t nviews;
};

static const int16_t denial_code[AUTHZ_TYPES] = {
    [IAM_RES_CLUSTER] = KERR_CLUSTER_AUTHORIZATION_FAILED,
    [IAM_RES_TOPIC] = KERR_TOPIC_AUTHORIZATION_FAILED,
    [IAM_RES_GROUP] = KERR_GROUP_AUTHORIZATION_FAILED,
    [IAM_RES_TRANSACTIONAL_ID] = KERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
};

/* The cluster uuid: configured, or kept in storage, or made now (MSK Serverless uuids end in -s1). */
static int cluster_uuid(srv *s, char *out, size_t n, char *err, size_t errlen) {
    if (*s->cfg->msk_cluster_uuid) {
        snprintf(out, n, "%s", s->cfg->msk_cluster_uuid);
        return 0;
    }
    int rc = stor_setting_get(s->st, UUID_SETTING, out, n);
    if (rc == 1) return 0;
    if (rc == 0) {
        char u[37];
        ids_uuid4_str(u);
        snprintf(out, n, "%s-s1", u);
        if (stor_setting_put(s->st, UUID_SETTING, out) == 0 && stor_commit(s->st) == 0) return 0;
    }
    snprintf(err, errlen, "the cluster uuid of the IAM resource ARNs: %s", stor_errmsg(s->st));
    return -1;
}

/* Names inside an ARN: ':' would shift the segments the ARN glob sees, and '/' splits types. */
static int check_arn_part(const char *key, const char *v, char *err, size_t n) {
    if (!*v || strpbrk(v, ":/*? ")) {
        snprintf(err, n, "%s '%s' must be non-empty without ':', '/', '*', '?' or spaces (it is part of ARNs)", key, v);
        return -1;
    }
    return 0;
}

/* plaintext.principal's policies: at start, and again after a reload replaced them. */
static int resolve_plaintext(srv *s, char *err, size_t n) {
    struct authz *a = s->authz;
    if (!*s->cfg->plaintext_principal) return 0;
    bool found;
    a->plaintext_restricted = true;
    a->plaintext_policy = iam_store_policy_of(sasl_identities(s), s->cfg->plaintext_principal, &a->plaintext_name, &found);
    if (!found) {
        snprintf(err, n, "plaintext.principal '%s' names no identity or role of iam.identities.file",
                 s->cfg->plaintext_principal);
        return -1;
    }
    return 0;
}

/* iam.authorization.default as it is in force, for the start-up line (auto says which way it went). */
static const char *default_mode(srv *s) {
    const iam_store *st = sasl_identities(s);
    bool deny = st ? iam_store_authz_default(st) == IAM_AUTHZ_DEFAULT_DENY
                   : s->cfg->iam_authorization_default == IAM_AUTHZ_DEFAULT_DENY;
    if (s->cfg->iam_authorization_default != IAM_AUTHZ_DEFAULT_AUTO)
        return deny ? "denied everything (iam.authorization.default=deny)"
                    : "allowed everything (iam.authorization.default=allow)";
    return deny ? "denied everything, as on MSK (iam.authorization.default=auto, and the identities file gives policies)"
                : "allowed everything (iam.authorization.default=auto, and no identity or role in the identities file "
                  "has policies: authentication without authorization)";
}

int authz_init(srv *s, char *err, size_t n) {
    const config *cfg = s->cfg;
    if (check_arn_part("msk.account.id", cfg->msk_account_id, err, n) ||
        check_arn_part("msk.cluster.name", cfg->msk_cluster_name, err, n) ||
        check_arn_part("iam.region", cfg->iam_region, err, n) ||
        (*cfg->msk_cluster_uuid && check_arn_part("msk.cluster.uuid", cfg->msk_cluster_uuid, err, n)))
        return -1;
    struct authz *a = xcalloc(1, sizeof *a);
    s->authz = a;
    char uuid[128];
    if (cluster_uuid(s, uuid, sizeof uuid, err, n)) return -1;
    snprintf(a->base, sizeof a->base, "arn:aws:kafka:%.64s:%.64s:", cfg->iam_region, cfg->msk_account_id);
    snprintf(a->suffix, sizeof a->suffix, "%.128s/%.128s", cfg->msk_cluster_name, uuid);
    snprintf(a->cluster_arn, sizeof a->cluster_arn, "%scluster/%s", a->base, a->suffix);
    if (resolve_plaintext(s, err, n)) return -1;
    char *doc = NULL, *version = NULL, why[512];
    if (s->st && stor_cluster_policy_get(s->st, a->cluster_arn, &doc, &version) == 1 &&
        authz_set_cluster_policy(s, doc, why, sizeof why) != 0)
        /* stored by an older mskmock that evaluated less of it (conditions were left out then): as it
         * was, it does not decide; PutClusterPolicy or DeleteClusterPolicy replaces it */
        log_warn("iam: the stored cluster policy (version %s) of %s does not load, so it decides nothing: %s", version,
                 a->cluster_arn, why);
    free(doc), free(version);
    uv_timer_init(s->loop, &a->apply);
    a->apply.data = s;
    uv_unref((uv_handle_t *)&a->apply);
    log_info("iam: resource ARNs: cluster %s, topics %stopic/%s/<topic>, groups %sgroup/%s/<group>; identities "
             "without policies are %s; plaintext listener: %s",
             a->cluster_arn, a->base, a->suffix, a->base, a->suffix, default_mode(s),
             a->plaintext_restricted ? a->plaintext_name : "allowed everything");
    return 0;
}

void authz_close(srv *s) {
    struct authz *a = s->authz;
    if (a && a->apply.type == UV_TIMER && !uv_is_closing((uv_handle_t *)&a->apply)) uv_close((uv_handle_t *)&a->apply, NULL);
}

static void drop_views(struct authz *a) {
    for (size_t i = 0; i < a->nviews; i++) {
        free(a->views[i].arn);
        iam_policy_free(a->views[i].policy);
    }
    a->nviews = 0;
}

void authz_free(srv *s) {
    if (!s->authz) return;
    drop_views(s->authz);
    iam_policy_free(s->authz->cluster_policy);
    iam_store_free(s->authz->pending);
    free(s->authz);
    s->authz = NULL;
}

/* ---- reload ---- */

static void apply_pending(uv_timer_t *t) {
    srv *s = t->data;
    struct authz *a = s->authz;
    if (!a->pending) return;
    char note[1024], err[256];
    int n = iam_store_take_policies(sasl_identities(s), a->pending, note, sizeof note);
    iam_store_free(a->pending);
    a->pending = NULL;
    /* every cluster's connections decide afresh: the identities are the process's, shared by its clusters */
    for (int i = 0; i < s->fleet->n; i++) {
        srv *cs = s->fleet->list[i]->s;
        if (!cs || !cs->authz) continue;
        for (conn *c = cs->conns; c; c = c->next) authz_forget(c);
        if (resolve_plaintext(cs, err, sizeof err) != 0) {
            /* the identity it names is gone from the file: nothing for the plaintext listener */
            cs->authz->plaintext_policy = NULL;
            log_warn("iam: %s; the plaintext listener keeps its previous principal's policies until restart", err);
        }
    }
    log_info("iam: reloaded policies applied to %d identities and roles%s%s", n, note[0] ? "; at the next start: " : "",
             note);
}

int authz_reload(srv *s, const char *who, char *err, size_t n) {
    struct authz *a = s->authz;
    const config *cfg = s->cfg;
    if (!*cfg->iam_identities_file) {
        snprintf(err, n, "no iam.identities.file to reload");
        log_warn("iam: %s: %s", who, err);
        return -1;
    }
    iam_store_settings set = {cfg->iam_identities_file, cfg->iam_credentials_rotation_interval_ms,
                              cfg->iam_credentials_lifetime_ms, cfg->iam_credentials_new_session_name,
                              cfg->iam_authorization_default};
    iam_store *fresh = NULL;
    if (iam_store_open(&fresh, &set, clk_now_ms(), err, n) != 0) {
        log_warn("iam: %s: reload refused, the current policies stay: %s", who, err);
        return -1;
    }
    iam_store_free(a->pending); /* a newer reload replaces one still waiting */
    a->pending = fresh;
    log_info("iam: %s: policies read from %s; they apply in %lld ms (iam.policy.propagation.ms)", who,
             cfg->iam_identities_file, (long long)cfg->iam_policy_propagation_ms);
    clk_timer_start(&a->apply, apply_pending, cfg->iam_policy_propagation_ms);
    return 0;
}

const char *authz_cluster_arn(const srv *s) { return s->authz ? s->authz->cluster_arn : ""; }

int authz_set_cluster_policy(srv *s, const char *doc, char *why, size_t n) {
    struct authz *a = s->authz;
    iam_policy *p = NULL;
    if (doc) {
        json_error_t je;
        json_t *j = json_loads(doc, JSON_REJECT_DUPLICATES, &je);
        if (!j) {
            snprintf(why, n, "the policy is not JSON: %s", je.text);
            return -1;
        }
        p = iam_policy_new();
        int rc = iam_policy_add_resource(p, j, "cluster policy", why, n);
        json_decref(j);
        if (rc) {
            iam_policy_free(p);
            return -1;
        }
    }
    drop_views(a);
    iam_policy_free(a->cluster_policy);
    a->cluster_policy = p;
    for (conn *c = s->conns; c; c = c->next) authz_forget(c); /* decide afresh */
    log_info("iam: cluster policy of %s %s", a->cluster_arn, p ? "in force: it joins every decision on the cluster"
                                                               : "removed: identity policies alone decide");
    return 0;
}

/* ---- whose policies ---- */

/*
 * The cluster policy's statements for the caller whose ARN is arn (NULL: no cluster policy).
 * Valid until the next call: built once per caller and kept, all dropped when the policy changes.
 */
static const iam_policy *cluster_view(srv *s, const char *arn, const char *role) {
    struct authz *a = s->authz;
    if (!a->cluster_policy || !arn) return NULL;
    for (size_t i = 0; i < a->nviews; i++)
        if (!strcmp(a->views[i].arn, arn)) return a->views[i].policy;
    if (a->nviews == PER_PRINCIPAL) drop_views(a);
    /* an assumed-role session is also its role (a role ARN in Principal names every session of it) */
    const char *role_arn = role ? iam_store_role_arn(sasl_identities(s), role) : strstr(arn, ":role/") ? arn : NULL;
    char account[64];
    arn_account(arn, account, sizeof account);
    iam_principal who = {arn, role_arn, account};
    principal_view *v = &a->views[a->nviews++];
    v->arn = xstrdup(arn);
    v->policy = iam_policy_for_principal(a->cluster_policy, &who);
    return v->policy;
}

bool authz_has_cluster_policy(const srv *s) { return s->authz && s->authz->cluster_policy; }

typedef struct who {
    bool everything;        /* no identity policies: allowed everything (see decide2) */
    const iam_policy *policy;
    const char *why_none;   /* set: deny everything, for this reason */
    const iam_policy *cluster; /* the cluster policy's statements naming this caller; NULL: none */
    bool cross;             /* the caller is of another account than the cluster's (see decide2) */
} who;

/*
 * Whether principal (an IAM or STS ARN) is of another account than the cluster: the clusters the
 * control plane creates belong to their creator's account, and the identities file may hold
 * several accounts.
 */
static bool cross_account(const srv *s, const char *principal) {
    char account[32];
    arn_account(principal, account, sizeof account);
    return *account && strcmp(account, s->cfg->msk_account_id) != 0; /* no account: nothing to compare */
}

static who policies_of(srv *s, const conn *c) {
    struct authz *a = s->authz;
    if (!lsn_sasl(c->listener)) {
        /* without plaintext.principal there is nobody for a cluster policy to name: not IAM, allowed everything */
        if (!a->plaintext_restricted) return (who){true, NULL, NULL, NULL, false};
        return (who){a->plaintext_policy == NULL, a->plaintext_policy, NULL, cluster_view(s, a->plaintext_name, NULL),
                     cross_account(s, a->plaintext_name)};
    }
    const iam_cred *cr = c->access_key_id ? iam_store_lookup(sasl_identities(s), c->access_key_id) : NULL;
    if (!cr) return (who){false, NULL, "the session's credentials are no longer known", NULL, false};
    return (who){cr->policy == NULL, cr->policy, NULL, cluster_view(s, cr->principal, cr->role),
                 cross_account(s, cr->principal)};
}

/* Nothing to decide: no identity policies and no cluster policy statement naming the caller of its account. */
static bool allowed_outright(const who *w) { return w->everything && !w->cluster && !w->cross; }

/*
 * The identity's decision joined with the cluster policy's, as IAM joins an identity-based and a
 * resource-based policy within one account
 * (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_evaluation-logic.html;
 * https://docs.aws.amazon.com/msk/latest/developerguide/mvpc-cluster-owner-action-policy.html):
 * an explicit Deny in either wins, else an Allow in either suffices, else the implicit deny.
 *
 * An identity without policies (allowed everything: iam.authorization.default=allow, or auto
 * with no policies anywhere in the identities file) stands for an identity whose policy allows
 * everything, the way mskmock has always treated it; so a cluster policy's Allow adds nothing
 * for it, and its Deny still wins, as a resource policy's Deny wins over any identity's Allow.
 * Where such identities are denied everything (deny, or auto once some entry has policies), the
 * store gives them an empty set: no identity Allow, so a cluster policy Allow naming them
 * suffices, as it does on AWS for a principal of the cluster's account without policies.
 *
 * A caller of another account (a cluster the control plane created in one account, reached with
 * credentials of another) needs both: its own policies' Allow and the cluster policy's, as IAM
 * decides across accounts; with no cluster policy naming it, it is refused.
 */
static iam_decision decide2(const who *w, iam_action act, const char *arn, bool on_some) {
    iam_decision di = {IAM_ALLOW, NULL}, dc = {IAM_IMPLICIT_DENY, NULL};
    if (!w->everything) di = on_some ? iam_policy_eval_any(w->policy, act, arn) : iam_policy_eval(w->policy, act, arn);
    if (w->cluster) dc = on_some ? iam_policy_eval_any(w->cluster, act, arn) : iam_policy_eval(w->cluster, act, arn);
    return w->cross ? iam_decision_join_cross(di, dc) : iam_decision_join(di, dc);
}

/* ---- ARNs ---- */

typedef struct arn_buf {
    char inline_buf[ARN_INLINE];
    char *p;
} arn_buf;

static const char *arn_of(const struct authz *a, iam_resource_type t, const char *name, size_t len, arn_buf *b) {
    if (t == IAM_RES_CLUSTER) return a->cluster_arn;
    size_t need = strlen(a->base) + strlen(iam_resource_type_name(t)) + strlen(a->suffix) + len + 3;
    b->p = need <= sizeof b->inline_buf ? b->inline_buf : xmalloc(need);
    snprintf(b->p, need, "%s%s/%s/%.*s", a->base, iam_resource_type_name(t), a->suffix, (int)len, name);
    return b->p;
}

static void arn_done(arn_buf *b) {
    if (b->p != b->inline_buf) free(b->p);
}

/* ---- the per-connection cache of allowed decisions ---- */

/*
 * Only allowed decisions are kept (a refusal is decided again, so that its log line says
 * why). An entry is (action, resource type, name) exactly: no hash alone ever allows.
 */
typedef struct cache_entry {
    uint64_t hash;
    int8_t action; /* -1: empty */
    int8_t type;
    uint8_t len;
    char name[CACHE_NAME];
} cache_entry;

struct authz_cache {
    cache_entry e[CACHE_SLOTS];
};

static uint64_t key_hash(int action, int type, const char *name, size_t len) {
    return hash_fnv64_from(HASH_FNV64_OFFSET ^ (uint64_t)(action * 8 + type), name, len);
}

static cache_entry *cache_slot(const conn *c, uint64_t h) {
    return c->authz_cache ? &c->authz_cache->e[h % CACHE_SLOTS] : NULL;
}

static bool cache_hit(const conn *c, uint64_t h, int action, int type, const char *name, size_t len) {
    const cache_entry *e = cache_slot(c, h);
    return e && e->action == action && e->hash == h && e->type == type && e->len == len &&
           memcmp(e->name, name, len) == 0;
}

static void cache_put(conn *c, uint64_t h, int action, int type, const char *name, size_t len) {
    if (len > CACHE_NAME) return;
    if (!c->authz_cache) {
        c->authz_cache = xmalloc(sizeof *c->authz_cache);
        for (int i = 0; i < CACHE_SLOTS; i++) c->authz_cache->e[i].action = -1;
    }
    cache_entry *e = cache_slot(c, h);
    *e = (cache_entry){.hash = h, .action = (int8_t)action, .type = (int8_t)type, .len = (uint8_t)len};
    memcpy(e->name, name, len);
}

void authz_forget(conn *c) {
    free(c->authz_cache);
    c->authz_cache = NULL;
}

/* ---- decisions ---- */

typedef struct verdict {
    bool allowed;
    iam_action failed;        /* the action that was not allowed (the asked one, or a requirement) */
    bool on_some;             /* failed on "some resource of its type" rather than on the resource asked */
    iam_decision d;
} verdict;

/*
 * The action on the resource, then what it also requires: on the same ARN for the same
 * type, else on some resource of that type. Connect was settled at authentication.
 */
static verdict decide(srv *s, const who *w, iam_action act, iam_resource_type type, const char *arn) {
    const iam_action_info *info = iam_action_get(act);
    uint32_t todo = info->requires & ~(1u << IAM_CONNECT);
    bool relaxed = act == IAM_WRITE_DATA_IDEMPOTENTLY && s->cfg->iam_authorization_idempotent_relaxed;
    if (relaxed) todo |= 1u << IAM_WRITE_DATA; /* KIP-679: WriteData on any topic is enough */
    else {
        iam_decision d = decide2(w, act, arn, false);
        if (d.effect != IAM_ALLOW) return (verdict){false, act, false, d};
    }
    for (int req_act = 0; req_act < IAM_ACTION_COUNT; req_act++) {
        if (!(todo & (1u << req_act))) continue;
        iam_resource_type rt = iam_action_get(req_act)->resource;
        iam_decision d;
        if (rt == type && !relaxed) {
            d = decide2(w, req_act, arn, false);
        } else {
            char prefix[448]; /* base + type + suffix */
            if (rt == IAM_RES_CLUSTER)
                snprintf(prefix, sizeof prefix, "%s", s->authz->cluster_arn);
            else
                snprintf(prefix, sizeof prefix, "%s%s/%s/", s->authz->base, iam_resource_type_name(rt),
                         s->authz->suffix);
            d = decide2(w, req_act, prefix, rt != IAM_RES_CLUSTER);
        }
        if (d.effect != IAM_ALLOW) return (verdict){false, req_act, rt != type || relaxed, d};
    }
    return (verdict){true, act, false, {IAM_ALLOW, NULL}};
}

/* The pipeline gave the request its API's row of actions (api/table.c); none: fail closed. */
static int8_t action_for(const req *r, iam_resource_type type) {
    return r->authz_actions && (unsigned)type < AUTHZ_TYPES ? r->authz_actions[type] : AUTHZ_NONE;
}

int16_t authz_check(srv *s, req *r, iam_resource_type type, const char *name, size_t len) {
    who w = policies_of(s, r->c);
    if (allowed_outright(&w)) return 0;
    int16_t code = (unsigned)type < AUTHZ_TYPES ? denial_code[type] : KERR_CLUSTER_AUTHORIZATION_FAILED;
    int8_t act = action_for(r, type);
    arn_buf b = {.p = NULL};
    const char *arn = arn_of(s->authz, type, name, len, &b);
    if (act == AUTHZ_NONE) { /* a handler asked about a resource its table row does not name: fail closed */
        req_log_refusal(r, code, "%s: the handler table names no IAM action for %s resources of this API", arn,
                        iam_resource_type_name(type));
        arn_done(&b);
        return code;
    }
    if (w.why_none) {
        req_log_refusal(r, code, "%s on %s: %s", iam_action_get(act)->name, arn, w.why_none);
        arn_done(&b);
        return code;
    }
    uint64_t h = key_hash(act, type, name, len);
    if (cache_hit(r->c, h, act, type, name, len)) {
        arn_done(&b);
        return 0;
    }
    verdict v = decide(s, &w, act, type, arn);
    if (v.allowed) cache_put(r->c, h, act, type, name, len);
    if (!v.allowed) {
        const char *by = v.d.effect == IAM_EXPLICIT_DENY ? "denied by " : "no statement allowed it";
        const char *stmt = v.d.effect == IAM_EXPLICIT_DENY ? v.d.by
                           : s->authz->cluster_policy ? " (neither of the caller's policies nor of the cluster policy)"
                                                      : "";
        if ((int)v.failed == act)
            req_log_refusal(r, code, "%s on %s: %s%s", iam_action_get(act)->name, arn, by, stmt);
        else
            req_log_refusal(r, code, "%s on %s also requires %s on %s%s: %s%s", iam_action_get(act)->name, arn,
                            iam_action_get(v.failed)->name, v.on_some ? "some " : "",
                            v.on_some ? iam_resource_type_name(iam_action_get(v.failed)->resource) : "that resource",
                            by, stmt);
    }
    arn_done(&b);
    return v.allowed ? 0 : code;
}

bool authz_allowed(srv *s, conn *c, iam_action a, const char *name, size_t len) {
    who w = policies_of(s, c);
    if (allowed_outright(&w)) return true;
    if (w.why_none) return false;
    iam_resource_type type = iam_action_get(a)->resource;
    uint64_t h = key_hash(a, type, name, len);
    if (cache_hit(c, h, a, type, name, len)) return true;
    arn_buf b = {.p = NULL};
    const char *arn = arn_of(s->authz, type, name, len, &b);
    verdict v = decide(s, &w, a, type, arn);
    arn_done(&b);
    if (v.allowed) cache_put(c, h, a, type, name, len);
    return v.allowed;
}

/* Kafka AclOperation -> the IAM action that stands for it, per resource type (MSK's mapping). */
typedef struct op_map {
    int8_t op;
    int8_t action;
} op_map;
static const op_map topic_ops[] = {
    {3, IAM_READ_DATA},   {4, IAM_WRITE_DATA},   {5, IAM_CREATE_TOPIC},
    {6, IAM_DELETE_TOPIC}, {7, IAM_ALTER_TOPIC}, {8, IAM_DESCRIBE_TOPIC},
    {10, IAM_DESCRIBE_TOPIC_DYNAMIC_CONFIGURATION}, {11, IAM_ALTER_TOPIC_DYNAMIC_CONFIGURATION},
};
/* DESCRIBE_CONFIGS and ALTER_CONFIGS last: only with group.configs.enable does a group have configs */
static const op_map group_ops[] = {{3, IAM_ALTER_GROUP}, {6, IAM_DELETE_GROUP}, {8, IAM_DESCRIBE_GROUP},
                                   {10, IAM_DESCRIBE_GROUP}, {11, IAM_ALTER_GROUP}};
static const op_map cluster_ops[] = {
    {7, IAM_ALTER_CLUSTER}, {8, IAM_DESCRIBE_CLUSTER}, {10, IAM_DESCRIBE_CLUSTER_DYNAMIC_CONFIGURATION},
    {11, IAM_ALTER_CLUSTER_DYNAMIC_CONFIGURATION}, {12, IAM_WRITE_DATA_IDEMPOTENTLY},
};
static const op_map txn_ops[] = {{4, IAM_ALTER_TRANSACTIONAL_ID}, {8, IAM_DESCRIBE_TRANSACTIONAL_ID}};

int32_t authz_operations(srv *s, conn *c, iam_resource_type type, const char *name, size_t len) {
    const op_map *m = type == IAM_RES_TOPIC ? topic_ops : type == IAM_RES_GROUP ? group_ops
                      : type == IAM_RES_CLUSTER ? cluster_ops : txn_ops;
    size_t n = type == IAM_RES_TOPIC ? sizeof topic_ops / sizeof *m : type == IAM_RES_GROUP ? sizeof group_ops / sizeof *m
               : type == IAM_RES_CLUSTER ? sizeof cluster_ops / sizeof *m : sizeof txn_ops / sizeof *m;
    if (type == IAM_RES_GROUP && !s->cfg->group_configs_enable) n -= 2;
    int32_t bits = 0;
    if (policies_of(s, c).everything) /* no policy: all Kafka knows, CLUSTER_ACTION and cluster CREATE included */
        bits = type == IAM_RES_CLUSTER ? (1 << 5) | (1 << 9) : 0;
    for (size_t i = 0; i < n; i++)
        if (authz_allowed(s, c, (iam_action)m[i].action, name, len)) bits |= (int32_t)1 << m[i].op;
    return bits;
}

bool authz_connect(srv *s, const iam_policy *policy, const char *access_key_id, char *why, size_t n) {
    const iam_cred *cr = access_key_id ? iam_store_lookup(sasl_identities(s), access_key_id) : NULL;
    who w = {policy == NULL, policy, NULL, cr ? cluster_view(s, cr->principal, cr->role) : NULL,
             cr && cross_account(s, cr->principal)};
    if (allowed_outright(&w)) return true;
    iam_decision d = decide2(&w, IAM_CONNECT, s->authz->cluster_arn, false);
    if (d.effect == IAM_ALLOW) return true;
    snprintf(why, n, "kafka-cluster:Connect on %s: %s%s", s->authz->cluster_arn,
             d.effect == IAM_EXPLICIT_DENY ? "denied by " : "no statement allowed it",
             d.effect == IAM_EXPLICIT_DENY ? d.by
             : s->authz->cluster_policy   ? " (neither of the caller's policies nor of the cluster policy)"
                                          : "");
    return false;
}

iam_decision authz_named(srv *s, const iam_cred *cr, const char *action, const char *resource, const iam_ctx *ctx) {
    /* a cluster policy is about its cluster: it decides nothing on "*" (listings) nor on a role (sts:AssumeRole) */
    const iam_policy *cl = strcmp(resource, authz_cluster_arn(s)) ? NULL : cluster_view(s, cr->principal, cr->role);
    iam_decision di = {IAM_ALLOW, NULL}, dc = {IAM_IMPLICIT_DENY, NULL};
    if (cr->policy) di = iam_policy_eval_named(cr->policy, action, resource, ctx);
    if (cl) dc = iam_policy_eval_named(cl, action, resource, ctx);
    /* an identity without policies fares as in decide2; a caller of another account needs both */
    bool cross = !strcmp(resource, authz_cluster_arn(s)) && cross_account(s, cr->principal);
    return cross ? iam_decision_join_cross(di, dc) : iam_decision_join(di, dc);
}
