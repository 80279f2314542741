/*
 * net: TCP listeners (one per synthetic broker), connections and Kafka
 * framing (int32 size prefix). Frames become requests queued on their
 * connection; answers leave in request order.
 */
#ifndef NET_H
#define NET_H

#include "srv.h"

/* A connection's SASL state (conn.sasl_state): iam/sasl.c moves it, the transport reads it. */
enum { CONN_SASL_NONE, CONN_SASL_HANDSHAKEN, CONN_SASL_AUTHENTICATED };

struct conn {
    uv_tcp_t tcp;
    srv *s;
    uint64_t id;
    int node;                 /* index of the synthetic broker it connected to */
    listener_kind listener;   /* which of its listeners */
    struct tls_conn *tls;     /* a TLS listener's (lsn_tls): the TLS engine; NULL otherwise */
    /* SASL (broker/iam/sasl.c) */
    int sasl_state;           /* CONN_SASL_NONE, CONN_SASL_HANDSHAKEN, CONN_SASL_AUTHENTICATED */
    int sasl_mechanism;
    bool sasl_raw;            /* SaslHandshake v0: the next frame is a raw SASL token */
    char *principal;          /* "IAM.<arn>" once authenticated */
    char *access_key_id;      /* of the credentials that signed the session's token */
    struct authz_cache *authz_cache; /* decisions allowed so far (broker/iam/authz.c) */
    int64_t session_expiry_ms;/* wall clock; 0: none */
    int64_t reauth_started_ms;  /* a re-authentication is under way since then (0: none) */
    int64_t last_reauth_ms;     /* start of the previous re-authentication (0: none yet) */
    const char *close_after_flush; /* set: close once the answers queued so far are written */
    uv_shutdown_t shutdown;
    char peer[64];
    char *client_id;          /* from the latest request header, for log lines */
    uint8_t *rbuf;
    size_t rlen, rcap;
    req *filling;             /* a large frame read straight into its own buffer (net.c) */
    bool pool_wait;           /* queued.max.request.bytes: not read until the pool has room (net.c) */
    bool pool_retry;          /* the pool has room again: cut frames from rbuf at the next pump */
    conn *pool_next;          /* srv.req_pool[listener].waiters */
    size_t fill_have, fill_cap;
    req *head, *tail;         /* requests in arrival order, answered from the head */
    req *next_start;          /* first request not yet started */
    int nqueued;
    size_t queued_bytes;      /* frame bytes of those requests (net.c: MAX_QUEUED_BYTES) */
    bool reading;
    bool closing;
    bool in_commit_list;
    bool in_pump_list;
    bool open_logged;         /* the "open" line went out (net_log_open) */
    bool throttle_logged;     /* its first quota throttle was logged (req_throttle) */
    int64_t muted_until_ms;   /* monotonic: a quota throttle mutes it until then (0: not muted) */
    uv_timer_t *mute_timer;   /* ends the mute; made at the first one */
    int64_t last_active_ms;
    int64_t frame_started_ms; /* monotonic: a frame (or TLS handshake) began arriving; 0: none pending */
    int64_t opened_ms;
    uint64_t requests;
    conn *prev, *next;        /* srv.conns */
    conn *commit_next;        /* conns holding answers until the next commit */
    conn *pump_next;          /* conns to resume before the loop waits (net_pump_later) */
};

int net_listen(srv *s, char *err, size_t errlen);
void net_close_all(srv *s);
/* The loop's spare read buffer (net.c's release_rbuf), freed at the end. */
void net_free_spare(srv *s);
/*
 * A synthetic broker down (admin API): its listeners close, so connecting is refused, and its
 * connections close; returns how many. Up: its listeners listen again on the same ports (-1 with
 * the reason when one cannot, e.g. still closing from a down in the same loop iteration).
 * node.down is the caller's to set.
 */
int net_node_down(srv *s, int i);
int net_node_up(srv *s, int i, char *err, size_t errlen);
/* Start queued requests and write finished answers, in order. */
void net_pump(conn *c);
/* Close now, dropping anything not yet written. */
void net_close(conn *c, const char *why);
/* Close once every answer already finished has been written (a refusal the client must read). */
void net_close_after_flush(conn *c, const char *why);
/* Called after each storage commit: answers held for it can go out. */
void net_after_commit(srv *s);
/*
 * The commit failed: each answer held for it becomes its handler's failure answer
 * (req.commit_failed), or its connection closes unanswered. Returns how many were answered;
 * *closed counts the connections closed.
 */
int net_fail_commit(srv *s, int *closed);
void net_sweep_idle(srv *s);
/*
 * Resume the connection once the current callback is done (before the loop
 * waits again): answering a parked request must not start the connection's
 * next request while the caller is still walking its own state.
 */
void net_pump_later(conn *c);
/* Resume every connection queued by net_pump_later. */
void net_run_pumps(srv *s);
bool net_pumps_pending(const srv *s);
/* The connection holds an answer until the next commit. */
void net_hold_for_commit(conn *c);
/*
 * The "open" line of a connection, logged at its first request (so it can name the client) or
 * at its close, whichever comes first. The health check's connections (mskmock --probe, client
 * id PROBE_CLIENT_ID, every second in a container) are logged at debug rather than info.
 */
void net_log_open(conn *c);
/* log.format=json: the lines written from now on name c (log.h's log_now); nothing in text. */
void net_log_scope(const conn *c);
/* A quota throttle (req_throttle): read and start nothing more of c for ms. */
void net_mute(conn *c, int32_t ms);
/* req_free's: r's pooled bytes go back to its listener's queued.max.request.bytes, waking who waits. */
void net_pool_release(req *r);
#define PROBE_CLIENT_ID "mskmock-probe"
const char *conn_client_id(const conn *c);
/* "host:port" of the peer of a TCP handle, for log lines ("?" when unknown). */
void net_peer_name(uv_tcp_t *t, char *out, size_t n);

#endif
