/*
 * span_layers.h — the free lists of the ScalableAllocator (reference §6.8), one "span layer" per
 * span length in pages, with GE's quick set-based lookup table for "the nearest non-empty layer
 * at least k pages long": a bitmap of non-empty layers plus a summary bitmap of non-zero words,
 * so the search skips 4096 empty layers per summary bit instead of walking them.
 *
 * Layers grow on demand up to the largest span ever cached, so a 30 GiB threshold costs nothing
 * until a span that long exists.
 */
#ifndef GM_SPAN_LAYERS_H
#define GM_SPAN_LAYERS_H

#include <stddef.h>
#include <stdint.h>

typedef struct gm_span gm_span;

typedef struct gm_span_layer {
    gm_span *head; /* LIFO: the most recently freed span is the warmest */
    size_t count;
} gm_span_layer;

typedef struct gm_span_layers {
    gm_span_layer *layer; /* indexed by pages */
    size_t n;             /* layers 0..n-1 exist */
    uint64_t *bits;       /* bit k: layer k non-empty; n rounded up to 64 */
    uint64_t *summary;    /* bit w: bits[w] != 0 */
    size_t nwords, nsummary;
} gm_span_layers;

/* Makes layer `pages` exist; 0, or -1 when out of memory. */
int gm_span_layers_reserve(gm_span_layers *l, size_t pages);
void gm_span_layers_push(gm_span_layers *l, gm_span *s);
void gm_span_layers_remove(gm_span_layers *l, gm_span *s);
/* Pops a span of exactly `pages`, or NULL. */
gm_span *gm_span_layers_pop(gm_span_layers *l, size_t pages);
/* The smallest non-empty layer >= pages, or 0 when there is none. */
size_t gm_span_layers_next(const gm_span_layers *l, size_t pages);
void gm_span_layers_fini(gm_span_layers *l);

#endif
