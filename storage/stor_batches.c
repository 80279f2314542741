/* Record batches: append, fetch, log start (retention, DeleteRecords); the time look-ups are stor_time_index.c's. */
#include "stor_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int stor_bind_key(stor *s, sqlite3_stmt *st, int64_t topic_id, int32_t partition) {
    if (stor_bind_part(st, topic_id, partition)) return stor_fail(s, "bind partition key");
    return 0;
}

static int stor_batch_check(stor *s, const stor_batch_meta *m, const void *data, size_t len) {
    if (!m) return stor_failf(s, "append batch: no metadata");
    if (!data || len == 0) return stor_failf(s, "append batch: empty data");
    if (len > (size_t)INT32_MAX) return stor_failf(s, "append batch: %zu bytes is too large", len);
    /* INT64_MAX is excluded so that next offset = last + 1 cannot overflow. */
    if (m->base_offset < 0 || m->last_offset < m->base_offset || m->last_offset == INT64_MAX)
        return stor_failf(s, "append batch: bad offsets %lld..%lld", (long long)m->base_offset,
                          (long long)m->last_offset);
    if (m->records_count < 0) return stor_failf(s, "append batch: negative record count %d", m->records_count);
    return 0;
}

/*
 * Reads rely on batches never overlapping (base_offset order == last_offset
 * order), so an append must start past everything stored. The broker's memory
 * already orders offsets; this is the store's own net, so it answers exactly as
 * the rows would: the last offset is read from them at a partition's first
 * append and after anything that removes rows (stor_batch_last_forget,
 * stor_time_forget), and kept up to date by the appends in between. Reading it
 * per append cost a b-tree seek, 4.3k instructions of a 22k row.
 */
static int stor_batch_check_order(stor *s, struct stor_time_part *tp, int64_t base_offset) {
    if (!tp->last_known) {
        sqlite3_stmt *st = stor_stmt(s, STOR_BATCH_LAST);
        if (stor_bind_key(s, st, tp->topic_id, tp->partition)) return -1;
        int rc = sqlite3_step(st);
        int64_t last = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
        sqlite3_reset(st);
        if (rc != SQLITE_ROW && rc != SQLITE_DONE) return stor_fail(s, "append batch: read last offset");
        tp->last_off = last;
        tp->last_known = true;
    }
    if (base_offset <= tp->last_off)
        return stor_failf(s, "append batch: base offset %lld is not past stored offset %lld of partition %d",
                          (long long)base_offset, (long long)tp->last_off, tp->partition);
    return 0;
}

void stor_batch_last_forget(stor *s, int64_t topic_id, int32_t partition) {
    struct stor_time_part *tp = stor_time_find(s, topic_id, partition);
    if (tp) tp->last_known = false;
}

/*
 * Large batches are inserted as a zeroblob and then written with the blob
 * API: SQLite builds a row's record in memory before the b-tree copies it
 * into pages, so a bound blob is copied twice, while a trailing zeroblob is
 * never materialised and sqlite3_blob_write copies the bytes once, straight
 * into the pages (measured: the record copy was 8% of the loop under
 * produce). Opening the blob handle costs more than copying a small batch.
 */
#define STOR_BLOB_WRITE_MIN 16384

static int stor_batch_write_data(stor *s, const void *data, size_t len) {
    sqlite3_blob *blob = NULL;
    int rc = sqlite3_blob_open(s->db, "main", "batches", "data", sqlite3_last_insert_rowid(s->db), 1, &blob);
    if (rc == SQLITE_OK) rc = sqlite3_blob_write(blob, data, (int)len, 0);
    if (rc != SQLITE_OK) stor_fail(s, "append batch: write data");
    int close_rc = sqlite3_blob_close(blob);
    if (rc == SQLITE_OK && close_rc != SQLITE_OK) rc = stor_fail(s, "append batch: close data");
    if (rc == SQLITE_OK) return 0;
    /*
     * The row is in, with zeros for data: it must not be committed. Losing
     * the whole transaction is the one way to be sure, so the commit fails
     * and every produce it holds is refused, none acknowledged.
     */
    if (s->in_txn) s->txn_failed = true;
    return -1;
}

int stor_batch_append(stor *s, int64_t topic_id, int32_t partition, const stor_batch_meta *m, const void *data,
                      size_t len) {
    if (stor_batch_check(s, m, data, len)) return -1;
    if (stor_write_begin_as(s, STOR_TXN_BATCHES)) return -1;
    struct stor_time_part *tp;
    if (stor_time_before_append(s, topic_id, partition, &tp)) return -1;
    if (stor_batch_check_order(s, tp, m->base_offset)) return -1;
    /* on disk the bytes go to a segment before the row that names them (stor_segments.c) */
    int64_t seg = 0, pos = 0;
    bool in_seg = s->segs.enabled;
    if (in_seg && stor_seg_append(s, topic_id, partition, data, len, &seg, &pos)) return -1;
    /*
     * Not stor_stmt: its reset and clear_bindings guard statements that read, and this one
     * never is left mid-step (stor_step_done resets it) and has every parameter bound on
     * every call; 400 instructions a row, with the clear after the step (issue 37).
     */
    sqlite3_stmt *st = s->stmt[STOR_BATCH_INSERT];
    bool by_blob = !in_seg && len >= STOR_BLOB_WRITE_MIN;
    /* SQLITE_STATIC: the step below copies data into the row before we return. */
    if (stor_bind_key(s, st, topic_id, partition) || sqlite3_bind_int64(st, 3, m->base_offset) ||
        sqlite3_bind_int64(st, 4, m->last_offset) || sqlite3_bind_int64(st, 5, m->max_timestamp) ||
        sqlite3_bind_int64(st, 6, m->producer_id) || sqlite3_bind_int(st, 7, m->producer_epoch) ||
        sqlite3_bind_int(st, 8, m->base_sequence) || sqlite3_bind_int(st, 9, m->last_sequence) ||
        sqlite3_bind_int(st, 10, m->records_count) || sqlite3_bind_int64(st, 11, (sqlite3_int64)len) ||
        (in_seg ? sqlite3_bind_zeroblob(st, 12, 0) || sqlite3_bind_int64(st, 13, seg) || sqlite3_bind_int64(st, 14, pos)
         : (by_blob ? sqlite3_bind_zeroblob64(st, 12, len) : sqlite3_bind_blob64(st, 12, data, len, SQLITE_STATIC)) ||
               sqlite3_bind_null(st, 13) || sqlite3_bind_null(st, 14)) ||
        /* NULL, not 0, for the rest: no payload byte in the row (SQLite file format, serial type 0) */
        (m->transactional ? sqlite3_bind_int(st, 15, 1) : sqlite3_bind_null(st, 15))) {
        int ret = stor_fail(s, "bind batch");
        sqlite3_clear_bindings(st); /* no pointer to the caller's buffer left behind */
        return ret;
    }
    int rc = stor_step_done(s, st, "append batch");
    /* Drop the pointer to the caller's buffer now rather than at the next use. */
    if (!in_seg && !by_blob) sqlite3_bind_null(st, 12);
    /* the row is in; a rollback that takes it out forgets the whole state (stor_time_forget) */
    if (rc == 0) tp->last_off = m->last_offset;
    if (rc == 0 && by_blob) rc = stor_batch_write_data(s, data, len);
    if (rc == 0) rc = stor_time_appended(s, tp, m->base_offset, m->max_timestamp, len);
    if (rc == 0) rc = stor_producer_dirty(s, topic_id, partition);
    if (rc == 0) s->producer_snap_due++;
    return rc;
}

/*
 * storage.verify=full: a batch is checked (offsets, length, CRC-32C) before anyone sees it, and
 * one that fails stops the read with its place in the error; the caller has the batches before it.
 */
static int batch_unsound(stor *s, int64_t topic_id, int32_t partition, int64_t seg, int64_t pos,
                         const stor_batch_meta *m, const void *data, size_t len) {
    char why[200], where[600];
    if (!stor_batch_unsound(data, len, m->base_offset, m->last_offset, why, sizeof why)) return 0;
    s->read_bad = true;
    if (seg > 0) {
        char path[560];
        stor_seg_path(s, topic_id, partition, seg, path, sizeof path);
        snprintf(where, sizeof where, "segment %s at byte %lld", path, (long long)pos);
    } else {
        snprintf(where, sizeof where, "the database");
    }
    return stor_failf(s, "the batch at offset %lld (offsets %lld-%lld, in %s) %s%s; not served (storage.verify=full)",
                      (long long)m->base_offset, (long long)m->base_offset, (long long)m->last_offset, where,
                      strncmp(why, "CRC", 3) == 0 ? "has a " : "", why);
}

/*
 * The read statement leaves the data column out: naming it would make each
 * step assemble the whole blob in SQLite's memory. The bytes are read from
 * the batch's segment, or for a row that keeps them inline with the blob API,
 * straight into dest; `after` (stor_batch_read) then sees them.
 */
static int batch_read(stor *s, int64_t topic_id, int32_t partition, int64_t from, int64_t upto,
                      stor_batch_dest_fn dest, stor_batch_fn after, void *ctx) {
    sqlite3_stmt *st = stor_stmt(s, STOR_BATCH_READ);
    if (stor_bind_key(s, st, topic_id, partition) || sqlite3_bind_int64(st, 3, from) ||
        sqlite3_bind_int64(st, 4, upto))
        return stor_fail(s, "bind read range");
    sqlite3_blob *blob = NULL;
    int ret = 0, rc;
    s->read_bad = false;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        stor_batch_meta m;
        stor_meta_from_row(st, 0, &m);
        sqlite3_int64 rowid = sqlite3_column_int64(st, STOR_META_NCOLS);
        sqlite3_int64 size = sqlite3_column_int64(st, STOR_META_NCOLS + 1);
        void *p = dest(ctx, &m, (size_t)size);
        if (!p) break;
        if (sqlite3_column_type(st, STOR_META_NCOLS + 2) != SQLITE_NULL) {
            int64_t seg = sqlite3_column_int64(st, STOR_META_NCOLS + 2), pos = sqlite3_column_int64(st, STOR_META_NCOLS + 3);
            if (stor_seg_read(s, topic_id, partition, seg, pos, p, (size_t)size) ||
                (s->verify == STOR_VERIFY_FULL && batch_unsound(s, topic_id, partition, seg, pos, &m, p, (size_t)size))) {
                ret = -1;
                break;
            }
            if (after && !after(ctx, &m, p, (size_t)size)) break;
            continue;
        }
        int brc = blob ? sqlite3_blob_reopen(blob, rowid)
                       : sqlite3_blob_open(s->db, "main", "batches", "data", rowid, 0, &blob);
        if (brc == SQLITE_OK && sqlite3_blob_bytes(blob) != size) {
            ret = stor_failf(s, "read batches: batch at offset %lld holds %d bytes, its row says %lld",
                             (long long)m.base_offset, sqlite3_blob_bytes(blob), (long long)size);
            break;
        }
        if (brc == SQLITE_OK) brc = sqlite3_blob_read(blob, p, (int)size, 0);
        if (brc != SQLITE_OK) {
            ret = stor_fail(s, "read batch data");
            break;
        }
        if (s->verify == STOR_VERIFY_FULL && batch_unsound(s, topic_id, partition, 0, 0, &m, p, (size_t)size)) {
            ret = -1;
            break;
        }
        if (after && !after(ctx, &m, p, (size_t)size)) break;
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE && ret == 0) ret = stor_fail(s, "read batches");
    if (blob) sqlite3_blob_close(blob);
    /* Resetting ends the implicit read transaction, which would otherwise hold back WAL checkpoints. */
    sqlite3_reset(st);
    return ret;
}

int stor_batch_read_into(stor *s, int64_t topic_id, int32_t partition, int64_t from, int64_t upto,
                         stor_batch_dest_fn dest, void *ctx) {
    if (!dest) return stor_failf(s, "read batches: no destination");
    return batch_read(s, topic_id, partition, from, upto, dest, NULL, ctx);
}

/* stor_batch_read on top of batch_read: each batch goes through one scratch buffer. */
typedef struct scratch_read {
    stor_batch_fn fn;
    void *ctx;
    uint8_t *buf;
    size_t cap;
} scratch_read;

static void *scratch_dest(void *ctx, const stor_batch_meta *m, size_t len) {
    (void)m;
    scratch_read *sr = ctx;
    if (len > sr->cap || !sr->buf) {
        uint8_t *b = realloc(sr->buf, len ? len : 1);
        if (!b) return NULL;
        sr->buf = b;
        sr->cap = len;
    }
    return sr->buf;
}

static bool scratch_after(void *ctx, const stor_batch_meta *m, const void *data, size_t len) {
    scratch_read *sr = ctx;
    return sr->fn(sr->ctx, m, data, len);
}

int stor_batch_read(stor *s, int64_t topic_id, int32_t partition, int64_t from, int64_t upto, stor_batch_fn fn,
                    void *ctx) {
    if (!fn) return stor_failf(s, "read batches: no callback");
    scratch_read sr = {.fn = fn, .ctx = ctx};
    int rc = batch_read(s, topic_id, partition, from, upto, scratch_dest, scratch_after, &sr);
    free(sr.buf);
    return rc;
}

/* Step a keyed one-row look-up: 1 with the row still current, 0 none, -1 error (statement reset). */
static int stor_lookup(stor *s, sqlite3_stmt *st, const char *what) {
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) return 1;
    int ret = rc == SQLITE_DONE ? 0 : stor_fail(s, what);
    sqlite3_reset(st);
    return ret;
}

int64_t stor_partition_bytes(stor *s, int64_t topic_id, int32_t partition) {
    sqlite3_stmt *st = stor_stmt(s, STOR_PARTITION_BYTES);
    if (stor_bind_key(s, st, topic_id, partition)) return -1;
    int found = stor_lookup(s, st, "partition bytes");
    if (found == 0)
        return stor_failf(s, "partition bytes: no partition %lld/%d", (long long)topic_id, partition);
    if (found < 0) return -1;
    int64_t bytes = sqlite3_column_int64(st, 0);
    sqlite3_reset(st);
    return bytes;
}

int64_t stor_bytes_below(stor *s, int64_t topic_id, int32_t partition, int64_t offset) {
    sqlite3_stmt *st = stor_stmt(s, STOR_BYTES_BELOW);
    if (stor_bind_key(s, st, topic_id, partition) || sqlite3_bind_int64(st, 3, offset))
        return stor_fail(s, "bind bytes below");
    if (stor_lookup(s, st, "bytes below") != 1) return -1;
    int64_t bytes = sqlite3_column_int64(st, 0);
    sqlite3_reset(st);
    return bytes;
}

static int stor_log_start_move(stor *s, int64_t topic_id, int32_t partition, int64_t log_start) {
    sqlite3_stmt *st = stor_stmt(s, STOR_LOG_START_UPDATE);
    if (stor_bind_key(s, st, topic_id, partition) || sqlite3_bind_int64(st, 3, log_start))
        return stor_fail(s, "bind log start");
    if (stor_step_done(s, st, "update log start")) return -1;
    if (sqlite3_changes(s->db) == 0)
        return stor_failf(s, "set log start: no partition %lld/%d", (long long)topic_id, partition);
    st = stor_stmt(s, STOR_BATCH_DELETE_BELOW);
    if (stor_bind_key(s, st, topic_id, partition) || sqlite3_bind_int64(st, 3, log_start))
        return stor_fail(s, "bind log start");
    if (stor_step_done(s, st, "delete batches below log start")) return -1;
    stor_seg_maybe_dead(s);
    /* changes() counts the batch rows only, not the trigger's partition updates. */
    int deleted = sqlite3_changes(s->db);
    if (deleted > 0) {
        stor_batch_last_forget(s, topic_id, partition); /* the last row may be gone */
        /*
         * As Kafka drops the producers whose last offset is below the new log start and keeps
         * the rest (ProducerStateManager.truncateHead, isProducerRetained): the snapshot rows of
         * the producers whose newest covered batch went; the load skips the older entries of the
         * others (stor_producers.c). Migration 19's trigger leaves removals below the log start to this.
         */
        st = stor_stmt(s, STOR_PRODUCER_SNAP_TRIM);
        if (stor_bind_key(s, st, topic_id, partition) || sqlite3_bind_int64(st, 3, log_start))
            return stor_fail(s, "bind log start");
        if (stor_step_done(s, st, "trim producer snapshot")) return -1;
        if (stor_producer_dirty(s, topic_id, partition)) return -1;
    }
    if (stor_time_trim(s, topic_id, partition, log_start)) return -1;
    /* An aborted transaction whose marker is gone has nothing left for a fetch to skip. */
    st = stor_stmt(s, STOR_TXN_ABORTED_DELETE_BELOW);
    if (stor_bind_key(s, st, topic_id, partition) || sqlite3_bind_int64(st, 3, log_start))
        return stor_fail(s, "bind log start");
    if (stor_step_done(s, st, "delete aborted transactions below log start")) return -1;
    return deleted;
}

int stor_log_start_set(stor *s, int64_t topic_id, int32_t partition, int64_t log_start) {
    if (log_start < 0) return stor_failf(s, "set log start: negative offset %lld", (long long)log_start);
    if (stor_op_begin(s)) return -1;
    int deleted = stor_log_start_move(s, topic_id, partition, log_start);
    if (stor_op_end(s, deleted < 0 ? -1 : 0)) return -1;
    return deleted;
}

int stor_oldest_batch(stor *s, int64_t topic_id, int32_t partition, stor_batch_meta *m) {
    if (!m) return stor_failf(s, "oldest batch: no output");
    sqlite3_stmt *st = stor_stmt(s, STOR_OLDEST_BATCH);
    if (stor_bind_key(s, st, topic_id, partition)) return -1;
    int found = stor_lookup(s, st, "oldest batch");
    if (found != 1) return found;
    stor_meta_from_row(st, 0, m);
    sqlite3_reset(st);
    return 1;
}
