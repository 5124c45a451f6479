/*
 * op_table.c — the op-type table (sorted by type for bsearch). Adding an op type that matters
 * to memory means adding one row here; no pass keeps its own list.
 */
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "ops/op_table.h"

#define NAMES(...) ((const char *const[]){__VA_ARGS__, NULL})

enum {
    DATA = GM_OP_DATA,
    VAR = GM_OP_VARIABLE | GM_OP_VAR_LIKE,
    REFDATA = GM_OP_DATA | GM_OP_VAR_LIKE,
    CONST = GM_OP_CONST,
    ASSIGN = GM_OP_ASSIGN_LIKE | GM_OP_REFERENCE,
    REF = GM_OP_REFERENCE,
    IDENT = GM_OP_IDENTITY_LIKE,
    MEMCPY = GM_OP_MEMCPY_LIKE,
    SHAPE = GM_OP_SHAPE_ONLY,
    /* GE asks the HCCL kernel store whether an op refreshes addresses and is atomic; graphmem
     * has no kernel store, so every collective is taken as unrefreshable, and the reducing
     * ones (their output accumulates) as atomic. */
    HCCL = GM_OP_HCCL | GM_OP_HCCL_NO_ADDR_REFRESH,
    HCCL_MUT = HCCL | GM_OP_INPUT_MUTABLE,
    HCCL_ATOMIC = GM_OP_HCCL_ATOMIC,
    UNREF = GM_OP_ADDR_UNREFRESHABLE,
    CF = GM_OP_CONTROL_FLOW,
    VIEW = GM_OP_VIEW,
};

/* Keep sorted by strcmp order of `type` (a test checks). */
static const gm_op_info k_ops[] = {
    {"AippData", DATA, GM_CTRL_NONE, 0, NULL, NULL},
    {"AnnData", DATA, GM_CTRL_NONE, 0, NULL, NULL},
    {"ApplyAdam", REF, GM_CTRL_NONE, 0,
     NAMES("var", "m", "v", "beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon", "grad"),
     NAMES("var")},
    {"ApplyGradientDescent", REF, GM_CTRL_NONE, 0, NAMES("var", "alpha", "delta"), NAMES("var")},
    {"ApplyMomentum", REF, GM_CTRL_NONE, 0, NAMES("var", "accum", "lr", "grad", "momentum"), NAMES("var")},
    {"Assign", ASSIGN, GM_CTRL_NONE, 0, NAMES("ref", "value"), NAMES("ref")},
    {"AssignAdd", ASSIGN, GM_CTRL_NONE, 0, NAMES("ref", "value"), NAMES("ref")},
    {"AssignAddVariableOp", ASSIGN, GM_CTRL_NONE, 0, NAMES("resource", "value"), NULL},
    {"AssignSub", ASSIGN, GM_CTRL_NONE, 0, NAMES("ref", "value"), NAMES("ref")},
    {"AssignSubVariableOp", ASSIGN, GM_CTRL_NONE, 0, NAMES("resource", "value"), NULL},
    {"AssignVariableOp", ASSIGN, GM_CTRL_NONE, 0, NAMES("resource", "value"), NULL},
    {"AtomicAddrClean", GM_OP_ATOMIC_CLEAN, GM_CTRL_NONE, 0, NULL, NULL},
    {"Case", CF, GM_CTRL_CASE, -1, NULL, NULL},
    {"Cmo", GM_OP_CMO, GM_CTRL_NONE, 0, NULL, NULL},
    {"Const", CONST, GM_CTRL_NONE, 0, NULL, NULL},
    {"ConstPlaceHolder", CONST, GM_CTRL_NONE, 0, NULL, NULL},
    {"Constant", CONST, GM_CTRL_NONE, 0, NULL, NULL},
    {"Data", DATA, GM_CTRL_NONE, 0, NULL, NULL},
    {"FileConstant", CONST, GM_CTRL_NONE, 0, NULL, NULL},
    {"Flatten", VIEW, GM_CTRL_NONE, 0, NULL, NULL},
    {"FrameworkOp", GM_OP_FRAMEWORK_OP, GM_CTRL_NONE, 0, NULL, NULL},
    {"HcomAllGather", HCCL, GM_CTRL_NONE, 0, NULL, NULL},
    {"HcomAllReduce", HCCL_MUT | HCCL_ATOMIC, GM_CTRL_NONE, 0, NULL, NULL},
    {"HcomAllToAllV", HCCL, GM_CTRL_NONE, 0, NULL, NULL},
    {"HcomBroadcast", HCCL_MUT | GM_OP_HCCL_BROADCAST, GM_CTRL_NONE, 0, NULL, NULL},
    {"HcomReceive", HCCL, GM_CTRL_NONE, 0, NULL, NULL},
    {"HcomReduce", HCCL_MUT | HCCL_ATOMIC, GM_CTRL_NONE, 0, NULL, NULL},
    {"HcomReduceScatter", HCCL | HCCL_ATOMIC, GM_CTRL_NONE, 0, NULL, NULL},
    {"HcomSend", HCCL, GM_CTRL_NONE, 0, NULL, NULL},
    {"Identity", IDENT | MEMCPY, GM_CTRL_NONE, 0, NULL, NULL},
    /* runtime v2's zero-cost pass-throughs in If/Case branches (bg_condition): output i is input i */
    {"IdentityAddr", GM_OP_PASS_THROUGH, GM_CTRL_NONE, 0, NULL, NULL},
    {"If", CF, GM_CTRL_IF, 2, NULL, NULL},
    {"LabelSwitchByIndex", UNREF, GM_CTRL_NONE, 0, NULL, NULL},
    {"Loop", CF, GM_CTRL_WHILE, -1, NULL, NULL},
    {"LoopCond", GM_OP_LOOP_COND, GM_CTRL_NONE, 0, NULL, NULL},
    {"MemSet", GM_OP_ATOMIC_CLEAN, GM_CTRL_NONE, 0, NULL, NULL},
    {"MemcpyAddrAsync", MEMCPY, GM_CTRL_NONE, 0, NULL, NULL},
    {"MemcpyAsync", MEMCPY, GM_CTRL_NONE, 0, NULL, NULL},
    {"Merge", GM_OP_MERGE | GM_OP_PASS_THROUGH_0, GM_CTRL_NONE, 0, NULL, NULL},
    {"NetOutput", GM_OP_NETOUTPUT | GM_OP_PASS_THROUGH, GM_CTRL_NONE, 0, NULL, NULL},
    {"NextIteration", GM_OP_NEXT_ITERATION, GM_CTRL_NONE, 0, NULL, NULL},
    {"PartitionedCall", CF, GM_CTRL_PARTITIONED_CALL, -1, NULL, NULL},
    {"PhonyConcat", GM_OP_PHONY | GM_OP_PHONY_CONCAT, GM_CTRL_NONE, 0, NULL, NULL},
    {"PhonySplit", GM_OP_PHONY, GM_CTRL_NONE, 0, NULL, NULL},
    {"PlaceHolder", GM_OP_FRAMEWORK_OP, GM_CTRL_NONE, 0, NULL, NULL},
    {"PointFromInputs", GM_OP_PASS_THROUGH, GM_CTRL_NONE, 0, NULL, NULL},
    {"Rank", SHAPE, GM_CTRL_NONE, 0, NULL, NULL},
    {"ReadVariableOp", IDENT, GM_CTRL_NONE, 0, NULL, NULL},
    {"RefData", REFDATA, GM_CTRL_NONE, 0, NULL, NULL},
    {"RefSwitch", GM_OP_REF_SWITCH, GM_CTRL_NONE, 0, NULL, NULL},
    {"Reshape", GM_OP_PASS_THROUGH_0 | VIEW | GM_OP_RESHAPE, GM_CTRL_NONE, 0, NULL, NULL},
    {"Scan", CF, GM_CTRL_WHILE, -1, NULL, NULL},
    {"ScatterAdd", REF, GM_CTRL_NONE, 0, NAMES("var", "indices", "updates"), NAMES("var")},
    {"ScatterUpdate", REF, GM_CTRL_NONE, 0, NAMES("var", "indices", "updates"), NAMES("var")},
    {"Shape", SHAPE, GM_CTRL_NONE, 0, NULL, NULL},
    {"ShapeN", SHAPE, GM_CTRL_NONE, 0, NULL, NULL},
    {"Size", SHAPE, GM_CTRL_NONE, 0, NULL, NULL},
    {"Squeeze", VIEW, GM_CTRL_NONE, 0, NULL, NULL},
    {"StatefulPartitionedCall", CF, GM_CTRL_PARTITIONED_CALL, -1, NULL, NULL},
    {"StatelessCase", CF, GM_CTRL_CASE, -1, NULL, NULL},
    {"StatelessIf", CF, GM_CTRL_IF, 2, NULL, NULL},
    {"StatelessWhile", CF | GM_OP_PASS_THROUGH, GM_CTRL_WHILE, 2, NULL, NULL},
    {"StreamMerge", GM_OP_MERGE | GM_OP_STREAM_MERGE, GM_CTRL_NONE, 0, NULL, NULL},
    {"StreamSwitch", UNREF, GM_CTRL_NONE, 0, NULL, NULL},
    {"Unsqueeze", VIEW, GM_CTRL_NONE, 0, NULL, NULL},
    {"Variable", VAR, GM_CTRL_NONE, 0, NULL, NULL},
    {"VariableV2", VAR, GM_CTRL_NONE, 0, NULL, NULL},
    {"While", CF | GM_OP_PASS_THROUGH, GM_CTRL_WHILE, 2, NULL, NULL},
    {"_If", CF, GM_CTRL_IF, 2, NULL, NULL},
    {"_While", CF | GM_OP_PASS_THROUGH, GM_CTRL_WHILE, 2, NULL, NULL},
};

static const gm_op_info k_unknown = {"", 0, GM_CTRL_NONE, 0, NULL, NULL};

static int cmp_type(const void *key, const void *elem)
{
    return strcmp((const char *)key, ((const gm_op_info *)elem)->type);
}

const gm_op_info *gm_op_lookup(const char *type)
{
    const gm_op_info *e = bsearch(type, k_ops, sizeof k_ops / sizeof k_ops[0], sizeof k_ops[0], cmp_type);
    return e ? e : &k_unknown;
}

size_t gm_op_table_size(void) { return sizeof k_ops / sizeof k_ops[0]; }
const gm_op_info *gm_op_table_at(size_t i) { return i < gm_op_table_size() ? &k_ops[i] : NULL; }

/* The flags a node attribute of GE's may set or clear. */
static const struct { gm_op_flag flag; const char *attr; } k_attr_flags[] = {
    {GM_OP_REFERENCE, "reference"},
    {GM_OP_INPUT_MUTABLE, "_input_mutable"},
};

bool gm_node_at_start(const gm_node *n)
{
    return !n->graph->parent && (gm_node_is(n, GM_OP_DATA) || gm_node_is(n, GM_OP_CONST) || gm_node_is(n, GM_OP_VARIABLE));
}

bool gm_node_computes_shape(const gm_node *n)
{
    if (gm_node_is(n, GM_OP_SHAPE_ONLY)) return true;
    if (!gm_node_is(n, GM_OP_RESHAPE)) return false;
    for (uint32_t k = 0; k < n->n_out; k++)
        for (uint32_t j = 0; j < n->out[k].n_uses; j++)
            if (!gm_node_is(n->out[k].uses[j].node, GM_OP_SHAPE_ONLY)) return false;
    return true;
}

bool gm_node_reads_input_data(const gm_node *n, uint32_t i)
{
    if (gm_node_computes_shape(n)) return false;
    const bool view = gm_node_is(n, GM_OP_RESHAPE) && n->n_out > 0 && n->out[0].desc.reuse_input &&
                      n->out[0].desc.reuse_input_index == (int64_t)i;
    return !view;
}

bool gm_subgraph_output_is_stacked(const gm_node *n, uint32_t k)
{
    /* GE's While passes output k through from input k: every output carried */
    if (k >= n->n_out || gm_node_ctrl_kind(n) != GM_CTRL_WHILE || (n->op->flags & GM_OP_PASS_THROUGH)) return false;
    const gm_attr *a = gm_attr_find(n->attrs, "_gm_carried_outputs");
    /* finalize refuses it on other nodes and outside [0, outputs] */
    return a && a->kind == GM_ATTR_INT && (int64_t)k >= a->u.i;
}

bool gm_body_output_is_stacked(const gm_node *o, uint32_t i)
{
    const gm_node *parent = o->graph->parent;
    if (!parent || !(o->op->flags & GM_OP_NETOUTPUT) || i >= o->n_in) return false;
    const gm_attr *a = gm_attr_find(o->in_desc[i].attrs, "_parent_node_index");
    return a && a->kind == GM_ATTR_INT && a->u.i >= 0 && a->u.i < (int64_t)parent->n_out &&
           gm_subgraph_output_is_stacked(parent, (uint32_t)a->u.i);
}

bool gm_node_writes_output(const gm_node *n, uint32_t k)
{
    bool root = n->graph->parent == NULL;
    /* a loop writes its stacked outputs itself, slice by slice; its carried ones are its bodies' */
    if (gm_node_is(n, GM_OP_CONTROL_FLOW)) return gm_subgraph_output_is_stacked(n, k);
    if (gm_node_is(n, GM_OP_PHONY) || gm_node_is(n, GM_OP_VIEW) ||
        gm_node_is(n, GM_OP_PASS_THROUGH) || gm_node_is(n, GM_OP_PASS_THROUGH_0))
        return false;
    if (!root && (gm_node_is(n, GM_OP_DATA) || gm_node_is(n, GM_OP_NETOUTPUT))) return false;
    int64_t in = 0;
    /* reuse_input: an in-place computation writes, a view does not */
    if (gm_desc_reuse_input(&n->out[k].desc, &in)) return gm_attr_find(n->attrs, "_output_inplace_ability") != NULL;
    return true;
}

bool gm_node_is_slow(const gm_node *n, gm_op_flag flag)
{
    for (size_t i = 0; i < sizeof k_attr_flags / sizeof k_attr_flags[0]; i++) {
        if (k_attr_flags[i].flag != flag) continue;
        const gm_attr *a = gm_attr_find(n->attrs, k_attr_flags[i].attr);
        if (a && (a->kind == GM_ATTR_BOOL || a->kind == GM_ATTR_INT)) return gm_attr_bool(a);
    }
    uint32_t flags = n->op->flags;
    if (flags & GM_OP_FRAMEWORK_OP) {
        if (!strcmp(n->op->type, "PlaceHolder")) {
            /* A partitioned graph's PlaceHolder stands for a node of the graph it was cut from
             * (parentOpType): for a weight's (Const, Variable) it is that weight, which lives
             * the whole run in fixed memory; GE's dumps hold ~100 MB of them. Only the weight
             * classes carry over: a Data's PlaceHolder is fed by another partition, not the user. */
            const char *parent = gm_attrs_get_string(n->attrs, "parentOpType");
            if (parent) flags |= gm_op_lookup(parent)->flags & (GM_OP_CONST | GM_OP_VARIABLE);
        } else {
            /* GE wraps ops it cannot run natively in a FrameworkOp: the wrapped type counts too. */
            const char *orig = gm_attrs_get_string(n->attrs, "original_type");
            if (orig) flags |= gm_op_lookup(orig)->flags;
        }
    }
    return (flags & flag) != 0;
}

gm_ctrl_kind gm_node_ctrl_kind(const gm_node *n) { return n->op->ctrl; }

static const gm_node *clean_before(const gm_node *n)
{
    for (uint32_t i = 0; i < n->ctrl_in.n; i++)
        if (gm_node_is(n->ctrl_in.v[i], GM_OP_ATOMIC_CLEAN)) return n->ctrl_in.v[i];
    return NULL;
}

static bool lists(const gm_node *n, const char *name, int64_t v)
{
    const gm_attr *a = gm_attr_find(n->attrs, name);
    if (a && a->kind == GM_ATTR_INT) return a->u.i == v;
    for (size_t i = 0; a && a->kind == GM_ATTR_LIST_INT && i < a->u.li.n; i++)
        if (a->u.li.v[i] == v) return true;
    return false;
}

const gm_node *gm_anchor_clean_node(const gm_node *n, bool out, uint32_t index)
{
    if (out) return lists(n, "atomic_output_index", index) ? clean_before(n) : NULL;
    if (!gm_node_is(n, GM_OP_HCCL_ATOMIC) || index >= n->n_in || !n->in[index].src) return NULL;
    const gm_node *c = clean_before(n->in[index].src);
    return c ? c : clean_before(n);
}

const char *gm_ctrl_kind_name(gm_ctrl_kind k)
{
    static const char *const names[] = {"none", "if", "case", "while", "partitioned_call"};
    return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "?";
}
