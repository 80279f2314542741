/*
 * Replica assignments (broker/topic/assign.c, api/create_topics.c, api/create_partitions.c),
 * driven in-process with encoded requests against the rules of Apache Kafka's KRaft controller
 * (ReplicationControlManager.createTopic, createPartitions, validateManualPartitionAssignment):
 * a valid assignment is what Metadata then lists, its first replica up leads; an invalid one is
 * INVALID_REPLICA_ASSIGNMENT (or INVALID_REQUEST) with Kafka's message, and creates nothing.
 * Issue 30 item 4: librdkafka's 0081_admin found assignments ignored and invalid ones accepted.
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

#include "broker_harness.h"
#include "topic/topic.h"

/* Three brokers, the serverless ids (41, 96, 153): A, B, C below; every request on one connection. */
static int32_t A, B, C;
static conn *cn;

static harness *three_brokers(void) {
    static const char *const o[] = {"broker.count", "3", NULL};
    harness *h = h_new(o);
    h->s.nnodes = 3;
    for (int i = 0; i < 3; i++) h->s.nodes[i].id = h->cfg.node_ids[i];
    A = h->s.nodes[0].id, B = h->s.nodes[1].id, C = h->s.nodes[2].id;
    cn = h_conn(h, NULL);
    return h;
}

/* ---- requests ---- */

typedef struct spec {
    int32_t partition;
    int32_t ids[4];
    int32_t n;
} spec;

static kp_create_topics_creatable_topic_result *create_topic(harness *h, const char *name, int32_t nparts, int16_t rf,
                                                             const spec *a, int32_t n, bool validate_only) {
    kp_create_topics_creatable_replica_assignment *ra = calloc((size_t)n + 1, sizeof *ra);
    for (int32_t k = 0; k < n; k++) {
        ra[k].partition_index = a[k].partition;
        ra[k].broker_ids.n = a[k].n;
        ra[k].broker_ids.v = (int32_t *)a[k].ids;
    }
    kp_create_topics_creatable_topic qt = {.name = kp_str_c(name), .num_partitions = nparts, .replication_factor = rf};
    qt.assignments.n = n;
    qt.assignments.v = ra;
    qt.configs.n = 0;
    kp_create_topics_request q = {.timeout_ms = 5000, .validate_only = validate_only};
    q.topics.n = 1;
    q.topics.v = &qt;
    kp_create_topics_response *resp = h_resp(h, h_send(h, cn, "admin", 19, 5, &q));
    free(ra);
    assert_int_equal(resp->topics.n, 1);
    return &resp->topics.v[0];
}

/* assignments n -1: null (default placement) */
static kp_create_partitions_topic_result *create_partitions(harness *h, const char *name, int32_t count,
                                                            const spec *a, int32_t n, bool validate_only) {
    kp_create_partitions_assignment *ca = calloc(n > 0 ? (size_t)n : 1, sizeof *ca);
    for (int32_t k = 0; k < n; k++) {
        ca[k].broker_ids.n = a[k].n;
        ca[k].broker_ids.v = (int32_t *)a[k].ids;
    }
    kp_create_partitions_topic qt = {.name = kp_str_c(name), .count = count};
    qt.assignments.n = n;
    qt.assignments.v = ca;
    kp_create_partitions_request q = {.timeout_ms = 5000, .validate_only = validate_only};
    q.topics.n = 1;
    q.topics.v = &qt;
    kp_create_partitions_response *resp = h_resp(h, h_send(h, cn, "admin", 37, 2, &q));
    free(ca);
    assert_int_equal(resp->results.n, 1);
    return &resp->results.v[0];
}

static kp_metadata_response_topic *metadata(harness *h, const char *name) {
    kp_metadata_request_topic rt = {.name = kp_str_c(name)};
    kp_metadata_request q = {0};
    q.topics.n = 1;
    q.topics.v = &rt;
    kp_metadata_response *resp = h_resp(h, h_send(h, cn, "admin", 3, 9, &q));
    assert_int_equal(resp->topics.n, 1);
    assert_int_equal(resp->topics.v[0].error_code, 0);
    return &resp->topics.v[0];
}

static void assert_replicas(const kp_metadata_response_partition *p, const int32_t *want, int32_t n) {
    assert_int_equal(p->replica_nodes.n, n);
    for (int32_t k = 0; k < n; k++) assert_int_equal(p->replica_nodes.v[k], want[k]);
}

static void assert_message(harness *h, kp_str got, const char *want) {
    const char *s = h_cstr(h, got);
    if (!s || strcmp(s, want) != 0) fail_msg("message \"%s\", want \"%s\"", s ? s : "(null)", want);
}

/* ---- CreateTopics ---- */

static void test_create_topics_keeps_replica_assignment(void **state) {
    (void)state;
    harness *h = three_brokers();
    /* not the default placement: each partition's first replica differs from what mskmock would pick */
    spec a[] = {{1, {C, A}, 2}, {0, {B, C}, 2}, {2, {A, B}, 2}}; /* any order of partition ids */
    kp_create_topics_creatable_topic_result *res = create_topic(h, "assigned", -1, -1, a, 3, false);
    assert_int_equal(res->error_code, 0);
    assert_int_equal(res->num_partitions, 3);
    assert_int_equal(res->replication_factor, 2);
    kp_metadata_response_topic *t = metadata(h, "assigned");
    assert_int_equal(t->partitions.n, 3);
    const int32_t want[3][2] = {{B, C}, {C, A}, {A, B}};
    for (int i = 0; i < 3; i++) {
        const kp_metadata_response_partition *p = &t->partitions.v[i];
        assert_int_equal(p->partition_index, i);
        assert_int_equal(p->error_code, 0);
        assert_replicas(p, want[i], 2);
        assert_int_equal(p->leader_id, want[i][0]); /* the preferred leader */
        assert_int_equal(p->isr_nodes.n, 2);
    }
    h_free(h);
}

static void test_create_topics_refuses_invalid_assignments(void **state) {
    (void)state;
    harness *h = three_brokers();
    char unknown[160], twice[160];
    snprintf(unknown, sizeof unknown,
             "The manual partition assignment includes broker 99, but no such broker is registered.");
    snprintf(twice, sizeof twice, "The manual partition assignment includes the broker %d more than once.", A);
    const struct {
        int32_t nparts;
        int16_t rf;
        spec a[3];
        int32_t n;
        int16_t code;
        const char *msg;
    } cases[] = {
        {-1, -1, {{0, {A, 99}, 2}}, 1, KERR_INVALID_REPLICA_ASSIGNMENT, unknown},
        {-1, -1, {{0, {A, B}, 2}, {1, {A, C, A}, 3}}, 2, KERR_INVALID_REPLICA_ASSIGNMENT, twice},
        {-1, -1, {{0, {A, B}, 2}, {1, {C}, 1}}, 2, KERR_INVALID_REPLICA_ASSIGNMENT,
         "The manual partition assignment includes a partition with 1 replica(s), but this is not consistent with "
         "previous partitions, which have 2 replica(s)."},
        {-1, -1, {{0, {A}, 1}, {2, {B}, 1}}, 2, KERR_INVALID_REPLICA_ASSIGNMENT,
         "partitions should be a consecutive 0-based integer sequence"},
        {-1, -1, {{1, {A}, 1}, {2, {B}, 1}}, 2, KERR_INVALID_REPLICA_ASSIGNMENT,
         "partitions should be a consecutive 0-based integer sequence"},
        {-1, -1, {{0, {A}, 1}, {0, {B}, 1}}, 2, KERR_INVALID_REPLICA_ASSIGNMENT,
         "Found multiple manual partition assignments for partition 0"},
        {-1, -1, {{0, {0}, 0}}, 1, KERR_INVALID_REPLICA_ASSIGNMENT,
         "The manual partition assignment includes an empty replica list."},
        {2, -1, {{0, {A}, 1}, {1, {B}, 1}}, 2, KERR_INVALID_REQUEST,
         "A manual partition assignment was specified, but numPartitions was not set to -1."},
        {-1, 1, {{0, {A}, 1}}, 1, KERR_INVALID_REQUEST,
         "A manual partition assignment was specified, but replication factor was not set to -1."},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        for (int v = 0; v < 2; v++) { /* validate_only is refused alike */
            kp_create_topics_creatable_topic_result *res =
                create_topic(h, "bad", cases[i].nparts, cases[i].rf, cases[i].a, cases[i].n, v == 1);
            if (res->error_code != cases[i].code) fail_msg("case %zu: error %d, want %d", i, res->error_code, cases[i].code);
            assert_message(h, res->error_message, cases[i].msg);
            assert_null(topic_find(&h->s, "bad", 3));
        }
    }
    h_free(h);
}

static void test_create_topics_refuses_an_assignment_whose_brokers_are_all_down(void **state) {
    (void)state;
    harness *h = three_brokers();
    h->s.nodes[1].down = h->s.nodes[2].down = true;
    spec a[] = {{0, {A, B}, 2}, {1, {B, C}, 2}};
    kp_create_topics_creatable_topic_result *res = create_topic(h, "fenced", -1, -1, a, 2, false);
    assert_int_equal(res->error_code, KERR_INVALID_REPLICA_ASSIGNMENT);
    assert_message(h, res->error_message, "All brokers specified in the manual partition assignment for partition 1 are "
                                          "fenced or in controlled shutdown.");
    /* a broker that is down still counts as registered, and one replica up is enough: it leads */
    spec ok[] = {{0, {B, A}, 2}};
    assert_int_equal(create_topic(h, "half-up", -1, -1, ok, 1, false)->error_code, 0);
    const kp_metadata_response_partition *p = &metadata(h, "half-up")->partitions.v[0];
    assert_int_equal(p->leader_id, A);
    const int32_t want[] = {B, A};
    assert_replicas(p, want, 2);
    assert_int_equal(p->isr_nodes.n, 1);
    assert_int_equal(p->offline_replicas.n, 1);
    assert_int_equal(p->offline_replicas.v[0], B);
    h_free(h);
}

/* ---- CreatePartitions ---- */

static void test_create_partitions_keeps_replica_assignment(void **state) {
    (void)state;
    harness *h = three_brokers();
    spec a[] = {{0, {A, B}, 2}};
    assert_int_equal(create_topic(h, "grown", -1, -1, a, 1, false)->error_code, 0);
    spec more[] = {{0, {C, A}, 2}, {0, {B, C}, 2}};
    kp_create_partitions_topic_result *res = create_partitions(h, "grown", 3, more, 2, false);
    assert_int_equal(res->error_code, 0);
    kp_metadata_response_topic *t = metadata(h, "grown");
    assert_int_equal(t->partitions.n, 3);
    const int32_t want[3][2] = {{A, B}, {C, A}, {B, C}};
    for (int i = 0; i < 3; i++) {
        assert_replicas(&t->partitions.v[i], want[i], 2);
        assert_int_equal(t->partitions.v[i].leader_id, want[i][0]);
    }
    /* without assignments the new partition gets the default placement, as many replicas as partition 0 */
    assert_int_equal(create_partitions(h, "grown", 4, NULL, -1, false)->error_code, 0);
    assert_int_equal(metadata(h, "grown")->partitions.v[3].replica_nodes.n, 2);
    h_free(h);
}

static void test_create_partitions_refuses_invalid_assignments(void **state) {
    (void)state;
    harness *h = three_brokers();
    spec a[] = {{0, {A, B}, 2}};
    assert_int_equal(create_topic(h, "g", -1, -1, a, 1, false)->error_code, 0);
    char unknown[160];
    snprintf(unknown, sizeof unknown,
             "The manual partition assignment includes broker 99, but no such broker is registered.");
    const struct {
        int32_t count;
        spec a[2];
        int32_t n;
        int16_t code;
        const char *msg;
    } cases[] = {
        {3, {{0, {C, A}, 2}}, 1, KERR_INVALID_REPLICA_ASSIGNMENT,
         "Attempted to add 2 additional partition(s), but only 1 assignment(s) were specified."},
        {2, {{0}}, 0, KERR_INVALID_REPLICA_ASSIGNMENT, /* an empty list is not a null one */
         "Attempted to add 1 additional partition(s), but only 0 assignment(s) were specified."},
        {2, {{0, {C, 99}, 2}}, 1, KERR_INVALID_REPLICA_ASSIGNMENT, unknown},
        {2, {{0, {A, B, C}, 3}}, 1, KERR_INVALID_REPLICA_ASSIGNMENT,
         "The manual partition assignment includes a partition with 3 replica(s), but this is not consistent with "
         "previous partitions, which have 2 replica(s)."},
        {1, {{0}}, -1, KERR_INVALID_PARTITIONS, "Topic already has 1 partition(s)."},
        {0, {{0}}, -1, KERR_INVALID_PARTITIONS, "The topic g currently has 1 partition(s); 0 would not be an increase."},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        kp_create_partitions_topic_result *res = create_partitions(h, "g", cases[i].count, cases[i].a, cases[i].n, false);
        if (res->error_code != cases[i].code) fail_msg("case %zu: error %d, want %d", i, res->error_code, cases[i].code);
        assert_message(h, res->error_message, cases[i].msg);
        assert_int_equal(topic_find(&h->s, "g", 1)->nparts, 1);
    }
    /* validate_only checks and keeps nothing */
    spec ok[] = {{0, {C, A}, 2}};
    assert_int_equal(create_partitions(h, "g", 2, ok, 1, true)->error_code, 0);
    assert_int_equal(topic_find(&h->s, "g", 1)->nparts, 1);
    h_free(h);
}

/* ---- leaders follow the assignment ---- */

static void test_leader_is_the_first_replica_up_and_none_up_is_offline(void **state) {
    (void)state;
    harness *h = three_brokers();
    spec a[] = {{0, {C, B}, 2}};
    assert_int_equal(create_topic(h, "elect", -1, -1, a, 1, false)->error_code, 0);
    topic *t = topic_find(&h->s, "elect", 5);
    assert_int_equal(topic_elect_leader(&h->s, t, 0), 2);
    h->s.nodes[2].down = true;
    assert_int_equal(topic_elect_leader(&h->s, t, 0), 1);
    h->s.nodes[1].down = true; /* A is up but holds no replica */
    assert_int_equal(topic_elect_leader(&h->s, t, 0), TOPIC_NO_LEADER);
    assert_int_equal(topic_move_leader(&h->s, t, &t->parts[0], TOPIC_NO_LEADER), 0);
    const kp_metadata_response_partition *p = &metadata(h, "elect")->partitions.v[0];
    assert_int_equal(p->error_code, KERR_LEADER_NOT_AVAILABLE);
    assert_int_equal(p->leader_id, -1);
    assert_int_equal(p->leader_epoch, 1);
    assert_int_equal(p->isr_nodes.n, 0);
    assert_int_equal(p->offline_replicas.n, 2);
    h_free(h);
}

/* every test frees its harness in the teardown too, so a failed assertion leaks nothing */
#define T(f) cmocka_unit_test_teardown(f, h_teardown)

int main(void) {
    const struct CMUnitTest tests[] = {
        T(test_create_topics_keeps_replica_assignment),
        T(test_create_topics_refuses_invalid_assignments),
        T(test_create_topics_refuses_an_assignment_whose_brokers_are_all_down),
        T(test_create_partitions_keeps_replica_assignment),
        T(test_create_partitions_refuses_invalid_assignments),
        T(test_leader_is_the_first_replica_up_and_none_up_is_offline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
