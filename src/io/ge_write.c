/*
 * ge_write.c — the GE text-dump writer: the IR as a ge.proto.ModelDef (reference §8), printed
 * by pbtext in GE's text format, so that ge_read.c (and GE's loader) read it back.
 *
 * The inverse of ge_read.c's mapping: the root graph first, then the subgraphs in the model's
 * order; each graph's ops in its (topological) node order; `input` holds "src:i" per data
 * input ("" when unconnected) and then "src:-1" per control input; every input gets an
 * input_desc and every output an output_desc (dtype, shape, layout, attrs, has_out_attr when
 * the desc has attrs, size — the explicit one, else the derived one when it is known and not
 * 0, since GE's dumps carry sizes —, reuse_input / reuse_input_index, real_dim_cnt, and the
 * output's explicit IR name as the desc name); explicit input names go to input_name; the
 * reserved list-of-int node attributes _gm_input_offsets / _gm_output_offsets /
 * _gm_workspace_offsets / _gm_workspace_bytes go back to input_i / output_i / workspace /
 * workspace_bytes; a desc's memory type, when given, is the desc attribute "_gm_memory_type";
 * options are model attrs with string values; id is the node's topological id.
 *
 * What a trip through the format changes (tests/test_ge_text.c, normalize(), checks the first
 * three on real models): float attributes become 32-bit floats (AttrDef.f is a float; beyond
 * float's range, infinities), a derived size that is known and not 0 becomes explicit, an
 * explicit size of 0 becomes derived (proto3 cannot tell 0 from unset); options whose keys do
 * not start with "ge." are not read back, an empty layout string reads back as no layout, the
 * reserved offset attributes move to the end of the node's attributes (and vanish when
 * empty), and a desc attribute named "_gm_memory_type" is the memory type, not an attribute.
 *
 * The message tree is built in an arena and only read by the printer, so it borrows the IR's
 * strings and arrays instead of copying them, and is freed in one go.
 */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdalign.h>
#include <stdio.h>
#include <string.h>

#include "ge_ir.pb-c.h"
#include "graphmem/io.h"
#include "io/pbtext.h"
#include "ir/ir.h"
#include "util/alloc.h"

typedef Ge__Proto__ModelDef ModelDef;
typedef Ge__Proto__GraphDef GraphDef;
typedef Ge__Proto__OpDef OpDef;
typedef Ge__Proto__TensorDescriptor TensorDesc;
typedef Ge__Proto__AttrDef AttrDef;
typedef Ge__Proto__AttrDef__ListValue ListValue;

/* ---- arena ------------------------------------------------------------------------------- */

typedef struct ablock {
    struct ablock *next;
    size_t used, cap;
    alignas(max_align_t) unsigned char data[];
} ablock;

typedef struct gw {
    ablock *blocks;
    bool oom; /* an allocation failed: the tree is incomplete, the write fails */
} gw;

/* Zeroed memory that lives until arena_free. NULL (and w->oom) when out of memory. */
static void *aalloc(gw *w, size_t n)
{
    const size_t align = alignof(max_align_t);
    n = (n + align - 1) / align * align;
    ablock *b = w->blocks;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > 65536 ? n : 65536;
        b = gm_malloc(sizeof *b + cap);
        if (!b) {
            w->oom = true;
            return NULL;
        }
        b->next = w->blocks;
        b->used = 0;
        b->cap = cap;
        w->blocks = b;
    }
    void *p = b->data + b->used;
    b->used += n;
    memset(p, 0, n);
    return p;
}

static void arena_free(gw *w)
{
    while (w->blocks) {
        ablock *next = w->blocks->next;
        gm_free(w->blocks);
        w->blocks = next;
    }
}

static void *anew(gw *w, const ProtobufCMessageDescriptor *d)
{
    void *m = aalloc(w, d->sizeof_message);
    if (m) protobuf_c_message_init(d, m);
    return m;
}

static void *aarray(gw *w, size_t n, size_t elem) { return n ? aalloc(w, n * elem) : NULL; }

static char *aprintf(gw *w, const char *name, const char *suffix)
{
    size_t n = strlen(name) + strlen(suffix) + 1;
    char *s = aalloc(w, n);
    if (s) snprintf(s, n, "%s%s", name, suffix);
    return s;
}

/* The IR's strings are borrowed: the printer reads them and nothing frees them. */
static char *borrow(const char *s) { return (char *)(s ? s : ""); }

/* ---- attributes -------------------------------------------------------------------------- */

static TensorDesc *build_desc(gw *w, const gm_tensor_desc *d, const char *name);

/* AttrDef floats are 32-bit. A double beyond float's range rounds as IEEE 754 says (to
 * FLT_MAX up to half a unit above it, else to an infinity), done by hand because converting
 * an out-of-range value is undefined behaviour in C. */
static float to_float(double v)
{
    const double inf_from = 3.4028235677973366e38; /* 2^128 - 2^103 */
    if (fabs(v) >= inf_from) return v > 0 ? INFINITY : -INFINITY;
    if (fabs(v) > FLT_MAX) return v > 0 ? FLT_MAX : -FLT_MAX;
    return (float)v;
}

static ListValue *new_list(gw *w, Ge__Proto__AttrDef__ListValue__ListValueType vt)
{
    ListValue *l = anew(w, &ge__proto__attr_def__list_value__descriptor);
    if (l) l->val_type = vt;
    return l;
}

static void build_list(gw *w, AttrDef *v, const gm_attr *a)
{
    ListValue *l = NULL;
    size_t i;
    switch (a->kind) {
    case GM_ATTR_LIST_INT:
        if (!(l = new_list(w, GE__PROTO__ATTR_DEF__LIST_VALUE__LIST_VALUE_TYPE__VT_LIST_INT))) return;
        l->i = a->u.li.v;
        l->n_i = a->u.li.v ? a->u.li.n : 0;
        break;
    case GM_ATTR_LIST_FLOAT:
        if (!(l = new_list(w, GE__PROTO__ATTR_DEF__LIST_VALUE__LIST_VALUE_TYPE__VT_LIST_FLOAT))) return;
        if (a->u.lf.n && !(l->f = aarray(w, a->u.lf.n, sizeof *l->f))) return;
        for (i = 0; i < a->u.lf.n; i++) l->f[i] = to_float(a->u.lf.v[i]);
        l->n_f = a->u.lf.n;
        break;
    case GM_ATTR_LIST_STRING:
        if (!(l = new_list(w, GE__PROTO__ATTR_DEF__LIST_VALUE__LIST_VALUE_TYPE__VT_LIST_STRING))) return;
        if (a->u.ls.n && !(l->s = aarray(w, a->u.ls.n, sizeof *l->s))) return;
        for (i = 0; i < a->u.ls.n; i++) l->s[i] = (ProtobufCBinaryData){strlen(a->u.ls.v[i]), (uint8_t *)a->u.ls.v[i]};
        l->n_s = a->u.ls.n;
        break;
    case GM_ATTR_LIST_BOOL:
        if (!(l = new_list(w, GE__PROTO__ATTR_DEF__LIST_VALUE__LIST_VALUE_TYPE__VT_LIST_BOOL))) return;
        if (a->u.lb.n && !(l->b = aarray(w, a->u.lb.n, sizeof *l->b))) return;
        for (i = 0; i < a->u.lb.n; i++) l->b[i] = a->u.lb.v[i];
        l->n_b = a->u.lb.n;
        break;
    default: return;
    }
    v->value_case = GE__PROTO__ATTR_DEF__VALUE_LIST;
    v->list = l;
}

static void build_list_list_int(gw *w, AttrDef *v, const gm_attr *a)
{
    Ge__Proto__AttrDef__ListListInt *ll = anew(w, &ge__proto__attr_def__list_list_int__descriptor);
    if (!ll) return;
    size_t n = a->u.lli.n;
    if (n && !(ll->list_list_i = aarray(w, n, sizeof *ll->list_list_i))) return;
    for (size_t i = 0; i < n; i++) {
        Ge__Proto__AttrDef__ListListInt__ListInt *row =
            anew(w, &ge__proto__attr_def__list_list_int__list_int__descriptor);
        if (!row) return;
        row->list_i = a->u.lli.rows[i];
        row->n_list_i = a->u.lli.rows[i] ? a->u.lli.lens[i] : 0;
        ll->list_list_i[i] = row;
    }
    ll->n_list_list_i = n;
    v->value_case = GE__PROTO__ATTR_DEF__VALUE_LIST_LIST_INT;
    v->list_list_int = ll;
}

static AttrDef *build_attr(gw *w, const gm_attr *a)
{
    AttrDef *v = anew(w, &ge__proto__attr_def__descriptor);
    if (!v) return NULL;
    switch (a->kind) {
    case GM_ATTR_BOOL: v->value_case = GE__PROTO__ATTR_DEF__VALUE_B; v->b = a->u.b; break;
    case GM_ATTR_INT: v->value_case = GE__PROTO__ATTR_DEF__VALUE_I; v->i = a->u.i; break;
    case GM_ATTR_FLOAT: v->value_case = GE__PROTO__ATTR_DEF__VALUE_F; v->f = to_float(a->u.f); break;
    case GM_ATTR_STRING:
        v->value_case = GE__PROTO__ATTR_DEF__VALUE_S;
        v->s = (ProtobufCBinaryData){a->u.s.len, (uint8_t *)a->u.s.data};
        break;
    case GM_ATTR_BYTES:
        v->value_case = GE__PROTO__ATTR_DEF__VALUE_BT;
        v->bt = (ProtobufCBinaryData){a->u.s.len, (uint8_t *)a->u.s.data};
        break;
    case GM_ATTR_LIST_LIST_INT: build_list_list_int(w, v, a); break;
    case GM_ATTR_TENSOR_DESC:
        v->value_case = GE__PROTO__ATTR_DEF__VALUE_TD;
        v->td = build_desc(w, a->u.td, NULL);
        break;
    default: build_list(w, v, a); break;
    }
    return v;
}

/* One entry of a map<string, AttrDef> field: each map has its own entry type, with key =
 * field 1 and value = field 2, set through the entry's descriptor. */
static ProtobufCMessage *map_entry(gw *w, const ProtobufCMessageDescriptor *ed, const char *key, AttrDef *value)
{
    ProtobufCMessage *e = anew(w, ed);
    if (!e) return NULL;
    for (unsigned i = 0; i < ed->n_fields; i++) {
        void *slot = (char *)e + ed->fields[i].offset;
        if (ed->fields[i].id == 1) *(char **)slot = borrow(key);
        if (ed->fields[i].id == 2) *(AttrDef **)slot = value;
    }
    return e;
}

/* The attributes of list for which keep() holds (all when NULL), then one extra entry when
 * extra_key is not NULL, as an array of map entries of type ed. */
static void **build_attr_map(gw *w, const ProtobufCMessageDescriptor *ed, const gm_attr *list,
                             bool (*keep)(const gm_attr *), const char *extra_key, AttrDef *extra, size_t *n)
{
    size_t cnt = extra_key ? 1 : 0;
    for (const gm_attr *a = list; a; a = a->next) cnt += !keep || keep(a);
    *n = 0;
    void **arr = aarray(w, cnt, sizeof *arr);
    if (!arr) return NULL;
    size_t k = 0;
    for (const gm_attr *a = list; a; a = a->next) {
        if ((keep && !keep(a)) || gm_attr_is_onnx_proto(a->name)) continue; /* ONNX's protobuf bytes: ONNX's alone */
        if (!(arr[k++] = map_entry(w, ed, a->name, build_attr(w, a)))) return NULL;
    }
    if (extra_key && !(arr[k++] = map_entry(w, ed, extra_key, extra))) return NULL;
    *n = k;
    return arr;
}

/* ---- descs ------------------------------------------------------------------------------- */

static const char k_mem_type_attr[] = "_gm_memory_type";

static bool keep_desc_attr(const gm_attr *a) { return strcmp(a->name, k_mem_type_attr) != 0; }

static TensorDesc *build_desc(gw *w, const gm_tensor_desc *d, const char *name)
{
    TensorDesc *td = anew(w, &ge__proto__tensor_descriptor__descriptor);
    if (!td) return NULL;
    if (name) td->name = borrow(name);
    td->dtype = (Ge__Proto__DataType)d->dtype;
    if (d->ndims >= 0) {
        Ge__Proto__ShapeDef *sh = anew(w, &ge__proto__shape_def__descriptor);
        if (!sh) return NULL;
        sh->dim = d->dims;
        sh->n_dim = d->dims ? (size_t)d->ndims : 0;
        td->shape = sh;
        td->real_dim_cnt = d->ndims;
    }
    if (d->layout) td->layout = borrow(d->layout);
    AttrDef *mt = NULL;
    if (d->mem_type_given) {
        const char *s = gm_mem_type_name(d->mem_type);
        if (!(mt = anew(w, &ge__proto__attr_def__descriptor))) return NULL;
        mt->value_case = GE__PROTO__ATTR_DEF__VALUE_S;
        mt->s = (ProtobufCBinaryData){strlen(s), (uint8_t *)s};
    }
    td->attr = (Ge__Proto__TensorDescriptor__AttrEntry **)build_attr_map(
        w, &ge__proto__tensor_descriptor__attr_entry__descriptor, d->attrs, keep_desc_attr,
        mt ? k_mem_type_attr : NULL, mt, &td->n_attr);
    td->has_out_attr = td->n_attr > 0;
    int64_t size = d->size_given ? d->size : gm_desc_size(d);
    if (size > 0) td->size = size;
    td->reuse_input = d->reuse_input;
    td->reuse_input_index = d->reuse_input_index;
    return td;
}

/* ---- ops --------------------------------------------------------------------------------- */

/* The node attributes that are OpDef fields in GE's format. */
static const char *const k_offset_attrs[] = {"_gm_input_offsets", "_gm_output_offsets", "_gm_workspace_offsets",
                                             "_gm_workspace_bytes"};

static bool is_offset_attr(const gm_attr *a)
{
    if (a->kind != GM_ATTR_LIST_INT) return false;
    for (size_t i = 0; i < sizeof k_offset_attrs / sizeof *k_offset_attrs; i++) {
        if (strcmp(a->name, k_offset_attrs[i]) == 0) return true;
    }
    return false;
}

static bool keep_node_attr(const gm_attr *a) { return !is_offset_attr(a); }

static void offsets(const gm_node *n, size_t which, int64_t **v, size_t *count)
{
    const gm_attr *a = gm_attr_find(n->attrs, k_offset_attrs[which]);
    if (a && is_offset_attr(a) && a->u.li.v) {
        *v = a->u.li.v;
        *count = a->u.li.n;
    }
}

static void build_inputs(gw *w, OpDef *op, const gm_node *n)
{
    size_t cnt = n->n_in + n->ctrl_in.n + n->n_ctrl_in_names;
    char **in = aarray(w, cnt, sizeof *in);
    if (cnt && !in) return;
    size_t k = 0;
    char idx[24];
    for (uint32_t i = 0; i < n->n_in; i++) {
        const gm_in_slot *s = &n->in[i];
        /* Resolved edges name their producer; an unfinalized model still has the name. */
        const char *src = s->src ? s->src->name : s->src_name;
        snprintf(idx, sizeof idx, ":%" PRId32, s->src_index);
        if (!(in[k++] = src ? aprintf(w, src, idx) : borrow(""))) return;
    }
    for (uint32_t i = 0; i < n->ctrl_in.n; i++) {
        if (!(in[k++] = aprintf(w, n->ctrl_in.v[i]->name, ":-1"))) return;
    }
    for (uint32_t i = 0; i < n->n_ctrl_in_names; i++) {
        if (!(in[k++] = aprintf(w, n->ctrl_in_names[i], ":-1"))) return;
    }
    op->input = in;
    op->n_input = k;
}

static void build_descs(gw *w, OpDef *op, const gm_node *n)
{
    if (n->n_in && !(op->input_desc = aarray(w, n->n_in, sizeof *op->input_desc))) return;
    for (uint32_t i = 0; i < n->n_in; i++) {
        if (!(op->input_desc[i] = build_desc(w, &n->in_desc[i], NULL))) return;
        op->n_input_desc = i + 1;
    }
    if (n->n_out && !(op->output_desc = aarray(w, n->n_out, sizeof *op->output_desc))) return;
    for (uint32_t k = 0; k < n->n_out; k++) {
        if (!(op->output_desc[k] = build_desc(w, &n->out[k].desc, n->out[k].name))) return;
        op->n_output_desc = k + 1;
    }
    /* input_name only when some input has an explicit name; "" keeps a slot's default. */
    bool named = false;
    for (uint32_t i = 0; i < n->n_in; i++) named |= n->in_name[i] != NULL;
    if (!named || !(op->input_name = aarray(w, n->n_in, sizeof *op->input_name))) return;
    for (uint32_t i = 0; i < n->n_in; i++) op->input_name[i] = borrow(n->in_name[i]);
    op->n_input_name = n->n_in;
}

static OpDef *build_op(gw *w, const gm_node *n)
{
    OpDef *op = anew(w, &ge__proto__op_def__descriptor);
    if (!op) return NULL;
    op->name = borrow(n->name);
    op->type = borrow(n->type);
    build_inputs(w, op, n);
    op->attr = (Ge__Proto__OpDef__AttrEntry **)build_attr_map(w, &ge__proto__op_def__attr_entry__descriptor,
                                                              n->attrs, keep_node_attr, NULL, NULL, &op->n_attr);
    op->has_out_attr = true; /* GE's dumps set it on every op */
    op->id = n->topo_id >= 0 ? n->topo_id : 0;
    op->stream_id = n->stream;
    offsets(n, 0, &op->input_i, &op->n_input_i);
    offsets(n, 1, &op->output_i, &op->n_output_i);
    offsets(n, 2, &op->workspace, &op->n_workspace);
    offsets(n, 3, &op->workspace_bytes, &op->n_workspace_bytes);
    build_descs(w, op, n);
    if (n->n_sub && (op->subgraph_name = aarray(w, n->n_sub, sizeof *op->subgraph_name))) {
        for (uint32_t i = 0; i < n->n_sub; i++) {
            const char *s = n->sub && n->sub[i] ? n->sub[i]->name : n->sub_names ? n->sub_names[i] : NULL;
            op->subgraph_name[i] = borrow(s);
        }
        op->n_subgraph_name = n->n_sub;
    }
    return op;
}

/* ---- graphs and the model ---------------------------------------------------------------- */

static GraphDef *build_graph(gw *w, const gm_graph *g)
{
    GraphDef *gd = anew(w, &ge__proto__graph_def__descriptor);
    if (!gd) return NULL;
    gd->name = borrow(g->name);
    gd->attr = (Ge__Proto__GraphDef__AttrEntry **)build_attr_map(w, &ge__proto__graph_def__attr_entry__descriptor,
                                                                 g->attrs, NULL, NULL, NULL, &gd->n_attr);
    if (g->nodes.n && !(gd->op = aarray(w, g->nodes.n, sizeof *gd->op))) return gd;
    for (uint32_t i = 0; i < g->nodes.n; i++) {
        const gm_node *n = g->nodes.v[i];
        if (n->dead) continue;
        if (!(gd->op[gd->n_op] = build_op(w, n))) return gd;
        gd->n_op++;
    }
    return gd;
}

static ModelDef *build_model(gw *w, const gm_model *m)
{
    ModelDef *md = anew(w, &ge__proto__model_def__descriptor);
    if (!md) return NULL;
    md->name = borrow(m->name);
    if (m->n_graphs && !(md->graph = aarray(w, m->n_graphs, sizeof *md->graph))) return md;
    for (size_t i = 0; i < m->n_graphs; i++) {
        if (!(md->graph[i] = build_graph(w, m->graphs[i]))) return md;
        md->n_graph = i + 1;
    }
    /* Options are model attributes with string values (GE keeps its ge.* options there). */
    if (m->n_options && !(md->attr = aarray(w, m->n_options, sizeof *md->attr))) return md;
    for (size_t i = 0; i < m->n_options; i++) {
        AttrDef *v = anew(w, &ge__proto__attr_def__descriptor);
        if (!v) return md;
        v->value_case = GE__PROTO__ATTR_DEF__VALUE_S;
        v->s = (ProtobufCBinaryData){strlen(m->options[i].value), (uint8_t *)m->options[i].value};
        md->attr[i] = (Ge__Proto__ModelDef__AttrEntry *)map_entry(w, &ge__proto__model_def__attr_entry__descriptor,
                                                                  m->options[i].key, v);
        if (!md->attr[i]) return md;
        md->n_attr = i + 1;
    }
    return md;
}

gm_status gm_model_write_ge_text(const gm_model *m, char **text, size_t *len, gm_error *err)
{
    *text = NULL;
    if (len) *len = 0;
    gw w = {NULL, false};
    ModelDef *md = build_model(&w, m);
    gm_status st = GM_OK;
    if (w.oom || !md) st = gm_error_set(err, GM_ERR_NOMEM, "%s: out of memory", *m->source ? m->source : m->name);
    else st = gm_pbtext_print(&md->base, text, len, err);
    arena_free(&w);
    return st;
}
