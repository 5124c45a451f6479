/*
 * readers_before.h — may a node overwrite a buffer now? Only if every other read of it runs
 * before the node: on the node's stream earlier in the model order, or through a path of edges
 * to it (stream order is not an edge across streams). A read is any input anchor of the
 * buffer's symbol, so readers through a view, a pass-through or a subgraph count — GE's passes
 * ask it of the producer's direct consumers only, in topological order.
 *
 * Used where graphmem overwrites a buffer on purpose: the in-place reuse of an input
 * (conflict/inplace.c) and an HCCL op writing its input (passes/hccl_memcpy.c).
 */
#ifndef GM_READERS_BEFORE_H
#define GM_READERS_BEFORE_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/reach.h"
#include "analysis/symbols.h"

/* *all = every reader of symbol sym other than n itself runs before n. The model must be sorted
 * and unedited since s was built; *reach is built on first need (free it with gm_reach_free).
 * GM_ERR_NOMEM only when building it failed. */
gm_status gm_readers_before(const gm_model *m, const gm_symbols *s, gm_reach **reach, int32_t sym, const gm_node *n,
                            bool *all);

#endif
