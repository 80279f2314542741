/*
 * The consumer group protocol's coordinator (KIP-848): ConsumerGroupHeartbeat as Apache Kafka's
 * GroupMetadataManager.consumerGroupHeartbeat serves it (validation, joining, static members,
 * leaving with epoch -1 or -2, the epoch checks, the group epoch bump, the target assignment,
 * the reconciliation, the response's assignment, subscriptions by regular expression resolved
 * again whenever a topic is created or deleted), fencing (session timeout, rebalance timeout),
 * and the member checks of OffsetCommit/OffsetFetch (ConsumerGroup.validateOffsetCommit and
 * validateOffsetFetch). https://cwiki.apache.org/confluence/display/KAFKA/KIP-848%3A+The+Next+Generation+of+the+Consumer+Rebalance+Protocol
 *
 * Every refusal is Kafka's error with its message and one log line, and changes nothing. State
 * goes to storage (consumer_store.c) whenever a heartbeat or the timer changed it, inside the
 * loop iteration's commit, so a kill -9 loses nothing a member was told.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "consumer.h"
#include "consumer_int.h"
#include "group_store.h"
#include "ids.h"
#include "kp_mem.h"
#include "log.h"
#include "net/net.h"
#include "srv.h"

enum { EPOCH_LEAVE = -1, EPOCH_STATIC_LEAVE = -2 };

bool cg_enabled(const srv *s) {
    const char *v = s->cfg->group_coordinator_rebalance_protocols;
    return v && strstr(v, "consumer") != NULL;
}

const char *cg_state_name(const group *g) {
    const cgroup *cg = g->cg;
    if (!cg || cg->n == 0) return "Empty";
    if (cg->group_epoch > cg->assignment_epoch) return "Assigning";
    for (int i = 0; i < cg->n; i++)
        if (cg->m[i]->epoch != cg->assignment_epoch || cg->m[i]->state != CM_STABLE) return "Reconciling";
    return "Stable";
}

/* ---- members ---- */

static void free_member(cmember *m) {
    free(m->id);
    free(m->instance_id);
    free(m->rack_id);
    free(m->client_id);
    free(m->client_host);
    free(m->server_assignor);
    for (int i = 0; i < m->ntopics; i++) free(m->topics[i]);
    free(m->topics);
    for (int i = 0; i < m->nnames; i++) free(m->names[i]);
    free(m->names);
    free(m->regex);
    cg_parts_free(&m->assigned);
    cg_parts_free(&m->revoking);
    cg_parts_free(&m->target);
    cg_classic_free(m->classic);
    free(m);
}

static void free_resolved(cg_resolved *x) {
    free(x->pattern);
    cg_regex_free(x->re);
    for (int i = 0; i < x->ntopics; i++) free(x->topics[i]);
    free(x->topics);
}

void cg_free(cgroup *cg) {
    if (!cg) return;
    for (int i = 0; i < cg->n; i++) free_member(cg->m[i]);
    free(cg->m);
    for (int i = 0; i < cg->nmeta; i++) free(cg->meta[i].topic);
    free(cg->meta);
    free(cg->assignor);
    for (int i = 0; i < cg->nrx; i++) free_resolved(&cg->rx[i]);
    free(cg->rx);
    cg_members_free(cg);
    free(cg);
}

/* By the index (consumer_members.c): a heartbeat costs the same in a group of 2 or of 2,000. */
static cmember *find_member(const cgroup *cg, kp_str id) {
    return id.len < 0 ? NULL : cg_member_find(cg, id.p, (size_t)id.len);
}

static cmember *find_static(const cgroup *cg, kp_str instance) {
    return instance.len < 0 ? NULL : cg_member_find_static(cg, instance.p, (size_t)instance.len);
}

static void add_member(cgroup *cg, cmember *m) { cg_member_add(cg, m); }

static void unlink_member(cgroup *cg, cmember *m) { cg_member_remove(cg, m); }

/* A classic group's state fields follow the consumer group, so what reads them (DeleteGroups, offset expiry, max.consumer.groups) sees a group with members as not Empty. */
static void sync_state(group *g) {
    group_state st = g->cg->n ? GS_STABLE : GS_EMPTY;
    if (g->state != st) {
        g->state = st;
        g->state_ms = clk_now_ms();
    }
}

/*
 * consumerGroupFenceMember: the member goes, its partitions are free, the group epoch moves; or
 * the group becomes a classic group (the online downgrade). true: it did.
 */
static bool fence(srv *s, group *g, cmember *m, const char *why) {
    cgroup *cg = g->cg;
    if (cg_maybe_downgrade(s, g, m)) return true;
    log_info("group %s: member %s%s%s removed: %s; group epoch %d -> %d", g->id, m->id,
             m->instance_id ? " instance " : "", m->instance_id ? m->instance_id : "", why, cg->group_epoch,
             cg->group_epoch + 1);
    unlink_member(cg, m);
    free_member(m);
    cg->group_epoch++;
    sync_state(g);
    return false;
}

/* ---- the group's timer ---- */

/*
 * A lower bound, read at every heartbeat (the timer is re-armed then): heartbeats only push
 * deadlines later, so the bound stays right without a pass over the members, and the tick it
 * wakes makes it exact again. 0 (a group just made or loaded) wakes the tick at once.
 */
int64_t cg_next_deadline(const group *g) {
    const cgroup *cg = g->cg;
    return cg && cg->n ? cg->deadline_floor : INT64_MAX;
}

void cg_tick(srv *s, group *g) {
    if (!g->cg) return;
    int64_t now = clk_mono_ms();
    if (g->cg->deadline_floor > now) return; /* nothing can be due */
    bool changed = false;
    for (int i = 0; i < g->cg->n;) {
        cmember *m = g->cg->m[i];
        bool gone = false;
        if (m->session_deadline_ms && m->session_deadline_ms <= now) {
            gone = fence(s, g, m, "its session timed out without a heartbeat");
            changed = true;
        } else if (m->revoke_deadline_ms && m->revoke_deadline_ms <= now && m->classic) {
            /* a classic member's only timers: rejoin after REBALANCE_IN_PROGRESS, sync after joining */
            gone = fence(s, g, m, m->classic->awaiting_sync ? "the member failed to sync within timeout"
                                                            : "the classic member failed to join within the rebalance timeout");
            changed = true;
        } else if (m->revoke_deadline_ms && m->revoke_deadline_ms <= now) {
            /* Kafka's rebalance timeout: the member did not revoke its partitions in time */
            gone = fence(s, g, m, "it did not revoke its partitions within its rebalance timeout");
            changed = true;
        } else {
            i++;
        }
        if (gone) return; /* a classic group now, saved */
    }
    cg_deadlines_rescan(g->cg);
    if (changed) cg_store_save(s, g);
}

/* ---- ConsumerGroupHeartbeat ---- */

typedef struct hb {
    srv *s;
    req *r;
    const kp_consumer_group_heartbeat_request *q;
    kp_consumer_group_heartbeat_response *resp;
    group *g;
    cg_regex *re; /* the request's regex, compiled when validated */
} hb;

static void refuse(hb *h, int16_t code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void refuse(hb *h, int16_t code, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    h->resp->error_code = code;
    size_t n = strlen(msg);
    char *copy = req_alloc(h->r, n + 1);
    memcpy(copy, msg, n + 1);
    h->resp->error_message = (kp_str){copy, (int32_t)n};
    req_log_refusal(h->r, code, "group %.*s: %s", h->q->group_id.len > 0 ? h->q->group_id.len : 0, h->q->group_id.p,
                    msg);
}

static bool empty_str(kp_str v) { return v.len == 0; } /* null is "not given", "" is refused */

/* throwIfConsumerGroupHeartbeatRequestIsInvalid */
static bool request_valid(hb *h) {
    const kp_consumer_group_heartbeat_request *q = h->q;
    if (q->group_id.len <= 0) return refuse(h, KERR_INVALID_REQUEST, "GroupId can't be empty."), false;
    if (empty_str(q->instance_id)) return refuse(h, KERR_INVALID_REQUEST, "InstanceId can't be empty."), false;
    if (empty_str(q->rack_id)) return refuse(h, KERR_INVALID_REQUEST, "RackId can't be empty."), false;
    int32_t e = q->member_epoch;
    /* Kafka 4.0 (KIP-1082): from v1 the client makes its member id, also when it joins */
    if ((e > 0 || e == EPOCH_LEAVE || e == EPOCH_STATIC_LEAVE || h->r->hdr.api_version >= 1) && q->member_id.len <= 0)
        return refuse(h, KERR_INVALID_REQUEST, "MemberId can't be empty."), false;
    if (e == 0) {
        if (q->rebalance_timeout_ms == -1)
            return refuse(h, KERR_INVALID_REQUEST, "RebalanceTimeoutMs must be provided in first request."), false;
        if (q->topic_partitions.n != 0)
            return refuse(h, KERR_INVALID_REQUEST, "TopicPartitions must be empty when (re-)joining."), false;
        if (q->subscribed_topic_names.n < 0 && q->subscribed_topic_regex.len < 0)
            return refuse(h, KERR_INVALID_REQUEST,
                          "SubscribedTopicNames or SubscribedTopicRegex must be set in first request."),
                   false;
    } else if (e == EPOCH_STATIC_LEAVE) {
        if (q->instance_id.len < 0) return refuse(h, KERR_INVALID_REQUEST, "InstanceId can't be null."), false;
    } else if (e < EPOCH_STATIC_LEAVE) {
        return refuse(h, KERR_INVALID_REQUEST, "MemberEpoch is invalid."), false;
    }
    if (q->server_assignor.len >= 0 && !cg_assignor_known(q->server_assignor.p, (size_t)q->server_assignor.len)) {
        refuse(h, KERR_UNSUPPORTED_ASSIGNOR, "ServerAssignor %.*s is not supported. Supported assignors: uniform, range.",
               q->server_assignor.len, q->server_assignor.p);
        return false;
    }
    /*
     * Kafka 4.x's throwIfRegularExpressionIsInvalid. An empty one is no regular expression (it
     * clears a previous one): librdkafka sends "" beside a topic list.
     */
    if (q->subscribed_topic_regex.len > 0) {
        char why[200];
        h->re = cg_regex_compile(q->subscribed_topic_regex.p, (size_t)q->subscribed_topic_regex.len, why, sizeof why);
        if (h->re && cg_regex_probe(h->re, why, sizeof why) != 0) {
            cg_regex_free(h->re);
            h->re = NULL;
        }
        if (!h->re) {
            int shown = q->subscribed_topic_regex.len > 200 ? 200 : q->subscribed_topic_regex.len;
            refuse(h, KERR_INVALID_REGULAR_EXPRESSION,
                   "SubscribedTopicRegex `%.*s%s` is not a valid regular expression: %s.", shown,
                   q->subscribed_topic_regex.p, shown < q->subscribed_topic_regex.len ? "..." : "", why);
            return false;
        }
    }
    return true;
}

static bool subset(const cg_parts *owned, const cg_parts *of) {
    if (!owned) return false;
    for (int i = 0; i < owned->n; i++)
        for (int k = 0; k < owned->t[i].n; k++)
            if (!cg_parts_has(of, owned->t[i].topic, owned->t[i].p[k])) return false;
    return true;
}

/* throwIfConsumerGroupMemberEpochIsInvalid */
static bool epoch_valid(hb *h, const cmember *m, const cg_parts *owned) {
    int32_t e = h->q->member_epoch;
    if (e > m->epoch) {
        refuse(h, KERR_FENCED_MEMBER_EPOCH, "The consumer group member has a greater member epoch (%d) than the one "
               "known by the group coordinator (%d). The member must abandon all its partitions and rejoin.", e, m->epoch);
        return false;
    }
    /* the previous epoch with a subset of the assignment: the answer that bumped it was lost */
    if (e < m->epoch && (e != m->prev_epoch || !subset(owned, &m->assigned))) {
        refuse(h, KERR_FENCED_MEMBER_EPOCH, "The consumer group member has a smaller member epoch (%d) than the one "
               "known by the group coordinator (%d). The member must abandon all its partitions and rejoin.", e, m->epoch);
        return false;
    }
    return true;
}

static cmember *new_member(const char *id) {
    cmember *m = xcalloc(1, sizeof *m);
    m->id = xstrdup(id);
    m->state = CM_STABLE;
    return m;
}

static void set_str(char **dst, kp_str v) {
    if (v.len < 0) return;
    free(*dst);
    *dst = kp_str_dup(v);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static bool same_list(char **a, int na, char **b, int nb) {
    if (na != nb) return false;
    for (int i = 0; i < na; i++)
        if (strcmp(a[i], b[i]) != 0) return false;
    return true;
}

static void free_list(char **t, int n) {
    for (int i = 0; i < n; i++) free(t[i]);
    free(t);
}

/* Sorts t and drops repeats; returns the new count. */
static int sort_unique(char **t, int n) {
    if (n > 1) qsort(t, (size_t)n, sizeof *t, cmp_str); /* t is NULL when a regex matched nothing */
    int u = 0;
    for (int i = 0; i < n; i++) {
        if (u && strcmp(t[u - 1], t[i]) == 0) {
            free(t[i]);
            continue;
        }
        t[u++] = t[i];
    }
    return u;
}

/* maybeUpdateSubscribedTopicNames: whether the subscription changed. */
static bool set_names(cmember *m, const kp_arr *names) {
    if (names->n < 0) return false;
    const kp_str *v = names->v;
    char **t = xcalloc((size_t)names->n + 1, sizeof *t);
    int n = 0;
    for (int32_t i = 0; i < names->n; i++)
        if (v[i].len > 0) t[n++] = kp_str_dup(v[i]);
    int u = sort_unique(t, n);
    if (same_list(t, u, m->names, m->nnames)) {
        free_list(t, u);
        return false;
    }
    free_list(m->names, m->nnames);
    m->names = t;
    m->nnames = u;
    return true;
}

/* maybeUpdateSubscribedTopicRegex: null keeps it, "" clears it. Whether it changed. */
static bool set_regex(cmember *m, kp_str regex) {
    if (regex.len < 0) return false;
    if (regex.len == 0) {
        if (!m->regex) return false;
        free(m->regex);
        m->regex = NULL;
        return true;
    }
    if (m->regex && kp_str_eq(regex, m->regex)) return false;
    free(m->regex);
    m->regex = kp_str_dup(regex);
    return true;
}

/* ---- regular expressions (Kafka 4.x's GroupMetadataManager.refreshRegularExpressions) ---- */

static cg_resolved *find_resolved(cgroup *cg, const char *pattern) {
    for (int i = 0; i < cg->nrx; i++)
        if (strcmp(cg->rx[i].pattern, pattern) == 0) return &cg->rx[i];
    return NULL;
}

typedef struct match_ctx {
    const cg_regex *re;
    char **t;
    int n, cap;
} match_ctx;

static void match_one(void *arg, const char *name) {
    match_ctx *mc = arg;
    if (cg_regex_match(mc->re, name, strlen(name)) != 1) return;
    XGROW(mc->t, mc->cap, mc->n + 1, 8);
    mc->t[mc->n++] = xstrdup(name);
}

/* The regex's topics again, when a topic was created or deleted since; whether they changed (or are new). */
static bool resolve(const group *g, cg_resolved *x, const cg_topics *topics) {
    /* a JoinGroup's resolver lists no topics: the next heartbeat resolves */
    if (x->generation == topics->generation || !topics->each) return false;
    bool first = x->generation == 0; /* its members' subscriptions are checked against it once */
    x->generation = topics->generation;
    match_ctx mc = {x->re, NULL, 0, 0};
    if (x->re && topics->each) topics->each(topics->ctx, match_one, &mc);
    int u = sort_unique(mc.t, mc.n);
    if (same_list(mc.t, u, x->topics, x->ntopics)) {
        free_list(mc.t, u);
        return first;
    }
    log_info("group %s: regular expression `%s` now matches %d topics (it matched %d)", g->id, x->pattern, u,
             x->ntopics);
    free_list(x->topics, x->ntopics);
    x->topics = mc.t;
    x->ntopics = u;
    return true;
}

/* The member's subscription: its names and its regex's topics. Whether it changed. */
static bool set_subscription(cgroup *cg, cmember *m) {
    const cg_resolved *x = m->regex ? find_resolved(cg, m->regex) : NULL;
    int n = m->nnames + (x ? x->ntopics : 0);
    char **t = xcalloc((size_t)n + 1, sizeof *t);
    for (int i = 0; i < m->nnames; i++) t[i] = xstrdup(m->names[i]);
    for (int i = 0; x && i < x->ntopics; i++) t[m->nnames + i] = xstrdup(x->topics[i]);
    int u = sort_unique(t, n);
    if (same_list(t, u, m->topics, m->ntopics)) {
        free_list(t, u);
        return false;
    }
    free_list(m->topics, m->ntopics);
    m->topics = t;
    m->ntopics = u;
    cg_subscriptions_changed(cg);
    return true;
}

/*
 * Every regex of the members compiled once for the group (fresh: the request's, already
 * compiled), the ones nobody uses dropped. A pass over the members, so only after a member
 * joined, left or changed its regex (rx_valid false), not at every heartbeat.
 */
static void compile_regexes(group *g, cg_regex **fresh) {
    cgroup *cg = g->cg;
    int keep = 0;
    for (int i = 0; i < cg->nrx; i++) {
        bool used = false;
        for (int k = 0; k < cg->n && !used; k++) used = cg->m[k]->regex && strcmp(cg->m[k]->regex, cg->rx[i].pattern) == 0;
        if (used) cg->rx[keep++] = cg->rx[i];
        else free_resolved(&cg->rx[i]);
    }
    cg->nrx = keep;
    for (int k = 0; k < cg->n; k++) {
        const char *p = cg->m[k]->regex;
        if (!p || find_resolved(cg, p)) continue;
        cg_regex *re = NULL;
        if (*fresh) {
            re = *fresh; /* the request's own, the only new one a heartbeat brings */
            *fresh = NULL;
        } else {
            char why[200];
            re = cg_regex_compile(p, strlen(p), why, sizeof why); /* loaded from storage */
            if (!re) log_warn("group %s: regular expression `%s` of member %s no longer compiles: %s", g->id, p,
                              cg->m[k]->id, why);
        }
        cg->rx = xrealloc(cg->rx, sizeof *cg->rx * (size_t)(cg->nrx + 1));
        cg->rx[cg->nrx++] = (cg_resolved){xstrdup(p), re, NULL, 0, 0};
    }
    cg->rx_valid = true;
}

/*
 * The regexes compiled (above), resolved again after topics were created or deleted; then the
 * subscription of self and of the members whose regex now matches other topics (only those: a
 * heartbeat costs no more in a large group). Whether any changed (the group epoch moves).
 */
static bool refresh_regexes(group *g, const cg_topics *topics, cg_regex **fresh, cmember *self) {
    cgroup *cg = g->cg;
    if (!cg->rx_valid) compile_regexes(g, fresh);
    bool moved = false;
    for (int i = 0; i < cg->nrx; i++) moved |= resolve(g, &cg->rx[i], topics);
    bool changed = set_subscription(cg, self);
    for (int k = 0; moved && k < cg->n; k++)
        if (cg->m[k] != self && cg->m[k]->regex) changed |= set_subscription(cg, cg->m[k]);
    return changed;
}

/*
 * computeSubscriptionMetadata: each subscribed topic that exists, with its partition count,
 * sorted by name so that equal subscriptions compare equal. Read at every heartbeat (a topic
 * created, grown or deleted moves the group epoch), one topic lookup per distinct subscribed
 * topic: the union of the subscriptions is kept by the group, not gathered from every member.
 */
static bool refresh_meta(cgroup *cg, const cg_topics *topics) {
    int nsubs;
    char *const *subs = cg_subscribed_topics(cg, &nsubs);
    uint8_t uuid[16];
    int j = 0;
    bool same = true;
    for (int i = 0; i < nsubs && same; i++) {
        int32_t np = topics->partitions(topics->ctx, subs[i], uuid);
        if (np < 0) continue;
        same = j < cg->nmeta && strcmp(cg->meta[j].topic, subs[i]) == 0 && cg->meta[j].nparts == np;
        j++;
    }
    if (same && j == cg->nmeta) return false;
    cg_topic_meta *meta = xcalloc((size_t)nsubs + 1, sizeof *meta);
    int n = 0;
    for (int i = 0; i < nsubs; i++) {
        int32_t np = topics->partitions(topics->ctx, subs[i], uuid);
        if (np >= 0) meta[n++] = (cg_topic_meta){xstrdup(subs[i]), np};
    }
    for (int i = 0; i < cg->nmeta; i++) free(cg->meta[i].topic);
    free(cg->meta);
    cg->meta = meta;
    cg->nmeta = n;
    return true;
}

/* The assignor: the one most members ask for (Kafka's computePreferredServerAssignor), else uniform. */
static const char *preferred_assignor(const cgroup *cg) {
    int uniform = 0, range = 0;
    for (int i = 0; i < cg->n; i++) {
        const char *a = cg->m[i]->server_assignor;
        if (a && strcmp(a, "range") == 0) range++;
        else if (a && strcmp(a, "uniform") == 0) uniform++;
    }
    return range > uniform ? "range" : "uniform";
}

typedef struct owner_ctx {
    const cgroup *cg;
    const cmember *self;
} owner_ctx;

/* ConsumerGroup.currentPartitionEpoch: the epoch of whoever holds the partition, -1 when free. */
static int32_t owner_epoch(void *ctx, const char *topic, int32_t p) {
    const owner_ctx *o = ctx;
    for (int i = 0; i < o->cg->n; i++) {
        const cmember *m = o->cg->m[i];
        if (cg_parts_has(&m->assigned, topic, p) || cg_parts_has(&m->revoking, topic, p)) return m->epoch;
    }
    return -1;
}

static int32_t session_ms(srv *s, const group *g) {
    return grp_consumer_settings_of(s, g->id, strlen(g->id)).session_timeout_ms;
}

/* consumerGroupLeave: epoch -1 leaves for good, -2 (static) for now, keeping the assignment. */
static void leave(hb *h) {
    const kp_consumer_group_heartbeat_request *q = h->q;
    group *g = h->g;
    cgroup *cg = g->cg;
    h->resp->member_id = q->member_id;
    h->resp->member_epoch = q->member_epoch;
    cmember *m;
    if (q->instance_id.len < 0) {
        m = find_member(cg, q->member_id);
        if (!m) {
            refuse(h, KERR_UNKNOWN_MEMBER_ID, "Member %.*s is not a member of group %s.", q->member_id.len,
                   q->member_id.p, g->id);
            return;
        }
    } else {
        m = find_static(cg, q->instance_id);
        if (!m) {
            refuse(h, KERR_UNKNOWN_MEMBER_ID, "Instance id %.*s is unknown.", q->instance_id.len, q->instance_id.p);
            return;
        }
        if (!kp_str_eq(q->member_id, m->id)) {
            refuse(h, KERR_FENCED_INSTANCE_ID, "Static member %.*s with instance id %.*s was fenced by member %s.",
                   q->member_id.len, q->member_id.p, q->instance_id.len, q->instance_id.p, m->id);
            return;
        }
        if (q->member_epoch == EPOCH_STATIC_LEAVE) {
            log_info("group %s: static member %s with instance id %s temporarily left the consumer group", g->id,
                     m->id, m->instance_id);
            m->epoch = EPOCH_STATIC_LEAVE;
            cg_parts_free(&m->revoking);
            m->revoke_deadline_ms = 0;
            /* its session keeps running: back within it, its replacement takes over the assignment */
            cg_store_save(h->s, g);
            return;
        }
    }
    if (!fence(h->s, g, m, "it left the consumer group")) cg_store_save(h->s, g);
}

/* getOrMaybeCreateConsumerGroup */
static bool find_group(hb *h) {
    const kp_consumer_group_heartbeat_request *q = h->q;
    group *g = grp_find(h->s, q->group_id.p, (size_t)q->group_id.len);
    bool create = q->member_epoch == 0;
    if (g && g->cg) {
        h->g = g;
        return true;
    }
    if (g && (g->nmembers > 0 || g->state != GS_EMPTY || g->pending)) {
        /* a classic group with members: the online upgrade (Kafka's validateOnlineUpgrade), on a join only */
        if (!create || !cg_upgrade(h->s, g)) {
            refuse(h, KERR_GROUP_ID_NOT_FOUND, "Group %s is not a consumer group.", g->id);
            return false;
        }
        h->g = g;
        return true;
    }
    if (!create) {
        refuse(h, KERR_GROUP_ID_NOT_FOUND, "Consumer group %.*s not found.", q->group_id.len, q->group_id.p);
        return false;
    }
    if (!g) {
        if (!grp_room(h->s, h->r, NULL, q->group_id)) {
            h->resp->error_code = KERR_GROUP_MAX_SIZE_REACHED;
            return false;
        }
        g = grp_get_or_create(h->s, q->group_id.p, (size_t)q->group_id.len);
    } else {
        /* an empty classic group (offsets only) becomes a consumer group and keeps its offsets */
        log_info("group %s: the empty classic group becomes a consumer group", g->id);
        grp_store_forget_classic(h->s, g);
        free(g->protocol_type);
        free(g->protocol_name);
        free(g->leader);
        g->protocol_type = g->protocol_name = g->leader = NULL;
        g->generation = 0;
    }
    g->cg = xcalloc(1, sizeof *g->cg);
    h->g = g;
    return true;
}

/* getOrMaybeSubscribeStaticConsumerGroupMember / ...DynamicConsumerGroupMember */
static cmember *find_or_join(hb *h, const cg_parts *owned, const char *member_id, bool *is_new) {
    const kp_consumer_group_heartbeat_request *q = h->q;
    cgroup *cg = h->g->cg;
    kp_str id = kp_str_c(member_id);
    *is_new = false;
    if (q->instance_id.len < 0) {
        cmember *m = find_member(cg, id);
        if (!m && q->member_epoch != 0) {
            refuse(h, KERR_UNKNOWN_MEMBER_ID, "Member %s is not a member of group %s.", member_id, h->g->id);
            return NULL;
        }
        if (!m) {
            log_info("group %s: member %s joins the consumer group using the consumer protocol", h->g->id, member_id);
            *is_new = true;
            return new_member(member_id);
        }
        return epoch_valid(h, m, owned) ? m : NULL;
    }
    cmember *old = find_static(cg, q->instance_id);
    if (q->member_epoch == 0) {
        if (!old) {
            log_info("group %s: static member %s with instance id %.*s joins the consumer group", h->g->id, member_id,
                     q->instance_id.len, q->instance_id.p);
            *is_new = true;
            return new_member(member_id);
        }
        /* a classic member's instance is taken over without its leaving first (Kafka 4.x) */
        if (old->epoch != EPOCH_STATIC_LEAVE && !old->classic) {
            refuse(h, KERR_UNRELEASED_INSTANCE_ID, "Static member %s with instance id %.*s cannot join the group "
                   "because the instance id is owned by %s member.", member_id, q->instance_id.len, q->instance_id.p,
                   old->id);
            return NULL;
        }
        /* the replacement takes over the previous instance's assignment, at epoch 0 */
        log_info("group %s: static member with instance id %s re-joins the consumer group; member %s replaces %s",
                 h->g->id, old->instance_id, member_id, old->id);
        cg_member_set_id(cg, old, member_id);
        old->epoch = old->prev_epoch = 0;
        cg_classic_free(old->classic); /* from now on on the consumer protocol */
        old->classic = NULL;
        old->revoke_deadline_ms = 0;
        return old;
    }
    if (!old) {
        refuse(h, KERR_UNKNOWN_MEMBER_ID, "Instance id %.*s is unknown.", q->instance_id.len, q->instance_id.p);
        return NULL;
    }
    if (strcmp(old->id, member_id) != 0) {
        refuse(h, KERR_FENCED_INSTANCE_ID, "Static member %s with instance id %.*s was fenced by member %s.", member_id,
               q->instance_id.len, q->instance_id.p, old->id);
        return NULL;
    }
    return epoch_valid(h, old, owned) ? old : NULL;
}

static void heartbeat(hb *h, const cg_parts *owned, const cg_topics *topics, const cg_parts **assignment_out) {
    srv *s = h->s;
    req *r = h->r;
    const kp_consumer_group_heartbeat_request *q = h->q;
    kp_consumer_group_heartbeat_response *resp = h->resp;
    *assignment_out = NULL;
    resp->member_epoch = q->member_epoch;
    if (!request_valid(h)) return;
    if ((resp->error_code = grp_check_coordinator(s, r, q->group_id))) return;
    if (q->member_epoch == EPOCH_LEAVE || q->member_epoch == EPOCH_STATIC_LEAVE) {
        group *g = grp_find(s, q->group_id.p, (size_t)q->group_id.len);
        if (!g || !g->cg) {
            refuse(h, KERR_GROUP_ID_NOT_FOUND, "Consumer group %.*s not found.", q->group_id.len, q->group_id.p);
            return;
        }
        h->g = g;
        leave(h);
        grp_rearm(g);
        return;
    }
    if (!find_group(h)) return;
    group *g = h->g;
    cgroup *cg = g->cg;
    int64_t max = s->cfg->group_consumer_max_size;
    if (cg->n >= max && (q->member_id.len <= 0 || !find_member(cg, q->member_id))) {
        refuse(h, KERR_GROUP_MAX_SIZE_REACHED, "The consumer group has reached its maximum capacity of %lld members.",
               (long long)max);
        return;
    }
    char idbuf[64];
    const char *member_id = idbuf;
    if (q->member_id.len > 0) {
        member_id = req_alloc(r, (size_t)q->member_id.len + 1);
        memcpy((char *)member_id, q->member_id.p, (size_t)q->member_id.len);
        ((char *)member_id)[q->member_id.len] = 0;
    } else {
        ids_uuid4_str(idbuf);
    }
    bool is_new;
    cmember *m = find_or_join(h, owned, member_id, &is_new);
    if (!m) {
        if (!cg->n && !g->noffsets) sync_state(g); /* a group made for a refused join stays Empty */
        return;
    }
    cg_parts before = {0};
    cg_parts_copy(&before, &m->assigned);
    int32_t epoch_before = m->epoch;
    cm_state state_before = m->state;
    if (is_new) add_member(cg, m);
    /* the member's fields (ConsumerGroupMember.Builder.maybeUpdate...) */
    if (q->instance_id.len >= 0) cg_member_set_instance(cg, m, q->instance_id.p, (size_t)q->instance_id.len);
    set_str(&m->rack_id, q->rack_id);
    if (q->rebalance_timeout_ms != -1) m->rebalance_timeout_ms = q->rebalance_timeout_ms;
    set_str(&m->server_assignor, q->server_assignor);
    free(m->client_id);
    m->client_id = kp_str_dup(r->hdr.client_id.len >= 0 ? r->hdr.client_id : kp_str_c(""));
    if (!m->client_host) {
        char host[80];
        snprintf(host, sizeof host, "/%s", r->c->peer); /* as the classic members' client_host */
        m->client_host = xstrdup(host);
    }
    set_names(m, &q->subscribed_topic_names.a);
    if (set_regex(m, q->subscribed_topic_regex)) cg->rx_valid = false;
    bool dirty = cg_settle(s, g, m, topics, &h->re, is_new);
    if (m->epoch != cg->assignment_epoch || m->state != CM_STABLE) {
        if (cg_member_reconcile(g, m, owned)) {
            dirty = true;
            m->revoke_deadline_ms =
                m->state == CM_UNREVOKED_PARTITIONS ? clk_mono_ms() + (m->rebalance_timeout_ms > 0 ? m->rebalance_timeout_ms : 0) : 0;
            char *a = cg_parts_format(&m->assigned), *v = cg_parts_format(&m->revoking);
            log_debug("group %s: member %s epoch %d (previous %d), %s, assigned [%s], revoking [%s]", g->id, m->id,
                      m->epoch, m->prev_epoch,
                      m->state == CM_STABLE ? "stable" : m->state == CM_UNREVOKED_PARTITIONS ? "unrevoked partitions"
                                                                                           : "unreleased partitions",
                      a, v);
            free(a);
            free(v);
        }
    }
    m->session_deadline_ms = clk_mono_ms() + session_ms(s, g);
    cg_deadline_note(cg, m->session_deadline_ms);
    cg_deadline_note(cg, m->revoke_deadline_ms);
    sync_state(g);
    grp_rearm(g);
    resp->member_id = kp_str_c(m->id);
    resp->member_epoch = m->epoch;
    resp->heartbeat_interval_ms = grp_consumer_settings_of(s, g->id, strlen(g->id)).heartbeat_interval_ms;
    bool full = q->member_epoch == 0 || (q->rebalance_timeout_ms != -1 &&
                                         (q->subscribed_topic_names.n >= 0 || q->subscribed_topic_regex.len >= 0) &&
                                         q->topic_partitions.n >= 0);
    if (full || !cg_parts_eq(&before, &m->assigned)) *assignment_out = &m->assigned;
    if (dirty || epoch_before != m->epoch || state_before != m->state) cg_store_save(s, g);
    cg_parts_free(&before);
}

void cg_heartbeat(srv *s, req *r, const kp_consumer_group_heartbeat_request *q, const cg_parts *owned,
                  const cg_topics *topics, kp_consumer_group_heartbeat_response *resp, const cg_parts **assignment_out) {
    hb h = {s, r, q, resp, NULL, NULL};
    heartbeat(&h, owned, topics, assignment_out);
    cg_regex_free(h.re); /* unless the group took it */
}

/* ---- what consumer_classic.c shares (consumer_int.h) ---- */

cmember *cg_member_by_id(const cgroup *cg, kp_str id) { return find_member(cg, id); }
cmember *cg_member_by_instance(const cgroup *cg, kp_str instance) { return find_static(cg, instance); }
cmember *cg_member_new(const char *id) { return new_member(id); }
void cg_member_free(cmember *m) { free_member(m); }
void cg_member_append(cgroup *cg, cmember *m) { add_member(cg, m); }
void cg_sync_state(group *g) { sync_state(g); }
bool cg_fence(srv *s, group *g, cmember *m, const char *why) { return fence(s, g, m, why); }

bool cg_member_set_names(cmember *m, const kp_str *v, int n) {
    kp_arr a = {n, (void *)v};
    return set_names(m, &a);
}

int32_t cg_partition_epoch(const cgroup *cg, const char *topic, int32_t p) {
    owner_ctx oc = {cg, NULL};
    return owner_epoch(&oc, topic, p);
}

bool cg_member_reconcile(group *g, cmember *m, const cg_parts *owned) {
    owner_ctx oc = {g->cg, m};
    return cg_reconcile(m, g->cg->assignment_epoch, owned, owner_epoch, &oc);
}

bool cg_settle(srv *s, group *g, cmember *m, const cg_topics *topics, cg_regex **fresh, bool is_new) {
    (void)s;
    cgroup *cg = g->cg;
    bool bump = refresh_regexes(g, topics, fresh, m);
    /* the subscribed topics' partitions, read at every heartbeat: created, grown or deleted topics bump too */
    bump |= refresh_meta(cg, topics);
    bool dirty = is_new || bump;
    if (bump) {
        cg->group_epoch++;
        log_info("group %s: bumped group epoch to %d", g->id, cg->group_epoch);
    }
    if (cg->group_epoch > cg->assignment_epoch) {
        const char *a = preferred_assignor(cg);
        cg_assign(a, cg->m, cg->n, cg->meta, cg->nmeta);
        cg->assignment_epoch = cg->group_epoch;
        free(cg->assignor);
        cg->assignor = xstrdup(a);
        log_info("group %s: target assignment computed at epoch %d by the %s assignor for %d members", g->id,
                 cg->assignment_epoch, a, cg->n);
        dirty = true;
    }
    return dirty;
}

/* ---- offsets ---- */

static cmember *offset_member(srv *s, req *r, group *g, kp_str member_id, int16_t *err) {
    (void)s;
    cmember *m = find_member(g->cg, member_id);
    if (!m) {
        *err = KERR_UNKNOWN_MEMBER_ID;
        req_log_refusal(r, *err, "group %s: member '%.*s' is not a member of the consumer group", g->id,
                        member_id.len > 0 ? member_id.len : 0, member_id.p);
    }
    return m;
}

int16_t cg_commit_check(srv *s, req *r, group *g, int32_t member_epoch, kp_str member_id) {
    /* the admin client or a consumer without group management: only while nobody is in the group */
    if (member_epoch < 0 && g->cg->n == 0) return 0;
    int16_t err = 0;
    cmember *m = offset_member(s, r, g, member_id, &err);
    if (!m) return err;
    if (m->classic) {
        /* a classic member's generation is its member epoch (ConsumerGroup.validateMemberEpoch) */
        if (member_epoch != m->epoch) {
            req_log_refusal(r, KERR_ILLEGAL_GENERATION, "group %s: classic member %s commits at generation %d, its "
                            "epoch is %d", g->id, m->id, member_epoch, m->epoch);
            return KERR_ILLEGAL_GENERATION;
        }
        return 0;
    }
    if (r->hdr.api_key == KP_API_OFFSET_COMMIT && r->hdr.api_version < 9) {
        req_log_refusal(r, KERR_UNSUPPORTED_VERSION, "group %s: OffsetCommit version 9 or above must be used by "
                        "members using the consumer group protocol", g->id);
        return KERR_UNSUPPORTED_VERSION;
    }
    if (member_epoch != m->epoch) {
        req_log_refusal(r, KERR_STALE_MEMBER_EPOCH, "group %s: member %s commits at epoch %d, its epoch is %d", g->id,
                        m->id, member_epoch, m->epoch);
        return KERR_STALE_MEMBER_EPOCH;
    }
    return 0;
}

int16_t cg_fetch_check(srv *s, req *r, group *g, int32_t member_epoch, kp_str member_id) {
    if (member_epoch < 0 && member_id.len < 0) return 0; /* the admin client */
    int16_t err = 0;
    cmember *m = offset_member(s, r, g, member_id, &err);
    if (!m) return err;
    if (member_epoch != m->epoch && m->classic) {
        req_log_refusal(r, KERR_ILLEGAL_GENERATION, "group %s: classic member %s fetches offsets at generation %d, "
                        "its epoch is %d", g->id, m->id, member_epoch, m->epoch);
        return KERR_ILLEGAL_GENERATION;
    }
    if (member_epoch != m->epoch) {
        req_log_refusal(r, KERR_STALE_MEMBER_EPOCH, "group %s: member %s fetches offsets at epoch %d, its epoch is %d",
                        g->id, m->id, member_epoch, m->epoch);
        return KERR_STALE_MEMBER_EPOCH;
    }
    return 0;
}
