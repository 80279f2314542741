/*
 * storage.sync=normal: the fdatasync of a closed segment, late and off the loop.
 *
 * A segment's synced mark (segments.synced) only bounds what stor_recover reads back after a
 * restart of the operating system; nothing acknowledged waits for it (a kill -9 leaves the
 * page cache, and so every byte, intact). Syncing a 16 MiB segment the moment it was closed
 * made the broker do the kernel's writeback itself, on the loop: measured, a tenth of the
 * broker's CPU under produce (docs/benchmarks.md, "CPU per record produced (issue 37)") and a
 * stall of the loop at every segment roll. Kafka never syncs by default (log.flush.interval.*
 * unset: the OS writes back, and LogLoader recovers an unclean log on start,
 * core/src/main/scala/kafka/log/LogLoader.scala).
 *
 * So a closed segment, once the commit that closed it is in, is handed to a thread of this
 * file, which opens it by its path and fdatasyncs it (and then fsyncs the directories that name
 * it, which seg_create no longer does with normal) after a delay: by then the kernel's own
 * flusher has written the pages back (dirty pages older than vm.dirty_expire_centisecs, 30 s,
 * are written at its next pass, every vm.dirty_writeback_centisecs, 5 s), so the call mostly
 * only waits for the device. The loop commits the segment's mark with its next write
 * transaction (stor_seg_sync_marks), never before the fdatasync has returned. What the
 * thread has not done when the storage closes is left: those segments keep their old mark,
 * and the next open hands them to the thread again (stor_seg_sync_pending); after a reboot
 * stor_recover reads them back as it does the newest segment's unsynced bytes. The bound of
 * that read-back grows from one segment per partition to that plus the segments closed in the
 * last delay (40 s at the kernel's defaults).
 *
 * The thread starts with the first closed segment (an idle broker has none) and sleeps with no
 * timeout while its queue is empty. It touches only its own mutex-guarded queue and files it
 * opens itself; segment ids and topic ids are never reused, so a path names one segment for
 * good, and one deleted meanwhile (retention) is simply skipped.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kp_mem.h"
#include "stor_int.h"

typedef struct sync_item {
    int64_t topic_id, id, pos, due_ms;
    int32_t partition;
    char path[sizeof ((stor_segs *)0)->dir + 64];
} sync_item;

struct stor_seg_syncer {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* queued or stopping (monotonic clock) */
    bool stop;
    sync_item *queue; /* by due time: the delay is the same for all */
    size_t nqueue, capqueue;
    stor_seg_synced *done; /* synced, their marks not committed yet */
    size_t ndone, capdone;
    int busy; /* items being synced right now */
    uint64_t failures;
};

static int64_t mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static long read_centisecs(const char *path, long dflt) {
    FILE *f = fopen(path, "r");
    long v = dflt;
    if (f) {
        if (fscanf(f, "%ld", &v) != 1 || v < 0) v = dflt;
        fclose(f);
    }
    return v;
}

/* Long enough for the kernel's flusher to have written a closed segment back (see the top). */
int64_t stor_seg_sync_default_delay_ms(void) {
    long expire = read_centisecs("/proc/sys/vm/dirty_expire_centisecs", 3000);
    long every = read_centisecs("/proc/sys/vm/dirty_writeback_centisecs", 500);
    if (expire > 30000) expire = 30000; /* a delay of minutes would leave too much to read back */
    if (every > 3000) every = 3000;
    return (int64_t)(expire + 2 * every) * 10;
}

/*
 * The segment's bytes, then its name: the directories from its partition's up to the data
 * directory, whose new entries seg_create leaves to this with normal. A mark says the segment
 * outlives a power cut, so it comes only after both. A directory's fsync failing is ignored,
 * as it always was at creation (some file systems refuse fsync on a directory).
 */
static bool sync_segment(const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    bool ok = fdatasync(fd) == 0;
    close(fd);
    if (ok) stor_fsync_dirs_above(path, STOR_SEG_DIR_LEVELS);
    return ok;
}

static void *run(void *arg) {
    stor_seg_syncer *y = arg;
    pthread_mutex_lock(&y->mu);
    while (!y->stop) {
        if (y->nqueue == 0) {
            pthread_cond_wait(&y->cv, &y->mu);
            continue;
        }
        int64_t now = mono_ms(), due = y->queue[0].due_ms;
        if (due > now) {
            struct timespec until;
            clock_gettime(CLOCK_MONOTONIC, &until);
            int64_t wait = due - now;
            until.tv_sec += wait / 1000;
            until.tv_nsec += (wait % 1000) * 1000000L;
            if (until.tv_nsec >= 1000000000L) {
                until.tv_sec++;
                until.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&y->cv, &y->mu, &until);
            continue;
        }
        sync_item it = y->queue[0];
        memmove(y->queue, y->queue + 1, (y->nqueue - 1) * sizeof *y->queue);
        y->nqueue--;
        y->busy++;
        pthread_mutex_unlock(&y->mu);
        bool ok = sync_segment(it.path);
        bool gone = !ok && access(it.path, F_OK) != 0 && errno == ENOENT; /* deleted meanwhile: nothing left to mark */
        pthread_mutex_lock(&y->mu);
        y->busy--;
        if (ok) {
            /* room made by stor_seg_sync_later: this thread never allocates (no malloc arena of its own) */
            y->done[y->ndone++] = (stor_seg_synced){.topic_id = it.topic_id, .partition = it.partition,
                                                    .id = it.id, .pos = it.pos};
        } else if (!gone) {
            y->failures++; /* the mark stays behind: a reboot reads the segment back, as for the newest */
        }
    }
    pthread_mutex_unlock(&y->mu);
    return NULL;
}

static stor_seg_syncer *syncer_start(void) {
    stor_seg_syncer *y = xcalloc(1, sizeof *y);
    pthread_mutex_init(&y->mu, NULL);
    pthread_condattr_t monotonic;
    pthread_condattr_init(&monotonic);
    pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC);
    pthread_cond_init(&y->cv, &monotonic);
    pthread_condattr_destroy(&monotonic);
    if (pthread_create(&y->thread, NULL, run, y) != 0) {
        pthread_mutex_destroy(&y->mu);
        pthread_cond_destroy(&y->cv);
        free(y);
        return NULL;
    }
    return y;
}

void stor_seg_sync_later(stor *s, int64_t topic_id, int32_t partition, int64_t id, int64_t pos) {
    stor_segs *g = &s->segs;
    if (!g->syncer && !g->syncer_failed) {
        g->syncer = syncer_start();
        g->syncer_failed = !g->syncer;
    }
    sync_item it = {.topic_id = topic_id, .partition = partition, .id = id, .pos = pos};
    stor_seg_path(s, topic_id, partition, id, it.path, sizeof it.path);
    stor_seg_syncer *y = g->syncer;
    if (!y) {
        /* no thread: sync here, as before this file existed */
        if (sync_segment(it.path)) {
            XGROW(g->marking, g->capmarking, g->nmarking + 1, 8);
            g->marking[g->nmarking++] = (stor_seg_synced){.topic_id = topic_id, .partition = partition, .id = id,
                                                          .pos = pos};
        }
        return;
    }
    it.due_ms = mono_ms() + g->sync_delay_ms;
    pthread_mutex_lock(&y->mu);
    XGROW(y->queue, y->capqueue, y->nqueue + 1, 8);
    XGROW(y->done, y->capdone, y->ndone + (size_t)y->busy + y->nqueue + 1, 8);
    y->queue[y->nqueue++] = it;
    pthread_cond_signal(&y->cv);
    pthread_mutex_unlock(&y->mu);
}

int stor_seg_sync_marks(stor *s) {
    stor_segs *g = &s->segs;
    stor_seg_syncer *y = g->syncer;
    if (y) {
        pthread_mutex_lock(&y->mu);
        if (y->ndone) {
            XGROW(g->marking, g->capmarking, g->nmarking + y->ndone, 8);
            memcpy(g->marking + g->nmarking, y->done, y->ndone * sizeof *y->done);
            g->nmarking += y->ndone;
            y->ndone = 0;
        }
        pthread_mutex_unlock(&y->mu);
    }
    /* kept until the commit is in (stor_seg_sync_committed): a rollback leaves them for the next one */
    for (size_t i = 0; i < g->nmarking; i++) {
        const stor_seg_synced *m = &g->marking[i];
        /* pos is a committed end (a closed segment's, or used at a start), not past used as the readers see it */
        char *sql = sqlite3_mprintf("UPDATE segments SET synced = max(synced, %lld) WHERE topic_id = %lld"
                                    " AND partition = %d AND id = %lld", (long long)m->pos, (long long)m->topic_id,
                                    m->partition, (long long)m->id);
        int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
        sqlite3_free(sql);
        if (rc != SQLITE_OK) return stor_fail(s, "mark segment synced");
    }
    return 0;
}

void stor_seg_sync_committed(stor *s) { s->segs.nmarking = 0; }

int stor_seg_sync_pending(stor *s) {
    /* closed segments (not their partition's newest) whose bytes are not all marked synced */
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT topic_id, partition, id, used FROM segments d WHERE synced < used AND id <"
                           " (SELECT max(id) FROM segments n WHERE n.topic_id = d.topic_id AND n.partition = d.partition)",
                           -1, &st, NULL) != SQLITE_OK)
        return stor_fail(s, "read segments to sync");
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        stor_seg_sync_later(s, sqlite3_column_int64(st, 0), sqlite3_column_int(st, 1), sqlite3_column_int64(st, 2),
                            sqlite3_column_int64(st, 3));
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : stor_fail(s, "read segments to sync");
}

bool stor_seg_sync_idle(stor *s, int64_t wait_ms) {
    stor_seg_syncer *y = s->segs.syncer;
    if (!y) return true;
    int64_t until = mono_ms() + wait_ms;
    for (;;) {
        pthread_mutex_lock(&y->mu);
        bool idle = y->nqueue == 0 && y->busy == 0;
        pthread_mutex_unlock(&y->mu);
        if (idle || mono_ms() >= until) return idle;
        struct timespec ms = {0, 1000000L};
        nanosleep(&ms, NULL);
    }
}

void stor_seg_sync_set_delay(stor *s, int64_t ms) { s->segs.sync_delay_ms = ms < 0 ? 0 : ms; }

void stor_seg_sync_stop(stor *s) {
    stor_segs *g = &s->segs;
    stor_seg_syncer *y = g->syncer;
    if (y) {
        pthread_mutex_lock(&y->mu);
        y->stop = true;
        pthread_cond_signal(&y->cv);
        pthread_mutex_unlock(&y->mu);
        /* at most one fdatasync in progress; what is still queued keeps its old mark */
        pthread_join(y->thread, NULL);
        pthread_mutex_destroy(&y->mu);
        pthread_cond_destroy(&y->cv);
        free(y->queue);
        free(y->done);
        free(y);
        g->syncer = NULL;
    }
    free(g->marking);
    g->marking = NULL;
    g->nmarking = g->capmarking = 0;
}
