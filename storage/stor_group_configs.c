/*
 * Group configs (KIP-848's consumer.session.timeout.ms and friends): the overrides set with
 * IncrementalAlterConfigs or AlterConfigs on a GROUP resource. Keyed by group id only: Kafka
 * keeps a group's configs whether or not the group exists, and across its deletion.
 */
#include "stor_int.h"

int stor_group_config_set(stor *s, const char *group_id, const char *key, const char *value) {
    if (!group_id || !key) return stor_failf(s, "set group config: no group id or key");
    if (stor_write_begin(s)) return -1;
    sqlite3_stmt *st = stor_stmt(s, value ? STOR_GROUP_CONFIG_UPSERT : STOR_GROUP_CONFIG_DELETE);
    if (sqlite3_bind_text(st, 1, group_id, -1, SQLITE_STATIC) || sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC) ||
        (value && sqlite3_bind_text(st, 3, value, -1, SQLITE_STATIC)))
        return stor_fail(s, "bind group config");
    return stor_step_done(s, st, value ? "set group config" : "delete group config");
}

int stor_group_configs_clear(stor *s) {
    if (stor_write_begin(s)) return -1;
    return stor_step_done(s, stor_stmt(s, STOR_GROUP_CONFIGS_CLEAR), "delete group configs");
}

int stor_group_configs_load(stor *s, stor_group_config_fn fn, void *ctx) {
    sqlite3_stmt *st = stor_stmt(s, STOR_LOAD_GROUP_CONFIGS);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *group = (const char *)sqlite3_column_text(st, 0);
        const char *key = (const char *)sqlite3_column_text(st, 1);
        const char *value = (const char *)sqlite3_column_text(st, 2);
        if (!group || !key || !value) {
            sqlite3_reset(st);
            return stor_failf(s, "group configs: damaged row");
        }
        fn(ctx, group, key, value);
    }
    int ret = rc == SQLITE_DONE ? 0 : stor_fail(s, "load group configs");
    sqlite3_reset(st);
    return ret;
}
