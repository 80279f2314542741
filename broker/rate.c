/* rate: the leaky bucket of rate.h. Kafka measures a rate over 11 one-second samples, so it lets
 * through more at once; one second of burst keeps a steady client unthrottled and a burst short. */
#include "rate.h"

#include <math.h>

#define BURST_MS 1000

int64_t rate_charge(rate_bucket *b, int64_t rate, int64_t amount, int64_t now) {
    if (rate <= 0) return 0;
    double drained = b->at_ms ? (double)(now - b->at_ms) * (double)rate / 1000.0 : 0;
    b->level = fmax(0, b->level - drained) + (double)amount;
    b->at_ms = now;
    double over = b->level - (double)rate * BURST_MS / 1000.0;
    return over > 0 ? (int64_t)ceil(over * 1000.0 / (double)rate) : 0;
}
