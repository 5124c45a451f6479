/*
 * onnx_read_scope.c — the values of the graphs the ONNX reader builds: unique node names over
 * the whole model, the declared type of each value (with symbolic dims fixed by `dims`), and
 * name resolution through nested scopes, where a body reading an outer value gets a Data node
 * and the value becomes an extra input of the node that owns the body.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/onnx_internal.h"
#include "ir/ir.h"
#include "util/alloc.h"

typedef gm_onnx_reader rd;

#define fail gm_onnx_reader_fail

static gm_status oom(rd *r) { return fail(r, GM_ERR_NOMEM, "out of memory"); }

static const char *gname(const gm_onnx_rgraph *rg) { return rg->g->name; }

/* ---- names --------------------------------------------------------------------------------- */

const char *gm_onnx_reader_own_name(rd *r, char *s)
{
    if (!s || gm_grow((void **)&r->names, sizeof *r->names, r->n_names + 1, &r->cap_names) ||
        gm_strmap_put(&r->used, s, s)) {
        gm_free(s);
        return NULL;
    }
    r->names[r->n_names++] = s;
    return s;
}

/* A name no generated name may take: used, an ONNX node name or a value name. */
static bool name_free(const rd *r, const char *cand)
{
    return !gm_strmap_get(&r->used, cand) && !gm_strmap_get(&r->onnx_names, cand) &&
           !gm_strmap_get(&r->reserved, cand);
}

const char *gm_onnx_take_name(rd *r, const char *base, bool value_name)
{
    if (value_name ? !gm_strmap_get(&r->used, base) : name_free(r, base))
        return gm_onnx_reader_own_name(r, gm_strdup(base));
    size_t cap = strlen(base) + 24;
    char *s = gm_malloc(cap);
    if (!s) return NULL;
    for (unsigned long k = 1;; k++) {
        snprintf(s, cap, "%s_%lu", base, k);
        if (name_free(r, s)) return gm_onnx_reader_own_name(r, s);
    }
}

const char *gm_onnx_type_name(rd *r, const char *type)
{
    uintptr_t k = (uintptr_t)gm_strmap_get(&r->type_next, type);
    k = k ? k - 1 : 0;
    size_t cap = strlen(type) + 24;
    char *s = gm_malloc(cap);
    if (!s) return NULL;
    do {
        snprintf(s, cap, "%s_%lu", type, (unsigned long)k++);
    } while (!name_free(r, s));
    if (gm_strmap_put(&r->type_next, type, (void *)(k + 1))) {
        gm_free(s);
        return NULL;
    }
    return gm_onnx_reader_own_name(r, s);
}

/* Counts ONNX node names and reserves value-derived names over the whole model. */
gm_status gm_onnx_count_names(rd *r, const Onnx__GraphProto *gp)
{
    for (size_t i = 0; i < gp->n_input; i++) {
        if (gp->input[i]->name && gm_strmap_put(&r->reserved, gp->input[i]->name, (void *)1)) return oom(r);
    }
    for (size_t i = 0; i < gp->n_initializer; i++) {
        if (gp->initializer[i]->name && gm_strmap_put(&r->reserved, gp->initializer[i]->name, (void *)1))
            return oom(r);
    }
    for (size_t i = 0; i < gp->n_node; i++) {
        const Onnx__NodeProto *np = gp->node[i];
        if (np->name && *np->name) {
            uintptr_t c = (uintptr_t)gm_strmap_get(&r->onnx_names, np->name);
            if (gm_strmap_put(&r->onnx_names, np->name, (void *)(c + 1))) return oom(r);
        }
        for (size_t a = 0; a < np->n_attribute; a++) {
            gm_status st;
            if (np->attribute[a]->g && (st = gm_onnx_count_names(r, np->attribute[a]->g)) != GM_OK) return st;
        }
    }
    return GM_OK;
}

/* ---- declared types ------------------------------------------------------------------------ */

/* The value of a symbolic dim fixed by `dims` ("NAME=VALUE"), or -1. */
static int64_t fixed_dim(const char *const *dims, const char *param)
{
    for (size_t i = 0; dims && dims[i]; i++) {
        const char *eq = strchr(dims[i], '=');
        if (eq && (size_t)(eq - dims[i]) == strlen(param) && strncmp(dims[i], param, (size_t)(eq - dims[i])) == 0)
            return strtoll(eq + 1, NULL, 10);
    }
    return -1;
}

/* The symbolic dims of a model, each once, in the order first met. Keys borrowed from the
 * unpacked model, which outlives the walk. */
typedef struct dim_names {
    gm_strmap seen;
    const char **v;
    size_t n, cap;
} dim_names;

/* Types and graphs nest (sequences of optionals, bodies of bodies); a model nesting deeper than
 * this is not one anybody wrote, and its deeper dims only go unlisted. */
enum { DIM_WALK_DEPTH = 64 };

static int note_dim(dim_names *dn, const char *name)
{
    if (!name || !*name || gm_strmap_get(&dn->seen, name)) return 0;
    if (gm_strmap_put(&dn->seen, name, (void *)name) || gm_grow((void **)&dn->v, sizeof *dn->v, dn->n + 1, &dn->cap))
        return -1;
    dn->v[dn->n++] = name;
    return 0;
}

static int note_type(dim_names *dn, const Onnx__TypeProto *t, int depth)
{
    if (!t || depth > DIM_WALK_DEPTH) return 0;
    const Onnx__TensorShapeProto *sh = NULL;
    switch (t->value_case) {
    case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE: sh = t->tensor_type ? t->tensor_type->shape : NULL; break;
    case ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE:
        sh = t->sparse_tensor_type ? t->sparse_tensor_type->shape : NULL;
        break;
    case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE:
        return t->sequence_type ? note_type(dn, t->sequence_type->elem_type, depth + 1) : 0;
    case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE:
        return t->optional_type ? note_type(dn, t->optional_type->elem_type, depth + 1) : 0;
    case ONNX__TYPE_PROTO__VALUE_MAP_TYPE: return t->map_type ? note_type(dn, t->map_type->value_type, depth + 1) : 0;
    default: return 0;
    }
    for (size_t i = 0; sh && i < sh->n_dim; i++)
        if (sh->dim[i] && sh->dim[i]->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
            note_dim(dn, sh->dim[i]->dim_param))
            return -1;
    return 0;
}

static int note_values(dim_names *dn, Onnx__ValueInfoProto *const *vis, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (vis[i] && note_type(dn, vis[i]->type, 0)) return -1;
    return 0;
}

static int note_graph(dim_names *dn, const Onnx__GraphProto *g, int depth)
{
    if (!g || depth > DIM_WALK_DEPTH) return 0;
    if (note_values(dn, g->input, g->n_input) || note_values(dn, g->output, g->n_output) ||
        note_values(dn, g->value_info, g->n_value_info))
        return -1;
    for (size_t i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *np = g->node[i];
        for (size_t a = 0; np && a < np->n_attribute; a++) {
            const Onnx__AttributeProto *at = np->attribute[a];
            if (!at) continue;
            if (note_graph(dn, at->g, depth + 1)) return -1;
            for (size_t k = 0; k < at->n_graphs; k++)
                if (note_graph(dn, at->graphs[k], depth + 1)) return -1;
        }
    }
    return 0;
}

/* "a, b, c" of names[0, n) into buf (cut with ", ..." when it does not fit). */
static void join_names(const char **names, size_t n, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        int w = snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", names[i]);
        if (w < 0 || (size_t)w >= cap - len) {
            if (cap > 6) memcpy(buf + (len < cap - 6 ? len : cap - 6), ", ...", 6);
            return;
        }
        len += (size_t)w;
    }
}

gm_status gm_onnx_check_dim_names(rd *r, const Onnx__GraphProto *gp)
{
    dim_names dn = {0};
    gm_status st = note_graph(&dn, gp, 0) ? oom(r) : GM_OK;
    char list[512];
    join_names(dn.v, dn.n, list, sizeof list);
    for (size_t i = 0; st == GM_OK && r->dims && r->dims[i]; i++) {
        const char *d = r->dims[i];
        size_t len = (size_t)(strchr(d, '=') - d); /* gm_io_check_dims saw the '=' */
        bool found = false;
        for (size_t k = 0; k < dn.n && !found; k++) found = strlen(dn.v[k]) == len && !strncmp(dn.v[k], d, len);
        if (!found)
            st = dn.n ? fail(r, GM_ERR_INPUT, "dim '%s': the model has no symbolic dim '%.*s' (its symbolic dims: %s)",
                             d, (int)len, d, list)
                      : fail(r, GM_ERR_INPUT, "dim '%s': the model has no symbolic dims", d);
    }
    /* The root's inputs' dims left open are sized at run time, and everything computed from
     * them (names on outputs and inner values are what inference derives, not the user's to
     * give): the command tells its user which --dim would fix them. */
    dim_names in = {0};
    if (st == GM_OK && note_values(&in, gp->input, gp->n_input)) st = oom(r);
    size_t kept = 0;
    for (size_t k = 0; st == GM_OK && k < in.n; k++)
        if (fixed_dim(r->dims, in.v[k]) < 0) in.v[kept++] = in.v[k];
    if (st == GM_OK && kept) {
        join_names(in.v, kept, list, sizeof list);
        if (gm_model_set_unfixed_dims(r->m, list) != GM_OK) st = oom(r);
    }
    gm_strmap_free(&in.seen);
    gm_free(in.v);
    gm_strmap_free(&dn.seen);
    gm_free(dn.v);
    return st;
}

static const Onnx__TensorShapeProto *vi_shape(const Onnx__ValueInfoProto *vi, int32_t *elem, bool *has_elem)
{
    *has_elem = false;
    if (!vi || !vi->type) return NULL;
    if (vi->type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && vi->type->tensor_type) {
        *has_elem = vi->type->tensor_type->has_elem_type;
        *elem = vi->type->tensor_type->elem_type;
        return vi->type->tensor_type->shape;
    }
    if (vi->type->value_case == ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE && vi->type->sparse_tensor_type) {
        *has_elem = vi->type->sparse_tensor_type->has_elem_type;
        *elem = vi->type->sparse_tensor_type->elem_type;
        return vi->type->sparse_tensor_type->shape;
    }
    return NULL;
}

/* gm_onnx_declare has refused every dim_value graphmem's rule refuses (gm_shape_dim_ok), so a
 * negative one here is -1 (unknown) or the -2 of an unknown rank [-2]. */
static int64_t dim_of(const Onnx__TensorShapeProto__Dimension *d, const char *const *dims)
{
    if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
        return d->dim_value >= GM_DIM_UNKNOWN_RANK ? d->dim_value : -1;
    if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && d->dim_param)
        return fixed_dim(dims, d->dim_param);
    return -1;
}

bool gm_onnx_decl_from_vi(const Onnx__ValueInfoProto *vi, const char *const *dims, gm_onnx_info *out,
                          int32_t *bad_type)
{
    gm_onnx_info_unknown(out);
    int32_t elem = 0;
    bool has_elem;
    const Onnx__TensorShapeProto *sh = vi_shape(vi, &elem, &has_elem);
    if (has_elem && !gm_onnx_dtype_to_gm(elem, &out->dtype)) {
        *bad_type = elem;
        return false;
    }
    if (sh && sh->n_dim <= GM_ONNX_MAX_RANK) {
        out->rank = (int32_t)sh->n_dim;
        for (size_t i = 0; i < sh->n_dim; i++) out->dims[i] = dim_of(sh->dim[i], dims);
        if (out->rank == 1 && out->dims[0] == GM_DIM_UNKNOWN_RANK) out->rank = -1; /* [-2]: rank unknown */
    }
    return true;
}

/* The exact desc of a value graphmem wrote: no rank limit, no shape = ndims -1. */
gm_status gm_onnx_desc_from_vi(rd *r, const Onnx__ValueInfoProto *vi, gm_tensor_desc *d)
{
    int32_t elem = 0;
    bool has_elem;
    const Onnx__TensorShapeProto *sh = vi_shape(vi, &elem, &has_elem);
    if (has_elem && !gm_onnx_dtype_to_gm(elem, &d->dtype))
        return fail(r, GM_ERR_INPUT, "value '%s': unknown ONNX element type %d", vi->name, (int)elem);
    if (!sh) return GM_OK;
    if (sh->n_dim > INT32_MAX / 2) return fail(r, GM_ERR_INPUT, "value '%s': shape too long", vi->name);
    int64_t *dims = gm_malloc((sh->n_dim ? sh->n_dim : 1) * sizeof *dims);
    if (!dims) return oom(r);
    for (size_t i = 0; i < sh->n_dim; i++) dims[i] = dim_of(sh->dim[i], r->dims);
    gm_status st = gm_desc_set_shape(d, dims, (int32_t)sh->n_dim);
    gm_free(dims);
    return st == GM_OK ? GM_OK : oom(r);
}

/* ---- tensors of a graph -------------------------------------------------------------------- */

int32_t gm_onnx_add_tensor(rd *r, gm_onnx_rgraph *rg, const char *name, const char *producer, uint32_t out,
                          gm_status *st)
{
    if (name && gm_strmap_get(&rg->map, name)) {
        *st = fail(r, GM_ERR_INPUT, "graph '%s': value '%s' is produced twice (an ONNX value has one producer)",
                   gname(rg), name);
        return -1;
    }
    if (gm_grow((void **)&rg->t, sizeof *rg->t, rg->nt + 1, &rg->capt)) {
        *st = oom(r);
        return -1;
    }
    if (!r->faithful && gm_grow((void **)&rg->facts, sizeof *rg->facts, rg->nt + 1, &rg->capf)) {
        *st = oom(r);
        return -1;
    }
    int32_t idx = (int32_t)rg->nt;
    gm_onnx_rtensor *t = &rg->t[rg->nt++];
    memset(t, 0, sizeof *t);
    t->name = name;
    t->producer = producer;
    t->out = out;
    t->parent_index = -1;
    t->init = -1;
    if (rg->facts) {
        gm_onnx_info_unknown(&rg->facts[idx].decl);
        gm_onnx_info_unknown(&rg->facts[idx].info);
    }
    if (name && gm_strmap_put(&rg->map, name, (void *)(uintptr_t)(idx + 1))) {
        rg->nt--;
        *st = oom(r);
        return -1;
    }
    return idx;
}

/* Records what the file declares for a value. */
gm_status gm_onnx_declare(rd *r, gm_onnx_rgraph *rg, int32_t idx, const Onnx__ValueInfoProto *vi)
{
    rg->t[idx].vi = vi;
    int32_t elem;
    bool has_elem;
    const Onnx__TensorShapeProto *sh = vi_shape(vi, &elem, &has_elem);
    for (size_t i = 0; sh && i < sh->n_dim; i++) {
        /* ONNX gives a negative dim_value no meaning; graphmem reads it by GE's rule, as the
         * other readers do: -1 unknown, [-2] an unknown rank, anything else bad input. */
        const Onnx__TensorShapeProto__Dimension *d = sh->dim[i];
        if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && !gm_shape_dim_ok(d->dim_value, sh->n_dim))
            return fail(r, GM_ERR_INPUT, "graph '%s': value '%s': shape dim %zu is %lld (" GM_SHAPE_DIM_RULE ")",
                        gname(rg), vi->name, i, (long long)d->dim_value);
    }
    if (!vi || !rg->facts) return GM_OK; /* graphmem's own file: the desc is read exactly later */
    int32_t bad = 0;
    gm_onnx_info d;
    if (!gm_onnx_decl_from_vi(vi, r->dims, &d, &bad))
        return fail(r, GM_ERR_INPUT, "graph '%s': value '%s': unknown ONNX element type %d", gname(rg), vi->name,
                    (int)bad);
    gm_onnx_info_merge_decl(&rg->facts[idx].decl, &d);
    return GM_OK;
}

static bool visible(const gm_onnx_rgraph *rg, const char *name)
{
    for (; rg; rg = rg->outer) {
        if (gm_strmap_get(&rg->map, name)) return true;
    }
    return false;
}

/* The local tensor for a value name: its own, or a Data node capturing an outer value (which
 * makes the value an extra input of the node owning this body). -1: unknown (no error set)
 * or an error (*st set). */
int32_t gm_onnx_resolve(rd *r, gm_onnx_rgraph *rg, const char *name, gm_status *st)
{
    void *v = gm_strmap_get(&rg->map, name);
    if (v) return (int32_t)((uintptr_t)v - 1);
    if (!rg->outer || !rg->cap || !visible(rg->outer, name)) return -1;
    gm_onnx_capture *c = rg->cap;
    size_t pos = 0;
    while (pos < c->n && strcmp(c->names[pos], name) != 0) pos++;
    if (pos == c->n) {
        if (gm_grow((void **)&c->names, sizeof *c->names, c->n + 1, &c->cap)) {
            *st = oom(r);
            return -1;
        }
        c->names[c->n++] = name;
    }
    int64_t p = (int64_t)c->base + (int64_t)pos;
    size_t len = strlen(gname(rg)) + strlen(name) + 2;
    char *base = gm_malloc(len);
    if (!base) {
        *st = oom(r);
        return -1;
    }
    snprintf(base, len, "%s/%s", gname(rg), name);
    const char *dn = gm_onnx_take_name(r, base, false);
    gm_free(base);
    if (!dn) {
        *st = oom(r);
        return -1;
    }
    gm_node *n = gm_graph_add_node(rg->g, dn, "Data", r->err);
    if (!n) {
        *st = r->err ? r->err->code : GM_ERR_INPUT;
        return -1;
    }
    if (gm_attr_set_int(gm_node_attrs(n), "_parent_node_index", p) != GM_OK || !gm_node_add_output(n)) {
        *st = oom(r);
        return -1;
    }
    int32_t idx = gm_onnx_add_tensor(r, rg, name, dn, 0, st);
    if (idx < 0) return -1;
    rg->t[idx].node = n;
    rg->t[idx].parent_index = (int32_t)p;
    return idx;
}

