/*
 * graphmem/runtime.h — device backends behind one interface: physical memory, optional virtual
 * address reservations, streams (in-order work queues), events, asynchronous copies and host
 * functions in stream order.
 *
 * Two backends:
 *   GM_BACKEND_HOST  device memory is host memory; each stream is a worker thread running its
 *                    queue in order; events are real cross-thread synchronization. Always there.
 *   GM_BACKEND_CUDA  cudart streams, events and cudaMalloc. Compiled in when the CUDA toolkit is
 *                    found at build time; available when, in addition, a GPU is present.
 *
 * Several devices: every call names its device (a gm_device handle, or a stream or event that
 * belongs to one); nothing defaults to device 0. Each gm_device handle has its own memory and
 * counters, so two host devices can be opened side by side (ids 0 and 1).
 *
 * Release order (GE's): streams are synchronized, then memory is freed, then the device closes.
 * gm_device_close does all three for whatever the caller left behind.
 *
 * Errors: functions that can fail return gm_status and fill *err (err may be NULL). Bad
 * arguments (NULL handles, pointers that are not this device's memory, zero sizes, handles of
 * another device or backend) give GM_ERR_INPUT, never a crash. Work that fails on the device
 * after it was enqueued is reported by the next synchronize of that stream or event.
 *
 * Thread safety, unless a function says otherwise: calls on one device may come from any
 * thread (device-level state is under the device's recursive mutex, GE's constraint for its
 * physical allocator); work may be enqueued on one stream from several threads (the order
 * between threads is then theirs to arrange). A handle must not be destroyed while another
 * thread uses it, and gm_device_close must not race with any other call on that device.
 */
#ifndef GRAPHMEM_RUNTIME_H
#define GRAPHMEM_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graphmem/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The device backends (see above). */
typedef enum gm_backend_kind {
    GM_BACKEND_HOST = 0,
    GM_BACKEND_CUDA = 1,
    GM_BACKEND_COUNT
} gm_backend_kind;

/* Opaque handles: an open device, a stream of one device, an event of one device. Each is
 * released by its close/destroy function; gm_device_close releases the device's streams and
 * events too. */
typedef struct gm_device gm_device;
typedef struct gm_stream gm_stream;
typedef struct gm_event gm_event;

/* Host devices have ids 0 .. GM_HOST_MAX_DEVICES-1. */
#define GM_HOST_MAX_DEVICES 64

/* ---- backends ----------------------------------------------------------------------------- */

/* "host", "cuda"; "?" for anything else. */
const char *gm_backend_name(gm_backend_kind kind);
/* Accepts "host" and "cuda"; false for an unknown name. */
bool gm_backend_from_name(const char *name, gm_backend_kind *out);
/* Host: always. CUDA: compiled in and at least one GPU visible. Thread-safe. */
bool gm_backend_available(gm_backend_kind kind);
/* How many devices of this kind can be opened (0 when unavailable). Thread-safe. */
int gm_backend_device_count(gm_backend_kind kind);

/* ---- devices ------------------------------------------------------------------------------ */

/* Opens device `device_id` of backend `kind`. GM_ERR_UNSUPPORTED when the backend is not
 * compiled in or has no device; GM_ERR_INPUT for an id out of range. Thread-safe. */
gm_status gm_device_open(gm_backend_kind kind, int device_id, gm_device **out, gm_error *err);
/* Closes the device in GE's release order: synchronizes and destroys every stream still open,
 * destroys its events, frees memory still allocated (mapped ranges and reservations too) with
 * one warning naming the count and bytes, then closes. NULL is a no-op. No other thread may
 * use the device or its streams/events during or after the call. */
void gm_device_close(gm_device *dev);

/* The backend and id the device was opened with. */
gm_backend_kind gm_device_kind(const gm_device *dev);
int gm_device_id(const gm_device *dev);

/* What a device offers (gm_device_get_props). */
typedef struct gm_device_props {
    gm_backend_kind kind;
    int id;
    char name[256];          /* "host" + id, or the GPU's name */
    uint64_t total_memory;   /* bytes: physical RAM for host, the GPU's global memory for CUDA */
    bool virtual_memory;     /* gm_device_reserve is supported (and not disabled) */
    size_t vm_granularity;   /* reserve/map sizes and addresses are multiples of it; 0 without */
} gm_device_props;

/* Fills *out; GM_ERR_INPUT for a NULL argument. */
gm_status gm_device_get_props(const gm_device *dev, gm_device_props *out, gm_error *err);

/* Waits for the work of every stream of the device; reports the first failure of asynchronous
 * work on any of them, as gm_stream_synchronize does. */
gm_status gm_device_synchronize(gm_device *dev, gm_error *err);

/* ---- physical memory ---------------------------------------------------------------------- */

/* size > 0 bytes of device memory, aligned to at least 256 bytes. GM_ERR_NOMEM when the device
 * (or an injected fault, or the memory limit) refuses; nothing is logged then, so callers may
 * synchronize, recycle and retry. */
gm_status gm_device_malloc(gm_device *dev, size_t size, void **out, gm_error *err);
/* Frees memory from gm_device_malloc of this device. Does not wait for streams: the caller
 * orders the free after the work that uses the memory (stream or event synchronize). NULL is
 * a no-op; a pointer this device did not hand out is GM_ERR_INPUT. */
gm_status gm_device_free(gm_device *dev, void *ptr, gm_error *err);
/* True when [ptr, ptr+size) lies inside one live allocation of the device, or inside mapped
 * ranges that follow each other without a gap. */
bool gm_device_owns(gm_device *dev, const void *ptr, size_t size);

/* ---- virtual memory (optional) -----------------------------------------------------------
 * A reservation is an address range with no memory behind it; map backs a part of it with
 * physical memory (counted like an allocation), unmap returns that memory. Where a backend has
 * no virtual memory, or it was disabled, gm_device_reserve returns GM_ERR_UNSUPPORTED and logs
 * nothing: the caller falls back to gm_device_malloc quietly (GE: "Maybe not support
 * rtReserveMemAddress", no ERROR log). The host backend implements it with mmap(PROT_NONE) +
 * mprotect; CUDA reports it unsupported for now. */

/* size is rounded up to the granularity. */
gm_status gm_device_reserve(gm_device *dev, size_t size, void **base, gm_error *err);
/* Backs [addr, addr+size) inside one reservation; addr and size multiples of the granularity,
 * the range not mapped already. GM_ERR_NOMEM like gm_device_malloc. */
gm_status gm_device_map(gm_device *dev, void *addr, size_t size, gm_error *err);
/* Undoes exactly one gm_device_map (same addr and size). */
gm_status gm_device_unmap(gm_device *dev, void *addr, size_t size, gm_error *err);
/* Releases a reservation with nothing mapped in it. */
gm_status gm_device_release(gm_device *dev, void *base, gm_error *err);

/* ---- failure injection, limits and counters ---------------------------------------------- */

/* The next n allocations (malloc and map) succeed, every later one fails with GM_ERR_NOMEM
 * until reset; n < 0 turns injection off (the default). */
void gm_device_fail_allocs_after(gm_device *dev, int64_t n);
/* Allocations that would take bytes in use above `bytes` fail with GM_ERR_NOMEM; 0 = no limit. */
void gm_device_set_memory_limit(gm_device *dev, uint64_t bytes);
/* Makes gm_device_reserve report GM_ERR_UNSUPPORTED, as on a device without virtual memory. */
void gm_device_disable_virtual_memory(gm_device *dev);
/* Makes the device map its virtual memory in granules of `bytes` (0: its own again), a power of
 * two multiple of its own granule, before its first reservation: a host device (the OS page) then
 * maps as a GPU does (2 MiB on CUDA devices), so that what the granule costs an allocator can be
 * measured and tested without one. GM_ERR_UNSUPPORTED without virtual memory. */
gm_status gm_device_set_vm_granularity(gm_device *dev, size_t bytes, gm_error *err);

/* The device's allocation counters (gm_device_get_counters): a consistent snapshot. */
typedef struct gm_device_counters {
    uint64_t allocs;        /* successful gm_device_malloc + gm_device_map */
    uint64_t frees;         /* gm_device_free + gm_device_unmap */
    uint64_t failed_allocs; /* GM_ERR_NOMEM answers, injected or real */
    uint64_t bytes_in_use;
    uint64_t peak_bytes;
    uint64_t driver_peak_bytes; /* the most device memory in use as its driver counts it (whole
                                   pages and granules, sampled after each allocation), above what
                                   was in use when the device opened: what cudaMalloc and mapping
                                   really took, and what the driver took for streams and kernels;
                                   0 where the backend cannot tell (host) */
    uint64_t reservations;  /* live reservations */
} gm_device_counters;

void gm_device_get_counters(gm_device *dev, gm_device_counters *out);

/* ---- streams ------------------------------------------------------------------------------ */

/* A new in-order stream on dev (host: a worker thread). GM_ERR_NOMEM or GM_ERR_DEVICE when it
 * cannot be made. Destroy with gm_stream_destroy (or let gm_device_close do it). */
gm_status gm_stream_create(gm_device *dev, gm_stream **out, gm_error *err);
/* Waits for the stream's work, then destroys it. NULL is a no-op. */
gm_status gm_stream_destroy(gm_stream *s, gm_error *err);
/* Waits until every piece of work enqueued before the call has run; reports the first failure
 * of asynchronous work since the last synchronize. */
gm_status gm_stream_synchronize(gm_stream *s, gm_error *err);
/* The device the stream belongs to. */
gm_device *gm_stream_device(const gm_stream *s);

typedef enum gm_copy_kind {
    GM_COPY_H2D, /* host memory -> this device */
    GM_COPY_D2H, /* this device -> host memory */
    GM_COPY_D2D, /* within this device */
    GM_COPY_P2P, /* between two devices of one backend: gm_memcpy_peer_async */
    GM_COPY_KIND_COUNT
} gm_copy_kind;

/* "H2D", "D2H", "D2D", "P2P" (static strings; "?" out of range). */
const char *gm_copy_kind_name(gm_copy_kind kind);

/* Copies size bytes in stream order on the stream's device. Device-side pointers must lie in
 * memory of that device (GM_ERR_INPUT otherwise); host-side memory must stay valid until the
 * copy has run. GM_COPY_P2P is refused here (it needs two devices). */
gm_status gm_memcpy_async(gm_stream *s, void *dst, const void *src, size_t size,
                          gm_copy_kind kind, gm_error *err);
/* Copies from src_dev's memory to dst_dev's memory in the order of stream s, which belongs to
 * one of the two devices; both devices of one backend. */
gm_status gm_memcpy_peer_async(gm_stream *s, gm_device *dst_dev, void *dst, gm_device *src_dev,
                               const void *src, size_t size, gm_error *err);

/* A function run in stream order: after the work enqueued before it, before the work after it.
 * Host: run by the stream's worker thread. CUDA: cudaLaunchHostFunc — fn must not call CUDA
 * (nor this runtime's stream functions). */
typedef void (*gm_host_fn)(void *user);
gm_status gm_stream_launch_host_fn(gm_stream *s, gm_host_fn fn, void *user, gm_error *err);

/* Data patterns, for checking that memory nobody else should touch kept its contents: byte i
 * of the pattern for seed is gm_pattern_byte(seed, i). fill writes it over [dst, dst+size);
 * verify counts the bytes of [src, src+size) that differ and stores the count in *mismatches
 * (host memory that must stay valid until the stream has run the check). On CUDA both are
 * small kernels. */
uint8_t gm_pattern_byte(uint64_t seed, uint64_t i);
gm_status gm_fill_pattern_async(gm_stream *s, void *dst, size_t size, uint64_t seed,
                                gm_error *err);
gm_status gm_verify_pattern_async(gm_stream *s, const void *src, size_t size, uint64_t seed,
                                  uint64_t *mismatches, gm_error *err);

/* ---- events -------------------------------------------------------------------------------
 * An event marks a point in a stream. Before its first record it counts as complete. A wait
 * or synchronize captures the most recent record made before it; recording again starts a new
 * point (re-recording on another stream while an earlier record is pending completes the
 * earlier captures when the newer record completes). */

/* A new event of dev, complete until first recorded. Destroy with gm_event_destroy (or let
 * gm_device_close do it). */
gm_status gm_event_create(gm_device *dev, gm_event **out, gm_error *err);
/* May be called while records or waits of the event are still pending (they finish first).
 * NULL is a no-op. */
gm_status gm_event_destroy(gm_event *e, gm_error *err);
/* Records the event at the current end of stream s (s of the event's device). */
gm_status gm_event_record(gm_event *e, gm_stream *s, gm_error *err);
/* Work enqueued on s after this call waits until the event's captured record has completed.
 * s may belong to another device of the same backend. */
gm_status gm_stream_wait_event(gm_stream *s, gm_event *e, gm_error *err);
/* *done = the most recent record has completed. Does not block. */
gm_status gm_event_query(gm_event *e, bool *done, gm_error *err);
/* Blocks until the most recent record has completed. */
gm_status gm_event_synchronize(gm_event *e, gm_error *err);
/* The device the event belongs to. */
gm_device *gm_event_device(const gm_event *e);

#ifdef __cplusplus
}
#endif
#endif
