/* strmap.c — linear-probing string map with tombstones; grows at 1/2 load (live + deleted). */
#include "util/strmap.h"

#include <string.h>

#include "util/alloc.h"

static const char tomb_key[1];
#define GM_STRMAP_TOMB (tomb_key)

/* Eight bytes a step, then a full mix (splitmix64's finalizer): the map uses the low bits.
 * Byte-wise FNV-1a was one multiply per byte, a chain the core cannot overlap; a million-node
 * read hashes each name three to five times (prefetch, insert, the consumers' lookups), and
 * hashing was a tenth of the reader's thread. Nothing depends on the values beyond one run
 * (the maps are never listed in their slot order), so they may change between versions. */
static inline uint64_t mix(uint64_t h)
{
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebull;
    return h ^ (h >> 31);
}

static uint64_t hash_bytes(const char *key, size_t len)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ len;
    for (; len >= 8; key += 8, len -= 8) {
        uint64_t w;
        memcpy(&w, key, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    uint64_t w = 0;
    memcpy(&w, key, len);
    return mix(h ^ w);
}

uint64_t gm_hash_str(const char *s) { return hash_bytes(s, strlen(s)); }

void gm_strmap_prefetch(const gm_strmap *m, const char *key, size_t len)
{
    if (!m->cap) return;
    size_t i = hash_bytes(key, len) & (m->cap - 1);
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
