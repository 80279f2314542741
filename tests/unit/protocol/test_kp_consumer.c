/*
 * The embedded consumer protocol: ConsumerProtocolSubscription and
 * ConsumerProtocolAssignment, STRICT (MSK Serverless) and LENIENT (Apache).
 *
 * Every vector is built here field by field from the layout of Apache Kafka's
 * ConsumerProtocolSubscription.json and ConsumerProtocolAssignment.json and
 * checked against hex written down separately (the kafkajs 2.2.0 bytes are the
 * ones an MSK engineer posted in kafkajs #1449; the others are what each
 * client's encoder writes for one topic), so a wrong hex and a wrong decoder
 * cannot agree by accident. Decoders get an exact-size heap copy of the bytes
 * so that a sanitizer build catches any read past the end.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kp.h"
#include "kp_consumer.h"

#define SUB "ConsumerProtocolSubscription"
#define ASG "ConsumerProtocolAssignment"

/* ---- building bytes from the layout ---- */

typedef struct buf {
    uint8_t b[8192];
    size_t n;
} buf;

static void b_i16(buf *b, int16_t v) {
    b->b[b->n++] = (uint8_t)((uint16_t)v >> 8);
    b->b[b->n++] = (uint8_t)v;
}
static void b_i32(buf *b, int32_t v) {
    uint32_t u = (uint32_t)v;
    for (int s = 24; s >= 0; s -= 8) b->b[b->n++] = (uint8_t)(u >> s);
}
static void b_raw(buf *b, const void *p, size_t n) {
    memcpy(b->b + b->n, p, n);
    b->n += n;
}
/* string: int16 length (-1 null) */
static void b_str(buf *b, const char *s) {
    if (!s) {
        b_i16(b, -1);
        return;
    }
    b_i16(b, (int16_t)strlen(s));
    b_raw(b, s, strlen(s));
}
/* bytes: int32 length (-1 null) */
static void b_bytes(buf *b, const void *p, int32_t n) {
    b_i32(b, n);
    if (n > 0 && p) b_raw(b, p, (size_t)n);
}
/* {topic, partitions[]} */
static void b_tp(buf *b, const char *topic, const int32_t *parts, int32_t n) {
    b_str(b, topic);
    b_i32(b, n);
    for (int32_t i = 0; i < n; i++) b_i32(b, parts[i]);
}

static size_t unhex(const char *h, uint8_t *out) {
    size_t n = 0;
    for (; h[0] && h[1]; h += 2) {
        unsigned v;
        assert_int_equal(sscanf(h, "%2x", &v), 1);
        out[n++] = (uint8_t)v;
    }
    return n;
}

static void assert_hex(const buf *b, const char *hex) {
    uint8_t want[512];
    size_t n = unhex(hex, want);
    if (n != b->n || memcmp(want, b->b, n) != 0) {
        print_error("built %zu bytes, doc has %zu\n", b->n, n);
        for (size_t i = 0; i < b->n || i < n; i++)
            print_error("  [%2zu] built %02x doc %02x%s\n", i, i < b->n ? b->b[i] : 0, i < n ? want[i] : 0,
                        i < b->n && i < n && b->b[i] == want[i] ? "" : "  <--");
        fail();
    }
}

/* ---- decoding from exact-size copies ---- */

typedef struct run {
    kp_arena arena;
    uint8_t *copy;
    kp_consumer_error err;
    char msg[256];
} run;

static run R;

static int teardown(void **state) {
    (void)state;
    kp_arena_free(&R.arena);
    free(R.copy);
    memset(&R, 0, sizeof R);
    return 0;
}

static const uint8_t *copy_of(const uint8_t *p, size_t n) {
    free(R.copy);
    R.copy = malloc(n ? n : 1);
    assert_non_null(R.copy);
    if (n) memcpy(R.copy, p, n);
    return R.copy;
}

static bool sub_dec(const uint8_t *p, size_t n, kp_consumer_mode m, kp_subscription *s) {
    memset(&R.err, 0x5a, sizeof R.err); /* must be overwritten */
    return kp_subscription_decode(copy_of(p, n), n, m, s, &R.arena, &R.err);
}
static bool asg_dec(const uint8_t *p, size_t n, kp_consumer_mode m, kp_assignment *s) {
    memset(&R.err, 0x5a, sizeof R.err);
    return kp_assignment_decode(copy_of(p, n), n, m, s, &R.arena, &R.err);
}

static const char *fmt(const char *what, int16_t v, size_t len) {
    kp_consumer_error_format(&R.err, what, v, len, R.msg, sizeof R.msg);
    return R.msg;
}

static void assert_str(kp_str s, const char *want) {
    if (!want) {
        assert_int_equal(s.len, -1);
        return;
    }
    assert_int_equal(s.len, (int)strlen(want));
    assert_memory_equal(s.p, want, strlen(want));
}

static void assert_no_err(void) {
    assert_null(R.err.field);
    assert_null(R.err.reason);
}

static void assert_err(const char *field, int32_t index, const char *elem, size_t offset, const char *reason) {
    assert_non_null(R.err.field);
    assert_string_equal(R.err.field, field);
    assert_int_equal(R.err.index, index);
    if (elem) {
        assert_non_null(R.err.elem);
        assert_string_equal(R.err.elem, elem);
    } else {
        assert_null(R.err.elem);
    }
    assert_int_equal(R.err.offset, offset);
    assert_string_equal(R.err.reason, reason);
}

static void assert_tp(const kp_topic_partitions *tp, const char *topic, const int32_t *parts, int32_t n) {
    assert_str(tp->topic, topic);
    assert_int_equal(tp->n, n);
    for (int32_t i = 0; i < n; i++) assert_int_equal(tp->partitions[i], parts[i]);
}

static const int32_t P01[] = {0, 1};
static const int32_t P012[] = {0, 1, 2};
static const uint8_t GEN_M1[] = {0xff, 0xff, 0xff, 0xff}; /* int32 -1 */
static const uint8_t GEN_5[] = {0, 0, 0, 5};

/* ---- the vectors: subscriptions to [testtopic] as each client writes them, and assignments ---- */

/* v0 prefix: version, topics [testtopic], user_data */
static void b_prefix(buf *b, int16_t version, const void *ud, int32_t udlen) {
    b_i16(b, version);
    b_i32(b, 1);
    b_str(b, "testtopic");
    b_bytes(b, ud, udlen);
}

/* kafkajs 2.2.0/2.2.1: declares v1, v0 body, empty user data */
static buf v_kafkajs_220(void) {
    buf b = {.n = 0};
    b_prefix(&b, 1, NULL, 0);
    assert_hex(&b, "000100000001000974657374746f70696300000000");
    return b;
}
/* kafkajs >= 2.2.2, kafka-python 2.x, aiokafka */
static buf v_v0_empty_ud(void) {
    buf b = {.n = 0};
    b_prefix(&b, 0, NULL, 0);
    assert_hex(&b, "000000000001000974657374746f70696300000000");
    return b;
}
/* sarama <= 1.60.0 */
static buf v_sarama_v0(void) {
    buf b = {.n = 0};
    b_prefix(&b, 0, NULL, -1);
    assert_hex(&b, "000000000001000974657374746f706963ffffffff");
    return b;
}
/* v3 tail with nothing owned */
static void b_v3_tail_empty(buf *b) {
    b_i32(b, 0);  /* owned_partitions: empty */
    b_i32(b, -1); /* generation_id */
    b_str(b, NULL);
}
/* Java >= 3.4 range, franz-go range/roundrobin */
static buf v_java_range_v3(void) {
    buf b = {.n = 0};
    b_prefix(&b, 3, NULL, -1);
    b_v3_tail_empty(&b);
    assert_hex(&b, "000300000001000974657374746f706963ffffffff00000000ffffffffffff");
    return b;
}
/* Java >= 3.4 cooperative-sticky, first join: user data = int32 generation -1 */
static buf v_java_coop_v3(void) {
    buf b = {.n = 0};
    b_prefix(&b, 3, GEN_M1, 4);
    b_v3_tail_empty(&b);
    assert_hex(&b, "000300000001000974657374746f70696300000004ffffffff00000000ffffffffffff");
    return b;
}
/* librdkafka >= 2.2 range */
static buf v_librdkafka_v3(void) {
    buf b = {.n = 0};
    b_prefix(&b, 3, NULL, 0);
    b_v3_tail_empty(&b);
    assert_hex(&b, "000300000001000974657374746f7069630000000000000000ffffffffffff");
    return b;
}
/* Java cooperative-sticky rejoin: gen 5, owns testtopic[0,1], rack use1-az1 */
static buf v_coop_rejoin(void) {
    buf b = {.n = 0};
    b_prefix(&b, 3, GEN_5, 4);
    b_i32(&b, 1);
    b_tp(&b, "testtopic", P01, 2);
    b_i32(&b, 5);
    b_str(&b, "use1-az1");
    assert_int_equal(b.n, 66);
    assert_hex(&b, "000300000001000974657374746f706963000000040000000500000001000974657374746f7069630000000200000000"
                   "00000001000000050008757365312d617a31");
    return b;
}
static buf v_assignment(int16_t version, const void *ud, int32_t udlen, const char *hex) {
    buf b = {.n = 0};
    b_i16(&b, version);
    b_i32(&b, 1);
    b_tp(&b, "testtopic", P012, 3);
    b_bytes(&b, ud, udlen);
    assert_hex(&b, hex);
    return b;
}

/* ---- kafkajs #1449 ---- */

static void test_kafkajs_220_strict_fails_at_owned_partitions(void **state) {
    (void)state;
    buf b = v_kafkajs_220();
    assert_int_equal(b.n, 21);
    kp_subscription s;
    assert_false(sub_dec(b.b, b.n, KP_CONSUMER_STRICT, &s));
    assert_err("owned_partitions", -1, NULL, 21, "truncated");
    assert_int_equal(s.version, 1);
    assert_string_equal(fmt(SUB, s.version, b.n),
                        "ConsumerProtocolSubscription declares v1 but ends at byte 21 before owned_partitions");
}

static void test_kafkajs_220_lenient_accepts(void **state) {
    (void)state;
    buf b = v_kafkajs_220();
    kp_subscription s;
    assert_true(sub_dec(b.b, b.n, KP_CONSUMER_LENIENT, &s));
    assert_int_equal(s.version, 1);
    assert_int_equal(s.decoded_version, 0);
    assert_int_equal(s.ntopics, 1);
    assert_str(s.topics[0], "testtopic");
    assert_int_equal(s.user_data.len, 0);
    assert_int_equal(s.nowned, -1); /* v1 has it, the bytes do not */
    assert_null(s.owned);
    assert_int_equal(s.generation_id, -1);
    assert_str(s.rack_id, NULL);
    /* what was left out is still reported, for a debug line */
    assert_err("owned_partitions", -1, NULL, 21, "truncated");
}

static void test_kafkajs_bytes_declared_v0_accepted(void **state) {
    (void)state;
    buf b = v_kafkajs_220();
    b.b[1] = 0; /* version 00 00: kafkajs >= 2.2.2 */
    buf want = v_v0_empty_ud();
    assert_memory_equal(b.b, want.b, want.n);
    for (int m = KP_CONSUMER_STRICT; m <= KP_CONSUMER_LENIENT; m++) {
        kp_subscription s;
        assert_true(sub_dec(b.b, b.n, (kp_consumer_mode)m, &s));
        assert_no_err();
        assert_int_equal(s.version, 0);
        assert_int_equal(s.decoded_version, 0);
        assert_int_equal(s.ntopics, 1);
        assert_str(s.topics[0], "testtopic");
        assert_non_null(s.user_data.p);
        assert_int_equal(s.user_data.len, 0);
        assert_int_equal(s.nowned, 0);
        assert_null(s.owned);
        assert_int_equal(s.generation_id, -1);
        assert_str(s.rack_id, NULL);
    }
}

/* ---- what the clients send ---- */

static void test_sarama_v0_null_user_data(void **state) {
    (void)state;
    buf b = v_sarama_v0();
    for (int m = KP_CONSUMER_STRICT; m <= KP_CONSUMER_LENIENT; m++) {
        kp_subscription s;
        assert_true(sub_dec(b.b, b.n, (kp_consumer_mode)m, &s));
        assert_no_err();
        assert_int_equal(s.version, 0);
        assert_int_equal(s.ntopics, 1);
        assert_str(s.topics[0], "testtopic");
        assert_str(s.user_data, NULL);
        assert_int_equal(s.nowned, 0);
    }
}

static void check_v3_first_join(buf b, int32_t udlen) {
    for (int m = KP_CONSUMER_STRICT; m <= KP_CONSUMER_LENIENT; m++) {
        kp_subscription s;
        assert_true(sub_dec(b.b, b.n, (kp_consumer_mode)m, &s));
        assert_no_err();
        assert_int_equal(s.version, 3);
        assert_int_equal(s.decoded_version, 3);
        assert_int_equal(s.ntopics, 1);
        assert_str(s.topics[0], "testtopic");
        assert_int_equal(s.user_data.len, udlen);
        assert_int_equal(s.nowned, 0);
        assert_int_equal(s.generation_id, -1);
        assert_str(s.rack_id, NULL);
    }
}

static void test_java_range_v3(void **state) {
    (void)state;
    check_v3_first_join(v_java_range_v3(), -1);
}

static void test_java_cooperative_sticky_v3(void **state) {
    (void)state;
    buf b = v_java_coop_v3();
    check_v3_first_join(b, 4);
    kp_subscription s;
    assert_true(sub_dec(b.b, b.n, KP_CONSUMER_STRICT, &s));
    assert_memory_equal(s.user_data.p, GEN_M1, 4);
}

static void test_librdkafka_range_v3(void **state) {
    (void)state;
    check_v3_first_join(v_librdkafka_v3(), 0);
}

static void test_cooperative_sticky_rejoin(void **state) {
    (void)state;
    buf b = v_coop_rejoin();
    for (int m = KP_CONSUMER_STRICT; m <= KP_CONSUMER_LENIENT; m++) {
        kp_subscription s;
        assert_true(sub_dec(b.b, b.n, (kp_consumer_mode)m, &s));
        assert_no_err();
        assert_int_equal(s.version, 3);
        assert_int_equal(s.decoded_version, 3);
        assert_int_equal(s.ntopics, 1);
        assert_str(s.topics[0], "testtopic");
        assert_int_equal(s.user_data.len, 4);
        assert_memory_equal(s.user_data.p, GEN_5, 4);
        assert_int_equal(s.nowned, 1);
        assert_tp(&s.owned[0], "testtopic", P01, 2);
        assert_int_equal(s.generation_id, 5);
        assert_str(s.rack_id, "use1-az1");
        /* strings point into the input */
        assert_ptr_equal(s.rack_id.p, (const char *)R.copy + 58);
        assert_ptr_equal(s.topics[0].p, (const char *)R.copy + 8);
    }
}

static void test_assignment_v0_empty_user_data(void **state) {
    (void)state;
    buf b = v_assignment(0, NULL, 0, "000000000001000974657374746f7069630000000300000000000000010000000200000000");
    assert_int_equal(b.n, 37);
    for (int m = KP_CONSUMER_STRICT; m <= KP_CONSUMER_LENIENT; m++) {
        kp_assignment a;
        assert_true(asg_dec(b.b, b.n, (kp_consumer_mode)m, &a));
        assert_no_err();
        assert_int_equal(a.version, 0);
        assert_int_equal(a.decoded_version, 0);
        assert_int_equal(a.nassigned, 1);
        assert_tp(&a.assigned[0], "testtopic", P012, 3);
        assert_int_equal(a.user_data.len, 0);
    }
}

static void test_assignment_v3_null_user_data(void **state) {
    (void)state;
    buf b = v_assignment(3, NULL, -1, "000300000001000974657374746f70696300000003000000000000000100000002ffffffff");
    assert_int_equal(b.n, 37);
    for (int m = KP_CONSUMER_STRICT; m <= KP_CONSUMER_LENIENT; m++) {
        kp_assignment a;
        assert_true(asg_dec(b.b, b.n, (kp_consumer_mode)m, &a));
        assert_no_err();
        assert_int_equal(a.version, 3);
        assert_int_equal(a.decoded_version, 3);
        assert_int_equal(a.nassigned, 1);
        assert_tp(&a.assigned[0], "testtopic", P012, 3);
        assert_str(a.user_data, NULL);
    }
}

/* ---- forward compatibility ---- */

static void test_v7_decodes_as_v3_ignoring_trailing_bytes(void **state) {
    (void)state;
    buf b = v_coop_rejoin();
    b.b[1] = 7;
    static const uint8_t junk[] = {0xde, 0xad, 0xbe, 0xef, 0xff, 0xff, 0x80}; /* a v4 field we cannot know */
    b_raw(&b, junk, sizeof junk);
    for (int m = KP_CONSUMER_STRICT; m <= KP_CONSUMER_LENIENT; m++) {
        kp_subscription s;
        assert_true(sub_dec(b.b, b.n, (kp_consumer_mode)m, &s));
        assert_no_err();
        assert_int_equal(s.version, 7);
        assert_int_equal(s.decoded_version, 3);
        assert_int_equal(s.ntopics, 1);
        assert_str(s.topics[0], "testtopic");
        assert_int_equal(s.nowned, 1);
        assert_tp(&s.owned[0], "testtopic", P01, 2);
        assert_int_equal(s.generation_id, 5);
        assert_str(s.rack_id, "use1-az1");
    }
    /* an assignment v7 with trailing bytes, too */
    buf a = v_assignment(3, NULL, -1, "000300000001000974657374746f70696300000003000000000000000100000002ffffffff");
    a.b[1] = 7;
    b_raw(&a, junk, sizeof junk);
    for (int m = KP_CONSUMER_STRICT; m <= KP_CONSUMER_LENIENT; m++) {
        kp_assignment as;
        assert_true(asg_dec(a.b, a.n, (kp_consumer_mode)m, &as));
        assert_int_equal(as.version, 7);
        assert_int_equal(as.decoded_version, 3);
        assert_tp(&as.assigned[0], "testtopic", P012, 3);
    }
}

static void test_v0_with_trailing_bytes_ignored(void **state) {
    (void)state;
    /* a v0 declaration followed by v3 fields: those are bytes of a "later version" to a v0 reader */
    buf b = v_java_range_v3();
    b.b[1] = 0;
    kp_subscription s;
    assert_true(sub_dec(b.b, b.n, KP_CONSUMER_STRICT, &s));
    assert_int_equal(s.decoded_version, 0);
    assert_int_equal(s.nowned, 0);
    assert_int_equal(s.generation_id, -1);
}

/* ---- malformed subscriptions ---- */

static void test_truncated_inside_topic_name(void **state) {
    (void)state;
    buf b = v_v0_empty_ud();
    size_t n = 11; /* version, count, length 9, then only "tes" */
    kp_subscription s;
    assert_false(sub_dec(b.b, n, KP_CONSUMER_STRICT, &s));
    assert_err("topics", 0, NULL, 8, "length runs past the end");
    assert_string_equal(fmt(SUB, s.version, n),
                        "ConsumerProtocolSubscription declares v0 but ends at byte 11 inside topics[0] "
                        "(its data starts at byte 8)");
    assert_true(sub_dec(b.b, n, KP_CONSUMER_LENIENT, &s));
    assert_int_equal(s.ntopics, -1); /* subscription unknown */
    assert_null(s.topics);
    assert_int_equal(s.decoded_version, -1);
    assert_str(s.user_data, NULL);
    assert_err("topics", 0, NULL, 8, "length runs past the end");

    /* cut inside the length prefix of the second topic */
    buf c = {.n = 0};
    b_i16(&c, 0);
    b_i32(&c, 2);
    b_str(&c, "a");
    c.b[c.n++] = 0;
    assert_false(sub_dec(c.b, c.n, KP_CONSUMER_STRICT, &s));
    assert_err("topics", 1, NULL, 9, "truncated");
    assert_string_equal(fmt(SUB, s.version, c.n),
                        "ConsumerProtocolSubscription declares v0 but ends at byte 10 inside topics[1] "
                        "(which starts at byte 9)");
}

static void test_negative_topic_count(void **state) {
    (void)state;
    buf b = {.n = 0};
    b_i16(&b, 0);
    b_i32(&b, -2);
    b_bytes(&b, NULL, 0);
    kp_subscription s;
    assert_false(sub_dec(b.b, b.n, KP_CONSUMER_STRICT, &s));
    assert_err("topics", -1, NULL, 2, "negative array count");
    assert_string_equal(fmt(SUB, s.version, b.n), "ConsumerProtocolSubscription declares v0 but topics at byte 2 is "
                                                  "invalid: negative array count (10 bytes in all)");
    assert_true(sub_dec(b.b, b.n, KP_CONSUMER_LENIENT, &s));
    assert_int_equal(s.ntopics, -1);

    /* -1: a null array, but topics is not nullable */
    b.n = 0;
    b_i16(&b, 1);
    b_i32(&b, -1);
    b_bytes(&b, NULL, 0);
    b_i32(&b, 0);
    assert_false(sub_dec(b.b, b.n, KP_CONSUMER_STRICT, &s));
    assert_err("topics", -1, NULL, 2, "null array in a non-nullable field");
    assert_true(sub_dec(b.b, b.n, KP_CONSUMER_LENIENT, &s));
    assert_int_equal(s.ntopics, -1);
    assert_int_equal(s.nowned, 0); /* never reached */
}

static void test_topic_count_larger_than_bytes(void **state) {
    (void)state;
    buf b = v_v0_empty_ud();
    b.b[5] = 8; /* count 8: would need at least 16 bytes, 15 remain */
    kp_subscription s;
    assert_false(sub_dec(b.b, b.n, KP_CONSUMER_STRICT, &s));
    assert_err("topics", -1, NULL, 2, "array count exceeds the remaining bytes");
    /* a count near INT32_MAX must not be allocated */
    b.b[2] = 0x7f;
    b.b[3] = b.b[4] = b.b[5] = 0xff;
    assert_false(sub_dec(b.b, b.n, KP_CONSUMER_STRICT, &s));
    assert_err("topics", -1, NULL, 2, "array count exceeds the remaining bytes");
    assert_true(sub_dec(b.b, b.n, KP_CONSUMER_LENIENT, &s));
    assert_int_equal(s.ntopics, -1);
    /* a count the bytes can just hold passes the check; then the bytes run out later */
    buf c = {.n = 0};
    b_i16(&c, 0);
    b_i32(&c, 8);
    for (int i = 0; i < 7; i++) b_str(&c, "");
    b_i16(&c, 0); /* topics[7] = "", leaving nothing for user_data */
    assert_false(sub_dec(c.b, c.n, KP_CONSUMER_STRICT, &s));
    assert_err("user_data", -1, NULL, 22, "truncated");
}

static void test_owned_partition_count_past_end(void **state) {
    (void)state;
    buf b = {.n = 0};
    b_prefix(&b, 1, NULL, 0);
    b_i32(&b, 1);           /* owned: 1 topic */
    b_str(&b, "testtopic"); /* at 25 */
    b_i32(&b, 5);           /* at 36: 5 partitions ... */
    b_i32(&b, 0);           /* ... but 2 present */
    b_i32(&b, 1);
    kp_subscription s;
    assert_false(sub_dec(b.b, b.n, KP_CONSUMER_STRICT, &s));
    assert_err("owned_partitions", 0, "partitions", 36, "array count exceeds the remaining bytes");
    assert_string_equal(fmt(SUB, s.version, b.n),
                        "ConsumerProtocolSubscription declares v1 but owned_partitions[0].partitions at byte 36 is "
                        "invalid: array count exceeds the remaining bytes (48 bytes in all)");
    assert_true(sub_dec(b.b, b.n, KP_CONSUMER_LENIENT, &s));
    assert_int_equal(s.decoded_version, 0);
    assert_int_equal(s.ntopics, 1);
    assert_str(s.topics[0], "testtopic");
    assert_int_equal(s.nowned, -1);
    assert_null(s.owned);

    /* the owned topic name itself cut short (the count of 1 still fits: 9 bytes left) */
    b.n = 34;
    assert_false(sub_dec(b.b, b.n, KP_CONSUMER_STRICT, &s));
    assert_err("owned_partitions", 0, "topic", 27, "length runs past the end");
}

static void test_user_data_length_past_end(void **state) {
    (void)state;
    buf b = {.n = 0};
    b_i16(&b, 0);
    b_i32(&b, 1);
    b_str(&b, "testtopic");
    b_i32(&b, 10); /* at 17: 10 bytes of user data ... */
    b_i32(&b, 0);  /* ... 4 present */
    kp_subscription s;
    assert_false(sub_dec(b.b, b.n, KP_CONSUMER_STRICT, &s));
    assert_err("user_data", -1, NULL, 21, "length runs past the end");
    assert_string_equal(fmt(SUB, s.version, b.n), "ConsumerProtocolSubscription declares v0 but ends at byte 25 "
                                                  "inside user_data (its data starts at byte 21)");
    /* the v0 prefix is kept whole or not at all */
    assert_true(sub_dec(b.b, b.n, KP_CONSUMER_LENIENT, &s));
    assert_int_equal(s.ntopics, -1);
    assert_null(s.topics);
    assert_str(s.user_data, NULL);
    assert_int_equal(s.decoded_version, -1);
}

static void test_negative_version(void **state) {
    (void)state;
    buf b = v_v0_empty_ud();
    b.b[0] = b.b[1] = 0xff;
    kp_subscription s;
    assert_false(sub_dec(b.b, b.n, KP_CONSUMER_STRICT, &s));
    assert_err("version", -1, NULL, 0, "negative version");
    assert_int_equal(s.version, -1);
    assert_string_equal(fmt(SUB, s.version, b.n), "ConsumerProtocolSubscription declares invalid version -1");
    /* Apache reads the v0 prefix whatever the version says */
    assert_true(sub_dec(b.b, b.n, KP_CONSUMER_LENIENT, &s));
    assert_no_err();
    assert_int_equal(s.version, -1);
    assert_int_equal(s.decoded_version, 0);
    assert_int_equal(s.ntopics, 1);
    assert_str(s.topics[0], "testtopic");

    kp_assignment a;
    b.b[0] = 0x80; /* -32513 */
    assert_false(asg_dec(b.b, b.n, KP_CONSUMER_STRICT, &a));
    assert_err("version", -1, NULL, 0, "negative version");
    assert_string_equal(fmt(ASG, a.version, b.n), "ConsumerProtocolAssignment declares invalid version -32513");
}

static void test_empty_and_one_byte(void **state) {
    (void)state;
    static const uint8_t one[] = {0x00};
    for (size_t n = 0; n <= 1; n++) {
        kp_subscription s;
        assert_false(sub_dec(one, n, KP_CONSUMER_STRICT, &s));
        assert_err("version", -1, NULL, 0, "truncated");
        assert_int_equal(s.version, -1);
        assert_string_equal(fmt(SUB, s.version, n),
                            n ? "ConsumerProtocolSubscription is 1 byte, too short for its int16 version"
                              : "ConsumerProtocolSubscription is 0 bytes, too short for its int16 version");
        assert_true(sub_dec(one, n, KP_CONSUMER_LENIENT, &s));
        assert_int_equal(s.version, -1);
        assert_int_equal(s.decoded_version, -1);
        assert_int_equal(s.ntopics, -1);
        assert_err("version", -1, NULL, 0, "truncated");

        kp_assignment a;
        assert_false(asg_dec(one, n, KP_CONSUMER_STRICT, &a));
        assert_err("version", -1, NULL, 0, "truncated");
        assert_true(asg_dec(one, n, KP_CONSUMER_LENIENT, &a));
        assert_int_equal(a.nassigned, -1);
        assert_int_equal(a.decoded_version, -1);
    }
    /* just a version: v0 has no topics count */
    static const uint8_t v0[] = {0x00, 0x00};
    kp_subscription s;
    assert_false(sub_dec(v0, 2, KP_CONSUMER_STRICT, &s));
    assert_err("topics", -1, NULL, 2, "truncated");
    assert_string_equal(fmt(SUB, s.version, 2), "ConsumerProtocolSubscription declares v0 but ends at byte 2 before topics");
}

static void test_v2_v3_missing_later_fields(void **state) {
    (void)state;
    /* declares v2, has owned partitions, generation cut after 2 bytes */
    buf b = {.n = 0};
    b_prefix(&b, 2, NULL, -1);
    b_i32(&b, 0);
    b_i16(&b, 0);
    kp_subscription s;
    assert_false(sub_dec(b.b, b.n, KP_CONSUMER_STRICT, &s));
    assert_err("generation_id", -1, NULL, 25, "truncated");
    assert_string_equal(fmt(SUB, s.version, b.n), "ConsumerProtocolSubscription declares v2 but ends at byte 27 inside "
                                                  "generation_id (which starts at byte 25)");
    assert_true(sub_dec(b.b, b.n, KP_CONSUMER_LENIENT, &s));
    assert_int_equal(s.decoded_version, 1);
    assert_int_equal(s.nowned, 0);
    assert_int_equal(s.generation_id, -1);

    /* declares v7 (read as v3), rack missing */
    b.n = 0;
    b_prefix(&b, 7, NULL, -1);
    b_i32(&b, 0);
    b_i32(&b, 9);
    assert_false(sub_dec(b.b, b.n, KP_CONSUMER_STRICT, &s));
    assert_err("rack_id", -1, NULL, 29, "truncated");
    assert_string_equal(fmt(SUB, s.version, b.n),
                        "ConsumerProtocolSubscription declares v7 (read as v3) but ends at byte 29 before rack_id");
    assert_true(sub_dec(b.b, b.n, KP_CONSUMER_LENIENT, &s));
    assert_int_equal(s.decoded_version, 2);
    assert_int_equal(s.generation_id, 9);
    assert_str(s.rack_id, NULL);
}

static void test_negative_lengths(void **state) {
    (void)state;
    kp_subscription s;
    /* user_data -2: STRICT refuses, LENIENT reads null as Java does */
    buf b = {.n = 0};
    b_prefix(&b, 0, NULL, -2);
    assert_false(sub_dec(b.b, b.n, KP_CONSUMER_STRICT, &s));
    assert_err("user_data", -1, NULL, 17, "negative length");
    assert_true(sub_dec(b.b, b.n, KP_CONSUMER_LENIENT, &s));
    assert_no_err();
    assert_int_equal(s.ntopics, 1);
    assert_str(s.user_data, NULL);

    /* rack_id -2 */
    b = v_java_range_v3();
    b.b[30] = 0xfe;
    assert_false(sub_dec(b.b, b.n, KP_CONSUMER_STRICT, &s));
    assert_err("rack_id", -1, NULL, 29, "negative length");
    assert_true(sub_dec(b.b, b.n, KP_CONSUMER_LENIENT, &s));
    assert_int_equal(s.decoded_version, 3);
    assert_str(s.rack_id, NULL);

    /* a null topic name: not nullable in either mode */
    b.n = 0;
    b_i16(&b, 0);
    b_i32(&b, 1);
    b_str(&b, NULL);
    b_bytes(&b, NULL, 0);
    assert_false(sub_dec(b.b, b.n, KP_CONSUMER_STRICT, &s));
    assert_err("topics", 0, NULL, 6, "null in a non-nullable field");
    assert_true(sub_dec(b.b, b.n, KP_CONSUMER_LENIENT, &s));
    assert_int_equal(s.ntopics, -1);

    /* an owned topic with length -3 */
    b.n = 0;
    b_prefix(&b, 1, NULL, 0);
    b_i32(&b, 1);
    b_i16(&b, -3);
    b_i32(&b, 0);
    assert_false(sub_dec(b.b, b.n, KP_CONSUMER_STRICT, &s));
    assert_err("owned_partitions", 0, "topic", 25, "negative length");
    assert_string_equal(fmt(SUB, s.version, b.n), "ConsumerProtocolSubscription declares v1 but owned_partitions[0].topic "
                                                  "at byte 25 is invalid: negative length (31 bytes in all)");
}

/* Every proper prefix of a full v3 subscription fails STRICT, never breaks LENIENT. */
static void test_every_prefix_of_rejoin(void **state) {
    (void)state;
    buf b = v_coop_rejoin();
    /* where each layout's fields end in this vector */
    const size_t end_v0 = 25, end_v1 = 52, end_v2 = 56;
    for (size_t n = 0; n < b.n; n++) {
        kp_subscription s;
        assert_false(sub_dec(b.b, n, KP_CONSUMER_STRICT, &s));
        assert_non_null(R.err.field);
        assert_non_null(R.err.reason);
        assert_true(R.err.offset <= n);
        assert_true(fmt(SUB, s.version, n)[0] != 0);

        assert_true(sub_dec(b.b, n, KP_CONSUMER_LENIENT, &s));
        assert_non_null(R.err.field);
        int want = n >= end_v2 ? 2 : n >= end_v1 ? 1 : n >= end_v0 ? 0 : -1;
        assert_int_equal(s.decoded_version, want);
        assert_int_equal(s.ntopics, want >= 0 ? 1 : -1);
        assert_int_equal(s.nowned, want >= 1 ? 1 : want == 0 ? -1 : 0);
        assert_int_equal(s.generation_id, want >= 2 ? 5 : -1);
        assert_str(s.rack_id, NULL);
        kp_arena_free(&R.arena);
    }
}

static void test_assignment_malformed(void **state) {
    (void)state;
    buf good = v_assignment(0, NULL, 0, "000000000001000974657374746f7069630000000300000000000000010000000200000000");
    kp_assignment a;
    for (size_t n = 0; n < good.n; n++) {
        assert_false(asg_dec(good.b, n, KP_CONSUMER_STRICT, &a));
        assert_true(R.err.offset <= n);
        assert_true(asg_dec(good.b, n, KP_CONSUMER_LENIENT, &a));
        assert_int_equal(a.nassigned, -1);
        assert_null(a.assigned);
        assert_int_equal(a.decoded_version, -1);
        kp_arena_free(&R.arena);
    }
    /* partitions count (at 17) of 4: the 16 bytes after it could hold them, user_data is then missing */
    buf b = good;
    b.b[20] = 4;
    assert_false(asg_dec(b.b, b.n, KP_CONSUMER_STRICT, &a));
    assert_err("user_data", -1, NULL, 37, "truncated");
    /* 5: more than the bytes can hold */
    b.b[20] = 5;
    assert_false(asg_dec(b.b, b.n, KP_CONSUMER_STRICT, &a));
    assert_err("assigned_partitions", 0, "partitions", 17, "array count exceeds the remaining bytes");
    assert_string_equal(fmt(ASG, a.version, b.n),
                        "ConsumerProtocolAssignment declares v0 but assigned_partitions[0].partitions at byte 17 is "
                        "invalid: array count exceeds the remaining bytes (37 bytes in all)");
    /* a null assignment array */
    b.n = 0;
    b_i16(&b, 0);
    b_i32(&b, -1);
    b_bytes(&b, NULL, -1);
    assert_false(asg_dec(b.b, b.n, KP_CONSUMER_STRICT, &a));
    assert_err("assigned_partitions", -1, NULL, 2, "null array in a non-nullable field");
    /* negative version: LENIENT still decodes the one layout */
    b.n = 0;
    b_i16(&b, -1);
    b_i32(&b, 0);
    b_bytes(&b, NULL, -1);
    assert_true(asg_dec(b.b, b.n, KP_CONSUMER_LENIENT, &a));
    assert_int_equal(a.nassigned, 0);
    assert_int_equal(a.decoded_version, 0);
    assert_no_err();
}

static void test_many_topics_and_partitions(void **state) {
    (void)state;
    buf b = {.n = 0};
    b_i16(&b, 1);
    b_i32(&b, 40);
    int32_t parts[40];
    for (int i = 0; i < 40; i++) parts[i] = 1000 + i;
    char name[32];
    for (int t = 0; t < 40; t++) {
        snprintf(name, sizeof name, "topic-%02d", t);
        b_tp(&b, name, parts, t);
    }
    b_bytes(&b, NULL, -1);
    kp_assignment a;
    assert_true(asg_dec(b.b, b.n, KP_CONSUMER_STRICT, &a));
    assert_int_equal(a.nassigned, 40);
    for (int t = 0; t < 40; t++) {
        snprintf(name, sizeof name, "topic-%02d", t);
        assert_tp(&a.assigned[t], name, parts, t);
        if (t == 0) assert_null(a.assigned[t].partitions);
    }
}

static void test_err_and_format_edges(void **state) {
    (void)state;
    buf b = v_kafkajs_220();
    kp_subscription s;
    /* err may be NULL */
    assert_false(kp_subscription_decode(b.b, b.n, KP_CONSUMER_STRICT, &s, &R.arena, NULL));
    assert_true(kp_subscription_decode(b.b, b.n, KP_CONSUMER_LENIENT, &s, &R.arena, NULL));
    kp_assignment a;
    assert_false(kp_assignment_decode(b.b, 1, KP_CONSUMER_STRICT, &a, &R.arena, NULL));
    /* the formatter measures like snprintf and truncates safely */
    assert_false(sub_dec(b.b, b.n, KP_CONSUMER_STRICT, &s));
    const char *want = "ConsumerProtocolSubscription declares v1 but ends at byte 21 before owned_partitions";
    assert_int_equal(kp_consumer_error_format(&R.err, SUB, 1, 21, NULL, 0), (int)strlen(want));
    char small[10];
    assert_int_equal(kp_consumer_error_format(&R.err, SUB, 1, 21, small, sizeof small), (int)strlen(want));
    assert_string_equal(small, "ConsumerP");
    /* nothing failed */
    b.b[1] = 0;
    assert_true(sub_dec(b.b, b.n, KP_CONSUMER_STRICT, &s));
    assert_string_equal(fmt(SUB, 0, b.n), "ConsumerProtocolSubscription decoded without error");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_kafkajs_220_strict_fails_at_owned_partitions, teardown),
        cmocka_unit_test_teardown(test_kafkajs_220_lenient_accepts, teardown),
        cmocka_unit_test_teardown(test_kafkajs_bytes_declared_v0_accepted, teardown),
        cmocka_unit_test_teardown(test_sarama_v0_null_user_data, teardown),
        cmocka_unit_test_teardown(test_java_range_v3, teardown),
        cmocka_unit_test_teardown(test_java_cooperative_sticky_v3, teardown),
        cmocka_unit_test_teardown(test_librdkafka_range_v3, teardown),
        cmocka_unit_test_teardown(test_cooperative_sticky_rejoin, teardown),
        cmocka_unit_test_teardown(test_assignment_v0_empty_user_data, teardown),
        cmocka_unit_test_teardown(test_assignment_v3_null_user_data, teardown),
        cmocka_unit_test_teardown(test_v7_decodes_as_v3_ignoring_trailing_bytes, teardown),
        cmocka_unit_test_teardown(test_v0_with_trailing_bytes_ignored, teardown),
        cmocka_unit_test_teardown(test_truncated_inside_topic_name, teardown),
        cmocka_unit_test_teardown(test_negative_topic_count, teardown),
        cmocka_unit_test_teardown(test_topic_count_larger_than_bytes, teardown),
        cmocka_unit_test_teardown(test_owned_partition_count_past_end, teardown),
        cmocka_unit_test_teardown(test_user_data_length_past_end, teardown),
        cmocka_unit_test_teardown(test_negative_version, teardown),
        cmocka_unit_test_teardown(test_empty_and_one_byte, teardown),
        cmocka_unit_test_teardown(test_v2_v3_missing_later_fields, teardown),
        cmocka_unit_test_teardown(test_negative_lengths, teardown),
        cmocka_unit_test_teardown(test_every_prefix_of_rejoin, teardown),
        cmocka_unit_test_teardown(test_assignment_malformed, teardown),
        cmocka_unit_test_teardown(test_many_topics_and_partitions, teardown),
        cmocka_unit_test_teardown(test_err_and_format_edges, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
