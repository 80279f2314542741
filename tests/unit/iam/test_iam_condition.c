/*
 * iam_condition: every operator both ways (holds, does not hold) against a context, from
 * AWS's documented semantics (reference_policies_elements_condition_operators.html): IfExists,
 * the absent key for positive and negated operators, Null, ForAnyValue/ForAllValues over a
 * multi-valued key, and the refusals of what mskmock does not evaluate; then the conditions in
 * a policy's kafka: and sts: statements, and in a statement of other services only.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "iam/iam_condition.h"
#include "iam/iam_policy.h"

#define CLUSTER "arn:aws:kafka:us-east-1:123456789012:cluster/mskmock/8c1f1a3e-6b3e-4c1e-9d5b-2f0c6e8a9b10-s1"

static iam_ctx *ctx_of(void) {
    iam_ctx *x = iam_ctx_new();
    iam_ctx_add(x, "aws:SourceIp", "10.1.2.3");
    iam_ctx_add(x, "aws:RequestedRegion", "us-east-1");
    iam_ctx_add(x, "aws:PrincipalArn", "arn:aws:iam::123456789012:role/app");
    iam_ctx_add(x, "aws:PrincipalAccount", "123456789012");
    iam_ctx_add(x, "aws:PrincipalType", "AssumedRole");
    iam_ctx_add(x, "aws:SecureTransport", "false");
    iam_ctx_add(x, "aws:CurrentTime", "2026-06-15T12:00:00Z");
    iam_ctx_add(x, "aws:EpochTime", "1781524800"); /* the same moment */
    iam_ctx_add(x, "aws:ResourceTag/team", "payments");
    iam_ctx_add(x, "aws:RequestTag/env", "dev");
    iam_ctx_add(x, "aws:TagKeys", "env");
    iam_ctx_add(x, "aws:TagKeys", "team");
    return x;
}

/* Does the Condition (JSON text) hold in the test context? The test fails if it does not parse. */
static bool holds(const char *cond) {
    json_error_t je;
    json_t *j = json_loads(cond, 0, &je);
    if (!j) fail_msg("bad test JSON %s: %s", cond, je.text);
    iam_cond *c = NULL;
    char err[512] = "";
    if (iam_cond_parse(j, &c, err, sizeof err) != 0) fail_msg("refused %s: %s", cond, err);
    json_decref(j);
    iam_ctx *x = ctx_of();
    bool r = iam_cond_eval(c, x);
    iam_ctx_free(x);
    iam_cond_free(c);
    return r;
}

static void check(const char *cond, bool want) {
    if (holds(cond) != want) fail_msg("%s: wanted %s", cond, want ? "true" : "false");
}

static void refused(const char *cond, const char *want) {
    json_t *j = json_loads(cond, 0, NULL);
    assert_non_null(j);
    iam_cond *c = NULL;
    char err[512] = "";
    int rc = iam_cond_parse(j, &c, err, sizeof err);
    json_decref(j);
    if (rc == 0) fail_msg("accepted %s, wanted a refusal with '%s'", cond, want);
    if (!strstr(err, want)) fail_msg("error '%s' lacks '%s'", err, want);
    assert_null(c);
}

static void test_strings(void **state) {
    (void)state;
    check("{\"StringEquals\": {\"aws:RequestedRegion\": \"us-east-1\"}}", true);
    check("{\"StringEquals\": {\"aws:RequestedRegion\": \"US-EAST-1\"}}", false); /* case matters */
    check("{\"StringEquals\": {\"aws:RequestedRegion\": [\"eu-west-1\", \"us-east-1\"]}}", true); /* values: OR */
    check("{\"StringNotEquals\": {\"aws:RequestedRegion\": \"eu-west-1\"}}", true);
    check("{\"StringNotEquals\": {\"aws:RequestedRegion\": [\"eu-west-1\", \"us-east-1\"]}}", false); /* none may match */
    check("{\"StringEqualsIgnoreCase\": {\"aws:RequestedRegion\": \"US-EAST-1\"}}", true);
    check("{\"StringEqualsIgnoreCase\": {\"aws:RequestedRegion\": \"US-WEST-2\"}}", false);
    check("{\"StringNotEqualsIgnoreCase\": {\"aws:RequestedRegion\": \"US-WEST-2\"}}", true);
    check("{\"StringNotEqualsIgnoreCase\": {\"aws:RequestedRegion\": \"US-EAST-1\"}}", false);
    check("{\"StringLike\": {\"aws:RequestedRegion\": \"us-*\"}}", true);
    check("{\"StringLike\": {\"aws:RequestedRegion\": \"eu-?ast-1\"}}", false);
    check("{\"StringNotLike\": {\"aws:RequestedRegion\": \"eu-*\"}}", true);
    check("{\"StringNotLike\": {\"aws:RequestedRegion\": \"us-*\"}}", false);
    /* key names ignore case, as IAM's do */
    check("{\"StringEquals\": {\"AWS:requestedregion\": \"us-east-1\"}}", true);
    check("{\"StringEquals\": {\"aws:ResourceTag/team\": \"payments\"}}", true);
    check("{\"StringEquals\": {\"aws:ResourceTag/team\": \"orders\"}}", false);
}

static void test_arns(void **state) {
    (void)state;
    check("{\"ArnEquals\": {\"aws:PrincipalArn\": \"arn:aws:iam::123456789012:role/app\"}}", true);
    check("{\"ArnEquals\": {\"aws:PrincipalArn\": \"arn:aws:iam::123456789012:role/other\"}}", false);
    check("{\"ArnLike\": {\"aws:PrincipalArn\": \"arn:aws:iam::*:role/a*\"}}", true);
    check("{\"ArnLike\": {\"aws:PrincipalArn\": \"arn:aws:iam::*:user/*\"}}", false);
    check("{\"ArnNotEquals\": {\"aws:PrincipalArn\": \"arn:aws:iam::123456789012:role/other\"}}", true);
    check("{\"ArnNotEquals\": {\"aws:PrincipalArn\": \"arn:aws:iam::123456789012:role/app\"}}", false);
    check("{\"ArnNotLike\": {\"aws:PrincipalArn\": \"arn:aws:iam::*:user/*\"}}", true);
    check("{\"ArnNotLike\": {\"aws:PrincipalArn\": \"arn:aws:iam::*:role/*\"}}", false);
}

static void test_numbers_and_dates(void **state) {
    (void)state;
    check("{\"NumericEquals\": {\"aws:EpochTime\": 1781524800}}", true);
    check("{\"NumericEquals\": {\"aws:EpochTime\": \"1781524801\"}}", false);
    check("{\"NumericNotEquals\": {\"aws:EpochTime\": 1}}", true);
    check("{\"NumericNotEquals\": {\"aws:EpochTime\": 1781524800}}", false);
    check("{\"NumericLessThan\": {\"aws:EpochTime\": 1781524801}}", true);
    check("{\"NumericLessThan\": {\"aws:EpochTime\": 1781524800}}", false);
    check("{\"NumericLessThanEquals\": {\"aws:EpochTime\": 1781524800}}", true);
    check("{\"NumericLessThanEquals\": {\"aws:EpochTime\": 1781524799.5}}", false);
    check("{\"NumericGreaterThan\": {\"aws:EpochTime\": 1781524799}}", true);
    check("{\"NumericGreaterThan\": {\"aws:EpochTime\": 1781524800}}", false);
    check("{\"NumericGreaterThanEquals\": {\"aws:EpochTime\": 1781524800}}", true);
    check("{\"NumericGreaterThanEquals\": {\"aws:EpochTime\": 1781524801}}", false);

    check("{\"DateEquals\": {\"aws:CurrentTime\": \"2026-06-15T12:00:00Z\"}}", true);
    check("{\"DateEquals\": {\"aws:CurrentTime\": \"2026-06-15T14:00:00+02:00\"}}", true); /* the same instant */
    check("{\"DateEquals\": {\"aws:CurrentTime\": \"2026-06-15\"}}", false);
    check("{\"DateNotEquals\": {\"aws:CurrentTime\": \"2026-06-15\"}}", true);
    check("{\"DateNotEquals\": {\"aws:CurrentTime\": \"1781524800\"}}", false); /* epoch seconds are dates too */
    check("{\"DateLessThan\": {\"aws:CurrentTime\": \"2027-01-01T00:00:00Z\"}}", true);
    check("{\"DateLessThan\": {\"aws:CurrentTime\": \"2026-01-01T00:00:00Z\"}}", false);
    check("{\"DateLessThanEquals\": {\"aws:CurrentTime\": \"2026-06-15T12:00:00.000Z\"}}", true);
    check("{\"DateLessThanEquals\": {\"aws:CurrentTime\": \"2026-06-15T11:59:59Z\"}}", false);
    check("{\"DateGreaterThan\": {\"aws:CurrentTime\": \"2026-06-15\"}}", true);
    check("{\"DateGreaterThan\": {\"aws:CurrentTime\": \"2026-06-16\"}}", false);
    check("{\"DateGreaterThanEquals\": {\"aws:EpochTime\": \"2026-06-15T12:00:00Z\"}}", true);
    check("{\"DateGreaterThanEquals\": {\"aws:EpochTime\": \"2026-06-15T12:00:01Z\"}}", false);
}

static void test_bool_ip_null(void **state) {
    (void)state;
    check("{\"Bool\": {\"aws:SecureTransport\": \"false\"}}", true);
    check("{\"Bool\": {\"aws:SecureTransport\": true}}", false);
    check("{\"IpAddress\": {\"aws:SourceIp\": \"10.0.0.0/8\"}}", true);
    check("{\"IpAddress\": {\"aws:SourceIp\": [\"192.168.0.0/16\", \"10.1.2.3\"]}}", true);
    check("{\"IpAddress\": {\"aws:SourceIp\": \"10.1.2.0/31\"}}", false);
    check("{\"IpAddress\": {\"aws:SourceIp\": \"::/0\"}}", false); /* an IPv4 peer is not in an IPv6 block */
    check("{\"NotIpAddress\": {\"aws:SourceIp\": \"192.168.0.0/16\"}}", true);
    check("{\"NotIpAddress\": {\"aws:SourceIp\": \"10.1.0.0/16\"}}", false);
    check("{\"Null\": {\"aws:RequestTag/owner\": \"true\"}}", true);
    check("{\"Null\": {\"aws:RequestTag/env\": \"true\"}}", false);
    check("{\"Null\": {\"aws:RequestTag/env\": \"false\"}}", true);
    check("{\"Null\": {\"aws:RequestTag/owner\": \"false\"}}", false);

    /* an IPv4-mapped IPv6 peer (a dual-stack listener) is its IPv4 address */
    iam_ctx *x = iam_ctx_new();
    iam_ctx_add(x, "aws:SourceIp", "::ffff:127.0.0.1");
    json_t *j = json_loads("{\"IpAddress\": {\"aws:SourceIp\": \"127.0.0.0/8\"}}", 0, NULL);
    iam_cond *c;
    char err[256];
    assert_int_equal(iam_cond_parse(j, &c, err, sizeof err), 0);
    assert_true(iam_cond_eval(c, x));
    iam_cond_free(c);
    json_decref(j);
    iam_ctx_free(x);
}

/* A key the request does not have: positive operators fail, negated ones hold, IfExists holds. */
static void test_absent_keys(void **state) {
    (void)state;
    check("{\"StringEquals\": {\"aws:RequestTag/owner\": \"me\"}}", false);
    check("{\"StringNotEquals\": {\"aws:RequestTag/owner\": \"me\"}}", true);
    check("{\"StringEqualsIfExists\": {\"aws:RequestTag/owner\": \"me\"}}", true);
    check("{\"StringEqualsIfExists\": {\"aws:RequestTag/env\": \"prod\"}}", false); /* present: decides */
    check("{\"StringEqualsIfExists\": {\"aws:RequestTag/env\": \"dev\"}}", true);
    check("{\"IpAddressIfExists\": {\"aws:SourceIp\": \"192.168.0.0/16\"}}", false);
    /* keys of one operator, and operators of one block: all must hold */
    check("{\"StringEquals\": {\"aws:RequestedRegion\": \"us-east-1\", \"aws:PrincipalType\": \"User\"}}", false);
    check("{\"StringEquals\": {\"aws:RequestedRegion\": \"us-east-1\"}, \"IpAddress\": {\"aws:SourceIp\": "
          "\"10.0.0.0/8\"}}",
          true);
    check("{\"StringEquals\": {\"aws:RequestedRegion\": \"us-east-1\"}, \"IpAddress\": {\"aws:SourceIp\": "
          "\"11.0.0.0/8\"}}",
          false);
}

static void test_sets(void **state) {
    (void)state;
    /* aws:TagKeys is [env, team] */
    check("{\"ForAnyValue:StringEquals\": {\"aws:TagKeys\": \"env\"}}", true);
    check("{\"ForAnyValue:StringEquals\": {\"aws:TagKeys\": \"owner\"}}", false);
    check("{\"ForAllValues:StringEquals\": {\"aws:TagKeys\": [\"env\", \"team\", \"owner\"]}}", true);
    check("{\"ForAllValues:StringEquals\": {\"aws:TagKeys\": [\"env\"]}}", false);
    check("{\"ForAllValues:StringLike\": {\"aws:TagKeys\": \"*\"}}", true);
    check("{\"ForAnyValue:StringNotEquals\": {\"aws:TagKeys\": \"env\"}}", true); /* team is not env */
    check("{\"ForAllValues:StringNotEquals\": {\"aws:TagKeys\": \"env\"}}", false);
    /* an absent key: ForAllValues holds (vacuously), ForAnyValue does not */
    check("{\"ForAllValues:StringEquals\": {\"aws:RequestTag/none\": \"x\"}}", true);
    check("{\"ForAnyValue:StringEquals\": {\"aws:RequestTag/none\": \"x\"}}", false);
    /* unqualified on several values: one match suffices, a negated operator needs none */
    check("{\"StringEquals\": {\"aws:TagKeys\": \"team\"}}", true);
    check("{\"StringNotEquals\": {\"aws:TagKeys\": \"team\"}}", false);
}

static void test_refusals(void **state) {
    (void)state;
    refused("{\"BinaryEquals\": {\"aws:SourceIp\": \"x\"}}", "Condition operator BinaryEquals is not evaluated");
    refused("{\"StringEqual\": {\"aws:SourceIp\": \"x\"}}", "Condition operator StringEqual is not evaluated");
    refused("{\"StringEquals\": {\"aws:PrincipalOrgID\": \"o-1\"}}",
            "the condition key aws:PrincipalOrgID is not evaluated by mskmock");
    refused("{\"StringEquals\": {\"s3:prefix\": \"a\"}}", "the condition key s3:prefix is not evaluated");
    refused("{\"StringEquals\": {\"aws:ResourceTag/\": \"a\"}}", "the condition key aws:ResourceTag/ is not");
    refused("{\"IpAddress\": {\"aws:SourceIp\": \"10.0.0.0/33\"}}", "is not an IP address or CIDR block");
    refused("{\"IpAddress\": {\"aws:SourceIp\": \"ten\"}}", "is not an IP address or CIDR block");
    refused("{\"NumericLessThan\": {\"aws:EpochTime\": \"soon\"}}", "is not a number");
    refused("{\"DateLessThan\": {\"aws:CurrentTime\": \"2026-13-01\"}}", "is not a date");
    refused("{\"Bool\": {\"aws:SecureTransport\": \"yes\"}}", "is not true or false");
    refused("{\"NullIfExists\": {\"aws:SourceIp\": \"true\"}}", "Null takes neither IfExists");
    refused("{\"StringEquals\": {\"aws:PrincipalArn\": \"${aws:username}\"}}", "policy variables are not evaluated");
    refused("{\"StringEquals\": {\"aws:SourceIp\": []}}", "an empty list of values");
    refused("{\"StringEquals\": {\"aws:SourceIp\": {\"a\": 1}}}", "a value must be a string, a number or a boolean");
    refused("{\"StringEquals\": \"x\"}", "must be an object of condition keys");
    refused("[]", "Condition must be a JSON object");
    refused("{}", "Condition is an empty object");
}

/* Conditions in a policy: on kafka: and sts: statements evaluated; on kafka-cluster: refused; s3-only: never read. */
static void test_in_policies(void **state) {
    (void)state;
    const char *doc =
        "{\"Statement\": ["
        " {\"Sid\": \"FromVpc\", \"Effect\": \"Allow\", \"Action\": \"kafka:GetBootstrapBrokers\", \"Resource\": \"*\","
        "  \"Condition\": {\"IpAddress\": {\"aws:SourceIp\": \"10.0.0.0/8\"}}},"
        " {\"Sid\": \"NotEu\", \"Effect\": \"Deny\", \"Action\": \"kafka:*\", \"Resource\": \"*\","
        "  \"Condition\": {\"StringNotEquals\": {\"aws:RequestedRegion\": \"us-east-1\"}}},"
        " {\"Effect\": \"Allow\", \"Action\": \"s3:GetObject\", \"Resource\": \"*\","
        "  \"Condition\": {\"StringLike\": {\"s3:prefix\": \"home/*\"}}}]}";
    json_t *j = json_loads(doc, 0, NULL);
    iam_policy *p = iam_policy_new();
    char err[512] = "";
    if (iam_policy_add(p, j, "cond.json", err, sizeof err) != 0) fail_msg("refused: %s", err);
    json_decref(j);
    iam_ctx *x = ctx_of();
    iam_decision d = iam_policy_eval_named(p, "kafka:GetBootstrapBrokers", CLUSTER, x);
    assert_int_equal(d.effect, IAM_ALLOW);
    assert_non_null(strstr(d.by, "Sid FromVpc"));
    iam_ctx_free(x);
    x = iam_ctx_new();
    iam_ctx_add(x, "aws:SourceIp", "192.168.1.1");
    iam_ctx_add(x, "aws:RequestedRegion", "us-east-1");
    assert_int_equal(iam_policy_eval_named(p, "kafka:GetBootstrapBrokers", CLUSTER, x).effect, IAM_IMPLICIT_DENY);
    iam_ctx_free(x);
    x = iam_ctx_new();
    iam_ctx_add(x, "aws:SourceIp", "10.0.0.1");
    iam_ctx_add(x, "aws:RequestedRegion", "eu-west-1");
    d = iam_policy_eval_named(p, "kafka:GetBootstrapBrokers", CLUSTER, x);
    assert_int_equal(d.effect, IAM_EXPLICIT_DENY);
    assert_non_null(strstr(d.by, "Sid NotEu"));
    iam_ctx_free(x);
    /* no context at all: the Allow's key is absent (false), the Deny's negated operator holds */
    assert_int_equal(iam_policy_eval_named(p, "kafka:GetBootstrapBrokers", CLUSTER, NULL).effect, IAM_EXPLICIT_DENY);
    iam_policy_free(p);

    const char *bad[][2] = {
        {"{\"Statement\": {\"Effect\": \"Allow\", \"Action\": \"kafka:DescribeClusterV2\", \"Resource\": \"*\","
         " \"Condition\": {\"StringEquals\": {\"aws:PrincipalOrgID\": \"o-1\"}}}}",
         "bad.json: Statement: Condition StringEquals on aws:PrincipalOrgID: the condition key aws:PrincipalOrgID"},
        {"{\"Statement\": {\"Effect\": \"Allow\", \"Action\": \"sts:AssumeRole\", \"Resource\": \"*\","
         " \"Condition\": {\"StringEqualz\": {\"aws:SourceIp\": \"x\"}}}}",
         "Condition operator StringEqualz is not evaluated"},
        {"{\"Statement\": {\"Effect\": \"Allow\", \"NotAction\": \"s3:*\", \"Resource\": \"*\","
         " \"Condition\": {\"Bool\": {\"aws:MultiFactorAuthPresent\": \"true\"}}}}",
         "aws:MultiFactorAuthPresent is not evaluated"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        j = json_loads(bad[i][0], 0, NULL);
        p = iam_policy_new();
        if (iam_policy_add(p, j, "bad.json", err, sizeof err) == 0) fail_msg("accepted %s", bad[i][0]);
        if (!strstr(err, bad[i][1])) fail_msg("error '%s' lacks '%s'", err, bad[i][1]);
        json_decref(j);
        iam_policy_free(p);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strings),       cmocka_unit_test(test_arns),     cmocka_unit_test(test_numbers_and_dates),
        cmocka_unit_test(test_bool_ip_null),  cmocka_unit_test(test_absent_keys), cmocka_unit_test(test_sets),
        cmocka_unit_test(test_refusals),      cmocka_unit_test(test_in_policies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
