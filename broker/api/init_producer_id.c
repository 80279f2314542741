/*
 * InitProducerId (key 22), v0–5, for idempotent producers: a fresh producer
 * id with epoch 0, or (v3+, KIP-360) the same id with the next epoch when
 * the client passes its current id and epoch. Ids continue past every id
 * seen in the stored log, so a restart never reissues one in use. IAM, as on
 * MSK: an idempotent producer needs kafka-cluster:WriteDataIdempotently on the
 * cluster (and WriteData on some topic), else CLUSTER_AUTHORIZATION_FAILED —
 * no KIP-679 relaxation unless iam.authorization.idempotent.relaxed; a
 * transactional id needs AlterTransactionalId, else
 * TRANSACTIONAL_ID_AUTHORIZATION_FAILED. Gap: authorized transactional ids are
 * refused (no transaction coordinator yet).
 */
#include "api.h"

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
        resp->error_code = KERR_INVALID_REQUEST;
        req_log_refusal(r, KERR_INVALID_REQUEST,
                        "transactional.id '%.*s': transactions are not served by this mskmock version",
                        q->transactional_id.len, q->transactional_id.p);
    } else if (q->producer_id >= 0 && q->producer_epoch >= 0 && q->producer_epoch < INT16_MAX - 1) {
        resp->producer_id = q->producer_id;
        resp->producer_epoch = (int16_t)(q->producer_epoch + 1);
        if (q->producer_id >= s->next_producer_id) s->next_producer_id = q->producer_id + 1;
    } else {
        resp->producer_id = s->next_producer_id++;
        resp->producer_epoch = 0;
    }
    req_respond(r, resp);
}
