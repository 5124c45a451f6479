/* version_blocks.c — the local-recycle list and its two iterations (reference §6.5). */
#include "runtime/version_blocks.h"

#include "util/alloc.h"

int gm_version_blocks_push(gm_version_blocks *vb, gm_versioned *block)
{
    if (vb->n == vb->cap && gm_grow((void **)&vb->v, sizeof *vb->v, vb->n + 1, &vb->cap)) return -1;
    vb->v[vb->n++] = (gm_version_block){block->version, block, 0};
    return 0;
}

static void erase_at(gm_version_blocks *vb, size_t i) { vb->v[i] = vb->v[--vb->n]; }

/* Drops the entry at i when it is stale or sent everywhere; true when it did. */
static bool erase_if_done(gm_version_blocks *vb, size_t i, uint64_t all_bits)
{
    const gm_version_block *e = &vb->v[i];
    if (e->version != e->block->version || e->sent_flags == all_bits) {
        erase_at(vb, i);
        return true;
    }
    return false;
}

bool gm_version_blocks_find_next_for_all(gm_version_blocks *vb, size_t *it, uint64_t all_bits,
                                         gm_version_block *out)
{
    for (size_t i = *it; i < vb->n;) {
        if (erase_if_done(vb, i, all_bits)) continue;
        *out = vb->v[i++];
        *it = i;
        return true;
    }
    *it = vb->n;
    return false;
}

void gm_version_blocks_clear(gm_version_blocks *vb) { vb->n = 0; }

void gm_version_blocks_fini(gm_version_blocks *vb)
{
    gm_free(vb->v);
    *vb = (gm_version_blocks){0};
}
