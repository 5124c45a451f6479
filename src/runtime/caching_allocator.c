/* caching_allocator.c — the L1 caching allocator and its failure ladder (caching_allocator.h). */
#include "runtime/caching_internal.h"

#include "graphmem/log.h"
#include "util/alloc.h"

gm_caching_allocator *gm_caching_create(const gm_mem_source *src, const gm_scalable_config *cfg, gm_sync_fn sync,
                                        void *sync_ctx)
{
    gm_caching_allocator *a = gm_calloc(1, sizeof *a);
    if (!a) return NULL;
    gm_scalable_config c = *cfg;
    c.check_thread = false; /* serialized by the mutex instead */
    if (!(a->pool = gm_scalable_create(src, &c))) {
        gm_free(a);
        return NULL;
    }
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&a->mu, &attr);
    pthread_mutexattr_destroy(&attr);
    a->src = *src;
    a->sync = sync;
    a->sync_ctx = sync_ctx;
    a->creator = pthread_self();
    return a;
}

void gm_caching_finalize_one(gm_caching_allocator *a)
{
    pthread_mutex_lock(&a->mu);
    if (!a->finalized) {
        gm_scalable_destroy(a->pool); /* returns occupied chunks too */
        a->pool = NULL;
        gm_ptr_map_fini(&a->spans);
        a->finalized = true;
    }
    pthread_mutex_unlock(&a->mu);
}

void gm_caching_destroy(gm_caching_allocator *a)
{
    if (!a) return;
    gm_caching_finalize_one(a);
    pthread_mutex_destroy(&a->mu);
    gm_free(a);
}

static gm_status finalized_error(gm_error *err)
{
    return gm_error_set(err, GM_ERR_USAGE, "caching allocator used after gm_caching_registry_finalize");
}

void gm_caching_sync_and_recycle(gm_caching_allocator *a)
{
    pthread_mutex_lock(&a->mu);
    if (!a->finalized) {
        if (a->sync) a->sync(a->sync_ctx, -1);
        a->st.syncs++;
        size_t got = gm_scalable_recycle(a->pool);
        a->st.recycles++;
        a->st.recycled_bytes += got;
    }
    pthread_mutex_unlock(&a->mu);
}

static gm_span *try_alloc_as(gm_caching_allocator *a, size_t size, gm_span *(*alloc)(gm_scalable_allocator *, size_t))
{
    gm_span *s = alloc(a->pool, size);
    if (s && gm_ptr_map_put(&a->spans, s->addr, s)) {
        gm_scalable_free(a->pool, s);
        return NULL;
    }
    return s;
}

static gm_span *try_alloc(gm_caching_allocator *a, size_t size) { return try_alloc_as(a, size, gm_scalable_alloc); }

/* GE's AllocateWithTryRecycle: synchronize first, then free the idle memory, then retry. */
static gm_span *alloc_with_ladder(gm_caching_allocator *a, size_t size)
{
    gm_span *s = try_alloc(a, size);
    if (s) return s;
    gm_log(GM_LOG_INFO, "caching allocator: malloc of %zu bytes failed; synchronize, recycle, retry", size);
    gm_caching_sync_and_recycle(a);
    if ((s = try_alloc(a, size))) return s;
    /* Others on this thread may sit on idle memory of the same device. Our lock is let go
     * meanwhile, so that the registry's lock is never taken under an allocator's. */
    pthread_mutex_unlock(&a->mu);
    if (a->registered) gm_caching_registry_recycle_others(a);
    pthread_mutex_lock(&a->mu);
    return a->finalized ? NULL : try_alloc(a, size);
}

gm_status gm_caching_malloc(gm_caching_allocator *a, size_t size, void **ptr, gm_error *err)
{
    *ptr = NULL;
    pthread_mutex_lock(&a->mu);
    if (a->finalized) {
        pthread_mutex_unlock(&a->mu);
        return finalized_error(err);
    }
    gm_span *s = alloc_with_ladder(a, size);
    if (s) {
        a->st.mallocs++;
        *ptr = gm_span_addr(s);
    } else {
        a->st.failures++;
    }
    bool fin = a->finalized;
    pthread_mutex_unlock(&a->mu);
    if (s) return GM_OK;
    if (fin) return finalized_error(err);
    return gm_error_set(err, GM_ERR_NOMEM, "caching allocator: out of memory for %zu bytes", size);
}

gm_status gm_caching_malloc_within(gm_caching_allocator *a, size_t size, void **ptr)
{
    *ptr = NULL;
    pthread_mutex_lock(&a->mu);
    gm_span *s = a->finalized ? NULL : try_alloc_as(a, size, gm_scalable_alloc_within);
    if (s) {
        a->st.mallocs++;
        *ptr = gm_span_addr(s);
    }
    pthread_mutex_unlock(&a->mu);
    return s ? GM_OK : GM_ERR_NOMEM;
}

gm_status gm_caching_free(gm_caching_allocator *a, void *ptr, gm_error *err)
{
    pthread_mutex_lock(&a->mu);
    gm_status st = GM_OK;
    if (a->finalized) {
        st = finalized_error(err);
    } else {
        gm_span *s = gm_ptr_map_del(&a->spans, (uintptr_t)ptr);
        if (!s) {
            st = gm_error_set(err, GM_ERR_USAGE, "caching allocator: free of %p, which it did not hand out", ptr);
        } else {
            gm_scalable_free(a->pool, s);
            a->st.frees++;
        }
    }
    pthread_mutex_unlock(&a->mu);
    return st;
}

/* The part as pages of s: 0, or -1 when it is not whole pages strictly inside s. */
static int part_pages(gm_caching_allocator *a, const gm_span *s, uintptr_t addr, size_t bytes, size_t *off, size_t *n)
{
    const size_t page = gm_scalable_page_size(a->pool), size = gm_scalable_span_size(a->pool, s);
    if (addr < s->addr || (addr - s->addr) % page || !bytes || bytes % page || bytes >= size ||
        addr - s->addr > size - bytes)
        return -1;
    *off = (addr - s->addr) / page;
    *n = bytes / page;
    return 0;
}

gm_status gm_caching_free_part(gm_caching_allocator *a, void *base, void *addr, size_t bytes, gm_error *err)
{
    pthread_mutex_lock(&a->mu);
    gm_status st = GM_OK;
    gm_span *s = a->finalized ? NULL : gm_ptr_map_get(&a->spans, (uintptr_t)base);
    gm_span *spare[2] = {NULL, NULL};
    size_t off = 0, n = 0;
    if (a->finalized) {
        st = finalized_error(err);
    } else if (!s || part_pages(a, s, (uintptr_t)addr, bytes, &off, &n)) {
        st = gm_error_set(err, GM_ERR_USAGE, "caching allocator: free of %p + %zu, not whole pages inside a block it handed out at %p",
                          addr, bytes, base);
    } else if (!(spare[0] = gm_scalable_span_struct(a->pool)) || !(spare[1] = gm_scalable_span_struct(a->pool)) ||
               (off + n < s->pages && gm_ptr_map_put(&a->spans, (uintptr_t)addr + bytes, spare[0]))) {
        /* the map holds the part above before anything changes: nothing can fail after */
        st = gm_error_set(err, GM_ERR_NOMEM, "caching allocator: out of memory freeing part of %p", base);
        gm_free(spare[0]);
        gm_free(spare[1]);
    } else {
        if (!off) gm_ptr_map_del(&a->spans, (uintptr_t)base);
        gm_scalable_free_part(a->pool, s, off, n, spare);
        a->st.frees++;
    }
    pthread_mutex_unlock(&a->mu);
    return st;
}

size_t gm_caching_recycle(gm_caching_allocator *a)
{
    pthread_mutex_lock(&a->mu);
    size_t got = a->finalized ? 0 : gm_scalable_recycle(a->pool);
    a->st.recycled_bytes += got;
    pthread_mutex_unlock(&a->mu);
    return got;
}

void gm_caching_get_stats(gm_caching_allocator *a, gm_caching_stats *out)
{
    pthread_mutex_lock(&a->mu);
    *out = a->st;
    out->pool = a->finalized ? (gm_scalable_stats){0} : *gm_scalable_get_stats(a->pool);
    pthread_mutex_unlock(&a->mu);
}

static int source_alloc(void *ctx, size_t bytes, void **ptr)
{
    return gm_caching_malloc(ctx, bytes, ptr, NULL) == GM_OK ? 0 : -1;
}

static int source_alloc_within(void *ctx, size_t bytes, void **ptr)
{
    return gm_caching_malloc_within(ctx, bytes, ptr) == GM_OK ? 0 : -1;
}

static void source_free(void *ctx, void *ptr)
{
    gm_error err;
    if (gm_caching_free(ctx, ptr, &err) != GM_OK) gm_log(GM_LOG_ERROR, "%s", err.message);
}

static int source_free_part(void *ctx, void *base, void *addr, size_t bytes)
{
    return gm_caching_free_part(ctx, base, addr, bytes, NULL) == GM_OK ? 0 : -1;
}

static size_t source_trim(void *ctx) { return gm_caching_recycle(ctx); }

gm_mem_source gm_caching_as_source(gm_caching_allocator *a)
{
    return (gm_mem_source){.ctx = a, .alloc = source_alloc, .free = source_free, .alloc_within = source_alloc_within,
                           .free_part = source_free_part, .trim = source_trim};
}
