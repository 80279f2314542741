/*
 * libsnappy, loaded at its first use (kp_snappy.c): kp_compress.c's only way to snappy. A broker
 * that never sees a snappy batch never maps libsnappy nor the C++ runtime it needs.
 */
#ifndef KP_SNAPPY_H
#define KP_SNAPPY_H

#include <stddef.h>

#include <snappy-c.h>

typedef struct kp_snappy_api {
    snappy_status (*compress)(const char *input, size_t input_length, char *compressed, size_t *compressed_length);
    snappy_status (*uncompress)(const char *compressed, size_t compressed_length, char *uncompressed, size_t *uncompressed_length);
    size_t (*max_compressed_length)(size_t source_length);
    snappy_status (*uncompressed_length)(const char *compressed, size_t compressed_length, size_t *result);
    snappy_status (*validate_compressed_buffer)(const char *compressed, size_t compressed_length);
} kp_snappy_api;

/*
 * The library's functions, loading it on the first call (from any thread); NULL when it cannot
 * be loaded, with *why saying which files were tried and why they failed (a static string).
 */
const kp_snappy_api *kp_snappy(const char **why);

#endif
