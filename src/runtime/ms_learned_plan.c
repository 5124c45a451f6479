/* ms_learned_plan.c — recording an iteration and replaying its plan (ms_learned_plan.h). */
#include "runtime/ms_learned_plan.h"

#include <string.h>

#include "graphmem/log.h"
#include "runtime/ms_internal.h"
#include "util/alloc.h"

/* What every cursor points at while no plan answers (and a stream the group does not have always):
 * a call that matches no call's word, so that a hit needs no test of the mode first. */
static const uint64_t no_call = GM_PLAN_END;

/* Each stream's cursor to its sequence's start on a plan, else to no_call (the cursors of the
 * streams the group does not have stay there from gm_ms_plan_init). */
static void point_cursors(gm_ms_plan *p)
{
    const bool on = p->mode == GM_MS_PLAN_ON;
    for (uint32_t s = 0; s < p->n; s++) p->at[s] = on ? p->seq[s] : &no_call;
}

void gm_ms_plan_init(gm_ms_plan *p, uint32_t streams, const gm_mem_source *l1, size_t page,
                     int (*order)(void *, uint32_t, uint32_t), void *order_ctx)
{
    memset(p, 0, sizeof *p);
    p->n = streams;
    p->l1 = *l1;
    p->page = page;
    p->order = order;
    p->order_ctx = order_ctx;
    p->iter = 1;
    p->mode = GM_MS_PLAN_RECORD;
    for (uint32_t s = 0; s < GM_MAX_STREAMS; s++) p->at[s] = &no_call;
}

/* ---- recording ------------------------------------------------------------------------------ */

static void log_op(gm_ms_plan *p, gm_ms_plan_op op, uint32_t stream, uint64_t arg)
{
    if (p->spoiled) return;
    if (p->nlog == p->caplog && gm_grow((void **)&p->log, sizeof *p->log, p->nlog + 1, &p->caplog)) {
        p->spoiled = true; /* a recording with a hole cannot be planned */
        return;
    }
    p->log[p->nlog++] = (gm_ms_plan_rec){.op = (uint8_t)op, .stream = stream, .arg = arg};
    p->cur[stream]++;
}

void gm_ms_plan_record_malloc(gm_ms_plan *p, uint32_t stream, gm_ms_block *b, size_t size)
{
    if (!b || (p->nslots == p->capslots && gm_grow((void **)&p->slots, sizeof *p->slots, p->nslots + 1, &p->capslots))) {
        p->spoiled = true;
        return;
    }
    const size_t bytes = (size + GM_MS_PLAN_ALIGN - 1) / GM_MS_PLAN_ALIGN * GM_MS_PLAN_ALIGN;
    p->slots[p->nslots] = (gm_ms_plan_slot){.req = size, .bytes = bytes ? bytes : GM_MS_PLAN_ALIGN, .stream = stream, .refs = 1};
    b->plan_slot = (uint32_t)p->nslots++;
    b->plan_iter = p->iter;
    log_op(p, GM_PLAN_ALLOC, stream, b->plan_slot);
}

/* A block malloc'ed before the recording began cannot be planned (it lives across iterations). */
static bool recorded(gm_ms_plan *p, const gm_ms_block *b)
{
    if (b->plan_iter == p->iter && b->plan_slot < p->nslots) return true;
    p->spoiled = true;
    return false;
}

void gm_ms_plan_record_ref(gm_ms_plan *p, gm_ms_block *b, uint32_t stream, gm_ms_plan_op op)
{
    if (!recorded(p, b)) return;
    if (op == GM_PLAN_ACCESS) p->slots[b->plan_slot].refs++;
    else p->slots[b->plan_slot].refs--;
    log_op(p, op, stream, b->plan_slot);
}

/* A send is known by its place in its stream's sequence (the host may interleave the streams
 * differently in the next iteration; each stream's own order is what must repeat). */
void gm_ms_plan_record_send(gm_ms_plan *p, uint32_t src, uint32_t *send_no, uint32_t *send_iter)
{
    gm_ms_plan_mark_send(p, p->cur[src], send_no, send_iter);
    log_op(p, GM_PLAN_SEND, src, 0);
}

void gm_ms_plan_record_wait(gm_ms_plan *p, uint32_t src, uint32_t dst, uint32_t send_no, uint32_t *send_iter)
{
    log_op(p, GM_PLAN_WAIT, dst, gm_ms_plan_wait_arg(p, src, send_no, *send_iter));
    *send_iter = 0; /* consumed */
}

/* ---- replay --------------------------------------------------------------------------------- */

void gm_ms_plan_depart(gm_ms_plan *p)
{
    p->mode = GM_MS_PLAN_OFF;
    point_cursors(p);
    p->st.departures++;
    p->relearns++;
}

static bool guards_hold(const gm_ms_plan *p, const gm_ms_plan_slot *s)
{
    for (uint32_t i = 0; i < s->nguards; i++)
        if (p->slots[p->guards[s->guard0 + i]].freed_iter != p->iter) return false;
    return true;
}

static bool add_orders(gm_ms_plan *p, const gm_ms_plan_slot *s)
{
    for (uint64_t m = s->order_mask; m; m &= m - 1) {
        if (p->order(p->order_ctx, (uint32_t)__builtin_ctzll(m), s->stream)) return false;
        p->st.orders++;
    }
    return true;
}

gm_ms_block *gm_ms_plan_malloc_slow(gm_ms_plan *p, uint32_t stream, size_t size)
{
    const uint64_t next = *p->at[stream];
    gm_ms_plan_slot *s = (next & 7) == GM_PLAN_ALLOC ? &p->slots[next >> 3] : NULL;
    if (!s || s->req != size) return gm_ms_plan_depart(p), NULL;
    /* a block placed by the second rule (ms_plan_pack.c): the blocks it shares with must be gone
     * on the host by now, and its stream ordered after the streams that released them; where
     * not, the dynamic allocator serves this one malloc, and its place in the region stays empty
     * (so the blocks guarded by it need not wait for it) */
    p->at[stream]++;
    if (!guards_hold(p, s) || !add_orders(p, s)) {
        s->freed_iter = p->iter;
        p->stand_in = (uint32_t)(next >> 3) + 1;
        p->st.stand_ins++, p->stand_ins_now++;
        return NULL;
    }
    s->refs = 1;
    p->out++;
    p->st.planned_mallocs++;
    return s->block;
}

void gm_ms_plan_dynamic_block(gm_ms_plan *p, gm_ms_block *b)
{
    const uint32_t slot = p->stand_in;
    p->stand_in = 0;
    if (slot && !b) gm_ms_plan_depart(p); /* the calls naming it will not come */
    if (!b) return;
    b->plan_iter = slot ? p->iter : 0; /* a wrapper used before must not pass for a stand-in */
    b->plan_slot = slot - 1;
}

/* ---- iterations ----------------------------------------------------------------------------- */

static void drop_plan(gm_ms_plan *p)
{
    for (size_t j = 0; j < p->nslots; j++) gm_free(p->slots[j].block);
    gm_free(p->calls);
    gm_free(p->guards);
    p->calls = NULL, p->guards = NULL;
    p->nslots = p->nlog = 0;
    p->out = 0;
    p->st.blocks = p->st.dependent_blocks = 0;
}

static void give_region_back(gm_ms_plan *p)
{
    if (!p->region) return;
    p->l1.free(p->l1.ctx, p->region);
    p->region = NULL;
    p->region_bytes = p->st.region_bytes = 0;
}

static void give_up(gm_ms_plan *p)
{
    give_region_back(p);
    drop_plan(p);
    gm_free(p->log);
    gm_free(p->slots);
    p->log = NULL, p->slots = NULL;
    p->caplog = p->capslots = 0;
    p->mode = GM_MS_PLAN_NONE;
    point_cursors(p);
    p->st.gave_up = true;
}

/* A wrapper per slot, typed GM_MS_PLANNED, whose span gives its address. */
static bool make_blocks(gm_ms_plan *p, gm_ms_group *g)
{
    for (size_t j = 0; j < p->nslots; j++) {
        gm_ms_plan_slot *s = &p->slots[j];
        gm_ms_block *b = gm_ms_block_new(p->n);
        if (!b) return false;
        s->span = (gm_span){.addr = (uintptr_t)p->region + s->offset, .pages = 0};
        b->mem = &s->span;
        b->size = s->bytes;
        b->birth = g->alloc[s->stream];
        b->birth_stream = s->stream;
        b->type = GM_MS_PLANNED;
        b->plan_slot = (uint32_t)j;
        b->plan = p;
        s->block = b;
        s->refs = 0;
        s->freed_iter = 0;
        if (s->order_mask) p->st.dependent_blocks++;
    }
    p->st.blocks = p->nslots;
    return true;
}

/* The recording is whole: pack it, take the region (the pools' idle memory given back and L1
 * trimmed first, so that what it held for the recorded iteration serves the region), make the
 * wrappers. False: no plan (the caller gives up). */
static bool activate(gm_ms_plan *p, gm_ms_group *g)
{
    gm_error err;
    if (!p->nslots || gm_ms_plan_pack(p, &err) != GM_OK) return false;
    for (uint32_t s = 0; s < g->n; s++) gm_ms_l2_recycle_free_mem(g->alloc[s]);
    if (p->l1.trim) p->l1.trim(p->l1.ctx);
    if (p->l1.alloc(p->l1.ctx, p->region_bytes, &p->region)) {
        p->region = NULL;
        return false;
    }
    if (!make_blocks(p, g)) return false;
    p->st.region_bytes = p->region_bytes;
    p->st.learned++;
    return true;
}

static void next_iteration(gm_ms_plan *p)
{
    p->iter = p->iter == UINT32_MAX ? 1 : p->iter + 1;
    memset(p->cur, 0, p->n * sizeof *p->cur);
    p->stand_ins_now = 0;
    point_cursors(p);
}

/* The sync of every stream that must come before memory the device may still use leaves. */
static void sync_all(gm_ms_group *g)
{
    for (uint32_t s = 0; g->sync && s < g->n; s++) g->sync(g->sync_ctx, (int)s);
}

/* An iteration on the plan ends: it kept to it only if every stream made all its calls and
 * every planned block went (one that outlives its iteration would meet its successor). */
static void end_on_plan(gm_ms_plan *p)
{
    for (uint32_t s = 0; s < p->n && p->mode == GM_MS_PLAN_ON; s++)
        if ((*p->at[s] & 7) != GM_PLAN_END) gm_ms_plan_depart(p);
    if (p->mode == GM_MS_PLAN_ON && p->out) gm_ms_plan_depart(p);
    if (p->mode == GM_MS_PLAN_ON) {
        p->st.iterations_on++;
        p->relearns = 0;
    }
}

/* An iteration that departed ends: once no planned block is out, the region goes and the next
 * iteration is recorded, unless too many in a row departed. False: given up. */
static bool end_off_plan(gm_ms_plan *p, gm_ms_group *g)
{
    if (p->out) return true; /* planned blocks still out keep the region */
    sync_all(g);
    give_region_back(p);
    drop_plan(p);
    if (p->relearns >= GM_MS_PLAN_RELEARNS) {
        give_up(p);
        gm_log(GM_LOG_INFO, "learned plan: %u iterations in a row departed from their plan; the dynamic allocator serves alone",
               GM_MS_PLAN_RELEARNS);
        return false;
    }
    p->mode = GM_MS_PLAN_RECORD;
    p->spoiled = false;
    return true;
}

void gm_ms_plan_iteration_end(gm_ms_plan *p, gm_ms_group *g)
{
    if (p->mode == GM_MS_PLAN_NONE) return;
    if (p->mode == GM_MS_PLAN_RECORD) {
        bool whole = !p->spoiled;
        for (size_t j = 0; whole && j < p->nslots; j++) whole = p->slots[j].refs == 0;
        if (!whole || !activate(p, g)) {
            give_up(p);
            return;
        }
        p->mode = GM_MS_PLAN_ON;
    } else if (p->mode == GM_MS_PLAN_ON) {
        end_on_plan(p);
    }
    if (p->mode == GM_MS_PLAN_OFF && !end_off_plan(p, g)) return;
    next_iteration(p);
}

void gm_ms_plan_fini(gm_ms_plan *p)
{
    give_region_back(p);
    drop_plan(p);
    gm_free(p->log);
    gm_free(p->slots);
    memset(p, 0, sizeof *p);
}
