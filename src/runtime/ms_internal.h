/* ms_internal.h — the multi-stream allocator group's fields, shared by its three files. */
#ifndef GM_MS_INTERNAL_H
#define GM_MS_INTERNAL_H

#include "runtime/borrow_allocator.h"
#include "runtime/l2_mem_pool.h"
#include "runtime/ms_l2_allocator.h"
#include "runtime/ms_learned_plan.h"

/* One L1 binding: what the pool's chunks were taken from (kept until the group dies, since a
 * chunk frees through the binding it was fetched with). */
typedef struct gm_ms_l1_binding {
    gm_mem_source l1;
    gm_ms_group *group;
    struct gm_ms_l1_binding *next;
} gm_ms_l1_binding;

struct gm_ms_l2_allocator {
    uint32_t stream;
    gm_ms_group *group;
    const gm_ms_plan_call **cursor; /* its stream's cursor in its group's (ms_learned_plan.h) */
    gm_l2_mem_pool *pool;
    gm_borrow_allocator borrow;
    gm_version_blocks local;   /* local_recycle_blocks_ */
    gm_ms_block *live;         /* blocks born here and not birth-recycled */
    gm_ms_block *spare;        /* wrapper pool (ms_block_pool_) */
    gm_ms_l1_binding *bindings;
};

struct gm_ms_group {
    uint32_t n;
    gm_ms_l2_allocator **alloc;
    gm_ms_stats st;
    gm_sync_fn sync;
    void *sync_ctx;
    bool in_l1_ladder; /* the L1 adaptor's recycle-each-pool step is running */
    bool recycle_before_growth; /* gm_ms_config.recycle_before_growth */
    bool recycle_at_iteration_end; /* LastWaitEvents gives the pools' idle memory back: GE's
                                      mode, or l1_maps_granules */
    bool l1_within_only;        /* L1 may not grow for this malloc (ms_l2_allocator.c: malloc_settled) */
    /* Event epochs (cross-stream sharing of idle chunks, not GE's): epoch[s] counts the events s
     * sent; known[t * n + s] is the latest epoch of s that t has waited for, directly or through
     * a stream that had (an event carries its sender's row). A chunk of s's pool that went idle
     * at s's epoch e is safe on t once known[t][s] > e: t's stream then runs after an event s
     * recorded after the chunk's last use. */
    uint64_t *epoch, *known;
    /* Internal dependencies (gm_ms_config.order; not GE's): a payload per stream pair, made on
     * first use. */
    int (*order)(void *ctx, uint32_t from, uint32_t to);
    void *order_ctx;
    struct gm_ms_event_payload *ipay;
    /* Payloads sent and not waited, per (src, dst) at [src * n + dst] (ms_events.c): the list,
     * and the messages and home-going blocks they carry together. */
    struct gm_ms_flight {
        struct gm_ms_event_payload *head;
        size_t news;
    } *in_flight;
    gm_ms_plan *plan; /* gm_ms_config.learn_plan (not GE's); NULL: none */
    gm_ms_cursors cursors; /* the plan's cursors (every one at gm_ms_no_call while it answers nothing) */
};

/* The learned plan answers this iteration's calls (ms_learned_plan.h). */
static inline bool gm_ms_plan_on(const gm_ms_group *g) { return g->plan && g->plan->mode == GM_MS_PLAN_ON; }
static inline bool gm_ms_plan_recording(const gm_ms_group *g) { return g->plan && g->plan->mode == GM_MS_PLAN_RECORD; }

/* The stream's pool shares its idle chunks / asks the others (ms_l2_allocator.c). */
bool gm_ms_share_into(void *ctx, size_t size);
/* Internal dependencies (ms_internal_deps.c): streams holding releases a's stream has not heard
 * of send it internal events; true when any did. */
bool gm_ms_wait_for_releases(gm_ms_l2_allocator *a, size_t size);
void gm_ms_internal_deps_fini(gm_ms_group *g);
/* The group's own events (internal dependencies): the protocol of gm_ms_send_event /
 * gm_ms_wait_event without a learned plan's checking or recording — a replay will not make them. */
struct gm_ms_event_payload;
gm_status gm_ms_send_unrecorded(gm_ms_group *g, struct gm_ms_event_payload *p, gm_error *err);
void gm_ms_wait_unrecorded(gm_ms_group *g, struct gm_ms_event_payload *p);
/* Every stream joined: everything idle so far is safe on every stream. */
void gm_ms_epochs_join(gm_ms_group *g);
/* Every stream joined (LastWaitEvents), or every stream synchronized: each release made so far is
 * known everywhere; blocks released by all go home (ms_events.c). */
void gm_ms_settle_all(gm_ms_group *g);

#endif
