/*
 * DeleteTopics (key 20), v0–6: by name (v0–5 topic_names, v6 topics) or by
 * topic id (v6). The topic's batches, configs and partitions go with it.
 */
#include <string.h>

#include "api.h"
#include "txn/txn.h"
#include "log.h"
#include "topic/topic.h"

void api_delete_topics(srv *s, req *r) {
    kp_delete_topics_request *q = r->body;
    kp_delete_topics_response *resp = req_resp(r);
    int16_t ver = r->hdr.api_version;
    int32_t n = ver >= 6 ? q->topics.n : q->topic_names.n;
    int32_t throttle = 0;
    REQ_ARR(r, resp->responses, n < 0 ? 0 : n);
    for (int32_t i = 0; i < n; i++) {
        kp_delete_topics_deletable_topic_result *res = &resp->responses.v[i];
        kp_defaults(&kp_delete_topics_deletable_topic_result_schema, ver, res);
        kp_str name = ver >= 6 ? q->topics.v[i].name : q->topic_names.v[i];
        topic *t;
        if (ver >= 6 && name.len < 0)
            t = topic_find_uuid(s, q->topics.v[i].topic_id.b);
        else
            t = name.len > 0 ? topic_find(s, name.p, (size_t)name.len) : NULL;
        res->name = name;
        if (ver >= 6) res->topic_id = q->topics.v[i].topic_id;
        /* by name when the request names it; by the topic's name when it gave only an existing id */
        int16_t denied = api_authz(s, r, IAM_RES_TOPIC, name.len >= 0 || !t ? name : kp_str_c(t->name));
        if (denied) {
            res->error_code = denied;
            continue;
        }
        if (!t) {
            int16_t code = (ver >= 6 && name.len < 0) ? KERR_UNKNOWN_TOPIC_ID : KERR_UNKNOWN_TOPIC_OR_PARTITION;
            res->error_code = code;
            res->error_message = kp_str_c("This server does not host this topic.");
            req_log_refusal(r, code, "topic '%.*s' does not exist", name.len > 0 ? name.len : 0, name.p);
            continue;
        }
        int16_t code = api_mutations(s, r, t->name, t->nparts, ver >= 5, &throttle);
        if (code) {
            res->error_code = code;
            res->error_message = kp_str_c("The throttling quota has been exceeded."); /* Kafka's text */
            continue;
        }
        res->name = req_strf(r, "%s", t->name);
        memcpy(res->topic_id.b, t->uuid, 16);
        const char *tname = res->name.p; /* NUL-terminated copy: t is about to go */
        txn_forget_topic(s, t->id, tname);
        if (topic_delete(s, t) != 0) {
            res->error_code = KERR_KAFKA_STORAGE_ERROR;
            req_log_refusal(r, KERR_KAFKA_STORAGE_ERROR, "deleting topic %s failed: %s", tname, stor_errmsg(s->st));
            continue;
        }
        log_info("deleted topic %s", tname);
    }
    api_mutations_done(r, ver >= 5, throttle, &resp->throttle_time_ms);
    req_respond(r, resp);
}
