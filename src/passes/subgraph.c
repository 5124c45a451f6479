/*
 * subgraph.c — GE's SubgraphPass (reference §3.3): copies ("Memcpy" Identities) at subgraph
 * boundaries, where a subgraph's Data or NetOutput would otherwise share one address with the
 * parent's tensors in a way the parent cannot allow:
 *  - a subgraph Data read (through ref chains) by a node wanting continuous inputs: the block
 *    cannot be the parent's buffer -> `<data>_output_0_Memcpy`; a While input that is really a
 *    constant -> `<while>_input_<p>_Memcpy` (the loop writes its inputs);
 *  - a subgraph NetOutput input that is a constant, an atomic output, a continuous output, a
 *    Data passed straight through (not in a While), or a While in a dynamic NetOutput ->
 *    `<netoutput>_input_<i>_Memcpy`;
 *  - While: inputs whose producer is shared, or (graphmem) whose buffer is read where it may
 *    follow the loop -> `<while>_input_<i>_Memcpy`; a known body gets
 *    one copy after its non-bypass Data (`<body>_input_Memcpy`) and one before its non-bypass
 *    outputs (`<body>_output_Memcpy`), so an iteration never overwrites what it still reads;
 *    a dynamic While also gets `<cond>_input_Memcpy` after its cond Data;
 *  - If/Case in a known graph: a branch NetOutput fed twice by one producer node gets a copy
 *    for each repeat (`<producer>_output_<k>_Memcpy`), so the outputs have distinct addresses.
 *
 * Graphs are walked in model order (root first), each graph's nodes in topological order.
 * graphmem's "known-shape" is pass_util2's gm_pass_graph_known_shape; the rules for While
 * apply to While-kind nodes with [cond, body] subgraphs.
 */
#include <stdio.h>
#include <string.h>

#include "analysis/readers_before.h"
#include "analysis/ref.h"
#include "ops/op_table.h"
#include "passes/dedicated.h"
#include "passes/pass_util2.h"
#include "util/alloc.h"

/* Every SubgraphPass copy: reuse_input cleared, no-const-fold=false, protected, batch label. */
static const gm_copy_opts k_opts = {.keep_desc_attrs = false, .cannot_be_deleted = true, .no_const_fold = 0,
                                    .copy_batch_label = true};

typedef struct sg_ctx {
    gm_pass_ctx *c;
    uint32_t *stamp; /* per topo id: last NetOutput that saw this producer (If/Case rule) */
    uint32_t stamp_now;
    uint64_t *unsafe; /* While inputs whose buffer is read after the loop may write it */
} sg_ctx;

static gm_status fail_code(gm_pass_ctx *c)
{
    return c->err->code ? c->err->code : GM_ERR_INTERNAL;
}

static bool wants_continuous_input(const gm_node *n)
{
    return gm_attrs_get_bool(n->attrs, "continuous_input", false) ||
           gm_attrs_get_bool(n->attrs, "_no_padding_continuous_input", false);
}

static bool has_continuous_output(const gm_node *n)
{
    return gm_attrs_get_bool(n->attrs, "continuous_output", false) ||
           gm_attrs_get_bool(n->attrs, "_no_padding_continuous_output", false);
}

/* TraverseRefChain: does a reader of p:k, or of an output that is that reader's input (a ref
 * chain), want continuous inputs? An explicit stack: chains of views can be long. Each output
 * is the ref of one input, fed by one producer output, so each is pushed at most once. */
static bool chain_wants_continuous(gm_pass_ctx *c, const gm_node *p, uint32_t k, gm_status *st)
{
    typedef struct { const gm_node *n; uint32_t k; } item;
    item *stack = NULL;
    size_t n = 0, cap = 0;
    bool found = false;
    *st = GM_OK;
    if (gm_grow((void **)&stack, sizeof *stack, 1, &cap)) goto oom;
    stack[n++] = (item){p, k};
    while (n && !found) {
        item it = stack[--n];
        const gm_out_slot *o = &it.n->out[it.k];
        for (uint32_t j = 0; j < o->n_uses && !found; j++) {
            const gm_node *r = o->uses[j].node;
            if (wants_continuous_input(r)) {
                found = true;
                break;
            }
            for (uint32_t ko = 0; ko < r->n_out; ko++) {
                uint32_t in;
                if (!gm_ref_input_of_output(r, ko, &in) || in != (uint32_t)o->uses[j].index) continue;
                if (gm_grow((void **)&stack, sizeof *stack, n + 1, &cap)) goto oom;
                stack[n++] = (item){r, ko};
            }
        }
    }
    gm_free(stack);
    return found;
oom:
    gm_free(stack);
    *st = gm_pass_oom(c);
    return false;
}

/* The node really producing p:k, looking through PartitionedCall boundaries both ways: up from
 * a PartitionedCall's Data to the call's input, down from a call's output to its NetOutput. */
static const gm_node *real_source(const gm_node *p, int32_t k)
{
    for (size_t guard = 0; p && guard <= 2 * p->graph->model->n_graphs; guard++) {
        int64_t pi = gm_subgraph_data_parent_index(p);
        const gm_node *parent = p->graph->parent;
        if (pi >= 0 && parent && gm_node_ctrl_kind(parent) == GM_CTRL_PARTITIONED_CALL && pi < (int64_t)parent->n_in) {
            k = parent->in[pi].src_index;
            p = parent->in[pi].src;
            continue;
        }
        if (gm_node_ctrl_kind(p) != GM_CTRL_PARTITIONED_CALL || p->n_sub < 1) return p;
        const gm_graph *f = p->sub[0];
        const gm_node *next = NULL;
        for (uint32_t x = 0; x < f->nodes.n && !next; x++) {
            const gm_node *o = f->nodes.v[x];
            if (!gm_node_is(o, GM_OP_NETOUTPUT)) continue;
            for (uint32_t i = 0; i < o->n_in; i++) {
                if (gm_attrs_get_int(o->in_desc[i].attrs, "_parent_node_index", -1) == k && o->in[i].src) {
                    next = o->in[i].src;
                    k = o->in[i].src_index;
                    break;
                }
            }
        }
        if (!next) return p;
        p = next;
    }
    return p;
}

/* ---- subgraph Data ------------------------------------------------------------------------ */

static gm_status handle_data(gm_pass_ctx *c, gm_node *d)
{
    int64_t p = gm_subgraph_data_parent_index(d);
    gm_node *parent = d->graph->parent;
    if (p < 0 || !parent) return GM_OK;
    char name[512], reason[600];
    gm_status st = GM_OK;
    if (d->n_out && d->out[0].n_uses && chain_wants_continuous(c, d, 0, &st)) {
        snprintf(name, sizeof name, "%s_output_0_Memcpy", d->name);
        snprintf(reason, sizeof reason, "subgraph Data %s is read as a continuous input", d->name);
        if (!gm_pass_insert_after(c, d, 0, name, "Identity", &k_opts, reason)) return fail_code(c);
    }
    if (st != GM_OK) return st;
    if (gm_node_ctrl_kind(parent) != GM_CTRL_WHILE || p >= (int64_t)parent->n_in || !parent->in[p].src) return GM_OK;
    const gm_node *src = real_source(parent->in[p].src, parent->in[p].src_index);
    if (!src || !gm_node_is(src, GM_OP_CONST)) return GM_OK;
    snprintf(name, sizeof name, "%s_input_%lld_Memcpy", parent->name, (long long)p);
    snprintf(reason, sizeof reason, "While input %lld is the constant %s", (long long)p, src->name);
    return gm_pass_insert_before(c, parent, (size_t)p, name, "Identity", &k_opts, reason) ? GM_OK : fail_code(c);
}

/* ---- subgraph NetOutput ------------------------------------------------------------------- */

/* p:k comes, through ref chains back, from a node with continuous outputs. */
static bool from_continuous_output(const gm_node *p, int32_t k)
{
    for (size_t guard = 0; p && guard <= p->graph->model->order.n + 1; guard++) {
        if (has_continuous_output(p)) return true;
        uint32_t in;
        if (!gm_ref_input_of_output(p, (uint32_t)k, &in) || in >= p->n_in || !p->in[in].src) return false;
        k = p->in[in].src_index;
        p = p->in[in].src;
    }
    return false;
}

/* Why NetOutput input i needs its own copy, or NULL. */
static const char *netoutput_reason(const gm_node *o, size_t i)
{
    const gm_node *p = o->in[i].src;
    int32_t k = o->in[i].src_index;
    const gm_node *parent = o->graph->parent;
    bool in_while = gm_node_ctrl_kind(parent) == GM_CTRL_WHILE;
    if (gm_node_is(p, GM_OP_CONST) && gm_pass_graph_known_shape(parent->graph)) return "constant output of a subgraph";
    if (gm_attrs_get_bool(p->attrs, "is_atomic_node", false) && gm_pass_attr_list_has(p->attrs, "atomic_output_index", k))
        return "atomic output of a subgraph";
    if (from_continuous_output(p, k)) return "continuous output of a subgraph";
    if (gm_node_is(p, GM_OP_DATA) && !in_while) return "subgraph Data passed straight to the output";
    if (gm_node_ctrl_kind(p) == GM_CTRL_WHILE && gm_pass_graph_known_shape(o->graph) && gm_pass_node_dynamic_shape(o))
        return "While output into a dynamic-shape NetOutput";
    return NULL;
}

static gm_status handle_netoutput(gm_pass_ctx *c, gm_node *o)
{
    if (!o->graph->parent) return GM_OK;
    for (size_t i = 0; i < o->n_in; i++) {
        if (!o->in[i].src) continue;
        const char *why = netoutput_reason(o, i);
        if (!why) continue;
        char name[512];
        snprintf(name, sizeof name, "%s_input_%zu_Memcpy", o->name, i);
        if (!gm_pass_insert_before(c, o, i, name, "Identity", &k_opts, why)) return fail_code(c);
    }
    return GM_OK;
}

/* ---- While -------------------------------------------------------------------------------- */

static gm_node *only_netoutput(gm_pass_ctx *c, const gm_graph *g, gm_status *st)
{
    gm_node *found = NULL;
    size_t cnt = 0;
    for (uint32_t x = 0; x < g->nodes.n; x++) {
        if (!gm_node_is(g->nodes.v[x], GM_OP_NETOUTPUT)) continue;
        found = g->nodes.v[x];
        cnt++;
    }
    *st = GM_OK;
    if (cnt != 1)
        *st = gm_error_set(c->err, GM_ERR_INPUT, "%s: graph '%s': a While body must have exactly one NetOutput (found %zu)",
                           c->m->source, g->name, cnt);
    return cnt == 1 ? found : NULL;
}

/* Data(parent p) whose only reader is NetOutput input i carrying parent index p: the loop
 * variable passes through unchanged and needs no copy. */
static bool is_bypass(const gm_node *d, const gm_node *o)
{
    int64_t p = gm_subgraph_data_parent_index(d);
    if (p < 0 || d->n_out != 1 || d->out[0].n_uses != 1 || d->out[0].uses[0].node != o) return false;
    int32_t i = d->out[0].uses[0].index;
    return gm_attrs_get_int(o->in_desc[i].attrs, "_parent_node_index", -1) == p;
}

/* Collects the subgraph Data nodes of g that have readers (and are not bypass, if o given). */
static gm_status collect_data(gm_pass_ctx *c, const gm_graph *g, const gm_node *o, gm_node ***v, size_t **outs,
                              size_t *n)
{
    *n = 0;
    *v = gm_calloc(g->nodes.n ? g->nodes.n : 1, sizeof **v);
    *outs = gm_calloc(g->nodes.n ? g->nodes.n : 1, sizeof **outs);
    if (!*v || !*outs) return gm_pass_oom(c);
    for (uint32_t x = 0; x < g->nodes.n; x++) {
        gm_node *d = g->nodes.v[x];
        if (gm_subgraph_data_parent_index(d) < 0 || !d->n_out || !d->out[0].n_uses) continue;
        if (o && is_bypass(d, o)) continue;
        (*v)[*n] = d;
        (*outs)[(*n)++] = 0;
    }
    return GM_OK;
}

/* graphmem, not GE: a While input whose buffer another node reads where it may follow the loop
 * (through a view of it, or on another stream: analysis/readers_before.h) is copied too — GE
 * looks only at the producer's own consumers, and random graphs found a Reshape view fed to a
 * While on stream 0 while a reader on stream 2 still read the tensor. */
static bool is_while(const gm_node *n) { return gm_node_ctrl_kind(n) == GM_CTRL_WHILE && n->n_sub == 2; }

static gm_status while_inputs(gm_pass_ctx *c, gm_node *w, const uint64_t *unsafe)
{
    for (size_t i = 0; i < w->n_in; i++) {
        const gm_node *p = w->in[i].src;
        if (!p || gm_node_is(p, GM_OP_VAR_LIKE)) continue;
        if (p->out[w->in[i].src_index].n_uses <= 1 && !gm_readers_unsafe(unsafe, w, i)) continue;
        char name[512];
        snprintf(name, sizeof name, "%s_input_%zu_Memcpy", w->name, i);
        if (!gm_pass_insert_before(c, w, i, name, "Identity", &k_opts, "While input shared with other readers"))
            return fail_code(c);
    }
    return GM_OK;
}

static gm_status while_body(gm_pass_ctx *c, gm_node *w)
{
    gm_graph *cond = w->sub[0], *body = w->sub[1];
    if (!gm_pass_graph_known_shape(body)) return GM_OK;
    gm_node **v = NULL, **dst = NULL;
    size_t *outs = NULL, *ins = NULL, n = 0, k = 0;
    char name[512];
    gm_status st = GM_OK;
    if (gm_pass_node_dynamic_shape(w)) {
        st = collect_data(c, cond, NULL, &v, &outs, &n);
        snprintf(name, sizeof name, "%s_input_Memcpy", cond->name);
        if (st == GM_OK && n &&
            !gm_pass_insert_after_many(c, v, outs, n, name, "Identity", &k_opts, "cond Data of a dynamic-shape While"))
            st = fail_code(c);
        gm_free(v);
        gm_free(outs);
        v = NULL;
        outs = NULL;
        if (st != GM_OK) return st;
    }
    gm_node *o = only_netoutput(c, body, &st);
    if (!o) return st;
    /* The outputs to copy are fixed before the input copy moves the Data readers. */
    dst = gm_calloc(o->n_in ? o->n_in : 1, sizeof *dst);
    ins = gm_calloc(o->n_in ? o->n_in : 1, sizeof *ins);
    if (!dst || !ins) st = gm_pass_oom(c);
    for (uint32_t i = 0; st == GM_OK && i < o->n_in; i++) {
        const gm_node *p = o->in[i].src;
        if (!p || (gm_subgraph_data_parent_index(p) >= 0 && is_bypass(p, o))) continue;
        dst[k] = o;
        ins[k++] = i;
    }
    if (st == GM_OK) st = collect_data(c, body, o, &v, &outs, &n);
    snprintf(name, sizeof name, "%s_input_Memcpy", body->name);
    if (st == GM_OK && n && !gm_pass_insert_after_many(c, v, outs, n, name, "Identity", &k_opts, "While body inputs"))
        st = fail_code(c);
    snprintf(name, sizeof name, "%s_output_Memcpy", body->name);
    if (st == GM_OK && k && !gm_pass_insert_before_many(c, dst, ins, k, name, "Identity", &k_opts, "While body outputs"))
        st = fail_code(c);
    gm_free(v);
    gm_free(outs);
    gm_free(dst);
    gm_free(ins);
    return st;
}

/* ---- If / Case ---------------------------------------------------------------------------- */

/* Has this NetOutput already been fed by producer p? Stamps by topo id; a node without one
 * (inserted since the sort) is looked for among the earlier inputs. */
static bool seen_before(sg_ctx *s, const gm_node *o, size_t i, const gm_node *p)
{
    if (p->topo_id >= 0 && (size_t)p->topo_id < s->c->m->order.n && s->c->m->order.v[p->topo_id] == p) {
        if (s->stamp[p->topo_id] == s->stamp_now) return true;
        s->stamp[p->topo_id] = s->stamp_now;
        return false;
    }
    for (size_t j = 0; j < i; j++)
        if (o->in[j].src == p) return true;
    return false;
}

static gm_status separate_branch_outputs(sg_ctx *s, gm_node *cf)
{
    if (!gm_pass_graph_known_shape(cf->graph)) return GM_OK;
    for (uint32_t b = 0; b < cf->n_sub; b++) {
        const gm_graph *g = cf->sub[b];
        for (uint32_t x = 0; x < g->nodes.n; x++) {
            gm_node *o = g->nodes.v[x];
            if (!gm_node_is(o, GM_OP_NETOUTPUT)) continue;
            s->stamp_now++;
            for (size_t i = 0; i < o->n_in; i++) {
                const gm_node *p = o->in[i].src;
                if (!p || !seen_before(s, o, i, p)) continue;
                char name[512];
                snprintf(name, sizeof name, "%s_output_%d_Memcpy", p->name, (int)o->in[i].src_index);
                if (!gm_pass_insert_before(s->c, o, i, name, "Identity", &k_opts,
                                           "one producer feeds several outputs of a branch"))
                    return fail_code(s->c);
            }
        }
    }
    return GM_OK;
}

/* ---- the pass ----------------------------------------------------------------------------- */

static gm_status handle_node(sg_ctx *s, gm_node *n)
{
    gm_ctrl_kind kind = gm_node_ctrl_kind(n);
    if (gm_node_is(n, GM_OP_DATA)) return handle_data(s->c, n);
    if (gm_node_is(n, GM_OP_NETOUTPUT)) return handle_netoutput(s->c, n);
    if (is_while(n)) {
        gm_status st = while_inputs(s->c, n, s->unsafe);
        return st == GM_OK ? while_body(s->c, n) : st;
    }
    if (kind == GM_CTRL_IF || kind == GM_CTRL_CASE) return separate_branch_outputs(s, n);
    return GM_OK;
}

gm_status gm_pass_subgraph(gm_pass_ctx *c)
{
    gm_status st = gm_model_toposort(c->m, c->err);
    if (st != GM_OK) return st;
    sg_ctx s = {c, gm_calloc(c->m->order.n ? c->m->order.n : 1, sizeof(uint32_t)), 0, NULL};
    if (!s.stamp) return gm_pass_oom(c);
    /* decided on the model as it is before anything is inserted */
    if (gm_readers_unsafe_inputs(c->m, is_while, &s.unsafe, c->err) != GM_OK) {
        gm_free(s.stamp);
        return gm_pass_oom(c);
    }
    for (size_t gi = 0; gi < c->m->n_graphs && st == GM_OK; gi++) {
        size_t n = 0;
        gm_node **nodes = gm_pass_snapshot(c, c->m->graphs[gi], &n);
        if (!nodes && c->m->graphs[gi]->nodes.n) st = GM_ERR_NOMEM;
        for (size_t x = 0; x < n && st == GM_OK; x++) st = handle_node(&s, nodes[x]);
        gm_free(nodes);
    }
    gm_free(s.stamp);
    gm_free(s.unsafe);
    return st;
}
