/*
 * plan_write.c — a gm_plan as spec/plan-format.md JSON (graphmem_plan 1). Built with cJSON so
 * names are escaped exactly as the verifier's reader expects; sizes stay below 2^53, so the
 * doubles cJSON stores are exact.
 */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "graphmem/plan.h"
#include "util/alloc.h"

const char *gm_plan_region_name(gm_plan_region_kind r)
{
    static const char *const names[GM_PLAN_R_COUNT] = {"feature_map", "zero_copy", "fixed", "dynamic"};
    return (unsigned)r < GM_PLAN_R_COUNT ? names[r] : "?";
}

/* cJSON adders return NULL on allocation failure; one flag collects them all so the builder
 * below reads straight through and fails once at the end. */
static bool add_num(cJSON *o, const char *k, double v, bool ok)
{
    return ok && cJSON_AddNumberToObject(o, k, v) != NULL;
}

static bool add_str(cJSON *o, const char *k, const char *v, bool ok)
{
    return ok && cJSON_AddStringToObject(o, k, v) != NULL;
}

static cJSON *summary_json(const gm_plan *p, bool *ok)
{
    cJSON *s = cJSON_CreateObject();
    if (!s) return (*ok = false), NULL;
    bool k = true;
    k = add_num(s, "feature_map_bytes", (double)p->feature_map_bytes, k);
    k = add_num(s, "lower_bound_bytes", (double)p->lower_bound_bytes, k);
    k = add_num(s, "no_reuse_bytes", (double)p->no_reuse_bytes, k);
    k = add_num(s, "zero_copy_bytes", (double)p->zero_copy_bytes, k);
    k = add_num(s, "fixed_bytes", (double)p->fixed_bytes, k);
    cJSON *bmt = k ? cJSON_AddObjectToObject(s, "by_memory_type") : NULL;
    k = k && bmt;
    for (int mt = 0; k && mt < GM_MEM_COUNT; mt++)
        /* hbm always (the default device memory), the others only where the model uses them */
        if (mt == GM_MEM_HBM || p->region_used[GM_PLAN_R_FEATURE_MAP][mt])
            k = add_num(bmt, gm_mem_type_name((gm_mem_type)mt), (double)p->by_memory_type[mt], k);
    k = add_str(s, "strategy", p->strategy ? p->strategy : "none", k);
    cJSON *st = k ? cJSON_AddArrayToObject(s, "strategies") : NULL;
    k = k && st;
    for (size_t i = 0; k && i < p->n_strategies; i++) {
        cJSON *e = cJSON_CreateObject();
        k = e && cJSON_AddItemToArray(st, e);
        k = add_str(e, "name", p->strategies[i].name, k);
        k = add_num(e, "bytes", (double)p->strategies[i].bytes, k);
        k = add_num(e, "ms", p->strategies[i].ms, k);
    }
    k = add_num(s, "dynamic_tensors", (double)p->dynamic_symbols, k);
    k = add_num(s, "stream_repairs", (double)p->repaired_pairs, k);
    *ok = *ok && k;
    return s;
}

static cJSON *symbol_json(const gm_plan_symbol *y, bool *ok)
{
    cJSON *o = cJSON_CreateObject();
    if (!o) return (*ok = false), NULL;
    bool k = add_str(o, "id", y->id, true);
    cJSON *anc = k ? cJSON_AddArrayToObject(o, "anchors") : NULL;
    k = k && anc;
    for (size_t i = 0; k && i < y->n_anchors; i++) {
        cJSON *a = cJSON_CreateObject();
        k = a && cJSON_AddItemToArray(anc, a);
        k = add_str(a, "node", gm_node_name(y->anchors[i].node), k);
        k = add_num(a, y->anchors[i].out ? "out" : "in", (double)y->anchors[i].index, k);
    }
    k = add_str(o, "region", gm_plan_region_name(y->region), k);
    k = add_str(o, "memory_type", gm_mem_type_name(y->mem_type), k);
    if (y->region == GM_PLAN_R_DYNAMIC) {
        /* no offset: allocated at run time; size unknown, written as 0 */
        k = k && cJSON_AddNullToObject(o, "offset");
        k = add_num(o, "size", 0, k);
    } else {
        k = add_num(o, "offset", (double)y->offset, k);
        k = add_num(o, "size", (double)y->size, k);
    }
    cJSON *lt = k ? cJSON_AddArrayToObject(o, "lifetime") : NULL;
    k = k && lt && cJSON_AddItemToArray(lt, cJSON_CreateNumber((double)y->first)) &&
        cJSON_AddItemToArray(lt, cJSON_CreateNumber((double)y->last));
    cJSON *ss = k ? cJSON_AddArrayToObject(o, "streams") : NULL;
    k = k && ss;
    for (size_t i = 0; k && i < y->n_streams; i++)
        k = cJSON_AddItemToArray(ss, cJSON_CreateNumber((double)y->streams[i]));
    k = add_str(o, "batch_label", "", k);
    *ok = *ok && k;
    return o;
}

gm_status gm_plan_write_json(const gm_model *m, const gm_plan *p, char **text, size_t *len, gm_error *err)
{
    *text = NULL;
    if (len) *len = 0;
    cJSON *root = cJSON_CreateObject();
    bool ok = root != NULL;
    ok = add_num(root, "graphmem_plan", 1, ok);
    ok = add_str(root, "model", gm_model_name(m), ok);
    if (ok) {
        cJSON *s = summary_json(p, &ok);
        if (s && !cJSON_AddItemToObject(root, "summary", s)) cJSON_Delete(s), ok = false;
    }
    cJSON *order = ok ? cJSON_AddArrayToObject(root, "order") : NULL;
    ok = ok && order;
    size_t nn = gm_model_node_count(m);
    for (size_t t = 0; ok && t < nn; t++)
        ok = cJSON_AddItemToArray(order, cJSON_CreateString(gm_node_name(gm_model_node_at(m, t))));
    cJSON *regions = ok ? cJSON_AddArrayToObject(root, "regions") : NULL;
    ok = ok && regions;
    /* dynamic has no extent and needs no entry; the others are listed wherever used so the
     * verifier checks every offset against the region's size and alignment */
    for (int r = 0; ok && r < GM_PLAN_R_DYNAMIC; r++)
        for (int mt = 0; ok && mt < GM_MEM_COUNT; mt++) {
            if (!p->region_used[r][mt]) continue;
            cJSON *e = cJSON_CreateObject();
            ok = e && cJSON_AddItemToArray(regions, e);
            ok = add_str(e, "name", gm_plan_region_name((gm_plan_region_kind)r), ok);
            ok = add_str(e, "memory_type", gm_mem_type_name((gm_mem_type)mt), ok);
            ok = add_num(e, "size", (double)p->region_bytes[r][mt], ok);
            ok = add_num(e, "align", (double)p->align, ok);
        }
    cJSON *syms = ok ? cJSON_AddArrayToObject(root, "symbols") : NULL;
    ok = ok && syms;
    for (size_t i = 0; ok && i < p->n_symbols; i++) {
        cJSON *y = symbol_json(&p->symbols[i], &ok);
        if (y && !cJSON_AddItemToArray(syms, y)) cJSON_Delete(y), ok = false;
    }
    char *out = ok ? cJSON_PrintUnformatted(root) : NULL;
    cJSON_Delete(root);
    if (!out) return gm_error_set(err, GM_ERR_NOMEM, "out of memory writing the plan of '%s'", gm_model_name(m));
    /* hand back memory the caller frees with free(), whatever allocator cJSON was given */
    size_t n = strlen(out);
    char *copy = malloc(n + 1);
    if (!copy) {
        cJSON_free(out);
        return gm_error_set(err, GM_ERR_NOMEM, "out of memory writing the plan of '%s'", gm_model_name(m));
    }
    memcpy(copy, out, n + 1);
    cJSON_free(out);
    *text = copy;
    if (len) *len = n;
    return GM_OK;
}
