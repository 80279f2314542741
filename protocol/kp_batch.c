/*
 * Record batch v2: header parsing, produce-side validation, the in-place
 * rewrites a leader does on append, and transaction markers. Offsets of the
 * fields are fixed by the format (Apache Kafka's DefaultRecordBatch, KIP-98);
 * nothing here looks inside the records but for a marker's one uncompressed
 * record.
 */
#include "kp_batch.h"

#include "kp.h"

#include <string.h>

/* header field offsets */
enum {
    OFF_BASE_OFFSET = 0,
    OFF_BATCH_LENGTH = 8,
    OFF_LEADER_EPOCH = 12,
    OFF_MAGIC = 16,
    OFF_CRC = 17,
    OFF_ATTRIBUTES = 21, /* first byte the CRC covers */
    OFF_LAST_OFFSET_DELTA = 23,
    OFF_BASE_TIMESTAMP = 27,
    OFF_MAX_TIMESTAMP = 35,
    OFF_PRODUCER_ID = 43,
    OFF_PRODUCER_EPOCH = 51,
    OFF_BASE_SEQUENCE = 53,
    OFF_RECORDS_COUNT = 57,
};

enum { ERR_CORRUPT_MESSAGE = 2, ERR_INVALID_TIMESTAMP = 32, ERR_INVALID_RECORD = 87 };

/*
 * One static string per magic value so a caller can log the exact byte
 * without allocation. Adjacent literals concatenate, so P "7" is "...7".
 * Index is (uint8_t)magic: 0..127, then -128..-1.
 */
#define MW "unsupported magic "
#define UP10(P) P "0", P "1", P "2", P "3", P "4", P "5", P "6", P "7", P "8", P "9"
#define DOWN10(P) P "9", P "8", P "7", P "6", P "5", P "4", P "3", P "2", P "1", P "0"
static const char *const magic_why[] = {
    /* 0..127 */
    UP10(MW), UP10(MW "1"), UP10(MW "2"), UP10(MW "3"), UP10(MW "4"), UP10(MW "5"), UP10(MW "6"),
    UP10(MW "7"), UP10(MW "8"), UP10(MW "9"), UP10(MW "10"), UP10(MW "11"),
    MW "120", MW "121", MW "122", MW "123", MW "124", MW "125", MW "126", MW "127",
    /* -128..-1 */
    MW "-128", MW "-127", MW "-126", MW "-125", MW "-124", MW "-123", MW "-122", MW "-121", MW "-120",
    DOWN10(MW "-11"), DOWN10(MW "-10"), DOWN10(MW "-9"), DOWN10(MW "-8"), DOWN10(MW "-7"),
    DOWN10(MW "-6"), DOWN10(MW "-5"), DOWN10(MW "-4"), DOWN10(MW "-3"), DOWN10(MW "-2"),
    DOWN10(MW "-1"),
    MW "-9", MW "-8", MW "-7", MW "-6", MW "-5", MW "-4", MW "-3", MW "-2", MW "-1",
};
_Static_assert(sizeof magic_why / sizeof magic_why[0] == 256, "one reason per magic byte");
#undef MW
#undef UP10
#undef DOWN10

static int fail(const char **why, const char *msg) {
    if (why)
        *why = msg;
    return -1;
}

int kp_batch_next(const uint8_t *buf, size_t len, size_t *pos, kp_batch *b, const char **why) {
    if (*pos > len)
        return fail(why, "batch position past the end of the records");
    size_t left = len - *pos;
    if (left == 0)
        return 0;
    if (left < KP_BATCH_LOG_OVERHEAD)
        return fail(why, "truncated batch header");

    const uint8_t *p = buf + *pos;
    int32_t batch_length = kp_get_i32(p + OFF_BATCH_LENGTH);
    if (batch_length < 0)
        return fail(why, "negative batch length");
    /* 64-bit so INT32_MAX + 12 cannot wrap a 32-bit size_t. */
    uint64_t size = (uint64_t)KP_BATCH_LOG_OVERHEAD + (uint64_t)batch_length;
    if (size > left)
        return fail(why, "batch length runs past the end of the records");
    /*
     * Magic sits at byte 16 in every format (legacy messages too), so report
     * a wrong magic before the v2 size minimum: a small magic 0/1 message is
     * better explained by its magic than by "shorter than header".
     */
    if (size > OFF_MAGIC && p[OFF_MAGIC] != 2)
        return fail(why, magic_why[p[OFF_MAGIC]]);
    if (size < KP_BATCH_HEADER_SIZE)
        return fail(why, "batch length shorter than the batch header");

    b->base_offset = kp_get_i64(p + OFF_BASE_OFFSET);
    b->batch_length = batch_length;
    b->leader_epoch = kp_get_i32(p + OFF_LEADER_EPOCH);
    b->magic = (int8_t)p[OFF_MAGIC];
    b->crc = (uint32_t)kp_get_i32(p + OFF_CRC);
    b->attributes = kp_get_i16(p + OFF_ATTRIBUTES);
    b->last_offset_delta = kp_get_i32(p + OFF_LAST_OFFSET_DELTA);
    b->base_timestamp = kp_get_i64(p + OFF_BASE_TIMESTAMP);
    b->max_timestamp = kp_get_i64(p + OFF_MAX_TIMESTAMP);
    b->producer_id = kp_get_i64(p + OFF_PRODUCER_ID);
    b->producer_epoch = kp_get_i16(p + OFF_PRODUCER_EPOCH);
    b->base_sequence = kp_get_i32(p + OFF_BASE_SEQUENCE);
    b->records_count = kp_get_i32(p + OFF_RECORDS_COUNT);
    b->data = p;
    b->size = (size_t)size;
    *pos += (size_t)size;
    return 1;
}

bool kp_batch_crc_ok(const kp_batch *b) {
    if (b->size < KP_BATCH_HEADER_SIZE)
        return false;
    return kp_crc32c(0, b->data + OFF_ATTRIBUTES, b->size - OFF_ATTRIBUTES) == b->crc;
}

static int reject(const char **why, int code, const char *msg) {
    if (why)
        *why = msg;
    return code;
}

/*
 * Order follows Apache Kafka: UnifiedLog checks the CRC (ensureValid) before
 * LogValidator.validateBatch (offset range, count, control, sequence), and the
 * per-record timestamp-type check comes last.
 */
int kp_batch_validate(const kp_batch *b, const char **why) {
    /* Apache checks this before the CRC (UnifiedLog.analyzeAndValidateRecords): offsets are the broker's to assign */
    if (b->base_offset != 0)
        return reject(why, ERR_INVALID_RECORD, "a produced batch must have base offset 0");
    if (!kp_batch_crc_ok(b))
        return reject(why, ERR_CORRUPT_MESSAGE, "record batch CRC mismatch");
    if (kp_batch_codec(b) > KP_CODEC_ZSTD)
        return reject(why, ERR_CORRUPT_MESSAGE, "unknown compression codec (attributes bits 0-2 are 5-7)");

    /* int64: last_offset_delta == INT32_MAX must not overflow into a "valid" count. */
    int64_t count_from_offsets = (int64_t)b->last_offset_delta + 1;
    if (count_from_offsets <= 0)
        return reject(why, ERR_INVALID_RECORD, "batch has an invalid offset range (last_offset_delta < 0)");
    if (b->records_count <= 0)
        return reject(why, ERR_INVALID_RECORD, "batch has no records (records_count <= 0)");
    if (count_from_offsets != b->records_count)
        return reject(why, ERR_INVALID_RECORD, "last_offset_delta + 1 does not match records_count");
    if (b->attributes & KP_ATTR_CONTROL)
        return reject(why, ERR_INVALID_RECORD, "clients are not allowed to write control batches");
    if (b->producer_id >= 0 && b->base_sequence < 0)
        return reject(why, ERR_INVALID_RECORD, "idempotent batch (producer_id >= 0) with a negative base_sequence");
    if (b->attributes & KP_ATTR_LOG_APPEND_TIME)
        return reject(why, ERR_INVALID_TIMESTAMP, "producer must not set timestamp type LogAppendTime");
    return 0;
}

void kp_batch_patch(uint8_t *batch, int64_t base_offset, int32_t leader_epoch) {
    kp_put_i64(batch + OFF_BASE_OFFSET, base_offset);
    kp_put_i32(batch + OFF_LEADER_EPOCH, leader_epoch);
}

void kp_batch_set_log_append_time(uint8_t *batch, size_t size, int64_t ts) {
    /* Callers pass parsed batches; refuse rather than write past a short buffer. */
    if (size < KP_BATCH_HEADER_SIZE)
        return;
    int16_t attrs = kp_get_i16(batch + OFF_ATTRIBUTES);
    kp_put_i16(batch + OFF_ATTRIBUTES, (int16_t)(attrs | KP_ATTR_LOG_APPEND_TIME));
    kp_put_i64(batch + OFF_MAX_TIMESTAMP, ts);
    uint32_t crc = kp_crc32c(0, batch + OFF_ATTRIBUTES, size - OFF_ATTRIBUTES);
    kp_put_i32(batch + OFF_CRC, (int32_t)crc);
}

/* ---- transaction markers ---- */

/*
 * The marker's one record, after the batch header: length 16, attributes 0, timestamp and
 * offset deltas 0, key and value with their lengths (varints, zigzag as in every record), no
 * headers. Kafka's key and value both start with an int16 version.
 */
enum {
    MARKER_RECORD_LEN = 16,
    MARKER_KEY_LEN = 4,
    MARKER_VALUE_LEN = 6,
    /* offsets within the record */
    REC_LEN = 0,
    REC_KEY_LEN = 4,
    REC_KEY_TYPE = 7,
    REC_VALUE_LEN = 9,
    REC_COORD_EPOCH = 12,
};
_Static_assert(KP_BATCH_HEADER_SIZE + 1 + MARKER_RECORD_LEN == KP_MARKER_SIZE, "one 16-byte record after the header");

void kp_batch_write_marker(uint8_t out[KP_MARKER_SIZE], int64_t producer_id, int16_t producer_epoch, int64_t ts,
                           bool commit, int32_t coordinator_epoch) {
    memset(out, 0, KP_MARKER_SIZE);
    kp_put_i32(out + OFF_BATCH_LENGTH, KP_MARKER_SIZE - KP_BATCH_LOG_OVERHEAD);
    out[OFF_MAGIC] = 2;
    kp_put_i16(out + OFF_ATTRIBUTES, KP_ATTR_TRANSACTIONAL | KP_ATTR_CONTROL);
    kp_put_i64(out + OFF_BASE_TIMESTAMP, ts);
    kp_put_i64(out + OFF_MAX_TIMESTAMP, ts);
    kp_put_i64(out + OFF_PRODUCER_ID, producer_id);
    kp_put_i16(out + OFF_PRODUCER_EPOCH, producer_epoch);
    kp_put_i32(out + OFF_BASE_SEQUENCE, -1);
    kp_put_i32(out + OFF_RECORDS_COUNT, 1);
    uint8_t *rec = out + KP_BATCH_HEADER_SIZE;
    rec[REC_LEN] = MARKER_RECORD_LEN << 1; /* zigzag of a small positive n is 2n, one byte */
    rec[REC_KEY_LEN] = MARKER_KEY_LEN << 1;
    kp_put_i16(rec + REC_KEY_TYPE, commit ? 1 : 0);
    rec[REC_VALUE_LEN] = MARKER_VALUE_LEN << 1;
    kp_put_i32(rec + REC_COORD_EPOCH, coordinator_epoch);
    kp_put_i32(out + OFF_CRC, (int32_t)kp_crc32c(0, out + OFF_ATTRIBUTES, KP_MARKER_SIZE - OFF_ATTRIBUTES));
}

/* A length-prefixed field of the record of at least min bytes whose leading int16 version is >= 0. */
static bool marker_field(kp_reader *r, int32_t min, const uint8_t **p) {
    int32_t n;
    if (!kp_rd_varint(r, &n) || n < min || !kp_rd_raw(r, (size_t)n, p)) return false;
    return kp_get_i16(*p) >= 0; /* Kafka reads newer versions as version 0; a negative one is corruption */
}

int kp_batch_marker_type(const kp_batch *b) {
    const int16_t bits = KP_ATTR_TRANSACTIONAL | KP_ATTR_CONTROL;
    if ((b->attributes & bits) != bits || kp_batch_codec(b) != KP_CODEC_NONE || b->records_count != 1 ||
        b->size < KP_BATCH_HEADER_SIZE)
        return -1;
    kp_reader r;
    kp_reader_init(&r, b->data + KP_BATCH_HEADER_SIZE, b->size - KP_BATCH_HEADER_SIZE);
    int32_t len, delta;
    int64_t ts_delta;
    int8_t attrs;
    const uint8_t *key, *value;
    if (!kp_rd_varint(&r, &len) || len < 0 || (size_t)len != kp_rd_left(&r)) return -1;
    if (!kp_rd_i8(&r, &attrs) || !kp_rd_varlong(&r, &ts_delta) || !kp_rd_varint(&r, &delta)) return -1;
    if (!marker_field(&r, MARKER_KEY_LEN, &key) || !marker_field(&r, MARKER_VALUE_LEN, &value)) return -1;
    int16_t type = kp_get_i16(key + 2);
    return type == 0 || type == 1 ? type : -1;
}
