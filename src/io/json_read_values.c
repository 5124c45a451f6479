/*
 * json_read_values.c — the JSON reader's values: tensor descs (dtype, shape, size, memory type,
 * reuse_input, layout, attrs) and attributes, typed by their JSON text and checked against GE's
 * attribute kinds (src/ops/attr_table.c).
 */
#include <cjson/cJSON.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "io/json_read_internal.h"
#include "ir/ir.h"
#include "ops/attr_table.h"
#include "util/alloc.h"
#include "util/utf8.h"

/* ---- attributes ------------------------------------------------------------------------ */

/* The kind a JSON value has on its own; ATTR_EMPTY_LIST for [] (typed by the attr table). */
#define ATTR_EMPTY_LIST GM_ATTR_KIND_COUNT
#define ATTR_UNSUPPORTED (GM_ATTR_KIND_COUNT + 1)

static const char *const k_bytes_key = "bytes_base64";
static const char *const k_desc_key = "tensor_desc";

/* A list of lists of integers (empty rows allowed). */
static bool is_list_list_int(const cJSON *arr)
{
    for (const cJSON *row = arr->child; row; row = row->next) {
        if (!cJSON_IsArray(row)) return false;
        for (const cJSON *v = row->child; v; v = v->next) {
            if (!cJSON_IsNumber(v) || (v->type & (GM_JSON_FLOAT_TEXT | GM_JSON_INT_OVERFLOW))) return false;
        }
    }
    return true;
}

static int array_kind(const cJSON *arr)
{
    const cJSON *first = arr->child;
    if (!first) return ATTR_EMPTY_LIST;
    if (cJSON_IsArray(first)) return is_list_list_int(arr) ? GM_ATTR_LIST_LIST_INT : ATTR_UNSUPPORTED;
    bool all_int = true;
    for (const cJSON *v = arr->child; v; v = v->next) {
        bool same = (cJSON_IsNumber(first) && cJSON_IsNumber(v)) ||
                    (cJSON_IsString(first) && cJSON_IsString(v)) || (cJSON_IsBool(first) && cJSON_IsBool(v));
        if (!same) return ATTR_UNSUPPORTED;
        if (cJSON_IsNumber(v) && (v->type & (GM_JSON_FLOAT_TEXT | GM_JSON_INT_OVERFLOW))) all_int = false;
    }
    if (cJSON_IsNumber(first)) return all_int ? GM_ATTR_LIST_INT : GM_ATTR_LIST_FLOAT;
    if (cJSON_IsString(first)) return GM_ATTR_LIST_STRING;
    if (cJSON_IsBool(first)) return GM_ATTR_LIST_BOOL;
    return ATTR_UNSUPPORTED;
}

/* {"tensor_desc": {...}} or {"bytes_base64": "..."}: the typed forms the writer uses for
 * values a plain JSON value cannot carry. */
static int object_kind(const cJSON *obj)
{
    const cJSON *c = obj->child;
    if (!c || c->next) return ATTR_UNSUPPORTED;
    if (strcmp(c->string, k_desc_key) == 0 && cJSON_IsObject(c)) return GM_ATTR_TENSOR_DESC;
    if (strcmp(c->string, k_bytes_key) == 0 && cJSON_IsString(c)) return GM_ATTR_BYTES;
    return ATTR_UNSUPPORTED;
}

static int natural_kind(const cJSON *v)
{
    if (cJSON_IsBool(v)) return GM_ATTR_BOOL;
    if (cJSON_IsString(v)) return GM_ATTR_STRING;
    if (cJSON_IsNumber(v))
        return (v->type & (GM_JSON_FLOAT_TEXT | GM_JSON_INT_OVERFLOW)) ? GM_ATTR_FLOAT : GM_ATTR_INT;
    if (cJSON_IsArray(v)) return array_kind(v);
    if (cJSON_IsObject(v)) return object_kind(v);
    return ATTR_UNSUPPORTED;
}

static bool is_list_kind(int k)
{
    return k == GM_ATTR_LIST_INT || k == GM_ATTR_LIST_FLOAT || k == GM_ATTR_LIST_STRING ||
           k == GM_ATTR_LIST_BOOL || k == GM_ATTR_LIST_LIST_INT;
}

/* The kind to store a value of natural kind `found` as, for an attribute whose kind is
 * known to be `want`; -1 when they do not match. Widening that loses nothing is allowed
 * (an integer for a float); a 0/1 for a bool is not: GE would not accept it either. */
static int reconcile_kind(int want, int found)
{
    if (want == found) return want;
    if (found == ATTR_EMPTY_LIST && is_list_kind(want)) return want;
    if (want == GM_ATTR_FLOAT && found == GM_ATTR_INT) return want;
    if (want == GM_ATTR_LIST_FLOAT && found == GM_ATTR_LIST_INT) return want;
    if (want == GM_ATTR_BYTES && found == GM_ATTR_STRING) return want;
    if (want == GM_ATTR_STRING && found == GM_ATTR_BYTES) return want;
    return -1;
}

static const char *found_kind_name(int k)
{
    return k == ATTR_EMPTY_LIST ? "empty list" : gm_attr_kind_name((gm_attr_kind)k);
}

/* Base64 (RFC 4648, padded) into a fresh buffer, NUL-terminated; -1 when malformed, -2 on
 * allocation failure. */
static int base64_decode(const char *s, char **out, size_t *out_len)
{
    size_t n = strlen(s);
    if (n % 4) return -1;
    char *buf = gm_malloc(n / 4 * 3 + 1);
    if (!buf) return -2;
    size_t k = 0;
    for (size_t i = 0; i < n; i += 4) {
        uint32_t acc = 0;
        int pad = 0;
        for (size_t j = 0; j < 4; j++) {
            char c = s[i + j];
            int v;
            if (c >= 'A' && c <= 'Z') v = c - 'A';
            else if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
            else if (c >= '0' && c <= '9') v = c - '0' + 52;
            else if (c == '+') v = 62;
            else if (c == '/') v = 63;
            else if (c == '=' && i + 4 == n && j >= 2 && (j == 3 || s[i + 3] == '=')) { v = 0; pad++; }
            else { gm_free(buf); return -1; }
            if (pad && c != '=') { gm_free(buf); return -1; }
            acc = acc << 6 | (uint32_t)v;
        }
        buf[k++] = (char)(acc >> 16);
        if (pad < 2) buf[k++] = (char)(acc >> 8 & 0xFF);
        if (pad < 1) buf[k++] = (char)(acc & 0xFF);
    }
    buf[k] = '\0';
    *out = buf;
    *out_len = k;
    return 0;
}


static gm_status set_list_int(jr *r, gm_attr **list, const char *name, const cJSON *v, size_t n)
{
    int64_t *a = gm_malloc(n * sizeof *a);
    if (!a) return gm_jr_oom(r);
    size_t i = 0;
    for (const cJSON *e = v->child; e; e = e->next) gm_jr_get_int(r, e, &a[i++]);
    gm_status st = gm_attr_set_list_int(list, name, a, n);
    gm_free(a);
    return st == GM_OK ? GM_OK : gm_jr_oom(r);
}

static gm_status set_list_float(jr *r, gm_attr **list, const char *name, const cJSON *v, size_t n)
{
    double *a = gm_malloc(n * sizeof *a);
    if (!a) return gm_jr_oom(r);
    size_t i = 0;
    for (const cJSON *e = v->child; e; e = e->next) a[i++] = e->valuedouble;
    gm_status st = gm_attr_set_list_float(list, name, a, n);
    gm_free(a);
    return st == GM_OK ? GM_OK : gm_jr_oom(r);
}

static gm_status set_list_string(jr *r, gm_attr **list, const char *name, const cJSON *v, size_t n)
{
    const char **a = gm_malloc(n * sizeof *a);
    if (!a) return gm_jr_oom(r);
    size_t i = 0;
    for (const cJSON *e = v->child; e; e = e->next) a[i++] = e->valuestring;
    gm_status st = gm_attr_set_list_string(list, name, a, n);
    gm_free(a);
    return st == GM_OK ? GM_OK : gm_jr_oom(r);
}

static gm_status set_list_bool(jr *r, gm_attr **list, const char *name, const cJSON *v, size_t n)
{
    bool *a = gm_malloc(n * sizeof *a);
    if (!a) return gm_jr_oom(r);
    size_t i = 0;
    for (const cJSON *e = v->child; e; e = e->next) a[i++] = cJSON_IsTrue(e);
    gm_status st = gm_attr_set_list_bool(list, name, a, n);
    gm_free(a);
    return st == GM_OK ? GM_OK : gm_jr_oom(r);
}

static gm_status set_list_list_int(jr *r, gm_attr **list, const char *name, const cJSON *v, size_t n)
{
    int64_t **rows = gm_calloc(n, sizeof *rows);
    size_t *lens = gm_calloc(n, sizeof *lens);
    gm_status st = rows && lens ? GM_OK : GM_ERR_NOMEM;
    size_t i = 0;
    for (const cJSON *row = v->child; row && st == GM_OK; row = row->next, i++) {
        lens[i] = (size_t)cJSON_GetArraySize(row);
        if (!(rows[i] = gm_malloc(lens[i] * sizeof **rows))) {
            st = GM_ERR_NOMEM;
            break;
        }
        size_t j = 0;
        for (const cJSON *e = row->child; e; e = e->next) gm_jr_get_int(r, e, &rows[i][j++]);
    }
    if (st == GM_OK) st = gm_attr_set_list_list_int(list, name, (const int64_t *const *)rows, lens, n);
    for (size_t k = 0; rows && k < n; k++) gm_free(rows[k]);
    gm_free(rows);
    gm_free(lens);
    return st == GM_OK ? GM_OK : gm_jr_oom(r);
}

/* STRING or BYTES from a JSON string or the {"bytes_base64": ...} form. */
static gm_status set_text(jr *r, const jplace *place, gm_attr **list, const char *name, const cJSON *v,
                          gm_attr_kind kind)
{
    if (cJSON_IsString(v)) {
        gm_status st = kind == GM_ATTR_STRING
                           ? gm_attr_set_string(list, name, v->valuestring)
                           : gm_attr_set_bytes(list, name, v->valuestring, strlen(v->valuestring));
        return st == GM_OK ? GM_OK : gm_jr_oom(r);
    }
    char *data;
    size_t len;
    int rc = base64_decode(v->child->valuestring, &data, &len);
    if (rc == -2) return gm_jr_oom(r);
    if (rc == -1) return gm_jr_fail(r, place, "field '%s' is not valid base64", k_bytes_key);
    gm_status st;
    if (kind == GM_ATTR_STRING && memchr(data, '\0', len)) {
        st = gm_jr_fail(r, place, "wrong kind: expected %s, found bytes holding a NUL",
                  gm_attr_kind_name(GM_ATTR_STRING));
    } else {
        st = kind == GM_ATTR_STRING ? gm_attr_set_string(list, name, data)
                                    : gm_attr_set_bytes(list, name, data, len);
        if (st != GM_OK) st = gm_jr_oom(r);
    }
    gm_free(data);
    return st;
}

static gm_status set_tensor_desc(jr *r, const jplace *place, gm_attr **list, const char *name, const cJSON *v)
{
    gm_tensor_desc d;
    gm_desc_init(&d);
    jplace p = {place, k_desc_key, NULL, 0, P_BARE};
    gm_status st = gm_jr_read_desc(r, &p, &d, v->child);
    if (st == GM_OK && gm_attr_set_tensor_desc(list, name, &d) != GM_OK) st = gm_jr_oom(r);
    gm_desc_fini(&d);
    return st;
}

/* Stores value v as an attribute of kind `kind` (already reconciled with v's own kind). */
static gm_status set_attr(jr *r, const jplace *place, gm_attr **list, const char *name, const cJSON *v,
                          gm_attr_kind kind)
{
    size_t n = cJSON_IsArray(v) ? (size_t)cJSON_GetArraySize(v) : 0;
    gm_status st = GM_OK;
    int64_t iv = 0;
    switch (kind) {
    case GM_ATTR_BOOL: st = gm_attr_set_bool(list, name, cJSON_IsTrue(v)); break;
    case GM_ATTR_INT:
        gm_jr_get_int(r, v, &iv);
        st = gm_attr_set_int(list, name, iv);
        break;
    case GM_ATTR_FLOAT: st = gm_attr_set_float(list, name, v->valuedouble); break;
    case GM_ATTR_STRING:
    case GM_ATTR_BYTES: return set_text(r, place, list, name, v, kind);
    case GM_ATTR_LIST_INT: return set_list_int(r, list, name, v, n);
    case GM_ATTR_LIST_FLOAT: return set_list_float(r, list, name, v, n);
    case GM_ATTR_LIST_STRING: return set_list_string(r, list, name, v, n);
    case GM_ATTR_LIST_BOOL: return set_list_bool(r, list, name, v, n);
    case GM_ATTR_LIST_LIST_INT: return set_list_list_int(r, list, name, v, n);
    case GM_ATTR_TENSOR_DESC: return set_tensor_desc(r, place, list, name, v);
    default: {
        char where[PLACE_CAP];
        size_t k = 0;
        where[0] = '\0';
        gm_jr_render_place(place, where, sizeof where, &k);
        return gm_error_set(r->err, GM_ERR_INTERNAL, "%s: %s: bad attribute kind", r->src, where);
    }
    }
    return st == GM_OK ? GM_OK : gm_jr_oom(r);
}

static const char *unsupported_why(const cJSON *v)
{
    if (cJSON_IsNull(v)) return "null";
    if (cJSON_IsObject(v)) return "an object other than {\"tensor_desc\": {...}} or {\"bytes_base64\": \"...\"}";
    if (cJSON_IsArray(v)) {
        return cJSON_IsArray(v->child) ? "a list of lists holding something other than integers"
                                       : "a list mixing value types or holding lists/objects/null";
    }
    return gm_jr_type_name(v);
}

static gm_status read_attr(jr *r, const jplace *owner_place, gm_attr **list, const cJSON *v)
{
    const char *name = v->string;
    const jplace attr_place = {owner_place, "attribute", name, 0, P_NAME}, *place = &attr_place;
    if (!*name) return gm_jr_fail(r, owner_place, "an attribute has an empty name");
    int found = natural_kind(v);
    if (found == ATTR_UNSUPPORTED) return gm_jr_fail(r, place, "unsupported value (%s)", unsupported_why(v));
    gm_attr_kind known;
    int kind;
    if (gm_attr_known_kind(name, &known)) {
        kind = reconcile_kind((int)known, found);
        if (kind < 0)
            return gm_jr_fail(r, place, "wrong kind: expected %s, found %s", gm_attr_kind_name(known),
                        found_kind_name(found));
    } else {
        kind = found == ATTR_EMPTY_LIST ? GM_ATTR_LIST_INT : found;
    }
    return set_attr(r, place, list, name, v, (gm_attr_kind)kind);
}

gm_status gm_jr_read_attrs(jr *r, const jplace *place, gm_attr **list, const cJSON *obj)
{
    if (!obj) return GM_OK;
    if (!cJSON_IsObject(obj)) return gm_jr_want(r, place, "attrs", obj, "an object");
    const jplace p = {place, "attrs", NULL, 0, P_BARE};
    gm_status st = gm_jr_check_unique_keys(r, &p, obj);
    for (const cJSON *c = obj->child; c && st == GM_OK; c = c->next) st = read_attr(r, place, list, c);
    return st;
}

/* ---- tensor descs ---------------------------------------------------------------------- */

enum { D_DTYPE, D_SHAPE, D_SIZE, D_MEMORY_TYPE, D_REUSE_INPUT, D_REUSE_INPUT_INDEX, D_LAYOUT, D_ATTRS, D_COUNT };
static const char *const k_desc_keys[D_COUNT] = {"dtype", "shape", "size", "memory_type", "reuse_input",
                                                 "reuse_input_index", "layout", "attrs"};

static gm_status read_shape(jr *r, const jplace *place, gm_tensor_desc *d, const cJSON *arr)
{
    if (!cJSON_IsArray(arr)) return gm_jr_want(r, place, "shape", arr, "an array of integers");
    int n = cJSON_GetArraySize(arr);
    int64_t *dims = gm_malloc((size_t)n * sizeof *dims);
    if (!dims) return gm_jr_oom(r);
    gm_status st = GM_OK;
    int i = 0;
    for (const cJSON *e = arr->child; e && st == GM_OK; e = e->next, i++) {
        if (!gm_jr_get_int(r, e, &dims[i])) st = gm_jr_fail(r, place, "field 'shape': dim %d must be an integer", i);
    }
    int64_t bad = st == GM_OK ? gm_shape_bad_dim(dims, (size_t)n) : -1;
    if (bad >= 0)
        st = gm_jr_fail(r, place, "field 'shape': dim %lld is %lld (" GM_SHAPE_DIM_RULE ")", (long long)bad,
                        (long long)dims[bad]);
    if (st == GM_OK && gm_desc_set_shape(d, dims, n) != GM_OK) st = gm_jr_oom(r);
    gm_free(dims);
    return st;
}

static gm_status read_size(jr *r, const jplace *place, gm_tensor_desc *d, const cJSON *it)
{
    if (!cJSON_IsNumber(it)) return gm_jr_want(r, place, "size", it, "an integer number of bytes");
    if (it->type & GM_JSON_INT_OVERFLOW) return gm_jr_fail(r, place, "field 'size' overflows 64 bits");
    int64_t v;
    if (!gm_jr_get_int(r, it, &v)) return gm_jr_fail(r, place, "field 'size' must be an integer number of bytes, not %.17g",
                                         it->valuedouble);
    if (v < 0) return gm_jr_fail(r, place, "field 'size' is negative (%lld)", (long long)v);
    gm_desc_set_size(d, v);
    return GM_OK;
}

gm_status gm_jr_read_desc(jr *r, const jplace *place, gm_tensor_desc *d, const cJSON *obj)
{
    if (!cJSON_IsObject(obj)) return gm_jr_fail(r, place, "must be an object (a tensor desc), not %s", gm_jr_type_name(obj));
    const cJSON *f[D_COUNT];
    gm_status st = gm_jr_take_fields(r, place, obj, k_desc_keys, D_COUNT, f);
    if (st != GM_OK) return st;

    const char *s = NULL;
    if ((st = gm_jr_get_string_field(r, place, "dtype", f[D_DTYPE], &s)) != GM_OK) return st;
    if (s) {
        gm_dtype dt;
        if (!gm_dtype_from_name(s, &dt)) return gm_jr_fail(r, place, "unknown dtype '%s'", s);
        gm_desc_set_dtype(d, dt);
    }
    if (f[D_SHAPE] && (st = read_shape(r, place, d, f[D_SHAPE])) != GM_OK) return st;
    if (f[D_SIZE] && (st = read_size(r, place, d, f[D_SIZE])) != GM_OK) return st;
    s = NULL;
    if ((st = gm_jr_get_string_field(r, place, "memory_type", f[D_MEMORY_TYPE], &s)) != GM_OK) return st;
    if (s) {
        gm_mem_type mt;
        if (!gm_mem_type_from_name(s, &mt))
            return gm_jr_fail(r, place, "unknown memory_type '%s' (expected hbm, p2p, ts or host)", s);
        gm_desc_set_mem_type(d, mt);
    }
    bool reuse = false, index_given;
    if (f[D_REUSE_INPUT]) {
        if (!cJSON_IsBool(f[D_REUSE_INPUT])) return gm_jr_want(r, place, "reuse_input", f[D_REUSE_INPUT], "a bool");
        reuse = cJSON_IsTrue(f[D_REUSE_INPUT]);
    }
    int64_t index = 0;
    st = gm_jr_get_int_field(r, place, "reuse_input_index", f[D_REUSE_INPUT_INDEX], &index, &index_given);
    if (st != GM_OK) return st;
    if (index < 0) return gm_jr_fail(r, place, "field 'reuse_input_index' is negative (%lld)", (long long)index);
    if (reuse || index_given) gm_desc_set_reuse_input(d, reuse, index);
    s = NULL;
    if ((st = gm_jr_get_string_field(r, place, "layout", f[D_LAYOUT], &s)) != GM_OK) return st;
    if (s && gm_desc_set_layout(d, s) != GM_OK) return gm_jr_oom(r);
    return gm_jr_read_attrs(r, place, gm_desc_attrs(d), f[D_ATTRS]);
}
