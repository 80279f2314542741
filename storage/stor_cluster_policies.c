/*
 * Cluster policies: the resource-based policy document PutClusterPolicy sets on a cluster
 * (https://docs.aws.amazon.com/msk/1.0/apireference/clusters-clusterarn-policy.html), kept as
 * sent with the version it was given, keyed by the cluster's ARN. Whether a document is valid is
 * the caller's to check.
 */
#include <stdlib.h>
#include <string.h>

#include "stor_int.h"

int stor_cluster_policy_put(stor *s, const char *arn, const char *policy, const char *version) {
    if (!arn || !policy || !version) return stor_failf(s, "put cluster policy: no ARN, policy or version");
    if (stor_write_begin(s)) return -1;
    sqlite3_stmt *st = stor_stmt(s, STOR_CLUSTER_POLICY_PUT);
    if (sqlite3_bind_text(st, 1, arn, -1, SQLITE_STATIC) || sqlite3_bind_text(st, 2, policy, -1, SQLITE_STATIC) ||
        sqlite3_bind_text(st, 3, version, -1, SQLITE_STATIC))
        return stor_fail(s, "bind cluster policy");
    return stor_step_done(s, st, "put cluster policy");
}

int stor_cluster_policy_get(stor *s, const char *arn, char **policy, char **version) {
    *policy = *version = NULL;
    if (!arn) return stor_failf(s, "get cluster policy: no ARN");
    sqlite3_stmt *st = stor_stmt(s, STOR_CLUSTER_POLICY_GET);
    if (sqlite3_bind_text(st, 1, arn, -1, SQLITE_STATIC)) return stor_fail(s, "bind cluster policy");
    int rc = sqlite3_step(st), ret = 0;
    if (rc == SQLITE_ROW) {
        const char *p = (const char *)sqlite3_column_text(st, 0), *v = (const char *)sqlite3_column_text(st, 1);
        if (!p || !v) {
            ret = stor_failf(s, "cluster policies: damaged row");
        } else {
            *policy = strdup(p), *version = strdup(v);
            ret = *policy && *version ? 1 : stor_failf(s, "get cluster policy: out of memory");
        }
    } else if (rc != SQLITE_DONE) {
        ret = stor_fail(s, "get cluster policy");
    }
    sqlite3_reset(st);
    if (ret < 0) {
        free(*policy), free(*version);
        *policy = *version = NULL;
    }
    return ret;
}

int stor_cluster_policy_delete(stor *s, const char *arn) {
    if (!arn) return stor_failf(s, "delete cluster policy: no ARN");
    if (stor_write_begin(s)) return -1;
    sqlite3_stmt *st = stor_stmt(s, STOR_CLUSTER_POLICY_DELETE);
    if (sqlite3_bind_text(st, 1, arn, -1, SQLITE_STATIC)) return stor_fail(s, "bind cluster policy");
    return stor_step_done(s, st, "delete cluster policy");
}
