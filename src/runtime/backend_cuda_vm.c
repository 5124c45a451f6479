/*
 * backend_cuda_vm.c — virtual memory on CUDA devices: the driver's cuMemAddressReserve for a
 * range, cuMemCreate + cuMemMap + cuMemSetAccess to back a part of it with device memory,
 * cuMemUnmap to give it back (the expandable L1 of memory-first mode, GE's virtual-address +
 * physical-page mode).
 *
 * The driver API is reached through cudart's cudaGetDriverEntryPointByVersion, so graphmem
 * links with cudart only: libcuda ships with the driver, which a build machine may not have.
 * Any entry point missing, or a device without CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_
 * SUPPORTED, makes the granularity 0: reserve is then unsupported and the callers fall back to
 * cudaMalloc, quietly.
 *
 * A mapped range holds its physical allocation alive on its own, so the handle is released
 * right after mapping and unmap alone frees the memory (no handle table).
 */
#ifdef GM_HAVE_CUDA

#include "runtime/backend_cuda_vm.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

/* The driver functions used, as of the CUDA 12 ABI. */
static struct {
    CUresult (*device_get)(CUdevice *, int);
    CUresult (*device_attribute)(int *, CUdevice_attribute, CUdevice);
    CUresult (*granularity)(size_t *, const CUmemAllocationProp *, CUmemAllocationGranularity_flags);
    CUresult (*address_reserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
    CUresult (*address_free)(CUdeviceptr, size_t);
    CUresult (*create)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *, unsigned long long);
    CUresult (*release)(CUmemGenericAllocationHandle);
    CUresult (*map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long);
    CUresult (*set_access)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);
    CUresult (*unmap)(CUdeviceptr, size_t);
    bool ok;
} drv;
static pthread_once_t drv_once = PTHREAD_ONCE_INIT;

static bool entry(const char *symbol, void **fn)
{
    enum cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion(symbol, fn, 12000, cudaEnableDefault, &found) == cudaSuccess &&
        found == cudaDriverEntryPointSuccess && *fn)
        return true;
    (void)cudaGetLastError();
    *fn = NULL;
    return false;
}

static void resolve(void)
{
    bool ok = entry("cuDeviceGet", (void **)&drv.device_get);
    ok &= entry("cuDeviceGetAttribute", (void **)&drv.device_attribute);
    ok &= entry("cuMemGetAllocationGranularity", (void **)&drv.granularity);
    ok &= entry("cuMemAddressReserve", (void **)&drv.address_reserve);
    ok &= entry("cuMemAddressFree", (void **)&drv.address_free);
    ok &= entry("cuMemCreate", (void **)&drv.create);
    ok &= entry("cuMemRelease", (void **)&drv.release);
    ok &= entry("cuMemMap", (void **)&drv.map);
    ok &= entry("cuMemSetAccess", (void **)&drv.set_access);
    ok &= entry("cuMemUnmap", (void **)&drv.unmap);
    drv.ok = ok;
}

/* Makes the device's primary context current on this thread (cudart's cudaSetDevice) and says
 * whether the driver functions are there. */
static bool ready(const gm_device *dev)
{
    pthread_once(&drv_once, resolve);
    if (!drv.ok) return false;
    if (cudaSetDevice(dev->id) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    return true;
}

/* Pinned device memory on the device's own ordinal. */
static bool device_memory(const gm_device *dev, CUmemAllocationProp *prop)
{
    CUdevice d;
    if (drv.device_get(&d, dev->id) != CUDA_SUCCESS) return false;
    memset(prop, 0, sizeof *prop);
    prop->type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop->location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop->location.id = d;
    return true;
}

size_t gm_cuda_vm_granularity(gm_device *dev)
{
    CUmemAllocationProp prop;
    int supported = 0;
    size_t g = 0;
    if (!ready(dev) || !device_memory(dev, &prop) ||
        drv.device_attribute(&supported, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, prop.location.id) !=
            CUDA_SUCCESS ||
        !supported || drv.granularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) != CUDA_SUCCESS)
        return 0;
    return g;
}

gm_status gm_cuda_vm_reserve(gm_device *dev, size_t size, size_t align, void **base, gm_error *err)
{
    CUdeviceptr p = 0;
    CUresult rc = ready(dev) ? drv.address_reserve(&p, size, align, 0, 0) : CUDA_ERROR_NOT_SUPPORTED;
    if (rc != CUDA_SUCCESS) /* unsupported rather than an error: the caller falls back */
        return gm_error_set(err, GM_ERR_UNSUPPORTED, GM_DEV_FMT ": cuMemAddressReserve of %zu bytes: CUresult %d",
                            GM_DEV_ARGS(dev), size, (int)rc);
    *base = (void *)(uintptr_t)p;
    return GM_OK;
}

static gm_status map_failed(gm_device *dev, const char *call, void *addr, size_t size, CUresult rc, gm_error *err)
{
    return gm_error_set(err, rc == CUDA_ERROR_OUT_OF_MEMORY ? GM_ERR_NOMEM : GM_ERR_DEVICE,
                        GM_DEV_FMT ": %s of %zu bytes at %p: CUresult %d", GM_DEV_ARGS(dev), call, size, addr, (int)rc);
}

gm_status gm_cuda_vm_map(gm_device *dev, void *addr, size_t size, gm_error *err)
{
    CUmemAllocationProp prop;
    if (!ready(dev) || !device_memory(dev, &prop))
        return gm_error_set(err, GM_ERR_DEVICE, GM_DEV_FMT ": the driver's virtual memory functions are gone",
                            GM_DEV_ARGS(dev));
    const CUdeviceptr at = (CUdeviceptr)(uintptr_t)addr;
    CUmemGenericAllocationHandle h;
    CUresult rc = drv.create(&h, size, &prop, 0);
    if (rc != CUDA_SUCCESS) return map_failed(dev, "cuMemCreate", addr, size, rc, err);
    if ((rc = drv.map(at, size, 0, h, 0)) != CUDA_SUCCESS) {
        drv.release(h);
        return map_failed(dev, "cuMemMap", addr, size, rc, err);
    }
    const CUmemAccessDesc access = {.location = prop.location, .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    if ((rc = drv.set_access(at, size, &access, 1)) != CUDA_SUCCESS) {
        drv.unmap(at, size);
        drv.release(h);
        return map_failed(dev, "cuMemSetAccess", addr, size, rc, err);
    }
    drv.release(h); /* the mapping keeps the memory until it is unmapped */
    return GM_OK;
}

void gm_cuda_vm_unmap(gm_device *dev, void *addr, size_t size)
{
    if (ready(dev)) drv.unmap((CUdeviceptr)(uintptr_t)addr, size);
}

void gm_cuda_vm_release(gm_device *dev, void *base, size_t size)
{
    if (ready(dev)) drv.address_free((CUdeviceptr)(uintptr_t)base, size);
}

#else
/* Without the CUDA toolkit this file is empty; ISO C wants a declaration in every file. */
typedef int gm_backend_cuda_vm_absent;
#endif
