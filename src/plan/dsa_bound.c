/*
 * dsa_bound.c — LOAD, the lower bound of the offset problem: at any instant every live buffer needs
 * its own bytes, so no packing is lower than the largest total size alive at one time. A sweep over
 * the 2n lifetime ends, sorted once: O(n log n).
 */
#include <stdlib.h>

#include "graphmem/dsa.h"
#include "util/alloc.h"

typedef struct event {
    int64_t t;
    int64_t delta; /* +size at lower, -size at upper */
} event;

/* Ends sort before starts at the same instant: lifetimes are half-open, so a buffer that dies
 * at t and one born at t may share bytes. */
static int cmp_event(const void *a, const void *b)
{
    const event *x = a, *y = b;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    return (x->delta > y->delta) - (x->delta < y->delta);
}

int64_t gm_dsa_lower_bound(const gm_dsa_buffer *b, size_t n)
{
    if (n == 0) return 0;
    event *ev = gm_malloc(2 * n * sizeof *ev);
    if (!ev) { /* no memory for the sweep: the largest buffer is still a valid, weaker bound */
        int64_t m = 0;
        for (size_t i = 0; i < n; i++) m = b[i].size > m ? b[i].size : m;
        return m;
    }
    for (size_t i = 0; i < n; i++) {
        ev[2 * i] = (event){b[i].lower, b[i].size};
        ev[2 * i + 1] = (event){b[i].upper, -b[i].size};
    }
    qsort(ev, 2 * n, sizeof *ev, cmp_event);
    int64_t cur = 0, best = 0;
    for (size_t i = 0; i < 2 * n; i++) {
        cur += ev[i].delta;
        if (cur > best) best = cur;
    }
    gm_free(ev);
    return best;
}
