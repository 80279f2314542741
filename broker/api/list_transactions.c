/*
 * ListTransactions (key 66), v0–1: the transactional ids this node coordinates (Admin clients
 * ask every broker and merge), filtered by state names (unknown names come back in
 * unknown_state_filters), producer ids and, from v1, by a (last) transaction
 * started more than duration_filter ms ago, as Kafka filters. Dead ids are never listed. Gap: v2's transactional_id_pattern (a Java
 * regular expression) is not served. IAM: only ids the principal may DescribeTransactionalId.
 */
#include <string.h>

#include "api.h"
#include "clock.h"
#include "group/group.h"
#include "net/net.h"
#include "txn/txn.h"

typedef struct list_ctx {
    srv *s;
    req *r;
    const kp_list_transactions_request *q;
    kp_list_transactions_response *resp;
    int32_t cap;
    int64_t now;
} list_ctx;

static bool wanted(const list_ctx *c, const txn *t) {
    const kp_list_transactions_request *q = c->q;
    if (t->state == TS_DEAD) return false;
    if (grp_coordinator_for(c->s, t->id, strlen(t->id)) != c->r->c->node) return false;
    bool state_ok = q->state_filters.n <= 0;
    for (int32_t i = 0; !state_ok && i < q->state_filters.n; i++)
        state_ok = kp_str_eq(q->state_filters.v[i], txn_state_name(t->state));
    bool pid_ok = q->producer_id_filters.n <= 0;
    for (int32_t i = 0; !pid_ok && i < q->producer_id_filters.n; i++) pid_ok = q->producer_id_filters.v[i] == t->producer_id;
    /* Kafka's duration filter, whatever the state: an id that never started (-1) passes it */
    bool long_ok = c->r->hdr.api_version < 1 || q->duration_filter < 0 || c->now - t->start_ms > q->duration_filter;
    return state_ok && pid_ok && long_ok && authz_allowed(c->s, c->r->c, IAM_DESCRIBE_TRANSACTIONAL_ID, t->id,
                                                         strlen(t->id));
}

static bool list_one(void *ctx, txn *t) {
    list_ctx *c = ctx;
    if (!wanted(c, t)) return true;
    kp_list_transactions_response *resp = c->resp;
    if (resp->transaction_states.n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 16;
        kp_list_transactions_transaction_state *v = req_alloc(c->r, sizeof(*v) * (size_t)c->cap);
        if (resp->transaction_states.n)
            memcpy(v, resp->transaction_states.v, sizeof(*v) * (size_t)resp->transaction_states.n);
        resp->transaction_states.v = v;
    }
    resp->transaction_states.v[resp->transaction_states.n++] = (kp_list_transactions_transaction_state){
        req_strf(c->r, "%s", t->id), t->producer_id, kp_str_c(txn_state_name(t->state))};
    return true;
}

static bool known_state(kp_str name) {
    for (int st = TS_EMPTY; st <= TS_COMPLETE_ABORT; st++)
        if (kp_str_eq(name, txn_state_name((txn_state)st))) return true;
    /* Kafka's names include the two it never lists; they are filters, not unknown */
    return kp_str_eq(name, "Dead") || kp_str_eq(name, "PrepareEpochFence");
}

void api_list_transactions(srv *s, req *r) {
    kp_list_transactions_request *q = r->body;
    kp_list_transactions_response *resp = req_resp(r);
    int32_t nunknown = 0;
    kp_str *unknown = req_alloc(r, sizeof(kp_str) * (size_t)(q->state_filters.n > 0 ? q->state_filters.n : 1));
    for (int32_t i = 0; i < q->state_filters.n; i++)
        if (!known_state(q->state_filters.v[i])) unknown[nunknown++] = q->state_filters.v[i];
    resp->unknown_state_filters.v = unknown;
    resp->unknown_state_filters.n = nunknown;
    list_ctx c = {s, r, q, resp, 0, clk_now_ms()};
    resp->transaction_states.n = 0;
    txn_each(s, list_one, &c);
    req_respond(r, resp);
}
