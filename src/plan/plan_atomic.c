/*
 * plan_atomic.c — the atomic outputs one clean node zeroes, kept together. GE's central
 * AtomicAddrClean (or MemSet) node clears every atomic output of the graph before the ops that
 * accumulate into them run (reference §3.5); its task gets the list of addresses and sizes
 * (AtomicMemoryAssigner, §5.5). Those outputs are all in use from the clean node on, so laying
 * them side by side costs next to nothing and turns the list into few ranges: one group per
 * clean node, joined to the continuous chains where that agrees with them and dropped where it
 * does not (contiguity here is a convenience, not a rule the verifier checks).
 */
#include <stdlib.h>
#include <string.h>

#include "io/json_emit.h"
#include "ops/op_table.h"
#include "plan/planner_internal.h"
#include "util/alloc.h"

typedef struct cleaned {
    int64_t clean; /* the clean node's topo id */
    int32_t sym;
} cleaned;

static int by_clean(const void *a, const void *b)
{
    const cleaned *x = a, *y = b;
    if (x->clean != y->clean) return x->clean < y->clean ? -1 : 1;
    return (x->sym > y->sym) - (x->sym < y->sym);
}

/* (clean node, symbol) for every feature-map symbol an atomic-clean node zeroes, sorted and
 * without repeats; *n their number. NULL with *n = 0 when none, or on no memory (*nomem). */
static cleaned *collect(const gm_plan *p, size_t *n, bool *nomem)
{
    size_t cap = 0;
    cleaned *v = NULL;
    *n = 0, *nomem = false;
    for (size_t s = 0; s < p->n_symbols; s++) {
        const gm_plan_symbol *y = &p->symbols[s];
        if (y->region != GM_PLAN_R_FEATURE_MAP || !y->atomic_clean) continue;
        for (size_t j = 0; j < y->n_anchors; j++) {
            const gm_node *c = gm_anchor_clean_node(y->anchors[j].node, y->anchors[j].out, y->anchors[j].index);
            if (!c) continue;
            if (gm_grow((void **)&v, sizeof *v, *n + 1, &cap)) {
                gm_free(v);
                *n = 0, *nomem = true;
                return NULL;
            }
            v[(*n)++] = (cleaned){gm_node_topo_id(c), (int32_t)s};
        }
    }
    if (v) qsort(v, *n, sizeof *v, by_clean);
    size_t k = 0;
    for (size_t i = 0; i < *n; i++)
        if (!k || v[k - 1].clean != v[i].clean || v[k - 1].sym != v[i].sym) v[k++] = v[i];
    *n = k;
    return v;
}

gm_status gm_plan_atomic_groups(gm_plan_items *it, const gm_plan *p)
{
    size_t n = 0;
    bool nomem = false;
    cleaned *v = collect(p, &n, &nomem);
    if (nomem) return GM_ERR_NOMEM;
    size_t add = 0;
    for (size_t i = 0; i < n; i++) add += !i || v[i - 1].clean != v[i].clean;
    gm_plan_group *g = add ? gm_realloc(it->groups, (it->n_groups + add) * sizeof *g) : it->groups;
    if (add && !g) {
        gm_free(v);
        return GM_ERR_NOMEM;
    }
    it->groups = g;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && v[j].clean == v[i].clean) j++;
        gm_plan_group *c = &it->groups[it->n_groups];
        *c = (gm_plan_group){NULL, true, j - i, gm_malloc((j - i) * sizeof(int32_t)), false};
        if (!c->members) {
            gm_free(v);
            return GM_ERR_NOMEM;
        }
        for (size_t k = i; k < j; k++) c->members[k - i] = v[k].sym;
        it->n_groups++;
        i = j;
    }
    gm_free(v);
    return GM_OK;
}

static int by_offset(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

/* "atomic_clean": per clean node the address ranges it zeroes, adjacent ones merged — the list
 * GE hands the memset task. */
gm_status gm_plan_write_atomic(gm_jw *w, const gm_plan *p)
{
    size_t n = 0;
    bool nomem = false;
    cleaned *v = collect(p, &n, &nomem);
    int64_t *r = gm_malloc((n ? n : 1) * 2 * sizeof *r);
    if (nomem || !r) {
        gm_free(v);
        gm_free(r);
        return GM_ERR_NOMEM;
    }
    gm_jw_key(w, "atomic_clean");
    gm_jw_open(w, '[');
    for (size_t i = 0; i < n;) {
        size_t j = i, k = 0;
        const gm_node *clean = NULL;
        for (; j < n && v[j].clean == v[i].clean; j++) {
            const gm_plan_symbol *y = &p->symbols[v[j].sym];
            for (size_t a = 0; a < y->n_anchors && !clean; a++)
                clean = gm_anchor_clean_node(y->anchors[a].node, y->anchors[a].out, y->anchors[a].index);
            r[2 * k] = y->offset, r[2 * k + 1] = y->size, k++;
        }
        qsort(r, k, 2 * sizeof *r, by_offset);
        gm_jw_open(w, '{');
        gm_jw_kv_str(w, "node", clean ? gm_node_name(clean) : "?");
        gm_jw_kv_str(w, "memory_type", gm_mem_type_name(p->symbols[v[i].sym].mem_type));
        gm_jw_key(w, "ranges");
        gm_jw_open(w, '[');
        for (size_t a = 0; a < k;) {
            int64_t start = r[2 * a], end = r[2 * a] + r[2 * a + 1];
            for (a++; a < k && r[2 * a] <= end; a++)
                if (r[2 * a] + r[2 * a + 1] > end) end = r[2 * a] + r[2 * a + 1];
            gm_jw_open(w, '[');
            gm_jw_int(w, start);
            gm_jw_int(w, end - start);
            gm_jw_close(w, ']');
        }
        gm_jw_close(w, ']');
        gm_jw_close(w, '}');
        i = j;
    }
    gm_jw_close(w, ']');
    gm_free(v);
    gm_free(r);
    return GM_OK;
}
