/*
 * pass_util2.h — helpers the dedicated passes of reference §3 share beyond pass_util.h:
 * recording inserted nodes that are not copies (Assign write-backs, atomic clean nodes), one
 * copy node after several outputs, shape questions ("known-shape graph"), GE's list-or-bool
 * attributes, walking subgraph Data up to the parent's producer, and reachability.
 */
#ifndef GM_PASS_UTIL2_H
#define GM_PASS_UTIL2_H

#include "ops/op_table.h"
#include "passes/pass_util.h"

/* A snapshot of g's node list (passes insert while they walk, which shifts the list). Free
 * with gm_free. NULL with *n = 0 for an empty graph; NULL with an error set when out of memory. */
gm_node **gm_pass_snapshot(gm_pass_ctx *c, const gm_graph *g, size_t *n);

/* Creates a node (no edges) in g ordered beside `near` as gm_ir_node_create places it
 * (side < 0 before, > 0 after; near NULL: the graph's front or end), with a name made unique
 * from `name`, on `stream`, and records it in the report with `anchor` (the node it serves)
 * and `reason`. */
gm_node *gm_pass_add_node(gm_pass_ctx *c, gm_graph *g, const gm_node *near, int side, const char *name,
                          const char *type, int64_t stream, const gm_node *anchor, int32_t index, const char *reason);

/* One k-input/k-output copy node after k outputs of one graph: srcs[j]:outs[j] -> new:j, and
 * every consumer of srcs[j]:outs[j] moves to new:j. Each output must have a consumer. */
gm_node *gm_pass_insert_after_many(gm_pass_ctx *c, gm_node *const *srcs, const size_t *outs, size_t k,
                                   const char *name, const char *type, const gm_copy_opts *opts,
                                   const char *reason);

/* graphmem's reading of GE's "known-shape graph": the graph is not marked
 * `_dynamic_shape_partitioned` and every output desc of its own nodes has a size known at
 * compile time (no GM_SIZE_DYNAMIC). */
bool gm_pass_graph_known_shape(const gm_graph *g);
/* A node is dynamic-shape when one of its output descs, input descs or producers' outputs has
 * no compile-time size. */
bool gm_pass_node_dynamic_shape(const gm_node *n);
/* The root graph is unknown-shape (GE: the root was partitioned into known/unknown parts). */
bool gm_pass_root_unknown(const gm_model *m);

/* GE keeps some flags as a list attribute (e.g. `_is_connected_to_netoutput`, a list of
 * indices) where graphmem's attr table has a bool: true for a true bool/int or a non-empty list. */
bool gm_pass_attr_flag(const gm_attr *list, const char *name);
/* True when the LIST_INT attribute `name` holds v. */
bool gm_pass_attr_list_has(const gm_attr *list, const char *name, int64_t v);
/* Element i of a LIST_INT attribute; false when absent or too short. */
bool gm_pass_attr_list_at(const gm_attr *list, const char *name, size_t i, int64_t *v);
/* Appends v to the LIST_INT attribute `name` (creating it). */
gm_status gm_pass_attr_list_append(gm_pass_ctx *c, gm_attr **list, const char *name, int64_t v);

/* The producer of a subgraph Data, crossing parent boundaries: while the node is a subgraph
 * Data, step to the producer of its parent's input _parent_node_index. *idx is the output
 * index of the node returned (0 for a Data). `through` limits which parents are crossed:
 * GM_CTRL_NONE crosses every kind, another kind only that one. Returns NULL when an input is
 * unconnected. *top / *top_in (optional) receive the last in-anchor crossed (the outermost
 * parent input, or n itself with *top_in = -1 when nothing was crossed). */
gm_node *gm_pass_real_producer(gm_node *n, int32_t *idx, gm_ctrl_kind through, gm_node **top, int32_t *top_in);

/* True when `to` is reachable from `from` over data and control edges (same graph). O(V+E). */
bool gm_pass_reaches(gm_pass_ctx *c, const gm_node *from, const gm_node *to, gm_status *st);

/* True when output k's desc has a dim of 0 (an empty tensor). */
bool gm_pass_out_empty(const gm_node *n, size_t k);

/* "out of memory" error for the run, returned as a status. */
gm_status gm_pass_oom(gm_pass_ctx *c);

#endif
