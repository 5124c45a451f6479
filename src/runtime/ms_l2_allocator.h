/*
 * ms_l2_allocator.h — GE's MultiStreamL2Allocator (reference §6.3): one per stream, in a group
 * of n streams (n <= 64) sharing one L1 memory source.
 *
 * Malloc takes a block from the stream's own L2MemPool, else borrows one parked here by another
 * stream's block (BorrowAllocator). Beyond GE (each marked in ms_l2_allocator.c): a parked block
 * that fits is lent first; where the own pool would have to take memory from L1, it first takes a
 * wholly idle chunk of another stream's pool that the event epochs prove safe here, then a longer
 * parked block, then (with gm_ms_config.order) waits for the other streams' unheard releases
 * through internal dependencies (ms_internal_deps.c), those still in flight in the graph's events
 * too; blocks up to half a page are carved out of shared pages (subpage.h).
 * Free on stream S, after S drops its reference:
 *   - S sees nobody using it and S is the birth stream  -> birth recycle (back to the pool);
 *   - S sees nobody using it, born elsewhere            -> borrow recycle (parked on S);
 *   - others may still use it                           -> local recycle (queued for events).
 *
 * Everything here is single-threaded per group (the executor's kKernelUseMemory critical
 * section); the L1 below is the thread-safe level.
 */
#ifndef GM_MS_L2_ALLOCATOR_H
#define GM_MS_L2_ALLOCATOR_H

#include "graphmem/graph.h"
#include "runtime/mem_source.h"
#include "runtime/ms_learned_plan.h"
#include "runtime/ms_mem_block.h"
#include "runtime/scalable_allocator.h"

typedef struct gm_ms_group gm_ms_group;

typedef struct gm_ms_config {
    uint32_t streams;       /* 1..64 */
    gm_scalable_config l2;  /* each stream's L2 pool */
    gm_sync_fn sync;        /* synchronizes one stream (may be NULL) */
    void *sync_ctx;
    /* Not GE's: where a stream's pool would take new memory from L1 while other streams hold
     * releases it has not heard of, the group makes it wait for them (an internal event, as
     * cudaMallocAsync's "internal dependencies"), and order(ctx, from, to) must make every later
     * work of stream `to` run after everything enqueued on `from` so far (an event recorded on
     * from and waited on to), returning 0, or -1 when it could not (then nothing is reused).
     * NULL: GE's behaviour, no dependency is ever added. */
    int (*order)(void *ctx, uint32_t from, uint32_t to);
    void *order_ctx;
    /* Not GE's: before L1 would hold more device memory than it ever held (an L1 with
     * alloc_within, e.g. the expandable caching allocator), every pool holding idle memory gives
     * it back: GE's ladder for a failed allocation (synchronize each stream, recycle, retry), run
     * before growing instead of after failing; a synchronize of each such stream every time
     * (counted in growth_ladders). A pool's recycle then also gives back the idle parts of its
     * chunks (an L1 with free_part), and LastWaitEvents leaves the pools their idle memory
     * instead of recycling them all (GE's synchronize of every stream every iteration).
     * false: GE's behaviour. */
    bool recycle_before_growth;
    /* With recycle_before_growth: L1 maps device memory in granules coarser than the pools'
     * pages (a GPU's 2 MiB against 4 KiB). L1 cannot unmap the pieces of a granule that one
     * iteration's releases leave idle beside occupied pages, so across iterations such pieces
     * strand granule after granule (resnet18 on one stream: 52 MiB after the first iteration, 66
     * MiB after the sixth). Then LastWaitEvents gives the pools' idle memory back after all, as
     * in GE's mode, and every iteration starts from memory merged whole again: the device holds
     * what the first iteration needed. */
    bool l1_maps_granules;
    /* Not GE's: record the first iteration (up to LastWaitEvents), pack its blocks into one
     * region, and answer the next iterations from that plan while they repeat it
     * (ms_learned_plan.h). Internal dependencies (order) let it pack tighter. false: none. */
    bool learn_plan;
} gm_ms_config;

typedef struct gm_ms_stats {
    size_t allocated, peak_allocated;  /* bytes in blocks between Malloc and birth recycle */
    size_t mallocs, borrow_hits, malloc_failures;
    size_t birth_recycles, borrow_recycles, local_recycles;
    size_t events_sent, events_waited, messages_sent, stale_messages, returned_home;
    size_t leaked_blocks;              /* force-birth-recycled by the destructor */
    size_t sync_violations;            /* SyncLocalRecycleStatus sanity failures (a bug if > 0) */
    size_t lost_messages;              /* local recycles not queued for lack of memory */
    size_t shared_chunks;              /* idle chunks one pool took from another (not GE's) */
    size_t internal_events;            /* dependencies added so that memory could be reused (not GE's) */
    size_t growth_ladders;             /* recycles run instead of growing L1 (recycle_before_growth) */
    size_t settles;                    /* every stream synchronized and the releases settled before L1
                                          grew (recycle_before_growth, not GE's) */
    size_t settles_in_vain;            /* of which L1 had to grow all the same */
    size_t delivered_early;            /* messages and home-going blocks of payloads in flight that an
                                          internal event delivered before their own wait (not GE's) */
} gm_ms_stats;

gm_status gm_ms_group_create(const gm_ms_config *cfg, const gm_mem_source *l1, gm_ms_group **out, gm_error *err);
/* Returns borrowed blocks home, force-birth-recycles leaked blocks (counted, one warning), and
 * gives all memory back to L1. Returns the number of leaked blocks. */
size_t gm_ms_group_destroy(gm_ms_group *g);
gm_ms_l2_allocator *gm_ms_group_allocator(gm_ms_group *g, uint32_t stream);
uint32_t gm_ms_group_streams(const gm_ms_group *g);
/* The learned plan's counters (all zero without learn_plan). */
void gm_ms_group_plan_stats(const gm_ms_group *g, gm_ms_plan_stats *out);
/* Stats of the group; `reserved` = bytes the L2 pools hold from L1 (occupied + idle). With a
 * learned plan on, the calls it answered this iteration are counted from its cursors: a walk of
 * the iteration's calls (gm_ms_group_reserved alone does not walk). */
void gm_ms_group_stats(const gm_ms_group *g, gm_ms_stats *out, size_t *reserved);
/* Bytes the L2 pools hold from L1 (occupied + idle). */
size_t gm_ms_group_reserved(const gm_ms_group *g);

uint32_t gm_ms_l2_stream(const gm_ms_l2_allocator *a);
/* A block of at least size bytes referenced once by this stream, or NULL. */
gm_ms_block *gm_ms_l2_malloc(gm_ms_l2_allocator *a, size_t size);
/* FreeAt: this allocator's stream releases one reference of b (gm_ms_block_free calls it). */
void gm_ms_l2_free_at(gm_ms_l2_allocator *a, gm_ms_block *b);
/* GetAndClearBorrowBlocks(dst): the blocks born on dst parked here, removed (list by bt_next). */
gm_ms_block *gm_ms_l2_get_and_clear_borrow_blocks(gm_ms_l2_allocator *a, uint32_t dst);
size_t gm_ms_l2_borrow_count(const gm_ms_l2_allocator *a, uint32_t birth_stream);
/* BirthRecycle: b's memory and wrapper go back to a, its birth allocator. */
void gm_ms_l2_birth_recycle(gm_ms_l2_allocator *a, gm_ms_block *b);
/* The local-recycle list (the events read it). */
gm_version_blocks *gm_ms_l2_local_recycle_blocks(gm_ms_l2_allocator *a);
/* SetL1Allocator: this stream's pool takes new memory from l1. */
gm_status gm_ms_l2_set_l1(gm_ms_l2_allocator *a, const gm_mem_source *l1, gm_error *err);
/* RecycleFreeMem: synchronize the stream and give the pool's idle memory back to L1. */
size_t gm_ms_l2_recycle_free_mem(gm_ms_l2_allocator *a);
const gm_scalable_stats *gm_ms_l2_pool_stats(const gm_ms_l2_allocator *a);

#endif
