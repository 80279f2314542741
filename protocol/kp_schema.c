/*
 * The one codec engine: walks a kp_schema table to decode, encode or size a
 * message at any version. Classic versions use int16/int32 length prefixes;
 * flexible versions use compact (unsigned varint N+1) lengths and end every
 * struct with a tagged-field section, whose unknown tags are skipped.
 */
#include "kp.h"

#include <string.h>

size_t kp_type_size(uint8_t t, const kp_schema *sub) {
    switch (t) {
    case KP_BOOL: return sizeof(bool);
    case KP_I8: return sizeof(int8_t);
    case KP_I16: return sizeof(int16_t);
    case KP_U16: return sizeof(uint16_t);
    case KP_I32: return sizeof(int32_t);
    case KP_U32: return sizeof(uint32_t);
    case KP_I64: return sizeof(int64_t);
    case KP_F64: return sizeof(double);
    case KP_UUID: return sizeof(kp_uuid);
    case KP_STR:
    case KP_BYTES:
    case KP_RECORDS: return sizeof(kp_str);
    case KP_ARRAY: return sizeof(kp_arr);
    case KP_STRUCT: return sub->size;
    }
    return 0;
}

static bool in_version(const kp_field *f, int ver) { return ver >= f->vmin && ver <= f->vmax; }
static bool nullable(const kp_field *f, int ver) { return f->null_from != KV_NEVER && ver >= f->null_from; }

static void set_int(uint8_t t, void *p, int64_t v) {
    switch (t) {
    case KP_BOOL: *(bool *)p = v != 0; break;
    case KP_I8: *(int8_t *)p = (int8_t)v; break;
    case KP_I16: *(int16_t *)p = (int16_t)v; break;
    case KP_U16: *(uint16_t *)p = (uint16_t)v; break;
    case KP_I32: *(int32_t *)p = (int32_t)v; break;
    case KP_U32: *(uint32_t *)p = (uint32_t)v; break;
    case KP_I64: *(int64_t *)p = v; break;
    case KP_F64: *(double *)p = (double)v; break;
    default: break;
    }
}

static int64_t get_int(uint8_t t, const void *p) {
    switch (t) {
    case KP_BOOL: return *(const bool *)p;
    case KP_I8: return *(const int8_t *)p;
    case KP_I16: return *(const int16_t *)p;
    case KP_U16: return *(const uint16_t *)p;
    case KP_I32: return *(const int32_t *)p;
    case KP_U32: return *(const uint32_t *)p;
    case KP_I64: return *(const int64_t *)p;
    default: return 0;
    }
}

static void field_default(const kp_field *f, int ver, void *p) {
    switch (f->type) {
    case KP_UUID: memset(p, 0, sizeof(kp_uuid)); break;
    case KP_STR:
    case KP_BYTES:
    case KP_RECORDS: *(kp_str *)p = f->dflt < 0 ? KP_STR_NULL : (kp_str){"", 0}; break;
    case KP_ARRAY: *(kp_arr *)p = (kp_arr){f->dflt < 0 ? -1 : 0, NULL}; break;
    case KP_STRUCT:
        kp_defaults(f->sub, ver, p);
        if (f->null_from != KV_NEVER) *(bool *)p = f->dflt >= 0; /* a nullable struct: null by default */
        break;
    default: set_int(f->type, p, f->dflt); break;
    }
}

void kp_defaults(const kp_schema *s, int ver, void *out) {
    for (unsigned i = 0; i < s->nfields; i++) {
        const kp_field *f = &s->fields[i];
        field_default(f, ver, (uint8_t *)out + f->off);
    }
}

/* ---- decode ---- */

/* Fail pointing at byte `at` (where the offending length, count or tag starts). */
static bool fail_at(kp_reader *r, size_t at, const char *why) {
    if (!r->err) r->pos = at;
    return kp_rd_fail(r, why);
}

static bool decode_struct(kp_reader *r, const kp_schema *s, int ver, bool flex, void *out, kp_arena *a);

static bool read_len(kp_reader *r, bool flex, bool wide, int64_t *n) {
    if (flex) {
        size_t at = r->pos;
        uint64_t u;
        if (!kp_rd_uvarint(r, &u)) return false;
        if (u > INT32_MAX) return fail_at(r, at, "length out of range");
        *n = (int64_t)u - 1;
        return true;
    }
    if (wide) {
        int32_t v;
        if (!kp_rd_i32(r, &v)) return false;
        *n = v;
    } else {
        int16_t v;
        if (!kp_rd_i16(r, &v)) return false;
        *n = v;
    }
    return true;
}

static bool decode_value(kp_reader *r, uint8_t t, const kp_field *f, int ver, bool flex, void *p, kp_arena *a) {
    switch (t) {
    case KP_BOOL: {
        int8_t v;
        if (!kp_rd_i8(r, &v)) return false;
        *(bool *)p = v != 0;
        return true;
    }
    case KP_I8: return kp_rd_i8(r, p);
    case KP_I16:
    case KP_U16: return kp_rd_i16(r, p);
    case KP_I32:
    case KP_U32: return kp_rd_i32(r, p);
    case KP_I64: return kp_rd_i64(r, p);
    case KP_F64: {
        int64_t v;
        if (!kp_rd_i64(r, &v)) return false;
        memcpy(p, &v, sizeof v);
        return true;
    }
    case KP_UUID: {
        const uint8_t *b;
        if (!kp_rd_raw(r, 16, &b)) return false;
        memcpy(p, b, 16);
        return true;
    }
    case KP_STR:
    case KP_BYTES:
    case KP_RECORDS: {
        size_t at = r->pos;
        int64_t n = 0; /* read_len sets it when it succeeds; gcc -O2 cannot always see that */
        if (!read_len(r, flex, t != KP_STR, &n)) return false;
        kp_str *s = p;
        if (n < 0) {
            if (n < -1 || !nullable(f, ver)) return fail_at(r, at, n < -1 ? "negative length" : "null in a non-nullable field");
            *s = KP_STR_NULL;
            return true;
        }
        const uint8_t *b;
        if (!kp_rd_raw(r, (size_t)n, &b)) return false;
        *s = (kp_str){(const char *)b, (int32_t)n};
        return true;
    }
    case KP_ARRAY: {
        size_t at = r->pos;
        int64_t n = 0; /* as above */
        if (!read_len(r, flex, true, &n)) return false;
        kp_arr *arr = p;
        if (n < 0) {
            if (n < -1 || !nullable(f, ver)) return fail_at(r, at, n < -1 ? "negative array count" : "null array in a non-nullable field");
            *arr = (kp_arr){-1, NULL};
            return true;
        }
        /* every element takes at least one byte: a larger count is a lie */
        if ((uint64_t)n > kp_rd_left(r)) return fail_at(r, at, "array count exceeds the remaining bytes");
        size_t esz = kp_type_size(f->elem, f->sub);
        /* elements of a primitive array are never nullable, even when the array is */
        kp_field ef = *f;
        ef.null_from = KV_NEVER;
        arr->n = (int32_t)n;
        arr->v = n ? kp_arena_alloc(a, esz * (size_t)n) : NULL;
        for (int64_t i = 0; i < n; i++) {
            uint8_t *ep = (uint8_t *)arr->v + esz * (size_t)i;
            bool ok = f->elem == KP_STRUCT ? decode_struct(r, f->sub, ver, flex, ep, a)
                                           : decode_value(r, f->elem, &ef, ver, flex, ep, a);
            if (!ok) return false;
        }
        return true;
    }
    case KP_STRUCT:
        if (f->null_from != KV_NEVER) {
            /* a nullable struct: an int8 marker, -1 for null, then the fields when present */
            bool *present = p;
            *present = true;
            if (nullable(f, ver)) {
                size_t at = r->pos;
                int8_t mark;
                if (!kp_rd_i8(r, &mark)) return false;
                if (mark < -1 || mark > 1) return fail_at(r, at, "bad nullable struct marker");
                if (mark < 0) {
                    kp_defaults(f->sub, ver, p);
                    *present = false;
                    return true;
                }
            }
        }
        return decode_struct(r, f->sub, ver, flex, p, a);
    }
    return kp_rd_fail(r, "unknown field type");
}

static bool decode_field(kp_reader *r, const kp_field *f, int ver, bool flex, void *p, kp_arena *a) {
    if (decode_value(r, f->type, f, ver, flex, p, a)) return true;
    if (!r->err_field) r->err_field = f->name;
    return false;
}

static bool decode_tags(kp_reader *r, const kp_schema *s, int ver, void *out, kp_arena *a) {
    uint64_t count;
    if (!kp_rd_uvarint(r, &count)) return false;
    int64_t last = -1;
    for (uint64_t i = 0; i < count; i++) {
        uint64_t tag, size;
        const uint8_t *b;
        size_t tag_at = r->pos;
        if (!kp_rd_uvarint(r, &tag) || !kp_rd_uvarint(r, &size)) return false;
        if (tag > INT32_MAX) return fail_at(r, tag_at, "tag out of range");
        if ((int64_t)tag <= last) return fail_at(r, tag_at, "tagged fields out of order");
        last = (int64_t)tag;
        size_t at = r->base + r->pos;
        if (!kp_rd_raw(r, size, &b)) return false;
        for (unsigned j = 0; j < s->nfields; j++) {
            const kp_field *f = &s->fields[j];
            if (f->tag != (int64_t)tag || !in_version(f, ver)) continue;
            kp_reader sub;
            kp_reader_init(&sub, b, size);
            sub.base = at;
            if (!decode_field(&sub, f, ver, true, (uint8_t *)out + f->off, a)) {
                r->err = sub.err;
                r->err_pos = sub.err_pos;
                r->err_field = sub.err_field;
                return false;
            }
            break;
        }
    }
    return true;
}

static bool decode_struct(kp_reader *r, const kp_schema *s, int ver, bool flex, void *out, kp_arena *a) {
    for (unsigned i = 0; i < s->nfields; i++) {
        const kp_field *f = &s->fields[i];
        void *p = (uint8_t *)out + f->off;
        if (f->tag >= 0 || !in_version(f, ver)) {
            field_default(f, ver, p);
            continue;
        }
        if (!decode_field(r, f, ver, flex, p, a)) return false;
    }
    return !flex || decode_tags(r, s, ver, out, a);
}

bool kp_decode(kp_reader *r, const kp_schema *s, int ver, bool flex, void *out, kp_arena *a) {
    return decode_struct(r, s, ver, flex, out, a);
}

/* ---- encode ---- */

static void encode_struct(kp_writer *w, const kp_schema *s, int ver, bool flex, const void *in);

static void write_len(kp_writer *w, bool flex, bool wide, int64_t n) {
    if (flex)
        kp_wr_uvarint(w, (uint64_t)(n + 1));
    else if (wide)
        kp_wr_i32(w, (int32_t)n);
    else
        kp_wr_i16(w, (int16_t)n);
}

static void encode_value(kp_writer *w, uint8_t t, const kp_field *f, int ver, bool flex, const void *p) {
    switch (t) {
    case KP_BOOL: kp_wr_i8(w, *(const bool *)p ? 1 : 0); break;
    case KP_I8: kp_wr_i8(w, *(const int8_t *)p); break;
    case KP_I16:
    case KP_U16: kp_wr_i16(w, *(const int16_t *)p); break;
    case KP_I32:
    case KP_U32: kp_wr_i32(w, *(const int32_t *)p); break;
    case KP_I64: kp_wr_i64(w, *(const int64_t *)p); break;
    case KP_F64: {
        int64_t v;
        memcpy(&v, p, sizeof v);
        kp_wr_i64(w, v);
        break;
    }
    case KP_UUID: kp_wr_raw(w, p, 16); break;
    case KP_STR:
    case KP_BYTES:
    case KP_RECORDS: {
        const kp_str *s = p;
        if (s->len < 0) {
            /* a non-nullable field never goes out as null: send it empty */
            write_len(w, flex, t != KP_STR, nullable(f, ver) ? -1 : 0);
            break;
        }
        /* Kafka strings hold at most 32767 bytes (an int16 length when classic, and
         * clients refuse longer compact ones): cut the rest rather than corrupt the frame */
        int32_t n = t == KP_STR && s->len > INT16_MAX ? INT16_MAX : s->len;
        write_len(w, flex, t != KP_STR, n);
        if (t == KP_RECORDS)
            kp_wr_ref(w, s->p, (size_t)n);
        else
            kp_wr_raw(w, s->p, (size_t)n);
        break;
    }
    case KP_ARRAY: {
        const kp_arr *arr = p;
        if (arr->n < 0) {
            write_len(w, flex, true, nullable(f, ver) ? -1 : 0);
            break;
        }
        write_len(w, flex, true, arr->n);
        size_t esz = kp_type_size(f->elem, f->sub);
        for (int32_t i = 0; i < arr->n; i++) {
            const uint8_t *ep = (const uint8_t *)arr->v + esz * (size_t)i;
            if (f->elem == KP_STRUCT)
                encode_struct(w, f->sub, ver, flex, ep);
            else
                encode_value(w, f->elem, f, ver, flex, ep);
        }
        break;
    }
    case KP_STRUCT:
        if (f->null_from != KV_NEVER && nullable(f, ver)) {
            if (!*(const bool *)p) {
                kp_wr_i8(w, -1);
                break;
            }
            kp_wr_i8(w, 1);
        }
        encode_struct(w, f->sub, ver, flex, p);
        break;
    }
}

static bool is_default(const kp_field *f, int ver, const void *p) {
    switch (f->type) {
    case KP_UUID: {
        static const kp_uuid zero;
        return memcmp(p, &zero, sizeof zero) == 0;
    }
    /* null goes out as empty when the field is not nullable: then it is as default as "" */
    case KP_STR:
    case KP_BYTES:
    case KP_RECORDS: {
        const kp_str *s = p;
        if (s->len < 0) return f->dflt < 0 || !nullable(f, ver);
        return f->dflt >= 0 && s->len == 0;
    }
    case KP_ARRAY: {
        const kp_arr *arr = p;
        if (arr->n < 0) return f->dflt < 0 || !nullable(f, ver);
        return f->dflt >= 0 && arr->n == 0;
    }
    case KP_STRUCT:
        if (f->null_from != KV_NEVER && *(const bool *)p != (f->dflt >= 0)) return false;
        if (f->null_from != KV_NEVER && !*(const bool *)p) return true;
        for (unsigned i = 0; i < f->sub->nfields; i++) {
            const kp_field *g = &f->sub->fields[i];
            if (in_version(g, ver) && !is_default(g, ver, (const uint8_t *)p + g->off)) return false;
        }
        return true;
    case KP_F64: return *(const double *)p == (double)f->dflt;
    default: return get_int(f->type, p) == f->dflt;
    }
}

static void encode_tags(kp_writer *w, const kp_schema *s, int ver, const void *in) {
    /* tags go out in ascending order; tables list them in that order */
    uint64_t count = 0;
    for (unsigned i = 0; i < s->nfields; i++) {
        const kp_field *f = &s->fields[i];
        if (f->tag >= 0 && in_version(f, ver) && !is_default(f, ver, (const uint8_t *)in + f->off)) count++;
    }
    kp_wr_uvarint(w, count);
    for (unsigned i = 0; i < s->nfields && count; i++) {
        const kp_field *f = &s->fields[i];
        const void *p = (const uint8_t *)in + f->off;
        if (f->tag < 0 || !in_version(f, ver) || is_default(f, ver, p)) continue;
        kp_writer cw = {.counting = true};
        encode_value(&cw, f->type, f, ver, true, p);
        kp_wr_uvarint(w, (uint64_t)f->tag);
        kp_wr_uvarint(w, cw.len);
        encode_value(w, f->type, f, ver, true, p);
    }
}

static void encode_struct(kp_writer *w, const kp_schema *s, int ver, bool flex, const void *in) {
    for (unsigned i = 0; i < s->nfields; i++) {
        const kp_field *f = &s->fields[i];
        if (f->tag >= 0 || !in_version(f, ver)) continue;
        encode_value(w, f->type, f, ver, flex, (const uint8_t *)in + f->off);
    }
    if (flex) encode_tags(w, s, ver, in);
}

void kp_encode(kp_writer *w, const kp_schema *s, int ver, bool flex, const void *in) {
    encode_struct(w, s, ver, flex, in);
}

size_t kp_size(const kp_schema *s, int ver, bool flex, const void *in) {
    kp_writer w = {.counting = true};
    encode_struct(&w, s, ver, flex, in);
    return w.len;
}

/* ---- headers ---- */

bool kp_peek_req_header(const uint8_t *buf, size_t len, int16_t *key, int16_t *ver, int32_t *corr) {
    if (len < 8) return false;
    *key = kp_get_i16(buf);
    *ver = kp_get_i16(buf + 2);
    *corr = kp_get_i32(buf + 4);
    return true;
}

bool kp_decode_req_header(kp_reader *r, bool flex, kp_req_header *h) {
    int16_t n;
    if (!kp_rd_i16(r, &h->api_key) || !kp_rd_i16(r, &h->api_version) || !kp_rd_i32(r, &h->correlation_id) ||
        !kp_rd_i16(r, &n))
        return false;
    /* client_id is a classic nullable string even in header v2 */
    if (n < -1) return fail_at(r, r->pos - 2, "negative length");
    if (n < 0) {
        h->client_id = KP_STR_NULL;
    } else {
        const uint8_t *b;
        if (!kp_rd_raw(r, (size_t)n, &b)) return false;
        h->client_id = (kp_str){(const char *)b, n};
    }
    if (!flex) return true;
    static const kp_schema none = {"RequestHeader", 0, 0, NULL};
    return decode_tags(r, &none, 0, NULL, NULL);
}

bool kp_resp_header_flex(const kp_msg *m, int16_t ver) {
    return m->key != KP_API_API_VERSIONS && kp_is_flex(m, ver);
}
