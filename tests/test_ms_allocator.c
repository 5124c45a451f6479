/*
 * test_ms_allocator.c — the multi-stream allocators (reference §6.2–6.7): GE's four worked
 * lifecycles (own_malloc_free, own_malloc_failed_but_using_borrow, own_malloc_free_before_sync,
 * change_l1_allocator), ReInit's error, the BorrowAllocator (including the bucket bug GE has),
 * stale event messages, LastWaitEvents, cross-stream access and the destructor's leak sweep; and
 * what graphmem does beyond GE: lending parked blocks before the pool grows, idle chunks shared
 * between streams after an event, small blocks carved out of shared pages, reuse through
 * internal dependencies, and the pools recycling before an expandable L1 grows.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "fake_mem_source.h"
#include "graphmem/log.h"
#include "runtime/borrow_allocator.h"
#include "runtime/caching_allocator.h"
#include "runtime/ms_events.h"
#include "runtime/ms_l2_allocator.h"
#include "util/alloc.h"

#define P FAKE_PAGE

typedef struct fixture {
    fake_src src;
    gm_mem_source l1;
    gm_ms_group *g;
    gm_ms_l2_allocator *a[4];
} fixture;

/* The internal dependencies the group asked for ((from, to) pairs), and whether to refuse them. */
typedef struct orders {
    uint32_t from[8], to[8];
    size_t n;
    bool refuse;
} orders;

static int record_order(void *ctx, uint32_t from, uint32_t to)
{
    orders *o = ctx;
    if (o->refuse) return -1;
    if (o->n < 8) o->from[o->n] = from, o->to[o->n] = to;
    o->n++;
    return 0;
}

static void fx_open_with(fixture *f, uint32_t n, orders *o)
{
    fake_init(&f->src, 64);
    f->l1 = fake_source(&f->src);
    gm_ms_config cfg = {.streams = n, .order = o ? record_order : NULL, .order_ctx = o};
    gm_scalable_config_default(&cfg.l2, 0);
    gm_error err;
    assert_int_equal(gm_ms_group_create(&cfg, &f->l1, &f->g, &err), GM_OK);
    for (uint32_t s = 0; s < n && s < 4; s++) f->a[s] = gm_ms_group_allocator(f->g, s);
}

static void fx_open(fixture *f, uint32_t n) { fx_open_with(f, n, NULL); }

static size_t fx_close(fixture *f)
{
    size_t leaked = gm_ms_group_destroy(f->g);
    assert_int_equal(f->src.live_bytes, 0);
    fake_fini(&f->src);
    return leaked;
}

static gm_ms_stats stats(fixture *f)
{
    gm_ms_stats st;
    gm_ms_group_stats(f->g, &st, NULL);
    return st;
}

/* An event src -> dst, sent and waited at once. */
static void event(fixture *f, uint32_t src, uint32_t dst)
{
    gm_ms_event_payload p;
    gm_ms_event_payload_init(&p, src, dst);
    gm_error err;
    assert_int_equal(gm_ms_send_event(f->g, &p, &err), GM_OK);
    gm_ms_wait_event(f->g, &p);
    gm_ms_event_payload_fini(&p);
}

static void test_own_malloc_free(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, 2);
    gm_ms_block *b = gm_ms_l2_malloc(f.a[0], 4 * P);
    assert_non_null(b);
    assert_int_equal(gm_ms_block_count(b, 0), 1);
    assert_int_equal(stats(&f).allocated, 4 * P);
    gm_ms_block_free(b, 0);
    assert_null(b->mem); /* birth recycle: GetMemBlock() == nullptr */
    gm_ms_stats st = stats(&f);
    assert_int_equal(st.birth_recycles, 1);
    assert_int_equal(st.allocated, 0);
    assert_int_equal(st.peak_allocated, 4 * P);
    assert_int_equal(fx_close(&f), 0);
}

static void test_own_malloc_failed_but_using_borrow(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, 2);
    gm_ms_block *b0 = gm_ms_l2_malloc(f.a[0], P);
    void *addr0 = gm_ms_block_addr(b0);
    gm_error err;
    assert_int_equal(gm_ms_access_mem_cross_stream(b0, 0, 1, &err), GM_OK);
    assert_int_equal(gm_ms_block_count(b0, 1), 1);
    gm_ms_block_free(b0, 0); /* stream 1 still uses it: local recycle */
    assert_non_null(b0->mem);
    assert_int_equal(gm_ms_block_count(b0, 0), 0);
    assert_int_equal(gm_ms_l2_local_recycle_blocks(f.a[0])->n, 1);
    assert_int_equal(stats(&f).local_recycles, 1);
    event(&f, 0, 1); /* SyncLocalRecycleStatus(0, 1): stream 1 learns 0 is done */
    assert_false(gm_ms_block_is_occupied(b0, 1, 0));
    gm_ms_block_free(b0, 1); /* 1's view is empty, birth is 0: borrow recycle on 1 */
    assert_int_equal(stats(&f).borrow_recycles, 1);
    assert_int_equal(gm_ms_l2_borrow_count(f.a[1], 0), 1);
    f.src.fail_always = 1; /* the device has no memory for stream 1 */
    gm_ms_block *b1 = gm_ms_l2_malloc(f.a[1], P);
    assert_ptr_equal(b1, b0);
    assert_ptr_equal(gm_ms_block_addr(b1), addr0);
    assert_int_equal(stats(&f).borrow_hits, 1);
    assert_int_equal(gm_ms_block_count(b1, 1), 1);
    gm_ms_block_free(b1, 1); /* borrow again */
    assert_int_equal(stats(&f).borrow_recycles, 2);
    gm_ms_block *home = gm_ms_l2_get_and_clear_borrow_blocks(f.a[1], 0);
    assert_ptr_equal(home, b0);
    assert_null(home->bt_next); /* exactly [b0] */
    assert_null(gm_ms_l2_get_and_clear_borrow_blocks(f.a[1], 0));
    gm_ms_l2_birth_recycle(f.a[0], home);
    assert_null(b0->mem);
    f.src.fail_always = 0;
    assert_int_equal(fx_close(&f), 0);
}

/* Parks b (born on 0, size bytes) on stream 1: 0 frees first, 1 hears of it, 1 frees last. */
static gm_ms_block *park_on_1(fixture *f, size_t size)
{
    gm_ms_block *b = gm_ms_l2_malloc(f->a[0], size);
    gm_error err;
    assert_int_equal(gm_ms_access_mem_cross_stream(b, 0, 1, &err), GM_OK);
    gm_ms_block_free(b, 0);
    event(f, 0, 1);
    gm_ms_block_free(b, 1);
    return b;
}

/* A parked block that fits (at most 1/8 over the page-rounded request) is lent before the own
 * pool grows; one that is much longer is not (the own pool serves). */
static void test_parked_block_that_fits_is_lent_first(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, 2);
    gm_ms_block *b0 = park_on_1(&f, 100); /* one page */
    assert_int_equal(gm_ms_l2_borrow_count(f.a[1], 0), 1);
    gm_ms_block *b1 = gm_ms_l2_malloc(f.a[1], 200);
    assert_ptr_equal(b1, b0);
    assert_int_equal(stats(&f).borrow_hits, 1);
    gm_ms_block_free(b1, 1); /* parked again */
    gm_ms_block *warm = gm_ms_l2_malloc(f.a[1], 2 * P);
    gm_ms_block_free(warm, 1); /* stream 1's own pool now has 2 idle pages */
    gm_ms_block *big = park_on_1(&f, 4 * P);
    gm_ms_block *c = gm_ms_l2_malloc(f.a[1], 2 * P); /* 4 pages for 2, and the own pool can serve */
    assert_ptr_not_equal(c, big);
    assert_int_equal(stats(&f).borrow_hits, 1);
    gm_ms_block_free(c, 1);
    gm_ms_last_wait_events(f.g);
    assert_int_equal(gm_ms_l2_borrow_count(f.a[1], 0), 0);
    assert_int_equal(fx_close(&f), 0);
}

/* Not GE's: where the own pool would have to grow, a longer parked block is lent instead. */
static void test_longer_parked_block_lent_before_pool_grows(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, 2);
    gm_ms_block *big = park_on_1(&f, 4 * P);
    void *addr = gm_ms_block_addr(big);
    gm_ms_block *c = gm_ms_l2_malloc(f.a[1], 2 * P); /* stream 1's pool is empty */
    assert_ptr_equal(c, big);
    assert_ptr_equal(gm_ms_block_addr(c), addr);
    assert_int_equal(c->size, 4 * P);
    assert_int_equal(stats(&f).borrow_hits, 1);
    const gm_scalable_stats *p1 = gm_ms_l2_pool_stats(f.a[1]);
    assert_int_equal(p1->occupied + p1->idle, 0); /* nothing taken from L1 */
    gm_ms_block_free(c, 1);
    gm_ms_last_wait_events(f.g);
    assert_int_equal(fx_close(&f), 0);
}

/* Not GE's: an idle chunk of one stream's pool serves another stream once that stream has waited
 * for an event the first sent after the chunk went idle — and not before. */
static void test_idle_chunk_shared_after_event(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, 2);
    const uintptr_t base = FAKE_BASE;
    gm_ms_block *x = gm_ms_l2_malloc(f.a[0], 2 * P);
    assert_ptr_equal(gm_ms_block_addr(x), (void *)base);
    gm_ms_block_free(x, 0); /* pool 0: one idle 2-page chunk */
    gm_ms_block *y = gm_ms_l2_malloc(f.a[1], 2 * P); /* 1 heard nothing from 0 yet: fetched */
    assert_ptr_equal(gm_ms_block_addr(y), (void *)(base + 2 * P));
    assert_int_equal(stats(&f).shared_chunks, 0);
    event(&f, 0, 1);
    gm_ms_block *z = gm_ms_l2_malloc(f.a[1], P); /* pool 1 is full: it takes pool 0's chunk */
    assert_ptr_equal(gm_ms_block_addr(z), (void *)base);
    assert_int_equal(stats(&f).shared_chunks, 1);
    const gm_scalable_stats *p0 = gm_ms_l2_pool_stats(f.a[0]), *p1 = gm_ms_l2_pool_stats(f.a[1]);
    assert_int_equal(p0->occupied + p0->idle, 0);
    assert_int_equal(p1->occupied, 3 * P);
    assert_int_equal(p1->idle, P); /* the shared chunk's other half */
    /* A chunk that goes idle after 0's last event stays with 0. */
    gm_ms_block *w = gm_ms_l2_malloc(f.a[0], 2 * P);
    assert_ptr_equal(gm_ms_block_addr(w), (void *)(base + 4 * P));
    gm_ms_block_free(w, 0);
    gm_ms_block *v = gm_ms_l2_malloc(f.a[1], 2 * P);
    assert_ptr_equal(gm_ms_block_addr(v), (void *)(base + 6 * P));
    assert_int_equal(stats(&f).shared_chunks, 1);
    event(&f, 0, 1); /* sent after w went idle: now it may go */
    gm_ms_block *u = gm_ms_l2_malloc(f.a[1], 2 * P);
    assert_ptr_equal(gm_ms_block_addr(u), (void *)(base + 4 * P));
    assert_int_equal(stats(&f).shared_chunks, 2);
    gm_ms_block_free(y, 1);
    gm_ms_block_free(z, 1);
    gm_ms_block_free(v, 1);
    gm_ms_block_free(u, 1);
    gm_ms_last_wait_events(f.g);
    assert_int_equal(fx_close(&f), 0);
}

/* The streams synchronized, in order. */
typedef struct syncs {
    int stream[8];
    size_t n;
} syncs;

static void record_sync(void *ctx, int stream)
{
    syncs *s = ctx;
    if (s->n < 8) s->stream[s->n] = stream;
    s->n++;
}

/* Two streams over an expandable caching L1 on a fake device with virtual memory (f.src unused). */
typedef struct tight_fixture {
    fake_src dev;
    gm_caching_allocator *l1;
    gm_mem_source l1src;
    fixture f;
} tight_fixture;

static bool g_l1_maps_granules; /* tight_open's gm_ms_config.l1_maps_granules */

static void tight_open(tight_fixture *t, bool recycle_before_growth, syncs *sy)
{
    fake_init(&t->dev, 64);
    gm_mem_source src = fake_source_vm(&t->dev, 1);
    gm_scalable_config c, l1c = fake_expandable_config(32);
    gm_scalable_config_default(&c, 0);
    assert_non_null(t->l1 = gm_caching_create(&src, &l1c, NULL, NULL));
    t->l1src = gm_caching_as_source(t->l1);
    gm_ms_config cfg = {.streams = 2, .l2 = c, .sync = sy ? record_sync : NULL, .sync_ctx = sy,
                        .recycle_before_growth = recycle_before_growth, .l1_maps_granules = g_l1_maps_granules};
    gm_error err;
    t->f = (fixture){.g = NULL};
    assert_int_equal(gm_ms_group_create(&cfg, &t->l1src, &t->f.g, &err), GM_OK);
    for (uint32_t k = 0; k < 2; k++) t->f.a[k] = gm_ms_group_allocator(t->f.g, k);
}

static void tight_close(tight_fixture *t)
{
    gm_ms_last_wait_events(t->f.g);
    assert_int_equal(gm_ms_group_destroy(t->f.g), 0);
    gm_caching_destroy(t->l1);
    assert_int_equal(t->dev.live_bytes, 0);
    fake_fini(&t->dev);
}

/* recycle_before_growth: stream 1 would make the expandable L1 map more while stream 0's pool
 * sits on an idle chunk it may not take (no event): the pools are synchronized and recycled
 * first, and stream 1 gets the same memory. Without it, the device lends twice as much. */
static void run_recycle_before_growth(bool on)
{
    tight_fixture t;
    syncs sy = {0};
    tight_open(&t, on, &sy);
    gm_ms_block *x = gm_ms_l2_malloc(t.f.a[0], 2 * P);
    void *at = gm_ms_block_addr(x);
    gm_ms_block_free(x, 0);
    gm_ms_block *y = gm_ms_l2_malloc(t.f.a[1], 2 * P);
    gm_ms_stats st = stats(&t.f);
    if (on) {
        assert_ptr_equal(gm_ms_block_addr(y), at);
        assert_int_equal(t.dev.mapped_pages, 2);
        assert_int_equal(st.growth_ladders, 1);
        assert_int_equal(sy.n, 1);
        assert_int_equal(sy.stream[0], 0); /* before its memory could leave stream 0's pool */
    } else {
        assert_ptr_not_equal(gm_ms_block_addr(y), at);
        assert_int_equal(t.dev.mapped_pages, 4);
        assert_int_equal(st.growth_ladders, 0);
        assert_int_equal(sy.n, 0);
    }
    gm_ms_block_free(y, 1);
    tight_close(&t);
}

static void test_recycle_before_growth(void **state)
{
    (void)state;
    run_recycle_before_growth(true);
    run_recycle_before_growth(false);
}

/* recycle_before_growth over an L1 that maps coarse granules: LastWaitEvents gives the pools'
 * idle memory back (each stream synchronized), as GE's mode does, so that the next iteration
 * starts from L1's memory merged whole; over fine pages the pools keep it. */
static void run_iteration_end(bool granules)
{
    tight_fixture t;
    syncs sy = {0};
    g_l1_maps_granules = granules;
    tight_open(&t, true, &sy);
    g_l1_maps_granules = false;
    gm_ms_block *x = gm_ms_l2_malloc(t.f.a[0], 2 * P);
    gm_ms_block *y = gm_ms_l2_malloc(t.f.a[1], P);
    gm_ms_block_free(x, 0);
    gm_ms_block_free(y, 1);
    size_t reserved = 0;
    gm_ms_stats st;
    gm_ms_group_stats(t.f.g, &st, &reserved);
    assert_int_equal(reserved, 3 * P);
    gm_ms_last_wait_events(t.f.g);
    gm_ms_group_stats(t.f.g, &st, &reserved);
    assert_int_equal(reserved, granules ? 0 : 3 * P);
    assert_int_equal(sy.n, granules ? 2 : 0);
    tight_close(&t);
}

static void test_coarse_l1_recycles_at_iteration_end(void **state)
{
    (void)state;
    run_iteration_end(true);
    run_iteration_end(false);
}

/* recycle_before_growth: a parked block is lent where the pool would grow only up to twice the
 * request (GE's mode lends any, test_longer_parked_block_lent_before_pool_grows): a longer one
 * would stay held beyond the request while the pools give back everything idle before L1 grows. */
static void test_memory_first_lends_at_most_twice(void **state)
{
    (void)state;
    tight_fixture t;
    tight_open(&t, true, NULL);
    gm_ms_block *big = park_on_1(&t.f, 4 * P);
    gm_ms_block *one = gm_ms_l2_malloc(t.f.a[1], P); /* 4x: not lent */
    assert_ptr_not_equal(one, big);
    assert_int_equal(stats(&t.f).borrow_hits, 0);
    gm_ms_block *two = gm_ms_l2_malloc(t.f.a[1], 2 * P); /* 2x: lent */
    assert_ptr_equal(two, big);
    assert_int_equal(stats(&t.f).borrow_hits, 1);
    gm_ms_block_free(one, 1);
    gm_ms_block_free(two, 1);
    tight_close(&t);
}

/* A shared chunk still held at destroy goes back through the binding of the pool that fetched it. */
static void test_destroy_returns_shared_chunk(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, 2);
    gm_ms_block *x = gm_ms_l2_malloc(f.a[0], P);
    gm_ms_block_free(x, 0);
    event(&f, 0, 1);
    gm_ms_block *z = gm_ms_l2_malloc(f.a[1], P);
    assert_ptr_equal(gm_ms_block_addr(z), (void *)FAKE_BASE);
    assert_int_equal(stats(&f).shared_chunks, 1);
    gm_ms_block_free(z, 1); /* idle in pool 1, no LastWaitEvents: the destructor returns it */
    assert_int_equal(fx_close(&f), 0);
}

/* The knowledge travels: 2 waited for 1, which had waited for 0 before it sent — 2 runs after 0's
 * record, so 0's idle chunk is safe on 2 without a direct event 0 -> 2. */
static void test_idle_chunk_shared_through_a_third_stream(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, 3);
    const uintptr_t base = FAKE_BASE;
    gm_ms_block *x = gm_ms_l2_malloc(f.a[0], 2 * P);
    gm_ms_block_free(x, 0);
    gm_ms_block *y = gm_ms_l2_malloc(f.a[2], 2 * P); /* nothing heard: fetched */
    assert_ptr_equal(gm_ms_block_addr(y), (void *)(base + 2 * P));
    event(&f, 1, 2); /* 1 had not heard from 0 yet: still nothing for 2 */
    gm_ms_block *z = gm_ms_l2_malloc(f.a[2], 2 * P);
    assert_ptr_equal(gm_ms_block_addr(z), (void *)(base + 4 * P));
    event(&f, 0, 1);
    event(&f, 1, 2);
    gm_ms_block *w = gm_ms_l2_malloc(f.a[2], 2 * P);
    assert_ptr_equal(gm_ms_block_addr(w), (void *)base);
    assert_int_equal(stats(&f).shared_chunks, 1);
    gm_ms_block_free(y, 2);
    gm_ms_block_free(z, 2);
    gm_ms_block_free(w, 2);
    gm_ms_last_wait_events(f.g);
    assert_int_equal(fx_close(&f), 0);
}

/* Not GE's: blocks up to half a page are carved out of shared pages, first fit in 256-byte
 * units; an emptied page is kept as the one spare, a second one goes back to the pool. */
static void test_small_blocks_share_pages(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, 1);
    const uintptr_t base = FAKE_BASE;
    gm_ms_block *a = gm_ms_l2_malloc(f.a[0], 100), *b = gm_ms_l2_malloc(f.a[0], 1000);
    gm_ms_block *c = gm_ms_l2_malloc(f.a[0], 32768);
    assert_ptr_equal(gm_ms_block_addr(a), (void *)base);
    assert_ptr_equal(gm_ms_block_addr(b), (void *)(base + 256));
    assert_ptr_equal(gm_ms_block_addr(c), (void *)(base + 256 + 1024));
    assert_int_equal(a->size, 256);
    assert_int_equal(b->size, 1024);
    assert_int_equal(c->size, 32768);
    assert_int_equal(stats(&f).allocated, 256 + 1024 + 32768);
    assert_int_equal(gm_ms_l2_pool_stats(f.a[0])->occupied, P); /* one page for all three */
    gm_ms_block *d = gm_ms_l2_malloc(f.a[0], 32768); /* 31 KiB left there: a second page */
    assert_ptr_equal(gm_ms_block_addr(d), (void *)(base + P));
    gm_ms_block_free(b, 0);
    gm_ms_block *e = gm_ms_l2_malloc(f.a[0], 600); /* three units: first fit in b's hole */
    assert_ptr_equal(gm_ms_block_addr(e), (void *)(base + 256));
    assert_int_equal(e->size, 768);
    gm_ms_block *big = gm_ms_l2_malloc(f.a[0], 32769); /* over half a page: whole pages */
    assert_ptr_equal(gm_ms_block_addr(big), (void *)(base + 2 * P));
    assert_int_equal(big->size, P);
    gm_ms_block_free(a, 0);
    gm_ms_block_free(e, 0);
    gm_ms_block_free(c, 0); /* page 0 empty: kept as the spare */
    assert_int_equal(gm_ms_l2_pool_stats(f.a[0])->occupied, 3 * P);
    gm_ms_block_free(d, 0); /* page 1 empty too: back to the pool */
    assert_int_equal(gm_ms_l2_pool_stats(f.a[0])->occupied, 2 * P);
    assert_int_equal(gm_ms_l2_pool_stats(f.a[0])->idle, P);
    gm_ms_block *g = gm_ms_l2_malloc(f.a[0], 40); /* the spare page serves */
    assert_ptr_equal(gm_ms_block_addr(g), (void *)base);
    gm_ms_block_free(g, 0);
    gm_ms_block_free(big, 0);
    gm_ms_last_wait_events(f.g); /* the spare goes back with the rest */
    const gm_scalable_stats *p0 = gm_ms_l2_pool_stats(f.a[0]);
    assert_int_equal(p0->occupied + p0->idle, 0);
    assert_int_equal(f.src.live_bytes, 0);
    assert_int_equal(fx_close(&f), 0);
}

/* A block born on stream 0, read on stream 1, released by both; stream 0 has not heard of
 * stream 1's release when it asks for the same size again. */
static gm_ms_block *released_unheard(fixture *f)
{
    gm_error err;
    gm_ms_block *b = gm_ms_l2_malloc(f->a[0], 4 * P);
    assert_non_null(b);
    assert_int_equal(gm_ms_access_mem_cross_stream(b, 0, 1, &err), GM_OK);
    gm_ms_block_free(b, 0);
    gm_ms_block_free(b, 1);
    assert_int_equal(stats(f).local_recycles, 2); /* each still believes the other uses it */
    return b;
}

/* GE's rule: the release waits for the graph's next event, so the pool grows. */
static void test_release_unheard_without_internal_deps(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, 2);
    void *old = gm_ms_block_addr(released_unheard(&f));
    gm_ms_block *c = gm_ms_l2_malloc(f.a[0], 4 * P);
    assert_ptr_not_equal(gm_ms_block_addr(c), old);
    assert_int_equal(f.src.live_bytes, 8 * P);
    assert_int_equal(stats(&f).internal_events, 0);
    gm_ms_block_free(c, 0);
    gm_ms_last_wait_events(f.g);
    assert_int_equal(fx_close(&f), 0);
}

/* With internal dependencies, stream 0 waits for stream 1 and reuses the block's memory; a
 * dependency the caller cannot add reuses nothing. */
static void test_internal_dependency_reuses_release(void **state)
{
    (void)state;
    orders o = {0};
    fixture f;
    fx_open_with(&f, 2, &o);
    void *old = gm_ms_block_addr(released_unheard(&f));
    gm_ms_block *c = gm_ms_l2_malloc(f.a[0], 4 * P);
    assert_ptr_equal(gm_ms_block_addr(c), old);
    assert_int_equal(f.src.live_bytes, 4 * P);
    assert_int_equal(o.n, 1);
    assert_int_equal(o.from[0], 1);
    assert_int_equal(o.to[0], 0);
    assert_int_equal(stats(&f).internal_events, 1);
    assert_int_equal(stats(&f).birth_recycles, 1);
    gm_ms_block_free(c, 0);
    gm_ms_last_wait_events(f.g);
    assert_int_equal(fx_close(&f), 0);

    orders refuse = {.refuse = true};
    fx_open_with(&f, 2, &refuse);
    old = gm_ms_block_addr(released_unheard(&f));
    c = gm_ms_l2_malloc(f.a[0], 4 * P);
    assert_ptr_not_equal(gm_ms_block_addr(c), old);
    assert_int_equal(stats(&f).internal_events, 0);
    gm_ms_block_free(c, 0);
    gm_ms_last_wait_events(f.g);
    assert_int_equal(fx_close(&f), 0);
}

/* Not GE's: stream 1's release already went out in an event to stream 0 that stream 0 has not
 * waited for yet, so the internal event 1 -> 0 has nothing new to carry; it delivers that event's
 * news instead, and the graph's own wait later applies nothing twice. */
static void test_internal_dependency_delivers_news_in_flight(void **state)
{
    (void)state;
    orders o = {0};
    fixture f;
    fx_open_with(&f, 2, &o);
    void *old = gm_ms_block_addr(released_unheard(&f));
    gm_ms_event_payload p;
    gm_ms_event_payload_init(&p, 1, 0);
    gm_error err;
    assert_int_equal(gm_ms_send_event(f.g, &p, &err), GM_OK);
    assert_int_equal(p.nfreed, 1); /* stream 1's release, in flight */
    gm_ms_block *c = gm_ms_l2_malloc(f.a[0], 4 * P);
    assert_ptr_equal(gm_ms_block_addr(c), old);
    assert_int_equal(f.src.live_bytes, 4 * P);
    assert_int_equal(o.n, 1);
    assert_int_equal(o.from[0], 1);
    assert_int_equal(o.to[0], 0);
    gm_ms_stats st = stats(&f);
    assert_int_equal(st.internal_events, 1);
    assert_int_equal(st.delivered_early, 1);
    assert_int_equal(st.birth_recycles, 1);
    assert_int_equal(p.nfreed, 0);
    gm_ms_wait_event(f.g, &p); /* the graph's wait: only its epoch is left to apply */
    st = stats(&f);
    assert_int_equal(st.messages_sent, 1);
    assert_int_equal(st.stale_messages + st.sync_violations, 0);
    assert_int_equal(gm_ms_block_count(c, 0), 1);
    gm_ms_block_free(c, 0);
    gm_ms_event_payload_fini(&p);
    gm_ms_last_wait_events(f.g);
    assert_int_equal(fx_close(&f), 0);
}

/* A payload in flight may be finished before its group (it leaves the group's list; a later
 * internal event between the same streams finds nothing of it) or after (the group's
 * destructor drops it from the list). ASan checks that neither touches freed memory. */
static void test_payload_in_flight_at_fini_and_destroy(void **state)
{
    (void)state;
    orders o = {0};
    fixture f;
    fx_open_with(&f, 2, &o);
    gm_ms_block *b = released_unheard(&f);
    gm_ms_event_payload early, late;
    gm_ms_event_payload_init(&early, 1, 0);
    gm_ms_event_payload_init(&late, 1, 0);
    gm_error err;
    assert_int_equal(gm_ms_send_event(f.g, &early, &err), GM_OK);
    assert_int_equal(early.nfreed, 1);
    gm_ms_event_payload_fini(&early); /* stream 1's release is lost with it */
    gm_ms_block *c = gm_ms_l2_malloc(f.a[0], 4 * P); /* the internal event 1 -> 0 finds nothing */
    assert_ptr_not_equal(c, b);
    assert_int_equal(stats(&f).delivered_early, 0);
    gm_ms_block_free(c, 0);
    /* stream 1 hears of stream 0's release through an internal event and parks b */
    assert_int_equal(gm_ms_access_mem_cross_stream(c = gm_ms_l2_malloc(f.a[1], P), 1, 0, &err), GM_OK);
    assert_true(b->in_bucket);
    gm_ms_block_free(c, 1);
    assert_int_equal(gm_ms_send_event(f.g, &late, &err), GM_OK);
    assert_int_equal(late.nfreed, 1);
    assert_int_equal(late.nhome, 1); /* b, parked on 1 after an internal event told 1 of 0's release */
    gm_ms_block_free(c, 0);
    gm_ms_last_wait_events(f.g);
    assert_int_equal(fx_close(&f), 1); /* late still in flight: b, going home in it, is swept */
    assert_null(late.flight);
    gm_ms_event_payload_fini(&late);
}

static void test_own_malloc_free_before_sync(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, 2);
    gm_ms_block *b0 = gm_ms_l2_malloc(f.a[0], P);
    gm_error err;
    gm_ms_access_mem_cross_stream(b0, 0, 1, &err);
    gm_ms_block_free(b0, 0); /* local on 0 */
    gm_ms_block_free(b0, 1); /* 1 still thinks 0 uses it: local on 1 */
    assert_int_equal(stats(&f).local_recycles, 2);
    int64_t v = gm_ms_block_version(b0);
    event(&f, 0, 1); /* 1's view empties: borrow recycle on 1 */
    assert_int_equal(stats(&f).borrow_recycles, 1);
    assert_true(gm_ms_block_version(b0) != v);
    gm_ms_block *home = gm_ms_l2_get_and_clear_borrow_blocks(f.a[1], 0);
    assert_ptr_equal(home, b0);
    assert_null(home->bt_next);
    gm_ms_l2_birth_recycle(f.a[0], home);
    /* the stream-1 message about b0 is stale now and goes away unsent */
    event(&f, 1, 0);
    assert_int_equal(gm_ms_l2_local_recycle_blocks(f.a[1])->n, 0);
    assert_int_equal(fx_close(&f), 0);
}

static void test_sync_local_recycle_status_live(void **state)
{
    (void)state;
    fixture f; /* GE's SyncLocalRecycleStatus on the live views, called directly */
    fx_open(&f, 2);
    gm_error err;
    gm_ms_block *b = gm_ms_l2_malloc(f.a[0], P);
    gm_ms_access_mem_cross_stream(b, 0, 1, &err);
    gm_ms_block_free(b, 0);
    gm_ms_block_sync_local_recycle_status(b, 0, 1);
    assert_false(gm_ms_block_is_occupied(b, 1, 0));
    assert_true(gm_ms_block_is_occupied(b, 1, 1));
    gm_ms_block_free(b, 1);
    assert_int_equal(gm_ms_l2_borrow_count(f.a[1], 0), 1);
    assert_int_equal(stats(&f).sync_violations, 0);
    gm_ms_group_destroy(f.g); /* the destructor sends the parked block home: no leak */
    f.g = NULL;
    assert_int_equal(f.src.live_bytes, 0);
    fake_fini(&f.src);
}

static void test_change_l1_allocator(void **state)
{
    (void)state;
    fake_src dev;
    fake_init(&dev, 64);
    gm_mem_source ds = fake_source(&dev);
    gm_scalable_config c;
    gm_scalable_config_default(&c, 0);
    gm_caching_allocator *l1a = gm_caching_create(&ds, &c, NULL, NULL);
    gm_caching_allocator *l1b = gm_caching_create(&ds, &c, NULL, NULL);
    gm_mem_source sa = gm_caching_as_source(l1a), sb = gm_caching_as_source(l1b);
    gm_ms_config cfg = {.streams = 2, .l2 = c};
    gm_ms_group *g;
    gm_error err;
    assert_int_equal(gm_ms_group_create(&cfg, &sa, &g, &err), GM_OK);
    gm_ms_l2_allocator *a0 = gm_ms_group_allocator(g, 0);
    gm_ms_block *old = gm_ms_l2_malloc(a0, 2 * P); /* still out when L1 changes */
    assert_int_equal(gm_ms_l2_set_l1(a0, &sb, &err), GM_OK);
    const size_t size = 3 * P;
    gm_ms_block *b = gm_ms_l2_malloc(a0, size);
    gm_caching_stats st;
    gm_caching_get_stats(l1b, &st);
    assert_int_equal(st.pool.occupied, size);
    gm_caching_get_stats(l1a, &st);
    assert_int_equal(st.pool.occupied, 2 * P);
    gm_ms_block_free(b, 0);
    gm_ms_block_free(old, 0);
    gm_ms_l2_recycle_free_mem(a0);
    gm_caching_get_stats(l1a, &st);
    assert_int_equal(st.pool.occupied, 0); /* the old block went back to the L1 it came from */
    gm_caching_get_stats(l1b, &st);
    assert_int_equal(st.pool.occupied, 0);
    assert_int_equal(gm_ms_group_destroy(g), 0);
    gm_caching_destroy(l1a);
    gm_caching_destroy(l1b);
    assert_int_equal(dev.live_bytes, 0);
    fake_fini(&dev);
}

static void test_reinit_requires_cleared(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, 2);
    gm_ms_block *b = gm_ms_l2_malloc(f.a[0], P);
    gm_error err;
    assert_int_equal(gm_ms_block_reinit(b, f.a[0], b->mem, b->size, GM_MS_NORM, &err), GM_ERR_INTERNAL);
    assert_string_equal(err.message, "origin mem_block is not cleared, this may cased memory leaks");
    gm_ms_block_free(b, 0);
    assert_int_equal(fx_close(&f), 0);
}

/* ---- BorrowAllocator ----------------------------------------------------------------------- */

static gm_ms_block *fake_block(size_t size, uint32_t birth)
{
    gm_ms_block *b = calloc(1, gm_ms_block_bytes(4));
    b->size = size;
    b->birth_stream = birth;
    return b;
}

static void test_borrow_bucket_erases_its_own_key(void **state)
{
    (void)state;
    gm_borrow_allocator ba = {0};
    gm_ms_block *a = fake_block(64 * 1024, 0), *b = fake_block(128 * 1024, 1);
    gm_borrow_add(&ba, a);
    gm_borrow_add(&ba, b);
    assert_int_equal(gm_borrow_bucket_count(&ba), 2);
    /* 96 KiB is served from the 128 KiB bucket, which empties. GE erases the key 96 KiB (absent)
     * and keeps the empty 128 KiB bucket: the next 96 KiB lookup finds it and takes a block out
     * of an empty set. */
    assert_ptr_equal(gm_borrow_alloc(&ba, 96 * 1024), b);
    assert_int_equal(gm_borrow_bucket_count(&ba), 1);
    assert_null(gm_borrow_alloc(&ba, 96 * 1024));
    assert_null(gm_borrow_alloc(&ba, 65 * 1024));
    assert_ptr_equal(gm_borrow_alloc(&ba, 1), a);
    assert_int_equal(gm_borrow_bucket_count(&ba), 0);
    assert_int_equal(ba.count, 0);
    gm_borrow_fini(&ba);
    free(a);
    free(b);
}

static void test_borrow_by_size_and_stream(void **state)
{
    (void)state;
    gm_borrow_allocator ba = {0};
    gm_ms_block *x[5] = {fake_block(P, 0), fake_block(P, 1), fake_block(2 * P, 0), fake_block(4 * P, 2),
                         fake_block(2 * P, 1)};
    for (int i = 0; i < 5; i++) gm_borrow_add(&ba, x[i]);
    assert_int_equal(gm_borrow_bucket_count(&ba), 3);
    gm_ms_block *home = gm_borrow_take_stream(&ba, 0); /* x[0], x[2] */
    int n = 0;
    for (gm_ms_block *b = home; b; b = b->bt_next, n++) assert_int_equal(b->birth_stream, 0);
    assert_int_equal(n, 2);
    assert_int_equal(ba.count, 3);
    gm_ms_block *g = gm_borrow_alloc(&ba, 2 * P); /* the first size >= request: x[4] */
    assert_ptr_equal(g, x[4]);
    assert_ptr_equal(gm_borrow_alloc(&ba, 3 * P), x[3]);
    assert_ptr_equal(gm_borrow_alloc(&ba, P), x[1]);
    assert_null(gm_borrow_alloc(&ba, P));
    assert_int_equal(gm_borrow_bucket_count(&ba), 0);
    /* the size index cannot grow: the block is still found by stream */
    gm_borrow_fini(&ba); /* no spare bucket capacity left */
    gm_alloc_fail_after(0);
    gm_borrow_add(&ba, x[0]);
    gm_alloc_fail_after(-1);
    assert_null(gm_borrow_alloc(&ba, P));
    assert_ptr_equal(gm_borrow_take_stream(&ba, 0), x[0]);
    gm_borrow_fini(&ba);
    for (int i = 0; i < 5; i++) free(x[i]);
}

/* ---- events ---------------------------------------------------------------------------------- */

static void test_stale_message_counted(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, 3);
    gm_ms_block *b = gm_ms_l2_malloc(f.a[0], P);
    gm_error err;
    gm_ms_access_mem_cross_stream(b, 0, 1, &err);
    gm_ms_access_mem_cross_stream(b, 0, 2, &err);
    gm_ms_block_free(b, 1);
    gm_ms_block_free(b, 2);
    gm_ms_block_free(b, 0); /* all three local */
    event(&f, 2, 1);        /* 1 learns 2 is done */
    gm_ms_event_payload p1, p2;
    gm_ms_event_payload_init(&p1, 0, 1);
    gm_ms_event_payload_init(&p2, 0, 2);
    gm_ms_send_event(f.g, &p1, &err); /* S0 sends the same news to S1 and S2 */
    gm_ms_send_event(f.g, &p2, &err);
    assert_int_equal(p1.nfreed, 1);
    assert_int_equal(p2.nfreed, 1);
    gm_ms_wait_event(f.g, &p1); /* S1 completes the recycle (borrow), version bumps */
    assert_int_equal(stats(&f).borrow_recycles, 1);
    gm_ms_wait_event(f.g, &p2); /* S2's copy is stale */
    assert_int_equal(stats(&f).stale_messages, 1);
    /* S1 -> S0 takes the block home */
    event(&f, 1, 0);
    assert_null(b->mem);
    assert_int_equal(stats(&f).returned_home, 1);
    gm_ms_event_payload_fini(&p1);
    gm_ms_event_payload_fini(&p2);
    assert_int_equal(fx_close(&f), 0);
}

static void test_last_wait_events_cleans_up(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, 3);
    gm_error err;
    gm_ms_block *b = gm_ms_l2_malloc(f.a[0], 2 * P);
    gm_ms_block *c = gm_ms_l2_malloc(f.a[1], P);
    gm_ms_access_mem_cross_stream(b, 0, 2, &err);
    gm_ms_access_mem_cross_stream(c, 1, 2, &err);
    gm_ms_block_free(b, 0);
    gm_ms_block_free(b, 2); /* local on both: only events would resolve it */
    gm_ms_block_free(c, 1);
    event(&f, 1, 2);
    gm_ms_block_free(c, 2); /* parked on 2 (borrow), born on 1 */
    assert_int_equal(gm_ms_l2_borrow_count(f.a[2], 1), 1);
    gm_ms_last_wait_events(f.g);
    assert_null(b->mem);
    assert_null(c->mem);
    size_t reserved;
    gm_ms_stats st;
    gm_ms_group_stats(f.g, &st, &reserved);
    assert_int_equal(st.allocated, 0);
    assert_int_equal(reserved, 0); /* every pool gave its idle memory back */
    assert_int_equal(f.src.live_bytes, 0);
    assert_int_equal(fx_close(&f), 0);
}

static void test_send_is_all_or_nothing(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, 2);
    gm_error err;
    gm_ms_block *b = gm_ms_l2_malloc(f.a[0], P);
    gm_ms_access_mem_cross_stream(b, 0, 1, &err);
    gm_ms_block_free(b, 0);
    gm_ms_event_payload p;
    gm_ms_event_payload_init(&p, 0, 1);
    gm_alloc_fail_after(0);
    assert_int_equal(gm_ms_send_event(f.g, &p, &err), GM_ERR_NOMEM);
    gm_alloc_fail_after(-1);
    assert_int_equal(gm_ms_l2_local_recycle_blocks(f.a[0])->v[0].sent_flags, 0); /* not marked */
    assert_int_equal(gm_ms_send_event(f.g, &p, &err), GM_OK);
    gm_ms_wait_event(f.g, &p);
    gm_ms_block_free(b, 1);
    gm_ms_event_payload_fini(&p);
    gm_ms_event_payload pp;
    gm_ms_event_payload_init(&pp, 1, 0);
    gm_ms_send_event(f.g, &pp, &err);
    gm_ms_wait_event(f.g, &pp);
    gm_ms_event_payload_fini(&pp);
    assert_null(b->mem);
    gm_ms_event_payload_init(&p, 1, 1);
    assert_int_equal(gm_ms_send_event(f.g, &p, &err), GM_ERR_USAGE);
    gm_ms_event_payload_fini(&p);
    assert_int_equal(fx_close(&f), 0);
}

static void test_cross_stream_errors(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, 2);
    gm_error err;
    gm_ms_block *b = gm_ms_l2_malloc(f.a[0], P);
    assert_int_equal(gm_ms_access_mem_cross_stream(b, 0, 0, &err), GM_ERR_USAGE);
    assert_int_equal(gm_ms_access_mem_cross_stream(b, 0, 5, &err), GM_ERR_USAGE);
    gm_ms_block_free(b, 0);
    assert_int_equal(gm_ms_access_mem_cross_stream(b, 0, 1, &err), GM_ERR_USAGE); /* recycled */
    assert_int_equal(fx_close(&f), 0);
}

static void test_destructor_force_recycles_leaks(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, 3);
    gm_error err;
    gm_ms_l2_malloc(f.a[0], P);           /* never freed */
    gm_ms_block *b = gm_ms_l2_malloc(f.a[1], 2 * P);
    gm_ms_access_mem_cross_stream(b, 1, 2, &err);
    gm_ms_block_free(b, 1);               /* 2 never frees */
    gm_ms_block *c = gm_ms_l2_malloc(f.a[2], P);
    gm_ms_access_mem_cross_stream(c, 2, 0, &err);
    gm_ms_block_free(c, 2);
    event(&f, 2, 0);
    gm_ms_block_free(c, 0);               /* parked on 0: not a leak, it goes home */
    gm_ms_event_payload p;                /* sent, never waited: its block goes home too */
    gm_ms_event_payload_init(&p, 0, 2);
    gm_ms_send_event(f.g, &p, &err);
    assert_int_equal(p.nhome, 1);
    gm_ms_event_payload_fini(&p);
    assert_int_equal(fx_close(&f), 3); /* the two leaks and the one lost in the payload */
}

static void test_group_create_errors(void **state)
{
    (void)state;
    fake_src src;
    fake_init(&src, 4);
    gm_mem_source l1 = fake_source(&src);
    gm_ms_config cfg = {.streams = 65};
    gm_scalable_config_default(&cfg.l2, 0);
    gm_ms_group *g;
    gm_error err;
    assert_int_equal(gm_ms_group_create(&cfg, &l1, &g, &err), GM_ERR_USAGE);
    cfg.streams = 0;
    assert_int_equal(gm_ms_group_create(&cfg, &l1, &g, &err), GM_ERR_USAGE);
    cfg.streams = 8;
    for (long k = 0;; k++) { /* every allocation failing in turn: a clean error, no leak */
        gm_alloc_fail_after(k);
        gm_status st = gm_ms_group_create(&cfg, &l1, &g, &err);
        gm_alloc_fail_after(-1);
        if (st == GM_OK) {
            gm_ms_group_destroy(g);
            break;
        }
        assert_int_equal(st, GM_ERR_NOMEM);
        assert_null(g);
    }
    fake_fini(&src);
}

int main(void)
{
    gm_log_set_level(GM_LOG_ERROR);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_own_malloc_free),
        cmocka_unit_test(test_own_malloc_failed_but_using_borrow),
        cmocka_unit_test(test_parked_block_that_fits_is_lent_first),
        cmocka_unit_test(test_longer_parked_block_lent_before_pool_grows),
        cmocka_unit_test(test_idle_chunk_shared_after_event),
        cmocka_unit_test(test_recycle_before_growth),
        cmocka_unit_test(test_coarse_l1_recycles_at_iteration_end),
        cmocka_unit_test(test_idle_chunk_shared_through_a_third_stream),
        cmocka_unit_test(test_destroy_returns_shared_chunk),
        cmocka_unit_test(test_small_blocks_share_pages),
        cmocka_unit_test(test_release_unheard_without_internal_deps),
        cmocka_unit_test(test_internal_dependency_reuses_release),
        cmocka_unit_test(test_internal_dependency_delivers_news_in_flight),
        cmocka_unit_test(test_payload_in_flight_at_fini_and_destroy),
        cmocka_unit_test(test_memory_first_lends_at_most_twice),
        cmocka_unit_test(test_own_malloc_free_before_sync),
        cmocka_unit_test(test_sync_local_recycle_status_live),
        cmocka_unit_test(test_change_l1_allocator),
        cmocka_unit_test(test_reinit_requires_cleared),
        cmocka_unit_test(test_borrow_bucket_erases_its_own_key),
        cmocka_unit_test(test_borrow_by_size_and_stream),
        cmocka_unit_test(test_stale_message_counted),
        cmocka_unit_test(test_last_wait_events_cleans_up),
        cmocka_unit_test(test_send_is_all_or_nothing),
        cmocka_unit_test(test_cross_stream_errors),
        cmocka_unit_test(test_destructor_force_recycles_leaks),
        cmocka_unit_test(test_group_create_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
