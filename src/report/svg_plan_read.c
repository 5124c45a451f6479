/*
 * svg_plan_read.c — the plan JSON (docs/plan-format.md) read for the memory timeline: regions,
 * symbols with their boxes, which symbols a pass's inserted copy produces, the lower-bound line
 * per feature map, and the continuous groups of the model as boxes around their members.
 * Strings stay in the cJSON tree, which lives as long as the tl_plan.
 */
#include <string.h>

#include "graphmem/graph.h"
#include "report/svg_internal.h"
#include "util/alloc.h"

static const cJSON *field(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

static const char *str_field(const cJSON *o, const char *k)
{
    const cJSON *v = field(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Numbers beyond 2^62 are refused: offsets plus sizes must not overflow. */
#define TL_MAX_NUMBER 4.6e18

static bool number_ok(const cJSON *v) { return cJSON_IsNumber(v) && v->valuedouble >= -TL_MAX_NUMBER && v->valuedouble <= TL_MAX_NUMBER; }

static bool int_field(const cJSON *o, const char *k, int64_t *out)
{
    const cJSON *v = field(o, k);
    if (!number_ok(v)) return false;
    *out = (int64_t)v->valuedouble;
    return true;
}

static gm_status read_regions(tl_plan *p, const char *src, gm_error *err)
{
    const cJSON *rs = field(p->root, "regions");
    if (!cJSON_IsArray(rs)) return gm_error_set(err, GM_ERR_INPUT, "%s: \"regions\" missing or not an array", src);
    p->regions = gm_calloc((size_t)cJSON_GetArraySize(rs) + 1, sizeof *p->regions);
    if (!p->regions) return gm_error_set(err, GM_ERR_NOMEM, "%s: out of memory", src);
    size_t i = 0;
    for (const cJSON *r = rs->child; r; r = r->next, i++) {
        tl_region *g = &p->regions[p->n_regions];
        g->name = str_field(r, "name");
        g->mem = str_field(r, "memory_type");
        if (!g->name || !g->mem || !int_field(r, "size", &g->size) || g->size < 0)
            return gm_error_set(err, GM_ERR_INPUT, "%s: regions[%zu] needs name, memory_type and size", src, i);
        if (!strcmp(g->name, "dynamic")) continue; /* no addresses: counted, not drawn */
        g->feature_map = !strcmp(g->name, "feature_map");
        g->scale = g->size > 0 ? g->size : 1;
        g->bound = -1;
        p->n_regions++;
    }
    return GM_OK;
}

static long find_region(const tl_plan *p, const char *name, const char *mem)
{
    for (size_t i = 0; i < p->n_regions; i++)
        if (!strcmp(p->regions[i].name, name) && !strcmp(p->regions[i].mem, mem)) return (long)i;
    return -1;
}

/* The "inserted" entry of the symbol's producer (its first output anchor), if a pass made it. */
static const cJSON *producer_inserted(const tl_plan *p, const cJSON *anchors)
{
    for (const cJSON *a = anchors ? anchors->child : NULL; a; a = a->next) {
        const char *node = str_field(a, "node");
        if (node && field(a, "out")) return gm_strmap_get(&p->inserted, node);
    }
    return NULL;
}

static gm_status read_symbol(tl_plan *p, const cJSON *s, size_t i, const char *src, gm_error *err)
{
    const char *id = str_field(s, "id"), *region = str_field(s, "region"), *mem = str_field(s, "memory_type");
    if (!id || !region || !mem)
        return gm_error_set(err, GM_ERR_INPUT, "%s: symbols[%zu] needs id, region and memory_type", src, i);
    if (!strcmp(region, "dynamic")) {
        p->n_dynamic++;
        return GM_OK;
    }
    tl_sym y = {.id = id, .anchors = field(s, "anchors"), .streams = field(s, "streams")};
    long r = find_region(p, region, mem);
    if (r < 0)
        return gm_error_set(err, GM_ERR_INPUT, "%s: symbol '%s' is in region %s (%s), which \"regions\" does not list",
                            src, id, region, mem);
    y.region = (size_t)r;
    const cJSON *life = field(s, "lifetime");
    if (!int_field(s, "offset", &y.off) || !int_field(s, "size", &y.size) || y.off < 0 || y.size < 0 ||
        !cJSON_IsArray(life) || cJSON_GetArraySize(life) != 2 || !number_ok(life->child) ||
        !number_ok(life->child->next))
        return gm_error_set(err, GM_ERR_INPUT, "%s: symbol '%s' needs offset, size and lifetime [first, last]", src, id);
    y.first = (int64_t)life->child->valuedouble;
    y.last = (int64_t)life->child->next->valuedouble;
    if (y.first < 0 || y.last < y.first)
        return gm_error_set(err, GM_ERR_INPUT, "%s: symbol '%s' has lifetime [%lld, %lld]", src, id,
                            (long long)y.first, (long long)y.last);
    if ((size_t)y.last >= p->n_order)
        return gm_error_set(err, GM_ERR_INPUT, "%s: symbol '%s' lives to position %lld, past the order's %zu", src, id,
                            (long long)y.last, p->n_order);
    y.inserted = producer_inserted(p, y.anchors);
    tl_region *g = &p->regions[y.region];
    if (y.off + y.size > g->scale) g->scale = y.off + y.size;
    g->n_syms++;
    p->syms[p->n_syms++] = y;
    return GM_OK;
}

/* The bound line: the plan's bound when there is one feature map; else, per memory type, the
 * witness symbols of that type (a set no two of which may share memory). */
static void set_bounds(tl_plan *p)
{
    size_t fms = 0;
    for (size_t i = 0; i < p->n_regions; i++) fms += p->regions[i].feature_map;
    if (fms == 1) {
        for (size_t i = 0; i < p->n_regions; i++)
            if (p->regions[i].feature_map) p->regions[i].bound = p->lower_bound;
        return;
    }
    const cJSON *w = field(field(p->root, "summary"), "lower_bound_witness");
    gm_strmap ids = {0};
    for (size_t i = 0; i < p->n_syms; i++)
        if (gm_strmap_put(&ids, p->syms[i].id, &p->syms[i]) != 0) break;
    for (const cJSON *e = cJSON_IsArray(w) ? w->child : NULL; e; e = e->next) {
        const tl_sym *y = cJSON_IsString(e) ? gm_strmap_get(&ids, e->valuestring) : NULL;
        if (!y || !p->regions[y->region].feature_map) continue;
        tl_region *g = &p->regions[y->region];
        g->bound = (g->bound < 0 ? 0 : g->bound) + y->size;
    }
    gm_strmap_free(&ids);
}

/* Continuous groups from the model: per node with a continuous attribute, one group of its
 * inputs' or outputs' symbols. by_node maps a node name to its (input group, output group). */
typedef struct tl_node_groups {
    long in, out;
} tl_node_groups;

static void extend_group(tl_group *g, const tl_sym *y)
{
    long r = (long)y->region;
    if (g->region == -1) {
        g->region = r;
        g->lo = y->off, g->hi = y->off + y->size, g->first = y->first, g->last = y->last;
    } else if (g->region != r) {
        g->region = -2;
    }
    if (y->off < g->lo) g->lo = y->off;
    if (y->off + y->size > g->hi) g->hi = y->off + y->size;
    if (y->first < g->first) g->first = y->first;
    if (y->last > g->last) g->last = y->last;
    g->members++;
}

static gm_status read_groups(tl_plan *p, const gm_model *m, const char *src, gm_error *err)
{
    size_t n = gm_model_node_count(m), k = 0;
    tl_node_groups *ng = gm_calloc(n ? n : 1, sizeof *ng);
    p->groups = gm_calloc(2 * n + 1, sizeof *p->groups);
    gm_strmap by_node = {0};
    gm_status st = ng && p->groups ? GM_OK : GM_ERR_NOMEM;
    for (size_t i = 0; i < n && st == GM_OK; i++) {
        const gm_node *node = gm_model_node_at(m, i);
        const gm_attr *a = gm_node_attr_list(node);
        bool in = gm_attrs_get_bool(a, "continuous_input", false) || gm_attrs_get_bool(a, "_no_padding_continuous_input", false);
        bool out = gm_attrs_get_bool(a, "continuous_output", false) ||
                   gm_attrs_get_bool(a, "_no_padding_continuous_output", false);
        if (!in && !out) continue;
        ng[k].in = ng[k].out = -1;
        if (in) ng[k].in = (long)p->n_groups, p->groups[p->n_groups++] = (tl_group){.node = gm_node_name(node), .region = -1};
        if (out)
            ng[k].out = (long)p->n_groups,
            p->groups[p->n_groups++] = (tl_group){.node = gm_node_name(node), .out = true, .region = -1};
        if (gm_strmap_put(&by_node, gm_node_name(node), &ng[k++]) != 0) st = GM_ERR_NOMEM;
    }
    for (size_t i = 0; i < p->n_syms && st == GM_OK && by_node.count; i++) {
        for (const cJSON *a = p->syms[i].anchors ? p->syms[i].anchors->child : NULL; a; a = a->next) {
            const char *node = str_field(a, "node");
            const tl_node_groups *g = node ? gm_strmap_get(&by_node, node) : NULL;
            if (!g) continue;
            long gi = field(a, "out") ? g->out : g->in;
            if (gi >= 0) extend_group(&p->groups[gi], &p->syms[i]);
        }
    }
    gm_strmap_free(&by_node);
    gm_free(ng);
    return st == GM_OK ? GM_OK : gm_error_set(err, st, "%s: out of memory", src);
}

static gm_status read_order(tl_plan *p, const char *src, gm_error *err)
{
    const cJSON *o = field(p->root, "order");
    if (!cJSON_IsArray(o)) return gm_error_set(err, GM_ERR_INPUT, "%s: \"order\" missing or not an array", src);
    p->order = gm_calloc((size_t)cJSON_GetArraySize(o) + 1, sizeof *p->order);
    if (!p->order) return gm_error_set(err, GM_ERR_NOMEM, "%s: out of memory", src);
    for (const cJSON *e = o->child; e; e = e->next) {
        if (!cJSON_IsString(e))
            return gm_error_set(err, GM_ERR_INPUT, "%s: order[%zu] is not a node name", src, p->n_order);
        p->order[p->n_order++] = e->valuestring;
    }
    p->npos = (int64_t)p->n_order;
    return GM_OK;
}

static void read_summary(tl_plan *p)
{
    const cJSON *s = field(p->root, "summary");
    p->model = str_field(p->root, "model");
    if (!p->model) p->model = "";
    p->strategy = str_field(s, "strategy");
    p->lower_bound = p->feature_map = p->zero_copy = p->fixed = -1;
    int_field(s, "lower_bound_bytes", &p->lower_bound);
    int_field(s, "feature_map_bytes", &p->feature_map);
    int_field(s, "zero_copy_bytes", &p->zero_copy);
    int_field(s, "fixed_bytes", &p->fixed);
}

gm_status tl_plan_read(tl_plan *p, const gm_model *m, const char *text, size_t len, const char *src, gm_error *err)
{
    memset(p, 0, sizeof *p);
    p->root = cJSON_ParseWithLength(text, len);
    int64_t version = 0;
    if (!cJSON_IsObject(p->root) || !int_field(p->root, "graphmem_plan", &version) || version != 1)
        return gm_error_set(err, GM_ERR_INPUT, "%s: not a graphmem plan (JSON with \"graphmem_plan\": 1)", src);
    read_summary(p);
    gm_status st = read_order(p, src, err);
    if (st == GM_OK) st = read_regions(p, src, err);
    if (st != GM_OK) return st;
    const cJSON *ins = field(p->root, "inserted");
    for (const cJSON *e = cJSON_IsArray(ins) ? ins->child : NULL; e; e = e->next) {
        const char *node = str_field(e, "node");
        if (node && gm_strmap_put(&p->inserted, node, (void *)e) != 0)
            return gm_error_set(err, GM_ERR_NOMEM, "%s: out of memory", src);
    }
    const cJSON *syms = field(p->root, "symbols");
    if (!cJSON_IsArray(syms)) return gm_error_set(err, GM_ERR_INPUT, "%s: \"symbols\" missing or not an array", src);
    p->syms = gm_calloc((size_t)cJSON_GetArraySize(syms) + 1, sizeof *p->syms);
    if (!p->syms) return gm_error_set(err, GM_ERR_NOMEM, "%s: out of memory", src);
    size_t i = 0;
    for (const cJSON *s = syms->child; s && st == GM_OK; s = s->next) st = read_symbol(p, s, i++, src, err);
    if (st != GM_OK) return st;
    if (p->npos < 1) p->npos = 1;
    set_bounds(p);
    if (tl_columns_build(p, m) != GM_OK) return gm_error_set(err, GM_ERR_NOMEM, "%s: out of memory", src);
    return m ? read_groups(p, m, src, err) : GM_OK;
}

void tl_plan_free(tl_plan *p)
{
    gm_strmap_free(&p->inserted);
    gm_free(p->col);
    gm_free(p->col_pos);
    gm_free(p->groups);
    gm_free(p->syms);
    gm_free(p->regions);
    gm_free(p->order);
    cJSON_Delete(p->root);
    memset(p, 0, sizeof *p);
}
