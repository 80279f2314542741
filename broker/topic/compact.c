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
 * Off the loop (issue 37). With a database on disk the key map and the rewrite run on a thread
 * of the cleaner's own at idle priority (cleaner_thread says why not libuv's threadpool), reading through
 * a connection of their own and writing every kept batch to a cleaned file beside the
 * partition's segments (storage/stor_compact.c): the worker never writes to SQLite, so it never
 * contends with the loop for WAL's one write lock. Back on the loop, the pass is swapped in with
 * one commit: the cleaned file becomes the partition's newest segment and each batch row of the
 * pass points into it; old segments die with their last row. Like Kafka's cleaner, a pass ends
 * at the first dirty offset it captured at its start (the last stable offset then): batches
 * appended while the worker runs lie past it, untouched, and go on being appended after the swap.
 * A row the loop changed meanwhile (retention, DeleteRecords) is left as it is (the move matches
 * the row's old place), and a deleted topic ends the pass with nothing swapped in. kill -9 at any
 * moment leaves either the old rows or the new ones, each pointing at complete bytes.
 *
 * An in-memory database (data.dir=:memory:) has no file a second connection could open: its
 * passes read through the loop's connection in slices of log.cleaner.slice.ms, one per loop
 * iteration, and are swapped in the same way at the end.
 *
 * No segments in the cleaner's sense: Kafka never cleans its active segment, which keeps the
 * log's last offset in place; here everything below the last stable offset is cleanable (subject
 * to min.compaction.lag.ms), and the partition's last batch is only ever emptied, never removed:
 * a consumer at the end of a log whose tail was compacted away would otherwise wait for offsets
 * no batch holds and never reach the high watermark. An emptied batch keeps its offsets, so
 * readers step past it as they do past Kafka's.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
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

/* ---- the key map: 128 bits of a key's keyed hash -> the offset of its newest record ---- */

#define KEY_HASH 16
typedef struct slot {
    uint8_t h[KEY_HASH];
    int64_t offset; /* -1: empty */
} slot;

typedef struct key_map {
    slot *v;
    size_t cap, n, max_bytes;
    uint64_t k0, k1; /* the pass's SipHash key */
} key_map;

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                                                                       \
    do {                                                                                                               \
        v0 += v1, v1 = ROTL(v1, 13), v1 ^= v0, v0 = ROTL(v0, 32);                                                     \
        v2 += v3, v3 = ROTL(v3, 16), v3 ^= v2;                                                                         \
        v0 += v3, v3 = ROTL(v3, 21), v3 ^= v0;                                                                         \
        v2 += v1, v1 = ROTL(v1, 17), v1 ^= v2, v2 = ROTL(v2, 32);                                                     \
    } while (0)

static uint64_t le64(const uint8_t *p) {
    uint64_t x = 0;
    for (int i = 7; i >= 0; i--) x = x << 8 | p[i];
    return x;
}

/*
 * SipHash-2-4 with its 128-bit output (Aumasson and Bernstein, https://github.com/veorq/SipHash,
 * its test vectors checked), keyed at random per pass. Kafka's SkimpyOffsetMap keeps 16 bytes
 * of MD5 per key (LogCleaner's dedupe buffer); SHA-256 through OpenSSL 3's one-shot call cost a
 * method fetch, a lock and an allocation per key, a third of a pass. A collision would make one
 * key's record hide another's; with a secret key per pass nobody can aim for one.
 */
static void key_hash(const key_map *m, const uint8_t *k, int32_t len, uint8_t out[KEY_HASH]) {
    uint64_t v0 = 0x736f6d6570736575ull ^ m->k0, v1 = 0x646f72616e646f6dull ^ m->k1 ^ 0xee;
    uint64_t v2 = 0x6c7967656e657261ull ^ m->k0, v3 = 0x7465646279746573ull ^ m->k1;
    size_t n = len > 0 ? (size_t)len : 0, i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w = le64(k + i);
        v3 ^= w;
        SIPROUND;
        SIPROUND;
        v0 ^= w;
    }
    uint64_t b = (uint64_t)n << 56;
    for (size_t j = 0; i + j < n; j++) b |= (uint64_t)k[i + j] << (8 * j);
    v3 ^= b;
    SIPROUND;
    SIPROUND;
    v0 ^= b;
    v2 ^= 0xee;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    uint64_t h0 = v0 ^ v1 ^ v2 ^ v3;
    v1 ^= 0xdd;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    uint64_t h1 = v0 ^ v1 ^ v2 ^ v3;
    for (int j = 0; j < 8; j++) {
        out[j] = (uint8_t)(h0 >> (8 * j));
        out[8 + j] = (uint8_t)(h1 >> (8 * j));
    }
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
        key_map grown = {v, cap, 0, m->max_bytes, m->k0, m->k1};
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

/* ---- a pass: everything a worker touches is here, copied on the loop before it starts ---- */

typedef enum { KEEP, REWRITE, DROP } out_kind;

/* One batch of the pass's range and what becomes of it. */
typedef struct out_batch {
    int64_t base;
    int64_t old_seg, old_pos; /* where the pass read it (-1: in its row) */
    int64_t new_pos;          /* in the cleaned file; -1: none (an in-memory database) */
    uint8_t *data;            /* an in-memory database: the rewritten bytes */
    int64_t len, max_ts, producer_id;
    int32_t count;
    uint8_t kind;
    bool keep_empty; /* the partition's last batch: kept, emptied */
} out_batch;

typedef enum { SCAN, REWRITE_ALL, DONE } phase;

typedef struct pass {
    topic_cleaner *c;   /* loop-only; NULL once the cleaner stopped: the result is dropped */
    atomic_bool cancel; /* the worker stops at its next batch */
    atomic_bool over;   /* the worker returned (topic_cleaner_run_now waits for it) */
    bool off_loop, reported; /* reported: topic_cleaner_run_now swapped it in; after() only frees it */
    stor_cleaning *io;
    phase ph;
    int64_t topic_id;
    uint8_t uuid[16];
    int32_t part;
    char *name; /* for log lines */
    int64_t start, dirty_from, end, pos;
    int64_t last_base; /* the partition's last batch, emptied at most; -1: none */
    int64_t now_ms, delete_retention_ms, min_lag_ms;
    key_map map;
    stor_aborted *aborted;
    int naborted, cap_aborted;
    out_batch *out;
    int nout, cap_out;
    /*
     * The worker's buffers, reused from batch to batch: the records kept, the records' bytes
     * and the rebuilt batch. The process has one malloc arena (broker/main.c), so each of the
     * dozen reallocs a rebuild made per batch held the lock the loop's own mallocs take, a
     * copy of up to a megabyte long; preempted there, this idle-priority thread kept the loop
     * waiting until it got a core again.
     */
    kp_record *keep;
    size_t cap_keep;
    kp_writer scratch, built;
    bool changed;      /* a batch is rewritten or removed: there is something to swap in */
    uint64_t deadline_ns;
    const char *failed; /* why the pass stops */
    bool more;          /* the key map filled: the partition has more to compact right away */
    uint64_t sweep;     /* topic_cleaner_run_now's sweep that started it; 0: the background cleaner */
    int64_t next_due_ms;
    uint64_t started_ns, worked_ns;
    /* log.cleaner.io.max.bytes.per.second on the worker: bytes read and written since io_from_ns */
    int64_t io_rate, io_bytes;
    uint64_t io_from_ns, throttled_ns;
    uint64_t stall_ns, commit_ns; /* the loop's own share: the swap, or an in-memory pass's slices */
    uint64_t adopt_ns, rows_ns;   /* of stall_ns: the cleaned file's adoption, the batch rows' moves */
    uint64_t step_max_ns;         /* the longest step of the swap (rows and commit) */
    int left_alone;   /* batches the loop changed or removed while the pass ran */
    /* the swap */
    bool adopted, after_ran; /* after_ran: the worker's result is back on the loop (delivered) */
    int64_t seg;  /* the cleaned file's segment id */
    int swap_at;  /* the next out entry to swap in */
    int commits;  /* of the swap, so far */
    /* for the log line */
    int64_t records_in, records_out, bytes_in, bytes_out, tombstones_removed, batches_removed, aborted_removed;
} pass;

/*
 * The cleaner's own thread (off_loop passes), created at the first pass and ended at stop. It
 * runs at the lowest priority there is (SCHED_IDLE, else nice 19): on 2 cores a pass's ~70 ms
 * of CPU took one core, and the kernel let the woken loop thread wait behind it (a neighbour's
 * produce p99 2-3.5x its own during a pass). libuv's threadpool would not do: its threads also
 * validate big produce batches (validate_async.c), and an unprivileged thread cannot raise its
 * priority again once lowered. Kafka's cleaner has threads of its own too (LogCleaner.scala,
 * CleanerThread).
 *
 * Nothing the loop waits for is ever held by this thread: a thread at SCHED_IDLE preempted while
 * holding something keeps it until nothing else on that core wants to run, on a busy machine for
 * milliseconds to seconds. libuv's uv_async_send and a mutex were such things: the loop, woken by
 * the thread's uv_async_send, preempted it inside the call (the kernel preempts a SCHED_IDLE
 * thread for any woken normal one) and then spun and sched_yield()ed in uv__async_spin until the
 * thread finished the call, or blocked on the mutex the thread held around it; perf showed the
 * loop off its core 15 ms in sched_yield and 456 ms in the mutex at a pass's end. So a pass goes
 * each way through an atomic pointer, and a byte through a pipe wakes the side that waits for it
 * (the loop polls its end; a write to a pipe never waits for its reader).
 */
typedef struct cleaner_thread {
    uv_thread_t id;
    int wake[2]; /* the loop -> the thread (blocking reads): a byte per pass handed over, and one to quit */
    int back[2]; /* the thread -> the loop (topic_cleaner.back): a byte per pass handed back, and one at its end */
    _Atomic(struct pass *) given, done; /* handed over, handed back */
    atomic_bool quit;
    atomic_bool exited; /* the thread returned, or is about to: join it */
} cleaner_thread;

struct topic_cleaner {
    uv_timer_t timer; /* the backoff between looks for work */
    uv_idle_t idle;   /* an in-memory database's pass: one slice per loop iteration */
    uv_poll_t back;   /* the thread's result, or its end, back on the loop (set up with the thread) */
    int closing;      /* handles still closing (topic_cleaner_stop) */
    cleaner_thread *th; /* NULL: no off_loop pass yet */
    srv *s;
    pass *p;          /* the pass under way; NULL: none */
    uint64_t sweep;   /* topic_cleaner_run_now's current sweep; 0: the background cleaner */
    uint64_t sweeps, seq;
    struct unlink_queue *unlinks;
};

/* Worker-safe: the broker's clock may move its offset on the loop. */
static uint64_t now_ns(void) { return uv_hrtime(); }

static partition *pass_partition(srv *s, const pass *p) {
    topic *t = topic_find_id(s, p->topic_id);
    if (!t || memcmp(t->uuid, p->uuid, 16) != 0 || p->part >= t->nparts) return NULL;
    return &t->parts[p->part];
}

static bool aborted_entry(void *ctx, const stor_aborted *a) {
    pass *p = ctx;
    if (a->first_offset < p->end) {
        XGROW(p->aborted, p->cap_aborted, p->naborted + 1, 16);
        p->aborted[p->naborted++] = *a;
    }
    return a->lso < p->end; /* as topic_aborted_read: later entries cannot reach back below end */
}

static bool is_aborted(const pass *p, const kp_batch *b) {
    if (!(b->attributes & KP_ATTR_TRANSACTIONAL)) return false;
    for (int i = 0; i < p->naborted; i++)
        if (p->aborted[i].producer_id == b->producer_id && p->aborted[i].first_offset <= b->base_offset &&
            b->base_offset < p->aborted[i].last_offset)
            return true;
    return false;
}

/* What only the pass's reads and rewrites need: the worker frees it before handing the pass back. */
static void pass_free_work(pass *p) {
    free(p->map.v);
    p->map.v = NULL;
    p->map.cap = 0; /* map.n stays, for the log line */
    free(p->keep);
    p->keep = NULL;
    p->cap_keep = 0;
    kp_writer_free(&p->scratch);
    kp_writer_free(&p->built);
}

/* Frees the pass and its cleaned file's own name (stor_cleaning_free). */
static void pass_free(pass *p) {
    if (!p) return;
    pass_free_work(p);
    free(p->aborted);
    for (int i = 0; i < p->nout; i++) free(p->out[i].data);
    free(p->out);
    free(p->name);
    stor_cleaning_free(p->io);
    free(p);
}

static bool stop_here(pass *p) {
    if (atomic_load_explicit(&p->cancel, memory_order_relaxed)) {
        p->failed = "cancelled";
        return true;
    }
    return false;
}

/* Parse a stored batch; a stored batch that does not parse ends the pass (it is left as it is). */
static bool stored_batch(pass *p, const void *data, size_t len, kp_batch *b) {
    size_t at = 0;
    const char *why = NULL;
    if (kp_batch_next(data, len, &at, b, &why) == 1 && at == len) return true;
    p->failed = why ? why : "a stored batch does not parse";
    return false;
}

/*
 * log.cleaner.io.max.bytes.per.second, as Kafka's cleaner (LogCleaner.scala's Throttler): the
 * bytes a pass reads and writes, on average at most this many a second; the worker sleeps off any
 * excess after a batch. Why the serverless default throttles where Kafka does not: on two cores a
 * neighbour's produce p99 during a pass at full speed (about 2 GB/s read) was 2.0x its p99 before
 * and after it, 1.0x at the 1 GiB/s default (docs/benchmarks.md, "The benchmark's own look at the
 * log"). What in a pass costs the neighbour is not its idle-priority share of a core (a spinner
 * at SCHED_IDLE costs it nothing measurable); less of the pass at a time costs it less. The sleeps
 * are short so a stop or an abort is not held up.
 */
#define THROTTLE_MIN_SLEEP_NS 200000u
#define THROTTLE_STEP_NS 2000000u

static void throttle(pass *p, int64_t bytes) {
    /* only on the worker (work() sets io_from_ns): a pass topic_cleaner_run_now runs on the loop never sleeps */
    if (!p->off_loop || p->io_rate <= 0 || !p->io_from_ns) return;
    p->io_bytes += bytes;
    uint64_t due = p->io_from_ns + (uint64_t)((double)p->io_bytes * 1e9 / (double)p->io_rate);
    for (uint64_t now = now_ns(); due > now + THROTTLE_MIN_SLEEP_NS && !stop_here(p); now = now_ns()) {
        uint64_t ns = due - now < THROTTLE_STEP_NS ? due - now : THROTTLE_STEP_NS;
        struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)ns};
        nanosleep(&ts, NULL); /* an EINTR only ends this step early */
        p->throttled_ns += now_ns() - now;
    }
}

static bool scan_batch(void *ctx, const stor_clean_batch *sb, const void *data, size_t len) {
    pass *p = ctx;
    const stor_batch_meta *m = &sb->m;
    kp_batch b;
    if (stop_here(p) || !stored_batch(p, data, len, &b)) return false;
    if (p->min_lag_ms > 0 && m->max_timestamp > p->now_ms - p->min_lag_ms) {
        p->end = m->base_offset; /* min.compaction.lag.ms: this batch and the rest are too young */
        return false;
    }
    if (!(b.attributes & KP_ATTR_CONTROL) && !is_aborted(p, &b)) {
        const uint8_t *sec;
        size_t sec_len;
        uint8_t *owned;
        if (kp_batch_records(&b, TOPIC_MAX_DECOMPRESSED, &sec, &sec_len, &owned, &p->failed) != 0) return false;
        kp_record_iter it;
        kp_records_begin(&it, sec, sec_len, b.records_count);
        kp_record rec;
        int rc;
        bool full = false;
        while (!full && (rc = kp_records_next(&it, &rec, &p->failed)) == 1) {
            if (!rec.key) continue;
            uint8_t h[KEY_HASH];
            key_hash(&p->map, rec.key, rec.key_len, h);
            full = !map_put(&p->map, h, m->base_offset + rec.offset_delta);
        }
        free(owned);
        if (full) {
            /* the map holds what it can: this pass ends before this batch (already mapped keys only move later) */
            p->end = m->base_offset;
            p->more = true; /* the next pass goes on from here at once */
            return false;
        }
        if (rc < 0) return false;
    }
    p->pos = m->last_offset + 1;
    throttle(p, (int64_t)len);
    return now_ns() < p->deadline_ns;
}

static void push(pass *p, out_batch o) {
    XGROW(p->out, p->cap_out, p->nout + 1, 64);
    p->out[p->nout++] = o;
}

/* With a database on disk every batch kept goes to the cleaned file, rewritten or as it was. */
static bool keep_bytes(pass *p, out_batch *o, const void *data, size_t len) {
    if (!p->off_loop) return true;
    if (stor_cleaning_write(p->io, data, len, &o->new_pos) != 0) {
        p->failed = stor_cleaning_err(p->io);
        return false;
    }
    return true;
}

/* Which of b's records stay; records the batch's rewrite, removal, or (on disk) copy. */
static bool rewrite_batch(pass *p, const stor_clean_batch *sb, const kp_batch *b, const void *data, size_t len) {
    const stor_batch_meta *m = &sb->m;
    bool aborted = is_aborted(p, b);
    const uint8_t *sec;
    size_t sec_len;
    uint8_t *owned;
    if (kp_batch_records(b, TOPIC_MAX_DECOMPRESSED, &sec, &sec_len, &owned, &p->failed) != 0) return false;
    size_t want = (size_t)(b->records_count > 0 ? b->records_count : 1);
    if (want > p->cap_keep) {
        free(p->keep);
        p->keep = xmalloc(sizeof(*p->keep) * want);
        p->cap_keep = want;
    }
    kp_record *keep = p->keep;
    bool has_horizon = (b->attributes & KP_ATTR_DELETE_HORIZON) != 0;
    bool horizon_passed = has_horizon && p->now_ms >= b->base_timestamp;
    int32_t n = 0, seen = 0;
    bool tombstones = false;
    kp_record_iter it;
    kp_records_begin(&it, sec, sec_len, b->records_count);
    kp_record rec;
    int rc;
    while ((rc = kp_records_next(&it, &rec, &p->failed)) == 1) {
        seen++;
        if (aborted || !rec.key) continue;
        uint8_t h[KEY_HASH];
        key_hash(&p->map, rec.key, rec.key_len, h);
        if (map_get(&p->map, h) > m->base_offset + rec.offset_delta) continue; /* a newer record has the key */
        if (!rec.value) {
            if (horizon_passed) {
                p->tombstones_removed++;
                continue;
            }
            tombstones = true;
        }
        keep[n++] = rec;
    }
    bool ok = rc == 0;
    p->records_in += seen;
    p->bytes_in += (int64_t)b->size;
    out_batch o = {.base = m->base_offset, .old_seg = sb->seg, .old_pos = sb->pos, .new_pos = -1,
                   .producer_id = b->producer_id, .count = n, .max_ts = m->max_timestamp,
                   .keep_empty = m->base_offset == p->last_base};
    if (ok && (n < seen || (tombstones && !has_horizon))) {
        if (aborted) p->aborted_removed += seen;
        o.kind = DROP;
        if (n > 0 || b->producer_id >= 0 || o.keep_empty) {
            int64_t horizon =
                tombstones ? (has_horizon ? b->base_timestamp : sat_add_i64(p->now_ms, p->delete_retention_ms)) : -1;
            uint8_t *nb = NULL;
            size_t nlen = 0;
            int brc;
            if (p->off_loop) { /* into the pass's buffers: it goes to the cleaned file at once */
                kp_batch_builder bb;
                kp_builder_begin_with(&bb, &p->scratch, b, kp_batch_codec(b), false, horizon);
                for (int32_t i = 0; i < n; i++) kp_builder_add(&bb, &keep[i]);
                brc = kp_builder_finish_into(&bb, &p->built, &p->scratch, &p->failed);
                nb = p->built.buf;
                nlen = p->built.len;
            } else {
                brc = kp_batch_rebuild(b, kp_batch_codec(b), keep, n, false, horizon, &nb, &nlen, &p->failed);
            }
            if (brc != 0) {
                ok = false;
            } else {
                o.kind = REWRITE;
                o.len = (int64_t)nlen;
                if (n > 0 && !(b->attributes & KP_ATTR_LOG_APPEND_TIME))
                    o.max_ts = kp_get_i64(nb + 35); /* the rebuilt header's max timestamp */
                if (p->off_loop) {
                    ok = keep_bytes(p, &o, nb, nlen);
                } else {
                    o.data = nb;
                }
            }
            if (tombstones && (p->next_due_ms < 0 || horizon < p->next_due_ms)) p->next_due_ms = horizon;
        }
        if (ok) {
            push(p, o);
            p->changed = true;
        } else {
            free(o.data);
        }
    } else {
        p->records_out += seen;
        p->bytes_out += (int64_t)b->size;
        if (ok && tombstones && (p->next_due_ms < 0 || b->base_timestamp < p->next_due_ms))
            p->next_due_ms = b->base_timestamp;
        if (ok && p->off_loop) {
            o.kind = KEEP;
            o.len = (int64_t)len;
            o.count = m->records_count;
            ok = keep_bytes(p, &o, data, len);
            if (ok) push(p, o);
        }
    }
    free(owned);
    return ok;
}

static bool rewrite_one(void *ctx, const stor_clean_batch *sb, const void *data, size_t len) {
    pass *p = ctx;
    int64_t written = stor_cleaning_size(p->io); /* the cleaned file's bytes: what this batch adds is written */
    kp_batch b;
    if (stop_here(p) || !stored_batch(p, data, len, &b)) return false;
    if (b.attributes & KP_ATTR_CONTROL) {
        p->records_in += b.records_count;
        p->records_out += b.records_count; /* markers stay: readers of the aborted index need them */
        p->bytes_in += (int64_t)len;
        p->bytes_out += (int64_t)len;
        if (p->off_loop) {
            out_batch o = {.base = sb->m.base_offset, .old_seg = sb->seg, .old_pos = sb->pos, .kind = KEEP,
                           .len = (int64_t)len, .max_ts = sb->m.max_timestamp, .count = sb->m.records_count,
                           .producer_id = b.producer_id};
            if (!keep_bytes(p, &o, data, len)) return false;
            push(p, o);
        }
    } else if (!rewrite_batch(p, sb, &b, data, len)) {
        return false;
    }
    p->pos = sb->m.last_offset + 1;
    throttle(p, (int64_t)len + (stor_cleaning_size(p->io) - written));
    return now_ns() < p->deadline_ns;
}

/*
 * Work until the deadline (a worker: none); true when the pass is over (done or failed). The
 * reads stop at a batch the callbacks refuse, so a range is over when pos reached its end, the
 * end moved (the map filled, min.compaction.lag.ms) or pos did not move (nothing left to read).
 */
static bool pass_step(pass *p, uint64_t deadline_ns) {
    p->deadline_ns = deadline_ns;
    while (!p->failed && p->ph != DONE) {
        int64_t before = p->pos, end = p->end;
        bool scan = p->ph == SCAN;
        if (stor_cleaning_read(p->io, p->pos, p->end, scan ? scan_batch : rewrite_one, p) != 0 && !p->failed)
            p->failed = stor_cleaning_err(p->io);
        if (p->failed) break;
        if (p->pos >= p->end || p->end != end || p->pos == before) {
            if (!scan || p->map.n == 0) { /* rewritten; or nothing keyed in the dirty part: no record can go */
                p->ph = DONE;
            } else {
                p->ph = REWRITE_ALL;
                p->pos = p->start;
            }
        }
        if (now_ns() >= deadline_ns) break;
    }
    if (p->ph == DONE && !p->failed && p->off_loop && stor_cleaning_finish(p->io) != 0)
        p->failed = stor_cleaning_err(p->io);
    return p->failed || p->ph == DONE;
}

/* ---- on the loop ---- */

/* The swap: one batch row, into the open transaction. 0, or -1 (stor_errmsg). */
static int swap_one(srv *s, pass *p, const out_batch *o) {
    stor *st = s->st;
    bool drop = o->kind == DROP;
    if (o->kind == REWRITE && o->count == 0 && !o->keep_empty) { /* emptied: only a producer's newest data batch stays */
        int64_t last = -1;
        int found = stor_producer_last_data(st, p->topic_id, p->part, o->producer_id, &last);
        if (found < 0) return -1;
        drop = !found || last != o->base;
    }
    if (drop) {
        int rc = p->off_loop ? stor_batch_delete_at(st, p->io, o->base, o->old_seg, o->old_pos)
                             : stor_batch_delete(st, p->topic_id, p->part, o->base);
        if (rc < 0) return -1;
        if (p->off_loop && rc == 0) p->left_alone++;
        else p->batches_removed++;
        return 0;
    }
    int rc = p->off_loop ? stor_batch_move(st, p->io, o->base, o->old_seg, o->old_pos, p->seg, o->new_pos, o->len,
                                           o->max_ts, o->count)
                         : stor_batch_replace(st, p->topic_id, p->part, o->base, o->max_ts, o->count, o->data,
                                              (size_t)o->len);
    if (rc < 0) return -1;
    if (rc == 0) p->left_alone++;
    if (o->kind == REWRITE) {
        p->records_out += o->count;
        p->bytes_out += o->len;
    }
    return 0;
}

static void log_stopped(pass *p, const char *why) {
    log_warn("compaction of %s-%d stopped: %s; %s, the next pass starts over", p->name, p->part, why,
             p->commits ? "what it swapped in so far stays" : "nothing of it was swapped in");
}

/* The loop's commit, which the swap's rows join; a failure ends the pass (survive_failed_commit rolls it back). */
static bool swap_commit(topic_cleaner *c, pass *p) {
    c->p = NULL; /* topic_cleaner_abort, from a failed commit, must not free it under us */
    if (topic_commit_now(c->s) != 0) {
        log_stopped(p, "a storage commit holding its rewrites failed");
        return false;
    }
    c->p = p;
    p->commits++;
    return true;
}

/*
 * The pass's result swapped in, on the loop: the cleaned file adopted, then each batch row in
 * offset order, until the deadline (SWAP_STEP_NS for a worker's pass, log.cleaner.slice.ms for
 * an in-memory database's; none for topic_cleaner_run_now). Rows
 * past the deadline wait for the next loop iteration, after a commit of those before: a pass of
 * a few hundred thousand small batches would otherwise hold the loop for as many row updates.
 * Each commit is whole on its own: the segment row before any row pointing into it, each batch
 * row at complete bytes (old or new), oldest first (a tombstone goes no earlier than the older
 * values it hides), the checkpoint with the last. 1 swapped in, 0 more to do, -1 stopped (logged).
 */
static int pass_swap(topic_cleaner *c, pass *p, uint64_t deadline_ns) {
    srv *s = c->s;
    stor *st = s->st;
    partition *part = pass_partition(s, p);
    if (!part) {
        log_info("compaction: the partition being compacted was deleted; the pass stops");
        return -1;
    }
    if (p->failed) {
        log_stopped(p, p->failed);
        return -1;
    }
    uint64_t t0 = now_ns();
    bool ok = true;
    /* every batch of the range removed (aborted, tombstones past their horizon): nothing to adopt */
    if (p->changed && p->off_loop && !p->adopted && stor_cleaning_size(p->io) > 0) {
        ok = stor_cleaning_adopt(st, p->io, &p->seg) == 0;
        p->adopted = ok;
    }
    uint64_t ta = now_ns();
    p->adopt_ns += ta - t0;
    if (p->changed)
        while (ok && p->swap_at < p->nout) {
            ok = swap_one(s, p, &p->out[p->swap_at++]) == 0;
            if ((p->swap_at & 1) == 0 && now_ns() >= deadline_ns) break;
        }
    p->rows_ns += now_ns() - ta;
    bool last = !p->changed || p->swap_at >= p->nout;
    if (ok && last) ok = stor_cleaned_set(st, p->topic_id, p->part, p->end) == 0;
    if (!ok) {
        /* what the swap did so far commits with the loop's next commit: whole, as above, and no checkpoint */
        char why[512];
        snprintf(why, sizeof why, "%s", stor_errmsg(st));
        log_stopped(p, why);
        return -1;
    }
    uint64_t t1 = now_ns();
    if (!swap_commit(c, p)) return -1;
    uint64_t t2 = now_ns();
    p->stall_ns += t2 - t0;
    p->commit_ns += t2 - t1;
    if (t2 - t0 > p->step_max_ns) p->step_max_ns = t2 - t0;
    if (!last) return 0;
    part->clean_due_ms = p->next_due_ms;
    part->clean_next_ms = p->more ? 0 : clk_now_ms() + s->cfg->log_cleaner_backoff_ms;
    if (!p->more) part->clean_sweep = p->sweep;
    double ms = (double)(now_ns() - p->started_ns) / 1e6;
    log_info("compaction: %s-%d offsets [%lld, %lld): %lld records -> %lld, %lld bytes -> %lld, %lld tombstone(s) "
             "and %lld aborted record(s) removed, %lld batch(es) removed, %zu keys, in %.1f ms",
             p->name, p->part, (long long)p->start, (long long)p->end, (long long)p->records_in,
             (long long)p->records_out, (long long)p->bytes_in, (long long)p->bytes_out,
             (long long)p->tombstones_removed, (long long)p->aborted_removed, (long long)p->batches_removed,
             p->map.n, ms);
    log_debug("compaction: %s-%d: %.1f ms on a %s (%.1f ms of it asleep: log.cleaner.io.max.bytes.per.second); "
              "on the loop %.1f ms, %.1f ms of it the commits of the swap of %d "
              "batch(es) in %d step(s)", p->name, p->part, (double)p->worked_ns / 1e6,
              p->off_loop ? "worker thread" : "loop (in-memory database)", (double)p->throttled_ns / 1e6,
              (double)p->stall_ns / 1e6,
              (double)p->commit_ns / 1e6, p->changed ? p->nout : 0, p->commits);
    log_debug("compaction: %s-%d: the swap on the loop: adopting the cleaned file %.3f ms, moving the rows %.3f ms, "
              "the commits %.3f ms (with the dead segments' retirement), the longest step %.3f ms", p->name, p->part,
              (double)p->adopt_ns / 1e6, (double)p->rows_ns / 1e6, (double)p->commit_ns / 1e6,
              (double)p->step_max_ns / 1e6);
    if (p->left_alone)
        log_info("compaction: %s-%d: %d batch(es) the log changed while the pass ran (retention, DeleteRecords) "
                 "were left as they are", p->name, p->part, p->left_alone);
    s->compactions++;
    return 1;
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

/* A pass over the dirtiest partition due, its inputs read on the loop; NULL when none is due. */
static pass *start_pass(topic_cleaner *c, bool force) {
    srv *s = c->s;
    stor_clean_state cs = {0};
    partition *part = choose(s, force, c->sweep, &cs);
    if (!part) return NULL;
    topic *t = part->topic;
    pass *p = xcalloc(1, sizeof *p);
    p->c = c;
    p->sweep = c->sweep;
    p->topic_id = t->id;
    memcpy(p->uuid, t->uuid, 16);
    p->part = part->index;
    p->name = xstrdup(t->name);
    p->start = part->log_start;
    p->end = topic_lso(part);
    p->dirty_from = cs.cleaned_to > p->start ? cs.cleaned_to : p->start;
    if (p->dirty_from > p->end) p->dirty_from = p->end;
    p->pos = p->dirty_from;
    p->now_ms = clk_now_ms();
    bool d;
    const char *v = topic_config_value(s, t, "delete.retention.ms", &d);
    p->delete_retention_ms = v ? strtoll(v, NULL, 10) : 86400000;
    v = topic_config_value(s, t, "min.compaction.lag.ms", &d);
    p->min_lag_ms = v ? strtoll(v, NULL, 10) : 0;
    p->map = (key_map){.max_bytes = (size_t)s->cfg->log_cleaner_dedupe_buffer_size};
    p->io_rate = s->cfg->log_cleaner_io_max_bytes_per_second;
    uint64_t key[2] = {0, 0};
    if (getrandom(key, sizeof key, 0) != (ssize_t)sizeof key) /* never short for 16 bytes once the pool is up */
        key[0] = now_ns(), key[1] = (uint64_t)(uintptr_t)p;
    p->map.k0 = key[0];
    p->map.k1 = key[1];
    p->next_due_ms = -1;
    p->started_ns = now_ns();
    p->last_base = -1;
    if (part->end > 0 &&
        stor_batch_read(s->st, t->id, part->index, part->end - 1, INT64_MAX, last_batch, &p->last_base) != 0) {
        log_warn("compaction of %s-%d: reading its last batch: %s", t->name, part->index, stor_errmsg(s->st));
        part->clean_next_ms = clk_now_ms() + s->cfg->log_cleaner_backoff_ms;
        pass_free(p);
        return NULL;
    }
    part->clean_due_ms = -1;
    if (stor_txn_aborted_read(s->st, t->id, part->index, p->start, aborted_entry, p) != 0) {
        log_warn("compaction of %s-%d: reading its aborted transactions: %s", t->name, part->index,
                 stor_errmsg(s->st));
        part->clean_next_ms = clk_now_ms() + s->cfg->log_cleaner_backoff_ms;
        pass_free(p);
        return NULL;
    }
    p->io = stor_cleaning_new(s->st, t->id, part->index, ++c->seq);
    p->off_loop = stor_cleaning_off_loop(p->io);
    /* with no new data, a pass for due tombstones maps nothing and rewrites all (the map is empty) */
    p->ph = p->dirty_from < p->end ? SCAN : REWRITE_ALL;
    if (p->ph == REWRITE_ALL) p->pos = p->start;
    log_info("compaction: %s-%d starts: offsets [%lld, %lld), uncompacted from %lld (%lld of %lld bytes)", t->name,
             part->index, (long long)p->start, (long long)p->end, (long long)p->dirty_from, (long long)cs.dirty_bytes,
             (long long)cs.bytes);
    return p;
}

/* ---- the worker ---- */

static void work(pass *p) {
    uint64_t t0 = now_ns();
    p->io_from_ns = t0;
    pass_step(p, UINT64_MAX);
    pass_free_work(p); /* here, not in the loop's pass_free: a free of a big block takes the arena lock too */
    p->worked_ns += now_ns() - t0;
    atomic_store(&p->over, true);
}

/*
 * This thread only, once: SCHED_IDLE runs it only when nothing else wants the core (Linux's
 * sched(7)); where that is refused, nice 19, which Linux keeps per thread (setpriority(2), BUGS).
 * Either is unprivileged, and lowered for good; nothing else ever runs on this thread.
 */
static void lower_priority(void) {
#ifdef SCHED_IDLE
    struct sched_param sp = {.sched_priority = 0};
    if (sched_setscheduler(0, SCHED_IDLE, &sp) == 0) return;
#endif
#ifdef __linux__
    (void)setpriority(PRIO_PROCESS, (id_t)gettid(), 19);
#endif
}

/* A byte to wake the other side; a full pipe already holds bytes that wake it. */
static void poke(int fd) {
    ssize_t n;
    do n = write(fd, "x", 1);
    while (n < 0 && errno == EINTR);
}

static void thread_main(void *arg) {
    cleaner_thread *th = arg;
    lower_priority();
    for (;;) {
        char b;
        ssize_t n = read(th->wake[0], &b, 1);
        if (n < 0 && errno == EINTR) continue;
        pass *p = atomic_exchange(&th->given, NULL);
        if (p) {
            work(p); /* a stop or an abort set p->cancel: it stops at its next batch */
            atomic_store(&th->done, p);
            poke(th->back[1]);
            continue;
        }
        if (n <= 0 || atomic_load(&th->quit)) break; /* quit, with nothing handed over */
    }
    atomic_store(&th->exited, true);
    poke(th->back[1]);
}

static void on_back(uv_poll_t *h, int status, int events);

static void close_pipes(cleaner_thread *th) {
    for (int i = 0; i < 2; i++) {
        if (th->wake[i] >= 0) close(th->wake[i]);
        if (th->back[i] >= 0) close(th->back[i]);
    }
}

/* The cleaner's thread, its pipes and the loop's poll of them; false (logged) when they could not be had. */
static bool thread_start(topic_cleaner *c) {
    cleaner_thread *th = xcalloc(1, sizeof *th);
    th->wake[0] = th->wake[1] = th->back[0] = th->back[1] = -1;
    atomic_init(&th->given, NULL);
    atomic_init(&th->done, NULL);
    atomic_init(&th->quit, false);
    atomic_init(&th->exited, false);
    const char *why = NULL;
    if (pipe2(th->wake, O_CLOEXEC) != 0 || pipe2(th->back, O_CLOEXEC | O_NONBLOCK) != 0 ||
        fcntl(th->wake[1], F_SETFL, O_NONBLOCK) != 0)
        why = strerror(errno);
    else if (uv_poll_init(c->s->loop, &c->back, th->back[0]) != 0)
        why = "cannot poll its pipe";
    if (why) {
        log_warn("compaction: no thread for the cleaner (%s); it looks again after log.cleaner.backoff.ms", why);
        close_pipes(th);
        free(th);
        return false;
    }
    c->back.data = c;
    uv_poll_start(&c->back, UV_READABLE, on_back);
    uv_unref((uv_handle_t *)&c->back);
    c->th = th;
    if (uv_thread_create(&th->id, thread_main, th) != 0) abort(); /* as uv_queue_work's threadpool would */
    return true;
}

/* The pass to the cleaner's thread, which is started with the first; false: no thread (logged). */
static bool hand_over(topic_cleaner *c, pass *p) {
    if (!c->th && !thread_start(c)) return false;
    atomic_store(&c->th->given, p);
    poke(c->th->wake[1]);
    return true;
}

static void on_timer(uv_timer_t *h);
static void on_idle(uv_idle_t *h);
static void after(pass *p);

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

/* Start the next pass due (on a worker, or in slices on the loop); false when none is. */
static bool launch(topic_cleaner *c) {
    pass *p = start_pass(c, false);
    if (!p) return false;
    if (p->off_loop && !hand_over(c, p)) {
        partition *part = pass_partition(c->s, p);
        if (part) part->clean_next_ms = clk_now_ms() + c->s->cfg->log_cleaner_backoff_ms;
        pass_free(p);
        return false;
    }
    c->p = p;
    if (!p->off_loop) {
        uv_idle_start(&c->idle, on_idle);
    }
    return true;
}

/* The pass under way is over (swapped in or stopped): the next one due at once, else the backoff. */
static void pass_over(topic_cleaner *c, pass *p) {
    if (c->p == p) c->p = NULL;
    pass_free(p);
    uv_idle_stop(&c->idle);
    if (!launch(c)) arm(c);
}

static uint64_t slice_deadline(topic_cleaner *c) {
    return now_ns() + (uint64_t)c->s->cfg->log_cleaner_slice_ms * 1000000u;
}

/*
 * A worker's pass is swapped in in steps of this much of the loop's time in row moves, one
 * commit each: moving a batch row takes ~6 us (its triggers keep the segments' and the
 * partition's counts), so a 64 MB pass of ~70 batches held the loop ~0.5 ms in one step. With
 * the step's commit and the dead segments' renames after it, a step holds the loop ~0.3 ms at
 * most. Each commit is whole on its own (pass_swap). An in-memory database's pass keeps
 * log.cleaner.slice.ms: its swap writes the bytes too.
 */
#define SWAP_STEP_NS 120000u

static uint64_t swap_deadline(topic_cleaner *c, const pass *p) {
    uint64_t slice = slice_deadline(c), step = now_ns() + SWAP_STEP_NS;
    return p->off_loop && step < slice ? step : slice;
}

static void after(pass *p) {
    topic_cleaner *c = p->c;
    p->after_ran = true;
    if (!c || p->reported) { /* the cleaner stopped, or topic_cleaner_run_now took the result */
        pass_free(p);
        return;
    }
    if (atomic_load(&p->cancel)) { /* topic_cleaner_abort said why */
        pass_over(c, p);
        return;
    }
    int r = pass_swap(c, p, swap_deadline(c, p));
    if (r == 0 && c->p == p) uv_idle_start(&c->idle, on_idle); /* the rest of the swap, a slice per iteration */
    else pass_over(c, p);
}

/*
 * A slice per loop iteration, on an idle handle: of an in-memory database's pass, then of a
 * swap. The loop polls for I/O without blocking between slices, so requests are served in
 * between. A 0-ms timer would not do: libuv runs a timer re-armed from its own callback again in
 * the same iteration, so the whole pass would hold the loop.
 */
static void on_idle(uv_idle_t *h) {
    topic_cleaner *c = h->data;
    pass *p = c->p;
    if (!p) {
        uv_idle_stop(&c->idle);
        if (!launch(c)) arm(c);
        return;
    }
    uint64_t deadline = slice_deadline(c);
    if (!p->failed && p->ph != DONE) { /* an in-memory database's pass, on the loop */
        uint64_t t0 = now_ns();
        if (c->s->ndirty) topic_commit_now(c->s); /* produce appended meanwhile is acknowledged first */
        if (c->p != p) return;                     /* that commit failed and ended the pass */
        bool over = pass_step(p, deadline);
        p->stall_ns += now_ns() - t0;
        p->worked_ns += now_ns() - t0;
        if (!over) return;
    } else {
        deadline = swap_deadline(c, p);
    }
    int r = pass_swap(c, p, deadline);
    if (r != 0 || c->p != p) pass_over(c, p);
}

static void on_closed(uv_handle_t *h);

/* The thread handed a pass back, or ended (after topic_cleaner_stop: then it is joined here). */
static void on_back(uv_poll_t *h, int status, int events) {
    (void)status, (void)events;
    topic_cleaner *c = h->data;
    cleaner_thread *th = c->th;
    char buf[16];
    while (read(th->back[0], buf, sizeof buf) > 0) continue;
    bool exited = atomic_load(&th->exited); /* first: a result handed back before it is taken below */
    pass *p = atomic_exchange(&th->done, NULL);
    if (p) after(p);
    if (!exited) return;
    uv_thread_join(&th->id);
    uv_close((uv_handle_t *)&c->back, on_closed); /* stops the poll: its pipe may close */
    close_pipes(th);
    free(th);
    c->th = NULL;
}

static void on_timer(uv_timer_t *h) {
    topic_cleaner *c = h->data;
    if (!c->p && !launch(c)) arm(c); /* else the pass under way looks again when it ends */
}

/*
 * Dead segments' files (renamed .deleted), removed on libuv's threadpool one at a time
 * (stor_set_unlinker says why not on the loop). One at a time: freeing a file's page cache is
 * kernel work of a few milliseconds per 16 MiB, and a swap kills all of its partition's old
 * segments at once; removed side by side, they took every core of a 2-core machine and held the
 * loop ~6 ms after the swap. Kafka waits file.delete.delay.ms (60 s) and deletes them in its
 * scheduler's one thread (LocalLog.scala, deleteSegmentFiles).
 */
typedef struct unlink_queue {
    uv_loop_t *loop;
    uv_fs_t req;
    bool busy;
    char **paths;
    size_t n, cap, head;
    bool orphaned; /* the cleaner stopped: free the queue once it is empty */
} unlink_queue;

static void unlink_next(unlink_queue *q);

static void unlinked(uv_fs_t *r) {
    unlink_queue *q = r->data;
    uv_fs_req_cleanup(r);
    q->busy = false;
    unlink_next(q);
}

static void unlink_next(unlink_queue *q) {
    while (!q->busy && q->head < q->n) {
        char *path = q->paths[q->head++];
        q->req.data = q;
        q->busy = uv_fs_unlink(q->loop, &q->req, path, unlinked) == 0; /* else the next start removes it */
        free(path);
    }
    if (q->busy) return;
    q->n = q->head = 0;
    if (q->orphaned) {
        free(q->paths);
        free(q);
    }
}

static void unlink_off_loop(void *ctx, const char *path) {
    unlink_queue *q = ctx;
    XGROW(q->paths, q->cap, q->n + 1, 8);
    q->paths[q->n++] = xstrdup(path);
    unlink_next(q);
}

static void pool_nothing(uv_work_t *w) { (void)w; }
static void pool_started(uv_work_t *w, int status) {
    (void)status;
    free(w);
}

/*
 * libuv starts its threadpool at the first request queued to it, and the queuing thread waits
 * until every one of its threads has run (init_threads in libuv's src/threadpool.c). The first
 * such request was the first swap's dead segment: strace showed the loop waiting 0.5 ms there
 * for four new threads to be scheduled, longer on a busy machine. So the pool starts with the
 * cleaner, before any client is served, once per process.
 */
static void start_threadpool(uv_loop_t *loop) {
    static bool started;
    if (started) return;
    started = true;
    uv_work_t *w = xcalloc(1, sizeof *w);
    if (uv_queue_work(loop, w, pool_nothing, pool_started) != 0) free(w);
}

void topic_cleaner_start(srv *s) {
    if (!s->cfg->log_cleaner_enable) return;
    start_threadpool(s->loop);
    topic_cleaner *c = xcalloc(1, sizeof *c);
    c->s = s;
    /* a swap kills every old segment of its partition in one commit: their files go off the loop */
    c->unlinks = xcalloc(1, sizeof *c->unlinks);
    c->unlinks->loop = s->loop;
    stor_set_unlinker(s->st, unlink_off_loop, c->unlinks);
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
    if (!c || !c->p) return;
    pass *p = c->p;
    log_warn("compaction of %s-%d stopped: %s; the next pass starts over", p->name, p->part, why);
    if (p->off_loop && !p->after_ran) {
        /* the worker stops at its next batch; after() frees it and looks for the next pass */
        atomic_store(&p->cancel, true);
        return;
    }
    c->p = NULL; /* on_idle finds none and looks for the next pass */
    pass_free(p);
}

/* The pass under way, to its end, on this thread: a worker's is waited for, the rest run; its swap whole. */
static void finish_in_place(topic_cleaner *c) {
    pass *p = c->p;
    if (!p) return;
    uv_idle_stop(&c->idle);
    if (p->off_loop && !p->after_ran) {
        while (!atomic_load(&p->over)) uv_sleep(1);
        p->reported = true; /* after() only frees it */
        if (atomic_load(&p->cancel)) {
            c->p = NULL;
            return;
        }
        pass_swap(c, p, UINT64_MAX);
        c->p = NULL;
        return;
    }
    if (!p->failed && p->ph != DONE) pass_step(p, UINT64_MAX);
    pass_swap(c, p, UINT64_MAX);
    c->p = NULL;
    pass_free(p);
}

int topic_cleaner_run_now(srv *s, int max_passes, bool force) {
    topic_cleaner *c = s->cleaner;
    if (!c) return -1;
    uint64_t before = s->compactions;
    finish_in_place(c); /* the background pass under way finishes first */
    c->sweep = ++c->sweeps;
    for (int i = 0; i < max_passes; i++) {
        pass *p = start_pass(c, force);
        if (!p) break;
        c->p = p;
        uint64_t t0 = now_ns();
        pass_step(p, UINT64_MAX); /* on this thread: the caller waits for the answer anyway */
        p->worked_ns += now_ns() - t0;
        pass_swap(c, p, UINT64_MAX);
        c->p = NULL;
        pass_free(p);
    }
    c->sweep = 0;
    if (!uv_is_active((uv_handle_t *)&c->timer) && !c->p) arm(c);
    return (int)(s->compactions - before);
}

static void on_closed(uv_handle_t *h) {
    topic_cleaner *c = h->data;
    if (--c->closing == 0) free(c);
}

void topic_cleaner_stop(srv *s) {
    topic_cleaner *c = s->cleaner;
    if (!c) return;
    pass *p = c->p;
    if (p && p->off_loop && !p->after_ran) {
        /* the worker's result is dropped: after() frees it, without the cleaner */
        p->c = NULL;
        atomic_store(&p->cancel, true);
    } else {
        pass_free(p);
    }
    c->p = NULL;
    s->cleaner = NULL;
    stor_set_unlinker(s->st, NULL, NULL);
    c->unlinks->orphaned = true; /* what is queued still goes; the queue frees itself when it is empty */
    if (!c->unlinks->busy) unlink_next(c->unlinks);
    c->closing = c->th ? 3 : 2;
    uv_close((uv_handle_t *)&c->timer, on_closed);
    uv_close((uv_handle_t *)&c->idle, on_closed);
    if (c->th) {
        /*
         * Not waited for here, as the threadpool's worker was not: a pass under way stops at its
         * next batch, and on_back joins the thread and closes the handle once it ended. The
         * handle holds the loop until then, as the work request did.
         */
        atomic_store(&c->th->quit, true);
        poke(c->th->wake[1]);
        uv_ref((uv_handle_t *)&c->back);
    }
}
