/*
 * CreatePartitions (key 37), v0–3: grows a topic; new partitions get
 * leaders spread like the others. Shrinking or keeping the count gets
 * INVALID_PARTITIONS with Kafka's message. Manual assignments are accepted
 * but leaders are still chosen by mskmock.
 */
#include "api.h"
#include "log.h"
#include "topic/topic.h"

void api_create_partitions(srv *s, req *r) {
    kp_create_partitions_request *q = r->body;
    kp_create_partitions_response *resp = req_resp(r);
    bool refusable = r->hdr.api_version >= 3;
    int32_t throttle = 0;
    REQ_ARR(r, resp->results, q->topics.n);
    for (int32_t i = 0; i < q->topics.n; i++) {
        kp_create_partitions_topic *qt = &q->topics.v[i];
        kp_create_partitions_topic_result *res = &resp->results.v[i];
        kp_defaults(&kp_create_partitions_topic_result_schema, r->hdr.api_version, res);
        res->name = qt->name;
        int16_t code = api_authz(s, r, IAM_RES_TOPIC, qt->name);
        topic *t = !code && qt->name.len > 0 ? topic_find(s, qt->name.p, (size_t)qt->name.len) : NULL;
        if (code) {
            res->error_code = code;
            res->error_message = kp_str_c("The topic authorization is failed."); /* Kafka's text */
            continue;
        } else if (!t) {
            code = KERR_UNKNOWN_TOPIC_OR_PARTITION;
            res->error_message = req_strf(r, "The topic '%.*s' does not exist.", qt->name.len > 0 ? qt->name.len : 0, qt->name.p);
        } else if (qt->count < t->nparts) {
            code = KERR_INVALID_PARTITIONS;
            res->error_message = req_strf(r, "Topic currently has %d partitions, which is higher than the requested %d.",
                                          t->nparts, qt->count);
        } else if (qt->count == t->nparts) {
            code = KERR_INVALID_PARTITIONS;
            res->error_message = req_strf(r, "Topic already has %d partitions.", t->nparts);
        } else if (qt->assignments.n > 0 && qt->assignments.n != qt->count - t->nparts) {
            code = KERR_INVALID_REPLICA_ASSIGNMENT;
            res->error_message = req_strf(r, "Increasing the number of partitions by %d but %d assignments provided.",
                                          qt->count - t->nparts, qt->assignments.n);
        } else {
            char why[256];
            code = topic_partition_room(s, qt->count - t->nparts, why, sizeof why);
            if (code) res->error_message = req_strf(r, "%s", why);
        }
        if (code) {
            res->error_code = code;
            req_log_refusal(r, code, "%.*s", res->error_message.len, res->error_message.p);
            continue;
        }
        if (q->validate_only) continue;
        code = api_mutations(s, r, t->name, qt->count - t->nparts, refusable, &throttle);
        if (code) {
            res->error_code = code;
            res->error_message = kp_str_c("The throttling quota has been exceeded."); /* Kafka's text */
            continue;
        }
        int32_t old = t->nparts;
        if (topic_add_partitions(s, t, qt->count) != 0) {
            res->error_code = KERR_KAFKA_STORAGE_ERROR;
            req_log_refusal(r, KERR_KAFKA_STORAGE_ERROR, "storing partitions failed: %s", stor_errmsg(s->st));
            continue;
        }
        log_info("topic %s: partitions %d -> %d", t->name, old, t->nparts);
    }
    api_mutations_done(r, refusable, throttle, &resp->throttle_time_ms);
    req_respond(r, resp);
}
