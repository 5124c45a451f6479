/*
 * dot_trunk.c — the trunk of the root graph (dot_internal.h says what it is): one sweep over
 * the computing nodes in topological order, each data edge between two of them covering the
 * positions it jumps over; a node no edge covers, with an edge of its own, is on the trunk.
 */
#include "ops/op_table.h"
#include "report/dot_internal.h"
#include "util/alloc.h"

bool dot_is_source(const gm_node *n) { return gm_node_is(n, GM_OP_DATA | GM_OP_CONST | GM_OP_VARIABLE); }

/* The computing root node's place among the computing root nodes, or -1. */
static int64_t place(const int64_t *at, const gm_model *m, const gm_node *n)
{
    int64_t id = n ? gm_node_topo_id(n) : -1;
    return id >= 0 && (size_t)id < gm_model_node_count(m) ? at[id] : -1;
}

int64_t *dot_trunk(const gm_model *m)
{
    size_t n = gm_model_node_count(m);
    const gm_graph *root = gm_model_root(m);
    size_t k = root ? gm_graph_node_count(root) : 0;
    int64_t *trunk = gm_malloc((n ? n : 1) * sizeof *trunk);
    int64_t *at = gm_malloc((n ? n : 1) * sizeof *at);
    const gm_node **by_place = gm_malloc((k ? k : 1) * sizeof *by_place);
    int64_t *cover = gm_calloc(k + 1, sizeof *cover); /* +1 where an edge starts covering, -1 where it stops */
    bool *linked = gm_calloc(k ? k : 1, sizeof *linked);
    if (!trunk || !at || !by_place || !cover || !linked) {
        gm_free(trunk);
        trunk = NULL;
        goto out;
    }
    for (size_t i = 0; i < n; i++) at[i] = trunk[i] = -1;
    size_t c = 0; /* root nodes are listed in topological order */
    for (size_t i = 0; i < k; i++) {
        const gm_node *v = gm_graph_node(root, i);
        if (dot_is_source(v) || gm_node_topo_id(v) < 0 || (size_t)gm_node_topo_id(v) >= n) continue;
        at[gm_node_topo_id(v)] = (int64_t)c;
        by_place[c++] = v;
    }
    for (size_t j = 0; j < c; j++) {
        for (size_t i = 0; i < gm_node_input_count(by_place[j]); i++) {
            int32_t out = 0;
            int64_t s = place(at, m, gm_node_input(by_place[j], i, &out));
            if (s < 0 || (size_t)s >= j) continue;
            linked[s] = linked[j] = true;
            cover[s + 1]++;
            cover[j]--;
        }
    }
    int64_t open = 0;
    for (size_t j = 0; j < c; j++) {
        open += cover[j];
        if (open == 0 && linked[j]) trunk[gm_node_topo_id(by_place[j])] = (int64_t)j;
    }
out:
    gm_free(linked);
    gm_free(cover);
    gm_free(by_place);
    gm_free(at);
    return trunk;
}
