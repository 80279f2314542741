/*
 * srv: the state the event loop owns — the synthetic brokers and their listeners, and the
 * roots of each subsystem's state (topics, groups, transactions, TLS, SASL, the counters) —
 * and the hooks the layers above register at start-up. A core header with no functions of its
 * own beyond small inline ones: every layer reads the state; lifecycle.c (the top) builds it.
 */
#ifndef SRV_H
#define SRV_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "fleet.h"
#include "metrics.h"
#include "name_index.h"
#include "rate.h"
#include "config.h"
#include "stor.h"

typedef struct srv srv;
typedef struct conn conn;
typedef struct req req;

/* The listeners every synthetic broker has (a port of 0 in the config turns a kind off). */
typedef enum listener_kind {
    LSN_PLAINTEXT,      /* no TLS, no authentication: the developer listener */
    LSN_IAM,            /* MSK's port 9098: TLS + SASL (AWS_MSK_IAM, OAUTHBEARER) */
    LSN_SASL_PLAINTEXT, /* SASL without TLS, for clients where TLS setup is a burden */
    /* the same security, advertised as external.advertised.host: for clients outside a container network */
    LSN_EXTERNAL,       /* as LSN_PLAINTEXT */
    LSN_EXTERNAL_IAM,   /* as LSN_IAM */
    LSN_COUNT
} listener_kind;

typedef struct listener {
    uv_tcp_t tcp;
    srv *s;
    int node;
    listener_kind kind;
    bool held; /* a connection waits in libuv, not accepted (max.connections, creation rate: net.c) */
    bool closing; /* its broker was taken down and the handle is not closed yet (net_node_down) */
} listener;

typedef struct node {
    int32_t id;
    int32_t ports[LSN_COUNT]; /* bound; 0: that listener is off */
    int32_t adv_ports[LSN_COUNT]; /* what Metadata names when set by the admin API (a mapped container port); 0: ports */
    listener lsn[LSN_COUNT];
    bool down;                /* taken down by the admin API: no listener, not in Metadata */
} node;

const char *lsn_name(listener_kind k);
static inline bool lsn_sasl(listener_kind k) { return k != LSN_PLAINTEXT && k != LSN_EXTERNAL; }
static inline bool lsn_tls(listener_kind k) { return k == LSN_IAM || k == LSN_EXTERNAL_IAM; }
/* The host name a listener of kind k has from the configuration. */
static inline const char *lsn_cfg_host(const config *cfg, listener_kind k) {
    return k == LSN_EXTERNAL || k == LSN_EXTERNAL_IAM ? cfg->external_advertised_host : cfg->advertised_host;
}

typedef struct topic topic;
typedef struct partition partition;

/* Connection admission (net/net.c): max.connection.creation.rate's tokens and the listeners holding one back. */
typedef struct net_admission {
    double tokens;
    int64_t refill_ms;
    uv_timer_t timer;
    bool timer_ready;
    int held;          /* listeners holding a connection */
    bool logged;       /* this episode of holding was logged */
} net_admission;

/* queued.max.request.bytes (net/net.c): request bytes read and not yet answered, of one listener kind. */
typedef struct net_req_pool {
    int64_t used;      /* frames taken and not yet freed, a frame still arriving at its announced size */
    conn *waiters;     /* connections not read until bytes are released (conn.pool_next) */
    int64_t logged_ms; /* clk_mono_ms of the last warning that connections wait */
} net_req_pool;


struct srv {
    uv_loop_t *loop;
    config *cfg;
    stor *st;
    struct fleet *fleet;     /* every cluster of the process (fleet.h); this srv is one of them */
    /*
     * The configured cluster: it owns what every cluster shares (the identities and the credentials
     * endpoint, TLS, the admin and AWS listeners); a created cluster borrows those pointers.
     */
    bool primary;
    int nnodes;
    node nodes[CFG_MAX_BROKERS];
    char *adv_host[LSN_COUNT]; /* set by the admin API (admin_listeners.c); NULL: lsn_cfg_host */
    topic *topics;           /* list; topic counts are small */
    int ntopics;
    uint64_t topics_generation; /* +1 at each topic created or deleted (consumer groups' regexes) */
    int64_t next_producer_id;
    uint64_t next_conn_id;
    conn *conns;             /* every open connection */
    int nconns;
    conn *commit_list;       /* connections with answers held for the next commit (net/net.c) */
    conn *pump_list;         /* connections to resume before the loop waits (net/net.c) */
    uint8_t *spare_rbuf;     /* a read buffer no connection holds (net/net.c's release_rbuf) */
    net_admission adm;
    net_req_pool req_pool[LSN_COUNT];
    struct topic_waiter *waiters; /* parked fetches (topic/commit.c's topic_wait) */
    struct group *groups;    /* consumer groups (broker/group/group.c) */
    name_index groups_by_id; /* the same by id (broker/name_index.c) */
    name_index topics_by_name; /* the topics by name */
    struct grp_config_set *group_configs; /* group config overrides by group id (broker/group/group_config.c) */
    struct txn_coord *txn;   /* the transaction coordinator (broker/txn/txn.c) */
    struct topic_cleaner *cleaner; /* the log cleaner (broker/topic/compact.c); NULL: log.cleaner.enable false */
    uint64_t compactions;    /* cleaner passes completed, for GET /metrics */
    struct tls_ctx *tls;     /* the IAM listener's certificate (broker/net/tls.c) */
    struct sasl_ctx *sasl;   /* identities, rate limit, credentials endpoint (broker/iam/sasl.c) */
    struct authz *authz;     /* resource ARNs, plaintext.principal (broker/iam/authz.c) */
    struct admin *admin;     /* the HTTP admin API (broker/admin/admin.c); NULL: admin.port 0 */
    struct aws_api *aws;     /* the AWS APIs' listener (broker/aws/aws.c); NULL: aws.port 0 */
    struct fault_rule *faults; /* the admin API's fault rules (broker/admin/fault.c); NULL: none */
    metrics metrics;         /* the counters GET /metrics exposes (broker/metrics.h) */
    partition **dirty;       /* partitions appended to since the last commit */
    int ndirty, cap_dirty;
    /*
     * Hooks the layers above register at start-up (lifecycle.c), so the transport calls nothing above
     * it: each whole frame goes to dispatch (the request pipeline: false closes the connection),
     * and each closed connection to conn_closed (what iam/ keeps per connection).
     */
    bool (*dispatch)(srv *s, req *r);
    void (*conn_closed)(conn *c);
    int64_t next_retention_ms;
    int64_t next_offsets_expiry_ms;
    int64_t started_us;
    uint64_t requests;       /* every request started, on every connection */
    uint64_t requests_at_tick; /* the primary's: every cluster's requests at the previous housekeeping tick */
    uint64_t requests_at_trim; /* ... and when the heap was last trimmed (UINT64_MAX: a trim is owed) */
    uint64_t ckpt_failures_logged;
    int64_t storage_check_ms;     /* the start-up check took this long */
    bool storage_check_partial;   /* ... and ran out of storage.startup.check.ms */
    stor_verify_stats storage_verify; /* what storage.verify read at start (stor_verify) */
    int64_t storage_verify_ms;
    int64_t room_free, room_used, room_checked_ms; /* srv_storage_room's measure */
    rate_bucket quota_in, quota_out; /* the cluster's ingress and egress (topic/quota.c) */
    rate_bucket quota_mutations;     /* partitions created and deleted (topic/quota.c) */
    rate_bucket quota_requests;      /* requests served (pipeline/dispatch.c, max.request.rate) */
    bool offset_error_logged;     /* a failed offset write of the open transaction was logged */
    bool stopping;
    int fatal_exit;          /* srv_fail_stop's exit code; 0: none */
};

/* The host and port Metadata, FindCoordinator and DescribeCluster give a client of listener k for node i. */
static inline const char *lsn_host(const srv *s, listener_kind k) {
    return s->adv_host[k] ? s->adv_host[k] : lsn_cfg_host(s->cfg, k);
}
static inline int32_t lsn_port(const srv *s, int i, listener_kind k) {
    return s->nodes[i].adv_ports[k] ? s->nodes[i].adv_ports[k] : s->nodes[i].ports[k];
}


/* The node Metadata names as controller: the first one not taken down (admin API). */
static inline int srv_controller(const srv *s) {
    for (int i = 0; i < s->nnodes; i++)
        if (!s->nodes[i].down) return i;
    return 0;
}

/*
 * A failure that leaves memory past what storage holds (a commit holding topic changes, a
 * transaction coordinator's write): nothing more is committed (topic_commit_now) or answered
 * (the transport), the loop stops at the end of this iteration, and main exits with code
 * without the orderly shutdown, which would store and answer.
 */
static inline void srv_fail_stop(srv *s, int code) {
    s->fatal_exit = code;
    /* main reads the primary's: a created cluster's failure stops the process the same way */
    if (s->fleet && s->fleet->n && s->fleet->list[0]->s) s->fleet->list[0]->s->fatal_exit = code;
    uv_stop(s->loop);
}

#endif
