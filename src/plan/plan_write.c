/*
 * plan_write.c — a gm_plan as docs/plan-format.md JSON (graphmem_plan 1), through the shared
 * emitter (io/json_emit.h): exact int64 numbers, names escaped as the readers expect, one
 * symbol per line so that plans diff well.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "graphmem/plan.h"
#include "io/json_emit.h"
#include "plan/planner_internal.h"
#include "util/alloc.h"

const char *gm_plan_region_name(gm_plan_region_kind r)
{
    static const char *const names[GM_PLAN_R_COUNT] = {"feature_map", "zero_copy", "fixed", "dynamic"};
    return (unsigned)r < GM_PLAN_R_COUNT ? names[r] : "?";
}

static void write_summary(gm_jw *w, const gm_plan *p)
{
    gm_jw_key(w, "summary");
    gm_jw_open(w, '{');
    gm_jw_kv_int(w, "feature_map_bytes", p->feature_map_bytes);
    gm_jw_kv_int(w, "lower_bound_bytes", p->lower_bound_bytes);
    gm_jw_kv_int(w, "no_reuse_bytes", p->no_reuse_bytes);
    gm_jw_kv_int(w, "zero_copy_bytes", p->zero_copy_bytes);
    gm_jw_kv_int(w, "fixed_bytes", p->fixed_bytes);
    gm_jw_key(w, "by_memory_type");
    gm_jw_open(w, '{');
    for (int mt = 0; mt < GM_MEM_COUNT; mt++)
        /* hbm always (the default device memory), the others only where the model uses them */
        if (mt == GM_MEM_HBM || p->region_used[GM_PLAN_R_FEATURE_MAP][mt])
            gm_jw_kv_int(w, gm_mem_type_name((gm_mem_type)mt), p->by_memory_type[mt]);
    gm_jw_close(w, '}');
    gm_jw_kv_str(w, "strategy", p->strategy ? p->strategy : "none");
    gm_jw_key(w, "strategies");
    gm_jw_open(w, '[');
    for (size_t i = 0; i < p->n_strategies; i++) {
        gm_jw_open(w, '{');
        gm_jw_kv_str(w, "name", p->strategies[i].name);
        gm_jw_kv_int(w, "bytes", p->strategies[i].bytes);
        gm_jw_key(w, "ms");
        /* reproducible plans say 0: a time differs run to run, the plan must not */
        gm_jw_float(w, p->reproducible ? 0.0 : (double)(int64_t)(p->strategies[i].ms * 1000.0) / 1000.0);
        gm_jw_close(w, '}');
    }
    gm_jw_close(w, ']');
    gm_jw_key(w, "lower_bound_witness");
    gm_jw_open(w, '[');
    for (size_t i = 0; i < p->n_witness; i++) gm_jw_str(w, p->symbols[p->witness[i]].id);
    gm_jw_close(w, ']');
    gm_jw_kv_int(w, "inserted_nodes", p->report ? (int64_t)p->report->n_nodes : 0);
    gm_jw_kv_int(w, "ordered_edges", p->report ? (int64_t)p->report->n_edges : 0);
    gm_jw_kv_int(w, "lint_warnings", p->report ? (int64_t)p->report->n_warnings : 0);
    gm_jw_kv_int(w, "dynamic_tensors", (int64_t)p->dynamic_symbols);
    gm_jw_kv_int(w, "stream_repairs", (int64_t)p->repaired_pairs);
    gm_jw_close(w, '}');
}

static void write_regions(gm_jw *w, const gm_plan *p)
{
    gm_jw_key(w, "regions");
    gm_jw_open(w, '[');
    /* dynamic has no extent and needs no entry; the others are listed wherever used so the
     * verifier checks every offset against the region's size and alignment */
    for (int r = 0; r < GM_PLAN_R_DYNAMIC; r++)
        for (int mt = 0; mt < GM_MEM_COUNT; mt++) {
            if (!p->region_used[r][mt]) continue;
            gm_jw_open(w, '{');
            gm_jw_kv_str(w, "name", gm_plan_region_name((gm_plan_region_kind)r));
            gm_jw_kv_str(w, "memory_type", gm_mem_type_name((gm_mem_type)mt));
            gm_jw_kv_int(w, "size", p->region_bytes[r][mt]);
            gm_jw_kv_int(w, "align", gm_plan_region_align(p, (gm_plan_region_kind)r));
            gm_jw_close(w, '}');
        }
    gm_jw_close(w, ']');
}

/* ---- the symbols: a million lines at a million nodes ----
 * Each line is composed at a cursor in room reserved for it, not member by member through the
 * emitter (a third of the time). A string that needs escaping (or checking: not printable
 * ASCII) goes through the emitter's string writer, and the cursor is taken up again after it. */

/* True when s is written as it is: printable ASCII, no quote or backslash. */
static bool plain(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)(*s - 0x20) >= 0x5f || *s == '"' || *s == '\\') return false;
    return true;
}

static char *put_mem(char *o, const char *s, size_t n)
{
    memcpy(o, s, n);
    return o + n;
}

#define PUT_LIT(o, lit) put_mem((o), (lit), sizeof(lit) - 1)

static char *put_int(char *o, int64_t v)
{
    char b[GM_JW_DIGITS];
    size_t k = gm_jw_digits(b, v);
    return put_mem(o, b + k, sizeof b - k);
}

/* s as a JSON string at the cursor o; the room for `rest` more bytes is kept. NULL when the
 * writer failed (sticky: the caller stops). */
static char *put_str(gm_jw *w, char *o, const char *s, size_t rest)
{
    if (plain(s)) {
        size_t n = strlen(s);
        *o++ = '"';
        o = put_mem(o, s, n);
        *o++ = '"';
        return o;
    }
    w->len = (size_t)(o - w->buf);
    gm_jw_str_text(w, s);
    return gm_jw_room(w, rest) ? w->buf + w->len : NULL;
}

static void write_symbol(gm_jw *w, const gm_plan_symbol *y)
{
    const char *region = gm_plan_region_name(y->region), *mt = gm_mem_type_name(y->mem_type);
    const char *label = y->batch_label ? y->batch_label : "";
    /* room for the whole line, every string at its plain length (an escaped one takes the
     * emitter's own room) */
    size_t need = strlen(y->id) + strlen(region) + strlen(mt) + strlen(label) + 200 + 24 * y->n_streams;
    for (size_t i = 0; i < y->n_anchors; i++) need += strlen(gm_node_name(y->anchors[i].node)) + 80;
    gm_jw_item(w);
    if (!gm_jw_room(w, need)) return;
    char *o = w->buf + w->len;
    o = PUT_LIT(o, "{\"id\":");
    if (!(o = put_str(w, o, y->id, need))) return;
    o = PUT_LIT(o, ",\"anchors\":[");
    for (size_t i = 0; i < y->n_anchors; i++) {
        const gm_plan_anchor *a = &y->anchors[i];
        if (i) *o++ = ',';
        o = PUT_LIT(o, "{\"node\":");
        if (!(o = put_str(w, o, gm_node_name(a->node), need))) return;
        o = a->out ? PUT_LIT(o, ",\"out\":") : PUT_LIT(o, ",\"in\":");
        o = put_int(o, a->index);
        /* a view inside the symbol (a no-padding member) says where: an absolute offset */
        if (a->offset >= 0 && y->region != GM_PLAN_R_DYNAMIC) {
            o = PUT_LIT(o, ",\"offset\":");
            o = put_int(o, y->offset + a->offset);
        }
        *o++ = '}';
    }
    o = PUT_LIT(o, "],\"region\":");
    if (!(o = put_str(w, o, region, need))) return;
    o = PUT_LIT(o, ",\"memory_type\":");
    if (!(o = put_str(w, o, mt, need))) return;
    if (y->region == GM_PLAN_R_DYNAMIC) {
        /* no offset: allocated at run time; size unknown, written as 0 */
        o = PUT_LIT(o, ",\"offset\":null,\"size\":0");
    } else {
        o = PUT_LIT(o, ",\"offset\":");
        o = put_int(o, y->offset);
        o = PUT_LIT(o, ",\"size\":");
        o = put_int(o, y->size);
    }
    o = PUT_LIT(o, ",\"lifetime\":[");
    o = put_int(o, y->first);
    *o++ = ',';
    o = put_int(o, y->last);
    o = PUT_LIT(o, "],\"streams\":[");
    for (size_t i = 0; i < y->n_streams; i++) {
        if (i) *o++ = ',';
        o = put_int(o, y->streams[i]);
    }
    o = PUT_LIT(o, "],\"batch_label\":");
    if (!(o = put_str(w, o, label, need))) return;
    *o++ = '}';
    w->len = (size_t)(o - w->buf);
    w->buf[w->len] = '\0';
}

/* What the passes were given, so that verify can run them again on the user's own model
 * (verify_passes.c): the passes that ran, and the GE options of the model (they steer them). A
 * plan made without the passes' report records neither. */
static void write_passes(gm_jw *w, const gm_model *m, const gm_pass_report *r)
{
    /* The --dim values the model was read with: verify reads it with them (a model read with
     * other dims is another graph). */
    const char *const *dims = gm_model_fixed_dims(m);
    if (dims) {
        gm_jw_key(w, "dims");
        gm_jw_open(w, '[');
        for (size_t i = 0; dims[i]; i++) gm_jw_str(w, dims[i]);
        gm_jw_close(w, ']');
    }
    if (!r) return;
    gm_jw_key(w, "passes");
    gm_jw_open(w, '[');
    for (int i = 0; i < GM_PASS_COUNT; i++)
        if (r->ran[i]) gm_jw_str(w, gm_pass_name((gm_pass_id)i));
    gm_jw_close(w, ']');
    gm_jw_key(w, "options");
    gm_jw_open(w, '{');
    for (size_t i = 0; i < gm_model_option_count(m); i++) {
        const char *k, *v;
        gm_model_option_at(m, i, &k, &v);
        gm_jw_kv_str(w, k, v);
    }
    gm_jw_close(w, '}');
}

static void write_inserted(gm_jw *w, const gm_pass_report *r)
{
    gm_jw_key(w, "inserted");
    gm_jw_open(w, '[');
    for (size_t i = 0; r && i < r->n_nodes; i++) {
        const gm_inserted_node *x = &r->nodes[i];
        gm_jw_open(w, '{');
        gm_jw_kv_str(w, "node", x->node);
        gm_jw_kv_str(w, "type", x->type);
        gm_jw_kv_str(w, "graph", x->graph);
        gm_jw_kv_str(w, "pass", gm_pass_name(x->pass));
        if (x->anchor_node) {
            gm_jw_key(w, x->before ? "before" : "after");
            gm_jw_open(w, '{');
            gm_jw_kv_str(w, "node", x->anchor_node);
            if (x->index >= 0) gm_jw_kv_int(w, x->before ? "in" : "out", x->index);
            gm_jw_close(w, '}');
        }
        gm_jw_kv_str(w, "reason", x->reason ? x->reason : "");
        gm_jw_close(w, '}');
    }
    /* control edges: an "edge" entry instead of a node's, from before to */
    for (size_t i = 0; r && i < r->n_edges; i++) {
        const gm_inserted_edge *x = &r->edges[i];
        gm_jw_open(w, '{');
        gm_jw_key(w, "edge");
        gm_jw_open(w, '{');
        gm_jw_kv_str(w, "from", x->from);
        gm_jw_kv_str(w, "to", x->to);
        gm_jw_close(w, '}');
        gm_jw_kv_str(w, "type", "control");
        gm_jw_kv_str(w, "graph", x->graph);
        gm_jw_kv_str(w, "pass", gm_pass_name(x->pass));
        gm_jw_kv_str(w, "reason", x->reason ? x->reason : "");
        gm_jw_close(w, '}');
    }
    gm_jw_close(w, ']');
    gm_jw_key(w, "warnings");
    gm_jw_open(w, '[');
    for (size_t i = 0; r && i < r->n_warnings; i++) {
        gm_jw_open(w, '{');
        gm_jw_kv_str(w, "code", r->warnings[i].code);
        gm_jw_kv_str(w, "message", r->warnings[i].message);
        gm_jw_close(w, '}');
    }
    gm_jw_close(w, ']');
}

gm_status gm_plan_write_json(const gm_model *m, const gm_plan *p, char **text, size_t *len, gm_error *err)
{
    return gm_plan_write_json_read(m, p, text, len, NULL, err);
}

gm_status gm_plan_write_json_read(const gm_model *m, const gm_plan *p, char **text, size_t *len,
                                  gm_jw_reader *reader, gm_error *err)
{
    *text = NULL;
    if (len) *len = 0;
    gm_jw w = {.m = m, .wrap_depth = 2};
    /* room for the whole text at once (a guess from the counts; it grows as usual past it):
     * growing a buffer of hundreds of megabytes by doubling copied it each time */
    gm_jw_room(&w, 4096 + 48 * gm_model_node_count(m) + 320 * p->n_symbols);
    if (reader && w.st == GM_OK) gm_jw_attach(&w, reader);
    gm_jw_open(&w, '{');
    gm_jw_kv_int(&w, "graphmem_plan", 1);
    gm_jw_kv_str(&w, "model", gm_model_name(m));
    write_passes(&w, m, p->report);
    write_summary(&w, p);
    gm_jw_key(&w, "order");
    gm_jw_open(&w, '[');
    size_t nn = gm_model_node_count(m);
    for (size_t t = 0; t < nn; t++) gm_jw_str(&w, gm_node_name(gm_model_node_at(m, t)));
    gm_jw_close(&w, ']');
    write_regions(&w, p);
    gm_jw_key(&w, "symbols");
    gm_jw_open(&w, '[');
    /* one symbol object a line, in the compact style of this depth (wrap_depth 2) */
    for (size_t i = 0; i < p->n_symbols; i++) write_symbol(&w, &p->symbols[i]);
    gm_jw_close(&w, ']');
    write_inserted(&w, p->report);
    if (gm_plan_write_atomic(&w, p) != GM_OK) w.st = GM_ERR_NOMEM;
    gm_jw_close(&w, '}');
    gm_jw_put(&w, "\n", 1);
    gm_jw_detach(&w, true);
    gm_jw_done(&w);
    if (w.st != GM_OK) {
        gm_free(w.buf);
        if (w.st == GM_ERR_INPUT) return gm_error_set(err, GM_ERR_INPUT, "%s", w.why);
        return gm_error_set(err, GM_ERR_NOMEM, "out of memory writing the plan of '%s'", gm_model_name(m));
    }
    /* hand back memory the caller frees with free() */
    *text = w.buf;
    if (len) *len = w.len;
    return GM_OK;
}
