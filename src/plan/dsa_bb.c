/*
 * dsa_bb.c — the branch-and-bound behind gm_dsa_search: "is there a packing of height <= H?"
 *
 * The search fills the skyline bottom-up. Time is cut into sections (the intervals between
 * lifetime ends); each has a floor (nothing more can go below it) and rem, the total size still
 * to place there. At each node the lowest section with work left is taken, and the branches are
 * the buffers alive in it that can rest exactly on its floor (a buffer rests at the highest floor
 * among its sections), then one "waste" branch: nothing starts there at that height, so the
 * section's floor rises to the lowest resting offset of the other buffers alive in it. The level
 * placed at never falls along a branch, so this enumerates every packing in which each buffer
 * rests on another or on 0, in offset order (MiniMalloc's canonical solutions).
 *
 * Prunes: floor + rem > H in any section; a buffer whose resting offset (which only rises) +
 * size > H; and, after each placement, the "unallocated floor" of the sections the placement
 * touched (MiniMalloc): below the lowest resting offset of the buffers still to place in a
 * section nothing more goes, so that offset + rem must fit under H too.
 *
 * Decomposition (MiniMalloc's dynamic decomposition): when some section boundary is crossed by
 * no unplaced buffer, the parts on either side no longer interact (resting offsets only depend
 * on placed buffers that overlap in time), so each part is solved on its own and a failure in one
 * fails the node at once instead of re-trying every alternative of the others.
 *
 * Identical buffers (same lifetime, size, alignment) are placed in index order: no symmetric
 * branches. Every change goes on a trail and is undone on backtrack.
 *
 * The candidate order decides how fast an answer comes, and one order's early mistake is often
 * no problem in another, so a decision runs restarts (run_keys: mostly size first, now and then
 * later start first; plain for the first 8 runs, then with seeded shuffling), each run capped by
 * Luby's sequence x 1024 nodes. A run that ends below its cap has refuted H.
 *
 * Determinism: one thread, fixed tie-breaks, seeded shuffles; node caps are reproducible, the
 * wall-clock deadline is a safety net whose expiry point can vary.
 */
#include <stdlib.h>
#include <string.h>

#include "plan/dsa_internal.h"
#include "util/alloc.h"
#include "util/clock.h"

static int64_t align_up(int64_t v, int64_t a) { return a > 1 ? (v + a - 1) / a * a : v; }

typedef struct trail_ent {
    int64_t *at;
    int64_t old;
} trail_ent;

typedef struct cand {
    int64_t off;
    int64_t k1, k2; /* the run's candidate order */
    uint32_t i;
} cand;

typedef struct comp {
    uint32_t lo, hi; /* sections [lo, hi) of an independent part */
} comp;

struct gm_dsa_bb {
    const gm_dsa_buffer *b;
    size_t n, K;
    uint32_t *s0, *s1;         /* sections [s0, s1) of each buffer */
    int64_t *floor, *rem;      /* per section */
    int64_t *rem0;             /* rem with nothing placed */
    uint32_t *cross, *cross0;  /* per boundary s (between sections s-1 and s): unplaced buffers over it */
    int64_t *mf;               /* per buffer: its resting offset, a lower bound that only rises */
    uint32_t *adj, *adj_at;    /* time-overlap lists (CSR) */
    uint32_t *cov, *cov_at;    /* per section, the buffers alive in it (CSR) */
    uint32_t *wit;             /* per section: an unplaced buffer at its lowest resting offset */
    int32_t *twin_prev;        /* previous identical buffer, or -1 */
    unsigned char *placed;
    int64_t *pos;              /* offsets of the current partial packing */
    uint32_t *ps;              /* placed buffers in placement order */
    size_t ps_n;
    int64_t H;
    trail_ent *trail;
    size_t trail_n, trail_cap;
    cand *cs; /* candidate stack shared by all depths */
    size_t cs_n, cs_cap;
    comp *cp; /* component stack shared by all depths */
    size_t cp_n, cp_cap;
    uint64_t nodes, node_cap, run_end;
    int64_t *k1, *k2; /* per buffer: the candidate order of this run (larger first) */
    uint64_t rng; /* 0: no shuffling; else xorshift state (seeded: deterministic) */
    double deadline;
    bool stop, oom;
};

typedef gm_dsa_bb ctx;

static bool trail_push(ctx *c, int64_t *at)
{
    if (c->trail_n == c->trail_cap &&
        gm_grow((void **)&c->trail, sizeof *c->trail, c->trail_n + 1, &c->trail_cap)) {
        c->oom = c->stop = true;
        return false;
    }
    c->trail[c->trail_n++] = (trail_ent){at, *at};
    return true;
}

static void trail_undo(ctx *c, size_t mark)
{
    while (c->trail_n > mark) {
        c->trail_n--;
        *c->trail[c->trail_n].at = c->trail[c->trail_n].old;
    }
}

/* Raises *at to v on the trail. */
static bool raise_to(ctx *c, int64_t *at, int64_t v)
{
    if (*at >= v) return true;
    return trail_push(c, at) && (*at = v, true);
}

static int cmp_cand(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->off != y->off) return x->off < y->off ? -1 : 1;
    if (x->k1 != y->k1) return x->k1 > y->k1 ? -1 : 1;
    if (x->k2 != y->k2) return x->k2 > y->k2 ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* The unallocated floor of section s: nothing still to place there can go below the lowest
 * resting offset among its unplaced buffers. Raises the floor to it; false when that floor plus
 * what is left there exceeds H (or on out-of-memory, with c->stop set). */
static bool lift_floor(ctx *c, uint32_t s)
{
    if (c->rem[s] == 0) return true;
    /* The witness of the last scan still rests at or below the floor: no lift (the common
     * case; a stale witness after backtracking is only a hint, and the test stays exact). */
    uint32_t w = c->wit[s];
    if (!c->placed[w] && c->mf[w] <= c->floor[s]) return c->floor[s] + c->rem[s] <= c->H;
    int64_t lo = INT64_MAX;
    for (uint32_t q = c->cov_at[s]; q < c->cov_at[s + 1]; q++) {
        uint32_t j = c->cov[q];
        if (!c->placed[j] && c->mf[j] < lo) lo = c->mf[j], w = j;
    }
    c->wit[s] = w;
    if (!raise_to(c, &c->floor[s], lo)) return false;
    return c->floor[s] + c->rem[s] <= c->H;
}

/* Places buffer i at off: raises the floors of its sections and the resting offsets of the
 * buffers overlapping it. Returns false when the node is dead (a section overflows or a buffer
 * can no longer rest below H) or out of memory (c->stop set); the caller undoes either way. */
static bool place(ctx *c, uint32_t i, int64_t off)
{
    const gm_dsa_buffer *x = &c->b[i];
    int64_t top = off + x->size;
    bool ok = true;
    c->placed[i] = 1;
    c->pos[i] = off;
    c->ps[c->ps_n++] = i;
    for (uint32_t s = c->s0[i]; s < c->s1[i]; s++) {
        c->rem[s] -= x->size;
        if (s > c->s0[i]) c->cross[s]--;
    }
    for (uint32_t s = c->s0[i]; s < c->s1[i]; s++) {
        if (!trail_push(c, &c->floor[s])) return false;
        c->floor[s] = top;
        if (top + c->rem[s] > c->H) ok = false;
    }
    if (!ok) return false;
    /* The sections whose unallocated floor may have risen: i's, and those of every buffer
     * whose resting offset rose (a range around i's, since all of them overlap i). */
    uint32_t alo = c->s0[i], ahi = c->s1[i];
    for (uint32_t k = c->adj_at[i]; k < c->adj_at[i + 1]; k++) {
        uint32_t j = c->adj[k];
        if (c->placed[j] || c->mf[j] >= top) continue;
        if (!trail_push(c, &c->mf[j])) return false;
        c->mf[j] = top;
        if (align_up(top, c->b[j].align) + c->b[j].size > c->H) return false;
        if (c->s0[j] < alo) alo = c->s0[j];
        if (c->s1[j] > ahi) ahi = c->s1[j];
    }
    for (uint32_t s = alo; s < ahi; s++)
        if (!lift_floor(c, s)) return false;
    return true;
}

/* Undoes the counters of the last placement (the trail holds the rest). */
static void unplace_last(ctx *c)
{
    uint32_t i = c->ps[--c->ps_n];
    for (uint32_t s = c->s0[i]; s < c->s1[i]; s++) {
        c->rem[s] += c->b[i].size;
        if (s > c->s0[i]) c->cross[s]++;
    }
    c->placed[i] = 0;
}

typedef enum { R_FOUND, R_NONE, R_STOP } result;

static bool push_comp(ctx *c, uint32_t lo, uint32_t hi)
{
    if (c->cp_n == c->cp_cap && gm_grow((void **)&c->cp, sizeof *c->cp, c->cp_n + 1, &c->cp_cap)) {
        c->oom = c->stop = true;
        return false;
    }
    c->cp[c->cp_n++] = (comp){lo, hi};
    return true;
}

static result dfs(ctx *c, uint32_t lo, uint32_t hi);

/* Solves the parts pushed at cp[base..) one after another; all must succeed. */
static result solve_parts(ctx *c, size_t base)
{
    size_t cnt = c->cp_n - base, pmark = c->ps_n;
    result r = R_FOUND;
    for (size_t k = 0; k < cnt && r == R_FOUND; k++) {
        comp p = c->cp[base + k]; /* by value: deeper pushes may move the stack */
        r = dfs(c, p.lo, p.hi);
    }
    c->cp_n = base;
    if (r != R_FOUND)
        while (c->ps_n > pmark) unplace_last(c);
    return r;
}

static result dfs(ctx *c, uint32_t lo, uint32_t hi)
{
    /* Waste branches loop here instead of recursing (they can be many in a row); their raises
     * are undone back to this mark when the frame fails. */
    size_t entry = c->trail_n;
    result r;
again:
    if (c->stop) {
        r = R_STOP;
        goto out;
    }
    c->nodes++;
    if (c->nodes > c->run_end) { /* this run only: the next order may do better */
        r = R_STOP;
        goto out;
    }
    if (c->nodes > c->node_cap ||
        ((c->nodes & 1023) == 0 && c->deadline > 0 && gm_clock_s() > c->deadline)) {
        c->stop = true;
        r = R_STOP;
        goto out;
    }
    /* One sweep over the part: its lowest section with work left, and the boundaries no
     * unplaced buffer crosses, which split it into independent parts. */
    int64_t f = INT64_MAX;
    uint32_t low = hi, start = lo;
    bool work = false;
    size_t base = c->cp_n;
    const int64_t *fl = c->floor, *rm = c->rem;
    for (uint32_t s = lo; s < hi; s++) {
        if (s > lo && c->cross[s] == 0) {
            if (work && !push_comp(c, start, s)) {
                r = R_STOP;
                goto out;
            }
            start = s;
            work = false;
        }
        if (rm[s] > 0) {
            work = true;
            if (fl[s] < f) { /* ties: the earliest (the latest or the fullest did worse) */
                f = fl[s];
                low = s;
            }
        }
    }
    if (work && !push_comp(c, start, hi)) {
        r = R_STOP;
        goto out;
    }
    if (c->cp_n - base == 0) { /* nothing left in this part */
        r = R_FOUND;
        goto out;
    }
    if (c->cp_n - base > 1) {
        r = solve_parts(c, base);
        goto out;
    }
    lo = c->cp[base].lo; /* one part: later sweeps skip the finished sections around it */
    hi = c->cp[base].hi;
    c->cp_n = base;
    /* Candidates: buffers over the lowest section that can rest right on its floor. The others
     * over it rest higher; the lowest of those levels is where the section continues if nothing
     * is put at f (the waste branch). */
    size_t cbase = c->cs_n;
    int64_t next = INT64_MAX;
    for (uint32_t q = c->cov_at[low]; q < c->cov_at[low + 1]; q++) {
        uint32_t i = c->cov[q];
        if (c->placed[i]) continue;
        const gm_dsa_buffer *x = &c->b[i];
        int64_t off = align_up(c->mf[i], x->align);
        if (off + x->size > c->H) { /* resting offsets only rise: i can never be placed */
            c->cs_n = cbase;
            r = R_NONE;
            goto out;
        }
        if (off != f) {
            if (off < next) next = off;
            continue;
        }
        if (c->twin_prev[i] >= 0 && !c->placed[c->twin_prev[i]]) continue;
        if (c->cs_n == c->cs_cap && gm_grow((void **)&c->cs, sizeof *c->cs, c->cs_n + 1, &c->cs_cap)) {
            c->oom = c->stop = true;
            c->cs_n = cbase;
            r = R_STOP;
            goto out;
        }
        c->cs[c->cs_n++] = (cand){off, c->k1[i], c->k2[i], i};
    }
    size_t cnt = c->cs_n - cbase;
    qsort(c->cs + cbase, cnt, sizeof *c->cs, cmp_cand);
    if (c->rng && cnt > 1) {
        /* Diversified restarts: now and then one of the next few candidates goes first. */
        c->rng ^= c->rng << 13;
        c->rng ^= c->rng >> 7;
        c->rng ^= c->rng << 17;
        if ((c->rng & 7) == 0) {
            size_t j = (size_t)((c->rng >> 8) % (cnt < 4 ? cnt : 4));
            cand t = c->cs[cbase + j];
            memmove(c->cs + cbase + 1, c->cs + cbase, j * sizeof *c->cs);
            c->cs[cbase] = t;
        }
    }
    r = R_NONE;
    for (size_t k = 0; k < cnt && r == R_NONE; k++) {
        cand cd = c->cs[cbase + k];
        size_t mark = c->trail_n;
        if (place(c, cd.i, cd.off)) r = dfs(c, lo, hi);
        else if (c->stop) r = R_STOP;
        if (r != R_FOUND) {
            unplace_last(c);
            trail_undo(c, mark);
        }
    }
    c->cs_n = cbase;
    if (r != R_NONE || next == INT64_MAX || next + c->rem[low] > c->H) goto out;
    /* The waste branch: nothing starts at f in this section; it continues at next. Every buffer
     * over it then rests at >= next. */
    bool ok = raise_to(c, &c->floor[low], next);
    for (uint32_t q = c->cov_at[low]; q < c->cov_at[low + 1] && ok; q++)
        if (!c->placed[c->cov[q]]) ok = raise_to(c, &c->mf[c->cov[q]], next);
    if (!ok) {
        r = R_STOP;
        goto out;
    }
    goto again;
out:
    if (r != R_FOUND) trail_undo(c, entry);
    return r;
}

/* Candidate orders (ties at one level: larger keys first). Others were tried: lifetime, area,
 * later end, smallest first, and MiniMalloc's tightness (the fullest section a buffer spans)
 * before width or area; none came close to size on the challenging set. */
enum { KEY_SIZE, KEY_START };

static void set_keys(ctx *c, int key)
{
    for (size_t i = 0; i < c->n; i++) {
        const gm_dsa_buffer *x = &c->b[i];
        int64_t len = x->upper - x->lower;
        c->k1[i] = key == KEY_SIZE ? x->size : -x->lower;
        c->k2[i] = len;
    }
}

/* The runs' orders in turn. Size first won by far on MiniMalloc's challenging set (every exact
 * instance at LOAD within 0.5M nodes with this mix, against several not in 6M when the orders
 * above take equal turns or lowest-section ties alternate between earliest and latest); later
 * start first now and then breaks its unlucky streaks. */
static const int run_keys[] = {KEY_SIZE, KEY_SIZE, KEY_SIZE, KEY_START};
#define NKEYS (sizeof run_keys / sizeof *run_keys)

/* Luby's restart sequence 1 1 2 1 1 2 4 1 1 2 ...: short runs mostly, a long one now and then. */
static uint64_t luby(uint64_t i)
{
    for (;;) {
        uint64_t k = 1;
        while (((uint64_t)1 << k) - 1 < i + 1) k++;
        if (((uint64_t)1 << k) - 1 == i + 1) return (uint64_t)1 << (k - 1);
        i -= ((uint64_t)1 << (k - 1)) - 1;
    }
}

int gm_dsa_bb_decide(gm_dsa_bb *c, int64_t H, uint64_t *run, uint64_t node_cap, double deadline)
{
    c->H = H;
    c->deadline = deadline;
    c->node_cap = node_cap;
    c->stop = false;
    for (size_t s = 0; s < c->K; s++)
        if (c->rem0[s] > H) return 0;
    for (;; (*run)++) {
        memset(c->floor, 0, c->K * sizeof *c->floor);
        memcpy(c->rem, c->rem0, c->K * sizeof *c->rem);
        memcpy(c->cross, c->cross0, (c->K + 1) * sizeof *c->cross);
        memset(c->mf, 0, c->n * sizeof *c->mf);
        memset(c->placed, 0, c->n);
        c->trail_n = c->cs_n = c->cp_n = c->ps_n = 0;
        /* The first 12 runs: each order plainly; then the orders with shuffling. */
        set_keys(c, run_keys[*run % NKEYS]);
        c->rng = *run < 2 * (uint64_t)NKEYS ? 0 : 0x9E3779B97F4A7C15ull * (*run + 1) + (uint64_t)H;
        c->run_end = c->nodes + 1024 * luby(*run);
        result r = dfs(c, 0, (uint32_t)c->K);
        if (c->oom) return -2;
        if (r == R_FOUND) return 1;
        if (r == R_NONE) return 0;
        if (c->stop) return -1; /* this run is re-done from scratch by the next call */
    }
}

const int64_t *gm_dsa_bb_offsets(const gm_dsa_bb *c) { return c->pos; }
uint64_t gm_dsa_bb_nodes(const gm_dsa_bb *c) { return c->nodes; }

/* ---- set-up: sections, membership and overlap lists, twins: O(n log n + overlapping pairs) */

typedef struct twin_key {
    int64_t lower, upper, size, align;
    uint32_t i;
} twin_key;

static int cmp_twin(const void *a, const void *b)
{
    const twin_key *x = a, *y = b;
    if (x->lower != y->lower) return x->lower < y->lower ? -1 : 1;
    if (x->upper != y->upper) return x->upper < y->upper ? -1 : 1;
    if (x->size != y->size) return x->size < y->size ? -1 : 1;
    if (x->align != y->align) return x->align < y->align ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

void gm_dsa_bb_free(gm_dsa_bb *c)
{
    if (!c) return;
    gm_free(c->s0); gm_free(c->s1); gm_free(c->floor); gm_free(c->rem); gm_free(c->rem0);
    gm_free(c->cross); gm_free(c->cross0); gm_free(c->mf); gm_free(c->adj); gm_free(c->adj_at);
    gm_free(c->cov); gm_free(c->cov_at); gm_free(c->wit); gm_free(c->twin_prev); gm_free(c->placed);
    gm_free(c->pos); gm_free(c->ps); gm_free(c->trail); gm_free(c->cs); gm_free(c->cp);
    gm_free(c->k1); gm_free(c->k2);
    gm_free(c);
}

/* CSR lists of the time-overlapping pairs: a sweep in start order (tk is sorted by lower), each
 * buffer compared with those still alive. */
static bool build_overlaps(ctx *c, const twin_key *tk)
{
    const gm_dsa_buffer *b = c->b;
    size_t n = c->n, cap = 0, cnt = 0, na = 0;
    uint32_t *pairs = NULL, *alive = gm_malloc(n * sizeof *alive), *fill = NULL;
    bool ok = false;
    if (!alive) return false;
    for (size_t k = 0; k < n; k++) {
        uint32_t i = tk[k].i;
        size_t w = 0;
        for (size_t a = 0; a < na; a++) {
            uint32_t j = alive[a];
            if (b[j].upper <= b[i].lower) continue; /* dead for good: later starts are later */
            alive[w++] = j;
            if (cnt + 2 > cap && gm_grow((void **)&pairs, sizeof *pairs, cnt + 2, &cap)) goto done;
            pairs[cnt++] = i;
            pairs[cnt++] = j;
        }
        na = w;
        alive[na++] = i;
    }
    for (size_t p = 0; p < cnt; p += 2) {
        c->adj_at[pairs[p] + 1]++;
        c->adj_at[pairs[p + 1] + 1]++;
    }
    for (size_t i = 0; i < n; i++) c->adj_at[i + 1] += c->adj_at[i];
    c->adj = gm_malloc((cnt + 1) * sizeof *c->adj);
    fill = gm_malloc((n + 1) * sizeof *fill);
    if (!c->adj || !fill) goto done;
    memcpy(fill, c->adj_at, n * sizeof *fill);
    for (size_t p = 0; p < cnt; p += 2) {
        c->adj[fill[pairs[p]]++] = pairs[p + 1];
        c->adj[fill[pairs[p + 1]]++] = pairs[p];
    }
    ok = true;
done:
    gm_free(alive);
    gm_free(pairs);
    gm_free(fill);
    return ok;
}

gm_status gm_dsa_bb_new(const gm_dsa_buffer *b, size_t n, gm_dsa_bb **out, gm_error *err)
{
    *out = NULL;
    ctx *c = gm_calloc(1, sizeof *c);
    int64_t *t = gm_malloc((2 * n + 1) * sizeof *t);
    twin_key *tk = gm_malloc((n + 1) * sizeof *tk);
    uint32_t *cfill = NULL;
    if (!c || !t || !tk) goto oom;
    c->b = b;
    c->n = n;
    c->s0 = gm_malloc((n + 1) * sizeof *c->s0);
    c->s1 = gm_malloc((n + 1) * sizeof *c->s1);
    c->mf = gm_calloc(n + 1, sizeof *c->mf);
    c->twin_prev = gm_malloc((n + 1) * sizeof *c->twin_prev);
    c->placed = gm_calloc(n + 1, 1);
    c->pos = gm_malloc((n + 1) * sizeof *c->pos);
    c->ps = gm_malloc((n + 1) * sizeof *c->ps);
    c->adj_at = gm_calloc(n + 1, sizeof *c->adj_at);
    if (!c->s0 || !c->s1 || !c->mf || !c->twin_prev || !c->placed || !c->pos || !c->ps || !c->adj_at)
        goto oom;
    size_t m = gm_dsa_time_axis(b, n, t);
    c->K = m ? m - 1 : 0;
    c->floor = gm_calloc(c->K + 1, sizeof *c->floor);
    c->rem = gm_calloc(c->K + 1, sizeof *c->rem);
    c->rem0 = gm_calloc(c->K + 1, sizeof *c->rem0);
    c->cross = gm_calloc(c->K + 1, sizeof *c->cross);
    c->cross0 = gm_calloc(c->K + 1, sizeof *c->cross0);
    c->cov_at = gm_calloc(c->K + 2, sizeof *c->cov_at);
    if (!c->floor || !c->rem || !c->rem0 || !c->cross || !c->cross0 || !c->cov_at) goto oom;
    for (size_t i = 0; i < n; i++) {
        c->s0[i] = (uint32_t)gm_dsa_time_index(t, m, b[i].lower);
        c->s1[i] = (uint32_t)gm_dsa_time_index(t, m, b[i].upper);
        for (uint32_t s = c->s0[i]; s < c->s1[i]; s++) {
            c->rem0[s] += b[i].size;
            if (s > c->s0[i]) c->cross0[s]++;
            c->cov_at[s + 1]++;
        }
        tk[i] = (twin_key){b[i].lower, b[i].upper, b[i].size, b[i].align, (uint32_t)i};
    }
    /* Section membership lists; their total is the sum of spans, small on the instances the
     * search takes. */
    for (size_t s = 0; s < c->K; s++) c->cov_at[s + 1] += c->cov_at[s];
    c->cov = gm_malloc(((size_t)c->cov_at[c->K] + 1) * sizeof *c->cov);
    cfill = gm_malloc((c->K + 1) * sizeof *cfill);
    if (!c->cov || !cfill) goto oom;
    memcpy(cfill, c->cov_at, c->K * sizeof *cfill);
    for (size_t i = 0; i < n; i++)
        for (uint32_t s = c->s0[i]; s < c->s1[i]; s++) c->cov[cfill[s]++] = (uint32_t)i;
    c->wit = gm_calloc(c->K + 1, sizeof *c->wit);
    if (!c->wit) goto oom;
    for (size_t s = 0; s < c->K; s++)
        if (c->cov_at[s + 1] > c->cov_at[s]) c->wit[s] = c->cov[c->cov_at[s]];
    qsort(tk, n, sizeof *tk, cmp_twin);
    for (size_t k = 0; k < n; k++) {
        const twin_key *p = k ? &tk[k - 1] : NULL;
        bool same = p && p->lower == tk[k].lower && p->upper == tk[k].upper && p->size == tk[k].size &&
                    p->align == tk[k].align;
        c->twin_prev[tk[k].i] = same ? (int32_t)p->i : -1;
    }
    if (!build_overlaps(c, tk)) goto oom;
    c->k1 = gm_malloc((n + 1) * sizeof *c->k1);
    c->k2 = gm_malloc((n + 1) * sizeof *c->k2);
    if (!c->k1 || !c->k2) goto oom;
    gm_free(cfill);
    gm_free(t);
    gm_free(tk);
    *out = c;
    return GM_OK;
oom:
    gm_free(cfill);
    gm_free(t);
    gm_free(tk);
    gm_dsa_bb_free(c);
    return gm_error_set(err, GM_ERR_NOMEM, "dsa search: out of memory");
}
