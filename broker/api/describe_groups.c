/*
 * DescribeGroups (key 15), v0–5: state, protocol and members. As in Kafka,
 * only a Stable group shows its protocol and each member's metadata and
 * assignment; an unknown group is reported Dead with no error.
 */
#include <string.h>

#include "api.h"
#include "group/group.h"

static kp_bytes copy_bytes(req *r, const void *p, size_t len) {
    if (!len) return (kp_bytes){"", 0};
    void *d = req_alloc(r, len);
    memcpy(d, p, len);
    return (kp_bytes){d, (int32_t)len};
}

void api_describe_groups(srv *s, req *r) {
    kp_describe_groups_request *q = r->body;
    kp_describe_groups_response *resp = req_resp(r);
    REQ_ARR(r, resp->groups, q->groups.n);
    for (int32_t i = 0; i < q->groups.n; i++) {
        kp_str id = q->groups.v[i];
        kp_describe_groups_described_group *out = &resp->groups.v[i];
        kp_defaults(&kp_describe_groups_described_group_schema, r->hdr.api_version, out);
        out->group_id = id;
        out->protocol_type = kp_str_c("");
        out->protocol_data = kp_str_c("");
        out->members.n = 0;
        if (q->include_authorized_operations)
            out->authorized_operations =
                authz_operations(s, r->c, IAM_RES_GROUP, id.p ? id.p : "", id.len > 0 ? (size_t)id.len : 0);
        out->error_code = api_group(s, r, id);
        if (out->error_code) {
            out->group_state = kp_str_c("");
            continue;
        }
        group *g = grp_find(s, id.p ? id.p : "", id.len > 0 ? (size_t)id.len : 0);
        out->group_state = kp_str_c(grp_state_name(g ? g->state : GS_DEAD));
        if (!g) continue;
        if (g->cg) {
            /* Kafka's answer for a consumer group: its state, the consumer type, no members (ConsumerGroupDescribe has them) */
            out->group_state = kp_str_c(grp_state_label(g));
            out->protocol_type = kp_str_c("consumer");
            continue;
        }
        out->protocol_type = kp_str_c(g->protocol_type ? g->protocol_type : "");
        bool stable = g->state == GS_STABLE;
        if (stable && g->protocol_name) out->protocol_data = kp_str_c(g->protocol_name);
        REQ_ARR(r, out->members, g->nmembers);
        int k = 0;
        for (member *m = g->members; m; m = m->next) {
            kp_describe_groups_described_group_member *e = &out->members.v[k++];
            e->member_id = kp_str_c(m->id);
            e->group_instance_id = m->instance_id ? kp_str_c(m->instance_id) : KP_STR_NULL;
            e->client_id = kp_str_c(m->client_id);
            e->client_host = kp_str_c(m->client_host);
            e->member_metadata = (kp_bytes){"", 0};
            e->member_assignment = (kp_bytes){"", 0};
            if (!stable) continue;
            for (int p = 0; p < m->nprotocols; p++)
                if (g->protocol_name && strcmp(m->protocols[p].name, g->protocol_name) == 0)
                    e->member_metadata = copy_bytes(r, m->protocols[p].meta, m->protocols[p].len);
            e->member_assignment = copy_bytes(r, m->assignment, m->assignment_len);
        }
    }
    req_respond(r, resp);
}
