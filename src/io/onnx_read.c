/*
 * onnx_read.c — the ONNX reader: ModelProto bytes to graphmem's IR.
 *
 * Mapping (plain ONNX files):
 *  - graph inputs that are not initializers -> `Data` (root: attr `index` = position; a body:
 *    `_parent_node_index` = position); initializers -> `Const` (dtype + dims; the TensorProto
 *    kept packed as GM_ATTR_ONNX_TENSOR, for the ONNX writer: external data is never loaded);
 *    the opset imports and IR version on the root graph (GM_ONNX_OPSETS_ATTR); every node -> a node of its op_type (a domain other than the
 *    standard one kept as attr `domain`); graph outputs -> one `NetOutput`, inputs in order.
 *  - If: input 0 = cond, then every outer-scope value the branches read (recursively, first
 *    use first, once each) as inputs 1..; each branch gets a `Data` per parent input it reads
 *    (`_parent_node_index` = that input) and a `NetOutput` whose input k carries
 *    `_parent_node_index` = k.
 *  - Loop: inputs (M, cond, v_initial..., captured...); body inputs (iter_num, cond_in,
 *    v_in...) -> Data with `_parent_node_index` = their position, captured values -> Data with
 *    their appended index; body outputs (cond_out, v_out..., scan_outputs...) -> NetOutput whose
 *    input k >= 1 carries `_parent_node_index` = k - 1 (cond_out none).
 *  - Scan: inputs (states..., scan inputs..., captured...); body inputs -> Data with
 *    `_parent_node_index` = position; body outputs (states..., scan outputs...) -> NetOutput
 *    input k with `_parent_node_index` = k (parent output k). Scan before opset 9 has input 0
 *    sequence_lens first: body input k is parent input k + 1.
 *  - Loop and Scan outputs past the loop-carried ones are scan outputs, each a new tensor that
 *    stacks every iteration's body output: the node gets `_gm_carried_outputs` = the count of
 *    carried ones (ops/op_table.h, gm_subgraph_output_is_stacked); Scan before opset 9 carries
 *    none, for its states too gather one body value per batch entry.
 *  - Names: an ONNX node name is kept when it is non-empty, used once in the whole model and is
 *    no graph input or initializer name; otherwise "<op_type>_<k>". Data/Const take their value
 *    name; clashes get a "_<n>" suffix. Bodies are named "<node>/then_branch" etc.
 *  - Attributes: INT, FLOAT, STRING, INTS, FLOATS, STRINGS as graphmem attributes (a STRING
 *    holding a NUL as bytes; a name GE's attribute table knows with another kind, such as an
 *    INT where a list is expected, as "onnx.<name>"); TENSOR, GRAPH and the rest skipped.
 *  - Output descs: the declared type (value_info, graph inputs/outputs, initializers; symbolic
 *    dims -1 unless fixed by `dims`), completed by shape inference (onnx_read_infer.c); what
 *    stays unknown is a -1 dim, or [-2] for an unknown rank.
 *
 * Files graphmem wrote (model metadata `graphmem.format`) are read back exactly: see the
 * encoding at the top of onnx_write.c. A node's captured values (graphmem.captures) become its
 * inputs past the file's, before its bodies are built, and a body's Data for each comes from the
 * record on its value_info (build_captured). External data is never loaded. Before protobuf-c
 * unpacks anything, the encoding is walked against the schema, so that truncated, mis-typed or
 * absurdly nested input is refused without a deep recursion.
 *
 * This file: the model and graph structure. onnx_read_scope.c: names and value resolution
 * through nested scopes; onnx_read_attrs.c: attributes and graphmem's records;
 * onnx_read_infer.c: shape inference through control flow.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graphmem/io.h"
#include "io/onnx_internal.h"
#include "ir/ir.h"
#include "util/alloc.h"

/* Deepest protobuf message nesting accepted (each If/Loop body adds three levels). */
#define MAX_WIRE_DEPTH 100

typedef gm_onnx_reader rd;

/* ---- errors -------------------------------------------------------------------------------- */

#define fail gm_onnx_reader_fail

gm_status gm_onnx_reader_fail(rd *r, gm_status code, const char *fmt, ...)
{
    char msg[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return gm_error_set(r->err, code, "%s: %s", r->src, msg);
}

static gm_status oom(rd *r) { return fail(r, GM_ERR_NOMEM, "out of memory"); }

static const char *gname(const gm_onnx_rgraph *rg) { return rg->g->name; }

/* ---- the wire format ----------------------------------------------------------------------- */

static bool varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    *v = 0;
    for (unsigned shift = 0; shift < 64 && *p < end; shift += 7) {
        uint8_t b = *(*p)++;
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) return true;
    }
    return false;
}

/* Walks the encoding against the schema before protobuf-c unpacks it, so that deeply nested
 * messages (a stack overflow in a recursive decoder) are refused up front. */
static bool wire_ok(const uint8_t *p, size_t len, const ProtobufCMessageDescriptor *d, int depth)
{
    if (depth > MAX_WIRE_DEPTH) return false;
    const uint8_t *end = p + len;
    while (p < end) {
        uint64_t key, v;
        if (!varint(&p, end, &key) || (key >> 3) == 0 || (key >> 3) > UINT32_MAX) return false;
        switch (key & 7) {
        case 0:
            if (!varint(&p, end, &v)) return false;
            break;
        case 1:
            if (end - p < 8) return false;
            p += 8;
            break;
        case 5:
            if (end - p < 4) return false;
            p += 4;
            break;
        case 2: {
            if (!varint(&p, end, &v) || v > (uint64_t)(end - p)) return false;
            const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field(d, (unsigned)(key >> 3));
            if (f && f->type == PROTOBUF_C_TYPE_MESSAGE && !wire_ok(p, (size_t)v, f->descriptor, depth + 1))
                return false;
            p += v;
            break;
        }
        default:
            return false; /* groups (3, 4) are not in ONNX; 6, 7 do not exist */
        }
    }
    return true;
}

/* ---- graphs -------------------------------------------------------------------------------- */

/* A record node and the position its record gives it. */
typedef struct placed {
    gm_node *n;
    uint32_t at;  /* its index in the list as built */
    int64_t pos;
} placed;

/* Node order of a built graph: a file graphmem wrote gives every record node its position;
 * otherwise Data nodes (inputs, then captured values) come first. */
static gm_status order_nodes(rd *r, gm_onnx_rgraph *rg, const placed *pl, size_t npl)
{
    gm_node_vec *v = &rg->g->nodes;
    gm_node **order = gm_calloc(v->n ? v->n : 1, sizeof *order);
    if (!order) return oom(r);
    size_t k = 0;
    if (r->faithful) {
        bool *done = gm_calloc(v->n ? v->n : 1, sizeof *done);
        if (!done) {
            gm_free(order);
            return oom(r);
        }
        for (size_t i = 0; i < npl; i++) {
            if (pl[i].pos >= 0 && pl[i].pos < (int64_t)v->n && !order[pl[i].pos] && pl[i].at < v->n &&
                v->v[pl[i].at] == pl[i].n) {
                order[pl[i].pos] = pl[i].n;
                done[pl[i].at] = true;
            }
        }
        for (uint32_t i = 0; i < v->n; i++) {
            if (done[i]) continue;
            while (k < v->n && order[k]) k++;
            order[k] = v->v[i];
        }
        gm_free(done);
    } else {
        for (int pass = 0; pass < 2; pass++) {
            for (uint32_t i = 0; i < v->n; i++) {
                bool data = strcmp(v->v[i]->type, "Data") == 0;
                if (data == (pass == 0)) order[k++] = v->v[i];
            }
        }
    }
    /* The new list is the given order: positions and the topological tie-break keys follow it.
     * A graph without nodes has no array (v->v NULL), and memcpy from/to NULL is undefined even
     * for 0 bytes (found by fuzz/fuzz_onnx.c). */
    if (v->n) memcpy(v->v, order, v->n * sizeof *order);
    for (uint32_t i = 0; i < v->n; i++) {
        v->v[i]->given_pos = i;
        v->v[i]->order_key = (int64_t)i * GM_ORDER_KEY_GAP;
    }
    rg->g->key_lo = 0;
    rg->g->key_hi = v->n ? (int64_t)(v->n - 1) * GM_ORDER_KEY_GAP : 0;
    gm_free(order);
    return GM_OK;
}

static gm_status build_graph(rd *r, const Onnx__GraphProto *gp, gm_onnx_rgraph *outer, gm_onnx_capture *cap,
                             const char *name, const char *parent, gm_onnx_cf parent_cf, gm_onnx_rgraph **out);

/* The body graphs of a node (GRAPH attributes) in the order the IR lists them. */
static size_t body_attrs(rd *r, const Onnx__NodeProto *np, gm_onnx_cf cf, const Onnx__AttributeProto **bodies,
                         size_t cap)
{
    size_t n = 0;
    if (!r->faithful && cf == GM_ONNX_CF_IF) {
        bodies[n++] = gm_onnx_attr(np, "then_branch");
        bodies[n++] = gm_onnx_attr(np, "else_branch");
        return n;
    }
    if (!r->faithful && (cf == GM_ONNX_CF_LOOP || cf == GM_ONNX_CF_SCAN || cf == GM_ONNX_CF_SCAN8)) {
        bodies[n++] = gm_onnx_attr(np, "body");
        return n;
    }
    for (size_t i = 0; i < np->n_attribute && n < cap; i++) {
        if (np->attribute[i]->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH && np->attribute[i]->g)
            bodies[n++] = np->attribute[i];
    }
    return n;
}

static gm_onnx_cf cf_kind(const rd *r, const Onnx__NodeProto *np)
{
    bool std = !np->domain || !*np->domain || strcmp(np->domain, "ai.onnx") == 0;
    if (!r->faithful && std && strcmp(np->op_type, "If") == 0) return GM_ONNX_CF_IF;
    if (!r->faithful && std && strcmp(np->op_type, "Loop") == 0) return GM_ONNX_CF_LOOP;
    if (!r->faithful && std && strcmp(np->op_type, "Scan") == 0) return r->opset < 9 ? GM_ONNX_CF_SCAN8 : GM_ONNX_CF_SCAN;
    for (size_t i = 0; i < np->n_attribute; i++) {
        if (np->attribute[i]->g) return GM_ONNX_CF_OTHER;
    }
    return GM_ONNX_CF_NONE;
}

/* Adds data input `idx` of rg (or an unconnected one) to rn. */
static gm_status push_input(rd *r, gm_onnx_rgraph *rg, gm_onnx_rnode *rn, int32_t idx, size_t *cap)
{
    const gm_onnx_rtensor *t = idx >= 0 ? &rg->t[idx] : NULL;
    if (gm_node_add_input_by_name(rn->node, t ? t->producer : NULL, t ? (int32_t)t->out : 0) != GM_OK ||
        gm_grow((void **)&rn->in, sizeof *rn->in, rn->n_in + 1, cap))
        return oom(r);
    rn->in[rn->n_in++] = idx;
    return GM_OK;
}

/* How many of a Loop's or Scan's outputs are loop-carried (the body's final value); the rest
 * are scan outputs, stacked from every iteration (gm_subgraph_output_is_stacked). Loop: the
 * v_initial inputs after M and cond; Scan: the states before the num_scan_inputs scan inputs;
 * Scan before opset 9: none, for even its states gather one body value per batch entry. Other
 * nodes: every output. */
static int64_t carried_outputs(const gm_onnx_rnode *rn)
{
    int64_t c = rn->n_out;
    if (rn->cf == GM_ONNX_CF_LOOP) c = rn->n_onnx_in > 2 ? (int64_t)rn->n_onnx_in - 2 : 0;
    if (rn->cf == GM_ONNX_CF_SCAN) {
        int64_t m = gm_onnx_attr_int(rn->np, "num_scan_inputs", 0);
        c = m >= 0 && m <= (int64_t)rn->n_onnx_in ? (int64_t)rn->n_onnx_in - m : (int64_t)rn->n_onnx_in;
    }
    if (rn->cf == GM_ONNX_CF_SCAN8) c = 0;
    return c < (int64_t)rn->n_out ? c : (int64_t)rn->n_out;
}

/* An initializer's TensorProto (or a Constant's value), packed, on its node (GM_ATTR_ONNX_TENSOR):
 * its data inline or its external reference, as they were, for the ONNX writer to give back. The
 * record graphmem keeps in the doc_string is not kept twice, nor graphmem's own empty location. */
static gm_status keep_tensor(rd *r, gm_node *n, const Onnx__TensorProto *tp)
{
    for (size_t k = 0; k < tp->n_external_data; k++)
        if (tp->external_data[k] && tp->external_data[k]->value && !strcmp(tp->external_data[k]->value, GM_ONNX_NO_DATA))
            return GM_OK;
    Onnx__TensorProto copy = *tp;
    copy.doc_string = NULL;
    size_t len = onnx__tensor_proto__get_packed_size(&copy);
    uint8_t *buf = gm_malloc(len ? len : 1);
    if (!buf) return oom(r);
    onnx__tensor_proto__pack(&copy, buf);
    gm_status st = gm_attr_set_bytes(gm_node_attrs(n), GM_ATTR_ONNX_TENSOR, buf, len);
    gm_free(buf);
    return st == GM_OK ? GM_OK : oom(r);
}

/* A value name of a STRINGS attribute, NUL-terminated and kept until the reader is done (the
 * scopes borrow value names). NULL: out of memory. */
static const char *value_name(rd *r, const ProtobufCBinaryData *b)
{
    char *s = gm_strndup(b->len ? (const char *)b->data : "", b->len);
    if (!s || gm_grow((void **)&r->values, sizeof *r->values, r->n_values + 1, &r->cap_values)) {
        gm_free(s);
        return NULL;
    }
    return r->values[r->n_values++] = s;
}

/* The outer values the bodies of a node graphmem wrote read (GM_ONNX_NODE_PREFIX "captures":
 * ONNX has them as captures, onnx_write.c): its inputs past the operator's own, in order. Its
 * bodies find each as a value of their own, rebuilt from its record (build_captured). */
static gm_status push_captures(rd *r, gm_onnx_rgraph *rg, gm_onnx_rnode *rn, size_t *cap_in)
{
    const Onnx__NodeProto *np = rn->np;
    gm_status st = GM_OK;
    for (size_t i = 0; i < np->n_attribute; i++) {
        const Onnx__AttributeProto *a = np->attribute[i];
        if (!a->name || strcmp(gm_onnx_meta_name(a->name), GM_ONNX_PREFIX "captures") != 0) continue;
        for (size_t k = 0; k < a->n_strings && st == GM_OK; k++) {
            const char *v = value_name(r, &a->strings[k]);
            if (!v) return oom(r);
            int32_t idx = -1;
            if (*v && (idx = gm_onnx_resolve(r, rg, v, &st)) < 0 && st == GM_OK)
                return fail(r, GM_ERR_INPUT, "graph '%s': node '%s' (%s): captured value %zu names unknown value "
                            "'%s'", gname(rg), rn->node->name, np->op_type, k, v);
            if (st == GM_OK) st = push_input(r, rg, rn, idx, cap_in);
        }
    }
    return st;
}

/* The node's output value names, for the writer (GM_ATTR_ONNX_VALUES); "" for an output left
 * unnamed. */
static gm_status keep_value_names(gm_node *n, const Onnx__NodeProto *np)
{
    const char **v = gm_malloc(np->n_output * sizeof *v);
    if (!v) return GM_ERR_NOMEM;
    for (size_t k = 0; k < np->n_output; k++) v[k] = np->output[k] ? np->output[k] : "";
    gm_status st = gm_attr_set_list_string(&n->attrs, GM_ATTR_ONNX_VALUES, v, np->n_output);
    gm_free(v);
    return st;
}

static gm_status build_node(rd *r, gm_onnx_rgraph *rg, gm_onnx_rnode *rn, const char *name)
{
    const Onnx__NodeProto *np = rn->np;
    gm_status st = GM_OK;
    gm_node *n = gm_graph_add_node(rg->g, name, np->op_type, r->err);
    if (!n) return r->err ? r->err->code : GM_ERR_INPUT;
    rn->node = n;
    rn->cf = cf_kind(r, np);

    /* Attributes, in the file's order. */
    bool has_domain_attr = false;
    for (size_t i = 0; i < np->n_attribute && st == GM_OK; i++) {
        const Onnx__AttributeProto *a = np->attribute[i];
        if (!a->name || !*a->name)
            return fail(r, GM_ERR_INPUT, "graph '%s': node '%s': attribute %zu has no name", gname(rg), name, i);
        if (a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH || a->g) continue;
        /* A tensor attribute (Constant's value) is a shape too: the same dim rule as initializers. */
        const int64_t *tdims = a->t ? a->t->dims : a->sparse_tensor ? a->sparse_tensor->dims : NULL;
        size_t tn = a->t ? a->t->n_dims : a->sparse_tensor ? a->sparse_tensor->n_dims : 0;
        int64_t bad = tdims ? gm_shape_bad_dim(tdims, tn) : -1;
        if (bad >= 0)
            return fail(r, GM_ERR_INPUT, "graph '%s': node '%s': attribute '%s': dim %lld is %lld (" GM_SHAPE_DIM_RULE ")",
                        gname(rg), name, a->name, (long long)bad, (long long)tdims[bad]);
        if (r->faithful && gm_onnx_has_prefix(gm_onnx_meta_name(a->name), GM_ONNX_PREFIX "attr.")) {
            st = gm_onnx_decode_attr_value(r, n, a);
        } else if (r->faithful && gm_onnx_has_prefix(gm_onnx_meta_name(a->name), GM_ONNX_PREFIX)) {
            continue; /* applied once the inputs and outputs exist */
        } else if (a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR && a->t && !strcmp(a->name, "value") &&
                   np->op_type && !strcmp(np->op_type, "Constant")) {
            st = keep_tensor(r, n, a->t); /* a Constant's value, for the writer to give back */
        } else {
            has_domain_attr |= strcmp(a->name, "domain") == 0;
            /* __gm_*: graphmem's own _gm_* as the writer gives it (onnx_write.c) */
            st = gm_onnx_convert_attr(r, &n->attrs, gm_onnx_has_prefix(a->name, "__gm_") ? a->name + 1 : a->name, a);
        }
    }
    if (st != GM_OK) return st;
    if (np->n_output && keep_value_names(n, np) != GM_OK) return oom(r);
    if (!has_domain_attr && np->domain && *np->domain && strcmp(np->domain, "ai.onnx") != 0 &&
        strcmp(np->domain, GM_ONNX_DOMAIN) != 0 && gm_attr_set_string(&n->attrs, "domain", np->domain) != GM_OK)
        return oom(r);

    /* Inputs, then the bodies (which may capture outer values), then the captured values. */
    size_t cap_in = 0;
    for (size_t i = 0; i < np->n_input; i++) {
        const char *in = np->input[i];
        int32_t idx = -1;
        if (in && *in) {
            idx = gm_onnx_resolve(r, rg, in, &st);
            if (st != GM_OK) return st;
            if (idx < 0)
                return fail(r, GM_ERR_INPUT, "graph '%s': node '%s' (%s): input %zu names unknown value '%s'",
                            gname(rg), name, np->op_type, i, in);
        }
        if ((st = push_input(r, rg, rn, idx, &cap_in)) != GM_OK) return st;
    }
    rn->n_onnx_in = rn->n_in;
    if (r->faithful && (st = push_captures(r, rg, rn, &cap_in)) != GM_OK) return st;
    if (rn->cf != GM_ONNX_CF_NONE) {
        /* The bodies' GRAPH attributes, borrowed from the protobuf. */
        const Onnx__AttributeProto **bodies = gm_calloc(np->n_attribute + 2, sizeof *bodies);
        if (!bodies) return oom(r);
        size_t nb = body_attrs(r, np, rn->cf, bodies, np->n_attribute + 2);
        for (size_t i = 0; i < nb; i++) {
            if (!bodies[i] || !bodies[i]->g) {
                gm_free(bodies);
                return fail(r, GM_ERR_INPUT, "graph '%s': node '%s' (%s): missing subgraph attribute %s", gname(rg),
                            name, np->op_type,
                            rn->cf == GM_ONNX_CF_IF ? (i == 0 ? "then_branch" : "else_branch") : "body");
            }
        }
        rn->sub = gm_calloc(nb ? nb : 1, sizeof *rn->sub);
        if (!rn->sub) {
            gm_free(bodies);
            return oom(r);
        }
        gm_onnx_capture *cap = &rg->own_cap;
        cap->n = 0;
        cap->base = rn->n_in;
        for (size_t i = 0; i < nb; i++) {
            const char *gn;
            char *base = NULL;
            if (r->faithful && bodies[i]->g->name && *bodies[i]->g->name) {
                gn = bodies[i]->g->name;
            } else {
                size_t len = strlen(name) + strlen(bodies[i]->name) + 2;
                if (!(base = gm_malloc(len))) {
                    gm_free(bodies);
                    return oom(r);
                }
                snprintf(base, len, "%s/%s", name, bodies[i]->name);
                gn = base;
            }
            /* Graph names are unique in the model: suffix a clash. */
            char *unique = gm_strdup(gn);
            for (unsigned long k = 1; unique && !r->faithful && gm_model_find_graph(r->m, unique); k++) {
                size_t len = strlen(gn) + 24;
                gm_free(unique);
                if ((unique = gm_malloc(len))) snprintf(unique, len, "%s_%lu", gn, k);
            }
            gm_free(base);
            st = !unique ? oom(r)
                 : gm_node_add_subgraph_by_name(n, unique) == GM_OK
                     ? build_graph(r, bodies[i]->g, rg, cap, unique, name, rn->cf, &rn->sub[rn->n_sub])
                     : oom(r);
            gm_free(unique);
            if (st != GM_OK) {
                gm_free(bodies);
                return st;
            }
            rn->n_sub++;
        }
        gm_free(bodies);
        for (size_t i = 0; i < cap->n; i++) {
            int32_t idx = gm_onnx_resolve(r, rg, cap->names[i], &st);
            if (st != GM_OK) return st;
            if (idx < 0) return fail(r, GM_ERR_INTERNAL, "graph '%s': captured value '%s' vanished", gname(rg), cap->names[i]);
            if ((st = push_input(r, rg, rn, idx, &cap_in)) != GM_OK) return st;
        }
        cap->n = 0;
    }
    for (uint32_t k = 0; k < rn->n_out; k++) {
        if (!gm_node_add_output(n)) return oom(r);
        rg->t[rn->out[k]].node = n;
    }
    if (r->faithful) return gm_onnx_apply_meta_attrs(r, rg, rn);
    int64_t carried = carried_outputs(rn);
    if (carried < (int64_t)rn->n_out && gm_attr_set_int(&n->attrs, "_gm_carried_outputs", carried) != GM_OK) return oom(r);
    return GM_OK;
}

/* Graph inputs (not initializers) -> Data nodes. */
/* A node rebuilt from a graphmem record (a file graphmem wrote), remembered with the position
 * the record gives so the graph's order can be restored. Frees the record; NULL with *st set
 * on failure. */
static gm_node *record_node(rd *r, gm_onnx_rgraph *rg, gm_onnx_record *rec, placed **pl, size_t *npl,
                            size_t *cap_pl, gm_status *st)
{
    gm_node *n = gm_onnx_node_from_record(r, rg, rec, st);
    if (n && gm_grow((void **)pl, sizeof **pl, *npl + 1, cap_pl)) *st = oom(r);
    else if (n) (*pl)[(*npl)++] = (placed){n, rg->g->nodes.n - 1, rec->has_pos ? rec->pos : -1};
    gm_onnx_record_free(rec);
    if (!n || *st != GM_OK) {
        if (*st == GM_OK) *st = GM_ERR_INPUT;
        return NULL;
    }
    return n;
}

/* The node behind a graph input or an initializer: rebuilt from its graphmem record when the
 * file was written by graphmem (doc_string), else a fresh `type` node with one output named
 * after the tensor. *from_record says which. */
static gm_status source_node(rd *r, gm_onnx_rgraph *rg, const char *doc, const char *what, const char *tensor,
                             const char *type, placed **pl, size_t *npl, size_t *cap_pl, gm_node **out,
                             bool *from_record)
{
    gm_onnx_record rec;
    gm_status st = gm_onnx_parse_record(r, doc, what, &rec, from_record);
    if (st != GM_OK) return st;
    if (*from_record) return (*out = record_node(r, rg, &rec, pl, npl, cap_pl, &st)) ? GM_OK : st;
    const char *nm = gm_onnx_take_name(r, tensor, true);
    if (!nm) return oom(r);
    if (!(*out = gm_graph_add_node(rg->g, nm, type, r->err))) return r->err ? r->err->code : GM_ERR_INPUT;
    return gm_node_add_output(*out) ? GM_OK : oom(r);
}


/* Value `name` produced by source node n (a graph input, a captured value): its tensor, with
 * whether n came from a record and the parent input it reads (-1: none). -1 and *st on failure. */
static int32_t source_tensor(rd *r, gm_onnx_rgraph *rg, const char *name, gm_node *n, bool from_record,
                             int32_t parent_index, gm_status *st)
{
    int32_t idx = gm_onnx_add_tensor(r, rg, name, n->name, 0, st);
    if (idx < 0) return idx;
    rg->t[idx].node = n;
    rg->t[idx].from_record = from_record;
    rg->t[idx].parent_index = parent_index;
    return idx;
}
static gm_status build_inputs(rd *r, gm_onnx_rgraph *rg, gm_onnx_cf parent_cf, const gm_strmap *inits, placed **pl,
                              size_t *npl, size_t *cap_pl)
{
    const Onnx__GraphProto *gp = rg->gp;
    int64_t data_pos = 0;
    /* Scan before opset 9: the parent's input 0 is sequence_lens, which no body input reads */
    const size_t shift = parent_cf == GM_ONNX_CF_SCAN8 ? 1 : 0;
    gm_status st = GM_OK;
    for (size_t i = 0; i < gp->n_input; i++) {
        const Onnx__ValueInfoProto *vi = gp->input[i];
        if (!vi->name || !*vi->name)
            return fail(r, GM_ERR_INPUT, "graph '%s': input %zu has no name", gname(rg), i);
        if (gm_strmap_get(inits, vi->name)) continue;
        char what[300];
        snprintf(what, sizeof what, "graph '%s': input '%s'", gname(rg), vi->name);
        gm_node *n;
        bool has;
        if ((st = source_node(r, rg, vi->doc_string, what, vi->name, "Data", pl, npl, cap_pl, &n, &has)) != GM_OK)
            return st;
        if (!has && (rg->outer ? gm_attr_set_int(&n->attrs, "_parent_node_index", (int64_t)(i + shift))
                               : gm_attr_set_int(&n->attrs, "index", data_pos)) != GM_OK)
            return oom(r);
        int32_t idx = source_tensor(r, rg, vi->name, n, has, rg->outer ? (int32_t)(i + shift) : -1, &st);
        if (idx < 0) return st;
        if ((st = gm_onnx_declare(r, rg, idx, vi)) != GM_OK) return st;
        data_pos++;
    }
    return GM_OK;
}

/* The outer values a body of a file graphmem wrote reads: each a Data node rebuilt from the
 * record on a value_info of that value (onnx_write.c), the body's own value under the outer
 * name, which the node owning the body has as an input (push_captures). */
static gm_status build_captured(rd *r, gm_onnx_rgraph *rg, placed **pl, size_t *npl, size_t *cap_pl)
{
    const Onnx__GraphProto *gp = rg->gp;
    gm_status st = GM_OK;
    for (size_t i = 0; i < gp->n_value_info && rg->outer; i++) {
        const Onnx__ValueInfoProto *vi = gp->value_info[i];
        if (!vi->name || !gm_onnx_has_prefix(vi->doc_string, GM_ONNX_RECORD_MAGIC)) continue;
        char what[300];
        snprintf(what, sizeof what, "graph '%s': captured value '%s'", gname(rg), vi->name);
        gm_node *n;
        bool has;
        if ((st = source_node(r, rg, vi->doc_string, what, vi->name, "Data", pl, npl, cap_pl, &n, &has)) != GM_OK)
            return st;
        int32_t parent = (int32_t)gm_attrs_get_int(n->attrs, "_parent_node_index", -1);
        if (source_tensor(r, rg, vi->name, n, has, parent, &st) < 0) return st;
    }
    return GM_OK;
}

/* Initializers -> Const nodes (sparse ones too). */
static gm_status build_initializers(rd *r, gm_onnx_rgraph *rg, const gm_strmap *vis, placed **pl, size_t *npl,
                                    size_t *cap_pl)
{
    const Onnx__GraphProto *gp = rg->gp;
    gm_status st = GM_OK;
    for (size_t i = 0; i < gp->n_initializer + gp->n_sparse_initializer; i++) {
        bool sparse = i >= gp->n_initializer;
        const Onnx__SparseTensorProto *sp = sparse ? gp->sparse_initializer[i - gp->n_initializer] : NULL;
        const Onnx__TensorProto *tp = sparse ? sp->values : gp->initializer[i];
        if (!tp || !tp->name || !*tp->name)
            return fail(r, GM_ERR_INPUT, "graph '%s': initializer %zu has no name", gname(rg), i);
        gm_dtype dt;
        if (tp->has_data_type && !gm_onnx_dtype_to_gm(tp->data_type, &dt))
            return fail(r, GM_ERR_INPUT, "graph '%s': initializer '%s': unknown ONNX element type %d", gname(rg),
                        tp->name, (int)tp->data_type);
        /* A tensor's dims, by the one dim rule of every reader (ir.h). */
        const int64_t *tdims = sparse ? sp->dims : tp->dims;
        size_t tn = sparse ? sp->n_dims : tp->n_dims;
        int64_t bad = gm_shape_bad_dim(tdims, tn);
        if (bad >= 0)
            return fail(r, GM_ERR_INPUT, "graph '%s': initializer '%s': dim %lld is %lld (" GM_SHAPE_DIM_RULE ")",
                        gname(rg), tp->name, (long long)bad, (long long)tdims[bad]);
        char what[300];
        snprintf(what, sizeof what, "graph '%s': initializer '%s'", gname(rg), tp->name);
        gm_node *n;
        bool has;
        if ((st = source_node(r, rg, tp->doc_string, what, tp->name, "Const", pl, npl, cap_pl, &n, &has)) != GM_OK)
            return st;
        const char *nm = n->name;
        int32_t idx = gm_onnx_add_tensor(r, rg, tp->name, nm, 0, &st);
        if (idx < 0) return st;
        gm_onnx_rtensor *t = &rg->t[idx];
        t->node = n;
        if (!sparse && (st = keep_tensor(r, n, tp)) != GM_OK) return st;
        t->from_record = has;
        t->init = (int32_t)i;
        gm_onnx_info *decl = rg->facts ? &rg->facts[idx].decl : NULL;
        if (decl) gm_onnx_info_from_tensor(tp, decl);
        if (decl && sparse && sp->n_dims <= GM_ONNX_MAX_RANK) {
            decl->rank = (int32_t)sp->n_dims;
            for (size_t k = 0; k < sp->n_dims; k++) decl->dims[k] = sp->dims[k] >= 0 ? sp->dims[k] : -1;
            decl->vkind = GM_ONNX_VAL_NONE;
        }
        if ((st = gm_onnx_declare(r, rg, idx, gm_strmap_get(vis, tp->name))) != GM_OK) return st;
    }
    return GM_OK;
}

/* Graph outputs -> one NetOutput (when there are outputs or a record of one). */
static gm_status build_netoutput(rd *r, gm_onnx_rgraph *rg, gm_onnx_cf parent_cf, placed **pl, size_t *npl,
                                 size_t *cap_pl)
{
    const Onnx__GraphProto *gp = rg->gp;
    gm_onnx_record rec;
    bool has;
    char what[300];
    snprintf(what, sizeof what, "graph '%s'", gname(rg));
    gm_status st = gm_onnx_parse_record(r, gp->doc_string, what, &rec, &has);
    if (st != GM_OK) return st;
    if (!has && gp->n_output == 0) return GM_OK;
    gm_node *n;
    if (has) {
        n = gm_onnx_node_from_record(r, rg, &rec, &st);
        if (n && (gm_grow((void **)pl, sizeof **pl, *npl + 1, cap_pl) ? (st = oom(r), false) : true))
            (*pl)[(*npl)++] = (placed){n, rg->g->nodes.n - 1, rec.has_pos ? rec.pos : -1};
    } else {
        size_t len = strlen(gname(rg)) + 16;
        char *base = gm_malloc(len);
        const char *nm = NULL;
        if (base) {
            snprintf(base, len, "%s%sNetOutput", rg->outer ? gname(rg) : "", rg->outer ? "/" : "");
            nm = gm_onnx_take_name(r, base, false);
            gm_free(base);
        }
        if (!nm) return oom(r);
        n = gm_graph_add_node(rg->g, nm, "NetOutput", r->err);
        if (!n) st = r->err ? r->err->code : GM_ERR_INPUT;
    }
    if (!n || st != GM_OK) goto done;
    rg->outputs = gm_malloc((gp->n_output ? gp->n_output : 1) * sizeof *rg->outputs);
    if (!rg->outputs) {
        st = oom(r);
        goto done;
    }
    for (size_t i = 0; i < gp->n_output; i++) {
        const char *on = gp->output[i]->name;
        int32_t idx = -1;
        if (on && *on) {
            idx = gm_onnx_resolve(r, rg, on, &st);
            if (st != GM_OK) goto done;
            if (idx < 0) {
                st = fail(r, GM_ERR_INPUT, "graph '%s': output %zu names unknown value '%s'", gname(rg), i, on);
                goto done;
            }
        }
        rg->outputs[rg->n_outputs++] = idx;
        const gm_onnx_rtensor *t = idx >= 0 ? &rg->t[idx] : NULL;
        if (gm_node_add_input_by_name(n, t ? t->producer : NULL, t ? (int32_t)t->out : 0) != GM_OK) {
            st = oom(r);
            goto done;
        }
        /* Which output of the parent this body output becomes. */
        int64_t pi = -1;
        if (!has && rg->outer) pi = parent_cf == GM_ONNX_CF_LOOP ? (int64_t)i - 1 : (int64_t)i;
        gm_tensor_desc *in_d = pi >= 0 ? gm_node_input_desc(n, i) : NULL;
        if (pi >= 0 && (!in_d || gm_attr_set_int(&in_d->attrs, "_parent_node_index", pi) != GM_OK)) {
            st = oom(r);
            goto done;
        }
    }
    if (has) st = gm_onnx_record_inputs(r, rg, n, &rec);
done:
    if (has) gm_onnx_record_free(&rec);
    return st;
}

static gm_status build_graph(rd *r, const Onnx__GraphProto *gp, gm_onnx_rgraph *outer, gm_onnx_capture *cap,
                             const char *name, const char *parent, gm_onnx_cf parent_cf, gm_onnx_rgraph **out)
{
    gm_onnx_rgraph *rg = gm_calloc(1, sizeof *rg);
    if (!rg || gm_grow((void **)&r->graphs, sizeof *r->graphs, r->ng + 1, &r->capg)) {
        gm_free(rg);
        return oom(r);
    }
    r->graphs[r->ng++] = rg;
    *out = rg;
    rg->gp = gp;
    rg->outer = outer;
    rg->cap = cap;
    if (!(rg->g = gm_model_add_graph(r->m, name, parent, r->err))) return r->err ? r->err->code : GM_ERR_INPUT;

    gm_status st = GM_OK;
    gm_strmap vis = {0}, inits = {0};
    placed *pl = NULL;
    size_t npl = 0, cap_pl = 0;
    const char **node_names = NULL;
    /* What the file declares, by value name (graph inputs win over outputs over value_info). */
    for (size_t i = 0; i < gp->n_value_info && st == GM_OK; i++) {
        if (gp->value_info[i]->name && gm_strmap_put(&vis, gp->value_info[i]->name, gp->value_info[i])) st = oom(r);
    }
    for (size_t i = 0; i < gp->n_output && st == GM_OK; i++) {
        if (gp->output[i]->name && gm_strmap_put(&vis, gp->output[i]->name, gp->output[i])) st = oom(r);
    }
    for (size_t i = 0; i < gp->n_initializer && st == GM_OK; i++) {
        if (gp->initializer[i]->name && gm_strmap_put(&inits, gp->initializer[i]->name, (void *)1)) st = oom(r);
    }
    for (size_t i = 0; i < gp->n_sparse_initializer && st == GM_OK; i++) {
        const Onnx__TensorProto *v = gp->sparse_initializer[i]->values;
        if (v && v->name && gm_strmap_put(&inits, v->name, (void *)1)) st = oom(r);
    }
    if (st == GM_OK) st = build_inputs(r, rg, parent_cf, &inits, &pl, &npl, &cap_pl);
    if (st == GM_OK) st = build_initializers(r, rg, &vis, &pl, &npl, &cap_pl);
    if (st == GM_OK && r->faithful) st = build_captured(r, rg, &pl, &npl, &cap_pl);

    /* Every node's name and outputs first, so that values are known before their use. */
    if (st == GM_OK && gp->n_node) {
        rg->nodes = gm_calloc(gp->n_node, sizeof *rg->nodes);
        node_names = gm_calloc(gp->n_node, sizeof *node_names);
        if (!rg->nodes || !node_names) st = oom(r);
    }
    for (size_t j = 0; j < gp->n_node && st == GM_OK; j++) {
        const Onnx__NodeProto *np = gp->node[j];
        gm_onnx_rnode *rn = &rg->nodes[rg->nn++];
        rn->np = np;
        if (!np->op_type || !*np->op_type) {
            st = fail(r, GM_ERR_INPUT, "graph '%s': node %zu ('%s') has no op_type", name, j, np->name ? np->name : "");
            break;
        }
        const char *nm = np->name;
        bool keep = nm && *nm && (r->faithful || ((uintptr_t)gm_strmap_get(&r->onnx_names, nm) == 1 &&
                                                  !gm_strmap_get(&r->reserved, nm)));
        if (keep && !r->faithful && gm_strmap_get(&r->used, nm)) keep = false;
        node_names[j] = keep ? gm_onnx_take_name(r, nm, true) : gm_onnx_type_name(r, np->op_type);
        if (!node_names[j]) {
            st = oom(r);
            break;
        }
        rn->out = gm_malloc((np->n_output ? np->n_output : 1) * sizeof *rn->out);
        if (!rn->out) {
            st = oom(r);
            break;
        }
        for (size_t k = 0; k < np->n_output && st == GM_OK; k++) {
            const char *on = np->output[k] && *np->output[k] ? np->output[k] : NULL;
            int32_t idx = gm_onnx_add_tensor(r, rg, on, node_names[j], (uint32_t)k, &st);
            if (idx >= 0) {
                rn->out[rn->n_out++] = idx;
                if (on) st = gm_onnx_declare(r, rg, idx, gm_strmap_get(&vis, on));
            }
        }
    }
    for (size_t j = 0; j < rg->nn && st == GM_OK; j++) st = build_node(r, rg, &rg->nodes[j], node_names[j]);
    if (st == GM_OK) st = build_netoutput(r, rg, parent_cf, &pl, &npl, &cap_pl);
    if (st == GM_OK) st = order_nodes(r, rg, pl, npl);
    gm_free(node_names);
    gm_free(pl);
    gm_strmap_free(&vis);
    gm_strmap_free(&inits);
    return st;
}

/* ---- model level --------------------------------------------------------------------------- */

static const char *meta(const Onnx__ModelProto *mp, const char *key)
{
    for (size_t i = 0; i < mp->n_metadata_props; i++) {
        if (mp->metadata_props[i]->key && strcmp(mp->metadata_props[i]->key, key) == 0)
            return mp->metadata_props[i]->value ? mp->metadata_props[i]->value : "";
    }
    return NULL;
}

/* Model name, options, graph attributes and graph order of a file graphmem wrote. */
static gm_status apply_model_meta(rd *r, const Onnx__ModelProto *mp)
{
    const char *name = meta(mp, GM_ONNX_PREFIX "name");
    if (name) {
        char *s = gm_strdup(name);
        if (!s) return oom(r);
        gm_free(r->m->name);
        r->m->name = s;
    }
    size_t next = 1; /* graphs listed in the metadata move up to here, in its order */
    for (size_t i = 0; i < mp->n_metadata_props; i++) {
        const char *k = mp->metadata_props[i]->key, *v = mp->metadata_props[i]->value ? mp->metadata_props[i]->value : "";
        if (gm_onnx_has_prefix(k, GM_ONNX_PREFIX "option.")) {
            if (gm_model_set_option(r->m, k + strlen(GM_ONNX_PREFIX "option."), v) != GM_OK) return oom(r);
        } else if (gm_onnx_has_prefix(k, GM_ONNX_PREFIX "graph.")) {
            gm_graph *g = gm_model_find_graph(r->m, k + strlen(GM_ONNX_PREFIX "graph."));
            if (!g) return fail(r, GM_ERR_INPUT, "metadata '%s' names no graph of the model", k);
            char why[200];
            gm_status st = gm_onnx_dec_attrs(v, strlen(v), &g->attrs, why, sizeof why);
            if (st == GM_ERR_NOMEM) return oom(r);
            if (st != GM_OK) return fail(r, GM_ERR_INPUT, "metadata '%s': bad graphmem value: %s", k, why);
            for (size_t gi = next; gi < r->m->n_graphs; gi++) {
                if (r->m->graphs[gi] != g) continue;
                memmove(&r->m->graphs[next + 1], &r->m->graphs[next], (gi - next) * sizeof *r->m->graphs);
                r->m->graphs[next++] = g;
                break;
            }
        }
    }
    return GM_OK;
}

/* Descs of every value once inference is done: inferred facts, or exactly what a file
 * graphmem wrote says. */
/* A declared type that is no tensor's (a sequence, an optional, a map), packed on the node as
 * GM_ATTR_ONNX_TYPE_PREFIX "<k>", for the ONNX writer to declare the same: a desc says tensors. */
static gm_status keep_type(rd *r, gm_node *n, uint32_t k, const Onnx__ValueInfoProto *vi)
{
    if (!vi || !vi->type || vi->type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
        vi->type->value_case == ONNX__TYPE_PROTO__VALUE__NOT_SET)
        return GM_OK;
    size_t len = onnx__type_proto__get_packed_size(vi->type);
    uint8_t *buf = gm_malloc(len ? len : 1);
    if (!buf) return oom(r);
    onnx__type_proto__pack(vi->type, buf);
    char key[48];
    snprintf(key, sizeof key, GM_ATTR_ONNX_TYPE_PREFIX "%u", k);
    gm_status st = gm_attr_set_bytes(gm_node_attrs(n), key, buf, len);
    gm_free(buf);
    return st == GM_OK ? GM_OK : oom(r);
}

static gm_status set_descs(rd *r)
{
    for (size_t gi = 0; gi < r->ng; gi++) {
        gm_onnx_rgraph *rg = r->graphs[gi];
        for (size_t i = 0; i < rg->nt; i++) {
            gm_onnx_rtensor *t = &rg->t[i];
            if (!t->node || t->out >= t->node->n_out) continue;
            gm_status st = keep_type(r, t->node, t->out, t->vi);
            if (st != GM_OK) return st;
            if (t->from_record) continue; /* its record says the desc; a type no tensor has, only its value_info */
            gm_tensor_desc *d = &t->node->out[t->out].desc;
            if (r->faithful) {
                if (t->vi && (st = gm_onnx_desc_from_vi(r, t->vi, d)) != GM_OK) return st;
                if (t->overlay && (st = gm_onnx_decode_attr_desc(r, t->node, t->overlay, d)) != GM_OK) return st;
                continue;
            }
            const gm_onnx_info *f = &rg->facts[i].info;
            /* tensor_type shares a oneof with sequence_type ...: read it only when it is the case */
            if (f->rank < 0 && t->vi && t->vi->type && t->vi->type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE &&
                t->vi->type->tensor_type && t->vi->type->tensor_type->shape &&
                t->vi->type->tensor_type->shape->n_dim > GM_ONNX_MAX_RANK) {
                /* Beyond what inference tracks: the declared shape as it is. */
                if ((st = gm_onnx_desc_from_vi(r, t->vi, d)) != GM_OK) return st;
                continue;
            }
            d->dtype = f->dtype;
            static const int64_t unknown_rank = -2;
            st = f->rank < 0 ? gm_desc_set_shape(d, &unknown_rank, 1) : gm_desc_set_shape(d, f->dims, f->rank);
            if (st != GM_OK) return oom(r);
        }
    }
    return GM_OK;
}

static void rd_free(rd *r)
{
    for (size_t i = 0; i < r->ng; i++) {
        gm_onnx_rgraph *rg = r->graphs[i];
        for (size_t j = 0; j < rg->nn; j++) {
            gm_free(rg->nodes[j].in);
            gm_free(rg->nodes[j].out);
            gm_free(rg->nodes[j].sub);
        }
        gm_free(rg->nodes);
        gm_free(rg->t);
        gm_free(rg->facts);
        gm_free(rg->outputs);
        gm_free(rg->own_cap.names);
        gm_strmap_free(&rg->map);
        gm_free(rg);
    }
    gm_free(r->graphs);
    for (size_t i = 0; i < r->n_names; i++) gm_free(r->names[i]);
    gm_free(r->names);
    for (size_t i = 0; i < r->n_values; i++) gm_free(r->values[i]);
    gm_free(r->values);
    gm_strmap_free(&r->used);
    gm_strmap_free(&r->onnx_names);
    gm_strmap_free(&r->reserved);
    gm_strmap_free(&r->type_next);
}

/* The operator sets and IR version of a plain file, on the root graph (GM_ONNX_OPSETS_ATTR); a
 * file graphmem wrote has them in its graph metadata already. */
static gm_status keep_opsets(rd *r, const Onnx__ModelProto *mp)
{
    gm_graph *root = gm_model_graph(r->m, 0);
    char **names = gm_calloc(mp->n_opset_import ? mp->n_opset_import : 1, sizeof *names);
    if (!names) return oom(r);
    size_t n = 0;
    gm_status st = GM_OK;
    for (size_t i = 0; i < mp->n_opset_import && st == GM_OK; i++) {
        const Onnx__OperatorSetIdProto *os = mp->opset_import[i];
        if (!os || !os->has_version) continue;
        const char *d = os->domain && *os->domain ? os->domain : "ai.onnx";
        size_t cap = strlen(d) + 24;
        if (!(names[n] = gm_malloc(cap))) st = oom(r);
        else snprintf(names[n++], cap, "%s:%lld", d, (long long)os->version);
    }
    if (st == GM_OK && n && gm_attr_set_list_string(gm_graph_attrs(root), GM_ONNX_OPSETS_ATTR,
                                                    (const char *const *)names, n) != GM_OK)
        st = oom(r);
    if (st == GM_OK && mp->has_ir_version &&
        gm_attr_set_int(gm_graph_attrs(root), GM_ONNX_IR_VERSION_ATTR, mp->ir_version) != GM_OK)
        st = oom(r);
    for (size_t i = 0; i < n; i++) gm_free(names[i]);
    gm_free(names);
    return st;
}

/* protobuf-c allocates through gm_malloc, so that its allocations can fail by injection and an
 * out-of-memory decode is told apart from a malformed file. */
typedef struct pb_alloc {
    ProtobufCAllocator pc;
    bool failed;
} pb_alloc;

static void *pb_alloc_fn(void *data, size_t size)
{
    void *p = gm_malloc(size);
    if (!p) ((pb_alloc *)data)->failed = true;
    return p;
}

static void pb_free_fn(void *data, void *p)
{
    (void)data;
    gm_free(p);
}

/* The node of g (or of a body below it) that calls one of the model's local functions. */
static const Onnx__NodeProto *calls_function(const Onnx__ModelProto *mp, const Onnx__GraphProto *g,
                                             const Onnx__FunctionProto **fn, int depth)
{
    for (size_t i = 0; g && depth < 64 && i < g->n_node; i++) {
        const Onnx__NodeProto *n = g->node[i];
        const char *dom = n->domain ? n->domain : "";
        for (size_t k = 0; k < mp->n_functions; k++) {
            const Onnx__FunctionProto *f = mp->functions[k];
            if (f->name && n->op_type && !strcmp(f->name, n->op_type) && !strcmp(f->domain ? f->domain : "", dom)) {
                *fn = f;
                return n;
            }
        }
        for (size_t a = 0; a < n->n_attribute; a++) {
            const Onnx__AttributeProto *at = n->attribute[a];
            const Onnx__NodeProto *hit = at->g ? calls_function(mp, at->g, fn, depth + 1) : NULL;
            for (size_t j = 0; !hit && j < at->n_graphs; j++) hit = calls_function(mp, at->graphs[j], fn, depth + 1);
            if (hit) return hit;
        }
    }
    return NULL;
}

/* What graphmem declares unsupported in an ONNX model (README, "What graphmem does not read"):
 * a node that calls a model-local function, whose body would hold tensors graphmem cannot see,
 * and training_info, whose algorithm graphs would run beside the one planned. Refused by name
 * rather than planned as if they were not there. */
static gm_status refuse_unsupported(rd *r, const Onnx__ModelProto *mp)
{
    const Onnx__FunctionProto *fn = NULL;
    const Onnx__NodeProto *n = mp->n_functions ? calls_function(mp, mp->graph, &fn, 0) : NULL;
    if (n)
        return fail(r, GM_ERR_INPUT,
                    "node '%s' calls the model's local function '%s' (domain '%s'): ONNX functions are not supported; "
                    "inline them first (onnx.inliner.inline_local_functions)",
                    n->name && *n->name ? n->name : n->op_type, fn->name, fn->domain ? fn->domain : "");
    if (mp->n_training_info)
        return fail(r, GM_ERR_INPUT,
                    "the model has training_info (ONNX's training algorithm graphs): not supported; graphmem plans the "
                    "model's graph, so export the training step as the graph itself");
    return GM_OK;
}

gm_status gm_model_read_onnx(const void *data, size_t len, const char *source, const char *const *dims,
                             gm_model **out, gm_error *err)
{
    *out = NULL;
    rd r = {.src = source ? source : "<buffer>", .err = err, .dims = dims};
    gm_status st = gm_io_check_dims(r.src, dims, err);
    if (st != GM_OK) return st;
    if (len == 0) return fail(&r, GM_ERR_INPUT, "not a valid ONNX model (the file is empty)");
    if (!wire_ok(data, len, &onnx__model_proto__descriptor, 0))
        return fail(&r, GM_ERR_INPUT, "not a valid ONNX model (protobuf does not decode)");
    pb_alloc pa = {.pc = {.alloc = pb_alloc_fn, .free = pb_free_fn, .allocator_data = NULL}};
    pa.pc.allocator_data = &pa;
    Onnx__ModelProto *mp = onnx__model_proto__unpack(&pa.pc, len, data);
    if (!mp && pa.failed) return fail(&r, GM_ERR_NOMEM, "out of memory decoding the model");
    if (!mp) return fail(&r, GM_ERR_INPUT, "not a valid ONNX model (protobuf does not decode)");
    if (!mp->graph) {
        onnx__model_proto__free_unpacked(mp, &pa.pc);
        return fail(&r, GM_ERR_INPUT, "not a valid ONNX model (it has no graph)");
    }
    const char *fmt = meta(mp, GM_ONNX_FORMAT_KEY);
    r.faithful = fmt != NULL;
    if (fmt && strcmp(fmt, "1") != 0) {
        st = fail(&r, GM_ERR_INPUT, "%s is '%.40s': written by a newer graphmem (this one reads 1)",
                  GM_ONNX_FORMAT_KEY, fmt);
        onnx__model_proto__free_unpacked(mp, &pa.pc);
        return st;
    }
    if ((st = refuse_unsupported(&r, mp)) != GM_OK) {
        onnx__model_proto__free_unpacked(mp, &pa.pc);
        return st;
    }
    r.opset = INT64_MAX; /* none named: the newest operator set */
    for (size_t i = 0; i < mp->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *os = mp->opset_import[i];
        if (os && (!os->domain || !*os->domain || strcmp(os->domain, "ai.onnx") == 0) && os->has_version)
            r.opset = os->version;
    }
    const char *root = mp->graph->name && *mp->graph->name ? mp->graph->name : "main";
    r.m = gm_model_new(root);
    if (!r.m || gm_model_set_source(r.m, r.src) != GM_OK) st = oom(&r);
    gm_onnx_rgraph *rg = NULL;
    if (st == GM_OK) st = gm_onnx_check_dim_names(&r, mp->graph);
    if (st == GM_OK && !r.faithful) st = gm_onnx_count_names(&r, mp->graph);
    if (st == GM_OK) st = build_graph(&r, mp->graph, NULL, NULL, root, NULL, GM_ONNX_CF_NONE, &rg);
    if (st == GM_OK && !r.faithful && !gm_onnx_infer_graph(rg)) st = oom(&r);
    if (st == GM_OK && !r.faithful) st = keep_opsets(&r, mp);
    if (st == GM_OK) st = set_descs(&r);
    if (st == GM_OK && r.faithful) st = apply_model_meta(&r, mp);
    if (st == GM_OK && gm_model_set_fixed_dims(r.m, dims) != GM_OK) st = oom(&r);
    if (st == GM_OK) st = gm_model_finalize(r.m, err);
    rd_free(&r);
    onnx__model_proto__free_unpacked(mp, &pa.pc);
    if (st != GM_OK) {
        gm_model_free(r.m);
        if (err && err->code == GM_OK) gm_error_set(err, st, "%s: cannot read the ONNX model", r.src);
        return st;
    }
    *out = r.m;
    return GM_OK;
}
