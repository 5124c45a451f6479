/*
 * rw_types.c — the type side of GE's read/write conflict handling (reference §1.2–§1.7): which
 * inputs and outputs are ref pairs, what each output and input does to a shared buffer, how a
 * subgraph's Data and NetOutput pass that knowledge to the parent node, and the two tables
 * that turn a pair of types into a decision.
 *
 * Everything per node lives in arrays indexed by the node's topological id at the time the
 * state was built; nodes created later (the Identities the pass inserts) have no entry and
 * are treated as GE treats them: no ref pairs, nothing recorded.
 */
#include <string.h>

#include "conflict/rw_conflict.h"
#include "graphmem/log.h"
#include "ir/ir.h"
#include "ops/op_table.h"
#include "util/alloc.h"
#include "util/strmap.h"

#define RW_NONE ((size_t)-1)

/* One graph's view for the marking: its NetOutput and its Data nodes by parent index. */
typedef struct rw_graph {
    gm_graph *g;
    gm_node *netoutput;     /* the first NetOutput of the graph, or NULL */
    gm_node **data_by_pidx; /* parent input index -> subgraph Data (NULL: none); NULL array for the
                               root and for While children, which GE never looks into */
    uint32_t n_pidx;
} rw_graph;

struct gm_rw_state {
    gm_model *m;
    bool mutate;
    size_t n;
    gm_node **nodes;    /* GetAllNodes order when built: topo id -> node */
    size_t *ref_off;    /* per node: offset in ref_pool of in2out[n_in] then out2in[n_out], or RW_NONE */
    int32_t *ref_pool;
    uint8_t *data_type; /* per node: recorded input type of a subgraph Data; GM_RW_IN_COUNT = not recorded */
    size_t *net_off;    /* per node: offset in net_pool of a subgraph NetOutput's types, or RW_NONE */
    uint8_t *net_pool;  /* per parent output index: recorded type; GM_RW_OUT_COUNT = not recorded */
    rw_graph *graphs;
    size_t n_graphs;
    gm_strmap graph_by_name; /* name -> rw_graph */
};

/* ---- names and tables ------------------------------------------------------------------------ */

const char *gm_rw_in_type_name(gm_rw_in_type t)
{
    static const char *const names[] = {"ReadOnly", "Writeable", "ScopeWriteable", "InvalidRWType"};
    return (unsigned)t < GM_RW_IN_COUNT ? names[t] : "InvalidRWType";
}

const char *gm_rw_out_type_name(gm_rw_out_type t)
{
    static const char *const names[] = {"ReadOnlyConst", "ReadOnly", "SoftRead", "Writeable", "InvalidRWType"};
    return (unsigned)t < GM_RW_OUT_COUNT ? names[t] : "InvalidRWType";
}

const char *gm_rw_out_type_log_name(gm_rw_out_type t)
{
    /* GE's table: four names for five values, indexed by the ordinal, so each name is one
     * off. We keep the shift in the log text so logs compare line for line with GE's; the
     * fifth value (Invalid) would read past GE's table and prints the last name here. */
    static const char *const ge_names[] = {"ReadOnly", "SoftRead", "Writeable", "InvalidRWType"};
    return (unsigned)t < 4 ? ge_names[t] : ge_names[3];
}

const char *gm_rw_result_name(gm_rw_result r)
{
    static const char *const names[] = {"DO_NOTHING", "INSERT_IDENTITY", "WRONG_GRAPH"};
    return (unsigned)r < 3 ? names[r] : "?";
}

gm_rw_result gm_rw_conflict_result(gm_rw_out_type out, gm_rw_in_type in)
{
    /* Rows: output type; columns: input type (§1.6). Invalid on either side is a wrong graph. */
    static const uint8_t k_matrix[4][3] = {
        /* ReadOnlyConst */ {GM_RW_DO_NOTHING, GM_RW_INSERT_IDENTITY, GM_RW_INSERT_IDENTITY},
        /* ReadOnly      */ {GM_RW_DO_NOTHING, GM_RW_DO_NOTHING, GM_RW_INSERT_IDENTITY},
        /* SoftRead      */ {GM_RW_DO_NOTHING, GM_RW_DO_NOTHING, GM_RW_DO_NOTHING},
        /* Writeable     */ {GM_RW_DO_NOTHING, GM_RW_DO_NOTHING, GM_RW_INSERT_IDENTITY},
    };
    if ((unsigned)out >= GM_RW_OUT_INVALID || (unsigned)in >= GM_RW_IN_INVALID) return GM_RW_WRONG_GRAPH;
    return (gm_rw_result)k_matrix[out][in];
}

gm_rw_in_type gm_rw_merge_input_types(unsigned mask)
{
    /* current x next (§1.5). GE merges a std::set, so duplicates collapse and the order is
     * ascending by ordinal; walking the mask's bits upwards does the same. */
    static const uint8_t k_merge[3][3] = {
        /* ReadOnly       */ {GM_RW_IN_READ_ONLY, GM_RW_IN_WRITEABLE, GM_RW_IN_SCOPE_WRITEABLE},
        /* Writeable      */ {GM_RW_IN_WRITEABLE, GM_RW_IN_WRITEABLE, GM_RW_IN_INVALID},
        /* ScopeWriteable */ {GM_RW_IN_SCOPE_WRITEABLE, GM_RW_IN_INVALID, GM_RW_IN_SCOPE_WRITEABLE},
    };
    gm_rw_in_type cur = GM_RW_IN_READ_ONLY;
    for (unsigned t = 0; t < GM_RW_IN_COUNT; t++) {
        if (!(mask & (1u << t))) continue;
        if (t >= GM_RW_IN_INVALID || cur == GM_RW_IN_INVALID) return GM_RW_IN_INVALID;
        cur = (gm_rw_in_type)k_merge[cur][t];
    }
    return cur;
}

/* ---- node predicates ------------------------------------------------------------------------- */

bool gm_rw_is_while(const gm_node *n)
{
    /* GE's kWhileOpTypes are While and StatelessWhile; the op table's While kind also holds
     * _While and ONNX Loop/Scan, which carry their state through the body the same way. */
    return gm_node_ctrl_kind(n) == GM_CTRL_WHILE;
}

bool gm_rw_in_while_subgraph(const gm_node *n)
{
    /* Only the direct parent counts, as in GE: an If inside a While body is marked and visited. */
    const gm_node *p = n->graph->parent;
    return p && gm_rw_is_while(p);
}

static const gm_attr *rw_pidx_attr(const gm_attr *attrs)
{
    const gm_attr *a = gm_attr_find(attrs, "_parent_node_index");
    return a && a->kind == GM_ATTR_INT ? a : NULL;
}

bool gm_rw_is_subgraph_data(const gm_node *n, int64_t *pidx)
{
    if (!n->graph->parent || !gm_node_is(n, GM_OP_DATA)) return false;
    const gm_attr *a = rw_pidx_attr(n->attrs);
    if (!a) return false;
    if (pidx) *pidx = a->u.i;
    return true;
}

bool gm_rw_is_subgraph_netoutput(const gm_node *n)
{
    return n->graph->parent && gm_node_is(n, GM_OP_NETOUTPUT);
}

/* PhonyConcat / PhonySplit name an input like their output to express sharing but never write
 * it (§1.5 rule 2). */
static bool rw_is_phony(const gm_node *n) { return gm_node_is(n, GM_OP_PHONY); }

/* A FrameworkOp whose original type is RefSwitch (§1.3 rule 5, §1.5 rule 4). */
static bool rw_is_ref_switch(const gm_node *n) { return gm_node_is(n, GM_OP_REF_SWITCH); }

/* Does output k feed more than one distinct node? (O(uses): compares with the first.) */
static bool rw_multi_consumer_nodes(const gm_node *n, uint32_t k)
{
    if (k >= n->n_out) return false;
    const gm_out_slot *o = &n->out[k];
    for (uint32_t j = 1; j < o->n_uses; j++)
        if (o->uses[j].node != o->uses[0].node) return true;
    return false;
}

/* ---- the state ------------------------------------------------------------------------------- */

static int64_t rw_id(const gm_rw_state *st, const gm_node *n)
{
    int64_t id = n->topo_id;
    return id >= 0 && (size_t)id < st->n && st->nodes[id] == n ? id : -1;
}

static rw_graph *rw_graph_of(const gm_rw_state *st, const gm_graph *g)
{
    return gm_strmap_get(&st->graph_by_name, g->name);
}

size_t gm_rw_state_node_count(const gm_rw_state *st) { return st->n; }
gm_node *gm_rw_state_node(const gm_rw_state *st, size_t i) { return i < st->n ? st->nodes[i] : NULL; }

int32_t gm_rw_ref_output_of_input(const gm_rw_state *st, const gm_node *n, uint32_t i)
{
    int64_t id = rw_id(st, n);
    if (id < 0 || st->ref_off[id] == RW_NONE || i >= n->n_in) return -1;
    return st->ref_pool[st->ref_off[id] + i];
}

int32_t gm_rw_ref_input_of_output(const gm_rw_state *st, const gm_node *n, uint32_t k)
{
    int64_t id = rw_id(st, n);
    if (id < 0 || st->ref_off[id] == RW_NONE || k >= n->n_out) return -1;
    return st->ref_pool[st->ref_off[id] + n->n_in + k];
}

void gm_rw_state_free(gm_rw_state *st)
{
    if (!st) return;
    for (size_t i = 0; st->graphs && i < st->n_graphs; i++) gm_free(st->graphs[i].data_by_pidx);
    gm_free(st->graphs);
    gm_strmap_free(&st->graph_by_name);
    gm_free(st->nodes);
    gm_free(st->ref_off);
    gm_free(st->ref_pool);
    gm_free(st->data_type);
    gm_free(st->net_off);
    gm_free(st->net_pool);
    gm_free(st);
}

static gm_status rw_oom(const gm_rw_state *st, gm_error *err)
{
    return gm_error_set(err, GM_ERR_NOMEM, "%s: out of memory", st->m->source);
}

/* The output of n named `name`, or -1. Nodes with many outputs use a map so that a node with
 * thousands of inputs and outputs stays linear. */
static int32_t rw_output_named(const gm_node *n, const char *name, const gm_strmap *by_name)
{
    if (by_name) {
        void *v = gm_strmap_get(by_name, name);
        return v ? (int32_t)((uintptr_t)v - 1) : -1;
    }
    for (uint32_t k = 0; k < n->n_out; k++) {
        const char *o = gm_node_output_name(n, k);
        if (o && strcmp(o, name) == 0) return (int32_t)k;
    }
    return -1;
}

/* MarkRefRelations (§1.2) for one node: an input and an output with the same IR name are one
 * tensor. The first pairing of an output wins. */
static gm_status rw_mark_refs(gm_rw_state *st, gm_node *n, size_t id, size_t *pool_used, gm_error *err)
{
    if (n->n_in == 0 || n->n_out == 0) return GM_OK;
    gm_strmap by_name = {0};
    bool use_map = n->n_out > 16;
    if (use_map) {
        /* Insert from the last output down, so that with repeated names the first one stays. */
        for (uint32_t k = n->n_out; k-- > 0;) {
            const char *o = gm_node_output_name(n, k);
            if (o && gm_strmap_put(&by_name, o, (void *)(uintptr_t)(k + 1))) {
                gm_strmap_free(&by_name);
                return rw_oom(st, err);
            }
        }
    }
    bool any = false;
    int32_t *pairs = st->ref_pool + *pool_used;
    for (uint32_t j = 0; j < n->n_in + n->n_out; j++) pairs[j] = -1;
    for (uint32_t i = 0; i < n->n_in; i++) {
        const char *name = gm_node_input_name(n, i);
        if (!name) continue;
        int32_t k = rw_output_named(n, name, use_map ? &by_name : NULL);
        if (k < 0) continue;
        pairs[i] = k;
        if (pairs[n->n_in + (uint32_t)k] < 0) pairs[n->n_in + (uint32_t)k] = (int32_t)i;
        any = true;
    }
    gm_strmap_free(&by_name);
    if (!any) return GM_OK;
    st->ref_off[id] = *pool_used;
    *pool_used += n->n_in + n->n_out;
    /* GE marks such ops `reference`; the check leaves the model as it is. */
    if (st->mutate && gm_attr_set_bool(&n->attrs, "reference", true) != GM_OK) return rw_oom(st, err);
    return GM_OK;
}

/* The per-graph maps: NetOutput and Data by parent index. GE fails the whole pass on a
 * missing or repeated _parent_node_index of a subgraph Data; While children are skipped as GE
 * skips them. */
static gm_status rw_index_graph(gm_rw_state *st, rw_graph *rg, gm_error *err)
{
    gm_graph *g = rg->g;
    for (uint32_t j = 0; j < g->nodes.n; j++) {
        gm_node *nd = g->nodes.v[j];
        if (!nd->dead && gm_node_is(nd, GM_OP_NETOUTPUT)) {
            rg->netoutput = nd;
            break;
        }
    }
    gm_node *parent = g->parent;
    if (!parent || gm_rw_is_while(parent)) return GM_OK;
    rg->n_pidx = parent->n_in;
    rg->data_by_pidx = gm_calloc(parent->n_in ? parent->n_in : 1, sizeof *rg->data_by_pidx);
    if (!rg->data_by_pidx) return rw_oom(st, err);
    for (uint32_t j = 0; j < g->nodes.n; j++) {
        gm_node *nd = g->nodes.v[j];
        if (nd->dead || !gm_node_is(nd, GM_OP_DATA)) continue;
        const gm_attr *a = rw_pidx_attr(nd->attrs);
        if (!a) {
            /* A RefData inside a subgraph may stand for a variable without reading the parent. */
            if (gm_node_is(nd, GM_OP_VAR_LIKE)) continue;
            return gm_error_set(err, GM_ERR_INPUT,
                                "%s: graph '%s': node '%s': a subgraph Data without _parent_node_index",
                                st->m->source, g->name, nd->name);
        }
        int64_t p = a->u.i;
        if (p < 0 || p >= (int64_t)rg->n_pidx) continue; /* recorded, but reachable from no parent input */
        if (rg->data_by_pidx[p]) {
            return gm_error_set(err, GM_ERR_INPUT,
                                "%s: graph '%s': nodes '%s' and '%s' both read parent input %lld "
                                "(_parent_node_index must be unique in a subgraph)",
                                st->m->source, g->name, rg->data_by_pidx[p]->name, nd->name, (long long)p);
        }
        rg->data_by_pidx[p] = nd;
    }
    return GM_OK;
}

gm_status gm_rw_state_new(gm_model *m, bool mutate, gm_rw_state **out, gm_error *err)
{
    *out = NULL;
    gm_rw_state *st = gm_calloc(1, sizeof *st);
    if (!st) return gm_error_set(err, GM_ERR_NOMEM, "%s: out of memory", m->source);
    st->m = m;
    st->mutate = mutate;
    st->n = gm_model_node_count(m);
    size_t cap = st->n ? st->n : 1;
    st->nodes = gm_calloc(cap, sizeof *st->nodes);
    st->ref_off = gm_calloc(cap, sizeof *st->ref_off);
    st->data_type = gm_calloc(cap, sizeof *st->data_type);
    st->net_off = gm_calloc(cap, sizeof *st->net_off);
    st->n_graphs = gm_model_graph_count(m);
    st->graphs = gm_calloc(st->n_graphs ? st->n_graphs : 1, sizeof *st->graphs);
    gm_status rc = GM_OK;
    if (!st->nodes || !st->ref_off || !st->data_type || !st->net_off || !st->graphs) goto oom;

    size_t ref_total = 0, net_total = 0;
    for (size_t i = 0; i < st->n; i++) {
        gm_node *nd = gm_model_node_at(m, i);
        st->nodes[i] = nd;
        st->ref_off[i] = RW_NONE;
        st->net_off[i] = RW_NONE;
        st->data_type[i] = GM_RW_IN_COUNT;
        ref_total += (size_t)nd->n_in + nd->n_out;
        if (gm_rw_is_subgraph_netoutput(nd)) {
            st->net_off[i] = net_total;
            net_total += nd->graph->parent->n_out;
        }
    }
    st->ref_pool = gm_malloc((ref_total ? ref_total : 1) * sizeof *st->ref_pool);
    st->net_pool = gm_malloc(net_total ? net_total : 1);
    if (!st->ref_pool || !st->net_pool) goto oom;
    memset(st->net_pool, GM_RW_OUT_COUNT, net_total);

    size_t used = 0;
    for (size_t i = 0; i < st->n; i++)
        if ((rc = rw_mark_refs(st, st->nodes[i], i, &used, err)) != GM_OK) goto fail;

    for (size_t gi = 0; gi < st->n_graphs; gi++) {
        rw_graph *rg = &st->graphs[gi];
        rg->g = gm_model_graph(m, gi);
        if (gm_strmap_put(&st->graph_by_name, rg->g->name, rg)) goto oom;
        if ((rc = rw_index_graph(st, rg, err)) != GM_OK) goto fail;
    }
    *out = st;
    return GM_OK;
oom:
    rc = rw_oom(st, err);
fail:
    gm_rw_state_free(st);
    return rc;
}

/* ---- output types ---------------------------------------------------------------------------- */

/* What a subgraph's NetOutput recorded for the parent's output k (§1.7); Invalid if nothing. */
static gm_rw_out_type rw_recorded_output(const gm_rw_state *st, const gm_node *netoutput, uint32_t k)
{
    int64_t id = rw_id(st, netoutput);
    if (id < 0 || st->net_off[id] == RW_NONE || k >= netoutput->graph->parent->n_out) return GM_RW_OUT_INVALID;
    uint8_t t = st->net_pool[st->net_off[id] + k];
    if (t >= GM_RW_OUT_COUNT) {
        gm_log(GM_LOG_DEBUG, "[MemConflict] netoutput %s has no recorded rw type for parent output %u", netoutput->name,
               k);
        return GM_RW_OUT_INVALID;
    }
    return (gm_rw_out_type)t;
}

gm_rw_out_type gm_rw_single_output_type(const gm_rw_state *st, const gm_node *n, uint32_t k)
{
    /* §1.3, first match wins. */
    if (gm_node_is(n, GM_OP_VAR_LIKE)) return GM_RW_OUT_WRITEABLE;
    if (gm_node_is(n, GM_OP_DATA)) {
        const gm_attr *a = rw_pidx_attr(n->attrs);
        /* A root Data counts as writable: frameworks feed writable Data straight into ref ops. */
        if (!a) return GM_RW_OUT_WRITEABLE;
        /* A subgraph Data is whatever the parent's producer of that input is. */
        const gm_node *parent = n->graph->parent;
        int64_t p = a->u.i;
        if (!parent || p < 0 || p >= (int64_t)parent->n_in || !parent->in[p].src) return GM_RW_OUT_INVALID;
        return gm_rw_output_type(st, parent->in[p].src, (uint32_t)parent->in[p].src_index);
    }
    if (gm_rw_ref_input_of_output(st, n, k) >= 0) return GM_RW_OUT_WRITEABLE;
    if (rw_is_ref_switch(n)) return GM_RW_OUT_WRITEABLE;
    if (gm_node_is(n, GM_OP_CONST)) return GM_RW_OUT_READ_ONLY_CONST;
    if (k >= n->n_out) return GM_RW_OUT_INVALID;
    /* Counted in in-anchors, not nodes: one node reading the output twice makes it ReadOnly. */
    return n->out[k].n_uses > 1 ? GM_RW_OUT_READ_ONLY : GM_RW_OUT_SOFT_READ;
}

gm_rw_out_type gm_rw_output_type(const gm_rw_state *st, const gm_node *n, uint32_t k)
{
    if (gm_rw_is_while(n)) return GM_RW_OUT_SOFT_READ;
    if (n->n_sub == 0) return gm_rw_single_output_type(st, n, k);
    /* With subgraphs: only a node with exactly one subgraph NetOutput looks inside. */
    const gm_node *only = NULL;
    size_t count = 0;
    for (uint32_t s = 0; s < n->n_sub; s++) {
        const rw_graph *rg = n->sub[s] ? rw_graph_of(st, n->sub[s]) : NULL;
        if (rg && rg->netoutput) {
            only = rg->netoutput;
            count++;
        }
    }
    gm_rw_out_type t = GM_RW_OUT_SOFT_READ;
    if (count == 1) t = rw_recorded_output(st, only, k);
    if (t == GM_RW_OUT_WRITEABLE) return t;
    return rw_multi_consumer_nodes(n, k) ? GM_RW_OUT_READ_ONLY : t;
}

/* ---- input types ----------------------------------------------------------------------------- */

gm_rw_in_type gm_rw_single_input_type(const gm_rw_state *st, const gm_node *n, uint32_t i)
{
    if (gm_node_is(n, GM_OP_INPUT_MUTABLE)) return GM_RW_IN_SCOPE_WRITEABLE;
    if (rw_is_phony(n)) return GM_RW_IN_READ_ONLY;
    if (gm_rw_ref_output_of_input(st, n, i) >= 0) return GM_RW_IN_WRITEABLE;
    if (i == 0 && rw_is_ref_switch(n)) return GM_RW_IN_WRITEABLE;
    return GM_RW_IN_READ_ONLY;
}

gm_rw_in_type gm_rw_input_type(const gm_rw_state *st, const gm_node *n, uint32_t i)
{
    if (gm_rw_is_while(n)) return GM_RW_IN_SCOPE_WRITEABLE;
    /* A FIFO input is allocated twice over; its writes must stay inside the node. */
    if (i < n->n_in && gm_attrs_get_int(n->in_desc[i].attrs, "_special_input_size", 0) > 0)
        return GM_RW_IN_SCOPE_WRITEABLE;
    if (n->n_sub == 0) return gm_rw_single_input_type(st, n, i);
    unsigned mask = 0;
    for (uint32_t s = 0; s < n->n_sub; s++) {
        const rw_graph *rg = n->sub[s] ? rw_graph_of(st, n->sub[s]) : NULL;
        if (!rg || !rg->data_by_pidx || i >= rg->n_pidx || !rg->data_by_pidx[i]) continue;
        int64_t id = rw_id(st, rg->data_by_pidx[i]);
        uint8_t t = id >= 0 ? st->data_type[id] : GM_RW_IN_COUNT;
        mask |= 1u << (t < GM_RW_IN_COUNT ? t : GM_RW_IN_INVALID);
    }
    return gm_rw_merge_input_types(mask);
}

/* ---- subgraph marking ------------------------------------------------------------------------ */

bool gm_rw_judge_optimizable_by_parent(const gm_rw_state *st, const gm_node *parent, uint32_t idx)
{
    if (gm_node_ctrl_kind(parent) == GM_CTRL_PARTITIONED_CALL) return true;
    if (idx >= parent->n_out) return true;
    if (parent->n_sub > 1) {
        /* A branch that only reads the buffer while another writes it: the two branches would
         * disagree about the parent output's content. */
        for (uint32_t s = 0; s < parent->n_sub; s++) {
            const rw_graph *rg = parent->sub[s] ? rw_graph_of(st, parent->sub[s]) : NULL;
            const gm_node *no = rg ? rg->netoutput : NULL;
            for (uint32_t j = 0; no && j < no->n_in; j++) {
                const gm_attr *a = rw_pidx_attr(no->in_desc[j].attrs);
                const gm_node *src = no->in[j].src;
                if (!a || a->u.i != (int64_t)idx || !src) continue;
                if (gm_rw_output_type(st, src, (uint32_t)no->in[j].src_index) == GM_RW_OUT_READ_ONLY) return false;
            }
        }
    }
    const gm_out_slot *o = &parent->out[idx];
    for (uint32_t j = 0; j < o->n_uses; j++) {
        const gm_node *c = o->uses[j].node;
        if (c->n_sub > 0) return false;
        if (gm_rw_single_input_type(st, c, (uint32_t)o->uses[j].index) != GM_RW_IN_READ_ONLY) return false;
    }
    return true;
}

/* MarkRWTypeForSubgraphOutput: what each NetOutput input hands to the parent's output. */
static gm_status rw_mark_netoutput(gm_rw_state *st, gm_node *no, gm_rw_netoutput_fn insert, void *ctx,
                                   gm_error *err)
{
    int64_t id = rw_id(st, no);
    gm_node *parent = no->graph->parent;
    for (uint32_t i = 0; i < no->n_in; i++) {
        const gm_attr *a = rw_pidx_attr(no->in_desc[i].attrs);
        if (!a) {
            return gm_error_set(err, GM_ERR_INPUT,
                                "%s: graph '%s': node '%s': input %u has no _parent_node_index", st->m->source,
                                no->graph->name, no->name, i);
        }
        int64_t p = a->u.i;
        const gm_node *src = no->in[i].src;
        gm_rw_out_type t = src ? gm_rw_output_type(st, src, (uint32_t)no->in[i].src_index) : GM_RW_OUT_INVALID;
        if (t == GM_RW_OUT_WRITEABLE && !gm_rw_judge_optimizable_by_parent(st, parent, (uint32_t)p)) {
            if (insert) {
                gm_status rc = insert(ctx, no, i);
                if (rc != GM_OK) return rc;
            }
            t = GM_RW_OUT_SOFT_READ; /* the Identity's output, which is what the parent now sees */
        }
        if (id >= 0 && st->net_off[id] != RW_NONE && p >= 0 && p < (int64_t)parent->n_out)
            st->net_pool[st->net_off[id] + (size_t)p] = (uint8_t)t;
    }
    return GM_OK;
}

gm_status gm_rw_mark_subgraphs(gm_rw_state *st, gm_rw_netoutput_fn insert, void *ctx, gm_error *err)
{
    gm_node **snap = NULL;
    size_t cap = 0;
    gm_status rc = GM_OK;
    /* Last subgraph first: inner subgraphs are normally listed after the graph that holds their
     * parent, so their types are known when the outer parent is looked at. */
    for (size_t gi = st->n_graphs; gi-- > 1 && rc == GM_OK;) {
        rw_graph *rg = &st->graphs[gi];
        if (!rg->g->parent || gm_rw_is_while(rg->g->parent)) continue;
        /* The insertions below add nodes to this graph's list: walk a copy. */
        size_t nn = rg->g->nodes.n;
        if (gm_grow((void **)&snap, sizeof *snap, nn ? nn : 1, &cap)) {
            rc = rw_oom(st, err);
            break;
        }
        memcpy(snap, rg->g->nodes.v, nn * sizeof *snap);
        for (size_t j = 0; j < nn && rc == GM_OK; j++) {
            gm_node *nd = snap[j];
            int64_t id = rw_id(st, nd);
            if (nd->dead || id < 0) continue;
            if (gm_node_is(nd, GM_OP_DATA) && rw_pidx_attr(nd->attrs)) {
                /* What the subgraph does to the parent input this Data reads: every reader's. */
                unsigned mask = 0;
                const gm_out_slot *o = nd->n_out ? &nd->out[0] : NULL;
                for (uint32_t u = 0; o && u < o->n_uses; u++)
                    mask |= 1u << gm_rw_input_type(st, o->uses[u].node, (uint32_t)o->uses[u].index);
                st->data_type[id] = (uint8_t)gm_rw_merge_input_types(mask);
            } else if (gm_node_is(nd, GM_OP_NETOUTPUT)) {
                rc = rw_mark_netoutput(st, nd, insert, ctx, err);
            }
        }
    }
    gm_free(snap);
    return rc;
}

/* ---- NeedCheckSkipIdentiy ---------------------------------------------------------------------- */

bool gm_rw_need_check_skip(const gm_rw_state *st, gm_rw_out_type out, const gm_node *n, uint32_t k)
{
    if (out == GM_RW_OUT_READ_ONLY) return true;
    if (out != GM_RW_OUT_WRITEABLE) return false; /* a Const buffer is never written in place */
    /* Walk back along the ref chain to the buffer's owner: the last reader may write in place
     * only if nobody else on the way reads the buffer and the owner is a root input or a
     * non-ref node. "Reads" counts distinct nodes here (one node reading through several
     * inputs is the case the skip is for). The walk is bounded by the chain, which a DAG
     * cannot close. */
    const gm_node *cur = n;
    uint32_t ck = k;
    for (size_t steps = 0; steps <= st->n + 1; steps++) {
        if (rw_multi_consumer_nodes(cur, ck)) return false;
        if (gm_node_is(cur, GM_OP_DATA)) return rw_pidx_attr(cur->attrs) == NULL;
        int32_t in = gm_rw_ref_input_of_output(st, cur, ck);
        if (in < 0) return true;
        const gm_node *src = cur->in[in].src;
        if (!src) return false;
        ck = (uint32_t)cur->in[in].src_index;
        cur = src;
    }
    return false;
}
