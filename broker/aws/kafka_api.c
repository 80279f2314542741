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

#include "aws_authz.h"
#include "aws_call.h"
#include "config.h"
#include "iam/authz.h"
#include "iam/iam_policy.h"
#include "iam/iam_store.h"
#include "kp_mem.h"

void kafka_iso_time(int64_t ms, char out[48]) {
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    snprintf(out, 48, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
             tm.tm_min, tm.tm_sec, (int)(ms % 1000));
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

/*
 * The Cluster shape's "serverless" or "provisioned" object: as created (CreateClusterV2 kept it),
 * or, for the configured cluster, what its configuration says.
 */
static json_t *cluster_detail(const cluster *cl) {
    json_error_t je;
    json_t *info = cl->info ? json_loads(cl->info, 0, &je) : NULL;
    if (info) return info;
    if (cl->serverless)
        return json_pack("{s:[{s:[], s:[]}], s:{s:{s:{s:b}}}}", "vpcConfigs", "subnetIds", "securityGroupIds",
                         "clientAuthentication", "sasl", "iam", "enabled", 1);
    return json_pack("{s:i, s:{s:{s:{s:b}}, s:{s:b}}}", "numberOfBrokerNodes", cl->brokers, "clientAuthentication",
                     "sasl", "iam", "enabled", cl->iam, "unauthenticated", "enabled", cl->unauthenticated);
}

/* The Cluster shape (DescribeClusterV2, ListClustersV2). */
static json_t *cluster_v2(const aws_call *call, const cluster *cl) {
    char created[48];
    /* the configured cluster exists from start */
    kafka_iso_time(cl->primary ? call->started_ms : cl->created_ms, created);
    json_t *c = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:o}", "clusterArn", cl->arn, "clusterName", cl->name,
                          "clusterType", cl->serverless ? "SERVERLESS" : "PROVISIONED", "creationTime", created,
                          "currentVersion", KAFKA_CLUSTER_VERSION, "state", cluster_state_name(cluster_state_now(cl)), "tags",
                          kafka_tags_json(call->s, cl->arn));
    json_object_set_new(c, cl->serverless ? "serverless" : "provisioned", cluster_detail(cl));
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

/*
 * May the caller do kafka:<op> on resource? An AccessDeniedException (403) when not. Its identity
 * policies and the cluster policy decide, conditions evaluated in the call's context (aws_authz.c).
 */
static bool authorized(aws_call *c, const char *op, const char *resource) { return aws_kafka_authorized(c, op, resource); }

/* The cluster arn names; a NotFoundException (and NULL) when none does. */
static cluster *find_cluster(aws_call *c, const char *arn) {
    fleet_sweep(c->s->fleet);
    cluster *cl = fleet_find_arn(c->s->fleet, arn);
    if (cl) return cl;
    aws_rest_error(c, 404, "NotFoundException", "clusterArn", "The specified cluster was not found. clusterArn: %s",
                   arn);
    return NULL;
}

static void describe_cluster_v2(aws_call *c, const char *arn) {
    cluster *cl;
    if (!authorized(c, "DescribeClusterV2", arn) || !(cl = find_cluster(c, arn))) return;
    http_json(c->rs, 200, json_pack("{s:o}", "clusterInfo", cluster_v2(c, cl)));
    snprintf(c->rs->detail, sizeof c->rs->detail, "DescribeClusterV2 %s", cluster_state_name(cluster_state_now(cl)));
}

/*
 * maxResults and nextToken of a list operation: the page size (MSK's 1..100, default 100) and the
 * creation order to start from. A token is "p" and the seq of the first cluster of the next page:
 * any other is one this broker never handed out. A BadRequestException (and false) when invalid.
 */
bool kafka_page(aws_call *c, int *max, uint64_t *from) {
    const char *q = c->rq->query;
    char m[16] = "", token[256] = "";
    *max = 100;
    *from = 0;
    if (http_query_get(q, "maxResults", m, sizeof m)) {
        char *end;
        long v = strtol(m, &end, 10);
        if (!*m || *end || v < 1 || v > 100) {
            aws_rest_error(c, 400, "BadRequestException", "maxResults", "maxResults must be between 1 and 100.");
            return false;
        }
        *max = (int)v;
    }
    if (http_query_get(q, "nextToken", token, sizeof token) && *token) {
        char *end;
        unsigned long long v = token[0] == 'p' ? strtoull(token + 1, &end, 10) : 0;
        if (!v || *end || v > c->s->fleet->next_seq) {
            aws_rest_error(c, 400, "BadRequestException", "nextToken", "The nextToken is not valid.");
            return false;
        }
        *from = v;
    }
    return true;
}

/*
 * The clusters of a list operation's page, in creation order: those from `from` that keep(c)
 * accepts, at most max; *next the token of the next page ("" when this is the last).
 */
int kafka_page_clusters(aws_call *c, int max, uint64_t from, bool (*keep)(const cluster *, void *), void *ctx,
                        cluster **out, char next[32]) {
    fleet *f = c->s->fleet;
    int n = 0;
    next[0] = '\0';
    fleet_sweep(f);
    for (int i = 0; i < f->n; i++) {
        cluster *cl = f->list[i];
        /* a caller lists its own account's clusters, as AWS lists per account */
        if (cl->seq < from || strcmp(cl->account, c->account) || !keep(cl, ctx)) continue;
        if (n == max) {
            snprintf(next, 32, "p%llu", (unsigned long long)cl->seq);
            break;
        }
        out[n++] = cl;
    }
    return n;
}

typedef struct v2_filter {
    char name[256], type[32];
} v2_filter;

/* MSK's name filter matches clusters whose names start with it */
static bool v2_keep(const cluster *cl, void *ctx) {
    const v2_filter *fl = ctx;
    return !strncmp(cl->name, fl->name, strlen(fl->name)) &&
           (!*fl->type || !strcmp(fl->type, cl->serverless ? "SERVERLESS" : "PROVISIONED"));
}

static void list_clusters_v2(aws_call *c) {
    if (!authorized(c, "ListClustersV2", "*")) return;
    v2_filter fl = {"", ""};
    http_query_get(c->rq->query, "clusterNameFilter", fl.name, sizeof fl.name);
    http_query_get(c->rq->query, "clusterTypeFilter", fl.type, sizeof fl.type);
    int max;
    uint64_t from;
    if (!kafka_page(c, &max, &from)) return;
    if (*fl.type && strcmp(fl.type, "PROVISIONED") && strcmp(fl.type, "SERVERLESS")) {
        aws_rest_error(c, 400, "BadRequestException", "clusterTypeFilter",
                       "clusterTypeFilter must be PROVISIONED or SERVERLESS.");
        return;
    }
    cluster *page[100];
    char next[32];
    int n = kafka_page_clusters(c, max, from, v2_keep, &fl, page, next);
    json_t *list = json_array();
    for (int i = 0; i < n; i++) json_array_append_new(list, cluster_v2(c, page[i]));
    json_t *j = json_pack("{s:o}", "clusterInfoList", list);
    if (*next) json_object_set_new(j, "nextToken", json_string(next));
    http_json(c->rs, 200, j);
    snprintf(c->rs->detail, sizeof c->rs->detail, "ListClustersV2 clusters=%d%s", n, *next ? " (more)" : "");
}

static void get_bootstrap_brokers(aws_call *c, const char *arn) {
    cluster *cl;
    if (!authorized(c, "GetBootstrapBrokers", arn) || !(cl = find_cluster(c, arn))) return;
    cluster_state st = cluster_state_now(cl);
    if (st != CLUSTER_ACTIVE || !cl->s) {
        aws_rest_error(c, 400, "BadRequestException", NULL,
                       "The cluster is in the %s state; bootstrap brokers are available once it is ACTIVE.",
                       cluster_state_name(st));
        return;
    }
    const srv *s = cl->s;
    char iam[2048], plain[2048];
    bootstrap(s, LSN_IAM, iam, sizeof iam);
    bootstrap(s, LSN_PLAINTEXT, plain, sizeof plain);
    json_t *j = json_object();
    /* MSK Serverless serves IAM only; a provisioned cluster the strings of its client authentications */
    if (*iam) json_object_set_new(j, "bootstrapBrokerStringSaslIam", json_string(iam));
    if (!cl->serverless && *plain) json_object_set_new(j, "bootstrapBrokerString", json_string(plain));
    http_json(c->rs, 200, j);
    snprintf(c->rs->detail, sizeof c->rs->detail, "GetBootstrapBrokers %.60s sasl_iam=%.100s%s%.100s", cl->name,
             *iam ? iam : "-", !cl->serverless ? " plaintext=" : "", !cl->serverless ? (*plain ? plain : "-") : "");
}

/* MSK's operations this slice does not serve: named in the log line of their refusal. */
static const struct {
    const char *method, *prefix, *suffix, *op;
} not_served[] = {
    {"GET", "/v1/clusters/", "/nodes", "ListNodes"},
    {"GET", "/v1/clusters/", "/operations", "ListClusterOperations"},
    {"POST", "/v1/clusters", "", "CreateCluster"},
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


/* ListNodes: MSK's refusal on a serverless cluster; a provisioned one's nodes are not served yet. */
static void list_nodes(aws_call *c, const char *arn) {
    cluster *cl;
    if (!authorized(c, "ListNodes", arn) || !(cl = find_cluster(c, arn))) return;
    if (cl->serverless)
        aws_rest_error(c, 400, "BadRequestException", NULL, "This operation cannot be performed on serverless clusters.");
    else
        unknown_operation(c);
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
    else if (!strcmp(m, "POST") && !strcmp(path, "/api/v2/clusters"))
        kafka_create_cluster_v2(c);
    else if (get && path_arn(path, "/v1/clusters/", "/nodes", arn, sizeof arn))
        list_nodes(c, arn);
    else if (path_arn(path, "/v1/clusters/", "/policy", arn, sizeof arn) && get)
        kafka_get_cluster_policy(c, arn);
    else if (path_arn(path, "/v1/clusters/", "/policy", arn, sizeof arn) && !strcmp(m, "PUT"))
        kafka_put_cluster_policy(c, arn);
    else if (path_arn(path, "/v1/clusters/", "/policy", arn, sizeof arn) && !strcmp(m, "DELETE"))
        kafka_delete_cluster_policy(c, arn);
    else if (!strcmp(m, "DELETE") && path_arn(path, "/v1/clusters/", "", arn, sizeof arn))
        kafka_delete_cluster(c, arn);
    else if (path_arn(path, "/v1/tags/", "", arn, sizeof arn) && get)
        kafka_list_tags_for_resource(c, arn);
    else if (path_arn(path, "/v1/tags/", "", arn, sizeof arn) && !strcmp(m, "POST"))
        kafka_tag_resource(c, arn);
    else if (path_arn(path, "/v1/tags/", "", arn, sizeof arn) && !strcmp(m, "DELETE"))
        kafka_untag_resource(c, arn);
    else if (get && !strcmp(path, "/v1/clusters"))
        kafka_list_clusters(c);
    else if (get && kafka_v1_cluster_path(path, arn, sizeof arn))
        kafka_describe_cluster(c, arn);
    else if (get && !strcmp(path, "/v1/kafka-versions"))
        kafka_list_kafka_versions(c);
    else
        unknown_operation(c);
}

bool kafka_authorized(aws_call *c, const char *op, const char *resource) { return authorized(c, op, resource); }
cluster *kafka_cluster(aws_call *c, const char *arn) { return find_cluster(c, arn); }
bool kafka_known_cluster(aws_call *c, const char *arn) { return find_cluster(c, arn) != NULL; }
