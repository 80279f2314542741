/*
 * Idempotent producer state at start-up: each producer's newest data batches per partition, and
 * its newest marker. Kafka keeps this state in memory and writes a snapshot of it now and then,
 * and a start-up loads the newest snapshot and replays only the log after it (Apache Kafka
 * storage/src/main/java/org/apache/kafka/storage/internals/log/ProducerStateManager.java,
 * UnifiedLog.loadProducerState). Here the snapshot is a fold over the batch rows kept in
 * producer_snapshot (migration 18) up to producer_snapshot_end, brought up to date in a commit
 * every STOR_PRODUCER_SNAPSHOT_EVERY batches and at close, so a stored batch costs no index
 * row. Being derived from the batches, it says exactly what the batches would: a start-up after
 * kill -9 folds the batches past the snapshot. Removals trim it (migration 19): the log start
 * moving drops the rows of the producers it emptied (stor_batches.c) and the load skips the
 * entries below the partition's first batch; a rewritten batch marks its row stale and the load
 * reads its new columns back; only a removal of a batch a row holds from the middle of the
 * partition, or of its newest batch, drops the partition's snapshot (folded from its first batch).
 * A snapshot folds only the partitions whose rows changed since the last one.
 */
#include "stor_int.h"

#include <stdlib.h>
#include <string.h>

/* What the load hands on for one producer of a partition: its newest data batches and, when newest of all, a marker. */
typedef struct prod_entry {
    int64_t pid;
    stor_batch_meta data[STOR_PRODUCER_BATCHES_KEPT]; /* oldest first */
    int ndata;
    stor_batch_meta marker;
    bool marker_newest; /* the producer's newest batch is a transaction marker */
    bool touched;       /* changed since the snapshot: to be written */
    /*
     * Its undecided transaction's first offset, -1 for none: the first transactional data batch
     * past its newest marker (Kafka's ProducerStateEntry.currentTxnFirstOffset). Kept when
     * retention takes the transaction's batches, as Kafka keeps a producer with an open
     * transaction (ProducerStateEntry.isEmpty): the last stable offset stays held down.
     */
    int64_t txn_first;
} prod_entry;

/* One partition's producers, ordered by id. */
typedef struct prod_fold {
    prod_entry *e;
    int n, cap;
    bool has_snapshot;
    int64_t end;  /* offsets below it are in the fold */
    int64_t tail; /* batches read past the snapshot */
} prod_fold;

static prod_entry *fold_entry(stor *s, prod_fold *f, int64_t pid) {
    int lo = 0, hi = f->n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (f->e[mid].pid < pid) lo = mid + 1;
        else hi = mid;
    }
    if (lo < f->n && f->e[lo].pid == pid) return &f->e[lo];
    if (f->n == f->cap) {
        int cap = f->cap ? f->cap * 2 : 16;
        prod_entry *e = realloc(f->e, (size_t)cap * sizeof *e);
        if (!e) {
            stor_failf(s, "producer state: out of memory");
            return NULL;
        }
        f->e = e;
        f->cap = cap;
    }
    memmove(&f->e[lo + 1], &f->e[lo], (size_t)(f->n - lo) * sizeof *f->e);
    f->n++;
    memset(&f->e[lo], 0, sizeof f->e[lo]);
    f->e[lo].pid = pid;
    f->e[lo].txn_first = -1;
    return &f->e[lo];
}

/* One batch, in offset order. 0 or -1. */
static int fold_apply(stor *s, prod_fold *f, const stor_batch_meta *m) {
    if (m->producer_id < 0) return 0; /* not idempotent */
    prod_entry *e = fold_entry(s, f, m->producer_id);
    if (!e) return -1;
    if (m->base_sequence < 0) {
        e->marker = *m;
        e->marker_newest = true;
        e->txn_first = -1; /* decided */
    } else {
        if (m->transactional && e->txn_first < 0) e->txn_first = m->base_offset;
        if (e->ndata == STOR_PRODUCER_BATCHES_KEPT) {
            memmove(&e->data[0], &e->data[1], (STOR_PRODUCER_BATCHES_KEPT - 1) * sizeof e->data[0]);
            e->ndata--;
        }
        e->data[e->ndata++] = *m;
        e->marker_newest = false;
    }
    e->touched = true;
    return 0;
}

/* A snapshot row's blob: the metas the load hands on, in that order, 8 little-endian int64 each. */
#define META_BYTES (STOR_META_NCOLS * 8)

static void put64(uint8_t *p, int64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)((uint64_t)v >> (8 * i));
}

static int64_t get64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
    return (int64_t)v;
}

static void meta_encode(uint8_t *p, const stor_batch_meta *m) {
    int64_t v[STOR_META_NCOLS] = {m->base_offset,    m->last_offset,   m->max_timestamp, m->producer_id,
                                  m->producer_epoch, m->base_sequence, m->last_sequence, m->records_count};
    for (int i = 0; i < STOR_META_NCOLS; i++) put64(p + 8 * i, v[i]);
}

static void meta_decode(const uint8_t *p, stor_batch_meta *m) {
    m->base_offset = get64(p);
    m->last_offset = get64(p + 8);
    m->max_timestamp = get64(p + 16);
    m->producer_id = get64(p + 24);
    m->producer_epoch = (int16_t)get64(p + 32);
    m->base_sequence = (int32_t)get64(p + 40);
    m->last_sequence = (int32_t)get64(p + 48);
    m->records_count = (int32_t)get64(p + 56);
    m->transactional = false; /* the row's txn_first says what is open */
}

/* A stale row's entry (compaction rewrote one of its batches): those two columns from the batch row. 1, 0 gone, -1. */
static int batch_columns(stor *s, int64_t topic_id, int32_t partition, stor_batch_meta *m) {
    sqlite3_stmt *st = stor_stmt(s, STOR_PRODUCER_BATCH_AT);
    if (stor_bind_part(st, topic_id, partition) ||
        sqlite3_bind_int64(st, 3, m->base_offset))
        return stor_fail(s, "bind producer key");
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        m->max_timestamp = sqlite3_column_int64(st, 0);
        m->records_count = sqlite3_column_int(st, 1);
    }
    sqlite3_reset(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return stor_fail(s, "read a rewritten batch");
    return rc == SQLITE_ROW;
}

/* The snapshot of a partition (if any), then its batches past it. 0 or -1. */
static int fold_partition(stor *s, int64_t topic_id, int32_t partition, prod_fold *f) {
    f->n = 0;
    f->has_snapshot = false;
    f->end = 0;
    f->tail = 0;
    sqlite3_stmt *st = stor_stmt(s, STOR_PRODUCER_SNAP_END);
    if (stor_bind_part(st, topic_id, partition))
        return stor_fail(s, "bind producer key");
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        f->has_snapshot = true;
        f->end = sqlite3_column_int64(st, 0);
    }
    sqlite3_reset(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return stor_fail(s, "read producer snapshot end");

    int ret = 0;
    if (f->has_snapshot) {
        /* removals from the head leave a row's older entries behind (migration 19): skipped */
        int64_t head = INT64_MAX;
        st = stor_stmt(s, STOR_PRODUCER_HEAD);
        if (stor_bind_part(st, topic_id, partition))
            return stor_fail(s, "bind producer key");
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) head = sqlite3_column_int64(st, 0);
        sqlite3_reset(st);
        if (rc != SQLITE_ROW && rc != SQLITE_DONE) return stor_fail(s, "read the partition's first batch");

        st = stor_stmt(s, STOR_PRODUCER_SNAP_LOAD);
        if (stor_bind_part(st, topic_id, partition))
            return stor_fail(s, "bind producer key");
        while (ret == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
            int64_t pid = sqlite3_column_int64(st, 0);
            const uint8_t *b = sqlite3_column_blob(st, 1);
            int len = sqlite3_column_bytes(st, 1);
            bool stale = sqlite3_column_int(st, 2) != 0, changed = stale;
            if (len % META_BYTES) {
                ret = stor_failf(s, "producer snapshot of %lld-%d: a row of %d bytes", (long long)topic_id, partition,
                                 len);
                break;
            }
            for (int at = 0; ret == 0 && at < len; at += META_BYTES) {
                stor_batch_meta m;
                meta_decode(b + at, &m);
                if (m.base_offset < head) {
                    changed = true;
                    continue;
                }
                if (stale) {
                    int found = batch_columns(s, topic_id, partition, &m);
                    if (found < 0) ret = -1;
                    if (found <= 0) continue;
                }
                ret = fold_apply(s, f, &m);
            }
            prod_entry *e = ret == 0 ? fold_entry(s, f, pid) : NULL;
            if (!e) ret = -1;
            else {
                e->touched = changed; /* rewritten at the partition's next snapshot */
                e->txn_first = sqlite3_column_int64(st, 3);
            }
        }
        if (ret == 0 && rc != SQLITE_DONE) ret = stor_fail(s, "read producer snapshot");
        sqlite3_reset(st);
    }
    if (ret) return ret;

    st = stor_stmt(s, STOR_PRODUCER_TAIL);
    if (stor_bind_part(st, topic_id, partition) || sqlite3_bind_int64(st, 3, f->end))
        return stor_fail(s, "bind producer key");
    while (ret == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        stor_batch_meta m;
        stor_meta_from_row(st, 0, &m);
        m.transactional = sqlite3_column_int(st, STOR_META_NCOLS) != 0;
        ret = fold_apply(s, f, &m);
        f->end = m.last_offset + 1;
        f->tail++;
    }
    if (ret == 0 && rc != SQLITE_DONE) ret = stor_fail(s, "read batches past the producer snapshot");
    sqlite3_reset(st);
    return ret;
}

/* Whether the snapshot differs from the fold: batches past it, or entries the load changed. */
static bool fold_changed(const prod_fold *f) {
    if (f->tail) return true;
    for (int i = 0; i < f->n; i++)
        if (f->e[i].touched) return true;
    return false;
}

/*
 * What migration 19's triggers compare a removed or rewritten batch with. A row that holds only
 * an open transaction whose batches retention took spans its first offset: nothing of it is left
 * to remove, and the trim of the log start keeps rows with an open transaction.
 */
static void row_span(const prod_entry *e, int64_t *first, int64_t *last) {
    if (e->ndata == 0 && !e->marker_newest) {
        *first = *last = e->txn_first;
        return;
    }
    *first = e->ndata ? e->data[0].base_offset : e->marker.base_offset;
    *last = e->marker_newest ? e->marker.last_offset : e->data[e->ndata - 1].last_offset;
}

/* The producers the fold changed, and where it ends, into the snapshot. 0 or -1. */
static int fold_write(stor *s, int64_t topic_id, int32_t partition, const prod_fold *f) {
    sqlite3_stmt *st = stor_stmt(s, STOR_PRODUCER_SNAP_PUT);
    for (int i = 0; i < f->n; i++) {
        const prod_entry *e = &f->e[i];
        if (!e->touched) continue;
        if (e->ndata == 0 && !e->marker_newest && e->txn_first < 0) { /* its batches went from the head */
            sqlite3_stmt *del = stor_stmt(s, STOR_PRODUCER_SNAP_DEL);
            if (stor_bind_part(del, topic_id, partition) ||
                sqlite3_bind_int64(del, 3, e->pid))
                return stor_fail(s, "bind producer snapshot");
            if (stor_step_done(s, del, "remove producer snapshot")) return -1;
            continue;
        }
        uint8_t blob[(STOR_PRODUCER_BATCHES_KEPT + 1) * META_BYTES];
        int len = 0;
        for (int j = 0; j < e->ndata; j++, len += META_BYTES) meta_encode(blob + len, &e->data[j]);
        if (e->marker_newest) {
            meta_encode(blob + len, &e->marker);
            len += META_BYTES;
        }
        /* what migration 19's triggers compare a removed or rewritten batch with */
        int64_t first, last;
        row_span(e, &first, &last);
        if (stor_bind_part(st, topic_id, partition) ||
            sqlite3_bind_int64(st, 3, e->pid) || sqlite3_bind_int64(st, 4, first) || sqlite3_bind_int64(st, 5, last) ||
            sqlite3_bind_blob(st, 6, blob, len, SQLITE_TRANSIENT) || sqlite3_bind_int64(st, 7, e->txn_first))
            return stor_fail(s, "bind producer snapshot");
        if (stor_step_done(s, st, "write producer snapshot")) return -1;
    }
    st = stor_stmt(s, STOR_PRODUCER_SNAP_END_PUT);
    if (stor_bind_part(st, topic_id, partition) || sqlite3_bind_int64(st, 3, f->end))
        return stor_fail(s, "bind producer snapshot end");
    return stor_step_done(s, st, "write producer snapshot end");
}

typedef int (*partition_fn)(stor *s, int64_t topic_id, int32_t partition, prod_fold *f, void *ctx);

static int each_partition(stor *s, partition_fn fn, void *ctx) {
    prod_fold f = {0};
    sqlite3_stmt *st = stor_stmt(s, STOR_PRODUCER_PARTITIONS);
    int rc = SQLITE_DONE, ret = 0;
    while (ret == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t topic_id = sqlite3_column_int64(st, 0);
        int32_t partition = sqlite3_column_int(st, 1);
        ret = fold_partition(s, topic_id, partition, &f);
        if (ret == 0) ret = fn(s, topic_id, partition, &f, ctx);
    }
    if (ret == 0 && rc != SQLITE_DONE) ret = stor_fail(s, "load producer partitions");
    sqlite3_reset(st);
    free(f.e);
    return ret;
}

typedef struct load_ctx {
    stor_producer_fn fn;
    stor_txn_open_fn open_fn; /* NULL: not asked */
    void *ctx;
} load_ctx;

/* As the index by producer handed them on: per producer, its data batches oldest first, then a newest marker. */
static int load_one(stor *s, int64_t topic_id, int32_t partition, prod_fold *f, void *arg) {
    load_ctx *l = arg;
    s->producer_snap_due += f->tail; /* what the next snapshot spares the next start */
    if (fold_changed(f) && stor_producer_dirty(s, topic_id, partition)) return -1;
    for (int i = 0; i < f->n; i++) {
        const prod_entry *e = &f->e[i];
        for (int j = 0; j < e->ndata; j++) l->fn(l->ctx, topic_id, partition, &e->data[j]);
        if (e->marker_newest) l->fn(l->ctx, topic_id, partition, &e->marker);
        if (l->open_fn && e->txn_first >= 0) l->open_fn(l->ctx, topic_id, partition, e->pid, e->txn_first);
    }
    return 0;
}

int stor_load_producer_batches(stor *s, stor_producer_fn fn, void *ctx) {
    return stor_load_producer_state(s, fn, NULL, ctx);
}

int stor_load_producer_state(stor *s, stor_producer_fn fn, stor_txn_open_fn open_fn, void *ctx) {
    if (!fn) return stor_failf(s, "load producer batches: no callback");
    load_ctx l = {fn, open_fn, ctx};
    return each_partition(s, load_one, &l);
}

/*
 * The partitions whose rows changed since the snapshot, so that a snapshot folds those and not
 * every partition of the broker (each fold reads the partition's snapshot rows). Kept until the
 * commit holding the snapshot succeeds: a rolled-back snapshot leaves them due, and a partition
 * marked by a rolled-back append costs at most a fold that finds nothing to write. An open
 * addressing set, with the last key remembered: appends come in runs on one partition.
 */
typedef struct part_key {
    int64_t topic_id; /* 0: an empty slot (topic ids start at 1) */
    int32_t partition;
} part_key;

struct stor_dirty_parts {
    part_key *k;
    int n, cap; /* cap a power of two, at most half full */
    part_key last;
};

static bool dirty_put(struct stor_dirty_parts *d, int64_t topic_id, int32_t partition) {
    for (uint32_t i = (uint32_t)stor_part_hash(topic_id, partition) & (uint32_t)(d->cap - 1);; i = (i + 1) & (uint32_t)(d->cap - 1)) {
        if (d->k[i].topic_id == 0) {
            d->k[i] = (part_key){topic_id, partition};
            d->n++;
            return true;
        }
        if (d->k[i].topic_id == topic_id && d->k[i].partition == partition) return false;
    }
}

int stor_producer_dirty(stor *s, int64_t topic_id, int32_t partition) {
    struct stor_dirty_parts *d = s->producer_dirty;
    s->producer_snap_taken = false; /* a change after the transaction's snapshot: all stays due */
    if (d && d->n && d->last.topic_id == topic_id && d->last.partition == partition) return 0;
    if (!d) {
        d = s->producer_dirty = calloc(1, sizeof *d);
        if (!d) return stor_failf(s, "producer state: out of memory");
    }
    if (2 * (d->n + 1) > d->cap) {
        int cap = d->cap ? d->cap * 2 : 64;
        part_key *k = calloc((size_t)cap, sizeof *k), *old = d->k;
        if (!k) return stor_failf(s, "producer state: out of memory");
        int oldcap = d->cap;
        d->k = k;
        d->cap = cap;
        d->n = 0;
        for (int i = 0; i < oldcap; i++)
            if (old[i].topic_id) dirty_put(d, old[i].topic_id, old[i].partition);
        free(old);
    }
    dirty_put(d, topic_id, partition);
    d->last = (part_key){topic_id, partition};
    return 0;
}

void stor_producer_dirty_free(stor *s) {
    if (!s->producer_dirty) return;
    free(s->producer_dirty->k);
    free(s->producer_dirty);
    s->producer_dirty = NULL;
}

void stor_producer_snapshot_committed(stor *s) {
    s->producer_snap_taken = false;
    s->producer_snap_due = 0;
    struct stor_dirty_parts *d = s->producer_dirty;
    if (!d || !d->n) return;
    memset(d->k, 0, (size_t)d->cap * sizeof *d->k);
    d->n = 0;
}

/*
 * partitions.bytes counts the rows below bytes_end only (schema migration 21), and so do
 * segments.live and segments.used (migration 22): the rows this snapshot's partitions got since
 * go in with it, in the same commit, so that the readers' sums of the rows past bytes_end stay
 * short and a start after kill -9 finds the counts and bytes_end as they were. All of it in one
 * commit, or a kill between the statements would count the rows twice.
 */
typedef struct seg_fold {
    int64_t id, n, end;
} seg_fold;

static int seg_fold_write(stor *s, int64_t topic_id, int32_t partition, const seg_fold *g) {
    sqlite3_stmt *st = stor_stmt(s, STOR_SEGMENTS_FOLD);
    if (stor_bind_part(st, topic_id, partition) || sqlite3_bind_int64(st, 3, g->id) ||
        sqlite3_bind_int64(st, 4, g->n) || sqlite3_bind_int64(st, 5, g->end))
        return stor_fail(s, "fold segments: bind");
    return stor_step_done(s, st, "fold segments");
}

static int part_fold_rows(stor *s, int64_t topic_id, int32_t partition) {
    sqlite3_stmt *st = stor_stmt(s, STOR_FOLD_ROWS);
    if (stor_bind_part(st, topic_id, partition)) return stor_fail(s, "fold partition: bind");
    /* the segments those rows name: one or two but after a compaction's swap moved some of them */
    seg_fold segs[8];
    int nsegs = 0, rc, ret = 0;
    int64_t bytes = 0, end = -1;
    while (ret == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        bytes += sqlite3_column_int64(st, 2);
        end = sqlite3_column_int64(st, 3) + 1;
        if (sqlite3_column_type(st, 0) == SQLITE_NULL) continue; /* bytes in the row (memory, before migration 8) */
        int64_t id = sqlite3_column_int64(st, 0), e = sqlite3_column_int64(st, 1);
        int k = 0;
        while (k < nsegs && segs[k].id != id) k++;
        if (k == nsegs) {
            if (nsegs == (int)(sizeof segs / sizeof *segs)) {
                ret = seg_fold_write(s, topic_id, partition, &segs[--nsegs]);
                k = nsegs;
            }
            segs[nsegs++] = (seg_fold){.id = id};
        }
        segs[k].n++;
        if (e > segs[k].end) segs[k].end = e;
    }
    if (ret == 0 && rc != SQLITE_DONE) ret = stor_fail(s, "fold partition: read rows");
    sqlite3_reset(st);
    for (int k = 0; ret == 0 && k < nsegs; k++) ret = seg_fold_write(s, topic_id, partition, &segs[k]);
    if (ret || end < 0) return ret;
    st = stor_stmt(s, STOR_PARTITION_BYTES_FOLD);
    if (stor_bind_part(st, topic_id, partition) || sqlite3_bind_int64(st, 3, bytes) || sqlite3_bind_int64(st, 4, end))
        return stor_fail(s, "fold partition bytes: bind");
    return stor_step_done(s, st, "fold partition bytes");
}

int stor_part_fold(stor *s, int64_t topic_id, int32_t partition) {
    bool own = sqlite3_get_autocommit(s->db);
    if (own && sqlite3_exec(s->db, "SAVEPOINT part_fold", NULL, NULL, NULL) != SQLITE_OK)
        return stor_fail(s, "fold partition: savepoint");
    int ret = part_fold_rows(s, topic_id, partition);
    if (own) {
        if (ret) sqlite3_exec(s->db, "ROLLBACK TO part_fold", NULL, NULL, NULL);
        if (sqlite3_exec(s->db, "RELEASE part_fold", NULL, NULL, NULL) != SQLITE_OK && ret == 0)
            ret = stor_fail(s, "fold partition: release");
    }
    return ret;
}

static int key_cmp(const void *a, const void *b) {
    const part_key *x = a, *y = b;
    if (x->topic_id != y->topic_id) return x->topic_id < y->topic_id ? -1 : 1;
    return (x->partition > y->partition) - (x->partition < y->partition);
}

int stor_producer_snapshot(stor *s) {
    struct stor_dirty_parts *d = s->producer_dirty;
    int n = 0, ret = 0;
    part_key *keys = NULL;
    if (d && d->n) {
        keys = malloc((size_t)d->n * sizeof *keys);
        if (!keys) return stor_failf(s, "producer state: out of memory");
        for (int i = 0; i < d->cap; i++)
            if (d->k[i].topic_id) keys[n++] = d->k[i];
        qsort(keys, (size_t)n, sizeof *keys, key_cmp); /* in primary key order, as the b-trees are */
    }
    prod_fold f = {0};
    for (int i = 0; ret == 0 && i < n; i++) {
        ret = fold_partition(s, keys[i].topic_id, keys[i].partition, &f);
        if (ret == 0 && fold_changed(&f)) ret = fold_write(s, keys[i].topic_id, keys[i].partition, &f);
        if (ret == 0) ret = stor_part_fold(s, keys[i].topic_id, keys[i].partition);
    }
    free(f.e);
    free(keys);
    if (ret) return ret;
    s->producer_snap_taken = true;
    /* outside a transaction each statement committed on its own */
    if (sqlite3_get_autocommit(s->db)) stor_producer_snapshot_committed(s);
    return 0;
}

/*
 * Compaction asks this for every emptied batch of an idempotent producer. Without an index a
 * query would walk the partition back from its end to the producer's newest batch, a long walk
 * for a producer idle for long (and each producer restart is a new id), once per batch. So the
 * partition's fold is kept between calls and brought forward by the batches appended since:
 * compaction's own removals never take a producer's newest data batch, and a removal by
 * retention takes everything below it. Dropped at every commit or rollback (a rolled-back
 * append's offsets are used again) and for another partition.
 */
struct stor_producer_cache {
    prod_fold f;
    int64_t topic_id;
    int32_t partition;
    uint64_t commit_seq;
};

void stor_producer_cache_free(stor *s) {
    if (!s->producer_cache) return;
    free(s->producer_cache->f.e);
    free(s->producer_cache);
    s->producer_cache = NULL;
}

int stor_producer_last_data(stor *s, int64_t topic_id, int32_t partition, int64_t producer_id, int64_t *base_offset) {
    stor_producer_cache *c = s->producer_cache;
    if (c && (c->topic_id != topic_id || c->partition != partition || c->commit_seq != s->commit_seq)) {
        stor_producer_cache_free(s);
        c = NULL;
    }
    if (!c) {
        c = calloc(1, sizeof *c);
        if (!c) return stor_failf(s, "producer state: out of memory");
        if (fold_partition(s, topic_id, partition, &c->f)) {
            free(c->f.e);
            free(c);
            return -1;
        }
        c->topic_id = topic_id;
        c->partition = partition;
        c->commit_seq = s->commit_seq;
        s->producer_cache = c;
    } else {
        /* the batches appended since */
        sqlite3_stmt *st = stor_stmt(s, STOR_PRODUCER_TAIL);
        if (stor_bind_part(st, topic_id, partition) ||
            sqlite3_bind_int64(st, 3, c->f.end))
            return stor_fail(s, "bind producer key");
        int rc, ret = 0;
        while (ret == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
            stor_batch_meta m;
            stor_meta_from_row(st, 0, &m);
            m.transactional = sqlite3_column_int(st, STOR_META_NCOLS) != 0;
            ret = fold_apply(s, &c->f, &m);
            c->f.end = m.last_offset + 1;
        }
        if (ret == 0 && rc != SQLITE_DONE) ret = stor_fail(s, "read batches past the producer snapshot");
        sqlite3_reset(st);
        if (ret) {
            stor_producer_cache_free(s);
            return -1;
        }
    }
    for (int i = 0; i < c->f.n; i++) {
        if (c->f.e[i].pid != producer_id) continue;
        if (c->f.e[i].ndata == 0) return 0;
        *base_offset = c->f.e[i].data[c->f.e[i].ndata - 1].base_offset;
        return 1;
    }
    return 0;
}
