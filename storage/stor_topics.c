/* Topics, their partitions and config overrides, and loading them all at start-up. */
#include "stor_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int stor_partitions_insert(stor *s, int64_t topic_id, int32_t from, int32_t to) {
    for (int32_t p = from; p < to; p++) {
        sqlite3_stmt *st = stor_stmt(s, STOR_PARTITION_INSERT);
        if (sqlite3_bind_int64(st, 1, topic_id) || sqlite3_bind_int(st, 2, p))
            return stor_fail(s, "bind partition");
        if (stor_step_done(s, st, "insert partition")) return -1;
    }
    return 0;
}

static int stor_topic_insert(stor *s, stor_topic *t) {
    int64_t id;
    if (stor_seg_topic_id(s, &id)) return -1;
    sqlite3_stmt *st = stor_stmt(s, STOR_TOPIC_INSERT);
    if ((id > 0 ? sqlite3_bind_int64(st, 5, id) : sqlite3_bind_null(st, 5)) ||
        sqlite3_bind_text(st, 1, t->name, -1, SQLITE_STATIC) ||
        sqlite3_bind_blob(st, 2, t->uuid, sizeof t->uuid, SQLITE_STATIC) || sqlite3_bind_int(st, 3, t->partitions) ||
        sqlite3_bind_int64(st, 4, t->created_ms))
        return stor_fail(s, "bind topic");
    if (stor_step_done(s, st, "insert topic")) return -1;
    t->id = sqlite3_last_insert_rowid(s->db);
    if (t->replication_factor <= 0) return 0;
    st = stor_stmt(s, STOR_TOPIC_RF_INSERT);
    if (sqlite3_bind_int64(st, 1, t->id) || sqlite3_bind_int(st, 2, t->replication_factor))
        return stor_fail(s, "bind replication factor");
    return stor_step_done(s, st, "insert replication factor");
}

int stor_topic_create(stor *s, stor_topic *t) {
    if (!t || !t->name) return stor_failf(s, "create topic: no name");
    if (t->partitions < 0) return stor_failf(s, "create topic %s: negative partition count %d", t->name, t->partitions);
    if (stor_op_begin(s)) return -1;
    int rc = stor_topic_insert(s, t);
    if (rc == 0) rc = stor_partitions_insert(s, t->id, 0, t->partitions);
    return stor_op_end(s, rc);
}

int stor_topic_delete(stor *s, int64_t topic_id) {
    if (stor_write_begin(s)) return -1;
    sqlite3_stmt *st = stor_stmt(s, STOR_TOPIC_DELETE);
    if (sqlite3_bind_int64(st, 1, topic_id)) return stor_fail(s, "bind topic id");
    if (stor_step_done(s, st, "delete topic")) return -1;
    if (sqlite3_changes(s->db) == 0) return stor_failf(s, "delete topic: no topic with id %lld", (long long)topic_id);
    /* a new topic may get its id */
    stor_time_forget(s);
    return stor_seg_topic_deleted(s, topic_id);
}

/* Current partition count of a topic: 0 with *count set, or -1. */
static int stor_topic_partition_count(stor *s, int64_t topic_id, int32_t *count) {
    sqlite3_stmt *st = stor_stmt(s, STOR_TOPIC_PARTITIONS_GET);
    if (sqlite3_bind_int64(st, 1, topic_id)) return stor_fail(s, "bind topic id");
    int rc = sqlite3_step(st);
    int ret = 0;
    if (rc == SQLITE_ROW)
        *count = sqlite3_column_int(st, 0);
    else if (rc == SQLITE_DONE)
        ret = stor_failf(s, "no topic with id %lld", (long long)topic_id);
    else
        ret = stor_fail(s, "read partition count");
    sqlite3_reset(st);
    return ret;
}

static int stor_topic_grow(stor *s, int64_t topic_id, int32_t new_count) {
    int32_t old = 0;
    if (stor_topic_partition_count(s, topic_id, &old)) return -1;
    if (new_count <= old)
        return stor_failf(s, "topic %lld has %d partitions; cannot grow to %d", (long long)topic_id, old, new_count);
    if (stor_partitions_insert(s, topic_id, old, new_count)) return -1;
    sqlite3_stmt *st = stor_stmt(s, STOR_TOPIC_PARTITIONS_SET);
    if (sqlite3_bind_int64(st, 1, topic_id) || sqlite3_bind_int(st, 2, new_count))
        return stor_fail(s, "bind partition count");
    return stor_step_done(s, st, "update partition count");
}

int stor_topic_add_partitions(stor *s, int64_t topic_id, int32_t new_count) {
    if (stor_op_begin(s)) return -1;
    return stor_op_end(s, stor_topic_grow(s, topic_id, new_count));
}

int stor_topic_config_set(stor *s, int64_t topic_id, const char *key, const char *value) {
    if (!key) return stor_failf(s, "set topic config: no key");
    if (stor_write_begin(s)) return -1;
    sqlite3_stmt *st = stor_stmt(s, value ? STOR_CONFIG_UPSERT : STOR_CONFIG_DELETE);
    if (sqlite3_bind_int64(st, 1, topic_id) || sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC) ||
        (value && sqlite3_bind_text(st, 3, value, -1, SQLITE_STATIC)))
        return stor_fail(s, "bind topic config");
    return stor_step_done(s, st, value ? "set topic config" : "delete topic config");
}

/* ---- load ---- */

static int stor_load_topic_row(stor *s, sqlite3_stmt *st, const stor_load_cb *cb) {
    stor_topic t = {0};
    t.id = sqlite3_column_int64(st, 0);
    t.name = (const char *)sqlite3_column_text(st, 1);
    const void *uuid = sqlite3_column_blob(st, 2);
    int uuid_len = sqlite3_column_bytes(st, 2);
    if (!t.name || !uuid || uuid_len != (int)sizeof t.uuid)
        return stor_failf(s, "topic %lld: damaged row (name or 16-byte uuid missing)", (long long)t.id);
    memcpy(t.uuid, uuid, sizeof t.uuid);
    t.partitions = sqlite3_column_int(st, 3);
    t.created_ms = sqlite3_column_int64(st, 4);
    t.replication_factor = (int16_t)sqlite3_column_int(st, 5);
    cb->topic(cb->ctx, &t);
    return 0;
}

static int stor_load_config_row(stor *s, sqlite3_stmt *st, const stor_load_cb *cb) {
    const char *key = (const char *)sqlite3_column_text(st, 1);
    const char *value = (const char *)sqlite3_column_text(st, 2);
    if (!key || !value) return stor_fail(s, "read topic config");
    cb->config(cb->ctx, sqlite3_column_int64(st, 0), key, value);
    return 0;
}

static int stor_load_partition_row(stor *s, sqlite3_stmt *st, const stor_load_cb *cb) {
    (void)s;
    int64_t log_start = sqlite3_column_int64(st, 2);
    int64_t next = log_start;
    /* Batches below log_start are deleted with it, so the newest batch decides unless there is none. */
    if (sqlite3_column_type(st, 3) != SQLITE_NULL) {
        int64_t last = sqlite3_column_int64(st, 3);
        if (last < INT64_MAX && last + 1 > next) next = last + 1;
    }
    cb->partition(cb->ctx, sqlite3_column_int64(st, 0), sqlite3_column_int(st, 1), log_start, next);
    return 0;
}

static int stor_load_leader_row(stor *s, sqlite3_stmt *st, const stor_load_cb *cb) {
    (void)s;
    cb->leader(cb->ctx, sqlite3_column_int64(st, 0), sqlite3_column_int(st, 1), sqlite3_column_int(st, 2),
               sqlite3_column_int(st, 3));
    return 0;
}

int stor_leader_put(stor *s, int64_t topic_id, int32_t partition, int32_t leader, int32_t leader_epoch) {
    if (leader_epoch < 0) return stor_failf(s, "set leader: negative epoch %d", leader_epoch);
    if (stor_write_begin(s)) return -1;
    sqlite3_stmt *st = stor_stmt(s, STOR_LEADER_PUT);
    if (sqlite3_bind_int64(st, 1, topic_id) || sqlite3_bind_int(st, 2, partition) || sqlite3_bind_int(st, 3, leader) ||
        sqlite3_bind_int(st, 4, leader_epoch))
        return stor_fail(s, "bind leader");
    return stor_step_done(s, st, "write leader");
}

int stor_replicas_put(stor *s, int64_t topic_id, int32_t partition, const int32_t *ids, int n) {
    if (n < 1 || n > STOR_MAX_REPLICAS) return stor_failf(s, "set replicas: %d replicas", n);
    char text[STOR_MAX_REPLICAS * 12];
    size_t len = 0;
    for (int i = 0; i < n; i++) len += (size_t)snprintf(text + len, sizeof text - len, "%s%d", i ? "," : "", ids[i]);
    if (stor_write_begin(s)) return -1;
    sqlite3_stmt *st = stor_stmt(s, STOR_REPLICAS_PUT);
    if (sqlite3_bind_int64(st, 1, topic_id) || sqlite3_bind_int(st, 2, partition) ||
        sqlite3_bind_text(st, 3, text, (int)len, SQLITE_TRANSIENT))
        return stor_fail(s, "bind replicas");
    return stor_step_done(s, st, "write replicas");
}

/* "41,96,153" back into node ids; a row that does not read as one is damage, not a choice. */
static int stor_load_replicas_row(stor *s, sqlite3_stmt *st, const stor_load_cb *cb) {
    int64_t topic_id = sqlite3_column_int64(st, 0);
    int32_t partition = sqlite3_column_int(st, 1);
    const char *p = (const char *)sqlite3_column_text(st, 2);
    int32_t ids[STOR_MAX_REPLICAS];
    int n = 0;
    while (p && *p && n < STOR_MAX_REPLICAS) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < INT32_MIN || v > INT32_MAX || (*end && *end != ',')) break;
        ids[n++] = (int32_t)v;
        p = *end ? end + 1 : end;
    }
    if (!p || *p || n == 0)
        return stor_failf(s, "partition %lld-%d: damaged replicas row", (long long)topic_id, partition);
    cb->replicas(cb->ctx, topic_id, partition, ids, n);
    return 0;
}

typedef int (*stor_row_fn)(stor *s, sqlite3_stmt *st, const stor_load_cb *cb);

static int stor_load_rows(stor *s, stor_stmt_id id, stor_row_fn row, const stor_load_cb *cb, const char *what) {
    sqlite3_stmt *st = stor_stmt(s, id);
    int rc = SQLITE_DONE, ret = 0;
    while (ret == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) ret = row(s, st, cb);
    if (ret == 0 && rc != SQLITE_DONE) ret = stor_fail(s, what);
    sqlite3_reset(st);
    return ret;
}

int stor_load(stor *s, const stor_load_cb *cb) {
    if (!cb) return stor_failf(s, "load: no callbacks");
    if (cb->topic && stor_load_rows(s, STOR_LOAD_TOPICS, stor_load_topic_row, cb, "load topics")) return -1;
    if (cb->config && stor_load_rows(s, STOR_LOAD_CONFIGS, stor_load_config_row, cb, "load topic configs"))
        return -1;
    if (cb->partition && stor_load_rows(s, STOR_LOAD_PARTITIONS, stor_load_partition_row, cb, "load partitions"))
        return -1;
    if (cb->replicas && stor_load_rows(s, STOR_LOAD_REPLICAS, stor_load_replicas_row, cb, "load replica assignments"))
        return -1;
    if (cb->leader && stor_load_rows(s, STOR_LOAD_LEADERS, stor_load_leader_row, cb, "load partition leaders"))
        return -1;
    return 0;
}
