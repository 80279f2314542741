/*
 * The transaction coordinator's state table (txn_transition_valid) against Apache Kafka's: each
 * state's validPreviousStates in TransactionState.java (4.x transaction-coordinator; the Scala
 * TransactionMetadata.scala before it), written out here again as Kafka lists them, so that a
 * change to either side shows. Kafka's PrepareEpochFence has no state here (txn.c says why): its
 * rows and columns are left out. Every other pair is checked.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "txn/txn.h"

#define NSTATES (TS_DEAD + 1)

typedef struct row {
    txn_state to;
    txn_state from[NSTATES];
    int n;
} row;

static const row kafka[] = {
    {TS_EMPTY, {TS_EMPTY, TS_COMPLETE_COMMIT, TS_COMPLETE_ABORT}, 3},
    {TS_ONGOING, {TS_ONGOING, TS_EMPTY, TS_COMPLETE_COMMIT, TS_COMPLETE_ABORT}, 4},
    {TS_PREPARE_COMMIT, {TS_ONGOING}, 1},
    /* and PrepareEpochFence */
    {TS_PREPARE_ABORT, {TS_ONGOING, TS_EMPTY, TS_COMPLETE_COMMIT, TS_COMPLETE_ABORT}, 4},
    {TS_COMPLETE_COMMIT, {TS_PREPARE_COMMIT}, 1},
    {TS_COMPLETE_ABORT, {TS_PREPARE_ABORT}, 1},
    {TS_DEAD, {TS_EMPTY, TS_COMPLETE_ABORT, TS_COMPLETE_COMMIT}, 3},
};

static bool listed(txn_state from, txn_state to) {
    for (size_t i = 0; i < sizeof kafka / sizeof kafka[0]; i++) {
        if (kafka[i].to != to) continue;
        for (int k = 0; k < kafka[i].n; k++)
            if (kafka[i].from[k] == from) return true;
    }
    return false;
}

static void test_every_state_has_a_row(void **state) {
    (void)state;
    assert_int_equal(sizeof kafka / sizeof kafka[0], NSTATES);
    for (int st = 0; st < NSTATES; st++) assert_int_equal(kafka[st].to, st);
}

static void test_table_is_kafkas(void **state) {
    (void)state;
    for (int from = 0; from < NSTATES; from++)
        for (int to = 0; to < NSTATES; to++) {
            bool want = listed(from, to), got = txn_transition_valid(from, to);
            if (want != got)
                fail_msg("%s -> %s: Kafka %s it, txn_transition_valid %s it", txn_state_name(from),
                         txn_state_name(to), want ? "allows" : "forbids", got ? "allows" : "forbids");
        }
}

/* The transitions the coordinator makes (each txn_set_state call), each one Kafka allows. */
static void test_transitions_the_coordinator_makes(void **state) {
    (void)state;
    /* InitProducerId: a new id, or one whose last transaction is done */
    assert_true(txn_transition_valid(TS_EMPTY, TS_EMPTY));
    assert_true(txn_transition_valid(TS_COMPLETE_COMMIT, TS_EMPTY));
    assert_true(txn_transition_valid(TS_COMPLETE_ABORT, TS_EMPTY));
    /* AddPartitionsToTxn / AddOffsetsToTxn begin a transaction */
    assert_true(txn_transition_valid(TS_EMPTY, TS_ONGOING));
    assert_true(txn_transition_valid(TS_COMPLETE_COMMIT, TS_ONGOING));
    assert_true(txn_transition_valid(TS_COMPLETE_ABORT, TS_ONGOING));
    /* EndTxn, the timeout, a new producer's fence: the decision, then its completion */
    assert_true(txn_transition_valid(TS_ONGOING, TS_PREPARE_COMMIT));
    assert_true(txn_transition_valid(TS_ONGOING, TS_PREPARE_ABORT));
    assert_true(txn_transition_valid(TS_PREPARE_COMMIT, TS_COMPLETE_COMMIT));
    assert_true(txn_transition_valid(TS_PREPARE_ABORT, TS_COMPLETE_ABORT));
    /* and some it must never make */
    assert_false(txn_transition_valid(TS_ONGOING, TS_EMPTY));
    assert_false(txn_transition_valid(TS_PREPARE_COMMIT, TS_COMPLETE_ABORT));
    assert_false(txn_transition_valid(TS_PREPARE_ABORT, TS_ONGOING));
    assert_false(txn_transition_valid(TS_EMPTY, TS_PREPARE_COMMIT));
    assert_false(txn_transition_valid(TS_DEAD, TS_EMPTY));
}

static void test_out_of_range_states_are_refused(void **state) {
    (void)state;
    assert_false(txn_transition_valid((txn_state)NSTATES, TS_EMPTY));
    assert_false(txn_transition_valid(TS_EMPTY, (txn_state)NSTATES));
    assert_false(txn_transition_valid((txn_state)-1, TS_ONGOING));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_state_has_a_row),
        cmocka_unit_test(test_table_is_kafkas),
        cmocka_unit_test(test_transitions_the_coordinator_makes),
        cmocka_unit_test(test_out_of_range_states_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
