/*
 * authz: IAM authorization of requests, as MSK Serverless does it: every request after
 * authentication is decided by the principal's IAM policies (iam_policy.h), never by
 * Kafka ACLs.
 *
 * Which action a request needs on which resource is declared once per API, in the handler
 * table (api/table.c: one action per resource type the API touches). A handler names only
 * the resource ("this topic", "this group") and places the answer where its response wants
 * it; denials are TOPIC_AUTHORIZATION_FAILED (29), GROUP_AUTHORIZATION_FAILED (30),
 * CLUSTER_AUTHORIZATION_FAILED (31) or TRANSACTIONAL_ID_AUTHORIZATION_FAILED (53) by the
 * resource's type, each with one log line naming the principal, action, resource ARN and
 * the statement that decided (or that none allowed it).
 *
 * An action also needs what MSK's action table says it requires (ReadData: DescribeTopic
 * and AlterGroup; WriteDataIdempotently: WriteData; ...): on the same resource when it is of
 * the same type, else on some resource of that type. Connect is checked at SaslAuthenticate.
 *
 * Whose policies: an authenticated connection's credentials' (an identity or role without
 * "policies" is allowed everything, unless iam.authorization.default=deny), joined with the
 * statements of the cluster policy (PutClusterPolicy, authz_set_cluster_policy) whose Principal
 * names the caller: an explicit Deny in either wins, else an Allow in either suffices (authz.c's
 * decide2 says how an identity without policies fares). The plaintext listener has no principal
 * and is allowed everything, unless plaintext.principal names an identity or role whose
 * policies (and the cluster policy statements naming it) then apply.
 *
 * Resources: arn:aws:kafka:<iam.region>:<msk.account.id>:cluster/<msk.cluster.name>/<uuid>,
 * and topic/, group/, transactional-id/ + <name>/<uuid>/<resource name>. The uuid is
 * msk.cluster.uuid, or one made on first start and kept in storage.
 */
#ifndef AUTHZ_H
#define AUTHZ_H

#include <stdbool.h>
#include <stddef.h>

#include "iam_policy.h"
#include "net/req.h"

/* In the handler table: the action an API needs on each resource type, or AUTHZ_NONE. */
#define AUTHZ_NONE (-1)
#define AUTHZ_TYPES 4 /* iam_resource_type values */

/* After storage is open (the uuid is kept there): the cluster's ARNs, plaintext.principal. */
int authz_init(srv *s, char *err, size_t n);
void authz_close(srv *s); /* handles, before the loop ends */
void authz_free(srv *s);
/*
 * SIGHUP or the admin API (who names which, for the log): read iam.identities.file again; its
 * policies replace the current ones after iam.policy.propagation.ms, and every connection
 * decides afresh. A file that does not load changes nothing (logged). Returns 0, or -1 with the
 * reason in err when the file was refused.
 */
int authz_reload(srv *s, const char *who, char *err, size_t n);
const char *authz_cluster_arn(const srv *s);

/*
 * The cluster's resource-based policy (PutClusterPolicy's document; NULL: none), for this srv's
 * cluster only. Parsed as iam_policy_add_resource does; on success it replaces the one in force
 * and every connection decides afresh. Returns 0, or -1 with the reason in why (the one in force
 * stays). Called by aws/ on Put and Delete, and by authz_init with the stored one.
 */
int authz_set_cluster_policy(srv *s, const char *doc, char *why, size_t n);
bool authz_has_cluster_policy(const srv *s);
/* The label of the cluster policy's statements begins so ("cluster policy Statement[0] (Sid x)"). */
#define AUTHZ_CLUSTER_POLICY_LABEL "cluster policy"

/*
 * The AWS APIs' decision (aws/: kafka:<Operation>, sts:AssumeRole) for credentials cr: their
 * identity policies (none: allowed everything) joined with the cluster policy's statements naming
 * them when resource is this cluster's ARN, each statement's Condition evaluated in ctx.
 */
struct iam_cred;
iam_decision authz_named(srv *s, const struct iam_cred *cr, const char *action, const char *resource,
                         const iam_ctx *ctx);

/*
 * The request's decision on one resource of the given type (name ignored for the
 * cluster): 0, or the Kafka error code of a denial, logged once.
 */
int16_t authz_check(srv *s, req *r, iam_resource_type type, const char *name, size_t len);
/* The same decision for an action the caller names, without a log line (listings, authorized_operations). */
bool authz_allowed(srv *s, conn *c, iam_action a, const char *name, size_t len);

/* Drop the connection's cached decisions (at close, and when it authenticates again). */
void authz_forget(conn *c);

/*
 * Kafka's authorized_operations bit field (Metadata, DescribeGroups, DescribeCluster) for a
 * resource: the AclOperations (READ 3, WRITE 4, CREATE 5, DELETE 6, ALTER 7, DESCRIBE 8,
 * DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11, IDEMPOTENT_WRITE 12) whose IAM action the
 * connection's policies allow on it.
 */
int32_t authz_operations(srv *s, conn *c, iam_resource_type type, const char *name, size_t len);

/*
 * At SaslAuthenticate: may the principal of these policies (NULL: none, allowed everything),
 * whose credentials are access_key_id (for the cluster policy), connect? true, or false with the
 * reason in why.
 */
bool authz_connect(srv *s, const struct iam_policy *policy, const char *access_key_id, char *why, size_t n);

#endif
