/*
 * caching_allocator.h — the L1 level of the runtime allocator (reference §6.8): GE's
 * CachingMemAllocator, a ScalableAllocator page cache over a raw memory source, one per
 * (device id, memory type[, session]) in a process-wide registry.
 *
 * Malloc runs GE's ladder when the cache cannot serve a request: synchronize (callback: wait for
 * the device so that stream-ordered frees have landed), Recycle() the idle chunks back to the
 * source, retry; then the same for every other caching allocator created on this thread, retry.
 *
 * Thread safety (seed constraint 2): every operation, and so every call into the source, runs
 * under the allocator's recursive mutex — recursive because the synchronize callback may free
 * memory back into this same allocator.
 *
 * Lifetime (seed constraints 4 and 5): the memory must go back to the source while the source
 * (the device runtime) still exists, so gm_caching_registry_finalize() returns everything and
 * leaves each allocator as a shell whose every use is an error (GM_ERR_USAGE), never a crash.
 * Session-scoped allocators go away with gm_caching_registry_remove_session().
 */
#ifndef GM_CACHING_ALLOCATOR_H
#define GM_CACHING_ALLOCATOR_H

#include <stdint.h>

#include "graphmem/graph.h" /* gm_status, gm_error */
#include "runtime/mem_source.h"
#include "runtime/scalable_allocator.h"

typedef struct gm_caching_allocator gm_caching_allocator;

typedef struct gm_caching_stats {
    gm_scalable_stats pool; /* occupied = handed out, idle = cached */
    size_t mallocs, frees, failures, syncs, recycles, recycled_bytes;
} gm_caching_stats;

/* ---- one allocator (the registry creates these; tests may use them alone) ------------------ */

/* `sync` may be NULL (nothing to wait for). NULL when out of memory. */
gm_caching_allocator *gm_caching_create(const gm_mem_source *src, const gm_scalable_config *cfg, gm_sync_fn sync,
                                        void *sync_ctx);
/* Returns all memory to the source and frees the allocator. Not for registered ones. */
void gm_caching_destroy(gm_caching_allocator *a);

gm_status gm_caching_malloc(gm_caching_allocator *a, size_t size, void **ptr, gm_error *err);
/* Malloc without the ladder that does not make the allocator hold more device memory than it
 * ever held (gm_scalable_alloc_within); GM_ERR_NOMEM, with no message or log, when it would. */
gm_status gm_caching_malloc_within(gm_caching_allocator *a, size_t size, void **ptr);
gm_status gm_caching_free(gm_caching_allocator *a, void *ptr, gm_error *err);
/* Frees [addr, addr + bytes), whole pages of the block malloc handed out at base (not all of it):
 * the pages below stay allocated at base, those above at addr + bytes. */
gm_status gm_caching_free_part(gm_caching_allocator *a, void *base, void *addr, size_t bytes, gm_error *err);
/* Returns idle chunks to the source; the bytes returned (0 after finalize). */
size_t gm_caching_recycle(gm_caching_allocator *a);
void gm_caching_get_stats(gm_caching_allocator *a, gm_caching_stats *out);
/* This allocator as a memory source (for the L2 pools): alloc = malloc, free = free,
 * alloc_within = malloc_within, free_part = free_part, trim = recycle. */
gm_mem_source gm_caching_as_source(gm_caching_allocator *a);

/* ---- the registry ------------------------------------------------------------------------ */

/* The allocator for (device, mem_type, session) — session 0 for the process-wide ones — created
 * over `src` when there is none yet (src, cfg, sync are ignored otherwise). Fails after
 * gm_caching_registry_finalize() until gm_caching_registry_reset(). */
gm_status gm_caching_registry_get(int device, int mem_type, uint64_t session, const gm_mem_source *src,
                                  const gm_scalable_config *cfg, gm_sync_fn sync, void *sync_ctx,
                                  gm_caching_allocator **out, gm_error *err);
/* Finalizes and frees the allocators of a session that ended (constraint 5); their handles are
 * gone afterwards. The number removed. */
size_t gm_caching_registry_remove_session(uint64_t session);
/* Returns every allocator's memory to its source, occupied memory too (constraint 4), and marks
 * them finalized: later calls on them fail with GM_ERR_USAGE. Call before the source goes away. */
void gm_caching_registry_finalize(void);
/* Frees the finalized shells (process end, tests): no handle may be used afterwards. */
void gm_caching_registry_reset(void);
size_t gm_caching_registry_count(void);

#endif
