/*
 * Records of a v2 batch (Apache Kafka's DefaultRecord): a varint length, attributes, a varlong timestamp
 * delta, a varint offset delta, varint-prefixed key and value (-1: null), and a varint count
 * of headers, each a varint-prefixed key and value. Reading is bounds-checked throughout:
 * the bytes come from clients.
 */
#include "kp_records.h"

#include <stdlib.h>
#include <string.h>

#include "kp.h"
#include "kp_compress.h"
#include "kp_mem.h"

static int fail(const char **why, const char *msg) {
    if (why) *why = msg;
    return -1;
}

int kp_batch_records(const kp_batch *b, size_t max_out, const uint8_t **sec, size_t *sec_len, uint8_t **owned,
                     const char **why) {
    *owned = NULL;
    if (b->size < KP_BATCH_HEADER_SIZE) return fail(why, "batch shorter than its header");
    const uint8_t *p = b->data + KP_BATCH_HEADER_SIZE;
    size_t n = b->size - KP_BATCH_HEADER_SIZE;
    if (kp_batch_codec(b) == KP_CODEC_NONE) {
        *sec = p;
        *sec_len = n;
        return 0;
    }
    /*
     * The header's count against the bytes its records need, before anything is allocated or
     * decompressed: each record takes at least KP_RECORD_MIN_SIZE bytes, so a few compressed
     * bytes cannot claim millions of records. (A count the section then falls short of is the
     * iterator's refusal, as it is for uncompressed records, read in place.)
     */
    size_t count = b->records_count > 0 ? (size_t)b->records_count : 0;
    if (count > max_out / KP_RECORD_MIN_SIZE) {
        if (why) *why = "the batch's record count needs more bytes than its records may decompress to";
        return KP_TOO_LARGE;
    }
    uint8_t *out;
    size_t out_len;
    int rc = kp_decompress(kp_batch_codec(b), p, n, max_out, &out, &out_len, why);
    if (rc != 0) return rc;
    *owned = out;
    *sec = out;
    *sec_len = out_len;
    return 0;
}

void kp_records_begin(kp_record_iter *it, const uint8_t *sec, size_t len, int32_t records_count) {
    it->p = sec;
    it->len = len;
    it->pos = 0;
    it->left = records_count;
}

/* A varint-prefixed field: -1 is null where nullable; the bytes must lie inside r. */
static bool rd_field(kp_reader *r, bool nullable, const uint8_t **p, int32_t *len) {
    if (!kp_rd_varint(r, len)) return false;
    if (*len == -1 && nullable) {
        *p = NULL;
        return true;
    }
    if (*len < 0) return false;
    return kp_rd_raw(r, (size_t)*len, p);
}

int kp_records_next(kp_record_iter *it, kp_record *rec, const char **why) {
    if (it->left <= 0) {
        if (it->pos != it->len) return fail(why, "bytes left after the batch's declared record count");
        return 0;
    }
    if (it->pos >= it->len) return fail(why, "the batch holds fewer records than its record count says");
    kp_reader r;
    kp_reader_init(&r, it->p + it->pos, it->len - it->pos);
    int32_t len;
    if (!kp_rd_varint(&r, &len) || len < 0 || (size_t)len > kp_rd_left(&r))
        return fail(why, "a record's length runs past the records section");
    size_t end = r.pos + (size_t)len;
    kp_reader body;
    kp_reader_init(&body, r.buf + r.pos, (size_t)len);
    int32_t count;
    if (!kp_rd_i8(&body, &rec->attributes) || !kp_rd_varlong(&body, &rec->timestamp_delta) ||
        !kp_rd_varint(&body, &rec->offset_delta))
        return fail(why, "a record is too short for its attributes and deltas");
    if (!rd_field(&body, true, &rec->key, &rec->key_len)) return fail(why, "a record's key runs past the record");
    if (!rd_field(&body, true, &rec->value, &rec->value_len)) return fail(why, "a record's value runs past the record");
    size_t hstart = body.pos;
    if (!kp_rd_varint(&body, &count) || count < 0) return fail(why, "a record has an invalid header count");
    for (int32_t i = 0; i < count; i++) {
        const uint8_t *hp;
        int32_t hl;
        if (!rd_field(&body, false, &hp, &hl) || !rd_field(&body, true, &hp, &hl))
            return fail(why, "a record header runs past the record");
    }
    if (kp_rd_left(&body) != 0) return fail(why, "a record is longer than its fields");
    rec->headers = body.buf + hstart;
    rec->headers_len = body.pos - hstart;
    it->pos += end;
    it->left--;
    return 1;
}

static void wr_field(kp_writer *w, const uint8_t *p, int32_t len) {
    kp_wr_varint(w, p ? len : -1);
    if (p && len > 0) kp_wr_raw(w, p, (size_t)len);
}

static void wr_record(kp_writer *w, const kp_record *rec, int32_t offset_delta, int64_t ts_shift) {
    kp_writer body;
    kp_writer_init(&body, 0);
    body.counting = true;
    for (int pass = 0; pass < 2; pass++) {
        kp_writer *o = pass ? w : &body;
        if (pass) kp_wr_varint(w, (int32_t)body.len);
        kp_wr_i8(o, rec->attributes);
        kp_wr_varlong(o, kp_ts_add(rec->timestamp_delta, ts_shift));
        kp_wr_varint(o, offset_delta);
        wr_field(o, rec->key, rec->key_len);
        wr_field(o, rec->value, rec->value_len);
        if (rec->headers_len) kp_wr_raw(o, rec->headers, rec->headers_len);
        else kp_wr_varint(o, 0);
    }
}

/* header field offsets, as in kp_batch.c */
enum { OFF_BATCH_LENGTH = 8, OFF_CRC = 17, OFF_ATTRIBUTES = 21, OFF_LAST_OFFSET_DELTA = 23, OFF_BASE_TIMESTAMP = 27,
       OFF_MAX_TIMESTAMP = 35, OFF_RECORDS_COUNT = 57 };

static void begin(kp_batch_builder *bb, const kp_batch *orig, int codec, bool renumber, int64_t delete_horizon) {
    memset(bb, 0, sizeof *bb);
    bb->orig = orig;
    bb->codec = codec;
    bb->renumber = renumber;
    bb->max_delta = INT64_MIN;
    if (orig->size < KP_BATCH_HEADER_SIZE) bb->err = "batch shorter than its header";
    else if (codec < KP_CODEC_NONE || codec > KP_CODEC_ZSTD) bb->err = "invalid rebuild arguments";
    /* records keep their timestamps: base + delta before and after, whatever the new base */
    if (delete_horizon >= 0) {
        bb->base_ts = delete_horizon;
        bb->horizon = true;
        bb->based = true;
    } else if (!(orig->attributes & KP_ATTR_DELETE_HORIZON)) {
        bb->base_ts = orig->base_timestamp;
        bb->based = true;
    } /* else the first record's timestamp becomes the base (kp_builder_add), or orig's max with none */
    bb->shift = kp_ts_sub(orig->base_timestamp, bb->base_ts);
}

void kp_builder_begin(kp_batch_builder *bb, const kp_batch *orig, int codec, bool renumber, int64_t delete_horizon) {
    begin(bb, orig, codec, renumber, delete_horizon);
    kp_writer_init(&bb->w, 256);
}

void kp_builder_begin_with(kp_batch_builder *bb, kp_writer *scratch, const kp_batch *orig, int codec, bool renumber,
                           int64_t delete_horizon) {
    begin(bb, orig, codec, renumber, delete_horizon);
    bb->w = *scratch;
    bb->w.len = 0;
    memset(scratch, 0, sizeof *scratch);
}

void kp_builder_add(kp_batch_builder *bb, const kp_record *rec) {
    if (bb->err) return;
    if (!bb->based) {
        bb->base_ts = kp_ts_add(bb->orig->base_timestamp, rec->timestamp_delta);
        bb->shift = kp_ts_sub(bb->orig->base_timestamp, bb->base_ts);
        bb->based = true;
    }
    if (bb->n == INT32_MAX) {
        bb->err = "too many records for one batch";
        return;
    }
    wr_record(&bb->w, rec, bb->renumber ? bb->n : rec->offset_delta, bb->shift);
    if (rec->timestamp_delta > bb->max_delta) bb->max_delta = rec->timestamp_delta;
    bb->n++;
}

size_t kp_builder_len(const kp_batch_builder *bb) { return bb->w.len; }

void kp_builder_discard(kp_batch_builder *bb) { kp_writer_free(&bb->w); }

/* The records' buffer: back to scratch (emptied) for the next batch, else freed. */
static void release(kp_batch_builder *bb, kp_writer *scratch) {
    if (!scratch) {
        kp_builder_discard(bb);
        return;
    }
    *scratch = bb->w;
    scratch->len = 0;
    memset(&bb->w, 0, sizeof bb->w);
}

/* The batch into a new buffer (*out), or into into's (kept, grown when too small) with scratch. */
static int finish(kp_batch_builder *bb, kp_writer *into, kp_writer *scratch, uint8_t **out, size_t *out_len,
                  const char **why) {
    const kp_batch *orig = bb->orig;
    if (bb->err) {
        release(bb, scratch);
        return fail(why, bb->err);
    }
    int32_t n = bb->n;
    int codec = n == 0 ? KP_CODEC_NONE : bb->codec;
    int16_t attrs = (int16_t)((orig->attributes & ~(KP_ATTR_CODEC_MASK | KP_ATTR_DELETE_HORIZON)) | codec);
    if (bb->horizon) attrs |= KP_ATTR_DELETE_HORIZON;
    int64_t base_ts = bb->based ? bb->base_ts : orig->max_timestamp;
    kp_writer *w = &bb->w;
    uint8_t *body = w->buf;
    size_t body_len = w->len;
    uint8_t *packed = NULL;
    if (codec != KP_CODEC_NONE) {
        if (kp_compress(codec, w->buf, w->len, &packed, &body_len, why) != 0) {
            release(bb, scratch);
            return -1;
        }
        body = packed;
    }
    size_t total = KP_BATCH_HEADER_SIZE + body_len;
    if (total - KP_BATCH_LOG_OVERHEAD > (size_t)INT32_MAX) {
        free(packed);
        release(bb, scratch);
        return fail(why, "rebuilt batch is too large");
    }
    uint8_t *b;
    if (into) {
        if (into->cap < total) {
            free(into->buf);
            into->buf = xmalloc(total);
            into->cap = total;
        }
        into->len = total;
        b = into->buf;
    } else {
        b = xmalloc(total);
    }
    memcpy(b, orig->data, KP_BATCH_HEADER_SIZE);
    memcpy(b + KP_BATCH_HEADER_SIZE, body, body_len);
    free(packed);
    release(bb, scratch);
    kp_put_i32(b + OFF_BATCH_LENGTH, (int32_t)(total - KP_BATCH_LOG_OVERHEAD));
    kp_put_i16(b + OFF_ATTRIBUTES, attrs);
    kp_put_i64(b + OFF_BASE_TIMESTAMP, base_ts);
    if (bb->renumber) kp_put_i32(b + OFF_LAST_OFFSET_DELTA, n > 0 ? n - 1 : 0);
    if (n > 0 && !(orig->attributes & KP_ATTR_LOG_APPEND_TIME))
        kp_put_i64(b + OFF_MAX_TIMESTAMP, kp_ts_add(orig->base_timestamp, bb->max_delta));
    kp_put_i32(b + OFF_RECORDS_COUNT, n);
    kp_put_i32(b + OFF_CRC, (int32_t)kp_crc32c(0, b + OFF_ATTRIBUTES, total - OFF_ATTRIBUTES));
    if (out) *out = b;
    *out_len = total;
    return 0;
}

int kp_builder_finish(kp_batch_builder *bb, uint8_t **out, size_t *out_len, const char **why) {
    return finish(bb, NULL, NULL, out, out_len, why);
}

int kp_builder_finish_into(kp_batch_builder *bb, kp_writer *into, kp_writer *scratch, const char **why) {
    size_t len;
    return finish(bb, into, scratch, NULL, &len, why);
}

int kp_batch_rebuild(const kp_batch *orig, int codec, const kp_record *recs, int32_t n, bool renumber,
                     int64_t delete_horizon, uint8_t **out, size_t *out_len, const char **why) {
    if (n < 0) return fail(why, "invalid rebuild arguments");
    kp_batch_builder bb;
    kp_builder_begin(&bb, orig, codec, renumber, delete_horizon);
    for (int32_t i = 0; i < n; i++) kp_builder_add(&bb, &recs[i]);
    return kp_builder_finish(&bb, out, out_len, why);
}
