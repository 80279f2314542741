/*
 * hash: FNV-1a, the broker's one string hash (Fowler, Noll, Vo; public domain:
 * http://www.isthe.com/chongo/tech/comp/fnv/). The 32-bit form chooses group and transaction
 * coordinators (group/group.c), which clients remember across a restart: its results must
 * never change. The 64-bit form keys in-memory tables only.
 */
#ifndef HASH_H
#define HASH_H

#include <stddef.h>
#include <stdint.h>

#define HASH_FNV32_OFFSET 2166136261u
#define HASH_FNV64_OFFSET 14695981039346656037ull

static inline uint32_t hash_fnv32(const void *p, size_t len) {
    const uint8_t *b = p;
    uint32_t h = HASH_FNV32_OFFSET;
    for (size_t i = 0; i < len; i++) h = (h ^ b[i]) * 16777619u;
    return h;
}

/* From h on: HASH_FNV64_OFFSET, or a value mixed into it (a key's other fields). */
static inline uint64_t hash_fnv64_from(uint64_t h, const void *p, size_t len) {
    const uint8_t *b = p;
    for (size_t i = 0; i < len; i++) h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

static inline uint64_t hash_fnv64(const void *p, size_t len) { return hash_fnv64_from(HASH_FNV64_OFFSET, p, len); }

#endif
