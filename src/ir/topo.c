/*
 * topo.c — the deterministic topological order. Per graph: Kahn's algorithm taking, among the
 * ready nodes, the one given first (a min-heap on each node's order key: its position in the
 * file, or for an inserted node the position of the node it serves), so independent nodes
 * keep the order the file gave them. Over the model: GE's GetAllNodes — each node followed by
 * the nodes of its subgraphs, in the order the node lists them. O((V + E) log V).
 *
 * The common case is cheaper: after a sort the nodes stand in key order and the passes append
 * the few they insert, so the nodes in (key, position) order are often already topological —
 * and then that order is exactly what Kahn's algorithm would pop (each node is ready when its
 * turn comes, and it is the least of the ready ones). So first the key order is formed (a sorted
 * prefix merged with the sorted appended tail) and every edge checked against it: O(V + E +
 * k log k) for k appended nodes; only when an edge points backwards does the heap run.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "util/alloc.h"
#include "util/parallel.h"

/* ---- a binary min-heap of node positions, ordered by (order_key, position) ---- */

typedef struct heap {
    uint32_t *v;
    size_t n;
    gm_node *const *nodes; /* the graph's list: positions index it */
} heap;

static bool before(const heap *h, uint32_t a, uint32_t b)
{
    int64_t ka = h->nodes[a]->order_key, kb = h->nodes[b]->order_key;
    return ka != kb ? ka < kb : a < b;
}

static void heap_push(heap *h, uint32_t x)
{
    size_t i = h->n++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!before(h, x, h->v[p])) break;
        h->v[i] = h->v[p];
        i = p;
    }
    h->v[i] = x;
}

static uint32_t heap_pop(heap *h)
{
    uint32_t top = h->v[0], x = h->v[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n) break;
        if (c + 1 < h->n && before(h, h->v[c + 1], h->v[c])) c++;
        if (!before(h, h->v[c], x)) break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (h->n) h->v[i] = x;
    return top;
}

/* Names a cycle among the nodes left with predecessors: walk back through unsorted
 * predecessors until a node repeats; the repeat is on a cycle. */
static gm_status report_cycle(const gm_graph *g, const uint32_t *indeg, gm_error *err)
{
    const gm_model *m = g->model;
    const gm_node *start = NULL;
    for (uint32_t i = 0; i < g->nodes.n && !start; i++) {
        if (indeg[i]) start = g->nodes.v[i];
    }
    uint8_t *seen = gm_calloc(g->nodes.n, 1);
    if (!seen) return gm_error_set(err, GM_ERR_NOMEM, "%s: out of memory", m->source);
    const gm_node *n = start;
    while (!seen[n->given_pos]) {
        seen[n->given_pos] = 1;
        const gm_node *next = NULL;
        for (uint32_t i = 0; i < n->n_in && !next; i++) {
            if (n->in[i].src && indeg[n->in[i].src->given_pos]) next = n->in[i].src;
        }
        for (uint32_t i = 0; i < n->ctrl_in.n && !next; i++) {
            if (indeg[n->ctrl_in.v[i]->given_pos]) next = n->ctrl_in.v[i];
        }
        n = next; /* a node with indeg > 0 always has an unsorted predecessor */
    }
    /* n is on the cycle: list it forward as far as the message allows. */
    char path[512];
    size_t len = 0;
    const gm_node *c = n;
    memset(seen, 0, g->nodes.n);
    do {
        int w = snprintf(path + len, sizeof path - len, "%s'%s'", len ? " <- " : "", c->name);
        if (w < 0 || (size_t)w >= sizeof path - len) break;
        len += (size_t)w;
        seen[c->given_pos] = 1;
        const gm_node *next = NULL;
        for (uint32_t i = 0; i < c->n_in && !next; i++) {
            if (c->in[i].src && indeg[c->in[i].src->given_pos]) next = c->in[i].src;
        }
        for (uint32_t i = 0; i < c->ctrl_in.n && !next; i++) {
            if (indeg[c->ctrl_in.v[i]->given_pos]) next = c->ctrl_in.v[i];
        }
        c = next;
    } while (c && !seen[c->given_pos]);
    gm_free(seen);
    return gm_error_set(err, GM_ERR_INPUT, "%s: graph '%s': node '%s' is on a cycle: %s <- '%s'", m->source, g->name,
                        n->name, path, c ? c->name : n->name);
}

static void count_edge(uint32_t *indeg, const gm_node *succ) { indeg[succ->given_pos]++; }

static int cmp_key_pos(const void *a, const void *b)
{
    const gm_node *x = *(const gm_node *const *)a, *y = *(const gm_node *const *)b;
    if (x->order_key != y->order_key) return x->order_key < y->order_key ? -1 : 1;
    return (x->given_pos > y->given_pos) - (x->given_pos < y->given_pos);
}

/* Does every edge out of sorted[from, to) point forward (to a higher rank)? */
static bool edges_forward(gm_node *const *sorted, const uint32_t *rank, uint32_t from, uint32_t to)
{
    for (uint32_t i = from; i < to; i++) {
        const gm_node *x = sorted[i];
        for (uint32_t k = 0; k < x->n_out; k++)
            for (uint32_t j = 0; j < x->out[k].n_uses; j++)
                if (rank[x->out[k].uses[j].node->given_pos] <= i) return false;
        for (uint32_t j = 0; j < x->ctrl_out.n; j++)
            if (rank[x->ctrl_out.v[j]->given_pos] <= i) return false;
    }
    return true;
}

/* The edge check of a big graph in parts side by side: it only reads, and it is most of a
 * re-sort that finds the order standing (a million-node root after each pass that inserts). */
enum { EDGES_APART = 65536 };

typedef struct edge_parts {
    gm_node *const *sorted;
    const uint32_t *rank;
    uint32_t n;
    bool ok[GM_PARALLEL_MAX];
} edge_parts;

static void check_edges_part(void *ctx, unsigned part, unsigned parts)
{
    edge_parts *e = ctx;
    size_t b, end;
    gm_parallel_share(e->n, part, parts, &b, &end);
    e->ok[part] = edges_forward(e->sorted, e->rank, (uint32_t)b, (uint32_t)end);
}

/* The nodes in (key, position) order into sorted[], if that order is topological (rank is
 * scratch of n entries). False: an edge points backwards, or no memory for the tail.
 *
 * known: how many first nodes are known to stand as the last sort left them, at position i
 * with key i * GM_ORDER_KEY_GAP (0: none). Their keys and positions are then known without
 * reading them, where reading them was most of a re-sort that finds the order standing (a
 * miss per node of a million-node graph, four times). *same: how many first nodes keep their
 * place (sorted[i] == v[i]), so that only the rest need new keys. */
static bool sort_by_key(const gm_graph *g, uint32_t known, gm_node **sorted, uint32_t *rank, uint32_t *same)
{
    const uint32_t n = g->nodes.n;
    gm_node *const *v = g->nodes.v;
#ifndef NDEBUG
    for (uint32_t i = 0; i < known; i++) assert(v[i]->given_pos == i && v[i]->order_key == (int64_t)i * GM_ORDER_KEY_GAP);
#endif
    uint32_t p = known ? known : 1;
    while (p < n && v[p - 1]->order_key <= v[p]->order_key) p++;
    gm_node **tail = NULL;
    if (p < n) {
        if (!(tail = gm_malloc((size_t)(n - p) * sizeof *tail))) return false;
        memcpy(tail, v + p, (size_t)(n - p) * sizeof *tail);
        qsort(tail, n - p, sizeof *tail, cmp_key_pos);
    }
    *same = n;
    /* merge: on equal keys the prefix comes first; a prefix node's position is its index */
    for (uint32_t i = 0, a = 0, b = 0; i < n; i++) {
        int64_t ka = a < known ? (int64_t)a * GM_ORDER_KEY_GAP : a < p ? v[a]->order_key : 0;
        if (b == n - p || (a < p && ka <= tail[b]->order_key)) {
            sorted[i] = v[a];
            rank[a++] = i;
        } else {
            if (*same == n) *same = i;
            sorted[i] = tail[b++];
            rank[sorted[i]->given_pos] = i;
        }
    }
    if (known < *same) *same = known; /* the nodes after the known ones need their keys */
    gm_free(tail);
    edge_parts e = {sorted, rank, n, {false}};
    const unsigned parts = n >= EDGES_APART ? gm_parallel_parts(0, 2) : 1;
    gm_parallel_run(parts, check_edges_part, &e);
    for (unsigned k = 0; k < parts; k++)
        if (!e.ok[k]) return false;
    return true;
}

/* Kahn's algorithm with the heap: sorted[] gets the nodes in order; returns how many (fewer
 * than n on a cycle, indeg then marking the nodes left). indeg is scratch of n entries. */
static uint32_t kahn(const gm_graph *g, heap *h, uint32_t *indeg, gm_node **sorted)
{
    const uint32_t n = g->nodes.n;
    memset(indeg, 0, (size_t)n * sizeof *indeg);
    for (uint32_t i = 0; i < n; i++) {
        const gm_node *x = g->nodes.v[i];
        for (uint32_t k = 0; k < x->n_out; k++) {
            for (uint32_t j = 0; j < x->out[k].n_uses; j++) count_edge(indeg, x->out[k].uses[j].node);
        }
        for (uint32_t j = 0; j < x->ctrl_out.n; j++) count_edge(indeg, x->ctrl_out.v[j]);
    }
    for (uint32_t i = 0; i < n; i++) {
        if (!indeg[i]) heap_push(h, i);
    }
    uint32_t done = 0;
    while (h->n) {
        gm_node *x = g->nodes.v[heap_pop(h)];
        sorted[done++] = x;
        for (uint32_t k = 0; k < x->n_out; k++) {
            for (uint32_t j = 0; j < x->out[k].n_uses; j++) {
                uint32_t p = x->out[k].uses[j].node->given_pos;
                if (--indeg[p] == 0) heap_push(h, p);
            }
        }
        for (uint32_t j = 0; j < x->ctrl_out.n; j++) {
            uint32_t p = x->ctrl_out.v[j]->given_pos;
            if (--indeg[p] == 0) heap_push(h, p);
        }
    }
    return done;
}

/* known: see sort_by_key. */
static gm_status sort_graph(gm_graph *g, uint32_t known, gm_error *err)
{
    uint32_t n = g->nodes.n;
    if (n == 0) return GM_OK;
    uint32_t *indeg = gm_calloc(n, sizeof *indeg);
    heap h = {gm_malloc((size_t)n * sizeof(uint32_t)), 0, g->nodes.v};
    gm_node **sorted = gm_malloc((size_t)n * sizeof *sorted);
    if (!indeg || !h.v || !sorted) {
        gm_free(indeg);
        gm_free(h.v);
        gm_free(sorted);
        return gm_error_set(err, GM_ERR_NOMEM, "%s: out of memory", g->model->source);
    }
    /* nodes after the known ones stand where they were appended, unless a compaction moved
     * them (then nothing is known) */
    for (uint32_t i = known; i < n; i++) g->nodes.v[i]->given_pos = i;
    uint32_t same = 0;
    uint32_t done = sort_by_key(g, known, sorted, indeg, &same) ? n : (same = 0, kahn(g, &h, indeg, sorted));
    gm_status st = GM_OK;
    if (done < n) {
        st = report_cycle(g, indeg, err);
    } else {
        /* The sorted order becomes the given order, with room between keys for insertions (the
         * first `same` nodes have their place and key already). */
        memcpy(g->nodes.v, sorted, (size_t)n * sizeof *sorted);
        for (uint32_t i = same; i < n; i++) {
            g->nodes.v[i]->given_pos = i;
            g->nodes.v[i]->order_key = (int64_t)i * GM_ORDER_KEY_GAP;
        }
        g->key_lo = 0;
        g->key_hi = (int64_t)(n - 1) * GM_ORDER_KEY_GAP;
    }
    gm_free(indeg);
    gm_free(h.v);
    gm_free(sorted);
    return st;
}

/* GetAllNodes order, iteratively (nesting can be deep): a stack of (graph, next node). */
static gm_status build_order(gm_model *m, gm_error *err)
{
    typedef struct { const gm_graph *g; uint32_t next; } frame;
    size_t total = 0;
    for (size_t gi = 0; gi < m->n_graphs; gi++) total += m->graphs[gi]->nodes.n;
    gm_node **order = gm_malloc((total ? total : 1) * sizeof *order);
    frame *stack = gm_malloc(m->n_graphs * sizeof *stack);
    if (!order || !stack) {
        gm_free(order);
        gm_free(stack);
        return gm_error_set(err, GM_ERR_NOMEM, "%s: out of memory", m->source);
    }
    size_t depth = 0, pos = 0;
    m->graphs[0]->depth = 0;
    stack[depth++] = (frame){m->graphs[0], 0};
    while (depth) {
        frame *f = &stack[depth - 1];
        if (f->next == f->g->nodes.n) {
            depth--;
            continue;
        }
        gm_node *n = f->g->nodes.v[f->next++];
        n->topo_id = (int64_t)pos;
        order[pos++] = n;
        /* Push subgraphs in reverse so the first listed is walked first. */
        for (uint32_t i = n->n_sub; i-- > 0;) {
            n->sub[i]->depth = n->graph->depth + 1;
            stack[depth++] = (frame){n->sub[i], 0};
        }
    }
    gm_free(stack);
    gm_free(m->order.v);
    m->order.v = order;
    m->order.n = (uint32_t)pos;
    m->order.cap = (uint32_t)(total ? total : 1);
    return GM_OK;
}

void gm_node_meet(const gm_node **a, const gm_node **b)
{
    const gm_node *x = *a, *y = *b;
    assert(x->graph->model == y->graph->model);
    while (x->graph->depth > y->graph->depth) x = x->graph->parent;
    while (y->graph->depth > x->graph->depth) y = y->graph->parent;
    while (x->graph != y->graph) x = x->graph->parent, y = y->graph->parent;
    *a = x, *b = y;
}

void gm_node_meet_from(const gm_node *a, const gm_node **a_up, const gm_node **b)
{
    const gm_node *x = *a_up && (*a_up)->graph->depth >= (*b)->graph->depth ? *a_up : a;
    gm_node_meet(&x, b);
    *a_up = x;
}

void gm_model_compact(gm_model *m)
{
    m->order.n = 0; /* it may point at dead nodes; rebuilt by the next sort */
    for (size_t gi = 0; gi < m->n_graphs; gi++) m->graphs[gi]->intact = m->graphs[gi]->sorted_n;
    if (!m->n_dead) return; /* nothing to drop: no walk of every list */
    for (size_t gi = 0; gi < m->n_graphs; gi++) {
        gm_graph *g = m->graphs[gi];
        gm_node_vec *v = &g->nodes;
        uint32_t w = 0, old_left = 0;
        for (uint32_t i = 0; i < v->n; i++) {
            if (v->v[i]->dead) {
                if (i < g->intact) g->intact = i; /* the old nodes after it move down */
                gm_node_free(v->v[i]);
            } else {
                old_left += i < g->sorted_n;
                v->v[w++] = v->v[i];
            }
        }
        v->n = w;
        g->sorted_n = old_left; /* the survivors keep their order: the old ones still come first */
    }
    m->n_dead = 0;
}

gm_status gm_model_toposort(gm_model *m, gm_error *err)
{
    if (!m->resolved) return gm_model_finalize(m, err);
    if (m->sorted) return GM_OK; /* nothing changed the graph since the last sort */
    gm_model_compact(m);
    for (size_t gi = 0; gi < m->n_graphs; gi++) {
        gm_graph *g = m->graphs[gi];
        /* A known graph stays known unless a node new since the last sort is not (a million-node
         * graph is not walked again for the copy a pass inserted); an unknown one may have lost
         * its unknown node: ask again. */
        if (g->known_shape == 1) {
            for (uint32_t i = g->sorted_n; g->known_shape == 1 && i < g->nodes.n; i++)
                if (!gm_node_outputs_known(g->nodes.v[i])) g->known_shape = 0;
        } else if (g->known_shape == 0) {
            g->known_shape = -1;
        }
        gm_status st = sort_graph(g, g->intact < g->sorted_n ? g->intact : g->sorted_n, err);
        if (st != GM_OK) return st;
        g->sorted_n = g->nodes.n;
    }
    gm_status st = build_order(m, err);
    m->sorted = st == GM_OK;
    return st;
}
