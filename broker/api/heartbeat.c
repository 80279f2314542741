/*
 * Heartbeat (key 12), v0–4: keeps a member's session; REBALANCE_IN_PROGRESS
 * during PreparingRebalance tells the member to rejoin.
 */
#include "api.h"
#include "group/group.h"

void api_heartbeat(srv *s, req *r) {
    kp_heartbeat_request *q = r->body;
    kp_heartbeat_response *resp = req_resp(r);
    resp->error_code = api_authz(s, r, IAM_RES_GROUP, q->group_id);
    if (!resp->error_code)
        resp->error_code = grp_heartbeat(s, r, q->group_id, q->generation_id, q->member_id, q->group_instance_id);
    req_respond(r, resp);
}
