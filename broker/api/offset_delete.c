/*
 * OffsetDelete (key 47), v0: removes committed offsets. In an Empty group
 * every requested partition goes; in a consumer group with members, topics
 * it subscribes to get GROUP_SUBSCRIBED_TO_TOPIC (subscriptions read the
 * lenient way, as the broker does: unreadable means subscribed); other
 * groups with members get NON_EMPTY_GROUP.
 */
#include <string.h>

#include "api.h"
#include "group/group.h"
#include "kp_consumer.h"
#include "topic/topic.h"
#include "txn/txn.h"

static bool subscribed(req *r, group *g, kp_str topic) {
    for (member *m = g->members; m; m = m->next)
        for (int i = 0; i < m->nprotocols; i++) {
            if (!g->protocol_name || strcmp(m->protocols[i].name, g->protocol_name) != 0) continue;
            kp_subscription sub;
            kp_consumer_error e;
            if (!kp_subscription_decode(m->protocols[i].meta, m->protocols[i].len, KP_CONSUMER_LENIENT, &sub, &r->arena,
                                        &e) ||
                sub.ntopics < 0)
                return true;
            for (int32_t k = 0; k < sub.ntopics; k++)
                if (sub.topics[k].len == topic.len && memcmp(sub.topics[k].p, topic.p, (size_t)topic.len) == 0)
                    return true;
        }
    return false;
}

void api_offset_delete(srv *s, req *r) {
    kp_offset_delete_request *q = r->body;
    kp_offset_delete_response *resp = req_resp(r);
    resp->topics.n = 0;
    resp->error_code = api_group(s, r, q->group_id);
    group *g = resp->error_code ? NULL
                                : grp_find(s, q->group_id.p ? q->group_id.p : "",
                                           q->group_id.len > 0 ? (size_t)q->group_id.len : 0);
    if (!resp->error_code && !g) {
        resp->error_code = KERR_GROUP_ID_NOT_FOUND;
        req_log_refusal(r, resp->error_code, "group %.*s does not exist", q->group_id.len > 0 ? q->group_id.len : 0,
                        q->group_id.p);
    }
    bool consumer = g && g->protocol_type && strcmp(g->protocol_type, "consumer") == 0;
    if (!resp->error_code && g->state != GS_EMPTY && !consumer) {
        resp->error_code = KERR_NON_EMPTY_GROUP;
        req_log_refusal(r, resp->error_code, "group %s has members and is not a consumer group", g->id);
    }
    if (resp->error_code) {
        req_respond(r, resp);
        return;
    }
    REQ_ARR(r, resp->topics, q->topics.n);
    for (int32_t i = 0; i < q->topics.n; i++) {
        kp_offset_delete_request_topic *qt = &q->topics.v[i];
        kp_offset_delete_response_topic *rt = &resp->topics.v[i];
        rt->name = qt->name;
        int16_t denied = api_authz(s, r, IAM_RES_TOPIC, qt->name);
        topic *t = qt->name.len > 0 ? topic_find(s, qt->name.p, (size_t)qt->name.len) : NULL;
        bool busy = g->state != GS_EMPTY && subscribed(r, g, qt->name);
        REQ_ARR(r, rt->partitions, qt->partitions.n);
        for (int32_t j = 0; j < qt->partitions.n; j++) {
            int32_t idx = qt->partitions.v[j].partition_index;
            kp_offset_delete_response_partition *rp = &rt->partitions.v[j];
            rp->partition_index = idx;
            if (denied) {
                rp->error_code = denied;
            } else if (!t || idx < 0 || idx >= t->nparts) {
                rp->error_code = KERR_UNKNOWN_TOPIC_OR_PARTITION;
            } else if (busy) {
                rp->error_code = KERR_GROUP_SUBSCRIBED_TO_TOPIC;
                req_log_refusal(r, rp->error_code, "group %s still subscribes to %s", g->id, t->name);
            } else {
                for (int k = 0; k < g->noffsets; k++)
                    if (g->offsets[k].partition == idx && strcmp(g->offsets[k].topic, t->name) == 0) {
                        grp_offset_remove(s, g, (size_t)k);
                        break;
                    }
                txn_forget_offset(s, g->id, t->name, idx);
                rp->error_code = 0;
            }
        }
    }
    r->commit_failed = api_offsets_commit_failed;
    req_respond_after_commit(s, r, resp);
}
