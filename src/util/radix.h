/*
 * radix.h — a stable LSD radix sort by unsigned 64-bit keys, 16 bits a pass. Where a qsort of a
 * million records sat on a hot path (symbol names, best fit's order, the verifier's overlap
 * sweep), comparisons through a function pointer cost several times these passes.
 */
#ifndef GM_RADIX_H
#define GM_RADIX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* An element's sort key; signed values map with their sign bit flipped, descending ones with
 * every bit flipped. */
typedef uint64_t (*gm_radix_key)(const void *elem);

/* Sorts v[0, n) (elements of `size` bytes) stably by keys[0], then keys[1] ... : the last key is
 * the most significant, earlier ones break its ties. A digit every element shares costs one
 * counting pass and no move. False when out of memory: v is then untouched. */
bool gm_radix_sort(void *v, size_t n, size_t size, const gm_radix_key *keys, size_t nk);

#endif
