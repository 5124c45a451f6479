/*
 * scalable_expandable.c — the ScalableAllocator's expandable mode (scalable_allocator.h): one
 * reserved address range, mapped where spans are needed and unmapped where they are not.
 *
 * Why: fetched chunks are separate pieces of device memory, so two idle chunks side by side never
 * serve one longer request, and a cache of exact-size chunks holds far more than it uses (the
 * transformer encoder's pools held 2x their live bytes in chunks too short for the next request).
 * In one range every span is a buddy of every other, so freed neighbours merge whichever fetch
 * they came from; and since what backs a span is mapped separately from where the span lies, an
 * idle span that is in the wrong place can be unmapped and its memory mapped where it is needed.
 *
 * The range's spans, in address order, are occupied, idle (mapped, in the layers, merged with idle
 * neighbours as everywhere) or holes (nothing mapped, in the hole list, merged with neighbouring
 * holes). An idle span and a hole never merge: what is mapped stays visible to the layers.
 */
#include "runtime/scalable_internal.h"

#include <stdint.h>

static size_t round_up(size_t x, size_t unit) { return (x + unit - 1) / unit * unit; }

/* Reserves the range on first use, as one hole. False when the mode is off or unavailable
 * (quietly: a device without virtual memory works as without the mode). */
static bool arena_open(gm_scalable_allocator *a)
{
    gm_arena *ar = &a->arena;
    if (ar->chunk) return true;
    if (ar->unavailable || !a->cfg.expandable || !a->src.reserve) return false;
    const size_t page = page_bytes(a), g = a->src.granularity ? a->src.granularity : page;
    ar->unavailable = true; /* until it is open */
    if (g % page && page % g) return false; /* neither divides the other */
    ar->unit = g > page ? g / page : 1;
    ar->cap = (a->cfg.total_threshold >> a->cfg.page_shift) / ar->unit * ar->unit;
    gm_chunk *c = gm_calloc(1, sizeof *c);
    gm_span *h = new_span(a);
    void *base = NULL;
    if (!c || !h || !ar->cap || a->src.reserve(a->src.ctx, bytes_of(a, ar->cap), &base)) {
        gm_free(c);
        if (h) drop_span(a, h);
        return false;
    }
    *c = (gm_chunk){.base = (uintptr_t)base, .pages = ar->cap, .src = a->src, .first = h};
    *h = (gm_span){.addr = c->base, .pages = ar->cap, .chunk = c, .hole = true};
    ar->chunk = c;
    ar->holes = h;
    ar->unavailable = false;
    return true;
}

/* ---- spans -------------------------------------------------------------------------------- */

/* Enough spare span structs for what follows, so that it cannot fail half-way. */
static bool spares(gm_scalable_allocator *a, int n)
{
    gm_span *got[4];
    int k = 0;
    for (; k < n; k++)
        if (!(got[k] = new_span(a))) break;
    for (int i = 0; i < k; i++) drop_span(a, got[i]);
    return k == n;
}

/* Splits s after `pages` (a spare struct must exist); the upper part, with no state, is returned
 * for the caller to file. */
static gm_span *cut(gm_scalable_allocator *a, gm_span *s, size_t pages)
{
    gm_span *r = new_span(a);
    span_cut(a, s, pages, r);
    return r;
}

/* A span no one holds goes idle, merged with idle neighbours. */
static void file_idle(gm_scalable_allocator *a, gm_span *s) { cache_push(a, merge_idle_neighbours(a, s)); }

/* ---- holes -------------------------------------------------------------------------------- */

static void hole_unlink(gm_arena *ar, gm_span *h)
{
    if (h->lprev) h->lprev->lnext = h->lnext;
    else ar->holes = h->lnext;
    if (h->lnext) h->lnext->lprev = h->lprev;
    h->lprev = h->lnext = NULL;
}

/* h takes the place of old in the list. */
static void hole_replace(gm_arena *ar, gm_span *old, gm_span *h)
{
    h->lprev = old->lprev;
    h->lnext = old->lnext;
    if (h->lprev) h->lprev->lnext = h;
    else ar->holes = h;
    if (h->lnext) h->lnext->lprev = h;
    old->lprev = old->lnext = NULL;
}

/* s (unmapped, in no list) becomes a hole, merged with neighbouring holes. */
static void file_hole(gm_scalable_allocator *a, gm_span *s)
{
    gm_arena *ar = &a->arena;
    s->hole = true;
    s->free = false;
    if (s->next_buddy && s->next_buddy->hole) {
        gm_span *n = s->next_buddy;
        hole_replace(ar, n, s); /* s lies just below n: the same place in address order */
        span_absorb_next(a, s);
        if (s->prev_buddy && s->prev_buddy->hole) {
            hole_unlink(ar, s);
            span_absorb_next(a, s->prev_buddy);
        }
        return;
    }
    if (s->prev_buddy && s->prev_buddy->hole) {
        span_absorb_next(a, s->prev_buddy);
        return;
    }
    gm_span *before = NULL; /* holes are few: a walk finds the place */
    for (gm_span *h = ar->holes; h && h->addr < s->addr; h = h->lnext) before = h;
    s->lprev = before;
    s->lnext = before ? before->lnext : ar->holes;
    if (s->lnext) s->lnext->lprev = s;
    if (before) before->lnext = s;
    else ar->holes = s;
}

/* Unmaps whole granules of idle span s, at most `most` pages of them, from its top (its lower
 * part stays idle); the pages unmapped. */
static size_t unmap_idle(gm_scalable_allocator *a, gm_span *s, size_t most)
{
    gm_arena *ar = &a->arena;
    const size_t off = (s->addr - ar->chunk->base) >> a->cfg.page_shift;
    const size_t hi = (off + s->pages) / ar->unit * ar->unit;
    size_t lo = round_up(off, ar->unit);
    if (hi <= lo || !spares(a, 2)) return 0;
    if (hi - lo > most) lo = hi - round_up(most, ar->unit);
    cache_remove(a, s);
    gm_span *mid = s;
    if (lo > off) {
        mid = cut(a, s, lo - off);
        cache_push(a, s);
    }
    if (hi - lo < mid->pages) cache_push(a, cut(a, mid, hi - lo));
    a->src.unmap(a->src.ctx, (void *)mid->addr, bytes_of(a, mid->pages));
    const size_t n = mid->pages;
    ar->mapped -= n;
    file_hole(a, mid);
    return n;
}

/* Unmaps idle pages until `pages` more would fit under the most ever mapped: the shortest idle
 * spans first, and of the last one only what is still missing; `keep`, the idle span the map
 * will extend, stays mapped (unmapping it would only make the map longer). */
static void make_room(gm_scalable_allocator *a, size_t pages, const gm_span *keep)
{
    gm_arena *ar = &a->arena;
    for (size_t k = gm_span_layers_next(&a->layers, 1); k && ar->mapped + pages > ar->high;
         k = gm_span_layers_next(&a->layers, k + 1)) {
        for (gm_span *s = a->layers.layer[k].head, *next; s && ar->mapped + pages > ar->high; s = next) {
            next = s->lnext; /* unmapping s files its parts in shorter layers, never this one */
            if (s != keep && s->chunk == ar->chunk) unmap_idle(a, s, ar->mapped + pages - ar->high);
        }
    }
}

/* The lowest hole that fits `pages`, counting the idle span just below it (*below, or NULL; the
 * map then only has to cover the rest, *need pages); NULL when none does. */
static gm_span *find_hole(const gm_arena *ar, size_t pages, gm_span **below, size_t *need)
{
    for (gm_span *h = ar->holes; h; h = h->lnext) {
        gm_span *b = h->prev_buddy && h->prev_buddy->free ? h->prev_buddy : NULL;
        const size_t have = b && b->pages < pages ? b->pages : 0;
        *below = have ? b : NULL;
        *need = round_up(pages - have, ar->unit);
        if (*need <= h->pages) return h;
    }
    return NULL;
}

gm_span *gm_arena_alloc(gm_scalable_allocator *a, size_t pages, bool within)
{
    if (!arena_open(a)) return NULL;
    gm_arena *ar = &a->arena;
    gm_span *below = NULL;
    size_t need = 0;
    gm_span *h = find_hole(ar, pages, &below, &need);
    /* Within the most ever mapped: unmap idle pages elsewhere first. What they leave may be a
     * lower hole that fits, with another need, so look again, and make room once more when
     * that one needs more (twice at most; then within fails and the caller recycles). */
    for (int round = 0; within && round < 2 && (!h || ar->mapped + need > ar->high); round++) {
        make_room(a, h ? need : round_up(pages, ar->unit), below);
        h = find_hole(ar, pages, &below, &need);
    }
    if (!h) return NULL; /* the range is full */
    if (within && ar->mapped + need > ar->high) return NULL;
    if (!spares(a, 2) || gm_span_layers_reserve(&a->layers, ar->mapped + need)) return NULL;
    if (a->src.map(a->src.ctx, (void *)h->addr, bytes_of(a, need))) return NULL;
    ar->mapped += need;
    if (ar->mapped > ar->high) ar->high = ar->mapped;
    gm_span *s = h;
    if (need < h->pages) { /* the rest stays a hole, in h's place */
        gm_span *rest = cut(a, h, need);
        rest->hole = true;
        hole_replace(ar, h, rest);
    } else {
        hole_unlink(ar, h);
    }
    s->hole = false;
    if (below) {
        cache_remove(a, below);
        span_absorb_next(a, below);
        s = below;
    }
    if (s->pages > pages) file_idle(a, cut(a, s, pages));
    a->st.fetches++;
    return s;
}

size_t gm_arena_trim(gm_scalable_allocator *a)
{
    gm_arena *ar = &a->arena;
    if (!ar->chunk) return 0;
    size_t pages = 0;
    for (size_t k = gm_span_layers_next(&a->layers, 1); k; k = gm_span_layers_next(&a->layers, k + 1))
        for (gm_span *s = a->layers.layer[k].head, *next; s; s = next) {
            next = s->lnext;
            if (s->chunk == ar->chunk) pages += unmap_idle(a, s, SIZE_MAX);
        }
    if (pages) a->st.releases++;
    return bytes_of(a, pages);
}

void gm_arena_close(gm_scalable_allocator *a)
{
    gm_arena *ar = &a->arena;
    if (!ar->chunk) return;
    /* what is mapped, run by run (a run's ends are hole ends or the range's: whole granules) */
    uintptr_t run = 0;
    size_t run_pages = 0;
    for (gm_span *s = ar->chunk->first, *n; s; s = n) {
        n = s->next_buddy;
        if (!s->hole && !run_pages) run = s->addr;
        if (!s->hole) run_pages += s->pages;
        if (run_pages && (s->hole || !n)) {
            a->src.unmap(a->src.ctx, (void *)run, bytes_of(a, run_pages));
            run_pages = 0;
        }
        gm_free(s);
    }
    a->src.release(a->src.ctx, (void *)ar->chunk->base, bytes_of(a, ar->cap));
    gm_free(ar->chunk);
    *ar = (gm_arena){0};
}
