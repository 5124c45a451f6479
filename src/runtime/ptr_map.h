/*
 * ptr_map.h — an open-addressing map from addresses to pointers (linear probing, backward-shift
 * deletion, so no tombstones build up under the alloc/free churn of an allocator). Used where a
 * memory-source free(ptr) has to find the span that ptr starts. Key 0 is reserved (empty slot):
 * no memory source hands out address 0.
 */
#ifndef GM_PTR_MAP_H
#define GM_PTR_MAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct gm_ptr_map {
    uintptr_t *keys;
    void **vals;
    size_t cap; /* power of two, or 0 */
    size_t count;
} gm_ptr_map;

void *gm_ptr_map_get(const gm_ptr_map *m, uintptr_t key);
/* Inserts or replaces; 0, or -1 when out of memory. */
int gm_ptr_map_put(gm_ptr_map *m, uintptr_t key, void *val);
/* Removes key; returns its value, or NULL when absent. */
void *gm_ptr_map_del(gm_ptr_map *m, uintptr_t key);
void gm_ptr_map_fini(gm_ptr_map *m);

#endif
