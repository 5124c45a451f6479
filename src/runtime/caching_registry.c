/*
 * caching_registry.c — the process-wide list of L1 caching allocators (GE's
 * all_caching_mem_allocators_), one per (device, memory type, session). It exists so that the
 * memory can be handed back while the device runtime is still there (seed constraint 4) and so
 * that a finished session's allocators do not linger (constraint 5).
 */
#include "runtime/caching_internal.h"

#include "util/alloc.h"

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER; /* guards the list; never taken under an allocator's */
static gm_caching_allocator *g_list;
static bool g_finalized;

gm_status gm_caching_registry_get(int device, int mem_type, uint64_t session, const gm_mem_source *src,
                                  const gm_scalable_config *cfg, gm_sync_fn sync, void *sync_ctx,
                                  gm_caching_allocator **out, gm_error *err)
{
    *out = NULL;
    pthread_mutex_lock(&g_mu);
    gm_status st = GM_OK;
    if (g_finalized) {
        st = gm_error_set(err, GM_ERR_USAGE, "caching allocator registry used after finalize");
        goto done;
    }
    for (gm_caching_allocator *a = g_list; a; a = a->next)
        if (a->device == device && a->mem_type == mem_type && a->session == session) {
            *out = a;
            goto done;
        }
    gm_caching_allocator *a = gm_caching_create(src, cfg, sync, sync_ctx);
    if (!a) {
        st = gm_error_set(err, GM_ERR_NOMEM, "out of memory creating a caching allocator");
        goto done;
    }
    a->device = device;
    a->mem_type = mem_type;
    a->session = session;
    a->registered = true;
    a->next = g_list;
    g_list = a;
    *out = a;
done:
    pthread_mutex_unlock(&g_mu);
    return st;
}

void gm_caching_registry_recycle_others(gm_caching_allocator *self)
{
    pthread_mutex_lock(&g_mu);
    for (gm_caching_allocator *a = g_list; a; a = a->next)
        if (a != self && pthread_equal(a->creator, pthread_self())) gm_caching_sync_and_recycle(a);
    pthread_mutex_unlock(&g_mu);
}

size_t gm_caching_registry_remove_session(uint64_t session)
{
    size_t removed = 0;
    pthread_mutex_lock(&g_mu);
    for (gm_caching_allocator **p = &g_list; *p;) {
        gm_caching_allocator *a = *p;
        if (session != 0 && a->session == session) {
            *p = a->next;
            gm_caching_destroy(a);
            removed++;
        } else {
            p = &a->next;
        }
    }
    pthread_mutex_unlock(&g_mu);
    return removed;
}

void gm_caching_registry_finalize(void)
{
    pthread_mutex_lock(&g_mu);
    for (gm_caching_allocator *a = g_list; a; a = a->next) gm_caching_finalize_one(a);
    g_finalized = true;
    pthread_mutex_unlock(&g_mu);
}

void gm_caching_registry_reset(void)
{
    pthread_mutex_lock(&g_mu);
    while (g_list) {
        gm_caching_allocator *a = g_list;
        g_list = a->next;
        gm_caching_destroy(a);
    }
    g_finalized = false;
    pthread_mutex_unlock(&g_mu);
}

size_t gm_caching_registry_count(void)
{
    pthread_mutex_lock(&g_mu);
    size_t n = 0;
    for (gm_caching_allocator *a = g_list; a; a = a->next) n++;
    pthread_mutex_unlock(&g_mu);
    return n;
}
