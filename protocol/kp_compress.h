/*
 * The compression codecs of record batches (gzip, snappy, lz4, zstd), byte-compatible with what
 * Kafka's clients write and read, so the broker can look inside a compressed batch and rebuild
 * one in a topic's compression.type. Pure: no I/O, no state between calls.
 */
#ifndef KP_COMPRESS_H
#define KP_COMPRESS_H

#include <stddef.h>
#include <stdint.h>

#include "kp_batch.h"

/* What kp_decompress and kp_batch_records return for output that would exceed their limit. */
#define KP_TOO_LARGE (-2)

/*
 * Decompress a record batch's records section as Kafka's codecs write it. Returns 0 with *out
 * (malloc'd, caller frees; non-NULL even for 0 bytes) and *out_len; -1 with *why (a static
 * string) for an unknown codec or corrupt or truncated input; KP_TOO_LARGE with *why for output
 * that would exceed max_out bytes (a decompression bomb is refused without allocating more than
 * about max_out).
 */
int kp_decompress(int codec, const uint8_t *in, size_t in_len, size_t max_out, uint8_t **out, size_t *out_len,
                  const char **why);

/*
 * Compress with the codec as Apache Kafka's producer would: gzip at zlib's default level, snappy
 * in snappy-java's (xerial) framing, an lz4 frame of 64 KiB independent blocks, zstd at level 3.
 * 0 or -1 with *why.
 */
int kp_compress(int codec, const uint8_t *in, size_t in_len, uint8_t **out, size_t *out_len, const char **why);

/* The codec's name as a producer's compression.type spells it ("none", "gzip", "snappy", "lz4",
 * "zstd"), or NULL for an unknown number. */
const char *kp_codec_name(int codec);

#endif
