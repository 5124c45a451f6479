/* alloc.c — the library's allocator wrappers, with a counter for failure injection. */
#include "util/alloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Atomic: the planner's strategies and the runtime's streams allocate from several threads.
 * A test that injects failures runs one thread, so the count is then deterministic. */
static _Atomic long g_fail_after = -1; /* <0: never fail */
static _Atomic long g_count;

static int should_fail(void)
{
    g_count++;
    if (g_fail_after < 0) return 0;
    if (g_fail_after == 0) return 1;
    g_fail_after--;
    return 0;
}

long gm_alloc_fail_after(long n)
{
    long c = g_count;
    g_count = 0;
    g_fail_after = n;
    return c;
}

void *gm_malloc(size_t n) { return should_fail() ? NULL : malloc(n ? n : 1); }

void *gm_calloc(size_t count, size_t size)
{
    return should_fail() ? NULL : calloc(count ? count : 1, size ? size : 1);
}

void *gm_realloc(void *p, size_t n) { return should_fail() ? NULL : realloc(p, n ? n : 1); }

int gm_grow(void **p, size_t elem, size_t need, size_t *cap)
{
    if (need <= *cap) return 0;
    size_t nc = *cap ? *cap : 4;
    while (nc < need) {
        if (nc > SIZE_MAX / 2) return -1;
        nc *= 2;
    }
    if (nc > SIZE_MAX / elem) return -1;
    void *q = gm_realloc(*p, nc * elem);
    if (!q) return -1;
    *p = q;
    *cap = nc;
    return 0;
}

char *gm_strndup(const char *s, size_t n)
{
    char *d = gm_malloc(n + 1);
    if (!d) return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *gm_strdup(const char *s) { return s ? gm_strndup(s, strlen(s)) : NULL; }

void gm_free(void *p) { free(p); }
