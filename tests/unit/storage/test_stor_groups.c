/* stor: committed offsets, consumer groups and their members; durability, migration, query plans. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "fixtures.h"
#include "stor.h"
#include "stor_int.h"

/* ---- fixture (fixtures.h) ---- */

static int fx_setup(void **state) {
    *state = fx_new("stor_groups", STOR_SYNC_NORMAL);
    return 0;
}

/* ---- offsets ---- */

#define MAX_ROWS 32

typedef struct off_row {
    char group[64], topic[64], metadata[64];
    int32_t metadata_len;
    int32_t partition, leader_epoch;
    int64_t offset, commit_ms, expire_ms;
} off_row;

typedef struct offs {
    int n;
    off_row r[MAX_ROWS];
} offs;

static void on_offset(void *ctx, const stor_offset *o) {
    offs *l = ctx;
    assert_true(l->n < MAX_ROWS);
    assert_non_null(o->group_id);
    assert_non_null(o->topic);
    assert_non_null(o->metadata);
    off_row *r = &l->r[l->n++];
    snprintf(r->group, sizeof r->group, "%s", o->group_id);
    snprintf(r->topic, sizeof r->topic, "%s", o->topic);
    assert_in_range(o->metadata_len, 0, sizeof r->metadata - 1);
    memcpy(r->metadata, o->metadata, (size_t)o->metadata_len + 1); /* with the NUL storage puts after it */
    r->metadata_len = o->metadata_len;
    r->partition = o->partition;
    r->leader_epoch = o->leader_epoch;
    r->offset = o->offset;
    r->commit_ms = o->commit_ms;
    r->expire_ms = o->expire_ms;
}

static void load_offsets(stor *s, offs *l) {
    memset(l, 0, sizeof *l);
    if (stor_offsets_load(s, on_offset, l) != 0) fail_msg("load offsets: %s", stor_errmsg(s));
}

static void commit(stor *s, const char *group, const char *topic, int32_t partition, int64_t offset) {
    stor_offset o = {.group_id = group,
                     .topic = topic,
                     .partition = partition,
                     .offset = offset,
                     .leader_epoch = -1,
                     .metadata = "",
                     .commit_ms = 1000 + offset,
                     .expire_ms = -1};
    if (stor_offset_commit(s, &o) != 0) fail_msg("commit offset: %s", stor_errmsg(s));
}

static void assert_offset(const off_row *r, const char *group, const char *topic, int32_t partition, int64_t offset) {
    assert_string_equal(r->group, group);
    assert_string_equal(r->topic, topic);
    assert_int_equal(r->partition, partition);
    assert_int_equal(r->offset, offset);
}

static void test_offset_commit_replace_delete(void **state) {
    fx *f = *state;
    assert_false(stor_in_txn(f->s));
    stor_offset o = {.group_id = "g",
                     .topic = "t",
                     .partition = 3,
                     .offset = 10,
                     .leader_epoch = -1,
                     .metadata = "first",
                     .metadata_len = 5,
                     .commit_ms = 111,
                     .expire_ms = -1};
    assert_int_equal(stor_offset_commit(f->s, &o), 0);
    assert_true(stor_in_txn(f->s)); /* writes join the lazy transaction */
    commit(f->s, "g", "t", 4, 20);

    offs l;
    load_offsets(f->s, &l);
    assert_int_equal(l.n, 2);
    assert_offset(&l.r[0], "g", "t", 3, 10);
    assert_string_equal(l.r[0].metadata, "first");
    assert_int_equal(l.r[0].leader_epoch, -1);
    assert_int_equal(l.r[0].commit_ms, 111);
    assert_int_equal(l.r[0].expire_ms, -1);

    /* Same key: every column replaced, no second row. */
    o = (stor_offset){.group_id = "g",
                      .topic = "t",
                      .partition = 3,
                      .offset = 15,
                      .leader_epoch = 7,
                      .metadata = "second",
                      .metadata_len = 6,
                      .commit_ms = 222,
                      .expire_ms = 999999};
    assert_int_equal(stor_offset_commit(f->s, &o), 0);
    load_offsets(f->s, &l);
    assert_int_equal(l.n, 2);
    assert_offset(&l.r[0], "g", "t", 3, 15);
    assert_string_equal(l.r[0].metadata, "second");
    assert_int_equal(l.r[0].leader_epoch, 7);
    assert_int_equal(l.r[0].commit_ms, 222);
    assert_int_equal(l.r[0].expire_ms, 999999);
    assert_offset(&l.r[1], "g", "t", 4, 20);

    assert_int_equal(stor_offset_delete(f->s, "g", "t", 3), 1);
    assert_int_equal(stor_offset_delete(f->s, "g", "t", 3), 0);
    assert_int_equal(stor_offset_delete(f->s, "g", "other", 4), 0);
    assert_int_equal(stor_offset_delete(f->s, "h", "t", 4), 0);
    load_offsets(f->s, &l);
    assert_int_equal(l.n, 1);
    assert_offset(&l.r[0], "g", "t", 4, 20);
}

/*
 * Regression (issue 30, librdkafka 0099): commit metadata was bound as a C string, so
 * "Hello\0world!" came back as its first 5 bytes. Kafka keeps all 12.
 */
static void test_offset_metadata_with_nul_keeps_every_byte(void **state) {
    fx *f = *state;
    static const char md[] = "Hello\0world!";
    stor_offset o = {.group_id = "g", .topic = "t", .partition = 0, .offset = 1, .leader_epoch = -1,
                     .metadata = md, .metadata_len = 12, .commit_ms = 1, .expire_ms = -1};
    assert_int_equal(stor_offset_commit(f->s, &o), 0);
    assert_int_equal(stor_commit(f->s), 0);
    fx_reopen(f);
    offs l;
    load_offsets(f->s, &l);
    assert_int_equal(l.n, 1);
    assert_int_equal(l.r[0].metadata_len, 12);
    assert_memory_equal(l.r[0].metadata, md, 13);
}

static void test_offset_null_metadata_and_bad_args(void **state) {
    fx *f = *state;
    stor_offset o = {.group_id = "g", .topic = "t", .partition = 0, .offset = 1, .leader_epoch = 2, .expire_ms = -1};
    assert_int_equal(stor_offset_commit(f->s, &o), 0); /* metadata NULL */
    offs l;
    load_offsets(f->s, &l);
    assert_int_equal(l.n, 1);
    assert_string_equal(l.r[0].metadata, "");

    assert_int_equal(stor_offset_commit(f->s, NULL), -1);
    stor_offset bad = o;
    bad.group_id = NULL;
    assert_int_equal(stor_offset_commit(f->s, &bad), -1);
    bad = o;
    bad.topic = NULL;
    assert_int_equal(stor_offset_commit(f->s, &bad), -1);
    bad = o;
    bad.partition = -1;
    assert_int_equal(stor_offset_commit(f->s, &bad), -1);
    assert_non_null(strstr(stor_errmsg(f->s), "negative partition"));
    assert_int_equal(stor_offset_delete(f->s, NULL, "t", 0), -1);
    assert_int_equal(stor_offset_delete(f->s, "g", NULL, 0), -1);
    assert_int_equal(stor_offsets_delete_group(f->s, NULL), -1);
    assert_int_equal(stor_offsets_delete_topic(f->s, NULL), -1);
    assert_int_equal(stor_offsets_load(f->s, NULL, NULL), -1);

    /* Refused calls leave the store usable and the earlier write in place. */
    assert_int_equal(stor_commit(f->s), 0);
    load_offsets(f->s, &l);
    assert_int_equal(l.n, 1);
}

static void test_offsets_delete_by_group_and_topic(void **state) {
    fx *f = *state;
    commit(f->s, "g1", "a", 0, 1);
    commit(f->s, "g1", "a", 1, 2);
    commit(f->s, "g1", "b", 0, 3);
    commit(f->s, "g2", "a", 0, 4);
    commit(f->s, "g2", "b", 0, 5);
    commit(f->s, "g3", "b", 0, 6);

    assert_int_equal(stor_offsets_delete_topic(f->s, "a"), 3);
    assert_int_equal(stor_offsets_delete_topic(f->s, "a"), 0);
    offs l;
    load_offsets(f->s, &l);
    assert_int_equal(l.n, 3);
    assert_offset(&l.r[0], "g1", "b", 0, 3);
    assert_offset(&l.r[1], "g2", "b", 0, 5);
    assert_offset(&l.r[2], "g3", "b", 0, 6);

    assert_int_equal(stor_offsets_delete_group(f->s, "g2"), 1);
    assert_int_equal(stor_offsets_delete_group(f->s, "g2"), 0);
    assert_int_equal(stor_offsets_delete_group(f->s, "nobody"), 0);
    load_offsets(f->s, &l);
    assert_int_equal(l.n, 2);
    assert_offset(&l.r[0], "g1", "b", 0, 3);
    assert_offset(&l.r[1], "g3", "b", 0, 6);
}

static void test_offsets_load_order(void **state) {
    fx *f = *state;
    /* Committed out of order; partitions compare as numbers (2 before 10), names as text. */
    commit(f->s, "b", "x", 10, 1);
    commit(f->s, "a", "y", 0, 2);
    commit(f->s, "b", "x", 2, 3);
    commit(f->s, "a", "x", 5, 4);
    commit(f->s, "b", "w", 7, 5);
    commit(f->s, "a", "x", 1, 6);
    assert_int_equal(stor_commit(f->s), 0);
    fx_reopen(f);

    offs l;
    load_offsets(f->s, &l);
    assert_int_equal(l.n, 6);
    assert_offset(&l.r[0], "a", "x", 1, 6);
    assert_offset(&l.r[1], "a", "x", 5, 4);
    assert_offset(&l.r[2], "a", "y", 0, 2);
    assert_offset(&l.r[3], "b", "w", 7, 5);
    assert_offset(&l.r[4], "b", "x", 2, 3);
    assert_offset(&l.r[5], "b", "x", 10, 1);
}

/* ---- groups: a load recorded as a sequence of events ---- */

#define MAX_BLOB 64

typedef struct ev {
    bool is_member;
    char group[64];
    /* group */
    bool type_null, name_null, leader_null;
    char protocol_type[32], protocol_name[32], leader[64];
    int32_t generation, state;
    int64_t state_ms;
    /* member */
    char member[64], client_id[64], client_host[64], instance[64];
    bool instance_null;
    int32_t session_ms, rebalance_ms;
    uint8_t metadata[MAX_BLOB], assignment[MAX_BLOB];
    size_t metadata_len, assignment_len;
} ev;

typedef struct evs {
    int n;
    ev e[MAX_ROWS];
} evs;

static void copy_opt(char *dst, size_t cap, bool *is_null, const char *src) {
    *is_null = src == NULL;
    snprintf(dst, cap, "%s", src ? src : "");
}

static void on_group(void *ctx, const stor_group *g) {
    evs *l = ctx;
    assert_true(l->n < MAX_ROWS);
    ev *e = &l->e[l->n++];
    memset(e, 0, sizeof *e);
    assert_non_null(g->group_id);
    snprintf(e->group, sizeof e->group, "%s", g->group_id);
    copy_opt(e->protocol_type, sizeof e->protocol_type, &e->type_null, g->protocol_type);
    copy_opt(e->protocol_name, sizeof e->protocol_name, &e->name_null, g->protocol_name);
    copy_opt(e->leader, sizeof e->leader, &e->leader_null, g->leader);
    e->generation = g->generation;
    e->state = g->state;
    e->state_ms = g->state_ms;
}

static void on_member(void *ctx, const char *group_id, const stor_member *m) {
    evs *l = ctx;
    assert_true(l->n < MAX_ROWS);
    ev *e = &l->e[l->n++];
    memset(e, 0, sizeof *e);
    e->is_member = true;
    assert_non_null(group_id);
    assert_non_null(m->member_id);
    assert_non_null(m->client_id);
    assert_non_null(m->client_host);
    /* Blobs are never NULL, even when empty, so callers may memcpy from them. */
    assert_non_null(m->metadata);
    assert_non_null(m->assignment);
    assert_true(m->metadata_len <= MAX_BLOB && m->assignment_len <= MAX_BLOB);
    snprintf(e->group, sizeof e->group, "%s", group_id);
    snprintf(e->member, sizeof e->member, "%s", m->member_id);
    snprintf(e->client_id, sizeof e->client_id, "%s", m->client_id);
    snprintf(e->client_host, sizeof e->client_host, "%s", m->client_host);
    copy_opt(e->instance, sizeof e->instance, &e->instance_null, m->instance_id);
    e->session_ms = m->session_timeout_ms;
    e->rebalance_ms = m->rebalance_timeout_ms;
    memcpy(e->metadata, m->metadata, m->metadata_len);
    e->metadata_len = m->metadata_len;
    memcpy(e->assignment, m->assignment, m->assignment_len);
    e->assignment_len = m->assignment_len;
}

static void load_groups(stor *s, evs *l) {
    memset(l, 0, sizeof *l);
    stor_group_load_cb cb = {.ctx = l, .group = on_group, .member = on_member};
    if (stor_groups_load(s, &cb) != 0) fail_msg("load groups: %s", stor_errmsg(s));
}

static stor_group group(const char *id, int32_t generation, const char *leader) {
    return (stor_group){.group_id = id,
                        .protocol_type = "consumer",
                        .protocol_name = "range",
                        .generation = generation,
                        .leader = leader,
                        .state = 3,
                        .state_ms = 1700000000000};
}

static stor_member member(const char *id) {
    return (stor_member){.member_id = id,
                         .client_id = "client",
                         .client_host = "/127.0.0.1",
                         .session_timeout_ms = 45000,
                         .rebalance_timeout_ms = 300000,
                         .metadata = "sub",
                         .metadata_len = 3,
                         .assignment = "asg",
                         .assignment_len = 3};
}

static void save(stor *s, const stor_group *g, const stor_member *m, int n) {
    if (stor_group_save(s, g, m, n) != 0) fail_msg("save group %s: %s", g->group_id, stor_errmsg(s));
}

static void assert_member(const ev *e, const char *group_id, const char *member_id) {
    assert_true(e->is_member);
    assert_string_equal(e->group, group_id);
    assert_string_equal(e->member, member_id);
}

static void test_group_round_trip(void **state) {
    fx *f = *state;
    stor_group g = group("g", 5, "m-1");
    stor_member m[2] = {member("m-1"), member("m-2")};
    m[1].instance_id = "static-2";
    m[1].client_id = "other";
    m[1].client_host = "/10.0.0.2";
    m[1].session_timeout_ms = 10000;
    m[1].rebalance_timeout_ms = 20000;
    save(f->s, &g, m, 2);
    assert_true(stor_in_txn(f->s));
    assert_int_equal(stor_commit(f->s), 0);
    fx_reopen(f);

    evs l;
    load_groups(f->s, &l);
    assert_int_equal(l.n, 3);
    const ev *e = &l.e[0];
    assert_false(e->is_member);
    assert_string_equal(e->group, "g");
    assert_string_equal(e->protocol_type, "consumer");
    assert_string_equal(e->protocol_name, "range");
    assert_string_equal(e->leader, "m-1");
    assert_int_equal(e->generation, 5);
    assert_int_equal(e->state, 3);
    assert_int_equal(e->state_ms, 1700000000000);

    assert_member(&l.e[1], "g", "m-1");
    assert_true(l.e[1].instance_null);
    assert_string_equal(l.e[1].client_id, "client");
    assert_string_equal(l.e[1].client_host, "/127.0.0.1");
    assert_int_equal(l.e[1].session_ms, 45000);
    assert_int_equal(l.e[1].rebalance_ms, 300000);
    assert_int_equal(l.e[1].metadata_len, 3);
    assert_memory_equal(l.e[1].metadata, "sub", 3);
    assert_int_equal(l.e[1].assignment_len, 3);
    assert_memory_equal(l.e[1].assignment, "asg", 3);

    assert_member(&l.e[2], "g", "m-2");
    assert_false(l.e[2].instance_null);
    assert_string_equal(l.e[2].instance, "static-2");
    assert_string_equal(l.e[2].client_id, "other");
    assert_string_equal(l.e[2].client_host, "/10.0.0.2");
    assert_int_equal(l.e[2].session_ms, 10000);
    assert_int_equal(l.e[2].rebalance_ms, 20000);
}

static void test_group_save_again_with_fewer_members(void **state) {
    fx *f = *state;
    stor_group g = group("g", 1, "a");
    stor_member m[3] = {member("a"), member("b"), member("c")};
    save(f->s, &g, m, 3);
    assert_int_equal(stor_commit(f->s), 0);
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM group_members"), 3);

    g = group("g", 2, "c");
    g.state = 4;
    g.state_ms = 42;
    stor_member fewer[1] = {m[2]};
    fewer[0].assignment = "new";
    save(f->s, &g, fewer, 1);
    assert_int_equal(stor_commit(f->s), 0);
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM group_members"), 1);
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM groups"), 1);

    evs l;
    load_groups(f->s, &l);
    assert_int_equal(l.n, 2);
    assert_int_equal(l.e[0].generation, 2);
    assert_string_equal(l.e[0].leader, "c");
    assert_int_equal(l.e[0].state, 4);
    assert_int_equal(l.e[0].state_ms, 42);
    assert_member(&l.e[1], "g", "c");
    assert_memory_equal(l.e[1].assignment, "new", 3);

    /* No members at all: an Empty group keeps its row. */
    g.leader = NULL;
    save(f->s, &g, NULL, 0);
    assert_int_equal(stor_commit(f->s), 0);
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM group_members"), 0);
    load_groups(f->s, &l);
    assert_int_equal(l.n, 1);
    assert_true(l.e[0].leader_null);
}

static void test_member_order_kept(void **state) {
    fx *f = *state;
    /* Neither alphabetical nor insertion order of the groups themselves. */
    stor_group g2 = group("g2", 1, "zz");
    stor_member m2[4] = {member("zz"), member("aa"), member("mm"), member("bb")};
    save(f->s, &g2, m2, 4);
    stor_group g1 = group("g1", 1, "y");
    stor_member m1[2] = {member("y"), member("x")};
    save(f->s, &g1, m1, 2);
    assert_int_equal(stor_commit(f->s), 0);
    fx_reopen(f);

    evs l;
    load_groups(f->s, &l);
    assert_int_equal(l.n, 8);
    assert_false(l.e[0].is_member);
    assert_string_equal(l.e[0].group, "g1");
    assert_member(&l.e[1], "g1", "y");
    assert_member(&l.e[2], "g1", "x");
    assert_false(l.e[3].is_member);
    assert_string_equal(l.e[3].group, "g2");
    assert_member(&l.e[4], "g2", "zz");
    assert_member(&l.e[5], "g2", "aa");
    assert_member(&l.e[6], "g2", "mm");
    assert_member(&l.e[7], "g2", "bb");

    /* A later save with a different order keeps the new order. */
    stor_member again[3] = {m2[3], m2[0], m2[2]};
    save(f->s, &g2, again, 3);
    load_groups(f->s, &l);
    assert_int_equal(l.n, 7);
    assert_member(&l.e[4], "g2", "bb");
    assert_member(&l.e[5], "g2", "zz");
    assert_member(&l.e[6], "g2", "mm");
}

static void test_member_blobs(void **state) {
    fx *f = *state;
    static const uint8_t zeros[] = {0, 0, 1, 0, 0xff, 0};
    stor_member m[3] = {member("a"), member("b"), member("c")};
    m[0].metadata = zeros;
    m[0].metadata_len = sizeof zeros;
    m[0].assignment = NULL; /* empty, no buffer */
    m[0].assignment_len = 0;
    m[1].metadata = "ignored"; /* a buffer but zero length */
    m[1].metadata_len = 0;
    m[1].assignment = zeros;
    m[1].assignment_len = 1; /* a single zero byte */
    m[2].metadata = NULL;
    m[2].metadata_len = 0;
    m[2].assignment = NULL;
    m[2].assignment_len = 0;
    stor_group g = group("g", 1, "a");
    save(f->s, &g, m, 3);
    assert_int_equal(stor_commit(f->s), 0);
    fx_reopen(f);

    evs l;
    load_groups(f->s, &l);
    assert_int_equal(l.n, 4);
    assert_int_equal(l.e[1].metadata_len, sizeof zeros);
    assert_memory_equal(l.e[1].metadata, zeros, sizeof zeros);
    assert_int_equal(l.e[1].assignment_len, 0);
    assert_int_equal(l.e[2].metadata_len, 0);
    assert_int_equal(l.e[2].assignment_len, 1);
    assert_int_equal(l.e[2].assignment[0], 0);
    assert_int_equal(l.e[3].metadata_len, 0);
    assert_int_equal(l.e[3].assignment_len, 0);
    /* Stored as empty blobs, never SQL NULL. */
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM group_members WHERE metadata IS NULL OR assignment IS NULL"),
                     0);
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM group_members WHERE typeof(metadata) = 'blob'"), 3);
}

static void test_null_fields_round_trip(void **state) {
    fx *f = *state;
    /* A simple group: no protocol, no leader. */
    stor_group simple = {.group_id = "simple", .generation = 0, .state = 1, .state_ms = 5};
    save(f->s, &simple, NULL, 0);
    /* "" is not NULL: both round trip as given. */
    stor_group g = {.group_id = "g", .protocol_type = "", .protocol_name = NULL, .leader = "", .generation = 1};
    stor_member m = member("dyn");
    m.instance_id = NULL;
    m.client_id = NULL; /* stored as "" */
    m.client_host = NULL;
    stor_member st = member("static");
    st.instance_id = "";
    stor_member both[2] = {m, st};
    save(f->s, &g, both, 2);
    assert_int_equal(stor_commit(f->s), 0);
    fx_reopen(f);

    evs l;
    load_groups(f->s, &l);
    assert_int_equal(l.n, 4);
    assert_string_equal(l.e[0].group, "g");
    assert_false(l.e[0].type_null);
    assert_string_equal(l.e[0].protocol_type, "");
    assert_true(l.e[0].name_null);
    assert_false(l.e[0].leader_null);
    assert_string_equal(l.e[0].leader, "");
    assert_member(&l.e[1], "g", "dyn");
    assert_true(l.e[1].instance_null);
    assert_string_equal(l.e[1].client_id, "");
    assert_string_equal(l.e[1].client_host, "");
    assert_member(&l.e[2], "g", "static");
    assert_false(l.e[2].instance_null);
    assert_string_equal(l.e[2].instance, "");
    assert_string_equal(l.e[3].group, "simple");
    assert_true(l.e[3].type_null);
    assert_true(l.e[3].name_null);
    assert_true(l.e[3].leader_null);
    assert_int_equal(l.e[3].state, 1);
    assert_int_equal(l.e[3].state_ms, 5);
}

static void test_group_delete_keeps_offsets(void **state) {
    fx *f = *state;
    stor_group g = group("g", 3, "a");
    stor_member m[2] = {member("a"), member("b")};
    save(f->s, &g, m, 2);
    stor_group h = group("h", 1, "c");
    stor_member mh[1] = {member("c")};
    save(f->s, &h, mh, 1);
    commit(f->s, "g", "t", 0, 100);
    commit(f->s, "g", "t", 1, 200);
    assert_int_equal(stor_commit(f->s), 0);

    assert_int_equal(stor_group_delete(f->s, "g"), 0);
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM groups"), 2); /* not yet committed */
    /* No row is not an error: a simple group is deleted without ever having been saved. */
    assert_int_equal(stor_group_delete(f->s, "g"), 0);
    assert_int_equal(stor_group_delete(f->s, "never"), 0);
    assert_int_equal(stor_group_delete(f->s, NULL), -1);
    assert_int_equal(stor_commit(f->s), 0);
    fx_reopen(f);

    evs l;
    load_groups(f->s, &l);
    assert_int_equal(l.n, 2);
    assert_string_equal(l.e[0].group, "h");
    assert_member(&l.e[1], "h", "c");
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM group_members WHERE group_id = 'g'"), 0);
    offs o;
    load_offsets(f->s, &o);
    assert_int_equal(o.n, 2);
    assert_offset(&o.r[0], "g", "t", 0, 100);
    assert_offset(&o.r[1], "g", "t", 1, 200);
}

static void test_group_save_is_atomic(void **state) {
    fx *f = *state;
    stor_group g = group("g", 1, "a");
    stor_member m[2] = {member("a"), member("b")};
    save(f->s, &g, m, 2);
    assert_int_equal(stor_commit(f->s), 0);

    commit(f->s, "g", "t", 0, 9); /* an earlier write of the same transaction */
    stor_group g2 = group("g", 2, "x");
    stor_member dup[3] = {member("x"), member("y"), member("x")};
    assert_int_equal(stor_group_save(f->s, &g2, dup, 3), -1);
    assert_non_null(strstr(stor_errmsg(f->s), "UNIQUE"));
    assert_true(stor_in_txn(f->s));

    /* Refused before touching the database. */
    assert_int_equal(stor_group_save(f->s, NULL, NULL, 0), -1);
    stor_group noid = group(NULL, 1, NULL);
    assert_int_equal(stor_group_save(f->s, &noid, NULL, 0), -1);
    assert_int_equal(stor_group_save(f->s, &g2, NULL, 1), -1);
    assert_int_equal(stor_group_save(f->s, &g2, m, -1), -1);
    stor_member bad = member(NULL);
    assert_int_equal(stor_group_save(f->s, &g2, &bad, 1), -1);
    bad = member("z");
    bad.metadata = NULL;
    assert_int_equal(stor_group_save(f->s, &g2, &bad, 1), -1);
    assert_non_null(strstr(stor_errmsg(f->s), "no bytes"));

    assert_int_equal(stor_commit(f->s), 0);
    fx_reopen(f);
    evs l;
    load_groups(f->s, &l);
    assert_int_equal(l.n, 3);
    assert_int_equal(l.e[0].generation, 1);
    assert_string_equal(l.e[0].leader, "a");
    assert_member(&l.e[1], "g", "a");
    assert_member(&l.e[2], "g", "b");
    offs o;
    load_offsets(f->s, &o);
    assert_int_equal(o.n, 1);
    assert_offset(&o.r[0], "g", "t", 0, 9);
}

static void test_load_callbacks(void **state) {
    fx *f = *state;
    stor_group g = group("g", 1, "a");
    stor_member m[2] = {member("a"), member("b")};
    save(f->s, &g, m, 2);
    stor_group h = group("h", 1, NULL);
    save(f->s, &h, NULL, 0);

    evs l = {0};
    stor_group_load_cb groups_only = {.ctx = &l, .group = on_group};
    assert_int_equal(stor_groups_load(f->s, &groups_only), 0);
    assert_int_equal(l.n, 2);
    assert_false(l.e[1].is_member);

    memset(&l, 0, sizeof l);
    stor_group_load_cb members_only = {.ctx = &l, .member = on_member};
    assert_int_equal(stor_groups_load(f->s, &members_only), 0);
    assert_int_equal(l.n, 2);
    assert_member(&l.e[0], "g", "a");
    assert_member(&l.e[1], "g", "b");

    stor_group_load_cb none = {.ctx = &l};
    assert_int_equal(stor_groups_load(f->s, &none), 0);
    assert_int_equal(stor_groups_load(f->s, NULL), -1);
}

/* ---- durability ---- */

static void test_survives_reopen_after_commit(void **state) {
    fx *f = *state;
    commit(f->s, "g", "t", 0, 5);
    stor_group g = group("g", 7, "a");
    stor_member m[1] = {member("a")};
    save(f->s, &g, m, 1);
    assert_int_equal(stor_commit(f->s), 0);
    fx_reopen(f);
    fx_reopen(f);

    offs o;
    load_offsets(f->s, &o);
    assert_int_equal(o.n, 1);
    assert_offset(&o.r[0], "g", "t", 0, 5);
    evs l;
    load_groups(f->s, &l);
    assert_int_equal(l.n, 2);
    assert_int_equal(l.e[0].generation, 7);
    assert_member(&l.e[1], "g", "a");
}

static void test_gone_if_not_committed(void **state) {
    fx *f = *state;
    commit(f->s, "g", "t", 0, 5);
    commit(f->s, "g", "t", 1, 6);
    stor_group g = group("g", 1, "a");
    stor_member m[2] = {member("a"), member("b")};
    save(f->s, &g, m, 2);
    assert_int_equal(stor_commit(f->s), 0);

    /* Every kind of write, none committed. */
    commit(f->s, "g", "t", 0, 50);
    commit(f->s, "new", "t", 0, 1);
    assert_int_equal(stor_offset_delete(f->s, "g", "t", 1), 1);
    stor_group g2 = group("g", 2, "c");
    stor_member m2[1] = {member("c")};
    save(f->s, &g2, m2, 1);
    stor_group other = group("other", 1, NULL);
    save(f->s, &other, NULL, 0);
    offs o;
    load_offsets(f->s, &o); /* the writer sees its own writes */
    assert_int_equal(o.n, 2);
    fx_reopen(f);

    load_offsets(f->s, &o);
    assert_int_equal(o.n, 2);
    assert_offset(&o.r[0], "g", "t", 0, 5);
    assert_offset(&o.r[1], "g", "t", 1, 6);
    evs l;
    load_groups(f->s, &l);
    assert_int_equal(l.n, 3);
    assert_int_equal(l.e[0].generation, 1);
    assert_member(&l.e[1], "g", "a");
    assert_member(&l.e[2], "g", "b");

    /* Deletes too. */
    assert_int_equal(stor_group_delete(f->s, "g"), 0);
    assert_int_equal(stor_offsets_delete_group(f->s, "g"), 2);
    assert_int_equal(stor_offsets_delete_topic(f->s, "t"), 0);
    fx_reopen(f);
    load_groups(f->s, &l);
    assert_int_equal(l.n, 3);
    load_offsets(f->s, &o);
    assert_int_equal(o.n, 2);
}

/* ---- migration ---- */

/* The SQL of the consumer-group tables and their indexes, as SQLite stores it. */
static void group_schema(fx *f, char *out, size_t outlen) {
    sqlite3 *db;
    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT group_concat(coalesce(sql, name), ';') FROM (SELECT name, sql"
                                        " FROM sqlite_master WHERE tbl_name IN ('offsets', 'groups', 'group_members')"
                                        " ORDER BY name)",
                                        -1, &st, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    snprintf(out, outlen, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(db);
}

/*
 * A database left at schema 2 (before consumer groups were stored) is
 * brought forward with its data, and gets the same tables a fresh one has.
 */
static void test_upgrade_from_version_2(void **state) {
    fx *f = *state;
    stor_topic t = {.name = "old", .partitions = 1, .created_ms = 1};
    assert_int_equal(stor_topic_create(f->s, &t), 0);
    stor_batch_meta bm = {.base_offset = 0, .last_offset = 2, .producer_id = -1, .records_count = 3};
    uint8_t data[32] = {1};
    assert_int_equal(stor_batch_append(f->s, t.id, 0, &bm, data, sizeof data), 0);
    assert_int_equal(stor_commit(f->s), 0);
    stor_close(f->s);
    f->s = NULL;

    char fresh[2048];
    group_schema(f, fresh, sizeof fresh);
    assert_non_null(strstr(fresh, "group_members"));
    fx_raw_exec(f->path, "DROP TABLE group_members; DROP TABLE groups; DROP TABLE offsets; PRAGMA user_version = 2;");

    fx_open(f);
    assert_int_equal(stor_schema_version(f->s), stor_schema_latest());
    assert_int_equal(fx_raw_int(f->path, "PRAGMA user_version"), stor_schema_latest());
    char upgraded[2048];
    group_schema(f, upgraded, sizeof upgraded);
    assert_string_equal(upgraded, fresh);

    /* The old data is intact... */
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM topics WHERE name = 'old'"), 1);
    assert_int_equal(stor_oldest_batch(f->s, t.id, 0, &bm), 1);
    assert_int_equal(bm.last_offset, 2);
    /* ...and the new tables work. */
    commit(f->s, "g", "old", 0, 3);
    stor_group g = group("g", 1, "a");
    stor_member m[1] = {member("a")};
    save(f->s, &g, m, 1);
    assert_int_equal(stor_commit(f->s), 0);
    fx_reopen(f);
    offs o;
    load_offsets(f->s, &o);
    assert_int_equal(o.n, 1);
    evs l;
    load_groups(f->s, &l);
    assert_int_equal(l.n, 2);
}

/* ---- query plans: per-commit and per-rebalance statements seek, never scan or sort ---- */

static void assert_plan(stor *s, stor_stmt_id id) {
    char sql[2048];
    snprintf(sql, sizeof sql, "EXPLAIN QUERY PLAN %s", stor_stmt_sql[id]);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(s->db, sql, -1, &st, NULL), SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *detail = (const char *)sqlite3_column_text(st, 3);
        if (strncmp(detail, "SCAN", 4) == 0 || strstr(detail, "TEMP B-TREE"))
            fail_msg("statement %d (%s) plans: %s", id, stor_stmt_sql[id], detail);
    }
    sqlite3_finalize(st);
}

static void test_query_plans(void **state) {
    fx *f = *state;
    static const stor_stmt_id hot[] = {STOR_OFFSET_DELETE,  STOR_OFFSETS_DELETE_GROUP, STOR_GROUP_DELETE,
                                       STOR_MEMBERS_DELETE, STOR_LOAD_MEMBERS};
    for (size_t i = 0; i < sizeof hot / sizeof hot[0]; i++) assert_plan(f->s, hot[i]);

    /* Start-up loads walk their tables in key order: a scan, but never a sort. */
    static const stor_stmt_id loads[] = {STOR_LOAD_OFFSETS, STOR_LOAD_GROUPS};
    for (size_t i = 0; i < sizeof loads / sizeof loads[0]; i++) {
        char sql[2048];
        snprintf(sql, sizeof sql, "EXPLAIN QUERY PLAN %s", stor_stmt_sql[loads[i]]);
        sqlite3_stmt *st;
        assert_int_equal(sqlite3_prepare_v2(f->s->db, sql, -1, &st, NULL), SQLITE_OK);
        while (sqlite3_step(st) == SQLITE_ROW)
            assert_null(strstr((const char *)sqlite3_column_text(st, 3), "TEMP B-TREE"));
        sqlite3_finalize(st);
    }
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int main(void) {
    const struct CMUnitTest tests[] = {
        T(test_offset_commit_replace_delete),
        T(test_offset_null_metadata_and_bad_args),
        T(test_offset_metadata_with_nul_keeps_every_byte),
        T(test_offsets_delete_by_group_and_topic),
        T(test_offsets_load_order),
        T(test_group_round_trip),
        T(test_group_save_again_with_fewer_members),
        T(test_member_order_kept),
        T(test_member_blobs),
        T(test_null_fields_round_trip),
        T(test_group_delete_keeps_offsets),
        T(test_group_save_is_atomic),
        T(test_load_callbacks),
        T(test_survives_reopen_after_commit),
        T(test_gone_if_not_committed),
        T(test_upgrade_from_version_2),
        T(test_query_plans),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
