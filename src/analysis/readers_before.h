/*
 * readers_before.h — may a node overwrite a buffer now? Only if every other read of it runs
 * before the node: on the node's stream earlier in the model order, or through a path of edges
 * to it (stream order is not an edge across streams). A read is any consumer of the buffer, so
 * readers through a view, a pass-through or a subgraph count — GE's passes ask it of the
 * producer's direct consumers only, in topological order — except what reads the node's own
 * result (through its outputs), which is meant to follow it, and reads that need no data
 * (gm_node_reads_input_data). The buffer is followed across subgraph boundaries: a subgraph
 * Data back to its parent's input, and into the subgraphs of the node that holds the writer;
 * a read in another branch of the same If or Case never runs with the writer.
 *
 * Used where a node overwrites a buffer it is given: the in-place reuse of an input
 * (conflict/inplace.c), an HCCL op writing its input (passes/hccl_memcpy.c), a While writing
 * its loop inputs (passes/subgraph.c).
 */
#ifndef GM_READERS_BEFORE_H
#define GM_READERS_BEFORE_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/reach.h"
#include "graphmem/graph.h"

/* *all = every read of the buffer that n's input `in` reads runs before n. The reads are the
 * consumers of the output that owns the buffer and of its views and pass-throughs, found by
 * walking the edges (a symbol table would cost a whole build per pass). The model must be
 * sorted and unedited since; *reach is built on first need (free it with gm_reach_free).
 * GM_ERR_NOMEM when out of memory. */
gm_status gm_readers_before(const gm_model *m, gm_reach **reach, const gm_node *n, uint32_t in, bool *all);

/* For every node that `writes` selects, bit min(i, 63) of (*mask)[topo id] is set when a read
 * of input i's buffer may run after the node (inputs past 63 share the last bit). Judged on m as
 * it is now (sorted), so that a pass can decide before it inserts anything; *mask is NULL when
 * no node is selected. GM_ERR_NOMEM (err set) when out of memory. */
gm_status gm_readers_unsafe_inputs(const gm_model *m, bool (*writes)(const gm_node *), uint64_t **mask,
                                   gm_error *err);
/* The same for the nodes given (a pass that has collected them already); *mask is NULL when
 * there are none. */
gm_status gm_readers_unsafe_inputs_of(const gm_model *m, gm_node *const *nodes, size_t n_nodes, uint64_t **mask,
                                      gm_error *err);
/* Bit i of n's entry (false for a NULL mask, or a node made after the mask). */
bool gm_readers_unsafe(const uint64_t *mask, const gm_node *n, size_t i);

#endif
