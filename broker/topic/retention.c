/*
 * Background retention: retention.ms drops batches whose newest record is
 * older than the limit, retention.bytes drops the oldest batches while a
 * partition is over its limit. Like Kafka, whole units go (batches here,
 * segments there) and the log start offset moves forward (log_start.c, the
 * same path DeleteRecords takes).
 */
#include "clock.h"
#include "log.h"
#include "srv.h"
#include "topic.h"

static void enforce_partition(srv *s, topic *t, partition *p, int64_t now) {
    int64_t old_start = p->log_start;
    int64_t bytes = t->retention_bytes >= 0 ? stor_partition_bytes(s->st, t->id, p->index) : 0;
    for (;;) {
        stor_batch_meta m;
        if (stor_oldest_batch(s->st, t->id, p->index, &m) != 1) break;
        bool too_old = t->retention_ms >= 0 && m.max_timestamp < now - t->retention_ms;
        bool too_big = t->retention_bytes >= 0 && bytes > t->retention_bytes;
        /* never drop what consumers may not have seen committed */
        if ((!too_old && !too_big) || m.last_offset >= p->hw) break;
        /* asking stor_partition_bytes again would sum the rows past the producer snapshot each time */
        int64_t gone = t->retention_bytes >= 0 ? stor_bytes_below(s->st, t->id, p->index, m.last_offset + 1) : 0;
        if (gone < 0 || topic_advance_log_start(s, p, m.last_offset + 1) != 0) {
            log_error("retention of %s-%d: %s", t->name, p->index, stor_errmsg(s->st));
            break;
        }
        bytes -= gone;
        if (too_big && gone <= 0) break;
    }
    if (p->log_start != old_start)
        log_info("retention: %s-%d log start offset %lld -> %lld", t->name, p->index, (long long)old_start,
                 (long long)p->log_start);
}

void topic_enforce_retention(srv *s) {
    int64_t now = clk_now_ms();
    for (topic *t = s->topics; t; t = t->next)
        if (t->policy_delete) /* cleanup.policy=compact alone keeps every key's newest record forever */
            for (int32_t i = 0; i < t->nparts; i++) enforce_partition(s, t, &t->parts[i], now);
}
