/*
 * kafka.version (broker/api/kafka_versions_table.c): the table is sane (every range ordered, a
 * later release never serving less than an earlier one but for KIP-896's removals in 4.0, every
 * served API listed), ApiVersions answers a release's ranges narrowed to what mskmock serves,
 * api.versions.min/max still win, a version a release removed is refused, and the features never
 * claim what mskmock does not implement.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "broker_harness.h"
#include "api/api.h"

static void test_every_row_is_sane(void **state) {
    (void)state;
    for (int16_t key = 0; key < CFG_API_KEYS; key++) {
        int16_t plo = 0, phi = -1;
        for (int v = KAFKA_3_6; v <= CFG_KAFKA_RELEASES; v++) {
            int16_t lo, hi;
            if (!api_kafka_range(v, key, &lo, &hi)) break;
            const char *name = cfg_kafka_version_name(v);
            if (hi >= lo && lo < 0) fail_msg("key %d in %s: minimum %d", key, name, lo);
            /* once a release serves an API, the later ones do, up to at least the same version */
            if (phi >= plo && hi < phi) fail_msg("key %d: %s serves up to v%d, below the release before (v%d)", key, name, hi, phi);
            /* a minimum rises only with KIP-896, in 4.0 */
            if (phi >= plo && lo > plo && v != KAFKA_4_0) fail_msg("key %d: %s raises the minimum to v%d", key, name, lo);
            plo = lo, phi = hi;
        }
    }
}

static void test_every_served_api_has_a_row_in_every_release(void **state) {
    (void)state;
    for (int16_t key = 0; key < KP_API_LIMIT; key++) {
        int16_t lo, hi;
        if (!api_lookup(key)) continue;
        for (int v = KAFKA_3_6; v <= CFG_KAFKA_RELEASES; v++)
            if (!api_kafka_range(v, key, &lo, &hi)) fail_msg("key %d has no row for %s", key, cfg_kafka_version_name(v));
    }
    int16_t lo, hi;
    assert_false(api_kafka_range(KAFKA_VERSION_NONE, KP_API_PRODUCE, &lo, &hi));
}

static kp_api_versions_response *api_versions(harness *h, conn *c, int16_t ver) {
    kp_api_versions_request q = {.client_software_name = kp_str_c("t"), .client_software_version = kp_str_c("1")};
    return h_resp(h, h_send(h, c, "probe", KP_API_API_VERSIONS, ver, &q));
}

/* The range ApiVersions v3 lists for key; false when it is left out. */
static bool listed(harness *h, conn *c, int16_t key, int16_t *lo, int16_t *hi) {
    kp_api_versions_response *resp = api_versions(h, c, 3);
    for (int32_t i = 0; i < resp->api_keys.n; i++)
        if (resp->api_keys.v[i].api_key == key) {
            *lo = resp->api_keys.v[i].min_version;
            *hi = resp->api_keys.v[i].max_version;
            return true;
        }
    return false;
}

static void expect(harness *h, conn *c, int16_t key, int16_t lo, int16_t hi) {
    int16_t l = -9, x = -9;
    if (!listed(h, c, key, &l, &x) || l != lo || x != hi)
        fail_msg("key %d: listed %d-%d, expected %d-%d (kafka.version %s)", key, l, x, lo, hi,
                 cfg_kafka_version_name(h->cfg.kafka_version));
}

static void test_kafka_3_6_answers_its_ranges(void **state) {
    (void)state;
    harness *h = h_new((const char *const[]){"profile", "provisioned", "kafka.version", "3.6", NULL});
    conn *c = h_conn(h, NULL);
    expect(h, c, KP_API_PRODUCE, 0, 9);
    expect(h, c, KP_API_FETCH, 0, 15);
    expect(h, c, KP_API_LIST_OFFSETS, 0, 8);
    expect(h, c, KP_API_METADATA, 0, 12);
    expect(h, c, KP_API_OFFSET_COMMIT, 0, 8); /* v9 was latestVersionUnstable in 3.6.0 */
    expect(h, c, KP_API_API_VERSIONS, 0, 3);
    expect(h, c, KP_API_DESCRIBE_CLUSTER, 0, 0);
    h_free(h);
}

static void test_kafka_4_0_answers_its_ranges_within_what_is_served(void **state) {
    (void)state;
    harness *h = h_new((const char *const[]){"profile", "kafka", "kafka.version", "4.0", NULL});
    conn *c = h_conn(h, NULL);
    const api_handler *produce = api_lookup(KP_API_PRODUCE), *metadata = api_lookup(KP_API_METADATA);
    /* Produce 12 and Metadata 13 only once mskmock serves them; Produce listed from 0 (KAFKA-18659) */
    expect(h, c, KP_API_PRODUCE, 0, produce->vmax < 12 ? produce->vmax : 12);
    expect(h, c, KP_API_METADATA, 0, metadata->vmax < 13 ? metadata->vmax : 13);
    expect(h, c, KP_API_FETCH, 4, 17);
    expect(h, c, KP_API_LIST_OFFSETS, 1, 10);
    expect(h, c, KP_API_OFFSET_COMMIT, 2, 9);
    expect(h, c, KP_API_JOIN_GROUP, 2, 9);
    expect(h, c, KP_API_CREATE_TOPICS, 2, 7);
    expect(h, c, KP_API_DESCRIBE_CLUSTER, 0, 1); /* Kafka's 2, mskmock's 1 */
    h_free(h);
}

static void test_explicit_api_versions_keys_win(void **state) {
    (void)state;
    harness *h = h_new((const char *const[]){"profile", "kafka", "kafka.version", "4.0", "api.versions.min", "Fetch=0",
                                             "api.versions.max", "Produce=5,Metadata=4", NULL});
    conn *c = h_conn(h, NULL);
    expect(h, c, KP_API_FETCH, 0, 17);
    expect(h, c, KP_API_PRODUCE, 0, 5);
    expect(h, c, KP_API_METADATA, 0, 4);
    expect(h, c, KP_API_LIST_OFFSETS, 1, 10); /* the others keep 4.0's */
    h_free(h);
    h = h_new((const char *const[]){"profile", "provisioned", "kafka.version", "3.6", "api.versions.max", "Fetch=17",
                                    "api.versions.min", "Metadata=6", NULL});
    c = h_conn(h, NULL);
    expect(h, c, KP_API_FETCH, 0, 17);
    expect(h, c, KP_API_METADATA, 6, 12);
    expect(h, c, KP_API_PRODUCE, 0, 9);
    h_free(h);
}

/* Whether the pipeline keeps the connection for this request (h_send fails the test when it does not). */
static bool kept(harness *h, conn *c, int16_t key, int16_t ver, const void *body) {
    const kp_msg *m = kp_msg_get(key);
    kp_writer w;
    kp_writer_init(&w, 256);
    kp_wr_i16(&w, key);
    kp_wr_i16(&w, ver);
    kp_wr_i32(&w, ++h->next_corr);
    kp_wr_i16(&w, 1);
    kp_wr_raw(&w, "p", 1);
    if (kp_is_flex(m, ver)) kp_wr_uvarint(&w, 0);
    kp_encode(&w, m->req, ver, kp_is_flex(m, ver), body);
    req *r = calloc(1, sizeof *r);
    assert_non_null(r);
    r->c = c;
    r->frame = w.buf;
    r->len = w.len;
    r->state = REQ_QUEUED;
    h_track(h, r);
    return pipeline_dispatch(&h->s, r);
}

/* Produce v2: answered by 3.6; 4.0 closes the connection (KIP-896) though it lists v0 (KAFKA-18659). */
static void test_produce_v2_is_removed_in_4_0(void **state) {
    (void)state;
    kp_produce_request q = {.transactional_id = KP_STR_NULL, .acks = 1, .timeout_ms = 1000};
    harness *h = h_new((const char *const[]){"profile", "kafka", "kafka.version", "3.6", NULL});
    assert_true(kept(h, h_conn(h, NULL), KP_API_PRODUCE, 2, &q));
    h_free(h);
    h = h_new((const char *const[]){"profile", "kafka", "kafka.version", "4.0", NULL});
    assert_false(kept(h, h_conn(h, NULL), KP_API_PRODUCE, 2, &q));
    assert_true(kept(h, h_conn(h, NULL), KP_API_PRODUCE, 3, &q));
    assert_false(kept(h, h_conn(h, NULL), KP_API_FETCH, 3, &(kp_fetch_request){.replica_id = -1}));
    expect(h, h_conn(h, NULL), KP_API_PRODUCE, 0, api_lookup(KP_API_PRODUCE)->vmax);
    h_free(h);
}

typedef struct feat {
    int16_t lo, hi; /* supported; hi -1: not listed */
    int16_t fin;    /* finalized; -1: not listed */
} feat;

static feat feature(const kp_api_versions_response *resp, const char *name) {
    feat f = {0, -1, -1};
    for (int32_t i = 0; i < resp->supported_features.n; i++)
        if (kp_str_eq(resp->supported_features.v[i].name, name))
            f.lo = resp->supported_features.v[i].min_version, f.hi = resp->supported_features.v[i].max_version;
    for (int32_t i = 0; i < resp->finalized_features.n; i++)
        if (kp_str_eq(resp->finalized_features.v[i].name, name)) {
            f.fin = resp->finalized_features.v[i].max_version_level;
            assert_int_equal(resp->finalized_features.v[i].min_version_level, f.fin);
        }
    return f;
}

static void test_features_follow_the_release_and_what_is_implemented(void **state) {
    (void)state;
    harness *h = h_new((const char *const[]){"profile", "kafka", "kafka.version", "4.0", NULL});
    conn *c = h_conn(h, NULL);
    kp_api_versions_response *v4 = api_versions(h, c, 4);
    feat mv = feature(v4, "metadata.version"), kraft = feature(v4, "kraft.version");
    feat tv = feature(v4, "transaction.version"), gv = feature(v4, "group.version");
    assert_true(mv.lo == 7 && mv.hi == 25 && mv.fin == 25);
    assert_true(kraft.lo == 0 && kraft.hi == 1 && kraft.fin == -1);
    /* transactions V2 (KIP-890 part 2): Kafka 4.0's 0-2, finalized 2 (transaction.version caps it, below) */
    assert_true(tv.lo == 0 && tv.hi == 2 && tv.fin == 2);
    /* the Java producer takes finalized features only from an epoch above -1 */
    assert_true(v4->finalized_features_epoch >= 0);
    /* the consumer protocol only while ConsumerGroupHeartbeat is served */
    if (api_lookup(68)) assert_true(gv.lo == 0 && gv.hi == 1 && gv.fin == 1);
    else assert_true(gv.hi == -1 && gv.fin == -1);
    /* v3: no supported feature whose minimum is 0 (KAFKA-17492), the finalized ones all the same */
    kp_api_versions_response *v3 = api_versions(h, c, 3);
    assert_int_equal(feature(v3, "kraft.version").hi, -1);
    assert_int_equal(feature(v3, "transaction.version").hi, -1);
    assert_int_equal(feature(v3, "transaction.version").fin, 2);
    assert_int_equal(feature(v3, "metadata.version").hi, 25);
    h_free(h);

    /* transaction.version=1: the release's level capped, and V1 kept (Produce, EndTxn, TxnOffsetCommit) */
    h = h_new((const char *const[]){"profile", "kafka", "kafka.version", "4.0", "transaction.version", "1", NULL});
    c = h_conn(h, NULL);
    tv = feature(api_versions(h, c, 4), "transaction.version");
    assert_true(tv.lo == 0 && tv.hi == 1 && tv.fin == 1);
    h_free(h);

    h = h_new((const char *const[]){"profile", "provisioned", "kafka.version", "3.6", NULL});
    c = h_conn(h, NULL);
    v4 = api_versions(h, c, 3);
    assert_int_equal(v4->supported_features.n, 1);
    mv = feature(v4, "metadata.version");
    assert_true(mv.lo == 1 && mv.hi == 14 && mv.fin == 14);
    assert_int_equal(v4->finalized_features.n, 1);
    h_free(h);

    /* no release: no features, but transactions V2 where transaction.version asks for it (2, provisioned's default) */
    h = h_new((const char *const[]){"profile", "provisioned", "kafka.version", "none", "transaction.version", "1", NULL});
    c = h_conn(h, NULL);
    v4 = api_versions(h, c, 4);
    assert_int_equal(v4->supported_features.n, 0);
    assert_int_equal(v4->finalized_features.n, 0);
    h_free(h);
    h = h_new((const char *const[]){"profile", "provisioned", "kafka.version", "none", NULL});
    c = h_conn(h, NULL);
    v4 = api_versions(h, c, 4);
    assert_int_equal(v4->finalized_features.n, 1);
    tv = feature(v4, "transaction.version");
    assert_true(tv.lo == 0 && tv.hi == 2 && tv.fin == 2);
    h_free(h);
}

static void test_defaults_latest_and_serverless(void **state) {
    (void)state;
    config c = {0};
    char err[256];
    cfg_defaults(&c, PROFILE_PROVISIONED);
    assert_int_equal(cfg_finish(&c, err, sizeof err), 0);
    assert_int_equal(c.kafka_version, KAFKA_3_8); /* MSK's recommended version */
    cfg_defaults(&c, PROFILE_KAFKA);
    assert_int_equal(cfg_finish(&c, err, sizeof err), 0);
    assert_int_equal(c.kafka_version, CFG_KAFKA_RELEASES);
    assert_string_equal(cfg_kafka_version_name(c.kafka_version), "4.2");
    cfg_defaults(&c, PROFILE_SERVERLESS);
    assert_int_equal(cfg_finish(&c, err, sizeof err), 0);
    assert_int_equal(c.kafka_version, KAFKA_VERSION_NONE);
    assert_int_equal(cfg_set(&c, "kafka.version", "4.0", err, sizeof err), 0);
    assert_int_equal(cfg_finish(&c, err, sizeof err), -1);
    assert_non_null(strstr(err, "kafka.version: the serverless profile has none"));
    assert_int_equal(cfg_set(&c, "kafka.version", "3.5", err, sizeof err), -1);
    cfg_free(&c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_row_is_sane),
        cmocka_unit_test(test_every_served_api_has_a_row_in_every_release),
        cmocka_unit_test_teardown(test_kafka_3_6_answers_its_ranges, h_teardown),
        cmocka_unit_test_teardown(test_kafka_4_0_answers_its_ranges_within_what_is_served, h_teardown),
        cmocka_unit_test_teardown(test_explicit_api_versions_keys_win, h_teardown),
        cmocka_unit_test_teardown(test_produce_v2_is_removed_in_4_0, h_teardown),
        cmocka_unit_test_teardown(test_features_follow_the_release_and_what_is_implemented, h_teardown),
        cmocka_unit_test(test_defaults_latest_and_serverless),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
