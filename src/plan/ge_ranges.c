/*
 * ge_ranges.c — the strategy table (reference §5.2) and BinaryBlockMemAssigner's size ranges
 * (§5.2 "Ranges"): with use_range a block is sized at the ceiling of the range its tensor falls in,
 * so that tensors of nearby sizes can take over each other's blocks at level 1.
 *
 * The ranges: sort all sizes; min = 512 when the largest exceeds 512, else the smallest;
 * R = ceil(log2(max / min)), at least 1. Walking from the top down, range_ceil starts at max and
 * halves per range; the range below the current ceiling takes every size above the (512-aligned)
 * half, the lowest range takes what is left. PlanRanges then merges, bottom up, each range holding
 * fewer than count / R sizes into the next larger one (the last range, and a range of >= 2 sizes
 * all >= 8 MiB, are kept), dropping empty ones. Each range's ceiling is its largest size.
 *
 * Choices where the reference leaves room (written here, not guessed silently):
 *  - R is computed in integers (smallest R with min << R >= max), not with floating logarithms, so
 *    exact powers of two do not get an extra range from rounding.
 *  - "first size >= 8 MiB" is read as the smallest size in the range after merging (ranges are
 *    kept sorted ascending), i.e. the exception protects ranges made only of large tensors.
 *  - Sizes compared against the halved ceiling are real sizes; the threshold is aligned up to the
 *    alignment (so below 512 bytes everything lands in one range, which costs nothing: every block
 *    is at least 512 bytes anyway).
 */
#include <stdlib.h>

#include "plan/ge_strategy.h"
#include "util/alloc.h"

#define GE_LARGE_BLOCK_SIZE (8LL * 1024 * 1024) /* kLargeBlockSize */
#define GE_LARGE_BLOCK_RANGE_SIZE 2             /* a large range of this many sizes is kept */

static const char *const ge_names[GM_GE_STRATEGY_COUNT] = {
    "binary-block",
    "max-block",
    "range-binary-block-descending-frfr",
    "range-binary-block-ascending-frfr",
    "range-binary-block-descending-frlr",
    "range-binary-block-ascending-frlr",
};

const char *gm_ge_strategy_name(gm_ge_strategy s)
{
    return (unsigned)s < GM_GE_STRATEGY_COUNT ? ge_names[s] : "unknown";
}

bool gm_ge_strategy_needs_memory_priority(gm_ge_strategy s)
{
    return s >= GM_GE_RANGE_BINARY_DESC_FRFR && s < GM_GE_STRATEGY_COUNT;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int64_t align_up(int64_t v, int64_t a) { return a > 1 ? (v + a - 1) / a * a : v; }

typedef struct range {
    size_t lo, hi; /* sorted[lo, hi) */
} range;

gm_status gm_ge_range_ceilings(const int64_t *sizes, size_t n, int64_t align, int64_t **ceils,
                               size_t *count, gm_error *err)
{
    *ceils = NULL;
    *count = 0;
    if (n == 0) return GM_OK;
    int64_t *s = gm_malloc(n * sizeof *s);
    range *r = gm_malloc(64 * sizeof *r);
    int64_t *out = gm_malloc(64 * sizeof *out);
    if (!s || !r || !out) {
        gm_free(s);
        gm_free(r);
        gm_free(out);
        return gm_error_set(err, GM_ERR_NOMEM, "ge ranges: out of memory");
    }
    for (size_t i = 0; i < n; i++) s[i] = sizes[i];
    qsort(s, n, sizeof *s, cmp_i64);
    int64_t max = s[n - 1];
    int64_t min = max > align ? align : s[0];
    if (min < 1) min = 1;
    size_t nr = 0; /* R: smallest with min << R >= max; at most 63 for positive int64 */
    while (nr < 62 && (min << nr) < max) nr++;
    if (nr == 0) nr = 1;
    size_t limit = n / nr;

    /* Top down: range k (0 = lowest) holds sorted[r[k].lo, r[k].hi). */
    size_t hi = n;
    int64_t ceil = max;
    for (size_t k = nr; k-- > 1;) {
        ceil /= 2;
        int64_t thr = align_up(ceil, align);
        size_t lo = hi;
        while (lo > 0 && s[lo - 1] > thr) lo--;
        r[k] = (range){lo, hi};
        hi = lo;
    }
    r[0] = (range){0, hi};

    /* PlanRanges, bottom up: an under-filled range is carried into the next larger one. Ranges
     * are contiguous in the sorted array, so carrying is just extending the next one down. */
    size_t m = 0;
    size_t carry_lo = SIZE_MAX;
    for (size_t k = 0; k < nr; k++) {
        range cur = r[k];
        if (carry_lo != SIZE_MAX) {
            cur.lo = carry_lo;
            carry_lo = SIZE_MAX;
        }
        size_t cnt = cur.hi - cur.lo;
        if (cnt == 0) continue;
        bool last = true; /* is any non-empty range after this one? */
        for (size_t j = k + 1; j < nr; j++)
            if (r[j].hi > r[j].lo) last = false;
        bool large = s[cur.lo] >= GE_LARGE_BLOCK_SIZE && cnt >= GE_LARGE_BLOCK_RANGE_SIZE;
        if (cnt < limit && !last && !large) {
            carry_lo = cur.lo;
            continue;
        }
        out[m++] = s[cur.hi - 1];
    }
    gm_free(s);
    gm_free(r);
    *ceils = out;
    *count = m;
    return GM_OK;
}
