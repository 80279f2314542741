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
 * transactional-id, a policy variable (${...}), and a Condition on a statement with
 * kafka-cluster actions (MSK's data plane has no condition context mskmock gives). A
 * statement whose actions all belong to other services (kafka:GetBootstrapBrokers,
 * s3:GetObject, ...) cannot affect a Kafka request; it is kept out of evaluation and counted,
 * so a team's policy file can be used unchanged.
 *
 * The AWS APIs around a cluster (broker/aws/: kafka:DescribeClusterV2, sts:AssumeRole, ...)
 * are decided by iam_policy_eval_named, with the same precedence, over the statements whose
 * Condition (iam_condition.h) holds in the request's context. A Condition on a statement that
 * may name a kafka: or sts: action must be one iam_condition.h evaluates, or the document is
 * refused naming the operator or key; one on other services' statements only is never read.
 *
 * Resource policies (a cluster policy, iam_policy_add_resource): every statement names a
 * Principal ("*", {"AWS": ...} with account ids, account root, user, role or assumed-role
 * session ARNs, {"Service": ...}); iam_policy_for_principal keeps the statements that apply
 * to one caller, as an identity-policy set the same evaluators take.
 */
#ifndef IAM_POLICY_H
#define IAM_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "iam_condition.h"

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
/* The same for a resource-based policy: every statement needs a Principal (NotPrincipal is refused). */
int iam_policy_add_resource(iam_policy *p, const json_t *doc, const char *where, char *err, size_t n);

/* Who is asking, for a resource policy's Principal. */
typedef struct iam_principal {
    const char *arn;      /* the caller's ARN: a user's, or an assumed-role session's */
    const char *role_arn; /* the role of an assumed-role session (arn:aws:iam::<account>:role/...), or NULL */
    const char *account;  /* the caller's account id */
} iam_principal;

/*
 * The statements of resource policy rp whose Principal matches who, as a new policy set
 * (labels kept) that the evaluators below take like an identity policy. The caller frees it.
 */
iam_policy *iam_policy_for_principal(const iam_policy *rp, const iam_principal *who);

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

/*
 * An identity-based decision joined with a resource-based one (a cluster policy's), as IAM joins
 * them within one account (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_evaluation-logic.html):
 * an explicit Deny in either wins (the identity's first), else an Allow in either suffices, else
 * the implicit deny.
 */
iam_decision iam_decision_join(iam_decision identity, iam_decision resource);
/*
 * The same across accounts (the caller's account is not the resource's): both must allow, an
 * explicit Deny in either still winning (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_evaluation-logic-cross-account.html).
 */
iam_decision iam_decision_join_cross(iam_decision identity, iam_decision resource);

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
 * A statement with a Condition counts only when it holds in ctx (NULL: an empty context).
 */
iam_decision iam_policy_eval_named(const iam_policy *p, const char *action, const char *resource, const iam_ctx *ctx);
bool iam_glob(const char *pattern, const char *text, bool nocase);
/* ARN glob: as iam_glob, but wildcards stay inside a colon-separated segment unless a '*' ends it. */
bool iam_arn_glob(const char *pattern, const char *arn);

#endif
