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
    uint32_t *count = gm_malloc(DIGITS * sizeof *count);
    if (!tmp || !count) {
        gm_free(tmp);
        gm_free(count);
        return false;
    }
    char *from = v, *to = tmp;
    for (size_t k = 0; k < nk; k++) {
        for (int shift = 0; shift < 64; shift += 16) {
            memset(count, 0, DIGITS * sizeof *count);
            for (size_t i = 0; i < n; i++) count[keys[k](from + i * size) >> shift & 0xffff]++;
            if (count[keys[k](from) >> shift & 0xffff] == n) continue; /* one digit for all */
            uint32_t sum = 0;
            for (size_t d = 0; d < DIGITS; d++) {
                uint32_t c = count[d];
                count[d] = sum;
                sum += c;
            }
            for (size_t i = 0; i < n; i++) {
                char *dst = to + (size_t)count[keys[k](from + i * size) >> shift & 0xffff]++ * size;
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
