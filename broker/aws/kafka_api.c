/*
 * kafka_api: the `kafka` control plane (rest-json; operations, paths and shapes from botocore's
 * kafka/2018-11-14/service-2.json, https://docs.aws.amazon.com/msk/1.0/apireference/), for the
 * configured cluster: DescribeClusterV2, ListClustersV2, GetBootstrapBrokers and ListNodes's
 * refusal on Serverless; the tag operations are kafka_tags.c's, the cluster policy ones
 * kafka_policy.c's. Any other path answers as an unknown operation does, with a log line
 * naming the operation when it is one MSK has: never a success mskmock did not earn.
 *
 * Authorization: kafka:<Operation> on the cluster's ARN ("*" for listings, which have no
 * resource-level permissions: https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonmanagedstreamingforapachekafka.html)
 * by the caller's IAM policies, before the cluster is looked up, as IAM decides before the
 * service. Credentials without policies are allowed everything, as on the Kafka listeners (the
 * identities file gives such entries an empty set instead when iam.authorization.default says so).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aws_call.h"
#include "config.h"
#include "iam/authz.h"
#include "iam/iam_policy.h"
#include "iam/iam_store.h"
#include "kp_mem.h"

/* MSK's cluster version is an opaque revision string; mskmock's cluster is never updated. */
#define CLUSTER_VERSION "K3AEGXETSR30VB"

static bool serverless(const srv *s) { return s->cfg->profile == PROFILE_SERVERLESS; }

static void iso_time(int64_t us, char out[48]) {
    time_t t = (time_t)(us / 1000000);
    struct tm tm;
    gmtime_r(&t, &tm);
    snprintf(out, 48, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
             tm.tm_min, tm.tm_sec, (int)((us / 1000) % 1000));
}

/* The comma-separated host:port of listener k on every synthetic broker that is up; "" when it is off. */
static void bootstrap(const srv *s, listener_kind k, char *out, size_t cap) {
    size_t n = 0;
    out[0] = '\0';
    for (int i = 0; i < s->nnodes && n < cap; i++) {
        if (s->nodes[i].down || !lsn_port(s, i, k)) continue;
        n += (size_t)snprintf(out + n, cap - n, "%s%s:%d", n ? "," : "", lsn_host(s, k), (int)lsn_port(s, i, k));
    }
}

static bool listener_on(const srv *s, listener_kind k) { return s->nnodes && s->nodes[0].ports[k]; }

/* The Cluster shape (DescribeClusterV2, ListClustersV2) of the configured cluster. */
static json_t *cluster_v2(const aws_call *call) {
    const srv *s = call->s;
    char created[48];
    iso_time(call->started_ms * 1000, created); /* the configured cluster exists from start */
    json_t *c = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:o}", "clusterArn", authz_cluster_arn(s), "clusterName",
                          s->cfg->msk_cluster_name, "clusterType", serverless(s) ? "SERVERLESS" : "PROVISIONED",
                          "creationTime", created, "currentVersion", CLUSTER_VERSION, "state", "ACTIVE", "tags",
                          kafka_tags_json(call->s, authz_cluster_arn(s)));
    if (serverless(s)) {
        json_object_set_new(c, "serverless",
                            json_pack("{s:[{s:[], s:[]}], s:{s:{s:{s:b}}}}", "vpcConfigs", "subnetIds",
                                      "securityGroupIds", "clientAuthentication", "sasl", "iam", "enabled", 1));
    } else {
        bool iam = listener_on(s, LSN_IAM), plain = listener_on(s, LSN_PLAINTEXT);
        json_object_set_new(c, "provisioned",
                            json_pack("{s:i, s:{s:{s:{s:b}}, s:{s:b}}}", "numberOfBrokerNodes", s->nnodes,
                                      "clientAuthentication", "sasl", "iam", "enabled", iam, "unauthenticated",
                                      "enabled", plain));
    }
    return c;
}

/* The ARN in a path after prefix and before suffix (the path is percent-decoded: ARNs hold '/'). */
static bool path_arn(const char *path, const char *prefix, const char *suffix, char *out, size_t cap) {
    size_t pl = strlen(prefix), l = strlen(path), sl = strlen(suffix);
    if (strncmp(path, prefix, pl) != 0 || l < pl + sl + 1 || strcmp(path + l - sl, suffix) != 0) return false;
    size_t n = l - pl - sl;
    if (n >= cap) return false;
    memcpy(out, path + pl, n);
    out[n] = '\0';
    return true;
}

/* May the caller do kafka:<op> on resource? An AccessDeniedException (403) when not. */
static bool authorized(aws_call *c, const char *op, const char *resource) {
    const iam_policy *pol = c->cred->policy;
    if (!pol) return true;
    char action[80];
    snprintf(action, sizeof action, "kafka:%s", op);
    iam_decision d = iam_policy_eval_named(pol, action, resource);
    if (d.effect == IAM_ALLOW) return true;
    bool explicit_deny = d.effect == IAM_EXPLICIT_DENY;
    aws_rest_error(c, 403, "AccessDeniedException", NULL, "User: %s is not authorized to perform: %s on resource: %s%s",
                   c->principal, action, resource, explicit_deny ? " with an explicit deny in an identity-based policy" : "");
    char why[640];
    snprintf(why, sizeof why, "AccessDeniedException: %s %s%.200s on %.200s", action,
             explicit_deny ? "denied by " : "allowed by no statement of the caller's policies",
             explicit_deny ? d.by : "", resource);
    snprintf(c->rs->detail, sizeof c->rs->detail, "%.*s", (int)sizeof c->rs->detail - 1, why);
    return false;
}

/* Whether arn is the configured cluster's; a NotFoundException otherwise. */
static bool known_cluster(aws_call *c, const char *arn) {
    if (!strcmp(arn, authz_cluster_arn(c->s))) return true;
    aws_rest_error(c, 404, "NotFoundException", "clusterArn", "The specified cluster was not found. clusterArn: %s",
                   arn);
    return false;
}

static void describe_cluster_v2(aws_call *c, const char *arn) {
    if (!authorized(c, "DescribeClusterV2", arn) || !known_cluster(c, arn)) return;
    http_json(c->rs, 200, json_pack("{s:o}", "clusterInfo", cluster_v2(c)));
    snprintf(c->rs->detail, sizeof c->rs->detail, "DescribeClusterV2");
}

static void list_clusters_v2(aws_call *c) {
    if (!authorized(c, "ListClustersV2", "*")) return;
    const char *q = c->rq->query;
    char name[256] = "", type[32] = "", max[16] = "", token[256] = "";
    http_query_get(q, "clusterNameFilter", name, sizeof name);
    http_query_get(q, "clusterTypeFilter", type, sizeof type);
    if (http_query_get(q, "maxResults", max, sizeof max)) {
        char *end;
        long m = strtol(max, &end, 10);
        if (!*max || *end || m < 1 || m > 100) {
            aws_rest_error(c, 400, "BadRequestException", "maxResults", "maxResults must be between 1 and 100.");
            return;
        }
    }
    /* this slice serves one cluster: every answer fits one page, so no token was ever handed out */
    if (http_query_get(q, "nextToken", token, sizeof token) && *token) {
        aws_rest_error(c, 400, "BadRequestException", "nextToken", "The nextToken is not valid.");
        return;
    }
    if (*type && strcmp(type, "PROVISIONED") && strcmp(type, "SERVERLESS")) {
        aws_rest_error(c, 400, "BadRequestException", "clusterTypeFilter",
                       "clusterTypeFilter must be PROVISIONED or SERVERLESS.");
        return;
    }
    const srv *s = c->s;
    json_t *list = json_array();
    /* MSK's name filter matches clusters whose names start with it */
    bool match = !strncmp(s->cfg->msk_cluster_name, name, strlen(name)) &&
                 (!*type || !strcmp(type, serverless(s) ? "SERVERLESS" : "PROVISIONED"));
    if (match) json_array_append_new(list, cluster_v2(c));
    http_json(c->rs, 200, json_pack("{s:o}", "clusterInfoList", list));
    snprintf(c->rs->detail, sizeof c->rs->detail, "ListClustersV2 clusters=%d", match ? 1 : 0);
}

static void get_bootstrap_brokers(aws_call *c, const char *arn) {
    if (!authorized(c, "GetBootstrapBrokers", arn) || !known_cluster(c, arn)) return;
    const srv *s = c->s;
    char iam[2048], plain[2048];
    bootstrap(s, LSN_IAM, iam, sizeof iam);
    bootstrap(s, LSN_PLAINTEXT, plain, sizeof plain);
    json_t *j = json_object();
    /* MSK Serverless serves IAM only; a provisioned cluster the strings of its client authentications */
    if (*iam) json_object_set_new(j, "bootstrapBrokerStringSaslIam", json_string(iam));
    if (!serverless(s) && *plain) json_object_set_new(j, "bootstrapBrokerString", json_string(plain));
    http_json(c->rs, 200, j);
    snprintf(c->rs->detail, sizeof c->rs->detail, "GetBootstrapBrokers sasl_iam=%.100s%s%.100s", *iam ? iam : "-",
             !serverless(s) ? " plaintext=" : "", !serverless(s) ? (*plain ? plain : "-") : "");
}

/* MSK's operations this slice does not serve: named in the log line of their refusal. */
static const struct {
    const char *method, *prefix, *suffix, *op;
} not_served[] = {
    {"POST", "/api/v2/clusters", "", "CreateClusterV2"},
    {"DELETE", "/v1/clusters/", "", "DeleteCluster"},
    {"GET", "/v1/clusters/", "/nodes", "ListNodes"},
    {"GET", "/v1/clusters/", "/operations", "ListClusterOperations"},
    {"GET", "/v1/clusters/", "", "DescribeCluster"},
    {"GET", "/v1/clusters", "", "ListClusters"},
    {"POST", "/v1/clusters", "", "CreateCluster"},
    {"GET", "/v1/kafka-versions", "", "ListKafkaVersions"},
    {"GET", "/v1/configurations", "", "ListConfigurations"},
    {"POST", "/v1/configurations", "", "CreateConfiguration"},
};

static void unknown_operation(aws_call *c) {
    const char *path = c->rq->path, *op = NULL;
    size_t l = strlen(path);
    for (size_t i = 0; i < sizeof not_served / sizeof not_served[0] && !op; i++) {
        size_t pl = strlen(not_served[i].prefix), sl = strlen(not_served[i].suffix);
        if (strcmp(c->rq->method, not_served[i].method) || strncmp(path, not_served[i].prefix, pl) ||
            l < pl + sl || strcmp(path + l - sl, not_served[i].suffix))
            continue;
        op = not_served[i].op;
    }
    /* the answer of an unknown path on AWS's REST front door */
    aws_rest_error(c, 404, "UnknownOperationException", NULL, "The requested operation is not recognized: %s %s",
                   c->rq->method, path);
    if (op) {
        size_t dl = strlen(c->rs->detail);
        snprintf(c->rs->detail + dl, sizeof c->rs->detail - dl, " (kafka:%s is not served by mskmock yet)", op);
    }
}

void kafka_api_route(aws_call *c) {
    const char *m = c->rq->method, *path = c->rq->path;
    char arn[512];
    bool get = !strcmp(m, "GET");
    if (get && !strcmp(path, "/api/v2/clusters"))
        list_clusters_v2(c);
    else if (get && path_arn(path, "/api/v2/clusters/", "", arn, sizeof arn))
        describe_cluster_v2(c, arn);
    else if (get && path_arn(path, "/v1/clusters/", "/bootstrap-brokers", arn, sizeof arn))
        get_bootstrap_brokers(c, arn);
    else if (get && serverless(c->s) && path_arn(path, "/v1/clusters/", "/nodes", arn, sizeof arn)) {
        if (authorized(c, "ListNodes", arn) && known_cluster(c, arn))
            aws_rest_error(c, 400, "BadRequestException", NULL, "This operation cannot be performed on serverless clusters.");
    } else if (path_arn(path, "/v1/clusters/", "/policy", arn, sizeof arn) && get)
        kafka_get_cluster_policy(c, arn);
    else if (path_arn(path, "/v1/clusters/", "/policy", arn, sizeof arn) && !strcmp(m, "PUT"))
        kafka_put_cluster_policy(c, arn);
    else if (path_arn(path, "/v1/clusters/", "/policy", arn, sizeof arn) && !strcmp(m, "DELETE"))
        kafka_delete_cluster_policy(c, arn);
    else if (path_arn(path, "/v1/tags/", "", arn, sizeof arn) && get)
        kafka_list_tags_for_resource(c, arn);
    else if (path_arn(path, "/v1/tags/", "", arn, sizeof arn) && !strcmp(m, "POST"))
        kafka_tag_resource(c, arn);
    else if (path_arn(path, "/v1/tags/", "", arn, sizeof arn) && !strcmp(m, "DELETE"))
        kafka_untag_resource(c, arn);
    else
        unknown_operation(c);
}

bool kafka_authorized(aws_call *c, const char *op, const char *resource) { return authorized(c, op, resource); }
bool kafka_known_cluster(aws_call *c, const char *arn) { return known_cluster(c, arn); }
