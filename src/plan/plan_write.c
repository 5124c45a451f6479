/*
 * plan_write.c — a gm_plan as spec/plan-format.md JSON (graphmem_plan 1), through the shared
 * emitter (io/json_emit.h): exact int64 numbers, names escaped as the readers expect, one
 * symbol per line so that plans diff well.
 */
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
    for (size_t i = 0; i < p->n_symbols; i++) write_symbol(&w, &p->symbols[i]);
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
