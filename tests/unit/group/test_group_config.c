/*
 * Group configs (broker/group/group_config.c, and the config handlers for GROUP resources),
 * driven in-process with encoded requests against Apache Kafka 4.0: DescribeConfigs answers
 * GroupConfig's defaults for any group id; IncrementalAlterConfigs and AlterConfigs set them
 * within the broker's bounds or answer INVALID_CONFIG with GroupConfig.validate's message; the
 * serverless profile answers INVALID_REQUEST, as a broker without group configs does.
 * Issue 30 item 5: franz-go's suite found "Unsupported resource type 32".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "broker_harness.h"

#define GROUP 32

static conn *cn;

static harness *kafka_harness(const char *const *overrides) {
    harness *h = h_new(overrides);
    h->cfg.group_configs_enable = true; /* what the kafka profile sets */
    cn = h_conn(h, NULL);
    return h;
}

static kp_describe_configs_result *describe(harness *h, const char *group, const char *key, bool synonyms, int16_t ver) {
    kp_str k = kp_str_c(key);
    kp_describe_configs_resource res = {.resource_type = GROUP, .resource_name = kp_str_c(group)};
    res.configuration_keys.n = key ? 1 : -1;
    res.configuration_keys.v = &k;
    kp_describe_configs_request q = {.include_synonyms = synonyms, .include_documentation = ver >= 3};
    q.resources.n = 1;
    q.resources.v = &res;
    kp_describe_configs_response *resp = h_resp(h, h_send(h, cn, "admin", 32, ver, &q));
    assert_int_equal(resp->results.n, 1);
    assert_int_equal(resp->results.v[0].resource_type, GROUP);
    return &resp->results.v[0];
}

static const kp_describe_configs_resource_result *entry(harness *h, kp_describe_configs_result *res, const char *key) {
    for (int32_t i = 0; i < res->configs.n; i++)
        if (strcmp(h_cstr(h, res->configs.v[i].name), key) == 0) return &res->configs.v[i];
    fail_msg("no %s in the answer", key);
    return NULL;
}

typedef struct op {
    const char *key, *value; /* value NULL: null on the wire */
    int8_t op;
} op;

static kp_incremental_alter_configs_alter_configs_resource_response *alter(harness *h, const char *group, const op *ops,
                                                                           int n, bool validate_only) {
    kp_incremental_alter_configs_alterable_config c[8];
    for (int i = 0; i < n; i++) c[i] = (kp_incremental_alter_configs_alterable_config){kp_str_c(ops[i].key), ops[i].op,
                                                                                     kp_str_c(ops[i].value)};
    kp_incremental_alter_configs_alter_configs_resource res = {.resource_type = GROUP, .resource_name = kp_str_c(group)};
    res.configs.n = n;
    res.configs.v = c;
    kp_incremental_alter_configs_request q = {.validate_only = validate_only};
    q.resources.n = 1;
    q.resources.v = &res;
    kp_incremental_alter_configs_response *resp = h_resp(h, h_send(h, cn, "admin", 44, 1, &q));
    assert_int_equal(resp->responses.n, 1);
    return &resp->responses.v[0];
}

static kp_alter_configs_resource_response *alter_legacy(harness *h, const char *group, const op *ops, int n) {
    kp_alter_configs_alterable_config c[8];
    for (int i = 0; i < n; i++) c[i] = (kp_alter_configs_alterable_config){kp_str_c(ops[i].key), kp_str_c(ops[i].value)};
    kp_alter_configs_resource res = {.resource_type = GROUP, .resource_name = kp_str_c(group)};
    res.configs.n = n;
    res.configs.v = c;
    kp_alter_configs_request q = {0};
    q.resources.n = 1;
    q.resources.v = &res;
    kp_alter_configs_response *resp = h_resp(h, h_send(h, cn, "admin", 33, 1, &q));
    assert_int_equal(resp->responses.n, 1);
    return &resp->responses.v[0];
}

static void assert_value(harness *h, const char *group, const char *key, const char *want, int8_t source) {
    kp_describe_configs_result *res = describe(h, group, key, false, 4);
    assert_int_equal(res->error_code, 0);
    assert_int_equal(res->configs.n, 1);
    assert_string_equal(h_cstr(h, res->configs.v[0].value), want);
    assert_int_equal(res->configs.v[0].config_source, source);
}

static void assert_refused(harness *h, int16_t code, kp_str msg, int16_t want, const char *want_msg) {
    if (code != want) fail_msg("error %d, want %d (%s)", code, want, h_cstr(h, msg));
    assert_string_equal(h_cstr(h, msg), want_msg);
}

/* ---- DescribeConfigs ---- */

static void test_describe_configs_of_a_group_gives_kafka_defaults(void **state) {
    (void)state;
    harness *h = kafka_harness(NULL);
    kp_describe_configs_result *res = describe(h, "no-such-group", NULL, true, 4);
    assert_int_equal(res->error_code, 0);
    assert_int_equal(res->configs.n, 6); /* Kafka 4.0's GroupConfig */
    const struct {
        const char *key, *value;
        int8_t type;
    } want[] = {
        {"consumer.session.timeout.ms", "45000", 3},    {"consumer.heartbeat.interval.ms", "5000", 3},
        {"share.session.timeout.ms", "45000", 3},       {"share.heartbeat.interval.ms", "5000", 3},
        {"share.record.lock.duration.ms", "30000", 3},  {"share.auto.offset.reset", "latest", 2},
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        const kp_describe_configs_resource_result *e = entry(h, res, want[i].key);
        assert_string_equal(h_cstr(h, e->value), want[i].value);
        assert_int_equal(e->config_source, 5); /* DEFAULT_CONFIG */
        assert_int_equal(e->config_type, want[i].type);
        assert_false(e->read_only);
        assert_int_equal(e->synonyms.n, 1);
        assert_int_equal(e->synonyms.v[0].source, 5);
        assert_non_null(h_cstr(h, e->documentation));
    }
    /* the broker's default is what a group without an override has */
    h->cfg.group_consumer_session_timeout_ms = 50000;
    assert_value(h, "g", "consumer.session.timeout.ms", "50000", 5);
    /* v0 carries is_default instead of a source */
    res = describe(h, "g", "consumer.heartbeat.interval.ms", false, 0);
    assert_true(res->configs.v[0].is_default);
    /* an empty name: Kafka's ConfigHelper refuses it */
    res = describe(h, "", NULL, false, 4);
    assert_refused(h, res->error_code, res->error_message, KERR_INVALID_REQUEST, "Group name must not be empty");
    h_free(h);
}

static void test_serverless_refuses_group_config_resources(void **state) {
    (void)state;
    harness *h = h_new(NULL);
    cn = h_conn(h, NULL);
    kp_describe_configs_result *res = describe(h, "g", NULL, false, 4);
    assert_refused(h, res->error_code, res->error_message, KERR_INVALID_REQUEST, "Unsupported resource type 32");
    op set[] = {{"consumer.session.timeout.ms", "50000", 0}};
    kp_incremental_alter_configs_alter_configs_resource_response *a = alter(h, "g", set, 1, false);
    assert_refused(h, a->error_code, a->error_message, KERR_INVALID_REQUEST, "Unsupported resource type 32");
    kp_alter_configs_resource_response *l = alter_legacy(h, "g", set, 1);
    assert_refused(h, l->error_code, l->error_message, KERR_INVALID_REQUEST, "Unsupported resource type 32");
    h_free(h);
}

/* ---- IncrementalAlterConfigs ---- */

static void test_incremental_alter_configs_sets_group_configs_within_bounds(void **state) {
    (void)state;
    harness *h = kafka_harness(NULL);
    op set[] = {{"consumer.session.timeout.ms", "50000", 0}, {"consumer.heartbeat.interval.ms", "6000", 0}};
    kp_incremental_alter_configs_alter_configs_resource_response *res = alter(h, "g1", set, 2, false);
    assert_int_equal(res->error_code, 0);
    assert_value(h, "g1", "consumer.session.timeout.ms", "50000", 8); /* GROUP_CONFIG */
    assert_value(h, "g1", "consumer.heartbeat.interval.ms", "6000", 8);
    assert_value(h, "g2", "consumer.session.timeout.ms", "45000", 5); /* another group keeps the default */
    grp_consumer_settings gs = grp_consumer_settings_of(&h->s, "g1", 2);
    assert_int_equal(gs.session_timeout_ms, 50000);
    assert_int_equal(gs.heartbeat_interval_ms, 6000);
    gs = grp_consumer_settings_of(&h->s, "g2", 2);
    assert_int_equal(gs.session_timeout_ms, 45000);
    assert_int_equal(gs.heartbeat_interval_ms, 5000);
    /* DELETE goes back to the default; a validate_only SET changes nothing */
    op del[] = {{"consumer.heartbeat.interval.ms", NULL, 1}};
    assert_int_equal(alter(h, "g1", del, 1, false)->error_code, 0);
    assert_value(h, "g1", "consumer.heartbeat.interval.ms", "5000", 5);
    op later[] = {{"share.auto.offset.reset", "earliest", 0}};
    assert_int_equal(alter(h, "g1", later, 1, true)->error_code, 0);
    assert_value(h, "g1", "share.auto.offset.reset", "latest", 5);
    h_free(h);
}

static void test_incremental_alter_configs_refuses_what_kafka_refuses(void **state) {
    (void)state;
    harness *h = kafka_harness(NULL);
    const struct {
        op o;
        int16_t code;
        const char *msg;
    } cases[] = {
        {{"consumer.session.timeout.ms", "44999", 0}, KERR_INVALID_CONFIG,
         "consumer.session.timeout.ms must be greater than or equal to group.consumer.min.session.timeout.ms"},
        {{"consumer.session.timeout.ms", "60001", 0}, KERR_INVALID_CONFIG,
         "consumer.session.timeout.ms must be less than or equal to group.consumer.max.session.timeout.ms"},
        {{"consumer.heartbeat.interval.ms", "4999", 0}, KERR_INVALID_CONFIG,
         "consumer.heartbeat.interval.ms must be greater than or equal to group.consumer.min.heartbeat.interval.ms"},
        {{"consumer.heartbeat.interval.ms", "15001", 0}, KERR_INVALID_CONFIG,
         "consumer.heartbeat.interval.ms must be less than or equal to group.consumer.max.heartbeat.interval.ms"},
        {{"share.record.lock.duration.ms", "14000", 0}, KERR_INVALID_CONFIG,
         "share.record.lock.duration.ms must be greater than or equal to group.share.min.record.lock.duration.ms"},
        {{"consumer.session.timeout.ms", "abc", 0}, KERR_INVALID_CONFIG,
         "Invalid value abc for configuration consumer.session.timeout.ms: Not a number of type INT"},
        {{"consumer.session.timeout.ms", "0", 0}, KERR_INVALID_CONFIG,
         "Invalid value 0 for configuration consumer.session.timeout.ms: Value must be at least 1"},
        {{"share.auto.offset.reset", "none", 0}, KERR_INVALID_CONFIG,
         "Invalid value none for configuration share.auto.offset.reset: String must be one of: latest, earliest"},
        {{"session.timeout.ms", "50000", 0}, KERR_INVALID_CONFIG, "Unknown group config name: session.timeout.ms"},
        {{"consumer.session.timeout.ms", "50000", 2}, KERR_INVALID_CONFIG,
         "Can't APPEND to key consumer.session.timeout.ms because its type is not LIST."},
        {{"consumer.session.timeout.ms", NULL, 0}, KERR_INVALID_REQUEST,
         "Null value not supported for : consumer.session.timeout.ms"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        kp_incremental_alter_configs_alter_configs_resource_response *res = alter(h, "g", &cases[i].o, 1, false);
        assert_refused(h, res->error_code, res->error_message, cases[i].code, cases[i].msg);
    }
    /* the session timeout must stay above the heartbeat interval, whichever of them moves */
    op hb[] = {{"consumer.heartbeat.interval.ms", "15000", 0}, {"consumer.session.timeout.ms", "15000", 0}};
    h->cfg.group_consumer_min_session_timeout_ms = 10000;
    kp_incremental_alter_configs_alter_configs_resource_response *res = alter(h, "g", hb, 2, false);
    assert_refused(h, res->error_code, res->error_message, KERR_INVALID_CONFIG,
                   "consumer.session.timeout.ms must be greater than consumer.heartbeat.interval.ms");
    op twice[] = {{"consumer.session.timeout.ms", "50000", 0}, {"consumer.session.timeout.ms", "51000", 0}};
    res = alter(h, "g", twice, 2, false);
    assert_refused(h, res->error_code, res->error_message, KERR_INVALID_REQUEST, "Error due to duplicate config keys");
    res = alter(h, "", hb, 1, false);
    assert_refused(h, res->error_code, res->error_message, KERR_INVALID_REQUEST,
                   "Default group resources are not allowed.");
    /* nothing of the refused ones was kept */
    assert_value(h, "g", "consumer.session.timeout.ms", "45000", 5);
    assert_value(h, "g", "consumer.heartbeat.interval.ms", "5000", 5);
    h_free(h);
}

/* ---- AlterConfigs (legacy): a full replace ---- */

static void test_alter_configs_replaces_a_groups_configs(void **state) {
    (void)state;
    harness *h = kafka_harness(NULL);
    op first[] = {{"consumer.session.timeout.ms", "50000", 0}, {"share.auto.offset.reset", "earliest", 0}};
    assert_int_equal(alter(h, "g", first, 2, false)->error_code, 0);
    op replace[] = {{"consumer.heartbeat.interval.ms", "7000", 0}};
    kp_alter_configs_resource_response *res = alter_legacy(h, "g", replace, 1);
    assert_int_equal(res->error_code, 0);
    assert_value(h, "g", "consumer.heartbeat.interval.ms", "7000", 8);
    assert_value(h, "g", "consumer.session.timeout.ms", "45000", 5); /* not named: back to its default */
    assert_value(h, "g", "share.auto.offset.reset", "latest", 5);
    op bad[] = {{"consumer.heartbeat.interval.ms", NULL, 0}, {"share.heartbeat.interval.ms", NULL, 0}};
    res = alter_legacy(h, "g", bad, 2);
    assert_refused(h, res->error_code, res->error_message, KERR_INVALID_CONFIG,
                   "Null value not supported for group configs: consumer.heartbeat.interval.ms,share.heartbeat.interval.ms");
    assert_value(h, "g", "consumer.heartbeat.interval.ms", "7000", 8);
    h_free(h);
}

/* every test frees its harness in the teardown too, so a failed assertion leaks nothing */
#define T(f) cmocka_unit_test_teardown(f, h_teardown)

int main(void) {
    const struct CMUnitTest tests[] = {
        T(test_describe_configs_of_a_group_gives_kafka_defaults),
        T(test_serverless_refuses_group_config_resources),
        T(test_incremental_alter_configs_sets_group_configs_within_bounds),
        T(test_incremental_alter_configs_refuses_what_kafka_refuses),
        T(test_alter_configs_replaces_a_groups_configs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
