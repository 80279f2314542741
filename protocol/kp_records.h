/*
 * The records inside a v2 record batch: reading them (after decompression) and building a
 * batch from a list of them. A broker needs this where Kafka's LogValidator and log cleaner
 * look inside batches: per-record timestamp and key checks, recompression to a topic's
 * compression.type, and compaction, which keeps a subset of a batch's records at their
 * original offsets.
 */
#ifndef KP_RECORDS_H
#define KP_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kp.h"
#include "kp_batch.h"
#include "kp_compress.h"

/*
 * The fewest bytes a record takes (Kafka's DefaultRecord): a one-byte length varint, then
 * attributes, timestamp delta, offset delta, key length, value length and header count, one
 * byte each at their smallest.
 */
#define KP_RECORD_MIN_SIZE 7

/*
 * Timestamp arithmetic as Kafka's: a record's timestamp is its batch's base timestamp plus its
 * delta (DefaultRecord in DefaultRecordBatch), both chosen by the producer, computed in Java
 * longs, which wrap. So do these, without C's undefined signed overflow: a batch whose sum
 * overflows reads here as it reads in Kafka, and rewriting a batch (a new base, the deltas
 * shifted) keeps every record's timestamp.
 */
static inline int64_t kp_ts_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static inline int64_t kp_ts_sub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }

/* One record, pointing into the records section it was read from. */
typedef struct kp_record {
    int8_t attributes;
    int64_t timestamp_delta;
    int32_t offset_delta;
    const uint8_t *key;      /* NULL with key_len -1: a null key */
    int32_t key_len;
    const uint8_t *value;    /* NULL with value_len -1: a null value (a tombstone) */
    int32_t value_len;
    const uint8_t *headers;  /* the header count and the headers, as written */
    size_t headers_len;
} kp_record;

/*
 * The records section of b: b's own bytes when uncompressed, else decompressed into *owned
 * (free it; NULL when nothing was allocated). max_out bounds what decompression may produce.
 * 0; -1 with *why for a corrupt compressed section; KP_TOO_LARGE with *why when the section
 * would exceed max_out, or (checked before decompressing) when the header's record count could
 * not fit in max_out.
 */
int kp_batch_records(const kp_batch *b, size_t max_out, const uint8_t **sec, size_t *sec_len, uint8_t **owned,
                     const char **why);

typedef struct kp_record_iter {
    const uint8_t *p;
    size_t len, pos;
    int32_t left; /* records the batch header still promises */
} kp_record_iter;

void kp_records_begin(kp_record_iter *it, const uint8_t *sec, size_t len, int32_t records_count);
/*
 * The next record: 1, 0 once records_count records have been read and the section is used up,
 * -1 with *why for a record that runs past its length or the section, a negative length
 * where none is allowed, or a section with fewer or more records than the header says.
 */
int kp_records_next(kp_record_iter *it, kp_record *rec, const char **why);

/*
 * A new batch with orig's header fields (base offset, leader epoch, producer id, epoch and
 * base sequence, the transactional, control and timestamp-type bits) holding recs, whose
 * timestamps are relative to orig's base timestamp, compressed with codec. With renumber the
 * records get offset deltas 0..n-1 (a produced batch whose records moved to a new batch);
 * otherwise each keeps its delta and the batch keeps orig's last offset delta, as Kafka's
 * cleaner does so that the producer's last sequence survives compaction. The max timestamp is
 * the newest record's, or orig's under LogAppendTime or with no records. n may be 0: an empty
 * batch, uncompressed, as the cleaner keeps for a producer's last batch. *out is malloc'd, with
 * its CRC set; 0 or -1 with *why. delete_horizon >= 0 marks the batch with the time its
 * tombstones may go (KIP-534: the base timestamp becomes the horizon and the records' deltas
 * move with it); -1 leaves none.
 */
int kp_batch_rebuild(const kp_batch *orig, int codec, const kp_record *recs, int32_t n, bool renumber,
                     int64_t delete_horizon, uint8_t **out, size_t *out_len, const char **why);

/*
 * kp_batch_rebuild one record at a time, for a caller that reads records as it writes them
 * (the produce record pass) instead of holding them all: begin, add each record (its bytes are
 * copied: the section it points into may go), then finish (the batch, as kp_batch_rebuild
 * makes it) or discard. Memory is the records' bytes, not a struct per record.
 */
typedef struct kp_batch_builder {
    const kp_batch *orig;
    int codec;
    bool renumber, horizon, based;
    int64_t base_ts, shift, max_delta;
    int32_t n;
    const char *err;
    kp_writer w;
} kp_batch_builder;

void kp_builder_begin(kp_batch_builder *bb, const kp_batch *orig, int codec, bool renumber, int64_t delete_horizon);
void kp_builder_add(kp_batch_builder *bb, const kp_record *rec);
size_t kp_builder_len(const kp_batch_builder *bb); /* the records' bytes so far, uncompressed */
int kp_builder_finish(kp_batch_builder *bb, uint8_t **out, size_t *out_len, const char **why);
void kp_builder_discard(kp_batch_builder *bb);
/*
 * For a caller rebuilding batch after batch (the cleaner's worker): begin with scratch's
 * buffer instead of a new one, and finish into into (its buffer kept, grown only when too
 * small; into->len is the batch's length), the records' buffer handed back to scratch. Nothing
 * is allocated per batch once both are big enough: with one malloc arena for the process
 * (broker/main.c), every allocation takes the lock the loop's own mallocs wait for.
 */
void kp_builder_begin_with(kp_batch_builder *bb, kp_writer *scratch, const kp_batch *orig, int codec, bool renumber,
                           int64_t delete_horizon);
int kp_builder_finish_into(kp_batch_builder *bb, kp_writer *into, kp_writer *scratch, const char **why);

#endif
