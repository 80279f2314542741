/* A consumer-group member for `consume -g` (member.h). */
#include "member.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"

#define SESSION_TIMEOUT_MS 45000   /* Kafka 3.0+'s consumer default */
#define REBALANCE_TIMEOUT_MS 30000 /* how long the coordinator waits for members to join again */
#define HEARTBEAT_MS 3000
#define PROTOCOL "range"
#define JOIN_TRIES 50

/* The coordinator moved or is still loading its partition of __consumer_offsets (a Kafka that
 * just started answers so for seconds): find it again and join again, as every client does. */
static bool coordinator_code(int16_t e) {
    return e == KERR_NOT_COORDINATOR || e == KERR_COORDINATOR_NOT_AVAILABLE || e == KERR_COORDINATOR_LOAD_IN_PROGRESS;
}

static bool rejoin_code(int16_t e) {
    return e == KERR_REBALANCE_IN_PROGRESS || e == KERR_ILLEGAL_GENERATION || e == KERR_UNKNOWN_MEMBER_ID ||
           coordinator_code(e);
}

typedef struct sub {
    kp_str member_id;
    kp_subscription s;
    cli_tps mine;
} sub;

static int cmp_sub(const void *x, const void *y) {
    const sub *a = x, *b = y;
    int32_t l = a->member_id.len < b->member_id.len ? a->member_id.len : b->member_id.len;
    int c = l > 0 ? memcmp(a->member_id.p, b->member_id.p, (size_t)l) : 0;
    return c ? c : (a->member_id.len > b->member_id.len) - (a->member_id.len < b->member_id.len);
}

/* The leader's range assignment, as Kafka's RangeAssignor: per topic, the members that
 * subscribe to it in member-id order each get a contiguous share, the first ones one more. */
static int assign(cli_member *m, const kp_join_group_response *jr, kp_sync_group_request_assignment *out,
                  kp_arena *a, char *err, size_t n) {
    int32_t nm = jr->members.n;
    sub *subs = kp_arena_alloc(a, sizeof *subs * (size_t)(nm + 1));
    for (int32_t i = 0; i < nm; i++) {
        subs[i].member_id = jr->members.v[i].member_id;
        const kp_bytes *md = &jr->members.v[i].metadata;
        kp_subscription_decode((const uint8_t *)md->p, md->len > 0 ? (size_t)md->len : 0, KP_CONSUMER_LENIENT,
                               &subs[i].s, a, NULL);
    }
    qsort(subs, (size_t)nm, sizeof *subs, cmp_sub);
    kp_metadata_response md;
    if (cli_metadata(m->cl, NULL, &md, a, err, n) != 0) return -1;
    for (int32_t t = 0; t < md.topics.n; t++) {
        const kp_metadata_response_topic *tp = &md.topics.v[t];
        if (tp->error_code || tp->name.len <= 0) continue;
        int32_t k = 0, *idx = kp_arena_alloc(a, sizeof *idx * (size_t)(nm + 1));
        for (int32_t i = 0; i < nm; i++)
            for (int32_t j = 0; j < subs[i].s.ntopics; j++)
                if (subs[i].s.topics[j].len == tp->name.len && !memcmp(subs[i].s.topics[j].p, tp->name.p, (size_t)tp->name.len)) {
                    idx[k++] = i;
                    break;
                }
        int32_t np = tp->partitions.n;
        for (int32_t x = 0, next = 0; x < k; x++) {
            int32_t cnt = np / k + (x < np % k);
            for (int32_t p = next; p < next + cnt; p++) cli_tps_add(&subs[idx[x]].mine, tp->name.p, tp->name.len, p);
            next += cnt;
        }
    }
    for (int32_t i = 0; i < nm; i++) {
        kp_writer w;
        kp_writer_init(&w, 64);
        cli_tps_sort(&subs[i].mine);
        cli_assignment_write(&w, &subs[i].mine);
        char *bytes = kp_arena_alloc(a, w.len);
        memcpy(bytes, w.buf, w.len);
        out[i].member_id = subs[i].member_id;
        out[i].assignment = (kp_bytes){bytes, (int32_t)w.len};
        kp_writer_free(&w);
        cli_tps_free(&subs[i].mine);
    }
    return 0;
}

static int join_once(cli_member *m, kp_arena *a, kp_join_group_response *jr, char *err, size_t n) {
    const kp_msg *jm = &kp_msg_join_group;
    int16_t ver = cli_version(m->coord, jm, err, n);
    if (ver < 0) return -1;
    kp_writer w;
    kp_writer_init(&w, 64);
    const char *topics[1] = {m->topic};
    cli_subscription_write(&w, topics, 1, &m->assigned, m->generation);
    char *meta = kp_arena_alloc(a, w.len);
    memcpy(meta, w.buf, w.len);
    kp_join_group_request_protocol proto = {kp_str_c(PROTOCOL), {meta, (int32_t)w.len}};
    kp_writer_free(&w);
    kp_join_group_request req;
    kp_defaults(jm->req, ver, &req);
    req.group_id = kp_str_c(m->group);
    req.session_timeout_ms = SESSION_TIMEOUT_MS;
    req.rebalance_timeout_ms = REBALANCE_TIMEOUT_MS;
    req.member_id = kp_str_c(m->member_id);
    req.protocol_type = kp_str_c("consumer");
    req.protocols.n = 1;
    req.protocols.v = &proto;
    m->coord->wait_ms = REBALANCE_TIMEOUT_MS; /* the coordinator answers once every member has joined */
    int rc = cli_call(m->coord, jm, ver, &req, jr, a, err, n);
    m->coord->wait_ms = 0;
    return rc;
}

static int sync_group(cli_member *m, const kp_join_group_response *jr, kp_arena *a, char *err, size_t n) {
    const kp_msg *sm = &kp_msg_sync_group;
    char buf[512];
    int16_t ver = cli_version(m->coord, sm, err, n);
    if (ver < 0) return -1;
    kp_sync_group_request req;
    kp_defaults(sm->req, ver, &req);
    req.group_id = kp_str_c(m->group);
    req.generation_id = m->generation;
    req.member_id = kp_str_c(m->member_id);
    req.protocol_type = kp_str_c("consumer");
    req.protocol_name = jr->protocol_name;
    if (kp_str_eq(jr->leader, m->member_id) && !jr->skip_assignment) {
        req.assignments.v = kp_arena_alloc(a, sizeof *req.assignments.v * (size_t)(jr->members.n + 1));
        if (assign(m, jr, req.assignments.v, a, err, n) != 0) return -1;
        req.assignments.n = jr->members.n;
    }
    kp_sync_group_response resp;
    m->coord->wait_ms = REBALANCE_TIMEOUT_MS; /* followers wait for the leader's assignment */
    int rc = cli_call(m->coord, sm, ver, &req, &resp, a, err, n);
    m->coord->wait_ms = 0;
    if (rc) return -1;
    if (coordinator_code(resp.error_code)) return 2;
    if (rejoin_code(resp.error_code)) return 1;
    if (resp.error_code) {
        snprintf(err, n, "group %s: SyncGroup: %s", m->group, cli_err_text(resp.error_code, KP_STR_NULL, buf, sizeof buf));
        return -1;
    }
    cli_tps_free(&m->assigned);
    if (resp.assignment.len <= 0) return 0; /* nothing assigned */
    kp_assignment as;
    kp_consumer_error ce;
    if (!kp_assignment_decode((const uint8_t *)resp.assignment.p, (size_t)resp.assignment.len, KP_CONSUMER_STRICT, &as,
                              a, &ce)) {
        char why[256];
        kp_consumer_error_format(&ce, "ConsumerProtocolAssignment", as.version, (size_t)resp.assignment.len, why,
                                 sizeof why);
        snprintf(err, n, "group %s: the leader's assignment cannot be read: %s", m->group, why);
        return -1;
    }
    for (int32_t t = 0; t < as.nassigned; t++)
        if (kp_str_eq(as.assigned[t].topic, m->topic))
            for (int32_t k = 0; k < as.assigned[t].n; k++) cli_tps_add(&m->assigned, m->topic, -1, as.assigned[t].partitions[k]);
    cli_tps_sort(&m->assigned);
    return m->assigned.n ? cli_tps_leaders(m->cl, &m->assigned, err, n) : 0;
}

int cli_member_join(cli_member *m, char *err, size_t n) {
    char buf[512];
    for (int attempt = 0; attempt < JOIN_TRIES; attempt++) {
        if (!m->coord && !(m->coord = cli_coordinator(m->cl, m->group, err, n))) return -1;
        kp_arena a = {0};
        kp_join_group_response jr;
        if (join_once(m, &a, &jr, err, n) != 0) {
            kp_arena_free(&a);
            return -1;
        }
        int16_t e = jr.error_code;
        if (e == KERR_MEMBER_ID_REQUIRED || e == KERR_UNKNOWN_MEMBER_ID) { /* KIP-394: join again with the id given */
            snprintf(m->member_id, sizeof m->member_id, "%.*s", e == KERR_UNKNOWN_MEMBER_ID ? 0 : (int)jr.member_id.len,
                     jr.member_id.p);
            m->generation = -1;
            kp_arena_free(&a);
            continue;
        }
        if (e == KERR_REBALANCE_IN_PROGRESS || coordinator_code(e)) {
            kp_arena_free(&a);
            if (coordinator_code(e)) {
                m->coord = NULL;
                nanosleep(&(struct timespec){0, 200 * 1000 * 1000}, NULL);
            }
            continue;
        }
        if (e) {
            snprintf(err, n, "group %s: JoinGroup: %s", m->group, cli_err_text(e, KP_STR_NULL, buf, sizeof buf));
            kp_arena_free(&a);
            return -1;
        }
        snprintf(m->member_id, sizeof m->member_id, "%.*s", (int)jr.member_id.len, jr.member_id.p);
        m->generation = jr.generation_id;
        int rc = sync_group(m, &jr, &a, err, n);
        kp_arena_free(&a);
        if (rc < 0) return -1;
        if (rc == 2) m->coord = NULL;
        if (rc == 0) {
            m->next_heartbeat_ms = clk_mono_ms() + HEARTBEAT_MS;
            return 0;
        }
    }
    snprintf(err, n, "group %s: no stable generation after %d joins", m->group, JOIN_TRIES);
    return -1;
}

int cli_member_heartbeat(cli_member *m, char *err, size_t n) {
    if (clk_mono_ms() < m->next_heartbeat_ms) return 0;
    if (!m->coord) return 1;
    const kp_msg *hm = &kp_msg_heartbeat;
    char buf[512];
    int16_t ver = cli_version(m->coord, hm, err, n);
    if (ver < 0) return -1;
    kp_arena a = {0};
    kp_heartbeat_request req;
    kp_defaults(hm->req, ver, &req);
    req.group_id = kp_str_c(m->group);
    req.generation_id = m->generation;
    req.member_id = kp_str_c(m->member_id);
    kp_heartbeat_response resp;
    int rc = cli_call(m->coord, hm, ver, &req, &resp, &a, err, n);
    kp_arena_free(&a);
    if (rc) return -1;
    m->next_heartbeat_ms = clk_mono_ms() + HEARTBEAT_MS;
    if (coordinator_code(resp.error_code)) m->coord = NULL;
    if (rejoin_code(resp.error_code)) return 1;
    if (resp.error_code) {
        snprintf(err, n, "group %s: Heartbeat: %s", m->group, cli_err_text(resp.error_code, KP_STR_NULL, buf, sizeof buf));
        return -1;
    }
    return 0;
}

int cli_member_commit(cli_member *m, const cli_tps *positions, char *err, size_t n) {
    if (!positions->n) return 0;
    if (!m->coord && !(m->coord = cli_coordinator(m->cl, m->group, err, n))) return -1;
    int16_t code;
    if (cli_offset_commit(m->coord, m->group, m->generation, m->member_id, positions, &code, err, n) == 0) return 0;
    if (coordinator_code(code)) m->coord = NULL;
    return rejoin_code(code) ? 1 : -1;
}

void cli_member_leave(cli_member *m) {
    const kp_msg *lm = &kp_msg_leave_group;
    char err[512];
    int16_t ver = m->coord && *m->member_id ? cli_version(m->coord, lm, err, sizeof err) : -1;
    if (ver >= 0) {
        kp_arena a = {0};
        kp_leave_group_request req;
        kp_defaults(lm->req, ver, &req);
        req.group_id = kp_str_c(m->group);
        req.member_id = kp_str_c(m->member_id); /* v0-2 */
        kp_leave_group_member_identity me;
        kp_defaults(&kp_leave_group_member_identity_schema, ver, &me);
        me.member_id = kp_str_c(m->member_id); /* v3+ */
        req.members.n = 1;
        req.members.v = &me;
        kp_leave_group_response resp;
        cli_call(m->coord, lm, ver, &req, &resp, &a, err, sizeof err); /* the session timeout covers a failure */
        kp_arena_free(&a);
    }
    cli_tps_free(&m->assigned);
}
