/*
 * ge_read.c — GE's ModelDef into the IR: the text-dump reader (GE's ge_proto_*.txt, reference §8
 * and §8.1, parsed by pbtext into protobuf-c messages) and the walk that ge_om.c shares for
 * offline models, into the IR builder and finalized. Compressed attribute names are given back
 * first (ge_names.c); what the IR does not hold is kept in residuals (ge_rest.c) for the writer.
 *
 * The mapping, and the decisions where GE's format leaves room:
 *  - graph[0] is the root; every other graph is a subgraph of the one op that lists it in
 *    subgraph_name (none or two is an error).
 *  - op -> node: name, type, stream_id -> stream; `id` is the residual's (GE's dumps repeat it).
 *  - `input` strings: "src:i" a data input (in order), "" an unconnected one, "src:-1" a
 *    control input (GE writes these after the data inputs; any order is accepted).
 *  - input_desc pairs with the inputs by position. An op may list more input_desc than inputs
 *    (optional inputs left out, a Data op's own input): GE writes one `input` string per
 *    in-data anchor, so a desc without a string has no anchor and goes to the residual, with
 *    its position. When the defined descs (dtype other than DT_UNDEFINED) are exactly as many
 *    as the inputs, the inputs pair with the defined ones (an optional input left out in the
 *    middle); otherwise by position.
 *  - descs: dtype, shape (absent = no shape, `shape {}` = a scalar), layout, size (explicit
 *    when > 0: proto3 cannot tell 0 from unset, and GE writes -1 for unknown; either stays in
 *    the residual), reuse_input, reuse_input_index, attrs; output_desc.name is the output's IR
 *    name; input_name (else input_desc.name) the inputs'.
 *    The desc attribute "_gm_memory_type" (string, written by ge_write.c) is the desc's memory
 *    type, not an attribute: GE's descs have no field for it.
 *  - attributes: s -> string (bytes when not UTF-8 or holding a NUL), i / dt -> int,
 *    f -> float, b -> bool, bt -> bytes, list -> the list kind of the one field it fills (its
 *    val_type is unreliable); an empty list takes the attribute table's kind, else val_type's,
 *    else list of int; list_list_int -> list of list of int, td -> tensor desc. What the IR
 *    cannot hold (func, t, g, list_list_float, expression, lists of bytes / descs / tensors /
 *    graphs / named attrs, string lists holding a NUL or non-UTF-8 text) is not in the graph:
 *    none of it bears on memory. It is kept in the residual, with every attribute whose IR
 *    form would print back differently (a dt, an s of bytes, a list whose val_type was unset):
 *    the reader builds the writer's AttrDef for each and compares.
 *  - post-build memory offsets input_i / output_i / workspace / workspace_bytes become the node
 *    attributes _gm_input_offsets / _gm_output_offsets / _gm_workspace_offsets /
 *    _gm_workspace_bytes (list of int), for `graphmem verify`.
 *  - model attrs: string values under "ge.*" keys are the model's options; the others (GE's
 *    memory_size, stream_num, soc_version ...) are the model's residual, kept on the root graph;
 *    graph attrs are the graph's attributes. The residuals keep: version, custom_version,
 *    graph input/output lists, attr groups, src/dst names and indices, is_input_const,
 *    has_out_attr and the desc fields that say nothing about memory (device_type, real_dim_cnt,
 *    weight_size, data_offset, cmps_*).
 *
 * Errors give "<source>:<line>:<col>:" from the parser's positions (none for an offline
 * model's binary ModelDef), then the graph and op.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "graphmem/io.h"
#include "graphmem/log.h"
#include "io/ge_internal.h"
#include "io/pbtext.h"
#include "ir/ir.h"
#include "ops/attr_table.h"
#include "util/alloc.h"
#include "util/strmap.h"
#include "util/utf8.h"

typedef GeModelDef ModelDef;
typedef GeGraphDef GraphDef;
typedef GeOpDef OpDef;
typedef GeTensorDesc TensorDesc;
typedef GeAttrDef AttrDef;
typedef Ge__Proto__AttrDef__ListValue ListValue;

/* The attribute entries a residual keeps, gathered while an attribute map is read. */
typedef struct entries {
    GeAttrEntry **v;
    size_t n, cap;
} entries;

/* Reader state. */
typedef struct gr {
    const char *src;
    const char *text;
    size_t len;
    gm_error *err;
    const gm_pbtext_posmap *pos; /* NULL for a binary ModelDef: messages then name no line */
    gm_model *m;
    gm_ge_arena arena;     /* the writer's form of attributes, to compare with what was read */
    uint8_t *packed;       /* scratch for that comparison */
    size_t packed_cap;
    gm_strmap ops;     /* op name -> OpDef, over all graphs */
    gm_strmap graphs;  /* graph name -> GraphDef */
    gm_strmap parents; /* subgraph name -> the OpDef listing it */
    const char *graph; /* where we are, for messages */
    const char *op;
} gr;

/* ---- errors ------------------------------------------------------------------------------ */

/* GM_ERR_INPUT "<source>:<line>:<col>: graph 'g': op 'o': <message>", the position being that
 * of field (msg, field, index), else of msg itself, else none. */
static gm_status fail_at(gr *r, const void *msg, uint32_t field, uint32_t index, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

static gm_status fail_at(gr *r, const void *msg, uint32_t field, uint32_t index, const char *fmt, ...)
{
    char text[640], where[64] = "", place[320] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    size_t off;
    if (r->pos && (gm_pbtext_pos_find(r->pos, msg, field, index, &off) || gm_pbtext_pos_find(r->pos, msg, 0, 0, &off))) {
        size_t line, col;
        gm_pbtext_line_col(r->text, r->len, off, &line, &col);
        snprintf(where, sizeof where, ":%zu:%zu", line, col);
    }
    if (r->graph && r->op) snprintf(place, sizeof place, " graph '%.120s': op '%.120s':", r->graph, r->op);
    else if (r->graph) snprintf(place, sizeof place, " graph '%.120s':", r->graph);
    return gm_error_set(r->err, GM_ERR_INPUT, "%s%s:%s %s", r->src, where, place, text);
}

static gm_status oom(gr *r) { return gm_error_set(r->err, GM_ERR_NOMEM, "%s: out of memory", r->src); }

/* Builder calls fail only for want of memory once the names are checked. */
static gm_status built(gr *r, gm_status st) { return st == GM_OK ? GM_OK : oom(r); }

/* ---- attributes -------------------------------------------------------------------------- */

static gm_status read_desc(gr *r, const TensorDesc *td, gm_tensor_desc *d);

/* Bytes that can be a C string of text: UTF-8 without NUL. */
static bool is_text(const void *data, size_t len)
{
    return !memchr(data, '\0', len) && gm_utf8_valid(data, len, NULL);
}

static gm_status set_text(gr *r, gm_attr **list, const char *name, const ProtobufCBinaryData *bd)
{
    const char *data = bd->data ? (const char *)bd->data : "";
    if (!is_text(data, bd->len)) return built(r, gm_attr_set_bytes(list, name, data, bd->len));
    char *s = gm_strndup(data, bd->len);
    if (!s) return oom(r);
    gm_status st = gm_attr_set_string(list, name, s);
    gm_free(s);
    return built(r, st);
}

/* An attribute the IR cannot hold: it lives on in the residual only, for the GE writer. */
static void skip_attr(gr *r, const char *name, const char *why)
{
    gm_log(GM_LOG_DEBUG, "%s: graph '%s'%s%s%s: attribute '%s' kept for GE's writer only: %s", r->src, r->graph ? r->graph : "",
           r->op ? ": op '" : "", r->op ? r->op : "", r->op ? "'" : "", name, why);
}

static bool is_list_kind(gm_attr_kind k)
{
    return k == GM_ATTR_LIST_INT || k == GM_ATTR_LIST_FLOAT || k == GM_ATTR_LIST_STRING || k == GM_ATTR_LIST_BOOL ||
           k == GM_ATTR_LIST_LIST_INT;
}

/* The kind of an empty list: the attribute table's, else val_type's, else list of int. */
static gm_attr_kind empty_list_kind(const char *name, const ListValue *l)
{
    gm_attr_kind k;
    if (gm_attr_known_kind(name, &k) && is_list_kind(k)) return k;
    switch (l ? l->val_type : 0) {
    case GE__PROTO__ATTR_DEF__LIST_VALUE__LIST_VALUE_TYPE__VT_LIST_STRING: return GM_ATTR_LIST_STRING;
    case GE__PROTO__ATTR_DEF__LIST_VALUE__LIST_VALUE_TYPE__VT_LIST_FLOAT: return GM_ATTR_LIST_FLOAT;
    case GE__PROTO__ATTR_DEF__LIST_VALUE__LIST_VALUE_TYPE__VT_LIST_BOOL: return GM_ATTR_LIST_BOOL;
    default: return GM_ATTR_LIST_INT;
    }
}

static gm_status set_empty_list(gr *r, gm_attr **list, const char *name, gm_attr_kind k)
{
    switch (k) {
    case GM_ATTR_LIST_FLOAT: return built(r, gm_attr_set_list_float(list, name, NULL, 0));
    case GM_ATTR_LIST_STRING: return built(r, gm_attr_set_list_string(list, name, NULL, 0));
    case GM_ATTR_LIST_BOOL: return built(r, gm_attr_set_list_bool(list, name, NULL, 0));
    case GM_ATTR_LIST_LIST_INT: return built(r, gm_attr_set_list_list_int(list, name, NULL, NULL, 0));
    default: return built(r, gm_attr_set_list_int(list, name, NULL, 0));
    }
}

static gm_status set_list_float(gr *r, gm_attr **list, const char *name, const float *v, size_t n)
{
    double *a = gm_malloc(n * sizeof *a);
    if (!a) return oom(r);
    for (size_t i = 0; i < n; i++) a[i] = v[i];
    gm_status st = gm_attr_set_list_float(list, name, a, n);
    gm_free(a);
    return built(r, st);
}

static gm_status set_list_bool(gr *r, gm_attr **list, const char *name, const protobuf_c_boolean *v, size_t n)
{
    bool *a = gm_malloc(n * sizeof *a);
    if (!a) return oom(r);
    for (size_t i = 0; i < n; i++) a[i] = v[i] != 0;
    gm_status st = gm_attr_set_list_bool(list, name, a, n);
    gm_free(a);
    return built(r, st);
}

static gm_status set_list_string(gr *r, gm_attr **list, const char *name, const ProtobufCBinaryData *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!is_text(v[i].data ? (const void *)v[i].data : "", v[i].len)) {
            skip_attr(r, name, "a list of strings holding bytes that are not UTF-8 text");
            return GM_OK;
        }
    }
    char **a = gm_calloc(n, sizeof *a);
    gm_status st = a ? GM_OK : GM_ERR_NOMEM;
    for (size_t i = 0; i < n && st == GM_OK; i++) {
        if (!(a[i] = gm_strndup(v[i].data ? (const char *)v[i].data : "", v[i].len))) st = GM_ERR_NOMEM;
    }
    if (st == GM_OK) st = gm_attr_set_list_string(list, name, (const char *const *)a, n);
    for (size_t i = 0; a && i < n; i++) gm_free(a[i]);
    gm_free(a);
    return built(r, st);
}

/* A ListValue: the kind comes from the one field that holds values. */
static gm_status set_list(gr *r, gm_attr **list, const char *name, const ListValue *l, const void *owner,
                          uint32_t field, uint32_t index)
{
    unsigned filled = 0;
    if (l) {
        const size_t counts[] = {l->n_s, l->n_i, l->n_f, l->n_b, l->n_bt, l->n_td, l->n_t, l->n_g, l->n_na, l->n_dt};
        for (size_t i = 0; i < sizeof counts / sizeof *counts; i++) filled += counts[i] > 0;
    }
    if (filled == 0) return set_empty_list(r, list, name, empty_list_kind(name, l));
    if (filled > 1) return fail_at(r, owner, field, index, "attribute '%s': the list holds values of several kinds", name);
    gm_attr_kind known;
    bool has_known = gm_attr_known_kind(name, &known);
    if (l->n_i || l->n_dt) {
        const int64_t *v = l->n_i ? l->i : l->dt;
        size_t n = l->n_i ? l->n_i : l->n_dt;
        if (has_known && known == GM_ATTR_LIST_FLOAT) { /* integers for a float list lose nothing */
            double *a = gm_malloc(n * sizeof *a);
            if (!a) return oom(r);
            for (size_t i = 0; i < n; i++) a[i] = (double)v[i];
            gm_status st = gm_attr_set_list_float(list, name, a, n);
            gm_free(a);
            return built(r, st);
        }
        return built(r, gm_attr_set_list_int(list, name, v, n));
    }
    if (l->n_f) return set_list_float(r, list, name, l->f, l->n_f);
    if (l->n_b) return set_list_bool(r, list, name, l->b, l->n_b);
    if (l->n_s) return set_list_string(r, list, name, l->s, l->n_s);
    skip_attr(r, name, "a list of bytes, tensor descs, tensors, graphs or named attrs");
    return GM_OK;
}

static gm_status set_list_list_int(gr *r, gm_attr **list, const char *name, const Ge__Proto__AttrDef__ListListInt *ll)
{
    size_t n = ll ? ll->n_list_list_i : 0;
    const int64_t **rows = gm_calloc(n, sizeof *rows);
    size_t *lens = gm_calloc(n, sizeof *lens);
    gm_status st = rows && lens ? GM_OK : GM_ERR_NOMEM;
    for (size_t i = 0; i < n && st == GM_OK; i++) {
        const Ge__Proto__AttrDef__ListListInt__ListInt *row = ll->list_list_i[i];
        rows[i] = row ? row->list_i : NULL;
        lens[i] = row ? row->n_list_i : 0;
    }
    if (st == GM_OK) st = gm_attr_set_list_list_int(list, name, rows, lens, n);
    gm_free(rows);
    gm_free(lens);
    return built(r, st);
}

static gm_status set_desc_attr(gr *r, gm_attr **list, const char *name, const TensorDesc *td)
{
    gm_tensor_desc d;
    gm_desc_init(&d);
    gm_status st = td ? read_desc(r, td, &d) : GM_OK;
    if (st == GM_OK) st = built(r, gm_attr_set_tensor_desc(list, name, &d));
    gm_desc_fini(&d);
    return st;
}

/* One AttrDef as attribute `name` of list; (owner, field, index) locates it for messages. */
static gm_status put_attr(gr *r, gm_attr **list, const char *name, const AttrDef *v, const void *owner,
                          uint32_t field, uint32_t index)
{
    if (!*name) return fail_at(r, owner, field, index, "an attribute has an empty key");
    if (!v) {
        skip_attr(r, name, "no value");
        return GM_OK;
    }
    gm_attr_kind known;
    switch (v->value_case) {
    case GE__PROTO__ATTR_DEF__VALUE_S: return set_text(r, list, name, &v->s);
    case GE__PROTO__ATTR_DEF__VALUE_BT:
        return built(r, gm_attr_set_bytes(list, name, v->bt.data ? (const void *)v->bt.data : "", v->bt.len));
    case GE__PROTO__ATTR_DEF__VALUE_I:
    case GE__PROTO__ATTR_DEF__VALUE_DT: {
        int64_t i = v->value_case == GE__PROTO__ATTR_DEF__VALUE_I ? v->i : v->dt;
        if (gm_attr_known_kind(name, &known) && known == GM_ATTR_FLOAT)
            return built(r, gm_attr_set_float(list, name, (double)i));
        return built(r, gm_attr_set_int(list, name, i));
    }
    case GE__PROTO__ATTR_DEF__VALUE_F: return built(r, gm_attr_set_float(list, name, v->f));
    case GE__PROTO__ATTR_DEF__VALUE_B: return built(r, gm_attr_set_bool(list, name, v->b != 0));
    case GE__PROTO__ATTR_DEF__VALUE_LIST: return set_list(r, list, name, v->list, owner, field, index);
    case GE__PROTO__ATTR_DEF__VALUE_LIST_LIST_INT: return set_list_list_int(r, list, name, v->list_list_int);
    case GE__PROTO__ATTR_DEF__VALUE_TD: return set_desc_attr(r, list, name, v->td);
    case GE__PROTO__ATTR_DEF__VALUE_FUNC: skip_attr(r, name, "a function (func)"); return GM_OK;
    case GE__PROTO__ATTR_DEF__VALUE_T: skip_attr(r, name, "a tensor (t)"); return GM_OK;
    case GE__PROTO__ATTR_DEF__VALUE_G: skip_attr(r, name, "a graph (g)"); return GM_OK;
    case GE__PROTO__ATTR_DEF__VALUE_LIST_LIST_FLOAT: skip_attr(r, name, "a list of lists of floats"); return GM_OK;
    case GE__PROTO__ATTR_DEF__VALUE_EXPRESSION: skip_attr(r, name, "an expression"); return GM_OK;
    default: skip_attr(r, name, "no value"); return GM_OK;
    }
}

static gm_status keep_entry(gr *r, entries *rest, GeAttrEntry *e)
{
    if (rest->n == rest->cap && gm_grow((void **)&rest->v, sizeof *rest->v, rest->n + 1, &rest->cap)) return oom(r);
    rest->v[rest->n++] = e;
    return GM_OK;
}

/* Whether the IR's attribute `name` prints back as v: the writer's AttrDef packs to the same
 * bytes. A desc prints back through its own residual. */
static gm_status prints_back(gr *r, const gm_attr *list, const char *name, const AttrDef *v, bool *same)
{
    const gm_attr *a = gm_attr_find(list, name);
    *same = false;
    if (!a) return GM_OK;
    if (a->kind == GM_ATTR_TENSOR_DESC) {
        *same = true;
        return GM_OK;
    }
    const AttrDef *w = gm_ge_build_attr(&r->arena, a);
    if (!w || r->arena.oom) return oom(r);
    size_t nw = protobuf_c_message_get_packed_size(&w->base), nv = protobuf_c_message_get_packed_size(&v->base);
    if (nw != nv) return GM_OK;
    if (r->packed_cap < 2 * nv && gm_grow((void **)&r->packed, 1, 2 * nv, &r->packed_cap)) return oom(r);
    protobuf_c_message_pack(&w->base, r->packed);
    protobuf_c_message_pack(&v->base, r->packed + nv);
    *same = memcmp(r->packed, r->packed + nv, nv) == 0;
    return GM_OK;
}

/* Every entry of an attribute map (field number `field` of owner) into list; the entries the
 * IR cannot hold, or holds in a form that prints differently, also into rest. `memory_type`,
 * when not NULL, receives the reserved desc attribute "_gm_memory_type" instead of the list. */
static gm_status read_attr_map(gr *r, gm_attr **list, const void *owner, uint32_t field, size_t n,
                               GeAttrEntry *const *ents, gm_tensor_desc *memory_type, entries *rest)
{
    for (size_t i = 0; i < n; i++) {
        GeAttrEntry *e = ents[i];
        const AttrDef *v = e->value;
        /* an empty key may have no data at all: memchr must not see its NULL */
        if ((e->key.len && memchr(e->key.data, '\0', e->key.len)) ||
            !gm_utf8_valid(e->key.len ? (const char *)e->key.data : "", e->key.len, NULL))
            return fail_at(r, owner, field, (uint32_t)i, "an attribute key holds a NUL byte or bytes that are not UTF-8");
        char *key = gm_strndup(e->key.len ? (const char *)e->key.data : "", e->key.len);
        if (!key) return oom(r);
        gm_status st = GM_OK;
        if (memory_type && strcmp(key, "_gm_memory_type") == 0) {
            gm_mem_type mt;
            char name[16] = "";
            if (v && v->value_case == GE__PROTO__ATTR_DEF__VALUE_S && v->s.len < sizeof name)
                memcpy(name, v->s.data, v->s.len);
            if (!gm_mem_type_from_name(name, &mt))
                st = fail_at(r, owner, field, (uint32_t)i,
                             "attribute '_gm_memory_type' must be the string hbm, p2p, ts or host");
            else gm_desc_set_mem_type(memory_type, mt);
        } else if (gm_attr_is_kept_proto(key)) {
            st = fail_at(r, owner, field, (uint32_t)i, "attribute '%s' is graphmem's own, reserved", key);
        } else {
            bool same = false;
            st = put_attr(r, list, key, v, owner, field, (uint32_t)i);
            if (st == GM_OK && v) st = prints_back(r, *list, key, v, &same);
            if (st == GM_OK && !same) st = keep_entry(r, rest, e);
        }
        gm_free(key);
        if (st != GM_OK) return st;
    }
    return GM_OK;
}

/* ---- tensor descs ------------------------------------------------------------------------ */

/* One TensorDescriptor into d (errors point at the descriptor's own fields). */
static gm_status read_desc(gr *r, const TensorDesc *td, gm_tensor_desc *d)
{
    int dt = (int)td->dtype; /* open enum: any int32 can come in by number */
    if (dt < 0 || dt >= GM_DT_COUNT) return fail_at(r, td, 2, 0, "unknown dtype %d", dt);
    gm_desc_set_dtype(d, (gm_dtype)td->dtype);
    if (td->shape) {
        if (td->shape->n_dim > INT32_MAX) return fail_at(r, td, 3, 0, "the shape has too many dims");
        int64_t bad = gm_shape_bad_dim(td->shape->dim, td->shape->n_dim);
        if (bad >= 0)
            return fail_at(r, td->shape, 1, (uint32_t)bad, "dim %lld is %lld (" GM_SHAPE_DIM_RULE ")", (long long)bad,
                           (long long)td->shape->dim[bad]);
        if (gm_desc_set_shape(d, td->shape->dim, (int32_t)td->shape->n_dim) != GM_OK) return oom(r);
    }
    if (td->layout && *td->layout && gm_desc_set_layout(d, td->layout) != GM_OK) return oom(r);
    if (td->size > 0) gm_desc_set_size(d, td->size);
    if (td->reuse_input || td->reuse_input_index) {
        if (td->reuse_input_index < 0)
            return fail_at(r, td, 17, 0, "reuse_input_index is negative (%lld)", (long long)td->reuse_input_index);
        gm_desc_set_reuse_input(d, td->reuse_input != 0, td->reuse_input_index);
    }
    entries rest = {0};
    gm_status st = read_attr_map(r, gm_desc_attrs(d), td, 5, td->n_attr, td->attr, d, &rest);
    if (st == GM_OK) {
        GeTensorDesc kept;
        gm_ge_rest_begin(&kept.base, &td->base, rest.v, rest.n);
        kept.name = td->name; /* an input's desc name, which the writer gives no desc */
        if (td->size <= 0) kept.size = td->size; /* none, or GE's -1 for unknown */
        if (gm_ge_rest_keep(gm_desc_attrs(d), GM_ATTR_GE_REST, &kept.base) != GM_OK) st = oom(r);
    }
    gm_free(rest.v);
    return st;
}

/* ---- ops --------------------------------------------------------------------------------- */

/* One `input` string: "src:i", "src:-1" (control) or "" (unconnected). */
static gm_status read_input(gr *r, const OpDef *op, size_t i, gm_node *n)
{
    const char *s = op->input[i];
    if (!*s) return built(r, gm_node_add_input_by_name(n, NULL, 0));
    const char *colon = strrchr(s, ':');
    if (!colon || colon == s)
        return fail_at(r, op, 5, (uint32_t)i,
                       "input %zu '%s': expected \"op:index\" (\"op:-1\" for a control input, \"\" for none)", i, s);
    const char *d = colon + 1;
    bool control = strcmp(d, "-1") == 0;
    int64_t idx = 0;
    if (!control) {
        if (!*d) return fail_at(r, op, 5, (uint32_t)i, "input %zu '%s': missing output index after ':'", i, s);
        for (const char *c = d; *c; c++) {
            if (*c < '0' || *c > '9')
                return fail_at(r, op, 5, (uint32_t)i, "input %zu '%s': bad output index '%s'", i, s, d);
            idx = idx * 10 + (*c - '0');
            if (idx > INT32_MAX) return fail_at(r, op, 5, (uint32_t)i, "input %zu '%s': output index too large", i, s);
        }
    }
    char *src = gm_strndup(s, (size_t)(colon - s));
    if (!src) return oom(r);
    const OpDef *p = gm_strmap_get(&r->ops, src);
    gm_status st;
    if (!p) {
        st = fail_at(r, op, 5, (uint32_t)i, "input %zu '%s' names unknown op '%s'", i, s, src);
    } else if (!control && (size_t)idx >= p->n_output_desc) {
        st = fail_at(r, op, 5, (uint32_t)i, "input %zu '%s': output index out of range (op '%s' has %zu output_desc)",
                     i, s, src, p->n_output_desc);
    } else {
        st = built(r, control ? gm_node_add_control_input_by_name(n, src)
                              : gm_node_add_input_by_name(n, src, (int32_t)idx));
    }
    gm_free(src);
    return st;
}

/* input_desc -> input descs (the pairing is explained at the top of the file). */
static gm_status read_input_descs(gr *r, const OpDef *op, gm_node *n, bool *used)
{
    size_t n_in = gm_node_input_count(n), defined = 0;
    for (size_t i = 0; i < op->n_input_desc; i++) defined += op->input_desc[i]->dtype != GE__PROTO__DATA_TYPE__DT_UNDEFINED;
    bool defined_only = op->n_input_desc > n_in && defined == n_in;
    size_t k = 0; /* the input the next desc describes */
    for (size_t i = 0; i < op->n_input_desc && k < n_in; i++) {
        const TensorDesc *td = op->input_desc[i];
        if (defined_only && td->dtype == GE__PROTO__DATA_TYPE__DT_UNDEFINED) continue;
        gm_tensor_desc *d = gm_node_input_desc(n, k);
        gm_status st = d ? read_desc(r, td, d) : oom(r);
        if (st != GM_OK) return st;
        /* The desc's name is the input's IR name; input_name, read later, has the last word. */
        if (td->name && *td->name && gm_node_set_input_name(n, k, td->name) != GM_OK) return oom(r);
        used[i] = true;
        k++;
    }
    return GM_OK;
}

static gm_status read_output_descs(gr *r, const OpDef *op, gm_node *n)
{
    for (size_t k = 0; k < op->n_output_desc; k++) {
        const TensorDesc *td = op->output_desc[k];
        gm_tensor_desc *d = gm_node_add_output(n);
        if (!d) return oom(r);
        gm_status st = read_desc(r, td, d);
        if (st != GM_OK) return st;
        if (td->name && *td->name && gm_node_set_output_name(n, k, td->name) != GM_OK) return oom(r);
    }
    return GM_OK;
}

static gm_status set_offsets(gr *r, gm_node *n, const char *name, const int64_t *v, size_t count)
{
    if (!count) return GM_OK;
    return built(r, gm_attr_set_list_int(gm_node_attrs(n), name, v, count));
}

/* The op's residual: its owned fields, the attributes in rest, the input_desc entries that
 * describe no input (used[i] false) with their positions, and input_name as it was, which the
 * writer gives back while the op keeps the inputs it had. */
static gm_status keep_op(gr *r, const OpDef *op, gm_node *n, const bool *used, const entries *rest)
{
    OpDef kept;
    gm_ge_rest_begin(&kept.base, &op->base, rest->v, rest->n);
    kept.input_name = op->input_name;
    kept.n_input_name = op->n_input_name;
    kept.gm_inputs = (int64_t)gm_node_input_count(n);
    kept.gm_input_descs = (int64_t)op->n_input_desc;
    size_t extra = 0;
    for (size_t i = 0; i < op->n_input_desc; i++) extra += !used[i];
    TensorDesc **descs = extra ? gm_calloc(extra, sizeof *descs) : NULL;
    int64_t *at = extra ? gm_calloc(extra, sizeof *at) : NULL;
    gm_status st = GM_OK;
    if (extra && (!descs || !at)) st = oom(r);
    for (size_t i = 0, k = 0; i < op->n_input_desc && st == GM_OK; i++) {
        if (used[i]) continue;
        descs[k] = op->input_desc[i];
        at[k++] = (int64_t)i;
    }
    kept.input_desc = descs;
    kept.n_input_desc = kept.n_gm_input_desc_at = st == GM_OK ? extra : 0;
    kept.gm_input_desc_at = at;
    if (st == GM_OK && gm_ge_rest_keep(gm_node_attrs(n), GM_ATTR_GE_REST, &kept.base) != GM_OK) st = oom(r);
    gm_free(descs);
    gm_free(at);
    return st;
}

static gm_status read_op(gr *r, gm_graph *g, const OpDef *op)
{
    r->op = op->name;
    gm_node *n = gm_graph_add_node(g, op->name, op->type, r->err);
    if (!n) return r->err ? r->err->code : GM_ERR_INPUT;
    gm_node_set_stream(n, op->stream_id);
    gm_status st;
    for (size_t i = 0; i < op->n_input; i++) {
        if ((st = read_input(r, op, i, n)) != GM_OK) return st;
    }
    bool *used = op->n_input_desc ? gm_calloc(op->n_input_desc, sizeof *used) : NULL;
    if (op->n_input_desc && !used) return oom(r);
    entries rest = {0};
    st = read_input_descs(r, op, n, used);
    if (st == GM_OK) st = read_output_descs(r, op, n);
    for (size_t i = 0; i < op->n_input_name && i < gm_node_input_count(n) && st == GM_OK; i++) {
        if (*op->input_name[i] && gm_node_set_input_name(n, i, op->input_name[i]) != GM_OK) st = oom(r);
    }
    if (st == GM_OK) st = read_attr_map(r, gm_node_attrs(n), op, 10, op->n_attr, op->attr, NULL, &rest);
    if (st == GM_OK) st = set_offsets(r, n, "_gm_input_offsets", op->input_i, op->n_input_i);
    if (st == GM_OK) st = set_offsets(r, n, "_gm_output_offsets", op->output_i, op->n_output_i);
    if (st == GM_OK) st = set_offsets(r, n, "_gm_workspace_offsets", op->workspace, op->n_workspace);
    if (st == GM_OK) st = set_offsets(r, n, "_gm_workspace_bytes", op->workspace_bytes, op->n_workspace_bytes);
    for (size_t i = 0; i < op->n_subgraph_name && st == GM_OK; i++)
        st = built(r, gm_node_add_subgraph_by_name(n, op->subgraph_name[i]));
    if (st == GM_OK) st = keep_op(r, op, n, used, &rest);
    gm_free(used);
    gm_free(rest.v);
    r->op = NULL;
    return st;
}

/* ---- the model --------------------------------------------------------------------------- */

/* Names every graph and op, so that inputs and subgraph lists can be checked with their
 * place, and finds each subgraph's parent. */
static gm_status index_model(gr *r, const ModelDef *md)
{
    for (size_t gi = 0; gi < md->n_graph; gi++) {
        const GraphDef *g = md->graph[gi];
        r->graph = NULL;
        if (!*g->name) return fail_at(r, g, 1, 0, "graph %zu has no name", gi);
        if (gm_strmap_get(&r->graphs, g->name)) return fail_at(r, g, 1, 0, "duplicate graph name '%s'", g->name);
        if (gm_strmap_put(&r->graphs, g->name, (void *)g)) return oom(r);
        r->graph = g->name;
        for (size_t i = 0; i < g->n_op; i++) {
            const OpDef *op = g->op[i];
            if (!*op->name) return fail_at(r, op, 1, 0, "op %zu has no name", i);
            r->op = op->name;
            if (!*op->type) return fail_at(r, op, 2, 0, "the op has no type");
            const OpDef *prev = gm_strmap_get(&r->ops, op->name);
            if (prev) return fail_at(r, op, 1, 0, "duplicate op name '%s' (op names are unique in the model)", op->name);
            if (gm_strmap_put(&r->ops, op->name, (void *)op)) return oom(r);
            r->op = NULL;
        }
    }
    for (size_t gi = 0; gi < md->n_graph; gi++) {
        const GraphDef *g = md->graph[gi];
        r->graph = g->name;
        for (size_t i = 0; i < g->n_op; i++) {
            const OpDef *op = g->op[i];
            r->op = op->name;
            for (size_t j = 0; j < op->n_subgraph_name; j++) {
                const char *s = op->subgraph_name[j];
                if (!gm_strmap_get(&r->graphs, s))
                    return fail_at(r, op, 35, (uint32_t)j, "subgraph_name '%s' names no graph of the model", s);
                if (strcmp(s, md->graph[0]->name) == 0)
                    return fail_at(r, op, 35, (uint32_t)j, "subgraph_name '%s' names the root graph (graph 0)", s);
                const OpDef *other = gm_strmap_get(&r->parents, s);
                if (other && other != op)
                    return fail_at(r, op, 35, (uint32_t)j, "graph '%s' is already the subgraph of op '%s'", s, other->name);
                if (gm_strmap_put(&r->parents, s, (void *)op)) return oom(r);
            }
        }
        r->op = NULL;
    }
    r->graph = NULL;
    for (size_t gi = 1; gi < md->n_graph; gi++) {
        const GraphDef *g = md->graph[gi];
        if (!gm_strmap_get(&r->parents, g->name))
            return fail_at(r, g, 0, 0, "graph '%s' is not the subgraph of any op (no op lists it in subgraph_name)",
                           g->name);
    }
    return GM_OK;
}

/* Model attrs: string values under ge.* keys are options; the rest goes to the model's
 * residual, which the root graph keeps. */
static gm_status read_options(gr *r, const ModelDef *md, entries *rest)
{
    for (size_t i = 0; i < md->n_attr; i++) {
        GeAttrEntry *e = md->attr[i];
        const AttrDef *v = e->value;
        const char *k = e->key.len ? (const char *)e->key.data : "";
        bool option = e->key.len > 3 && !memcmp(k, "ge.", 3) && is_text(k, e->key.len) && v &&
                      v->value_case == GE__PROTO__ATTR_DEF__VALUE_S &&
                      is_text(v->s.data ? (const void *)v->s.data : "", v->s.len);
        if (!option) {
            if (keep_entry(r, rest, e) != GM_OK) return oom(r);
            continue;
        }
        char *key = gm_strndup(k, e->key.len), *s = gm_strndup(v->s.data ? (const char *)v->s.data : "", v->s.len);
        gm_status st = key && s ? gm_model_set_option(r->m, key, s) : GM_ERR_NOMEM;
        gm_free(key);
        gm_free(s);
        if (st != GM_OK) return oom(r);
    }
    return GM_OK;
}

static gm_status keep_model(gr *r, const ModelDef *md, gm_graph *root, const entries *rest)
{
    ModelDef kept;
    gm_ge_rest_begin(&kept.base, &md->base, rest->v, rest->n);
    return gm_ge_rest_keep(gm_graph_attrs(root), GM_ATTR_GE_MODEL_REST, &kept.base) == GM_OK ? GM_OK : oom(r);
}

static gm_status keep_graph(gr *r, const GraphDef *gd, gm_graph *g, const entries *rest)
{
    GraphDef kept;
    gm_ge_rest_begin(&kept.base, &gd->base, rest->v, rest->n);
    return gm_ge_rest_keep(gm_graph_attrs(g), GM_ATTR_GE_REST, &kept.base) == GM_OK ? GM_OK : oom(r);
}

static gm_status read_graph(gr *r, const ModelDef *md, size_t gi, const entries *model_rest)
{
    const GraphDef *gd = md->graph[gi];
    const OpDef *parent = gi ? gm_strmap_get(&r->parents, gd->name) : NULL;
    gm_graph *g = gm_model_add_graph(r->m, gd->name, parent ? parent->name : NULL, r->err);
    if (!g) return r->err ? r->err->code : GM_ERR_INPUT;
    r->graph = gd->name;
    entries rest = {0};
    gm_status st = read_attr_map(r, gm_graph_attrs(g), gd, 11, gd->n_attr, gd->attr, NULL, &rest);
    if (st == GM_OK) st = keep_graph(r, gd, g, &rest);
    if (st == GM_OK && gi == 0) st = keep_model(r, md, g, model_rest);
    gm_free(rest.v);
    for (size_t i = 0; i < gd->n_op && st == GM_OK; i++) st = read_op(r, g, gd->op[i]);
    r->graph = NULL;
    return st;
}

static gm_status read_model(gr *r, const ModelDef *md)
{
    if (md->n_graph == 0) return gm_error_set(r->err, GM_ERR_INPUT, "%s: the model has no graph", r->src);
    gm_status st = index_model(r, md);
    if (st != GM_OK) return st;
    if (!(r->m = gm_model_new(md->name)) || gm_model_set_source(r->m, r->src) != GM_OK) return oom(r);
    entries model_rest = {0};
    st = read_options(r, md, &model_rest);
    for (size_t gi = 0; gi < md->n_graph && st == GM_OK; gi++) st = read_graph(r, md, gi, &model_rest);
    gm_free(model_rest.v);
    return st == GM_OK ? gm_model_finalize(r->m, r->err) : st;
}

gm_status gm_ge_read_model_def(const GeModelDef *md, const char *source, const char *text, size_t len,
                               const gm_pbtext_posmap *pos, gm_model **out, gm_error *err)
{
    *out = NULL;
    gr r = {.src = source ? source : "", .text = text, .len = len, .err = err, .pos = pos};
    gm_status st = read_model(&r, md);
    gm_ge_arena_free(&r.arena);
    gm_free(r.packed);
    gm_strmap_free(&r.ops);
    gm_strmap_free(&r.graphs);
    gm_strmap_free(&r.parents);
    if (st != GM_OK) {
        gm_model_free(r.m);
        return st;
    }
    *out = r.m;
    return GM_OK;
}

gm_status gm_model_read_ge_text(const char *text, size_t len, const char *source, gm_model **out, gm_error *err)
{
    *out = NULL;
    if (!source) source = "";
    gm_pbtext_posmap pos = {0};
    ProtobufCMessage *msg = NULL;
    gm_status st = gm_pbtext_parse(&ge__proto__model_def__descriptor, text, len, source, &pos, &msg, err);
    if (st == GM_OK) st = gm_ge_names_decode((ModelDef *)msg, source, text, len, &pos, err);
    if (st == GM_OK) st = gm_ge_read_model_def((const ModelDef *)msg, source, text, len, &pos, out, err);
    protobuf_c_message_free_unpacked(msg, NULL);
    gm_pbtext_posmap_free(&pos);
    return st;
}
