/*
 * stor: what migration 9 keeps. Replica assignments (stor_replicas_put, loaded with the
 * topics) and group configs (stor_group_config_set) survive a reopen, the last write wins,
 * and they go with what owns them: a partition's assignment with its topic, group configs
 * only when cleared (they outlive their group, as Kafka's do).
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

static int fx_setup(void **state) {
    *state = fx_new_with_topic("stor_assign", STOR_SYNC_NORMAL, 3);
    return 0;
}

typedef struct replicas {
    int n;
    int64_t topic_id[8];
    int32_t partition[8], ids[8][4], nids[8];
} replicas;

static void on_replicas(void *ctx, int64_t topic_id, int32_t partition, const int32_t *ids, int n) {
    replicas *r = ctx;
    assert_true(r->n < 8 && n <= 4);
    r->topic_id[r->n] = topic_id, r->partition[r->n] = partition, r->nids[r->n] = n;
    memcpy(r->ids[r->n], ids, sizeof *ids * (size_t)n);
    r->n++;
}

static void load_replicas(stor *s, replicas *r) {
    memset(r, 0, sizeof *r);
    stor_load_cb cb = {.ctx = r, .replicas = on_replicas};
    assert_int_equal(stor_load(s, &cb), 0);
}

static void test_replica_assignments_round_trip(void **state) {
    fx *f = *state;
    const int32_t first[] = {153, 41}, second[] = {96, 153, 41}, last[] = {41};
    assert_int_equal(stor_replicas_put(f->s, f->topic, 0, first, 2), 0);
    assert_int_equal(stor_replicas_put(f->s, f->topic, 2, last, 1), 0);
    assert_int_equal(stor_replicas_put(f->s, f->topic, 2, second, 3), 0); /* the last write wins */
    assert_int_equal(stor_replicas_put(f->s, f->topic, 1, first, 0), -1);
    assert_int_equal(stor_replicas_put(f->s, f->topic, 7, first, 2), -1); /* no such partition */
    assert_int_equal(stor_commit(f->s), 0);
    fx_reopen(f);
    replicas r;
    load_replicas(f->s, &r);
    assert_int_equal(r.n, 2);
    assert_int_equal(r.partition[0], 0);
    assert_int_equal(r.nids[0], 2);
    assert_memory_equal(r.ids[0], first, sizeof first);
    assert_int_equal(r.partition[1], 2);
    assert_int_equal(r.nids[1], 3);
    assert_memory_equal(r.ids[1], second, sizeof second);
    /* they go with the topic */
    assert_int_equal(stor_topic_delete(f->s, f->topic), 0);
    assert_int_equal(stor_commit(f->s), 0);
    load_replicas(f->s, &r);
    assert_int_equal(r.n, 0);
}

/* A row that does not read as node ids is damage: start-up refuses it rather than guessing. */
static void test_damaged_replicas_row_fails_the_load(void **state) {
    fx *f = *state;
    const int32_t ids[] = {41, 96};
    assert_int_equal(stor_replicas_put(f->s, f->topic, 1, ids, 2), 0);
    assert_int_equal(stor_commit(f->s), 0);
    stor_close(f->s);
    f->s = NULL;
    fx_raw_exec(f->path, "UPDATE partition_replicas SET replicas = '41,x'");
    fx_open(f);
    replicas r = {0};
    stor_load_cb cb = {.ctx = &r, .replicas = on_replicas};
    assert_int_equal(stor_load(f->s, &cb), -1);
    assert_non_null(strstr(stor_errmsg(f->s), "damaged replicas row"));
}

typedef struct configs {
    int n;
    char rows[8][96];
} configs;

static void on_config(void *ctx, const char *group, const char *key, const char *value) {
    configs *c = ctx;
    assert_true(c->n < 8);
    snprintf(c->rows[c->n++], sizeof c->rows[0], "%s/%s=%s", group, key, value);
}

static void test_group_configs_round_trip(void **state) {
    fx *f = *state;
    assert_int_equal(stor_group_config_set(f->s, "g2", "consumer.session.timeout.ms", "50000"), 0);
    assert_int_equal(stor_group_config_set(f->s, "g1", "consumer.heartbeat.interval.ms", "6000"), 0);
    assert_int_equal(stor_group_config_set(f->s, "g1", "consumer.heartbeat.interval.ms", "7000"), 0);
    assert_int_equal(stor_group_config_set(f->s, "g1", "consumer.session.timeout.ms", "48000"), 0);
    assert_int_equal(stor_group_config_set(f->s, "g1", "consumer.session.timeout.ms", NULL), 0); /* deleted */
    assert_int_equal(stor_group_config_set(f->s, "g3", "share.auto.offset.reset", NULL), 0);  /* nothing to delete */
    assert_int_equal(stor_commit(f->s), 0);
    fx_reopen(f);
    configs c = {0};
    assert_int_equal(stor_group_configs_load(f->s, on_config, &c), 0);
    assert_int_equal(c.n, 2);
    assert_string_equal(c.rows[0], "g1/consumer.heartbeat.interval.ms=7000");
    assert_string_equal(c.rows[1], "g2/consumer.session.timeout.ms=50000");
    assert_int_equal(stor_group_configs_clear(f->s), 0);
    assert_int_equal(stor_commit(f->s), 0);
    memset(&c, 0, sizeof c);
    assert_int_equal(stor_group_configs_load(f->s, on_config, &c), 0);
    assert_int_equal(c.n, 0);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int main(void) {
    const struct CMUnitTest tests[] = {
        T(test_replica_assignments_round_trip),
        T(test_damaged_replicas_row_fails_the_load),
        T(test_group_configs_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
