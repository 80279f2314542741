/*
 * What of a consumer group (KIP-848) survives a restart: the group and assignment epochs, the
 * assignor, the subscribed topics' partition counts, and every member with its epochs, state,
 * subscription (its regex and names too; a regex's topics are resolved again at the first
 * heartbeat, which changes nothing while the topics are the same) and partitions. Saved whole whenever a heartbeat or the timer changed any of it
 * (storage/stor_consumer_groups.c), inside the loop iteration's commit; loaded at start-up with
 * fresh session deadlines, so a member that keeps heartbeating with its epoch carries on as if
 * the broker had never stopped, as members of Kafka's coordinator do after a failover. Members on
 * the classic protocol (a group in the middle of KIP-848's online migration) keep their JoinGroup's
 * session timeout and protocols.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "consumer.h"
#include "kp_mem.h"
#include "log.h"
#include "srv.h"

/* Topic names are [a-zA-Z0-9._-] (Kafka's Topic.validate), so ':' ',' ';' separate safely. */
char *cg_parts_format(const cg_parts *p) {
    size_t cap = 16, len = 0;
    char *out = xmalloc(cap);
    out[0] = 0;
    for (int i = 0; i < p->n; i++) {
        size_t need = strlen(p->t[i].topic) + 2 + (size_t)p->t[i].n * 12 + 1;
        if (len + need >= cap) {
            cap = (len + need) * 2;
            out = xrealloc(out, cap);
        }
        len += (size_t)snprintf(out + len, cap - len, "%s%s:", i ? ";" : "", p->t[i].topic);
        for (int k = 0; k < p->t[i].n; k++)
            len += (size_t)snprintf(out + len, cap - len, "%s%d", k ? "," : "", p->t[i].p[k]);
    }
    return out;
}

void cg_parts_parse(cg_parts *p, const char *text) {
    char *copy = xstrdup(text ? text : ""), *save = NULL;
    for (char *tok = strtok_r(copy, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
        char *colon = strchr(tok, ':');
        if (!colon) continue;
        *colon = 0;
        char *save2 = NULL;
        for (char *n = strtok_r(colon + 1, ",", &save2); n; n = strtok_r(NULL, ",", &save2))
            cg_parts_add(p, tok, (int32_t)strtol(n, NULL, 10));
    }
    free(copy);
}

static char *join_topics(char **t, int n) {
    size_t len = 1;
    for (int i = 0; i < n; i++) len += strlen(t[i]) + 1;
    char *out = xmalloc(len);
    out[0] = 0;
    for (int i = 0; i < n; i++) {
        if (i) strcat(out, ",");
        strcat(out, t[i]);
    }
    return out;
}

static char *format_meta(const cgroup *cg) {
    size_t len = 1;
    for (int i = 0; i < cg->nmeta; i++) len += strlen(cg->meta[i].topic) + 13;
    char *out = xmalloc(len), *at = out;
    out[0] = 0;
    for (int i = 0; i < cg->nmeta; i++)
        at += snprintf(at, len - (size_t)(at - out), "%s%s:%d", i ? "," : "", cg->meta[i].topic, cg->meta[i].nparts);
    return out;
}

/*
 * A classic member's protocols (KIP-848's online migration) as one blob: per protocol a 2-byte
 * name length, the name, a 4-byte metadata length and the metadata, big-endian.
 */
static uint8_t *protocols_blob(const cm_classic *c, size_t *len) {
    size_t n = 0;
    for (int i = 0; i < c->nprotocols; i++) n += 2 + strlen(c->protocols[i].name) + 4 + c->protocols[i].len;
    uint8_t *out = xmalloc(n ? n : 1), *w = out;
    for (int i = 0; i < c->nprotocols; i++) {
        size_t nl = strlen(c->protocols[i].name), ml = c->protocols[i].len;
        *w++ = (uint8_t)(nl >> 8);
        *w++ = (uint8_t)nl;
        memcpy(w, c->protocols[i].name, nl);
        w += nl;
        for (int b = 3; b >= 0; b--) *w++ = (uint8_t)(ml >> (8 * b));
        memcpy(w, c->protocols[i].meta, ml);
        w += ml;
    }
    *len = n;
    return out;
}

static cm_classic *protocols_parse(const uint8_t *p, size_t len, int32_t session_timeout_ms) {
    cm_classic *c = xcalloc(1, sizeof *c);
    c->session_timeout_ms = session_timeout_ms;
    size_t at = 0;
    while (at + 2 <= len) {
        size_t nl = (size_t)p[at] << 8 | p[at + 1];
        if (at + 2 + nl + 4 > len) break;
        const uint8_t *q = p + at + 2 + nl;
        size_t ml = (size_t)q[0] << 24 | (size_t)q[1] << 16 | (size_t)q[2] << 8 | q[3];
        if (at + 2 + nl + 4 + ml > len) break;
        c->protocols = xrealloc(c->protocols, sizeof *c->protocols * (size_t)(c->nprotocols + 1));
        member_protocol *mp = &c->protocols[c->nprotocols++];
        mp->name = xmalloc(nl + 1);
        memcpy(mp->name, p + at + 2, nl);
        mp->name[nl] = 0;
        mp->len = ml;
        mp->meta = xmalloc(ml ? ml : 1);
        memcpy(mp->meta, q + 4, ml);
        at += 2 + nl + 4 + ml;
    }
    return c;
}

void cg_store_save(srv *s, group *g) {
    cgroup *cg = g->cg;
    stor_cmember *ms = xcalloc((size_t)cg->n + 1, sizeof *ms);
    char **texts = xcalloc((size_t)cg->n * 5 + 1, sizeof *texts);
    uint8_t **blobs = xcalloc((size_t)cg->n + 1, sizeof *blobs);
    for (int i = 0; i < cg->n; i++) {
        cmember *m = cg->m[i];
        char **x = &texts[5 * i];
        x[0] = join_topics(m->topics, m->ntopics);
        x[1] = cg_parts_format(&m->assigned);
        x[2] = cg_parts_format(&m->revoking);
        x[3] = cg_parts_format(&m->target);
        x[4] = m->regex ? join_topics(m->names, m->nnames) : NULL;
        ms[i] = (stor_cmember){m->id, m->instance_id, m->rack_id, m->client_id, m->client_host, m->server_assignor,
                               x[0], m->epoch, m->prev_epoch, (int32_t)m->state, m->rebalance_timeout_ms,
                               x[1], x[2], x[3], m->regex, x[4], 0, NULL, 0};
        if (m->classic) {
            blobs[i] = protocols_blob(m->classic, &ms[i].classic_protocols_len);
            ms[i].classic_protocols = blobs[i];
            ms[i].classic_session_timeout_ms = m->classic->session_timeout_ms;
        }
    }
    char *meta = format_meta(cg);
    stor_cgroup sg = {g->id, cg->group_epoch, cg->assignment_epoch, cg->assignor, meta};
    if (stor_consumer_group_save(s->st, &sg, ms, cg->n) != 0)
        log_error("group %s: saving the consumer group failed: %s", g->id, stor_errmsg(s->st));
    free(meta);
    for (int i = 0; i < cg->n * 5; i++) free(texts[i]);
    free(texts);
    for (int i = 0; i < cg->n; i++) free(blobs[i]);
    free(blobs);
    free(ms);
}

static void load_group(void *ctx, const stor_cgroup *sg) {
    srv *s = ctx;
    group *g = grp_get_or_create(s, sg->group_id, strlen(sg->group_id));
    if (!g->cg) g->cg = xcalloc(1, sizeof *g->cg);
    cgroup *cg = g->cg;
    cg->group_epoch = sg->group_epoch;
    cg->assignment_epoch = sg->assignment_epoch;
    cg->assignor = sg->assignor ? xstrdup(sg->assignor) : NULL;
    char *copy = xstrdup(sg->topics), *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *colon = strrchr(tok, ':');
        if (!colon) continue;
        *colon = 0;
        cg->meta = xrealloc(cg->meta, sizeof *cg->meta * (size_t)(cg->nmeta + 1));
        cg->meta[cg->nmeta++] = (cg_topic_meta){xstrdup(tok), (int32_t)strtol(colon + 1, NULL, 10)};
    }
    free(copy);
}

static char *dup_or_null(const char *v) { return v ? xstrdup(v) : NULL; }

static void split_topics(const char *text, char ***t, int *n) {
    char *copy = xstrdup(text), *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        *t = xrealloc(*t, sizeof **t * (size_t)(*n + 1));
        (*t)[(*n)++] = xstrdup(tok);
    }
    free(copy);
}

static void load_member(void *ctx, const char *group_id, const stor_cmember *sm) {
    srv *s = ctx;
    group *g = grp_find(s, group_id, strlen(group_id));
    if (!g || !g->cg) return;
    cgroup *cg = g->cg;
    cmember *m = xcalloc(1, sizeof *m);
    m->id = xstrdup(sm->member_id);
    m->instance_id = dup_or_null(sm->instance_id);
    m->rack_id = dup_or_null(sm->rack_id);
    m->client_id = xstrdup(sm->client_id);
    m->client_host = xstrdup(sm->client_host);
    m->server_assignor = dup_or_null(sm->server_assignor);
    split_topics(sm->topics, &m->topics, &m->ntopics);
    m->regex = dup_or_null(sm->regex);
    /* without a regex the names are the subscription (and rows from before schema 14 have none) */
    split_topics(m->regex && sm->names ? sm->names : sm->topics, &m->names, &m->nnames);
    m->epoch = sm->member_epoch;
    m->prev_epoch = sm->previous_epoch;
    m->state = sm->state >= CM_STABLE && sm->state <= CM_UNRELEASED_PARTITIONS ? (cm_state)sm->state : CM_STABLE;
    m->rebalance_timeout_ms = sm->rebalance_timeout_ms;
    cg_parts_parse(&m->assigned, sm->assigned);
    cg_parts_parse(&m->revoking, sm->revoking);
    cg_parts_parse(&m->target, sm->target);
    /* sessions start again at the restart, as Kafka's do when a coordinator loads a group */
    int64_t now = clk_mono_ms();
    m->session_deadline_ms = now + grp_consumer_settings_of(s, g->id, strlen(g->id)).session_timeout_ms;
    if (sm->classic_protocols) {
        /* a classic member: its own session timeout, and no join or sync timer until it is told to rejoin */
        m->classic = protocols_parse(sm->classic_protocols, sm->classic_protocols_len, sm->classic_session_timeout_ms);
        m->session_deadline_ms = now + sm->classic_session_timeout_ms;
    } else if (m->state == CM_UNREVOKED_PARTITIONS) {
        m->revoke_deadline_ms = now + m->rebalance_timeout_ms;
    }
    cg_member_add(cg, m);
    cg_deadline_note(cg, m->session_deadline_ms);
    cg_deadline_note(cg, m->revoke_deadline_ms);
}

int cg_store_load(srv *s) {
    stor_cgroup_load_cb cb = {s, load_group, load_member};
    if (stor_consumer_groups_load(s->st, &cb) != 0) return -1;
    for (group *g = s->groups; g; g = g->next)
        if (g->cg) {
            g->state = g->cg->n ? GS_STABLE : GS_EMPTY;
            log_info("group %s: consumer group loaded at epoch %d with %d members", g->id, g->cg->group_epoch,
                     g->cg->n);
        }
    return 0;
}
