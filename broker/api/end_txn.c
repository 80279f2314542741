/*
 * EndTxn (key 26), v0–4 (v5 is transaction version 2, not served): commit or abort the
 * producer's transaction. Answered once the decision is stored; with
 * transaction.marker.delay.ms 0 (the default) its markers and offsets are in the same commit,
 * so a read_committed consumer sees a committed transaction as soon as EndTxn returns.
 * IAM: AlterTransactionalId (else TRANSACTIONAL_ID_AUTHORIZATION_FAILED).
 */
#include "api.h"
#include "txn/txn.h"

void api_end_txn(srv *s, req *r) {
    kp_end_txn_request *q = r->body;
    kp_end_txn_response *resp = req_resp(r);
    resp->producer_id = -1;
    resp->producer_epoch = -1;
    int16_t code = api_authz(s, r, IAM_RES_TRANSACTIONAL_ID, q->transactional_id);
    txn *t = NULL;
    if (!code) code = txn_check_producer(s, r, q->transactional_id, q->producer_id, q->producer_epoch, &t);
    if (!code) code = txn_end(s, r, t, q->committed);
    resp->error_code = code;
    req_respond_after_commit(s, r, resp);
}
