/* ms_events.c — the allocator side of the event kernels (ms_events.h, reference §6.4, §6.6). */
#include "runtime/ms_events.h"

#include <string.h>

#include "runtime/ms_internal.h"
#include "util/alloc.h"

void gm_ms_event_payload_init(gm_ms_event_payload *p, uint32_t src, uint32_t dst)
{
    *p = (gm_ms_event_payload){.src = src, .dst = dst};
}

/* ---- payloads in flight (sent, not waited) --------------------------------------------------- */

static struct gm_ms_flight *flight_of(const gm_ms_group *g, uint32_t src, uint32_t dst)
{
    return &g->in_flight[(size_t)src * g->n + dst];
}

static void flight_link(struct gm_ms_flight *f, gm_ms_event_payload *p)
{
    p->flight = f;
    p->fl_prev = NULL;
    p->fl_next = f->head;
    if (f->head) f->head->fl_prev = p;
    f->head = p;
}

static void flight_unlink(gm_ms_event_payload *p)
{
    struct gm_ms_flight *f = p->flight;
    if (p->fl_prev) p->fl_prev->fl_next = p->fl_next;
    else f->head = p->fl_next;
    if (p->fl_next) p->fl_next->fl_prev = p->fl_prev;
    f->news -= p->nfreed + p->nhome;
    p->flight = NULL;
    p->fl_prev = p->fl_next = NULL;
}

void gm_ms_forget_in_flight(gm_ms_group *g)
{
    for (size_t i = 0; i < (size_t)g->n * g->n; i++)
        while (g->in_flight[i].head) flight_unlink(g->in_flight[i].head);
}

void gm_ms_event_payload_fini(gm_ms_event_payload *p)
{
    if (p->flight) flight_unlink(p);
    gm_free(p->freed);
    gm_free(p->home);
    gm_free(p->seen);
    *p = (gm_ms_event_payload){0};
}

gm_status gm_ms_send_event(gm_ms_group *g, gm_ms_event_payload *p, gm_error *err)
{
    if (p->src >= g->n || p->dst >= g->n || p->src == p->dst)
        return gm_error_set(err, GM_ERR_USAGE, "event %u -> %u: bad streams for %u", p->src, p->dst, g->n);
    if (!g->plan) return gm_ms_send_unrecorded(g, p, err);
    /* not GE's: a learned plan has nothing to carry (ms_learned_plan.h) */
    if (gm_ms_plan_on(g) && gm_ms_plan_send(g->plan, p->src, p->dst, &p->plan_wait, &p->plan_iter)) return GM_OK;
    gm_status st = gm_ms_send_unrecorded(g, p, err);
    if (st == GM_OK && gm_ms_plan_recording(g)) gm_ms_plan_record_send(g->plan, p->src, p->dst, &p->plan_wait, &p->plan_iter);
    return st;
}

gm_status gm_ms_send_unrecorded(gm_ms_group *g, gm_ms_event_payload *p, gm_error *err)
{
    gm_ms_l2_allocator *a = g->alloc[p->src];
    /* Room for the worst case first, so that nothing is marked sent and then dropped. */
    const size_t need_freed = p->nfreed + a->local.n, need_home = p->nhome + gm_ms_l2_borrow_count(a, p->dst);
    if ((need_freed > p->capfreed && gm_grow((void **)&p->freed, sizeof *p->freed, need_freed, &p->capfreed)) ||
        (need_home > p->caphome && gm_grow((void **)&p->home, sizeof *p->home, need_home, &p->caphome)) ||
        (!p->seen && !(p->seen = gm_malloc(sizeof *p->seen * g->n))))
        return gm_error_set(err, GM_ERR_NOMEM, "out of memory sending event %u -> %u", p->src, p->dst);
    const size_t nfreed0 = p->nfreed, nhome0 = p->nhome;
    const uint64_t all = gm_vb_to_all_bit(g->n, p->src);
    gm_version_block e;
    for (size_t it = 0; gm_version_blocks_find_next(&a->local, &it, p->dst, all, &e);) {
        const gm_ms_block *b = (const gm_ms_block *)e.block;
        p->freed[p->nfreed++] = (gm_ms_freed_msg){e, gm_mif_word(&b->mif, p->src), b->gen};
    }
    /* (most sends have no parked block to take home: no call then) */
    for (gm_ms_block *b = need_home > p->nhome ? gm_ms_l2_get_and_clear_borrow_blocks(a, p->dst) : NULL; b;) {
        gm_ms_block *next = b->bt_next;
        b->bt_next = NULL;
        p->home[p->nhome++] = b;
        b = next;
    }
    /* The first send since the last wait: if the device wait is on that record, only what src
     * did before it is ordered (a later send's epoch would claim too much). */
    g->epoch[p->src]++;
    if (!p->epoch) { /* what src knows of the others travels too: the device waits are transitive */
        p->epoch = g->epoch[p->src];
        memcpy(p->seen, &g->known[(size_t)p->src * g->n], sizeof *p->seen * g->n);
    }
    const size_t news = (p->nfreed - nfreed0) + (p->nhome - nhome0);
    if (news && g->order) { /* only internal events deliver early, and only news */
        if (!p->flight) flight_link(flight_of(g, p->src, p->dst), p);
        p->flight->news += news;
    }
    g->st.events_sent++;
    return GM_OK;
}

/* The news of a payload, applied on dst and emptied: stale messages skipped and counted, fresh
 * ones merged, home-coming blocks birth-recycled. */
static inline void apply_news(gm_ms_group *g, gm_ms_event_payload *p)
{
    /* Example of staleness: S0 sends the same news to S1, S2, S3; S1 completes the recycle and
     * bumps the version; S2's and S3's copies then describe a block that moved on. */
    for (size_t i = 0; i < p->nfreed; i++) {
        const gm_ms_freed_msg *m = &p->freed[i];
        if (m->e.version != m->e.block->version) {
            g->st.stale_messages++;
            continue;
        }
        g->st.messages_sent++;
        gm_ms_block_sync_from_message((gm_ms_block *)m->e.block, p->src, p->dst, m->view, m->gen);
    }
    for (size_t i = 0; i < p->nhome; i++) gm_ms_l2_birth_recycle(g->alloc[p->dst], p->home[i]);
    g->st.returned_home += p->nhome;
    p->nfreed = p->nhome = 0;
}

void gm_ms_wait_event(gm_ms_group *g, gm_ms_event_payload *p)
{
    if (g->plan) {
        if (gm_ms_plan_on(g) && gm_ms_plan_wait(g->plan, p->dst, p->plan_wait, &p->plan_iter)) return;
        if (gm_ms_plan_recording(g)) gm_ms_plan_record_wait(g->plan, p->dst, p->plan_wait, &p->plan_iter);
    }
    gm_ms_wait_unrecorded(g, p);
}

void gm_ms_wait_unrecorded(gm_ms_group *g, gm_ms_event_payload *p)
{
    if (p->flight) flight_unlink(p); /* before its news is applied: the count drops by it */
    apply_news(g, p);
    if (p->epoch) {
        uint64_t *known = &g->known[(size_t)p->dst * g->n];
        for (uint32_t s = 0; s < g->n; s++)
            if (p->seen[s] > known[s]) known[s] = p->seen[s];
        if (p->epoch > known[p->src]) known[p->src] = p->epoch;
        p->epoch = 0;
    }
    g->st.events_waited++;
}

void gm_ms_deliver_in_flight(gm_ms_group *g, uint32_t src, uint32_t dst)
{
    struct gm_ms_flight *f = flight_of(g, src, dst);
    while (f->head) { /* each leaves the list: its wait has only its epoch left to apply */
        gm_ms_event_payload *q = f->head;
        g->st.delivered_early += q->nfreed + q->nhome;
        flight_unlink(q);
        apply_news(g, q);
    }
}

bool gm_ms_news_in_flight(const gm_ms_group *g, uint32_t src, uint32_t dst) { return flight_of(g, src, dst)->news != 0; }

void gm_ms_last_wait_events(gm_ms_group *g)
{
    if (g->plan && gm_ms_plan_quiet(g->plan)) { /* nothing dynamic happened since the last one */
        gm_ms_plan_iteration_end(g->plan);
        return;
    }
    gm_ms_settle_all(g);
    /* GE gives every pool's idle memory back to L1 here, a synchronize of each stream every
     * iteration; recycling before growth gives it back when L1 would grow instead, and the pools
     * keep it across iterations otherwise (the next one finds it where it was needed), unless L1
     * maps coarse granules (gm_ms_config.l1_maps_granules). */
    if (g->recycle_at_iteration_end)
        for (uint32_t s = 0; s < g->n; s++) gm_ms_l2_recycle_free_mem(g->alloc[s]);
    if (g->plan) gm_ms_plan_iteration_end(g->plan);
}

void gm_ms_settle_all(gm_ms_group *g)
{
    for (uint32_t s = 0; s < g->n; s++) {
        gm_version_blocks *vb = &g->alloc[s]->local;
        const uint64_t all = gm_vb_to_all_bit(g->n, s);
        gm_version_block e;
        for (size_t it = 0; gm_version_blocks_find_next_for_all(vb, &it, all, &e);) {
            gm_ms_block *b = (gm_ms_block *)e.block;
            gm_ms_block_sync_all_local_recycle_status(b, b->birth_stream);
        }
    }
    for (uint32_t s = 0; s < g->n; s++) {
        for (uint32_t d = 0; d < g->n; d++) {
            for (gm_ms_block *b = gm_ms_l2_get_and_clear_borrow_blocks(g->alloc[s], d); b;) {
                gm_ms_block *next = b->bt_next;
                b->bt_next = NULL;
                gm_ms_l2_birth_recycle(g->alloc[d], b);
                g->st.returned_home++;
                b = next;
            }
        }
    }
    gm_ms_epochs_join(g);
}

gm_status gm_ms_access_mem_cross_stream(gm_ms_block *b, uint32_t src, uint32_t dst, gm_error *err)
{
    if (src == dst) return gm_error_set(err, GM_ERR_USAGE, "AccessMemCrossStream: source and destination are both stream %u", src);
    if (!b->mem) return gm_error_set(err, GM_ERR_USAGE, "AccessMemCrossStream: the block was already recycled");
    gm_ms_group *g = b->birth->group;
    if (dst >= g->n) return gm_error_set(err, GM_ERR_USAGE, "AccessMemCrossStream: no stream %u", dst);
    if (g->plan && !gm_ms_plan_ref(g->plan, b, dst, GM_PLAN_ACCESS)) return GM_OK; /* not GE's */
    gm_ms_block_new_access_stream(b, src, dst);
    return GM_OK;
}
