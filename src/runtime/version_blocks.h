/*
 * version_blocks.h — GE's VersionBlocks (reference §6.5): the list of blocks a stream has
 * released locally ("local recycle") whose news must reach the other streams through events.
 *
 * An entry remembers the block's version when it was queued. A block's version changes when it
 * is recycled globally (birth or borrow recycle), so an entry whose version no longer matches is
 * stale: its news is out of date and it is dropped. An entry also records the streams it has
 * been sent to; once every other stream has it, it is dropped too.
 *
 * Any object whose first member is a gm_versioned can be queued (the multi-stream mem block is).
 * Erasure swaps the last entry in, so iteration order is not insertion order; each entry is still
 * visited exactly once per pass, which is all the protocol needs.
 */
#ifndef GM_VERSION_BLOCKS_H
#define GM_VERSION_BLOCKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct gm_versioned {
    int64_t version;
} gm_versioned;

/* GE's StreamedVersionBlock: {{version, block}, sent_flags}. */
typedef struct gm_version_block {
    int64_t version;
    gm_versioned *block;
    uint64_t sent_flags;
} gm_version_block;

typedef struct gm_version_blocks {
    gm_version_block *v;
    size_t n, cap;
} gm_version_blocks;

/* ToBit(s) = 1 << s. */
static inline uint64_t gm_vb_to_bit(uint32_t s) { return (uint64_t)1 << s; }
/* ToAllBit(n, s): every one of n streams but the owner s. */
static inline uint64_t gm_vb_to_all_bit(uint32_t n, uint32_t s)
{
    uint64_t all = n >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << n) - 1;
    return all & ~gm_vb_to_bit(s);
}

/* Queues {block->version, block, sent 0}. 0, or -1 when out of memory. */
int gm_version_blocks_push(gm_version_blocks *vb, gm_versioned *block);

/* FindNext for destination stream dst, starting at *it: erases stale entries and entries already
 * sent to all (sent_flags == all_bits), skips entries already sent to dst, and stops at the first
 * other one, marking it sent to dst and copying it to *out. Returns false at the end. Inline: every
 * event send runs it over the sender's whole list. */
static inline bool gm_version_blocks_find_next(gm_version_blocks *vb, size_t *it, uint32_t dst, uint64_t all_bits,
                                               gm_version_block *out)
{
    const uint64_t bit = gm_vb_to_bit(dst);
    for (size_t i = *it; i < vb->n;) {
        gm_version_block *e = &vb->v[i];
        if (e->version != e->block->version || e->sent_flags == all_bits) {
            *e = vb->v[--vb->n]; /* erase: the last entry moves in and is looked at next */
            continue;
        }
        i++;
        if (e->sent_flags & bit) continue;
        e->sent_flags |= bit;
        *out = *e;
        *it = i;
        return true;
    }
    *it = vb->n;
    return false;
}
/* FindNextForAll: as FindNext without the per-destination skip and mark (end of execution). */
bool gm_version_blocks_find_next_for_all(gm_version_blocks *vb, size_t *it, uint64_t all_bits,
                                         gm_version_block *out);

void gm_version_blocks_clear(gm_version_blocks *vb);
void gm_version_blocks_fini(gm_version_blocks *vb);

#endif
