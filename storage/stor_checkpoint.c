/*
 * WAL checkpoints off the event loop. SQLite's automatic checkpoint runs
 * inside COMMIT on the committing thread, copying the WAL into the database
 * file and fsyncing it: measured, that stalled the broker's one loop for up
 * to 37 ms under produce load. A second connection on its own thread runs
 * PASSIVE checkpoints instead (they never block the writer), woken after
 * commits. The loop thread keeps a high automatic threshold only as a safety
 * valve, should this thread fall far behind.
 *
 * Ownership: the thread owns its connection; the loop thread only touches the
 * mutex-guarded flags and counters.
 *
 * Idle, the thread sleeps until a commit kicks it, with no timeout: a process
 * holds one per cluster (the control plane creates clusters), and a periodic
 * wake-up would cost every idle cluster CPU for nothing. Its pause between
 * checkpoints waits on a condition of its own that only stopping signals, so
 * closing the storage (on the loop every cluster shares) never waits it out,
 * and commits under load, which kick `cv`, do not wake it during the pause.
 *
 * A fresh connection has not read the database header yet, so SQLite does not
 * know the file is in WAL mode and a checkpoint on it does nothing (it
 * answers -1 frames). Start-up therefore asks this connection for its
 * journal mode, which reads the header and opens the WAL, and refuses to go
 * on unless the answer is WAL.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kp_mem.h"
#include "stor_int.h"

struct stor_ckpt {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;   /* kicked or stopping */
    pthread_cond_t quit; /* stopping: ends the pause between checkpoints */
    bool stop, kicked;
    int restart_frames; /* RESTART_WAL_BYTES in frames of this database's pages */
    sqlite3 *db;
    stor_ckpt_stats stats;
};

/*
 * Checkpoints at most this often. Each pass that copies frames fdatasyncs the WAL and the
 * database file (synchronous=NORMAL): at 20 ms, under produce, those syncs were 7% of the
 * broker's CPU (the block layer's submission and the device's notifications, per call, for a
 * few pages each); at 100 ms 2% (docs/benchmarks.md, "CPU per record produced (issue 37)").
 * The WAL between two passes stays small (about a megabyte at full produce rate: each commit
 * adds a few pages of index rows, the record bytes are in segment files).
 */
#define CKPT_MIN_INTERVAL_MS 100
/*
 * The loop restarts a WAL longer than this (restart_if_long), and checkpoints itself only past
 * the safety valve. Both in bytes, turned into frames by the database's page size: new files
 * have 1 KiB pages, older ones 4 KiB (stor.c). Counted in frames at 4 KiB pages' 4096, a new
 * database restarted its WAL at 4 MiB, on the loop with two fdatasyncs, every ~100 transactions
 * of the txn benchmark (8 per 1,000) instead of 2 per 1,000 at 16 MiB; the thread's passes
 * copy what the restarts do not, off the loop (docs/benchmarks.md, "What each SQLite commit
 * costs").
 */
#define RESTART_WAL_BYTES (16 << 20)
#define SAFETY_VALVE_BYTES (1 << 30)

static int copy_text(void *out, int ncols, char **vals, char **names) {
    (void)names;
    if (ncols > 0 && vals[0]) snprintf(out, 16, "%s", vals[0]);
    return 0;
}

static void checkpoint(stor_ckpt *k) {
    int log = 0, done = 0;
    int rc = sqlite3_wal_checkpoint_v2(k->db, "main", SQLITE_CHECKPOINT_PASSIVE, &log, &done);
    pthread_mutex_lock(&k->mu);
    k->stats.runs++;
    k->stats.wal_frames = log;
    k->stats.backfilled = done;
    if (rc != SQLITE_OK && rc != SQLITE_BUSY) {
        k->stats.failures++;
        snprintf(k->stats.last_error, sizeof k->stats.last_error, "%s", sqlite3_errmsg(k->db));
    }
    pthread_mutex_unlock(&k->mu);
}

/* Up to ms with k->mu held, or until stop (the quit condition runs on the monotonic clock). */
static void pause_ms(stor_ckpt *k, long ms) {
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_nsec += ms * 1000000L;
    until.tv_sec += until.tv_nsec / 1000000000L;
    until.tv_nsec %= 1000000000L;
    while (!k->stop && pthread_cond_timedwait(&k->quit, &k->mu, &until) != ETIMEDOUT) {}
}

static void *run(void *arg) {
    stor_ckpt *k = arg;
    pthread_mutex_lock(&k->mu);
    while (!k->stop) {
        if (!k->kicked) {
            pthread_cond_wait(&k->cv, &k->mu);
            continue;
        }
        k->kicked = false;
        pthread_mutex_unlock(&k->mu);
        checkpoint(k);
        pthread_mutex_lock(&k->mu);
        pause_ms(k, CKPT_MIN_INTERVAL_MS);
    }
    pthread_mutex_unlock(&k->mu);
    return NULL;
}

int stor_ckpt_start(stor *s, const char *path, stor_sync sync, char *err, size_t errlen) {
    if (!sqlite3_threadsafe()) return 0; /* nothing to gain without a thread-safe SQLite: keep autocheckpoint */
    stor_ckpt *k = xcalloc(1, sizeof *k);
    int rc = sqlite3_open_v2(path, &k->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        stor_errf(err, errlen, "checkpoint connection: %s", k->db ? sqlite3_errmsg(k->db) : sqlite3_errstr(rc));
        sqlite3_close_v2(k->db);
        free(k);
        return -1;
    }
    sqlite3_busy_timeout(k->db, STOR_BUSY_TIMEOUT_MS);
    /* storage.sync=off promises only what survives a kill -9: its checkpoints sync nothing either */
    if (sync == STOR_SYNC_OFF && sqlite3_exec(k->db, "PRAGMA synchronous = OFF", NULL, NULL, NULL) != SQLITE_OK) {
        stor_errf(err, errlen, "checkpoint connection: %s", sqlite3_errmsg(k->db));
        sqlite3_close_v2(k->db);
        free(k);
        return -1;
    }
    /* asking for the journal mode reads the header, which opens the WAL */
    char mode[16] = "";
    rc = sqlite3_exec(k->db, "PRAGMA journal_mode", copy_text, mode, NULL);
    if (rc != SQLITE_OK || strcmp(mode, "wal") != 0) {
        stor_errf(err, errlen, "checkpoint connection: %s",
                  rc != SQLITE_OK ? sqlite3_errmsg(k->db) : "the database is not in WAL mode for it");
        sqlite3_close_v2(k->db);
        free(k);
        return -1;
    }
    char text[16] = "";
    int page = sqlite3_exec(s->db, "PRAGMA page_size", copy_text, text, NULL) == SQLITE_OK ? atoi(text) : 0;
    if (page <= 0) page = 4096;
    k->restart_frames = RESTART_WAL_BYTES / page;
    k->stats.restart_frames = k->restart_frames;
    pthread_mutex_init(&k->mu, NULL);
    pthread_cond_init(&k->cv, NULL);
    pthread_condattr_t monotonic;
    pthread_condattr_init(&monotonic);
    pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC);
    pthread_cond_init(&k->quit, &monotonic);
    pthread_condattr_destroy(&monotonic);
    if (pthread_create(&k->thread, NULL, run, k) != 0) {
        stor_errf(err, errlen, "cannot start the checkpoint thread");
        pthread_mutex_destroy(&k->mu);
        pthread_cond_destroy(&k->cv);
        pthread_cond_destroy(&k->quit);
        sqlite3_close_v2(k->db);
        free(k);
        return -1;
    }
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA wal_autocheckpoint = %d", SAFETY_VALVE_BYTES / page);
    sqlite3_exec(s->db, sql, NULL, NULL, NULL);
    /* once the WAL restarts, give the space of a load peak back to the filesystem */
    sqlite3_exec(s->db, "PRAGMA journal_size_limit = 67108864", NULL, NULL, NULL);
    s->ckpt = k;
    return 0;
}

/*
 * Under a steady trickle of commits (a record per millisecond) one always lands while the
 * thread's checkpoint runs, so no writer ever finds the WAL wholly copied and starts it over:
 * measured, it grew to 80 MB in 3 s, and deleting it at shutdown was most of the stop time.
 * Past RESTART_WAL_BYTES the loop restarts it itself after a commit: a RESTART copies the few
 * frames the thread's last pass left and makes the next commit write from the WAL's start.
 * It never waits: if the thread holds the checkpoint lock, the next commit tries again.
 * It syncs (the WAL, then the database file; not with storage.sync=off): 1-6 ms measured, every
 * ~0.7 s at a produce of one record per millisecond, so the broker calls it once the commit's answers
 * are written (stor_wal_restart_if_long from topic_commit_now), not inside stor_commit:
 * there the answers of that commit waited for it, a tail of the latency benchmark.
 */
static void restart_if_long(stor *s, stor_ckpt *k) {
    pthread_mutex_lock(&k->mu);
    int frames = k->stats.wal_frames;
    pthread_mutex_unlock(&k->mu);
    if (frames < k->restart_frames) return;
    int log = 0, done = 0;
    sqlite3_busy_timeout(s->db, 0);
    int rc = sqlite3_wal_checkpoint_v2(s->db, "main", SQLITE_CHECKPOINT_RESTART, &log, &done);
    sqlite3_busy_timeout(s->db, STOR_BUSY_TIMEOUT_MS);
    if (rc == SQLITE_OK) {
        pthread_mutex_lock(&k->mu);
        k->stats.wal_frames = 0;
        k->stats.restarts++;
        pthread_mutex_unlock(&k->mu);
    }
}

void stor_wal_restart_if_long(stor *s) {
    if (s->ckpt && !s->in_txn) restart_if_long(s, s->ckpt);
}

void stor_ckpt_kick(stor *s) {
    stor_ckpt *k = s->ckpt;
    if (!k) return;
    pthread_mutex_lock(&k->mu);
    k->kicked = true;
    pthread_cond_signal(&k->cv);
    pthread_mutex_unlock(&k->mu);
}

void stor_checkpoint_stats(stor *s, stor_ckpt_stats *out) {
    stor_ckpt *k = s->ckpt;
    memset(out, 0, sizeof *out);
    if (!k) return;
    pthread_mutex_lock(&k->mu);
    *out = k->stats;
    pthread_mutex_unlock(&k->mu);
}

void stor_ckpt_stop(stor *s) {
    stor_ckpt *k = s->ckpt;
    if (!k) return;
    pthread_mutex_lock(&k->mu);
    k->stop = true;
    pthread_cond_signal(&k->cv);
    pthread_cond_signal(&k->quit);
    pthread_mutex_unlock(&k->mu);
    pthread_join(k->thread, NULL);
    sqlite3_close_v2(k->db);
    pthread_mutex_destroy(&k->mu);
    pthread_cond_destroy(&k->cv);
    pthread_cond_destroy(&k->quit);
    free(k);
    s->ckpt = NULL;
}
