/*
 * json_write.c — the JSON model writer (docs/graph-format.md, version 1).
 *
 * Writes only what differs from the defaults, in a fixed key order, one value per line with
 * one-space indents (the layout of Python's json.dumps(indent=1), which the shared models
 * use), so output is deterministic and diffs well, and write(read(write(read(x)))) equals
 * write(read(x)) byte for byte.
 *
 * The text is produced by io/json_emit.h rather than cJSON's printer: cJSON prints numbers
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graphmem/io.h"
#include "io/json_emit.h"
#include "ir/ir.h"
#include "util/alloc.h"
#include "util/utf8.h"

/* ---- attributes and descs -------------------------------------------------------------- */

static void write_desc(gm_jw *w, const gm_tensor_desc *d);

static void write_bytes(gm_jw *w, const char *data, size_t len)
{
    gm_jw_open(w, '{');
    gm_jw_key(w, "bytes_base64");
    gm_jw_base64(w, (const unsigned char *)data, len);
    gm_jw_close(w, '}');
}

static void write_attr_value(gm_jw *w, const gm_attr *a)
{
    size_t i, j;
    switch (a->kind) {
    case GM_ATTR_BOOL: gm_jw_bool(w, a->u.b); return;
    case GM_ATTR_INT: gm_jw_int(w, a->u.i); return;
    case GM_ATTR_FLOAT: gm_jw_float(w, a->u.f); return;
    case GM_ATTR_STRING:
        if (gm_utf8_valid(a->u.s.data, a->u.s.len, NULL)) gm_jw_str(w, a->u.s.data);
        else write_bytes(w, a->u.s.data, a->u.s.len);
        return;
    case GM_ATTR_BYTES: write_bytes(w, a->u.s.data, a->u.s.len); return;
    case GM_ATTR_TENSOR_DESC:
        gm_jw_open(w, '{');
        gm_jw_key(w, "tensor_desc");
        write_desc(w, a->u.td);
        gm_jw_close(w, '}');
        return;
    default: break;
    }
    gm_jw_open(w, '[');
    switch (a->kind) {
    case GM_ATTR_LIST_INT:
        for (i = 0; i < a->u.li.n; i++) gm_jw_int(w, a->u.li.v[i]);
        break;
    case GM_ATTR_LIST_FLOAT:
        for (i = 0; i < a->u.lf.n; i++) gm_jw_float(w, a->u.lf.v[i]);
        break;
    case GM_ATTR_LIST_STRING:
        for (i = 0; i < a->u.ls.n; i++) gm_jw_str(w, a->u.ls.v[i]);
        break;
    case GM_ATTR_LIST_BOOL:
        for (i = 0; i < a->u.lb.n; i++) gm_jw_bool(w, a->u.lb.v[i]);
        break;
    case GM_ATTR_LIST_LIST_INT:
        for (i = 0; i < a->u.lli.n; i++) {
            gm_jw_open(w, '[');
            for (j = 0; j < a->u.lli.lens[i]; j++) gm_jw_int(w, a->u.lli.rows[i][j]);
            gm_jw_close(w, ']');
        }
        break;
    default:
        if (w->st == GM_OK) w->st = GM_ERR_INTERNAL;
        break;
    }
    gm_jw_close(w, ']');
}

static void write_attrs(gm_jw *w, const gm_attr *list)
{
    while (list && gm_attr_is_kept_proto(list->name)) list = list->next;
    if (!list) return; /* no "attrs" for a list of nothing but kept protobuf */
    const char *outer = w->what;
    char what[300];
    gm_jw_key(w, "attrs");
    gm_jw_open(w, '{');
    for (const gm_attr *a = list; a; a = a->next) {
        if (gm_attr_is_kept_proto(a->name)) continue; /* ONNX's weights, GE's residual: their own formats' alone */
        snprintf(what, sizeof what, "%s%sattribute '%s'", outer ? outer : "", outer ? ": " : "", a->name);
        w->what = what;
        gm_jw_key(w, a->name);
        write_attr_value(w, a);
    }
    w->what = outer;
    gm_jw_close(w, '}');
}

static void write_desc(gm_jw *w, const gm_tensor_desc *d)
{
    gm_jw_open(w, '{');
    if (d->dtype != GM_DT_UNDEFINED) gm_jw_kv_str(w, "dtype", gm_dtype_name(d->dtype));
    if (d->ndims >= 0) {
        gm_jw_key(w, "shape");
        gm_jw_open(w, '[');
        for (int32_t i = 0; i < d->ndims; i++) gm_jw_int(w, d->dims[i]);
        gm_jw_close(w, ']');
    }
    if (d->size_given) gm_jw_kv_int(w, "size", d->size);
    if (d->reuse_input) {
        gm_jw_key(w, "reuse_input");
        gm_jw_bool(w, true);
        gm_jw_kv_int(w, "reuse_input_index", d->reuse_input_index);
    }
    if (d->mem_type_given) gm_jw_kv_str(w, "memory_type", gm_mem_type_name(d->mem_type));
    if (d->layout) gm_jw_kv_str(w, "layout", d->layout);
    write_attrs(w, d->attrs);
    gm_jw_close(w, '}');
}

/* ---- nodes, graphs, model -------------------------------------------------------------- */

static void write_inputs(gm_jw *w, const gm_node *n)
{
    if (!n->n_in) return;
    gm_jw_key(w, "inputs");
    gm_jw_open(w, '[');
    for (uint32_t i = 0; i < n->n_in; i++) {
        const gm_in_slot *s = &n->in[i];
        /* Resolved edges name their producer; an unfinalized model still has the name. */
        const char *src = s->src ? s->src->name : s->src_name;
        if (!src) {
            gm_jw_str(w, "");
            continue;
        }
        size_t len = strlen(src);
        char *t = gm_malloc(len + 16);
        if (!t) {
            w->st = w->st == GM_OK ? GM_ERR_NOMEM : w->st;
            return;
        }
        snprintf(t, len + 16, "%s:%" PRId32, src, s->src_index);
        gm_jw_str(w, t);
        gm_free(t);
    }
    gm_jw_close(w, ']');
}

static void write_links(gm_jw *w, const gm_node *n)
{
    /* Control inputs: the resolved edges, then any names still waiting for gm_model_finalize
     * (it frees the names it resolves, so none is written twice). */
    if (n->ctrl_in.n + n->n_ctrl_in_names > 0) {
        gm_jw_key(w, "control_inputs");
        gm_jw_open(w, '[');
        for (uint32_t i = 0; i < n->ctrl_in.n; i++) gm_jw_str(w, n->ctrl_in.v[i]->name);
        for (uint32_t i = 0; i < n->n_ctrl_in_names; i++) gm_jw_str(w, n->ctrl_in_names[i]);
        gm_jw_close(w, ']');
    }
    if (n->stream != 0) gm_jw_kv_int(w, "stream", n->stream);
    if (n->n_sub) {
        gm_jw_key(w, "subgraphs");
        gm_jw_open(w, '[');
        for (uint32_t i = 0; i < n->n_sub; i++) {
            const char *s = n->sub[i] ? n->sub[i]->name : n->sub_names ? n->sub_names[i] : NULL;
            gm_jw_str(w, s ? s : "");
        }
        gm_jw_close(w, ']');
    }
}

static void write_descs(gm_jw *w, const gm_node *n)
{
    char what[64];
    if (n->n_out) {
        gm_jw_key(w, "outputs");
        gm_jw_open(w, '[');
        for (uint32_t k = 0; k < n->n_out; k++) {
            snprintf(what, sizeof what, "output %" PRIu32, k);
            w->what = what;
            write_desc(w, &n->out[k].desc);
        }
        w->what = NULL;
        gm_jw_close(w, ']');
    }
    /* Input descs up to the last one that says something; earlier defaults as {}. */
    uint32_t last = 0;
    for (uint32_t i = 0; i < n->n_in; i++) {
        if (!gm_desc_is_blank(&n->in_desc[i])) last = i + 1;
    }
    if (last) {
        gm_jw_key(w, "input_descs");
        gm_jw_open(w, '[');
        for (uint32_t i = 0; i < last; i++) {
            snprintf(what, sizeof what, "input_descs[%" PRIu32 "]", i);
            w->what = what;
            write_desc(w, &n->in_desc[i]);
        }
        w->what = NULL;
        gm_jw_close(w, ']');
    }
}

static const char *in_name_at(const gm_node *n, size_t i) { return n->in_name[i]; }
static const char *out_name_at(const gm_node *n, size_t k) { return n->out[k].name; }

/* input_names / output_names only when some name was set explicitly; "" keeps a slot's
 * default (the reader reads "" the same way). */
static void write_names(gm_jw *w, const char *k, const gm_node *n, size_t count,
                        const char *(*name_at)(const gm_node *, size_t))
{
    size_t i = 0;
    while (i < count && !name_at(n, i)) i++;
    if (i == count) return;
    gm_jw_key(w, k);
    gm_jw_open(w, '[');
    for (i = 0; i < count; i++) {
        const char *s = name_at(n, i);
        gm_jw_str(w, s ? s : "");
    }
    gm_jw_close(w, ']');
}

static void write_node(gm_jw *w, const gm_node *n)
{
    w->node = n->name;
    gm_jw_open(w, '{');
    gm_jw_kv_str(w, "name", n->name);
    gm_jw_kv_str(w, "type", n->type);
    write_inputs(w, n);
    write_links(w, n);
    write_descs(w, n);
    write_names(w, "input_names", n, n->n_in, in_name_at);
    write_names(w, "output_names", n, n->n_out, out_name_at);
    write_attrs(w, n->attrs);
    gm_jw_close(w, '}');
    w->node = NULL;
}

static void write_graph(gm_jw *w, const gm_graph *g, bool root)
{
    w->graph = g->name;
    gm_jw_open(w, '{');
    gm_jw_kv_str(w, "name", g->name);
    if (!root) {
        const char *p = g->parent ? g->parent->name : g->parent_name;
        gm_jw_kv_str(w, "parent", p ? p : "");
    }
    write_attrs(w, g->attrs);
    gm_jw_key(w, "nodes");
    gm_jw_open(w, '[');
    for (uint32_t i = 0; i < g->nodes.n; i++) {
        if (!g->nodes.v[i]->dead) write_node(w, g->nodes.v[i]);
    }
    gm_jw_close(w, ']');
    gm_jw_close(w, '}');
    w->graph = NULL;
}

gm_status gm_model_write_json(const gm_model *m, char **text, size_t *len, gm_error *err)
{
    *text = NULL;
    if (len) *len = 0;
    gm_jw w = {.m = m};
    gm_jw_open(&w, '{');
    gm_jw_kv_int(&w, "graphmem", 1);
    gm_jw_kv_str(&w, "name", m->name);
    if (m->n_options) {
        gm_jw_key(&w, "options");
        gm_jw_open(&w, '{');
        for (size_t i = 0; i < m->n_options; i++) gm_jw_kv_str(&w, m->options[i].key, m->options[i].value);
        gm_jw_close(&w, '}');
    }
    gm_jw_key(&w, "graphs");
    gm_jw_open(&w, '[');
    for (size_t i = 0; i < m->n_graphs; i++) write_graph(&w, m->graphs[i], i == 0);
    gm_jw_close(&w, ']');
    gm_jw_close(&w, '}');
    gm_jw_put(&w, "\n", 1);
    gm_jw_done(&w);
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
