/*
 * ge_build.c — the writer's side of GE's messages for what the IR holds below an op: the arena
 * the message trees live in, an attribute as an AttrDef, a desc as a TensorDescriptor (with its
 * residual merged), and attribute lists as AttrEntry arrays. ge_write.c builds ops, graphs and
 * the model from these; ge_read.c builds attributes with them to tell which ones would not
 * print back as they were read (those go to the residual).
 *
 * The trees are only read by the printer (or packed), so they borrow the IR's strings and
 * arrays instead of copying them.
 */
#include <float.h>
#include <math.h>
#include <stdalign.h>
#include <stdio.h>
#include <string.h>

#include "io/ge_internal.h"
#include "ir/ir.h"
#include "util/alloc.h"

/* ---- arena ------------------------------------------------------------------------------- */

struct gm_ge_ablock {
    gm_ge_ablock *next;
    size_t used, cap;
    alignas(max_align_t) unsigned char data[];
};

void *gm_ge_alloc(gm_ge_arena *a, size_t n)
{
    const size_t align = alignof(max_align_t);
    n = (n + align - 1) / align * align;
    gm_ge_ablock *b = a->blocks;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > 65536 ? n : 65536;
        b = gm_malloc(sizeof *b + cap);
        if (!b) {
            a->oom = true;
            return NULL;
        }
        b->next = a->blocks;
        b->used = 0;
        b->cap = cap;
        a->blocks = b;
    }
    void *p = b->data + b->used;
    b->used += n;
    memset(p, 0, n);
    return p;
}

void gm_ge_arena_free(gm_ge_arena *a)
{
    while (a->blocks) {
        gm_ge_ablock *next = a->blocks->next;
        gm_free(a->blocks);
        a->blocks = next;
    }
    for (size_t i = 0; i < a->n_unpacked; i++) protobuf_c_message_free_unpacked(a->unpacked[i], NULL);
    gm_free(a->unpacked);
    a->unpacked = NULL;
    a->n_unpacked = a->cap_unpacked = 0;
}

void *gm_ge_new(gm_ge_arena *a, const ProtobufCMessageDescriptor *d)
{
    void *m = gm_ge_alloc(a, d->sizeof_message);
    if (m) protobuf_c_message_init(d, m);
    return m;
}

void *gm_ge_array(gm_ge_arena *a, size_t n, size_t elem) { return n ? gm_ge_alloc(a, n * elem) : NULL; }

/* The IR's strings are borrowed: the printer reads them and nothing frees them. */
static char *borrow(const char *s) { return (char *)(s ? s : ""); }

/* ---- attributes -------------------------------------------------------------------------- */

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

static Ge__Proto__AttrDef__ListValue *new_list(gm_ge_arena *a, Ge__Proto__AttrDef__ListValue__ListValueType vt)
{
    Ge__Proto__AttrDef__ListValue *l = gm_ge_new(a, &ge__proto__attr_def__list_value__descriptor);
    if (l) l->val_type = vt;
    return l;
}

static void build_list(gm_ge_arena *a, GeAttrDef *v, const gm_attr *at)
{
    Ge__Proto__AttrDef__ListValue *l = NULL;
    size_t i;
    switch (at->kind) {
    case GM_ATTR_LIST_INT:
        if (!(l = new_list(a, GE__PROTO__ATTR_DEF__LIST_VALUE__LIST_VALUE_TYPE__VT_LIST_INT))) return;
        l->i = at->u.li.v;
        l->n_i = at->u.li.v ? at->u.li.n : 0;
        break;
    case GM_ATTR_LIST_FLOAT:
        if (!(l = new_list(a, GE__PROTO__ATTR_DEF__LIST_VALUE__LIST_VALUE_TYPE__VT_LIST_FLOAT))) return;
        if (at->u.lf.n && !(l->f = gm_ge_array(a, at->u.lf.n, sizeof *l->f))) return;
        for (i = 0; i < at->u.lf.n; i++) l->f[i] = to_float(at->u.lf.v[i]);
        l->n_f = at->u.lf.n;
        break;
    case GM_ATTR_LIST_STRING:
        if (!(l = new_list(a, GE__PROTO__ATTR_DEF__LIST_VALUE__LIST_VALUE_TYPE__VT_LIST_STRING))) return;
        if (at->u.ls.n && !(l->s = gm_ge_array(a, at->u.ls.n, sizeof *l->s))) return;
        for (i = 0; i < at->u.ls.n; i++) l->s[i] = (ProtobufCBinaryData){strlen(at->u.ls.v[i]), (uint8_t *)at->u.ls.v[i]};
        l->n_s = at->u.ls.n;
        break;
    case GM_ATTR_LIST_BOOL:
        if (!(l = new_list(a, GE__PROTO__ATTR_DEF__LIST_VALUE__LIST_VALUE_TYPE__VT_LIST_BOOL))) return;
        if (at->u.lb.n && !(l->b = gm_ge_array(a, at->u.lb.n, sizeof *l->b))) return;
        for (i = 0; i < at->u.lb.n; i++) l->b[i] = at->u.lb.v[i];
        l->n_b = at->u.lb.n;
        break;
    default: return;
    }
    v->value_case = GE__PROTO__ATTR_DEF__VALUE_LIST;
    v->list = l;
}

static void build_list_list_int(gm_ge_arena *a, GeAttrDef *v, const gm_attr *at)
{
    Ge__Proto__AttrDef__ListListInt *ll = gm_ge_new(a, &ge__proto__attr_def__list_list_int__descriptor);
    if (!ll) return;
    size_t n = at->u.lli.n;
    if (n && !(ll->list_list_i = gm_ge_array(a, n, sizeof *ll->list_list_i))) return;
    for (size_t i = 0; i < n; i++) {
        Ge__Proto__AttrDef__ListListInt__ListInt *row =
            gm_ge_new(a, &ge__proto__attr_def__list_list_int__list_int__descriptor);
        if (!row) return;
        row->list_i = at->u.lli.rows[i];
        row->n_list_i = at->u.lli.rows[i] ? at->u.lli.lens[i] : 0;
        ll->list_list_i[i] = row;
    }
    ll->n_list_list_i = n;
    v->value_case = GE__PROTO__ATTR_DEF__VALUE_LIST_LIST_INT;
    v->list_list_int = ll;
}

GeAttrDef *gm_ge_build_attr(gm_ge_arena *a, const gm_attr *at)
{
    GeAttrDef *v = gm_ge_new(a, &ge__proto__attr_def__descriptor);
    if (!v) return NULL;
    switch (at->kind) {
    case GM_ATTR_BOOL: v->value_case = GE__PROTO__ATTR_DEF__VALUE_B; v->b = at->u.b; break;
    case GM_ATTR_INT: v->value_case = GE__PROTO__ATTR_DEF__VALUE_I; v->i = at->u.i; break;
    case GM_ATTR_FLOAT: v->value_case = GE__PROTO__ATTR_DEF__VALUE_F; v->f = to_float(at->u.f); break;
    case GM_ATTR_STRING:
        v->value_case = GE__PROTO__ATTR_DEF__VALUE_S;
        v->s = (ProtobufCBinaryData){at->u.s.len, (uint8_t *)at->u.s.data};
        break;
    case GM_ATTR_BYTES:
        v->value_case = GE__PROTO__ATTR_DEF__VALUE_BT;
        v->bt = (ProtobufCBinaryData){at->u.s.len, (uint8_t *)at->u.s.data};
        break;
    case GM_ATTR_LIST_LIST_INT: build_list_list_int(a, v, at); break;
    case GM_ATTR_TENSOR_DESC:
        v->value_case = GE__PROTO__ATTR_DEF__VALUE_TD;
        v->td = gm_ge_build_desc(a, at->u.td, NULL);
        break;
    default: build_list(a, v, at); break;
    }
    return v;
}

GeAttrEntry *gm_ge_entry(gm_ge_arena *a, const char *key, GeAttrDef *value)
{
    GeAttrEntry *e = gm_ge_new(a, &ge__proto__attr_entry__descriptor);
    if (!e) return NULL;
    e->key = (ProtobufCBinaryData){strlen(key), (uint8_t *)key};
    e->value = value;
    return e;
}

GeAttrEntry **gm_ge_build_attr_map(gm_ge_arena *a, const gm_attr *list, bool (*keep)(const gm_attr *),
                                   const char *extra_key, GeAttrDef *extra, size_t *n)
{
    size_t cnt = extra_key ? 1 : 0;
    for (const gm_attr *at = list; at; at = at->next) cnt += !keep || keep(at);
    *n = 0;
    GeAttrEntry **arr = gm_ge_array(a, cnt, sizeof *arr);
    if (!arr) return NULL;
    size_t k = 0;
    for (const gm_attr *at = list; at; at = at->next) {
        /* The kept protobuf of either format is no attribute of the file: ONNX's is ONNX's
         * alone, GE's own residual is merged by the caller. */
        if ((keep && !keep(at)) || gm_attr_is_kept_proto(at->name)) continue;
        if (!(arr[k++] = gm_ge_entry(a, at->name, gm_ge_build_attr(a, at)))) return NULL;
    }
    if (extra_key && !(arr[k++] = gm_ge_entry(a, extra_key, extra))) return NULL;
    *n = k;
    return arr;
}

/* ---- descs ------------------------------------------------------------------------------- */

static const char k_mem_type_attr[] = "_gm_memory_type";

static bool keep_desc_attr(const gm_attr *at) { return strcmp(at->name, k_mem_type_attr) != 0; }

GeTensorDesc *gm_ge_build_desc(gm_ge_arena *a, const gm_tensor_desc *d, const char *name)
{
    GeTensorDesc *td = gm_ge_new(a, &ge__proto__tensor_descriptor__descriptor);
    if (!td) return NULL;
    if (name) td->name = borrow(name);
    td->dtype = (Ge__Proto__DataType)d->dtype;
    if (d->ndims >= 0) {
        Ge__Proto__ShapeDef *sh = gm_ge_new(a, &ge__proto__shape_def__descriptor);
        if (!sh) return NULL;
        sh->dim = d->dims;
        sh->n_dim = d->dims ? (size_t)d->ndims : 0;
        td->shape = sh;
        td->real_dim_cnt = d->ndims;
    }
    if (d->layout) td->layout = borrow(d->layout);
    GeAttrDef *mt = NULL;
    if (d->mem_type_given) {
        const char *s = gm_mem_type_name(d->mem_type);
        if (!(mt = gm_ge_new(a, &ge__proto__attr_def__descriptor))) return NULL;
        mt->value_case = GE__PROTO__ATTR_DEF__VALUE_S;
        mt->s = (ProtobufCBinaryData){strlen(s), (uint8_t *)s};
    }
    td->attr = gm_ge_build_attr_map(a, d->attrs, keep_desc_attr, mt ? k_mem_type_attr : NULL, mt, &td->n_attr);
    td->has_out_attr = td->n_attr > 0;
    int64_t size = d->size_given ? d->size : gm_desc_size(d);
    if (size > 0) td->size = size;
    td->reuse_input = d->reuse_input;
    td->reuse_input_index = d->reuse_input_index;
    const GeTensorDesc *rest = (const GeTensorDesc *)gm_ge_rest_find(
        a, d->attrs, GM_ATTR_GE_REST, &ge__proto__tensor_descriptor__descriptor, "a tensor desc");
    if (rest) {
        gm_ge_rest_merge(a, &td->base, &rest->base);
        /* The size: the one given, else what the file said (0 or GE's -1 for unknown). */
        if (!d->size_given) td->size = rest->size;
        if (!name && rest->name && *rest->name) td->name = rest->name;
    }
    return td;
}
