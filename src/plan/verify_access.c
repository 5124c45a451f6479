/*
 * verify_access.c — the verifier's race check inside one buffer: every write of a symbol is
 * ordered, by happens-before, with every other access of it (docs/plan-format.md's execution
 * model: data edges, control edges, program order within a stream). A symbol is one address;
 * two conflicting accesses of it that the model leaves unordered make the result depend on
 * which stream runs first, however well the symbols are placed.
 *
 * Independent of the planner and of the access-order pass that fixes such pairs: its own walk
 * of the events, on the plan's symbols. Who reads and who writes is the op table's, which the
 * executors use (ops/op_table.h). Start writers (root Data, Const, Variable) and the root
 * NetOutput's reads at the end are ordered before and after everything.
 *
 * Levels. Two accesses in different graphs are compared where they meet (gm_node_meet): the
 * nodes that hold them in their lowest common graph, from the first one's exit event to the
 * second one's enter. Accesses that meet in one node are not compared: a parent reads its
 * inputs before its bodies run, If/Case branches never run together, and a While runs its cond
 * before its body.
 *
 * Cost: per symbol the accesses in event order, each write checked against the reads since the
 * previous write and against that write, each read against that write — O(1) each with the
 * vector clocks, plus the climb to where they meet (a write's climb shared by its readers).
 * Happens-before is transitive, so these consecutive pairs order every pair.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "ops/op_table.h"
#include "plan/verify_internal.h"
#include "util/alloc.h"

typedef struct acc_t {
    int32_t sym;
    int32_t node; /* topological id */
    int32_t write;
    int32_t seq;  /* the order of listing: the event order */
} acc_t;

typedef struct acc_list {
    acc_t *v;
    size_t n, cap;
} acc_list;

/* The accesses grouped by symbol, each group in listing (event) order: a stable counting sort
 * on the symbol, O(accesses + symbols). qsort on (symbol, seq) gave the same order in 0.62 s at
 * a million nodes (2.6 million accesses). l's array is replaced; false when out of memory (l
 * untouched). */
static bool group_by_symbol(acc_list *l, size_t n_syms)
{
    size_t *at = gm_calloc(n_syms + 1, sizeof *at);
    acc_t *v = gm_malloc(l->n * sizeof *v);
    if (!at || !v) {
        gm_free(at);
        gm_free(v);
        return false;
    }
    for (size_t i = 0; i < l->n; i++) {
        assert(l->v[i].sym >= 0 && (size_t)l->v[i].sym < n_syms); /* add() keeps only symbols */
        at[(size_t)l->v[i].sym + 1]++;
    }
    for (size_t s = 0; s < n_syms; s++) at[s + 1] += at[s];
    for (size_t i = 0; i < l->n; i++) v[at[l->v[i].sym]++] = l->v[i];
    gm_free(at);
    gm_free(l->v);
    l->v = v;
    l->cap = l->n;
    return true;
}

static gm_status add(acc_list *l, const gm_node *n, int32_t sym, bool write)
{
    if (sym < 0) return GM_OK;
    if (l->n == l->cap && gm_grow((void **)&l->v, sizeof *l->v, l->n + 1, &l->cap)) return GM_ERR_NOMEM;
    l->v[l->n] = (acc_t){sym, (int32_t)n->topo_id, write, (int32_t)l->n};
    l->n++;
    return GM_OK;
}

/* One node's accesses of the plan's symbols, by its slots. */
static gm_status node_accesses(gm_vfy *c, acc_list *l, const gm_node *n)
{
    size_t t = (size_t)n->topo_id;
    bool mutate = gm_node_is(n, GM_OP_INPUT_MUTABLE);
    bool root = n->graph->parent == NULL;
    if (!(root && gm_node_is(n, GM_OP_NETOUTPUT))) /* read at the end */
        for (uint32_t i = 0; i < n->n_in; i++) {
            if (!n->in[i].src || (!mutate && !gm_node_reads_input_data(n, i))) continue;
            gm_status st = add(l, n, c->in_sym[c->in_base[t] + i], mutate);
            if (st != GM_OK) return st;
        }
    if (gm_node_at_start(n)) return GM_OK;
    for (uint32_t k = 0; k < n->n_out; k++) {
        if (!gm_node_writes_output(n, k)) continue;
        gm_status st = add(l, n, c->out_sym[c->out_base[t] + k], true);
        if (st != GM_OK) return st;
    }
    return GM_OK;
}

/* Does the access of node a happen before that of node b, where they meet? *up caches a's
 * side of the meeting when a is the last write (NULL otherwise). */
static bool ordered(const gm_vfy *c, int32_t a, int32_t b, const gm_node **up)
{
    if (a == b) return true;
    const gm_node *x = gm_model_node_at(c->m, (size_t)a), *y = gm_model_node_at(c->m, (size_t)b);
    if (up) {
        gm_node_meet_from(x, up, &y);
        x = *up;
    } else {
        gm_node_meet(&x, &y);
    }
    if (x == y) return true;
    int32_t ea = c->ev_exit[x->topo_id], eb = c->ev_enter[y->topo_id];
    if (ea < 0 || eb < 0 || ea >= eb) return false;
    return c->vc[(size_t)eb * c->n_streams + (size_t)c->ev_stream[ea]] >= c->ev_sidx[ea];
}

static gm_status report(gm_vfy *c, int32_t sym, int32_t a, bool wa, int32_t b, bool wb)
{
    const gm_node *x = gm_model_node_at(c->m, (size_t)a), *y = gm_model_node_at(c->m, (size_t)b);
    return gm_vfy_problem(c, GM_PLAN_P_RACE, sym, -1, y, -1, false,
                          "symbol '%s': %s by '%s' and %s by '%s' are not ordered (no edge, path or stream "
                          "order between them): the result depends on which stream runs first",
                          c->syms[sym].id, wa ? "write" : "read", x->name, wb ? "write" : "read", y->name);
}

static gm_status check_group(gm_vfy *c, const acc_t *g, size_t len, int32_t **reads, size_t *cap)
{
    int32_t last_w = -1;
    const gm_node *w_up = NULL; /* how far up the last write's readers met it */
    size_t n_reads = 0;
    for (size_t i = 0; i < len;) {
        int32_t node = g[i].node;
        bool write = false;
        for (; i < len && g[i].node == node; i++) write |= g[i].write != 0;
        if (!write) {
            if (last_w >= 0 && !ordered(c, last_w, node, &w_up) &&
                report(c, g[0].sym, last_w, true, node, false) != GM_OK)
                return GM_ERR_NOMEM;
            if (n_reads == *cap && gm_grow((void **)reads, sizeof **reads, n_reads + 1, cap)) return GM_ERR_NOMEM;
            (*reads)[n_reads++] = node;
            continue;
        }
        for (size_t r = 0; r < n_reads; r++)
            if (!ordered(c, (*reads)[r], node, NULL) &&
                report(c, g[0].sym, (*reads)[r], false, node, true) != GM_OK)
                return GM_ERR_NOMEM;
        if (last_w >= 0 && !ordered(c, last_w, node, &w_up) && report(c, g[0].sym, last_w, true, node, true) != GM_OK)
            return GM_ERR_NOMEM;
        last_w = node;
        w_up = NULL;
        n_reads = 0;
    }
    return GM_OK;
}

gm_status gm_vfy_access_check(gm_vfy *c)
{
    acc_list l = {0};
    gm_status st = GM_OK;
    for (size_t e = 0; e < c->n_ev && st == GM_OK; e++) {
        const gm_node *n = c->ev_node[e];
        if (c->ev_enter[n->topo_id] == (int32_t)e) st = node_accesses(c, &l, n);
    }
    if (st == GM_OK && l.n && !group_by_symbol(&l, c->n_syms)) st = GM_ERR_NOMEM;
    int32_t *reads = NULL;
    size_t cap = 0;
    for (size_t i = 0, j; st == GM_OK && i < l.n; i = j) {
        for (j = i + 1; j < l.n && l.v[j].sym == l.v[i].sym;) j++;
        st = check_group(c, l.v + i, j - i, &reads, &cap);
    }
    gm_free(reads);
    gm_free(l.v);
    return st;
}
