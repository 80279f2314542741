/*
 * The transaction coordinator's state: each transactional id, its partitions, groups and pending offsets.
 * The partitions live in the id's row as text ("topic_id:partition ..."): the row is rewritten at
 * every change of the transaction anyway, so a partition list of its own (a row and an index
 * entry per partition, removed one by one with the markers) only added pages to each commit.
 */
#include "stor_int.h"

#include <errno.h>
#include <stdlib.h>

static int stor_bind_id(stor *s, sqlite3_stmt *st, const char *transactional_id) {
    if (sqlite3_bind_text(st, 1, transactional_id, -1, SQLITE_STATIC)) return stor_fail(s, "bind transactional id");
    return 0;
}

static int stor_txn_check(stor *s, const stor_txn *t) {
    if (!t || !t->transactional_id) return stor_failf(s, "save transaction: no transactional id");
    /* the table's CHECK says the same, but not which id */
    if (t->state < 0 || t->state > 5)
        return stor_failf(s, "save transaction %s: state %d is not one of Kafka's 0..5", t->transactional_id, t->state);
    return 0;
}

/* v in decimal at p, no terminator; the digits' count. snprintf per partition was most of the binding. */
static size_t put_dec(char *p, int64_t v) {
    char tmp[20];
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    size_t n = 0, k = 0;
    do tmp[n++] = (char)('0' + u % 10);
    while ((u /= 10) != 0);
    if (v < 0) p[k++] = '-';
    while (n) p[k++] = tmp[--n];
    return k;
}

/* The partition list as ?12: NULL when empty, else "topic_id:partition" separated by spaces. */
static int stor_bind_parts(stor *s, sqlite3_stmt *st, const stor_txn *t) {
    if (t->nparts <= 0 || !t->parts) return sqlite3_bind_null(st, 12) ? stor_fail(s, "bind transaction partitions") : 0;
    /* zeroed, as is calloc's: gcc -O2 -fsanitize=address cannot see that the loop writes every byte bound */
    char small[512] = {0}, *buf = small;
    size_t cap = (size_t)t->nparts * 33; /* 20 digits and sign, ':', 11, ' ' */
    if (cap > sizeof small && !(buf = calloc(cap, 1))) return stor_failf(s, "save transaction %s: out of memory",
                                                                       t->transactional_id);
    size_t len = 0;
    for (int32_t i = 0; i < t->nparts; i++) {
        if (i) buf[len++] = ' ';
        len += put_dec(buf + len, t->parts[i].topic_id);
        buf[len++] = ':';
        len += put_dec(buf + len, t->parts[i].partition);
    }
    int rc = sqlite3_bind_text(st, 12, buf, (int)len, SQLITE_TRANSIENT);
    if (buf != small) free(buf);
    return rc ? stor_fail(s, "bind transaction partitions") : 0;
}

static int stor_txn_bind(stor *s, sqlite3_stmt *st, const stor_txn *t) {
    if (stor_bind_id(s, st, t->transactional_id) || sqlite3_bind_int64(st, 2, t->producer_id) ||
        sqlite3_bind_int64(st, 3, t->prev_producer_id) || sqlite3_bind_int(st, 4, t->producer_epoch) ||
        sqlite3_bind_int(st, 5, t->last_producer_epoch) || sqlite3_bind_int(st, 6, t->timeout_ms) ||
        sqlite3_bind_int(st, 7, t->state) || sqlite3_bind_int64(st, 8, t->start_ms) ||
        sqlite3_bind_int64(st, 9, t->update_ms) || sqlite3_bind_int(st, 10, t->client_tv) ||
        sqlite3_bind_int64(st, 11, t->next_producer_id))
        return stor_fail(s, "bind transaction");
    return stor_bind_parts(s, st, t);
}

/* The row exists from the id's first InitProducerId on: an UPDATE, and the upsert only when it changed nothing. */
int stor_txn_put(stor *s, const stor_txn *t) {
    if (stor_txn_check(s, t)) return -1;
    if (stor_write_begin_as(s, STOR_TXN_TXNS)) return -1;
    sqlite3_stmt *st = stor_stmt(s, STOR_TXNS_UPDATE);
    if (stor_txn_bind(s, st, t) || stor_step_done(s, st, "save transaction")) return -1;
    if (sqlite3_changes(s->db) > 0) return 0;
    st = stor_stmt(s, STOR_TXNS_UPSERT);
    if (stor_txn_bind(s, st, t)) return -1;
    return stor_step_done(s, st, "save transaction");
}

/* One statement keyed by the transactional id alone. */
static int stor_txn_by_id(stor *s, stor_stmt_id id, const char *transactional_id, const char *what) {
    if (!transactional_id) return stor_failf(s, "%s: no transactional id", what);
    if (stor_write_begin_as(s, STOR_TXN_TXNS)) return -1;
    sqlite3_stmt *st = stor_stmt(s, id);
    if (stor_bind_id(s, st, transactional_id)) return -1;
    return stor_step_done(s, st, what);
}

int stor_txn_delete(stor *s, const char *transactional_id) {
    return stor_txn_by_id(s, STOR_TXNS_DELETE, transactional_id, "delete transaction");
}

int stor_txn_group_add(stor *s, const char *transactional_id, const char *group_id) {
    if (!transactional_id || !group_id) return stor_failf(s, "add group to transaction: no transactional or group id");
    if (stor_write_begin_as(s, STOR_TXN_TXNS)) return -1;
    sqlite3_stmt *st = stor_stmt(s, STOR_TXN_GROUP_INSERT);
    if (stor_bind_id(s, st, transactional_id) || sqlite3_bind_text(st, 2, group_id, -1, SQLITE_STATIC))
        return stor_fail(s, "bind transaction group");
    return stor_step_done(s, st, "add group to transaction");
}

static const stor_stmt_id member_clear[] = {STOR_TXN_GROUP_CLEAR, STOR_TXN_OFFSET_CLEAR};
static const char *const member_what[] = {"clear transaction groups", "clear transaction offsets"};
#define MEMBER_TABLES 2

/* Which of the member tables hold rows of the id (has[i] for member_clear[i]); how many do. */
static int stor_txn_members_probe(stor *s, const char *transactional_id, bool has[MEMBER_TABLES]) {
    sqlite3_stmt *st = stor_stmt(s, STOR_TXN_MEMBERS_PROBE);
    if (stor_bind_id(s, st, transactional_id)) return -1;
    int n = -1;
    if (sqlite3_step(st) == SQLITE_ROW) {
        n = 0;
        for (int i = 0; i < MEMBER_TABLES; i++) n += has[i] = sqlite3_column_int(st, i) != 0;
    } else {
        stor_fail(s, "find transaction members");
    }
    sqlite3_reset(st);
    return n;
}

static int stor_txn_members_delete(stor *s, const char *transactional_id, const bool has[MEMBER_TABLES]) {
    for (int i = 0; i < MEMBER_TABLES; i++)
        if (has[i] && stor_txn_by_id(s, member_clear[i], transactional_id, member_what[i])) return -1;
    return 0;
}

/*
 * A completed transaction usually has nothing here (most have no groups or offsets; its
 * partitions are in its row), so the look-up comes first and only a table with rows is
 * cleared; both clears run in one savepoint, so that neither happens without the other.
 */
int stor_txn_members_clear(stor *s, const char *transactional_id) {
    if (!transactional_id) return stor_failf(s, "clear transaction: no transactional id");
    /* in the write transaction: the look-up sees its writes, and opens no read transaction of its own */
    if (stor_write_begin_as(s, STOR_TXN_TXNS)) return -1;
    bool has[MEMBER_TABLES];
    int n = stor_txn_members_probe(s, transactional_id, has);
    if (n <= 1) return n < 0 ? -1 : stor_txn_members_delete(s, transactional_id, has);
    if (stor_op_begin_as(s, STOR_TXN_TXNS)) return -1;
    return stor_op_end(s, stor_txn_members_delete(s, transactional_id, has));
}

/* ---- pending transactional offsets ---- */

static int stor_txn_offset_check(stor *s, const char *transactional_id, const stor_offset *o) {
    if (!transactional_id) return stor_failf(s, "transactional offset: no transactional id");
    if (!o || !o->group_id || !o->topic) return stor_failf(s, "transactional offset %s: no group id or topic",
                                                           transactional_id);
    if (o->partition < 0)
        return stor_failf(s, "transactional offset %s %s/%s: negative partition %d", transactional_id, o->group_id,
                          o->topic, o->partition);
    return 0;
}

int stor_txn_offset_put(stor *s, const char *transactional_id, int64_t producer_id, const stor_offset *o) {
    if (stor_txn_offset_check(s, transactional_id, o)) return -1;
    if (stor_write_begin_as(s, STOR_TXN_TXNS)) return -1;
    sqlite3_stmt *st = stor_stmt(s, STOR_TXN_OFFSET_UPSERT);
    if (stor_bind_id(s, st, transactional_id) || sqlite3_bind_int64(st, 2, producer_id) ||
        sqlite3_bind_text(st, 3, o->group_id, -1, SQLITE_STATIC) ||
        sqlite3_bind_text(st, 4, o->topic, -1, SQLITE_STATIC) || sqlite3_bind_int(st, 5, o->partition) ||
        sqlite3_bind_int64(st, 6, o->offset) || sqlite3_bind_int(st, 7, o->leader_epoch) ||
        stor_bind_metadata(st, 8, o) ||
        sqlite3_bind_int64(st, 9, o->commit_ms))
        return stor_fail(s, "bind transactional offset");
    return stor_step_done(s, st, "save transactional offset");
}

/*
 * Supersede and the deletes by group or topic run for every plain OffsetCommit, DeleteGroups
 * and topic deletion, almost always finding no pending offset. Only one that changed a row is
 * a coordinator write: the others leave the commit's kinds as they were, so that a failed
 * commit of plain offsets stays undoable in memory. A failure counts as a change (not known).
 */
static int stor_txn_offsets_change(stor *s, sqlite3_stmt *st, const char *what) {
    int rc = stor_step_done(s, st, what);
    int changed = rc ? -1 : sqlite3_changes(s->db);
    if (changed != 0) s->txn_kinds |= STOR_TXN_TXNS;
    return changed;
}

int stor_txn_offsets_supersede(stor *s, const char *group_id, const char *topic, int32_t partition) {
    if (!group_id || !topic) return stor_failf(s, "supersede transactional offsets: no group id or topic");
    if (stor_write_begin_as(s, 0)) return -1;
    sqlite3_stmt *st = stor_stmt(s, STOR_TXN_OFFSET_SUPERSEDE);
    if (sqlite3_bind_text(st, 1, group_id, -1, SQLITE_STATIC) || sqlite3_bind_text(st, 2, topic, -1, SQLITE_STATIC) ||
        sqlite3_bind_int(st, 3, partition))
        return stor_fail(s, "bind transactional offset key");
    return stor_txn_offsets_change(s, st, "supersede transactional offsets") < 0 ? -1 : 0;
}

int stor_txn_offset_delete(stor *s, const char *group_id, const char *topic, int32_t partition) {
    if (!group_id || !topic) return stor_failf(s, "delete transactional offset: no group id or topic");
    if (stor_write_begin_as(s, 0)) return -1;
    sqlite3_stmt *st = stor_stmt(s, STOR_TXN_OFFSET_DELETE_ONE);
    if (sqlite3_bind_text(st, 1, group_id, -1, SQLITE_STATIC) || sqlite3_bind_text(st, 2, topic, -1, SQLITE_STATIC) ||
        sqlite3_bind_int(st, 3, partition))
        return stor_fail(s, "bind transactional offset key");
    return stor_txn_offsets_change(s, st, "delete transactional offset");
}

static int stor_txn_offsets_delete_by(stor *s, stor_stmt_id id, const char *key, const char *what) {
    if (!key) return stor_failf(s, "%s: no name", what);
    if (stor_write_begin_as(s, 0)) return -1;
    sqlite3_stmt *st = stor_stmt(s, id);
    if (sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC)) return stor_fail(s, what);
    return stor_txn_offsets_change(s, st, what);
}

int stor_txn_offsets_delete_group(stor *s, const char *group_id) {
    return stor_txn_offsets_delete_by(s, STOR_TXN_OFFSET_DELETE_GROUP, group_id,
                                      "delete transactional offsets of group");
}

int stor_txn_offsets_delete_topic(stor *s, const char *topic) {
    return stor_txn_offsets_delete_by(s, STOR_TXN_OFFSET_DELETE_TOPIC, topic, "delete transactional offsets of topic");
}

/* ---- load ---- */

/*
 * Runs a per-id member statement, calling row for each of its rows. The id is bound
 * TRANSIENT: it lives in the txns statement's row, and a copy keeps the two independent.
 */
typedef int (*stor_txn_row_fn)(stor *s, sqlite3_stmt *st, const char *transactional_id, const stor_txn_load_cb *cb);

static int stor_txn_load_members(stor *s, stor_stmt_id id, const char *transactional_id, stor_txn_row_fn row,
                                 const stor_txn_load_cb *cb, const char *what) {
    sqlite3_stmt *st = stor_stmt(s, id);
    if (sqlite3_bind_text(st, 1, transactional_id, -1, SQLITE_TRANSIENT)) return stor_fail(s, what);
    int rc = SQLITE_DONE, ret = 0;
    while (ret == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) ret = row(s, st, transactional_id, cb);
    if (ret == 0 && rc != SQLITE_DONE) ret = stor_fail(s, what);
    sqlite3_reset(st);
    return ret;
}

static int stor_txn_group_row(stor *s, sqlite3_stmt *st, const char *transactional_id, const stor_txn_load_cb *cb) {
    const char *group_id = (const char *)sqlite3_column_text(st, 0);
    /* the column is NOT NULL, so a NULL here is SQLite running out of memory */
    if (!group_id) return stor_fail(s, "load transaction groups");
    cb->group(cb->ctx, transactional_id, group_id);
    return 0;
}

static int stor_txn_offset_row(stor *s, sqlite3_stmt *st, const char *transactional_id, const stor_txn_load_cb *cb) {
    stor_offset o = {
        .group_id = (const char *)sqlite3_column_text(st, 1),
        .topic = (const char *)sqlite3_column_text(st, 2),
        .partition = sqlite3_column_int(st, 3),
        .offset = sqlite3_column_int64(st, 4),
        .leader_epoch = sqlite3_column_int(st, 5),
        .commit_ms = sqlite3_column_int64(st, 7),
        .expire_ms = -1,
    };
    stor_column_metadata(st, 6, &o);
    if (!o.group_id || !o.topic || !o.metadata) return stor_fail(s, "load transactional offsets");
    cb->offset(cb->ctx, transactional_id, sqlite3_column_int64(st, 0), &o, sqlite3_column_int(st, 8) != 0);
    return 0;
}

/* The row's partition list (stor_bind_parts), one callback each; NULL: none. */
static int stor_txn_load_parts(stor *s, const char *transactional_id, const char *list, const stor_txn_load_cb *cb) {
    for (const char *p = list; p && *p;) {
        char *end;
        errno = 0;
        long long topic_id = strtoll(p, &end, 10);
        if (end == p || *end != ':' || errno) goto bad;
        p = end + 1;
        long long partition = strtoll(p, &end, 10);
        if (end == p || (*end && *end != ' ') || errno || partition < 0 || partition > INT32_MAX) goto bad;
        cb->partition(cb->ctx, transactional_id, (int64_t)topic_id, (int32_t)partition);
        p = *end ? end + 1 : end;
    }
    return 0;
bad:
    return stor_failf(s, "load transaction %s: its partition list '%s' is not \"topic_id:partition ...\"",
                      transactional_id, list);
}

static int stor_txn_load_one(stor *s, sqlite3_stmt *st, const stor_txn_load_cb *cb) {
    stor_txn t = {
        .transactional_id = (const char *)sqlite3_column_text(st, 0),
        .producer_id = sqlite3_column_int64(st, 1),
        .prev_producer_id = sqlite3_column_int64(st, 2),
        .producer_epoch = (int16_t)sqlite3_column_int(st, 3),
        .last_producer_epoch = (int16_t)sqlite3_column_int(st, 4),
        .timeout_ms = sqlite3_column_int(st, 5),
        .state = sqlite3_column_int(st, 6),
        .start_ms = sqlite3_column_int64(st, 7),
        .update_ms = sqlite3_column_int64(st, 8),
        .client_tv = (int16_t)sqlite3_column_int(st, 9),
        .next_producer_id = sqlite3_column_int64(st, 10),
    };
    if (!t.transactional_id) return stor_fail(s, "load transactions");
    if (cb->txn) cb->txn(cb->ctx, &t);
    const char *id = t.transactional_id;
    if (cb->partition && stor_txn_load_parts(s, id, (const char *)sqlite3_column_text(st, 11), cb)) return -1;
    if (cb->group &&
        stor_txn_load_members(s, STOR_LOAD_TXN_GROUPS, id, stor_txn_group_row, cb, "load transaction groups"))
        return -1;
    if (cb->offset && stor_txn_load_members(s, STOR_LOAD_TXN_OFFSETS, id, stor_txn_offset_row, cb,
                                            "load transactional offsets"))
        return -1;
    return 0;
}

int stor_txns_load(stor *s, const stor_txn_load_cb *cb) {
    if (!cb) return stor_failf(s, "load transactions: no callbacks");
    if (!cb->txn && !cb->partition && !cb->group && !cb->offset) return 0;
    sqlite3_stmt *st = stor_stmt(s, STOR_LOAD_TXNS);
    int rc = SQLITE_DONE, ret = 0;
    while (ret == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) ret = stor_txn_load_one(s, st, cb);
    if (ret == 0 && rc != SQLITE_DONE) ret = stor_fail(s, "load transactions");
    sqlite3_reset(st);
    return ret;
}
