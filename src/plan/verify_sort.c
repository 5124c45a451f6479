/*
 * verify_sort.c — the verifier's sweep orders (verify_internal.h): qsort with a comparison on
 * short arrays, stable LSD radix passes on long ones. At a million symbols the three sorts of the
 * overlap sweep were 0.47 s of its 0.76 s, on the verifier's critical path.
 */
#include <stdlib.h>

#include "plan/verify_internal.h"
#include "util/radix.h"

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

/* The unsigned 64-bit sort keys of a record (util/radix.h); int64 order maps to uint64 order
 * with the sign bit flipped. */
#define FLIP(v) ((uint64_t)(v) ^ ((uint64_t)1 << 63))

static uint64_t key_of(const void *e) { return FLIP(((const gm_vfy_key *)e)->key); }
static uint64_t a_of(const void *e) { return FLIP((int64_t)((const gm_vfy_key *)e)->a); }
static uint64_t b_of(const void *e) { return FLIP((int64_t)((const gm_vfy_key *)e)->b); }
/* by_addr's ties: ends (a = 0) before starts, starts by rank, ends by rank descending */
static uint64_t addr_tie(const void *e)
{
    const gm_vfy_key *x = e;
    uint64_t rank = (uint64_t)(uint32_t)x->b;
    return (uint64_t)(x->a != 0) << 32 | (x->a ? rank : 0xffffffffu - rank);
}

void gm_vfy_sort_with(gm_vfy_key *v, size_t n, gm_vfy_order order, bool use_radix)
{
    static const gm_radix_key a_key_b[] = {b_of, key_of, a_of}, addr[] = {addr_tie, key_of};
    const gm_radix_key *keys = order == GM_VFY_BY_ADDR ? addr : a_key_b;
    size_t nk = order == GM_VFY_BY_ADDR ? 2 : 3;
    if (use_radix && gm_radix_sort(v, n, sizeof *v, keys, nk)) return;
    qsort(v, n, sizeof *v, order == GM_VFY_BY_ADDR ? by_addr : by_a_key_b);
}

void gm_vfy_sort(gm_vfy_key *v, size_t n, gm_vfy_order order)
{
    gm_vfy_sort_with(v, n, order, n >= RADIX_FROM);
}
