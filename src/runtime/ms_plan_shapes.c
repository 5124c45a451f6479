/*
 * ms_plan_shapes.c — not GE's: the learned iterations a plan keeps (ms_learned_plan.h).
 *
 * A graph with a dynamic batch runs iterations of a few shapes: the same calls with other sizes,
 * in any mix. Each shape learned is kept (up to GM_MS_PLAN_SHAPES, the least recently used making
 * room), all packed into one region as high as the highest. An iteration starts on the shape the
 * one before used; at its first call that shape does not expect, before it has had a block from
 * the plan (only sends and waits, such as a step's start events, may have been answered), the
 * shape that expects that call and began with the same calls takes over. Shapes are told apart
 * by the first call in which they differ: shapes that begin alike up to a malloc are one shape to
 * this choice, and the most recently used of them answers.
 */
#include <string.h>

#include "runtime/ms_internal.h"
#include "util/alloc.h"

static void free_shape(gm_ms_plan_shape *sh)
{
    for (size_t j = 0; j < sh->nslots; j++) gm_free(sh->slots[j].block);
    gm_free(sh->slots);
    gm_free(sh->calls);
    gm_free(sh->guards);
    gm_free(sh->frees);
    memset(sh, 0, sizeof *sh);
}

void gm_ms_plan_drop_shapes(gm_ms_plan *p)
{
    for (uint32_t j = 0; j < p->nshapes; j++) free_shape(&p->shape[j]);
    p->nshapes = p->cur_shape = 0;
    p->st.shapes = p->st.blocks = p->st.dependent_blocks = 0;
}

/* A wrapper per slot, typed GM_MS_PLANNED (its address set by gm_ms_plan_place_shapes), and in
 * each malloc's call the wrapper it answers with, where it has no guards to check. */
static bool make_blocks(gm_ms_plan *p, gm_ms_plan_shape *sh)
{
    for (size_t j = 0; j < sh->nslots; j++) {
        gm_ms_plan_slot *s = &sh->slots[j];
        gm_ms_block *b = gm_ms_block_new(p->n);
        if (!b) return false;
        b->mem = &s->span;
        b->size = s->bytes;
        b->birth = p->g->alloc[s->stream];
        b->birth_stream = s->stream;
        b->type = GM_MS_PLANNED;
        b->plan_slot = (uint32_t)j;
        b->cursors = p->c;
        b->plan_req = s->req;
        s->block = b;
        s->refs = 0;
        s->stood_in = 0;
        if (s->order_mask) sh->dependent_blocks++;
    }
    for (uint32_t t = 0; t < p->n; t++)
        for (gm_ms_plan_call *c = sh->calls + (sh->seq[t] - sh->calls); c->word != GM_PLAN_END; c++)
            if ((c->word & 7) == GM_PLAN_ALLOC && !sh->slots[c->word >> 3].nguards)
                c->aux = (uintptr_t)sh->slots[c->word >> 3].block;
    return true;
}

/* The same calls, block sizes for block numbers (those follow the host's order of the mallocs). */
static bool same_call(const gm_ms_plan_shape *a, uint64_t x, const gm_ms_plan_shape *b, uint64_t y)
{
    const uint64_t op = x & 7;
    if (op != (y & 7)) return false;
    if (op == GM_PLAN_ALLOC || op == GM_PLAN_ACCESS || op == GM_PLAN_FREE)
        return a->slots[x >> 3].req == b->slots[y >> 3].req;
    return x == y;
}

static bool same_calls(const gm_ms_plan *p, const gm_ms_plan_shape *a, const gm_ms_plan_shape *b)
{
    for (uint32_t t = 0; t < p->n; t++) {
        const gm_ms_plan_call *x = a->seq[t], *y = b->seq[t];
        for (;; x++, y++) {
            if (!same_call(a, x->word, b, y->word)) return false;
            if (x->word == GM_PLAN_END) break;
        }
    }
    return true;
}

int gm_ms_plan_add_shape(gm_ms_plan *p, gm_ms_plan_shape *out)
{
    if (!make_blocks(p, out)) {
        free_shape(out);
        return -1;
    }
    uint32_t j = p->nshapes;
    for (uint32_t i = 0; i < p->nshapes && j == p->nshapes; i++)
        if (same_calls(p, &p->shape[i], out)) j = i; /* learned again: the new packing replaces it */
    if (j == GM_MS_PLAN_SHAPES) { /* full: the least recently used goes */
        j = 0;
        for (uint32_t i = 1; i < p->nshapes; i++)
            if (p->shape[i].used < p->shape[j].used) j = i;
    }
    if (j < p->nshapes) free_shape(&p->shape[j]);
    else p->nshapes++;
    p->shape[j] = *out;
    p->st.shapes = p->nshapes;
    return (int)j;
}

void gm_ms_plan_use_shape(gm_ms_plan *p, uint32_t j)
{
    gm_ms_plan_shape *sh = &p->shape[j];
    p->cur_shape = j;
    p->slots = sh->slots;
    p->nslots = sh->nslots;
    p->guards = sh->guards;
    p->frees = sh->frees;
    memcpy(p->seq, sh->seq, p->n * sizeof *p->seq);
    sh->used = p->c->iter;
    p->st.blocks = sh->nslots;
    p->st.dependent_blocks = sh->dependent_blocks;
}

void gm_ms_plan_place_shapes(gm_ms_plan *p)
{
    for (uint32_t j = 0; j < p->nshapes; j++) {
        gm_ms_plan_shape *sh = &p->shape[j];
        for (size_t i = 0; i < sh->nslots; i++)
            sh->slots[i].span = (gm_span){.addr = (uintptr_t)p->region + sh->slots[i].offset, .pages = 0};
    }
}

/* Whether shape sh began each stream t with the k[t] calls the current shape answered (sends and
 * waits: compared word for word) and expects the call now made on stream. */
static bool expects(const gm_ms_plan *p, const gm_ms_plan_shape *sh, const uint32_t *k, uint32_t stream,
                    uint64_t want, size_t size)
{
    for (uint32_t t = 0; t < p->n; t++)
        for (uint32_t i = 0; i < k[t]; i++)
            if (sh->seq[t][i].word != p->seq[t][i].word) return false; /* (an END differs from every call) */
    const uint64_t w = sh->seq[stream][k[stream]].word;
    if ((want & 7) != GM_PLAN_ALLOC) return w == want;
    return (w & 7) == GM_PLAN_ALLOC && sh->slots[w >> 3].req == size;
}

bool gm_ms_plan_switch_shape(gm_ms_plan *p, uint32_t stream, uint64_t want, size_t size)
{
    uint32_t k[GM_MAX_STREAMS];
    for (uint32_t t = 0; t < p->n; t++) k[t] = (uint32_t)(p->c->at[t] - p->seq[t]);
    int best = -1;
    for (uint32_t j = 0; j < p->nshapes; j++)
        if (j != p->cur_shape && expects(p, &p->shape[j], k, stream, want, size) &&
            (best < 0 || p->shape[j].used > p->shape[best].used))
            best = (int)j;
    if (best < 0) return false;
    gm_ms_plan_use_shape(p, (uint32_t)best);
    for (uint32_t t = 0; t < p->n; t++) p->c->at[t] = p->seq[t] + k[t];
    return true;
}
