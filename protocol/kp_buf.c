/* Primitive encodings: big-endian ints, unsigned and zigzag varints, arena, strings. */
#include "kp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kp_mem.h"

kp_str kp_str_c(const char *s) {
    if (!s) return KP_STR_NULL;
    return (kp_str){s, (int32_t)strlen(s)};
}

bool kp_str_eq(kp_str a, const char *s) {
    if (a.len < 0 || !s) return a.len < 0 && !s;
    return strlen(s) == (size_t)a.len && memcmp(a.p, s, (size_t)a.len) == 0;
}

char *kp_str_dup(kp_str s) {
    if (s.len < 0) return NULL;
    char *d = xmalloc((size_t)s.len + 1);
    if (s.len) memcpy(d, s.p, (size_t)s.len);
    d[s.len] = 0;
    return d;
}

/* ---- arena ---- */

struct kp_arena_chunk {
    kp_arena_chunk *next;
    size_t used, cap;
    max_align_t data[];
};

/*
 * An arena's first chunk is small enough for glibc's per-thread cache (blocks up to 1,032 bytes),
 * where its malloc and free are a pop and a push: a 4 KiB first chunk went through the heap's bins
 * for every request, and most requests (Produce, Fetch, the transactions' APIs) need less (issue
 * 37). Later chunks are 4 KiB, or the size asked.
 */
#define ARENA_FIRST_CAP (1024 - sizeof(kp_arena_chunk))
#define ARENA_CHUNK_CAP 4096

void *kp_arena_alloc(kp_arena *a, size_t n) {
    n = (n + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
    kp_arena_chunk *c = a->head;
    if (!c || c->cap - c->used < n) {
        size_t want = c ? ARENA_CHUNK_CAP : ARENA_FIRST_CAP;
        size_t cap = n > want ? n : want;
        c = xmalloc(sizeof(*c) + cap);
        c->used = 0;
        c->cap = cap;
        c->next = a->head;
        a->head = c;
    }
    void *p = (char *)c->data + c->used;
    c->used += n;
    memset(p, 0, n);
    return p;
}

void kp_arena_free(kp_arena *a) {
    kp_arena_chunk *c = a->head;
    while (c) {
        kp_arena_chunk *n = c->next;
        free(c);
        c = n;
    }
    a->head = NULL;
}

/* ---- reader ---- */

void kp_reader_init(kp_reader *r, const void *buf, size_t len) {
    memset(r, 0, sizeof(*r));
    r->buf = buf;
    r->len = len;
}

bool kp_rd_fail(kp_reader *r, const char *why) {
    if (!r->err) {
        r->err = why;
        r->err_pos = r->base + r->pos;
    }
    return false;
}

static bool need(kp_reader *r, size_t n) {
    if (r->err) return false;
    if (r->len - r->pos < n) return kp_rd_fail(r, "truncated");
    return true;
}

bool kp_rd_i8(kp_reader *r, int8_t *v) {
    if (!need(r, 1)) return false;
    *v = (int8_t)r->buf[r->pos++];
    return true;
}

bool kp_rd_i16(kp_reader *r, int16_t *v) {
    if (!need(r, 2)) return false;
    *v = kp_get_i16(r->buf + r->pos);
    r->pos += 2;
    return true;
}

bool kp_rd_i32(kp_reader *r, int32_t *v) {
    if (!need(r, 4)) return false;
    *v = kp_get_i32(r->buf + r->pos);
    r->pos += 4;
    return true;
}

bool kp_rd_i64(kp_reader *r, int64_t *v) {
    if (!need(r, 8)) return false;
    *v = kp_get_i64(r->buf + r->pos);
    r->pos += 8;
    return true;
}

/*
 * Unsigned LEB128 of at most maxbytes bytes holding at most bits bits. A
 * failure (truncated, too long, or bits beyond the range) points at the
 * varint's first byte.
 */
static bool rd_uvarint(kp_reader *r, uint64_t *v, int maxbytes, int bits) {
    if (r->err) return false;
    size_t start = r->pos;
    uint64_t x = 0;
    for (int i = 0, shift = 0; i < maxbytes; i++, shift += 7) {
        if (r->pos >= r->len) {
            r->pos = start;
            return kp_rd_fail(r, "truncated");
        }
        uint8_t b = r->buf[r->pos++];
        /* the last byte may only carry the bits that still fit */
        if (shift + 7 > bits && (b & 0x7f) >> (bits - shift)) {
            r->pos = start;
            return kp_rd_fail(r, bits == 64 ? "varint overflows 64 bits" : "varint overflows 32 bits");
        }
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return true;
        }
    }
    r->pos = start;
    return kp_rd_fail(r, maxbytes == 10 ? "varint longer than 10 bytes" : "varint longer than 5 bytes");
}

bool kp_rd_uvarint(kp_reader *r, uint64_t *v) { return rd_uvarint(r, v, 10, 64); }

bool kp_rd_varlong(kp_reader *r, int64_t *v) {
    uint64_t u;
    if (!rd_uvarint(r, &u, 10, 64)) return false;
    *v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
    return true;
}

/* Like Kafka's ByteUtils.readVarint: at most 5 bytes, 32 bits. */
bool kp_rd_varint(kp_reader *r, int32_t *v) {
    uint64_t u;
    if (!rd_uvarint(r, &u, 5, 32)) return false;
    *v = (int32_t)((int64_t)(u >> 1) ^ -(int64_t)(u & 1)); /* u < 2^32: always in range */
    return true;
}

bool kp_rd_raw(kp_reader *r, size_t n, const uint8_t **p) {
    if (!need(r, n)) return false;
    *p = r->buf + r->pos;
    r->pos += n;
    return true;
}

/* ---- writer ---- */

void kp_writer_init(kp_writer *w, size_t cap) {
    memset(w, 0, sizeof(*w));
    if (cap) {
        w->buf = xmalloc(cap);
        w->cap = cap;
    }
}

void kp_writer_free(kp_writer *w) {
    free(w->buf);
    free(w->refs);
    memset(w, 0, sizeof(*w));
}

void *kp_wr_reserve(kp_writer *w, size_t n) {
    if (w->counting) {
        w->len += n;
        return NULL;
    }
    if (w->cap - w->len < n) XGROW(w->buf, w->cap, w->len + n, 256);
    void *p = w->buf + w->len;
    w->len += n;
    return p;
}

void kp_wr_raw(kp_writer *w, const void *p, size_t n) {
    uint8_t *d = kp_wr_reserve(w, n);
    if (d && n) memcpy(d, p, n);
}

void kp_wr_ref(kp_writer *w, const void *p, size_t n) {
    if (w->counting || !w->ref_min || n < w->ref_min) {
        kp_wr_raw(w, p, n);
        return;
    }
    XGROW(w->refs, w->cap_refs, w->nrefs + 1, 8);
    w->refs[w->nrefs++] = (kp_wref){.at = w->len, .p = p, .len = n};
}

int kp_writer_spans(const kp_writer *w, kp_span *out) {
    int n = 0;
    size_t from = 0;
    for (int i = 0; i < w->nrefs; i++) {
        if (w->refs[i].at > from) out[n++] = (kp_span){w->buf + from, w->refs[i].at - from};
        out[n++] = (kp_span){w->refs[i].p, w->refs[i].len};
        from = w->refs[i].at;
    }
    if (w->len > from || n == 0) out[n++] = (kp_span){w->buf + from, w->len - from};
    return n;
}

void kp_wr_i8(kp_writer *w, int8_t v) {
    uint8_t *d = kp_wr_reserve(w, 1);
    if (d) *d = (uint8_t)v;
}

void kp_wr_i16(kp_writer *w, int16_t v) {
    uint8_t *d = kp_wr_reserve(w, 2);
    if (d) kp_put_i16(d, v);
}

void kp_wr_i32(kp_writer *w, int32_t v) {
    uint8_t *d = kp_wr_reserve(w, 4);
    if (d) kp_put_i32(d, v);
}

void kp_wr_i64(kp_writer *w, int64_t v) {
    uint8_t *d = kp_wr_reserve(w, 8);
    if (d) kp_put_i64(d, v);
}

size_t kp_uvarint_len(uint64_t v) {
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

void kp_wr_uvarint(kp_writer *w, uint64_t v) {
    uint8_t *d = kp_wr_reserve(w, kp_uvarint_len(v));
    if (!d) return;
    while (v >= 0x80) {
        *d++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *d = (uint8_t)v;
}

void kp_wr_varlong(kp_writer *w, int64_t v) { kp_wr_uvarint(w, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63)); }
void kp_wr_varint(kp_writer *w, int32_t v) { kp_wr_varlong(w, v); }
