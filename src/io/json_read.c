/*
 * json_read.c — the JSON model reader (spec/graph-format.md, version 1).
 *
 * The text is checked for UTF-8 first (cJSON does not), parsed with cJSON, then walked field
 * by field into the IR builder; gm_model_finalize then resolves names and validates the
 * structure. This file owns the format's own rules: known keys only, no duplicate keys, the
 * JSON type of every field, dtype / memory-type / shape / size values, and attribute kinds.
 * Every message starts with the source name and says where: graph, node, field.
 */
#include <cjson/cJSON.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "graphmem/io.h"
#include "ir/ir.h"
#include "ops/attr_table.h"
#include "util/alloc.h"
#include "util/strmap.h"
#include "util/utf8.h"

/*
 * cJSON keeps one double per number and forgets its text, but the format types attribute
 * values by their text (1 is an int, 1.0 a float) and sizes need all 64 bits. A pre-scan of
 * the text records each number token in document order; the walk then tags each cJSON number
 * item, in the same order, with private bits in item->type and the token's index in
 * item->valueint. The bits are safe: cJSON's own type tests mask type with 0xFF, and
 * cJSON_Delete only looks at cJSON_IsReference (256) and cJSON_StringIsConst (512). valueint
 * is otherwise unused by us and the tree is never printed, so reusing it loses nothing.
 */
#define GM_JSON_FLOAT_TEXT (1 << 14)   /* the text had '.', 'e' or 'E' */
#define GM_JSON_INT_OVERFLOW (1 << 15) /* integer text outside int64 */

typedef struct num_tok {
    int64_t value; /* exact value of integer text that fits int64 */
    int flags;     /* GM_JSON_FLOAT_TEXT, GM_JSON_INT_OVERFLOW */
} num_tok;

/* Reader state. */
typedef struct jr {
    const char *src;   /* source name, first in every message */
    const char *text;  /* the whole text (after a BOM) */
    size_t len;
    gm_error *err;
    gm_model *m;
    num_tok *toks;     /* number tokens in document order */
    size_t n_toks, cap_toks;
} jr;

/* ---- errors ---------------------------------------------------------------------------- */

/* GM_ERR_INPUT "<source>: <place>: <message>"; place may be empty. */
static gm_status fail(jr *r, const char *place, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static gm_status fail(jr *r, const char *place, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return gm_error_set(r->err, GM_ERR_INPUT, "%s: %s%s%s", r->src, place, *place ? ": " : "", msg);
}

/* The same with the line:column of a byte offset instead of a place. */
static gm_status fail_at(jr *r, size_t offset, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static gm_status fail_at(jr *r, size_t offset, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    size_t line, col;
    gm_text_position(r->text, r->len, offset, &line, &col);
    return gm_error_set(r->err, GM_ERR_INPUT, "%s:%zu:%zu: %s", r->src, line, col, msg);
}

static gm_status oom(jr *r) { return gm_error_set(r->err, GM_ERR_NOMEM, "%s: out of memory", r->src); }

/* Appends ": <fmt...>" to a place, into buf. */
static const char *sub_place(char *buf, size_t cap, const char *place, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static const char *sub_place(char *buf, size_t cap, const char *place, const char *fmt, ...)
{
    int k = snprintf(buf, cap, "%s%s", place, *place ? ": " : "");
    if (k < 0 || (size_t)k >= cap) return buf;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + k, cap - (size_t)k, fmt, ap);
    va_end(ap);
    return buf;
}

#define PLACE_CAP 512

/* ---- pre-scan: number tokens, string contents ------------------------------------------ */

static int push_tok(jr *r, int64_t value, int flags)
{
    if (r->n_toks == r->cap_toks &&
        gm_grow((void **)&r->toks, sizeof *r->toks, r->n_toks + 1, &r->cap_toks))
        return -1;
    r->toks[r->n_toks++] = (num_tok){value, flags};
    return 0;
}

/* Classifies the number token text[b..e): float text, or its exact int64 value. */
static num_tok classify_number(const char *t, size_t b, size_t e)
{
    num_tok tok = {0, 0};
    for (size_t i = b; i < e; i++) {
        if (t[i] == '.' || t[i] == 'e' || t[i] == 'E') {
            tok.flags = GM_JSON_FLOAT_TEXT;
            return tok;
        }
    }
    bool neg = t[b] == '-';
    uint64_t mag = 0;
    for (size_t i = b + neg; i < e; i++) {
        unsigned d = (unsigned)(t[i] - '0');
        if (mag > (UINT64_MAX - d) / 10) {
            tok.flags = GM_JSON_INT_OVERFLOW;
            return tok;
        }
        mag = mag * 10 + d;
    }
    /* -2^63 is the one magnitude that fits only when negative. */
    if (mag > (uint64_t)INT64_MAX + neg) {
        tok.flags = GM_JSON_INT_OVERFLOW;
        return tok;
    }
    tok.value = neg ? (int64_t)(0 - mag) : (int64_t)mag;
    return tok;
}

static bool is_number_char(char c)
{
    return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

/* Skips the string starting at text[i] == '"'; *end receives the offset after its closing
 * quote. Rejects what cJSON lets through but the IR cannot hold: raw control characters and
 * the escaped NUL (names and strings are C strings). */
static gm_status scan_string(jr *r, size_t i, size_t *end)
{
    for (i++; i < r->len; i++) {
        unsigned char c = (unsigned char)r->text[i];
        if (c == '"') {
            *end = i + 1;
            return GM_OK;
        }
        if (c < 0x20) return fail_at(r, i, "malformed JSON: control character 0x%02x in a string", c);
        if (c == '\\') {
            if (i + 5 < r->len && r->text[i + 1] == 'u' && memcmp(r->text + i + 2, "0000", 4) == 0)
                return fail_at(r, i, "a string holds \\u0000 (NUL characters are not supported)");
            i++; /* the escaped character cannot end the string */
        }
    }
    *end = r->len;
    return GM_OK;
}

/* Walks the text as cJSON did (it parsed, so the token structure is valid): numbers outside
 * strings are maximal runs of number characters, which is exactly what cJSON consumed. */
static gm_status prescan(jr *r)
{
    size_t i = 0;
    while (i < r->len) {
        char c = r->text[i];
        if (c == '"') {
            gm_status st = scan_string(r, i, &i);
            if (st != GM_OK) return st;
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            size_t b = i;
            while (i < r->len && is_number_char(r->text[i])) i++;
            num_tok t = classify_number(r->text, b, i);
            if (push_tok(r, t.value, t.flags)) return oom(r);
        } else {
            i++; /* structure, white space, and the letters of true/false/null */
        }
    }
    return GM_OK;
}

/* Tags the number items of the tree (document order = pre-order) with their tokens. */
static bool tag_numbers(jr *r, cJSON *item, size_t *k)
{
    for (; item; item = item->next) {
        if (cJSON_IsNumber(item)) {
            if (*k >= r->n_toks || *k > INT_MAX) return false;
            item->valueint = (int)*k;
            item->type |= r->toks[*k].flags;
            (*k)++;
        } else if (item->child && !tag_numbers(r, item->child, k)) {
            return false;
        }
    }
    return true;
}

/* ---- JSON value helpers ---------------------------------------------------------------- */

/* An integer JSON number (integer text that fits int64). */
static bool get_int(const jr *r, const cJSON *it, int64_t *v)
{
    if (!cJSON_IsNumber(it) || (it->type & (GM_JSON_FLOAT_TEXT | GM_JSON_INT_OVERFLOW))) return false;
    *v = r->toks[it->valueint].value;
    return true;
}

static const char *json_type_name(const cJSON *it)
{
    if (cJSON_IsBool(it)) return "a bool";
    if (cJSON_IsNull(it)) return "null";
    if (cJSON_IsNumber(it)) return "a number";
    if (cJSON_IsString(it)) return "a string";
    if (cJSON_IsArray(it)) return "an array";
    if (cJSON_IsObject(it)) return "an object";
    return "invalid";
}

static gm_status want(jr *r, const char *place, const char *field, const cJSON *it, const char *what)
{
    return fail(r, place, "field '%s' must be %s, not %s", field, what, json_type_name(it));
}

/* A string field (NULL item = absent: *out stays). */
static gm_status get_string_field(jr *r, const char *place, const char *field, const cJSON *it,
                                  const char **out)
{
    if (!it) return GM_OK;
    if (!cJSON_IsString(it)) return want(r, place, field, it, "a string");
    *out = it->valuestring;
    return GM_OK;
}

/* An integer field (absent: *out stays, *given false). */
static gm_status get_int_field(jr *r, const char *place, const char *field, const cJSON *it,
                               int64_t *out, bool *given)
{
    if (given) *given = false;
    if (!it) return GM_OK;
    if (!cJSON_IsNumber(it)) return want(r, place, field, it, "an integer");
    if (it->type & GM_JSON_INT_OVERFLOW)
        return fail(r, place, "field '%s' is too large for a 64-bit integer", field);
    if (!get_int(r, it, out)) return fail(r, place, "field '%s' must be an integer, not %.17g", field,
                                          it->valuedouble);
    if (given) *given = true;
    return GM_OK;
}

/* ---- objects: known keys, no duplicates ------------------------------------------------- */

/* Fills items[i] with the member named keys[i]; rejects unknown and duplicate keys. */
static gm_status take_fields(jr *r, const char *place, const cJSON *obj, const char *const *keys,
                             size_t nkeys, const cJSON **items)
{
    for (size_t i = 0; i < nkeys; i++) items[i] = NULL;
    for (const cJSON *c = obj->child; c; c = c->next) {
        size_t i = 0;
        while (i < nkeys && strcmp(keys[i], c->string) != 0) i++;
        if (i == nkeys) {
            char list[512];
            size_t k = 0;
            list[0] = '\0';
            for (size_t j = 0; j < nkeys && k < sizeof list; j++) {
                int w = snprintf(list + k, sizeof list - k, "%s%s", j ? ", " : "", keys[j]);
                if (w < 0) break;
                k += (size_t)w;
            }
            return fail(r, place, "unknown key '%s' (expected %s)", c->string, list);
        }
        if (items[i]) return fail(r, place, "duplicate key '%s'", c->string);
        items[i] = c;
    }
    return GM_OK;
}

/* Rejects duplicate keys in a free-form object (attrs, options). Small objects, the usual
 * case, are checked pairwise; big ones through a hash map so the check stays linear. */
static gm_status check_unique_keys(jr *r, const char *place, const cJSON *obj)
{
    size_t n = 0;
    for (const cJSON *c = obj->child; c; c = c->next) n++;
    if (n <= 16) {
        for (const cJSON *a = obj->child; a; a = a->next) {
            for (const cJSON *b = a->next; b; b = b->next) {
                if (strcmp(a->string, b->string) == 0) return fail(r, place, "duplicate key '%s'", a->string);
            }
        }
        return GM_OK;
    }
    gm_strmap seen = {0};
    gm_status st = GM_OK;
    for (const cJSON *c = obj->child; c && st == GM_OK; c = c->next) {
        if (gm_strmap_get(&seen, c->string)) st = fail(r, place, "duplicate key '%s'", c->string);
        else if (gm_strmap_put(&seen, c->string, (void *)c)) st = oom(r);
    }
    gm_strmap_free(&seen);
    return st;
}

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

static gm_status read_desc(jr *r, const char *place, gm_tensor_desc *d, const cJSON *obj);

static gm_status set_list_int(jr *r, gm_attr **list, const char *name, const cJSON *v, size_t n)
{
    int64_t *a = gm_malloc(n * sizeof *a);
    if (!a) return oom(r);
    size_t i = 0;
    for (const cJSON *e = v->child; e; e = e->next) get_int(r, e, &a[i++]);
    gm_status st = gm_attr_set_list_int(list, name, a, n);
    gm_free(a);
    return st == GM_OK ? GM_OK : oom(r);
}

static gm_status set_list_float(jr *r, gm_attr **list, const char *name, const cJSON *v, size_t n)
{
    double *a = gm_malloc(n * sizeof *a);
    if (!a) return oom(r);
    size_t i = 0;
    for (const cJSON *e = v->child; e; e = e->next) a[i++] = e->valuedouble;
    gm_status st = gm_attr_set_list_float(list, name, a, n);
    gm_free(a);
    return st == GM_OK ? GM_OK : oom(r);
}

static gm_status set_list_string(jr *r, gm_attr **list, const char *name, const cJSON *v, size_t n)
{
    const char **a = gm_malloc(n * sizeof *a);
    if (!a) return oom(r);
    size_t i = 0;
    for (const cJSON *e = v->child; e; e = e->next) a[i++] = e->valuestring;
    gm_status st = gm_attr_set_list_string(list, name, a, n);
    gm_free(a);
    return st == GM_OK ? GM_OK : oom(r);
}

static gm_status set_list_bool(jr *r, gm_attr **list, const char *name, const cJSON *v, size_t n)
{
    bool *a = gm_malloc(n * sizeof *a);
    if (!a) return oom(r);
    size_t i = 0;
    for (const cJSON *e = v->child; e; e = e->next) a[i++] = cJSON_IsTrue(e);
    gm_status st = gm_attr_set_list_bool(list, name, a, n);
    gm_free(a);
    return st == GM_OK ? GM_OK : oom(r);
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
        for (const cJSON *e = row->child; e; e = e->next) get_int(r, e, &rows[i][j++]);
    }
    if (st == GM_OK) st = gm_attr_set_list_list_int(list, name, (const int64_t *const *)rows, lens, n);
    for (size_t k = 0; rows && k < n; k++) gm_free(rows[k]);
    gm_free(rows);
    gm_free(lens);
    return st == GM_OK ? GM_OK : oom(r);
}

/* STRING or BYTES from a JSON string or the {"bytes_base64": ...} form. */
static gm_status set_text(jr *r, const char *place, gm_attr **list, const char *name, const cJSON *v,
                          gm_attr_kind kind)
{
    if (cJSON_IsString(v)) {
        gm_status st = kind == GM_ATTR_STRING
                           ? gm_attr_set_string(list, name, v->valuestring)
                           : gm_attr_set_bytes(list, name, v->valuestring, strlen(v->valuestring));
        return st == GM_OK ? GM_OK : oom(r);
    }
    char *data;
    size_t len;
    int rc = base64_decode(v->child->valuestring, &data, &len);
    if (rc == -2) return oom(r);
    if (rc == -1) return fail(r, place, "field '%s' is not valid base64", k_bytes_key);
    gm_status st;
    if (kind == GM_ATTR_STRING && memchr(data, '\0', len)) {
        st = fail(r, place, "wrong kind: expected %s, found bytes holding a NUL",
                  gm_attr_kind_name(GM_ATTR_STRING));
    } else {
        st = kind == GM_ATTR_STRING ? gm_attr_set_string(list, name, data)
                                    : gm_attr_set_bytes(list, name, data, len);
        if (st != GM_OK) st = oom(r);
    }
    gm_free(data);
    return st;
}

static gm_status set_tensor_desc(jr *r, const char *place, gm_attr **list, const char *name, const cJSON *v)
{
    gm_tensor_desc d;
    gm_desc_init(&d);
    char p[PLACE_CAP];
    gm_status st = read_desc(r, sub_place(p, sizeof p, place, "%s", k_desc_key), &d, v->child);
    if (st == GM_OK && gm_attr_set_tensor_desc(list, name, &d) != GM_OK) st = oom(r);
    gm_desc_fini(&d);
    return st;
}

/* Stores value v as an attribute of kind `kind` (already reconciled with v's own kind). */
static gm_status set_attr(jr *r, const char *place, gm_attr **list, const char *name, const cJSON *v,
                          gm_attr_kind kind)
{
    size_t n = cJSON_IsArray(v) ? (size_t)cJSON_GetArraySize(v) : 0;
    gm_status st = GM_OK;
    int64_t iv = 0;
    switch (kind) {
    case GM_ATTR_BOOL: st = gm_attr_set_bool(list, name, cJSON_IsTrue(v)); break;
    case GM_ATTR_INT:
        get_int(r, v, &iv);
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
    default: return gm_error_set(r->err, GM_ERR_INTERNAL, "%s: %s: bad attribute kind", r->src, place);
    }
    return st == GM_OK ? GM_OK : oom(r);
}

static const char *unsupported_why(const cJSON *v)
{
    if (cJSON_IsNull(v)) return "null";
    if (cJSON_IsObject(v)) return "an object other than {\"tensor_desc\": {...}} or {\"bytes_base64\": \"...\"}";
    if (cJSON_IsArray(v)) {
        return cJSON_IsArray(v->child) ? "a list of lists holding something other than integers"
                                       : "a list mixing value types or holding lists/objects/null";
    }
    return json_type_name(v);
}

static gm_status read_attr(jr *r, const char *owner_place, gm_attr **list, const cJSON *v)
{
    const char *name = v->string;
    char place[PLACE_CAP];
    sub_place(place, sizeof place, owner_place, "attribute '%s'", name);
    if (!*name) return fail(r, owner_place, "an attribute has an empty name");
    int found = natural_kind(v);
    if (found == ATTR_UNSUPPORTED) return fail(r, place, "unsupported value (%s)", unsupported_why(v));
    gm_attr_kind known;
    int kind;
    if (gm_attr_known_kind(name, &known)) {
        kind = reconcile_kind((int)known, found);
        if (kind < 0)
            return fail(r, place, "wrong kind: expected %s, found %s", gm_attr_kind_name(known),
                        found_kind_name(found));
    } else {
        kind = found == ATTR_EMPTY_LIST ? GM_ATTR_LIST_INT : found;
    }
    return set_attr(r, place, list, name, v, (gm_attr_kind)kind);
}

static gm_status read_attrs(jr *r, const char *place, gm_attr **list, const cJSON *obj)
{
    if (!obj) return GM_OK;
    if (!cJSON_IsObject(obj)) return want(r, place, "attrs", obj, "an object");
    char p[PLACE_CAP];
    gm_status st = check_unique_keys(r, sub_place(p, sizeof p, place, "attrs"), obj);
    for (const cJSON *c = obj->child; c && st == GM_OK; c = c->next) st = read_attr(r, place, list, c);
    return st;
}

/* ---- tensor descs ---------------------------------------------------------------------- */

enum { D_DTYPE, D_SHAPE, D_SIZE, D_MEMORY_TYPE, D_REUSE_INPUT, D_REUSE_INPUT_INDEX, D_LAYOUT, D_ATTRS, D_COUNT };
static const char *const k_desc_keys[D_COUNT] = {"dtype", "shape", "size", "memory_type", "reuse_input",
                                                 "reuse_input_index", "layout", "attrs"};

static gm_status read_shape(jr *r, const char *place, gm_tensor_desc *d, const cJSON *arr)
{
    if (!cJSON_IsArray(arr)) return want(r, place, "shape", arr, "an array of integers");
    int n = cJSON_GetArraySize(arr);
    int64_t *dims = gm_malloc((size_t)n * sizeof *dims);
    if (!dims) return oom(r);
    gm_status st = GM_OK;
    int i = 0;
    for (const cJSON *e = arr->child; e && st == GM_OK; e = e->next, i++) {
        if (!get_int(r, e, &dims[i])) {
            st = fail(r, place, "field 'shape': dim %d must be an integer", i);
        } else if (dims[i] < -2) {
            st = fail(r, place, "field 'shape': dim %d is %lld (dims are >= 0, -1 = unknown, -2 = unknown rank)",
                      i, (long long)dims[i]);
        }
    }
    if (st == GM_OK && gm_desc_set_shape(d, dims, n) != GM_OK) st = oom(r);
    gm_free(dims);
    return st;
}

static gm_status read_size(jr *r, const char *place, gm_tensor_desc *d, const cJSON *it)
{
    if (!cJSON_IsNumber(it)) return want(r, place, "size", it, "an integer number of bytes");
    if (it->type & GM_JSON_INT_OVERFLOW) return fail(r, place, "field 'size' overflows 64 bits");
    int64_t v;
    if (!get_int(r, it, &v)) return fail(r, place, "field 'size' must be an integer number of bytes, not %.17g",
                                         it->valuedouble);
    if (v < 0) return fail(r, place, "field 'size' is negative (%lld)", (long long)v);
    gm_desc_set_size(d, v);
    return GM_OK;
}

static gm_status read_desc(jr *r, const char *place, gm_tensor_desc *d, const cJSON *obj)
{
    if (!cJSON_IsObject(obj)) return fail(r, place, "must be an object (a tensor desc), not %s", json_type_name(obj));
    const cJSON *f[D_COUNT];
    gm_status st = take_fields(r, place, obj, k_desc_keys, D_COUNT, f);
    if (st != GM_OK) return st;

    const char *s = NULL;
    if ((st = get_string_field(r, place, "dtype", f[D_DTYPE], &s)) != GM_OK) return st;
    if (s) {
        gm_dtype dt;
        if (!gm_dtype_from_name(s, &dt)) return fail(r, place, "unknown dtype '%s'", s);
        gm_desc_set_dtype(d, dt);
    }
    if (f[D_SHAPE] && (st = read_shape(r, place, d, f[D_SHAPE])) != GM_OK) return st;
    if (f[D_SIZE] && (st = read_size(r, place, d, f[D_SIZE])) != GM_OK) return st;
    s = NULL;
    if ((st = get_string_field(r, place, "memory_type", f[D_MEMORY_TYPE], &s)) != GM_OK) return st;
    if (s) {
        gm_mem_type mt;
        if (!gm_mem_type_from_name(s, &mt))
            return fail(r, place, "unknown memory_type '%s' (expected hbm, p2p, ts or host)", s);
        gm_desc_set_mem_type(d, mt);
    }
    bool reuse = false, index_given;
    if (f[D_REUSE_INPUT]) {
        if (!cJSON_IsBool(f[D_REUSE_INPUT])) return want(r, place, "reuse_input", f[D_REUSE_INPUT], "a bool");
        reuse = cJSON_IsTrue(f[D_REUSE_INPUT]);
    }
    int64_t index = 0;
    st = get_int_field(r, place, "reuse_input_index", f[D_REUSE_INPUT_INDEX], &index, &index_given);
    if (st != GM_OK) return st;
    if (index < 0) return fail(r, place, "field 'reuse_input_index' is negative (%lld)", (long long)index);
    if (reuse || index_given) gm_desc_set_reuse_input(d, reuse, index);
    s = NULL;
    if ((st = get_string_field(r, place, "layout", f[D_LAYOUT], &s)) != GM_OK) return st;
    if (s && gm_desc_set_layout(d, s) != GM_OK) return oom(r);
    return read_attrs(r, place, gm_desc_attrs(d), f[D_ATTRS]);
}

/* ---- nodes ----------------------------------------------------------------------------- */

enum {
    N_NAME, N_TYPE, N_INPUTS, N_CONTROL_INPUTS, N_SUBGRAPHS, N_STREAM, N_OUTPUTS, N_INPUT_DESCS,
    N_INPUT_NAMES, N_OUTPUT_NAMES, N_ATTRS, N_COUNT
};
static const char *const k_node_keys[N_COUNT] = {"name", "type", "inputs", "control_inputs", "subgraphs",
                                                 "stream", "outputs", "input_descs", "input_names",
                                                 "output_names", "attrs"};

/* Parses "producer:index" ("" = unconnected). The last ':' splits, so producer names may
 * hold ':' themselves. */
static gm_status read_input(jr *r, const char *place, gm_node *n, size_t i, const cJSON *v)
{
    if (!cJSON_IsString(v)) return fail(r, place, "input %zu must be a string \"producer:index\", not %s", i,
                                        json_type_name(v));
    const char *s = v->valuestring;
    if (!*s) return gm_node_add_input_by_name(n, NULL, 0) == GM_OK ? GM_OK : oom(r);
    const char *colon = strrchr(s, ':');
    if (!colon || colon == s)
        return fail(r, place, "input %zu '%s': expected \"producer:index\" (or \"\" for unconnected)", i, s);
    const char *d = colon + 1;
    int64_t idx = 0;
    if (!*d) return fail(r, place, "input %zu '%s': missing output index after ':'", i, s);
    for (; *d; d++) {
        if (*d < '0' || *d > '9') return fail(r, place, "input %zu '%s': bad output index '%s'", i, s, colon + 1);
        idx = idx * 10 + (*d - '0');
        if (idx > INT32_MAX) return fail(r, place, "input %zu '%s': output index too large", i, s);
    }
    char *src = gm_strndup(s, (size_t)(colon - s));
    if (!src) return oom(r);
    gm_status st = gm_node_add_input_by_name(n, src, (int32_t)idx);
    gm_free(src);
    return st == GM_OK ? GM_OK : oom(r);
}

/* An array field whose entries must all be strings (non-empty when `nonempty`). */
static gm_status check_string_array(jr *r, const char *place, const char *field, const cJSON *arr, bool nonempty)
{
    if (!cJSON_IsArray(arr)) return want(r, place, field, arr, "an array of strings");
    size_t i = 0;
    for (const cJSON *e = arr->child; e; e = e->next, i++) {
        if (!cJSON_IsString(e))
            return fail(r, place, "field '%s': entry %zu must be a string, not %s", field, i, json_type_name(e));
        if (nonempty && !*e->valuestring) return fail(r, place, "field '%s': entry %zu is empty", field, i);
    }
    return GM_OK;
}

static gm_status read_node_links(jr *r, const char *place, gm_node *n, const cJSON **f)
{
    gm_status st;
    if (f[N_INPUTS]) {
        if (!cJSON_IsArray(f[N_INPUTS])) return want(r, place, "inputs", f[N_INPUTS], "an array of strings");
        size_t i = 0;
        for (const cJSON *e = f[N_INPUTS]->child; e; e = e->next, i++) {
            if ((st = read_input(r, place, n, i, e)) != GM_OK) return st;
        }
    }
    if (f[N_CONTROL_INPUTS]) {
        if ((st = check_string_array(r, place, "control_inputs", f[N_CONTROL_INPUTS], true)) != GM_OK) return st;
        for (const cJSON *e = f[N_CONTROL_INPUTS]->child; e; e = e->next) {
            if (gm_node_add_control_input_by_name(n, e->valuestring) != GM_OK) return oom(r);
        }
    }
    if (f[N_SUBGRAPHS]) {
        if ((st = check_string_array(r, place, "subgraphs", f[N_SUBGRAPHS], true)) != GM_OK) return st;
        for (const cJSON *e = f[N_SUBGRAPHS]->child; e; e = e->next) {
            if (gm_node_add_subgraph_by_name(n, e->valuestring) != GM_OK) return oom(r);
        }
    }
    return GM_OK;
}

static gm_status read_node_descs(jr *r, const char *place, gm_node *n, const cJSON **f)
{
    char p[PLACE_CAP];
    gm_status st;
    if (f[N_OUTPUTS]) {
        if (!cJSON_IsArray(f[N_OUTPUTS])) return want(r, place, "outputs", f[N_OUTPUTS], "an array of tensor descs");
        size_t k = 0;
        for (const cJSON *e = f[N_OUTPUTS]->child; e; e = e->next, k++) {
            gm_tensor_desc *d = gm_node_add_output(n);
            if (!d) return oom(r);
            if ((st = read_desc(r, sub_place(p, sizeof p, place, "output %zu", k), d, e)) != GM_OK) return st;
        }
    }
    if (f[N_INPUT_DESCS]) {
        const cJSON *arr = f[N_INPUT_DESCS];
        if (!cJSON_IsArray(arr)) return want(r, place, "input_descs", arr, "an array of tensor descs");
        size_t cnt = (size_t)cJSON_GetArraySize(arr);
        if (cnt > gm_node_input_count(n))
            return fail(r, place, "field 'input_descs' has %zu entries but the node has %zu inputs", cnt,
                        gm_node_input_count(n));
        size_t i = 0;
        for (const cJSON *e = arr->child; e; e = e->next, i++) {
            st = read_desc(r, sub_place(p, sizeof p, place, "input_descs[%zu]", i), gm_node_input_desc(n, i), e);
            if (st != GM_OK) return st;
        }
    }
    return GM_OK;
}

/* input_names / output_names: "" keeps the op table's default for that slot. */
static gm_status read_io_names(jr *r, const char *place, gm_node *n, const cJSON *arr, bool inputs)
{
    const char *field = inputs ? "input_names" : "output_names";
    gm_status st = check_string_array(r, place, field, arr, false);
    if (st != GM_OK) return st;
    size_t have = inputs ? gm_node_input_count(n) : gm_node_output_count(n);
    size_t cnt = (size_t)cJSON_GetArraySize(arr);
    if (cnt > have)
        return fail(r, place, "field '%s' has %zu entries but the node has %zu %s", field, cnt, have,
                    inputs ? "inputs" : "outputs");
    size_t i = 0;
    for (const cJSON *e = arr->child; e; e = e->next, i++) {
        if (!*e->valuestring) continue;
        st = inputs ? gm_node_set_input_name(n, i, e->valuestring) : gm_node_set_output_name(n, i, e->valuestring);
        if (st != GM_OK) return oom(r);
    }
    return GM_OK;
}

static gm_status read_node(jr *r, gm_graph *g, const char *gplace, size_t idx, const cJSON *obj)
{
    char place[PLACE_CAP];
    sub_place(place, sizeof place, gplace, "node %zu", idx);
    if (!cJSON_IsObject(obj)) return fail(r, place, "must be an object, not %s", json_type_name(obj));
    /* Name the node in messages as soon as it has a usable name. */
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(obj, "name");
    if (cJSON_IsString(nm) && *nm->valuestring) sub_place(place, sizeof place, gplace, "node '%s'", nm->valuestring);

    const cJSON *f[N_COUNT];
    gm_status st = take_fields(r, place, obj, k_node_keys, N_COUNT, f);
    if (st != GM_OK) return st;
    if (!f[N_NAME]) return fail(r, place, "missing field 'name'");
    if (!f[N_TYPE]) return fail(r, place, "missing field 'type'");
    const char *name = NULL, *type = NULL;
    if ((st = get_string_field(r, place, "name", f[N_NAME], &name)) != GM_OK) return st;
    if ((st = get_string_field(r, place, "type", f[N_TYPE], &type)) != GM_OK) return st;

    gm_node *n = gm_graph_add_node(g, name, type, r->err);
    if (!n) return r->err ? r->err->code : GM_ERR_INPUT;

    int64_t stream = 0;
    if ((st = get_int_field(r, place, "stream", f[N_STREAM], &stream, NULL)) != GM_OK) return st;
    gm_node_set_stream(n, stream);
    if ((st = read_node_links(r, place, n, f)) != GM_OK) return st;
    if ((st = read_node_descs(r, place, n, f)) != GM_OK) return st;
    if (f[N_INPUT_NAMES] && (st = read_io_names(r, place, n, f[N_INPUT_NAMES], true)) != GM_OK) return st;
    if (f[N_OUTPUT_NAMES] && (st = read_io_names(r, place, n, f[N_OUTPUT_NAMES], false)) != GM_OK) return st;
    return read_attrs(r, place, gm_node_attrs(n), f[N_ATTRS]);
}

/* ---- graphs and the model -------------------------------------------------------------- */

enum { G_NAME, G_PARENT, G_ATTRS, G_NODES, G_COUNT };
static const char *const k_graph_keys[G_COUNT] = {"name", "parent", "attrs", "nodes"};

static gm_status read_graph(jr *r, size_t idx, const cJSON *obj)
{
    char place[PLACE_CAP];
    sub_place(place, sizeof place, "", "graph %zu", idx);
    if (!cJSON_IsObject(obj)) return fail(r, place, "must be an object, not %s", json_type_name(obj));
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(obj, "name");
    if (cJSON_IsString(nm) && *nm->valuestring) sub_place(place, sizeof place, "", "graph '%s'", nm->valuestring);

    const cJSON *f[G_COUNT];
    gm_status st = take_fields(r, place, obj, k_graph_keys, G_COUNT, f);
    if (st != GM_OK) return st;
    if (!f[G_NAME]) return fail(r, place, "missing field 'name'");
    const char *name = NULL, *parent = NULL;
    if ((st = get_string_field(r, place, "name", f[G_NAME], &name)) != GM_OK) return st;
    if ((st = get_string_field(r, place, "parent", f[G_PARENT], &parent)) != GM_OK) return st;

    gm_graph *g = gm_model_add_graph(r->m, name, parent, r->err);
    if (!g) return r->err ? r->err->code : GM_ERR_INPUT;
    if ((st = read_attrs(r, place, gm_graph_attrs(g), f[G_ATTRS])) != GM_OK) return st;
    if (!f[G_NODES]) return GM_OK;
    if (!cJSON_IsArray(f[G_NODES])) return want(r, place, "nodes", f[G_NODES], "an array of nodes");
    size_t i = 0;
    for (const cJSON *e = f[G_NODES]->child; e; e = e->next, i++) {
        if ((st = read_node(r, g, place, i, e)) != GM_OK) return st;
    }
    return GM_OK;
}

static gm_status read_options(jr *r, const cJSON *obj)
{
    if (!cJSON_IsObject(obj)) return want(r, "", "options", obj, "an object of strings");
    gm_status st = check_unique_keys(r, "options", obj);
    for (const cJSON *c = obj->child; c && st == GM_OK; c = c->next) {
        if (!cJSON_IsString(c))
            return fail(r, "options", "option '%s' must be a string, not %s", c->string, json_type_name(c));
        if (gm_model_set_option(r->m, c->string, c->valuestring) != GM_OK) st = oom(r);
    }
    return st;
}

enum { M_VERSION, M_NAME, M_OPTIONS, M_GRAPHS, M_COUNT };
static const char *const k_model_keys[M_COUNT] = {"graphmem", "name", "options", "graphs"};

static gm_status read_model(jr *r, const cJSON *root)
{
    if (!cJSON_IsObject(root)) return fail(r, "", "the top level must be an object, not %s", json_type_name(root));
    const cJSON *f[M_COUNT];
    gm_status st = take_fields(r, "", root, k_model_keys, M_COUNT, f);
    if (st != GM_OK) return st;

    int64_t version = 0;
    if (!f[M_VERSION]) return fail(r, "", "missing field 'graphmem' (the format version, 1)");
    if (!get_int(r, f[M_VERSION], &version))
        return fail(r, "", "field 'graphmem' (the format version) must be the integer 1, not %s",
                    json_type_name(f[M_VERSION]));
    if (version != 1)
        return fail(r, "", "unsupported format version %lld (this graphmem reads version 1)", (long long)version);
    const char *name = "";
    if ((st = get_string_field(r, "", "name", f[M_NAME], &name)) != GM_OK) return st;
    if (!f[M_GRAPHS]) return fail(r, "", "missing field 'graphs'");
    if (!cJSON_IsArray(f[M_GRAPHS])) return want(r, "", "graphs", f[M_GRAPHS], "an array of graphs");
    if (!f[M_GRAPHS]->child) return fail(r, "", "field 'graphs' is empty (the first graph is the root)");

    if (!(r->m = gm_model_new(name)) || gm_model_set_source(r->m, r->src) != GM_OK) return oom(r);
    if (f[M_OPTIONS] && (st = read_options(r, f[M_OPTIONS])) != GM_OK) return st;
    size_t i = 0;
    for (const cJSON *g = f[M_GRAPHS]->child; g; g = g->next, i++) {
        if ((st = read_graph(r, i, g)) != GM_OK) return st;
    }
    return gm_model_finalize(r->m, r->err);
}

/* ---- entry point ----------------------------------------------------------------------- */

static bool only_space(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r') return false;
    }
    return true;
}

/* cJSON reports where it stopped; say whether the text simply ended there. */
static gm_status malformed(jr *r, const char *stop)
{
    size_t off = stop && stop >= r->text && stop <= r->text + r->len ? (size_t)(stop - r->text) : r->len;
    if (only_space(r->text, r->len)) return fail_at(r, r->len, "malformed JSON: the text is empty");
    if (off + 1 >= r->len && only_space(r->text + off, r->len - off))
        return fail_at(r, r->len, "malformed JSON: unexpected end of text");
    char near[24];
    size_t k = 0;
    for (size_t i = off; i < r->len && k < 16 && r->text[i] != '\n' && r->text[i] != '\r'; i++) near[k++] = r->text[i];
    near[k] = '\0';
    return fail_at(r, off, "malformed JSON near '%s'", near);
}

gm_status gm_model_read_json(const char *text, size_t len, const char *source, gm_model **out, gm_error *err)
{
    *out = NULL;
    jr r = {.src = source ? source : "", .text = text, .len = len, .err = err};
    /* A UTF-8 byte order mark is allowed (some editors write one); positions count after it. */
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
        r.text += 3;
        r.len -= 3;
    }
    size_t bad;
    if (!gm_utf8_valid(r.text, r.len, &bad))
        return fail_at(&r, bad, "the text is not valid UTF-8 (byte 0x%02x)", (unsigned char)r.text[bad]);

    const char *end = NULL;
    cJSON *root = r.len ? cJSON_ParseWithLengthOpts(r.text, r.len, &end, false) : NULL;
    if (!root) return malformed(&r, end);
    gm_status st = GM_OK;
    size_t used = end ? (size_t)(end - r.text) : r.len;
    if (used < r.len && !only_space(end, r.len - used) && !(r.text[used] == '\0' && used + 1 == r.len))
        st = fail_at(&r, used, "malformed JSON: text after the end of the model");
    if (st == GM_OK) st = prescan(&r);
    size_t k = 0;
    if (st == GM_OK && (!tag_numbers(&r, root, &k) || k != r.n_toks))
        st = gm_error_set(err, GM_ERR_INTERNAL, "%s: number scan disagrees with the JSON parser", r.src);
    if (st == GM_OK) st = read_model(&r, root);
    cJSON_Delete(root);
    gm_free(r.toks);
    if (st != GM_OK) {
        gm_model_free(r.m);
        return st;
    }
    *out = r.m;
    return GM_OK;
}
