/*
 * test_dsa.c — the offset problem on its own: the CSV reader's errors, LOAD on hand examples, best
 * fit and the search on small instances with a known optimum, the verifier against corrupted
 * answers, and determinism of the search under a node budget.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "graphmem/dsa.h"
#include "plan/dsa_internal.h"
#include "util/alloc.h"

static gm_dsa_buffer *parse_ok(const char *csv, size_t *n)
{
    gm_dsa_buffer *b = NULL;
    gm_error err;
    if (gm_dsa_parse_csv(csv, strlen(csv), "t.csv", &b, n, &err) != GM_OK) fail_msg("%s", err.message);
    return b;
}

static void expect_error(const char *csv, const char *needle)
{
    gm_dsa_buffer *b = NULL;
    size_t n = 99;
    gm_error err;
    gm_status st = gm_dsa_parse_csv(csv, strlen(csv), "t.csv", &b, &n, &err);
    assert_int_equal(st, GM_ERR_INPUT);
    assert_null(b);
    assert_int_equal(n, 0);
    if (!strstr(err.message, needle)) fail_msg("'%s' lacks '%s'", err.message, needle);
}

static void test_read_ok(void **state)
{
    (void)state;
    size_t n;
    gm_dsa_buffer *b = parse_ok("id,lower,upper,size\r\nb1,0,3,4\r\n7,3,9,4\r\n\r\n", &n);
    assert_int_equal(n, 2);
    assert_string_equal(b[0].name, "b1");
    assert_int_equal(b[0].id, 0); /* not an integer: the row number */
    assert_int_equal(b[1].id, 7);
    assert_int_equal(b[1].lower, 3);
    assert_int_equal(b[1].upper, 9);
    assert_int_equal(b[1].align, 1);
    assert_int_equal(b[1].offset, -1);
    gm_dsa_free(b);
    /* columns in any order, optional alignment and offset */
    b = parse_ok("size,upper,lower,id,alignment,offset\n8,5,1,x,4,16\n", &n);
    assert_int_equal(n, 1);
    assert_int_equal(b[0].size, 8);
    assert_int_equal(b[0].lower, 1);
    assert_int_equal(b[0].upper, 5);
    assert_int_equal(b[0].align, 4);
    assert_int_equal(b[0].offset, 16);
    gm_dsa_free(b);
}

static void test_read_errors(void **state)
{
    (void)state;
    expect_error("", "t.csv:1: empty file");
    expect_error("id,lower,upper\n0,1,2\n", "t.csv:1: header lacks column 'size'");
    expect_error("id,lower,upper,size\n0,0,2,4\n1,0,x,4\n", "t.csv:3: upper 'x' is not an integer");
    expect_error("id,lower,upper,size\n0,0,2\n", "t.csv:2: 3 fields, the header has 4");
    expect_error("id,lower,upper,size\n0,5,5,4\n", "t.csv:2: buffer 0: lifetime [5, 5)");
    expect_error("id,lower,upper,size\n0,0,5,0\n", "t.csv:2: buffer 0: size 0 out of range");
    expect_error("id,lower,upper,size,alignment\n0,0,5,8,0\n", "t.csv:2: buffer 0: alignment 0");
    expect_error("id,lower,upper,size,size\n", "column 'size' given twice");
    expect_error("id,lower,upper,size\n,0,5,8\n", "t.csv:2: empty id");

    gm_dsa_buffer *b = (gm_dsa_buffer *)1;
    size_t n = 5;
    gm_error err;
    assert_int_equal(gm_dsa_read_csv("/nonexistent/x.csv", &b, &n, &err), GM_ERR_IO);
    assert_null(b);
    assert_non_null(strstr(err.message, "/nonexistent/x.csv"));
}

static void test_read_nomem(void **state)
{
    (void)state;
    const char *csv = "id,lower,upper,size\n0,0,2,4\n";
    gm_dsa_buffer *b;
    size_t n;
    gm_error err;
    gm_alloc_fail_after(0);
    gm_status st = gm_dsa_parse_csv(csv, strlen(csv), "t.csv", &b, &n, &err);
    gm_alloc_fail_after(-1);
    assert_int_equal(st, GM_ERR_NOMEM);
    assert_null(b);
}

static void test_write_roundtrip(void **state)
{
    (void)state;
    size_t n;
    gm_dsa_buffer *b = parse_ok("id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\nb3,0,9,4\n", &n);
    int64_t h;
    gm_error err;
    assert_int_equal(gm_dsa_best_fit(b, n, &h, &err), GM_OK);
    char path[] = "/tmp/gm_dsa_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(gm_dsa_write_csv(path, b, n, &err), GM_OK);
    gm_dsa_buffer *r;
    size_t m;
    assert_int_equal(gm_dsa_read_csv(path, &r, &m, &err), GM_OK);
    assert_int_equal(m, n);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(r[i].name, b[i].name);
        assert_int_equal(r[i].offset, b[i].offset);
        assert_int_equal(r[i].size, b[i].size);
    }
    remove(path);
    gm_dsa_free(r);
    gm_dsa_free(b);
    assert_int_equal(gm_dsa_write_csv("/nonexistent/dir/out.csv", b, 0, &err), GM_ERR_IO);
}

static void test_bound(void **state)
{
    (void)state;
    assert_int_equal(gm_dsa_lower_bound(NULL, 0), 0);
    /* MiniMalloc's example input.12: LOAD 12 */
    size_t n;
    gm_dsa_buffer *b = parse_ok("id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\nb3,0,9,4\nb4,9,21,4\nb5,0,21,4\n", &n);
    assert_int_equal(gm_dsa_lower_bound(b, n), 12);
    gm_dsa_free(b);
    /* half-open: a buffer ending at t and one starting at t are never both alive */
    b = parse_ok("id,lower,upper,size\n0,0,5,10\n1,5,9,7\n", &n);
    assert_int_equal(gm_dsa_lower_bound(b, n), 10);
    gm_dsa_free(b);
    b = parse_ok("id,lower,upper,size\n0,0,6,10\n1,5,9,7\n2,8,12,1\n", &n);
    assert_int_equal(gm_dsa_lower_bound(b, n), 17);
    gm_dsa_free(b);
}

static void test_check(void **state)
{
    (void)state;
    gm_dsa_buffer b[3] = {
        {.id = 10, .lower = 0, .upper = 4, .size = 8, .align = 1, .offset = 0},
        {.id = 11, .lower = 2, .upper = 6, .size = 8, .align = 4, .offset = 8},
        {.id = 12, .lower = 4, .upper = 8, .size = 8, .align = 1, .offset = 0}, /* after 10 dies */
    };
    char why[256];
    assert_true(gm_dsa_check(b, 3, 16, why, sizeof why));
    assert_false(gm_dsa_check(b, 3, 15, why, sizeof why)); /* too high */
    assert_non_null(strstr(why, "exceeds"));
    b[1].offset = 4; /* overlaps 10 and 12 in address and time */
    assert_false(gm_dsa_check(b, 3, -1, why, sizeof why));
    assert_non_null(strstr(why, "10"));
    assert_non_null(strstr(why, "11"));
    b[1].offset = 10; /* misaligned */
    assert_false(gm_dsa_check(b, 3, -1, why, sizeof why));
    assert_non_null(strstr(why, "alignment"));
    b[1].offset = 8;
    b[2].lower = 3; /* now alive with 10 at the same address */
    assert_false(gm_dsa_check(b, 3, -1, why, sizeof why));
    assert_non_null(strstr(why, "buffers 10 and 12 overlap"));
    b[2].offset = -1;
    assert_false(gm_dsa_check(b, 3, -1, why, sizeof why));
    assert_non_null(strstr(why, "no offset"));
}

/* A perfect tiling of the 4 x 16 rectangle (time x address): c 0..6 and a 6..16 at t0; e 6..10
 * and b 10..16 from t1; d 0..4 and h 4..6 from t2; f 4..10 at t3. */
static const char *const tiling =
    "id,lower,upper,size\n"
    "a,0,1,10\nb,1,4,6\nc,0,2,6\nd,2,4,4\ne,1,3,4\nf,3,4,6\nh,2,3,2\n";

static void test_best_fit(void **state)
{
    (void)state;
    size_t n;
    gm_dsa_buffer *b = parse_ok("id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\nb3,0,9,4\nb4,9,21,4\nb5,0,21,4\n", &n);
    int64_t h;
    gm_error err;
    char why[256];
    assert_int_equal(gm_dsa_best_fit(b, n, &h, &err), GM_OK);
    assert_int_equal(h, 12);
    assert_true(gm_dsa_check(b, n, h, why, sizeof why));
    for (int o = 0; o < GM_DSA_ORDER_COUNT; o++) {
        assert_int_equal(gm_dsa_best_fit_order(b, n, (gm_dsa_order)o, &h, &err), GM_OK);
        assert_true(gm_dsa_check(b, n, h, why, sizeof why));
        assert_true(h >= 12);
    }
    gm_dsa_free(b);
    /* best fit respects alignment */
    b = parse_ok("id,lower,upper,size,alignment\n0,0,4,3,1\n1,0,4,8,8\n", &n);
    assert_int_equal(gm_dsa_best_fit(b, n, &h, &err), GM_OK);
    assert_true(gm_dsa_check(b, n, h, why, sizeof why));
    assert_int_equal(b[1].offset % 8, 0);
    gm_dsa_free(b);
    /* A buffer built in memory with an empty lifetime (the reader refuses one) takes best fit's
     * plain path, which must still give every other buffer a place that overlaps no one. */
    b = parse_ok("id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\nb3,0,9,4\nb4,9,21,4\nb5,0,21,4\n", &n);
    b[3].upper = b[3].lower; /* b4 now lives nowhere */
    assert_int_equal(gm_dsa_best_fit(b, n, &h, &err), GM_OK);
    assert_true(h >= 8 && h <= 12);
    for (size_t i = 0; i < n; i++) {
        for (size_t j = i + 1; j < n; j++) {
            bool in_time = b[i].lower < b[j].upper && b[j].lower < b[i].upper;
            bool in_space = b[i].offset < b[j].offset + b[j].size && b[j].offset < b[i].offset + b[i].size;
            assert_false(in_time && in_space);
        }
    }
    gm_dsa_free(b);
}

static void test_search_optimum(void **state)
{
    (void)state;
    size_t n;
    gm_dsa_buffer *b = parse_ok(tiling, &n);
    int64_t lb = gm_dsa_lower_bound(b, n), h;
    assert_int_equal(lb, 16);
    bool opt;
    gm_error err;
    char why[256];
    gm_dsa_search_opts o = {0, 100000};
    assert_int_equal(gm_dsa_search(b, n, &o, &h, &opt, &err), GM_OK);
    assert_int_equal(h, 16);
    assert_true(opt);
    assert_true(gm_dsa_check(b, n, 16, why, sizeof why));
    gm_dsa_free(b);
    /* a chain of unit buffers alive two at a time: LOAD 2 is reachable */
    b = parse_ok("id,lower,upper,size\n0,0,2,1\n1,1,3,1\n2,2,4,1\n", &n);
    assert_int_equal(gm_dsa_search(b, n, &o, &h, &opt, &err), GM_OK);
    assert_int_equal(h, 2);
    assert_true(opt);
    assert_true(gm_dsa_check(b, n, h, why, sizeof why));
    gm_dsa_free(b);
    /* alignment: the aligned buffer must start at a multiple of 8 */
    b = parse_ok("id,lower,upper,size,alignment\n0,0,4,3,1\n1,0,4,8,8\n", &n);
    assert_int_equal(gm_dsa_search(b, n, &o, &h, &opt, &err), GM_OK);
    assert_true(gm_dsa_check(b, n, h, why, sizeof why));
    assert_int_equal(h, 11); /* 8 at 0, 3 at 8 */
    assert_int_equal(b[1].offset % 8, 0);
    gm_dsa_free(b);
    /* empty input */
    assert_int_equal(gm_dsa_search(NULL, 0, &o, &h, &opt, &err), GM_OK);
    assert_int_equal(h, 0);
}

/* A pseudo-random perfect packing: a strip cut into rectangles by recursive guillotine cuts,
 * like the challenging benchmark's instances. LOAD equals the strip's height. */
static size_t cut(gm_dsa_buffer *b, size_t n, uint64_t *rng, int64_t t0, int64_t t1, int64_t a0,
                  int64_t a1, int depth)
{
    *rng ^= *rng << 13;
    *rng ^= *rng >> 7;
    *rng ^= *rng << 17;
    if (depth == 0 || (t1 - t0 < 2 && a1 - a0 < 2)) {
        b[n] = (gm_dsa_buffer){.id = (int64_t)n, .lower = t0, .upper = t1, .size = a1 - a0,
                               .align = 1, .offset = -1};
        return n + 1;
    }
    bool in_time = (*rng & 1) ? t1 - t0 >= 2 : a1 - a0 < 2;
    if (in_time) {
        int64_t m = t0 + 1 + (int64_t)((*rng >> 8) % (uint64_t)(t1 - t0 - 1));
        n = cut(b, n, rng, t0, m, a0, a1, depth - 1);
        return cut(b, n, rng, m, t1, a0, a1, depth - 1);
    }
    int64_t m = a0 + 1 + (int64_t)((*rng >> 8) % (uint64_t)(a1 - a0 - 1));
    n = cut(b, n, rng, t0, t1, a0, m, depth - 1);
    return cut(b, n, rng, t0, t1, m, a1, depth - 1);
}

static void test_search_guillotine(void **state)
{
    (void)state;
    gm_dsa_buffer b[64];
    int greedy_short = 0; /* instances where best fit misses LOAD: the search did the work */
    for (uint64_t seed = 1; seed <= 8; seed++) {
        uint64_t rng = seed * 0x9E3779B97F4A7C15ull;
        size_t n = cut(b, 0, &rng, 0, 40, 0, 1000, 5);
        assert_true(n <= 64);
        int64_t lb = gm_dsa_lower_bound(b, n), h, hb;
        assert_int_equal(lb, 1000);
        gm_error err;
        char why[256];
        assert_int_equal(gm_dsa_best_fit(b, n, &hb, &err), GM_OK);
        assert_true(gm_dsa_check(b, n, hb, why, sizeof why));
        greedy_short += hb > lb;
        bool opt;
        gm_dsa_search_opts o = {0, 2000000};
        assert_int_equal(gm_dsa_search(b, n, &o, &h, &opt, &err), GM_OK);
        if (!gm_dsa_check(b, n, h, why, sizeof why)) fail_msg("seed %d: %s", (int)seed, why);
        assert_true(h <= hb);
        assert_int_equal(h, 1000);
        assert_true(opt);
    }
    print_message("best fit above LOAD on %d of 8\n", greedy_short);
    assert_true(greedy_short > 0);
}

/* The decision on its own: two guillotine strips side by side in time under one buffer that
 * spans both. Once that buffer is placed, no unplaced buffer crosses the strips' shared instant,
 * so the search solves them as independent parts (dynamic decomposition). Below the busiest
 * section's total the answer is an immediate no; at LOAD a packing, the same one every time;
 * with a tiny node cap the budget runs out and a second call goes on from the same run. */
static size_t two_strips(gm_dsa_buffer *b, uint64_t seed)
{
    uint64_t rng = seed * 0x9E3779B97F4A7C15ull;
    b[0] = (gm_dsa_buffer){.id = 0, .lower = 0, .upper = 80, .size = 24, .align = 1, .offset = -1};
    size_t n = cut(b, 1, &rng, 0, 40, 0, 1000, 5);
    n = cut(b, n, &rng, 40, 80, 0, 1000, 5);
    for (size_t i = 0; i < n; i++) b[i].id = (int64_t)i;
    return n;
}

static void test_bb_decide(void **state)
{
    (void)state;
    gm_dsa_buffer b[160];
    gm_error err;
    char why[256];
    int64_t first[160];
    for (int rep = 0; rep < 2; rep++) {
        size_t n = two_strips(b, 7);
        assert_true(n <= 160);
        int64_t lb = gm_dsa_lower_bound(b, n);
        assert_int_equal(lb, 1024);
        gm_dsa_bb *bb;
        assert_int_equal(gm_dsa_bb_new(b, n, &bb, &err), GM_OK);
        uint64_t run = 0;
        assert_int_equal(gm_dsa_bb_decide(bb, lb - 1, &run, UINT64_MAX, 0), 0);
        run = 0;
        assert_int_equal(gm_dsa_bb_decide(bb, lb, &run, 10000000, 0), 1);
        const int64_t *pos = gm_dsa_bb_offsets(bb);
        for (size_t i = 0; i < n; i++) b[i].offset = pos[i];
        if (!gm_dsa_check(b, n, lb, why, sizeof why)) fail_msg("%s", why);
        if (rep == 0) memcpy(first, pos, n * sizeof *first);
        else
            for (size_t i = 0; i < n; i++) assert_int_equal(first[i], pos[i]);
        /* a cap of 3 nodes: stopped; the next call, with more nodes, goes on and finds it */
        run = 0;
        uint64_t cap = gm_dsa_bb_nodes(bb) + 3;
        assert_int_equal(gm_dsa_bb_decide(bb, lb, &run, cap, 0), -1);
        assert_int_equal(gm_dsa_bb_decide(bb, lb, &run, UINT64_MAX, 0), 1);
        gm_dsa_bb_free(bb);
    }
    gm_dsa_bb_free(NULL);
}

static void test_search_deterministic(void **state)
{
    (void)state;
    gm_dsa_buffer b[64], c[64];
    uint64_t rng = 42;
    size_t n = cut(b, 0, &rng, 0, 50, 0, 997, 6);
    memcpy(c, b, n * sizeof *b);
    gm_dsa_search_opts o = {0, 50000}; /* a small node budget: it may stop early; same place */
    int64_t h1, h2;
    bool o1, o2;
    gm_error err;
    assert_int_equal(gm_dsa_search(b, n, &o, &h1, &o1, &err), GM_OK);
    assert_int_equal(gm_dsa_search(c, n, &o, &h2, &o2, &err), GM_OK);
    assert_int_equal(h1, h2);
    assert_int_equal(o1, o2);
    for (size_t i = 0; i < n; i++) assert_int_equal(b[i].offset, c[i].offset);
}

static void test_search_bad_input(void **state)
{
    (void)state;
    gm_dsa_buffer b[1] = {{.id = 3, .lower = 4, .upper = 4, .size = 1, .align = 1}};
    int64_t h;
    bool opt;
    gm_error err;
    assert_int_equal(gm_dsa_search(b, 1, NULL, &h, &opt, &err), GM_ERR_INPUT);
    assert_non_null(strstr(err.message, "3"));
}

/* Every allocation failure in best fit and the search gives GM_ERR_NOMEM and leaks nothing
 * (AddressSanitizer's leak check runs with the tests). */
static void test_search_nomem(void **state)
{
    (void)state;
    gm_dsa_buffer b[64];
    uint64_t rng = 7;
    size_t n = cut(b, 0, &rng, 0, 30, 0, 500, 5);
    bool saw_fail = false, saw_ok = false;
    for (long k = 0; k < 400 && !saw_ok; k++) {
        for (size_t i = 0; i < n; i++) b[i].offset = -1;
        int64_t h;
        bool opt;
        gm_error err;
        gm_dsa_search_opts o = {0, 20000};
        gm_alloc_fail_after(k);
        gm_status st = gm_dsa_search(b, n, &o, &h, &opt, &err);
        gm_alloc_fail_after(-1);
        if (st == GM_OK) {
            char why[256];
            assert_true(gm_dsa_check(b, n, h, why, sizeof why));
            saw_ok = true;
        } else {
            assert_int_equal(st, GM_ERR_NOMEM);
            saw_fail = true;
        }
    }
    assert_true(saw_fail);
    assert_true(saw_ok);
}

/* A real instance (bench/data/dsa, MiniMalloc's benchmarks): the search must reach LOAD quickly. */
static void test_shared_instance(void **state)
{
    (void)state;
    const char *path = GM_SOURCE_DIR "/bench/data/dsa/minimalloc/challenging/A.1048576.csv";
    if (access(path, R_OK) != 0) fail_msg("%s is missing (the tree's own copy)", path);
    gm_dsa_buffer *b;
    size_t n;
    gm_error err;
    assert_int_equal(gm_dsa_read_csv(path, &b, &n, &err), GM_OK);
    assert_int_equal(n, 154);
    assert_int_equal(gm_dsa_lower_bound(b, n), 1048576);
    int64_t h;
    bool opt;
    gm_dsa_search_opts o = {0, 3000000};
    assert_int_equal(gm_dsa_search(b, n, &o, &h, &opt, &err), GM_OK);
    char why[256];
    assert_true(gm_dsa_check(b, n, h, why, sizeof why));
    assert_int_equal(h, 1048576);
    assert_true(opt);
    gm_dsa_free(b);
}

/* A trace-like instance: many short buffers, a few long ones, one busy stretch in the middle. */
static gm_dsa_buffer *trace_instance(size_t n, uint64_t seed)
{
    gm_dsa_buffer *b = calloc(n, sizeof *b);
    assert_non_null(b);
    uint64_t r = seed;
    for (size_t i = 0; i < n; i++) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        int64_t start = (int64_t)(r % 20000);
        int64_t len = (r >> 20) % 16 == 0 ? 1 + (int64_t)((r >> 24) % 4000) : 1 + (int64_t)((r >> 24) % 40);
        if (start > 9000 && start < 11000) len += 200; /* the peak */
        b[i] = (gm_dsa_buffer){(int64_t)i, start, start + len, 1 + (int64_t)((r >> 40) % 5000), 1, -1, NULL};
    }
    return b;
}

/* Big instances take the greedy path (peak-first orders included): it finishes, every answer
 * checks, is never worse than size-descending best fit, and repeats exactly without a clock. */
static void test_search_large(void **state)
{
    (void)state;
    size_t n = 10000;
    gm_dsa_buffer *b = trace_instance(n, 7), *c = trace_instance(n, 7);
    gm_error err;
    int64_t hb, h1, h2, lb = gm_dsa_lower_bound(b, n);
    bool o1, o2;
    char why[256];
    assert_int_equal(gm_dsa_best_fit(b, n, &hb, &err), GM_OK);
    for (int v = 0; v < GM_DSA_PEAK_COUNT; v++) {
        int64_t hp;
        assert_int_equal(gm_dsa_best_fit_peak(c, n, v, &hp, &err), GM_OK);
        assert_true(gm_dsa_check(c, n, hp, why, sizeof why));
        assert_true(hp >= lb);
    }
    gm_dsa_search_opts o = {0, 200000};
    assert_int_equal(gm_dsa_search(b, n, &o, &h1, &o1, &err), GM_OK);
    assert_int_equal(gm_dsa_search(c, n, &o, &h2, &o2, &err), GM_OK);
    assert_true(gm_dsa_check(b, n, h1, why, sizeof why));
    assert_true(h1 <= hb && h1 >= lb);
    assert_int_equal(h1, h2);
    assert_int_equal(o1, o2);
    assert_int_equal(o1, h1 == lb);
    for (size_t i = 0; i < n; i++) assert_int_equal(b[i].offset, c[i].offset);
    free(b);
    free(c);
}

/* The reference best fit: every placed buffer overlapping in time, sorted by offset, scanned for
 * the smallest gap (the rule dsa_bestfit.c must decide exactly as, however it finds the gaps). */
static int cmp_span_off(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

static void naive_best_fit(gm_dsa_buffer *b, size_t n, const size_t *order, size_t m,
                           const unsigned char *fixed)
{
    unsigned char *placed = calloc(n, 1);
    int64_t(*sp)[2] = malloc((n + 1) * sizeof *sp);
    assert_true(placed && sp);
    for (size_t i = 0; i < n && fixed; i++) placed[i] = fixed[i];
    for (size_t r = 0; r < m; r++) {
        gm_dsa_buffer *x = &b[order[r]];
        size_t k = 0;
        for (size_t j = 0; j < n; j++)
            if (placed[j] && b[j].lower < x->upper && b[j].upper > x->lower) {
                sp[k][0] = b[j].offset;
                sp[k++][1] = b[j].offset + b[j].size;
            }
        qsort(sp, k, sizeof *sp, cmp_span_off);
        int64_t reach = 0, best = -1, gap = INT64_MAX, a = x->align;
        for (size_t j = 0; j < k; j++) {
            int64_t at = (reach + a - 1) / a * a;
            if (sp[j][0] >= at + x->size && sp[j][0] - at < gap) gap = sp[j][0] - at, best = at;
            if (sp[j][1] > reach) reach = sp[j][1];
        }
        x->offset = best >= 0 ? best : (reach + a - 1) / a * a;
        placed[order[r]] = 1;
    }
    free(placed);
    free(sp);
}

/* Best fit's gap search (a heap over the tree's sorted lists, skipping what lies under the
 * running top, stopping at an exact fit) places every buffer where the plain sorted scan does:
 * shuffled orders, alignments, long and short lifetimes, with and without obstacles. */
static void test_best_fit_reference(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 6; seed++) {
        size_t n = 1500;
        gm_dsa_buffer *b = trace_instance(n, seed * 977), *c = malloc(n * sizeof *c);
        size_t *order = malloc(n * sizeof *order);
        unsigned char *fixed = calloc(n, 1);
        assert_true(c && order && fixed);
        uint64_t r = seed;
        for (size_t i = 0; i < n; i++) {
            r ^= r << 13, r ^= r >> 7, r ^= r << 17;
            b[i].size = seed % 2 ? 1 + (int64_t)(r % 8) * 64 : b[i].size; /* few sizes: exact fits */
            b[i].align = seed % 3 == 0 ? (int64_t)1 << (r >> 50) % 5 : 1;
            order[i] = i;
        }
        for (size_t i = n; i-- > 1;) { /* Fisher-Yates with the same generator */
            r ^= r << 13, r ^= r >> 7, r ^= r << 17;
            size_t j = (size_t)(r % (i + 1)), t = order[i];
            order[i] = order[j], order[j] = t;
        }
        gm_error err;
        int64_t h;
        char why[256];
        size_t m = n;
        if (seed > 3) { /* the first third packed, then fixed as obstacles */
            assert_int_equal(gm_dsa_best_fit_seq(b, n, order, n / 3, NULL, &h, &err), GM_OK);
            for (size_t k = 0; k < n / 3; k++) fixed[order[k]] = 1;
            memmove(order, order + n / 3, (n - n / 3) * sizeof *order);
            m = n - n / 3;
        }
        memcpy(c, b, n * sizeof *c);
        assert_int_equal(gm_dsa_best_fit_seq(b, n, order, m, seed > 3 ? fixed : NULL, &h, &err), GM_OK);
        naive_best_fit(c, n, order, m, seed > 3 ? fixed : NULL);
        for (size_t i = 0; i < n; i++) assert_int_equal(b[i].offset, c[i].offset);
        assert_true(gm_dsa_check(b, n, h, why, sizeof why));
        free(b);
        free(c);
        free(order);
        free(fixed);
    }
}

/* Windows around the peak: whatever they find is a valid packing, never above the greedy one,
 * reported in best[] with its height, and the same run to run under a node cap. */
static void test_window_improve(void **state)
{
    (void)state;
    size_t n = 3000;
    gm_dsa_buffer *b = trace_instance(n, 11);
    gm_error err;
    int64_t h0, lb = gm_dsa_lower_bound(b, n);
    char why[256];
    assert_int_equal(gm_dsa_best_fit(b, n, &h0, &err), GM_OK);
    int64_t *best1 = malloc(n * sizeof *best1), *best2 = malloc(n * sizeof *best2);
    assert_true(best1 && best2);
    for (size_t i = 0; i < n; i++) best1[i] = best2[i] = b[i].offset;
    int64_t h1 = h0, h2 = h0;
    assert_int_equal(gm_dsa_window_improve(b, n, lb, best1, &h1, 100000, 8, 0, &err), GM_OK);
    assert_int_equal(gm_dsa_window_improve(b, n, lb, best2, &h2, 100000, 8, 0, &err), GM_OK);
    assert_int_equal(h1, h2);
    assert_true(h1 <= h0 && h1 >= lb);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(best1[i], best2[i]);
        b[i].offset = best1[i];
    }
    assert_true(gm_dsa_check(b, n, h1, why, sizeof why));
    free(best1);
    free(best2);
    free(b);
}

/* Buffers alive at the peak instant are stacked first, with no gap there, so every peak-first
 * variant packs this staircase at LOAD. */
static void test_peak_staircase(void **state)
{
    (void)state;
    gm_dsa_buffer b[] = {
        {0, 0, 10, 4, 1, -1, NULL}, {1, 4, 6, 6, 1, -1, NULL}, {2, 0, 4, 5, 1, -1, NULL},
        {3, 6, 10, 5, 1, -1, NULL}, {4, 2, 8, 2, 1, -1, NULL},
    };
    size_t n = sizeof b / sizeof *b;
    gm_error err;
    char why[256];
    int64_t lb = gm_dsa_lower_bound(b, n); /* 4 + 6 + 2 at t = 4..6 */
    assert_int_equal(lb, 12);
    for (int v = 0; v < GM_DSA_PEAK_COUNT; v++) {
        int64_t h;
        assert_int_equal(gm_dsa_best_fit_peak(b, n, v, &h, &err), GM_OK);
        assert_true(gm_dsa_check(b, n, h, why, sizeof why));
        assert_int_equal(h, lb);
    }
    /* the peak instant: the first at LOAD (ends before starts at one instant) */
    assert_int_equal(gm_dsa_peak_time(b, n), 4);
    gm_dsa_buffer c[] = {{0, 0, 5, 3, 1, -1, NULL}, {1, 5, 9, 3, 1, -1, NULL}, {2, 2, 7, 4, 1, -1, NULL}};
    assert_int_equal(gm_dsa_peak_time(c, 3), 2); /* 7 from 2; at 5 one ends as one starts */
}

typedef struct by_size_ref {
    int64_t size, lower;
    size_t i;
} by_size_ref;

static int cmp_size_ref(const void *a, const void *b)
{
    const by_size_ref *x = a, *y = b;
    if (x->size != y->size) return x->size > y->size ? -1 : 1;
    if (x->lower != y->lower) return x->lower < y->lower ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* Best fit on 70,000 buffers (its size order then comes from radix sorts, dsa_bestfit.c) places
 * every buffer where best fit in the order sorted here by qsort does: size descending, first
 * use, index; negative times and equal sizes included. */
static void test_best_fit_radix_order(void **state)
{
    (void)state;
    enum { N = 70000 };
    gm_dsa_buffer *a = calloc(N, sizeof *a), *b = calloc(N, sizeof *b);
    by_size_ref *r = calloc(N, sizeof *r);
    size_t *order = calloc(N, sizeof *order);
    assert_true(a && b && r && order);
    uint64_t x = 0x853C49E6748FEA9Bull;
    for (size_t i = 0; i < N; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        a[i].id = (int64_t)i;
        a[i].lower = (int64_t)(x % 200000) - 50000;
        a[i].upper = a[i].lower + 1 + (int64_t)((x >> 24) % 300);
        a[i].size = 64 * (1 + (int64_t)((x >> 40) % 40));
        a[i].align = 64;
        a[i].offset = -1;
        r[i] = (by_size_ref){a[i].size, a[i].lower, i};
    }
    memcpy(b, a, N * sizeof *a);
    qsort(r, N, sizeof *r, cmp_size_ref);
    for (size_t i = 0; i < N; i++) order[i] = r[i].i;
    gm_error err;
    int64_t ha, hb;
    assert_int_equal(gm_dsa_best_fit(a, N, &ha, &err), GM_OK);
    assert_int_equal(gm_dsa_best_fit_seq(b, N, order, N, NULL, &hb, &err), GM_OK);
    assert_int_equal(ha, hb);
    for (size_t i = 0; i < N; i++) assert_int_equal(a[i].offset, b[i].offset);
    free(a);
    free(b);
    free(r);
    free(order);
}

/* LOAD, swept per instant on a dense time range and sorted on a sparse one, against the
 * largest total alive at some buffer's start, counted pair by pair. */
static void test_lower_bound_dense_and_sparse(void **state)
{
    (void)state;
    uint64_t x = 0x2545F4914F6CDD1Dull;
    for (int round = 0; round < 30; round++) {
        size_t n = 1 + (size_t)round * 11;
        int64_t spread = round % 2 ? 2 * (int64_t)n : (int64_t)1 << 40;
        gm_dsa_buffer *b = calloc(n, sizeof *b);
        assert_non_null(b);
        for (size_t i = 0; i < n; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            b[i].lower = (int64_t)(x % (uint64_t)spread);
            b[i].upper = b[i].lower + 1 + (int64_t)((x >> 20) % (round % 2 ? 9 : (uint64_t)spread));
            b[i].size = 1 + (int64_t)((x >> 44) % 1000);
        }
        int64_t want = 0;
        for (size_t i = 0; i < n; i++) {
            int64_t live = 0;
            for (size_t j = 0; j < n; j++)
                if (b[j].lower <= b[i].lower && b[i].lower < b[j].upper) live += b[j].size;
            if (live > want) want = live;
        }
        assert_int_equal(gm_dsa_lower_bound(b, n), want);
        free(b);
    }
}

/* The search given best fit's answer (the planner runs best fit first and hands it over)
 * ends with the same offsets and height as the search run alone, on instances it solves at
 * once, by search, and by windows. */
static void test_search_from_best_fit(void **state)
{
    (void)state;
    uint64_t x = 0x9E3779B97F4A7C15ull;
    const size_t sizes[] = {12, 300, 5000};
    for (size_t t = 0; t < sizeof sizes / sizeof *sizes; t++) {
        size_t n = sizes[t];
        gm_dsa_buffer *a = calloc(n, sizeof *a), *b = calloc(n, sizeof *b);
        int64_t *bf = malloc(n * sizeof *bf);
        assert_true(a && b && bf);
        for (size_t i = 0; i < n; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            a[i].id = (int64_t)i;
            a[i].lower = (int64_t)(x % (n * 2));
            a[i].upper = a[i].lower + 1 + (int64_t)((x >> 24) % 40);
            a[i].size = 1 + (int64_t)((x >> 40) % 64) * 16;
            a[i].align = 1;
            a[i].offset = -1;
        }
        memcpy(b, a, n * sizeof *a);
        gm_error err;
        int64_t hb, ha, hf;
        assert_int_equal(gm_dsa_best_fit(b, n, &hb, &err), GM_OK);
        for (size_t i = 0; i < n; i++) bf[i] = b[i].offset;
        memcpy(b, a, n * sizeof *a);
        gm_dsa_search_opts o = {0, 20000};
        bool opt_a, opt_f;
        assert_int_equal(gm_dsa_search(a, n, &o, &ha, &opt_a, &err), GM_OK);
        assert_int_equal(gm_dsa_search_from(b, n, &o, bf, hb, &hf, &opt_f, &err), GM_OK);
        assert_int_equal(ha, hf);
        assert_int_equal(opt_a, opt_f);
        for (size_t i = 0; i < n; i++) assert_int_equal(a[i].offset, b[i].offset);
        free(a);
        free(b);
        free(bf);
    }
}

static int cmp_i64_test(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The time axis: a dense range is read from a bitmap, a sparse one sorted; both give every
 * distinct lower and upper once, ascending (here against a plain sort), negatives included. */
static void test_time_axis(void **state)
{
    (void)state;
    uint64_t x = 88172645463325252ull;
    for (int round = 0; round < 40; round++) {
        size_t n = 1 + (size_t)round * 37;
        int64_t spread = round % 2 ? 3 * (int64_t)n : (int64_t)1 << (20 + round % 30); /* dense, then sparse */
        gm_dsa_buffer *b = calloc(n, sizeof *b);
        int64_t *got = malloc(2 * n * sizeof *got), *want = malloc(2 * n * sizeof *want);
        assert_true(b && got && want);
        for (size_t i = 0; i < n; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            b[i].lower = (int64_t)(x % (uint64_t)spread) - spread / 3;
            b[i].upper = b[i].lower + 1 + (int64_t)((x >> 32) % 5);
            want[2 * i] = b[i].lower;
            want[2 * i + 1] = b[i].upper;
        }
        qsort(want, 2 * n, sizeof *want, cmp_i64_test);
        size_t m = 0;
        for (size_t i = 0; i < 2 * n; i++)
            if (m == 0 || want[m - 1] != want[i]) want[m++] = want[i];
        assert_int_equal(gm_dsa_time_axis(b, n, got), m);
        for (size_t i = 0; i < m; i++) assert_int_equal(got[i], want[i]);
        free(b);
        free(got);
        free(want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_ok),
        cmocka_unit_test(test_read_errors),
        cmocka_unit_test(test_read_nomem),
        cmocka_unit_test(test_write_roundtrip),
        cmocka_unit_test(test_bound),
        cmocka_unit_test(test_check),
        cmocka_unit_test(test_best_fit),
        cmocka_unit_test(test_search_optimum),
        cmocka_unit_test(test_search_guillotine),
        cmocka_unit_test(test_bb_decide),
        cmocka_unit_test(test_search_deterministic),
        cmocka_unit_test(test_search_bad_input),
        cmocka_unit_test(test_search_nomem),
        cmocka_unit_test(test_shared_instance),
        cmocka_unit_test(test_search_large),
        cmocka_unit_test(test_peak_staircase),
        cmocka_unit_test(test_best_fit_reference),
        cmocka_unit_test(test_window_improve),
        cmocka_unit_test(test_time_axis),
        cmocka_unit_test(test_search_from_best_fit),
        cmocka_unit_test(test_lower_bound_dense_and_sparse),
        cmocka_unit_test(test_best_fit_radix_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
