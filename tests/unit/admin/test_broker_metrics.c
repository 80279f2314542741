/*
 * The metrics (broker/metrics.c, broker/admin/prometheus.c) in-process: the first error of an answer found in nested
 * response structs, requests counted by API, version and error (closed ones too, never-started
 * ones not), the latency histogram, topic bytes in and out, the fixed label sets of throttles
 * and SASL refusals, and GET /metrics' text as Prometheus reads it.
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

#include "admin/admin_route.h"
#include "admin/prometheus.h"
#include "metrics.h"
#include "broker_harness.h"
#include "kp_batch.h"
#include "topic/topic.h"

static harness *metrics_harness(void) {
    static const char *const overrides[] = {"data.dir", ":memory:", NULL};
    harness *h = h_new(overrides);
    metrics_init(&h->s.metrics); /* srv_init's part; srv_free (h_free) frees it */
    return h;
}

/* GET /metrics' body, NUL-terminated, in the harness arena. */
static const char *scrape(harness *h) {
    http_resp rs = {.status = 200};
    admin_call c = {.s = &h->s, .rs = &rs};
    metrics_get(&c);
    assert_int_equal(rs.status, 200);
    assert_string_equal(rs.content_type, "text/plain; version=0.0.4; charset=utf-8");
    assert_true(rs.quiet);
    char *p = kp_arena_alloc(&h->arena, rs.len + 1);
    memcpy(p, rs.body, rs.len);
    p[rs.len] = '\0';
    free(rs.body);
    assert_true(rs.len > 0 && p[rs.len - 1] == '\n');
    return p;
}

/* The value of the series whose line starts with `series ` (name and labels as written), -1 if absent. */
static double sample(const char *text, const char *series) {
    size_t n = strlen(series);
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        if (!strncmp(line, series, n) && line[n] == ' ') return strtod(line + n + 1, NULL);
        if (!end) break;
        line = end + 1;
    }
    return -1;
}

static req *produce(harness *h, conn *c, const char *topic_name, kp_bytes batch) {
    return h_produce(h, c, topic_name, 0, batch, 8);
}

static void test_first_error_of_nested_response(void **state) {
    (void)state;
    harness *h = metrics_harness();
    srv *s = &h->s;
    /* the second topic's second partition holds the only error */
    kp_produce_partition_produce_response p0[2] = {{.index = 0}, {.index = 1}};
    kp_produce_partition_produce_response p1[2] = {{.index = 0}, {.index = 1, .error_code = KERR_NOT_LEADER_OR_FOLLOWER}};
    kp_produce_topic_produce_response topics[2] = {{.name = kp_str_c("a")}, {.name = kp_str_c("b")}};
    topics[0].partition_responses.n = 2;
    topics[0].partition_responses.v = p0;
    topics[1].partition_responses.n = 2;
    topics[1].partition_responses.v = p1;
    kp_produce_response resp = {.throttle_time_ms = 5};
    resp.responses.n = 2;
    resp.responses.v = topics;
    const kp_msg *m = kp_msg_get(0);
    assert_int_equal(metrics_response_error(&s->metrics, m, 8, false, &resp), KERR_NOT_LEADER_OR_FOLLOWER);
    p1[1].error_code = 0;
    assert_int_equal(metrics_response_error(&s->metrics, m, 8, false, &resp), 0);
    /* a null array (n = -1) is walked as empty */
    resp.responses.n = -1;
    assert_int_equal(metrics_response_error(&s->metrics, m, 8, false, &resp), 0);
    /* a top-level error (JoinGroup) */
    kp_join_group_response jg = {.error_code = KERR_MEMBER_ID_REQUIRED};
    assert_int_equal(metrics_response_error(&s->metrics, kp_msg_get(11), 5, false, &jg), KERR_MEMBER_ID_REQUIRED);
    /* a tagged error field counts in flexible versions only (CreateTopics v5+: topic_config_error_code) */
    kp_create_topics_creatable_topic_result tr = {.name = kp_str_c("t"), .topic_config_error_code = KERR_INVALID_CONFIG};
    kp_create_topics_response ct = {0};
    ct.topics.n = 1;
    ct.topics.v = &tr;
    assert_int_equal(metrics_response_error(&s->metrics, kp_msg_get(19), 5, true, &ct), KERR_INVALID_CONFIG);
    assert_int_equal(metrics_response_error(&s->metrics, kp_msg_get(19), 5, false, &ct), 0); /* not flexible: not sent */
    assert_int_equal(metrics_response_error(&s->metrics, kp_msg_get(19), 4, false, &ct), 0); /* before v5: not there */
    h_free(h);
}

static void test_requests_counted_by_api_version_and_error(void **state) {
    (void)state;
    harness *h = metrics_harness();
    conn *c = h_conn(h, NULL);
    const char *why = NULL;
    topic *t = topic_create(&h->s, "metered", 1, 0, NULL, 0, &why);
    assert_non_null(t);

    req *ok = produce(h, c, "metered", h_batch(h, 3));
    req *bad = produce(h, c, "no-such-topic", h_batch(h, 1));
    assert_int_equal(ok->error_code, 0);
    assert_int_equal(bad->error_code, KERR_UNKNOWN_TOPIC_OR_PARTITION);
    /* the transport reports a request once, when it leaves, with its latency (net.c) */
    metrics_request_done(&h->s.metrics, 0, ok->hdr.api_version, ok->error_code, 700); /* 0.7 ms: the 0.001 bucket */
    metrics_request_done(&h->s.metrics, 0, bad->hdr.api_version, bad->error_code, 20); /* the first bucket */
    metrics_request_closed(&h->s.metrics, 0, ok->hdr.api_version, 5000000);
    /* a frame too short for a header: no API (key -1), whatever its zeroed header says */
    metrics_request_closed(&h->s.metrics, -1, 0, 0);

    const char *m = scrape(h);
    assert_true(sample(m, "mskmock_requests_total{api=\"Produce\",version=\"8\",error=\"NONE\"}") == 1);
    assert_true(sample(m, "mskmock_requests_total{api=\"Produce\",version=\"8\",error=\"UNKNOWN_TOPIC_OR_PARTITION\"}") == 1);
    assert_true(sample(m, "mskmock_requests_total{api=\"Produce\",version=\"8\",error=\"CONNECTION_CLOSED\"}") == 1);
    assert_true(sample(m, "mskmock_requests_total{api=\"Unknown\",version=\"unsupported\",error=\"CONNECTION_CLOSED\"}") == 1);
    assert_true(sample(m, "mskmock_requests_total{api=\"Produce\",version=\"0\",error=\"NONE\"}") < 0);
    /* cumulative buckets, +Inf equal to the count, the sum exact */
    assert_true(sample(m, "mskmock_request_duration_seconds_bucket{api=\"Produce\",le=\"0.0001\"}") == 1);
    assert_true(sample(m, "mskmock_request_duration_seconds_bucket{api=\"Produce\",le=\"0.0005\"}") == 1);
    assert_true(sample(m, "mskmock_request_duration_seconds_bucket{api=\"Produce\",le=\"0.001\"}") == 2);
    assert_true(sample(m, "mskmock_request_duration_seconds_bucket{api=\"Produce\",le=\"2.5\"}") == 2);
    assert_true(sample(m, "mskmock_request_duration_seconds_bucket{api=\"Produce\",le=\"5\"}") == 3);
    assert_true(sample(m, "mskmock_request_duration_seconds_bucket{api=\"Produce\",le=\"+Inf\"}") == 3);
    assert_true(sample(m, "mskmock_request_duration_seconds_count{api=\"Produce\"}") == 3);
    assert_non_null(strstr(m, "\nmskmock_request_duration_seconds_sum{api=\"Produce\"} 5.00072\n"));
    /* a version beyond what this build decodes has one row for all */
    metrics_request_done(&h->s.metrics, 18, 99, KERR_UNSUPPORTED_VERSION, 0);
    m = scrape(h);
    assert_true(sample(m, "mskmock_requests_total{api=\"ApiVersions\",version=\"unsupported\",error=\"UNSUPPORTED_VERSION\"}") == 1);

    /* bytes and records in; a fetch carries them out */
    assert_true(sample(m, "mskmock_topic_records_in_total{topic=\"metered\"}") == 3);
    assert_true(sample(m, "mskmock_topic_bytes_in_total{topic=\"metered\"}") == (double)t->bytes_in);
    assert_true(t->bytes_in > 0);
    kp_fetch_partition fp = {.partition = 0, .current_leader_epoch = -1, .fetch_offset = 0, .last_fetched_epoch = -1,
                             .log_start_offset = -1, .partition_max_bytes = 1 << 20};
    kp_fetch_topic ft = {.topic = kp_str_c("metered")};
    ft.partitions.n = 1;
    ft.partitions.v = &fp;
    kp_fetch_request q = {.replica_id = -1, .max_wait_ms = 0, .min_bytes = 1, .max_bytes = 1 << 20,
                          .session_epoch = -1, .rack_id = kp_str_c("")};
    q.topics.n = 1;
    q.topics.v = &ft;
    kp_fetch_response *fr = h_resp(h, h_send(h, c, "consumer", 1, 11, &q));
    assert_int_equal(fr->responses.v[0].partitions.v[0].records.len, (int32_t)t->bytes_in);
    m = scrape(h);
    assert_true(sample(m, "mskmock_topic_bytes_out_total{topic=\"metered\"}") == (double)t->bytes_in);
    assert_true(sample(m, "mskmock_topics") == 1);
    assert_true(sample(m, "mskmock_partitions") == 1);
    /* :memory: has no database file to measure */
    assert_null(strstr(m, "mskmock_storage_database_bytes "));
    assert_true(sample(m, "mskmock_storage_commit_duration_seconds_count") >= 1);
    h_free(h);
}

static void test_fixed_label_sets(void **state) {
    (void)state;
    harness *h = metrics_harness();
    metrics_throttle(&h->s.metrics, "max.request.rate=10", 250);
    metrics_throttle(&h->s.metrics, "quota.partition.ingress.bytes.per.second=5242880 on t-0", 1000);
    metrics_throttle(&h->s.metrics, "quota.cluster.ingress.bytes.per.second=209715200", 500);
    metrics_throttle(&h->s.metrics, "quota.partition.egress.bytes.per.second=10485760 on t-0", 40);
    metrics_throttle(&h->s.metrics, "max.partition.mutations.per.5.minutes", 1000);
    metrics_throttle(&h->s.metrics, "quota.cluster.egress.bytes.per.second=419430400", 0); /* no throttle: not counted */
    metrics_sasl(&h->s.metrics, MX_MECH_OAUTHBEARER, false, MX_SASL_OK);
    metrics_sasl(&h->s.metrics, MX_MECH_AWS_MSK_IAM, false, MX_SASL_SIGNATURE);
    metrics_sasl(&h->s.metrics, MX_MECH_AWS_MSK_IAM, false, MX_SASL_SIGNATURE);
    metrics_sasl(&h->s.metrics, MX_MECH_AWS_MSK_IAM, true, MX_SASL_PRINCIPAL_CHANGED);
    metrics_fault_fired(&h->s.metrics, 3);
    const char *m = scrape(h);
    assert_true(sample(m, "mskmock_throttle_seconds_total{quota=\"request_rate\"}") == 0.25);
    assert_true(sample(m, "mskmock_throttle_seconds_total{quota=\"ingress_bytes\"}") == 1.5);
    assert_true(sample(m, "mskmock_throttle_seconds_total{quota=\"egress_bytes\"}") == 0.04);
    assert_true(sample(m, "mskmock_throttles_total{quota=\"partition_mutations\"}") == 1);
    assert_true(sample(m, "mskmock_throttles_total{quota=\"egress_bytes\"}") == 1);
    assert_true(sample(m, "mskmock_throttles_total{quota=\"ingress_bytes\"}") == 2); /* partition and cluster */
    assert_null(strstr(m, "quota=\"other\""));
    assert_true(sample(m, "mskmock_sasl_authentications_total{mechanism=\"OAUTHBEARER\",outcome=\"success\"}") == 1);
    assert_true(sample(m, "mskmock_sasl_authentications_total{mechanism=\"AWS_MSK_IAM\",outcome=\"failure\","
                          "reason=\"signature\"}") == 2);
    assert_true(sample(m, "mskmock_sasl_reauthentications_total{mechanism=\"AWS_MSK_IAM\",outcome=\"failure\"}") == 1);
    assert_true(sample(m, "mskmock_fault_rules_fired_total{action=\"close\"}") == 1);
    assert_true(sample(m, "mskmock_groups{state=\"Stable\"}") == 0);
    /* every family is announced once, before its samples */
    assert_non_null(strstr(m, "# HELP mskmock_requests_total "));
    assert_non_null(strstr(m, "# TYPE mskmock_requests_total counter\n"));
    assert_non_null(strstr(m, "# TYPE mskmock_request_duration_seconds histogram\n"));
    h_free(h);
}

/* Regression: principal_changed was listed as a reason but only counted in a family without reasons,
   so no scrape could ever show it. */
static void test_principal_changed_is_counted(void **state) {
    (void)state;
    harness *h = metrics_harness();
    metrics_sasl(&h->s.metrics, MX_MECH_OAUTHBEARER, true, MX_SASL_PRINCIPAL_CHANGED);
    metrics_sasl(&h->s.metrics, MX_MECH_OAUTHBEARER, true, MX_SASL_PRINCIPAL_CHANGED);
    metrics_sasl(&h->s.metrics, MX_MECH_OAUTHBEARER, true, MX_SASL_OK);
    const char *m = scrape(h);
    assert_true(sample(m, "mskmock_sasl_reauthentication_failures_total{mechanism=\"OAUTHBEARER\","
                          "reason=\"principal_changed\"}") == 2);
    assert_true(sample(m, "mskmock_sasl_reauthentications_total{mechanism=\"OAUTHBEARER\",outcome=\"failure\"}") == 2);
    assert_true(sample(m, "mskmock_sasl_reauthentications_total{mechanism=\"OAUTHBEARER\",outcome=\"success\"}") == 1);
    /* never on a first authentication, and no zero series for reasons that did not happen */
    assert_null(strstr(m, "mskmock_sasl_authentications_total{mechanism=\"OAUTHBEARER\",outcome=\"failure\""));
    assert_null(strstr(m, "reason=\"signature\""));
    h_free(h);
}

#define T(f) cmocka_unit_test_teardown(f, h_teardown)

int main(void) {
    const struct CMUnitTest tests[] = {
        T(test_first_error_of_nested_response),
        T(test_requests_counted_by_api_version_and_error),
        T(test_fixed_label_sets),
        T(test_principal_changed_is_counted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
