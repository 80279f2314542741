/*
 * FindCoordinator (key 10), v0–6: the synthetic broker that coordinates a
 * group, chosen by a hash of the group id (the same answer before and after
 * a restart). v4+ answers a batch of keys. IAM: a group key needs DescribeGroup
 * (else GROUP_AUTHORIZATION_FAILED), a transactional id DescribeTransactionalId
 * (else TRANSACTIONAL_ID_AUTHORIZATION_FAILED). Transactional ids are spread
 * across the brokers by the same hash as groups. Share-group keys (type 2) get
 * COORDINATOR_NOT_AVAILABLE.
 */
#include "api.h"
#include "group/group.h"
#include "net/net.h"
#include "topic/topic.h"

static int16_t lookup(srv *s, req *r, kp_str key, int8_t type, int *node) {
    if (type == 0 || type == 1) {
        int16_t denied = api_authz(s, r, type == 0 ? IAM_RES_GROUP : IAM_RES_TRANSACTIONAL_ID, key);
        if (denied) return denied;
    }
    if (type != 0 && type != 1) {
        req_log_refusal(r, KERR_COORDINATOR_NOT_AVAILABLE, "key type %d: only group and transaction coordinators "
                        "are served", type);
        return KERR_COORDINATOR_NOT_AVAILABLE;
    }
    /* Kafka creates its transaction log when the first transactional producer looks for a coordinator */
    if (type == 1) topic_internal_ensure(s, TOPIC_TXN_STATE);
    *node = grp_coordinator_for(s, key.p ? key.p : "", key.len > 0 ? (size_t)key.len : 0);
    return 0;
}

void api_find_coordinator(srv *s, req *r) {
    kp_find_coordinator_request *q = r->body;
    kp_find_coordinator_response *resp = req_resp(r);
    if (r->hdr.api_version >= 4) {
        REQ_ARR(r, resp->coordinators, q->coordinator_keys.n);
        for (int32_t i = 0; i < q->coordinator_keys.n; i++) {
            kp_find_coordinator_coordinator *c = &resp->coordinators.v[i];
            int node = 0;
            c->key = q->coordinator_keys.v[i];
            c->error_code = lookup(s, r, c->key, q->key_type, &node);
            c->node_id = c->error_code ? -1 : s->nodes[node].id;
            c->host = kp_str_c(c->error_code ? "" : lsn_host(s, r->c->listener));
            c->port = c->error_code ? -1 : lsn_port(s, node, r->c->listener);
            c->error_message = c->error_code ? kp_str_c(kp_err_name(c->error_code)) : KP_STR_NULL;
        }
    } else {
        int node = 0;
        resp->error_code = lookup(s, r, q->key, q->key_type, &node);
        resp->node_id = resp->error_code ? -1 : s->nodes[node].id;
        resp->host = kp_str_c(resp->error_code ? "" : lsn_host(s, r->c->listener));
        resp->port = resp->error_code ? -1 : lsn_port(s, node, r->c->listener);
        resp->error_message = resp->error_code ? kp_str_c(kp_err_name(resp->error_code)) : KP_STR_NULL;
    }
    req_respond(r, resp);
}
