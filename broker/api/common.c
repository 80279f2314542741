/*
 * The checks every handler shares (api.h), so each Kafka API refuses the same way and logs the
 * same line: authorization of a named resource, a topic's existence and its partition's leader,
 * leader epochs, the group coordinator, partition-mutation quotas, and the ApiVersions ranges.
 */
#include "api.h"

#include "group/group.h"
#include "kp_mirror.h"
#include "log.h"
#include "net/net.h"
#include "topic/config_alter.h"
#include "topic/topic.h"

int16_t api_partition_check(srv *s, req *r, topic *t, int32_t index, partition **out) {
    *out = NULL;
    if (!t) return KERR_UNKNOWN_TOPIC_OR_PARTITION;
    if (index < 0 || index >= t->nparts) {
        req_log_refusal(r, KERR_UNKNOWN_TOPIC_OR_PARTITION, "topic '%s' has %d partition%s, asked for partition %d",
                        t->name, t->nparts, PLURAL_S(t->nparts), index);
        return KERR_UNKNOWN_TOPIC_OR_PARTITION;
    }
    partition *p = &t->parts[index];
    if (p->leader == TOPIC_NO_LEADER) {
        req_log_refusal(r, KERR_NOT_LEADER_OR_FOLLOWER, "%s-%d is offline: every replica is down; the request reached "
                        "node %d", t->name, index, s->nodes[r->c->node].id);
        return KERR_NOT_LEADER_OR_FOLLOWER;
    }
    if (p->leader != r->c->node) {
        req_log_refusal(r, KERR_NOT_LEADER_OR_FOLLOWER, "%s-%d is led by node %d, the request reached node %d",
                        t->name, index, s->nodes[p->leader].id, s->nodes[r->c->node].id);
        return KERR_NOT_LEADER_OR_FOLLOWER;
    }
    *out = p;
    return 0;
}

int16_t api_leader_epoch_check(req *r, const partition *p, int32_t client_epoch, bool quiet) {
    if (client_epoch < 0 || client_epoch == p->leader_epoch) return 0;
    int16_t code = client_epoch > p->leader_epoch ? KERR_UNKNOWN_LEADER_EPOCH : KERR_FENCED_LEADER_EPOCH;
    if (!quiet)
        req_log_refusal(r, code, "%s-%d: client leader epoch %d, partition leader epoch %d", p->topic->name, p->index,
                        client_epoch, p->leader_epoch);
    return code;
}

void api_fill_versions(srv *s, req *r, kp_api_versions_response *resp) {
    size_t k = 0;
    REQ_ARR(r, resp->api_keys, KP_API_LIMIT);
    for (int16_t key = 0; key < KP_API_LIMIT; key++) {
        const api_handler *h = api_lookup(key);
        int16_t lo, hi;
        if (!h) continue;
        api_advertised_range(s, h, &lo, &hi);
        if (hi >= lo) resp->api_keys.v[k++] = (kp_api_versions_api_version){key, lo, hi};
    }
    resp->api_keys.n = (int32_t)k;
}

int16_t api_authz(srv *s, req *r, iam_resource_type type, kp_str name) {
    return authz_check(s, r, type, name.p ? name.p : "", name.len > 0 ? (size_t)name.len : 0);
}

topic *api_topic(srv *s, req *r, kp_str name, int16_t *code) {
    *code = api_authz(s, r, IAM_RES_TOPIC, name);
    if (*code) return NULL;
    topic *t = name.len > 0 ? topic_find(s, name.p, (size_t)name.len) : NULL;
    if (!t) {
        *code = KERR_UNKNOWN_TOPIC_OR_PARTITION;
        req_log_refusal(r, *code, "topic '%.*s' does not exist", name.len > 0 ? name.len : 0, name.p);
    }
    return t;
}

int16_t api_group(srv *s, req *r, kp_str group_id) {
    int16_t code = api_authz(s, r, IAM_RES_GROUP, group_id);
    return code ? code : grp_check_coordinator(s, r, group_id);
}

int16_t api_authz_config(srv *s, req *r, int8_t resource_type, kp_str name) {
    if (resource_type == 2) return api_authz(s, r, IAM_RES_TOPIC, name);
    if (resource_type == 4) return api_authz(s, r, IAM_RES_CLUSTER, KP_STR_NULL);
    if (resource_type == 32 && s->cfg->group_configs_enable) return api_authz(s, r, IAM_RES_GROUP, name);
    return 0; /* other types are refused by the handler */
}

const char *api_config_type_note(const srv *s, int8_t resource_type) {
    if (resource_type != 32) return "";
    /* the reason MSK Serverless has, said only where the serverless profile chose it */
    return s->cfg->profile == PROFILE_SERVERLESS ? " (GROUP: group.configs.enable=false, as MSK Serverless, whose API set "
                                                   "predates group configs)"
                                                 : " (GROUP: group.configs.enable=false)";
}

int16_t api_alter_config_resource(srv *s, req *r, int8_t resource_type, kp_str name, const alter_op *ops, int32_t n,
                                  bool replace_all, bool validate_only, kp_str *msg) {
    *msg = KP_STR_NULL;
    int16_t code = api_authz_config(s, r, resource_type, name);
    if (code) return code;
    if (resource_type == 2) {
        code = alter_topic_configs(s, r, name, ops, n, replace_all, validate_only, msg);
    } else if (resource_type == 4) {
        code = alter_broker_configs(s, r, name, msg);
    } else if (resource_type == 32 && s->cfg->group_configs_enable) {
        _Static_assert((int)ALTER_SET == (int)GRP_CONFIG_SET && (int)ALTER_DELETE == (int)GRP_CONFIG_DELETE &&
                           (int)ALTER_APPEND == (int)GRP_CONFIG_APPEND && (int)ALTER_SUBTRACT == (int)GRP_CONFIG_SUBTRACT,
                       "both are IncrementalAlterConfigs' config_operation");
        grp_config_op *gops = req_alloc(r, sizeof(*gops) * (size_t)(n + 1));
        for (int32_t k = 0; k < n; k++) gops[k] = (grp_config_op){ops[k].key, ops[k].value, ops[k].op};
        code = grp_config_alter(s, r, name, gops, n, replace_all, validate_only, msg);
    } else {
        code = KERR_INVALID_REQUEST;
        *msg = req_strf(r, "Unsupported resource type %d", resource_type);
        req_log_refusal(r, KERR_INVALID_REQUEST, "resource type %d is not served%s", resource_type,
                        api_config_type_note(s, resource_type));
    }
    if (!code) *msg = KP_STR_NULL;
    return code;
}

int16_t api_mutations(srv *s, req *r, const char *topic, int64_t n, bool refusable, int32_t *throttle) {
    int16_t code = quota_mutations(s, n, refusable, throttle);
    if (code)
        req_log_refusal(r, code, "topic '%s': %lld partition(s) created or deleted would go past "
                        "max.partition.mutations.per.5.minutes=%lld; room again in %d ms", topic, (long long)n,
                        (long long)s->cfg->max_partition_mutations_per_5_minutes, *throttle);
    return code;
}

void api_mutations_done(req *r, bool refusable, int32_t throttle, int32_t *resp_throttle) {
    *resp_throttle = throttle;
    if (!refusable) req_throttle(r, throttle, kp_api_name(r->hdr.api_key), "max.partition.mutations.per.5.minutes");
}

void api_offsets_commit_failed(srv *s, req *r) {
    int n = kp_set_errors_accepted(r->msg->resp, r->hdr.api_version, r->resp, KERR_NOT_COORDINATOR);
    if (n)
        req_log_refusal(r, KERR_NOT_COORDINATOR, "%d partition(s): the storage commit that held their offsets failed "
                        "(%s)", n, stor_errmsg(s->st));
}
