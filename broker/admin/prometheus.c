/*
 * prometheus: GET /metrics, the broker's counters (metrics.h, a core module) and the gauges
 * computed from the state at scrape time, in Prometheus text format 0.0.4. docs/admin-api.md
 * lists every metric. One cluster's (the configured one at /metrics, any at
 * /v1/clusters/{cluster}/metrics), without a cluster label: the format wants every series of a
 * family together, which one cluster's scrape gives without merging the clusters' families.
 */
#include "prometheus.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "admin_route.h"
#include "clock.h"
#include "metrics.h"
#include "fault.h"
#include "group/group.h"
#include "kp_errors.h"
#include "kp_mem.h"
#include "net/net.h"
#include "net/req.h"
#include "topic/topic.h"

_Static_assert(LSN_COUNT == MX_LISTENERS, "metrics.h's MX_LISTENERS must follow srv.h's listener kinds");
_Static_assert(FAULT_DROP < MX_FAULT_ACTIONS, "metrics.h's MX_FAULT_ACTIONS must cover fault.h's actions");

/* ---- the exposition ---- */

typedef struct out {
    char *p;
    size_t len, cap;
    bool oom;
} out;

__attribute__((format(printf, 2, 3))) static void put(out *o, const char *fmt, ...) {
    if (o->oom) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(o->p + o->len, o->cap - o->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            o->oom = true;
            return;
        }
        if ((size_t)n < o->cap - o->len) {
            o->len += (size_t)n;
            return;
        }
        XGROW(o->p, o->cap, o->len + (size_t)n + 1, 16384);
    }
}

/* A label value as the format wants it: backslash, double quote and newline escaped. */
static void put_label(out *o, const char *v) {
    for (const char *c = v; *c; c++) {
        if (*c == '\\')
            put(o, "\\\\");
        else if (*c == '"')
            put(o, "\\\"");
        else if (*c == '\n')
            put(o, "\\n");
        else
            put(o, "%c", *c);
    }
}

static void family(out *o, const char *name, const char *type, const char *help) {
    put(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* Microseconds as seconds, exactly and without trailing zeros: 250 -> 0.00025, 2500000 -> 2.5. */
static void put_seconds(out *o, uint64_t us) {
    char frac[8];
    snprintf(frac, sizeof frac, "%06llu", (unsigned long long)(us % 1000000));
    int n = 6;
    while (n > 0 && frac[n - 1] == '0') frac[--n] = '\0';
    put(o, "%llu%s%s", (unsigned long long)(us / 1000000), n ? "." : "", frac);
}

/* The series of one histogram; labels: `name="value",` pairs ahead of le (may be empty). */
static void put_hist(out *o, const char *name, const char *labels, const mx_hist *h, const uint32_t *bounds, int n) {
    uint64_t cum = 0;
    for (int i = 0; i < n; i++) {
        cum += h->bucket[i];
        put(o, "%s_bucket{%sle=\"", name, labels);
        put_seconds(o, bounds[i]);
        put(o, "\"} %llu\n", (unsigned long long)cum);
    }
    put(o, "%s_bucket{%sle=\"+Inf\"} %llu\n", name, labels, (unsigned long long)h->count);
    size_t l = strlen(labels);
    /* the labels without their trailing comma */
    put(o, "%s_sum%s%.*s%s ", name, l ? "{" : "", l ? (int)l - 1 : 0, labels, l ? "}" : "");
    put_seconds(o, h->sum_us);
    put(o, "\n%s_count%s%.*s%s %llu\n", name, l ? "{" : "", l ? (int)l - 1 : 0, labels, l ? "}" : "",
        (unsigned long long)h->count);
}

static const char *error_label(int slot, char *buf, size_t n) {
    if (slot == MX_SLOT_CLOSED) return "CONNECTION_CLOSED";
    if (slot == MX_SLOT_OTHER) return "OTHER";
    int code = slot - MX_SLOT_CODE + MX_ERR_MIN;
    const char *name = kp_err_name(code);
    /* codes without a name here would all be UNKNOWN_ERROR_CODE: one series each needs its number */
    if (!strcmp(name, "UNKNOWN_ERROR_CODE")) {
        snprintf(buf, n, "ERROR_%d", code);
        return buf;
    }
    return name;
}

static void put_api_version(out *o, const mx_api *a, int row) {
    if (row < a->nversions)
        put(o, "%d", row);
    else
        put(o, "unsupported");
}

static void put_requests(out *o, mx_requests *t) {
    family(o, "mskmock_requests_total", "counter",
           "Kafka requests by API, version and outcome: the first error code of the answer (NONE when it has none), "
           "or CONNECTION_CLOSED when the connection closed without answering it.");
    for (int k = 0; k <= MX_MAX_KEY; k++) {
        const mx_api *a = k < MX_MAX_KEY ? t->by_key[k] : &t->unknown;
        if (!a) continue;
        for (int row = 0; row <= a->nversions; row++)
            for (int slot = 0; slot < MX_SLOTS; slot++) {
                uint64_t n = a->rows[row].n[slot];
                if (!n) continue;
                char buf[24];
                put(o, "mskmock_requests_total{api=\"%s\",version=\"", a->msg ? a->msg->name : "Unknown");
                put_api_version(o, a, row);
                put(o, "\",error=\"%s\"} %llu\n", error_label(slot, buf, sizeof buf), (unsigned long long)n);
            }
    }
    family(o, "mskmock_request_duration_seconds", "histogram",
           "Kafka request latency by API: from the start of its handling until its answer is handed to the socket "
           "(held answers wait for the storage commit; parked ones, such as fetch long polls, for their data).");
    for (int k = 0; k <= MX_MAX_KEY; k++) {
        const mx_api *a = k < MX_MAX_KEY ? t->by_key[k] : &t->unknown;
        if (!a || !a->latency.count) continue;
        char labels[64];
        snprintf(labels, sizeof labels, "api=\"%s\",", a->msg ? a->msg->name : "Unknown");
        put_hist(o, "mskmock_request_duration_seconds", labels, &a->latency, metrics_latency_bounds_us,
                 metrics_latency_nbounds);
    }
}

static void put_topics(out *o, const srv *s) {
    int64_t parts = 0;
    for (const topic *t = s->topics; t; t = t->next) parts += t->nparts;
    family(o, "mskmock_topics", "gauge", "Topics.");
    put(o, "mskmock_topics %d\n", s->ntopics);
    family(o, "mskmock_partitions", "gauge", "Partitions of all topics.");
    put(o, "mskmock_partitions %lld\n", (long long)parts);
    static const struct {
        const char *name, *help;
        size_t off;
    } per_topic[] = {
        {"mskmock_topic_bytes_in_total", "Bytes of record batches appended to the topic (as produced).",
         offsetof(topic, bytes_in)},
        {"mskmock_topic_records_in_total", "Records appended to the topic.", offsetof(topic, records_in)},
        {"mskmock_topic_bytes_out_total", "Bytes of record batches fetch answers served from the topic.",
         offsetof(topic, bytes_out)},
    };
    for (size_t i = 0; i < sizeof per_topic / sizeof per_topic[0]; i++) {
        family(o, per_topic[i].name, "counter", per_topic[i].help);
        for (const topic *t = s->topics; t; t = t->next) {
            uint64_t v;
            memcpy(&v, (const char *)t + per_topic[i].off, sizeof v);
            put(o, "%s{topic=\"", per_topic[i].name);
            put_label(o, t->name);
            put(o, "\"} %llu\n", (unsigned long long)v);
        }
    }
}

static void put_connections(out *o, const srv *s) {
    int open[LSN_COUNT] = {0};
    bool on[LSN_COUNT] = {false};
    for (const conn *c = s->conns; c; c = c->next) open[c->listener]++;
    for (int i = 0; i < s->nnodes; i++)
        for (int k = 0; k < LSN_COUNT; k++) on[k] = on[k] || s->nodes[i].ports[k];
    family(o, "mskmock_connections", "gauge", "Open Kafka connections by listener.");
    for (int k = 0; k < LSN_COUNT; k++)
        if (on[k]) put(o, "mskmock_connections{listener=\"%s\"} %d\n", lsn_name((listener_kind)k), open[k]);
    family(o, "mskmock_connections_opened_total", "counter", "Kafka connections accepted, by listener.");
    for (int k = 0; k < LSN_COUNT; k++)
        if (on[k])
            put(o, "mskmock_connections_opened_total{listener=\"%s\"} %llu\n", lsn_name((listener_kind)k),
                (unsigned long long)s->metrics.conns_opened[k]);
}

static const char *const mech_names[MX_MECHS] = {"AWS_MSK_IAM", "OAUTHBEARER"};
static const char *const sasl_reasons[MX_SASL_REASONS] = {
    "", "too_many_connects", "invalid_payload", "region", "host", "unknown_key", "session_token", "signature",
    "token_expired", "future_date", "credentials_expired", "credentials_superseded", "session_expired",
    "session_too_short", "not_authorized", "principal_changed", "internal_error"};

static void put_sasl(out *o, const srv *s) {
    family(o, "mskmock_sasl_authentications_total", "counter",
           "SASL authentications (not re-authentications) by mechanism and outcome; failures by the check that "
           "refused them.");
    for (int m = 0; m < MX_MECHS; m++)
        for (int w = 0; w < MX_SASL_REASONS; w++) {
            uint64_t n = s->metrics.sasl[m][w];
            if (w == MX_SASL_OK)
                put(o, "mskmock_sasl_authentications_total{mechanism=\"%s\",outcome=\"success\"} %llu\n",
                    mech_names[m], (unsigned long long)n);
            else if (n)
                put(o, "mskmock_sasl_authentications_total{mechanism=\"%s\",outcome=\"failure\",reason=\"%s\"} %llu\n",
                    mech_names[m], sasl_reasons[w], (unsigned long long)n);
        }
    family(o, "mskmock_sasl_reauthentications_total", "counter", "SASL re-authentications (KIP-368) by outcome.");
    for (int m = 0; m < MX_MECHS; m++)
        for (int ok = 1; ok >= 0; ok--)
            put(o, "mskmock_sasl_reauthentications_total{mechanism=\"%s\",outcome=\"%s\"} %llu\n", mech_names[m],
                ok ? "success" : "failure", (unsigned long long)s->metrics.sasl_reauth[m][ok]);
    /* a separate family, so the one above keeps its two series per mechanism; principal_changed only
       happens here, never on a first authentication */
    family(o, "mskmock_sasl_reauthentication_failures_total", "counter",
           "SASL re-authentications (KIP-368) refused, by mechanism and the check that refused them.");
    for (int m = 0; m < MX_MECHS; m++)
        for (int w = 1; w < MX_SASL_REASONS; w++)
            if (s->metrics.sasl_reauth_refused[m][w])
                put(o, "mskmock_sasl_reauthentication_failures_total{mechanism=\"%s\",reason=\"%s\"} %llu\n",
                    mech_names[m], sasl_reasons[w], (unsigned long long)s->metrics.sasl_reauth_refused[m][w]);
}

static void put_throttles(out *o, const srv *s) {
    static const char *const names[MX_QUOTAS] = {"request_rate", "ingress_bytes", "egress_bytes",
                                                 "partition_mutations", "other"};
    family(o, "mskmock_throttle_seconds_total", "counter",
           "Throttle time given to clients (connections muted, throttle_time_ms), by the quota that throttled.");
    for (int q = 0; q < MX_QUOTAS; q++)
        if (q != MX_QUOTA_OTHER || s->metrics.throttles[q]) {
            put(o, "mskmock_throttle_seconds_total{quota=\"%s\"} ", names[q]);
            put_seconds(o, s->metrics.throttle_ms[q] * 1000);
            put(o, "\n");
        }
    family(o, "mskmock_throttles_total", "counter", "Requests throttled, by the quota that throttled them.");
    for (int q = 0; q < MX_QUOTAS; q++)
        if (q != MX_QUOTA_OTHER || s->metrics.throttles[q])
            put(o, "mskmock_throttles_total{quota=\"%s\"} %llu\n", names[q], (unsigned long long)s->metrics.throttles[q]);
}

static void put_groups(out *o, const srv *s) {
    int by_state[GS_DEAD + 1] = {0};
    for (const group *g = s->groups; g; g = g->next)
        if (g->state <= GS_DEAD) by_state[g->state]++;
    family(o, "mskmock_groups", "gauge", "Consumer groups the coordinator holds, by state.");
    for (int st = 0; st <= GS_DEAD; st++)
        put(o, "mskmock_groups{state=\"%s\"} %d\n", grp_state_name((group_state)st), by_state[st]);
    family(o, "mskmock_group_rebalances_total", "counter", "Rebalances started (a group entered PreparingRebalance).");
    put(o, "mskmock_group_rebalances_total %llu\n", (unsigned long long)s->metrics.rebalances);
    family(o, "mskmock_group_generations_total", "counter", "Join phases completed (a group got a new generation).");
    put(o, "mskmock_group_generations_total %llu\n", (unsigned long long)s->metrics.generations);
    family(o, "mskmock_transactions_total", "counter",
           "Transactions by outcome: begun (went Ongoing), committed, aborted (fenced ones included).");
    put(o, "mskmock_transactions_total{outcome=\"begun\"} %llu\n", (unsigned long long)s->metrics.txn_begun);
    put(o, "mskmock_transactions_total{outcome=\"committed\"} %llu\n", (unsigned long long)s->metrics.txn_committed);
    put(o, "mskmock_transactions_total{outcome=\"aborted\"} %llu\n", (unsigned long long)s->metrics.txn_aborted);
    family(o, "mskmock_transaction_fences_total", "counter",
           "Producers fenced by the coordinator (an InitProducerId of the same id, or a transaction timeout).");
    put(o, "mskmock_transaction_fences_total %llu\n", (unsigned long long)s->metrics.txn_fenced);
    family(o, "mskmock_compactions_total", "counter", "Log cleaner passes completed (one partition each).");
    put(o, "mskmock_compactions_total %llu\n", (unsigned long long)s->compactions);
}

/* The size of path, or -1 when it does not exist (no WAL yet, or gone after a checkpoint). */
static int64_t file_size(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (int64_t)st.st_size : -1;
}

static void put_storage(out *o, srv *s) {
    family(o, "mskmock_storage_commit_duration_seconds", "histogram",
           "Storage commits (one SQLite transaction per loop iteration that changed something), by duration.");
    put_hist(o, "mskmock_storage_commit_duration_seconds", "", &s->metrics.commit, metrics_commit_bounds_us,
             metrics_commit_nbounds);
    /* data.dir=:memory: has no files: the sizes are left out rather than reported as 0 */
    if (strcmp(s->cfg->data_dir, ":memory:") != 0) {
        char path[4200];
        snprintf(path, sizeof path, "%s/mskmock.db", s->cfg->data_dir);
        int64_t db = file_size(path);
        snprintf(path, sizeof path, "%s/mskmock.db-wal", s->cfg->data_dir);
        int64_t wal = file_size(path);
        family(o, "mskmock_storage_database_bytes", "gauge", "Size of the SQLite database file (mskmock.db).");
        if (db >= 0) put(o, "mskmock_storage_database_bytes %lld\n", (long long)db);
        family(o, "mskmock_storage_wal_bytes", "gauge", "Size of the SQLite write-ahead log (mskmock.db-wal).");
        put(o, "mskmock_storage_wal_bytes %lld\n", (long long)(wal >= 0 ? wal : 0));
        int64_t nseg = 0, seg = stor_seg_bytes(s->st, &nseg);
        family(o, "mskmock_storage_segment_bytes", "gauge",
               "Bytes of record batches written to the segment files (mskmock.db.segments), dead ones included until "
               "their segment is deleted.");
        if (seg >= 0) put(o, "mskmock_storage_segment_bytes %lld\n", (long long)seg);
        family(o, "mskmock_storage_segments", "gauge", "Segment files holding record batches.");
        if (seg >= 0) put(o, "mskmock_storage_segments %lld\n", (long long)nseg);
    }
    stor_ckpt_stats ck;
    stor_checkpoint_stats(s->st, &ck);
    family(o, "mskmock_storage_checkpoints_total", "counter", "WAL checkpoints run by the checkpoint thread.");
    put(o, "mskmock_storage_checkpoints_total %llu\n", (unsigned long long)ck.runs);
    family(o, "mskmock_storage_checkpoint_failures_total", "counter", "WAL checkpoints that failed.");
    put(o, "mskmock_storage_checkpoint_failures_total %llu\n", (unsigned long long)ck.failures);
    family(o, "mskmock_storage_wal_restarts_total", "counter",
           "Times the loop started a long WAL over (a steady trickle of commits never lets it restart by itself).");
    put(o, "mskmock_storage_wal_restarts_total %llu\n", (unsigned long long)ck.restarts);
}

static void put_faults(out *o, const srv *s) {
    static const char *const names[MX_FAULT_ACTIONS] = {"none", "error", "latency", "close", "drop"};
    family(o, "mskmock_fault_rules_fired_total", "counter",
           "Requests a fault rule of the admin API acted on, by the rule's action.");
    for (int a = FAULT_ERROR; a < MX_FAULT_ACTIONS; a++)
        put(o, "mskmock_fault_rules_fired_total{action=\"%s\"} %llu\n", names[a],
            (unsigned long long)s->metrics.faults_fired[a]);
}

static void put_process(out *o, const srv *s) {
    /* a created cluster's scrape tells of the process too: the configured cluster started with it */
    const fleet *fl = s->fleet;
    const srv *p = fl && fl->n && fl->list[0]->s ? fl->list[0]->s : s;
    int64_t up_us = clk_mono_us() - p->started_us;
    family(o, "mskmock_up", "gauge", "1 while the broker serves.");
    put(o, "mskmock_up 1\n");
    family(o, "mskmock_build_info", "gauge", "The running build; the value is always 1.");
    put(o, "mskmock_build_info{version=\"");
    put_label(o, MSKMOCK_VERSION);
    static const char *const profiles[] = {"serverless", "provisioned", "kafka"}; /* cfg_profile's order */
    int64_t prof = s->cfg->profile;
    put(o, "\",profile=\"%s\"} 1\n", prof >= 0 && prof < 3 ? profiles[prof] : "unknown");
    family(o, "mskmock_uptime_seconds", "gauge", "Time since the broker started.");
    put(o, "mskmock_uptime_seconds ");
    put_seconds(o, up_us > 0 ? (uint64_t)up_us : 0);
    put(o, "\n");
    family(o, "mskmock_process_start_time_seconds", "gauge", "Start time of the process since the Unix epoch.");
    int64_t start_ms = clk_now_ms() - up_us / 1000;
    put(o, "mskmock_process_start_time_seconds %lld.%03lld\n", (long long)(start_ms / 1000),
        (long long)(start_ms % 1000));
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0) {
        uint64_t cpu_us = (uint64_t)ru.ru_utime.tv_sec * 1000000 + (uint64_t)ru.ru_utime.tv_usec +
                          (uint64_t)ru.ru_stime.tv_sec * 1000000 + (uint64_t)ru.ru_stime.tv_usec;
        family(o, "mskmock_process_cpu_seconds_total", "counter", "User and system CPU time of the process.");
        put(o, "mskmock_process_cpu_seconds_total ");
        put_seconds(o, cpu_us);
        put(o, "\n");
    }
    /* statm: size, resident, ... in pages (Linux); elsewhere the line is left out */
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        unsigned long long size, resident;
        if (fscanf(f, "%llu %llu", &size, &resident) == 2) {
            long page = sysconf(_SC_PAGESIZE);
            family(o, "mskmock_process_resident_memory_bytes", "gauge", "Resident memory of the process.");
            put(o, "mskmock_process_resident_memory_bytes %llu\n", resident * (unsigned long long)(page > 0 ? page : 4096));
        }
        fclose(f);
    }
}

void metrics_get(admin_call *c) {
    srv *s = c->s;
    c->rs->quiet = true; /* scraped every few seconds: debug, as health checks */
    out o = {.cap = 16384};
    o.p = xmalloc(o.cap);
    put_process(&o, s);
    if (s->metrics.requests) put_requests(&o, s->metrics.requests);
    put_connections(&o, s);
    put_sasl(&o, s);
    put_throttles(&o, s);
    put_topics(&o, s);
    put_groups(&o, s);
    put_storage(&o, s);
    put_faults(&o, s);
    if (o.oom) {
        free(o.p);
        http_error(c->rs, 500, "OutOfMemory", "no memory for the metrics");
        return;
    }
    c->rs->status = 200;
    c->rs->content_type = "text/plain; version=0.0.4; charset=utf-8";
    c->rs->body = o.p;
    c->rs->len = o.len;
}
