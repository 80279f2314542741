/*
 * The log cleaner's reads and writes: batches rewritten or removed in place, its checkpoint, and
 * (issue 37) a pass off the loop: its own reads and its cleaned file, then the swap.
 *
 * A pass with a database on disk reads through a connection of its own on a worker thread (WAL
 * lets readers run beside the loop's one writer, and the worker never writes to SQLite, so it
 * never waits on the loop's write lock nor makes the loop wait on it), each read a short
 * transaction of at most CHUNK_ROWS rows, the segment bytes read after it ends: a long read
 * transaction would hold checkpoints back, and the WAL would grow past it. It
 * writes every batch it keeps, rewritten or not, to a file of its own beside the partition's
 * segments, <seq>.cleaned, as Kafka's cleaner writes a .cleaned segment (LogCleaner.scala,
 * Cleaner.cleanSegments; LocalLog.CleanedFileSuffix). The loop then swaps it in within one
 * commit: a hard link <id>.log past the partition's newest segment, its segments row, and each
 * batch row pointed at its new place; the old segments die with their last row. Links are how
 * kill -9 stays safe: the .log name exists before the commit that names it, and until that
 * commit the .cleaned name says whose it is; stor_cleaning_leftovers removes both at the next
 * start, and just the .cleaned name once the commit holds the .log.
 */
#include "stor_int.h"

#include "kp_mem.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int bind_key(stor *s, sqlite3_stmt *st, int64_t topic_id, int32_t partition, int64_t offset) {
    if (sqlite3_bind_int64(st, 1, topic_id) || sqlite3_bind_int(st, 2, partition) || sqlite3_bind_int64(st, 3, offset))
        return stor_fail(s, "bind partition key");
    return 0;
}

int stor_batch_replace(stor *s, int64_t topic_id, int32_t partition, int64_t base_offset, int64_t max_timestamp,
                       int32_t records_count, const void *data, size_t len) {
    if (!data || len == 0 || len > (size_t)INT32_MAX || records_count < 0)
        return stor_failf(s, "replace batch at %lld: bad data or count", (long long)base_offset);
    if (stor_write_begin_as(s, STOR_TXN_BATCHES)) return -1;
    if (stor_producer_dirty(s, topic_id, partition)) return -1;
    /* the rewritten bytes are appended like a produced batch; the old ones die with their segment */
    int64_t seg = 0, pos = 0;
    bool in_seg = s->segs.enabled;
    if (stor_time_raise(s, topic_id, partition, base_offset, max_timestamp)) return -1;
    if (in_seg && stor_seg_append(s, topic_id, partition, data, len, &seg, &pos)) return -1;
    stor_seg_maybe_dead(s);
    sqlite3_stmt *st = stor_stmt(s, STOR_BATCH_REPLACE);
    if (bind_key(s, st, topic_id, partition, base_offset) || sqlite3_bind_int64(st, 4, max_timestamp) ||
        sqlite3_bind_int(st, 5, records_count) || sqlite3_bind_int64(st, 6, (sqlite3_int64)len) ||
        (in_seg ? sqlite3_bind_zeroblob(st, 7, 0) || sqlite3_bind_int64(st, 8, seg) || sqlite3_bind_int64(st, 9, pos)
                : sqlite3_bind_blob64(st, 7, data, len, SQLITE_STATIC)))
        return stor_fail(s, "bind replaced batch");
    int rc = stor_step_done(s, st, "replace batch");
    sqlite3_clear_bindings(st);
    if (rc) return -1;
    return sqlite3_changes(s->db) > 0 ? 1 : 0;
}

int stor_batch_delete(stor *s, int64_t topic_id, int32_t partition, int64_t base_offset) {
    if (stor_write_begin_as(s, STOR_TXN_BATCHES)) return -1;
    if (stor_producer_dirty(s, topic_id, partition)) return -1;
    sqlite3_stmt *st = stor_stmt(s, STOR_BATCH_DELETE_ONE);
    if (bind_key(s, st, topic_id, partition, base_offset)) return -1;
    stor_seg_maybe_dead(s);
    stor_batch_last_forget(s, topic_id, partition);
    return stor_step_done(s, st, "delete compacted batch");
}

int stor_clean_state_get(stor *s, int64_t topic_id, int32_t partition, stor_clean_state *out) {
    sqlite3_stmt *st = stor_stmt(s, STOR_CLEAN_STATE);
    if (sqlite3_bind_int64(st, 1, topic_id) || sqlite3_bind_int(st, 2, partition)) return stor_fail(s, "bind key");
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        out->cleaned_to = sqlite3_column_int64(st, 0);
        out->bytes = sqlite3_column_int64(st, 1);
    }
    sqlite3_reset(st);
    if (rc == SQLITE_DONE) return stor_failf(s, "clean state: no partition %d of topic %lld", partition, (long long)topic_id);
    if (rc != SQLITE_ROW) return stor_fail(s, "read clean state");
    st = stor_stmt(s, STOR_CLEAN_DIRTY);
    if (bind_key(s, st, topic_id, partition, out->cleaned_to)) return -1;
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        out->dirty_bytes = sqlite3_column_int64(st, 0);
        out->first_dirty_ts = sqlite3_column_type(st, 1) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 1);
    }
    sqlite3_reset(st);
    return rc == SQLITE_ROW ? 0 : stor_fail(s, "read dirty bytes");
}

int stor_cleaned_set(stor *s, int64_t topic_id, int32_t partition, int64_t offset) {
    if (stor_write_begin_as(s, STOR_TXN_BATCHES)) return -1;
    sqlite3_stmt *st = stor_stmt(s, STOR_CLEANED_SET);
    if (bind_key(s, st, topic_id, partition, offset)) return -1;
    return stor_step_done(s, st, "set the cleaner checkpoint");
}

/* ---- a pass off the loop ---- */

/* One read transaction reads at most this many rows, or this many bytes of rows that keep theirs. */
#define CHUNK_ROWS 256
#define CHUNK_BYTES (8 << 20)
#define CLEAN_FDS 8

struct stor_cleaning {
    stor *s;            /* the loop's: only stor_cleaning_new, _adopt and the in-memory reads use it */
    int64_t topic_id;
    int32_t partition;
    bool own;           /* reads through db (a database on disk) */
    stor_sync sync;
    char *db_path;
    sqlite3 *db;        /* opened on the first read, by whichever thread reads */
    sqlite3_stmt *read;
    struct { int64_t id; int fd; } fds[CLEAN_FDS];
    int nfds;
    char pdir[600];
    char path[700];     /* <pdir>/<seq>.cleaned */
    int out;            /* its fd; -1 before the first write */
    int64_t out_pos;
    bool adopted;       /* a segment names it (the transaction that did may still roll back) */
    char link[720];     /* the worker's link of it as the next segment, ahead of the swap; "": none */
    dev_t link_dev;
    ino_t link_ino;
    sqlite3_stmt *mv, *del; /* the swap's, on the loop's connection */
    uint8_t *buf;
    size_t cap;
    struct chunk_row *rows; /* CHUNK_ROWS */
    char err[512];
};

static int clean_fail(stor_cleaning *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int clean_fail(stor_cleaning *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, sizeof c->err, fmt, ap);
    va_end(ap);
    return -1;
}

stor_cleaning *stor_cleaning_new(stor *s, int64_t topic_id, int32_t partition, uint64_t seq) {
    stor_cleaning *c = xcalloc(1, sizeof *c);
    c->s = s;
    c->topic_id = topic_id;
    c->partition = partition;
    c->out = -1;
    c->sync = s->segs.sync;
    const char *file = sqlite3_db_filename(s->db, "main");
    c->own = s->segs.enabled && file && *file;
    if (c->own) {
        c->db_path = xstrdup(file);
        stor_seg_path(s, topic_id, partition, 0, c->pdir, sizeof c->pdir);
        snprintf(c->path, sizeof c->path, "%s/%020" PRIu64 ".cleaned", c->pdir, seq);
    }
    return c;
}

bool stor_cleaning_off_loop(const stor_cleaning *c) { return c->own; }
const char *stor_cleaning_err(const stor_cleaning *c) { return c->err[0] ? c->err : "unknown error"; }
int64_t stor_cleaning_size(const stor_cleaning *c) { return c->out_pos; }

static int clean_open_db(stor_cleaning *c) {
    /* the default VFS: the loop's gathering one batches the loop's own writes, and this one writes nothing */
    int rc = sqlite3_open_v2(c->db_path, &c->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc == SQLITE_OK) {
        /* a reader waits only for a WAL being reset or recovered; the worker may wait */
        sqlite3_busy_timeout(c->db, STOR_BUSY_TIMEOUT_MS);
        rc = sqlite3_prepare_v2(c->db, stor_stmt_sql[STOR_BATCH_READ], -1, &c->read, NULL);
    }
    if (rc != SQLITE_OK) return clean_fail(c, "open the database for compaction: %s", c->db ? sqlite3_errmsg(c->db) : sqlite3_errstr(rc));
    return 0;
}

static int clean_fd(stor_cleaning *c, int64_t id) {
    for (int i = 0; i < c->nfds; i++)
        if (c->fds[i].id == id) return c->fds[i].fd;
    char path[sizeof c->pdir + 32];
    snprintf(path, sizeof path, "%s/%020" PRId64 ".log", c->pdir, id);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) return -2; /* retention or a deletion took it since the read */
    if (fd < 0) return clean_fail(c, "open segment %s: %s", path, strerror(errno));
    if (c->nfds == CLEAN_FDS) {
        close(c->fds[0].fd);
        memmove(&c->fds[0], &c->fds[1], sizeof c->fds[0] * (CLEAN_FDS - 1));
        c->nfds--;
    }
    c->fds[c->nfds].id = id;
    c->fds[c->nfds++].fd = fd;
    return fd;
}

/* 0, -1 (err), or -2: the segment is gone (its rows went with it: the batch is skipped). */
static int clean_pread(stor_cleaning *c, int64_t seg, int64_t pos, void *buf, size_t len) {
    int fd = clean_fd(c, seg);
    if (fd < 0) return fd;
    uint8_t *p = buf;
    while (len) {
        ssize_t n = pread(fd, p, len, (off_t)pos);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0)
            return clean_fail(c, "read segment %" PRId64 " of partition %d at %" PRId64 ": %s", seg, c->partition,
                              pos, n == 0 ? "it ends before the batch its row names" : strerror(errno));
        p += n, len -= (size_t)n, pos += n;
    }
    return 0;
}

static uint8_t *clean_buf(stor_cleaning *c, size_t len) {
    if (len > c->cap) {
        free(c->buf);
        c->buf = xmalloc(len);
        c->cap = len;
    }
    return c->buf;
}

/* In-memory databases: stor_batch_read on the loop's connection. */
typedef struct mem_read {
    stor_clean_fn fn;
    void *ctx;
} mem_read;

static bool mem_batch(void *ctx, const stor_batch_meta *m, const void *data, size_t len) {
    mem_read *r = ctx;
    stor_clean_batch b = {.m = *m, .seg = -1, .pos = -1, .size = (int64_t)len};
    return r->fn(r->ctx, &b, data, len);
}

/* A row of a chunk: its fields, and for a row that keeps its bytes (no segment), the bytes. */
typedef struct chunk_row {
    stor_clean_batch b;
    uint8_t *inline_bytes;
} chunk_row;

/*
 * One chunk from from: its rows read in one short read transaction (with the bytes of rows that
 * keep theirs), then the segment bytes read and handed to fn with no lock held. Short so that
 * checkpoints go on beside it. *next is where the next chunk starts, INT64_MAX
 * when the range is done or fn stopped the read.
 */
static int read_chunk(stor_cleaning *c, int64_t from, int64_t upto, stor_clean_fn fn, void *ctx, int64_t *next) {
    sqlite3_stmt *st = c->read;
    *next = INT64_MAX;
    if (sqlite3_bind_int64(st, 1, c->topic_id) || sqlite3_bind_int(st, 2, c->partition) ||
        sqlite3_bind_int64(st, 3, from) || sqlite3_bind_int64(st, 4, upto))
        return clean_fail(c, "bind compaction read: %s", sqlite3_errmsg(c->db));
    int ret = 0, rc, n = 0;
    int64_t inline_bytes = 0;
    chunk_row *rows = c->rows;
    sqlite3_blob *blob = NULL;
    bool more = false;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (n == CHUNK_ROWS || inline_bytes >= CHUNK_BYTES) {
            more = true;
            break;
        }
        chunk_row *r = &rows[n];
        r->inline_bytes = NULL;
        stor_meta_from_row(st, 0, &r->b.m);
        sqlite3_int64 rowid = sqlite3_column_int64(st, STOR_META_NCOLS);
        r->b.size = sqlite3_column_int64(st, STOR_META_NCOLS + 1);
        if (r->b.size <= 0 || r->b.size > INT32_MAX) {
            ret = clean_fail(c, "batch at offset %" PRId64 ": its row says %" PRId64 " bytes", r->b.m.base_offset,
                             r->b.size);
            break;
        }
        if (sqlite3_column_type(st, STOR_META_NCOLS + 2) != SQLITE_NULL) {
            r->b.seg = sqlite3_column_int64(st, STOR_META_NCOLS + 2);
            r->b.pos = sqlite3_column_int64(st, STOR_META_NCOLS + 3);
        } else {
            r->b.seg = r->b.pos = -1;
            r->inline_bytes = xmalloc((size_t)r->b.size);
            int brc = blob ? sqlite3_blob_reopen(blob, rowid)
                           : sqlite3_blob_open(c->db, "main", "batches", "data", rowid, 0, &blob);
            if (brc == SQLITE_OK && sqlite3_blob_bytes(blob) != r->b.size) brc = SQLITE_CORRUPT;
            if (brc == SQLITE_OK) brc = sqlite3_blob_read(blob, r->inline_bytes, (int)r->b.size, 0);
            if (brc != SQLITE_OK) {
                free(r->inline_bytes);
                ret = clean_fail(c, "read batch at offset %" PRId64 ": %s", r->b.m.base_offset, sqlite3_errstr(brc));
                break;
            }
            inline_bytes += r->b.size;
        }
        n++;
    }
    if (ret == 0 && rc != SQLITE_ROW && rc != SQLITE_DONE) ret = clean_fail(c, "read batches: %s", sqlite3_errmsg(c->db));
    if (blob) sqlite3_blob_close(blob);
    sqlite3_reset(st); /* ends the read transaction */
    sqlite3_clear_bindings(st);
    bool stopped = false;
    for (int i = 0; i < n; i++) {
        chunk_row *r = &rows[i];
        if (ret == 0 && !stopped) {
            const uint8_t *p = r->inline_bytes;
            if (!p) {
                uint8_t *buf = clean_buf(c, (size_t)r->b.size);
                int prc = clean_pread(c, r->b.seg, r->b.pos, buf, (size_t)r->b.size);
                if (prc == -1) ret = -1;
                p = prc == 0 ? buf : NULL; /* -2: its segment went, and its row with it: nothing to compact */
            }
            if (p && ret == 0 && !fn(ctx, &r->b, p, (size_t)r->b.size)) stopped = true;
        }
        free(r->inline_bytes);
    }
    if (ret == 0 && more && !stopped && n > 0) *next = rows[n - 1].b.m.last_offset + 1;
    return ret;
}

/* Whether fn stopped the read: read_chunk leaves *next at INT64_MAX then, as at the range's end. */
int stor_cleaning_read(stor_cleaning *c, int64_t from, int64_t upto, stor_clean_fn fn, void *ctx) {
    if (!c->own) {
        mem_read r = {fn, ctx};
        if (stor_batch_read(c->s, c->topic_id, c->partition, from, upto, mem_batch, &r) == 0) return 0;
        return clean_fail(c, "%s", stor_errmsg(c->s));
    }
    if (!c->db && clean_open_db(c)) return -1;
    if (!c->rows) c->rows = xmalloc(CHUNK_ROWS * sizeof *c->rows);
    while (from < upto) {
        int64_t next;
        if (read_chunk(c, from, upto, fn, ctx, &next)) return -1;
        from = next;
    }
    return 0;
}

int stor_cleaning_write(stor_cleaning *c, const void *data, size_t len, int64_t *pos) {
    if (!c->own) return clean_fail(c, "an in-memory database has no cleaned file");
    if (c->out < 0) {
        c->out = open(c->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (c->out < 0) return clean_fail(c, "create %s: %s", c->path, strerror(errno));
    }
    const uint8_t *p = data;
    size_t left = len;
    int64_t at = c->out_pos;
    while (left) {
        ssize_t n = pwrite(c->out, p, left, (off_t)at);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return clean_fail(c, "write %s: %s", c->path, strerror(errno));
        p += n, left -= (size_t)n, at += n;
    }
    *pos = c->out_pos;
    c->out_pos = at;
    return 0;
}

/*
 * The cleaned file linked as the partition's next segment (the newest committed one's id + 1),
 * and that name made durable, here on the worker: on the loop the directory's fsync held the
 * swap 0.2-3 ms. Nothing names the link until the swap's commit; a kill before it leaves both
 * names, which stor_cleaning_leftovers removes at the next start (a segment past the newest,
 * the same file as a .cleaned one). The loop may want that id meanwhile: an uncommitted
 * segment there already fails the link (the swap links on the loop, as before), and a segment
 * created after it finds a name whose file has another one, which seg_create removes (the swap
 * finds its link gone and links on the loop). stor_seg_adopt takes a link that is still there.
 */
static void clean_link_ahead(stor_cleaning *c) {
    sqlite3_stmt *st = NULL;
    int64_t next = -1;
    if (sqlite3_prepare_v2(c->db, "SELECT coalesce(max(id), 0) + 1 FROM segments WHERE topic_id = ?1 AND partition = ?2",
                           -1, &st, NULL) == SQLITE_OK &&
        sqlite3_bind_int64(st, 1, c->topic_id) == SQLITE_OK && sqlite3_bind_int(st, 2, c->partition) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        next = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st); /* ends the read transaction */
    if (next <= 0) return;
    char to[sizeof c->link];
    snprintf(to, sizeof to, "%s/%020" PRId64 ".log", c->pdir, next);
    struct stat sb;
    if (link(c->path, to) != 0 || stat(to, &sb) != 0) return; /* the swap links on the loop */
    snprintf(c->link, sizeof c->link, "%s", to);
    c->link_dev = sb.st_dev;
    c->link_ino = sb.st_ino;
    if (c->sync != STOR_SYNC_OFF) stor_fsync_dir(c->pdir);
}

int stor_cleaning_finish(stor_cleaning *c) {
    for (int i = 0; i < c->nfds; i++) close(c->fds[i].fd);
    c->nfds = 0;
    int rc = 0;
    if (c->out >= 0) {
        /* on disk before a commit names it, as a sealed segment is (storage.sync normal and full) */
        if (c->sync != STOR_SYNC_OFF && fdatasync(c->out) != 0)
            rc = clean_fail(c, "fdatasync %s: %s", c->path, strerror(errno));
        close(c->out);
        c->out = -1;
        if (rc == 0 && c->db) clean_link_ahead(c);
    }
    if (c->read) sqlite3_finalize(c->read);
    if (c->db) sqlite3_close(c->db);
    c->read = NULL;
    c->db = NULL;
    /* the read buffers too, on the thread that read: compact.c's pass_free_work says why */
    free(c->buf);
    c->buf = NULL;
    c->cap = 0;
    free(c->rows);
    c->rows = NULL;
    return rc;
}

int stor_cleaning_adopt(stor *s, stor_cleaning *c, int64_t *seg) {
    if (!c->own || c->out_pos == 0) return stor_failf(s, "compaction: nothing to adopt");
    if (stor_write_begin_as(s, STOR_TXN_BATCHES)) return -1;
    if (stor_seg_adopt(s, c->topic_id, c->partition, c->path, c->out_pos, c->sync != STOR_SYNC_OFF, seg)) return -1;
    c->adopted = true;
    stor_seg_maybe_dead(s);
    return 0;
}

/* The swap's statements, on the loop's connection, prepared on its first row and kept for the rest. */
static sqlite3_stmt *prepared(stor *s, sqlite3_stmt **st, const char *sql) {
    if (!*st && sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL) != SQLITE_OK) {
        stor_fail(s, "prepare compaction swap");
        return NULL;
    }
    sqlite3_reset(*st);
    sqlite3_clear_bindings(*st);
    return *st;
}

/* "IS": a row whose bytes are in the row has seg and pos NULL, and the pass read -1 for them */
#define AT_OLD " AND seg IS ?4 AND pos IS ?5"

static int bind_old(sqlite3_stmt *st, int64_t old_seg, int64_t old_pos) {
    if (old_seg < 0) return sqlite3_bind_null(st, 4) || sqlite3_bind_null(st, 5);
    return sqlite3_bind_int64(st, 4, old_seg) || sqlite3_bind_int64(st, 5, old_pos);
}

int stor_batch_move(stor *s, stor_cleaning *c, int64_t base_offset, int64_t old_seg, int64_t old_pos, int64_t seg,
                    int64_t new_pos, int64_t size, int64_t max_timestamp, int32_t records_count) {
    if (stor_write_begin_as(s, STOR_TXN_BATCHES)) return -1;
    if (stor_producer_dirty(s, c->topic_id, c->partition)) return -1;
    if (stor_time_raise(s, c->topic_id, c->partition, base_offset, max_timestamp)) return -1;
    sqlite3_stmt *st = prepared(s, &c->mv, "UPDATE batches SET seg = ?6, pos = ?7, size = ?8, max_timestamp = ?9,"
                                           " records_count = ?10, data = zeroblob(0)"
                                           " WHERE topic_id = ?1 AND partition = ?2 AND base_offset = ?3" AT_OLD);
    if (!st) return -1;
    if (bind_key(s, st, c->topic_id, c->partition, base_offset)) return -1;
    if (bind_old(st, old_seg, old_pos) || sqlite3_bind_int64(st, 6, seg) || sqlite3_bind_int64(st, 7, new_pos) ||
        sqlite3_bind_int64(st, 8, size) || sqlite3_bind_int64(st, 9, max_timestamp) ||
        sqlite3_bind_int(st, 10, records_count))
        return stor_fail(s, "bind moved batch");
    if (stor_step_done(s, st, "move compacted batch")) return -1;
    return sqlite3_changes(s->db) > 0;
}

int stor_batch_delete_at(stor *s, stor_cleaning *c, int64_t base_offset, int64_t old_seg, int64_t old_pos) {
    if (stor_write_begin_as(s, STOR_TXN_BATCHES)) return -1;
    if (stor_producer_dirty(s, c->topic_id, c->partition)) return -1;
    sqlite3_stmt *st = prepared(s, &c->del, "DELETE FROM batches WHERE topic_id = ?1 AND partition = ?2"
                                            " AND base_offset = ?3" AT_OLD);
    if (!st) return -1;
    if (bind_key(s, st, c->topic_id, c->partition, base_offset)) return -1;
    if (bind_old(st, old_seg, old_pos)) return stor_fail(s, "bind removed batch");
    stor_seg_maybe_dead(s);
    stor_batch_last_forget(s, c->topic_id, c->partition);
    if (stor_step_done(s, st, "delete compacted batch")) return -1;
    return sqlite3_changes(s->db) > 0;
}

void stor_cleaning_free(stor_cleaning *c) {
    if (!c) return;
    stor_cleaning_finish(c);
    /* (after a stor_close too: SQLite keeps a closed connection until its statements are finalized) */
    sqlite3_finalize(c->mv);
    sqlite3_finalize(c->del);
    /*
     * Adopted and committed: the .log link holds the bytes. Adopted and rolled back: the rollback
     * removed the link (stor_seg_after_rollback). Not adopted: nobody names the file.
     */
    if (c->own && c->path[0]) {
        /* the link made ahead, if no swap took it and no new segment took its name (compared while the file lives) */
        struct stat sb;
        if (c->link[0] && !c->adopted && stat(c->link, &sb) == 0 && sb.st_dev == c->link_dev &&
            sb.st_ino == c->link_ino)
            unlink(c->link);
        unlink(c->path);
        /* a topic deleted under the pass: the file may have kept its directory from going (a live one is not empty) */
        if (!c->adopted) rmdir(c->pdir);
    }
    free(c->buf);
    free(c->rows);
    free(c->db_path);
    free(c);
}

/*
 * At start (stor_recover), in a partition directory whose newest committed segment is newest:
 * a .log.deleted file is a dead segment whose removal a kill interrupted (stor_set_unlinker); a
 * .cleaned file is a pass that a kill interrupted. If a segment past the newest is the same
 * file, the kill came between the swap's link and its commit: both names go, since the old
 * segments still hold every batch. Otherwise the commit happened (its .log is at or below the
 * newest), or the pass never got that far: only the .cleaned name goes.
 */
void stor_cleaning_leftovers(stor *s, const char *pdir, int64_t newest) {
    DIR *d = opendir(pdir);
    if (!d) return;
    struct dirent *e;
    char path[1024], seg[1024];
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n > 12 && strcmp(e->d_name + n - 12, ".log.deleted") == 0) { /* dead, its row gone: stor_set_unlinker */
            snprintf(path, sizeof path, "%s/%s", pdir, e->d_name);
            unlink(path);
            continue;
        }
        if (n <= 8 || strcmp(e->d_name + n - 8, ".cleaned") != 0) continue;
        snprintf(path, sizeof path, "%s/%s", pdir, e->d_name);
        struct stat cs, ss;
        if (stat(path, &cs) == 0 && cs.st_nlink > 1) {
            DIR *d2 = opendir(pdir);
            struct dirent *f;
            while (d2 && (f = readdir(d2))) {
                char *end = NULL;
                long long id = strtoll(f->d_name, &end, 10);
                if (!end || strcmp(end, ".log") != 0 || id <= newest) continue;
                snprintf(seg, sizeof seg, "%s/%s", pdir, f->d_name);
                if (stat(seg, &ss) == 0 && ss.st_ino == cs.st_ino && ss.st_dev == cs.st_dev) {
                    unlink(seg);
                    stor_seg_notice(s, "compaction: %s: a pass a kill interrupted before its commit left it; "
                                       "removed, its batches are in the older segments", seg);
                }
            }
            if (d2) closedir(d2);
        }
        unlink(path);
    }
    closedir(d);
}
