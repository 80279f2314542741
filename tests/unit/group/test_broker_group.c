/*
 * The classic group coordinator (broker/group/group.c and the group API handlers),
 * driven in-process through pipeline_dispatch with encoded requests, against the
 * semantics of Apache Kafka's classic coordinator (GroupCoordinator and
 * GroupMetadata in 3.x, GroupMetadataManager and ClassicGroup in 4.x) and the
 * consumer protocol of ConsumerProtocolSubscription.json and
 * ConsumerProtocolAssignment.json (apache/kafka,
 * clients/src/main/resources/common/message).
 *
 * Tests marked "Regression" were written failing against the first
 * coordinator and name the behaviour that was wrong.
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
#include "topic/topic.h"

/* ---- byte vectors, laid out from those schemas as each client writes them (see test_kp_consumer.c) ---- */

/* ConsumerProtocolSubscription v0, topics [testtopic], empty user data (kafkajs >= 2.2.2, kafka-python) */
#define SUB_V0 "000000000001000974657374746f70696300000000"
/* v3, null user data, no owned partitions, generation -1, rack null (Java >= 3.4 range) */
#define SUB_V3_JAVA "000300000001000974657374746f706963ffffffff00000000ffffffffffff"
/* v3, empty user data (librdkafka >= 2.2 range) */
#define SUB_V3_RDK "000300000001000974657374746f7069630000000000000000ffffffffffff"
/* kafkajs 2.2.0/2.2.1: declares v1, carries the v0 body */
#define SUB_KAFKAJS_221 "000100000001000974657374746f70696300000000"
/* Java cooperative-sticky rejoin: gen 5, owns testtopic[0,1], rack use1-az1 */
#define SUB_V3_COOP_OWNED                                                                                  \
    "000300000001000974657374746f706963000000040000000500000001000974657374746f7069630000000200000000" \
    "00000001000000050008757365312d617a31"
/* ConsumerProtocolAssignment v0: testtopic[0] and testtopic[1,2], empty user data */
#define ASSIGN_P0 "000000000001000974657374746f706963000000010000000000000000"
#define ASSIGN_P12 "000000000001000974657374746f70696300000002000000010000000200000000"

#define SESSION_MS 10000
#define REBALANCE_MS 30000

static const char *const NO_DELAY[] = {"group.initial.rebalance.delay.ms", "0", NULL};

/* ---- a consumer: connection, identity and what it offers ---- */

typedef struct proto {
    const char *name;
    const char *hex;
} proto;

typedef struct cli {
    conn *c;
    const char *client_id;
    const char *group;
    char member[256];
    const char *instance;   /* NULL: dynamic */
    proto protos[4];
    int nprotos;
    const char *ptype;
    int32_t session_ms, rebalance_ms;
    int32_t gen;
} cli;

static cli *cli_new(harness *h, const char *client_id, const char *group) {
    cli *k = kp_arena_alloc(&h->arena, sizeof *k);
    k->c = h_conn(h, "127.0.0.1:5000");
    k->client_id = client_id;
    k->group = group;
    k->protos[0] = (proto){"range", SUB_V0};
    k->nprotos = 1;
    k->ptype = "consumer";
    k->session_ms = SESSION_MS;
    k->rebalance_ms = REBALANCE_MS;
    k->gen = -1;
    return k;
}

static void cli_protos(cli *k, const proto *p, int n) {
    memcpy(k->protos, p, sizeof *p * (size_t)n);
    k->nprotos = n;
}

/* ---- JoinGroup ---- */

static req *join_raw(harness *h, cli *k, int16_t ver, const char *member_id) {
    kp_join_group_request q;
    kp_defaults(&kp_join_group_request_schema, ver, &q);
    q.group_id = kp_str_c(k->group);
    q.session_timeout_ms = k->session_ms;
    q.rebalance_timeout_ms = k->rebalance_ms;
    q.member_id = kp_str_c(member_id);
    q.group_instance_id = kp_str_c(k->instance);
    q.protocol_type = kp_str_c(k->ptype);
    kp_join_group_request_protocol ps[4];
    for (int i = 0; i < k->nprotos; i++)
        ps[i] = (kp_join_group_request_protocol){kp_str_c(k->protos[i].name), h_hex(h, k->protos[i].hex)};
    q.protocols.n = k->nprotos;
    q.protocols.v = ps;
    return h_send(h, k->c, k->client_id, 11, ver, &q);
}

static kp_join_group_response *join_resp(harness *h, req *r) { return h_resp(h, r); }

/* After an answered JoinGroup: remember the member id (79 and 0) and generation (0). */
static kp_join_group_response *cli_joined(harness *h, cli *k, req *r) {
    kp_join_group_response *p = join_resp(h, r);
    if ((p->error_code == 0 || p->error_code == KERR_MEMBER_ID_REQUIRED) && p->member_id.len > 0)
        snprintf(k->member, sizeof k->member, "%s", h_cstr(h, p->member_id));
    if (p->error_code == 0) k->gen = p->generation_id;
    return p;
}

/* JoinGroup with the member's current id; when answered at once, remember what it says. */
static req *cli_join(harness *h, cli *k, int16_t ver) {
    req *r = join_raw(h, k, ver, k->member);
    if (h_answered(r)) cli_joined(h, k, r);
    return r;
}

/* A new dynamic member, v4+: MEMBER_ID_REQUIRED, then the JoinGroup with that id (returned). */
static req *cli_join_new(harness *h, cli *k, int16_t ver) {
    k->member[0] = 0;
    req *r = join_raw(h, k, ver, "");
    kp_join_group_response *p = cli_joined(h, k, r);
    assert_int_equal(p->error_code, KERR_MEMBER_ID_REQUIRED);
    assert_true(k->member[0] != 0);
    return cli_join(h, k, ver);
}

/* ---- SyncGroup ---- */

typedef struct assign {
    const char *member;
    const char *hex;
} assign;

static req *sync_full(harness *h, cli *k, int16_t ver, int32_t gen, const char *ptype, const char *pname,
                      const assign *as, int n) {
    kp_sync_group_request q;
    kp_defaults(&kp_sync_group_request_schema, ver, &q);
    q.group_id = kp_str_c(k->group);
    q.generation_id = gen;
    q.member_id = kp_str_c(k->member);
    q.group_instance_id = kp_str_c(k->instance);
    q.protocol_type = kp_str_c(ptype);
    q.protocol_name = kp_str_c(pname);
    kp_sync_group_request_assignment a[8];
    for (int i = 0; i < n; i++) a[i] = (kp_sync_group_request_assignment){kp_str_c(as[i].member), h_hex(h, as[i].hex)};
    q.assignments.n = n;
    q.assignments.v = n ? a : NULL;
    return h_send(h, k->c, k->client_id, 14, ver, &q);
}

static req *cli_sync(harness *h, cli *k, const assign *as, int n) {
    return sync_full(h, k, 3, k->gen, NULL, NULL, as, n);
}

static kp_sync_group_response *sync_resp(harness *h, req *r) { return h_resp(h, r); }

/* ---- Heartbeat, LeaveGroup ---- */

static int16_t heartbeat_full(harness *h, cli *k, int16_t ver, const char *member, int32_t gen, const char *instance) {
    kp_heartbeat_request q;
    kp_defaults(&kp_heartbeat_request_schema, ver, &q);
    q.group_id = kp_str_c(k->group);
    q.generation_id = gen;
    q.member_id = kp_str_c(member);
    q.group_instance_id = kp_str_c(instance);
    req *r = h_send(h, k->c, k->client_id, 12, ver, &q);
    kp_heartbeat_response *p = h_resp(h, r);
    return p->error_code;
}

static int16_t cli_heartbeat(harness *h, cli *k) { return heartbeat_full(h, k, 4, k->member, k->gen, k->instance); }

/* ---- OffsetCommit, OffsetFetch ---- */

static kp_offset_commit_response *commit_full(harness *h, conn *c, int16_t ver, const char *group, int32_t gen,
                                              const char *member, const char *instance, const char *topic,
                                              int32_t part, int64_t offset) {
    kp_offset_commit_request q;
    kp_defaults(&kp_offset_commit_request_schema, ver, &q);
    q.group_id = kp_str_c(group);
    q.generation_id_or_member_epoch = gen;
    q.member_id = kp_str_c(member);
    q.group_instance_id = kp_str_c(instance);
    kp_offset_commit_request_partition p;
    kp_defaults(&kp_offset_commit_request_partition_schema, ver, &p);
    p.partition_index = part;
    p.committed_offset = offset;
    p.committed_metadata = kp_str_c("md");
    kp_offset_commit_request_topic t = {.name = kp_str_c(topic)};
    t.partitions.n = 1;
    t.partitions.v = &p;
    q.topics.n = 1;
    q.topics.v = &t;
    req *r = h_send(h, c, "committer", 8, ver, &q);
    kp_offset_commit_response *resp = h_resp(h, r);
    assert_int_equal(resp->topics.n, 1);
    assert_int_equal(resp->topics.v[0].partitions.n, 1);
    return resp;
}

/* The error of the one partition of a one-partition commit. */
static int16_t commit_err(harness *h, conn *c, int16_t ver, const char *group, int32_t gen, const char *member,
                          const char *instance, const char *topic, int32_t part, int64_t offset) {
    kp_offset_commit_response *r = commit_full(h, c, ver, group, gen, member, instance, topic, part, offset);
    return r->topics.v[0].partitions.v[0].error_code;
}

static int16_t cli_commit(harness *h, cli *k, int64_t offset) {
    return commit_err(h, k->c, 8, k->group, k->gen, k->member, k->instance, "testtopic", 0, offset);
}

/* OffsetFetch v1 of one topic's partitions. */
static kp_offset_fetch_response *fetch_v1(harness *h, conn *c, const char *group, const char *topic,
                                          const int32_t *parts, int n) {
    kp_offset_fetch_request q;
    kp_defaults(&kp_offset_fetch_request_schema, 1, &q);
    q.group_id = kp_str_c(group);
    kp_offset_fetch_request_topic t = {.name = kp_str_c(topic)};
    t.partition_indexes.n = n;
    t.partition_indexes.v = (int32_t *)parts;
    q.topics.n = 1;
    q.topics.v = &t;
    req *r = h_send(h, c, "fetcher", 9, 1, &q);
    kp_offset_fetch_response *resp = h_resp(h, r);
    assert_int_equal(resp->topics.n, 1);
    assert_int_equal(resp->topics.v[0].partitions.n, n);
    return resp;
}

/* The committed offset of one partition as OffsetFetch v1 reports it (asserting no error). */
static int64_t fetched_offset(harness *h, conn *c, const char *group, const char *topic, int32_t part) {
    kp_offset_fetch_response *resp = fetch_v1(h, c, group, topic, &part, 1);
    kp_offset_fetch_response_partition *p = &resp->topics.v[0].partitions.v[0];
    assert_int_equal(p->error_code, 0);
    assert_int_equal(p->partition_index, part);
    return p->committed_offset;
}

/* ---- DescribeGroups, DeleteGroups ---- */

static kp_describe_groups_described_group *describe(harness *h, conn *c, int16_t ver, const char *group) {
    kp_describe_groups_request q;
    kp_defaults(&kp_describe_groups_request_schema, ver, &q);
    kp_str id = kp_str_c(group);
    q.groups.n = 1;
    q.groups.v = &id;
    req *r = h_send(h, c, "admin", 15, ver, &q);
    kp_describe_groups_response *resp = h_resp(h, r);
    assert_int_equal(resp->groups.n, 1);
    return &resp->groups.v[0];
}

static int16_t delete_group(harness *h, conn *c, int16_t ver, const char *group) {
    kp_delete_groups_request q;
    kp_defaults(&kp_delete_groups_request_schema, ver, &q);
    kp_str id = kp_str_c(group);
    q.groups_names.n = 1;
    q.groups_names.v = &id;
    req *r = h_send(h, c, "admin", 42, ver, &q);
    kp_delete_groups_response *resp = h_resp(h, r);
    assert_int_equal(resp->results.n, 1);
    assert_true(kp_str_eq(resp->results.v[0].group_id, group));
    return resp->results.v[0].error_code;
}

/* ---- shortcuts ---- */

static group *grp(harness *h, const char *id) { return grp_find(&h->s, id, strlen(id)); }

static void tick(harness *h, const char *id, int64_t advance_ms) {
    clk_advance(advance_ms);
    group *g = grp(h, id);
    assert_non_null(g);
    grp_tick(g);
}

static void assert_state(harness *h, const char *id, group_state st) {
    group *g = grp(h, id);
    assert_non_null(g);
    if (g->state != st) fail_msg("group %s is %s, expected %s", id, grp_state_name(g->state), grp_state_name(st));
}

static void make_topic(harness *h, const char *name, int32_t parts) {
    const char *why = NULL;
    if (!topic_create(&h->s, name, parts, 0, NULL, 0, &why)) fail_msg("topic %s: %s", name, why ? why : "?");
}

/*
 * A Stable group of two dynamic members at generation 2: a joins alone
 * (generation 1) and syncs, b joins and triggers the rebalance, both rejoin,
 * a leads, a is assigned testtopic[0] and b testtopic[1,2].
 */
static void two_member_group(harness *h, cli *a, cli *b, bool sync) {
    req *ja = cli_join_new(h, a, 5);
    assert_true(h_answered(ja));
    assert_int_equal(join_resp(h, ja)->error_code, 0);
    assert_int_equal(a->gen, 1);
    req *sa = cli_sync(h, a, (assign[]){{a->member, ASSIGN_P0}}, 1);
    assert_int_equal(sync_resp(h, sa)->error_code, 0);
    assert_state(h, a->group, GS_STABLE);
    req *jb = cli_join_new(h, b, 5);
    assert_int_equal(jb->state, REQ_PARKED);
    assert_state(h, a->group, GS_PREPARING);
    assert_int_equal(cli_heartbeat(h, a), KERR_REBALANCE_IN_PROGRESS);
    ja = cli_join(h, a, 5);
    assert_true(h_answered(ja));
    assert_true(h_answered(jb));
    cli_joined(h, b, jb);
    assert_int_equal(a->gen, 2);
    assert_int_equal(b->gen, 2);
    assert_state(h, a->group, GS_COMPLETING);
    if (!sync) return;
    req *sb = cli_sync(h, b, NULL, 0);
    assert_int_equal(sb->state, REQ_PARKED);
    sa = cli_sync(h, a, (assign[]){{a->member, ASSIGN_P0}, {b->member, ASSIGN_P12}}, 2);
    assert_int_equal(sync_resp(h, sa)->error_code, 0);
    assert_int_equal(sync_resp(h, sb)->error_code, 0);
    assert_state(h, a->group, GS_STABLE);
}

/* ======================================================================== */
/* JoinGroup                                                                */
/* ======================================================================== */

static void test_join_v4_without_member_id_gets_member_id_required(void **state) {
    (void)state;
    harness *h = h_new(NO_DELAY);
    cli *a = cli_new(h, "consumer-a", "g");
    for (int16_t ver = 4; ver <= 9; ver++) {
        req *r = join_raw(h, a, ver, "");
        kp_join_group_response *p = join_resp(h, r);
        assert_int_equal(p->error_code, KERR_MEMBER_ID_REQUIRED);
        assert_int_equal(p->generation_id, -1);
        const char *id = h_cstr(h, p->member_id);
        /* client_id + "-" + uuid */
        assert_true(strncmp(id, "consumer-a-", 11) == 0);
        assert_int_equal(strlen(id), 11 + 36);
        assert_int_equal(p->members.n, 0);
    }
    /* a pending member is not a member: nothing rebalances */
    assert_state(h, "g", GS_EMPTY);
    assert_int_equal(grp(h, "g")->nmembers, 0);
    h_free(h);
}

static void test_join_with_required_member_id_is_parked_until_join_phase_completes(void **state) {
    (void)state;
    static const char *const delay[] = {"group.initial.rebalance.delay.ms", "3000", NULL};
    harness *h = h_new(delay);
    cli *a = cli_new(h, "consumer-a", "g");
    req *r = cli_join_new(h, a, 5);
    assert_int_equal(r->state, REQ_PARKED);
    assert_state(h, "g", GS_PREPARING);
    tick(h, "g", 2999);
    assert_int_equal(r->state, REQ_PARKED);
    tick(h, "g", 1);
    assert_true(h_answered(r));
    kp_join_group_response *p = cli_joined(h, a, r);
    assert_int_equal(p->error_code, 0);
    assert_int_equal(p->generation_id, 1);
    assert_true(kp_str_eq(p->leader, a->member));
    assert_state(h, "g", GS_COMPLETING);
    h_free(h);
}

static void test_single_member_without_initial_delay_completes_at_once_as_leader(void **state) {
    (void)state;
    harness *h = h_new(NO_DELAY);
    cli *a = cli_new(h, "consumer-a", "g");
    a->protos[0] = (proto){"range", SUB_V3_JAVA};
    req *r = cli_join_new(h, a, 7);
    assert_true(h_answered(r));
    kp_join_group_response *p = join_resp(h, r);
    assert_int_equal(p->error_code, 0);
    assert_int_equal(p->generation_id, 1);
    assert_true(kp_str_eq(p->protocol_type, "consumer"));
    assert_true(kp_str_eq(p->protocol_name, "range"));
    assert_true(kp_str_eq(p->leader, a->member));
    assert_true(kp_str_eq(p->member_id, a->member));
    assert_int_equal(p->members.n, 1);
    assert_true(kp_str_eq(p->members.v[0].member_id, a->member));
    assert_int_equal(p->members.v[0].group_instance_id.len, -1);
    assert_true(h_bytes_eq(p->members.v[0].metadata, h_hex(h, SUB_V3_JAVA)));
    assert_state(h, "g", GS_COMPLETING);
    h_free(h);
}

static void test_join_v3_adds_member_directly_without_member_id_required(void **state) {
    (void)state;
    harness *h = h_new(NO_DELAY);
    cli *a = cli_new(h, "consumer-a", "g");
    req *r = join_raw(h, a, 3, "");
    assert_true(h_answered(r));
    kp_join_group_response *p = cli_joined(h, a, r);
    assert_int_equal(p->error_code, 0);
    assert_int_equal(p->generation_id, 1);
    assert_true(strncmp(a->member, "consumer-a-", 11) == 0);
    assert_true(kp_str_eq(p->leader, a->member));
    assert_int_equal(p->members.n, 1);
    assert_true(kp_str_eq(p->protocol_name, "range"));
    assert_int_equal(grp(h, "g")->nmembers, 1);
    assert_null(grp(h, "g")->pending);
    h_free(h);
}

static void test_second_member_triggers_rebalance_and_only_leader_gets_members(void **state) {
    (void)state;
    harness *h = h_new(NO_DELAY);
    cli *a = cli_new(h, "consumer-a", "g");
    cli *b = cli_new(h, "consumer-b", "g");
    a->protos[0] = (proto){"range", SUB_V3_JAVA};
    b->protos[0] = (proto){"range", SUB_V3_RDK};
    req *ja = cli_join_new(h, a, 5);
    assert_int_equal(a->gen, 1);
    assert_int_equal(sync_resp(h, cli_sync(h, a, (assign[]){{a->member, ASSIGN_P0}}, 1))->error_code, 0);
    assert_state(h, "g", GS_STABLE);

    /* MEMBER_ID_REQUIRED alone does not disturb the group */
    req *r79 = join_raw(h, b, 5, "");
    assert_int_equal(cli_joined(h, b, r79)->error_code, KERR_MEMBER_ID_REQUIRED);
    assert_state(h, "g", GS_STABLE);
    assert_int_equal(cli_heartbeat(h, a), 0);

    /* b comes back with its id: parked, the group prepares a rebalance */
    req *jb = cli_join(h, b, 5);
    assert_int_equal(jb->state, REQ_PARKED);
    assert_state(h, "g", GS_PREPARING);
    /* the follower learns it must rejoin from its heartbeat */
    assert_int_equal(cli_heartbeat(h, a), KERR_REBALANCE_IN_PROGRESS);
    /* SyncGroup during PreparingRebalance */
    assert_int_equal(sync_resp(h, cli_sync(h, a, NULL, 0))->error_code, KERR_REBALANCE_IN_PROGRESS);

    ja = cli_join(h, a, 5);
    assert_true(h_answered(ja));
    assert_true(h_answered(jb));
    kp_join_group_response *pa = join_resp(h, ja);
    kp_join_group_response *pb = cli_joined(h, b, jb);
    assert_int_equal(pa->error_code, 0);
    assert_int_equal(pb->error_code, 0);
    /* the generation moved on */
    assert_int_equal(pa->generation_id, 2);
    assert_int_equal(pb->generation_id, 2);
    assert_true(kp_str_eq(pa->leader, a->member));
    assert_true(kp_str_eq(pb->leader, a->member));
    assert_true(kp_str_eq(pb->member_id, b->member));
    /* only the leader's answer carries the members, with their metadata */
    assert_int_equal(pb->members.n, 0);
    assert_int_equal(pa->members.n, 2);
    bool seen_a = false, seen_b = false;
    for (int i = 0; i < pa->members.n; i++) {
        kp_join_group_response_member *m = &pa->members.v[i];
        if (kp_str_eq(m->member_id, a->member)) {
            seen_a = true;
            assert_true(h_bytes_eq(m->metadata, h_hex(h, SUB_V3_JAVA)));
        } else if (kp_str_eq(m->member_id, b->member)) {
            seen_b = true;
            assert_true(h_bytes_eq(m->metadata, h_hex(h, SUB_V3_RDK)));
        }
    }
    assert_true(seen_a && seen_b);
    assert_state(h, "g", GS_COMPLETING);
    /* CompletingRebalance: heartbeats are fine */
    assert_int_equal(cli_heartbeat(h, b), 0);
    h_free(h);
}

static void test_leader_members_carry_metadata_of_the_selected_protocol(void **state) {
    (void)state;
    harness *h = h_new(NO_DELAY);
    cli *a = cli_new(h, "consumer-a", "g");
    cli *b = cli_new(h, "consumer-b", "g");
    cli_protos(a, (proto[]){{"range", SUB_V3_JAVA}, {"roundrobin", SUB_V3_RDK}}, 2);
    cli_protos(b, (proto[]){{"roundrobin", SUB_V0}}, 1);
    two_member_group(h, a, b, false);
    group *g = grp(h, "g");
    assert_string_equal(g->protocol_name, "roundrobin");
    /* CompletingRebalance, same metadata: the leader gets the current generation and members at once */
    req *ja = cli_join(h, a, 5);
    assert_true(h_answered(ja));
    kp_join_group_response *p = join_resp(h, ja);
    assert_int_equal(p->error_code, 0);
    assert_int_equal(p->generation_id, 2);
    assert_true(kp_str_eq(p->protocol_name, "roundrobin"));
    assert_int_equal(p->members.n, 2);
    for (int i = 0; i < 2; i++) {
        kp_join_group_response_member *m = &p->members.v[i];
        if (kp_str_eq(m->member_id, a->member))
            assert_true(h_bytes_eq(m->metadata, h_hex(h, SUB_V3_RDK)));
        else
            assert_true(h_bytes_eq(m->metadata, h_hex(h, SUB_V0)));
    }
    h_free(h);
}

static void test_protocol_vote_picks_common_protocol_most_members_prefer(void **state) {
    (void)state;
    harness *h = h_new(NO_DELAY);
    cli *a = cli_new(h, "consumer-a", "g");
    cli *b = cli_new(h, "consumer-b", "g");
    cli *c = cli_new(h, "consumer-c", "g");
    cli_protos(a, (proto[]){{"range", SUB_V0}, {"roundrobin", SUB_V0}}, 2);
    cli_protos(b, (proto[]){{"roundrobin", SUB_V0}, {"range", SUB_V0}}, 2);
    cli_protos(c, (proto[]){{"roundrobin", SUB_V0}, {"range", SUB_V0}}, 2);
    /* a alone: range */
    cli_join_new(h, a, 5);
    assert_string_equal(grp(h, "g")->protocol_name, "range");
    req *jb = cli_join_new(h, b, 5);
    req *jc = cli_join_new(h, c, 5);
    assert_int_equal(jb->state, REQ_PARKED);
    assert_int_equal(jc->state, REQ_PARKED);
    req *ja = cli_join(h, a, 5);
    assert_true(h_answered(ja) && h_answered(jb) && h_answered(jc));
    /* both are supported by all; two of three members vote roundrobin, over the leader's preference */
    assert_true(kp_str_eq(join_resp(h, ja)->protocol_name, "roundrobin"));
    assert_true(kp_str_eq(join_resp(h, jb)->protocol_name, "roundrobin"));
    assert_true(kp_str_eq(join_resp(h, jc)->protocol_name, "roundrobin"));
    assert_true(kp_str_eq(join_resp(h, ja)->leader, a->member));
    h_free(h);
}

static void test_protocol_vote_range_roundrobin_with_roundrobin_only_selects_roundrobin(void **state) {
    (void)state;
    harness *h = h_new(NO_DELAY);
    cli *a = cli_new(h, "consumer-a", "g");
    cli *b = cli_new(h, "consumer-b", "g");
    cli_protos(a, (proto[]){{"range", SUB_V0}, {"roundrobin", SUB_V0}}, 2);
    cli_protos(b, (proto[]){{"roundrobin", SUB_V0}}, 1);
    two_member_group(h, a, b, false);
    assert_string_equal(grp(h, "g")->protocol_name, "roundrobin");
    h_free(h);
}

static void test_join_without_common_protocol_is_inconsistent_group_protocol(void **state) {
    (void)state;
    harness *h = h_new(NO_DELAY);
    cli *a = cli_new(h, "consumer-a", "g");
    cli *b = cli_new(h, "consumer-b", "g");
    cli_join_new(h, a, 5);
    b->protos[0] = (proto){"roundrobin", SUB_V0};
    kp_join_group_response *p = join_resp(h, join_raw(h, b, 5, ""));
    assert_int_equal(p->error_code, KERR_INCONSISTENT_GROUP_PROTOCOL);
    assert_int_equal(p->members.n, 0);
    /* a different protocol type is no better */
    b->protos[0] = (proto){"range", SUB_V0};
    b->ptype = "connect";
    assert_int_equal(join_resp(h, join_raw(h, b, 5, ""))->error_code, KERR_INCONSISTENT_GROUP_PROTOCOL);
    /* an empty protocol type or no protocols at all */
    b->ptype = "";
    assert_int_equal(join_resp(h, join_raw(h, b, 5, ""))->error_code, KERR_INCONSISTENT_GROUP_PROTOCOL);
    b->ptype = "consumer";
    b->nprotos = 0;
    assert_int_equal(join_resp(h, join_raw(h, b, 5, ""))->error_code, KERR_INCONSISTENT_GROUP_PROTOCOL);
    assert_int_equal(grp(h, "g")->nmembers, 1);
    assert_null(grp(h, "g")->pending);
    h_free(h);
}

static void test_join_session_timeout_out_of_range_is_invalid_session_timeout(void **state) {
    (void)state;
    harness *h = h_new(NO_DELAY);
    cli *a = cli_new(h, "consumer-a", "g");
    a->session_ms = 5999; /* group.min.session.timeout.ms = 6000 */
    assert_int_equal(join_resp(h, join_raw(h, a, 5, ""))->error_code, KERR_INVALID_SESSION_TIMEOUT);
    a->session_ms = 1800001; /* group.max.session.timeout.ms = 1800000 */
    assert_int_equal(join_resp(h, join_raw(h, a, 5, ""))->error_code, KERR_INVALID_SESSION_TIMEOUT);
    assert_null(grp(h, "g"));
    a->session_ms = 6000;
    assert_int_equal(join_resp(h, join_raw(h, a, 5, ""))->error_code, KERR_MEMBER_ID_REQUIRED);
    a->session_ms = 1800000;
    assert_int_equal(join_resp(h, join_raw(h, a, 5, ""))->error_code, KERR_MEMBER_ID_REQUIRED);
    h_free(h);
}

static void test_join_empty_group_id_is_invalid_group_id(void **state) {
    (void)state;
    harness *h = h_new(NO_DELAY);
    cli *a = cli_new(h, "consumer-a", "");
    for (int16_t ver = 0; ver <= 9; ver++) {
        kp_join_group_response *p = join_resp(h, join_raw(h, a, ver, ""));
        assert_int_equal(p->error_code, KERR_INVALID_GROUP_ID);
    }
    assert_null(h->s.groups);
    h_free(h);
}

static void test_join_unknown_member_id_is_unknown_member_id(void **state) {
    (void)state;
    harness *h = h_new(NO_DELAY);
    cli *a = cli_new(h, "consumer-a", "g");
    cli *b = cli_new(h, "consumer-b", "g");
    /* no such group, but a member id: UNKNOWN_MEMBER_ID, and no group is created */
    kp_join_group_response *p = join_resp(h, join_raw(h, b, 5, "consumer-b-made-up"));
    assert_int_equal(p->error_code, KERR_UNKNOWN_MEMBER_ID);
    assert_null(grp(h, "g"));
    cli_join_new(h, a, 5);
    p = join_resp(h, join_raw(h, b, 5, "consumer-b-made-up"));
    assert_int_equal(p->error_code, KERR_UNKNOWN_MEMBER_ID);
    assert_true(kp_str_eq(p->member_id, ""));
    assert_int_equal(grp(h, "g")->nmembers, 1);
    h_free(h);
}

static void test_follower_rejoin_with_same_metadata_in_stable_gets_current_generation(void **state) {
    (void)state;
    harness *h = h_new(NO_DELAY);
    cli *a = cli_new(h, "consumer-a", "g");
    cli *b = cli_new(h, "consumer-b", "g");
    two_member_group(h, a, b, true);
    req *r = cli_join(h, b, 5);
    assert_true(h_answered(r));
    kp_join_group_response *p = join_resp(h, r);
    assert_int_equal(p->error_code, 0);
    assert_int_equal(p->generation_id, 2);
    assert_true(kp_str_eq(p->leader, a->member));
    assert_int_equal(p->members.n, 0);
    assert_state(h, "g", GS_STABLE);
    /* the leader rejoining starts a rebalance (it may want to reassign) */
    req *ra = cli_join(h, a, 5);
    assert_int_equal(ra->state, REQ_PARKED);
    assert_state(h, "g", GS_PREPARING);
    h_free(h);
}

static void test_group_max_size_reached(void **state) {
    (void)state;
    static const char *const cfg[] = {"group.initial.rebalance.delay.ms", "0", "group.max.size", "1", NULL};
    harness *h = h_new(cfg);
    cli *a = cli_new(h, "consumer-a", "g");
    cli *b = cli_new(h, "consumer-b", "g");
    cli_join_new(h, a, 5);
    kp_join_group_response *p = join_resp(h, join_raw(h, b, 5, ""));
    assert_int_equal(p->error_code, KERR_GROUP_MAX_SIZE_REACHED);
    assert_true(kp_str_eq(p->member_id, ""));
    assert_int_equal(grp(h, "g")->nmembers, 1);
    h_free(h);
}

/* ======================================================================== */
/* SyncGroup                                                                */
/* ======================================================================== */

static void test_sync_follower_parked_until_leader_syncs_then_gets_assignment(void **state) {
    (void)state;
    harness *h = h_new(NO_DELAY);
    cli *a = cli_new(h, "consumer-a", "g");
    cli *b = cli_new(h, "consumer-b", "g");
    two_member_group(h, a, b, false);
    req *sb = cli_sync(h, b, NULL, 0);
    assert_int_equal(sb->state, REQ_PARKED);
    assert_state(h, "g", GS_COMPLETING);
    req *sa = sync_full(h, a, 5, a->gen, "consumer", "range",
                        (assign[]){{a->member, ASSIGN_P0}, {b->member, ASSIGN_P12}}, 2);
    assert_true(h_answered(sa));
    assert_true(h_answered(sb));
    kp_sync_group_response *pa = sync_resp(h, sa);
    kp_sync_group_response *pb = sync_resp(h, sb);
    assert_int_equal(pa->error_code, 0);
    assert_int_equal(pb->error_code, 0);
    assert_true(h_bytes_eq(pa->assignment, h_hex(h, ASSIGN_P0)));
    assert_true(h_bytes_eq(pb->assignment, h_hex(h, ASSIGN_P12)));
    assert_true(kp_str_eq(pa->protocol_type, "consumer"));
    assert_true(kp_str_eq(pa->protocol_name, "range"));
    assert_state(h, "g", GS_STABLE);
    /* Stable: the stored assignment at once */
    req *again = cli_sync(h, b, NULL, 0);
    assert_true(h_answered(again));
    assert_true(h_bytes_eq(sync_resp(h, again)->assignment, h_hex(h, ASSIGN_P12)));
    h_free(h);
}

static void test_sync_member_left_out_by_leader_gets_empty_assignment(void **state) {
    (void)state;
    harness *h = h_new(NO_DELAY);
    cli *a = cli_new(h, "consumer-a", "g");
    cli *b = cli_new(h, "consumer-b", "g");
    two_member_group(h, a, b, false);
    req *sb = cli_sync(h, b, NULL, 0);
    req *sa = cli_sync(h, a, (assign[]){{a->member, ASSIGN_P0}}, 1);
    assert_int_equal(sync_resp(h, sa)->error_code, 0);
    kp_sync_group_response *pb = sync_resp(h, sb);
    assert_int_equal(pb->error_code, 0);
    assert_int_equal(pb->assignment.len, 0);
    h_free(h);
}

static void test_sync_wrong_generation_is_illegal_generation(void **state) {
    (void)state;
    harness *h = h_new(NO_DELAY);
    cli *a = cli_new(h, "consumer-a", "g");
    cli *b = cli_new(h, "consumer-b", "g");
    two_member_group(h, a, b, false);
    req *r = sync_full(h, b, 3, b->gen - 1, NULL, NULL, NULL, 0);
    assert_int_equal(sync_resp(h, r)->error_code, KERR_ILLEGAL_GENERATION);
    r = sync_full(h, a, 3, a->gen + 1, NULL, NULL, (assign[]){{a->member, ASSIGN_P0}}, 1);
    assert_int_equal(sync_resp(h, r)->error_code, KERR_ILLEGAL_GENERATION);
    assert_state(h, "g", GS_COMPLETING);
    /* heartbeat: same rule */
    assert_int_equal(heartbeat_full(h, b, 4, b->member, b->gen + 1, NULL), KERR_ILLEGAL_GENERATION);
    /* unknown member and unknown group */
    assert_int_equal(heartbeat_full(h, b, 4, "nobody", b->gen, NULL), KERR_UNKNOWN_MEMBER_ID);
    cli *x = cli_new(h, "consumer-x", "no-such-group");
    snprintf(x->member, sizeof x->member, "whoever");
    assert_int_equal(sync_resp(h, cli_sync(h, x, NULL, 0))->error_code, KERR_UNKNOWN_MEMBER_ID);
    assert_int_equal(cli_heartbeat(h, x), KERR_UNKNOWN_MEMBER_ID);
    h_free(h);
}

static void test_sync_v5_protocol_mismatch_is_inconsistent_group_protocol(void **state) {
    (void)state;
    harness *h = h_new(NO_DELAY);
    cli *a = cli_new(h, "consumer-a", "g");
    cli *b = cli_new(h, "consumer-b", "g");
    two_member_group(h, a, b, false);
    req *r = sync_full(h, b, 5, b->gen, "consumer", "roundrobin", NULL, 0);
    assert_int_equal(sync_resp(h, r)->error_code, KERR_INCONSISTENT_GROUP_PROTOCOL);
    r = sync_full(h, b, 5, b->gen, "connect", "range", NULL, 0);
    assert_int_equal(sync_resp(h, r)->error_code, KERR_INCONSISTENT_GROUP_PROTOCOL);
    /* the right names: parked, waiting for the leader */
    r = sync_full(h, b, 5, b->gen, "consumer", "range", NULL, 0);
    assert_int_equal(r->state, REQ_PARKED);
    h_free(h);
}

static void test_leader_leaving_during_completing_rebalance_fails_parked_syncs(void **state) {
    (void)state;
    harness *h = h_new(NO_DELAY);
    cli *a = cli_new(h, "consumer-a", "g");
    cli *b = cli_new(h, "consumer-b", "g");
    two_member_group(h, a, b, false);
    req *sb = cli_sync(h, b, NULL, 0);
    assert_int_equal(sb->state, REQ_PARKED);
    kp_leave_group_request q;
    kp_defaults(&kp_leave_group_request_schema, 1, &q);
    q.group_id = kp_str_c("g");
    q.member_id = kp_str_c(a->member);
    kp_leave_group_response *lr = h_resp(h, h_send(h, a->c, a->client_id, 13, 1, &q));
    assert_int_equal(lr->error_code, 0);
    assert_true(h_answered(sb));
    assert_int_equal(sync_resp(h, sb)->error_code, KERR_REBALANCE_IN_PROGRESS);
    assert_state(h, "g", GS_PREPARING);
    /* b rejoins alone and leads generation 3 */
    req *jb = cli_join(h, b, 5);
    assert_true(h_answered(jb));
    kp_join_group_response *p = join_resp(h, jb);
    assert_int_equal(p->generation_id, 3);
    assert_true(kp_str_eq(p->leader, b->member));
    h_free(h);
}

/* ======================================================================== */
/* Heartbeat, session and rebalance timeouts                                */
/* ======================================================================== */

static void test_heartbeat_stable_then_session_expiry_removes_member_and_rebalances(void **state) {
    (void)state;
    harness *h = h_new(NO_DELAY);
    cli *a = cli_new(h, "consumer-a", "g");
    cli *b = cli_new(h, "consumer-b", "g");
    two_member_group(h, a, b, true);
    assert_int_equal(cli_heartbeat(h, a), 0);
    assert_int_equal(cli_heartbeat(h, b), 0);
    /* a keeps heartbeating, b goes silent */
    tick(h, "g", SESSION_MS / 2);
    assert_int_equal(cli_heartbeat(h, a), 0);
    tick(h, "g", SESSION_MS / 2 - 1);
    assert_int_equal(grp(h, "g")->nmembers, 2);
    assert_state(h, "g", GS_STABLE);
    tick(h, "g", 2);
    assert_int_equal(grp(h, "g")->nmembers, 1);
    assert_state(h, "g", GS_PREPARING);
    assert_int_equal(cli_heartbeat(h, a), KERR_REBALANCE_IN_PROGRESS);
    assert_int_equal(cli_heartbeat(h, b), KERR_UNKNOWN_MEMBER_ID);
    req *ja = cli_join(h, a, 5);
    assert_true(h_answered(ja));
    assert_int_equal(a->gen, 3);
    assert_int_equal(join_resp(h, ja)->members.n, 1);
    h_free(h);
}

static void test_member_not_syncing_within_rebalance_timeout_is_removed(void **state) {
    (void)state;
    harness *h = h_new(NO_DELAY);
    cli *a = cli_new(h, "consumer-a", "g");
    cli *b = cli_new(h, "consumer-b", "g");
    a->rebalance_ms = b->rebalance_ms = 6000; /* shorter than the session: only the sync timer can fire */
    two_member_group(h, a, b, false);
    /* b syncs and waits; the leader a never sends SyncGroup */
    req *sb = cli_sync(h, b, NULL, 0);
    assert_int_equal(sb->state, REQ_PARKED);
    tick(h, "g", 5999);
    assert_int_equal(grp(h, "g")->nmembers, 2);
    tick(h, "g", 2);
    assert_int_equal(grp(h, "g")->nmembers, 1);
    assert_string_equal(grp(h, "g")->members->id, b->member);
    /* a new rebalance: b's parked SyncGroup learns it */
    assert_true(h_answered(sb));
    assert_int_equal(sync_resp(h, sb)->error_code, KERR_REBALANCE_IN_PROGRESS);
    assert_state(h, "g", GS_PREPARING);
    assert_int_equal(cli_heartbeat(h, a), KERR_UNKNOWN_MEMBER_ID);
    h_free(h);
}

/*
 * Regression: the pending-sync timer (rebalance timeout, armed when the join phase
 * completes) was disarmed as soon as the leader's SyncGroup makes the group
 * Stable (grp_sync sets sync_deadline_ms = 0, and grp_tick only checks it in
 * CompletingRebalance). Kafka keeps it running in Stable too
 * (GroupCoordinator.onExpirePendingSync: "case CompletingRebalance | Stable
 * => if (!group.hasReceivedSyncFromAllMembers) remove the pending-sync members
 * and prepareRebalance"), since Kafka 3.0: members that never sent SyncGroup
 * when the sync timer fires are removed and a new rebalance starts. A
 * follower that heartbeated but never synced used to stay forever.
 */
static void test_follower_never_syncing_after_leader_synced_is_removed_at_rebalance_timeout(void **state) {
    (void)state;
    harness *h = h_new(NO_DELAY);
    cli *a = cli_new(h, "consumer-a", "g");
    cli *b = cli_new(h, "consumer-b", "g");
    a->rebalance_ms = b->rebalance_ms = 20000;
    two_member_group(h, a, b, false);
    req *sa = cli_sync(h, a, (assign[]){{a->member, ASSIGN_P0}, {b->member, ASSIGN_P12}}, 2);
    assert_int_equal(sync_resp(h, sa)->error_code, 0);
    assert_state(h, "g", GS_STABLE);
    /* both keep their sessions; b never sends SyncGroup */
    for (int i = 0; i < 3; i++) {
        tick(h, "g", 6000);
        assert_int_equal(cli_heartbeat(h, a), 0);
        assert_int_equal(cli_heartbeat(h, b), 0);
    }
    tick(h, "g", 2001); /* 20001 ms after the join phase completed */
    assert_int_equal(grp(h, "g")->nmembers, 1);
    assert_state(h, "g", GS_PREPARING);
    assert_int_equal(cli_heartbeat(h, a), KERR_REBALANCE_IN_PROGRESS);
    h_free(h);
}

/*
 * Regression (issue 30, librdkafka 0084_destroy_flags): a follower whose SyncGroup was parked past
 * its session timeout stopped the broker. grp_tick rightly kept the member (Kafka counts a parked
 * request as a satisfied heartbeat), but the group's timer was re-armed at that member's past
 * deadline, so libuv ran the timer again and again before any I/O. After every tick the timer's
 * next deadline must lie in the future.
 */
static void test_parked_sync_past_session_timeout_does_not_stop_the_loop(void **state) {
    (void)state;
    harness *h = h_new(NO_DELAY);
    cli *a = cli_new(h, "consumer-a", "g");
    cli *b = cli_new(h, "consumer-b", "g");
    a->session_ms = 60000; /* the leader never syncs and never heartbeats */
    b->session_ms = 6000;
    two_member_group(h, a, b, false);
    req *sb = cli_sync(h, b, NULL, 0);
    assert_int_equal(sb->state, REQ_PARKED);
    for (int i = 0; i < 15; i++) {
        tick(h, "g", 1000);
        assert_true(grp_next_deadline(grp(h, "g")) > clk_mono_ms());
    }
    /* b outlived its session while waiting on the coordinator, as in Kafka */
    assert_int_equal(grp(h, "g")->nmembers, 2);
    assert_int_equal(sb->state, REQ_PARKED);
    req *sa = cli_sync(h, a, (assign[]){{a->member, ASSIGN_P0}, {b->member, ASSIGN_P12}}, 2);
    assert_int_equal(sync_resp(h, sa)->error_code, 0);
    assert_int_equal(sync_resp(h, sb)->error_code, 0);
    /* answered, b's session runs again from now */
    tick(h, "g", 5999);
    assert_int_equal(grp(h, "g")->nmembers, 2);
    assert_int_equal(cli_heartbeat(h, a), 0);
    tick(h, "g", 2);
    assert_int_equal(grp(h, "g")->nmembers, 1);
    h_free(h);
}

/* The same for a JoinGroup parked past its member's session timeout while another member is awaited. */
static void test_parked_join_past_session_timeout_does_not_stop_the_loop(void **state) {
    (void)state;
    harness *h = h_new(NO_DELAY);
    cli *a = cli_new(h, "consumer-a", "g");
    cli *b = cli_new(h, "consumer-b", "g");
    cli *c = cli_new(h, "consumer-c", "g");
    b->session_ms = 6000;
    two_member_group(h, a, b, true);
    req *jc = cli_join_new(h, c, 5);
    assert_int_equal(jc->state, REQ_PARKED);
    assert_state(h, "g", GS_PREPARING);
    req *jb = cli_join(h, b, 5);
    assert_int_equal(jb->state, REQ_PARKED);
    /* a heartbeats but has not rejoined yet: the phase waits, b's join stays parked */
    for (int i = 0; i < 15; i++) {
        tick(h, "g", 1000);
        assert_true(grp_next_deadline(grp(h, "g")) > clk_mono_ms());
        assert_int_equal(cli_heartbeat(h, a), KERR_REBALANCE_IN_PROGRESS);
    }
    assert_int_equal(grp(h, "g")->nmembers, 3);
    assert_int_equal(jb->state, REQ_PARKED);
    req *ja = cli_join(h, a, 5);
    assert_true(h_answered(ja));
    assert_true(h_answered(jb));
    assert_true(h_answered(jc));
    assert_int_equal(join_resp(h, jb)->error_code, 0);
    assert_int_equal(join_resp(h, ja)->members.n, 3);
    h_free(h);
}

/*
 * Regression (librdkafka 0084_destroy_flags, found by tools/client-suites): a new member whose
 * connection closed while its first JoinGroup was parked stayed in the completed generation with
 * the 300 s new-member join timeout, so the group waited five minutes on it. Kafka's
 * onCompleteJoin clears isNew for every member: its session timeout applies from then on.
 */
static void test_new_member_gone_while_parked_expires_at_its_session_timeout(void **state) {
    (void)state;
    harness *h = h_new(NO_DELAY);
    cli *a = cli_new(h, "consumer-a", "g");
    cli *b = cli_new(h, "consumer-b", "g");
    req *ja = cli_join_new(h, a, 5);
    assert_true(h_answered(ja));
    assert_int_equal(sync_resp(h, cli_sync(h, a, NULL, 0))->error_code, 0);
    req *jb = cli_join_new(h, b, 5);
    assert_int_equal(jb->state, REQ_PARKED);
    req_cancel_park(&h->s, jb); /* b's connection closes, as net_close does for a parked request */
    ja = cli_join(h, a, 5);
    assert_true(h_answered(ja));
    assert_int_equal(join_resp(h, ja)->members.n, 2); /* b had joined this phase: it is in the generation */
    tick(h, "g", SESSION_MS - 1);
    assert_int_equal(grp(h, "g")->nmembers, 2);
    assert_int_equal(cli_heartbeat(h, a), 0);
    tick(h, "g", 2);
    assert_int_equal(grp(h, "g")->nmembers, 1);
    assert_state(h, "g", GS_PREPARING);
    h_free(h);
}

static void test_member_not_rejoining_within_rebalance_timeout_is_removed(void **state) {
    (void)state;
    harness *h = h_new(NO_DELAY);
    cli *a = cli_new(h, "consumer-a", "g");
    cli *b = cli_new(h, "consumer-b", "g");
    req *ja = cli_join_new(h, a, 5);
    assert_true(h_answered(ja));
    assert_int_equal(sync_resp(h, cli_sync(h, a, NULL, 0))->error_code, 0);
    req *jb = cli_join_new(h, b, 5);
    assert_int_equal(jb->state, REQ_PARKED);
    /* a heartbeats (and is told to rejoin) but never rejoins */
    for (int i = 0; i < 3; i++) {
        tick(h, "g", 8000);
        assert_int_equal(cli_heartbeat(h, a), KERR_REBALANCE_IN_PROGRESS);
        assert_int_equal(jb->state, REQ_PARKED);
    }
    tick(h, "g", REBALANCE_MS - 24000 + 1);
    assert_true(h_answered(jb));
    kp_join_group_response *p = cli_joined(h, b, jb);
    assert_int_equal(p->error_code, 0);
    assert_int_equal(p->generation_id, 2);
    /* the old leader is gone: b leads */
    assert_true(kp_str_eq(p->leader, b->member));
    assert_int_equal(p->members.n, 1);
    assert_int_equal(cli_heartbeat(h, a), KERR_UNKNOWN_MEMBER_ID);
    h_free(h);
}

static void test_pending_member_never_returning_is_dropped_after_session_timeout(void **state) {
    (void)state;
    harness *h = h_new(NO_DELAY);
    cli *a = cli_new(h, "consumer-a", "g");
    cli *b = cli_new(h, "consumer-b", "g");
    cli_join_new(h, a, 5);
    cli_sync(h, a, NULL, 0);
    assert_int_equal(join_resp(h, join_raw(h, b, 5, ""))->error_code, KERR_MEMBER_ID_REQUIRED);
    assert_non_null(grp(h, "g")->pending);
    /* the leader rejoins: the phase waits for the pending member ... */
    req *ja = cli_join(h, a, 5);
    assert_int_equal(ja->state, REQ_PARKED);
    /* ... until its session timeout drops it */
    tick(h, "g", SESSION_MS + 1);
    assert_null(grp(h, "g")->pending);
    assert_true(h_answered(ja));
    assert_int_equal(join_resp(h, ja)->generation_id, 2);
    assert_int_equal(join_resp(h, ja)->members.n, 1);
    h_free(h);
}

/*
 * Regression: a dynamic member sending a group.instance.id the group does not
 * know passed member validation. Kafka's GroupMetadata.validateMember (3.x) /
 * ClassicGroup.validateMember (4.x), which JoinGroup and Heartbeat use: an
 * instance id that is not mapped to any member is UNKNOWN_MEMBER_ID (25),
 * whatever the member id. check_member() only fenced when the instance id
 * mapped to a different member, and answered 0.
 */
static void test_heartbeat_with_unknown_instance_id_is_unknown_member(void **state) {
    (void)state;
    harness *h = h_new(NO_DELAY);
    cli *a = cli_new(h, "consumer-a", "g");
    cli_join_new(h, a, 5);
    cli_sync(h, a, NULL, 0);
    assert_int_equal(cli_heartbeat(h, a), 0);
    assert_int_equal(heartbeat_full(h, a, 3, a->member, a->gen, "no-such-instance"), KERR_UNKNOWN_MEMBER_ID);
    h_free(h);
}

/* ======================================================================== */
/* LeaveGroup                                                               */
/* ======================================================================== */

static void test_leave_group_v3_batch_reports_per_member_errors(void **state) {
    (void)state;
    harness *h = h_new(NO_DELAY);
    cli *a = cli_new(h, "consumer-a", "g");
    cli *b = cli_new(h, "consumer-b", "g");
    two_member_group(h, a, b, true);
    kp_leave_group_request q;
    kp_defaults(&kp_leave_group_request_schema, 3, &q);
    q.group_id = kp_str_c("g");
    kp_leave_group_member_identity ms[3] = {
        {kp_str_c(b->member), KP_STR_NULL, KP_STR_NULL},
        {kp_str_c("nobody"), KP_STR_NULL, KP_STR_NULL},
        {kp_str_c(""), kp_str_c("no-such-instance"), KP_STR_NULL},
    };
    q.members.n = 3;
    q.members.v = ms;
    kp_leave_group_response *p = h_resp(h, h_send(h, b->c, b->client_id, 13, 3, &q));
    assert_int_equal(p->error_code, 0);
    assert_int_equal(p->members.n, 3);
    assert_true(kp_str_eq(p->members.v[0].member_id, b->member));
    assert_int_equal(p->members.v[0].error_code, 0);
    assert_true(kp_str_eq(p->members.v[1].member_id, "nobody"));
    assert_int_equal(p->members.v[1].error_code, KERR_UNKNOWN_MEMBER_ID);
    assert_true(kp_str_eq(p->members.v[2].group_instance_id, "no-such-instance"));
    assert_int_equal(p->members.v[2].error_code, KERR_UNKNOWN_MEMBER_ID);
    assert_int_equal(grp(h, "g")->nmembers, 1);
    assert_state(h, "g", GS_PREPARING);

    /* unknown group: top level NONE, every member UNKNOWN_MEMBER_ID */
    q.group_id = kp_str_c("no-such-group");
    q.members.n = 1;
    p = h_resp(h, h_send(h, b->c, b->client_id, 13, 3, &q));
    assert_int_equal(p->error_code, 0);
    assert_int_equal(p->members.n, 1);
    assert_int_equal(p->members.v[0].error_code, KERR_UNKNOWN_MEMBER_ID);

    /* the last member leaving empties the group */
    ms[0].member_id = kp_str_c(a->member);
    q.group_id = kp_str_c("g");
    p = h_resp(h, h_send(h, a->c, a->client_id, 13, 5, &q));
    assert_int_equal(p->error_code, 0);
    assert_int_equal(p->members.v[0].error_code, 0);
    assert_state(h, "g", GS_EMPTY);
    assert_int_equal(grp(h, "g")->nmembers, 0);
    assert_int_equal(grp(h, "g")->generation, 3);
    h_free(h);
}

static void test_leave_group_v0_reports_top_level_error(void **state) {
    (void)state;
    harness *h = h_new(NO_DELAY);
    cli *a = cli_new(h, "consumer-a", "g");
    cli *b = cli_new(h, "consumer-b", "g");
    two_member_group(h, a, b, true);
    kp_leave_group_request q;
    kp_defaults(&kp_leave_group_request_schema, 0, &q);
    q.group_id = kp_str_c("g");
    q.member_id = kp_str_c("nobody");
    kp_leave_group_response *p = h_resp(h, h_send(h, b->c, b->client_id, 13, 0, &q));
    assert_int_equal(p->error_code, KERR_UNKNOWN_MEMBER_ID);
    assert_state(h, "g", GS_STABLE);
    q.member_id = kp_str_c(b->member);
    p = h_resp(h, h_send(h, b->c, b->client_id, 13, 0, &q));
    assert_int_equal(p->error_code, 0);
    assert_int_equal(grp(h, "g")->nmembers, 1);
    assert_state(h, "g", GS_PREPARING);
    q.group_id = kp_str_c("no-such-group");
    p = h_resp(h, h_send(h, b->c, b->client_id, 13, 0, &q));
    assert_int_equal(p->error_code, KERR_UNKNOWN_MEMBER_ID);
    q.group_id = kp_str_c("");
    p = h_resp(h, h_send(h, b->c, b->client_id, 13, 0, &q));
    assert_int_equal(p->error_code, KERR_INVALID_GROUP_ID);
    h_free(h);
}

static void test_parked_join_of_removed_member_gets_unknown_member_with_empty_id(void **state) {
    (void)state;
    harness *h = h_new(NO_DELAY);
    cli *a = cli_new(h, "consumer-a", "g");
    cli *b = cli_new(h, "consumer-b", "g");
    cli_join_new(h, a, 5);
    cli_sync(h, a, NULL, 0);
    req *jb = cli_join_new(h, b, 5);
    assert_int_equal(jb->state, REQ_PARKED);
    kp_leave_group_request q;
    kp_defaults(&kp_leave_group_request_schema, 3, &q);
    q.group_id = kp_str_c("g");
    kp_leave_group_member_identity mi = {kp_str_c(b->member), KP_STR_NULL, KP_STR_NULL};
    q.members.n = 1;
    q.members.v = &mi;
    kp_leave_group_response *lr = h_resp(h, h_send(h, a->c, "admin", 13, 3, &q));
    assert_int_equal(lr->members.v[0].error_code, 0);
    /* Kafka's removeMemberAndUpdateGroup answers the parked JoinGroup UNKNOWN_MEMBER_ID with member_id "" */
    assert_true(h_answered(jb));
    kp_join_group_response *p = join_resp(h, jb);
    assert_int_equal(p->error_code, KERR_UNKNOWN_MEMBER_ID);
    assert_true(kp_str_eq(p->member_id, ""));
    assert_int_equal(grp(h, "g")->nmembers, 1);
    h_free(h);
}

/* ======================================================================== */
/* Static membership                                                        */
/* ======================================================================== */

/* b (dynamic) leads generation 2; s is a static follower with instance "inst-s"; Stable. */
static void static_group(harness *h, cli *b, cli *s) {
    s->instance = "inst-s";
    req *jb = cli_join_new(h, b, 5);
    assert_int_equal(join_resp(h, jb)->error_code, 0);
    assert_int_equal(sync_resp(h, cli_sync(h, b, NULL, 0))->error_code, 0);
    /* a static member: no MEMBER_ID_REQUIRED round trip */
    req *js = join_raw(h, s, 5, "");
    assert_int_equal(js->state, REQ_PARKED);
    jb = cli_join(h, b, 5);
    assert_true(h_answered(jb) && h_answered(js));
    kp_join_group_response *ps = cli_joined(h, s, js);
    assert_int_equal(ps->error_code, 0);
    assert_true(strncmp(s->member, "inst-s-", 7) == 0);
    assert_true(kp_str_eq(ps->leader, b->member));
    req *ss = cli_sync(h, s, NULL, 0);
    req *sb = cli_sync(h, b, (assign[]){{b->member, ASSIGN_P0}, {s->member, ASSIGN_P12}}, 2);
    assert_int_equal(sync_resp(h, sb)->error_code, 0);
    assert_int_equal(sync_resp(h, ss)->error_code, 0);
    assert_state(h, "g", GS_STABLE);
    assert_int_equal(grp(h, "g")->generation, 2);
}

static void test_static_member_rejoin_while_stable_keeps_generation_and_fences_old_id(void **state) {
    (void)state;
    harness *h = h_new(NO_DELAY);
    cli *b = cli_new(h, "consumer-b", "g");
    cli *s = cli_new(h, "consumer-s", "g");
    static_group(h, b, s);
    char old[256];
    snprintf(old, sizeof old, "%s", s->member);
    /* the static member restarts: empty member id, same instance id and metadata */
    req *r = join_raw(h, s, 5, "");
    assert_true(h_answered(r));
    kp_join_group_response *p = cli_joined(h, s, r);
    assert_int_equal(p->error_code, 0);
    assert_int_equal(p->generation_id, 2);
    assert_true(kp_str_eq(p->protocol_name, "range"));
    assert_true(kp_str_eq(p->leader, b->member));
    assert_int_equal(p->members.n, 0);
    assert_string_not_equal(s->member, old);
    assert_true(strncmp(s->member, "inst-s-", 7) == 0);
    /* no rebalance */
    assert_state(h, "g", GS_STABLE);
    assert_int_equal(grp(h, "g")->generation, 2);
    assert_int_equal(grp(h, "g")->nmembers, 2);
    assert_int_equal(cli_heartbeat(h, b), 0);
    /* the old incarnation is fenced */
    assert_int_equal(heartbeat_full(h, s, 3, old, 2, "inst-s"), KERR_FENCED_INSTANCE_ID);
    assert_int_equal(heartbeat_full(h, s, 4, old, 2, "inst-s"), KERR_FENCED_INSTANCE_ID);
    assert_int_equal(join_resp(h, join_raw(h, s, 5, old))->error_code, KERR_FENCED_INSTANCE_ID);
    /* the new one carries on with the stored assignment */
    assert_int_equal(cli_heartbeat(h, s), 0);
    req *ss = cli_sync(h, s, NULL, 0);
    assert_int_equal(sync_resp(h, ss)->error_code, 0);
    assert_true(h_bytes_eq(sync_resp(h, ss)->assignment, h_hex(h, ASSIGN_P12)));
    h_free(h);
}

/*
 * Regression: a static member that restarts with the same protocol but
 * different metadata bytes (a Java cooperative-sticky consumer always does: its
 * subscription carries owned partitions and the generation, which a restart
 * resets) triggered a rebalance. Kafka's GroupCoordinator
 * updateStaticMemberAndRebalance, case Stable (KIP-345): if the selected
 * protocol of the next generation would not change there is no rebalance; the
 * member's metadata is updated and it gets the current generation.
 * replace_static() compared the whole protocol list including metadata and
 * prepared a rebalance instead, which defeated static membership.
 */
static void test_static_member_rejoin_with_new_metadata_same_protocol_does_not_rebalance(void **state) {
    (void)state;
    harness *h = h_new(NO_DELAY);
    cli *b = cli_new(h, "consumer-b", "g");
    cli *s = cli_new(h, "consumer-s", "g");
    s->protos[0] = (proto){"range", SUB_V3_COOP_OWNED};
    static_group(h, b, s);
    s->protos[0] = (proto){"range", SUB_V3_JAVA}; /* after a restart: owns nothing, generation -1 */
    req *r = join_raw(h, s, 5, "");
    assert_true(h_answered(r));
    kp_join_group_response *p = cli_joined(h, s, r);
    assert_int_equal(p->error_code, 0);
    assert_int_equal(p->generation_id, 2);
    assert_state(h, "g", GS_STABLE);
    h_free(h);
}

static void test_static_leader_rejoin_gets_old_leader_id_below_v9_and_skip_assignment_from_v9(void **state) {
    (void)state;
    harness *h = h_new(NO_DELAY);
    cli *s = cli_new(h, "consumer-s", "g");
    s->instance = "inst-s";
    req *js = join_raw(h, s, 9, "");
    assert_true(h_answered(js));
    assert_int_equal(cli_joined(h, s, js)->error_code, 0);
    assert_int_equal(sync_resp(h, cli_sync(h, s, (assign[]){{s->member, ASSIGN_P0}}, 1))->error_code, 0);
    char old[256];
    snprintf(old, sizeof old, "%s", s->member);
    /* < v9: the old leader id, no members, so the client does not run the assignor */
    req *r = join_raw(h, s, 8, "");
    kp_join_group_response *p = cli_joined(h, s, r);
    assert_int_equal(p->error_code, 0);
    assert_int_equal(p->generation_id, 1);
    assert_true(kp_str_eq(p->leader, old));
    assert_false(kp_str_eq(p->member_id, old));
    assert_int_equal(p->members.n, 0);
    assert_state(h, "g", GS_STABLE);
    /* v9: it is told it leads, with the members, but to skip the assignment */
    snprintf(old, sizeof old, "%s", s->member);
    r = join_raw(h, s, 9, "");
    p = cli_joined(h, s, r);
    assert_int_equal(p->error_code, 0);
    assert_int_equal(p->generation_id, 1);
    assert_true(p->skip_assignment);
    assert_true(kp_str_eq(p->leader, s->member));
    assert_int_equal(p->members.n, 1);
    assert_true(kp_str_eq(p->members.v[0].group_instance_id, "inst-s"));
    assert_state(h, "g", GS_STABLE);
    assert_int_equal(heartbeat_full(h, s, 4, old, 1, "inst-s"), KERR_FENCED_INSTANCE_ID);
    h_free(h);
}

static void test_static_member_removed_by_instance_id_with_leave_group(void **state) {
    (void)state;
    harness *h = h_new(NO_DELAY);
    cli *b = cli_new(h, "consumer-b", "g");
    cli *s = cli_new(h, "consumer-s", "g");
    static_group(h, b, s);
    kp_leave_group_request q;
    kp_defaults(&kp_leave_group_request_schema, 4, &q);
    q.group_id = kp_str_c("g");
    kp_leave_group_member_identity mi = {kp_str_c(""), kp_str_c("inst-s"), KP_STR_NULL};
    q.members.n = 1;
    q.members.v = &mi;
    kp_leave_group_response *p = h_resp(h, h_send(h, b->c, "admin", 13, 4, &q));
    assert_int_equal(p->error_code, 0);
    assert_int_equal(p->members.v[0].error_code, 0);
    assert_int_equal(grp(h, "g")->nmembers, 1);
    assert_state(h, "g", GS_PREPARING);
    h_free(h);
}

/* ======================================================================== */
/* Initial rebalance delay                                                  */
/* ======================================================================== */

static void test_initial_rebalance_delay_holds_the_first_join_phase(void **state) {
    (void)state;
    static const char *const delay[] = {"group.initial.rebalance.delay.ms", "3000", NULL};
    harness *h = h_new(delay);
    cli *a = cli_new(h, "consumer-a", "g");
    cli *b = cli_new(h, "consumer-b", "g");
    req *ja = cli_join_new(h, a, 5);
    req *jb = cli_join_new(h, b, 5);
    /* everybody has joined, but a group that was Empty waits for the delay anyway */
    assert_int_equal(ja->state, REQ_PARKED);
    assert_int_equal(jb->state, REQ_PARKED);
    tick(h, "g", 2999);
    assert_int_equal(ja->state, REQ_PARKED);
    assert_int_equal(jb->state, REQ_PARKED);
    /*
     * At 3000 ms the delay fires. b joined while it ran, so (Kafka's
     * InitialDelayedJoin with newMemberAdded) the phase is extended by
     * min(delay, remaining); it completes when a delay passes without a new
     * member: at 6000 ms.
     */
    tick(h, "g", 1);
    assert_int_equal(ja->state, REQ_PARKED);
    assert_int_equal(jb->state, REQ_PARKED);
    tick(h, "g", 2999);
    assert_int_equal(ja->state, REQ_PARKED);
    tick(h, "g", 1);
    assert_true(h_answered(ja));
    assert_true(h_answered(jb));
    kp_join_group_response *pa = cli_joined(h, a, ja);
    kp_join_group_response *pb = cli_joined(h, b, jb);
    assert_int_equal(pa->error_code, 0);
    assert_int_equal(pa->generation_id, 1);
    assert_int_equal(pb->generation_id, 1);
    assert_int_equal(pa->members.n, 2);
    assert_state(h, "g", GS_COMPLETING);
    h_free(h);
}

static void test_initial_rebalance_delay_is_extended_while_members_arrive(void **state) {
    (void)state;
    static const char *const delay[] = {"group.initial.rebalance.delay.ms", "3000", NULL};
    harness *h = h_new(delay);
    cli *a = cli_new(h, "consumer-a", "g");
    cli *b = cli_new(h, "consumer-b", "g");
    req *ja = cli_join_new(h, a, 5);
    tick(h, "g", 1000);
    req *jb = cli_join_new(h, b, 5);
    tick(h, "g", 2000); /* the first delay ran out, but b arrived meanwhile: wait another 3000 */
    assert_int_equal(ja->state, REQ_PARKED);
    assert_int_equal(jb->state, REQ_PARKED);
    tick(h, "g", 2999);
    assert_int_equal(ja->state, REQ_PARKED);
    tick(h, "g", 1);
    assert_true(h_answered(ja));
    assert_true(h_answered(jb));
    assert_int_equal(join_resp(h, ja)->generation_id, 1);
    assert_int_equal(join_resp(h, ja)->members.n, 2);
    /* a rebalance of a non-empty group has no initial delay */
    cli *c = cli_new(h, "consumer-c", "g");
    cli_joined(h, a, ja);
    cli_joined(h, b, jb);
    req *jc = cli_join_new(h, c, 5);
    assert_int_equal(jc->state, REQ_PARKED);
    cli_join(h, a, 5);
    req *jb2 = cli_join(h, b, 5);
    assert_true(h_answered(jb2));
    assert_true(h_answered(jc));
    assert_int_equal(join_resp(h, jc)->generation_id, 2);
    h_free(h);
}

/* ======================================================================== */
/* OffsetCommit / OffsetFetch                                               */
/* ======================================================================== */

static void test_offset_commit_simple_consumer_on_unknown_group_creates_empty_group(void **state) {
    (void)state;
    harness *h = h_new(NO_DELAY);
    make_topic(h, "testtopic", 3);
    conn *c = h_conn(h, NULL);
    for (int16_t ver = 1; ver <= 9; ver++) {
        char id[32];
        snprintf(id, sizeof id, "simple-%d", ver);
        assert_int_equal(commit_err(h, c, ver, id, -1, "", NULL, "testtopic", 1, 100 + ver), 0);
        group *g = grp(h, id);
        assert_non_null(g);
        assert_int_equal(g->state, GS_EMPTY);
        assert_null(g->protocol_type);
        assert_int_equal(g->nmembers, 0);
        assert_int_equal(fetched_offset(h, c, id, "testtopic", 1), 100 + ver);
        /* again on the now existing Empty group */
        assert_int_equal(commit_err(h, c, ver, id, -1, "", NULL, "testtopic", 1, 200 + ver), 0);
        assert_int_equal(fetched_offset(h, c, id, "testtopic", 1), 200 + ver);
    }
    /* unknown topic or partition: per partition */
    assert_int_equal(commit_err(h, c, 8, "simple-8", -1, "", NULL, "testtopic", 3, 1), KERR_UNKNOWN_TOPIC_OR_PARTITION);
    assert_int_equal(commit_err(h, c, 8, "simple-8", -1, "", NULL, "nosuchtopic", 0, 1),
                     KERR_UNKNOWN_TOPIC_OR_PARTITION);
    h_free(h);
}

static void test_offset_commit_generation_on_unknown_group_is_illegal_generation(void **state) {
    (void)state;
    harness *h = h_new(NO_DELAY);
    make_topic(h, "testtopic", 3);
    conn *c = h_conn(h, NULL);
    assert_int_equal(commit_err(h, c, 8, "ghost", 5, "m-1", NULL, "testtopic", 0, 1), KERR_ILLEGAL_GENERATION);
    assert_int_equal(commit_err(h, c, 2, "ghost", 0, "", NULL, "testtopic", 0, 1), KERR_ILLEGAL_GENERATION);
    assert_null(grp(h, "ghost"));
    assert_int_equal(fetched_offset(h, c, "ghost", "testtopic", 0), -1);
    h_free(h);
}

static void test_offset_commit_member_rules_by_group_state(void **state) {
    (void)state;
    harness *h = h_new(NO_DELAY);
    make_topic(h, "testtopic", 3);
    conn *c = h_conn(h, NULL);
    cli *a = cli_new(h, "consumer-a", "g");
    cli *b = cli_new(h, "consumer-b", "g");
    req *ja = cli_join_new(h, a, 5);
    assert_true(h_answered(ja));
    /* CompletingRebalance: REBALANCE_IN_PROGRESS even for a valid member and generation */
    assert_state(h, "g", GS_COMPLETING);
    assert_int_equal(cli_commit(h, a, 10), KERR_REBALANCE_IN_PROGRESS);
    /* generation -1 without member id on a group with members */
    assert_int_equal(commit_err(h, c, 8, "g", -1, "", NULL, "testtopic", 0, 10), KERR_UNKNOWN_MEMBER_ID);
    cli_sync(h, a, NULL, 0);
    assert_state(h, "g", GS_STABLE);
    assert_int_equal(commit_err(h, c, 8, "g", -1, "", NULL, "testtopic", 0, 10), KERR_UNKNOWN_MEMBER_ID);
    /* Stable: the member's commit is accepted; wrong generation or member is not */
    assert_int_equal(cli_commit(h, a, 11), 0);
    assert_int_equal(fetched_offset(h, c, "g", "testtopic", 0), 11);
    assert_int_equal(commit_err(h, c, 8, "g", a->gen + 1, a->member, NULL, "testtopic", 0, 12),
                     KERR_ILLEGAL_GENERATION);
    assert_int_equal(commit_err(h, c, 8, "g", a->gen, "nobody", NULL, "testtopic", 0, 12), KERR_UNKNOWN_MEMBER_ID);
    /* PreparingRebalance: commits of the current (previous) generation are still accepted */
    req *jb = cli_join_new(h, b, 5);
    assert_int_equal(jb->state, REQ_PARKED);
    assert_state(h, "g", GS_PREPARING);
    assert_int_equal(cli_commit(h, a, 13), 0);
    assert_int_equal(fetched_offset(h, c, "g", "testtopic", 0), 13);
    h_free(h);
}

static void test_offset_fetch_v1_unknown_partition_is_minus_one(void **state) {
    (void)state;
    harness *h = h_new(NO_DELAY);
    make_topic(h, "testtopic", 3);
    conn *c = h_conn(h, NULL);
    assert_int_equal(commit_err(h, c, 2, "g", -1, "", NULL, "testtopic", 0, 42), 0);
    int32_t parts[] = {0, 1, 7};
    kp_offset_fetch_response *p = fetch_v1(h, c, "g", "testtopic", parts, 3);
    kp_offset_fetch_response_partition *v = p->topics.v[0].partitions.v;
    assert_true(kp_str_eq(p->topics.v[0].name, "testtopic"));
    assert_int_equal(v[0].partition_index, 0);
    assert_int_equal(v[0].committed_offset, 42);
    assert_true(kp_str_eq(v[0].metadata, "md"));
    assert_int_equal(v[0].error_code, 0);
    for (int i = 1; i < 3; i++) {
        assert_int_equal(v[i].partition_index, parts[i]);
        assert_int_equal(v[i].committed_offset, -1);
        assert_true(kp_str_eq(v[i].metadata, ""));
        assert_int_equal(v[i].error_code, 0);
    }
    /* an unknown group: the same "no offset" entries */
    p = fetch_v1(h, c, "nobody-committed", "testtopic", parts, 3);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(p->topics.v[0].partitions.v[i].committed_offset, -1);
        assert_int_equal(p->topics.v[0].partitions.v[i].error_code, 0);
    }
    h_free(h);
}

static void test_offset_fetch_v8_fetches_several_groups(void **state) {
    (void)state;
    harness *h = h_new(NO_DELAY);
    make_topic(h, "testtopic", 3);
    make_topic(h, "other", 1);
    conn *c = h_conn(h, NULL);
    assert_int_equal(commit_err(h, c, 8, "g1", -1, "", NULL, "testtopic", 0, 5), 0);
    assert_int_equal(commit_err(h, c, 8, "g2", -1, "", NULL, "testtopic", 2, 7), 0);
    assert_int_equal(commit_err(h, c, 8, "g2", -1, "", NULL, "other", 0, 9), 0);

    kp_offset_fetch_request q;
    kp_defaults(&kp_offset_fetch_request_schema, 8, &q);
    int32_t p01[] = {0, 1};
    kp_offset_fetch_request_topics t1 = {.name = kp_str_c("testtopic")};
    t1.partition_indexes.n = 2;
    t1.partition_indexes.v = p01;
    kp_offset_fetch_request_group gs[3];
    memset(gs, 0, sizeof gs);
    for (int i = 0; i < 3; i++) kp_defaults(&kp_offset_fetch_request_group_schema, 8, &gs[i]);
    gs[0].group_id = kp_str_c("g1");
    gs[0].topics.n = 1;
    gs[0].topics.v = &t1;
    gs[1].group_id = kp_str_c("g2");
    gs[1].topics.n = -1; /* every committed offset */
    gs[1].topics.v = NULL;
    gs[2].group_id = kp_str_c("g3");
    gs[2].topics.n = -1;
    gs[2].topics.v = NULL;
    q.groups.n = 3;
    q.groups.v = gs;
    kp_offset_fetch_response *p = h_resp(h, h_send(h, c, "fetcher", 9, 8, &q));
    assert_int_equal(p->groups.n, 3);

    kp_offset_fetch_response_group *g1 = &p->groups.v[0];
    assert_true(kp_str_eq(g1->group_id, "g1"));
    assert_int_equal(g1->error_code, 0);
    assert_int_equal(g1->topics.n, 1);
    assert_int_equal(g1->topics.v[0].partitions.n, 2);
    assert_int_equal(g1->topics.v[0].partitions.v[0].committed_offset, 5);
    assert_int_equal(g1->topics.v[0].partitions.v[1].committed_offset, -1);

    kp_offset_fetch_response_group *g2 = &p->groups.v[1];
    assert_true(kp_str_eq(g2->group_id, "g2"));
    assert_int_equal(g2->error_code, 0);
    assert_int_equal(g2->topics.n, 2);
    int found = 0;
    for (int i = 0; i < g2->topics.n; i++) {
        kp_offset_fetch_response_topics *t = &g2->topics.v[i];
        assert_int_equal(t->partitions.n, 1);
        if (kp_str_eq(t->name, "testtopic")) {
            assert_int_equal(t->partitions.v[0].partition_index, 2);
            assert_int_equal(t->partitions.v[0].committed_offset, 7);
            found++;
        } else if (kp_str_eq(t->name, "other")) {
            assert_int_equal(t->partitions.v[0].partition_index, 0);
            assert_int_equal(t->partitions.v[0].committed_offset, 9);
            found++;
        }
    }
    assert_int_equal(found, 2);

    kp_offset_fetch_response_group *g3 = &p->groups.v[2];
    assert_true(kp_str_eq(g3->group_id, "g3"));
    assert_int_equal(g3->error_code, 0);
    assert_int_equal(g3->topics.n, 0);
    h_free(h);
}

/* ======================================================================== */
/* Strict decoding of the embedded consumer protocol                        */
/* ======================================================================== */

static void test_join_strict_rejects_kafkajs_221_metadata_with_invalid_request(void **state) {
    (void)state;
    harness *h = h_new(NO_DELAY); /* default: group.consumer.protocol.validation=strict */
    cli *a = cli_new(h, "kafkajs", "g");
    a->protos[0] = (proto){"RoundRobinAssigner", SUB_KAFKAJS_221};
    kp_join_group_response *p = join_resp(h, join_raw(h, a, 5, ""));
    assert_int_equal(p->error_code, KERR_INVALID_REQUEST);
    assert_int_equal(p->generation_id, -1);
    assert_null(grp(h, "g"));
    /* the same bytes declaring v0 are fine */
    a->protos[0] = (proto){"RoundRobinAssigner", SUB_V0};
    assert_int_equal(join_resp(h, join_raw(h, a, 5, ""))->error_code, KERR_MEMBER_ID_REQUIRED);
    /* and a protocol type other than "consumer" keeps its metadata opaque */
    a->protos[0] = (proto){"RoundRobinAssigner", SUB_KAFKAJS_221};
    a->ptype = "connect";
    a->group = "g-connect";
    assert_int_equal(join_resp(h, join_raw(h, a, 5, ""))->error_code, KERR_MEMBER_ID_REQUIRED);
    h_free(h);
}

static void test_join_lenient_accepts_kafkajs_221_metadata(void **state) {
    (void)state;
    static const char *const lenient[] = {"group.initial.rebalance.delay.ms", "0", "group.consumer.protocol.validation",
                                          "lenient", NULL};
    harness *h = h_new(lenient);
    cli *a = cli_new(h, "kafkajs", "g");
    a->protos[0] = (proto){"RoundRobinAssigner", SUB_KAFKAJS_221};
    req *r = cli_join_new(h, a, 5);
    assert_true(h_answered(r));
    kp_join_group_response *p = join_resp(h, r);
    assert_int_equal(p->error_code, 0);
    assert_true(kp_str_eq(p->protocol_name, "RoundRobinAssigner"));
    assert_int_equal(p->members.n, 1);
    assert_true(h_bytes_eq(p->members.v[0].metadata, h_hex(h, SUB_KAFKAJS_221)));
    h_free(h);
}

static void test_sync_strict_refuses_malformed_assignment_and_lenient_forwards_it(void **state) {
    (void)state;
    /* inferred, no public report (docs/msk-behaviors.md#consumer-protocol-bytes-in-joingroup): strict mode
     * decodes ConsumerProtocolAssignment too; empty means "nothing" */
    for (int lenient = 0; lenient <= 1; lenient++) {
        static const char *const cfgs[2][5] = {
            {"group.initial.rebalance.delay.ms", "0", NULL},
            {"group.initial.rebalance.delay.ms", "0", "group.consumer.protocol.validation", "lenient", NULL},
        };
        harness *h = h_new(cfgs[lenient]);
        cli *a = cli_new(h, "consumer-a", "g");
        cli *b = cli_new(h, "consumer-b", "g");
        two_member_group(h, a, b, false);
        req *sb = cli_sync(h, b, NULL, 0);
        /* declares v0, ends inside the partition array */
        const char *bad = "000000000001000974657374746f7069630000000300000000";
        req *sa = cli_sync(h, a, (assign[]){{a->member, ""}, {b->member, bad}}, 2);
        if (!lenient) {
            assert_int_equal(sync_resp(h, sa)->error_code, KERR_INVALID_REQUEST);
            assert_int_equal(sb->state, REQ_PARKED);
            assert_state(h, "g", GS_COMPLETING);
        } else {
            assert_int_equal(sync_resp(h, sa)->error_code, 0);
            assert_int_equal(sync_resp(h, sa)->assignment.len, 0);
            assert_true(h_bytes_eq(sync_resp(h, sb)->assignment, h_hex(h, bad)));
            assert_state(h, "g", GS_STABLE);
        }
        h_free(h);
    }
}

/* ======================================================================== */
/* DeleteGroups, DescribeGroups                                             */
/* ======================================================================== */

static void count_offsets(void *ctx, const stor_offset *o) {
    if (strcmp(o->group_id, "g") == 0) (*(int *)ctx)++;
}

static void test_delete_groups_refuses_non_empty_and_removes_empty_with_offsets(void **state) {
    (void)state;
    harness *h = h_new(NO_DELAY);
    make_topic(h, "testtopic", 3);
    conn *c = h_conn(h, NULL);
    cli *a = cli_new(h, "consumer-a", "g");
    cli_join_new(h, a, 5);
    cli_sync(h, a, NULL, 0);
    assert_int_equal(cli_commit(h, a, 77), 0);
    assert_int_equal(delete_group(h, c, 2, "g"), KERR_NON_EMPTY_GROUP);
    assert_non_null(grp(h, "g"));
    /* the member leaves: Empty, with its offsets */
    kp_leave_group_request q;
    kp_defaults(&kp_leave_group_request_schema, 0, &q);
    q.group_id = kp_str_c("g");
    q.member_id = kp_str_c(a->member);
    assert_int_equal(((kp_leave_group_response *)h_resp(h, h_send(h, a->c, a->client_id, 13, 0, &q)))->error_code, 0);
    assert_state(h, "g", GS_EMPTY);
    assert_int_equal(fetched_offset(h, c, "g", "testtopic", 0), 77);
    int stored = 0;
    assert_int_equal(stor_offsets_load(h->s.st, count_offsets, &stored), 0);
    assert_int_equal(stored, 1);

    assert_int_equal(delete_group(h, c, 0, "g"), 0);
    assert_null(grp(h, "g"));
    assert_int_equal(fetched_offset(h, c, "g", "testtopic", 0), -1);
    stored = 0;
    assert_int_equal(stor_offsets_load(h->s.st, count_offsets, &stored), 0);
    assert_int_equal(stored, 0);
    /* gone: GROUP_ID_NOT_FOUND */
    assert_int_equal(delete_group(h, c, 2, "g"), KERR_GROUP_ID_NOT_FOUND);
    h_free(h);
}

static void test_describe_unknown_group_is_dead_without_error(void **state) {
    (void)state;
    harness *h = h_new(NO_DELAY);
    conn *c = h_conn(h, NULL);
    for (int16_t ver = 0; ver <= 5; ver++) {
        kp_describe_groups_described_group *d = describe(h, c, ver, "no-such-group");
        assert_int_equal(d->error_code, 0);
        assert_true(kp_str_eq(d->group_id, "no-such-group"));
        assert_true(kp_str_eq(d->group_state, "Dead"));
        assert_true(kp_str_eq(d->protocol_type, ""));
        assert_true(kp_str_eq(d->protocol_data, ""));
        assert_int_equal(d->members.n, 0);
    }
    assert_null(grp(h, "no-such-group"));
    h_free(h);
}

static void test_describe_group_shows_protocol_and_assignments_only_when_stable(void **state) {
    (void)state;
    harness *h = h_new(NO_DELAY);
    conn *c = h_conn(h, NULL);
    cli *a = cli_new(h, "consumer-a", "g");
    cli *b = cli_new(h, "consumer-b", "g");
    two_member_group(h, a, b, false);
    kp_describe_groups_described_group *d = describe(h, c, 5, "g");
    assert_true(kp_str_eq(d->group_state, "CompletingRebalance"));
    assert_true(kp_str_eq(d->protocol_type, "consumer"));
    assert_true(kp_str_eq(d->protocol_data, ""));
    assert_int_equal(d->members.n, 2);
    assert_int_equal(d->members.v[0].member_metadata.len, 0);
    req *sb = cli_sync(h, b, NULL, 0);
    cli_sync(h, a, (assign[]){{a->member, ASSIGN_P0}, {b->member, ASSIGN_P12}}, 2);
    assert_true(h_answered(sb));
    d = describe(h, c, 5, "g");
    assert_int_equal(d->error_code, 0);
    assert_true(kp_str_eq(d->group_state, "Stable"));
    assert_true(kp_str_eq(d->protocol_data, "range"));
    assert_int_equal(d->members.n, 2);
    for (int i = 0; i < 2; i++) {
        kp_describe_groups_described_group_member *m = &d->members.v[i];
        bool is_a = kp_str_eq(m->member_id, a->member);
        assert_true(is_a || kp_str_eq(m->member_id, b->member));
        assert_true(kp_str_eq(m->client_id, is_a ? "consumer-a" : "consumer-b"));
        assert_true(kp_str_eq(m->client_host, "/127.0.0.1"));
        assert_true(h_bytes_eq(m->member_metadata, h_hex(h, SUB_V0)));
        assert_true(h_bytes_eq(m->member_assignment, h_hex(h, is_a ? ASSIGN_P0 : ASSIGN_P12)));
    }
    h_free(h);
}

/* every test frees its harness in the teardown too, so a failed assertion leaks nothing */
#define T(f) cmocka_unit_test_teardown(f, h_teardown)

int main(void) {
    const struct CMUnitTest tests[] = {
        T(test_join_v4_without_member_id_gets_member_id_required),
        T(test_join_with_required_member_id_is_parked_until_join_phase_completes),
        T(test_single_member_without_initial_delay_completes_at_once_as_leader),
        T(test_join_v3_adds_member_directly_without_member_id_required),
        T(test_second_member_triggers_rebalance_and_only_leader_gets_members),
        T(test_leader_members_carry_metadata_of_the_selected_protocol),
        T(test_protocol_vote_picks_common_protocol_most_members_prefer),
        T(test_protocol_vote_range_roundrobin_with_roundrobin_only_selects_roundrobin),
        T(test_join_without_common_protocol_is_inconsistent_group_protocol),
        T(test_join_session_timeout_out_of_range_is_invalid_session_timeout),
        T(test_join_empty_group_id_is_invalid_group_id),
        T(test_join_unknown_member_id_is_unknown_member_id),
        T(test_follower_rejoin_with_same_metadata_in_stable_gets_current_generation),
        T(test_group_max_size_reached),
        T(test_sync_follower_parked_until_leader_syncs_then_gets_assignment),
        T(test_sync_member_left_out_by_leader_gets_empty_assignment),
        T(test_sync_wrong_generation_is_illegal_generation),
        T(test_sync_v5_protocol_mismatch_is_inconsistent_group_protocol),
        T(test_leader_leaving_during_completing_rebalance_fails_parked_syncs),
        T(test_heartbeat_stable_then_session_expiry_removes_member_and_rebalances),
        T(test_member_not_syncing_within_rebalance_timeout_is_removed),
        T(test_parked_sync_past_session_timeout_does_not_stop_the_loop),
        T(test_parked_join_past_session_timeout_does_not_stop_the_loop),
        T(test_new_member_gone_while_parked_expires_at_its_session_timeout),
        T(test_follower_never_syncing_after_leader_synced_is_removed_at_rebalance_timeout),
        T(test_member_not_rejoining_within_rebalance_timeout_is_removed),
        T(test_pending_member_never_returning_is_dropped_after_session_timeout),
        T(test_heartbeat_with_unknown_instance_id_is_unknown_member),
        T(test_leave_group_v3_batch_reports_per_member_errors),
        T(test_leave_group_v0_reports_top_level_error),
        T(test_parked_join_of_removed_member_gets_unknown_member_with_empty_id),
        T(test_static_member_rejoin_while_stable_keeps_generation_and_fences_old_id),
        T(test_static_member_rejoin_with_new_metadata_same_protocol_does_not_rebalance),
        T(test_static_leader_rejoin_gets_old_leader_id_below_v9_and_skip_assignment_from_v9),
        T(test_static_member_removed_by_instance_id_with_leave_group),
        T(test_initial_rebalance_delay_holds_the_first_join_phase),
        T(test_initial_rebalance_delay_is_extended_while_members_arrive),
        T(test_offset_commit_simple_consumer_on_unknown_group_creates_empty_group),
        T(test_offset_commit_generation_on_unknown_group_is_illegal_generation),
        T(test_offset_commit_member_rules_by_group_state),
        T(test_offset_fetch_v1_unknown_partition_is_minus_one),
        T(test_offset_fetch_v8_fetches_several_groups),
        T(test_join_strict_rejects_kafkajs_221_metadata_with_invalid_request),
        T(test_join_lenient_accepts_kafkajs_221_metadata),
        T(test_sync_strict_refuses_malformed_assignment_and_lenient_forwards_it),
        T(test_delete_groups_refuses_non_empty_and_removes_empty_with_offsets),
        T(test_describe_unknown_group_is_dead_without_error),
        T(test_describe_group_shows_protocol_and_assignments_only_when_stable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
