/*
 * strmap.h — an open-addressing hash map from string keys to pointers. Keys are borrowed
 * (the caller keeps them alive, typically the node's own name). Used for name lookups, so
 * that resolving a million-node graph stays linear.
 */
#ifndef GM_STRMAP_H
#define GM_STRMAP_H

#include <stddef.h>
#include <stdint.h>

/* 20 bytes a slot: the entry plus 32 bits of its hash in a parallel array (a probe compares
 * hashes before it touches a key), since a million-node model keeps millions of slots. */
typedef struct gm_strmap_entry {
    const char *key; /* NULL = empty; a private sentinel = deleted */
    void *value;
} gm_strmap_entry;

typedef struct gm_strmap {
    gm_strmap_entry *slots;
    uint32_t *hashes; /* parallel to slots */
    size_t cap;   /* power of two, or 0 */
    size_t count; /* live keys */
    size_t used;  /* live + tombstones */
} gm_strmap;

uint64_t gm_hash_str(const char *s);
/* Asks the memory for the slot where key[0, len) would be probed first (no effect on the map):
 * a reader that knows a name it will look up soon hides the miss behind its other work. */
void gm_strmap_prefetch(const gm_strmap *m, const char *key, size_t len);
void *gm_strmap_get(const gm_strmap *m, const char *key);
/* Inserts or replaces. Returns 0, or -1 when out of memory. */
int gm_strmap_put(gm_strmap *m, const char *key, void *value);
/* Makes room for n keys in all, so that filling it never rehashes. -1 when out of memory. */
int gm_strmap_reserve(gm_strmap *m, size_t n);
/* Removes key; returns its value or NULL. */
void *gm_strmap_del(gm_strmap *m, const char *key);
void gm_strmap_free(gm_strmap *m);

#endif
