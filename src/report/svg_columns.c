/*
 * svg_columns.c — which execution positions get a column of the timeline. Const, Data and
 * Variable nodes compute nothing where they sit in the order (root ones are written at the
 * plan's start, subgraph ones stand for their parent's input), yet in a model with weights
 * they are half of it: resnet18 has 43 of its 93 positions so. Each is folded into no width,
 * so the columns go to the nodes that compute and a tensor a source hands over starts at the
 * column of the next node that computes.
 */
#include "ops/op_table.h"
#include "report/svg_internal.h"
#include "util/alloc.h"

/* A node that computes nothing at its position; unknown names (a plan of another model) are
 * kept, so nothing is folded by mistake. */
static bool is_source(const gm_model *m, const char *name)
{
    const gm_node *n = m ? gm_model_find_node(m, name) : NULL;
    return n && gm_node_is(n, GM_OP_DATA | GM_OP_CONST | GM_OP_VARIABLE);
}

gm_status tl_columns_build(tl_plan *p, const gm_model *m)
{
    size_t n = p->n_order;
    p->col = gm_malloc((n + 2) * sizeof *p->col);
    p->col_pos = gm_malloc((n + 2) * sizeof *p->col_pos);
    if (!p->col || !p->col_pos) return GM_ERR_NOMEM;
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) kept += !is_source(m, p->order[i]);
    bool fold = kept > 0 && kept < n; /* all sources: nothing computes, so show them all */
    int64_t c = 0;
    for (size_t i = 0; i < n; i++) {
        p->col[i] = c;
        if (!fold || !is_source(m, p->order[i])) p->col_pos[c++] = (int64_t)i;
    }
    p->col[n] = c;
    p->n_folded = n - (size_t)c;
    /* An empty order still has one (empty) column, as npos has one position. */
    p->ncols = c > 0 ? c : 1;
    for (int64_t k = c; k <= p->ncols; k++) p->col_pos[k] = p->npos;
    if (n == 0) p->col[1] = 1;
    return GM_OK;
}
