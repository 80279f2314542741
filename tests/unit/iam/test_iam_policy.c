/*
 * iam_policy: the evaluator against a table of policies x requests, written from AWS's
 * documented semantics (wildcards in actions and ARN segments, NotAction/NotResource,
 * explicit Deny over Allow over implicit deny), the "some resource" query, and the
 * refusals of what the engine does not evaluate.
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
#define CL "mskmock/8c1f1a3e-6b3e-4c1e-9d5b-2f0c6e8a9b10"
#define CLUSTER ARN "cluster/" CL
#define TOPIC(t) ARN "topic/" CL "/" t
#define GROUP(g) ARN "group/" CL "/" g

static iam_policy *load(const char *text) {
    json_error_t je;
    json_t *doc = json_loads(text, 0, &je);
    if (!doc) fail_msg("bad test JSON at %d:%d: %s", je.line, je.column, je.text);
    iam_policy *p = iam_policy_new();
    assert_non_null(p);
    char err[512] = "";
    if (iam_policy_add(p, doc, "test.json", err, sizeof err) != 0) fail_msg("refused: %s", err);
    json_decref(doc);
    return p;
}

/* The error text for a refused document (the test fails if it was accepted). */
static void refused(const char *text, const char *want) {
    json_t *doc = json_loads(text, 0, NULL);
    assert_non_null(doc);
    iam_policy *p = iam_policy_new();
    char err[512] = "";
    int rc = iam_policy_add(p, doc, "bad.json", err, sizeof err);
    json_decref(doc);
    if (rc == 0) fail_msg("accepted, wanted a refusal with '%s': %s", want, text);
    if (!strstr(err, want)) fail_msg("error '%s' lacks '%s'", err, want);
    assert_non_null(strstr(err, "bad.json"));
    assert_int_equal(iam_policy_statement_count(p), 0); /* nothing of it kept */
    iam_policy_free(p);
}

static void test_globs(void **state) {
    (void)state;
    assert_true(iam_glob("kafka-cluster:*", "kafka-cluster:ReadData", true));
    assert_true(iam_glob("KAFKA-CLUSTER:readdata", "kafka-cluster:ReadData", true));
    assert_true(iam_glob("kafka-cluster:*Data", "kafka-cluster:WriteData", true));
    assert_false(iam_glob("kafka-cluster:*Data", "kafka-cluster:WriteDataIdempotently", true));
    assert_true(iam_glob("kafka-cluster:Describe*", "kafka-cluster:DescribeTopicDynamicConfiguration", true));
    assert_true(iam_glob("kafka-cluster:?riteData", "kafka-cluster:WriteData", true));
    assert_false(iam_glob("kafka-cluster:?WriteData", "kafka-cluster:WriteData", true));
    assert_true(iam_glob("*a*a*b", "xaaab", false));
    assert_false(iam_glob("abc", "ABC", false));

    /* ARNs: case-sensitive; wildcards stay in their segment unless a '*' ends it */
    assert_true(iam_arn_glob(TOPIC("orders"), TOPIC("orders")));
    assert_false(iam_arn_glob(TOPIC("orders"), TOPIC("Orders")));
    assert_true(iam_arn_glob(TOPIC("*"), TOPIC("orders")));
    assert_true(iam_arn_glob(TOPIC("ord*"), TOPIC("orders.eu")));
    assert_true(iam_arn_glob(TOPIC("order?"), TOPIC("orders")));
    assert_false(iam_arn_glob(TOPIC("order?"), TOPIC("order")));
    assert_true(iam_arn_glob("arn:aws:kafka:*:*:topic/*", TOPIC("x")));
    assert_true(iam_arn_glob("arn:aws:kafka:us-*:123456789012:topic/" CL "/*", TOPIC("x")));
    assert_false(iam_arn_glob("arn:aws:kafka:u*1:123456789012:topic/*", "arn:aws:kafka:us:x1:123456789012:topic/t"));
    assert_true(iam_arn_glob("arn:aws:kafka:*", TOPIC("x")));  /* a final '*' runs on over colons */
    assert_false(iam_arn_glob("arn:aws:kafka:*:123456789012:group/*", TOPIC("x")));
    assert_true(iam_arn_glob("*", GROUP("g")));
    /* segments: a pattern with fewer or more segments than the ARN does not match */
    assert_false(iam_arn_glob("arn:aws:kafka", TOPIC("x")));
    assert_false(iam_arn_glob(TOPIC("x") ":extra", TOPIC("x")));
    /* the resource part may hold colons (group ids): a '*' there runs over them */
    assert_true(iam_arn_glob(GROUP("app:*"), GROUP("app:eu:1")));
}

typedef struct eval_case {
    iam_action action;
    const char *resource;
    iam_effect want;
    const char *by; /* substring of the deciding statement's label, or NULL */
} eval_case;

static void check(iam_policy *p, const eval_case *c, size_t n) {
    for (size_t i = 0; i < n; i++) {
        iam_decision d = iam_policy_eval(p, c[i].action, c[i].resource);
        if (d.effect != c[i].want)
            fail_msg("case %zu: %s on %s: effect %d, want %d", i, iam_action_get(c[i].action)->name, c[i].resource,
                     d.effect, c[i].want);
        if (c[i].by && (!d.by || !strstr(d.by, c[i].by)))
            fail_msg("case %zu: decided by '%s', want '%s'", i, d.by ? d.by : "(none)", c[i].by);
        if (d.effect == IAM_IMPLICIT_DENY) assert_null(d.by);
    }
}

static void test_allow_and_implicit_deny(void **state) {
    (void)state;
    iam_policy *p = load("{\"Version\": \"2012-10-17\", \"Statement\": ["
                         " {\"Sid\": \"Conn\", \"Effect\": \"Allow\", \"Action\": [\"kafka-cluster:Connect\", "
                         "\"kafka-cluster:DescribeCluster\"], \"Resource\": \"" CLUSTER "\"},"
                         " {\"Effect\": \"Allow\", \"Action\": [\"kafka-cluster:*Topic*\", \"kafka-cluster:ReadData\"],"
                         "  \"Resource\": \"" TOPIC("orders*") "\"},"
                         " {\"Effect\": \"Allow\", \"Action\": \"kafka-cluster:AlterGroup\", \"Resource\": [\"" GROUP(
                             "billing") "\", \"" GROUP("audit-?") "\"]}]}");
    assert_int_equal(iam_policy_statement_count(p), 3);
    const eval_case c[] = {
        {IAM_CONNECT, CLUSTER, IAM_ALLOW, "Statement[0] (Sid Conn)"},
        {IAM_DESCRIBE_CLUSTER, CLUSTER, IAM_ALLOW, "Sid Conn"},
        {IAM_WRITE_DATA_IDEMPOTENTLY, CLUSTER, IAM_IMPLICIT_DENY, NULL},
        {IAM_CONNECT, ARN "cluster/other/8c1f1a3e-6b3e-4c1e-9d5b-2f0c6e8a9b10", IAM_IMPLICIT_DENY, NULL},
        {IAM_DESCRIBE_TOPIC, TOPIC("orders"), IAM_ALLOW, "test.json Statement[1]"},
        {IAM_DESCRIBE_TOPIC_DYNAMIC_CONFIGURATION, TOPIC("orders.eu"), IAM_ALLOW, "Statement[1]"},
        {IAM_CREATE_TOPIC, TOPIC("orders-new"), IAM_ALLOW, NULL},
        {IAM_READ_DATA, TOPIC("orders"), IAM_ALLOW, NULL},
        {IAM_WRITE_DATA, TOPIC("orders"), IAM_IMPLICIT_DENY, NULL},
        {IAM_DESCRIBE_TOPIC, TOPIC("payments"), IAM_IMPLICIT_DENY, NULL},
        {IAM_ALTER_GROUP, GROUP("billing"), IAM_ALLOW, "Statement[2]"},
        {IAM_ALTER_GROUP, GROUP("audit-1"), IAM_ALLOW, NULL},
        {IAM_ALTER_GROUP, GROUP("audit-12"), IAM_IMPLICIT_DENY, NULL},
        {IAM_DESCRIBE_GROUP, GROUP("billing"), IAM_IMPLICIT_DENY, NULL},
    };
    check(p, c, sizeof c / sizeof c[0]);
    iam_policy_free(p);
}

static void test_deny_beats_allow(void **state) {
    (void)state;
    /* Deny listed after the Allow still wins; the Allow over everything is kafka-cluster:* */
    iam_policy *p = load("{\"Statement\": ["
                         " {\"Effect\": \"Allow\", \"Action\": \"kafka-cluster:*\", \"Resource\": \"*\"},"
                         " {\"Sid\": \"NoSecrets\", \"Effect\": \"Deny\", \"Action\": [\"kafka-cluster:ReadData\", "
                         "\"kafka-cluster:DescribeTopic\"], \"Resource\": \"" TOPIC("secret.*") "\"},"
                         " {\"Effect\": \"Deny\", \"Action\": \"kafka-cluster:Delete*\", \"Resource\": \"*\"}]}");
    const eval_case c[] = {
        {IAM_READ_DATA, TOPIC("public"), IAM_ALLOW, "Statement[0]"},
        {IAM_READ_DATA, TOPIC("secret.keys"), IAM_EXPLICIT_DENY, "Sid NoSecrets"},
        {IAM_DESCRIBE_TOPIC, TOPIC("secret.keys"), IAM_EXPLICIT_DENY, "NoSecrets"},
        {IAM_WRITE_DATA, TOPIC("secret.keys"), IAM_ALLOW, NULL},
        {IAM_DELETE_TOPIC, TOPIC("public"), IAM_EXPLICIT_DENY, "Statement[2]"},
        {IAM_DELETE_GROUP, GROUP("g"), IAM_EXPLICIT_DENY, "Statement[2]"},
        {IAM_CONNECT, CLUSTER, IAM_ALLOW, NULL},
    };
    check(p, c, sizeof c / sizeof c[0]);
    iam_policy_free(p);
}

static void test_not_action_and_not_resource(void **state) {
    (void)state;
    iam_policy *p = load("{\"Statement\": ["
                         " {\"Effect\": \"Allow\", \"NotAction\": [\"kafka-cluster:Delete*\", \"kafka-cluster:Alter*\"],"
                         "  \"Resource\": \"*\"},"
                         " {\"Effect\": \"Deny\", \"Action\": \"kafka-cluster:WriteData\", \"NotResource\": \"" TOPIC(
                             "ingest.*") "\"}]}");
    const eval_case c[] = {
        {IAM_READ_DATA, TOPIC("anything"), IAM_ALLOW, NULL},
        {IAM_CONNECT, CLUSTER, IAM_ALLOW, NULL},
        {IAM_DELETE_TOPIC, TOPIC("anything"), IAM_IMPLICIT_DENY, NULL},
        {IAM_ALTER_GROUP, GROUP("g"), IAM_IMPLICIT_DENY, NULL},
        {IAM_WRITE_DATA, TOPIC("ingest.raw"), IAM_ALLOW, NULL},
        {IAM_WRITE_DATA, TOPIC("reports"), IAM_EXPLICIT_DENY, "Statement[1]"},
    };
    check(p, c, sizeof c / sizeof c[0]);
    iam_policy_free(p);
}

static void test_several_documents_and_single_statement(void **state) {
    (void)state;
    iam_policy *p = load("{\"Statement\": {\"Effect\": \"Allow\", \"Action\": \"kafka-cluster:Connect\", "
                         "\"Resource\": \"" CLUSTER "\"}}");
    json_t *doc = json_loads("{\"Version\": \"2012-10-17\", \"Statement\": [{\"Effect\": \"Deny\", \"Action\": "
                             "\"kafka-cluster:Connect\", \"Resource\": \"*\"}]}",
                             0, NULL);
    char err[256];
    assert_int_equal(iam_policy_add(p, doc, "deny.json", err, sizeof err), 0);
    json_decref(doc);
    const eval_case c[] = {{IAM_CONNECT, CLUSTER, IAM_EXPLICIT_DENY, "deny.json Statement[0]"}};
    check(p, c, 1);
    iam_policy_free(p);
}

static void test_other_services_are_ignored(void **state) {
    (void)state;
    /* A Terraform policy for a client: data plane plus control plane and S3 */
    iam_policy *p = load("{\"Statement\": ["
                         " {\"Effect\": \"Allow\", \"Action\": [\"kafka:GetBootstrapBrokers\", "
                         "\"kafka:DescribeClusterV2\"], \"Resource\": \"" CLUSTER "\"},"
                         " {\"Effect\": \"Allow\", \"Action\": \"s3:GetObject\", \"Resource\": "
                         "\"arn:aws:s3:::bucket/*\", \"Condition\": {\"Bool\": {\"aws:SecureTransport\": \"true\"}}},"
                         " {\"Effect\": \"Allow\", \"Action\": [\"kafka-cluster:Connect\", \"kafka:ListClusters\"], "
                         "\"Resource\": \"*\"}]}");
    assert_int_equal(iam_policy_statement_count(p), 1);
    assert_int_equal(iam_policy_ignored_count(p), 2);
    const eval_case c[] = {
        {IAM_CONNECT, CLUSTER, IAM_ALLOW, "Statement[2]"},
        {IAM_DESCRIBE_CLUSTER, CLUSTER, IAM_IMPLICIT_DENY, NULL},
    };
    check(p, c, 2);
    iam_policy_free(p);
}

/* The AWS APIs' actions, by name: the statements of other services decide them, with IAM's precedence. */
static void test_named_actions(void **state) {
    (void)state;
    iam_policy *p = load("{\"Statement\": ["
                         " {\"Effect\": \"Allow\", \"Action\": [\"kafka:GetBootstrapBrokers\", "
                         "\"kafka:Describe*\"], \"Resource\": \"" CLUSTER "\"},"
                         " {\"Sid\": \"List\", \"Effect\": \"Allow\", \"Action\": \"kafka:List*\", \"Resource\": \"*\"},"
                         " {\"Effect\": \"Deny\", \"Action\": \"kafka:DescribeClusterV2\", \"Resource\": \"" ARN "cluster/other/*\"},"
                         " {\"Effect\": \"Allow\", \"Action\": \"s3:GetObject\", \"Resource\": \"arn:aws:s3:::b/*\","
                         "  \"Condition\": {\"Bool\": {\"aws:SecureTransport\": \"true\"}}},"
                         " {\"Effect\": \"Allow\", \"Action\": \"sts:AssumeRole\", \"Resource\": \"arn:aws:iam::123456789012:role/app\"},"
                         " {\"Effect\": \"Allow\", \"NotAction\": [\"kafka:*\", \"kafka-cluster:*\", \"s3:*\"], \"NotResource\": \"arn:aws:iam::*:role/admin\"},"
                         " {\"Effect\": \"Allow\", \"Action\": \"kafka-cluster:Connect\", \"Resource\": \"*\"}]}");
    struct {
        const char *action, *resource;
        iam_effect effect;
        const char *by;
    } c[] = {
        {"kafka:DescribeClusterV2", CLUSTER, IAM_ALLOW, "Statement[0]"},
        {"KAFKA:getbootstrapbrokers", CLUSTER, IAM_ALLOW, "Statement[0]"}, /* action names ignore case */
        {"kafka:DeleteCluster", CLUSTER, IAM_IMPLICIT_DENY, NULL},
        {"kafka:ListClustersV2", "*", IAM_ALLOW, "(Sid List)"},
        {"kafka:DescribeClusterV2", "*", IAM_IMPLICIT_DENY, NULL}, /* a cluster ARN does not cover "*" */
        {"kafka:DescribeClusterV2", ARN "cluster/other/x-s1", IAM_EXPLICIT_DENY, "Statement[2]"},
        {"s3:GetObject", "arn:aws:s3:::b/k", IAM_IMPLICIT_DENY, NULL}, /* with a Condition: left out */
        {"sts:AssumeRole", "arn:aws:iam::123456789012:role/app", IAM_ALLOW, "Statement[4]"},
        {"sts:AssumeRole", "arn:aws:iam::123456789012:role/admin", IAM_IMPLICIT_DENY, NULL},
        {"sts:AssumeRole", "arn:aws:iam::123456789012:role/other", IAM_ALLOW, "Statement[5]"}, /* NotAction, NotResource */
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        iam_decision d = iam_policy_eval_named(p, c[i].action, c[i].resource, NULL);
        if (d.effect != c[i].effect || (c[i].by ? !d.by || !strstr(d.by, c[i].by) : d.by != NULL))
            fail_msg("case %zu: %s on %s: effect %d by %s", i, c[i].action, c[i].resource, d.effect,
                     d.by ? d.by : "(none)");
    }
    assert_int_equal(iam_policy_eval_named(NULL, "sts:AssumeRole", "*", NULL).effect, IAM_IMPLICIT_DENY);
    iam_policy_free(p);
    /* a refused document leaves none of its statements behind */
    p = load("{\"Statement\": {\"Effect\": \"Allow\", \"Action\": \"kafka:List*\", \"Resource\": \"*\"}}");
    json_t *bad = json_loads("{\"Statement\": [{\"Effect\": \"Allow\", \"Action\": \"sts:AssumeRole\", \"Resource\": \"*\"},"
                             " {\"Effect\": \"Maybe\", \"Action\": \"sts:*\", \"Resource\": \"*\"}]}", 0, NULL);
    char err[256];
    assert_int_equal(iam_policy_add(p, bad, "bad.json", err, sizeof err), -1);
    json_decref(bad);
    assert_int_equal(iam_policy_eval_named(p, "sts:AssumeRole", "*", NULL).effect, IAM_IMPLICIT_DENY);
    assert_int_equal(iam_policy_eval_named(p, "kafka:ListClustersV2", "*", NULL).effect, IAM_ALLOW);
    iam_policy_free(p);
}

static void test_empty_policy_denies(void **state) {
    (void)state;
    iam_policy *p = iam_policy_new();
    const eval_case c[] = {{IAM_CONNECT, CLUSTER, IAM_IMPLICIT_DENY, NULL}};
    check(p, c, 1);
    assert_int_equal(iam_policy_eval_any(p, IAM_WRITE_DATA, ARN "topic/" CL "/").effect, IAM_IMPLICIT_DENY);
    iam_policy_free(p);
}

/* WriteDataIdempotently also requires WriteData: on some topic, the request naming none. */
static void test_some_resource(void **state) {
    (void)state;
    const char *topics = ARN "topic/" CL "/";
    iam_policy *p = load("{\"Statement\": [{\"Effect\": \"Allow\", \"Action\": \"kafka-cluster:WriteData\", "
                         "\"Resource\": \"" TOPIC("orders") "\"}]}");
    assert_int_equal(iam_policy_eval_any(p, IAM_WRITE_DATA, topics).effect, IAM_ALLOW);
    assert_int_equal(iam_policy_eval_any(p, IAM_READ_DATA, topics).effect, IAM_IMPLICIT_DENY);
    /* a topic of another cluster does not count */
    assert_int_equal(iam_policy_eval_any(p, IAM_WRITE_DATA, ARN "topic/other/x/").effect, IAM_IMPLICIT_DENY);
    iam_policy_free(p);

    p = load("{\"Statement\": [{\"Effect\": \"Allow\", \"Action\": \"kafka-cluster:WriteData\", \"Resource\": \"*\"},"
             " {\"Effect\": \"Deny\", \"Action\": \"kafka-cluster:WriteData\", \"Resource\": \"" TOPIC("tmp*") "\"}]}");
    assert_int_equal(iam_policy_eval_any(p, IAM_WRITE_DATA, topics).effect, IAM_ALLOW); /* not every topic denied */
    iam_policy_free(p);

    p = load("{\"Statement\": [{\"Effect\": \"Allow\", \"Action\": \"kafka-cluster:WriteData\", \"Resource\": \"" TOPIC(
        "a") "\"},"
             " {\"Sid\": \"All\", \"Effect\": \"Deny\", \"Action\": \"kafka-cluster:Write*\", \"Resource\": "
             "\"arn:aws:kafka:*:*:topic/*\"}]}");
    iam_decision d = iam_policy_eval_any(p, IAM_WRITE_DATA, topics);
    assert_int_equal(d.effect, IAM_EXPLICIT_DENY);
    assert_non_null(strstr(d.by, "Sid All"));
    iam_policy_free(p);

    p = load("{\"Statement\": [{\"Effect\": \"Allow\", \"Action\": \"kafka-cluster:WriteData\", \"NotResource\": \"" TOPIC(
        "*") "\"}]}");
    assert_int_equal(iam_policy_eval_any(p, IAM_WRITE_DATA, topics).effect, IAM_IMPLICIT_DENY);
    iam_policy_free(p);
}

static void test_action_table(void **state) {
    (void)state;
    const iam_action_info *r = iam_action_get(IAM_READ_DATA);
    assert_string_equal(r->name, "kafka-cluster:ReadData");
    assert_int_equal(r->resource, IAM_RES_TOPIC);
    assert_true(r->requires & (1u << IAM_DESCRIBE_TOPIC));
    assert_true(r->requires & (1u << IAM_ALTER_GROUP));
    assert_true(iam_action_get(IAM_WRITE_DATA_IDEMPOTENTLY)->requires & (1u << IAM_WRITE_DATA));
    assert_int_equal(iam_action_get(IAM_WRITE_DATA_IDEMPOTENTLY)->resource, IAM_RES_CLUSTER);
    for (int a = 0; a < IAM_ACTION_COUNT; a++) {
        assert_non_null(iam_action_get(a)->name);
        assert_int_equal(iam_action_get(a)->requires & (1u << a), 0); /* no action requires itself */
        if (a != IAM_CONNECT) assert_true(iam_action_get(a)->requires & (1u << IAM_CONNECT));
    }
    assert_null(iam_action_get(IAM_ACTION_COUNT));
    assert_string_equal(iam_resource_type_name(IAM_RES_TRANSACTIONAL_ID), "transactional-id");
}

static void test_refusals(void **state) {
    (void)state;
    refused("[]", "must be a JSON object");
    refused("{\"Statement\": []}", "Statement is an empty list");
    refused("{\"Version\": \"2013-01-01\", \"Statement\": []}", "Version must be");
    refused("{\"Statment\": []}", "unknown policy element 'Statment'");
    refused("{\"Version\": \"2012-10-17\"}", "Statement missing");
    refused("{\"Statement\": [{\"Effect\": \"allow\", \"Action\": \"kafka-cluster:Connect\", \"Resource\": \"*\"}]}",
            "Statement[0]: Effect must be \"Allow\" or \"Deny\", not 'allow'");
    refused("{\"Statement\": [{\"Action\": \"kafka-cluster:Connect\", \"Resource\": \"*\"}]}", "Effect missing");
    refused("{\"Statement\": [{\"Effect\": \"Allow\", \"Resource\": \"*\"}]}", "exactly one of Action and NotAction");
    refused("{\"Statement\": [{\"Effect\": \"Allow\", \"Action\": \"kafka-cluster:Connect\", \"NotAction\": \"x:y\", "
            "\"Resource\": \"*\"}]}",
            "exactly one of Action and NotAction");
    refused("{\"Statement\": [{\"Effect\": \"Allow\", \"Action\": \"kafka-cluster:Connect\"}]}",
            "exactly one of Resource and NotResource");
    refused("{\"Statement\": [{\"Effect\": \"Allow\", \"Action\": \"kafka-cluster:ReadDta\", \"Resource\": \"*\"}]}",
            "Action 'kafka-cluster:ReadDta' names no kafka-cluster action");
    refused("{\"Statement\": [{\"Effect\": \"Allow\", \"Action\": \"ReadData\", \"Resource\": \"*\"}]}",
            "is not <service>:<action>");
    refused("{\"Statement\": [{\"Effect\": \"Allow\", \"Action\": [], \"Resource\": \"*\"}]}", "Action is an empty list");
    refused("{\"Statement\": [{\"Effect\": \"Allow\", \"Action\": [\"kafka-cluster:Connect\", 3], \"Resource\": \"*\"}]}",
            "Action[1] is not a string");
    refused("{\"Statement\": [{\"Effect\": \"Allow\", \"Action\": \"kafka-cluster:Connect\", \"Resource\": "
            "\"arn:aws:s3:::bucket\"}]}",
            "is not an MSK ARN");
    refused("{\"Statement\": [{\"Effect\": \"Allow\", \"Action\": \"kafka-cluster:Connect\", \"Resource\": "
            "\"orders\"}]}",
            "is not an ARN");
    refused("{\"Statement\": [{\"Effect\": \"Allow\", \"Action\": \"kafka-cluster:Connect\", \"Resource\": "
            "\"arn:aws:kafka:us-east-1:1:broker/x\"}]}",
            "names no MSK resource type");
    refused("{\"Statement\": [{\"Effect\": \"Allow\", \"Action\": \"kafka-cluster:Connect\", \"Resource\": "
            "\"arn:aws:kafka:us-east-1:1:topic/${aws:username}\"}]}",
            "policy variables are not evaluated");
    refused("{\"Statement\": [{\"Effect\": \"Allow\", \"Action\": \"kafka-cluster:Connect\", \"Resource\": \"*\", "
            "\"Condition\": {\"IpAddress\": {\"aws:SourceIp\": \"10.0.0.0/8\"}}}]}",
            "Condition IpAddress on aws:SourceIp is not evaluated by mskmock");
    refused("{\"Statement\": [{\"Effect\": \"Allow\", \"Principal\": \"*\", \"Action\": \"kafka-cluster:Connect\", "
            "\"Resource\": \"*\"}]}",
            "Principal and NotPrincipal belong in resource policies");
    refused("{\"Statement\": [{\"Effect\": \"Allow\", \"Action\": \"kafka-cluster:Connect\", \"Resource\": \"*\", "
            "\"Resources\": \"*\"}]}",
            "unknown statement element 'Resources'");

    /* a refused second document leaves the first one whole */
    iam_policy *p = load("{\"Statement\": {\"Effect\": \"Allow\", \"Action\": \"kafka-cluster:Connect\", "
                         "\"Resource\": \"*\"}}");
    json_t *doc = json_loads("{\"Statement\": [{\"Effect\": \"Allow\", \"Action\": \"kafka-cluster:ReadData\", "
                             "\"Resource\": \"*\"}, {\"Effect\": \"Nope\"}]}",
                             0, NULL);
    char err[256];
    assert_int_equal(iam_policy_add(p, doc, "second.json", err, sizeof err), -1);
    json_decref(doc);
    assert_non_null(strstr(err, "second.json: Statement[1]"));
    assert_int_equal(iam_policy_statement_count(p), 1);
    assert_int_equal(iam_policy_eval(p, IAM_READ_DATA, TOPIC("t")).effect, IAM_IMPLICIT_DENY);
    assert_int_equal(iam_policy_eval(p, IAM_CONNECT, CLUSTER).effect, IAM_ALLOW);
    iam_policy_free(p);
}

/*
 * Regression: the refusal of an empty (or over-long) Action or Resource string quoted the
 * string after freeing the list it was read into (found by gcc -O0 -Wuse-after-free).
 */
static void test_empty_pattern_refusal_quotes_the_string(void **state) {
    (void)state;
    refused("{\"Statement\": [{\"Effect\": \"Allow\", \"Action\": [\"kafka-cluster:Connect\", \"\"], \"Resource\": \"*\"}]}",
            "Statement[0]: Action '' is empty or longer than 2048 characters");
    refused("{\"Statement\": [{\"Effect\": \"Allow\", \"Action\": \"kafka-cluster:Connect\", \"Resource\": [\"*\", \"\"]}]}",
            "Statement[0]: Resource '' is empty or longer than 2048 characters");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_globs),
        cmocka_unit_test(test_allow_and_implicit_deny),
        cmocka_unit_test(test_deny_beats_allow),
        cmocka_unit_test(test_not_action_and_not_resource),
        cmocka_unit_test(test_several_documents_and_single_statement),
        cmocka_unit_test(test_other_services_are_ignored),
        cmocka_unit_test(test_named_actions),
        cmocka_unit_test(test_empty_policy_denies),
        cmocka_unit_test(test_some_resource),
        cmocka_unit_test(test_action_table),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_empty_pattern_refusal_quotes_the_string),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
