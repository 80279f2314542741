/*
 * The Java producer's default partitioner for keyed records: murmur2 of the key (seed
 * 0x9747b28c, Kafka's Utils.murmur2), made positive, modulo the partition count. librdkafka's
 * "murmur2_random" and franz-go's sticky-key partitioner agree, so a key lands where every
 * client puts it.
 */
#include "format.h"

int32_t cli_murmur2(const uint8_t *p, size_t n) {
    const uint32_t m = 0x5bd1e995;
    const int r = 24;
    uint32_t h = 0x9747b28c ^ (uint32_t)n;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        uint32_t k = (uint32_t)p[i] | (uint32_t)p[i + 1] << 8 | (uint32_t)p[i + 2] << 16 | (uint32_t)p[i + 3] << 24;
        k *= m;
        k ^= k >> r;
        k *= m;
        h *= m;
        h ^= k;
    }
    switch (n - i) {
    case 3: h ^= (uint32_t)p[i + 2] << 16; /* fall through */
    case 2: h ^= (uint32_t)p[i + 1] << 8;  /* fall through */
    case 1:
        h ^= p[i];
        h *= m;
    }
    h ^= h >> 13;
    h *= m;
    h ^= h >> 15;
    return (int32_t)h;
}

int32_t cli_key_partition(const uint8_t *key, size_t len, int32_t n) {
    if (n <= 0) return 0;
    return (int32_t)((uint32_t)cli_murmur2(key, len) & 0x7fffffff) % n;
}
