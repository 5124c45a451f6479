/* readers_before.c — every other read of a buffer runs before a node (readers_before.h). */
#include "analysis/readers_before.h"

#include "analysis/ref.h"
#include "ir/ir.h"
#include "ops/op_table.h"
#include "util/alloc.h"

static size_t depth_of(const gm_node *n)
{
    size_t d = 0;
    for (const gm_node *a = gm_graph_parent(n->graph); a; a = gm_graph_parent(a->graph)) d++;
    return d;
}

/* u runs before n: both lifted to the graph they share (a node inside a subgraph runs within
 * its parent node), then the same stream earlier in the order, or a path of edges. A reader
 * inside n counts as before (n's subgraphs read their inputs as part of n). Two nodes inside
 * different subgraphs of one node run before each other only when the subgraphs are the
 * branches of an If or Case, of which one runs. (The caller has skipped n and the nodes n lies
 * inside.) */
static bool runs_before(const gm_model *m, gm_reach **reach, const gm_node *u, const gm_node *n, gm_status *st)
{
    const gm_node *a = u, *b = n;
    size_t da = depth_of(a), db = depth_of(b);
    for (; da > db; da--) a = gm_graph_parent(a->graph);
    for (; db > da; db--) b = gm_graph_parent(b->graph);
    while (a->graph != b->graph) {
        a = gm_graph_parent(a->graph);
        b = gm_graph_parent(b->graph);
    }
    if (a == b && b == n) return true;
    if (a == b) {
        gm_ctrl_kind k = gm_node_ctrl_kind(a);
        return k == GM_CTRL_IF || k == GM_CTRL_CASE;
    }
    if (a->stream == b->stream && a->topo_id < b->topo_id) return true;
    if (a->topo_id > b->topo_id) return false; /* no path back in a sorted DAG */
    if (!*reach && gm_reach_new(m, reach) != GM_OK) {
        *st = GM_ERR_NOMEM;
        return false;
    }
    return gm_reach_path(*reach, a, b);
}

static bool is_or_contains(const gm_node *p, const gm_node *n)
{
    for (const gm_node *a = n; a; a = gm_graph_parent(a->graph))
        if (a == p) return true;
    return false;
}

/* One (node, output) whose buffer the walk has reached. */
typedef struct slot {
    const gm_node *n;
    uint32_t k;
} slot;

typedef struct walk {
    slot *v;
    size_t n, cap;
} walk;

/* Outputs sharing one buffer that a walk follows (each new one is compared with those before);
 * beyond, the buffer counts as read after the write: a copy, never a race. */
#define WALK_LIMIT 4096

static bool walk_push(walk *w, const gm_node *n, uint32_t k)
{
    for (size_t i = 0; i < w->n; i++)
        if (w->v[i].n == n && w->v[i].k == k) return true; /* reached twice (a diamond of views) */
    if (w->n == WALK_LIMIT || gm_grow((void **)&w->v, sizeof *w->v, w->n + 1, &w->cap)) return false;
    w->v[w->n++] = (slot){n, k};
    return true;
}

/* Output k of u hands the buffer on: a view or pass-through of input i (ref.h), or any output of
 * a node with subgraphs (a branch may return its input: counted as a read, never missed). */
static bool passes_on(const gm_node *u, uint32_t k, uint32_t i)
{
    uint32_t j;
    if (u->n_sub) return true;
    return gm_ref_input_of_output(u, k, &j) && j == i;
}

/* One step from (*p, *k) back to the output whose buffer it is: a subgraph Data to its parent's
 * input, a view or pass-through to its input. False where (*p, *k) owns its buffer. */
static bool owner_step(const gm_node **p, uint32_t *k)
{
    const gm_node *q = *p, *src = NULL;
    int64_t parent_in = gm_subgraph_data_parent_index(q);
    uint32_t j;
    int32_t at = 0;
    if (parent_in >= 0) {
        const gm_node *parent = gm_graph_parent(q->graph);
        if (parent && (uint64_t)parent_in < parent->n_in) {
            src = parent->in[parent_in].src;
            at = parent->in[parent_in].src_index;
        }
    } else if (gm_ref_input_of_output(q, *k, &j) && j < q->n_in) {
        src = q->in[j].src;
        at = q->in[j].src_index;
    }
    if (!src) return false;
    *p = src;
    *k = (uint32_t)at;
    return true;
}

/* u holds n in one of its subgraphs and is given the buffer as input i: every subgraph's Data
 * for that input carries it on inside (n's siblings among them). */
static bool enter_subgraphs(walk *w, const gm_node *u, uint32_t i)
{
    for (uint32_t s = 0; s < u->n_sub; s++) {
        const gm_graph *g = u->sub[s];
        for (size_t x = 0; x < g->nodes.n; x++) {
            const gm_node *d = g->nodes.v[x];
            if (d->n_out && gm_subgraph_data_parent_index(d) == (int64_t)i && !walk_push(w, d, 0)) return false;
        }
    }
    return true;
}

gm_status gm_readers_before(const gm_model *m, gm_reach **reach, const gm_node *n, uint32_t in, bool *all)
{
    *all = true;
    const gm_node *p = n->in[in].src;
    if (!p) return GM_OK;
    uint32_t k = (uint32_t)n->in[in].src_index;
    for (size_t hops = 0; hops < 4096 && owner_step(&p, &k); hops++)
        continue; /* back to the output that owns the buffer */
    walk w = {0};
    gm_status st = GM_OK;
    if (!walk_push(&w, p, k)) st = GM_ERR_NOMEM;
    for (size_t at = 0; at < w.n && *all && st == GM_OK; at++) {
        const gm_out_slot *o = &w.v[at].n->out[w.v[at].k];
        for (uint32_t u_i = 0; u_i < o->n_uses && *all && st == GM_OK; u_i++) {
            const gm_node *u = o->uses[u_i].node;
            const uint32_t i = (uint32_t)o->uses[u_i].index;
            if (u == n) continue; /* what follows reads its result */
            if (is_or_contains(u, n)) {
                /* n lies inside u: u's result follows n, but the other reads inside u do not */
                if (!enter_subgraphs(&w, u, i)) *all = false;
                continue;
            }
            if (gm_node_reads_input_data(u, i)) *all = runs_before(m, reach, u, n, &st);
            for (uint32_t q = 0; q < u->n_out && *all && st == GM_OK; q++)
                if (passes_on(u, q, i) && !walk_push(&w, u, q)) *all = false;
        }
    }
    gm_free(w.v);
    return st;
}

gm_status gm_readers_unsafe_inputs_of(const gm_model *m, gm_node *const *nodes, size_t n_nodes, uint64_t **mask,
                                      gm_error *err)
{
    *mask = NULL;
    if (!n_nodes) return GM_OK;
    const size_t n = gm_model_node_count(m);
    gm_reach *r = NULL;
    uint64_t *bits = gm_calloc(n ? n : 1, sizeof *bits);
    gm_status st = bits ? GM_OK : GM_ERR_NOMEM;
    for (size_t k = 0; k < n_nodes && st == GM_OK; k++) {
        const gm_node *w = nodes[k];
        for (uint32_t i = 0; i < w->n_in && st == GM_OK; i++) {
            bool all = true;
            st = gm_readers_before(m, &r, w, i, &all);
            if (!all) bits[w->topo_id] |= (uint64_t)1 << (i < 63 ? i : 63);
        }
    }
    gm_reach_free(r);
    if (st != GM_OK) {
        gm_free(bits);
        if (err && err->code == GM_OK) gm_error_set(err, GM_ERR_NOMEM, "out of memory");
        return st;
    }
    *mask = bits;
    return GM_OK;
}

gm_status gm_readers_unsafe_inputs(const gm_model *m, bool (*writes)(const gm_node *), uint64_t **mask,
                                   gm_error *err)
{
    *mask = NULL;
    gm_node_vec sel = {0};
    for (size_t t = 0; t < gm_model_node_count(m); t++) {
        gm_node *w = gm_model_node_at(m, t);
        if (writes(w) && gm_node_vec_push(&sel, w) != GM_OK) {
            gm_node_vec_free(&sel);
            if (err && err->code == GM_OK) gm_error_set(err, GM_ERR_NOMEM, "out of memory");
            return GM_ERR_NOMEM;
        }
    }
    gm_status st = gm_readers_unsafe_inputs_of(m, sel.v, sel.n, mask, err);
    gm_node_vec_free(&sel);
    return st;
}

bool gm_readers_unsafe(const uint64_t *mask, const gm_node *n, size_t i)
{
    return mask && n->topo_id >= 0 && (mask[n->topo_id] >> (i < 63 ? i : 63) & 1);
}
