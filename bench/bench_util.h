/*
 * bench_util.h — what every benchmark program shares: the library's monotonic clock
 * (util/clock.h, so a benchmark's figures and the command's stage table read one clock), the
 * median (benchmarks quote medians: one disturbed run must not move a figure), and reading
 * the kernel's memory counters. Header-only: each benchmark source is its own program.
 */
#ifndef GM_BENCH_UTIL_H
#define GM_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/clock.h"

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of n values (the mean of the middle two for even n); sorts v in place. */
static inline double bench_median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* A /proc/self/status field in kB ("VmHWM:", "VmRSS:"), or -1. */
static inline long bench_status_kb(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    size_t n = strlen(field);
    while (f && fgets(line, sizeof line, f)) {
        if (!strncmp(line, field, n)) kb = strtol(line + n + 1, NULL, 10);
    }
    if (f) fclose(f);
    return kb;
}

/* Resets VmHWM to the current RSS, so the next reading is the peak of what follows. */
static inline void bench_reset_peak(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f) {
        fputs("5", f);
        fclose(f);
    }
}

#endif
