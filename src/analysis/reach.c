/*
 * reach.c — reachability queries over each graph's DAG of data + control edges (see reach.h
 * for the method and its cost). Everything is indexed by the node's model-wide topological id,
 * which orders the nodes of each graph topologically (GetAllNodes order keeps a graph's nodes
 * in order, with subgraph nodes interleaved), so one set of arrays serves every graph.
 */
#include <string.h>

#include "analysis/reach.h"
#include "ir/ir.h"
#include "util/alloc.h"

struct gm_reach {
    const gm_model *m;
    size_t n;          /* nodes in the model when built */
    uint32_t *post;    /* DFS finishing number, 1-based, per graph contiguous */
    uint32_t *low;     /* smallest post among the node's descendants (itself included) */
    uint32_t *tlow;    /* smallest post in the node's DFS subtree */
    uint32_t *seen;    /* visited stamps of the searches */
    uint32_t stamp;
    uint32_t *stack;   /* search stack: a node is pushed at most once per search */
    /* Successors by topological id, in the order of the edges (each output's consumers, then the
     * control outputs), copied once: the DFS and the searches then walk two int arrays instead
     * of chasing node structs (the labels of a million nodes took 267 ms that way, most of it
     * cache misses). */
    uint32_t *succ_base, *succ;
    gm_reach_stats stats;
};

/* A DFS frame while building: the node, its next successor edge, the min low seen so far. */
typedef struct reach_frame {
    uint32_t id, e, low;
} reach_frame;

static size_t reach_id(const gm_node *n) { return (size_t)n->topo_id; }

static uint32_t min_u32(uint32_t a, uint32_t b) { return a < b ? a : b; }

static gm_status build_succ(gm_reach *r)
{
    const gm_model *m = r->m;
    size_t edges = 0;
    for (size_t t = 0; t < r->n; t++) {
        const gm_node *x = m->order.v[t];
        for (uint32_t k = 0; k < x->n_out; k++) edges += x->out[k].n_uses;
        edges += x->ctrl_out.n;
    }
    if (edges > UINT32_MAX) return GM_ERR_NOMEM;
    r->succ_base = gm_malloc((r->n + 1) * sizeof *r->succ_base);
    r->succ = gm_malloc((edges ? edges : 1) * sizeof *r->succ);
    if (!r->succ_base || !r->succ) return GM_ERR_NOMEM;
    uint32_t e = 0;
    for (size_t t = 0; t < r->n; t++) {
        const gm_node *x = m->order.v[t];
        r->succ_base[t] = e;
        for (uint32_t k = 0; k < x->n_out; k++)
            for (uint32_t j = 0; j < x->out[k].n_uses; j++) r->succ[e++] = (uint32_t)reach_id(x->out[k].uses[j].node);
        for (uint32_t j = 0; j < x->ctrl_out.n; j++) r->succ[e++] = (uint32_t)reach_id(x->ctrl_out.v[j]);
    }
    r->succ_base[r->n] = e;
    return GM_OK;
}

/* One iterative DFS per graph (a million-node chain would overflow a recursive one). The
 * frames live in a scratch array of n entries: a DFS path holds each node at most once. */
static void reach_label(gm_reach *r, reach_frame *frames)
{
    uint32_t counter = 0;
    const gm_model *m = r->m;
    /* seen[] = 1 marks "discovered" during the build; queries start at stamp 2. */
    for (size_t g = 0; g < m->n_graphs; g++) {
        const gm_graph *gr = m->graphs[g];
        for (uint32_t s = 0; s < gr->nodes.n; s++) {
            const uint32_t root = (uint32_t)reach_id(gr->nodes.v[s]);
            if (r->seen[root]) continue;
            size_t sp = 0;
            r->seen[root] = 1;
            r->tlow[root] = counter + 1;
            frames[sp++] = (reach_frame){root, r->succ_base[root], UINT32_MAX};
            while (sp) {
                reach_frame *f = &frames[sp - 1];
                if (f->e < r->succ_base[f->id + 1]) {
                    const uint32_t y = r->succ[f->e++];
                    if (!r->seen[y]) {
                        r->seen[y] = 1;
                        r->tlow[y] = counter + 1;
                        frames[sp++] = (reach_frame){y, r->succ_base[y], UINT32_MAX};
                    } else if (r->post[y]) {
                        /* Finished already (in a DAG every discovered successor is). */
                        f->low = min_u32(f->low, r->low[y]);
                    }
                    continue;
                }
                const uint32_t x = f->id;
                r->post[x] = ++counter;
                r->low[x] = min_u32(f->low, counter);
                sp--;
                if (sp) frames[sp - 1].low = min_u32(frames[sp - 1].low, r->low[x]);
            }
        }
    }
}

gm_status gm_reach_new(const gm_model *m, gm_reach **out)
{
    *out = NULL;
    gm_reach *r = gm_calloc(1, sizeof *r);
    if (!r) return GM_ERR_NOMEM;
    r->m = m;
    r->n = m->order.n;
    size_t n = r->n ? r->n : 1;
    r->post = gm_calloc(n, sizeof *r->post);
    r->low = gm_calloc(n, sizeof *r->low);
    r->tlow = gm_calloc(n, sizeof *r->tlow);
    r->seen = gm_calloc(n, sizeof *r->seen);
    r->stack = gm_calloc(n, sizeof *r->stack);
    reach_frame *frames = gm_calloc(n, sizeof *frames);
    if (!r->post || !r->low || !r->tlow || !r->seen || !r->stack || !frames || build_succ(r) != GM_OK) {
        gm_free(frames);
        gm_reach_free(r);
        return GM_ERR_NOMEM;
    }
    reach_label(r, frames);
    gm_free(frames);
    r->stamp = 1;
    *out = r;
    return GM_OK;
}

void gm_reach_free(gm_reach *r)
{
    if (!r) return;
    gm_free(r->post);
    gm_free(r->low);
    gm_free(r->tlow);
    gm_free(r->seen);
    gm_free(r->stack);
    gm_free(r->succ_base);
    gm_free(r->succ);
    gm_free(r);
}

/* Can x reach the node whose labels are (pb, lb)? false = certainly not. */
static bool reach_may(const gm_reach *r, size_t ix, uint32_t pb, uint32_t lb)
{
    return r->low[ix] <= lb && pb <= r->post[ix];
}

/* Is the node with post number pb in x's DFS subtree? true = x certainly reaches it. */
static bool reach_tree(const gm_reach *r, size_t ix, uint32_t pb)
{
    return r->tlow[ix] <= pb && pb <= r->post[ix];
}

static bool reach_search(gm_reach *r, const gm_node *a, const gm_node *b)
{
    if (r->stamp == UINT32_MAX) {
        /* Wrapped after 4 billion searches: clear once rather than on every query. */
        memset(r->seen, 0, r->n * sizeof *r->seen);
        r->stamp = 1;
    }
    uint32_t stamp = ++r->stamp;
    const uint32_t ib = (uint32_t)reach_id(b);
    uint32_t pb = r->post[ib], lb = r->low[ib];
    size_t sp = 0;
    r->seen[reach_id(a)] = stamp;
    r->stack[sp++] = (uint32_t)reach_id(a);
    while (sp) {
        const uint32_t x = r->stack[--sp];
        for (uint32_t e = r->succ_base[x]; e < r->succ_base[x + 1]; e++) {
            const uint32_t y = r->succ[e];
            if (y == ib) return true;
            if (r->seen[y] == stamp) continue;
            r->seen[y] = stamp;
            /* A later node cannot lead back to b; nor can one whose interval misses b's. */
            if (y > ib || !reach_may(r, y, pb, lb)) continue;
            if (reach_tree(r, y, pb)) return true;
            r->stack[sp++] = y;
            r->stats.visited++;
        }
    }
    return false;
}

bool gm_reach_path(gm_reach *r, const gm_node *a, const gm_node *b)
{
    r->stats.queries++;
    if (a == b) {
        r->stats.by_filter++;
        return true;
    }
    if (a->graph != b->graph || a->topo_id > b->topo_id) {
        r->stats.by_filter++;
        return false;
    }
    size_t ia = reach_id(a), ib = reach_id(b);
    if (!reach_may(r, ia, r->post[ib], r->low[ib])) {
        r->stats.by_label++;
        return false;
    }
    if (reach_tree(r, ia, r->post[ib])) {
        r->stats.by_label++;
        return true;
    }
    r->stats.searched++;
    return reach_search(r, a, b);
}

bool gm_reach_connected(gm_reach *r, const gm_node *a, const gm_node *b)
{
    /* Only the earlier node can reach the later one. */
    return a->topo_id <= b->topo_id ? gm_reach_path(r, a, b) : gm_reach_path(r, b, a);
}

void gm_reach_get_stats(const gm_reach *r, gm_reach_stats *st) { *st = r->stats; }
