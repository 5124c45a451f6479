/*
 * plan_bound.c — the plan's lower bound and the witness that proves it.
 *
 * Symbols whose access spans [first, last_use] share a position of the planning order are
 * pairwise unordered: if A happened before B, every access of A would precede B's first
 * access, so A's last access would lie before B's first on every linear order. A set of
 * pairwise unordered symbols must occupy disjoint memory in any valid plan, so its total size
 * is a lower bound. Per memory type the witness is the feature-map symbols live at the peak
 * position (their sum is the classic LOAD); the bound is the sum over memory types, and the
 * witness lists every type's set so that a reader can re-check it.
 */
#include <stdlib.h>

#include "plan/planner_internal.h"
#include "util/alloc.h"

typedef struct point {
    int64_t t;     /* position */
    int64_t delta; /* +size at first, -size after last_use */
} point;

static int cmp_point(const void *a, const void *b)
{
    const point *x = a, *y = b;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    return (x->delta > y->delta) - (x->delta < y->delta); /* ends before starts at one t */
}

static bool counted(const gm_plan_symbol *y, int mt)
{
    return y->region == GM_PLAN_R_FEATURE_MAP && (int)y->mem_type == mt && y->size > 0;
}

/* The peak position of memory type mt and the load there; *peak_t = -1 when none. */
static gm_status peak_of(const gm_plan *p, int mt, point *pts, int64_t *peak_t, int64_t *load)
{
    size_t n = 0;
    for (size_t i = 0; i < p->n_symbols; i++) {
        const gm_plan_symbol *y = &p->symbols[i];
        if (!counted(y, mt)) continue;
        pts[n++] = (point){y->first, y->size};
        pts[n++] = (point){y->last_use + 1, -y->size};
    }
    qsort(pts, n, sizeof *pts, cmp_point);
    int64_t cur = 0, best = 0, at = -1;
    for (size_t i = 0; i < n; i++) {
        cur += pts[i].delta;
        if (cur > best) best = cur, at = pts[i].t;
    }
    *peak_t = at, *load = best;
    return GM_OK;
}

gm_status gm_plan_compute_bound(gm_plan *p)
{
    gm_free(p->witness);
    p->witness = NULL, p->n_witness = 0, p->lower_bound_bytes = 0;
    point *pts = gm_malloc((2 * p->n_symbols + 1) * sizeof *pts);
    int64_t peak[GM_MEM_COUNT];
    if (!pts) return GM_ERR_NOMEM;
    size_t total = 0;
    for (int mt = 0; mt < GM_MEM_COUNT; mt++) {
        int64_t load = 0;
        peak_of(p, mt, pts, &peak[mt], &load);
        p->lower_bound_bytes += load;
        for (size_t i = 0; i < p->n_symbols && peak[mt] >= 0; i++) {
            const gm_plan_symbol *y = &p->symbols[i];
            if (counted(y, mt) && y->first <= peak[mt] && peak[mt] <= y->last_use) total++;
        }
    }
    gm_free(pts);
    p->witness = gm_malloc((total ? total : 1) * sizeof *p->witness);
    if (!p->witness) return GM_ERR_NOMEM;
    for (int mt = 0; mt < GM_MEM_COUNT; mt++)
        for (size_t i = 0; i < p->n_symbols && peak[mt] >= 0; i++) {
            const gm_plan_symbol *y = &p->symbols[i];
            if (counted(y, mt) && y->first <= peak[mt] && peak[mt] <= y->last_use) p->witness[p->n_witness++] = i;
        }
    return GM_OK;
}
