/* Consumer groups: committed offsets, group state and members, and loading them at start-up. */
#include "stor_int.h"

/* What a zero-length blob loads as, so callers never get a NULL buffer to memcpy from. */
static const char stor_no_bytes[1] = "";

/* ---- committed offsets ---- */

/*
 * Commit metadata is a Kafka string, and a string may hold NUL bytes (librdkafka's 0099 commits
 * "Hello\0world!"): bound and read with its length, never as a C string. OffsetCommit and
 * TxnOffsetCommit share these two.
 */
int stor_bind_metadata(sqlite3_stmt *st, int col, const stor_offset *o) {
    if (!o->metadata || o->metadata_len <= 0) return sqlite3_bind_text(st, col, "", 0, SQLITE_STATIC);
    return sqlite3_bind_text(st, col, o->metadata, o->metadata_len, SQLITE_STATIC);
}

void stor_column_metadata(sqlite3_stmt *st, int col, stor_offset *o) {
    o->metadata = (const char *)sqlite3_column_text(st, col); /* text first, then its byte count */
    o->metadata_len = sqlite3_column_bytes(st, col);
}

static int stor_offset_check(stor *s, const stor_offset *o) {
    if (!o) return stor_failf(s, "commit offset: no offset");
    if (!o->group_id || !o->topic) return stor_failf(s, "commit offset: no group id or topic");
    if (o->partition < 0)
        return stor_failf(s, "commit offset %s/%s: negative partition %d", o->group_id, o->topic, o->partition);
    return 0;
}

int stor_offset_commit(stor *s, const stor_offset *o) {
    if (stor_offset_check(s, o)) return -1;
    if (stor_write_begin_as(s, STOR_TXN_OFFSETS)) return -1;
    sqlite3_stmt *st = stor_stmt(s, STOR_OFFSET_UPSERT);
    /* Kafka stores a null commit metadata as "" (OffsetAndMetadata.NoMetadata). */
    if (sqlite3_bind_text(st, 1, o->group_id, -1, SQLITE_STATIC) ||
        sqlite3_bind_text(st, 2, o->topic, -1, SQLITE_STATIC) || sqlite3_bind_int(st, 3, o->partition) ||
        sqlite3_bind_int64(st, 4, o->offset) || sqlite3_bind_int(st, 5, o->leader_epoch) ||
        stor_bind_metadata(st, 6, o) ||
        sqlite3_bind_int64(st, 7, o->commit_ms) || sqlite3_bind_int64(st, 8, o->expire_ms))
        return stor_fail(s, "bind offset");
    return stor_step_done(s, st, "commit offset");
}

/* Run a delete whose parameters are bound; returns the rows it deleted or -1. */
static int stor_delete_rows(stor *s, sqlite3_stmt *st, const char *what) {
    if (stor_step_done(s, st, what)) return -1;
    /* Rows of the statement's own table only: cascaded deletes are not counted. */
    return sqlite3_changes(s->db);
}

int stor_offset_delete(stor *s, const char *group_id, const char *topic, int32_t partition) {
    if (!group_id || !topic) return stor_failf(s, "delete offset: no group id or topic");
    if (stor_write_begin_as(s, STOR_TXN_OFFSETS)) return -1;
    sqlite3_stmt *st = stor_stmt(s, STOR_OFFSET_DELETE);
    if (sqlite3_bind_text(st, 1, group_id, -1, SQLITE_STATIC) || sqlite3_bind_text(st, 2, topic, -1, SQLITE_STATIC) ||
        sqlite3_bind_int(st, 3, partition))
        return stor_fail(s, "bind offset key");
    return stor_delete_rows(s, st, "delete offset");
}

/* Delete by one text key (a group or a topic). */
static int stor_delete_by(stor *s, stor_stmt_id id, const char *key, const char *what) {
    if (!key) return stor_failf(s, "%s: no name", what);
    if (stor_write_begin(s)) return -1;
    sqlite3_stmt *st = stor_stmt(s, id);
    if (sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC)) return stor_fail(s, what);
    return stor_delete_rows(s, st, what);
}

int stor_offsets_delete_group(stor *s, const char *group_id) {
    return stor_delete_by(s, STOR_OFFSETS_DELETE_GROUP, group_id, "delete offsets of group");
}

int stor_offsets_delete_topic(stor *s, const char *topic) {
    return stor_delete_by(s, STOR_OFFSETS_DELETE_TOPIC, topic, "delete offsets of topic");
}

int stor_offsets_load(stor *s, stor_offset_fn fn, void *ctx) {
    if (!fn) return stor_failf(s, "load offsets: no callback");
    sqlite3_stmt *st = stor_stmt(s, STOR_LOAD_OFFSETS);
    int rc, ret = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        stor_offset o = {
            .group_id = (const char *)sqlite3_column_text(st, 0),
            .topic = (const char *)sqlite3_column_text(st, 1),
            .partition = sqlite3_column_int(st, 2),
            .offset = sqlite3_column_int64(st, 3),
            .leader_epoch = sqlite3_column_int(st, 4),
            .commit_ms = sqlite3_column_int64(st, 6),
            .expire_ms = sqlite3_column_int64(st, 7),
        };
        stor_column_metadata(st, 5, &o);
        /* The columns are NOT NULL, so a NULL here is SQLite running out of memory. */
        if (!o.group_id || !o.topic || !o.metadata) {
            ret = stor_fail(s, "load offsets");
            break;
        }
        fn(ctx, &o);
    }
    if (ret == 0 && rc != SQLITE_DONE) ret = stor_fail(s, "load offsets");
    sqlite3_reset(st);
    return ret;
}

/* ---- groups and members ---- */

static int stor_group_check(stor *s, const stor_group *g, const stor_member *members, int nmembers) {
    if (!g || !g->group_id) return stor_failf(s, "save group: no group id");
    if (nmembers < 0 || (nmembers > 0 && !members))
        return stor_failf(s, "save group %s: bad member list (%d members)", g->group_id, nmembers);
    for (int i = 0; i < nmembers; i++) {
        const stor_member *m = &members[i];
        if (!m->member_id) return stor_failf(s, "save group %s: member %d has no id", g->group_id, i);
        if ((!m->metadata && m->metadata_len) || (!m->assignment && m->assignment_len))
            return stor_failf(s, "save group %s: member %s has a length but no bytes", g->group_id, m->member_id);
        if (m->metadata_len > INT32_MAX || m->assignment_len > INT32_MAX)
            return stor_failf(s, "save group %s: member %s metadata or assignment is too large", g->group_id,
                              m->member_id);
    }
    return 0;
}

/* A blob that is never NULL in the row: binding a NULL pointer would store SQL NULL. */
static int stor_bind_bytes(sqlite3_stmt *st, int i, const void *data, size_t len) {
    if (len == 0) return sqlite3_bind_zeroblob(st, i, 0);
    return sqlite3_bind_blob64(st, i, data, len, SQLITE_STATIC);
}

static int stor_group_upsert(stor *s, const stor_group *g) {
    sqlite3_stmt *st = stor_stmt(s, STOR_GROUP_UPSERT);
    /* A NULL text binds SQL NULL: none stays none. */
    if (sqlite3_bind_text(st, 1, g->group_id, -1, SQLITE_STATIC) ||
        sqlite3_bind_text(st, 2, g->protocol_type, -1, SQLITE_STATIC) ||
        sqlite3_bind_text(st, 3, g->protocol_name, -1, SQLITE_STATIC) || sqlite3_bind_int(st, 4, g->generation) ||
        sqlite3_bind_text(st, 5, g->leader, -1, SQLITE_STATIC) || sqlite3_bind_int(st, 6, g->state) ||
        sqlite3_bind_int64(st, 7, g->state_ms))
        return stor_fail(s, "bind group");
    return stor_step_done(s, st, "save group");
}

static int stor_member_insert(stor *s, const char *group_id, int position, const stor_member *m) {
    sqlite3_stmt *st = stor_stmt(s, STOR_MEMBER_INSERT);
    if (sqlite3_bind_text(st, 1, group_id, -1, SQLITE_STATIC) ||
        sqlite3_bind_text(st, 2, m->member_id, -1, SQLITE_STATIC) || sqlite3_bind_int(st, 3, position) ||
        sqlite3_bind_text(st, 4, m->instance_id, -1, SQLITE_STATIC) ||
        sqlite3_bind_text(st, 5, m->client_id ? m->client_id : "", -1, SQLITE_STATIC) ||
        sqlite3_bind_text(st, 6, m->client_host ? m->client_host : "", -1, SQLITE_STATIC) ||
        sqlite3_bind_int(st, 7, m->session_timeout_ms) || sqlite3_bind_int(st, 8, m->rebalance_timeout_ms) ||
        stor_bind_bytes(st, 9, m->metadata, m->metadata_len) ||
        stor_bind_bytes(st, 10, m->assignment, m->assignment_len))
        return stor_fail(s, "bind group member");
    int rc = stor_step_done(s, st, "save group member");
    /* Drop the pointers to the caller's buffers now rather than at the next use. */
    sqlite3_clear_bindings(st);
    return rc;
}

static int stor_group_write(stor *s, const stor_group *g, const stor_member *members, int nmembers) {
    if (stor_group_upsert(s, g)) return -1;
    sqlite3_stmt *st = stor_stmt(s, STOR_MEMBERS_DELETE);
    if (sqlite3_bind_text(st, 1, g->group_id, -1, SQLITE_STATIC)) return stor_fail(s, "bind group id");
    if (stor_step_done(s, st, "delete group members")) return -1;
    for (int i = 0; i < nmembers; i++)
        if (stor_member_insert(s, g->group_id, i, &members[i])) return -1;
    return 0;
}

int stor_group_save(stor *s, const stor_group *g, const stor_member *members, int nmembers) {
    if (stor_group_check(s, g, members, nmembers)) return -1;
    if (stor_op_begin_as(s, STOR_TXN_GROUPS)) return -1;
    return stor_op_end(s, stor_group_write(s, g, members, nmembers));
}

int stor_group_delete(stor *s, const char *group_id) {
    /* Not an error when there is no row: simple groups and never-saved groups have none. */
    return stor_delete_by(s, STOR_GROUP_DELETE, group_id, "delete group") < 0 ? -1 : 0;
}

/* ---- load ---- */

static int stor_load_members(stor *s, const char *group_id, const stor_group_load_cb *cb) {
    sqlite3_stmt *st = stor_stmt(s, STOR_LOAD_MEMBERS);
    /* TRANSIENT: group_id lives in the groups statement's row; a copy keeps the two independent. */
    if (sqlite3_bind_text(st, 1, group_id, -1, SQLITE_TRANSIENT)) return stor_fail(s, "bind group id");
    int rc, ret = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        stor_member m = {
            .member_id = (const char *)sqlite3_column_text(st, 0),
            .instance_id = (const char *)sqlite3_column_text(st, 1),
            .client_id = (const char *)sqlite3_column_text(st, 2),
            .client_host = (const char *)sqlite3_column_text(st, 3),
            .session_timeout_ms = sqlite3_column_int(st, 4),
            .rebalance_timeout_ms = sqlite3_column_int(st, 5),
        };
        /* Blob before bytes, as SQLite recommends; a zero-length blob reads back as NULL. */
        m.metadata = sqlite3_column_blob(st, 6);
        m.metadata_len = (size_t)sqlite3_column_bytes(st, 6);
        m.assignment = sqlite3_column_blob(st, 7);
        m.assignment_len = (size_t)sqlite3_column_bytes(st, 7);
        if (!m.member_id || !m.client_id || !m.client_host || (!m.metadata && m.metadata_len) ||
            (!m.assignment && m.assignment_len)) {
            ret = stor_fail(s, "load group members");
            break;
        }
        if (!m.metadata) m.metadata = stor_no_bytes;
        if (!m.assignment) m.assignment = stor_no_bytes;
        cb->member(cb->ctx, group_id, &m);
    }
    if (ret == 0 && rc != SQLITE_DONE) ret = stor_fail(s, "load group members");
    sqlite3_reset(st);
    return ret;
}

int stor_groups_load(stor *s, const stor_group_load_cb *cb) {
    if (!cb) return stor_failf(s, "load groups: no callbacks");
    if (!cb->group && !cb->member) return 0;
    sqlite3_stmt *st = stor_stmt(s, STOR_LOAD_GROUPS);
    int rc = SQLITE_DONE, ret = 0;
    while (ret == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        stor_group g = {
            .group_id = (const char *)sqlite3_column_text(st, 0),
            .protocol_type = (const char *)sqlite3_column_text(st, 1),
            .protocol_name = (const char *)sqlite3_column_text(st, 2),
            .generation = sqlite3_column_int(st, 3),
            .leader = (const char *)sqlite3_column_text(st, 4),
            .state = sqlite3_column_int(st, 5),
            .state_ms = sqlite3_column_int64(st, 6),
        };
        if (!g.group_id) {
            ret = stor_fail(s, "load groups");
            break;
        }
        if (cb->group) cb->group(cb->ctx, &g);
        if (cb->member) ret = stor_load_members(s, g.group_id, cb);
    }
    if (ret == 0 && rc != SQLITE_DONE) ret = stor_fail(s, "load groups");
    sqlite3_reset(st);
    return ret;
}
