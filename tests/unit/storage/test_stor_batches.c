/* stor: record batches (append, read, time look-ups, log start, producer state) and query plans. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "fixtures.h"
#include "protocol/rdk_batches.h"
#include "stor.h"
#include "stor_int.h"

/* ---- fixture (fixtures.h) with topic "t" (3 partitions) ---- */

static int fx_setup(void **state) {
    *state = fx_new_with_topic("stor_batches", STOR_SYNC_OFF, 3);
    return 0;
}

/* Batch payload derived from its base offset, so reads can be checked byte for byte. */
static size_t payload(int64_t base, uint8_t *buf, size_t cap) {
    size_t n = 61 + (size_t)(base * 37 % 300);
    assert_true(n <= cap);
    for (size_t i = 0; i < n; i++) buf[i] = (uint8_t)(base * 31 + (int64_t)i);
    return n;
}

static stor_batch_meta meta(int64_t base, int32_t count, int64_t max_ts) {
    return (stor_batch_meta){.base_offset = base,
                             .last_offset = base + count - 1,
                             .max_timestamp = max_ts,
                             .producer_id = -1,
                             .producer_epoch = -1,
                             .base_sequence = -1,
                             .last_sequence = -1,
                             .records_count = count};
}

static void append_meta(fx *f, int32_t partition, const stor_batch_meta *m) {
    uint8_t buf[512];
    size_t n = payload(m->base_offset, buf, sizeof buf);
    if (stor_batch_append(f->s, f->topic, partition, m, buf, n) != 0) fail_msg("append: %s", stor_errmsg(f->s));
}

/* Appends batches of `count` records each, bases 0, count, 2*count...; timestamp 1000 + base. */
static void append_run(fx *f, int32_t partition, int nbatches, int32_t count) {
    for (int i = 0; i < nbatches; i++) {
        stor_batch_meta m = meta((int64_t)i * count, count, 1000 + (int64_t)i * count);
        append_meta(f, partition, &m);
    }
}

/* ---- read collector ---- */

typedef struct reader {
    int n, stop_after;
    int64_t bases[64];
} reader;

static bool on_batch(void *ctx, const stor_batch_meta *m, const void *data, size_t len) {
    reader *r = ctx;
    uint8_t want[512];
    size_t n = payload(m->base_offset, want, sizeof want);
    assert_int_equal(len, n);
    assert_memory_equal(data, want, n);
    assert_true(r->n < 64);
    r->bases[r->n++] = m->base_offset;
    return r->stop_after == 0 || r->n < r->stop_after;
}

static reader read_range(fx *f, int32_t partition, int64_t from, int64_t upto, int stop_after) {
    reader r = {.stop_after = stop_after};
    if (stor_batch_read(f->s, f->topic, partition, from, upto, on_batch, &r) != 0) fail_msg("%s", stor_errmsg(f->s));
    return r;
}

/* ---- append and read ---- */

static void test_read_ranges(void **state) {
    fx *f = *state;
    append_run(f, 0, 10, 5); /* batches [0..4] [5..9] ... [45..49] */
    assert_int_equal(stor_commit(f->s), 0);

    reader r = read_range(f, 0, 0, 50, 0);
    assert_int_equal(r.n, 10);
    for (int i = 0; i < 10; i++) assert_int_equal(r.bases[i], i * 5);

    r = read_range(f, 0, 12, 50, 0); /* from inside a batch: that batch comes first */
    assert_int_equal(r.n, 8);
    assert_int_equal(r.bases[0], 10);
    r = read_range(f, 0, 15, 50, 0); /* from a batch boundary */
    assert_int_equal(r.bases[0], 15);
    assert_int_equal(r.n, 7);
    r = read_range(f, 0, 49, 50, 0);
    assert_int_equal(r.n, 1);
    assert_int_equal(r.bases[0], 45);
    r = read_range(f, 0, 50, 60, 0); /* at the end */
    assert_int_equal(r.n, 0);
    r = read_range(f, 1, 0, 50, 0); /* other partition empty */
    assert_int_equal(r.n, 0);
}

static void test_read_upto_cutoff(void **state) {
    fx *f = *state;
    append_run(f, 0, 10, 5);
    reader r = read_range(f, 0, 0, 20, 0); /* high watermark 20: batches up to [15..19] */
    assert_int_equal(r.n, 4);
    assert_int_equal(r.bases[3], 15);
    r = read_range(f, 0, 0, 21, 0); /* a batch starting below upto is served whole */
    assert_int_equal(r.n, 5);
    r = read_range(f, 0, 20, 20, 0);
    assert_int_equal(r.n, 0);
    r = read_range(f, 0, 7, 9, 0);
    assert_int_equal(r.n, 1);
    assert_int_equal(r.bases[0], 5);
}

static void test_read_callback_stops(void **state) {
    fx *f = *state;
    append_run(f, 0, 10, 5);
    reader r = read_range(f, 0, 11, 50, 2);
    assert_int_equal(r.n, 2);
    assert_int_equal(r.bases[0], 10);
    assert_int_equal(r.bases[1], 15);
    /* The statement was reset: a second read works and a commit is not blocked. */
    r = read_range(f, 0, 0, 50, 1);
    assert_int_equal(r.n, 1);
    assert_int_equal(stor_commit(f->s), 0);
    assert_int_equal(stor_batch_read(f->s, f->topic, 0, 0, 50, NULL, NULL), -1);
}

static void test_read_across_gaps(void **state) {
    fx *f = *state;
    /* Compaction-like gaps between batches: [0..4] [10..14] [30..30] */
    stor_batch_meta a = meta(0, 5, 1), b = meta(10, 5, 2), c = meta(30, 1, 3);
    append_meta(f, 2, &a);
    append_meta(f, 2, &b);
    append_meta(f, 2, &c);
    reader r = read_range(f, 2, 6, 100, 0);
    assert_int_equal(r.n, 2);
    assert_int_equal(r.bases[0], 10);
    r = read_range(f, 2, 20, 100, 0);
    assert_int_equal(r.n, 1);
    assert_int_equal(r.bases[0], 30);
}

static void test_append_refuses_bad_batches(void **state) {
    fx *f = *state;
    append_run(f, 0, 2, 5); /* [0..4] [5..9] */
    uint8_t buf[100] = {0};
    stor_batch_meta m = meta(9, 1, 0);
    assert_int_equal(stor_batch_append(f->s, f->topic, 0, &m, buf, sizeof buf), -1); /* overlaps */
    assert_non_null(strstr(stor_errmsg(f->s), "not past"));
    m = meta(3, 1, 0);
    assert_int_equal(stor_batch_append(f->s, f->topic, 0, &m, buf, sizeof buf), -1);
    m = meta(10, 1, 0);
    m.last_offset = 9;
    assert_int_equal(stor_batch_append(f->s, f->topic, 0, &m, buf, sizeof buf), -1);
    m = meta(10, 1, 0);
    m.last_offset = INT64_MAX;
    assert_int_equal(stor_batch_append(f->s, f->topic, 0, &m, buf, sizeof buf), -1);
    m = meta(-5, 1, 0);
    assert_int_equal(stor_batch_append(f->s, f->topic, 1, &m, buf, sizeof buf), -1);
    m = meta(10, 1, 0);
    assert_int_equal(stor_batch_append(f->s, f->topic, 0, &m, NULL, 10), -1);
    assert_int_equal(stor_batch_append(f->s, f->topic, 0, &m, buf, 0), -1);
    assert_int_equal(stor_batch_append(f->s, f->topic, 0, NULL, buf, sizeof buf), -1);
    assert_int_equal(stor_batch_append(f->s, f->topic, 7, &m, buf, sizeof buf), -1); /* no such partition */
    assert_int_equal(stor_batch_append(f->s, f->topic + 1, 0, &m, buf, sizeof buf), -1);
    /* None of that disturbed the transaction. */
    append_meta(f, 0, &m);
    assert_int_equal(stor_commit(f->s), 0);
    fx_reopen(f);
    reader r = read_range(f, 0, 0, 11, 0);
    assert_int_equal(r.n, 3);
    assert_int_equal(r.bases[2], 10);
}

/* An append at base, refused (-1) or taken (0) as the stored rows say. */
static void append_expect(fx *f, int32_t partition, int64_t base, int want) {
    uint8_t buf[100] = {0};
    stor_batch_meta m = meta(base, 1, 0);
    int rc = stor_batch_append(f->s, f->topic, partition, &m, buf, sizeof buf);
    if (rc != want) fail_msg("append at %lld: %d, want %d (%s)", (long long)base, rc, want, stor_errmsg(f->s));
    if (want < 0) assert_non_null(strstr(stor_errmsg(f->s), "not past"));
}

/*
 * The order check keeps each partition's last stored offset in memory (issue 37): after
 * anything that removes or puts back rows it must answer as the rows do, neither refusing an
 * offset past them nor taking one that is not.
 */
static void test_append_order_from_memory_stays_exact(void **state) {
    fx *f = *state;
    append_run(f, 0, 2, 5); /* [0..4] [5..9] */
    assert_int_equal(stor_commit(f->s), 0);
    append_expect(f, 0, 9, -1);

    /* a failed commit rolls back [10] and [11]: 10 is past the rows again, 9 still is not */
    append_expect(f, 0, 10, 0);
    append_expect(f, 0, 11, 0);
    append_expect(f, 0, 11, -1);
    f->s->txn_failed = true;
    assert_int_equal(stor_commit(f->s), -1);
    append_expect(f, 0, 9, -1);
    append_expect(f, 0, 10, 0);
    assert_int_equal(stor_commit(f->s), 0); /* [0..4] [5..9] [10] */

    /* the cleaner removes the last batch: its offsets are free in the rows */
    assert_int_equal(stor_batch_delete(f->s, f->topic, 0, 10), 0);
    append_expect(f, 0, 9, -1);
    append_expect(f, 0, 10, 0);
    append_expect(f, 0, 10, -1);
    assert_int_equal(stor_commit(f->s), 0);

    /* DeleteRecords below the end keeps the last row; past it, no row is left to be past */
    assert_int_equal(stor_log_start_set(f->s, f->topic, 0, 5), 1);
    append_expect(f, 0, 10, -1);
    append_expect(f, 0, 11, 0);
    assert_int_equal(stor_log_start_set(f->s, f->topic, 0, 12), 3);
    append_expect(f, 0, 3, 0);
    append_expect(f, 0, 3, -1);
    assert_int_equal(stor_commit(f->s), 0);

    /* a restart reads the rows again */
    fx_reopen(f);
    append_expect(f, 0, 3, -1);
    append_expect(f, 0, 4, 0);
    assert_int_equal(stor_commit(f->s), 0);

    /* the topic goes and one of the same name comes (maybe with its id): its partitions are empty */
    append_expect(f, 1, 7, 0);
    assert_int_equal(stor_commit(f->s), 0);
    assert_int_equal(stor_topic_delete(f->s, f->topic), 0);
    stor_topic t = {.name = "t", .partitions = 3, .created_ms = 2};
    assert_int_equal(stor_topic_create(f->s, &t), 0);
    assert_int_equal(stor_commit(f->s), 0);
    f->topic = t.id;
    append_expect(f, 1, 0, 0);
    append_expect(f, 0, 0, 0);
    append_expect(f, 0, 0, -1);
    assert_int_equal(stor_commit(f->s), 0);
}

static bool count_batch(void *ctx, const stor_batch_meta *m, const void *data, size_t len) {
    (void)m;
    (void)data;
    (void)len;
    (*(int *)ctx)++;
    return true;
}

static void test_metadata_round_trip(void **state) {
    fx *f = *state;
    stor_batch_meta m = {.base_offset = 100,
                         .last_offset = 102,
                         .max_timestamp = 1700000000123,
                         .producer_id = 123456789012,
                         .producer_epoch = 32767,
                         .base_sequence = 2147483645,
                         .last_sequence = 2147483647,
                         .records_count = 3};
    uint8_t big[70000];
    for (size_t i = 0; i < sizeof big; i++) big[i] = (uint8_t)(i * 7);
    assert_int_equal(stor_batch_append(f->s, f->topic, 1, &m, big, sizeof big), 0);
    assert_int_equal(stor_commit(f->s), 0);
    fx_reopen(f);
    stor_batch_meta got;
    assert_int_equal(stor_oldest_batch(f->s, f->topic, 1, &got), 1);
    assert_int_equal(got.base_offset, m.base_offset);
    assert_int_equal(got.last_offset, m.last_offset);
    assert_int_equal(got.max_timestamp, m.max_timestamp);
    assert_int_equal(got.producer_id, m.producer_id);
    assert_int_equal(got.producer_epoch, m.producer_epoch);
    assert_int_equal(got.base_sequence, m.base_sequence);
    assert_int_equal(got.last_sequence, m.last_sequence);
    assert_int_equal(got.records_count, m.records_count);
    assert_int_equal(stor_partition_bytes(f->s, f->topic, 1), (int64_t)sizeof big);
    int n = 0;
    assert_int_equal(stor_batch_read(f->s, f->topic, 1, 0, 1000, count_batch, &n), 0);
    assert_int_equal(n, 1);
}

/* ---- time look-ups ---- */

static void test_offset_for_time(void **state) {
    fx *f = *state;
    int64_t off = -7, ts = -7;
    assert_int_equal(stor_offset_for_time(f->s, f->topic, 0, 0, &off, &ts), 0);
    assert_int_equal(off, -7);
    /* Timestamps not monotonic: [0..4]@100 [5..9]@300 [10..14]@200 [15..19]@400 */
    stor_batch_meta ms[] = {meta(0, 5, 100), meta(5, 5, 300), meta(10, 5, 200), meta(15, 5, 400)};
    for (size_t i = 0; i < 4; i++) append_meta(f, 0, &ms[i]);

    assert_int_equal(stor_offset_for_time(f->s, f->topic, 0, 50, &off, &ts), 1);
    assert_int_equal(off, 0);
    assert_int_equal(ts, 100);
    assert_int_equal(stor_offset_for_time(f->s, f->topic, 0, 100, &off, &ts), 1);
    assert_int_equal(off, 0);
    assert_int_equal(stor_offset_for_time(f->s, f->topic, 0, 150, &off, &ts), 1);
    assert_int_equal(off, 5); /* first by offset, not the closest timestamp (200) */
    assert_int_equal(ts, 300);
    assert_int_equal(stor_offset_for_time(f->s, f->topic, 0, 301, &off, &ts), 1);
    assert_int_equal(off, 15);
    assert_int_equal(ts, 400);
    assert_int_equal(stor_offset_for_time(f->s, f->topic, 0, 401, &off, &ts), 0);
    assert_int_equal(stor_offset_for_time(f->s, f->topic, 1, 0, &off, &ts), 0);
}

static void test_max_timestamp(void **state) {
    fx *f = *state;
    int64_t off = -7, ts = -7;
    assert_int_equal(stor_max_timestamp(f->s, f->topic, 0, &off, &ts), 0);
    stor_batch_meta ms[] = {meta(0, 5, 100), meta(5, 5, 400), meta(10, 5, 200), meta(15, 3, 400), meta(18, 1, 50)};
    for (size_t i = 0; i < 5; i++) append_meta(f, 0, &ms[i]);
    assert_int_equal(stor_max_timestamp(f->s, f->topic, 0, &off, &ts), 1);
    assert_int_equal(off, 9); /* last offset of the earliest batch holding the max */
    assert_int_equal(ts, 400);
}

/* ---- log start ---- */

static void test_log_start_set(void **state) {
    fx *f = *state;
    append_run(f, 0, 10, 5); /* [0..4] ... [45..49], 10 batches */
    int64_t bytes_all = stor_partition_bytes(f->s, f->topic, 0);
    uint8_t buf[512];
    int64_t first_two = (int64_t)payload(0, buf, sizeof buf) + (int64_t)payload(5, buf, sizeof buf);
    assert_int_equal(stor_commit(f->s), 0);

    assert_int_equal(stor_log_start_set(f->s, f->topic, 0, 12), 2); /* [10..14] holds 12: kept */
    assert_int_equal(stor_partition_bytes(f->s, f->topic, 0), bytes_all - first_two);
    stor_batch_meta m;
    assert_int_equal(stor_oldest_batch(f->s, f->topic, 0, &m), 1);
    assert_int_equal(m.base_offset, 10);
    reader r = read_range(f, 0, 0, 50, 0);
    assert_int_equal(r.n, 8);
    assert_int_equal(r.bases[0], 10);

    assert_int_equal(stor_log_start_set(f->s, f->topic, 0, 5), 0); /* never moves back */
    assert_int_equal(stor_log_start_set(f->s, f->topic, 0, 15), 1);
    assert_int_equal(stor_log_start_set(f->s, f->topic, 5, 1), -1);
    assert_int_equal(stor_log_start_set(f->s, f->topic, 0, -1), -1);
    assert_int_equal(stor_commit(f->s), 0);
    fx_reopen(f);

    assert_int_equal(stor_oldest_batch(f->s, f->topic, 0, &m), 1);
    assert_int_equal(m.base_offset, 15);

    /* Everything deleted: the partition restarts at log start. */
    assert_int_equal(stor_log_start_set(f->s, f->topic, 0, 50), 7);
    assert_int_equal(stor_oldest_batch(f->s, f->topic, 0, &m), 0);
    assert_int_equal(stor_partition_bytes(f->s, f->topic, 0), 0);
    assert_int_equal(stor_commit(f->s), 0);
    fx_reopen(f);
    assert_int_equal(stor_partition_bytes(f->s, f->topic, 5), -1);
}

typedef struct parts_seen {
    stor *s;
    int64_t log_start[3], next[3], max_ts[3];
} parts_seen;

static void on_partition(void *ctx, int64_t topic_id, int32_t partition, int64_t log_start, int64_t next_offset) {
    parts_seen *p = ctx;
    assert_in_range(partition, 0, 2);
    p->log_start[partition] = log_start;
    p->next[partition] = next_offset;
    /* Other read functions may run inside a load callback. */
    int64_t off;
    p->max_ts[partition] = -1;
    assert_int_not_equal(stor_max_timestamp(p->s, topic_id, partition, &off, &p->max_ts[partition]), -1);
}

static void test_load_next_offsets(void **state) {
    fx *f = *state;
    append_run(f, 0, 4, 5);  /* next 20 */
    append_run(f, 1, 4, 5);  /* log start 20 below: empty, next 20 */
    assert_int_equal(stor_log_start_set(f->s, f->topic, 1, 20), 4);
    assert_int_equal(stor_log_start_set(f->s, f->topic, 0, 7), 1);
    assert_int_equal(stor_commit(f->s), 0);
    fx_reopen(f);
    parts_seen p = {.s = f->s};
    stor_load_cb cb = {.ctx = &p, .partition = on_partition};
    assert_int_equal(stor_load(f->s, &cb), 0);
    assert_int_equal(p.log_start[0], 7);
    assert_int_equal(p.next[0], 20);
    assert_int_equal(p.log_start[1], 20);
    assert_int_equal(p.next[1], 20);
    assert_int_equal(p.log_start[2], 0);
    assert_int_equal(p.next[2], 0);
    assert_int_equal(p.max_ts[0], 1015);
    assert_int_equal(p.max_ts[1], -1);
    assert_int_equal(p.max_ts[2], -1);
}

/* ---- idempotent producers ---- */

typedef struct seen {
    int n;
    struct {
        int64_t topic;
        int32_t partition;
        stor_batch_meta m;
    } rows[64];
} seen;

static void on_producer_batch(void *ctx, int64_t topic_id, int32_t partition, const stor_batch_meta *m) {
    seen *s = ctx;
    assert_true(s->n < 64);
    s->rows[s->n].topic = topic_id;
    s->rows[s->n].partition = partition;
    s->rows[s->n].m = *m;
    s->n++;
}

static void append_idem(fx *f, int32_t partition, int64_t base, int64_t pid, int32_t seq) {
    stor_batch_meta m = meta(base, 2, base);
    m.producer_id = pid;
    m.producer_epoch = 3;
    m.base_sequence = seq;
    m.last_sequence = seq + 1;
    append_meta(f, partition, &m);
}

static void test_producer_batches(void **state) {
    fx *f = *state;
    int64_t base = 0;
    /* Partition 0: producer 7 writes 8 batches, producer 9 writes 2, others are not idempotent. */
    for (int i = 0; i < 8; i++) {
        append_idem(f, 0, base, 7, i * 2);
        base += 2;
        if (i == 3) {
            append_idem(f, 0, base, 9, 0);
            base += 2;
            stor_batch_meta plain = meta(base, 2, 0);
            append_meta(f, 0, &plain);
            base += 2;
            append_idem(f, 0, base, 9, 2);
            base += 2;
        }
    }
    /* Partition 2: producer 7 again (state is per partition). */
    append_idem(f, 2, 0, 7, 40);
    assert_int_equal(stor_commit(f->s), 0);
    fx_reopen(f);

    seen s = {0};
    assert_int_equal(stor_load_producer_batches(f->s, on_producer_batch, &s), 0);
    assert_int_equal(s.n, 5 + 2 + 1);
    /* Producer 7 of partition 0: its newest 5 (sequences 6..14), oldest first. */
    for (int i = 0; i < 5; i++) {
        assert_int_equal(s.rows[i].topic, f->topic);
        assert_int_equal(s.rows[i].partition, 0);
        assert_int_equal(s.rows[i].m.producer_id, 7);
        assert_int_equal(s.rows[i].m.base_sequence, (i + 3) * 2);
        assert_int_equal(s.rows[i].m.producer_epoch, 3);
        if (i) assert_true(s.rows[i].m.base_offset > s.rows[i - 1].m.base_offset);
    }
    assert_int_equal(s.rows[5].m.producer_id, 9);
    assert_int_equal(s.rows[5].m.base_sequence, 0);
    assert_int_equal(s.rows[6].m.base_sequence, 2);
    assert_int_equal(s.rows[7].partition, 2);
    assert_int_equal(s.rows[7].m.producer_id, 7);
    assert_int_equal(s.rows[7].m.base_sequence, 40);

    assert_int_equal(stor_load_producer_batches(f->s, NULL, NULL), -1);
}

static void test_producer_batches_empty(void **state) {
    fx *f = *state;
    append_run(f, 0, 3, 1);
    seen s = {0};
    assert_int_equal(stor_load_producer_batches(f->s, on_producer_batch, &s), 0);
    assert_int_equal(s.n, 0);
}

/* ---- the producer snapshot (migration 18): what start-up loads does not depend on it ---- */

/* A load with its rows in a buffer of any size (the 64 rows of seen are too few here). */
typedef struct loaded_rows {
    int n;
    struct {
        int32_t partition;
        stor_batch_meta m;
    } rows[512];
} loaded_rows;

static void on_loaded_row(void *ctx, int64_t topic_id, int32_t partition, const stor_batch_meta *m) {
    (void)topic_id;
    loaded_rows *l = ctx;
    assert_true(l->n < 512);
    l->rows[l->n].partition = partition;
    l->rows[l->n].m = *m;
    l->n++;
}

static void load_rows(fx *f, loaded_rows *l) {
    l->n = 0;
    if (stor_load_producer_batches(f->s, on_loaded_row, l) != 0) fail_msg("load: %s", stor_errmsg(f->s));
}

static void assert_same_rows(const loaded_rows *a, const loaded_rows *b) {
    assert_int_equal(a->n, b->n);
    for (int i = 0; i < a->n; i++) {
        assert_int_equal(a->rows[i].partition, b->rows[i].partition);
        const stor_batch_meta *x = &a->rows[i].m, *y = &b->rows[i].m;
        assert_int_equal(x->base_offset, y->base_offset);
        assert_int_equal(x->last_offset, y->last_offset);
        assert_int_equal(x->max_timestamp, y->max_timestamp);
        assert_int_equal(x->producer_id, y->producer_id);
        assert_int_equal(x->producer_epoch, y->producer_epoch);
        assert_int_equal(x->base_sequence, y->base_sequence);
        assert_int_equal(x->last_sequence, y->last_sequence);
        assert_int_equal(x->records_count, y->records_count);
    }
}

static int64_t snapshot_ends(fx *f) {
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(f->s->db, "SELECT count(*) FROM producer_snapshot_end", -1, &st, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int64_t n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

/* The same load with no snapshot at all: every partition folded from its first batch. */
static void load_without_snapshot(fx *f, loaded_rows *l) {
    assert_int_equal(sqlite3_exec(f->s->db, "SAVEPOINT nosnap; DELETE FROM producer_snapshot;"
                                            " DELETE FROM producer_snapshot_end;", NULL, NULL, NULL), SQLITE_OK);
    load_rows(f, l);
    assert_int_equal(sqlite3_exec(f->s->db, "ROLLBACK TO nosnap; RELEASE nosnap", NULL, NULL, NULL), SQLITE_OK);
}

/* 0 from a small generator, so a failure replays */
static uint32_t rnd(uint32_t *x) {
    *x ^= *x << 13;
    *x ^= *x >> 17;
    *x ^= *x << 5;
    return *x;
}

/*
 * Producers 1..6 (and non-idempotent batches) over two partitions, markers among them, snapshots
 * taken at random points: after every commit, a load from the snapshot and the batches past it
 * hands on exactly what a load from the batches alone does, as the index by producer did.
 */
static void test_producer_snapshot_matches_batches(void **state) {
    fx *f = *state;
    uint32_t x = 2463534242u;
    int64_t next[2] = {0, 0};
    int32_t seq[2][7] = {{0}};
    int16_t epoch[2][7] = {{0}};
    static loaded_rows a, b;
    for (int i = 0; i < 400; i++) {
        int32_t part = (int32_t)(rnd(&x) % 2);
        int pid = (int)(rnd(&x) % 7); /* 0: not idempotent */
        stor_batch_meta m = meta(next[part], 1 + (int32_t)(rnd(&x) % 3), 5000 + i);
        if (pid) {
            m.producer_id = pid;
            if (rnd(&x) % 5 == 0) { /* a marker, now and then with a bumped epoch */
                if (rnd(&x) % 2) epoch[part][pid]++, seq[part][pid] = 0;
                m.records_count = 1;
                m.last_offset = m.base_offset;
                m.producer_epoch = epoch[part][pid];
            } else {
                m.producer_epoch = epoch[part][pid];
                m.base_sequence = seq[part][pid];
                m.last_sequence = seq[part][pid] + m.records_count - 1;
                seq[part][pid] += m.records_count;
            }
        }
        append_meta(f, part, &m);
        next[part] = m.last_offset + 1;
        if (rnd(&x) % 40 == 0) assert_int_equal(stor_producer_snapshot(f->s), 0);
        if (rnd(&x) % 10 == 0) {
            assert_int_equal(stor_commit(f->s), 0);
            load_rows(f, &a);
            load_without_snapshot(f, &b);
            assert_same_rows(&a, &b);
        }
    }
    assert_int_equal(stor_commit(f->s), 0);
    load_without_snapshot(f, &b);
    assert_true(b.n > 12);
    /* a clean stop writes the snapshot; the next start reads no batch for it */
    fx_reopen(f);
    assert_int_equal(snapshot_ends(f), 2);
    load_rows(f, &a);
    assert_same_rows(&a, &b);
    assert_int_equal(f->s->producer_snap_due, 0);
}

/* stor_partition_bytes against a sum of the rows (schema migration 21 keeps it only below bytes_end). */
static int64_t rows_bytes(fx *f, int32_t part) {
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(f->s->db,
                                        "SELECT coalesce(sum(size), 0) FROM batches WHERE topic_id = ?1 AND partition = ?2",
                                        -1, &st, NULL),
                     SQLITE_OK);
    sqlite3_bind_int64(st, 1, f->topic);
    sqlite3_bind_int(st, 2, part);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int64_t sum = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return sum;
}

static void assert_bytes_exact(fx *f, int32_t part) {
    assert_int_equal(stor_partition_bytes(f->s, f->topic, part), rows_bytes(f, part));
    stor_clean_state cs;
    assert_int_equal(stor_clean_state_get(f->s, f->topic, part, &cs), 0);
    assert_int_equal(cs.bytes, rows_bytes(f, part));
}

/* The partition's batch at a random rank (r), or -1: deterministic, so a failure repeats. */
static int64_t random_batch(fx *f, int32_t part, uint32_t r) {
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(f->s->db,
                                        "SELECT base_offset FROM batches WHERE partition = ?1 ORDER BY base_offset"
                                        " LIMIT 1 OFFSET ?2 % max(1, (SELECT count(*) FROM batches WHERE partition = ?1))",
                                        -1, &st, NULL),
                     SQLITE_OK);
    sqlite3_bind_int(st, 1, part);
    sqlite3_bind_int64(st, 2, r);
    int64_t base = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
    sqlite3_finalize(st);
    return base;
}

/*
 * The same over removals and restarts (migration 19 trims the snapshot instead of dropping it):
 * DeleteRecords and retention (from the head), compaction's removals and rewrites (anywhere,
 * even of a producer's newest batch, which compaction keeps), clean stops and kill -9s; after
 * every commit the load from snapshot and tail equals a fold of all the rows left.
 */
static void test_producer_snapshot_matches_batches_after_removals(void **state) {
    fx *f = *state;
    /* SNAP_SEED=N runs it with another seed (300 seeds passed when it was written) */
    uint32_t x = getenv("SNAP_SEED") ? (uint32_t)strtoul(getenv("SNAP_SEED"), NULL, 10) : 88172645u;
    int64_t next[2] = {0, 0};
    int32_t seq[2][7] = {{0}};
    int16_t epoch[2][7] = {{0}};
    static loaded_rows a, b;
    uint8_t buf[512];
    size_t len = payload(0, buf, sizeof buf);
    for (int i = 0; i < 3000; i++) {
        int32_t part = (int32_t)(rnd(&x) % 2);
        int pid = (int)(rnd(&x) % 7); /* 0: not idempotent */
        stor_batch_meta m = meta(next[part], 1 + (int32_t)(rnd(&x) % 3), 5000 + i);
        if (pid) {
            m.producer_id = pid;
            if (rnd(&x) % 6 == 0) {
                if (rnd(&x) % 2) epoch[part][pid]++, seq[part][pid] = 0;
                m.records_count = 1;
                m.last_offset = m.base_offset;
                m.producer_epoch = epoch[part][pid];
            } else {
                m.producer_epoch = epoch[part][pid];
                m.base_sequence = seq[part][pid];
                m.last_sequence = seq[part][pid] + m.records_count - 1;
                seq[part][pid] += m.records_count;
            }
        }
        append_meta(f, part, &m);
        next[part] = m.last_offset + 1;
        uint32_t op = rnd(&x) % 100;
        if (op < 3) { /* DeleteRecords or retention: the log start moves up */
            int64_t first = random_batch(f, part, rnd(&x));
            int64_t to = first + 1 + rnd(&x) % 12;
            if (to > next[part]) to = next[part]; /* never past the log end, as DeleteRecords and retention */
            if (first >= 0) assert_true(stor_log_start_set(f->s, f->topic, part, to) >= 0);
        } else if (op < 8) { /* compaction removes a batch */
            int64_t at = random_batch(f, part, rnd(&x));
            if (at >= 0) assert_int_equal(stor_batch_delete(f->s, f->topic, part, at), 0);
        } else if (op < 14) { /* compaction rewrites one */
            int64_t at = random_batch(f, part, rnd(&x));
            if (at >= 0)
                assert_true(stor_batch_replace(f->s, f->topic, part, at, 100 + rnd(&x) % 1000, (int32_t)(rnd(&x) % 3),
                                               buf, len) >= 0);
        } else if (op < 20) {
            assert_int_equal(stor_producer_snapshot(f->s), 0);
        }
        if (rnd(&x) % 8 == 0) {
            assert_int_equal(stor_commit(f->s), 0);
            uint32_t r = rnd(&x) % 40;
            if (r == 0) {
                fx_reopen(f); /* a clean stop: the snapshot written */
            } else if (r == 1) {
                f->s->producer_snap_due = 0; /* as a kill -9 would: no snapshot at close */
                fx_reopen(f);
            }
            load_rows(f, &a);
            load_without_snapshot(f, &b);
            assert_same_rows(&a, &b);
            assert_bytes_exact(f, 0);
            assert_bytes_exact(f, 1);
        }
    }
    assert_int_equal(stor_commit(f->s), 0);
    fx_reopen(f);
    assert_bytes_exact(f, 0);
    assert_bytes_exact(f, 1);
    load_rows(f, &a);
    load_without_snapshot(f, &b);
    assert_same_rows(&a, &b);
    assert_true(b.n > 12);
    assert_true(fx_raw_int(f->path, "SELECT count(*) FROM producer_snapshot") > 0);
}

/*
 * partitions.bytes counts the rows below bytes_end and the readers the rows past it (migration
 * 20): the size is exact after appends past the snapshot, removals on either side of it and
 * rewrites, through a kill -9 (no snapshot at close) and a clean stop (which folds the rows in).
 */
static void test_partition_bytes_exact_after_kill9(void **state) {
    fx *f = *state;
    uint8_t buf[512];
    size_t n = payload(0, buf, sizeof buf);
    append_run(f, 0, 10, 5); /* [0..4] ... [45..49] */
    assert_int_equal(stor_commit(f->s), 0);
    fx_reopen(f); /* clean stop: every row counted in the partitions row */
    assert_int_equal(fx_raw_int(f->path, "SELECT bytes_end FROM partitions WHERE partition = 0"), 50);
    assert_int_equal(fx_raw_int(f->path, "SELECT bytes FROM partitions WHERE partition = 0"), rows_bytes(f, 0));
    int64_t counted = rows_bytes(f, 0);

    for (int i = 10; i < 16; i++) {
        stor_batch_meta m = meta((int64_t)i * 5, 5, 1000 + (int64_t)i * 5);
        append_meta(f, 0, &m);
    }
    assert_int_equal(stor_commit(f->s), 0);
    /* appends past the snapshot touch no partitions row: that was the point */
    assert_int_equal(fx_raw_int(f->path, "SELECT bytes FROM partitions WHERE partition = 0"), counted);
    assert_bytes_exact(f, 0);
    f->s->producer_snap_due = 0; /* as a kill -9 would: no snapshot at close */
    fx_reopen(f);
    assert_bytes_exact(f, 0);

    /* removals on both sides of bytes_end: the log start, compaction, a rewrite that shrinks */
    assert_int_equal(stor_log_start_set(f->s, f->topic, 0, 10), 2);
    assert_int_equal(stor_batch_delete(f->s, f->topic, 0, 20), 0);
    assert_int_equal(stor_batch_delete(f->s, f->topic, 0, 60), 0);
    assert_true(stor_batch_replace(f->s, f->topic, 0, 25, 1, 1, buf, 7) >= 0);
    assert_true(stor_batch_replace(f->s, f->topic, 0, 65, 1, 1, buf, n) >= 0);
    assert_bytes_exact(f, 0);
    assert_int_equal(stor_commit(f->s), 0);
    f->s->producer_snap_due = 0;
    fx_reopen(f);
    assert_bytes_exact(f, 0);

    /* everything below the log end removed, then appended past it again */
    assert_int_equal(stor_log_start_set(f->s, f->topic, 0, 80), 12);
    assert_int_equal(stor_partition_bytes(f->s, f->topic, 0), 0);
    stor_batch_meta m = meta(80, 3, 2000);
    append_meta(f, 0, &m);
    assert_int_equal(stor_commit(f->s), 0);
    f->s->producer_snap_due = 0;
    fx_reopen(f);
    assert_bytes_exact(f, 0);
    assert_int_equal(stor_partition_bytes(f->s, f->topic, 0), (int64_t)payload(80, buf, sizeof buf));

    /* a clean stop after the start's load (the broker's, which marks the partition) folds the rows past bytes_end in */
    seen ps = {0};
    assert_int_equal(stor_load_producer_batches(f->s, on_producer_batch, &ps), 0);
    fx_reopen(f);
    assert_int_equal(fx_raw_int(f->path, "SELECT bytes_end FROM partitions WHERE partition = 0"), 83);
    assert_int_equal(fx_raw_int(f->path, "SELECT bytes FROM partitions WHERE partition = 0"), rows_bytes(f, 0));
    assert_bytes_exact(f, 0);
}

/* As after kill -9: batches committed past the snapshot are folded in at the next start. */
static void test_producer_snapshot_kill9_tail(void **state) {
    fx *f = *state;
    for (int i = 0; i < 6; i++) append_idem(f, 0, i * 2, 7, i * 2);
    assert_int_equal(stor_commit(f->s), 0);
    fx_reopen(f); /* snapshot at offset 12 */
    for (int i = 6; i < 9; i++) append_idem(f, 0, i * 2, 7, i * 2);
    assert_int_equal(stor_commit(f->s), 0);
    f->s->producer_snap_due = 0; /* close as a kill -9 would: no snapshot of the newest batches */
    fx_reopen(f);
    assert_int_equal(fx_raw_int(f->path, "SELECT end_offset FROM producer_snapshot_end"), 12);
    seen s = {0};
    assert_int_equal(stor_load_producer_batches(f->s, on_producer_batch, &s), 0);
    assert_int_equal(s.n, 5);
    for (int i = 0; i < 5; i++) assert_int_equal(s.rows[i].m.base_sequence, (i + 4) * 2);
    /* the load counted what it read past the snapshot: the next clean stop writes it */
    assert_int_equal(f->s->producer_snap_due, 3);
    fx_reopen(f);
    assert_int_equal(fx_raw_int(f->path, "SELECT end_offset FROM producer_snapshot_end"), 18);
}

/*
 * Batches the snapshot covers removed from the partition's head (retention, DeleteRecords) or
 * rewritten (compaction): it is trimmed, not dropped (migration 19), and still says what the
 * batches left say.
 */
static void test_producer_snapshot_trimmed_with_its_batches(void **state) {
    fx *f = *state;
    for (int i = 0; i < 8; i++) append_idem(f, 0, i * 2, 7, i * 2);
    append_idem(f, 0, 16, 9, 0);
    append_idem(f, 1, 0, 8, 0);
    assert_int_equal(stor_commit(f->s), 0);
    assert_int_equal(stor_producer_snapshot(f->s), 0);
    assert_int_equal(stor_commit(f->s), 0);
    assert_int_equal(snapshot_ends(f), 2);

    /* past the snapshot: it stays */
    append_idem(f, 0, 18, 7, 16);
    assert_int_equal(stor_commit(f->s), 0);
    assert_int_equal(stor_batch_delete(f->s, f->topic, 0, 18), 0);
    assert_int_equal(stor_commit(f->s), 0);
    assert_int_equal(snapshot_ends(f), 2);

    /* retention below offset 12: producer 7 keeps its newest batches, its older entries are skipped */
    assert_true(stor_log_start_set(f->s, f->topic, 0, 12) >= 0);
    assert_int_equal(stor_commit(f->s), 0);
    assert_int_equal(snapshot_ends(f), 2);
    static loaded_rows a, b;
    load_rows(f, &a);
    load_without_snapshot(f, &b);
    assert_same_rows(&a, &b);
    assert_int_equal(a.n, 4); /* partition 0: producer 7's sequences 12, 14, producer 9's 0; partition 1: 0 */
    assert_int_equal(a.rows[0].m.base_sequence, 12);

    /* retention past producer 7's newest batch: its row goes, producer 9's stays */
    assert_true(stor_log_start_set(f->s, f->topic, 0, 16) >= 0);
    assert_int_equal(stor_commit(f->s), 0);
    assert_int_equal(snapshot_ends(f), 2);
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM producer_snapshot WHERE partition = 0"), 1);
    load_rows(f, &a);
    load_without_snapshot(f, &b);
    assert_same_rows(&a, &b);
    assert_int_equal(a.n, 2);

    /* compaction rewriting a covered batch: the row is stale, the load reads the batch's new columns */
    assert_int_equal(stor_producer_snapshot(f->s), 0);
    assert_int_equal(stor_commit(f->s), 0);
    uint8_t buf[512];
    size_t n = payload(0, buf, sizeof buf);
    assert_true(stor_batch_replace(f->s, f->topic, 1, 0, 1, 1, buf, n) >= 0);
    assert_int_equal(stor_commit(f->s), 0);
    assert_int_equal(snapshot_ends(f), 2);
    assert_int_equal(fx_raw_int(f->path, "SELECT stale FROM producer_snapshot WHERE partition = 1"), 1);
    load_rows(f, &a);
    assert_int_equal(a.rows[1].m.records_count, 1);
    assert_int_equal(a.rows[1].m.max_timestamp, 1);
    load_without_snapshot(f, &b);
    assert_same_rows(&a, &b);
    assert_int_equal(stor_producer_snapshot(f->s), 0);
    assert_int_equal(stor_commit(f->s), 0);
    assert_int_equal(fx_raw_int(f->path, "SELECT stale FROM producer_snapshot WHERE partition = 1"), 0);

    /* the topic's deletion takes the snapshot with it */
    assert_int_equal(stor_producer_snapshot(f->s), 0);
    assert_int_equal(stor_commit(f->s), 0);
    assert_true(stor_topic_delete(f->s, f->topic) >= 0);
    assert_int_equal(stor_commit(f->s), 0);
    assert_int_equal(snapshot_ends(f), 0);
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM producer_snapshot"), 0);
}

/*
 * Regression (issue 37, every snapshot folded every partition): a snapshot folds only the
 * partitions whose rows changed since it, and a snapshot rolled back leaves them due. Partition
 * 1's snapshot row is made unreadable: a fold of it would fail.
 */
static void test_producer_snapshot_folds_only_changed_partitions(void **state) {
    fx *f = *state;
    append_idem(f, 0, 0, 7, 0);
    append_idem(f, 1, 0, 8, 0);
    assert_int_equal(stor_commit(f->s), 0);
    assert_int_equal(stor_producer_snapshot(f->s), 0);
    assert_int_equal(stor_commit(f->s), 0);
    assert_int_equal(snapshot_ends(f), 2);
    assert_int_equal(sqlite3_exec(f->s->db, "UPDATE producer_snapshot SET batches = x'00' WHERE partition = 1", NULL,
                                  NULL, NULL),
                     SQLITE_OK);

    /* nothing changed: nothing folded */
    assert_int_equal(stor_producer_snapshot(f->s), 0);
    append_idem(f, 0, 2, 7, 2);
    assert_int_equal(stor_producer_snapshot(f->s), 0);
    assert_int_equal(stor_commit(f->s), 0);
    assert_int_equal(fx_raw_int(f->path, "SELECT end_offset FROM producer_snapshot_end WHERE partition = 0"), 4);

    /* a snapshot in a transaction that is rolled back: partition 0 stays due */
    append_idem(f, 0, 4, 7, 4);
    assert_int_equal(stor_commit(f->s), 0);
    assert_int_equal(stor_write_begin_as(f->s, STOR_TXN_OTHER), 0);
    assert_int_equal(stor_producer_snapshot(f->s), 0);
    assert_int_equal(sqlite3_exec(f->s->db, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(stor_commit(f->s), -1); /* sees the rolled-back transaction */
    assert_int_equal(fx_raw_int(f->path, "SELECT end_offset FROM producer_snapshot_end WHERE partition = 0"), 4);
    assert_int_equal(stor_producer_snapshot(f->s), 0);
    assert_int_equal(fx_raw_int(f->path, "SELECT end_offset FROM producer_snapshot_end WHERE partition = 0"), 6);

    /* a removal marks its partition too (here one with no snapshot, as after a dropped one) */
    assert_int_equal(sqlite3_exec(f->s->db,
                                  "DELETE FROM producer_snapshot WHERE partition = 1;"
                                  " DELETE FROM producer_snapshot_end WHERE partition = 1",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    append_idem(f, 1, 2, 8, 2);
    assert_int_equal(stor_commit(f->s), 0);
    assert_int_equal(stor_producer_snapshot(f->s), 0);
    assert_int_equal(snapshot_ends(f), 2);
    assert_int_equal(sqlite3_exec(f->s->db,
                                  "DELETE FROM producer_snapshot WHERE partition = 1;"
                                  " DELETE FROM producer_snapshot_end WHERE partition = 1",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    assert_true(stor_log_start_set(f->s, f->topic, 1, 2) >= 0);
    assert_int_equal(stor_commit(f->s), 0);
    assert_int_equal(stor_producer_snapshot(f->s), 0);
    assert_int_equal(snapshot_ends(f), 2);
    static loaded_rows a, b;
    load_rows(f, &a);
    load_without_snapshot(f, &b);
    assert_same_rows(&a, &b);
}

/* A long run of batches brings the snapshot up to date in a commit, not only at close. */
static void test_producer_snapshot_every_n_batches(void **state) {
    fx *f = *state;
    for (int i = 0; i < STOR_PRODUCER_SNAPSHOT_EVERY - 1; i++) append_idem(f, 0, i * 2, 7, i * 2);
    assert_int_equal(stor_commit(f->s), 0);
    assert_int_equal(snapshot_ends(f), 0);
    append_idem(f, 0, (STOR_PRODUCER_SNAPSHOT_EVERY - 1) * 2, 7, (STOR_PRODUCER_SNAPSHOT_EVERY - 1) * 2);
    assert_int_equal(stor_commit(f->s), 0);
    assert_int_equal(fx_raw_int(f->path, "SELECT end_offset FROM producer_snapshot_end"),
                     STOR_PRODUCER_SNAPSHOT_EVERY * 2);
    assert_int_equal(f->s->producer_snap_due, 0);
}

/* Regression (compaction asking for an idle producer's newest data batch walked the partition once per batch):
 * the answer comes from a fold kept between calls, which must follow appends, commits and rollbacks. */
static void test_producer_last_data_follows_appends(void **state) {
    fx *f = *state;
    int64_t last = -1;
    append_idem(f, 0, 0, 7, 0);
    append_idem(f, 0, 2, 8, 0);
    assert_int_equal(stor_producer_last_data(f->s, f->topic, 0, 7, &last), 1);
    assert_int_equal(last, 0);
    append_idem(f, 0, 4, 7, 2); /* same transaction, after the fold */
    assert_int_equal(stor_producer_last_data(f->s, f->topic, 0, 7, &last), 1);
    assert_int_equal(last, 4);
    assert_int_equal(stor_producer_last_data(f->s, f->topic, 1, 7, &last), 0); /* another partition */
    assert_int_equal(stor_commit(f->s), 0);
    /* a dropped older batch changes no producer's newest */
    assert_int_equal(stor_batch_delete(f->s, f->topic, 0, 0), 0);
    assert_int_equal(stor_producer_last_data(f->s, f->topic, 0, 7, &last), 1);
    assert_int_equal(last, 4);
    assert_int_equal(stor_commit(f->s), 0);
    /* a rolled-back append is forgotten, and its offsets used again by another producer */
    assert_int_equal(stor_op_begin(f->s), 0);
    append_idem(f, 0, 6, 7, 4);
    assert_int_equal(stor_producer_last_data(f->s, f->topic, 0, 7, &last), 1);
    assert_int_equal(last, 6);
    assert_int_equal(stor_op_end(f->s, -1), -1);
    append_idem(f, 0, 6, 8, 2);
    assert_int_equal(stor_producer_last_data(f->s, f->topic, 0, 7, &last), 1);
    assert_int_equal(last, 4);
    assert_int_equal(stor_producer_last_data(f->s, f->topic, 0, 8, &last), 1);
    assert_int_equal(last, 6);
    assert_int_equal(stor_commit(f->s), 0);
}

/* No index by producer since migration 18: each stored batch is one row in three b-trees, not four. */
static void test_no_producer_index(void **state) {
    fx *f = *state;
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM sqlite_master WHERE name = 'batches_producer'"), 0);
    append_idem(f, 0, 0, 7, 0);
    append_idem(f, 0, 2, 7, 2);
    append_idem(f, 0, 4, 8, 0);
    int64_t last = -1;
    assert_int_equal(stor_producer_last_data(f->s, f->topic, 0, 7, &last), 1);
    assert_int_equal(last, 2);
    assert_int_equal(stor_producer_last_data(f->s, f->topic, 0, 9, &last), 0);
}

/* ---- query plans: hot statements must seek an index, never scan or sort a partition ---- */

static void assert_plan(stor *s, stor_stmt_id id, bool may_sort) {
    char sql[2048];
    snprintf(sql, sizeof sql, "EXPLAIN QUERY PLAN %s", stor_stmt_sql[id]);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(s->db, sql, -1, &st, NULL), SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *detail = (const char *)sqlite3_column_text(st, 3);
        if (strncmp(detail, "SCAN", 4) == 0 || (!may_sort && strstr(detail, "TEMP B-TREE")))
            fail_msg("statement %d (%s) plans: %s", id, stor_stmt_sql[id], detail);
    }
    sqlite3_finalize(st);
}

static void test_query_plans(void **state) {
    fx *f = *state;
    static const stor_stmt_id hot[] = {STOR_TOPIC_DELETE,     STOR_TOPIC_PARTITIONS_GET, STOR_TOPIC_PARTITIONS_SET,
                                       STOR_CONFIG_DELETE,    STOR_BATCH_LAST,           STOR_BATCH_READ,
                                       STOR_PARTITION_BYTES,  STOR_BATCH_DELETE_BELOW,   STOR_LOG_START_UPDATE,
                                       STOR_OLDEST_BATCH,     STOR_PRODUCER_SNAP_END,
                                       STOR_PRODUCER_SNAP_LOAD, STOR_PRODUCER_TAIL,      STOR_TIME_INSERT,
                                       STOR_TIME_LAST,        STOR_TIME_TAIL,            STOR_TIME_FLOOR,
                                       STOR_TIME_SCAN,        STOR_TIME_TRIM,            STOR_TIME_BATCH_TS,
                                       STOR_TIME_RAISE,       STOR_PARTITION_BYTES_FOLD, STOR_BYTES_BELOW,
                                       STOR_CLEAN_STATE,      STOR_FOLD_ROWS,            STOR_SEGMENTS_FOLD};
    for (size_t i = 0; i < sizeof hot / sizeof hot[0]; i++) assert_plan(f->s, hot[i], false);


    /* A fetch seeks to its start offset rather than walking the partition from its beginning. */
    char sql[2048];
    snprintf(sql, sizeof sql, "EXPLAIN QUERY PLAN %s", stor_stmt_sql[STOR_BATCH_READ]);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(f->s->db, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_non_null(strstr((const char *)sqlite3_column_text(st, 3), "base_offset>?"));
    sqlite3_finalize(st);
}


/* ---- salvage checks what SQLite reads back without complaint ---- */

static void on_salvage_line(void *ctx, const char *line) {
    char *out = ctx;
    size_t used = strlen(out);
    snprintf(out + used, 4096 - used, "%s\n", line);
}

static bool count_read(void *ctx, const stor_batch_meta *m, const void *data, size_t len) {
    (void)m, (void)data, (void)len;
    ++*(int *)ctx;
    return true;
}

/*
 * Regression (test_mid_file_damage_is_refused_then_recovered, CI at d10c278): bytes that read
 * back without an error (the last overflow page of a blob, whose link SQLite never follows;
 * now a segment file) can still be garbage, on which a consumer stalls. Salvage keeps only
 * batches whose bytes still are one record batch with its row's offsets and a good CRC.
 */
static void test_salvage_drops_batch_whose_bytes_changed(void **state) {
    fx *f = *state;
    stor_batch_meta m0 = meta(0, 1, 1000), m1 = meta(0, 2, 1000);
    if (stor_batch_append(f->s, f->topic, 0, &m0, rdk_batch_0, sizeof rdk_batch_0) ||
        stor_batch_append(f->s, f->topic, 1, &m1, rdk_batch_1, sizeof rdk_batch_1) || stor_commit(f->s))
        fail_msg("append: %s", stor_errmsg(f->s));
    stor_close(f->s);
    f->s = NULL;
    /* one byte of partition 1's record changed in its segment file, as garbage on the disk would */
    char seg[sizeof f->path + 64];
    snprintf(seg, sizeof seg, "%s.segments/%lld-1/%020d.log", f->path, (long long)f->topic, 1);
    FILE *sf = fopen(seg, "r+b");
    assert_non_null(sf);
    assert_int_equal(fseek(sf, 80, SEEK_SET), 0);
    assert_int_equal(fputc(rdk_batch_1[80] ^ 0x5a, sf), rdk_batch_1[80] ^ 0x5a);
    fclose(sf);

    char to[sizeof f->path], report[4096] = "", err[512] = "";
    snprintf(to, sizeof to, "%s/salvaged.db", f->dir);
    if (stor_salvage(f->path, to, on_salvage_line, report, err, sizeof err) != 0) fail_msg("salvage: %s", err);
    if (!strstr(report, "table batches: 1 rows dropped: read without error, their bytes are not the batch they were "
                        "(first at offset 0: CRC mismatch)"))
        fail_msg("report:\n%s", report);
    if (!strstr(report, "done: 1 tables damaged")) fail_msg("report:\n%s", report);
    snprintf(f->path, sizeof f->path, "%s", to);
    fx_open(f);
    int n0 = 0, n1 = 0;
    assert_int_equal(stor_batch_read(f->s, f->topic, 0, 0, INT64_MAX, count_read, &n0), 0);
    assert_int_equal(stor_batch_read(f->s, f->topic, 1, 0, INT64_MAX, count_read, &n1), 0);
    assert_int_equal(n0, 1);
    assert_int_equal(n1, 0);
    assert_int_equal(stor_partition_bytes(f->s, f->topic, 1), 0);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int main(void) {
    const struct CMUnitTest tests[] = {
        T(test_read_ranges),
        T(test_read_upto_cutoff),
        T(test_read_callback_stops),
        T(test_read_across_gaps),
        T(test_append_refuses_bad_batches),
        T(test_append_order_from_memory_stays_exact),
        T(test_metadata_round_trip),
        T(test_offset_for_time),
        T(test_max_timestamp),
        T(test_log_start_set),
        T(test_load_next_offsets),
        T(test_producer_batches),
        T(test_producer_batches_empty),
        T(test_producer_snapshot_matches_batches),
        T(test_producer_snapshot_matches_batches_after_removals),
        T(test_producer_snapshot_kill9_tail),
        T(test_partition_bytes_exact_after_kill9),
        T(test_producer_snapshot_trimmed_with_its_batches),
        T(test_producer_snapshot_folds_only_changed_partitions),
        T(test_producer_snapshot_every_n_batches),
        T(test_no_producer_index),
        T(test_producer_last_data_follows_appends),
        T(test_query_plans),
        T(test_salvage_drops_batch_whose_bytes_changed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
