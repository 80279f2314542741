/*
 * ListPartitionReassignments (key 46), v0: MSK Serverless serves it (topicctl probes it,
 * topicctl #69 and PR #70) while refusing AlterPartitionReassignments, so no
 * reassignment can ever be in progress and the answer is always an empty list. Kafka lists
 * only partitions being reassigned, so topics the request names, known or not, are absent.
 * IAM: kafka-cluster:DescribeCluster (Kafka's DESCRIBE on CLUSTER); a denial is the top-level
 * CLUSTER_AUTHORIZATION_FAILED.
 */
#include "api.h"

void api_list_partition_reassignments(srv *s, req *r) {
    kp_list_partition_reassignments_response *resp = req_resp(r);
    resp->error_code = api_authz(s, r, IAM_RES_CLUSTER, KP_STR_NULL);
    if (resp->error_code) resp->error_message = kp_str_c("Cluster authorization failed."); /* Kafka's text */
    req_respond(r, resp);
}
