/* l2_mem_pool.c — a stream's own pool over L1 (l2_mem_pool.h). */
#include "runtime/l2_mem_pool.h"

#include "runtime/subpage.h"
#include "util/alloc.h"

struct gm_l2_mem_pool {
    int stream;
    gm_scalable_allocator *sa;
    gm_subpages small; /* blocks up to small_max bytes, carved out of this pool's pages */
    size_t small_max;
    gm_sync_fn sync;
    void *sync_ctx;
    size_t syncs;
    gm_l2_share_fn share; /* asked for another pool's idle chunk before fetching from L1 */
    void *share_ctx;
    bool cached_only;     /* a carved page is wanted from the cache only (gm_l2_pool_malloc_cached) */
};

static gm_span *whole_malloc(gm_l2_mem_pool *p, size_t size);

static gm_span *page_get(void *ctx)
{
    gm_l2_mem_pool *p = ctx;
    const size_t page = gm_scalable_page_size(p->sa);
    return p->cached_only ? gm_scalable_alloc_cached(p->sa, page) : whole_malloc(p, page);
}

static void page_put(void *ctx, gm_span *page)
{
    gm_l2_mem_pool *p = ctx;
    gm_scalable_free(p->sa, page);
}

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
    const size_t page = gm_scalable_page_size(p->sa);
    p->small_max = cfg->small_block_max < page ? cfg->small_block_max : page - 1;
    gm_subpages_init(&p->small, &(gm_page_source){.ctx = p, .get = page_get, .put = page_put}, page);
    return p;
}

void gm_l2_pool_destroy(gm_l2_mem_pool *p)
{
    if (!p) return;
    gm_subpages_fini(&p->small);
    gm_scalable_destroy(p->sa);
    gm_free(p);
}

size_t gm_l2_pool_recycle(gm_l2_mem_pool *p)
{
    gm_subpages_trim(&p->small);
    if (gm_scalable_get_stats(p->sa)->idle == 0) return 0;
    if (p->sync) p->sync(p->sync_ctx, p->stream);
    p->syncs++;
    return gm_scalable_recycle(p->sa) + gm_scalable_release_parts(p->sa);
}

/* Cache, then another stream's idle chunk (when a sharing hook is set), then L1, then the
 * synchronize + recycle + retry of GE's L2MemPool. */
static gm_span *whole_malloc(gm_l2_mem_pool *p, size_t size)
{
    gm_span *s = gm_scalable_alloc_cached(p->sa, size);
    if (s) return s;
    if (p->share && p->share(p->share_ctx, size) && (s = gm_scalable_alloc_cached(p->sa, size))) return s;
    if ((s = gm_scalable_alloc(p->sa, size))) return s;
    gm_l2_pool_recycle(p);
    return gm_scalable_alloc(p->sa, size);
}

gm_span *gm_l2_pool_malloc(gm_l2_mem_pool *p, size_t size)
{
    return size <= p->small_max ? gm_subpages_alloc(&p->small, size) : whole_malloc(p, size);
}

gm_span *gm_l2_pool_malloc_cached(gm_l2_mem_pool *p, size_t size)
{
    if (size > p->small_max) return gm_scalable_alloc_cached(p->sa, size);
    p->cached_only = true;
    gm_span *s = gm_subpages_alloc(&p->small, size);
    p->cached_only = false;
    return s;
}

void gm_l2_pool_free(gm_l2_mem_pool *p, gm_span *s)
{
    if (s->sub) gm_subpages_free(&p->small, s);
    else gm_scalable_free(p->sa, s);
}

void gm_l2_pool_set_l1(gm_l2_mem_pool *p, const gm_mem_source *l1)
{
    gm_l2_pool_recycle(p);
    gm_scalable_set_source(p->sa, l1);
}

size_t gm_l2_pool_span_size(const gm_l2_mem_pool *p, const gm_span *s)
{
    return s->sub ? gm_subpages_block_size(&p->small, s) : gm_scalable_span_size(p->sa, s);
}

size_t gm_l2_pool_block_bytes(const gm_l2_mem_pool *p, size_t size)
{
    if (size <= p->small_max) return gm_subpages_round(&p->small, size);
    const size_t page = gm_scalable_page_size(p->sa);
    return size <= SIZE_MAX - page ? (size + page - 1) / page * page : size;
}

void gm_l2_pool_set_sharing(gm_l2_mem_pool *p, gm_l2_share_fn share, void *ctx)
{
    p->share = share;
    p->share_ctx = ctx;
}

void gm_l2_pool_set_stamp(gm_l2_mem_pool *p, const uint64_t *stamp) { gm_scalable_set_stamp(p->sa, stamp); }

size_t gm_l2_pool_idle_fit(const gm_l2_mem_pool *p, size_t size, uint64_t stamp_below)
{
    return gm_scalable_idle_chunk_fit(p->sa, size, stamp_below);
}

bool gm_l2_pool_give_idle(gm_l2_mem_pool *p, size_t size, uint64_t stamp_below, gm_l2_mem_pool *to)
{
    gm_chunk *c = gm_scalable_take_idle_chunk(p->sa, size, stamp_below);
    if (!c) return false;
    if (gm_scalable_adopt(to->sa, c) == 0) return true;
    (void)gm_scalable_adopt(p->sa, c); /* back where it was: its layer exists there, so no failure */
    return false;
}

const gm_scalable_stats *gm_l2_pool_stats(const gm_l2_mem_pool *p) { return gm_scalable_get_stats(p->sa); }
size_t gm_l2_pool_syncs(const gm_l2_mem_pool *p) { return p->syncs; }
size_t gm_l2_pool_small_pages(const gm_l2_mem_pool *p) { return p->small.pages; }
