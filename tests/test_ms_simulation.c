/*
 * test_ms_simulation.c — a randomized, single-threaded run of the whole multi-stream allocator
 * stack (L1 caching allocator over a small fake device, 8 per-stream L2 pools, borrowing, local
 * recycle messages carried by events) against a shadow model, checked after every operation.
 *
 * The shadow model gives every stream a vector clock: an operation ticks its stream, an event
 * carries the sender's clock to the waiter, and a synchronize of stream s (the allocators call it
 * before memory leaves a stream's pool) makes everything s knows complete for everybody. Every
 * page remembers, per stream, when that stream last used it. The invariants:
 *   1. a block is never handed out while any stream still holds a reference to one of its pages;
 *   2. the stream that gets it has seen (through events or synchronizes) every earlier release
 *      of its pages — the device could otherwise still be using them (also when the pages come
 *      from another stream's pool: idle chunks shared after an event, not GE's);
 *   3. bytes agree between levels: group.allocated = sum of the pools' occupied bytes,
 *      pools' held bytes = L1 occupied, L1 held bytes = what the device lent out;
 *   4. at the end (every reference dropped, LastWaitEvents) everything went back: nothing
 *      allocated, every pool empty, the device whole after L1's recycle, no leak at destroy.
 *
 * Operations: GM_SIM_OPS (default 10^6) allocator calls among malloc, free, cross-stream access,
 * event send and event wait, on GM_SIM_SEED (default 1). The run is made three times: with GE's
 * reuse rules; with internal dependencies (gm_ms_config.order, not GE's), where the allocator may
 * make a stream wait for another to reuse what it released — the model then merges the clocks as
 * the device wait would, and invariant 2 checks that no reuse ran ahead of a dependency, nor of
 * the news of events still in flight that an internal event delivers early; and
 * memory first (internal dependencies, an expandable L1 over the fake device's virtual memory,
 * the pools recycling before L1 grows): memory moves between streams through synchronizes and
 * through pages unmapped in one place and mapped in another, and invariant 2 checks both.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake_mem_source.h"
#include "graphmem/log.h"
#include "runtime/caching_allocator.h"
#include "runtime/ms_events.h"
#include "runtime/ms_l2_allocator.h"

#define NS 8
#define PAGES 512
#define MAXH 160

typedef struct handle {
    gm_ms_block *b;
    uint32_t refs[NS];
    uint32_t total;
    size_t first, npages;
} handle;

typedef struct sim {
    uint64_t rng;
    uint64_t clock[NS][NS];
    uint64_t synced[NS];     /* synced[t]: t's work up to this tick is complete */
    uint64_t rel[PAGES][NS]; /* tick at which stream t last released the page (0 = never) */
    int owner[PAGES];        /* handle slot holding the page, or -1 */
    handle h[MAXH];
    size_t nh;
    gm_ms_event_payload ev[NS][NS];
    uint64_t ev_clock[NS][NS][NS];
    int pending[NS][NS];
    fake_src dev;
    gm_caching_allocator *l1;
    gm_ms_group *g;
    size_t ops, mallocs, failed, frees, accesses, sends, waits;
} sim;

static uint64_t rnd(sim *s)
{
    s->rng ^= s->rng << 13;
    s->rng ^= s->rng >> 7;
    s->rng ^= s->rng << 17;
    return s->rng;
}

static void tick(sim *s, uint32_t st) { s->clock[st][st]++; }

/* A synchronize of stream st: everything st has seen is done on the device. */
static void sync_stream(sim *s, uint32_t st)
{
    for (uint32_t t = 0; t < NS; t++)
        if (s->clock[st][t] > s->synced[t]) s->synced[t] = s->clock[st][t];
}

static void on_sync(void *ctx, int stream)
{
    sim *s = ctx;
    if (stream >= 0) sync_stream(s, (uint32_t)stream);
    else
        for (uint32_t t = 0; t < NS; t++) sync_stream(s, t);
}

/* An internal dependency: `to` waits for everything `from` did so far. */
static int on_order(void *ctx, uint32_t from, uint32_t to)
{
    sim *s = ctx;
    tick(s, from);
    for (uint32_t t = 0; t < NS; t++)
        if (s->clock[from][t] > s->clock[to][t]) s->clock[to][t] = s->clock[from][t];
    tick(s, to);
    return 0;
}

static size_t page_of(const gm_ms_block *b) { return (size_t)(((uintptr_t)gm_ms_block_addr(b) - FAKE_BASE) / FAKE_PAGE); }

static void check_handout(sim *s, uint32_t st, const gm_ms_block *b, size_t slot)
{
    size_t first = page_of(b), n = b->size / FAKE_PAGE;
    assert_true(first + n <= PAGES);
    for (size_t p = first; p < first + n; p++) {
        if (s->owner[p] >= 0) fail_msg("op %zu: page %zu handed out on stream %u while held by handle %d", s->ops, p, st, s->owner[p]);
        for (uint32_t t = 0; t < NS; t++) {
            uint64_t known = s->clock[st][t] > s->synced[t] ? s->clock[st][t] : s->synced[t];
            if (s->rel[p][t] > known)
                fail_msg("op %zu: page %zu reused on stream %u before it saw stream %u's release (%llu > %llu)", s->ops,
                         p, st, t, (unsigned long long)s->rel[p][t], (unsigned long long)known);
        }
        s->owner[p] = (int)slot;
    }
}

static void check_bytes(sim *s)
{
    gm_ms_stats st;
    size_t reserved, occupied = 0;
    gm_ms_group_stats(s->g, &st, &reserved);
    for (uint32_t t = 0; t < NS; t++) occupied += gm_ms_l2_pool_stats(gm_ms_group_allocator(s->g, t))->occupied;
    gm_caching_stats l1;
    gm_caching_get_stats(s->l1, &l1);
    if (st.allocated != occupied) fail_msg("op %zu: allocated %zu != pools' occupied %zu", s->ops, st.allocated, occupied);
    if (reserved != l1.pool.occupied) fail_msg("op %zu: pools hold %zu, L1 lent %zu", s->ops, reserved, l1.pool.occupied);
    if (l1.pool.occupied + l1.pool.idle != s->dev.live_bytes)
        fail_msg("op %zu: L1 holds %zu, the device lent %zu", s->ops, l1.pool.occupied + l1.pool.idle, s->dev.live_bytes);
    assert_int_equal(st.sync_violations, 0);
}

static void op_malloc(sim *s)
{
    if (s->nh == MAXH) return;
    uint32_t st = (uint32_t)(rnd(s) % NS);
    uint64_t r = rnd(s);
    size_t pages = r % 8 < 6 ? 1 + r / 8 % 2 : 1 + r / 8 % 8;
    size_t size = pages * FAKE_PAGE - (r >> 20) % 4096; /* not always whole pages */
    gm_ms_block *b = gm_ms_l2_malloc(gm_ms_group_allocator(s->g, st), size);
    s->ops++;
    tick(s, st);
    if (!b) {
        s->failed++;
        return;
    }
    s->mallocs++;
    assert_true(b->size >= size);
    size_t slot = s->nh++;
    check_handout(s, st, b, slot);
    s->h[slot] = (handle){.b = b, .total = 1, .first = page_of(b), .npages = b->size / FAKE_PAGE};
    s->h[slot].refs[st] = 1;
}

static void drop_handle(sim *s, size_t slot)
{
    handle *h = &s->h[slot];
    for (size_t p = h->first; p < h->first + h->npages; p++) s->owner[p] = -1;
    size_t last = --s->nh;
    if (slot != last) {
        s->h[slot] = s->h[last];
        for (size_t p = s->h[slot].first; p < s->h[slot].first + s->h[slot].npages; p++) s->owner[p] = (int)slot;
    }
}

static void free_ref(sim *s, size_t slot, uint32_t st)
{
    handle *h = &s->h[slot];
    for (size_t p = h->first; p < h->first + h->npages; p++) s->rel[p][st] = s->clock[st][st];
    tick(s, st);
    h->refs[st]--;
    h->total--;
    gm_ms_block *b = h->b;
    if (h->total == 0) drop_handle(s, slot); /* before the free: it may hand the pages out at once */
    gm_ms_block_free(b, st);
    s->ops++;
    s->frees++;
}

static void op_free(sim *s)
{
    if (!s->nh) return;
    size_t slot = rnd(s) % s->nh;
    uint32_t st = (uint32_t)(rnd(s) % NS);
    while (!s->h[slot].refs[st]) st = (st + 1) % NS;
    free_ref(s, slot, st);
}

static void op_access(sim *s)
{
    if (!s->nh) return;
    handle *h = &s->h[rnd(s) % s->nh];
    uint32_t src = (uint32_t)(rnd(s) % NS), dst = (uint32_t)(rnd(s) % NS);
    while (!h->refs[src]) src = (src + 1) % NS;
    if (dst == src) dst = (dst + 1) % NS;
    gm_error err;
    assert_int_equal(gm_ms_access_mem_cross_stream(h->b, src, dst, &err), GM_OK);
    h->refs[dst]++;
    h->total++;
    tick(s, dst);
    s->ops++;
    s->accesses++;
}

static void op_send(sim *s, uint32_t src, uint32_t dst)
{
    gm_error err;
    assert_int_equal(gm_ms_send_event(s->g, &s->ev[src][dst], &err), GM_OK);
    tick(s, src);
    memcpy(s->ev_clock[src][dst], s->clock[src], sizeof s->clock[src]);
    s->pending[src][dst] = 1;
    s->ops++;
    s->sends++;
}

static void op_wait(sim *s, uint32_t src, uint32_t dst)
{
    for (uint32_t t = 0; t < NS; t++)
        if (s->ev_clock[src][dst][t] > s->clock[dst][t]) s->clock[dst][t] = s->ev_clock[src][dst][t];
    gm_ms_wait_event(s->g, &s->ev[src][dst]);
    tick(s, dst);
    s->pending[src][dst] = 0;
    s->ops++;
    s->waits++;
}

static void op_event(sim *s)
{
    uint32_t src = (uint32_t)(rnd(s) % NS), dst = (uint32_t)(rnd(s) % (NS - 1));
    if (dst >= src) dst++;
    if (s->pending[src][dst]) op_wait(s, src, dst);
    else op_send(s, src, dst);
}

static size_t env_size(const char *name, size_t dflt)
{
    const char *v = getenv(name);
    return v && *v ? (size_t)strtoull(v, NULL, 10) : dflt;
}

static void run_simulation(bool internal_deps, bool memory_first)
{
    static sim s; /* 40 KiB of page history: not on the stack */
    memset(&s, 0, sizeof s);
    s.rng = env_size("GM_SIM_SEED", 1) * 0x9E3779B97F4A7C15ull | 1;
    const size_t target = env_size("GM_SIM_OPS", 1000000);
    for (size_t p = 0; p < PAGES; p++) s.owner[p] = -1;
    fake_init(&s.dev, PAGES);
    gm_mem_source dev = memory_first ? fake_source_vm(&s.dev, 1) : fake_source(&s.dev);
    gm_scalable_config c;
    gm_scalable_config_default(&c, 0);
    gm_scalable_config l1c = memory_first ? fake_expandable_config(PAGES) : c; /* the range: the whole device */
    assert_non_null(s.l1 = gm_caching_create(&dev, &l1c, on_sync, &s));
    gm_mem_source l1 = gm_caching_as_source(s.l1);
    gm_ms_config cfg = {.streams = NS, .l2 = c, .sync = on_sync, .sync_ctx = &s, .recycle_before_growth = memory_first};
    if (internal_deps) cfg.order = on_order, cfg.order_ctx = &s;
    cfg.l2.total_threshold = 96 * FAKE_PAGE; /* small pools: the threshold path runs too */
    gm_error err;
    assert_int_equal(gm_ms_group_create(&cfg, &l1, &s.g, &err), GM_OK);
    for (uint32_t a = 0; a < NS; a++)
        for (uint32_t b = 0; b < NS; b++) gm_ms_event_payload_init(&s.ev[a][b], a, b);

    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (s.ops < target) {
        uint64_t r = rnd(&s) % 100;
        if (r < 34) op_malloc(&s);
        else if (r < 66) op_free(&s);
        else if (r < 76) op_access(&s);
        else op_event(&s);
        check_bytes(&s);
    }
    /* The end of an execution: every reference dropped, every event waited, LastWaitEvents. */
    while (s.nh) {
        handle *h = &s.h[s.nh - 1];
        uint32_t st = 0;
        while (!h->refs[st]) st++;
        free_ref(&s, s.nh - 1, st);
        check_bytes(&s);
    }
    for (uint32_t a = 0; a < NS; a++)
        for (uint32_t b = 0; b < NS; b++)
            if (s.pending[a][b]) op_wait(&s, a, b);
    on_sync(&s, -1);
    gm_ms_last_wait_events(s.g);
    if (memory_first) /* the pools keep their idle memory across LastWaitEvents: give it back */
        for (uint32_t t = 0; t < NS; t++) gm_ms_l2_recycle_free_mem(gm_ms_group_allocator(s.g, t));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    check_bytes(&s);
    gm_ms_stats st;
    size_t reserved;
    gm_ms_group_stats(s.g, &st, &reserved);
    assert_int_equal(st.allocated, 0);
    assert_int_equal(reserved, 0);
    gm_caching_recycle(s.l1);
    assert_int_equal(s.dev.live_bytes, 0);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("simulation: %zu ops in %.2f s (%.0f ops/s): %zu mallocs (%zu failed, %zu borrowed), %zu frees, "
           "%zu accesses, %zu sends, %zu waits\n"
           "  recycles birth %zu borrow %zu local %zu; messages %zu, stale %zu; returned home %zu; peak %zu bytes; "
           "idle chunks shared between streams %zu; internal dependencies %zu, news delivered early %zu\n",
           s.ops, secs, (double)s.ops / secs, s.mallocs, s.failed, st.borrow_hits, s.frees, s.accesses, s.sends, s.waits,
           st.birth_recycles, st.borrow_recycles, st.local_recycles, st.messages_sent, st.stale_messages,
           st.returned_home, st.peak_allocated, st.shared_chunks, st.internal_events, st.delivered_early);
    if (internal_deps) assert_true(st.internal_events > 0 && st.delivered_early > 0);
    else assert_int_equal(st.internal_events + st.delivered_early, 0);
    assert_true(st.borrow_hits > 0 && st.stale_messages > 0 && st.local_recycles > 0);
    assert_true(st.shared_chunks > 0); /* invariant 2 held for chunks that changed streams too */
    if (memory_first) assert_true(st.growth_ladders > 0 && s.dev.unmaps > 0); /* and for what they moved */
    if (memory_first) assert_true(st.settles > 0); /* releases settled after every stream synchronized */
    printf("  recycles before growth %zu, releases settled %zu; pages mapped %zu times, unmapped %zu times\n",
           st.growth_ladders, st.settles, s.dev.maps, s.dev.unmaps);
    assert_int_equal(gm_ms_group_destroy(s.g), 0);
    for (uint32_t a = 0; a < NS; a++)
        for (uint32_t b = 0; b < NS; b++) gm_ms_event_payload_fini(&s.ev[a][b]);
    gm_caching_destroy(s.l1);
    assert_int_equal(s.dev.live_bytes, 0);
    fake_fini(&s.dev);
}

static void test_random_multi_stream(void **state)
{
    (void)state;
    run_simulation(false, false);
}

static void test_random_multi_stream_internal_deps(void **state)
{
    (void)state;
    run_simulation(true, false);
}

static void test_random_multi_stream_memory_first(void **state)
{
    (void)state;
    run_simulation(true, true);
}

int main(void)
{
    gm_log_set_level(GM_LOG_ERROR);
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_random_multi_stream),
                                       cmocka_unit_test(test_random_multi_stream_internal_deps),
                                       cmocka_unit_test(test_random_multi_stream_memory_first)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
