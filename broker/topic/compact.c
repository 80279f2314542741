/*
 * The log cleaner: Kafka's LogCleaner for topics whose cleanup.policy includes compact. A pass
 * over one partition first reads its dirty part (past the cleaner checkpoint, up to the last
 * stable offset) into a map from key to the offset of the key's newest record, then rewrites
 * every batch from the log start to that end keeping only the newest record of each key, at its
 * original offset. Tombstones stay until delete.retention.ms after the pass that first kept them
 * (KIP-534's delete horizon, written into the batch); records of aborted transactions go; a
 * producer's newest data batch stays, emptied if need be, because its idempotent state is read
 * back from it.
 *
 * The cleaner runs on the loop in slices of log.cleaner.slice.ms, so produce and fetch wait at
 * most one slice. Each slice's rewrites join the loop's next commit, oldest batches first: a
 * crash between slices leaves some batches compacted and the rest as they were, both complete,
 * and a tombstone can only go after the older values it hides went in an earlier commit. A
 * failed commit ends the pass (topic_cleaner_abort) for the same reason.
 *
 * No segments: Kafka never cleans its active segment, which keeps the log's last offset in
 * place; here everything below the last stable offset is cleanable (subject to
 * min.compaction.lag.ms), and the partition's last batch is only ever emptied, never removed: a
 * consumer at the end of a log whose tail was compacted away would otherwise wait for offsets
 * no batch holds and never reach the high watermark. An emptied batch keeps its offsets, so
 * readers step past it as they do past Kafka's.
 */
#include <openssl/sha.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "checked.h"
#include "clock.h"
#include "kp.h"
#include "kp_mem.h"
#include "kp_records.h"
#include "log.h"
#include "srv.h"
#include "topic.h"
#include "topic_config.h"

/* ---- the key map: 128 bits of a key's SHA-256 -> the offset of its newest record ---- */

#define KEY_HASH 16
typedef struct slot {
    uint8_t h[KEY_HASH];
    int64_t offset; /* -1: empty */
} slot;

typedef struct key_map {
    slot *v;
    size_t cap, n, max_bytes;
} key_map;

static void key_hash(const uint8_t *k, int32_t len, uint8_t out[KEY_HASH]) {
    uint8_t md[SHA256_DIGEST_LENGTH];
    SHA256(len > 0 ? k : (const uint8_t *)"", len > 0 ? (size_t)len : 0, md);
    memcpy(out, md, KEY_HASH);
}

static slot *map_slot(const key_map *m, const uint8_t h[KEY_HASH]) {
    uint64_t x;
    memcpy(&x, h, sizeof x);
    for (size_t i = (size_t)x & (m->cap - 1);; i = (i + 1) & (m->cap - 1))
        if (m->v[i].offset < 0 || memcmp(m->v[i].h, h, KEY_HASH) == 0) return &m->v[i];
}

static int64_t map_get(const key_map *m, const uint8_t h[KEY_HASH]) { return m->cap ? map_slot(m, h)->offset : -1; }

/* Grows at 3/4 full; false when growing would pass max_bytes (the map is full). */
static bool map_put(key_map *m, const uint8_t h[KEY_HASH], int64_t offset) {
    if (m->cap) {
        slot *sl = map_slot(m, h);
        if (sl->offset >= 0) {
            sl->offset = offset;
            return true;
        }
    }
    if ((m->n + 1) * 4 > m->cap * 3) {
        size_t cap = m->cap ? m->cap * 2 : 1024;
        if (cap * sizeof(slot) > m->max_bytes) return false;
        slot *v = xmalloc(cap * sizeof(slot));
        for (size_t i = 0; i < cap; i++) v[i].offset = -1;
        key_map grown = {v, cap, 0, m->max_bytes};
        for (size_t i = 0; i < m->cap; i++)
            if (m->v[i].offset >= 0) *map_slot(&grown, m->v[i].h) = m->v[i];
        grown.n = m->n;
        free(m->v);
        *m = grown;
    }
    slot *sl = map_slot(m, h);
    memcpy(sl->h, h, KEY_HASH);
    sl->offset = offset;
    m->n++;
    return true;
}

/* ---- a pass ---- */

typedef struct pending {
    int64_t base;
    uint8_t *data; /* NULL: delete the batch */
    size_t len;
    int64_t max_ts;
    int32_t count;
    int64_t producer_id; /* an emptied batch of an idempotent producer: kept if it is its newest */
    bool keep_empty;     /* the partition's last batch: kept, emptied */
} pending;

typedef enum { IDLE, SCAN, REWRITE } phase;

struct topic_cleaner {
    uv_timer_t timer; /* the backoff between looks for work */
    uv_idle_t idle;   /* active while a pass runs: one slice per loop iteration */
    int closing;      /* handles still closing (topic_cleaner_stop) */
    srv *s;
    phase ph;
    int64_t topic_id;
    uint8_t uuid[16];
    int32_t part;
    int64_t start, dirty_from, end, pos;
    int64_t last_base;     /* the partition's last batch, emptied at most; -1: none */
    int64_t now_ms, delete_retention_ms, min_lag_ms;
    key_map map;
    stor_aborted *aborted;
    int naborted, cap_aborted;
    pending *pend;
    int npend, cap_pend;
    int64_t deadline_us, started_us, next_due_ms;
    const char *failed; /* why the pass stops */
    bool more;          /* the key map filled: the partition has more to compact right away */
    uint64_t sweep;     /* topic_cleaner_run_now's current sweep; 0: the background cleaner */
    uint64_t sweeps;
    /* for the log line */
    int64_t records_in, records_out, bytes_in, bytes_out, tombstones_removed, batches_removed, aborted_removed;
};

static partition *pass_partition(topic_cleaner *c) {
    topic *t = topic_find_id(c->s, c->topic_id);
    if (!t || memcmp(t->uuid, c->uuid, 16) != 0 || c->part >= t->nparts) return NULL;
    return &t->parts[c->part];
}

static bool aborted_entry(void *ctx, const stor_aborted *a) {
    topic_cleaner *c = ctx;
    if (a->first_offset < c->end) {
        XGROW(c->aborted, c->cap_aborted, c->naborted + 1, 16);
        c->aborted[c->naborted++] = *a;
    }
    return a->lso < c->end; /* as topic_aborted_read: later entries cannot reach back below end */
}

static bool is_aborted(const topic_cleaner *c, const kp_batch *b) {
    if (!(b->attributes & KP_ATTR_TRANSACTIONAL)) return false;
    for (int i = 0; i < c->naborted; i++)
        if (c->aborted[i].producer_id == b->producer_id && c->aborted[i].first_offset <= b->base_offset &&
            b->base_offset < c->aborted[i].last_offset)
            return true;
    return false;
}

static void pass_free(topic_cleaner *c) {
    free(c->map.v);
    free(c->aborted);
    for (int i = 0; i < c->npend; i++) free(c->pend[i].data);
    free(c->pend);
    c->map = (key_map){0};
    c->aborted = NULL;
    c->pend = NULL;
    c->naborted = c->cap_aborted = c->npend = c->cap_pend = 0;
    c->ph = IDLE;
}

/* Parse a stored batch; a stored batch that does not parse ends the pass (it is left as it is). */
static bool stored_batch(topic_cleaner *c, const void *data, size_t len, kp_batch *b) {
    size_t at = 0;
    const char *why = NULL;
    if (kp_batch_next(data, len, &at, b, &why) == 1 && at == len) return true;
    c->failed = why ? why : "a stored batch does not parse";
    return false;
}

static bool scan_batch(void *ctx, const stor_batch_meta *m, const void *data, size_t len) {
    topic_cleaner *c = ctx;
    kp_batch b;
    if (!stored_batch(c, data, len, &b)) return false;
    if (c->min_lag_ms > 0 && m->max_timestamp > c->now_ms - c->min_lag_ms) {
        c->end = m->base_offset; /* min.compaction.lag.ms: this batch and the rest are too young */
        return false;
    }
    if (!(b.attributes & KP_ATTR_CONTROL) && !is_aborted(c, &b)) {
        const uint8_t *sec;
        size_t sec_len;
        uint8_t *owned;
        if (kp_batch_records(&b, TOPIC_MAX_DECOMPRESSED, &sec, &sec_len, &owned, &c->failed) != 0) return false;
        kp_record_iter it;
        kp_records_begin(&it, sec, sec_len, b.records_count);
        kp_record rec;
        int rc;
        bool full = false;
        while (!full && (rc = kp_records_next(&it, &rec, &c->failed)) == 1) {
            if (!rec.key) continue;
            uint8_t h[KEY_HASH];
            key_hash(rec.key, rec.key_len, h);
            full = !map_put(&c->map, h, m->base_offset + rec.offset_delta);
        }
        free(owned);
        if (full) {
            /* the map holds what it can: this pass ends before this batch (already mapped keys only move later) */
            c->end = m->base_offset;
            c->more = true; /* the next pass goes on from here at once */
            return false;
        }
        if (rc < 0) return false;
    }
    c->pos = m->last_offset + 1;
    return clk_mono_us() < c->deadline_us;
}

static void push(topic_cleaner *c, pending p) {
    XGROW(c->pend, c->cap_pend, c->npend + 1, 16);
    c->pend[c->npend++] = p;
}

/* Which of b's records stay; pushes the batch's rewrite (or removal) when any goes or a horizon is due. */
static bool rewrite_batch(topic_cleaner *c, const stor_batch_meta *m, const kp_batch *b) {
    bool aborted = is_aborted(c, b);
    const uint8_t *sec;
    size_t sec_len;
    uint8_t *owned;
    if (kp_batch_records(b, TOPIC_MAX_DECOMPRESSED, &sec, &sec_len, &owned, &c->failed) != 0) return false;
    kp_record *keep = xmalloc(sizeof(*keep) * (size_t)(b->records_count > 0 ? b->records_count : 1));
    bool has_horizon = (b->attributes & KP_ATTR_DELETE_HORIZON) != 0;
    bool horizon_passed = has_horizon && c->now_ms >= b->base_timestamp;
    int32_t n = 0, seen = 0;
    bool tombstones = false;
    kp_record_iter it;
    kp_records_begin(&it, sec, sec_len, b->records_count);
    kp_record rec;
    int rc;
    while ((rc = kp_records_next(&it, &rec, &c->failed)) == 1) {
        seen++;
        if (aborted || !rec.key) continue;
        uint8_t h[KEY_HASH];
        key_hash(rec.key, rec.key_len, h);
        if (map_get(&c->map, h) > m->base_offset + rec.offset_delta) continue; /* a newer record has the key */
        if (!rec.value) {
            if (horizon_passed) {
                c->tombstones_removed++;
                continue;
            }
            tombstones = true;
        }
        keep[n++] = rec;
    }
    bool ok = rc == 0;
    c->records_in += seen;
    c->bytes_in += (int64_t)b->size;
    if (ok && (n < seen || (tombstones && !has_horizon))) {
        if (aborted) c->aborted_removed += seen;
        pending p = {.base = m->base_offset, .producer_id = b->producer_id, .count = n, .max_ts = m->max_timestamp,
                     .keep_empty = m->base_offset == c->last_base};
        if (n > 0 || b->producer_id >= 0 || p.keep_empty) {
            int64_t horizon =
                tombstones ? (has_horizon ? b->base_timestamp : sat_add_i64(c->now_ms, c->delete_retention_ms)) : -1;
            if (kp_batch_rebuild(b, kp_batch_codec(b), keep, n, false, horizon, &p.data, &p.len, &c->failed) != 0)
                ok = false;
            else if (n > 0 && !(b->attributes & KP_ATTR_LOG_APPEND_TIME))
                p.max_ts = kp_get_i64(p.data + 35); /* the rebuilt header's max timestamp */
            if (tombstones && (c->next_due_ms < 0 || horizon < c->next_due_ms)) c->next_due_ms = horizon;
        }
        if (ok) push(c, p);
    } else {
        c->records_out += seen;
        c->bytes_out += (int64_t)b->size;
        if (ok && tombstones && (c->next_due_ms < 0 || b->base_timestamp < c->next_due_ms))
            c->next_due_ms = b->base_timestamp;
    }
    free(keep);
    free(owned);
    return ok;
}

static bool rewrite_one(void *ctx, const stor_batch_meta *m, const void *data, size_t len) {
    topic_cleaner *c = ctx;
    kp_batch b;
    if (!stored_batch(c, data, len, &b)) return false;
    if (b.attributes & KP_ATTR_CONTROL) {
        c->records_in += b.records_count;
        c->records_out += b.records_count; /* markers stay: readers of the aborted index need them */
        c->bytes_in += (int64_t)len;
        c->bytes_out += (int64_t)len;
    } else if (!rewrite_batch(c, m, &b)) {
        return false;
    }
    c->pos = m->last_offset + 1;
    return clk_mono_us() < c->deadline_us;
}

/* The slice's rewrites, oldest first, into the open storage transaction. */
static bool apply_pending(topic_cleaner *c, partition *p) {
    stor *st = c->s->st;
    bool ok = true;
    for (int i = 0; i < c->npend && ok; i++) {
        pending *q = &c->pend[i];
        if (!q->data) {
            ok = stor_batch_delete(st, c->topic_id, c->part, q->base) == 0;
            c->batches_removed++;
            continue;
        }
        if (q->count == 0 && !q->keep_empty) { /* emptied: only a producer's newest data batch stays */
            int64_t last = -1;
            int found = stor_producer_last_data(st, c->topic_id, c->part, q->producer_id, &last);
            if (found < 0) {
                ok = false;
                break;
            }
            if (!found || last != q->base) {
                ok = stor_batch_delete(st, c->topic_id, c->part, q->base) == 0;
                c->batches_removed++;
                continue;
            }
        }
        ok = stor_batch_replace(st, c->topic_id, c->part, q->base, q->max_ts, q->count, q->data, q->len) >= 0;
        c->records_out += q->count;
        c->bytes_out += (int64_t)q->len;
    }
    for (int i = 0; i < c->npend; i++) free(c->pend[i].data);
    c->npend = 0;
    if (!ok) c->failed = stor_errmsg(st);
    (void)p;
    return ok;
}

static void pass_done(topic_cleaner *c, partition *p) {
    if (stor_cleaned_set(c->s->st, c->topic_id, c->part, c->end) != 0) {
        c->failed = stor_errmsg(c->s->st);
        return;
    }
    p->clean_due_ms = c->next_due_ms;
    p->clean_next_ms = c->more ? 0 : clk_now_ms() + c->s->cfg->log_cleaner_backoff_ms;
    if (!c->more) p->clean_sweep = c->sweep;
    double ms = (double)(clk_mono_us() - c->started_us) / 1000.0;
    log_info("compaction: %s-%d offsets [%lld, %lld): %lld records -> %lld, %lld bytes -> %lld, %lld tombstone(s) "
             "and %lld aborted record(s) removed, %lld batch(es) removed, %zu keys, in %.1f ms",
             p->topic->name, p->index, (long long)c->start, (long long)c->end, (long long)c->records_in,
             (long long)c->records_out, (long long)c->bytes_in, (long long)c->bytes_out,
             (long long)c->tombstones_removed, (long long)c->aborted_removed, (long long)c->batches_removed,
             c->map.n, ms);
    c->s->compactions++;
    pass_free(c);
}

/* One slice: work until the deadline; true while the pass goes on. */
static bool slice(topic_cleaner *c) {
    partition *p = pass_partition(c);
    if (!p) {
        log_info("compaction: the partition being compacted was deleted; the pass stops");
        pass_free(c);
        return false;
    }
    c->deadline_us = clk_mono_us() + c->s->cfg->log_cleaner_slice_ms * 1000;
    stor *st = c->s->st;
    while (!c->failed && clk_mono_us() < c->deadline_us) {
        if (c->ph == SCAN) {
            int64_t before = c->pos, end = c->end;
            if (stor_batch_read(st, c->topic_id, c->part, c->pos, c->end, scan_batch, c) != 0) c->failed = stor_errmsg(st);
            if (c->failed) break;
            if (c->pos >= c->end || c->end != end || c->pos == before) { /* scanned to the end (or past the map) */
                if (c->map.n == 0) {
                    pass_done(c, p); /* nothing keyed in the dirty part: no record can go */
                    return false;
                }
                c->ph = REWRITE;
                c->pos = c->start < p->log_start ? p->log_start : c->start;
            }
        } else {
            int64_t before = c->pos;
            if (stor_batch_read(st, c->topic_id, c->part, c->pos, c->end, rewrite_one, c) != 0)
                c->failed = stor_errmsg(st);
            if (c->failed || !apply_pending(c, p)) break;
            if (c->pos >= c->end || c->pos == before) {
                pass_done(c, p);
                return c->ph != IDLE;
            }
        }
    }
    if (c->failed) {
        log_warn("compaction of %s-%d stopped: %s; what it rewrote so far stays, the next pass starts over",
                 p->topic->name, p->index, c->failed);
        pass_free(c);
        return false;
    }
    return true;
}

/*
 * The dirtiest compacted partition worth a pass, or NULL. The background cleaner (sweep 0) waits
 * log.cleaner.backoff.ms after a pass before the same partition again, so a partition that stays
 * dirty (records younger than min.compaction.lag.ms, an open transaction) is not rescanned in a
 * loop; a sweep (topic_cleaner_run_now) takes each partition once, or until its key map no
 * longer fills.
 */
static partition *choose(srv *s, bool force, uint64_t sweep, stor_clean_state *state) {
    partition *best = NULL;
    double best_ratio = -1;
    int64_t now = clk_now_ms();
    for (topic *t = s->topics; t; t = t->next) {
        if (!t->compact) continue;
        bool d;
        const char *v = topic_config_value(s, t, "min.cleanable.dirty.ratio", &d);
        double min_ratio = v ? strtod(v, NULL) : 0.5;
        v = topic_config_value(s, t, "max.compaction.lag.ms", &d);
        int64_t max_lag = v ? strtoll(v, NULL, 10) : INT64_MAX;
        for (int32_t i = 0; i < t->nparts; i++) {
            partition *p = &t->parts[i];
            stor_clean_state cs;
            if (sweep ? p->clean_sweep == sweep : now < p->clean_next_ms) continue;
            if (topic_lso(p) <= p->log_start || stor_clean_state_get(s->st, t->id, i, &cs) != 0) continue;
            bool due = p->clean_due_ms >= 0 && now >= p->clean_due_ms; /* tombstones whose horizon passed */
            if (cs.cleaned_to >= topic_lso(p) && !due) continue;
            double ratio = cs.bytes > 0 ? (double)cs.dirty_bytes / (double)cs.bytes : 0;
            bool overdue = cs.first_dirty_ts >= 0 && max_lag < now && now - max_lag > cs.first_dirty_ts;
            if ((cs.dirty_bytes > 0 && (ratio >= min_ratio || overdue || force)) || due) {
                if (due || overdue) ratio += 1; /* before any that is merely dirty */
                if (ratio > best_ratio) {
                    best = p;
                    best_ratio = ratio;
                    *state = cs;
                }
            }
        }
    }
    return best;
}

static bool last_batch(void *ctx, const stor_batch_meta *m, const void *data, size_t len) {
    (void)data, (void)len;
    *(int64_t *)ctx = m->base_offset;
    return false;
}

static bool start_pass(topic_cleaner *c, bool force) {
    srv *s = c->s;
    stor_clean_state cs = {0};
    partition *p = choose(s, force, c->sweep, &cs);
    if (!p) return false;
    topic *t = p->topic;
    c->topic_id = t->id;
    memcpy(c->uuid, t->uuid, 16);
    c->part = p->index;
    c->start = p->log_start;
    c->end = topic_lso(p);
    c->dirty_from = cs.cleaned_to > c->start ? cs.cleaned_to : c->start;
    if (c->dirty_from > c->end) c->dirty_from = c->end;
    c->pos = c->dirty_from;
    c->now_ms = clk_now_ms();
    bool d;
    const char *v = topic_config_value(s, t, "delete.retention.ms", &d);
    c->delete_retention_ms = v ? strtoll(v, NULL, 10) : 86400000;
    v = topic_config_value(s, t, "min.compaction.lag.ms", &d);
    c->min_lag_ms = v ? strtoll(v, NULL, 10) : 0;
    c->map = (key_map){.max_bytes = (size_t)s->cfg->log_cleaner_dedupe_buffer_size};
    c->failed = NULL;
    c->more = false;
    c->next_due_ms = -1;
    c->records_in = c->records_out = c->bytes_in = c->bytes_out = 0;
    c->tombstones_removed = c->batches_removed = c->aborted_removed = 0;
    c->started_us = clk_mono_us();
    c->last_base = -1;
    if (p->end > 0 && stor_batch_read(s->st, t->id, p->index, p->end - 1, INT64_MAX, last_batch, &c->last_base) != 0) {
        log_warn("compaction of %s-%d: reading its last batch: %s", t->name, p->index, stor_errmsg(s->st));
        pass_free(c);
        return false;
    }
    p->clean_due_ms = -1;
    if (stor_txn_aborted_read(s->st, t->id, p->index, c->start, aborted_entry, c) != 0) {
        log_warn("compaction of %s-%d: reading its aborted transactions: %s", t->name, p->index, stor_errmsg(s->st));
        pass_free(c);
        return false;
    }
    /* with no new data, a pass for due tombstones maps nothing and rewrites all (the map is empty) */
    c->ph = c->dirty_from < c->end ? SCAN : REWRITE;
    if (c->ph == REWRITE) c->pos = c->start;
    log_info("compaction: %s-%d starts: offsets [%lld, %lld), uncompacted from %lld (%lld of %lld bytes)", t->name,
             p->index, (long long)c->start, (long long)c->end, (long long)c->dirty_from, (long long)cs.dirty_bytes,
             (long long)cs.bytes);
    return true;
}

static void on_timer(uv_timer_t *h);

/*
 * The next look for work at the next multiple of log.cleaner.backoff.ms on the loop's clock
 * rather than a backoff after this one: every cluster of the process (issue 34) then looks in the
 * same wake-up of the loop, where timers of their own would each wake an idle process (50
 * clusters: 50 wake-ups per backoff). The wait is never longer than the backoff.
 */
static void arm(topic_cleaner *c) {
    int64_t backoff = c->s->cfg->log_cleaner_backoff_ms;
    clk_timer_start(&c->timer, on_timer, backoff - (int64_t)(uv_now(c->s->loop) % (uint64_t)backoff));
}

/*
 * One slice per loop iteration while a pass runs, on an idle handle: the loop polls for I/O
 * without blocking between slices, so requests are served (and the slice's rewrites committed)
 * in between. A 0-ms timer would not do: libuv runs a timer re-armed from its own callback
 * again in the same iteration, so the whole pass would hold the loop.
 */
static void on_idle(uv_idle_t *h) {
    topic_cleaner *c = h->data;
    /* produce appended since the last commit is acknowledged before the slice, not after it */
    if (c->s->ndirty) topic_commit_now(c->s);
    if (c->ph != IDLE && slice(c)) return;
    if (start_pass(c, false)) return; /* the next partition that is due, at once */
    uv_idle_stop(&c->idle);
    arm(c);
}

static void on_timer(uv_timer_t *h) {
    topic_cleaner *c = h->data;
    if (c->ph != IDLE || start_pass(c, false))
        uv_idle_start(&c->idle, on_idle);
    else
        arm(c);
}

void topic_cleaner_start(srv *s) {
    if (!s->cfg->log_cleaner_enable) return;
    topic_cleaner *c = xcalloc(1, sizeof *c);
    c->s = s;
    c->ph = IDLE;
    uv_timer_init(s->loop, &c->timer);
    uv_idle_init(s->loop, &c->idle);
    c->timer.data = c->idle.data = c;
    arm(c);
    uv_unref((uv_handle_t *)&c->timer);
    uv_unref((uv_handle_t *)&c->idle);
    s->cleaner = c;
}

void topic_cleaner_abort(srv *s, const char *why) {
    topic_cleaner *c = s->cleaner;
    if (!c || c->ph == IDLE) return;
    partition *p = pass_partition(c);
    log_warn("compaction of %s-%d stopped: %s; the next pass starts over", p ? p->topic->name : "(deleted topic)",
             c->part, why);
    pass_free(c);
}

int topic_cleaner_run_now(srv *s, int max_passes, bool force) {
    topic_cleaner *c = s->cleaner;
    if (!c) return -1;
    uint64_t before = s->compactions;
    if (c->ph != IDLE) /* the background pass under way finishes first */
        while (slice(c)) {}
    c->sweep = ++c->sweeps;
    for (int i = 0; i < max_passes && start_pass(c, force); i++)
        while (slice(c)) {}
    c->sweep = 0;
    return (int)(s->compactions - before);
}

static void on_closed(uv_handle_t *h) {
    topic_cleaner *c = h->data;
    if (--c->closing == 0) free(c);
}

void topic_cleaner_stop(srv *s) {
    topic_cleaner *c = s->cleaner;
    if (!c) return;
    pass_free(c);
    s->cleaner = NULL;
    c->closing = 2;
    uv_close((uv_handle_t *)&c->timer, on_closed);
    uv_close((uv_handle_t *)&c->idle, on_closed);
}
