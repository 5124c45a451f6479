/*
 * alloc.h — every allocation of the library goes through these, so that a test can make the
 * n-th one fail (gm_alloc_fail_after) and check that each failure gives a clean error.
 *
 * The names are macros that pass their call site (file and line) along: a test can then say
 * which allocation failed and prove that every allocation site in src/ has been made to fail
 * (tests/test_alloc_sites.c). The site costs nothing unless an observer is installed.
 */
#ifndef GM_ALLOC_H
#define GM_ALLOC_H

#include <stddef.h>

void *gm_malloc_at(size_t n, const char *file, int line);
void *gm_calloc_at(size_t count, size_t size, const char *file, int line);
void *gm_realloc_at(void *p, size_t n, const char *file, int line);
int gm_grow_at(void **p, size_t elem, size_t need, size_t *cap, const char *file, int line);
char *gm_strndup_at(const char *s, size_t n, const char *file, int line);
char *gm_strdup_at(const char *s, const char *file, int line);
char **gm_strv_dup_at(const char *const *v, size_t n, const char *file, int line);

#define gm_malloc(n) gm_malloc_at((n), __FILE__, __LINE__)
#define gm_calloc(count, size) gm_calloc_at((count), (size), __FILE__, __LINE__)
#define gm_realloc(p, n) gm_realloc_at((p), (n), __FILE__, __LINE__)
/* Grows *p (an array of *cap elements of elem bytes) to hold at least need; 0 on success. */
#define gm_grow(p, elem, need, cap) gm_grow_at((p), (elem), (need), (cap), __FILE__, __LINE__)
#define gm_strndup(s, n) gm_strndup_at((s), (n), __FILE__, __LINE__)
#define gm_strdup(s) gm_strdup_at((s), __FILE__, __LINE__)
/* Strings v[0..n) copied into one block (the n pointers, a NULL, then the strings), so that one
 * gm_free frees them all; NULL when out of memory. */
#define gm_strv_dup(v, n) gm_strv_dup_at((v), (n), __FILE__, __LINE__)
void gm_free(void *p);

/* Failure injection: after `n` more successful allocations, every allocation fails until
 * reset with a negative n. */
void gm_alloc_fail_after(long n);

/* The call site of the first allocation that failed by injection since the last
 * gm_alloc_fail_after; *file is NULL when none failed. */
void gm_alloc_first_failure(const char **file, int *line);

/* Called for every allocation attempt with its site (NULL: none, the default). Tests use it to
 * list the sites a workload reaches; it must be thread-safe when the workload is threaded. */
typedef void (*gm_alloc_observer)(const char *file, int line, void *ctx);
void gm_alloc_set_observer(gm_alloc_observer fn, void *ctx);

/* Routes cJSON's allocations (process-wide hooks) through the wrappers above, so that they can
 * fail by injection too. The library never changes cJSON's hooks by itself: a program that uses
 * cJSON on its own calls this only if it wants that (the tests do). */
void gm_alloc_route_cjson(void);

#endif
