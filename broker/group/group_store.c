/*
 * Persistence of groups and offsets. A group is saved when it becomes Stable
 * (with every member's assignment) or Empty, and when a static member is
 * replaced; committed offsets are written with the commit and answered only
 * after the storage commit. After a restart a Stable group comes back with
 * its members, whose sessions restart: members that keep heartbeating carry
 * on without a rebalance, the others expire.
 */
#include "group_store.h"

#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "consumer.h"
#include "kp_mem.h"
#include "log.h"

void grp_store_save(srv *s, group *g) {
    stor_member *ms = xcalloc((size_t)g->nmembers + 1, sizeof *ms);
    int n = 0;
    for (member *m = g->members; m; m = m->next, n++) {
        const member_protocol *p = NULL;
        for (int i = 0; g->protocol_name && i < m->nprotocols; i++)
            if (strcmp(m->protocols[i].name, g->protocol_name) == 0) p = &m->protocols[i];
        ms[n] = (stor_member){m->id, m->instance_id, m->client_id, m->client_host, m->session_timeout_ms,
                              m->rebalance_timeout_ms, p ? p->meta : NULL, p ? p->len : 0, m->assignment,
                              m->assignment_len};
    }
    stor_group sg = {g->id, g->protocol_type, g->protocol_name, g->generation, g->leader, (int32_t)g->state, g->state_ms};
    if (stor_group_save(s->st, &sg, ms, n) != 0)
        log_error("group %s: saving state failed: %s", g->id, stor_errmsg(s->st));
    free(ms);
}

void grp_store_forget_classic(srv *s, group *g) {
    if (stor_group_delete(s->st, g->id) != 0) log_error("group %s: deleting its classic state failed: %s", g->id,
                                                        stor_errmsg(s->st));
}

int grp_store_delete(srv *s, group *g) {
    if (stor_consumer_group_delete(s->st, g->id) != 0) {
        log_error("group %s: deleting failed: %s", g->id, stor_errmsg(s->st));
        return -1;
    }
    if (stor_group_delete(s->st, g->id) != 0 || stor_offsets_delete_group(s->st, g->id) < 0) {
        log_error("group %s: deleting failed: %s", g->id, stor_errmsg(s->st));
        return -1;
    }
    return 0;
}

/* ---- offsets in memory ---- */

committed_offset *grp_offset_get(group *g, const char *topic, size_t topic_len, int32_t partition) {
    for (int i = 0; i < g->noffsets; i++) {
        committed_offset *o = &g->offsets[i];
        if (o->partition == partition && strlen(o->topic) == topic_len && memcmp(o->topic, topic, topic_len) == 0)
            return o;
    }
    return NULL;
}

/* The group's in-memory commit of (topic, partition), made or replaced; returns it. */
static committed_offset *put_memory(group *g, const char *topic, int32_t partition, int64_t offset,
                                    int32_t leader_epoch, kp_str metadata, int64_t commit_ms, int64_t expire_ms) {
    committed_offset *o = grp_offset_get(g, topic, strlen(topic), partition);
    if (!o) {
        XGROW(g->offsets, g->cap_offsets, g->noffsets + 1, 16);
        o = &g->offsets[g->noffsets++];
        o->topic = xstrdup(topic);
        o->partition = partition;
        o->metadata = NULL;
    }
    free(o->metadata);
    if (metadata.len < 0) metadata = (kp_str){"", 0};
    o->metadata = kp_str_dup(metadata);
    o->metadata_len = metadata.len;
    o->offset = offset;
    o->leader_epoch = leader_epoch;
    o->commit_ms = commit_ms;
    o->expire_ms = expire_ms;
    return o;
}

void grp_offset_put(srv *s, group *g, const char *topic, int32_t partition, int64_t offset, int32_t leader_epoch,
                    kp_str metadata, int64_t expire_ms) {
    int64_t now = clk_now_ms();
    committed_offset *o = put_memory(g, topic, partition, offset, leader_epoch, metadata, now, expire_ms);
    stor_offset so = {g->id, topic, partition, offset, leader_epoch, o->metadata, o->metadata_len, now, expire_ms};
    /* one line per transaction: after the first failure every later write of it fails the same way */
    if (stor_offset_commit(s->st, &so) != 0 && !s->offset_error_logged) {
        s->offset_error_logged = true;
        log_error("group %s: storing offset %s-%d failed: %s (the commit will fail; its offset commits are answered "
                  "then)", g->id, topic, partition, stor_errmsg(s->st));
    }
}

void grp_offset_remove(srv *s, group *g, size_t i) {
    committed_offset *o = &g->offsets[i];
    stor_offset_delete(s->st, g->id, o->topic, o->partition);
    free(o->topic);
    free(o->metadata);
    g->offsets[i] = g->offsets[--g->noffsets];
}

void grp_forget_topic(srv *s, const char *topic) {
    for (group *g = s->groups; g; g = g->next)
        for (int i = 0; i < g->noffsets;) {
            if (strcmp(g->offsets[i].topic, topic) == 0) {
                free(g->offsets[i].topic);
                free(g->offsets[i].metadata);
                g->offsets[i] = g->offsets[--g->noffsets];
            } else {
                i++;
            }
        }
    stor_offsets_delete_topic(s->st, topic);
}

/* ---- load ---- */

static void load_group(void *ctx, const stor_group *sg) {
    srv *s = ctx;
    group *g = grp_get_or_create(s, sg->group_id, strlen(sg->group_id));
    g->protocol_type = sg->protocol_type ? xstrdup(sg->protocol_type) : NULL;
    g->protocol_name = sg->protocol_name ? xstrdup(sg->protocol_name) : NULL;
    g->generation = sg->generation;
    g->leader = sg->leader ? xstrdup(sg->leader) : NULL;
    /* only Stable and Empty are saved; anything else restarts as Empty */
    g->state = sg->state == GS_STABLE ? GS_STABLE : GS_EMPTY;
    g->state_ms = sg->state_ms;
}

static void load_member(void *ctx, const char *group_id, const stor_member *sm) {
    srv *s = ctx;
    group *g = grp_find(s, group_id, strlen(group_id));
    if (!g || g->state != GS_STABLE) return;
    member *m = xcalloc(1, sizeof *m);
    m->id = xstrdup(sm->member_id);
    m->instance_id = sm->instance_id ? xstrdup(sm->instance_id) : NULL;
    m->client_id = xstrdup(sm->client_id ? sm->client_id : "");
    m->client_host = xstrdup(sm->client_host ? sm->client_host : "");
    m->session_timeout_ms = sm->session_timeout_ms;
    m->rebalance_timeout_ms = sm->rebalance_timeout_ms;
    m->nprotocols = 1;
    m->protocols = xcalloc(1, sizeof *m->protocols);
    m->protocols[0].name = xstrdup(g->protocol_name ? g->protocol_name : "");
    m->protocols[0].len = sm->metadata_len;
    m->protocols[0].meta = xmalloc(sm->metadata_len ? sm->metadata_len : 1);
    if (sm->metadata_len) memcpy(m->protocols[0].meta, sm->metadata, sm->metadata_len);
    if (sm->assignment_len) {
        m->assignment = xmalloc(sm->assignment_len);
        memcpy(m->assignment, sm->assignment, sm->assignment_len);
        m->assignment_len = sm->assignment_len;
    }
    m->deadline_ms = clk_mono_ms() + m->session_timeout_ms;
    member **pp = &g->members;
    while (*pp) pp = &(*pp)->next;
    *pp = m;
    g->nmembers++;
}

static void load_offset(void *ctx, const stor_offset *so) {
    srv *s = ctx;
    group *g = grp_get_or_create(s, so->group_id, strlen(so->group_id));
    put_memory(g, so->topic, so->partition, so->offset, so->leader_epoch, (kp_str){so->metadata, so->metadata_len},
               so->commit_ms, so->expire_ms);
}

void grp_reload_offsets(srv *s) {
    for (group *g = s->groups; g; g = g->next) {
        for (int i = 0; i < g->noffsets; i++) {
            free(g->offsets[i].topic);
            free(g->offsets[i].metadata);
        }
        g->noffsets = 0;
    }
    if (stor_offsets_load(s->st, load_offset, s) != 0)
        log_error("groups: reading the committed offsets again failed: %s", stor_errmsg(s->st));
}

int grp_load(srv *s) {
    stor_group_load_cb cb = {s, load_group, load_member};
    if (stor_groups_load(s->st, &cb) != 0) return -1;
    if (cg_store_load(s) != 0) return -1;
    if (stor_offsets_load(s->st, load_offset, s) != 0) return -1;
    for (group *g = s->groups; g; g = g->next) {
        if (g->state == GS_STABLE && !g->members && !g->cg) g->state = GS_EMPTY;
        grp_rearm(g);
    }
    return 0;
}

/*
 * Offset retention as Kafka 2.1+ does it (KIP-211): a group with a protocol
 * type keeps its offsets until it has been Empty for offsets.retention.minutes;
 * a simple group's offsets expire one by one, that long after their commit;
 * an explicit expire time (OffsetCommit v2-v4 retention_time_ms) wins. An Empty
 * group whose last offset went is removed.
 */
void grp_expire_offsets(srv *s) {
    int64_t now = clk_now_ms();
    int64_t keep = s->cfg->offsets_retention_minutes * 60000;
    group *g = s->groups;
    while (g) {
        group *next = g->next;
        if (g->state == GS_EMPTY) {
            bool simple = !g->protocol_type || !*g->protocol_type;
            int expired = 0;
            for (int i = 0; i < g->noffsets;) {
                committed_offset *o = &g->offsets[i];
                int64_t base = simple ? o->commit_ms : g->state_ms;
                bool gone = o->expire_ms >= 0 ? now >= o->expire_ms : now - base >= keep;
                if (gone) {
                    grp_offset_remove(s, g, (size_t)i);
                    expired++;
                } else {
                    i++;
                }
            }
            if (expired) log_info("group %s: %d committed offsets expired", g->id, expired);
            if (g->noffsets == 0 && !g->members && !g->pending) {
                log_info("group %s: empty and without offsets, removed", g->id);
                grp_delete(s, g);
            }
        }
        g = next;
    }
}
