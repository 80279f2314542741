/*
 * EndTxn (key 26), v0–5: commit or abort the producer's transaction. v5 is transactions V2
 * (KIP-890 part 2, served while transaction.version is 2): the epoch is bumped at every EndTxn
 * and the answer carries the producer id and epoch to go on with (broker/txn/txn_v2.c).
 * Answered once the decision is stored; with transaction.marker.delay.ms 0 (the default) its markers and offsets are in the same commit,
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
    if (code) {
        /* refused and logged */
    } else if (r->hdr.api_version >= 5) {
        code = txn_end_v2(s, r, q->transactional_id, q->producer_id, q->producer_epoch, q->committed,
                          &resp->producer_id, &resp->producer_epoch);
    } else {
        code = txn_check_producer(s, r, q->transactional_id, q->producer_id, q->producer_epoch, &t);
        if (!code) code = txn_end(s, r, t, q->committed);
    }
    resp->error_code = code;
    req_respond_after_commit(s, r, resp);
}
