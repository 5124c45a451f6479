/* readers_before.c — every other read of a buffer runs before a node (readers_before.h). */
#include "analysis/readers_before.h"

#include "analysis/ref.h"
#include "ir/ir.h"
#include "ops/op_table.h"
#include "util/alloc.h"

/* u, lifted to n's graph (a reader inside a subgraph runs within its parent node), runs before
 * n; one that cannot be lifted there is not known to. A node n lies inside is n's own context:
 * its read of the buffer is what hands it to n. */
static bool runs_before(const gm_model *m, gm_reach **reach, const gm_node *u, const gm_node *n, gm_status *st)
{
    for (const gm_node *a = gm_graph_parent(n->graph); a; a = gm_graph_parent(a->graph))
        if (a == u) return true;
    while (u && u->graph != n->graph) u = gm_graph_parent(u->graph);
    if (!u) return false;
    if (u == n || (u->stream == n->stream && u->topo_id < n->topo_id)) return true;
    if (u->topo_id > n->topo_id) return false; /* no path back in a sorted DAG */
    if (!*reach && gm_reach_new(m, reach) != GM_OK) {
        *st = GM_ERR_NOMEM;
        return false;
    }
    return gm_reach_path(*reach, u, n);
}

static bool is_or_contains(const gm_node *p, const gm_node *n)
{
    for (const gm_node *a = n; a; a = gm_graph_parent(a->graph))
        if (a == p) return true;
    return false;
}

/* Does u's input i read what n writes — an output of n (a While's output is its input buffer)
 * or of a node n lies inside, directly or through views of it? Such a read is meant to follow
 * n. */
static bool reads_output_of(const gm_node *n, const gm_node *u, uint32_t i)
{
    const gm_node *p = u->in[i].src;
    uint32_t k = (uint32_t)u->in[i].src_index, j;
    for (size_t hops = 0; p && !is_or_contains(p, n) && hops < 4096 && gm_ref_input_of_output(p, k, &j) && j < p->n_in;
         hops++) {
        k = (uint32_t)p->in[j].src_index;
        p = p->in[j].src;
    }
    return p && is_or_contains(p, n);
}

gm_status gm_readers_before(const gm_model *m, const gm_symbols *s, gm_reach **reach, int32_t sym, const gm_node *n,
                            bool *all)
{
    gm_status st = GM_OK;
    *all = true;
    for (int32_t a = gm_symbol_first(s, sym); a >= 0 && *all && st == GM_OK; a = gm_symbols_next(s, a)) {
        gm_anchor y = gm_symbols_anchor(s, a);
        if (y.out || !gm_node_reads_input_data(y.node, y.index) || reads_output_of(n, y.node, y.index)) continue;
        *all = runs_before(m, reach, y.node, n, &st);
    }
    return st;
}

gm_status gm_readers_unsafe_inputs(const gm_model *m, bool (*writes)(const gm_node *), uint64_t **mask,
                                   gm_error *err)
{
    *mask = NULL;
    const size_t n = gm_model_node_count(m);
    bool any = false;
    for (size_t t = 0; t < n && !any; t++) any = writes(gm_model_node_at(m, t));
    if (!any) return GM_OK;
    gm_symbols *s = NULL;
    gm_reach *r = NULL;
    uint64_t *bits = gm_calloc(n, sizeof *bits);
    gm_status st = bits ? gm_symbols_build(m, &s, err) : GM_ERR_NOMEM;
    for (size_t t = 0; t < n && st == GM_OK; t++) {
        const gm_node *w = gm_model_node_at(m, t);
        if (!writes(w)) continue;
        for (uint32_t i = 0; i < w->n_in && st == GM_OK; i++) {
            int32_t sym = w->in[i].src ? gm_symbols_find(s, w, false, i) : -1;
            bool all = true;
            if (sym >= 0) st = gm_readers_before(m, s, &r, sym, w, &all);
            if (!all) bits[t] |= (uint64_t)1 << (i < 63 ? i : 63);
        }
    }
    gm_reach_free(r);
    gm_symbols_free(s);
    if (st != GM_OK) {
        gm_free(bits);
        if (st == GM_ERR_NOMEM && err && err->code == GM_OK) gm_error_set(err, GM_ERR_NOMEM, "out of memory");
        return st;
    }
    *mask = bits;
    return GM_OK;
}

bool gm_readers_unsafe(const uint64_t *mask, const gm_node *n, size_t i)
{
    return mask && n->topo_id >= 0 && (mask[n->topo_id] >> (i < 63 ? i : 63) & 1);
}
