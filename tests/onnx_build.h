/*
 * onnx_build.h — ONNX models built in a test with protobuf-c: values, nodes, attributes,
 * graphs, packed to bytes. Every struct is kept in one list and freed together (free_kept).
 * Include after cmocka.h (assert_true) and the generated onnx.pb-c.h.
 */
#ifndef GM_TEST_ONNX_BUILD_H
#define GM_TEST_ONNX_BUILD_H

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"

/* Every protobuf struct of a built model, freed together. */
static void *g_keep[4096];
static size_t g_nkeep;

static inline void *keep(void *p)
{
    assert_true(g_nkeep < sizeof g_keep / sizeof g_keep[0]);
    g_keep[g_nkeep++] = p;
    return p;
}

static inline void free_kept(void)
{
    while (g_nkeep) free(g_keep[--g_nkeep]);
}

static inline char *kstr(const char *s) { return keep(strdup(s)); }

/* "a,b,,c" -> a kept array of strings ("" for an empty entry). */
static inline char **split_names(const char *list, size_t *n)
{
    *n = 0;
    char **v = keep(calloc(16, sizeof *v));
    if (!*list) return v;
    const char *p = list;
    for (;;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        char *s = keep(calloc(len + 1, 1));
        memcpy(s, p, len);
        v[(*n)++] = s;
        if (!e) break;
        p = e + 1;
    }
    return v;
}

/* A value of float type and the given shape (rank < 0: no type at all). */
static inline Onnx__ValueInfoProto *vinfo(const char *name, int32_t rank, ...)
{
    Onnx__ValueInfoProto *vi = keep(calloc(1, sizeof *vi));
    onnx__value_info_proto__init(vi);
    vi->name = kstr(name);
    if (rank < 0) return vi;
    Onnx__TypeProto *tp = keep(calloc(1, sizeof *tp));
    Onnx__TypeProto__Tensor *tt = keep(calloc(1, sizeof *tt));
    Onnx__TensorShapeProto *sh = keep(calloc(1, sizeof *sh));
    onnx__type_proto__init(tp);
    onnx__type_proto__tensor__init(tt);
    onnx__tensor_shape_proto__init(sh);
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    tt->has_elem_type = 1;
    tt->elem_type = 1;
    tt->shape = sh;
    sh->dim = keep(calloc((size_t)rank + 1, sizeof *sh->dim));
    va_list ap;
    va_start(ap, rank);
    for (int32_t i = 0; i < rank; i++) {
        Onnx__TensorShapeProto__Dimension *d = keep(calloc(1, sizeof *d));
        onnx__tensor_shape_proto__dimension__init(d);
        int v = va_arg(ap, int);
        if (v >= 0) {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            d->dim_value = v;
        }
        sh->dim[sh->n_dim++] = d;
    }
    va_end(ap);
    vi->type = tp;
    return vi;
}

static inline Onnx__NodeProto *bnode(const char *op, const char *name, const char *ins, const char *outs)
{
    Onnx__NodeProto *n = keep(calloc(1, sizeof *n));
    onnx__node_proto__init(n);
    n->op_type = kstr(op);
    n->name = kstr(name);
    n->input = split_names(ins, &n->n_input);
    n->output = split_names(outs, &n->n_output);
    n->attribute = keep(calloc(8, sizeof *n->attribute));
    return n;
}

static inline Onnx__AttributeProto *battr(Onnx__NodeProto *n, const char *name, Onnx__AttributeProto__AttributeType t)
{
    Onnx__AttributeProto *a = keep(calloc(1, sizeof *a));
    onnx__attribute_proto__init(a);
    a->name = kstr(name);
    a->has_type = 1;
    a->type = t;
    n->attribute[n->n_attribute++] = a;
    return a;
}

static inline void battr_graph(Onnx__NodeProto *n, const char *name, Onnx__GraphProto *g)
{
    battr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH)->g = g;
}

static inline void battr_int(Onnx__NodeProto *n, const char *name, int64_t v)
{
    Onnx__AttributeProto *a = battr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    a->has_i = 1;
    a->i = v;
}

static inline Onnx__GraphProto *bgraph(const char *name)
{
    Onnx__GraphProto *g = keep(calloc(1, sizeof *g));
    onnx__graph_proto__init(g);
    g->name = kstr(name);
    g->node = keep(calloc(16, sizeof *g->node));
    g->input = keep(calloc(8, sizeof *g->input));
    g->output = keep(calloc(8, sizeof *g->output));
    return g;
}

static inline void g_node(Onnx__GraphProto *g, Onnx__NodeProto *n) { g->node[g->n_node++] = n; }
static inline void g_in(Onnx__GraphProto *g, Onnx__ValueInfoProto *v) { g->input[g->n_input++] = v; }
static inline void g_out(Onnx__GraphProto *g, Onnx__ValueInfoProto *v) { g->output[g->n_output++] = v; }

/* The model of graph g importing the default operator set at `opset` (0: none named). */
static inline uint8_t *pack_model_opset(Onnx__GraphProto *g, int64_t opset, size_t *len)
{
    Onnx__ModelProto mp = ONNX__MODEL_PROTO__INIT;
    Onnx__OperatorSetIdProto os = ONNX__OPERATOR_SET_ID_PROTO__INIT, *sets[1] = {&os};
    mp.has_ir_version = 1;
    mp.ir_version = 8;
    mp.graph = g;
    if (opset > 0) {
        os.domain = (char *)"";
        os.has_version = 1;
        os.version = opset;
        mp.opset_import = sets;
        mp.n_opset_import = 1;
    }
    *len = onnx__model_proto__get_packed_size(&mp);
    uint8_t *buf = keep(malloc(*len));
    onnx__model_proto__pack(&mp, buf);
    return buf;
}

static inline uint8_t *pack_model(Onnx__GraphProto *g, size_t *len) { return pack_model_opset(g, 0, len); }

/* A Scan body: one state (a running sum s_in -> s_out) and one scan input x_i, each row kept. */
static inline Onnx__GraphProto *scan_sum_body(void)
{
    Onnx__GraphProto *body = bgraph("sum_body");
    g_in(body, vinfo("s_in", -1));
    g_in(body, vinfo("x_i", -1));
    g_node(body, bnode("Add", "acc", "s_in,x_i", "s_out"));
    g_node(body, bnode("Identity", "keep_row", "s_out", "row"));
    g_out(body, vinfo("s_out", -1));
    g_out(body, vinfo("row", -1));
    return body;
}

#endif
