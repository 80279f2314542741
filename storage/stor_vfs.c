/*
 * A VFS shim for the loop's connection that gathers its appends to the WAL
 * into large writes.
 *
 * SQLite appends each WAL frame as two writes, its 24-byte header and then
 * the page, at offsets that are never block-aligned. For a 1 MiB batch that
 * was 256 to 512 system calls, and ext4 pays per call for the whole (large)
 * folio the write lands in, and zeroes the rest of every block a small write
 * begins: measured, a quarter to a third of the loop's produce time. Here
 * contiguous writes collect in a buffer and reach the file in one write.
 *
 * When a WAL's buffer must be in the file:
 *   - when the page of a commit frame (a frame header whose "database size"
 *     field is not 0) has been added: that write returns the error of the
 *     flush, so a failed write fails the commit as it would without the shim
 *     (the broker then refuses the produce instead of acknowledging it);
 *   - before anything else touches the WAL file (read, size, truncate, sync,
 *     file control, close), so SQLite itself never sees a stale file;
 *   - at the database file's shared-memory barrier, which comes before a
 *     commit is published to other connections (the checkpoint thread): a
 *     safety net, normally empty by then.
 * (Once the database file's own writes were gathered too, for the rollback
 * journal storage.sync=off had; every mode is on WAL now, stor.c.)
 * Nothing else is changed: other files and every other method pass through.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "kp_mem.h"
#include "stor_int.h"

/* Under 128 KiB: SQLite's unix VFS writes at most 0x1ffff bytes per call and fails a write of a multiple of 128 KiB. */
#define GATHER_CAP (120u * 1024)
#define FRAME_HEADER_BYTES 24

typedef struct wfile wfile;
struct wfile {
    sqlite3_file base;      /* pMethods: ours */
    sqlite3_file *real;     /* the wrapped file, in the same allocation */
    bool is_wal, is_db;     /* a WAL's writes collect in buf */
    bool commit_page_next;  /* the last write was the header of a commit frame */
    uint8_t *buf;
    size_t len;
    sqlite3_int64 off;      /* file offset of buf[0] */
    int sticky_rc;          /* a flush failed where the error could not be returned */
    const char *db_name;    /* main database name (for pairing a WAL with its database) */
    wfile *wal;             /* is_db: its open WAL, if any */
    wfile *next_db;         /* open database files of this VFS */
};

static sqlite3_vfs shim_vfs;
static sqlite3_vfs *base_vfs;
static pthread_mutex_t db_list_mu = PTHREAD_MUTEX_INITIALIZER;
static wfile *db_list;

static int flush(wfile *f) {
    if (!f->len) return SQLITE_OK;
    int rc = f->real->pMethods->xWrite(f->real, f->buf, (int)f->len, f->off);
    f->len = 0;
    return rc;
}

/* Flush before an operation that must see the file as SQLite believes it is. */
static int settle(wfile *f) {
    if (f->sticky_rc != SQLITE_OK) return f->sticky_rc;
    return flush(f);
}

static int x_write(sqlite3_file *pf, const void *p, int amt, sqlite3_int64 off) {
    wfile *f = (wfile *)pf;
    if (!f->is_wal) return f->real->pMethods->xWrite(f->real, p, amt, off);
    if (f->sticky_rc != SQLITE_OK) return f->sticky_rc;
    bool commit_page = f->commit_page_next;
    f->commit_page_next = false;
    if (amt == FRAME_HEADER_BYTES) {
        const uint8_t *h = p;
        f->commit_page_next = (h[4] | h[5] | h[6] | h[7]) != 0;
    }
    int rc = SQLITE_OK;
    if (f->len && (off != f->off + (sqlite3_int64)f->len || f->len + (size_t)amt > GATHER_CAP)) rc = flush(f);
    if (rc != SQLITE_OK) return rc;
    if ((size_t)amt > GATHER_CAP) {
        rc = f->real->pMethods->xWrite(f->real, p, amt, off);
    } else {
        if (!f->buf) f->buf = xmalloc(GATHER_CAP);
        if (!f->len) f->off = off;
        memcpy(f->buf + f->len, p, (size_t)amt);
        f->len += (size_t)amt;
    }
    if (rc == SQLITE_OK && commit_page) rc = flush(f);
    return rc;
}

static int x_read(sqlite3_file *pf, void *p, int amt, sqlite3_int64 off) {
    wfile *f = (wfile *)pf;
    int rc = settle(f);
    return rc != SQLITE_OK ? rc : f->real->pMethods->xRead(f->real, p, amt, off);
}

static int x_truncate(sqlite3_file *pf, sqlite3_int64 size) {
    wfile *f = (wfile *)pf;
    int rc = settle(f);
    return rc != SQLITE_OK ? rc : f->real->pMethods->xTruncate(f->real, size);
}

static int x_sync(sqlite3_file *pf, int flags) {
    wfile *f = (wfile *)pf;
    int rc = settle(f);
    return rc != SQLITE_OK ? rc : f->real->pMethods->xSync(f->real, flags);
}

static int x_file_size(sqlite3_file *pf, sqlite3_int64 *size) {
    wfile *f = (wfile *)pf;
    int rc = settle(f);
    return rc != SQLITE_OK ? rc : f->real->pMethods->xFileSize(f->real, size);
}

static int x_lock(sqlite3_file *pf, int lock) {
    wfile *f = (wfile *)pf;
    int rc = settle(f);
    return rc != SQLITE_OK ? rc : f->real->pMethods->xLock(f->real, lock);
}

/* Another process may read the file once the lock is gone; the buffer must be in it by then. */
static int x_unlock(sqlite3_file *pf, int lock) {
    wfile *f = (wfile *)pf;
    int rc = flush(f);
    /* an unlock's error is ignored by SQLite: fail everything after it instead */
    if (rc != SQLITE_OK) f->sticky_rc = rc;
    return f->real->pMethods->xUnlock(f->real, lock);
}

static int x_check_reserved(sqlite3_file *pf, int *out) {
    wfile *f = (wfile *)pf;
    return f->real->pMethods->xCheckReservedLock(f->real, out);
}

static int x_file_control(sqlite3_file *pf, int op, void *arg) {
    wfile *f = (wfile *)pf;
    int rc = settle(f);
    return rc != SQLITE_OK ? rc : f->real->pMethods->xFileControl(f->real, op, arg);
}

static int x_sector_size(sqlite3_file *pf) {
    wfile *f = (wfile *)pf;
    return f->real->pMethods->xSectorSize(f->real);
}

static int x_device_characteristics(sqlite3_file *pf) {
    wfile *f = (wfile *)pf;
    return f->real->pMethods->xDeviceCharacteristics(f->real);
}

static int x_shm_map(sqlite3_file *pf, int pg, int pgsz, int extend, void volatile **pp) {
    wfile *f = (wfile *)pf;
    return f->real->pMethods->xShmMap(f->real, pg, pgsz, extend, pp);
}

static int x_shm_lock(sqlite3_file *pf, int offset, int n, int flags) {
    wfile *f = (wfile *)pf;
    return f->real->pMethods->xShmLock(f->real, offset, n, flags);
}

static void x_shm_barrier(sqlite3_file *pf) {
    wfile *f = (wfile *)pf;
    wfile *wal = f->wal;
    if (wal && wal->len) {
        int rc = flush(wal);
        /* the commit cannot be failed from here: fail everything after it instead */
        if (rc != SQLITE_OK) wal->sticky_rc = rc;
    }
    f->real->pMethods->xShmBarrier(f->real);
}

static int x_shm_unmap(sqlite3_file *pf, int del) {
    wfile *f = (wfile *)pf;
    return f->real->pMethods->xShmUnmap(f->real, del);
}

static int x_fetch(sqlite3_file *pf, sqlite3_int64 off, int amt, void **pp) {
    wfile *f = (wfile *)pf;
    int rc = settle(f);
    return rc != SQLITE_OK ? rc : f->real->pMethods->xFetch(f->real, off, amt, pp);
}

static int x_unfetch(sqlite3_file *pf, sqlite3_int64 off, void *p) {
    wfile *f = (wfile *)pf;
    return f->real->pMethods->xUnfetch(f->real, off, p);
}

static void pairing_remove(wfile *f) {
    pthread_mutex_lock(&db_list_mu);
    for (wfile **pp = &db_list; *pp; pp = &(*pp)->next_db) {
        if (*pp == f) {
            *pp = f->next_db;
            break;
        }
    }
    for (wfile *d = db_list; d; d = d->next_db)
        if (d->wal == f) d->wal = NULL;
    pthread_mutex_unlock(&db_list_mu);
}

static int x_close(sqlite3_file *pf) {
    wfile *f = (wfile *)pf;
    int rc = settle(f);
    if (f->is_db || f->is_wal) pairing_remove(f);
    int rc2 = f->real->pMethods->xClose(f->real);
    free(f->buf);
    f->buf = NULL;
    return rc != SQLITE_OK ? rc : rc2;
}

static const sqlite3_io_methods shim_methods = {
    .iVersion = 3,
    .xClose = x_close,
    .xRead = x_read,
    .xWrite = x_write,
    .xTruncate = x_truncate,
    .xSync = x_sync,
    .xFileSize = x_file_size,
    .xLock = x_lock,
    .xUnlock = x_unlock,
    .xCheckReservedLock = x_check_reserved,
    .xFileControl = x_file_control,
    .xSectorSize = x_sector_size,
    .xDeviceCharacteristics = x_device_characteristics,
    .xShmMap = x_shm_map,
    .xShmLock = x_shm_lock,
    .xShmBarrier = x_shm_barrier,
    .xShmUnmap = x_shm_unmap,
    .xFetch = x_fetch,
    .xUnfetch = x_unfetch,
};

static int x_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *pf, int flags, int *out_flags) {
    (void)vfs;
    wfile *f = (wfile *)pf;
    memset(f, 0, sizeof *f);
    f->real = (sqlite3_file *)(f + 1);
    int rc = base_vfs->xOpen(base_vfs, name, f->real, flags, out_flags);
    if (rc != SQLITE_OK || !f->real->pMethods) {
        f->base.pMethods = NULL;
        return rc != SQLITE_OK ? rc : SQLITE_CANTOPEN;
    }
    f->base.pMethods = &shim_methods;
    f->is_wal = (flags & SQLITE_OPEN_WAL) != 0;
    f->is_db = (flags & SQLITE_OPEN_MAIN_DB) != 0;
    if (!name || !(f->is_db || f->is_wal)) return SQLITE_OK;
    f->db_name = f->is_db ? name : sqlite3_filename_database(name);
    pthread_mutex_lock(&db_list_mu);
    if (f->is_db) {
        f->next_db = db_list;
        db_list = f;
    } else {
        for (wfile *d = db_list; d; d = d->next_db) {
            if (strcmp(d->db_name, f->db_name) == 0 && !d->wal) {
                d->wal = f;
                break;
            }
        }
    }
    pthread_mutex_unlock(&db_list_mu);
    return SQLITE_OK;
}

static int v_delete(sqlite3_vfs *v, const char *n, int sync) {
    (void)v;
    return base_vfs->xDelete(base_vfs, n, sync);
}
static int v_access(sqlite3_vfs *v, const char *n, int flags, int *out) {
    (void)v;
    return base_vfs->xAccess(base_vfs, n, flags, out);
}
static int v_full_pathname(sqlite3_vfs *v, const char *n, int len, char *out) {
    (void)v;
    return base_vfs->xFullPathname(base_vfs, n, len, out);
}
static void *v_dlopen(sqlite3_vfs *v, const char *n) { (void)v; return base_vfs->xDlOpen(base_vfs, n); }
static void v_dlerror(sqlite3_vfs *v, int n, char *out) { (void)v; base_vfs->xDlError(base_vfs, n, out); }
static void (*v_dlsym(sqlite3_vfs *v, void *h, const char *s))(void) { (void)v; return base_vfs->xDlSym(base_vfs, h, s); }
static void v_dlclose(sqlite3_vfs *v, void *h) { (void)v; base_vfs->xDlClose(base_vfs, h); }
static int v_randomness(sqlite3_vfs *v, int n, char *out) { (void)v; return base_vfs->xRandomness(base_vfs, n, out); }
static int v_sleep(sqlite3_vfs *v, int us) { (void)v; return base_vfs->xSleep(base_vfs, us); }
static int v_current_time(sqlite3_vfs *v, double *t) { (void)v; return base_vfs->xCurrentTime(base_vfs, t); }
static int v_get_last_error(sqlite3_vfs *v, int n, char *out) {
    (void)v;
    return base_vfs->xGetLastError(base_vfs, n, out);
}
static int v_current_time64(sqlite3_vfs *v, sqlite3_int64 *t) {
    (void)v;
    return base_vfs->xCurrentTimeInt64(base_vfs, t);
}

static int register_rc = SQLITE_ERROR;
static pthread_once_t register_once = PTHREAD_ONCE_INIT;

static void register_shim(void) {
    base_vfs = sqlite3_vfs_find(NULL);
    if (!base_vfs || base_vfs->iVersion < 2) return;
    shim_vfs = (sqlite3_vfs){
        .iVersion = 2,
        .szOsFile = (int)sizeof(wfile) + base_vfs->szOsFile,
        .mxPathname = base_vfs->mxPathname,
        .zName = STOR_VFS_NAME,
        .xOpen = x_open,
        .xDelete = v_delete,
        .xAccess = v_access,
        .xFullPathname = v_full_pathname,
        .xDlOpen = v_dlopen,
        .xDlError = v_dlerror,
        .xDlSym = v_dlsym,
        .xDlClose = v_dlclose,
        .xRandomness = v_randomness,
        .xSleep = v_sleep,
        .xCurrentTime = v_current_time,
        .xGetLastError = v_get_last_error,
        .xCurrentTimeInt64 = v_current_time64,
    };
    register_rc = sqlite3_vfs_register(&shim_vfs, 0);
}

const char *stor_vfs_name(void) {
    pthread_once(&register_once, register_shim);
    return register_rc == SQLITE_OK ? STOR_VFS_NAME : NULL;
}
