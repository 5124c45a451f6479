/* ref.c — GE's IsRefFromInput: outputs that are one of their node's inputs. */
#include "analysis/ref.h"
#include "ir/ir.h"
#include "ops/op_table.h"

int64_t gm_subgraph_data_parent_index(const gm_node *n)
{
    if (!n->graph->parent || !(n->op->flags & GM_OP_DATA)) return -1;
    const gm_attr *a = gm_attr_find(n->attrs, "_parent_node_index");
    return a && a->kind == GM_ATTR_INT ? a->u.i : -1;
}

/* Rule 3: an input whose IR name equals the output's. */
static bool same_named_input(const gm_node *n, uint32_t out, uint32_t *in)
{
    int32_t i = gm_node_input_named_as_output(n, out);
    if (i < 0) return false;
    *in = (uint32_t)i;
    return true;
}

bool gm_ref_input_of_output(const gm_node *n, uint32_t out, uint32_t *in)
{
    if (out >= n->n_out) return false;
    uint32_t flags = n->op->flags;
    if ((flags & GM_OP_PASS_THROUGH) || gm_subgraph_data_parent_index(n) >= 0) {
        *in = out;
        return (flags & GM_OP_PASS_THROUGH) ? out < n->n_in : true;
    }
    if ((flags & (GM_OP_PASS_THROUGH_0 | GM_OP_VIEW)) && out == 0 && n->n_in > 0) {
        *in = 0;
        return true;
    }
    if (gm_node_is(n, GM_OP_REFERENCE) && same_named_input(n, out, in)) return true;
    const gm_tensor_desc *d = &n->out[out].desc;
    if (d->reuse_input && d->reuse_input_index >= 0 && d->reuse_input_index < (int64_t)n->n_in) {
        *in = (uint32_t)d->reuse_input_index;
        return true;
    }
    bool nopad = gm_attrs_get_bool(n->attrs, "_no_padding_continuous_input", false) ||
                 gm_attrs_get_bool(n->attrs, "_no_padding_continuous_output", false);
    if (nopad && gm_attrs_get_bool(n->attrs, "_output_reuse_input", false) && n->n_in > 0) {
        *in = 0;
        return true;
    }
    return false;
}
