/*
 * validate.h (internal to topic/): the record pass of validate.c on a snapshot of what it reads
 * from the topic and the clock, so that it can run where no broker state may be touched.
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

/*
 * The pass itself (topic_check_records), within cfg->limit. Touches nothing but its
 * arguments: safe on a worker thread.
 */
int16_t check_run(const check_cfg *cfg, const kp_batch *b, topic_checked *out, topic_record_error_fn fn, void *ctx,
                  const char **why);

#endif
