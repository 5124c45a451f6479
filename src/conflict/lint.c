/*
 * lint.c — GE's GraphLint::Verify (reference §4.2), warning W18888: the writers of a tensor
 * must be ordered with its other writers and with its readers, or the result depends on which
 * runs first (GE: "sometimes it may cause problem (precision problem)").
 *
 * Two steps, as in GE:
 *  1. the read/write type of every data input of every node, walking the model in reverse
 *     GetAllNodes order so that a subgraph's nodes come before the node that owns it: Cmo
 *     inputs are ignorable; an input whose IR name is also one of the op's output names is
 *     written in place (the name-based ref rule); every other input only reads. A node with
 *     subgraphs has no rule of its own: its inputs take what the consumers of the matching
 *     subgraph Data nodes are (RefreshParentNodeIfNeed), which nests;
 *  2. for every output with two or more consumer inputs, in every graph: each writer against
 *     each other writer and each reader, "connected" meaning one reaches the other over the
 *     graph's data + control edges (src/analysis/reach.c — GE keeps an N x N bit matrix).
 *
 * The pass only reads the graph.
 */
#include <pthread.h>
#include <string.h>

#include "analysis/reach.h"
#include "conflict/lint.h"
#include "graphmem/log.h"
#include "ir/ir.h"
#include "ops/op_table.h"
#include "util/alloc.h"
#include "util/parallel.h"

#define LINT_CODE "W18888"

/* The reachability index is half of a big model's lint: it is built on a second thread while
 * step 1 marks the types (both only read the model), and taken by the first order check that
 * needs it. Below this many nodes a thread does not pay. */
enum { REACH_AHEAD = 65536 };

typedef struct reach_ahead {
    const gm_model *m;
    pthread_t tid;
    bool started;
    gm_reach *r;
    gm_status st;
} reach_ahead;

static void *build_reach(void *arg)
{
    reach_ahead *a = arg;
    a->st = gm_reach_new(a->m, &a->r);
    return NULL;
}

/* The index the thread built (NULL when it failed); the thread is joined. */
static gm_reach *reach_join(reach_ahead *a)
{
    if (!a->started) return NULL;
    pthread_join(a->tid, NULL);
    a->started = false;
    return a->st == GM_OK ? a->r : NULL;
}

/* Ordered so that merging several subgraph consumers into one parent input is a max: any
 * writer makes it a writer, else any reader a reader; UNSET = no subgraph consumer yet. */
typedef enum lint_rw {
    LINT_UNSET = 0,
    LINT_CAN_IGNORE,
    LINT_READ_ONLY,
    LINT_WRITABLE,
} lint_rw;

typedef struct lint_state {
    gm_pass_ctx *c;
    gm_model *m;
    unsigned flags;
    size_t *base;    /* per topo id: where the node's inputs start in types[] (n + 1 entries) */
    uint8_t *types;  /* lint_rw per data input */
    gm_reach *reach; /* built on the first output that needs an order check */
    reach_ahead ahead; /* or ahead of it, on a big model */
    gm_lint_stats stats;
} lint_state;

/* ---- step 1: read/write types -------------------------------------------------------------- */


/* GE's name-based ref rule: input i is written in place when the op has an output of the same
 * IR name. Independent of the `reference` attribute, as GE's lint is. */
static bool lint_input_is_ref(const gm_node *n, uint32_t i)
{
    const char *name = gm_node_input_name(n, i);
    if (!name || !*name) return false;
    for (uint32_t k = 0; k < n->n_out; k++) {
        const char *o = gm_node_output_name(n, k);
        if (o && strcmp(o, name) == 0) return true;
    }
    return false;
}

static uint8_t *lint_type(const lint_state *s, const gm_node *n, uint32_t i)
{
    return &s->types[s->base[n->topo_id] + i];
}

static void lint_raise(uint8_t *t, lint_rw v)
{
    if (v > *t) *t = (uint8_t)v; /* once a writer, always a writer */
}

/* RefreshParentNodeIfNeed: inputs of n fed by a subgraph Data hand their type to the parent's
 * input that Data stands for. */
static void lint_refresh_parent(lint_state *s, const gm_node *n)
{
    const gm_node *parent = n->graph->parent;
    if (!parent) return;
    for (uint32_t i = 0; i < n->n_in; i++) {
        const gm_node *src = n->in[i].src;
        if (!src || !gm_node_is(src, GM_OP_DATA)) continue;
        const gm_attr *a = gm_attr_find(src->attrs, "_parent_node_index");
        if (!a || a->kind != GM_ATTR_INT || a->u.i < 0 || a->u.i >= (int64_t)parent->n_in) continue;
        lint_raise(lint_type(s, parent, (uint32_t)a->u.i), (lint_rw)*lint_type(s, n, i));
    }
}

static void lint_mark_types(lint_state *s)
{
    const gm_node_vec *order = &s->m->order;
    /* Reverse GetAllNodes order: every node of a subgraph (nested ones too) is marked before
     * the node that owns it, so a parent's inputs are complete when it is reached. */
    for (size_t t = order->n; t-- > 0;) {
        const gm_node *n = order->v[t];
        if (n->n_sub > 0) {
            /* Inputs no subgraph consumer touched (an If's condition ...) are read by the node. */
            for (uint32_t i = 0; i < n->n_in; i++) {
                uint8_t *ty = lint_type(s, n, i);
                if (*ty == LINT_UNSET) *ty = LINT_READ_ONLY;
            }
        } else {
            bool cmo = gm_node_is(n, GM_OP_CMO);
            for (uint32_t i = 0; i < n->n_in; i++)
                lint_raise(lint_type(s, n, i),
                           cmo ? LINT_CAN_IGNORE : lint_input_is_ref(n, i) ? LINT_WRITABLE : LINT_READ_ONLY);
        }
        lint_refresh_parent(s, n);
    }
}

/* ---- step 2: order checks ------------------------------------------------------------------ */

static lint_rw lint_use_type(const lint_state *s, const gm_use *u)
{
    lint_rw t = (lint_rw)*lint_type(s, u->node, (uint32_t)u->index);
    if ((s->flags & GM_LINT_TEST_ALL_WRITABLE) && t != LINT_UNSET) return LINT_WRITABLE;
    return t;
}

static gm_status lint_connected(lint_state *s, const gm_node *a, const gm_node *b, bool *yes)
{
    if (a == b) {
        *yes = true; /* GE's matrix holds every node's own bit */
        return GM_OK;
    }
    if (s->flags & GM_LINT_TEST_UNORDERED) {
        *yes = false;
        return GM_OK;
    }
    if (!s->reach && s->ahead.started && !(s->reach = reach_join(&s->ahead)))
        return gm_error_set(s->c->err, GM_ERR_NOMEM, "%s: lint: out of memory", s->m->source);
    if (!s->reach && gm_reach_new(s->m, &s->reach) != GM_OK)
        return gm_error_set(s->c->err, GM_ERR_NOMEM, "%s: lint: out of memory", s->m->source);
    *yes = gm_reach_connected(s->reach, a, b);
    return GM_OK;
}

static gm_status lint_report(lint_state *s, const gm_node *w, const gm_node *other, bool other_writes)
{
    s->stats.violations++;
    if (other_writes)
        return gm_pass_warn(s->c, LINT_CODE,
                            "There is no control relation between write node[%s] and other write node[%s]. "
                            "Please check graph make it valid, sometimes it may cause problem (precision problem).",
                            w->name, other->name);
    return gm_pass_warn(s->c, LINT_CODE,
                        "There is no control relation between write node[%s] and read node[%s]. "
                        "Please check graph make it valid, sometimes it may cause problem (precision problem).",
                        w->name, other->name);
}

/* One output's consumers: each writer (in consumer order) against the other writers, then
 * against the readers; the first unordered pair is reported and ends this output. */
static gm_status lint_check_output(lint_state *s, const gm_out_slot *o)
{
    bool counted = false;
    for (uint32_t i = 0; i < o->n_uses; i++) {
        if (lint_use_type(s, &o->uses[i]) != LINT_WRITABLE) continue;
        if (!counted) s->stats.outputs_checked++;
        counted = true;
        const gm_node *w = o->uses[i].node;
        for (int pass = 0; pass < 2; pass++) {
            lint_rw want = pass == 0 ? LINT_WRITABLE : LINT_READ_ONLY;
            /* Writers before i were checked against this one as theirs. */
            for (uint32_t j = pass == 0 ? i + 1 : 0; j < o->n_uses; j++) {
                if (j == i || lint_use_type(s, &o->uses[j]) != want) continue;
                bool ok = false;
                s->stats.pairs++;
                gm_status st = lint_connected(s, w, o->uses[j].node, &ok);
                if (st != GM_OK) return st;
                if (!ok) return lint_report(s, w, o->uses[j].node, pass == 0);
            }
        }
    }
    return GM_OK;
}

static gm_status lint_check_all(lint_state *s)
{
    const gm_node_vec *order = &s->m->order;
    for (size_t t = 0; t < order->n; t++) {
        const gm_node *n = order->v[t];
        for (uint32_t k = 0; k < n->n_out; k++) {
            if (n->out[k].n_uses < 2) continue; /* one consumer has nobody to race with */
            gm_status st = lint_check_output(s, &n->out[k]);
            if (st != GM_OK) return st;
        }
    }
    return GM_OK;
}

/* ---- entry points -------------------------------------------------------------------------- */

gm_status gm_lint_verify(gm_pass_ctx *c, const gm_graph *g, unsigned flags, gm_lint_stats *stats)
{
    if (stats) memset(stats, 0, sizeof *stats);
    gm_model *m = c->m;
    if (!gm_graph_is_root(g) || g->model != m) {
        gm_log(GM_LOG_WARN, "lint: graph '%s' is not a root graph; GraphLint checks root graphs only", g->name);
        return gm_error_set(c->err, GM_ERR_INPUT, "%s: lint: graph '%s' is a subgraph; only the root graph is checked",
                            m->source, g->name);
    }
    if (!m->sorted) {
        /* Sorting reorders nothing the user sees; the checks need topological ids. */
        gm_status st = gm_model_toposort(m, c->err);
        if (st != GM_OK) return st;
    }
    lint_state s = {.c = c, .m = m, .flags = flags};
    size_t n = m->order.n;
    if (n >= REACH_AHEAD && !(flags & GM_LINT_TEST_UNORDERED) && gm_parallel_parts(0, 2) == 2) {
        s.ahead.m = m;
        s.ahead.started = pthread_create(&s.ahead.tid, NULL, build_reach, &s.ahead) == 0;
    }
    s.base = gm_malloc((n + 1) * sizeof *s.base);
    if (!s.base) {
        gm_reach_free(reach_join(&s.ahead));
        return gm_error_set(c->err, GM_ERR_NOMEM, "%s: lint: out of memory", m->source);
    }
    size_t total = 0;
    for (size_t t = 0; t < n; t++) {
        s.base[t] = total;
        total += m->order.v[t]->n_in;
    }
    s.base[n] = total;
    s.types = gm_calloc(total ? total : 1, 1);
    gm_status st = GM_OK;
    if (!s.types) {
        st = gm_error_set(c->err, GM_ERR_NOMEM, "%s: lint: out of memory", m->source);
    } else {
        lint_mark_types(&s);
        st = lint_check_all(&s);
    }
    if (s.reach) gm_reach_get_stats(s.reach, &s.stats.reach);
    gm_reach_free(s.reach);
    gm_reach_free(reach_join(&s.ahead)); /* built for nothing: no output needed an order check */
    gm_free(s.types);
    gm_free(s.base);
    if (stats) *stats = s.stats;
    if (st == GM_OK && s.stats.violations)
        st = gm_error_set(c->err, GM_ERR_PROBLEM, "%s: lint: %zu tensor%s with unordered writers (%s)", m->source,
                          s.stats.violations, s.stats.violations == 1 ? "" : "s", LINT_CODE);
    return st;
}

gm_status gm_pass_lint(gm_pass_ctx *c)
{
    const gm_graph *root = gm_model_root(c->m);
    if (!root) return GM_OK;
    gm_status st = gm_lint_verify(c, root, 0, NULL);
    if (st == GM_ERR_PROBLEM) {
        /* GE discards Verify's result: the warnings are the whole outcome. */
        if (c->err) gm_error_clear(c->err);
        return GM_OK;
    }
    return st;
}
