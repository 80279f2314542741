/*
 * The record pass of Kafka's LogValidator, for the topic configs that need one: a compacted
 * topic refuses records without a key, message.timestamp.before/after.max.ms (and MSK's
 * message.timestamp.difference.max.ms) refuse CreateTime timestamps outside the window, and a
 * compression.type other than "producer" rebuilds the batch in that codec. Kafka looks inside
 * every batch; we read the records of every compressed batch (so a payload that does not decode
 * is refused, not stored), and of an uncompressed one only when one of these applies, so a topic
 * on the defaults appends uncompressed batches untouched. The work is bounded before it starts:
 * the header's record count against what the records may decompress to (a multiple of
 * max.message.bytes), decompression stopped at that size, and records read one at a time and
 * copied straight into the rebuilt batch, never held as a list.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "clock.h"
#include "kp_errors.h"
#include "kp_records.h"
#include "srv.h"
#include "topic.h"
#include "validate.h"

/*
 * What the loop spends on one batch's pass before it goes to the threadpool instead
 * (validate_async.c): measured on the shared 2-core machine (docs/benchmarks.md, "The record
 * pass off the loop"), a pass costs about 60 ns a record (100 with recompression), decompression
 * 0.3 (zstd) to 2 (gzip) ms per MB and gzip compression about 20 ms per MB; these bounds keep
 * one inline pass near a millisecond. A batch within them is checked at once: the hop to a
 * worker and back costs more than its pass.
 */
#define INLINE_RECORDS 8192
#define INLINE_BYTES ((size_t)256 << 10)
#define INLINE_GZIP_BYTES ((size_t)32 << 10)

static bool needs_pass(const check_cfg *c, const kp_batch *b) {
    bool window = !c->log_append_time && (c->ts_before_ms != INT64_MAX || c->ts_after_ms != INT64_MAX);
    return window || c->compact || (c->codec >= 0 && c->codec != kp_batch_codec(b));
}

void check_cfg_of(const partition *p, check_cfg *cfg) {
    const topic *t = p->topic;
    *cfg = (check_cfg){
        .compact = t->compact,
        .log_append_time = t->log_append_time,
        .codec = t->codec,
        .ts_before_ms = t->ts_before_ms,
        .ts_after_ms = t->ts_after_ms,
        .limit = topic_max_decompressed(t),
        .now_ms = clk_now_ms(),
        .topic = t->name,
        .partition = p->index,
    };
}

size_t topic_max_decompressed(const topic *t) {
    size_t mmb = t->max_message_bytes > 0 ? (size_t)t->max_message_bytes : 0;
    size_t limit = mmb > TOPIC_MAX_DECOMPRESSED / TOPIC_DECOMPRESSED_FACTOR ? TOPIC_MAX_DECOMPRESSED
                                                                            : mmb * TOPIC_DECOMPRESSED_FACTOR;
    return limit < TOPIC_MIN_DECOMPRESSED ? TOPIC_MIN_DECOMPRESSED : limit;
}

/* Every record of a section, read and dropped: whether the section holds what its header says. */
static int read_all(const uint8_t *sec, size_t len, int32_t count, const char **why) {
    kp_record_iter it;
    kp_records_begin(&it, sec, len, count);
    kp_record rec;
    int rc;
    while ((rc = kp_records_next(&it, &rec, why)) == 1) {
    }
    return rc;
}

static const char TOO_LARGE[] = "the batch's records decompress to more than the topic allows (32 x "
                                "max.message.bytes, at least 16 MiB)";

/*
 * The section's records, each copied into a batch in codec as they are read; MESSAGE_TOO_LARGE
 * once the records written pass limit (renumbered offset deltas can make them longer).
 */
static int16_t rebuild(const kp_batch *b, const uint8_t *sec, size_t len, int codec, size_t limit, topic_checked *out,
                       const char **why) {
    kp_batch_builder bb;
    kp_builder_begin(&bb, b, codec, true, -1);
    kp_record_iter it;
    kp_records_begin(&it, sec, len, b->records_count);
    kp_record rec;
    while (kp_records_next(&it, &rec, why) == 1) { /* read once already: they all read */
        kp_builder_add(&bb, &rec);
        if (kp_builder_len(&bb) > limit) {
            kp_builder_discard(&bb);
            *why = TOO_LARGE;
            return KERR_MESSAGE_TOO_LARGE;
        }
    }
    return kp_builder_finish(&bb, &out->batch, &out->size, why) == 0 ? 0 : KERR_CORRUPT_MESSAGE;
}

int16_t check_run(const check_cfg *t, const kp_batch *b, bool inline_only, topic_checked *out,
                  topic_record_error_fn fn, void *ctx, const char **why) {
    out->batch = NULL;
    out->size = 0;
    bool pass = needs_pass(t, b);
    int from = kp_batch_codec(b);
    if (!pass && from == KP_CODEC_NONE) return 0;
    int to = t->codec >= 0 ? t->codec : from;
    /* the batch's own size and record count say most of the cost before a byte is read */
    if (inline_only && (b->records_count > INLINE_RECORDS || b->size > INLINE_BYTES)) return CHECK_OVER_BUDGET;
    const uint8_t *sec;
    size_t sec_len;
    uint8_t *owned;
    size_t limit = t->limit;
    /* inline, a trial: decompression stops at INLINE_BYTES, and the threadpool does it again in full */
    int rc = kp_batch_records(b, inline_only && INLINE_BYTES < limit ? INLINE_BYTES : limit, &sec, &sec_len, &owned,
                              why);
    if (rc == KP_TOO_LARGE) {
        if (inline_only && INLINE_BYTES < limit) return CHECK_OVER_BUDGET;
        *why = TOO_LARGE;
        return KERR_MESSAGE_TOO_LARGE;
    }
    if (rc != 0) return KERR_CORRUPT_MESSAGE;
    if (inline_only && to != from && to == KP_CODEC_GZIP && sec_len > INLINE_GZIP_BYTES) {
        free(owned);
        return CHECK_OVER_BUDGET;
    }
    if (!pass) {
        /*
         * A compressed batch on a topic that keeps it as produced: Kafka's LogValidator still reads
         * every record of it (validateMessagesAndAssignOffsetsCompressed, skipKeyValueIterator),
         * so a payload that does not decompress, or does not hold the records its header says, is
         * refused rather than stored to fail every consumer.
         */
        rc = read_all(sec, sec_len, b->records_count, why);
        free(owned);
        return rc == 0 ? 0 : KERR_INVALID_RECORD;
    }
    /*
     * One record at a time, as Kafka's streaming iterator reads them: no struct per record is
     * kept. A batch that changes codec is written as it is read; one that only needs its offset
     * deltas renumbered is written in a second pass once the checks have passed.
     */
    bool recode = to != from, building = recode;
    kp_batch_builder bb;
    if (building) kp_builder_begin(&bb, b, to, true, -1);
    kp_record_iter it;
    kp_records_begin(&it, sec, sec_len, b->records_count);
    int32_t n = 0, errors = 0;
    bool renumber = false, bad_time = false;
    int64_t now = t->now_ms;
    int16_t code = 0;
    char msg[256];
    kp_record rec;
    while ((rc = kp_records_next(&it, &rec, why)) == 1) {
        int32_t index = n++;
        if (rec.offset_delta != index) renumber = true; /* Kafka rewrites such batches rather than refusing them */
        bool bad = false;
        if (t->compact && !rec.key) {
            snprintf(msg, sizeof msg, "Compacted topic cannot accept message without key in topic partition %s-%d",
                     t->topic, t->partition);
            bad = true;
        } else {
            int64_t ts = kp_ts_add(b->base_timestamp, rec.timestamp_delta);
            int64_t diff = sat_sub_i64(now, ts); /* any ts: a far past one is as far out of the window */
            /* -1: NO_TIMESTAMP, which Kafka lets through */
            if (!t->log_append_time && ts != -1 && (diff > t->ts_before_ms || (diff < 0 && -diff > t->ts_after_ms))) {
                snprintf(msg, sizeof msg,
                         "Timestamp %lld of message with offset %d is out of range. The timestamp should be within "
                         "[%lld, %lld]",
                         (long long)ts, rec.offset_delta, (long long)sat_sub_i64(now, t->ts_before_ms),
                         (long long)sat_add_i64(now, t->ts_after_ms));
                bad = bad_time = true;
            }
        }
        if (bad) {
            /*
             * Kafka lists every refused record; past TOPIC_MAX_RECORD_ERRORS the rest are only
             * counted, so a batch of millions of keyless records cannot grow the answer without
             * bound. A producer gives records without an entry the batch's error (Kafka's
             * Sender.failBatch).
             */
            if (errors < TOPIC_MAX_RECORD_ERRORS) fn(ctx, index, msg);
            errors++;
            if (building) {
                kp_builder_discard(&bb);
                building = false;
            }
        } else if (building) {
            kp_builder_add(&bb, &rec);
            if (kp_builder_len(&bb) > limit) {
                *why = TOO_LARGE;
                code = KERR_MESSAGE_TOO_LARGE;
                break;
            }
        }
    }
    if (code) {
        /* the rebuilt batch outgrew the limit */
    } else if (rc < 0) {
        code = KERR_INVALID_RECORD;
    } else if (errors) {
        /* Kafka's processRecordErrors: one timestamp error makes the whole batch INVALID_TIMESTAMP */
        code = bad_time ? KERR_INVALID_TIMESTAMP : KERR_INVALID_RECORD;
        *why = bad_time ? "One or more records have been rejected due to invalid timestamp"
                        : "One or more records have been rejected due to record errors";
    } else if (building) {
        if (kp_builder_finish(&bb, &out->batch, &out->size, why) != 0) code = KERR_CORRUPT_MESSAGE;
        building = false;
    } else if (renumber) {
        code = rebuild(b, sec, sec_len, to, limit, out, why);
    }
    if (building) kp_builder_discard(&bb);
    free(owned);
    return code;
}

int16_t topic_check_records(srv *s, partition *p, const kp_batch *b, topic_checked *out, topic_record_error_fn fn,
                            void *ctx, const char **why) {
    (void)s;
    check_cfg cfg;
    check_cfg_of(p, &cfg);
    return check_run(&cfg, b, false, out, fn, ctx, why);
}
