/* ms_mem_block.c — a block's multi-stream occupancy (ms_mem_block.h, reference §6.2). */
#include "runtime/ms_mem_block.h"

#include <string.h>

#include "graphmem/log.h"
#include "runtime/ms_internal.h"
#include "util/alloc.h"

gm_ms_block *gm_ms_block_new(uint32_t n)
{
    gm_ms_block *b = gm_calloc(1, gm_ms_block_bytes(n));
    if (!b) return NULL;
    gm_mif_init(&b->mif);
    b->counts = (uint32_t *)(b->acq_gen + gm_ms_block_slots(n));
    return b;
}

gm_status gm_ms_block_reinit(gm_ms_block *b, gm_ms_l2_allocator *birth, gm_span *mem, size_t size,
                             gm_ms_alloc_type type, gm_error *err)
{
    if (b->mem) return gm_error_set(err, GM_ERR_INTERNAL, "origin mem_block is not cleared, this may cased memory leaks");
    uint32_t n = birth->group->n;
    if (gm_mif_reinit(&b->mif, n)) return gm_error_set(err, GM_ERR_NOMEM, "out of memory for a block's MIF");
    gm_ms_block_clear_slots(b, n, true);
    b->mem = mem;
    b->size = size;
    b->birth = birth;
    b->birth_stream = birth->stream;
    b->type = type;
    gm_ms_block_new_access_stream(b, birth->stream, birth->stream);
    return GM_OK;
}

void gm_ms_block_new_access_stream(gm_ms_block *b, uint32_t src, uint32_t dst)
{
    (void)src; /* GE passes it for logging; the bookkeeping is dst's */
    b->counts[dst]++;
    b->acq_gen[dst] = ++b->gen;
    gm_mif_set_all(&b->mif, dst);
}

/* The allocator's own releases (a view emptied by news): never a planned block, never recorded. */
static void free_at(gm_ms_block *b, uint32_t stream) { gm_ms_l2_free_at(b->birth->group->alloc[stream], b); }

void gm_ms_block_free(gm_ms_block *b, uint32_t stream)
{
    gm_ms_plan *p = b->birth->group->plan; /* not GE's: a learned plan checks or records the call */
    if (p && !gm_ms_plan_ref(p, b, stream, GM_PLAN_FREE)) return;
    free_at(b, stream);
}

/* What src knows of dst can only lag what dst knows of itself, and the other way round: a
 * stream clears only its own bit, and only merges pass knowledge on. */
static bool views_consistent(const gm_ms_block *b, uint32_t src, uint32_t dst)
{
    if (gm_mif_is_set(&b->mif, dst, dst) && !gm_mif_is_set(&b->mif, src, dst)) return false;
    if (gm_mif_is_set(&b->mif, src, src) && !gm_mif_is_set(&b->mif, dst, src)) return false;
    return true;
}

void gm_ms_block_sync_local_recycle_status(gm_ms_block *b, uint32_t src, uint32_t dst)
{
    if (!views_consistent(b, src, dst)) {
        b->birth->group->st.sync_violations++;
        gm_log(GM_LOG_ERROR, "multi-stream block %p: stream %u and %u disagree on its occupancy", (void *)b, src, dst);
        return;
    }
    gm_mif_merge_cleared_from(&b->mif, src, dst);
    if (gm_ms_block_can_global_recycle(b, dst)) free_at(b, dst);
}

void gm_ms_block_sync_from_message(gm_ms_block *b, uint32_t src, uint32_t dst, uint64_t view, uint64_t gen)
{
    uint64_t released = ~view & gm_mif_all_bits(b->mif.n);
    for (uint64_t m = released; m; m &= m - 1) {
        uint32_t s = (uint32_t)__builtin_ctzll(m);
        if (b->acq_gen[s] > gen) released &= ~gm_mif_bit(s); /* took it again after the send */
    }
    (void)src;
    b->mif.words[dst] &= ~released;
    if (gm_ms_block_can_global_recycle(b, dst)) free_at(b, dst);
}

void gm_ms_block_sync_all_local_recycle_status(gm_ms_block *b, uint32_t dst)
{
    for (uint32_t m = 0; m < b->mif.n && gm_mif_is_any_set(&b->mif, dst); m++)
        if (m != dst) gm_mif_merge_cleared_from(&b->mif, m, dst);
    if (gm_ms_block_can_global_recycle(b, dst)) free_at(b, dst);
}
