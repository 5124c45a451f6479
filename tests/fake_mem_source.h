/*
 * fake_mem_source.h — a memory source for the allocator tests: a fake address range of `pages`
 * 64 KiB pages handed out first-fit (the addresses are never dereferenced), that can fail the
 * next k allocations or fail for good, and counts what it holds out.
 *
 * With fake_source_vm it also has virtual memory: reserve takes a run of pages out of what alloc
 * may hand out, map and unmap back and unback parts of it in whole granules (any part: not
 * necessarily what one map call backed), release gives the run back. Misuse aborts (a test
 * failure): mapping what is mapped or outside a reservation, unmapping what is not mapped,
 * releasing with something mapped.
 */
#ifndef GM_FAKE_MEM_SOURCE_H
#define GM_FAKE_MEM_SOURCE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/mem_source.h"
#include "runtime/scalable_allocator.h"

#define FAKE_PAGE ((size_t)65536)
#define FAKE_BASE ((uintptr_t)0x100000000ull)

typedef struct fake_src {
    size_t pages;
    uint32_t *run; /* at a run's first page: its length; 0 elsewhere */
    uint8_t *used; /* FAKE_FREE, FAKE_ALLOCATED, FAKE_RESERVED or FAKE_MAPPED */
    size_t maps, unmaps, reserves, releases, mapped_pages;
    size_t granule, vm_first; /* map granule in pages; the (last) reservation's first page */
    int fail_reserve;
    size_t live_bytes, allocs, frees, failures;
    long fail_next;    /* fail this many more allocations */
    int fail_always;
} fake_src;

enum { FAKE_FREE, FAKE_ALLOCATED, FAKE_RESERVED, FAKE_MAPPED };

static inline void fake_init(fake_src *f, size_t pages)
{
    memset(f, 0, sizeof *f);
    f->pages = pages;
    f->run = calloc(pages, sizeof *f->run);
    f->used = calloc(pages, 1);
}

static inline void fake_fini(fake_src *f)
{
    free(f->run);
    free(f->used);
}

static inline int fake_alloc(void *ctx, size_t bytes, void **ptr)
{
    fake_src *f = ctx;
    size_t n = (bytes + FAKE_PAGE - 1) / FAKE_PAGE;
    if (n == 0) n = 1;
    if (f->fail_always || f->fail_next > 0) {
        if (f->fail_next > 0) f->fail_next--;
        f->failures++;
        return -1;
    }
    for (size_t i = 0, len = 0; i < f->pages; i++) {
        len = f->used[i] ? 0 : len + 1;
        if (len == n) {
            size_t start = i + 1 - n;
            memset(f->used + start, FAKE_ALLOCATED, n);
            f->run[start] = (uint32_t)n;
            f->live_bytes += n * FAKE_PAGE;
            f->allocs++;
            *ptr = (void *)(FAKE_BASE + start * FAKE_PAGE);
            return 0;
        }
    }
    f->failures++;
    return -1;
}

static inline void fake_free(void *ctx, void *ptr)
{
    fake_src *f = ctx;
    size_t start = (size_t)(((uintptr_t)ptr - FAKE_BASE) / FAKE_PAGE);
    size_t n = f->run[start];
    if (!n) abort(); /* freeing what was not handed out: a test failure */
    memset(f->used + start, 0, n);
    f->run[start] = 0;
    f->live_bytes -= n * FAKE_PAGE;
    f->frees++;
}

static inline gm_mem_source fake_source(fake_src *f)
{
    return (gm_mem_source){.ctx = f, .alloc = fake_alloc, .free = fake_free};
}

/* ---- virtual memory ------------------------------------------------------------------------ */

static inline size_t fake_page_of(const void *p) { return (size_t)(((uintptr_t)p - FAKE_BASE) / FAKE_PAGE); }

static inline int fake_reserve(void *ctx, size_t bytes, void **base)
{
    fake_src *f = ctx;
    size_t n = (bytes + FAKE_PAGE - 1) / FAKE_PAGE;
    if (f->fail_reserve) return -1;
    for (size_t i = 0, len = 0; i < f->pages; i++) {
        len = f->used[i] ? 0 : len + 1;
        if (len == n) {
            size_t start = i + 1 - n;
            memset(f->used + start, FAKE_RESERVED, n);
            f->run[start] = (uint32_t)n;
            f->reserves++;
            f->vm_first = start;
            *base = (void *)(FAKE_BASE + start * FAKE_PAGE);
            return 0;
        }
    }
    return -1;
}

static inline int fake_map(void *ctx, void *addr, size_t bytes)
{
    fake_src *f = ctx;
    size_t first = fake_page_of(addr), n = bytes / FAKE_PAGE;
    if ((uintptr_t)addr % FAKE_PAGE || bytes % FAKE_PAGE || !n || first + n > f->pages) abort();
    if (first < f->vm_first || (first - f->vm_first) % f->granule || n % f->granule) abort();
    for (size_t p = first; p < first + n; p++)
        if (f->used[p] != FAKE_RESERVED) abort();
    if (f->fail_always || f->fail_next > 0) {
        if (f->fail_next > 0) f->fail_next--;
        f->failures++;
        return -1;
    }
    memset(f->used + first, FAKE_MAPPED, n);
    f->maps++;
    f->mapped_pages += n;
    f->live_bytes += bytes;
    return 0;
}

static inline void fake_unmap(void *ctx, void *addr, size_t bytes)
{
    fake_src *f = ctx;
    size_t first = fake_page_of(addr), n = bytes / FAKE_PAGE;
    if ((uintptr_t)addr % FAKE_PAGE || bytes % FAKE_PAGE || !n || first + n > f->pages) abort();
    if (first < f->vm_first || (first - f->vm_first) % f->granule || n % f->granule) abort();
    for (size_t p = first; p < first + n; p++)
        if (f->used[p] != FAKE_MAPPED) abort();
    memset(f->used + first, FAKE_RESERVED, n);
    f->unmaps++;
    f->mapped_pages -= n;
    f->live_bytes -= bytes;
}

static inline void fake_release(void *ctx, void *base, size_t bytes)
{
    fake_src *f = ctx;
    size_t first = fake_page_of(base), n = f->run[first];
    if (!n || n * FAKE_PAGE != (bytes + FAKE_PAGE - 1) / FAKE_PAGE * FAKE_PAGE) abort();
    for (size_t p = first; p < first + n; p++)
        if (f->used[p] != FAKE_RESERVED) abort();
    memset(f->used + first, FAKE_FREE, n);
    f->run[first] = 0;
    f->releases++;
}

/* GE's default config in expandable mode, its range `cap_pages` long. */
static inline gm_scalable_config fake_expandable_config(size_t cap_pages)
{
    gm_scalable_config c;
    gm_scalable_config_default(&c, 0);
    c.expandable = true;
    c.total_threshold = cap_pages * FAKE_PAGE;
    return c;
}

/* The source with virtual memory, in granules of `granule_pages` pages. */
static inline gm_mem_source fake_source_vm(fake_src *f, size_t granule_pages)
{
    gm_mem_source m = fake_source(f);
    f->granule = granule_pages;
    m.reserve = fake_reserve;
    m.map = fake_map;
    m.unmap = fake_unmap;
    m.release = fake_release;
    m.granularity = granule_pages * FAKE_PAGE;
    return m;
}

#endif
