/*
 * inplace_support_check.c — GE's InplaceSupportCheckPass (reference §3.4). Marks which input a
 * single-output node could write its result into: the first input that is not a user Data,
 * constant or variable (their memory is not the graph's to overwrite), that nobody else reads
 * (exactly one consumer anchor), and whose dtype and shape equal the output's. The planner may
 * then let the output reuse that input (`_inplace_support_input_index` on output 0's desc).
 *
 * The input's dtype and shape are those of the producer's output desc: graphmem's input descs
 * carry attributes, and seldom a shape.
 */
#include <string.h>

#include "graphmem/log.h"
#include "ops/op_table.h"
#include "passes/dedicated.h"
#include "passes/pass_util2.h"

static bool same_dtype_and_shape(const gm_tensor_desc *a, const gm_tensor_desc *b)
{
    if (a->dtype != b->dtype) return false;
    int32_t na = a->ndims < 0 ? 0 : a->ndims, nb = b->ndims < 0 ? 0 : b->ndims;
    return na == nb && (na == 0 || memcmp(a->dims, b->dims, (size_t)na * sizeof *a->dims) == 0);
}

static gm_status check_node(gm_pass_ctx *c, gm_node *n)
{
    if (n->n_out != 1) return GM_OK;
    const gm_tensor_desc *out = &n->out[0].desc;
    for (uint32_t i = 0; i < n->n_in; i++) {
        const gm_node *p = n->in[i].src;
        if (!p || gm_node_is(p, GM_OP_DATA) || gm_node_is(p, GM_OP_CONST) || gm_node_is(p, GM_OP_VAR_LIKE)) continue;
        const gm_out_slot *o = &p->out[n->in[i].src_index];
        if (o->n_uses != 1) continue;
        if (!same_dtype_and_shape(&o->desc, out)) {
            gm_log(GM_LOG_INFO, "inplace_support_check: %s input %u differs from its output in dtype or shape",
                   n->name, i);
            continue;
        }
        if (gm_attr_set_int(&n->out[0].desc.attrs, "_inplace_support_input_index", i) != GM_OK) return gm_pass_oom(c);
        return GM_OK;
    }
    return GM_OK;
}

gm_status gm_pass_inplace_support_check(gm_pass_ctx *c)
{
    for (size_t gi = 0; gi < c->m->n_graphs; gi++) {
        const gm_graph *g = c->m->graphs[gi];
        for (uint32_t x = 0; x < g->nodes.n; x++) {
            gm_status st = check_node(c, g->nodes.v[x]);
            if (st != GM_OK) return st;
        }
    }
    return GM_OK;
}
