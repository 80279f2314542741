/*
 * LeaveGroup (key 13), v0–5: v0–2 one member with the error at top level;
 * v3+ a batch with per-member errors, including administrative removal of a
 * static member by instance id with an empty member id.
 */
#include "api.h"
#include "group/group.h"

void api_leave_group(srv *s, req *r) {
    kp_leave_group_request *q = r->body;
    kp_leave_group_response *resp = req_resp(r);
    int16_t ver = r->hdr.api_version;
    int16_t top = 0;
    group *g = NULL;
    if (q->group_id.len <= 0) {
        top = KERR_INVALID_GROUP_ID;
        req_log_refusal(r, top, "empty group id");
    } else if ((top = api_group(s, r, q->group_id)) == 0) {
        g = grp_find(s, q->group_id.p, (size_t)q->group_id.len);
        if (g && g->state == GS_DEAD) {
            top = KERR_COORDINATOR_NOT_AVAILABLE;
            req_log_refusal(r, top, "group %s is being deleted", g->id);
        }
    }
    if (ver < 3) {
        if (!top) {
            if (!g) {
                top = KERR_UNKNOWN_MEMBER_ID;
                req_log_refusal(r, top, "group %.*s does not exist", q->group_id.len, q->group_id.p);
            } else {
                top = grp_leave(s, r, g, q->member_id, KP_STR_NULL);
            }
        }
        resp->error_code = top;
        req_respond(r, resp);
        return;
    }
    resp->error_code = top;
    REQ_ARR(r, resp->members, top ? 0 : q->members.n);
    for (int32_t i = 0; !top && i < q->members.n; i++) {
        kp_leave_group_member_identity *mi = &q->members.v[i];
        kp_leave_group_member_response *mr = &resp->members.v[i];
        mr->member_id = mi->member_id;
        mr->group_instance_id = mi->group_instance_id;
        if (!g) {
            mr->error_code = KERR_UNKNOWN_MEMBER_ID;
            req_log_refusal(r, KERR_UNKNOWN_MEMBER_ID, "group %.*s does not exist", q->group_id.len, q->group_id.p);
        } else {
            mr->error_code = grp_leave(s, r, g, mi->member_id, mi->group_instance_id);
        }
    }
    req_respond(r, resp);
}
