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
    const gm_node **stack; /* search stack: a node is pushed at most once per search */
    gm_reach_stats stats;
};

/* Iterates a node's successors: the consumers of each output, then the control outputs. */
typedef struct reach_iter {
    const gm_node *n;
    uint32_t k, j, c;
    uint32_t low; /* while building: min low over the successors seen so far */
} reach_iter;

static const gm_node *reach_next(reach_iter *it)
{
    const gm_node *n = it->n;
    while (it->k < n->n_out) {
        if (it->j < n->out[it->k].n_uses) return n->out[it->k].uses[it->j++].node;
        it->k++;
        it->j = 0;
    }
    if (it->c < n->ctrl_out.n) return n->ctrl_out.v[it->c++];
    return NULL;
}

static size_t reach_id(const gm_node *n) { return (size_t)n->topo_id; }

static uint32_t min_u32(uint32_t a, uint32_t b) { return a < b ? a : b; }

/* One iterative DFS per graph (a million-node chain would overflow a recursive one). The
 * frames live in a scratch array of n entries: a DFS path holds each node at most once. */
static void reach_label(gm_reach *r, reach_iter *frames)
{
    uint32_t counter = 0;
    const gm_model *m = r->m;
    /* seen[] = 1 marks "discovered" during the build; queries start at stamp 2. */
    for (size_t g = 0; g < m->n_graphs; g++) {
        const gm_graph *gr = m->graphs[g];
        for (uint32_t s = 0; s < gr->nodes.n; s++) {
            const gm_node *root = gr->nodes.v[s];
            if (r->seen[reach_id(root)]) continue;
            size_t sp = 0;
            r->seen[reach_id(root)] = 1;
            r->tlow[reach_id(root)] = counter + 1;
            frames[sp++] = (reach_iter){.n = root, .low = UINT32_MAX};
            while (sp) {
                reach_iter *f = &frames[sp - 1];
                const gm_node *y = reach_next(f);
                if (y) {
                    size_t iy = reach_id(y);
                    if (!r->seen[iy]) {
                        r->seen[iy] = 1;
                        r->tlow[iy] = counter + 1;
                        frames[sp++] = (reach_iter){.n = y, .low = UINT32_MAX};
                    } else if (r->post[iy]) {
                        /* Finished already (in a DAG every discovered successor is). */
                        f->low = min_u32(f->low, r->low[iy]);
                    }
                    continue;
                }
                size_t ix = reach_id(f->n);
                r->post[ix] = ++counter;
                r->low[ix] = min_u32(f->low, counter);
                sp--;
                if (sp) frames[sp - 1].low = min_u32(frames[sp - 1].low, r->low[ix]);
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
    reach_iter *frames = gm_calloc(n, sizeof *frames);
    if (!r->post || !r->low || !r->tlow || !r->seen || !r->stack || !frames) {
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
    size_t ib = reach_id(b);
    int64_t tb = b->topo_id;
    uint32_t pb = r->post[ib], lb = r->low[ib];
    size_t sp = 0;
    r->seen[reach_id(a)] = stamp;
    r->stack[sp++] = a;
    while (sp) {
        reach_iter it = {.n = r->stack[--sp]};
        for (const gm_node *y; (y = reach_next(&it)) != NULL;) {
            if (y == b) return true;
            size_t iy = reach_id(y);
            if (r->seen[iy] == stamp) continue;
            r->seen[iy] = stamp;
            /* A later node cannot lead back to b; nor can one whose interval misses b's. */
            if (y->topo_id > tb || !reach_may(r, iy, pb, lb)) continue;
            if (reach_tree(r, iy, pb)) return true;
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
