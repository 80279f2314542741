/*
 * CreatePartitions (key 37), v0–3: grows a topic, with Kafka's KRaft
 * controller's rules and messages (ReplicationControlManager.createPartitions):
 * shrinking or keeping the count is INVALID_PARTITIONS; assignments, when
 * given, must number exactly the new partitions and each must pass the checks
 * CreateTopics makes (registered brokers, none twice, as many replicas as the
 * topic's partition 0, one of them up: INVALID_REPLICA_ASSIGNMENT otherwise,
 * topic/assign.c). They are kept, and each new partition's first replica up
 * leads it; without them new partitions get the default placement. Every
 * profile checks them alike: MSK Serverless documents nothing about them.
 */
#include "api.h"
#include "log.h"
#include "topic/topic.h"

/* The new partitions' assignments, checked; NULL in *out when the request gives none. */
static int16_t check_assignments(srv *s, req *r, const kp_create_partitions_topic *qt, topic *t, topic_assignment **out,
                                 kp_str *msg) {
    int32_t more = qt->count - t->nparts;
    *out = NULL;
    if (qt->assignments.n < 0) return 0; /* null: default placement */
    if (qt->assignments.n != more) {
        *msg = req_strf(r, "Attempted to add %d additional partition(s), but only %d assignment(s) were specified.", more,
                        qt->assignments.n);
        return KERR_INVALID_REPLICA_ASSIGNMENT;
    }
    int32_t first[TOPIC_MAX_REPLICAS];
    int32_t rf = topic_replicas(s, t, 0, first);
    topic_assignment *a = req_alloc(r, sizeof *a * (size_t)(more > 0 ? more : 1));
    for (int32_t k = 0; k < more; k++) {
        a[k] = (topic_assignment){t->nparts + k, qt->assignments.v[k].broker_ids.v, qt->assignments.v[k].broker_ids.n};
        char why[256];
        int16_t code = topic_assignment_check(s, &a[k], rf, why, sizeof why);
        if (code) {
            *msg = req_strf(r, "%s", why);
            return code;
        }
    }
    *out = a;
    return 0;
}

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
        topic_assignment *assign = NULL;
        if (code) {
            res->error_code = code;
            res->error_message = kp_str_c("The topic authorization is failed."); /* Kafka's text */
            continue;
        } else if (!t) {
            code = KERR_UNKNOWN_TOPIC_OR_PARTITION;
            res->error_message = req_strf(r, "The topic '%.*s' does not exist.", qt->name.len > 0 ? qt->name.len : 0, qt->name.p);
        } else if (qt->count == t->nparts) {
            code = KERR_INVALID_PARTITIONS;
            res->error_message = req_strf(r, "Topic already has %d partition(s).", t->nparts);
        } else if (qt->count < t->nparts) {
            code = KERR_INVALID_PARTITIONS;
            res->error_message = req_strf(r, "The topic %s currently has %d partition(s); %d would not be an increase.",
                                          t->name, t->nparts, qt->count);
        } else if (!(code = check_assignments(s, r, qt, t, &assign, &res->error_message))) {
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
        if (topic_add_partitions(s, t, qt->count) != 0 || (assign && topic_assign(s, t, old, assign, qt->count - old) != 0)) {
            res->error_code = KERR_KAFKA_STORAGE_ERROR;
            req_log_refusal(r, KERR_KAFKA_STORAGE_ERROR, "storing partitions failed: %s", stor_errmsg(s->st));
            continue;
        }
        log_info("topic %s: partitions %d -> %d%s", t->name, old, t->nparts, assign ? " (replicas as assigned)" : "");
    }
    api_mutations_done(r, refusable, throttle, &resp->throttle_time_ms);
    req_respond(r, resp);
}
