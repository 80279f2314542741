/*
 * AddOffsetsToTxn (key 25), v0–4: the group joins the producer's transaction, so that its
 * TxnOffsetCommit waits for the outcome (broker/txn). IAM: AlterTransactionalId on the id and
 * AlterGroup on the group (else 53 or 30).
 */
#include "api.h"
#include "txn/txn.h"

void api_add_offsets_to_txn(srv *s, req *r) {
    kp_add_offsets_to_txn_request *q = r->body;
    kp_add_offsets_to_txn_response *resp = req_resp(r);
    int16_t code = api_authz(s, r, IAM_RES_TRANSACTIONAL_ID, q->transactional_id);
    if (!code) code = api_authz(s, r, IAM_RES_GROUP, q->group_id);
    txn *t = NULL;
    if (!code) code = txn_check_producer(s, r, q->transactional_id, q->producer_id, q->producer_epoch, &t);
    if (!code) code = txn_add_group(s, r, t, q->group_id);
    resp->error_code = code;
    req_respond_after_commit(s, r, resp);
}
