/*
 * The produce path below the request: size limit, idempotent-producer
 * sequence checks (Kafka's ProducerStateEntry, last 5 batches), offset
 * assignment, LogAppendTime, and the append to storage. Whether a
 * transactional batch belongs to a transaction that added this partition is
 * the coordinator's check, made by the caller (txn_verify_produce).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "kp_batch.h"
#include "kp_errors.h"
#include "kp_mem.h"
#include "srv.h"
#include "topic.h"

producer_state *topic_producer(partition *p, int64_t producer_id, bool create) {
    for (int i = 0; i < p->nproducers; i++)
        if (p->producers[i].producer_id == producer_id) return &p->producers[i];
    if (!create) return NULL;
    XGROW(p->producers, p->cap_producers, p->nproducers + 1, 4);
    producer_state *ps = &p->producers[p->nproducers++];
    memset(ps, 0, sizeof *ps);
    ps->producer_id = producer_id;
    ps->epoch = -1;
    return ps;
}

void topic_producer_record(producer_state *ps, int16_t epoch, int32_t first_seq, int32_t last_seq, int64_t first_offset,
                           int64_t last_offset, int64_t timestamp) {
    if (epoch != ps->epoch) ps->nbatches = 0; /* a new epoch starts a new sequence history */
    ps->epoch = epoch;
    if (ps->nbatches == PRODUCER_BATCH_CACHE) {
        memmove(ps->batches, ps->batches + 1, sizeof(ps->batches[0]) * (PRODUCER_BATCH_CACHE - 1));
        ps->nbatches--;
    }
    ps->batches[ps->nbatches++] = (producer_batch){first_seq, last_seq, first_offset, last_offset, timestamp};
}

/* Sequence numbers wrap from INT32_MAX to 0 (DefaultRecordBatch.incrementSequence). */
static int32_t seq_add(int32_t seq, int32_t delta) {
    if (seq > INT32_MAX - delta) return delta - (INT32_MAX - seq) - 1;
    return seq + delta;
}

static int16_t check_sequence(const producer_state *ps, const kp_batch *b, int32_t last_seq, int64_t *dup_offset,
                              const char **why) {
    if (b->producer_epoch < ps->epoch) {
        *why = "producer epoch is older than the partition's current epoch";
        return KERR_INVALID_PRODUCER_EPOCH;
    }
    if (b->producer_epoch > ps->epoch || ps->nbatches == 0) {
        if (b->base_sequence != 0 && ps->nbatches > 0) {
            *why = "a new producer epoch must start at sequence 0";
            return KERR_OUT_OF_ORDER_SEQUENCE_NUMBER;
        }
        return 0;
    }
    for (int i = 0; i < ps->nbatches; i++)
        if (ps->batches[i].first_seq == b->base_sequence && ps->batches[i].last_seq == last_seq) {
            *dup_offset = ps->batches[i].first_offset;
            return 0;
        }
    int32_t expect = seq_add(ps->batches[ps->nbatches - 1].last_seq, 1);
    if (b->base_sequence != expect) {
        *why = "sequence gap: the batch does not follow the last acknowledged sequence";
        return KERR_OUT_OF_ORDER_SEQUENCE_NUMBER;
    }
    return 0;
}

int16_t topic_append(srv *s, partition *p, uint8_t *batch, size_t size, const kp_batch *b, int64_t *base_offset,
                     int64_t *append_time, const char **why) {
    topic *t = p->topic;
    *append_time = -1;
    if ((int64_t)size > t->max_message_bytes) {
        *why = "batch is larger than the topic's max.message.bytes";
        return KERR_MESSAGE_TOO_LARGE;
    }
    bool transactional = (b->attributes & KP_ATTR_TRANSACTIONAL) != 0;
    if (!transactional && b->producer_id >= 0 && topic_txn_open(p, b->producer_id)) {
        *why = "a non-transactional batch from a producer whose transaction is open on this partition";
        return KERR_INVALID_TXN_STATE;
    }
    producer_state *ps = NULL;
    int32_t last_seq = -1;
    if (b->producer_id >= 0) {
        last_seq = seq_add(b->base_sequence, b->last_offset_delta);
        ps = topic_producer(p, b->producer_id, false);
        if (ps) {
            int64_t dup = -1;
            int16_t code = check_sequence(ps, b, last_seq, &dup, why);
            if (code) return code;
            if (dup >= 0) {
                *base_offset = dup; /* already appended: acknowledge with the original offsets */
                return 0;
            }
        }
    }
    int64_t free_bytes;
    if (!topic_storage_room(s, size, &free_bytes)) {
        static char msg[512]; /* the loop is single-threaded; the caller logs it at once */
        snprintf(msg, sizeof msg, "storage is full: %lld bytes free for %s, and the batch of %zu bytes would leave "
                 "less than storage.min.free.bytes=%lld; writes resume once there is room (delete topics or records, "
                 "or free disk)", (long long)free_bytes, s->cfg->data_dir, size, (long long)s->cfg->storage_min_free_bytes);
        *why = msg;
        return KERR_KAFKA_STORAGE_ERROR;
    }
    int64_t base = p->end;
    kp_batch_patch(batch, base, p->leader_epoch);
    int64_t max_ts = b->max_timestamp;
    if (t->log_append_time) {
        max_ts = clk_now_ms();
        kp_batch_set_log_append_time(batch, size, max_ts);
        *append_time = max_ts;
    }
    stor_batch_meta m = {
        .base_offset = base,
        .last_offset = base + b->last_offset_delta,
        .max_timestamp = max_ts,
        .producer_id = b->producer_id,
        .producer_epoch = b->producer_epoch,
        .base_sequence = b->base_sequence,
        .last_sequence = last_seq,
        .records_count = b->records_count,
        /* what a fold of the rows takes for a transaction's data (stor_producers.c fold_apply) */
        .transactional = transactional && !(b->attributes & KP_ATTR_CONTROL) && b->producer_id >= 0 &&
                         b->base_sequence >= 0,
    };
    if (stor_batch_append(s->st, t->id, p->index, &m, batch, size) != 0) {
        *why = stor_errmsg(s->st);
        return KERR_KAFKA_STORAGE_ERROR;
    }
    if (m.transactional) topic_txn_begin(p, b->producer_id, base);
    p->end = m.last_offset + 1;
    if (b->producer_id >= 0) {
        if (!ps) ps = topic_producer(p, b->producer_id, true);
        topic_producer_record(ps, b->producer_epoch, b->base_sequence, last_seq, base, m.last_offset, max_ts);
    }
    topic_mark_dirty(s, p);
    t->bytes_in += size;
    t->records_in += (uint64_t)(b->records_count > 0 ? b->records_count : 0);
    *base_offset = base;
    return 0;
}
