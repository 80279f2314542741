/*
 * JoinGroup (key 11), v0–9. The group coordinator (group.c) does the work:
 * MEMBER_ID_REQUIRED from v4, static members from v5, the join phase with
 * its initial delay. Under group.consumer.protocol.validation=strict (MSK
 * Serverless) every "consumer" protocol's metadata must decode at its
 * declared version, else INVALID_REQUEST.
 */
#include "api.h"
#include "group/group.h"

void api_join_group(srv *s, req *r) {
    kp_join_group_request *q = r->body;
    int16_t code = api_authz(s, r, IAM_RES_GROUP, q->group_id);
    if (!code) {
        grp_join(s, r);
        return;
    }
    kp_join_group_response *resp = req_resp(r);
    resp->error_code = code;
    resp->generation_id = -1;
    resp->leader = resp->member_id = kp_str_c("");
    req_respond(r, resp);
}
