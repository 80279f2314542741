/*
 * metrics: the counters (metrics.h) and GET /metrics, which writes them and the gauges computed
 * from the state in Prometheus text format 0.0.4. docs/admin-api.md lists every metric.
 */
#include "metrics.h"

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
#include "fault.h"
#include "group/group.h"
#include "kp_errors.h"
#include "net/net.h"
#include "net/req.h"
#include "topic/topic.h"

_Static_assert(LSN_COUNT == MX_LISTENERS, "metrics.h's MX_LISTENERS must follow srv.h's listener kinds");
_Static_assert(FAULT_DROP < MX_FAULT_ACTIONS, "metrics.h's MX_FAULT_ACTIONS must cover fault.h's actions");

/* ---- histograms ---- */

/*
 * Request latency spans a produce acknowledged after a group commit (sub-millisecond to a few ms)
 * and long polls and join phases that wait by design (up to fetch.max.wait.cap.ms, the
 * rebalance timeout): hence up to 30 s.
 */
static const uint32_t latency_bounds_us[] = {100,    250,    500,     1000,    2500,    5000,    10000,   25000,   50000,
                                             100000, 250000, 500000, 1000000, 2500000, 5000000, 10000000, 30000000};
/* A commit is one SQLite transaction; an fsync takes tens of microseconds to tens of milliseconds. */
static const uint32_t commit_bounds_us[] = {50,    100,   250,    500,    1000,   2500,   5000,   10000,
                                            25000, 50000, 100000, 250000, 500000, 1000000, 2500000};
#define NBOUNDS(a) ((int)(sizeof(a) / sizeof((a)[0])))
_Static_assert(NBOUNDS(latency_bounds_us) <= MX_MAX_BUCKETS && NBOUNDS(commit_bounds_us) <= MX_MAX_BUCKETS,
               "MX_MAX_BUCKETS is too small");

static void observe(mx_hist *h, const uint32_t *bounds, int n, int64_t us) {
    uint64_t v = us > 0 ? (uint64_t)us : 0; /* clk_advance in tests may step the clock under a request */
    int i = 0;
    while (i < n && v > bounds[i]) i++;
    h->bucket[i]++;
    h->count++;
    h->sum_us += v;
}

/* ---- requests ---- */

/*
 * Every (API, version) has one row of counters: one per error code in [MX_ERR_MIN, MX_ERR_MAX]
 * (indexed, so counting is an increment), one for codes outside it (a fault rule may answer
 * any int16) and one for requests whose connection closed unanswered. A row is 1.3 KiB; rows
 * exist for the versions the protocol code knows, plus one for all others.
 */
#define MX_MAX_KEY 128
#define MX_ERR_MIN (-1)
#define MX_ERR_MAX 159
enum { MX_SLOT_CLOSED, MX_SLOT_CODE, MX_SLOT_OTHER = MX_SLOT_CODE + MX_ERR_MAX - MX_ERR_MIN + 1, MX_SLOTS };

typedef struct mx_row {
    uint64_t n[MX_SLOTS];
} mx_row;

typedef struct mx_api {
    const kp_msg *msg; /* NULL: API keys the protocol code does not know */
    int nversions;     /* rows[0..nversions-1]: those versions; rows[nversions]: any other version */
    mx_row *rows;
    mx_hist latency;
    const struct mx_plan *plan; /* where its answers keep error codes (NULL: nowhere) */
} mx_api;

typedef struct mx_requests {
    mx_api *by_key[MX_MAX_KEY];
    mx_api apis[MX_MAX_KEY];
    mx_api unknown;
    mx_row *rows; /* one block for every API's rows */
    struct mx_plan *plans;
} mx_requests;

static struct mx_plan *plan_of(mx_requests *t, const kp_schema *sc, bool *oom);
static void free_plans(mx_requests *t);

int metrics_init(srv *s) {
    mx_requests *t = calloc(1, sizeof *t);
    if (!t) return -1;
    size_t nrows = 1; /* the unknown API's one row */
    for (int k = 0; k < MX_MAX_KEY; k++) {
        const kp_msg *m = kp_msg_get((int16_t)k);
        if (m) nrows += (size_t)m->vmax + 2;
    }
    t->rows = calloc(nrows, sizeof(mx_row));
    if (!t->rows) {
        free(t);
        return -1;
    }
    mx_row *next = t->rows;
    for (int k = 0; k < MX_MAX_KEY; k++) {
        const kp_msg *m = kp_msg_get((int16_t)k);
        if (!m) continue;
        mx_api *a = &t->apis[k];
        a->msg = m;
        a->nversions = m->vmax + 1;
        a->rows = next;
        next += a->nversions + 1;
        t->by_key[k] = a;
    }
    t->unknown.rows = next;
    s->metrics.requests = t;
    bool oom = false;
    for (int k = 0; k < MX_MAX_KEY; k++)
        if (t->by_key[k]) t->by_key[k]->plan = plan_of(t, t->by_key[k]->msg->resp, &oom);
    if (oom) {
        metrics_free(s);
        return -1;
    }
    return 0;
}

void metrics_free(srv *s) {
    mx_requests *t = s->metrics.requests;
    if (!t) return;
    free_plans(t);
    free(t->rows);
    free(t);
    s->metrics.requests = NULL;
}

/* r->msg, not the header: a frame too short for a header leaves the header zeroed (api key 0). */
static mx_api *api_of(mx_requests *t, const req *r) {
    int key = r->msg ? r->msg->key : -1;
    return key >= 0 && key < MX_MAX_KEY && t->by_key[key] ? t->by_key[key] : &t->unknown;
}

static mx_row *row_of(mx_api *a, int16_t ver) { return &a->rows[ver >= 0 && ver < a->nversions ? ver : a->nversions]; }

void metrics_request_done(srv *s, const req *r, int64_t now_us) {
    mx_requests *t = s->metrics.requests;
    if (!t || !r->started_us) return;
    mx_api *a = api_of(t, r);
    int code = r->error_code;
    row_of(a, r->hdr.api_version)->n[code >= MX_ERR_MIN && code <= MX_ERR_MAX ? MX_SLOT_CODE + code - MX_ERR_MIN
                                                                               : MX_SLOT_OTHER]++;
    observe(&a->latency, latency_bounds_us, NBOUNDS(latency_bounds_us), now_us - r->started_us);
}

void metrics_request_closed(srv *s, const req *r, int64_t now_us) {
    mx_requests *t = s->metrics.requests;
    if (!t || !r->started_us) return;
    mx_api *a = api_of(t, r);
    row_of(a, r->hdr.api_version)->n[MX_SLOT_CLOSED]++;
    observe(&a->latency, latency_bounds_us, NBOUNDS(latency_bounds_us), now_us - r->started_us);
}

/* Kafka names every error field "error_code" or "<something>_error_code". */
static bool is_error_field(const char *name) {
    size_t n = strlen(name);
    return n >= 10 && !memcmp(name + n - 10, "error_code", 10);
}

/*
 * Where a response struct keeps its error codes: the schema pruned, at start-up, to its error
 * fields and the structs and arrays that lead to one. A produce answer's partition has one
 * field to look at instead of eight, and arrays without errors below them (record_errors) are
 * not entered; the walk stops at the first non-zero code.
 */
enum { PLAN_ERROR, PLAN_STRUCT, PLAN_ARRAY };

typedef struct mx_plan mx_plan;
typedef struct mx_plan_field {
    uint16_t off;
    uint8_t kind;
    int8_t vmin, vmax;
    bool tagged;        /* exists in flexible versions only */
    uint16_t elem_size; /* PLAN_ARRAY: of one element */
    const mx_plan *sub; /* PLAN_STRUCT, PLAN_ARRAY */
} mx_plan_field;

struct mx_plan {
    mx_plan *next_alloc; /* every plan, for metrics_free */
    int n;
    mx_plan_field f[];
};

/* NULL when nothing below sc is an error field (or out of memory: *oom). */
static mx_plan *plan_of(mx_requests *t, const kp_schema *sc, bool *oom) {
    mx_plan *p = malloc(sizeof *p + sizeof(mx_plan_field) * sc->nfields);
    if (!p) {
        *oom = true;
        return NULL;
    }
    p->n = 0;
    for (uint16_t i = 0; i < sc->nfields; i++) {
        const kp_field *f = &sc->fields[i];
        mx_plan_field pf = {.off = f->off, .vmin = f->vmin, .vmax = f->vmax, .tagged = f->tag >= 0};
        if (f->type == KP_I16 && is_error_field(f->name)) {
            pf.kind = PLAN_ERROR;
        } else if (f->type == KP_STRUCT || (f->type == KP_ARRAY && f->elem == KP_STRUCT)) {
            pf.sub = plan_of(t, f->sub, oom);
            if (!pf.sub) continue;
            pf.kind = f->type == KP_STRUCT ? PLAN_STRUCT : PLAN_ARRAY;
            pf.elem_size = f->sub->size;
        } else {
            continue;
        }
        p->f[p->n++] = pf;
    }
    if (!p->n) {
        free(p);
        return NULL;
    }
    p->next_alloc = t->plans;
    t->plans = p;
    return p;
}

static void free_plans(mx_requests *t) {
    while (t->plans) {
        mx_plan *p = t->plans;
        t->plans = p->next_alloc;
        free(p);
    }
}

static int16_t first_error(const mx_plan *plan, int ver, bool flex, const char *p) {
    for (int i = 0; i < plan->n; i++) {
        const mx_plan_field *f = &plan->f[i];
        if (ver < f->vmin || ver > f->vmax || (f->tagged && !flex)) continue;
        const char *v = p + f->off;
        int16_t e = 0;
        if (f->kind == PLAN_ERROR) {
            memcpy(&e, v, sizeof e);
        } else if (f->kind == PLAN_STRUCT) {
            e = first_error(f->sub, ver, flex, v);
        } else {
            const kp_arr *a = (const kp_arr *)(const void *)v;
            for (int32_t j = 0; j < a->n && !e; j++)
                e = first_error(f->sub, ver, flex, (const char *)a->v + (size_t)j * f->elem_size);
        }
        if (e) return e;
    }
    return 0;
}

int16_t metrics_response_error(srv *s, const kp_msg *m, int16_t ver, bool flex, const void *resp) {
    mx_requests *t = s->metrics.requests;
    if (!t || m->key < 0 || m->key >= MX_MAX_KEY || !t->by_key[m->key] || !t->by_key[m->key]->plan) return 0;
    return first_error(t->by_key[m->key]->plan, ver, flex, resp);
}

/* ---- the other counters ---- */

void metrics_sasl(srv *s, int mechanism, bool reauth, mx_sasl_reason why) {
    if (mechanism < 0 || mechanism >= MX_MECHS || why >= MX_SASL_REASONS) return;
    if (reauth) {
        s->metrics.sasl_reauth[mechanism][why == MX_SASL_OK]++;
        if (why != MX_SASL_OK) s->metrics.sasl_reauth_refused[mechanism][why]++;
    } else
        s->metrics.sasl[mechanism][why]++;
}

/* req_throttle's callers name the quota by its config key, perhaps followed by its value. */
void metrics_throttle(srv *s, const char *quota, int32_t ms) {
    if (ms <= 0) return;
    int q = MX_QUOTA_OTHER;
    if (!strncmp(quota, "max.request.rate", 16))
        q = MX_QUOTA_REQUEST_RATE;
    else if (!strncmp(quota, "max.partition.mutations", 23))
        q = MX_QUOTA_PARTITION_MUTATIONS;
    else if (strstr(quota, ".ingress.bytes.per.second"))
        q = MX_QUOTA_INGRESS;
    else if (strstr(quota, ".egress.bytes.per.second"))
        q = MX_QUOTA_EGRESS;
    s->metrics.throttle_ms[q] += (uint64_t)ms;
    s->metrics.throttles[q]++;
}

void metrics_commit(srv *s, int64_t us) { observe(&s->metrics.commit, commit_bounds_us, NBOUNDS(commit_bounds_us), us); }

void metrics_fault_fired(srv *s, int action) {
    if (action >= 0 && action < MX_FAULT_ACTIONS) s->metrics.faults_fired[action]++;
}

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
        size_t cap = o->cap * 2;
        while (cap - o->len <= (size_t)n) cap *= 2;
        char *p = realloc(o->p, cap);
        if (!p) {
            o->oom = true;
            return;
        }
        o->p = p;
        o->cap = cap;
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
        put_hist(o, "mskmock_request_duration_seconds", labels, &a->latency, latency_bounds_us,
                 NBOUNDS(latency_bounds_us));
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
    put_hist(o, "mskmock_storage_commit_duration_seconds", "", &s->metrics.commit, commit_bounds_us,
             NBOUNDS(commit_bounds_us));
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
    int64_t up_us = clk_mono_us() - s->started_us;
    family(o, "mskmock_up", "gauge", "1 while the broker serves.");
    put(o, "mskmock_up 1\n");
    family(o, "mskmock_build_info", "gauge", "The running build; the value is always 1.");
    put(o, "mskmock_build_info{version=\"");
    put_label(o, MSKMOCK_VERSION);
    static const char *const profiles[] = {"serverless", "provisioned", "kafka"}; /* cfg_profile's order */
    int64_t p = s->cfg->profile;
    put(o, "\",profile=\"%s\"} 1\n", p >= 0 && p < 3 ? profiles[p] : "unknown");
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
    o.p = malloc(o.cap);
    if (!o.p) {
        http_error(c->rs, 500, "OutOfMemory", "no memory for the metrics");
        return;
    }
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
