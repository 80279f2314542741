/*
 * stor: transactions: the coordinator's state (ids, partitions, groups, pending offsets), each
 * partition's transaction index (open and aborted), producer state with markers, write kinds,
 * migration 6, salvage of the new tables and query plans.
 */
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

/* ---- fixture (fixtures.h) with topic "t" (3 partitions) ---- */

static int fx_setup(void **state) {
    *state = fx_new_with_topic("stor_txn", STOR_SYNC_NORMAL, 3);
    return 0;
}

static void must(stor *s, int rc) {
    if (rc != 0) fail_msg("%s", stor_errmsg(s));
}

static stor_txn txn(const char *id, int64_t pid, int16_t epoch, int32_t state) {
    return (stor_txn){.transactional_id = id,
                      .producer_id = pid,
                      .prev_producer_id = -1,
                      .producer_epoch = epoch,
                      .last_producer_epoch = -1,
                      .timeout_ms = 60000,
                      .state = state,
                      .start_ms = -1,
                      .update_ms = 1700000000000};
}

static stor_offset offset(const char *group, const char *topic, int32_t partition, int64_t off) {
    return (stor_offset){.group_id = group,
                         .topic = topic,
                         .partition = partition,
                         .offset = off,
                         .leader_epoch = 4,
                         .metadata = "m",
                         .metadata_len = 1,
                         .commit_ms = 5000 + off,
                         .expire_ms = 777};
}

/* ---- load collector: one line per callback, so order and content are checked together ---- */

#define MAX_LINES 64

typedef struct lines {
    int n;
    char l[MAX_LINES][160];
} lines;

static void add_line(lines *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_line(lines *l, const char *fmt, ...) {
    assert_true(l->n < MAX_LINES);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->l[l->n++], sizeof l->l[0], fmt, ap);
    va_end(ap);
}

static void on_txn(void *ctx, const stor_txn *t) {
    add_line(ctx, "txn %s pid %lld prev %lld epoch %d last %d timeout %d state %d start %lld update %lld",
             t->transactional_id, (long long)t->producer_id, (long long)t->prev_producer_id, t->producer_epoch,
             t->last_producer_epoch, t->timeout_ms, t->state, (long long)t->start_ms, (long long)t->update_ms);
}

static void on_partition(void *ctx, const char *id, int64_t topic_id, int32_t partition) {
    add_line(ctx, "part %s %lld/%d", id, (long long)topic_id, partition);
}

static void on_group(void *ctx, const char *id, const char *group_id) { add_line(ctx, "group %s %s", id, group_id); }

static void on_offset(void *ctx, const char *id, int64_t pid, const stor_offset *o, bool superseded) {
    add_line(ctx, "offset %s pid %lld %s %s/%d @%lld epoch %d '%s' at %lld expire %lld%s", id, (long long)pid,
             o->group_id, o->topic, o->partition, (long long)o->offset, o->leader_epoch, o->metadata,
             (long long)o->commit_ms, (long long)o->expire_ms, superseded ? " superseded" : "");
}

static lines load_txns(stor *s) {
    lines l = {0};
    stor_txn_load_cb cb = {.ctx = &l, .txn = on_txn, .partition = on_partition, .group = on_group, .offset = on_offset};
    must(s, stor_txns_load(s, &cb));
    return l;
}

static void assert_lines(const lines *l, const char *const *want, int n) {
    for (int i = 0; i < l->n && i < n; i++)
        if (strcmp(l->l[i], want[i]) != 0) fail_msg("line %d: got\n  %s\nwant\n  %s", i, l->l[i], want[i]);
    assert_int_equal(l->n, n);
}

#define ASSERT_LINES(l, ...)                                                                                           \
    do {                                                                                                               \
        static const char *const want_[] = {__VA_ARGS__};                                                              \
        assert_lines(&(l), want_, (int)(sizeof want_ / sizeof want_[0]));                                              \
    } while (0)

/* ---- coordinator state ---- */

static void test_txn_round_trip(void **state) {
    fx *f = *state;
    stor_txn b = txn("b", 2000, 7, 1);
    const stor_txn_part bp[] = {{f->topic, 0}, {f->topic, 2}};
    b.parts = bp;
    b.nparts = 2;
    b.prev_producer_id = 1999;
    b.last_producer_epoch = 6;
    b.start_ms = 1700000000001;
    must(f->s, stor_txn_put(f->s, &b));
    stor_txn a = txn("a", 1000, 0, 0);
    must(f->s, stor_txn_put(f->s, &a));
    must(f->s, stor_txn_group_add(f->s, "b", "g2"));
    must(f->s, stor_txn_group_add(f->s, "b", "g1"));
    must(f->s, stor_txn_group_add(f->s, "b", "g1"));
    stor_offset o = offset("g1", "t", 1, 10);
    must(f->s, stor_txn_offset_put(f->s, "b", 2000, &o));
    o = offset("g1", "t", 0, 20);
    o.metadata = NULL;
    must(f->s, stor_txn_offset_put(f->s, "b", 2000, &o));
    /* Replacing the id's row keeps its groups and offsets; the partitions are the row's. */
    b.state = 2;
    b.update_ms++;
    must(f->s, stor_txn_put(f->s, &b));
    must(f->s, stor_commit(f->s));
    fx_reopen(f);

    lines l = load_txns(f->s);
    ASSERT_LINES(l, "txn a pid 1000 prev -1 epoch 0 last -1 timeout 60000 state 0 start -1 update 1700000000000",
                 "txn b pid 2000 prev 1999 epoch 7 last 6 timeout 60000 state 2 start 1700000000001"
                 " update 1700000000001",
                 "part b 1/0", "part b 1/2", "group b g1", "group b g2",
                 "offset b pid 2000 g1 t/0 @20 epoch 4 '' at 5020 expire -1",
                 "offset b pid 2000 g1 t/1 @10 epoch 4 'm' at 5010 expire -1");
}

/* Regression (issue 30, librdkafka 0099): TxnOffsetCommit metadata keeps its bytes after a NUL. */
static int32_t loaded_md_len;
static char loaded_md[16];
static void on_md_offset(void *ctx, const char *id, int64_t pid, const stor_offset *o, bool superseded) {
    (void)ctx, (void)id, (void)pid, (void)superseded;
    assert_in_range(o->metadata_len, 0, sizeof loaded_md - 1);
    memcpy(loaded_md, o->metadata, (size_t)o->metadata_len + 1);
    loaded_md_len = o->metadata_len;
}

static void test_txn_offset_metadata_with_nul_keeps_every_byte(void **state) {
    fx *f = *state;
    stor_txn a = txn("a", 1000, 0, 0);
    must(f->s, stor_txn_put(f->s, &a));
    must(f->s, stor_txn_group_add(f->s, "a", "g"));
    stor_offset o = offset("g", "t", 0, 1);
    o.metadata = "Hello\0world!";
    o.metadata_len = 12;
    must(f->s, stor_txn_offset_put(f->s, "a", 1000, &o));
    must(f->s, stor_commit(f->s));
    fx_reopen(f);
    lines l = {0};
    stor_txn_load_cb cb = {.ctx = &l, .txn = on_txn, .partition = on_partition, .group = on_group, .offset = on_md_offset};
    must(f->s, stor_txns_load(f->s, &cb));
    assert_int_equal(loaded_md_len, 12);
    assert_memory_equal(loaded_md, "Hello\0world!", 13);
}

static void test_txn_offsets_superseded(void **state) {
    fx *f = *state;
    stor_txn a = txn("a", 1, 0, 1), b = txn("b", 2, 0, 1);
    must(f->s, stor_txn_put(f->s, &a));
    must(f->s, stor_txn_put(f->s, &b));
    stor_offset o = offset("g", "t", 0, 5);
    must(f->s, stor_txn_offset_put(f->s, "a", 1, &o));
    must(f->s, stor_txn_offset_put(f->s, "b", 2, &o));
    o = offset("g", "t", 1, 6);
    must(f->s, stor_txn_offset_put(f->s, "a", 1, &o));
    o = offset("h", "t", 0, 7);
    must(f->s, stor_txn_offset_put(f->s, "a", 1, &o));
    /* A plain commit of g t/0 supersedes every id's pending offset of it, and only those. */
    must(f->s, stor_txn_offsets_supersede(f->s, "g", "t", 0));
    must(f->s, stor_txn_offsets_supersede(f->s, "g", "t", 0));
    must(f->s, stor_txn_offsets_supersede(f->s, "nobody", "t", 0));
    must(f->s, stor_commit(f->s));
    fx_reopen(f);
    stor_txn_load_cb cb;
    lines l = {0};
    cb = (stor_txn_load_cb){.ctx = &l, .offset = on_offset};
    must(f->s, stor_txns_load(f->s, &cb));
    ASSERT_LINES(l, "offset a pid 1 g t/0 @5 epoch 4 'm' at 5005 expire -1 superseded",
                 "offset a pid 1 g t/1 @6 epoch 4 'm' at 5006 expire -1",
                 "offset a pid 1 h t/0 @7 epoch 4 'm' at 5007 expire -1",
                 "offset b pid 2 g t/0 @5 epoch 4 'm' at 5005 expire -1 superseded");

    /* A TxnOffsetCommit after the plain commit is the newer one again. */
    o = offset("g", "t", 0, 9);
    must(f->s, stor_txn_offset_put(f->s, "a", 1, &o));
    l.n = 0;
    must(f->s, stor_txns_load(f->s, &cb));
    assert_string_equal(l.l[0], "offset a pid 1 g t/0 @9 epoch 4 'm' at 5009 expire -1");
}

static void test_txn_bad_arguments(void **state) {
    fx *f = *state;
    stor_txn t = txn(NULL, 1, 0, 0);
    assert_int_equal(stor_txn_put(f->s, &t), -1);
    assert_int_equal(stor_txn_put(f->s, NULL), -1);
    t = txn("x", 1, 0, 6);
    assert_int_equal(stor_txn_put(f->s, &t), -1);
    assert_non_null(strstr(stor_errmsg(f->s), "state 6"));
    t.state = -1;
    assert_int_equal(stor_txn_put(f->s, &t), -1);
    t.state = 5;
    must(f->s, stor_txn_put(f->s, &t));
    /* Members need their id. */
    assert_int_equal(stor_txn_group_add(f->s, "nobody", "g"), -1);
    assert_non_null(strstr(stor_errmsg(f->s), "FOREIGN KEY"));
    assert_int_equal(stor_txn_group_add(f->s, "nobody", "g"), -1);
    assert_int_equal(stor_txn_group_add(f->s, "x", NULL), -1);
    stor_offset o = offset("g", "t", 0, 1);
    assert_int_equal(stor_txn_offset_put(f->s, "nobody", 1, &o), -1);
    assert_int_equal(stor_txn_offset_put(f->s, NULL, 1, &o), -1);
    assert_int_equal(stor_txn_offset_put(f->s, "x", 1, NULL), -1);
    o.partition = -1;
    assert_int_equal(stor_txn_offset_put(f->s, "x", 1, &o), -1);
    o = offset(NULL, "t", 0, 1);
    assert_int_equal(stor_txn_offset_put(f->s, "x", 1, &o), -1);
    assert_int_equal(stor_txn_delete(f->s, NULL), -1);
    assert_int_equal(stor_txn_members_clear(f->s, NULL), -1);
    assert_int_equal(stor_txn_offsets_supersede(f->s, NULL, "t", 0), -1);
    assert_int_equal(stor_txn_offsets_delete_group(f->s, NULL), -1);
    assert_int_equal(stor_txn_offsets_delete_topic(f->s, NULL), -1);
    assert_int_equal(stor_txns_load(f->s, NULL), -1);
    /* None of that disturbed the transaction. */
    assert_true(stor_in_txn(f->s));
    must(f->s, stor_commit(f->s));
    lines l = load_txns(f->s);
    assert_int_equal(l.n, 1);
    /* Deleting what is not there is not an error. */
    must(f->s, stor_txn_delete(f->s, "nobody"));
    /* Nothing asked for, nothing read. */
    stor_txn_load_cb none = {0};
    must(f->s, stor_txns_load(f->s, &none));
}

/* The id's members of every kind, for the clear and delete tests. */
static void txn_with_members(fx *f, const char *id, int32_t partition) {
    stor_txn t = txn(id, 1, 0, 1);
    const stor_txn_part p = {f->topic, partition};
    t.parts = &p;
    t.nparts = 1;
    must(f->s, stor_txn_put(f->s, &t));
    must(f->s, stor_txn_group_add(f->s, id, "g"));
    stor_offset o = offset("g", "t", partition, 1);
    must(f->s, stor_txn_offset_put(f->s, id, 1, &o));
}

static void test_txn_delete_cascades(void **state) {
    fx *f = *state;
    txn_with_members(f, "gone", 0);
    txn_with_members(f, "kept", 1);
    must(f->s, stor_commit(f->s));
    must(f->s, stor_txn_delete(f->s, "gone"));
    must(f->s, stor_commit(f->s));
    fx_reopen(f);
    lines l = load_txns(f->s);
    ASSERT_LINES(l, "txn kept pid 1 prev -1 epoch 0 last -1 timeout 60000 state 1 start -1 update 1700000000000",
                 "part kept 1/1", "group kept g", "offset kept pid 1 g t/1 @1 epoch 4 'm' at 5001 expire -1");
    /* No orphans behind the load's back. */
    assert_int_equal(fx_raw_int(f->path, "SELECT (SELECT count(*) FROM txn_groups) + (SELECT count(*) FROM txn_offsets)"),
                     2);
}

static void test_txn_members_clear_and_remove(void **state) {
    fx *f = *state;
    txn_with_members(f, "a", 0);
    txn_with_members(f, "b", 1);
    /* a's list changes with its row; b completes as the coordinator completes it: members cleared, row stored */
    stor_txn a = txn("a", 1, 0, 1);
    const stor_txn_part ap = {f->topic, 2};
    a.parts = &ap;
    a.nparts = 1;
    must(f->s, stor_txn_put(f->s, &a));
    must(f->s, stor_txn_members_clear(f->s, "b"));
    stor_txn b = txn("b", 1, 0, 1);
    must(f->s, stor_txn_put(f->s, &b));
    must(f->s, stor_commit(f->s));
    fx_reopen(f);
    lines l = load_txns(f->s);
    ASSERT_LINES(l, "txn a pid 1 prev -1 epoch 0 last -1 timeout 60000 state 1 start -1 update 1700000000000",
                 "part a 1/2", "group a g", "offset a pid 1 g t/0 @1 epoch 4 'm' at 5001 expire -1",
                 "txn b pid 1 prev -1 epoch 0 last -1 timeout 60000 state 1 start -1 update 1700000000000");
}

/*
 * stor_txn_members_clear clears only the member tables its look-up finds rows of: each kind
 * alone goes (without the savepoint several need), an id without members is a no-op, and
 * another id's members of every kind stay.
 */
static void test_txn_members_clear_each_kind_alone(void **state) {
    fx *f = *state;
    txn_with_members(f, "keep", 0);
    const char *ids[] = {"g", "o", "none"};
    for (int i = 0; i < 3; i++) {
        stor_txn t = txn(ids[i], 1, 0, 1);
        must(f->s, stor_txn_put(f->s, &t));
    }
    must(f->s, stor_txn_group_add(f->s, "g", "g2"));
    stor_offset o = offset("g", "t", 2, 7);
    must(f->s, stor_txn_offset_put(f->s, "o", 1, &o));
    must(f->s, stor_commit(f->s));
    for (int i = 0; i < 3; i++) must(f->s, stor_txn_members_clear(f->s, ids[i]));
    must(f->s, stor_commit(f->s));
    fx_reopen(f);
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM txn_groups WHERE transactional_id <> 'keep'"), 0);
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM txn_offsets WHERE transactional_id <> 'keep'"), 0);
    assert_int_equal(fx_raw_int(f->path, "SELECT (SELECT count(*) FROM txn_groups) + (SELECT count(*) FROM txn_offsets)"),
                     2);
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM txns"), 4);
}

static void test_txn_offsets_delete_by_group_and_topic(void **state) {
    fx *f = *state;
    stor_txn t = txn("a", 1, 0, 1);
    must(f->s, stor_txn_put(f->s, &t));
    const char *groups[] = {"g", "g", "h", "h"}, *topics[] = {"t", "u", "t", "u"};
    for (int i = 0; i < 4; i++) {
        stor_offset o = offset(groups[i], topics[i], 0, i);
        must(f->s, stor_txn_offset_put(f->s, "a", 1, &o));
    }
    assert_int_equal(stor_txn_offsets_delete_group(f->s, "g"), 2);
    assert_int_equal(stor_txn_offsets_delete_group(f->s, "g"), 0);
    assert_int_equal(stor_txn_offsets_delete_topic(f->s, "u"), 1);
    assert_int_equal(stor_txn_offsets_delete_topic(f->s, "nope"), 0);
    must(f->s, stor_commit(f->s));
    lines l = {0};
    stor_txn_load_cb cb = {.ctx = &l, .offset = on_offset};
    must(f->s, stor_txns_load(f->s, &cb));
    ASSERT_LINES(l, "offset a pid 1 h t/0 @2 epoch 4 'm' at 5002 expire -1");
}

/* ---- partition transaction index ---- */

static void on_open(void *ctx, int64_t topic_id, int32_t partition, int64_t pid, int64_t first) {
    add_line(ctx, "open %lld/%d pid %lld first %lld", (long long)topic_id, partition, (long long)pid, (long long)first);
}

static void no_producer(void *ctx, int64_t topic_id, int32_t partition, const stor_batch_meta *m) {
    (void)ctx, (void)topic_id, (void)partition, (void)m;
}

static lines load_open(stor *s) {
    lines l = {0};
    must(s, stor_load_producer_state(s, no_producer, on_open, &l));
    return l;
}

/* A data batch of two records (seq >= 0) or a marker (seq < 0), transactional or not, at *next. */
static void append_at(fx *f, int64_t topic, int32_t partition, int64_t *next, int64_t pid, int32_t seq, bool txn) {
    bool marker = seq < 0;
    stor_batch_meta m = {.base_offset = *next,
                         .last_offset = *next + (marker ? 0 : 1),
                         .max_timestamp = *next,
                         .producer_id = pid,
                         .producer_epoch = 0,
                         .base_sequence = marker ? -1 : seq,
                         .last_sequence = marker ? -1 : seq + 1,
                         .records_count = marker ? 1 : 2,
                         .transactional = txn && !marker};
    uint8_t data[16] = {1};
    must(f->s, stor_batch_append(f->s, topic, partition, &m, data, sizeof data));
    *next = m.last_offset + 1;
}

/*
 * Open transactions without a row of their own: the first transactional data batch past the
 * producer's newest marker, from the snapshot (begun before it) and the batches past it.
 */
static void test_txn_open_from_producer_state(void **state) {
    fx *f = *state;
    int64_t n0 = 0, n2 = 0;
    append_at(f, f->topic, 0, &n0, 3, 0, true);   /* 0: 3 opens */
    append_at(f, f->topic, 0, &n0, 5, 0, false);  /* 2: 5 idempotent, no transaction */
    append_at(f, f->topic, 0, &n0, 9, 0, true);   /* 4: 9 opens */
    append_at(f, f->topic, 0, &n0, 9, -1, false); /* 6: 9 decided */
    append_at(f, f->topic, 0, &n0, 3, 2, true);   /* 7: 3 still open from 0 */
    append_at(f, f->topic, 0, &n0, 4, 0, true);   /* 9: 4 opens, and stays open across the snapshot */
    must(f->s, stor_producer_snapshot(f->s));
    must(f->s, stor_commit(f->s));
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM producer_snapshot WHERE txn_first >= 0"), 2);
    append_at(f, f->topic, 0, &n0, 9, 2, true);   /* 11: 9 opens again */
    append_at(f, f->topic, 0, &n0, 5, 2, true);   /* 13: 5 opens */
    append_at(f, f->topic, 0, &n0, 3, -1, false); /* 15: 3 decided */
    append_at(f, f->topic, 2, &n2, 9, 0, true);   /* partition 2, no snapshot: 9 opens at 0 */
    must(f->s, stor_commit(f->s));
    fx_reopen(f);
    lines l = load_open(f->s);
    ASSERT_LINES(l, "open 1/0 pid 4 first 9", "open 1/0 pid 5 first 13", "open 1/0 pid 9 first 11",
                 "open 1/2 pid 9 first 0");
    /* a snapshot taken now says the same */
    must(f->s, stor_producer_dirty(f->s, f->topic, 0));
    must(f->s, stor_producer_dirty(f->s, f->topic, 2));
    must(f->s, stor_producer_snapshot(f->s));
    must(f->s, stor_commit(f->s));
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM producer_snapshot WHERE txn_first >= 0"), 4);
    fx_reopen(f);
    lines again = load_open(f->s);
    ASSERT_LINES(again, "open 1/0 pid 4 first 9", "open 1/0 pid 5 first 13", "open 1/0 pid 9 first 11",
                 "open 1/2 pid 9 first 0");
}

/*
 * Retention taking an open transaction's batches keeps it open, as Kafka keeps a producer with
 * an open transaction (ProducerStateEntry.isEmpty): the last stable offset stays held down.
 */
static void test_txn_open_survives_log_start_moving_past_it(void **state) {
    fx *f = *state;
    int64_t n = 0;
    append_at(f, f->topic, 0, &n, 4, 0, true); /* 0 */
    append_at(f, f->topic, 0, &n, 5, 0, false); /* 2 */
    must(f->s, stor_producer_snapshot(f->s));
    must(f->s, stor_commit(f->s));
    assert_int_equal(stor_log_start_set(f->s, f->topic, 0, 2), 1);
    must(f->s, stor_commit(f->s));
    fx_reopen(f);
    lines l = load_open(f->s);
    ASSERT_LINES(l, "open 1/0 pid 4 first 0");
    /* folded again (the load marked the partition): the row of the emptied producer stays for its transaction */
    must(f->s, stor_producer_snapshot(f->s));
    must(f->s, stor_commit(f->s));
    fx_reopen(f);
    lines again = load_open(f->s);
    ASSERT_LINES(again, "open 1/0 pid 4 first 0");
}

/* Migration 20: a database with txn_open rows keeps its open transactions as producer state. */
static void test_migration_moves_txn_open_rows(void **state) {
    fx *f = *state;
    int64_t n0 = 0, n1 = 0;
    append_at(f, f->topic, 0, &n0, 4, 0, false); /* 0 */
    append_at(f, f->topic, 0, &n0, 4, 2, false); /* 2: open from here in the old table */
    append_at(f, f->topic, 0, &n0, 4, 4, false); /* 4 */
    must(f->s, stor_producer_snapshot(f->s));
    must(f->s, stor_commit(f->s));
    append_at(f, f->topic, 1, &n1, 6, 0, false); /* partition 1: past (no) snapshot */
    must(f->s, stor_commit(f->s));
    stor_close(f->s);
    f->s = NULL;
    fx_raw_exec(f->path, "UPDATE batches SET txn = NULL;"
                         "ALTER TABLE batches DROP COLUMN txn;"
                         "ALTER TABLE producer_snapshot DROP COLUMN txn_first;"
                         "CREATE TABLE txn_open (topic_id INTEGER NOT NULL, partition INTEGER NOT NULL,"
                         " producer_id INTEGER NOT NULL, first_offset INTEGER NOT NULL,"
                         " PRIMARY KEY (topic_id, partition, producer_id)) WITHOUT ROWID;"
                         "INSERT INTO txn_open VALUES (1, 0, 4, 2), (1, 1, 6, 0);"
                         "PRAGMA user_version = 19;");
    fx_open(f);
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM sqlite_master WHERE name = 'txn_open'"), 0);
    lines l = load_open(f->s);
    ASSERT_LINES(l, "open 1/0 pid 4 first 2", "open 1/1 pid 6 first 0");
}

static void put_aborted(fx *f, int32_t partition, int64_t pid, int64_t first, int64_t last) {
    stor_aborted a = {.producer_id = pid, .first_offset = first, .last_offset = last, .lso = first};
    must(f->s, stor_txn_aborted_put(f->s, f->topic, partition, &a));
}

typedef struct aborted_seen {
    lines l;
    int stop_after;
} aborted_seen;

static bool on_aborted(void *ctx, const stor_aborted *a) {
    aborted_seen *s = ctx;
    add_line(&s->l, "pid %lld %lld..%lld lso %lld", (long long)a->producer_id, (long long)a->first_offset,
             (long long)a->last_offset, (long long)a->lso);
    return s->stop_after == 0 || s->l.n < s->stop_after;
}

static aborted_seen read_aborted(fx *f, int32_t partition, int64_t from, int stop_after) {
    aborted_seen s = {.stop_after = stop_after};
    must(f->s, stor_txn_aborted_read(f->s, f->topic, partition, from, on_aborted, &s));
    return s;
}

static void test_txn_aborted_read(void **state) {
    fx *f = *state;
    put_aborted(f, 0, 7, 20, 40);
    put_aborted(f, 0, 8, 5, 10);
    put_aborted(f, 0, 9, 11, 30);
    put_aborted(f, 1, 7, 0, 3);
    stor_aborted bad = {.producer_id = 1, .first_offset = 5, .last_offset = 4};
    assert_int_equal(stor_txn_aborted_put(f->s, f->topic, 0, &bad), -1);
    bad = (stor_aborted){.producer_id = 1, .first_offset = 20, .last_offset = 40};
    assert_int_equal(stor_txn_aborted_put(f->s, f->topic, 0, &bad), -1); /* a second entry at marker 40 */
    assert_int_equal(stor_txn_aborted_put(f->s, f->topic, 5, &bad), -1);
    assert_int_equal(stor_txn_aborted_put(f->s, f->topic, 0, NULL), -1);
    assert_int_equal(stor_txn_aborted_read(f->s, f->topic, 0, 0, NULL, NULL), -1);
    must(f->s, stor_commit(f->s));
    fx_reopen(f);

    aborted_seen s = read_aborted(f, 0, 0, 0); /* in marker order, not insertion or first-offset order */
    ASSERT_LINES(s.l, "pid 8 5..10 lso 5", "pid 9 11..30 lso 11", "pid 7 20..40 lso 20");
    s = read_aborted(f, 0, 30, 0); /* from: markers at or past it */
    ASSERT_LINES(s.l, "pid 9 11..30 lso 11", "pid 7 20..40 lso 20");
    s = read_aborted(f, 0, 31, 0);
    ASSERT_LINES(s.l, "pid 7 20..40 lso 20");
    s = read_aborted(f, 0, 41, 0);
    assert_int_equal(s.l.n, 0);
    s = read_aborted(f, 0, 0, 2); /* the callback stops the read */
    assert_int_equal(s.l.n, 2);
    s = read_aborted(f, 1, 0, 0);
    ASSERT_LINES(s.l, "pid 7 0..3 lso 0");
    s = read_aborted(f, 2, 0, 0);
    assert_int_equal(s.l.n, 0);
    /* The statement was reset: nothing blocks a write and its commit. */
    put_aborted(f, 2, 1, 0, 1);
    must(f->s, stor_commit(f->s));
}

static void on_aborted_last(void *ctx, int64_t topic_id, int32_t partition, int64_t last) {
    add_line(ctx, "%lld/%d last %lld", (long long)topic_id, partition, (long long)last);
}

static void test_txn_aborted_last(void **state) {
    fx *f = *state;
    stor_topic u = {.name = "u", .partitions = 2, .created_ms = 1};
    must(f->s, stor_topic_create(f->s, &u));
    put_aborted(f, 2, 1, 0, 5);
    put_aborted(f, 2, 1, 6, 9);
    put_aborted(f, 0, 1, 0, 3);
    stor_aborted a = {.producer_id = 4, .first_offset = 0, .last_offset = 77};
    must(f->s, stor_txn_aborted_put(f->s, u.id, 1, &a));
    lines l = {0};
    must(f->s, stor_txn_aborted_last(f->s, on_aborted_last, &l));
    char want[3][64];
    snprintf(want[0], sizeof want[0], "%lld/0 last 3", (long long)f->topic);
    snprintf(want[1], sizeof want[1], "%lld/2 last 9", (long long)f->topic);
    snprintf(want[2], sizeof want[2], "%lld/1 last 77", (long long)u.id);
    const char *const w[] = {want[0], want[1], want[2]};
    assert_lines(&l, w, 3);
    assert_int_equal(stor_txn_aborted_last(f->s, NULL, NULL), -1);
}

static void test_log_start_prunes_aborted(void **state) {
    fx *f = *state;
    put_aborted(f, 0, 1, 0, 4);
    put_aborted(f, 0, 2, 3, 9);
    put_aborted(f, 0, 3, 8, 15);
    put_aborted(f, 1, 4, 0, 2);
    must(f->s, stor_commit(f->s));
    /* No batches at all: the entries go by their marker's offset alone. */
    assert_int_equal(stor_log_start_set(f->s, f->topic, 0, 9), 0);
    aborted_seen s = read_aborted(f, 0, 0, 0);
    ASSERT_LINES(s.l, "pid 2 3..9 lso 3", "pid 3 8..15 lso 8"); /* marker 9 is at the log start: kept */
    assert_int_equal(stor_log_start_set(f->s, f->topic, 0, 4), 0); /* never back */
    must(f->s, stor_commit(f->s));
    fx_reopen(f);
    s = read_aborted(f, 0, 0, 0);
    assert_int_equal(s.l.n, 2);
    s = read_aborted(f, 1, 0, 0); /* other partitions untouched */
    assert_int_equal(s.l.n, 1);
    assert_int_equal(stor_log_start_set(f->s, f->topic, 0, 16), 0);
    s = read_aborted(f, 0, 0, 0);
    assert_int_equal(s.l.n, 0);
}

/* ---- topic deletion ---- */

static void test_topic_delete_cascades(void **state) {
    fx *f = *state;
    stor_topic u = {.name = "u", .partitions = 1, .created_ms = 1};
    must(f->s, stor_topic_create(f->s, &u));
    stor_txn t = txn("x", 1, 0, 1);
    const stor_txn_part xp[] = {{f->topic, 0}, {f->topic, 1}, {u.id, 0}};
    t.parts = xp;
    t.nparts = 3;
    must(f->s, stor_txn_put(f->s, &t));
    stor_offset o = offset("g", "t", 0, 1);
    must(f->s, stor_txn_offset_put(f->s, "x", 1, &o));
    int64_t nt = 0, nu = 0;
    append_at(f, f->topic, 0, &nt, 1, 0, true);
    append_at(f, u.id, 0, &nu, 1, 0, true);
    put_aborted(f, 1, 1, 0, 1);
    stor_aborted a = {.producer_id = 1, .first_offset = 0, .last_offset = 1};
    must(f->s, stor_txn_aborted_put(f->s, u.id, 0, &a));
    must(f->s, stor_commit(f->s));

    /* the coordinator (txn_forget_topic) rewrites the list in the deletion's storage transaction */
    t.parts = xp + 2;
    t.nparts = 1;
    must(f->s, stor_txn_put(f->s, &t));
    must(f->s, stor_topic_delete(f->s, f->topic));
    must(f->s, stor_commit(f->s));
    fx_reopen(f);
    lines l = load_txns(f->s);
    char part[64];
    snprintf(part, sizeof part, "part x %lld/0", (long long)u.id);
    /* The id stays, with the deleted topic's partitions gone; pending offsets are by name and
       wait for stor_txn_offsets_delete_topic. */
    assert_int_equal(l.n, 3);
    assert_string_equal(l.l[1], part);
    assert_non_null(strstr(l.l[2], "offset x"));
    assert_int_equal(stor_txn_offsets_delete_topic(f->s, "t"), 1);
    l = load_open(f->s);
    assert_int_equal(l.n, 1);
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM txn_aborted"), 1);
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM txn_aborted WHERE topic_id = %lld", (long long)u.id);
    assert_int_equal(fx_raw_int(f->path, sql), 1);
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
}

/* ---- producer state with transaction markers ---- */

typedef struct seen {
    int n;
    stor_batch_meta m[32];
    int32_t partition[32];
} seen;

static void on_producer_batch(void *ctx, int64_t topic_id, int32_t partition, const stor_batch_meta *m) {
    (void)topic_id;
    seen *s = ctx;
    assert_true(s->n < 32);
    s->partition[s->n] = partition;
    s->m[s->n++] = *m;
}

/* Appends one batch of 2 records (data, sequence seq) or one marker (seq < 0) at *next. */
static void append(fx *f, int32_t partition, int64_t *next, int64_t pid, int16_t epoch, int32_t seq) {
    bool marker = seq < 0;
    stor_batch_meta m = {.base_offset = *next,
                         .last_offset = *next + (marker ? 0 : 1),
                         .max_timestamp = *next,
                         .producer_id = pid,
                         .producer_epoch = epoch,
                         .base_sequence = marker ? -1 : seq,
                         .last_sequence = marker ? -1 : seq + 1,
                         .records_count = marker ? 1 : 2};
    uint8_t data[16] = {1};
    must(f->s, stor_batch_append(f->s, f->topic, partition, &m, data, sizeof data));
    *next = m.last_offset + 1;
}

static void test_producer_batches_with_markers(void **state) {
    fx *f = *state;
    /* Partition 0, producer 7: 7 data batches with a marker after every second; newest is data. */
    int64_t next = 0;
    for (int i = 0; i < 7; i++) {
        append(f, 0, &next, 7, 1, i * 2);
        if (i % 2) append(f, 0, &next, 7, 1, -1);
    }
    /* Partition 1, producer 7: 6 data batches, markers between, the newest batch a marker of a bumped epoch. */
    next = 0;
    for (int i = 0; i < 6; i++) {
        append(f, 1, &next, 7, 2, i * 2);
        append(f, 1, &next, 7, 2, -1);
    }
    append(f, 1, &next, 7, 3, -1);
    /* Partition 1, producer 8: only markers (a partition added to transactions that wrote nothing there). */
    append(f, 1, &next, 8, 0, -1);
    append(f, 1, &next, 8, 1, -1);
    /* Partition 2, non-idempotent and a producer whose newest batch is data. */
    next = 0;
    append(f, 2, &next, -1, -1, -1);
    append(f, 2, &next, 9, 0, -1);
    append(f, 2, &next, 9, 0, 0);
    must(f->s, stor_commit(f->s));
    fx_reopen(f);

    seen s = {0};
    must(f->s, stor_load_producer_batches(f->s, on_producer_batch, &s));
    int i = 0;
    /* p0/7: data sequences 4..12 oldest first, no marker after them. */
    for (int k = 0; k < 5; k++, i++) {
        assert_int_equal(s.partition[i], 0);
        assert_int_equal(s.m[i].producer_id, 7);
        assert_int_equal(s.m[i].base_sequence, (k + 2) * 2);
    }
    /* p1/7: data sequences 2..10, then the newest marker with its epoch. */
    for (int k = 0; k < 5; k++, i++) {
        assert_int_equal(s.partition[i], 1);
        assert_int_equal(s.m[i].producer_id, 7);
        assert_int_equal(s.m[i].base_sequence, (k + 1) * 2);
    }
    assert_int_equal(s.m[i].producer_id, 7);
    assert_int_equal(s.m[i].base_sequence, -1);
    assert_int_equal(s.m[i].producer_epoch, 3);
    i++;
    /* p1/8: its newest marker only. */
    assert_int_equal(s.partition[i], 1);
    assert_int_equal(s.m[i].producer_id, 8);
    assert_int_equal(s.m[i].base_sequence, -1);
    assert_int_equal(s.m[i].producer_epoch, 1);
    i++;
    /* p2/9: the data batch; the older marker is not delivered. */
    assert_int_equal(s.partition[i], 2);
    assert_int_equal(s.m[i].producer_id, 9);
    assert_int_equal(s.m[i].base_sequence, 0);
    i++;
    assert_int_equal(s.n, i);
}

/* ---- write kinds ---- */

static void test_write_kinds(void **state) {
    fx *f = *state;
    stor_txn t = txn("x", 1, 0, 1);
    must(f->s, stor_txn_put(f->s, &t));
    stor_offset o = offset("g", "t", 0, 1);
    must(f->s, stor_txn_offset_put(f->s, "x", 1, &o));
    must(f->s, stor_commit(f->s));

    /* The transaction index goes with the batches. */
    put_aborted(f, 0, 1, 0, 1);
    assert_int_equal(stor_txn_kinds(f->s), STOR_TXN_BATCHES);
    must(f->s, stor_commit(f->s));

    /* A plain commit whose supersede and deletes find no pending offset stays of kind OFFSETS. */
    stor_offset plain = offset("g", "t", 1, 1);
    must(f->s, stor_offset_commit(f->s, &plain));
    must(f->s, stor_txn_offsets_supersede(f->s, "g", "t", 1));
    assert_int_equal(stor_txn_offsets_delete_group(f->s, "nobody"), 0);
    assert_int_equal(stor_txn_offsets_delete_topic(f->s, "nothing"), 0);
    assert_int_equal(stor_txn_kinds(f->s), STOR_TXN_OFFSETS);
    /* One that supersedes is a coordinator write. */
    must(f->s, stor_txn_offsets_supersede(f->s, "g", "t", 0));
    assert_int_equal(stor_txn_kinds(f->s), STOR_TXN_OFFSETS | STOR_TXN_TXNS);
    must(f->s, stor_commit(f->s));

    /* Each coordinator write on its own. */
#define KIND_OF(call)                                                                                                  \
    do {                                                                                                               \
        int rc_ = (call);                                                                                              \
        if (rc_ < 0 || stor_txn_kinds(f->s) != STOR_TXN_TXNS)                                                        \
            fail_msg("%s: rc %d kinds %u (%s)", #call, rc_, stor_txn_kinds(f->s), stor_errmsg(f->s));                 \
        must(f->s, stor_commit(f->s));                                                                                 \
    } while (0)
    KIND_OF(stor_txn_put(f->s, &t));
    KIND_OF(stor_txn_group_add(f->s, "x", "g"));
    KIND_OF(stor_txn_offset_put(f->s, "x", 1, &o));
    KIND_OF(stor_txn_offsets_delete_group(f->s, "g"));
    KIND_OF(stor_txn_members_clear(f->s, "x"));
    KIND_OF(stor_txn_delete(f->s, "x"));
#undef KIND_OF

    /* A commit that fails holding coordinator writes reports them until stor_commit returns. */
    t = txn("y", 2, 0, 1);
    must(f->s, stor_txn_put(f->s, &t));
    int64_t next = 0;
    append(f, 0, &next, -1, -1, -1);
    /* What SQLite does after some I/O or disk-full errors: the whole transaction is gone. */
    assert_int_equal(sqlite3_exec(f->s->db, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(stor_txn_kinds(f->s), STOR_TXN_BATCHES | STOR_TXN_TXNS);
    assert_int_equal(stor_commit(f->s), -1);
    assert_int_equal(stor_txn_kinds(f->s), 0);
    lines l = load_txns(f->s);
    assert_int_equal(l.n, 0);
}

/* ---- migration 6 ---- */

/* The SQL of the transaction tables and their indexes, as SQLite stores it. */
static void txn_schema(const char *path, char *out, size_t outlen) {
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT group_concat(coalesce(sql, name), ';') FROM (SELECT name, sql"
                                        " FROM sqlite_master WHERE tbl_name LIKE 'txn%' ORDER BY name)",
                                        -1, &st, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    snprintf(out, outlen, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(db);
}

#define DROP_TXN_TABLES                                                                                                \
    "DROP TABLE txn_aborted; DROP TABLE txn_offsets; DROP TABLE txn_groups;"                     \
    " DROP TABLE txn_partitions; DROP TABLE txns;"

/* A version-5 database (before transactions) is brought forward with its data and gets the tables a fresh one has. */
static void test_upgrade_from_version_5(void **state) {
    fx *f = *state;
    int64_t next = 0;
    append(f, 1, &next, 7, 0, 0);
    must(f->s, stor_leader_put(f->s, f->topic, 1, 5, 2));
    stor_offset o = offset("g", "t", 0, 3);
    must(f->s, stor_offset_commit(f->s, &o));
    must(f->s, stor_commit(f->s));
    stor_close(f->s);
    f->s = NULL;
    assert_true(stor_schema_latest() >= 13);

    char fresh[8192];
    txn_schema(f->path, fresh, sizeof fresh);
    assert_non_null(strstr(fresh, "txn_offsets_group"));
    fx_raw_exec(f->path, DROP_TXN_TABLES " PRAGMA user_version = 5;");
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM sqlite_master WHERE tbl_name LIKE 'txn%'"), 0);

    fx_open(f);
    assert_int_equal(stor_schema_version(f->s), stor_schema_latest());
    assert_int_equal(fx_raw_int(f->path, "PRAGMA user_version"), stor_schema_latest());
    char upgraded[8192];
    txn_schema(f->path, upgraded, sizeof upgraded);
    assert_string_equal(upgraded, fresh);

    /* The old data is intact... */
    stor_batch_meta m;
    assert_int_equal(stor_oldest_batch(f->s, f->topic, 1, &m), 1);
    assert_int_equal(m.producer_id, 7);
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM offsets"), 1);
    assert_int_equal(fx_raw_int(f->path, "SELECT leader FROM partition_leaders"), 5);
    /* ...and the new tables work. */
    txn_with_members(f, "x", 0);
    put_aborted(f, 0, 1, 0, 1);
    must(f->s, stor_commit(f->s));
    fx_reopen(f);
    lines l = load_txns(f->s);
    assert_int_equal(l.n, 4);
}

/* The partition list in the row: long lists (past the encoder's stack buffer) keep every entry in order. */
static void test_txn_partition_list_round_trip(void **state) {
    fx *f = *state;
    stor_txn_part parts[40];
    for (int i = 0; i < 40; i++) parts[i] = (stor_txn_part){INT64_MAX - i, i % 2 ? INT32_MAX - i : i};
    stor_txn t = txn("long", 1, 0, 1);
    t.parts = parts;
    t.nparts = 40;
    must(f->s, stor_txn_put(f->s, &t));
    stor_txn e = txn("empty", 2, 0, 1);
    must(f->s, stor_txn_put(f->s, &e));
    must(f->s, stor_commit(f->s));
    assert_int_equal(fx_raw_int(f->path, "SELECT partitions IS NULL FROM txns WHERE transactional_id = 'empty'"), 1);
    fx_reopen(f);
    lines l = load_txns(f->s);
    assert_int_equal(l.n, 42);
    for (int i = 0; i < 40; i++) {
        char want[64];
        snprintf(want, sizeof want, "part long %lld/%d", (long long)parts[i].topic_id, parts[i].partition);
        assert_string_equal(l.l[2 + i], want);
    }
}

/*
 * The list's text as stored (written by hand since the snprintf per partition went, issue 37):
 * zeros, the extremes and a negative id spelled as the loader reads them; a later put of the
 * existing row (the UPDATE, not the upsert) replaces it, and an empty list is NULL again.
 */
static void test_txn_partition_list_text_and_update(void **state) {
    fx *f = *state;
    const stor_txn_part parts[] = {{0, 0}, {10, 9}, {INT64_MAX, INT32_MAX}, {INT64_MIN, 7}};
    stor_txn t = txn("x", 1, 0, 1);
    t.parts = parts;
    t.nparts = 4;
    must(f->s, stor_txn_put(f->s, &t));
    must(f->s, stor_commit(f->s));
    assert_int_equal(fx_raw_int(f->path, "SELECT partitions = '0:0 10:9 9223372036854775807:2147483647"
                                         " -9223372036854775808:7' FROM txns WHERE transactional_id = 'x'"),
                     1);
    t.nparts = 2;
    t.state = 4;
    must(f->s, stor_txn_put(f->s, &t));
    must(f->s, stor_commit(f->s));
    assert_int_equal(fx_raw_int(f->path, "SELECT partitions = '0:0 10:9' AND state = 4 FROM txns"), 1);
    t.nparts = 0;
    must(f->s, stor_txn_put(f->s, &t));
    must(f->s, stor_commit(f->s));
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM txns WHERE partitions IS NULL"), 1);
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM txns"), 1);
}

/* A list that is not "topic_id:partition ..." fails the load with the id named, rather than half-loading. */
static void test_txn_partition_list_damaged(void **state) {
    fx *f = *state;
    stor_txn t = txn("x", 1, 0, 1);
    must(f->s, stor_txn_put(f->s, &t));
    must(f->s, stor_commit(f->s));
    const char *bad[] = {"1:0 1:", "1:0 x", "1", ":3", "1:-1", "1:2147483648", "1:0,1:1"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char sql[128];
        snprintf(sql, sizeof sql, "UPDATE txns SET partitions = '%s'", bad[i]);
        fx_raw_exec(f->path, sql);
        lines l = {0};
        stor_txn_load_cb cb = {.ctx = &l, .txn = on_txn, .partition = on_partition};
        if (stor_txns_load(f->s, &cb) != -1) fail_msg("list '%s' loaded", bad[i]);
        assert_non_null(strstr(stor_errmsg(f->s), "load transaction x"));
    }
}

/* ---- migration 16: txn_partitions rows move into their txns row ---- */

static void test_upgrade_moves_txn_partitions(void **state) {
    fx *f = *state;
    stor_txn t = txn("open", 1, 0, 1);
    must(f->s, stor_txn_put(f->s, &t));
    t = txn("done", 2, 0, 4);
    must(f->s, stor_txn_put(f->s, &t));
    must(f->s, stor_commit(f->s));
    stor_close(f->s);
    f->s = NULL;
    /* the schema and rows of version 15: no column, one row per partition */
    char sql[512];
    snprintf(sql, sizeof sql,
             "ALTER TABLE txns DROP COLUMN partitions;"
             "INSERT INTO txn_partitions VALUES ('open', %lld, 2), ('open', %lld, 0);"
             "PRAGMA user_version = 15;",
             (long long)f->topic, (long long)f->topic);
    fx_raw_exec(f->path, sql);
    for (int round = 0; round < 2; round++) { /* the second open finds nothing to move */
        fx_open(f);
        assert_int_equal(stor_schema_version(f->s), stor_schema_latest());
        lines l = load_txns(f->s);
        char p0[64], p2[64];
        snprintf(p0, sizeof p0, "part open %lld/0", (long long)f->topic);
        snprintf(p2, sizeof p2, "part open %lld/2", (long long)f->topic);
        assert_int_equal(l.n, 4);
        assert_non_null(strstr(l.l[0], "txn done"));
        assert_non_null(strstr(l.l[1], "txn open"));
        assert_string_equal(l.l[2], p0);
        assert_string_equal(l.l[3], p2);
        assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM txn_partitions"), 0);
        stor_close(f->s);
        f->s = NULL;
    }
    fx_open(f);
}

/* ---- salvage ---- */

static void on_report(void *ctx, const char *line) {
    lines *l = ctx;
    if (l->n < MAX_LINES) add_line(l, "%s", line);
}

static bool reported(const lines *l, const char *part) {
    for (int i = 0; i < l->n; i++)
        if (strstr(l->l[i], part)) return true;
    return false;
}

static void salvage(fx *f, const char *to, lines *rep) {
    char err[512] = "";
    memset(rep, 0, sizeof *rep);
    if (stor_salvage(f->path, to, on_report, rep, err, sizeof err) != 0) fail_msg("salvage: %s", err);
}

/* The new tables are copied, and their rows whose id, partition or topic is gone are dropped and reported. */
static void test_salvage_txn_tables(void **state) {
    fx *f = *state;
    txn_with_members(f, "x", 0);
    put_aborted(f, 2, 1, 0, 1);
    must(f->s, stor_leader_put(f->s, f->topic, 2, 1, 1));
    must(f->s, stor_commit(f->s));
    stor_close(f->s);
    f->s = NULL;
    /* Rows that lost what they refer to (foreign keys are off on a raw connection). */
    fx_raw_exec(f->path, "INSERT INTO txn_partitions VALUES ('lost', 1, 0);"
                      "INSERT INTO txn_partitions VALUES ('x', 99, 0);"
                      "INSERT INTO txn_groups VALUES ('lost', 'g');"
                      "INSERT INTO txn_offsets (transactional_id, producer_id, group_id, topic, partition, \"offset\","
                      " leader_epoch, metadata, commit_ms) VALUES ('lost', 1, 'g', 't', 0, 1, 0, '', 0);"
                      "INSERT INTO txn_aborted VALUES (99, 0, 5, 1, 0, 0);"
                      "INSERT INTO partition_leaders VALUES (98, 0, 1, 1);");
    char to[sizeof f->path];
    snprintf(to, sizeof to, "%s/salvaged.db", f->dir);
    lines rep;
    salvage(f, to, &rep);
    const char *tables[] = {"txns", "txn_partitions", "txn_groups", "txn_offsets", "txn_aborted"};
    for (size_t i = 0; i < sizeof tables / sizeof *tables; i++) {
        char want[64];
        snprintf(want, sizeof want, "table %s: ", tables[i]);
        if (!reported(&rep, want)) fail_msg("salvage did not report %s", tables[i]);
    }
    assert_true(reported(&rep, "repaired 2 rows: DELETE FROM txn_partitions"));
    assert_true(reported(&rep, "repaired 1 rows: DELETE FROM txn_groups"));
    assert_true(reported(&rep, "repaired 1 rows: DELETE FROM txn_offsets"));
    assert_true(reported(&rep, "repaired 1 rows: DELETE FROM txn_aborted"));
    assert_true(reported(&rep, "repaired 1 rows: DELETE FROM partition_leaders"));
    assert_true(reported(&rep, "done: 0 tables damaged, 0 not readable"));

    snprintf(f->path, sizeof f->path, "%s", to);
    fx_open(f);
    lines l = load_txns(f->s);
    assert_int_equal(l.n, 4); /* the id and one member of each kind */
    aborted_seen s = read_aborted(f, 2, 0, 0);
    assert_int_equal(s.l.n, 1);
}

/* A database from before migration 6 salvages without counting the newer tables as lost. */
static void test_salvage_version_5(void **state) {
    fx *f = *state;
    stor_close(f->s);
    f->s = NULL;
    fx_raw_exec(f->path, DROP_TXN_TABLES " PRAGMA user_version = 5;");
    char to[sizeof f->path];
    snprintf(to, sizeof to, "%s/salvaged.db", f->dir);
    lines rep;
    salvage(f, to, &rep);
    assert_true(reported(&rep, "table txns: added after schema version 5; starts empty"));
    assert_true(reported(&rep, "table txn_aborted: added after schema version 5; starts empty"));
    assert_true(reported(&rep, "done: 0 tables damaged, 0 not readable"));
    assert_int_equal(fx_raw_int(to, "PRAGMA user_version"), stor_schema_latest());
}

/* A database from before migration 16 salvaged: its txn_partitions rows end up in their txns row. */
static void test_salvage_moves_txn_partitions(void **state) {
    fx *f = *state;
    stor_txn t = txn("open", 1, 0, 1);
    must(f->s, stor_txn_put(f->s, &t));
    must(f->s, stor_commit(f->s));
    stor_close(f->s);
    f->s = NULL;
    char sql[512];
    snprintf(sql, sizeof sql,
             "ALTER TABLE txns DROP COLUMN partitions;"
             "INSERT INTO txn_partitions VALUES ('open', %lld, 2), ('open', %lld, 0);"
             "PRAGMA user_version = 15;",
             (long long)f->topic, (long long)f->topic);
    fx_raw_exec(f->path, sql);
    char to[sizeof f->path];
    snprintf(to, sizeof to, "%s/salvaged.db", f->dir);
    lines rep;
    salvage(f, to, &rep);
    assert_true(reported(&rep, "done: 0 tables damaged, 0 not readable"));
    snprintf(sql, sizeof sql, "SELECT partitions = '%lld:0 %lld:2' FROM txns WHERE transactional_id = 'open'",
             (long long)f->topic, (long long)f->topic);
    assert_int_equal(fx_raw_int(to, sql), 1);
    assert_int_equal(fx_raw_int(to, "SELECT count(*) FROM txn_partitions"), 0);
}

/* ---- query plans: every statement seeks an index; start-up loads walk their own table in key order ---- */

static void assert_plan_sql(stor *s, const char *what, const char *sql, const char *may_scan) {
    char eqp[2048];
    snprintf(eqp, sizeof eqp, "EXPLAIN QUERY PLAN %s", sql);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, eqp, -1, &st, NULL) != SQLITE_OK) fail_msg("%s: %s", sql, sqlite3_errmsg(s->db));
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *detail = (const char *)sqlite3_column_text(st, 3);
        bool scan = strncmp(detail, "SCAN", 4) == 0;
        /* a load's own walk: "SCAN <table>" or "SCAN <table> USING ...", nothing else */
        if (scan && may_scan && strncmp(detail + 5, may_scan, strlen(may_scan)) == 0 &&
            (detail[5 + strlen(may_scan)] == 0 || detail[5 + strlen(may_scan)] == ' '))
            scan = false;
        if (scan || strstr(detail, "TEMP B-TREE")) fail_msg("%s (%s) plans: %s", what, sql, detail);
    }
    sqlite3_finalize(st);
}

static void assert_plan(stor *s, stor_stmt_id id, const char *may_scan) {
    char what[32];
    snprintf(what, sizeof what, "statement %d", id);
    assert_plan_sql(s, what, stor_stmt_sql[id], may_scan);
}

static void test_query_plans(void **state) {
    fx *f = *state;
    static const stor_stmt_id hot[] = {
        STOR_TXNS_UPSERT,          STOR_TXNS_DELETE,          STOR_TXN_GROUP_INSERT,
        STOR_TXN_GROUP_CLEAR,      STOR_TXN_OFFSET_UPSERT,    STOR_TXN_OFFSET_CLEAR,
        STOR_TXN_OFFSET_SUPERSEDE, STOR_TXN_OFFSET_DELETE_GROUP, STOR_TXN_OFFSET_DELETE_TOPIC, STOR_TXN_OFFSET_DELETE_ONE,
        STOR_LOAD_TXN_GROUPS,      STOR_LOAD_TXN_OFFSETS,
        STOR_TXN_ABORTED_INSERT,
        STOR_TXN_ABORTED_READ,     STOR_TXN_ABORTED_DELETE_BELOW,
    };
    for (size_t i = 0; i < sizeof hot / sizeof hot[0]; i++) assert_plan(f->s, hot[i], NULL);
    assert_plan(f->s, STOR_LOAD_TXNS, "txns");
    assert_plan(f->s, STOR_TXN_ABORTED_LAST, "p"); /* the partitions, each with one seek into txn_aborted */

    /* What the cascades of a topic deletion look up in each new child table (SQLite runs such a query per row). */
    static const char *const cascades[] = {
        "SELECT 1 FROM txn_partitions WHERE topic_id = ?1 AND partition = ?2",
        "SELECT 1 FROM txn_aborted WHERE topic_id = ?1 AND partition = ?2",
        "SELECT 1 FROM txn_groups WHERE transactional_id = ?1",
        "SELECT 1 FROM txn_offsets WHERE transactional_id = ?1",
    };
    for (size_t i = 0; i < sizeof cascades / sizeof cascades[0]; i++)
        assert_plan_sql(f->s, "cascade", cascades[i], NULL);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int main(void) {
    const struct CMUnitTest tests[] = {
        T(test_txn_round_trip),
        T(test_txn_offsets_superseded),
        T(test_txn_offset_metadata_with_nul_keeps_every_byte),
        T(test_txn_bad_arguments),
        T(test_txn_delete_cascades),
        T(test_txn_members_clear_and_remove),
        T(test_txn_members_clear_each_kind_alone),
        T(test_txn_offsets_delete_by_group_and_topic),
        T(test_txn_open_from_producer_state),
        T(test_txn_open_survives_log_start_moving_past_it),
        T(test_migration_moves_txn_open_rows),
        T(test_txn_aborted_read),
        T(test_txn_aborted_last),
        T(test_log_start_prunes_aborted),
        T(test_topic_delete_cascades),
        T(test_producer_batches_with_markers),
        T(test_write_kinds),
        T(test_upgrade_from_version_5),
        T(test_txn_partition_list_round_trip),
        T(test_txn_partition_list_text_and_update),
        T(test_txn_partition_list_damaged),
        T(test_upgrade_moves_txn_partitions),
        T(test_salvage_moves_txn_partitions),
        T(test_salvage_txn_tables),
        T(test_salvage_version_5),
        T(test_query_plans),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
