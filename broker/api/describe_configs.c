/*
 * DescribeConfigs (key 32), v0–4, for topics: every topic config with its
 * value and source (DYNAMIC_TOPIC_CONFIG for overrides, DEFAULT_CONFIG
 * otherwise), or only the keys asked for; read_only for what MSK Serverless
 * refuses to change (under the serverless topic policy), synonyms (the
 * override, then the broker config that gives the default) when asked, and
 * documentation from v3 when asked. Broker resources: MSK Serverless
 * does not expose broker configs (INVALID_REQUEST under the serverless topic
 * policy); otherwise mskmock's broker-level defaults.
 *
 * Group resources (type 32, KIP-848's group configs), with group.configs.enable
 * (the kafka profile): as Kafka 4.0's ConfigHelper answers, Kafka 4.0's group
 * configs of any group id, existing or not (GROUP_CONFIG source for an
 * override, DEFAULT_CONFIG otherwise; an empty name is INVALID_REQUEST); IAM:
 * kafka-cluster:DescribeGroup on the group's ARN (MSK names no action of its
 * own for them). Without it (serverless and provisioned) INVALID_REQUEST, as a
 * broker older than group configs answers: MSK Serverless advertises a Kafka
 * 2.8-era API set and no KIP-848 API, and nothing public says it serves them.
 */
#include "api.h"
#include "group/group.h"
#include "topic/topic.h"
#include "topic/topic_config.h"

#define RES_TOPIC 2
#define RES_BROKER 4
#define RES_GROUP 32

typedef kp_describe_configs_resource_result entry;

static void put(req *r, entry *e, const char *name, const char *value, bool dflt, int8_t type) {
    kp_defaults(&kp_describe_configs_resource_result_schema, r->hdr.api_version, e);
    e->name = kp_str_c(name);
    e->value = req_strf(r, "%s", value ? value : "");
    e->read_only = false;
    e->is_default = dflt;
    e->config_source = dflt ? 5 : 1;
    e->is_sensitive = false;
    e->synonyms.n = 0;
    e->config_type = type;
    e->documentation = KP_STR_NULL;
}

static bool wanted(const kp_describe_configs_resource *res, const char *key) {
    if (res->configuration_keys.n < 0) return true;
    for (int32_t i = 0; i < res->configuration_keys.n; i++)
        if (kp_str_eq(res->configuration_keys.v[i], key)) return true;
    return false;
}

/* Kafka's synonyms of a topic config: the topic's override, then the broker config its default comes from. */
static void synonyms(srv *s, req *r, topic *t, const char *key, entry *e) {
    const char *broker_key = tcfg_synonym(key);
    bool dflt;
    const char *v = topic_config_value(s, t, key, &dflt);
    REQ_ARR(r, e->synonyms, 2);
    e->synonyms.n = 0;
    if (!dflt)
        e->synonyms.v[e->synonyms.n++] = (kp_describe_configs_synonym){kp_str_c(key), req_strf(r, "%s", v), 1};
    if (broker_key) {
        char buf[32];
        e->synonyms.v[e->synonyms.n++] =
            (kp_describe_configs_synonym){kp_str_c(broker_key), req_strf(r, "%s", tcfg_default(s, key, buf, sizeof buf)), 5};
    }
}

static void describe_topic(srv *s, req *r, const kp_describe_configs_request *q, const kp_describe_configs_resource *res,
                           kp_describe_configs_result *out) {
    topic *t = res->resource_name.len > 0 ? topic_find(s, res->resource_name.p, (size_t)res->resource_name.len) : NULL;
    if (!t) {
        out->error_code = KERR_UNKNOWN_TOPIC_OR_PARTITION;
        out->error_message = req_strf(r, "Topic '%.*s' does not exist.", res->resource_name.len > 0 ? res->resource_name.len : 0,
                                      res->resource_name.p);
        req_log_refusal(r, out->error_code, "%.*s", out->error_message.len, out->error_message.p);
        return;
    }
    size_t n = tcfg_count(), k = 0;
    REQ_ARR(r, out->configs, n);
    for (size_t i = 0; i < n; i++) {
        const char *key = tcfg_name(i);
        if (!wanted(res, key)) continue;
        bool dflt;
        const char *v = topic_config_value(s, t, key, &dflt);
        entry *e = &out->configs.v[k++];
        put(r, e, key, v, dflt, tcfg_type(key));
        e->read_only = tcfg_read_only(s, key);
        if (q->include_synonyms) synonyms(s, r, t, key, e);
        if (q->include_documentation) e->documentation = kp_str_c(tcfg_doc(key));
    }
    out->configs.n = (int32_t)k;
}

static void describe_broker(srv *s, req *r, const kp_describe_configs_resource *res, kp_describe_configs_result *out) {
    if (s->cfg->topic_config_policy == TOPIC_POLICY_SERVERLESS) {
        /* INVALID_REQUEST with no message, so each client prints its own text for 42: kafka-ui's MSK
           Serverless support (PR #2737) expects InvalidRequestException from exactly this call */
        out->error_code = KERR_INVALID_REQUEST;
        out->error_message = KP_STR_NULL;
        req_log_refusal(r, out->error_code, "broker %.*s configs: MSK Serverless does not expose broker configurations",
                        res->resource_name.len > 0 ? res->resource_name.len : 0, res->resource_name.p);
        return;
    }
    const struct {
        const char *name;
        char value[32];
        int8_t type;
    } broker[] = {
        {"auto.create.topics.enable", "", 1}, {"num.partitions", "", 3}, {"default.replication.factor", "", 3},
        {"message.max.bytes", "", 3},         {"log.retention.ms", "", 5}, {"log.retention.bytes", "", 5},
        {"delete.topic.enable", "true", 1},
    };
    char vals[6][32];
    snprintf(vals[0], 32, "%s", s->cfg->auto_create_topics_enable ? "true" : "false");
    snprintf(vals[1], 32, "%lld", (long long)s->cfg->num_partitions);
    snprintf(vals[2], 32, "%lld", (long long)s->cfg->default_replication_factor);
    snprintf(vals[3], 32, "%lld", (long long)s->cfg->message_max_bytes);
    snprintf(vals[4], 32, "%lld", (long long)s->cfg->log_retention_ms);
    snprintf(vals[5], 32, "%lld", (long long)s->cfg->log_retention_bytes);
    size_t n = sizeof broker / sizeof broker[0], k = 0;
    REQ_ARR(r, out->configs, n);
    for (size_t i = 0; i < n; i++) {
        if (!wanted(res, broker[i].name)) continue;
        put(r, &out->configs.v[k], broker[i].name, i < 6 ? vals[i] : broker[i].value, false, broker[i].type);
        out->configs.v[k].config_source = 4; /* STATIC_BROKER_CONFIG */
        out->configs.v[k].is_default = false;
        out->configs.v[k].read_only = true;
        k++;
    }
    out->configs.n = (int32_t)k;
}

static void describe_group(srv *s, req *r, const kp_describe_configs_request *q, const kp_describe_configs_resource *res,
                           kp_describe_configs_result *out) {
    kp_str id = res->resource_name;
    if (id.len <= 0) {
        out->error_code = KERR_INVALID_REQUEST;
        out->error_message = kp_str_c("Group name must not be empty"); /* Kafka's text */
        req_log_refusal(r, out->error_code, "group configs of an empty group name");
        return;
    }
    size_t n = 0, k = 0;
    while (grp_config_name(n)) n++;
    REQ_ARR(r, out->configs, n);
    for (size_t i = 0; i < n; i++) {
        const char *key = grp_config_name(i);
        if (!wanted(res, key)) continue;
        bool dflt;
        char buf[32];
        const char *v = grp_config_value(s, id.p, (size_t)id.len, key, &dflt, buf, sizeof buf);
        entry *e = &out->configs.v[k++];
        put(r, e, key, v, dflt, grp_config_type(key));
        e->config_source = dflt ? 5 : 8; /* DEFAULT_CONFIG : GROUP_CONFIG */
        if (q->include_synonyms) { /* Kafka's one synonym: the config itself, from where its value comes */
            REQ_ARR(r, e->synonyms, 1);
            e->synonyms.v[0] = (kp_describe_configs_synonym){kp_str_c(key), e->value, e->config_source};
        }
        if (q->include_documentation) e->documentation = kp_str_c(grp_config_doc(key));
    }
    out->configs.n = (int32_t)k;
}

void api_describe_configs(srv *s, req *r) {
    kp_describe_configs_request *q = r->body;
    kp_describe_configs_response *resp = req_resp(r);
    REQ_ARR(r, resp->results, q->resources.n);
    for (int32_t i = 0; i < q->resources.n; i++) {
        const kp_describe_configs_resource *res = &q->resources.v[i];
        kp_describe_configs_result *out = &resp->results.v[i];
        kp_defaults(&kp_describe_configs_result_schema, r->hdr.api_version, out);
        out->resource_type = res->resource_type;
        out->resource_name = res->resource_name;
        out->configs.n = 0;
        if ((out->error_code = api_authz_config(s, r, res->resource_type, res->resource_name))) continue;
        if (res->resource_type == RES_TOPIC) {
            describe_topic(s, r, q, res, out);
        } else if (res->resource_type == RES_BROKER) {
            describe_broker(s, r, res, out);
        } else if (res->resource_type == RES_GROUP && s->cfg->group_configs_enable) {
            describe_group(s, r, q, res, out);
        } else {
            out->error_code = KERR_INVALID_REQUEST;
            out->error_message = req_strf(r, "Unsupported resource type %d", res->resource_type);
            req_log_refusal(r, KERR_INVALID_REQUEST, "resource type %d is not served%s", res->resource_type,
                            api_config_type_note(s, res->resource_type));
        }
    }
    req_respond(r, resp);
}
