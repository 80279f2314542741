/*
 * ListOffsets by time, answered with a record, as Kafka does. Storage's batch index (the first
 * batch whose max timestamp reaches the target: Kafka's time index) only says where to start;
 * the records from there on are read for the first whose own timestamp reaches the target at or
 * past the log start (LogSegment.findOffsetByTimestamp). Answering the batch instead made
 * consumers that seek by time replay up to a whole batch, and after DeleteRecords inside a batch
 * it answered an offset below the log start (issue 30, librdkafka 0054 and 0081).
 *
 * MAX_TIMESTAMP (-3, KIP-734) answers the first record that carries the partition's largest
 * timestamp, not its batch's last offset (KAFKA-16310, Kafka 3.8 and later).
 *
 * Under LogAppendTime every record of a batch carries the batch's max timestamp, as Kafka's
 * record view of such a batch does. Control batches take part, as they do in Kafka's scan.
 */
#include "topic.h"

#include <stdlib.h>

#include "kp_records.h"
#include "log.h"

typedef struct time_scan {
    int64_t target, log_start;
    int64_t offset, timestamp;
    int32_t leader_epoch;
    int found;          /* 1 found, 0 not yet, -1 a stored batch could not be read */
    const char *why;
} time_scan;

static bool scan_batch(void *ctx, const stor_batch_meta *m, const void *data, size_t len) {
    time_scan *sc = ctx;
    if (m->max_timestamp < sc->target || m->last_offset < sc->log_start) return true;
    kp_batch b;
    size_t at = 0;
    if (kp_batch_next(data, len, &at, &b, &sc->why) != 1 || at != len) {
        sc->found = -1;
        if (!sc->why) sc->why = "a stored batch does not parse";
        return false;
    }
    const uint8_t *sec;
    size_t sec_len;
    uint8_t *owned;
    if (kp_batch_records(&b, TOPIC_MAX_DECOMPRESSED, &sec, &sec_len, &owned, &sc->why) != 0) {
        sc->found = -1;
        return false;
    }
    bool append_time = b.attributes & KP_ATTR_LOG_APPEND_TIME;
    kp_record_iter it;
    kp_records_begin(&it, sec, sec_len, b.records_count);
    kp_record rec;
    int rc;
    while ((rc = kp_records_next(&it, &rec, &sc->why)) == 1) {
        int64_t offset = b.base_offset + rec.offset_delta;
        int64_t ts = append_time ? b.max_timestamp : kp_ts_add(b.base_timestamp, rec.timestamp_delta);
        if (ts >= sc->target && offset >= sc->log_start) {
            sc->offset = offset;
            sc->timestamp = ts;
            sc->leader_epoch = b.leader_epoch;
            sc->found = 1;
            break;
        }
    }
    free(owned);
    if (rc < 0) sc->found = -1;
    return sc->found == 0;
}

/* The first record at or after the batch holding `from` whose timestamp reaches target, below upto. */
static int scan(srv *s, partition *p, int64_t from, int64_t target, int64_t upto, topic_time_hit *hit) {
    time_scan sc = {.target = target, .log_start = p->log_start};
    if (from < p->log_start) from = p->log_start;
    if (stor_batch_read(s->st, p->topic->id, p->index, from, upto, scan_batch, &sc) != 0) {
        log_error("%s-%d: reading batches for a time lookup failed: %s", p->topic->name, p->index,
                  stor_errmsg(s->st));
        return -1;
    }
    if (sc.found < 0) {
        log_error("%s-%d: a stored batch at or after offset %lld cannot be read for a time lookup: %s",
                  p->topic->name, p->index, (long long)from, sc.why ? sc.why : "?");
        return -1;
    }
    if (!sc.found || sc.offset >= upto) return 0;
    *hit = (topic_time_hit){sc.offset, sc.timestamp, sc.leader_epoch};
    return 1;
}

int topic_offset_for_time(srv *s, partition *p, int64_t ts, int64_t upto, topic_time_hit *hit) {
    int64_t start, batch_ts;
    int rc = stor_offset_for_time(s->st, p->topic->id, p->index, ts, &start, &batch_ts);
    if (rc <= 0) return rc;
    return scan(s, p, start, ts, upto, hit);
}

int topic_offset_of_max_timestamp(srv *s, partition *p, int64_t upto, topic_time_hit *hit) {
    int64_t last, max_ts;
    int rc = stor_max_timestamp(s->st, p->topic->id, p->index, &last, &max_ts);
    if (rc <= 0) return rc;
    return scan(s, p, last, max_ts, upto, hit);
}
