/* Idempotent producer state at start-up: each producer's newest data batches per partition, and its newest marker. */
#include "stor_int.h"

/* Next producer id of a partition after `after`: 1 found (*pid set), 0 none, -1 error. */
static int stor_producer_next(stor *s, int64_t topic_id, int32_t partition, int64_t after, int64_t *pid) {
    sqlite3_stmt *st = stor_stmt(s, STOR_PRODUCER_NEXT);
    if (sqlite3_bind_int64(st, 1, topic_id) || sqlite3_bind_int(st, 2, partition) ||
        sqlite3_bind_int64(st, 3, after))
        return stor_fail(s, "bind producer key");
    int rc = sqlite3_step(st);
    int ret = 0;
    if (rc == SQLITE_ROW) {
        *pid = sqlite3_column_int64(st, 0);
        ret = 1;
    } else if (rc != SQLITE_DONE) {
        ret = stor_fail(s, "next producer");
    }
    sqlite3_reset(st);
    return ret;
}

/* The producer's newest data batches, newest first; returns how many (at most STOR_PRODUCER_BATCHES_KEPT) or -1. */
static int stor_producer_batches(stor *s, int64_t topic_id, int32_t partition, int64_t pid, stor_batch_meta *out) {
    sqlite3_stmt *st = stor_stmt(s, STOR_PRODUCER_BATCHES);
    if (sqlite3_bind_int64(st, 1, topic_id) || sqlite3_bind_int(st, 2, partition) || sqlite3_bind_int64(st, 3, pid) ||
        sqlite3_bind_int(st, 4, STOR_PRODUCER_BATCHES_KEPT))
        return stor_fail(s, "bind producer batches");
    int n = 0, rc = SQLITE_DONE;
    while (n < STOR_PRODUCER_BATCHES_KEPT && (rc = sqlite3_step(st)) == SQLITE_ROW) stor_meta_from_row(st, 0, &out[n++]);
    int ret = n;
    if (n < STOR_PRODUCER_BATCHES_KEPT && rc != SQLITE_DONE) ret = stor_fail(s, "read producer batches");
    sqlite3_reset(st);
    return ret;
}

/*
 * The producer's newest batch of all when it is a transaction marker: 1 (*m set), 0 when it is
 * a data batch, -1 error. A marker may be newer than every data batch (it ends the
 * transaction), and a fenced producer's bumped epoch reaches the log only through it.
 */
static int stor_producer_marker(stor *s, int64_t topic_id, int32_t partition, int64_t pid, stor_batch_meta *m) {
    sqlite3_stmt *st = stor_stmt(s, STOR_PRODUCER_NEWEST);
    if (sqlite3_bind_int64(st, 1, topic_id) || sqlite3_bind_int(st, 2, partition) || sqlite3_bind_int64(st, 3, pid))
        return stor_fail(s, "bind producer key");
    int rc = sqlite3_step(st);
    int ret = 0;
    if (rc == SQLITE_ROW) {
        stor_meta_from_row(st, 0, m);
        ret = m->base_sequence < 0;
    } else if (rc != SQLITE_DONE) {
        ret = stor_fail(s, "newest producer batch");
    }
    sqlite3_reset(st);
    return ret;
}

static int stor_partition_producers(stor *s, int64_t topic_id, int32_t partition, stor_producer_fn fn, void *ctx) {
    /* Ids below 0 mark non-idempotent batches: start after them. */
    int64_t pid = -1;
    int found;
    while ((found = stor_producer_next(s, topic_id, partition, pid, &pid)) == 1) {
        stor_batch_meta batches[STOR_PRODUCER_BATCHES_KEPT], marker;
        int n = stor_producer_batches(s, topic_id, partition, pid, batches);
        if (n < 0) return -1;
        int is_marker = stor_producer_marker(s, topic_id, partition, pid, &marker);
        if (is_marker < 0) return -1;
        for (int i = n - 1; i >= 0; i--) fn(ctx, topic_id, partition, &batches[i]);
        if (is_marker) fn(ctx, topic_id, partition, &marker);
    }
    return found;
}

int stor_load_producer_batches(stor *s, stor_producer_fn fn, void *ctx) {
    if (!fn) return stor_failf(s, "load producer batches: no callback");
    sqlite3_stmt *st = stor_stmt(s, STOR_PRODUCER_PARTITIONS);
    int rc = SQLITE_DONE, ret = 0;
    while (ret == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW)
        ret = stor_partition_producers(s, sqlite3_column_int64(st, 0), sqlite3_column_int(st, 1), fn, ctx);
    if (ret == 0 && rc != SQLITE_DONE) ret = stor_fail(s, "load producer partitions");
    sqlite3_reset(st);
    return ret;
}

int stor_producer_last_data(stor *s, int64_t topic_id, int32_t partition, int64_t producer_id, int64_t *base_offset) {
    stor_batch_meta newest[STOR_PRODUCER_BATCHES_KEPT];
    int n = stor_producer_batches(s, topic_id, partition, producer_id, newest);
    if (n <= 0) return n;
    *base_offset = newest[0].base_offset;
    return 1;
}
