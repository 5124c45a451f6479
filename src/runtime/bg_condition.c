/*
 * bg_condition.c — If/Case branches seen by the runtime graph builder (reference §6.9): the
 * branch view, CalcChainConflictSolvePolicy with AddPointFromForConflicts, and the drivers that
 * run both policies (guarders live in bg_guarders.c).
 */
#include <stdio.h>
#include <string.h>

#include "ir/ir.h"
#include "ops/op_table.h"
#include "runtime/bg_condition.h"
#include "util/alloc.h"

#define PLACE_FMT "%s: graph '%s': node '%s'"
#define PLACE(n) (n)->graph->model->source, (n)->graph->name, (n)->name

static gm_status oom(const gm_node *n, gm_error *err)
{
    return gm_error_set(err, GM_ERR_NOMEM, "%s: out of memory", n->graph->model->source);
}

/* ---- the branch view ---------------------------------------------------------------------- */

static bool is_output_node(const gm_node *n)
{
    return !n->dead && (strcmp(n->type, GM_BG_INNER_NET_OUTPUT_TYPE) == 0 || gm_node_is(n, GM_OP_NETOUTPUT));
}

gm_node *gm_bg_output_node(const gm_graph *g)
{
    for (uint32_t i = 0; i < g->nodes.n; i++)
        if (is_output_node(g->nodes.v[i])) return g->nodes.v[i];
    return NULL;
}

static size_t count_output_nodes(const gm_graph *g)
{
    size_t k = 0;
    for (uint32_t i = 0; i < g->nodes.n; i++) k += is_output_node(g->nodes.v[i]);
    return k;
}

int64_t gm_bg_feed_index(const gm_node *n)
{
    /* InnerData reads its parent input through kFeedIndex (`index`); a model subgraph's Data
     * through _parent_node_index. Each falls back to the other's attribute. */
    const char *first, *second;
    if (strcmp(n->type, GM_BG_INNER_DATA_TYPE) == 0) {
        first = "index";
        second = "_parent_node_index";
    } else if (gm_node_is(n, GM_OP_DATA) && !gm_node_is(n, GM_OP_VAR_LIKE)) {
        first = "_parent_node_index";
        second = "index";
    } else {
        return -1;
    }
    const gm_attr *a = gm_attr_find(n->attrs, first);
    if (!a || a->kind != GM_ATTR_INT) a = gm_attr_find(n->attrs, second);
    return a && a->kind == GM_ATTR_INT && a->u.i >= 0 ? a->u.i : -1;
}

gm_graph *gm_bg_branch(const gm_bg_cond *c, size_t branch)
{
    return c->node->sub[c->first_branch + branch];
}

gm_status gm_bg_cond_view(gm_node *n, gm_bg_shape shape, gm_bg_cond *c, gm_error *err)
{
    memset(c, 0, sizeof *c);
    gm_ctrl_kind k = gm_node_ctrl_kind(n);
    if (k != GM_CTRL_IF && k != GM_CTRL_CASE) {
        return gm_error_set(err, GM_ERR_INPUT, PLACE_FMT ": not an If/Case node (type %s)", PLACE(n), n->type);
    }
    size_t first = shape == GM_BG_SHAPE_CONTROL_FRAME ? 1 : 0;
    if (shape == GM_BG_SHAPE_AUTO && n->n_sub > 0) {
        /* A branch always ends in an output node; the control frame does not. */
        first = (k == GM_CTRL_IF && n->n_sub == 3) || count_output_nodes(n->sub[0]) == 0 ? 1 : 0;
    }
    if (n->n_sub <= first) {
        return gm_error_set(err, GM_ERR_INPUT, PLACE_FMT ": an %s node without branches (%u subgraph%s)", PLACE(n),
                            n->type, n->n_sub, n->n_sub == 1 ? "" : "s");
    }
    c->node = n;
    c->first_branch = first;
    c->n_branches = n->n_sub - first;
    c->n_outputs = n->n_out;
    for (size_t b = 0; b < c->n_branches; b++) {
        const gm_graph *g = gm_bg_branch(c, b);
        size_t outs = count_output_nodes(g);
        if (outs != 1) {
            return gm_error_set(err, GM_ERR_INPUT, PLACE_FMT ": branch '%s' has %zu output nodes (InnerNetOutput or "
                                "NetOutput), expected 1", PLACE(n), g->name, outs);
        }
    }
    return GM_OK;
}

gm_status gm_bg_output_positions(const gm_bg_cond *c, size_t branch, size_t *pos, gm_error *err)
{
    const gm_graph *g = gm_bg_branch(c, branch);
    const gm_node *o = gm_bg_output_node(g);
    for (size_t i = 0; i < c->n_outputs; i++) pos[i] = SIZE_MAX;
    for (uint32_t q = 0; q < o->n_in; q++) {
        /* NetOutput may route input q to another parent output; InnerNetOutput never does. */
        const gm_attr *a = gm_attr_find(o->in_desc[q].attrs, "_parent_node_index");
        int64_t i = a && a->kind == GM_ATTR_INT ? a->u.i : (int64_t)q;
        if (i < 0 || (uint64_t)i >= c->n_outputs) {
            return gm_error_set(err, GM_ERR_INPUT,
                                PLACE_FMT ": input %u returns output %lld, but '%s' has %zu output%s",
                                PLACE(o), q, (long long)i, c->node->name, c->n_outputs, c->n_outputs == 1 ? "" : "s");
        }
        if (pos[i] != SIZE_MAX) {
            return gm_error_set(err, GM_ERR_INPUT, PLACE_FMT ": inputs %zu and %u both return output %lld", PLACE(o),
                                pos[i], q, (long long)i);
        }
        if (!o->in[q].src) {
            return gm_error_set(err, GM_ERR_INPUT, PLACE_FMT ": input %u (output %lld of '%s') is unconnected",
                                PLACE(o), q, (long long)i, c->node->name);
        }
        pos[i] = q;
    }
    for (size_t i = 0; i < c->n_outputs; i++) {
        if (pos[i] == SIZE_MAX) {
            return gm_error_set(err, GM_ERR_INPUT, PLACE_FMT ": returns nothing for output %zu of '%s'", PLACE(o), i,
                                c->node->name);
        }
    }
    return GM_OK;
}

/* ---- CalcChainConflictSolvePolicy --------------------------------------------------------- */

void gm_bg_chain_policy_free(gm_bg_chain_policy *p)
{
    gm_free(p->kind);
    gm_free(p->same_input);
    gm_free(p->conflicts);
    memset(p, 0, sizeof *p);
}

gm_status gm_bg_calc_chain_conflict_policy(const gm_bg_cond *c, gm_bg_chain_policy *p, gm_error *err)
{
    memset(p, 0, sizeof *p);
    size_t n = c->n_outputs, nb = c->n_branches;
    p->n_outputs = n;
    /* from[b * n + i]: the parent input branch b returns at output i (-1: computed). */
    int64_t *from = gm_calloc(nb * n + 1, sizeof *from);
    size_t *pos = gm_calloc(n + 1, sizeof *pos);
    p->kind = gm_calloc(n + 1, sizeof *p->kind);
    p->same_input = gm_calloc(n + 1, sizeof *p->same_input);
    p->conflicts = gm_calloc(n + 1, sizeof *p->conflicts);
    gm_status st = GM_OK;
    if (!from || !pos || !p->kind || !p->same_input || !p->conflicts) {
        st = oom(c->node, err);
        goto out;
    }
    for (size_t b = 0; b < nb; b++) {
        if ((st = gm_bg_output_positions(c, b, pos, err)) != GM_OK) goto out;
        const gm_node *o = gm_bg_output_node(gm_bg_branch(c, b));
        for (size_t i = 0; i < n; i++) from[b * n + i] = gm_bg_feed_index(o->in[pos[i]].src);
    }
    for (size_t i = 0; i < n; i++) {
        bool differ = false;
        for (size_t b = 1; b < nb; b++) differ |= from[b * n + i] != from[i];
        p->same_input[i] = -1;
        if (differ) {
            p->kind[i] = GM_BG_CHAIN_CONFLICT;
            p->conflicts[p->n_conflicts++] = i;
        } else if (from[i] != -1) {
            p->kind[i] = GM_BG_CHAIN_ALL_SAME;
            p->same_input[i] = from[i];
        } else {
            p->kind[i] = GM_BG_CHAIN_NORMAL;
        }
    }
out:
    gm_free(from);
    gm_free(pos);
    if (st != GM_OK) gm_bg_chain_policy_free(p);
    return st;
}

/* ---- AddPointFromForConflicts ------------------------------------------------------------- */

gm_status gm_bg_insert_before_output(const gm_bg_cond *c, size_t branch, const size_t *outputs, size_t k,
                                     const char *name, const char *type, gm_error *err)
{
    if (k == 0) return GM_OK;
    gm_node *o = gm_bg_output_node(gm_bg_branch(c, branch));
    size_t *pos = gm_calloc(c->n_outputs + 1, sizeof *pos);
    size_t *ins = gm_calloc(k, sizeof *ins);
    gm_node **dsts = gm_calloc(k, sizeof *dsts);
    gm_status st = GM_OK;
    if (!pos || !ins || !dsts) {
        st = oom(c->node, err);
        goto out;
    }
    if ((st = gm_bg_output_positions(c, branch, pos, err)) != GM_OK) goto out;
    for (size_t j = 0; j < k; j++) {
        dsts[j] = o;
        ins[j] = pos[outputs[j]];
    }
    if (!gm_edit_insert_before_many(dsts, ins, k, name, type, err)) st = err ? err->code : GM_ERR_INTERNAL;
out:
    gm_free(pos);
    gm_free(ins);
    gm_free(dsts);
    return st;
}

gm_status gm_bg_ensure_chain_conflict_solved(const gm_bg_cond *c, const gm_bg_chain_policy *p, gm_error *err)
{
    if (p->n_conflicts == 0) return GM_OK;
    for (size_t b = 0; b < c->n_branches; b++) {
        char name[512];
        snprintf(name, sizeof name, "%s_PointFrom_%zu", c->node->name, c->first_branch + b);
        gm_status st = gm_bg_insert_before_output(c, b, p->conflicts, p->n_conflicts, name, GM_BG_POINT_FROM_TYPE, err);
        if (st != GM_OK) return st;
    }
    return GM_OK;
}

/* ---- drivers ------------------------------------------------------------------------------ */

gm_status gm_bg_condition_prepare(gm_node *n, gm_bg_shape shape, gm_error *err)
{
    gm_bg_cond c;
    gm_status st = gm_bg_cond_view(n, shape, &c, err);
    if (st != GM_OK) return st;
    gm_bg_chain_policy chain;
    gm_bg_guarder_policy guard;
    /* Both policies read the branches as given: the PointFromInputs inserted for the first
     * must not hide the guarded producers the second looks for. */
    if ((st = gm_bg_calc_chain_conflict_policy(&c, &chain, err)) != GM_OK) return st;
    if ((st = gm_bg_calc_subgraph_guarders_policy(&c, &guard, err)) != GM_OK) {
        gm_bg_chain_policy_free(&chain);
        return st;
    }
    st = gm_bg_ensure_chain_conflict_solved(&c, &chain, err);
    if (st == GM_OK) st = gm_bg_ensure_resource_life_cycle_extended(&c, &guard, err);
    gm_bg_chain_policy_free(&chain);
    gm_bg_guarder_policy_free(&guard);
    return st;
}

gm_status gm_bg_condition_prepare_model(gm_model *m, gm_bg_shape shape, gm_error *err)
{
    gm_status st = gm_model_toposort(m, err);
    if (st != GM_OK) return st;
    size_t n = 0;
    for (uint32_t i = 0; i < m->order.n; i++) {
        gm_ctrl_kind k = gm_node_ctrl_kind(m->order.v[i]);
        n += k == GM_CTRL_IF || k == GM_CTRL_CASE;
    }
    if (n == 0) return GM_OK;
    gm_node **conds = gm_calloc(n, sizeof *conds);
    if (!conds) return gm_error_set(err, GM_ERR_NOMEM, "%s: out of memory", m->source);
    n = 0;
    for (uint32_t i = 0; i < m->order.n; i++) {
        gm_ctrl_kind k = gm_node_ctrl_kind(m->order.v[i]);
        if (k == GM_CTRL_IF || k == GM_CTRL_CASE) conds[n++] = m->order.v[i];
    }
    /* GetAllNodes lists a node's subgraphs after it: walking backwards meets nested If/Case
     * nodes before the ones that own them, and If/Case nodes are never removed here. */
    for (size_t i = n; i-- > 0 && st == GM_OK;) st = gm_bg_condition_prepare(conds[i], shape, err);
    gm_free(conds);
    return st == GM_OK ? gm_model_toposort(m, err) : st;
}
