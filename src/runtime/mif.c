/* mif.c — sizing of the MIF bitmap; the operations are inline in mif.h (they are the fast path). */
#include "runtime/mif.h"

#include <string.h>

#include "util/alloc.h"

void gm_mif_init(gm_mif *m)
{
    m->words = m->inline_words;
    m->n = 0;
    m->cap = GM_MIF_INLINE;
}

int gm_mif_reinit_grow(gm_mif *m, uint32_t n)
{
    if (n > GM_MAX_STREAMS) return -1;
    if (n > m->cap) {
        uint64_t *w = gm_malloc(sizeof *w * n);
        if (!w) return -1;
        if (m->words != m->inline_words) gm_free(m->words);
        m->words = w;
        m->cap = n;
    }
    m->n = n;
    memset(m->words, 0, sizeof *m->words * n);
    return 0;
}

void gm_mif_fini(gm_mif *m)
{
    if (m->words != m->inline_words) gm_free(m->words);
    gm_mif_init(m);
}
