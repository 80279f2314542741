/*
 * KIP-848's online migration between the classic and the consumer group protocols, as Apache
 * Kafka 4.x's GroupMetadataManager does it
 * (group-coordinator/src/main/java/org/apache/kafka/coordinator/group/GroupMetadataManager.java:
 * validateOnlineUpgrade, convertToConsumerGroup, validateOnlineDowngradeWithFencedMember,
 * convertToClassicGroup, classicGroupJoinToConsumerGroup, classicGroupSyncToConsumerGroup,
 * classicGroupHeartbeatToConsumerGroup, classicGroupLeaveToConsumerGroup; ConsumerGroup.fromClassicGroup
 * and ClassicGroup.fromConsumerGroup). https://cwiki.apache.org/confluence/display/KAFKA/KIP-848%3A+The+Next+Generation+of+the+Consumer+Rebalance+Protocol
 * ("Online Migration").
 *
 * Upgrade: the first consumer-protocol member joining a classic group with members turns it into
 * a consumer group; each classic member becomes a member at the group's generation with its
 * subscription and its current assignment (decoded from the embedded consumer protocol). Those
 * members keep speaking the classic protocol: their JoinGroup is answered at once with the
 * broker's target assignment (reconciled as any member's), SyncGroup hands it over, Heartbeat says
 * REBALANCE_IN_PROGRESS when they must rejoin, and they have only two timers, the join timeout
 * after a REBALANCE_IN_PROGRESS and the sync timeout after a join. Downgrade: when the last
 * consumer-protocol member leaves and only classic members remain, the group becomes a classic
 * group with their target assignment, Stable, and rebalances. group.consumer.migration.policy
 * (Kafka's key and values) allows either way; empty groups change type whatever it says.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "consumer_int.h"
#include "group_store.h"
#include "ids.h"
#include "kp_consumer.h"
#include "kp_mem.h"
#include "log.h"
#include "net/net.h"
#include "srv.h"

static bool upgrade_enabled(const srv *s) {
    int64_t p = s->cfg->group_consumer_migration_policy;
    return p == MIGRATION_BIDIRECTIONAL || p == MIGRATION_UPGRADE;
}

static bool downgrade_enabled(const srv *s) {
    int64_t p = s->cfg->group_consumer_migration_policy;
    return p == MIGRATION_BIDIRECTIONAL || p == MIGRATION_DOWNGRADE;
}

void cg_classic_free(cm_classic *c) {
    if (!c) return;
    for (int i = 0; i < c->nprotocols; i++) {
        free(c->protocols[i].name);
        free(c->protocols[i].meta);
    }
    free(c->protocols);
    free(c);
}

static member_protocol *copy_protocols(const member_protocol *p, int n) {
    member_protocol *out = xcalloc((size_t)n + 1, sizeof *out);
    for (int i = 0; i < n; i++) {
        out[i].name = xstrdup(p[i].name);
        out[i].len = p[i].len;
        out[i].meta = xmalloc(p[i].len ? p[i].len : 1);
        if (p[i].len) memcpy(out[i].meta, p[i].meta, p[i].len);
    }
    return out;
}

/* ---- the embedded consumer protocol ---- */

static void put16(uint8_t **w, int16_t v) {
    (*w)[0] = (uint8_t)((uint16_t)v >> 8);
    (*w)[1] = (uint8_t)v;
    *w += 2;
}

static void put32(uint8_t **w, int32_t v) {
    uint32_t u = (uint32_t)v;
    (*w)[0] = (uint8_t)(u >> 24);
    (*w)[1] = (uint8_t)(u >> 16);
    (*w)[2] = (uint8_t)(u >> 8);
    (*w)[3] = (uint8_t)u;
    *w += 4;
}

/* ConsumerProtocol.serializeAssignment: one layout for v0-v3, the version capped as Java's checkAssignmentVersion. */
uint8_t *cg_assignment_encode(const cg_parts *parts, int16_t version, size_t *len) {
    if (version < 0) version = 0;
    if (version > KP_CONSUMER_MAX_VERSION) version = KP_CONSUMER_MAX_VERSION;
    size_t n = 2 + 4 + 4;
    for (int i = 0; i < parts->n; i++) n += 2 + strlen(parts->t[i].topic) + 4 + 4 * (size_t)parts->t[i].n;
    uint8_t *out = xmalloc(n), *w = out;
    put16(&w, version);
    put32(&w, parts->n);
    for (int i = 0; i < parts->n; i++) {
        size_t tl = strlen(parts->t[i].topic);
        put16(&w, (int16_t)tl);
        memcpy(w, parts->t[i].topic, tl);
        w += tl;
        put32(&w, parts->t[i].n);
        for (int k = 0; k < parts->t[i].n; k++) put32(&w, parts->t[i].p[k]);
    }
    put32(&w, -1); /* user_data: null */
    *len = n;
    return out;
}

static int16_t declared_version(const member_protocol *p) {
    return p && p->len >= 2 ? (int16_t)((p->meta[0] << 8) | p->meta[1]) : 0;
}

static const member_protocol *protocol_named(const member_protocol *p, int n, const char *name) {
    for (int i = 0; name && i < n; i++)
        if (strcmp(p[i].name, name) == 0) return &p[i];
    return NULL;
}

/* ---- upgrade: a classic group becomes a consumer group ---- */

bool cg_upgrade(srv *s, group *g) {
    if (!upgrade_enabled(s)) {
        log_info("group %s: cannot upgrade the classic group to a consumer group because the online upgrade is "
                 "disabled (group.consumer.migration.policy=%s)", g->id,
                 s->cfg->group_consumer_migration_policy == MIGRATION_DISABLED ? "disabled" : "downgrade");
        return false;
    }
    if (!g->protocol_type || strcmp(g->protocol_type, "consumer") != 0) {
        log_info("group %s: cannot upgrade the classic group to a consumer group because the group does not use the "
                 "consumer embedded protocol (protocol type %s)", g->id, g->protocol_type ? g->protocol_type : "none");
        return false;
    }
    if (g->nmembers > s->cfg->group_consumer_max_size) {
        log_info("group %s: cannot upgrade the classic group to a consumer group because the group size exceeds the "
                 "consumer group maximum size (%d members, group.consumer.max.size=%lld)", g->id, g->nmembers,
                 (long long)s->cfg->group_consumer_max_size);
        return false;
    }
    /* ConsumerGroup.fromClassicGroup: everything decoded before anything changes */
    cgroup *cg = xcalloc(1, sizeof *cg);
    cg->group_epoch = cg->assignment_epoch = g->generation;
    kp_arena arena = {0};
    const char *bad = NULL;
    int64_t now = clk_mono_ms();
    for (member *x = g->members; x && !bad; x = x->next) {
        const member_protocol *p = protocol_named(x->protocols, x->nprotocols, g->protocol_name);
        if (!p && x->nprotocols) p = &x->protocols[0]; /* no generation yet: every protocol carries the same subscription */
        kp_subscription sub;
        kp_assignment a;
        if (!p || !kp_subscription_decode(p->meta, p->len, KP_CONSUMER_STRICT, &sub, &arena, NULL)) {
            bad = "subscription";
            break;
        }
        /* an empty assignment is Kafka's "nothing assigned" (a join phase cleared it, or the leader left it out) */
        if (x->assignment_len && !kp_assignment_decode(x->assignment, x->assignment_len, KP_CONSUMER_STRICT, &a,
                                                       &arena, NULL)) {
            bad = "assignment";
            break;
        }
        cmember *m = cg_member_new(x->id);
        m->epoch = m->prev_epoch = g->generation;
        m->instance_id = x->instance_id ? xstrdup(x->instance_id) : NULL;
        m->rack_id = sub.rack_id.len > 0 ? kp_str_dup(sub.rack_id) : NULL;
        m->rebalance_timeout_ms = x->rebalance_timeout_ms;
        m->client_id = xstrdup(x->client_id ? x->client_id : "");
        m->client_host = xstrdup(x->client_host ? x->client_host : "");
        cg_member_set_names(m, sub.topics, sub.ntopics > 0 ? sub.ntopics : 0);
        m->topics = xcalloc((size_t)m->nnames + 1, sizeof *m->topics);
        for (int i = 0; i < m->nnames; i++) m->topics[i] = xstrdup(m->names[i]);
        m->ntopics = m->nnames;
        for (int32_t i = 0; x->assignment_len && i < a.nassigned; i++)
            for (int32_t k = 0; k < a.assigned[i].n; k++) {
                char *t = kp_str_dup(a.assigned[i].topic);
                cg_parts_add(&m->assigned, t, a.assigned[i].partitions[k]);
                free(t);
            }
        cg_parts_copy(&m->target, &m->assigned);
        m->classic = xcalloc(1, sizeof *m->classic);
        m->classic->session_timeout_ms = x->session_timeout_ms;
        m->classic->protocols = copy_protocols(x->protocols, x->nprotocols);
        m->classic->nprotocols = x->nprotocols;
        m->session_deadline_ms = now + x->session_timeout_ms;
        cg_member_append(cg, m);
    }
    kp_arena_free(&arena);
    if (bad) {
        log_warn("group %s: cannot upgrade the classic group to a consumer group because the embedded consumer "
                 "protocol is malformed (a member's %s does not decode)", g->id, bad);
        cg_free(cg);
        return false;
    }
    log_info("group %s: the classic group (generation %d, %d members, %s) becomes a consumer group (the online "
             "upgrade); its classic members keep their assignment", g->id, g->generation, g->nmembers,
             grp_state_name(g->state));
    /* members waiting in a join or sync phase rejoin: the new member starts another rebalance anyway */
    grp_classic_release(s, g, KERR_REBALANCE_IN_PROGRESS);
    g->cg = cg;
    cg_sync_state(g);
    return true;
}

/* ---- downgrade: back to a classic group ---- */

bool cg_maybe_downgrade(srv *s, group *g, cmember *leaving) {
    cgroup *cg = g->cg;
    if (leaving->classic) return false;
    for (int i = 0; i < cg->n; i++)
        if (cg->m[i] != leaving && !cg->m[i]->classic) return false;
    if (cg->n <= 1) return false; /* the group becomes empty: it stays a consumer group */
    if (!downgrade_enabled(s)) {
        log_info("group %s: cannot downgrade the consumer group to a classic group because the online downgrade is "
                 "disabled (group.consumer.migration.policy=%s)", g->id,
                 s->cfg->group_consumer_migration_policy == MIGRATION_DISABLED ? "disabled" : "upgrade");
        return false;
    }
    if (cg->n - 1 > s->cfg->group_max_size) {
        log_info("group %s: cannot downgrade the consumer group to a classic group because its group size is greater "
                 "than the classic group max size (%d members, group.max.size=%lld)", g->id, cg->n - 1,
                 (long long)s->cfg->group_max_size);
        return false;
    }
    log_info("group %s: member %s, the last one on the consumer protocol, left; the consumer group (epoch %d, %d "
             "classic members) becomes a classic group (the online downgrade)", g->id, leaving->id, cg->group_epoch,
             cg->n - 1);
    /* ClassicGroup.fromConsumerGroup: the members in their order, each with its target assignment */
    int n = cg->n - 1, k = 0;
    member *list = NULL, **tail = &list;
    cg_parts *targets = xcalloc((size_t)n + 1, sizeof *targets);
    int64_t now = clk_mono_ms();
    for (int i = 0; i < cg->n; i++) {
        cmember *c = cg->m[i];
        if (c == leaving) continue;
        member *m = xcalloc(1, sizeof *m);
        m->id = xstrdup(c->id);
        m->instance_id = c->instance_id ? xstrdup(c->instance_id) : NULL;
        m->client_id = xstrdup(c->client_id ? c->client_id : "");
        m->client_host = xstrdup(c->client_host ? c->client_host : "");
        m->rebalance_timeout_ms = c->rebalance_timeout_ms;
        m->session_timeout_ms = c->classic->session_timeout_ms;
        m->protocols = copy_protocols(c->classic->protocols, c->classic->nprotocols);
        m->nprotocols = c->classic->nprotocols;
        m->deadline_ms = now + m->session_timeout_ms;
        cg_parts_copy(&targets[k++], &c->target);
        *tail = m;
        tail = &m->next;
    }
    int32_t generation = cg->group_epoch;
    cg_free(cg);
    g->cg = NULL;
    if (stor_consumer_group_delete(s->st, g->id) != 0)
        log_error("group %s: deleting its consumer group state failed: %s", g->id, stor_errmsg(s->st));
    grp_classic_adopt(s, g, list, n, generation);
    k = 0;
    for (member *m = g->members; m; m = m->next, k++) {
        const member_protocol *p = protocol_named(m->protocols, m->nprotocols, g->protocol_name);
        m->assignment = cg_assignment_encode(&targets[k], declared_version(p), &m->assignment_len);
        cg_parts_free(&targets[k]);
    }
    free(targets);
    char reason[300];
    snprintf(reason, sizeof reason, "Downgrade group %s from consumer to classic.", g->id);
    grp_classic_rebalance(s, g, reason);
    return true;
}

/* ---- the classic requests a consumer group serves ---- */

static void join_error(req *r, int16_t err, kp_str member_id) {
    kp_join_group_response *resp = req_resp(r);
    resp->error_code = err;
    resp->generation_id = -1;
    resp->leader = kp_str_c("");
    resp->member_id = member_id.len >= 0 ? member_id : kp_str_c("");
    resp->members.n = 0;
    req_respond(r, resp);
}

/* ConsumerGroup.supportsClassicProtocols: a protocol every classic member supports (any, without classic members). */
static bool protocols_supported(const cgroup *cg, const kp_join_group_request *q) {
    if (!kp_str_eq(q->protocol_type, "consumer") || q->protocols.n <= 0) return false;
    for (int32_t i = 0; i < q->protocols.n; i++) {
        char *name = kp_str_dup(q->protocols.v[i].name);
        bool everyone = true;
        for (int k = 0; k < cg->n && everyone; k++)
            if (cg->m[k]->classic) everyone = protocol_named(cg->m[k]->classic->protocols, cg->m[k]->classic->nprotocols, name) != NULL;
        free(name);
        if (everyone) return true;
    }
    return false;
}

static void set_classic(cmember *m, const kp_join_group_request *q) {
    cg_classic_free(m->classic);
    cm_classic *c = xcalloc(1, sizeof *c);
    c->session_timeout_ms = q->session_timeout_ms;
    c->nprotocols = q->protocols.n;
    c->protocols = xcalloc((size_t)q->protocols.n + 1, sizeof *c->protocols);
    for (int32_t i = 0; i < q->protocols.n; i++) {
        kp_bytes md = q->protocols.v[i].metadata;
        c->protocols[i].name = kp_str_dup(q->protocols.v[i].name);
        c->protocols[i].len = md.len > 0 ? (size_t)md.len : 0;
        c->protocols[i].meta = xmalloc(c->protocols[i].len ? c->protocols[i].len : 1);
        if (md.len > 0) memcpy(c->protocols[i].meta, md.p, (size_t)md.len);
    }
    m->classic = c;
}

static void owned_of(const kp_subscription *sub, cg_parts *owned) {
    for (int32_t i = 0; i < sub->nowned; i++)
        for (int32_t k = 0; k < sub->owned[i].n; k++) {
            char *t = kp_str_dup(sub->owned[i].topic);
            cg_parts_add(owned, t, sub->owned[i].partitions[k]);
            free(t);
        }
}

void cg_classic_join(srv *s, req *r, group *g, const kp_join_group_request *q, const cg_topics *topics) {
    cgroup *cg = g->cg;
    bool unknown = q->member_id.len <= 0;
    char idbuf[64];
    const char *member_id = idbuf;
    if (unknown) ids_uuid4_str(idbuf);
    else member_id = req_strf(r, "%.*s", q->member_id.len, q->member_id.p).p;
    kp_str mid = kp_str_c(member_id);
    int64_t max = s->cfg->group_consumer_max_size;
    if (cg->n >= max && (unknown || !cg_member_by_id(cg, mid))) {
        req_log_refusal(r, KERR_GROUP_MAX_SIZE_REACHED, "group %s: The consumer group has reached its maximum "
                        "capacity of %lld members.", g->id, (long long)max);
        join_error(r, KERR_GROUP_MAX_SIZE_REACHED, KP_STR_NULL);
        return;
    }
    if (!protocols_supported(cg, q)) {
        req_log_refusal(r, KERR_INCONSISTENT_GROUP_PROTOCOL, "group %s: Member %s's protocols are not supported.",
                        g->id, member_id);
        join_error(r, KERR_INCONSISTENT_GROUP_PROTOCOL, KP_STR_NULL);
        return;
    }
    /* JoinGroupRequest.requiresKnownMemberId: a dynamic member from v4 comes back with the id */
    if (unknown && q->group_instance_id.len < 0 && r->hdr.api_version >= 4) {
        log_info("group %s: dynamic member with unknown member id joins the consumer group; created member id %s "
                 "and asked the member to rejoin with it", g->id, member_id);
        join_error(r, KERR_MEMBER_ID_REQUIRED, req_strf(r, "%s", member_id));
        return;
    }
    cmember *m;
    bool is_new = false;
    if (q->group_instance_id.len < 0) {
        m = cg_member_by_id(cg, mid);
        if (!m) {
            log_info("group %s: member %s joins the consumer group using the classic protocol", g->id, member_id);
            m = cg_member_new(member_id);
            is_new = true;
        }
    } else {
        cmember *old = cg_member_by_instance(cg, q->group_instance_id);
        if (old && !unknown && strcmp(old->id, member_id) == 0) {
            m = old;
        } else if (old && !unknown) {
            req_log_refusal(r, KERR_FENCED_INSTANCE_ID, "group %s: Static member %s with instance id %.*s was fenced "
                            "by member %s.", g->id, member_id, q->group_instance_id.len, q->group_instance_id.p,
                            old->id);
            join_error(r, KERR_FENCED_INSTANCE_ID, KP_STR_NULL);
            return;
        } else if (old) {
            log_info("group %s: static member with instance id %s re-joins the consumer group using the classic "
                     "protocol; member %s replaces %s", g->id, old->instance_id, member_id, old->id);
            cg_member_set_id(cg, old, member_id); /* the index by id follows */
            old->epoch = old->prev_epoch = 0;
            m = old;
        } else {
            log_info("group %s: static member %s with instance id %.*s joins the consumer group using the classic "
                     "protocol", g->id, member_id, q->group_instance_id.len, q->group_instance_id.p);
            m = cg_member_new(member_id);
            is_new = true;
        }
    }
    /* every protocol carries the same subscription: the first one's (Kafka's deserializeSubscription) */
    kp_subscription sub;
    kp_bytes md = q->protocols.v[0].metadata;
    kp_subscription_decode((const uint8_t *)md.p, md.len > 0 ? (size_t)md.len : 0, KP_CONSUMER_LENIENT, &sub,
                           &r->arena, NULL);
    if (is_new) cg_member_append(cg, m);
    if (q->group_instance_id.len >= 0 && !m->instance_id)
        cg_member_set_instance(cg, m, q->group_instance_id.p, (size_t)q->group_instance_id.len);
    if (sub.rack_id.len > 0) {
        free(m->rack_id);
        m->rack_id = kp_str_dup(sub.rack_id);
    }
    if (q->rebalance_timeout_ms != -1) m->rebalance_timeout_ms = q->rebalance_timeout_ms;
    free(m->client_id);
    m->client_id = xstrdup(conn_client_id(r->c));
    if (!m->client_host) {
        char host[80];
        snprintf(host, sizeof host, "/%s", r->c->peer);
        char *colon = strrchr(host, ':');
        if (colon) *colon = 0;
        m->client_host = xstrdup(host);
    }
    if (sub.ntopics >= 0) cg_member_set_names(m, sub.topics, sub.ntopics);
    set_classic(m, q);
    cg_settle(s, g, m, topics, NULL, is_new);
    cg_parts owned = {0};
    if (sub.nowned > 0) owned_of(&sub, &owned);
    if (m->epoch != cg->assignment_epoch || m->state != CM_STABLE) cg_member_reconcile(g, m, &owned);
    cg_parts_free(&owned);
    /* the join timeout is done; the member has its rebalance timeout to sync, its session from now */
    int64_t now = clk_mono_ms();
    m->revoke_deadline_ms = now + (m->rebalance_timeout_ms > 0 ? m->rebalance_timeout_ms : 0);
    m->classic->awaiting_sync = true;
    m->session_deadline_ms = now + m->classic->session_timeout_ms;
    cg_deadline_note(cg, m->revoke_deadline_ms); /* the group's timer waits for the earliest noted */
    cg_deadline_note(cg, m->session_deadline_ms);
    cg_sync_state(g);
    grp_rearm(g);
    char *a = cg_parts_format(&m->assigned);
    log_info("group %s: classic member %s joined at epoch %d (group epoch %d), assigned [%s]", g->id, m->id, m->epoch,
             cg->group_epoch, a);
    free(a);
    cg_store_save(s, g);
    kp_join_group_response *resp = req_resp(r);
    resp->error_code = 0;
    resp->generation_id = m->epoch;
    resp->protocol_type = kp_str_c("consumer");
    resp->protocol_name = req_strf(r, "%s", m->classic->protocols[0].name);
    resp->leader = kp_str_c("");
    resp->member_id = req_strf(r, "%s", m->id);
    resp->members.n = 0;
    req_respond_after_commit(s, r, resp);
}

/* validateConsumerGroupMember and throwIfMemberDoesNotUseClassicProtocol */
static cmember *classic_member(req *r, group *g, kp_str member_id, kp_str instance_id, int16_t *err) {
    cgroup *cg = g->cg;
    cmember *m;
    if (instance_id.len < 0) {
        m = member_id.len > 0 ? cg_member_by_id(cg, member_id) : NULL;
        if (!m) {
            *err = KERR_UNKNOWN_MEMBER_ID;
            req_log_refusal(r, *err, "group %s: Member %.*s is not a member of group %s.", g->id,
                            member_id.len > 0 ? member_id.len : 0, member_id.p, g->id);
            return NULL;
        }
    } else {
        m = cg_member_by_instance(cg, instance_id);
        if (!m) {
            *err = KERR_UNKNOWN_MEMBER_ID;
            req_log_refusal(r, *err, "group %s: Member with instance id %.*s is not a member of group %s.", g->id,
                            instance_id.len, instance_id.p, g->id);
            return NULL;
        }
        if (member_id.len > 0 && !kp_str_eq(member_id, m->id)) {
            *err = KERR_FENCED_INSTANCE_ID;
            req_log_refusal(r, *err, "group %s: Static member %.*s with instance id %.*s was fenced by member %s.",
                            g->id, member_id.len, member_id.p, instance_id.len, instance_id.p, m->id);
            return NULL;
        }
    }
    if (!m->classic) {
        *err = KERR_UNKNOWN_MEMBER_ID;
        req_log_refusal(r, *err, "group %s: Member %s does not use the classic protocol.", g->id, m->id);
        return NULL;
    }
    return m;
}

static bool generation_matches(req *r, group *g, cmember *m, int32_t generation, int16_t *err) {
    if (generation == m->epoch) return true;
    *err = KERR_ILLEGAL_GENERATION;
    req_log_refusal(r, *err, "group %s: The request generation id %d is not equal to the member epoch %d of member %s.",
                    g->id, generation, m->epoch, m->id);
    return false;
}

/* scheduleConsumerGroupJoinTimeoutIfAbsent */
static void join_timeout(group *g, cmember *m) {
    if (m->revoke_deadline_ms && !m->classic->awaiting_sync) return;
    m->revoke_deadline_ms = clk_mono_ms() + (m->rebalance_timeout_ms > 0 ? m->rebalance_timeout_ms : 0);
    cg_deadline_note(g->cg, m->revoke_deadline_ms);
    m->classic->awaiting_sync = false;
    grp_rearm(g);
}

int16_t cg_classic_sync(srv *s, req *r, group *g, const kp_sync_group_request *q, kp_bytes *assignment) {
    int16_t err = 0;
    cmember *m = classic_member(r, g, q->member_id, q->group_instance_id, &err);
    if (!m || !generation_matches(r, g, m, q->generation_id, &err)) return err;
    const char *name = m->classic->nprotocols ? m->classic->protocols[0].name : "";
    if ((q->protocol_type.len >= 0 && !kp_str_eq(q->protocol_type, "consumer")) ||
        (q->protocol_name.len >= 0 && !kp_str_eq(q->protocol_name, name))) {
        req_log_refusal(r, KERR_INCONSISTENT_GROUP_PROTOCOL, "group %s: SyncGroup of member %s names protocol "
                        "%.*s/%.*s, its join was answered with consumer/%s", g->id, m->id,
                        q->protocol_type.len > 0 ? q->protocol_type.len : 0, q->protocol_type.p,
                        q->protocol_name.len > 0 ? q->protocol_name.len : 0, q->protocol_name.p, name);
        return KERR_INCONSISTENT_GROUP_PROTOCOL;
    }
    /* throwIfRebalanceInProgress: a member revoking has rejoined already; it finishes first */
    if (g->cg->group_epoch > m->epoch && m->state != CM_UNREVOKED_PARTITIONS) {
        join_timeout(g, m);
        req_log_refusal(r, KERR_REBALANCE_IN_PROGRESS, "group %s: A new rebalance is triggered in group %s and "
                        "member %s should rejoin to catch up.", g->id, g->id, m->id);
        return KERR_REBALANCE_IN_PROGRESS;
    }
    if (m->classic->awaiting_sync) m->revoke_deadline_ms = 0;
    m->session_deadline_ms = clk_mono_ms() + m->classic->session_timeout_ms;
    cg_deadline_note(g->cg, m->session_deadline_ms);
    grp_rearm(g);
    size_t len;
    uint8_t *bytes = cg_assignment_encode(&m->assigned, declared_version(&m->classic->protocols[0]), &len);
    void *copy = req_alloc(r, len);
    memcpy(copy, bytes, len);
    free(bytes);
    *assignment = (kp_bytes){copy, (int32_t)len};
    (void)s;
    return 0;
}

/* ConsumerGroup.waitingOnUnreleasedPartition: a partition of its target still held by another member. */
static bool waiting_on_unreleased(const cgroup *cg, const cmember *m) {
    for (int i = 0; i < m->target.n; i++)
        for (int k = 0; k < m->target.t[i].n; k++) {
            const char *t = m->target.t[i].topic;
            int32_t p = m->target.t[i].p[k];
            if (!cg_parts_has(&m->assigned, t, p) && cg_partition_epoch(cg, t, p) != -1) return true;
        }
    return false;
}

int16_t cg_classic_heartbeat(srv *s, req *r, group *g, int32_t generation, kp_str member_id, kp_str instance_id) {
    (void)s;
    int16_t err = 0;
    cmember *m = classic_member(r, g, member_id, instance_id, &err);
    if (!m || !generation_matches(r, g, m, generation, &err)) return err;
    m->session_deadline_ms = clk_mono_ms() + m->classic->session_timeout_ms;
    cg_deadline_note(g->cg, m->session_deadline_ms);
    grp_rearm(g);
    /* the member rejoins to catch up with the group epoch, to revoke, or to get partitions now free */
    if (m->epoch < g->cg->group_epoch || m->state == CM_UNREVOKED_PARTITIONS ||
        (m->state == CM_UNRELEASED_PARTITIONS && !waiting_on_unreleased(g->cg, m))) {
        join_timeout(g, m);
        return KERR_REBALANCE_IN_PROGRESS;
    }
    return 0;
}

int16_t cg_classic_leave(srv *s, req *r, group *g, kp_str member_id, kp_str instance_id) {
    int16_t err = 0;
    /* an administrative removal names the instance only */
    cmember *m = classic_member(r, g, instance_id.len >= 0 && member_id.len <= 0 ? KP_STR_NULL : member_id,
                                instance_id, &err);
    if (!m) return err;
    if (!cg_fence(s, g, m, "left the group (LeaveGroup)")) cg_store_save(s, g);
    grp_rearm(g);
    return 0;
}
