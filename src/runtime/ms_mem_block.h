/*
 * ms_mem_block.h — GE's MultiStreamMemBlock (reference §6.2): an L2 pool block as seen by
 * several streams.
 *
 * It carries a version (bumped whenever the block is recycled globally, which turns every
 * message still queued about it stale), its birth allocator (the stream whose pool owns the
 * memory), an occupy MIF (each stream's view of who still uses it) and per-stream reference
 * counts. Free(stream) is decided by the allocator of that stream (ms_l2_allocator.h).
 */
#ifndef GM_MS_MEM_BLOCK_H
#define GM_MS_MEM_BLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "graphmem/graph.h"
#include "runtime/mif.h"
#include "runtime/scalable_allocator.h"
#include "runtime/version_blocks.h"

typedef struct gm_ms_l2_allocator gm_ms_l2_allocator;

/* GM_MS_PLANNED: a block of a learned plan (ms_learned_plan.h), not GE's: its place in the plan's
 * region is fixed, and none of the multi-stream bookkeeping below applies to it. */
typedef enum gm_ms_alloc_type { GM_MS_NORM = 0, GM_MS_BORROW, GM_MS_PLANNED } gm_ms_alloc_type;

typedef struct gm_ms_block gm_ms_block;
struct gm_ms_block {
    gm_versioned v;           /* first: VersionBlocks reads the current version through it */
    gm_span *mem;             /* the birth pool's block; NULL once cleared (birth recycled) */
    /* The learned plan's fields, in the wrapper's first cache line with mem: a call on the plan
     * reads nothing else of it. */
    uint32_t plan_slot, plan_iter; /* its slot in a learned plan, and the iteration it was recorded in */
    struct gm_ms_cursors *cursors; /* a planned block's group's plan cursors (type GM_MS_PLANNED), else
                                      NULL: in one load, for the fast paths (ms_fast_path.h) */
    size_t plan_req;          /* a planned block's size as asked for when recorded (its malloc's check) */
    size_t size;              /* bytes of mem (whole pages) */
    gm_ms_l2_allocator *birth;
    uint32_t birth_stream;
    gm_ms_alloc_type type;
    gm_mif mif;
    /* birth allocator's list of blocks out (not birth-recycled): the destructor's leak sweep */
    gm_ms_block *live_prev, *live_next;
    /* borrow allocator membership: its size bucket and its birth-stream list */
    gm_ms_block *bs_prev, *bs_next, *bt_prev, *bt_next;
    bool in_bucket;
    gm_ms_block *pool_next; /* the wrapper free list */
    uint32_t *counts;       /* per-stream occupy counts (in the wrapper's tail) */
    uint64_t gen;           /* ticks at every NewAccessStream */
    uint64_t acq_gen[];     /* per stream: gen of its latest NewAccessStream */
};

/* Entries of a wrapper's per-stream arrays for n streams: never fewer than GM_MIF_INLINE, so that
 * the malloc path clears them with a fixed number of stores (a loop over n becomes memset calls,
 * several per malloc). */
static inline uint32_t gm_ms_block_slots(uint32_t n) { return n < GM_MIF_INLINE ? GM_MIF_INLINE : n; }
/* Bytes of a wrapper for n streams (counts and acq_gen live in its tail). */
static inline size_t gm_ms_block_bytes(uint32_t n)
{
    return sizeof(gm_ms_block) + gm_ms_block_slots(n) * (sizeof(uint64_t) + sizeof(uint32_t));
}
/* Zeroes b's per-stream counts (and acq_gen too when gens) for n streams. */
static inline void gm_ms_block_clear_slots(gm_ms_block *b, uint32_t n, bool gens)
{
    if (n <= GM_MIF_INLINE) {
        for (uint32_t s = 0; s < GM_MIF_INLINE; s++) b->counts[s] = 0;
        if (gens)
            for (uint32_t s = 0; s < GM_MIF_INLINE; s++) b->acq_gen[s] = 0;
        return;
    }
    memset(b->counts, 0, sizeof *b->counts * n);
    if (gens) memset(b->acq_gen, 0, sizeof *b->acq_gen * n);
}

/* A wrapper for n streams, zeroed, its arrays in its tail; NULL when out of memory. */
gm_ms_block *gm_ms_block_new(uint32_t n);
/* ReInit: requires the previous memory cleared (else GE's error "origin mem_block is not
 * cleared, this may cased memory leaks"); resets the MIF and counts, then NewAccessStream(birth,
 * birth). */
gm_status gm_ms_block_reinit(gm_ms_block *b, gm_ms_l2_allocator *birth, gm_span *mem, size_t size,
                             gm_ms_alloc_type type, gm_error *err);
/* NewAccessStream(src, dst): dst takes a reference; every observer now believes dst uses it. */
void gm_ms_block_new_access_stream(gm_ms_block *b, uint32_t src, uint32_t dst);
/* Free(stream): the stream releases one reference; its allocator picks the recycle mode. */
void gm_ms_block_free(gm_ms_block *b, uint32_t stream);
/* SyncLocalRecycleStatus(src, dst), on dst's WaitEvent: dst learns src's releases; when dst's
 * view empties, Free(dst) recycles the block globally. */
void gm_ms_block_sync_local_recycle_status(gm_ms_block *b, uint32_t src, uint32_t dst);
/* The same merge from an event's message: `view` is src's word when the event was sent and `gen`
 * the block's gen then. dst learns only the releases src knew at the send (src's view may have
 * moved on since; the device wait covers nothing src did after its record), and no stream that
 * took the block again after the send is cleared. */
void gm_ms_block_sync_from_message(gm_ms_block *b, uint32_t src, uint32_t dst, uint64_t view, uint64_t gen);
/* SyncAllLocalRecycleStatus(dst): dst learns everything every stream knows (end of execution). */
void gm_ms_block_sync_all_local_recycle_status(gm_ms_block *b, uint32_t dst);

static inline bool gm_ms_block_can_global_recycle(const gm_ms_block *b, uint32_t s) { return !gm_mif_is_any_set(&b->mif, s); }
static inline bool gm_ms_block_is_occupied(const gm_ms_block *b, uint32_t m, uint32_t s) { return gm_mif_is_set(&b->mif, m, s); }
static inline void gm_ms_block_update_local_recycle_mif(gm_ms_block *b, uint32_t s) { gm_mif_clear(&b->mif, s, s); }
static inline void *gm_ms_block_addr(const gm_ms_block *b) { return b->mem ? gm_span_addr(b->mem) : NULL; }
static inline uint32_t gm_ms_block_count(const gm_ms_block *b, uint32_t s) { return b->counts[s]; }
static inline int64_t gm_ms_block_version(const gm_ms_block *b) { return b->v.version; }

#endif
