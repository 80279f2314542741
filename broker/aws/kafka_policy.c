/*
 * kafka_policy: the `kafka` control plane's PutClusterPolicy, GetClusterPolicy and
 * DeleteClusterPolicy (PUT, GET and DELETE /v1/clusters/{clusterArn}/policy: botocore's
 * kafka/2018-11-14/service-2.json; https://docs.aws.amazon.com/msk/1.0/apireference/clusters-clusterarn-policy.html)
 * on the clusters kafka_api.c knows. The document is kept in the storage of the cluster it is for, as
 * sent (stor_cluster_policy_*), with a version PutClusterPolicy returns and takes back as
 * currentVersion (optimistic locking); a deleted cluster's goes with its storage.
 *
 * The document is checked as IAM checks one before storing it: a resource-based policy, so every
 * statement names a Principal, and the rest by iam_policy.h's grammar (which then refuses what
 * mskmock could not evaluate, a Condition on kafka-cluster: actions, an unknown condition key or
 * operator, rather than storing it to be ignored). Once stored it joins every decision on the
 * cluster, on the Kafka listeners and here (authz_set_cluster_policy; docs/control-plane.md);
 * authz_init takes the stored one at start.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws_call.h"
#include "iam/authz.h"
#include "iam/iam_policy.h"
#include "ids.h"
#include "stor.h"
#include "topic/topic.h"

/* MSK's cluster policies are small; IAM's own limit for a resource policy is in the tens of KiB. */
#define MAX_POLICY_BYTES 20480

/* A version as MSK writes them: 14 upper-case letters and digits. */
static void new_version(char out[15]) {
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    uint8_t r[16];
    ids_uuid4(r);
    for (int i = 0; i < 14; i++) out[i] = alphabet[r[i] % 36];
    out[14] = '\0';
}

/* Whether doc is a resource policy the grammar accepts; the reason in why when not. */
static bool valid_policy(const char *text, char *why, size_t cap) {
    json_error_t je;
    json_t *doc = json_loads(text, JSON_REJECT_DUPLICATES, &je);
    bool ok = false;
    if (!json_is_object(doc)) {
        snprintf(why, cap, "The policy is not a JSON object: %s", doc ? "another JSON value" : je.text);
    } else {
        iam_policy *pol = iam_policy_new();
        ok = iam_policy_add_resource(pol, doc, "policy", why, cap) == 0;
        iam_policy_free(pol);
    }
    json_decref(doc);
    return ok;
}

static bool commit(aws_call *c, srv *cs) {
    if (topic_commit_now(cs) == 0) return true;
    aws_rest_error(c, 500, "InternalServerErrorException", NULL, "Storing the cluster policy failed: %s",
                   stor_errmsg(cs->st));
    return false;
}

/*
 * The srv of the cluster arn names: its policy is its own (its storage, its decisions). NULL with a
 * 404 answered when no cluster serves under that ARN (none, or one being deleted).
 */
static srv *cluster_srv(aws_call *c, const char *arn) {
    cluster *cl = kafka_cluster(c, arn);
    if (!cl) return NULL;
    if (cl->s) return cl->s;
    aws_rest_error(c, 404, "NotFoundException", "clusterArn", "The specified cluster was not found. clusterArn: %s",
                   arn);
    return NULL;
}

void kafka_put_cluster_policy(aws_call *c, const char *arn) {
    srv *cs;
    if (!kafka_authorized(c, "PutClusterPolicy", arn) || !(cs = cluster_srv(c, arn))) return;
    stor *st = cs->st;
    json_error_t je;
    json_t *body = json_loadb(c->rq->body ? c->rq->body : "", c->rq->body_len, JSON_REJECT_DUPLICATES, &je);
    json_t *policy = json_object_get(body, "policy"), *current = json_object_get(body, "currentVersion"), *v;
    const char *field;
    char why[512], *old_policy = NULL, *old_version = NULL;
    if (!json_is_object(body)) {
        aws_rest_error(c, 400, "BadRequestException", NULL, "The request body is not a JSON object: %s", je.text);
        goto out;
    }
    json_object_foreach(body, field, v) {
        if (strcmp(field, "policy") && strcmp(field, "currentVersion")) {
            aws_rest_error(c, 400, "BadRequestException", field, "Unknown field %.64s.", field);
            goto out;
        }
    }
    if (!json_is_string(policy) || !json_string_length(policy) || json_string_length(policy) > MAX_POLICY_BYTES) {
        aws_rest_error(c, 400, "BadRequestException", "policy", "policy must be a JSON policy document of 1 to %d bytes.",
                       MAX_POLICY_BYTES);
        goto out;
    }
    if (current && !json_is_string(current)) {
        aws_rest_error(c, 400, "BadRequestException", "currentVersion", "currentVersion must be a string.");
        goto out;
    }
    if (!valid_policy(json_string_value(policy), why, sizeof why)) {
        aws_rest_error(c, 400, "BadRequestException", "policy", "The policy document is not valid: %s", why);
        goto out;
    }
    if (!st || stor_cluster_policy_get(st, arn, &old_policy, &old_version) < 0) {
        aws_rest_error(c, 500, "InternalServerErrorException", NULL, "Reading the cluster policy failed.");
        goto out;
    }
    if (current && (!old_version || strcmp(old_version, json_string_value(current)))) {
        aws_rest_error(c, 400, "BadRequestException", "currentVersion",
                       "currentVersion %.64s is not the cluster policy's current version.", json_string_value(current));
        goto out;
    }
    char version[15];
    new_version(version);
    if (stor_cluster_policy_put(st, arn, json_string_value(policy), version) != 0) {
        aws_rest_error(c, 500, "InternalServerErrorException", NULL, "Storing the cluster policy failed: %s",
                       stor_errmsg(st));
        goto out;
    }
    if (!commit(c, cs)) goto out;
    /* valid_policy read it as authz does: it is in force from this answer on */
    if (authz_set_cluster_policy(cs, json_string_value(policy), why, sizeof why) != 0) {
        aws_rest_error(c, 500, "InternalServerErrorException", NULL, "The stored cluster policy did not load: %s", why);
        goto out;
    }
    http_json(c->rs, 200, json_pack("{s:s}", "currentVersion", version));
    snprintf(c->rs->detail, sizeof c->rs->detail, "PutClusterPolicy version=%s (in force)", version);
out:
    free(old_policy), free(old_version);
    json_decref(body);
}

void kafka_get_cluster_policy(aws_call *c, const char *arn) {
    srv *cs;
    if (!kafka_authorized(c, "GetClusterPolicy", arn) || !(cs = cluster_srv(c, arn))) return;
    char *policy = NULL, *version = NULL;
    int rc = cs->st ? stor_cluster_policy_get(cs->st, arn, &policy, &version) : 0;
    if (rc < 0)
        aws_rest_error(c, 500, "InternalServerErrorException", NULL, "Reading the cluster policy failed: %s",
                       stor_errmsg(cs->st));
    else if (rc == 0)
        aws_rest_error(c, 404, "NotFoundException", "clusterArn", "The cluster has no cluster policy. clusterArn: %s",
                       arn);
    else {
        http_json(c->rs, 200, json_pack("{s:s, s:s}", "currentVersion", version, "policy", policy));
        snprintf(c->rs->detail, sizeof c->rs->detail, "GetClusterPolicy version=%s", version);
    }
    free(policy), free(version);
}

void kafka_delete_cluster_policy(aws_call *c, const char *arn) {
    srv *cs;
    if (!kafka_authorized(c, "DeleteClusterPolicy", arn) || !(cs = cluster_srv(c, arn))) return;
    if (!cs->st || stor_cluster_policy_delete(cs->st, arn) != 0) {
        aws_rest_error(c, 500, "InternalServerErrorException", NULL, "Deleting the cluster policy failed.");
        return;
    }
    if (!commit(c, cs)) return;
    char why[256];
    authz_set_cluster_policy(cs, NULL, why, sizeof why); /* removing never fails */
    http_json(c->rs, 200, json_object());
    snprintf(c->rs->detail, sizeof c->rs->detail, "DeleteClusterPolicy");
}
