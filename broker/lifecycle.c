/*
 * lifecycle: start-up in dependency order, the loop's two recurring callbacks (the prepare step that
 * resumes connections and commits once per iteration, topic/commit.c; the housekeeping tick:
 * idle connections, retention, offset expiry, transaction timeouts) and shutdown. The top of
 * the broker: it may call every subsystem; nothing but main calls it.
 */
#include "lifecycle.h"

#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "admin/admin.h"
#include "admin/fault.h"
#include "aws/aws.h"
#include "clock.h"
#include "log.h"
#include "group/group.h"
#include "net/net.h"
#include "pipeline/pipeline.h"
#include "iam/authz.h"
#include "iam/sasl.h"
#include "topic/topic.h"
#include "txn/txn.h"

/* Runs once per loop iteration, just before the loop waits for I/O. */
static void on_prepare(uv_prepare_t *h) {
    srv *s = h->data;
    /* answers to parked requests resume their connections, whose next requests may append */
    do {
        net_run_pumps(s);
        topic_commit_now(s);
    } while (net_pumps_pending());
}

/*
 * Under load the heap keeps what it frees (main.c raises glibc's trim and
 * mmap thresholds, so megabyte-sized request buffers do not fault in fresh
 * zeroed pages each time); after a second without requests it goes back.
 */
static void trim_heap_when_idle(srv *s) {
    uint64_t before = s->requests_at_tick;
    s->requests_at_tick = s->requests;
    if (s->requests == s->requests_at_trim || s->requests != before) return;
    s->requests_at_trim = s->requests;
    malloc_trim(0);
}

/* The checkpoint thread cannot log; its failures are reported from here. */
static void report_checkpoint_failures(srv *s) {
    stor_ckpt_stats st;
    stor_checkpoint_stats(s->st, &st);
    if (st.failures == s->ckpt_failures_logged) return;
    log_warn("storage: %llu WAL checkpoint(s) failed since the last report: %s; the WAL keeps growing until one succeeds",
             (unsigned long long)(st.failures - s->ckpt_failures_logged), st.last_error);
    s->ckpt_failures_logged = st.failures;
}

static void on_housekeeping(uv_timer_t *h) {
    srv *s = h->data;
    net_sweep_idle(s);
    trim_heap_when_idle(s);
    report_checkpoint_failures(s);
    int64_t now = clk_mono_ms();
    if (now >= s->next_retention_ms) {
        s->next_retention_ms = now + s->cfg->log_retention_check_interval_ms;
        topic_enforce_retention(s);
    }
    if (now >= s->next_offsets_expiry_ms) {
        s->next_offsets_expiry_ms = now + s->cfg->offsets_retention_check_interval_ms;
        grp_expire_offsets(s);
    }
    txn_tick(s);
}

/* The data directory, made before storage and TLS (which keeps tls/ in it) start side by side. */
static int make_data_dir(srv *s, char *err, size_t errlen) {
    const char *dir = s->cfg->data_dir;
    if (strcmp(dir, ":memory:") == 0 || mkdir(dir, 0755) == 0) return 0;
    struct stat st;
    if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) return 0;
    snprintf(err, errlen, "data.dir %s: cannot create the directory", dir);
    return -1;
}

static int open_storage(srv *s, char *err, size_t errlen) {
    const char *dir = s->cfg->data_dir;
    char path[4096];
    if (strcmp(dir, ":memory:") == 0)
        snprintf(path, sizeof path, ":memory:");
    else
        snprintf(path, sizeof path, "%s/mskmock.db", dir);
    char why[1024];
    if (stor_open(&s->st, path, (stor_sync)s->cfg->storage_sync, why, sizeof why) != 0) {
        snprintf(err, errlen, "storage %.3000s: %.1000s", path, why);
        return -1;
    }
    int64_t t0 = clk_mono_ms();
    int rc = stor_check(s->st, s->cfg->storage_startup_check_ms, why, sizeof why);
    if (rc < 0) {
        stor_close(s->st); /* nothing was written: closing leaves the file as it was found */
        s->st = NULL;
        snprintf(err, errlen,
                 "storage %.3000s is damaged (PRAGMA quick_check: %.1000s); refusing to start on it, the file is "
                 "unchanged. To copy what is readable into a new database, with DB that file: mv DB DB.damaged && "
                 "mskmock --salvage DB.damaged (with the same data directory), then start as before (README: \"A "
                 "damaged database\")", path, why);
        return -1;
    }
    stor_seg_set_bytes(s->st, s->cfg->storage_segment_bytes);
    if (stor_recover(s->st) != 0) {
        snprintf(err, errlen, "storage %.3000s: %.1000s", path, stor_errmsg(s->st));
        stor_close(s->st);
        s->st = NULL;
        return -1;
    }
    s->storage_check_ms = clk_mono_ms() - t0;
    s->storage_check_partial = rc == 1 && s->cfg->storage_startup_check_ms > 0;
    return 0;
}

/*
 * Storage opens on a thread while sasl_init makes the TLS material: both
 * wait on fsync when the data directory is new (SQLite's WAL, the CA files),
 * so start-up takes the longer of the two instead of their sum.
 */
typedef struct open_job {
    srv *s;
    int rc;
    char err[4600]; /* open_storage names a path of up to 3000 bytes and SQLite's reason */
} open_job;

static void *open_storage_job(void *arg) {
    open_job *j = arg;
    j->rc = open_storage(j->s, j->err, sizeof j->err);
    return NULL;
}

int srv_init(srv *s, uv_loop_t *loop, config *cfg, char *err, size_t errlen) {
    memset(s, 0, sizeof *s);
    s->loop = loop;
    s->cfg = cfg;
    s->started_us = clk_mono_us();
    metrics_init(&s->metrics);
    s->dispatch = pipeline_dispatch;
    s->conn_closed = authz_forget;
    s->next_producer_id = 1000;
    s->nnodes = (int)cfg->broker_count;
    for (int i = 0; i < s->nnodes; i++) {
        s->nodes[i].id = cfg->node_ids[i];
        s->nodes[i].ports[LSN_PLAINTEXT] = cfg->plaintext_port ? (int32_t)(cfg->plaintext_port + i) : 0;
        s->nodes[i].ports[LSN_IAM] = cfg->iam_port ? (int32_t)(cfg->iam_port + i) : 0;
        s->nodes[i].ports[LSN_SASL_PLAINTEXT] = cfg->sasl_plaintext_port ? (int32_t)(cfg->sasl_plaintext_port + i) : 0;
        s->nodes[i].ports[LSN_EXTERNAL] = cfg->external_port ? (int32_t)(cfg->external_port + i) : 0;
        s->nodes[i].ports[LSN_EXTERNAL_IAM] = cfg->external_iam_port ? (int32_t)(cfg->external_iam_port + i) : 0;
    }
    if (make_data_dir(s, err, errlen) != 0) return -1;
    open_job job = {.s = s};
    pthread_t opener;
    bool threaded = pthread_create(&opener, NULL, open_storage_job, &job) == 0;
    if (!threaded) open_storage_job(&job);
    int sasl_rc = sasl_init(s, err, errlen);
    if (threaded) pthread_join(opener, NULL);
    if (job.rc != 0) {
        snprintf(err, errlen, "%s", job.err);
        return -1;
    }
    if (sasl_rc != 0) return -1;
    if (s->storage_check_partial)
        log_info("storage: the start-up check stopped after %lld ms (storage.startup.check.ms); the rest of the "
                 "database was not checked", (long long)s->storage_check_ms);
    int64_t checked = 0, dropped = stor_seg_recovery(s->st, &checked);
    if (checked > 0)
        log_warn("storage: the system restarted since this database was last open; read back %lld bytes of record "
                 "batches that were not known to be on disk: %lld failed their CRC and were removed with every later "
                 "batch of their partition (storage.sync=%s loses at most the newest commits to a power cut)",
                 (long long)checked, (long long)dropped, s->cfg->storage_sync == STOR_SYNC_FULL ? "full" : "normal");
    if (authz_init(s, err, errlen) != 0) return -1;
    if (topic_load_all(s) != 0) {
        snprintf(err, errlen, "loading topics: %s", stor_errmsg(s->st));
        return -1;
    }
    if (grp_load(s) != 0) {
        snprintf(err, errlen, "loading groups and offsets: %s", stor_errmsg(s->st));
        return -1;
    }
    if (grp_configs_load(s) != 0) {
        snprintf(err, errlen, "loading group configs: %s", stor_errmsg(s->st));
        return -1;
    }
    /* a decision whose markers a crash interrupted is finished (and stored) before any client is served */
    if (txn_init(s) != 0 || topic_commit_now(s) != 0) {
        snprintf(err, errlen, "loading transactions: %s", stor_errmsg(s->st));
        return -1;
    }
    /* before any listener: a client never sees the cluster without them */
    if (topic_create_configured(s, err, errlen) != 0) return -1;
    if (topic_commit_now(s) != 0) {
        snprintf(err, errlen, "storing the topics of topics.create: %s", stor_errmsg(s->st));
        return -1;
    }
    topic_cleaner_start(s);
    if (net_listen(s, err, errlen) != 0) return -1;
    if (admin_start(s, err, errlen) != 0) return -1;
    if (aws_start(s, err, errlen) != 0) return -1;
    uv_prepare_init(loop, &s->commit_handle);
    s->commit_handle.data = s;
    uv_prepare_start(&s->commit_handle, on_prepare);
    uv_timer_init(loop, &s->housekeeping);
    s->housekeeping.data = s;
    s->next_retention_ms = clk_mono_ms() + cfg->log_retention_check_interval_ms;
    s->next_offsets_expiry_ms = clk_mono_ms() + cfg->offsets_retention_check_interval_ms;
    uv_timer_start(&s->housekeeping, on_housekeeping, 1000, 1000);
    uv_unref((uv_handle_t *)&s->housekeeping);
    return 0;
}

void srv_close(srv *s) {
    topic_commit_now(s);
    stor_ckpt_stats st;
    stor_checkpoint_stats(s->st, &st);
    if (st.runs)
        log_info("storage: %llu WAL checkpoints since start, %llu failed", (unsigned long long)st.runs,
                 (unsigned long long)st.failures);
    topic_wake_all(s);
    net_close_all(s);
    grp_close_all(s);
    txn_close(s);
    topic_cleaner_stop(s);
    sasl_close(s);
    authz_close(s);
    admin_close(s);
    aws_close(s);
    if (!uv_is_closing((uv_handle_t *)&s->commit_handle)) uv_close((uv_handle_t *)&s->commit_handle, NULL);
    if (!uv_is_closing((uv_handle_t *)&s->housekeeping)) uv_close((uv_handle_t *)&s->housekeeping, NULL);
}

void srv_free(srv *s) {
    while (s->topics) {
        topic *t = s->topics;
        s->topics = t->next;
        topic_free(t);
    }
    free(s->dirty);
    for (int k = 0; k < LSN_COUNT; k++) free(s->adv_host[k]);
    grp_configs_free(s);
    txn_free(s);
    fault_free_all(s);
    metrics_free(&s->metrics);
    authz_free(s);
    sasl_free(s);
    stor_close(s->st);
    s->st = NULL;
}
