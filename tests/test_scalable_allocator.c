/*
 * test_scalable_allocator.c — the L1 side of the runtime allocator (reference §6.8):
 * ScalableAllocator page rounding, exact-layer reuse, splitting the nearest longer span through
 * the LUT, merging with free buddies, the total threshold that makes the caller recycle, the
 * uncacheable/unsplittable/layer-capacity limits, Recycle(), the debug single-thread check; and
 * the CachingMemAllocator: its synchronize -> recycle -> retry ladder, the per-thread sweep of
 * the other allocators, the registry's finalize (constraint 4) and session removal (constraint 5),
 * and its lock under several threads (constraint 2); and, not GE's, idle chunks moving between
 * allocators (the L2 pools' cross-stream sharing).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fake_mem_source.h"
#include "graphmem/log.h"
#include "runtime/caching_allocator.h"
#include "runtime/scalable_allocator.h"
#include "util/alloc.h"

#define P FAKE_PAGE

static gm_scalable_config small_config(void)
{
    gm_scalable_config c;
    gm_scalable_config_default(&c, 0);
    return c;
}

typedef struct fixture {
    fake_src src;
    gm_mem_source ms;
    gm_scalable_allocator *sa;
} fixture;

static void fx_open(fixture *f, size_t pages, const gm_scalable_config *c)
{
    fake_init(&f->src, pages);
    f->ms = fake_source(&f->src);
    gm_scalable_config d = small_config();
    f->sa = gm_scalable_create(&f->ms, c ? c : &d);
    assert_non_null(f->sa);
}

static void fx_close(fixture *f)
{
    gm_scalable_destroy(f->sa);
    assert_int_equal(f->src.live_bytes, 0); /* everything went back */
    fake_fini(&f->src);
}

static uintptr_t addr(gm_span *s) { return (uintptr_t)gm_span_addr(s); }

static void test_defaults(void **state)
{
    (void)state;
    gm_scalable_config c;
    gm_scalable_config_default(&c, 0);
    assert_int_equal(c.page_shift, 16);
    assert_true(c.total_threshold == 30 * GM_GIB);
    assert_true(c.per_layer_cache == 8 * GM_GIB);
    assert_int_equal(c.span_count_per_layer, 10240);
    assert_true(c.unsplittable == 16 * GM_GIB && c.uncacheable == 16 * GM_GIB);
    gm_scalable_config_default(&c, 64 * GM_GIB);
    assert_true(c.uncacheable == 32 * GM_GIB);
    assert_true(c.total_threshold == (size_t)(64.0 * (double)GM_GIB * 0.95)); /* 95% of a known device */
    gm_scalable_config_default(&c, 0);
    assert_int_equal(gm_scalable_config_set_pool_threshold_gib(&c, 0), -1);
    assert_int_equal(gm_scalable_config_set_pool_threshold_gib(&c, 31), -1);
    assert_int_equal(gm_scalable_config_set_pool_threshold_gib(&c, 2), 0);
    assert_true(c.total_threshold == 2 * GM_GIB);
}

static void test_rounding_and_exact_layer(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, 64, NULL);
    gm_span *a = gm_scalable_alloc(f.sa, 1);
    assert_int_equal(gm_scalable_span_size(f.sa, a), P);
    gm_span *b = gm_scalable_alloc(f.sa, 0); /* at least one page */
    assert_int_equal(gm_scalable_span_size(f.sa, b), P);
    gm_span *c = gm_scalable_alloc(f.sa, P + 1);
    assert_int_equal(gm_scalable_span_size(f.sa, c), 2 * P);
    uintptr_t ca = addr(c);
    gm_scalable_free(f.sa, c);
    assert_int_equal(gm_scalable_layer_count(f.sa, 2), 1);
    gm_span *d = gm_scalable_alloc(f.sa, 2 * P); /* exact layer: the same span, no fetch */
    assert_int_equal(addr(d), ca);
    assert_int_equal(gm_scalable_get_stats(f.sa)->fetches, 3);
    gm_scalable_free(f.sa, a);
    gm_scalable_free(f.sa, b);
    gm_scalable_free(f.sa, d);
    const gm_scalable_stats *st = gm_scalable_get_stats(f.sa);
    assert_int_equal(st->occupied, 0);
    assert_int_equal(st->idle, 4 * P);
    assert_int_equal(st->peak_occupied, 4 * P);
    fx_close(&f);
}

static void test_split_and_merge(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, 64, NULL);
    gm_span *big = gm_scalable_alloc(f.sa, 8 * P);
    uintptr_t base = addr(big);
    gm_scalable_free(f.sa, big);
    gm_span *a = gm_scalable_alloc(f.sa, 2 * P); /* splits the 8: remainder 6 in layer 6 */
    assert_int_equal(addr(a), base);
    assert_int_equal(gm_scalable_layer_count(f.sa, 6), 1);
    gm_span *b = gm_scalable_alloc(f.sa, 2 * P);
    gm_span *c = gm_scalable_alloc(f.sa, 2 * P);
    assert_int_equal(addr(b), base + 2 * P);
    assert_int_equal(addr(c), base + 4 * P);
    assert_int_equal(gm_scalable_layer_count(f.sa, 2), 1); /* the last 2-page remainder */
    assert_int_equal(gm_scalable_get_stats(f.sa)->fetches, 1);
    gm_scalable_free(f.sa, a); /* b is in use: no merge */
    assert_int_equal(gm_scalable_layer_count(f.sa, 2), 2);
    gm_scalable_free(f.sa, c); /* merges with the free tail: 4 pages */
    assert_int_equal(gm_scalable_layer_count(f.sa, 4), 1);
    assert_int_equal(gm_scalable_layer_count(f.sa, 2), 1);
    gm_scalable_free(f.sa, b); /* merges both ways: the whole chunk again */
    assert_int_equal(gm_scalable_layer_count(f.sa, 8), 1);
    assert_int_equal(gm_scalable_layer_count(f.sa, 4) + gm_scalable_layer_count(f.sa, 2), 0);
    assert_int_equal(gm_scalable_get_stats(f.sa)->merges, 3);
    assert_int_equal(gm_scalable_recycle(f.sa), 8 * P);
    assert_int_equal(f.src.live_bytes, 0);
    fx_close(&f);
}

static void test_lut_finds_far_layer(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, 6000, NULL);
    gm_span *far = gm_scalable_alloc(f.sa, 5000 * P); /* beyond one summary word (4096 layers) */
    gm_span *near = gm_scalable_alloc(f.sa, 3 * P);
    gm_scalable_free(f.sa, far);
    gm_scalable_free(f.sa, near);
    gm_span *s = gm_scalable_alloc(f.sa, 4 * P); /* 3 is too short: the 5000 is split */
    assert_int_equal(addr(s), addr(far));
    assert_int_equal(gm_scalable_layer_count(f.sa, 4996), 1);
    assert_int_equal(gm_scalable_layer_count(f.sa, 3), 1);
    gm_span *t = gm_scalable_alloc(f.sa, 4997 * P); /* longer than anything cached: fetch fails (arena full) */
    assert_null(t);
    gm_scalable_free(f.sa, s);
    fx_close(&f);
}

static void test_threshold_makes_caller_recycle(void **state)
{
    (void)state;
    gm_scalable_config c = small_config();
    c.total_threshold = 4 * P;
    fixture f;
    fx_open(&f, 64, &c);
    gm_span *a = gm_scalable_alloc(f.sa, 2 * P);
    gm_span *b = gm_scalable_alloc(f.sa, 2 * P);
    gm_scalable_free(f.sa, a); /* 2 pages idle, 2 occupied */
    assert_null(gm_scalable_alloc(f.sa, 3 * P)); /* 2 + 3 > 4 and idle memory exists */
    assert_int_equal(gm_scalable_get_stats(f.sa)->threshold_fails, 1);
    assert_int_equal(f.src.allocs, 2);
    assert_int_equal(gm_scalable_recycle(f.sa), 2 * P);
    gm_span *d = gm_scalable_alloc(f.sa, 3 * P); /* no idle memory now: over the threshold is allowed */
    assert_non_null(d);
    gm_scalable_free(f.sa, b);
    gm_scalable_free(f.sa, d);
    fx_close(&f);
}

static void test_uncacheable_unsplittable_capacity(void **state)
{
    (void)state;
    gm_scalable_config c = small_config();
    c.uncacheable = 16 * P;
    c.unsplittable = 8 * P;
    c.span_count_per_layer = 2;
    fixture f;
    fx_open(&f, 128, &c);
    gm_span *u = gm_scalable_alloc(f.sa, 16 * P);
    gm_scalable_free(f.sa, u); /* uncacheable: straight back */
    assert_int_equal(f.src.live_bytes, 0);
    gm_span *e = gm_scalable_alloc(f.sa, 8 * P);
    gm_scalable_free(f.sa, e);
    gm_span *s = gm_scalable_alloc(f.sa, 2 * P); /* the cached 8 is unsplittable: a new chunk */
    assert_int_not_equal(addr(s), addr(e));
    assert_int_equal(gm_scalable_layer_count(f.sa, 8), 1);
    gm_span *one[3];
    for (int i = 0; i < 3; i++) one[i] = gm_scalable_alloc(f.sa, P);
    for (int i = 0; i < 3; i++) gm_scalable_free(f.sa, one[i]);
    assert_int_equal(gm_scalable_layer_count(f.sa, 1), 2); /* layer capacity 2: the third went back */
    gm_scalable_free(f.sa, s);
    fx_close(&f);
}

static void test_source_failure_and_oom(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, 4, NULL);
    f.src.fail_next = 1;
    assert_null(gm_scalable_alloc(f.sa, P));
    gm_span *a = gm_scalable_alloc(f.sa, P);
    assert_non_null(a);
    gm_alloc_fail_after(0); /* the chunk record cannot be made */
    assert_null(gm_scalable_alloc(f.sa, 2 * P));
    gm_alloc_fail_after(-1);
    assert_int_equal(f.src.live_bytes, P);
    assert_int_equal(gm_scalable_live_spans(f.sa), 1);
    fx_close(&f); /* destroy returns the still-occupied span too */
}

#ifndef NDEBUG
static void *alloc_from_other_thread(void *arg)
{
    gm_scalable_alloc(arg, P);
    return NULL;
}
#endif

static void test_single_thread_checked(void **state)
{
    (void)state;
#ifdef NDEBUG
    skip();
#else
    fixture f;
    fx_open(&f, 8, NULL);
    pid_t pid = fork();
    if (pid == 0) {
        pthread_t t;
        pthread_create(&t, NULL, alloc_from_other_thread, f.sa);
        pthread_join(t, NULL);
        _exit(0); /* reached only if the check did not fire */
    }
    int status = 0;
    waitpid(pid, &status, 0);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
    gm_scalable_rebind_thread(f.sa);
    fx_close(&f);
#endif
}

/* ---- L1: CachingMemAllocator ------------------------------------------------------------------ */

typedef struct sync_log {
    int calls;
    int last_stream;
} sync_log;

static void on_sync(void *ctx, int stream)
{
    sync_log *l = ctx;
    l->calls++;
    l->last_stream = stream;
}

static void test_l1_ladder_sync_recycle_retry(void **state)
{
    (void)state;
    fake_src src;
    fake_init(&src, 16);
    gm_mem_source ms = fake_source(&src);
    gm_scalable_config c = small_config();
    sync_log log = {0};
    gm_caching_allocator *a = gm_caching_create(&ms, &c, on_sync, &log);
    gm_error err;
    void *p = NULL, *q = NULL;
    assert_int_equal(gm_caching_malloc(a, P, &p, &err), GM_OK);
    assert_int_equal(gm_caching_free(a, p, &err), GM_OK); /* one page idle in the cache */
    src.fail_next = 1;                                      /* the first device malloc fails */
    assert_int_equal(gm_caching_malloc(a, 2 * P, &q, &err), GM_OK);
    assert_int_equal(log.calls, 1); /* synchronized before recycling */
    assert_int_equal(log.last_stream, -1);
    assert_int_equal(src.frees, 1); /* the idle page went back */
    gm_caching_stats st;
    gm_caching_get_stats(a, &st);
    assert_int_equal(st.syncs, 1);
    assert_int_equal(st.pool.occupied, 2 * P);
    /* a failure all the way down is a clean error */
    src.fail_always = 1;
    void *r = (void *)1;
    assert_int_equal(gm_caching_malloc(a, 4 * P, &r, &err), GM_ERR_NOMEM);
    assert_null(r);
    assert_non_null(strstr(err.message, "out of memory"));
    src.fail_always = 0;
    assert_int_equal(gm_caching_free(a, (void *)(FAKE_BASE + 12345), &err), GM_ERR_USAGE);
    assert_int_equal(gm_caching_free(a, q, &err), GM_OK);
    gm_caching_destroy(a);
    assert_int_equal(src.live_bytes, 0);
    fake_fini(&src);
}

static void test_l1_ladder_k_failures(void **state)
{
    (void)state;
    /* A source failing the first K allocations: the ladder's retries absorb K = 2 (own retry,
     * then the retry after the other allocators), not K = 3. */
    for (int k = 0; k <= 3; k++) {
        fake_src src;
        fake_init(&src, 16);
        gm_mem_source ms = fake_source(&src);
        gm_scalable_config c = small_config();
        sync_log log = {0};
        gm_caching_allocator *a = gm_caching_create(&ms, &c, on_sync, &log);
        src.fail_next = k;
        void *p = NULL;
        gm_error err;
        gm_status st = gm_caching_malloc(a, P, &p, &err);
        if (k <= 2) assert_int_equal(st, GM_OK);
        else assert_int_equal(st, GM_ERR_NOMEM);
        assert_int_equal(log.calls, k > 0 ? 1 : 0);
        if (p) gm_caching_free(a, p, &err);
        gm_caching_destroy(a);
        assert_int_equal(src.live_bytes, 0);
        fake_fini(&src);
    }
}

static void test_registry_recycles_other_allocators(void **state)
{
    (void)state;
    fake_src src;
    fake_init(&src, 2); /* both allocators share a two-page device */
    gm_mem_source ms = fake_source(&src);
    gm_scalable_config c = small_config();
    sync_log la = {0}, lb = {0};
    gm_caching_allocator *a, *b, *a2;
    gm_error err;
    assert_int_equal(gm_caching_registry_get(0, 0, 0, &ms, &c, on_sync, &la, &a, &err), GM_OK);
    assert_int_equal(gm_caching_registry_get(1, 0, 0, &ms, &c, on_sync, &lb, &b, &err), GM_OK);
    assert_int_equal(gm_caching_registry_get(0, 0, 0, &ms, &c, on_sync, &lb, &a2, &err), GM_OK);
    assert_ptr_equal(a, a2);
    assert_int_equal(gm_caching_registry_count(), 2);
    void *p;
    assert_int_equal(gm_caching_malloc(a, 2 * P, &p, &err), GM_OK);
    assert_int_equal(gm_caching_free(a, p, &err), GM_OK); /* a caches the whole device */
    assert_int_equal(gm_caching_malloc(b, P, &p, &err), GM_OK); /* b's own ladder is not enough */
    assert_int_equal(lb.calls, 1);
    assert_int_equal(la.calls, 1); /* a was synchronized and recycled for b */
    /* finalize: every byte back, occupied ones too; every later use an error */
    gm_caching_registry_finalize();
    assert_int_equal(src.live_bytes, 0);
    void *q = (void *)1;
    assert_int_equal(gm_caching_malloc(b, P, &q, &err), GM_ERR_USAGE);
    assert_null(q);
    assert_non_null(strstr(err.message, "finalize"));
    assert_int_equal(gm_caching_free(b, p, &err), GM_ERR_USAGE);
    assert_int_equal(gm_caching_recycle(b), 0);
    gm_caching_allocator *x;
    assert_int_equal(gm_caching_registry_get(2, 0, 0, &ms, &c, NULL, NULL, &x, &err), GM_ERR_USAGE);
    gm_caching_registry_reset();
    assert_int_equal(gm_caching_registry_count(), 0);
    fake_fini(&src);
}

static void test_registry_sessions(void **state)
{
    (void)state;
    fake_src src;
    fake_init(&src, 16);
    gm_mem_source ms = fake_source(&src);
    gm_scalable_config c = small_config();
    gm_caching_allocator *g, *s1, *s2, *t;
    gm_error err;
    gm_caching_registry_get(0, 0, 0, &ms, &c, NULL, NULL, &g, &err);
    gm_caching_registry_get(0, 0, 7, &ms, &c, NULL, NULL, &s1, &err);
    gm_caching_registry_get(1, 0, 7, &ms, &c, NULL, NULL, &s2, &err);
    gm_caching_registry_get(0, 0, 8, &ms, &c, NULL, NULL, &t, &err);
    assert_ptr_not_equal(g, s1);
    void *p;
    gm_caching_malloc(s1, P, &p, &err); /* still held when the session ends */
    gm_caching_malloc(s2, P, &p, &err);
    gm_caching_malloc(g, P, &p, &err);
    assert_int_equal(gm_caching_registry_remove_session(7), 2);
    assert_int_equal(src.live_bytes, P); /* only the global one's page */
    assert_int_equal(gm_caching_registry_count(), 2);
    assert_int_equal(gm_caching_registry_remove_session(0), 0); /* 0 is the process-wide scope */
    gm_caching_registry_finalize();
    gm_caching_registry_reset();
    assert_int_equal(src.live_bytes, 0);
    fake_fini(&src);
}

static void test_l1_as_source(void **state)
{
    (void)state;
    fake_src src;
    fake_init(&src, 16);
    gm_mem_source ms = fake_source(&src);
    gm_scalable_config c = small_config();
    gm_caching_allocator *l1 = gm_caching_create(&ms, &c, NULL, NULL);
    gm_mem_source l1s = gm_caching_as_source(l1);
    gm_scalable_allocator *l2 = gm_scalable_create(&l1s, &c);
    gm_span *s = gm_scalable_alloc(l2, 3 * P);
    gm_caching_stats st;
    gm_caching_get_stats(l1, &st);
    assert_int_equal(st.pool.occupied, 3 * P);
    gm_scalable_free(l2, s);
    gm_scalable_recycle(l2);
    gm_caching_get_stats(l1, &st);
    assert_int_equal(st.pool.occupied, 0);
    assert_int_equal(st.pool.idle, 3 * P);
    gm_scalable_destroy(l2);
    gm_caching_destroy(l1);
    assert_int_equal(src.live_bytes, 0);
    fake_fini(&src);
}

typedef struct hammer {
    gm_caching_allocator *a;
    int seed;
} hammer;

static void *hammer_thread(void *arg)
{
    hammer *h = arg;
    void *held[8] = {0};
    unsigned x = (unsigned)h->seed;
    for (int i = 0; i < 20000; i++) {
        x = x * 1103515245u + 12345u;
        int k = (int)((x >> 16) % 8);
        gm_error err;
        if (held[k]) {
            gm_caching_free(h->a, held[k], &err);
            held[k] = NULL;
        } else if (gm_caching_malloc(h->a, ((x >> 8) % 3 + 1) * P, &held[k], &err) != GM_OK) {
            held[k] = NULL;
        }
    }
    for (int k = 0; k < 8; k++)
        if (held[k]) gm_caching_free(h->a, held[k], NULL);
    return NULL;
}

static void test_l1_threads(void **state)
{
    (void)state;
    fake_src src;
    fake_init(&src, 256);
    gm_mem_source ms = fake_source(&src);
    gm_scalable_config c = small_config();
    gm_caching_allocator *a = gm_caching_create(&ms, &c, NULL, NULL);
    pthread_t t[4];
    hammer h[4];
    for (int i = 0; i < 4; i++) {
        h[i] = (hammer){a, i + 1};
        pthread_create(&t[i], NULL, hammer_thread, &h[i]);
    }
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    gm_caching_stats st;
    gm_caching_get_stats(a, &st);
    assert_int_equal(st.pool.occupied, 0);
    assert_int_equal(st.mallocs, st.frees);
    gm_caching_destroy(a);
    assert_int_equal(src.live_bytes, 0);
    fake_fini(&src);
}

/* Not GE's (cross-stream sharing of the L2 pools): a wholly idle chunk, stamped when it went
 * idle, moves to another allocator — the shortest that is long enough and stamped early enough;
 * a chunk with a span out never moves. */
static void test_idle_chunk_moves_between_allocators(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, 64, NULL);
    gm_scalable_config c = small_config();
    gm_scalable_allocator *other = gm_scalable_create(&f.ms, &c);
    gm_span *a = gm_scalable_alloc(f.sa, 4 * P), *b = gm_scalable_alloc(f.sa, 2 * P), *d = gm_scalable_alloc(f.sa, 3 * P);
    assert_int_equal(addr(a), FAKE_BASE);
    assert_int_equal(addr(b), FAKE_BASE + 4 * P);
    assert_int_equal(addr(d), FAKE_BASE + 6 * P);
    uint64_t stamp = 5;
    gm_scalable_set_stamp(f.sa, &stamp);
    gm_scalable_free(f.sa, a); /* 4 pages idle, stamp 5 */
    stamp = 7;
    gm_scalable_free(f.sa, b); /* 2 pages idle, stamp 7 */
    assert_true(gm_scalable_can_serve(f.sa, 3 * P)); /* by splitting a */
    assert_false(gm_scalable_can_serve(f.sa, 5 * P));
    assert_null(gm_scalable_take_idle_chunk(f.sa, 5 * P, 100)); /* none that long */
    assert_null(gm_scalable_take_idle_chunk(f.sa, P, 5));       /* none idle before stamp 5 */
    gm_chunk *ch = gm_scalable_take_idle_chunk(f.sa, P, 8);      /* both qualify: the shorter */
    assert_non_null(ch);
    assert_int_equal(ch->base, FAKE_BASE + 4 * P);
    assert_int_equal(ch->pages, 2);
    assert_int_equal(gm_scalable_get_stats(f.sa)->idle, 4 * P);
    assert_int_equal(gm_scalable_adopt(other, ch), 0);
    assert_int_equal(gm_scalable_get_stats(other)->idle, 2 * P);
    assert_int_equal(gm_scalable_layer_count(other, 2), 1);
    gm_span *e = gm_scalable_alloc(other, P); /* served from the adopted chunk, split */
    assert_int_equal(addr(e), FAKE_BASE + 4 * P);
    assert_int_equal(f.src.allocs, 3); /* no new source memory */
    /* d's chunk has a span out: never taken, whatever its stamp */
    gm_span *g = gm_scalable_alloc(f.sa, 4 * P); /* a's chunk, reused */
    assert_int_equal(addr(g), FAKE_BASE);
    assert_null(gm_scalable_take_idle_chunk(f.sa, P, 100));
    gm_scalable_free(other, e);
    gm_scalable_free(f.sa, g);
    gm_scalable_free(f.sa, d);
    gm_scalable_destroy(other); /* the adopted chunk goes back to the source it came from */
    assert_int_equal(f.src.live_bytes, 7 * P);
    fx_close(&f);
}

int main(void)
{
    gm_log_set_level(GM_LOG_ERROR); /* finalize reports memory still in use, on purpose */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_rounding_and_exact_layer),
        cmocka_unit_test(test_split_and_merge),
        cmocka_unit_test(test_lut_finds_far_layer),
        cmocka_unit_test(test_threshold_makes_caller_recycle),
        cmocka_unit_test(test_uncacheable_unsplittable_capacity),
        cmocka_unit_test(test_source_failure_and_oom),
        cmocka_unit_test(test_single_thread_checked),
        cmocka_unit_test(test_l1_ladder_sync_recycle_retry),
        cmocka_unit_test(test_l1_ladder_k_failures),
        cmocka_unit_test(test_registry_recycles_other_allocators),
        cmocka_unit_test(test_registry_sessions),
        cmocka_unit_test(test_l1_as_source),
        cmocka_unit_test(test_l1_threads),
        cmocka_unit_test(test_idle_chunk_moves_between_allocators),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
