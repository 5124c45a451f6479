/* ms_l2_allocator.c — per-stream allocators and their three recycle modes (ms_l2_allocator.h). */
#include "runtime/ms_internal.h"
#include "runtime/ms_events.h"

#include <string.h>

#include "graphmem/log.h"
#include "util/alloc.h"

/* ---- the L1 adaptor (GE's MultiStreamL1Allocator) ------------------------------------------ */

/* L1 ran dry: the pools give their idle memory back to L1 in turn, each synchronized first, and
 * the allocation is retried after each pool that gave something; the first success ends it
 * (GE's order). A pool asked while it is itself fetching is consistent at that point
 * (ScalableAllocator touches no shared state around the source call). */
static int recycle_pools(gm_ms_group *g, const gm_ms_l1_binding *bd, size_t bytes, void **ptr)
{
    g->in_l1_ladder = true;
    int rc = -1;
    for (uint32_t s = 0; s < g->n && rc; s++)
        if (gm_ms_l2_recycle_free_mem(g->alloc[s])) rc = bd->l1.alloc(bd->l1.ctx, bytes, ptr);
    g->in_l1_ladder = false;
    return rc;
}

/* Every pool gives its idle memory back (each synchronized first); whether any had some. */
static bool recycle_all_pools(gm_ms_group *g)
{
    g->in_l1_ladder = true;
    bool any = false;
    for (uint32_t s = 0; s < g->n; s++)
        if (gm_ms_l2_recycle_free_mem(g->alloc[s])) any = true;
    g->in_l1_ladder = false;
    return any;
}

/* L1 ran dry: the pools give their idle memory back and the allocation is retried. With
 * recycle_before_growth, they also do before L1 would grow, whenever any holds idle memory (all
 * of them, then the allocation goes on as usual). */
static int l1_alloc(void *ctx, size_t bytes, void **ptr)
{
    gm_ms_l1_binding *bd = ctx;
    gm_ms_group *g = bd->group;
    if (g->recycle_before_growth && bd->l1.alloc_within && !g->in_l1_ladder) {
        if (bd->l1.alloc_within(bd->l1.ctx, bytes, ptr) == 0) return 0;
        /* all of them: what one pool gives back merges best with what the others do (recycling
         * in turn until one fits left transformer_encoder at 1.44x its peak, against 1.00x); and
         * whatever they hold, since L1 may unmap it to map the request elsewhere (waiting for
         * enough idle memory to serve the request left resnet50 on 2 streams at 1.33x) */
        if (recycle_all_pools(g)) {
            g->st.growth_ladders++;
            if (bd->l1.alloc_within(bd->l1.ctx, bytes, ptr) == 0) return 0;
        }
    }
    if (g->l1_within_only) return -1; /* malloc_settled asks first */
    if (bd->l1.alloc(bd->l1.ctx, bytes, ptr) == 0) return 0;
    return g->in_l1_ladder ? -1 : recycle_pools(g, bd, bytes, ptr);
}

static void l1_free(void *ctx, void *ptr)
{
    gm_ms_l1_binding *bd = ctx;
    bd->l1.free(bd->l1.ctx, ptr);
}

static int l1_free_part(void *ctx, void *base, void *addr, size_t bytes)
{
    gm_ms_l1_binding *bd = ctx;
    return bd->l1.free_part(bd->l1.ctx, base, addr, bytes);
}

static gm_ms_l1_binding *bind_l1(gm_ms_l2_allocator *a, const gm_mem_source *l1, gm_mem_source *as_source)
{
    gm_ms_l1_binding *bd = gm_malloc(sizeof *bd);
    if (!bd) return NULL;
    *bd = (gm_ms_l1_binding){*l1, a->group, a->bindings};
    a->bindings = bd;
    /* recycle_before_growth: a pool's recycle gives back the idle parts of its chunks too */
    const bool parts = l1->free_part && a->group->recycle_before_growth;
    *as_source = (gm_mem_source){.ctx = bd, .alloc = l1_alloc, .free = l1_free, .free_part = parts ? l1_free_part : NULL};
    return bd;
}

/* ---- wrappers ------------------------------------------------------------------------------ */

static gm_ms_block *wrapper_get(gm_ms_l2_allocator *a)
{
    gm_ms_block *b = a->spare;
    if (b) {
        a->spare = b->pool_next;
        return b;
    }
    return gm_ms_block_new(a->group->n);
}

static void wrapper_put(gm_ms_l2_allocator *a, gm_ms_block *b)
{
    b->pool_next = a->spare;
    a->spare = b;
}

static void live_insert(gm_ms_l2_allocator *a, gm_ms_block *b)
{
    b->live_prev = NULL;
    b->live_next = a->live;
    if (a->live) a->live->live_prev = b;
    a->live = b;
}

static void live_remove(gm_ms_l2_allocator *a, gm_ms_block *b)
{
    if (b->live_prev) b->live_prev->live_next = b->live_next;
    else a->live = b->live_next;
    if (b->live_next) b->live_next->live_prev = b->live_prev;
    b->live_prev = b->live_next = NULL;
}

/* ---- group --------------------------------------------------------------------------------- */

static gm_ms_l2_allocator *allocator_create(gm_ms_group *g, uint32_t s, const gm_ms_config *cfg,
                                            const gm_mem_source *l1)
{
    gm_ms_l2_allocator *a = gm_calloc(1, sizeof *a);
    if (!a) return NULL;
    a->stream = s;
    a->group = g;
    a->cursor = &g->cursors.at[s];
    gm_mem_source src;
    if (!bind_l1(a, l1, &src) || !(a->pool = gm_l2_pool_create((int)s, &src, &cfg->l2, cfg->sync, cfg->sync_ctx))) {
        if (a->bindings) gm_free(a->bindings);
        gm_free(a);
        return NULL;
    }
    gm_l2_pool_set_sharing(a->pool, gm_ms_share_into, a);
    gm_l2_pool_set_stamp(a->pool, &g->epoch[s]); /* read when a chunk goes idle: sends only count */
    return a;
}

gm_status gm_ms_group_create(const gm_ms_config *cfg, const gm_mem_source *l1, gm_ms_group **out, gm_error *err)
{
    *out = NULL;
    if (cfg->streams == 0 || cfg->streams > GM_MAX_STREAMS)
        return gm_error_set(err, GM_ERR_USAGE, "multi-stream allocator: %u streams (1..%d)", cfg->streams, GM_MAX_STREAMS);
    gm_ms_group *g = gm_calloc(1, sizeof *g);
    if (!g || !(g->alloc = gm_calloc(cfg->streams, sizeof *g->alloc))) {
        gm_free(g);
        return gm_error_set(err, GM_ERR_NOMEM, "out of memory creating the multi-stream allocators");
    }
    g->n = cfg->streams;
    gm_ms_cursors_init(&g->cursors);
    if (!(g->epoch = gm_calloc(g->n, sizeof *g->epoch)) || !(g->known = gm_calloc((size_t)g->n * g->n, sizeof *g->known)) ||
        !(g->in_flight = gm_calloc((size_t)g->n * g->n, sizeof *g->in_flight))) {
        gm_free(g->known);
        gm_free(g->epoch);
        gm_free(g->alloc);
        gm_free(g);
        return gm_error_set(err, GM_ERR_NOMEM, "out of memory creating the multi-stream allocators");
    }
    g->sync = cfg->sync;
    g->sync_ctx = cfg->sync_ctx;
    g->order = cfg->order;
    g->order_ctx = cfg->order_ctx;
    g->recycle_before_growth = cfg->recycle_before_growth;
    g->recycle_at_iteration_end = !cfg->recycle_before_growth || cfg->l1_maps_granules;
    for (uint32_t s = 0; s < g->n; s++) {
        if (!(g->alloc[s] = allocator_create(g, s, cfg, l1))) {
            gm_ms_group_destroy(g);
            return gm_error_set(err, GM_ERR_NOMEM, "out of memory creating the multi-stream allocators");
        }
    }
    if (cfg->learn_plan) {
        if (!(g->plan = gm_malloc(sizeof *g->plan))) {
            gm_ms_group_destroy(g);
            return gm_error_set(err, GM_ERR_NOMEM, "out of memory creating the multi-stream allocators");
        }
        gm_ms_plan_init(g->plan, g, l1, (size_t)1 << cfg->l2.page_shift);
    }
    *out = g;
    return GM_OK;
}

gm_ms_l2_allocator *gm_ms_group_allocator(gm_ms_group *g, uint32_t stream) { return g->alloc[stream]; }
uint32_t gm_ms_group_streams(const gm_ms_group *g) { return g->n; }
uint32_t gm_ms_l2_stream(const gm_ms_l2_allocator *a) { return a->stream; }

void gm_ms_group_plan_stats(const gm_ms_group *g, gm_ms_plan_stats *out)
{
    *out = g->plan ? g->plan->st : (gm_ms_plan_stats){0};
    size_t sent = 0, waited = 0;
    if (g->plan) gm_ms_plan_uncounted(g->plan, &sent, &waited, &out->planned_mallocs);
}

void gm_ms_group_stats(const gm_ms_group *g, gm_ms_stats *out, size_t *reserved)
{
    *out = g->st;
    size_t mallocs = 0;
    if (g->plan) gm_ms_plan_uncounted(g->plan, &out->events_sent, &out->events_waited, &mallocs);
    if (reserved) *reserved = gm_ms_group_reserved(g);
}

size_t gm_ms_group_reserved(const gm_ms_group *g)
{
    size_t reserved = 0;
    for (uint32_t s = 0; s < g->n; s++) {
        const gm_scalable_stats *ps = gm_l2_pool_stats(g->alloc[s]->pool);
        reserved += ps->occupied + ps->idle;
    }
    return reserved;
}

/* ---- malloc ---------------------------------------------------------------------------------- */

/* Wraps the pool's mem as a block born here. */
static gm_ms_block *wrap_own(gm_ms_l2_allocator *a, gm_span *mem)
{
    gm_ms_block *b = wrapper_get(a);
    gm_error err;
    if (!b || gm_ms_block_reinit(b, a, mem, gm_l2_pool_span_size(a->pool, mem), GM_MS_NORM, &err) != GM_OK) {
        if (b) wrapper_put(a, b);
        gm_l2_pool_free(a->pool, mem);
        return NULL;
    }
    live_insert(a, b);
    gm_ms_stats *st = &a->group->st;
    st->allocated += b->size;
    if (st->allocated > st->peak_allocated) st->peak_allocated = st->allocated;
    return b;
}

static gm_ms_block *malloc_own(gm_ms_l2_allocator *a, size_t size, bool cached_only)
{
    gm_span *mem = cached_only ? gm_l2_pool_malloc_cached(a->pool, size) : gm_l2_pool_malloc(a->pool, size);
    return mem ? wrap_own(a, mem) : NULL;
}

/* A block parked here that fits (at most 1/8 over what an own allocation would take), or NULL. */
static gm_ms_block *lend_parked_fit(gm_ms_l2_allocator *a, size_t size)
{
    if (!a->borrow.count) return NULL;
    size_t want = gm_l2_pool_block_bytes(a->pool, size);
    return gm_borrow_alloc_fit(&a->borrow, size, want + want / 8);
}

/* The longest parked block lent where the own pool would have to grow. In GE's mode any: a pool
 * that grows keeps the memory until LastWaitEvents, a parked block goes home at the next event.
 * With recycle_before_growth, where the pools give idle memory back before L1 grows, at most
 * twice what the pool would take: a longer block is held, unused beyond the request, as long
 * as the borrower uses it (transformer LM on 4 streams: a 1 MiB block lent for 1 KiB; reserved
 * 1.164x its peak with any length, 1.021x with twice). */
static size_t longest_lend(const gm_ms_l2_allocator *a, size_t size)
{
    if (!a->group->recycle_before_growth) return SIZE_MAX;
    const size_t want = gm_l2_pool_block_bytes(a->pool, size);
    return want <= SIZE_MAX / 2 ? 2 * want : SIZE_MAX;
}

/* Where the own pool would have to grow: another stream's idle chunk that is safe here
 * (gm_ms_share_into), else a longer parked block (GE borrows only once the pool failed).
 * Not GE's, like the lending first. */
static gm_ms_block *from_other_streams(gm_ms_l2_allocator *a, size_t size)
{
    gm_ms_block *b = gm_ms_share_into(a, size) ? malloc_own(a, size, true) : NULL;
    if (!b && a->borrow.count) b = gm_borrow_alloc_fit(&a->borrow, size, longest_lend(a, size));
    return b;
}

static gm_ms_block *malloc_dynamic(gm_ms_l2_allocator *a, size_t size);

gm_ms_block *gm_ms_l2_malloc(gm_ms_l2_allocator *a, size_t size)
{
    gm_ms_group *g = a->group;
    if (g->plan) { /* not GE's: a learned plan answers, or records the answer (ms_learned_plan.h) */
        gm_ms_block *b = gm_ms_plan_on(g) ? gm_ms_plan_malloc(g->plan, a->stream, size) : NULL;
        if (b) return b;
        b = malloc_dynamic(a, size);
        if (gm_ms_plan_recording(g)) gm_ms_plan_record_malloc(g->plan, a->stream, b, size);
        else gm_ms_plan_dynamic_block(g->plan, b);
        return b;
    }
    return malloc_dynamic(a, size);
}

/* Whether some release waits for an event to be known where it would be reused: a stream's
 * local-recycle news, or blocks parked away from their birth stream. */
static bool releases_pending(const gm_ms_group *g)
{
    for (uint32_t s = 0; s < g->n; s++)
        if (g->alloc[s]->local.n || g->alloc[s]->borrow.count) return true;
    return false;
}

/* Memory first, not GE's: before L1 grows, and while releases still wait for events (with several
 * streams, most of what the pools hold at their peak: resnet18 train on 8 streams held 155.9 MB in
 * blocks, against 98.1 MB on one stream), every stream is synchronized: the device has then done
 * everything enqueued, so every release made on the host is known everywhere, and the blocks
 * released by all their users go home as at LastWaitEvents (gm_ms_settle_all). Tried only where
 * the pool cannot be served within what L1 holds already (one synchronize of every stream per L1
 * growth at most). */
static gm_ms_block *malloc_within_l1(gm_ms_l2_allocator *a, size_t size)
{
    a->group->l1_within_only = true;
    gm_ms_block *b = malloc_own(a, size, false);
    a->group->l1_within_only = false;
    return b;
}

static gm_ms_block *malloc_settled(gm_ms_l2_allocator *a, size_t size)
{
    gm_ms_group *g = a->group;
    if (!g->sync || !releases_pending(g)) return NULL;
    gm_ms_block *b = malloc_within_l1(a, size);
    if (b) return b;
    for (uint32_t s = 0; s < g->n; s++) g->sync(g->sync_ctx, (int)s);
    gm_ms_settle_all(g);
    g->st.settles++;
    /* what went home serves through the pools' recycle into L1 (l1_alloc), or parked here */
    b = lend_parked_fit(a, size);
    if (!b) b = malloc_within_l1(a, size);
    if (!b) g->st.settles_in_vain++;
    return b;
}

static gm_ms_block *malloc_dynamic(gm_ms_l2_allocator *a, size_t size)
{
    gm_ms_stats *st = &a->group->st;
    /* A parked block that fits is lent before the own pool grows: our view already says no
     * stream uses it, so it is as safe as our own memory, and otherwise it sits idle, out of
     * every pool, until an event takes it home. GE tries its own pool first and borrows only when
     * that fails; lending first cuts the reservation of multi-stream runs (resnet50 on 4
     * streams: 8.5 -> 3.1 x the peak). */
    gm_ms_block *b = lend_parked_fit(a, size);
    /* cached memory only when a step below may serve before the pool grows (else the pool's
     * own malloc at the end looks in the cache first anyway) */
    const bool later = a->borrow.count || a->group->order;
    if (!b) b = malloc_own(a, size, later);
    if (!b && a->borrow.count) b = from_other_streams(a, size);
    /* Still nothing: wait for the other streams' releases (internal dependencies), then look
     * again where they land (parked here, home here, or idle chunks now safe to take). */
    if (!b && a->group->order && gm_ms_wait_for_releases(a, size)) {
        b = lend_parked_fit(a, size);
        if (!b) b = malloc_own(a, size, true);
        if (!b) b = from_other_streams(a, size);
    }
    if (!b && later && a->group->recycle_before_growth) b = malloc_settled(a, size);
    if (!b && later) b = malloc_own(a, size, false);
    if (!b) b = gm_borrow_alloc(&a->borrow, size);
    if (b && b->birth != a) {
        gm_ms_block_new_access_stream(b, a->stream, a->stream);
        b->type = GM_MS_BORROW;
        st->borrow_hits++;
    }
    if (b) st->mallocs++;
    else st->malloc_failures++;
    return b;
}

/* ---- the three recycle modes --------------------------------------------------------------- */

void gm_ms_l2_birth_recycle(gm_ms_l2_allocator *a, gm_ms_block *b)
{
    b->v.version++; /* every queued message about it is stale now */
    gm_l2_pool_free(a->pool, b->mem);
    b->mem = NULL;
    live_remove(a, b);
    wrapper_put(a, b);
    a->group->st.allocated -= b->size;
    a->group->st.birth_recycles++;
}

/* Parked on a (not its birth stream) with a fresh MIF, ready to be lent out here. */
static void borrow_recycle(gm_ms_l2_allocator *a, gm_ms_block *b)
{
    b->v.version++;
    gm_mif_reinit(&b->mif, b->mif.n); /* same size: never allocates */
    gm_ms_block_clear_slots(b, a->group->n, false);
    gm_borrow_add(&a->borrow, b);
    a->group->st.borrow_recycles++;
}

static void local_recycle(gm_ms_l2_allocator *a, gm_ms_block *b)
{
    a->group->st.local_recycles++;
    if (gm_version_blocks_push(&a->local, &b->v)) {
        /* The news stays here; the block is found again at the end (LastWaitEvents cannot see
         * it either, so the destructor's sweep returns it). */
        a->group->st.lost_messages++;
        gm_log(GM_LOG_WARN, "multi-stream allocator: out of memory queueing a local recycle");
    }
}

void gm_ms_l2_free_at(gm_ms_l2_allocator *a, gm_ms_block *b)
{
    const uint32_t s = a->stream;
    bool need_recycle = false;
    if (b->counts[s] > 0 && --b->counts[s] == 0) {
        gm_ms_block_update_local_recycle_mif(b, s);
        need_recycle = true;
    }
    if (gm_ms_block_can_global_recycle(b, s)) {
        if (b->birth_stream == s) gm_ms_l2_birth_recycle(a, b);
        else borrow_recycle(a, b);
    } else if (need_recycle) {
        local_recycle(a, b);
    }
}

/* ---- cross-stream sharing of idle chunks (not GE's) ----------------------------------------- */

/* GE's pools never share: idle memory in one stream's pool waits for that stream, or for a
 * synchronize + recycle to L1, while another stream's pool fetches more (resnet50 held 1.0x its
 * peak on one stream, 1.33x on two, 3.3x on four). A pool about to fetch from L1 takes a wholly
 * idle chunk of another stream's pool instead when its own stream has waited for an event that
 * stream sent after the chunk went idle: the device then orders every later use here after the
 * chunk's last use there, which is all a synchronize would have bought. */
bool gm_ms_share_into(void *ctx, size_t size)
{
    gm_ms_l2_allocator *a = ctx;
    gm_ms_group *g = a->group;
    const uint64_t *known = g->known + (size_t)a->stream * g->n;
    uint32_t best = a->stream;
    size_t best_bytes = SIZE_MAX;
    for (uint32_t s = 0; s < g->n; s++) { /* the shortest chunk that fits, of all pools */
        size_t fit = s != a->stream && known[s] ? gm_l2_pool_idle_fit(g->alloc[s]->pool, size, known[s]) : 0;
        if (fit && fit < best_bytes) best = s, best_bytes = fit;
    }
    if (best == a->stream || !gm_l2_pool_give_idle(g->alloc[best]->pool, size, known[best], a->pool)) return false;
    g->st.shared_chunks++;
    return true;
}

void gm_ms_epochs_join(gm_ms_group *g)
{
    for (uint32_t s = 0; s < g->n; s++) {
        g->epoch[s]++;
        for (uint32_t t = 0; t < g->n; t++) g->known[(size_t)t * g->n + s] = g->epoch[s];
    }
}

/* ---- the rest -------------------------------------------------------------------------------- */

gm_ms_block *gm_ms_l2_get_and_clear_borrow_blocks(gm_ms_l2_allocator *a, uint32_t dst)
{
    return gm_borrow_take_stream(&a->borrow, dst);
}

size_t gm_ms_l2_borrow_count(const gm_ms_l2_allocator *a, uint32_t birth_stream)
{
    return a->borrow.stream_count[birth_stream];
}

gm_version_blocks *gm_ms_l2_local_recycle_blocks(gm_ms_l2_allocator *a) { return &a->local; }

gm_status gm_ms_l2_set_l1(gm_ms_l2_allocator *a, const gm_mem_source *l1, gm_error *err)
{
    gm_mem_source src;
    if (!bind_l1(a, l1, &src)) return gm_error_set(err, GM_ERR_NOMEM, "out of memory switching the L1 allocator");
    gm_l2_pool_set_l1(a->pool, &src);
    return GM_OK;
}

size_t gm_ms_l2_recycle_free_mem(gm_ms_l2_allocator *a) { return gm_l2_pool_recycle(a->pool); }

const gm_scalable_stats *gm_ms_l2_pool_stats(const gm_ms_l2_allocator *a) { return gm_l2_pool_stats(a->pool); }

/* ---- teardown -------------------------------------------------------------------------------- */

static void return_borrowed_home(gm_ms_group *g, gm_ms_l2_allocator *a)
{
    for (uint32_t d = 0; d < g->n; d++) {
        gm_ms_block *b = gm_borrow_take_stream(&a->borrow, d);
        while (b) {
            gm_ms_block *next = b->bt_next;
            b->bt_next = NULL;
            gm_ms_l2_birth_recycle(g->alloc[d], b);
            b = next;
        }
    }
}

/* Everything but the pool, which the group destroys first (allocator_free's caller). */
static void allocator_free(gm_ms_l2_allocator *a)
{
    gm_borrow_fini(&a->borrow);
    gm_version_blocks_fini(&a->local);
    while (a->spare) {
        gm_ms_block *b = a->spare;
        a->spare = b->pool_next;
        gm_mif_fini(&b->mif);
        gm_free(b);
    }
    while (a->bindings) {
        gm_ms_l1_binding *bd = a->bindings;
        a->bindings = bd->next;
        gm_free(bd);
    }
    gm_free(a);
}

size_t gm_ms_group_destroy(gm_ms_group *g)
{
    if (!g) return 0;
    /* Messages first (they point at wrappers), then blocks parked away from home, then the
     * blocks the user never freed; only then can the pools go. */
    for (uint32_t s = 0; s < g->n; s++)
        if (g->alloc[s]) gm_version_blocks_clear(&g->alloc[s]->local);
    for (uint32_t s = 0; s < g->n; s++)
        if (g->alloc[s]) return_borrowed_home(g, g->alloc[s]);
    size_t leaked = g->plan ? gm_ms_plan_stop(g->plan) : 0; /* planned blocks never freed: their region goes below */
    for (uint32_t s = 0; s < g->n; s++) {
        gm_ms_l2_allocator *a = g->alloc[s];
        while (a && a->live) {
            gm_ms_l2_birth_recycle(a, a->live);
            leaked++;
        }
    }
    g->st.leaked_blocks += leaked;
    /* A run that stopped early (out of device memory) leaves its live tensors' blocks out: the
     * count is in the stats (leaked_blocks), where a test asserts it, and the line is for -v,
     * not for a user who has just been told why the run stopped. */
    if (leaked) gm_log(GM_LOG_INFO, "multi-stream allocator: %zu blocks still in use at destroy; force birth-recycled", leaked);
    for (uint32_t s = 0; s < g->n; s++)
        if (g->alloc[s]) gm_l2_pool_destroy(g->alloc[s]->pool);
    /* Only then the L1 bindings: a pool may hold a chunk that another stream's pool fetched (idle
     * chunks shared between streams), which goes back through that pool's binding. */
    for (uint32_t s = 0; s < g->n; s++)
        if (g->alloc[s]) allocator_free(g->alloc[s]);
    gm_ms_internal_deps_fini(g);
    gm_ms_forget_in_flight(g);
    if (g->plan) {
        gm_ms_plan_fini(g->plan);
        gm_free(g->plan);
    }
    gm_free(g->in_flight);
    gm_free(g->alloc);
    gm_free(g->epoch);
    gm_free(g->known);
    gm_free(g);
    return leaked;
}
