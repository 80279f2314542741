/*
 * SyncGroup (key 14), v0–5: followers wait for the leader's assignment;
 * v5 checks protocol type and name. Strict validation decodes the leader's
 * ConsumerProtocolAssignment bytes as MSK Serverless does.
 */
#include "api.h"
#include "group/group.h"

void api_sync_group(srv *s, req *r) {
    kp_sync_group_request *q = r->body;
    int16_t code = api_authz(s, r, IAM_RES_GROUP, q->group_id);
    if (!code) {
        grp_sync(s, r);
        return;
    }
    kp_sync_group_response *resp = req_resp(r);
    resp->error_code = code;
    resp->assignment = (kp_bytes){"", 0};
    req_respond(r, resp);
}
