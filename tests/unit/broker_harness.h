/*
 * broker_harness: drive broker handlers in-process, without sockets.
 *
 * A harness owns a minimal srv (default libuv loop, in-memory storage, one
 * synthetic broker), fake connections and every request sent through it.
 * Requests are encoded with the codec exactly as a client would (request
 * header v1, v2 when flexible), dispatched with pipeline_dispatch, and their
 * answers decoded back into the message's response struct.
 *
 * Fake connections are marked closing so that answering a parked request
 * never pumps them (which would write to a socket); net_after_commit at
 * teardown drains the commit list the broker may have put them on.
 *
 * Include it after <cmocka.h>. Everything is static: one test file, one copy.
 */
#ifndef BROKER_HARNESS_H
#define BROKER_HARNESS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "kp_batch.h"
#include "config.h"
#include "group/group.h"
#include "iam/authz.h"
#include "log.h"
#include "net/net.h"
#include "net/req.h"
#include "pipeline/pipeline.h"
#include "lifecycle.h"
#include "srv.h"
#include "topic/topic.h"
#include "txn/txn.h"

#define H_MAX_CONNS 16

typedef struct harness {
    srv s;
    config cfg;
    conn *conns[H_MAX_CONNS];
    int nconns;
    req **reqs;              /* every request sent, freed at teardown */
    int nreqs, cap_reqs;
    kp_arena arena;          /* decoded responses */
    int32_t next_corr;
} harness;

/* The harness of the running test, freed by h_teardown when an assertion ended the test early. */
static harness *h_current;

/*
 * A harness with the serverless profile (or the one a "profile" override
 * names), broker.count 1 and the given overrides: a NULL-terminated list of
 * key, value pairs. Logging stays
 * quiet unless MSKMOCK_TEST_LOG names a level (e.g. "info").
 */
static inline harness *h_new(const char *const *overrides) {
    harness *h = calloc(1, sizeof *h);
    assert_non_null(h);
    /* tests step time with clk_advance to the millisecond (the flaky
     * test_initial_rebalance_delay_holds_the_first_join_phase: real time crossed its deadline) */
    clk_freeze();
    const char *lvl = getenv("MSKMOCK_TEST_LOG");
    log_level ll = LOG_ERROR;
    if (lvl) log_level_parse(lvl, &ll);
    log_threshold = ll;
    char err[512] = "";
    /* a "profile" override chooses the defaults, as cfg_load settles the profile first */
    cfg_profile prof = PROFILE_SERVERLESS;
    for (int i = 0; overrides && overrides[i]; i += 2)
        if (!strcmp(overrides[i], "profile") && cfg_profile_parse(overrides[i + 1], &prof) != 0)
            fail_msg("profile %s", overrides[i + 1]);
    cfg_defaults(&h->cfg, prof);
    if (cfg_set(&h->cfg, "broker.count", "1", err, sizeof err) != 0) fail_msg("cfg_set: %s", err);
    /* unit tests pin Kafka's behaviour at every version, old ones too; a test of the floors sets them */
    if (cfg_set(&h->cfg, "api.versions.min", "", err, sizeof err) != 0) fail_msg("cfg_set: %s", err);
    if (cfg_set(&h->cfg, "admin.port", "0", err, sizeof err) != 0) fail_msg("cfg_set: %s", err);
    for (int i = 0; overrides && overrides[i]; i += 2)
        if (cfg_set(&h->cfg, overrides[i], overrides[i + 1], err, sizeof err) != 0) fail_msg("cfg_set: %s", err);
    if (cfg_finish(&h->cfg, err, sizeof err) != 0) fail_msg("cfg_finish: %s", err);
    h->s.loop = uv_default_loop();
    h->s.cfg = &h->cfg;
    h->s.next_producer_id = 1000;
    h->s.dispatch = pipeline_dispatch; /* srv_init's hooks */
    h->s.conn_closed = authz_forget;
    h->s.nnodes = 1;
    h->s.nodes[0].id = h->cfg.node_ids[0];
    h->s.nodes[0].ports[LSN_PLAINTEXT] = 19092;
    if (stor_open(&h->s.st, ":memory:", STOR_SYNC_OFF, err, sizeof err) != 0) fail_msg("stor_open: %s", err);
    if (authz_init(&h->s, err, sizeof err) != 0) fail_msg("authz_init: %s", err);
    if (txn_init(&h->s) != 0) fail_msg("txn_init: %s", stor_errmsg(h->s.st));
    h_current = h;
    return h;
}

static inline conn *h_conn(harness *h, const char *peer) {
    assert_true(h->nconns < H_MAX_CONNS);
    conn *c = calloc(1, sizeof *c);
    assert_non_null(c);
    c->s = &h->s;
    c->id = ++h->s.next_conn_id;
    c->node = 0;
    c->closing = true; /* never pumped: there is no socket behind it */
    snprintf(c->peer, sizeof c->peer, "%s", peer ? peer : "127.0.0.1:5000");
    h->conns[h->nconns++] = c;
    return c;
}

static inline void h_track(harness *h, req *r) {
    if (h->nreqs == h->cap_reqs) {
        int cap = h->cap_reqs ? h->cap_reqs * 2 : 32;
        req **n = realloc(h->reqs, sizeof(*n) * (size_t)cap);
        assert_non_null(n);
        h->reqs = n;
        h->cap_reqs = cap;
    }
    h->reqs[h->nreqs++] = r;
}

/* Encode body as request key/ver from client_id on c and dispatch it. */
static inline req *h_send(harness *h, conn *c, const char *client_id, int16_t key, int16_t ver, const void *body) {
    const kp_msg *m = kp_msg_get(key);
    assert_non_null(m);
    bool flex = kp_is_flex(m, ver);
    kp_writer w;
    kp_writer_init(&w, 256);
    kp_wr_i16(&w, key);
    kp_wr_i16(&w, ver);
    kp_wr_i32(&w, ++h->next_corr);
    size_t cl = strlen(client_id);
    kp_wr_i16(&w, (int16_t)cl);
    kp_wr_raw(&w, client_id, cl);
    if (flex) kp_wr_uvarint(&w, 0);
    kp_encode(&w, m->req, ver, flex, body);
    req *r = calloc(1, sizeof *r);
    assert_non_null(r);
    r->c = c;
    r->frame = w.buf; /* owned by the request now */
    r->len = w.len;
    r->state = REQ_QUEUED;
    h_track(h, r);
    if (!pipeline_dispatch(&h->s, r)) fail_msg("pipeline_dispatch refused %s v%d (the connection would close)", m->name, ver);
    return r;
}

static inline bool h_answered(const req *r) { return r->state == REQ_READY || r->state == REQ_WAIT_COMMIT; }

/* Decode the answer of r into its response struct (allocated in the harness arena). */
static inline void *h_resp(harness *h, req *r) {
    if (!h_answered(r)) fail_msg("%s v%d corr %d is not answered (state %d)", r->msg->name, r->hdr.api_version,
                                 r->hdr.correlation_id, (int)r->state);
    const kp_msg *m = r->msg;
    int16_t ver = r->hdr.api_version;
    assert_true(r->out.len >= 8);
    assert_int_equal(kp_get_i32(r->out.buf), (int32_t)(r->out.len - 4));
    kp_reader rd;
    kp_reader_init(&rd, r->out.buf + 4, r->out.len - 4);
    int32_t corr = 0;
    assert_true(kp_rd_i32(&rd, &corr));
    assert_int_equal(corr, r->hdr.correlation_id);
    if (kp_resp_header_flex(m, ver)) {
        uint64_t ntags = 1;
        assert_true(kp_rd_uvarint(&rd, &ntags));
        assert_int_equal(ntags, 0);
    }
    void *out = kp_arena_alloc(&h->arena, m->resp->size);
    if (!kp_decode(&rd, m->resp, ver, kp_is_flex(m, ver), out, &h->arena))
        fail_msg("%s v%d response does not decode: %s at %zu", m->name, ver, rd.err, rd.err_pos);
    assert_int_equal(kp_rd_left(&rd), 0);
    return out;
}

/* A NUL-terminated copy of a kp_str in the harness arena ("(null)" for null). */
static inline const char *h_cstr(harness *h, kp_str s) {
    if (s.len < 0) return "(null)";
    char *p = kp_arena_alloc(&h->arena, (size_t)s.len + 1);
    memcpy(p, s.p, (size_t)s.len);
    p[s.len] = 0;
    return p;
}

/* Bytes from a hex string, in the harness arena. */
static inline kp_bytes h_hex(harness *h, const char *hex) {
    size_t n = strlen(hex) / 2;
    uint8_t *p = kp_arena_alloc(&h->arena, n ? n : 1);
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        if (sscanf(hex + 2 * i, "%2x", &v) != 1) fail_msg("bad hex %s", hex);
        p[i] = (uint8_t)v;
    }
    return (kp_bytes){(const char *)p, (int32_t)n};
}

/*
 * A record batch v2 of n (< 64) uncompressed records, values "r<i>", as a producer sends it, with
 * the given attributes (KP_ATTR_TRANSACTIONAL: a transaction's), producer id, epoch and base
 * sequence (-1, -1, -1: not idempotent).
 */
static inline kp_bytes h_batch_from(harness *h, int16_t attributes, int64_t pid, int16_t epoch, int32_t seq, int n) {
    kp_writer w;
    kp_writer_init(&w, 256);
    kp_wr_i64(&w, 0);                 /* base offset: the broker assigns it */
    kp_wr_i32(&w, 0);                 /* batch length, patched below */
    kp_wr_i32(&w, 0);                 /* partition leader epoch */
    kp_wr_i8(&w, 2);                  /* magic */
    kp_wr_i32(&w, 0);                 /* crc, patched below */
    kp_wr_i16(&w, attributes);        /* no codec, CreateTime */
    kp_wr_i32(&w, n - 1);             /* last offset delta */
    kp_wr_i64(&w, clk_now_ms());      /* base timestamp */
    kp_wr_i64(&w, clk_now_ms());      /* max timestamp */
    kp_wr_i64(&w, pid);               /* producer id */
    kp_wr_i16(&w, epoch);             /* producer epoch */
    kp_wr_i32(&w, seq);               /* base sequence */
    kp_wr_i32(&w, n);                 /* records */
    for (int i = 0; i < n; i++) {
        char key[16], value[16]; /* keyed, so that compacted topics take them too */
        snprintf(key, sizeof key, "k%d", i);
        snprintf(value, sizeof value, "r%d", i);
        int32_t klen = (int32_t)strlen(key), vlen = (int32_t)strlen(value);
        /* attributes, ts delta, offset delta, key, value, header count */
        kp_wr_varint(&w, (int32_t)(kp_uvarint_len((uint64_t)i << 1) + 5 + klen + vlen));
        kp_wr_i8(&w, 0);
        kp_wr_varlong(&w, 0);
        kp_wr_varint(&w, i);
        kp_wr_varint(&w, klen);
        kp_wr_raw(&w, key, (size_t)klen);
        kp_wr_varint(&w, vlen);
        kp_wr_raw(&w, value, (size_t)vlen);
        kp_wr_varint(&w, 0);
    }
    kp_put_i32(w.buf + 8, (int32_t)(w.len - KP_BATCH_LOG_OVERHEAD));
    kp_put_i32(w.buf + 17, (int32_t)kp_crc32c(0, w.buf + 21, w.len - 21));
    uint8_t *p = kp_arena_alloc(&h->arena, w.len);
    memcpy(p, w.buf, w.len);
    kp_bytes b = {(const char *)p, (int32_t)w.len};
    kp_writer_free(&w);
    return b;
}

/* The same, plain: no producer id, no transaction. */
static inline kp_bytes h_batch(harness *h, int n) { return h_batch_from(h, 0, -1, -1, -1, n); }

/* One batch to topic[partition] through c (Produce v ver, acks=-1), then the commit that answers it. */
static inline req *h_produce(harness *h, conn *c, const char *topic, int32_t partition, kp_bytes batch, int16_t ver) {
    kp_produce_partition_produce_data pd = {partition, batch};
    kp_produce_topic_produce_data td = {.name = kp_str_c(topic)};
    td.partition_data.n = 1;
    td.partition_data.v = &pd;
    kp_produce_request q = {.transactional_id = KP_STR_NULL, .acks = -1, .timeout_ms = 5000};
    q.topic_data.n = 1;
    q.topic_data.v = &td;
    req *r = h_send(h, c, "producer", 0, ver, &q);
    assert_int_equal(topic_commit_now(&h->s), 0);
    return r;
}

static inline bool h_bytes_eq(kp_bytes a, kp_bytes b) {
    return a.len == b.len && (a.len <= 0 || memcmp(a.p, b.p, (size_t)a.len) == 0);
}

static inline void h_free(harness *h) {
    grp_close_all(&h->s);
    txn_close(&h->s);
    net_after_commit(&h->s); /* drain the commit list: our conns are closing, nothing is written */
    for (int i = 0; i < h->nreqs; i++) req_free(h->reqs[i]);
    free(h->reqs);
    for (int i = 0; i < h->nconns; i++) {
        free(h->conns[i]->client_id);
        authz_forget(h->conns[i]);
        free(h->conns[i]);
    }
    authz_close(&h->s); /* its timer lives in memory srv_free releases: close it first */
    /*
     * Twice: after srv_fail_stop's uv_stop the first run only clears the stop flag, and the
     * timer's close then ran after srv_free, reading freed memory (valgrind, test_broker_topic_semantics'
     * test_after_fail_stop_nothing_is_committed_or_answered).
     */
    for (int i = 0; i < 2; i++) uv_run(h->s.loop, UV_RUN_NOWAIT);
    srv_free(&h->s);
    cfg_free(&h->cfg);
    kp_arena_free(&h->arena);
    /* let libuv run the close callbacks of the group timers */
    for (int i = 0; i < 4 && uv_loop_alive(h->s.loop); i++) uv_run(h->s.loop, UV_RUN_NOWAIT);
    if (h_current == h) h_current = NULL;
    free(h);
}

/* cmocka teardown: frees the harness a failed test left behind. */
static inline int h_teardown(void **state) {
    (void)state;
    if (h_current) h_free(h_current);
    return 0;
}

#endif
