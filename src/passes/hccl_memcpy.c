/*
 * hccl_memcpy.c — GE's HcclMemcpyPass (reference §3.1). An HCCL op that writes its inputs in
 * place (`_input_mutable`) must not write a constant, a variable, or a buffer someone reads
 * after it: such an input gets its own Identity copy. When every other reader of the input
 * runs before the HCCL op, no copy is needed and the node is marked `_skip_rw_conflict` so the
 * RW-conflict pass leaves its inputs alone (quirk 13). A broadcast into a variable's copy is
 * written back to the variable with an Assign (InsertAssignAfterBroadcastIfNeed).
 *
 * "Runs after" is the topological id, as in GE: one sort of the model when the pass starts.
 * Nodes inserted since then have no id (-1) and so never count as later readers — graphmem's
 * form of GE's "same topo id as the producer" marker for new nodes — which is what keeps two
 * HCCL ops reading one output down to one Identity (test Avoid_too_many_identity).
 *
 * graphmem, not GE: every read of the input's buffer must run before the op
 * (analysis/readers_before.h) — reads through a view of it count, and on another stream a read
 * earlier in the order runs before only through a path of edges. Random graphs found both: an
 * AllReduce on stream 2 writing what a reader on stream 0 still read, and one writing a
 * Reshape view of a tensor read later. The readers are judged on the model as sorted at the
 * start, before any insertion (the walk and the reachability labels describe that graph).
 */
#include <stdio.h>
#include <string.h>

#include "analysis/readers_before.h"
#include "ops/op_table.h"
#include "passes/dedicated.h"
#include "ops/attr_table.h"
#include "passes/pass_util2.h"
#include "util/alloc.h"

/* GE sets only "no constant folding" = false on these copies; the desc is the producer's. */
static const gm_copy_opts k_opts = {.keep_desc_attrs = false, .cannot_be_deleted = false, .no_const_fold = 0,
                                    .copy_batch_label = false};
/* graphmem's own copies (a read that may follow the write) must survive the RW-conflict pass,
 * whose edge-by-edge matrix sees no conflict where the input is a view (Writeable). */
static const gm_copy_opts k_keep_opts = {.keep_desc_attrs = false, .cannot_be_deleted = true, .no_const_fold = 0,
                                         .copy_batch_label = false};

static bool writes_inputs(const gm_node *n) { return gm_node_is(n, GM_OP_INPUT_MUTABLE); }

/* NeedInsertIdentity: does another reader of src:k run after the HCCL op writes it? */
static bool sibling_reads_after(const gm_node *src, int32_t k, const gm_node *h, size_t i)
{
    const gm_out_slot *o = &src->out[k];
    for (uint32_t j = 0; j < o->n_uses; j++) {
        const gm_node *s = o->uses[j].node;
        if (s == h && (size_t)o->uses[j].index == i) continue;
        if (gm_node_computes_shape(s)) continue; /* it reads no data: the write cannot hurt it */
        /* A node inserted since the sort has id -1: never a later reader. */
        if (s->topo_id > h->topo_id) return true;
    }
    return false;
}

/* The copy of a variable reads it after the variable's own writers (assign-like consumers)
 * have run — where that adds no cycle (a writer fed by the HCCL op itself). */
static gm_status order_after_var_writers(gm_pass_ctx *c, gm_node *id, gm_node *var, const gm_node *h)
{
    for (uint32_t k = 0; k < var->n_out; k++) {
        for (uint32_t j = 0; j < var->out[k].n_uses; j++) {
            gm_node *w = var->out[k].uses[j].node;
            if (w == id || !gm_node_is(w, GM_OP_ASSIGN_LIKE)) continue;
            gm_status st = GM_OK;
            if (gm_pass_reaches(c, h, w, &st) || st != GM_OK) {
                if (st != GM_OK) return st;
                continue;
            }
            if (gm_edit_add_control_edge(w, id) != GM_OK) return gm_pass_oom(c);
        }
    }
    return GM_OK;
}

gm_status gm_pass_assign_after_broadcast(gm_pass_ctx *c, gm_node *h, size_t i, gm_node *var, int32_t var_out)
{
    if (!gm_node_is(h, GM_OP_HCCL_BROADCAST) || !gm_node_is(var, GM_OP_VAR_LIKE) || i >= h->n_out) return GM_OK;
    for (uint32_t k = 0; k < var->n_out; k++)
        for (uint32_t j = 0; j < var->out[k].n_uses; j++)
            if (gm_node_is(var->out[k].uses[j].node, GM_OP_ASSIGN_LIKE)) return GM_OK;

    char name[512], reason[600];
    snprintf(name, sizeof name, "%s_Assign_%zu", h->name, i);
    snprintf(reason, sizeof reason, "write %s:%zu back to variable %s", h->name, i, var->name);
    gm_node *a = gm_pass_add_node(c, h->graph, h, +1, name, "Assign", h->stream, h, (int32_t)i, reason);
    if (!a) return c->err->code ? c->err->code : GM_ERR_INTERNAL;
    const gm_tensor_desc *vd = &var->out[var_out].desc;
    gm_tensor_desc *od, *d0, *d1;
    if (gm_edit_add_input(a, var, var_out) != GM_OK || gm_edit_add_input(a, h, (int32_t)i) != GM_OK ||
        !(od = gm_node_add_output(a)) || gm_desc_copy(od, vd) != GM_OK || !(d0 = gm_node_input_desc(a, 0)) ||
        gm_desc_copy(d0, vd) != GM_OK || !(d1 = gm_node_input_desc(a, 1)) || gm_desc_copy(d1, vd) != GM_OK)
        return gm_pass_oom(c);
    od->reuse_input = false;
    /* Readers of the broadcast result and the broadcast's control successors wait for the
     * write-back. */
    const gm_out_slot *o = &h->out[i];
    for (uint32_t j = 0; j < o->n_uses; j++)
        if (o->uses[j].node != a && gm_edit_add_control_edge(a, o->uses[j].node) != GM_OK) return gm_pass_oom(c);
    for (uint32_t j = 0; j < h->ctrl_out.n; j++)
        if (gm_edit_add_control_edge(a, h->ctrl_out.v[j]) != GM_OK) return gm_pass_oom(c);
    return GM_OK;
}

static gm_status insert_identity(gm_pass_ctx *c, gm_node *h, size_t i, const char *why, const gm_copy_opts *opts)
{
    gm_node *src = h->in[i].src;
    int32_t k = h->in[i].src_index;
    char name[512], reason[600];
    snprintf(name, sizeof name, "%s_HcclMemcpyPass_Identity%zu", h->name, i);
    snprintf(reason, sizeof reason, "%s writes input %zu in place: %s", h->name, i, why);
    gm_node *id = gm_pass_insert_before(c, h, i, name, "Identity", opts, reason);
    if (!id) return c->err->code ? c->err->code : GM_ERR_INTERNAL;
    if (gm_node_is(src, GM_OP_VAR_LIKE)) {
        gm_status st = order_after_var_writers(c, id, src, h);
        if (st != GM_OK) return st;
    }
    return gm_pass_assign_after_broadcast(c, h, i, src, k);
}

static gm_status handle_input(gm_pass_ctx *c, gm_node *h, size_t i, const uint64_t *unsafe)
{
    gm_node *src = h->in[i].src;
    if (!src) return GM_OK;
    int32_t k = h->in[i].src_index;
    if (gm_node_is(src, GM_OP_CONST) || gm_node_is(src, GM_OP_VARIABLE))
        return insert_identity(c, h, i, gm_node_is(src, GM_OP_CONST) ? "producer is a constant" : "producer is a variable", &k_opts);
    if (gm_readers_unsafe(unsafe, h, i))
        return insert_identity(c, h, i, "a reader of the buffer (through a view, or on another stream) may run after it", &k_keep_opts);
    if (src->out[k].n_uses == 1) return GM_OK;
    if (sibling_reads_after(src, k, h, i)) return insert_identity(c, h, i, "another reader of the input runs after it", &k_opts);
    /* Every other reader runs first: RW-conflict handling must not copy these inputs. */
    if (gm_attr_set_bool(&h->attrs, "_skip_rw_conflict", true) != GM_OK) return gm_pass_oom(c);
    return GM_OK;
}

gm_status gm_pass_hccl_memcpy(gm_pass_ctx *c)
{
    /* GE sorts lazily before the first mutable node; sorting up front gives the same ids. */
    gm_status st = gm_model_toposort(c->m, c->err);
    if (st != GM_OK) return st;
    /* The nodes that write their inputs, in the order GE visits them (graph by graph), found in
     * one walk of the model: the copies inserted for one are never such nodes, so the list
     * stays what each graph's walk would find. */
    gm_node_vec writers = {0};
    for (size_t gi = 0; gi < c->m->n_graphs && st == GM_OK; gi++) {
        const gm_graph *g = c->m->graphs[gi];
        if (g->nodes.n < 2) continue;
        for (uint32_t x = 0; x < g->nodes.n && st == GM_OK; x++)
            if (writes_inputs(g->nodes.v[x]) && gm_node_vec_push(&writers, g->nodes.v[x]) != GM_OK)
                st = gm_pass_oom(c);
    }
    uint64_t *unsafe = NULL;
    if (st == GM_OK && gm_readers_unsafe_inputs_of(c->m, writers.v, writers.n, &unsafe, c->err) != GM_OK)
        st = gm_pass_oom(c);
    for (size_t x = 0; x < writers.n && st == GM_OK; x++) {
        gm_node *h = writers.v[x];
        for (size_t i = 0; i < h->n_in && st == GM_OK; i++) st = handle_input(c, h, i, unsafe);
    }
    gm_node_vec_free(&writers);
    gm_free(unsafe);
    return st;
}
