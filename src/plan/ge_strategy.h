/*
 * ge_strategy.h — GE's static reuse strategies (reference §5.2-5.5), reproduced as packers over one
 * region's items so that graphmem can run them beside its own packer and report the baseline GE
 * users know: "binary-block", "max-block" and the four memory-priority range variants. The caller
 * runs them all (in parallel threads if it likes) and keeps the smallest, as GE does.
 *
 * Internal header (not installed).
 */
#ifndef GM_PLAN_GE_STRATEGY_H
#define GM_PLAN_GE_STRATEGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graphmem/graph.h"

typedef struct gm_ge_item {
    int64_t lower, upper; /* lifetime on the planning order, half-open [lower, upper): lower = producer
                             position, upper-1 = last access. Already made safe for streams by the
                             caller: two items whose lifetimes are disjoint are ordered by
                             happens-before, whatever their streams */
    int64_t size;         /* real bytes (before GE's 512 rounding); > 0 */
    int64_t stream;       /* the producer's stream id (GE's level-1 reuse is same-stream only) */
    int32_t batch;        /* batch label index, -1 none; items of two different non-negative labels
                             are exclusive (may overlap) */
    uint32_t nodes;       /* how many nodes the block serves (CompareLifeInterval's tie-break) */
    bool no_pre_reuse;    /* may not take over an old block (GE kNoPreReuse / no_reuse_mem_flag) */
    bool no_post_reuse;   /* its block is never given away */
    bool continuous;      /* a continuous group taken as one block: never reused at level 1, only
                             whole at level 2 */
    int64_t offset;       /* out: bytes from the region start, aligned to `align` */
} gm_ge_item;

typedef enum gm_ge_strategy {
    GM_GE_BINARY_BLOCK,
    GM_GE_MAX_BLOCK,
    GM_GE_RANGE_BINARY_DESC_FRFR,
    GM_GE_RANGE_BINARY_ASC_FRFR,
    GM_GE_RANGE_BINARY_DESC_FRLR,
    GM_GE_RANGE_BINARY_ASC_FRLR,
    GM_GE_STRATEGY_COUNT
} gm_ge_strategy;

/* GE's names: "binary-block", "max-block", "range-binary-block-descending-frfr", ... */
const char *gm_ge_strategy_name(gm_ge_strategy s);
/* True for the four range variants, which GE runs only in MemoryPriority mode (§5.2). */
bool gm_ge_strategy_needs_memory_priority(gm_ge_strategy s);

/* Assigns offsets to items[0..n) the way GE's assigner `s` would; *height = the region size (GE:
 * the running offset after ResizeMemoryBlocks, aligned). `align` is GE's MEM_ALIGN_SIZE (512).
 * Pure function of its inputs: no globals, thread-safe, deterministic. O(n log n) for level 1;
 * level 2 (binary family) is pairwise over blocks in GE and is pruned here by room and lifetime. */
gm_status gm_ge_assign(gm_ge_item *items, size_t n, gm_ge_strategy s, int64_t align,
                       bool memory_priority, int64_t *height, gm_error *err);

/* BinaryBlockMemAssigner's range ceilings (GetMemoryRanges + PlanRanges) for the given real sizes
 * (> 0): *ceils (ascending, gm_free it) gets *count entries, each the largest size of its range.
 * Exposed for tests. */
gm_status gm_ge_range_ceilings(const int64_t *sizes, size_t n, int64_t align, int64_t **ceils,
                               size_t *count, gm_error *err);

#endif
