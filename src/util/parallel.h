/*
 * parallel.h — one piece of work split into parts run side by side: part 0 on the calling
 * thread, the others on threads started for the call and joined before it returns. Where a
 * thread cannot start, its part runs on the calling thread afterwards: the work is done either
 * way, only slower. The planner uses it for per-symbol work that shares nothing but read-only
 * inputs, so the result never depends on the number of parts.
 */
#ifndef GM_PARALLEL_H
#define GM_PARALLEL_H

#include <stddef.h>

/* Part `part` of `parts`; returns nothing: a part records its own failure in its context. */
typedef void (*gm_parallel_fn)(void *ctx, unsigned part, unsigned parts);

/* Runs fn(ctx, p, parts) for every p < parts (at most GM_PARALLEL_MAX parts). */
#define GM_PARALLEL_MAX 64
void gm_parallel_run(unsigned parts, gm_parallel_fn fn, void *ctx);

/* threads as the planner's options give it (0: as many as the machine has cores), bounded by
 * GM_PARALLEL_MAX and by `work` (no part without work; at least 1). */
unsigned gm_parallel_parts(unsigned threads, size_t work);

/* Items [0, n) in chunks of `chunk`, every part taking the next chunk when it has finished one,
 * so that items of uneven cost keep the parts busy to the end (a fixed half each left the
 * planner's second core idle for a quarter of describing a million symbols). fn(ctx, part, b, e)
 * does items [b, e); what it computes must not depend on which part runs a chunk. */
typedef void (*gm_parallel_range_fn)(void *ctx, unsigned part, size_t begin, size_t end);
void gm_parallel_chunks(unsigned parts, size_t n, size_t chunk, gm_parallel_range_fn fn, void *ctx);

/* [*begin, *end): part p's share of n items, in order. */
void gm_parallel_share(size_t n, unsigned part, unsigned parts, size_t *begin, size_t *end);

#endif
