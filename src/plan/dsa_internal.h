/*
 * dsa_internal.h — what the offset-problem packers (src/plan/dsa_*.c) share and nobody else
 * needs: best fit in an explicit order and with buffers already fixed, and in peak-first
 * orders.
 */
#ifndef GRAPHMEM_DSA_INTERNAL_H
#define GRAPHMEM_DSA_INTERNAL_H

#include "graphmem/dsa.h"

/* Best fit over order[0..m): every buffer in b whose index is not in order keeps its offset
 * when fixed[i] is set (an obstacle), and is ignored otherwise. fixed may be NULL (no
 * obstacles). Sets the offsets of the ordered buffers and *height (the top of everything
 * placed or fixed). Lifetimes must be non-empty. */
gm_status gm_dsa_best_fit_seq(gm_dsa_buffer *b, size_t n, const size_t *order, size_t m,
                              const unsigned char *fixed, int64_t *height, gm_error *err);

/* Best fit in a peak-first order (dsa_peak.c): buffers by the highest load over their lifetime,
 * descending, ties by the variant's key; or (GM_DSA_PEAK_COLUMN) the buffers alive at the
 * first instant of LOAD first, earliest start first, then the others by size descending. */
enum { GM_DSA_PEAK_END = 0, GM_DSA_PEAK_LENGTH, GM_DSA_PEAK_START, GM_DSA_PEAK_COLUMN,
       GM_DSA_PEAK_COUNT };
/* gm_dsa_search given the size-order best fit's answer for these buffers (gm_dsa_best_fit's
 * offsets and height), which it would otherwise compute first: the same result. size_order
 * NULL: computed. */
gm_status gm_dsa_search_from(gm_dsa_buffer *b, size_t n, const gm_dsa_search_opts *opts,
                             const int64_t *size_order, int64_t size_order_height, int64_t *height,
                             bool *optimal, gm_error *err);

gm_status gm_dsa_best_fit_peak(gm_dsa_buffer *b, size_t n, int variant, int64_t *height,
                               gm_error *err);
/* The first instant at which the load reaches LOAD (ends before starts at one instant). */
int64_t gm_dsa_peak_time(const gm_dsa_buffer *b, size_t n);

/* The branch and bound on windows of time around the load peak (dsa_window.c): the window's
 * buffers (clipped to it) packed at lb, the others by best fit around them. Tries up to
 * max_windows windows of growing width, each capped at node_limit / max_windows nodes (1M
 * when node_limit is 0) and the deadline (<= 0: none); the first packing below *height goes
 * to best[] (offsets by buffer) and *height. b's offsets are scratch. */
gm_status gm_dsa_window_improve(gm_dsa_buffer *b, size_t n, int64_t lb, int64_t *best,
                                int64_t *height, uint64_t node_limit, size_t max_windows,
                                double deadline, gm_error *err);

/* The branch-and-bound decision behind gm_dsa_search (dsa_bb.c): "is there a packing of height
 * <= H?". The instance is borrowed (not copied) and must outlive the handle. */
typedef struct gm_dsa_bb gm_dsa_bb;
gm_status gm_dsa_bb_new(const gm_dsa_buffer *b, size_t n, gm_dsa_bb **out, gm_error *err);
void gm_dsa_bb_free(gm_dsa_bb *bb);
/* Runs restarts from *run (advanced past the runs that ended at their cap) until one decides,
 * the handle's total node count passes node_cap, or the clock passes deadline (<= 0: none).
 * Returns 1: found (offsets in gm_dsa_bb_offsets), 0: refuted, -1: budget spent (call again
 * with the same *run to go on), -2: out of memory. */
int gm_dsa_bb_decide(gm_dsa_bb *bb, int64_t H, uint64_t *run, uint64_t node_cap, double deadline);
const int64_t *gm_dsa_bb_offsets(const gm_dsa_bb *bb);
uint64_t gm_dsa_bb_nodes(const gm_dsa_bb *bb);

/* A point of a load sweep: at time t the live total changes by delta. */
typedef struct gm_dsa_point {
    int64_t t;
    int64_t delta;
} gm_dsa_point;

/* The highest live total over the points (ends before starts at one time: lifetimes are
 * half-open) and the first time it is reached; *peak_t = -1 when nothing is ever live. pts may
 * be reordered. */
void gm_dsa_peak(gm_dsa_point *pts, size_t n, int64_t *peak_t, int64_t *load);

/* The time axis of b: its lowers and uppers, sorted and without repeats, into t (2n slots);
 * returns how many. */
size_t gm_dsa_time_axis(const gm_dsa_buffer *b, size_t n, int64_t *t);
/* The first index of ts[0..nt) (ascending) holding a value >= v. */
size_t gm_dsa_time_index(const int64_t *ts, size_t nt, int64_t v);

#endif
