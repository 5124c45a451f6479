/*
 * dsa_window.c — the branch and bound on a time window around the load peak, for traces too
 * big for it whole.
 *
 * The height of a packing is at least LOAD, reached at one instant t*; a packing at LOAD has no
 * hole there. Greedy best fit leaves holes at t* that nothing later can fill (pangu: one of
 * 40 MiB, 1.0076 x LOAD). Here the buffers alive in a window of time around t* — lifetimes
 * clipped to it — are packed exactly by dsa_bb.c's decision at LOAD, and stay fixed while best
 * fit (size order) places every other buffer around them. Windows grow from a few instants to
 * thousands of buffers; a narrow one ignores too much of what comes after it, a wide one
 * leaves too little freedom to what is left, and the best of them is kept.
 *
 * Clipping is sound: two buffers that both meet the window and overlap in time overlap inside
 * the window (intervals have Helly's property), so the window's packing keeps them apart, and
 * best fit keeps every other buffer clear of the fixed ones over their whole lifetimes.
 *
 * Determinism: node caps per window; the clock only as a safety net.
 */
#include <stdlib.h>
#include <string.h>

#include "plan/dsa_internal.h"
#include "util/alloc.h"
#include "util/clock.h"

/* The decision's per-node scans are O(window); beyond this the window's set-up and nodes cost
 * more than the greedy pass they precede. */
#define WINDOW_MAX_N 4000

static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, c = *(const int64_t *)y;
    return (a > c) - (a < c);
}

typedef struct skey {
    int64_t size, lower;
    size_t i;
} skey;

/* TFLite's order for what is left: size descending, ties by first use. */
static int cmp_skey(const void *x, const void *y)
{
    const skey *a = x, *c = y;
    if (a->size != c->size) return a->size > c->size ? -1 : 1;
    if (a->lower != c->lower) return a->lower < c->lower ? -1 : 1;
    return (a->i > c->i) - (a->i < c->i);
}

typedef struct win {
    gm_dsa_buffer *sub; /* the window's buffers, clipped */
    size_t *idx;        /* sub[k] is b[idx[k]] */
    unsigned char *fixed;
    size_t *order;
    skey *keys; /* every buffer in the order of what is left */
    int64_t *ts;
    size_t nt;
} win;

/* Packs the window [w0, w1) at LOAD and the rest around it. Returns 1 with the full packing in
 * b and its height in *h, 0 when the decision found none within its cap, -2 on out of memory. */
static int try_window(gm_dsa_buffer *b, size_t n, win *w, int64_t w0, int64_t w1, int64_t lb,
                      uint64_t cap, double deadline, int64_t *h, gm_error *err)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        w->fixed[i] = 0;
        if (b[i].lower >= w1 || b[i].upper <= w0) continue;
        w->sub[m] = b[i];
        if (w->sub[m].lower < w0) w->sub[m].lower = w0;
        if (w->sub[m].upper > w1) w->sub[m].upper = w1;
        w->idx[m++] = i;
    }
    gm_dsa_bb *bb;
    if (gm_dsa_bb_new(w->sub, m, &bb, err) != GM_OK) return -2;
    uint64_t run = 0;
    int r = gm_dsa_bb_decide(bb, lb, &run, cap, deadline);
    if (r == 1) {
        const int64_t *pos = gm_dsa_bb_offsets(bb);
        for (size_t k = 0; k < m; k++) {
            b[w->idx[k]].offset = pos[k];
            w->fixed[w->idx[k]] = 1;
        }
    }
    gm_dsa_bb_free(bb);
    if (r == -2) {
        gm_error_set(err, GM_ERR_NOMEM, "dsa search: out of memory");
        return -2;
    }
    if (r != 1) return 0;
    size_t q = 0;
    for (size_t k = 0; k < n; k++)
        if (!w->fixed[w->keys[k].i]) w->order[q++] = w->keys[k].i;
    return gm_dsa_best_fit_seq(b, n, w->order, q, w->fixed, h, err) == GM_OK ? 1 : -2;
}

gm_status gm_dsa_window_improve(gm_dsa_buffer *b, size_t n, int64_t lb, int64_t *best,
                                int64_t *height, uint64_t node_limit, size_t max_windows,
                                double deadline, gm_error *err)
{
    if (n == 0 || *height <= lb) return GM_OK;
    win w = {0};
    gm_status st = GM_OK;
    w.sub = gm_malloc(n * sizeof *w.sub);
    w.idx = gm_malloc(n * sizeof *w.idx);
    w.fixed = gm_malloc(n);
    w.order = gm_malloc(n * sizeof *w.order);
    w.keys = gm_malloc(n * sizeof *w.keys);
    w.ts = gm_malloc(2 * n * sizeof *w.ts);
    if (!w.sub || !w.idx || !w.fixed || !w.order || !w.keys || !w.ts) {
        st = gm_error_set(err, GM_ERR_NOMEM, "dsa search: out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        w.keys[i] = (skey){b[i].size, b[i].lower, i};
        w.ts[2 * i] = b[i].lower;
        w.ts[2 * i + 1] = b[i].upper;
    }
    qsort(w.keys, n, sizeof *w.keys, cmp_skey);
    qsort(w.ts, 2 * n, sizeof *w.ts, cmp_i64);
    for (size_t i = 0; i < 2 * n; i++)
        if (w.nt == 0 || w.ts[w.nt - 1] != w.ts[i]) w.ts[w.nt++] = w.ts[i];
    int64_t tp = gm_dsa_peak_time(b, n);
    size_t p = 0;
    while (p + 1 < w.nt && w.ts[p + 1] <= tp) p++; /* ts[p] = t*, ts[p + 1] after it */
    uint64_t cap = node_limit ? node_limit / (max_windows ? max_windows : 1) : 1000000;
    size_t tried = 0, prev_m = 0;
    /* Half-widths 1, 2, 4, ... instants of the trace on each side of t*. */
    for (size_t half = 1; half < 2 * w.nt && tried < max_windows; half *= 2) {
        if (deadline > 0 && gm_clock_s() > deadline) break;
        int64_t w0 = w.ts[p >= half ? p - half : 0];
        int64_t w1 = w.ts[p + half < w.nt ? p + half : w.nt - 1];
        size_t m = 0;
        for (size_t i = 0; i < n; i++) m += b[i].lower < w1 && b[i].upper > w0;
        if (m > WINDOW_MAX_N) break;
        if (m == prev_m) continue;
        prev_m = m;
        tried++;
        int64_t h;
        int r = try_window(b, n, &w, w0, w1, lb, cap, deadline, &h, err);
        if (r == -2) {
            st = err->code ? err->code : GM_ERR_NOMEM;
            goto out;
        }
        if (r == 1 && h < *height) {
            *height = h;
            for (size_t i = 0; i < n; i++) best[i] = b[i].offset;
            if (h == lb) break;
        }
    }
out:
    gm_free(w.sub);
    gm_free(w.idx);
    gm_free(w.fixed);
    gm_free(w.order);
    gm_free(w.keys);
    gm_free(w.ts);
    return st;
}
