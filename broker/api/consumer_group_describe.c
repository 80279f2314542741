/*
 * ConsumerGroupDescribe (key 69), v0–1: a consumer group (KIP-848) as the coordinator holds it:
 * state, group and assignment epochs, the assignor, and each member with its epoch, subscription,
 * current and target assignment and (v1, KIP-1099) its type, 1 for the consumer protocol. A group
 * that does not exist, or is a classic group, gets GROUP_ID_NOT_FOUND as in Kafka.
 */
#include <string.h>

#include "api.h"
#include "group/consumer.h"
#include "topic/topic.h"

static void fill_assignment(req *r, srv *s, const cg_parts *p, kp_cgd_assignment *out) {
    REQ_ARR(r, out->topic_partitions, p->n);
    int k = 0;
    for (int i = 0; i < p->n; i++) {
        topic *t = topic_find(s, p->t[i].topic, strlen(p->t[i].topic));
        kp_cgd_topic_partitions *e = &out->topic_partitions.v[k++];
        memset(e, 0, sizeof *e);
        if (t) memcpy(e->topic_id.b, t->uuid, 16);
        e->topic_name = kp_str_c(p->t[i].topic);
        REQ_ARR(r, e->partitions, p->t[i].n);
        memcpy(e->partitions.v, p->t[i].p, sizeof(int32_t) * (size_t)p->t[i].n);
    }
}

void api_consumer_group_describe(srv *s, req *r) {
    kp_consumer_group_describe_request *q = r->body;
    kp_consumer_group_describe_response *resp = req_resp(r);
    REQ_ARR(r, resp->groups, q->group_ids.n);
    for (int32_t i = 0; i < q->group_ids.n; i++) {
        kp_str id = q->group_ids.v[i];
        kp_cgd_group *out = &resp->groups.v[i];
        kp_defaults(&kp_cgd_group_schema, r->hdr.api_version, out);
        out->group_id = id;
        out->group_state = kp_str_c("");
        out->assignor_name = kp_str_c("");
        if (q->include_authorized_operations)
            out->authorized_operations =
                authz_operations(s, r->c, IAM_RES_GROUP, id.p ? id.p : "", id.len > 0 ? (size_t)id.len : 0);
        out->error_code = api_group(s, r, id);
        if (out->error_code) continue;
        group *g = grp_find(s, id.p ? id.p : "", id.len > 0 ? (size_t)id.len : 0);
        if (!g || !g->cg) {
            out->error_code = KERR_GROUP_ID_NOT_FOUND;
            out->error_message = kp_str_c(g ? "Group is not a consumer group." : "Group not found.");
            req_log_refusal(r, out->error_code, "group %.*s: %s", id.len > 0 ? id.len : 0, id.p,
                            g ? "a classic group, not a consumer group" : "no such group");
            continue;
        }
        const cgroup *cg = g->cg;
        out->group_state = kp_str_c(cg_state_name(g));
        out->group_epoch = cg->group_epoch;
        out->assignment_epoch = cg->assignment_epoch;
        out->assignor_name = kp_str_c(cg->assignor ? cg->assignor : "uniform");
        REQ_ARR(r, out->members, cg->n);
        for (int k = 0; k < cg->n; k++) {
            const cmember *m = cg->m[k];
            kp_cgd_member *e = &out->members.v[k];
            kp_defaults(&kp_cgd_member_schema, r->hdr.api_version, e);
            e->member_id = kp_str_c(m->id);
            e->instance_id = m->instance_id ? kp_str_c(m->instance_id) : KP_STR_NULL;
            e->rack_id = m->rack_id ? kp_str_c(m->rack_id) : KP_STR_NULL;
            e->member_epoch = m->epoch;
            e->client_id = kp_str_c(m->client_id ? m->client_id : "");
            e->client_host = kp_str_c(m->client_host ? m->client_host : "");
            /* what the member sent, as Kafka's ConsumerGroupMember.asConsumerGroupDescribeMember */
            REQ_ARR(r, e->subscribed_topic_names, m->nnames);
            for (int t = 0; t < m->nnames; t++) e->subscribed_topic_names.v[t] = kp_str_c(m->names[t]);
            if (m->regex) e->subscribed_topic_regex = kp_str_c(m->regex);
            fill_assignment(r, s, &m->assigned, &e->assignment);
            fill_assignment(r, s, &m->target, &e->target_assignment);
            e->member_type = m->classic ? 0 : 1; /* KIP-1099: 0 the classic protocol (a migrating group), 1 consumer */
        }
    }
    req_respond(r, resp);
}
