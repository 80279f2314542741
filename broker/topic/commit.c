/*
 * commit: the per-iteration storage commit, which makes what the loop appended durable before
 * anyone is told. Appends (append.c, markers) mark their partition dirty; once per loop
 * iteration (lifecycle.c's prepare callback), and wherever a step must be durable before the next
 * (topic creation, the cleaner, the admin API's reset), the open storage transaction commits.
 * After a commit the dirty partitions' high watermarks advance to their ends, transactions whose
 * markers are now durable settle, parked readers whose data arrived wake (topic_wait), and the
 * transport sends the answers it held for the commit (net_after_commit). Kafka makes a batch
 * visible at the high watermark only once it is replicated; here "replicated" means "in the
 * database", and kill -9 then loses nothing that was acknowledged.
 *
 * A failed commit that held only batches and offsets is undone in memory and answered as Kafka
 * answers a failed append; any other failure leaves memory past storage, and the broker stops
 * (srv_fail_stop: exit 3 from main) rather than serve it.
 */
#include "topic.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include "clock.h"
#include "group/group.h"
#include "kp_mem.h"
#include "log.h"
#include "metrics.h"
#include "net/net.h"

void topic_mark_dirty(srv *s, partition *p) {
    if (p->dirty) return;
    XGROW(s->dirty, s->cap_dirty, s->ndirty + 1, 64);
    p->dirty = true;
    s->dirty[s->ndirty++] = p;
}

/* ---- parked readers ---- */

void topic_wait(srv *s, topic_waiter *w) {
    w->prev = NULL;
    w->next = s->waiters;
    if (s->waiters) s->waiters->prev = w;
    s->waiters = w;
    w->waiting = true;
}

void topic_unwait(srv *s, topic_waiter *w) {
    if (!w->waiting) return;
    if (w->prev)
        w->prev->next = w->next;
    else
        s->waiters = w->next;
    if (w->next) w->next->prev = w->prev;
    w->prev = w->next = NULL;
    w->waiting = false;
}

/* Waking may start a connection's next request, which may wait anew: collect first, then wake. */
static void wake(srv *s, bool all) {
    topic_waiter *ready = NULL;
    for (topic_waiter *w = s->waiters; w;) {
        topic_waiter *next = w->next;
        if (all || w->ready(s, w)) {
            topic_unwait(s, w);
            w->next = ready;
            ready = w;
        }
        w = next;
    }
    while (ready) {
        topic_waiter *w = ready;
        ready = w->next;
        w->next = NULL;
        w->wake(s, w);
    }
}

void topic_wake_all(srv *s) {
    while (s->waiters) wake(s, true);
}

/* ---- the commit ---- */

static void after_commit(srv *s) {
    bool advanced = false;
    for (int i = 0; i < s->ndirty; i++) {
        partition *p = s->dirty[i];
        p->dirty = false;
        if (p->hw != p->end) advanced = true;
        p->hw = p->end;
        if (p->ntxns) topic_txn_settle(p);
    }
    s->ndirty = 0;
    if (advanced) wake(s, false);
    net_after_commit(s);
}

/*
 * A commit failed (disk full, I/O error) that held only produced batches and offset changes,
 * which can be undone in memory: the log goes back to what storage holds (its producer state
 * read again), and committed offsets are read again from storage. The requests held for the
 * commit get their handlers' failure answers (produce: KAFKA_STORAGE_ERROR per partition;
 * OffsetCommit and OffsetDelete: NOT_COORDINATOR, as Kafka answers when its append to
 * __consumer_offsets fails with a storage error), and the broker goes on serving reads.
 */
static int survive_failed_commit(srv *s, unsigned kinds) {
    char err[512];
    snprintf(err, sizeof err, "%s", stor_errmsg(s->st));
    topic_cleaner_abort(s, "a storage commit holding its rewrites failed");
    int npart = s->ndirty;
    if (topic_rollback(s, s->dirty, s->ndirty) != 0) {
        log_error("storage commit failed: %s; reading the producer state back from storage failed too: %s", err,
                  stor_errmsg(s->st));
        return -1;
    }
    for (int i = 0; i < s->ndirty; i++) s->dirty[i]->dirty = false;
    s->ndirty = 0;
    if (kinds & STOR_TXN_OFFSETS) grp_reload_offsets(s);
    int closed;
    int answered = net_fail_commit(s, &closed);
    log_error("storage commit failed: %s; %d partition(s) went back to their committed end%s; %d request(s) held for "
              "the commit got their storage-failure answer (produce: KAFKA_STORAGE_ERROR(56), offsets: "
              "NOT_COORDINATOR(16))%s; nothing of them was stored, reads go on",
              err, npart, kinds & STOR_TXN_OFFSETS ? ", committed offsets were read again from storage" : "",
              answered, closed ? ", connections holding other answers were closed" : "");
    return 0;
}

int topic_commit_now(srv *s) {
    /* after a fatal failure nothing more is stored: the process is on its way out (exit 3) */
    if (s->fatal_exit) return -1;
    if (!stor_in_txn(s->st)) {
        if (s->ndirty) after_commit(s);
        return 0;
    }
    unsigned kinds = stor_txn_kinds(s->st);
    s->offset_error_logged = false;
    int64_t t0 = clk_mono_us();
    int rc = stor_commit(s->st);
    metrics_commit(&s->metrics, clk_mono_us() - t0);
    if (rc != 0) {
        if (!(kinds & ~(unsigned)(STOR_TXN_BATCHES | STOR_TXN_OFFSETS)) && survive_failed_commit(s, kinds) == 0)
            return -1;
        /*
         * The transaction also changed topics, configs, retention or group state (or rolling
         * back failed), so the in-memory state is past what storage holds. Nothing of it was
         * acknowledged; the only safe way on is a restart that reloads the database.
         */
        if (kinds & ~(unsigned)(STOR_TXN_BATCHES | STOR_TXN_OFFSETS))
            log_error("storage commit failed: %s; it held topic, config, retention or group-state changes whose "
                      "in-memory state cannot be rolled back", stor_errmsg(s->st));
        log_error("stopping (exit 3) rather than serve what is not stored; a restart reloads the database");
        srv_fail_stop(s, 3);
        return -1;
    }
    after_commit(s);
    /* the answers are written: a long WAL's restart (which syncs) no longer holds them back */
    stor_wal_restart_if_long(s->st);
    return 0;
}

/* Free bytes for storage: the file system's, plus the database's free pages, which are reused first. */
static int64_t storage_free(srv *s) {
    struct statvfs v;
    if (statvfs(s->cfg->data_dir, &v) != 0) return INT64_MAX;
    return (int64_t)v.f_bavail * (int64_t)v.f_frsize + stor_free_page_bytes(s->st);
}

bool topic_storage_room(srv *s, size_t need, int64_t *free_bytes) {
    int64_t min = s->cfg->storage_min_free_bytes;
    *free_bytes = -1;
    if (min <= 0 || strcmp(s->cfg->data_dir, ":memory:") == 0) return true;
    int64_t now = clk_mono_ms();
    /* statvfs at most every 100 ms while there is room, and always before refusing */
    if (now - s->room_checked_ms >= 100 || s->room_free - s->room_used - (int64_t)need < min) {
        s->room_free = storage_free(s);
        s->room_used = 0;
        s->room_checked_ms = now;
    }
    *free_bytes = s->room_free - s->room_used;
    if (*free_bytes - (int64_t)need < min) return false;
    s->room_used += (int64_t)need;
    return true;
}
