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
 *
 * Batch labels: branches of different labels never run together, so their symbols may share.
 * Per memory type the bound is then the largest, over labels L, of the LOAD of the unlabelled
 * symbols and L's together (every plan must fit those side by side).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plan/dsa_internal.h"
#include "plan/planner_internal.h"
#include "util/alloc.h"

typedef struct scope {
    int mt;
    uint32_t label; /* the unlabelled symbols and this label's (0: the unlabelled alone) */
    const uint32_t *sym_label;
} scope;

static bool counted(const gm_plan_symbol *y, size_t i, const scope *sc)
{
    return y->region == GM_PLAN_R_FEATURE_MAP && (int)y->mem_type == sc->mt && y->size > 0 &&
           (sc->sym_label[i] == 0 || sc->sym_label[i] == sc->label);
}

/* The peak position in scope sc and the load there; *peak_t = -1 when none. */
static void peak_of(const gm_plan *p, const scope *sc, gm_dsa_point *pts, int64_t *peak_t, int64_t *load)
{
    size_t n = 0;
    for (size_t i = 0; i < p->n_symbols; i++) {
        const gm_plan_symbol *y = &p->symbols[i];
        if (!counted(y, i, sc)) continue;
        pts[n++] = (gm_dsa_point){y->first, y->size};
        pts[n++] = (gm_dsa_point){y->last_use + 1, -y->size};
    }
    gm_dsa_peak(pts, n, peak_t, load);
}

static bool live_at(const gm_plan *p, size_t i, const scope *sc, int64_t t)
{
    const gm_plan_symbol *y = &p->symbols[i];
    return t >= 0 && counted(y, i, sc) && y->first <= t && t <= y->last_use;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

uint32_t *gm_plan_number_labels(const gm_plan *p, size_t *n)
{
    size_t ns = p->n_symbols ? p->n_symbols : 1, k = 0;
    uint32_t *num = gm_calloc(ns, sizeof *num);
    char **l = gm_malloc(ns * sizeof *l);
    if (!num || !l) {
        gm_free(num), gm_free(l);
        return NULL;
    }
    for (size_t i = 0; i < p->n_symbols; i++)
        if (p->symbols[i].batch_label) l[k++] = p->symbols[i].batch_label;
    qsort(l, k, sizeof *l, cmp_str);
    size_t u = 0;
    for (size_t i = 0; i < k; i++)
        if (!u || strcmp(l[u - 1], l[i])) l[u++] = l[i];
    for (size_t i = 0; i < p->n_symbols; i++) {
        const char *b = p->symbols[i].batch_label;
        if (b) num[i] = (uint32_t)((char **)bsearch(&b, l, u, sizeof *l, cmp_str) - l) + 1;
    }
    gm_free(l);
    *n = u;
    return num;
}

gm_status gm_plan_compute_bound(gm_plan *p)
{
    gm_free(p->witness);
    p->witness = NULL, p->n_witness = 0, p->lower_bound_bytes = 0;
    size_t n_labels = 0;
    uint32_t *sym_label = gm_plan_number_labels(p, &n_labels);
    gm_dsa_point *pts = gm_malloc((2 * p->n_symbols + 1) * sizeof *pts);
    if (!pts || !sym_label) {
        gm_free(pts), gm_free(sym_label);
        return GM_ERR_NOMEM;
    }
    scope best[GM_MEM_COUNT];
    int64_t peak[GM_MEM_COUNT];
    size_t total = 0;
    for (int mt = 0; mt < GM_MEM_COUNT; mt++) {
        int64_t top = -1;
        peak[mt] = -1;
        for (uint32_t l = 0; l <= n_labels; l++) {
            scope sc = {mt, l, sym_label};
            int64_t at = -1, load = 0;
            peak_of(p, &sc, pts, &at, &load);
            if (load > top) top = load, peak[mt] = at, best[mt] = sc;
        }
        p->lower_bound_bytes += top > 0 ? top : 0;
        for (size_t i = 0; i < p->n_symbols; i++) total += live_at(p, i, &best[mt], peak[mt]);
    }
    gm_free(pts);
    p->witness = gm_malloc((total ? total : 1) * sizeof *p->witness);
    if (p->witness)
        for (int mt = 0; mt < GM_MEM_COUNT; mt++)
            for (size_t i = 0; i < p->n_symbols; i++)
                if (live_at(p, i, &best[mt], peak[mt])) p->witness[p->n_witness++] = i;
    gm_free(sym_label);
    return p->witness ? GM_OK : GM_ERR_NOMEM;
}

gm_status gm_plan_remap_witness(gm_plan *p, const int32_t *remap)
{
    /* each holder once (a joined symbol can hold several); marked per symbol: the witness can
     * be most of a large graph */
    unsigned char *seen = gm_calloc(p->n_symbols ? p->n_symbols : 1, 1);
    if (!seen) return GM_ERR_NOMEM;
    size_t nw = 0;
    for (size_t i = 0; i < p->n_witness; i++) {
        size_t w = (size_t)remap[p->witness[i]];
        /* a feature-map member joined to a whole in a stricter region (a PhonySplit of a root
         * Data: zero copy) is no longer feature-map memory, which is all the bound speaks of */
        if (p->symbols[w].region != GM_PLAN_R_FEATURE_MAP) continue;
        if (!seen[w]) seen[w] = 1, p->witness[nw++] = w;
    }
    gm_free(seen);
    p->n_witness = nw;
    /* a joined symbol can hold two witnesses in less than their two sizes: claim no more than
     * the witness shows (a smaller bound is still a bound) */
    int64_t held = 0;
    for (size_t i = 0; i < nw; i++) held += p->symbols[p->witness[i]].size;
    if (held < p->lower_bound_bytes) p->lower_bound_bytes = held;
    return GM_OK;
}
