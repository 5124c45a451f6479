/* caching_internal.h — the L1 allocator's fields, shared by caching_allocator.c and the registry. */
#ifndef GM_CACHING_INTERNAL_H
#define GM_CACHING_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>

#include "runtime/caching_allocator.h"
#include "runtime/ptr_map.h"

struct gm_caching_allocator {
    pthread_mutex_t mu; /* recursive: the sync callback may re-enter */
    gm_mem_source src;
    gm_scalable_allocator *pool;
    gm_ptr_map spans; /* address -> occupied span, so free(ptr) finds it */
    gm_sync_fn sync;
    void *sync_ctx;
    bool finalized;
    gm_caching_stats st;
    /* registry */
    int device, mem_type;
    uint64_t session;
    bool registered;
    pthread_t creator;
    gm_caching_allocator *next;
};

/* The synchronize + recycle step of the ladder, under a's lock. */
void gm_caching_sync_and_recycle(gm_caching_allocator *a);
/* Registry: synchronize + recycle every other allocator created on this thread. */
void gm_caching_registry_recycle_others(gm_caching_allocator *self);
/* Returns every chunk to the source and marks a finalized (its lock held by the caller or not). */
void gm_caching_finalize_one(gm_caching_allocator *a);

#endif
