/*
 * verify_order.c — the execution model of docs/plan-format.md and the overlap check.
 *
 * Events. The planning order (the plan's "order", else the model's) is laid out as a sequence
 * of events: one per node, two for a node with subgraphs (enter, then its bodies in the order
 * it lists them, then exit). Happens-before is reachability over: data and control edges
 * (producer's exit -> consumer's enter), enter(P) -> every node of P's bodies -> exit(P), and
 * program order (each event -> the next event of the same stream). The sequence is a
 * topological order of that DAG (the order is checked against every edge first).
 *
 * Vector clocks. Walking the sequence once, each event e gets vc[e][s], the index (among
 * stream s's events) of the last event of stream s that reaches e, the max over e's
 * predecessors. Because each stream's events are chained by program order, "a reaches b" is
 * exactly vc[b][stream(a)] >= index(a): O(1) per query, O((V + E) x streams) time and
 * 4 x events x streams bytes to build. (Streams are few in GE's models; a model with very many
 * streams and nodes would want gm_reach's pruned search instead — not done here.)
 *
 * Accesses. A symbol is accessed at the events of its anchors' nodes (both events of a node
 * with subgraphs) and of the atomic-clean node that zeroes an atomic anchor's memory; root Data outputs at START (before everything), Const/Variable/root RefData
 * outputs at START and END, root NetOutput inputs at END. A body output its loop stacks
 * (ops/op_table.h) is accessed by the loop node too, which reads it after the body. A symbol
 * with an access inside a While (cond or body, any depth) and one outside it is also accessed
 * at that While's enter and exit: it lives through every iteration.
 *
 * Symbols A and B may share memory when A happens before B: every access of A strictly before
 * every access of B. Taking per stream the last access of A, that is: for every access b of
 * B and every stream s A touches, vc[b][s] >= last_A(s); plus max_event(A) < min_event(B),
 * which excludes a shared event (one node touching both). Cost O(|A| + |B| x streams(A)).
 *
 * Sweep. Per region (and per batch label, "" joining each), the symbols' address intervals
 * are swept; the active ones are kept ordered by first access (a Fenwick tree over the
 * symbols' ranks in that order). Symbols covering one address
 * must form a chain under happens-before; a set is a chain iff each pair adjacent in
 * first-access order is ordered (happens-before is transitive), and every such adjacency
 * appears in the active array at some point of the sweep. So only pairs that become adjacent
 * are tested: at most 2 per insertion and 1 per removal, O(S) tests in all, plus O(S log S)
 * sorting and O(log S) per step of the sweep. Every reported pair overlaps in address
 * (both active at once) and is unordered: a true problem, though not every bad pair is listed.
 */
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "ops/op_table.h"
#include "plan/verify_internal.h"
#include "util/alloc.h"
#include "util/distinct.h"

#define PROBLEM(...)                                                    \
    do {                                                                \
        if (gm_vfy_problem(__VA_ARGS__) != GM_OK) return GM_ERR_NOMEM;  \
    } while (0)

void gm_vfy_order_free(gm_vfy *c)
{
    gm_free(c->pos);
    gm_free(c->ev_enter);
    gm_free(c->ev_exit);
    gm_free(c->ev_node);
    gm_free(c->ev_stream);
    gm_free(c->ev_sidx);
    gm_free(c->vc);
    gm_free(c->acc);
    gm_free(c->last);
    gm_free(c->touched);
    gm_free(c->seen);
    gm_free(c->loop_up);
}

/* ---- the planning order ----------------------------------------------------------------- */

static bool edge_against_order(const gm_vfy *c, const gm_node *src, const gm_node *dst)
{
    return c->pos[src->topo_id] >= c->pos[dst->topo_id];
}

typedef struct order_walk {
    int64_t j;
    size_t bad, unknown;
} order_walk;

static gm_status order_entry(gm_vfy *c, const cJSON *it, size_t i, void *ctx)
{
    order_walk *w = ctx;
    (void)i;
    const gm_node *x = NULL;
    if (cJSON_IsString(it)) {
        /* a plan in the model's own order names node j at entry j: one comparison instead of a
         * hash lookup (names are unique, so a match is the node the lookup would find) */
        const gm_node *guess = gm_model_node_at(c->m, (size_t)w->j);
        x = guess && !strcmp(guess->name, it->valuestring) ? guess : gm_model_find_node(c->m, it->valuestring);
    }
    if (!x) {
        w->bad++;
        w->unknown++;
        PROBLEM(c, GM_PLAN_P_BAD_ORDER, -1, -1, NULL, -1, false, "\"order\" entry %lld names no node%s%s",
                (long long)w->j, cJSON_IsString(it) ? ": " : "", cJSON_IsString(it) ? it->valuestring : "");
    } else if (c->pos[x->topo_id] >= 0) {
        w->bad++;
        PROBLEM(c, GM_PLAN_P_BAD_ORDER, -1, -1, x, -1, false, "\"order\" lists node '%s' twice", x->name);
    } else {
        c->pos[x->topo_id] = w->j;
    }
    w->j++;
    return GM_OK;
}

/* pos[] from the plan's "order"; on any problem with it, the model's order (so the other
 * checks still run on a sound happens-before). */
static gm_status build_pos(gm_vfy *c, gm_error *err)
{
    size_t n = c->n_nodes;
    c->pos = gm_malloc((n ? n : 1) * sizeof *c->pos);
    if (!c->pos) return gm_error_set(err, GM_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) c->pos[i] = -1;
    bool order = c->order.item != NULL;
    order_walk w = {0, 0, 0};
    if (order) {
        gm_status st = gm_vfy_each(c, &c->order, order_entry, &w, err);
        if (st == GM_ERR_NOMEM) return gm_error_set(err, GM_ERR_NOMEM, "out of memory");
        if (st != GM_OK) return st;
        c->v->order_nodes = (size_t)w.j;
        c->v->order_unknown = w.unknown;
        size_t missing = 0;
        const gm_node *first = NULL;
        for (size_t i = 0; i < n; i++)
            if (c->pos[i] < 0 && missing++ == 0) first = gm_model_node_at(c->m, i);
        if (missing) {
            w.bad++;
            if (gm_vfy_problem(c, GM_PLAN_P_BAD_ORDER, -1, -1, first, -1, false,
                               "\"order\" leaves out %zu node(s), the first '%s'", missing, first->name) != GM_OK)
                return gm_error_set(err, GM_ERR_NOMEM, "out of memory");
        }
        for (size_t i = 0; i < n && !missing; i++) {
            const gm_node *x = gm_model_node_at(c->m, i);
            const gm_node *src = NULL;
            for (uint32_t k = 0; k < x->n_in && !src; k++)
                if (x->in[k].src && edge_against_order(c, x->in[k].src, x)) src = x->in[k].src;
            for (uint32_t k = 0; k < x->ctrl_in.n && !src; k++)
                if (edge_against_order(c, x->ctrl_in.v[k], x)) src = x->ctrl_in.v[k];
            if (src) {
                w.bad++;
                if (gm_vfy_problem(c, GM_PLAN_P_BAD_ORDER, -1, -1, x, -1, false,
                                   "\"order\" puts '%s' before '%s', which it depends on", x->name,
                                   src->name) != GM_OK)
                    return gm_error_set(err, GM_ERR_NOMEM, "out of memory");
            }
        }
    }
    if (!order || w.bad)
        for (size_t i = 0; i < n; i++) c->pos[i] = (int64_t)i;
    return GM_OK;
}

/* ---- events and vector clocks ------------------------------------------------------------ */

typedef struct ev_build {
    gm_vfy *c;
    int64_t *stream_ids; /* sorted distinct stream ids */
    int32_t *last_of_stream, *count_of_stream;
} ev_build;

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int32_t dense_stream(const ev_build *b, int64_t id)
{
    size_t lo = 0, hi = b->c->n_streams;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (b->stream_ids[mid] < id) lo = mid + 1;
        else hi = mid;
    }
    return (int32_t)lo;
}

static void vc_merge(gm_vfy *c, int32_t e, int32_t pred)
{
    if (pred < 0 || pred >= e) return;
    size_t S = c->n_streams;
    int32_t *row = c->vc + (size_t)e * S;
    const int32_t *p = c->vc + (size_t)pred * S;
    for (size_t s = 0; s < S; s++)
        if (p[s] > row[s]) row[s] = p[s];
}

static void merge_subgraph_exits(gm_vfy *c, int32_t e, const gm_node *n)
{
    for (uint32_t g = 0; g < n->n_sub; g++) {
        const gm_graph *sg = n->sub[g];
        for (uint32_t k = 0; k < sg->nodes.n; k++) vc_merge(c, e, c->ev_exit[sg->nodes.v[k]->topo_id]);
    }
}

/* Appends one event for n (the exit event of a node with subgraphs when `exit`). */
static int32_t emit(ev_build *b, const gm_node *n, bool exit)
{
    gm_vfy *c = b->c;
    int32_t e = (int32_t)c->n_ev++;
    size_t S = c->n_streams;
    int32_t s = dense_stream(b, n->stream);
    int32_t *row = c->vc + (size_t)e * S;
    for (size_t k = 0; k < S; k++) row[k] = -1;
    c->ev_node[e] = n;
    c->ev_stream[e] = s;
    if (exit) {
        vc_merge(c, e, c->ev_enter[n->topo_id]);
        merge_subgraph_exits(c, e, n);
    } else {
        /* start writers (root Data, Const, Variable) ran before everything: their edges order
         * nothing (docs/plan-format.md, "Start and end") */
        for (uint32_t k = 0; k < n->n_in; k++)
            if (n->in[k].src && !gm_node_at_start(n->in[k].src)) vc_merge(c, e, c->ev_exit[n->in[k].src->topo_id]);
        for (uint32_t k = 0; k < n->ctrl_in.n; k++)
            if (!gm_node_at_start(n->ctrl_in.v[k])) vc_merge(c, e, c->ev_exit[n->ctrl_in.v[k]->topo_id]);
        if (n->graph->parent) vc_merge(c, e, c->ev_enter[n->graph->parent->topo_id]);
    }
    vc_merge(c, e, b->last_of_stream[s]);
    b->last_of_stream[s] = e;
    c->ev_sidx[e] = b->count_of_stream[s]++;
    row[s] = c->ev_sidx[e];
    return e;
}

/* qsort has no context argument in C11; thread-local so verifiers may run side by side */
static _Thread_local const gm_vfy *g_sort_ctx;

static int by_pos(const void *a, const void *b)
{
    const gm_node *x = *(gm_node *const *)a, *y = *(gm_node *const *)b;
    return cmp_i64(&g_sort_ctx->pos[x->topo_id], &g_sort_ctx->pos[y->topo_id]);
}

static gm_status emit_graph(ev_build *b, const gm_graph *g)
{
    gm_vfy *c = b->c;
    size_t n = g->nodes.n;
    gm_node **v = gm_malloc((n ? n : 1) * sizeof *v);
    if (!v) return GM_ERR_NOMEM;
    memcpy(v, g->nodes.v, n * sizeof *v);
    /* the planner writes the model's order, which each graph's list already follows: sort
     * only when the plan's order differs */
    bool sorted = true;
    for (size_t i = 1; i < n && sorted; i++) sorted = c->pos[v[i - 1]->topo_id] < c->pos[v[i]->topo_id];
    g_sort_ctx = c;
    if (!sorted) qsort(v, n, sizeof *v, by_pos);
    gm_status st = GM_OK;
    for (size_t i = 0; i < n && st == GM_OK; i++) {
        const gm_node *x = v[i];
        int32_t e = emit(b, x, false);
        c->ev_enter[x->topo_id] = c->ev_exit[x->topo_id] = e;
        if (!x->n_sub) continue;
        for (uint32_t k = 0; k < x->n_sub && st == GM_OK; k++) st = emit_graph(b, x->sub[k]);
        if (st == GM_OK) c->ev_exit[x->topo_id] = emit(b, x, true);
    }
    gm_free(v);
    return st;
}

static gm_status build_events(gm_vfy *c, gm_error *err)
{
    size_t n = c->n_nodes, n_ev = 0;
    ev_build b = {c, NULL, NULL, NULL};
    b.stream_ids = gm_malloc((n ? n : 1) * sizeof *b.stream_ids);
    if (!b.stream_ids) return gm_error_set(err, GM_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const gm_node *x = gm_model_node_at(c->m, i);
        b.stream_ids[i] = x->stream;
        n_ev += x->n_sub ? 2 : 1;
    }
    size_t S = gm_distinct_i64(b.stream_ids, n);
    c->n_streams = S ? S : 1;
    gm_status st = GM_OK;
    if (n_ev && c->n_streams > (SIZE_MAX / sizeof(int32_t)) / n_ev / 2) {
        st = gm_error_set(err, GM_ERR_NOMEM, "%s: %zu events x %zu streams is too large for the verifier", c->src,
                          n_ev, c->n_streams);
        goto out;
    }
    c->ev_enter = gm_malloc((n ? n : 1) * sizeof *c->ev_enter);
    c->ev_exit = gm_malloc((n ? n : 1) * sizeof *c->ev_exit);
    c->ev_node = gm_malloc((n_ev ? n_ev : 1) * sizeof *c->ev_node);
    c->ev_stream = gm_malloc((n_ev ? n_ev : 1) * sizeof *c->ev_stream);
    c->ev_sidx = gm_malloc((n_ev ? n_ev : 1) * sizeof *c->ev_sidx);
    c->vc = gm_malloc((n_ev ? n_ev : 1) * c->n_streams * sizeof *c->vc);
    c->last = gm_malloc(c->n_streams * sizeof *c->last);
    c->touched = gm_malloc(c->n_streams * sizeof *c->touched);
    b.last_of_stream = gm_malloc(c->n_streams * sizeof *b.last_of_stream);
    b.count_of_stream = gm_calloc(c->n_streams, sizeof *b.count_of_stream);
    if (!c->ev_enter || !c->ev_exit || !c->ev_node || !c->ev_stream || !c->ev_sidx || !c->vc || !c->last ||
        !c->touched || !b.last_of_stream || !b.count_of_stream) {
        st = gm_error_set(err, GM_ERR_NOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) c->ev_enter[i] = c->ev_exit[i] = -1;
    for (size_t s = 0; s < c->n_streams; s++) b.last_of_stream[s] = -1, c->last[s] = -1;
    if (n && emit_graph(&b, gm_model_root(c->m)) != GM_OK) st = gm_error_set(err, GM_ERR_NOMEM, "out of memory");
out:
    gm_free(b.stream_ids);
    gm_free(b.last_of_stream);
    gm_free(b.count_of_stream);
    return st;
}

/* ---- accesses -------------------------------------------------------------------------- */

static gm_status push_acc(gm_vfy *c, int32_t e)
{
    if (e < 0) return GM_OK;
    if (c->n_acc == c->cap_acc && gm_grow((void **)&c->acc, sizeof *c->acc, c->n_acc + 1, &c->cap_acc))
        return GM_ERR_NOMEM;
    c->acc[c->n_acc++] = e;
    return GM_OK;
}

typedef struct loop_count {
    const gm_node *w;
    size_t n;
} loop_count;

/* The nearest While whose bodies hold n (any depth), NULL for none: c->loop_up, filled once in
 * the model order (a parent comes before its bodies), so deep nesting costs one pass in all,
 * not a climb per access, and no recursion. */
static const gm_node *loop_around(const gm_vfy *c, const gm_node *n)
{
    int32_t w = c->loop_up[n->topo_id];
    return w >= 0 ? gm_model_node_at(c->m, (size_t)w) : NULL;
}

static void fill_loop_up(gm_vfy *c)
{
    for (size_t t = 0; t < c->n_nodes; t++) {
        const gm_node *p = gm_model_node_at(c->m, t)->graph->parent;
        c->loop_up[t] = !p ? -1 : gm_node_ctrl_kind(p) == GM_CTRL_WHILE ? (int32_t)p->topo_id : c->loop_up[p->topo_id];
    }
}

/* Counts an access by n in every While around it (loops[] grows as needed). */
static gm_status count_loops(const gm_vfy *c, const gm_node *n, loop_count **loops, size_t *n_loops, size_t *cap)
{
    for (const gm_node *w = loop_around(c, n); w; w = loop_around(c, w)) {
        size_t j = 0;
        while (j < *n_loops && (*loops)[j].w != w) j++;
        if (j == *n_loops) {
            if (*n_loops == *cap && gm_grow((void **)loops, sizeof **loops, *n_loops + 1, cap)) return GM_ERR_NOMEM;
            (*loops)[(*n_loops)++] = (loop_count){w, 0};
        }
        (*loops)[j].n++;
    }
    return GM_OK;
}

static gm_status build_accesses(gm_vfy *c)
{
    loop_count *loops = NULL;
    size_t cap = 0;
    gm_status st = GM_OK;
    c->loop_up = gm_malloc((c->n_nodes ? c->n_nodes : 1) * sizeof *c->loop_up);
    if (!c->loop_up) return GM_ERR_NOMEM;
    fill_loop_up(c);
    for (size_t s = 0; s < c->n_syms && st == GM_OK; s++) {
        gm_vfy_sym *y = &c->syms[s];
        y->acc_first = (uint32_t)c->n_acc;
        size_t n_loops = 0, total = 0;
        for (uint32_t k = 0; k < y->n_anchors && st == GM_OK; k++) {
            const gm_vfy_anchor *a = &c->anc[y->first_anchor + k];
            const gm_node *n = a->node;
            if (!n) continue;
            total++;
            bool root = n->graph->parent == NULL;
            uint32_t f = n->op->flags;
            bool root_refdata = root && (f & GM_OP_VAR_LIKE) && (f & GM_OP_DATA);
            /* gm_node_is: a weight's PlaceHolder is a weight too */
            if (a->out && (gm_node_is(n, GM_OP_CONST | GM_OP_VARIABLE) || root_refdata)) {
                y->at_start = y->at_end = true;
                continue;
            }
            if (a->out && root && (f & GM_OP_DATA)) {
                y->at_start = true;
                continue;
            }
            if (!a->out && root && (f & GM_OP_NETOUTPUT)) {
                y->at_end = true;
                continue;
            }
            st = push_acc(c, c->ev_enter[n->topo_id]);
            if (st == GM_OK && c->ev_exit[n->topo_id] != c->ev_enter[n->topo_id])
                st = push_acc(c, c->ev_exit[n->topo_id]);
            /* an atomic op's memory is zeroed first by its clean node: a write, so an access */
            const gm_node *clean = gm_anchor_clean_node(n, a->out, a->index);
            if (clean && st == GM_OK) st = push_acc(c, c->ev_enter[clean->topo_id]);
            if (st == GM_OK) st = count_loops(c, n, &loops, &n_loops, &cap);
            /* a body output its loop stacks is read by the loop after the body (op_table.h): an
             * access of the loop node, outside the body */
            if (st != GM_OK || a->out || !gm_body_output_is_stacked(n, a->index)) continue;
            const gm_node *p = n->graph->parent;
            total++;
            st = push_acc(c, c->ev_enter[p->topo_id]);
            if (st == GM_OK) st = push_acc(c, c->ev_exit[p->topo_id]);
            if (st == GM_OK) st = count_loops(c, p, &loops, &n_loops, &cap);
        }
        /* used inside a loop and outside it: live through the whole loop */
        for (size_t j = 0; j < n_loops && st == GM_OK; j++) {
            if (loops[j].n == total) continue;
            st = push_acc(c, c->ev_enter[loops[j].w->topo_id]);
            if (st == GM_OK) st = push_acc(c, c->ev_exit[loops[j].w->topo_id]);
        }
        y->n_acc = (uint32_t)(c->n_acc - y->acc_first);
        y->min_ev = INT32_MAX;
        y->max_ev = -1;
        for (uint32_t k = 0; k < y->n_acc; k++) {
            int32_t e = c->acc[y->acc_first + k];
            if (e < y->min_ev) y->min_ev = e;
            if (e > y->max_ev) y->max_ev = e;
        }
    }
    gm_free(loops);
    return st;
}

/* Does every access of a strictly happen before every access of b? */
bool gm_vfy_happens_before(gm_vfy *c, const gm_vfy_sym *a, const gm_vfy_sym *b)
{
    if (a->at_end || b->at_start) return false;
    if (!a->n_acc || !b->n_acc) return true;
    if (a->max_ev >= b->min_ev) return false;
    size_t S = c->n_streams, nt = 0;
    for (uint32_t k = 0; k < a->n_acc; k++) {
        int32_t e = c->acc[a->acc_first + k], s = c->ev_stream[e];
        if (c->last[s] < 0) c->touched[nt++] = s;
        if (c->ev_sidx[e] > c->last[s]) c->last[s] = c->ev_sidx[e];
    }
    bool ok = true;
    for (uint32_t k = 0; k < b->n_acc && ok; k++) {
        const int32_t *row = c->vc + (size_t)c->acc[b->acc_first + k] * S;
        for (size_t t = 0; t < nt && ok; t++) ok = row[c->touched[t]] >= c->last[c->touched[t]];
    }
    for (size_t t = 0; t < nt; t++) c->last[c->touched[t]] = -1;
    return ok;
}

/* ---- the sweep ------------------------------------------------------------------------- */

/* Records the pair once; true when it was new. */
static int seen_pair(gm_vfy *c, int32_t x, int32_t y)
{
    uint64_t key = ((uint64_t)(uint32_t)(x < y ? x : y) << 32 | (uint32_t)(x < y ? y : x)) + 1;
    if (2 * (c->seen_n + 1) > c->seen_cap) {
        size_t cap = c->seen_cap ? 2 * c->seen_cap : 64;
        uint64_t *t = gm_calloc(cap, sizeof *t);
        if (!t) return -1;
        for (size_t i = 0; i < c->seen_cap; i++) {
            if (!c->seen[i]) continue;
            size_t h = (size_t)(c->seen[i] * 0x9E3779B97F4A7C15ull) & (cap - 1);
            while (t[h]) h = (h + 1) & (cap - 1);
            t[h] = c->seen[i];
        }
        gm_free(c->seen);
        c->seen = t;
        c->seen_cap = cap;
    }
    size_t h = (size_t)(key * 0x9E3779B97F4A7C15ull) & (c->seen_cap - 1);
    while (c->seen[h]) {
        if (c->seen[h] == key) return 0;
        h = (h + 1) & (c->seen_cap - 1);
    }
    c->seen[h] = key;
    c->seen_n++;
    return 1;
}

static int64_t first_key(const gm_vfy *c, const gm_vfy_sym *y)
{
    return y->at_start ? -1 : y->n_acc ? y->min_ev : (int64_t)c->n_ev;
}

static const char *ev_name(const gm_vfy *c, const gm_vfy_sym *y, bool first)
{
    if (first && y->at_start) return "<start>";
    if (!first && y->at_end) return "<end>";
    if (!y->n_acc) return first ? "<end>" : "<start>";
    return c->ev_node[first ? y->min_ev : y->max_ev]->name;
}

static gm_status check_pair(gm_vfy *c, int32_t x, int32_t y, bool fixed)
{
    const gm_vfy_sym *a = &c->syms[x], *b = &c->syms[y];
    c->v->overlap_checks++;
    if (!fixed && gm_vfy_happens_before(c, a, b)) return GM_OK;
    int r = seen_pair(c, x, y);
    if (r < 0) return GM_ERR_NOMEM;
    if (!r) return GM_OK;
    const char *region = c->regs[a->region].name;
    if (fixed)
        PROBLEM(c, GM_PLAN_P_FIXED_OVERLAP, x, y, NULL, -1, false,
                "fixed symbols '%s' [%lld, %lld) and '%s' [%lld, %lld) overlap: the fixed region is never reused",
                a->id, (long long)a->offset, (long long)(a->offset + a->size), b->id, (long long)b->offset,
                (long long)(b->offset + b->size));
    else
        PROBLEM(c, GM_PLAN_P_OVERLAP, x, y, NULL, -1, false,
                "symbols '%s' [%lld, %lld) (live %s..%s) and '%s' [%lld, %lld) (live %s..%s) overlap in region "
                "'%s' but neither happens before the other",
                a->id, (long long)a->offset, (long long)(a->offset + a->size), ev_name(c, a, true),
                ev_name(c, a, false), b->id, (long long)b->offset, (long long)(b->offset + b->size),
                ev_name(c, b, true), ev_name(c, b, false), region);
    return GM_OK;
}

/* The active set: the ranks of the symbols covering the sweep's address, as a Fenwick tree of
 * counts over ranks, so that insertion, removal and the neighbours of a rank cost O(log n).
 * (A sorted array with memmove was O(active) a step: quadratic where one address range is
 * reused by many symbols, ~1 s at a million.) */
typedef struct active {
    int32_t *fw; /* 1-based */
    size_t n, top;
} active;

static void act_add(active *a, int32_t rank, int32_t d)
{
    for (size_t i = (size_t)rank + 1; i <= a->n; i += i & (0 - i)) a->fw[i] += d;
}

/* How many active ranks are below `rank`. */
static int32_t act_below(const active *a, int32_t rank)
{
    int32_t s = 0;
    for (size_t i = (size_t)rank; i > 0; i -= i & (0 - i)) s += a->fw[i];
    return s;
}

/* The k-th smallest active rank (k from 1). */
static int32_t act_kth(const active *a, int32_t k)
{
    size_t pos = 0;
    for (size_t step = a->top; step; step >>= 1)
        if (pos + step <= a->n && a->fw[pos + step] < k) {
            pos += step;
            k -= a->fw[pos];
        }
    return (int32_t)pos;
}

/* The symbols g[0, n) of one region (b: the symbol). */
static gm_status sweep(gm_vfy *c, const gm_vfy_key *g, size_t n, bool fixed)
{
    gm_vfy_key *bs = gm_malloc(2 * n * sizeof *bs);
    int32_t *mem = gm_calloc(2 * n + 1, sizeof *mem); /* the tree, then the symbols by rank */
    if (!bs || !mem) {
        gm_free(bs);
        gm_free(mem);
        return GM_ERR_NOMEM;
    }
    active act = {mem, n, 1};
    while (act.top * 2 <= n) act.top *= 2;
    int32_t *sym = mem + n + 1;
    for (size_t i = 0; i < n; i++) bs[i] = (gm_vfy_key){first_key(c, &c->syms[g[i].b]), 0, g[i].b};
    gm_vfy_sort(bs, n, GM_VFY_BY_A_KEY_B);
    for (size_t r = 0; r < n; r++) sym[r] = bs[r].b;
    for (size_t r = 0; r < n; r++) {
        const gm_vfy_sym *y = &c->syms[sym[r]];
        bs[2 * r] = (gm_vfy_key){y->offset, 1, (int32_t)r};
        bs[2 * r + 1] = (gm_vfy_key){y->offset + y->size, 0, (int32_t)r};
    }
    gm_vfy_sort(bs, 2 * n, GM_VFY_BY_ADDR);
    gm_status st = GM_OK;
    int32_t na = 0;
    for (size_t i = 0; i < 2 * n && st == GM_OK; i++) {
        int32_t r = bs[i].b, below = act_below(&act, r);
        if (bs[i].a) {
            act_add(&act, r, 1);
            na++;
            if (below > 0) st = check_pair(c, sym[act_kth(&act, below)], sym[r], fixed);
            if (st == GM_OK && below + 1 < na) st = check_pair(c, sym[r], sym[act_kth(&act, below + 2)], fixed);
        } else {
            act_add(&act, r, -1);
            na--;
            if (below > 0 && below < na)
                st = check_pair(c, sym[act_kth(&act, below)], sym[act_kth(&act, below + 1)], fixed);
        }
    }
    gm_free(bs);
    gm_free(mem);
    return st;
}

static bool sweepable(const gm_vfy *c, const gm_vfy_sym *y)
{
    int kind = c->regs[y->region].kind;
    return kind >= 0 && kind != GM_VFY_R_DYN && y->has_offset && y->size > 0 &&
           (y->n_acc || y->at_start || y->at_end);
}

/* One pass over the symbols of label "" and `label` (NULL: all), region by region. */
static gm_status sweep_label(gm_vfy *c, gm_vfy_key *ids, const char *label)
{
    size_t n = 0;
    for (size_t s = 0; s < c->n_syms; s++) {
        const gm_vfy_sym *y = &c->syms[s];
        if (!sweepable(c, y)) continue;
        if (label && y->label[0] && strcmp(y->label, label)) continue;
        ids[n++] = (gm_vfy_key){y->offset, y->region, (int32_t)s};
    }
    gm_vfy_sort(ids, n, GM_VFY_BY_A_KEY_B); /* by region, then offset */
    gm_status st = GM_OK;
    for (size_t i = 0; i < n && st == GM_OK;) {
        size_t j = i;
        while (j < n && ids[j].a == ids[i].a) j++;
        st = sweep(c, ids + i, j - i, c->regs[ids[i].a].kind == GM_VFY_R_FIXED);
        i = j;
    }
    return st;
}

static int by_label(const void *p, const void *q)
{
    int32_t a = *(const int32_t *)p, b = *(const int32_t *)q;
    int r = strcmp(g_sort_ctx->syms[a].label, g_sort_ctx->syms[b].label);
    return r ? r : (a > b) - (a < b);
}

static int by_value(const void *p, const void *q)
{
    int32_t a = *(const int32_t *)p, b = *(const int32_t *)q;
    return (a > b) - (a < b);
}

/* One sweep per distinct batch label, in the order the labels first appear (a label's first
 * symbol found by sorting, not by a search from the start per symbol, which was quadratic). */
static gm_status check_overlaps(gm_vfy *c)
{
    size_t n = c->n_syms;
    /* the sweeps' scratch, then the labelled symbols */
    gm_vfy_key *ids = gm_malloc(n ? n * (sizeof *ids + sizeof(int32_t)) : 1);
    if (!ids) return GM_ERR_NOMEM;
    int32_t *lab = (int32_t *)(ids + n);
    size_t nl = 0;
    for (size_t s = 0; s < n; s++)
        if (c->syms[s].label[0]) lab[nl++] = (int32_t)s;
    g_sort_ctx = c;
    qsort(lab, nl, sizeof *lab, by_label);
    size_t nf = 0;
    for (size_t i = 0; i < nl; i++)
        if (i == 0 || strcmp(c->syms[lab[i - 1]].label, c->syms[lab[i]].label)) lab[nf++] = lab[i];
    qsort(lab, nf, sizeof *lab, by_value);
    gm_status st = GM_OK;
    for (size_t i = 0; i < nf && st == GM_OK; i++) st = sweep_label(c, ids, c->syms[lab[i]].label);
    if (st == GM_OK && !nl) st = sweep_label(c, ids, NULL);
    gm_free(ids);
    return st;
}

gm_status gm_vfy_order_begin(gm_vfy *c, gm_error *err)
{
    gm_status st = build_pos(c, err);
    return st == GM_OK ? build_events(c, err) : st;
}

void gm_vfy_order_carry(gm_vfy *to, const gm_vfy *from)
{
    to->pos = from->pos;
    to->ev_enter = from->ev_enter;
    to->ev_exit = from->ev_exit;
    to->ev_node = from->ev_node;
    to->ev_stream = from->ev_stream;
    to->ev_sidx = from->ev_sidx;
    to->n_ev = from->n_ev;
    to->n_streams = from->n_streams;
    to->vc = from->vc;
    to->last = from->last;
    to->touched = from->touched;
}

gm_status gm_vfy_order_check(gm_vfy *c, gm_error *err)
{
    gm_status st = c->vc ? GM_OK : gm_vfy_order_begin(c, err);
    if (st != GM_OK) return st;
    if (build_accesses(c) != GM_OK || check_overlaps(c) != GM_OK)
        return gm_error_set(err, GM_ERR_NOMEM, "out of memory");
    return GM_OK;
}
