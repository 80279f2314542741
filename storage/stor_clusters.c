/*
 * Clusters: the registry of the clusters CreateClusterV2 made beside the configured one
 * (https://docs.aws.amazon.com/msk/1.0/apireference/v2-clusters.html), so that they come back at
 * restart. Each row is the ARN, the name and the cluster's description as JSON (the caller's
 * format); the cluster's own data lives in its own database. Removing a cluster removes its tags
 * and policy in the same operation, so a new cluster of the same name starts without them.
 */
#include "stor_int.h"

int stor_cluster_add(stor *s, const char *arn, const char *name, const char *spec, int64_t created_ms) {
    if (!arn || !name || !spec) return stor_failf(s, "add cluster: no ARN, name or description");
    if (stor_write_begin(s)) return -1;
    sqlite3_stmt *st = stor_stmt(s, STOR_CLUSTER_PUT);
    if (sqlite3_bind_text(st, 1, arn, -1, SQLITE_STATIC) || sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC) ||
        sqlite3_bind_text(st, 3, spec, -1, SQLITE_STATIC) || sqlite3_bind_int64(st, 4, created_ms))
        return stor_fail(s, "bind cluster");
    return stor_step_done(s, st, "add cluster");
}

int stor_cluster_remove(stor *s, const char *arn) {
    if (!arn) return stor_failf(s, "remove cluster: no ARN");
    if (stor_op_begin(s)) return -1;
    int rc = stor_write_begin(s);
    if (!rc) {
        sqlite3_stmt *st = stor_stmt(s, STOR_CLUSTER_DELETE);
        rc = sqlite3_bind_text(st, 1, arn, -1, SQLITE_STATIC) ? stor_fail(s, "bind cluster")
                                                               : stor_step_done(s, st, "remove cluster");
    }
    if (!rc) rc = stor_cluster_tags_delete(s, arn);
    if (!rc) rc = stor_cluster_policy_delete(s, arn);
    return stor_op_end(s, rc);
}

int stor_clusters_load(stor *s, stor_cluster_fn fn, void *ctx) {
    sqlite3_stmt *st = stor_stmt(s, STOR_LOAD_CLUSTERS);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *arn = (const char *)sqlite3_column_text(st, 0), *name = (const char *)sqlite3_column_text(st, 1);
        const char *spec = (const char *)sqlite3_column_text(st, 2);
        if (!arn || !name || !spec) {
            sqlite3_reset(st);
            return stor_failf(s, "clusters: damaged row");
        }
        fn(ctx, arn, name, spec, sqlite3_column_int64(st, 3));
    }
    int ret = rc == SQLITE_DONE ? 0 : stor_fail(s, "load clusters");
    sqlite3_reset(st);
    return ret;
}
