/* radix.c — stable LSD radix sort by 64-bit keys (radix.h). */
#include "util/radix.h"

#include <string.h>

#include "util/alloc.h"

enum { DIGITS = 65536 };

/* One element: the sizes the callers use copied with a constant size (inlined, not a call). */
static inline void move(char *dst, const char *src, size_t size)
{
    switch (size) {
    case 16: memcpy(dst, src, 16); break;
    case 24: memcpy(dst, src, 24); break;
    default: memcpy(dst, src, size); break;
    }
}

bool gm_radix_sort(void *v, size_t n, size_t size, const gm_radix_key *keys, size_t nk)
{
    if (n < 2) return true;
    char *tmp = gm_malloc(n * size);
    /* the four digits of a key counted in one read of the elements, not one read each */
    uint32_t *count = gm_malloc(4 * DIGITS * sizeof *count);
    if (!tmp || !count) {
        gm_free(tmp);
        gm_free(count);
        return false;
    }
    char *from = v, *to = tmp;
    for (size_t k = 0; k < nk; k++) {
        memset(count, 0, 4 * DIGITS * sizeof *count);
        for (size_t i = 0; i < n; i++) {
            uint64_t key = keys[k](from + i * size);
            count[key & 0xffff]++;
            count[DIGITS + (key >> 16 & 0xffff)]++;
            count[2 * DIGITS + (key >> 32 & 0xffff)]++;
            count[3 * DIGITS + (key >> 48)]++;
        }
        const uint64_t first = keys[k](from); /* the counts do not depend on the order */
        for (int d = 0; d < 4; d++) {
            const int shift = 16 * d;
            uint32_t *c = count + (size_t)d * DIGITS;
            if (c[first >> shift & 0xffff] == n) continue; /* one digit for all */
            uint32_t sum = 0;
            for (size_t x = 0; x < DIGITS; x++) {
                uint32_t t = c[x];
                c[x] = sum;
                sum += t;
            }
            for (size_t i = 0; i < n; i++) {
                char *dst = to + (size_t)c[keys[k](from + i * size) >> shift & 0xffff]++ * size;
                move(dst, from + i * size, size);
            }
            char *t = from;
            from = to;
            to = t;
        }
    }
    if (from != (char *)v) memcpy(v, from, n * size);
    gm_free(tmp);
    gm_free(count);
    return true;
}
