/*
 * test_subpage.c — small blocks carved out of pages (src/runtime/subpage.h, not GE's): first-fit
 * runs of 256 units, blocks of different sizes sharing a page, runs that cross bitmap words, a
 * full page leading to a second one, the one spare empty page, trim, failure of the page source,
 * and sizes the carver refuses.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>

#include "runtime/subpage.h"

#define PAGE ((size_t)65536)
#define BASE ((uintptr_t)0x40000000u)

/* A page source handing out pages at BASE, BASE + PAGE, ... (lowest free slot first). */
typedef struct pages {
    gm_span slot[8];
    int used[8];
    int gets, puts, fail;
} pages;

static gm_span *page_get(void *ctx)
{
    pages *p = ctx;
    if (p->fail) return NULL;
    for (int i = 0; i < 8; i++)
        if (!p->used[i]) {
            p->used[i] = 1;
            p->gets++;
            p->slot[i] = (gm_span){.addr = BASE + (uintptr_t)i * PAGE, .pages = 1};
            return &p->slot[i];
        }
    return NULL;
}

static void page_put(void *ctx, gm_span *s)
{
    pages *p = ctx;
    p->used[s - p->slot] = 0;
    p->puts++;
}

static void open_carver(gm_subpages *s, pages *p)
{
    *p = (pages){0};
    gm_subpages_init(s, &(gm_page_source){.ctx = p, .get = page_get, .put = page_put}, PAGE);
    assert_int_equal(s->unit, 256);
}

static uintptr_t at(const gm_span *b) { return b->addr; }

static void test_first_fit_shares_a_page(void **state)
{
    (void)state;
    pages p;
    gm_subpages s;
    open_carver(&s, &p);
    gm_span *a = gm_subpages_alloc(&s, 1), *b = gm_subpages_alloc(&s, 257), *c = gm_subpages_alloc(&s, 0);
    assert_int_equal(at(a), BASE);
    assert_int_equal(gm_subpages_block_size(&s, a), 256);
    assert_int_equal(at(b), BASE + 256); /* 257 bytes: two units */
    assert_int_equal(gm_subpages_block_size(&s, b), 512);
    assert_int_equal(at(c), BASE + 768); /* 0 bytes: still one unit */
    assert_int_equal(gm_subpages_round(&s, 0), 256);
    assert_int_equal(gm_subpages_round(&s, 513), 768);
    assert_int_equal(p.gets, 1);
    gm_subpages_free(&s, b);
    gm_span *d = gm_subpages_alloc(&s, 700); /* three units do not fit b's two-unit hole */
    assert_int_equal(at(d), BASE + 1024);
    gm_span *e = gm_subpages_alloc(&s, 300); /* two units do */
    assert_int_equal(at(e), BASE + 256);
    /* a run across the first bitmap word (units 63..68) */
    gm_span *f = gm_subpages_alloc(&s, (size_t)(63 - 7) * 256); /* units 7..62 */
    assert_int_equal(at(f), BASE + 7 * 256);
    gm_span *g = gm_subpages_alloc(&s, 6 * 256);
    assert_int_equal(at(g), BASE + 63 * 256);
    assert_int_equal(s.blocks, 6);
    gm_subpages_free(&s, a);
    gm_subpages_free(&s, c);
    gm_subpages_free(&s, d);
    gm_subpages_free(&s, e);
    gm_subpages_free(&s, f);
    gm_subpages_free(&s, g); /* the page is empty: kept as the spare */
    assert_int_equal(s.blocks, 0);
    assert_int_equal(s.pages, 1);
    assert_int_equal(p.puts, 0);
    assert_true(gm_subpages_trim(&s));
    assert_false(gm_subpages_trim(&s));
    assert_int_equal(p.puts, 1);
    assert_int_equal(s.pages, 0);
    gm_subpages_fini(&s);
}

static void test_full_page_then_second_and_spare(void **state)
{
    (void)state;
    pages p;
    gm_subpages s;
    open_carver(&s, &p);
    gm_span *half1 = gm_subpages_alloc(&s, PAGE / 2), *half2 = gm_subpages_alloc(&s, PAGE / 2);
    assert_int_equal(at(half1), BASE);
    assert_int_equal(at(half2), BASE + PAGE / 2); /* the page is full now */
    gm_span *x = gm_subpages_alloc(&s, 1);
    assert_int_equal(at(x), BASE + PAGE); /* a second page */
    gm_span *whole = gm_subpages_alloc(&s, PAGE); /* all 256 units: a third page */
    assert_int_equal(at(whole), BASE + 2 * PAGE);
    assert_null(gm_subpages_alloc(&s, PAGE + 1)); /* longer than a page: not carved */
    assert_int_equal(s.pages, 3);
    gm_subpages_free(&s, half1);
    gm_span *y = gm_subpages_alloc(&s, 100); /* the freed half, warmest, first */
    assert_int_equal(at(y), BASE);
    gm_subpages_free(&s, x);     /* page 2 empty: the spare */
    gm_subpages_free(&s, whole); /* page 3 empty, a spare exists: handed back */
    assert_int_equal(p.puts, 1);
    assert_int_equal(p.used[2], 0);
    assert_int_equal(s.pages, 2);
    gm_span *z = gm_subpages_alloc(&s, PAGE / 2 + 1); /* no room on page 1: the spare serves */
    assert_int_equal(at(z), BASE + PAGE);
    assert_int_equal(p.gets, 3);
    gm_subpages_free(&s, y);
    gm_subpages_free(&s, half2);
    gm_subpages_free(&s, z);
    gm_subpages_fini(&s); /* hands the remaining pages back */
    assert_int_equal(p.gets, p.puts);
}

static void test_page_source_failure(void **state)
{
    (void)state;
    pages p;
    gm_subpages s;
    open_carver(&s, &p);
    p.fail = 1;
    assert_null(gm_subpages_alloc(&s, 10));
    assert_int_equal(s.pages, 0);
    p.fail = 0;
    gm_span *a = gm_subpages_alloc(&s, 10);
    assert_int_equal(at(a), BASE);
    p.fail = 1;
    gm_span *b = gm_subpages_alloc(&s, 20); /* room on the page: no new page needed */
    assert_int_equal(at(b), BASE + 256);
    gm_subpages_free(&s, a);
    gm_subpages_free(&s, b);
    gm_subpages_fini(&s);
    assert_int_equal(p.gets, p.puts);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_fit_shares_a_page),
        cmocka_unit_test(test_full_page_then_second_and_spare),
        cmocka_unit_test(test_page_source_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
