/*
 * backend_pattern.h — the data pattern that gm_fill_pattern_async writes and
 * gm_verify_pattern_async checks, shared by the C code and the CUDA kernels so that a pattern
 * written on one backend verifies on the other (and on the host after a D2H copy).
 */
#ifndef GM_RUNTIME_BACKEND_PATTERN_H
#define GM_RUNTIME_BACKEND_PATTERN_H

#include <stdint.h>

#ifdef __CUDACC__
#define GM_PATTERN_FN static __host__ __device__ inline
#else
#define GM_PATTERN_FN static inline
#endif

/* A splitmix64 step over (seed, byte index): neighbouring bytes and seeds differ, so a stale
 * or shifted copy shows up as mismatches. */
GM_PATTERN_FN uint8_t gm_pattern_byte_at(uint64_t seed, uint64_t i)
{
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + i;
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 31;
    return (uint8_t)x;
}

#endif
