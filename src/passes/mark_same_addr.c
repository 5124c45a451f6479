/*
 * mark_same_addr.c — GE's MarkSameAddrPass (reference §3.7). StreamSwitch and
 * LabelSwitchByIndex cannot have their input addresses refreshed; in the dynamic+static reuse
 * mode the allocator must keep a fixed physical address for what they read. In known-shape
 * graphs the producer of such an input is marked: `_alloc_fixed_addr` = the output's name and
 * `_alloc_fixed_addr_index` = its index.
 *
 * The output's name is its IR name, else GE's default OpDesc name `__output<k>`. A producer
 * feeding several switches through several outputs keeps the last output marked, as one
 * attribute pair can hold only one.
 */
#include <stdio.h>

#include "ops/op_table.h"
#include "passes/dedicated.h"
#include "passes/pass_util2.h"

static gm_status mark_node(gm_pass_ctx *c, gm_node *n)
{
    for (uint32_t k = 0; k < n->n_out; k++) {
        const gm_out_slot *o = &n->out[k];
        bool to_switch = false;
        for (uint32_t j = 0; j < o->n_uses && !to_switch; j++)
            to_switch = gm_node_is(o->uses[j].node, GM_OP_ADDR_UNREFRESHABLE);
        if (!to_switch) continue;
        char dflt[32];
        const char *name = gm_node_output_name(n, k);
        if (!name) {
            snprintf(dflt, sizeof dflt, "__output%u", k);
            name = dflt;
        }
        if (gm_attr_set_string(&n->attrs, "_alloc_fixed_addr", name) != GM_OK ||
            gm_attr_set_int(&n->attrs, "_alloc_fixed_addr_index", k) != GM_OK)
            return gm_pass_oom(c);
    }
    return GM_OK;
}

gm_status gm_pass_mark_same_addr(gm_pass_ctx *c)
{
    for (size_t gi = 0; gi < c->m->n_graphs; gi++) {
        gm_graph *g = c->m->graphs[gi];
        if (!gm_pass_graph_known_shape(g)) continue;
        for (uint32_t x = 0; x < g->nodes.n; x++) {
            gm_status st = mark_node(c, g->nodes.v[x]);
            if (st != GM_OK) return st;
        }
    }
    return GM_OK;
}
