#include "clock.h"

#include <time.h>

static int64_t offset_ms;

static int64_t read_ms(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t clk_now_ms(void) { return read_ms(CLOCK_REALTIME) + offset_ms; }
int64_t clk_mono_ms(void) { return read_ms(CLOCK_MONOTONIC) + offset_ms; }

int64_t clk_mono_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000 + offset_ms * 1000;
}

void clk_advance(int64_t ms) { offset_ms += ms; }
