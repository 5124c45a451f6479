/*
 * reach.h — reachability over a graph's DAG of data + control edges, without GE's N x N
 * connection matrix (reference §4.2: one bitmap per node, 125 GB at a million nodes).
 *
 * "a reaches b" means a directed path of data and/or control edges from a to b inside one
 * graph (subgraphs are separate DAGs: no edge crosses a graph boundary; stream order is not an
 * edge). A node reaches itself, as in GE's matrix (bitmap(n) holds n).
 *
 * How a query is answered, cheapest first:
 *  1. a == b; different graphs (never connected); topo(a) > topo(b) (a DAG in topological
 *     order has no path to an earlier node);
 *  2. labels from one depth-first traversal of each graph, built once in O(V + E):
 *     post(n), the DFS finishing number; low(n), the smallest post number among n's
 *     descendants; tlow(n), the smallest post number in n's DFS subtree. If a reaches b then
 *     [low(b), post(b)] lies inside [low(a), post(a)] (a negative cut, GRAIL's interval), and
 *     if post(b) lies in [tlow(a), post(a)] then b is in a's DFS subtree, so a reaches b
 *     (a positive cut, the tree cover);
 *  3. otherwise a depth-first search from a over successors, pruned to nodes whose topo id is
 *     at most topo(b) and whose interval still contains b's, that stops at the first node
 *     whose DFS subtree holds b. Visited marks are stamps in one array reused by every query
 *     (a query bumps the stamp instead of clearing).
 *
 * Cost: O(V + E) time and 16 bytes per node of memory to build; a query is O(1) when the
 * labels decide it, and at worst O(V_w + E_w) for the nodes and edges between a and b in
 * topological order (the window) when they do not — in a contrived graph every query can
 * search its whole window, so q queries cost O(q (V + E)). The labels make that rare in
 * practice: a negative answer is pruned wherever b's interval falls outside a successor's, a
 * positive one ends at the first node whose DFS subtree holds b.
 */
#ifndef GM_REACH_H
#define GM_REACH_H

#include <stdbool.h>
#include <stdint.h>

#include "graphmem/graph.h"

typedef struct gm_reach gm_reach;

/* What the queries cost so far (for benchmarks and tests). */
typedef struct gm_reach_stats {
    uint64_t queries;    /* gm_reach_path calls */
    uint64_t by_filter;  /* decided by step 1 (identity, graph, topo order) */
    uint64_t by_label;   /* decided by step 2 (interval or tree cut) */
    uint64_t searched;   /* needed the pruned search */
    uint64_t visited;    /* nodes the searches pushed, all queries together */
} gm_reach_stats;

/* Builds the labels for every graph of m. The model must be sorted (gm_model_finalize /
 * gm_model_toposort) and must not be edited while *out is in use. GM_ERR_NOMEM when out of
 * memory (*out is then NULL). */
gm_status gm_reach_new(const gm_model *m, gm_reach **out);
void gm_reach_free(gm_reach *r);

/* Does a reach b (a path of data/control edges from a to b, or a == b)? */
bool gm_reach_path(gm_reach *r, const gm_node *a, const gm_node *b);
/* Either direction: GE's "IsConnected(a, b) || IsConnected(b, a)". */
bool gm_reach_connected(gm_reach *r, const gm_node *a, const gm_node *b);

void gm_reach_get_stats(const gm_reach *r, gm_reach_stats *st);

#endif
