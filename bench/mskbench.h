/*
 * mskbench: what the modes share (mskbench.c): options, the targets (mskmock
 * spawned as a process, librdkafka's mock cluster in this process or in a
 * child), /proc readings, librdkafka configuration and the JSON result line.
 *
 * Modes: mskmock / mock (produce, consume, latency: mskbench.c), groups
 * (consumer groups: groups.c), auth (IAM authentication: auth.c).
 */
#ifndef MSKBENCH_H
#define MSKBENCH_H

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* Replication factor of every topic, on both targets: 3, or fewer brokers. */
#define RF (O.brokers < 3 ? O.brokers : 3)

/* How the produce/consume clients reach mskmock. */
typedef enum { SEC_PLAINTEXT, SEC_SASL_SSL } security_kind;

typedef struct {
    const char *mode; /* "mskmock", "mock", "groups", "auth" */
    const char *target; /* groups/auth: "mskmock", "mock", "mock-isolated" */
    const char *binary;
    const char *data_dir; /* NULL: fresh temp dir; ":memory:" */
    long messages;
    int size;
    int brokers;
    bool isolated;
    double lat_secs;
    int lat_warmup_ms;
    int lat_interval_us;
    int lat_linger_ms;
    int fetch_wait_ms;
    int linger_ms;
    bool keep;
    bool verbose;
    const char *broker_sets[16]; /* --broker-set KEY=VALUE, passed to mskmock as --set */
    int nbroker_sets;
    security_kind security; /* --security plaintext|sasl_ssl (mskmock only) */
    const char *client_sets[16]; /* --client-set KEY=VALUE: extra librdkafka settings for every client */
    int nclient_sets;
    /* groups */
    int group_sizes[8]; /* --group-consumers 3,30 */
    int ngroup_sizes;
    int heartbeat_ms;   /* --heartbeat-ms: 0 = librdkafka's default */
    int scale_groups;   /* --scale-groups 500 (0: skip the scale test) */
    int scale_members;  /* --scale-members 3 */
    int scale_heartbeat_ms;
    int scale_leader_delay_ms; /* leader waits this long before its SyncGroup (0: at once) */
    /* auth */
    int auth_conns;     /* connections in flight for the rate */
    int auth_threads;   /* driver threads for the rate */
    double auth_secs;   /* measured seconds per mechanism and listener */
    double auth_warmup_s;
    int auth_lat_count; /* authentications one at a time for the latency */
    const char *auth_only; /* run only configurations whose name contains this */
    /* kafka: Apache Kafka from the jars bench/kafka/fetch.sh fetched */
    const char *kafka_libs;  /* --kafka-libs DIR */
    const char *kafka_start; /* --kafka-start bench/kafka/start.sh */
    long warmup;             /* --warmup N: records produced and consumed before the measured phases */
} opts;

extern opts O;

/* ---- helpers ---- */
double now_s(void);
int64_t now_ns(void);
int64_t wall_ms(void);
void sleep_us(long us);
_Noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
long status_kb(pid_t pid, const char *field);
long rss_kb(pid_t pid);
double machine_busy_s(void);
double proc_cpu_s(pid_t pid);
bool try_connect(int port);
int free_port_range(int n);
double mib(long kb);
int cmp_double(const void *a, const void *b);
/* p in [0,1] of n sorted values (nearest rank); -1 when n == 0 */
double pct_sorted(const double *v, size_t n, double p);

/* ---- librdkafka ---- */
extern atomic_int client_warnings;
extern atomic_int client_errors;
extern char first_client_error[512];
void conf_set(rd_kafka_conf_t *c, const char *k, const char *v);
/* bootstrap, client.id, log and error callbacks, and the target's security settings. */
rd_kafka_conf_t *base_conf(const char *bootstrap);
/* Call right after rd_kafka_new on a client made from base_conf: with SASL_SSL it
 * sets the first OAUTHBEARER token (the refresh callback sets later ones). */
void client_ready(rd_kafka_t *rk);

/* ---- targets ---- */
typedef struct {
    const char *kind;    /* "mskmock", "mock", "mock-isolated" */
    const char *storage; /* "disk", ":memory:", "memory (mock)" */
    char bootstrap[512];       /* what the clients use (plaintext, or the IAM listener with SASL_SSL) */
    char plain_bootstrap[512]; /* mskmock's plaintext listener */
    pid_t pid; /* broker process; 0 when the mock runs in this process */
    /* mskmock */
    char tmpdir[256], data_dir[300], log_path[300];
    bool own_tmpdir;
    double self_ready_ms; /* "ready in X ms" from mskmock's own log */
    int plain_port, iam_port, sasl_port; /* first broker's ports; 0 = off */
    char ca_path[400];    /* CA the TLS clients trust */
    char identities_path[400];
    /* mock */
    rd_kafka_t *mock_rk;
    rd_kafka_mock_cluster_t *mcluster;
    pid_t mock_tid;
    long base_rss_kb; /* this process before the in-process mock */
    FILE *ctl_in, *ctl_out; /* pipes to `mskbench mock-serve` */
    double startup_ms;
    double host_handle_ms; /* in-process mock: creating the rd_kafka_t it needs */
} target;

/* The identity the bench's tokens are signed with (written to the identities file). */
#define BENCH_AKID "AKIAMSKBENCH0000001"
#define BENCH_SECRET "mskbench/secret/K7MDENG+bPxRfiCYEXAMPLE"
#define BENCH_PRINCIPAL "arn:aws:iam::123456789012:user/mskbench"
#define BENCH_REGION "us-east-1"

long target_rss_kb(const target *t);
double target_cpu_s(target *t);
/* Starts the target named by O.target / O.mode; self is this executable (for mock-serve). */
void start_target(target *t, const char *name);
void create_topics(target *t, char names[][128], const int *parts, int n);
double stop_target(target *t, int *exit_status);
void finish_target(target *t); /* removes the temp dir (unless --keep) */

/* ---- JSON result line ---- */
typedef struct {
    char *p;
    size_t n, cap;
} jbuf;
void jraw(jbuf *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void jnum(jbuf *j, const char *k, double v);
void jstr(jbuf *j, const char *k, const char *v);

/* ---- modes ---- */
int groups_main(const char *self);
int auth_main(const char *self);

#endif
