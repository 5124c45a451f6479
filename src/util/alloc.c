/* alloc.c — the library's allocator wrappers, with a counter for failure injection. */
#include "util/alloc.h"

#include <cjson/cJSON.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Atomic: the planner's strategies and the runtime's streams allocate from several threads.
 * A test that injects failures runs one thread, so the count is then deterministic. */
static _Atomic long g_fail_after = -1; /* <0: never fail */
static _Atomic(const char *) g_failed_file;
static _Atomic int g_failed_line;
static _Atomic(gm_alloc_observer) g_observer;
static void *_Atomic g_observer_ctx;

/* Every allocation passes here: two plain loads when no test is watching. */
static int should_fail(const char *file, int line)
{
    gm_alloc_observer obs = g_observer;
    if (obs) obs(file, line, g_observer_ctx);
    if (g_fail_after < 0) return 0;
    if (g_fail_after > 0) {
        g_fail_after--;
        return 0;
    }
    const char *none = NULL;
    if (atomic_compare_exchange_strong(&g_failed_file, &none, file)) g_failed_line = line;
    return 1;
}

void gm_alloc_fail_after(long n)
{
    g_failed_file = NULL;
    g_failed_line = 0;
    g_fail_after = n;
}

void gm_alloc_first_failure(const char **file, int *line)
{
    *file = g_failed_file;
    *line = g_failed_line;
}

void gm_alloc_set_observer(gm_alloc_observer fn, void *ctx)
{
    g_observer_ctx = ctx;
    g_observer = fn;
}

void *gm_malloc_at(size_t n, const char *file, int line)
{
    return should_fail(file, line) ? NULL : malloc(n ? n : 1);
}

void *gm_calloc_at(size_t count, size_t size, const char *file, int line)
{
    return should_fail(file, line) ? NULL : calloc(count ? count : 1, size ? size : 1);
}

void *gm_realloc_at(void *p, size_t n, const char *file, int line)
{
    return should_fail(file, line) ? NULL : realloc(p, n ? n : 1);
}

int gm_grow_at(void **p, size_t elem, size_t need, size_t *cap, const char *file, int line)
{
    if (need <= *cap) return 0;
    size_t nc = *cap ? *cap : 4;
    while (nc < need) {
        if (nc > SIZE_MAX / 2) return -1;
        nc *= 2;
    }
    if (nc > SIZE_MAX / elem) return -1;
    void *q = gm_realloc_at(*p, nc * elem, file, line);
    if (!q) return -1;
    *p = q;
    *cap = nc;
    return 0;
}

char *gm_strndup_at(const char *s, size_t n, const char *file, int line)
{
    char *d = gm_malloc_at(n + 1, file, line);
    if (!d) return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *gm_strdup_at(const char *s, const char *file, int line)
{
    return s ? gm_strndup_at(s, strlen(s), file, line) : NULL;
}

char **gm_strv_dup_at(const char *const *v, size_t n, const char *file, int line)
{
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++) bytes += strlen(v[i]) + 1;
    char **out = gm_malloc_at((n + 1) * sizeof *out + bytes, file, line);
    if (!out) return NULL;
    char *s = (char *)(out + n + 1);
    for (size_t i = 0; i < n; i++) {
        size_t k = strlen(v[i]) + 1;
        memcpy(s, v[i], k);
        out[i] = s;
        s += k;
    }
    out[n] = NULL;
    return out;
}

void gm_free(void *p) { free(p); }

/* cJSON's hooks take plain functions: its allocations count as one site of their own. */
static void *cjson_malloc(size_t n) { return gm_malloc_at(n, "<cJSON>", 0); }

void gm_alloc_route_cjson(void)
{
    cJSON_Hooks h = {.malloc_fn = cjson_malloc, .free_fn = free};
    cJSON_InitHooks(&h);
}
