/*
 * alloc.h — every allocation of the library goes through these, so that a test can make the
 * n-th one fail (gm_alloc_fail_after) and check that each failure gives a clean error.
 */
#ifndef GM_ALLOC_H
#define GM_ALLOC_H

#include <stddef.h>

void *gm_malloc(size_t n);
void *gm_calloc(size_t count, size_t size);
void *gm_realloc(void *p, size_t n);
/* Grows *p (an array of *cap elements of elem bytes) to hold at least need; 0 on success. */
int gm_grow(void **p, size_t elem, size_t need, size_t *cap);
char *gm_strdup(const char *s);
char *gm_strndup(const char *s, size_t n);
void gm_free(void *p);

/* Failure injection: after `n` more successful allocations, every allocation fails until
 * reset with a negative n. Returns how many allocations have been made since the last call. */
long gm_alloc_fail_after(long n);

#endif
