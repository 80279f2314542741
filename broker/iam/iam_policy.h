/*
 * iam_policy: IAM identity-policy documents in AWS's own JSON form, and their evaluation
 * for MSK's data-plane actions (kafka-cluster:*), as IAM does it: an explicit Deny beats
 * an Allow, which beats the implicit deny. Pure: no I/O, no globals.
 * Spec: AWS's MSK action table (docs/msk-behaviors.md#authorization); AWS's IAM policy grammar.
 *
 * Accepted: Version ("2012-10-17" or "2008-10-17"), Id, Statement as one object or a list;
 * per statement Sid, Effect ("Allow" | "Deny"), Action or NotAction, Resource or
 * NotResource, each a string or a list of strings. Action names match case-insensitively,
 * with * and ?; resource ARNs case-sensitively, segment by segment: * and ? stay inside
 * one colon-separated segment, except a * that ends a segment, which may run on.
 *
 * Refused (with the document, statement and reason): bad types, unknown keys, an Effect
 * other than Allow/Deny, Principal/NotPrincipal (not allowed in identity policies), a
 * kafka-cluster action pattern that names no action (a typo would otherwise deny quietly),
 * a Resource that is neither "*" nor an MSK ARN of a cluster, topic, group or
 * transactional-id, a policy variable (${...}), and any Condition: mskmock evaluates none,
 * so a condition is named and refused rather than ignored. A statement whose actions all
 * belong to other services (kafka:GetBootstrapBrokers, s3:GetObject, ...) cannot affect a
 * Kafka request; it is kept out of evaluation and counted, so a team's policy file can be
 * used unchanged.
 *
 * The AWS APIs around a cluster (broker/aws/: kafka:DescribeClusterV2, sts:AssumeRole, ...)
 * are decided by iam_policy_eval_named, over every statement without a Condition (those of
 * other services only may carry one: they are left out of it), with the same precedence.
 */
#ifndef IAM_POLICY_H
#define IAM_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* MSK's data-plane actions (kafka-cluster:<name>). */
typedef enum iam_action {
    IAM_CONNECT,
    IAM_DESCRIBE_CLUSTER,
    IAM_ALTER_CLUSTER,
    IAM_DESCRIBE_CLUSTER_DYNAMIC_CONFIGURATION,
    IAM_ALTER_CLUSTER_DYNAMIC_CONFIGURATION,
    IAM_WRITE_DATA_IDEMPOTENTLY,
    IAM_CREATE_TOPIC,
    IAM_DESCRIBE_TOPIC,
    IAM_ALTER_TOPIC,
    IAM_DELETE_TOPIC,
    IAM_DESCRIBE_TOPIC_DYNAMIC_CONFIGURATION,
    IAM_ALTER_TOPIC_DYNAMIC_CONFIGURATION,
    IAM_READ_DATA,
    IAM_WRITE_DATA,
    IAM_DESCRIBE_GROUP,
    IAM_ALTER_GROUP,
    IAM_DELETE_GROUP,
    IAM_DESCRIBE_TRANSACTIONAL_ID,
    IAM_ALTER_TRANSACTIONAL_ID,
    IAM_ACTION_COUNT
} iam_action;

typedef enum iam_resource_type {
    IAM_RES_CLUSTER,
    IAM_RES_TOPIC,
    IAM_RES_GROUP,
    IAM_RES_TRANSACTIONAL_ID,
} iam_resource_type;

/* MSK's action table: the resource an action applies to and what it also requires. */
typedef struct iam_action_info {
    const char *name;           /* "kafka-cluster:ReadData" */
    iam_resource_type resource;
    uint32_t requires;          /* bits (1u << iam_action) of the actions it also needs */
} iam_action_info;

const iam_action_info *iam_action_get(iam_action a);
/* "topic" for IAM_RES_TOPIC: the resource-type word of MSK ARNs. */
const char *iam_resource_type_name(iam_resource_type t);

typedef struct iam_policy iam_policy;

/* An empty policy set: it allows nothing. */
iam_policy *iam_policy_new(void);
void iam_policy_free(iam_policy *p);

/*
 * Add one policy document. where names it in errors and decisions (a file name, or
 * "identities.json: identities[0].policies[1]"). Returns 0, or -1 with a reason naming
 * where, the statement and the element; nothing of a refused document is kept.
 */
int iam_policy_add(iam_policy *p, const json_t *doc, const char *where, char *err, size_t n);

size_t iam_policy_statement_count(const iam_policy *p); /* those that can affect Kafka */
size_t iam_policy_ignored_count(const iam_policy *p);   /* only other services' actions */

typedef enum iam_effect {
    IAM_IMPLICIT_DENY, /* no statement allowed it */
    IAM_ALLOW,
    IAM_EXPLICIT_DENY,
} iam_effect;

typedef struct iam_decision {
    iam_effect effect;
    const char *by; /* the deciding statement ("alice.json Statement[2] (Sid ReadOrders)"); NULL if implicit */
} iam_decision;

/* The decision for one action on one resource ARN. */
iam_decision iam_policy_eval(const iam_policy *p, iam_action a, const char *resource);

/*
 * The decision for the action on some resource whose ARN starts with arn_prefix (e.g. any
 * topic of the cluster: "arn:aws:kafka:<region>:<account>:topic/<name>/<uuid>/"): allowed
 * when an Allow statement can match such an ARN, unless a Deny statement matches every one.
 * What MSK's "also requires" needs when the request names no resource of that type
 * (WriteDataIdempotently needs WriteData on some topic).
 */
iam_decision iam_policy_eval_any(const iam_policy *p, iam_action a, const char *arn_prefix);

/* Glob of IAM: '*' any run, '?' one character; case-insensitive when nocase (actions). */
/*
 * An action named "<service>:<Action>" (kafka:DescribeClusterV2, sts:AssumeRole) on a resource ARN,
 * or "*" for actions without resource-level permissions (kafka:ListClustersV2: only a statement
 * whose Resource is "*" covers it), as IAM decides it: explicit Deny, then Allow, else implicit deny.
 */
iam_decision iam_policy_eval_named(const iam_policy *p, const char *action, const char *resource);
bool iam_glob(const char *pattern, const char *text, bool nocase);
/* ARN glob: as iam_glob, but wildcards stay inside a colon-separated segment unless a '*' ends it. */
bool iam_arn_glob(const char *pattern, const char *arn);

#endif
