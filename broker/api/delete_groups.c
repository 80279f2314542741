/*
 * DeleteGroups (key 42), v0–2: an Empty group goes with all its offsets;
 * a group with members gets NON_EMPTY_GROUP, an unknown one
 * GROUP_ID_NOT_FOUND.
 */
#include "api.h"
#include "group/group.h"
#include "txn/txn.h"
#include "log.h"

void api_delete_groups(srv *s, req *r) {
    kp_delete_groups_request *q = r->body;
    kp_delete_groups_response *resp = req_resp(r);
    REQ_ARR(r, resp->results, q->groups_names.n);
    for (int32_t i = 0; i < q->groups_names.n; i++) {
        kp_str id = q->groups_names.v[i];
        kp_delete_groups_deletable_group_result *out = &resp->results.v[i];
        out->group_id = id;
        out->error_code = api_group(s, r, id);
        if (out->error_code) continue;
        group *g = grp_find(s, id.p ? id.p : "", id.len > 0 ? (size_t)id.len : 0);
        if (!g || g->state == GS_DEAD) {
            out->error_code = KERR_GROUP_ID_NOT_FOUND;
            req_log_refusal(r, out->error_code, "group %.*s does not exist", id.len > 0 ? id.len : 0, id.p);
        } else if (g->state != GS_EMPTY || grp_member_count(g) > 0) {
            out->error_code = KERR_NON_EMPTY_GROUP;
            req_log_refusal(r, out->error_code, "group %s is %s with %d members", g->id, grp_state_label(g),
                            grp_member_count(g));
        } else {
            log_info("group %s deleted with %d committed offsets", g->id, g->noffsets);
            txn_forget_group(s, g->id);
            if (grp_delete(s, g) != 0) out->error_code = KERR_UNKNOWN_SERVER_ERROR;
        }
    }
    req_respond_after_commit(s, r, resp);
}
