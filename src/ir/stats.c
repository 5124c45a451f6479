/* stats.c — counts and byte totals of a model, for `graphmem info`, the plan summary and `graphmem
 * run`: the one count of tensors of run-time size the three report (gm_desc_size_at_run_time). */
#include <string.h>

#include "ir/ir.h"
#include "ops/op_table.h"

/* Saturating add: a summary must not overflow on a pathological (but valid) model. */
static int64_t add_sat(int64_t a, int64_t b) { return a > INT64_MAX - b ? INT64_MAX : a + b; }

void gm_model_get_stats(const gm_model *m, gm_model_stats *st)
{
    memset(st, 0, sizeof *st);
    st->graphs = m->n_graphs;
    st->max_stream = -1;
    /* Stream ids are small in practice; count distinct ones with a bounded bitmap and fall
     * back to "at least" beyond it. */
    enum { MAX_TRACKED = 4096 };
    uint8_t seen[MAX_TRACKED];
    memset(seen, 0, sizeof seen);
    for (size_t gi = 0; gi < m->n_graphs; gi++) {
        const gm_graph *g = m->graphs[gi];
        for (uint32_t i = 0; i < g->nodes.n; i++) {
            const gm_node *n = g->nodes.v[i];
            st->nodes++;
            st->control_edges += n->ctrl_in.n;
            for (uint32_t j = 0; j < n->n_in; j++) st->data_edges += n->in[j].src != NULL;
            if (n->stream >= 0 && n->stream < MAX_TRACKED && !seen[n->stream]) {
                seen[n->stream] = 1;
                st->streams++;
            }
            if (n->stream > st->max_stream) st->max_stream = n->stream;
            bool fixed = gm_node_is(n, GM_OP_CONST | GM_OP_VARIABLE); /* a weight's PlaceHolder too */
            bool user_in = g->parent == NULL && (n->op->flags & GM_OP_DATA) && !(n->op->flags & GM_OP_VAR_LIKE);
            for (uint32_t k = 0; k < n->n_out; k++) {
                int64_t sz = gm_desc_size(&n->out[k].desc);
                st->tensors++;
                if (gm_desc_size_at_run_time(&n->out[k].desc)) {
                    st->dynamic_tensors++;
                    continue;
                }
                st->tensor_bytes = add_sat(st->tensor_bytes, sz);
                if (fixed) st->fixed_bytes = add_sat(st->fixed_bytes, sz);
                if (user_in) st->user_input_bytes = add_sat(st->user_input_bytes, sz);
                gm_mem_type mt = n->out[k].desc.mem_type;
                st->bytes_by_mem_type[mt] = add_sat(st->bytes_by_mem_type[mt], sz);
            }
        }
    }
}
