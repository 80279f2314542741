/*
 * kcat-style output of a consumed record (-f FORMAT): %t topic, %p partition, %o offset,
 * %T timestamp (ms), %k key, %v value, %K key length, %S value length (-1 for null), %h headers
 * (k=v separated by commas), %% a percent sign; \n \t \r \\ escapes. Unknown % sequences are
 * printed as they are. Pure: unit-tested in tests/unit/cli.
 */
#ifndef CLI_FORMAT_H
#define CLI_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct cli_rec {
    const char *topic;
    int32_t partition;
    int64_t offset;
    int64_t timestamp;
    const uint8_t *key;   /* NULL with key_len -1: a null key */
    int32_t key_len;
    const uint8_t *value; /* NULL with value_len -1: a null value */
    int32_t value_len;
    const uint8_t *headers; /* the record's headers section: count, then key/value pairs (varints) */
    size_t headers_len;
} cli_rec;

void cli_format(FILE *out, const char *fmt, const cli_rec *r);

/* Java's murmur2, as its default partitioner hashes keys (partitioner.c). */
int32_t cli_murmur2(const uint8_t *p, size_t n);
/* The partition the Java client picks for a key among n partitions. */
int32_t cli_key_partition(const uint8_t *key, size_t len, int32_t n);

#endif
