/*
 * AlterConfigs (key 33), v0–2: the legacy full replace of a topic's
 * overrides. Under the serverless policy a config MSK does not allow
 * (cleanup.policy included, as tools that re-send it learn) fails the whole
 * resource with INVALID_CONFIG and MSK's message.
 *
 * Group resources (type 32) with group.configs.enable: the full replace of a
 * group's configs, which Kafka 4.0's controller serves too
 * (ControllerApis.handleLegacyAlterConfigs), checked as IncrementalAlterConfigs
 * checks them; IAM: kafka-cluster:AlterGroup. Without it INVALID_REQUEST (see
 * describe_configs.c).
 */
#include "api.h"
#include "topic/config_alter.h"

void api_alter_configs(srv *s, req *r) {
    kp_alter_configs_request *q = r->body;
    kp_alter_configs_response *resp = req_resp(r);
    REQ_ARR(r, resp->responses, q->resources.n);
    for (int32_t i = 0; i < q->resources.n; i++) {
        kp_alter_configs_resource *res = &q->resources.v[i];
        kp_alter_configs_resource_response *out = &resp->responses.v[i];
        out->resource_type = res->resource_type;
        out->resource_name = res->resource_name;
        alter_op *ops = req_alloc(r, sizeof(*ops) * (size_t)(res->configs.n + 1));
        for (int32_t k = 0; k < res->configs.n; k++)
            ops[k] = (alter_op){res->configs.v[k].name, res->configs.v[k].value, ALTER_SET};
        out->error_code = api_alter_config_resource(s, r, res->resource_type, res->resource_name, ops, res->configs.n,
                                                    true, q->validate_only, &out->error_message);
    }
    req_respond(r, resp);
}
