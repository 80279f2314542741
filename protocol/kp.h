/*
 * kp: the Kafka wire protocol, pure (no I/O, no globals).
 *
 * Messages are described declaratively (kp_schema tables, one per message in
 * protocol/msg_*.c); the one engine in kp_schema.c derives decode, encode and
 * size from those tables for every version, flexible versions included.
 *
 * Decoded strings and byte fields point into the request buffer, which the
 * caller keeps alive as long as the decoded struct is used. Arrays of
 * structs are allocated from a kp_arena that is freed in one go.
 */
#ifndef KP_H
#define KP_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#include "kp_apis.h"

/* ---- value types seen by handlers ---- */

/* len == -1 means null. Not NUL-terminated. */
typedef struct kp_str {
    const char *p;
    int32_t len;
} kp_str;
typedef kp_str kp_bytes;

/* n == -1 means a null array. v points to n elements of the field's element type. */
typedef struct kp_arr {
    int32_t n;
    void *v;
} kp_arr;
#define KP_ARR(T) \
    union {       \
        kp_arr a; \
        struct {  \
            int32_t n; \
            T *v;  \
        };        \
    }

typedef struct kp_uuid {
    uint8_t b[16];
} kp_uuid;

#define KP_STR_NULL ((kp_str){NULL, -1})
kp_str kp_str_c(const char *s);            /* from a C string; NULL gives null */
bool kp_str_eq(kp_str a, const char *s);   /* content equality with a C string */
char *kp_str_dup(kp_str s);                /* malloc'd NUL-terminated copy; null gives NULL */

/* ---- arena: everything decoded for one request is freed at once ---- */

typedef struct kp_arena_chunk kp_arena_chunk;
typedef struct kp_arena {
    kp_arena_chunk *head;
} kp_arena;
void *kp_arena_alloc(kp_arena *a, size_t n); /* zeroed; aborts on OOM */
void kp_arena_free(kp_arena *a);

/* ---- reader: bounds-checked; every failure records where and why ---- */

typedef struct kp_reader {
    const uint8_t *buf;
    size_t len, pos;
    size_t base;         /* offset of buf within the whole frame, for error positions */
    const char *err;     /* first error, NULL if none */
    const char *err_field;
    size_t err_pos;      /* base + offset of the first byte of what failed: the truncated or
                            invalid primitive, varint, length/count prefix or tag number
                            (for a string or bytes cut short: the first byte of its data) */
} kp_reader;

void kp_reader_init(kp_reader *r, const void *buf, size_t len);
bool kp_rd_fail(kp_reader *r, const char *why);
bool kp_rd_i8(kp_reader *r, int8_t *v);
bool kp_rd_i16(kp_reader *r, int16_t *v);
bool kp_rd_i32(kp_reader *r, int32_t *v);
bool kp_rd_i64(kp_reader *r, int64_t *v);
bool kp_rd_uvarint(kp_reader *r, uint64_t *v);
bool kp_rd_varint(kp_reader *r, int32_t *v);   /* zigzag */
bool kp_rd_varlong(kp_reader *r, int64_t *v);  /* zigzag */
bool kp_rd_raw(kp_reader *r, size_t n, const uint8_t **p);
static inline size_t kp_rd_left(const kp_reader *r) { return r->len - r->pos; }

/* ---- writer: growable; a writer with counting=true only measures ---- */

/* Bytes of the encoded message that stay where they are: they belong at offset `at` of buf. */
typedef struct kp_wref {
    size_t at;
    const uint8_t *p;
    size_t len;
} kp_wref;

typedef struct kp_writer {
    uint8_t *buf;
    size_t len, cap;
    bool counting;
    /*
     * With ref_min > 0, records fields of at least ref_min bytes are not
     * copied into buf but referenced: the message is buf with each refs[i]
     * inserted at refs[i].at, in order (see kp_writer_spans). Fetch answers
     * thus go from the bytes read out of storage to the socket without
     * another copy; whoever set ref_min keeps the referenced bytes alive
     * until the message is written.
     */
    size_t ref_min;
    kp_wref *refs;
    int nrefs, cap_refs;
} kp_writer;

void kp_writer_init(kp_writer *w, size_t cap);
void kp_writer_free(kp_writer *w);
void *kp_wr_reserve(kp_writer *w, size_t n); /* returns where to write n bytes (NULL when counting) */
void kp_wr_i8(kp_writer *w, int8_t v);
void kp_wr_i16(kp_writer *w, int16_t v);
void kp_wr_i32(kp_writer *w, int32_t v);
void kp_wr_i64(kp_writer *w, int64_t v);
void kp_wr_uvarint(kp_writer *w, uint64_t v);
void kp_wr_varint(kp_writer *w, int32_t v);
void kp_wr_varlong(kp_writer *w, int64_t v);
void kp_wr_raw(kp_writer *w, const void *p, size_t n);
/* kp_wr_raw, or a reference to p when the writer takes references of n bytes (ref_min). */
void kp_wr_ref(kp_writer *w, const void *p, size_t n);
/* The message as consecutive spans, at most 2 * nrefs + 1 of them, into out; returns how many. */
typedef struct kp_span {
    const uint8_t *p;
    size_t len;
} kp_span;
int kp_writer_spans(const kp_writer *w, kp_span *out);
size_t kp_uvarint_len(uint64_t v);

/* big-endian helpers for patching buffers in place */
static inline void kp_put_i32(uint8_t *p, int32_t v) {
    uint32_t u = (uint32_t)v;
    p[0] = (uint8_t)(u >> 24); p[1] = (uint8_t)(u >> 16); p[2] = (uint8_t)(u >> 8); p[3] = (uint8_t)u;
}
static inline void kp_put_i64(uint8_t *p, int64_t v) {
    kp_put_i32(p, (int32_t)((uint64_t)v >> 32));
    kp_put_i32(p + 4, (int32_t)(uint64_t)v);
}
static inline void kp_put_i16(uint8_t *p, int16_t v) {
    p[0] = (uint8_t)((uint16_t)v >> 8); p[1] = (uint8_t)v;
}
static inline int32_t kp_get_i32(const uint8_t *p) {
    return (int32_t)(((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3]);
}
static inline int16_t kp_get_i16(const uint8_t *p) { return (int16_t)(((uint16_t)p[0] << 8) | p[1]); }
static inline int64_t kp_get_i64(const uint8_t *p) {
    return (int64_t)(((uint64_t)(uint32_t)kp_get_i32(p) << 32) | (uint32_t)kp_get_i32(p + 4));
}

/* ---- declarative message descriptions ---- */

enum kp_type {
    KP_BOOL, KP_I8, KP_I16, KP_U16, KP_I32, KP_U32, KP_I64, KP_F64, KP_UUID,
    KP_STR,     /* kp_str: int16 length, or compact in flexible versions */
    KP_BYTES,   /* kp_bytes: int32 length, or compact */
    KP_RECORDS, /* kp_bytes holding record batches; same wire form as nullable bytes */
    KP_ARRAY,   /* kp_arr of .elem (KP_STRUCT elements use .sub) */
    KP_STRUCT,  /* a nested struct stored inline at .off, described by .sub; nullable (null_from set):
                 * its C struct begins with `bool present` (false: null), before the described fields */
};

#define KV_MAX 127 /* "every version from vmin on" */
#define KV_NEVER 127

typedef struct kp_schema kp_schema;
typedef struct kp_field {
    const char *name;
    uint8_t type;
    uint8_t elem;          /* element type of KP_ARRAY */
    int8_t vmin, vmax;     /* versions the field exists in */
    int8_t null_from;      /* nullable from this version (KV_NEVER: never) */
    int16_t tag;           /* -1: regular field; >= 0: tagged field (flexible versions only) */
    uint16_t off;          /* offset of the value in the C struct */
    const kp_schema *sub;  /* element/struct description */
    int64_t dflt;          /* ints: default when absent; str/bytes: -1 null, 0 empty */
} kp_field;

struct kp_schema {
    const char *name;
    uint16_t size;         /* sizeof the C struct */
    uint16_t nfields;
    const kp_field *fields;
};

/* Field table helpers: KF(type, Struct, member, vmin, vmax, overrides...) */
#define KF(t, S, m, lo, hi, ...)                                                              \
    {.name = #m, .type = (t), .vmin = (lo), .vmax = (hi), .null_from = KV_NEVER, .tag = -1, \
     .off = (uint16_t)offsetof(S, m), __VA_ARGS__}
/* array of structs described by schema SUB */
#define KFA(S, m, lo, hi, SUB, ...) KF(KP_ARRAY, S, m, lo, hi, .elem = KP_STRUCT, .sub = &(SUB), __VA_ARGS__)
/* array of primitive type E */
#define KFP(E, S, m, lo, hi, ...) KF(KP_ARRAY, S, m, lo, hi, .elem = (E), __VA_ARGS__)
#define KSCHEMA(var, S, tbl) \
    const kp_schema var = {#S, (uint16_t)sizeof(S), (uint16_t)(sizeof(tbl) / sizeof(tbl[0])), tbl}

/* A message: both directions and its version range as implemented. */
typedef struct kp_msg {
    int16_t key;
    const char *name;
    int16_t vmin, vmax;    /* versions this build can decode and encode */
    int16_t flex;          /* first flexible version (KV_NEVER: none) */
    const kp_schema *req, *resp;
} kp_msg;

/* The registry (kp_msgs.c), generated from the list of kp_apis.h. */
const kp_msg *kp_msg_get(int16_t key);     /* NULL when unknown */
const kp_msg *kp_msg_by_name(const char *name, size_t len); /* "Metadata", any case; NULL when unknown */
const char *kp_api_name(int16_t key);      /* "Unknown" when unknown */
static inline bool kp_is_flex(const kp_msg *m, int16_t v) { return m->flex != KV_NEVER && v >= m->flex; }

/* Decode one struct at version ver. Returns false with r->err set. */
bool kp_decode(kp_reader *r, const kp_schema *s, int ver, bool flex, void *out, kp_arena *a);
/* Encode; with a counting writer this is the size. */
void kp_encode(kp_writer *w, const kp_schema *s, int ver, bool flex, const void *in);
size_t kp_size(const kp_schema *s, int ver, bool flex, const void *in);
/* Fill the defaults of every field for version ver (what decode does for absent fields). */
void kp_defaults(const kp_schema *s, int ver, void *out);
/* Bytes a value of type t (an array element; sub for KP_STRUCT) takes in a C struct. */
size_t kp_type_size(uint8_t t, const kp_schema *sub);

/* ---- request / response headers ---- */

typedef struct kp_req_header {
    int16_t api_key;
    int16_t api_version;
    int32_t correlation_id;
    kp_str client_id;
} kp_req_header;

/* Reads header v1 (v2 when flex: plus tagged fields). */
bool kp_decode_req_header(kp_reader *r, bool flex, kp_req_header *h);
bool kp_peek_req_header(const uint8_t *buf, size_t len, int16_t *key, int16_t *ver, int32_t *corr);
/* Whether the response header carries tagged fields (ApiVersions never does). */
bool kp_resp_header_flex(const kp_msg *m, int16_t ver);

#endif
