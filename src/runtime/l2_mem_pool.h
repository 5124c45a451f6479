/*
 * l2_mem_pool.h — GE's L2MemPool (reference §6.8): one stream's own span cache, a
 * ScalableAllocator whose "device" is the L1 level (any memory source; in the runtime the
 * multi-stream L1 adaptor of ms_l2_allocator.c over the caching allocator).
 *
 * Memory leaves this pool for L1 only after the stream has been synchronized: L1 may hand it to
 * another stream, which must not see it before this stream's last use has run on the device.
 */
#ifndef GM_L2_MEM_POOL_H
#define GM_L2_MEM_POOL_H

#include <stdbool.h>

#include "runtime/mem_source.h"
#include "runtime/scalable_allocator.h"

typedef struct gm_l2_mem_pool gm_l2_mem_pool;

/* `sync` (may be NULL) synchronizes `stream`. NULL when out of memory. */
gm_l2_mem_pool *gm_l2_pool_create(int stream, const gm_mem_source *l1, const gm_scalable_config *cfg, gm_sync_fn sync,
                                  void *sync_ctx);
void gm_l2_pool_destroy(gm_l2_mem_pool *p);

/* A span of at least size bytes; on failure synchronizes the stream, recycles, retries once.
 * Blocks up to the config's small_block_max are carved out of shared pages (subpage.h). */
gm_span *gm_l2_pool_malloc(gm_l2_mem_pool *p, size_t size);
/* The same from what the pool holds only (no sharing, no L1); NULL when it cannot. */
gm_span *gm_l2_pool_malloc_cached(gm_l2_mem_pool *p, size_t size);
void gm_l2_pool_free(gm_l2_mem_pool *p, gm_span *s);
/* Hands the spare carved page back, synchronizes the stream (when there is anything idle) and
 * returns idle chunks to L1. */
size_t gm_l2_pool_recycle(gm_l2_mem_pool *p);
/* GE's SetL1Allocator: idle memory goes back to the old L1 now, new memory comes from l1;
 * spans still out return to the L1 they came from. */
void gm_l2_pool_set_l1(gm_l2_mem_pool *p, const gm_mem_source *l1);

/* Cross-stream sharing (not GE's; ms_l2_allocator.c decides when it is safe): before fetching from
 * L1 a pool asks `share` to move another pool's idle chunk of at least size bytes into it. */
typedef bool (*gm_l2_share_fn)(void *ctx, size_t size);
void gm_l2_pool_set_sharing(gm_l2_mem_pool *p, gm_l2_share_fn share, void *ctx);
/* Chunks that become wholly idle from now on carry the value of *stamp then (the stream's event
 * epoch, which the multi-stream group bumps at every send). */
void gm_l2_pool_set_stamp(gm_l2_mem_pool *p, const uint64_t *stamp);
/* Moves one wholly idle chunk of at least size bytes, stamped below stamp_below, from p into
 * `to`; false when p has none. */
bool gm_l2_pool_give_idle(gm_l2_mem_pool *p, size_t size, uint64_t stamp_below, gm_l2_mem_pool *to);
/* The bytes of the chunk gm_l2_pool_give_idle would move, or 0. */
size_t gm_l2_pool_idle_fit(const gm_l2_mem_pool *p, size_t size, uint64_t stamp_below);

size_t gm_l2_pool_span_size(const gm_l2_mem_pool *p, const gm_span *s);
/* Bytes a malloc of size would take here (whole units when carved, else whole pages). */
size_t gm_l2_pool_block_bytes(const gm_l2_mem_pool *p, size_t size);
/* Carved pages held (the spare empty one included). */
size_t gm_l2_pool_small_pages(const gm_l2_mem_pool *p);
const gm_scalable_stats *gm_l2_pool_stats(const gm_l2_mem_pool *p);
size_t gm_l2_pool_syncs(const gm_l2_mem_pool *p);

#endif
