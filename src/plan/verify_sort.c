/*
 * verify_sort.c — the verifier's sweep orders (verify_internal.h): qsort with a comparison on
 * short arrays, stable LSD radix passes on long ones. At a million symbols the three sorts of the
 * overlap sweep were 0.47 s of its 0.76 s, on the verifier's critical path.
 */
#include <stdlib.h>
#include <string.h>

#include "plan/verify_internal.h"
#include "util/alloc.h"

/* Arrays shorter than this are qsorted: the radix passes' counters would cost more. */
enum { RADIX_FROM = 65536 };

static int by_a_key_b(const void *p, const void *q)
{
    const gm_vfy_key *x = p, *y = q;
    if (x->a != y->a) return x->a < y->a ? -1 : 1;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->b > y->b) - (x->b < y->b);
}

static int by_addr(const void *p, const void *q)
{
    const gm_vfy_key *x = p, *y = q;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    if (x->a != y->a) return x->a - y->a;
    int r = (x->b > y->b) - (x->b < y->b);
    return x->a ? r : -r;
}

/* The unsigned 64-bit sort keys of a record, least significant first; int64 order maps to
 * uint64 order with the sign bit flipped. */
#define FLIP(v) ((uint64_t)(v) ^ ((uint64_t)1 << 63))

static uint64_t key_of(const gm_vfy_key *x) { return FLIP(x->key); }
static uint64_t a_of(const gm_vfy_key *x) { return FLIP((int64_t)x->a); }
static uint64_t b_of(const gm_vfy_key *x) { return FLIP((int64_t)x->b); }
/* by_addr's ties: ends (a = 0) before starts, starts by rank, ends by rank descending */
static uint64_t addr_tie(const gm_vfy_key *x)
{
    uint64_t rank = (uint64_t)(uint32_t)x->b;
    return (uint64_t)(x->a != 0) << 32 | (x->a ? rank : 0xffffffffu - rank);
}

typedef uint64_t (*key_fn)(const gm_vfy_key *);

/* Stable passes of 16 bits by each key in turn (the least significant first), skipping a digit
 * every record shares. False when out of memory (v untouched). */
static bool radix(gm_vfy_key *v, size_t n, const key_fn *keys, size_t nk)
{
    gm_vfy_key *tmp = gm_malloc(n * sizeof *tmp);
    uint32_t *count = gm_malloc(65536 * sizeof *count);
    if (!tmp || !count) {
        gm_free(tmp);
        gm_free(count);
        return false;
    }
    gm_vfy_key *from = v, *to = tmp;
    for (size_t k = 0; k < nk; k++) {
        for (int shift = 0; shift < 64; shift += 16) {
            memset(count, 0, 65536 * sizeof *count);
            for (size_t i = 0; i < n; i++) count[keys[k](&from[i]) >> shift & 0xffff]++;
            if (count[keys[k](&from[0]) >> shift & 0xffff] == n) continue;
            uint32_t sum = 0;
            for (size_t d = 0; d < 65536; d++) {
                uint32_t c = count[d];
                count[d] = sum;
                sum += c;
            }
            for (size_t i = 0; i < n; i++) to[count[keys[k](&from[i]) >> shift & 0xffff]++] = from[i];
            gm_vfy_key *t = from;
            from = to;
            to = t;
        }
    }
    if (from != v) memcpy(v, from, n * sizeof *v);
    gm_free(tmp);
    gm_free(count);
    return true;
}

void gm_vfy_sort_with(gm_vfy_key *v, size_t n, gm_vfy_order order, bool use_radix)
{
    static const key_fn a_key_b[] = {b_of, key_of, a_of}, addr[] = {addr_tie, key_of};
    const key_fn *keys = order == GM_VFY_BY_ADDR ? addr : a_key_b;
    size_t nk = order == GM_VFY_BY_ADDR ? 2 : 3;
    if (n > 1 && use_radix && radix(v, n, keys, nk)) return;
    qsort(v, n, sizeof *v, order == GM_VFY_BY_ADDR ? by_addr : by_a_key_b);
}

void gm_vfy_sort(gm_vfy_key *v, size_t n, gm_vfy_order order)
{
    gm_vfy_sort_with(v, n, order, n >= RADIX_FROM);
}
