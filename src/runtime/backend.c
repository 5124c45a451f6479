/*
 * backend.c — the runtime's device interface: picks the backend, checks every argument (so a
 * NULL handle, a foreign pointer or a mismatched device is an error and not a crash), keeps
 * the open streams and events of each device, and closes a device in GE's release order:
 * stream sync, then free, then device close.
 *
 * Memory bookkeeping is in backend_memory.c; the work itself in backend_host*.c and
 * backend_cuda.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "graphmem/log.h"
#include "runtime/backend_internal.h"
#include "runtime/backend_pattern.h"

static const gm_backend_ops *backend_ops(gm_backend_kind kind)
{
    switch (kind) {
    case GM_BACKEND_HOST: return &gm_backend_host_ops;
#ifdef GM_HAVE_CUDA
    case GM_BACKEND_CUDA: return &gm_backend_cuda_ops;
#else
    case GM_BACKEND_CUDA: return NULL;
#endif
    case GM_BACKEND_COUNT: break;
    }
    return NULL;
}

const char *gm_backend_name(gm_backend_kind kind)
{
    switch (kind) {
    case GM_BACKEND_HOST: return "host";
    case GM_BACKEND_CUDA: return "cuda";
    case GM_BACKEND_COUNT: break;
    }
    return "?";
}

bool gm_backend_from_name(const char *name, gm_backend_kind *out)
{
    for (int k = 0; name && k < GM_BACKEND_COUNT; k++) {
        if (strcmp(name, gm_backend_name((gm_backend_kind)k)) == 0) {
            if (out) *out = (gm_backend_kind)k;
            return true;
        }
    }
    return false;
}

int gm_backend_device_count(gm_backend_kind kind)
{
    const gm_backend_ops *ops = backend_ops(kind);
    return ops ? ops->device_count() : 0;
}

bool gm_backend_available(gm_backend_kind kind) { return gm_backend_device_count(kind) > 0; }

const char *gm_copy_kind_name(gm_copy_kind kind)
{
    static const char *const names[] = {"H2D", "D2H", "D2D", "P2P"};
    return (unsigned)kind < GM_COPY_KIND_COUNT ? names[kind] : "?";
}

uint8_t gm_pattern_byte(uint64_t seed, uint64_t i) { return gm_pattern_byte_at(seed, i); }

/* ---- devices ------------------------------------------------------------------------------ */

gm_status gm_device_open(gm_backend_kind kind, int device_id, gm_device **out, gm_error *err)
{
    if (!out) return gm_error_set(err, GM_ERR_INPUT, "gm_device_open: out is NULL");
    *out = NULL;
    if ((unsigned)kind >= GM_BACKEND_COUNT)
        return gm_error_set(err, GM_ERR_INPUT, "gm_device_open: unknown backend kind %d", (int)kind);
    const gm_backend_ops *ops = backend_ops(kind);
    if (!ops)
        return gm_error_set(err, GM_ERR_UNSUPPORTED,
                            "gm_device_open: the %s backend is not compiled into this build "
                            "(the CUDA toolkit was not found, or GM_CUDA=OFF)", gm_backend_name(kind));
    int count = ops->device_count();
    if (count == 0)
        return gm_error_set(err, GM_ERR_UNSUPPORTED, "gm_device_open: the %s backend has no device here",
                            ops->name);
    if (device_id < 0 || device_id >= count)
        return gm_error_set(err, GM_ERR_INPUT, "gm_device_open: %s device id %d out of range (0..%d)",
                            ops->name, device_id, count - 1);
    gm_device *dev = gm_calloc(1, sizeof *dev);
    if (!dev) return gm_error_set(err, GM_ERR_NOMEM, "gm_device_open: out of memory");
    dev->kind = kind;
    dev->id = device_id;
    dev->ops = ops;
    dev->fail_after = -1;
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    int rc = pthread_mutex_init(&dev->lock, &attr);
    pthread_mutexattr_destroy(&attr);
    if (rc) {
        gm_free(dev);
        return gm_error_set(err, GM_ERR_NOMEM, "gm_device_open: cannot create the device mutex");
    }
    gm_status st = ops->open(dev, err);
    if (st != GM_OK) {
        pthread_mutex_destroy(&dev->lock);
        gm_free(dev);
        return st;
    }
    dev->driver_base = ops->driver_used ? ops->driver_used(dev) : 0;
    *out = dev;
    return GM_OK;
}

void gm_device_close(gm_device *dev)
{
    if (!dev) return;
    /* 1. Stream sync: every stream's queued work runs to its end (failures are dropped: the
     *    device is going away and nobody is left to tell). */
    for (gm_stream *s = dev->streams; s; s = s->next) dev->ops->stream_sync(s, NULL);
    while (dev->streams) {
        gm_stream *s = dev->streams;
        dev->streams = s->next;
        dev->ops->stream_destroy(s);
        gm_free(s);
    }
    while (dev->events) {
        gm_event *e = dev->events;
        dev->events = e->next;
        dev->ops->event_destroy(e);
        gm_free(e);
    }
    /* 2. Free what the caller left allocated. */
    size_t count = 0;
    uint64_t bytes = 0;
    gm_device_free_all(dev, &count, &bytes);
    if (count)
        gm_log(GM_LOG_WARN, "graphmem: " GM_DEV_FMT " closed with %zu allocations (%llu bytes) still "
               "outstanding; freed them", GM_DEV_ARGS(dev), count, (unsigned long long)bytes);
    /* 3. Close the device. */
    dev->ops->close(dev);
    gm_device_memory_fini(dev);
    pthread_mutex_destroy(&dev->lock);
    gm_free(dev);
}

gm_backend_kind gm_device_kind(const gm_device *dev) { return dev ? dev->kind : GM_BACKEND_COUNT; }
int gm_device_id(const gm_device *dev) { return dev ? dev->id : -1; }

gm_status gm_device_get_props(const gm_device *dev, gm_device_props *out, gm_error *err)
{
    if (!dev || !out) return gm_error_set(err, GM_ERR_INPUT, "gm_device_get_props: NULL argument");
    memset(out, 0, sizeof *out);
    gm_device *d = (gm_device *)dev; /* the lock is not part of the logical state */
    d->ops->props(d, out);
    out->kind = dev->kind;
    out->id = dev->id;
    out->vm_granularity = gm_device_granularity(d);
    out->virtual_memory = out->vm_granularity != 0;
    return GM_OK;
}

gm_status gm_device_synchronize(gm_device *dev, gm_error *err)
{
    if (!dev) return gm_error_set(err, GM_ERR_INPUT, "gm_device_synchronize: device is NULL");
    /* Sync a snapshot of the stream list, not under the device lock: stream work (a host
     * function) may itself allocate on this device. */
    pthread_mutex_lock(&dev->lock);
    size_t n = 0;
    for (gm_stream *s = dev->streams; s; s = s->next) n++;
    gm_stream **list = n ? gm_malloc(n * sizeof *list) : NULL;
    if (n && !list) {
        pthread_mutex_unlock(&dev->lock);
        return gm_error_set(err, GM_ERR_NOMEM, "gm_device_synchronize: out of memory");
    }
    n = 0;
    for (gm_stream *s = dev->streams; s; s = s->next) list[n++] = s;
    pthread_mutex_unlock(&dev->lock);
    gm_status first = GM_OK;
    for (size_t i = 0; i < n; i++) {
        gm_status st = dev->ops->stream_sync(list[i], first == GM_OK ? err : NULL);
        if (first == GM_OK) first = st;
    }
    gm_free(list);
    return first;
}

/* ---- streams ------------------------------------------------------------------------------ */

gm_status gm_stream_create(gm_device *dev, gm_stream **out, gm_error *err)
{
    if (!dev || !out) return gm_error_set(err, GM_ERR_INPUT, "gm_stream_create: NULL argument");
    *out = NULL;
    gm_stream *s = gm_calloc(1, sizeof *s);
    if (!s) return gm_error_set(err, GM_ERR_NOMEM, "gm_stream_create: out of memory");
    s->dev = dev;
    gm_status st = dev->ops->stream_create(s, err);
    if (st != GM_OK) {
        gm_free(s);
        return st;
    }
    pthread_mutex_lock(&dev->lock);
    s->next = dev->streams;
    if (s->next) s->next->prev = s;
    dev->streams = s;
    pthread_mutex_unlock(&dev->lock);
    *out = s;
    return GM_OK;
}

gm_status gm_stream_destroy(gm_stream *s, gm_error *err)
{
    if (!s) return GM_OK;
    gm_device *dev = s->dev;
    gm_status st = dev->ops->stream_sync(s, err);
    pthread_mutex_lock(&dev->lock);
    if (s->prev) s->prev->next = s->next;
    else dev->streams = s->next;
    if (s->next) s->next->prev = s->prev;
    pthread_mutex_unlock(&dev->lock);
    dev->ops->stream_destroy(s);
    gm_free(s);
    return st;
}

gm_status gm_stream_synchronize(gm_stream *s, gm_error *err)
{
    if (!s) return gm_error_set(err, GM_ERR_INPUT, "gm_stream_synchronize: stream is NULL");
    return s->dev->ops->stream_sync(s, err);
}

gm_device *gm_stream_device(const gm_stream *s) { return s ? s->dev : NULL; }

/* ---- copies and stream work ---------------------------------------------------------------- */

static gm_status need_owned(gm_device *dev, const void *p, size_t size, const char *fn,
                            const char *what, gm_error *err)
{
    if (gm_device_owns(dev, p, size)) return GM_OK;
    return gm_error_set(err, GM_ERR_INPUT, "%s: %s %p + %zu bytes is not memory of " GM_DEV_FMT, fn,
                        what, p, size, GM_DEV_ARGS(dev));
}

static bool overlap(const void *a, const void *b, size_t size)
{
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return x < y ? y - x < size : x - y < size;
}

gm_status gm_memcpy_async(gm_stream *s, void *dst, const void *src, size_t size,
                          gm_copy_kind kind, gm_error *err)
{
    static const char fn[] = "gm_memcpy_async";
    if (!s || !dst || !src) return gm_error_set(err, GM_ERR_INPUT, "%s: NULL argument", fn);
    gm_device *dev = s->dev;
    gm_status st = GM_OK;
    switch (kind) {
    case GM_COPY_H2D: st = need_owned(dev, dst, size, fn, "H2D destination", err); break;
    case GM_COPY_D2H: st = need_owned(dev, src, size, fn, "D2H source", err); break;
    case GM_COPY_D2D:
        st = need_owned(dev, dst, size, fn, "D2D destination", err);
        if (st == GM_OK) st = need_owned(dev, src, size, fn, "D2D source", err);
        if (st == GM_OK && overlap(dst, src, size))
            st = gm_error_set(err, GM_ERR_INPUT, "%s: D2D source and destination overlap", fn);
        break;
    case GM_COPY_P2P:
        return gm_error_set(err, GM_ERR_INPUT, "%s: a P2P copy names two devices; use gm_memcpy_peer_async", fn);
    default: return gm_error_set(err, GM_ERR_INPUT, "%s: unknown copy kind %d", fn, (int)kind);
    }
    if (st != GM_OK || size == 0) return st;
    return dev->ops->copy(s, dst, dev, src, dev, size, kind, err);
}

gm_status gm_memcpy_peer_async(gm_stream *s, gm_device *dst_dev, void *dst, gm_device *src_dev,
                               const void *src, size_t size, gm_error *err)
{
    static const char fn[] = "gm_memcpy_peer_async";
    if (!s || !dst_dev || !dst || !src_dev || !src)
        return gm_error_set(err, GM_ERR_INPUT, "%s: NULL argument", fn);
    if (dst_dev->kind != src_dev->kind)
        return gm_error_set(err, GM_ERR_INPUT, "%s: " GM_DEV_FMT " and " GM_DEV_FMT " are of different backends",
                            fn, GM_DEV_ARGS(dst_dev), GM_DEV_ARGS(src_dev));
    if (s->dev != dst_dev && s->dev != src_dev)
        return gm_error_set(err, GM_ERR_INPUT, "%s: the stream belongs to " GM_DEV_FMT ", neither source nor destination",
                            fn, GM_DEV_ARGS(s->dev));
    gm_status st = need_owned(dst_dev, dst, size, fn, "P2P destination", err);
    if (st == GM_OK) st = need_owned(src_dev, src, size, fn, "P2P source", err);
    if (st == GM_OK && dst_dev == src_dev && overlap(dst, src, size))
        st = gm_error_set(err, GM_ERR_INPUT, "%s: source and destination overlap", fn);
    if (st != GM_OK || size == 0) return st;
    return s->dev->ops->copy(s, dst, dst_dev, src, src_dev, size, GM_COPY_P2P, err);
}

gm_status gm_stream_launch_host_fn(gm_stream *s, gm_host_fn fn, void *user, gm_error *err)
{
    if (!s || !fn) return gm_error_set(err, GM_ERR_INPUT, "gm_stream_launch_host_fn: NULL argument");
    return s->dev->ops->host_fn(s, fn, user, err);
}

gm_status gm_fill_pattern_async(gm_stream *s, void *dst, size_t size, uint64_t seed, gm_error *err)
{
    if (!s || !dst) return gm_error_set(err, GM_ERR_INPUT, "gm_fill_pattern_async: NULL argument");
    gm_status st = need_owned(s->dev, dst, size, "gm_fill_pattern_async", "destination", err);
    if (st != GM_OK || size == 0) return st;
    return s->dev->ops->fill(s, dst, size, seed, err);
}

gm_status gm_verify_pattern_async(gm_stream *s, const void *src, size_t size, uint64_t seed,
                                  uint64_t *mismatches, gm_error *err)
{
    if (!s || !src || !mismatches)
        return gm_error_set(err, GM_ERR_INPUT, "gm_verify_pattern_async: NULL argument");
    gm_status st = need_owned(s->dev, src, size, "gm_verify_pattern_async", "source", err);
    if (st != GM_OK) return st;
    if (size == 0) {
        *mismatches = 0;
        return GM_OK;
    }
    return s->dev->ops->verify(s, src, size, seed, mismatches, err);
}

/* ---- events -------------------------------------------------------------------------------- */

gm_status gm_event_create(gm_device *dev, gm_event **out, gm_error *err)
{
    if (!dev || !out) return gm_error_set(err, GM_ERR_INPUT, "gm_event_create: NULL argument");
    *out = NULL;
    gm_event *e = gm_calloc(1, sizeof *e);
    if (!e) return gm_error_set(err, GM_ERR_NOMEM, "gm_event_create: out of memory");
    e->dev = dev;
    gm_status st = dev->ops->event_create(e, err);
    if (st != GM_OK) {
        gm_free(e);
        return st;
    }
    pthread_mutex_lock(&dev->lock);
    e->next = dev->events;
    if (e->next) e->next->prev = e;
    dev->events = e;
    pthread_mutex_unlock(&dev->lock);
    *out = e;
    return GM_OK;
}

gm_status gm_event_destroy(gm_event *e, gm_error *err)
{
    if (!e) return GM_OK;
    gm_device *dev = e->dev;
    pthread_mutex_lock(&dev->lock);
    if (e->prev) e->prev->next = e->next;
    else dev->events = e->next;
    if (e->next) e->next->prev = e->prev;
    pthread_mutex_unlock(&dev->lock);
    dev->ops->event_destroy(e);
    gm_free(e);
    return GM_OK;
}

gm_status gm_event_record(gm_event *e, gm_stream *s, gm_error *err)
{
    if (!e || !s) return gm_error_set(err, GM_ERR_INPUT, "gm_event_record: NULL argument");
    if (e->dev != s->dev)
        return gm_error_set(err, GM_ERR_INPUT, "gm_event_record: event of " GM_DEV_FMT
                            " recorded on a stream of " GM_DEV_FMT, GM_DEV_ARGS(e->dev), GM_DEV_ARGS(s->dev));
    return s->dev->ops->event_record(e, s, err);
}

gm_status gm_stream_wait_event(gm_stream *s, gm_event *e, gm_error *err)
{
    if (!e || !s) return gm_error_set(err, GM_ERR_INPUT, "gm_stream_wait_event: NULL argument");
    if (e->dev->kind != s->dev->kind)
        return gm_error_set(err, GM_ERR_INPUT, "gm_stream_wait_event: event of " GM_DEV_FMT
                            " waited on by a stream of " GM_DEV_FMT, GM_DEV_ARGS(e->dev), GM_DEV_ARGS(s->dev));
    return s->dev->ops->stream_wait(s, e, err);
}

gm_status gm_event_query(gm_event *e, bool *done, gm_error *err)
{
    if (!e || !done) return gm_error_set(err, GM_ERR_INPUT, "gm_event_query: NULL argument");
    return e->dev->ops->event_query(e, done, err);
}

gm_status gm_event_synchronize(gm_event *e, gm_error *err)
{
    if (!e) return gm_error_set(err, GM_ERR_INPUT, "gm_event_synchronize: event is NULL");
    return e->dev->ops->event_sync(e, err);
}

gm_device *gm_event_device(const gm_event *e) { return e ? e->dev : NULL; }
