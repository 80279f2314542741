/*
 * The classic group's state table (grp_transition_valid) against Apache Kafka's: each state's
 * validPreviousStates in GroupMetadata.scala (3.x core) and ClassicGroupState.java (4.x
 * group-coordinator), written out here again as Kafka lists them, so that a change to either
 * side shows. Every pair is checked: the listed ones are accepted, every other refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "group/group.h"

#define NSTATES (GS_DEAD + 1)

typedef struct row {
    group_state to;
    group_state from[NSTATES];
    int n;
} row;

static const row kafka[] = {
    {GS_EMPTY, {GS_PREPARING}, 1},
    {GS_PREPARING, {GS_STABLE, GS_COMPLETING, GS_EMPTY}, 3},
    {GS_COMPLETING, {GS_PREPARING}, 1},
    {GS_STABLE, {GS_COMPLETING}, 1},
    {GS_DEAD, {GS_STABLE, GS_PREPARING, GS_COMPLETING, GS_EMPTY, GS_DEAD}, 5},
};

static bool listed(group_state from, group_state to) {
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
            bool want = listed(from, to), got = grp_transition_valid(from, to);
            if (want != got)
                fail_msg("%s -> %s: Kafka %s it, grp_transition_valid %s it", grp_state_name(from),
                         grp_state_name(to), want ? "allows" : "forbids", got ? "allows" : "forbids");
        }
}

/* The transitions the coordinator makes (group.c's set_state calls), each one Kafka allows. */
static void test_transitions_the_coordinator_makes(void **state) {
    (void)state;
    assert_true(grp_transition_valid(GS_EMPTY, GS_PREPARING));      /* first member joins */
    assert_true(grp_transition_valid(GS_STABLE, GS_PREPARING));     /* rejoin, leave, expiry */
    assert_true(grp_transition_valid(GS_COMPLETING, GS_PREPARING)); /* the same before the leader syncs */
    assert_true(grp_transition_valid(GS_PREPARING, GS_COMPLETING)); /* the join phase completes */
    assert_true(grp_transition_valid(GS_PREPARING, GS_EMPTY));      /* everyone left during it */
    assert_true(grp_transition_valid(GS_COMPLETING, GS_STABLE));    /* the leader's SyncGroup */
    /* and some it must never make */
    assert_false(grp_transition_valid(GS_PREPARING, GS_PREPARING));
    assert_false(grp_transition_valid(GS_EMPTY, GS_STABLE));
    assert_false(grp_transition_valid(GS_STABLE, GS_EMPTY));
    assert_false(grp_transition_valid(GS_DEAD, GS_EMPTY));
}

static void test_out_of_range_states_are_refused(void **state) {
    (void)state;
    assert_false(grp_transition_valid((group_state)NSTATES, GS_EMPTY));
    assert_false(grp_transition_valid(GS_EMPTY, (group_state)NSTATES));
    assert_false(grp_transition_valid((group_state)-1, GS_DEAD));
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
