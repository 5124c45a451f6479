/*
 * finalize.c — turns a built model into a valid one: resolves the names the readers gave
 * (producers, control inputs, subgraphs, parents) and checks every rule of
 * docs/graph-format.md, reporting the first problem with its place. Format-independent, so the
 * JSON, ONNX and GE readers share one set of checks and one wording.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "ops/attr_table.h"
#include "ops/op_table.h"
#include "util/alloc.h"

#define PLACE_FMT "%s: graph '%s': node '%s'"
#define PLACE(n) (n)->graph->model->source, (n)->graph->name, (n)->name

static gm_status oom(const gm_model *m, gm_error *err)
{
    return gm_error_set(err, GM_ERR_NOMEM, "%s: out of memory", m->source);
}

/* ---- subgraph structure ---- */

static gm_status resolve_parents(gm_model *m, gm_error *err)
{
    for (size_t gi = 1; gi < m->n_graphs; gi++) {
        gm_graph *g = m->graphs[gi];
        gm_node *p = gm_strmap_get(&m->node_by_name, g->parent_name);
        if (!p) {
            return gm_error_set(err, GM_ERR_INPUT, "%s: graph '%s': parent names unknown node '%s'",
                                m->source, g->name, g->parent_name);
        }
        bool listed = false;
        for (uint32_t i = 0; i < p->n_sub; i++) listed |= strcmp(p->sub_names[i], g->name) == 0;
        if (!listed) {
            return gm_error_set(err, GM_ERR_INPUT,
                                "%s: graph '%s': its parent node '%s' does not list it in its subgraphs",
                                m->source, g->name, p->name);
        }
        g->parent = p;
    }
    return GM_OK;
}

static gm_status resolve_subgraphs(gm_node *n, gm_error *err)
{
    gm_model *m = n->graph->model;
    for (uint32_t i = 0; i < n->n_sub; i++) {
        gm_graph *g = gm_strmap_get(&m->graph_by_name, n->sub_names[i]);
        if (!g) {
            return gm_error_set(err, GM_ERR_INPUT, PLACE_FMT ": subgraph %u names unknown graph '%s'", PLACE(n), i,
                                n->sub_names[i]);
        }
        if (g->parent != n) {
            return gm_error_set(err, GM_ERR_INPUT,
                                PLACE_FMT ": lists subgraph '%s', but that graph's parent is %s%s%s", PLACE(n),
                                g->name, g->parent ? "'" : "none (it is the root)", g->parent ? g->parent->name : "",
                                g->parent ? "'" : "");
        }
        for (uint32_t j = 0; j < i; j++) {
            if (n->sub[j] == g) {
                return gm_error_set(err, GM_ERR_INPUT, PLACE_FMT ": lists subgraph '%s' twice", PLACE(n), g->name);
            }
        }
        n->sub[i] = g;
    }
    int8_t want = n->op->n_subgraphs;
    if (n->op->ctrl != GM_CTRL_NONE && ((want > 0 && n->n_sub != (uint32_t)want) || (want < 0 && n->n_sub == 0))) {
        return gm_error_set(err, GM_ERR_INPUT, PLACE_FMT ": a %s node owns %s%d subgraph%s (%s), it lists %u", PLACE(n),
                            n->type, want < 0 ? "at least " : "", want < 0 ? 1 : want, want == 1 || want < 0 ? "" : "s",
                            n->op->ctrl == GM_CTRL_IF      ? "then, else"
                            : n->op->ctrl == GM_CTRL_WHILE ? (want == 2 ? "cond, body" : "body")
                                                           : "one per branch",
                            n->n_sub);
    }
    return GM_OK;
}

/* A graph may not be nested inside itself (its parent inside one of its own subgraphs). */
static int cmp_ptr(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t) * (const gm_graph *const *)a, y = (uintptr_t) * (const gm_graph *const *)b;
    return (x > y) - (x < y);
}

/* Position of g in `sorted` (graph pointers in address order). */
static size_t graph_slot(const gm_graph *const *sorted, size_t n, const gm_graph *g)
{
    const gm_graph *const *hit = bsearch(&g, sorted, n, sizeof *sorted, cmp_ptr);
    return (size_t)(hit - sorted);
}

/* Every subgraph's chain of parents must reach the root: no graph nested inside itself. Each
 * graph is climbed once (colours: 0 unseen, 1 on the current climb, 2 reaches the root), so a
 * model nested 20,000 deep costs 20,000 steps, not 20,000 per graph. */
static gm_status check_nesting(const gm_model *m, gm_error *err)
{
    size_t n = m->n_graphs;
    const gm_graph **sorted = gm_malloc((n ? n : 1) * sizeof *sorted);
    unsigned char *colour = gm_calloc(n ? n : 1, 1);
    if (!sorted || !colour) {
        gm_free(sorted), gm_free(colour);
        return gm_error_set(err, GM_ERR_NOMEM, "%s: out of memory", m->source);
    }
    memcpy(sorted, m->graphs, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, cmp_ptr);
    colour[graph_slot(sorted, n, m->graphs[0])] = 2;
    gm_status st = GM_OK;
    for (size_t gi = 1; gi < n && st == GM_OK; gi++) {
        const gm_graph *g = m->graphs[gi], *up = g;
        while (up && colour[graph_slot(sorted, n, up)] == 0) {
            colour[graph_slot(sorted, n, up)] = 1;
            up = up->parent ? up->parent->graph : NULL;
        }
        if (up && colour[graph_slot(sorted, n, up)] == 1)
            st = gm_error_set(err, GM_ERR_INPUT, "%s: graph '%s' is nested inside itself (subgraph cycle through node '%s')",
                              m->source, up->name, up->parent ? up->parent->name : "?");
        for (const gm_graph *x = g; x && colour[graph_slot(sorted, n, x)] == 1; x = x->parent ? x->parent->graph : NULL)
            colour[graph_slot(sorted, n, x)] = 2;
    }
    gm_free(sorted);
    gm_free(colour);
    return st;
}

/* ---- edges ---- */

/* The node given just before n in its graph: a model's text lists a chain in order, so it is
 * what n's input names more often than not, and one comparison costs less than the hash
 * lookup's cache misses at a million nodes. NULL when there is none. */
static gm_node *given_before(const gm_node *n)
{
    const gm_graph *g = n->graph;
    size_t at = n->given_pos;
    return at > 0 && at < g->nodes.n && g->nodes.v[at] == n ? g->nodes.v[at - 1] : NULL;
}

static gm_status resolve_inputs(gm_node *n, gm_error *err)
{
    gm_model *m = n->graph->model;
    gm_node *before = given_before(n);
    for (uint32_t i = 0; i < n->n_in; i++) {
        gm_in_slot *s = &n->in[i];
        if (!s->src_name) continue;
        gm_node *p = before && !strcmp(before->name, s->src_name) ? before : gm_strmap_get(&m->node_by_name, s->src_name);
        if (!p) {
            return gm_error_set(err, GM_ERR_INPUT, PLACE_FMT ": input %u names unknown node '%s'", PLACE(n), i,
                                s->src_name);
        }
        if (p->graph != n->graph) {
            return gm_error_set(err, GM_ERR_INPUT,
                                PLACE_FMT ": input %u names node '%s' of graph '%s'; data edges stay in one graph "
                                "(a subgraph reads its parent's inputs through a Data with _parent_node_index)",
                                PLACE(n), i, p->name, p->graph->name);
        }
        if (s->src_index < 0 || (uint32_t)s->src_index >= p->n_out) {
            return gm_error_set(err, GM_ERR_INPUT,
                                PLACE_FMT ": input %u '%s:%d': output index out of range (node '%s' has %u output%s)",
                                PLACE(n), i, p->name, s->src_index, p->name, p->n_out, p->n_out == 1 ? "" : "s");
        }
        if (gm_out_insert_use(&p->out[s->src_index], n, (int32_t)i) != GM_OK) return oom(m, err);
        s->src = p;
        gm_free(s->src_name);
        s->src_name = NULL;
    }
    return GM_OK;
}

static gm_status resolve_control_inputs(gm_node *n, gm_error *err)
{
    gm_model *m = n->graph->model;
    for (uint32_t i = 0; i < n->n_ctrl_in_names; i++) {
        gm_node *p = gm_strmap_get(&m->node_by_name, n->ctrl_in_names[i]);
        if (!p) {
            return gm_error_set(err, GM_ERR_INPUT, PLACE_FMT ": control input %u names unknown node '%s'", PLACE(n), i,
                                n->ctrl_in_names[i]);
        }
        if (p->graph != n->graph) {
            return gm_error_set(err, GM_ERR_INPUT, PLACE_FMT ": control input '%s' is in graph '%s'; edges stay in one graph",
                                PLACE(n), p->name, p->graph->name);
        }
        if (gm_node_vec_contains(&n->ctrl_in, p)) continue; /* a repeated control edge says nothing new */
        if (gm_node_vec_push(&n->ctrl_in, p) != GM_OK || gm_node_vec_push(&p->ctrl_out, n) != GM_OK) return oom(m, err);
    }
    for (uint32_t i = 0; i < n->n_ctrl_in_names; i++) gm_free(n->ctrl_in_names[i]);
    gm_free(n->ctrl_in_names);
    n->ctrl_in_names = NULL;
    n->n_ctrl_in_names = 0;
    return GM_OK;
}

/* ---- node contents ---- */

/* what/idx name the desc an attribute list belongs to ("output", 0); what NULL = the node. */
static gm_status check_attr_kinds(const gm_node *n, const gm_attr *list, const char *what, uint32_t idx,
                                  gm_error *err)
{
    for (const gm_attr *a = list; a; a = a->next) {
        gm_attr_kind want;
        if (!gm_attr_known_kind(a->name, &want) || want == a->kind) continue;
        char where[48] = "";
        if (what) snprintf(where, sizeof where, "%s %u: ", what, idx);
        return gm_error_set(err, GM_ERR_INPUT, PLACE_FMT ": %sattribute '%s' has the wrong kind: expected %s, found %s",
                            PLACE(n), where, a->name, gm_attr_kind_name(want), gm_attr_kind_name(a->kind));
    }
    return GM_OK;
}

static gm_status check_desc(const gm_node *n, const gm_tensor_desc *d, const char *what, uint32_t idx, gm_error *err)
{
    int64_t bad = d->ndims > 0 ? gm_shape_bad_dim(d->dims, (size_t)d->ndims) : -1;
    if (bad >= 0) {
        /* The readers say so with their own places; this catches models built through the API. */
        return gm_error_set(err, GM_ERR_INPUT, PLACE_FMT ": %s %u: shape dim %lld is %lld (" GM_SHAPE_DIM_RULE ")",
                            PLACE(n), what, idx, (long long)bad, (long long)d->dims[bad]);
    }
    if (d->size_given && d->size < 0) {
        return gm_error_set(err, GM_ERR_INPUT, PLACE_FMT ": %s %u: negative size %lld", PLACE(n), what, idx,
                            (long long)d->size);
    }
    if (gm_desc_size(d) == -2) {
        return gm_error_set(err, GM_ERR_INPUT, PLACE_FMT ": %s %u: the byte size of shape overflows 64 bits (size overflow)",
                            PLACE(n), what, idx);
    }
    if ((unsigned)d->mem_type >= GM_MEM_COUNT) {
        return gm_error_set(err, GM_ERR_INPUT, PLACE_FMT ": %s %u: unknown memory type %d", PLACE(n), what, idx,
                            (int)d->mem_type);
    }
    return check_attr_kinds(n, d->attrs, what, idx, err);
}

/* `_gm_carried_outputs` (op_table.h, gm_subgraph_output_is_stacked): outputs from it on are
 * stacked, which only a loop that does not pass its inputs through can mean. */
static gm_status check_carried_outputs(const gm_node *n, gm_error *err)
{
    const gm_attr *a = gm_attr_find(n->attrs, "_gm_carried_outputs");
    if (!a) return GM_OK; /* its kind is checked with the other attributes */
    if (gm_node_ctrl_kind(n) != GM_CTRL_WHILE || (n->op->flags & GM_OP_PASS_THROUGH)) {
        return gm_error_set(err, GM_ERR_INPUT,
                            PLACE_FMT ": _gm_carried_outputs is for a loop whose scan outputs are stacked (Loop, Scan), "
                            "not a %s", PLACE(n), n->type);
    }
    if (a->u.i < 0 || a->u.i > (int64_t)n->n_out) {
        return gm_error_set(err, GM_ERR_INPUT, PLACE_FMT ": _gm_carried_outputs %lld is out of range: '%s' has %u output%s",
                            PLACE(n), (long long)a->u.i, n->name, n->n_out, n->n_out == 1 ? "" : "s");
    }
    return GM_OK;
}

/* Subgraph Data nodes read their parent's input _parent_node_index; subgraph NetOutput
 * inputs write the parent's output _parent_node_index. */
static gm_status check_parent_indices(const gm_node *n, gm_error *err)
{
    const gm_node *parent = n->graph->parent;
    if (!parent) return GM_OK;
    if ((n->op->flags & GM_OP_DATA) && !(n->op->flags & GM_OP_VAR_LIKE)) {
        const gm_attr *a = gm_attr_find(n->attrs, "_parent_node_index");
        if (!a) {
            return gm_error_set(err, GM_ERR_INPUT,
                                PLACE_FMT ": a Data node in a subgraph needs attribute _parent_node_index (which input "
                                "of parent '%s' it reads)", PLACE(n), parent->name);
        }
        if (a->u.i < 0 || a->u.i >= (int64_t)parent->n_in) {
            return gm_error_set(err, GM_ERR_INPUT,
                                PLACE_FMT ": _parent_node_index %lld is out of range: parent '%s' has %u input%s",
                                PLACE(n), (long long)a->u.i, parent->name, parent->n_in, parent->n_in == 1 ? "" : "s");
        }
    }
    if (n->op->flags & GM_OP_NETOUTPUT) {
        for (uint32_t i = 0; i < n->n_in; i++) {
            const gm_attr *a = gm_attr_find(n->in_desc[i].attrs, "_parent_node_index");
            if (a && (a->u.i < 0 || a->u.i >= (int64_t)parent->n_out)) {
                return gm_error_set(err, GM_ERR_INPUT,
                                    PLACE_FMT ": input %u: _parent_node_index %lld is out of range: parent '%s' has %u "
                                    "output%s", PLACE(n), i, (long long)a->u.i, parent->name, parent->n_out,
                                    parent->n_out == 1 ? "" : "s");
            }
        }
    }
    return GM_OK;
}

/* The bytes a desc says it holds, or -1 when it does not say: no size and no dtype or shape to
 * derive one from, or a dim unknown (-1, [-2]) — such sizes are not judged. */
static int64_t judged_size(const gm_tensor_desc *d)
{
    if (!d->size_given && (d->ndims < 0 || d->dtype == GM_DT_UNDEFINED)) return -1;
    int64_t s = gm_desc_size(d);
    return s >= 0 ? s : -1;
}

/* A ref pair (an input and an output with the same IR name: GE's MarkRefRelations makes it
 * `reference` whatever the attribute says) is one buffer, the referent's. An output larger
 * than the tensor it refers to would be written past that buffer's end (a 16 KiB update of a
 * 2 KiB Variable). The reference records no such check in GE (its symbol simply grows to the
 * larger size); graphmem differs on purpose and refuses the model as bad input, naming both
 * anchors. Only LARGER is wrong: views (reuse_input, Reshape, PhonySplit) may be smaller or
 * shaped differently, and they are not name pairs, so they are not judged here. The referent
 * is the producer's output (what is actually referred to); an unconnected input has no buffer
 * to overrun. */
static gm_status check_ref_sizes(const gm_node *n, gm_error *err)
{
    for (uint32_t k = 0; k < n->n_out; k++) {
        int32_t i = gm_node_input_named_as_output(n, k);
        if (i < 0 || !n->in[i].src) continue;
        const gm_node *p = n->in[i].src;
        int64_t out_size = judged_size(&n->out[k].desc);
        int64_t ref_size = judged_size(&p->out[n->in[i].src_index].desc);
        if (out_size < 0 || ref_size < 0 || out_size <= ref_size) continue;
        return gm_error_set(err, GM_ERR_INPUT,
                            PLACE_FMT ": ref output %s_out_%u (%lld bytes) is larger than its referent %s_in_%d (%lld "
                            "bytes, output %d of '%s'); the IR name '%s' pairs them, and a ref writes its input's buffer",
                            PLACE(n), n->name, k, (long long)out_size, n->name, i, (long long)ref_size,
                            n->in[i].src_index, p->name, gm_node_output_name(n, k));
    }
    return GM_OK;
}

static gm_status check_node(const gm_node *n, gm_error *err)
{
    gm_status st;
    if (n->stream < -1) {
        return gm_error_set(err, GM_ERR_INPUT, PLACE_FMT ": stream %lld (streams are >= 0, -1 unassigned)", PLACE(n),
                            (long long)n->stream);
    }
    if ((st = check_attr_kinds(n, n->attrs, NULL, 0, err)) != GM_OK) return st;
    for (uint32_t i = 0; i < n->n_in; i++) {
        if ((st = check_desc(n, &n->in_desc[i], "input", i, err)) != GM_OK) return st;
    }
    for (uint32_t k = 0; k < n->n_out; k++) {
        const gm_tensor_desc *d = &n->out[k].desc;
        if ((st = check_desc(n, d, "output", k, err)) != GM_OK) return st;
        if (d->reuse_input && (d->reuse_input_index < 0 || d->reuse_input_index >= (int64_t)n->n_in)) {
            return gm_error_set(err, GM_ERR_INPUT,
                                PLACE_FMT ": output %u: reuse_input_index %lld is out of range (%u input%s)", PLACE(n),
                                k, (long long)d->reuse_input_index, n->n_in, n->n_in == 1 ? "" : "s");
        }
    }
    if ((st = check_ref_sizes(n, err)) != GM_OK) return st;
    if ((st = check_carried_outputs(n, err)) != GM_OK) return st;
    return check_parent_indices(n, err);
}

static gm_status check_graph_attrs(const gm_model *m, const gm_graph *g, gm_error *err)
{
    for (const gm_attr *a = g->attrs; a; a = a->next) {
        gm_attr_kind want;
        if (gm_attr_known_kind(a->name, &want) && want != a->kind) {
            return gm_error_set(err, GM_ERR_INPUT, "%s: graph '%s': attribute '%s' has the wrong kind: expected %s, found %s",
                                m->source, g->name, a->name, gm_attr_kind_name(want), gm_attr_kind_name(a->kind));
        }
    }
    return GM_OK;
}

gm_status gm_model_finalize(gm_model *m, gm_error *err)
{
    gm_status st;
    if (m->n_graphs == 0) return gm_error_set(err, GM_ERR_INPUT, "%s: the model has no graphs", m->source);
    if (!m->resolved) {
        if ((st = resolve_parents(m, err)) != GM_OK) return st;
        for (size_t gi = 0; gi < m->n_graphs; gi++) {
            gm_graph *g = m->graphs[gi];
            for (uint32_t i = 0; i < g->nodes.n; i++) {
                gm_node *n = g->nodes.v[i];
                if ((st = resolve_subgraphs(n, err)) != GM_OK) return st;
                if ((st = resolve_inputs(n, err)) != GM_OK) return st;
                if ((st = resolve_control_inputs(n, err)) != GM_OK) return st;
            }
        }
        if ((st = check_nesting(m, err)) != GM_OK) return st;
        m->resolved = true;
    }
    for (size_t gi = 0; gi < m->n_graphs; gi++) {
        const gm_graph *g = m->graphs[gi];
        if ((st = check_graph_attrs(m, g, err)) != GM_OK) return st;
        for (uint32_t i = 0; i < g->nodes.n; i++) {
            if ((st = check_node(g->nodes.v[i], err)) != GM_OK) return st;
        }
    }
    return gm_model_toposort(m, err);
}
