/*
 * clock.h — the one monotonic clock the library and the command time their stages by: budgets,
 * deadlines and the -v stage table all read it, so their figures add up.
 */
#ifndef GM_CLOCK_H
#define GM_CLOCK_H

/* Milliseconds since an arbitrary fixed point (CLOCK_MONOTONIC): only differences mean anything. */
double gm_clock_ms(void);
/* The same clock in seconds, as the packers' budgets are given. */
double gm_clock_s(void);

#endif
