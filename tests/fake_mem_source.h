/*
 * fake_mem_source.h — a memory source for the allocator tests: a fake address range of `pages`
 * 64 KiB pages handed out first-fit (the addresses are never dereferenced), that can fail the
 * next k allocations or fail for good, and counts what it holds out.
 */
#ifndef GM_FAKE_MEM_SOURCE_H
#define GM_FAKE_MEM_SOURCE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/mem_source.h"

#define FAKE_PAGE ((size_t)65536)
#define FAKE_BASE ((uintptr_t)0x100000000ull)

typedef struct fake_src {
    size_t pages;
    uint32_t *run; /* at a run's first page: its length; 0 elsewhere */
    uint8_t *used;
    size_t live_bytes, allocs, frees, failures;
    long fail_next;    /* fail this many more allocations */
    int fail_always;
} fake_src;

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
            memset(f->used + start, 1, n);
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

#endif
