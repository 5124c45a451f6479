/* scalable_allocator.c — the span/page buddy cache of reference §6.8 (see scalable_allocator.h). */
#include "runtime/scalable_internal.h"

#include <assert.h>

#include "graphmem/log.h"
#include "util/alloc.h"

void gm_scalable_config_default(gm_scalable_config *c, size_t device_total)
{
    const bool big = device_total > 32 * GM_GIB;
    *c = (gm_scalable_config){
        .page_shift = 16,
        .huge_page = 2 * GM_MIB,
        .total_threshold = big ? 60 * GM_GIB : 30 * GM_GIB,
        .per_layer_cache = 8 * GM_GIB,
        .span_count_per_layer = 10240,
        .unsplittable = 16 * GM_GIB,
        .uncacheable = big ? 32 * GM_GIB : 16 * GM_GIB,
        .small_block_max = (size_t)1 << 15, /* half a page: not GE's; see subpage.h */
        .check_thread = true,
    };
    if (device_total) c->total_threshold = (size_t)((double)device_total * 0.95);
}

void gm_scalable_config_memory_first(gm_scalable_config *c)
{
    c->page_shift = GM_MEMORY_FIRST_PAGE_SHIFT;
    const size_t half = ((size_t)1 << c->page_shift) / 2;
    if (c->small_block_max > half) c->small_block_max = half;
}

int gm_scalable_config_set_pool_threshold_gib(gm_scalable_config *c, double gib)
{
    double bytes = gib * (double)GM_GIB;
    if (!(gib > 0) || bytes > (double)c->total_threshold) return -1;
    c->total_threshold = (size_t)bytes;
    return 0;
}

gm_scalable_allocator *gm_scalable_create(const gm_mem_source *src, const gm_scalable_config *cfg)
{
    gm_scalable_allocator *a = gm_calloc(1, sizeof *a);
    if (!a) return NULL;
    a->cfg = *cfg;
    a->src = *src;
#ifndef NDEBUG
    a->owner = pthread_self();
#endif
    return a;
}

void gm_scalable_rebind_thread(gm_scalable_allocator *a)
{
#ifndef NDEBUG
    a->owner = pthread_self();
#else
    (void)a;
#endif
}

void gm_scalable_set_source(gm_scalable_allocator *a, const gm_mem_source *src)
{
    CHECK_THREAD(a);
    a->src = *src;
}

size_t gm_scalable_page_size(const gm_scalable_allocator *a) { return page_bytes(a); }
size_t gm_scalable_span_size(const gm_scalable_allocator *a, const gm_span *s) { return bytes_of(a, s->pages); }
const gm_scalable_stats *gm_scalable_get_stats(const gm_scalable_allocator *a) { return &a->st; }
size_t gm_scalable_live_spans(const gm_scalable_allocator *a) { return a->live; }

size_t gm_scalable_layer_count(const gm_scalable_allocator *a, size_t pages)
{
    return pages < a->layers.n ? a->layers.layer[pages].count : 0;
}

/* ---- the idle cache ----------------------------------------------------------------------- */

/* The stamp a chunk going wholly idle takes now (gm_scalable_set_stamp). */
static uint64_t stamp_now(const gm_scalable_allocator *a) { return a->stamp ? *a->stamp : 0; }

static void release_chunk(gm_scalable_allocator *a, gm_span *s)
{
    gm_chunk *c = s->chunk;
    c->src.free(c->src.ctx, (void *)c->base);
    if (c->prev) c->prev->next = c->next;
    else a->chunks = c->next;
    if (c->next) c->next->prev = c->prev;
    c->next = a->spare_chunks;
    a->spare_chunks = c;
    drop_span(a, s);
    a->st.releases++;
}

/* Whether a freed whole chunk should rather go back to the source than into its layer. */
static bool layer_full(const gm_scalable_allocator *a, size_t pages)
{
    size_t bytes = bytes_of(a, pages);
    if (bytes >= a->cfg.uncacheable) return true;
    size_t threshold_pages = a->cfg.total_threshold >> a->cfg.page_shift;
    size_t capacity = threshold_pages / pages;
    if (capacity > a->cfg.span_count_per_layer) capacity = a->cfg.span_count_per_layer;
    size_t count = gm_scalable_layer_count(a, pages);
    return count >= capacity || (count + 1) * bytes > a->cfg.per_layer_cache;
}

/* ---- alloc -------------------------------------------------------------------------------- */

/* Cuts s to `pages`; the tail becomes a free buddy span in its own layer. */
static int split(gm_scalable_allocator *a, gm_span *s, size_t pages)
{
    gm_span *r = new_span(a);
    if (!r) return -1;
    span_cut(a, s, pages, r);
    cache_push(a, r);
    a->st.splits++;
    return 0;
}

static gm_span *from_larger_layer(gm_scalable_allocator *a, size_t pages)
{
    size_t k = gm_span_layers_next(&a->layers, pages + 1);
    if (!k || bytes_of(a, k) >= a->cfg.unsplittable) return NULL; /* longer ones are too */
    gm_span *s = a->layers.layer[k].head;
    cache_remove(a, s);
    if (split(a, s, pages)) {
        cache_push(a, s);
        return NULL;
    }
    return s;
}

static gm_span *fetch_new_span(gm_scalable_allocator *a, size_t pages, bool within)
{
    size_t bytes = bytes_of(a, pages);
    if (a->st.occupied + bytes > a->cfg.total_threshold && a->st.idle > 0) {
        a->st.threshold_fails++; /* the caller recycles the idle memory and retries */
        return NULL;
    }
    gm_span *s = gm_arena_alloc(a, pages, within);
    if (s || (within && a->arena.chunk)) return s;
    /* Every span of the chunk is at most as long: reserving its layer now means no later
     * push has to grow the tables (and fail half-way). */
    if (gm_span_layers_reserve(&a->layers, pages)) return NULL;
    gm_chunk *c = a->spare_chunks;
    if (c) a->spare_chunks = c->next;
    else c = gm_calloc(1, sizeof *c);
    s = new_span(a);
    void *p = NULL;
    if (!c || !s || a->src.alloc(a->src.ctx, bytes, &p)) {
        if (c) {
            c->next = a->spare_chunks;
            a->spare_chunks = c;
        }
        if (s) drop_span(a, s);
        return NULL;
    }
    *c = (gm_chunk){.base = (uintptr_t)p, .pages = pages, .src = a->src, .first = s, .next = a->chunks};
    if (a->chunks) a->chunks->prev = c;
    a->chunks = c;
    *s = (gm_span){.addr = c->base, .pages = pages, .chunk = c};
    a->st.fetches++;
    return s;
}

bool gm_scalable_can_serve(const gm_scalable_allocator *a, size_t size)
{
    size_t pages = (size + page_bytes(a) - 1) >> a->cfg.page_shift;
    if (pages == 0) pages = 1;
    if (pages < a->layers.n && a->layers.layer[pages].head) return true;
    size_t k = gm_span_layers_next(&a->layers, pages + 1);
    return k && bytes_of(a, k) < a->cfg.unsplittable;
}

/* What an alloc may do when the cache cannot serve. */
enum fetch_mode { FETCH_NONE, FETCH_ANY, FETCH_WITHIN };

static gm_span *alloc_pages(gm_scalable_allocator *a, size_t size, enum fetch_mode fetch)
{
    CHECK_THREAD(a);
    size_t pages = (size + page_bytes(a) - 1) >> a->cfg.page_shift;
    if (pages == 0) pages = 1;
    if (size > SIZE_MAX - page_bytes(a) || pages > (SIZE_MAX >> a->cfg.page_shift)) return NULL;
    gm_span *s = gm_span_layers_pop(&a->layers, pages);
    if (s) {
        s->free = false;
        a->st.idle -= bytes_of(a, pages);
    } else if (!(s = from_larger_layer(a, pages))) {
        if (fetch == FETCH_NONE || !(s = fetch_new_span(a, pages, fetch == FETCH_WITHIN))) return NULL;
    }
    a->live++;
    a->st.occupied += bytes_of(a, pages);
    if (a->st.occupied > a->st.peak_occupied) a->st.peak_occupied = a->st.occupied;
    return s;
}

gm_span *gm_scalable_alloc(gm_scalable_allocator *a, size_t size) { return alloc_pages(a, size, FETCH_ANY); }
gm_span *gm_scalable_alloc_cached(gm_scalable_allocator *a, size_t size) { return alloc_pages(a, size, FETCH_NONE); }
gm_span *gm_scalable_alloc_within(gm_scalable_allocator *a, size_t size) { return alloc_pages(a, size, FETCH_WITHIN); }

/* ---- free --------------------------------------------------------------------------------- */

void gm_scalable_free(gm_scalable_allocator *a, gm_span *s)
{
    CHECK_THREAD(a);
    assert(!s->free);
    a->live--;
    a->st.occupied -= bytes_of(a, s->pages);
    s = merge_idle_neighbours(a, s);
    const bool in_arena = s->chunk == a->arena.chunk; /* the range is never handed back on free */
    if (!in_arena && whole_chunk(s) && layer_full(a, s->pages)) {
        release_chunk(a, s);
        return;
    }
    if (!in_arena && whole_chunk(s)) s->chunk->idle_stamp = stamp_now(a);
    cache_push(a, s); /* its layer exists: the chunk's length was reserved at fetch */
}

gm_span *gm_scalable_span_struct(gm_scalable_allocator *a) { return new_span(a); }

gm_span *gm_scalable_free_part(gm_scalable_allocator *a, gm_span *s, size_t off, size_t n, gm_span *spare[2])
{
    CHECK_THREAD(a);
    assert(!s->free && n && off + n <= s->pages && n < s->pages);
    gm_span *mid = s, *hi = NULL;
    if (off + n < s->pages) {
        hi = spare[0];
        span_cut(a, s, off + n, hi);
        a->live++;
    } else {
        drop_span(a, spare[0]);
    }
    if (off) {
        mid = spare[1];
        span_cut(a, s, off, mid);
        a->live++;
    } else {
        drop_span(a, spare[1]);
    }
    gm_scalable_free(a, mid);
    return hi;
}

/* Idle span s, part of a longer chunk, goes back to the chunk's source (free_part); the chunk is
 * left as the one or two runs of spans around it. */
static bool release_part(gm_scalable_allocator *a, gm_span *s)
{
    gm_chunk *c = s->chunk, *upper = NULL;
    gm_span *p = s->prev_buddy, *n = s->next_buddy;
    if (p && n) { /* two runs: the upper one becomes a chunk of its own */
        if (!(upper = a->spare_chunks ? a->spare_chunks : gm_calloc(1, sizeof *upper))) return false;
        if (upper == a->spare_chunks) a->spare_chunks = upper->next;
    }
    const uintptr_t base = c->base, end = c->base + bytes_of(a, c->pages);
    if (c->src.free_part(c->src.ctx, (void *)base, (void *)s->addr, bytes_of(a, s->pages))) {
        if (upper) {
            upper->next = a->spare_chunks;
            a->spare_chunks = upper;
        }
        return false; /* it stays idle here */
    }
    cache_remove(a, s);
    if (upper) {
        *upper = (gm_chunk){.base = n->addr, .pages = (end - n->addr) >> a->cfg.page_shift, .src = c->src,
                            .first = n, .idle_stamp = c->idle_stamp, .next = a->chunks};
        if (a->chunks) a->chunks->prev = upper;
        a->chunks = upper;
        for (gm_span *t = n; t; t = t->next_buddy) t->chunk = upper;
    } else if (n) { /* the chunk now starts above s */
        c->base = n->addr;
        c->first = n;
    }
    if (p) {
        p->next_buddy = NULL;
        c->pages = (s->addr - c->base) >> a->cfg.page_shift;
    } else {
        c->pages -= s->pages;
    }
    if (n) n->prev_buddy = NULL;
    drop_span(a, s);
    return true;
}

size_t gm_scalable_release_parts(gm_scalable_allocator *a)
{
    CHECK_THREAD(a);
    size_t returned = 0;
    for (size_t k = gm_span_layers_next(&a->layers, 1); k; k = gm_span_layers_next(&a->layers, k + 1))
        for (gm_span *s = a->layers.layer[k].head, *next; s; s = next) {
            next = s->lnext;
            if (!whole_chunk(s) && s->chunk != a->arena.chunk && s->chunk->src.free_part && release_part(a, s))
                returned += bytes_of(a, k);
        }
    return returned;
}

void gm_scalable_set_stamp(gm_scalable_allocator *a, const uint64_t *stamp) { a->stamp = stamp; }

/* How many spans of one layer, and how many layers, a search looks at: it runs on a pool miss,
 * so it stays short; a chunk it misses is only not shared this time. */
#define TAKE_SCAN_SPANS 8
#define TAKE_SCAN_LAYERS 16

/* The wholly idle span of the shortest qualifying chunk among the first few of each layer. */
static gm_span *find_idle_whole(const gm_scalable_allocator *a, size_t size, uint64_t stamp_below)
{
    if (!a->st.idle || size > SIZE_MAX - page_bytes(a)) return NULL;
    size_t pages = (size + page_bytes(a) - 1) >> a->cfg.page_shift;
    if (pages == 0) pages = 1;
    size_t k = gm_span_layers_next(&a->layers, pages);
    for (int layers = 0; k && layers < TAKE_SCAN_LAYERS; layers++, k = gm_span_layers_next(&a->layers, k + 1)) {
        int seen = 0;
        for (gm_span *s = a->layers.layer[k].head; s && seen < TAKE_SCAN_SPANS; s = s->lnext, seen++)
            if (whole_chunk(s) && s->chunk != a->arena.chunk && s->chunk->idle_stamp < stamp_below) return s;
    }
    return NULL;
}

size_t gm_scalable_idle_chunk_fit(const gm_scalable_allocator *a, size_t size, uint64_t stamp_below)
{
    const gm_span *s = find_idle_whole(a, size, stamp_below);
    return s ? bytes_of(a, s->pages) : 0;
}

gm_chunk *gm_scalable_take_idle_chunk(gm_scalable_allocator *a, size_t size, uint64_t stamp_below)
{
    CHECK_THREAD(a);
    gm_span *s = find_idle_whole(a, size, stamp_below);
    if (!s) return NULL;
    gm_chunk *c = s->chunk;
    cache_remove(a, s);
    if (c->prev) c->prev->next = c->next;
    else a->chunks = c->next;
    if (c->next) c->next->prev = c->prev;
    c->prev = c->next = NULL;
    return c;
}

int gm_scalable_adopt(gm_scalable_allocator *a, gm_chunk *c)
{
    CHECK_THREAD(a);
    if (gm_span_layers_reserve(&a->layers, c->pages)) return -1;
    c->prev = NULL;
    c->next = a->chunks;
    if (a->chunks) a->chunks->prev = c;
    a->chunks = c;
    c->idle_stamp = stamp_now(a);
    cache_push(a, c->first);
    return 0;
}

size_t gm_scalable_recycle(gm_scalable_allocator *a)
{
    CHECK_THREAD(a);
    size_t returned = gm_arena_trim(a);
    for (size_t k = gm_span_layers_next(&a->layers, 1); k; k = gm_span_layers_next(&a->layers, k + 1)) {
        gm_span *s = a->layers.layer[k].head;
        while (s) {
            gm_span *next = s->lnext;
            if (whole_chunk(s) && s->chunk != a->arena.chunk) {
                cache_remove(a, s);
                returned += bytes_of(a, k);
                release_chunk(a, s);
            }
            s = next;
        }
    }
    return returned;
}

void gm_scalable_destroy(gm_scalable_allocator *a)
{
    if (!a) return;
    if (a->live) gm_log(GM_LOG_WARN, "ScalableAllocator: %zu spans still occupied at destroy; returning their memory", a->live);
    gm_arena_close(a);
    while (a->chunks) {
        gm_chunk *c = a->chunks;
        a->chunks = c->next;
        c->src.free(c->src.ctx, (void *)c->base);
        for (gm_span *s = c->first, *n; s; s = n) {
            n = s->next_buddy;
            gm_free(s);
        }
        gm_free(c);
    }
    while (a->spare_chunks) {
        gm_chunk *c = a->spare_chunks;
        a->spare_chunks = c->next;
        gm_free(c);
    }
    while (a->spare) {
        gm_span *s = a->spare;
        a->spare = s->lnext;
        gm_free(s);
    }
    gm_span_layers_fini(&a->layers);
    gm_free(a);
}
