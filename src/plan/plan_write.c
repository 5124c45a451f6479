/*
 * plan_write.c — a gm_plan as spec/plan-format.md JSON (graphmem_plan 1), through the shared
 * emitter (io/json_emit.h): exact int64 numbers, names escaped as the readers expect, one
 * symbol per line so that plans diff well.
 */
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

static void write_symbol(gm_jw *w, const gm_plan_symbol *y)
{
    gm_jw_open(w, '{');
    gm_jw_kv_str(w, "id", y->id);
    gm_jw_key(w, "anchors");
    gm_jw_open(w, '[');
    for (size_t i = 0; i < y->n_anchors; i++) {
        const gm_plan_anchor *a = &y->anchors[i];
        gm_jw_open(w, '{');
        gm_jw_kv_str(w, "node", gm_node_name(a->node));
        gm_jw_kv_int(w, a->out ? "out" : "in", a->index);
        /* a view inside the symbol (a no-padding member) says where: an absolute offset */
        if (a->offset >= 0 && y->region != GM_PLAN_R_DYNAMIC) gm_jw_kv_int(w, "offset", y->offset + a->offset);
        gm_jw_close(w, '}');
    }
    gm_jw_close(w, ']');
    gm_jw_kv_str(w, "region", gm_plan_region_name(y->region));
    gm_jw_kv_str(w, "memory_type", gm_mem_type_name(y->mem_type));
    gm_jw_key(w, "offset");
    if (y->region == GM_PLAN_R_DYNAMIC) {
        /* no offset: allocated at run time; size unknown, written as 0 */
        gm_jw_null(w);
        gm_jw_kv_int(w, "size", 0);
    } else {
        gm_jw_int(w, y->offset);
        gm_jw_kv_int(w, "size", y->size);
    }
    gm_jw_key(w, "lifetime");
    gm_jw_open(w, '[');
    gm_jw_int(w, y->first);
    gm_jw_int(w, y->last);
    gm_jw_close(w, ']');
    gm_jw_key(w, "streams");
    gm_jw_open(w, '[');
    for (size_t i = 0; i < y->n_streams; i++) gm_jw_int(w, y->streams[i]);
    gm_jw_close(w, ']');
    gm_jw_kv_str(w, "batch_label", y->batch_label ? y->batch_label : "");
    gm_jw_close(w, '}');
}

/* ---- the symbols' fast path: a million lines at a million nodes ---- */

/* Length of s when every byte is written as it is (printable ASCII, no quote or backslash);
 * -1 when some byte needs the emitter's escaping or checking. */
static ptrdiff_t plain_len(const char *s)
{
    const char *p = s;
    for (; *p; p++)
        if ((unsigned char)(*p - 0x20) >= 0x5f || *p == '"' || *p == '\\') return -1;
    return p - s;
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

static char *put_str(char *o, const char *s, size_t n)
{
    *o++ = '"';
    o = put_mem(o, s, n);
    *o++ = '"';
    return o;
}

/* write_symbol's text, written straight into the buffer: the same bytes, a third of the time.
 * False (nothing written) when a name needs escaping: write_symbol then writes it. */
static bool write_symbol_plain(gm_jw *w, const gm_plan_symbol *y)
{
    const char *region = gm_plan_region_name(y->region), *mt = gm_mem_type_name(y->mem_type);
    const char *label = y->batch_label ? y->batch_label : "";
    ptrdiff_t n_id = plain_len(y->id), n_region = plain_len(region), n_mt = plain_len(mt), n_label = plain_len(label);
    if (n_id < 0 || n_region < 0 || n_mt < 0 || n_label < 0) return false;
    size_t need = (size_t)(n_id + n_region + n_mt + n_label) + 200 + 24 * y->n_streams;
    for (size_t i = 0; i < y->n_anchors; i++) {
        ptrdiff_t k = plain_len(gm_node_name(y->anchors[i].node));
        if (k < 0) return false;
        need += (size_t)k + 80;
    }
    gm_jw_item(w);
    if (!gm_jw_room(w, need)) return true;
    char *o = w->buf + w->len;
    o = PUT_LIT(o, "{\"id\":");
    o = put_str(o, y->id, (size_t)n_id);
    o = PUT_LIT(o, ",\"anchors\":[");
    for (size_t i = 0; i < y->n_anchors; i++) {
        const gm_plan_anchor *a = &y->anchors[i];
        const char *name = gm_node_name(a->node);
        if (i) *o++ = ',';
        o = PUT_LIT(o, "{\"node\":");
        o = put_str(o, name, strlen(name));
        o = a->out ? PUT_LIT(o, ",\"out\":") : PUT_LIT(o, ",\"in\":");
        o = put_int(o, a->index);
        if (a->offset >= 0 && y->region != GM_PLAN_R_DYNAMIC) {
            o = PUT_LIT(o, ",\"offset\":");
            o = put_int(o, y->offset + a->offset);
        }
        *o++ = '}';
    }
    o = PUT_LIT(o, "],\"region\":");
    o = put_str(o, region, (size_t)n_region);
    o = PUT_LIT(o, ",\"memory_type\":");
    o = put_str(o, mt, (size_t)n_mt);
    if (y->region == GM_PLAN_R_DYNAMIC) {
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
    o = put_str(o, label, (size_t)n_label);
    *o++ = '}';
    w->len = (size_t)(o - w->buf);
    w->buf[w->len] = '\0';
    return true;
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
    *text = NULL;
    if (len) *len = 0;
    gm_jw w = {.m = m, .wrap_depth = 2};
    /* room for the whole text at once (a guess from the counts; it grows as usual past it):
     * growing a buffer of hundreds of megabytes by doubling copied it each time */
    gm_jw_room(&w, 4096 + 48 * gm_model_node_count(m) + 320 * p->n_symbols);
    gm_jw_open(&w, '{');
    gm_jw_kv_int(&w, "graphmem_plan", 1);
    gm_jw_kv_str(&w, "model", gm_model_name(m));
    write_summary(&w, p);
    gm_jw_key(&w, "order");
    gm_jw_open(&w, '[');
    size_t nn = gm_model_node_count(m);
    for (size_t t = 0; t < nn; t++) gm_jw_str(&w, gm_node_name(gm_model_node_at(m, t)));
    gm_jw_close(&w, ']');
    write_regions(&w, p);
    gm_jw_key(&w, "symbols");
    gm_jw_open(&w, '[');
    /* the fast path writes what write_symbol would, one symbol object in the compact style of
     * this depth (wrap_depth 2: the object's members on its line) */
    for (size_t i = 0; i < p->n_symbols; i++)
        if (!write_symbol_plain(&w, &p->symbols[i])) write_symbol(&w, &p->symbols[i]);
    gm_jw_close(&w, ']');
    write_inserted(&w, p->report);
    if (gm_plan_write_atomic(&w, p) != GM_OK) w.st = GM_ERR_NOMEM;
    gm_jw_close(&w, '}');
    gm_jw_put(&w, "\n", 1);
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
