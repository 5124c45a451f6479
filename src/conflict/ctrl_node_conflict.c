/*
 * ctrl_node_conflict.c — GE's CtrlNodeConflict (reference §2.8), run before the symbol
 * checks: the outputs of If/Case branches and of While bodies.
 *
 * A branch's NetOutput input becomes the parent's output buffer. It cannot be a buffer the
 * branch does not own — one of the branch's Data (the parent's input), a constant, a variable
 * or something written into a RefData — nor one buffer returned through two outputs. Each
 * branch's offending inputs get one multi-input Identity.
 *
 * A While body's outputs are the next iteration's inputs: when the body computes anything,
 * its outputs get one multi-input Identity so an iteration cannot overwrite inputs it still
 * reads; body Data returned at another position (inputs exchanged) get one more, after them.
 */
#include <stdio.h>
#include <string.h>

#include "conflict/layout_checkers.h"
#include "conflict/layout_conflict.h"
#include "graphmem/log.h"
#include "ir/ir.h"
#include "ops/op_table.h"
#include "util/alloc.h"

/* r == NULL: the check-only variant; *hit says whether anything would be inserted. */
typedef struct ctrl {
    gm_layout_run *r;
    gm_model *m;
    gm_error *err;
    gm_log_level level; /* info for the pass, debug for the check */
    bool hit;
    gm_node **dsts;
    size_t *idx, cap_d, cap_i, n;
} ctrl;

static bool say(const ctrl *x) { return gm_log_get_level() >= x->level; }

static gm_status oom(ctrl *x) { return gm_error_set(x->err, GM_ERR_NOMEM, "%s: out of memory", x->m->source); }

static gm_status push(ctrl *x, gm_node *dst, size_t in)
{
    if (gm_grow((void **)&x->dsts, sizeof *x->dsts, x->n + 1, &x->cap_d) ||
        gm_grow((void **)&x->idx, sizeof *x->idx, x->n + 1, &x->cap_i))
        return oom(x);
    x->dsts[x->n] = dst;
    x->idx[x->n++] = in;
    return GM_OK;
}

static gm_node *netoutput_of(const gm_graph *g)
{
    for (uint32_t i = 0; i < g->nodes.n; i++)
        if (!g->nodes.v[i]->dead && gm_node_is(g->nodes.v[i], GM_OP_NETOUTPUT)) return g->nodes.v[i];
    return NULL;
}

/* A subgraph's symbols. Copies made earlier in this phase never lie in a later control node's
 * subgraphs (outer nodes come first in GetAllNodes order, siblings are disjoint), so the
 * order is still right there and no sort is needed — a sort per control node would make the
 * phase quadratic. Should that ever not hold, the builder refuses the stale range and the
 * pass sorts once and builds again. */
static gm_status symbols_of(ctrl *x, const gm_graph *g, gm_symbols **s)
{
    gm_status st = gm_symbols_build_graph(x->m, g, s, x->err);
    if (st != GM_ERR_INTERNAL || !x->r || x->m->sorted) return st;
    gm_error_clear(x->err);
    st = gm_model_toposort(x->m, x->err);
    return st == GM_OK ? gm_symbols_build_graph(x->m, g, s, x->err) : st;
}

/* SolveNodesConflict: one Identity before the listed inputs (those not already next to a
 * copy). Check-only: just notes that there is something to insert. */
static gm_status solve_listed(ctrl *x, const char *reason, gm_node **made)
{
    size_t k = 0;
    if (made) *made = NULL;
    for (size_t j = 0; j < x->n; j++) {
        if (!x->dsts[j]->in[x->idx[j]].src) continue;
        if (gm_layout_skip_insert((gm_anchor){x->dsts[j], (uint32_t)x->idx[j], false}, x->level))
            continue;
        x->dsts[k] = x->dsts[j];
        x->idx[k++] = x->idx[j];
    }
    x->n = 0;
    if (k == 0) return GM_OK;
    x->hit = true;
    if (!x->r) return GM_OK;
    gm_node *id = gm_layout_insert_before(x->r, x->dsts, x->idx, k, reason);
    if (made) *made = id;
    if (!id) return x->err->code != GM_OK ? x->err->code : GM_ERR_INTERNAL;
    for (size_t j = 0; j < k && say(x); j++)
        gm_log(x->level, "[MemConflict][INSERT][NODE] %s between %s->%s", id->name, id->in[j].src->name,
               x->dsts[j]->name);
    return GM_OK;
}

/* ---- If / Case branches (CheckOneSubGraphConflict) ---- */

/* An output the branch does not own. */
static const char *foreign_output(const gm_node *p, const gm_graph *branch)
{
    if (gm_node_is(p, GM_OP_DATA) && p->graph == branch) return p->type;
    if (gm_node_is(p, GM_OP_CONST) || gm_node_is(p, GM_OP_VAR_LIKE)) return p->type;
    for (uint32_t k = 0; k < p->n_out; k++)
        if (gm_attrs_get_string(p->out[k].desc.attrs, "ref_var_src_var_name")) return p->type;
    if (gm_attrs_get_string(p->attrs, "ref_var_src_var_name")) return p->type;
    return NULL;
}

static gm_status branch(ctrl *x, gm_graph *sub)
{
    gm_node *no = netoutput_of(sub);
    if (!no || no->n_in == 0) return GM_OK;
    gm_symbols *s = NULL;
    gm_status st = symbols_of(x, sub, &s);
    int32_t *seen = st == GM_OK ? gm_malloc(no->n_in * sizeof *seen) : NULL;
    if (st == GM_OK && !seen) st = oom(x);
    size_t n_seen = 0;
    for (uint32_t i = 0; st == GM_OK && i < no->n_in; i++) {
        int32_t sym = gm_symbols_find(s, no, false, i);
        if (sym < 0) continue;
        const char *why = NULL;
        for (int32_t a = gm_symbol_first(s, sym); a >= 0 && !why; a = gm_symbols_next(s, a)) {
            gm_anchor y = gm_symbols_anchor(s, a);
            if (y.out) why = foreign_output(y.node, no->graph);
        }
        bool again = false;
        for (size_t k = 0; k < n_seen && !again; k++) again = seen[k] == sym;
        if (!again) seen[n_seen++] = sym;
        if (why && say(x))
            gm_log(x->level, "[MemConflict][Conflict] Type[%s] node directly connect to netoutput.", why);
        else if (again && say(x))
            gm_log(x->level,
                   "[MemConflict][Conflict] Node single output multiple references connect to netoutput, netoutput: %s, "
                   "input: %u.",
                   no->name, i);
        if (why || again) st = push(x, no, i);
    }
    gm_free(seen);
    gm_symbols_free(s);
    return st == GM_OK ? solve_listed(x, "subgraph output of a control node", NULL) : st;
}

/* ---- While body (SolveWhileConflict) ---- */

/* IsWhileNeedInsertIdentityAtOutput. */
static gm_status while_needs_output_copy(ctrl *x, gm_graph *body, gm_node *no, bool *need)
{
    *need = true;
    if (no->n_in != 1) return GM_OK;
    for (uint32_t i = 0; i < body->nodes.n; i++) {
        const gm_node *d = body->nodes.v[i];
        if (d->dead || !gm_node_is(d, GM_OP_DATA)) continue;
        if (d->n_out != 1) return GM_OK;
        break;
    }
    gm_symbols *s = NULL;
    gm_status st = symbols_of(x, body, &s);
    if (st != GM_OK) return st;
    /* Two symbols: one node between input and output. One: a pure pass-through. More: several
     * nodes, which order themselves, unless the output is read into a continuous block. */
    *need = gm_symbols_count(s) == 2;
    int32_t sym = gm_symbols_find(s, no, false, 0);
    for (int32_t a = sym >= 0 ? gm_symbol_first(s, sym) : -1; a >= 0 && !*need; a = gm_symbols_next(s, a)) {
        gm_anchor y = gm_symbols_anchor(s, a);
        *need = !y.out && (gm_layout_needs_cont_in(y.node) || gm_layout_needs_nopad_in(y.node));
    }
    gm_symbols_free(s);
    return GM_OK;
}

static int64_t in_parent_index(const gm_node *no, uint32_t k)
{
    return gm_attrs_get_int(no->in_desc[k].attrs, "_parent_node_index", -1);
}

static gm_status while_body(ctrl *x, gm_graph *body)
{
    gm_node *no = netoutput_of(body);
    if (!no) return GM_OK;
    uint8_t *bypass = gm_calloc(no->n_in ? no->n_in : 1, 1);
    gm_node **exchanged = gm_calloc(body->nodes.n ? body->nodes.n : 1, sizeof *exchanged);
    size_t n_ex = 0;
    gm_status st = bypass && exchanged ? GM_OK : oom(x);
    /* GetWhileBodyDataToNetoutputNodes: Data read only by the NetOutput, at the same parent
     * position (a bypass) or another one (exchanged). */
    for (uint32_t i = 0; st == GM_OK && i < body->nodes.n; i++) {
        gm_node *d = body->nodes.v[i];
        int64_t p = d->dead ? -1 : gm_attrs_get_int(d->attrs, "_parent_node_index", -1);
        if (p < 0 || !gm_node_is(d, GM_OP_DATA) || d->n_out == 0 || d->out[0].n_uses != 1) continue;
        gm_use u = d->out[0].uses[0];
        if (u.node != no) continue;
        if (p != in_parent_index(no, (uint32_t)u.index)) exchanged[n_ex++] = d;
        else bypass[u.index] = 1;
    }
    bool need = false;
    if (st == GM_OK) st = while_needs_output_copy(x, body, no, &need);
    for (uint32_t k = 0; st == GM_OK && need && k < no->n_in; k++)
        if (!bypass[k]) st = push(x, no, k);
    gm_node *made = NULL;
    /* The outputs first: the output copy would skip inputs already fed by a copy. */
    if (st == GM_OK && need) st = solve_listed(x, "while body output", &made);
    if (made && say(x))
        gm_log(x->level,
               "[MemConflict][Conflict] To ensure execute order to avoid overwriting input, inserted identity "
               "node[%s] at output of while_body[%s].",
               made->name, body->name);
    for (size_t j = 0; st == GM_OK && j < n_ex; j++) {
        gm_use u = exchanged[j]->out[0].uses[0];
        st = push(x, u.node, (size_t)u.index);
    }
    if (st == GM_OK && n_ex) st = solve_listed(x, "while body exchanged inputs", NULL);
    gm_free(bypass);
    gm_free(exchanged);
    return st;
}

/* ---- the walk ---- */

static bool below(const gm_node *n, const gm_graph *g)
{
    const gm_graph *h = n->graph;
    for (size_t guard = 0; h && h != g && guard <= g->model->n_graphs; guard++) h = h->parent ? h->parent->graph : NULL;
    return h == g;
}

static gm_status walk(ctrl *x, const gm_graph *g)
{
    /* The control nodes first: the insertions below change the order. */
    gm_node_vec nodes = {0};
    gm_status st = GM_OK;
    for (size_t t = 0; st == GM_OK && t < x->m->order.n; t++) {
        gm_node *n = x->m->order.v[t];
        gm_ctrl_kind k = gm_node_ctrl_kind(n);
        if ((k == GM_CTRL_IF || k == GM_CTRL_CASE || k == GM_CTRL_WHILE) && below(n, g))
            st = gm_node_vec_push(&nodes, n) == GM_OK ? GM_OK : oom(x);
    }
    for (uint32_t i = 0; st == GM_OK && i < nodes.n && !(x->hit && !x->r); i++) {
        gm_node *n = nodes.v[i];
        gm_ctrl_kind k = gm_node_ctrl_kind(n);
        if (k == GM_CTRL_WHILE) {
            if (n->n_sub > 1) st = while_body(x, n->sub[1]);
            continue;
        }
        uint32_t branches = k == GM_CTRL_IF ? (n->n_sub < 2 ? n->n_sub : 2) : n->n_sub;
        for (uint32_t b = 0; st == GM_OK && b < branches; b++) st = branch(x, n->sub[b]);
    }
    gm_node_vec_free(&nodes);
    gm_free(x->dsts);
    gm_free(x->idx);
    return st;
}

gm_status gm_layout_ctrl_solve(gm_layout_run *r, gm_graph *g)
{
    ctrl x = {.r = r, .m = r->c->m, .err = r->c->err, .level = GM_LOG_INFO};
    return walk(&x, g);
}

bool gm_layout_ctrl_has_conflict(const gm_graph *g, gm_error *err)
{
    gm_error local;
    ctrl x = {.r = NULL, .m = g->model, .err = err ? err : &local, .level = GM_LOG_DEBUG};
    /* Without insertions the order stays current, so no sort (and no change) happens. */
    gm_status st = walk(&x, g);
    return x.hit || st != GM_OK;
}
