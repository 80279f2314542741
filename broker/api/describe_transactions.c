/*
 * DescribeTransactions (key 65), v0: each transactional id's state, producer id and epoch,
 * timeout, start time and partitions, from the node that coordinates it (NOT_COORDINATOR from
 * the others, as Kafka; Admin clients ask the coordinator). Unknown ids (and forgotten ones)
 * get TRANSACTIONAL_ID_NOT_FOUND. Gap: groups added by AddOffsetsToTxn are not listed (Kafka
 * lists the __consumer_offsets partition of each, a topic mskmock does not have). IAM:
 * DescribeTransactionalId on each id (53); topics the principal may not describe are left out.
 */
#include <string.h>

#include "api.h"
#include "net/net.h"
#include "topic/topic.h"
#include "txn/txn.h"

static void describe(srv *s, req *r, kp_str id, kp_describe_transactions_transaction_state *out) {
    out->transactional_id = id;
    out->transaction_state = kp_str_c("");
    out->producer_id = -1;
    out->producer_epoch = -1;
    out->transaction_start_time_ms = -1;
    REQ_ARR(r, out->topics, 0);
    int16_t code = api_authz(s, r, IAM_RES_TRANSACTIONAL_ID, id);
    if (!code && id.len <= 0) {
        code = KERR_INVALID_REQUEST;
        req_log_refusal(r, code, "an empty transactional id");
    }
    if (!code) code = txn_check_coordinator(s, r, id);
    txn *t = code ? NULL : txn_find(s, id.p, (size_t)id.len);
    if (!code && !t) {
        code = KERR_TRANSACTIONAL_ID_NOT_FOUND;
        req_log_refusal(r, code, "transactional id %.*s is not known", id.len, id.p);
    }
    out->error_code = code;
    if (code) return;
    out->transaction_state = kp_str_c(txn_state_name(t->state));
    out->transaction_timeout_ms = t->timeout_ms;
    out->transaction_start_time_ms = t->start_ms;
    out->producer_id = t->producer_id;
    out->producer_epoch = t->epoch;
    /* one entry per topic, its partitions in the order they were added */
    int ntopics = 0;
    kp_describe_transactions_topic_data *v = req_alloc(r, sizeof(*v) * (size_t)(t->nparts ? t->nparts : 1));
    for (int i = 0; i < t->nparts; i++) {
        topic *tp = topic_find_id(s, t->parts[i].topic_id);
        if (!tp || !authz_allowed(s, r->c, IAM_DESCRIBE_TOPIC, tp->name, strlen(tp->name))) continue;
        int k = 0;
        while (k < ntopics && !kp_str_eq(v[k].topic, tp->name)) k++;
        if (k == ntopics) {
            v[k].topic = kp_str_c(tp->name);
            v[k].partitions.n = 0;
            v[k].partitions.v = req_alloc(r, sizeof(int32_t) * (size_t)t->nparts);
            ntopics++;
        }
        v[k].partitions.v[v[k].partitions.n++] = t->parts[i].partition;
    }
    out->topics.v = v;
    out->topics.n = ntopics;
}

void api_describe_transactions(srv *s, req *r) {
    kp_describe_transactions_request *q = r->body;
    kp_describe_transactions_response *resp = req_resp(r);
    REQ_ARR(r, resp->transaction_states, q->transactional_ids.n > 0 ? q->transactional_ids.n : 0);
    for (int32_t i = 0; i < resp->transaction_states.n; i++)
        describe(s, r, q->transactional_ids.v[i], &resp->transaction_states.v[i]);
    req_respond(r, resp);
}
