/*
 * op_table.h — what each op type does to memory. This is the only place that lists op types:
 * passes ask gm_node_is() / gm_op_lookup(), never compare type strings themselves.
 *
 * Classes follow GE's OpTypeUtils (reference §9.1). Where GE lets a node attribute decide
 * (`reference`, `_input_mutable`), the attribute overrides the table.
 */
#ifndef GM_OP_TABLE_H
#define GM_OP_TABLE_H

#include <stdint.h>

#include "graphmem/graph.h"
#include "ir/ir.h"

typedef enum gm_op_flag {
    GM_OP_DATA = 1u << 0,            /* IsDataNode: Data, RefData, AippData, AnnData */
    GM_OP_VARIABLE = 1u << 1,        /* IsVariableNode: Variable, VariableV2 */
    GM_OP_VAR_LIKE = 1u << 2,        /* IsVarLikeNode: Variable, VariableV2, RefData */
    GM_OP_CONST = 1u << 3,           /* Const, Constant, ConstPlaceHolder, FileConstant */
    GM_OP_ASSIGN_LIKE = 1u << 4,     /* Assign*, Assign*VariableOp */
    GM_OP_IDENTITY_LIKE = 1u << 5,   /* Identity, ReadVariableOp */
    GM_OP_MEMCPY_LIKE = 1u << 6,     /* kMemcpyNodeTypes: Identity, MemcpyAsync, MemcpyAddrAsync */
    GM_OP_SHAPE_ONLY = 1u << 7,      /* reads only the shape: Shape, Rank, Size, ShapeN */
    GM_OP_HCCL = 1u << 8,            /* collective communication (Hcom*) */
    GM_OP_ADDR_UNREFRESHABLE = 1u << 9, /* StreamSwitch, LabelSwitchByIndex */
    GM_OP_PASS_THROUGH = 1u << 10,   /* output i is input i: NetOutput, While */
    GM_OP_PASS_THROUGH_0 = 1u << 11, /* output 0 is input 0: Merge, Reshape */
    GM_OP_MERGE = 1u << 12,          /* Merge, StreamMerge: inputs join one symbol */
    GM_OP_NETOUTPUT = 1u << 13,
    GM_OP_REFERENCE = 1u << 14,      /* attr `reference`: same-named input/output are one tensor */
    GM_OP_INPUT_MUTABLE = 1u << 15,  /* attr `_input_mutable`: writes its inputs in place */
    GM_OP_VIEW = 1u << 16,           /* output 0 is a view of input 0 (ONNX Squeeze, Flatten ...) */
    GM_OP_NEXT_ITERATION = 1u << 17, /* NextIteration: feeds a Merge across the loop edge */
    GM_OP_CONTROL_FLOW = 1u << 18,   /* owns subgraphs: If, Case, While, PartitionedCall */
    GM_OP_LOOP_COND = 1u << 19,      /* LoopCond: its graph is a loop graph (AtomicAddrClean) */
    GM_OP_RESHAPE = 1u << 20,        /* Reshape itself: a shape-computing branch when only Shape reads it */
    GM_OP_HCCL_BROADCAST = 1u << 21, /* HcomBroadcast: writes back to a variable it was fed from */
    GM_OP_STREAM_MERGE = 1u << 22,   /* StreamMerge (not Merge): MemcpyAddrAsync */
    GM_OP_PHONY = 1u << 23,          /* PhonyConcat / PhonySplit: same-named in/out without writing */
    GM_OP_PHONY_CONCAT = 1u << 24,   /* PhonyConcat: no-padding join of its inputs */
    GM_OP_HCCL_ATOMIC = 1u << 25,    /* reducing collectives: accumulate into a cleared output */
    GM_OP_HCCL_NO_ADDR_REFRESH = 1u << 26, /* collectives that cannot refresh addresses at load time */
    GM_OP_ATOMIC_CLEAN = 1u << 27,   /* AtomicAddrClean, MemSet: clear atomic outputs first */
    GM_OP_FRAMEWORK_OP = 1u << 28,   /* a node standing for another op, whose classes count too
                                        (gm_node_is): FrameworkOp wraps the op attr original_type
                                        names; a PlaceHolder stands for its partition parent's
                                        weight when attr parentOpType names a Const or Variable */
    GM_OP_REF_SWITCH = 1u << 29,     /* RefSwitch: forwards a ref, writes it (GE sees it wrapped) */
    GM_OP_CMO = 1u << 30,            /* Cmo (cache maintenance): touches no data, GraphLint ignores it */
} gm_op_flag;

typedef enum gm_ctrl_kind {
    GM_CTRL_NONE = 0,
    GM_CTRL_IF,              /* If, StatelessIf, _If: subgraphs [then, else] */
    GM_CTRL_CASE,            /* Case, StatelessCase: one subgraph per branch */
    GM_CTRL_WHILE,           /* While, StatelessWhile, _While, ONNX Loop/Scan: [cond, body] */
    GM_CTRL_PARTITIONED_CALL /* PartitionedCall, StatefulPartitionedCall: [f] */
} gm_ctrl_kind;

typedef struct gm_op_info {
    const char *type;
    uint32_t flags;
    gm_ctrl_kind ctrl;
    int8_t n_subgraphs; /* control flow: subgraphs it must own; -1 = one or more */
    const char *const *input_names;  /* default IR input names, NULL-terminated, or NULL */
    const char *const *output_names; /* default IR output names, NULL-terminated, or NULL */
} gm_op_info;

/* The entry for a type; unknown types get an entry with no flags (an ordinary compute op). */
const gm_op_info *gm_op_lookup(const char *type);

/* Does node n have this class/behaviour? Flags that GE lets an attribute decide (`reference`,
 * `_input_mutable`) read the node attribute first, then the table; a FrameworkOp has its
 * wrapped type's flags too (gm_node_is_slow). The rest is one load and a test, inline: the
 * passes ask it millions of times. */
bool gm_node_is_slow(const gm_node *n, gm_op_flag flag);
static inline bool gm_node_is(const gm_node *n, gm_op_flag flag)
{
    if ((flag & (GM_OP_REFERENCE | GM_OP_INPUT_MUTABLE)) || (n->op->flags & GM_OP_FRAMEWORK_OP))
        return gm_node_is_slow(n, flag);
    return (n->op->flags & flag) != 0;
}
gm_ctrl_kind gm_node_ctrl_kind(const gm_node *n);
/* Root Data (RefData too), Const and Variable: written at the plan's START, before every node
 * (docs/plan-format.md), wherever they sit in the order and whatever stream they carry — the
 * executors write them first, on stream 0. So an edge out of one orders nothing. */
bool gm_node_at_start(const gm_node *n);
/* GE's shape-computing branch: a shape-only op (Shape, Size ...), or a Reshape read only by
 * such ops. Its data never matters. */
bool gm_node_computes_shape(const gm_node *n);
/* Does n read the data of input i on the device, in a way that matters? Not a shape-computing
 * node, nor a Reshape whose output is a view of that input: the executors check no pattern
 * there, and the passes need not order them before a write. */
bool gm_node_reads_input_data(const gm_node *n, uint32_t i);
/* Loop-carried or stacked: the one definition of what a loop's output is to its body, asked by
 * the symbols, the planner, the verifier and the executors alike.
 *  - carried (GE's While: every output; If, Case and PartitionedCall too): output k IS the
 *    tensor its body's NetOutput input with _parent_node_index k hands back — one symbol;
 *  - stacked (ONNX Loop / Scan scan outputs: a loop node's outputs from its `_gm_carried_outputs`
 *    attribute on): output k is a new, larger tensor into which each iteration's body output k
 *    is stacked. The parent writes it, slice by slice while the loop runs, so it is in use from
 *    the loop's enter on; and it reads the body output it stacks once the body has run (at the
 *    loop's exit). The two are separate tensors that must not share memory while both live.
 * Only a loop that is no pass-through (ONNX Loop, Scan: not GE's While) may carry the
 * attribute; finalize refuses it elsewhere, and a count outside [0, outputs]. Absent: every
 * output carried. */
bool gm_subgraph_output_is_stacked(const gm_node *n, uint32_t k);
/* Is input i of subgraph NetOutput o a body output its parent stacks (its _parent_node_index
 * names a stacked output of o's parent)? */
bool gm_body_output_is_stacked(const gm_node *o, uint32_t i);
/* Does n write output k on the device, rather than alias memory someone else wrote? Compute ops
 * write their outputs, ref ops the memory they share with an input, an in-place computation
 * (reuse_input with `_output_inplace_ability`) its input's memory, a loop its stacked outputs;
 * views, Phony ops, pass-through ops, other control-flow outputs and subgraph Data / NetOutput
 * write nothing. The
 * executors write patterns where this says, and the access-order pass orders these writes: one
 * definition for both. */
bool gm_node_writes_output(const gm_node *n, uint32_t k);
/* The atomic-clean node (AtomicAddrClean / MemSet, a control input of n) that zeroes the memory
 * anchor (n, out, index) lives in before n accumulates into it, or NULL: an output listed in
 * n's atomic_output_index, or an input of a reducing collective (GM_OP_HCCL_ATOMIC), whose
 * clean node precedes the input's producer (reference §3.5). The zeroing is a write: the
 * planner and the verifier count the clean node among the memory's accesses. */
const gm_node *gm_anchor_clean_node(const gm_node *n, bool out, uint32_t index);
const char *gm_ctrl_kind_name(gm_ctrl_kind k);

/* The table itself, sorted by type (for tests and `graphmem help ops`). */
size_t gm_op_table_size(void);
const gm_op_info *gm_op_table_at(size_t i);

#endif
