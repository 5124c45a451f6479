/*
 * plan_items.c — from planned symbols to the items the strategies pack, and back.
 *
 * An item is one symbol, or one continuous group (GE's continuous_input / continuous_output)
 * whose members' symbols must lie end to end in anchor order: the group is packed as a single
 * item whose lifetime is the union of the members' and whose size is their sum, and its offset
 * is dealt out to the members in order (members have aligned sizes, so each gap is under the
 * alignment). Items are grouped into units by region, memory type and batch label; units of
 * one (region, memory type) are consecutive, the unlabelled one first (always present: the
 * labelled ones are packed around it).
 */
#include <stdlib.h>
#include <string.h>

#include "ops/op_table.h"
#include "plan/planner_internal.h"
#include "util/alloc.h"

/* The regions whose symbols may share memory: fixed is laid end to end, dynamic has no offsets. */
static bool reusable(int r) { return r == GM_PLAN_R_FEATURE_MAP || r == GM_PLAN_R_ZERO_COPY; }

bool gm_plan_continuous_node(const gm_node *n, bool out)
{
    const gm_attr *a = gm_attr_find(gm_node_attr_list(n), out ? "continuous_output" : "continuous_input");
    return a && gm_attr_get_kind(a) == GM_ATTR_BOOL && gm_attr_bool(a);
}

/* The continuous groups (not the no-padding kinds, which are not planned yet). Only the
 * symbols described as continuous are looked at: a million symbols' nodes are far from the
 * cache. */
static gm_status find_groups(gm_plan_items *it, const gm_model *m, const gm_plan *p)
{
    size_t nn = gm_model_node_count(m), ns = p->n_symbols, cap = 0;
    int32_t *node_group[2]; /* [in/out] node topo id -> group, -1 none */
    node_group[0] = gm_malloc((nn ? nn : 1) * sizeof(int32_t));
    node_group[1] = gm_malloc((nn ? nn : 1) * sizeof(int32_t));
    it->sym_group = gm_malloc((ns ? ns : 1) * sizeof *it->sym_group);
    gm_status st = GM_ERR_NOMEM;
    if (!node_group[0] || !node_group[1] || !it->sym_group) goto out;
    for (size_t i = 0; i < ns; i++) it->sym_group[i] = -1;
    for (size_t t = 0; t < nn; t++) {
        gm_node *x = gm_model_node_at(m, t);
        node_group[0][t] = node_group[1][t] = -1;
        for (int out = 0; out < 2; out++) {
            if (!gm_plan_continuous_node(x, out)) continue;
            size_t cnt = out ? gm_node_output_count(x) : gm_node_input_count(x);
            if (cnt == 0) continue;
            if (gm_grow((void **)&it->groups, sizeof *it->groups, it->n_groups + 1, &cap)) goto out;
            gm_plan_group *c = &it->groups[it->n_groups];
            *c = (gm_plan_group){x, out != 0, cnt, gm_malloc(cnt * sizeof(int32_t)), false};
            if (!c->members) goto out;
            for (size_t j = 0; j < cnt; j++) c->members[j] = -1;
            node_group[out][t] = (int32_t)it->n_groups++;
        }
    }
    for (size_t i = 0; i < ns; i++) {
        const gm_plan_symbol *y = &p->symbols[i];
        if (!y->continuous) continue;
        for (size_t j = 0; j < y->n_anchors; j++) {
            const gm_plan_anchor *a = &y->anchors[j];
            int32_t g = node_group[a->out][gm_node_topo_id(a->node)];
            if (g >= 0) it->groups[g].members[a->index] = (int32_t)i;
        }
    }
    st = GM_OK;
out:
    gm_free(node_group[0]);
    gm_free(node_group[1]);
    return st;
}

gm_status gm_plan_items_init(gm_plan_items *it, const gm_model *m, const gm_plan *p)
{
    memset(it, 0, sizeof *it);
    size_t ns = p->n_symbols ? p->n_symbols : 1;
    it->items = gm_malloc(ns * sizeof *it->items);
    it->meta = gm_malloc(ns * sizeof *it->meta);
    it->idx = gm_malloc(ns * sizeof *it->idx);
    if (!it->items || !it->meta || !it->idx || !(it->sym_label = gm_plan_number_labels(p, &it->n_labels)))
        return GM_ERR_NOMEM;
    it->units = gm_malloc((size_t)GM_PLAN_R_DYNAMIC * GM_MEM_COUNT * (it->n_labels + 1) * sizeof *it->units);
    if (!it->units) return GM_ERR_NOMEM;
    gm_status st = find_groups(it, m, p);
    if (st == GM_OK) st = gm_plan_atomic_groups(it, p); /* after the continuous ones: they yield */
    return st == GM_OK ? gm_plan_chain_groups(it, p) : st;
}

void gm_plan_items_free(gm_plan_items *it)
{
    for (size_t g = 0; g < it->n_groups; g++) gm_free(it->groups[g].members);
    gm_free(it->groups);
    gm_free(it->sym_group);
    gm_free(it->sym_label);
    gm_free(it->items);
    gm_free(it->meta);
    gm_free(it->idx);
    gm_free(it->units);
    memset(it, 0, sizeof *it);
}

static void add_item(gm_plan_items *it, int64_t first, int64_t last, int64_t size, int64_t align, int32_t idx,
                     gm_pack_meta meta)
{
    it->items[it->n_items] = (gm_dsa_buffer){(int64_t)it->n_items, first, last + 1, size, align, -1, NULL};
    it->meta[it->n_items] = meta;
    it->idx[it->n_items++] = idx;
}

/* One unit's items: its symbols outside groups, then its usable groups. */
static void gather(gm_plan_items *it, gm_plan *p, int r, int mt, uint32_t label)
{
    const int64_t align = gm_plan_region_align(p, (gm_plan_region_kind)r);
    for (size_t i = 0; i < p->n_symbols; i++) {
        gm_plan_symbol *y = &p->symbols[i];
        if ((int)y->region != r || (int)y->mem_type != mt || it->sym_label[i] != label) continue;
        if (it->sym_group[i] >= 0) continue;
        if (y->size <= 0) { /* takes no room: sits at the region's start */
            y->offset = 0;
            continue;
        }
        gm_pack_meta meta = {y->real_size > 0 ? y->real_size : y->size, y->stream, (uint32_t)y->n_anchors,
                             y->no_reuse, false};
        /* GE gives a never-reused tensor a block nobody else takes, before or after: packed as
         * live the whole run (its own lifetime, and so the bound, stay as they are) */
        if (y->no_reuse) add_item(it, 0, it->horizon, y->size, align, (int32_t)i, meta);
        else add_item(it, y->first, y->last, y->size, align, (int32_t)i, meta);
    }
    for (size_t g = 0; g < it->n_groups; g++) {
        const gm_plan_group *c = &it->groups[g];
        if (!c->usable) continue;
        const gm_plan_symbol *y0 = &p->symbols[c->members[0]];
        if ((int)y0->region != r || (int)y0->mem_type != mt || it->sym_label[c->members[0]] != label) continue;
        int64_t first = INT64_MAX, last = -1, size = 0;
        gm_pack_meta meta = {0, y0->stream, 0, false, true};
        for (size_t j = 0; j < c->n; j++) {
            const gm_plan_symbol *y = &p->symbols[c->members[j]];
            if (y->first < first) first = y->first;
            if (y->last > last) last = y->last;
            size += y->size;
            meta.nodes += (uint32_t)y->n_anchors;
            meta.no_reuse = meta.no_reuse || y->no_reuse;
        }
        if (size <= 0) size = align; /* members of zero size still need a base address */
        meta.real_size = size;
        if (meta.no_reuse) first = 0, last = it->horizon;
        add_item(it, first, last, size, align, -(int32_t)g - 1, meta);
    }
}

void gm_plan_items_build(gm_plan_items *it, gm_plan *p)
{
    it->n_items = it->n_units = 0;
    it->horizon = 0;
    for (size_t i = 0; i < p->n_symbols; i++)
        if (p->symbols[i].last > it->horizon) it->horizon = p->symbols[i].last;
    for (int r = 0; r < GM_PLAN_R_DYNAMIC; r++)
        for (int mt = 0; mt < GM_MEM_COUNT; mt++)
            for (uint32_t label = 0; label <= it->n_labels; label++) {
                size_t first = it->n_items;
                gather(it, p, r, mt, label);
                if (it->n_items == first && label) continue;
                it->units[it->n_units++] = (gm_pack_unit){(gm_plan_region_kind)r, (gm_mem_type)mt, label,
                                                          !reusable(r) || p->fallback[mt][r], first,
                                                          it->n_items - first};
            }
}

void gm_plan_items_apply(const gm_plan_items *it, gm_plan *p, const gm_pack_result *res)
{
    for (size_t u = 0; u < it->n_units; u++) {
        const gm_pack_unit *un = &it->units[u];
        for (size_t j = un->first; j < un->first + un->n; j++) {
            int64_t at = res->offsets[j];
            if (it->idx[j] >= 0) {
                p->symbols[it->idx[j]].offset = at;
                continue;
            }
            const gm_plan_group *c = &it->groups[-it->idx[j] - 1];
            for (size_t k = 0; k < c->n; k++) {
                p->symbols[c->members[k]].offset = at;
                at += p->symbols[c->members[k]].size;
            }
        }
    }
}
