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


/* ---- golden results ----
 * The strategies' results were frozen before their level-2 search was made fast: a few hundred
 * deterministic random instances of varied shapes (up to 2,000 items; short and long lifetimes,
 * many live at once, repeated sizes, ties in time, flags, batches, 1-4 streams), every strategy
 * in both modes, one 64-bit hash of (height, every offset) per instance. Any change to any offset
 * of any strategy changes a hash. GE_GOLDEN_PRINT=1 in the environment prints the table instead
 * (only to re-freeze after a deliberate change of behaviour). */

typedef struct grng {
    uint64_t s;
} grng;

static uint64_t grnd(grng *r)
{
    r->s ^= r->s << 13;
    r->s ^= r->s >> 7;
    r->s ^= r->s << 17;
    return r->s;
}

static uint64_t gpick(grng *r, uint64_t n) { return n ? grnd(r) % n : 0; }

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    h *= 0xBF58476D1CE4E5B9ull;
    return h ^ (h >> 31);
}

/* Instance k of the golden set (shape chosen by k). */
static size_t golden_instance(gm_ge_item *it, size_t cap, unsigned k)
{
    grng r = {0x243F6A8885A308D3ull ^ ((uint64_t)(k + 1) * 0x9E3779B97F4A7C15ull)};
    for (int w = 0; w < 4; w++) grnd(&r);
    unsigned shape = k % 8;
    size_t n = 1 + (size_t)gpick(&r, k % 5 == 0 ? 2000 : k % 5 == 1 ? 40 : 600);
    if (n > cap) n = cap;
    int64_t horizon;
    switch (shape) {
    case 0: horizon = 2 + (int64_t)gpick(&r, 2 * n + 2); break;         /* mixed */
    case 1: horizon = 2 + (int64_t)gpick(&r, n / 8 + 2); break;         /* many ties in time */
    case 2: horizon = (int64_t)(4 * n) + 4; break;                      /* sparse, short lives */
    default: horizon = 2 + (int64_t)gpick(&r, 3 * n + 2); break;
    }
    int streams = 1 + (int)gpick(&r, 4);
    unsigned flagpct = (unsigned)gpick(&r, 4) == 0 ? 30 : 10;
    bool batches = shape == 4 || shape == 7;
    bool tiny = shape == 5;
    bool repeated = shape == 6 || shape == 2;
    for (size_t i = 0; i < n; i++) {
        int64_t lo = (int64_t)gpick(&r, (uint64_t)horizon);
        int64_t len;
        switch (gpick(&r, shape == 3 ? 2 : 4)) {
        case 0: len = 1 + (int64_t)gpick(&r, 3); break;                  /* short */
        case 1: len = 1 + (int64_t)gpick(&r, (uint64_t)horizon); break;  /* long: many live */
        case 2: len = 1 + (int64_t)gpick(&r, 16); break;
        default: len = 1 + (int64_t)gpick(&r, (uint64_t)horizon / 4 + 1); break;
        }
        int64_t size;
        if (tiny) size = 1 + (int64_t)gpick(&r, 600);
        else if (repeated && gpick(&r, 4) != 0) size = 512 * (1 + (int64_t)gpick(&r, 6));
        else switch (gpick(&r, 5)) {
            case 0: size = 1 + (int64_t)gpick(&r, 4096); break;
            case 1: size = 512 * (1 + (int64_t)gpick(&r, 8)); break;
            case 2: size = 1 + (int64_t)gpick(&r, 64 * MiB); break;
            case 3: size = ((int64_t)1 << gpick(&r, 27)) + (int64_t)gpick(&r, 64); break;
            default: size = 1024 * (1 + (int64_t)gpick(&r, 64)); break;
            }
        it[i] = item(lo, lo + len, size, (int64_t)gpick(&r, (uint64_t)streams));
        it[i].nodes = 1 + (uint32_t)gpick(&r, 4);
        unsigned f = (unsigned)gpick(&r, 100);
        unsigned third = flagpct / 3;
        it[i].no_pre_reuse = f < third;
        it[i].no_post_reuse = f >= third && f < 2 * third;
        it[i].continuous = f >= 2 * third && f < flagpct;
        if (batches && gpick(&r, 2)) it[i].batch = (int32_t)gpick(&r, 3);
    }
    return n;
}

static uint64_t golden_hash(gm_ge_item *it, size_t n)
{
    uint64_t h = mix(0, n);
    for (int s = 0; s < GM_GE_STRATEGY_COUNT; s++)
        for (int mp = 0; mp < 2; mp++) {
            int64_t height = run(it, n, (gm_ge_strategy)s, mp != 0);
            h = mix(h, (uint64_t)height);
            for (size_t i = 0; i < n; i++) h = mix(h, (uint64_t)it[i].offset);
        }
    return h;
}

#define GOLDEN_COUNT 320
static const uint64_t golden[GOLDEN_COUNT] = {
    0x9293a10ede2a57eeull, 0x4362163c70b79a15ull, 0xd0c964a2b2a0f874ull,
    0x0ec342b7be13fc40ull, 0x21aca24e054989ccull, 0x79eeea09907b0dc3ull,
    0xf9e6029136eb8a65ull, 0x0f519cb4242841feull, 0xeb3357973e57a1f9ull,
    0x2a9e17310183a5b2ull, 0x4467f7ce6af9e5daull, 0x2b90d0c9b9e91487ull,
    0xcb84283e9d49f165ull, 0xb18a1c01ec54d04dull, 0x7d5f39da7dd5530full,
    0x40cef165f16b4f9full, 0x4a06ca6d3eb8807bull, 0xd9d57e7524e15ed7ull,
    0xdee22c37caedb692ull, 0x6454fe75e6b6b860ull, 0x554ce87ccf5aa284ull,
    0x97b219f1b8217b8cull, 0x460bac39c2d342d9ull, 0xe7793ac7a1494eeeull,
    0x36810be8e2dcb54dull, 0xd3096a45a17a8fe1ull, 0xa8b8dff12d1090b9ull,
    0xc5b7aa503a590535ull, 0x295f2b806b470e06ull, 0xad027e07e61feb27ull,
    0x51b705bd952aece4ull, 0xf92e7ce58b39fdf4ull, 0x4416021b06c9af73ull,
    0x7b69a532597d9f96ull, 0xbdbdd6d5e59706f8ull, 0x437d3f386e85fa08ull,
    0x0a6b30a1da3685b2ull, 0x78af5bf80e3629e1ull, 0x391f773c57908156ull,
    0x0cbc5bd18a2cd1d6ull, 0x333c924607b486e7ull, 0x75df274479708f84ull,
    0xc7c7f77f5d88ad58ull, 0xdc58736a45b84e96ull, 0x4a1d5ad361c33264ull,
    0x5ffb13186f6776cfull, 0xd9d2410957d96a61ull, 0x7a5ef56de91a8d98ull,
    0x6dc23aec41a197d7ull, 0x89e348bb7f448804ull, 0xfa25291994d09c98ull,
    0xa4a50b11c5746460ull, 0x9c557c82cdbd28fdull, 0xa5565de2e9862a86ull,
    0x7d04a009527badc9ull, 0x0f979708ff9a93d2ull, 0xdbd9f7b05c9a00cfull,
    0x8c77b15c525eebc6ull, 0x50ec8a2f1f0fb3ddull, 0x045bfdd3312475a5ull,
    0x1815472564fce077ull, 0x8b4f88086c78c147ull, 0x58f9b1dcc02b37beull,
    0x132867f6cc17b83dull, 0x8ee137edf0ecefb4ull, 0x629bdb79b1a50da3ull,
    0x1295ee74612d5a61ull, 0xcaa0520c90963c2bull, 0x2a475f5a9ad01e0full,
    0x4f4b2c25ed9f6753ull, 0x6a5e50c093f20f69ull, 0x0ee17ad70ded10acull,
    0xb3be321c1c00856bull, 0x08586255f196901aull, 0xc8e01b80a77e618cull,
    0x2f2804b45a0b8d2bull, 0x384ce61b5a0d451aull, 0x29ae7f2c47ce4eb8ull,
    0xd007f3da3b8a6a23ull, 0x591af0a4650fd063ull, 0xd5fd1a2683248219ull,
    0x8cdccc71d368d458ull, 0x2f0dd590528173acull, 0x8090903c508847e8ull,
    0x734197f95438f3c4ull, 0xb129929abba54346ull, 0x07bcab4810b3b624ull,
    0xa8d78cb1e8306ff2ull, 0x6ba3c424239d9c5eull, 0x2c892be1a856cd27ull,
    0x9460ce569c42d54dull, 0x4a8d9c0b0d26203cull, 0x35a293adc72463ecull,
    0x4527fdba378ccfc4ull, 0x01e91a803bbcc3c3ull, 0xbe8de809c7fd9179ull,
    0xcd26699717134fc8ull, 0xd4a189458da8f030ull, 0x296314506fd91a19ull,
    0x94d15f95b3ca900aull, 0x14afe1d046dd81ebull, 0xb7b7873245f3150full,
    0x1744fca60ff7ad88ull, 0x0b2774662e7d8a58ull, 0x70537678220bbcf0ull,
    0xf740479776ab5d77ull, 0xc661ff508f8798daull, 0x84e8e909cad6fc02ull,
    0x77d8698b291412f6ull, 0xf0a7d74aba36c2e9ull, 0x78539b926847755bull,
    0xf0d651a66a80cc97ull, 0x761ae95cab39558dull, 0xe22b859cd1f8f1ebull,
    0x43bcb54cd2284e9aull, 0xd29784429aa828b5ull, 0xc9260084746da997ull,
    0x3f9e3a9be9e56cfcull, 0xe736a4f728e07a5aull, 0x2db547c50bf77544ull,
    0x147186d921d556bbull, 0x3885bf3265407727ull, 0xc1712ff97d218201ull,
    0x962b0c8c0c716cfdull, 0x5eb2ba6ebb212f39ull, 0xacf9b9bf4875dca7ull,
    0x25dfc71bab1b2678ull, 0xec0dc7ea03671c2aull, 0xfd8a92ca4951db70ull,
    0xa9a0b53ecaac9150ull, 0x695dd0a263737afbull, 0xb5e461e107c008dcull,
    0x1f6430bfb3575badull, 0x79038238e2d5b63aull, 0xb1e60375680d9b2cull,
    0x04dd479fb1f66bbbull, 0x90bcf5e64b2fef31ull, 0x50d7c926fab3b081ull,
    0xd0bc640bf45d65d0ull, 0x2a82271b1422e5fdull, 0x8f24d95fc5ff03e9ull,
    0xf46d20ccea0c7148ull, 0xda0653c085f1cc0bull, 0x7703fcf16b0bda0aull,
    0x96dd42027715daf5ull, 0x06de721c1b1d9d4aull, 0x910206bcc2b9c119ull,
    0xbe98f2647ae955f9ull, 0x2e9280d70be36615ull, 0xd74dc5c7249ccf01ull,
    0x619787356e911469ull, 0x85fe4f08e9bd3406ull, 0x898bdd05a5b63c1cull,
    0xb8b217f0674fc2cbull, 0x3e137490ef1b9d85ull, 0x32d2102f57d70409ull,
    0x3d2ac63f31baf398ull, 0x2ee637812b2f2bf6ull, 0x96e7eddf8e445f87ull,
    0x03e171bed7a032bdull, 0xdec996e8f37123f9ull, 0x50e84cdd3c8e89b9ull,
    0x23c58143d680b2bdull, 0xc0406b98f29ae613ull, 0x7aed748f03ecbce5ull,
    0x43d7be9d27d09acfull, 0x7548b55f780c5151ull, 0x3ff29da582cca8abull,
    0xec3e15d88dc3b57cull, 0xaad3cdeed2e6ef14ull, 0x04a5cc1113b882a7ull,
    0x6fa6265f83e8032eull, 0x42c0d3d913b4db30ull, 0xed44aa54f33e25c0ull,
    0x7e703e07672ada2bull, 0xf0bdf009c1386f17ull, 0xcc4ad1eb5928d8b4ull,
    0x3c3e33469f323575ull, 0x054358ca961145deull, 0x3b6810b215339b34ull,
    0x9ef94f9fee7f703bull, 0x476e820b700bd303ull, 0x702b9a439cae9d1bull,
    0x61cdf7526ba15fd6ull, 0x1dd08b1ec4ac0ffcull, 0x85ce05428d82b9feull,
    0x97e5f5356cff02eaull, 0xc414fc26d290ffceull, 0x2e32f26133cfcc31ull,
    0xb9ba1f7f90572549ull, 0x0f4b01dc4d199321ull, 0xb3ab068d621b1ba1ull,
    0x85bcd733fba4c9caull, 0x8f1d370301bbacd2ull, 0x8e5afd9108028f3eull,
    0x7de5ca1df68fbe4aull, 0xf3d857aef8c6416aull, 0x645c45b65ae18876ull,
    0xcf9459f9cad5f2f6ull, 0x2b37fe92e5905727ull, 0x6ca3ae54b3f0c246ull,
    0xefbf3fc82f5f3482ull, 0x18ac037c00a32e45ull, 0x4a816e24d4134eb5ull,
    0x9865e504c4ddb728ull, 0xbb5903238168a5e4ull, 0x95349a109bb28df7ull,
    0x3e4f5d2346e9aa18ull, 0x15cdb397385e1fecull, 0x8c53d4de040f3613ull,
    0xa7e7259d21f6f572ull, 0xd5a67a11a9858241ull, 0x571a93febbc9192bull,
    0xe58ae08c0cff3023ull, 0xb90fc6c9e5caefaeull, 0xe80b088edb0819f4ull,
    0x45d0d7b6395c67c9ull, 0x027e881356540790ull, 0xfeb61499e8e6697dull,
    0xdb0f2d3f4b035ab3ull, 0x22ba5ffca11dede8ull, 0xb6f6d497f0e08bd5ull,
    0x2072f80007bb7ddaull, 0x05d96faf2aaa2f5full, 0x015bbfe900614504ull,
    0xe59cc2770d3928e2ull, 0x254e4cc7113e3f2cull, 0xb1ce21aab6d0f837ull,
    0xf21846ed875aa920ull, 0x14c438138ca28e8eull, 0x1ef047e9009f0299ull,
    0xfe73381a34a72f3eull, 0x6478c9d6f28818f6ull, 0x491255dca1a63a6eull,
    0x0386d2db104fb1ddull, 0x11d6265ae80616cdull, 0x72187e60b4e06cd4ull,
    0x606c39151610e6d9ull, 0xe9864d0ea502cf71ull, 0x5127ced7165c3c6aull,
    0x7d685f4f30abbc50ull, 0xd7ad1d284b5a7c71ull, 0x160c9af49909331aull,
    0x7ae54cb4fca3b47aull, 0x037ed2e2b38e7659ull, 0x85827265362bc63cull,
    0x501ffe60d6121ad4ull, 0xd43f654b61f6da3full, 0x0b711ebbdef4b066ull,
    0x46edda9b9babd2b6ull, 0xc79340766c13d487ull, 0xf62dcd7d1e8ee1e6ull,
    0xa8893670a28a18ceull, 0x1681dfeba9f54c8eull, 0xf181fd8cd9acb776ull,
    0x712542339851683bull, 0x3081c6e63e0a53e3ull, 0x8ca2fec6acc1e392ull,
    0x25dc6d1b5f8c6bdaull, 0xc797cd1657405472ull, 0xd18b882f807822cfull,
    0x027596f3bfb25060ull, 0x64330906bc1ff96dull, 0xcd4d9c648ca89fe5ull,
    0xec7acbc3efad139eull, 0x9874a747c663ae6cull, 0x5aae026708e5ed10ull,
    0x9b4052650e360409ull, 0x8c410ac084816a6bull, 0x002efff564f8dd60ull,
    0xf129a966958c36c5ull, 0x9b878a4bba8fbce4ull, 0xdd0b0d828339b528ull,
    0xa2c3976d7d3bb7bdull, 0xf98ff77b132edcf9ull, 0x25fca8fbfbf8d607ull,
    0x83643b4a33dbccc8ull, 0x45f1bf66d10a495cull, 0x48f53ce8b67f1956ull,
    0xf39ec88b9ac71f52ull, 0x625ae29a6fbf6617ull, 0xef6760bce71101c3ull,
    0xf456ebbc6f8a6184ull, 0x79e0226774406a9dull, 0x508a7adcef6dc7abull,
    0x9a5acb26fa877252ull, 0x6c69b4b12e96d3ccull, 0xe2ce44fbe74f4871ull,
    0xe22c0883222d08c0ull, 0x0b6385fdd6522f7aull, 0xed0a0be8fbf0815eull,
    0x46baee8192c70243ull, 0xf2f566152e9ebfdeull, 0x724cee538f86d381ull,
    0x127284989915e0dfull, 0x240606b16bfdf23full, 0x81a553cab3f620a2ull,
    0x95a7cfae73af84d9ull, 0xefa8070da19ffae2ull, 0xc8852b6ca0bef31dull,
    0x70a253809fe3c237ull, 0xb8c28c4b0ce004b7ull, 0xdb00899e31bda653ull,
    0x3a5448d9155ff78aull, 0x6ec0adcbfc661325ull, 0x555c0080d678deaaull,
    0x226291dfd1e4b85aull, 0xcfab3e30e9b6fc1bull, 0x1dbc9cfc80078b59ull,
    0xc20a6ae157214d5eull, 0xeadf7d5b453eb3f0ull, 0x872799d4f6c021ffull,
    0x06ba9b4d0fd6ceadull, 0x764cc5026505f308ull, 0x10434c83b57893b6ull,
    0xb621b4811657d278ull, 0xde9d8247dad8a550ull, 0x0c3de6d758bb7657ull,
    0xd22e0dbafbf338caull, 0xcde70af2db4bcdedull,
};

static void test_golden(void **state)
{
    (void)state;
    enum { CAP = 2000 };
    gm_ge_item *it = calloc(CAP, sizeof *it);
    assert_non_null(it);
    bool print = getenv("GE_GOLDEN_PRINT") != NULL;
    unsigned bad = 0;
    for (unsigned k = 0; k < GOLDEN_COUNT; k++) {
        size_t n = golden_instance(it, CAP, k);
        uint64_t h = golden_hash(it, n);
        if (print) {
            printf("%s0x%016llxull,%s", k % 3 == 0 ? "    " : " ", (unsigned long long)h,
                   k % 3 == 2 || k + 1 == GOLDEN_COUNT ? "\n" : "");
        } else if (h != golden[k]) {
            if (bad++ < 10) print_error("golden instance %u (%zu items): hash %016llx, want %016llx\n", k, n,
                                        (unsigned long long)h, (unsigned long long)golden[k]);
        }
    }
    free(it);
    assert_int_equal(bad, 0);
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
        cmocka_unit_test(test_golden),
        cmocka_unit_test(test_bad_input),      cmocka_unit_test(test_alloc_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
