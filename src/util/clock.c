/*
 * clock.c — the monotonic clock of clock.h.
 */
#include "util/clock.h"

#include <time.h>

double gm_clock_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

double gm_clock_s(void) { return gm_clock_ms() / 1e3; }
