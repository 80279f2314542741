/*
 * DeleteRecords (key 21), v0–2, in the kafka profile only: MSK Serverless leaves it out of
 * ApiVersions and drops the request (docs/msk-behaviors.md#apis-not-served), but test suites written
 * against Apache Kafka trim topics with it. The log start offset moves through the same path
 * retention takes (topic/log_start.c), so fetches, ListOffsets and a restart all see it; the
 * answer waits for the commit that stores it, as Kafka answers once the low watermark moved.
 * IAM: kafka-cluster:DeleteTopic on the topic (MSK's action for Kafka's DELETE TOPIC, the ACL
 * DeleteRecords needs; MSK has no action of its own for it). Gap: timeout_ms is not used, the
 * answer never waits on replicas.
 */
#include "api.h"
#include "log.h"
#include "net/net.h"
#include "topic/topic.h"

#define INVALID_LOW_WATERMARK (-1) /* what Kafka answers with an error */

static int16_t delete_partition(srv *s, req *r, topic *t, const kp_delete_records_partition *qp, int64_t *low,
                                bool *moved) {
    partition *p;
    int16_t code = api_partition_check(s, r, t, qp->partition_index, &p);
    if (code) return code;
    if (topic_is_internal(t->name, strlen(t->name))) { /* as Kafka's ReplicaManager.deleteRecordsOnLocalLog */
        *low = INVALID_LOW_WATERMARK;
        req_log_refusal(r, KERR_INVALID_TOPIC_EXCEPTION, "Cannot delete records of internal topic %s", t->name);
        return KERR_INVALID_TOPIC_EXCEPTION;
    }
    int64_t before = p->log_start;
    char why[256];
    code = topic_delete_records(s, p, qp->offset, low, why, sizeof why);
    if (code) {
        *low = INVALID_LOW_WATERMARK;
        req_log_refusal(r, code, "%s", why);
        return code;
    }
    if (*low != before) {
        *moved = true;
        log_info("conn=%llu client=%s DeleteRecords: %s-%d log start offset %lld -> %lld (asked %lld)",
                 (unsigned long long)r->c->id, conn_client_id(r->c), t->name, p->index, (long long)before,
                 (long long)*low, (long long)qp->offset);
    }
    return 0;
}

static void delete_topic(srv *s, req *r, const kp_delete_records_topic *qt, kp_delete_records_topic_result *res,
                         bool *moved) {
    int16_t ver = r->hdr.api_version;
    kp_defaults(&kp_delete_records_topic_result_schema, ver, res);
    res->name = qt->name;
    int16_t topic_code; /* not allowed to see it, or no such topic */
    topic *t = api_topic(s, r, qt->name, &topic_code);
    REQ_ARR(r, res->partitions, qt->partitions.n < 0 ? 0 : qt->partitions.n);
    for (int32_t j = 0; j < res->partitions.n; j++) {
        kp_delete_records_partition_result *rp = &res->partitions.v[j];
        kp_defaults(&kp_delete_records_partition_result_schema, ver, rp);
        rp->partition_index = qt->partitions.v[j].partition_index;
        rp->low_watermark = INVALID_LOW_WATERMARK;
        rp->error_code = t ? delete_partition(s, r, t, &qt->partitions.v[j], &rp->low_watermark, moved) : topic_code;
    }
}

void api_delete_records(srv *s, req *r) {
    kp_delete_records_request *q = r->body;
    kp_delete_records_response *resp = req_resp(r);
    bool moved = false;
    REQ_ARR(r, resp->topics, q->topics.n < 0 ? 0 : q->topics.n);
    for (int32_t i = 0; i < resp->topics.n; i++) delete_topic(s, r, &q->topics.v[i], &resp->topics.v[i], &moved);
    /* a moved log start is answered once stored: kill -9 after the answer must not bring the records back */
    if (moved)
        req_respond_after_commit(s, r, resp);
    else
        req_respond(r, resp);
}
