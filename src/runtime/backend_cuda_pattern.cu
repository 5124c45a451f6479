/*
 * backend_cuda_pattern.cu — the two kernels the executor uses to write and check data
 * patterns on a GPU: grid-stride loops over bytes, the pattern from backend_pattern.h so it is
 * the host backend's byte for byte.
 */
#include "runtime/backend_cuda.h"
#include "runtime/backend_pattern.h"

static __global__ void fill_kernel(uint8_t *dst, size_t size, uint64_t seed)
{
    size_t step = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < size; i += step)
        dst[i] = gm_pattern_byte_at(seed, i);
}

static __global__ void verify_kernel(const uint8_t *src, size_t size, uint64_t seed,
                                     unsigned long long *counter)
{
    size_t step = (size_t)gridDim.x * blockDim.x;
    unsigned long long bad = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < size; i += step)
        bad += src[i] != gm_pattern_byte_at(seed, i);
    if (bad) atomicAdd(counter, bad); /* one atomic per thread, and only where something differs */
}

/* Enough blocks to fill a large GPU, few enough that small buffers do not launch idle ones. */
static unsigned blocks_for(size_t size, unsigned threads)
{
    size_t b = (size + threads - 1) / threads;
    return b > 4096 ? 4096u : (unsigned)b;
}

extern "C" cudaError_t gm_cuda_fill_pattern(void *dst, size_t size, uint64_t seed, cudaStream_t stream)
{
    const unsigned threads = 256;
    fill_kernel<<<blocks_for(size, threads), threads, 0, stream>>>((uint8_t *)dst, size, seed);
    return cudaGetLastError();
}

extern "C" cudaError_t gm_cuda_verify_pattern(const void *src, size_t size, uint64_t seed,
                                              unsigned long long *counter, cudaStream_t stream)
{
    const unsigned threads = 256;
    verify_kernel<<<blocks_for(size, threads), threads, 0, stream>>>((const uint8_t *)src, size, seed,
                                                                     counter);
    return cudaGetLastError();
}
