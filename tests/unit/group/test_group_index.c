/*
 * The groups of a cluster by id (broker/name_index.c): grp_find through groups made,
 * deleted in any order and made again, across the index's growth, with ids that differ in one
 * byte or in length. A stale index would answer GROUP_ID_NOT_FOUND for a group that is there, or
 * hand a freed group to a request.
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

#include "group/group.h"
#include "broker_harness.h"

static group *find(harness *h, const char *id) { return grp_find(&h->s, id, strlen(id)); }

static void test_find_through_creates_and_deletes(void **state) {
    (void)state;
    enum { N = 700 };
    harness *h = h_new(NULL);
    group *all[N];
    char id[32];
    for (int i = 0; i < N; i++) {
        snprintf(id, sizeof id, "g-%d", i);
        all[i] = grp_get_or_create(&h->s, id, strlen(id));
        assert_ptr_equal(grp_get_or_create(&h->s, id, strlen(id)), all[i]); /* the same again */
    }
    for (int i = 0; i < N; i += 2) {
        assert_int_equal(grp_delete(&h->s, all[i]), 0);
        all[i] = NULL;
    }
    for (int i = 0; i < N; i++) {
        snprintf(id, sizeof id, "g-%d", i);
        assert_ptr_equal(find(h, id), all[i]);
    }
    assert_null(find(h, "g-"));
    assert_null(find(h, "g-7000"));
    assert_ptr_equal(grp_find(&h->s, "g-10", 3), all[1]); /* the length given, not the string's */
    assert_null(grp_find(&h->s, "g-2x", 3));                /* deleted */
    snprintf(id, sizeof id, "g-%d", 4);
    group *again = grp_get_or_create(&h->s, id, strlen(id));
    assert_ptr_equal(find(h, "g-4"), again);
    int listed = 0;
    for (group *g = h->s.groups; g; g = g->next) listed++;
    assert_int_equal(listed, N / 2 + 1);
    h_free(h);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_find_through_creates_and_deletes, h_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
