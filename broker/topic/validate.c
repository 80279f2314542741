/*
 * The record pass of Kafka's LogValidator, for the topic configs that need one: a compacted
 * topic refuses records without a key, message.timestamp.before/after.max.ms (and MSK's
 * message.timestamp.difference.max.ms) refuse CreateTime timestamps outside the window, and a
 * compression.type other than "producer" rebuilds the batch in that codec. Kafka looks inside
 * every batch; we do it only when one of these applies, so a topic on the defaults appends its
 * batches untouched.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "clock.h"
#include "kp_errors.h"
#include "kp_mem.h"
#include "kp_records.h"
#include "srv.h"
#include "topic.h"


static bool needs_pass(const topic *t, const kp_batch *b) {
    bool window = !t->log_append_time && (t->ts_before_ms != INT64_MAX || t->ts_after_ms != INT64_MAX);
    return window || t->compact || (t->codec >= 0 && t->codec != kp_batch_codec(b));
}

int16_t topic_check_records(srv *s, partition *p, const kp_batch *b, topic_checked *out, topic_record_error_fn fn,
                            void *ctx, const char **why) {
    (void)s;
    topic *t = p->topic;
    out->batch = NULL;
    out->size = 0;
    if (!needs_pass(t, b)) return 0;
    const uint8_t *sec;
    size_t sec_len;
    uint8_t *owned;
    if (kp_batch_records(b, TOPIC_MAX_DECOMPRESSED, &sec, &sec_len, &owned, why) != 0) return KERR_CORRUPT_MESSAGE;
    kp_record_iter it;
    kp_records_begin(&it, sec, sec_len, b->records_count);
    kp_record *recs = NULL;
    int32_t n = 0, cap = 0, errors = 0;
    bool renumber = false, bad_time = false;
    int64_t now = clk_now_ms();
    int16_t code = 0;
    char msg[256];
    kp_record rec;
    int rc;
    while ((rc = kp_records_next(&it, &rec, why)) == 1) {
        XGROW(recs, cap, n + 1, 64);
        int32_t index = n;
        recs[n++] = rec;
        if (rec.offset_delta != index) renumber = true; /* Kafka rewrites such batches rather than refusing them */
        if (t->compact && !rec.key) {
            snprintf(msg, sizeof msg, "Compacted topic cannot accept message without key in topic partition %s-%d",
                     t->name, p->index);
            fn(ctx, index, msg);
            errors++;
            continue;
        }
        int64_t ts = kp_ts_add(b->base_timestamp, rec.timestamp_delta);
        if (t->log_append_time || ts == -1) continue; /* -1: NO_TIMESTAMP, which Kafka lets through */
        int64_t diff = sat_sub_i64(now, ts); /* any ts: a far past one is as far out of the window */
        if (diff > t->ts_before_ms || (diff < 0 && -diff > t->ts_after_ms)) {
            snprintf(msg, sizeof msg,
                     "Timestamp %lld of message with offset %d is out of range. The timestamp should be within "
                     "[%lld, %lld]",
                     (long long)ts, rec.offset_delta, (long long)(now - t->ts_before_ms),
                     (long long)sat_add_i64(now, t->ts_after_ms));
            fn(ctx, index, msg);
            errors++;
            bad_time = true;
        }
    }
    if (rc < 0) {
        code = KERR_INVALID_RECORD;
    } else if (errors) {
        /* Kafka's processRecordErrors: one timestamp error makes the whole batch INVALID_TIMESTAMP */
        code = bad_time ? KERR_INVALID_TIMESTAMP : KERR_INVALID_RECORD;
        *why = bad_time ? "One or more records have been rejected due to invalid timestamp"
                        : "One or more records have been rejected due to record errors";
    } else if (renumber || (t->codec >= 0 && t->codec != kp_batch_codec(b))) {
        int codec = t->codec >= 0 ? t->codec : kp_batch_codec(b);
        if (kp_batch_rebuild(b, codec, recs, n, true, -1, &out->batch, &out->size, why) != 0) code = KERR_CORRUPT_MESSAGE;
    }
    free(recs);
    free(owned);
    return code;
}
