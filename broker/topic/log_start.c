/*
 * The log start offset: the one way it moves forward, whoever moves it (retention, DeleteRecords),
 * so that storage (the stored offset and the batches wholly below it) and the partition in memory
 * never disagree. DeleteRecords' rules sit here too because they are the log's policy, not the
 * handler's: what Kafka's leader checks before it raises a log start offset.
 */
#include <stdio.h>
#include <string.h>

#include "kp_errors.h"
#include "srv.h"
#include "topic.h"

int topic_advance_log_start(srv *s, partition *p, int64_t to) {
    if (to <= p->log_start) return 0;
    if (stor_log_start_set(s->st, p->topic->id, p->index, to) < 0) return -1;
    p->log_start = to;
    return 0;
}

/* Kafka refuses to delete records of a topic whose cleanup.policy lacks "delete" (compact only). */
static bool deletion_allowed(const srv *s, const topic *t) {
    bool is_default;
    const char *policy = topic_config_value(s, t, "cleanup.policy", &is_default);
    return !policy || strstr(policy, "delete") != NULL;
}

int16_t topic_delete_records(srv *s, partition *p, int64_t offset, int64_t *low, char *why, size_t n) {
    *low = p->log_start;
    if (!deletion_allowed(s, p->topic)) {
        snprintf(why, n, "%s-%d: its cleanup.policy has no 'delete', so records are not deleted", p->topic->name,
                 p->index);
        return KERR_POLICY_VIOLATION;
    }
    int64_t to = offset == -1 ? p->hw : offset;
    if (to < 0) {
        snprintf(why, n, "%s-%d: offset %lld is neither an offset nor -1 (the high watermark)", p->topic->name,
                 p->index, (long long)to);
        return KERR_OFFSET_OUT_OF_RANGE;
    }
    /* only what consumers may already read (below the high watermark) can go */
    if (to > p->hw) {
        snprintf(why, n, "%s-%d: offset %lld is past the high watermark %lld; only records consumers can read may "
                 "be deleted", p->topic->name, p->index, (long long)to, (long long)p->hw);
        return KERR_OFFSET_OUT_OF_RANGE;
    }
    if (topic_advance_log_start(s, p, to) != 0) {
        snprintf(why, n, "storing the log start offset of %s-%d failed: %s", p->topic->name, p->index,
                 stor_errmsg(s->st));
        return KERR_KAFKA_STORAGE_ERROR;
    }
    *low = p->log_start;
    return 0;
}
