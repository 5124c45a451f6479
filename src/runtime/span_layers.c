/* span_layers.c — per-length free lists and the non-empty-layer lookup table (span_layers.h). */
#include "runtime/span_layers.h"

#include <string.h>

#include "runtime/scalable_allocator.h"
#include "util/alloc.h"

static int grow_zeroed(void **p, size_t elem, size_t have, size_t want)
{
    void *q = gm_realloc(*p, elem * want);
    if (!q) return -1;
    memset((char *)q + elem * have, 0, elem * (want - have));
    *p = q;
    return 0;
}

int gm_span_layers_reserve(gm_span_layers *l, size_t pages)
{
    if (pages < l->n) return 0;
    size_t n = l->n ? l->n : 64;
    while (n <= pages) n *= 2;
    size_t nwords = n / 64, nsummary = (nwords + 63) / 64;
    /* The sizes change only once all three arrays have grown, so a failure leaves the old,
     * consistent tables (with some spare capacity). */
    if (grow_zeroed((void **)&l->layer, sizeof *l->layer, l->n, n) ||
        grow_zeroed((void **)&l->bits, sizeof *l->bits, l->nwords, nwords) ||
        grow_zeroed((void **)&l->summary, sizeof *l->summary, l->nsummary, nsummary))
        return -1;
    l->n = n;
    l->nwords = nwords;
    l->nsummary = nsummary;
    return 0;
}

static void mark(gm_span_layers *l, size_t k)
{
    l->bits[k / 64] |= (uint64_t)1 << (k % 64);
    l->summary[k / 4096] |= (uint64_t)1 << (k / 64 % 64);
}

static void unmark(gm_span_layers *l, size_t k)
{
    l->bits[k / 64] &= ~((uint64_t)1 << (k % 64));
    if (!l->bits[k / 64]) l->summary[k / 4096] &= ~((uint64_t)1 << (k / 64 % 64));
}

void gm_span_layers_push(gm_span_layers *l, gm_span *s)
{
    gm_span_layer *ly = &l->layer[s->pages];
    s->lprev = NULL;
    s->lnext = ly->head;
    if (ly->head) ly->head->lprev = s;
    ly->head = s;
    if (ly->count++ == 0) mark(l, s->pages);
}

void gm_span_layers_remove(gm_span_layers *l, gm_span *s)
{
    gm_span_layer *ly = &l->layer[s->pages];
    if (s->lprev) s->lprev->lnext = s->lnext;
    else ly->head = s->lnext;
    if (s->lnext) s->lnext->lprev = s->lprev;
    s->lprev = s->lnext = NULL;
    if (--ly->count == 0) unmark(l, s->pages);
}

gm_span *gm_span_layers_pop(gm_span_layers *l, size_t pages)
{
    if (pages >= l->n || !l->layer[pages].head) return NULL;
    gm_span *s = l->layer[pages].head;
    gm_span_layers_remove(l, s);
    return s;
}

size_t gm_span_layers_next(const gm_span_layers *l, size_t pages)
{
    if (pages >= l->n) return 0;
    size_t w = pages / 64;
    uint64_t bits = l->bits[w] & (~(uint64_t)0 << (pages % 64));
    if (bits) return w * 64 + (size_t)__builtin_ctzll(bits);
    /* the rest of this summary word, then whole summary words */
    size_t sw = w / 64;
    uint64_t sum = (w % 64 == 63) ? 0 : l->summary[sw] & (~(uint64_t)0 << (w % 64 + 1));
    for (;;) {
        if (sum) {
            size_t word = sw * 64 + (size_t)__builtin_ctzll(sum);
            return word * 64 + (size_t)__builtin_ctzll(l->bits[word]);
        }
        if (++sw >= l->nsummary) return 0;
        sum = l->summary[sw];
    }
}

void gm_span_layers_fini(gm_span_layers *l)
{
    gm_free(l->layer);
    gm_free(l->bits);
    gm_free(l->summary);
    memset(l, 0, sizeof *l);
}
