/* subpage.c — first-fit runs of units in carved pages (subpage.h). */
#include "runtime/subpage.h"

#include "util/alloc.h"

void gm_subpages_init(gm_subpages *s, const gm_page_source *src, size_t page_bytes)
{
    *s = (gm_subpages){.src = *src, .unit = page_bytes / GM_SUBPAGE_UNITS};
    if (!s->unit) s->unit = 1;
}

/* ---- the unit bitmap ------------------------------------------------------------------------ */

/* The first unit at or after u whose bit is `one`; GM_SUBPAGE_UNITS when there is none. */
static uint32_t next_unit(const uint64_t *map, uint32_t u, bool one)
{
    while (u < GM_SUBPAGE_UNITS) {
        uint64_t w = one ? map[u / 64] : ~map[u / 64];
        w &= ~(uint64_t)0 << (u % 64);
        if (w) return (u & ~63u) + (uint32_t)__builtin_ctzll(w);
        u = (u & ~63u) + 64;
    }
    return GM_SUBPAGE_UNITS;
}

/* The first run of n free units at or after `from`, or -1. */
static int find_run(const uint64_t *map, uint32_t n, uint32_t from)
{
    for (uint32_t u = from;;) {
        u = next_unit(map, u, false);
        if (u + n > GM_SUBPAGE_UNITS) return -1;
        uint32_t end = next_unit(map, u, true);
        if (end - u >= n) return (int)u;
        u = end;
    }
}

static void set_run(uint64_t *map, uint32_t u, uint32_t n, bool on)
{
    while (n) {
        uint32_t k = 64 - u % 64;
        if (k > n) k = n;
        uint64_t mask = (k == 64 ? ~(uint64_t)0 : (((uint64_t)1 << k) - 1)) << (u % 64);
        if (on) map[u / 64] |= mask;
        else map[u / 64] &= ~mask;
        u += k;
        n -= k;
    }
}

/* ---- page lists ----------------------------------------------------------------------------- */

static void partial_insert(gm_subpages *s, gm_subpage *p)
{
    p->prev = NULL;
    p->next = s->partial;
    if (s->partial) s->partial->prev = p;
    s->partial = p;
    p->in_partial = true;
}

static void partial_remove(gm_subpages *s, gm_subpage *p)
{
    if (p->prev) p->prev->next = p->next;
    else s->partial = p->next;
    if (p->next) p->next->prev = p->prev;
    p->prev = p->next = NULL;
    p->in_partial = false;
}

static gm_subpage *page_new(gm_subpages *s)
{
    gm_subpage *p = gm_calloc(1, sizeof *p);
    if (!p) return NULL;
    if (!(p->span = s->src.get(s->src.ctx))) {
        gm_free(p);
        return NULL;
    }
    p->free_units = GM_SUBPAGE_UNITS;
    p->all_next = s->all;
    if (s->all) s->all->all_prev = p;
    s->all = p;
    s->pages++;
    return p;
}

static void page_release(gm_subpages *s, gm_subpage *p)
{
    if (p->all_prev) p->all_prev->all_next = p->all_next;
    else s->all = p->all_next;
    if (p->all_next) p->all_next->all_prev = p->all_prev;
    s->src.put(s->src.ctx, p->span);
    gm_free(p);
    s->pages--;
}

/* An emptied page: the spare if there is none yet, else back to the source. */
static void page_emptied(gm_subpages *s, gm_subpage *p)
{
    if (p->in_partial) partial_remove(s, p);
    if (s->empty) page_release(s, p);
    else s->empty = p;
}

/* ---- blocks --------------------------------------------------------------------------------- */

static gm_span *handle_new(gm_subpages *s)
{
    gm_span *b = s->spare_spans;
    if (b) s->spare_spans = b->lnext;
    else if (!(b = gm_malloc(sizeof *b))) return NULL;
    *b = (gm_span){0};
    return b;
}

gm_span *gm_subpages_alloc(gm_subpages *s, size_t size)
{
    size_t nu = (size + s->unit - 1) / s->unit;
    if (nu == 0) nu = 1;
    if (size > SIZE_MAX - s->unit || nu > GM_SUBPAGE_UNITS) return NULL;
    const uint32_t n = (uint32_t)nu;
    int u = -1;
    gm_subpage *p = s->partial;
    for (; p; p = p->next)
        if (p->free_units >= n && (u = find_run(p->map, n, p->hint)) >= 0) break;
    if (!p) { /* a fresh page: the spare first */
        if ((p = s->empty)) s->empty = NULL;
        else if (!(p = page_new(s))) return NULL;
        partial_insert(s, p);
        u = 0;
    }
    gm_span *b = handle_new(s);
    if (!b) {
        if (p->free_units == GM_SUBPAGE_UNITS) page_emptied(s, p);
        return NULL;
    }
    set_run(p->map, (uint32_t)u, n, true);
    p->free_units -= n;
    if ((uint32_t)u == p->hint) p->hint += n;
    if (!p->free_units) partial_remove(s, p);
    b->addr = p->span->addr + (uintptr_t)u * s->unit;
    b->sub = p;
    b->unit0 = (uint32_t)u;
    b->units = n;
    s->blocks++;
    return b;
}

void gm_subpages_free(gm_subpages *s, gm_span *b)
{
    gm_subpage *p = b->sub;
    set_run(p->map, b->unit0, b->units, false);
    p->free_units += b->units;
    if (b->unit0 < p->hint) p->hint = b->unit0;
    s->blocks--;
    b->sub = NULL;
    b->lnext = s->spare_spans;
    s->spare_spans = b;
    if (p->free_units == GM_SUBPAGE_UNITS) {
        page_emptied(s, p);
    } else if (s->partial != p) { /* to the front: the hole just made is the warmest */
        if (p->in_partial) partial_remove(s, p);
        partial_insert(s, p);
    }
}

bool gm_subpages_trim(gm_subpages *s)
{
    if (!s->empty) return false;
    gm_subpage *p = s->empty;
    s->empty = NULL;
    page_release(s, p);
    return true;
}

void gm_subpages_fini(gm_subpages *s)
{
    while (s->all) page_release(s, s->all);
    while (s->spare_spans) {
        gm_span *b = s->spare_spans;
        s->spare_spans = b->lnext;
        gm_free(b);
    }
    *s = (gm_subpages){0};
}
