/* ptr_map.c — address -> pointer hash map (see ptr_map.h). */
#include "runtime/ptr_map.h"

#include "util/alloc.h"

static size_t slot_of(uintptr_t key, size_t cap)
{
    uint64_t h = (uint64_t)key * 0x9E3779B97F4A7C15ull; /* Fibonacci hashing: page-aligned keys spread */
    return (size_t)(h >> 17) & (cap - 1);
}

void *gm_ptr_map_get(const gm_ptr_map *m, uintptr_t key)
{
    if (!m->cap) return NULL;
    for (size_t i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->keys[i] == key) return m->vals[i];
        if (!m->keys[i]) return NULL;
    }
}

static int rehash(gm_ptr_map *m, size_t cap)
{
    uintptr_t *keys = gm_calloc(cap, sizeof *keys);
    void **vals = gm_calloc(cap, sizeof *vals);
    if (!keys || !vals) {
        gm_free(keys);
        gm_free(vals);
        return -1;
    }
    for (size_t j = 0; j < m->cap; j++) {
        if (!m->keys[j]) continue;
        size_t i = slot_of(m->keys[j], cap);
        while (keys[i]) i = (i + 1) & (cap - 1);
        keys[i] = m->keys[j];
        vals[i] = m->vals[j];
    }
    gm_free(m->keys);
    gm_free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->cap = cap;
    return 0;
}

int gm_ptr_map_put(gm_ptr_map *m, uintptr_t key, void *val)
{
    if ((m->count + 1) * 2 > m->cap && rehash(m, m->cap ? m->cap * 2 : 64)) return -1;
    size_t i = slot_of(key, m->cap);
    while (m->keys[i] && m->keys[i] != key) i = (i + 1) & (m->cap - 1);
    if (!m->keys[i]) m->count++;
    m->keys[i] = key;
    m->vals[i] = val;
    return 0;
}

void *gm_ptr_map_del(gm_ptr_map *m, uintptr_t key)
{
    if (!m->cap) return NULL;
    size_t mask = m->cap - 1, i = slot_of(key, m->cap);
    while (m->keys[i] != key) {
        if (!m->keys[i]) return NULL;
        i = (i + 1) & mask;
    }
    void *val = m->vals[i];
    /* Backward shift: pull later entries of the probe run into the hole when their home slot
     * does not lie cyclically in (hole, j]. */
    for (size_t j = (i + 1) & mask; m->keys[j]; j = (j + 1) & mask) {
        size_t home = slot_of(m->keys[j], m->cap);
        if (((j - home) & mask) >= ((j - i) & mask)) {
            m->keys[i] = m->keys[j];
            m->vals[i] = m->vals[j];
            i = j;
        }
    }
    m->keys[i] = 0;
    m->vals[i] = NULL;
    m->count--;
    return val;
}

void gm_ptr_map_fini(gm_ptr_map *m)
{
    gm_free(m->keys);
    gm_free(m->vals);
    *m = (gm_ptr_map){0};
}
