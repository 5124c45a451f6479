/* borrow_allocator.c — the cross-stream lending pool (borrow_allocator.h). */
#include "runtime/borrow_allocator.h"

#include <string.h>

#include "util/alloc.h"

/* Index of the first bucket with size >= `size` (nbuckets when none). */
static size_t lower_bound(const gm_borrow_allocator *ba, size_t size)
{
    size_t lo = 0, hi = ba->nbuckets;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ba->buckets[mid].size < size) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static gm_borrow_bucket *bucket_for_insert(gm_borrow_allocator *ba, size_t size)
{
    size_t i = lower_bound(ba, size);
    if (i < ba->nbuckets && ba->buckets[i].size == size) return &ba->buckets[i];
    if (gm_grow((void **)&ba->buckets, sizeof *ba->buckets, ba->nbuckets + 1, &ba->cap)) return NULL;
    memmove(&ba->buckets[i + 1], &ba->buckets[i], (ba->nbuckets - i) * sizeof *ba->buckets);
    ba->buckets[i] = (gm_borrow_bucket){size, NULL};
    ba->nbuckets++;
    return &ba->buckets[i];
}

/* Unlinks b from its size bucket; erases the bucket by ITS key when it empties. */
static void bucket_remove(gm_borrow_allocator *ba, gm_ms_block *b)
{
    if (!b->in_bucket) return;
    size_t i = lower_bound(ba, b->size);
    gm_borrow_bucket *bk = &ba->buckets[i];
    if (b->bs_prev) b->bs_prev->bs_next = b->bs_next;
    else bk->head = b->bs_next;
    if (b->bs_next) b->bs_next->bs_prev = b->bs_prev;
    b->bs_prev = b->bs_next = NULL;
    b->in_bucket = false;
    if (!bk->head) {
        memmove(bk, bk + 1, (ba->nbuckets - i - 1) * sizeof *bk);
        ba->nbuckets--;
    }
}

static void stream_remove(gm_borrow_allocator *ba, gm_ms_block *b)
{
    uint32_t s = b->birth_stream;
    if (b->bt_prev) b->bt_prev->bt_next = b->bt_next;
    else ba->by_stream[s] = b->bt_next;
    if (b->bt_next) b->bt_next->bt_prev = b->bt_prev;
    b->bt_prev = b->bt_next = NULL;
    ba->stream_count[s]--;
    ba->count--;
}

void gm_borrow_add(gm_borrow_allocator *ba, gm_ms_block *b)
{
    uint32_t s = b->birth_stream;
    b->bt_prev = NULL;
    b->bt_next = ba->by_stream[s];
    if (b->bt_next) b->bt_next->bt_prev = b;
    ba->by_stream[s] = b;
    ba->stream_count[s]++;
    ba->count++;
    gm_borrow_bucket *bk = bucket_for_insert(ba, b->size);
    b->bs_prev = NULL;
    b->in_bucket = bk != NULL;
    if (!bk) return;
    b->bs_next = bk->head;
    if (bk->head) bk->head->bs_prev = b;
    bk->head = b;
}

gm_ms_block *gm_borrow_alloc(gm_borrow_allocator *ba, size_t size)
{
    size_t i = lower_bound(ba, size);
    if (i == ba->nbuckets) return NULL;
    gm_ms_block *b = ba->buckets[i].head;
    bucket_remove(ba, b);
    stream_remove(ba, b);
    return b;
}

gm_ms_block *gm_borrow_alloc_fit(gm_borrow_allocator *ba, size_t size, size_t max_size)
{
    size_t i = lower_bound(ba, size);
    if (i == ba->nbuckets || ba->buckets[i].size > max_size) return NULL;
    gm_ms_block *b = ba->buckets[i].head;
    bucket_remove(ba, b);
    stream_remove(ba, b);
    return b;
}

gm_ms_block *gm_borrow_take_stream(gm_borrow_allocator *ba, uint32_t stream)
{
    gm_ms_block *list = ba->by_stream[stream];
    for (gm_ms_block *b = list; b; b = b->bt_next) bucket_remove(ba, b);
    ba->count -= ba->stream_count[stream];
    ba->stream_count[stream] = 0;
    ba->by_stream[stream] = NULL;
    return list;
}

size_t gm_borrow_bucket_count(const gm_borrow_allocator *ba) { return ba->nbuckets; }

void gm_borrow_fini(gm_borrow_allocator *ba)
{
    gm_free(ba->buckets);
    memset(ba, 0, sizeof *ba);
}
