/*
 * The consumer group protocol's pure parts (broker/group/consumer_assign.c): the uniform and
 * range assignors (balance, stickiness, heterogeneous subscriptions) and the reconciliation of a
 * member towards its target, state by state as Apache Kafka's CurrentAssignmentBuilder does it
 * (its CurrentAssignmentBuilderTest cases: revoke first, wait for unreleased partitions, the
 * previous owner's revocation releasing them, the epoch bump after a revocation), and the
 * ConsumerProtocolAssignment a classic member of a consumer group gets (KIP-848's online
 * migration), which must decode strictly at the version of the member's subscription.
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

#include "group/consumer.h"
#include "kp_consumer.h"

static cmember *mk(const char *id, const char *t1, const char *t2) {
    cmember *m = calloc(1, sizeof *m);
    m->id = strdup(id);
    m->topics = calloc(2, sizeof *m->topics);
    if (t1) m->topics[m->ntopics++] = strdup(t1);
    if (t2) m->topics[m->ntopics++] = strdup(t2);
    return m;
}

static void rm(cmember *m) {
    free(m->id);
    for (int i = 0; i < m->ntopics; i++) free(m->topics[i]);
    free(m->topics);
    cg_parts_free(&m->assigned);
    cg_parts_free(&m->revoking);
    cg_parts_free(&m->target);
    free(m);
}

static char *fmt(const cg_parts *p) { return cg_parts_format(p); }

static void assert_parts(const cg_parts *p, const char *want) {
    char *got = fmt(p);
    assert_string_equal(got, want);
    free(got);
}

/* every partition of the topics exactly once */
static void assert_cover(cmember **m, int n, const cg_topic_meta *meta, int nmeta) {
    for (int t = 0; t < nmeta; t++)
        for (int32_t p = 0; p < meta[t].nparts; p++) {
            int owners = 0;
            for (int i = 0; i < n; i++) owners += cg_parts_has(&m[i]->target, meta[t].topic, p);
            assert_int_equal(owners, 1);
        }
}

static void test_uniform_balances_and_sticks(void **state) {
    (void)state;
    cg_topic_meta meta[] = {{"a", 6}};
    cmember *m[3] = {mk("m1", "a", NULL), mk("m2", "a", NULL), mk("m3", "a", NULL)};
    cg_assign("uniform", m, 1, meta, 1);
    assert_int_equal(cg_parts_count(&m[0]->target), 6);
    cg_assign("uniform", m, 3, meta, 1);
    assert_cover(m, 3, meta, 1);
    for (int i = 0; i < 3; i++) assert_int_equal(cg_parts_count(&m[i]->target), 2);
    /* m1 keeps two of the six it had: only what balance needs moves */
    assert_parts(&m[0]->target, "a:0,1");
    /* m3 goes: its two go to the others, who keep theirs */
    cg_parts m1 = {0}, m2 = {0};
    cg_parts_copy(&m1, &m[0]->target);
    cg_parts_copy(&m2, &m[1]->target);
    cg_assign("uniform", m, 2, meta, 1);
    assert_cover(m, 2, meta, 1);
    for (int k = 0; k < m1.t[0].n; k++) assert_true(cg_parts_has(&m[0]->target, "a", m1.t[0].p[k]));
    for (int k = 0; k < m2.t[0].n; k++) assert_true(cg_parts_has(&m[1]->target, "a", m2.t[0].p[k]));
    assert_int_equal(cg_parts_count(&m[0]->target), 3);
    cg_parts_free(&m1);
    cg_parts_free(&m2);
    for (int i = 0; i < 3; i++) rm(m[i]);
}

static void test_uniform_heterogeneous_subscriptions(void **state) {
    (void)state;
    cg_topic_meta meta[] = {{"a", 3}, {"b", 3}};
    cmember *m[2] = {mk("m1", "a", "b"), mk("m2", "b", NULL)};
    cg_assign("uniform", m, 2, meta, 2);
    assert_cover(m, 2, meta, 2);
    /* only m1 may have a's partitions; b's go mostly to m2 for balance */
    assert_false(cg_parts_has(&m[1]->target, "a", 0));
    assert_int_equal(cg_parts_count(&m[0]->target), 3);
    assert_int_equal(cg_parts_count(&m[1]->target), 3);
    for (int i = 0; i < 2; i++) rm(m[i]);
}

static void test_range_by_member_id(void **state) {
    (void)state;
    cg_topic_meta meta[] = {{"a", 5}};
    /* join order is not id order: range sorts by member id */
    cmember *m[2] = {mk("zz", "a", NULL), mk("aa", "a", NULL)};
    cg_assign("range", m, 2, meta, 1);
    assert_parts(&m[1]->target, "a:0,1,2");
    assert_parts(&m[0]->target, "a:3,4");
    for (int i = 0; i < 2; i++) rm(m[i]);
}

/*
 * The range assignor was not sticky: after a member left, the survivors' ranges were cut again
 * from partition 0, so a survivor had to revoke a partition for another survivor (an extra
 * heartbeat interval before the group settled). Kafka's RangeAssignor keeps each member's
 * previous partitions up to its quota and hands out only the rest.
 */
static void test_range_is_sticky_when_a_member_leaves_or_joins(void **state) {
    (void)state;
    cg_topic_meta meta[] = {{"a", 6}};
    cmember *m[3] = {mk("m1", "a", NULL), mk("m2", "a", NULL), mk("m3", "a", NULL)};
    cg_assign("range", m, 3, meta, 1);
    assert_parts(&m[0]->target, "a:0,1");
    assert_parts(&m[1]->target, "a:2,3");
    assert_parts(&m[2]->target, "a:4,5");
    /* m1 crashes: m2 and m3 keep theirs and share m1's */
    cg_assign("range", &m[1], 2, meta, 1);
    assert_parts(&m[1]->target, "a:0,2,3");
    assert_parts(&m[2]->target, "a:1,4,5");
    /* m1 comes back (a new member): each gives up only its highest */
    cg_parts_free(&m[0]->target);
    cg_assign("range", m, 3, meta, 1);
    assert_parts(&m[0]->target, "a:3,5");
    assert_parts(&m[1]->target, "a:0,2");
    assert_parts(&m[2]->target, "a:1,4");
    assert_cover(m, 3, meta, 1);
    /* 7 partitions for 2: the one with more keeps its extra one, the other fills up to 3 */
    cg_topic_meta seven[] = {{"a", 7}};
    cg_parts_free(&m[1]->target);
    cg_parts_free(&m[2]->target);
    cg_parts_parse(&m[1]->target, "a:0,1,2,3,4");
    cg_parts_parse(&m[2]->target, "a:5");
    cg_assign("range", &m[1], 2, seven, 1);
    assert_parts(&m[1]->target, "a:0,1,2,3");
    assert_parts(&m[2]->target, "a:4,5,6");
    for (int i = 0; i < 3; i++) rm(m[i]);
}

static void test_assignor_names(void **state) {
    (void)state;
    assert_non_null(cg_assignor_known("uniform", 7));
    assert_non_null(cg_assignor_known("range", 5));
    assert_null(cg_assignor_known("sticky", 6));
    assert_null(cg_assignor_known("rang", 4));
}

/* The owners' table of a test: partition -> epoch of its holder (-1: free). */
static int32_t held[8];
static int32_t owner_epoch(void *ctx, const char *topic, int32_t p) {
    (void)ctx;
    (void)topic;
    return p >= 0 && p < 8 ? held[p] : -1;
}

static void test_reconcile_revokes_before_assigning(void **state) {
    (void)state;
    for (int i = 0; i < 8; i++) held[i] = -1;
    cmember *m = mk("m", "a", NULL);
    m->epoch = 10;
    m->state = CM_STABLE;
    cg_parts_parse(&m->assigned, "a:0,1,2");
    cg_parts_parse(&m->target, "a:2,3");
    cg_parts owned = {0};
    cg_parts_parse(&owned, "a:0,1,2");
    /* 0 and 1 must go first: the member stays at epoch 10, UNREVOKED_PARTITIONS, keeping 2 */
    assert_true(cg_reconcile(m, 11, &owned, owner_epoch, NULL));
    assert_int_equal(m->state, CM_UNREVOKED_PARTITIONS);
    assert_int_equal(m->epoch, 10);
    assert_parts(&m->assigned, "a:2");
    assert_parts(&m->revoking, "a:0,1");
    /* still reporting 0: nothing moves */
    assert_false(cg_reconcile(m, 11, &owned, owner_epoch, NULL));
    /* revoked: epoch 11, 3 added (free), stable */
    cg_parts_free(&owned);
    cg_parts_parse(&owned, "a:2");
    assert_true(cg_reconcile(m, 11, &owned, owner_epoch, NULL));
    assert_int_equal(m->state, CM_STABLE);
    assert_int_equal(m->epoch, 11);
    assert_int_equal(m->prev_epoch, 10);
    assert_parts(&m->assigned, "a:2,3");
    assert_parts(&m->revoking, "");
    cg_parts_free(&owned);
    rm(m);
}

static void test_reconcile_waits_for_unreleased_partitions(void **state) {
    (void)state;
    for (int i = 0; i < 8; i++) held[i] = -1;
    held[1] = 10; /* another member still holds partition 1 */
    cmember *m = mk("m", "a", NULL);
    m->epoch = 10;
    cg_parts_parse(&m->assigned, "a:0");
    cg_parts_parse(&m->target, "a:0,1");
    cg_parts owned = {0};
    cg_parts_parse(&owned, "a:0");
    assert_true(cg_reconcile(m, 11, &owned, owner_epoch, NULL));
    assert_int_equal(m->state, CM_UNRELEASED_PARTITIONS);
    assert_int_equal(m->epoch, 11);
    assert_parts(&m->assigned, "a:0");
    /* released: given at the next heartbeat */
    held[1] = -1;
    assert_true(cg_reconcile(m, 11, &owned, owner_epoch, NULL));
    assert_int_equal(m->state, CM_STABLE);
    assert_parts(&m->assigned, "a:0,1");
    cg_parts_free(&owned);
    rm(m);
}

static void test_reconcile_without_owned_partitions_keeps_revoking(void **state) {
    (void)state;
    for (int i = 0; i < 8; i++) held[i] = -1;
    cmember *m = mk("m", "a", NULL);
    m->epoch = 3;
    cg_parts_parse(&m->assigned, "a:0,1");
    cg_parts_parse(&m->target, "a:0");
    /* not reporting what it owns counts as still owning it (ownsRevokedPartitions) */
    assert_true(cg_reconcile(m, 4, NULL, owner_epoch, NULL));
    assert_int_equal(m->state, CM_UNREVOKED_PARTITIONS);
    assert_false(cg_reconcile(m, 4, NULL, owner_epoch, NULL));
    rm(m);
}

static void test_parts_text_round_trip(void **state) {
    (void)state;
    cg_parts p = {0}, q = {0};
    cg_parts_add(&p, "b", 2);
    cg_parts_add(&p, "a.x-1", 7);
    cg_parts_add(&p, "b", 0);
    cg_parts_add(&p, "b", 2);
    assert_parts(&p, "a.x-1:7;b:0,2");
    char *t = fmt(&p);
    cg_parts_parse(&q, t);
    assert_true(cg_parts_eq(&p, &q));
    free(t);
    cg_parts_free(&p);
    cg_parts_free(&q);
}

static void test_classic_assignment_encodes_at_the_members_version(void **state) {
    (void)state;
    cg_parts p = {0};
    cg_parts_add(&p, "orders", 3);
    cg_parts_add(&p, "orders", 1);
    cg_parts_add(&p, "audit", 0);
    for (int16_t v = -1; v <= 5; v++) {
        size_t len;
        uint8_t *b = cg_assignment_encode(&p, v, &len);
        kp_arena arena = {0};
        kp_assignment a;
        assert_true(kp_assignment_decode(b, len, KP_CONSUMER_STRICT, &a, &arena, NULL));
        assert_int_equal(a.version, v < 0 ? 0 : v > 3 ? 3 : v); /* capped as Java's checkAssignmentVersion */
        assert_int_equal(a.nassigned, 2);
        assert_int_equal(a.user_data.len, -1);
        cg_parts back = {0};
        for (int32_t i = 0; i < a.nassigned; i++)
            for (int32_t k = 0; k < a.assigned[i].n; k++) {
                char t[32];
                snprintf(t, sizeof t, "%.*s", a.assigned[i].topic.len, a.assigned[i].topic.p);
                cg_parts_add(&back, t, a.assigned[i].partitions[k]);
            }
        assert_true(cg_parts_eq(&p, &back));
        cg_parts_free(&back);
        kp_arena_free(&arena);
        free(b);
    }
    size_t len;
    cg_parts none = {0};
    uint8_t *b = cg_assignment_encode(&none, 1, &len);
    assert_int_equal(len, 10); /* version, an empty array, null user data */
    free(b);
    cg_parts_free(&p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_uniform_balances_and_sticks),
        cmocka_unit_test(test_uniform_heterogeneous_subscriptions),
        cmocka_unit_test(test_range_by_member_id),
        cmocka_unit_test(test_range_is_sticky_when_a_member_leaves_or_joins),
        cmocka_unit_test(test_assignor_names),
        cmocka_unit_test(test_reconcile_revokes_before_assigning),
        cmocka_unit_test(test_reconcile_waits_for_unreleased_partitions),
        cmocka_unit_test(test_reconcile_without_owned_partitions_keeps_revoking),
        cmocka_unit_test(test_parts_text_round_trip),
        cmocka_unit_test(test_classic_assignment_encodes_at_the_members_version),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
