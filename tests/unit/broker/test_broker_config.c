/* Configuration: defaults, profiles, validation messages, and that conf/mskmock.properties documents every key. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "config.h"
#include "fixtures.h"

static void test_every_key_documented(void **state) {
    (void)state;
    FILE *f = fopen(MSKMOCK_SOURCE_DIR "/conf/mskmock.properties", "r");
    assert_non_null(f);
    static char text[65536];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = 0;
    fclose(f);
    for (size_t i = 0; i < cfg_key_count(); i++) {
        char line[256];
        snprintf(line, sizeof line, "\n#%s=", cfg_key_at(i).name);
        if (!strstr(text, line)) fail_msg("conf/mskmock.properties does not document %s", cfg_key_at(i).name);
    }
}

static void test_profiles_choose_defaults(void **state) {
    (void)state;
    config c = {0};
    cfg_defaults(&c, PROFILE_SERVERLESS);
    assert_false(c.auto_create_topics_enable);
    assert_int_equal(c.topic_config_policy, TOPIC_POLICY_SERVERLESS);
    char err[256];
    cfg_defaults(&c, PROFILE_KAFKA);
    assert_true(c.auto_create_topics_enable);
    assert_int_equal(c.log_retention_bytes, -1);
    assert_int_equal(cfg_finish(&c, err, sizeof err), 0);
    assert_int_equal(c.node_ids[0], 1);
    cfg_free(&c);
}

static void test_bad_values_name_the_key(void **state) {
    (void)state;
    config c = {0};
    cfg_defaults(&c, PROFILE_SERVERLESS);
    char err[256];
    assert_int_equal(cfg_set(&c, "plaintext.port", "70000", err, sizeof err), -1);
    assert_non_null(strstr(err, "plaintext.port"));
    assert_int_equal(cfg_set(&c, "no.such.key", "1", err, sizeof err), -1);
    assert_non_null(strstr(err, "unknown key"));
    assert_int_equal(cfg_set(&c, "storage.sync", "sometimes", err, sizeof err), -1);
    assert_int_equal(cfg_set(&c, "broker.ids", "5,5,6", err, sizeof err), 0);
    assert_int_equal(cfg_finish(&c, err, sizeof err), -1);
    assert_non_null(strstr(err, "twice"));
    cfg_free(&c);
}

/* Group configs: served by the kafka profile only; the consumer defaults must sit within their bounds. */
static void test_group_config_keys(void **state) {
    (void)state;
    config c = {0};
    char err[256];
    cfg_defaults(&c, PROFILE_SERVERLESS);
    assert_false(c.group_configs_enable);
    cfg_defaults(&c, PROFILE_KAFKA);
    assert_true(c.group_configs_enable);
    assert_int_equal(c.group_consumer_session_timeout_ms, 45000);
    assert_int_equal(cfg_finish(&c, err, sizeof err), 0);
    assert_int_equal(cfg_set(&c, "group.consumer.heartbeat.interval.ms", "20000", err, sizeof err), 0);
    assert_int_equal(cfg_finish(&c, err, sizeof err), -1);
    assert_string_equal(err, "group.consumer.heartbeat.interval.ms (20000) must be at most "
                             "group.consumer.max.heartbeat.interval.ms (15000)");
    assert_int_equal(cfg_set(&c, "group.consumer.max.heartbeat.interval.ms", "50000", err, sizeof err), 0);
    assert_int_equal(cfg_set(&c, "group.consumer.heartbeat.interval.ms", "45000", err, sizeof err), 0);
    assert_int_equal(cfg_finish(&c, err, sizeof err), -1);
    assert_string_equal(err, "group.consumer.heartbeat.interval.ms (45000) must be less than "
                             "group.consumer.session.timeout.ms (45000)");
    cfg_free(&c);
}

static void test_version_floors_and_ceilings(void **state) {
    (void)state;
    config c = {0};
    char err[256];
    cfg_defaults(&c, PROFILE_SERVERLESS);
    assert_int_equal(cfg_finish(&c, err, sizeof err), 0);
    assert_int_equal(c.api_floor[3], 6);  /* Metadata */
    assert_int_equal(c.api_floor[0], 7);  /* Produce */
    assert_int_equal(c.api_floor[8], -1);  /* OffsetCommit: kafkajs tops out at v5 (-1: no floor) */
    assert_int_equal(c.api_floor[13], -1); /* LeaveGroup: librdkafka tops out at v1 */
    assert_int_equal(c.api_ceiling[3], -1);
    /* names in any case or numeric keys, spaces around */
    assert_int_equal(cfg_set(&c, "api.versions.min", " metadata = 8 ,19=4", err, sizeof err), 0);
    assert_int_equal(cfg_set(&c, "api.versions.max", "Fetch=12", err, sizeof err), 0);
    assert_int_equal(cfg_finish(&c, err, sizeof err), 0);
    assert_int_equal(c.api_floor[3], 8);
    assert_int_equal(c.api_floor[19], 4);
    assert_int_equal(c.api_floor[0], -1); /* the list replaces the default, it does not add to it */
    assert_int_equal(c.api_ceiling[1], 12);
    const char *bad[][2] = {{"Nope=3", "'Nope' is not an API"}, {"Metadata=-1", "not a version of Metadata"},
                            {"Metadata", "is not Name=version"}, {"9999=1", "'9999' is not an API"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(cfg_set(&c, "api.versions.min", bad[i][0], err, sizeof err), 0);
        assert_int_equal(cfg_finish(&c, err, sizeof err), -1);
        if (!strstr(err, bad[i][1]) || !strstr(err, "api.versions.min")) fail_msg("%s: %s", bad[i][0], err);
    }
    cfg_defaults(&c, PROFILE_KAFKA);
    assert_int_equal(cfg_finish(&c, err, sizeof err), 0);
    assert_int_equal(c.api_floor[3], -1);
    cfg_free(&c);
}

static void test_file_errors_carry_line(void **state) {
    (void)state;
    char path[64];
    tmp_file_write(path, sizeof path, "cfg", ".properties", "# comment\nbroker.count=2\n\nauto.create.topics.enable=maybe\n");
    config c = {0};
    cfg_defaults(&c, PROFILE_SERVERLESS);
    char err[512];
    assert_int_equal(cfg_load_file(&c, path, err, sizeof err), -1);
    assert_non_null(strstr(err, ":4:"));
    assert_int_equal(c.broker_count, 2);
    unlink(path);
    cfg_free(&c);
}

/* Regression (issue 11): a profile named after other keys reset them to its defaults. */
/* Tools export MSKMOCK_WERROR, MSKMOCK_SANITIZE, ...: not the broker's keys, and not this test's. */
static void clear_mskmock_env(void) {
    extern char **environ;
    for (;;) {
        char name[256] = "";
        for (char **e = environ; *e; e++)
            if (strncmp(*e, "MSKMOCK_", 8) == 0 && strchr(*e, '=')) {
                snprintf(name, sizeof name, "%.*s", (int)(strchr(*e, '=') - *e), *e);
                break;
            }
        if (!name[0]) return;
        unsetenv(name);
    }
}

static void test_profile_after_other_keys_resets_none(void **state) {
    (void)state;
    clear_mskmock_env();
    char path[64];
    tmp_file_write(path, sizeof path, "cfg", ".properties", "plaintext.port=42000\nprofile=kafka\nbroker.count=2\n");
    setenv("MSKMOCK_IAM_PORT", "43000", 1);
    setenv("MSKMOCK_PROFILE", "provisioned", 1);
    cfg_arg args[] = {{"--set", "plaintext.port", "42492"}, {"--set", "profile", "kafka"}};
    config c = {0};
    char err[512];
    assert_int_equal(cfg_load(&c, path, args, 2, err, sizeof err), 0);
    assert_int_equal(c.profile, PROFILE_KAFKA);           /* the command line's, the latest */
    assert_true(c.auto_create_topics_enable);             /* its defaults */
    assert_int_equal(c.plaintext_port, 42492);            /* set before it on the command line */
    assert_int_equal(c.iam_port, 43000);                  /* from the environment */
    assert_int_equal(c.broker_count, 2);                  /* from the file */
    cfg_free(&c);

    /* a bad profile anywhere names its source, even when a later one would win */
    setenv("MSKMOCK_PROFILE", "serverful", 1);
    memset(&c, 0, sizeof c);
    assert_int_equal(cfg_load(&c, path, args, 2, err, sizeof err), -1);
    assert_non_null(strstr(err, "environment MSKMOCK_PROFILE"));
    cfg_free(&c);
    unsetenv("MSKMOCK_PROFILE");
    unsetenv("MSKMOCK_IAM_PORT");
    unlink(path);
}

/*
 * Regression (issue 31): a tooling variable exported in a developer's shell stopped the broker
 * ("environment MSKMOCK_REVISION: unknown key 'revision'"). Each one the project's tools read is
 * exported here and the configuration still loads; a misspelt key still stops it; and no key
 * could ever be shadowed by a tooling name.
 */
static void test_tooling_variables_do_not_stop_the_broker(void **state) {
    (void)state;
    clear_mskmock_env();
    static const char *const tooling[] = {"MSKMOCK_BIN", "MSKMOCK_WERROR", "MSKMOCK_SANITIZE", "MSKMOCK_BUILD_DIR",
                                          "MSKMOCK_REVISION", "MSKMOCK_IMAGE", "MSKMOCK_START_TIMEOUT",
                                          "MSKMOCK_TEST_LOG", "MSKMOCK_TEST_TIMEOUT", "MSKMOCK_SUITES_DIR", "MSKMOCK_CLI_BOOTSTRAP",
                                          "MSKMOCK_IT_EXTERNAL_BOOTSTRAP", "MSKMOCK_IT_RDKAFKA_DEBUG"};
    for (size_t i = 0; i < sizeof tooling / sizeof tooling[0]; i++) setenv(tooling[i], "1", 1);
    config c = {0};
    char err[512];
    assert_int_equal(cfg_load(&c, NULL, NULL, 0, err, sizeof err), 0);
    cfg_free(&c);

    setenv("MSKMOCK_PLAINTEXT_PROT", "19092", 1);
    memset(&c, 0, sizeof c);
    assert_int_equal(cfg_load(&c, NULL, NULL, 0, err, sizeof err), -1);
    assert_non_null(strstr(err, "MSKMOCK_PLAINTEXT_PROT"));
    cfg_free(&c);
    unsetenv("MSKMOCK_PLAINTEXT_PROT");
    for (size_t i = 0; i < sizeof tooling / sizeof tooling[0]; i++) unsetenv(tooling[i]);

    for (size_t i = 0; i < cfg_key_count(); i++)
        if (cfg_is_tooling_env(cfg_key_at(i).name)) fail_msg("key %s is also a tooling name", cfg_key_at(i).name);
}

/* port.base moves every port key that is on by port.base - 9080, once; off stays off (issue 31, item 3). */
static void test_port_base_moves_every_port_together(void **state) {
    (void)state;
    clear_mskmock_env();
    cfg_arg args[] = {{"--port-base", "port.base", "19080"}, {"--set", "iam.credentials.port", "9180"}};
    config c = {0};
    char err[512];
    assert_int_equal(cfg_load(&c, NULL, args, 2, err, sizeof err), 0);
    assert_int_equal(cfg_finish(&c, err, sizeof err), 0);
    assert_int_equal(c.admin_port, 19080);
    assert_int_equal(c.plaintext_port, 19092);
    assert_int_equal(c.iam_port, 19098);
    assert_int_equal(c.iam_credentials_port, 19180);
    assert_int_equal(c.external_port, 0);
    assert_int_equal(cfg_finish(&c, err, sizeof err), 0); /* applied once */
    assert_int_equal(c.plaintext_port, 19092);
    cfg_free(&c);

    cfg_arg far[] = {{"--port-base", "port.base", "65530"}};
    memset(&c, 0, sizeof c);
    assert_int_equal(cfg_load(&c, NULL, far, 1, err, sizeof err), 0);
    assert_int_equal(cfg_finish(&c, err, sizeof err), -1);
    assert_non_null(strstr(err, "port.base 65530 moves plaintext.port 9092 to 65542, outside 1-65535"));
    cfg_free(&c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_port_base_moves_every_port_together),
        cmocka_unit_test(test_tooling_variables_do_not_stop_the_broker),
        cmocka_unit_test(test_every_key_documented),
        cmocka_unit_test(test_profiles_choose_defaults),
        cmocka_unit_test(test_bad_values_name_the_key),
        cmocka_unit_test(test_group_config_keys),
        cmocka_unit_test(test_version_floors_and_ceilings),
        cmocka_unit_test(test_file_errors_carry_line),
        cmocka_unit_test(test_profile_after_other_keys_resets_none),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
