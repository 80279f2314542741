/*
 * aws_authz: the AWS APIs' authorization; see aws_authz.h. The context holds only what the
 * request and the broker know for certain, each key as IAM gives it
 * (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_condition-keys.html):
 * a key that has no value for this request (aws:RequestTag/... on a GetBootstrapBrokers) is
 * absent, as on AWS, so that ...IfExists and Null see it so.
 */
#include "aws_authz.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "fleet.h"
#include "iam/authz.h"
#include "iam/iam_store.h"
#include "iam/sasl.h"

static void add_tags(iam_ctx *x, const char *prefix, json_t *tags) {
    const char *k;
    json_t *v;
    char key[300];
    json_object_foreach(tags, k, v) {
        if (!json_is_string(v)) continue;
        snprintf(key, sizeof key, "%s%s", prefix, k);
        iam_ctx_add(x, key, json_string_value(v));
        if (!strcmp(prefix, "aws:RequestTag/")) iam_ctx_add(x, "aws:TagKeys", k);
    }
}

/* The srv of the cluster resource names (each cluster holds its own policy), else the listener's. */
static srv *resource_srv(aws_call *c, const char *resource, bool *is_cluster) {
    cluster *cl = resource && c->s->fleet ? fleet_find_arn(c->s->fleet, resource) : NULL;
    *is_cluster = cl != NULL;
    return cl && cl->s ? cl->s : c->s;
}

static bool add_tag_key(void *ctx, const char *key) {
    iam_ctx_add(ctx, "aws:TagKeys", key);
    return true;
}

iam_ctx *aws_condition_context(aws_call *c, const char *op, const char *resource) {
    iam_ctx *x = iam_ctx_new();
    /* the peer is "host:port" (net_peer_name), an IPv6 host unbracketed */
    const char *peer = c->rq->peer ? c->rq->peer : "", *colon = strrchr(peer, ':');
    char ip[64];
    snprintf(ip, sizeof ip, "%.*s", colon ? (int)(colon - peer) : (int)strlen(peer), peer);
    if (*ip && strcmp(ip, "?")) iam_ctx_add(x, "aws:SourceIp", ip);
    iam_ctx_add(x, "aws:RequestedRegion", c->region);
    /* true over HTTPS (aws.tls) */
    iam_ctx_add(x, "aws:SecureTransport", c->secure ? "true" : "false");

    const iam_cred *cr = c->cred;
    const char *role_arn = cr->role ? iam_store_role_arn(sasl_identities(c->s), cr->role) : NULL;
    bool root = strlen(cr->principal) > 5 && !strcmp(cr->principal + strlen(cr->principal) - 5, ":root");
    /* an assumed-role session's aws:PrincipalArn is its role's ARN, not the session's */
    iam_ctx_add(x, "aws:PrincipalArn", role_arn ? role_arn : cr->principal);
    iam_ctx_add(x, "aws:PrincipalAccount", c->account);
    iam_ctx_add(x, "aws:PrincipalType", cr->role || strstr(cr->principal, ":assumed-role/") ? "AssumedRole"
                                        : root                                             ? "Account"
                                                                                           : "User");

    int64_t now = clk_now_ms();
    time_t t = (time_t)(now / 1000);
    struct tm tm;
    char when[32];
    gmtime_r(&t, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    iam_ctx_add(x, "aws:CurrentTime", when);
    snprintf(when, sizeof when, "%lld", (long long)(now / 1000));
    iam_ctx_add(x, "aws:EpochTime", when);

    bool is_cluster;
    resource_srv(c, resource, &is_cluster);
    if (is_cluster) {
        json_t *tags = kafka_tags_json(c->s, resource); /* kafka_tags.c keeps every cluster's tags there */
        add_tags(x, "aws:ResourceTag/", tags);
        json_decref(tags);
    }
    if (op && (!strcmp(op, "TagResource") || !strcmp(op, "CreateClusterV2"))) {
        json_t *body = json_loadb(c->rq->body ? c->rq->body : "", c->rq->body_len, 0, NULL);
        json_t *tags = json_object_get(body, "tags");
        if (json_is_object(tags)) add_tags(x, "aws:RequestTag/", tags);
        json_decref(body);
    } else if (op && !strcmp(op, "UntagResource")) {
        /* ?tagKeys=a&tagKeys=b: the keys to remove are the request's aws:TagKeys */
        http_query_each(c->rq->query, "tagKeys", add_tag_key, x);
    }
    return x;
}

bool aws_kafka_authorized(aws_call *c, const char *op, const char *resource) {
    char action[80];
    snprintf(action, sizeof action, "kafka:%s", op);
    iam_ctx *ctx = aws_condition_context(c, op, resource);
    bool is_cluster;
    srv *cs = resource_srv(c, resource, &is_cluster);
    iam_decision d = authz_named(cs, c->cred, action, resource, ctx);
    iam_ctx_free(ctx);
    if (d.effect == IAM_ALLOW) return true;
    bool explicit_deny = d.effect == IAM_EXPLICIT_DENY;
    bool by_cluster = explicit_deny && d.by && !strncmp(d.by, AUTHZ_CLUSTER_POLICY_LABEL, strlen(AUTHZ_CLUSTER_POLICY_LABEL));
    bool has_cluster = !strcmp(resource, authz_cluster_arn(cs)) && authz_has_cluster_policy(cs);
    /* AWS's wording (https://docs.aws.amazon.com/IAM/latest/UserGuide/troubleshoot_access-denied.html) */
    aws_rest_error(c, 403, "AccessDeniedException", NULL, "User: %s is not authorized to perform: %s on resource: %s%s",
                   c->principal, action, resource,
                   !explicit_deny ? ""
                   : by_cluster   ? " with an explicit deny in a resource-based policy"
                                  : " with an explicit deny in an identity-based policy");
    char why[640];
    snprintf(why, sizeof why, "AccessDeniedException: %s %s%.200s on %.200s", action,
             explicit_deny ? "denied by "
             : has_cluster ? "allowed by no statement of the caller's policies nor of the cluster policy"
                           : "allowed by no statement of the caller's policies",
             explicit_deny ? d.by : "", resource);
    snprintf(c->rs->detail, sizeof c->rs->detail, "%.*s", (int)sizeof c->rs->detail - 1, why);
    return false;
}
