/*
 * aws_authz: the decisions of the AWS APIs on aws.port (kafka:<Operation>, sts:AssumeRole): the
 * IAM condition context of a verified call (aws:SourceIp, aws:RequestedRegion, the principal's
 * keys, the time, the cluster's tags and the request's), and kafka:'s decision with AWS's
 * AccessDeniedException. Internal to aws/.
 */
#ifndef AWS_AUTHZ_H
#define AWS_AUTHZ_H

#include <stdbool.h>

#include "aws_call.h"
#include "iam/iam_policy.h"

/*
 * The condition context of call c on resource (a cluster's ARN gives aws:ResourceTag/<key>; op
 * "TagResource", "UntagResource" or "CreateClusterV2" the request's tags). The caller frees it.
 */
iam_ctx *aws_condition_context(aws_call *c, const char *op, const char *resource);

/* May the caller do kafka:<op> on resource? A 403 AccessDeniedException answered when not. */
bool aws_kafka_authorized(aws_call *c, const char *op, const char *resource);

#endif
