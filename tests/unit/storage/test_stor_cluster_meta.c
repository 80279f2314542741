/*
 * stor: cluster tags and policies (migration 10). Tags survive a reopen, the last write wins, a
 * removed key is gone, each cluster's are its own, an uncommitted write is read back and lost
 * without a commit, and stor_cluster_tags_delete takes a cluster's tags only. A cluster policy
 * is one document and version per cluster, replaced by the next put, gone once deleted.
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
#include <sqlite3.h>

#include "fixtures.h"
#include "stor.h"

#define A "arn:aws:kafka:us-east-1:123456789012:cluster/a/0a1b2c3d-1111-2222-3333-444455556666-s1"
#define B "arn:aws:kafka:us-east-1:123456789012:cluster/b/0a1b2c3d-7777-2222-3333-444455556666-s1"

static int fx_setup(void **state) {
    *state = fx_new("stor_cluster_tags", STOR_SYNC_NORMAL);
    return 0;
}

typedef struct tags {
    int n;
    char rows[8][96];
} tags;

static void on_tag(void *ctx, const char *key, const char *value) {
    tags *t = ctx;
    assert_true(t->n < 8);
    snprintf(t->rows[t->n++], sizeof t->rows[0], "%s=%s", key, value);
}

static tags load(stor *s, const char *arn) {
    tags t = {0};
    assert_int_equal(stor_cluster_tags_load(s, arn, on_tag, &t), 0);
    return t;
}

static void test_cluster_tags_round_trip(void **state) {
    fx *f = *state;
    assert_int_equal(stor_cluster_tag_set(f->s, A, "team", "payments"), 0);
    assert_int_equal(stor_cluster_tag_set(f->s, A, "env", "dev"), 0);
    assert_int_equal(stor_cluster_tag_set(f->s, A, "env", "prod"), 0); /* the last write wins */
    assert_int_equal(stor_cluster_tag_set(f->s, A, "empty", ""), 0);   /* AWS allows empty values */
    assert_int_equal(stor_cluster_tag_set(f->s, A, "gone", "x"), 0);
    assert_int_equal(stor_cluster_tag_set(f->s, A, "gone", NULL), 0);
    assert_int_equal(stor_cluster_tag_set(f->s, A, "never", NULL), 0); /* nothing to remove is no error */
    assert_int_equal(stor_cluster_tag_set(f->s, B, "env", "test"), 0);
    assert_int_equal(stor_cluster_tag_set(f->s, NULL, "env", "test"), -1);
    assert_int_equal(stor_commit(f->s), 0);
    fx_reopen(f);
    tags t = load(f->s, A);
    assert_int_equal(t.n, 3);
    assert_string_equal(t.rows[0], "empty=");
    assert_string_equal(t.rows[1], "env=prod");
    assert_string_equal(t.rows[2], "team=payments");
    t = load(f->s, B);
    assert_int_equal(t.n, 1);
    assert_string_equal(t.rows[0], "env=test");
    assert_int_equal(load(f->s, "arn:aws:kafka:us-east-1:123456789012:cluster/c/x").n, 0);
    /* deleting a cluster's tags leaves the others' */
    assert_int_equal(stor_cluster_tags_delete(f->s, A), 0);
    assert_int_equal(stor_commit(f->s), 0);
    assert_int_equal(load(f->s, A).n, 0);
    assert_int_equal(load(f->s, B).n, 1);
}

/* A request's tags are stored together: a failing key undoes the ones before it. */
static void test_put_is_all_or_nothing(void **state) {
    fx *f = *state;
    const char *keys[] = {"a", "b", "c"}, *values[] = {"1", "2", "3"};
    assert_int_equal(stor_cluster_tags_put(f->s, A, keys, values, 3), 0);
    const char *bad[] = {"d", NULL};
    assert_int_equal(stor_cluster_tags_put(f->s, A, bad, values, 2), -1);
    assert_int_equal(stor_commit(f->s), 0);
    tags t = load(f->s, A);
    assert_int_equal(t.n, 3);
    assert_string_equal(t.rows[2], "c=3");
    const char *gone[] = {"a", "c", "z"};
    assert_int_equal(stor_cluster_tags_put(f->s, A, gone, NULL, 3), 0);
    assert_int_equal(stor_commit(f->s), 0);
    fx_reopen(f);
    t = load(f->s, A);
    assert_int_equal(t.n, 1);
    assert_string_equal(t.rows[0], "b=2");
}

/* Reads see the open transaction; closing without a commit loses it, as for every write. */
static void test_uncommitted_tags_are_read_then_lost(void **state) {
    fx *f = *state;
    assert_int_equal(stor_cluster_tag_set(f->s, A, "env", "dev"), 0);
    assert_int_equal(load(f->s, A).n, 1);
    fx_reopen(f);
    assert_int_equal(load(f->s, A).n, 0);
}

static void test_cluster_policy_round_trip(void **state) {
    fx *f = *state;
    char *p, *v;
    assert_int_equal(stor_cluster_policy_get(f->s, A, &p, &v), 0);
    assert_null(p);
    assert_int_equal(stor_cluster_policy_put(f->s, A, "{\"Version\":\"2012-10-17\"}", "K1"), 0);
    assert_int_equal(stor_cluster_policy_put(f->s, A, "{\"Statement\":[]}", "K2"), 0); /* replaced */
    assert_int_equal(stor_cluster_policy_put(f->s, B, "{}", "K9"), 0);
    assert_int_equal(stor_cluster_policy_put(f->s, A, NULL, "K3"), -1);
    assert_int_equal(stor_commit(f->s), 0);
    fx_reopen(f);
    assert_int_equal(stor_cluster_policy_get(f->s, A, &p, &v), 1);
    assert_string_equal(p, "{\"Statement\":[]}");
    assert_string_equal(v, "K2");
    free(p), free(v);
    assert_int_equal(stor_cluster_policy_delete(f->s, A), 0);
    assert_int_equal(stor_cluster_policy_delete(f->s, A), 0); /* none: no error */
    assert_int_equal(stor_commit(f->s), 0);
    fx_reopen(f);
    assert_int_equal(stor_cluster_policy_get(f->s, A, &p, &v), 0);
    assert_int_equal(stor_cluster_policy_get(f->s, B, &p, &v), 1);
    assert_string_equal(v, "K9");
    free(p), free(v);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int main(void) {
    const struct CMUnitTest tests[] = {
        T(test_cluster_tags_round_trip),
        T(test_put_is_all_or_nothing),
        T(test_cluster_policy_round_trip),
        T(test_uncommitted_tags_are_read_then_lost),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
