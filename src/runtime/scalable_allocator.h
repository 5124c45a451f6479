/*
 * scalable_allocator.h — GE's ScalableAllocator (reference §6.8): a page/span buddy cache in
 * front of a memory source.
 *
 * Requests are rounded up to whole 64 KiB pages; a span of k pages lives in span layer k. Alloc
 * pops the exact layer, else splits the nearest longer span (the remainder becomes a buddy span
 * in its own layer), else fetches a new chunk from the source. Free merges with free address
 * neighbours (buddies) of the same chunk. Recycle() hands whole idle chunks back to the source.
 *
 * When occupied + request would pass the total threshold and idle memory exists, Alloc fails
 * instead of fetching, so that the caller recycles (and synchronizes) first and retries.
 *
 * Expandable mode (GE's virtual-address + physical-page mode; config.expandable and a source with
 * virtual memory): the allocator reserves one address range of total_threshold bytes and maps
 * parts of it as it needs memory, so all of its spans are buddies of one chunk and free
 * neighbours merge whichever fetch they came from. Free parts of the range are either mapped
 * (idle, cached in the layers as usual) or holes (nothing mapped). A request the layers cannot
 * serve maps the lowest hole that fits (with the idle span below it, when that shortens the map).
 * gm_scalable_alloc_within never lifts the bytes mapped above their previous most: it unmaps idle
 * pages elsewhere first (the shortest spans, of the last only what is missing, never the idle
 * span it grows), and fails rather than grow (the caller may recycle elsewhere and retry).
 * Recycle unmaps every idle span. Where the source has no virtual memory, reserving fails or no
 * hole fits, the allocator fetches chunks as above, quietly.
 *
 * Single-threaded by contract, as GE's (its callers are serialized by the executor or by the
 * caching allocator's lock); debug builds assert that every call comes from the creating thread.
 */
#ifndef GM_SCALABLE_ALLOCATOR_H
#define GM_SCALABLE_ALLOCATOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/mem_source.h"
#include "runtime/span_layers.h"

#define GM_GIB ((size_t)1 << 30)
#define GM_MIB ((size_t)1 << 20)

/* The thresholds of GE's default_config.h. */
typedef struct gm_scalable_config {
    uint32_t page_shift;          /* page_idem_num: page = 2^16 = 64 KiB */
    size_t huge_page;             /* 2 MiB; kept for the expandable mode, unused by the span cache */
    size_t total_threshold;       /* occupied + idle above this: fail so the caller recycles */
    size_t per_layer_cache;       /* bytes cached in one layer before whole chunks go back */
    size_t span_count_per_layer;  /* spans cached in one layer (also caps the layer capacity) */
    size_t unsplittable;          /* spans at least this long are never split */
    size_t uncacheable;           /* whole chunks at least this long go back on free */
    size_t small_block_max;       /* L2 pools: blocks up to this long are carved out of shared pages
                                   * (subpage.h; 0: every block takes whole pages, as in GE) */
    bool expandable;              /* grow one reserved address range (see above); GE's default: off */
    bool check_thread;            /* debug builds: assert single-thread use */
} gm_scalable_config;

/* GE's defaults for a device of `device_total` bytes (0 = unknown): threshold 30 GiB (<= 32 GiB
 * device) or 60 GiB, replaced by floor(95% of device_total) when known; per-layer cache 8 GiB;
 * 10240 spans a layer; unsplittable 16 GiB; uncacheable 16 GiB (<= 32 GiB device) or 32 GiB; and,
 * not GE's, small blocks up to half a page carved out of shared pages in the L2 pools. */
void gm_scalable_config_default(gm_scalable_config *c, size_t device_total);
/* Not GE's: the memory-first modes' page (gm_ms_config.recycle_before_growth with an expandable
 * L1). GE's 64 KiB page rounds every span up to it, and an L2 pool holds whole pages: a graph
 * whose live tensors come to 107 KiB (control_flow) holds two pages, 1.20 x its peak, at the
 * least. 4 KiB — a host page, and the smallest map of the expandable L1 on a host device (a
 * device mapping coarser granules maps several pages at a time, scalable_expandable.c) — bounds
 * that rounding by 4 KiB a pool. Small blocks are carved out of shared pages up to half a page. */
#define GM_MEMORY_FIRST_PAGE_SHIFT 12
void gm_scalable_config_memory_first(gm_scalable_config *c);
/* GE's ge.experiment.memory_pool_threshold (GiB): must lie in (0, current threshold]. 0 or -1. */
int gm_scalable_config_set_pool_threshold_gib(gm_scalable_config *c, double gib);

/* A chunk: one piece of source memory, carved into buddy spans (in expandable mode also the
 * reserved range, `pages` long, mapped or not). */
typedef struct gm_chunk {
    uintptr_t base;
    size_t pages;
    gm_mem_source src; /* the source it came from (the L2's L1 can change) */
    gm_span *first;    /* the lowest span: merging keeps the lower one, so it never dies */
    uint64_t idle_stamp; /* the allocator's stamp when the chunk last became wholly idle */
    struct gm_chunk *prev, *next;
} gm_chunk;

struct gm_span {
    uintptr_t addr;
    size_t pages;
    gm_chunk *chunk;
    gm_span *prev_buddy, *next_buddy; /* address neighbours inside the chunk */
    gm_span *lprev, *lnext;           /* layer list while free; lnext links spare structs */
    bool free;
    bool hole; /* expandable mode: a free part of the range with nothing mapped (in no layer) */
    /* a small block carved out of a page (subpage.h): its page and its units; NULL otherwise */
    struct gm_subpage *sub;
    uint32_t unit0, units;
};

static inline void *gm_span_addr(const gm_span *s) { return (void *)s->addr; }

typedef struct gm_scalable_stats {
    size_t occupied, idle, peak_occupied; /* bytes, page-rounded; occupied + idle = held */
    size_t fetches, releases;             /* source calls */
    size_t splits, merges, threshold_fails;
} gm_scalable_stats;

typedef struct gm_scalable_allocator gm_scalable_allocator;

/* NULL when out of memory. The config is copied. */
gm_scalable_allocator *gm_scalable_create(const gm_mem_source *src, const gm_scalable_config *cfg);
/* Returns every chunk to its source, occupied ones too (counted as leaked spans). */
void gm_scalable_destroy(gm_scalable_allocator *a);
/* New chunks come from src from now on; existing chunks go back to the one they came from. */
void gm_scalable_set_source(gm_scalable_allocator *a, const gm_mem_source *src);

/* A span of at least `size` bytes, or NULL (source out of memory, or threshold: recycle first). */
gm_span *gm_scalable_alloc(gm_scalable_allocator *a, size_t size);
/* The same from the cache only (never calls the source); NULL when it cannot serve. */
gm_span *gm_scalable_alloc_cached(gm_scalable_allocator *a, size_t size);
/* Expandable mode: the same, but NULL rather than lifting the bytes mapped above their previous
 * most (the caller may recycle memory held elsewhere first); other modes: gm_scalable_alloc. */
gm_span *gm_scalable_alloc_within(gm_scalable_allocator *a, size_t size);
void gm_scalable_free(gm_scalable_allocator *a, gm_span *s);
/* Whether an alloc of size would be served from the cache (no source call). */
bool gm_scalable_can_serve(const gm_scalable_allocator *a, size_t size);

/* ---- moving idle chunks between allocators (cross-stream sharing of the L2 pools) ----------- */

/* A chunk that becomes wholly idle from now on takes the value *stamp has then as its idle_stamp
 * (the counter is read, not copied: its owner bumps it without calling here; default 0). */
void gm_scalable_set_stamp(gm_scalable_allocator *a, const uint64_t *stamp);
/* Removes and returns a wholly idle chunk of at least `size` bytes whose idle_stamp is below
 * `stamp_below` — the shortest found among the first few of each layer — or NULL. The chunk
 * keeps its memory and source; the caller hands it to gm_scalable_adopt. */
gm_chunk *gm_scalable_take_idle_chunk(gm_scalable_allocator *a, size_t size, uint64_t stamp_below);
/* The bytes of the chunk gm_scalable_take_idle_chunk would take, or 0 (nothing taken). */
size_t gm_scalable_idle_chunk_fit(const gm_scalable_allocator *a, size_t size, uint64_t stamp_below);
/* Takes c (from gm_scalable_take_idle_chunk of another allocator) as an idle chunk of a's own;
 * 0, or -1 when out of memory (c is then left to the caller). */
int gm_scalable_adopt(gm_scalable_allocator *a, gm_chunk *c);
/* Returns every idle whole chunk to its source (and, expandable, unmaps every idle span of the
 * range); the bytes returned. */
size_t gm_scalable_recycle(gm_scalable_allocator *a);
/* Returns the idle spans that are parts of longer chunks to their sources (when these have
 * free_part; not GE's, whose Recycle returns whole chunks only); the bytes returned. */
size_t gm_scalable_release_parts(gm_scalable_allocator *a);

/* ---- freeing a part of a span (the L1 side of gm_scalable_release_parts) ------------------- */

/* A blank span struct for gm_scalable_free_part, or NULL (out of memory). */
gm_span *gm_scalable_span_struct(gm_scalable_allocator *a);
/* Frees pages [off, off + n) of occupied span s (not all of it): s stays occupied below them when
 * off > 0, the rest above them becomes the occupied span returned (NULL when there is none), and
 * the freed pages merge like any freed span. spare[0] and spare[1] come from
 * gm_scalable_span_struct: spare[0] becomes the returned span, the unused ones go back. */
gm_span *gm_scalable_free_part(gm_scalable_allocator *a, gm_span *s, size_t off, size_t n, gm_span *spare[2]);

size_t gm_scalable_span_size(const gm_scalable_allocator *a, const gm_span *s);
size_t gm_scalable_page_size(const gm_scalable_allocator *a);
const gm_scalable_stats *gm_scalable_get_stats(const gm_scalable_allocator *a);
/* Spans cached in layer `pages` (tests). */
size_t gm_scalable_layer_count(const gm_scalable_allocator *a, size_t pages);
/* Spans occupied and not yet freed (destroy counts them as leaked). */
size_t gm_scalable_live_spans(const gm_scalable_allocator *a);
/* Debug builds: hand the allocator to the calling thread (a documented transfer of ownership). */
void gm_scalable_rebind_thread(gm_scalable_allocator *a);

#endif
