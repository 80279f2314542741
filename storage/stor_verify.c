/*
 * Segment files checked against the index before a start uses them (storage.verify), and the
 * one test of "these bytes are the batch this row names" that start-up, reads, the check after
 * a reboot (stor_segments.c) and salvage (stor_salvage.c) share.
 *
 * The batch rows say where each batch's bytes are. A segment file that was truncated, emptied,
 * swapped with another or written over went unnoticed until a Fetch read it; that partition
 * then answered KAFKA_STORAGE_ERROR to every Fetch for good and its consumers hung, or bytes
 * written over were served as they were. So before stor_recover touches any file (its
 * truncation to segments.used would cut a swapped-in file's bytes), each segment the rows name
 * is checked: it exists and is long enough for its rows; the rows do not overlap, in offsets
 * within a partition nor in bytes within a file; and the newest batch in the file (start) or
 * every batch (full) reads back as the batch its row names (offsets, length) with its CRC-32C
 * holding. The cost of start is one pass over the rows' columns and one read per segment file.
 * A mismatch refuses the start, naming the file, as database damage does (broker/lifecycle.c);
 * nothing is written, so the files stay as they were for a restore or a salvage.
 *
 * After a restart of the operating system with storage.sync normal or full, the bytes past a
 * segment's synced mark may have gone with the page cache: stor_recover reads those back and
 * removes what fails, as Kafka recovers a log after an unclean shutdown, so they are left to it.
 * Everything up to the mark, and everything when the system did not restart (a kill -9 keeps
 * the page cache), must be there.
 */
#include "stor_int.h"

#include "kp.h"
#include "kp_batch.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Where a v2 batch's header keeps what a row is compared with (Kafka's DefaultRecordBatch.java). */
#define HDR_BASE_OFFSET 0
#define HDR_BATCH_LENGTH 8
#define HDR_MAGIC 16
#define HDR_LAST_OFFSET_DELTA 23

const char *stor_batch_unsound(const uint8_t *data, size_t len, int64_t base, int64_t last, char *why, size_t n) {
    if (len == 0) {
        snprintf(why, n, "is empty");
        return why;
    }
    if (len < KP_BATCH_HEADER_SIZE) {
        snprintf(why, n, "is %zu bytes, shorter than a batch header", len);
        return why;
    }
    /* the header alone says whose batch this is, even when its length does not fit the row's */
    if (data[HDR_MAGIC] != 2) {
        snprintf(why, n, "is not a record batch (magic byte %d, not 2)", data[HDR_MAGIC]);
        return why;
    }
    int64_t hbase = kp_get_i64(data + HDR_BASE_OFFSET);
    int64_t hlast = hbase + kp_get_i32(data + HDR_LAST_OFFSET_DELTA);
    if (hbase != base || hlast != last) {
        snprintf(why, n, "is offsets %" PRId64 "-%" PRId64 ", the index says %" PRId64 "-%" PRId64, hbase, hlast,
                 base, last);
        return why;
    }
    int64_t hsize = (int64_t)kp_get_i32(data + HDR_BATCH_LENGTH) + KP_BATCH_LOG_OVERHEAD;
    if (hsize != (int64_t)len) {
        snprintf(why, n, "is a batch of %" PRId64 " bytes, the index says %zu", hsize, len);
        return why;
    }
    size_t at = 0;
    kp_batch b;
    const char *kwhy = NULL;
    if (kp_batch_next(data, len, &at, &b, &kwhy) != 1 || at != len) {
        snprintf(why, n, "is not a record batch (%s)", kwhy ? kwhy : "bytes past it");
        return why;
    }
    if (!kp_batch_crc_ok(&b)) {
        snprintf(why, n, "CRC mismatch");
        return why;
    }
    return NULL;
}

/* ---- the start-up check ---- */

typedef struct vrow {
    int64_t seg, pos, size, base, last;
} vrow;

typedef struct verifier {
    stor *s;
    stor_verify_mode mode;
    bool power_cut;     /* stor_recover will read back what is past each segment's synced mark */
    sqlite3_stmt *synced;
    vrow *rows;         /* one partition's rows in segments */
    size_t n, cap;
    uint8_t *buf;
    size_t bufcap;
    char *err;
    size_t errlen;
    stor_verify_stats *stats;
} verifier;

/* "topic NAME partition P" for a message, or with the id when the name cannot be read. */
static void part_label(stor *s, int64_t tid, int32_t part, char *out, size_t n) {
    sqlite3_stmt *st = NULL;
    const unsigned char *name = NULL;
    if (sqlite3_prepare_v2(s->db, "SELECT name FROM topics WHERE id = ?", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_bind_int64(st, 1, tid) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        name = sqlite3_column_text(st, 0);
    if (name) snprintf(out, n, "topic %s partition %d", (const char *)name, part);
    else snprintf(out, n, "topic id %" PRId64 " partition %d", tid, part);
    sqlite3_finalize(st);
}

static int damage(verifier *v, int64_t tid, int32_t part, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int damage(verifier *v, int64_t tid, int32_t part, const char *fmt, ...) {
    char what[700], label[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    part_label(v->s, tid, part, label, sizeof label);
    stor_errf(v->err, v->errlen, "%s (%s)", what, label);
    return 1;
}

static int by_seg_pos(const void *a, const void *b) {
    const vrow *x = a, *y = b;
    if (x->seg != y->seg) return x->seg < y->seg ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* The segment's synced mark: how far its bytes are known to be on disk (all of it without a power cut). */
static int synced_mark(verifier *v, int64_t tid, int32_t part, int64_t seg, int64_t *mark) {
    *mark = INT64_MAX;
    if (!v->power_cut) return 0;
    sqlite3_reset(v->synced);
    sqlite3_bind_int64(v->synced, 1, tid);
    sqlite3_bind_int(v->synced, 2, part);
    sqlite3_bind_int64(v->synced, 3, seg);
    int rc = sqlite3_step(v->synced);
    if (rc == SQLITE_ROW) *mark = sqlite3_column_int64(v->synced, 0);
    else if (rc == SQLITE_DONE) *mark = 0; /* no segments row: nothing of it is known to be on disk */
    else return -1;
    return 0;
}

/* Read the batch a row names and compare: 0 when sound, 1 (damage) or -1. */
static int check_batch(verifier *v, int fd, const char *path, int64_t tid, int32_t part, const vrow *r) {
    if ((size_t)r->size > v->bufcap) {
        uint8_t *p = realloc(v->buf, (size_t)r->size);
        if (!p) {
            stor_errf(v->err, v->errlen, "checking segment %s: out of memory for a batch of %" PRId64 " bytes", path,
                      r->size);
            return -1;
        }
        v->buf = p, v->bufcap = (size_t)r->size;
    }
    size_t got = 0;
    while (got < (size_t)r->size) {
        ssize_t k = pread(fd, v->buf + got, (size_t)r->size - got, (off_t)(r->pos + (int64_t)got));
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) {
            stor_errf(v->err, v->errlen, "reading segment %s: %s", path, strerror(errno));
            return -1;
        }
        if (k == 0) break;
        got += (size_t)k;
    }
    v->stats->batches_read++;
    v->stats->bytes_read += (int64_t)got;
    char why[200];
    const char *bad = got < (size_t)r->size ? "is cut short by the end of the file"
                                              : stor_batch_unsound(v->buf, got, r->base, r->last, why, sizeof why);
    if (!bad) return 0;
    bool crc = strncmp(bad, "CRC", 3) == 0;
    return damage(v, tid, part, "segment %s: the batch at byte %" PRId64 " (offsets %" PRId64 "-%" PRId64
                  " in the index) %s%s%s", path, r->pos, r->base, r->last, crc ? "has a " : "", bad,
                  crc ? " (overwritten?)" : strncmp(bad, "is ", 3) == 0 ? " (swapped or overwritten?)" : "");
}

/* One segment file and the rows rows[0..n) that name it, in byte order. */
static int check_segment(verifier *v, int64_t tid, int32_t part, const vrow *rows, size_t n) {
    char path[600];
    int64_t seg = rows[0].seg, mark;
    stor_seg_path(v->s, tid, part, seg, path, sizeof path);
    if (synced_mark(v, tid, part, seg, &mark)) {
        stor_errf(v->err, v->errlen, "reading segments: %s", sqlite3_errmsg(v->s->db));
        return -1;
    }
    v->stats->segments++;
    int64_t need = 0;
    const vrow *newest = NULL;
    for (size_t i = 0; i < n; i++) {
        const vrow *r = &rows[i];
        if (r->pos < 0 || r->size <= 0 || r->size > INT32_MAX)
            return damage(v, tid, part, "the index puts the batch of offsets %" PRId64 "-%" PRId64 " at byte %" PRId64
                          " of segment %s with a length of %" PRId64, r->base, r->last, r->pos, path, r->size);
        if (i > 0 && r->pos < rows[i - 1].pos + rows[i - 1].size)
            return damage(v, tid, part, "the index puts batches of offsets %" PRId64 "-%" PRId64 " and %" PRId64
                          "-%" PRId64 " on the same bytes of segment %s (at %" PRId64 " and %" PRId64 ")",
                          rows[i - 1].base, rows[i - 1].last, r->base, r->last, path, rows[i - 1].pos, r->pos);
        /* past the mark after a reboot: stor_recover's to check (and to remove if lost) */
        if (r->pos + r->size <= mark) {
            need = r->pos + r->size;
            newest = r;
        }
    }
    if (!newest) return 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT)
        return damage(v, tid, part, "segment %s is missing: the index has %zu batches there (offsets %" PRId64
                      "-%" PRId64 ")", path, n, rows[0].base, newest->last);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        stor_errf(v->err, v->errlen, "open segment %s: %s", path, strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    int rc = 0;
    if (sb.st_size < need) {
        rc = damage(v, tid, part, "segment %s is %lld bytes, the index needs %" PRId64 " (its batch of offsets %" PRId64
                    "-%" PRId64 " ends there): truncated or replaced", path, (long long)sb.st_size, need, newest->base,
                    newest->last);
    } else if (v->mode == STOR_VERIFY_FULL) {
        for (size_t i = 0; rc == 0 && i < n && &rows[i] <= newest; i++) rc = check_batch(v, fd, path, tid, part, &rows[i]);
    } else {
        rc = check_batch(v, fd, path, tid, part, newest);
    }
    close(fd);
    return rc;
}

/* A partition's rows in segments (collected in offset order), by file. */
static int check_partition(verifier *v, int64_t tid, int32_t part) {
    if (v->n == 0) return 0;
    qsort(v->rows, v->n, sizeof *v->rows, by_seg_pos);
    int rc = 0;
    for (size_t a = 0, b; rc == 0 && a < v->n; a = b) {
        for (b = a + 1; b < v->n && v->rows[b].seg == v->rows[a].seg; b++) {}
        rc = check_segment(v, tid, part, v->rows + a, b - a);
    }
    v->n = 0;
    return rc;
}

/* A row that keeps its bytes in the database (before migration 8, or :memory:), checked in full mode. */
static int check_inline(verifier *v, sqlite3_stmt *st, int64_t tid, int32_t part, int64_t base, int64_t last) {
    const uint8_t *data = sqlite3_column_blob(st, 7);
    size_t len = (size_t)sqlite3_column_bytes(st, 7);
    v->stats->batches_read++;
    v->stats->bytes_read += (int64_t)len;
    char why[200];
    const char *bad = stor_batch_unsound(data, len, base, last, why, sizeof why);
    if (!bad) return 0;
    return damage(v, tid, part, "the batch of offsets %" PRId64 "-%" PRId64 " kept in the database %s", base, last,
                  bad);
}

int stor_verify(stor *s, stor_verify_mode mode, stor_verify_stats *stats, char *err, size_t errlen) {
    stor_verify_stats none;
    if (!stats) stats = &none;
    memset(stats, 0, sizeof *stats);
    s->verify = mode;
    if (mode == STOR_VERIFY_OFF) return 0;
    verifier v = {.s = s, .mode = mode, .err = err, .errlen = errlen, .stats = stats};
    if (s->segs.enabled) {
        int pc = stor_seg_power_cut(s);
        if (pc < 0) {
            stor_errf(err, errlen, "%s", stor_errmsg(s));
            return -1;
        }
        v.power_cut = pc == 1;
    }
    /* the data column only in full mode, and only for rows that keep their bytes in it */
    const char *sql = mode == STOR_VERIFY_FULL
                          ? "SELECT topic_id, partition, base_offset, last_offset, seg, pos, size,"
                            " CASE WHEN seg IS NULL THEN data END FROM batches ORDER BY topic_id, partition, base_offset"
                          : "SELECT topic_id, partition, base_offset, last_offset, seg, pos, size"
                            " FROM batches ORDER BY topic_id, partition, base_offset";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(s->db, "SELECT synced FROM segments WHERE topic_id = ?1 AND partition = ?2 AND id = ?3",
                           -1, &v.synced, NULL) != SQLITE_OK) {
        stor_errf(err, errlen, "reading the index: %s", sqlite3_errmsg(s->db));
        sqlite3_finalize(st);
        return -1;
    }
    int64_t tid = -1, last = -1;
    int32_t part = -1;
    int ret = 0, rc;
    while (ret == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t t = sqlite3_column_int64(st, 0), base = sqlite3_column_int64(st, 2);
        int32_t p = sqlite3_column_int(st, 1);
        int64_t l = sqlite3_column_int64(st, 3);
        if (t != tid || p != part) {
            if ((ret = check_partition(&v, tid, part)) != 0) break;
            tid = t, part = p, last = -1;
        } else if (base <= last) {
            ret = damage(&v, t, p, "the index has batches of offsets ending at %" PRId64 " and starting at %" PRId64
                         ", which overlap", last, base);
            break;
        }
        last = l;
        stats->rows++;
        if (sqlite3_column_type(st, 4) == SQLITE_NULL) {
            if (mode == STOR_VERIFY_FULL) ret = check_inline(&v, st, t, p, base, l);
            continue;
        }
        if (v.n == v.cap) {
            size_t cap = v.cap ? v.cap * 2 : 256;
            vrow *r = realloc(v.rows, cap * sizeof *r);
            if (!r) {
                ret = -1;
                stor_errf(err, errlen, "checking the segments: out of memory");
                break;
            }
            v.rows = r, v.cap = cap;
        }
        v.rows[v.n++] = (vrow){.seg = sqlite3_column_int64(st, 4), .pos = sqlite3_column_int64(st, 5),
                               .size = sqlite3_column_int64(st, 6), .base = base, .last = l};
    }
    if (ret == 0 && rc != SQLITE_DONE) {
        stor_errf(err, errlen, "reading the index: %s", sqlite3_errmsg(s->db));
        ret = -1;
    }
    if (ret == 0) ret = check_partition(&v, tid, part);
    /* ends the read transaction: nothing is held open into the start */
    sqlite3_finalize(st);
    sqlite3_finalize(v.synced);
    free(v.rows);
    free(v.buf);
    return ret;
}

bool stor_read_bad_batch(stor *s) { return s->read_bad; }
