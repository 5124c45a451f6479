/*
 * mif.h — GE's MIF ("Multi-stream Independent-maintained Flags"), reference §6.1.
 *
 * One 64-bit word per observing ("maintained") stream m; bit s of word m means "as far as
 * stream m knows, stream s still occupies the block". Each stream only learns of another's
 * release through an event, so the views differ until events carry them across
 * (MergeClearedFrom). Streams are 0..n-1 with n <= 64 (one bit each).
 *
 * As in GE there are no bounds checks in the operations: callers pass valid ids. The words live
 * inline for up to GM_MIF_INLINE streams (GE's small-vector of 8), on the heap beyond.
 */
#ifndef GM_MIF_H
#define GM_MIF_H

#include <stdbool.h>
#include <stdint.h>

#define GM_MIF_INLINE 8
#define GM_MAX_STREAMS 64

typedef struct gm_mif {
    uint64_t *words; /* points at inline_words or a heap array of cap words */
    uint32_t n, cap;
    uint64_t inline_words[GM_MIF_INLINE];
} gm_mif;

/* An empty MIF (n = 0); gm_mif_reinit sizes it. */
void gm_mif_init(gm_mif *m);
/* ReInit(n): n zero words. 0, or -1 when n > 64 or growing the heap array failed. */
int gm_mif_reinit_grow(gm_mif *m, uint32_t n);
static inline int gm_mif_reinit(gm_mif *m, uint32_t n)
{
    if (n > m->cap) return gm_mif_reinit_grow(m, n); /* rare: the heap array */
    m->n = n;
    if (m->words == m->inline_words) /* a fixed number of stores: it runs on every malloc */
        for (uint32_t i = 0; i < GM_MIF_INLINE; i++) m->inline_words[i] = 0;
    else
        for (uint32_t i = 0; i < n; i++) m->words[i] = 0;
    return 0;
}
void gm_mif_fini(gm_mif *m);

static inline uint64_t gm_mif_bit(uint32_t s) { return (uint64_t)1 << s; }
static inline uint64_t gm_mif_all_bits(uint32_t n) { return n >= 64 ? ~(uint64_t)0 : gm_mif_bit(n) - 1; }

/* Set(m, s): m believes s occupies the block. */
static inline void gm_mif_set(gm_mif *f, uint32_t m, uint32_t s) { f->words[m] |= gm_mif_bit(s); }
/* SetAll(s): every observer believes s occupies it (s just took a reference). */
static inline void gm_mif_set_all(gm_mif *f, uint32_t s)
{
    const uint64_t b = gm_mif_bit(s);
    for (uint32_t m = 0; m < f->n; m++) f->words[m] |= b;
}
/* SetMaintainedAll(m): m believes every stream occupies it. */
static inline void gm_mif_set_maintained_all(gm_mif *f, uint32_t m) { f->words[m] = gm_mif_all_bits(f->n); }
/* Clear(m, s): m learned that s released it. */
static inline void gm_mif_clear(gm_mif *f, uint32_t m, uint32_t s) { f->words[m] &= ~gm_mif_bit(s); }
/* MergeClearedFrom(src, dst): dst learns every release src knows of. */
static inline void gm_mif_merge_cleared_from(gm_mif *f, uint32_t src, uint32_t dst) { f->words[dst] &= f->words[src]; }
static inline bool gm_mif_is_set(const gm_mif *f, uint32_t m, uint32_t s) { return (f->words[m] >> s) & 1u; }
static inline bool gm_mif_is_any_set(const gm_mif *f, uint32_t m) { return f->words[m] != 0; }
static inline uint64_t gm_mif_word(const gm_mif *f, uint32_t m) { return f->words[m]; }

#endif
