/*
 * executor_clock.c — how long a run's iterations take: the wall clock from an iteration's launch
 * to every stream done, for `graphmem run` to set memory against time (memory first's
 * synchronizes, a learned plan's answers) on the device at hand.
 *
 * The first iteration is kept apart (it allocates, records a plan, loads kernels); the others'
 * median is the figure to compare, as in bench/. The durations sit in the executor (no
 * allocation, so nothing here can fail): past GM_EXEC_CLOCK_KEPT iterations only the first
 * GM_EXEC_CLOCK_KEPT count towards the median.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdlib.h>
#include <time.h>

#include "runtime/executor_internal.h"

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

void gm_exec_clock_start(gm_exec_clock *c) { c->t0 = now_ns(); }

void gm_exec_clock_stop(gm_exec_clock *c)
{
    const uint64_t ns = now_ns() - c->t0;
    if (c->n < GM_EXEC_CLOCK_KEPT) c->ns[c->n] = ns;
    c->n++;
}

static int by_value(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

void gm_exec_clock_report(gm_exec_clock *c, gm_run_stats *s)
{
    if (!c->n) return;
    s->first_iteration_ns = c->ns[0];
    const unsigned kept = c->n < GM_EXEC_CLOCK_KEPT ? c->n : GM_EXEC_CLOCK_KEPT;
    if (kept == 1) {
        s->median_iteration_ns = c->ns[0];
        return;
    }
    qsort(c->ns + 1, kept - 1, sizeof *c->ns, by_value); /* the first stays apart */
    const unsigned m = kept - 1, mid = 1 + m / 2;
    s->median_iteration_ns = m % 2 ? c->ns[mid] : (c->ns[mid - 1] + c->ns[mid]) / 2;
}
