/*
 * attrs.c — attribute lists with GE's value kinds. A list is a singly linked list in insertion
 * order (nodes carry a handful of attributes, so a scan beats a map); setting an existing name
 * replaces its value in place so the order, and therefore the written file, stays stable.
 */
#include <string.h>

#include "ir/ir.h"
#include "ops/attr_table.h"
#include "util/alloc.h"

static const char *const k_kind_names[GM_ATTR_KIND_COUNT] = {
    "bool", "int", "float", "string", "bytes", "list of int", "list of float",
    "list of string", "list of bool", "list of list of int", "tensor desc"};

const char *gm_attr_kind_name(gm_attr_kind k)
{
    return (unsigned)k < GM_ATTR_KIND_COUNT ? k_kind_names[k] : "?";
}

static void value_free(gm_attr *a)
{
    switch (a->kind) {
    case GM_ATTR_STRING:
    case GM_ATTR_BYTES: gm_free(a->u.s.data); break;
    case GM_ATTR_LIST_INT: gm_free(a->u.li.v); break;
    case GM_ATTR_LIST_FLOAT: gm_free(a->u.lf.v); break;
    case GM_ATTR_LIST_BOOL: gm_free(a->u.lb.v); break;
    case GM_ATTR_LIST_STRING:
        for (size_t i = 0; i < a->u.ls.n; i++) gm_free(a->u.ls.v[i]);
        gm_free(a->u.ls.v);
        break;
    case GM_ATTR_LIST_LIST_INT:
        for (size_t i = 0; i < a->u.lli.n; i++) gm_free(a->u.lli.rows[i]);
        gm_free(a->u.lli.rows);
        gm_free(a->u.lli.lens);
        break;
    case GM_ATTR_TENSOR_DESC:
        if (a->u.td) {
            gm_desc_fini(a->u.td);
            gm_free(a->u.td);
        }
        break;
    default: break;
    }
    memset(&a->u, 0, sizeof a->u);
}

void gm_attr_list_free(gm_attr *list)
{
    while (list) {
        gm_attr *next = list->next;
        value_free(list);
        if (list->name_owned) gm_free((char *)list->name);
        gm_free(list);
        list = next;
    }
}

const gm_attr *gm_attr_find(const gm_attr *list, const char *name)
{
    /* Asked millions of times on a big model, mostly for attributes a node does not have: the
     * first two bytes settle most names without a call (GE's private ones share only '_'). */
    const char c0 = name[0], c1 = c0 ? name[1] : '\0';
    for (; list; list = list->next) {
        const char *a = list->name;
        if (a[0] != c0 || (c0 && a[1] != c1)) continue;
        if (strcmp(a, name) == 0) return list;
    }
    return NULL;
}

const gm_attr *gm_attr_next(const gm_attr *a) { return a ? a->next : NULL; }
const char *gm_attr_name(const gm_attr *a) { return a->name; }
gm_attr_kind gm_attr_get_kind(const gm_attr *a) { return a->kind; }

size_t gm_attr_count(const gm_attr *list)
{
    size_t n = 0;
    for (; list; list = list->next) n++;
    return n;
}

bool gm_attr_bool(const gm_attr *a) { return a->kind == GM_ATTR_BOOL ? a->u.b : a->kind == GM_ATTR_INT ? a->u.i != 0 : false; }
int64_t gm_attr_int(const gm_attr *a) { return a->kind == GM_ATTR_INT ? a->u.i : a->kind == GM_ATTR_BOOL ? a->u.b : 0; }
double gm_attr_float(const gm_attr *a) { return a->kind == GM_ATTR_FLOAT ? a->u.f : a->kind == GM_ATTR_INT ? (double)a->u.i : 0.0; }

const char *gm_attr_string(const gm_attr *a, size_t *len)
{
    if (a->kind != GM_ATTR_STRING && a->kind != GM_ATTR_BYTES) return NULL;
    if (len) *len = a->u.s.len;
    return a->u.s.data;
}

size_t gm_attr_list_len(const gm_attr *a)
{
    switch (a->kind) {
    case GM_ATTR_LIST_INT: return a->u.li.n;
    case GM_ATTR_LIST_FLOAT: return a->u.lf.n;
    case GM_ATTR_LIST_STRING: return a->u.ls.n;
    case GM_ATTR_LIST_BOOL: return a->u.lb.n;
    case GM_ATTR_LIST_LIST_INT: return a->u.lli.n;
    default: return 0;
    }
}

int64_t gm_attr_list_int(const gm_attr *a, size_t i) { return a->kind == GM_ATTR_LIST_INT && i < a->u.li.n ? a->u.li.v[i] : 0; }
double gm_attr_list_float(const gm_attr *a, size_t i) { return a->kind == GM_ATTR_LIST_FLOAT && i < a->u.lf.n ? a->u.lf.v[i] : 0.0; }
const char *gm_attr_list_string(const gm_attr *a, size_t i) { return a->kind == GM_ATTR_LIST_STRING && i < a->u.ls.n ? a->u.ls.v[i] : NULL; }
bool gm_attr_list_bool(const gm_attr *a, size_t i) { return a->kind == GM_ATTR_LIST_BOOL && i < a->u.lb.n ? a->u.lb.v[i] : false; }

size_t gm_attr_list_list_len(const gm_attr *a, size_t i)
{
    return a->kind == GM_ATTR_LIST_LIST_INT && i < a->u.lli.n ? a->u.lli.lens[i] : 0;
}

int64_t gm_attr_list_list_int(const gm_attr *a, size_t i, size_t j)
{
    return j < gm_attr_list_list_len(a, i) ? a->u.lli.rows[i][j] : 0;
}

const gm_tensor_desc *gm_attr_tensor_desc(const gm_attr *a) { return a->kind == GM_ATTR_TENSOR_DESC ? a->u.td : NULL; }

/* The slot to fill for `name`: the existing attribute (value freed) or a new one at the end. */
static gm_attr *slot_for(gm_attr **list, const char *name, gm_attr_kind kind)
{
    gm_attr **pp = list;
    for (; *pp; pp = &(*pp)->next) {
        if (strcmp((*pp)->name, name) == 0) {
            value_free(*pp);
            (*pp)->kind = kind;
            return *pp;
        }
    }
    gm_attr *a = gm_calloc(1, sizeof *a);
    if (!a) return NULL;
    /* GE's own attributes recur on most nodes: share the table's copy of the name. */
    a->name = gm_attr_known_name(name);
    if (!a->name) {
        a->name = gm_strdup(name);
        a->name_owned = true;
    }
    if (!a->name) {
        gm_free(a);
        return NULL;
    }
    a->kind = kind;
    *pp = a;
    return a;
}

/* Allocation failed after the slot was made: drop the half-made attribute. */
static gm_status drop(gm_attr **list, const char *name)
{
    gm_attr_remove(list, name);
    return GM_ERR_NOMEM;
}

gm_status gm_attr_set_bool(gm_attr **list, const char *name, bool v)
{
    gm_attr *a = slot_for(list, name, GM_ATTR_BOOL);
    if (!a) return GM_ERR_NOMEM;
    a->u.b = v;
    return GM_OK;
}

gm_status gm_attr_set_int(gm_attr **list, const char *name, int64_t v)
{
    gm_attr *a = slot_for(list, name, GM_ATTR_INT);
    if (!a) return GM_ERR_NOMEM;
    a->u.i = v;
    return GM_OK;
}

gm_status gm_attr_set_float(gm_attr **list, const char *name, double v)
{
    gm_attr *a = slot_for(list, name, GM_ATTR_FLOAT);
    if (!a) return GM_ERR_NOMEM;
    a->u.f = v;
    return GM_OK;
}

static gm_status set_bytes_kind(gm_attr **list, const char *name, const void *v, size_t len, gm_attr_kind kind)
{
    gm_attr *a = slot_for(list, name, kind);
    if (!a) return GM_ERR_NOMEM;
    a->u.s.data = gm_malloc(len + 1);
    if (!a->u.s.data) return drop(list, name);
    if (len) memcpy(a->u.s.data, v, len);
    a->u.s.data[len] = '\0';
    a->u.s.len = len;
    return GM_OK;
}

gm_status gm_attr_set_string(gm_attr **list, const char *name, const char *v)
{
    return set_bytes_kind(list, name, v, strlen(v), GM_ATTR_STRING);
}

gm_status gm_attr_set_bytes(gm_attr **list, const char *name, const void *v, size_t len)
{
    return set_bytes_kind(list, name, v, len, GM_ATTR_BYTES);
}

/* Copies n elements of elem bytes into a fresh array (NULL only on failure when n > 0). */
static void *dup_array(const void *v, size_t n, size_t elem)
{
    void *p = gm_malloc(n * elem);
    if (p && n) memcpy(p, v, n * elem);
    return p;
}

gm_status gm_attr_set_list_int(gm_attr **list, const char *name, const int64_t *v, size_t n)
{
    gm_attr *a = slot_for(list, name, GM_ATTR_LIST_INT);
    if (!a) return GM_ERR_NOMEM;
    if (!(a->u.li.v = dup_array(v, n, sizeof *v))) return drop(list, name);
    a->u.li.n = n;
    return GM_OK;
}

gm_status gm_attr_set_list_float(gm_attr **list, const char *name, const double *v, size_t n)
{
    gm_attr *a = slot_for(list, name, GM_ATTR_LIST_FLOAT);
    if (!a) return GM_ERR_NOMEM;
    if (!(a->u.lf.v = dup_array(v, n, sizeof *v))) return drop(list, name);
    a->u.lf.n = n;
    return GM_OK;
}

gm_status gm_attr_set_list_bool(gm_attr **list, const char *name, const bool *v, size_t n)
{
    gm_attr *a = slot_for(list, name, GM_ATTR_LIST_BOOL);
    if (!a) return GM_ERR_NOMEM;
    if (!(a->u.lb.v = dup_array(v, n, sizeof *v))) return drop(list, name);
    a->u.lb.n = n;
    return GM_OK;
}

gm_status gm_attr_set_list_string(gm_attr **list, const char *name, const char *const *v, size_t n)
{
    gm_attr *a = slot_for(list, name, GM_ATTR_LIST_STRING);
    if (!a) return GM_ERR_NOMEM;
    if (!(a->u.ls.v = gm_calloc(n, sizeof(char *)))) return drop(list, name);
    for (size_t i = 0; i < n; i++) {
        a->u.ls.n = i + 1; /* so a failure frees exactly what was made */
        if (!(a->u.ls.v[i] = gm_strdup(v[i]))) return drop(list, name);
    }
    a->u.ls.n = n;
    return GM_OK;
}

gm_status gm_attr_set_list_list_int(gm_attr **list, const char *name, const int64_t *const *rows,
                                    const size_t *lens, size_t n)
{
    gm_attr *a = slot_for(list, name, GM_ATTR_LIST_LIST_INT);
    if (!a) return GM_ERR_NOMEM;
    a->u.lli.rows = gm_calloc(n, sizeof(int64_t *));
    a->u.lli.lens = gm_calloc(n, sizeof(size_t));
    if (!a->u.lli.rows || !a->u.lli.lens) return drop(list, name);
    a->u.lli.n = n;
    for (size_t i = 0; i < n; i++) {
        if (!(a->u.lli.rows[i] = dup_array(rows[i], lens[i], sizeof(int64_t)))) return drop(list, name);
        a->u.lli.lens[i] = lens[i];
    }
    return GM_OK;
}

gm_status gm_attr_set_tensor_desc(gm_attr **list, const char *name, const gm_tensor_desc *d)
{
    gm_tensor_desc *copy = gm_calloc(1, sizeof *copy);
    if (!copy) return GM_ERR_NOMEM;
    gm_desc_init(copy);
    if (gm_desc_copy(copy, d) != GM_OK) {
        gm_desc_fini(copy);
        gm_free(copy);
        return GM_ERR_NOMEM;
    }
    gm_attr *a = slot_for(list, name, GM_ATTR_TENSOR_DESC);
    if (!a) {
        gm_desc_fini(copy);
        gm_free(copy);
        return GM_ERR_NOMEM;
    }
    a->u.td = copy;
    return GM_OK;
}

bool gm_attr_remove(gm_attr **list, const char *name)
{
    for (gm_attr **pp = list; *pp; pp = &(*pp)->next) {
        if (strcmp((*pp)->name, name) == 0) {
            gm_attr *a = *pp;
            *pp = a->next;
            a->next = NULL;
            gm_attr_list_free(a);
            return true;
        }
    }
    return false;
}

/* Sets a copy of `a` into *dst under a's name. */
static gm_status set_copy(gm_attr **dst, const gm_attr *a)
{
    switch (a->kind) {
    case GM_ATTR_BOOL: return gm_attr_set_bool(dst, a->name, a->u.b);
    case GM_ATTR_INT: return gm_attr_set_int(dst, a->name, a->u.i);
    case GM_ATTR_FLOAT: return gm_attr_set_float(dst, a->name, a->u.f);
    case GM_ATTR_STRING: return gm_attr_set_string(dst, a->name, a->u.s.data);
    case GM_ATTR_BYTES: return gm_attr_set_bytes(dst, a->name, a->u.s.data, a->u.s.len);
    case GM_ATTR_LIST_INT: return gm_attr_set_list_int(dst, a->name, a->u.li.v, a->u.li.n);
    case GM_ATTR_LIST_FLOAT: return gm_attr_set_list_float(dst, a->name, a->u.lf.v, a->u.lf.n);
    case GM_ATTR_LIST_BOOL: return gm_attr_set_list_bool(dst, a->name, a->u.lb.v, a->u.lb.n);
    case GM_ATTR_LIST_STRING:
        return gm_attr_set_list_string(dst, a->name, (const char *const *)a->u.ls.v, a->u.ls.n);
    case GM_ATTR_LIST_LIST_INT:
        return gm_attr_set_list_list_int(dst, a->name, (const int64_t *const *)a->u.lli.rows,
                                         a->u.lli.lens, a->u.lli.n);
    case GM_ATTR_TENSOR_DESC: return gm_attr_set_tensor_desc(dst, a->name, a->u.td);
    default: return GM_ERR_INTERNAL;
    }
}

gm_status gm_attr_copy_all(gm_attr **dst, const gm_attr *src)
{
    for (; src; src = src->next) {
        gm_status st = set_copy(dst, src);
        if (st != GM_OK) return st;
    }
    return GM_OK;
}

gm_status gm_attr_list_clone(gm_attr **dst, const gm_attr *src)
{
    *dst = NULL;
    gm_status st = gm_attr_copy_all(dst, src);
    if (st != GM_OK) {
        gm_attr_list_free(*dst);
        *dst = NULL;
    }
    return st;
}

bool gm_attrs_get_bool(const gm_attr *list, const char *name, bool dflt)
{
    const gm_attr *a = gm_attr_find(list, name);
    if (!a) return dflt;
    return a->kind == GM_ATTR_BOOL || a->kind == GM_ATTR_INT ? gm_attr_bool(a) : dflt;
}

int64_t gm_attrs_get_int(const gm_attr *list, const char *name, int64_t dflt)
{
    const gm_attr *a = gm_attr_find(list, name);
    return a && (a->kind == GM_ATTR_INT || a->kind == GM_ATTR_BOOL) ? gm_attr_int(a) : dflt;
}

const char *gm_attrs_get_string(const gm_attr *list, const char *name)
{
    const gm_attr *a = gm_attr_find(list, name);
    return a ? gm_attr_string(a, NULL) : NULL;
}

bool gm_attr_is_onnx_proto(const char *name)
{
    return !strcmp(name, GM_ATTR_ONNX_TENSOR) || !strcmp(name, GM_ATTR_ONNX_VALUES) ||
           !strncmp(name, GM_ATTR_ONNX_TYPE_PREFIX, sizeof GM_ATTR_ONNX_TYPE_PREFIX - 1) ||
           !strncmp(name, GM_ATTR_ONNX_ATTR_PREFIX, sizeof GM_ATTR_ONNX_ATTR_PREFIX - 1);
}

bool gm_attr_is_ge_proto(const char *name)
{
    return !strcmp(name, GM_ATTR_GE_REST) || !strcmp(name, GM_ATTR_GE_MODEL_REST);
}

bool gm_attr_is_kept_proto(const char *name) { return gm_attr_is_onnx_proto(name) || gm_attr_is_ge_proto(name); }
