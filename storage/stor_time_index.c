/*
 * The sparse time index (table batch_times, migration 17): ListOffsets by timestamp and
 * MAX_TIMESTAMP without a b-tree entry per batch.
 *
 * Kafka keeps a sparse time index per segment: an entry (largest timestamp so far, its offset)
 * only once index.interval.bytes (4096 by default) of log went by since the last one, and
 * answers a look-up by the last entry below the target followed by a forward scan of the log
 * (Apache Kafka storage/src/main/java/org/apache/kafka/storage/internals/log/LogSegment.java,
 * append and findOffsetByTimestamp; TimeIndex.java). The dense index this replaces
 * (batches_time, migration 1) cost a b-tree insert per batch and one WAL page per partition
 * per commit, for a request clients seldom send.
 *
 * An entry (max_timestamp, base_offset) says: no batch starting at or before base_offset has a
 * larger max timestamp. That stays true whatever removes batches (DeleteRecords, retention,
 * compaction) and whatever lowers one, so an entry is rewritten only in the one case that raises
 * a batch's: the cleaner rebuilds a batch whose header understated its records' timestamps
 * (broker/topic/compact.c takes the rebuilt header's). A missing entry only makes a scan longer. The answers are exactly
 * those of the dense index: the first batch (by offset) whose max timestamp reaches the target,
 * found by scanning the batch rows past the last entry below the target.
 *
 * Per partition, the largest timestamp appended so far and the bytes since the last entry are
 * kept in memory, loaded from the table and the rows past its last entry at the first append;
 * a rollback or a topic deletion forgets them all (the next append loads them again).
 */
#include "stor_int.h"

#include <stdlib.h>

void stor_time_forget(stor *s) {
    stor_times *ti = &s->times;
    for (size_t i = 0; i < ti->cap; i++) ti->parts[i].used = false;
    ti->n = 0;
}

void stor_time_free(stor *s) {
    free(s->times.parts);
    s->times = (stor_times){0};
}

static int time_grow(stor *s) {
    stor_times *ti = &s->times;
    size_t cap = ti->cap ? ti->cap * 2 : 64;
    struct stor_time_part *np = calloc(cap, sizeof *np);
    if (!np) return stor_failf(s, "time index: out of memory");
    for (size_t i = 0; i < ti->cap; i++) {
        if (!ti->parts[i].used) continue;
        size_t j = stor_part_hash(ti->parts[i].topic_id, ti->parts[i].partition) & (cap - 1);
        while (np[j].used) j = (j + 1) & (cap - 1);
        np[j] = ti->parts[i];
    }
    free(ti->parts);
    ti->parts = np;
    ti->cap = cap;
    return 0;
}

/* The partition's newest entry: 1 with its timestamp and offset, 0 none, -1 error. */
static int time_last(stor *s, int64_t topic_id, int32_t partition, int64_t *ts, int64_t *off) {
    sqlite3_stmt *st = stor_stmt(s, STOR_TIME_LAST);
    if (stor_bind_part(st, topic_id, partition)) return stor_fail(s, "time index: bind");
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *ts = sqlite3_column_int64(st, 0);
        *off = sqlite3_column_int64(st, 1);
    }
    sqlite3_reset(st);
    if (rc == SQLITE_ROW) return 1;
    return rc == SQLITE_DONE ? 0 : stor_fail(s, "time index: last entry");
}

/* The largest max timestamp and the bytes of the batches past `after`: 1, 0 when there are none, -1 error. */
static int time_tail(stor *s, int64_t topic_id, int32_t partition, int64_t after, int64_t *max_ts, int64_t *bytes) {
    sqlite3_stmt *st = stor_stmt(s, STOR_TIME_TAIL);
    if (stor_bind_part(st, topic_id, partition) || sqlite3_bind_int64(st, 3, after))
        return stor_fail(s, "time index: bind");
    int rc = sqlite3_step(st);
    int ret = rc == SQLITE_ROW ? sqlite3_column_type(st, 0) != SQLITE_NULL : -1;
    if (ret == 1) *max_ts = sqlite3_column_int64(st, 0);
    if (ret >= 0 && bytes) *bytes = sqlite3_column_int64(st, 1);
    sqlite3_reset(st);
    return ret < 0 ? stor_fail(s, "time index: rows past the last entry") : ret;
}

/*
 * The partition's state as of the stored rows: the last entry's timestamp, raised by the rows
 * past it, and their bytes. Runs before this append's row goes in.
 */
static int time_load(stor *s, struct stor_time_part *tp) {
    int64_t after = -1, max_ts = INT64_MIN, tail_ts = INT64_MIN;
    int rc = time_last(s, tp->topic_id, tp->partition, &max_ts, &after);
    if (rc < 0) return -1;
    rc = time_tail(s, tp->topic_id, tp->partition, after, &tail_ts, &tp->bytes);
    if (rc < 0) return -1;
    tp->max_ts = rc == 1 && tail_ts > max_ts ? tail_ts : max_ts;
    return 0;
}

/* The partition's slot (linear probing; the table is never full): its state, or the free slot it would take. */
static struct stor_time_part *time_slot(stor_times *ti, int64_t topic_id, int32_t partition) {
    size_t j = stor_part_hash(topic_id, partition) & (ti->cap - 1);
    while (ti->parts[j].used && !(ti->parts[j].topic_id == topic_id && ti->parts[j].partition == partition))
        j = (j + 1) & (ti->cap - 1);
    return &ti->parts[j];
}

int stor_time_before_append(stor *s, int64_t topic_id, int32_t partition, struct stor_time_part **out) {
    stor_times *ti = &s->times;
    if ((ti->n + 1) * 2 > ti->cap && time_grow(s)) return -1;
    struct stor_time_part *tp = time_slot(ti, topic_id, partition);
    if (!tp->used) {
        *tp = (struct stor_time_part){.topic_id = topic_id, .partition = partition};
        if (time_load(s, tp)) return -1;
        tp->used = true;
        ti->n++;
    }
    *out = tp;
    return 0;
}

struct stor_time_part *stor_time_find(stor *s, int64_t topic_id, int32_t partition) {
    if (!s->times.cap) return NULL;
    struct stor_time_part *tp = time_slot(&s->times, topic_id, partition);
    return tp->used ? tp : NULL;
}

int stor_time_appended(stor *s, struct stor_time_part *tp, int64_t base_offset, int64_t max_timestamp, size_t len) {
    if (max_timestamp > tp->max_ts) tp->max_ts = max_timestamp;
    tp->bytes += (int64_t)len;
    /* Kafka: bytesSinceLastIndexEntry > indexIntervalBytes (LogSegment.append) */
    if (tp->bytes <= STOR_TIME_INTERVAL_BYTES) return 0;
    sqlite3_stmt *st = stor_stmt(s, STOR_TIME_INSERT);
    if (stor_bind_part(st, tp->topic_id, tp->partition) || sqlite3_bind_int64(st, 3, tp->max_ts) ||
        sqlite3_bind_int64(st, 4, base_offset))
        return stor_fail(s, "time index: bind");
    if (stor_step_done(s, st, "time index: add entry")) return -1;
    tp->bytes = 0;
    return 0;
}

/* The first batch past `after` whose max timestamp reaches ts: 1 (with its offsets), 0 none, -1 error. */
static int time_scan(stor *s, int64_t topic_id, int32_t partition, int64_t ts, int64_t *base, int64_t *last,
                     int64_t *max_ts) {
    int64_t after = -1;
    sqlite3_stmt *st = stor_stmt(s, STOR_TIME_FLOOR);
    if (stor_bind_part(st, topic_id, partition) || sqlite3_bind_int64(st, 3, ts))
        return stor_fail(s, "time index: bind");
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) after = sqlite3_column_int64(st, 0);
    sqlite3_reset(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return stor_fail(s, "time index: entry below the target");
    st = stor_stmt(s, STOR_TIME_SCAN);
    if (stor_bind_part(st, topic_id, partition) || sqlite3_bind_int64(st, 3, after) || sqlite3_bind_int64(st, 4, ts))
        return stor_fail(s, "time index: bind");
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        if (base) *base = sqlite3_column_int64(st, 0);
        if (last) *last = sqlite3_column_int64(st, 1);
        if (max_ts) *max_ts = sqlite3_column_int64(st, 2);
    }
    sqlite3_reset(st);
    if (rc == SQLITE_ROW) return 1;
    return rc == SQLITE_DONE ? 0 : stor_fail(s, "time index: scan batches");
}

int stor_offset_for_time(stor *s, int64_t topic_id, int32_t partition, int64_t ts, int64_t *offset,
                         int64_t *timestamp) {
    return time_scan(s, topic_id, partition, ts, offset, NULL, timestamp);
}

/*
 * The largest max timestamp is at most the last entry's, or is in the rows past it: their
 * maximum is the candidate, exact unless the batch that set the entry's is gone (retention,
 * DeleteRecords, compaction). Then no batch reaches the candidate, and the partition's rows
 * are read for it, once per such request.
 */
int stor_max_timestamp(stor *s, int64_t topic_id, int32_t partition, int64_t *offset, int64_t *timestamp) {
    int64_t entry_ts = 0, entry_off = -1, tail_ts = 0;
    int has_entry = time_last(s, topic_id, partition, &entry_ts, &entry_off);
    if (has_entry < 0) return -1;
    int has_tail = time_tail(s, topic_id, partition, entry_off, &tail_ts, NULL);
    if (has_tail < 0) return -1;
    if (!has_entry && !has_tail) return 0;
    int64_t cand = !has_entry || (has_tail && tail_ts > entry_ts) ? tail_ts : entry_ts;
    int found = time_scan(s, topic_id, partition, cand, NULL, offset, timestamp);
    if (found != 0 || !has_entry) return found;
    has_tail = time_tail(s, topic_id, partition, -1, &cand, NULL);
    if (has_tail <= 0) return has_tail;
    return time_scan(s, topic_id, partition, cand, NULL, offset, timestamp);
}

int stor_time_raise(stor *s, int64_t topic_id, int32_t partition, int64_t base_offset, int64_t max_timestamp) {
    sqlite3_stmt *st = stor_stmt(s, STOR_TIME_BATCH_TS);
    if (stor_bind_part(st, topic_id, partition) || sqlite3_bind_int64(st, 3, base_offset))
        return stor_fail(s, "time index: bind");
    int rc = sqlite3_step(st);
    bool raised = rc == SQLITE_ROW && sqlite3_column_int64(st, 0) < max_timestamp;
    sqlite3_reset(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return stor_fail(s, "time index: batch's max timestamp");
    if (!raised) return 0;
    st = stor_stmt(s, STOR_TIME_RAISE);
    if (stor_bind_part(st, topic_id, partition) || sqlite3_bind_int64(st, 3, base_offset) ||
        sqlite3_bind_int64(st, 4, max_timestamp))
        return stor_fail(s, "time index: bind");
    if (stor_step_done(s, st, "time index: raise entries")) return -1;
    stor_time_forget(s); /* the running maximum in memory may be below it too */
    return 0;
}

int stor_time_trim(stor *s, int64_t topic_id, int32_t partition, int64_t log_start) {
    sqlite3_stmt *st = stor_stmt(s, STOR_TIME_TRIM);
    if (stor_bind_part(st, topic_id, partition) || sqlite3_bind_int64(st, 3, log_start))
        return stor_fail(s, "time index: bind");
    return stor_step_done(s, st, "time index: drop entries below the log start");
}
