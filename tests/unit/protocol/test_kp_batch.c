/*
 * Record batch v2: CRC-32C, header parsing, validation and in-place rewrites.
 *
 * Batches come from two sources: a small builder below that lays out the format
 * as Apache Kafka's DefaultRecordBatch and DefaultRecord define it, and two
 * batches captured from librdkafka 2.0.2 (kcat producing to librdkafka's mock
 * cluster, idempotent, traced with strace). The builder reproduces one captured
 * batch byte for byte, which cross-checks the builder, our reading of the
 * format and our CRC against an independent implementation. Transaction markers
 * are checked against ones written by kafka-clients 4.4.0.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kp_batch.h"

/*
 * A private copy of the CRC module so both the table path and the SSE4.2
 * path can be checked whatever this CPU would pick at run time.
 */
#define kp_crc32c kp_crc32c_private_copy
#include "../../protocol/kp_crc32c.c"
#undef kp_crc32c

/* ---- reference CRC: one bit at a time, straight from the definition ---- */

static uint32_t crc32c_bitwise(uint32_t crc, const uint8_t *p, size_t n) {
    crc = ~crc;
    while (n--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ ((crc & 1) ? 0x82F63B78u : 0);
    }
    return ~crc;
}

static uint32_t get_u32(const uint8_t *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static void fill_random(uint8_t *p, size_t n, uint32_t seed) {
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (uint8_t)(seed >> 16);
    }
}

/* ---- batch builder ---- */

typedef struct bld {
    uint8_t b[4096];
    size_t n;
} bld;

static void b_raw(bld *w, const void *p, size_t n) {
    assert_true(w->n + n <= sizeof w->b);
    memcpy(w->b + w->n, p, n);
    w->n += n;
}
static void b_be(bld *w, uint64_t v, int bytes) {
    for (int i = bytes - 1; i >= 0; i--) {
        uint8_t c = (uint8_t)(v >> (8 * i));
        b_raw(w, &c, 1);
    }
}
static void b_uvarint(bld *w, uint64_t v) {
    while (v >= 0x80) {
        uint8_t c = (uint8_t)(v | 0x80);
        b_raw(w, &c, 1);
        v >>= 7;
    }
    uint8_t c = (uint8_t)v;
    b_raw(w, &c, 1);
}
static void b_varlong(bld *w, int64_t v) { b_uvarint(w, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63)); }
/* length-prefixed string; NULL is written as length -1 */
static void b_vstr(bld *w, const char *s) {
    if (!s) {
        b_varlong(w, -1);
        return;
    }
    b_varlong(w, (int64_t)strlen(s));
    b_raw(w, s, strlen(s));
}

typedef struct rec {
    const char *key, *value;
    int64_t ts_delta;
    int nh;
    const char *hk[2], *hv[2];
} rec;

typedef struct hdr {
    int32_t leader_epoch;
    int16_t attributes;
    int64_t base_ts, max_ts;
    int64_t producer_id;
    int16_t producer_epoch;
    int32_t base_sequence;
} hdr;

static const hdr plain_hdr = {-1, 0, 1700000000000, 1700000000007, -1, -1, -1};

static void put_record(bld *w, const rec *r, int offset_delta) {
    bld body = {.n = 0};
    uint8_t attr = 0;
    b_raw(&body, &attr, 1);
    b_varlong(&body, r->ts_delta);
    b_varlong(&body, offset_delta);
    b_vstr(&body, r->key);
    b_vstr(&body, r->value);
    b_varlong(&body, r->nh);
    for (int i = 0; i < r->nh; i++) {
        b_vstr(&body, r->hk[i]);
        b_vstr(&body, r->hv[i]);
    }
    b_varlong(w, (int64_t)body.n);
    b_raw(w, body.b, body.n);
}

/* Lays out a whole batch with a correct CRC; returns its size. */
static size_t build_batch(uint8_t *out, size_t cap, const hdr *h, const rec *recs, int n) {
    bld w = {.n = 0};
    b_be(&w, 0, 8);          /* base_offset */
    b_be(&w, 0, 4);          /* batch_length, filled below */
    b_be(&w, (uint32_t)h->leader_epoch, 4);
    b_be(&w, 2, 1);          /* magic */
    b_be(&w, 0, 4);          /* crc, filled below */
    b_be(&w, (uint16_t)h->attributes, 2);
    b_be(&w, (uint32_t)(n - 1), 4);
    b_be(&w, (uint64_t)h->base_ts, 8);
    b_be(&w, (uint64_t)h->max_ts, 8);
    b_be(&w, (uint64_t)h->producer_id, 8);
    b_be(&w, (uint16_t)h->producer_epoch, 2);
    b_be(&w, (uint32_t)h->base_sequence, 4);
    b_be(&w, (uint32_t)n, 4);
    assert_int_equal(w.n, KP_BATCH_HEADER_SIZE);
    for (int i = 0; i < n; i++)
        put_record(&w, &recs[i], i);
    uint32_t len = (uint32_t)(w.n - KP_BATCH_LOG_OVERHEAD);
    for (int i = 0; i < 4; i++)
        w.b[8 + i] = (uint8_t)(len >> (24 - 8 * i));
    uint32_t crc = crc32c_bitwise(0, w.b + 21, w.n - 21);
    for (int i = 0; i < 4; i++)
        w.b[17 + i] = (uint8_t)(crc >> (24 - 8 * i));
    assert_true(w.n <= cap);
    memcpy(out, w.b, w.n);
    return w.n;
}

/* Three records: key/value/header, null key with a timestamp delta, null value with a null header value. */
static const rec three[3] = {
    {"k0", "v0", 0, 1, {"h", NULL}, {"x", NULL}},
    {NULL, "hello", 5, 0, {NULL, NULL}, {NULL, NULL}},
    {"k2", NULL, 7, 2, {"a", "b"}, {"1", NULL}},
};

static size_t build_three(uint8_t *out, size_t cap) { return build_batch(out, cap, &plain_hdr, three, 3); }

/* After editing header fields a test wants a valid CRC again, to reach later checks. */
static void recrc(uint8_t *b, size_t n) {
    uint32_t crc = crc32c_bitwise(0, b + 21, n - 21);
    for (int i = 0; i < 4; i++)
        b[17 + i] = (uint8_t)(crc >> (24 - 8 * i));
}

static void set_be(uint8_t *p, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; i++)
        p[i] = (uint8_t)(v >> (8 * (bytes - 1 - i)));
}

static void parse_one(const uint8_t *buf, size_t n, kp_batch *b) {
    size_t pos = 0;
    const char *why = NULL;
    assert_int_equal(kp_batch_next(buf, n, &pos, b, &why), 1);
    assert_int_equal(pos, n);
}

#include "rdk_batches.h"

/* ======================= CRC-32C ======================= */

static void test_crc32c_check_value(void **state) {
    (void)state;
    assert_int_equal(kp_crc32c(0, "123456789", 9), 0xE3069283u);
    assert_int_equal(crc32c_bitwise(0, (const uint8_t *)"123456789", 9), 0xE3069283u);
    /* nothing to add leaves the running value alone (and p may be NULL) */
    assert_int_equal(kp_crc32c(0, NULL, 0), 0);
    assert_int_equal(kp_crc32c(0x12345678u, NULL, 0), 0x12345678u);
}

/* RFC 3720 appendix B.4 (iSCSI) test vectors. */
static void test_crc32c_rfc3720_vectors(void **state) {
    (void)state;
    uint8_t v[32];
    memset(v, 0, sizeof v);
    assert_int_equal(kp_crc32c(0, v, 32), 0x8A9136AAu);
    memset(v, 0xFF, sizeof v);
    assert_int_equal(kp_crc32c(0, v, 32), 0x62A8AB43u);
    for (int i = 0; i < 32; i++)
        v[i] = (uint8_t)i;
    assert_int_equal(kp_crc32c(0, v, 32), 0x46DD794Eu);
    for (int i = 0; i < 32; i++)
        v[i] = (uint8_t)(31 - i);
    assert_int_equal(kp_crc32c(0, v, 32), 0x113FDB5Cu);
}

static void test_crc32c_incremental(void **state) {
    (void)state;
    const char *s = "123456789";
    for (size_t cut = 0; cut <= 9; cut++)
        assert_int_equal(kp_crc32c(kp_crc32c(0, s, cut), s + cut, 9 - cut), 0xE3069283u);

    static uint8_t big[70000];
    fill_random(big, sizeof big, 42);
    uint32_t whole = kp_crc32c(0, big, sizeof big);
    assert_int_equal(whole, crc32c_bitwise(0, big, sizeof big));
    /* uneven chunks, so pieces start at every alignment */
    uint32_t crc = 0;
    size_t off = 0, step = 1;
    while (off < sizeof big) {
        size_t n = step < sizeof big - off ? step : sizeof big - off;
        crc = kp_crc32c(crc, big + off, n);
        off += n;
        step = step * 3 % 1000 + 1;
    }
    assert_int_equal(crc, whole);
}

/* Every length 0..300 at every alignment 0..15, against the bitwise definition. */
static void test_crc32c_lengths_and_alignments(void **state) {
    (void)state;
    uint8_t buf[400];
    fill_random(buf, sizeof buf, 7);
    for (size_t off = 0; off < 16; off++)
        for (size_t n = 0; n <= 300; n++)
            assert_int_equal(kp_crc32c(0xDEADBEEFu, buf + off, n), crc32c_bitwise(0xDEADBEEFu, buf + off, n));
}

/* The table path and the SSE4.2 path, each checked directly. */
static void test_crc32c_both_paths(void **state) {
    (void)state;
    uint8_t buf[5000];
    fill_random(buf, sizeof buf, 99);
    for (size_t off = 0; off < 9; off++) {
        for (size_t n = 0; n < 600; n += 7) {
            uint32_t want = ~crc32c_bitwise(0, buf + off, n);
            assert_int_equal(crc32c_sw(~0u, buf + off, n), want);
#ifdef KP_CRC32C_HAVE_HW
            if (__builtin_cpu_supports("sse4.2"))
                assert_int_equal(crc32c_hw(~0u, buf + off, n), want);
#endif
        }
    }
    assert_int_equal(~crc32c_sw(~0u, buf, sizeof buf), crc32c_bitwise(0, buf, sizeof buf));
    assert_int_equal(kp_crc32c_private_copy(0, "123456789", 9), 0xE3069283u);
}

/*
 * The three-lane hardware loop and its joining arithmetic: lengths around
 * every multiple of three lanes up to four rounds, at several alignments,
 * from a non-trivial starting register.
 */
static void test_crc32c_three_lanes(void **state) {
    (void)state;
    /* feeding n zero bytes multiplies the register by crc32c_zeros_op(n) */
    uint8_t zeros[100] = {0};
    for (size_t n = 0; n <= sizeof zeros; n += 11)
        assert_int_equal(crc32c_mulmod(0x12345678u, crc32c_zeros_op(n)), crc32c_sw(0x12345678u, zeros, n));
    enum { ROUND = 3 * CRC32C_LANE };
    static uint8_t buf[4 * ROUND + 64];
    fill_random(buf, sizeof buf, 1234);
    for (size_t rounds = 1; rounds <= 4; rounds++) {
        for (size_t off = 0; off < 9; off += 4) {
            for (long d = -9; d <= 9; d += 3) {
                size_t n = rounds * ROUND + (size_t)d;
                if (off + n > sizeof buf) continue;
                uint32_t want = crc32c_sw(0xCAFEBABEu, buf + off, n);
#ifdef KP_CRC32C_HAVE_HW
                if (__builtin_cpu_supports("sse4.2")) assert_int_equal(crc32c_hw(0xCAFEBABEu, buf + off, n), want);
#endif
                assert_int_equal(~crc32c_bitwise(~0xCAFEBABEu, buf + off, n), want);
            }
        }
    }
}

#ifdef KP_CRC32C_HAVE_HW
/* the three lanes' join uses a constant: it must be what feeding one lane of zeros does */
static void test_crc32c_lane_shift_constant(void **state) {
    (void)state;
    assert_int_equal(CRC32C_LANE_SHIFT, crc32c_zeros_op(CRC32C_LANE));
    assert_int_equal(CRC32C_LANE_SHIFT, crc32c_xpow(8 * CRC32C_LANE));
    assert_int_equal(CRC32C_LANE_CLMUL, crc32c_xpow(8 * CRC32C_LANE - 33));
    if (!__builtin_cpu_supports("sse4.2") || !__builtin_cpu_supports("pclmul")) return;
    uint32_t a = 0x9E3779B9u;
    for (int i = 0; i < 1000; i++) {
        a = a * 1664525u + 1013904223u;
        assert_int_equal(crc32c_shift_clmul(a, CRC32C_LANE_CLMUL), crc32c_mulmod(a, CRC32C_LANE_SHIFT));
    }
}

/* both joins of the lanes, the carry-less one and the shift-and-add one (SSE4.2 without PCLMULQDQ) */
static void test_crc32c_lanes_both_joins(void **state) {
    (void)state;
    if (!__builtin_cpu_supports("sse4.2")) return;
    static uint8_t buf[5 * 3 * CRC32C_LANE + 64];
    fill_random(buf, sizeof buf, 4321);
    for (size_t n = 3 * CRC32C_LANE - 5; n < sizeof buf - 8; n += 3 * CRC32C_LANE / 2 + 7) {
        uint32_t want = crc32c_sw(0x01234567u, buf + 3, n);
        assert_int_equal(crc32c_hw_lanes(0x01234567u, buf + 3, n, false), want);
        if (__builtin_cpu_supports("pclmul")) assert_int_equal(crc32c_hw_lanes(0x01234567u, buf + 3, n, true), want);
    }
}
#endif

/* ======================= builder sanity ======================= */

static void test_builder_zigzag(void **state) {
    (void)state;
    static const struct {
        int64_t v;
        uint8_t enc[3];
        size_t n;
    } cases[] = {
        {0, {0x00}, 1},  {-1, {0x01}, 1},       {1, {0x02}, 1},        {-64, {0x7f}, 1},
        {64, {0x80, 0x01}, 2}, {300, {0xd8, 0x04}, 2}, {-8193, {0x81, 0x80, 0x01}, 3},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bld w = {.n = 0};
        b_varlong(&w, cases[i].v);
        assert_int_equal(w.n, cases[i].n);
        assert_memory_equal(w.b, cases[i].enc, cases[i].n);
    }
}

/* The builder's first record, laid out by hand from DefaultRecord's format. */
static void test_builder_record_bytes(void **state) {
    (void)state;
    static const uint8_t want[] = {
        0x1c,                   /* length 14 */
        0x00,                   /* attributes */
        0x00,                   /* timestamp_delta 0 */
        0x00,                   /* offset_delta 0 */
        0x04, 'k', '0',         /* key */
        0x04, 'v', '0',         /* value */
        0x02,                   /* 1 header */
        0x02, 'h', 0x02, 'x',
    };
    bld w = {.n = 0};
    put_record(&w, &three[0], 0);
    assert_int_equal(w.n, sizeof want);
    assert_memory_equal(w.b, want, sizeof want);
}

/* The builder reproduces librdkafka's batch exactly, CRC included. */
static void test_builder_matches_librdkafka(void **state) {
    (void)state;
    static const rec r = {"k2", "world", 0, 2, {"h1", "h2"}, {"v1", "xyz"}};
    static const hdr h = {0, 0, 1796199717546, 1796199717546, 385216000, 0, 0};
    uint8_t out[256];
    size_t n = build_batch(out, sizeof out, &h, &r, 1);
    assert_int_equal(n, sizeof rdk_batch_0);
    assert_memory_equal(out, rdk_batch_0, n);
}

/* ======================= parsing ======================= */

static void test_parse_built_batch(void **state) {
    (void)state;
    uint8_t buf[1024];
    size_t n = build_three(buf, sizeof buf);
    kp_batch b;
    parse_one(buf, n, &b);
    assert_int_equal(b.base_offset, 0);
    assert_int_equal(b.batch_length, (int32_t)(n - 12));
    assert_int_equal(b.leader_epoch, -1);
    assert_int_equal(b.magic, 2);
    assert_int_equal(b.crc, get_u32(buf + 17));
    assert_int_equal(b.crc, kp_crc32c(0, buf + 21, n - 21));
    assert_int_equal(b.attributes, 0);
    assert_int_equal(b.last_offset_delta, 2);
    assert_int_equal(b.base_timestamp, 1700000000000);
    assert_int_equal(b.max_timestamp, 1700000000007);
    assert_int_equal(b.producer_id, -1);
    assert_int_equal(b.producer_epoch, -1);
    assert_int_equal(b.base_sequence, -1);
    assert_int_equal(b.records_count, 3);
    assert_ptr_equal(b.data, buf);
    assert_int_equal(b.size, n);
    assert_int_equal(kp_batch_codec(&b), KP_CODEC_NONE);
    assert_int_equal(kp_batch_last_offset(&b), 2);
    assert_true(kp_batch_crc_ok(&b));
    const char *why = NULL;
    assert_int_equal(kp_batch_validate(&b, &why), 0);
}

static void test_parse_header_fields_big_endian(void **state) {
    (void)state;
    uint8_t buf[1024];
    hdr h = {0x01020304, KP_ATTR_TRANSACTIONAL | KP_CODEC_ZSTD, 0x0102030405060708, 0x1112131415161718,
             0x2122232425262728, 0x3132, 0x41424344};
    size_t n = build_batch(buf, sizeof buf, &h, three, 3);
    set_be(buf, 0x5152535455565758, 8);
    kp_batch b;
    parse_one(buf, n, &b);
    assert_int_equal(b.base_offset, 0x5152535455565758);
    assert_int_equal(b.leader_epoch, 0x01020304);
    assert_int_equal(b.attributes, KP_ATTR_TRANSACTIONAL | KP_CODEC_ZSTD);
    assert_int_equal(kp_batch_codec(&b), KP_CODEC_ZSTD);
    assert_int_equal(b.base_timestamp, 0x0102030405060708);
    assert_int_equal(b.max_timestamp, 0x1112131415161718);
    assert_int_equal(b.producer_id, 0x2122232425262728);
    assert_int_equal(b.producer_epoch, 0x3132);
    assert_int_equal(b.base_sequence, 0x41424344);
    assert_int_equal(kp_batch_last_offset(&b), 0x5152535455565758 + 2);
}

static void test_parse_librdkafka_batches(void **state) {
    (void)state;
    uint8_t blob[sizeof rdk_batch_0 + sizeof rdk_batch_1];
    memcpy(blob, rdk_batch_0, sizeof rdk_batch_0);
    memcpy(blob + sizeof rdk_batch_0, rdk_batch_1, sizeof rdk_batch_1);
    size_t pos = 0;
    kp_batch b;
    const char *why = NULL;

    assert_int_equal(kp_batch_next(blob, sizeof blob, &pos, &b, &why), 1);
    assert_int_equal(b.size, sizeof rdk_batch_0);
    assert_int_equal(b.crc, 0xab866727u);
    assert_int_equal(b.leader_epoch, 0); /* librdkafka sends 0, not -1 */
    assert_int_equal(b.records_count, 1);
    assert_int_equal(b.last_offset_delta, 0);
    assert_int_equal(b.producer_id, 385216000);
    assert_int_equal(b.producer_epoch, 0);
    assert_int_equal(b.base_sequence, 0);
    assert_int_equal(b.base_timestamp, 1796199717546);
    assert_int_equal(b.max_timestamp, 1796199717546);
    assert_true(kp_batch_crc_ok(&b));
    assert_int_equal(kp_batch_validate(&b, &why), 0);

    assert_int_equal(kp_batch_next(blob, sizeof blob, &pos, &b, &why), 1);
    assert_ptr_equal(b.data, blob + sizeof rdk_batch_0);
    assert_int_equal(b.size, sizeof rdk_batch_1);
    assert_int_equal(b.crc, 0x9f181351u);
    assert_int_equal(b.records_count, 2);
    assert_int_equal(b.last_offset_delta, 1);
    assert_true(kp_batch_crc_ok(&b));
    assert_int_equal(kp_batch_validate(&b, &why), 0);

    assert_int_equal(kp_batch_next(blob, sizeof blob, &pos, &b, &why), 0);
    assert_int_equal(pos, sizeof blob);
}

static void test_next_two_concatenated(void **state) {
    (void)state;
    uint8_t blob[2048];
    size_t n1 = build_three(blob, sizeof blob);
    static const rec one = {"only", "one", 0, 0, {NULL, NULL}, {NULL, NULL}};
    size_t n2 = build_batch(blob + n1, sizeof blob - n1, &plain_hdr, &one, 1);
    size_t pos = 0;
    kp_batch b;
    const char *why = NULL;
    assert_int_equal(kp_batch_next(blob, n1 + n2, &pos, &b, &why), 1);
    assert_int_equal(pos, n1);
    assert_int_equal(b.records_count, 3);
    assert_true(kp_batch_crc_ok(&b));
    assert_int_equal(kp_batch_next(blob, n1 + n2, &pos, &b, &why), 1);
    assert_int_equal(pos, n1 + n2);
    assert_ptr_equal(b.data, blob + n1);
    assert_int_equal(b.size, n2);
    assert_int_equal(b.records_count, 1);
    assert_true(kp_batch_crc_ok(&b));
    assert_int_equal(kp_batch_next(blob, n1 + n2, &pos, &b, &why), 0);
    assert_int_equal(kp_batch_next(blob, n1 + n2, &pos, &b, &why), 0);
}

static void test_next_zero_length(void **state) {
    (void)state;
    size_t pos = 0;
    kp_batch b;
    const char *why = NULL;
    assert_int_equal(kp_batch_next(NULL, 0, &pos, &b, &why), 0);
    uint8_t one = 0;
    assert_int_equal(kp_batch_next(&one, 0, &pos, &b, &why), 0);
    assert_int_equal(pos, 0);
}

static void expect_error(const uint8_t *buf, size_t len, size_t pos, const char *want) {
    kp_batch b;
    const char *why = NULL;
    size_t p = pos;
    assert_int_equal(kp_batch_next(buf, len, &p, &b, &why), -1);
    assert_int_equal(p, pos); /* a failed parse does not move */
    assert_non_null(why);
    if (want)
        assert_string_equal(why, want);
}

static void test_next_truncated_header(void **state) {
    (void)state;
    uint8_t blob[1024];
    size_t n = build_three(blob, sizeof blob);
    memcpy(blob + n, blob, 11);
    for (size_t extra = 1; extra < 12; extra++)
        expect_error(blob, n + extra, n, "truncated batch header");
    /* and the first batch still parses, so a caller sees exactly where it broke */
    size_t pos = 0;
    kp_batch b;
    const char *why = NULL;
    assert_int_equal(kp_batch_next(blob, n + 5, &pos, &b, &why), 1);
    assert_int_equal(kp_batch_next(blob, n + 5, &pos, &b, &why), -1);
    assert_string_equal(why, "truncated batch header");
}

static void test_next_length_past_end(void **state) {
    (void)state;
    uint8_t blob[1024];
    size_t n = build_three(blob, sizeof blob);
    for (size_t cut = 1; cut <= n - 12; cut++)
        expect_error(blob, n - cut, 0, "batch length runs past the end of the records");
    /* exactly 12 bytes: the header's length field promises more */
    expect_error(blob, 12, 0, "batch length runs past the end of the records");
}

static void test_next_huge_and_negative_length(void **state) {
    (void)state;
    uint8_t blob[1024];
    size_t n = build_three(blob, sizeof blob);
    set_be(blob + 8, INT32_MAX, 4);
    expect_error(blob, n, 0, "batch length runs past the end of the records");
    set_be(blob + 8, (uint32_t)INT32_MAX - 11, 4); /* 12 + length == INT32_MAX + 1 */
    expect_error(blob, n, 0, "batch length runs past the end of the records");
    set_be(blob + 8, 0xFFFFFFFFu, 4);
    expect_error(blob, n, 0, "negative batch length");
    set_be(blob + 8, 0x80000000u, 4);
    expect_error(blob, n, 0, "negative batch length");
    set_be(blob + 8, (uint32_t)-12, 4); /* would make the size exactly 0 */
    expect_error(blob, n, 0, "negative batch length");
}

static void test_next_shorter_than_header(void **state) {
    (void)state;
    uint8_t blob[1024];
    size_t n = build_three(blob, sizeof blob);
    set_be(blob + 8, 0, 4);
    expect_error(blob, n, 0, "batch length shorter than the batch header");
    set_be(blob + 8, 48, 4); /* 60 bytes: one short of a header */
    expect_error(blob, n, 0, "batch length shorter than the batch header");
    /* a header-only batch parses; validation then refuses its zero count */
    set_be(blob + 8, 49, 4);
    set_be(blob + 23, (uint32_t)-1, 4);
    set_be(blob + 57, 0, 4);
    recrc(blob, 61);
    size_t pos = 0;
    kp_batch b;
    const char *why = NULL;
    assert_int_equal(kp_batch_next(blob, n, &pos, &b, &why), 1);
    assert_int_equal(pos, 61);
    assert_true(kp_batch_crc_ok(&b));
    assert_int_equal(kp_batch_validate(&b, &why), 87);
}

static void test_next_magic(void **state) {
    (void)state;
    uint8_t blob[1024];
    size_t n = build_three(blob, sizeof blob);
    blob[16] = 1;
    expect_error(blob, n, 0, "unsupported magic 1");
    blob[16] = 0;
    expect_error(blob, n, 0, "unsupported magic 0");

    /* a legacy v1 message (offset, size, crc, magic, ...) smaller than a v2 header */
    uint8_t legacy[40] = {0};
    set_be(legacy + 8, 28, 4);
    legacy[16] = 1;
    expect_error(legacy, sizeof legacy, 0, "unsupported magic 1");

    /* every byte value has its own message */
    for (int m = -128; m <= 127; m++) {
        if (m == 2)
            continue;
        char want[32];
        snprintf(want, sizeof want, "unsupported magic %d", m);
        blob[16] = (uint8_t)m;
        expect_error(blob, n, 0, want);
    }
}

static void test_next_pos_past_end(void **state) {
    (void)state;
    uint8_t blob[8] = {0};
    expect_error(blob, sizeof blob, sizeof blob + 1, NULL);
}

/* ======================= patching ======================= */

static void test_patch(void **state) {
    (void)state;
    uint8_t buf[1024], orig[1024];
    size_t n = build_three(buf, sizeof buf);
    memcpy(orig, buf, n);
    kp_batch_patch(buf, 1234567890123, 7);
    kp_batch b;
    parse_one(buf, n, &b);
    assert_int_equal(b.base_offset, 1234567890123);
    assert_int_equal(b.leader_epoch, 7);
    assert_int_equal(kp_batch_last_offset(&b), 1234567890123 + 2);
    assert_memory_equal(buf + 8, orig + 8, 4);
    assert_memory_equal(buf + 16, orig + 16, n - 16);
    /* neither field is covered by the CRC */
    assert_true(kp_batch_crc_ok(&b));
    /* a patched batch is no longer one a producer may send: offsets are the broker's */
    assert_int_equal(kp_batch_validate(&b, NULL), 87);
    b.base_offset = 0;
    assert_int_equal(kp_batch_validate(&b, NULL), 0);

    kp_batch_patch(buf, -1, -1);
    parse_one(buf, n, &b);
    assert_int_equal(b.base_offset, -1);
    assert_int_equal(b.leader_epoch, -1);
}

static void test_set_log_append_time(void **state) {
    (void)state;
    uint8_t buf[1024], orig[1024];
    size_t n = build_three(buf, sizeof buf);
    kp_batch_patch(buf, 500, 3);
    memcpy(orig, buf, n);
    int64_t now = 1800000000123;
    kp_batch_set_log_append_time(buf, n, now);

    kp_batch b;
    parse_one(buf, n, &b);
    assert_true(b.attributes & KP_ATTR_LOG_APPEND_TIME);
    assert_int_equal(b.attributes & ~KP_ATTR_LOG_APPEND_TIME, 0);
    assert_int_equal(b.max_timestamp, now);
    assert_int_equal(b.base_timestamp, 1700000000000);
    assert_int_equal(b.base_offset, 500);
    assert_int_equal(b.leader_epoch, 3);
    assert_true(kp_batch_crc_ok(&b));
    assert_int_equal(b.crc, crc32c_bitwise(0, buf + 21, n - 21));
    assert_int_not_equal(b.crc, get_u32(orig + 17));
    /* only attributes, max_timestamp and the CRC moved */
    assert_memory_equal(buf, orig, 17);
    assert_memory_equal(buf + 23, orig + 23, 35 - 23);
    assert_memory_equal(buf + 43, orig + 43, n - 43);

    /* idempotent: doing it again with the same time changes nothing */
    uint8_t again[1024];
    memcpy(again, buf, n);
    kp_batch_set_log_append_time(again, n, now);
    assert_memory_equal(again, buf, n);

    /* a producer batch claiming LogAppendTime is refused; the broker's own rewrite is what sets it */
    const char *why = NULL;
    b.base_offset = 0;
    assert_int_equal(kp_batch_validate(&b, &why), 32);
}

static void test_set_log_append_time_librdkafka(void **state) {
    (void)state;
    uint8_t buf[sizeof rdk_batch_1];
    memcpy(buf, rdk_batch_1, sizeof buf);
    kp_batch_set_log_append_time(buf, sizeof buf, 1);
    kp_batch b;
    parse_one(buf, sizeof buf, &b);
    assert_true(kp_batch_crc_ok(&b));
    assert_int_equal(b.max_timestamp, 1);
    assert_memory_equal(buf + 61, rdk_batch_1 + 61, sizeof buf - 61);
}

static void test_set_log_append_time_short_buffer(void **state) {
    (void)state;
    uint8_t buf[60];
    memset(buf, 0xAB, sizeof buf);
    kp_batch_set_log_append_time(buf, sizeof buf, 1);
    for (size_t i = 0; i < sizeof buf; i++)
        assert_int_equal(buf[i], 0xAB);
}

/* ======================= validation ======================= */

typedef struct vcase {
    const char *name;
    int16_t attributes;
    int32_t last_offset_delta;
    int32_t records_count;
    int64_t producer_id;
    int32_t base_sequence;
    bool break_crc;
    int want;
} vcase;

static int run_vcase(const vcase *c) {
    uint8_t buf[1024];
    size_t n = build_three(buf, sizeof buf);
    set_be(buf + 21, (uint16_t)c->attributes, 2);
    set_be(buf + 23, (uint32_t)c->last_offset_delta, 4);
    set_be(buf + 57, (uint32_t)c->records_count, 4);
    set_be(buf + 43, (uint64_t)c->producer_id, 8);
    set_be(buf + 53, (uint32_t)c->base_sequence, 4);
    recrc(buf, n);
    if (c->break_crc)
        buf[n - 1] ^= 0x01;
    kp_batch b;
    parse_one(buf, n, &b);
    const char *why = NULL;
    int rc = kp_batch_validate(&b, &why);
    if (rc != 0)
        assert_non_null(why);
    /* why is optional */
    assert_int_equal(kp_batch_validate(&b, NULL), rc);
    return rc;
}

static void test_validate_cases(void **state) {
    (void)state;
    static const vcase cases[] = {
        {"plain", 0, 2, 3, -1, -1, false, 0},
        {"gzip", KP_CODEC_GZIP, 2, 3, -1, -1, false, 0},
        {"snappy", KP_CODEC_SNAPPY, 2, 3, -1, -1, false, 0},
        {"lz4", KP_CODEC_LZ4, 2, 3, -1, -1, false, 0},
        {"zstd", KP_CODEC_ZSTD, 2, 3, -1, -1, false, 0},
        {"idempotent", 0, 2, 3, 5, 0, false, 0},
        {"transactional", KP_ATTR_TRANSACTIONAL, 2, 3, 5, 10, false, 0},
        {"sequence near wrap", 0, 2, 3, 5, INT32_MAX, false, 0},
        {"negative sequence, no producer", 0, 2, 3, -1, -7, false, 0},
        {"unused attribute bits are not checked", 0x40 | 0x80, 2, 3, -1, -1, false, 0},

        {"crc", 0, 2, 3, -1, -1, true, 2},
        {"codec 5", 5, 2, 3, -1, -1, false, 2},
        {"codec 6", 6, 2, 3, -1, -1, false, 2},
        {"codec 7", 7, 2, 3, -1, -1, false, 2},

        {"count 0", 0, -1, 0, -1, -1, false, 87},
        {"count 0, delta 0", 0, 0, 0, -1, -1, false, 87},
        {"count negative", 0, 2, -3, -1, -1, false, 87},
        {"delta negative", 0, -5, 3, -1, -1, false, 87},
        {"count > delta + 1", 0, 1, 3, -1, -1, false, 87},
        {"count < delta + 1", 0, 3, 3, -1, -1, false, 87},
        {"delta INT32_MAX", 0, INT32_MAX, INT32_MIN, -1, -1, false, 87},
        {"delta INT32_MAX, count max", 0, INT32_MAX, INT32_MAX, -1, -1, false, 87},
        {"control", KP_ATTR_CONTROL, 2, 3, -1, -1, false, 87},
        {"control transactional", KP_ATTR_CONTROL | KP_ATTR_TRANSACTIONAL, 2, 3, 5, 0, false, 87},
        {"idempotent, negative sequence", 0, 2, 3, 0, -1, false, 87},
        {"idempotent, INT32_MIN sequence", 0, 2, 3, INT64_MAX, INT32_MIN, false, 87},
        {"log append time", KP_ATTR_LOG_APPEND_TIME, 2, 3, -1, -1, false, 32},

        /* order: CRC, codec, count, control, sequence, timestamp type */
        {"crc before codec", 7, 2, 3, -1, -1, true, 2},
        {"crc before count", 0, 5, 0, -1, -1, true, 2},
        {"crc before control", KP_ATTR_CONTROL, 2, 3, -1, -1, true, 2},
        {"crc before timestamp", KP_ATTR_LOG_APPEND_TIME, 2, 3, -1, -1, true, 2},
        {"codec before count", 6, 5, 0, -1, -1, false, 2},
        {"codec before timestamp", 5 | KP_ATTR_LOG_APPEND_TIME, 2, 3, -1, -1, false, 2},
        {"count before control", KP_ATTR_CONTROL, 5, 3, -1, -1, false, 87},
        {"count before timestamp", KP_ATTR_LOG_APPEND_TIME, 5, 3, -1, -1, false, 87},
        {"control before timestamp", KP_ATTR_CONTROL | KP_ATTR_LOG_APPEND_TIME, 2, 3, -1, -1, false, 87},
        {"sequence before timestamp", KP_ATTR_LOG_APPEND_TIME, 2, 3, 1, -1, false, 87},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = run_vcase(&cases[i]);
        if (rc != cases[i].want)
            fail_msg("case \"%s\": got %d, want %d", cases[i].name, rc, cases[i].want);
    }
}

/* The reasons name the actual problem, so the broker's one log line is useful. */
static void test_validate_reasons(void **state) {
    (void)state;
    uint8_t buf[1024];
    size_t n = build_three(buf, sizeof buf);
    kp_batch b;
    const char *why = NULL;

    buf[n - 1] ^= 0xFF;
    parse_one(buf, n, &b);
    assert_int_equal(kp_batch_validate(&b, &why), 2);
    assert_non_null(strstr(why, "CRC"));
    assert_false(kp_batch_crc_ok(&b));

    n = build_three(buf, sizeof buf);
    buf[17] ^= 0x80; /* the stored CRC itself */
    parse_one(buf, n, &b);
    assert_false(kp_batch_crc_ok(&b));
    assert_int_equal(kp_batch_validate(&b, &why), 2);

    n = build_three(buf, sizeof buf);
    buf[22] = 6;
    recrc(buf, n);
    parse_one(buf, n, &b);
    assert_int_equal(kp_batch_validate(&b, &why), 2);
    assert_non_null(strstr(why, "codec"));

    n = build_three(buf, sizeof buf);
    buf[22] = KP_ATTR_CONTROL;
    recrc(buf, n);
    parse_one(buf, n, &b);
    assert_int_equal(kp_batch_validate(&b, &why), 87);
    assert_non_null(strstr(why, "control"));

    n = build_three(buf, sizeof buf);
    buf[22] = KP_ATTR_LOG_APPEND_TIME;
    recrc(buf, n);
    parse_one(buf, n, &b);
    assert_int_equal(kp_batch_validate(&b, &why), 32);
    assert_non_null(strstr(why, "LogAppendTime"));
}

/* Flipping any single CRC-covered bit is caught; flipping uncovered header bytes is not. */
static void test_crc_coverage(void **state) {
    (void)state;
    uint8_t buf[1024];
    size_t n = build_three(buf, sizeof buf);
    kp_batch b;
    for (size_t i = 0; i < n; i++) {
        if ((i >= 8 && i < 12) || i == 16)
            continue; /* batch_length and magic change framing, not the CRC */
        buf[i] ^= 0x10;
        parse_one(buf, n, &b);
        bool covered = i >= 17; /* the CRC field and everything after it */
        assert_int_equal(kp_batch_crc_ok(&b), !covered);
        buf[i] ^= 0x10;
    }
}

/* ======================= transaction markers ======================= */

/*
 * Written by kafka-clients 4.4.0: MemoryRecords.withEndTransactionMarker(base offset 0,
 * ts 1700000000000, leader epoch 0, pid 1000, epoch 3, EndTransactionMarker(ABORT, 7)).
 */
static const uint8_t java_abort_marker[KP_MARKER_SIZE] = {
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* base offset */
    0x00, 0x00, 0x00, 0x42,                         /* batch length 66 */
    0x00, 0x00, 0x00, 0x00,                         /* leader epoch */
    0x02,                                           /* magic */
    0x59, 0x0c, 0xda, 0x83,                         /* crc */
    0x00, 0x30,                                     /* attributes: transactional | control */
    0x00, 0x00, 0x00, 0x00,                         /* last offset delta */
    0x00, 0x00, 0x01, 0x8b, 0xcf, 0xe5, 0x68, 0x00, /* base timestamp */
    0x00, 0x00, 0x01, 0x8b, 0xcf, 0xe5, 0x68, 0x00, /* max timestamp */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xe8, /* producer id 1000 */
    0x00, 0x03,                                     /* producer epoch */
    0xff, 0xff, 0xff, 0xff,                         /* base sequence -1 */
    0x00, 0x00, 0x00, 0x01,                         /* one record */
    0x20, 0x00, 0x00, 0x00,                         /* length 16, attributes, ts and offset deltas */
    0x08, 0x00, 0x00, 0x00, 0x00,                   /* key: version 0, type 0 (ABORT) */
    0x0c, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07,       /* value: version 0, coordinator epoch 7 */
    0x00,                                           /* no headers */
};

/* The same with COMMIT: the key's type and the CRC change. */
static void java_commit_marker(uint8_t out[KP_MARKER_SIZE]) {
    memcpy(out, java_abort_marker, KP_MARKER_SIZE);
    static const uint8_t crc[4] = {0xad, 0x32, 0x0c, 0xcb};
    memcpy(out + 17, crc, 4);
    out[69] = 0x01;
}

static void test_marker_bytes(void **state) {
    (void)state;
    uint8_t got[KP_MARKER_SIZE], want[KP_MARKER_SIZE];
    memset(got, 0xee, sizeof got); /* every byte is written */
    kp_batch_write_marker(got, 1000, 3, 1700000000000LL, false, 7);
    assert_memory_equal(got, java_abort_marker, KP_MARKER_SIZE);
    java_commit_marker(want);
    memset(got, 0xee, sizeof got);
    kp_batch_write_marker(got, 1000, 3, 1700000000000LL, true, 7);
    assert_memory_equal(got, want, KP_MARKER_SIZE);
    assert_int_equal(crc32c_bitwise(0, got + 21, KP_MARKER_SIZE - 21), get_u32(got + 17));
}

/* A marker parses, reads back as what it marks after the log patches it, and producers may not send one. */
static void test_marker_parse(void **state) {
    (void)state;
    for (int commit = 0; commit < 2; commit++) {
        uint8_t m[KP_MARKER_SIZE];
        kp_batch_write_marker(m, INT64_MAX - 1, INT16_MAX, -1, commit, -1);
        kp_batch b;
        parse_one(m, sizeof m, &b);
        assert_true(kp_batch_crc_ok(&b));
        assert_int_equal(b.attributes, KP_ATTR_TRANSACTIONAL | KP_ATTR_CONTROL);
        assert_true(b.producer_id == INT64_MAX - 1);
        assert_int_equal(b.producer_epoch, INT16_MAX);
        assert_int_equal(b.base_sequence, -1);
        assert_int_equal(b.records_count, 1);
        assert_int_equal(b.last_offset_delta, 0);
        assert_true(b.base_timestamp == -1 && b.max_timestamp == -1);
        assert_int_equal(kp_batch_marker_type(&b), commit);
        const char *why = NULL;
        assert_int_equal(kp_batch_validate(&b, &why), 87);
        assert_non_null(strstr(why, "control"));

        kp_batch_patch(m, 1234567, 9);
        parse_one(m, sizeof m, &b);
        assert_true(kp_batch_crc_ok(&b));
        assert_true(b.base_offset == 1234567);
        assert_int_equal(b.leader_epoch, 9);
        assert_int_equal(kp_batch_marker_type(&b), commit);
    }
}

/* What is not an ABORT or COMMIT marker, one defect at a time; the CRC is not what is tested. */
static void test_marker_type_refuses(void **state) {
    (void)state;
    static const struct {
        const char *name;
        size_t at;
        uint8_t value;
    } cases[] = {
        {"not control", 22, KP_ATTR_TRANSACTIONAL},
        {"not transactional", 22, KP_ATTR_CONTROL},
        {"compressed", 22, KP_ATTR_TRANSACTIONAL | KP_ATTR_CONTROL | KP_CODEC_GZIP},
        {"two records", 60, 2},
        {"no records", 60, 0},
        {"record longer than the batch", 61, 0x22},
        {"record shorter than the batch", 61, 0x1e},
        {"negative record length", 61, 0x01},
        {"null key", 65, 0x01},
        {"key of 3 bytes", 65, 0x06},
        {"negative key version", 66, 0x80},
        {"LEADER_CHANGE", 69, 2},
        {"negative type", 68, 0xff},
        {"value of 5 bytes", 70, 0x0a},
        {"null value", 70, 0x01},
        {"negative value version", 71, 0xff},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t m[KP_MARKER_SIZE];
        kp_batch_write_marker(m, 1000, 3, 1700000000000LL, true, 7);
        m[cases[i].at] = cases[i].value;
        kp_batch b;
        parse_one(m, sizeof m, &b);
        if (kp_batch_marker_type(&b) != -1) fail_msg("case \"%s\": read as a marker", cases[i].name);
    }

    /* a newer key or value version is read as version 0, as Kafka does */
    uint8_t m[KP_MARKER_SIZE];
    kp_batch_write_marker(m, 1000, 3, 1700000000000LL, false, 7);
    m[67] = 1;
    m[72] = 3;
    kp_batch b;
    parse_one(m, sizeof m, &b);
    assert_int_equal(kp_batch_marker_type(&b), 0);

    /* an ordinary batch, and one whose records end before the header says */
    uint8_t buf[1024];
    size_t n = build_three(buf, sizeof buf);
    parse_one(buf, n, &b);
    assert_int_equal(kp_batch_marker_type(&b), -1);
    kp_batch_write_marker(m, 1000, 3, 1700000000000LL, false, 7);
    set_be(m + 8, KP_BATCH_HEADER_SIZE - KP_BATCH_LOG_OVERHEAD, 4);
    parse_one(m, KP_BATCH_HEADER_SIZE, &b);
    assert_int_equal(kp_batch_marker_type(&b), -1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc32c_check_value),
        cmocka_unit_test(test_crc32c_rfc3720_vectors),
        cmocka_unit_test(test_crc32c_incremental),
        cmocka_unit_test(test_crc32c_lengths_and_alignments),
        cmocka_unit_test(test_crc32c_both_paths),
        cmocka_unit_test(test_crc32c_three_lanes),
#ifdef KP_CRC32C_HAVE_HW
        cmocka_unit_test(test_crc32c_lane_shift_constant),
        cmocka_unit_test(test_crc32c_lanes_both_joins),
#endif
        cmocka_unit_test(test_builder_zigzag),
        cmocka_unit_test(test_builder_record_bytes),
        cmocka_unit_test(test_builder_matches_librdkafka),
        cmocka_unit_test(test_parse_built_batch),
        cmocka_unit_test(test_parse_header_fields_big_endian),
        cmocka_unit_test(test_parse_librdkafka_batches),
        cmocka_unit_test(test_next_two_concatenated),
        cmocka_unit_test(test_next_zero_length),
        cmocka_unit_test(test_next_truncated_header),
        cmocka_unit_test(test_next_length_past_end),
        cmocka_unit_test(test_next_huge_and_negative_length),
        cmocka_unit_test(test_next_shorter_than_header),
        cmocka_unit_test(test_next_magic),
        cmocka_unit_test(test_next_pos_past_end),
        cmocka_unit_test(test_patch),
        cmocka_unit_test(test_set_log_append_time),
        cmocka_unit_test(test_set_log_append_time_librdkafka),
        cmocka_unit_test(test_set_log_append_time_short_buffer),
        cmocka_unit_test(test_validate_cases),
        cmocka_unit_test(test_validate_reasons),
        cmocka_unit_test(test_crc_coverage),
        cmocka_unit_test(test_marker_bytes),
        cmocka_unit_test(test_marker_parse),
        cmocka_unit_test(test_marker_type_refuses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
