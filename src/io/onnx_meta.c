/*
 * onnx_meta.c — the text codec of graphmem's records in ONNX files: attribute values of every
 * kind, tensor descs and whole node descriptions, as short ASCII text that survives any ONNX
 * tool (it lives in string attributes and doc_strings) and reads back exactly.
 *
 * Grammar (tokens separated by spaces):
 *   value  := b 0|1 | i INT | f FLOAT | s STR | y STR | li [INT*] | lf [FLOAT*] | ls [STR*]
 *           | lb [0|1*] | lli [[INT*]*] | td desc
 *   desc   := { (dt NAME | sh [INT*] | ns | sz INT | mt NAME | ri INT | ly STR | a attrs)* }
 *   attrs  := { (STR value)* }
 *   record := { (n STR | t STR | p INT | st INT | c [STR*] | in [STR*] | on [STR*] | a attrs
 *               | o [desc*] | id [desc*])* }
 * STR is double-quoted with \" \\ and \xHH for every byte outside printable ASCII; FLOAT is the
 * shortest %g text that reads back to the same double (inf, -inf, nan spelled so); NAME is
 * graphmem's dtype or memory-type name. `ns` = no shape given (ndims -1).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/onnx_internal.h"
#include "ir/ir.h"
#include "util/alloc.h"

/* Nesting of tensor-desc attributes inside descs: deeper text is refused, not recursed into. */
#define MAX_DEPTH 32

/* ---- encoding ------------------------------------------------------------------------------ */

void gm_onnx_text_free(gm_onnx_text *t)
{
    gm_free(t->p);
    memset(t, 0, sizeof *t);
}

static void put(gm_onnx_text *t, const char *s, size_t n)
{
    if (t->oom) return;
    if (gm_grow((void **)&t->p, 1, t->len + n + 1, &t->cap)) {
        t->oom = true;
        return;
    }
    memcpy(t->p + t->len, s, n);
    t->len += n;
    t->p[t->len] = '\0';
}

/* A token, preceded by a space unless it opens the text or follows an opening bracket. */
static void tok(gm_onnx_text *t, const char *s)
{
    if (t->len && t->p && t->p[t->len - 1] != '{' && t->p[t->len - 1] != '[') put(t, " ", 1);
    put(t, s, strlen(s));
}

static void tok_close(gm_onnx_text *t, const char *s) { put(t, s, strlen(s)); }

static void tok_int(gm_onnx_text *t, int64_t v)
{
    char b[32];
    snprintf(b, sizeof b, "%" PRId64, v);
    tok(t, b);
}

static void tok_float(gm_onnx_text *t, double v)
{
    char b[48];
    if (isnan(v)) snprintf(b, sizeof b, "nan");
    else if (isinf(v)) snprintf(b, sizeof b, v > 0 ? "inf" : "-inf");
    else {
        for (int prec = 15; prec <= 17; prec++) {
            snprintf(b, sizeof b, "%.*g", prec, v);
            if (strtod(b, NULL) == v) break;
        }
    }
    tok(t, b);
}

static void tok_str(gm_onnx_text *t, const char *s, size_t n)
{
    tok(t, "\"");
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
            run++;
            continue;
        }
        put(t, s + i - run, run);
        run = 0;
        char e[8];
        if (c == '"' || c == '\\') snprintf(e, sizeof e, "\\%c", c);
        else snprintf(e, sizeof e, "\\x%02x", c);
        put(t, e, strlen(e));
    }
    put(t, s + n - run, run);
    put(t, "\"", 1);
}

static void tok_cstr(gm_onnx_text *t, const char *s) { tok_str(t, s ? s : "", s ? strlen(s) : 0); }

/* Attributes count unless they are some format's kept protobuf, which the record leaves out. */
static bool has_attrs(const gm_attr *a)
{
    while (a && gm_attr_is_kept_proto(a->name)) a = a->next;
    return a != NULL;
}

bool gm_onnx_desc_has_rest(const gm_tensor_desc *d)
{
    return d->size_given || d->mem_type_given || d->reuse_input || d->layout || has_attrs(d->attrs);
}

void gm_onnx_enc_desc(gm_onnx_text *t, const gm_tensor_desc *d, unsigned fields)
{
    tok(t, "{");
    if (fields & GM_ONNX_DESC_DTYPE) {
        tok(t, "dt");
        tok(t, gm_dtype_name(d->dtype));
    }
    if (fields & GM_ONNX_DESC_SHAPE) {
        if (d->ndims < 0) {
            tok(t, "ns");
        } else {
            tok(t, "sh");
            tok(t, "[");
            for (int32_t i = 0; i < d->ndims; i++) tok_int(t, d->dims[i]);
            tok_close(t, "]");
        }
    }
    if (fields & GM_ONNX_DESC_REST) {
        if (d->size_given) {
            tok(t, "sz");
            tok_int(t, d->size);
        }
        if (d->mem_type_given) {
            tok(t, "mt");
            tok(t, gm_mem_type_name(d->mem_type));
        }
        if (d->reuse_input) {
            tok(t, "ri");
            tok_int(t, d->reuse_input_index);
        }
        if (d->layout) {
            tok(t, "ly");
            tok_cstr(t, d->layout);
        }
        if (d->attrs) {
            tok(t, "a");
            gm_onnx_enc_attrs(t, d->attrs);
        }
    }
    tok_close(t, "}");
}

void gm_onnx_enc_value(gm_onnx_text *t, const gm_attr *a)
{
    size_t i, j;
    switch (a->kind) {
    case GM_ATTR_BOOL: tok(t, "b"); tok_int(t, a->u.b); return;
    case GM_ATTR_INT: tok(t, "i"); tok_int(t, a->u.i); return;
    case GM_ATTR_FLOAT: tok(t, "f"); tok_float(t, a->u.f); return;
    case GM_ATTR_STRING: tok(t, "s"); tok_str(t, a->u.s.data, a->u.s.len); return;
    case GM_ATTR_BYTES: tok(t, "y"); tok_str(t, a->u.s.data, a->u.s.len); return;
    case GM_ATTR_TENSOR_DESC: tok(t, "td"); gm_onnx_enc_desc(t, a->u.td, GM_ONNX_DESC_ALL); return;
    case GM_ATTR_LIST_INT:
        tok(t, "li");
        tok(t, "[");
        for (i = 0; i < a->u.li.n; i++) tok_int(t, a->u.li.v[i]);
        break;
    case GM_ATTR_LIST_FLOAT:
        tok(t, "lf");
        tok(t, "[");
        for (i = 0; i < a->u.lf.n; i++) tok_float(t, a->u.lf.v[i]);
        break;
    case GM_ATTR_LIST_STRING:
        tok(t, "ls");
        tok(t, "[");
        for (i = 0; i < a->u.ls.n; i++) tok_cstr(t, a->u.ls.v[i]);
        break;
    case GM_ATTR_LIST_BOOL:
        tok(t, "lb");
        tok(t, "[");
        for (i = 0; i < a->u.lb.n; i++) tok_int(t, a->u.lb.v[i]);
        break;
    case GM_ATTR_LIST_LIST_INT:
        tok(t, "lli");
        tok(t, "[");
        for (i = 0; i < a->u.lli.n; i++) {
            tok(t, "[");
            for (j = 0; j < a->u.lli.lens[i]; j++) tok_int(t, a->u.lli.rows[i][j]);
            tok_close(t, "]");
        }
        break;
    default: tok(t, "?"); return;
    }
    tok_close(t, "]");
}

void gm_onnx_enc_attrs(gm_onnx_text *t, const gm_attr *list)
{
    tok(t, "{");
    for (const gm_attr *a = list; a; a = a->next) {
        /* ONNX's: the initializer or value_info itself carries it; GE's residual: GE's alone */
        if (gm_attr_is_kept_proto(a->name)) continue;
        tok_cstr(t, a->name);
        gm_onnx_enc_value(t, a);
    }
    tok_close(t, "}");
}

void gm_onnx_enc_record(gm_onnx_text *t, const gm_node *n, uint32_t pos)
{
    tok(t, "{");
    tok(t, "n");
    tok_cstr(t, n->name);
    tok(t, "t");
    tok_cstr(t, n->type);
    tok(t, "p");
    tok_int(t, pos);
    if (n->stream != 0) {
        tok(t, "st");
        tok_int(t, n->stream);
    }
    if (n->ctrl_in.n) {
        tok(t, "c");
        tok(t, "[");
        for (uint32_t i = 0; i < n->ctrl_in.n; i++) tok_cstr(t, n->ctrl_in.v[i]->name);
        tok_close(t, "]");
    }
    bool any = false;
    for (uint32_t i = 0; i < n->n_in; i++) any |= n->in_name[i] != NULL;
    if (any) {
        tok(t, "in");
        tok(t, "[");
        for (uint32_t i = 0; i < n->n_in; i++) tok_cstr(t, n->in_name[i]);
        tok_close(t, "]");
    }
    any = false;
    for (uint32_t k = 0; k < n->n_out; k++) any |= n->out[k].name != NULL;
    if (any) {
        tok(t, "on");
        tok(t, "[");
        for (uint32_t k = 0; k < n->n_out; k++) tok_cstr(t, n->out[k].name);
        tok_close(t, "]");
    }
    if (n->attrs) {
        tok(t, "a");
        gm_onnx_enc_attrs(t, n->attrs);
    }
    tok(t, "o");
    tok(t, "[");
    for (uint32_t k = 0; k < n->n_out; k++) gm_onnx_enc_desc(t, &n->out[k].desc, GM_ONNX_DESC_ALL);
    tok_close(t, "]");
    uint32_t last = 0;
    for (uint32_t i = 0; i < n->n_in; i++) {
        if (!gm_desc_is_blank(&n->in_desc[i])) last = i + 1;
    }
    if (last) {
        tok(t, "id");
        tok(t, "[");
        for (uint32_t i = 0; i < last; i++) gm_onnx_enc_desc(t, &n->in_desc[i], GM_ONNX_DESC_ALL);
        tok_close(t, "]");
    }
    tok_close(t, "}");
}

/* ---- decoding ------------------------------------------------------------------------------ */

typedef struct lx {
    const char *p, *start, *end;
    char *why;
    size_t cap;
    gm_status st;
    int depth;
} lx;

static bool fail(lx *l, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static bool fail(lx *l, const char *fmt, ...)
{
    if (l->st != GM_OK) return false;
    l->st = GM_ERR_INPUT;
    if (l->why && l->cap) {
        char msg[160];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        snprintf(l->why, l->cap, "%s at offset %td", msg, l->p - l->start);
    }
    return false;
}

static bool oom(lx *l)
{
    if (l->st == GM_OK) l->st = GM_ERR_NOMEM;
    if (l->why && l->cap) snprintf(l->why, l->cap, "out of memory");
    return false;
}

static void skip_ws(lx *l)
{
    while (l->p < l->end && (*l->p == ' ' || *l->p == '\n' || *l->p == '\t' || *l->p == '\r')) l->p++;
}

static bool peek(lx *l, char c)
{
    skip_ws(l);
    return l->p < l->end && *l->p == c;
}

static bool punct(lx *l, char c)
{
    if (l->st != GM_OK) return false;
    if (!peek(l, c)) return fail(l, "expected '%c'", c);
    l->p++;
    return true;
}

static bool is_word_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           c == '+' || c == '-';
}

static bool word(lx *l, char *buf, size_t cap)
{
    if (l->st != GM_OK) return false;
    skip_ws(l);
    size_t n = 0;
    while (l->p < l->end && is_word_char(*l->p)) {
        if (n + 1 >= cap) return fail(l, "word too long");
        buf[n++] = *l->p++;
    }
    buf[n] = '\0';
    return n ? true : fail(l, "expected a word");
}

static bool read_int(lx *l, int64_t *v)
{
    char b[32];
    if (!word(l, b, sizeof b)) return false;
    char *e;
    errno = 0;
    long long x = strtoll(b, &e, 10);
    if (errno || *e) return fail(l, "bad integer '%s'", b);
    *v = x;
    return true;
}

static bool read_float(lx *l, double *v)
{
    char b[64];
    if (!word(l, b, sizeof b)) return false;
    char *e;
    double x = strtod(b, &e);
    if (*e) return fail(l, "bad number '%s'", b);
    *v = x;
    return true;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* A quoted string into a fresh NUL-terminated buffer. */
static bool read_str(lx *l, char **out, size_t *len)
{
    *out = NULL;
    if (!punct(l, '"')) return false;
    const char *q = l->p;
    size_t n = 0; /* decoded length: at most the raw length */
    while (q < l->end && *q != '"') {
        if (*q == '\\') q++;
        q++;
    }
    if (q >= l->end) return fail(l, "unterminated string");
    char *s = gm_malloc((size_t)(q - l->p) + 1);
    if (!s) return oom(l);
    while (*l->p != '"') {
        char c = *l->p++;
        if (c == '\\') {
            char e = *l->p++;
            if (e == 'x') {
                int hi = l->p + 1 < q ? hexval(l->p[0]) : -1, lo = l->p + 1 < q ? hexval(l->p[1]) : -1;
                if (hi < 0 || lo < 0) {
                    gm_free(s);
                    return fail(l, "bad \\x escape");
                }
                c = (char)(hi * 16 + lo);
                l->p += 2;
            } else if (e == '"' || e == '\\') {
                c = e;
            } else {
                gm_free(s);
                return fail(l, "bad escape");
            }
        }
        s[n++] = c;
    }
    l->p++;
    s[n] = '\0';
    *out = s;
    if (len) *len = n;
    return true;
}

/* Growing arrays of decoded list items. */
#define PUSH(arr, n, cap, v)                                                                       \
    do {                                                                                           \
        if (gm_grow((void **)&(arr), sizeof *(arr), (n) + 1, &(cap))) ok = oom(l);                 \
        else (arr)[(n)++] = (v);                                                                   \
    } while (0)

static bool dec_attrs(lx *l, gm_attr **list);

static bool dec_desc(lx *l, gm_tensor_desc *d)
{
    if (++l->depth > MAX_DEPTH) return fail(l, "nested too deeply");
    if (!punct(l, '{')) return false;
    bool ok = true;
    while (ok && l->st == GM_OK && !peek(l, '}')) {
        char k[8], nm[32];
        if (!word(l, k, sizeof k)) break;
        if (strcmp(k, "dt") == 0) {
            gm_dtype dt;
            if (word(l, nm, sizeof nm) && !gm_dtype_from_name(nm, &dt)) ok = fail(l, "unknown dtype '%s'", nm);
            else if (ok && l->st == GM_OK) d->dtype = dt;
        } else if (strcmp(k, "sh") == 0) {
            int64_t *dims = NULL, v = 0;
            size_t n = 0, cap = 0;
            if (punct(l, '[')) {
                while (ok && !peek(l, ']') && read_int(l, &v)) PUSH(dims, n, cap, v);
            }
            if (ok && punct(l, ']')) {
                if (n > INT32_MAX / 2) ok = fail(l, "shape too long");
                else if (gm_desc_set_shape(d, dims, (int32_t)n) != GM_OK) ok = oom(l);
            }
            gm_free(dims);
        } else if (strcmp(k, "ns") == 0) {
            gm_desc_set_shape(d, NULL, -1);
        } else if (strcmp(k, "sz") == 0) {
            int64_t v = 0;
            if (read_int(l, &v)) gm_desc_set_size(d, v);
        } else if (strcmp(k, "mt") == 0) {
            gm_mem_type mt;
            if (word(l, nm, sizeof nm) && !gm_mem_type_from_name(nm, &mt)) ok = fail(l, "unknown memory type '%s'", nm);
            else if (ok && l->st == GM_OK) gm_desc_set_mem_type(d, mt);
        } else if (strcmp(k, "ri") == 0) {
            int64_t v = 0;
            if (read_int(l, &v)) gm_desc_set_reuse_input(d, true, v);
        } else if (strcmp(k, "ly") == 0) {
            char *s;
            if (read_str(l, &s, NULL)) {
                if (gm_desc_set_layout(d, s) != GM_OK) ok = oom(l);
                gm_free(s);
            }
        } else if (strcmp(k, "a") == 0) {
            ok = dec_attrs(l, &d->attrs);
        } else {
            ok = fail(l, "unknown desc field '%s'", k);
        }
    }
    l->depth--;
    return l->st == GM_OK && punct(l, '}');
}

static bool read_bool(lx *l, bool *b)
{
    int64_t v = 0;
    if (!read_int(l, &v)) return false;
    if (v != 0 && v != 1) return fail(l, "expected 0 or 1");
    *b = v != 0;
    return true;
}

/* Decodes "<kind> <payload>" into list[name]. */
static bool dec_value(lx *l, gm_attr **list, const char *name)
{
    char k[8];
    if (!word(l, k, sizeof k)) return false;
    bool ok = true;
    gm_status st = GM_OK;
    if (strcmp(k, "b") == 0) {
        bool b = false;
        if (read_bool(l, &b)) st = gm_attr_set_bool(list, name, b);
    } else if (strcmp(k, "i") == 0) {
        int64_t v = 0;
        if (read_int(l, &v)) st = gm_attr_set_int(list, name, v);
    } else if (strcmp(k, "f") == 0) {
        double v = 0;
        if (read_float(l, &v)) st = gm_attr_set_float(list, name, v);
    } else if (strcmp(k, "s") == 0 || strcmp(k, "y") == 0) {
        char *s;
        size_t n;
        if (read_str(l, &s, &n)) {
            /* A STRING holds no NUL (it is a C string); bytes may. */
            st = k[0] == 'y' || memchr(s, 0, n) ? gm_attr_set_bytes(list, name, s, n) : gm_attr_set_string(list, name, s);
            gm_free(s);
        }
    } else if (strcmp(k, "li") == 0 || strcmp(k, "lb") == 0 || strcmp(k, "lf") == 0) {
        int64_t *iv = NULL, x = 0;
        double *fv = NULL, f = 0;
        size_t n = 0, cap = 0;
        if (punct(l, '[')) {
            while (ok && l->st == GM_OK && !peek(l, ']')) {
                if (k[1] == 'f') {
                    if (read_float(l, &f)) PUSH(fv, n, cap, f);
                } else if (read_int(l, &x)) {
                    if (k[1] == 'b' && x != 0 && x != 1) ok = fail(l, "expected 0 or 1");
                    else PUSH(iv, n, cap, x);
                }
            }
        }
        if (ok && punct(l, ']')) {
            if (k[1] == 'f') {
                st = gm_attr_set_list_float(list, name, fv, n);
            } else if (k[1] == 'i') {
                st = gm_attr_set_list_int(list, name, iv, n);
            } else {
                bool *bv = gm_malloc(n ? n * sizeof *bv : 1);
                if (!bv) ok = oom(l);
                for (size_t i = 0; bv && i < n; i++) bv[i] = iv[i] != 0;
                if (bv) st = gm_attr_set_list_bool(list, name, bv, n);
                gm_free(bv);
            }
        }
        gm_free(iv);
        gm_free(fv);
    } else if (strcmp(k, "ls") == 0) {
        char **v = NULL, *s;
        size_t n = 0, cap = 0;
        if (punct(l, '[')) {
            while (ok && l->st == GM_OK && !peek(l, ']')) {
                if (!read_str(l, &s, NULL)) break;
                PUSH(v, n, cap, s);
                if (!ok) gm_free(s);
            }
        }
        if (ok && punct(l, ']')) st = gm_attr_set_list_string(list, name, (const char *const *)v, n);
        for (size_t i = 0; i < n; i++) gm_free(v[i]);
        gm_free(v);
    } else if (strcmp(k, "lli") == 0) {
        typedef struct { int64_t *v; size_t n; } row_t;
        row_t *rows = NULL;
        size_t n = 0, cap = 0;
        int64_t x = 0;
        if (punct(l, '[')) {
            while (ok && l->st == GM_OK && !peek(l, ']')) {
                if (gm_grow((void **)&rows, sizeof *rows, n + 1, &cap)) {
                    ok = oom(l);
                    break;
                }
                row_t *r = &rows[n++];
                size_t rcap = 0;
                *r = (row_t){NULL, 0};
                if (!punct(l, '[')) break;
                while (ok && l->st == GM_OK && !peek(l, ']') && read_int(l, &x)) PUSH(r->v, r->n, rcap, x);
                if (ok) punct(l, ']');
            }
        }
        if (ok && l->st == GM_OK && punct(l, ']')) {
            const int64_t **rv = gm_malloc((n ? n : 1) * sizeof *rv);
            size_t *lens = gm_malloc((n ? n : 1) * sizeof *lens);
            if (!rv || !lens) ok = oom(l);
            for (size_t i = 0; ok && i < n; i++) {
                rv[i] = rows[i].v;
                lens[i] = rows[i].n;
            }
            if (ok) st = gm_attr_set_list_list_int(list, name, rv, lens, n);
            gm_free(rv);
            gm_free(lens);
        }
        for (size_t i = 0; i < n; i++) gm_free(rows[i].v);
        gm_free(rows);
    } else if (strcmp(k, "td") == 0) {
        gm_tensor_desc d;
        gm_desc_init(&d);
        if (dec_desc(l, &d)) st = gm_attr_set_tensor_desc(list, name, &d);
        gm_desc_fini(&d);
    } else {
        return fail(l, "unknown value kind '%s'", k);
    }
    if (st != GM_OK) return oom(l);
    return ok && l->st == GM_OK;
}

static bool dec_attrs(lx *l, gm_attr **list)
{
    if (!punct(l, '{')) return false;
    while (l->st == GM_OK && !peek(l, '}')) {
        char *name;
        if (!read_str(l, &name, NULL)) return false;
        bool ok = dec_value(l, list, name);
        gm_free(name);
        if (!ok) return false;
    }
    return punct(l, '}');
}

static void lx_init(lx *l, const char *text, size_t len, char *why, size_t cap)
{
    *l = (lx){.p = text, .start = text, .end = text + len, .why = why, .cap = cap, .st = GM_OK};
    if (why && cap) why[0] = '\0';
}

/* The text must end after what was decoded. */
static gm_status finish(lx *l)
{
    if (l->st == GM_OK) {
        skip_ws(l);
        if (l->p != l->end) fail(l, "unexpected text");
    }
    return l->st;
}

gm_status gm_onnx_dec_value(const char *text, size_t len, gm_attr **list, const char *name, char *why, size_t cap)
{
    lx l;
    lx_init(&l, text, len, why, cap);
    dec_value(&l, list, name);
    return finish(&l);
}

gm_status gm_onnx_dec_desc(const char *text, size_t len, gm_tensor_desc *d, char *why, size_t cap)
{
    lx l;
    lx_init(&l, text, len, why, cap);
    dec_desc(&l, d);
    return finish(&l);
}

gm_status gm_onnx_dec_attrs(const char *text, size_t len, gm_attr **list, char *why, size_t cap)
{
    lx l;
    lx_init(&l, text, len, why, cap);
    dec_attrs(&l, list);
    return finish(&l);
}

void gm_onnx_record_free(gm_onnx_record *r)
{
    gm_free(r->name);
    gm_free(r->type);
    for (size_t i = 0; i < r->n_ctrl; i++) gm_free(r->ctrl[i]);
    gm_free(r->ctrl);
    for (size_t i = 0; i < r->n_in_names; i++) gm_free(r->in_names[i]);
    gm_free(r->in_names);
    for (size_t i = 0; i < r->n_out_names; i++) gm_free(r->out_names[i]);
    gm_free(r->out_names);
    gm_attr_list_free(r->attrs);
    for (size_t i = 0; i < r->n_outs; i++) gm_desc_fini(&r->outs[i]);
    gm_free(r->outs);
    for (size_t i = 0; i < r->n_ins; i++) gm_desc_fini(&r->ins[i]);
    gm_free(r->ins);
    memset(r, 0, sizeof *r);
}

static bool dec_strs(lx *l, char ***v, size_t *n)
{
    size_t cap = 0;
    bool ok = true;
    if (*v) return fail(l, "field given twice");
    if (!punct(l, '[')) return false;
    while (ok && l->st == GM_OK && !peek(l, ']')) {
        char *s;
        if (!read_str(l, &s, NULL)) return false;
        PUSH(*v, *n, cap, s);
        if (!ok) gm_free(s);
    }
    return ok && punct(l, ']');
}

static bool dec_descs(lx *l, gm_tensor_desc **v, size_t *n)
{
    size_t cap = 0;
    bool ok = true;
    if (*v) return fail(l, "field given twice");
    if (!punct(l, '[')) return false;
    while (ok && l->st == GM_OK && !peek(l, ']')) {
        if (gm_grow((void **)v, sizeof **v, *n + 1, &cap)) return oom(l);
        gm_desc_init(&(*v)[*n]);
        ++*n;
        ok = dec_desc(l, &(*v)[*n - 1]);
    }
    return ok && punct(l, ']');
}

gm_status gm_onnx_dec_record(const char *text, size_t len, gm_onnx_record *r, char *why, size_t cap)
{
    memset(r, 0, sizeof *r);
    lx l;
    lx_init(&l, text, len, why, cap);
    if (punct(&l, '{')) {
        while (l.st == GM_OK && !peek(&l, '}')) {
            char k[8];
            if (!word(&l, k, sizeof k)) break;
            char **s = strcmp(k, "n") == 0 ? &r->name : strcmp(k, "t") == 0 ? &r->type : NULL;
            if (s) {
                if (*s) fail(&l, "field given twice");
                else read_str(&l, s, NULL);
            } else if (strcmp(k, "p") == 0) {
                r->has_pos = read_int(&l, &r->pos);
            } else if (strcmp(k, "st") == 0) {
                read_int(&l, &r->stream);
            } else if (strcmp(k, "c") == 0) {
                dec_strs(&l, &r->ctrl, &r->n_ctrl);
            } else if (strcmp(k, "in") == 0) {
                dec_strs(&l, &r->in_names, &r->n_in_names);
            } else if (strcmp(k, "on") == 0) {
                dec_strs(&l, &r->out_names, &r->n_out_names);
            } else if (strcmp(k, "a") == 0) {
                dec_attrs(&l, &r->attrs);
            } else if (strcmp(k, "o") == 0) {
                dec_descs(&l, &r->outs, &r->n_outs);
            } else if (strcmp(k, "id") == 0) {
                dec_descs(&l, &r->ins, &r->n_ins);
            } else {
                fail(&l, "unknown record field '%s'", k);
            }
        }
        punct(&l, '}');
    }
    if (finish(&l) == GM_OK && (!r->name || !r->type)) fail(&l, "a record needs a name (n) and a type (t)");
    if (l.st != GM_OK) gm_onnx_record_free(r);
    return l.st;
}
