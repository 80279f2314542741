/*
 * clock: the one source of time. Every timeout, expiry and rate reads it, so
 * tests and tools can shift it (clk_advance) and see every timer agree.
 */
#ifndef CLOCK_H
#define CLOCK_H

#include <stdint.h>
#include <uv.h>

int64_t clk_now_ms(void);      /* wall clock in ms since the epoch, plus the offset */
int64_t clk_mono_ms(void);     /* monotonic ms, plus the offset: for durations */
int64_t clk_mono_us(void);
void clk_advance(int64_t ms);  /* move both clocks forward */
/*
 * Unit tests: from now on time moves only by clk_advance, so a test that steps to within a
 * millisecond of a deadline cannot be overtaken by real time passing.
 */
void clk_freeze(void);

/*
 * Every one-shot timer of the broker is armed here: cb runs after wait_ms, and never in the
 * loop iteration that armed it, however small or negative wait_ms is. libuv up to 1.44 (Debian
 * 12's) runs a timer that its own callback re-armed with 0 ms again in the same pass, before
 * any I/O; a callback that keeps finding a deadline due without consuming it would then hold
 * the loop for good, every listener silent (issue 30: a parked SyncGroup past its member's
 * session timeout). One millisecond is the shortest wait that ends the pass.
 */
void clk_timer_start(uv_timer_t *t, uv_timer_cb cb, int64_t wait_ms);

/* Days since 1970-01-01 of a date (m 1-12, d 1-31), and back. */
int64_t clk_days_from_civil(int64_t y, unsigned m, unsigned d);
void clk_civil_from_days(int64_t days, int64_t *y, unsigned *m, unsigned *d);

#endif
