/*
 * subpage.h — small blocks carved out of pages (a deliberate addition to GE, whose L2 pools round
 * every block up to a whole 64 KiB page: a model of tiny tensors then holds several times its live
 * bytes; control_flow.onnx's page-rounded peak is 7.2x its live peak).
 *
 * A carved page is one page-long span of the stream's L2 pool, cut into 256 units (256 B each
 * for a 64 KiB page) with a bitmap; a small block is a run of units, placed first fit, so blocks
 * of different sizes share pages. A page whose last block goes is kept as the one spare empty
 * page (so that a page-sized churn does not go to the pool and back on every block) or handed
 * back to the pool, where it merges with its buddies like any span.
 *
 * A small block is handed out as a gm_span with `sub` set (pages 0, no chunk), so that callers
 * above the L2 pool see one kind of handle. Single-threaded, as the pool it serves.
 */
#ifndef GM_SUBPAGE_H
#define GM_SUBPAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/scalable_allocator.h"

#define GM_SUBPAGE_UNITS 256

typedef struct gm_subpage {
    gm_span *span;                          /* the page, occupied in the pool */
    uint64_t map[GM_SUBPAGE_UNITS / 64];    /* bit u: unit u is in a block */
    uint32_t free_units;
    uint32_t hint; /* no free unit below it: first fit starts here */
    bool in_partial;
    struct gm_subpage *prev, *next;         /* the partial list (pages with free units) */
    struct gm_subpage *all_prev, *all_next; /* every carved page */
} gm_subpage;

/* Where the pages come from: get returns a span of one page, or NULL. */
typedef struct gm_page_source {
    void *ctx;
    gm_span *(*get)(void *ctx);
    void (*put)(void *ctx, gm_span *page);
} gm_page_source;

typedef struct gm_subpages {
    gm_page_source src;
    size_t unit;          /* page bytes / GM_SUBPAGE_UNITS */
    gm_subpage *partial;  /* pages with free units, most recently touched first (never the spare) */
    gm_subpage *empty;    /* the one wholly free page kept, or NULL */
    gm_subpage *all;
    gm_span *spare_spans; /* block handles for reuse (linked by lnext) */
    size_t pages, blocks; /* carved pages held (the spare included), blocks out */
} gm_subpages;

void gm_subpages_init(gm_subpages *s, const gm_page_source *src, size_t page_bytes);
/* A block of at least size bytes (size <= one page), or NULL when no page can be had. */
gm_span *gm_subpages_alloc(gm_subpages *s, size_t size);
void gm_subpages_free(gm_subpages *s, gm_span *b);
/* Bytes of block b (whole units). */
static inline size_t gm_subpages_block_size(const gm_subpages *s, const gm_span *b) { return (size_t)b->units * s->unit; }
/* Bytes an allocation of size would take (whole units, at least one). */
static inline size_t gm_subpages_round(const gm_subpages *s, size_t size)
{
    size_t n = (size + s->unit - 1) / s->unit;
    return (n ? n : 1) * s->unit;
}
/* Hands the spare empty page back to the page source; true when there was one. */
bool gm_subpages_trim(gm_subpages *s);
/* Hands every carved page back and frees the bookkeeping. Blocks still out must not be used or
 * freed afterwards (the multi-stream group's destructor has recycled them all by then). */
void gm_subpages_fini(gm_subpages *s);

#endif
