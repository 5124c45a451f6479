/*
 * backend_cuda.c — the CUDA backend: cudaMalloc, cudart streams and events, cudaMemcpy*Async,
 * cudaLaunchHostFunc, and the pattern kernels of backend_cuda_pattern.cu.
 *
 * cudart's current device is per thread and defaults to 0, so every operation first selects
 * its own device explicitly (GE: never rely on a default device id). Virtual memory is the
 * driver's (backend_cuda_vm.c); where it is missing, reserve reports unsupported and callers
 * fall back to cudaMalloc.
 *
 * Compiled only when CMake found the CUDA toolkit (GM_HAVE_CUDA); otherwise the CUDA backend
 * is absent and gm_device_open says so.
 */
#ifdef GM_HAVE_CUDA

#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>

#include "util/alloc.h"
#include "runtime/backend_cuda.h"
#include "runtime/backend_cuda_vm.h"
#include "runtime/backend_internal.h"

typedef struct cuda_stream {
    cudaStream_t stream;
    /* Scratch of gm_verify_pattern_async, made on first use: the kernel counts into
     * `counter`, which is copied to `slot` (pinned, so the copy stays asynchronous) and handed
     * to the caller by a host function. One of each suffices: the stream runs them in order. */
    unsigned long long *counter;
    unsigned long long *slot;
} cuda_stream;

static gm_status cuda_fail(gm_error *err, const gm_device *dev, const char *call, cudaError_t rc)
{
    gm_status code = rc == cudaErrorMemoryAllocation ? GM_ERR_NOMEM
                   : rc == cudaErrorNoDevice || rc == cudaErrorInsufficientDriver ? GM_ERR_UNSUPPORTED
                   : GM_ERR_DEVICE;
    (void)cudaGetLastError(); /* clear a non-sticky error so the next call starts clean */
    return gm_error_set(err, code, GM_DEV_FMT ": %s: %s (%s)", GM_DEV_ARGS(dev), call,
                        cudaGetErrorString(rc), cudaGetErrorName(rc));
}

#define CUDA_TRY(dev, err, call)                                    \
    do {                                                            \
        cudaError_t rc_ = (call);                                   \
        if (rc_ != cudaSuccess) return cuda_fail(err, dev, #call, rc_); \
    } while (0)

static int cuda_device_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return n;
}

static gm_status cuda_open(gm_device *dev, gm_error *err)
{
    CUDA_TRY(dev, err, cudaSetDevice(dev->id));
    CUDA_TRY(dev, err, cudaFree(NULL)); /* creates the context now, not inside the first malloc */
    dev->impl = NULL;
    return GM_OK;
}

static void cuda_close(gm_device *dev)
{
    /* No cudaDeviceReset: other handles (and other libraries) may share the device's context. */
}

static void cuda_props(gm_device *dev, gm_device_props *out)
{
    struct cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, dev->id) != cudaSuccess) {
        (void)cudaGetLastError();
        snprintf(out->name, sizeof out->name, "cuda:%d", dev->id);
        return;
    }
    snprintf(out->name, sizeof out->name, "%s", p.name);
    out->total_memory = p.totalGlobalMem;
}

static gm_status cuda_malloc(gm_device *dev, size_t size, void **out, gm_error *err)
{
    CUDA_TRY(dev, err, cudaSetDevice(dev->id));
    CUDA_TRY(dev, err, cudaMalloc(out, size));
    return GM_OK;
}

static void cuda_free(gm_device *dev, void *ptr, size_t size)
{
    if (cudaSetDevice(dev->id) != cudaSuccess || cudaFree(ptr) != cudaSuccess)
        (void)cudaGetLastError();
}

/* ---- streams ------------------------------------------------------------------------------ */

static gm_status cuda_stream_create(gm_stream *s, gm_error *err)
{
    cuda_stream *cs = gm_calloc(1, sizeof *cs);
    if (!cs) return gm_error_set(err, GM_ERR_NOMEM, "gm_stream_create: out of memory");
    cudaError_t rc = cudaSetDevice(s->dev->id);
    if (rc == cudaSuccess) rc = cudaStreamCreateWithFlags(&cs->stream, cudaStreamNonBlocking);
    if (rc != cudaSuccess) {
        gm_free(cs);
        return cuda_fail(err, s->dev, "cudaStreamCreateWithFlags", rc);
    }
    s->impl = cs;
    return GM_OK;
}

static gm_status cuda_stream_sync(gm_stream *s, gm_error *err)
{
    cuda_stream *cs = s->impl;
    CUDA_TRY(s->dev, err, cudaSetDevice(s->dev->id));
    CUDA_TRY(s->dev, err, cudaStreamSynchronize(cs->stream));
    return GM_OK;
}

static void cuda_stream_destroy(gm_stream *s)
{
    cuda_stream *cs = s->impl;
    if (cudaSetDevice(s->dev->id) == cudaSuccess) {
        cudaStreamDestroy(cs->stream);
        if (cs->counter) cudaFree(cs->counter);
        if (cs->slot) cudaFreeHost(cs->slot);
    }
    (void)cudaGetLastError();
    gm_free(cs);
}

static gm_status cuda_copy(gm_stream *s, void *dst, gm_device *dst_dev, const void *src,
                           gm_device *src_dev, size_t size, gm_copy_kind kind, gm_error *err)
{
    cuda_stream *cs = s->impl;
    CUDA_TRY(s->dev, err, cudaSetDevice(s->dev->id));
    switch (kind) {
    case GM_COPY_H2D: CUDA_TRY(s->dev, err, cudaMemcpyAsync(dst, src, size, cudaMemcpyHostToDevice, cs->stream)); break;
    case GM_COPY_D2H: CUDA_TRY(s->dev, err, cudaMemcpyAsync(dst, src, size, cudaMemcpyDeviceToHost, cs->stream)); break;
    case GM_COPY_D2D: CUDA_TRY(s->dev, err, cudaMemcpyAsync(dst, src, size, cudaMemcpyDeviceToDevice, cs->stream)); break;
    case GM_COPY_P2P:
        CUDA_TRY(s->dev, err, cudaMemcpyPeerAsync(dst, dst_dev->id, src, src_dev->id, size, cs->stream));
        break;
    default: return gm_error_set(err, GM_ERR_INPUT, "gm_memcpy_async: unknown copy kind %d", (int)kind);
    }
    return GM_OK;
}

static gm_status cuda_host_fn(gm_stream *s, gm_host_fn fn, void *user, gm_error *err)
{
    cuda_stream *cs = s->impl;
    CUDA_TRY(s->dev, err, cudaSetDevice(s->dev->id));
    CUDA_TRY(s->dev, err, cudaLaunchHostFunc(cs->stream, fn, user));
    return GM_OK;
}

static gm_status cuda_fill(gm_stream *s, void *dst, size_t size, uint64_t seed, gm_error *err)
{
    cuda_stream *cs = s->impl;
    CUDA_TRY(s->dev, err, cudaSetDevice(s->dev->id));
    CUDA_TRY(s->dev, err, gm_cuda_fill_pattern(dst, size, seed, cs->stream));
    return GM_OK;
}

typedef struct verify_result {
    const unsigned long long *slot;
    uint64_t *out;
} verify_result;

static void CUDART_CB hand_over_result(void *arg)
{
    verify_result *r = arg;
    *r->out = *r->slot;
    gm_free(r);
}

static gm_status cuda_verify(gm_stream *s, const void *src, size_t size, uint64_t seed,
                             uint64_t *mismatches, gm_error *err)
{
    cuda_stream *cs = s->impl;
    CUDA_TRY(s->dev, err, cudaSetDevice(s->dev->id));
    if (!cs->counter) CUDA_TRY(s->dev, err, cudaMalloc((void **)&cs->counter, sizeof *cs->counter));
    if (!cs->slot) CUDA_TRY(s->dev, err, cudaMallocHost((void **)&cs->slot, sizeof *cs->slot));
    verify_result *r = gm_malloc(sizeof *r);
    if (!r) return gm_error_set(err, GM_ERR_NOMEM, "gm_verify_pattern_async: out of memory");
    r->slot = cs->slot;
    r->out = mismatches;
    cudaError_t rc = cudaMemsetAsync(cs->counter, 0, sizeof *cs->counter, cs->stream);
    if (rc == cudaSuccess) rc = gm_cuda_verify_pattern(src, size, seed, cs->counter, cs->stream);
    if (rc == cudaSuccess)
        rc = cudaMemcpyAsync(cs->slot, cs->counter, sizeof *cs->counter, cudaMemcpyDeviceToHost, cs->stream);
    if (rc == cudaSuccess) rc = cudaLaunchHostFunc(cs->stream, hand_over_result, r);
    if (rc != cudaSuccess) {
        gm_free(r);
        return cuda_fail(err, s->dev, "gm_verify_pattern_async", rc);
    }
    return GM_OK;
}

/* ---- events -------------------------------------------------------------------------------- */

static gm_status cuda_event_create(gm_event *e, gm_error *err)
{
    cudaEvent_t ev;
    CUDA_TRY(e->dev, err, cudaSetDevice(e->dev->id));
    CUDA_TRY(e->dev, err, cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    e->impl = ev;
    return GM_OK;
}

static void cuda_event_destroy(gm_event *e)
{
    /* cudaEventDestroy may be called with work pending; cudart frees it once that is done. */
    if (cudaSetDevice(e->dev->id) != cudaSuccess || cudaEventDestroy((cudaEvent_t)e->impl) != cudaSuccess)
        (void)cudaGetLastError();
}

static gm_status cuda_event_record(gm_event *e, gm_stream *s, gm_error *err)
{
    cuda_stream *cs = s->impl;
    CUDA_TRY(s->dev, err, cudaSetDevice(s->dev->id));
    CUDA_TRY(s->dev, err, cudaEventRecord((cudaEvent_t)e->impl, cs->stream));
    return GM_OK;
}

static gm_status cuda_stream_wait(gm_stream *s, gm_event *e, gm_error *err)
{
    cuda_stream *cs = s->impl;
    CUDA_TRY(s->dev, err, cudaSetDevice(s->dev->id));
    CUDA_TRY(s->dev, err, cudaStreamWaitEvent(cs->stream, (cudaEvent_t)e->impl, 0));
    return GM_OK;
}

static gm_status cuda_event_query(gm_event *e, bool *done, gm_error *err)
{
    CUDA_TRY(e->dev, err, cudaSetDevice(e->dev->id));
    cudaError_t rc = cudaEventQuery((cudaEvent_t)e->impl);
    if (rc == cudaErrorNotReady) {
        (void)cudaGetLastError();
        *done = false;
        return GM_OK;
    }
    if (rc != cudaSuccess) return cuda_fail(err, e->dev, "cudaEventQuery", rc);
    *done = true;
    return GM_OK;
}

static gm_status cuda_event_sync(gm_event *e, gm_error *err)
{
    CUDA_TRY(e->dev, err, cudaSetDevice(e->dev->id));
    CUDA_TRY(e->dev, err, cudaEventSynchronize((cudaEvent_t)e->impl));
    return GM_OK;
}

/* Every process's: on a GPU shared with others the peak includes their changes too. */
static uint64_t cuda_driver_used(gm_device *dev)
{
    size_t free_bytes = 0, total = 0;
    if (cudaSetDevice(dev->id) != cudaSuccess || cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return (uint64_t)(total - free_bytes);
}

const gm_backend_ops gm_backend_cuda_ops = {
    .name = "cuda",
    .device_count = cuda_device_count,
    .open = cuda_open,
    .close = cuda_close,
    .props = cuda_props,
    .malloc = cuda_malloc,
    .free = cuda_free,
    .driver_used = cuda_driver_used,
    .vm_granularity = gm_cuda_vm_granularity,
    .reserve = gm_cuda_vm_reserve,
    .map = gm_cuda_vm_map,
    .unmap = gm_cuda_vm_unmap,
    .release = gm_cuda_vm_release,
    .stream_create = cuda_stream_create,
    .stream_sync = cuda_stream_sync,
    .stream_destroy = cuda_stream_destroy,
    .copy = cuda_copy,
    .host_fn = cuda_host_fn,
    .fill = cuda_fill,
    .verify = cuda_verify,
    .event_create = cuda_event_create,
    .event_destroy = cuda_event_destroy,
    .event_record = cuda_event_record,
    .stream_wait = cuda_stream_wait,
    .event_query = cuda_event_query,
    .event_sync = cuda_event_sync,
};

#else
/* Without the CUDA toolkit this file is empty; ISO C wants a declaration in every file. */
typedef int gm_backend_cuda_absent;
#endif
