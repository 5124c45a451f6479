/*
 * ms_events.h — what an event carries between the multi-stream allocators (reference §6.4):
 * GE's SendEvents / WaitEvents / LastSendEvents / LastWaitEvents kernels without the device
 * calls, which stay with the caller:
 *
 *     gm_ms_send_event(g, &p);  record(event, src stream);      -- on the host, in this order
 *     stream_wait(dst stream, event);  gm_ms_wait_event(g, &p);
 *
 * A payload is the event's "space": the local-recycle news of src (VersionBlocks, per
 * destination) and the borrowed blocks born on dst that go home with it.
 */
#ifndef GM_MS_EVENTS_H
#define GM_MS_EVENTS_H

#include "graphmem/graph.h"
#include "runtime/ms_l2_allocator.h"

/* One piece of local-recycle news: the queue entry, plus src's view of the block and the block's
 * access generation when it was sent (see gm_ms_block_sync_from_message). */
typedef struct gm_ms_freed_msg {
    gm_version_block e;
    uint64_t view, gen;
} gm_ms_freed_msg;

typedef struct gm_ms_event_payload {
    uint32_t src, dst; /* logic_src_stream, logic_dst_stream */
    gm_ms_freed_msg *freed; /* block_free_by_src_stream */
    size_t nfreed, capfreed;
    gm_ms_block **home;      /* block_need_return_birth */
    size_t nhome, caphome;
    uint64_t epoch;          /* src's event epoch at the first send since the last wait (0: none) */
    uint64_t *seen;          /* src's known epochs of every stream at that send (n, or NULL) */
    /* Sent and not yet waited: linked in its group's list for src -> dst (with internal
     * dependencies only), where an internal event src -> dst delivers its news early
     * (gm_ms_deliver_in_flight). */
    struct gm_ms_flight *flight;
    /* A learned plan's word for the wait on its latest send (the send's place in src's sequence),
     * and the iteration of that send */
    uint64_t plan_wait;
    uint32_t plan_iter;
    struct gm_ms_event_payload *fl_prev, *fl_next;
} gm_ms_event_payload;

void gm_ms_event_payload_init(gm_ms_event_payload *p, uint32_t src, uint32_t dst);
/* Frees the arrays (and leaves its group's in-flight list). A payload sent and never waited
 * leaves its home-going blocks to the group's destructor sweep. A payload must not move in
 * memory between its send and its wait. */
void gm_ms_event_payload_fini(gm_ms_event_payload *p);

/* SendEvent(src -> dst): appends src's unsent local-recycle news for dst (stale entries dropped)
 * and the blocks born on dst parked on src; and, not GE's, src's event epoch and what src knows of
 * the others' (the wait hands them to dst: which idle chunks of other pools dst may take,
 * ms_internal.h). All or nothing: GM_ERR_NOMEM changes nothing. */
gm_status gm_ms_send_event(gm_ms_group *g, gm_ms_event_payload *p, gm_error *err);
/* WaitEvent(on dst): applies and empties the payload — stale news skipped and counted, fresh
 * news merged, home-coming blocks birth-recycled.
 *
 * One deliberate difference from GE: GE merges src's view as it is at the wait
 * (SyncLocalRecycleStatus); we merge the view src had at the send. Between the two, src may have
 * freed the block itself or heard of other releases, and the device wait orders dst only after
 * what src did before its record — the randomized simulation (tests/test_ms_simulation.c) finds
 * reuse before release with GE's rule. */
void gm_ms_wait_event(gm_ms_group *g, gm_ms_event_payload *p);
/* Not GE's: an event src -> dst was just waited on (an internal event, ms_internal_deps.c): the
 * news of every payload src -> dst sent before it and not waited yet is applied now (the device
 * wait on the later record orders dst after those records too); their own waits later apply
 * only their epochs. */
void gm_ms_deliver_in_flight(gm_ms_group *g, uint32_t src, uint32_t dst);
/* Whether a payload src -> dst in flight carries news (messages or home-going blocks). */
bool gm_ms_news_in_flight(const gm_ms_group *g, uint32_t src, uint32_t dst);
/* Every payload still in flight leaves the group's lists (the group's destructor). */
void gm_ms_forget_in_flight(gm_ms_group *g);
/* LastWaitEvents (every stream joined): every pending local recycle resolved at its birth stream,
 * every parked block sent home, every pool's idle memory back to L1 (not with
 * recycle_before_growth, unless l1_maps_granules: the pools keep it until L1 would grow). */
void gm_ms_last_wait_events(gm_ms_group *g);

/* AccessMemCrossStream / WanderFrom: a tensor made on src is used on dst: dst takes a
 * reference (NewAccessStream(src, dst)); its FreeMemory later calls gm_ms_block_free(b, dst). */
gm_status gm_ms_access_mem_cross_stream(gm_ms_block *b, uint32_t src, uint32_t dst, gm_error *err);

#endif
