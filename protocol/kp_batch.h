/*
 * Record batch v2 (magic 2): parse the 61-byte header, verify and compute
 * CRC-32C, validate what a broker must check on produce, patch the fields
 * the broker owns (base offset, leader epoch, LogAppendTime), and write and
 * read transaction markers. Records are never decompressed here: offsets
 * come from the header.
 */
#ifndef KP_BATCH_H
#define KP_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KP_BATCH_HEADER_SIZE 61
#define KP_BATCH_LOG_OVERHEAD 12 /* base_offset + batch_length: not counted in batch_length */

/* attribute bits */
#define KP_ATTR_CODEC_MASK 0x07
#define KP_ATTR_LOG_APPEND_TIME 0x08
#define KP_ATTR_TRANSACTIONAL 0x10
#define KP_ATTR_CONTROL 0x20
/* KIP-534: the base timestamp holds the delete horizon the cleaner set; records keep their timestamps */
#define KP_ATTR_DELETE_HORIZON 0x40

enum kp_codec { KP_CODEC_NONE = 0, KP_CODEC_GZIP = 1, KP_CODEC_SNAPPY = 2, KP_CODEC_LZ4 = 3, KP_CODEC_ZSTD = 4 };

typedef struct kp_batch {
    int64_t base_offset;
    int32_t batch_length;     /* bytes after this field */
    int32_t leader_epoch;
    int8_t magic;
    uint32_t crc;
    int16_t attributes;
    int32_t last_offset_delta;
    int64_t base_timestamp;
    int64_t max_timestamp;
    int64_t producer_id;
    int16_t producer_epoch;
    int32_t base_sequence;
    int32_t records_count;
    const uint8_t *data;      /* the whole batch, header included */
    size_t size;              /* KP_BATCH_LOG_OVERHEAD + batch_length */
} kp_batch;

/* CRC-32C (Castagnoli), continuing from crc (start with 0). */
uint32_t kp_crc32c(uint32_t crc, const void *p, size_t n);

/*
 * Parse the batch starting at buf[*pos]. Returns 1 and advances *pos on
 * success, 0 when buf[*pos..len) is empty, -1 on malformed input with *why set
 * (a length that runs past the buffer, a batch shorter than its header,
 * magic other than 2).
 */
int kp_batch_next(const uint8_t *buf, size_t len, size_t *pos, kp_batch *b, const char **why);

bool kp_batch_crc_ok(const kp_batch *b);

/*
 * Produce-side checks (Apache Kafka's LogValidator, without decompression).
 * Returns 0 or a Kafka error code with *why set: INVALID_RECORD (87) for a
 * base offset other than 0, CORRUPT_MESSAGE (2) for a
 * CRC mismatch or unknown codec, INVALID_RECORD (87) for a count/delta
 * mismatch, an empty batch, a control batch or an idempotent batch with a
 * negative sequence, INVALID_TIMESTAMP (32) for a batch that claims
 * LogAppendTime.
 */
int kp_batch_validate(const kp_batch *b, const char **why);

/* Overwrite base offset and partition leader epoch (outside the CRC). */
void kp_batch_patch(uint8_t *batch, int64_t base_offset, int32_t leader_epoch);

/* Mark the batch LogAppendTime with max_timestamp = ts and recompute the CRC. */
void kp_batch_set_log_append_time(uint8_t *batch, size_t size, int64_t ts);

/*
 * Transaction markers, the batches a partition leader writes when a transaction ends; readers
 * skip them, and a read_committed consumer learns from them where a transaction stopped.
 */
#define KP_MARKER_SIZE 78
/*
 * A transaction marker: a control batch (attributes transactional|control) holding one record
 * whose key is {version 0, type 0=ABORT 1=COMMIT} and value {version 0, coordinator_epoch};
 * base offset and leader epoch 0 (kp_batch_patch sets them), base_sequence -1, timestamps = ts.
 */
void kp_batch_write_marker(uint8_t out[KP_MARKER_SIZE], int64_t producer_id, int16_t producer_epoch, int64_t ts,
                           bool commit, int32_t coordinator_epoch);
/*
 * For a parsed batch: 1 COMMIT marker, 0 ABORT marker, -1 not a (well-formed) control batch:
 * not transactional|control, compressed, not exactly one record, a record that runs past the
 * batch or does not fill it, a key or value too short or of negative version, or another
 * control type (KRaft's LEADER_CHANGE and friends). The CRC is not checked (kp_batch_crc_ok).
 */
int kp_batch_marker_type(const kp_batch *b);

static inline int kp_batch_codec(const kp_batch *b) { return b->attributes & KP_ATTR_CODEC_MASK; }
static inline int64_t kp_batch_last_offset(const kp_batch *b) { return b->base_offset + b->last_offset_delta; }

#endif
