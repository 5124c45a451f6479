/*
 * anchor_attrs.c — GE's MarkInTypes / MarkOutTypes (reference §2.3), the graph flags of §2.4
 * and the choice of graphs of §2.1. Everything here reads node types through the op table and
 * GE's attribute names; nothing here depends on edges, so marking the anchors of a symbol
 * gives the same answer before and after the optimizer inserted copies elsewhere.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ref.h"
#include "conflict/anchor_attrs.h"
#include "ir/ir.h"
#include "ops/attr_table.h"
#include "ops/op_table.h"
#include "passes/pass_util2.h"
#include "util/alloc.h"

/* GE's rtMemTypes of ordinary device memory: default, HBM, DDR. */
#define LT_RT_MEMORY_DEFAULT INT64_C(0)
#define LT_RT_MEMORY_HBM INT64_C(2)
#define LT_RT_MEMORY_DDR INT64_C(4)

static const char *const k_names[GM_LT_COUNT + 1] = {
    "USER_MEMORY_INPUT",
    "USER_MEMORY_OUTPUT",
    "IMMUTABLE_ADDRESS_OUTPUT",
    "UNSUPPORTED_ADDRESS_REFRESH_OPERATOR_OUTPUT",
    "UNSUPPORTED_ADDRESS_REFRESH_OPERATOR_INPUT",
    "CONTINUOUS_INPUT",
    "CONTINUOUS_OUTPUT",
    "NOPADDING_CONTINUOUS_INPUT",
    "NOPADDING_CONTINUOUS_OUTPUT",
    "RTS_SPECIAL_TYPE_INPUT",
    "RTS_SPECIAL_TYPE_OUTPUT",
    "REFERENCE_OUTPUT",
    "NORMAL_INPUT",
    "NORMAL_OUTPUT",
    "RESERVED",
};

const char *gm_lt_name(gm_lt t) { return (unsigned)t < GM_LT_COUNT ? k_names[t] : k_names[GM_LT_COUNT]; }

const gm_lt gm_lt_in_order[6] = {GM_LT_USER_OUT, GM_LT_UNSUP_IN,  GM_LT_NOPAD_IN,
                                 GM_LT_CONT_IN,  GM_LT_RTS_IN,    GM_LT_NORMAL_IN};
const gm_lt gm_lt_out_order[8] = {GM_LT_USER_IN,  GM_LT_IMMUTABLE_OUT, GM_LT_UNSUP_OUT, GM_LT_NOPAD_OUT,
                                  GM_LT_CONT_OUT, GM_LT_REF_OUT,       GM_LT_RTS_OUT,   GM_LT_NORMAL_OUT};

size_t gm_lt_list(gm_lt_mask mask, bool out, gm_lt *v, size_t cap)
{
    const gm_lt *order = out ? gm_lt_out_order : gm_lt_in_order;
    size_t n_order = out ? 8 : 6, n = 0;
    for (size_t i = 0; i < n_order; i++) {
        if (!(mask & GM_LT_BIT(order[i]))) continue;
        if (n < cap) v[n] = order[i];
        n++;
    }
    return n;
}

const char *gm_lt_list_str(gm_lt_mask mask, bool out, char *buf, size_t cap)
{
    gm_lt v[8];
    size_t n = gm_lt_list(mask, out, v, 8), len = 0;
    if (!cap) return buf;
    buf[0] = '\0';
    int w = snprintf(buf, cap, "[");
    len = w > 0 ? (size_t)w : 0;
    for (size_t i = 0; i < n && len < cap; i++) {
        w = snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", gm_lt_name(v[i]));
        if (w < 0) break;
        len += (size_t)w;
    }
    if (len < cap) snprintf(buf + len, cap - len, "]");
    return buf;
}

/* ---- graph flags ---- */

static bool option_is(const gm_model *m, const char *key, const char *value)
{
    const char *v = gm_model_option(m, key);
    return v && strcmp(v, value) == 0;
}

bool gm_layout_graph_is_static(const gm_graph *g) { return gm_pass_graph_known_shape(g); }

gm_layout_flags gm_layout_flags_for(const gm_graph *g)
{
    const gm_model *m = g->model;
    const gm_graph *root = gm_model_root(m);
    gm_layout_flags f;
    f.root_static = gm_layout_graph_is_static(root);
    /* A known subgraph of a dynamic graph has its feature-map base set again at every run. */
    f.fm_refreshable = option_is(m, "ge.featureBaseRefreshable", "1") || (!f.root_static && gm_pass_graph_known_shape(g));
    /* Offline models and single-op scenes refresh no addresses of a no-task split's 2nd..
     * outputs fed by user data at load time. */
    f.user_in_nopad_cont_out = !(option_is(m, "ge.buildGraphMode", "offline") ||
                                 gm_attrs_get_bool(g->attrs, "_single_op_scene", false) ||
                                 gm_attrs_get_bool(root->attrs, "_single_op_scene", false));
    f.physical_refreshable = option_is(m, "ge.exec.staticMemoryPolicy", "4");
    return f;
}

typedef struct graph_static {
    const gm_graph *g;
    bool is_static;
} graph_static;

static int by_graph(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const graph_static *)a)->g, y = (uintptr_t)((const graph_static *)b)->g;
    return x < y ? -1 : x > y;
}

gm_status gm_layout_top_static_graphs(const gm_model *m, gm_graph ***out, size_t *n, gm_error *err)
{
    size_t ng = gm_model_graph_count(m);
    *out = NULL;
    *n = 0;
    graph_static *v = gm_malloc((ng ? ng : 1) * sizeof *v);
    gm_graph **tops = gm_malloc((ng ? ng : 1) * sizeof *tops);
    if (!v || !tops) {
        gm_free(v);
        gm_free(tops);
        return gm_error_set(err, GM_ERR_NOMEM, "%s: out of memory", gm_model_source(m));
    }
    /* Each graph's shape once: a graph owning many subgraphs is asked about many times. */
    for (size_t i = 0; i < ng; i++) v[i] = (graph_static){gm_model_graph(m, i), gm_layout_graph_is_static(gm_model_graph(m, i))};
    bool root_static = ng && v[0].is_static;
    qsort(v, ng, sizeof *v, by_graph);
    if (root_static) {
        tops[(*n)++] = gm_model_root(m);
    } else {
        for (size_t i = 1; i < ng; i++) {
            gm_graph *g = gm_model_graph(m, i);
            const gm_node *parent = gm_graph_parent(g);
            if (!parent) continue;
            graph_static key = {g, false}, *self = bsearch(&key, v, ng, sizeof *v, by_graph);
            key.g = parent->graph;
            graph_static *owner = bsearch(&key, v, ng, sizeof *v, by_graph);
            if (self && self->is_static && owner && !owner->is_static) tops[(*n)++] = g;
        }
    }
    gm_free(v);
    *out = tops;
    return GM_OK;
}

/* ---- marking ---- */

bool gm_layout_phys_refreshable(const gm_node *n) { return !gm_node_is(n, GM_OP_ADDR_UNREFRESHABLE); }

bool gm_layout_addr_refreshable(const gm_node *n, const gm_layout_flags *f)
{
    if (gm_node_is(n, GM_OP_ADDR_UNREFRESHABLE)) return false;
    /* GE asks the HCCL kernel store; graphmem's op table answers for every collective. A
     * custom-op factory (GE's third case) has no graphmem counterpart. */
    if (gm_node_is(n, GM_OP_HCCL_NO_ADDR_REFRESH) && !f->fm_refreshable) return false;
    return true;
}

static int64_t desc_rt_type(const gm_tensor_desc *d)
{
    switch (d->mem_type) {
    case GM_MEM_P2P: return GM_RT_MEMORY_P2P_DDR;
    case GM_MEM_TS: return GM_RT_MEMORY_TS;
    case GM_MEM_HOST: return GM_RT_MEMORY_HOST;
    default: return LT_RT_MEMORY_DEFAULT;
    }
}

int64_t gm_layout_mem_type(const gm_node *n, bool out, uint32_t index)
{
    int64_t t;
    if (gm_pass_attr_list_at(n->attrs, out ? "_output_memory_type" : "_input_memory_type", index, &t)) return t;
    if (out) return index < n->n_out ? desc_rt_type(&n->out[index].desc) : LT_RT_MEMORY_DEFAULT;
    return index < n->n_in ? desc_rt_type(&n->in_desc[index]) : LT_RT_MEMORY_DEFAULT;
}

/* GE's rule, followed as it is: only the ordinary device memories are not special — default (0),
 * HBM (2) and DDR (4). Every other type is, p2p and ts as before but also the rest (3, 5, 7,
 * host 0x81, L1, UB ...): an anchor in such memory cannot share a buffer with ordinary
 * memory. graphmem once listed p2p and ts alone; GE's list is the one its graphs are built for. */
bool gm_layout_mem_type_special(int64_t rt)
{
    return rt != LT_RT_MEMORY_DEFAULT && rt != LT_RT_MEMORY_HBM && rt != LT_RT_MEMORY_DDR;
}

bool gm_layout_needs_cont_in(const gm_node *n) { return gm_attrs_get_bool(n->attrs, "continuous_input", false); }
bool gm_layout_needs_nopad_in(const gm_node *n)
{
    return gm_attrs_get_bool(n->attrs, "_no_padding_continuous_input", false);
}
bool gm_layout_needs_cont_out(const gm_node *n) { return gm_attrs_get_bool(n->attrs, "continuous_output", false); }
bool gm_layout_needs_nopad_out(const gm_node *n)
{
    return gm_attrs_get_bool(n->attrs, "_no_padding_continuous_output", false);
}

gm_lt_mask gm_layout_in_types(const gm_graph *g, const gm_layout_flags *f, const gm_node *n, uint32_t i)
{
    gm_lt_mask m = 0;
    if (n->graph == g && gm_node_is(n, GM_OP_NETOUTPUT)) m |= GM_LT_BIT(GM_LT_USER_OUT);
    if (!gm_layout_addr_refreshable(n, f)) m |= GM_LT_BIT(GM_LT_UNSUP_IN);
    /* A node with one input has nothing to lay out next to it. */
    if (gm_layout_needs_nopad_in(n) && n->n_in > 1) m |= GM_LT_BIT(GM_LT_NOPAD_IN);
    if (gm_layout_needs_cont_in(n) && n->n_in > 1) m |= GM_LT_BIT(GM_LT_CONT_IN);
    if (gm_layout_mem_type_special(gm_layout_mem_type(n, false, i))) m |= GM_LT_BIT(GM_LT_RTS_IN);
    return m ? m : GM_LT_BIT(GM_LT_NORMAL_IN);
}

gm_node *gm_layout_ref_var_node(const gm_node *n, uint32_t k)
{
    if (k >= n->n_out) return NULL;
    const char *var = gm_attrs_get_string(n->out[k].desc.attrs, "ref_var_src_var_name");
    return var ? gm_model_find_node(n->graph->model, var) : NULL;
}

gm_lt_mask gm_layout_out_types(const gm_graph *g, const gm_layout_flags *f, const gm_node *n, uint32_t k,
                               bool ref_from_var)
{
    gm_lt_mask m = 0;
    bool user_in = n->graph == g && gm_node_is(n, GM_OP_DATA);
    if (user_in) m |= GM_LT_BIT(GM_LT_USER_IN);
    /* RefData is a Data-type node (user input), not an immutable one. */
    if (gm_node_is(n, GM_OP_CONST) || gm_node_is(n, GM_OP_VARIABLE)) m |= GM_LT_BIT(GM_LT_IMMUTABLE_OUT);
    if (!gm_layout_addr_refreshable(n, f)) m |= GM_LT_BIT(GM_LT_UNSUP_OUT);
    if (gm_layout_needs_nopad_out(n) && n->n_out > 1) m |= GM_LT_BIT(GM_LT_NOPAD_OUT);
    if (gm_layout_needs_cont_out(n) && n->n_out > 1) m |= GM_LT_BIT(GM_LT_CONT_OUT);
    uint32_t in;
    if (!user_in && (ref_from_var || gm_ref_input_of_output(n, k, &in))) m |= GM_LT_BIT(GM_LT_REF_OUT);
    if (gm_layout_mem_type_special(gm_layout_mem_type(n, true, k))) m |= GM_LT_BIT(GM_LT_RTS_OUT);
    return m ? m : GM_LT_BIT(GM_LT_NORMAL_OUT);
}
