/* Idempotent producer state at start-up: each producer's newest batches per partition. */
#include "stor_int.h"

typedef struct stor_producer_key {
    int64_t topic_id;
    int64_t partition;
    int64_t producer_id;
} stor_producer_key;

/* Next (topic, partition, producer) after *k in key order: 1 found (k updated), 0 done, -1 error. */
static int stor_producer_next(stor *s, stor_producer_key *k) {
    sqlite3_stmt *st = stor_stmt(s, STOR_PRODUCER_NEXT);
    if (sqlite3_bind_int64(st, 1, k->topic_id) || sqlite3_bind_int64(st, 2, k->partition) ||
        sqlite3_bind_int64(st, 3, k->producer_id))
        return stor_fail(s, "bind producer key");
    int rc = sqlite3_step(st);
    int ret = 0;
    if (rc == SQLITE_ROW) {
        k->topic_id = sqlite3_column_int64(st, 0);
        k->partition = sqlite3_column_int64(st, 1);
        k->producer_id = sqlite3_column_int64(st, 2);
        ret = 1;
    } else if (rc != SQLITE_DONE) {
        ret = stor_fail(s, "next producer");
    }
    sqlite3_reset(st);
    return ret;
}

/* The producer's newest batches, newest first; returns how many (at most STOR_PRODUCER_BATCHES_KEPT) or -1. */
static int stor_producer_batches(stor *s, const stor_producer_key *k, stor_batch_meta *out) {
    sqlite3_stmt *st = stor_stmt(s, STOR_PRODUCER_BATCHES);
    if (sqlite3_bind_int64(st, 1, k->topic_id) || sqlite3_bind_int64(st, 2, k->partition) ||
        sqlite3_bind_int64(st, 3, k->producer_id) || sqlite3_bind_int(st, 4, STOR_PRODUCER_BATCHES_KEPT))
        return stor_fail(s, "bind producer batches");
    int n = 0, rc = SQLITE_DONE;
    while (n < STOR_PRODUCER_BATCHES_KEPT && (rc = sqlite3_step(st)) == SQLITE_ROW) stor_meta_from_row(st, 0, &out[n++]);
    int ret = n;
    if (n < STOR_PRODUCER_BATCHES_KEPT && rc != SQLITE_DONE) ret = stor_fail(s, "read producer batches");
    sqlite3_reset(st);
    return ret;
}

int stor_load_producer_batches(stor *s, stor_producer_fn fn, void *ctx) {
    if (!fn) return stor_failf(s, "load producer batches: no callback");
    stor_producer_key k = {INT64_MIN, INT64_MIN, INT64_MIN};
    int found;
    /* Both statements are reset before fn runs, so fn may call back into stor. */
    while ((found = stor_producer_next(s, &k)) == 1) {
        stor_batch_meta batches[STOR_PRODUCER_BATCHES_KEPT];
        int n = stor_producer_batches(s, &k, batches);
        if (n < 0) return -1;
        for (int i = n - 1; i >= 0; i--) fn(ctx, k.topic_id, (int32_t)k.partition, &batches[i]);
    }
    return found;
}
