/*
 * ms_fast_path.h — not GE's: the multi-stream group's hot calls with a learned plan's answer
 * inline (ms_learned_plan.h).
 *
 * On a plan each call of an iteration is answered by a compare against its stream's recorded
 * sequence and a cursor move, a handful of instructions. Made as a call into the allocator's
 * files it costs several times that in the call, the pointer chase to the plan and the checks of
 * the dynamic path (control_flow's trace: about 43 instructions a call). Callers on the hot path
 * (the executor, bench_alloc) call these instead. Each answers in line when the call keeps to the
 * plan and otherwise makes the call itself, which checks again and departs, records, or serves
 * dynamically: the same semantics as the call, in every mode.
 */
#ifndef GM_MS_FAST_PATH_H
#define GM_MS_FAST_PATH_H

#include "runtime/ms_events.h"
#include "runtime/ms_internal.h"

/* No test of the plan's mode, nor of whether the group has one: while no plan answers, every
 * cursor (the group's, gm_ms_cursors) points at a call that matches no call, and so does the cursor
 * of a stream the group does not have. */

/* gm_ms_l2_malloc */
static inline gm_ms_block *gm_ms_fast_malloc(gm_ms_l2_allocator *a, size_t size)
{
    gm_ms_block *b = gm_ms_plan_malloc_hit(a->cursor, size);
    return b ? b : gm_ms_l2_malloc(a, size);
}

/* A planned block's reference taken or dropped on stream, in line: true when answered. */
static inline bool gm_ms_fast_ref(gm_ms_block *b, uint32_t stream, gm_ms_plan_op op)
{
    gm_ms_cursors *c = b->cursors;
    return c && stream < GM_MAX_STREAMS && gm_ms_plan_hit(c, stream, op | (uint64_t)b->plan_slot << 3);
}

/* gm_ms_block_free */
static inline void gm_ms_fast_free(gm_ms_block *b, uint32_t stream)
{
    if (!gm_ms_fast_ref(b, stream, GM_PLAN_FREE)) gm_ms_block_free(b, stream);
}

/* gm_ms_access_mem_cross_stream (its usage errors are the call's to report) */
static inline gm_status gm_ms_fast_access(gm_ms_block *b, uint32_t src, uint32_t dst, gm_error *err)
{
    if (src != dst && gm_ms_fast_ref(b, dst, GM_PLAN_ACCESS)) return GM_OK;
    return gm_ms_access_mem_cross_stream(b, src, dst, err);
}

/* gm_ms_send_event. The expected call names its destination (a valid stream, not src): a
 * payload to another one misses, and the call reports it or departs. */
static inline gm_status gm_ms_fast_send(gm_ms_group *g, gm_ms_event_payload *e, gm_error *err)
{
    if (e->src < GM_MAX_STREAMS && gm_ms_plan_send_hit(&g->cursors, e->src, e->dst, &e->plan_wait, &e->plan_iter)) return GM_OK;
    return gm_ms_send_event(g, e, err);
}

/* gm_ms_wait_event */
static inline void gm_ms_fast_wait(gm_ms_group *g, gm_ms_event_payload *e)
{
    if (e->dst < GM_MAX_STREAMS && gm_ms_plan_wait_hit(&g->cursors, e->dst, e->plan_wait, &e->plan_iter)) return;
    gm_ms_wait_event(g, e);
}

#endif
