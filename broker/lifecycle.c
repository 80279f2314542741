/*
 * lifecycle: start-up in dependency order, the loop's two recurring callbacks (the prepare step that
 * resumes connections and commits once per iteration, topic/commit.c; the housekeeping tick:
 * idle connections, retention, offset expiry, transaction timeouts) and shutdown. The top of
 * the broker: it may call every subsystem; nothing but main calls it.
 */
#include "lifecycle.h"

#include <errno.h>
#include <ftw.h>
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
#include "fleet.h"
#include "kp_mem.h"
#include "log.h"
#include "group/group.h"
#include "net/net.h"
#include "pipeline/pipeline.h"
#include "ready.h"
#include "iam/authz.h"
#include "iam/sasl.h"
#include "topic/topic.h"
#include "txn/txn.h"

/* Runs once per loop iteration, just before the loop waits for I/O: every cluster's. */
static void on_prepare(uv_prepare_t *h) {
    fleet *f = h->data;
    for (int i = 0; i < f->n; i++) {
        srv *s = f->list[i]->s;
        if (!s || s->stopping) continue;
        /* answers to parked requests resume their connections, whose next requests may append */
        do {
            net_run_pumps(s);
            topic_commit_now(s);
        } while (net_pumps_pending(s));
    }
}

/*
 * Under load the heap keeps what it frees (main.c raises glibc's trim and
 * mmap thresholds, so megabyte-sized request buffers do not fault in fresh
 * zeroed pages each time); after a second without requests it goes back.
 * A deleted cluster frees its heap too (about a megabyte each), with no Kafka
 * request to count: heap_trim_due marks a trim as owed.
 */
static void trim_heap_when_idle(fleet *f) {
    srv *s = f->list[0]->s; /* the primary keeps the marks, of every cluster's requests */
    uint64_t requests = 0;
    for (int i = 0; i < f->n; i++)
        if (f->list[i]->s) requests += f->list[i]->s->requests;
    uint64_t before = s->requests_at_tick;
    s->requests_at_tick = requests;
    if (requests == s->requests_at_trim || requests != before) return;
    s->requests_at_trim = requests;
    malloc_trim(0);
}

/* The next idle tick trims the heap, whether or not Kafka requests came since the last trim. */
static void heap_trim_due(fleet *f) {
    if (f->n && f->list[0]->s) f->list[0]->s->requests_at_trim = UINT64_MAX;
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

static void housekeep(srv *s) {
    net_sweep_idle(s);
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

/* One tick for every cluster: a cluster adds no timer of its own. */
static void on_housekeeping(uv_timer_t *h) {
    fleet *f = h->data;
    fleet_sweep(f);
    for (int i = 0; i < f->n; i++)
        if (f->list[i]->s && !f->list[i]->s->stopping) housekeep(f->list[i]->s);
    trim_heap_when_idle(f);
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
    /* before stor_recover, whose truncation to the index's length would cut a swapped-in file */
    int64_t v0 = clk_mono_ms();
    rc = stor_verify(s->st, (stor_verify_mode)s->cfg->storage_verify, &s->storage_verify, why, sizeof why);
    s->storage_verify_ms = clk_mono_ms() - v0;
    if (rc != 0) {
        stor_close(s->st); /* the check writes nothing: every file is as it was found */
        s->st = NULL;
        if (rc < 0) {
            snprintf(err, errlen, "storage %.3000s: checking its segment files: %.1000s", path, why);
            return -1;
        }
        snprintf(err, errlen,
                 "storage %.3000s: %.1000s; refusing to start on it (storage.verify=%s), no file was changed. Restore "
                 "that file, or keep every batch whose bytes are sound: with DB that database, mv DB DB.damaged && "
                 "mskmock --salvage DB.damaged (with the same data directory), then start as before (README: \"A "
                 "damaged segment file\")", path, why, s->cfg->storage_verify == STOR_VERIFY_FULL ? "full" : "start");
        return -1;
    }
    if (stor_recover(s->st) != 0) {
        snprintf(err, errlen, "storage %.3000s: %.1000s", path, stor_errmsg(s->st));
        stor_close(s->st);
        s->st = NULL;
        return -1;
    }
    stor_reserve_keep(s->st); /* room for deleting a topic on a full disk (storage/stor_reserve.c) */
    s->storage_check_ms = clk_mono_ms() - t0;
    s->storage_check_partial = rc == 1 && s->cfg->storage_startup_check_ms > 0;
    return 0;
}

/*
 * Storage opens on a thread while a child process sasl_init started makes the
 * TLS material: both wait on fsync when the data directory is new (SQLite's
 * WAL, the CA files), so start-up takes the longer of the two instead of
 * their sum.
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


/* What every cluster's srv starts with, before storage. */
static void srv_fields(srv *s, uv_loop_t *loop, config *cfg, fleet *f) {
    memset(s, 0, sizeof *s);
    s->loop = loop;
    s->cfg = cfg;
    s->fleet = f;
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
}

/* Storage's lines for the operator: segment files it moved aside rather than delete (storage/stor_orphans.c). */
static void storage_notice(void *ctx, const char *line) {
    (void)ctx;
    log_warn("%s", line);
}

/* A cluster's state loaded from its open storage, then its listeners: what every cluster does at start. */
static int cluster_load(srv *s, char *err, size_t errlen) {
    stor_set_notice(s->st, storage_notice, s); /* on the loop's thread: stor_recover's lines were held until now */
    if (s->storage_check_partial)
        log_info("storage: the start-up check stopped after %lld ms (storage.startup.check.ms); the rest of the "
                 "database was not checked", (long long)s->storage_check_ms);
    if (s->storage_verify.segments > 0)
        log_info("storage: %lld segment files checked against the index (storage.verify=%s: %lld batches read, %lld "
                 "bytes) in %lld ms", (long long)s->storage_verify.segments,
                 s->cfg->storage_verify == STOR_VERIFY_FULL ? "full" : "start",
                 (long long)s->storage_verify.batches_read, (long long)s->storage_verify.bytes_read,
                 (long long)s->storage_verify_ms);
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
    if (topic_internal_ensure(s, TOPIC_OFFSETS) != 0) {
        snprintf(err, errlen, "creating %s: %s", TOPIC_OFFSETS, stor_errmsg(s->st));
        return -1;
    }
    if (topic_commit_now(s) != 0) {
        snprintf(err, errlen, "storing the topics of topics.create: %s", stor_errmsg(s->st));
        return -1;
    }
    topic_cleaner_start(s);
    if (net_listen(s, err, errlen) != 0) return -1;
    s->next_retention_ms = clk_mono_ms() + s->cfg->log_retention_check_interval_ms;
    s->next_offsets_expiry_ms = clk_mono_ms() + s->cfg->offsets_retention_check_interval_ms;
    return 0;
}

/* ---- clusters the control plane creates ------------------------------------------------ */

static srv *primary_of(fleet *f) { return f->list[0]->s; }

/* data.dir/clusters/<uuid>, or ":memory:" when the configured cluster keeps nothing on disk. */
static void cluster_dir(const fleet *f, const cluster *c, char *out, size_t n) {
    const char *dir = f->list[0]->s->cfg->data_dir;
    if (!strcmp(dir, ":memory:"))
        snprintf(out, n, ":memory:");
    else
        snprintf(out, n, "%s/clusters/%s", dir, c->uuid);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* A deleted cluster's directory, whole. */
static void remove_dir(const char *dir) {
    if (!strcmp(dir, ":memory:")) return;
    if (nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS) != 0 && errno != ENOENT)
        log_warn("cluster: removing %s: %s; remove it by hand", dir, strerror(errno));
}

/* The keys a created cluster has over the configured sources: what makes it this cluster. */
static int cluster_config(fleet *f, const cluster *c, config *cfg, char *err, size_t n) {
    char dir[4096], brokers[16], rf[16], cluster_id[40];
    cluster_dir(f, c, dir, sizeof dir);
    snprintf(brokers, sizeof brokers, "%d", c->brokers);
    /* MSK's default replication factor: 3, or fewer on a cluster of fewer brokers */
    snprintf(rf, sizeof rf, "%d", c->brokers && c->brokers < 3 ? c->brokers : 3);
    /* Kafka's cluster id is 22 characters (a base64 UUID): the uuid's hex is as unique */
    size_t k = 0;
    for (const char *p = c->uuid; *p && k < 22; p++)
        if (*p != '-') cluster_id[k++] = *p;
    cluster_id[k] = '\0';
    /* the Kafka release of MSK's version string: "3.6.0" -> 3.6, "4.0.x.kraft" -> 4.0; none for serverless */
    char kafka[8] = "none";
    size_t major = strcspn(c->kafka_version, ".");
    if (!c->serverless && c->kafka_version[major])
        snprintf(kafka, sizeof kafka, "%.*s", (int)(major + 1 + strcspn(c->kafka_version + major + 1, ".")),
                 c->kafka_version);
    const srv *p = primary_of(f);
    /* a serverless cluster keeps the configured cluster's developer listener, as the configured one has it */
    const char *plain = c->serverless ? (p->cfg->plaintext_port ? "9092" : "0") : (c->unauthenticated ? "9092" : "0");
    cfg_arg over[] = {
        {"CreateClusterV2", "profile", c->serverless ? "serverless" : "provisioned"},
        {"CreateClusterV2", "msk.cluster.name", c->name},
        {"CreateClusterV2", "msk.account.id", c->account},
        {"CreateClusterV2", "msk.cluster.uuid", c->uuid},
        {"CreateClusterV2", "cluster.id", cluster_id},
        {"CreateClusterV2", "data.dir", dir},
        {"CreateClusterV2", "broker.ids", ""},
        {"CreateClusterV2", "port.base", "9080"},
        {"CreateClusterV2", "ports.auto", "true"},
        {"CreateClusterV2", "plaintext.port", plain},
        {"CreateClusterV2", "iam.port", c->iam ? "9098" : "0"},
        {"CreateClusterV2", "sasl.plaintext.port", "0"},
        {"CreateClusterV2", "external.port", "0"},
        {"CreateClusterV2", "external.iam.port", "0"},
        {"CreateClusterV2", "admin.port", "0"},
        {"CreateClusterV2", "aws.port", "0"},
        {"CreateClusterV2", "iam.credentials.port", "0"},
        {"CreateClusterV2", "ready.file", ""},
        {"CreateClusterV2", "topics.create", ""},
        {"CreateClusterV2", "kafka.version", kafka},
        /* last: left out for serverless (0), whose profile says */
        {"CreateClusterV2", "default.replication.factor", rf},
        {"CreateClusterV2", "broker.count", brokers},
    };
    int nover = (int)(sizeof over / sizeof over[0]) - (c->brokers ? 0 : 2);
    return cfg_load_over(cfg, &f->src, over, nover, err, n);
}

/* A created cluster's srv to free once the loop has let go of its handles (closed an iteration before). */
typedef struct discard {
    uv_timer_t timer;
    srv *s;
    bool drop; /* its directory goes too: deleted, or never finished starting */
} discard;

static void free_cluster_srv(srv *s) {
    srv_free(s);
    cfg_free(s->cfg);
    free(s->cfg);
    free(s);
}

static void on_discarded(uv_timer_t *t) {
    discard *d = t->data;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", d->s->cfg->data_dir);
    heap_trim_due(d->s->fleet);
    free_cluster_srv(d->s);
    if (d->drop) remove_dir(dir);
    uv_close((uv_handle_t *)t, (uv_close_cb)free);
}

static void cluster_discard(srv *s, bool drop) {
    s->stopping = true;
    srv_close(s);
    discard *d = xmalloc(sizeof *d);
    d->s = s;
    d->drop = drop;
    uv_timer_init(s->loop, &d->timer);
    d->timer.data = d;
    uv_timer_start(&d->timer, on_discarded, 0, 0);
}

static int cluster_start(fleet *f, cluster *c, char *err, size_t n) {
    srv *p = primary_of(f);
    config *cfg = xcalloc(1, sizeof *cfg);
    if (cluster_config(f, c, cfg, err, n) != 0) {
        cfg_free(cfg);
        free(cfg);
        return -1;
    }
    srv *s = xmalloc(sizeof *s);
    srv_fields(s, f->loop, cfg, f);
    /* what every cluster shares: the identities (accounts), the credentials endpoint, TLS */
    s->sasl = p->sasl;
    s->tls = p->tls;
    char parent[4096];
    snprintf(parent, sizeof parent, "%s/clusters", p->cfg->data_dir);
    if (strcmp(cfg->data_dir, ":memory:") != 0) mkdir(parent, 0755);
    if (make_data_dir(s, err, n) != 0 || open_storage(s, err, n) != 0 || cluster_load(s, err, n) != 0) {
        cluster_discard(s, true);
        return -1;
    }
    c->s = s;
    if (!c->brokers) c->brokers = s->nnodes;
    log_info("cluster %s: started (%s, %d brokers, data.dir=%s)", c->arn, c->serverless ? "serverless" : "provisioned",
             s->nnodes, cfg->data_dir);
    return 0;
}

static void cluster_stop(fleet *f, cluster *c) {
    (void)f;
    if (!c->s || c->primary) return;
    log_info("cluster %s: deleted; its connections are closed and its data removed", c->arn);
    cluster_discard(c->s, true);
    c->s = NULL;
}

/* The ready file says which clusters serve: written again when one is created or deleted. */
static void fleet_changed(fleet *f) {
    char err[1024];
    if (ready_write(primary_of(f), err, sizeof err) != 0) log_warn("%s", err);
}

/* The configured cluster as the control plane lists it. */
static void add_primary(fleet *f, srv *s) {
    cluster *c = xcalloc(1, sizeof *c);
    const config *cfg = s->cfg;
    snprintf(c->arn, sizeof c->arn, "%s", authz_cluster_arn(s));
    snprintf(c->name, sizeof c->name, "%s", cfg->msk_cluster_name);
    snprintf(c->account, sizeof c->account, "%s", cfg->msk_account_id);
    const char *slash = strrchr(c->arn, '/');
    snprintf(c->uuid, sizeof c->uuid, "%s", slash ? slash + 1 : "");
    c->serverless = cfg->profile == PROFILE_SERVERLESS;
    c->brokers = s->nnodes;
    c->iam = cfg->iam_port != 0;
    c->unauthenticated = cfg->plaintext_port != 0;
    c->created_ms = clk_now_ms();
    c->primary = true;
    c->s = s;
    fleet_add(f, c);
}

typedef struct load_ctx {
    fleet *f;
    int failed;
    char *err;
    size_t n;
} load_ctx;

static void load_one(void *ctx, const char *arn, const char *name, const char *spec, int64_t created_ms) {
    load_ctx *l = ctx;
    if (l->failed) return;
    cluster *c = xcalloc(1, sizeof *c);
    snprintf(c->arn, sizeof c->arn, "%s", arn);
    snprintf(c->name, sizeof c->name, "%s", name);
    arn_account(arn, c->account, sizeof c->account);
    c->created_ms = created_ms;
    if (cluster_from_spec(c, spec) != 0) {
        snprintf(l->err, l->n, "the stored description of cluster %s cannot be read", arn);
        l->failed = 1;
        free(c->info);
        free(c);
        return;
    }
    fleet_add(l->f, c); /* before it starts: the start reads the fleet's primary */
    char why[1024];
    if (cluster_start(l->f, c, why, sizeof why) != 0) {
        snprintf(l->err, l->n, "cluster %.500s (created by CreateClusterV2): %.1000s", arn, why);
        l->failed = 1;
    }
}

/* The clusters created before this start come back, as MSK's do. */
static int load_clusters(fleet *f, char *err, size_t n) {
    load_ctx l = {f, 0, err, n};
    srv *p = primary_of(f);
    if (stor_clusters_load(p->st, load_one, &l) != 0) {
        snprintf(err, n, "loading the created clusters: %s", stor_errmsg(p->st));
        return -1;
    }
    if (!l.failed && f->n > 1) log_info("cluster: %d created clusters started", f->n - 1);
    return l.failed ? -1 : 0;
}

int srv_init(srv *s, uv_loop_t *loop, config *cfg, fleet *f, char *err, size_t errlen) {
    srv_fields(s, loop, cfg, f);
    s->primary = true;
    f->loop = loop;
    f->start = cluster_start;
    f->stop = cluster_stop;
    f->changed = fleet_changed;
    if (make_data_dir(s, err, errlen) != 0) return -1;
    /* first: it forks the TLS set-up, which must happen before any other thread exists */
    int sasl_rc = sasl_init(s, err, errlen);
    open_job job = {.s = s};
    pthread_t opener;
    bool threaded = pthread_create(&opener, NULL, open_storage_job, &job) == 0;
    if (!threaded) open_storage_job(&job);
    if (sasl_rc == 0) sasl_rc = sasl_tls_finish(s, err, errlen);
    if (threaded) pthread_join(opener, NULL);
    if (job.rc != 0) {
        snprintf(err, errlen, "%s", job.err);
        return -1;
    }
    if (sasl_rc != 0) return -1;
    if (cluster_load(s, err, errlen) != 0) return -1;
    add_primary(f, s);
    if (load_clusters(f, err, errlen) != 0) return -1;
    if (admin_start(s, err, errlen) != 0) return -1;
    if (aws_start(s, err, errlen) != 0) return -1;
    uv_prepare_init(loop, &f->prepare);
    f->prepare.data = f;
    uv_prepare_start(&f->prepare, on_prepare);
    uv_timer_init(loop, &f->housekeeping);
    f->housekeeping.data = f;
    uv_timer_start(&f->housekeeping, on_housekeeping, 1000, 1000);
    uv_unref((uv_handle_t *)&f->housekeeping);
    return 0;
}

void srv_close(srv *s) {
    topic_commit_now(s);
    stor_ckpt_stats st;
    stor_checkpoint_stats(s->st, &st);
    if (st.runs && s->primary)
        log_info("storage: %llu WAL checkpoints since start, %llu failed", (unsigned long long)st.runs,
                 (unsigned long long)st.failures);
    topic_wake_all(s);
    net_close_all(s);
    grp_close_all(s);
    txn_close(s);
    topic_cleaner_stop(s);
    authz_close(s);
    if (!s->primary) return;
    /* the process stops: every created cluster closes too (and stays, for the next start) */
    fleet *f = s->fleet;
    for (int i = 1; i < f->n; i++)
        if (f->list[i]->s && !f->list[i]->s->stopping) {
            f->list[i]->s->stopping = true;
            srv_close(f->list[i]->s);
        }
    sasl_close(s);
    admin_close(s);
    aws_close(s);
    if (!uv_is_closing((uv_handle_t *)&f->prepare)) uv_close((uv_handle_t *)&f->prepare, NULL);
    if (!uv_is_closing((uv_handle_t *)&f->housekeeping)) uv_close((uv_handle_t *)&f->housekeeping, NULL);
}

void srv_free(srv *s) {
    if (s->primary) {
        fleet *f = s->fleet;
        for (int i = 1; i < f->n; i++)
            if (f->list[i]->s) {
                free_cluster_srv(f->list[i]->s);
                f->list[i]->s = NULL;
            }
        fleet_free(f);
        cfg_source_free(&f->src);
    }
    while (s->topics) {
        topic *t = s->topics;
        s->topics = t->next;
        topic_free(t);
    }
    name_index_free(&s->topics_by_name);
    free(s->dirty);
    net_free_spare(s);
    for (int k = 0; k < LSN_COUNT; k++) free(s->adv_host[k]);
    grp_configs_free(s);
    txn_free(s);
    fault_free_all(s);
    metrics_free(&s->metrics);
    authz_free(s);
    if (s->primary) sasl_free(s);
    stor_close(s->st);
    s->st = NULL;
}
