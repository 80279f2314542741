/*
 * aws_call: one verified request to the AWS APIs mskmock serves on aws.port (aws.c): the
 * `kafka` control plane (rest-json, kafka_api.c) and STS (the query protocol, sts.c). aws.c owns
 * the HTTP listener, finds which service a request is for from its SigV4 credential scope,
 * verifies the signature against the identities file, and hands the call to the service's
 * route with the caller known. Internal to aws/.
 */
#ifndef AWS_CALL_H
#define AWS_CALL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fleet.h"
#include "http/http.h"
#include "srv.h"

struct iam_cred;

/* MSK's cluster version is an opaque revision string; mskmock's clusters are never updated. */
#define KAFKA_CLUSTER_VERSION "K3AEGXETSR30VB"

typedef struct aws_call {
    srv *s;
    const http_req *rq;
    http_resp *rs;
    const struct iam_cred *cred; /* the verified caller's credentials (iam/iam_store.h) */
    const char *principal;       /* the caller's ARN (an assumed role's session ARN for STS credentials) */
    const char *account;         /* the caller's account id */
    const char *region;          /* from the credential scope */
    const char *request_id;      /* x-amzn-RequestId, also in the log line */
    int64_t started_ms;          /* wall clock when the broker started: the configured cluster's creation time */
    bool secure;                 /* the request came over HTTPS (aws.tls): IAM's aws:SecureTransport condition key */
} aws_call;

/*
 * A refusal as botocore reads a rest-json error: status, the x-amzn-errortype header (type),
 * and the body {"message": ..., "invalidParameter": ...} (invalid_parameter NULL: none). The
 * message goes to the log line too.
 */
void aws_rest_error(aws_call *c, int status, const char *type, const char *invalid_parameter, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* A refusal as botocore reads a query-protocol (STS) error: <ErrorResponse><Error><Type>Sender... */
void aws_query_error(aws_call *c, int status, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The services' routes (one per service; each answers every request it is given). */
void kafka_api_route(aws_call *c);
void sts_route(aws_call *c);

/*
 * kafka_api.c: may the caller do kafka:<op> on resource (a 403 answered when not); the cluster arn
 * names (a 404 answered, and NULL, when none does; kafka_known_cluster: whether one does).
 */
bool kafka_authorized(aws_call *c, const char *op, const char *resource);
cluster *kafka_cluster(aws_call *c, const char *arn);
bool kafka_known_cluster(aws_call *c, const char *arn);
/* ISO 8601 with milliseconds, UTC, as MSK writes creationTime. */
void kafka_iso_time(int64_t ms, char out[48]);
/* A list operation's maxResults and nextToken (a 400 answered, and false, when invalid), and its page of clusters. */
bool kafka_page(aws_call *c, int *max, uint64_t *from);
int kafka_page_clusters(aws_call *c, int max, uint64_t from, bool (*keep)(const cluster *, void *), void *ctx,
                        cluster **out, char next[32]);
/* kafka_clusters.c: CreateClusterV2 and DeleteCluster. */
void kafka_create_cluster_v2(aws_call *c);
void kafka_delete_cluster(aws_call *c, const char *arn);
/* kafka_tags.c: the tag operations on a cluster's ARN, and its tags as the Cluster shape's "tags" (a new object). */
void kafka_tag_resource(aws_call *c, const char *arn);
void kafka_untag_resource(aws_call *c, const char *arn);
void kafka_list_tags_for_resource(aws_call *c, const char *arn);
/* kafka_policy.c: the cluster policy operations on a cluster's ARN. */
void kafka_put_cluster_policy(aws_call *c, const char *arn);
void kafka_get_cluster_policy(aws_call *c, const char *arn);
void kafka_delete_cluster_policy(aws_call *c, const char *arn);
struct json_t;
struct json_t *kafka_tags_json(srv *s, const char *arn);
/*
 * AWS's tag rules over tags (an object), merged into merged (the resource's tags so far): true with
 * keys[i] = values[i] (at most KAFKA_MAX_TAGS, pointing into tags), or false with the refusal answered.
 */
#define KAFKA_MAX_TAGS 50
bool kafka_tags_check(aws_call *c, struct json_t *tags, struct json_t *merged, const char **keys, const char **values,
                      size_t *n);

/*
 * kafka_v1.c: the v1 cluster operations (DescribeCluster, ListClusters, ListKafkaVersions).
 * kafka_v1_cluster_path: whether path is GET /v1/clusters/{clusterArn} itself (not one of its
 * sub-resources), with the ARN into arn. kafka_cluster_v1_info: the v1 ClusterInfo of a
 * provisioned cluster (a new object); a Serverless cluster has none.
 */
bool kafka_v1_cluster_path(const char *path, char *arn, size_t cap);
void kafka_describe_cluster(aws_call *c, const char *arn);
void kafka_list_clusters(aws_call *c);
void kafka_list_kafka_versions(aws_call *c);
struct json_t *kafka_cluster_v1_info(aws_call *c, const cluster *cl);

/* kafka_versions.c: ListKafkaVersions's table, ascending, and the version a provisioned cluster runs. */
typedef struct kafka_version {
    const char *version; /* as the API spells it: "3.9.x", "4.1.x.kraft" */
    const char *status;  /* ACTIVE or DEPRECATED (past its end of support) */
} kafka_version;
extern const kafka_version kafka_versions[];
extern const size_t kafka_versions_n;
const char *kafka_cluster_kafka_version(const config *cfg);

#endif
