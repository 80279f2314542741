/*
 * kafka_v1: the `kafka` control plane's v1 cluster operations, which predate MSK Serverless and
 * describe a provisioned cluster only (botocore's kafka/2018-11-14/service-2.json,
 * https://docs.aws.amazon.com/msk/1.0/apireference/clusters.html):
 *   DescribeCluster    GET /v1/clusters/{clusterArn}                   kafka:DescribeCluster on the ARN
 *   ListClusters       GET /v1/clusters?clusterNameFilter&maxResults&nextToken   kafka:ListClusters on *
 *   ListKafkaVersions  GET /v1/kafka-versions?maxResults&nextToken     kafka:ListKafkaVersions on *
 * (the listings have no resource-level permissions:
 * https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonmanagedstreamingforapachekafka.html).
 *
 * Serverless through v1, from the best evidence there is: ListClusters lists provisioned clusters
 * only, ListClustersV2 both (users who found their Serverless clusters missing from it:
 * https://github.com/mlevit/aws-auto-cleanup/issues/113,
 * https://github.com/cloud-custodian/cloud-custodian/issues/7997). What DescribeCluster answers on
 * a Serverless ARN no public report shows; mskmock answers as MSK answers the other provisioned-only
 * operations on one (ListNodes: https://github.com/hashicorp/terraform-provider-aws/issues/32472,
 * UpdateClusterConfiguration, GetCompatibleKafkaVersions): 400 BadRequestException "This operation
 * cannot be performed on serverless clusters.". Uncertain; docs/control-plane.md says so too.
 *
 * The ClusterInfo holds the facts kafka_api.c's DescribeClusterV2 gives (ARN, name, creation,
 * state, tags, brokers, the client authentications of the listeners that are on) and those a v1
 * client reads besides (Terraform's aws_msk_cluster data source: kafka_version,
 * number_of_broker_nodes, zookeeper_connect_string): the Kafka version is the one it was created
 * with, or kafka.version's (kafka_versions.c), a KRaft one, so no zookeeperConnectString; no fact is made up (no instance type, subnets or KMS
 * key: mskmock has none).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws_call.h"

#define MAX_RESULTS 100

/*
 * The v1 ClusterInfo is flat: the provisioned object of DescribeClusterV2 (as created, or as the
 * configured cluster's listeners say) with the cluster's own fields beside it.
 */
json_t *kafka_cluster_v1_info(aws_call *c, const cluster *cl) {
    if (cl->serverless) return NULL;
    char created[48];
    kafka_iso_time(cl->primary ? c->started_ms : cl->created_ms, created); /* the configured cluster exists from start */
    json_error_t je;
    json_t *info = cl->info ? json_loads(cl->info, 0, &je) : NULL;
    if (!info) {
        const char *client_broker = cl->iam && cl->unauthenticated ? "TLS_PLAINTEXT" : cl->iam ? "TLS" : "PLAINTEXT";
        info = json_pack("{s:i, s:{s:{s:{s:b}}, s:{s:b}}, s:{s:[], s:[], s:s}, s:{s:{s:s}}}", "numberOfBrokerNodes",
                         cl->brokers, "clientAuthentication", "sasl", "iam", "enabled", cl->iam, "unauthenticated",
                         "enabled", cl->unauthenticated,
                         /* no VPC: the lists are empty, as the Serverless vpcConfigs of DescribeClusterV2 are */
                         "brokerNodeGroupInfo", "clientSubnets", "securityGroups", "brokerAZDistribution", "DEFAULT",
                         /* the IAM listener is TLS, the plaintext one not: MSK's ClientBroker of such a cluster */
                         "encryptionInfo", "encryptionInTransit", "clientBroker", client_broker);
    }
    json_object_update_missing_new(info, json_pack("{s:{s:s}, s:s, s:s}", "currentBrokerSoftwareInfo", "kafkaVersion",
                                                   *cl->kafka_version ? cl->kafka_version : kafka_cluster_kafka_version(c->s->cfg),
                                                   "enhancedMonitoring", "DEFAULT", "storageMode", "LOCAL"));
    json_object_update_new(info, json_pack("{s:s, s:s, s:s, s:s, s:s, s:o}", "clusterArn", cl->arn, "clusterName",
                                           cl->name, "creationTime", created, "currentVersion", KAFKA_CLUSTER_VERSION,
                                           "state", cluster_state_name(cluster_state_now(cl)), "tags",
                                           kafka_tags_json(c->s, cl->arn)));
    return info;
}

bool kafka_v1_cluster_path(const char *path, char *arn, size_t cap) {
    static const char prefix[] = "/v1/clusters/";
    if (strncmp(path, prefix, sizeof prefix - 1) != 0) return false;
    const char *rest = path + sizeof prefix - 1;
    size_t n = strlen(rest), slashes = 0;
    for (const char *p = rest; *p; p++) slashes += *p == '/';
    /* a cluster ARN holds two '/' (cluster/<name>/<uuid>); a third starts a sub-resource (/nodes, /operations, ...) */
    if (!n || n >= cap || slashes > 2) return false;
    memcpy(arn, rest, n + 1);
    return true;
}

/*
 * The page [*from, *to) of ListKafkaVersions's table (n items that never change, so an offset can
 * be a token; clusters come and go, and their lists page by creation order: kafka_page), from the
 * request's maxResults (1 to 100; absent: all) and nextToken (one this operation handed out:
 * "<op>.<offset of the next item>"), and the token of the page after it into next ("" on the
 * last). False with the refusal answered.
 */
static bool page(aws_call *c, const char *op, size_t n, size_t *from, size_t *to, char next[96]) {
    const char *q = c->rq->query;
    char max[16] = "", token[96] = "";
    size_t limit = n;
    if (http_query_get(q, "maxResults", max, sizeof max)) {
        char *end;
        long m = strtol(max, &end, 10);
        if (!*max || *end || m < 1 || m > MAX_RESULTS) {
            aws_rest_error(c, 400, "BadRequestException", "maxResults", "maxResults must be between 1 and %d.",
                           MAX_RESULTS);
            return false;
        }
        limit = (size_t)m;
    }
    *from = 0;
    if (http_query_get(q, "nextToken", token, sizeof token) && *token) {
        size_t ol = strlen(op);
        const char *digits = token + ol + 1;
        char *end = NULL;
        unsigned long off = 0;
        bool ok = !strncmp(token, op, ol) && token[ol] == '.' && *digits >= '1' && *digits <= '9';
        if (ok) off = strtoul(digits, &end, 10);
        /* a token points inside the list, past its first item: any other was never handed out */
        if (!ok || *end || off >= n) {
            aws_rest_error(c, 400, "BadRequestException", "nextToken", "The nextToken is not valid.");
            return false;
        }
        *from = off;
    }
    *to = n - *from > limit ? *from + limit : n;
    next[0] = '\0';
    if (*to < n) snprintf(next, 96, "%s.%zu", op, *to);
    return true;
}

void kafka_describe_cluster(aws_call *c, const char *arn) {
    cluster *cl;
    if (!kafka_authorized(c, "DescribeCluster", arn) || !(cl = kafka_cluster(c, arn))) return;
    json_t *info = kafka_cluster_v1_info(c, cl);
    if (!info) {
        aws_rest_error(c, 400, "BadRequestException", NULL, "This operation cannot be performed on serverless clusters.");
        return;
    }
    http_json(c->rs, 200, json_pack("{s:o}", "clusterInfo", info));
    snprintf(c->rs->detail, sizeof c->rs->detail, "DescribeCluster %s", cluster_state_name(cluster_state_now(cl)));
}

/* v1 lists provisioned clusters only, those whose names start with the filter */
static bool v1_keep(const cluster *cl, void *name) {
    return !cl->serverless && !strncmp(cl->name, name, strlen(name));
}

void kafka_list_clusters(aws_call *c) {
    if (!kafka_authorized(c, "ListClusters", "*")) return;
    char name[256] = "", next[32];
    http_query_get(c->rq->query, "clusterNameFilter", name, sizeof name);
    int max;
    uint64_t from;
    if (!kafka_page(c, &max, &from)) return;
    cluster *page[100];
    int n = kafka_page_clusters(c, max, from, v1_keep, name, page, next);
    json_t *list = json_array();
    for (int i = 0; i < n; i++) json_array_append_new(list, kafka_cluster_v1_info(c, page[i]));
    json_t *j = json_pack("{s:o}", "clusterInfoList", list);
    if (*next) json_object_set_new(j, "nextToken", json_string(next));
    http_json(c->rs, 200, j);
    snprintf(c->rs->detail, sizeof c->rs->detail, "ListClusters clusters=%d%s%s", n, *next ? " next=" : "", next);
}

void kafka_list_kafka_versions(aws_call *c) {
    if (!kafka_authorized(c, "ListKafkaVersions", "*")) return;
    size_t from, to;
    char next[96];
    if (!page(c, "ListKafkaVersions", kafka_versions_n, &from, &to, next)) return;
    json_t *list = json_array();
    for (size_t i = from; i < to; i++)
        json_array_append_new(list, json_pack("{s:s, s:s}", "version", kafka_versions[i].version, "status",
                                              kafka_versions[i].status));
    json_t *j = json_pack("{s:o}", "kafkaVersions", list);
    if (*next) json_object_set_new(j, "nextToken", json_string(next));
    http_json(c->rs, 200, j);
    snprintf(c->rs->detail, sizeof c->rs->detail, "ListKafkaVersions versions=%zu%s%s", to - from,
             *next ? " next=" : "", next);
}
