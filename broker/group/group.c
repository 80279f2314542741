/* The group state machine: membership, join and sync phases, timers. */
#include "group.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "hash.h"
#include "consumer.h"
#include "consumer_int.h"
#include "group_store.h"
#include "ids.h"
#include "kp_consumer.h"
#include "kp_mem.h"
#include "log.h"
#include "net/net.h"

/* Kafka's hard-coded timeout for a brand-new member whose first JoinGroup is parked. */
#define NEW_MEMBER_JOIN_TIMEOUT_MS 300000

static const char *const state_names[] = {"Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead"};

const char *grp_state_name(group_state st) { return state_names[st]; }

const char *grp_state_label(const group *g) { return g->cg ? cg_state_name(g) : grp_state_name(g->state); }

const char *grp_type(const group *g) { return g->cg ? "consumer" : "classic"; }

int grp_member_count(const group *g) { return g->cg ? g->cg->n : g->nmembers; }

/*
 * A classic request (JoinGroup, SyncGroup, Heartbeat, LeaveGroup) naming a consumer group while
 * the consumer protocol is not served (a group stored when it was): Kafka 3.7's answer
 * (getOrMaybeCreateClassicGroup). Where it is served, Kafka 4.x's online migration takes the
 * classic member into the consumer group (consumer_classic.c).
 */
static bool not_consumer(const req *r, const group *g) {
    if (!g || !g->cg || cg_enabled(g->srv)) return true;
    req_log_refusal(r, KERR_GROUP_ID_NOT_FOUND, "Group %s is not a classic group (a consumer group, and "
                    "group.coordinator.rebalance.protocols does not name consumer)", g->id);
    return false;
}

/*
 * For each state, the states a group may enter it from, as Kafka declares them (GroupMetadata's
 * validPreviousStates in 3.x, ClassicGroupState in 4.x). Dead is never entered here (a deleted
 * group is freed at once), but its row is Kafka's, so the table stays the whole machine.
 */
#define FROM(st) (1u << (st))
static const unsigned valid_previous[] = {
    [GS_EMPTY] = FROM(GS_PREPARING),
    [GS_PREPARING] = FROM(GS_STABLE) | FROM(GS_COMPLETING) | FROM(GS_EMPTY),
    [GS_COMPLETING] = FROM(GS_PREPARING),
    [GS_STABLE] = FROM(GS_COMPLETING),
    [GS_DEAD] = FROM(GS_STABLE) | FROM(GS_PREPARING) | FROM(GS_COMPLETING) | FROM(GS_EMPTY) | FROM(GS_DEAD),
};
#undef FROM

bool grp_transition_valid(group_state from, group_state to) {
    if ((unsigned)from > GS_DEAD || (unsigned)to > GS_DEAD) return false;
    return (valid_previous[to] >> from) & 1u;
}

static char *dup_str(kp_str s) { return kp_str_dup(s); }

int grp_coordinator_for(const srv *s, const char *id, size_t len) {
    uint32_t h = hash_fnv32(id, len); /* stable across restarts, so a group keeps its coordinator */
    int home = (int)(h % (uint32_t)s->nnodes);
    /* a broker taken down (admin API) hands its groups to the next one up, as a coordinator failover */
    for (int k = 0; k < s->nnodes; k++)
        if (!s->nodes[(home + k) % s->nnodes].down) return (home + k) % s->nnodes;
    return home;
}

group *grp_find(srv *s, const char *id, size_t len) { return NAME_OWNER(name_index_find(&s->groups_by_id, id, len), group, by_id); }

static void on_group_timer(uv_timer_t *t);

/* A group that holds something; an empty one without committed offsets is what Kafka drops as Dead. */
static bool group_counts(const group *g) { return g->nmembers > 0 || g->noffsets > 0 || g->state != GS_EMPTY; }

/*
 * max.consumer.groups (MSK Serverless: 500). Whether g (NULL: a group not yet known) may come to
 * hold something. MSK's answer past the limit is not public; GROUP_MAX_SIZE_REACHED is the
 * error Kafka has for a group the coordinator will not grow, and clients surface it rather than
 * retry (Java: GroupMaxSizeReachedException).
 */
bool grp_room(srv *s, req *r, const group *g, kp_str id) {
    int64_t cap = s->cfg->max_consumer_groups, n = 0;
    if (cap <= 0 || (g && group_counts(g))) return true;
    for (const group *x = s->groups; x; x = x->next) n += group_counts(x);
    if (n < cap) return true;
    req_log_refusal(r, KERR_GROUP_MAX_SIZE_REACHED, "group %.*s: the cluster already holds %lld consumer groups, its "
                    "limit (max.consumer.groups=%lld)", id.len > 0 ? id.len : 0, id.p, (long long)n, (long long)cap);
    return false;
}

group *grp_get_or_create(srv *s, const char *id, size_t len) {
    group *g = grp_find(s, id, len);
    if (g) return g;
    g = xcalloc(1, sizeof *g);
    g->id = xmalloc(len + 1);
    memcpy(g->id, id, len);
    g->id[len] = 0;
    g->state = GS_EMPTY;
    g->state_ms = clk_now_ms();
    g->node = grp_coordinator_for(s, id, len);
    g->srv = s;
    g->timer = xmalloc(sizeof *g->timer);
    uv_timer_init(s->loop, g->timer);
    g->timer->data = g;
    g->next = s->groups;
    s->groups = g;
    name_index_put(&s->groups_by_id, &g->by_id, g->id);
    return g;
}

static void free_member(member *m) {
    for (int i = 0; i < m->nprotocols; i++) {
        free(m->protocols[i].name);
        free(m->protocols[i].meta);
    }
    free(m->protocols);
    free(m->assignment);
    free(m->id);
    free(m->instance_id);
    free(m->client_id);
    free(m->client_host);
    free(m);
}

static void free_timer(uv_handle_t *h) { free(h); }

static void free_group(group *g) {
    while (g->members) {
        member *m = g->members;
        g->members = m->next;
        free_member(m);
    }
    while (g->pending) {
        pending_member *p = g->pending;
        g->pending = p->next;
        free(p->id);
        free(p);
    }
    for (int i = 0; i < g->noffsets; i++) {
        free(g->offsets[i].topic);
        free(g->offsets[i].metadata);
    }
    free(g->offsets);
    uv_close((uv_handle_t *)g->timer, free_timer);
    free(g->id);
    free(g->protocol_type);
    free(g->protocol_name);
    free(g->leader);
    cg_free(g->cg);
    free(g);
}

static member *find_member(group *g, const char *id, size_t len) {
    for (member *m = g->members; m; m = m->next)
        if (strlen(m->id) == len && memcmp(m->id, id, len) == 0) return m;
    return NULL;
}

static member *find_static(group *g, kp_str instance) {
    if (instance.len < 0) return NULL;
    for (member *m = g->members; m; m = m->next)
        if (m->instance_id && kp_str_eq(instance, m->instance_id)) return m;
    return NULL;
}

static pending_member **find_pending(group *g, kp_str id) {
    for (pending_member **pp = &g->pending; *pp; pp = &(*pp)->next)
        if (kp_str_eq(id, (*pp)->id)) return pp;
    return NULL;
}

/* Every transition of a running group goes through here (loading sets the stored state as it was). */
static void set_state(group *g, group_state st) {
    assert(grp_transition_valid(g->state, st));
    if (g->state == st) return;
    g->state = st;
    g->state_ms = clk_now_ms();
}

/* ---- timers: one per group, armed at the earliest deadline ---- */

/*
 * When a member's session runs out. A member whose JoinGroup or SyncGroup is parked is waiting
 * on the coordinator, not silent: Kafka counts that as a satisfied heartbeat
 * (MemberMetadata.hasSatisfiedHeartbeat) and schedules the next expiry when the request is
 * answered, as touch() does here. Only a brand-new member's first JoinGroup runs against its
 * deadline while parked (the new-member join timeout). Both the timer and the tick read this,
 * so a deadline the tick will not act on is never the one the timer waits for.
 */
static int64_t member_expiry(const member *m) {
    if ((m->join || m->sync) && !m->is_new) return INT64_MAX;
    return m->deadline_ms;
}

int64_t grp_next_deadline(const group *g) {
    int64_t next = INT64_MAX;
    if (g->state == GS_PREPARING) {
        if (g->delay_deadline_ms) next = g->delay_deadline_ms;
        else if (g->join_deadline_ms) next = g->join_deadline_ms;
    }
    if ((g->state == GS_COMPLETING || g->state == GS_STABLE) && g->sync_deadline_ms && g->sync_deadline_ms < next)
        next = g->sync_deadline_ms;
    for (const member *m = g->members; m; m = m->next)
        if (member_expiry(m) < next) next = member_expiry(m);
    for (const pending_member *p = g->pending; p; p = p->next)
        if (p->deadline_ms < next) next = p->deadline_ms;
    if (g->cg && cg_next_deadline(g) < next) next = cg_next_deadline(g);
    return next;
}

static void arm(group *g) {
    int64_t next = grp_next_deadline(g);
    if (next == INT64_MAX) {
        uv_timer_stop(g->timer);
        return;
    }
    clk_timer_start(g->timer, on_group_timer, next - clk_mono_ms());
}

static void touch(member *m) {
    int64_t t = m->is_new ? NEW_MEMBER_JOIN_TIMEOUT_MS : m->session_timeout_ms;
    m->deadline_ms = clk_mono_ms() + t;
}

static int32_t max_rebalance_timeout(const group *g) {
    int32_t t = 0;
    for (const member *m = g->members; m; m = m->next)
        if (m->rebalance_timeout_ms > t) t = m->rebalance_timeout_ms;
    return t;
}

/* ---- answering parked requests ---- */

static const member_protocol *protocol_of(const member *m, const char *name) {
    for (int i = 0; name && i < m->nprotocols; i++)
        if (strcmp(m->protocols[i].name, name) == 0) return &m->protocols[i];
    return NULL;
}

static kp_join_group_response *join_response(srv *s, req *r, group *g, member *m, int16_t err) {
    (void)s;
    kp_join_group_response *resp = req_resp(r);
    resp->error_code = err;
    resp->generation_id = err ? -1 : g->generation;
    resp->protocol_type = err || !g->protocol_type ? KP_STR_NULL : req_strf(r, "%s", g->protocol_type);
    resp->protocol_name = err || !g->protocol_name ? KP_STR_NULL : req_strf(r, "%s", g->protocol_name);
    resp->leader = req_strf(r, "%s", !err && g->leader ? g->leader : "");
    resp->member_id = req_strf(r, "%s", m ? m->id : "");
    resp->members.n = 0;
    if (!err && m && g->leader && strcmp(g->leader, m->id) == 0) {
        REQ_ARR(r, resp->members, g->nmembers);
        int i = 0;
        for (member *x = g->members; x; x = x->next) {
            const member_protocol *p = protocol_of(x, g->protocol_name);
            kp_join_group_response_member *e = &resp->members.v[i++];
            e->member_id = req_strf(r, "%s", x->id);
            e->group_instance_id = x->instance_id ? req_strf(r, "%s", x->instance_id) : KP_STR_NULL;
            if (p) {
                void *copy = req_alloc(r, p->len ? p->len : 1);
                memcpy(copy, p->meta, p->len);
                e->metadata = (kp_bytes){copy, (int32_t)p->len};
            } else {
                e->metadata = (kp_bytes){"", 0};
            }
        }
    }
    return resp;
}

static void answer_join(srv *s, group *g, member *m, int16_t err) {
    req *r = m->join;
    if (!r) return;
    m->join = NULL;
    m->is_new = false;
    kp_join_group_response *resp = join_response(s, r, g, m, err);
    if (err) resp->member_id = kp_str_c("");
    req_unpark_respond(s, r, resp);
    touch(m);
}

static void answer_sync(srv *s, group *g, member *m, int16_t err) {
    req *r = m->sync;
    if (!r) return;
    m->sync = NULL;
    kp_sync_group_response *resp = req_resp(r);
    resp->error_code = err;
    resp->protocol_type = g->protocol_type ? req_strf(r, "%s", g->protocol_type) : KP_STR_NULL;
    resp->protocol_name = g->protocol_name ? req_strf(r, "%s", g->protocol_name) : KP_STR_NULL;
    resp->assignment = (kp_bytes){"", 0};
    if (!err && m->assignment_len) {
        void *copy = req_alloc(r, m->assignment_len);
        memcpy(copy, m->assignment, m->assignment_len);
        resp->assignment = (kp_bytes){copy, (int32_t)m->assignment_len};
    }
    req_unpark_respond(s, r, resp);
    touch(m);
}

static void cancel_join(srv *s, req *r) {
    (void)s;
    member *m = r->park;
    if (m && m->join == r) m->join = NULL;
}

static void cancel_sync(srv *s, req *r) {
    (void)s;
    member *m = r->park;
    if (m && m->sync == r) m->sync = NULL;
}

void grp_rearm(group *g) { arm(g); }

/* ---- rebalance ---- */

static void complete_join(srv *s, group *g);

static void prepare_rebalance(srv *s, group *g, const char *reason) {
    if (g->state == GS_COMPLETING) {
        /* the assignment being synced is void: everyone rejoins */
        for (member *m = g->members; m; m = m->next) {
            answer_sync(s, g, m, KERR_REBALANCE_IN_PROGRESS);
            free(m->assignment);
            m->assignment = NULL;
            m->assignment_len = 0;
        }
    }
    bool from_empty = g->state == GS_EMPTY;
    int64_t now = clk_mono_ms();
    int32_t rto = max_rebalance_timeout(g);
    g->delay_deadline_ms = 0;
    if (from_empty && s->cfg->group_initial_rebalance_delay_ms > 0) {
        int64_t delay = s->cfg->group_initial_rebalance_delay_ms;
        if (delay > rto) delay = rto;
        g->delay_deadline_ms = now + delay;
        g->delay_remaining_ms = rto - delay > 0 ? rto - delay : 0;
        g->joined_during_delay = false;
    }
    g->join_deadline_ms = now + rto;
    for (member *m = g->members; m; m = m->next) m->joined = m->join != NULL;
    set_state(g, GS_PREPARING);
    s->metrics.rebalances++;
    log_info("group %s: preparing rebalance (generation %d, %d members): %s", g->id, g->generation, g->nmembers,
             reason);
}

static bool all_joined(const group *g) {
    if (g->pending) return false;
    for (const member *m = g->members; m; m = m->next)
        if (!m->joined) return false;
    return true;
}

static void try_complete_join(srv *s, group *g) {
    if (g->state != GS_PREPARING || g->delay_deadline_ms) return;
    if (all_joined(g)) complete_join(s, g);
}

static void unlink_member(group *g, member *m) {
    for (member **pp = &g->members; *pp; pp = &(*pp)->next)
        if (*pp == m) {
            *pp = m->next;
            break;
        }
    g->nmembers--;
    if (g->leader && strcmp(g->leader, m->id) == 0) {
        free(g->leader);
        g->leader = g->members ? xstrdup(g->members->id) : NULL;
    }
}

/* Remove a member; its parked requests learn it is gone. */
static void remove_member(srv *s, group *g, member *m, const char *why) {
    log_info("group %s: member %s%s%s removed: %s", g->id, m->id, m->instance_id ? " instance " : "",
             m->instance_id ? m->instance_id : "", why);
    answer_join(s, g, m, KERR_UNKNOWN_MEMBER_ID);
    answer_sync(s, g, m, KERR_UNKNOWN_MEMBER_ID);
    unlink_member(g, m);
    free_member(m);
}

/* Candidates supported by every member; each member votes for its first candidate. */
static char *select_protocol(group *g) {
    const member *first = g->members;
    const char *best = NULL;
    int best_votes = -1;
    for (int i = 0; first && i < first->nprotocols; i++) {
        const char *cand = first->protocols[i].name;
        bool everyone = true;
        for (const member *m = g->members; m && everyone; m = m->next) everyone = protocol_of(m, cand) != NULL;
        if (!everyone) continue;
        int votes = 0;
        for (const member *m = g->members; m; m = m->next)
            for (int k = 0; k < m->nprotocols; k++) {
                const char *n = m->protocols[k].name;
                bool shared = true;
                for (const member *o = g->members; o && shared; o = o->next) shared = protocol_of(o, n) != NULL;
                if (!shared) continue;
                if (strcmp(n, cand) == 0) votes++;
                break;
            }
        /* ties go to the earliest in the first member's order: deterministic */
        if (votes > best_votes) best = cand, best_votes = votes;
    }
    return best ? xstrdup(best) : NULL;
}

static void complete_join(srv *s, group *g) {
    member *m = g->members;
    while (m) {
        member *next = m->next;
        if (!m->joined && !m->instance_id) remove_member(s, g, m, "did not rejoin within the rebalance timeout");
        m = next;
    }
    bool anyone = false;
    for (member *x = g->members; x; x = x->next) anyone |= x->joined;
    if (g->members && !anyone) {
        /* only static members remain and none came back: wait another rebalance timeout */
        g->join_deadline_ms = clk_mono_ms() + max_rebalance_timeout(g);
        arm(g);
        return;
    }
    if (g->leader && !find_member(g, g->leader, strlen(g->leader))) {
        free(g->leader);
        g->leader = NULL;
    }
    if (!g->leader || !find_member(g, g->leader, strlen(g->leader))->joined) {
        for (member *x = g->members; x; x = x->next)
            if (x->joined) {
                free(g->leader);
                g->leader = xstrdup(x->id);
                break;
            }
    }
    g->generation++;
    s->metrics.generations++;
    g->join_deadline_ms = 0;
    free(g->protocol_name);
    g->protocol_name = NULL;
    if (!g->members) {
        set_state(g, GS_EMPTY);
        free(g->leader);
        g->leader = NULL;
        log_info("group %s: generation %d is empty", g->id, g->generation);
        grp_store_save(s, g);
        arm(g);
        return;
    }
    g->protocol_name = select_protocol(g);
    set_state(g, GS_COMPLETING);
    g->sync_deadline_ms = clk_mono_ms() + max_rebalance_timeout(g);
    log_info("group %s: generation %d with %d members, protocol %s, leader %s", g->id, g->generation, g->nmembers,
             g->protocol_name, g->leader);
    for (member *x = g->members; x; x = x->next) {
        x->pending_sync = true;
        x->joined = false;
        if (x->join) {
            answer_join(s, g, x, 0);
        } else {
            /*
             * Its JoinGroup is gone with its connection: from now on its session timeout applies,
             * not the new-member join timeout (Kafka's onCompleteJoin clears isNew for every
             * member). It kept 300 s, and the group waited that long on a leader that had left
             * (librdkafka 0084_destroy_flags).
             */
            x->is_new = false;
            touch(x);
        }
    }
    arm(g);
}

/* ---- timer ---- */

static void on_group_timer(uv_timer_t *t) { grp_tick(t->data); }

/* Members that got MEMBER_ID_REQUIRED and did not come back within their session timeout. */
static void expire_pending_members(group *g, int64_t now) {
    for (pending_member **pp = &g->pending; *pp;) {
        pending_member *p = *pp;
        if (p->deadline_ms <= now) {
            log_info("group %s: pending member %s never came back with its member id", g->id, p->id);
            *pp = p->next;
            free(p->id);
            free(p);
        } else {
            pp = &p->next;
        }
    }
}

/* Kafka's onExpireHeartbeat: members whose session (or new-member join timeout) ran out; whether any went. */
static bool expire_sessions(srv *s, group *g, int64_t now) {
    bool removed = false;
    member *m = g->members;
    while (m) {
        member *next = m->next;
        if (member_expiry(m) <= now) {
            remove_member(s, g, m, m->is_new ? "new member timed out waiting for the join phase"
                                              : "session timeout expired without a heartbeat");
            removed = true;
        }
        m = next;
    }
    return removed;
}

/*
 * Members that never sent SyncGroup go, even once the leader's sync made the group Stable (Kafka
 * 3.0+, DelayedSync of KAFKA-12890, apache/kafka#10863); whether any went.
 */
static bool expire_pending_sync(srv *s, group *g, int64_t now) {
    if (!(g->state == GS_COMPLETING || g->state == GS_STABLE) || !g->sync_deadline_ms || g->sync_deadline_ms > now)
        return false;
    bool removed = false;
    member *m = g->members;
    while (m) {
        member *next = m->next;
        if (m->pending_sync) {
            remove_member(s, g, m, "did not send SyncGroup within the rebalance timeout");
            removed = true;
        }
        m = next;
    }
    g->sync_deadline_ms = 0;
    return removed;
}

/* PreparingRebalance: Kafka's InitialDelayedJoin and DelayedJoin, whichever deadline is due. */
static void join_phase_deadlines(srv *s, group *g, int64_t now) {
    if (g->delay_deadline_ms && g->delay_deadline_ms <= now) {
        if (g->joined_during_delay && g->delay_remaining_ms > 0) {
            int64_t d = s->cfg->group_initial_rebalance_delay_ms;
            if (d > g->delay_remaining_ms) d = g->delay_remaining_ms;
            g->delay_remaining_ms -= d;
            g->delay_deadline_ms = now + d;
            g->joined_during_delay = false;
        } else {
            /* Kafka's InitialDelayedJoin completes the phase when the delay runs out */
            g->delay_deadline_ms = 0;
            complete_join(s, g);
        }
    } else if (!g->delay_deadline_ms && g->join_deadline_ms && g->join_deadline_ms <= now) {
        complete_join(s, g);
    } else {
        try_complete_join(s, g);
    }
}

void grp_tick(group *g) {
    srv *s = g->srv;
    int64_t now = clk_mono_ms();
    if (g->cg) {
        cg_tick(s, g);
        arm(g);
        return;
    }
    expire_pending_members(g, now);
    bool removed = expire_sessions(s, g, now);
    removed |= expire_pending_sync(s, g, now);
    if (removed && (g->state == GS_STABLE || g->state == GS_COMPLETING))
        prepare_rebalance(s, g, "a member left the group");
    if (g->state == GS_PREPARING) join_phase_deadlines(s, g, now);
    if (g->state == GS_PREPARING && !g->members && !g->pending) {
        /* everybody left during the join phase */
        complete_join(s, g);
    }
    arm(g);
}

/* ---- JoinGroup ---- */

static void new_member_id(char *out, size_t n, kp_str prefix) {
    char uuid[37];
    ids_uuid4_str(uuid);
    snprintf(out, n, "%.*s-%s", prefix.len > 0 ? (prefix.len > 200 ? 200 : prefix.len) : 0,
             prefix.len > 0 ? prefix.p : "", uuid);
}

static void set_protocols(member *m, const kp_join_group_request *q) {
    for (int i = 0; i < m->nprotocols; i++) {
        free(m->protocols[i].name);
        free(m->protocols[i].meta);
    }
    free(m->protocols);
    m->nprotocols = q->protocols.n;
    m->protocols = xcalloc((size_t)q->protocols.n + 1, sizeof *m->protocols);
    for (int32_t i = 0; i < q->protocols.n; i++) {
        kp_bytes md = q->protocols.v[i].metadata;
        m->protocols[i].name = dup_str(q->protocols.v[i].name);
        m->protocols[i].len = md.len > 0 ? (size_t)md.len : 0;
        m->protocols[i].meta = xmalloc(m->protocols[i].len ? m->protocols[i].len : 1);
        if (md.len > 0) memcpy(m->protocols[i].meta, md.p, (size_t)md.len);
    }
    m->rebalance_timeout_ms = q->rebalance_timeout_ms;
    m->session_timeout_ms = q->session_timeout_ms;
}

static bool same_protocols(const member *m, const kp_join_group_request *q) {
    if (m->nprotocols != q->protocols.n) return false;
    for (int32_t i = 0; i < q->protocols.n; i++) {
        const kp_join_group_request_protocol *p = &q->protocols.v[i];
        size_t len = p->metadata.len > 0 ? (size_t)p->metadata.len : 0;
        if (!kp_str_eq(p->name, m->protocols[i].name) || len != m->protocols[i].len ||
            (len && memcmp(p->metadata.p, m->protocols[i].meta, len) != 0))
            return false;
    }
    return true;
}

static member *add_member(srv *s, group *g, req *r, const char *id, const kp_join_group_request *q) {
    (void)s;
    member *m = xcalloc(1, sizeof *m);
    m->id = xstrdup(id);
    m->instance_id = dup_str(q->group_instance_id);
    m->client_id = xstrdup(conn_client_id(r->c));
    char host[80];
    snprintf(host, sizeof host, "/%s", r->c->peer);
    char *colon = strrchr(host, ':');
    if (colon) *colon = 0;
    m->client_host = xstrdup(host);
    set_protocols(m, q);
    m->is_new = true;
    /* join order: append */
    if (!g->members) {
        /* the first member decides the group's type (an Empty group may change it, as in Kafka) */
        free(g->protocol_type);
        g->protocol_type = dup_str(q->protocol_type);
    }
    member **pp = &g->members;
    while (*pp) pp = &(*pp)->next;
    *pp = m;
    g->nmembers++;
    if (!g->leader) g->leader = xstrdup(id);
    if (g->state == GS_PREPARING && g->delay_deadline_ms) g->joined_during_delay = true;
    return m;
}

/* Does every current member support at least one of the request's protocols? */
static bool protocols_compatible(const group *g, const kp_join_group_request *q) {
    if (g->state == GS_EMPTY && !g->members) return q->protocol_type.len > 0 && q->protocols.n > 0;
    if (!g->protocol_type || !kp_str_eq(q->protocol_type, g->protocol_type)) return false;
    for (int32_t i = 0; i < q->protocols.n; i++) {
        char *name = dup_str(q->protocols.v[i].name);
        bool everyone = true;
        for (const member *m = g->members; m && everyone; m = m->next) everyone = protocol_of(m, name) != NULL;
        free(name);
        if (everyone) return true;
    }
    return false;
}

/* A JoinGroup answered with only an error (the refusal already logged). */
static void join_answer_error(req *r, int16_t err, kp_str member_id) {
    kp_join_group_response *resp = req_resp(r);
    resp->error_code = err;
    resp->generation_id = -1;
    resp->leader = kp_str_c("");
    resp->member_id = err == KERR_MEMBER_ID_REQUIRED ? member_id : kp_str_c("");
    resp->members.n = 0;
    req_respond(r, resp);
}

static void join_refuse(srv *s, req *r, group *g, int16_t err, kp_str member_id, const char *fmt, const char *detail) {
    (void)s;
    req_log_refusal(r, err, fmt, g ? g->id : "-", detail);
    join_answer_error(r, err, member_id);
}

/*
 * MSK Serverless decodes each protocol's ConsumerProtocolSubscription at the
 * version it declares; Apache Kafka keeps the bytes opaque.
 */
static bool subscriptions_valid(srv *s, req *r, const kp_join_group_request *q) {
    if (!kp_str_eq(q->protocol_type, "consumer") ||
        s->cfg->group_consumer_protocol_validation != VALIDATION_STRICT)
        return true;
    for (int32_t i = 0; i < q->protocols.n; i++) {
        const kp_join_group_request_protocol *p = &q->protocols.v[i];
        kp_subscription sub;
        kp_consumer_error e;
        size_t len = p->metadata.len > 0 ? (size_t)p->metadata.len : 0;
        if (kp_subscription_decode((const uint8_t *)p->metadata.p, len, KP_CONSUMER_STRICT, &sub, &r->arena, &e))
            continue;
        char why[256];
        int16_t declared = len >= 2 ? kp_get_i16((const uint8_t *)p->metadata.p) : -1;
        kp_consumer_error_format(&e, "ConsumerProtocolSubscription", declared, len, why, sizeof why);
        req_log_refusal(r, KERR_INVALID_REQUEST,
                        "group %.*s member '%.*s' protocol %.*s: %s (MSK Serverless decodes consumer metadata strictly; "
                        "group.consumer.protocol.validation=lenient accepts it as Apache Kafka does)",
                        q->group_id.len, q->group_id.p, q->member_id.len > 0 ? q->member_id.len : 0, q->member_id.p,
                        p->name.len > 0 ? p->name.len : 0, p->name.p, why);
        return false;
    }
    return true;
}

/* A follower with nothing new, or anyone in CompletingRebalance without changes: the current generation. */
static void join_current(srv *s, req *r, group *g, member *m) {
    kp_join_group_response *resp = join_response(s, r, g, m, 0);
    req_respond(r, resp);
    m->is_new = false;
    touch(m);
}

static void park_join(srv *s, req *r, group *g, member *m) {
    (void)s;
    if (m->join && m->join != r) {
        /* the client gave up on its earlier JoinGroup (new connection): that one is void */
        req *old = m->join;
        m->join = NULL;
        kp_join_group_response *resp = join_response(s, old, g, m, KERR_UNKNOWN_MEMBER_ID);
        req_unpark_respond(s, old, resp);
    }
    m->join = r;
    m->joined = true;
    req_park(r, m, cancel_join);
}

/* Static member returning with an empty member id: it takes over its instance's slot. */
static void replace_static(srv *s, req *r, group *g, member *old, const kp_join_group_request *q) {
    char id[300];
    new_member_id(id, sizeof id, q->group_instance_id);
    char *old_id = old->id;
    bool was_leader = g->leader && strcmp(g->leader, old_id) == 0;
    char *old_leader = g->leader ? xstrdup(g->leader) : NULL;
    answer_join(s, g, old, KERR_FENCED_INSTANCE_ID);
    answer_sync(s, g, old, KERR_FENCED_INSTANCE_ID);
    old->id = xstrdup(id);
    if (was_leader) {
        free(g->leader);
        g->leader = xstrdup(id);
    }
    log_info("group %s: static member %s replaced member %s with %s", g->id, old->instance_id, old_id, id);
    free(old_id);
    set_protocols(old, q);
    /* as in Kafka: only a change of the selected protocol makes a rebalance necessary */
    char *selected = g->state == GS_STABLE ? select_protocol(g) : NULL;
    bool unchanged = selected && g->protocol_name && strcmp(selected, g->protocol_name) == 0;
    free(selected);
    if (g->state == GS_STABLE && unchanged) {
        /* no rebalance: the member gets the current generation; it is not told it leads (< v9) */
        kp_join_group_response *resp = join_response(s, r, g, old, 0);
        if (was_leader) {
            if (r->hdr.api_version >= 9) {
                resp->skip_assignment = true;
            } else {
                resp->leader = req_strf(r, "%s", old_leader);
                resp->members.n = 0;
            }
        }
        free(old_leader);
        req_respond(r, resp);
        old->is_new = false;
        touch(old);
        grp_store_save(s, g);
        return;
    }
    free(old_leader);
    if (g->state != GS_PREPARING) prepare_rebalance(s, g, "static member rejoined with new metadata");
    park_join(s, r, g, old);
    try_complete_join(s, g);
}

/*
 * JoinGroup follows Kafka's seams (GroupCoordinator.handleJoinGroup in 3.x,
 * GroupMetadataManager.classicGroupJoin in 4.x): the request's own checks, then the group's,
 * then one of three paths: a member without an id (doNewMemberJoinGroup, which hands a static
 * one to doStaticMemberJoinGroup) or one that names its id (doCurrentMemberJoinGroup).
 */

/* The checks that need no group; false when the request has been answered with an error. */
static bool join_request_valid(srv *s, req *r, const kp_join_group_request *q) {
    if (q->group_id.len <= 0) {
        join_refuse(s, r, NULL, KERR_INVALID_GROUP_ID, q->member_id, "group id '%s' is empty%s", "");
        return false;
    }
    int16_t err = grp_check_coordinator(s, r, q->group_id);
    if (err) {
        join_answer_error(r, err, q->member_id);
        return false;
    }
    if (q->session_timeout_ms < s->cfg->group_min_session_timeout_ms ||
        q->session_timeout_ms > s->cfg->group_max_session_timeout_ms) {
        char detail[160];
        snprintf(detail, sizeof detail, "%d ms is outside [group.min.session.timeout.ms=%lld, group.max.session.timeout.ms=%lld]",
                 q->session_timeout_ms, (long long)s->cfg->group_min_session_timeout_ms,
                 (long long)s->cfg->group_max_session_timeout_ms);
        join_refuse(s, r, NULL, KERR_INVALID_SESSION_TIMEOUT, q->member_id, "group %s: session timeout %s", detail);
        return false;
    }
    if (q->protocol_type.len <= 0 || q->protocols.n <= 0) {
        join_refuse(s, r, NULL, KERR_INCONSISTENT_GROUP_PROTOCOL, q->member_id, "group %s: %s",
                    "empty protocol type or no protocols");
        return false;
    }
    if (!subscriptions_valid(s, r, q)) {
        join_answer_error(r, KERR_INVALID_REQUEST, q->member_id);
        return false;
    }
    return true;
}

/*
 * The group the request joins, created for a member without an id, once the group's checks pass
 * (Dead, protocols, group.max.size); NULL when the request has been answered with an error.
 */
static group *join_group_of(srv *s, req *r, const kp_join_group_request *q) {
    group *g = grp_find(s, q->group_id.p, (size_t)q->group_id.len);
    if (!not_consumer(r, g)) {
        join_answer_error(r, KERR_GROUP_ID_NOT_FOUND, q->member_id);
        return NULL;
    }
    if (!g && q->member_id.len > 0) {
        join_refuse(s, r, NULL, KERR_UNKNOWN_MEMBER_ID, q->member_id, "group %s: %s",
                    "the group does not exist, but the request names a member id");
        return NULL;
    }
    if (!grp_room(s, r, g, q->group_id)) {
        join_answer_error(r, KERR_GROUP_MAX_SIZE_REACHED, q->member_id);
        return NULL;
    }
    if (!g) g = grp_get_or_create(s, q->group_id.p, (size_t)q->group_id.len);
    if (g->state == GS_DEAD) {
        join_refuse(s, r, g, KERR_COORDINATOR_NOT_AVAILABLE, q->member_id, "group %s: %s", "the group is being deleted");
        return NULL;
    }
    char detail[160];
    if (!protocols_compatible(g, q)) {
        snprintf(detail, sizeof detail, "protocol type '%.*s' or none of its %d protocols matches every member (group type %s)",
                 q->protocol_type.len, q->protocol_type.p, q->protocols.n, g->protocol_type ? g->protocol_type : "none");
        join_refuse(s, r, g, KERR_INCONSISTENT_GROUP_PROTOCOL, q->member_id, "group %s: %s", detail);
        return NULL;
    }
    /* Kafka's acceptJoiningMember: a member the group already knows is never turned away */
    bool known = q->member_id.len > 0 && (find_member(g, q->member_id.p, (size_t)q->member_id.len) ||
                                          find_pending(g, q->member_id));
    if (!known && !find_static(g, q->group_instance_id) && g->nmembers >= s->cfg->group_max_size) {
        snprintf(detail, sizeof detail, "%d members, group.max.size=%lld", g->nmembers, (long long)s->cfg->group_max_size);
        join_refuse(s, r, g, KERR_GROUP_MAX_SIZE_REACHED, q->member_id, "group %s: %s", detail);
        return NULL;
    }
    return g;
}

/* Kafka's addMemberAndRebalance: the member joins and waits for the join phase it starts or is in. */
static void add_member_and_rebalance(srv *s, req *r, group *g, const char *id, const kp_join_group_request *q) {
    member *m = add_member(s, g, r, id, q);
    if (g->state != GS_PREPARING) prepare_rebalance(s, g, "a new member joined");
    park_join(s, r, g, m);
    touch(m);
    try_complete_join(s, g);
    arm(g);
}

/* doStaticMemberJoinGroup: an instance id without a member id takes its slot, or joins anew. */
static void join_static_member(srv *s, req *r, group *g, const kp_join_group_request *q) {
    member *old = find_static(g, q->group_instance_id);
    if (old) {
        replace_static(s, r, g, old, q);
        arm(g);
        return;
    }
    char id[300];
    new_member_id(id, sizeof id, q->group_instance_id);
    add_member_and_rebalance(s, r, g, id, q);
}

/* doNewMemberJoinGroup: a member id is made; from v4 a dynamic member must come back with it. */
static void join_new_member(srv *s, req *r, group *g, const kp_join_group_request *q) {
    if (q->group_instance_id.len >= 0) {
        join_static_member(s, r, g, q);
        return;
    }
    char id[300];
    new_member_id(id, sizeof id, r->hdr.client_id);
    if (r->hdr.api_version >= 4) {
        /* KIP-394: the client must come back with this id */
        pending_member *p = xcalloc(1, sizeof *p);
        p->id = xstrdup(id);
        p->deadline_ms = clk_mono_ms() + q->session_timeout_ms;
        p->next = g->pending;
        g->pending = p;
        join_answer_error(r, KERR_MEMBER_ID_REQUIRED, req_strf(r, "%s", id));
        arm(g);
        return;
    }
    add_member_and_rebalance(s, r, g, id, q);
}

/* doCurrentMemberJoinGroup: a pending member comes back, or a member rejoins in the group's state. */
static void join_existing_member(srv *s, req *r, group *g, const kp_join_group_request *q) {
    pending_member **pp = find_pending(g, q->member_id);
    if (pp) {
        pending_member *p = *pp;
        *pp = p->next;
        add_member_and_rebalance(s, r, g, p->id, q);
        free(p->id);
        free(p);
        return;
    }
    member *m = find_member(g, q->member_id.p, (size_t)q->member_id.len);
    member *by_instance = find_static(g, q->group_instance_id);
    if (q->group_instance_id.len >= 0 && !by_instance) {
        join_refuse(s, r, g, KERR_UNKNOWN_MEMBER_ID, q->member_id, "group %s: %s",
                    "no static member has this instance id");
        return;
    }
    if (q->group_instance_id.len >= 0 && by_instance != m) {
        join_refuse(s, r, g, KERR_FENCED_INSTANCE_ID, q->member_id, "group %s: %s",
                    "the instance id belongs to another member id (an older incarnation was fenced)");
        return;
    }
    if (!m) {
        char detail[160];
        snprintf(detail, sizeof detail, "member '%.*s' is not in the group", q->member_id.len, q->member_id.p);
        join_refuse(s, r, g, KERR_UNKNOWN_MEMBER_ID, q->member_id, "group %s: %s", detail);
        return;
    }
    switch (g->state) {
    case GS_PREPARING:
        set_protocols(m, q);
        park_join(s, r, g, m);
        try_complete_join(s, g);
        break;
    case GS_COMPLETING:
        if (same_protocols(m, q)) {
            join_current(s, r, g, m);
        } else {
            set_protocols(m, q);
            prepare_rebalance(s, g, "a member rejoined with new metadata");
            park_join(s, r, g, m);
            try_complete_join(s, g);
        }
        break;
    case GS_STABLE:
        if (g->leader && strcmp(g->leader, m->id) != 0 && same_protocols(m, q)) {
            join_current(s, r, g, m);
        } else {
            set_protocols(m, q);
            prepare_rebalance(s, g, strcmp(g->leader ? g->leader : "", m->id) == 0 ? "the leader rejoined"
                                                                                     : "a member rejoined with new metadata");
            park_join(s, r, g, m);
            try_complete_join(s, g);
        }
        break;
    default:
        join_refuse(s, r, g, KERR_UNKNOWN_MEMBER_ID, q->member_id, "group %s is %s", grp_state_name(g->state));
        return;
    }
    arm(g);
}

/*
 * An empty consumer group a classic member joins becomes a classic group and keeps its offsets,
 * whatever the migration policy (Kafka's maybeDeleteEmptyConsumerGroup).
 */
static void consumer_to_empty_classic(srv *s, group *g) {
    log_info("group %s: the empty consumer group becomes a classic group", g->id);
    if (stor_consumer_group_delete(s->st, g->id) != 0)
        log_error("group %s: deleting its consumer group state failed: %s", g->id, stor_errmsg(s->st));
    cg_free(g->cg);
    g->cg = NULL;
    g->state = GS_EMPTY;
    g->state_ms = clk_now_ms();
    g->generation = 0;
}

void grp_join(srv *s, req *r, const struct cg_topics *topics) {
    kp_join_group_request *q = r->body;
    if (!join_request_valid(s, r, q)) return;
    if (r->hdr.api_version == 0) q->rebalance_timeout_ms = q->session_timeout_ms; /* v0 has none: Kafka uses the session timeout */
    group *cur = grp_find(s, q->group_id.p, (size_t)q->group_id.len);
    if (cur && cur->cg && cg_enabled(s)) {
        if (cur->cg->n > 0) {
            cg_classic_join(s, r, cur, q, topics);
            return;
        }
        consumer_to_empty_classic(s, cur);
    }
    group *g = join_group_of(s, r, q);
    if (!g) return;
    if (q->member_id.len <= 0)
        join_new_member(s, r, g, q);
    else
        join_existing_member(s, r, g, q);
}

/* ---- SyncGroup ---- */

/* Validation shared by SyncGroup and Heartbeat: member, instance and generation. */
static int16_t check_member(srv *s, req *r, group *g, kp_str member_id, kp_str instance_id, int32_t generation,
                            member **out) {
    (void)s;
    *out = NULL;
    if (g->state == GS_DEAD) {
        req_log_refusal(r, KERR_COORDINATOR_NOT_AVAILABLE, "group %s is being deleted", g->id);
        return KERR_COORDINATOR_NOT_AVAILABLE;
    }
    member *m = member_id.len > 0 ? find_member(g, member_id.p, (size_t)member_id.len) : NULL;
    if (instance_id.len >= 0) {
        member *st = find_static(g, instance_id);
        if (!st) {
            req_log_refusal(r, KERR_UNKNOWN_MEMBER_ID, "group %s: no static member has instance id %.*s", g->id,
                            instance_id.len, instance_id.p);
            return KERR_UNKNOWN_MEMBER_ID;
        }
        if (st != m) {
            req_log_refusal(r, KERR_FENCED_INSTANCE_ID, "group %s: instance %.*s now belongs to member %s, not '%.*s'",
                            g->id, instance_id.len, instance_id.p, st->id, member_id.len > 0 ? member_id.len : 0,
                            member_id.p);
            return KERR_FENCED_INSTANCE_ID;
        }
    }
    if (!m) {
        req_log_refusal(r, KERR_UNKNOWN_MEMBER_ID, "group %s: member '%.*s' is not in the group", g->id,
                        member_id.len > 0 ? member_id.len : 0, member_id.p);
        return KERR_UNKNOWN_MEMBER_ID;
    }
    if (generation != g->generation) {
        req_log_refusal(r, KERR_ILLEGAL_GENERATION, "group %s: member %s sent generation %d, the group is at %d", g->id,
                        m->id, generation, g->generation);
        return KERR_ILLEGAL_GENERATION;
    }
    *out = m;
    return 0;
}

static bool assignments_valid(srv *s, req *r, group *g, const kp_sync_group_request *q) {
    if (!g->protocol_type || strcmp(g->protocol_type, "consumer") != 0 ||
        s->cfg->group_consumer_protocol_validation != VALIDATION_STRICT)
        return true;
    for (int32_t i = 0; i < q->assignments.n; i++) {
        kp_bytes b = q->assignments.v[i].assignment;
        size_t len = b.len > 0 ? (size_t)b.len : 0;
        if (len == 0) continue; /* an empty assignment is what Kafka itself sends to members left out */
        kp_assignment a;
        kp_consumer_error e;
        if (kp_assignment_decode((const uint8_t *)b.p, len, KP_CONSUMER_STRICT, &a, &r->arena, &e)) continue;
        char why[256];
        kp_consumer_error_format(&e, "ConsumerProtocolAssignment", len >= 2 ? kp_get_i16((const uint8_t *)b.p) : -1,
                                 len, why, sizeof why);
        req_log_refusal(r, KERR_INVALID_REQUEST, "group %s: leader's assignment for member '%.*s': %s", g->id,
                        q->assignments.v[i].member_id.len, q->assignments.v[i].member_id.p, why);
        return false;
    }
    return true;
}

static void sync_refuse(req *r, int16_t err) {
    kp_sync_group_response *resp = req_resp(r);
    resp->error_code = err;
    resp->assignment = (kp_bytes){"", 0};
    req_respond(r, resp);
}

/*
 * SyncGroup's checks before the group's state decides (Kafka's handleSyncGroup and the head of
 * doSyncGroup): 0 with the group and the member, or the error (logged where Kafka's answer needs
 * a why).
 */
static int16_t sync_check(srv *s, req *r, const kp_sync_group_request *q, group **gout, member **mout) {
    if (q->group_id.len <= 0) {
        req_log_refusal(r, KERR_INVALID_GROUP_ID, "empty group id");
        return KERR_INVALID_GROUP_ID;
    }
    int16_t err = grp_check_coordinator(s, r, q->group_id);
    if (err) return err;
    group *g = grp_find(s, q->group_id.p, (size_t)q->group_id.len);
    if (!g) {
        req_log_refusal(r, KERR_UNKNOWN_MEMBER_ID, "group %.*s does not exist", q->group_id.len, q->group_id.p);
        return KERR_UNKNOWN_MEMBER_ID;
    }
    if (!not_consumer(r, g)) return KERR_GROUP_ID_NOT_FOUND;
    if (g->cg) {
        *gout = g; /* a classic member of a consumer group: grp_sync hands it over */
        return 0;
    }
    member *m;
    err = check_member(s, r, g, q->member_id, q->group_instance_id, q->generation_id, &m);
    if (err) return err;
    if ((q->protocol_type.len >= 0 && (!g->protocol_type || !kp_str_eq(q->protocol_type, g->protocol_type))) ||
        (q->protocol_name.len >= 0 && (!g->protocol_name || !kp_str_eq(q->protocol_name, g->protocol_name)))) {
        req_log_refusal(r, KERR_INCONSISTENT_GROUP_PROTOCOL,
                        "group %s: SyncGroup names protocol %.*s/%.*s, the group uses %s/%s", g->id,
                        q->protocol_type.len > 0 ? q->protocol_type.len : 0, q->protocol_type.p,
                        q->protocol_name.len > 0 ? q->protocol_name.len : 0, q->protocol_name.p,
                        g->protocol_type ? g->protocol_type : "-", g->protocol_name ? g->protocol_name : "-");
        return KERR_INCONSISTENT_GROUP_PROTOCOL;
    }
    if (g->state == GS_EMPTY) return KERR_UNKNOWN_MEMBER_ID;
    if (g->state == GS_PREPARING) return KERR_REBALANCE_IN_PROGRESS;
    *gout = g;
    *mout = m;
    return 0;
}

/* The leader's assignment: every member's share, and the group is Stable (Kafka's setAndPropagateAssignment). */
static void take_assignment(srv *s, group *g, const kp_sync_group_request *q) {
    for (member *x = g->members; x; x = x->next) {
        free(x->assignment);
        x->assignment = NULL;
        x->assignment_len = 0;
    }
    for (int32_t i = 0; i < q->assignments.n; i++) {
        kp_sync_group_request_assignment *a = &q->assignments.v[i];
        member *x = a->member_id.len > 0 ? find_member(g, a->member_id.p, (size_t)a->member_id.len) : NULL;
        if (!x || a->assignment.len <= 0) continue;
        x->assignment = xmalloc((size_t)a->assignment.len);
        memcpy(x->assignment, a->assignment.p, (size_t)a->assignment.len);
        x->assignment_len = (size_t)a->assignment.len;
    }
    set_state(g, GS_STABLE);
    grp_store_save(s, g);
    log_info("group %s: generation %d is stable", g->id, g->generation);
    for (member *x = g->members; x; x = x->next) answer_sync(s, g, x, 0);
}

/* CompletingRebalance: followers wait for the leader, whose SyncGroup carries everyone's assignment. */
static void sync_completing(srv *s, req *r, group *g, member *m, const kp_sync_group_request *q) {
    bool leader = g->leader && strcmp(g->leader, m->id) == 0;
    if (leader && !assignments_valid(s, r, g, q)) {
        sync_refuse(r, KERR_INVALID_REQUEST);
        return;
    }
    if (m->sync && m->sync != r) answer_sync(s, g, m, KERR_REBALANCE_IN_PROGRESS);
    m->sync = r;
    req_park(r, m, cancel_sync);
    if (leader) take_assignment(s, g, q);
    arm(g);
}

/* Stable: the member's current assignment, at once. */
static void sync_stable(srv *s, req *r, group *g, member *m) {
    m->sync = r;
    req_park(r, m, cancel_sync);
    answer_sync(s, g, m, 0);
    arm(g);
}

void grp_sync(srv *s, req *r) {
    kp_sync_group_request *q = r->body;
    group *g = NULL;
    member *m = NULL;
    int16_t err = sync_check(s, r, q, &g, &m);
    if (!err && g->cg) {
        kp_bytes a = {"", 0};
        err = cg_classic_sync(s, r, g, q, &a);
        if (!err) {
            kp_sync_group_response *resp = req_resp(r);
            resp->protocol_type = q->protocol_type;
            resp->protocol_name = q->protocol_name;
            resp->assignment = a;
            req_respond(r, resp);
            return;
        }
    }
    if (err) {
        sync_refuse(r, err);
        return;
    }
    touch(m);
    m->pending_sync = false;
    bool everyone_synced = true;
    for (member *x = g->members; x; x = x->next) everyone_synced &= !x->pending_sync;
    if (everyone_synced) g->sync_deadline_ms = 0;
    if (g->state == GS_STABLE)
        sync_stable(s, r, g, m);
    else
        sync_completing(s, r, g, m, q);
}

/* ---- Heartbeat and LeaveGroup ---- */

int16_t grp_heartbeat(srv *s, req *r, kp_str group_id, int32_t generation, kp_str member_id, kp_str instance_id) {
    if (group_id.len <= 0) {
        req_log_refusal(r, KERR_INVALID_GROUP_ID, "empty group id");
        return KERR_INVALID_GROUP_ID;
    }
    int16_t err = grp_check_coordinator(s, r, group_id);
    if (err) return err;
    group *g = grp_find(s, group_id.p, (size_t)group_id.len);
    if (!g) {
        req_log_refusal(r, KERR_UNKNOWN_MEMBER_ID, "group %.*s does not exist", group_id.len, group_id.p);
        return KERR_UNKNOWN_MEMBER_ID;
    }
    if (!not_consumer(r, g)) return KERR_GROUP_ID_NOT_FOUND;
    if (g->cg) return cg_classic_heartbeat(s, r, g, generation, member_id, instance_id);
    member *m;
    err = check_member(s, r, g, member_id, instance_id, generation, &m);
    if (err) return err;
    switch (g->state) {
    case GS_EMPTY: return KERR_UNKNOWN_MEMBER_ID;
    case GS_PREPARING:
        touch(m);
        arm(g);
        return KERR_REBALANCE_IN_PROGRESS; /* how followers learn to rejoin */
    default:
        touch(m);
        arm(g);
        return 0;
    }
}

int16_t grp_leave(srv *s, req *r, group *g, kp_str member_id, kp_str instance_id) {
    member *m = NULL;
    if (!not_consumer(r, g)) return KERR_GROUP_ID_NOT_FOUND;
    if (g->cg) return cg_classic_leave(s, r, g, member_id, instance_id);
    if (member_id.len <= 0 && instance_id.len >= 0) {
        m = find_static(g, instance_id); /* administrative removal of a static member */
    } else {
        pending_member **pp = find_pending(g, member_id);
        if (pp) {
            pending_member *p = *pp;
            *pp = p->next;
            free(p->id);
            free(p);
            return 0;
        }
        m = member_id.len > 0 ? find_member(g, member_id.p, (size_t)member_id.len) : NULL;
        member *st = find_static(g, instance_id);
        if (instance_id.len >= 0 && !st) {
            req_log_refusal(r, KERR_UNKNOWN_MEMBER_ID, "group %s: no static member has instance id %.*s", g->id,
                            instance_id.len, instance_id.p);
            return KERR_UNKNOWN_MEMBER_ID;
        }
        if (instance_id.len >= 0 && st != m) {
            req_log_refusal(r, KERR_FENCED_INSTANCE_ID, "group %s: instance %.*s belongs to member %s", g->id,
                            instance_id.len, instance_id.p, st->id);
            return KERR_FENCED_INSTANCE_ID;
        }
    }
    if (!m) {
        req_log_refusal(r, KERR_UNKNOWN_MEMBER_ID, "group %s: member '%.*s' (instance %.*s) is not in the group", g->id,
                        member_id.len > 0 ? member_id.len : 0, member_id.p, instance_id.len > 0 ? instance_id.len : 0,
                        instance_id.p);
        return KERR_UNKNOWN_MEMBER_ID;
    }
    group_state st = g->state;
    remove_member(s, g, m, "left the group (LeaveGroup)");
    if (st == GS_STABLE || st == GS_COMPLETING)
        prepare_rebalance(s, g, "a member left the group");
    else if (st == GS_PREPARING)
        try_complete_join(s, g);
    if (g->state == GS_PREPARING && !g->members && !g->pending) complete_join(s, g);
    arm(g);
    return 0;
}

int16_t grp_check_coordinator(srv *s, req *r, kp_str group_id) {
    int node = grp_coordinator_for(s, group_id.p, group_id.len > 0 ? (size_t)group_id.len : 0);
    if (node == r->c->node) return 0;
    req_log_refusal(r, KERR_NOT_COORDINATOR, "group %.*s is coordinated by node %d, the request reached node %d",
                    group_id.len > 0 ? group_id.len : 0, group_id.p, s->nodes[node].id, s->nodes[r->c->node].id);
    return KERR_NOT_COORDINATOR;
}

int grp_delete(srv *s, group *g) {
    if (grp_store_delete(s, g) != 0) return -1;
    for (group **pp = &s->groups; *pp; pp = &(*pp)->next)
        if (*pp == g) {
            *pp = g->next;
            break;
        }
    name_index_del(&s->groups_by_id, &g->by_id);
    free_group(g);
    return 0;
}

/* ---- the classic side of the online migration (consumer_classic.c) ---- */

void grp_classic_release(srv *s, group *g, int16_t err) {
    while (g->members) {
        member *m = g->members;
        answer_join(s, g, m, err);
        answer_sync(s, g, m, err);
        g->members = m->next;
        free_member(m);
    }
    g->nmembers = 0;
    while (g->pending) {
        pending_member *p = g->pending;
        g->pending = p->next;
        free(p->id);
        free(p);
    }
    grp_store_forget_classic(s, g);
    free(g->protocol_type);
    free(g->protocol_name);
    free(g->leader);
    g->protocol_type = g->protocol_name = g->leader = NULL;
    g->generation = 0;
    g->join_deadline_ms = g->delay_deadline_ms = g->sync_deadline_ms = 0;
    g->delay_remaining_ms = 0;
}

void grp_classic_adopt(srv *s, group *g, member *members, int n, int32_t generation) {
    (void)s;
    g->members = members;
    g->nmembers = n;
    g->generation = generation;
    free(g->protocol_type);
    g->protocol_type = xstrdup("consumer");
    free(g->leader);
    g->leader = members ? xstrdup(members->id) : NULL;
    free(g->protocol_name);
    g->protocol_name = select_protocol(g);
    g->join_deadline_ms = g->delay_deadline_ms = g->sync_deadline_ms = 0;
    /* ClassicGroup.fromConsumerGroup makes it Stable; not a transition of the classic machine */
    g->state = GS_STABLE;
    g->state_ms = clk_now_ms();
}

void grp_classic_rebalance(srv *s, group *g, const char *reason) {
    grp_store_save(s, g);
    log_info("group %s: generation %d is stable (from the consumer group, protocol %s)", g->id, g->generation,
             g->protocol_name ? g->protocol_name : "-");
    prepare_rebalance(s, g, reason);
    arm(g);
}

void grp_init(srv *s) { s->groups = NULL; }

void grp_close_all(srv *s) {
    while (s->groups) {
        group *g = s->groups;
        s->groups = g->next;
        /* parked requests belong to connections that are closing too */
        for (member *m = g->members; m; m = m->next) m->join = m->sync = NULL;
        free_group(g);
    }
    name_index_free(&s->groups_by_id);
}

/* ---- OffsetCommit rules (Kafka's handleCommitOffsets in 3.x, validateOffsetCommit in 4.x) ---- */

/* txn: TxnOffsetCommit (KIP-447), which Kafka serves in any state and without a member. */
static int16_t commit_check(srv *s, req *r, kp_str group_id, int32_t generation, kp_str member_id, kp_str instance_id,
                            group **out, bool txn) {
    *out = NULL;
    int16_t err = grp_check_coordinator(s, r, group_id);
    if (err) return err;
    size_t len = group_id.len > 0 ? (size_t)group_id.len : 0;
    group *g = grp_find(s, group_id.p ? group_id.p : "", len);
    if (!g) {
        if (generation >= 0) {
            req_log_refusal(r, KERR_ILLEGAL_GENERATION, "group %.*s does not exist, but the commit names generation %d",
                            (int)len, group_id.p, generation);
            return KERR_ILLEGAL_GENERATION;
        }
        if (!grp_room(s, r, NULL, group_id)) return KERR_GROUP_MAX_SIZE_REACHED;
        *out = grp_get_or_create(s, group_id.p ? group_id.p : "", len); /* a simple (offsets-only) group */
        return 0;
    }
    if (!grp_room(s, r, g, group_id)) return KERR_GROUP_MAX_SIZE_REACHED;
    if (g->cg) {
        err = cg_commit_check(s, r, g, generation, member_id);
        if (!err) *out = g;
        return err;
    }
    if (g->state == GS_DEAD) {
        req_log_refusal(r, KERR_COORDINATOR_NOT_AVAILABLE, "group %s is being deleted", g->id);
        return KERR_COORDINATOR_NOT_AVAILABLE;
    }
    if (generation < 0 && g->state == GS_EMPTY) {
        *out = g;
        return 0;
    }
    if (generation >= 0 || member_id.len > 0 || instance_id.len >= 0) {
        member *m;
        err = check_member(s, r, g, member_id, instance_id, generation, &m);
        if (err) return err;
        if (g->state == GS_COMPLETING && !txn) {
            req_log_refusal(r, KERR_REBALANCE_IN_PROGRESS, "group %s is waiting for the leader's assignment", g->id);
            return KERR_REBALANCE_IN_PROGRESS;
        }
        touch(m);
        arm(g);
        *out = g;
        return 0;
    }
    if (txn) {
        *out = g;
        return 0;
    }
    req_log_refusal(r, KERR_UNKNOWN_MEMBER_ID, "group %s is %s with members; a commit without member id is refused",
                    g->id, grp_state_name(g->state));
    return KERR_UNKNOWN_MEMBER_ID;
}

int16_t grp_commit_check(srv *s, req *r, kp_str group_id, int32_t generation, kp_str member_id, kp_str instance_id,
                         group **out) {
    return commit_check(s, r, group_id, generation, member_id, instance_id, out, false);
}

int16_t grp_txn_commit_check(srv *s, req *r, kp_str group_id, int32_t generation, kp_str member_id,
                             kp_str instance_id, group **out) {
    return commit_check(s, r, group_id, generation, member_id, instance_id, out, true);
}
