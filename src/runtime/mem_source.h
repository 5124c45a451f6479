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
    /* Optional: alloc, but failing (nonzero, quietly) rather than making the source hold more
     * device memory than it ever held (the L1's answer to "grow or recycle first?"). */
    int (*alloc_within)(void *ctx, size_t bytes, void **ptr);
    /* Optional: gives back [addr, addr + bytes), a part of what alloc handed out at `base`; the
     * parts below and above stay allocated, at base and at addr + bytes (each freed on its own).
     * 0, or nonzero (out of memory) with nothing changed. */
    int (*free_part)(void *ctx, void *base, void *addr, size_t bytes);
    /* Optional: gives idle memory back to where it came from (an L1 cache: its recycle). */
    size_t (*trim)(void *ctx);
    /* Optional virtual memory (all four, or none): reserve an address range with nothing behind
     * it; map backs any part of it not backed yet, unmap gives back any backed part (not
     * necessarily what one map call backed); release the range once nothing is backed. Sizes and
     * addresses are multiples of `granularity`; reserve and map return 0 on success, like alloc.
     * The expandable ScalableAllocator (scalable_allocator.h) uses one such range instead of
     * fetching chunks. */
    int (*reserve)(void *ctx, size_t bytes, void **base);
    int (*map)(void *ctx, void *addr, size_t bytes);
    void (*unmap)(void *ctx, void *addr, size_t bytes);
    void (*release)(void *ctx, void *base, size_t bytes);
    size_t granularity;
} gm_mem_source;

/* Called when an allocator has run dry and wants the device idle before it recycles cached
 * memory (GE's "synchronize" step): stream-ordered frees must have happened on the device before
 * their memory may go back to a level shared with other streams. `stream` is -1 for "all". */
typedef void (*gm_sync_fn)(void *ctx, int stream);

#endif
