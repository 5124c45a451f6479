/*
 * atomic_addr_clean.c — GE's AtomicAddrCleanPass (reference §3.5). An op that accumulates into
 * its output with atomic adds needs that memory zeroed first; the pass adds the zeroing
 * ("clean") nodes and orders them before the atomic ops with control edges:
 *  - option ge.atomicCleanPolicy "1": no node; each atomic op cleans for itself
 *    (`need_gentask_atomic`);
 *  - a loop graph (one holding LoopCond): one clean node per atomic op, since one clean at the
 *    head would run once, not every iteration;
 *  - otherwise one common clean node at the head of the graph for all atomic ops, except that
 *    ops whose outputs go to NetOutput (`_is_connected_to_netoutput`: zero copy may move them)
 *    get their own "dispersed" clean node. Clean nodes also precede the producers of atomic
 *    HCCL ops' inputs, and the common one precedes every first reader of a source Data or
 *    Variable, so that it runs first on every stream.
 * Unknown-shape graphs get no clean node.
 *
 * graphmem deviations (no kernel store, no session): the clean node's type is always
 * "AtomicAddrClean" (GE prefers MemSet when a kernel store supports it); it has no inputs or
 * outputs; its name is `[<subgraph>_]atomic_addr_clean`, `..._<i>` for dispersed ones and
 * `...<i>` for a loop graph's (no session/graph id, counters per graph), deterministic. Which
 * HCCL ops are atomic comes from the op table (GE asks the HCCL kernel store).
 */
#include <stdio.h>
#include <string.h>

#include "ops/op_table.h"
#include "passes/dedicated.h"
#include "ops/attr_table.h"
#include "ops/op_table.h"
#include "passes/pass_util2.h"
#include "util/alloc.h"

enum { ROLE_NONE = 0, ROLE_ATOMIC, ROLE_HCOM, ROLE_DISPERSED, ROLE_GENTASK };

typedef struct ac_ctx {
    gm_pass_ctx *c;
    uint8_t *role; /* per topo id */
    gm_node_vec atomic, hcom;
} ac_ctx;

static uint8_t role_of(const ac_ctx *a, const gm_node *n)
{
    return n->topo_id >= 0 && (size_t)n->topo_id < a->c->m->order.n ? a->role[n->topo_id] : ROLE_NONE;
}

static void set_role(ac_ctx *a, const gm_node *n, uint8_t r)
{
    if (n->topo_id >= 0 && (size_t)n->topo_id < a->c->m->order.n) a->role[n->topo_id] = r;
}

static bool has_data_input(const gm_node *n)
{
    for (uint32_t i = 0; i < n->n_in; i++)
        if (n->in[i].src && gm_node_is(n->in[i].src, GM_OP_DATA)) return true;
    return false;
}

/* Atomic outputs that nobody else can see: the op compiles its own clean instead. */
static bool needs_gentask(const gm_node *n)
{
    for (uint32_t k = 0; k < n->n_out; k++) {
        if (gm_attr_find(n->out[k].desc.attrs, "ref_var_src_var_name")) return true;
        for (uint32_t j = 0; j < n->out[k].n_uses; j++)
            if (gm_attrs_get_bool(n->out[k].uses[j].node->attrs, "_no_task", false)) return true;
    }
    return false;
}

/* Every listed output (atomic outputs if `only_atomic` and the node lists some, else all) has
 * readers, all of them atomic HCCL ops: the HCCL op's own clean covers them. */
static bool feeds_only_hcom(const ac_ctx *a, const gm_node *n, bool only_atomic)
{
    const gm_attr *ao = only_atomic ? gm_attr_find(n->attrs, "atomic_output_index") : NULL;
    bool listed = ao && ao->kind == GM_ATTR_LIST_INT && ao->u.li.n > 0;
    size_t checked = 0;
    for (uint32_t k = 0; k < n->n_out; k++) {
        if (listed && !gm_pass_attr_list_has(n->attrs, "atomic_output_index", k)) continue;
        const gm_out_slot *o = &n->out[k];
        if (!o->n_uses) return false;
        for (uint32_t j = 0; j < o->n_uses; j++)
            if (role_of(a, o->uses[j].node) != ROLE_HCOM) return false;
        checked++;
    }
    return checked > 0;
}

/* IsNeedCleanNode over g's nodes: fills a->atomic and a->hcom, marks the attributes. */
static gm_status find_atomic_nodes(ac_ctx *a, const gm_graph *g)
{
    gm_pass_ctx *c = a->c;
    for (uint32_t x = 0; x < g->nodes.n; x++) {
        gm_node *n = g->nodes.v[x];
        if (gm_node_is(n, GM_OP_HCCL_ATOMIC) && !has_data_input(n)) {
            set_role(a, n, ROLE_HCOM);
            if (gm_node_vec_push(&a->hcom, n) != GM_OK) return gm_pass_oom(c);
            continue;
        }
        if (!gm_attr_find(n->attrs, "atomic_input_index") && !gm_attr_find(n->attrs, "atomic_output_index")) continue;
        if (gm_attr_set_bool(&n->attrs, "is_atomic_node", true) != GM_OK) return gm_pass_oom(c);
        if (needs_gentask(n)) {
            set_role(a, n, ROLE_GENTASK);
            if (gm_attr_set_bool(&n->attrs, "need_gentask_atomic", true) != GM_OK) return gm_pass_oom(c);
            continue;
        }
        set_role(a, n, ROLE_ATOMIC);
        if (gm_node_vec_push(&a->atomic, n) != GM_OK) return gm_pass_oom(c);
    }
    return GM_OK;
}

static void base_name(const gm_graph *g, char *buf, size_t cap)
{
    if (g->parent)
        snprintf(buf, cap, "%s_atomic_addr_clean", g->name);
    else
        snprintf(buf, cap, "atomic_addr_clean");
}

/* A clean node serving one atomic op: ordered just before the op (so the topological
 * tie-break keeps them together), on its stream. */
static gm_node *clean_for(ac_ctx *a, gm_node *n, const char *name)
{
    char reason[600];
    snprintf(reason, sizeof reason, "clears the atomic outputs of %s", n->name);
    gm_node *cl = gm_pass_add_node(a->c, n->graph, n, -1, name, "AtomicAddrClean", n->stream, n, -1, reason);
    if (!cl) return NULL;
    if (gm_edit_add_control_edge(cl, n) != GM_OK) {
        gm_pass_oom(a->c);
        return NULL;
    }
    return cl;
}

static gm_status fail_code(gm_pass_ctx *c)
{
    return c->err->code ? c->err->code : GM_ERR_INTERNAL;
}

static gm_status handle_loop_graph(ac_ctx *a, const gm_graph *g)
{
    char base[400], name[512];
    base_name(g, base, sizeof base);
    size_t idx = 0;
    /* Atomic ops and atomic HCCL ops alike, in graph order (new clean nodes are appended to
     * the list, so the walk stops at the nodes it started with). */
    for (uint32_t x = 0, count = g->nodes.n; x < count; x++) {
        gm_node *n = g->nodes.v[x];
        uint8_t r = role_of(a, n);
        if (r != ROLE_ATOMIC && r != ROLE_HCOM) continue;
        if (r == ROLE_ATOMIC && feeds_only_hcom(a, n, true)) continue;
        snprintf(name, sizeof name, "%s%zu", base, idx++);
        gm_node *cl = clean_for(a, n, name);
        if (!cl) return fail_code(a->c);
        const char *label = gm_attrs_get_string(n->attrs, "_stream_label");
        if (label && gm_attr_set_string(&cl->attrs, "_stream_label", label) != GM_OK) return gm_pass_oom(a->c);
        /* No skip here: the clean node went to the END of the list (gm_ir_node_create appends;
         * the next sort puts it before n), so the node after n is the next one to look at. */
    }
    return GM_OK;
}

/* LinkToHcomPeerInNode: a clean node runs before whatever produces an atomic HCCL op's inputs. */
static gm_status link_to_hcom_peers(ac_ctx *a, gm_node *cl)
{
    for (uint32_t h = 0; h < a->hcom.n; h++) {
        const gm_node *n = a->hcom.v[h];
        for (uint32_t i = 0; i < n->n_in; i++)
            if (n->in[i].src && gm_edit_add_control_edge(cl, n->in[i].src) != GM_OK) return gm_pass_oom(a->c);
    }
    return GM_OK;
}

/* The common clean node also precedes every first reader of a source Data/Variable node, so
 * that it is first on each stream. */
static gm_status link_to_source_readers(ac_ctx *a, const gm_graph *g, gm_node *cl)
{
    for (uint32_t x = 0; x < g->nodes.n; x++) {
        const gm_node *s = g->nodes.v[x];
        if (s == cl || s->n_in || !(gm_node_is(s, GM_OP_DATA) || gm_node_is(s, GM_OP_VARIABLE))) continue;
        for (uint32_t k = 0; k <= s->n_out; k++) {
            /* outputs' readers, then (k == n_out) control successors */
            uint32_t cnt = k < s->n_out ? s->out[k].n_uses : s->ctrl_out.n;
            for (uint32_t j = 0; j < cnt; j++) {
                gm_node *t = k < s->n_out ? s->out[k].uses[j].node : s->ctrl_out.v[j];
                uint8_t r = role_of(a, t);
                if (t == cl || r == ROLE_DISPERSED || r == ROLE_GENTASK || gm_node_is(t, GM_OP_NETOUTPUT) ||
                    gm_attrs_get_bool(t->attrs, "need_gentask_atomic", false))
                    continue;
                if (gm_edit_add_control_edge(cl, t) != GM_OK) return gm_pass_oom(a->c);
            }
        }
    }
    return GM_OK;
}

static gm_status handle_normal_graph(ac_ctx *a, gm_graph *g)
{
    char base[400], name[512], reason[600];
    base_name(g, base, sizeof base);
    gm_node_vec common = {0}, dispersed = {0};
    gm_status st = GM_OK;
    for (uint32_t j = 0; j < a->atomic.n && st == GM_OK; j++) {
        gm_node *n = a->atomic.v[j];
        if (feeds_only_hcom(a, n, false)) continue;
        if (gm_pass_attr_flag(n->attrs, "_is_connected_to_netoutput") && !gm_node_is(n, GM_OP_HCCL)) {
            set_role(a, n, ROLE_DISPERSED);
            if (gm_node_vec_push(&dispersed, n) != GM_OK) st = gm_pass_oom(a->c);
        } else if (gm_node_vec_push(&common, n) != GM_OK) {
            st = gm_pass_oom(a->c);
        }
    }
    if (st == GM_OK && (common.n || a->hcom.n)) {
        const gm_node *first = common.n ? common.v[0] : a->hcom.v[0];
        snprintf(reason, sizeof reason, "clears the atomic outputs of %u node(s), first %s", common.n + a->hcom.n,
                 first->name);
        gm_node *cl = gm_pass_add_node(a->c, g, NULL, -1, base, "AtomicAddrClean", 0, first, -1, reason);
        if (!cl) st = fail_code(a->c);
        for (uint32_t j = 0; st == GM_OK && j < common.n; j++)
            if (gm_edit_add_control_edge(cl, common.v[j]) != GM_OK) st = gm_pass_oom(a->c);
        if (st == GM_OK) st = link_to_hcom_peers(a, cl);
        if (st == GM_OK) st = link_to_source_readers(a, g, cl);
    }
    /* Dispersed clean nodes in graph order, each just before its op. */
    size_t d = 0;
    for (uint32_t x = 0, count = g->nodes.n; st == GM_OK && d < dispersed.n && x < count; x++) {
        gm_node *n = g->nodes.v[x];
        if (role_of(a, n) != ROLE_DISPERSED) continue;
        snprintf(name, sizeof name, "%s_%zu", base, d++);
        gm_node *cl = clean_for(a, n, name);
        st = cl ? link_to_hcom_peers(a, cl) : fail_code(a->c);
    }
    gm_node_vec_free(&common);
    gm_node_vec_free(&dispersed);
    return st;
}

static bool is_loop_graph(const gm_graph *g)
{
    for (uint32_t x = 0; x < g->nodes.n; x++)
        if (gm_node_is(g->nodes.v[x], GM_OP_LOOP_COND)) return true;
    return false;
}

static gm_status handle_graph(ac_ctx *a, gm_graph *g, bool separately)
{
    a->atomic.n = a->hcom.n = 0;
    gm_status st = find_atomic_nodes(a, g);
    if (st != GM_OK || (!a->atomic.n && !a->hcom.n)) return st;
    if (separately) {
        gm_node_vec *lists[2] = {&a->atomic, &a->hcom};
        for (int l = 0; l < 2; l++)
            for (uint32_t j = 0; j < lists[l]->n; j++)
                if (gm_attr_set_bool(&lists[l]->v[j]->attrs, "need_gentask_atomic", true) != GM_OK)
                    return gm_pass_oom(a->c);
        return GM_OK;
    }
    if (!gm_pass_graph_known_shape(g)) return GM_OK;
    return is_loop_graph(g) ? handle_loop_graph(a, g) : handle_normal_graph(a, g);
}

gm_status gm_pass_atomic_addr_clean(gm_pass_ctx *c)
{
    gm_status st = gm_model_toposort(c->m, c->err);
    if (st != GM_OK) return st;
    const char *policy = gm_model_option(c->m, "ge.atomicCleanPolicy");
    bool separately = policy && strcmp(policy, "1") == 0;
    ac_ctx a = {c, gm_calloc(c->m->order.n ? c->m->order.n : 1, 1), {0}, {0}};
    if (!a.role) return gm_pass_oom(c);
    /* Graph pointers only: the clean nodes added to a graph are not walked again. */
    size_t n_graphs = c->m->n_graphs;
    for (size_t gi = 0; gi < n_graphs && st == GM_OK; gi++) st = handle_graph(&a, c->m->graphs[gi], separately);
    gm_free(a.role);
    gm_node_vec_free(&a.atomic);
    gm_node_vec_free(&a.hcom);
    return st;
}
