/*
 * The CLI's IAM pieces that need no broker (broker/cli): where credentials and the region come
 * from (aws_creds.h, driven through the environment and files as the AWS SDKs read them), which
 * container endpoints may be called over plain HTTP, and the shape of both signed messages
 * (iam_sign.h; the broker's verifier checks the signatures in tests/integration/test_cli_iam.py).
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
#include <jansson.h>
#include <openssl/evp.h>

#include "cli/aws_creds.h"
#include "cli/iam_sign.h"

static const char *const aws_vars[] = {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
                                       "AWS_DEFAULT_PROFILE", "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE",
                                       "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
                                       "AWS_CONTAINER_AUTHORIZATION_TOKEN", "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
                                       "AWS_REGION", "AWS_DEFAULT_REGION"};
static char dir[64];

static int setup(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof aws_vars / sizeof aws_vars[0]; i++) unsetenv(aws_vars[i]);
    snprintf(dir, sizeof dir, "/tmp/cli-iam-XXXXXX");
    assert_non_null(mkdtemp(dir));
    setenv("HOME", dir, 1); /* no ~/.aws of the machine's */
    return 0;
}

static int teardown(void **state) {
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static const char *write_file(const char *name, const char *text) {
    static char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static void test_container_urls_the_sdks_allow(void **state) {
    (void)state;
    char host[256], path[256], err[512];
    int port;
    assert_int_equal(cli_container_url("http://127.0.0.1:9180/role/app", host, sizeof host, &port, path, sizeof path, err,
                                       sizeof err), 0);
    assert_string_equal(host, "127.0.0.1");
    assert_int_equal(port, 9180);
    assert_string_equal(path, "/role/app");
    assert_int_equal(cli_container_url("http://169.254.170.2/v2/credentials/x", host, sizeof host, &port, path,
                                       sizeof path, err, sizeof err), 0);
    assert_int_equal(port, 80);
    assert_int_equal(cli_container_url("http://[::1]:8080/x", host, sizeof host, &port, path, sizeof path, err,
                                       sizeof err), 0);
    assert_string_equal(host, "::1");
    assert_int_equal(cli_container_url("http://192.0.2.1/x", host, sizeof host, &port, path, sizeof path, err,
                                       sizeof err), -1);
    assert_non_null(strstr(err, "plain http only to a loopback address"));
    assert_int_equal(cli_container_url("https://127.0.0.1/x", host, sizeof host, &port, path, sizeof path, err,
                                       sizeof err), -1);
    assert_non_null(strstr(err, "https is not supported"));
    assert_int_equal(cli_container_url("http://127.0.0.1:99999/x", host, sizeof host, &port, path, sizeof path, err,
                                       sizeof err), -1);
}

static void test_environment_first_then_the_profile(void **state) {
    (void)state;
    static cli_aws_creds c;
    char err[1024];
    const char *creds = write_file("credentials", "# comment\n[default]\naws_access_key_id = AKIDDEFAULT\n"
                                                  "aws_secret_access_key=secretdefault\n\n[work]\n"
                                                  "  aws_access_key_id =AKIDWORK  \naws_secret_access_key = s/w+k\n"
                                                  "aws_session_token = tok\n");
    setenv("AWS_SHARED_CREDENTIALS_FILE", creds, 1);
    assert_int_equal(cli_aws_creds_resolve(&c, 1000, err, sizeof err), 0);
    assert_string_equal(c.access_key_id, "AKIDDEFAULT");
    setenv("AWS_PROFILE", "work", 1);
    assert_int_equal(cli_aws_creds_resolve(&c, 1000, err, sizeof err), 0);
    assert_string_equal(c.access_key_id, "AKIDWORK");
    assert_string_equal(c.secret_access_key, "s/w+k");
    assert_string_equal(c.session_token, "tok");
    assert_non_null(strstr(c.source, "profile work in"));
    setenv("AWS_ACCESS_KEY_ID", "AKIDENV", 1);
    assert_int_equal(cli_aws_creds_resolve(&c, 1000, err, sizeof err), -1); /* half of a key */
    assert_non_null(strstr(err, "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not"));
    setenv("AWS_SECRET_ACCESS_KEY", "envsecret", 1);
    assert_int_equal(cli_aws_creds_resolve(&c, 1000, err, sizeof err), 0);
    assert_string_equal(c.access_key_id, "AKIDENV");
    assert_string_equal(c.session_token, "");
}

static void test_profiles_in_the_config_file_and_what_is_refused(void **state) {
    (void)state;
    static cli_aws_creds c;
    char err[1024], region[64];
    const char *cfg = write_file("config", "[profile ops]\naws_access_key_id=AKIDOPS\naws_secret_access_key=x\n"
                                           "region = eu-west-1\n[profile sso]\nsso_session = corp\n");
    setenv("AWS_CONFIG_FILE", cfg, 1);
    setenv("AWS_PROFILE", "ops", 1);
    assert_int_equal(cli_aws_creds_resolve(&c, 1000, err, sizeof err), 0);
    assert_string_equal(c.access_key_id, "AKIDOPS");
    assert_int_equal(cli_aws_region(NULL, region, sizeof region, err, sizeof err), 0);
    assert_string_equal(region, "eu-west-1");
    setenv("AWS_DEFAULT_REGION", "us-west-2", 1);
    assert_int_equal(cli_aws_region(NULL, region, sizeof region, err, sizeof err), 0);
    assert_string_equal(region, "us-west-2");
    setenv("AWS_REGION", "ap-south-1", 1);
    assert_int_equal(cli_aws_region(NULL, region, sizeof region, err, sizeof err), 0);
    assert_string_equal(region, "ap-south-1");
    assert_int_equal(cli_aws_region("sa-east-1", region, sizeof region, err, sizeof err), 0);
    assert_string_equal(region, "sa-east-1");
    setenv("AWS_PROFILE", "sso", 1);
    assert_int_equal(cli_aws_creds_resolve(&c, 1000, err, sizeof err), -1);
    assert_non_null(strstr(err, "through sso_session, which this client does not follow"));
    setenv("AWS_PROFILE", "nope", 1);
    assert_int_equal(cli_aws_creds_resolve(&c, 1000, err, sizeof err), -1);
    assert_non_null(strstr(err, "AWS_PROFILE names profile nope"));
    unsetenv("AWS_PROFILE");
    assert_int_equal(cli_aws_creds_resolve(&c, 1000, err, sizeof err), -1);
    assert_non_null(strstr(err, "no AWS credentials"));
}

static const cli_aws_creds key = {"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "session/token+x", -1, "test"};
#define NOW_MS 1440938160000LL /* 2015-08-30T12:36:00Z */

static void test_aws_msk_iam_payload(void **state) {
    (void)state;
    char err[512];
    size_t len;
    char *msg = cli_iam_message(CLI_MECH_AWS_MSK_IAM, &key, "us-east-1", "b-1.example.com", NOW_MS, &len, err, sizeof err);
    assert_non_null(msg);
    json_t *j = json_loadb(msg, len, 0, NULL);
    assert_non_null(j);
    assert_string_equal(json_string_value(json_object_get(j, "version")), "2020_10_22");
    assert_string_equal(json_string_value(json_object_get(j, "host")), "b-1.example.com");
    assert_string_equal(json_string_value(json_object_get(j, "action")), "kafka-cluster:Connect");
    assert_string_equal(json_string_value(json_object_get(j, "x-amz-credential")),
                        "AKIDEXAMPLE/20150830/us-east-1/kafka-cluster/aws4_request");
    assert_string_equal(json_string_value(json_object_get(j, "x-amz-date")), "20150830T123600Z");
    assert_string_equal(json_string_value(json_object_get(j, "x-amz-expires")), "900");
    assert_string_equal(json_string_value(json_object_get(j, "x-amz-signedheaders")), "host");
    assert_string_equal(json_string_value(json_object_get(j, "x-amz-security-token")), "session/token+x");
    assert_int_equal(strlen(json_string_value(json_object_get(j, "x-amz-signature"))), 64);
    json_decref(j);
    free(msg);
}

static void test_oauthbearer_token(void **state) {
    (void)state;
    char err[512];
    size_t len;
    char *msg = cli_iam_message(CLI_MECH_OAUTHBEARER, &key, "eu-west-1", "ignored", NOW_MS, &len, err, sizeof err);
    assert_non_null(msg);
    const char *pre = "n,,\001auth=Bearer ";
    assert_memory_equal(msg, pre, strlen(pre));
    assert_memory_equal(msg + len - 2, "\001\001", 2);
    /* base64url without padding: back to standard base64 to decode */
    size_t tl = len - strlen(pre) - 2;
    char *b64 = calloc(1, tl + 4);
    memcpy(b64, msg + strlen(pre), tl);
    for (size_t i = 0; i < tl; i++) {
        assert_true(b64[i] != '=' && b64[i] != '+' && b64[i] != '/');
        b64[i] = b64[i] == '-' ? '+' : b64[i] == '_' ? '/' : b64[i];
    }
    while (tl % 4) b64[tl++] = '=';
    unsigned char *url = calloc(1, tl);
    assert_true(EVP_DecodeBlock(url, (unsigned char *)b64, (int)tl) > 0);
    const char *u = (const char *)url;
    assert_non_null(strstr(u, "https://kafka.eu-west-1.amazonaws.com/?Action=kafka-cluster%3AConnect&"));
    assert_non_null(strstr(u, "X-Amz-Credential=AKIDEXAMPLE%2F20150830%2Feu-west-1%2Fkafka-cluster%2Faws4_request"));
    assert_non_null(strstr(u, "X-Amz-Security-Token=session%2Ftoken%2Bx"));
    assert_non_null(strstr(u, "&X-Amz-Signature="));
    assert_non_null(strstr(u, "&User-Agent=mskmock-cli%2F")); /* after the signature: not signed */
    assert_true(strstr(u, "&User-Agent=") > strstr(u, "&X-Amz-Signature="));
    free(url);
    free(b64);
    free(msg);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_container_urls_the_sdks_allow, setup, teardown),
        cmocka_unit_test_setup_teardown(test_environment_first_then_the_profile, setup, teardown),
        cmocka_unit_test_setup_teardown(test_profiles_in_the_config_file_and_what_is_refused, setup, teardown),
        cmocka_unit_test(test_aws_msk_iam_payload),
        cmocka_unit_test(test_oauthbearer_token),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
