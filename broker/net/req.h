/*
 * req: one Kafka request from frame to response: its memory, its answer (encoded in order,
 * held for the storage commit, or parked), and the one refusal log line. The transport (net.c)
 * queues and writes requests; the request pipeline (pipeline/) decodes and dispatches them; any
 * layer that answers a parked request uses this header.
 *
 * A connection's requests are answered strictly in order. A handler either
 * answers at once (req_respond), answers after the next storage commit
 * (req_respond_after_commit, for acknowledged produces), or parks the
 * request (req_park) and answers later; while a request is parked the
 * connection starts no other request, as Kafka mutes the socket.
 */
#ifndef REQ_H
#define REQ_H

#include <assert.h>
#include <stdarg.h>

#include "kp.h"
#include "kp_errors.h"
#include "kp_msgs.h"
#include "srv.h"

typedef enum req_state {
    REQ_QUEUED,       /* read, not started */
    REQ_PARKED,       /* handler will answer later */
    REQ_WAIT_COMMIT,  /* answer encoded, held until the storage commit */
    REQ_READY,        /* answer encoded */
    REQ_SILENT,       /* no answer (acks=0 produce) */
    REQ_STATES
} req_state;

struct req {
    conn *c;
    req *next;
    uint8_t *frame;          /* the request without its size prefix; owned */
    size_t frame_off;        /* frame sits this far into its allocation (net.c: a read buffer handed over) */
    size_t len;
    size_t pooled;           /* of len, counted in its listener's queued.max.request.bytes (net.c) */
    kp_req_header hdr;
    const kp_msg *msg;
    void *body;              /* decoded request */
    kp_arena arena;          /* everything decoded or built for this request */
    kp_writer out;           /* encoded response, size prefix included */
    req_state state;
    uint64_t commit_seq;     /* REQ_WAIT_COMMIT: answer when stor_commit_seq() > this */
    int64_t started_us;
    int64_t changes_at_start; /* stor_change_count() when the pipeline started it: req_respond */
    int32_t throttle_ms;     /* max.request.rate's throttle: set in the response's throttle_time_ms */
    int16_t error_code;      /* the answer's first non-zero error code, for the metrics (encode_response) */
    void *park;              /* handler data while parked */
    void (*park_cancel)(srv *s, req *r); /* the connection closed while parked */
    void **adopted;          /* malloc'd buffers the response points into, freed with the request */
    int nadopted;
    /*
     * REQ_WAIT_COMMIT: the response struct encoded into out, and how the handler turns it into
     * the answer for a commit that failed (KAFKA_STORAGE_ERROR where it wrote); without one,
     * the connection is closed unanswered (net_fail_commit).
     */
    void *resp;
    void (*commit_failed)(srv *s, req *r);
    /*
     * Called on the response struct just before it is encoded (the pipeline sets it when a fault
     * rule writes its error over the answer a handler built: pipeline/fault_apply.c); NULL: none.
     */
    void (*amend)(req *r, const kp_msg *m, int16_t ver, void *resp);
    void *amend_ctx;
    /* the IAM action per resource type its API needs (api/table.c's row, set by the pipeline) */
    const int8_t *authz_actions;
    bool dropped;            /* a fault rule drops the answer: freed instead of written (net.c) */
};

/*
 * A request's life, as a table of valid previous states (the way Apache Kafka's GroupMetadata
 * and TransactionState declare theirs): queued requests start (or run again after a fault rule's
 * delay, from PARKED); an answer is held for the commit, ready, or none; a held answer becomes
 * ready after its commit, or its handler's failure answer after a failed one; a ready answer
 * becomes silent when a fault rule drops it, and queued requests behind a refused one go silent
 * unanswered. Every change goes through req_set_state, which asserts the table.
 */
#define REQ_FROM(st) (1u << (st))
static const unsigned req_valid_previous[REQ_STATES] = {
    [REQ_QUEUED] = REQ_FROM(REQ_QUEUED) | REQ_FROM(REQ_PARKED),
    [REQ_PARKED] = REQ_FROM(REQ_QUEUED),
    [REQ_WAIT_COMMIT] = REQ_FROM(REQ_QUEUED) | REQ_FROM(REQ_PARKED),
    [REQ_READY] = REQ_FROM(REQ_QUEUED) | REQ_FROM(REQ_PARKED) | REQ_FROM(REQ_WAIT_COMMIT),
    [REQ_SILENT] = REQ_FROM(REQ_QUEUED) | REQ_FROM(REQ_READY),
};
static inline bool req_transition_valid(req_state from, req_state to) {
    return (unsigned)to < REQ_STATES && (req_valid_previous[to] & REQ_FROM(from));
}
static inline void req_set_state(req *r, req_state to) {
    assert(req_transition_valid(r->state, to));
    r->state = to;
}

/*
 * Encode resp as r's answer at version ver of message m (the size prefix, the response header,
 * the body); the caller then sets r->state. The pipeline answers an ApiVersions newer than it
 * serves at v0 with it; handlers use req_respond and the others below.
 */
void req_encode(req *r, const kp_msg *m, int16_t ver, const void *resp);
/* A zeroed response struct of the request's message with version defaults. */
void *req_resp(req *r);
/*
 * A quota (the config key named by quota) throttles this request (what: "produce", "fetch"):
 * from now on nothing more is read or started on the connection for ms (KIP-219's channel
 * mute; the requests it pipelined behind this one wait too), whether or not the client
 * honours the throttle_time_ms its response carries. 0: no throttle.
 */
void req_throttle(req *r, int32_t ms, const char *what, const char *quota);
/*
 * The answer, held for the open storage transaction's commit when anything was written since
 * the request started (its own writes, or those that completed it, such as a rebalance's): what
 * a client is told is stored before it hears it. A commit that then fails closes the connection.
 */
void req_respond(req *r, const void *resp);
/* Held for the commit whatever was written; commit_failed, when set, answers a failed one. */
void req_respond_after_commit(srv *s, req *r, const void *resp);
/* After commit_failed changed r->resp: encode it again, ready to go. */
void req_respond_again(req *r);
void req_park(req *r, void *data, void (*cancel)(srv *s, req *r));
void req_cancel_park(srv *s, req *r);
/* Answer a parked request; the connection then resumes. */
void req_unpark_respond(srv *s, req *r, const void *resp);
void req_silent(req *r);
void req_free(req *r); /* its pooled bytes go back to queued.max.request.bytes (net_pool_release) */
void *req_alloc(req *r, size_t n);
/* Take ownership of a malloc'd buffer (e.g. fetched records) so it lives as long as the request. */
void req_adopt(req *r, void *p);

/* Allocate an array of count elements for a response field, from the request's arena. */
#define REQ_ARR(r, field, count)                                         \
    do {                                                                 \
        (field).n = (int32_t)(count);                                    \
        (field).v = (count) ? req_alloc((r), sizeof(*(field).v) * (size_t)(count)) : NULL; \
    } while (0)

kp_str req_strf(req *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * The one refusal log line: connection, client, API and version, the error
 * code with its name and the concrete reason. Handlers put the same code in
 * the response themselves (per partition, per topic or top level).
 */
void req_log_refusal(const req *r, int16_t code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
