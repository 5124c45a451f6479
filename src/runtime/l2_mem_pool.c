/* l2_mem_pool.c — a stream's own pool over L1 (l2_mem_pool.h). */
#include "runtime/l2_mem_pool.h"

#include "util/alloc.h"

struct gm_l2_mem_pool {
    int stream;
    gm_scalable_allocator *sa;
    gm_sync_fn sync;
    void *sync_ctx;
    size_t syncs;
};

gm_l2_mem_pool *gm_l2_pool_create(int stream, const gm_mem_source *l1, const gm_scalable_config *cfg, gm_sync_fn sync,
                                  void *sync_ctx)
{
    gm_l2_mem_pool *p = gm_calloc(1, sizeof *p);
    if (!p) return NULL;
    if (!(p->sa = gm_scalable_create(l1, cfg))) {
        gm_free(p);
        return NULL;
    }
    p->stream = stream;
    p->sync = sync;
    p->sync_ctx = sync_ctx;
    return p;
}

void gm_l2_pool_destroy(gm_l2_mem_pool *p)
{
    if (!p) return;
    gm_scalable_destroy(p->sa);
    gm_free(p);
}

size_t gm_l2_pool_recycle(gm_l2_mem_pool *p)
{
    if (gm_scalable_get_stats(p->sa)->idle == 0) return 0;
    if (p->sync) p->sync(p->sync_ctx, p->stream);
    p->syncs++;
    return gm_scalable_recycle(p->sa);
}

gm_span *gm_l2_pool_malloc(gm_l2_mem_pool *p, size_t size)
{
    gm_span *s = gm_scalable_alloc(p->sa, size);
    if (s) return s;
    gm_l2_pool_recycle(p);
    return gm_scalable_alloc(p->sa, size);
}

void gm_l2_pool_free(gm_l2_mem_pool *p, gm_span *s) { gm_scalable_free(p->sa, s); }

void gm_l2_pool_set_l1(gm_l2_mem_pool *p, const gm_mem_source *l1)
{
    gm_l2_pool_recycle(p);
    gm_scalable_set_source(p->sa, l1);
}

size_t gm_l2_pool_span_size(const gm_l2_mem_pool *p, const gm_span *s) { return gm_scalable_span_size(p->sa, s); }
const gm_scalable_stats *gm_l2_pool_stats(const gm_l2_mem_pool *p) { return gm_scalable_get_stats(p->sa); }
size_t gm_l2_pool_syncs(const gm_l2_mem_pool *p) { return p->syncs; }
