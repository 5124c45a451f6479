/*
 * access_order.h — program order made explicit (graphmem's own pass; GE only warns, W18888).
 *
 * The graph format keeps the given order among independent nodes, and one stream executes
 * that order. Two accesses of one buffer that conflict (a write and a read, or two writes) and
 * that no data or control path orders are therefore ordered only by the list: put them on two
 * streams and the result depends on which runs first. GraphLint reports such pairs among the
 * consumers of one output; this pass removes them, on the buffers as the planner sees them
 * (symbols: ref chains, in-place reuse, views and subgraph joins all count), by adding the
 * control edge the given order implies.
 *
 * Near-linear: every access is listed once, grouped by symbol (a radix sort that keeps the model
 * order), and in each group a write is ordered after the reads since the last write (or after
 * that write), and a read after the last write: consecutive pairs only, transitivity does the
 * rest. A pair in two graphs is ordered where they meet (gm_node_meet): the control-flow
 * nodes that hold them in their lowest common graph; a pair that meets in one node is its
 * bodies' matter. Most pairs are a producer and its consumer (an edge, no search); the rest ask
 * reachability (src/analysis/reach.c). No N x N matrix.
 */
#ifndef GM_ACCESS_ORDER_H
#define GM_ACCESS_ORDER_H

#include "passes/pass_util.h"

/* What one run did (for tests and benchmarks). */
typedef struct gm_access_order_stats {
    size_t accesses; /* (symbol, node) accesses, a node's own merged */
    size_t pairs;    /* conflicting pairs whose order was asked */
    size_t direct;   /* of which answered by an edge between the two (no reachability index) */
    size_t edges;    /* control edges added */
} gm_access_order_stats;

/* The pass: a control edge a -> b for every conflicting pair (a before b in the model order)
 * that no path orders, logged as "[MemConflict][ORDER] ..." and recorded in the report's edges.
 * The edges only follow the model order, so the order (and the symbol table, which reads no
 * control edge) stays as it was: a current table is handed on. GM_ERR_NOMEM when out of memory
 * (the edges added so far stay, each recorded). */
gm_status gm_pass_access_order(gm_pass_ctx *c);

/* The same with its statistics (*stats may be NULL). */
gm_status gm_access_order_run(gm_pass_ctx *c, gm_access_order_stats *stats);

#endif
