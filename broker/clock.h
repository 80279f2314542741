/*
 * clock: the one source of time. Every timeout, expiry and rate reads it, so
 * tests and tools can shift it (clk_advance) and see every timer agree.
 */
#ifndef CLOCK_H
#define CLOCK_H

#include <stdint.h>

int64_t clk_now_ms(void);      /* wall clock in ms since the epoch, plus the offset */
int64_t clk_mono_ms(void);     /* monotonic ms, plus the offset: for durations */
int64_t clk_mono_us(void);
void clk_advance(int64_t ms);  /* move both clocks forward */
/*
 * Unit tests: from now on time moves only by clk_advance, so a test that steps to within a
 * millisecond of a deadline cannot be overtaken by real time passing.
 */
void clk_freeze(void);

/* Days since 1970-01-01 of a date (m 1-12, d 1-31), and back. */
int64_t clk_days_from_civil(int64_t y, unsigned m, unsigned d);
void clk_civil_from_days(int64_t days, int64_t *y, unsigned *m, unsigned *d);

#endif
