/*
 * dsa_search.c — the near-optimal packer for the offset problem.
 *
 * 1. Best fit in several greedy orders (peak-first ones from dsa_peak.c, then the plain ones)
 *    gives a first answer (the upper bound).
 * 2. A branch-and-bound search in the spirit of MiniMalloc then asks "is there a packing of height
 *    <= H?", first for H = LOAD (most of the budget), then bisecting between what is refuted and
 *    the best packing found.
 *
 * The search fills the skyline bottom-up. Time is cut into sections (the intervals between
 * lifetime ends); each has a floor (the top of what is placed there) and rem, the total size still
 * to place there. At each node the lowest section with work left is taken, and the branches are
 * the buffers alive in it that can rest exactly on its floor (a buffer rests at the highest floor
 * among its sections), then one "waste" branch: nothing starts there at that height, so the
 * section's floor rises to the lowest resting offset of the other buffers alive in it. Prunes:
 * floor + rem > H in any section; a buffer whose resting offset (which only rises) + size > H.
 * With H = LOAD the busiest sections have no slack, so any wasted byte there is refuted at once.
 * Resting offsets are kept per buffer and raised through precomputed time-overlap lists; every
 * change goes on a trail and is undone on backtrack.
 *
 * The candidate order decides everything on these instances, and one order's early mistake is
 * often no problem in another, so each decision runs restarts: 12 plain orders (by lifetime, size,
 * area, start, end, smallest first; lowest-section ties earliest or latest) then the same with
 * seeded shuffling, each run capped by Luby's sequence x 1024 nodes. Identical buffers are placed
 * in index order (no symmetric branches).
 *
 * The branching is not claimed complete (the waste branch jumps to the next resting level), so a
 * refuted height is a strong hint, not a proof: *optimal is reported only when the height equals
 * LOAD.
 *
 * Determinism: one thread, fixed tie-breaks, seeded shuffles; node_limit is the reproducible
 * budget. The wall-clock budget is a safety net whose expiry point can vary between runs.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "graphmem/dsa.h"
#include "plan/dsa_internal.h"
#include "util/alloc.h"

/* Beyond this many buffers the search's per-node O(n) candidate scan and the overlap lists get
 * too costly; big traces keep the best greedy answer. */
#define SEARCH_MAX_N 4000
/* The node budget when the caller gives neither nodes nor seconds (a few seconds of search). */
#define GM_DSA_DEFAULT_NODES 4000000u

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int64_t align_up(int64_t v, int64_t a) { return a > 1 ? (v + a - 1) / a * a : v; }

typedef struct trail_ent {
    int64_t *at;
    int64_t old;
} trail_ent;

typedef struct cand {
    int64_t off;
    int64_t k1, k2; /* heuristic: covers the lowest section, then lifetime x size */
    uint32_t i;
} cand;

typedef enum { R_FOUND, R_NONE, R_STOP } result;

typedef struct ctx {
    const gm_dsa_buffer *b;
    size_t n, K;
    uint32_t *s0, *s1;         /* sections [s0, s1) of each buffer */
    int64_t *floor, *rem;      /* per section */
    int64_t *mf;               /* per buffer: max floor over its sections */
    uint32_t *adj, *adj_at;    /* time-overlap lists (CSR) */
    uint32_t *cov, *cov_at;    /* per section, the buffers alive in it (CSR) */
    int32_t *twin_prev;        /* previous identical buffer, or -1 */
    unsigned char *placed;
    int64_t *pos;              /* offsets of the current partial packing */
    int64_t H;
    trail_ent *trail;
    size_t trail_n, trail_cap;
    cand *cs;                  /* candidate stack shared by all depths */
    size_t cs_n, cs_cap;
    uint64_t nodes, node_limit;  /* nodes: all runs so far; node_limit: 0 or the overall cap */
    uint64_t run_end;            /* this run stops (R_STOP) at this node count */
    int key;                     /* candidate order of this run */
    bool latest;                 /* lowest-section ties go to the latest section */
    uint64_t rng;                /* 0: no shuffling; else xorshift state (seeded: deterministic) */
    double deadline;
    bool stop, oom;
} ctx;

static bool trail_push(ctx *c, int64_t *at)
{
    if (c->trail_n == c->trail_cap &&
        gm_grow((void **)&c->trail, sizeof *c->trail, c->trail_n + 1, &c->trail_cap)) {
        c->oom = true;
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

static int cmp_cand(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->off != y->off) return x->off < y->off ? -1 : 1;
    if (x->k1 != y->k1) return x->k1 > y->k1 ? -1 : 1;
    if (x->k2 != y->k2) return x->k2 > y->k2 ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* Places buffer i at off: raises the floors of its sections and the resting offsets of the
 * buffers overlapping it. False when out of memory; *dead when a section overflows or a buffer
 * overlapping i can no longer rest below H (resting offsets never fall). */
static bool place(ctx *c, uint32_t i, int64_t off, bool *dead)
{
    const gm_dsa_buffer *x = &c->b[i];
    int64_t top = off + x->size;
    for (uint32_t s = c->s0[i]; s < c->s1[i]; s++) {
        if (!trail_push(c, &c->floor[s])) return false;
        c->floor[s] = top;
        c->rem[s] -= x->size;
        if (top + c->rem[s] > c->H) *dead = true;
    }
    for (uint32_t k = c->adj_at[i]; k < c->adj_at[i + 1]; k++) {
        uint32_t j = c->adj[k];
        if (!c->placed[j] && c->mf[j] < top) {
            if (!trail_push(c, &c->mf[j])) return false;
            c->mf[j] = top;
            if (align_up(top, c->b[j].align) + c->b[j].size > c->H) *dead = true;
        }
    }
    c->placed[i] = 1;
    c->pos[i] = off;
    return true;
}

static void unplace(ctx *c, uint32_t i, size_t mark)
{
    const gm_dsa_buffer *x = &c->b[i];
    for (uint32_t s = c->s0[i]; s < c->s1[i]; s++) c->rem[s] += x->size;
    trail_undo(c, mark);
    c->placed[i] = 0;
}

/* Raises *at to v on the trail. */
static bool raise_to(ctx *c, int64_t *at, int64_t v)
{
    if (*at >= v) return true;
    if (!trail_push(c, at)) return false;
    *at = v;
    return true;
}

static result dfs(ctx *c, size_t left)
{
    if (left == 0) return R_FOUND;
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
    if ((c->node_limit && c->nodes > c->node_limit) ||
        ((c->nodes & 1023) == 0 && c->deadline > 0 && now_s() > c->deadline)) {
        c->stop = true;
        r = R_STOP;
        goto out;
    }
    /* The lowest section with work left (the earliest on ties). */
    /* Two passes: a branch-free minimum (the hot loop of the search), then its position. */
    int64_t f = INT64_MAX;
    const int64_t *fl = c->floor, *rm = c->rem;
    for (size_t s = 0; s < c->K; s++) {
        int64_t v = rm[s] > 0 ? fl[s] : INT64_MAX;
        f = v < f ? v : f;
    }
    size_t low = c->K;
    if (c->latest) {
        for (size_t s = c->K; s-- > 0;)
            if (fl[s] == f && rm[s] > 0) {
                low = s;
                break;
            }
    } else {
        for (size_t s = 0; s < c->K; s++)
            if (fl[s] == f && rm[s] > 0) {
                low = s;
                break;
            }
    }
    /* Candidates: buffers over that section that can rest right on its floor. The others over
     * it rest higher; the lowest of those levels is where the section continues if nothing is
     * put at f (the waste branch). */
    size_t base = c->cs_n;
    int64_t next = INT64_MAX;
    for (uint32_t q = c->cov_at[low]; q < c->cov_at[low + 1]; q++) {
        uint32_t i = c->cov[q];
        if (c->placed[i]) continue;
        const gm_dsa_buffer *x = &c->b[i];
        int64_t off = align_up(c->mf[i], x->align);
        if (off + x->size > c->H) { /* resting offsets only rise: i can never be placed */
            c->cs_n = base;
            r = R_NONE;
            goto out;
        }
        if (off != f) {
            if (off < next) next = off;
            continue;
        }
        if (c->twin_prev[i] >= 0 && !c->placed[c->twin_prev[i]]) continue;
        if (c->cs_n == c->cs_cap &&
            gm_grow((void **)&c->cs, sizeof *c->cs, c->cs_n + 1, &c->cs_cap)) {
            c->oom = c->stop = true;
            c->cs_n = base;
            r = R_STOP;
            goto out;
        }
        int64_t len = x->upper - x->lower;
        switch (c->key) {
        case 0: c->cs[c->cs_n++] = (cand){off, len, x->size, i}; break;
        case 1: c->cs[c->cs_n++] = (cand){off, x->size, len, i}; break;
        case 2: c->cs[c->cs_n++] = (cand){off, (int64_t)((double)len * (double)x->size / 64), len, i}; break;
        case 3: c->cs[c->cs_n++] = (cand){off, -x->lower, len, i}; break;
        case 4: c->cs[c->cs_n++] = (cand){off, x->upper, len, i}; break;
        default: c->cs[c->cs_n++] = (cand){off, -len, -x->size, i}; break;
        }
    }
    size_t cnt = c->cs_n - base;
    qsort(c->cs + base, cnt, sizeof *c->cs, cmp_cand);
    if (c->rng && cnt > 1) {
        /* Diversified restarts: now and then one of the next few candidates goes first. */
        c->rng ^= c->rng << 13;
        c->rng ^= c->rng >> 7;
        c->rng ^= c->rng << 17;
        if ((c->rng & 7) == 0) {
            size_t j = (size_t)((c->rng >> 8) % (cnt < 4 ? cnt : 4));
            cand t = c->cs[base + j];
            memmove(c->cs + base + 1, c->cs + base, j * sizeof *c->cs);
            c->cs[base] = t;
        }
    }
    r = R_NONE;
    for (size_t k = 0; k < cnt && r == R_NONE; k++) {
        cand cd = c->cs[base + k];
        size_t mark = c->trail_n;
        bool dead = false;
        if (!place(c, cd.i, cd.off, &dead)) {
            c->oom = c->stop = true;
            unplace(c, cd.i, mark);
            r = R_STOP;
            break;
        }
        if (!dead) r = dfs(c, left - 1);
        if (r != R_FOUND) unplace(c, cd.i, mark);
    }
    c->cs_n = base;
    if (r != R_NONE || next == INT64_MAX || next + c->rem[low] > c->H) goto out;
    /* The waste branch: nothing starts at f in this section; it continues at next. Every buffer
     * over it then rests at >= next. */
    bool ok = raise_to(c, &c->floor[low], next);
    for (uint32_t q = c->cov_at[low]; q < c->cov_at[low + 1] && ok; q++)
        if (!c->placed[c->cov[q]]) ok = raise_to(c, &c->mf[c->cov[q]], next);
    if (!ok) {
        c->oom = c->stop = true;
        r = R_STOP;
        goto out;
    }
    goto again;
out:
    if (r != R_FOUND) trail_undo(c, entry);
    return r;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static uint32_t find_time(const int64_t *t, size_t m, int64_t v)
{
    size_t lo = 0, hi = m;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    return (uint32_t)lo;
}

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

static void ctx_free(ctx *c)
{
    gm_free(c->s0); gm_free(c->s1); gm_free(c->floor); gm_free(c->rem); gm_free(c->mf);
    gm_free(c->adj); gm_free(c->adj_at); gm_free(c->twin_prev); gm_free(c->placed);
    gm_free(c->pos); gm_free(c->trail); gm_free(c->cs); gm_free(c->cov); gm_free(c->cov_at);
}

/* Sets up sections, overlap lists and twins: O(n log n + overlapping pairs). */
static gm_status ctx_init(ctx *c, const gm_dsa_buffer *b, size_t n, gm_error *err)
{
    memset(c, 0, sizeof *c);
    c->b = b;
    c->n = n;
    int64_t *t = gm_malloc(2 * n * sizeof *t);
    twin_key *tk = gm_malloc(n * sizeof *tk);
    c->s0 = gm_malloc(n * sizeof *c->s0);
    c->s1 = gm_malloc(n * sizeof *c->s1);
    c->mf = gm_calloc(n, sizeof *c->mf);
    c->twin_prev = gm_malloc(n * sizeof *c->twin_prev);
    c->placed = gm_calloc(n, 1);
    c->pos = gm_malloc(n * sizeof *c->pos);
    c->adj_at = gm_calloc(n + 1, sizeof *c->adj_at);
    if (!t || !tk || !c->s0 || !c->s1 || !c->mf || !c->twin_prev || !c->placed || !c->pos || !c->adj_at)
        goto oom;
    for (size_t i = 0; i < n; i++) {
        t[2 * i] = b[i].lower;
        t[2 * i + 1] = b[i].upper;
    }
    qsort(t, 2 * n, sizeof *t, cmp_i64);
    size_t m = 0;
    for (size_t i = 0; i < 2 * n; i++)
        if (m == 0 || t[m - 1] != t[i]) t[m++] = t[i];
    c->K = m - 1;
    c->floor = gm_calloc(c->K + 1, sizeof *c->floor);
    c->rem = gm_calloc(c->K + 1, sizeof *c->rem);
    if (!c->floor || !c->rem) goto oom;
    for (size_t i = 0; i < n; i++) {
        c->s0[i] = find_time(t, m, b[i].lower);
        c->s1[i] = find_time(t, m, b[i].upper);
        for (uint32_t s = c->s0[i]; s < c->s1[i]; s++) c->rem[s] += b[i].size;
        tk[i] = (twin_key){b[i].lower, b[i].upper, b[i].size, b[i].align, (uint32_t)i};
    }
    /* Section membership lists; their total is the sum of spans, small on instances this
     * search takes (SEARCH_MAX_N). */
    c->cov_at = gm_calloc(c->K + 2, sizeof *c->cov_at);
    if (!c->cov_at) goto oom;
    for (size_t i = 0; i < n; i++)
        for (uint32_t s = c->s0[i]; s < c->s1[i]; s++) c->cov_at[s + 1]++;
    for (size_t s = 0; s < c->K; s++) c->cov_at[s + 1] += c->cov_at[s];
    c->cov = gm_malloc(((size_t)c->cov_at[c->K] + 1) * sizeof *c->cov);
    uint32_t *cfill = gm_malloc((c->K + 1) * sizeof *cfill);
    if (!c->cov || !cfill) {
        gm_free(cfill);
        goto oom;
    }
    memcpy(cfill, c->cov_at, c->K * sizeof *cfill);
    for (size_t i = 0; i < n; i++)
        for (uint32_t s = c->s0[i]; s < c->s1[i]; s++) c->cov[cfill[s]++] = (uint32_t)i;
    gm_free(cfill);
    qsort(tk, n, sizeof *tk, cmp_twin);
    for (size_t k = 0; k < n; k++) {
        const twin_key *p = k ? &tk[k - 1] : NULL;
        bool same = p && p->lower == tk[k].lower && p->upper == tk[k].upper && p->size == tk[k].size &&
                    p->align == tk[k].align;
        c->twin_prev[tk[k].i] = same ? (int32_t)p->i : -1;
    }
    /* Overlap lists: a sweep in start order; each buffer is compared with those still alive. */
    size_t cap = 0, cnt = 0;
    uint32_t *pairs = NULL; /* (a, b) pairs, then counted into CSR */
    uint32_t *alive = gm_malloc(n * sizeof *alive);
    if (!alive) goto oom;
    size_t na = 0;
    for (size_t k = 0; k < n; k++) {
        uint32_t i = tk[k].i; /* tk is sorted by lower */
        size_t w = 0;
        for (size_t a = 0; a < na; a++) {
            uint32_t j = alive[a];
            if (b[j].upper <= b[i].lower) continue; /* dead for good: later starts are later */
            alive[w++] = j;
            if (cnt + 2 > cap && gm_grow((void **)&pairs, sizeof *pairs, cnt + 2, &cap)) {
                gm_free(alive);
                gm_free(pairs);
                goto oom;
            }
            pairs[cnt++] = i;
            pairs[cnt++] = j;
        }
        na = w;
        alive[na++] = i;
    }
    gm_free(alive);
    for (size_t p = 0; p < cnt; p += 2) {
        c->adj_at[pairs[p] + 1]++;
        c->adj_at[pairs[p + 1] + 1]++;
    }
    for (size_t i = 0; i < n; i++) c->adj_at[i + 1] += c->adj_at[i];
    c->adj = gm_malloc((cnt + 1) * sizeof *c->adj);
    uint32_t *fill = gm_malloc((n + 1) * sizeof *fill);
    if (!c->adj || !fill) {
        gm_free(pairs);
        gm_free(fill);
        goto oom;
    }
    memcpy(fill, c->adj_at, n * sizeof *fill);
    for (size_t p = 0; p < cnt; p += 2) {
        c->adj[fill[pairs[p]]++] = pairs[p + 1];
        c->adj[fill[pairs[p + 1]]++] = pairs[p];
    }
    gm_free(fill);
    gm_free(pairs);
    gm_free(t);
    gm_free(tk);
    return GM_OK;
oom:
    gm_free(t);
    gm_free(tk);
    ctx_free(c);
    return gm_error_set(err, GM_ERR_NOMEM, "dsa search: out of memory");
}

/* One decision: a packing of height <= H? Runs the candidate orders in turn with node caps that
 * double each round (restarts: a bad early choice in one order is often no problem in another).
 * A run that ends without hitting its cap has refuted H. On R_FOUND the offsets are in c->pos. */
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

static result decide(ctx *c, const int64_t *rem0, int64_t H, double deadline)
{
    c->H = H;
    c->deadline = deadline;
    for (size_t s = 0; s < c->K; s++)
        if (rem0[s] > H) return R_NONE;
    for (uint64_t run = 0;; run++) {
        memset(c->floor, 0, c->K * sizeof *c->floor);
        memcpy(c->rem, rem0, c->K * sizeof *c->rem);
        memset(c->mf, 0, c->n * sizeof *c->mf);
        memset(c->placed, 0, c->n);
        c->trail_n = c->cs_n = 0;
        /* The first 12 runs: each order plainly; then the orders with shuffling. */
        c->key = (int)(run % 6);
        c->latest = (run / 6) % 2;
        c->rng = run < 12 ? 0 : 0x9E3779B97F4A7C15ull * (run + 1) + (uint64_t)H;
        c->run_end = c->nodes + 1024 * luby(run);
        result r = dfs(c, c->n);
        if (r != R_STOP) return r;
        if (c->stop) return R_STOP;
    }
}

gm_status gm_dsa_search(gm_dsa_buffer *b, size_t n, const gm_dsa_search_opts *opts,
                        int64_t *height, bool *optimal, gm_error *err)
{
    double t0 = now_s();
    double budget = opts ? opts->budget_s : 0;
    uint64_t limit = opts ? opts->node_limit : 0;
    if (budget <= 0 && limit == 0) limit = GM_DSA_DEFAULT_NODES; /* never an unbounded search */
    double deadline = budget > 0 ? t0 + budget : 0;
    *height = 0;
    *optimal = true;
    if (n == 0) return GM_OK;
    for (size_t i = 0; i < n; i++)
        if (b[i].size <= 0 || b[i].upper <= b[i].lower || b[i].align <= 0)
            return gm_error_set(err, GM_ERR_INPUT, "dsa search: buffer %lld has an empty lifetime, "
                                "size or alignment", (long long)b[i].id);
    int64_t lb = gm_dsa_lower_bound(b, n);
    /* The greedy answers: the best of the orders is the starting upper bound. */
    int64_t *best = gm_malloc(n * sizeof *best);
    if (!best) return gm_error_set(err, GM_ERR_NOMEM, "dsa search: out of memory");
    int64_t ub = INT64_MAX;
    /* The size order first (never worse than gm_dsa_best_fit, and an answer only changes on a
     * strict improvement, so plans stay stable), then the peak-first orders (dsa_peak.c), which
     * on real traces often reach LOAD. On huge instances without a clock budget the last three
     * plain orders are skipped (the planner's few seconds). */
    static const int steps[] = {GM_DSA_ORDER_SIZE, 100 + GM_DSA_PEAK_END, 100 + GM_DSA_PEAK_LENGTH,
                                100 + GM_DSA_PEAK_START, GM_DSA_ORDER_AREA, GM_DSA_ORDER_LENGTH,
                                GM_DSA_ORDER_SIZE_LENGTH};
    size_t nsteps = sizeof steps / sizeof *steps;
    if (deadline <= 0 && n > 50000) nsteps = 4;
    for (size_t k = 0; k < nsteps; k++) {
        int o = steps[k];
        double t_order = now_s();
        int64_t h;
        gm_status st = o >= 100 ? gm_dsa_best_fit_peak(b, n, o - 100, &h, err)
                                : gm_dsa_best_fit_order(b, n, (gm_dsa_order)o, &h, err);
        if (st != GM_OK) {
            gm_free(best);
            return st;
        }
        if (h < ub) {
            ub = h;
            for (size_t i = 0; i < n; i++) best[i] = b[i].offset;
        }
        /* Big traces: another order only when it should end within the budget. */
        double t_now = now_s();
        if (ub == lb || (deadline > 0 && t_now + (t_now - t_order) > deadline)) break;
    }
    /* With alignment, LOAD may be unreachable even in principle; the proof then needs search. */
    bool proven = ub == lb;
    if (!proven && n <= SEARCH_MAX_N) {
        ctx c;
        gm_status st = ctx_init(&c, b, n, err);
        if (st != GM_OK) {
            gm_free(best);
            return st;
        }
        int64_t *rem0 = gm_malloc((c.K + 1) * sizeof *rem0);
        if (!rem0) {
            ctx_free(&c);
            gm_free(best);
            return gm_error_set(err, GM_ERR_NOMEM, "dsa search: out of memory");
        }
        memcpy(rem0, c.rem, c.K * sizeof *rem0);
        /* lo: every height below lo is refuted (or timed out). First LOAD itself (reached on most
         * real and benchmark instances), then bisection on [lo, ub). */
        int64_t lo = lb;
        bool first = true;
        while (lo < ub && !c.oom) {
            int64_t H = first ? lo : lo + (ub - lo) / 2;
            /* LOAD gets 80% of the budget; each later height half of what is left. */
            double dl = deadline;
            if (first) {
                if (deadline > 0) dl = t0 + (deadline - t0) * 0.8;
                c.node_limit = limit ? limit / 5 * 4 : 0;
            } else {
                if (deadline > 0) {
                    double left = deadline - now_s();
                    if (left <= 0) break;
                    dl = now_s() + left / 2;
                }
                if (limit) {
                    if (c.nodes >= limit) break;
                    c.node_limit = c.nodes + (limit - c.nodes) / 2 + 1;
                }
            }
            first = false;
            c.stop = false;
            result r = decide(&c, rem0, H, dl);
            if (r == R_FOUND) {
                int64_t h = 0;
                for (size_t i = 0; i < n; i++) {
                    best[i] = c.pos[i];
                    if (c.pos[i] + b[i].size > h) h = c.pos[i] + b[i].size;
                }
                ub = h;
            } else {
                lo = H + 1;
            }
            if (deadline > 0 && now_s() > deadline) break;
        }
        /* refutations are not proofs here (see the top of the file) */
        proven = ub == lb;
        bool oom = c.oom;
        gm_free(rem0);
        ctx_free(&c);
        if (oom) {
            gm_free(best);
            return gm_error_set(err, GM_ERR_NOMEM, "dsa search: out of memory");
        }
    }
    for (size_t i = 0; i < n; i++) b[i].offset = best[i];
    gm_free(best);
    *height = ub;
    *optimal = proven;
    return GM_OK;
}
