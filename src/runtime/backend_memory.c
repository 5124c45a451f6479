/*
 * backend_memory.c — device memory bookkeeping common to every backend: which ranges are live
 * (so a bad pointer is an error, not a crash, and close can free what was left), counters,
 * injected failures and limits, and the checks of the optional virtual-memory calls.
 *
 * All of it is under the device's recursive mutex, held across the backend's own allocation
 * call so that counters, table and memory always agree.
 */
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "runtime/backend_internal.h"

/* Index of the last range whose base <= p, or -1. */
static ptrdiff_t range_floor(const gm_device *dev, uintptr_t p)
{
    size_t lo = 0, hi = dev->nranges;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (dev->ranges[mid].base <= p) lo = mid + 1;
        else hi = mid;
    }
    return (ptrdiff_t)lo - 1;
}

static bool range_insert(gm_device *dev, uintptr_t base, size_t size, bool mapped)
{
    if (dev->nranges == dev->cap_ranges) {
        size_t cap = dev->cap_ranges ? dev->cap_ranges * 2 : 16;
        gm_mem_range *r = gm_realloc(dev->ranges, cap * sizeof *r);
        if (!r) return false;
        dev->ranges = r;
        dev->cap_ranges = cap;
    }
    size_t at = (size_t)(range_floor(dev, base) + 1);
    memmove(dev->ranges + at + 1, dev->ranges + at, (dev->nranges - at) * sizeof *dev->ranges);
    dev->ranges[at] = (gm_mem_range){base, size, mapped};
    dev->nranges++;
    return true;
}

static void range_remove(gm_device *dev, size_t at)
{
    memmove(dev->ranges + at, dev->ranges + at + 1, (dev->nranges - at - 1) * sizeof *dev->ranges);
    dev->nranges--;
}

static bool valid_device(const gm_device *dev, const char *fn, gm_error *err)
{
    if (dev) return true;
    gm_error_set(err, GM_ERR_INPUT, "%s: device is NULL", fn);
    return false;
}

/* The admission ladder every allocation passes: injected failures, then the limit. Nothing is
 * logged: GM_ERR_NOMEM is an answer the caller's synchronize-recycle-retry ladder expects. */
static gm_status admit(gm_device *dev, size_t size, const char *what, gm_error *err)
{
    if (dev->fail_after == 0) {
        dev->counters.failed_allocs++;
        return gm_error_set(err, GM_ERR_NOMEM, GM_DEV_FMT ": %s of %zu bytes failed (injected failure)",
                            GM_DEV_ARGS(dev), what, size);
    }
    if (dev->mem_limit && (size > dev->mem_limit || dev->counters.bytes_in_use > dev->mem_limit - size)) {
        dev->counters.failed_allocs++;
        return gm_error_set(err, GM_ERR_NOMEM,
                            GM_DEV_FMT ": %s of %zu bytes failed: %llu of the %llu-byte limit in use",
                            GM_DEV_ARGS(dev), what, size,
                            (unsigned long long)dev->counters.bytes_in_use,
                            (unsigned long long)dev->mem_limit);
    }
    return GM_OK;
}

static void count_alloc(gm_device *dev, size_t size)
{
    if (dev->fail_after > 0) dev->fail_after--;
    dev->counters.allocs++;
    dev->counters.bytes_in_use += size;
    if (dev->counters.bytes_in_use > dev->counters.peak_bytes)
        dev->counters.peak_bytes = dev->counters.bytes_in_use;
    /* Right after an allocation is where the driver's count peaks too. */
    const uint64_t used = dev->ops->driver_used ? dev->ops->driver_used(dev) : 0;
    if (used > dev->driver_base && used - dev->driver_base > dev->counters.driver_peak_bytes)
        dev->counters.driver_peak_bytes = used - dev->driver_base;
}

static void count_free(gm_device *dev, size_t size)
{
    dev->counters.frees++;
    dev->counters.bytes_in_use -= size;
}

gm_status gm_device_malloc(gm_device *dev, size_t size, void **out, gm_error *err)
{
    if (!valid_device(dev, "gm_device_malloc", err)) return GM_ERR_INPUT;
    if (!out) return gm_error_set(err, GM_ERR_INPUT, "gm_device_malloc: out is NULL");
    *out = NULL;
    if (size == 0) return gm_error_set(err, GM_ERR_INPUT, "gm_device_malloc: size 0 on " GM_DEV_FMT, GM_DEV_ARGS(dev));
    pthread_mutex_lock(&dev->lock);
    gm_status st = admit(dev, size, "malloc", err);
    void *p = NULL;
    if (st == GM_OK) {
        st = dev->ops->malloc(dev, size, &p, err);
        if (st == GM_ERR_NOMEM) dev->counters.failed_allocs++; /* a real refusal */
    }
    if (st == GM_OK && !range_insert(dev, (uintptr_t)p, size, false)) {
        dev->ops->free(dev, p, size);
        st = gm_error_set(err, GM_ERR_NOMEM, GM_DEV_FMT ": out of host memory for the allocation table",
                          GM_DEV_ARGS(dev));
    }
    if (st == GM_OK) {
        count_alloc(dev, size);
        *out = p;
    }
    pthread_mutex_unlock(&dev->lock);
    return st;
}

gm_status gm_device_free(gm_device *dev, void *ptr, gm_error *err)
{
    if (!valid_device(dev, "gm_device_free", err)) return GM_ERR_INPUT;
    if (!ptr) return GM_OK;
    pthread_mutex_lock(&dev->lock);
    ptrdiff_t i = range_floor(dev, (uintptr_t)ptr);
    gm_status st = GM_OK;
    if (i < 0 || dev->ranges[i].base != (uintptr_t)ptr) {
        st = gm_error_set(err, GM_ERR_INPUT, "gm_device_free: %p is not an allocation of " GM_DEV_FMT,
                          ptr, GM_DEV_ARGS(dev));
    } else if (dev->ranges[i].mapped) {
        st = gm_error_set(err, GM_ERR_INPUT, "gm_device_free: %p on " GM_DEV_FMT
                          " is a mapped range; use gm_device_unmap", ptr, GM_DEV_ARGS(dev));
    } else {
        size_t size = dev->ranges[i].size;
        range_remove(dev, (size_t)i);
        dev->ops->free(dev, ptr, size);
        count_free(dev, size);
    }
    pthread_mutex_unlock(&dev->lock);
    return st;
}

bool gm_device_owns(gm_device *dev, const void *ptr, size_t size)
{
    if (!dev || !ptr) return false;
    uintptr_t p = (uintptr_t)ptr;
    pthread_mutex_lock(&dev->lock);
    ptrdiff_t i = range_floor(dev, p);
    bool ok = i >= 0 && p - dev->ranges[i].base <= dev->ranges[i].size;
    if (ok) {
        /* mapped ranges side by side are one piece of address space, as a device sees it */
        uintptr_t end = dev->ranges[i].base + dev->ranges[i].size;
        for (size_t k = (size_t)i + 1; dev->ranges[i].mapped && end - p < size && k < dev->nranges &&
                                       dev->ranges[k].mapped && dev->ranges[k].base == end; k++)
            end += dev->ranges[k].size;
        ok = size <= end - p;
    }
    pthread_mutex_unlock(&dev->lock);
    return ok;
}

/* ---- virtual memory ---------------------------------------------------------------------- */

/* The backend's granule, 0 without virtual memory. */
static size_t own_granularity(gm_device *dev)
{
    return dev->ops->reserve && !dev->vm_disabled ? dev->ops->vm_granularity(dev) : 0;
}

/* The granule maps take: the backend's, or a coarser one set (gm_device_set_vm_granularity). */
static size_t granularity(gm_device *dev)
{
    const size_t own = own_granularity(dev);
    return own && dev->vm_granule > own ? dev->vm_granule : own;
}

static ptrdiff_t find_reservation(const gm_device *dev, uintptr_t p, size_t size)
{
    for (size_t i = 0; i < dev->nresv; i++) {
        const gm_reservation *r = &dev->resv[i];
        if (p >= r->base && p - r->base <= r->size && size <= r->size - (p - r->base))
            return (ptrdiff_t)i;
    }
    return -1;
}

gm_status gm_device_reserve(gm_device *dev, size_t size, void **base, gm_error *err)
{
    if (!valid_device(dev, "gm_device_reserve", err)) return GM_ERR_INPUT;
    if (!base) return gm_error_set(err, GM_ERR_INPUT, "gm_device_reserve: base is NULL");
    *base = NULL;
    if (size == 0) return gm_error_set(err, GM_ERR_INPUT, "gm_device_reserve: size 0");
    pthread_mutex_lock(&dev->lock);
    size_t g = granularity(dev);
    gm_status st = GM_OK;
    if (!g) {
        /* Quiet by design: the caller falls back to physical allocation (GE's
         * "Maybe not support rtReserveMemAddress" path, with no ERROR log). */
        st = gm_error_set(err, GM_ERR_UNSUPPORTED, GM_DEV_FMT ": no virtual address reservation",
                          GM_DEV_ARGS(dev));
        goto out;
    }
    if (size > SIZE_MAX - g) {
        st = gm_error_set(err, GM_ERR_INPUT, "gm_device_reserve: size %zu too large", size);
        goto out;
    }
    size = (size + g - 1) / g * g;
    if (dev->nresv == dev->cap_resv) {
        size_t cap = dev->cap_resv ? dev->cap_resv * 2 : 4;
        gm_reservation *r = gm_realloc(dev->resv, cap * sizeof *r);
        if (!r) {
            st = gm_error_set(err, GM_ERR_NOMEM, "gm_device_reserve: out of host memory");
            goto out;
        }
        dev->resv = r;
        dev->cap_resv = cap;
    }
    void *b = NULL;
    st = dev->ops->reserve(dev, size, g, &b, err);
    if (st != GM_OK) goto out;
    dev->resv[dev->nresv++] = (gm_reservation){(uintptr_t)b, size, 0};
    dev->counters.reservations++;
    *base = b;
out:
    pthread_mutex_unlock(&dev->lock);
    return st;
}

gm_status gm_device_map(gm_device *dev, void *addr, size_t size, gm_error *err)
{
    if (!valid_device(dev, "gm_device_map", err)) return GM_ERR_INPUT;
    pthread_mutex_lock(&dev->lock);
    gm_status st = GM_OK;
    size_t g = granularity(dev);
    uintptr_t p = (uintptr_t)addr;
    ptrdiff_t r = g ? find_reservation(dev, p, size) : -1;
    ptrdiff_t i = range_floor(dev, p);
    if (!g) {
        st = gm_error_set(err, GM_ERR_UNSUPPORTED, GM_DEV_FMT ": no virtual memory", GM_DEV_ARGS(dev));
    } else if (!addr || size == 0 || p % g || size % g) {
        st = gm_error_set(err, GM_ERR_INPUT, "gm_device_map: %p + %zu on " GM_DEV_FMT
                          " is empty or not a multiple of the granularity %zu", addr, size, GM_DEV_ARGS(dev), g);
    } else if (r < 0) {
        st = gm_error_set(err, GM_ERR_INPUT, "gm_device_map: %p + %zu is not inside a reservation of " GM_DEV_FMT,
                          addr, size, GM_DEV_ARGS(dev));
    } else if ((i >= 0 && dev->ranges[i].base + dev->ranges[i].size > p) ||
               ((size_t)(i + 1) < dev->nranges && dev->ranges[i + 1].base < p + size)) {
        st = gm_error_set(err, GM_ERR_INPUT, "gm_device_map: %p + %zu on " GM_DEV_FMT " overlaps a mapped range",
                          addr, size, GM_DEV_ARGS(dev));
    } else if ((st = admit(dev, size, "map", err)) == GM_OK) {
        st = dev->ops->map(dev, addr, size, err);
        if (st == GM_ERR_NOMEM) dev->counters.failed_allocs++;
        if (st == GM_OK && !range_insert(dev, p, size, true)) {
            dev->ops->unmap(dev, addr, size);
            st = gm_error_set(err, GM_ERR_NOMEM, "gm_device_map: out of host memory");
        }
        if (st == GM_OK) {
            dev->resv[r].mapped++;
            count_alloc(dev, size);
        }
    }
    pthread_mutex_unlock(&dev->lock);
    return st;
}

gm_status gm_device_unmap(gm_device *dev, void *addr, size_t size, gm_error *err)
{
    if (!valid_device(dev, "gm_device_unmap", err)) return GM_ERR_INPUT;
    pthread_mutex_lock(&dev->lock);
    gm_status st = GM_OK;
    ptrdiff_t i = addr ? range_floor(dev, (uintptr_t)addr) : -1;
    if (i < 0 || dev->ranges[i].base != (uintptr_t)addr || !dev->ranges[i].mapped ||
        dev->ranges[i].size != size) {
        st = gm_error_set(err, GM_ERR_INPUT, "gm_device_unmap: %p + %zu is not a mapped range of " GM_DEV_FMT,
                          addr, size, GM_DEV_ARGS(dev));
    } else {
        range_remove(dev, (size_t)i);
        dev->ops->unmap(dev, addr, size);
        count_free(dev, size);
        ptrdiff_t r = find_reservation(dev, (uintptr_t)addr, size);
        if (r >= 0) dev->resv[r].mapped--;
    }
    pthread_mutex_unlock(&dev->lock);
    return st;
}

gm_status gm_device_release(gm_device *dev, void *base, gm_error *err)
{
    if (!valid_device(dev, "gm_device_release", err)) return GM_ERR_INPUT;
    pthread_mutex_lock(&dev->lock);
    gm_status st = GM_OK;
    size_t i = 0;
    while (i < dev->nresv && dev->resv[i].base != (uintptr_t)base) i++;
    if (!base || i == dev->nresv) {
        st = gm_error_set(err, GM_ERR_INPUT, "gm_device_release: %p is not a reservation of " GM_DEV_FMT,
                          base, GM_DEV_ARGS(dev));
    } else if (dev->resv[i].mapped) {
        st = gm_error_set(err, GM_ERR_INPUT, "gm_device_release: reservation %p of " GM_DEV_FMT
                          " still has %zu mapped ranges", base, GM_DEV_ARGS(dev), dev->resv[i].mapped);
    } else {
        dev->ops->release(dev, base, dev->resv[i].size);
        dev->resv[i] = dev->resv[--dev->nresv];
        dev->counters.reservations--;
    }
    pthread_mutex_unlock(&dev->lock);
    return st;
}

/* ---- injection, limits, counters ---------------------------------------------------------- */

void gm_device_fail_allocs_after(gm_device *dev, int64_t n)
{
    if (!dev) return;
    pthread_mutex_lock(&dev->lock);
    dev->fail_after = n < 0 ? -1 : n;
    pthread_mutex_unlock(&dev->lock);
}

void gm_device_set_memory_limit(gm_device *dev, uint64_t bytes)
{
    if (!dev) return;
    pthread_mutex_lock(&dev->lock);
    dev->mem_limit = bytes;
    pthread_mutex_unlock(&dev->lock);
}

void gm_device_disable_virtual_memory(gm_device *dev)
{
    if (!dev) return;
    pthread_mutex_lock(&dev->lock);
    dev->vm_disabled = true;
    pthread_mutex_unlock(&dev->lock);
}

gm_status gm_device_set_vm_granularity(gm_device *dev, size_t bytes, gm_error *err)
{
    if (!valid_device(dev, "gm_device_set_vm_granularity", err)) return GM_ERR_INPUT;
    pthread_mutex_lock(&dev->lock);
    const size_t own = own_granularity(dev);
    gm_status st = GM_OK;
    if (!own)
        st = gm_error_set(err, GM_ERR_UNSUPPORTED, GM_DEV_FMT ": no virtual memory", GM_DEV_ARGS(dev));
    else if (bytes && (bytes < own || bytes % own || (bytes & (bytes - 1))))
        st = gm_error_set(err, GM_ERR_INPUT,
                          "gm_device_set_vm_granularity: %zu bytes on " GM_DEV_FMT
                          ": expected a power of two multiple of the device's granule, %zu", bytes, GM_DEV_ARGS(dev), own);
    else if (dev->nresv)
        st = gm_error_set(err, GM_ERR_INPUT, "gm_device_set_vm_granularity: " GM_DEV_FMT " has reservations already",
                          GM_DEV_ARGS(dev));
    else
        dev->vm_granule = bytes;
    pthread_mutex_unlock(&dev->lock);
    return st;
}

void gm_device_get_counters(gm_device *dev, gm_device_counters *out)
{
    if (!out) return;
    memset(out, 0, sizeof *out);
    if (!dev) return;
    pthread_mutex_lock(&dev->lock);
    *out = dev->counters;
    pthread_mutex_unlock(&dev->lock);
}

size_t gm_device_granularity(gm_device *dev)
{
    pthread_mutex_lock(&dev->lock);
    size_t g = granularity(dev);
    pthread_mutex_unlock(&dev->lock);
    return g;
}

/* ---- close --------------------------------------------------------------------------------- */

void gm_device_free_all(gm_device *dev, size_t *count, uint64_t *bytes)
{
    pthread_mutex_lock(&dev->lock);
    *count = dev->nranges;
    *bytes = dev->counters.bytes_in_use;
    for (size_t i = dev->nranges; i-- > 0;) {
        gm_mem_range *r = &dev->ranges[i];
        if (r->mapped) dev->ops->unmap(dev, (void *)r->base, r->size);
        else dev->ops->free(dev, (void *)r->base, r->size);
        count_free(dev, r->size);
    }
    dev->nranges = 0;
    for (size_t i = 0; i < dev->nresv; i++)
        dev->ops->release(dev, (void *)dev->resv[i].base, dev->resv[i].size);
    *count += dev->nresv;
    dev->nresv = 0;
    dev->counters.reservations = 0;
    pthread_mutex_unlock(&dev->lock);
}

void gm_device_memory_fini(gm_device *dev)
{
    gm_free(dev->ranges);
    gm_free(dev->resv);
    dev->ranges = NULL;
    dev->resv = NULL;
}
