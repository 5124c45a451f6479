/* readers_before.c — every other read of a buffer runs before a node (readers_before.h). */
#include "analysis/readers_before.h"

#include "ir/ir.h"
#include "ops/op_table.h"

/* u, lifted to n's graph (a reader inside a subgraph runs within its parent node), runs before
 * n; one that cannot be lifted there is not known to. */
static bool runs_before(const gm_model *m, gm_reach **reach, const gm_node *u, const gm_node *n, gm_status *st)
{
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

gm_status gm_readers_before(const gm_model *m, const gm_symbols *s, gm_reach **reach, int32_t sym, const gm_node *n,
                            bool *all)
{
    gm_status st = GM_OK;
    *all = true;
    for (int32_t a = gm_symbol_first(s, sym); a >= 0 && *all && st == GM_OK; a = gm_symbols_next(s, a)) {
        gm_anchor y = gm_symbols_anchor(s, a);
        if (y.out || !gm_node_reads_input_data(y.node, y.index)) continue;
        *all = runs_before(m, reach, y.node, n, &st);
    }
    return st;
}
