/* The log cleaner's reads and writes: batches rewritten or removed in place, and its checkpoint. */
#include "stor_int.h"

static int bind_key(stor *s, sqlite3_stmt *st, int64_t topic_id, int32_t partition, int64_t offset) {
    if (sqlite3_bind_int64(st, 1, topic_id) || sqlite3_bind_int(st, 2, partition) || sqlite3_bind_int64(st, 3, offset))
        return stor_fail(s, "bind partition key");
    return 0;
}

int stor_batch_replace(stor *s, int64_t topic_id, int32_t partition, int64_t base_offset, int64_t max_timestamp,
                       int32_t records_count, const void *data, size_t len) {
    if (!data || len == 0 || len > (size_t)INT32_MAX || records_count < 0)
        return stor_failf(s, "replace batch at %lld: bad data or count", (long long)base_offset);
    if (stor_write_begin_as(s, STOR_TXN_BATCHES)) return -1;
    /* the rewritten bytes are appended like a produced batch; the old ones die with their segment */
    int64_t seg = 0, pos = 0;
    bool in_seg = s->segs.enabled;
    if (in_seg && stor_seg_append(s, topic_id, partition, data, len, &seg, &pos)) return -1;
    stor_seg_maybe_dead(s);
    sqlite3_stmt *st = stor_stmt(s, STOR_BATCH_REPLACE);
    if (bind_key(s, st, topic_id, partition, base_offset) || sqlite3_bind_int64(st, 4, max_timestamp) ||
        sqlite3_bind_int(st, 5, records_count) || sqlite3_bind_int64(st, 6, (sqlite3_int64)len) ||
        (in_seg ? sqlite3_bind_zeroblob(st, 7, 0) || sqlite3_bind_int64(st, 8, seg) || sqlite3_bind_int64(st, 9, pos)
                : sqlite3_bind_blob64(st, 7, data, len, SQLITE_STATIC)))
        return stor_fail(s, "bind replaced batch");
    int rc = stor_step_done(s, st, "replace batch");
    sqlite3_clear_bindings(st);
    if (rc) return -1;
    return sqlite3_changes(s->db) > 0 ? 1 : 0;
}

int stor_batch_delete(stor *s, int64_t topic_id, int32_t partition, int64_t base_offset) {
    if (stor_write_begin_as(s, STOR_TXN_BATCHES)) return -1;
    sqlite3_stmt *st = stor_stmt(s, STOR_BATCH_DELETE_ONE);
    if (bind_key(s, st, topic_id, partition, base_offset)) return -1;
    stor_seg_maybe_dead(s);
    return stor_step_done(s, st, "delete compacted batch");
}

int stor_clean_state_get(stor *s, int64_t topic_id, int32_t partition, stor_clean_state *out) {
    sqlite3_stmt *st = stor_stmt(s, STOR_CLEAN_STATE);
    if (sqlite3_bind_int64(st, 1, topic_id) || sqlite3_bind_int(st, 2, partition)) return stor_fail(s, "bind key");
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        out->cleaned_to = sqlite3_column_int64(st, 0);
        out->bytes = sqlite3_column_int64(st, 1);
    }
    sqlite3_reset(st);
    if (rc == SQLITE_DONE) return stor_failf(s, "clean state: no partition %d of topic %lld", partition, (long long)topic_id);
    if (rc != SQLITE_ROW) return stor_fail(s, "read clean state");
    st = stor_stmt(s, STOR_CLEAN_DIRTY);
    if (bind_key(s, st, topic_id, partition, out->cleaned_to)) return -1;
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        out->dirty_bytes = sqlite3_column_int64(st, 0);
        out->first_dirty_ts = sqlite3_column_type(st, 1) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 1);
    }
    sqlite3_reset(st);
    return rc == SQLITE_ROW ? 0 : stor_fail(s, "read dirty bytes");
}

int stor_cleaned_set(stor *s, int64_t topic_id, int32_t partition, int64_t offset) {
    if (stor_write_begin_as(s, STOR_TXN_BATCHES)) return -1;
    sqlite3_stmt *st = stor_stmt(s, STOR_CLEANED_SET);
    if (bind_key(s, st, topic_id, partition, offset)) return -1;
    return stor_step_done(s, st, "set the cleaner checkpoint");
}
