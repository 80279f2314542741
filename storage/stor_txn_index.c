/*
 * Each partition's aborted transactions (what read_committed fetches skip), written with the
 * ABORT marker, so its writes are of kind STOR_TXN_BATCHES. The open ones (the last stable
 * offset) are producer state: stor_producers.c derives them from the batch rows.
 */
#include "stor_int.h"

static int stor_bind_partition(stor *s, sqlite3_stmt *st, int64_t topic_id, int32_t partition) {
    if (sqlite3_bind_int64(st, 1, topic_id) || sqlite3_bind_int(st, 2, partition))
        return stor_fail(s, "bind partition key");
    return 0;
}

static int stor_aborted_check(stor *s, const stor_aborted *a) {
    if (!a) return stor_failf(s, "aborted transaction: no entry");
    if (a->producer_id < 0 || a->first_offset < 0 || a->last_offset < a->first_offset)
        return stor_failf(s, "aborted transaction of producer %lld: bad offsets %lld..%lld", (long long)a->producer_id,
                          (long long)a->first_offset, (long long)a->last_offset);
    return 0;
}

int stor_txn_aborted_put(stor *s, int64_t topic_id, int32_t partition, const stor_aborted *a) {
    if (stor_aborted_check(s, a)) return -1;
    if (stor_write_begin_as(s, STOR_TXN_BATCHES)) return -1;
    sqlite3_stmt *st = stor_stmt(s, STOR_TXN_ABORTED_INSERT);
    if (stor_bind_partition(s, st, topic_id, partition) || sqlite3_bind_int64(st, 3, a->last_offset) ||
        sqlite3_bind_int64(st, 4, a->producer_id) || sqlite3_bind_int64(st, 5, a->first_offset) ||
        sqlite3_bind_int64(st, 6, a->lso))
        return stor_fail(s, "bind aborted transaction");
    return stor_step_done(s, st, "save aborted transaction");
}

int stor_txn_aborted_read(stor *s, int64_t topic_id, int32_t partition, int64_t from, stor_aborted_fn fn, void *ctx) {
    if (!fn) return stor_failf(s, "read aborted transactions: no callback");
    sqlite3_stmt *st = stor_stmt(s, STOR_TXN_ABORTED_READ);
    if (stor_bind_partition(s, st, topic_id, partition) || sqlite3_bind_int64(st, 3, from))
        return stor_fail(s, "bind aborted transactions");
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        stor_aborted a = {
            .producer_id = sqlite3_column_int64(st, 0),
            .first_offset = sqlite3_column_int64(st, 1),
            .last_offset = sqlite3_column_int64(st, 2),
            .lso = sqlite3_column_int64(st, 3),
        };
        if (!fn(ctx, &a)) break;
    }
    int ret = rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : stor_fail(s, "read aborted transactions");
    /* ends the implicit read transaction, which would otherwise hold back WAL checkpoints */
    sqlite3_reset(st);
    return ret;
}

int stor_txn_aborted_last(stor *s, stor_aborted_last_fn fn, void *ctx) {
    if (!fn) return stor_failf(s, "newest aborted transactions: no callback");
    sqlite3_stmt *st = stor_stmt(s, STOR_TXN_ABORTED_LAST);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        if (sqlite3_column_type(st, 2) != SQLITE_NULL) /* a partition without entries */
            fn(ctx, sqlite3_column_int64(st, 0), sqlite3_column_int(st, 1), sqlite3_column_int64(st, 2));
    int ret = rc == SQLITE_DONE ? 0 : stor_fail(s, "newest aborted transactions");
    sqlite3_reset(st);
    return ret;
}
