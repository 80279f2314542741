/*
 * The one clock (clock.h): wall and monotonic time plus an offset tests can advance, a frozen
 * mode for unit tests, clk_timer_start (the one way a one-shot timer is armed), and the civil
 * calendar arithmetic for the dates IAM tokens and identity files carry (Howard Hinnant's
 * days_from_civil, https://howardhinnant.github.io/date_algorithms.html).
 */
#include "clock.h"

#include <stdbool.h>
#include <time.h>

static int64_t offset_ms;
static bool frozen;
static struct timespec frozen_at[2]; /* CLOCK_REALTIME, CLOCK_MONOTONIC at clk_freeze */

static void read_ts(clockid_t id, struct timespec *ts) {
    if (frozen)
        *ts = frozen_at[id == CLOCK_MONOTONIC];
    else
        clock_gettime(id, ts);
}

static int64_t read_ms(clockid_t id) {
    struct timespec ts;
    read_ts(id, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void clk_freeze(void) {
    clock_gettime(CLOCK_REALTIME, &frozen_at[0]);
    clock_gettime(CLOCK_MONOTONIC, &frozen_at[1]);
    frozen = true;
}

int64_t clk_now_ms(void) { return read_ms(CLOCK_REALTIME) + offset_ms; }
int64_t clk_mono_ms(void) { return read_ms(CLOCK_MONOTONIC) + offset_ms; }

int64_t clk_mono_us(void) {
    struct timespec ts;
    read_ts(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000 + offset_ms * 1000;
}

void clk_advance(int64_t ms) { offset_ms += ms; }

void clk_timer_start(uv_timer_t *t, uv_timer_cb cb, int64_t wait_ms) {
    uv_timer_start(t, cb, wait_ms > 1 ? (uint64_t)wait_ms : 1, 0);
}

/* ---- calendar (proleptic Gregorian, UTC), for the timestamps IAM tokens and identity files carry ---- */

int64_t clk_days_from_civil(int64_t y, unsigned m, unsigned d) {
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

void clk_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d) {
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (int64_t)yoe + era * 400 + (*m <= 2);
}
