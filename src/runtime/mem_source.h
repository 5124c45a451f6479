/*
 * mem_source.h — where an allocator gets its memory from. Every level of the runtime allocator
 * (ScalableAllocator pages, the caching L1, the per-stream L2 pools) takes raw memory through
 * this two-call interface, so a device backend, the L1 cache, or a test's failing fake can sit
 * underneath without the allocator knowing which.
 *
 * Addresses are opaque: an allocator only adds offsets to them and hands them back, never
 * dereferences them (device memory is not host-addressable).
 */
#ifndef GM_MEM_SOURCE_H
#define GM_MEM_SOURCE_H

#include <stddef.h>

typedef struct gm_mem_source {
    void *ctx;
    /* 0 and *ptr set on success; nonzero when the memory is not there (out of memory). */
    int (*alloc)(void *ctx, size_t bytes, void **ptr);
    void (*free)(void *ctx, void *ptr);
} gm_mem_source;

/* Called when an allocator has run dry and wants the device idle before it recycles cached
 * memory (GE's "synchronize" step): stream-ordered frees must have happened on the device before
 * their memory may go back to a level shared with other streams. `stream` is -1 for "all". */
typedef void (*gm_sync_fn)(void *ctx, int stream);

#endif
