/* Coordinator, committed offsets, partition ends and consumer-protocol bytes (group.h). */
#include "group.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kp_mem.h"

#define COORDINATOR_TRIES 20 /* 100 ms apart: a coordinator that is still loading answers soon */

void cli_tps_add(cli_tps *s, const char *topic, int32_t len, int32_t partition) {
    XGROW(s->v, s->cap, s->n + 1, 16);
    cli_tp *t = &s->v[s->n++];
    size_t l = len < 0 ? strlen(topic) : (size_t)len;
    t->topic = xmalloc(l + 1);
    memcpy(t->topic, topic, l);
    t->topic[l] = 0;
    t->partition = partition;
    t->leader = -1;
    t->committed = -1;
    t->offset = -1;
}

void cli_tps_free(cli_tps *s) {
    for (int i = 0; i < s->n; i++) free(s->v[i].topic);
    free(s->v);
    memset(s, 0, sizeof *s);
}

static int cmp_tp(const void *x, const void *y) {
    const cli_tp *a = x, *b = y;
    int c = strcmp(a->topic, b->topic);
    return c ? c : (a->partition > b->partition) - (a->partition < b->partition);
}

void cli_tps_sort(cli_tps *s) {
    if (s->n > 1) qsort(s->v, (size_t)s->n, sizeof *s->v, cmp_tp);
    int k = 0;
    for (int i = 0; i < s->n; i++) {
        if (k && !cmp_tp(&s->v[k - 1], &s->v[i])) {
            free(s->v[i].topic);
            continue;
        }
        s->v[k++] = s->v[i];
    }
    s->n = k;
}

cli_conn *cli_coordinator(cli_cluster *cl, const char *group, char *err, size_t n) {
    const kp_msg *m = &kp_msg_find_coordinator;
    char buf[512];
    for (int attempt = 0; attempt < COORDINATOR_TRIES; attempt++) {
        int16_t ver = cli_version(cl->boot, m, err, n);
        if (ver < 0) return NULL;
        kp_arena a = {0};
        kp_find_coordinator_request req;
        kp_defaults(m->req, ver, &req);
        kp_str key = kp_str_c(group);
        req.key = key; /* v0-3 */
        req.key_type = 0;
        req.coordinator_keys.n = 1; /* v4+ batches keys */
        req.coordinator_keys.v = &key;
        kp_find_coordinator_response resp;
        if (cli_call(cl->boot, m, ver, &req, &resp, &a, err, n) != 0) {
            kp_arena_free(&a);
            return NULL;
        }
        int16_t code = resp.error_code;
        kp_str msg = resp.error_message;
        int32_t node = resp.node_id;
        if (ver >= 4) {
            if (resp.coordinators.n != 1) {
                snprintf(err, n, "%s: FindCoordinator answered %d coordinators for 1", cl->boot->addr,
                         resp.coordinators.n);
                kp_arena_free(&a);
                return NULL;
            }
            code = resp.coordinators.v[0].error_code;
            msg = resp.coordinators.v[0].error_message;
            node = resp.coordinators.v[0].node_id;
        }
        if (code == KERR_COORDINATOR_NOT_AVAILABLE || code == KERR_COORDINATOR_LOAD_IN_PROGRESS) {
            kp_arena_free(&a);
            nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
            continue;
        }
        if (code) {
            snprintf(err, n, "group %s: FindCoordinator: %s", group, cli_err_text(code, msg, buf, sizeof buf));
            kp_arena_free(&a);
            return NULL;
        }
        kp_arena_free(&a);
        /* the coordinator is one of the brokers Metadata lists */
        bool known = false;
        for (int i = 0; i < cl->nb; i++) known |= cl->b[i].id == node;
        if (!known) {
            kp_metadata_response md;
            kp_arena ma = {0};
            int rc = cli_metadata(cl, NULL, &md, &ma, err, n);
            kp_arena_free(&ma);
            if (rc) return NULL;
        }
        return cli_node(cl, node, err, n);
    }
    snprintf(err, n, "group %s: FindCoordinator: %s after %d tries", group,
             kp_err_name(KERR_COORDINATOR_NOT_AVAILABLE), COORDINATOR_TRIES);
    return NULL;
}

int cli_tps_leaders(cli_cluster *cl, cli_tps *s, char *err, size_t n) {
    kp_arena a = {0};
    kp_metadata_response md;
    int rc = cli_metadata(cl, NULL, &md, &a, err, n);
    for (int i = 0; !rc && i < s->n; i++) {
        cli_tp *tp = &s->v[i];
        const kp_metadata_response_topic *t = NULL;
        for (int32_t j = 0; j < md.topics.n && !t; j++)
            if (kp_str_eq(md.topics.v[j].name, tp->topic)) t = &md.topics.v[j];
        if (!t || t->error_code) continue;
        for (int32_t j = 0; j < t->partitions.n; j++)
            if (t->partitions.v[j].partition_index == tp->partition) tp->leader = t->partitions.v[j].leader_id;
    }
    kp_arena_free(&a);
    return rc;
}

int cli_tps_of_topic(cli_cluster *cl, cli_tps *s, const char *topic, long partition, char *err, size_t n) {
    kp_arena a = {0};
    kp_metadata_response md;
    char buf[256];
    int rc = cli_metadata(cl, topic, &md, &a, err, n);
    const kp_metadata_response_topic *t = !rc && md.topics.n == 1 ? &md.topics.v[0] : NULL;
    if (!rc && (!t || t->error_code || t->partitions.n <= 0)) {
        snprintf(err, n, "%s: %s", topic,
                 cli_err_text(t && t->error_code ? t->error_code : KERR_UNKNOWN_TOPIC_OR_PARTITION, KP_STR_NULL, buf,
                              sizeof buf));
        rc = -1;
    }
    int before = s->n;
    for (int32_t j = 0; !rc && j < t->partitions.n; j++) {
        const kp_metadata_response_partition *p = &t->partitions.v[j];
        if (partition >= 0 && p->partition_index != partition) continue;
        cli_tps_add(s, topic, -1, p->partition_index);
        s->v[s->n - 1].leader = p->leader_id;
    }
    if (!rc && s->n == before) {
        snprintf(err, n, "%s partition %ld: %s (the topic has %d partitions)", topic, partition,
                 kp_err_name(KERR_UNKNOWN_TOPIC_OR_PARTITION), t->partitions.n);
        rc = -1;
    }
    kp_arena_free(&a);
    return rc;
}

int cli_tps_list_offsets(cli_cluster *cl, cli_tps *s, int64_t ts, bool strict, char *err, size_t n) {
    const kp_msg *m = &kp_msg_list_offsets;
    char buf[512];
    for (int i = 0; i < s->n; i++) {
        cli_tp *tp = &s->v[i];
        kp_arena a = {0};
        cli_conn *c = tp->leader >= 0 ? cli_node(cl, tp->leader, err, n) : NULL;
        if (tp->leader < 0) snprintf(err, n, "%s partition %d: %s", tp->topic, tp->partition,
                                     kp_err_name(KERR_LEADER_NOT_AVAILABLE));
        int16_t ver = c ? cli_version(c, m, err, n) : -1;
        if (ver == 0 && ts >= 0) { /* v0 answers offsets before a time, not the first record at it */
            snprintf(err, n, "%s serves ListOffsets v0 only: no @timestamp", c->addr);
            ver = -1;
        }
        if (ver < 0 && !strict) {
            tp->offset = -1;
            continue;
        }
        if (ver < 0) return -1;
        kp_list_offsets_request req;
        kp_defaults(m->req, ver, &req);
        kp_list_offsets_topic t;
        kp_defaults(&kp_list_offsets_topic_schema, ver, &t);
        kp_list_offsets_partition lp;
        kp_defaults(&kp_list_offsets_partition_schema, ver, &lp);
        lp.partition_index = tp->partition;
        lp.current_leader_epoch = -1;
        lp.timestamp = ts;
        lp.max_num_offsets = 1;
        t.name = kp_str_c(tp->topic);
        t.partitions.n = 1;
        t.partitions.v = &lp;
        req.replica_id = -1;
        req.topics.n = 1;
        req.topics.v = &t;
        req.timeout_ms = cl->o->timeout_ms;
        kp_list_offsets_response resp;
        int rc = cli_call(c, m, ver, &req, &resp, &a, err, n);
        const kp_list_offsets_partition_response *r =
            !rc && resp.topics.n == 1 && resp.topics.v[0].partitions.n == 1 ? &resp.topics.v[0].partitions.v[0] : NULL;
        if (!rc && !r) snprintf(err, n, "%s: ListOffsets answered no partition", c->addr);
        else if (r && r->error_code)
            snprintf(err, n, "%s partition %d: ListOffsets: %s", tp->topic, tp->partition,
                     cli_err_text(r->error_code, KP_STR_NULL, buf, sizeof buf));
        else if (r) tp->offset = ver >= 1 ? r->offset : r->old_style_offsets.n > 0 ? r->old_style_offsets.v[0] : -1;
        bool ok = r && !r->error_code;
        kp_arena_free(&a);
        if (!ok && rc == 0 && !strict) tp->offset = -1; /* a transport failure ends it either way */
        else if (!ok) return -1;
    }
    return 0;
}

/* The committed offset of (topic, partition) from an OffsetFetch answer's partition. */
static void take_committed(cli_tps *s, bool all, kp_str topic, int32_t partition, int64_t off) {
    if (off < 0) return;
    for (int i = 0; i < s->n; i++)
        if (s->v[i].partition == partition && kp_str_eq(topic, s->v[i].topic)) {
            s->v[i].committed = off;
            return;
        }
    if (!all) return;
    cli_tps_add(s, topic.p, topic.len, partition);
    s->v[s->n - 1].committed = off;
}

int cli_offset_fetch(cli_conn *c, const char *group, cli_tps *s, bool all, char *err, size_t n) {
    const kp_msg *m = &kp_msg_offset_fetch;
    int16_t ver = cli_version(c, m, err, n);
    if (ver < 0) return -1;
    if (ver < 2 && all) {
        snprintf(err, n, "%s serves OffsetFetch up to v%d, which cannot ask for every topic", c->addr, ver);
        return -1;
    }
    char buf[512];
    kp_arena a = {0};
    kp_offset_fetch_request req;
    kp_defaults(m->req, ver, &req);
    /* one entry per topic in s, its partitions listed */
    int nt = 0;
    kp_offset_fetch_request_topic *t = kp_arena_alloc(&a, sizeof *t * (size_t)(s->n + 1));
    kp_offset_fetch_request_topics *t8 = kp_arena_alloc(&a, sizeof *t8 * (size_t)(s->n + 1));
    for (int i = 0; !all && i < s->n; i++) {
        int j = 0;
        while (j < nt && !kp_str_eq(t[j].name, s->v[i].topic)) j++;
        if (j == nt) {
            t[nt].name = t8[nt].name = kp_str_c(s->v[i].topic);
            t[nt].partition_indexes.v = kp_arena_alloc(&a, sizeof(int32_t) * (size_t)s->n);
            t8[nt].partition_indexes.v = t[nt].partition_indexes.v;
            nt++;
        }
        t[j].partition_indexes.v[t[j].partition_indexes.n++] = s->v[i].partition;
        t8[j].partition_indexes.n = t[j].partition_indexes.n;
    }
    kp_offset_fetch_request_group g;
    kp_defaults(&kp_offset_fetch_request_group_schema, ver, &g);
    g.group_id = req.group_id = kp_str_c(group);
    g.topics.n = req.topics.n = all ? -1 : nt; /* null: every topic */
    g.topics.v = t8;
    req.topics.v = t;
    req.groups.n = 1; /* v8+ */
    req.groups.v = &g;
    kp_offset_fetch_response resp;
    int rc = cli_call(c, m, ver, &req, &resp, &a, err, n);
    int16_t code = rc ? 0 : ver >= 8 ? (resp.groups.n == 1 ? resp.groups.v[0].error_code : KERR_UNKNOWN_SERVER_ERROR)
                                     : resp.error_code;
    if (!rc && code) {
        snprintf(err, n, "group %s: OffsetFetch: %s", group, cli_err_text(code, KP_STR_NULL, buf, sizeof buf));
        rc = -1;
    }
    if (!rc && ver >= 8) {
        for (int32_t i = 0; i < resp.groups.v[0].topics.n; i++)
            for (int32_t j = 0; j < resp.groups.v[0].topics.v[i].partitions.n; j++) {
                const kp_offset_fetch_response_partitions *p = &resp.groups.v[0].topics.v[i].partitions.v[j];
                if (!p->error_code)
                    take_committed(s, all, resp.groups.v[0].topics.v[i].name, p->partition_index, p->committed_offset);
            }
    } else if (!rc) {
        for (int32_t i = 0; i < resp.topics.n; i++)
            for (int32_t j = 0; j < resp.topics.v[i].partitions.n; j++) {
                const kp_offset_fetch_response_partition *p = &resp.topics.v[i].partitions.v[j];
                if (!p->error_code)
                    take_committed(s, all, resp.topics.v[i].name, p->partition_index, p->committed_offset);
            }
    }
    kp_arena_free(&a);
    return rc;
}

int cli_offset_commit(cli_conn *c, const char *group, int32_t generation, const char *member, const cli_tps *s,
                      int16_t *code, char *err, size_t n) {
    const kp_msg *m = &kp_msg_offset_commit;
    *code = 0;
    int16_t ver = cli_version(c, m, err, n);
    if (ver < 0) return -1;
    if (ver < 1) { /* v0 commits to ZooKeeper on an old broker */
        snprintf(err, n, "%s serves OffsetCommit v0 only", c->addr);
        return -1;
    }
    char buf[512];
    kp_arena a = {0};
    kp_offset_commit_request req;
    kp_defaults(m->req, ver, &req);
    req.group_id = kp_str_c(group);
    req.generation_id_or_member_epoch = generation;
    req.member_id = kp_str_c(member);
    kp_offset_commit_request_topic *t = kp_arena_alloc(&a, sizeof *t * (size_t)(s->n + 1));
    int nt = 0;
    for (int i = 0; i < s->n; i++) {
        int j = 0;
        while (j < nt && !kp_str_eq(t[j].name, s->v[i].topic)) j++;
        if (j == nt) {
            kp_defaults(&kp_offset_commit_request_topic_schema, ver, &t[nt]);
            t[nt].name = kp_str_c(s->v[i].topic);
            t[nt].partitions.v = kp_arena_alloc(&a, sizeof *t[nt].partitions.v * (size_t)s->n);
            nt++;
        }
        kp_offset_commit_request_partition *p = &t[j].partitions.v[t[j].partitions.n++];
        kp_defaults(&kp_offset_commit_request_partition_schema, ver, p);
        p->partition_index = s->v[i].partition;
        p->committed_offset = s->v[i].offset;
        p->committed_metadata = kp_str_c("");
    }
    req.topics.n = nt;
    req.topics.v = t;
    kp_offset_commit_response resp;
    int rc = cli_call(c, m, ver, &req, &resp, &a, err, n);
    for (int32_t i = 0; !rc && i < resp.topics.n; i++)
        for (int32_t j = 0; !rc && j < resp.topics.v[i].partitions.n; j++) {
            const kp_offset_commit_response_partition *p = &resp.topics.v[i].partitions.v[j];
            if (!p->error_code) continue;
            *code = p->error_code;
            const char *why = p->error_code == KERR_UNKNOWN_MEMBER_ID && !*member
                                  ? " (the group has active members: Kafka takes offsets without a member only "
                                    "from a group with none)"
                                  : "";
            snprintf(err, n, "group %s: OffsetCommit %.*s partition %d: %s%s", group, (int)resp.topics.v[i].name.len,
                     resp.topics.v[i].name.p, p->partition_index,
                     cli_err_text(p->error_code, KP_STR_NULL, buf, sizeof buf), why);
            rc = -1;
        }
    kp_arena_free(&a);
    return rc;
}

static void wr_str(kp_writer *w, const char *s, size_t len) {
    kp_wr_i16(w, (int16_t)len);
    kp_wr_raw(w, s, len);
}

/* [topic string, partitions []int32] for each topic of s (sorted): the owned/assigned layout */
static void wr_topic_partitions(kp_writer *w, const cli_tps *s) {
    int nt = 0;
    for (int i = 0; i < s->n; i++) nt += !i || strcmp(s->v[i].topic, s->v[i - 1].topic);
    kp_wr_i32(w, nt);
    for (int i = 0; i < s->n;) {
        int j = i;
        while (j < s->n && !strcmp(s->v[j].topic, s->v[i].topic)) j++;
        wr_str(w, s->v[i].topic, strlen(s->v[i].topic));
        kp_wr_i32(w, j - i);
        for (int k = i; k < j; k++) kp_wr_i32(w, s->v[k].partition);
        i = j;
    }
}

void cli_subscription_write(kp_writer *w, const char *const *topics, int ntopics, const cli_tps *owned,
                            int32_t generation) {
    kp_wr_i16(w, 3);
    kp_wr_i32(w, ntopics);
    for (int i = 0; i < ntopics; i++) wr_str(w, topics[i], strlen(topics[i]));
    kp_wr_i32(w, -1); /* user_data: null */
    wr_topic_partitions(w, owned);
    kp_wr_i32(w, generation);
    kp_wr_i16(w, -1); /* rack_id: null */
}

void cli_assignment_write(kp_writer *w, const cli_tps *s) {
    kp_wr_i16(w, 3);
    wr_topic_partitions(w, s);
    kp_wr_i32(w, -1); /* user_data: null */
}
