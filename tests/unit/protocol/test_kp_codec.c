/*
 * Kafka protocol codec: primitives, the schema engine, every registered
 * message at every version, and byte vectors written by hand from the
 * protocol documentation or by Apache Kafka's own serialisers (never
 * produced by our encoder).
 *
 * Error positions: err_pos is the offset of the first byte of what failed
 * (the truncated or invalid primitive, varint, length/count prefix or tag;
 * for a string or bytes cut short, the first byte of the data).
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
#include "kp_errors.h"
#include "kp_msgs.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static bool nullable_at(const kp_field *f, int ver) { return f->null_from != KV_NEVER && ver >= f->null_from; }
static bool in_ver(const kp_field *f, int ver) { return ver >= f->vmin && ver <= f->vmax; }

static void assert_bytes(const uint8_t *got, size_t got_len, const uint8_t *want, size_t want_len) {
    if (got_len != want_len || (want_len && memcmp(got, want, want_len) != 0)) {
        print_error("bytes differ (got %zu, want %zu)\n", got_len, want_len);
        for (size_t i = 0; i < got_len || i < want_len; i++)
            print_error("  [%3zu] got %s%02x  want %s%02x%s\n", i, i < got_len ? "" : "--", i < got_len ? got[i] : 0,
                        i < want_len ? "" : "--", i < want_len ? want[i] : 0,
                        (i < got_len && i < want_len && got[i] == want[i]) ? "" : "   <--");
        fail();
    }
}

/* ===================================================================== */
/* primitives                                                             */
/* ===================================================================== */

static void test_fixed_ints(void **state) {
    (void)state;
    kp_writer w;
    kp_writer_init(&w, 0);
    kp_wr_i8(&w, -2);
    kp_wr_i16(&w, 0x0102);
    kp_wr_i16(&w, -1);
    kp_wr_i32(&w, 0x01020304);
    kp_wr_i32(&w, INT32_MIN);
    kp_wr_i64(&w, 0x0102030405060708LL);
    kp_wr_i64(&w, -2);
    static const uint8_t want[] = {0xfe, 0x01, 0x02, 0xff, 0xff, 0x01, 0x02, 0x03, 0x04, 0x80, 0x00, 0x00, 0x00,
                                   0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
                                   0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe};
    assert_bytes(w.buf, w.len, want, sizeof want);

    kp_reader r;
    kp_reader_init(&r, want, sizeof want);
    int8_t a = 0;
    int16_t b = 0, c = 0;
    int32_t d = 0, e = 0;
    int64_t f = 0, g = 0;
    assert_true(kp_rd_i8(&r, &a) && kp_rd_i16(&r, &b) && kp_rd_i16(&r, &c) && kp_rd_i32(&r, &d) && kp_rd_i32(&r, &e) &&
                kp_rd_i64(&r, &f) && kp_rd_i64(&r, &g));
    assert_int_equal(a, -2);
    assert_int_equal(b, 0x0102);
    assert_int_equal(c, -1);
    assert_int_equal(d, 0x01020304);
    assert_int_equal(e, INT32_MIN);
    assert_true(f == 0x0102030405060708LL);
    assert_true(g == -2);
    assert_int_equal(kp_rd_left(&r), 0);
    assert_null(r.err);

    /* truncated int32: 3 bytes left; the error points at the int's first byte */
    kp_reader_init(&r, want, 8);
    r.base = 1000;
    assert_true(kp_rd_i8(&r, &a) && kp_rd_i16(&r, &b) && kp_rd_i16(&r, &c));
    assert_false(kp_rd_i32(&r, &d));
    assert_string_equal(r.err, "truncated");
    assert_int_equal(r.err_pos, 1005);
    /* the first error sticks, later reads fail without moving it */
    assert_false(kp_rd_i8(&r, &a));
    assert_int_equal(r.err_pos, 1005);
    kp_writer_free(&w);
}

typedef struct { uint64_t v; uint8_t b[10]; size_t n; } uv_case;
static const uv_case uv_cases[] = {
    {0, {0x00}, 1},
    {1, {0x01}, 1},
    {127, {0x7f}, 1},
    {128, {0x80, 0x01}, 2},
    {300, {0xac, 0x02}, 2},
    {16383, {0xff, 0x7f}, 2},
    {16384, {0x80, 0x80, 0x01}, 3},
    {2097151, {0xff, 0xff, 0x7f}, 3},
    {2097152, {0x80, 0x80, 0x80, 0x01}, 4},
    {268435455, {0xff, 0xff, 0xff, 0x7f}, 4},
    {268435456, {0x80, 0x80, 0x80, 0x80, 0x01}, 5},
    {2147483647, {0xff, 0xff, 0xff, 0xff, 0x07}, 5},
    {4294967295u, {0xff, 0xff, 0xff, 0xff, 0x0f}, 5},
    {34359738368ull, {0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, 6},
    {72057594037927935ull, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, 8},
    {9223372036854775807ull, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, 9},
    {9223372036854775808ull, {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, 10},
    {UINT64_MAX, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, 10},
};

static void test_uvarint(void **state) {
    (void)state;
    for (size_t i = 0; i < N(uv_cases); i++) {
        const uv_case *c = &uv_cases[i];
        kp_writer w;
        kp_writer_init(&w, 0);
        kp_wr_uvarint(&w, c->v);
        assert_bytes(w.buf, w.len, c->b, c->n);
        assert_int_equal(kp_uvarint_len(c->v), c->n);
        kp_writer cw = {.counting = true};
        kp_wr_uvarint(&cw, c->v);
        assert_int_equal(cw.len, c->n);
        kp_reader r;
        kp_reader_init(&r, c->b, c->n);
        uint64_t v = 0;
        assert_true(kp_rd_uvarint(&r, &v));
        assert_true(v == c->v);
        assert_int_equal(kp_rd_left(&r), 0);
        /* every cut of it is truncated, reported at its first byte */
        for (size_t cut = 0; cut < c->n; cut++) {
            uint8_t buf[12] = {0x55};
            memcpy(buf + 1, c->b, cut);
            kp_reader_init(&r, buf, 1 + cut);
            r.base = 40;
            int8_t x;
            assert_true(kp_rd_i8(&r, &x));
            assert_false(kp_rd_uvarint(&r, &v));
            assert_string_equal(r.err, "truncated");
            assert_int_equal(r.err_pos, 41);
        }
        kp_writer_free(&w);
    }
}

static void test_uvarint_overlong(void **state) {
    (void)state;
    uint64_t v;
    kp_reader r;
    /* an 11-byte varint (ten continuation bytes) */
    static const uint8_t eleven[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00};
    kp_reader_init(&r, eleven, sizeof eleven);
    assert_false(kp_rd_uvarint(&r, &v));
    assert_non_null(r.err);
    assert_int_equal(r.err_pos, 0);
    /* 10 bytes whose last byte carries bits beyond 64 */
    static const uint8_t over[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
    kp_reader_init(&r, over, sizeof over);
    r.base = 7;
    assert_false(kp_rd_uvarint(&r, &v));
    assert_non_null(r.err);
    assert_int_equal(r.err_pos, 7);
    static const uint8_t over2[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f};
    kp_reader_init(&r, over2, sizeof over2);
    assert_false(kp_rd_uvarint(&r, &v));
    /* a redundant (non-minimal) encoding within 10 bytes is accepted */
    static const uint8_t redundant[] = {0x81, 0x80, 0x80, 0x00};
    kp_reader_init(&r, redundant, sizeof redundant);
    assert_true(kp_rd_uvarint(&r, &v));
    assert_true(v == 1);
    assert_int_equal(kp_rd_left(&r), 0);
}

typedef struct { int64_t v; uint8_t b[10]; size_t n; } zz_case;
static const zz_case varint_cases[] = {
    {0, {0x00}, 1},
    {-1, {0x01}, 1},
    {1, {0x02}, 1},
    {-2, {0x03}, 1},
    {63, {0x7e}, 1},
    {-64, {0x7f}, 1},
    {64, {0x80, 0x01}, 2},
    {-65, {0x81, 0x01}, 2},
    {300, {0xd8, 0x04}, 2},
    {INT32_MAX, {0xfe, 0xff, 0xff, 0xff, 0x0f}, 5},
    {INT32_MIN, {0xff, 0xff, 0xff, 0xff, 0x0f}, 5},
};
static const zz_case varlong_cases[] = {
    {0, {0x00}, 1},
    {-1, {0x01}, 1},
    {1, {0x02}, 1},
    {2147483648LL, {0x80, 0x80, 0x80, 0x80, 0x10}, 5},
    {4294967296LL, {0x80, 0x80, 0x80, 0x80, 0x20}, 5},
    {-4294967297LL, {0x81, 0x80, 0x80, 0x80, 0x20}, 5},
    {INT64_MAX, {0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, 10},
    {INT64_MIN, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, 10},
};

static void test_zigzag(void **state) {
    (void)state;
    for (size_t i = 0; i < N(varint_cases); i++) {
        const zz_case *c = &varint_cases[i];
        kp_writer w;
        kp_writer_init(&w, 0);
        kp_wr_varint(&w, (int32_t)c->v);
        assert_bytes(w.buf, w.len, c->b, c->n);
        kp_reader r;
        kp_reader_init(&r, c->b, c->n);
        int32_t v;
        assert_true(kp_rd_varint(&r, &v));
        assert_true(v == c->v);
        assert_int_equal(kp_rd_left(&r), 0);
        kp_writer_free(&w);
    }
    for (size_t i = 0; i < N(varlong_cases); i++) {
        const zz_case *c = &varlong_cases[i];
        kp_writer w;
        kp_writer_init(&w, 0);
        kp_wr_varlong(&w, c->v);
        assert_bytes(w.buf, w.len, c->b, c->n);
        kp_reader r;
        kp_reader_init(&r, c->b, c->n);
        int64_t v;
        assert_true(kp_rd_varlong(&r, &v));
        assert_true(v == c->v);
        assert_int_equal(kp_rd_left(&r), 0);
        kp_writer_free(&w);
    }
    /* sweep: powers of two, their neighbours and negations survive both ways */
    for (int s = 0; s < 64; s++) {
        for (int d = -1; d <= 1; d++) {
            uint64_t base = (uint64_t)1 << s;
            uint64_t u = base + (uint64_t)(int64_t)d;
            int64_t vals[2] = {(int64_t)u, (int64_t)(0 - u)};
            for (int k = 0; k < 2; k++) {
                kp_writer w;
                kp_writer_init(&w, 0);
                kp_wr_varlong(&w, vals[k]);
                kp_wr_uvarint(&w, (uint64_t)vals[k]);
                bool fits = vals[k] >= INT32_MIN && vals[k] <= INT32_MAX;
                if (fits) kp_wr_varint(&w, (int32_t)vals[k]);
                kp_reader r;
                kp_reader_init(&r, w.buf, w.len);
                int64_t a;
                uint64_t b;
                int32_t c;
                assert_true(kp_rd_varlong(&r, &a));
                assert_true(a == vals[k]);
                assert_true(kp_rd_uvarint(&r, &b));
                assert_true(b == (uint64_t)vals[k]);
                if (fits) {
                    assert_true(kp_rd_varint(&r, &c));
                    assert_true(c == vals[k]);
                }
                assert_int_equal(kp_rd_left(&r), 0);
                kp_writer_free(&w);
            }
        }
    }
}

static void test_zigzag_overlong(void **state) {
    (void)state;
    kp_reader r;
    int32_t v32;
    int64_t v64;
    /* int32 varints are at most 5 bytes (Kafka's ByteUtils.readVarint) */
    static const uint8_t six[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x00};
    kp_reader_init(&r, six, sizeof six);
    assert_false(kp_rd_varint(&r, &v32));
    assert_non_null(r.err);
    assert_int_equal(r.err_pos, 0);
    /* 5 bytes holding 33 bits: outside int32 */
    static const uint8_t big[] = {0x00, 0xff, 0xff, 0xff, 0xff, 0x1f};
    kp_reader_init(&r, big, sizeof big);
    int8_t x;
    assert_true(kp_rd_i8(&r, &x));
    assert_false(kp_rd_varint(&r, &v32));
    assert_non_null(r.err);
    assert_int_equal(r.err_pos, 1);
    /* the same bytes are a fine varlong */
    kp_reader_init(&r, big + 1, sizeof big - 1);
    assert_true(kp_rd_varlong(&r, &v64));
    assert_true(v64 == -4294967296LL);
    /* varlongs are at most 10 bytes, and the 10th carries one bit */
    static const uint8_t eleven[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x81, 0x00};
    kp_reader_init(&r, eleven, sizeof eleven);
    assert_false(kp_rd_varlong(&r, &v64));
    assert_int_equal(r.err_pos, 0);
    static const uint8_t over[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x03};
    kp_reader_init(&r, over, sizeof over);
    assert_false(kp_rd_varlong(&r, &v64));
    /* truncated in the middle */
    kp_reader_init(&r, varlong_cases[6].b, 9);
    assert_false(kp_rd_varlong(&r, &v64));
    assert_string_equal(r.err, "truncated");
    assert_int_equal(r.err_pos, 0);
}

static void test_raw_and_strings(void **state) {
    (void)state;
    kp_str s = kp_str_c("abc");
    assert_int_equal(s.len, 3);
    assert_true(kp_str_eq(s, "abc"));
    assert_false(kp_str_eq(s, "ab"));
    assert_false(kp_str_eq(s, NULL));
    assert_true(kp_str_eq(KP_STR_NULL, NULL));
    assert_false(kp_str_eq(KP_STR_NULL, ""));
    assert_true(kp_str_eq((kp_str){"", 0}, ""));
    assert_int_equal(kp_str_c(NULL).len, -1);
    char *d = kp_str_dup((kp_str){"xyz", 2});
    assert_string_equal(d, "xy");
    free(d);
    assert_null(kp_str_dup(KP_STR_NULL));

    static const uint8_t buf[] = {1, 2, 3};
    kp_reader r;
    kp_reader_init(&r, buf, sizeof buf);
    const uint8_t *p;
    assert_true(kp_rd_raw(&r, 2, &p));
    assert_ptr_equal(p, buf);
    assert_false(kp_rd_raw(&r, 2, &p));
    assert_int_equal(r.err_pos, 2);

    kp_arena a = {0};
    for (int i = 0; i < 100; i++) {
        uint8_t *m = kp_arena_alloc(&a, (size_t)i * 97 + 1);
        for (int k = 0; k < i * 97 + 1; k++) assert_int_equal(m[k], 0);
        memset(m, 0xab, (size_t)i * 97 + 1);
    }
    kp_arena_free(&a);
    assert_null(a.head);
}

/* ===================================================================== */
/* a test schema exercising every encoding of the engine                  */
/* ===================================================================== */

typedef struct t_inner {
    int32_t a;
    kp_str s;
} t_inner;
static const kp_field t_inner_fields[] = {
    KF(KP_I32, t_inner, a, 0, KV_MAX),
    KF(KP_STR, t_inner, s, 0, KV_MAX),
};
static KSCHEMA(t_inner_schema, t_inner, t_inner_fields);

typedef struct t_msg {
    int16_t i16;
    kp_str s;               /* string, never nullable */
    kp_str ns;              /* nullable string */
    kp_bytes b;             /* bytes, never nullable */
    kp_bytes nb;            /* nullable bytes */
    KP_ARR(int32_t) ia;     /* nullable from v1 */
    KP_ARR(t_inner) sa;     /* array of structs */
    KP_ARR(kp_str) stra;    /* nullable array of (never nullable) strings */
    int32_t t0;             /* tag 0, v1+ */
    kp_str t1;              /* tag 1, v1+, nullable, default null */
    int64_t t5;             /* tag 5, v1+ */
    int32_t t7;             /* tag 7, v2+ only */
} t_msg;
static const kp_field t_msg_fields[] = {
    KF(KP_I16, t_msg, i16, 0, KV_MAX),
    KF(KP_STR, t_msg, s, 0, KV_MAX),
    KF(KP_STR, t_msg, ns, 0, KV_MAX, .null_from = 0, .dflt = -1),
    KF(KP_BYTES, t_msg, b, 0, KV_MAX),
    KF(KP_BYTES, t_msg, nb, 0, KV_MAX, .null_from = 0),
    KFP(KP_I32, t_msg, ia, 0, KV_MAX, .null_from = 1),
    KFA(t_msg, sa, 0, KV_MAX, t_inner_schema),
    KFP(KP_STR, t_msg, stra, 0, KV_MAX, .null_from = 0),
    KF(KP_I32, t_msg, t0, 1, KV_MAX, .tag = 0, .dflt = -1),
    KF(KP_STR, t_msg, t1, 1, KV_MAX, .tag = 1, .null_from = 1, .dflt = -1),
    KF(KP_I64, t_msg, t5, 1, KV_MAX, .tag = 5),
    KF(KP_I32, t_msg, t7, 2, KV_MAX, .tag = 7, .dflt = 9),
};
static KSCHEMA(t_msg_schema, t_msg, t_msg_fields);

/*
 * Vectors are built item by item so a truncation test can predict where the
 * decoder must report the failure: the item holding the first missing byte,
 * or an array count whose elements cannot all fit in what is left.
 */
typedef struct vitem {
    size_t start, end;
    int64_t count; /* >= 0: an array count; the decoder checks count <= bytes left */
} vitem;
typedef struct vbuild {
    uint8_t b[256];
    size_t n;
    vitem it[96];
    size_t nit;
} vbuild;

static void vb_item(vbuild *v, int64_t count, size_t n, ...) {
    va_list ap;
    va_start(ap, n);
    v->it[v->nit].start = v->n;
    for (size_t i = 0; i < n; i++) v->b[v->n++] = (uint8_t)va_arg(ap, int);
    va_end(ap);
    v->it[v->nit].end = v->n;
    v->it[v->nit].count = count;
    if (n) v->nit++;
}
#define VB(v, ...) vb_item((v), -1, (sizeof((int[]){__VA_ARGS__}) / sizeof(int)), __VA_ARGS__)
#define VBC(v, cnt, ...) vb_item((v), (cnt), (sizeof((int[]){__VA_ARGS__}) / sizeof(int)), __VA_ARGS__)

static size_t vb_expected_err(const vbuild *v, size_t cut) {
    for (size_t i = 0; i < v->nit; i++) {
        const vitem *it = &v->it[i];
        if (cut < it->end) return it->start;
        if (it->count >= 0 && (int64_t)(cut - it->end) < it->count) return it->start;
    }
    return (size_t)-1;
}

/* v0 (classic): i16=0x0102 s="ab" ns=null b="" nb=null ia=[1,2] sa=[{7,""}] stra=["x"] */
static void build_t_v0(vbuild *v) {
    memset(v, 0, sizeof *v);
    VB(v, 0x01, 0x02);                         /* i16 */
    VB(v, 0x00, 0x02);                         /* s: int16 length 2 */
    VB(v, 'a', 'b');
    VB(v, 0xff, 0xff);                         /* ns: null */
    VB(v, 0x00, 0x00, 0x00, 0x00);             /* b: int32 length 0 */
    VB(v, 0xff, 0xff, 0xff, 0xff);             /* nb: null */
    VBC(v, 2, 0x00, 0x00, 0x00, 0x02);         /* ia: 2 elements */
    VB(v, 0x00, 0x00, 0x00, 0x01);
    VB(v, 0x00, 0x00, 0x00, 0x02);
    VBC(v, 1, 0x00, 0x00, 0x00, 0x01);         /* sa: 1 element */
    VB(v, 0x00, 0x00, 0x00, 0x07);             /*   a */
    VB(v, 0x00, 0x00);                         /*   s: "" */
    VBC(v, 1, 0x00, 0x00, 0x00, 0x01);         /* stra: 1 element */
    VB(v, 0x00, 0x01);
    VB(v, 'x');
}

/* v1 (flexible): i16=-1 s="" ns="n" b={1,2} nb=null ia=null sa=[{1,"q"},{2,""}] stra=[]
 * t0=300 t1="z" t5=-1 */
static void build_t_v1(vbuild *v, bool unknown_tags) {
    memset(v, 0, sizeof *v);
    VB(v, 0xff, 0xff);                         /* i16 */
    VB(v, 0x01);                               /* s: compact "" */
    VB(v, 0x02);                               /* ns: compact length 1+1 */
    VB(v, 'n');
    VB(v, 0x03);                               /* b: 2+1 */
    VB(v, 0x01, 0x02);
    VB(v, 0x00);                               /* nb: null */
    VB(v, 0x00);                               /* ia: null */
    VBC(v, 2, 0x03);                           /* sa: 2 elements */
    VB(v, 0x00, 0x00, 0x00, 0x01);             /*   [0].a */
    VB(v, 0x02);                               /*   [0].s */
    VB(v, 'q');
    if (unknown_tags) {
        VB(v, 0x01);                           /*   [0] tagged fields: 1 */
        VB(v, 0x09);                           /*     unknown tag 9 */
        VB(v, 0x00);                           /*     size 0 */
    } else {
        VB(v, 0x00);                           /*   [0] no tagged fields */
    }
    VB(v, 0x00, 0x00, 0x00, 0x02);             /*   [1].a */
    VB(v, 0x01);                               /*   [1].s: "" */
    VB(v, 0x00);                               /*   [1] no tagged fields */
    VBC(v, 0, 0x01);                           /* stra: empty */
    VB(v, unknown_tags ? 0x05 : 0x03);         /* tagged fields */
    VB(v, 0x00);                               /*   tag 0 */
    VB(v, 0x04);                               /*   size 4 */
    VB(v, 0x00, 0x00, 0x01, 0x2c);             /*   t0 = 300 */
    VB(v, 0x01);                               /*   tag 1 */
    VB(v, 0x02);                               /*   size 2 */
    VB(v, 0x02, 'z');                          /*   t1 = "z" */
    if (unknown_tags) {
        VB(v, 0x03);                           /*   unknown tag 3 */
        VB(v, 0x02);
        VB(v, 0xaa, 0xbb);
        VB(v, 0x04);                           /*   unknown tag 4, empty */
        VB(v, 0x00);
    }
    VB(v, 0x05);                               /*   tag 5 */
    VB(v, 0x08);                               /*   size 8 */
    VB(v, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff);
}

static void check_t_v0(const t_msg *m) {
    assert_int_equal(m->i16, 0x0102);
    assert_true(kp_str_eq(m->s, "ab"));
    assert_int_equal(m->ns.len, -1);
    assert_int_equal(m->b.len, 0);
    assert_int_equal(m->nb.len, -1);
    assert_int_equal(m->ia.n, 2);
    assert_int_equal(m->ia.v[0], 1);
    assert_int_equal(m->ia.v[1], 2);
    assert_int_equal(m->sa.n, 1);
    assert_int_equal(m->sa.v[0].a, 7);
    assert_int_equal(m->sa.v[0].s.len, 0);
    assert_int_equal(m->stra.n, 1);
    assert_true(kp_str_eq(m->stra.v[0], "x"));
    /* tagged fields do not exist in v0: defaults */
    assert_int_equal(m->t0, -1);
    assert_int_equal(m->t1.len, -1);
    assert_true(m->t5 == 0);
    assert_int_equal(m->t7, 9);
}

static void check_t_v1(const t_msg *m) {
    assert_int_equal(m->i16, -1);
    assert_int_equal(m->s.len, 0);
    assert_non_null(m->s.p);
    assert_true(kp_str_eq(m->ns, "n"));
    assert_int_equal(m->b.len, 2);
    assert_memory_equal(m->b.p, "\x01\x02", 2);
    assert_int_equal(m->nb.len, -1);
    assert_int_equal(m->ia.n, -1);
    assert_int_equal(m->sa.n, 2);
    assert_int_equal(m->sa.v[0].a, 1);
    assert_true(kp_str_eq(m->sa.v[0].s, "q"));
    assert_int_equal(m->sa.v[1].a, 2);
    assert_true(kp_str_eq(m->sa.v[1].s, ""));
    assert_int_equal(m->stra.n, 0);
    assert_int_equal(m->t0, 300);
    assert_true(kp_str_eq(m->t1, "z"));
    assert_true(m->t5 == -1);
    assert_int_equal(m->t7, 9);
}

static bool decode_t(const uint8_t *b, size_t n, int ver, t_msg *m, kp_arena *a, kp_reader *r) {
    kp_reader_init(r, b, n);
    memset(m, 0x5a, sizeof *m); /* garbage: decode must set every field */
    return kp_decode(r, &t_msg_schema, ver, ver >= 1, m, a);
}

static void encode_t_expect(const t_msg *m, int ver, const uint8_t *want, size_t n) {
    kp_writer w;
    kp_writer_init(&w, 0);
    kp_encode(&w, &t_msg_schema, ver, ver >= 1, m);
    assert_bytes(w.buf, w.len, want, n);
    assert_int_equal(kp_size(&t_msg_schema, ver, ver >= 1, m), n);
    kp_writer_free(&w);
}

static void test_schema_classic_vector(void **state) {
    (void)state;
    vbuild v;
    build_t_v0(&v);
    kp_arena a = {0};
    kp_reader r;
    t_msg m;
    assert_true(decode_t(v.b, v.n, 0, &m, &a, &r));
    assert_null(r.err);
    assert_int_equal(kp_rd_left(&r), 0);
    check_t_v0(&m);
    encode_t_expect(&m, 0, v.b, v.n);
    kp_arena_free(&a);
}

static void test_schema_flex_vector(void **state) {
    (void)state;
    vbuild v;
    build_t_v1(&v, false);
    kp_arena a = {0};
    kp_reader r;
    t_msg m;
    assert_true(decode_t(v.b, v.n, 1, &m, &a, &r));
    assert_null(r.err);
    assert_int_equal(kp_rd_left(&r), 0);
    check_t_v1(&m);
    encode_t_expect(&m, 1, v.b, v.n);

    /* unknown tags (3, 4 at top level, 9 in an element) are skipped */
    vbuild u;
    build_t_v1(&u, true);
    t_msg m2;
    assert_true(decode_t(u.b, u.n, 1, &m2, &a, &r));
    assert_null(r.err);
    assert_int_equal(kp_rd_left(&r), 0);
    check_t_v1(&m2);
    encode_t_expect(&m2, 1, v.b, v.n); /* unknown tags are not kept */
    kp_arena_free(&a);
}

static void test_schema_defaults_not_emitted(void **state) {
    (void)state;
    /* tagged fields at their defaults are left out: empty section = one 0x00 byte */
    t_msg m;
    memset(&m, 0, sizeof m);
    kp_defaults(&t_msg_schema, 1, &m);
    assert_int_equal(m.t0, -1);
    assert_int_equal(m.t1.len, -1);
    assert_int_equal(m.ns.len, -1);
    assert_int_equal(m.s.len, 0);
    /* null for never-nullable fields goes out as empty */
    m.s = KP_STR_NULL;
    m.b = KP_STR_NULL;
    static const uint8_t want[] = {
        0x00, 0x00, /* i16 */
        0x01,       /* s: "" */
        0x00,       /* ns: null */
        0x01,       /* b: empty */
        0x01,       /* nb: empty (default of a nullable bytes without "null" default) */
        0x01,       /* ia: empty */
        0x01,       /* sa: empty */
        0x01,       /* stra: empty */
        0x00,       /* no tagged fields */
    };
    encode_t_expect(&m, 1, want, sizeof want);
    /* t1 = "" differs from its null default: it goes out */
    m.t1 = (kp_str){"", 0};
    static const uint8_t want2[] = {0x00, 0x00, 0x01, 0x00, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01};
    encode_t_expect(&m, 1, want2, sizeof want2);
    /* in classic versions the same struct writes null-able nulls as -1 and non-nullable as empty */
    m.ia.n = -1; /* ia is not nullable in v0: written as an empty array */
    m.stra.n = -1;
    static const uint8_t want3[] = {0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                                    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff};
    encode_t_expect(&m, 0, want3, sizeof want3);
}

static void test_schema_long_string(void **state) {
    (void)state;
    /* a string longer than 32767 bytes cannot be said in Kafka: it is cut, never wrapped */
    char *big = malloc(40000);
    memset(big, 'a', 40000);
    for (int ver = 0; ver <= 1; ver++) {
        t_msg m;
        memset(&m, 0, sizeof m);
        kp_defaults(&t_msg_schema, ver, &m);
        m.s = (kp_str){big, 40000};
        m.b = (kp_str){big, 40000}; /* bytes have no such limit */
        kp_writer w;
        kp_writer_init(&w, 0);
        kp_encode(&w, &t_msg_schema, ver, ver >= 1, &m);
        assert_int_equal(kp_size(&t_msg_schema, ver, ver >= 1, &m), w.len);
        if (ver == 0) {
            assert_int_equal(w.buf[2], 0x7f);
            assert_int_equal(w.buf[3], 0xff);
        } else {
            /* compact 32767 + 1 = 32768 = 0x80 0x80 0x02 */
            assert_int_equal(w.buf[2], 0x80);
            assert_int_equal(w.buf[3], 0x80);
            assert_int_equal(w.buf[4], 0x02);
        }
        kp_arena a = {0};
        kp_reader r;
        t_msg d;
        assert_true(decode_t(w.buf, w.len, ver, &d, &a, &r));
        assert_int_equal(kp_rd_left(&r), 0);
        assert_int_equal(d.s.len, 32767);
        assert_int_equal(d.b.len, 40000);
        kp_arena_free(&a);
        kp_writer_free(&w);
    }
    free(big);
}

static void expect_fail(const uint8_t *b, size_t n, int ver, const char *why, size_t pos, const char *field) {
    kp_arena a = {0};
    kp_reader r;
    t_msg m;
    bool ok = decode_t(b, n, ver, &m, &a, &r);
    if (ok || !r.err || (why && strcmp(r.err, why) != 0) || r.err_pos != pos ||
        (field && (!r.err_field || strcmp(r.err_field, field) != 0)))
        fail_msg("decode: ok=%d err=%s (want %s) pos=%zu (want %zu) field=%s (want %s)", ok, r.err ? r.err : "-",
                 why ? why : "any", r.err_pos, pos, r.err_field ? r.err_field : "-", field ? field : "any");
    kp_arena_free(&a);
}

static void test_schema_truncation_everywhere(void **state) {
    (void)state;
    vbuild vs[3];
    build_t_v0(&vs[0]);
    build_t_v1(&vs[1], false);
    build_t_v1(&vs[2], true);
    for (int k = 0; k < 3; k++) {
        int ver = k ? 1 : 0;
        for (size_t cut = 0; cut < vs[k].n; cut++) {
            uint8_t *b = malloc(cut ? cut : 1); /* exact size: ASan sees any over-read */
            memcpy(b, vs[k].b, cut);
            expect_fail(b, cut, ver, NULL, vb_expected_err(&vs[k], cut), NULL);
            free(b);
        }
    }
}

static void test_schema_bad_lengths(void **state) {
    (void)state;
    vbuild v;
    uint8_t b[256];

    /* classic: null in the never-nullable string s, reported at its length */
    build_t_v0(&v);
    memcpy(b, v.b, v.n);
    b[2] = 0xff, b[3] = 0xff;
    expect_fail(b, v.n, 0, "null in a non-nullable field", 2, "s");
    /* classic: -2 is not a length */
    b[2] = 0xff, b[3] = 0xfe;
    expect_fail(b, v.n, 0, "negative length", 2, "s");
    memcpy(b, v.b, v.n);
    b[6] = 0xff, b[7] = 0xfe; /* ns */
    expect_fail(b, v.n, 0, "negative length", 6, "ns");
    memcpy(b, v.b, v.n);
    b[8] = 0xff, b[9] = 0xff, b[10] = 0xff, b[11] = 0xfe; /* b: int32 -2 */
    expect_fail(b, v.n, 0, "negative length", 8, "b");
    memcpy(b, v.b, v.n);
    b[8] = 0x80, b[9] = 0x00, b[10] = 0x00, b[11] = 0x00; /* b: INT32_MIN */
    expect_fail(b, v.n, 0, "negative length", 8, "b");
    memcpy(b, v.b, v.n);
    b[8] = 0xff, b[9] = 0xff, b[10] = 0xff, b[11] = 0xff; /* b: null, not nullable */
    expect_fail(b, v.n, 0, "null in a non-nullable field", 8, "b");
    /* ia: null only allowed from v1 */
    memcpy(b, v.b, v.n);
    b[16] = 0xff, b[17] = 0xff, b[18] = 0xff, b[19] = 0xff;
    expect_fail(b, v.n, 0, "null array in a non-nullable field", 16, "ia");
    b[19] = 0xfe;
    expect_fail(b, v.n, 0, "negative array count", 16, "ia");
    /* ia: count larger than the bytes left */
    memcpy(b, v.b, v.n);
    b[16] = 0x7f, b[17] = 0xff, b[18] = 0xff, b[19] = 0xff;
    expect_fail(b, v.n, 0, "array count exceeds the remaining bytes", 16, "ia");
    b[16] = 0x00, b[17] = 0x00, b[18] = 0x00, b[19] = (uint8_t)(v.n - 20 + 1);
    expect_fail(b, v.n, 0, "array count exceeds the remaining bytes", 16, "ia");
    /* stra is nullable, its string elements are not */
    memcpy(b, v.b, v.n);
    b[v.n - 3] = 0xff, b[v.n - 2] = 0xff;
    expect_fail(b, v.n - 1, 0, "null in a non-nullable field", v.n - 3, "stra");
    /* string data running past the end: reported where the data starts */
    memcpy(b, v.b, v.n);
    b[3] = 0x40;
    expect_fail(b, v.n, 0, "truncated", 4, "s");

    /* flexible: compact length beyond int32 */
    build_t_v1(&v, false);
    memcpy(b, v.b, v.n);
    uint8_t big[] = {0xff, 0xff, 0xff, 0xff, 0x0f};
    memcpy(b + 2, big, 5);
    memcpy(b + 7, v.b + 3, v.n - 3);
    expect_fail(b, v.n + 4, 1, "length out of range", 2, "s");
    /* compact: null for the never-nullable s */
    memcpy(b, v.b, v.n);
    b[2] = 0x00;
    expect_fail(b, v.n, 1, "null in a non-nullable field", 2, "s");
    /* compact array count beyond what is left: sa says 65535 */
    uint8_t c[300];
    assert_int_equal(v.b[10], 0x03);
    memcpy(c, v.b, 10);
    c[10] = 0x80, c[11] = 0x80, c[12] = 0x04;
    memcpy(c + 13, v.b + 11, v.n - 11);
    expect_fail(c, v.n + 2, 1, "array count exceeds the remaining bytes", 10, "sa");
    /* a varint length longer than 10 bytes */
    memcpy(c, v.b, 2);
    memset(c + 2, 0x80, 11);
    c[13] = 0x01;
    memcpy(c + 14, v.b + 3, v.n - 3);
    expect_fail(c, v.n + 11, 1, NULL, 2, "s");
}

/* offset of the top-level tagged section in build_t_v1(false) */
static size_t t_v1_tags_at(const vbuild *v) { return v->n - 21; }

static void test_schema_tags(void **state) {
    (void)state;
    vbuild v;
    build_t_v1(&v, false);
    size_t t = t_v1_tags_at(&v);
    assert_int_equal(v.b[t], 0x03);
    assert_int_equal(v.b[t + 1], 0x00);
    uint8_t b[256];

    /* out of order: tag 5 before tag 0 */
    memcpy(b, v.b, t);
    size_t n = t;
    static const uint8_t ooo[] = {0x02, 0x05, 0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                  0x00, 0x04, 0x00, 0x00, 0x01, 0x2c};
    memcpy(b + n, ooo, sizeof ooo);
    expect_fail(b, n + sizeof ooo, 1, "tagged fields out of order", t + 11, NULL);
    /* the same tag twice */
    static const uint8_t dup[] = {0x02, 0x00, 0x04, 0x00, 0x00, 0x01, 0x2c, 0x00, 0x04, 0x00, 0x00, 0x01, 0x2d};
    memcpy(b + n, dup, sizeof dup);
    expect_fail(b, n + sizeof dup, 1, "tagged fields out of order", t + 7, NULL);
    /* unknown tags out of order are rejected too */
    static const uint8_t ooo2[] = {0x02, 0x09, 0x00, 0x07, 0x00};
    memcpy(b + n, ooo2, sizeof ooo2);
    expect_fail(b, n + sizeof ooo2, 1, "tagged fields out of order", t + 3, NULL);
    /* a size running past the end */
    static const uint8_t longsz[] = {0x01, 0x07, 0x05, 0xaa, 0xbb};
    memcpy(b + n, longsz, sizeof longsz);
    expect_fail(b, n + sizeof longsz, 1, "truncated", t + 3, NULL);
    /* a known tag whose payload is malformed: error inside the payload, frame-relative */
    static const uint8_t badt1[] = {0x01, 0x01, 0x02, 0x05, 'z'};
    memcpy(b + n, badt1, sizeof badt1);
    expect_fail(b, n + sizeof badt1, 1, "truncated", t + 4, "t1");
    /* a huge tag number */
    static const uint8_t hugetag[] = {0x01, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x00};
    memcpy(b + n, hugetag, sizeof hugetag);
    expect_fail(b, n + sizeof hugetag, 1, NULL, t + 1, NULL);
    /* only tag 0 present: the other tagged fields keep their defaults */
    static const uint8_t only[] = {0x01, 0x00, 0x04, 0x00, 0x00, 0x01, 0x2c};
    memcpy(b + n, only, sizeof only);
    kp_arena a = {0};
    kp_reader r;
    t_msg m;
    assert_true(decode_t(b, n + sizeof only, 1, &m, &a, &r));
    assert_int_equal(m.t0, 300);
    assert_int_equal(m.t1.len, -1);
    assert_true(m.t5 == 0);
    /* a tag is only known in the versions its field exists in: tag 7 is unknown at v1 */
    static const uint8_t t7[] = {0x01, 0x07, 0x04, 0x00, 0x00, 0x00, 0x2a};
    memcpy(b + n, t7, sizeof t7);
    assert_true(decode_t(b, n + sizeof t7, 1, &m, &a, &r));
    assert_int_equal(m.t7, 9);
    assert_int_equal(kp_rd_left(&r), 0);
    assert_true(decode_t(b, n + sizeof t7, 2, &m, &a, &r));
    assert_int_equal(m.t7, 42);
    assert_int_equal(m.t0, -1);
    kp_arena_free(&a);
}

/* ===================================================================== */
/* request and response headers                                           */
/* ===================================================================== */

static void test_request_header(void **state) {
    (void)state;
    kp_reader r;
    kp_req_header h;
    /* v1: key 3, version 9, correlation 42, client_id "cli" */
    static const uint8_t v1[] = {0x00, 0x03, 0x00, 0x09, 0x00, 0x00, 0x00, 0x2a, 0x00, 0x03, 'c', 'l', 'i', 0xee};
    kp_reader_init(&r, v1, sizeof v1);
    assert_true(kp_decode_req_header(&r, false, &h));
    assert_int_equal(h.api_key, 3);
    assert_int_equal(h.api_version, 9);
    assert_int_equal(h.correlation_id, 42);
    assert_true(kp_str_eq(h.client_id, "cli"));
    assert_int_equal(kp_rd_left(&r), 1);
    /* v2: client_id stays an int16-length string, then tagged fields */
    static const uint8_t v2[] = {0x00, 0x03, 0x00, 0x09, 0x00, 0x00, 0x00, 0x2a, 0x00, 0x03, 'c', 'l', 'i', 0x00};
    kp_reader_init(&r, v2, sizeof v2);
    assert_true(kp_decode_req_header(&r, true, &h));
    assert_true(kp_str_eq(h.client_id, "cli"));
    assert_int_equal(kp_rd_left(&r), 0);
    /* v2 with unknown header tags: skipped */
    static const uint8_t v2t[] = {0x00, 0x12, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01, 0xff, 0xff,
                                  0x02, 0x00, 0x01, 0xab, 0x03, 0x00, 0x77};
    kp_reader_init(&r, v2t, sizeof v2t);
    assert_true(kp_decode_req_header(&r, true, &h));
    assert_int_equal(h.api_key, 18);
    assert_int_equal(h.client_id.len, -1);
    assert_int_equal(kp_rd_left(&r), 1);
    /* negative client_id length other than -1 */
    static const uint8_t bad[] = {0x00, 0x03, 0x00, 0x09, 0x00, 0x00, 0x00, 0x2a, 0xff, 0xfe};
    kp_reader_init(&r, bad, sizeof bad);
    assert_false(kp_decode_req_header(&r, false, &h));
    assert_non_null(r.err);
    assert_int_equal(r.err_pos, 8);
    /* truncated anywhere */
    for (size_t cut = 0; cut < sizeof v2t - 1; cut++) {
        uint8_t *b = malloc(cut ? cut : 1);
        memcpy(b, v2t, cut);
        kp_reader_init(&r, b, cut);
        assert_false(kp_decode_req_header(&r, true, &h));
        assert_non_null(r.err);
        assert_true(r.err_pos <= cut);
        free(b);
    }
    int16_t key, ver;
    int32_t corr;
    assert_true(kp_peek_req_header(v1, sizeof v1, &key, &ver, &corr));
    assert_int_equal(key, 3);
    assert_int_equal(ver, 9);
    assert_int_equal(corr, 42);
    assert_false(kp_peek_req_header(v1, 7, &key, &ver, &corr));
}

static void test_response_header_flex(void **state) {
    (void)state;
    const kp_msg *av = kp_msg_get(18), *md = kp_msg_get(3), *sh = kp_msg_get(17), *dc = kp_msg_get(60);
    assert_non_null(av);
    /* ApiVersions: the body is flexible from v3, the response header never is */
    assert_true(kp_is_flex(av, 3));
    assert_false(kp_resp_header_flex(av, 3));
    assert_false(kp_resp_header_flex(av, 4));
    assert_false(kp_is_flex(av, 2));
    assert_true(kp_resp_header_flex(md, 9));
    assert_false(kp_resp_header_flex(md, 8));
    assert_false(kp_is_flex(sh, 1));
    assert_true(kp_is_flex(dc, 0));
    /* first flexible version of each API (flexibleVersions in apache/kafka's message JSON schemas) */
    static const struct { int16_t key, flex; } fx[] = {
        {0, 9}, {1, 12}, {2, 6}, {3, 9}, {8, 8}, {9, 6}, {10, 3}, {11, 6}, {12, 4}, {13, 4}, {14, 4},
        {15, 5}, {16, 3}, {17, KV_NEVER}, {18, 3}, {19, 5}, {20, 4}, {21, 2}, {22, 2}, {23, 4}, {32, 4},
        {24, 3}, {25, 3}, {26, 3}, {28, 3}, {33, 2}, {36, 2}, {37, 2}, {42, 2}, {44, 1}, {47, KV_NEVER},
        {60, 0}, {65, 0}, {66, 0},
    };
    for (size_t i = 0; i < N(fx); i++) {
        const kp_msg *m = kp_msg_get(fx[i].key);
        assert_non_null(m);
        assert_int_equal(m->key, fx[i].key);
        assert_int_equal(m->flex, fx[i].flex);
        assert_string_equal(kp_api_name(fx[i].key), m->name);
    }
    assert_null(kp_msg_get(9999));
    assert_string_equal(kp_api_name(-5), "Unknown");
}

/* ===================================================================== */
/* generic round trip of every message at every version                   */
/* ===================================================================== */

typedef struct filler {
    kp_arena *a;
    unsigned k;
    bool nulls; /* second pass: nullable fields null, arrays minimal */
} filler;

static void fill_struct(filler *F, const kp_schema *s, int ver, void *out);

static void fill_prim(filler *F, uint8_t t, const kp_field *f, const char *name, void *p) {
    unsigned k = F->k++;
    switch (t) {
    case KP_BOOL: *(bool *)p = f->dflt == 0; break;
    case KP_I8: *(int8_t *)p = (int8_t)(10 + k % 100); break;
    case KP_I16: *(int16_t *)p = (int16_t)(1000 + k % 20000); break;
    case KP_U16: *(uint16_t *)p = (uint16_t)(40000 + k % 20000); break;
    case KP_I32: *(int32_t *)p = (int32_t)(100000 + k); break;
    case KP_U32: *(uint32_t *)p = 3000000000u + k; break;
    case KP_I64: *(int64_t *)p = 10000000000LL + k; break;
    case KP_F64: *(double *)p = 0.5 + k; break;
    case KP_UUID:
        for (int i = 0; i < 16; i++) ((kp_uuid *)p)->b[i] = (uint8_t)(k + (unsigned)i + 1);
        break;
    case KP_STR:
    case KP_BYTES:
    case KP_RECORDS: {
        char *buf = kp_arena_alloc(F->a, 80);
        int n = snprintf(buf, 80, "%c%s%u", t == KP_STR ? 's' : 'b', name, k);
        *(kp_str *)p = (kp_str){buf, n};
        break;
    }
    default: fail_msg("unexpected type %d", t);
    }
}

static void fill_field(filler *F, const kp_field *f, int ver, void *p) {
    bool nul = F->nulls && nullable_at(f, ver);
    switch (f->type) {
    case KP_STR:
    case KP_BYTES:
    case KP_RECORDS:
        if (nul)
            *(kp_str *)p = KP_STR_NULL;
        else if (F->nulls)
            *(kp_str *)p = (kp_str){"", 0};
        else
            fill_prim(F, f->type, f, f->name, p);
        break;
    case KP_ARRAY: {
        kp_arr *arr = p;
        if (nul) {
            *arr = (kp_arr){-1, NULL};
            break;
        }
        int32_t n = F->nulls ? 1 : 2;
        size_t esz;
        switch (f->elem) {
        case KP_STRUCT: esz = f->sub->size; break;
        case KP_STR: case KP_BYTES: case KP_RECORDS: esz = sizeof(kp_str); break;
        case KP_UUID: esz = sizeof(kp_uuid); break;
        case KP_I64: case KP_F64: esz = 8; break;
        case KP_I32: case KP_U32: esz = 4; break;
        case KP_I16: case KP_U16: esz = 2; break;
        default: esz = 1; break;
        }
        arr->n = n;
        arr->v = kp_arena_alloc(F->a, esz * (size_t)n);
        for (int32_t i = 0; i < n; i++) {
            uint8_t *ep = (uint8_t *)arr->v + esz * (size_t)i;
            if (f->elem == KP_STRUCT)
                fill_struct(F, f->sub, ver, ep);
            else
                fill_prim(F, f->elem, f, f->name, ep);
        }
        break;
    }
    case KP_STRUCT:
        fill_struct(F, f->sub, ver, p);
        if (f->null_from != KV_NEVER) *(bool *)p = !nul; /* a nullable struct's `present` */
        break;
    default: fill_prim(F, f->type, f, f->name, p); break;
    }
}

static void fill_struct(filler *F, const kp_schema *s, int ver, void *out) {
    kp_defaults(s, ver, out); /* fields absent at ver keep what decode gives them */
    for (unsigned i = 0; i < s->nfields; i++) {
        const kp_field *f = &s->fields[i];
        if (in_ver(f, ver)) fill_field(F, f, ver, (uint8_t *)out + f->off);
    }
}

typedef struct rt_ctx {
    const char *where;
    int failures;
} rt_ctx;

#define RT_FAIL(C, ...)                                 \
    do {                                                \
        print_error("%s: ", (C)->where);                \
        print_error(__VA_ARGS__);                       \
        print_error("\n");                              \
        (C)->failures++;                                \
    } while (0)

static void same_struct(rt_ctx *C, const kp_schema *s, int ver, const void *a, const void *b, const char *path);

static void same_value(rt_ctx *C, uint8_t t, const kp_field *f, int ver, const void *pa, const void *pb, const char *path) {
    switch (t) {
    case KP_BOOL: if (*(const bool *)pa != *(const bool *)pb) RT_FAIL(C, "%s bool differs", path); break;
    case KP_I8: if (*(const int8_t *)pa != *(const int8_t *)pb) RT_FAIL(C, "%s differs", path); break;
    case KP_I16: case KP_U16:
        if (*(const int16_t *)pa != *(const int16_t *)pb) RT_FAIL(C, "%s differs", path);
        break;
    case KP_I32: case KP_U32:
        if (*(const int32_t *)pa != *(const int32_t *)pb)
            RT_FAIL(C, "%s: %d vs %d", path, *(const int32_t *)pa, *(const int32_t *)pb);
        break;
    case KP_I64: if (*(const int64_t *)pa != *(const int64_t *)pb) RT_FAIL(C, "%s differs", path); break;
    case KP_F64: if (memcmp(pa, pb, 8) != 0) RT_FAIL(C, "%s differs", path); break;
    case KP_UUID: if (memcmp(pa, pb, 16) != 0) RT_FAIL(C, "%s differs", path); break;
    case KP_STR: case KP_BYTES: case KP_RECORDS: {
        const kp_str *x = pa, *y = pb;
        if (x->len != y->len || (x->len > 0 && memcmp(x->p, y->p, (size_t)x->len) != 0))
            RT_FAIL(C, "%s: len %d vs %d", path, x->len, y->len);
        break;
    }
    case KP_ARRAY: {
        const kp_arr *x = pa, *y = pb;
        if (x->n != y->n) {
            RT_FAIL(C, "%s: count %d vs %d", path, x->n, y->n);
            break;
        }
        size_t esz = f->elem == KP_STRUCT ? f->sub->size
                   : (f->elem == KP_STR || f->elem == KP_BYTES || f->elem == KP_RECORDS) ? sizeof(kp_str)
                   : f->elem == KP_UUID ? 16
                   : (f->elem == KP_I64 || f->elem == KP_F64) ? 8
                   : (f->elem == KP_I32 || f->elem == KP_U32) ? 4
                   : (f->elem == KP_I16 || f->elem == KP_U16) ? 2 : 1;
        for (int32_t i = 0; i < x->n; i++) {
            char p2[256];
            snprintf(p2, sizeof p2, "%s[%d]", path, i);
            const uint8_t *ea = (const uint8_t *)x->v + esz * (size_t)i, *eb = (const uint8_t *)y->v + esz * (size_t)i;
            if (f->elem == KP_STRUCT)
                same_struct(C, f->sub, ver, ea, eb, p2);
            else
                same_value(C, f->elem, f, ver, ea, eb, p2);
        }
        break;
    }
    case KP_STRUCT:
        if (f->null_from != KV_NEVER && *(const bool *)pa != *(const bool *)pb) {
            RT_FAIL(C, "%s: present %d vs %d", path, *(const bool *)pa, *(const bool *)pb);
            break;
        }
        if (f->null_from != KV_NEVER && !*(const bool *)pa) break;
        same_struct(C, f->sub, ver, pa, pb, path);
        break;
    }
}

/* every field, present at ver or not: absent ones must hold their defaults on both sides */
static void same_struct(rt_ctx *C, const kp_schema *s, int ver, const void *a, const void *b, const char *path) {
    for (unsigned i = 0; i < s->nfields; i++) {
        const kp_field *f = &s->fields[i];
        char p2[256];
        if (snprintf(p2, sizeof p2, "%s.%s", path, f->name) >= (int)sizeof p2) fail_msg("field path too long: %s", path);
        same_value(C, f->type, f, ver, (const uint8_t *)a + f->off, (const uint8_t *)b + f->off, p2);
    }
}

/* a field absent from the wire holds its table default (checked without kp_defaults) */
static void check_default(rt_ctx *C, const kp_field *f, const void *p, const char *path) {
    switch (f->type) {
    case KP_BOOL: if (*(const bool *)p != (f->dflt != 0)) RT_FAIL(C, "%s: not default", path); break;
    case KP_I8: if (*(const int8_t *)p != f->dflt) RT_FAIL(C, "%s: not default", path); break;
    case KP_I16: if (*(const int16_t *)p != f->dflt) RT_FAIL(C, "%s: not default", path); break;
    case KP_U16: if (*(const uint16_t *)p != f->dflt) RT_FAIL(C, "%s: not default", path); break;
    case KP_I32: if (*(const int32_t *)p != f->dflt) RT_FAIL(C, "%s: %d not default", path, *(const int32_t *)p); break;
    case KP_U32: if (*(const uint32_t *)p != f->dflt) RT_FAIL(C, "%s: not default", path); break;
    case KP_I64: if (*(const int64_t *)p != f->dflt) RT_FAIL(C, "%s: not default", path); break;
    case KP_F64: if (*(const double *)p != (double)f->dflt) RT_FAIL(C, "%s: not default", path); break;
    case KP_UUID: {
        static const kp_uuid zero;
        if (memcmp(p, &zero, sizeof zero) != 0) RT_FAIL(C, "%s: not default", path);
        break;
    }
    case KP_STR: case KP_BYTES: case KP_RECORDS:
        if (((const kp_str *)p)->len != (f->dflt < 0 ? -1 : 0)) RT_FAIL(C, "%s: not default", path);
        break;
    case KP_ARRAY:
        if (((const kp_arr *)p)->n != (f->dflt < 0 ? -1 : 0)) RT_FAIL(C, "%s: not default", path);
        break;
    case KP_STRUCT:
        if (f->null_from != KV_NEVER && *(const bool *)p != (f->dflt >= 0)) RT_FAIL(C, "%s: not default", path);
        for (unsigned i = 0; i < f->sub->nfields; i++) {
            char p2[256];
            snprintf(p2, sizeof p2, "%s.%s", path, f->sub->fields[i].name);
            check_default(C, &f->sub->fields[i], (const uint8_t *)p + f->sub->fields[i].off, p2);
        }
        break;
    }
}

static void check_absent(rt_ctx *C, const kp_schema *s, int ver, bool flex, const void *out, const char *path) {
    for (unsigned i = 0; i < s->nfields; i++) {
        const kp_field *f = &s->fields[i];
        const uint8_t *p = (const uint8_t *)out + f->off;
        char p2[256];
        snprintf(p2, sizeof p2, "%s.%s", path, f->name);
        if (!in_ver(f, ver) || (f->tag >= 0 && !flex)) {
            check_default(C, f, p, p2);
        } else if (f->type == KP_STRUCT) {
            check_absent(C, f->sub, ver, flex, p, p2);
        } else if (f->type == KP_ARRAY && f->elem == KP_STRUCT) {
            const kp_arr *arr = (const kp_arr *)p;
            for (int32_t k = 0; k < arr->n; k++)
                check_absent(C, f->sub, ver, flex, (const uint8_t *)arr->v + (size_t)f->sub->size * (size_t)k, p2);
        }
    }
}

/* schema invariants the engine relies on */
static void check_schema(rt_ctx *C, const kp_msg *m, const kp_schema *s, int depth) {
    int last_tag = -1;
    assert_true(depth < 10);
    for (unsigned i = 0; i < s->nfields; i++) {
        const kp_field *f = &s->fields[i];
        if (f->vmin > f->vmax) RT_FAIL(C, "%s.%s: vmin > vmax", s->name, f->name);
        if (f->tag >= 0) {
            if (f->tag <= last_tag) RT_FAIL(C, "%s.%s: tags not ascending", s->name, f->name);
            last_tag = f->tag;
            if (m->flex == KV_NEVER || f->vmin < m->flex) RT_FAIL(C, "%s.%s: tagged before flexible", s->name, f->name);
        }
        if (f->off + (f->type == KP_STRUCT ? f->sub->size : 1) > s->size)
            RT_FAIL(C, "%s.%s: offset outside the struct", s->name, f->name);
        if ((f->type == KP_STRUCT || (f->type == KP_ARRAY && f->elem == KP_STRUCT)) && !f->sub)
            RT_FAIL(C, "%s.%s: no sub schema", s->name, f->name);
        if (f->sub) check_schema(C, m, f->sub, depth + 1);
    }
}

static long rt_cases;
static long rt_bytes;

static void round_trip(rt_ctx *C, const kp_schema *s, int ver, bool flex, bool nulls) {
    kp_arena fa = {0}, da = {0};
    filler F = {.a = &fa, .k = 1, .nulls = nulls};
    void *in = calloc(1, s->size), *out = calloc(1, s->size);
    fill_struct(&F, s, ver, in);

    size_t sz = kp_size(s, ver, flex, in);
    kp_writer w;
    kp_writer_init(&w, 0);
    kp_encode(&w, s, ver, flex, in);
    if (w.len != sz) RT_FAIL(C, "kp_size %zu but encoded %zu", sz, w.len);
    rt_bytes += (long)w.len;

    /* decode from an exact-size copy with one extra byte after it */
    uint8_t *buf = malloc(w.len + 1);
    if (w.len) memcpy(buf, w.buf, w.len); /* an empty body leaves w.buf NULL */
    buf[w.len] = 0x99;
    kp_reader r;
    kp_reader_init(&r, buf, w.len + 1);
    memset(out, 0x6b, s->size);
    if (!kp_decode(&r, s, ver, flex, out, &da)) {
        RT_FAIL(C, "decode failed: %s at %zu (%s)", r.err, r.err_pos, r.err_field ? r.err_field : "-");
        goto done;
    }
    if (r.err) RT_FAIL(C, "err set after success");
    if (kp_rd_left(&r) != 1) RT_FAIL(C, "decode left %zu bytes (want exactly the 1 trailing)", kp_rd_left(&r));
    same_struct(C, s, ver, in, out, s->name);
    check_absent(C, s, ver, flex, out, s->name);

    kp_writer w2;
    kp_writer_init(&w2, 0);
    kp_encode(&w2, s, ver, flex, out);
    if (w2.len != w.len || (w.len && memcmp(w2.buf, w.buf, w.len) != 0)) RT_FAIL(C, "re-encoding differs");
    kp_writer_free(&w2);

    /* every proper prefix fails, with the error inside what was given */
    for (size_t cut = 0; cut < w.len; cut++) {
        uint8_t *p = malloc(cut ? cut : 1);
        memcpy(p, w.buf, cut);
        kp_arena ta = {0};
        kp_reader tr;
        kp_reader_init(&tr, p, cut);
        tr.base = 4;
        bool ok = kp_decode(&tr, s, ver, flex, out, &ta);
        if (ok || !tr.err || tr.err_pos > cut + 4 || tr.err_pos < 4) {
            RT_FAIL(C, "prefix %zu/%zu: ok=%d err=%s pos=%zu", cut, w.len, ok, tr.err ? tr.err : "-", tr.err_pos);
            kp_arena_free(&ta);
            free(p);
            break;
        }
        kp_arena_free(&ta);
        free(p);
    }
    rt_cases++;
done:
    free(buf);
    kp_writer_free(&w);
    kp_arena_free(&fa);
    kp_arena_free(&da);
    free(in);
    free(out);
}

static void test_round_trip_all_messages(void **state) {
    (void)state;
    static const int16_t expected[] = {0,  1,  2,  3,  8,  9,  10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
                                       22, 23, 24, 25, 26, 28, 32, 33, 35, 36, 37, 42, 44, 46, 47, 60, 65, 66,
                                       68, 69};
    for (size_t i = 0; i < N(expected); i++) assert_non_null(kp_msg_get(expected[i]));
    rt_ctx C = {0};
    int msgs = 0, versions = 0;
    for (int key = 0; key < 1000; key++) {
        const kp_msg *m = kp_msg_get((int16_t)key);
        if (!m) continue;
        msgs++;
        char where[128];
        snprintf(where, sizeof where, "%s schema", m->name);
        C.where = where;
        check_schema(&C, m, m->req, 0);
        check_schema(&C, m, m->resp, 0);
        for (int ver = m->vmin; ver <= m->vmax; ver++) {
            versions++;
            bool flex = kp_is_flex(m, (int16_t)ver);
            for (int dir = 0; dir < 2; dir++) {
                for (int nulls = 0; nulls < 2; nulls++) {
                    snprintf(where, sizeof where, "%s v%d %s%s", m->name, ver, dir ? "response" : "request",
                             nulls ? " (nulls)" : "");
                    C.where = where;
                    round_trip(&C, dir ? m->resp : m->req, ver, flex, nulls);
                }
            }
        }
    }
    print_message("round trip: %d messages, %d versions, %ld cases, %ld bytes encoded, %d failures\n", msgs,
                  versions, rt_cases, rt_bytes, C.failures);
    assert_int_equal(msgs, (int)N(expected));
    assert_int_equal(C.failures, 0);
}

/* ===================================================================== */
/* hand-written vectors from the protocol documentation                   */
/* ===================================================================== */

/* decode body bytes at ver, assert all consumed; caller checks fields; then re-encode must match */
static void *decode_body(const kp_msg *m, bool resp, int ver, const uint8_t *b, size_t n, kp_arena *a) {
    const kp_schema *s = resp ? m->resp : m->req;
    void *out = kp_arena_alloc(a, s->size);
    kp_reader r;
    kp_reader_init(&r, b, n);
    if (!kp_decode(&r, s, ver, kp_is_flex(m, (int16_t)ver), out, a))
        fail_msg("%s v%d: %s at %zu (%s)", m->name, ver, r.err, r.err_pos, r.err_field ? r.err_field : "-");
    assert_int_equal(kp_rd_left(&r), 0);
    return out;
}

static void reencode(const kp_msg *m, bool resp, int ver, const void *in, const uint8_t *want, size_t n) {
    const kp_schema *s = resp ? m->resp : m->req;
    bool flex = kp_is_flex(m, (int16_t)ver);
    kp_writer w;
    kp_writer_init(&w, 0);
    kp_encode(&w, s, ver, flex, in);
    assert_bytes(w.buf, w.len, want, n);
    assert_int_equal(kp_size(s, ver, flex, in), n);
    kp_writer_free(&w);
}

/* a request frame (without the int32 size): header, then body */
static const uint8_t *split_request(const uint8_t *frame, size_t n, bool flex, kp_req_header *h, size_t *body_len) {
    kp_reader r;
    kp_reader_init(&r, frame, n);
    assert_true(kp_decode_req_header(&r, flex, h));
    *body_len = kp_rd_left(&r);
    return frame + r.pos;
}

static void test_vec_api_versions(void **state) {
    (void)state;
    const kp_msg *m = &kp_msg_api_versions;
    kp_arena a = {0};
    kp_req_header h;
    size_t bn;

    /* request v0: header v1, empty body */
    static const uint8_t req0[] = {
        0x00, 0x12,             /* api_key 18 */
        0x00, 0x00,             /* api_version 0 */
        0x00, 0x00, 0x00, 0x01, /* correlation_id 1 */
        0x00, 0x02, 'm', 'e',   /* client_id "me" */
    };
    const uint8_t *body = split_request(req0, sizeof req0, kp_is_flex(m, 0), &h, &bn);
    assert_int_equal(h.api_key, 18);
    assert_int_equal(h.api_version, 0);
    assert_int_equal(h.correlation_id, 1);
    assert_true(kp_str_eq(h.client_id, "me"));
    assert_int_equal(bn, 0);
    kp_api_versions_request *q0 = decode_body(m, false, 0, body, bn, &a);
    assert_int_equal(q0->client_software_name.len, 0);
    reencode(m, false, 0, q0, body, bn);

    /* request v3: header v2 (classic client_id, empty tagged fields), compact body */
    static const uint8_t req3[] = {
        0x00, 0x12, 0x00, 0x03, 0x00, 0x00, 0x00, 0x07, /* key 18, v3, correlation 7 */
        0x00, 0x03, 'c', 'l', 'i',                      /* client_id "cli" (int16 length) */
        0x00,                                           /* header tagged fields: none */
        0x06, 'k', 'j', 'a', 'v', 'a',                  /* client_software_name "kjava" */
        0x06, '3', '.', '7', '.', '0',                  /* client_software_version "3.7.0" */
        0x00,                                           /* tagged fields: none */
    };
    body = split_request(req3, sizeof req3, kp_is_flex(m, 3), &h, &bn);
    assert_int_equal(h.api_version, 3);
    assert_int_equal(h.correlation_id, 7);
    assert_true(kp_str_eq(h.client_id, "cli"));
    assert_int_equal(bn, 13);
    kp_api_versions_request *q3 = decode_body(m, false, 3, body, bn, &a);
    assert_true(kp_str_eq(q3->client_software_name, "kjava"));
    assert_true(kp_str_eq(q3->client_software_version, "3.7.0"));
    reencode(m, false, 3, q3, body, bn);

    /* response v0 (header v0 = correlation id only, not part of the body) */
    assert_false(kp_resp_header_flex(m, 0));
    static const uint8_t resp0[] = {
        0x00, 0x00,             /* error_code 0 */
        0x00, 0x00, 0x00, 0x02, /* api_keys: 2 (int32 count) */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x0b, /* Produce 0-11 */
        0x00, 0x12, 0x00, 0x00, 0x00, 0x04, /* ApiVersions 0-4 */
    };
    kp_api_versions_response *p0 = decode_body(m, true, 0, resp0, sizeof resp0, &a);
    assert_int_equal(p0->error_code, 0);
    assert_int_equal(p0->api_keys.n, 2);
    assert_int_equal(p0->api_keys.v[0].api_key, 0);
    assert_int_equal(p0->api_keys.v[0].max_version, 11);
    assert_int_equal(p0->api_keys.v[1].api_key, 18);
    assert_int_equal(p0->api_keys.v[1].min_version, 0);
    assert_int_equal(p0->api_keys.v[1].max_version, 4);
    assert_int_equal(p0->throttle_time_ms, 0);
    assert_true(p0->finalized_features_epoch == -1);
    reencode(m, true, 0, p0, resp0, sizeof resp0);

    /* response v3: flexible body, header still v0 */
    assert_false(kp_resp_header_flex(m, 3));
    static const uint8_t resp3[] = {
        0x00, 0x23,                               /* error_code 35 UNSUPPORTED_VERSION */
        0x03,                                     /* api_keys: 2 (compact) */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x0b, 0x00, /* Produce 0-11, no tags */
        0x00, 0x12, 0x00, 0x00, 0x00, 0x04, 0x00, /* ApiVersions 0-4, no tags */
        0x00, 0x00, 0x00, 0x64,                   /* throttle_time_ms 100 */
        0x03,                                     /* tagged fields: 3 */
        0x00, 0x09,                               /* tag 0 SupportedFeatures, 9 bytes */
        0x02, 0x03, 'm', 'v', 0x00, 0x01, 0x00, 0x14, 0x00, /* [{"mv", 1, 20}] */
        0x01, 0x08,                               /* tag 1 FinalizedFeaturesEpoch, 8 bytes */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05,
        0x03, 0x01, 0x01,                         /* tag 3 ZkMigrationReady = true */
    };
    kp_api_versions_response *p3 = decode_body(m, true, 3, resp3, sizeof resp3, &a);
    assert_int_equal(p3->error_code, 35);
    assert_int_equal(p3->api_keys.n, 2);
    assert_int_equal(p3->api_keys.v[1].api_key, 18);
    assert_int_equal(p3->throttle_time_ms, 100);
    assert_int_equal(p3->supported_features.n, 1);
    assert_true(kp_str_eq(p3->supported_features.v[0].name, "mv"));
    assert_int_equal(p3->supported_features.v[0].min_version, 1);
    assert_int_equal(p3->supported_features.v[0].max_version, 20);
    assert_true(p3->finalized_features_epoch == 5);
    assert_int_equal(p3->finalized_features.n, 0);
    assert_true(p3->zk_migration_ready);
    reencode(m, true, 3, p3, resp3, sizeof resp3);

    /* the minimal v3 response: empty tagged section is the single byte 0x00 */
    static const uint8_t resp3min[] = {0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00};
    kp_api_versions_response *p3m = decode_body(m, true, 3, resp3min, sizeof resp3min, &a);
    assert_int_equal(p3m->api_keys.n, 0);
    assert_true(p3m->finalized_features_epoch == -1);
    assert_false(p3m->zk_migration_ready);
    reencode(m, true, 3, p3m, resp3min, sizeof resp3min);
    kp_arena_free(&a);
}

static void test_vec_metadata(void **state) {
    (void)state;
    const kp_msg *m = &kp_msg_metadata;
    kp_arena a = {0};
    kp_req_header h;
    size_t bn;

    /* request v1: topics null = all topics */
    static const uint8_t req1[] = {
        0x00, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00, 0x05, 0xff, 0xff, /* key 3 v1, corr 5, client_id null */
        0xff, 0xff, 0xff, 0xff,                                     /* topics: null */
    };
    const uint8_t *body = split_request(req1, sizeof req1, kp_is_flex(m, 1), &h, &bn);
    assert_int_equal(h.client_id.len, -1);
    kp_metadata_request *q1 = decode_body(m, false, 1, body, bn, &a);
    assert_int_equal(q1->topics.n, -1);
    assert_true(q1->allow_auto_topic_creation); /* v4+ only: default true */
    reencode(m, false, 1, q1, body, bn);
    /* v0 has no null: an empty array means all topics, and null is refused */
    kp_reader r;
    kp_metadata_request q0;
    kp_reader_init(&r, body, bn);
    assert_false(kp_decode(&r, m->req, 0, false, &q0, &a));
    assert_int_equal(r.err_pos, 0);

    /* request v9: header v2, compact topics, tagged fields */
    static const uint8_t req9[] = {
        0x00, 0x03, 0x00, 0x09, 0x00, 0x00, 0x00, 0x06, 0x00, 0x01, 'x', 0x00, /* header v2 */
        0x02,                                  /* topics: 1 */
        0x04, 'f', 'o', 'o', 0x00,             /*   name "foo", no tags */
        0x01,                                  /* allow_auto_topic_creation */
        0x00,                                  /* include_cluster_authorized_operations */
        0x01,                                  /* include_topic_authorized_operations */
        0x00,                                  /* no tags */
    };
    body = split_request(req9, sizeof req9, kp_is_flex(m, 9), &h, &bn);
    assert_int_equal(h.api_version, 9);
    assert_true(kp_str_eq(h.client_id, "x"));
    kp_metadata_request *q9 = decode_body(m, false, 9, body, bn, &a);
    assert_int_equal(q9->topics.n, 1);
    assert_true(kp_str_eq(q9->topics.v[0].name, "foo"));
    assert_true(q9->allow_auto_topic_creation);
    assert_false(q9->include_cluster_authorized_operations);
    assert_true(q9->include_topic_authorized_operations);
    reencode(m, false, 9, q9, body, bn);
    /* same request with unknown tags in the topic and at the top: skipped */
    static const uint8_t req9t[] = {
        0x02, 0x04, 'f', 'o', 'o', 0x01, 0x05, 0x01, 0xaa, /* topic with unknown tag 5 */
        0x01, 0x00, 0x01, 0x02, 0x00, 0x00, 0x7f, 0x02, 0x01, 0x02,
    };
    kp_metadata_request *q9t = decode_body(m, false, 9, req9t, sizeof req9t, &a);
    assert_true(kp_str_eq(q9t->topics.v[0].name, "foo"));
    reencode(m, false, 9, q9t, body, bn);

    /* response v1: one broker, one topic, one partition */
    static const uint8_t resp1[] = {
        0x00, 0x00, 0x00, 0x01,                                /* brokers: 1 */
        0x00, 0x00, 0x00, 0x01,                                /*   node_id 1 */
        0x00, 0x09, 'l', 'o', 'c', 'a', 'l', 'h', 'o', 's', 't', /* host */
        0x00, 0x00, 0x23, 0x84,                                /*   port 9092 */
        0xff, 0xff,                                            /*   rack null */
        0x00, 0x00, 0x00, 0x01,                                /* controller_id 1 */
        0x00, 0x00, 0x00, 0x01,                                /* topics: 1 */
        0x00, 0x00,                                            /*   error_code */
        0x00, 0x03, 'f', 'o', 'o',                             /*   name */
        0x00,                                                  /*   is_internal */
        0x00, 0x00, 0x00, 0x01,                                /*   partitions: 1 */
        0x00, 0x00,                                            /*     error_code */
        0x00, 0x00, 0x00, 0x00,                                /*     partition_index 0 */
        0x00, 0x00, 0x00, 0x01,                                /*     leader_id 1 */
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01,        /*     replica_nodes [1] */
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01,        /*     isr_nodes [1] */
    };
    kp_metadata_response *p1 = decode_body(m, true, 1, resp1, sizeof resp1, &a);
    assert_int_equal(p1->brokers.n, 1);
    assert_int_equal(p1->brokers.v[0].node_id, 1);
    assert_true(kp_str_eq(p1->brokers.v[0].host, "localhost"));
    assert_int_equal(p1->brokers.v[0].port, 9092);
    assert_int_equal(p1->brokers.v[0].rack.len, -1);
    assert_int_equal(p1->cluster_id.len, -1);
    assert_int_equal(p1->controller_id, 1);
    assert_int_equal(p1->topics.n, 1);
    assert_true(kp_str_eq(p1->topics.v[0].name, "foo"));
    assert_false(p1->topics.v[0].is_internal);
    assert_int_equal(p1->topics.v[0].partitions.n, 1);
    const kp_metadata_response_partition *pp = &p1->topics.v[0].partitions.v[0];
    assert_int_equal(pp->leader_id, 1);
    assert_int_equal(pp->leader_epoch, -1);
    assert_int_equal(pp->replica_nodes.n, 1);
    assert_int_equal(pp->replica_nodes.v[0], 1);
    assert_int_equal(pp->isr_nodes.v[0], 1);
    assert_int_equal(pp->offline_replicas.n, 0);
    assert_int_equal(p1->topics.v[0].topic_authorized_operations, INT32_MIN);
    reencode(m, true, 1, p1, resp1, sizeof resp1);

    /* response v9: flexible */
    assert_true(kp_resp_header_flex(m, 9));
    static const uint8_t resp9[] = {
        0x00, 0x00, 0x00, 0x00,                           /* throttle_time_ms */
        0x02,                                             /* brokers: 1 */
        0x00, 0x00, 0x00, 0x01,                           /*   node_id 1 */
        0x0a, 'l', 'o', 'c', 'a', 'l', 'h', 'o', 's', 't',/*   host */
        0x00, 0x00, 0x23, 0x84,                           /*   port */
        0x00,                                             /*   rack null */
        0x00,                                             /*   no tags */
        0x03, 'c', '1',                                   /* cluster_id "c1" */
        0x00, 0x00, 0x00, 0x01,                           /* controller_id */
        0x02,                                             /* topics: 1 */
        0x00, 0x00,                                       /*   error_code */
        0x04, 'f', 'o', 'o',                              /*   name */
        0x00,                                             /*   is_internal */
        0x02,                                             /*   partitions: 1 */
        0x00, 0x00,                                       /*     error_code */
        0x00, 0x00, 0x00, 0x00,                           /*     partition_index */
        0x00, 0x00, 0x00, 0x01,                           /*     leader_id */
        0x00, 0x00, 0x00, 0x05,                           /*     leader_epoch 5 */
        0x02, 0x00, 0x00, 0x00, 0x01,                     /*     replica_nodes [1] */
        0x02, 0x00, 0x00, 0x00, 0x01,                     /*     isr_nodes [1] */
        0x01,                                             /*     offline_replicas [] */
        0x00,                                             /*     no tags */
        0x00, 0x00, 0x0d, 0xf8,                           /*   topic_authorized_operations 3576 */
        0x00,                                             /*   no tags */
        0x80, 0x00, 0x00, 0x00,                           /* cluster_authorized_operations (8-10) */
        0x00,                                             /* no tags */
    };
    kp_metadata_response *p9 = decode_body(m, true, 9, resp9, sizeof resp9, &a);
    assert_int_equal(p9->brokers.n, 1);
    assert_true(kp_str_eq(p9->brokers.v[0].host, "localhost"));
    assert_int_equal(p9->brokers.v[0].rack.len, -1);
    assert_true(kp_str_eq(p9->cluster_id, "c1"));
    assert_int_equal(p9->topics.v[0].partitions.v[0].leader_epoch, 5);
    assert_int_equal(p9->topics.v[0].partitions.v[0].offline_replicas.n, 0);
    assert_int_equal(p9->topics.v[0].topic_authorized_operations, 3576);
    assert_int_equal(p9->cluster_authorized_operations, INT32_MIN);
    reencode(m, true, 9, p9, resp9, sizeof resp9);
    kp_arena_free(&a);
}

static void test_vec_produce(void **state) {
    (void)state;
    const kp_msg *m = &kp_msg_produce;
    kp_arena a = {0};
    kp_req_header h;
    size_t bn;

    static const uint8_t req3[] = {
        0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x0b, 0x00, 0x01, 'p', /* key 0 v3 corr 11 "p" */
        0xff, 0xff,                         /* transactional_id null */
        0xff, 0xff,                         /* acks -1 */
        0x00, 0x00, 0x75, 0x30,             /* timeout_ms 30000 */
        0x00, 0x00, 0x00, 0x01,             /* topic_data: 1 */
        0x00, 0x03, 'f', 'o', 'o',          /*   name */
        0x00, 0x00, 0x00, 0x01,             /*   partition_data: 1 */
        0x00, 0x00, 0x00, 0x00,             /*     index 0 */
        0x00, 0x00, 0x00, 0x04,             /*     records: 4 bytes (int32 length) */
        0xde, 0xad, 0xbe, 0xef,
    };
    const uint8_t *body = split_request(req3, sizeof req3, kp_is_flex(m, 3), &h, &bn);
    assert_int_equal(h.correlation_id, 11);
    kp_produce_request *q3 = decode_body(m, false, 3, body, bn, &a);
    assert_int_equal(q3->transactional_id.len, -1);
    assert_int_equal(q3->acks, -1);
    assert_int_equal(q3->timeout_ms, 30000);
    assert_int_equal(q3->topic_data.n, 1);
    assert_true(kp_str_eq(q3->topic_data.v[0].name, "foo"));
    assert_int_equal(q3->topic_data.v[0].partition_data.n, 1);
    assert_int_equal(q3->topic_data.v[0].partition_data.v[0].index, 0);
    assert_int_equal(q3->topic_data.v[0].partition_data.v[0].records.len, 4);
    assert_memory_equal(q3->topic_data.v[0].partition_data.v[0].records.p, "\xde\xad\xbe\xef", 4);
    reencode(m, false, 3, q3, body, bn);

    static const uint8_t req9[] = {
        0x00, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00, 0x0c, 0x00, 0x01, 'p', 0x00, /* header v2 */
        0x03, 't', 'x',                     /* transactional_id "tx" */
        0x00, 0x01,                         /* acks 1 */
        0x00, 0x00, 0x75, 0x30,             /* timeout_ms */
        0x02,                               /* topic_data: 1 */
        0x04, 'f', 'o', 'o',                /*   name */
        0x02,                               /*   partition_data: 1 */
        0x00, 0x00, 0x00, 0x02,             /*     index 2 */
        0x05, 0xde, 0xad, 0xbe, 0xef,       /*     records: compact, 4 bytes */
        0x00,                               /*     no tags */
        0x00,                               /*   no tags */
        0x00,                               /* no tags */
    };
    body = split_request(req9, sizeof req9, kp_is_flex(m, 9), &h, &bn);
    kp_produce_request *q9 = decode_body(m, false, 9, body, bn, &a);
    assert_true(kp_str_eq(q9->transactional_id, "tx"));
    assert_int_equal(q9->acks, 1);
    assert_int_equal(q9->topic_data.v[0].partition_data.v[0].index, 2);
    assert_int_equal(q9->topic_data.v[0].partition_data.v[0].records.len, 4);
    reencode(m, false, 9, q9, body, bn);

    /* records null (nullable in every version) */
    static const uint8_t req9n[] = {0x00, 0x00, 0x01, 0x00, 0x00, 0x75, 0x30, 0x02, 0x04, 'f', 'o', 'o',
                                    0x02, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00};
    kp_produce_request *q9n = decode_body(m, false, 9, req9n, sizeof req9n, &a);
    assert_int_equal(q9n->transactional_id.len, -1);
    assert_int_equal(q9n->topic_data.v[0].partition_data.v[0].records.len, -1);
    reencode(m, false, 9, q9n, req9n, sizeof req9n);
    kp_arena_free(&a);
}

static void test_vec_fetch(void **state) {
    (void)state;
    const kp_msg *m = &kp_msg_fetch;
    kp_arena a = {0};
    kp_req_header h;
    size_t bn;

    static const uint8_t req4[] = {
        0x00, 0x01, 0x00, 0x04, 0x00, 0x00, 0x00, 0x21, 0x00, 0x00, /* key 1 v4 corr 33, client_id "" */
        0xff, 0xff, 0xff, 0xff,                         /* replica_id -1 */
        0x00, 0x00, 0x01, 0xf4,                         /* max_wait_ms 500 */
        0x00, 0x00, 0x00, 0x01,                         /* min_bytes 1 */
        0x03, 0x20, 0x00, 0x00,                         /* max_bytes 52428800 */
        0x01,                                           /* isolation_level read_committed */
        0x00, 0x00, 0x00, 0x01,                         /* topics: 1 */
        0x00, 0x03, 'f', 'o', 'o',                      /*   topic */
        0x00, 0x00, 0x00, 0x01,                         /*   partitions: 1 */
        0x00, 0x00, 0x00, 0x00,                         /*     partition 0 */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x64, /*     fetch_offset 100 */
        0x00, 0x10, 0x00, 0x00,                         /*     partition_max_bytes 1 MiB */
    };
    const uint8_t *body = split_request(req4, sizeof req4, kp_is_flex(m, 4), &h, &bn);
    assert_int_equal(h.client_id.len, 0);
    kp_fetch_request *q4 = decode_body(m, false, 4, body, bn, &a);
    assert_int_equal(q4->replica_id, -1);
    assert_int_equal(q4->max_wait_ms, 500);
    assert_int_equal(q4->min_bytes, 1);
    assert_int_equal(q4->max_bytes, 52428800);
    assert_int_equal(q4->isolation_level, 1);
    assert_int_equal(q4->session_id, 0);
    assert_int_equal(q4->session_epoch, -1);
    assert_int_equal(q4->topics.n, 1);
    assert_true(kp_str_eq(q4->topics.v[0].topic, "foo"));
    const kp_fetch_partition *fp = &q4->topics.v[0].partitions.v[0];
    assert_int_equal(fp->partition, 0);
    assert_int_equal(fp->current_leader_epoch, -1);
    assert_true(fp->fetch_offset == 100);
    assert_true(fp->log_start_offset == -1);
    assert_int_equal(fp->partition_max_bytes, 1048576);
    assert_int_equal(q4->forgotten_topics_data.n, 0);
    assert_int_equal(q4->rack_id.len, 0);
    reencode(m, false, 4, q4, body, bn);

    static const uint8_t req12[] = {
        0x00, 0x01, 0x00, 0x0c, 0x00, 0x00, 0x00, 0x22, 0x00, 0x02, 'c', '1', 0x00, /* header v2 */
        0xff, 0xff, 0xff, 0xff,                         /* replica_id -1 */
        0x00, 0x00, 0x01, 0xf4,                         /* max_wait_ms 500 */
        0x00, 0x00, 0x00, 0x01,                         /* min_bytes */
        0x03, 0x20, 0x00, 0x00,                         /* max_bytes */
        0x00,                                           /* isolation_level */
        0x00, 0x00, 0x00, 0x2a,                         /* session_id 42 */
        0x00, 0x00, 0x00, 0x03,                         /* session_epoch 3 */
        0x02,                                           /* topics: 1 */
        0x04, 'f', 'o', 'o',                            /*   topic */
        0x02,                                           /*   partitions: 1 */
        0x00, 0x00, 0x00, 0x00,                         /*     partition */
        0x00, 0x00, 0x00, 0x05,                         /*     current_leader_epoch 5 */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x64, /*     fetch_offset 100 */
        0x00, 0x00, 0x00, 0x04,                         /*     last_fetched_epoch 4 */
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, /*     log_start_offset -1 */
        0x00, 0x10, 0x00, 0x00,                         /*     partition_max_bytes */
        0x00,                                           /*     no tags */
        0x00,                                           /*   no tags */
        0x02,                                           /* forgotten_topics_data: 1 */
        0x04, 'b', 'a', 'r',                            /*   topic */
        0x03, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02, /* partitions [1, 2] */
        0x00,                                           /*   no tags */
        0x03, 'r', '1',                                 /* rack_id "r1" */
        0x01,                                           /* tagged fields: 1 */
        0x00, 0x04, 0x04, 'c', 'l', '1',                /*   tag 0 ClusterId "cl1" */
    };
    body = split_request(req12, sizeof req12, kp_is_flex(m, 12), &h, &bn);
    assert_int_equal(h.api_version, 12);
    assert_true(kp_str_eq(h.client_id, "c1"));
    kp_fetch_request *q12 = decode_body(m, false, 12, body, bn, &a);
    assert_true(kp_str_eq(q12->cluster_id, "cl1"));
    assert_int_equal(q12->replica_id, -1);
    assert_int_equal(q12->session_id, 42);
    assert_int_equal(q12->session_epoch, 3);
    fp = &q12->topics.v[0].partitions.v[0];
    assert_int_equal(fp->current_leader_epoch, 5);
    assert_true(fp->fetch_offset == 100);
    assert_int_equal(fp->last_fetched_epoch, 4);
    assert_true(fp->log_start_offset == -1);
    assert_int_equal(q12->forgotten_topics_data.n, 1);
    assert_true(kp_str_eq(q12->forgotten_topics_data.v[0].topic, "bar"));
    assert_int_equal(q12->forgotten_topics_data.v[0].partitions.n, 2);
    assert_int_equal(q12->forgotten_topics_data.v[0].partitions.v[1], 2);
    assert_true(kp_str_eq(q12->rack_id, "r1"));
    reencode(m, false, 12, q12, body, bn);
    kp_arena_free(&a);
}

/*
 * A writer with ref_min references large records fields instead of copying
 * them (Fetch answers): its spans, laid end to end, are byte for byte the
 * copying encoding, and the big field's span is the caller's own memory.
 */
static void test_records_by_reference(void **state) {
    (void)state;
    static uint8_t big[10000], small[100];
    for (size_t i = 0; i < sizeof big; i++) big[i] = (uint8_t)(i * 7 + 1);
    for (size_t i = 0; i < sizeof small; i++) small[i] = (uint8_t)(i * 3 + 2);
    for (int ver = 4; ver <= 12; ver += 8) {
        bool flex = kp_is_flex(&kp_msg_fetch, (int16_t)ver);
        kp_fetch_partition_data pd[3];
        for (int i = 0; i < 3; i++) {
            kp_defaults(&kp_fetch_partition_data_schema, ver, &pd[i]);
            pd[i].partition_index = i;
            pd[i].aborted_transactions.n = -1;
        }
        pd[0].records = (kp_bytes){(const char *)big, (int32_t)sizeof big};
        pd[1].records = (kp_bytes){(const char *)small, (int32_t)sizeof small};
        pd[2].records = (kp_bytes){(const char *)big, (int32_t)sizeof big};
        kp_fetchable_topic_response tr;
        kp_defaults(&kp_fetchable_topic_response_schema, ver, &tr);
        tr.topic = (kp_str){"t", 1};
        tr.partitions.v = pd;
        tr.partitions.n = 3;
        kp_fetch_response resp;
        kp_defaults(&kp_fetch_response_schema, ver, &resp);
        resp.responses.v = &tr;
        resp.responses.n = 1;

        kp_writer copy, ref;
        kp_writer_init(&copy, 0);
        kp_writer_init(&ref, 0);
        ref.ref_min = 4096;
        kp_encode(&copy, &kp_fetch_response_schema, ver, flex, &resp);
        kp_encode(&ref, &kp_fetch_response_schema, ver, flex, &resp);
        assert_int_equal(copy.nrefs, 0);
        assert_int_equal(ref.nrefs, 2); /* the two big fields; the small one is copied */
        assert_ptr_equal(ref.refs[0].p, big);
        assert_int_equal(ref.len + 2 * sizeof big, copy.len);
        assert_int_equal(kp_size(&kp_fetch_response_schema, ver, flex, &resp), copy.len);

        kp_span spans[5];
        int n = kp_writer_spans(&ref, spans);
        /* inline, big, inline, big; then the tagged fields when flexible */
        assert_int_equal(n, flex ? 5 : 4);
        uint8_t *joined = malloc(copy.len);
        size_t at = 0;
        for (int i = 0; i < n; i++) {
            assert_true(at + spans[i].len <= copy.len);
            memcpy(joined + at, spans[i].p, spans[i].len);
            at += spans[i].len;
        }
        assert_int_equal(at, copy.len);
        assert_memory_equal(joined, copy.buf, copy.len);
        free(joined);
        kp_writer_free(&copy);
        kp_writer_free(&ref);
    }
}

static void test_vec_list_offsets(void **state) {
    (void)state;
    const kp_msg *m = &kp_msg_list_offsets;
    kp_arena a = {0};
    kp_req_header h;
    size_t bn;
    static const uint8_t req1[] = {
        0x00, 0x02, 0x00, 0x01, 0x00, 0x00, 0x00, 0x09, 0x00, 0x01, 'k', /* key 2 v1 corr 9 */
        0xff, 0xff, 0xff, 0xff,                         /* replica_id -1 */
        0x00, 0x00, 0x00, 0x01,                         /* topics: 1 */
        0x00, 0x03, 'f', 'o', 'o',
        0x00, 0x00, 0x00, 0x02,                         /*   partitions: 2 */
        0x00, 0x00, 0x00, 0x00,                         /*     partition 0 */
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe, /*     timestamp -2 (earliest) */
        0x00, 0x00, 0x00, 0x01,                         /*     partition 1 */
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, /*     timestamp -1 (latest) */
    };
    const uint8_t *body = split_request(req1, sizeof req1, kp_is_flex(m, 1), &h, &bn);
    kp_list_offsets_request *q = decode_body(m, false, 1, body, bn, &a);
    assert_int_equal(q->replica_id, -1);
    assert_int_equal(q->isolation_level, 0);
    assert_int_equal(q->topics.n, 1);
    assert_int_equal(q->topics.v[0].partitions.n, 2);
    assert_true(q->topics.v[0].partitions.v[0].timestamp == -2);
    assert_int_equal(q->topics.v[0].partitions.v[1].partition_index, 1);
    assert_true(q->topics.v[0].partitions.v[1].timestamp == -1);
    assert_int_equal(q->topics.v[0].partitions.v[0].current_leader_epoch, -1);
    reencode(m, false, 1, q, body, bn);
    kp_arena_free(&a);
}

static void test_vec_create_topics(void **state) {
    (void)state;
    const kp_msg *m = &kp_msg_create_topics;
    kp_arena a = {0};
    kp_req_header h;
    size_t bn;
    static const uint8_t req5[] = {
        0x00, 0x13, 0x00, 0x05, 0x00, 0x00, 0x00, 0x0d, 0x00, 0x01, 'a', 0x00, /* key 19 v5, header v2 */
        0x02,                                           /* topics: 1 */
        0x04, 'f', 'o', 'o',                            /*   name */
        0x00, 0x00, 0x00, 0x03,                         /*   num_partitions 3 */
        0xff, 0xff,                                     /*   replication_factor -1 */
        0x01,                                           /*   assignments: [] */
        0x02,                                           /*   configs: 1 */
        0x0d, 'r', 'e', 't', 'e', 'n', 't', 'i', 'o', 'n', '.', 'm', 's',
        0x09, '8', '6', '4', '0', '0', '0', '0', '0',
        0x00,                                           /*     no tags */
        0x00,                                           /*   no tags */
        0x00, 0x00, 0x75, 0x30,                         /* timeout_ms 30000 */
        0x00,                                           /* validate_only false */
        0x00,                                           /* no tags */
    };
    const uint8_t *body = split_request(req5, sizeof req5, kp_is_flex(m, 5), &h, &bn);
    assert_int_equal(h.api_key, 19);
    kp_create_topics_request *q = decode_body(m, false, 5, body, bn, &a);
    assert_int_equal(q->topics.n, 1);
    const kp_create_topics_creatable_topic *t = &q->topics.v[0];
    assert_true(kp_str_eq(t->name, "foo"));
    assert_int_equal(t->num_partitions, 3);
    assert_int_equal(t->replication_factor, -1);
    assert_int_equal(t->assignments.n, 0);
    assert_int_equal(t->configs.n, 1);
    assert_true(kp_str_eq(t->configs.v[0].name, "retention.ms"));
    assert_true(kp_str_eq(t->configs.v[0].value, "86400000"));
    assert_int_equal(q->timeout_ms, 30000);
    assert_false(q->validate_only);
    reencode(m, false, 5, q, body, bn);
    kp_arena_free(&a);
}

/* DescribeLogDirs: v1 (classic) asks for every topic with a null array; v4 (flexible) answers with sizes */
static void test_vec_describe_log_dirs(void **state) {
    (void)state;
    const kp_msg *m = &kp_msg_describe_log_dirs;
    kp_arena a = {0};
    kp_req_header h;
    size_t bn;
    static const uint8_t req1[] = {
        0x00, 0x23, 0x00, 0x01, 0x00, 0x00, 0x00, 0x05, 0x00, 0x01, 'j', /* key 35 v1 corr 5 */
        0xff, 0xff, 0xff, 0xff,                         /* topics: null (all) */
    };
    const uint8_t *body = split_request(req1, sizeof req1, kp_is_flex(m, 1), &h, &bn);
    kp_describe_log_dirs_request *q1 = decode_body(m, false, 1, body, bn, &a);
    assert_int_equal(q1->topics.n, -1);
    reencode(m, false, 1, q1, body, bn);

    static const uint8_t req4[] = {
        0x00, 0x23, 0x00, 0x04, 0x00, 0x00, 0x00, 0x06, 0x00, 0x01, 'j', 0x00, /* key 35 v4, header v2 */
        0x02,                                           /* topics: 1 */
        0x02, 't',                                      /*   topic "t" */
        0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, /* partitions [0, 2] */
        0x00,                                           /*   no tags */
        0x00,                                           /* no tags */
    };
    body = split_request(req4, sizeof req4, kp_is_flex(m, 4), &h, &bn);
    kp_describe_log_dirs_request *q4 = decode_body(m, false, 4, body, bn, &a);
    assert_int_equal(q4->topics.n, 1);
    assert_true(kp_str_eq(q4->topics.v[0].topic, "t"));
    assert_int_equal(q4->topics.v[0].partitions.n, 2);
    assert_int_equal(q4->topics.v[0].partitions.v[1], 2);
    reencode(m, false, 4, q4, body, bn);

    static const uint8_t resp4[] = {
        0x00, 0x00, 0x00, 0x00,                         /* throttle_time_ms */
        0x00, 0x00,                                     /* error_code (v3+) */
        0x02,                                           /* results: 1 */
        0x00, 0x00,                                     /*   error_code */
        0x03, '/', 'd',                                 /*   log_dir "/d" */
        0x02,                                           /*   topics: 1 */
        0x02, 't',                                      /*     name "t" */
        0x02,                                           /*     partitions: 1 */
        0x00, 0x00, 0x00, 0x02,                         /*       partition_index 2 */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, /*       partition_size 256 */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /*       offset_lag 0 */
        0x00,                                           /*       is_future_key false */
        0x00,                                           /*       no tags */
        0x00,                                           /*     no tags */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, /*   total_bytes 4096 (v4+) */
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, /*   usable_bytes -1 (v4+) */
        0x00,                                           /*   no tags */
        0x00,                                           /* no tags */
    };
    kp_describe_log_dirs_response *p4 = decode_body(m, true, 4, resp4, sizeof resp4, &a);
    assert_int_equal(p4->results.n, 1);
    assert_true(kp_str_eq(p4->results.v[0].log_dir, "/d"));
    assert_int_equal(p4->results.v[0].topics.v[0].partitions.v[0].partition_size, 256);
    assert_int_equal(p4->results.v[0].total_bytes, 4096);
    assert_int_equal(p4->results.v[0].usable_bytes, -1);
    reencode(m, true, 4, p4, resp4, sizeof resp4);
    kp_arena_free(&a);
}

/* ListPartitionReassignments v0 (flexible from v0): a null topic list asks for every reassignment */
static void test_vec_list_partition_reassignments(void **state) {
    (void)state;
    const kp_msg *m = &kp_msg_list_partition_reassignments;
    kp_arena a = {0};
    kp_req_header h;
    size_t bn;
    static const uint8_t req0[] = {
        0x00, 0x2e, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x00, 0x01, 'j', 0x00, /* key 46 v0, header v2 */
        0x00, 0x00, 0x75, 0x30,                         /* timeout_ms 30000 */
        0x00,                                           /* topics: null */
        0x00,                                           /* no tags */
    };
    const uint8_t *body = split_request(req0, sizeof req0, kp_is_flex(m, 0), &h, &bn);
    assert_int_equal(h.api_key, 46);
    kp_list_partition_reassignments_request *q = decode_body(m, false, 0, body, bn, &a);
    assert_int_equal(q->timeout_ms, 30000);
    assert_int_equal(q->topics.n, -1);
    reencode(m, false, 0, q, body, bn);

    static const uint8_t resp0[] = {
        0x00, 0x00, 0x00, 0x00,                         /* throttle_time_ms */
        0x00, 0x00,                                     /* error_code */
        0x00,                                           /* error_message: null */
        0x01,                                           /* topics: [] */
        0x00,                                           /* no tags */
    };
    kp_list_partition_reassignments_response *p = decode_body(m, true, 0, resp0, sizeof resp0, &a);
    assert_int_equal(p->error_message.len, -1);
    assert_int_equal(p->topics.n, 0);
    reencode(m, true, 0, p, resp0, sizeof resp0);
    kp_arena_free(&a);
}

/* ===================================================================== */
/* transactions: vectors written by Apache Kafka's own serialisers        */
/* ===================================================================== */

/*
 * Each vector below is the body kafka-clients 4.4.0 writes for the *RequestData /
 * *ResponseData named in its comment (Message.write at that version), with a value other than
 * the default in every field that version has: the values the assertions check (the small
 * Java program that set them is not kept in the tree). Decoding must give those values and
 * re-encoding the same bytes.
 */

/* hex digits to bytes (out holds strlen(hex) / 2) */
static size_t unhex(const char *hex, uint8_t *out) {
    size_t n = 0;
    for (; hex[0] && hex[1]; hex += 2) {
        unsigned v;
        if (sscanf(hex, "%2x", &v) != 1) fail_msg("bad hex at %s", hex);
        out[n++] = (uint8_t)v;
    }
    return n;
}

/* Decode a Java vector of m at ver (all of it), check it re-encodes to the same bytes, return the struct. */
static void *java_vec(const kp_msg *m, bool resp, int ver, const char *hex, kp_arena *a) {
    size_t cap = strlen(hex) / 2 + 1;
    uint8_t *b = kp_arena_alloc(a, cap); /* decoded strings point into it */
    size_t n = unhex(hex, b);
    void *out = decode_body(m, resp, ver, b, n, a);
    reencode(m, resp, ver, out, b, n);
    return out;
}

static void assert_topic(kp_str name, const char *want) { assert_true(kp_str_eq(name, want)); }

static void check_apt_topics(const kp_add_partitions_to_txn_topic *t, int32_t n) {
    assert_int_equal(n, 2);
    assert_topic(t[0].name, "t1");
    assert_int_equal(t[0].partitions.n, 2);
    assert_int_equal(t[0].partitions.v[0], 0);
    assert_int_equal(t[0].partitions.v[1], 2);
    assert_topic(t[1].name, "t2");
    assert_int_equal(t[1].partitions.n, 1);
    assert_int_equal(t[1].partitions.v[0], 5);
}

static void test_vec_add_partitions_to_txn(void **state) {
    (void)state;
    const kp_msg *m = &kp_msg_add_partitions_to_txn;
    kp_arena a = {0};
    static const char req0[] = /* kafka-clients 4.4.0: AddPartitionsToTxnRequestData v0 */
        "000574786e2d3100000000000003e8000300000002000274310000000200000000000000020002743200000001000000"
        "05";
    static const char req3[] = /* kafka-clients 4.4.0: AddPartitionsToTxnRequestData v3 */
        "0674786e2d3100000000000003e80003030374310300000000000000020003743202000000050000";
    static const char req5[] = /* kafka-clients 4.4.0: AddPartitionsToTxnRequestData v5 */
        "030674786e2d3100000000000003e80003010303743103000000000000000200037432020000000500000674786e2d32"
        "00000000000007d0000400010000";
    for (int i = 0; i < 2; i++) {
        int ver = i ? 3 : 0;
        kp_add_partitions_to_txn_request *q = java_vec(m, false, ver, i ? req3 : req0, &a);
        assert_true(kp_str_eq(q->v3_and_below_transactional_id, "txn-1"));
        assert_true(q->v3_and_below_producer_id == 1000);
        assert_int_equal(q->v3_and_below_producer_epoch, 3);
        check_apt_topics(q->v3_and_below_topics.v, q->v3_and_below_topics.n);
        assert_int_equal(q->transactions.n, 0);
    }
    kp_add_partitions_to_txn_request *q5 = java_vec(m, false, 5, req5, &a);
    assert_true(kp_str_eq(q5->v3_and_below_transactional_id, "")); /* absent: its default */
    assert_int_equal(q5->transactions.n, 2);
    const kp_add_partitions_to_txn_transaction *t = q5->transactions.v;
    assert_true(kp_str_eq(t[0].transactional_id, "txn-1"));
    assert_true(t[0].producer_id == 1000);
    assert_int_equal(t[0].producer_epoch, 3);
    assert_true(t[0].verify_only);
    check_apt_topics(t[0].topics.v, t[0].topics.n);
    assert_true(kp_str_eq(t[1].transactional_id, "txn-2"));
    assert_true(t[1].producer_id == 2000);
    assert_int_equal(t[1].producer_epoch, 4);
    assert_false(t[1].verify_only);
    assert_int_equal(t[1].topics.n, 0);

    static const char resp0[] = /* kafka-clients 4.4.0: AddPartitionsToTxnResponseData v0 */
        "00000007000000010002743100000002000000000033000000020037";
    static const char resp3[] = /* kafka-clients 4.4.0: AddPartitionsToTxnResponseData v3 */
        "00000007020374310300000000003300000000020037000000";
    static const char resp5[] = /* kafka-clients 4.4.0: AddPartitionsToTxnResponseData v5 */
        "000000070031020674786e2d31020374320200000005003000000000";
    for (int i = 0; i < 2; i++) {
        kp_add_partitions_to_txn_response *p = java_vec(m, true, i ? 3 : 0, i ? resp3 : resp0, &a);
        assert_int_equal(p->throttle_time_ms, 7);
        assert_int_equal(p->results_by_topic_v3_and_below.n, 1);
        const kp_add_partitions_to_txn_topic_result *tr = p->results_by_topic_v3_and_below.v;
        assert_topic(tr->name, "t1");
        assert_int_equal(tr->results_by_partition.n, 2);
        assert_int_equal(tr->results_by_partition.v[0].partition_index, 0);
        assert_int_equal(tr->results_by_partition.v[0].partition_error_code, KERR_CONCURRENT_TRANSACTIONS);
        assert_int_equal(tr->results_by_partition.v[1].partition_index, 2);
        assert_int_equal(tr->results_by_partition.v[1].partition_error_code, KERR_OPERATION_NOT_ATTEMPTED);
    }
    kp_add_partitions_to_txn_response *p5 = java_vec(m, true, 5, resp5, &a);
    assert_int_equal(p5->throttle_time_ms, 7);
    assert_int_equal(p5->error_code, KERR_INVALID_PRODUCER_ID_MAPPING);
    assert_int_equal(p5->results_by_transaction.n, 1);
    const kp_add_partitions_to_txn_result *r = p5->results_by_transaction.v;
    assert_true(kp_str_eq(r->transactional_id, "txn-1"));
    assert_int_equal(r->topic_results.n, 1);
    assert_topic(r->topic_results.v[0].name, "t2");
    assert_int_equal(r->topic_results.v[0].results_by_partition.v[0].partition_index, 5);
    assert_int_equal(r->topic_results.v[0].results_by_partition.v[0].partition_error_code, KERR_INVALID_TXN_STATE);
    kp_arena_free(&a);
}

static void test_vec_add_offsets_to_txn(void **state) {
    (void)state;
    const kp_msg *m = &kp_msg_add_offsets_to_txn;
    kp_arena a = {0};
    static const struct { int ver; const char *req, *resp; } v[] = {
        {0, /* kafka-clients 4.4.0: AddOffsetsToTxnRequestData / ResponseData v0 */
         "000574786e2d3100000000000003e800030003677270",
         "000000070033"},
        {3, /* kafka-clients 4.4.0: AddOffsetsToTxnRequestData / ResponseData v3 */
         "0674786e2d3100000000000003e800030467727000",
         "00000007003300"},
        {4, /* kafka-clients 4.4.0: AddOffsetsToTxnRequestData / ResponseData v4 */
         "0674786e2d3100000000000003e800030467727000",
         "00000007003300"},
    };
    for (size_t i = 0; i < N(v); i++) {
        kp_add_offsets_to_txn_request *q = java_vec(m, false, v[i].ver, v[i].req, &a);
        assert_true(kp_str_eq(q->transactional_id, "txn-1"));
        assert_true(q->producer_id == 1000);
        assert_int_equal(q->producer_epoch, 3);
        assert_true(kp_str_eq(q->group_id, "grp"));
        kp_add_offsets_to_txn_response *p = java_vec(m, true, v[i].ver, v[i].resp, &a);
        assert_int_equal(p->throttle_time_ms, 7);
        assert_int_equal(p->error_code, KERR_CONCURRENT_TRANSACTIONS);
    }
    kp_arena_free(&a);
}

static void test_vec_end_txn(void **state) {
    (void)state;
    const kp_msg *m = &kp_msg_end_txn;
    kp_arena a = {0};
    static const struct { int ver; const char *req, *resp; } v[] = {
        {0, /* kafka-clients 4.4.0: EndTxnRequestData / ResponseData v0 */
         "000574786e2d3100000000000003e8000301",
         "000000070030"},
        {3, /* kafka-clients 4.4.0: EndTxnRequestData / ResponseData v3 */
         "0674786e2d3100000000000003e800030100",
         "00000007003000"},
        {5, /* kafka-clients 4.4.0: EndTxnRequestData / ResponseData v5 */
         "0674786e2d3100000000000003e800030100",
         "00000007003000000000000003e9000400"},
    };
    for (size_t i = 0; i < N(v); i++) {
        kp_end_txn_request *q = java_vec(m, false, v[i].ver, v[i].req, &a);
        assert_true(kp_str_eq(q->transactional_id, "txn-1"));
        assert_true(q->producer_id == 1000);
        assert_int_equal(q->producer_epoch, 3);
        assert_true(q->committed);
        kp_end_txn_response *p = java_vec(m, true, v[i].ver, v[i].resp, &a);
        assert_int_equal(p->throttle_time_ms, 7);
        assert_int_equal(p->error_code, KERR_INVALID_TXN_STATE);
        /* before v5 Java drops them (ignorable) and we read the defaults */
        assert_true(p->producer_id == (v[i].ver >= 5 ? 1001 : -1));
        assert_int_equal(p->producer_epoch, v[i].ver >= 5 ? 4 : -1);
    }
    kp_arena_free(&a);
}

static void test_vec_txn_offset_commit(void **state) {
    (void)state;
    const kp_msg *m = &kp_msg_txn_offset_commit;
    kp_arena a = {0};
    static const struct { int ver; const char *req, *resp; } v[] = {
        {0, /* kafka-clients 4.4.0: TxnOffsetCommitRequestData / ResponseData v0 */
         "000574786e2d31000367727000000000000003e8000300000001000274310000000200000000000000000000002a0004"
         "6d65746100000001000000000000002bffff",
         "0000000700000001000274310000000200000000002f000000010078"},
        {3, /* kafka-clients 4.4.0: TxnOffsetCommitRequestData / ResponseData v3 */
         "0674786e2d310467727000000000000003e8000300000005046d2d3107696e73742d3102037431030000000000000000"
         "0000002a00000009056d6574610000000001000000000000002b0000000900000000",
         "00000007020374310300000000002f00000000010078000000"},
        {5, /* kafka-clients 4.4.0: TxnOffsetCommitRequestData / ResponseData v5 */
         "0674786e2d310467727000000000000003e8000300000005046d2d3107696e73742d3102037431030000000000000000"
         "0000002a00000009056d6574610000000001000000000000002b0000000900000000",
         "00000007020374310300000000002f00000000010078000000"},
    };
    for (size_t i = 0; i < N(v); i++) {
        bool v3 = v[i].ver >= 3;
        kp_txn_offset_commit_request *q = java_vec(m, false, v[i].ver, v[i].req, &a);
        assert_true(kp_str_eq(q->transactional_id, "txn-1"));
        assert_true(kp_str_eq(q->group_id, "grp"));
        assert_true(q->producer_id == 1000);
        assert_int_equal(q->producer_epoch, 3);
        assert_int_equal(q->generation_id_or_member_epoch, v3 ? 5 : -1);
        assert_true(kp_str_eq(q->member_id, v3 ? "m-1" : ""));
        if (v3)
            assert_true(kp_str_eq(q->group_instance_id, "inst-1"));
        else
            assert_int_equal(q->group_instance_id.len, -1);
        assert_int_equal(q->topics.n, 1);
        assert_topic(q->topics.v[0].name, "t1");
        assert_int_equal(q->topics.v[0].partitions.n, 2);
        const kp_txn_offset_commit_request_partition *pp = q->topics.v[0].partitions.v;
        assert_int_equal(pp[0].partition_index, 0);
        assert_true(pp[0].committed_offset == 42);
        assert_int_equal(pp[0].committed_leader_epoch, v[i].ver >= 2 ? 9 : -1);
        assert_true(kp_str_eq(pp[0].committed_metadata, "meta"));
        assert_int_equal(pp[1].partition_index, 1);
        assert_true(pp[1].committed_offset == 43);
        assert_int_equal(pp[1].committed_metadata.len, -1);

        kp_txn_offset_commit_response *p = java_vec(m, true, v[i].ver, v[i].resp, &a);
        assert_int_equal(p->throttle_time_ms, 7);
        assert_int_equal(p->topics.n, 1);
        assert_topic(p->topics.v[0].name, "t1");
        assert_int_equal(p->topics.v[0].partitions.n, 2);
        assert_int_equal(p->topics.v[0].partitions.v[0].partition_index, 0);
        assert_int_equal(p->topics.v[0].partitions.v[0].error_code, KERR_INVALID_PRODUCER_EPOCH);
        assert_int_equal(p->topics.v[0].partitions.v[1].partition_index, 1);
        assert_int_equal(p->topics.v[0].partitions.v[1].error_code, KERR_TRANSACTION_ABORTABLE);
    }
    kp_arena_free(&a);
}

static void test_vec_describe_transactions(void **state) {
    (void)state;
    const kp_msg *m = &kp_msg_describe_transactions;
    kp_arena a = {0};
    static const char req0[] = /* kafka-clients 4.4.0: DescribeTransactionsRequestData v0 */
        "030674786e2d310674786e2d3200";
    kp_describe_transactions_request *q = java_vec(m, false, 0, req0, &a);
    assert_int_equal(q->transactional_ids.n, 2);
    assert_true(kp_str_eq(q->transactional_ids.v[0], "txn-1"));
    assert_true(kp_str_eq(q->transactional_ids.v[1], "txn-2"));

    static const char resp0[] = /* kafka-clients 4.4.0: DescribeTransactionsResponseData v0 */
        "000000070300000674786e2d31084f6e676f696e670000ea600000018bcfe5680000000000000003e800030203743103"
        "0000000000000002000000690674786e2d3201000000000000000000000000ffffffffffffffffffff010000";
    kp_describe_transactions_response *p = java_vec(m, true, 0, resp0, &a);
    assert_int_equal(p->throttle_time_ms, 7);
    assert_int_equal(p->transaction_states.n, 2);
    const kp_describe_transactions_transaction_state *s = p->transaction_states.v;
    assert_int_equal(s[0].error_code, 0);
    assert_true(kp_str_eq(s[0].transactional_id, "txn-1"));
    assert_true(kp_str_eq(s[0].transaction_state, "Ongoing"));
    assert_int_equal(s[0].transaction_timeout_ms, 60000);
    assert_true(s[0].transaction_start_time_ms == 1700000000000LL);
    assert_true(s[0].producer_id == 1000);
    assert_int_equal(s[0].producer_epoch, 3);
    assert_int_equal(s[0].topics.n, 1);
    assert_topic(s[0].topics.v[0].topic, "t1");
    assert_int_equal(s[0].topics.v[0].partitions.n, 2);
    assert_int_equal(s[0].topics.v[0].partitions.v[1], 2);
    assert_int_equal(s[1].error_code, KERR_TRANSACTIONAL_ID_NOT_FOUND);
    assert_true(kp_str_eq(s[1].transactional_id, "txn-2"));
    assert_true(kp_str_eq(s[1].transaction_state, ""));
    assert_true(s[1].producer_id == -1);
    assert_int_equal(s[1].producer_epoch, -1);
    assert_int_equal(s[1].topics.n, 0);
    kp_arena_free(&a);
}

static void test_vec_list_transactions(void **state) {
    (void)state;
    const kp_msg *m = &kp_msg_list_transactions;
    kp_arena a = {0};
    static const char *const req[] = {
        /* kafka-clients 4.4.0: ListTransactionsRequestData v0 */
        "03084f6e676f696e670e50726570617265436f6d6d69740300000000000003e800000000000007d000",
        /* kafka-clients 4.4.0: ListTransactionsRequestData v1 */
        "03084f6e676f696e670e50726570617265436f6d6d69740300000000000003e800000000000007d0000000000000ea60"
        "00",
        /* kafka-clients 4.4.0: ListTransactionsRequestData v2 */
        "03084f6e676f696e670e50726570617265436f6d6d69740300000000000003e800000000000007d0000000000000ea60"
        "0774786e2d2e2a00",
    };
    for (int ver = 0; ver <= 2; ver++) {
        kp_list_transactions_request *q = java_vec(m, false, ver, req[ver], &a);
        assert_int_equal(q->state_filters.n, 2);
        assert_true(kp_str_eq(q->state_filters.v[0], "Ongoing"));
        assert_true(kp_str_eq(q->state_filters.v[1], "PrepareCommit"));
        assert_int_equal(q->producer_id_filters.n, 2);
        assert_true(q->producer_id_filters.v[0] == 1000);
        assert_true(q->producer_id_filters.v[1] == 2000);
        assert_true(q->duration_filter == (ver >= 1 ? 60000 : -1));
        if (ver >= 2)
            assert_true(kp_str_eq(q->transactional_id_pattern, "txn-.*"));
        else
            assert_int_equal(q->transactional_id_pattern.len, -1);
    }
    static const char *const resp[] = {
        /* kafka-clients 4.4.0: ListTransactionsResponseData v0 */
        "0000000700800206426f677573020674786e2d3100000000000003e8084f6e676f696e670000",
        /* kafka-clients 4.4.0: ListTransactionsResponseData v2 */
        "0000000700800206426f677573020674786e2d3100000000000003e8084f6e676f696e670000",
    };
    for (int i = 0; i < 2; i++) {
        kp_list_transactions_response *p = java_vec(m, true, i * 2, resp[i], &a);
        assert_int_equal(p->throttle_time_ms, 7);
        assert_int_equal(p->error_code, KERR_INVALID_REGULAR_EXPRESSION);
        assert_int_equal(p->unknown_state_filters.n, 1);
        assert_true(kp_str_eq(p->unknown_state_filters.v[0], "Bogus"));
        assert_int_equal(p->transaction_states.n, 1);
        assert_true(kp_str_eq(p->transaction_states.v[0].transactional_id, "txn-1"));
        assert_true(p->transaction_states.v[0].producer_id == 1000);
        assert_true(kp_str_eq(p->transaction_states.v[0].transaction_state, "Ongoing"));
    }
    kp_arena_free(&a);
}

/* The error codes of transactions, by the names Kafka's Errors enum gives them. */
static void test_txn_error_names(void **state) {
    (void)state;
    static const struct { int code; const char *name; } e[] = {
        {19, "NOT_ENOUGH_REPLICAS"}, {47, "INVALID_PRODUCER_EPOCH"}, {48, "INVALID_TXN_STATE"},
        {49, "INVALID_PRODUCER_ID_MAPPING"}, {50, "INVALID_TRANSACTION_TIMEOUT"}, {51, "CONCURRENT_TRANSACTIONS"},
        {52, "TRANSACTION_COORDINATOR_FENCED"}, {53, "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"},
        {55, "OPERATION_NOT_ATTEMPTED"}, {88, "UNSTABLE_OFFSET_COMMIT"}, {90, "PRODUCER_FENCED"},
        {105, "TRANSACTIONAL_ID_NOT_FOUND"}, {120, "TRANSACTION_ABORTABLE"}, {128, "INVALID_REGULAR_EXPRESSION"},
    };
    for (size_t i = 0; i < N(e); i++) {
        int code = -2;
        assert_string_equal(kp_err_name(e[i].code), e[i].name);
        assert_true(kp_err_known(e[i].code));
        assert_true(kp_err_by_name(e[i].name, &code));
        assert_int_equal(code, e[i].code);
    }
}

/*
 * Regression (issue 30, librdkafka's suite): OffsetDelete's GROUP_SUBSCRIBED_TO_TOPIC was logged
 * as UNKNOWN_ERROR_CODE(86). Every code Kafka defines, -1 to 136 with none missing, has its name.
 */
static void test_every_kafka_error_code_has_its_name(void **state) {
    (void)state;
    for (int code = -1; code <= 136; code++) {
        if (!kp_err_known(code)) fail_msg("error code %d has no name", code);
        int back = -2;
        assert_true(kp_err_by_name(kp_err_name(code), &back));
        assert_int_equal(back, code);
    }
    assert_string_equal(kp_err_name(86), "GROUP_SUBSCRIBED_TO_TOPIC");
    assert_string_equal(kp_err_name(114), "MISMATCHED_ENDPOINT_TYPE");
    assert_string_equal(kp_err_name(115), "UNSUPPORTED_ENDPOINT_TYPE");
    assert_string_equal(kp_err_name(6), "NOT_LEADER_OR_FOLLOWER");
    assert_false(kp_err_known(137));
    assert_string_equal(kp_err_name(137), "UNKNOWN_ERROR_CODE");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_kafka_error_code_has_its_name),
        cmocka_unit_test(test_fixed_ints),
        cmocka_unit_test(test_uvarint),
        cmocka_unit_test(test_uvarint_overlong),
        cmocka_unit_test(test_zigzag),
        cmocka_unit_test(test_zigzag_overlong),
        cmocka_unit_test(test_raw_and_strings),
        cmocka_unit_test(test_schema_classic_vector),
        cmocka_unit_test(test_schema_flex_vector),
        cmocka_unit_test(test_schema_defaults_not_emitted),
        cmocka_unit_test(test_schema_long_string),
        cmocka_unit_test(test_schema_truncation_everywhere),
        cmocka_unit_test(test_schema_bad_lengths),
        cmocka_unit_test(test_schema_tags),
        cmocka_unit_test(test_request_header),
        cmocka_unit_test(test_response_header_flex),
        cmocka_unit_test(test_round_trip_all_messages),
        cmocka_unit_test(test_vec_api_versions),
        cmocka_unit_test(test_vec_metadata),
        cmocka_unit_test(test_records_by_reference),
        cmocka_unit_test(test_vec_produce),
        cmocka_unit_test(test_vec_fetch),
        cmocka_unit_test(test_vec_list_offsets),
        cmocka_unit_test(test_vec_create_topics),
        cmocka_unit_test(test_vec_describe_log_dirs),
        cmocka_unit_test(test_vec_list_partition_reassignments),
        cmocka_unit_test(test_vec_add_partitions_to_txn),
        cmocka_unit_test(test_vec_add_offsets_to_txn),
        cmocka_unit_test(test_vec_end_txn),
        cmocka_unit_test(test_vec_txn_offset_commit),
        cmocka_unit_test(test_vec_describe_transactions),
        cmocka_unit_test(test_vec_list_transactions),
        cmocka_unit_test(test_txn_error_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
