/*
 * srv: the state the event loop owns — synthetic brokers, topics,
 * partitions, idempotent-producer state — and the per-iteration commit that
 * makes appended batches durable before they are acknowledged or served.
 */
#ifndef SRV_H
#define SRV_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "config.h"
#include "kp_batch.h"
#include "stor.h"

typedef struct srv srv;
typedef struct conn conn;
typedef struct req req;

/* The listeners every synthetic broker has (a port of 0 in the config turns a kind off). */
typedef enum listener_kind {
    LSN_PLAINTEXT,      /* no TLS, no authentication: the developer listener */
    LSN_IAM,            /* MSK's port 9098: TLS + SASL (AWS_MSK_IAM, OAUTHBEARER) */
    LSN_SASL_PLAINTEXT, /* SASL without TLS, for clients where TLS setup is a burden */
    LSN_COUNT
} listener_kind;

typedef struct listener {
    uv_tcp_t tcp;
    srv *s;
    int node;
    listener_kind kind;
} listener;

typedef struct node {
    int32_t id;
    int32_t ports[LSN_COUNT]; /* 0: that listener is off */
    listener lsn[LSN_COUNT];
} node;

const char *lsn_name(listener_kind k);
static inline bool lsn_sasl(listener_kind k) { return k != LSN_PLAINTEXT; }

/* Idempotent producer state of one partition (Kafka's ProducerStateEntry). */
#define PRODUCER_BATCH_CACHE 5
typedef struct producer_batch {
    int32_t first_seq, last_seq;
    int64_t first_offset, last_offset;
    int64_t timestamp;
} producer_batch;

typedef struct producer_state {
    int64_t producer_id;
    int16_t epoch;
    int nbatches;                        /* newest last */
    producer_batch batches[PRODUCER_BATCH_CACHE];
} producer_state;

typedef struct partition {
    struct topic *topic;
    int32_t index;
    int32_t leader;          /* index into srv.nodes */
    int32_t leader_epoch;
    int64_t log_start;
    int64_t end;             /* next offset to assign (log end offset) */
    int64_t hw;              /* committed end: what Fetch may serve */
    bool dirty;              /* appended since the last commit */
    producer_state *producers;
    int nproducers, cap_producers;
} partition;

/* Effective topic settings; overrides keep what the user set, for DescribeConfigs. */
typedef struct topic_override {
    char *key, *value;
} topic_override;

typedef struct topic {
    int64_t id;
    char *name;
    uint8_t uuid[16];
    int32_t nparts;
    partition *parts;
    int64_t created_ms;
    topic_override *overrides;
    int noverrides;
    /* cached values of the settings the data path reads */
    int64_t max_message_bytes;
    int64_t retention_ms;
    int64_t retention_bytes;
    bool log_append_time;
    bool compact;
    struct topic *next;
} topic;

struct srv {
    uv_loop_t *loop;
    config *cfg;
    stor *st;
    int nnodes;
    node nodes[CFG_MAX_BROKERS];
    topic *topics;           /* list; topic counts are small */
    int ntopics;
    int64_t next_producer_id;
    uint64_t next_conn_id;
    conn *conns;             /* every open connection */
    int nconns;
    struct fetch_wait *fetch_waiters; /* parked fetches */
    struct group *groups;    /* consumer groups (broker/group/group.c) */
    struct tls_ctx *tls;     /* the IAM listener's certificate (broker/net/tls.c) */
    struct sasl_ctx *sasl;   /* identities, rate limit, credentials endpoint (broker/iam/sasl.c) */
    partition **dirty;       /* partitions appended to since the last commit */
    int ndirty, cap_dirty;
    uv_prepare_t commit_handle;
    uv_timer_t housekeeping;
    int64_t next_retention_ms;
    int64_t next_offsets_expiry_ms;
    int64_t started_us;
    uint64_t requests;       /* every request started, on every connection */
    uint64_t requests_at_tick; /* srv.requests at the previous housekeeping tick */
    uint64_t requests_at_trim; /* srv.requests when the heap was last trimmed */
    uint64_t ckpt_failures_logged;
    bool stopping;
};

int srv_init(srv *s, uv_loop_t *loop, config *cfg, char *err, size_t errlen);
void srv_close(srv *s);   /* stop listening and close connections */
void srv_free(srv *s);    /* after the loop ended */

/* ---- topics (broker/topic/topics.c) ---- */
topic *srv_topic_find(srv *s, const char *name, size_t len);
topic *srv_topic_find_uuid(srv *s, const uint8_t uuid[16]);
partition *srv_partition(srv *s, const char *name, size_t len, int32_t index);
/* Create with overrides already validated. Returns NULL and sets *why on storage failure. */
topic *srv_topic_create(srv *s, const char *name, int32_t nparts, const topic_override *ov, int nov, const char **why);
int srv_topic_delete(srv *s, topic *t);
void srv_topic_free(topic *t);
int srv_load_topics(srv *s);
int srv_topic_add_partitions(srv *s, topic *t, int32_t count);
/* Set (value != NULL) or remove one override, refreshing the cached settings. */
int srv_topic_set_config(srv *s, topic *t, const char *key, const char *value);
const char *srv_topic_config_value(const srv *s, const topic *t, const char *key, bool *is_default);
/* Validate a topic name as Kafka does; returns a reason or NULL. */
const char *srv_topic_name_invalid(const char *name, size_t len);

/* ---- the log (broker/topic/append.c, broker/topic/retention.c) ---- */
void srv_mark_dirty(srv *s, partition *p);
/* Commit now (normally once per loop iteration); returns -1 if the commit failed. */
int srv_commit_now(srv *s);
/* After a successful commit: advance high watermarks and wake fetchers. */
void srv_after_commit(srv *s);
void srv_enforce_retention(srv *s);
producer_state *srv_producer(partition *p, int64_t producer_id, bool create);
void srv_producer_record(producer_state *ps, int16_t epoch, int32_t first_seq, int32_t last_seq, int64_t first_offset,
                         int64_t last_offset, int64_t timestamp);
/*
 * Append one batch that kp_batch_validate accepted. Returns 0 or a Kafka
 * error code with *why; on success *base_offset is where it landed (for a
 * duplicate idempotent batch: where it landed the first time).
 */
int16_t srv_append(srv *s, partition *p, uint8_t *batch, size_t size, const kp_batch *b, int64_t *base_offset,
                   int64_t *append_time, const char **why);
void fetch_wake(srv *s);      /* parked fetches re-check their partitions (broker/api/fetch.c) */
void fetch_cancel_all(srv *s);

/* The node index that leads partition i of a topic: spread round-robin. */
static inline int32_t srv_leader_for(const srv *s, const topic *t, int32_t i) {
    return (int32_t)(((uint64_t)t->id * 7 + (uint64_t)i) % (uint64_t)s->nnodes);
}

#endif
