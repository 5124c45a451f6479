/*
 * ge_internal.h — what the GE strategy files share: memory blocks (GE's MemoryBlock) built by
 * level-1 reuse (ge_block_reuse.c) and nested by level-2 reuse (ge_life_reuse.c).
 */
#ifndef GM_PLAN_GE_INTERNAL_H
#define GM_PLAN_GE_INTERNAL_H

#include "plan/ge_strategy.h"

#define GE_MAX_DEPTH 100 /* kMaxDepthNum: deepest child nesting */

/* A block holds, in time order, the items that took it over one after another at level 1
 * (perm[istart .. istart + icount)); their lifetimes are pairwise disjoint. */
typedef struct ge_block {
    int64_t size;      /* block size: align(real) or align(range ceiling); level-1 key, level-2 room */
    int64_t real;      /* largest real size of its own items (Resize) */
    int64_t begin;     /* own items' span [begin, end) (GE: life begin .. life end + 1) */
    int64_t end;
    int64_t stream;    /* creator's stream; every holder has it */
    int64_t child_off; /* room already given to children (pre-resize sizes) */
    int64_t submax;    /* upper bound on the room for a child anywhere in this subtree */
    int64_t fsize;     /* after Resize: final size */
    int64_t off;       /* after Resize: absolute offset in the region */
    uint64_t nodes;    /* sum of the items' node counts */
    size_t istart, icount;
    int32_t batch;
    int32_t parent, first_child, last_child, next_sibling; /* -1: none */
    int32_t depth;     /* 0 at top level */
    int32_t min_parent; /* level 2: clones are offered only to parents from this rank on */
    int32_t sid;        /* level 2: dense stream id */
    bool continuous;
    bool l2ok; /* may take part in level-2 reuse (GE: reusable block) */
} ge_block;

typedef struct ge_work {
    gm_ge_item *items;
    size_t n;
    int64_t align;
    ge_block *b; /* capacity n: clones only split existing blocks */
    size_t nb;
    uint32_t *perm; /* item indices, grouped per block */
} ge_work;

/* Level-2 ordering (CompareLifeInterval): < 0 when block x comes before block y. */
int gm_ge_compare_life(const ge_work *w, int32_t x, int32_t y, bool ascending);
/* A block's own-item facts from its items: span, largest real size, node count. */
void gm_ge_block_facts(const ge_work *w, ge_block *b);

/* Level 2 (ReuseBlocksByLifeTime): nests blocks as children of earlier blocks whose lifetimes they
 * do not overlap; may split blocks (CanIntervalLifeReuse). */
gm_status gm_ge_life_reuse(ge_work *w, bool ascending, bool memory_priority, gm_error *err);

#endif
