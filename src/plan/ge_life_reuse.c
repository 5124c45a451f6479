/*
 * ge_life_reuse.c — level-2 reuse, GE's ReuseBlocksByLifeTime (reference §5.4), binary family only.
 *
 * Blocks are sorted by CompareLifeInterval (larger first; continuous blocks by their real size;
 * equal sizes: descending sort puts the later life begin first, ascending sort the fewer nodes
 * first, then the earlier life begin; last, creation order). GE then lets every block i that is not
 * yet a child take, as children, the later blocks j that fit. That parent-major double loop is
 * computed here child-major, which gives the same result: block j ends up in the first earlier
 * top-level block that accepts it, and when j is tried, every earlier block's state is exactly what
 * it was when GE's outer loop reached j. The search for that first accepting parent runs on a
 * segment tree over the parents in order, pruned by room (the largest free room in a parent's
 * tree) and lifetime (some parent ending before j begins or beginning after j ends, or one that
 * could accept by interval splitting); each candidate the tree proposes is then tested exactly.
 *
 * A parent P accepts block C (AddLifeReuseBlock) when:
 *  - both take part in level 2, same batch label (groups are run separately), depth <= 100;
 *  - their lifetimes allow it (CanBlockLifeReuse): C's items' span and P's own items' span are
 *    disjoint, in either order, whatever the streams (the caller made disjoint lifetimes
 *    happens-before ordered, standing in for GE's event-dependency test); or, failing that and on
 *    the same stream, CanIntervalLifeReuse: C's items that cross none of P's items stay in C and
 *    the crossing ones move to a clone block, processed right after C (in memory-priority mode
 *    the pending blocks are kept sorted, so the clone takes its sorted place instead). Continuous
 *    blocks are never split;
 *  - C nests in one of P's children first (recursively, in nesting order, with the same lifetime
 *    test against that child's own items, no splitting), else is appended at P's child offset when
 *    child_offset + size(C) <= size(P), with 512 bytes of slack when C is not exactly 512 bytes
 *    (Resize grows the parent to the sum of its children).
 * Children of one parent sit side by side, so they never share an address with each other; every
 * block on the way down was checked against C, so the nesting is a valid packing.
 *
 * Choices where the reference leaves room:
 *  - A parent's lifetime for these tests is its own items' span, not extended by its children.
 *  - Interval splitting is tried against the top-level parent only, and only commits when C is
 *    then actually placed (a split that places nothing would just fragment C).
 *  - "Child already has children": cannot arise child-major (C is tried before it parents).
 */
#include <stdlib.h>
#include <string.h>

#include "plan/ge_internal.h"
#include "util/alloc.h"

int gm_ge_compare_life(const ge_work *w, int32_t x, int32_t y, bool ascending)
{
    const ge_block *a = &w->b[x], *b = &w->b[y];
    int64_t sa = a->continuous ? a->real : a->size, sb = b->continuous ? b->real : b->size;
    if (sa != sb) return sa > sb ? -1 : 1;
    if (!ascending) {
        if (a->begin != b->begin) return a->begin > b->begin ? -1 : 1;
    } else {
        if (a->nodes != b->nodes) return a->nodes < b->nodes ? -1 : 1;
        if (a->begin != b->begin) return a->begin < b->begin ? -1 : 1;
    }
    return (x > y) - (x < y);
}

typedef struct l2 {
    ge_work *w;
    bool asc;
    /* segment tree over ranks (processing positions) of one batch group */
    size_t p2;
    int64_t *fmax;   /* largest submax of an active parent */
    int64_t *fmaxnc; /* the same over non-continuous parents (interval candidates) */
    int64_t *fmaxm;  /* the same over non-continuous parents with >= 2 items */
    int64_t *emin;   /* earliest span end of an active parent */
    int64_t *bmax;   /* latest span begin of an active parent */
    int32_t *rank2block;
    int32_t *heap;
    size_t nheap;
    uint32_t *sa, *sb; /* scratch: C's non-crossing / crossing items */
} l2;

/* The items of a candidate (all of C, or its non-crossing part). */
typedef struct view {
    const uint32_t *it;
    size_t n;
    int64_t begin, end;
} view;

static int64_t room(const ge_work *w, const ge_block *x)
{
    return x->depth < GE_MAX_DEPTH ? x->size + w->align - x->child_off : -1;
}

/* Does [lo, hi) overlap an own item of x? x's items are disjoint and in time order, so their
 * ends are sorted too: find the first ending after lo. */
static bool crosses(const ge_work *w, const ge_block *x, int64_t lo, int64_t hi)
{
    const uint32_t *v = w->perm + x->istart;
    size_t a = 0, b = x->icount;
    while (a < b) {
        size_t m = (a + b) / 2;
        if (w->items[v[m]].upper <= lo) a = m + 1;
        else b = m;
    }
    return a < x->icount && w->items[v[a]].lower < hi;
}

static bool life_ok(const ge_work *w, const ge_block *y, const ge_block *c, const view *s)
{
    if (s->end <= y->begin || y->end <= s->begin) return true;
    if (y->stream != c->stream || y->continuous || c->continuous) return false;
    for (size_t q = 0; q < s->n; q++)
        if (crosses(w, y, w->items[s->it[q]].lower, w->items[s->it[q]].upper)) return false;
    return true;
}

static void refresh(ge_work *w, int32_t x)
{
    for (; x >= 0; x = w->b[x].parent) {
        ge_block *b = &w->b[x];
        int64_t m = room(w, b);
        for (int32_t k = b->first_child; k >= 0; k = w->b[k].next_sibling)
            if (w->b[k].submax > m) m = w->b[k].submax;
        b->submax = m;
    }
}

static bool place(ge_work *w, int32_t x, int32_t c, const view *s)
{
    ge_block *X = &w->b[x], *C = &w->b[c];
    int64_t need = C->size;
    for (int32_t k = X->first_child; k >= 0; k = w->b[k].next_sibling)
        if (w->b[k].submax >= need && life_ok(w, &w->b[k], C, s) && place(w, k, c, s)) return true;
    int64_t slack = need == w->align ? 0 : w->align;
    if (X->depth + 1 > GE_MAX_DEPTH || X->child_off + need > X->size + slack) return false;
    C->parent = x;
    C->depth = X->depth + 1;
    C->next_sibling = -1;
    if (X->last_child >= 0) w->b[X->last_child].next_sibling = c;
    else X->first_child = c;
    X->last_child = c;
    X->child_off += need;
    C->submax = room(w, C);
    refresh(w, x);
    return true;
}

static void facts(ge_work *w, ge_block *b)
{
    b->begin = w->items[w->perm[b->istart]].lower;
    b->end = w->items[w->perm[b->istart + b->icount - 1]].upper;
    b->real = 0;
    b->nodes = 0;
    for (size_t q = 0; q < b->icount; q++) {
        const gm_ge_item *x = &w->items[w->perm[b->istart + q]];
        if (x->size > b->real) b->real = x->size;
        b->nodes += x->nodes;
    }
}

/* Tries top-level parent p for block c; on success c is nested and *clone is the split-off block
 * (or -1). */
static bool try_accept(l2 *L, int32_t p, int32_t c, int32_t *clone)
{
    ge_work *w = L->w;
    ge_block *P = &w->b[p], *C = &w->b[c];
    *clone = -1;
    view s = {w->perm + C->istart, C->icount, C->begin, C->end};
    size_t na = 0, nb = 0;
    if (!(C->end <= P->begin || P->end <= C->begin)) {
        if (P->stream != C->stream || P->continuous || C->continuous) return false;
        for (size_t q = 0; q < C->icount; q++) {
            uint32_t i = w->perm[C->istart + q];
            if (crosses(w, P, w->items[i].lower, w->items[i].upper)) L->sb[nb++] = i;
            else L->sa[na++] = i;
        }
        if (na == 0) return false;
        s = (view){L->sa, na, w->items[L->sa[0]].lower, w->items[L->sa[na - 1]].upper};
    }
    if (!place(w, p, c, &s)) return false;
    if (nb > 0) {
        memcpy(w->perm + C->istart, L->sa, na * sizeof *L->sa);
        memcpy(w->perm + C->istart + na, L->sb, nb * sizeof *L->sb);
        int32_t k = (int32_t)w->nb++;
        C = &w->b[c]; /* (w->b does not move: capacity n) */
        w->b[k] = *C;
        ge_block *K = &w->b[k];
        K->istart = C->istart + na;
        K->icount = nb;
        K->parent = K->first_child = K->last_child = K->next_sibling = -1;
        K->depth = 0;
        K->child_off = 0;
        facts(w, K);
        C->icount = na;
        facts(w, C);
        *clone = k;
    }
    return true;
}

/* ---- segment tree ---- */

static void seg_set(l2 *L, size_t r, int32_t blk)
{
    const ge_block *b = blk >= 0 ? &L->w->b[blk] : NULL;
    size_t v = L->p2 + r;
    L->fmax[v] = b ? b->submax : -1;
    L->fmaxnc[v] = b && !b->continuous ? b->submax : -1;
    L->fmaxm[v] = b && !b->continuous && b->icount >= 2 ? b->submax : -1;
    L->emin[v] = b ? b->end : INT64_MAX;
    L->bmax[v] = b ? b->begin : INT64_MIN;
    for (v /= 2; v >= 1; v /= 2) {
        size_t l = 2 * v, h = l + 1;
        L->fmax[v] = L->fmax[l] > L->fmax[h] ? L->fmax[l] : L->fmax[h];
        L->fmaxnc[v] = L->fmaxnc[l] > L->fmaxnc[h] ? L->fmaxnc[l] : L->fmaxnc[h];
        L->fmaxm[v] = L->fmaxm[l] > L->fmaxm[h] ? L->fmaxm[l] : L->fmaxm[h];
        L->emin[v] = L->emin[l] < L->emin[h] ? L->emin[l] : L->emin[h];
        L->bmax[v] = L->bmax[l] > L->bmax[h] ? L->bmax[l] : L->bmax[h];
    }
}

/* Could some active parent under node v accept c? (necessary, not sufficient) */
static bool seg_maybe(const l2 *L, size_t v, const ge_block *c)
{
    int64_t need = c->size;
    if (L->fmax[v] < need) return false;
    if (L->emin[v] <= c->begin || L->bmax[v] >= c->end) return true;
    if (c->continuous) return false;
    return c->icount >= 2 ? L->fmaxnc[v] >= need : L->fmaxm[v] >= need;
}

/* First active leaf in [lo, hi) that passes seg_maybe and the leaf's own quick test; -1: none. */
static long seg_find(const l2 *L, size_t v, size_t nl, size_t nr, size_t lo, size_t hi,
                     const ge_block *c)
{
    if (nr <= lo || nl >= hi || !seg_maybe(L, v, c)) return -1;
    if (nr - nl == 1) {
        const ge_block *p = &L->w->b[L->rank2block[nl]];
        if (p->end <= c->begin || c->end <= p->begin) return (long)nl;
        if (p->stream != c->stream || p->continuous || c->continuous) return -1;
        return p->icount >= 2 || c->icount >= 2 ? (long)nl : -1;
    }
    size_t mid = (nl + nr) / 2;
    long r = seg_find(L, 2 * v, nl, mid, lo, hi, c);
    return r >= 0 ? r : seg_find(L, 2 * v + 1, mid, nr, lo, hi, c);
}

/* ---- pending clones (memory-priority mode): a binary min-heap in level-2 order ---- */

static void heap_push(l2 *L, int32_t x)
{
    size_t i = L->nheap++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (gm_ge_compare_life(L->w, L->heap[p], x, L->asc) <= 0) break;
        L->heap[i] = L->heap[p];
        i = p;
    }
    L->heap[i] = x;
}

static int32_t heap_pop(l2 *L)
{
    int32_t top = L->heap[0], x = L->heap[--L->nheap];
    size_t i = 0, n = L->nheap;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && gm_ge_compare_life(L->w, L->heap[c + 1], L->heap[c], L->asc) < 0) c++;
        if (gm_ge_compare_life(L->w, x, L->heap[c], L->asc) <= 0) break;
        L->heap[i] = L->heap[c];
        i = c;
    }
    if (n) L->heap[i] = x;
    return top;
}

static void run_group(l2 *L, const int32_t *e, size_t m, size_t cap, bool mp)
{
    ge_work *w = L->w;
    size_t p2 = 1;
    while (p2 < cap) p2 *= 2;
    L->p2 = p2;
    for (size_t v = 1; v < 2 * p2; v++) {
        L->fmax[v] = L->fmaxnc[v] = L->fmaxm[v] = -1;
        L->emin[v] = INT64_MAX;
        L->bmax[v] = INT64_MIN;
    }
    L->nheap = 0;
    size_t ptr = 0, nproc = 0;
    int32_t next = -1;
    for (;;) {
        int32_t c;
        if (next >= 0) {
            c = next;
            next = -1;
        } else if (L->nheap && (ptr == m || gm_ge_compare_life(w, L->heap[0], e[ptr], L->asc) < 0)) {
            c = heap_pop(L);
        } else if (ptr < m) {
            c = e[ptr++];
        } else {
            break;
        }
        size_t r = nproc++;
        L->rank2block[r] = c;
        ge_block *C = &w->b[c];
        size_t lo = (size_t)C->min_parent;
        int32_t clone = -1;
        long leaf;
        bool placed = false;
        while ((leaf = seg_find(L, 1, 0, p2, lo, r, C)) >= 0) {
            int32_t p = L->rank2block[leaf];
            if (try_accept(L, p, c, &clone)) {
                seg_set(L, (size_t)leaf, p);
                placed = true;
                break;
            }
            lo = (size_t)leaf + 1;
        }
        if (!placed) {
            C->submax = room(w, C);
            seg_set(L, r, c);
        }
        if (clone >= 0) {
            w->b[clone].min_parent = (int32_t)leaf;
            if (mp) heap_push(L, clone);
            else next = clone;
        }
    }
}

/* Merge sort by (batch, level-2 order). */
static void sort_blocks(const ge_work *w, int32_t *v, int32_t *tmp, size_t n, bool asc)
{
    if (n < 2) return;
    size_t h = n / 2;
    sort_blocks(w, v, tmp, h, asc);
    sort_blocks(w, v + h, tmp, n - h, asc);
    size_t i = 0, j = h, o = 0;
    while (i < h && j < n) {
        const ge_block *a = &w->b[v[i]], *b = &w->b[v[j]];
        bool right = b->batch != a->batch ? b->batch < a->batch
                                          : gm_ge_compare_life(w, v[j], v[i], asc) < 0;
        tmp[o++] = right ? v[j++] : v[i++];
    }
    while (i < h) tmp[o++] = v[i++];
    while (j < n) tmp[o++] = v[j++];
    memcpy(v, tmp, n * sizeof *v);
}

gm_status gm_ge_life_reuse(ge_work *w, bool ascending, bool memory_priority, gm_error *err)
{
    size_t n = w->n, m = 0;
    for (size_t j = 0; j < w->nb; j++)
        if (w->b[j].l2ok) m++;
    if (m == 0) return GM_OK;
    size_t p2 = 1;
    while (p2 < n) p2 *= 2;
    l2 L = {.w = w, .asc = ascending};
    int32_t *e = gm_malloc(m * sizeof *e), *tmp = gm_malloc(m * sizeof *tmp);
    L.fmax = gm_malloc(2 * p2 * sizeof *L.fmax);
    L.fmaxnc = gm_malloc(2 * p2 * sizeof *L.fmaxnc);
    L.fmaxm = gm_malloc(2 * p2 * sizeof *L.fmaxm);
    L.emin = gm_malloc(2 * p2 * sizeof *L.emin);
    L.bmax = gm_malloc(2 * p2 * sizeof *L.bmax);
    L.rank2block = gm_malloc(n * sizeof *L.rank2block);
    L.heap = gm_malloc(n * sizeof *L.heap);
    L.sa = gm_malloc(n * sizeof *L.sa);
    L.sb = gm_malloc(n * sizeof *L.sb);
    gm_status st = GM_OK;
    if (!e || !tmp || !L.fmax || !L.fmaxnc || !L.fmaxm || !L.emin || !L.bmax || !L.rank2block ||
        !L.heap || !L.sa || !L.sb) {
        st = gm_error_set(err, GM_ERR_NOMEM, "ge level-2 reuse: out of memory");
        goto out;
    }
    m = 0;
    for (size_t j = 0; j < w->nb; j++)
        if (w->b[j].l2ok) {
            w->b[j].min_parent = 0;
            e[m++] = (int32_t)j;
        }
    sort_blocks(w, e, tmp, m, ascending);
    for (size_t g = 0; g < m;) {
        size_t h = g, cap = 0;
        while (h < m && w->b[e[h]].batch == w->b[e[g]].batch) cap += w->b[e[h++]].icount;
        run_group(&L, e + g, h - g, cap, memory_priority);
        g = h;
    }
out:
    gm_free(e);
    gm_free(tmp);
    gm_free(L.fmax);
    gm_free(L.fmaxnc);
    gm_free(L.fmaxm);
    gm_free(L.emin);
    gm_free(L.bmax);
    gm_free(L.rank2block);
    gm_free(L.heap);
    gm_free(L.sa);
    gm_free(L.sb);
    return st;
}
