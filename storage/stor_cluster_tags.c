/*
 * Cluster tags: what the `kafka` control plane's TagResource and UntagResource set on a cluster,
 * keyed by the cluster's ARN (MSK tags resources by ARN: https://docs.aws.amazon.com/msk/1.0/apireference/tags-resourcearn.html).
 * AWS's tag rules (count, lengths, the "aws:" prefix) are checked by the caller before it writes.
 */
#include "stor_int.h"

int stor_cluster_tag_set(stor *s, const char *arn, const char *key, const char *value) {
    if (!arn || !key) return stor_failf(s, "set cluster tag: no ARN or key");
    if (stor_write_begin(s)) return -1;
    sqlite3_stmt *st = stor_stmt(s, value ? STOR_CLUSTER_TAG_UPSERT : STOR_CLUSTER_TAG_DELETE);
    if (sqlite3_bind_text(st, 1, arn, -1, SQLITE_STATIC) || sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC) ||
        (value && sqlite3_bind_text(st, 3, value, -1, SQLITE_STATIC)))
        return stor_fail(s, "bind cluster tag");
    return stor_step_done(s, st, value ? "set cluster tag" : "delete cluster tag");
}

int stor_cluster_tags_put(stor *s, const char *arn, const char *const *keys, const char *const *values, size_t n) {
    /* one operation: a failed key undoes the ones before it, so a request is stored whole or not at all */
    if (stor_op_begin(s)) return -1;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) rc = stor_cluster_tag_set(s, arn, keys[i], values ? values[i] : NULL);
    return stor_op_end(s, rc);
}

int stor_cluster_tags_delete(stor *s, const char *arn) {
    if (!arn) return stor_failf(s, "delete cluster tags: no ARN");
    if (stor_write_begin(s)) return -1;
    sqlite3_stmt *st = stor_stmt(s, STOR_CLUSTER_TAGS_DELETE);
    if (sqlite3_bind_text(st, 1, arn, -1, SQLITE_STATIC)) return stor_fail(s, "bind cluster tags");
    return stor_step_done(s, st, "delete cluster tags");
}

int stor_cluster_tags_load(stor *s, const char *arn, stor_cluster_tag_fn fn, void *ctx) {
    if (!arn) return stor_failf(s, "load cluster tags: no ARN");
    sqlite3_stmt *st = stor_stmt(s, STOR_LOAD_CLUSTER_TAGS);
    if (sqlite3_bind_text(st, 1, arn, -1, SQLITE_STATIC)) return stor_fail(s, "bind cluster tags");
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *key = (const char *)sqlite3_column_text(st, 0);
        const char *value = (const char *)sqlite3_column_text(st, 1);
        if (!key || !value) {
            sqlite3_reset(st);
            return stor_failf(s, "cluster tags: damaged row");
        }
        fn(ctx, key, value);
    }
    int ret = rc == SQLITE_DONE ? 0 : stor_fail(s, "load cluster tags");
    sqlite3_reset(st);
    return ret;
}
