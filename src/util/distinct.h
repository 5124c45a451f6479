/*
 * distinct.h — the distinct values of a long array that holds few of them (the streams of a
 * million nodes): sorted into the array's front in O(n log S) for S distinct values, where
 * sorting the whole array first cost O(n log n) (0.1 s at a million nodes, twice per plan).
 */
#ifndef GM_DISTINCT_H
#define GM_DISTINCT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Leaves v[0..S) the sorted distinct values of v[0..n) and returns S. */
static inline size_t gm_distinct_i64(int64_t *v, size_t n)
{
    size_t S = 0;
    for (size_t i = 0; i < n; i++) {
        const int64_t x = v[i];
        size_t lo = 0, hi = S;
        while (lo < hi) { /* the first value >= x */
            size_t mid = (lo + hi) / 2;
            if (v[mid] < x) lo = mid + 1;
            else hi = mid;
        }
        if (lo < S && v[lo] == x) continue;
        memmove(v + lo + 1, v + lo, (S - lo) * sizeof *v); /* S <= i: nothing unread is overwritten */
        v[lo] = x;
        S++;
    }
    return S;
}

#endif
