/*
 * kafka_clusters: the `kafka` control plane's CreateClusterV2 (POST /api/v2/clusters) and
 * DeleteCluster (DELETE /v1/clusters/{clusterArn}): shapes and errors from botocore's
 * kafka/2018-11-14/service-2.json, https://docs.aws.amazon.com/msk/1.0/apireference/v2-clusters.html
 * and https://docs.aws.amazon.com/msk/1.0/apireference/clusters-clusterarn.html.
 *
 * A created cluster is a whole cluster in this process (fleet.h): its own brokers and listeners on
 * ports the OS picks, its storage under data.dir/clusters/<uuid>, the serverless or provisioned
 * profile. It is CREATING for aws.cluster.transition.ms and then ACTIVE, as Terraform and SDK
 * waiters expect to poll; a deleted one is DELETING as long and then gone (NotFoundException).
 * Its listeners are up from the start, so a client never races the state change.
 *
 * The request is checked whole before anything is made: every field against the request shape
 * (an unknown field, a wrong type or a missing required one is a BadRequestException naming it),
 * MSK's name rules, the name not taken (ConflictException), aws.max.clusters. What mskmock cannot
 * serve is refused the same way rather than created differently: SCRAM and mutual TLS client
 * authentication, and unauthenticated clients over TLS (mskmock's unauthenticated listener is
 * plaintext).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws_call.h"
#include "clock.h"
#include "ids.h"
#include "kp_mem.h"
#include "stor.h"
#include "topic/topic.h"

/* ---- the request shape ------------------------------------------------------------------ */

typedef enum { F_STR, F_BOOL, F_INT, F_OBJ, F_STRS, F_OBJS, F_MAP } ftype;

typedef struct field {
    const char *name;
    ftype type;
    bool required;
    const struct field *sub; /* F_OBJ, F_OBJS: its members (NULL: any object, kept as sent) */
} field;

#define END {NULL, F_STR, false, NULL}
static const field enabled_f[] = {{"enabled", F_BOOL, false, NULL}, END};
static const field tls_auth[] = {{"certificateAuthorityArnList", F_STRS, false, NULL}, {"enabled", F_BOOL, false, NULL}, END};
static const field sasl[] = {{"scram", F_OBJ, false, enabled_f}, {"iam", F_OBJ, false, enabled_f}, END};
static const field client_auth[] = {{"sasl", F_OBJ, false, sasl}, {"tls", F_OBJ, false, tls_auth},
                                    {"unauthenticated", F_OBJ, false, enabled_f}, END};
static const field serverless_sasl[] = {{"iam", F_OBJ, false, enabled_f}, END};
static const field serverless_auth[] = {{"sasl", F_OBJ, false, serverless_sasl}, END};
static const field vpc_config[] = {{"subnetIds", F_STRS, true, NULL}, {"securityGroupIds", F_STRS, false, NULL}, END};
static const field serverless_req[] = {{"vpcConfigs", F_OBJS, true, vpc_config},
                                       {"clientAuthentication", F_OBJ, false, serverless_auth}, END};
static const field in_transit[] = {{"clientBroker", F_STR, false, NULL}, {"inCluster", F_BOOL, false, NULL}, END};
static const field encryption[] = {{"encryptionAtRest", F_OBJ, false, NULL}, {"encryptionInTransit", F_OBJ, false, in_transit}, END};
static const field node_group[] = {{"brokerAZDistribution", F_STR, false, NULL}, {"clientSubnets", F_STRS, true, NULL},
                                   {"instanceType", F_STR, true, NULL},         {"securityGroups", F_STRS, false, NULL},
                                   {"storageInfo", F_OBJ, false, NULL},         {"connectivityInfo", F_OBJ, false, NULL},
                                   {"zoneIds", F_STRS, false, NULL},            END};
static const field provisioned_req[] = {{"brokerNodeGroupInfo", F_OBJ, true, node_group},
                                        {"rebalancing", F_OBJ, false, NULL},
                                        {"clientAuthentication", F_OBJ, false, client_auth},
                                        {"configurationInfo", F_OBJ, false, NULL},
                                        {"encryptionInfo", F_OBJ, false, encryption},
                                        {"enhancedMonitoring", F_STR, false, NULL},
                                        {"openMonitoring", F_OBJ, false, NULL},
                                        {"kafkaVersion", F_STR, true, NULL},
                                        {"loggingInfo", F_OBJ, false, NULL},
                                        {"numberOfBrokerNodes", F_INT, true, NULL},
                                        {"storageMode", F_STR, false, NULL},
                                        END};
static const field create_req[] = {{"clusterName", F_STR, true, NULL}, {"tags", F_MAP, false, NULL},
                                   {"provisioned", F_OBJ, false, provisioned_req},
                                   {"serverless", F_OBJ, false, serverless_req}, END};

static const char *type_name(ftype t) {
    static const char *const names[] = {"a string", "a boolean", "an integer", "an object", "a list of strings",
                                        "a list of objects", "a map of strings"};
    return names[t];
}

static bool all_strings(json_t *v, bool list) {
    size_t i;
    const char *k;
    json_t *e;
    if (list) {
        json_array_foreach(v, i, e) if (!json_is_string(e)) return false;
    } else {
        json_object_foreach(v, k, e) if (!json_is_string(e)) return false;
    }
    return true;
}

static bool has_type(json_t *v, ftype t) {
    switch (t) {
    case F_STR: return json_is_string(v);
    case F_BOOL: return json_is_boolean(v);
    case F_INT: return json_is_integer(v);
    case F_OBJ: return json_is_object(v);
    case F_STRS: return json_is_array(v) && all_strings(v, true);
    case F_OBJS: return json_is_array(v);
    case F_MAP: return json_is_object(v) && all_strings(v, false);
    }
    return false;
}

/* obj against its members; false with the refusal answered, naming the field. */
static bool check_shape(aws_call *c, json_t *obj, const field *fs, const char *where) {
    const char *k;
    json_t *v;
    json_object_foreach(obj, k, v) {
        const field *f = fs;
        while (f->name && strcmp(f->name, k)) f++;
        if (!f->name) {
            aws_rest_error(c, 400, "BadRequestException", k, "Unknown field %.64s in %s.", k, where);
            return false;
        }
        if (!has_type(v, f->type)) {
            aws_rest_error(c, 400, "BadRequestException", k, "%s must be %s.", k, type_name(f->type));
            return false;
        }
        if (f->type == F_OBJ && f->sub && !check_shape(c, v, f->sub, k)) return false;
        size_t i;
        json_t *e;
        if (f->type == F_OBJS) json_array_foreach(v, i, e) {
            if (!json_is_object(e)) {
                aws_rest_error(c, 400, "BadRequestException", k, "%s must be a list of objects.", k);
                return false;
            }
            if (!check_shape(c, e, f->sub, k)) return false;
        }
    }
    for (const field *f = fs; f->name; f++)
        if (f->required && !json_object_get(obj, f->name)) {
            aws_rest_error(c, 400, "BadRequestException", f->name, "%s is required in %s.", f->name, where);
            return false;
        }
    return true;
}

/* ---- CreateClusterV2 -------------------------------------------------------------------- */

/* MSK's cluster names: 1-64 letters, digits and hyphens, starting with a letter or digit. */
static bool name_ok(const char *n) {
    size_t l = strlen(n);
    if (l < 1 || l > CLUSTER_NAME_MAX) return false;
    for (size_t i = 0; i < l; i++) {
        char ch = n[i];
        bool alnum = (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
        if (!alnum && (i == 0 || ch != '-')) return false;
    }
    return true;
}

/* o.name.enabled is true */
static bool enabled(json_t *o, const char *name) {
    return json_is_true(json_object_get(json_object_get(o, name), "enabled"));
}

/* A serverless request into cl; false with the refusal answered. */
static bool serverless_spec(aws_call *c, json_t *req, cluster *cl) {
    json_t *vpcs = json_object_get(req, "vpcConfigs");
    if (!json_array_size(vpcs) || !json_array_size(json_object_get(json_array_get(vpcs, 0), "subnetIds"))) {
        aws_rest_error(c, 400, "BadRequestException", "vpcConfigs", "vpcConfigs must name at least one subnet.");
        return false;
    }
    /* MSK Serverless authenticates with IAM only: a cluster without it could admit nobody */
    json_t *auth = json_object_get(req, "clientAuthentication");
    if (auth && !enabled(json_object_get(auth, "sasl"), "iam")) {
        aws_rest_error(c, 400, "BadRequestException", "clientAuthentication",
                       "Serverless clusters support IAM client authentication only; enable sasl.iam.");
        return false;
    }
    cl->serverless = true;
    cl->iam = true;
    cl->brokers = 0; /* the serverless profile's broker.count: set when its configuration loads */
    json_t *info = json_pack("{s:O, s:{s:{s:{s:b}}}}", "vpcConfigs", vpcs, "clientAuthentication", "sasl", "iam",
                             "enabled", 1);
    cl->info = json_dumps(info, JSON_COMPACT);
    json_decref(info);
    return true;
}

/* A provisioned request into cl; false with the refusal answered. */
static bool provisioned_spec(aws_call *c, json_t *req, cluster *cl) {
    json_int_t n = json_integer_value(json_object_get(req, "numberOfBrokerNodes"));
    size_t subnets = json_array_size(json_object_get(json_object_get(req, "brokerNodeGroupInfo"), "clientSubnets"));
    if (n < 1 || n > 15) {
        aws_rest_error(c, 400, "BadRequestException", "numberOfBrokerNodes", "numberOfBrokerNodes must be between 1 and 15.");
        return false;
    }
    /* MSK places brokers evenly over the client subnets' zones */
    if (!subnets || n % (json_int_t)subnets) {
        aws_rest_error(c, 400, "BadRequestException", "numberOfBrokerNodes",
                       "numberOfBrokerNodes (%lld) must be a multiple of the number of clientSubnets (%zu).", (long long)n,
                       subnets);
        return false;
    }
    const char *version = json_string_value(json_object_get(req, "kafkaVersion"));
    const kafka_version *kv = NULL;
    for (size_t i = 0; i < kafka_versions_n && !kv; i++)
        if (!strcmp(kafka_versions[i].version, version)) kv = &kafka_versions[i];
    /* a new cluster takes a version MSK still supports (ListKafkaVersions: ACTIVE) */
    if (!kv || strcmp(kv->status, "ACTIVE") || strlen(version) >= sizeof cl->kafka_version) {
        aws_rest_error(c, 400, "BadRequestException", "kafkaVersion",
                       "Unsupported KafkaVersion %.64s: choose an ACTIVE version of ListKafkaVersions.", version);
        return false;
    }
    json_t *auth = json_object_get(req, "clientAuthentication");
    json_t *sasl_o = json_object_get(auth, "sasl");
    if (enabled(sasl_o, "scram") || enabled(auth, "tls")) {
        aws_rest_error(c, 400, "BadRequestException", "clientAuthentication",
                       "mskmock serves IAM and unauthenticated clients; SASL/SCRAM and mutual TLS are not served.");
        return false;
    }
    bool iam = enabled(sasl_o, "iam");
    bool unauth = !auth || enabled(auth, "unauthenticated");
    if (!iam && !unauth) {
        aws_rest_error(c, 400, "BadRequestException", "clientAuthentication",
                       "Enable at least one client authentication: sasl.iam or unauthenticated.");
        return false;
    }
    const char *cb = json_string_value(json_object_get(
        json_object_get(json_object_get(req, "encryptionInfo"), "encryptionInTransit"), "clientBroker"));
    if (cb && strcmp(cb, "TLS") && strcmp(cb, "TLS_PLAINTEXT") && strcmp(cb, "PLAINTEXT")) {
        aws_rest_error(c, 400, "BadRequestException", "clientBroker", "clientBroker must be TLS, TLS_PLAINTEXT or PLAINTEXT.");
        return false;
    }
    /* MSK's default is TLS only; IAM is always TLS, and unauthenticated clients reach mskmock in plaintext */
    if (unauth && (!cb || !strcmp(cb, "TLS"))) {
        aws_rest_error(c, 400, "BadRequestException", "clientBroker",
                       "Unauthenticated clients reach mskmock in plaintext: set encryptionInfo.encryptionInTransit."
                       "clientBroker to TLS_PLAINTEXT or PLAINTEXT (TLS, the default, is not served for them).");
        return false;
    }
    cl->serverless = false;
    cl->brokers = (int)n;
    cl->iam = iam;
    cl->unauthenticated = unauth;
    snprintf(cl->kafka_version, sizeof cl->kafka_version, "%s", version);
    json_t *info = json_deep_copy(req);
    json_object_del(info, "kafkaVersion");
    json_object_set_new(info, "currentBrokerSoftwareInfo", json_pack("{s:s}", "kafkaVersion", version));
    json_object_set_new(info, "clientAuthentication",
                        json_pack("{s:{s:{s:b}, s:{s:b}}, s:{s:b}}", "sasl", "iam", "enabled", iam, "scram", "enabled", 0,
                                  "unauthenticated", "enabled", unauth));
    if (!json_object_get(info, "enhancedMonitoring")) json_object_set_new(info, "enhancedMonitoring", json_string("DEFAULT"));
    cl->info = json_dumps(info, JSON_COMPACT);
    json_decref(info);
    return true;
}

/*
 * arn:aws:kafka:<region>:<account>: of a new cluster: the region every cluster shares (the
 * configured one's, iam.region), the caller's account: a cluster belongs to whoever created it.
 */
static void arn_base(const aws_call *c, char *out, size_t n) {
    const char *arn = c->s->fleet->list[0]->arn, *p = arn;
    for (int i = 0; i < 4 && p; i++) p = strchr(p, ':'), p = p ? p + 1 : NULL; /* past the region */
    snprintf(out, n, "%.*s%s:", p ? (int)(p - arn) : 0, arn, c->account);
}

/* The cluster made, registered and stored; false with the refusal answered and nothing left. */
static bool create(aws_call *c, cluster *cl, json_t *tags) {
    fleet *f = c->s->fleet;
    stor *st = c->s->st;
    /* the tags are the request's last check: before anything is started */
    const char *keys[KAFKA_MAX_TAGS], *values[KAFKA_MAX_TAGS];
    size_t n = 0;
    json_t *merged = json_object();
    bool tags_ok = !tags || kafka_tags_check(c, tags, merged, keys, values, &n);
    json_decref(merged);
    if (!tags_ok) return false;
    char why[1024];
    if (f->start(f, cl, why, sizeof why) != 0) {
        aws_rest_error(c, 500, "InternalServerErrorException", NULL, "The cluster could not be started: %s", why);
        return false;
    }
    char *spec = cluster_spec_json(cl);
    bool stored = st && stor_cluster_add(st, cl->arn, cl->name, spec, cl->created_ms) == 0 &&
                  (!n || stor_cluster_tags_put(st, cl->arn, keys, values, n) == 0) && topic_commit_now(c->s) == 0;
    free(spec);
    if (!stored) {
        aws_rest_error(c, 500, "InternalServerErrorException", NULL, "Storing the cluster failed: %s",
                       st ? stor_errmsg(st) : "no storage");
        f->stop(f, cl);
        return false;
    }
    return true;
}

void kafka_create_cluster_v2(aws_call *c) {
    json_error_t je;
    json_t *body = json_loadb(c->rq->body ? c->rq->body : "", c->rq->body_len, JSON_REJECT_DUPLICATES, &je);
    cluster *cl = xcalloc(1, sizeof *cl);
    fleet *f = c->s->fleet;
    if (!json_is_object(body)) {
        aws_rest_error(c, 400, "BadRequestException", NULL, "The request body is not a JSON object: %s", je.text);
        goto refused;
    }
    if (!check_shape(c, body, create_req, "the request")) goto refused;
    const char *name = json_string_value(json_object_get(body, "clusterName"));
    json_t *sl = json_object_get(body, "serverless"), *pv = json_object_get(body, "provisioned");
    if (!name_ok(name)) {
        aws_rest_error(c, 400, "BadRequestException", "clusterName",
                       "clusterName must be 1 to 64 letters, digits and hyphens, starting with a letter or digit.");
        goto refused;
    }
    if (!sl == !pv) {
        aws_rest_error(c, 400, "BadRequestException", sl ? "provisioned" : "serverless",
                       "Specify exactly one of provisioned and serverless.");
        goto refused;
    }
    char base[200], uuid[37];
    arn_base(c, base, sizeof base);
    snprintf(cl->name, sizeof cl->name, "%s", name);
    snprintf(cl->account, sizeof cl->account, "%.15s", c->account);
    snprintf(cl->arn, sizeof cl->arn, "%scluster/%s/*", base, name);
    if (!kafka_authorized(c, "CreateClusterV2", cl->arn)) goto refused;
    fleet_sweep(f);
    if (fleet_find_name(f, cl->account, name)) {
        aws_rest_error(c, 409, "ConflictException", "clusterName", "A cluster named %s already exists.", name);
        goto refused;
    }
    int64_t max = c->s->cfg->aws_max_clusters;
    if (fleet_created(f, true) + fleet_created(f, false) >= max) {
        aws_rest_error(c, 400, "BadRequestException", NULL,
                       "This process already holds aws.max.clusters=%lld created clusters; delete one first.",
                       (long long)max);
        goto refused;
    }
    if (!(sl ? serverless_spec(c, sl, cl) : provisioned_spec(c, pv, cl))) goto refused;
    ids_uuid4_str(uuid);
    /* MSK's cluster uuids end in -s1 for serverless clusters, -<n> for provisioned ones */
    snprintf(cl->uuid, sizeof cl->uuid, "%s-%s", uuid, cl->serverless ? "s1" : "2");
    snprintf(cl->arn, sizeof cl->arn, "%scluster/%s/%s", base, name, cl->uuid);
    cl->created_ms = clk_now_ms();
    cl->active_at_ms = clk_mono_ms() + c->s->cfg->aws_cluster_transition_ms;
    if (!create(c, cl, json_object_get(body, "tags"))) goto refused;
    fleet_add(f, cl);
    if (f->changed) f->changed(f);
    http_json(c->rs, 200,
              json_pack("{s:s, s:s, s:s, s:s}", "clusterArn", cl->arn, "clusterName", cl->name, "state",
                        cluster_state_name(cluster_state_now(cl)), "clusterType", cl->serverless ? "SERVERLESS" : "PROVISIONED"));
    snprintf(c->rs->detail, sizeof c->rs->detail, "CreateClusterV2 %.300s", cl->arn);
    json_decref(body);
    return;
refused:
    free(cl->info);
    free(cl);
    json_decref(body);
}

/* ---- DeleteCluster ---------------------------------------------------------------------- */

void kafka_delete_cluster(aws_call *c, const char *arn) {
    cluster *cl;
    if (!kafka_authorized(c, "DeleteCluster", arn) || !(cl = kafka_cluster(c, arn))) return;
    char version[64];
    if (http_query_get(c->rq->query, "currentVersion", version, sizeof version) && strcmp(version, KAFKA_CLUSTER_VERSION)) {
        aws_rest_error(c, 400, "BadRequestException", "currentVersion",
                       "currentVersion %.64s is not the cluster's current version.", version);
        return;
    }
    if (cl->primary) {
        aws_rest_error(c, 400, "BadRequestException", "clusterArn",
                       "%s is mskmock's configured cluster (msk.cluster.name), which lives as long as the process.", arn);
        return;
    }
    if (cluster_state_now(cl) == CLUSTER_DELETING) {
        aws_rest_error(c, 400, "BadRequestException", "clusterArn", "The cluster is already being deleted: %s", arn);
        return;
    }
    stor *st = c->s->st;
    if (!st || stor_cluster_remove(st, arn) != 0 || topic_commit_now(c->s) != 0) {
        aws_rest_error(c, 500, "InternalServerErrorException", NULL, "Removing the cluster failed: %s",
                       st ? stor_errmsg(st) : "no storage");
        return;
    }
    fleet *f = c->s->fleet;
    f->stop(f, cl);
    /* at least 1 ms: a poller sees DELETING before NotFoundException */
    int64_t d = c->s->cfg->aws_cluster_transition_ms;
    cl->gone_at_ms = clk_mono_ms() + (d > 0 ? d : 1);
    if (f->changed) f->changed(f);
    http_json(c->rs, 200, json_pack("{s:s, s:s}", "clusterArn", cl->arn, "state", "DELETING"));
    snprintf(c->rs->detail, sizeof c->rs->detail, "DeleteCluster %.300s", cl->arn);
}
