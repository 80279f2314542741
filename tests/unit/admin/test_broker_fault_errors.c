/*
 * fault_error_fits: which Kafka errors a fault rule may inject into which API's answer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "admin/fault.h"
#include "kp_errors.h"

static bool fits(int16_t key, int16_t code, const char *why_has) {
    char why[640] = "";
    bool ok = fault_error_fits(key, 0, 17, code, why, sizeof why);
    if (!ok && why_has && !strstr(why, why_has)) {
        print_error("reason '%s' lacks '%s'\n", why, why_has);
        fail();
    }
    return ok;
}

static void test_partition_errors(void **state) {
    (void)state;
    assert_true(fits(0, KERR_NOT_LEADER_OR_FOLLOWER, NULL));  /* Produce */
    assert_true(fits(1, KERR_FENCED_LEADER_EPOCH, NULL));     /* Fetch */
    assert_true(fits(3, KERR_LEADER_NOT_AVAILABLE, NULL));    /* Metadata */
    assert_true(fits(8, KERR_UNKNOWN_TOPIC_OR_PARTITION, NULL)); /* OffsetCommit */
    assert_true(fits(32, KERR_UNKNOWN_TOPIC_OR_PARTITION, NULL)); /* DescribeConfigs: a topic resource */
    assert_false(fits(12, KERR_NOT_LEADER_OR_FOLLOWER, "Heartbeat answers have no error field for a topic"));
    assert_false(fits(11, KERR_UNKNOWN_TOPIC_OR_PARTITION, "JoinGroup"));
    assert_false(fits(46, KERR_NOT_LEADER_OR_FOLLOWER, "ListPartitionReassignments"));
}

static void test_group_errors(void **state) {
    (void)state;
    assert_true(fits(11, KERR_REBALANCE_IN_PROGRESS, NULL));
    assert_true(fits(12, KERR_UNKNOWN_MEMBER_ID, NULL));
    assert_true(fits(8, KERR_ILLEGAL_GENERATION, NULL));
    assert_false(fits(0, KERR_REBALANCE_IN_PROGRESS, "consumer group error; Produce never returns it"));
    assert_false(fits(1, KERR_UNKNOWN_MEMBER_ID, "JoinGroup"));
    /* coordinator errors: groups, and InitProducerId's transaction coordinator */
    assert_true(fits(10, KERR_COORDINATOR_NOT_AVAILABLE, NULL));
    assert_true(fits(22, KERR_NOT_COORDINATOR, NULL));
    assert_false(fits(0, KERR_NOT_COORDINATOR, "coordinator error"));
}

static void test_listed_and_generic(void **state) {
    (void)state;
    assert_true(fits(0, KERR_MESSAGE_TOO_LARGE, NULL));
    assert_false(fits(12, KERR_MESSAGE_TOO_LARGE, "returned by Produce only, not by Heartbeat"));
    assert_true(fits(19, KERR_TOPIC_ALREADY_EXISTS, NULL));
    assert_false(fits(20, KERR_TOPIC_ALREADY_EXISTS, "CreateTopics"));
    assert_true(fits(36, KERR_SASL_AUTHENTICATION_FAILED, NULL));
    assert_false(fits(3, KERR_SASL_AUTHENTICATION_FAILED, "SaslAuthenticate"));
    /* request-level errors go anywhere an error field is */
    assert_true(fits(12, KERR_UNKNOWN_SERVER_ERROR, NULL));
    assert_true(fits(18, KERR_REQUEST_TIMED_OUT, NULL));
    assert_true(fits(0, KERR_INVALID_REQUEST, NULL));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_partition_errors),
        cmocka_unit_test(test_group_errors),
        cmocka_unit_test(test_listed_and_generic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
