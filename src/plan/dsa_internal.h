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
 * descending, ties by the variant's key. */
enum { GM_DSA_PEAK_END = 0, GM_DSA_PEAK_LENGTH, GM_DSA_PEAK_START, GM_DSA_PEAK_COUNT };
gm_status gm_dsa_best_fit_peak(gm_dsa_buffer *b, size_t n, int variant, int64_t *height,
                               gm_error *err);

#endif
