/*
 * ConsumerGroupHeartbeat (key 68), v0–1: KIP-848's one call of a consumer group member (join,
 * heartbeat, reconcile, leave). The coordinator (group/consumer.c) keeps the state; here the
 * request's topic ids become names and the assignment's names ids again, and IAM is checked as
 * Kafka's KafkaApis.handleConsumerGroupHeartbeat does: the group, then every subscribed topic
 * (TOPIC_AUTHORIZATION_FAILED when one may not be described). Answered after the storage commit,
 * so an epoch a member was told survives a kill -9. A regular expression (v1) matches only the
 * topics the principal may describe, as Kafka 4.x's coordinator filters a regex's topics with
 * the authorizer; internal topics are matched like any other, as there.
 */
#include <string.h>

#include "api.h"
#include "group/consumer.h"
#include "iam/authz.h"
#include "topic/topic.h"

typedef struct each_ctx {
    srv *s;
    req *r;
} each_ctx;

static int32_t partitions_of(void *ctx, const char *name, uint8_t uuid[16]) {
    topic *t = topic_find(((each_ctx *)ctx)->s, name, strlen(name));
    if (!t) return -1;
    memcpy(uuid, t->uuid, 16);
    return t->nparts;
}

/* The topics a subscription's regular expression is matched against: every topic the member's principal may
 * describe. Internal topics too: Kafka's GroupMetadataManager.refreshRegularExpressions matches every name of the
 * metadata image and filters only by DESCRIBE, so a pattern that matches __consumer_offsets as a whole name gets its
 * partitions (franz-go's Test848RegexBrokerResolves relies on it against apache/kafka:latest). */
static void each_topic(void *ctx, void (*fn)(void *arg, const char *name), void *arg) {
    each_ctx *e = ctx;
    for (topic *t = e->s->topics; t; t = t->next) {
        size_t n = strlen(t->name);
        if (!authz_allowed(e->s, e->r->c, IAM_DESCRIBE_TOPIC, t->name, n)) continue;
        fn(arg, t->name);
    }
}

void api_consumer_group_heartbeat(srv *s, req *r) {
    kp_consumer_group_heartbeat_request *q = r->body;
    kp_consumer_group_heartbeat_response *resp = req_resp(r);
    resp->error_code = api_authz(s, r, IAM_RES_GROUP, q->group_id);
    for (int32_t i = 0; !resp->error_code && i < q->subscribed_topic_names.n; i++)
        if (api_authz(s, r, IAM_RES_TOPIC, q->subscribed_topic_names.v[i])) resp->error_code = KERR_TOPIC_AUTHORIZATION_FAILED;
    if (resp->error_code) {
        resp->member_epoch = q->member_epoch;
        req_respond(r, resp);
        return;
    }
    /* owned partitions by name; ids of topics that are gone are dropped */
    cg_parts owned = {0};
    for (int32_t i = 0; i < q->topic_partitions.n; i++) {
        topic *t = topic_find_uuid(s, q->topic_partitions.v[i].topic_id.b);
        for (int32_t k = 0; t && k < q->topic_partitions.v[i].partitions.n; k++)
            cg_parts_add(&owned, t->name, q->topic_partitions.v[i].partitions.v[k]);
    }
    each_ctx ec = {s, r};
    /* +1: a generation of 0 is a regex never resolved */
    cg_topics topics = {partitions_of, &ec, each_topic, s->topics_generation + 1};
    const cg_parts *a = NULL;
    cg_heartbeat(s, r, q, q->topic_partitions.n >= 0 ? &owned : NULL, &topics, resp, &a);
    cg_parts_free(&owned);
    if (a) {
        resp->assignment.present = true;
        REQ_ARR(r, resp->assignment.topic_partitions, a->n);
        int k = 0;
        for (int i = 0; i < a->n; i++) {
            topic *t = topic_find(s, a->t[i].topic, strlen(a->t[i].topic));
            if (!t) continue;
            kp_cgh_topic_partitions *e = &resp->assignment.topic_partitions.v[k++];
            memcpy(e->topic_id.b, t->uuid, 16);
            REQ_ARR(r, e->partitions, a->t[i].n);
            memcpy(e->partitions.v, a->t[i].p, sizeof(int32_t) * (size_t)a->t[i].n);
        }
        resp->assignment.topic_partitions.n = k;
    }
    req_respond_after_commit(s, r, resp);
}
