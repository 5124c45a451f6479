/*
 * backend_cuda_vm.h — the CUDA backend's virtual memory (backend_cuda_vm.c): the backend
 * operations vm_granularity, reserve, map, unmap and release of backend_internal.h.
 */
#ifndef GM_RUNTIME_BACKEND_CUDA_VM_H
#define GM_RUNTIME_BACKEND_CUDA_VM_H

#include "runtime/backend_internal.h"

/* 0 where the device or the driver has no virtual memory management (reserve then reports
 * unsupported and callers fall back to cudaMalloc, quietly). */
size_t gm_cuda_vm_granularity(gm_device *dev);
gm_status gm_cuda_vm_reserve(gm_device *dev, size_t size, size_t align, void **base, gm_error *err);
gm_status gm_cuda_vm_map(gm_device *dev, void *addr, size_t size, gm_error *err);
void gm_cuda_vm_unmap(gm_device *dev, void *addr, size_t size);
void gm_cuda_vm_release(gm_device *dev, void *base, size_t size);

#endif
