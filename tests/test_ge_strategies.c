/*
 * test_ge_strategies.c — GE's static reuse strategies (src/plan/ge_*.c): one hand-made case per
 * rule (level-1 exact-size reuse, level-2 nesting, max-block, no-pre-reuse, streams, frfr vs frlr,
 * the range computation), validity of every strategy on thousands of random instances (checked
 * pairwise here, independently of the packers), determinism, bad input and allocation failures.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/ge_strategy.h"
#include "util/alloc.h"

#define ALIGN 512
#define MiB (1024LL * 1024)

static int64_t al(int64_t v) { return (v + ALIGN - 1) / ALIGN * ALIGN; }

static gm_ge_item item(int64_t lower, int64_t upper, int64_t size, int64_t stream)
{
    return (gm_ge_item){.lower = lower, .upper = upper, .size = size, .stream = stream,
                        .batch = -1, .nodes = 1, .offset = -1};
}

static int64_t run(gm_ge_item *it, size_t n, gm_ge_strategy s, bool mp)
{
    int64_t h = -1;
    gm_error err;
    gm_status st = gm_ge_assign(it, n, s, ALIGN, mp, &h, &err);
    if (st != GM_OK) fail_msg("%s: %s", gm_ge_strategy_name(s), err.message);
    return h;
}

/* Independent check: aligned, inside the height, and no two items that may be live together
 * (lifetimes overlap, not two different batch labels) share an address. */
static bool valid(const gm_ge_item *it, size_t n, int64_t height, char *why, size_t cap)
{
    for (size_t i = 0; i < n; i++) {
        if (it[i].offset < 0 || it[i].offset % ALIGN || it[i].offset + al(it[i].size) > height) {
            snprintf(why, cap, "item %zu: offset %lld size %lld height %lld", i,
                     (long long)it[i].offset, (long long)it[i].size, (long long)height);
            return false;
        }
        for (size_t j = 0; j < i; j++) {
            if (it[i].upper <= it[j].lower || it[j].upper <= it[i].lower) continue;
            if (it[i].batch >= 0 && it[j].batch >= 0 && it[i].batch != it[j].batch) continue;
            if (it[i].offset + al(it[i].size) <= it[j].offset ||
                it[j].offset + al(it[j].size) <= it[i].offset)
                continue;
            snprintf(why, cap, "items %zu [%lld,%lld) and %zu [%lld,%lld) overlap at %lld/%lld", j,
                     (long long)it[j].lower, (long long)it[j].upper, i, (long long)it[i].lower,
                     (long long)it[i].upper, (long long)it[j].offset, (long long)it[i].offset);
            return false;
        }
    }
    return true;
}

/* The checker itself rejects an overlap, and accepts different batch labels sharing an address. */
static void test_checker(void **state)
{
    (void)state;
    char why[256];
    gm_ge_item it[2] = {item(0, 2, 1000, 0), item(1, 3, 600, 1)};
    it[0].offset = 0;
    it[1].offset = 512;
    assert_false(valid(it, 2, 2048, why, sizeof why));
    it[1].offset = 1024;
    assert_true(valid(it, 2, 2048, why, sizeof why));
    it[1].offset = 0;
    it[0].batch = 0;
    it[1].batch = 1;
    assert_true(valid(it, 2, 2048, why, sizeof why));
    it[1].batch = 0;
    assert_false(valid(it, 2, 2048, why, sizeof why));
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(gm_ge_strategy_name(GM_GE_BINARY_BLOCK), "binary-block");
    assert_string_equal(gm_ge_strategy_name(GM_GE_MAX_BLOCK), "max-block");
    assert_string_equal(gm_ge_strategy_name(GM_GE_RANGE_BINARY_DESC_FRFR),
                        "range-binary-block-descending-frfr");
    assert_string_equal(gm_ge_strategy_name(GM_GE_RANGE_BINARY_ASC_FRLR),
                        "range-binary-block-ascending-frlr");
    assert_false(gm_ge_strategy_needs_memory_priority(GM_GE_BINARY_BLOCK));
    assert_false(gm_ge_strategy_needs_memory_priority(GM_GE_MAX_BLOCK));
    for (int s = GM_GE_RANGE_BINARY_DESC_FRFR; s < GM_GE_STRATEGY_COUNT; s++)
        assert_true(gm_ge_strategy_needs_memory_priority((gm_ge_strategy)s));
}

/* Level 1: two sequential items of the same block size share one block. */
static void test_exact_size_reuse(void **state)
{
    (void)state;
    gm_ge_item it[2] = {item(0, 2, 1000, 0), item(2, 4, 1000, 0)};
    assert_int_equal(run(it, 2, GM_GE_BINARY_BLOCK, false), 1024);
    assert_int_equal(it[0].offset, 0);
    assert_int_equal(it[1].offset, 0);
    /* overlapping: two blocks */
    gm_ge_item ov[2] = {item(0, 3, 1000, 0), item(2, 4, 1000, 0)};
    assert_int_equal(run(ov, 2, GM_GE_BINARY_BLOCK, false), 2048);
    assert_int_not_equal(ov[0].offset, ov[1].offset);
}

/* A smaller later item gets its own level-1 block (sizes differ), then level 2 nests it inside
 * the larger block; two children whose lifetimes overlap sit side by side. */
static void test_level2_nesting(void **state)
{
    (void)state;
    gm_ge_item it[3] = {item(0, 2, 2048, 0), item(2, 4, 1000, 0), item(2, 4, 1000, 0)};
    assert_int_equal(run(it, 3, GM_GE_BINARY_BLOCK, false), 2048);
    assert_int_equal(it[0].offset, 0);
    assert_true((it[1].offset == 0 && it[2].offset == 1024) ||
                (it[1].offset == 1024 && it[2].offset == 0));
    /* the larger block comes later: the earlier, smaller one is nested in it */
    gm_ge_item b[2] = {item(0, 2, 1000, 0), item(2, 4, 3000, 0)};
    assert_int_equal(run(b, 2, GM_GE_BINARY_BLOCK, false), 3072);
    /* a third child does not fit (child offset 2048 + 1024 > 2048 + 512 slack): a new block */
    gm_ge_item c[4] = {item(0, 2, 2048, 0), item(2, 4, 1000, 0), item(2, 4, 1000, 0),
                       item(2, 4, 1000, 0)};
    assert_int_equal(run(c, 4, GM_GE_BINARY_BLOCK, false), 3072);
}

/* Max-block: every block has the largest size, so any later item takes a released block on its
 * stream; there is no level 2, so nothing is shared across streams. */
static void test_max_block(void **state)
{
    (void)state;
    gm_ge_item it[3] = {item(0, 1, 600, 0), item(1, 2, 5000, 0), item(2, 3, 2000, 0)};
    assert_int_equal(run(it, 3, GM_GE_MAX_BLOCK, false), 5120);
    for (int i = 0; i < 3; i++) assert_int_equal(it[i].offset, 0);
    /* binary-block without ranges: level 1 cannot share, level 2 nests them all into one */
    assert_int_equal(run(it, 3, GM_GE_BINARY_BLOCK, false), 5120);
    /* Resize shrinks a max-size block to its largest real size */
    gm_ge_item two[2] = {item(0, 2, 600, 0), item(0, 2, 5000, 0)};
    assert_int_equal(run(two, 2, GM_GE_MAX_BLOCK, false), 1024 + 5120);
}

static void test_no_pre_reuse(void **state)
{
    (void)state;
    gm_ge_item it[2] = {item(0, 1, 1000, 0), item(1, 2, 1000, 0)};
    it[1].no_pre_reuse = true;
    for (int s = 0; s < GM_GE_STRATEGY_COUNT; s++) {
        assert_int_equal(run(it, 2, (gm_ge_strategy)s, true), 2048);
        assert_int_not_equal(it[0].offset, it[1].offset);
    }
    /* no_post_reuse: the block is never given away */
    gm_ge_item p[2] = {item(0, 1, 1000, 0), item(1, 2, 1000, 0)};
    p[0].no_post_reuse = true;
    assert_int_equal(run(p, 2, GM_GE_BINARY_BLOCK, false), 2048);
    /* continuous: never reused at level 1, but nested whole at level 2 */
    gm_ge_item c[2] = {item(0, 1, 1000, 0), item(1, 2, 1000, 0)};
    c[1].continuous = true;
    assert_int_equal(run(c, 2, GM_GE_MAX_BLOCK, false), 2048);
    assert_int_equal(run(c, 2, GM_GE_BINARY_BLOCK, false), 1024);
}

/* Level 1 is per stream; level 2 may share across streams (lifetimes are already ordered). */
static void test_streams(void **state)
{
    (void)state;
    gm_ge_item it[2] = {item(0, 1, 1000, 0), item(1, 2, 1000, 1)};
    assert_int_equal(run(it, 2, GM_GE_MAX_BLOCK, false), 2048);
    assert_int_not_equal(it[0].offset, it[1].offset);
    assert_int_equal(run(it, 2, GM_GE_BINARY_BLOCK, false), 1024);
    assert_int_equal(it[0].offset, it[1].offset);
    /* same stream: max-block shares at level 1 */
    it[1].stream = 0;
    assert_int_equal(run(it, 2, GM_GE_MAX_BLOCK, false), 1024);
}

/* Two same-size blocks are released (A's first, then B's) before C: first-release-first-reuse
 * gives C A's block, first-release-last-reuse B's. A and B cannot pre-reuse, which keeps their
 * blocks out of level 2 (otherwise interval splitting would move C next to B in both cases). */
static void test_frfr_frlr(void **state)
{
    (void)state;
    gm_ge_item it[3] = {item(0, 1, 1000, 0), item(0, 2, 1000, 0), item(2, 3, 1000, 0)};
    it[0].no_pre_reuse = it[1].no_pre_reuse = true;
    gm_ge_strategy frfr[2] = {GM_GE_RANGE_BINARY_DESC_FRFR, GM_GE_RANGE_BINARY_ASC_FRFR};
    gm_ge_strategy frlr[2] = {GM_GE_RANGE_BINARY_DESC_FRLR, GM_GE_RANGE_BINARY_ASC_FRLR};
    for (int k = 0; k < 2; k++) {
        assert_int_equal(run(it, 3, frfr[k], true), 2048);
        assert_int_equal(it[2].offset, it[0].offset);
        assert_int_equal(run(it, 3, frlr[k], true), 2048);
        assert_int_equal(it[2].offset, it[1].offset);
    }
}

/* Batch labels: same-label items reuse, different labels overlay (memory = max batch). */
static void test_batches(void **state)
{
    (void)state;
    gm_ge_item it[3] = {item(0, 4, 4096, 0), item(0, 4, 1000, 0), item(0, 4, 2048, 0)};
    it[0].batch = 0;
    it[1].batch = 0;
    it[2].batch = 1;
    int64_t h = run(it, 3, GM_GE_BINARY_BLOCK, false);
    assert_int_equal(h, 4096 + 1024);
    char why[256];
    assert_true(valid(it, 3, h, why, sizeof why));
}

static void expect_ceilings(const int64_t *sizes, size_t n, const int64_t *want, size_t nwant)
{
    int64_t *c = NULL;
    size_t nc = 0;
    gm_error err;
    assert_int_equal(gm_ge_range_ceilings(sizes, n, ALIGN, &c, &nc, &err), GM_OK);
    assert_int_equal(nc, nwant);
    for (size_t i = 0; i < nc; i++) assert_int_equal(c[i], want[i]);
    gm_free(c);
}

static void test_ranges(void **state)
{
    (void)state;
    /* R = 8, limit 0: ranges (.., 1024], (2560, 4608]... -> ceilings are each range's largest */
    int64_t a[] = {5000, 100, 600, 1000, 3000, 9000, 70000};
    int64_t wa[] = {1000, 3000, 9000, 70000};
    expect_ceilings(a, 7, wa, 4);
    /* 48 x 1000, 2 x 9 MiB, 40 MiB: R = 17, limit 3; the two 9 MiB sizes stay a range of their own
     * (large-block rule) although under the limit */
    int64_t b[51];
    for (int i = 0; i < 48; i++) b[i] = 1000;
    b[48] = 9 * MiB;
    b[49] = 9 * MiB;
    b[50] = 40 * MiB;
    int64_t wb[] = {1000, 9 * MiB, 40 * MiB};
    expect_ceilings(b, 51, wb, 3);
    /* one 9 MiB size: under the limit, merged up into the 40 MiB range */
    b[49] = 1000;
    int64_t wc[] = {1000, 40 * MiB};
    expect_ceilings(b, 51, wc, 2);
    /* two 3000s under the limit are carried up through the empty ranges to the top one */
    int64_t d[45];
    for (int i = 0; i < 40; i++) d[i] = 1000;
    d[40] = d[41] = 3000;
    d[42] = d[43] = 9 * MiB;
    d[44] = 16 * MiB;
    int64_t wd[] = {1000, 16 * MiB};
    expect_ceilings(d, 45, wd, 2);
    /* all small: one range */
    int64_t e[] = {6, 12, 16, 24, 24, 30, 32, 48, 60, 256};
    int64_t we[] = {256};
    expect_ceilings(e, 10, we, 1);
    /* range mode: 1000 and 900 fall in one range, so they share a block at level 1 */
    gm_ge_item it[2] = {item(0, 1, 1000, 0), item(1, 2, 900, 0)};
    assert_int_equal(run(it, 2, GM_GE_RANGE_BINARY_ASC_FRLR, true), 1024);
}

/* xorshift: the tests are reproducible */
static uint64_t rng_state;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static size_t random_instance(gm_ge_item *it, size_t max_n, int flavour)
{
    size_t n = 1 + rnd() % max_n;
    int64_t horizon = 2 + (int64_t)(rnd() % (2 * n + 2));
    int streams = 1 + (int)(rnd() % 4);
    for (size_t i = 0; i < n; i++) {
        int64_t lo = (int64_t)(rnd() % (uint64_t)horizon);
        int64_t len = 1 + (int64_t)(rnd() % (flavour == 1 ? 3 : (uint64_t)horizon / 2 + 1));
        int64_t size;
        switch (rnd() % 4) {
        case 0: size = 1 + (int64_t)(rnd() % 4096); break;              /* small */
        case 1: size = 512 * (1 + (int64_t)(rnd() % 8)); break;         /* repeated sizes */
        case 2: size = 1 + (int64_t)(rnd() % (64 * MiB)); break;        /* anything */
        default: size = ((int64_t)1 << (rnd() % 27)) + (int64_t)(rnd() % 64); break;
        }
        it[i] = item(lo, lo + len, size, (int64_t)(rnd() % (uint64_t)streams));
        it[i].nodes = 1 + (uint32_t)(rnd() % 3);
        unsigned f = (unsigned)(rnd() % 100);
        it[i].no_pre_reuse = f < 4;
        it[i].no_post_reuse = f >= 4 && f < 7;
        it[i].continuous = f >= 7 && f < 10;
        if (flavour == 2 && rnd() % 2) it[i].batch = (int32_t)(rnd() % 3);
    }
    return n;
}

static void test_random_valid(void **state)
{
    (void)state;
    enum { MAXN = 120 };
    gm_ge_item it[MAXN], again[MAXN];
    char why[512];
    rng_state = 0x9E3779B97F4A7C15ull;
    for (int round = 0; round < 3000; round++) {
        size_t n = random_instance(it, MAXN, round % 3);
        for (int s = 0; s < GM_GE_STRATEGY_COUNT; s++) {
            bool mp = round % 2 == 0;
            int64_t h = run(it, n, (gm_ge_strategy)s, mp);
            if (!valid(it, n, h, why, sizeof why))
                fail_msg("round %d %s: %s", round, gm_ge_strategy_name((gm_ge_strategy)s), why);
            /* never below LOAD, never above the no-reuse sum */
            int64_t sum = 0;
            for (size_t i = 0; i < n; i++) sum += al(it[i].size);
            if (h > sum) fail_msg("round %d: height %lld > sum %lld", round, (long long)h, (long long)sum);
            if (round % 10 == 0) { /* determinism */
                memcpy(again, it, n * sizeof *it);
                assert_int_equal(run(again, n, (gm_ge_strategy)s, mp), h);
                for (size_t i = 0; i < n; i++) assert_int_equal(again[i].offset, it[i].offset);
            }
        }
    }
}

static void test_bad_input(void **state)
{
    (void)state;
    gm_ge_item it[1] = {item(0, 1, 0, 0)};
    int64_t h;
    gm_error err;
    assert_int_equal(gm_ge_assign(it, 1, GM_GE_BINARY_BLOCK, ALIGN, false, &h, &err), GM_ERR_INPUT);
    it[0] = item(3, 3, 10, 0);
    assert_int_equal(gm_ge_assign(it, 1, GM_GE_BINARY_BLOCK, ALIGN, false, &h, &err), GM_ERR_INPUT);
    assert_int_equal(gm_ge_assign(NULL, 0, GM_GE_MAX_BLOCK, ALIGN, false, &h, &err), GM_OK);
    assert_int_equal(h, 0);
}

static void test_alloc_failure(void **state)
{
    (void)state;
    gm_ge_item it[40];
    rng_state = 12345;
    size_t n = random_instance(it, 40, 2);
    for (int s = 0; s < GM_GE_STRATEGY_COUNT; s++) {
        for (long k = 0;; k++) {
            int64_t h;
            gm_error err;
            gm_alloc_fail_after(k);
            gm_status st = gm_ge_assign(it, n, (gm_ge_strategy)s, ALIGN, true, &h, &err);
            gm_alloc_fail_after(-1);
            if (st == GM_OK) break;
            assert_int_equal(st, GM_ERR_NOMEM);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_checker),        cmocka_unit_test(test_names),
        cmocka_unit_test(test_exact_size_reuse),
        cmocka_unit_test(test_level2_nesting), cmocka_unit_test(test_max_block),
        cmocka_unit_test(test_no_pre_reuse),   cmocka_unit_test(test_streams),
        cmocka_unit_test(test_frfr_frlr),      cmocka_unit_test(test_batches),
        cmocka_unit_test(test_ranges),         cmocka_unit_test(test_random_valid),
        cmocka_unit_test(test_bad_input),      cmocka_unit_test(test_alloc_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
