/*
 * Metadata (key 3), v0–12. Every synthetic broker is listed with the
 * advertised host. A partition's replicas are its assignment (topic/assign.c:
 * a client's, else the default placement spread across brokers), its ISR
 * those up, its leader the first of them up; with none up it is offline:
 * LEADER_NOT_AVAILABLE and leader -1, as Kafka's KRaftMetadataCache answers. Topic ids from
 * v10 (lookup by id when the id is not zero or the name is null). Unknown topics are created only
 * when auto.create.topics.enable is on and the request allows it (v4+), which
 * MSK Serverless never does. IAM: a named topic the principal may not
 * DescribeTopic gets TOPIC_AUTHORIZATION_FAILED (and is not said to exist);
 * "all topics" lists only those it may describe; authorized operations are
 * computed from its policies. Gaps: rack is always null.
 */
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "net/net.h"
#include "log.h"
#include "topic/topic.h"

static void describe_topic(srv *s, req *r, const kp_metadata_request *q, topic *t, kp_metadata_response_topic *out) {
    out->error_code = 0;
    out->name = kp_str_c(t->name);
    memcpy(out->topic_id.b, t->uuid, 16);
    out->is_internal = topic_is_internal(t->name, strlen(t->name));
    if (q->include_topic_authorized_operations)
        out->topic_authorized_operations = authz_operations(s, r->c, IAM_RES_TOPIC, t->name, strlen(t->name));
    REQ_ARR(r, out->partitions, t->nparts);
    for (int32_t i = 0; i < t->nparts; i++) {
        partition *p = &t->parts[i];
        kp_metadata_response_partition *mp = &out->partitions.v[i];
        kp_defaults(&kp_metadata_response_partition_schema, r->hdr.api_version, mp);
        mp->partition_index = i;
        mp->leader_id = p->leader == TOPIC_NO_LEADER ? -1 : s->nodes[p->leader].id;
        if (p->leader == TOPIC_NO_LEADER) mp->error_code = KERR_LEADER_NOT_AVAILABLE;
        mp->leader_epoch = p->leader_epoch;
        int32_t replicas[TOPIC_MAX_REPLICAS];
        int32_t rf = topic_replicas(s, t, i, replicas);
        REQ_ARR(r, mp->replica_nodes, rf);
        REQ_ARR(r, mp->isr_nodes, rf);
        REQ_ARR(r, mp->offline_replicas, rf);
        mp->isr_nodes.n = mp->offline_replicas.n = 0;
        for (int32_t k = 0; k < rf; k++) {
            const node *n = &s->nodes[replicas[k]];
            mp->replica_nodes.v[k] = n->id;
            /* a broker taken down (admin API) is out of sync and offline, as Kafka reports it */
            if (n->down)
                mp->offline_replicas.v[mp->offline_replicas.n++] = n->id;
            else
                mp->isr_nodes.v[mp->isr_nodes.n++] = n->id;
        }
    }
}

void api_metadata(srv *s, req *r) {
    kp_metadata_request *q = r->body;
    kp_metadata_response *resp = req_resp(r);
    int16_t ver = r->hdr.api_version;

    REQ_ARR(r, resp->brokers, s->nnodes);
    resp->brokers.n = 0;
    for (int i = 0; i < s->nnodes; i++)
        if (!s->nodes[i].down) /* a broker down is not registered, so Kafka does not list it */
            resp->brokers.v[resp->brokers.n++] = (kp_metadata_response_broker){
                s->nodes[i].id, kp_str_c(lsn_host(s, r->c->listener)), lsn_port(s, i, r->c->listener),
                KP_STR_NULL};
    resp->cluster_id = kp_str_c(s->cfg->cluster_id);
    /* admin clients send CreateTopics and friends to this node: MSK Serverless names one (controller.visibility) */
    resp->controller_id = s->cfg->controller_visibility == CONTROLLER_NONE ? -1 : s->nodes[srv_controller(s)].id;
    if (q->include_cluster_authorized_operations)
        resp->cluster_authorized_operations = authz_operations(s, r->c, IAM_RES_CLUSTER, "", 0);

    /* v0: an empty list means all topics; v1+: null means all, empty means none */
    bool all = q->topics.n < 0 || (ver == 0 && q->topics.n == 0);
    if (all) {
        REQ_ARR(r, resp->topics, s->ntopics);
        int i = 0;
        for (topic *t = s->topics; t; t = t->next) {
            if (!authz_allowed(s, r->c, IAM_DESCRIBE_TOPIC, t->name, strlen(t->name))) continue; /* as Kafka filters */
            kp_defaults(&kp_metadata_response_topic_schema, ver, &resp->topics.v[i]);
            describe_topic(s, r, q, t, &resp->topics.v[i++]);
        }
        resp->topics.n = i;
        req_respond(r, resp);
        return;
    }
    bool may_create = s->cfg->auto_create_topics_enable && (ver < 4 || q->allow_auto_topic_creation);
    REQ_ARR(r, resp->topics, q->topics.n);
    for (int32_t i = 0; i < q->topics.n; i++) {
        kp_metadata_request_topic *qt = &q->topics.v[i];
        kp_metadata_response_topic *out = &resp->topics.v[i];
        kp_defaults(&kp_metadata_response_topic_schema, ver, out);
        out->name = qt->name;
        out->topic_id = qt->topic_id;
        topic *t;
        /* A non-zero topic id wins over the name, as in Kafka's KafkaApis.handleTopicMetadataRequest
         * ("Check if topicId is presented firstly"): the Java client's MetadataRequest.Builder.forTopicIds
         * leaves each name at its default "", not null (a Java 4.x consumer subscribed with a
         * SubscriptionPattern asks so for the topics of its assignment). */
        static const uint8_t zero_id[16];
        if (qt->name.len < 0 || memcmp(qt->topic_id.b, zero_id, sizeof zero_id) != 0) {
            t = topic_find_uuid(s, qt->topic_id.b);
            if (!t) {
                if (ver >= 12) out->name = KP_STR_NULL; /* Kafka answers an unknown id without a name */
                out->error_code = KERR_UNKNOWN_TOPIC_ID;
                req_log_refusal(r, KERR_UNKNOWN_TOPIC_ID, "no topic has the requested topic id");
                continue;
            }
            if ((out->error_code = api_authz(s, r, IAM_RES_TOPIC, kp_str_c(t->name)))) continue;
        } else {
            if ((out->error_code = api_authz(s, r, IAM_RES_TOPIC, qt->name))) continue;
            t = topic_find(s, qt->name.p, (size_t)qt->name.len);
        }
        if (!t) {
            const char *bad = topic_name_invalid(qt->name.p, (size_t)qt->name.len);
            if (bad) {
                out->error_code = KERR_INVALID_TOPIC_EXCEPTION;
                req_log_refusal(r, KERR_INVALID_TOPIC_EXCEPTION, "topic name '%.*s' is invalid: %s", qt->name.len,
                                qt->name.p, bad);
                continue;
            }
            if (!may_create) {
                out->error_code = KERR_UNKNOWN_TOPIC_OR_PARTITION;
                req_log_refusal(r, KERR_UNKNOWN_TOPIC_OR_PARTITION, "topic '%.*s' does not exist%s", qt->name.len,
                                qt->name.p,
                                s->cfg->auto_create_topics_enable       ? ""
                                : s->cfg->profile == PROFILE_SERVERLESS  ? " (auto.create.topics.enable=false, as on MSK Serverless)"
                                : s->cfg->profile == PROFILE_PROVISIONED ? " (auto.create.topics.enable=false, MSK's default configuration)"
                                                                         : " (auto.create.topics.enable=false)");
                continue;
            }
            if (!authz_allowed(s, r->c, IAM_CREATE_TOPIC, qt->name.p, (size_t)qt->name.len)) {
                out->error_code = KERR_TOPIC_AUTHORIZATION_FAILED;
                req_log_refusal(r, out->error_code, "topic '%.*s' does not exist, and auto-creating it needs "
                                "kafka-cluster:CreateTopic, which the policies do not allow", qt->name.len, qt->name.p);
                continue;
            }
            char *name = kp_str_dup(qt->name);
            const char *why = NULL;
            t = topic_create(s, name, (int32_t)s->cfg->num_partitions, 0, NULL, 0, &why);
            free(name);
            if (!t) {
                out->error_code = KERR_UNKNOWN_SERVER_ERROR;
                req_log_refusal(r, KERR_UNKNOWN_SERVER_ERROR, "auto-creating topic '%.*s' failed: %s", qt->name.len,
                                qt->name.p, why);
                continue;
            }
            log_info("auto-created topic %s with %d partition%s", t->name, t->nparts, PLURAL_S(t->nparts));
        }
        describe_topic(s, r, q, t, out);
    }
    req_respond(r, resp);
}
