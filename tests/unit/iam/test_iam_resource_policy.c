/*
 * iam_policy as a resource policy (a cluster policy): Principal matching as IAM does it within
 * an account (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_principal.html:
 * "*", an account id or its root ARN, a role and its sessions, a user, a session), its refusals,
 * and the join with an identity's decision (an explicit Deny in either wins, else an Allow in
 * either suffices: reference_policies_evaluation-logic.html).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "iam/iam_policy.h"

#define ARN "arn:aws:kafka:us-east-1:123456789012:"
#define CL "mskmock/8c1f1a3e-6b3e-4c1e-9d5b-2f0c6e8a9b10-s1"
#define CLUSTER ARN "cluster/" CL
#define TOPIC(t) ARN "topic/" CL "/" t

static const iam_principal alice = {"arn:aws:iam::123456789012:user/alice", NULL, "123456789012"};
static const iam_principal bob = {"arn:aws:iam::123456789012:user/bob", NULL, "123456789012"};
static const iam_principal app = {"arn:aws:sts::123456789012:assumed-role/app/s1", "arn:aws:iam::123456789012:role/app",
                                  "123456789012"};
static const iam_principal stranger = {"arn:aws:iam::999999999999:user/eve", NULL, "999999999999"};

static iam_policy *load(const char *text) {
    json_error_t je;
    json_t *doc = json_loads(text, 0, &je);
    if (!doc) fail_msg("bad test JSON: %s", je.text);
    iam_policy *p = iam_policy_new();
    char err[512] = "";
    if (iam_policy_add_resource(p, doc, "cluster policy", err, sizeof err) != 0) fail_msg("refused: %s", err);
    json_decref(doc);
    return p;
}

static void refused(const char *text, const char *want) {
    json_t *doc = json_loads(text, 0, NULL);
    assert_non_null(doc);
    iam_policy *p = iam_policy_new();
    char err[512] = "";
    int rc = iam_policy_add_resource(p, doc, "cluster policy", err, sizeof err);
    json_decref(doc);
    if (rc == 0) fail_msg("accepted, wanted a refusal with '%s': %s", want, text);
    if (!strstr(err, want)) fail_msg("error '%s' lacks '%s'", err, want);
    iam_policy_free(p);
}

/* The effect of the statements of rp that name who, for a data-plane action and a named one. */
static iam_effect data(const iam_policy *rp, const iam_principal *who, iam_action a, const char *arn) {
    iam_policy *v = iam_policy_for_principal(rp, who);
    iam_effect e = iam_policy_eval(v, a, arn).effect;
    iam_policy_free(v);
    return e;
}

static iam_effect named(const iam_policy *rp, const iam_principal *who, const char *action) {
    iam_policy *v = iam_policy_for_principal(rp, who);
    iam_effect e = iam_policy_eval_named(v, action, CLUSTER, NULL).effect;
    iam_policy_free(v);
    return e;
}

static void test_principals(void **state) {
    (void)state;
    iam_policy *p = load("{\"Version\": \"2012-10-17\", \"Statement\": ["
                         " {\"Effect\": \"Allow\", \"Principal\": {\"AWS\": \"arn:aws:iam::123456789012:user/alice\"},"
                         "  \"Action\": [\"kafka-cluster:Connect\", \"kafka-cluster:WriteData\"], \"Resource\": \"*\"},"
                         " {\"Effect\": \"Allow\", \"Principal\": {\"AWS\": [\"arn:aws:iam::123456789012:role/app\"]},"
                         "  \"Action\": \"kafka:GetBootstrapBrokers\", \"Resource\": \"" CLUSTER "\"},"
                         " {\"Effect\": \"Allow\", \"Principal\": {\"AWS\": \"123456789012\"},"
                         "  \"Action\": \"kafka:DescribeClusterV2\", \"Resource\": \"" CLUSTER "\"},"
                         " {\"Effect\": \"Allow\", \"Principal\": {\"AWS\": \"arn:aws:iam::123456789012:root\"},"
                         "  \"Action\": \"kafka-cluster:DescribeCluster\", \"Resource\": \"" CLUSTER "\"},"
                         " {\"Effect\": \"Allow\", \"Principal\": \"*\", \"Action\": \"kafka:ListNodes\", \"Resource\": \"*\"},"
                         " {\"Effect\": \"Allow\", \"Principal\": {\"AWS\": \"*\"}, \"Action\": \"kafka:GetClusterPolicy\","
                         "  \"Resource\": \"*\"},"
                         " {\"Effect\": \"Allow\", \"Principal\": {\"Service\": \"firehose.amazonaws.com\"},"
                         "  \"Action\": \"kafka:CreateVpcConnection\", \"Resource\": \"*\"},"
                         " {\"Effect\": \"Allow\", \"Principal\": {\"AWS\": "
                         "\"arn:aws:sts::123456789012:assumed-role/app/s2\"}, \"Action\": \"kafka:TagResource\", "
                         "\"Resource\": \"*\"}]}");
    /* a user ARN: that user only */
    assert_int_equal(data(p, &alice, IAM_WRITE_DATA, TOPIC("t")), IAM_ALLOW);
    assert_int_equal(data(p, &bob, IAM_WRITE_DATA, TOPIC("t")), IAM_IMPLICIT_DENY);
    /* a role ARN: its sessions; not a user */
    assert_int_equal(named(p, &app, "kafka:GetBootstrapBrokers"), IAM_ALLOW);
    assert_int_equal(named(p, &alice, "kafka:GetBootstrapBrokers"), IAM_IMPLICIT_DENY);
    /* an account id, or its root: every principal of the account, and no other account's */
    assert_int_equal(named(p, &bob, "kafka:DescribeClusterV2"), IAM_ALLOW);
    assert_int_equal(named(p, &app, "kafka:DescribeClusterV2"), IAM_ALLOW);
    assert_int_equal(named(p, &stranger, "kafka:DescribeClusterV2"), IAM_IMPLICIT_DENY);
    assert_int_equal(data(p, &app, IAM_DESCRIBE_CLUSTER, CLUSTER), IAM_ALLOW);
    assert_int_equal(data(p, &stranger, IAM_DESCRIBE_CLUSTER, CLUSTER), IAM_IMPLICIT_DENY);
    /* "*" and {"AWS": "*"}: everyone */
    assert_int_equal(named(p, &stranger, "kafka:ListNodes"), IAM_ALLOW);
    assert_int_equal(named(p, &stranger, "kafka:GetClusterPolicy"), IAM_ALLOW);
    /* a service principal is none of mskmock's callers */
    assert_int_equal(named(p, &alice, "kafka:CreateVpcConnection"), IAM_IMPLICIT_DENY);
    /* a session ARN: that session, not the role's other sessions */
    assert_int_equal(named(p, &app, "kafka:TagResource"), IAM_IMPLICIT_DENY);
    iam_principal s2 = {"arn:aws:sts::123456789012:assumed-role/app/s2", "arn:aws:iam::123456789012:role/app",
                        "123456789012"};
    assert_int_equal(named(p, &s2, "kafka:TagResource"), IAM_ALLOW);
    /* the label says which policy decided */
    iam_policy *v = iam_policy_for_principal(p, &alice);
    iam_decision d = iam_policy_eval(v, IAM_WRITE_DATA, TOPIC("t"));
    assert_string_equal(d.by, "cluster policy Statement[0]");
    iam_policy_free(v);
    iam_policy_free(p);
}

static void test_refusals(void **state) {
    (void)state;
    refused("{\"Statement\": [{\"Effect\": \"Allow\", \"Action\": \"kafka:*\", \"Resource\": \"*\"}]}",
            "a cluster policy statement names a Principal");
    refused("{\"Statement\": [{\"Effect\": \"Allow\", \"NotPrincipal\": \"*\", \"Action\": \"kafka:*\", "
            "\"Resource\": \"*\"}]}",
            "NotPrincipal is not evaluated by mskmock");
    refused("{\"Statement\": [{\"Effect\": \"Allow\", \"Principal\": \"alice\", \"Action\": \"kafka:*\", "
            "\"Resource\": \"*\"}]}",
            "Principal must be \"*\" or an object");
    refused("{\"Statement\": [{\"Effect\": \"Allow\", \"Principal\": {\"AWS\": \"arn:aws:iam::1:role/*\"}, "
            "\"Action\": \"kafka:*\", \"Resource\": \"*\"}]}",
            "IAM takes no wildcard in a principal ARN");
    refused("{\"Statement\": [{\"Effect\": \"Allow\", \"Principal\": {\"AWS\": \"arn:aws:s3:::bucket\"}, "
            "\"Action\": \"kafka:*\", \"Resource\": \"*\"}]}",
            "is neither \"*\", an account id nor the ARN");
    refused("{\"Statement\": [{\"Effect\": \"Allow\", \"Principal\": {\"Federated\": \"cognito-identity.amazonaws.com\"}, "
            "\"Action\": \"kafka:*\", \"Resource\": \"*\"}]}",
            "Principal type 'Federated' is not evaluated by mskmock");
    refused("{\"Statement\": [{\"Effect\": \"Allow\", \"Principal\": \"*\", \"Action\": \"kafka-cluster:Connect\", "
            "\"Resource\": \"*\", \"Condition\": {\"StringEquals\": {\"aws:PrincipalOrgID\": \"o-1\"}}}]}",
            "is not evaluated by mskmock on kafka-cluster: actions");
    /* identity policies still refuse a Principal */
    json_t *doc = json_loads("{\"Statement\": [{\"Effect\": \"Allow\", \"Principal\": \"*\", \"Action\": \"kafka:*\", "
                             "\"Resource\": \"*\"}]}",
                             0, NULL);
    iam_policy *p = iam_policy_new();
    char err[256];
    assert_int_equal(iam_policy_add(p, doc, "id.json", err, sizeof err), -1);
    assert_non_null(strstr(err, "Principal and NotPrincipal belong in resource policies"));
    json_decref(doc);
    iam_policy_free(p);
}

/* The join: identity x resource, every pair of effects. */
static void test_join(void **state) {
    (void)state;
    const iam_decision none = {IAM_IMPLICIT_DENY, NULL}, ia = {IAM_ALLOW, "id allow"}, id = {IAM_EXPLICIT_DENY, "id deny"},
                       ra = {IAM_ALLOW, "cluster policy allow"}, rd = {IAM_EXPLICIT_DENY, "cluster policy deny"};
    const struct {
        iam_decision i, r;
        iam_effect e;
        const char *by;
    } c[] = {
        {none, none, IAM_IMPLICIT_DENY, NULL},
        {ia, none, IAM_ALLOW, "id allow"},
        {none, ra, IAM_ALLOW, "cluster policy allow"}, /* a resource policy's Allow suffices in the account */
        {ia, ra, IAM_ALLOW, "id allow"},
        {ia, rd, IAM_EXPLICIT_DENY, "cluster policy deny"}, /* the cluster policy's Deny beats the identity's Allow */
        {id, ra, IAM_EXPLICIT_DENY, "id deny"},             /* and the identity's Deny the cluster policy's Allow */
        {id, rd, IAM_EXPLICIT_DENY, "id deny"},
        {none, rd, IAM_EXPLICIT_DENY, "cluster policy deny"},
        {id, none, IAM_EXPLICIT_DENY, "id deny"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        iam_decision d = iam_decision_join(c[i].i, c[i].r);
        if (d.effect != c[i].e || (c[i].by ? !d.by || strcmp(d.by, c[i].by) : d.by != NULL))
            fail_msg("case %zu: effect %d by %s", i, d.effect, d.by ? d.by : "(none)");
    }
}

/* A Deny for one principal in a cluster policy, joined with that principal's identity Allow. */
static void test_deny_wins_end_to_end(void **state) {
    (void)state;
    iam_policy *rp = load("{\"Statement\": [{\"Sid\": \"NoWrites\", \"Effect\": \"Deny\", \"Principal\": {\"AWS\": "
                          "\"arn:aws:iam::123456789012:user/alice\"}, \"Action\": \"kafka-cluster:WriteData\", "
                          "\"Resource\": \"" TOPIC("*") "\"}]}");
    json_t *doc = json_loads("{\"Statement\": [{\"Effect\": \"Allow\", \"Action\": \"kafka-cluster:*\", \"Resource\": "
                             "\"*\"}]}",
                             0, NULL);
    iam_policy *ip = iam_policy_new();
    char err[256];
    assert_int_equal(iam_policy_add(ip, doc, "alice.json", err, sizeof err), 0);
    json_decref(doc);
    iam_policy *va = iam_policy_for_principal(rp, &alice), *vb = iam_policy_for_principal(rp, &bob);
    iam_decision d = iam_decision_join(iam_policy_eval(ip, IAM_WRITE_DATA, TOPIC("t")),
                                       iam_policy_eval(va, IAM_WRITE_DATA, TOPIC("t")));
    assert_int_equal(d.effect, IAM_EXPLICIT_DENY);
    assert_string_equal(d.by, "cluster policy Statement[0] (Sid NoWrites)");
    d = iam_decision_join(iam_policy_eval(ip, IAM_WRITE_DATA, TOPIC("t")), iam_policy_eval(vb, IAM_WRITE_DATA, TOPIC("t")));
    assert_int_equal(d.effect, IAM_ALLOW);
    /* the "some topic" query sees the Deny too: it covers every topic of the cluster */
    d = iam_decision_join(iam_policy_eval_any(ip, IAM_WRITE_DATA, ARN "topic/" CL "/"),
                          iam_policy_eval_any(va, IAM_WRITE_DATA, ARN "topic/" CL "/"));
    assert_int_equal(d.effect, IAM_EXPLICIT_DENY);
    iam_policy_free(va);
    iam_policy_free(vb);
    iam_policy_free(ip);
    iam_policy_free(rp);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_principals),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_join),
        cmocka_unit_test(test_deny_wins_end_to_end),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
