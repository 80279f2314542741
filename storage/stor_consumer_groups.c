/*
 * Consumer groups of the KIP-848 protocol: the group row (epochs, assignor, the subscribed
 * topics' partition counts) and its members (epochs, reconciliation state, subscription and
 * partition sets), replaced whole at each change the coordinator keeps, inside the loop
 * iteration's commit. Apache Kafka writes the same facts as ConsumerGroupMetadata,
 * ConsumerGroupMemberMetadata, ConsumerGroupTargetAssignment* and ConsumerGroupCurrentMemberAssignment
 * records to __consumer_offsets (group-coordinator/src/main/resources/common/message/).
 */
#include "stor_int.h"

static int bind_text(sqlite3_stmt *st, int i, const char *v) { return sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC); }

static int stor_cmember_insert(stor *s, const char *group_id, int position, const stor_cmember *m) {
    sqlite3_stmt *st = stor_stmt(s, STOR_CMEMBER_INSERT);
    if (bind_text(st, 1, group_id) || bind_text(st, 2, m->member_id) || sqlite3_bind_int(st, 3, position) ||
        bind_text(st, 4, m->instance_id) || bind_text(st, 5, m->rack_id) ||
        bind_text(st, 6, m->client_id ? m->client_id : "") || bind_text(st, 7, m->client_host ? m->client_host : "") ||
        bind_text(st, 8, m->server_assignor) || bind_text(st, 9, m->topics ? m->topics : "") ||
        sqlite3_bind_int(st, 10, m->member_epoch) || sqlite3_bind_int(st, 11, m->previous_epoch) ||
        sqlite3_bind_int(st, 12, m->state) || sqlite3_bind_int(st, 13, m->rebalance_timeout_ms) ||
        bind_text(st, 14, m->assigned ? m->assigned : "") || bind_text(st, 15, m->revoking ? m->revoking : "") ||
        bind_text(st, 16, m->target ? m->target : "") || bind_text(st, 17, m->regex) || bind_text(st, 18, m->names) ||
        (m->classic_protocols ? sqlite3_bind_int(st, 19, m->classic_session_timeout_ms) : sqlite3_bind_null(st, 19)) ||
        (m->classic_protocols ? sqlite3_bind_blob(st, 20, m->classic_protocols, (int)m->classic_protocols_len,
                                                  SQLITE_STATIC)
                              : sqlite3_bind_null(st, 20)))
        return stor_fail(s, "bind consumer group member");
    int rc = stor_step_done(s, st, "save consumer group member");
    sqlite3_clear_bindings(st);
    return rc;
}

static int stor_cgroup_write(stor *s, const stor_cgroup *g, const stor_cmember *members, int n) {
    sqlite3_stmt *st = stor_stmt(s, STOR_CGROUP_UPSERT);
    if (bind_text(st, 1, g->group_id) || sqlite3_bind_int(st, 2, g->group_epoch) ||
        sqlite3_bind_int(st, 3, g->assignment_epoch) || bind_text(st, 4, g->assignor) ||
        bind_text(st, 5, g->topics ? g->topics : ""))
        return stor_fail(s, "bind consumer group");
    if (stor_step_done(s, st, "save consumer group")) return -1;
    st = stor_stmt(s, STOR_CMEMBERS_DELETE);
    if (bind_text(st, 1, g->group_id)) return stor_fail(s, "bind group id");
    if (stor_step_done(s, st, "delete consumer group members")) return -1;
    for (int i = 0; i < n; i++)
        if (stor_cmember_insert(s, g->group_id, i, &members[i])) return -1;
    return 0;
}

int stor_consumer_group_save(stor *s, const stor_cgroup *g, const stor_cmember *members, int n) {
    if (!g || !g->group_id || n < 0 || (n > 0 && !members)) return stor_failf(s, "save consumer group: bad arguments");
    for (int i = 0; i < n; i++)
        if (!members[i].member_id) return stor_failf(s, "save consumer group %s: member %d has no id", g->group_id, i);
    if (stor_op_begin_as(s, STOR_TXN_GROUPS)) return -1;
    return stor_op_end(s, stor_cgroup_write(s, g, members, n));
}

int stor_consumer_group_delete(stor *s, const char *group_id) {
    if (!group_id) return stor_failf(s, "delete consumer group: no id");
    if (stor_write_begin_as(s, STOR_TXN_GROUPS)) return -1;
    sqlite3_stmt *st = stor_stmt(s, STOR_CGROUP_DELETE);
    if (bind_text(st, 1, group_id)) return stor_fail(s, "bind group id");
    return stor_step_done(s, st, "delete consumer group");
}

static const char *col(sqlite3_stmt *st, int i) { return (const char *)sqlite3_column_text(st, i); }

static int stor_load_cmembers(stor *s, const char *group_id, const stor_cgroup_load_cb *cb) {
    sqlite3_stmt *st = stor_stmt(s, STOR_LOAD_CMEMBERS);
    if (sqlite3_bind_text(st, 1, group_id, -1, SQLITE_TRANSIENT)) return stor_fail(s, "bind group id");
    int rc, ret = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        stor_cmember m = {col(st, 0), col(st, 1), col(st, 2), col(st, 3), col(st, 4), col(st, 5), col(st, 6),
                          sqlite3_column_int(st, 7), sqlite3_column_int(st, 8), sqlite3_column_int(st, 9),
                          sqlite3_column_int(st, 10), col(st, 11), col(st, 12), col(st, 13), col(st, 14), col(st, 15),
                          sqlite3_column_int(st, 16), NULL, 0};
        if (sqlite3_column_type(st, 17) != SQLITE_NULL) {
            m.classic_protocols = sqlite3_column_blob(st, 17);
            m.classic_protocols_len = (size_t)sqlite3_column_bytes(st, 17);
            if (!m.classic_protocols) m.classic_protocols = ""; /* a zero-length blob */
        }
        if (!m.member_id || !m.client_id || !m.client_host || !m.topics || !m.assigned || !m.revoking || !m.target) {
            ret = stor_fail(s, "load consumer group members");
            break;
        }
        if (cb->member) cb->member(cb->ctx, group_id, &m);
    }
    if (ret == 0 && rc != SQLITE_DONE) ret = stor_fail(s, "load consumer group members");
    sqlite3_reset(st);
    return ret;
}

int stor_consumer_groups_load(stor *s, const stor_cgroup_load_cb *cb) {
    if (!cb) return stor_failf(s, "load consumer groups: no callbacks");
    sqlite3_stmt *st = stor_stmt(s, STOR_LOAD_CGROUPS);
    int rc = SQLITE_DONE, ret = 0;
    while (ret == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        stor_cgroup g = {col(st, 0), sqlite3_column_int(st, 1), sqlite3_column_int(st, 2), col(st, 3), col(st, 4)};
        if (!g.group_id || !g.topics) {
            ret = stor_fail(s, "load consumer groups");
            break;
        }
        if (cb->group) cb->group(cb->ctx, &g);
        ret = stor_load_cmembers(s, g.group_id, cb);
    }
    if (ret == 0 && rc != SQLITE_DONE) ret = stor_fail(s, "load consumer groups");
    sqlite3_reset(st);
    return ret;
}
