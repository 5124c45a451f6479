/*
 * ge_block_reuse.c — BlockMemAssigner's level-1 reuse (AssignMemoryWithReuse, reference §5.3), the
 * driver gm_ge_assign, and ResizeMemoryBlocks with the dynamic-batch overlay (§5.5).
 *
 * Level 1 walks the items in time order (lower, then index). Before an item at time t is placed,
 * every block whose holder's last access is before t (upper <= t) is released onto the reusable
 * list of its (stream, batch, block size), in release order (upper, then index). GE keeps one list
 * per stream and scans it for the first block of the same batch and exactly the same size, from the
 * front (first-release-first-reuse) or the back (first-release-last-reuse); the first such block in
 * either direction is the oldest or newest released block of that key, so one deque per key gives
 * the same answer in O(1). No block is handed out twice: a block goes back on a list only when its
 * holder is done.
 *
 * Items with no_pre_reuse or continuous always open a new block; holders with no_post_reuse or
 * continuous never release theirs (GE: life end kMaxLifeTime).
 *
 * Resize: bottom up, a block's final size is max(align(largest real size of its own items),
 * sum of its children's final sizes), aligned; children sit side by side from the parent's start in
 * the order they were nested; top-level blocks follow each other from offset 0. Batch-labelled
 * reusable top-level blocks are overlaid (DynamicBatchMemAssigner, single virtual block since the
 * "extend size memory" mode is off): the batch with the largest total keeps its blocks end to end in
 * one virtual block, every other batch's blocks are laid from that block's start, largest first.
 *
 * Choices where the reference leaves room:
 *  - Releases at one time step are ordered by item index (GE: the consumer's input order).
 *  - A block takes part in level 2 only if its creator could pre-reuse and no holder has
 *    no_post_reuse (GE: the block's reuse flag; such blocks have life end kMaxLifeTime).
 *  - Continuous blocks are sized align(real size), never by a range ceiling.
 *  - Top-level layout order: level-2 order (CompareLifeInterval) for the binary family, creation
 *    order for max-block; the virtual batch blocks (ordinary, then continuous) come last. The order
 *    changes offsets only, never the height.
 */
#include <stdlib.h>
#include <string.h>

#include "plan/ge_internal.h"
#include "util/alloc.h"

static int64_t align_up(int64_t v, int64_t a) { return a > 1 ? (v + a - 1) / a * a : v; }

typedef struct key4 {
    int64_t a, b, c;
    uint32_t i;
} key4;

static int cmp_key4(const void *x, const void *y)
{
    const key4 *p = x, *q = y;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    if (p->b != q->b) return p->b < q->b ? -1 : 1;
    if (p->c != q->c) return p->c < q->c ? -1 : 1;
    return (p->i > q->i) - (p->i < q->i);
}

/* Block size of each item: align(real), or align(ceiling of its range) with use_range. */
static gm_status block_sizes(ge_work *w, gm_ge_strategy s, int64_t *bs, gm_error *err)
{
    const gm_ge_item *it = w->items;
    size_t n = w->n;
    if (s == GM_GE_BINARY_BLOCK) {
        for (size_t i = 0; i < n; i++) bs[i] = align_up(it[i].size, w->align);
        return GM_OK;
    }
    if (s == GM_GE_MAX_BLOCK) { /* one range: the largest size */
        int64_t max = 0;
        for (size_t i = 0; i < n; i++)
            if (it[i].size > max) max = it[i].size;
        for (size_t i = 0; i < n; i++)
            bs[i] = align_up(it[i].continuous ? it[i].size : max, w->align);
        return GM_OK;
    }
    int64_t *sz = gm_malloc(n * sizeof *sz), *ceils = NULL;
    size_t nc = 0;
    if (!sz) return gm_error_set(err, GM_ERR_NOMEM, "ge %s: out of memory", gm_ge_strategy_name(s));
    for (size_t i = 0; i < n; i++) sz[i] = it[i].size;
    gm_status st = gm_ge_range_ceilings(sz, n, w->align, &ceils, &nc, err);
    gm_free(sz);
    if (st != GM_OK) return st;
    for (size_t i = 0; i < n; i++) {
        int64_t c = it[i].size; /* no ceiling >= size cannot happen: the max is one */
        if (!it[i].continuous) {
            size_t lo = 0, hi = nc;
            while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (ceils[mid] < it[i].size) lo = mid + 1;
                else hi = mid;
            }
            if (lo < nc) c = ceils[lo];
        }
        bs[i] = align_up(c, w->align);
    }
    gm_free(ceils);
    return GM_OK;
}

/* Level 1. Fills w->b / w->nb / w->perm. */
static gm_status level1(ge_work *w, const int64_t *bs, bool first_release, gm_error *err)
{
    const gm_ge_item *it = w->items;
    size_t n = w->n;
    gm_status st = GM_ERR_NOMEM;
    key4 *k = gm_malloc(n * sizeof *k);
    uint32_t *keyof = gm_malloc(n * sizeof *keyof), *order = gm_malloc(n * sizeof *order),
             *rel = gm_malloc(n * sizeof *rel), *dq = gm_malloc(n * sizeof *dq),
             *blockof = gm_malloc(n * sizeof *blockof);
    size_t *head = gm_malloc((n + 1) * sizeof *head), *tail = gm_malloc((n + 1) * sizeof *tail),
           *fill = NULL;
    if (!k || !keyof || !order || !rel || !dq || !blockof || !head || !tail) goto out;

    /* Reuse keys: (stream, batch, block size); deque k owns dq[head[k] .. tail[k]) inside a slot
     * as long as the number of items of key k (each push is one holder finishing). */
    for (size_t i = 0; i < n; i++) k[i] = (key4){it[i].stream, it[i].batch, bs[i], (uint32_t)i};
    qsort(k, n, sizeof *k, cmp_key4);
    size_t nk = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || k[i].a != k[i - 1].a || k[i].b != k[i - 1].b || k[i].c != k[i - 1].c) {
            head[nk] = tail[nk] = i;
            nk++;
        }
        keyof[k[i].i] = (uint32_t)(nk - 1);
    }
    for (size_t i = 0; i < n; i++) k[i] = (key4){it[i].lower, 0, 0, (uint32_t)i};
    qsort(k, n, sizeof *k, cmp_key4);
    for (size_t i = 0; i < n; i++) order[i] = k[i].i;
    for (size_t i = 0; i < n; i++) k[i] = (key4){it[i].upper, 0, 0, (uint32_t)i};
    qsort(k, n, sizeof *k, cmp_key4);
    for (size_t i = 0; i < n; i++) rel[i] = k[i].i;

    size_t ri = 0;
    w->nb = 0;
    for (size_t oi = 0; oi < n; oi++) {
        uint32_t i = order[oi];
        while (ri < n && it[rel[ri]].upper <= it[i].lower) {
            uint32_t r = rel[ri++];
            if (it[r].no_post_reuse || it[r].continuous) continue;
            uint32_t key = keyof[r];
            dq[tail[key]++] = blockof[r];
        }
        uint32_t key = keyof[i];
        int32_t got = -1;
        if (!it[i].no_pre_reuse && !it[i].continuous && head[key] < tail[key])
            got = (int32_t)(first_release ? dq[head[key]++] : dq[--tail[key]]);
        if (got < 0) {
            got = (int32_t)w->nb++;
            w->b[got] = (ge_block){
                .size = bs[i], .stream = it[i].stream, .batch = it[i].batch,
                .parent = -1, .first_child = -1, .last_child = -1, .next_sibling = -1,
                .continuous = it[i].continuous, .l2ok = !it[i].no_pre_reuse,
            };
        }
        ge_block *b = &w->b[got];
        if (it[i].no_post_reuse) b->l2ok = false;
        b->icount++;
        blockof[i] = (uint32_t)got;
    }

    /* Group the items per block, in time order. */
    fill = gm_malloc((w->nb + 1) * sizeof *fill);
    if (!fill) goto out;
    size_t pos = 0;
    for (size_t j = 0; j < w->nb; j++) {
        w->b[j].istart = fill[j] = pos;
        pos += w->b[j].icount;
    }
    for (size_t oi = 0; oi < n; oi++) w->perm[fill[blockof[order[oi]]]++] = order[oi];
    st = GM_OK;
out:
    if (st != GM_OK) gm_error_set(err, st, "ge level-1 reuse: out of memory");
    gm_free(k);
    gm_free(keyof);
    gm_free(order);
    gm_free(rel);
    gm_free(dq);
    gm_free(blockof);
    gm_free(head);
    gm_free(tail);
    gm_free(fill);
    return st;
}

/* Own-item facts of every block: span, largest real size, node count. */
static void block_facts(ge_work *w)
{
    for (size_t j = 0; j < w->nb; j++) gm_ge_block_facts(w, &w->b[j]);
}

/* Resize (bottom up, depth <= GE_MAX_DEPTH + 1 so recursion is bounded). */
static int64_t resize(ge_work *w, int32_t x)
{
    ge_block *b = &w->b[x];
    int64_t kids = 0;
    for (int32_t c = b->first_child; c >= 0; c = w->b[c].next_sibling) kids += resize(w, c);
    int64_t own = align_up(b->real, w->align);
    b->fsize = align_up(own > kids ? own : kids, w->align);
    return b->fsize;
}

static void place_kids(ge_work *w, int32_t x)
{
    int64_t off = w->b[x].off;
    for (int32_t c = w->b[x].first_child; c >= 0; c = w->b[c].next_sibling) {
        w->b[c].off = off;
        off += w->b[c].fsize;
        place_kids(w, c);
    }
}

/* qsort context for the layout sorts (C11 qsort has none; each call gets its own array). */
typedef struct lay {
    int64_t k1, k2;
    int32_t id;
} lay;

static int cmp_lay(const void *x, const void *y)
{
    const lay *p = x, *q = y;
    if (p->k1 != q->k1) return p->k1 < q->k1 ? -1 : 1;
    if (p->k2 != q->k2) return p->k2 < q->k2 ? -1 : 1;
    return (p->id > q->id) - (p->id < q->id);
}

/* Merge sort of top-level ids by CompareLifeInterval (needs the work, so not qsort). */
static void sort_life(const ge_work *w, int32_t *v, int32_t *tmp, size_t n, bool asc)
{
    if (n < 2) return;
    size_t h = n / 2;
    sort_life(w, v, tmp, h, asc);
    sort_life(w, v + h, tmp, n - h, asc);
    size_t i = 0, j = h, o = 0;
    while (i < h && j < n) tmp[o++] = gm_ge_compare_life(w, v[j], v[i], asc) < 0 ? v[j++] : v[i++];
    while (i < h) tmp[o++] = v[i++];
    while (j < n) tmp[o++] = v[j++];
    memcpy(v, tmp, n * sizeof *v);
}

static gm_status layout(ge_work *w, bool life_order, bool ascending, int64_t *height, gm_error *err)
{
    size_t nt = 0;
    for (size_t j = 0; j < w->nb; j++)
        if (w->b[j].parent < 0) nt++;
    int32_t *top = gm_malloc((nt + 1) * sizeof *top), *tmp = gm_malloc((nt + 1) * sizeof *tmp);
    lay *ov = gm_malloc((nt + 1) * sizeof *ov);
    if (!top || !tmp || !ov) {
        gm_free(top);
        gm_free(tmp);
        gm_free(ov);
        return gm_error_set(err, GM_ERR_NOMEM, "ge resize: out of memory");
    }
    nt = 0;
    for (size_t j = 0; j < w->nb; j++)
        if (w->b[j].parent < 0) {
            top[nt++] = (int32_t)j;
            resize(w, (int32_t)j);
        }
    if (life_order) sort_life(w, top, tmp, nt, ascending);

    int64_t run = 0;
    for (size_t t = 0; t < nt; t++) {
        ge_block *b = &w->b[top[t]];
        if (b->batch >= 0 && b->l2ok) continue; /* overlaid below */
        b->off = run;
        run += b->fsize;
    }
    /* Dynamic batch overlay, ordinary group then continuous group. */
    for (int g = 0; g < 2; g++) {
        size_t m = 0;
        for (size_t t = 0; t < nt; t++) {
            ge_block *b = &w->b[top[t]];
            if (b->batch >= 0 && b->l2ok && b->continuous == (g == 1))
                ov[m++] = (lay){b->batch, (int64_t)t, top[t]};
        }
        if (!m) continue;
        qsort(ov, m, sizeof *ov, cmp_lay); /* by label, then layout position */
        int64_t best = -1, best_label = -1;
        for (size_t i = 0; i < m;) {
            size_t e = i;
            int64_t tot = 0;
            while (e < m && ov[e].k1 == ov[i].k1) tot += w->b[ov[e++].id].fsize;
            if (tot > best) {
                best = tot;
                best_label = ov[i].k1;
            }
            i = e;
        }
        int64_t base = run;
        for (size_t i = 0; i < m;) {
            size_t e = i;
            while (e < m && ov[e].k1 == ov[i].k1) e++;
            if (ov[i].k1 != best_label) /* others: largest first */
                for (size_t q = i; q < e; q++) ov[q].k2 = -w->b[ov[q].id].fsize;
            qsort(ov + i, e - i, sizeof *ov, cmp_lay);
            int64_t off = base;
            for (size_t q = i; q < e; q++) {
                w->b[ov[q].id].off = off;
                off += w->b[ov[q].id].fsize;
            }
            i = e;
        }
        run += best;
    }
    for (size_t t = 0; t < nt; t++) place_kids(w, top[t]);
    for (size_t j = 0; j < w->nb; j++)
        for (size_t q = 0; q < w->b[j].icount; q++) w->items[w->perm[w->b[j].istart + q]].offset = w->b[j].off;
    *height = align_up(run, w->align);
    gm_free(top);
    gm_free(tmp);
    gm_free(ov);
    return GM_OK;
}

gm_status gm_ge_assign(gm_ge_item *items, size_t n, gm_ge_strategy s, int64_t align,
                       bool memory_priority, int64_t *height, gm_error *err)
{
    *height = 0;
    if ((unsigned)s >= GM_GE_STRATEGY_COUNT)
        return gm_error_set(err, GM_ERR_INPUT, "ge strategy: unknown strategy %d", (int)s);
    if (align < 1) return gm_error_set(err, GM_ERR_INPUT, "ge %s: alignment %lld must be >= 1",
                                       gm_ge_strategy_name(s), (long long)align);
    if (n >= INT32_MAX) return gm_error_set(err, GM_ERR_INPUT, "ge %s: too many items (%zu)",
                                            gm_ge_strategy_name(s), n);
    for (size_t i = 0; i < n; i++) {
        if (items[i].size <= 0 || items[i].lower >= items[i].upper ||
            items[i].size > INT64_MAX / 4)
            return gm_error_set(err, GM_ERR_INPUT,
                                "ge %s: item %zu: bad size %lld or lifetime [%lld, %lld)",
                                gm_ge_strategy_name(s), i, (long long)items[i].size,
                                (long long)items[i].lower, (long long)items[i].upper);
        items[i].offset = -1;
    }
    if (n == 0) return GM_OK;
    bool use_range = s != GM_GE_BINARY_BLOCK;
    bool ascending = s == GM_GE_BINARY_BLOCK || s == GM_GE_MAX_BLOCK ||
                     s == GM_GE_RANGE_BINARY_ASC_FRFR || s == GM_GE_RANGE_BINARY_ASC_FRLR;
    bool first_release = s == GM_GE_RANGE_BINARY_DESC_FRFR || s == GM_GE_RANGE_BINARY_ASC_FRFR;
    bool level2 = s != GM_GE_MAX_BLOCK; /* MaxBlock: NeedLevel2Reuse = false */
    if (s == GM_GE_MAX_BLOCK) memory_priority = false;
    (void)use_range;

    ge_work w = {.items = items, .n = n, .align = align};
    int64_t *bs = gm_malloc(n * sizeof *bs);
    w.b = gm_malloc(n * sizeof *w.b);
    w.perm = gm_malloc(n * sizeof *w.perm);
    gm_status st;
    if (!bs || !w.b || !w.perm) {
        st = gm_error_set(err, GM_ERR_NOMEM, "ge %s: out of memory", gm_ge_strategy_name(s));
        goto out;
    }
    if ((st = block_sizes(&w, s, bs, err)) != GM_OK) goto out;
    if ((st = level1(&w, bs, first_release, err)) != GM_OK) goto out;
    block_facts(&w);
    if (level2 && (st = gm_ge_life_reuse(&w, ascending, memory_priority, err)) != GM_OK) goto out;
    st = layout(&w, level2, ascending, height, err);
out:
    gm_free(bs);
    gm_free(w.b);
    gm_free(w.perm);
    return st;
}
