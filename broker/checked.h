/*
 * checked: arithmetic on numbers a client chose. Kafka's brokers are Java, where a long that
 * overflows wraps and nothing stops; in C a signed overflow is undefined behaviour, so one frame
 * carrying INT64_MAX could make the broker do anything (issue 35: OffsetCommit v2-v4 with
 * retention_time_ms = INT64_MAX, `now + retention`). A time, timeout or offset a request adds
 * to another goes through these: they saturate at the type's bounds, which is what a deadline
 * or an expiry "as late as the client asked" means. Where Kafka refuses such a number with an
 * error code instead, the handler checks it before any arithmetic.
 */
#ifndef CHECKED_H
#define CHECKED_H

#include <stdint.h>

/* a + b, held to [INT64_MIN, INT64_MAX] */
static inline int64_t sat_add_i64(int64_t a, int64_t b) {
    int64_t r;
    if (!__builtin_add_overflow(a, b, &r)) return r;
    return b > 0 ? INT64_MAX : INT64_MIN;
}

/* a - b, held to [INT64_MIN, INT64_MAX] */
static inline int64_t sat_sub_i64(int64_t a, int64_t b) {
    int64_t r;
    if (!__builtin_sub_overflow(a, b, &r)) return r;
    return b < 0 ? INT64_MAX : INT64_MIN;
}

/* a * b, held to [INT64_MIN, INT64_MAX] */
static inline int64_t sat_mul_i64(int64_t a, int64_t b) {
    int64_t r;
    if (!__builtin_mul_overflow(a, b, &r)) return r;
    return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
}

#endif
