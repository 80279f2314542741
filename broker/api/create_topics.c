/*
 * CreateTopics (key 19), v0–7. Names are validated as Kafka does;
 * num_partitions / replication_factor -1 take the broker defaults; a
 * replication factor above the number of synthetic brokers is refused.
 * Manual replica assignments are checked as Kafka's KRaft controller checks
 * them (INVALID_REQUEST with num_partitions or replication_factor not -1,
 * INVALID_REPLICA_ASSIGNMENT for unknown or repeated brokers, uneven
 * lengths, partitions not 0..n-1: topic/assign.c), then kept: Metadata lists
 * them and the first replica up leads. Every profile checks them alike (MSK
 * Serverless documents nothing about manual assignments).
 * Configs pass the active topic policy (MSK Serverless: only its 7 settable
 * configs, INVALID_CONFIG with MSK's message otherwise). v5+ answers with
 * the resulting configs, v7 with the topic id. validate_only creates nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "log.h"
#include "topic/topic.h"
#include "topic/topic_config.h"

static void fill_configs(srv *s, req *r, topic *t, kp_create_topics_creatable_topic_result *res,
                         const kp_create_topics_creatable_topic *qt) {
    size_t n = tcfg_count();
    REQ_ARR(r, res->configs, n);
    for (size_t i = 0; i < n; i++) {
        const char *key = tcfg_name(i);
        kp_create_topics_creatable_topic_configs *c = &res->configs.v[i];
        bool dflt = true;
        const char *v = NULL;
        char buf[32];
        if (t) {
            v = topic_config_value(s, t, key, &dflt);
        } else { /* validate_only: what the topic would have */
            for (int32_t k = 0; k < qt->configs.n && dflt; k++)
                if (kp_str_eq(qt->configs.v[k].name, key)) {
                    v = req_strf(r, "%.*s", qt->configs.v[k].value.len, qt->configs.v[k].value.p).p;
                    dflt = false;
                }
            if (dflt) v = tcfg_default(s, key, buf, sizeof buf);
        }
        c->name = kp_str_c(key);
        c->value = req_strf(r, "%s", v);
        c->read_only = tcfg_read_only(s, key);
        c->config_source = dflt ? 5 : 1; /* DEFAULT_CONFIG : DYNAMIC_TOPIC_CONFIG */
        c->is_sensitive = false;
    }
}

/* The request's assignments as the topic module takes them, indexed by partition (checked first). */
static int16_t check_assignments(srv *s, req *r, const kp_create_topics_creatable_topic *qt, topic_assignment **out,
                                 char *why, size_t n) {
    /* KRaft's messages (ReplicationControlManager.createTopic), replication factor first */
    if (qt->replication_factor != -1) {
        snprintf(why, n, "A manual partition assignment was specified, but replication factor was not set to -1.");
        return KERR_INVALID_REQUEST;
    }
    if (qt->num_partitions != -1) {
        snprintf(why, n, "A manual partition assignment was specified, but numPartitions was not set to -1.");
        return KERR_INVALID_REQUEST;
    }
    int32_t count = qt->assignments.n;
    topic_assignment *a = req_alloc(r, sizeof *a * (size_t)count);
    for (int32_t k = 0; k < count; k++)
        a[k] = (topic_assignment){qt->assignments.v[k].partition_index, qt->assignments.v[k].broker_ids.v,
                                  qt->assignments.v[k].broker_ids.n};
    int16_t code = topic_check_create_assignments(s, a, count, why, n);
    if (code) return code;
    topic_assignment *byp = req_alloc(r, sizeof *byp * (size_t)count);
    for (int32_t k = 0; k < count; k++) byp[a[k].partition] = a[k];
    *out = byp;
    return 0;
}

/* A config with a null name or value is refused before the topic module sees it (Kafka's texts). */
static int16_t null_configs(const kp_create_topics_creatable_topic *qt, char *why, size_t n) {
    for (int32_t k = 0; k < qt->configs.n; k++) {
        const kp_create_topics_creatable_topic_config *c = &qt->configs.v[k];
        if (c->name.len < 0) {
            snprintf(why, n, "Null config name");
            return KERR_INVALID_REQUEST;
        }
        if (c->value.len < 0) {
            snprintf(why, n, "Null value not supported for topic configs: %.*s", c->name.len, c->name.p);
            return KERR_INVALID_REQUEST;
        }
    }
    return 0;
}

/* The request's configs as the topic module takes them; a null one is "" here and refused by null_configs. */
static topic_override *overrides(req *r, const kp_create_topics_creatable_topic *qt) {
    topic_override *ov = req_alloc(r, sizeof(*ov) * (size_t)(qt->configs.n + 1));
    for (int32_t k = 0; k < qt->configs.n; k++) {
        kp_str name = qt->configs.v[k].name, value = qt->configs.v[k].value;
        ov[k].key = (char *)req_strf(r, "%.*s", name.len > 0 ? name.len : 0, name.len > 0 ? name.p : "").p;
        ov[k].value = (char *)req_strf(r, "%.*s", value.len > 0 ? value.len : 0, value.len > 0 ? value.p : "").p;
    }
    return ov;
}

/*
 * Kafka's order: entries named twice in the request, then the name, the assignment, the shape
 * and the configs (the last three in the topic module, as for every way a topic is created).
 */
static int16_t check_topic(srv *s, req *r, const kp_create_topics_request *q, int32_t idx, int32_t *nparts,
                           int16_t *rf, topic_assignment **assign, const topic_override *ov, char *why, size_t n) {
    const kp_create_topics_creatable_topic *qt = &q->topics.v[idx];
    for (int32_t j = 0; j < q->topics.n; j++)
        if (j != idx && q->topics.v[j].name.len == qt->name.len &&
            memcmp(q->topics.v[j].name.p, qt->name.p, (size_t)(qt->name.len > 0 ? qt->name.len : 0)) == 0) {
            snprintf(why, n, "Create topics request from client `%s` contains multiple entries for the following topics: %.*s",
                     r->hdr.client_id.len >= 0 ? "client" : "-", qt->name.len > 0 ? qt->name.len : 0, qt->name.p);
            return KERR_INVALID_REQUEST;
        }
    int16_t code = topic_check_new_name(s, qt->name.p, qt->name.len > 0 ? (size_t)qt->name.len : 0, why, n);
    if (code) return code;
    *assign = NULL;
    if (qt->assignments.n > 0) {
        code = check_assignments(s, r, qt, assign, why, n);
        if (code) return code;
        *nparts = qt->assignments.n;
        *rf = (int16_t)qt->assignments.v[0].broker_ids.n;
    } else {
        *nparts = qt->num_partitions;
        *rf = qt->replication_factor;
    }
    code = null_configs(qt, why, n);
    if (code) return code;
    return topic_check_new_shape(s, nparts, rf, ov, qt->configs.n, why, n);
}

void api_create_topics(srv *s, req *r) {
    kp_create_topics_request *q = r->body;
    kp_create_topics_response *resp = req_resp(r);
    int16_t ver = r->hdr.api_version;
    int32_t throttle = 0;
    REQ_ARR(r, resp->topics, q->topics.n);
    for (int32_t i = 0; i < q->topics.n; i++) {
        kp_create_topics_creatable_topic *qt = &q->topics.v[i];
        kp_create_topics_creatable_topic_result *res = &resp->topics.v[i];
        kp_defaults(&kp_create_topics_creatable_topic_result_schema, ver, res);
        res->name = qt->name;
        res->num_partitions = -1;
        res->replication_factor = -1;
        res->configs.n = -1;
        int32_t nparts = 0;
        int16_t rf = 0;
        topic_assignment *assign = NULL;
        char why[512];
        int16_t code = api_authz(s, r, IAM_RES_TOPIC, qt->name);
        if (code) {
            res->error_code = code;
            res->error_message = kp_str_c("Authorization failed."); /* Kafka's text */
            continue;
        }
        topic_override *ov = overrides(r, qt);
        code = check_topic(s, r, q, i, &nparts, &rf, &assign, ov, why, sizeof why);
        if (code) {
            res->error_code = code;
            res->error_message = req_strf(r, "%s", why);
            req_log_refusal(r, code, "topic '%.*s': %s", qt->name.len > 0 ? qt->name.len : 0, qt->name.p, why);
            continue;
        }
        topic *t = NULL;
        if (!q->validate_only) {
            char *tname = kp_str_dup(qt->name);
            code = api_mutations(s, r, tname, nparts, ver >= 6, &throttle);
            free(tname);
            if (code) {
                res->error_code = code;
                res->error_message = kp_str_c("The throttling quota has been exceeded."); /* Kafka's text */
                continue;
            }
            char *name = kp_str_dup(qt->name);
            const char *err = NULL;
            t = topic_create(s, name, nparts, rf, ov, qt->configs.n, &err);
            free(name);
            if (t && assign && topic_assign(s, t, 0, assign, nparts) != 0) err = stor_errmsg(s->st);
            if (!t || err) {
                res->error_code = KERR_UNKNOWN_SERVER_ERROR;
                req_log_refusal(r, KERR_UNKNOWN_SERVER_ERROR, "storing topic '%.*s' failed: %s", qt->name.len,
                                qt->name.p, err);
                continue;
            }
            memcpy(res->topic_id.b, t->uuid, 16);
            log_info("created topic %s: %d partition%s, replication factor %d%s, %d config override%s", t->name,
                     nparts, PLURAL_S(nparts), rf, assign ? " (replicas as assigned)" : "", qt->configs.n,
                     PLURAL_S(qt->configs.n));
        }
        res->num_partitions = nparts;
        res->replication_factor = rf;
        if (ver >= 5) fill_configs(s, r, t, res, qt);
    }
    api_mutations_done(r, ver >= 6, throttle, &resp->throttle_time_ms);
    req_respond(r, resp);
}
