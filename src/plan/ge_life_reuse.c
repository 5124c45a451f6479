/*
 * ge_life_reuse.c — level-2 reuse, GE's ReuseBlocksByLifeTime (reference §5.4), binary family only.
 *
 * Blocks are sorted by CompareLifeInterval (larger first; continuous blocks by their real size;
 * equal sizes: descending sort puts the later life begin first, ascending sort the fewer nodes
 * first, then the earlier life begin; last, creation order). GE then lets every block i that is not
 * yet a child take, as children, the later blocks j that fit. That parent-major double loop is
 * computed here child-major, which gives the same result: block j ends up in the first earlier
 * top-level block that accepts it, and when j is tried, every earlier block's state is exactly what
 * it was when GE's outer loop reached j. The search for that first accepting parent runs on two
 * segment trees whose subtrees are pruned by room (the largest free room in a parent's tree) and
 * lifetime together: one over all parents in order, for parents whose span is disjoint from j's
 * (some parent ending before j begins or beginning after j ends); one per stream, over that
 * stream's non-continuous parents in order, for interval splitting, where a parent can keep an item
 * of j only if one ends before the parent begins, starts after it ends, or fits in the longest gap
 * between two of the parent's own items. The two trees' candidates are merged in rank order and
 * each is tested exactly; a rejected one changes nothing, so the search goes on after it, and the
 * first that accepts wins, as in GE. (Before the per-stream tree and the gap test, nearly every
 * candidate on a stream-rich graph was an overlapping parent of another stream or one whose items
 * covered all of j's, each costing a full exact test.)
 *
 * Known cost left: a parent whose room lies only in nested blocks that j overlaps passes the
 * trees (room is not lifetime-aware below the top level) and fails the exact test; with many
 * large long-lived blocks (tens of thousands live at once, random sizes) that makes the search
 * scan many parents per block.
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

/* A segment tree over parent slots: per node, the largest room (submax) of an active parent below
 * and lifetime summaries of the parents below (earliest span end, latest span begin, and in the
 * split tree the longest gap between two consecutive own items). Empty slots hold -1 / INT64_MAX /
 * INT64_MIN, which no test accepts. */
typedef struct seg {
    size_t p2;
    int64_t *room, *emin, *bmax, *gmax; /* gmax: split tree only */
} seg;

typedef struct l2 {
    ge_work *w;
    bool asc;
    /* disjoint tree: slot = rank (processing position in the batch group), every active parent;
     * split tree: slot = base[stream] + k for the k-th non-continuous parent of that stream, so a
     * stream's parents are one run of slots, in rank order */
    seg t1, t2;
    int32_t *rank2block;
    int32_t *rank2slot; /* split-tree slot of an active non-continuous parent, -1 otherwise */
    int32_t *slot2rank;
    int32_t *sbase, *sact; /* per dense stream id: first slot, parents so far (-1: not seen) */
    int32_t *sseen;        /* dense stream ids seen in the current group */
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

/* First index >= a of an item of x's (x's items are disjoint and in time order, so their ends are
 * sorted too) that ends after lo; x->icount: none. Gallops from a, so that a run of queries with
 * growing lo, each starting where the last one ended, costs little. */
static size_t first_after(const ge_work *w, const ge_block *x, size_t a, int64_t lo)
{
    const uint32_t *v = w->perm + x->istart;
    size_t n = x->icount, b = a, step = 1;
    while (b < n && w->items[v[b]].upper <= lo) {
        a = b + 1;
        b += step;
        step *= 2;
    }
    if (b > n) b = n;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (w->items[v[m]].upper <= lo) a = m + 1;
        else b = m;
    }
    return a;
}

/* First of the items it[0..n) (disjoint, in time order) that ends after t; n: none. */
static size_t first_ending_after(const ge_work *w, const uint32_t *it, size_t n, int64_t t)
{
    size_t a = 0, b = n;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (w->items[it[m]].upper <= t) a = m + 1;
        else b = m;
    }
    return a;
}

/* Does one of the items s (in time order) overlap an own item of y? Only those inside y's span
 * can; for them the search in y's items goes forward from where the last one stopped. */
static bool any_cross(const ge_work *w, const ge_block *y, const view *s)
{
    size_t a = 0;
    for (size_t q = first_ending_after(w, s->it, s->n, y->begin); q < s->n; q++) {
        const gm_ge_item *x = &w->items[s->it[q]];
        if (x->lower >= y->end) break;
        a = first_after(w, y, a, x->lower);
        if (a == y->icount) break;
        if (w->items[w->perm[y->istart + a]].lower < x->upper) return true;
    }
    return false;
}

static bool life_ok(const ge_work *w, const ge_block *y, const ge_block *c, const view *s)
{
    if (s->end <= y->begin || y->end <= s->begin) return true;
    if (y->stream != c->stream || y->continuous || c->continuous) return false;
    return !any_cross(w, y, s);
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

void gm_ge_block_facts(const ge_work *w, ge_block *b)
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
        /* C's items outside P's span cross none of P's; for those inside, the search in P's
         * items goes forward from where the last one stopped */
        const uint32_t *cv = w->perm + C->istart;
        size_t n = C->icount, q = first_ending_after(w, cv, n, P->begin), a = 0;
        memcpy(L->sa, cv, q * sizeof *cv);
        na = q;
        for (; q < n; q++) {
            uint32_t i = cv[q];
            const gm_ge_item *x = &w->items[i];
            if (x->lower >= P->end) break;
            a = first_after(w, P, a, x->lower);
            if (a < P->icount && w->items[w->perm[P->istart + a]].lower < x->upper) L->sb[nb++] = i;
            else L->sa[na++] = i;
        }
        memcpy(L->sa + na, cv + q, (n - q) * sizeof *cv);
        na += n - q;
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
        gm_ge_block_facts(w, K);
        C->icount = na;
        gm_ge_block_facts(w, C);
        *clone = k;
    }
    return true;
}

/* ---- segment trees ---- */

static void seg_clear(seg *t, size_t cap)
{
    size_t p2 = 1;
    while (p2 < cap) p2 *= 2;
    t->p2 = p2;
    for (size_t v = 1; v < 2 * p2; v++) {
        t->room[v] = -1;
        t->emin[v] = INT64_MAX;
        t->bmax[v] = INT64_MIN;
        if (t->gmax) t->gmax[v] = -1;
    }
}

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* Slot r gets parent b (its room and lifetime summaries). */
static void seg_put(seg *t, size_t r, const ge_block *b, int64_t gap)
{
    size_t v = t->p2 + r;
    t->room[v] = b->submax;
    t->emin[v] = b->end;
    t->bmax[v] = b->begin;
    if (t->gmax) t->gmax[v] = gap;
    for (v /= 2; v >= 1; v /= 2) {
        size_t l = 2 * v, h = l + 1;
        t->room[v] = max64(t->room[l], t->room[h]);
        t->emin[v] = min64(t->emin[l], t->emin[h]);
        t->bmax[v] = max64(t->bmax[l], t->bmax[h]);
        if (t->gmax) t->gmax[v] = max64(t->gmax[l], t->gmax[h]);
    }
}

/* Slot r's room changed (its lifetime did not). */
static void seg_room(seg *t, size_t r, int64_t room)
{
    size_t v = t->p2 + r;
    t->room[v] = room;
    for (v /= 2; v >= 1; v /= 2) {
        int64_t m = max64(t->room[2 * v], t->room[2 * v + 1]);
        if (t->room[v] == m) break;
        t->room[v] = m;
    }
}

/* What a child C needs of a parent, for the trees' tests. */
typedef struct want {
    int64_t need;         /* room */
    int64_t begin, end;   /* C's span: a parent whose span is disjoint from it */
    int64_t first_upper;  /* split: some item of C ends before the parent begins, */
    int64_t last_lower;   /* or starts after the parent ends, */
    int64_t min_len;      /* or fits in a gap between two of the parent's items */
} want;

/* Could some parent under node v accept C with disjoint spans? At a leaf: exactly that. */
static bool t1_maybe(const seg *t, size_t v, const want *q)
{
    return t->room[v] >= q->need && (t->emin[v] <= q->begin || t->bmax[v] >= q->end);
}

/* Could some parent under node v keep an item of C clear of its own items? At a leaf this is
 * necessary for CanIntervalLifeReuse to keep anything (the exact test follows in try_accept). */
static bool t2_maybe(const seg *t, size_t v, const want *q)
{
    return t->room[v] >= q->need && (t->emin[v] <= q->last_lower || t->bmax[v] >= q->first_upper ||
                                     t->gmax[v] >= q->min_len);
}

/* First slot in [lo, hi) whose leaf passes the test; -1: none. The split tree leaves parents
 * whose span is disjoint from C's to the disjoint tree, so that no parent is proposed twice. */
static long seg_find(const seg *t, bool split, size_t v, size_t nl, size_t nr, size_t lo, size_t hi,
                     const want *q)
{
    if (nr <= lo || nl >= hi || !(split ? t2_maybe(t, v, q) : t1_maybe(t, v, q))) return -1;
    if (nr - nl == 1)
        return !split || (t->emin[v] > q->begin && t->bmax[v] < q->end) ? (long)nl : -1;
    size_t mid = (nl + nr) / 2;
    long r = seg_find(t, split, 2 * v, nl, mid, lo, hi, q);
    return r >= 0 ? r : seg_find(t, split, 2 * v + 1, mid, nr, lo, hi, q);
}

/* Longest gap between two consecutive own items of x (-1: one item). */
static int64_t max_gap(const ge_work *w, const ge_block *x)
{
    int64_t g = -1;
    const uint32_t *v = w->perm + x->istart;
    for (size_t q = 1; q < x->icount; q++)
        g = max64(g, w->items[v[q]].lower - w->items[v[q - 1]].upper);
    return g;
}

/* First rank >= lo of a candidate parent of C: disjoint tree and, when C may be split, its
 * stream's run of the split tree. -1: none. */
static long t1_first(const l2 *L, size_t lo, size_t r, const want *q)
{
    return seg_find(&L->t1, false, 1, 0, L->t1.p2, lo, r, q);
}

static long t2_first(const l2 *L, int32_t sid, size_t lo, const want *q)
{
    int32_t base = L->sbase[sid], n = L->sact[sid];
    size_t a = (size_t)base, b = (size_t)base + (size_t)n;
    while (a < b) { /* first slot of the stream whose rank is >= lo */
        size_t m = (a + b) / 2;
        if ((size_t)L->slot2rank[m] < lo) a = m + 1;
        else b = m;
    }
    long s = seg_find(&L->t2, true, 1, 0, L->t2.p2, a, (size_t)base + (size_t)n, q);
    return s >= 0 ? L->slot2rank[s] : -1;
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

/* Stream slots of the split tree for one batch group: stream s gets as many slots as the items of
 * its non-continuous blocks (clones only split them, so that bounds its parents). Returns the
 * number of slots. */
static size_t stream_slots(l2 *L, const int32_t *e, size_t m, size_t *nseen)
{
    const ge_work *w = L->w;
    size_t k = 0;
    for (size_t i = 0; i < m; i++) {
        const ge_block *b = &w->b[e[i]];
        if (L->sact[b->sid] < 0) {
            L->sact[b->sid] = 0;
            L->sbase[b->sid] = 0;
            L->sseen[k++] = b->sid;
        }
        if (!b->continuous) L->sbase[b->sid] += (int32_t)b->icount;
    }
    size_t base = 0;
    for (size_t i = 0; i < k; i++) {
        size_t c = (size_t)L->sbase[L->sseen[i]];
        L->sbase[L->sseen[i]] = (int32_t)base;
        base += c;
    }
    *nseen = k;
    return base;
}

static void run_group(l2 *L, const int32_t *e, size_t m, size_t cap, bool mp)
{
    ge_work *w = L->w;
    size_t nseen;
    seg_clear(&L->t1, cap);
    seg_clear(&L->t2, stream_slots(L, e, m, &nseen));
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
        L->rank2slot[r] = -1;
        ge_block *C = &w->b[c];
        want q = {.need = C->size, .begin = C->begin, .end = C->end};
        if (!C->continuous) {
            /* with spans overlapping, an item before the parent's begin or after its end needs
             * another item of C inside the span: two items at least */
            const uint32_t *v = w->perm + C->istart;
            q.first_upper = C->icount >= 2 ? w->items[v[0]].upper : INT64_MAX;
            q.last_lower = C->icount >= 2 ? w->items[v[C->icount - 1]].lower : INT64_MIN;
            q.min_len = INT64_MAX;
            for (size_t k = 0; k < C->icount; k++)
                q.min_len = min64(q.min_len, w->items[v[k]].upper - w->items[v[k]].lower);
        }
        /* The first parent in rank order that accepts: candidates from both trees, in rank
         * order, each tested exactly; a rejected one changes nothing, so the search goes on
         * after it. */
        size_t lo = (size_t)C->min_parent;
        long d = t1_first(L, lo, r, &q), sp = C->continuous ? -1 : t2_first(L, C->sid, lo, &q);
        int32_t clone = -1;
        long leaf = -1;
        while (d >= 0 || sp >= 0) {
            long p = d < 0 ? sp : sp < 0 ? d : d < sp ? d : sp;
            int32_t pb = L->rank2block[p];
            if (try_accept(L, pb, c, &clone)) {
                seg_room(&L->t1, (size_t)p, w->b[pb].submax);
                if (L->rank2slot[p] >= 0) seg_room(&L->t2, (size_t)L->rank2slot[p], w->b[pb].submax);
                leaf = p;
                break;
            }
            lo = (size_t)p + 1;
            if (d == p) d = t1_first(L, lo, r, &q);
            if (sp == p) sp = t2_first(L, C->sid, lo, &q);
        }
        if (leaf < 0) {
            C->submax = room(w, C);
            seg_put(&L->t1, r, C, -1);
            if (!C->continuous) {
                int32_t slot = L->sbase[C->sid] + L->sact[C->sid]++;
                L->slot2rank[slot] = (int32_t)r;
                L->rank2slot[r] = slot;
                seg_put(&L->t2, (size_t)slot, C, max_gap(w, C));
            }
        }
        if (clone >= 0) {
            w->b[clone].min_parent = (int32_t)leaf;
            if (mp) heap_push(L, clone);
            else next = clone;
        }
    }
    for (size_t i = 0; i < nseen; i++) L->sact[L->sseen[i]] = -1;
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

typedef struct skey {
    int64_t stream;
    int32_t id;
} skey;

static int cmp_skey(const void *x, const void *y)
{
    const skey *a = x, *b = y;
    if (a->stream != b->stream) return a->stream < b->stream ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
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
    skey *sk = gm_malloc(m * sizeof *sk);
    L.t1.room = gm_malloc(2 * p2 * sizeof(int64_t));
    L.t1.emin = gm_malloc(2 * p2 * sizeof(int64_t));
    L.t1.bmax = gm_malloc(2 * p2 * sizeof(int64_t));
    L.t2.room = gm_malloc(2 * p2 * sizeof(int64_t));
    L.t2.emin = gm_malloc(2 * p2 * sizeof(int64_t));
    L.t2.bmax = gm_malloc(2 * p2 * sizeof(int64_t));
    L.t2.gmax = gm_malloc(2 * p2 * sizeof(int64_t));
    L.rank2block = gm_malloc(n * sizeof *L.rank2block);
    L.rank2slot = gm_malloc(n * sizeof *L.rank2slot);
    L.slot2rank = gm_malloc(n * sizeof *L.slot2rank);
    L.sbase = gm_malloc(m * sizeof *L.sbase);
    L.sact = gm_malloc(m * sizeof *L.sact);
    L.sseen = gm_malloc(m * sizeof *L.sseen);
    L.heap = gm_malloc(n * sizeof *L.heap);
    L.sa = gm_malloc(n * sizeof *L.sa);
    L.sb = gm_malloc(n * sizeof *L.sb);
    gm_status st = GM_OK;
    if (!e || !tmp || !sk || !L.t1.room || !L.t1.emin || !L.t1.bmax || !L.t2.room || !L.t2.emin ||
        !L.t2.bmax || !L.t2.gmax || !L.rank2block || !L.rank2slot || !L.slot2rank || !L.sbase ||
        !L.sact || !L.sseen || !L.heap || !L.sa || !L.sb) {
        st = gm_error_set(err, GM_ERR_NOMEM, "ge level-2 reuse: out of memory");
        goto out;
    }
    m = 0;
    for (size_t j = 0; j < w->nb; j++)
        if (w->b[j].l2ok) {
            w->b[j].min_parent = 0;
            sk[m] = (skey){w->b[j].stream, (int32_t)j};
            e[m++] = (int32_t)j;
        }
    /* dense stream ids (clones copy theirs) */
    qsort(sk, m, sizeof *sk, cmp_skey);
    int32_t nsid = -1;
    for (size_t i = 0; i < m; i++) {
        if (i == 0 || sk[i].stream != sk[i - 1].stream) L.sact[++nsid] = -1;
        w->b[sk[i].id].sid = nsid;
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
    gm_free(sk);
    gm_free(L.t1.room);
    gm_free(L.t1.emin);
    gm_free(L.t1.bmax);
    gm_free(L.t2.room);
    gm_free(L.t2.emin);
    gm_free(L.t2.bmax);
    gm_free(L.t2.gmax);
    gm_free(L.rank2block);
    gm_free(L.rank2slot);
    gm_free(L.slot2rank);
    gm_free(L.sbase);
    gm_free(L.sact);
    gm_free(L.sseen);
    gm_free(L.heap);
    gm_free(L.sa);
    gm_free(L.sb);
    return st;
}
