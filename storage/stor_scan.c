/*
 * A partition's segment files read back without the database: the record batches they hold,
 * as the index rows a rebuild writes (stor_rebuild.c).
 *
 * Segments hold self-describing batches (record batch v2: offsets, producer fields and a
 * CRC-32C in each header), so the index can be derived from them the way Kafka rebuilds a
 * log's offset index and producer state from its .log files after an unclean shutdown
 * (core/src/main/scala/kafka/log/LogLoader.scala, recoverSegment). Files are read in id order,
 * batch by batch; a length that runs past the file or a header that does not parse ends that
 * file, and what follows is counted as dropped with the reason. A batch whose CRC fails but
 * whose frame (base offset and length, which the CRC does not cover) leads to the next batch is
 * dropped alone: the batches after it are read on, so one scribbled batch costs only itself.
 *
 * Two copies of the same offsets can both be on disk: the log cleaner appends a rewritten batch
 * (same base offset, fewer records) to the partition's newest segment, and the old copy stays
 * in its segment until no row points into it (stor_compact.c). Appends only ever go to the end,
 * so of two batches whose offsets overlap the one read later is the newer: it wins and the
 * other is counted as superseded. Batches that end before the partition's log start (when the
 * database still knows it) were removed by retention or DeleteRecords and stay removed.
 */
#include "stor_int.h"

#include "kp_batch.h"
#include "kp_mem.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Sequence numbers wrap from INT32_MAX to 0 (DefaultRecordBatch.incrementSequence), as broker/topic/append.c. */
static int32_t seq_add(int32_t seq, int32_t delta) {
    if (seq > INT32_MAX - delta) return delta - (INT32_MAX - seq) - 1;
    return seq + delta;
}

static int cmp_id(const void *a, const void *b) {
    int64_t x = ((const stor_scan_seg *)a)->id, y = ((const stor_scan_seg *)b)->id;
    return x < y ? -1 : x > y;
}

/* The order batches were appended in: segment id, then position. */
static int cmp_appended(const void *a, const void *b) {
    const stor_scan_batch *x = a, *y = b;
    if (x->seg != y->seg) return x->seg < y->seg ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* The segment files of pdir (<id>.log, id > 0), in id order. */
static int list_segments(const char *pdir, stor_scan *out, char *err, size_t errlen) {
    DIR *d = opendir(pdir);
    if (!d) {
        stor_errf(err, errlen, "open %s: %s", pdir, strerror(errno));
        return -1;
    }
    struct dirent *e;
    size_t cap = 0;
    while ((e = readdir(d))) {
        char *end = NULL;
        long long id = strtoll(e->d_name, &end, 10);
        if (id <= 0 || !end || strcmp(end, ".log") != 0) continue;
        XGROW(out->segs, cap, out->nsegs + 1, 8);
        out->segs[out->nsegs++] = (stor_scan_seg){.id = id, .limit = -1};
    }
    closedir(d);
    if (out->nsegs) qsort(out->segs, out->nsegs, sizeof *out->segs, cmp_id);
    return 0;
}

static uint8_t *read_file(const char *path, size_t *len, char *err, size_t errlen) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        stor_errf(err, errlen, "open %s: %s", path, strerror(errno));
        if (fd >= 0) close(fd);
        return NULL;
    }
    size_t n = (size_t)sb.st_size, got = 0;
    uint8_t *buf = xmalloc(n ? n : 1);
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r <= 0) break;
        got += (size_t)r;
    }
    close(fd);
    *len = got;
    return buf;
}

/* One file's batches, appended to out->b; where its whole, sound batches end goes to g->valid. */
static void scan_file(const char *pdir, stor_scan_seg *g, stor_scan *out, size_t *cap, char *err, size_t errlen) {
    char path[1200];
    snprintf(path, sizeof path, "%s/%020lld.log", pdir, (long long)g->id);
    size_t len = 0;
    uint8_t *buf = read_file(path, &len, err, errlen);
    if (!buf) {
        snprintf(g->why, sizeof g->why, "%s", err);
        return;
    }
    g->size = (int64_t)len;
    /* bytes past the end the database last committed for this file were never acknowledged */
    size_t end = g->limit >= 0 && (size_t)g->limit < len ? (size_t)g->limit : len;
    size_t pos = 0, valid = 0;
    g->bad_from = -1;
    for (;;) {
        size_t at = pos;
        kp_batch b;
        const char *why = NULL;
        int got = kp_batch_next(buf, end, &pos, &b, &why);
        if (got == 0) break;
        if (got < 0 || !kp_batch_crc_ok(&b)) {
            if (!g->why[0]) snprintf(g->why, sizeof g->why, "at byte %zu: %s", at, got < 0 && why ? why : "CRC mismatch");
            if (g->bad_from < 0) g->bad_from = (int64_t)at;
            if (got < 0) {
                g->dropped += (int64_t)(end - at);
                break;
            }
            g->dropped += (int64_t)b.size;
            continue;
        }
        valid = pos;
        XGROW(out->b, *cap, out->n + 1, 256);
        stor_scan_batch *k = &out->b[out->n++];
        *k = (stor_scan_batch){
            .seg = g->id,
            .pos = (int64_t)at,
            .size = (int64_t)b.size,
            .base_offset = b.base_offset,
            .last_offset = kp_batch_last_offset(&b),
            .max_timestamp = b.max_timestamp,
            .producer_id = b.producer_id,
            .producer_epoch = b.producer_epoch,
            .base_sequence = b.base_sequence,
            .last_sequence = b.producer_id >= 0 ? seq_add(b.base_sequence, b.last_offset_delta) : -1,
            .records_count = b.records_count,
            .attributes = b.attributes,
            .marker = (b.attributes & KP_ATTR_CONTROL) ? kp_batch_marker_type(&b) : -1,
        };
    }
    g->valid = (int64_t)valid;
    g->end = (int64_t)end;
    g->uncommitted = (int64_t)(len - end);
    free(buf);
}

/* Offset order; of two batches at the same base offset, the newer (appended later) first. */
static int cmp_offset_newest(const void *a, const void *b) {
    const stor_scan_batch *x = a, *y = b;
    if (x->base_offset != y->base_offset) return x->base_offset < y->base_offset ? -1 : 1;
    return -cmp_appended(a, b);
}

static bool newer(const stor_scan_batch *x, const stor_scan_batch *y) { return cmp_appended(x, y) > 0; }

/*
 * The batches no newer batch overlaps, in offset order, without those that end before
 * log_start; counts what went. One pass over offset order with the kept ones as a stack: a
 * batch that overlaps the top either loses (it is older) or pops it.
 */
static void keep_newest(stor_scan *out, int64_t log_start) {
    if (out->n) qsort(out->b, out->n, sizeof *out->b, cmp_offset_newest);
    size_t nk = 0;
    for (size_t i = 0; i < out->n; i++) {
        stor_scan_batch b = out->b[i];
        if (b.last_offset < log_start) {
            out->below_start++;
            continue;
        }
        bool lost = false;
        while (nk && out->b[nk - 1].last_offset >= b.base_offset) {
            if (newer(&out->b[nk - 1], &b)) {
                lost = true;
                break;
            }
            nk--;
            out->superseded++;
        }
        if (lost) {
            out->superseded++;
            continue;
        }
        out->b[nk++] = b;
    }
    out->n = nk;
    for (size_t i = 0; i < out->n; i++) out->records += out->b[i].records_count;
}

int stor_scan_partition(const char *pdir, int64_t log_start, stor_scan_limit_fn limit, void *ctx, stor_scan *out,
                        char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    if (list_segments(pdir, out, err, errlen)) return -1;
    size_t cap = 0;
    for (size_t i = 0; i < out->nsegs; i++) {
        stor_scan_seg *g = &out->segs[i];
        if (limit) g->limit = limit(ctx, g->id);
        char why[300] = "";
        scan_file(pdir, g, out, &cap, why, sizeof why);
        out->dropped_bytes += g->dropped;
    }
    keep_newest(out, log_start);
    return 0;
}

void stor_scan_free(stor_scan *s) {
    free(s->b);
    free(s->segs);
    memset(s, 0, sizeof *s);
}
