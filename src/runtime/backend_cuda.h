/*
 * backend_cuda.h — the CUDA kernels of the CUDA backend (backend_cuda_pattern.cu), callable
 * from C. Only built when the CUDA toolkit was found (GM_HAVE_CUDA).
 */
#ifndef GM_RUNTIME_BACKEND_CUDA_H
#define GM_RUNTIME_BACKEND_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Writes the gm_pattern_byte pattern over [dst, dst+size) in stream order. */
cudaError_t gm_cuda_fill_pattern(void *dst, size_t size, uint64_t seed, cudaStream_t stream);
/* Adds the number of bytes of [src, src+size) that differ from the pattern to *counter
 * (device memory). */
cudaError_t gm_cuda_verify_pattern(const void *src, size_t size, uint64_t seed,
                                   unsigned long long *counter, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
