/*
 * edit.c — the graph edits the passes make: insert a copy node before an in-anchor, after an
 * out-anchor, or one k-in/k-out node before k anchors; remove a node relinking its input 0
 * through; move and copy control edges. Every function keeps the invariants of ir.h (mirrored
 * consumer lists and control edges) so passes never touch the lists directly.
 */
#include <string.h>

#include "ir/ir.h"
#include "util/alloc.h"

#define PLACE_FMT "%s: graph '%s': node '%s'"
#define PLACE(n) (n)->graph->model->source, (n)->graph->name, (n)->name

static gm_status oom_err(const gm_node *n, gm_error *err)
{
    return gm_error_set(err, GM_ERR_NOMEM, "%s: out of memory", n->graph->model->source);
}

/* Disconnects dst:i from its producer (no-op when unconnected). */
static void unlink_input(gm_node *dst, uint32_t i)
{
    gm_model_touch(dst->graph->model);
    gm_in_slot *s = &dst->in[i];
    if (s->src) gm_out_remove_use(&s->src->out[s->src_index], dst, (int32_t)i);
    s->src = NULL;
    s->src_index = 0;
}

static gm_status link_input(gm_node *dst, uint32_t i, gm_node *src, int32_t src_index)
{
    unlink_input(dst, i); /* also marks the order stale */
    if (!src) return GM_OK;
    if (gm_out_add_use(&src->out[src_index], dst, (int32_t)i) != GM_OK) return GM_ERR_NOMEM;
    dst->in[i].src = src;
    dst->in[i].src_index = src_index;
    return GM_OK;
}

gm_status gm_edit_set_input(gm_node *dst, size_t in_idx, gm_node *src, int32_t src_index)
{
    if (in_idx >= dst->n_in || (src && (src->graph != dst->graph || src_index < 0 || (uint32_t)src_index >= src->n_out)))
        return GM_ERR_INPUT;
    return link_input(dst, (uint32_t)in_idx, src, src_index);
}

gm_status gm_edit_add_input(gm_node *dst, gm_node *src, int32_t src_index)
{
    if (src && (src->graph != dst->graph || src_index < 0 || (uint32_t)src_index >= src->n_out)) return GM_ERR_INPUT;
    if (gm_ir_node_push_input(dst) != GM_OK) return GM_ERR_NOMEM;
    gm_status st = link_input(dst, dst->n_in - 1, src, src_index);
    if (st != GM_OK) dst->n_in--;
    return st;
}

/* A new node with k inputs and k outputs, outputs described like the producers' outputs. */
static gm_node *new_copy_node(gm_graph *g, const gm_node *near, int side, const char *name, const char *type,
                              size_t k, gm_node *const *srcs, const int32_t *src_idx, int64_t stream, gm_error *err)
{
    gm_node *n = gm_ir_node_create(g, name, type, near, side, err);
    if (!n) return NULL;
    n->stream = stream;
    for (size_t j = 0; j < k; j++) {
        gm_tensor_desc *d, *in_d;
        if (gm_ir_node_push_input(n) != GM_OK || !(d = gm_node_add_output(n)) ||
            gm_desc_copy(d, &srcs[j]->out[src_idx[j]].desc) != GM_OK ||
            !(in_d = gm_node_input_desc(n, j)) || gm_desc_copy(in_d, &srcs[j]->out[src_idx[j]].desc) != GM_OK) {
            oom_err(n, err);
            gm_node_mark_dead(n);
            gm_strmap_del(&g->model->node_by_name, n->name);
            return NULL;
        }
        in_d->reuse_input = false;
        in_d->reuse_input_index = 0;
    }
    return n;
}

gm_node *gm_edit_insert_before(gm_node *dst, size_t in_idx, const char *name, const char *type, gm_error *err)
{
    gm_node *const dsts[1] = {dst};
    const size_t idx[1] = {in_idx};
    return gm_edit_insert_before_many(dsts, idx, 1, name, type, err);
}

gm_node *gm_edit_insert_before_many(gm_node *const *dsts, const size_t *in_idx, size_t k, const char *name,
                                    const char *type, gm_error *err)
{
    if (k == 0) {
        gm_error_set(err, GM_ERR_INTERNAL, "insert before: no anchors given for '%s'", name);
        return NULL;
    }
    gm_node **srcs = gm_calloc(k, sizeof *srcs);
    int32_t *sidx = gm_calloc(k, sizeof *sidx);
    gm_node *n = NULL;
    if (!srcs || !sidx) {
        oom_err(dsts[0], err);
        goto out;
    }
    for (size_t j = 0; j < k; j++) {
        const gm_node *d = dsts[j];
        if (d->graph != dsts[0]->graph || in_idx[j] >= d->n_in || !d->in[in_idx[j]].src) {
            gm_error_set(err, GM_ERR_INPUT, PLACE_FMT ": cannot insert '%s' before input %zu: %s", PLACE(d), name,
                         in_idx[j],
                         d->graph != dsts[0]->graph ? "anchors are in different graphs"
                         : in_idx[j] >= d->n_in     ? "no such input"
                                                    : "the input is unconnected");
            goto out;
        }
        srcs[j] = d->in[in_idx[j]].src;
        sidx[j] = d->in[in_idx[j]].src_index;
    }
    /* Placed just before the first consumer, on its stream: the copy runs where it is read. */
    n = new_copy_node(dsts[0]->graph, dsts[0], -1, name, type, k, srcs, sidx, dsts[0]->stream, err);
    if (!n) goto out;
    for (size_t j = 0; j < k; j++) {
        if (link_input(n, (uint32_t)j, srcs[j], sidx[j]) != GM_OK ||
            link_input(dsts[j], (uint32_t)in_idx[j], n, (int32_t)j) != GM_OK) {
            oom_err(n, err);
            n = NULL; /* the model is left consistent but partly edited: callers abort the run */
            goto out;
        }
    }
out:
    gm_free(srcs);
    gm_free(sidx);
    return n;
}

gm_node *gm_edit_insert_after(gm_node *src, size_t out_idx, const char *name, const char *type, gm_error *err)
{
    if (out_idx >= src->n_out) {
        gm_error_set(err, GM_ERR_INPUT, PLACE_FMT ": cannot insert '%s' after output %zu: no such output", PLACE(src),
                     name, out_idx);
        return NULL;
    }
    gm_node *const srcs[1] = {src};
    const int32_t sidx[1] = {(int32_t)out_idx};
    gm_node *n = new_copy_node(src->graph, src, +1, name, type, 1, srcs, sidx, src->stream, err);
    if (!n) return NULL;
    /* Take the consumer list over first: the new node's own use of src:out must not move. */
    gm_out_slot *o = &src->out[out_idx];
    gm_use *uses = o->uses;
    uint32_t n_uses = o->n_uses;
    o->uses = NULL;
    o->n_uses = o->cap_uses = 0;
    gm_status st = link_input(n, 0, src, (int32_t)out_idx);
    for (uint32_t j = 0; j < n_uses && st == GM_OK; j++) {
        gm_node *c = uses[j].node;
        c->in[uses[j].index].src = NULL; /* already off src's list */
        st = link_input(c, (uint32_t)uses[j].index, n, 0);
    }
    gm_free(uses);
    if (st != GM_OK) {
        oom_err(src, err);
        return NULL;
    }
    return n;
}

gm_status gm_edit_isolate_and_remove(gm_node *n, gm_error *err)
{
    for (uint32_t i = 1; i < n->n_in; i++) {
        if (n->in[i].src) {
            return gm_error_set(err, GM_ERR_INPUT, PLACE_FMT ": cannot remove: input %u is still connected", PLACE(n), i);
        }
    }
    for (uint32_t k = 1; k < n->n_out; k++) {
        if (n->out[k].n_uses) {
            return gm_error_set(err, GM_ERR_INPUT, PLACE_FMT ": cannot remove: output %u still has consumers", PLACE(n), k);
        }
    }
    gm_node *src = n->n_in ? n->in[0].src : NULL;
    int32_t sidx = n->n_in ? n->in[0].src_index : 0;
    /* The producer ran before n, so before n's control successors: keep that order. */
    for (uint32_t j = 0; src && j < n->ctrl_out.n; j++) {
        if (n->ctrl_out.v[j] != src && gm_edit_add_control_edge(src, n->ctrl_out.v[j]) != GM_OK) return oom_err(n, err);
    }
    /* Successors keep their order after n's control predecessors. */
    for (uint32_t p = 0; p < n->ctrl_in.n; p++) {
        gm_node *pred = n->ctrl_in.v[p];
        for (uint32_t k = 0; k < n->n_out; k++) {
            for (uint32_t j = 0; j < n->out[k].n_uses; j++) {
                if (gm_edit_add_control_edge(pred, n->out[k].uses[j].node) != GM_OK) return oom_err(n, err);
            }
        }
        for (uint32_t j = 0; j < n->ctrl_out.n; j++) {
            if (gm_edit_add_control_edge(pred, n->ctrl_out.v[j]) != GM_OK) return oom_err(n, err);
        }
    }
    if (n->n_out) {
        gm_out_slot *o = &n->out[0];
        while (o->n_uses) {
            gm_use u = o->uses[0];
            if (link_input(u.node, (uint32_t)u.index, src, sidx) != GM_OK) return oom_err(n, err);
        }
    }
    if (n->n_in) unlink_input(n, 0);
    while (n->ctrl_in.n) gm_edit_remove_control_edge(n->ctrl_in.v[0], n);
    while (n->ctrl_out.n) gm_edit_remove_control_edge(n, n->ctrl_out.v[0]);
    gm_strmap_del(&n->graph->model->node_by_name, n->name);
    gm_node_mark_dead(n); /* freed by the next gm_model_toposort */
    gm_model_touch(n->graph->model);
    return GM_OK;
}

gm_status gm_edit_add_control_edge(gm_node *src, gm_node *dst)
{
    if (src == dst || src->graph != dst->graph) return GM_ERR_INPUT;
    gm_model_touch(src->graph->model);
    if (gm_node_vec_contains(&dst->ctrl_in, src)) return GM_OK;
    if (gm_node_vec_push(&dst->ctrl_in, src) != GM_OK) return GM_ERR_NOMEM;
    if (gm_node_vec_push(&src->ctrl_out, dst) != GM_OK) {
        dst->ctrl_in.n--;
        return GM_ERR_NOMEM;
    }
    return GM_OK;
}

bool gm_edit_remove_control_edge(gm_node *src, gm_node *dst)
{
    gm_model_touch(src->graph->model);
    bool a = gm_node_vec_remove(&dst->ctrl_in, src);
    bool b = gm_node_vec_remove(&src->ctrl_out, dst);
    return a && b;
}

gm_status gm_edit_copy_control_inputs(const gm_node *from, gm_node *to)
{
    for (uint32_t i = 0; i < from->ctrl_in.n; i++) {
        gm_node *p = from->ctrl_in.v[i];
        if (p == to) continue;
        gm_status st = gm_edit_add_control_edge(p, to);
        if (st != GM_OK) return st;
    }
    return GM_OK;
}

gm_status gm_edit_move_control_inputs(gm_node *from, gm_node *to)
{
    gm_status st = gm_edit_copy_control_inputs(from, to);
    if (st != GM_OK) return st;
    while (from->ctrl_in.n) gm_edit_remove_control_edge(from->ctrl_in.v[0], from);
    return GM_OK;
}

gm_status gm_edit_copy_control_outputs(const gm_node *from, gm_node *to)
{
    for (uint32_t i = 0; i < from->ctrl_out.n; i++) {
        gm_node *s = from->ctrl_out.v[i];
        if (s == to) continue;
        gm_status st = gm_edit_add_control_edge(to, s);
        if (st != GM_OK) return st;
    }
    return GM_OK;
}

gm_status gm_edit_move_control_outputs(gm_node *from, gm_node *to)
{
    gm_status st = gm_edit_copy_control_outputs(from, to);
    if (st != GM_OK) return st;
    while (from->ctrl_out.n) gm_edit_remove_control_edge(from, from->ctrl_out.v[0]);
    return GM_OK;
}
