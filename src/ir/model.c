/*
 * model.c — building and reading the IR: models, graphs, nodes, their slots and accessors.
 * Resolution of names, validation and the topological order are in finalize.c and topo.c;
 * edits after finalize are in edit.c.
 */
#include <stdio.h>
#include <string.h>

#include "ir/ir.h"
#include "ops/op_table.h"
#include "util/alloc.h"

/* ---- small vectors ---- */

gm_status gm_node_vec_push(gm_node_vec *v, gm_node *n)
{
    size_t cap = v->cap;
    if (gm_grow((void **)&v->v, sizeof *v->v, (size_t)v->n + 1, &cap)) return GM_ERR_NOMEM;
    v->cap = (uint32_t)cap;
    v->v[v->n++] = n;
    return GM_OK;
}

bool gm_node_vec_remove(gm_node_vec *v, const gm_node *n)
{
    for (uint32_t i = 0; i < v->n; i++) {
        if (v->v[i] == n) {
            memmove(&v->v[i], &v->v[i + 1], (v->n - i - 1) * sizeof *v->v);
            v->n--;
            return true;
        }
    }
    return false;
}

bool gm_node_vec_contains(const gm_node_vec *v, const gm_node *n)
{
    for (uint32_t i = 0; i < v->n; i++) {
        if (v->v[i] == n) return true;
    }
    return false;
}

void gm_node_vec_free(gm_node_vec *v)
{
    gm_free(v->v);
    memset(v, 0, sizeof *v);
}

gm_status gm_out_add_use(gm_out_slot *o, gm_node *node, int32_t index)
{
    if (o->n_uses == o->cap_uses) {
        /* Most outputs have one or two consumers: grow 1, 2, 4 ... */
        uint32_t cap = o->cap_uses ? o->cap_uses * 2 : 1;
        gm_use *u = gm_realloc(o->uses, (size_t)cap * sizeof *u);
        if (!u) return GM_ERR_NOMEM;
        o->uses = u;
        o->cap_uses = cap;
    }
    o->uses[o->n_uses++] = (gm_use){node, index};
    return GM_OK;
}

gm_status gm_out_insert_use(gm_out_slot *o, gm_node *node, int32_t index)
{
    /* uses stand in (position, input) order; one named before its producer goes before the
     * uses the reader resolved already, which all come after the producer */
    uint32_t j = o->n_uses;
    while (j > 0 && (o->uses[j - 1].node->given_pos > node->given_pos ||
                     (o->uses[j - 1].node == node && o->uses[j - 1].index > index)))
        j--;
    gm_status st = gm_out_add_use(o, node, index);
    if (st != GM_OK || j == o->n_uses - 1) return st;
    memmove(&o->uses[j + 1], &o->uses[j], (o->n_uses - 1 - j) * sizeof *o->uses);
    o->uses[j] = (gm_use){node, index};
    return GM_OK;
}

bool gm_out_remove_use(gm_out_slot *o, const gm_node *node, int32_t index)
{
    for (uint32_t i = 0; i < o->n_uses; i++) {
        if (o->uses[i].node == node && o->uses[i].index == index) {
            memmove(&o->uses[i], &o->uses[i + 1], (o->n_uses - i - 1) * sizeof *o->uses);
            o->n_uses--;
            return true;
        }
    }
    return false;
}

/* ---- model ---- */

gm_model *gm_model_new(const char *name)
{
    gm_model *m = gm_calloc(1, sizeof *m);
    if (!m) return NULL;
    m->name = gm_strdup(name ? name : "");
    m->source = gm_strdup("");
    if (!m->name || !m->source) {
        gm_model_free(m);
        return NULL;
    }
    return m;
}

void gm_node_free(gm_node *n)
{
    if (!n) return;
    for (uint32_t i = 0; i < n->n_in; i++) {
        gm_free(n->in[i].src_name);
        if (n->in_desc_owned) gm_desc_fini(&n->in_desc[i]);
        gm_free(n->in_name[i]);
    }
    gm_free(n->in); /* one block with in_name */
    if (n->in_desc_owned) gm_free(n->in_desc);
    for (uint32_t k = 0; k < n->n_out; k++) {
        gm_desc_fini(&n->out[k].desc);
        gm_free(n->out[k].name);
        gm_free(n->out[k].uses);
    }
    gm_free(n->out);
    gm_node_vec_free(&n->ctrl_in);
    gm_node_vec_free(&n->ctrl_out);
    for (uint32_t i = 0; i < n->n_ctrl_in_names; i++) gm_free(n->ctrl_in_names[i]);
    gm_free(n->ctrl_in_names);
    if (n->sub_names) {
        for (uint32_t i = 0; i < n->n_sub; i++) gm_free(n->sub_names[i]);
    }
    gm_free(n->sub_names);
    gm_free(n->sub);
    gm_attr_list_free(n->attrs);
    gm_free(n); /* the name is in the same block */
}

static void graph_free(gm_graph *g)
{
    for (uint32_t i = 0; i < g->nodes.n; i++) gm_node_free(g->nodes.v[i]);
    gm_node_vec_free(&g->nodes);
    gm_attr_list_free(g->attrs);
    gm_free(g->parent_name);
    gm_free(g->name);
    gm_free(g);
}

void gm_model_free(gm_model *m)
{
    if (!m) return;
    for (size_t i = 0; i < m->n_graphs; i++) graph_free(m->graphs[i]);
    gm_free(m->graphs);
    for (size_t i = 0; i < m->n_options; i++) {
        gm_free(m->options[i].key);
        gm_free(m->options[i].value);
    }
    gm_free(m->options);
    gm_strmap_free(&m->node_by_name);
    gm_strmap_free(&m->graph_by_name);
    for (size_t i = 0; i < m->types.cap; i++) {
        const gm_strmap_entry *e = &m->types.slots[i];
        if (e->key) gm_free(e->value); /* types are never deleted: no tombstones */
    }
    gm_strmap_free(&m->types);
    gm_node_vec_free(&m->order);
    gm_free(m->name);
    gm_free(m->source);
    gm_free(m->unfixed_dims);
    gm_free(m->fixed_dims);
    gm_free(m);
}

gm_status gm_model_reserve_nodes(gm_model *m, size_t nodes)
{
    return gm_strmap_reserve(&m->node_by_name, nodes) ? GM_ERR_NOMEM : GM_OK;
}

const char *gm_model_name(const gm_model *m) { return m->name; }
const char *gm_model_source(const gm_model *m) { return m->source; }

gm_status gm_model_set_source(gm_model *m, const char *path)
{
    char *s = gm_strdup(path ? path : "");
    if (!s) return GM_ERR_NOMEM;
    gm_free(m->source);
    m->source = s;
    return GM_OK;
}

const char *gm_model_unfixed_dims(const gm_model *m) { return m->unfixed_dims; }

gm_status gm_model_set_unfixed_dims(gm_model *m, const char *names)
{
    char *s = names && *names ? gm_strdup(names) : NULL;
    if (names && *names && !s) return GM_ERR_NOMEM;
    gm_free(m->unfixed_dims);
    m->unfixed_dims = s;
    return GM_OK;
}

const char *const *gm_model_fixed_dims(const gm_model *m) { return (const char *const *)m->fixed_dims; }

gm_status gm_model_set_fixed_dims(gm_model *m, const char *const *dims)
{
    size_t n = 0;
    while (dims && dims[n]) n++;
    char **v = n ? gm_strv_dup(dims, n) : NULL;
    if (n && !v) return GM_ERR_NOMEM;
    gm_free(m->fixed_dims);
    m->fixed_dims = v;
    return GM_OK;
}

gm_status gm_model_set_option(gm_model *m, const char *key, const char *value)
{
    char *v = gm_strdup(value);
    if (!v) return GM_ERR_NOMEM;
    for (size_t i = 0; i < m->n_options; i++) {
        if (strcmp(m->options[i].key, key) == 0) {
            gm_free(m->options[i].value);
            m->options[i].value = v;
            return GM_OK;
        }
    }
    char *k = gm_strdup(key);
    if (!k || gm_grow((void **)&m->options, sizeof *m->options, m->n_options + 1, &m->cap_options)) {
        gm_free(k);
        gm_free(v);
        return GM_ERR_NOMEM;
    }
    m->options[m->n_options++] = (gm_option){k, v};
    return GM_OK;
}

const char *gm_model_option(const gm_model *m, const char *key)
{
    for (size_t i = 0; i < m->n_options; i++) {
        if (strcmp(m->options[i].key, key) == 0) return m->options[i].value;
    }
    return NULL;
}

size_t gm_model_option_count(const gm_model *m) { return m->n_options; }

void gm_model_option_at(const gm_model *m, size_t i, const char **key, const char **value)
{
    *key = m->options[i].key;
    *value = m->options[i].value;
}

size_t gm_model_graph_count(const gm_model *m) { return m->n_graphs; }
gm_graph *gm_model_graph(const gm_model *m, size_t i) { return i < m->n_graphs ? m->graphs[i] : NULL; }
gm_graph *gm_model_root(const gm_model *m) { return m->n_graphs ? m->graphs[0] : NULL; }
gm_graph *gm_model_find_graph(const gm_model *m, const char *name) { return gm_strmap_get(&m->graph_by_name, name); }
gm_node *gm_model_find_node(const gm_model *m, const char *name) { return gm_strmap_get(&m->node_by_name, name); }
size_t gm_model_node_count(const gm_model *m) { return m->order.n; }
gm_node *gm_model_node_at(const gm_model *m, size_t i) { return i < m->order.n ? m->order.v[i] : NULL; }

/* ---- graph ---- */

gm_graph *gm_model_add_graph(gm_model *m, const char *name, const char *parent_node, gm_error *err)
{
    const char *src = m->source;
    if (!name || !*name) {
        gm_error_set(err, GM_ERR_INPUT, "%s: graph %zu has an empty name", src, m->n_graphs);
        return NULL;
    }
    if (gm_strmap_get(&m->graph_by_name, name)) {
        gm_error_set(err, GM_ERR_INPUT, "%s: duplicate graph name '%s'", src, name);
        return NULL;
    }
    if (m->n_graphs == 0 && parent_node) {
        gm_error_set(err, GM_ERR_INPUT,
                     "%s: graph '%s': the first graph is the root and cannot have a parent ('%s')",
                     src, name, parent_node);
        return NULL;
    }
    if (m->n_graphs > 0 && (!parent_node || !*parent_node)) {
        gm_error_set(err, GM_ERR_INPUT,
                     "%s: graph '%s': subgraph without a parent (every graph after the root "
                     "names its parent node)", src, name);
        return NULL;
    }
    gm_graph *g = gm_calloc(1, sizeof *g);
    if (!g || !(g->name = gm_strdup(name)) || (parent_node && !(g->parent_name = gm_strdup(parent_node))) ||
        gm_grow((void **)&m->graphs, sizeof *m->graphs, m->n_graphs + 1, &m->cap_graphs) ||
        gm_strmap_put(&m->graph_by_name, g->name, g)) {
        if (g) {
            gm_free(g->name);
            gm_free(g->parent_name);
        }
        gm_free(g);
        gm_error_set(err, GM_ERR_NOMEM, "%s: out of memory", src);
        return NULL;
    }
    g->model = m;
    g->known_shape = -1;
    m->graphs[m->n_graphs++] = g;
    m->resolved = false;
    return g;
}

const char *gm_graph_name(const gm_graph *g) { return g->name; }
gm_model *gm_graph_model(const gm_graph *g) { return g->model; }
gm_node *gm_graph_parent(const gm_graph *g) { return g->parent; }
bool gm_graph_is_root(const gm_graph *g) { return g->model->n_graphs && g->model->graphs[0] == g; }
size_t gm_graph_node_count(const gm_graph *g) { return g->nodes.n; }
gm_node *gm_graph_node(const gm_graph *g, size_t i) { return i < g->nodes.n ? g->nodes.v[i] : NULL; }
gm_attr **gm_graph_attrs(gm_graph *g) { return &g->attrs; }

/* ---- node ---- */

/* The model's one copy of an op type string. */
static const char *intern_type(gm_model *m, const char *type)
{
    char *t = gm_strmap_get(&m->types, type);
    if (t) return t;
    if (!(t = gm_strdup(type))) return NULL;
    if (gm_strmap_put(&m->types, t, t)) {
        gm_free(t);
        return NULL;
    }
    return t;
}

/* A node in no graph yet, its type not interned (gm_ir_node_new_detached). */
gm_node *gm_ir_node_new_detached(const char *name, const char *type)
{
    /* The name lives right after the node: one allocation (nodes are never renamed). */
    size_t len = strlen(name) + 1;
    gm_node *n = gm_calloc(1, sizeof *n + len);
    if (!n) return NULL;
    n->name = memcpy((char *)(n + 1), name, len);
    n->op = gm_op_lookup(type);
    n->topo_id = -1;
    return n;
}

/* The order key of a node placed beside `near` (see gm_ir_node_create). */
static int64_t place_key(gm_graph *g, const gm_node *near, int side)
{
    int64_t key;
    if (near) key = side < 0 ? near->order_key - 1 : near->order_key + 1;
    else if (g->nodes.n == 0) key = 0;
    else key = side < 0 ? g->key_lo - GM_ORDER_KEY_GAP : g->key_hi + GM_ORDER_KEY_GAP;
    if (g->nodes.n == 0 || key < g->key_lo) g->key_lo = key;
    if (g->nodes.n == 0 || key > g->key_hi) g->key_hi = key;
    return key;
}

/* What gm_graph_add_node refuses before making the node: an empty name or type, a name taken.
 * False with the error set. */
static bool node_allowed(gm_graph *g, const char *name, const char *type, gm_error *err)
{
    gm_model *m = g->model;
    if (!name || !*name) {
        gm_error_set(err, GM_ERR_INPUT, "%s: graph '%s': node %u has an empty name", m->source, g->name,
                     g->nodes.n);
        return false;
    }
    if (!type || !*type) {
        gm_error_set(err, GM_ERR_INPUT, "%s: graph '%s': node '%s' has an empty type", m->source, g->name, name);
        return false;
    }
    gm_node *prev = gm_strmap_get(&m->node_by_name, name);
    if (prev) {
        gm_error_set(err, GM_ERR_INPUT, "%s: graph '%s': duplicate node name '%s' (also in graph '%s')",
                     m->source, g->name, name, prev->graph->name);
        return false;
    }
    return true;
}

/* n (detached, or NULL when making it ran out of memory) into g beside `near`: its type
 * interned, listed, named in the model. n is freed on failure. */
static gm_node *place_node(gm_graph *g, gm_node *n, const char *type, const gm_node *near, int side, gm_error *err)
{
    gm_model *m = g->model;
    if (n) {
        n->graph = g;
        if (!(n->type = intern_type(m, type))) {
            gm_node_free(n);
            n = NULL;
        }
    }
    int64_t key = place_key(g, near, side);
    if (!n || gm_node_vec_push(&g->nodes, n) != GM_OK) {
        gm_node_free(n);
        gm_error_set(err, GM_ERR_NOMEM, "%s: out of memory", m->source);
        return NULL;
    }
    if (gm_strmap_put(&m->node_by_name, n->name, n)) {
        g->nodes.n--;
        gm_node_free(n);
        gm_error_set(err, GM_ERR_NOMEM, "%s: out of memory", m->source);
        return NULL;
    }
    n->order_key = key;
    n->given_pos = g->nodes.n - 1;
    gm_model_touch(m);
    return n;
}

gm_node *gm_ir_node_create(gm_graph *g, const char *name, const char *type, const gm_node *near, int side,
                           gm_error *err)
{
    if (!node_allowed(g, name, type, err)) return NULL;
    return place_node(g, gm_ir_node_new_detached(name, type), type, near, side, err);
}

gm_node *gm_ir_node_attach(gm_graph *g, gm_node *n, const char *type, gm_error *err)
{
    if (!node_allowed(g, n->name, type, err)) {
        gm_node_free(n);
        return NULL;
    }
    return place_node(g, n, type, NULL, +1, err);
}

gm_node *gm_graph_add_node(gm_graph *g, const char *name, const char *type, gm_error *err)
{
    return gm_ir_node_create(g, name, type, NULL, +1, err);
}

const char *gm_node_name(const gm_node *n) { return n->name; }
const char *gm_node_type(const gm_node *n) { return n->type; }
gm_graph *gm_node_graph(const gm_node *n) { return n->graph; }
int64_t gm_node_stream(const gm_node *n) { return n->stream; }
void gm_node_set_stream(gm_node *n, int64_t stream) { n->stream = stream; }
int64_t gm_node_topo_id(const gm_node *n) { return n->topo_id; }

/* Appends an input slot (unconnected, default desc). */
/* Inputs without a desc of their own (nearly all) share these defaults: a node's in_desc
 * points here until something writes one (gm_node_input_desc). Read-only storage, so a write
 * that bypasses the accessor faults instead of changing every node's default. */
#define GM_SHARED_IN_DESCS 32
#define D1 {.ndims = -1}
#define D8 D1, D1, D1, D1, D1, D1, D1, D1
static const gm_tensor_desc k_default_in_descs[GM_SHARED_IN_DESCS] = {D8, D8, D8, D8};
#undef D8
#undef D1

/* The per-input slots and IR names live in one block, slots first. */
static gm_status grow_inputs(gm_node *n, size_t cap)
{
    char *b = gm_malloc(cap * (sizeof(gm_in_slot) + sizeof(char *)));
    if (!b) return GM_ERR_NOMEM;
    gm_in_slot *in = (gm_in_slot *)b;
    char **nm = (char **)(b + cap * sizeof(gm_in_slot));
    if (n->n_in) {
        memcpy(in, n->in, n->n_in * sizeof *in);
        memcpy(nm, n->in_name, n->n_in * sizeof *nm);
    }
    if (n->in_desc_owned) {
        gm_tensor_desc *d = gm_realloc(n->in_desc, cap * sizeof *d);
        if (!d) {
            gm_free(b);
            return GM_ERR_NOMEM;
        }
        n->in_desc = d;
    }
    gm_free(n->in);
    n->in = in;
    n->in_name = nm;
    n->cap_in = (uint32_t)cap;
    return GM_OK;
}

/* Gives n descs of its own (copies of the defaults), so one can be written. */
static gm_status own_in_descs(gm_node *n)
{
    if (n->in_desc_owned) return GM_OK;
    size_t cap = n->cap_in ? n->cap_in : 1;
    gm_tensor_desc *d = gm_malloc(cap * sizeof *d);
    if (!d) return GM_ERR_NOMEM;
    for (size_t i = 0; i < cap; i++) gm_desc_init(&d[i]);
    n->in_desc = d;
    n->in_desc_owned = true;
    return GM_OK;
}

gm_status gm_ir_node_push_input(gm_node *n)
{
    if (n->n_in == n->cap_in && grow_inputs(n, n->cap_in ? (size_t)n->cap_in * 2 : 1) != GM_OK) return GM_ERR_NOMEM;
    if (!n->in_desc_owned && n->n_in + 1 > GM_SHARED_IN_DESCS && own_in_descs(n) != GM_OK) return GM_ERR_NOMEM;
    uint32_t i = n->n_in++;
    n->in[i] = (gm_in_slot){NULL, 0, NULL};
    if (n->in_desc_owned) gm_desc_init(&n->in_desc[i]);
    else n->in_desc = (gm_tensor_desc *)k_default_in_descs;
    n->in_name[i] = NULL;
    return GM_OK;
}

gm_status gm_node_add_input_by_name(gm_node *n, const char *src, int32_t src_index)
{
    char *s = NULL;
    if (src && *src && !(s = gm_strdup(src))) return GM_ERR_NOMEM;
    if (gm_ir_node_push_input(n) != GM_OK) {
        gm_free(s);
        return GM_ERR_NOMEM;
    }
    n->in[n->n_in - 1].src_name = s;
    n->in[n->n_in - 1].src_index = s ? src_index : 0;
    n->graph->model->resolved = false;
    return GM_OK;
}

gm_status gm_node_add_input_early(gm_node *n, const char *src, int32_t src_index)
{
    const gm_graph *g = n->graph;
    gm_node *p = NULL;
    if (src && *src) {
        /* the node given just before n: a chain in order, and no hash lookup */
        gm_node *before = g->nodes.n >= 2 && g->nodes.v[g->nodes.n - 1] == n ? g->nodes.v[g->nodes.n - 2] : NULL;
        p = before && !strcmp(before->name, src) ? before : gm_strmap_get(&g->model->node_by_name, src);
    }
    /* Anything finalize would question (an unknown node, another graph, an index out of range)
     * and n itself (whose outputs are not read yet) keep the name: finalize tells it, in order. */
    if (!p || p == n || p->graph != g || src_index < 0 || (uint32_t)src_index >= p->n_out)
        return gm_node_add_input_by_name(n, src, src_index);
    if (gm_ir_node_push_input(n) != GM_OK) return GM_ERR_NOMEM;
    uint32_t i = n->n_in - 1;
    if (gm_out_add_use(&p->out[src_index], n, (int32_t)i) != GM_OK) {
        n->n_in--;
        return GM_ERR_NOMEM;
    }
    n->in[i].src = p;
    n->in[i].src_index = src_index;
    return GM_OK;
}

static gm_status push_name(char ***v, uint32_t *n, const char *name)
{
    char *s = gm_strdup(name);
    char **nv = s ? gm_realloc(*v, ((size_t)*n + 1) * sizeof **v) : NULL;
    if (!nv) {
        gm_free(s);
        return GM_ERR_NOMEM;
    }
    *v = nv;
    nv[(*n)++] = s;
    return GM_OK;
}

gm_status gm_node_add_control_inputs_early(gm_node *n, const char *const *src, size_t count)
{
    gm_model *m = n->graph->model;
    gm_node *p[GM_CTRL_EARLY_MAX];
    bool early = !m->ctrl_deferred && count <= GM_CTRL_EARLY_MAX;
    for (size_t i = 0; early && i < count; i++) {
        p[i] = src[i] && *src[i] ? gm_strmap_get(&m->node_by_name, src[i]) : NULL;
        early = p[i] && p[i] != n && p[i]->graph == n->graph;
    }
    if (!early) { /* count > 0 here: an empty list is connected at once */
        m->ctrl_deferred = true;
        for (size_t i = 0; i < count; i++)
            if (gm_node_add_control_input_by_name(n, src[i]) != GM_OK) return GM_ERR_NOMEM;
        return GM_OK;
    }
    for (size_t i = 0; i < count; i++) {
        if (gm_node_vec_contains(&n->ctrl_in, p[i])) continue; /* as finalize: a repeat says nothing new */
        if (gm_node_vec_push(&n->ctrl_in, p[i]) != GM_OK || gm_node_vec_push(&p[i]->ctrl_out, n) != GM_OK)
            return GM_ERR_NOMEM;
    }
    return GM_OK;
}

gm_status gm_node_add_control_input_by_name(gm_node *n, const char *src)
{
    n->graph->model->resolved = false;
    return push_name(&n->ctrl_in_names, &n->n_ctrl_in_names, src);
}

gm_status gm_node_add_subgraph_by_name(gm_node *n, const char *graph_name)
{
    /* sub[] is sized with sub_names so resolution can fill it in place. */
    gm_graph **ns = gm_realloc(n->sub, ((size_t)n->n_sub + 1) * sizeof *ns);
    if (!ns) return GM_ERR_NOMEM;
    n->sub = ns;
    ns[n->n_sub] = NULL;
    uint32_t count = n->n_sub;
    gm_status st = push_name(&n->sub_names, &count, graph_name);
    if (st == GM_OK) n->n_sub = count;
    n->graph->model->resolved = false;
    return st;
}

size_t gm_node_input_count(const gm_node *n) { return n->n_in; }

gm_node *gm_node_input(const gm_node *n, size_t i, int32_t *src_index)
{
    if (i >= n->n_in) return NULL;
    if (src_index) *src_index = n->in[i].src_index;
    return n->in[i].src;
}

size_t gm_node_control_input_count(const gm_node *n) { return n->ctrl_in.n; }
gm_node *gm_node_control_input(const gm_node *n, size_t i) { return i < n->ctrl_in.n ? n->ctrl_in.v[i] : NULL; }
size_t gm_node_control_output_count(const gm_node *n) { return n->ctrl_out.n; }
gm_node *gm_node_control_output(const gm_node *n, size_t i) { return i < n->ctrl_out.n ? n->ctrl_out.v[i] : NULL; }
size_t gm_node_output_count(const gm_node *n) { return n->n_out; }
size_t gm_node_consumer_count(const gm_node *n, size_t k) { return k < n->n_out ? n->out[k].n_uses : 0; }

gm_node *gm_node_consumer(const gm_node *n, size_t k, size_t j, int32_t *dst_index)
{
    if (k >= n->n_out || j >= n->out[k].n_uses) return NULL;
    if (dst_index) *dst_index = n->out[k].uses[j].index;
    return n->out[k].uses[j].node;
}

size_t gm_node_subgraph_count(const gm_node *n) { return n->n_sub; }
gm_graph *gm_node_subgraph(const gm_node *n, size_t i) { return i < n->n_sub ? n->sub[i] : NULL; }

gm_tensor_desc *gm_node_add_output(gm_node *n)
{
    if (n->n_out == n->cap_out) {
        /* Most nodes have one output: start at one, then double. */
        size_t cap = n->cap_out ? (size_t)n->cap_out * 2 : 1;
        gm_out_slot *o = gm_realloc(n->out, cap * sizeof *o);
        if (!o) return NULL;
        n->out = o;
        n->cap_out = (uint32_t)cap;
    }
    gm_out_slot *o = &n->out[n->n_out++];
    memset(o, 0, sizeof *o);
    gm_desc_init(&o->desc);
    return &o->desc;
}

gm_tensor_desc *gm_node_output_desc(const gm_node *n, size_t k) { return k < n->n_out ? &n->out[k].desc : NULL; }
gm_tensor_desc *gm_node_input_desc(const gm_node *n, size_t i)
{
    if (i >= n->n_in) return NULL;
    /* Handing out a writable desc: the node must own its array (see ir.h). */
    if (own_in_descs((gm_node *)n) != GM_OK) return NULL;
    return &n->in_desc[i];
}

/* The i-th entry of a NULL-terminated default-name list, or NULL. */
static const char *default_name(const char *const *names, size_t i)
{
    if (!names) return NULL;
    for (size_t j = 0; names[j]; j++) {
        if (j == i) return names[j];
    }
    return NULL;
}

const char *gm_node_input_name(const gm_node *n, size_t i)
{
    if (i >= n->n_in) return NULL;
    return n->in_name[i] ? n->in_name[i] : default_name(n->op->input_names, i);
}

const char *gm_node_output_name(const gm_node *n, size_t k)
{
    if (k >= n->n_out) return NULL;
    return n->out[k].name ? n->out[k].name : default_name(n->op->output_names, k);
}

int32_t gm_node_input_named_as_output(const gm_node *n, uint32_t out)
{
    const char *oname = gm_node_output_name(n, out);
    if (!oname) return -1;
    for (uint32_t i = 0; i < n->n_in; i++) {
        const char *iname = gm_node_input_name(n, i);
        if (iname && strcmp(iname, oname) == 0) return (int32_t)i;
    }
    return -1;
}

gm_status gm_node_set_input_name(gm_node *n, size_t i, const char *name)
{
    if (i >= n->n_in) return GM_ERR_INPUT;
    char *s = gm_strdup(name);
    if (!s) return GM_ERR_NOMEM;
    gm_free(n->in_name[i]);
    n->in_name[i] = s;
    return GM_OK;
}

gm_status gm_node_set_output_name(gm_node *n, size_t k, const char *name)
{
    if (k >= n->n_out) return GM_ERR_INPUT;
    char *s = gm_strdup(name);
    if (!s) return GM_ERR_NOMEM;
    gm_free(n->out[k].name);
    n->out[k].name = s;
    return GM_OK;
}

gm_attr **gm_node_attrs(gm_node *n) { return &n->attrs; }
const gm_attr *gm_node_attr_list(const gm_node *n) { return n->attrs; }

int gm_node_place(const gm_node *n, char *buf, size_t cap)
{
    return snprintf(buf, cap, "%s: graph '%s': node '%s'", n->graph->model->source, n->graph->name, n->name);
}
