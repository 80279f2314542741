/*
 * metrics: what the broker counts, and how. Counters are plain integers the loop increments where
 * things happen: one loop owns them, as it owns everything, so no locks and no allocation on the
 * request path. The admin API's GET /metrics (admin/prometheus.c) writes them out, with gauges it
 * computes from the state at scrape time (connections, groups by state, topics, database size,
 * memory), which therefore cannot drift from it.
 *
 * A core header: the transport (requests, connections), iam/sasl.c (authentications), topic and
 * api/fetch.c (bytes, in struct topic), group (rebalances), txn (transactions), topic/commit.c
 * (storage commits) and the fault rules count here; nothing here calls any of them.
 *
 * srv holds one struct metrics by value (srv.metrics), and every function here takes that
 * struct, never the srv: code the unit-test harness drives without srv_init counts into zeroed
 * memory. Only the per-request table is allocated (metrics_init); without it requests are not
 * counted. This header includes nothing of broker/, so srv.h can hold it.
 */
#ifndef METRICS_H
#define METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "kp.h"
#include "kp_mirror.h"


/* Histogram buckets are upper bounds in microseconds (metrics.c), counted per bucket, not cumulated. */
#define MX_MAX_BUCKETS 18
typedef struct mx_hist {
    uint64_t count;
    uint64_t sum_us;
    uint64_t bucket[MX_MAX_BUCKETS + 1]; /* the last: above every bound (+Inf) */
} mx_hist;

/* The SASL mechanisms, in sasl.c's order (it asserts that). */
enum { MX_MECH_AWS_MSK_IAM, MX_MECH_OAUTHBEARER, MX_MECHS };

/*
 * Why an authentication was refused: one label value each (reason="..."), a fixed set so that a
 * client cannot grow the series; the log line gives the detail and the request id.
 */
typedef enum mx_sasl_reason {
    MX_SASL_OK,
    MX_SASL_TOO_MANY_CONNECTS,      /* iam.max.connects.per.second */
    MX_SASL_INVALID_PAYLOAD,        /* the token or message does not parse */
    MX_SASL_REGION,                 /* signed for another region */
    MX_SASL_HOST,                   /* signed for a host that is not ours */
    MX_SASL_UNKNOWN_KEY,            /* access key id not in the identities */
    MX_SASL_SESSION_TOKEN,          /* missing, unexpected or wrong X-Amz-Security-Token */
    MX_SASL_SIGNATURE,              /* signature does not match (wrong secret) */
    MX_SASL_TOKEN_EXPIRED,          /* X-Amz-Date + X-Amz-Expires is past */
    MX_SASL_FUTURE_DATE,            /* X-Amz-Date beyond the clock skew */
    MX_SASL_CREDENTIALS_EXPIRED,    /* the signing credentials expired */
    MX_SASL_CREDENTIALS_SUPERSEDED, /* ... were rotated away (iam.token.invalidation=rotation) */
    MX_SASL_SESSION_EXPIRED,        /* the session would already be over */
    MX_SASL_SESSION_TOO_SHORT,      /* iam.session.min.ms */
    MX_SASL_NOT_AUTHORIZED,         /* the policy lacks kafka-cluster:Connect */
    MX_SASL_PRINCIPAL_CHANGED,      /* re-authentication as another principal */
    MX_SASL_INTERNAL,
    MX_SASL_REASONS
} mx_sasl_reason;

/* The quotas a throttle comes from (req_throttle). */
enum { MX_QUOTA_REQUEST_RATE, MX_QUOTA_INGRESS, MX_QUOTA_EGRESS, MX_QUOTA_PARTITION_MUTATIONS, MX_QUOTA_OTHER, MX_QUOTAS };

#define MX_LISTENERS 5   /* LSN_COUNT (admin/prometheus.c asserts it) */
#define MX_FAULT_ACTIONS 5 /* fault.h's fault_action values (admin/prometheus.c names them) */

typedef struct metrics {
    struct mx_requests *requests;             /* metrics_init; NULL: requests are not counted */
    uint64_t conns_opened[MX_LISTENERS];
    uint64_t sasl[MX_MECHS][MX_SASL_REASONS]; /* first authentications: [mechanism][MX_SASL_OK or refusal] */
    uint64_t sasl_reauth[MX_MECHS][2];        /* re-authentications: [mechanism][succeeded] */
    uint64_t sasl_reauth_refused[MX_MECHS][MX_SASL_REASONS]; /* re-authentications refused: [mechanism][why] */
    uint64_t throttle_ms[MX_QUOTAS], throttles[MX_QUOTAS];
    uint64_t rebalances;                      /* a group entered PreparingRebalance */
    uint64_t generations;                     /* a group completed a join phase (a new generation) */
    uint64_t txn_begun, txn_committed, txn_aborted; /* transactions started (Ongoing), committed, aborted */
    uint64_t txn_fenced;                      /* aborted by a fence: a new producer, or a timeout */
    mx_hist commit;                           /* the per-iteration storage commit */
    uint64_t faults_fired[MX_FAULT_ACTIONS];  /* [fault_action] */
} metrics;

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
    kp_error_plan *plan; /* where its answers keep error codes (NULL: nowhere) */
} mx_api;

typedef struct mx_requests {
    mx_api *by_key[MX_MAX_KEY];
    mx_api apis[MX_MAX_KEY];
    mx_api unknown;
    mx_row *rows; /* one block for every API's rows */
} mx_requests;

/* Histogram bounds in microseconds (metrics.c), ascending; GET /metrics writes them as le labels. */
extern const uint32_t metrics_latency_bounds_us[];
extern const int metrics_latency_nbounds;
extern const uint32_t metrics_commit_bounds_us[];
extern const int metrics_commit_nbounds;

/* The request table (srv_init). */
void metrics_init(metrics *m);
void metrics_free(metrics *m);

/*
 * A request of API key (-1: unknown) at version ver leaves after latency_us: answered (its answer
 * handed to the socket) or silent (acks=0) with its answer's first error code; or closed,
 * unanswered, with its connection. The transport reports only requests that were started.
 */
void metrics_request_done(metrics *m, int key, int16_t ver, int16_t error_code, int64_t latency_us);
void metrics_request_closed(metrics *m, int key, int16_t ver, int64_t latency_us);
/* The first non-zero error code of a response struct (top level or nested), 0 when none (or no table). */
int16_t metrics_response_error(metrics *m, const kp_msg *msg, int16_t ver, bool flex, const void *resp);

/* An authentication finished (mechanism: MX_MECH_*), first or re-authentication. */
void metrics_sasl(metrics *m, int mechanism, bool reauth, mx_sasl_reason why);
/* A throttle of ms from the quota req_throttle names (its `quota` argument). */
void metrics_throttle(metrics *m, const char *quota, int32_t ms);
/* One storage commit took us. */
void metrics_commit(metrics *m, int64_t us);
/* A fault rule fired with this fault_action (admin/fault.c, once per request it acted on). */
void metrics_fault_fired(metrics *m, int action);

#endif
