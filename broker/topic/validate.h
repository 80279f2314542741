/*
 * validate.h (internal to topic/): the record pass of validate.c on a snapshot of what it reads
 * from the topic, so that validate_async.c can run it on libuv's threadpool, where no broker
 * state may be touched.
 */
#ifndef TOPIC_VALIDATE_H
#define TOPIC_VALIDATE_H

#include "topic.h"

/* What the pass reads of the topic and the clock, copied on the loop. */
typedef struct check_cfg {
    bool compact, log_append_time;
    int codec;                         /* compression.type as a batch codec; -1: "producer" */
    int64_t ts_before_ms, ts_after_ms; /* the CreateTime window (INT64_MAX: unbounded) */
    size_t limit;                      /* topic_max_decompressed */
    int64_t now_ms;
    const char *topic;                 /* for the record errors' messages */
    int32_t partition;
} check_cfg;

void check_cfg_of(const partition *p, check_cfg *cfg);

/* check_run with inline set: the pass would cost more than the loop may spend (validate_async.c). */
#define CHECK_OVER_BUDGET (-1)

/*
 * The pass itself (topic_check_records). With inline, a batch whose pass would cost more than
 * about a millisecond returns CHECK_OVER_BUDGET, having done at most a bounded trial
 * decompression; without, it runs whatever the size, within cfg->limit. Touches nothing but
 * its arguments: safe on a worker thread.
 */
int16_t check_run(const check_cfg *cfg, const kp_batch *b, bool inline_only, topic_checked *out,
                  topic_record_error_fn fn, void *ctx, const char **why);

#endif
