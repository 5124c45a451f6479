/* strmap.c — linear-probing string map with tombstones; grows at 1/2 load (live + deleted). */
#include "util/strmap.h"

#include <string.h>

#include "util/alloc.h"

static const char tomb_key[1];
#define GM_STRMAP_TOMB (tomb_key)

/* FNV-1a, 64-bit: short keys, good enough spread, deterministic across runs. */
static const uint64_t fnv_basis = 1469598103934665603ull, fnv_prime = 1099511628211ull;

static inline uint64_t fnv_byte(uint64_t h, unsigned char c) { return (h ^ c) * fnv_prime; }

uint64_t gm_hash_str(const char *s)
{
    uint64_t h = fnv_basis;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) h = fnv_byte(h, *p);
    return h;
}

void gm_strmap_prefetch(const gm_strmap *m, const char *key, size_t len)
{
    if (!m->cap) return;
    uint64_t h = fnv_basis; /* gm_hash_str of key[0, len) */
    for (size_t i = 0; i < len; i++) h = fnv_byte(h, (unsigned char)key[i]);
    size_t i = h & (m->cap - 1);
    __builtin_prefetch(&m->slots[i]);
    __builtin_prefetch(&m->hashes[i]);
}

static size_t find_slot(const gm_strmap *m, const char *key, uint64_t h)
{
    size_t mask = m->cap - 1;
    uint32_t h32 = (uint32_t)h;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        const gm_strmap_entry *e = &m->slots[i];
        if (!e->key) return i;
        if (m->hashes[i] == h32 && e->key != GM_STRMAP_TOMB && strcmp(e->key, key) == 0) return i;
    }
}

void *gm_strmap_get(const gm_strmap *m, const char *key)
{
    if (!m->cap) return NULL;
    const gm_strmap_entry *e = &m->slots[find_slot(m, key, gm_hash_str(key))];
    return e->key ? e->value : NULL;
}

static int rehash(gm_strmap *m, size_t ncap)
{
    gm_strmap_entry *old = m->slots;
    uint32_t *oldh = m->hashes;
    size_t ocap = m->cap;
    gm_strmap_entry *ns = gm_calloc(ncap, sizeof *ns);
    uint32_t *nh = gm_malloc(ncap * sizeof *nh);
    if (!ns || !nh) {
        gm_free(ns);
        gm_free(nh);
        return -1;
    }
    m->slots = ns;
    m->hashes = nh;
    m->cap = ncap;
    m->used = m->count;
    for (size_t i = 0; i < ocap; i++) {
        if (!old[i].key || old[i].key == GM_STRMAP_TOMB) continue;
        /* The stored 32 bits place it: the mask never exceeds them below 2^32 slots. */
        uint64_t h = ncap <= ((uint64_t)1 << 32) ? oldh[i] : gm_hash_str(old[i].key);
        size_t j = find_slot(m, old[i].key, h);
        ns[j] = old[i];
        nh[j] = oldh[i];
    }
    gm_free(old);
    gm_free(oldh);
    return 0;
}

int gm_strmap_reserve(gm_strmap *m, size_t n)
{
    size_t ncap = m->cap ? m->cap : 16;
    while (n * 2 > ncap) ncap *= 2;
    return ncap == m->cap ? 0 : rehash(m, ncap);
}

int gm_strmap_put(gm_strmap *m, const char *key, void *value)
{
    if ((m->used + 1) * 2 > m->cap) {
        size_t ncap = m->cap ? m->cap : 16;
        while ((m->count + 1) * 2 > ncap) ncap *= 2;
        if (ncap == m->cap) ncap *= 2; /* many tombstones: same size would not do, grow */
        if (rehash(m, ncap)) return -1;
    }
    uint64_t h = gm_hash_str(key);
    size_t i = find_slot(m, key, h);
    gm_strmap_entry *e = &m->slots[i];
    if (!e->key) {
        m->count++;
        m->used++;
    }
    e->key = key;
    e->value = value;
    m->hashes[i] = (uint32_t)h;
    return 0;
}

void *gm_strmap_del(gm_strmap *m, const char *key)
{
    if (!m->cap) return NULL;
    gm_strmap_entry *e = &m->slots[find_slot(m, key, gm_hash_str(key))];
    if (!e->key) return NULL;
    void *v = e->value;
    e->key = GM_STRMAP_TOMB;
    e->value = NULL;
    m->count--;
    return v;
}

void gm_strmap_free(gm_strmap *m)
{
    gm_free(m->slots);
    gm_free(m->hashes);
    memset(m, 0, sizeof *m);
}
