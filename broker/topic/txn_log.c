/*
 * Transactions as the log sees them (Kafka's ProducerStateManager and transaction index): which
 * transactions are open on a partition, the last stable offset they hold down, the markers that
 * decide them, and the aborted index a read_committed fetch reports.
 */
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "kp_batch.h"
#include "kp_errors.h"
#include "kp_mem.h"
#include "log.h"
#include "srv.h"
#include "topic.h"

int64_t topic_lso(const partition *p) {
    int64_t lso = p->hw;
    for (int i = 0; i < p->ntxns; i++)
        if (p->txns[i].first_offset < lso) lso = p->txns[i].first_offset;
    return lso < p->log_start ? p->log_start : lso;
}

txn_open_entry *topic_txn_open(partition *p, int64_t producer_id) {
    for (int i = 0; i < p->ntxns; i++)
        if (p->txns[i].producer_id == producer_id && p->txns[i].marker_offset < 0) return &p->txns[i];
    return NULL;
}

static txn_open_entry *add_entry(partition *p, int64_t producer_id, int64_t first_offset) {
    XGROW(p->txns, p->cap_txns, p->ntxns + 1, 2);
    txn_open_entry *e = &p->txns[p->ntxns++];
    *e = (txn_open_entry){producer_id, first_offset, -1};
    return e;
}

/* Kafka's lastStableOffset(completedTxn): where the next undecided transaction of another producer starts. */
static int64_t lso_after(const partition *p, int64_t producer_id, int64_t marker_offset) {
    int64_t lso = -1;
    for (int i = 0; i < p->ntxns; i++) {
        const txn_open_entry *e = &p->txns[i];
        if (e->producer_id != producer_id && e->marker_offset < 0 && (lso < 0 || e->first_offset < lso))
            lso = e->first_offset;
    }
    return lso < 0 ? marker_offset + 1 : lso;
}

int16_t topic_append_marker(srv *s, partition *p, int64_t producer_id, int16_t epoch, bool commit,
                            int32_t coordinator_epoch, const char **why) {
    topic *t = p->topic;
    uint8_t batch[KP_MARKER_SIZE];
    int64_t ts = clk_now_ms();
    kp_batch_write_marker(batch, producer_id, epoch, ts, commit, coordinator_epoch);
    int64_t at = p->end;
    kp_batch_patch(batch, at, p->leader_epoch);
    if (t->log_append_time) kp_batch_set_log_append_time(batch, sizeof batch, ts);
    stor_batch_meta m = {
        .base_offset = at,
        .last_offset = at,
        .max_timestamp = ts,
        .producer_id = producer_id,
        .producer_epoch = epoch,
        .base_sequence = -1,
        .last_sequence = -1,
        .records_count = 1,
    };
    if (stor_batch_append(s->st, t->id, p->index, &m, batch, sizeof batch) != 0) {
        *why = stor_errmsg(s->st);
        return KERR_KAFKA_STORAGE_ERROR;
    }
    txn_open_entry *e = topic_txn_open(p, producer_id);
    if (e) {
        if (!commit) {
            stor_aborted a = {producer_id, e->first_offset, at, lso_after(p, producer_id, at)};
            if (stor_txn_aborted_put(s->st, t->id, p->index, &a) != 0) {
                *why = stor_errmsg(s->st);
                return KERR_KAFKA_STORAGE_ERROR;
            }
            p->last_abort_offset = at;
        }
        /* the marker's batch row closes it in storage: a fold past it finds it decided */
        e->marker_offset = at;
    }
    /* the marker's epoch is the producer's from now on; sequences go on (Kafka's appendEndTxnMarker) */
    producer_state *ps = topic_producer(p, producer_id, true);
    if (ps->epoch != epoch) ps->nbatches = 0;
    ps->epoch = epoch;
    p->end = at + 1;
    topic_mark_dirty(s, p);
    t->bytes_in += sizeof batch;
    return 0;
}

void topic_txn_settle(partition *p) {
    int k = 0;
    for (int i = 0; i < p->ntxns; i++)
        if (p->txns[i].marker_offset < 0 || p->txns[i].marker_offset >= p->hw) p->txns[k++] = p->txns[i];
    p->ntxns = k;
}

typedef struct aborted_walk {
    int64_t upper;
    topic_aborted_fn fn;
    void *ctx;
} aborted_walk;

static bool aborted_one(void *ctx, const stor_aborted *a) {
    aborted_walk *w = ctx;
    if (a->first_offset < w->upper) w->fn(w->ctx, a->producer_id, a->first_offset);
    /* later entries were decided after every transaction below upper: none of them can reach back */
    return a->lso < w->upper;
}

int topic_aborted_read(srv *s, partition *p, int64_t from, int64_t upper, topic_aborted_fn fn, void *ctx) {
    if (p->last_abort_offset < from || upper <= from) return 0; /* the common case: no seek at all */
    aborted_walk w = {upper, fn, ctx};
    return stor_txn_aborted_read(s->st, p->topic->id, p->index, from, aborted_one, &w);
}

void topic_txn_load_open(void *ctx, int64_t topic_id, int32_t index, int64_t producer_id, int64_t first_offset) {
    topic *t = topic_find_id(ctx, topic_id);
    if (!t || index < 0 || index >= t->nparts) return;
    add_entry(&t->parts[index], producer_id, first_offset);
}

static void load_last_abort(void *ctx, int64_t topic_id, int32_t index, int64_t last_offset) {
    topic *t = topic_find_id(ctx, topic_id);
    if (!t || index < 0 || index >= t->nparts) return;
    t->parts[index].last_abort_offset = last_offset;
}

int topic_txn_load(srv *s) {
    return stor_txn_aborted_last(s->st, load_last_abort, s);
}

/*
 * A transactional batch is appended at first_offset: it opens the producer's transaction here if
 * none is. Nothing of its own is stored: the batch row says it is transactional, and the
 * producer state folded from the rows finds the transaction open (stor_producers.c).
 */
void topic_txn_begin(partition *p, int64_t producer_id, int64_t first_offset) {
    if (!topic_txn_open(p, producer_id)) add_entry(p, producer_id, first_offset);
}

/* A commit of appends failed: transactions the lost batches opened are gone with them. */
void topic_txn_rollback(partition *p) {
    int k = 0;
    for (int i = 0; i < p->ntxns; i++) {
        if (p->txns[i].first_offset >= p->end) continue;
        if (p->txns[i].marker_offset >= p->end) p->txns[i].marker_offset = -1;
        p->txns[k++] = p->txns[i];
    }
    p->ntxns = k;
}

