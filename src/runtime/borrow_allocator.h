/*
 * borrow_allocator.h — GE's BorrowAllocator (reference §6.3, the L3 level): blocks born on other
 * streams whose last user was this stream, parked here until an event takes them home. They may
 * be handed out again on this stream meanwhile (borrowed), without going through the birth pool.
 *
 * Indexed twice: by size (sorted buckets; Alloc takes a block from the first bucket whose size
 * is >= the request) and by birth stream (GetAndClearBorrowBlocks). Unlike GE, a bucket that
 * empties is erased under its own key, not the requested size (GE's version leaves the empty
 * bucket behind and the next lookup takes a block out of an empty set).
 */
#ifndef GM_BORROW_ALLOCATOR_H
#define GM_BORROW_ALLOCATOR_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/ms_mem_block.h"

typedef struct gm_borrow_bucket {
    size_t size;
    gm_ms_block *head;
} gm_borrow_bucket;

typedef struct gm_borrow_allocator {
    gm_borrow_bucket *buckets; /* ascending size, none empty */
    size_t nbuckets, cap;
    gm_ms_block *by_stream[GM_MAX_STREAMS];
    size_t stream_count[GM_MAX_STREAMS];
    size_t count;
} gm_borrow_allocator;

/* Parks b. When the size index cannot grow, b is only reachable by birth stream (it still goes
 * home, it is just not lent out). */
void gm_borrow_add(gm_borrow_allocator *ba, gm_ms_block *b);
/* A parked block of at least size bytes (the smallest such bucket), removed; or NULL. */
gm_ms_block *gm_borrow_alloc(gm_borrow_allocator *ba, size_t size);
/* The same, only when that block is at most max_size bytes; else NULL. */
gm_ms_block *gm_borrow_alloc_fit(gm_borrow_allocator *ba, size_t size, size_t max_size);
/* GetAndClearBorrowBlocks(stream): removes every block born on `stream`; returns them as a
 * list linked by bt_next (NULL-terminated). */
gm_ms_block *gm_borrow_take_stream(gm_borrow_allocator *ba, uint32_t stream);
size_t gm_borrow_bucket_count(const gm_borrow_allocator *ba);
void gm_borrow_fini(gm_borrow_allocator *ba);

#endif
