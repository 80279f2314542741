/*
 * InitProducerId (key 22), v0–5. Without a transactional id, for idempotent
 * producers: a fresh producer id with epoch 0, or (v3+, KIP-360) the same id
 * with the next epoch when the client passes its current id and epoch. With
 * one, the transaction coordinator's answer (broker/txn): the id's producer
 * id with its next epoch, fencing an older producer of the id. Producer ids
 * come from blocks stored ahead, so a restart never reissues one. IAM, as on
 * MSK: an idempotent producer needs kafka-cluster:WriteDataIdempotently on the
 * cluster (and WriteData on some topic), else CLUSTER_AUTHORIZATION_FAILED —
 * no KIP-679 relaxation unless iam.authorization.idempotent.relaxed; a
 * transactional id needs AlterTransactionalId, else
 * TRANSACTIONAL_ID_AUTHORIZATION_FAILED.
 */
#include "api.h"
#include "checked.h"
#include "txn/txn.h"

void api_init_producer_id(srv *s, req *r) {
    kp_init_producer_id_request *q = r->body;
    kp_init_producer_id_response *resp = req_resp(r);
    resp->producer_id = -1;
    resp->producer_epoch = -1;
    bool transactional = q->transactional_id.len >= 0;
    resp->error_code = transactional ? api_authz(s, r, IAM_RES_TRANSACTIONAL_ID, q->transactional_id)
                                     : api_authz(s, r, IAM_RES_CLUSTER, KP_STR_NULL);
    if (resp->error_code) {
        /* refused and logged */
    } else if (transactional) {
        resp->error_code = txn_init_producer_id(s, r, q->transactional_id, q->transaction_timeout_ms,
                                                q->producer_id, q->producer_epoch, &resp->producer_id,
                                                &resp->producer_epoch);
    } else if (q->producer_id >= 0 && q->producer_epoch >= 0 && q->producer_epoch < INT16_MAX - 1) {
        resp->producer_id = q->producer_id;
        resp->producer_epoch = (int16_t)(q->producer_epoch + 1);
        if (q->producer_id >= s->next_producer_id) s->next_producer_id = sat_add_i64(q->producer_id, 1);
    } else if ((resp->producer_id = txn_next_producer_id(s)) < 0) {
        resp->error_code = KERR_UNKNOWN_SERVER_ERROR;
        req_log_refusal(r, resp->error_code, "no producer id left to give");
    } else {
        resp->producer_epoch = 0;
    }
    /* the id's new epoch (or the next producer id block) is stored before the producer may use it */
    req_respond_after_commit(s, r, resp);
}
