/* metrics: the counting side of metrics.h; GET /metrics (admin/prometheus.c) writes them out. */
#include "metrics.h"

#include <stdlib.h>
#include <string.h>

#include "kp_mem.h"

/* ---- histograms ---- */

/*
 * Request latency spans a produce acknowledged after a group commit (sub-millisecond to a few ms)
 * and long polls and join phases that wait by design (up to fetch.max.wait.cap.ms, the
 * rebalance timeout): hence up to 30 s.
 */
const uint32_t metrics_latency_bounds_us[] = {100,    250,    500,     1000,    2500,    5000,    10000,   25000,   50000,
                                             100000, 250000, 500000, 1000000, 2500000, 5000000, 10000000, 30000000};
/* A commit is one SQLite transaction; an fsync takes tens of microseconds to tens of milliseconds. */
const uint32_t metrics_commit_bounds_us[] = {50,    100,   250,    500,    1000,   2500,   5000,   10000,
                                            25000, 50000, 100000, 250000, 500000, 1000000, 2500000};
#define NBOUNDS(a) ((int)(sizeof(a) / sizeof((a)[0])))
const int metrics_latency_nbounds = NBOUNDS(metrics_latency_bounds_us);
const int metrics_commit_nbounds = NBOUNDS(metrics_commit_bounds_us);
_Static_assert(NBOUNDS(metrics_latency_bounds_us) <= MX_MAX_BUCKETS &&
                   NBOUNDS(metrics_commit_bounds_us) <= MX_MAX_BUCKETS,
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

void metrics_init(metrics *m) {
    mx_requests *t = xcalloc(1, sizeof *t);
    size_t nrows = 1; /* the unknown API's one row */
    for (int k = 0; k < MX_MAX_KEY; k++) {
        const kp_msg *msg = kp_msg_get((int16_t)k);
        if (msg) nrows += (size_t)msg->vmax + 2;
    }
    t->rows = xcalloc(nrows, sizeof(mx_row));
    mx_row *next = t->rows;
    for (int k = 0; k < MX_MAX_KEY; k++) {
        const kp_msg *msg = kp_msg_get((int16_t)k);
        if (!msg) continue;
        mx_api *a = &t->apis[k];
        a->msg = msg;
        a->nversions = msg->vmax + 1;
        a->rows = next;
        next += a->nversions + 1;
        a->plan = kp_error_plan_new(msg->resp);
        t->by_key[k] = a;
    }
    t->unknown.rows = next;
    m->requests = t;
}

void metrics_free(metrics *m) {
    mx_requests *t = m->requests;
    if (!t) return;
    for (int k = 0; k < MX_MAX_KEY; k++)
        if (t->by_key[k]) kp_error_plan_free(t->by_key[k]->plan);
    free(t->rows);
    free(t);
    m->requests = NULL;
}

static mx_api *api_of(mx_requests *t, int key) {
    return key >= 0 && key < MX_MAX_KEY && t->by_key[key] ? t->by_key[key] : &t->unknown;
}

static mx_row *row_of(mx_api *a, int16_t ver) { return &a->rows[ver >= 0 && ver < a->nversions ? ver : a->nversions]; }

void metrics_request_done(metrics *m, int key, int16_t ver, int16_t code, int64_t latency_us) {
    mx_requests *t = m->requests;
    if (!t) return;
    mx_api *a = api_of(t, key);
    row_of(a, ver)->n[code >= MX_ERR_MIN && code <= MX_ERR_MAX ? MX_SLOT_CODE + code - MX_ERR_MIN : MX_SLOT_OTHER]++;
    observe(&a->latency, metrics_latency_bounds_us, metrics_latency_nbounds, latency_us);
}

void metrics_request_closed(metrics *m, int key, int16_t ver, int64_t latency_us) {
    mx_requests *t = m->requests;
    if (!t) return;
    mx_api *a = api_of(t, key);
    row_of(a, ver)->n[MX_SLOT_CLOSED]++;
    observe(&a->latency, metrics_latency_bounds_us, metrics_latency_nbounds, latency_us);
}

int16_t metrics_response_error(metrics *m, const kp_msg *msg, int16_t ver, bool flex, const void *resp) {
    mx_requests *t = m->requests;
    if (!t || msg->key < 0 || msg->key >= MX_MAX_KEY || !t->by_key[msg->key]) return 0;
    return kp_first_error(t->by_key[msg->key]->plan, ver, flex, resp);
}

/* ---- the other counters ---- */

void metrics_sasl(metrics *m, int mechanism, bool reauth, mx_sasl_reason why) {
    if (mechanism < 0 || mechanism >= MX_MECHS || why >= MX_SASL_REASONS) return;
    if (reauth) {
        m->sasl_reauth[mechanism][why == MX_SASL_OK]++;
        if (why != MX_SASL_OK) m->sasl_reauth_refused[mechanism][why]++;
    } else
        m->sasl[mechanism][why]++;
}

/* req_throttle's callers name the quota by its config key, perhaps followed by its value. */
void metrics_throttle(metrics *m, const char *quota, int32_t ms) {
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
    m->throttle_ms[q] += (uint64_t)ms;
    m->throttles[q]++;
}

void metrics_commit(metrics *m, int64_t us) { observe(&m->commit, metrics_commit_bounds_us, metrics_commit_nbounds, us); }

void metrics_fault_fired(metrics *m, int action) {
    if (action >= 0 && action < MX_FAULT_ACTIONS) m->faults_fired[action]++;
}
