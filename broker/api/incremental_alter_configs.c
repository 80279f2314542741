/*
 * IncrementalAlterConfigs (key 44), v0–1: SET, DELETE, APPEND and SUBTRACT
 * on a topic's configs; all ops of a resource are checked before any is
 * applied. Under the serverless policy only MSK's settable configs pass.
 *
 * Group resources (type 32) with group.configs.enable (the kafka profile):
 * Kafka 4.0's group configs, set within the broker's bounds
 * (group.consumer.min/max.*) or INVALID_CONFIG with Kafka's message, and kept
 * (group/group_config.c); IAM: kafka-cluster:AlterGroup on the group's ARN.
 * Without it (serverless, provisioned) INVALID_REQUEST, as a broker older than
 * group configs answers (see describe_configs.c for why MSK Serverless is
 * taken to be one).
 */
#include "api.h"
#include "topic/config_alter.h"

void api_incremental_alter_configs(srv *s, req *r) {
    kp_incremental_alter_configs_request *q = r->body;
    kp_incremental_alter_configs_response *resp = req_resp(r);
    REQ_ARR(r, resp->responses, q->resources.n);
    for (int32_t i = 0; i < q->resources.n; i++) {
        kp_incremental_alter_configs_alter_configs_resource *res = &q->resources.v[i];
        kp_incremental_alter_configs_alter_configs_resource_response *out = &resp->responses.v[i];
        out->resource_type = res->resource_type;
        out->resource_name = res->resource_name;
        alter_op *ops = req_alloc(r, sizeof(*ops) * (size_t)(res->configs.n + 1));
        for (int32_t k = 0; k < res->configs.n; k++)
            ops[k] = (alter_op){res->configs.v[k].name, res->configs.v[k].value, res->configs.v[k].config_operation};
        out->error_code = api_alter_config_resource(s, r, res->resource_type, res->resource_name, ops, res->configs.n,
                                                    false, q->validate_only, &out->error_message);
    }
    req_respond(r, resp);
}
