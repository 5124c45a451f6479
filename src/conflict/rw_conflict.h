/*
 * rw_conflict.h — GE's mem_rw_conflict_optimize (reference §1): the semantic read/write
 * conflict between a producer output and a consumer input that share one buffer, resolved by
 * inserting an Identity between them.
 *
 * rw_types.c holds the type side (ref relations, the output/input RW types, the merge table,
 * the decision matrix, the subgraph marking); rw_conflict.c holds the pass
 * (HandleMemoryRWConflict) and the check (CheckRWConflict).
 */
#ifndef GM_RW_CONFLICT_H
#define GM_RW_CONFLICT_H

#include <stdbool.h>
#include <stdint.h>

#include "graphmem/graph.h"
#include "passes/pass_util.h"

/* ---- the pass and the check --------------------------------------------------------------- */

/* HandleMemoryRWConflict. As in GE a structural failure (duplicate or missing
 * _parent_node_index) only warns and leaves the pass: it returns GM_OK. Out of memory fails. */
gm_status gm_pass_rw_conflict(gm_pass_ctx *c);

/* CheckRWConflict on a sorted model (as the readers and every pass leave it): *has_conflict = true when some producer/consumer pair is a wrong graph
 * (an Invalid type on either side). The model is not changed. Reproduces GE's quirks: a model
 * without subgraphs returns at once with *has_conflict untouched, and the scan stops at the
 * first node without data consumers or the first While node or While consumer (§9.4-2). */
gm_status gm_rw_check_conflict(const gm_model *m, bool *has_conflict, gm_error *err);

/* ---- the types (ordinals are GE's: they index the tables) --------------------------------- */

typedef enum gm_rw_in_type {
    GM_RW_IN_READ_ONLY = 0,
    GM_RW_IN_WRITEABLE,       /* ref input: the write is meant to be seen upstream */
    GM_RW_IN_SCOPE_WRITEABLE, /* written in place, the write must not be seen upstream */
    GM_RW_IN_INVALID,
    GM_RW_IN_COUNT
} gm_rw_in_type;

typedef enum gm_rw_out_type {
    GM_RW_OUT_READ_ONLY_CONST = 0,
    GM_RW_OUT_READ_ONLY,      /* non-ref output read by more than one in-anchor */
    GM_RW_OUT_SOFT_READ,      /* non-ref output read by at most one in-anchor */
    GM_RW_OUT_WRITEABLE,      /* ref output, variable, root Data */
    GM_RW_OUT_INVALID,
    GM_RW_OUT_COUNT
} gm_rw_out_type;

typedef enum gm_rw_result {
    GM_RW_DO_NOTHING = 0,
    GM_RW_INSERT_IDENTITY,
    GM_RW_WRONG_GRAPH
} gm_rw_result;

const char *gm_rw_in_type_name(gm_rw_in_type t);
/* The true name ("ReadOnlyConst" ...), used in reasons and messages. */
const char *gm_rw_out_type_name(gm_rw_out_type t);
/* The name GE's log prints: its table has four names for five values, so every name is
 * shifted by one (ReadOnlyConst prints "ReadOnly", Writeable prints "InvalidRWType"). Only
 * the log lines use it (§9.4-1). */
const char *gm_rw_out_type_log_name(gm_rw_out_type t);
const char *gm_rw_result_name(gm_rw_result r);

/* GetConflictResultBetweenNode (§1.6). */
gm_rw_result gm_rw_conflict_result(gm_rw_out_type out, gm_rw_in_type in);
/* GetInputRwTypeInConflict (§1.5): the merge of a set of input types, given as a bit mask
 * (bit t = type t present); the empty set is ReadOnly. */
gm_rw_in_type gm_rw_merge_input_types(unsigned mask);

/* ---- the type state: what one run of the pass or the check knows -------------------------- */

typedef struct gm_rw_state gm_rw_state;

/* Builds the state over a sorted model: MarkRefRelations (setting bool attr `reference` on
 * nodes with a ref pair when `mutate`), the subgraph Data maps, empty recorded types. A
 * structural problem is GM_ERR_INPUT with a message. */
gm_status gm_rw_state_new(gm_model *m, bool mutate, gm_rw_state **out, gm_error *err);
void gm_rw_state_free(gm_rw_state *st);

/* Called by the marking for a subgraph NetOutput input whose producer is Writeable and whose
 * parent output cannot take the write (JudgeOptimizableByParentNode false): the pass inserts
 * an Identity there. NULL (the check) inserts nothing; the type is recorded as SoftRead either
 * way, as it is after GE's insertion. */
typedef gm_status (*gm_rw_netoutput_fn)(void *ctx, gm_node *netoutput, uint32_t in);

/* MarkRWTypeForAllSubgraph (§1.7): subgraphs in reverse model order, While children skipped;
 * records the input type of each subgraph Data and the output types of each NetOutput. */
gm_status gm_rw_mark_subgraphs(gm_rw_state *st, gm_rw_netoutput_fn insert, void *ctx, gm_error *err);

/* GetOutputRWTypeByIndex (§1.4, with §1.3 for nodes without subgraphs). */
gm_rw_out_type gm_rw_output_type(const gm_rw_state *st, const gm_node *n, uint32_t k);
/* GetSingleNodeOutputRWTypeByIndex (§1.3). */
gm_rw_out_type gm_rw_single_output_type(const gm_rw_state *st, const gm_node *n, uint32_t k);
/* GetInputRWTypeByIndex (§1.5). */
gm_rw_in_type gm_rw_input_type(const gm_rw_state *st, const gm_node *n, uint32_t i);
/* GetSingleNodeInputRWTypeByIndex (§1.5, nodes without subgraphs). */
gm_rw_in_type gm_rw_single_input_type(const gm_rw_state *st, const gm_node *n, uint32_t i);
/* JudgeOptimizableByParentNode (§1.7): true = the parent's output idx may carry the write. */
bool gm_rw_judge_optimizable_by_parent(const gm_rw_state *st, const gm_node *parent, uint32_t idx);
/* NeedCheckSkipIdentiy (§1.8) for output k of n whose type is `out`. */
bool gm_rw_need_check_skip(const gm_rw_state *st, gm_rw_out_type out, const gm_node *n, uint32_t k);

/* The ref relations of MarkRefRelations: the output paired with input i (or -1), the input
 * paired with output k (or -1). Nodes created after the state was built have none. */
int32_t gm_rw_ref_output_of_input(const gm_rw_state *st, const gm_node *n, uint32_t i);
int32_t gm_rw_ref_input_of_output(const gm_rw_state *st, const gm_node *n, uint32_t k);

/* The nodes of the model when the state was built, in GetAllNodes order. */
size_t gm_rw_state_node_count(const gm_rw_state *st);
gm_node *gm_rw_state_node(const gm_rw_state *st, size_t i);

/* Node predicates the pass shares with the types (op-table classes and GE attributes). */
bool gm_rw_is_while(const gm_node *n);
bool gm_rw_in_while_subgraph(const gm_node *n);
/* A Data-type node with _parent_node_index inside a subgraph; *pidx receives the index. */
bool gm_rw_is_subgraph_data(const gm_node *n, int64_t *pidx);
bool gm_rw_is_subgraph_netoutput(const gm_node *n);

#endif
