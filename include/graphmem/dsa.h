/*
 * dsa.h — the dynamic-storage-allocation (offset assignment) problem on its own: buffers with a
 * half-open lifetime [lower, upper) and a size get byte offsets so that no two buffers alive at
 * one time share an address, and the highest end (the height) is as small as possible.
 *
 * This is the core of static memory planning, exposed separately so that the packers can be
 * measured on public instances (MiniMalloc's and idealloc's CSV files) against published results.
 *
 * The functions work on the caller's array of buffers and keep no state: calls on different
 * arrays may run on different threads at once. Errors follow graph.h (gm_status, gm_error).
 */
#ifndef GRAPHMEM_DSA_H
#define GRAPHMEM_DSA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graphmem/graph.h"

/* One buffer of an instance: what must be placed, and (offset) where it was. */
typedef struct gm_dsa_buffer {
    int64_t id;       /* the CSV's id when it is an integer, else the row number (0-based) */
    int64_t lower;    /* first time step alive */
    int64_t upper;    /* first time step dead again (half-open) */
    int64_t size;     /* bytes, > 0 */
    int64_t align;    /* offset must be a multiple of this; 1 when the CSV has none */
    int64_t offset;   /* the answer; -1 until placed (or the CSV's offset column) */
    const char *name; /* the CSV's id text; NULL for buffers built by hand */
} gm_dsa_buffer;

/* Reads MiniMalloc's CSV: a header naming at least id, lower, upper, size (any order), optional
 * alignment and offset columns. Errors name file:line. *out is freed with gm_dsa_free. */
gm_status gm_dsa_read_csv(const char *path, gm_dsa_buffer **out, size_t *n, gm_error *err);
/* The same from a string already in memory; `what` names it in errors. */
gm_status gm_dsa_parse_csv(const char *text, size_t len, const char *what, gm_dsa_buffer **out,
                           size_t *n, gm_error *err);
/* Frees an array from gm_dsa_read_csv / gm_dsa_parse_csv; NULL is a no-op. */
void gm_dsa_free(gm_dsa_buffer *b);
/* Writes id,lower,upper,size,offset (plus alignment when any buffer has one) to path, safely
 * (a temporary file renamed over it); GM_ERR_IO when it cannot. */
gm_status gm_dsa_write_csv(const char *path, const gm_dsa_buffer *b, size_t n, gm_error *err);
/* The CSV gm_dsa_write_csv writes, as malloc'ed text (free() it). */
gm_status gm_dsa_csv_text(const gm_dsa_buffer *b, size_t n, char **text, size_t *len, gm_error *err);

/* LOAD: the largest total size alive at one time. No packing can be lower. O(n log n). */
int64_t gm_dsa_lower_bound(const gm_dsa_buffer *b, size_t n);

/* Greedy orders for best fit. */
typedef enum gm_dsa_order {
    GM_DSA_ORDER_SIZE = 0,    /* size descending, ties by first use (TFLite's greedy-by-size) */
    GM_DSA_ORDER_AREA,        /* size x lifetime descending */
    GM_DSA_ORDER_LENGTH,      /* lifetime descending */
    GM_DSA_ORDER_SIZE_LENGTH, /* size descending, ties by longer lifetime */
    GM_DSA_ORDER_COUNT
} gm_dsa_order;

/* Best fit in the given order: each buffer goes into the smallest gap, among the buffers already
 * placed that overlap it in time, that holds it (else on top). Sets every offset and *height.
 * The buffers are expected valid (as the CSV reader checks); GM_ERR_NOMEM when out of memory. */
gm_status gm_dsa_best_fit_order(gm_dsa_buffer *b, size_t n, gm_dsa_order order, int64_t *height,
                                gm_error *err);
/* Size-descending best fit (GM_DSA_ORDER_SIZE). */
gm_status gm_dsa_best_fit(gm_dsa_buffer *b, size_t n, int64_t *height, gm_error *err);

/* Limits of gm_dsa_search; opts NULL means both 0. */
typedef struct gm_dsa_search_opts {
    double budget_s;     /* wall-clock budget; <= 0: none. Expiry can make results timing-dependent */
    uint64_t node_limit; /* search nodes; 0: none (4M when budget_s is 0 too). Deterministic */
} gm_dsa_search_opts;

/* The near-optimal packer: best fit over several orders (size, and peak-first orders that stack
 * the buffers alive at the busiest instants first), then up to 4,000 buffers a branch-and-bound
 * search in the spirit of MiniMalloc (buffers placed bottom-up on the lowest skyline section,
 * pruned by section floors, split where no unplaced buffer crosses a section boundary, deciding
 * LOAD first and then bisecting), and above 4,000 buffers an exact packing of time windows
 * around the peak with everything else placed around them by best fit. Stops as soon as a
 * packing reaches LOAD. Sets every offset. *optimal is true when the height equals LOAD (then
 * provably minimal). Deterministic when the node limit, not the clock, ends it. */
gm_status gm_dsa_search(gm_dsa_buffer *b, size_t n, const gm_dsa_search_opts *opts,
                        int64_t *height, bool *optimal, gm_error *err);

/* Independent check: every offset placed and aligned, below height (height < 0: not checked),
 * and no two buffers alive at one time overlapping in address. On failure writes the first
 * violation (with both ids) into why. A time sweep: O(n log n) plus memmoves of the live set. */
bool gm_dsa_check(const gm_dsa_buffer *b, size_t n, int64_t height, char *why, size_t cap);

#endif
