/*
 * access_order.c — the access-order pass (see access_order.h): every conflicting pair of
 * accesses of one buffer that only the given order orders gets the control edge that order
 * implies, so that no stream assignment can race them.
 *
 * Who accesses a buffer is the executors' own rule (src/ops: gm_node_writes_output,
 * gm_node_reads_input_data, input-mutable collectives), so the pass orders exactly the writes
 * and reads a run checks. Root Data, Const and Variable outputs are written at the start, before
 * every node, on the stream every other waits for first: they need no edge.
 */
#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "analysis/reach.h"
#include "analysis/symbols.h"
#include "conflict/access_order.h"
#include "graphmem/log.h"
#include "ir/ir.h"
#include "ops/op_table.h"
#include "util/alloc.h"
#include "util/parallel.h"
#include "util/radix.h"

/* One access of a symbol: the node, in the model order. */
typedef struct ao_access {
    uint32_t sym;
    uint32_t node; /* topological id */
    uint32_t write;
} ao_access;

typedef struct ao_state {
    gm_pass_ctx *c;
    gm_model *m;
    const gm_symbols *s;
    gm_reach *reach; /* built on the first pair that needs it (beside the gathering on a big
                        model), on the model as it came */
    ao_access *v;
    size_t n, cap;
    uint32_t *reads; /* the reads since the group's last write (topological ids) */
    size_t n_reads, cap_reads;
    uint32_t w_node;     /* the group's last write, and how far up its readers met it */
    const gm_node *w_up;
    gm_access_order_stats stats;
} ao_state;

static gm_status oom(ao_state *a)
{
    return gm_error_set(a->c->err, GM_ERR_NOMEM, "%s: access_order: out of memory", a->m->source);
}

static uint64_t key_sym(const void *e) { return ((const ao_access *)e)->sym; }

static gm_status add_access(ao_state *a, const gm_node *n, int32_t sym, bool write)
{
    if (sym < 0) return GM_OK;
    if (gm_grow((void **)&a->v, sizeof *a->v, a->n + 1, &a->cap)) return oom(a);
    a->v[a->n++] = (ao_access){(uint32_t)sym, (uint32_t)n->topo_id, write};
    return GM_OK;
}

static gm_status gather(ao_state *a)
{
    const gm_node_vec *order = &a->m->order;
    for (size_t t = 0; t < order->n; t++) {
        const gm_node *n = order->v[t];
        bool mutate = gm_node_is(n, GM_OP_INPUT_MUTABLE);
        for (uint32_t i = 0; i < n->n_in; i++) {
            if (!n->in[i].src) continue;
            bool write = mutate;
            if (!write && !gm_node_reads_input_data(n, i)) continue;
            gm_status st = add_access(a, n, gm_symbols_find(a->s, n, false, i), write);
            if (st != GM_OK) return st;
        }
        if (gm_node_at_start(n)) continue; /* written before every node */
        for (uint32_t k = 0; k < n->n_out; k++) {
            if (!gm_node_writes_output(n, k)) continue;
            gm_status st = add_access(a, n, gm_symbols_find(a->s, n, true, k), true);
            if (st != GM_OK) return st;
        }
    }
    return GM_OK;
}

static const char *kind(bool write) { return write ? "write" : "read"; }

/* An edge a -> b, data or control: most pairs are a producer and its consumer, answered without
 * the reachability index (which a big model then never builds). */
static bool direct(const gm_node *a, const gm_node *b)
{
    for (uint32_t i = 0; i < b->n_in; i++)
        if (b->in[i].src == a) return true;
    for (uint32_t i = 0; i < b->ctrl_in.n; i++)
        if (b->ctrl_in.v[i] == a) return true;
    return false;
}

/* The access at tb must follow the one at ta (earlier in the model order). Where they meet
 * (gm_node_meet) they are nodes of one graph, which an edge can order; one node (a parent and
 * its body, or two bodies of one node) is the bodies' matter: If/Case branches never run
 * together, a While runs cond before body, a parent reads its inputs before its bodies run. */
static gm_status need(ao_state *a, uint32_t ta, bool wa, uint32_t tb, bool wb, uint32_t sym)
{
    const gm_node *p = gm_model_node_at(a->m, ta), *q = gm_model_node_at(a->m, tb);
    if (wa && ta == a->w_node) { /* the last write, met by its readers one after another */
        gm_node_meet_from(p, &a->w_up, &q);
        p = a->w_up;
    } else {
        gm_node_meet(&p, &q);
    }
    if (p == q) return GM_OK;
    gm_node *x = gm_model_node_at(a->m, (size_t)p->topo_id), *y = gm_model_node_at(a->m, (size_t)q->topo_id);
    assert(x->graph == y->graph && x->topo_id < y->topo_id);
    a->stats.pairs++;
    if (direct(x, y)) { /* an edge of the model, or one added for another symbol */
        a->stats.direct++;
        return GM_OK;
    }
    if (!a->reach && gm_reach_new(a->m, &a->reach) != GM_OK) return oom(a);
    if (gm_reach_path(a->reach, x, y)) return GM_OK;
    char name[512], reason[768];
    gm_symbol_name(a->s, (int32_t)sym, name, sizeof name);
    snprintf(reason, sizeof reason, "%s node[%s] before %s node[%s] of %s", kind(wa),
             gm_model_node_at(a->m, ta)->name, kind(wb), gm_model_node_at(a->m, tb)->name, name);
    if (gm_edit_add_control_edge(x, y) != GM_OK) return oom(a);
    a->stats.edges++;
    gm_log(GM_LOG_INFO, "[MemConflict][ORDER] %s: control edge %s -> %s in graph %s", reason, x->name, y->name,
           x->graph->name);
    return gm_pass_record_edge(a->c, x, y, reason);
}

/* One symbol's accesses, in the model order: a node's own merged first (a ref op reads and
 * writes: it writes). */
static gm_status order_group(ao_state *a, const ao_access *g, size_t len)
{
    bool have_w = false;
    uint32_t last_w = 0;
    a->n_reads = 0;
    a->w_up = NULL;
    for (size_t i = 0; i < len;) {
        uint32_t node = g[i].node;
        bool write = false;
        for (; i < len && g[i].node == node; i++) write |= g[i].write != 0;
        a->stats.accesses++;
        gm_status st = GM_OK;
        if (!write) {
            if (have_w) st = need(a, last_w, true, node, false, g[0].sym);
            if (st == GM_OK && gm_grow((void **)&a->reads, sizeof *a->reads, a->n_reads + 1, &a->cap_reads))
                st = oom(a);
            if (st == GM_OK) a->reads[a->n_reads++] = node;
        } else {
            /* after every read since the last write: each of those follows that write already */
            for (size_t r = 0; r < a->n_reads && st == GM_OK; r++) st = need(a, a->reads[r], false, node, true, g[0].sym);
            if (!a->n_reads && have_w) st = need(a, last_w, true, node, true, g[0].sym);
            have_w = true, last_w = node, a->n_reads = 0;
            a->w_node = node, a->w_up = NULL;
        }
        if (st != GM_OK) return st;
    }
    return GM_OK;
}

/* On a big model the reachability labels are built beside the gathering: the first pair that
 * needs them comes only after it (so no edge was added yet, and they are the labels the first
 * such pair would build), and building them was a quarter of the pass at a million nodes. */
enum { REACH_AHEAD = 65536 }; /* nodes */

typedef struct ao_start {
    ao_state *a;
    gm_symbols **own;
    gm_status st;
} ao_start;

/* The accesses grouped by symbol, the model order kept inside a group (the sort is stable). */
static gm_status gather_sorted(ao_state *a, gm_symbols **own)
{
    gm_pass_ctx *c = a->c;
    gm_status st;
    if (c->handoff && gm_symbols_current(*c->handoff, a->m)) {
        a->s = *c->handoff;
    } else {
        if ((st = gm_symbols_build(a->m, own, c->err)) != GM_OK) return st;
        a->s = *own;
    }
    static const gm_radix_key keys[] = {key_sym};
    st = gather(a);
    if (st == GM_OK && !gm_radix_sort(a->v, a->n, sizeof *a->v, keys, 1)) st = oom(a);
    return st;
}

static void start_part(void *ctx, unsigned part, unsigned parts)
{
    (void)parts;
    ao_start *j = ctx;
    if (part == 0) {
        j->st = gather_sorted(j->a, j->own);
    } else if (gm_reach_new(j->a->m, &j->a->reach) != GM_OK) {
        j->a->reach = NULL; /* the first pair that needs them tries again, and tells */
    }
}

gm_status gm_access_order_run(gm_pass_ctx *c, gm_access_order_stats *stats)
{
    if (stats) memset(stats, 0, sizeof *stats);
    gm_model *m = c->m;
    gm_status st = gm_model_toposort(m, c->err);
    if (st != GM_OK) return st;
    ao_state a = {.c = c, .m = m};
    gm_symbols *own = NULL;
    ao_start start = {&a, &own, GM_OK};
    if (m->order.n >= REACH_AHEAD && gm_parallel_parts(0, 2) == 2) {
        gm_parallel_run(2, start_part, &start);
    } else {
        start_part(&start, 0, 1);
    }
    st = start.st;
    for (size_t i = 0, j; st == GM_OK && i < a.n; i = j) {
        for (j = i + 1; j < a.n && a.v[j].sym == a.v[i].sym;) j++;
        st = order_group(&a, a.v + i, j - i);
    }
    gm_reach_free(a.reach);
    gm_free(a.v);
    gm_free(a.reads);
    if (st == GM_OK && a.stats.edges) {
        /* Every edge runs forward in the model order, which the sort therefore keeps; the table
         * reads no control edge, so it still describes the model. */
        st = gm_model_toposort(m, c->err);
        if (st == GM_OK && c->handoff) {
            if (own) {
                gm_symbols_free(*c->handoff);
                *c->handoff = own;
                own = NULL;
            }
            gm_symbols_restamp(*c->handoff, m);
        }
    } else if (st == GM_OK && own && c->handoff) {
        gm_symbols_free(*c->handoff);
        *c->handoff = own;
        own = NULL;
    }
    gm_symbols_free(own);
    if (stats) *stats = a.stats;
    return st;
}

gm_status gm_pass_access_order(gm_pass_ctx *c)
{
    if (gm_log_get_level() >= GM_LOG_INFO)
        gm_log(GM_LOG_INFO, "[MemConflict][ORDER] Start to order conflicting accesses of model %s.", c->m->name);
    return gm_access_order_run(c, NULL);
}
