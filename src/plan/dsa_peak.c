/*
 * dsa_peak.c — best fit in "peak-first" orders, for big traces.
 *
 * On real traces the load has a few narrow peaks, and the height best fit reaches is set by how
 * the buffers alive at the busiest instants are stacked. Ordering buffers by the highest load
 * they take part in (descending) makes best fit stack the buffers of the global peak first, with
 * no gap at the peak instant (each one overlaps all placed so far there, so it goes on top), then
 * those of the next-busiest instant around them, and so on: the slack of quieter times absorbs
 * the fragmentation. Ties (the buffers of one peak) go by end, length or start; which is best
 * varies by trace, so the search tries several (iopddl Y_1: 1.0042 x LOAD by size, LOAD here).
 */
#include <stdbool.h>
#include <stdlib.h>

#include "plan/dsa_internal.h"
#include "util/alloc.h"

typedef struct pkey {
    int64_t k1, k2, k3; /* k1, k2 descending, k3 ascending */
    size_t i;
} pkey;

static int cmp_pkey(const void *a, const void *b)
{
    const pkey *x = a, *y = b;
    if (x->k1 != y->k1) return x->k1 > y->k1 ? -1 : 1;
    if (x->k2 != y->k2) return x->k2 > y->k2 ? -1 : 1;
    if (x->k3 != y->k3) return x->k3 < y->k3 ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* The peak load over each buffer's lifetime: loads of the elementary intervals by a difference
 * sweep, then a range-maximum segment tree (O(n log n), 2 words per interval: big planner
 * regions have hundreds of thousands of them). */
static int64_t *peak_loads(const gm_dsa_buffer *b, size_t n)
{
    int64_t *t = gm_malloc(2 * n * sizeof *t), *pk = gm_malloc(n * sizeof *pk), *tree = NULL;
    if (!t || !pk) goto fail;
    size_t m = gm_dsa_time_axis(b, n, t);
    size_t sz = 1;
    while (sz < m) sz *= 2;
    tree = gm_calloc(2 * sz, sizeof *tree);
    if (!tree) goto fail;
    for (size_t i = 0; i < n; i++) {
        tree[sz + gm_dsa_time_index(t, m, b[i].lower)] += b[i].size;
        tree[sz + gm_dsa_time_index(t, m, b[i].upper)] -= b[i].size;
    }
    for (size_t k = 1; k < m; k++) tree[sz + k] += tree[sz + k - 1]; /* prefix sums: loads */
    for (size_t v = sz; v-- > 1;) tree[v] = tree[2 * v] > tree[2 * v + 1] ? tree[2 * v] : tree[2 * v + 1];
    for (size_t i = 0; i < n; i++) {
        size_t l = sz + gm_dsa_time_index(t, m, b[i].lower), r = sz + gm_dsa_time_index(t, m, b[i].upper);
        int64_t best = 0;
        for (; l < r; l /= 2, r /= 2) { /* max over leaves [l, r) */
            if (l & 1) best = tree[l] > best ? tree[l] : best, l++;
            if (r & 1) --r, best = tree[r] > best ? tree[r] : best;
        }
        pk[i] = best;
    }
    gm_free(t);
    gm_free(tree);
    return pk;
fail:
    gm_free(t);
    gm_free(pk);
    gm_free(tree);
    return NULL;
}

typedef struct pev {
    int64_t t, d;
} pev;

static int cmp_pev(const void *a, const void *b)
{
    const pev *x = a, *y = b;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    return (x->d > y->d) - (x->d < y->d);
}

int64_t gm_dsa_peak_time(const gm_dsa_buffer *b, size_t n)
{
    if (n == 0) return 0;
    pev *e = gm_malloc(2 * n * sizeof *e);
    if (!e) return b[0].lower; /* only an order's quality depends on it */
    for (size_t i = 0; i < n; i++) {
        e[2 * i] = (pev){b[i].lower, b[i].size};
        e[2 * i + 1] = (pev){b[i].upper, -b[i].size};
    }
    qsort(e, 2 * n, sizeof *e, cmp_pev);
    int64_t cur = 0, best = -1, t = b[0].lower;
    for (size_t i = 0; i < 2 * n; i++) {
        cur += e[i].d;
        if (cur > best) best = cur, t = e[i].t;
    }
    gm_free(e);
    return t;
}

gm_status gm_dsa_best_fit_peak(gm_dsa_buffer *b, size_t n, int variant, int64_t *height,
                               gm_error *err)
{
    *height = 0;
    if (n == 0) return GM_OK;
    int64_t *pk = peak_loads(b, n);
    pkey *k = gm_malloc(n * sizeof *k);
    size_t *ord = gm_malloc(n * sizeof *ord);
    if (!pk || !k || !ord) {
        gm_free(pk);
        gm_free(k);
        gm_free(ord);
        return gm_error_set(err, GM_ERR_NOMEM, "dsa best fit: out of memory");
    }
    int64_t tp = gm_dsa_peak_time(b, n);
    for (size_t i = 0; i < n; i++) {
        int64_t len = b[i].upper - b[i].lower;
        bool col = b[i].lower <= tp && tp < b[i].upper;
        switch (variant) {
        case GM_DSA_PEAK_COLUMN: /* the column first (1 > 0), bottom-up by start; then by size */
            k[i] = col ? (pkey){1, -b[i].lower, -b[i].size, i} : (pkey){0, b[i].size, b[i].lower, i};
            break;
        case GM_DSA_PEAK_END: k[i] = (pkey){pk[i], -b[i].upper, len, i}; break;
        case GM_DSA_PEAK_LENGTH: k[i] = (pkey){pk[i], len, b[i].size, i}; break;
        default: k[i] = (pkey){pk[i], -b[i].lower, len, i}; break; /* GM_DSA_PEAK_START */
        }
    }
    qsort(k, n, sizeof *k, cmp_pkey);
    for (size_t i = 0; i < n; i++) ord[i] = k[i].i;
    gm_status st = gm_dsa_best_fit_seq(b, n, ord, n, NULL, height, err);
    gm_free(pk);
    gm_free(k);
    gm_free(ord);
    return st;
}
