/* scalable_internal.h — the ScalableAllocator's fields and span helpers, shared by its two files:
 * scalable_allocator.c (the span cache over chunks) and scalable_expandable.c (one reserved
 * range grown by mapping, the expandable mode). */
#ifndef GM_SCALABLE_INTERNAL_H
#define GM_SCALABLE_INTERNAL_H

#include <assert.h>
#include <pthread.h>

#include "runtime/scalable_allocator.h"
#include "util/alloc.h"

/* Expandable mode: the reserved range is one chunk of `cap` pages; its spans are occupied, idle
 * (mapped, in the layers) or holes (unmapped, in the hole list). Hole boundaries lie on map
 * granules. */
typedef struct gm_arena {
    gm_chunk *chunk;  /* NULL until the first fetch reserves it */
    gm_span *holes;   /* address order, linked by lnext / lprev */
    size_t cap;       /* pages reserved */
    size_t unit;      /* pages per map granule: 1, or the source's granularity when coarser */
    size_t mapped;    /* pages mapped now */
    size_t high;      /* the most pages ever mapped at once */
    bool unavailable; /* no virtual memory, or reserving failed: chunks from then on */
} gm_arena;

struct gm_scalable_allocator {
    gm_scalable_config cfg;
    gm_mem_source src;
    gm_span_layers layers;
    gm_chunk *chunks;    /* every chunk held from a source (not the arena's) */
    gm_span *spare;      /* span structs kept for reuse (linked by lnext) */
    gm_chunk *spare_chunks; /* chunk structs kept for reuse (linked by next): an L2 pool hands
                             * its chunks back at every LastWaitEvents and fetches them again */
    size_t live;         /* spans handed out */
    const uint64_t *stamp; /* its value is given to chunks that become wholly idle (NULL: 0) */
    gm_scalable_stats st;
    gm_arena arena;
#ifndef NDEBUG
    pthread_t owner;
#endif
};

#ifndef NDEBUG
#define CHECK_THREAD(a) assert(!(a)->cfg.check_thread || pthread_equal((a)->owner, pthread_self()))
#else
#define CHECK_THREAD(a) ((void)0)
#endif

static inline size_t page_bytes(const gm_scalable_allocator *a) { return (size_t)1 << a->cfg.page_shift; }
static inline size_t bytes_of(const gm_scalable_allocator *a, size_t pages) { return pages << a->cfg.page_shift; }
static inline bool whole_chunk(const gm_span *s) { return !s->prev_buddy && !s->next_buddy; }

static inline gm_span *new_span(gm_scalable_allocator *a)
{
    gm_span *s = a->spare;
    if (s) a->spare = s->lnext;
    else if (!(s = gm_malloc(sizeof *s))) return NULL;
    *s = (gm_span){0};
    return s;
}

static inline void drop_span(gm_scalable_allocator *a, gm_span *s)
{
    s->lnext = a->spare;
    a->spare = s;
}

static inline void cache_push(gm_scalable_allocator *a, gm_span *s)
{
    s->free = true;
    gm_span_layers_push(&a->layers, s);
    a->st.idle += bytes_of(a, s->pages);
}

static inline void cache_remove(gm_scalable_allocator *a, gm_span *s)
{
    gm_span_layers_remove(&a->layers, s);
    s->free = false;
    a->st.idle -= bytes_of(a, s->pages);
}

/* Splits s after `pages`: r (a blank struct) becomes the upper part, its next buddy, in no state
 * (neither free nor a hole) for the caller to file. */
static inline void span_cut(gm_scalable_allocator *a, gm_span *s, size_t pages, gm_span *r)
{
    *r = (gm_span){.addr = s->addr + bytes_of(a, pages), .pages = s->pages - pages, .chunk = s->chunk,
                   .prev_buddy = s, .next_buddy = s->next_buddy};
    if (s->next_buddy) s->next_buddy->prev_buddy = r;
    s->next_buddy = r;
    s->pages = pages;
}

/* s takes in its next buddy, which is in no list. */
static inline void span_absorb_next(gm_scalable_allocator *a, gm_span *s)
{
    gm_span *n = s->next_buddy;
    s->pages += n->pages;
    s->next_buddy = n->next_buddy;
    if (n->next_buddy) n->next_buddy->prev_buddy = s;
    drop_span(a, n);
}

/* s, in no layer, takes in its idle buddies on either side; returns the span that holds it now
 * (s, or its lower neighbour), still in no layer. */
static inline gm_span *merge_idle_neighbours(gm_scalable_allocator *a, gm_span *s)
{
    if (s->next_buddy && s->next_buddy->free) {
        cache_remove(a, s->next_buddy);
        span_absorb_next(a, s);
        a->st.merges++;
    }
    if (s->prev_buddy && s->prev_buddy->free) {
        s = s->prev_buddy;
        cache_remove(a, s);
        span_absorb_next(a, s);
        a->st.merges++;
    }
    return s;
}

/* ---- expandable mode (scalable_expandable.c) ---------------------------------------------- */

/* A span of `pages` mapped in the range (see scalable_allocator.h); NULL when the source has no
 * virtual memory, reserving failed, no hole fits, the source is out of memory, or `within` and the
 * bytes mapped would pass their previous most. */
gm_span *gm_arena_alloc(gm_scalable_allocator *a, size_t pages, bool within);
/* Unmaps every idle span of the range; the bytes given back. */
size_t gm_arena_trim(gm_scalable_allocator *a);
/* Unmaps everything and releases the range (destroy: occupied spans too). */
void gm_arena_close(gm_scalable_allocator *a);

#endif
