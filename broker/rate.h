/*
 * rate: the leaky bucket every rate quota charges (the request rate in pipeline/, the byte rates
 * in topic/quota.c): charged an amount, drained at the quota's rate, and allowed one second of
 * the rate as burst. Past the burst, the throttle is how long draining the excess takes at that
 * rate, which is what Apache Kafka's quota formula gives for a steady rate (KIP-13, KIP-219).
 */
#ifndef RATE_H
#define RATE_H

#include <stdint.h>

typedef struct rate_bucket {
    double level; /* amount over what the rate has drained */
    int64_t at_ms;
} rate_bucket;

/* Charge amount at now (monotonic ms); the throttle in ms it calls for (0: within the burst). */
int64_t rate_charge(rate_bucket *b, int64_t rate, int64_t amount, int64_t now_ms);
/* ms as an int32 throttle, capped. */
static inline int32_t rate_clamp_ms(int64_t ms) { return ms > INT32_MAX ? INT32_MAX : (int32_t)ms; }

#endif
