/*
 * pass_util2.c — helpers shared by the dedicated passes of reference §3 (see pass_util2.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "analysis/ref.h"
#include "graphmem/log.h"
#include "ops/op_table.h"
#include "passes/pass_util2.h"
#include "util/alloc.h"

gm_status gm_pass_oom(gm_pass_ctx *c)
{
    return gm_error_set(c->err, GM_ERR_NOMEM, "%s: out of memory", c->m->source);
}

gm_node **gm_pass_snapshot(gm_pass_ctx *c, const gm_graph *g, size_t *n)
{
    *n = g->nodes.n;
    if (!*n) return NULL;
    gm_node **v = gm_malloc(*n * sizeof *v);
    if (!v) {
        *n = 0;
        gm_pass_oom(c);
        return NULL;
    }
    memcpy(v, g->nodes.v, *n * sizeof *v);
    return v;
}

gm_node *gm_pass_add_node(gm_pass_ctx *c, gm_graph *g, const gm_node *near, int side, const char *name,
                          const char *type, int64_t stream, const gm_node *anchor, int32_t index, const char *reason)
{
    char uname[512];
    gm_pass_unique_name(c->m, name, uname, sizeof uname);
    gm_node *n = gm_ir_node_create(g, uname, type, near, side, c->err);
    if (!n) return NULL;
    n->stream = stream;
    if (gm_pass_record(c, n, anchor ? anchor : n, true, index, reason) != GM_OK) return NULL;
    gm_log(GM_LOG_INFO, "[MemConflict][INSERT][NODE] %s (%s) for %s", uname, type, anchor ? anchor->name : "graph");
    return n;
}

gm_node *gm_pass_insert_after_many(gm_pass_ctx *c, gm_node *const *srcs, const size_t *outs, size_t k,
                                   const char *name, const char *type, const gm_copy_opts *opts,
                                   const char *reason)
{
    /* Made as a copy before the first consumer of each output (so pass_util.c dresses and
     * records it), then the other consumers are moved over. */
    gm_node **dsts = gm_calloc(k ? k : 1, sizeof *dsts);
    size_t *ins = gm_calloc(k ? k : 1, sizeof *ins);
    gm_node *n = NULL;
    if (!dsts || !ins) {
        gm_pass_oom(c);
        goto out;
    }
    for (size_t j = 0; j < k; j++) {
        const gm_out_slot *o = &srcs[j]->out[outs[j]];
        if (!o->n_uses) {
            gm_error_set(c->err, GM_ERR_INTERNAL, "insert after: output %zu of '%s' has no consumer", outs[j],
                         srcs[j]->name);
            goto out;
        }
        dsts[j] = o->uses[0].node;
        ins[j] = (size_t)o->uses[0].index;
    }
    n = gm_pass_insert_before_many(c, dsts, ins, k, name, type, opts, reason);
    for (size_t j = 0; n && j < k; j++) {
        gm_out_slot *o = &srcs[j]->out[outs[j]];
        /* What is left on the producer besides the new node moves to new:j. */
        for (uint32_t u = 0; u < o->n_uses;) {
            gm_use use = o->uses[u];
            if (use.node == n) {
                u++;
                continue;
            }
            if (gm_edit_set_input(use.node, (size_t)use.index, n, (int32_t)j) != GM_OK) {
                gm_pass_oom(c);
                n = NULL;
                break;
            }
        }
    }
out:
    gm_free(dsts);
    gm_free(ins);
    return n;
}

bool gm_pass_graph_known_shape(const gm_graph *g)
{
    /* Asked per node by several passes: walk the graph once per sort, not once per question. */
    if (g->known_shape >= 0) return g->known_shape;
    bool known = gm_graph_shape_known(g, true);
    for (uint32_t i = 0; known && i < g->nodes.n; i++) known = gm_node_outputs_known(g->nodes.v[i]);
    ((gm_graph *)g)->known_shape = known;
    return known;
}

bool gm_pass_node_dynamic_shape(const gm_node *n)
{
    for (uint32_t k = 0; k < n->n_out; k++)
        if (gm_desc_size(&n->out[k].desc) < 0) return true;
    for (uint32_t i = 0; i < n->n_in; i++) {
        if (gm_desc_size(&n->in_desc[i]) < 0) return true;
        const gm_node *p = n->in[i].src;
        if (p && gm_desc_size(&p->out[n->in[i].src_index].desc) < 0) return true;
    }
    return false;
}

bool gm_pass_root_unknown(const gm_model *m)
{
    return !gm_pass_graph_known_shape(gm_model_root(m));
}

bool gm_pass_attr_flag(const gm_attr *list, const char *name)
{
    const gm_attr *a = gm_attr_find(list, name);
    if (!a) return false;
    switch (a->kind) {
    case GM_ATTR_BOOL:
    case GM_ATTR_INT:
        return gm_attr_bool(a);
    case GM_ATTR_LIST_INT:
    case GM_ATTR_LIST_BOOL:
    case GM_ATTR_LIST_STRING:
    case GM_ATTR_LIST_FLOAT:
    case GM_ATTR_LIST_LIST_INT:
        return gm_attr_list_len(a) > 0;
    default:
        return false;
    }
}

bool gm_pass_attr_list_has(const gm_attr *list, const char *name, int64_t v)
{
    const gm_attr *a = gm_attr_find(list, name);
    if (!a) return false;
    if (a->kind == GM_ATTR_INT) return a->u.i == v;
    if (a->kind != GM_ATTR_LIST_INT) return false;
    for (size_t i = 0; i < a->u.li.n; i++)
        if (a->u.li.v[i] == v) return true;
    return false;
}

bool gm_pass_attr_list_at(const gm_attr *list, const char *name, size_t i, int64_t *v)
{
    const gm_attr *a = gm_attr_find(list, name);
    if (!a || a->kind != GM_ATTR_LIST_INT || i >= a->u.li.n) return false;
    *v = a->u.li.v[i];
    return true;
}

gm_status gm_pass_attr_list_append(gm_pass_ctx *c, gm_attr **list, const char *name, int64_t v)
{
    const gm_attr *a = gm_attr_find(*list, name);
    size_t n = a && a->kind == GM_ATTR_LIST_INT ? a->u.li.n : 0;
    int64_t *vals = gm_malloc((n + 1) * sizeof *vals);
    if (!vals) return gm_pass_oom(c);
    if (n) memcpy(vals, a->u.li.v, n * sizeof *vals);
    vals[n] = v;
    gm_status st = gm_attr_set_list_int(list, name, vals, n + 1);
    gm_free(vals);
    return st == GM_OK ? GM_OK : gm_pass_oom(c);
}

gm_node *gm_pass_real_producer(gm_node *n, int32_t *idx, gm_ctrl_kind through, gm_node **top, int32_t *top_in)
{
    if (top) *top = n;
    if (top_in) *top_in = -1;
    /* Each step moves one graph up; a model has finitely many levels. */
    for (size_t guard = 0; n && guard <= n->graph->model->n_graphs; guard++) {
        int64_t p = gm_subgraph_data_parent_index(n);
        gm_node *parent = n->graph->parent;
        if (p < 0 || !parent || p >= (int64_t)parent->n_in) return n;
        if (through != GM_CTRL_NONE && gm_node_ctrl_kind(parent) != through) return n;
        if (top) *top = parent;
        if (top_in) *top_in = (int32_t)p;
        *idx = parent->in[p].src_index;
        n = parent->in[p].src;
    }
    return n;
}

bool gm_pass_reaches(gm_pass_ctx *c, const gm_node *from, const gm_node *to, gm_status *st)
{
    /* Nodes sorted at the pass start are marked by topo id; nodes made since (topo id -1) in
     * a small list: passes insert few of them. */
    size_t total = c->m->order.n;
    uint8_t *seen = gm_calloc(total ? total : 1, 1);
    gm_node_vec stack = {0}, fresh = {0};
    bool found = false;
    *st = GM_OK;
    if (!seen || gm_node_vec_push(&stack, (gm_node *)from) != GM_OK) goto oom;
    while (stack.n && !found) {
        gm_node *x = stack.v[--stack.n];
        if (x == to) {
            found = true;
            break;
        }
        if (x->topo_id >= 0 && (size_t)x->topo_id < total && c->m->order.v[x->topo_id] == x) {
            if (seen[x->topo_id]) continue;
            seen[x->topo_id] = 1;
        } else {
            if (gm_node_vec_contains(&fresh, x)) continue;
            if (gm_node_vec_push(&fresh, x) != GM_OK) goto oom;
        }
        for (uint32_t k = 0; k < x->n_out; k++)
            for (uint32_t j = 0; j < x->out[k].n_uses; j++)
                if (gm_node_vec_push(&stack, x->out[k].uses[j].node) != GM_OK) goto oom;
        for (uint32_t j = 0; j < x->ctrl_out.n; j++)
            if (gm_node_vec_push(&stack, x->ctrl_out.v[j]) != GM_OK) goto oom;
    }
    goto done;
oom:
    *st = gm_pass_oom(c);
done:
    gm_free(seen);
    gm_node_vec_free(&stack);
    gm_node_vec_free(&fresh);
    return found;
}

bool gm_pass_out_empty(const gm_node *n, size_t k)
{
    if (k >= n->n_out) return false;
    const gm_tensor_desc *d = &n->out[k].desc;
    for (int32_t i = 0; i < d->ndims; i++)
        if (d->dims[i] == 0) return true;
    return false;
}
