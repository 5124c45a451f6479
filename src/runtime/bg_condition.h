/*
 * bg_condition.h — the runtime graph builder's If/Case preparation (GE's bg_condition,
 * reference §6.9): before an If/Case node is executed, each branch must
 *
 *  1. never hand the parent back the very tensor object of one of its inputs at an output index
 *     where another branch hands back a different one (CalcChainConflictSolvePolicy →
 *     EnsureChainConflictSolved / AddPointFromForConflicts: a zero-cost PointFromInputs node
 *     before the branch's output node gives every such output a producer of its own), and
 *  2. keep alive the resources it returns (CalcSubgraphGuardersPolicy →
 *     EnsureResourceLifeCycleExtended): a guarder (a FreeMemory-like node) inside a branch that
 *     frees a returned tensor would free it while the parent still uses it, so it is moved out
 *     onto the parent's output; where a branch returns a tensor it does not own (twice the same
 *     guarded tensor, a parent input whose guarder is outside, or nothing guarded at an index
 *     another branch guards) an IdentityAddr node adds a reference, which the outer guarder's
 *     free balances.
 *
 * Two shapes of If/Case are understood (gm_bg_shape): GE's execute graph, whose subgraph 0 is
 * the control frame and subgraphs 1..n the branches, and graphmem's model form, where every
 * subgraph is a branch (If: [then, else]; Case: one per branch). In a branch the inputs are
 * `InnerData` nodes with int attr `index` (GE's kFeedIndex) or subgraph `Data` nodes with
 * `_parent_node_index`; the output node is `InnerNetOutput` or `NetOutput`, whose input q is
 * parent output q (or the input desc's `_parent_node_index` where given).
 *
 * Names of what is inserted (reference §9.4): "<if>_PointFrom_<s>" (PointFromInputs) and
 * "<if>_Subgraph_<s>_AddResRef_" (IdentityAddr), <s> being the branch's position in the node's
 * subgraph list (so 1..n in the execute-graph shape, as in GE); the guarders made on the parent
 * are "<if>_<guarder type>_<output index>" (graphmem's choice: the reference names none).
 */
#ifndef GM_BG_CONDITION_H
#define GM_BG_CONDITION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graphmem/graph.h"

/* GE's kReleaseResourceIndex: int attr on a guarder node naming the input whose resource it
 * frees. A node carrying it is a guarder, whatever its type (GE's guarders are FreeMemory and
 * kin); a node of type "FreeMemory" without it is taken as a guarder of input 0. */
#define GM_ATTR_RELEASE_RESOURCE_INDEX "_release_resource_index"
/* GE's kNodeWithGuarderOutside: string attr on a branch's InnerData/Data naming the type of the
 * guarder that frees, outside the If/Case, the parent input it reads. Where absent, graphmem
 * looks for such a guarder on the parent input's producer itself. */
#define GM_ATTR_NODE_WITH_GUARDER_OUTSIDE "_node_with_guarder_outside"

#define GM_BG_FREE_MEMORY_TYPE "FreeMemory"
#define GM_BG_POINT_FROM_TYPE "PointFromInputs"
#define GM_BG_IDENTITY_ADDR_TYPE "IdentityAddr"
#define GM_BG_INNER_DATA_TYPE "InnerData"
#define GM_BG_INNER_NET_OUTPUT_TYPE "InnerNetOutput"

typedef enum gm_bg_shape {
    GM_BG_SHAPE_AUTO = 0,      /* control frame when the If owns 3 subgraphs or subgraph 0 has no
                                  output node (a branch always has one) */
    GM_BG_SHAPE_BRANCHES,      /* every subgraph is a branch (graphmem's models) */
    GM_BG_SHAPE_CONTROL_FRAME, /* subgraph 0 is the control frame (GE's execute graph) */
} gm_bg_shape;

/* One If/Case node seen as its branches. */
typedef struct gm_bg_cond {
    gm_node *node;
    size_t first_branch; /* index of the first branch among the node's subgraphs: 0 or 1 */
    size_t n_branches;
    size_t n_outputs;    /* the node's outputs = every branch's output-node inputs */
} gm_bg_cond;

/* Fills *c for an If/Case node. GM_ERR_INPUT when n is not If/Case, has no branch, or a branch
 * lacks a single output node. */
gm_status gm_bg_cond_view(gm_node *n, gm_bg_shape shape, gm_bg_cond *c, gm_error *err);

/* ---- chain conflicts (CalcChainConflictSolvePolicy) -------------------------------------- */

typedef enum gm_bg_chain_kind {
    GM_BG_CHAIN_NORMAL = 0, /* every branch computes this output */
    GM_BG_CHAIN_ALL_SAME,   /* every branch passes the same parent input through (GE leaves it:
                               a TODO there says the node could be bypassed) */
    GM_BG_CHAIN_CONFLICT,   /* branches disagree on where the output comes from */
} gm_bg_chain_kind;

typedef struct gm_bg_chain_policy {
    size_t n_outputs;
    gm_bg_chain_kind *kind;  /* per output index */
    int64_t *same_input;     /* per output: the parent input for ALL_SAME, else -1 */
    size_t *conflicts;       /* conflict output indexes, ascending */
    size_t n_conflicts;
} gm_bg_chain_policy;

/* For each output index, the set over branches of the parent input that feeds it (an
 * InnerData/Data's index, -1 for any computing producer): more than one value is a conflict,
 * one value other than -1 is "all same", {-1} is normal. An unconnected output-node input or a
 * branch without some output index is GM_ERR_INPUT. */
gm_status gm_bg_calc_chain_conflict_policy(const gm_bg_cond *c, gm_bg_chain_policy *p, gm_error *err);
void gm_bg_chain_policy_free(gm_bg_chain_policy *p);
/* AddPointFromForConflicts: in every branch one PointFromInputs node "<if>_PointFrom_<s>" with
 * one input/output per conflict index (input j feeds output j), before the output node. No-op
 * without conflicts. */
gm_status gm_bg_ensure_chain_conflict_solved(const gm_bg_cond *c, const gm_bg_chain_policy *p, gm_error *err);

/* ---- guarders (CalcSubgraphGuardersPolicy) ----------------------------------------------- */

typedef struct gm_bg_guarder_policy {
    size_t n_outputs, n_branches;
    char **guarder_type; /* per output: type of the guarder to make on the parent output, or NULL */
    bool *plus_ref;      /* [branch * n_outputs + output]: add a reference there (IdentityAddr) */
    gm_node **moved;     /* in-branch guarders to remove (each once) */
    size_t n_moved;
} gm_bg_guarder_policy;

/* Per branch and output index: a returned tensor with a guarder inside the branch has that
 * guarder moved out (the 2nd+ output returning the same tensor gets a plus-ref); a returned
 * parent input whose guarder is outside gets a plus-ref and the outside guarder's type; then
 * every branch without either at a guarded index gets a plus-ref. Guarders of different types
 * on one output index are GM_ERR_INPUT. */
gm_status gm_bg_calc_subgraph_guarders_policy(const gm_bg_cond *c, gm_bg_guarder_policy *p, gm_error *err);
void gm_bg_guarder_policy_free(gm_bg_guarder_policy *p);
/* EnsureResourceLifeCycleExtended: makes the parent-output guarders (attr
 * GM_ATTR_RELEASE_RESOURCE_INDEX = 0), removes the moved in-branch guarders (their control
 * edges handed on) and adds per branch one IdentityAddr "<if>_Subgraph_<s>_AddResRef_" with
 * one input/output per plus-ref index before the output node. */
gm_status gm_bg_ensure_resource_life_cycle_extended(const gm_bg_cond *c, const gm_bg_guarder_policy *p,
                                                    gm_error *err);

/* ---- drivers ----------------------------------------------------------------------------- */

/* Both policies computed on the graph as it stands, then PointFromInputs and the guarder
 * moves applied. The caller re-sorts (gm_model_toposort). */
gm_status gm_bg_condition_prepare(gm_node *n, gm_bg_shape shape, gm_error *err);
/* Every If/Case of the model, innermost first (a nested node's outer guarders then sit in the
 * enclosing branch, which moves them further out), then gm_model_toposort. */
gm_status gm_bg_condition_prepare_model(gm_model *m, gm_bg_shape shape, gm_error *err);

/* ---- helpers shared by bg_*.c ------------------------------------------------------------ */

/* The branch's output node (InnerNetOutput / NetOutput), or NULL. */
gm_node *gm_bg_output_node(const gm_graph *g);
/* The parent input a branch input node reads (InnerData `index`, Data `_parent_node_index`),
 * or -1 when n is no branch input. */
int64_t gm_bg_feed_index(const gm_node *n);
/* pos[i] = the output node's input position that is parent output i (n_outputs entries);
 * GM_ERR_INPUT when an index is missing, repeated or unconnected. */
gm_status gm_bg_output_positions(const gm_bg_cond *c, size_t branch, size_t *pos, gm_error *err);
/* The guarder among the consumers of n:out_idx that releases it, or NULL. */
gm_node *gm_bg_guarder_of(const gm_node *n, uint32_t out_idx);
gm_graph *gm_bg_branch(const gm_bg_cond *c, size_t branch);
/* One k-in/k-out node of `type` before the branch's output node, at the positions of the given
 * output indexes (input j <-> output j); no-op for k = 0. */
gm_status gm_bg_insert_before_output(const gm_bg_cond *c, size_t branch, const size_t *outputs, size_t k,
                                     const char *name, const char *type, gm_error *err);

#endif
