/*
 * set_io_offset.c — GE's SetInputOutputOffsetPass (reference §3.8), run after memory
 * assignment. With zero copy the user's own buffers become a model's inputs and outputs; when a
 * node reads a user Data, or writes a model output, at an offset inside a larger block, the
 * runtime must patch the address at that offset. The pass records, on the user Data or the
 * NetOutput, pairs (basic offset, relative offset) in the list attributes
 * `zero_copy_basic_offset` / `zero_copy_relative_offset`:
 *  - inputs of a node connected to user Data (`_is_connected_to_data`): with
 *    `_input_memory_type`, every input not in L1/UB memory; else with `continuous_input`
 *    (Data -> Hcom) every input placed away from its Data's own offset;
 *  - outputs of a node connected to NetOutput (`_is_connected_to_netoutput`): a PhonyConcat-
 *    like (no-padding continuous input) node's inputs relative to its output; an HCCL op's
 *    continuous outputs relative to its first output that goes to the NetOutput.
 *
 * Offsets come from the node attributes `_gm_input_offsets` / `_gm_output_offsets` (LIST_INT,
 * one per input/output, as a GE post-build dump carries them and graphmem's planner writes
 * them). A node without them is left alone, so without a plan the pass does nothing. FFTS+
 * subgraphs (which GE skips) do not exist in graphmem.
 */
#include <stdio.h>

#include "analysis/ref.h"
#include "ops/op_table.h"
#include "passes/dedicated.h"
#include "ops/attr_table.h"
#include "ops/op_table.h"
#include "passes/pass_util2.h"

#define IN_OFFSETS "_gm_input_offsets"
#define OUT_OFFSETS "_gm_output_offsets"

static gm_status append_pair(gm_pass_ctx *c, gm_node *n, int64_t basic, int64_t relative)
{
    gm_status st = gm_pass_attr_list_append(c, &n->attrs, "zero_copy_basic_offset", basic);
    return st == GM_OK ? gm_pass_attr_list_append(c, &n->attrs, "zero_copy_relative_offset", relative) : st;
}

/* The user Data behind input i (crossing subgraph Data up to the root), or NULL. */
static gm_node *user_data_of(const gm_node *n, size_t i, int32_t *idx)
{
    gm_node *p = n->in[i].src;
    if (!p) return NULL;
    *idx = n->in[i].src_index;
    p = gm_pass_real_producer(p, idx, GM_CTRL_NONE, NULL, NULL);
    return p && !p->graph->parent && gm_node_is(p, GM_OP_DATA) ? p : NULL;
}

static bool is_connected_input(const gm_node *n, size_t i)
{
    const gm_attr *a = gm_attr_find(n->attrs, "_is_connected_to_data");
    if (a && a->kind == GM_ATTR_LIST_INT) return gm_pass_attr_list_has(n->attrs, "_is_connected_to_data", (int64_t)i);
    return true;
}

static gm_status input_offsets(gm_pass_ctx *c, gm_node *n)
{
    bool mem_types = gm_attr_find(n->attrs, "_input_memory_type") != NULL;
    bool continuous = gm_attrs_get_bool(n->attrs, "continuous_input", false);
    if (!mem_types && !continuous) return GM_OK;
    for (size_t i = 0; i < n->n_in; i++) {
        int64_t t = 0, in_off, basic;
        int32_t idx = 0;
        gm_node *d = user_data_of(n, i, &idx);
        if (!d || !gm_pass_attr_list_at(n->attrs, IN_OFFSETS, i, &in_off) ||
            !gm_pass_attr_list_at(d->attrs, OUT_OFFSETS, (size_t)idx, &basic))
            continue;
        if (mem_types) {
            gm_pass_attr_list_at(n->attrs, "_input_memory_type", i, &t);
            if (t == GM_RT_MEMORY_L1 || t == GM_RT_MEMORY_UB) continue;
        } else if (!is_connected_input(n, i) || in_off == basic) {
            continue;
        }
        gm_status st = append_pair(c, d, basic, in_off - basic);
        if (st != GM_OK) return st;
    }
    return GM_OK;
}

/* The NetOutput that finally carries o's input i: up through subgraph NetOutputs to the
 * parent's NetOutput, as far as one takes the value directly. */
static gm_node *outer_netoutput(gm_node *o, size_t i)
{
    for (size_t guard = 0; o->graph->parent && guard <= o->graph->model->n_graphs; guard++) {
        int64_t p = gm_attrs_get_int(o->in_desc[i].attrs, "_parent_node_index", -1);
        const gm_node *parent = o->graph->parent;
        if (p < 0 || p >= (int64_t)parent->n_out) break;
        gm_node *next = NULL;
        for (uint32_t j = 0; j < parent->out[p].n_uses && !next; j++) {
            if (!gm_node_is(parent->out[p].uses[j].node, GM_OP_NETOUTPUT)) continue;
            next = parent->out[p].uses[j].node;
            i = (size_t)parent->out[p].uses[j].index;
        }
        if (!next) break;
        o = next;
    }
    return o;
}

static gm_status concat_offsets(gm_pass_ctx *c, gm_node *n)
{
    int64_t basic;
    if (!n->n_out || !gm_pass_attr_list_at(n->attrs, OUT_OFFSETS, 0, &basic)) return GM_OK;
    for (uint32_t j = 0; j < n->out[0].n_uses; j++) {
        gm_node *o = n->out[0].uses[j].node;
        if (!gm_node_is(o, GM_OP_NETOUTPUT)) continue;
        o = outer_netoutput(o, (size_t)n->out[0].uses[j].index);
        for (uint32_t i = 0; i < n->n_in; i++) {
            const gm_node *q = n->in[i].src;
            int64_t off;
            if (!q || !gm_pass_attr_list_at(q->attrs, OUT_OFFSETS, (size_t)n->in[i].src_index, &off)) continue;
            gm_status st = append_pair(c, o, basic, off - basic);
            if (st != GM_OK) return st;
        }
    }
    return GM_OK;
}

static gm_status hccl_output_offsets(gm_pass_ctx *c, gm_node *n)
{
    bool have_basic = false;
    int64_t basic = 0;
    for (uint32_t k = 0; k < n->n_out; k++) {
        int64_t off;
        if (!gm_pass_attr_list_at(n->attrs, OUT_OFFSETS, k, &off)) continue;
        for (uint32_t j = 0; j < n->out[k].n_uses; j++) {
            gm_node *o = n->out[k].uses[j].node;
            if (!gm_node_is(o, GM_OP_NETOUTPUT)) continue;
            if (!have_basic) {
                basic = off;
                have_basic = true;
            }
            gm_status st = append_pair(c, outer_netoutput(o, (size_t)n->out[k].uses[j].index), basic, off - basic);
            if (st != GM_OK) return st;
        }
    }
    return GM_OK;
}

gm_status gm_pass_set_io_offset(gm_pass_ctx *c)
{
    for (size_t gi = 0; gi < c->m->n_graphs; gi++) {
        const gm_graph *g = c->m->graphs[gi];
        for (uint32_t x = 0; x < g->nodes.n; x++) {
            gm_node *n = g->nodes.v[x];
            gm_status st = GM_OK;
            if (gm_pass_attr_flag(n->attrs, "_is_connected_to_data")) st = input_offsets(c, n);
            if (st == GM_OK && gm_pass_attr_flag(n->attrs, "_is_connected_to_netoutput")) {
                if (gm_node_is(n, GM_OP_PHONY_CONCAT) || gm_attrs_get_bool(n->attrs, "_no_padding_continuous_input", false))
                    st = concat_offsets(c, n);
                else if (gm_node_is(n, GM_OP_HCCL) && gm_attrs_get_bool(n->attrs, "continuous_output", false))
                    st = hccl_output_offsets(c, n);
            }
            if (st != GM_OK) return st;
        }
    }
    return GM_OK;
}
