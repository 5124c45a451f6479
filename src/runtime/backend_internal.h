/*
 * backend_internal.h — what the backend dispatch (backend.c, backend_memory.c) shares with the
 * backends (backend_host*.c, backend_cuda.c): the handle structs and the operations table a
 * backend fills in.
 *
 * The common layer does every argument check, the bookkeeping of memory (which ranges are this
 * device's, counters, fault injection, limits) and the lists needed to close a device in GE's
 * release order; a backend only does the work, on arguments already checked.
 */
#ifndef GM_RUNTIME_BACKEND_INTERNAL_H
#define GM_RUNTIME_BACKEND_INTERNAL_H

#include <pthread.h>

#include "graphmem/runtime.h"

/* One live range of device memory: a gm_device_malloc block or a gm_device_map range. */
typedef struct gm_mem_range {
    uintptr_t base;
    size_t size;
    bool mapped; /* from gm_device_map (freed by unmap), else from gm_device_malloc */
} gm_mem_range;

typedef struct gm_reservation {
    uintptr_t base;
    size_t size;
    size_t mapped; /* ranges mapped inside it */
} gm_reservation;

typedef struct gm_backend_ops gm_backend_ops;

struct gm_device {
    gm_backend_kind kind;
    int id;
    const gm_backend_ops *ops;
    void *impl; /* the backend's per-device state */

    /* Recursive: GE's physical allocator takes its lock re-entrantly (seed constraint 2), and
     * an allocator built on this one may call back into the device while holding it. Guards
     * everything below. */
    pthread_mutex_t lock;
    gm_mem_range *ranges; /* sorted by base, disjoint */
    size_t nranges, cap_ranges;
    gm_reservation *resv;
    size_t nresv, cap_resv;
    gm_device_counters counters;
    int64_t fail_after; /* allocations left before injected failures; < 0 = off */
    uint64_t mem_limit; /* 0 = none */
    bool vm_disabled;
    uint64_t driver_base; /* driver_used when the device opened */
    size_t vm_granule; /* a coarser granule than the backend's (gm_device_set_vm_granularity); 0 = its own */
    gm_stream *streams; /* open streams and events, closed by gm_device_close */
    gm_event *events;
};

struct gm_stream {
    gm_device *dev;
    void *impl;
    gm_stream *prev, *next; /* in dev->streams */
};

struct gm_event {
    gm_device *dev;
    void *impl;
    gm_event *prev, *next; /* in dev->events */
};

/* A backend. Every pointer argument has been checked by the common layer; device memory
 * arguments lie in the device's ranges. Functions that cannot fail return void. */
struct gm_backend_ops {
    const char *name;
    int (*device_count)(void);
    gm_status (*open)(gm_device *dev, gm_error *err); /* sets dev->impl */
    void (*close)(gm_device *dev);                    /* after streams, events and memory */
    void (*props)(gm_device *dev, gm_device_props *out);

    gm_status (*malloc)(gm_device *dev, size_t size, void **out, gm_error *err);
    void (*free)(gm_device *dev, void *ptr, size_t size);
    /* Optional: the bytes of device memory in use as the driver counts them (whole pages and
     * granules, every process's), for gm_device_counters' driver_peak_bytes. */
    uint64_t (*driver_used)(gm_device *dev);
    /* Virtual memory: NULL reserve = unsupported. */
    size_t (*vm_granularity)(gm_device *dev);
    gm_status (*reserve)(gm_device *dev, size_t size, size_t align, void **base, gm_error *err); /* base % align == 0 */
    gm_status (*map)(gm_device *dev, void *addr, size_t size, gm_error *err);
    void (*unmap)(gm_device *dev, void *addr, size_t size);
    void (*release)(gm_device *dev, void *base, size_t size);

    gm_status (*stream_create)(gm_stream *s, gm_error *err);
    gm_status (*stream_sync)(gm_stream *s, gm_error *err);
    void (*stream_destroy)(gm_stream *s); /* after a stream_sync */
    /* kind P2P names both devices; for the others dst_dev == src_dev == s->dev. */
    gm_status (*copy)(gm_stream *s, void *dst, gm_device *dst_dev, const void *src,
                      gm_device *src_dev, size_t size, gm_copy_kind kind, gm_error *err);
    gm_status (*host_fn)(gm_stream *s, gm_host_fn fn, void *user, gm_error *err);
    gm_status (*fill)(gm_stream *s, void *dst, size_t size, uint64_t seed, gm_error *err);
    gm_status (*verify)(gm_stream *s, const void *src, size_t size, uint64_t seed,
                        uint64_t *mismatches, gm_error *err);

    gm_status (*event_create)(gm_event *e, gm_error *err);
    void (*event_destroy)(gm_event *e); /* pending records and waits may still use it */
    gm_status (*event_record)(gm_event *e, gm_stream *s, gm_error *err);
    gm_status (*stream_wait)(gm_stream *s, gm_event *e, gm_error *err);
    gm_status (*event_query)(gm_event *e, bool *done, gm_error *err);
    gm_status (*event_sync)(gm_event *e, gm_error *err);
};

extern const gm_backend_ops gm_backend_host_ops;
#ifdef GM_HAVE_CUDA
extern const gm_backend_ops gm_backend_cuda_ops;
#endif

/* "host:1", "cuda:0": how messages name a device. */
#define GM_DEV_FMT "%s:%d"
#define GM_DEV_ARGS(dev) (dev)->ops->name, (dev)->id

/* backend_memory.c: frees every range and reservation still live; returns how many and how
 * many bytes (for the close warning). Called with no stream work left. */
void gm_device_free_all(gm_device *dev, size_t *count, uint64_t *bytes);
void gm_device_memory_fini(gm_device *dev);
/* The virtual-memory granularity, 0 where unsupported or disabled. */
size_t gm_device_granularity(gm_device *dev);

#endif
