/*
 * onnx_write.c — the ONNX writer: graphmem's IR to ModelProto bytes that Netron and the ONNX
 * tools open, and that onnx_read.c reads back to the same IR.
 *
 * Layout: the IR version and operator sets the model was read with (GM_ONNX_OPSETS_ATTR on the
 * root graph), else ir_version 8 and opset "" 17; plus "ai.graphmem" 1 and any other domain a
 * node names; producer "graphmem". The root graph is ModelProto.graph; a subgraph is a GRAPH attribute of
 * its parent node. In each graph, in the graph's (topological) node order:
 *  - a Data-like node (Data, RefData, AippData, AnnData) without inputs and with one output ->
 *    a graph input (ValueInfo: dtype, shape);
 *  - a Const-like or Variable node without inputs and with one output -> an initializer: the
 *    TensorProto the reader kept (GM_ATTR_ONNX_TENSOR: its data inline or its external reference,
 *    as they were), else dims and data_type without data (data_location EXTERNAL, location
 *    "graphmem:no-data");
 *  - the first NetOutput -> the graph outputs: its inputs' values in order ("" unconnected);
 *  - every other node -> a NodeProto: op_type = type; domain = its string attribute `domain`,
 *    else "" for an ONNX operator, else "ai.graphmem". Output k of node n is the value "n:k"
 *    (Data/Const values take the node's name; clashes get "_<j>"); value_info for each output;
 *  - captured values: an If, Loop or Scan (opset 9 on) of the default domain is written with
 *    its operator's inputs only (If: cond; Loop: M, cond, carried; Scan: states, scan inputs);
 *    its inputs past them, the outer values its bodies read, are captures: a body Data reading
 *    one (an If's branches: any) is no graph input but takes the outer value's name, so that
 *    the body reads it by name as ONNX does (scope_of; the IR as is where they cannot be said).
 *
 * What ONNX cannot say natively travels under the reserved prefix "graphmem." (text grammar
 * in onnx_meta.c); on a node its attributes are written "__graphmem.<...>" (GM_ONNX_NODE_PREFIX:
 * ONNX's internal-symbol form, which onnx.checker lets through on any operator), and
 * graphmem's internal _gm_* attributes as __gm_*:
 *  - model metadata_props: graphmem.format = "1" (marks the file as ours), graphmem.name = the
 *    model's name, graphmem.option.<key> = each option in order, graphmem.graph.<graph> = the
 *    graph's attributes (attrs text), one entry per graph in the model's graph order;
 *  - attributes of an ordinary node, in the node's order: int, string, list of int and list of
 *    string natively (INT, STRING, INTS, STRINGS), float and list of float natively when float32
 *    holds them exactly; every other value (bool, bytes, doubles, lists of bool, lists of lists
 *    of int, tensor descs) and every name that starts with "graphmem." or clashes with a
 *    subgraph attribute as "graphmem.attr.<name>" = STRING "<kind> <value>";
 *  - subgraphs as GRAPH attributes in the node's order: If: then_branch, else_branch; one body
 *    of a loop: body; While: cond, body; Case: branch_<i>; PartitionedCall: f; else
 *    subgraph_<i>. The GraphProto's name is the subgraph's name;
 *  - graphmem.stream INT (when not 0), graphmem.control_inputs STRINGS (node names),
 *    graphmem.input_names / graphmem.output_names STRINGS ("" = the op table's default),
 *    graphmem.captures STRINGS (the captured values in input order, which the reader gives
 *    back as the inputs past the operator's own);
 *  - graphmem.output.<k> STRING: output k's desc beyond the value_info (explicit size, memory
 *    type, reuse_input, layout, desc attributes; dtype or shape when ONNX cannot say them);
 *    graphmem.input.<i> STRING: input desc i, whole;
 *  - a node written as graph input, initializer, captured value or the outputs has a record
 *    "graphmem:{...}" (name, type, position in the node order, stream, control inputs, IR
 *    names, attributes, every output desc, the input descs) in the doc_string of its input
 *    ValueInfo / its initializer / a value_info of the outer value without a type (the value's
 *    own graph declares it) / the GraphProto.
 * A file without graphmem.format is read as plain ONNX, so tools that drop metadata lose the
 * extras but the graph stays readable.
 */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graphmem/io.h"
#include "io/onnx_internal.h"
#include "ir/ir.h"
#include "ops/op_table.h"
#include "util/alloc.h"

#define OPSET_VERSION 17

/* The standard ONNX operators (default domain), sorted by strcmp; every other type is written
 * in domain ai.graphmem. */
static const char *const k_onnx_ops[] = {
    "Abs", "Acos", "Acosh", "Add", "AffineGrid", "And", "ArgMax", "ArgMin", "Asin", "Asinh", "Atan", "Atanh",
    "Attention", "AveragePool", "BatchNormalization", "Bernoulli", "BitShift", "BitwiseAnd", "BitwiseNot",
    "BitwiseOr", "BitwiseXor", "BlackmanWindow", "Cast", "CastLike", "Ceil", "Celu", "CenterCropPad", "Clip",
    "Col2Im", "Compress", "Concat", "ConcatFromSequence", "Constant", "ConstantOfShape", "Conv", "ConvInteger",
    "ConvTranspose", "Cos", "Cosh", "CumSum", "DFT", "DeformConv", "DepthToSpace", "DequantizeLinear", "Det", "Div",
    "Dropout", "DynamicQuantizeLinear", "Einsum", "Elu", "Equal", "Erf", "Exp", "Expand", "EyeLike", "Flatten",
    "Floor", "GRU", "Gather", "GatherElements", "GatherND", "Gelu", "Gemm", "GlobalAveragePool", "GlobalLpPool",
    "GlobalMaxPool", "Greater", "GreaterOrEqual", "GridSample", "GroupNormalization", "HammingWindow",
    "HannWindow", "HardSigmoid", "HardSwish", "Hardmax", "Identity", "If", "ImageDecoder", "InstanceNormalization",
    "IsInf", "IsNaN", "LRN", "LSTM", "LayerNormalization", "LeakyRelu", "Less", "LessOrEqual", "Log", "LogSoftmax",
    "Loop", "LpNormalization", "LpPool", "MatMul", "MatMulInteger", "Max", "MaxPool", "MaxRoiPool", "MaxUnpool",
    "Mean", "MeanVarianceNormalization", "MelWeightMatrix", "Min", "Mish", "Mod", "Mul", "Multinomial", "Neg",
    "NegativeLogLikelihoodLoss", "NonMaxSuppression", "NonZero", "Not", "OneHot", "Optional", "OptionalGetElement",
    "OptionalHasElement", "Or", "PRelu", "Pad", "Pow", "QLinearConv", "QLinearMatMul", "QuantizeLinear", "RMSNormalization",
    "RNN", "RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Range", "Reciprocal",
    "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean", "ReduceMin", "ReduceProd",
    "ReduceSum", "ReduceSumSquare", "RegexFullMatch", "Relu", "Reshape", "Resize", "ReverseSequence", "RoiAlign",
    "RotaryEmbedding", "Round", "STFT", "Scan", "Scatter", "ScatterElements", "ScatterND", "Selu", "SequenceAt",
    "SequenceConstruct", "SequenceEmpty", "SequenceErase", "SequenceInsert", "SequenceLength", "SequenceMap",
    "Shape", "Shrink", "Sigmoid", "Sign", "Sin", "Sinh", "Size", "Slice", "Softmax", "SoftmaxCrossEntropyLoss",
    "Softplus", "Softsign", "SpaceToDepth", "Split", "SplitToSequence", "Sqrt", "Squeeze", "StringConcat",
    "StringNormalizer", "StringSplit", "Sub", "Sum", "Swish", "Tan", "Tanh", "TfIdfVectorizer", "ThresholdedRelu",
    "Tile", "TopK", "Transpose", "Trilu", "Unique", "Unsqueeze", "Upsample", "Where", "Xor",
};

static int cmp_str(const void *key, const void *elem) { return strcmp(key, *(const char *const *)elem); }

static bool is_onnx_op(const char *type)
{
    return bsearch(type, k_onnx_ops, sizeof k_onnx_ops / sizeof k_onnx_ops[0], sizeof k_onnx_ops[0], cmp_str) != NULL;
}

/* ---- the writer's state: every protobuf struct lives until the bytes are packed ------------ */

typedef struct wr {
    const gm_model *m;
    void **allocs;
    size_t n_allocs, cap_allocs;
    bool oom;
    gm_strmap values;    /* value names taken (keys in allocs) */
    gm_strmap outs;      /* node name -> char ** value name per output */
    const char **domains; /* domains used besides "" */
    size_t n_domains, cap_domains;
    ProtobufCMessage **unpacked; /* kept types and attributes (GM_ATTR_ONNX_TYPE_PREFIX,
                                    GM_ATTR_ONNX_ATTR_PREFIX), unpacked for the file */
    size_t n_unpacked, cap_unpacked;
    struct kept_init {
        Onnx__TensorProto *tp;  /* unpacked from GM_ATTR_ONNX_TENSOR */
        char *name, *doc;       /* its own, put back before it is freed */
    } *kept;
    size_t n_kept, cap_kept;
} wr;

static void *wr_keep(wr *w, void *p)
{
    if (!p || gm_grow((void **)&w->allocs, sizeof *w->allocs, w->n_allocs + 1, &w->cap_allocs)) {
        gm_free(p);
        w->oom = true;
        return NULL;
    }
    w->allocs[w->n_allocs++] = p;
    return p;
}

static void *wr_alloc(wr *w, size_t n) { return w->oom ? NULL : wr_keep(w, gm_calloc(1, n ? n : 1)); }

static char *wr_strdup(wr *w, const char *s) { return w->oom ? NULL : wr_keep(w, gm_strdup(s ? s : "")); }

static char *wr_printf(wr *w, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static char *wr_printf(wr *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = n >= 0 ? wr_alloc(w, (size_t)n + 1) : NULL;
    if (!s) return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

/* A growing array of pointers, handed to the protobuf struct (and the arena) when done. */
typedef struct pvec {
    void **v;
    size_t n, cap;
} pvec;

static void pv_push(wr *w, pvec *p, void *x)
{
    if (!x) {
        w->oom = true;
        return;
    }
    if (gm_grow((void **)&p->v, sizeof *p->v, p->n + 1, &p->cap)) {
        w->oom = true;
        return;
    }
    p->v[p->n++] = x;
}

/* Hands the array over: *n receives the count. */
static void *pv_take(wr *w, pvec *p, size_t *n)
{
    *n = p->n;
    void *v = p->v;
    p->v = NULL;
    p->n = p->cap = 0;
    if (!v) {
        *n = 0;
        return NULL;
    }
    return wr_keep(w, v);
}

/* A graphmem text, kept in the arena. */
static char *wr_text(wr *w, gm_onnx_text *t, const char *prefix)
{
    if (t->oom) w->oom = true;
    char *s = w->oom ? NULL : wr_printf(w, "%s%s", prefix ? prefix : "", t->p ? t->p : "");
    gm_onnx_text_free(t);
    return s;
}

/* ---- roles and value names ----------------------------------------------------------------- */

typedef enum role { R_NODE, R_INPUT, R_INIT, R_OUTPUT } role;

static gm_node *first_netoutput(const gm_graph *g)
{
    for (uint32_t i = 0; i < g->nodes.n; i++) {
        gm_node *n = g->nodes.v[i];
        if (!n->dead && gm_node_is(n, GM_OP_NETOUTPUT)) return n;
    }
    return NULL;
}

/* An ONNX Constant that holds its value (the tensor the reader kept, or a value_* attribute): it
 * stays a Constant node, its value its own, where an initializer would have none. */
static bool constant_with_value(const gm_node *n)
{
    if (strcmp(n->type, "Constant") != 0) return false;
    for (const gm_attr *a = n->attrs; a; a = a->next)
        if (!strcmp(a->name, GM_ATTR_ONNX_TENSOR) || !strncmp(a->name, "value_", 6) || !strcmp(a->name, "sparse_value"))
            return true;
    return false;
}

static role role_of(const gm_node *n, const gm_node *netout)
{
    if (n == netout) return R_OUTPUT;
    if (n->n_in || n->n_out != 1 || constant_with_value(n)) return R_NODE;
    if ((n->op->flags & GM_OP_DATA) && !(n->op->flags & GM_OP_VARIABLE)) return R_INPUT;
    if (n->op->flags & (GM_OP_CONST | GM_OP_VARIABLE)) return R_INIT;
    return R_NODE;
}

static const char *take_value(wr *w, const char *base)
{
    char *s = NULL;
    if (!gm_strmap_get(&w->values, base)) s = wr_strdup(w, base);
    for (unsigned long j = 1; !s && !w->oom; j++) {
        char *c = wr_printf(w, "%s_%lu", base, j);
        if (c && !gm_strmap_get(&w->values, c)) s = c;
    }
    if (s && gm_strmap_put(&w->values, s, s)) w->oom = true;
    return w->oom ? NULL : s;
}

/* Names every output of the model: first the values of nodes written as graph inputs and
 * initializers (they keep their node's name), then the other nodes' values: the names they had
 * in the ONNX model they were read from (GM_ATTR_ONNX_VALUES), else "node:k". */
static void name_values(wr *w)
{
    for (int pass = 0; pass < 2; pass++) {
        for (size_t gi = 0; gi < w->m->n_graphs; gi++) {
            const gm_graph *g = w->m->graphs[gi];
            const gm_node *netout = first_netoutput(g);
            for (uint32_t i = 0; i < g->nodes.n && !w->oom; i++) {
                const gm_node *n = g->nodes.v[i];
                role r = role_of(n, netout);
                if (n->dead || (pass == 0) != (r == R_INPUT || r == R_INIT)) continue;
                char **names = wr_alloc(w, (n->n_out ? n->n_out : 1) * sizeof *names);
                if (!names || gm_strmap_put(&w->outs, n->name, names)) {
                    w->oom = true;
                    return;
                }
                const gm_attr *kept = pass == 1 ? gm_attr_find(n->attrs, GM_ATTR_ONNX_VALUES) : NULL;
                if (kept && kept->kind != GM_ATTR_LIST_STRING) kept = NULL;
                for (uint32_t k = 0; k < n->n_out; k++) {
                    const char *was = kept && k < kept->u.ls.n ? kept->u.ls.v[k] : NULL;
                    const char *base = pass == 0 ? n->name
                                       : was && *was ? was
                                                     : wr_printf(w, "%s:%u", n->name, k);
                    names[k] = base ? (char *)take_value(w, base) : NULL;
                }
            }
        }
    }
}

/* The value an input reads: its producer's output name, or "" (unconnected). */
static const char *input_value(const wr *w, const gm_node *n, uint32_t i)
{
    const gm_in_slot *s = &n->in[i];
    const char *src = s->src ? s->src->name : s->src_name;
    if (!src) return "";
    char **names = gm_strmap_get(&w->outs, src);
    const gm_node *p = s->src ? s->src : gm_strmap_get(&w->m->node_by_name, src);
    if (!names || !p || s->src_index < 0 || (uint32_t)s->src_index >= p->n_out) return "";
    return names[s->src_index];
}

/* ---- captured values ----------------------------------------------------------------------- */

/* An ONNX body reads the values of the graphs around it by name: an If's branches have no inputs,
 * and a Loop's or Scan's body has only those of the operator (iteration, cond, carried values;
 * states, scan inputs). graphmem's IR makes each such value an explicit input of the node that
 * owns the body, past the operator's own (the reader appends them, onnx_read_scope.c), read in
 * the body by a Data node with `_parent_node_index` = that input. The writer gives them back as
 * captures: the node is written with its operator's inputs only, and the body's Data takes the
 * name of the outer value instead of being a graph input. */
typedef struct scope {
    const gm_node *owner; /* the node whose body is written; NULL: the root, or none captured */
    uint32_t own;         /* the owner's inputs written as inputs; those past them are captured */
    uint32_t first;       /* a body Data reading an owner input from this one on is a capture */
} scope;

/* The default domain's operator set the model is written with (as write_opsets gives it). */
static int64_t default_opset(const wr *w)
{
    const gm_attr *ops = gm_attr_find(w->m->graphs[0]->attrs, GM_ONNX_OPSETS_ATTR);
    size_t n = ops && ops->kind == GM_ATTR_LIST_STRING ? gm_attr_list_len(ops) : 0;
    for (size_t i = 0; i < n; i++) {
        const char *s = gm_attr_list_string(ops, i), *colon = strrchr(s, ':');
        if (colon && colon - s == 7 && !strncmp(s, "ai.onnx", 7)) return strtoll(colon + 1, NULL, 10);
    }
    return OPSET_VERSION;
}

/* How many of n's inputs its ONNX operator takes itself, for If, Loop and Scan of the default
 * domain (dom); -1 for any other node, which ONNX gives every input it has. Scan before opset 9
 * (sequence_lens first) keeps no count of its states, so it is written with every input too. */
static int64_t operator_inputs(const wr *w, const gm_node *n, const char *dom)
{
    if (!n->n_sub || (*dom && strcmp(dom, "ai.onnx") != 0)) return -1;
    /* the reader counts the loop-carried outputs when some are scan outputs (onnx_read.c) */
    int64_t carried = gm_attrs_get_int(n->attrs, "_gm_carried_outputs", n->n_out);
    if (!strcmp(n->type, "If")) return 1;
    if (!strcmp(n->type, "Loop")) return 2 + carried;
    if (!strcmp(n->type, "Scan") && default_opset(w) >= 9)
        return carried + gm_attrs_get_int(n->attrs, "num_scan_inputs", 0);
    return -1;
}

/* The outer value a body's Data is, when it is one the body captures; else NULL. */
static const char *captured_value(const wr *w, const scope *sc, const gm_node *d, role r)
{
    if (!sc->owner || r != R_INPUT) return NULL;
    int64_t p = gm_attrs_get_int(d->attrs, "_parent_node_index", -1);
    return p >= (int64_t)sc->first && p < (int64_t)sc->owner->n_in ? input_value(w, sc->owner, (uint32_t)p) : NULL;
}

static const gm_graph *subgraph_of(const wr *w, const gm_node *n, uint32_t i);

/* Whether the values a body Data captures can be said as captures: each is a value (an
 * unconnected input has no name to read), and no two Data of one body are the same value (they
 * would be one name, and read back as one node). Then the file reads back to the same IR. */
static bool captures_fit(wr *w, const scope *sc)
{
    const gm_node *n = sc->owner;
    for (uint32_t i = sc->own; i < n->n_in; i++)
        if (!*input_value(w, n, i)) return false;
    bool fit = true;
    for (uint32_t s = 0; s < n->n_sub && fit; s++) {
        const gm_graph *sg = subgraph_of(w, n, s);
        const gm_node *netout = sg ? first_netoutput(sg) : NULL;
        gm_strmap seen = {0};
        for (uint32_t i = 0; sg && i < sg->nodes.n && fit; i++) {
            const gm_node *d = sg->nodes.v[i];
            if (d->dead || role_of(d, netout) != R_INPUT) continue;
            int64_t p = gm_attrs_get_int(d->attrs, "_parent_node_index", -1);
            if (p < (int64_t)sc->first) continue;
            const char *v = p < (int64_t)n->n_in ? input_value(w, n, (uint32_t)p) : ""; /* "": no such input */
            fit = *v && !gm_strmap_get(&seen, v);
            if (fit && gm_strmap_put(&seen, v, (void *)v)) w->oom = true;
        }
        gm_strmap_free(&seen);
    }
    return fit && !w->oom;
}

/* How n's bodies read outer values: as captures where ONNX says so and they fit, else not at
 * all (every input written as an input, every body Data as a graph input, as graphmem has them). */
static scope scope_of(wr *w, const gm_node *n, const char *dom)
{
    scope none = {NULL, n->n_in, UINT32_MAX};
    int64_t own = operator_inputs(w, n, dom);
    if (own < 0 || own > (int64_t)n->n_in) return none;
    /* an If's branches have no inputs at all; a Loop's or Scan's body has the operator's */
    scope sc = {n, (uint32_t)own, strcmp(n->type, "If") == 0 ? 0 : (uint32_t)own};
    return captures_fit(w, &sc) ? sc : none;
}

/* ---- types --------------------------------------------------------------------------------- */

static bool dtype_fits(gm_dtype dt) { return dt == GM_DT_UNDEFINED || gm_onnx_dtype_from_gm(dt) != 0; }

static bool shape_fits(const gm_tensor_desc *d)
{
    for (int32_t i = 0; i < d->ndims; i++) {
        if (d->dims[i] < -1) return false;
    }
    return true;
}

static Onnx__TypeProto *type_of(wr *w, const gm_tensor_desc *d)
{
    Onnx__TypeProto *tp = wr_alloc(w, sizeof *tp);
    Onnx__TypeProto__Tensor *tt = wr_alloc(w, sizeof *tt);
    if (!tp || !tt) return NULL;
    onnx__type_proto__init(tp);
    onnx__type_proto__tensor__init(tt);
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    tt->has_elem_type = 1;
    tt->elem_type = gm_onnx_dtype_from_gm(d->dtype);
    if (d->ndims < 0 || !shape_fits(d)) return tp; /* no shape given, or one ONNX cannot say */
    Onnx__TensorShapeProto *sh = wr_alloc(w, sizeof *sh);
    Onnx__TensorShapeProto__Dimension **dims = wr_alloc(w, (size_t)(d->ndims ? d->ndims : 1) * sizeof *dims);
    if (!sh || !dims) return NULL;
    onnx__tensor_shape_proto__init(sh);
    sh->n_dim = (size_t)d->ndims;
    sh->dim = dims;
    for (int32_t i = 0; i < d->ndims; i++) {
        Onnx__TensorShapeProto__Dimension *dim = wr_alloc(w, sizeof *dim);
        if (!dim) return NULL;
        onnx__tensor_shape_proto__dimension__init(dim);
        if (d->dims[i] >= 0) {
            dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            dim->dim_value = d->dims[i];
        }
        dims[i] = dim;
    }
    tt->shape = sh;
    return tp;
}

/* A message the reader kept packed in bytes attribute a, unpacked and freed with the writer;
 * NULL for an attribute of another kind (not the reader's: a hand-written one of that name). The
 * reader packed the bytes: they fail to unpack only when memory runs out (NULL and w->oom). */
static void *unpack_kept_msg(wr *w, const ProtobufCMessageDescriptor *d, const gm_attr *a)
{
    ProtobufCMessage *m = NULL;
    if (a->kind != GM_ATTR_BYTES) return NULL;
    if (gm_grow((void **)&w->unpacked, sizeof *w->unpacked, w->n_unpacked + 1, &w->cap_unpacked) ||
        !(m = protobuf_c_message_unpack(d, NULL, a->u.s.len, (const uint8_t *)a->u.s.data))) {
        w->oom = true;
        return NULL;
    }
    w->unpacked[w->n_unpacked++] = m;
    return m;
}

/* The declared type of n's output k that is no tensor's (a sequence, an optional), as the reader
 * kept it (GM_ATTR_ONNX_TYPE_PREFIX); NULL for a tensor's. */
static Onnx__TypeProto *kept_type(wr *w, const gm_node *n, uint32_t k)
{
    char key[48];
    snprintf(key, sizeof key, GM_ATTR_ONNX_TYPE_PREFIX "%u", k);
    const gm_attr *a = n ? gm_attr_find(n->attrs, key) : NULL;
    return a ? unpack_kept_msg(w, &onnx__type_proto__descriptor, a) : NULL;
}

static Onnx__ValueInfoProto *value_info(wr *w, const char *name, const gm_tensor_desc *d)
{
    Onnx__ValueInfoProto *vi = wr_alloc(w, sizeof *vi);
    if (!vi) return NULL;
    onnx__value_info_proto__init(vi);
    vi->name = (char *)name;
    if (d) vi->type = type_of(w, d);
    return vi;
}

/* A desc that knows neither the element type nor a shape ONNX can say claims nothing a type
 * could carry: the value may not even be a tensor (a sequence or an optional that no declaration
 * named, so the reader kept no type for it). An inner value's value_info then goes without a
 * type, as ONNX lets it, rather than as a tensor of UNDEFINED elements, which onnx.checker's
 * shape inference refuses against the sequence its producer makes. What else the desc says
 * travels in the output's graphmem.output record, as for any shape ONNX cannot say. A graph's
 * inputs and outputs must have a type: theirs stay. */
static bool says_nothing(const gm_tensor_desc *d)
{
    return d->dtype == GM_DT_UNDEFINED && (d->ndims < 0 || !shape_fits(d));
}

/* A value_info for output k of n: its kept type, else the one its desc says (for an inner
 * value, none when the desc says nothing). */
static Onnx__ValueInfoProto *output_info(wr *w, const char *name, const gm_node *n, uint32_t k, bool inner)
{
    Onnx__TypeProto *kept = kept_type(w, n, k);
    const gm_tensor_desc *d = kept || !n || k >= n->n_out ? NULL : &n->out[k].desc;
    Onnx__ValueInfoProto *vi = value_info(w, name, d && !(inner && says_nothing(d)) ? d : NULL);
    if (vi && kept) vi->type = kept;
    return vi;
}

static char *record_of(wr *w, const gm_node *n, uint32_t pos)
{
    gm_onnx_text t = {0};
    gm_onnx_enc_record(&t, n, pos);
    return wr_text(w, &t, GM_ONNX_RECORD_MAGIC);
}

/* A kept TensorProto (GM_ATTR_ONNX_TENSOR) unpacked, freed with the writer (its own name and
 * doc_string put back first). The reader packed the bytes: they fail to unpack only when memory
 * runs out. NULL for an attribute of another kind. */
static Onnx__TensorProto *unpack_kept(wr *w, const gm_attr *a)
{
    if (a->kind != GM_ATTR_BYTES) return NULL;
    Onnx__TensorProto *tp = NULL;
    if (gm_grow((void **)&w->kept, sizeof *w->kept, w->n_kept + 1, &w->cap_kept) ||
        !(tp = onnx__tensor_proto__unpack(NULL, a->u.s.len, (const uint8_t *)a->u.s.data))) {
        w->oom = true;
        return NULL;
    }
    w->kept[w->n_kept++] = (struct kept_init){tp, tp->name, tp->doc_string};
    return tp;
}

/* The initializer the ONNX reader kept on n (GM_ATTR_ONNX_TENSOR): its data and dims as they
 * were, under the value's name, with n's record. NULL when n keeps none or it does not decode. */
static Onnx__TensorProto *kept_initializer(wr *w, const char *name, const gm_node *n, uint32_t pos)
{
    const gm_attr *a = gm_attr_find(n->attrs, GM_ATTR_ONNX_TENSOR);
    Onnx__TensorProto *tp = a ? unpack_kept(w, a) : NULL;
    if (!tp) return NULL;
    tp->name = (char *)name;
    tp->doc_string = record_of(w, n, pos);
    return tp;
}

static Onnx__AttributeProto *new_attr(wr *w, const char *name, Onnx__AttributeProto__AttributeType type);

/* A Constant's kept tensor as its "value" attribute (only a Constant keeps one as a node). */
static Onnx__AttributeProto *constant_value(wr *w, const gm_node *n, const gm_attr *a)
{
    Onnx__TensorProto *tp = strcmp(n->type, "Constant") == 0 ? unpack_kept(w, a) : NULL;
    Onnx__AttributeProto *ap = tp ? new_attr(w, "value", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR) : NULL;
    if (ap) ap->t = tp;
    return ap;
}

static Onnx__TensorProto *initializer(wr *w, const char *name, const gm_node *n, uint32_t pos)
{
    Onnx__TensorProto *kept = kept_initializer(w, name, n, pos);
    if (kept || w->oom) return kept;
    const gm_tensor_desc *d = &n->out[0].desc;
    Onnx__TensorProto *tp = wr_alloc(w, sizeof *tp);
    Onnx__StringStringEntryProto *loc = wr_alloc(w, sizeof *loc);
    Onnx__StringStringEntryProto **ext = wr_alloc(w, sizeof *ext);
    if (!tp || !loc || !ext) return NULL;
    onnx__tensor_proto__init(tp);
    onnx__string_string_entry_proto__init(loc);
    tp->name = (char *)name;
    tp->has_data_type = 1;
    tp->data_type = gm_onnx_dtype_from_gm(d->dtype);
    bool known = d->ndims >= 0;
    for (int32_t i = 0; i < d->ndims; i++) known &= d->dims[i] >= 0;
    if (known && d->ndims > 0) {
        tp->dims = wr_alloc(w, (size_t)d->ndims * sizeof *tp->dims);
        if (!tp->dims) return NULL;
        memcpy(tp->dims, d->dims, (size_t)d->ndims * sizeof *tp->dims);
        tp->n_dims = (size_t)d->ndims;
    }
    /* No data: an external location that names none, so viewers open the file. */
    tp->has_data_location = 1;
    tp->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    loc->key = "location";
    loc->value = GM_ONNX_NO_DATA;
    ext[0] = loc;
    tp->external_data = ext;
    tp->n_external_data = 1;
    tp->doc_string = record_of(w, n, pos);
    return tp;
}

/* ---- attributes ---------------------------------------------------------------------------- */

static bool float_fits(double v) { return !isnan(v) && (isinf(v) || (fabs(v) <= FLT_MAX && (double)(float)v == v)); }

static Onnx__AttributeProto *new_attr(wr *w, const char *name, Onnx__AttributeProto__AttributeType type)
{
    Onnx__AttributeProto *a = wr_alloc(w, sizeof *a);
    if (!a) return NULL;
    onnx__attribute_proto__init(a);
    a->name = (char *)name;
    a->has_type = 1;
    a->type = type;
    return a;
}

static Onnx__AttributeProto *string_attr(wr *w, const char *name, const char *s, size_t len)
{
    Onnx__AttributeProto *a = new_attr(w, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
    if (!a) return NULL;
    a->has_s = 1;
    a->s.data = (uint8_t *)(len ? s : "");
    a->s.len = len;
    return a;
}

static Onnx__AttributeProto *strings_attr(wr *w, const char *name, char *const *v, size_t n)
{
    Onnx__AttributeProto *a = new_attr(w, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS);
    ProtobufCBinaryData *s = wr_alloc(w, (n ? n : 1) * sizeof *s);
    if (!a || !s) return NULL;
    for (size_t i = 0; i < n; i++) {
        s[i].data = (uint8_t *)(v[i] ? v[i] : "");
        s[i].len = v[i] ? strlen(v[i]) : 0;
    }
    a->strings = s;
    a->n_strings = n;
    return a;
}

static Onnx__AttributeProto *int_attr(wr *w, const char *name, int64_t v)
{
    Onnx__AttributeProto *a = new_attr(w, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    if (!a) return NULL;
    a->has_i = 1;
    a->i = v;
    return a;
}

/* A graphmem attribute as an ONNX one: natively when ONNX holds it exactly, else encoded. */
static Onnx__AttributeProto *attr_of(wr *w, const gm_attr *ga, bool must_encode)
{
    bool native = !must_encode && *ga->name && strncmp(ga->name, GM_ONNX_PREFIX, strlen(GM_ONNX_PREFIX)) != 0 &&
                  strncmp(ga->name, GM_ONNX_NODE_PREFIX, strlen(GM_ONNX_NODE_PREFIX)) != 0;
    if (native && ga->kind == GM_ATTR_FLOAT) native = float_fits(ga->u.f);
    if (native && ga->kind == GM_ATTR_LIST_FLOAT) {
        for (size_t i = 0; i < ga->u.lf.n; i++) native &= float_fits(ga->u.lf.v[i]);
    }
    Onnx__AttributeProto *a = NULL;
    if (native) {
        switch (ga->kind) {
        case GM_ATTR_INT: return int_attr(w, ga->name, ga->u.i);
        case GM_ATTR_STRING: return string_attr(w, ga->name, ga->u.s.data, ga->u.s.len);
        case GM_ATTR_LIST_STRING: return strings_attr(w, ga->name, ga->u.ls.v, ga->u.ls.n);
        case GM_ATTR_FLOAT:
            if ((a = new_attr(w, ga->name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT))) {
                a->has_f = 1;
                a->f = (float)ga->u.f;
            }
            return a;
        case GM_ATTR_LIST_INT:
            if ((a = new_attr(w, ga->name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS))) {
                a->ints = ga->u.li.v;
                a->n_ints = ga->u.li.n;
            }
            return a;
        case GM_ATTR_LIST_FLOAT:
            if ((a = new_attr(w, ga->name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS))) {
                a->floats = wr_alloc(w, (ga->u.lf.n ? ga->u.lf.n : 1) * sizeof *a->floats);
                if (!a->floats) return NULL;
                for (size_t i = 0; i < ga->u.lf.n; i++) a->floats[i] = (float)ga->u.lf.v[i];
                a->n_floats = ga->u.lf.n;
            }
            return a;
        default: break;
        }
    }
    gm_onnx_text t = {0};
    gm_onnx_enc_value(&t, ga);
    char *text = wr_text(w, &t, NULL);
    char *name = wr_printf(w, GM_ONNX_NODE_PREFIX "attr.%s", ga->name);
    return text && name ? string_attr(w, name, text, strlen(text)) : NULL;
}

/* The attribute name of subgraph i of n. */
static const char *subgraph_attr_name(wr *w, const gm_node *n, uint32_t i)
{
    /* the ONNX reader names a body "<node>/<attribute>": the attribute it came as, given back */
    const gm_graph *sg = subgraph_of(w, n, i);
    size_t nl = strlen(n->name);
    if (sg && !strncmp(sg->name, n->name, nl) && sg->name[nl] == '/' && sg->name[nl + 1] &&
        !strchr(sg->name + nl + 1, '/'))
        return sg->name + nl + 1;
    switch (gm_node_ctrl_kind(n)) {
    case GM_CTRL_IF:
        if (n->n_sub == 2) return i == 0 ? "then_branch" : "else_branch";
        break;
    case GM_CTRL_WHILE:
        if (n->n_sub == 1) return "body";
        if (n->n_sub == 2) return i == 0 ? "cond" : "body";
        break;
    case GM_CTRL_CASE: return wr_printf(w, "branch_%u", i);
    case GM_CTRL_PARTITIONED_CALL:
        if (n->n_sub == 1) return "f";
        break;
    case GM_CTRL_NONE: break;
    }
    return wr_printf(w, "subgraph_%u", i);
}

static void use_domain(wr *w, const char *d)
{
    for (size_t i = 0; i < w->n_domains; i++) {
        if (strcmp(w->domains[i], d) == 0) return;
    }
    if (gm_grow((void **)&w->domains, sizeof *w->domains, w->n_domains + 1, &w->cap_domains)) w->oom = true;
    else w->domains[w->n_domains++] = d;
}

/* ---- nodes and graphs ---------------------------------------------------------------------- */

static Onnx__GraphProto *write_graph(wr *w, const gm_graph *g, const scope *sc);

static const gm_graph *subgraph_of(const wr *w, const gm_node *n, uint32_t i)
{
    if (n->sub && n->sub[i]) return n->sub[i];
    return n->sub_names ? gm_model_find_graph(w->m, n->sub_names[i]) : NULL;
}

static void node_meta_attrs(wr *w, const gm_node *n, uint32_t own, pvec *attrs)
{
    if (n->stream != 0) pv_push(w, attrs, int_attr(w, GM_ONNX_NODE_PREFIX "stream", n->stream));
    if (n->ctrl_in.n + n->n_ctrl_in_names) {
        char **v = wr_alloc(w, (n->ctrl_in.n + n->n_ctrl_in_names) * sizeof *v);
        if (!v) return;
        for (uint32_t i = 0; i < n->ctrl_in.n; i++) v[i] = n->ctrl_in.v[i]->name;
        for (uint32_t i = 0; i < n->n_ctrl_in_names; i++) v[n->ctrl_in.n + i] = n->ctrl_in_names[i];
        pv_push(w, attrs, strings_attr(w, GM_ONNX_NODE_PREFIX "control_inputs", v, n->ctrl_in.n + n->n_ctrl_in_names));
    }
    bool any = false;
    for (uint32_t i = 0; i < n->n_in; i++) any |= n->in_name[i] != NULL;
    if (any) pv_push(w, attrs, strings_attr(w, GM_ONNX_NODE_PREFIX "input_names", n->in_name, n->n_in));
    if (own < n->n_in) {
        /* the captured values, in input order: the reader gives them back as inputs own.. */
        char **v = wr_alloc(w, (n->n_in - own) * sizeof *v);
        if (!v) return;
        for (uint32_t i = own; i < n->n_in; i++) v[i - own] = (char *)input_value(w, n, i);
        pv_push(w, attrs, strings_attr(w, GM_ONNX_NODE_PREFIX "captures", v, n->n_in - own));
    }
    any = false;
    for (uint32_t k = 0; k < n->n_out; k++) any |= n->out[k].name != NULL;
    if (any) {
        char **v = wr_alloc(w, n->n_out * sizeof *v);
        if (!v) return;
        for (uint32_t k = 0; k < n->n_out; k++) v[k] = n->out[k].name;
        pv_push(w, attrs, strings_attr(w, GM_ONNX_NODE_PREFIX "output_names", v, n->n_out));
    }
    for (uint32_t k = 0; k < n->n_out; k++) {
        const gm_tensor_desc *d = &n->out[k].desc;
        unsigned fields = GM_ONNX_DESC_REST | (dtype_fits(d->dtype) ? 0 : GM_ONNX_DESC_DTYPE) |
                          (shape_fits(d) ? 0 : GM_ONNX_DESC_SHAPE);
        if (fields == GM_ONNX_DESC_REST && !gm_onnx_desc_has_rest(d)) continue;
        gm_onnx_text t = {0};
        gm_onnx_enc_desc(&t, d, fields);
        char *text = wr_text(w, &t, NULL);
        char *name = wr_printf(w, GM_ONNX_NODE_PREFIX "output.%u", k);
        if (text && name) pv_push(w, attrs, string_attr(w, name, text, strlen(text)));
    }
    for (uint32_t i = 0; i < n->n_in; i++) {
        const gm_tensor_desc *d = &n->in_desc[i];
        if (gm_desc_is_blank(d)) continue;
        gm_onnx_text t = {0};
        gm_onnx_enc_desc(&t, d, GM_ONNX_DESC_ALL);
        char *text = wr_text(w, &t, NULL);
        char *name = wr_printf(w, GM_ONNX_NODE_PREFIX "input.%u", i);
        if (text && name) pv_push(w, attrs, string_attr(w, name, text, strlen(text)));
    }
}

static Onnx__NodeProto *write_node(wr *w, const gm_node *n)
{
    Onnx__NodeProto *np = wr_alloc(w, sizeof *np);
    if (!np) return NULL;
    onnx__node_proto__init(np);
    np->name = n->name;
    np->op_type = (char *)n->type;
    const char *dom = gm_attrs_get_string(n->attrs, "domain");
    const gm_attr *da = gm_attr_find(n->attrs, "domain");
    if (!da || da->kind != GM_ATTR_STRING) dom = NULL;
    if (!dom) dom = is_onnx_op(n->type) ? "" : GM_ONNX_DOMAIN;
    if (*dom) {
        np->domain = (char *)dom;
        use_domain(w, dom);
    }
    np->input = wr_alloc(w, (n->n_in ? n->n_in : 1) * sizeof *np->input);
    np->output = wr_alloc(w, (n->n_out ? n->n_out : 1) * sizeof *np->output);
    char **outs = gm_strmap_get(&w->outs, n->name);
    if (!np->input || !np->output || !outs) {
        w->oom = true;
        return NULL;
    }
    /* the inputs past the operator's own are values its bodies capture */
    scope sc = scope_of(w, n, dom);
    for (uint32_t i = 0; i < sc.own; i++) np->input[i] = (char *)input_value(w, n, i);
    np->n_input = sc.own;
    for (uint32_t k = 0; k < n->n_out; k++) np->output[k] = outs[k];
    np->n_output = n->n_out;

    /* Attributes: the node's own in order, its subgraphs, then graphmem's. */
    const char *sub_names[64];
    uint32_t n_sub = n->n_sub < 64 ? n->n_sub : 64;
    for (uint32_t i = 0; i < n_sub; i++) sub_names[i] = subgraph_attr_name(w, n, i);
    pvec attrs = {0};
    for (const gm_attr *a = n->attrs; a; a = a->next) {
        /* the domain is the NodeProto's own field (the reader keeps it as this attribute): as an
         * attribute too it would be one the op's schema does not know, which onnx.checker refuses */
        if (a == da && dom && *dom) continue;
        if (!strcmp(a->name, GM_ATTR_ONNX_TENSOR)) {
            pv_push(w, &attrs, constant_value(w, n, a));
            continue;
        }
        if (!strncmp(a->name, GM_ATTR_ONNX_ATTR_PREFIX, sizeof GM_ATTR_ONNX_ATTR_PREFIX - 1)) {
            /* an attribute the reader kept whole (ConstantOfShape's value ...), as it came */
            if (a->kind == GM_ATTR_BYTES) pv_push(w, &attrs, unpack_kept_msg(w, &onnx__attribute_proto__descriptor, a));
            continue;
        }
        /* an output's type: its value_info has it; GE's residual: GE's writer's alone */
        if (gm_attr_is_kept_proto(a->name)) continue;
        bool clash = false;
        for (uint32_t i = 0; i < n_sub; i++) clash |= sub_names[i] && strcmp(sub_names[i], a->name) == 0;
        Onnx__AttributeProto *x = attr_of(w, a, clash);
        /* graphmem's internal attributes (_gm_*) travel as __gm_*: ONNX's internal-symbol form,
         * which onnx.checker lets through on any operator; the reader takes the "_" off */
        if (x && x->name == a->name && !strncmp(a->name, "_gm_", 4)) x->name = wr_printf(w, "_%s", a->name);
        pv_push(w, &attrs, x);
    }
    for (uint32_t i = 0; i < n->n_sub && !w->oom; i++) {
        const gm_graph *sg = subgraph_of(w, n, i);
        if (!sg) continue; /* an unresolved name: nothing to write */
        const char *an = i < n_sub ? sub_names[i] : wr_printf(w, "subgraph_%u", i);
        Onnx__AttributeProto *a = an ? new_attr(w, an, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH) : NULL;
        if (a) a->g = write_graph(w, sg, &sc);
        if (a && !a->g) a = NULL;
        pv_push(w, &attrs, a);
    }
    node_meta_attrs(w, n, sc.own, &attrs);
    np->attribute = pv_take(w, &attrs, &np->n_attribute);
    gm_free(attrs.v);
    return np;
}

static bool feeds(const gm_node *netout, const gm_node *n, uint32_t k)
{
    for (uint32_t i = 0; netout && i < netout->n_in; i++) {
        if (netout->in[i].src == n && (uint32_t)netout->in[i].src_index == k) return true;
    }
    return false;
}

/* A captured Data reads the outer value under its name: set before any node of the body (or of
 * a body inside it, written later) names its value. */
static void name_captures(wr *w, const gm_graph *g, const scope *sc, const gm_node *netout)
{
    for (uint32_t i = 0; sc->owner && i < g->nodes.n; i++) {
        const gm_node *n = g->nodes.v[i];
        const char *v = n->dead ? NULL : captured_value(w, sc, n, role_of(n, netout));
        char **names = v ? gm_strmap_get(&w->outs, n->name) : NULL;
        if (names) names[0] = (char *)v;
    }
}

static Onnx__GraphProto *write_graph(wr *w, const gm_graph *g, const scope *sc)
{
    Onnx__GraphProto *gp = wr_alloc(w, sizeof *gp);
    if (!gp) return NULL;
    onnx__graph_proto__init(gp);
    gp->name = g->name;
    const gm_node *netout = first_netoutput(g);
    name_captures(w, g, sc, netout);
    pvec inputs = {0}, inits = {0}, nodes = {0}, vis = {0}, outputs = {0};
    uint32_t pos = 0;
    for (uint32_t i = 0; i < g->nodes.n && !w->oom; i++) {
        const gm_node *n = g->nodes.v[i];
        if (n->dead) continue;
        char **names = gm_strmap_get(&w->outs, n->name);
        role r = role_of(n, netout);
        switch (r) {
        case R_INPUT: {
            if (captured_value(w, sc, n, r)) {
                /* no graph input: its record on a value_info of the outer value, without a type
                 * (the value's own graph declares it) */
                Onnx__ValueInfoProto *vi = names ? value_info(w, names[0], NULL) : NULL;
                if (vi) vi->doc_string = record_of(w, n, pos);
                pv_push(w, &vis, vi);
                break;
            }
            Onnx__ValueInfoProto *vi = names ? output_info(w, names[0], n, 0, false) : NULL;
            if (vi) vi->doc_string = record_of(w, n, pos);
            pv_push(w, &inputs, vi);
            break;
        }
        case R_INIT: pv_push(w, &inits, names ? initializer(w, names[0], n, pos) : NULL); break;
        case R_OUTPUT: gp->doc_string = record_of(w, n, pos); break;
        case R_NODE:
            pv_push(w, &nodes, write_node(w, n));
            for (uint32_t k = 0; k < n->n_out && names; k++) {
                if (!feeds(netout, n, k)) pv_push(w, &vis, output_info(w, names[k], n, k, true));
            }
            break;
        }
        pos++;
    }
    for (uint32_t i = 0; netout && i < netout->n_in && !w->oom; i++) {
        const gm_node *p = netout->in[i].src;
        bool has = p && (uint32_t)netout->in[i].src_index < p->n_out;
        pv_push(w, &outputs, has ? output_info(w, input_value(w, netout, i), p, (uint32_t)netout->in[i].src_index, false)
                                 : value_info(w, input_value(w, netout, i), NULL));
    }
    gp->input = pv_take(w, &inputs, &gp->n_input);
    gp->initializer = pv_take(w, &inits, &gp->n_initializer);
    gp->node = pv_take(w, &nodes, &gp->n_node);
    gp->value_info = pv_take(w, &vis, &gp->n_value_info);
    gp->output = pv_take(w, &outputs, &gp->n_output);
    gm_free(inputs.v);
    gm_free(inits.v);
    gm_free(nodes.v);
    gm_free(vis.v);
    gm_free(outputs.v);
    return w->oom ? NULL : gp;
}

/* ---- model --------------------------------------------------------------------------------- */

static void add_meta(wr *w, pvec *props, const char *key, const char *value)
{
    Onnx__StringStringEntryProto *e = wr_alloc(w, sizeof *e);
    if (!e) return;
    onnx__string_string_entry_proto__init(e);
    e->key = (char *)key;
    e->value = (char *)value;
    pv_push(w, props, e);
}

static Onnx__OperatorSetIdProto *opset(wr *w, const char *domain, int64_t version)
{
    Onnx__OperatorSetIdProto *o = wr_alloc(w, sizeof *o);
    if (!o) return NULL;
    onnx__operator_set_id_proto__init(o);
    o->domain = (char *)domain;
    o->has_version = 1;
    o->version = version;
    return o;
}

/* The operator sets the model came with (GM_ONNX_OPSETS_ATTR, and its IR version), else
 * OPSET_VERSION; then every other domain a node uses, at version 1. */
static void write_opsets(wr *w, pvec *sets, Onnx__ModelProto *mp)
{
    const gm_attr *list = w->m->graphs[0]->attrs;
    const gm_attr *ops = gm_attr_find(list, GM_ONNX_OPSETS_ATTR), *ir = gm_attr_find(list, GM_ONNX_IR_VERSION_ATTR);
    /* IR 4 is the first where an initializer need not also be a graph input, which is how this
     * writer gives them; a file read at 3 is written at 4, its operator sets unchanged */
    if (ir && ir->kind == GM_ATTR_INT && ir->u.i > 0) mp->ir_version = ir->u.i < 4 ? 4 : ir->u.i;
    bool have_default = false;
    size_t n = ops && ops->kind == GM_ATTR_LIST_STRING ? gm_attr_list_len(ops) : 0;
    const char **named = wr_alloc(w, (n ? n : 1) * sizeof *named);
    if (!named) return;
    size_t n_named = 0;
    for (size_t i = 0; i < n; i++) {
        const char *s = gm_attr_list_string(ops, i), *colon = strrchr(s, ':');
        if (!colon) continue;
        char *dom = wr_strdup(w, s);
        if (!dom) return;
        dom[colon - s] = '\0';
        bool dflt = !strcmp(dom, "ai.onnx");
        have_default |= dflt;
        named[n_named++] = dflt ? "" : dom;
        pv_push(w, sets, opset(w, dflt ? "" : dom, strtoll(colon + 1, NULL, 10)));
    }
    if (!have_default) pv_push(w, sets, opset(w, "", OPSET_VERSION));
    for (size_t i = 0; i < w->n_domains; i++) {
        bool listed = false;
        for (size_t k = 0; k < n_named; k++) listed |= !strcmp(named[k], w->domains[i]);
        if (!listed) pv_push(w, sets, opset(w, w->domains[i], 1));
    }
}

gm_status gm_model_write_onnx(const gm_model *m, void **data, size_t *len, gm_error *err)
{
    *data = NULL;
    if (len) *len = 0;
    const char *src = *m->source ? m->source : m->name;
    if (m->n_graphs == 0) return gm_error_set(err, GM_ERR_INPUT, "%s: the model has no graphs", src);
    wr w = {.m = m};
    Onnx__ModelProto mp;
    onnx__model_proto__init(&mp);
    mp.has_ir_version = 1;
    mp.ir_version = 8;
    mp.producer_name = "graphmem";
    mp.producer_version = GM_VERSION_STRING;
    name_values(&w);
    const scope root = {NULL, 0, UINT32_MAX};
    if (!w.oom) mp.graph = write_graph(&w, m->graphs[0], &root);

    pvec props = {0}, sets = {0};
    add_meta(&w, &props, GM_ONNX_FORMAT_KEY, "1");
    add_meta(&w, &props, GM_ONNX_PREFIX "name", m->name);
    for (size_t i = 0; i < m->n_options; i++)
        add_meta(&w, &props, wr_printf(&w, GM_ONNX_PREFIX "option.%s", m->options[i].key), m->options[i].value);
    for (size_t i = 0; i < m->n_graphs; i++) {
        gm_onnx_text t = {0};
        gm_onnx_enc_attrs(&t, m->graphs[i]->attrs);
        add_meta(&w, &props, wr_printf(&w, GM_ONNX_PREFIX "graph.%s", m->graphs[i]->name), wr_text(&w, &t, NULL));
    }
    write_opsets(&w, &sets, &mp);
    mp.metadata_props = pv_take(&w, &props, &mp.n_metadata_props);
    mp.opset_import = pv_take(&w, &sets, &mp.n_opset_import);
    gm_free(props.v);
    gm_free(sets.v);

    gm_status st = GM_OK;
    if (w.oom || !mp.graph) {
        st = gm_error_set(err, GM_ERR_NOMEM, "%s: out of memory", src);
    } else {
        size_t n = onnx__model_proto__get_packed_size(&mp);
        uint8_t *buf = gm_malloc(n ? n : 1);
        if (!buf) {
            st = gm_error_set(err, GM_ERR_NOMEM, "%s: out of memory", src);
        } else {
            onnx__model_proto__pack(&mp, buf);
            *data = buf;
            if (len) *len = n;
        }
    }
    for (size_t i = 0; i < w.n_kept; i++) {
        w.kept[i].tp->name = w.kept[i].name;
        w.kept[i].tp->doc_string = w.kept[i].doc;
        onnx__tensor_proto__free_unpacked(w.kept[i].tp, NULL);
    }
    gm_free(w.kept);
    for (size_t i = 0; i < w.n_unpacked; i++) protobuf_c_message_free_unpacked(w.unpacked[i], NULL);
    gm_free(w.unpacked);
    for (size_t i = 0; i < w.n_allocs; i++) gm_free(w.allocs[i]);
    gm_free(w.allocs);
    gm_free(w.domains);
    gm_strmap_free(&w.values);
    gm_strmap_free(&w.outs);
    return st;
}
