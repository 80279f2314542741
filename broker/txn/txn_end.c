/*
 * Deciding a transaction: PrepareCommit/PrepareAbort, the markers on every partition it wrote
 * to, its offsets materialised or dropped, then CompleteCommit/CompleteAbort. Also the members
 * of a transaction (partitions, groups, pending offsets) and how they are stored.
 */
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "group/group.h"
#include "kp_mem.h"
#include "log.h"
#include "srv.h"
#include "topic/topic.h"
#include "txn_int.h"

void txn_part_add(txn *t, int64_t topic_id, int32_t partition) {
    for (int i = 0; i < t->nparts; i++)
        if (t->parts[i].topic_id == topic_id && t->parts[i].partition == partition) return;
    XGROW(t->parts, t->cap_parts, t->nparts + 1, 4);
    t->parts[t->nparts++] = (txn_partition){topic_id, partition};
}

void txn_group_add(txn *t, const char *group_id) {
    for (int i = 0; i < t->ngroups; i++)
        if (strcmp(t->groups[i], group_id) == 0) return;
    char **n = xrealloc(t->groups, sizeof(*n) * (size_t)(t->ngroups + 1));
    t->groups = n;
    t->groups[t->ngroups++] = xstrdup(group_id);
}

txn_offset *txn_offset_slot(txn *t, const char *group, const char *topic, int32_t partition) {
    for (int i = 0; i < t->noffsets; i++) {
        txn_offset *o = &t->offsets[i];
        if (o->partition == partition && strcmp(o->group, group) == 0 && strcmp(o->topic, topic) == 0) return o;
    }
    XGROW(t->offsets, t->cap_offsets, t->noffsets + 1, 8);
    txn_offset *o = &t->offsets[t->noffsets++];
    memset(o, 0, sizeof *o);
    o->group = xstrdup(group);
    o->topic = xstrdup(topic);
    o->partition = partition;
    o->leader_epoch = -1;
    return o;
}

void txn_storage_failed(srv *s, const char *what, const char *id) {
    log_error("storage: %s of transactional id %s failed: %s; the coordinator's state would no longer match what "
              "storage holds, so the broker stops (exit 3) rather than answer from it; a restart reloads it",
              what, id, stor_errmsg(s->st));
    srv_fail_stop(s, 3);
}

void txn_drop_members(srv *s, txn *t) {
    bool stored = t->ngroups > 0 || t->noffsets > 0;
    txn_clear_members(t);
    if (stored && stor_txn_members_clear(s->st, t->id) != 0) txn_storage_failed(s, "clearing the members", t->id);
}

void txn_store(srv *s, txn *t) {
    /* the partitions ride in the row (storage/stor_txns.c): one write per change of the transaction */
    stor_txn_part small[16], *parts = t->nparts <= 16 ? small : xmalloc(sizeof *parts * (size_t)t->nparts);
    for (int i = 0; i < t->nparts; i++) parts[i] = (stor_txn_part){t->parts[i].topic_id, t->parts[i].partition};
    stor_txn st = {
        .transactional_id = t->id,
        .producer_id = t->producer_id,
        .prev_producer_id = t->prev_producer_id,
        .producer_epoch = t->epoch,
        .last_producer_epoch = t->last_epoch,
        .timeout_ms = t->timeout_ms,
        .state = (int32_t)t->state,
        .start_ms = t->start_ms,
        .update_ms = t->update_ms,
        .client_tv = t->client_tv,
        .next_producer_id = t->next_producer_id,
        .parts = parts,
        .nparts = t->nparts,
    };
    if (stor_txn_put(s->st, &st) != 0) txn_storage_failed(s, "storing the state", t->id);
    if (parts != small) free(parts);
}

/* The marker for one partition of the transaction; a partition deleted since is skipped. */
static void write_marker(srv *s, txn *t, const txn_partition *tp, bool commit) {
    topic *tt = topic_find_id(s, tp->topic_id);
    if (!tt || tp->partition >= tt->nparts) return;
    const char *why = NULL;
    if (topic_append_marker(s, &tt->parts[tp->partition], t->producer_id, t->epoch, commit, s->txn->epoch, &why))
        txn_storage_failed(s, commit ? "writing a COMMIT marker" : "writing an ABORT marker", t->id);
}

/* COMMIT: each pending offset a later plain commit did not supersede becomes the group's committed offset. */
static void settle_offsets(srv *s, txn *t, bool commit) {
    for (int i = 0; commit && i < t->noffsets; i++) {
        txn_offset *o = &t->offsets[i];
        if (o->superseded) continue;
        group *g = grp_get_or_create(s, o->group, strlen(o->group));
        grp_offset_put(s, g, o->topic, o->partition, o->offset, o->leader_epoch,
                       (kp_str){o->metadata, o->metadata_len}, -1);
    }
}

void txn_complete(srv *s, txn *t, bool commit) {
    /* the partitions leave the stored row with the Complete state below, in the markers' storage transaction */
    for (int i = 0; i < t->nparts; i++) write_marker(s, t, &t->parts[i], commit);
    settle_offsets(s, t, commit);
    /*
     * Not at info: Kafka logs nothing per completed transaction there (TransactionMarkerChannelManager.scala's
     * "Completed sending transaction markers" is at trace), and here it was a write(2) per
     * transaction, one of its six (issue 37). A timeout's abort keeps its own info line (txn.c).
     */
    log_debug("transactional id %s: %s (producer id %lld epoch %d, %d partition(s), %d offset(s))", t->id,
             commit ? "committed" : "aborted", (long long)t->producer_id, t->epoch, t->nparts, t->noffsets);
    txn_drop_members(s, t);
    txn_set_state(t, commit ? TS_COMPLETE_COMMIT : TS_COMPLETE_ABORT);
    if (t->next_producer_id >= 0) {
        /* TV2 past an exhausted epoch: the markers carry the old id, the producer goes on with the new one (Kafka's prepareComplete) */
        log_info("transactional id %s: epoch %d exhausted: producer id %lld from now on, epoch 0 (previous %lld)",
                 t->id, t->epoch, (long long)t->next_producer_id, (long long)t->producer_id);
        t->prev_producer_id = t->producer_id;
        t->producer_id = t->next_producer_id;
        t->next_producer_id = -1;
        t->last_epoch = t->epoch;
        t->epoch = 0;
    }
    t->update_ms = clk_now_ms();
    txn_store(s, t);
    if (commit) s->metrics.txn_committed++;
    else s->metrics.txn_aborted++;
}

/* ---- transaction.marker.delay.ms: markers one by one, so a test can crash between them ---- */

static bool first_prepared(void *ctx, txn *t) {
    txn **out = ctx;
    if (t->state != TS_PREPARE_COMMIT && t->state != TS_PREPARE_ABORT) return true;
    *out = t;
    return false;
}

static void on_marker_timer(uv_timer_t *h) {
    srv *s = h->data;
    txn *t = NULL;
    txn_each(s, first_prepared, &t);
    if (!t) {
        uv_timer_stop(h);
        return;
    }
    bool commit = t->state == TS_PREPARE_COMMIT;
    if (t->nparts == 0) {
        txn_complete(s, t, commit);
        return;
    }
    txn_partition tp = t->parts[--t->nparts];
    write_marker(s, t, &tp, commit);
    /* the row without that partition, in the marker's storage transaction: a restart writes only the others */
    txn_store(s, t);
}

static void arm_marker_timer(srv *s) {
    txn_coord *c = s->txn;
    if (!c->marker_timer) {
        c->marker_timer = xmalloc(sizeof *c->marker_timer);
        uv_timer_init(s->loop, c->marker_timer);
        c->marker_timer->data = s;
    }
    if (!uv_is_active((uv_handle_t *)c->marker_timer)) {
        uint64_t d = (uint64_t)s->cfg->transaction_marker_delay_ms;
        uv_timer_start(c->marker_timer, on_marker_timer, d, d);
    }
}

static void free_handle(uv_handle_t *h) { free(h); }

void txn_marker_timer_close(srv *s) {
    txn_coord *c = s->txn;
    if (!c || !c->marker_timer) return;
    uv_timer_stop(c->marker_timer);
    uv_close((uv_handle_t *)c->marker_timer, free_handle);
    c->marker_timer = NULL;
}

/*
 * Prepare{Commit,Abort}, then the markers: now, or one by one with the test delay. Only the
 * delay spreads them over several storage commits, so only then is the Prepare state stored:
 * otherwise the state, the markers and Complete{Commit,Abort} go into the one storage
 * transaction the loop commits after this request (topic/commit.c), where the Complete row
 * would overwrite the Prepare row before any commit, and a crash keeps all of it or none.
 */
void txn_decide(srv *s, txn *t, bool commit) {
    txn_set_state(t, commit ? TS_PREPARE_COMMIT : TS_PREPARE_ABORT);
    t->update_ms = clk_now_ms();
    if (s->cfg->transaction_marker_delay_ms > 0 && !s->stopping) {
        txn_store(s, t);
        arm_marker_timer(s);
    } else {
        txn_complete(s, t, commit);
    }
}

void txn_fence_and_abort(srv *s, txn *t) {
    /* Kafka's prepareFenceProducerEpoch bumps an exhausted 32766 too (the retry then rotates the producer id) */
    if (t->epoch < INT16_MAX) t->epoch++;
    t->last_epoch = -1;
    s->metrics.txn_fenced++;
    txn_decide(s, t, false);
}
