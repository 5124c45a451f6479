/*
 * dsa_bound.c — LOAD, the lower bound of the offset problem: at any instant every live buffer needs
 * its own bytes, so no packing is lower than the largest total size alive at one time. A sweep over
 * the 2n lifetime ends, sorted once: O(n log n) (summed per instant on a dense time range: O(n)).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "graphmem/dsa.h"
#include "plan/dsa_internal.h"
#include "util/alloc.h"

/* Ends sort before starts at the same instant: lifetimes are half-open, so a buffer that dies
 * at t and one born at t may share bytes. */
static int cmp_point(const void *a, const void *b)
{
    const gm_dsa_point *x = a, *y = b;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    return (x->delta > y->delta) - (x->delta < y->delta);
}

/* The sweep summed per instant in an array over a dense range (planning positions): within an
 * instant the sorted sweep is highest after all its points (ends first, then starts), so the
 * first instant whose total exceeds every earlier one is the one the sorted sweep finds. False
 * when the range is sparse or there is no memory. */
static bool peak_dense(const gm_dsa_point *pts, size_t n, int64_t *peak_t, int64_t *load)
{
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        if (pts[i].t < lo) lo = pts[i].t;
        if (pts[i].t > hi) hi = pts[i].t;
    }
    if ((uint64_t)hi - (uint64_t)lo >= 4 * (uint64_t)n) return false;
    size_t w = (size_t)(hi - lo) + 1;
    int64_t *sum = gm_calloc(w, sizeof *sum);
    if (!sum) return false;
    for (size_t i = 0; i < n; i++) sum[pts[i].t - lo] += pts[i].delta;
    int64_t cur = 0, best = 0, at = -1;
    for (size_t k = 0; k < w; k++) {
        cur += sum[k];
        if (cur > best) best = cur, at = lo + (int64_t)k;
    }
    gm_free(sum);
    *peak_t = at, *load = best;
    return true;
}

void gm_dsa_peak(gm_dsa_point *pts, size_t n, int64_t *peak_t, int64_t *load)
{
    *peak_t = -1, *load = 0;
    if (n == 0 || peak_dense(pts, n, peak_t, load)) return;
    qsort(pts, n, sizeof *pts, cmp_point);
    int64_t cur = 0, best = 0, at = -1;
    for (size_t i = 0; i < n; i++) {
        cur += pts[i].delta;
        if (cur > best) best = cur, at = pts[i].t;
    }
    *peak_t = at, *load = best;
}

int64_t gm_dsa_lower_bound(const gm_dsa_buffer *b, size_t n)
{
    if (n == 0) return 0;
    gm_dsa_point *ev = gm_malloc(2 * n * sizeof *ev);
    if (!ev) { /* no memory for the sweep: the largest buffer is still a valid, weaker bound */
        int64_t m = 0;
        for (size_t i = 0; i < n; i++) m = b[i].size > m ? b[i].size : m;
        return m;
    }
    for (size_t i = 0; i < n; i++) {
        ev[2 * i] = (gm_dsa_point){b[i].lower, b[i].size};
        ev[2 * i + 1] = (gm_dsa_point){b[i].upper, -b[i].size};
    }
    int64_t at, best;
    gm_dsa_peak(ev, 2 * n, &at, &best);
    gm_free(ev);
    return best;
}
