/*
 * The transactional-id registry: lookup, what survives a restart (loading, and finishing a
 * decision whose markers a crash interrupted), producer id blocks, timeouts and expiry.
 */
#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "hash.h"
#include "group/group.h"
#include "kp_mem.h"
#include "log.h"
#include "net/net.h"
#include "srv.h"
#include "topic/topic.h"
#include "txn_int.h"

#define PID_BLOCK 1000

txn *txn_find(srv *s, const char *id, size_t len) {
    txn_coord *c = s->txn;
    for (txn *t = c->buckets[hash_fnv32(id, len) % TXN_BUCKETS]; t; t = t->next)
        if (strlen(t->id) == len && memcmp(t->id, id, len) == 0) return t;
    return NULL;
}

txn *txn_new(srv *s, const char *id, size_t len) {
    txn *t = xcalloc(1, sizeof *t);
    t->id = xstrndup(id, len);
    t->producer_id = t->prev_producer_id = t->next_producer_id = -1;
    t->epoch = t->last_epoch = -1;
    t->start_ms = -1;
    t->update_ms = clk_now_ms();
    txn **b = &s->txn->buckets[hash_fnv32(id, len) % TXN_BUCKETS];
    t->next = *b;
    *b = t;
    s->txn->count++;
    return t;
}

void txn_clear_members(txn *t) {
    for (int i = 0; i < t->ngroups; i++) free(t->groups[i]);
    free(t->groups);
    t->groups = NULL;
    t->ngroups = 0;
    for (int i = 0; i < t->noffsets; i++) {
        free(t->offsets[i].group);
        free(t->offsets[i].topic);
        free(t->offsets[i].metadata);
    }
    t->noffsets = 0;
    t->nparts = 0;
}

static void free_txn(txn *t) {
    txn_clear_members(t);
    free(t->offsets);
    free(t->parts);
    free(t->id);
    free(t);
}

static void unlink_txn(srv *s, txn *t) {
    txn **pp = &s->txn->buckets[hash_fnv32(t->id, strlen(t->id)) % TXN_BUCKETS];
    for (; *pp; pp = &(*pp)->next)
        if (*pp == t) {
            *pp = t->next;
            s->txn->count--;
            return;
        }
}

void txn_each(srv *s, bool (*fn)(void *ctx, txn *t), void *ctx) {
    for (int b = 0; b < TXN_BUCKETS; b++)
        for (txn *t = s->txn->buckets[b], *next; t; t = next) {
            next = t->next;
            if (!fn(ctx, t)) return;
        }
}

const char *txn_state_name(txn_state st) {
    static const char *const names[] = {"Empty",          "Ongoing",       "PrepareCommit", "PrepareAbort",
                                        "CompleteCommit", "CompleteAbort", "Dead"};
    return st <= TS_DEAD ? names[st] : "Unknown";
}

/*
 * For each state, the states an id may enter it from, as Kafka's TransactionState declares them.
 * Kafka's PrepareEpochFence (bump the epoch, then PrepareAbort) has no state here: the epoch is
 * bumped and the abort prepared in one step (txn_fence_and_abort), Ongoing to PrepareAbort. The
 * PrepareAbort rows from Empty, CompleteCommit and CompleteAbort are transaction version 2's
 * (KIP-890: an EndTxn abort when the client is unsure); this coordinator, version 1, never takes
 * them, and Dead is never entered (an expired id is freed at once), but the rows are Kafka's.
 */
#define FROM(st) (1u << (st))
static const unsigned valid_previous[] = {
    [TS_EMPTY] = FROM(TS_EMPTY) | FROM(TS_COMPLETE_COMMIT) | FROM(TS_COMPLETE_ABORT),
    [TS_ONGOING] = FROM(TS_ONGOING) | FROM(TS_EMPTY) | FROM(TS_COMPLETE_COMMIT) | FROM(TS_COMPLETE_ABORT),
    [TS_PREPARE_COMMIT] = FROM(TS_ONGOING),
    [TS_PREPARE_ABORT] = FROM(TS_ONGOING) | FROM(TS_EMPTY) | FROM(TS_COMPLETE_COMMIT) | FROM(TS_COMPLETE_ABORT),
    [TS_COMPLETE_COMMIT] = FROM(TS_PREPARE_COMMIT),
    [TS_COMPLETE_ABORT] = FROM(TS_PREPARE_ABORT),
    [TS_DEAD] = FROM(TS_EMPTY) | FROM(TS_COMPLETE_ABORT) | FROM(TS_COMPLETE_COMMIT),
};
#undef FROM

bool txn_transition_valid(txn_state from, txn_state to) {
    if ((unsigned)from > TS_DEAD || (unsigned)to > TS_DEAD) return false;
    return (valid_previous[to] >> from) & 1u;
}

void txn_set_state(txn *t, txn_state st) {
    assert(txn_transition_valid(t->state, st));
    t->state = st;
}

int16_t txn_check_coordinator(srv *s, req *r, kp_str id) {
    int node = grp_coordinator_for(s, id.p ? id.p : "", id.len > 0 ? (size_t)id.len : 0);
    if (node == r->c->node) return 0;
    req_log_refusal(r, KERR_NOT_COORDINATOR,
                    "transactional id %.*s is coordinated by node %d, the request reached node %d",
                    id.len > 0 ? id.len : 0, id.p, s->nodes[node].id, s->nodes[r->c->node].id);
    return KERR_NOT_COORDINATOR;
}

/* ---- producer ids ---- */

static int64_t setting_int(srv *s, const char *key, int64_t dflt) {
    char buf[32];
    return stor_setting_get(s->st, key, buf, sizeof buf) == 1 ? strtoll(buf, NULL, 10) : dflt;
}

static void setting_put_int(srv *s, const char *key, int64_t v) {
    char buf[32];
    snprintf(buf, sizeof buf, "%" PRId64, v);
    if (stor_setting_put(s->st, key, buf) != 0) txn_storage_failed(s, "storing a setting", key);
}

bool txn_producer_ids_exhausted(const srv *s) { return s->next_producer_id > INT64_MAX - PID_BLOCK; }

int64_t txn_next_producer_id(srv *s) {
    txn_coord *c = s->txn;
    if (txn_producer_ids_exhausted(s)) {
        log_error("producer ids are exhausted: the next would be %lld, past the last block that fits below "
                  "INT64_MAX (a client used producer ids that large); InitProducerId gets UNKNOWN_SERVER_ERROR",
                  (long long)s->next_producer_id);
        return -1;
    }
    if (s->next_producer_id >= c->pid_block_end) {
        c->pid_block_end = s->next_producer_id + PID_BLOCK;
        setting_put_int(s, "producer.id.block.end", c->pid_block_end);
    }
    return s->next_producer_id++;
}

/* ---- loading ---- */

static void load_txn(void *ctx, const stor_txn *st) {
    srv *s = ctx;
    txn *t = txn_new(s, st->transactional_id, strlen(st->transactional_id));
    t->producer_id = st->producer_id;
    t->prev_producer_id = st->prev_producer_id;
    t->epoch = st->producer_epoch;
    t->last_epoch = st->last_producer_epoch;
    t->timeout_ms = st->timeout_ms;
    t->state = (txn_state)st->state;
    t->start_ms = st->start_ms;
    t->update_ms = st->update_ms;
    t->client_tv = st->client_tv;
    t->next_producer_id = st->next_producer_id;
    if (t->next_producer_id >= s->next_producer_id) s->next_producer_id = t->next_producer_id + 1;
    if (t->producer_id >= s->next_producer_id) s->next_producer_id = t->producer_id + 1;
    if (t->prev_producer_id >= s->next_producer_id) s->next_producer_id = t->prev_producer_id + 1;
}

static void load_partition(void *ctx, const char *id, int64_t topic_id, int32_t partition) {
    /*
     * A partition of a deleted topic leaves the list when the topic is deleted (txn_forget_topic);
     * one still named (a database salvaged, or written by hand) gets no marker either way.
     */
    topic *tt = topic_find_id(ctx, topic_id);
    if (!tt || partition >= tt->nparts) {
        log_warn("transactional id %s: its partition %lld/%d no longer exists; leaving it out", id,
                 (long long)topic_id, partition);
        return;
    }
    txn *t = txn_find(ctx, id, strlen(id));
    if (t) txn_part_add(t, topic_id, partition);
}

static void load_group(void *ctx, const char *id, const char *group_id) {
    txn *t = txn_find(ctx, id, strlen(id));
    if (t) txn_group_add(t, group_id);
}

static void load_offset(void *ctx, const char *id, int64_t producer_id, const stor_offset *o, bool superseded) {
    (void)producer_id;
    txn *t = txn_find(ctx, id, strlen(id));
    if (!t) return;
    txn_offset *to = txn_offset_slot(t, o->group_id, o->topic, o->partition);
    to->offset = o->offset;
    to->leader_epoch = o->leader_epoch;
    free(to->metadata);
    to->metadata = kp_str_dup((kp_str){o->metadata ? o->metadata : "", o->metadata ? o->metadata_len : 0});
    to->metadata_len = o->metadata ? o->metadata_len : 0;
    to->commit_ms = o->commit_ms;
    to->superseded = superseded;
}

static bool recover_one(void *ctx, txn *t) {
    srv *s = ctx;
    if (t->state == TS_PREPARE_COMMIT || t->state == TS_PREPARE_ABORT) {
        bool commit = t->state == TS_PREPARE_COMMIT;
        log_info("transactional id %s: found %s after a restart; writing its %d remaining marker(s) and completing it",
                 t->id, txn_state_name(t->state), t->nparts);
        txn_complete(s, t, commit);
    }
    return true;
}

int txn_init(srv *s) {
    s->txn = xcalloc(1, sizeof *s->txn);
    stor_txn_load_cb cb = {s, load_txn, load_partition, load_group, load_offset};
    if (stor_txns_load(s->st, &cb) != 0) return -1;
    txn_coord *c = s->txn;
    c->pid_block_end = setting_int(s, "producer.id.block.end", 0);
    /* ids up to the stored block end may have been handed out before a crash */
    if (c->pid_block_end > s->next_producer_id) s->next_producer_id = c->pid_block_end;
    c->epoch = (int32_t)setting_int(s, "txn.coordinator.epoch", -1) + 1;
    setting_put_int(s, "txn.coordinator.epoch", c->epoch);
    txn_each(s, recover_one, s);
    int64_t now = clk_mono_ms();
    c->next_abort_check_ms = now + s->cfg->transaction_abort_check_interval_ms;
    c->next_expire_check_ms = now + s->cfg->transaction_expire_check_interval_ms;
    return 0;
}

static bool free_one(void *ctx, txn *t) {
    (void)ctx;
    free_txn(t);
    return true;
}

void txn_close(srv *s) { txn_marker_timer_close(s); }

int32_t txn_coordinator_epoch(const srv *s) { return s->txn ? s->txn->epoch : 0; }

void txn_free(srv *s) {
    if (!s->txn) return;
    txn_marker_timer_close(s);
    txn_each(s, free_one, NULL);
    free(s->txn);
    s->txn = NULL;
}

/* ---- timeouts and expiry ---- */

static bool abort_timed_out(void *ctx, txn *t) {
    srv *s = ctx;
    int64_t now = clk_now_ms();
    if (t->state != TS_ONGOING || t->start_ms + t->timeout_ms >= now) return true;
    log_info("transactional id %s: transaction open for %lld ms, past its transaction.timeout.ms=%d: aborting it "
             "and fencing producer id %lld (epoch %d -> %d)",
             t->id, (long long)(now - t->start_ms), t->timeout_ms, (long long)t->producer_id, t->epoch,
             t->epoch + 1);
    txn_fence_and_abort(s, t);
    return true;
}

static bool expire_one(void *ctx, txn *t) {
    srv *s = ctx;
    int64_t now = clk_now_ms();
    bool idle = t->state == TS_EMPTY || t->state == TS_COMPLETE_COMMIT || t->state == TS_COMPLETE_ABORT;
    if (!idle || t->update_ms + s->cfg->transactional_id_expiration_ms > now) return true;
    if (stor_txn_delete(s->st, t->id) != 0) {
        log_error("storage: forgetting transactional id %s failed: %s", t->id, stor_errmsg(s->st));
        return true;
    }
    log_info("transactional id %s: no transaction for %lld ms (transactional.id.expiration.ms=%lld): forgotten "
             "with producer id %lld", t->id, (long long)(now - t->update_ms),
             (long long)s->cfg->transactional_id_expiration_ms, (long long)t->producer_id);
    unlink_txn(s, t);
    free_txn(t);
    return true;
}

void txn_tick(srv *s) {
    txn_coord *c = s->txn;
    if (!c) return;
    int64_t now = clk_mono_ms();
    if (now >= c->next_abort_check_ms) {
        c->next_abort_check_ms = now + s->cfg->transaction_abort_check_interval_ms;
        txn_each(s, abort_timed_out, s);
    }
    if (now >= c->next_expire_check_ms) {
        c->next_expire_check_ms = now + s->cfg->transaction_expire_check_interval_ms;
        txn_each(s, expire_one, s);
    }
}

static bool reset_one(void *ctx, txn *t) {
    srv *s = ctx;
    if (t->state == TS_ONGOING) txn_fence_and_abort(s, t);
    if (t->state == TS_PREPARE_COMMIT || t->state == TS_PREPARE_ABORT) txn_complete(s, t, t->state == TS_PREPARE_COMMIT);
    if (stor_txn_delete(s->st, t->id) != 0) log_error("storage: deleting transactional id %s failed: %s", t->id,
                                                      stor_errmsg(s->st));
    unlink_txn(s, t);
    free_txn(t);
    return true;
}

void txn_reset(srv *s) {
    if (s->txn) txn_each(s, reset_one, s);
}
