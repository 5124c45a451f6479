/*
 * test_scalable_expandable.c — the ScalableAllocator's expandable mode (one reserved range,
 * mapped in pages; GE's optional virtual-address + physical-page mode) over a fake source with
 * virtual memory (tests/fake_mem_source.h, which aborts on any misuse of map and unmap); and the
 * freeing of part of a span that lets an L2 pool give back the idle parts of its chunks.
 *
 * Expandable: spans of different fetches merge; an allocation that may not grow the mapping
 * unmaps idle spans to make room instead, and fails rather than grow; Recycle unmaps every idle
 * span; a source granule coarser than the page; a failed map; a source without virtual memory or
 * whose reservation fails (chunks, quietly); destroy with spans still out.
 * Parts: the caching allocator frees the bottom, middle or top of a block, keeps the rest as
 * blocks of their own, and refuses parts that are not whole pages inside a block; a pool's
 * release of its idle parts leaves its chunks as the runs around them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "fake_mem_source.h"
#include "graphmem/log.h"
#include "runtime/caching_allocator.h"
#include "runtime/scalable_allocator.h"

#define P FAKE_PAGE

typedef struct fixture {
    fake_src src;
    gm_mem_source ms;
    gm_scalable_allocator *sa;
} fixture;

/* An expandable allocator over a fake device of `pages` pages that reserves `cap` of them. */
static void fx_open(fixture *f, size_t pages, size_t cap, size_t granule)
{
    fake_init(&f->src, pages);
    f->ms = fake_source_vm(&f->src, granule);
    gm_scalable_config c = fake_expandable_config(cap);
    assert_non_null(f->sa = gm_scalable_create(&f->ms, &c));
}

static void fx_close(fixture *f)
{
    gm_scalable_destroy(f->sa);
    assert_int_equal(f->src.live_bytes, 0);
    assert_int_equal(f->src.mapped_pages, 0);
    assert_int_equal(f->src.reserves, f->src.releases);
    fake_fini(&f->src);
}

static size_t page_no(const gm_span *s) { return fake_page_of(gm_span_addr(s)); }
static size_t held(const fixture *f)
{
    const gm_scalable_stats *st = gm_scalable_get_stats(f->sa);
    return (st->occupied + st->idle) / P;
}

static void test_fetches_merge(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, 64, 32, 1);
    gm_span *a = gm_scalable_alloc(f.sa, 3 * P), *b = gm_scalable_alloc(f.sa, 5 * P);
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(f.src.reserves, 1);
    assert_int_equal(page_no(b), page_no(a) + 3); /* side by side in the one range */
    assert_int_equal(f.src.mapped_pages, 8);
    assert_int_equal(held(&f), 8);
    gm_scalable_free(f.sa, a);
    gm_scalable_free(f.sa, b);
    assert_int_equal(gm_scalable_layer_count(f.sa, 8), 1); /* one idle span of both fetches */
    const size_t maps = f.src.maps;
    gm_span *c = gm_scalable_alloc(f.sa, 8 * P);
    assert_non_null(c);
    assert_int_equal(page_no(c), page_no(a));
    assert_int_equal(f.src.maps, maps); /* served from what is mapped */
    gm_scalable_free(f.sa, c);
    fx_close(&f);
}

/* The same two fetches without the mode are two chunks: the longer request fetches a third. */
static void test_chunks_do_not_merge(void **state)
{
    (void)state;
    fake_src src;
    fake_init(&src, 64);
    gm_mem_source ms = fake_source(&src);
    gm_scalable_config c;
    gm_scalable_config_default(&c, 0);
    gm_scalable_allocator *sa = gm_scalable_create(&ms, &c);
    gm_span *a = gm_scalable_alloc(sa, 3 * P), *b = gm_scalable_alloc(sa, 5 * P);
    gm_scalable_free(sa, a);
    gm_scalable_free(sa, b);
    gm_span *d = gm_scalable_alloc(sa, 8 * P);
    assert_int_equal(src.allocs, 3);
    assert_int_equal(src.live_bytes, 16 * P);
    gm_scalable_free(sa, d);
    gm_scalable_destroy(sa);
    fake_fini(&src);
}

static void test_within_unmaps_idle_instead_of_growing(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, 64, 32, 1);
    gm_span *a = gm_scalable_alloc(f.sa, 4 * P), *b = gm_scalable_alloc(f.sa, 2 * P), *c = gm_scalable_alloc(f.sa, 4 * P);
    assert_int_equal(f.src.mapped_pages, 10);
    gm_scalable_free(f.sa, a);
    gm_scalable_free(f.sa, c); /* idle 4 + 4 pages, cut apart by b: no 6-page span */
    gm_span *d = gm_scalable_alloc_within(f.sa, 6 * P);
    assert_non_null(d);
    /* c grown by 2 pages, 2 unmapped from the top of a: no more mapped than before */
    assert_int_equal(f.src.mapped_pages, 10);
    assert_int_equal(held(&f), 10);
    assert_int_equal(page_no(d), page_no(b) + 2);
    /* what is idle (a's lower half) is what the next one would grow: within refuses to grow */
    const size_t maps = f.src.maps;
    assert_null(gm_scalable_alloc_within(f.sa, 4 * P));
    assert_int_equal(f.src.maps, maps);
    gm_span *e = gm_scalable_alloc(f.sa, 4 * P); /* plain alloc grows */
    assert_non_null(e);
    assert_int_equal(page_no(e), page_no(a)); /* the lowest hole that fits */
    assert_int_equal(f.src.mapped_pages, 12);
    gm_scalable_free(f.sa, b);
    gm_scalable_free(f.sa, d);
    gm_scalable_free(f.sa, e);
    fx_close(&f);
}

static void test_grows_idle_span_below_a_hole(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, 64, 32, 1);
    gm_span *a = gm_scalable_alloc(f.sa, 2 * P), *b = gm_scalable_alloc(f.sa, 3 * P);
    gm_scalable_free(f.sa, b); /* idle 3 pages at the top of what is mapped */
    gm_span *c = gm_scalable_alloc(f.sa, 5 * P);
    assert_non_null(c);
    assert_int_equal(page_no(c), page_no(a) + 2); /* the idle span, grown by 2 mapped pages */
    assert_int_equal(f.src.mapped_pages, 7);
    gm_scalable_free(f.sa, a);
    gm_scalable_free(f.sa, c);
    fx_close(&f);
}

/* Within the most ever mapped, growing the idle span below a hole: only the pages missing are
 * unmapped elsewhere, from the top of a longer idle span (its lower part stays mapped), and the
 * span being grown stays (unmapping it too would only make the map longer). */
static void test_within_unmaps_only_what_is_missing(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, 64, 32, 1);
    gm_span *a = gm_scalable_alloc(f.sa, 2 * P), *x = gm_scalable_alloc(f.sa, 4 * P);
    gm_span *b = gm_scalable_alloc(f.sa, 1 * P), *y = gm_scalable_alloc(f.sa, 3 * P);
    assert_int_equal(f.src.mapped_pages, 10);
    gm_scalable_free(f.sa, x); /* idle 4 pages between a and b */
    gm_scalable_free(f.sa, y); /* idle 3 pages at the top, below the hole */
    const size_t maps = f.src.maps, unmaps = f.src.unmaps;
    gm_span *d = gm_scalable_alloc_within(f.sa, 5 * P);
    assert_non_null(d);
    assert_int_equal(page_no(d), page_no(b) + 1); /* y, grown by 2 pages */
    assert_int_equal(f.src.mapped_pages, 10);     /* 2 unmapped from x, 2 mapped above y */
    assert_int_equal(f.src.maps, maps + 1);
    assert_int_equal(f.src.unmaps, unmaps + 1);
    assert_int_equal(gm_scalable_layer_count(f.sa, 2), 1); /* x's lower half, still mapped */
    assert_int_equal(held(&f), 10);
    gm_scalable_free(f.sa, a);
    gm_scalable_free(f.sa, b);
    gm_scalable_free(f.sa, d);
    fx_close(&f);
}

static void test_recycle_unmaps_idle(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, 64, 32, 1);
    gm_span *a = gm_scalable_alloc(f.sa, 3 * P), *b = gm_scalable_alloc(f.sa, 2 * P), *c = gm_scalable_alloc(f.sa, 4 * P);
    gm_scalable_free(f.sa, a);
    gm_scalable_free(f.sa, c);
    assert_int_equal(gm_scalable_recycle(f.sa), 7 * P);
    assert_int_equal(f.src.mapped_pages, 2);
    assert_int_equal(gm_scalable_get_stats(f.sa)->idle, 0);
    assert_int_equal(gm_scalable_recycle(f.sa), 0);
    gm_scalable_free(f.sa, b);
    assert_int_equal(gm_scalable_recycle(f.sa), 2 * P);
    assert_int_equal(f.src.live_bytes, 0);
    fx_close(&f);
}

static void test_coarse_granule(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, 64, 32, 4); /* the source maps 4 pages at a time */
    gm_span *a = gm_scalable_alloc(f.sa, 1 * P);
    assert_non_null(a);
    assert_int_equal(f.src.mapped_pages, 4); /* a whole granule, 3 pages of it idle */
    assert_int_equal(gm_scalable_get_stats(f.sa)->idle, 3 * P);
    gm_span *b = gm_scalable_alloc(f.sa, 2 * P); /* from the idle part */
    assert_int_equal(f.src.mapped_pages, 4);
    gm_scalable_free(f.sa, a);
    assert_int_equal(gm_scalable_recycle(f.sa), 0); /* no whole granule is idle */
    gm_span *c = gm_scalable_alloc(f.sa, 6 * P);
    assert_int_equal(f.src.mapped_pages, 12);
    gm_scalable_free(f.sa, b);
    gm_scalable_free(f.sa, c);
    assert_int_equal(gm_scalable_recycle(f.sa), 12 * P);
    fx_close(&f);
}

static void test_map_failure(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, 64, 32, 1);
    gm_span *a = gm_scalable_alloc(f.sa, 2 * P);
    f.src.fail_next = 2; /* the map, then the chunk the allocator falls back to */
    assert_null(gm_scalable_alloc(f.sa, 3 * P));
    assert_int_equal(f.src.mapped_pages, 2);
    gm_span *b = gm_scalable_alloc(f.sa, 3 * P);
    assert_non_null(b);
    assert_int_equal(page_no(b), page_no(a) + 2); /* the hole is whole again */
    gm_scalable_free(f.sa, a);
    gm_scalable_free(f.sa, b);
    fx_close(&f);
}

/* A full range: chunks from the source beyond it. */
static void test_full_range_fetches_chunks(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, 64, 8, 1);
    gm_span *a = gm_scalable_alloc(f.sa, 6 * P), *b = gm_scalable_alloc(f.sa, 4 * P);
    assert_non_null(b);
    assert_int_equal(f.src.allocs, 1); /* b did not fit in the 2 pages left */
    assert_int_equal(f.src.mapped_pages, 6);
    gm_scalable_free(f.sa, a);
    gm_scalable_free(f.sa, b);
    fx_close(&f);
}

static void test_no_virtual_memory_is_quiet(void **state)
{
    (void)state;
    char buf[256] = "";
    FILE *log = fmemopen(buf, sizeof buf, "w");
    gm_log_set_stream(log);
    gm_log_set_level(GM_LOG_DEBUG);
    fixture f;
    fx_open(&f, 64, 32, 1);
    f.src.fail_reserve = 1;
    gm_span *a = gm_scalable_alloc(f.sa, 3 * P);
    assert_non_null(a);
    assert_int_equal(f.src.allocs, 1); /* a chunk, as without the mode */
    assert_int_equal(f.src.reserves, 0);
    f.src.fail_reserve = 0;
    gm_span *b = gm_scalable_alloc(f.sa, 3 * P);
    assert_int_equal(f.src.allocs, 2); /* tried once, then chunks for good */
    assert_int_equal(f.src.reserves, 0);
    gm_scalable_free(f.sa, a);
    gm_scalable_free(f.sa, b);
    fx_close(&f);
    /* and a source with no virtual memory at all */
    fake_src src;
    fake_init(&src, 16);
    gm_mem_source ms = fake_source(&src);
    gm_scalable_config c = fake_expandable_config(32);
    gm_scalable_allocator *sa = gm_scalable_create(&ms, &c);
    gm_span *s = gm_scalable_alloc(sa, P);
    assert_non_null(s);
    assert_int_equal(src.allocs, 1);
    gm_scalable_free(sa, s);
    gm_scalable_destroy(sa);
    fake_fini(&src);
    gm_log_set_level(GM_LOG_WARN);
    gm_log_set_stream(NULL);
    fclose(log);
    assert_string_equal(buf, ""); /* no message of any level */
}

static void test_destroy_with_spans_out(void **state)
{
    (void)state;
    fixture f;
    fx_open(&f, 64, 32, 1);
    gm_log_set_level(GM_LOG_ERROR); /* the leak warning is expected */
    assert_non_null(gm_scalable_alloc(f.sa, 3 * P));
    gm_span *b = gm_scalable_alloc(f.sa, 2 * P);
    gm_scalable_free(f.sa, b);
    fx_close(&f); /* unmaps the occupied span and the idle one, releases the range */
    /* with a coarse granule, the spans out share granules: unmapped a run at a time */
    fx_open(&f, 64, 32, 4);
    gm_span *c = gm_scalable_alloc(f.sa, 1 * P), *d = gm_scalable_alloc(f.sa, 6 * P);
    assert_non_null(c);
    assert_non_null(d);
    assert_int_equal(f.src.mapped_pages, 8);
    fx_close(&f); /* the fake aborts on an unmap that is not whole granules */
    gm_log_set_level(GM_LOG_WARN);
}

/* ---- parts ---------------------------------------------------------------------------------- */

/* A caching L1 (GE's defaults, chunks) over a fake device of 64 pages. */
static gm_caching_allocator *l1_open(fake_src *src, gm_mem_source *ms)
{
    fake_init(src, 64);
    *ms = fake_source(src);
    gm_scalable_config c;
    gm_scalable_config_default(&c, 0);
    gm_caching_allocator *l1 = gm_caching_create(ms, &c, NULL, NULL);
    assert_non_null(l1);
    return l1;
}

static void test_caching_free_part(void **state)
{
    (void)state;
    fake_src src;
    gm_mem_source ms;
    gm_caching_allocator *l1 = l1_open(&src, &ms);
    void *base;
    gm_error err;
    assert_int_equal(gm_caching_malloc(l1, 8 * P, &base, &err), GM_OK);
    char *b = base;
    /* the middle: [0,3) stays at base, [5,8) becomes a block at b + 5 pages */
    assert_int_equal(gm_caching_free_part(l1, base, b + 3 * P, 2 * P, &err), GM_OK);
    gm_caching_stats st;
    gm_caching_get_stats(l1, &st);
    assert_int_equal(st.pool.occupied, 6 * P);
    /* the bottom of the upper block, then its top */
    assert_int_equal(gm_caching_free_part(l1, b + 5 * P, b + 5 * P, P, &err), GM_OK);
    assert_int_equal(gm_caching_free_part(l1, b + 6 * P, b + 7 * P, P, &err), GM_OK);
    gm_caching_get_stats(l1, &st);
    assert_int_equal(st.pool.occupied, 4 * P);
    /* not whole pages inside a block */
    assert_int_equal(gm_caching_free_part(l1, base, b + 100, P, &err), GM_ERR_USAGE);
    assert_non_null(strstr(err.message, "not whole pages"));
    assert_int_equal(gm_caching_free_part(l1, base, b, 3 * P, &err), GM_ERR_USAGE); /* all of it */
    assert_int_equal(gm_caching_free_part(l1, base, b + 2 * P, 2 * P, &err), GM_ERR_USAGE); /* past its end */
    assert_int_equal(gm_caching_free_part(l1, b + 4 * P, b + 4 * P, P, &err), GM_ERR_USAGE); /* not a block */
    assert_int_equal(gm_caching_free(l1, base, &err), GM_OK);
    assert_int_equal(gm_caching_free(l1, b + 6 * P, &err), GM_OK);
    gm_caching_get_stats(l1, &st);
    assert_int_equal(st.pool.occupied, 0);
    assert_int_equal(gm_caching_recycle(l1), 8 * P); /* the pieces merged back into the chunk */
    assert_int_equal(src.live_bytes, 0);
    gm_caching_destroy(l1);
    fake_fini(&src);
}

/* A pool over the caching allocator gives back the idle parts of a chunk; the chunk lives on as
 * the runs around them, each freed on its own later. */
static void test_pool_releases_idle_parts(void **state)
{
    (void)state;
    fake_src src;
    gm_mem_source ms;
    gm_caching_allocator *l1 = l1_open(&src, &ms);
    gm_mem_source l1src = gm_caching_as_source(l1);
    gm_scalable_config c;
    gm_scalable_config_default(&c, 0);
    gm_scalable_allocator *pool = gm_scalable_create(&l1src, &c);
    gm_span *whole = gm_scalable_alloc(pool, 9 * P);
    gm_scalable_free(pool, whole); /* one idle chunk of 9 pages */
    gm_span *x = gm_scalable_alloc(pool, 2 * P), *y = gm_scalable_alloc(pool, 2 * P), *z = gm_scalable_alloc(pool, 2 * P);
    gm_span *w = gm_scalable_alloc(pool, 1 * P);
    gm_scalable_free(pool, x);
    gm_scalable_free(pool, z); /* idle [0,2) and [4,6) and [7,9) around y [2,4) and w [6,7) */
    assert_int_equal(gm_scalable_release_parts(pool), 6 * P);
    gm_caching_stats st;
    gm_caching_get_stats(l1, &st);
    assert_int_equal(st.pool.occupied, 3 * P); /* y and w, as two blocks of L1 */
    assert_int_equal(gm_scalable_get_stats(pool)->idle, 0);
    assert_int_equal(gm_scalable_release_parts(pool), 0);
    gm_scalable_free(pool, y);
    gm_scalable_free(pool, w);
    assert_int_equal(gm_scalable_recycle(pool), 3 * P); /* each a whole chunk now */
    gm_caching_get_stats(l1, &st);
    assert_int_equal(st.pool.occupied, 0);
    assert_int_equal(gm_caching_recycle(l1), 9 * P);
    gm_scalable_destroy(pool);
    gm_caching_destroy(l1);
    assert_int_equal(src.live_bytes, 0);
    fake_fini(&src);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fetches_merge),
        cmocka_unit_test(test_chunks_do_not_merge),
        cmocka_unit_test(test_within_unmaps_idle_instead_of_growing),
        cmocka_unit_test(test_within_unmaps_only_what_is_missing),
        cmocka_unit_test(test_grows_idle_span_below_a_hole),
        cmocka_unit_test(test_recycle_unmaps_idle),
        cmocka_unit_test(test_coarse_granule),
        cmocka_unit_test(test_map_failure),
        cmocka_unit_test(test_full_range_fetches_chunks),
        cmocka_unit_test(test_no_virtual_memory_is_quiet),
        cmocka_unit_test(test_destroy_with_spans_out),
        cmocka_unit_test(test_caching_free_part),
        cmocka_unit_test(test_pool_releases_idle_parts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
