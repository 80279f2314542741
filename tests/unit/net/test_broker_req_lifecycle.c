/*
 * The request lifecycle's table (net/req.h's req_valid_previous): every change the transport,
 * the pipeline and the handlers make is in it, and the changes that would lose or repeat an
 * answer are not (issue 33: invariants in code).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "net/req.h"

static void test_the_paths_a_request_takes_are_valid(void **state) {
    (void)state;
    /* answered at once; after the commit; parked then answered; a fault rule's delay runs it again */
    assert_true(req_transition_valid(REQ_QUEUED, REQ_READY));
    assert_true(req_transition_valid(REQ_QUEUED, REQ_WAIT_COMMIT));
    assert_true(req_transition_valid(REQ_WAIT_COMMIT, REQ_READY));
    assert_true(req_transition_valid(REQ_QUEUED, REQ_PARKED));
    assert_true(req_transition_valid(REQ_PARKED, REQ_WAIT_COMMIT));
    assert_true(req_transition_valid(REQ_PARKED, REQ_READY));
    assert_true(req_transition_valid(REQ_PARKED, REQ_QUEUED));
    /* acks=0, a dropped answer, the requests behind a refused one */
    assert_true(req_transition_valid(REQ_QUEUED, REQ_SILENT));
    assert_true(req_transition_valid(REQ_READY, REQ_SILENT));
}

static void test_changes_that_lose_or_repeat_an_answer_are_not(void **state) {
    (void)state;
    assert_false(req_transition_valid(REQ_SILENT, REQ_READY));      /* answering what went unanswered */
    assert_false(req_transition_valid(REQ_READY, REQ_PARKED));      /* parking an answered request */
    assert_false(req_transition_valid(REQ_READY, REQ_WAIT_COMMIT)); /* holding what may already be sent */
    assert_false(req_transition_valid(REQ_WAIT_COMMIT, REQ_SILENT)); /* dropping an acknowledgement held */
    assert_false(req_transition_valid(REQ_WAIT_COMMIT, REQ_PARKED));
    assert_false(req_transition_valid(REQ_PARKED, REQ_PARKED));
    assert_false(req_transition_valid(REQ_READY, REQ_QUEUED));
    assert_false(req_transition_valid(REQ_QUEUED, REQ_STATES));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_paths_a_request_takes_are_valid),
        cmocka_unit_test(test_changes_that_lose_or_repeat_an_answer_are_not),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
