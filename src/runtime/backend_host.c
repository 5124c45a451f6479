/*
 * backend_host.c — the host backend's devices and memory: device memory is host memory
 * (256-byte aligned, like cudaMalloc's alignment guarantee), and virtual memory is an
 * mmap(PROT_NONE) reservation whose pages mprotect makes accessible (map) and madvise gives
 * back (unmap). Streams and events are in backend_host_stream.c.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE, madvise, _SC_PHYS_PAGES */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runtime/backend_host.h"

#define HOST_ALIGN 256

static int host_device_count(void) { return GM_HOST_MAX_DEVICES; }

static gm_status host_open(gm_device *dev, gm_error *err)
{
    dev->impl = NULL; /* all of a host device's state is the common layer's */
    return GM_OK;
}

static void host_close(gm_device *dev) {}

static size_t page_size(void)
{
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

static void host_props(gm_device *dev, gm_device_props *out)
{
    snprintf(out->name, sizeof out->name, "host:%d", dev->id);
    long pages = sysconf(_SC_PHYS_PAGES);
    out->total_memory = pages > 0 ? (uint64_t)pages * page_size() : 0;
}

static gm_status host_malloc(gm_device *dev, size_t size, void **out, gm_error *err)
{
    if (size > SIZE_MAX - HOST_ALIGN)
        return gm_error_set(err, GM_ERR_NOMEM, GM_DEV_FMT ": malloc of %zu bytes is too large", GM_DEV_ARGS(dev), size);
    /* aligned_alloc wants a size that is a multiple of the alignment. */
    void *p = aligned_alloc(HOST_ALIGN, (size + HOST_ALIGN - 1) / HOST_ALIGN * HOST_ALIGN);
    if (!p)
        return gm_error_set(err, GM_ERR_NOMEM, GM_DEV_FMT ": malloc of %zu bytes: out of host memory",
                            GM_DEV_ARGS(dev), size);
    *out = p;
    return GM_OK;
}

static void host_free(gm_device *dev, void *ptr, size_t size) { free(ptr); }

static size_t host_vm_granularity(gm_device *dev) { return page_size(); }

/* mmap aligns to the OS page only: a coarser alignment takes `align` more bytes and gives back
 * what lies outside the aligned range. */
static gm_status host_reserve(gm_device *dev, size_t size, size_t align, void **base, gm_error *err)
{
    const size_t extra = align > page_size() ? align : 0;
    char *p = size <= SIZE_MAX - extra ? mmap(NULL, size + extra, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
                                       : MAP_FAILED;
    if (p == MAP_FAILED)
        /* Unsupported rather than an error: the caller falls back to physical memory. */
        return gm_error_set(err, GM_ERR_UNSUPPORTED, GM_DEV_FMT ": reserving %zu bytes of address space: %s",
                            GM_DEV_ARGS(dev), size, strerror(errno));
    if (extra) {
        char *a = (char *)(((uintptr_t)p + align - 1) / align * align);
        if (a > p) munmap(p, (size_t)(a - p));
        if (a + size < p + size + extra) munmap(a + size, (size_t)(p + size + extra - (a + size)));
        p = a;
    }
    *base = p;
    return GM_OK;
}

static gm_status host_map(gm_device *dev, void *addr, size_t size, gm_error *err)
{
    if (mprotect(addr, size, PROT_READ | PROT_WRITE) != 0)
        return gm_error_set(err, errno == ENOMEM ? GM_ERR_NOMEM : GM_ERR_DEVICE,
                            GM_DEV_FMT ": mapping %zu bytes at %p: %s", GM_DEV_ARGS(dev), size, addr,
                            strerror(errno));
    return GM_OK;
}

static void host_unmap(gm_device *dev, void *addr, size_t size)
{
    /* Give the pages back, then make the range inaccessible again, as after a reserve. */
    madvise(addr, size, MADV_DONTNEED);
    mprotect(addr, size, PROT_NONE);
}

static void host_release(gm_device *dev, void *base, size_t size) { munmap(base, size); }

const gm_backend_ops gm_backend_host_ops = {
    .name = "host",
    .device_count = host_device_count,
    .open = host_open,
    .close = host_close,
    .props = host_props,
    .malloc = host_malloc,
    .free = host_free,
    .vm_granularity = host_vm_granularity,
    .reserve = host_reserve,
    .map = host_map,
    .unmap = host_unmap,
    .release = host_release,
    .stream_create = gm_host_stream_create,
    .stream_sync = gm_host_stream_sync,
    .stream_destroy = gm_host_stream_destroy,
    .copy = gm_host_copy,
    .host_fn = gm_host_host_fn,
    .fill = gm_host_fill,
    .verify = gm_host_verify,
    .event_create = gm_host_event_create,
    .event_destroy = gm_host_event_destroy,
    .event_record = gm_host_event_record,
    .stream_wait = gm_host_stream_wait,
    .event_query = gm_host_event_query,
    .event_sync = gm_host_event_sync,
};
