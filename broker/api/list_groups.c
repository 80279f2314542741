/*
 * ListGroups (key 16), v0–5: the groups this node coordinates (admin clients
 * ask every broker), with state (v4+) and type "classic" or "consumer" (v5+, KIP-848) filters.
 * Offsets-only groups are listed with protocol type "". IAM: only the groups
 * the principal may DescribeGroup are listed, as Kafka filters by DESCRIBE.
 */
#include <string.h>
#include <strings.h>

#include "api.h"
#include "group/group.h"
#include "net/net.h"

static bool matches(const kp_arr *filter, const char *value) {
    const kp_str *v = filter->v;
    if (filter->n <= 0) return true;
    for (int32_t i = 0; i < filter->n; i++) {
        kp_str f = v[i];
        /* the 4.x coordinator compares case-insensitively */
        if (f.len >= 0 && (size_t)f.len == strlen(value) && strncasecmp(f.p, value, (size_t)f.len) == 0) return true;
    }
    return false;
}

void api_list_groups(srv *s, req *r) {
    kp_list_groups_request *q = r->body;
    kp_list_groups_response *resp = req_resp(r);
    int n = 0;
    for (group *g = s->groups; g; g = g->next) n++;
    REQ_ARR(r, resp->groups, n);
    int k = 0;
    for (group *g = s->groups; g; g = g->next) {
        if (g->node != r->c->node || g->state == GS_DEAD) continue;
        if (!matches(&q->states_filter.a, grp_state_label(g))) continue;
        if (!matches(&q->types_filter.a, grp_type(g))) continue;
        if (!authz_allowed(s, r->c, IAM_DESCRIBE_GROUP, g->id, strlen(g->id))) continue;
        kp_list_groups_listed_group *e = &resp->groups.v[k++];
        e->group_id = kp_str_c(g->id);
        /* a consumer group's protocol type is "consumer" (ConsumerGroup.protocolType) */
        e->protocol_type = kp_str_c(g->cg ? "consumer" : g->protocol_type ? g->protocol_type : "");
        e->group_state = kp_str_c(grp_state_label(g));
        e->group_type = kp_str_c(grp_type(g));
    }
    resp->groups.n = k;
    req_respond(r, resp);
}
