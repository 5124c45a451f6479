/*
 * json_write.c — the JSON model writer (spec/graph-format.md, version 1).
 *
 * Writes only what differs from the defaults, in a fixed key order, one value per line with
 * one-space indents (the layout of Python's json.dumps(indent=1), which the shared models
 * use), so output is deterministic and diffs well, and write(read(write(read(x)))) equals
 * write(read(x)) byte for byte.
 *
 * The text is produced by a small emitter rather than cJSON's printer: cJSON prints numbers
 * from doubles (int64 sizes above 2^53 would change) and only indents with tabs.
 *
 * Values a plain JSON value cannot carry use typed one-key objects that the reader knows:
 * {"tensor_desc": {...}} for TENSOR_DESC attributes and {"bytes_base64": "..."} for BYTES
 * (and for a STRING that is not valid UTF-8, which then reads back as BYTES). Limitations of
 * the format, by design: an empty list of an attribute the attr table does not know reads
 * back as list_int (the text [] has no element type); a NaN float cannot be written (JSON has
 * no NaN: an error), infinities are written as 1e999 / -1e999, which read back as infinities.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graphmem/io.h"
#include "ir/ir.h"
#include "util/alloc.h"
#include "util/utf8.h"

/* ---- emitter --------------------------------------------------------------------------- */

typedef struct jw {
    char *buf;
    size_t len, cap;
    gm_status st;       /* first failure; later output is dropped */
    char why[512];      /* its message, for GM_ERR_INPUT */
    uint32_t *count;    /* members written so far, per open container */
    size_t depth, cap_depth;
    bool after_key;     /* the next value follows "key": on the same line */
    const gm_model *m;  /* for messages: */
    const char *graph, *node, *what;
} jw;

static void put(jw *w, const char *s, size_t n)
{
    if (w->st != GM_OK) return;
    if (w->len + n + 1 > w->cap && gm_grow((void **)&w->buf, 1, w->len + n + 1, &w->cap)) {
        w->st = GM_ERR_NOMEM;
        return;
    }
    memcpy(w->buf + w->len, s, n);
    w->len += n;
    w->buf[w->len] = '\0';
}

static void puts_(jw *w, const char *s) { put(w, s, strlen(s)); }

/* Records a GM_ERR_INPUT failure that names the place being written. */
static void jw_fail(jw *w, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void jw_fail(jw *w, const char *fmt, ...)
{
    if (w->st != GM_OK) return;
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const char *src = gm_model_source(w->m);
    int k = snprintf(w->why, sizeof w->why, "%s", *src ? src : gm_model_name(w->m));
    if (k < 0) k = 0;
    size_t off = (size_t)k < sizeof w->why ? (size_t)k : sizeof w->why - 1;
    if (w->graph) off += (size_t)snprintf(w->why + off, sizeof w->why - off, ": graph '%s'", w->graph);
    if (off < sizeof w->why && w->node)
        off += (size_t)snprintf(w->why + off, sizeof w->why - off, ": node '%s'", w->node);
    if (off < sizeof w->why && w->what) off += (size_t)snprintf(w->why + off, sizeof w->why - off, ": %s", w->what);
    if (off < sizeof w->why) snprintf(w->why + off, sizeof w->why - off, ": %s", msg);
    w->st = GM_ERR_INPUT;
}

static void newline_indent(jw *w)
{
    static const char spaces[] = "                                ";
    put(w, "\n", 1);
    for (size_t d = w->depth; d > 0;) {
        size_t n = d < sizeof spaces - 1 ? d : sizeof spaces - 1;
        put(w, spaces, n);
        d -= n;
    }
}

/* Separator and line break before a member of the open container. */
static void item(jw *w)
{
    if (w->after_key) {
        w->after_key = false;
        return;
    }
    if (w->depth == 0) return;
    if (w->count[w->depth - 1]++) put(w, ",", 1);
    newline_indent(w);
}

static void open_(jw *w, char c)
{
    item(w);
    put(w, &c, 1);
    if (w->st != GM_OK) return;
    if (gm_grow((void **)&w->count, sizeof *w->count, w->depth + 1, &w->cap_depth)) {
        w->st = GM_ERR_NOMEM;
        return;
    }
    w->count[w->depth++] = 0;
}

static void close_(jw *w, char c)
{
    if (w->st != GM_OK) return;
    uint32_t had = w->count[--w->depth];
    if (had) newline_indent(w);
    put(w, &c, 1);
}

/* A JSON string. The text must be UTF-8: the output has to be readable back. */
static void str(jw *w, const char *s)
{
    item(w);
    size_t n = strlen(s);
    if (!gm_utf8_valid(s, n, NULL)) {
        jw_fail(w, "a name or string is not valid UTF-8");
        return;
    }
    put(w, "\"", 1);
    size_t run = 0; /* bytes copied as they are, flushed before each escape */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        const char *esc = NULL;
        char u[8];
        switch (c) {
        case '"': esc = "\\\""; break;
        case '\\': esc = "\\\\"; break;
        case '\n': esc = "\\n"; break;
        case '\r': esc = "\\r"; break;
        case '\t': esc = "\\t"; break;
        case '\b': esc = "\\b"; break;
        case '\f': esc = "\\f"; break;
        default:
            if (c < 0x20) {
                snprintf(u, sizeof u, "\\u%04x", c);
                esc = u;
            }
        }
        if (!esc) {
            run++;
            continue;
        }
        put(w, s + i - run, run);
        run = 0;
        puts_(w, esc);
    }
    put(w, s + n - run, run);
    put(w, "\"", 1);
}

static void key(jw *w, const char *k)
{
    str(w, k);
    put(w, ": ", 2);
    w->after_key = true;
}

static void int_(jw *w, int64_t v)
{
    char b[32];
    item(w);
    snprintf(b, sizeof b, "%" PRId64, v);
    puts_(w, b);
}

static void bool_(jw *w, bool v)
{
    item(w);
    puts_(w, v ? "true" : "false");
}

/* The shortest %g text that reads back to exactly v, always with a '.' or an exponent so
 * that it reads back as a float, not an int. */
static void float_(jw *w, double v)
{
    if (isnan(v)) {
        jw_fail(w, "NaN cannot be written in JSON");
        return;
    }
    item(w);
    if (isinf(v)) {
        puts_(w, v > 0 ? "1e999" : "-1e999");
        return;
    }
    char b[40];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(b, sizeof b, "%.*g", prec, v);
        if (strtod(b, NULL) == v) break;
    }
    if (!strpbrk(b, ".eE")) strcat(b, ".0");
    puts_(w, b);
}

static void kv_str(jw *w, const char *k, const char *v)
{
    key(w, k);
    str(w, v);
}

static void kv_int(jw *w, const char *k, int64_t v)
{
    key(w, k);
    int_(w, v);
}

/* ---- base64 ---------------------------------------------------------------------------- */

static void base64(jw *w, const unsigned char *p, size_t n)
{
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    item(w);
    put(w, "\"", 1);
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16;
        if (i + 1 < n) v |= (uint32_t)p[i + 1] << 8;
        if (i + 2 < n) v |= p[i + 2];
        char q[4] = {a[v >> 18 & 63], a[v >> 12 & 63], i + 1 < n ? a[v >> 6 & 63] : '=', i + 2 < n ? a[v & 63] : '='};
        put(w, q, 4);
    }
    put(w, "\"", 1);
}

/* ---- attributes and descs -------------------------------------------------------------- */

static void write_desc(jw *w, const gm_tensor_desc *d);

static void write_bytes(jw *w, const char *data, size_t len)
{
    open_(w, '{');
    key(w, "bytes_base64");
    base64(w, (const unsigned char *)data, len);
    close_(w, '}');
}

static void write_attr_value(jw *w, const gm_attr *a)
{
    size_t i, j;
    switch (a->kind) {
    case GM_ATTR_BOOL: bool_(w, a->u.b); return;
    case GM_ATTR_INT: int_(w, a->u.i); return;
    case GM_ATTR_FLOAT: float_(w, a->u.f); return;
    case GM_ATTR_STRING:
        if (gm_utf8_valid(a->u.s.data, a->u.s.len, NULL)) str(w, a->u.s.data);
        else write_bytes(w, a->u.s.data, a->u.s.len);
        return;
    case GM_ATTR_BYTES: write_bytes(w, a->u.s.data, a->u.s.len); return;
    case GM_ATTR_TENSOR_DESC:
        open_(w, '{');
        key(w, "tensor_desc");
        write_desc(w, a->u.td);
        close_(w, '}');
        return;
    default: break;
    }
    open_(w, '[');
    switch (a->kind) {
    case GM_ATTR_LIST_INT:
        for (i = 0; i < a->u.li.n; i++) int_(w, a->u.li.v[i]);
        break;
    case GM_ATTR_LIST_FLOAT:
        for (i = 0; i < a->u.lf.n; i++) float_(w, a->u.lf.v[i]);
        break;
    case GM_ATTR_LIST_STRING:
        for (i = 0; i < a->u.ls.n; i++) str(w, a->u.ls.v[i]);
        break;
    case GM_ATTR_LIST_BOOL:
        for (i = 0; i < a->u.lb.n; i++) bool_(w, a->u.lb.v[i]);
        break;
    case GM_ATTR_LIST_LIST_INT:
        for (i = 0; i < a->u.lli.n; i++) {
            open_(w, '[');
            for (j = 0; j < a->u.lli.lens[i]; j++) int_(w, a->u.lli.rows[i][j]);
            close_(w, ']');
        }
        break;
    default:
        if (w->st == GM_OK) w->st = GM_ERR_INTERNAL;
        break;
    }
    close_(w, ']');
}

static void write_attrs(jw *w, const gm_attr *list)
{
    if (!list) return;
    const char *outer = w->what;
    char what[300];
    key(w, "attrs");
    open_(w, '{');
    for (const gm_attr *a = list; a; a = a->next) {
        snprintf(what, sizeof what, "%s%sattribute '%s'", outer ? outer : "", outer ? ": " : "", a->name);
        w->what = what;
        key(w, a->name);
        write_attr_value(w, a);
    }
    w->what = outer;
    close_(w, '}');
}

static void write_desc(jw *w, const gm_tensor_desc *d)
{
    open_(w, '{');
    if (d->dtype != GM_DT_UNDEFINED) kv_str(w, "dtype", gm_dtype_name(d->dtype));
    if (d->ndims >= 0) {
        key(w, "shape");
        open_(w, '[');
        for (int32_t i = 0; i < d->ndims; i++) int_(w, d->dims[i]);
        close_(w, ']');
    }
    if (d->size_given) kv_int(w, "size", d->size);
    if (d->reuse_input) {
        key(w, "reuse_input");
        bool_(w, true);
        kv_int(w, "reuse_input_index", d->reuse_input_index);
    }
    if (d->mem_type_given) kv_str(w, "memory_type", gm_mem_type_name(d->mem_type));
    if (d->layout) kv_str(w, "layout", d->layout);
    write_attrs(w, d->attrs);
    close_(w, '}');
}

static bool desc_is_default(const gm_tensor_desc *d)
{
    return d->dtype == GM_DT_UNDEFINED && d->ndims < 0 && !d->size_given && !d->mem_type_given &&
           !d->reuse_input && !d->layout && !d->attrs;
}

/* ---- nodes, graphs, model -------------------------------------------------------------- */

static void write_inputs(jw *w, const gm_node *n)
{
    if (!n->n_in) return;
    key(w, "inputs");
    open_(w, '[');
    for (uint32_t i = 0; i < n->n_in; i++) {
        const gm_in_slot *s = &n->in[i];
        /* Resolved edges name their producer; an unfinalized model still has the name. */
        const char *src = s->src ? s->src->name : s->src_name;
        if (!src) {
            str(w, "");
            continue;
        }
        size_t len = strlen(src);
        char *t = gm_malloc(len + 16);
        if (!t) {
            w->st = w->st == GM_OK ? GM_ERR_NOMEM : w->st;
            return;
        }
        snprintf(t, len + 16, "%s:%" PRId32, src, s->src_index);
        str(w, t);
        gm_free(t);
    }
    close_(w, ']');
}

static void write_links(jw *w, const gm_node *n)
{
    /* Control inputs: the resolved edges, then any names still waiting for gm_model_finalize
     * (it frees the names it resolves, so none is written twice). */
    if (n->ctrl_in.n + n->n_ctrl_in_names > 0) {
        key(w, "control_inputs");
        open_(w, '[');
        for (uint32_t i = 0; i < n->ctrl_in.n; i++) str(w, n->ctrl_in.v[i]->name);
        for (uint32_t i = 0; i < n->n_ctrl_in_names; i++) str(w, n->ctrl_in_names[i]);
        close_(w, ']');
    }
    if (n->stream != 0) kv_int(w, "stream", n->stream);
    if (n->n_sub) {
        key(w, "subgraphs");
        open_(w, '[');
        for (uint32_t i = 0; i < n->n_sub; i++) {
            const char *s = n->sub[i] ? n->sub[i]->name : n->sub_names ? n->sub_names[i] : NULL;
            str(w, s ? s : "");
        }
        close_(w, ']');
    }
}

static void write_descs(jw *w, const gm_node *n)
{
    char what[64];
    if (n->n_out) {
        key(w, "outputs");
        open_(w, '[');
        for (uint32_t k = 0; k < n->n_out; k++) {
            snprintf(what, sizeof what, "output %" PRIu32, k);
            w->what = what;
            write_desc(w, &n->out[k].desc);
        }
        w->what = NULL;
        close_(w, ']');
    }
    /* Input descs up to the last one that says something; earlier defaults as {}. */
    uint32_t last = 0;
    for (uint32_t i = 0; i < n->n_in; i++) {
        if (!desc_is_default(&n->in_desc[i])) last = i + 1;
    }
    if (last) {
        key(w, "input_descs");
        open_(w, '[');
        for (uint32_t i = 0; i < last; i++) {
            snprintf(what, sizeof what, "input_descs[%" PRIu32 "]", i);
            w->what = what;
            write_desc(w, &n->in_desc[i]);
        }
        w->what = NULL;
        close_(w, ']');
    }
}

static const char *in_name_at(const gm_node *n, size_t i) { return n->in_name[i]; }
static const char *out_name_at(const gm_node *n, size_t k) { return n->out[k].name; }

/* input_names / output_names only when some name was set explicitly; "" keeps a slot's
 * default (the reader reads "" the same way). */
static void write_names(jw *w, const char *k, const gm_node *n, size_t count,
                        const char *(*name_at)(const gm_node *, size_t))
{
    size_t i = 0;
    while (i < count && !name_at(n, i)) i++;
    if (i == count) return;
    key(w, k);
    open_(w, '[');
    for (i = 0; i < count; i++) {
        const char *s = name_at(n, i);
        str(w, s ? s : "");
    }
    close_(w, ']');
}

static void write_node(jw *w, const gm_node *n)
{
    w->node = n->name;
    open_(w, '{');
    kv_str(w, "name", n->name);
    kv_str(w, "type", n->type);
    write_inputs(w, n);
    write_links(w, n);
    write_descs(w, n);
    write_names(w, "input_names", n, n->n_in, in_name_at);
    write_names(w, "output_names", n, n->n_out, out_name_at);
    write_attrs(w, n->attrs);
    close_(w, '}');
    w->node = NULL;
}

static void write_graph(jw *w, const gm_graph *g, bool root)
{
    w->graph = g->name;
    open_(w, '{');
    kv_str(w, "name", g->name);
    if (!root) {
        const char *p = g->parent ? g->parent->name : g->parent_name;
        kv_str(w, "parent", p ? p : "");
    }
    write_attrs(w, g->attrs);
    key(w, "nodes");
    open_(w, '[');
    for (uint32_t i = 0; i < g->nodes.n; i++) {
        if (!g->nodes.v[i]->dead) write_node(w, g->nodes.v[i]);
    }
    close_(w, ']');
    close_(w, '}');
    w->graph = NULL;
}

gm_status gm_model_write_json(const gm_model *m, char **text, size_t *len, gm_error *err)
{
    *text = NULL;
    if (len) *len = 0;
    jw w = {.m = m};
    open_(&w, '{');
    kv_int(&w, "graphmem", 1);
    kv_str(&w, "name", m->name);
    if (m->n_options) {
        key(&w, "options");
        open_(&w, '{');
        for (size_t i = 0; i < m->n_options; i++) kv_str(&w, m->options[i].key, m->options[i].value);
        close_(&w, '}');
    }
    key(&w, "graphs");
    open_(&w, '[');
    for (size_t i = 0; i < m->n_graphs; i++) write_graph(&w, m->graphs[i], i == 0);
    close_(&w, ']');
    close_(&w, '}');
    put(&w, "\n", 1);
    gm_free(w.count);
    if (w.st != GM_OK) {
        gm_free(w.buf);
        if (w.st == GM_ERR_INPUT) return gm_error_set(err, GM_ERR_INPUT, "%s", w.why);
        const char *src = *m->source ? m->source : m->name;
        if (w.st == GM_ERR_NOMEM) return gm_error_set(err, GM_ERR_NOMEM, "%s: out of memory", src);
        return gm_error_set(err, w.st, "%s: cannot write JSON (bad attribute kind)", src);
    }
    *text = w.buf;
    if (len) *len = w.len;
    return GM_OK;
}
