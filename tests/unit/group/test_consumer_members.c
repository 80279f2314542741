/*
 * A consumer group's member list (broker/group/consumer_members.c): the index by member id and
 * by instance id through joins, leaves in any order (the deletions that shift a probe run back),
 * a static member's new id, and growth; the union of the subscriptions made again only after a
 * change; the deadline bound the group's timer waits for. The heartbeat path reads these instead
 * of walking every member (docs/benchmarks.md, issue 36), so a stale index would answer
 * UNKNOWN_MEMBER_ID to a member that is there.
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

static cmember *mk(const char *id, const char *instance) {
    cmember *m = calloc(1, sizeof *m);
    m->id = strdup(id);
    m->instance_id = instance ? strdup(instance) : NULL;
    return m;
}

static void rm(cmember *m) {
    free(m->id);
    free(m->instance_id);
    for (int i = 0; i < m->ntopics; i++) free(m->topics[i]);
    free(m->topics);
    free(m);
}

static cmember *find(const cgroup *cg, const char *id) { return cg_member_find(cg, id, strlen(id)); }
static cmember *find_static(const cgroup *cg, const char *iid) { return cg_member_find_static(cg, iid, strlen(iid)); }

/* 2,000 members, half of them static; every other one leaves; the rest are all still found. */
static void test_index_survives_joins_and_leaves(void **state) {
    (void)state;
    enum { N = 2000 };
    cgroup cg = {0};
    cmember *all[N];
    char id[32], iid[32];
    for (int i = 0; i < N; i++) {
        snprintf(id, sizeof id, "member-%d", i);
        snprintf(iid, sizeof iid, "instance-%d", i);
        all[i] = mk(id, i % 2 ? iid : NULL);
        cg_member_add(&cg, all[i]);
    }
    assert_int_equal(cg.n, N);
    for (int i = 0; i < N; i += 3) {
        cg_member_remove(&cg, all[i]);
        rm(all[i]);
        all[i] = NULL;
    }
    for (int i = 0; i < N; i++) {
        snprintf(id, sizeof id, "member-%d", i);
        snprintf(iid, sizeof iid, "instance-%d", i);
        assert_ptr_equal(find(&cg, id), all[i]);
        assert_ptr_equal(find_static(&cg, iid), i % 2 ? all[i] : NULL);
    }
    /* join order is kept */
    assert_ptr_equal(cg.m[0], all[1]);
    assert_ptr_equal(cg.m[1], all[2]);
    assert_ptr_equal(cg.m[2], all[4]);
    assert_null(find(&cg, "member-"));
    assert_null(find(&cg, "member-2000"));
    assert_null(find_static(&cg, "member-1"));
    for (int i = 0; i < N; i++)
        if (all[i]) {
            cg_member_remove(&cg, all[i]);
            rm(all[i]);
        }
    assert_int_equal(cg.n, 0);
    assert_null(find(&cg, "member-1"));
    cg_members_free(&cg);
    free(cg.m);
}

/* A static member's replacement takes over under a new member id; an instance id set after joining is found. */
static void test_index_follows_new_ids(void **state) {
    (void)state;
    cgroup cg = {0};
    cmember *a = mk("a", "i-a"), *b = mk("b", NULL);
    cg_member_add(&cg, a);
    cg_member_add(&cg, b);
    cg_member_set_id(&cg, a, "a2");
    assert_null(find(&cg, "a"));
    assert_ptr_equal(find(&cg, "a2"), a);
    assert_ptr_equal(find_static(&cg, "i-a"), a);
    cg_member_set_instance(&cg, b, "i-b", 3);
    assert_ptr_equal(find_static(&cg, "i-b"), b);
    cg_member_set_instance(&cg, b, "i-b", 3); /* the same again: still once */
    cg_member_remove(&cg, b);
    assert_null(find_static(&cg, "i-b"));
    assert_null(find(&cg, "b"));
    assert_ptr_equal(find(&cg, "a2"), a);
    rm(b);
    cg_member_remove(&cg, a);
    rm(a);
    cg_members_free(&cg);
    free(cg.m);
}

static void subscribe(cmember *m, const char *t1, const char *t2) {
    for (int i = 0; i < m->ntopics; i++) free(m->topics[i]);
    free(m->topics);
    m->topics = calloc(2, sizeof *m->topics);
    m->ntopics = 0;
    if (t1) m->topics[m->ntopics++] = strdup(t1);
    if (t2) m->topics[m->ntopics++] = strdup(t2);
}

static void assert_subs(cgroup *cg, const char *want) {
    int n;
    char *const *t = cg_subscribed_topics(cg, &n);
    char got[256] = "";
    for (int i = 0; i < n; i++) {
        if (i) strcat(got, ",");
        strcat(got, t[i]);
    }
    assert_string_equal(got, want);
}

static void test_subscribed_topics_follow_changes(void **state) {
    (void)state;
    cgroup cg = {0};
    cmember *a = mk("a", NULL), *b = mk("b", NULL);
    subscribe(a, "t2", "t1");
    subscribe(b, "t2", "t3");
    cg_member_add(&cg, a);
    assert_subs(&cg, "t1,t2");
    cg_member_add(&cg, b);
    assert_subs(&cg, "t1,t2,t3");
    subscribe(b, "t4", NULL);
    cg_subscriptions_changed(&cg);
    assert_subs(&cg, "t1,t2,t4");
    cg_member_remove(&cg, a);
    rm(a); /* the union keeps copies of its own */
    assert_subs(&cg, "t4");
    cg_member_remove(&cg, b);
    rm(b);
    assert_subs(&cg, "");
    cg_members_free(&cg);
    free(cg.m);
}

/* The bound is never later than a noted deadline, and a rescan makes it exact. */
static void test_deadline_bound(void **state) {
    (void)state;
    cgroup cg = {0};
    cmember *a = mk("a", NULL), *b = mk("b", NULL);
    cg_member_add(&cg, a);
    cg_member_add(&cg, b);
    a->session_deadline_ms = 5000;
    b->session_deadline_ms = 7000;
    cg_deadline_note(&cg, 5000);
    assert_int_equal(cg.deadline_floor, 0); /* unknown stays unknown until a rescan */
    assert_int_equal(cg_deadlines_rescan(&cg), 5000);
    a->session_deadline_ms = 9000; /* a heartbeat: later, the bound may stay */
    cg_deadline_note(&cg, 9000);
    assert_int_equal(cg.deadline_floor, 5000);
    b->revoke_deadline_ms = 3000; /* earlier: the bound follows */
    cg_deadline_note(&cg, 3000);
    cg_deadline_note(&cg, 0); /* none */
    assert_int_equal(cg.deadline_floor, 3000);
    b->revoke_deadline_ms = 0;
    assert_int_equal(cg_deadlines_rescan(&cg), 7000);
    cg_member_remove(&cg, a);
    cg_member_remove(&cg, b);
    assert_int_equal(cg_deadlines_rescan(&cg), INT64_MAX);
    rm(a);
    rm(b);
    cg_members_free(&cg);
    free(cg.m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_index_survives_joins_and_leaves),
        cmocka_unit_test(test_index_follows_new_ids),
        cmocka_unit_test(test_subscribed_topics_follow_changes),
        cmocka_unit_test(test_deadline_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
