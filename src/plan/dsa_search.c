/*
 * dsa_search.c — the near-optimal packer for the offset problem.
 *
 * 1. Best fit in several greedy orders (peak-first ones from dsa_peak.c, then the plain ones)
 *    gives a first answer (the upper bound).
 *    A packing at LOAD ends the search at once: it is optimal (the planner's 172,000-buffer
 *    region reaches it with the first order).
 * 2. A branch-and-bound search in the spirit of MiniMalloc then asks "is there a packing of height
 *    <= H?", first for H = LOAD, then bisecting between what is refuted and the best packing
 *    found.
 * 3. Instances too big for that (over SEARCH_MAX_N buffers) get the branch and bound on windows
 *    of time around the load peak instead, the rest packed around them (dsa_window.c).
 *
 * The decision is dsa_bb.c's branch-and-bound (skyline filled bottom-up, MiniMalloc's unallocated
 * floor and dynamic decomposition, restarts over candidate orders). LOAD gets half the budget,
 * then each bisection step half of what is left. A decision that runs out of budget counts as
 * refuted for the bisection, so *optimal is reported only when the height equals LOAD.
 *
 * Determinism: one thread, fixed tie-breaks, seeded shuffles; node_limit is the reproducible
 * budget. The wall-clock budget is a safety net whose expiry point can vary between runs.
 */
#include <stdlib.h>
#include <string.h>

#include "graphmem/dsa.h"
#include "plan/dsa_internal.h"
#include "util/alloc.h"
#include "util/clock.h"

/* Beyond this many buffers the search's per-node O(n) candidate scan and the overlap lists get
 * too costly; big traces get windows around the peak instead. */
#define SEARCH_MAX_N 4000
/* The node budget when the caller gives neither nodes nor seconds (a few seconds of search). */
#define GM_DSA_DEFAULT_NODES 4000000u
/* Within 1/NEAR_LOAD (0.01%) of LOAD, a huge unit without a clock budget keeps its first
 * answer (see the order loop). */
#define NEAR_LOAD 10000
/* Windows around the peak tried on traces too big for the search (dsa_window.c). */
#define WINDOWS 16

/* Keeps the packing at the lowest height found in best / *ub. */
static void take(const gm_dsa_bb *bb, const gm_dsa_buffer *b, size_t n, int64_t *ub, int64_t *best)
{
    const int64_t *pos = gm_dsa_bb_offsets(bb);
    int64_t h = 0;
    for (size_t i = 0; i < n; i++) {
        best[i] = pos[i];
        if (pos[i] + b[i].size > h) h = pos[i] + b[i].size;
    }
    *ub = h;
}

/* Lowers *ub toward lb by decisions. Returns -2 on out-of-memory, else 0. */
static int tighten(gm_dsa_bb *bb, const gm_dsa_buffer *b, size_t n, int64_t lb, int64_t *ub,
                   int64_t *best, uint64_t limit, double t0, double deadline)
{
    int64_t lo = lb;
    bool first = true;
    while (lo < *ub) {
        int64_t H = first ? lo : lo + (*ub - lo) / 2;
        double dl = deadline;
        uint64_t cap = UINT64_MAX, nodes = gm_dsa_bb_nodes(bb);
        /* LOAD gets half the budget (every exact challenging instance reaches it within a
         * twentieth of that); each later height half of what is left, which lets instances
         * whose LOAD is out of reach (D, J) come down from the greedy height. */
        if (first) {
            if (deadline > 0) dl = t0 + (deadline - t0) * 0.5;
            if (limit) cap = limit / 2;
        } else {
            if (deadline > 0) {
                double left = deadline - gm_clock_s();
                if (left <= 0) break;
                dl = gm_clock_s() + left / 2;
            }
            if (limit) {
                if (nodes >= limit) break;
                cap = nodes + (limit - nodes) / 2 + 1;
            }
        }
        first = false;
        uint64_t run = 0;
        int r = gm_dsa_bb_decide(bb, H, &run, cap, dl);
        if (r == -2) return -2;
        if (r == 1) take(bb, b, n, ub, best);
        else lo = H + 1;
        if (deadline > 0 && gm_clock_s() > deadline) break;
    }
    return 0;
}

gm_status gm_dsa_search(gm_dsa_buffer *b, size_t n, const gm_dsa_search_opts *opts,
                        int64_t *height, bool *optimal, gm_error *err)
{
    return gm_dsa_search_from(b, n, opts, NULL, 0, height, optimal, err);
}

gm_status gm_dsa_search_from(gm_dsa_buffer *b, size_t n, const gm_dsa_search_opts *opts,
                             const int64_t *size_order, int64_t size_order_height, int64_t *height,
                             bool *optimal, gm_error *err)
{
    double t0 = gm_clock_s();
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
     * on real traces often reach LOAD: the load peaks' (Y_1), then the peak column's (S_1; only
     * on instances too big for the branch and bound, whose start it would move). On huge
     * instances without a clock budget only those three run (the planner's call). */
    static const int steps[] = {GM_DSA_ORDER_SIZE, 100 + GM_DSA_PEAK_END, 100 + GM_DSA_PEAK_COLUMN,
                                100 + GM_DSA_PEAK_LENGTH, 100 + GM_DSA_PEAK_START, GM_DSA_ORDER_AREA,
                                GM_DSA_ORDER_LENGTH, GM_DSA_ORDER_SIZE_LENGTH};
    size_t nsteps = sizeof steps / sizeof *steps;
    if (deadline <= 0 && n > 50000) nsteps = 3;
    for (size_t k = 0; k < nsteps; k++) {
        int o = steps[k];
        if (o == 100 + GM_DSA_PEAK_COLUMN && n <= SEARCH_MAX_N) continue;
        double t_order = gm_clock_s();
        int64_t h;
        gm_status st = GM_OK;
        if (o == GM_DSA_ORDER_SIZE && size_order) {
            for (size_t i = 0; i < n; i++) b[i].offset = size_order[i];
            h = size_order_height;
        } else {
            st = o >= 100 ? gm_dsa_best_fit_peak(b, n, o - 100, &h, err)
                          : gm_dsa_best_fit_order(b, n, (gm_dsa_order)o, &h, err);
        }
        if (st != GM_OK) {
            gm_free(best);
            return st;
        }
        if (h < ub) {
            ub = h;
            for (size_t i = 0; i < n; i++) best[i] = b[i].offset;
        }
        /* Big traces: another order only when it should end within the budget. */
        double t_now = gm_clock_s();
        if (ub == lb || (deadline > 0 && t_now + (t_now - t_order) > deadline)) break;
        /* Huge units without a clock budget: a first answer within NEAR_LOAD of LOAD ends the
         * search. Each further order is a whole best fit (1.6-2.7 s at 750,000 buffers) that
         * could gain at most that gap; at a million nodes the size order ends 0.0008% above
         * LOAD and the peak orders 0.008% and 0.02% above (BENCHMARKS, issue 28). */
        if (deadline <= 0 && n > 50000 && ub - lb <= lb / NEAR_LOAD) break;
    }
    /* With alignment, LOAD may be unreachable even in principle; the proof then needs search. */
    bool proven = ub == lb;
    if (!proven && n <= SEARCH_MAX_N) {
        gm_dsa_bb *bb;
        gm_status st = gm_dsa_bb_new(b, n, &bb, err);
        if (st != GM_OK) {
            gm_free(best);
            return st;
        }
        int rc = tighten(bb, b, n, lb, &ub, best, limit, t0, deadline);
        gm_dsa_bb_free(bb);
        if (rc == -2) {
            gm_free(best);
            return gm_error_set(err, GM_ERR_NOMEM, "dsa search: out of memory");
        }
        proven = ub == lb; /* refutations are not reported as proofs (see tighten) */
    }
    /* Too big for the search whole: exact packing of windows around the peak (not on the
     * planner's huge regions without a clock budget, where each window costs a best fit). */
    if (!proven && n > SEARCH_MAX_N && (deadline > 0 || n <= 50000)) {
        gm_status st = gm_dsa_window_improve(b, n, lb, best, &ub, limit, WINDOWS, deadline, err);
        if (st != GM_OK) {
            gm_free(best);
            return st;
        }
        proven = ub == lb;
    }
    for (size_t i = 0; i < n; i++) b[i].offset = best[i];
    gm_free(best);
    *height = ub;
    *optimal = proven;
    return GM_OK;
}
