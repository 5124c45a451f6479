/*
 * planner.c — memory planner v0: GE's symbol table -> regions -> DSA offsets, then a
 * self-check with the independent verifier that repairs cross-stream sharing.
 *
 * Lifetimes are intervals on the model order (gm_model_node_at), which is one sequential
 * schedule. Two streams running side by side break "disjoint on that order means ordered", so
 * after packing, the plan is written and verified in-process; every pair of symbols the
 * verifier finds overlapping in address while unordered gets the union of both lifetimes (so
 * the packer can no longer share them) and its region is re-packed. After repair_rounds rounds
 * a region that is still wrong gets no reuse at all (every symbol at its own address), which
 * is safe whatever the streams do.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/happens_before.h"
#include "analysis/symbols.h"
#include "graphmem/dsa.h"
#include "graphmem/plan.h"
#include "ops/op_table.h"
#include "util/alloc.h"
#include "util/strmap.h"

void gm_plan_options_init(gm_plan_options *o)
{
    o->align = 512;
    /* No wall-clock budget by default: the node limit alone bounds the search, so the same
     * model gives the same plan on any machine, under any load (DESIGN: determinism). */
    o->search_budget_s = 0;
    o->search_node_limit = 200000;
    o->repair_rounds = 32;
}

void gm_plan_free(gm_plan *p)
{
    if (!p) return;
    for (size_t i = 0; i < p->n_symbols; i++) {
        gm_free(p->symbols[i].id);
        gm_free(p->symbols[i].anchors);
        gm_free(p->symbols[i].streams);
    }
    gm_free(p->symbols);
    gm_free(p);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int64_t align_up(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Bytes an anchor addresses: an output its desc, an input its producer's output (the tensor
 * it reads), an unconnected input its own desc — the same rule the verifier sizes by. */
static int64_t anchor_bytes(const gm_node *n, bool out, uint32_t i)
{
    if (out) return gm_desc_size(gm_node_output_desc(n, i));
    int32_t src_index = 0;
    const gm_node *src = gm_node_input(n, i, &src_index);
    if (src) return gm_desc_size(gm_node_output_desc(src, (size_t)src_index));
    const gm_tensor_desc *d = gm_node_input_desc(n, i);
    return d ? gm_desc_size(d) : 0;
}

/* Builds one planned symbol from symbol table entry `sym`: anchors, size, region, memory
 * type, lifetime and streams. */
static gm_status describe_symbol(const gm_model *m, const gm_symbols *s, int32_t sym, gm_hb_life *life,
                                 int64_t align, gm_plan_symbol *y)
{
    char name[512];
    y->id = gm_strdup(gm_symbol_name(s, sym, name, sizeof name));
    if (!y->id) return GM_ERR_NOMEM;
    size_t na = 0;
    for (int32_t a = gm_symbol_first(s, sym); a >= 0; a = gm_symbols_next(s, a)) na++;
    y->anchors = gm_malloc((na ? na : 1) * sizeof *y->anchors);
    y->streams = gm_malloc((na ? na : 1) * sizeof *y->streams);
    if (!y->anchors || !y->streams) return GM_ERR_NOMEM;
    const int64_t last_pos = (int64_t)gm_model_node_count(m) - 1;
    int64_t size = 0;
    gm_hb_life_reset(life);
    bool dynamic = false, fixed = false, zero_copy = false, mt_set = false;
    gm_mem_type mt = GM_MEM_HBM;
    for (int32_t a = gm_symbol_first(s, sym); a >= 0; a = gm_symbols_next(s, a)) {
        gm_anchor x = gm_symbols_anchor(s, a);
        y->anchors[y->n_anchors++] = (gm_plan_anchor){x.node, x.index, x.out};
        y->streams[y->n_streams++] = gm_node_stream(x.node);
        int64_t b = anchor_bytes(x.node, x.out, x.index);
        if (b < 0) dynamic = true;
        else if (b > size) size = b;
        bool root = gm_graph_is_root(gm_node_graph(x.node));
        if (x.out) {
            /* the producer's desc says where the tensor lives; the first output found decides */
            if (!mt_set) mt = gm_desc_mem_type(gm_node_output_desc(x.node, x.index)), mt_set = true;
            if (gm_node_is(x.node, GM_OP_CONST) || gm_node_is(x.node, GM_OP_VARIABLE)) fixed = true;
            /* root RefData is a user-bound variable: it lives the whole run, never reused */
            if (root && gm_node_is(x.node, GM_OP_DATA) && gm_node_is(x.node, GM_OP_VAR_LIKE)) fixed = true;
            if (root && gm_node_is(x.node, GM_OP_DATA) && !gm_node_is(x.node, GM_OP_VAR_LIKE)) {
                zero_copy = true;
                gm_hb_life_at_start(life); /* written before the first node */
                continue;
            }
        } else if (root && gm_node_is(x.node, GM_OP_NETOUTPUT)) {
            zero_copy = true;
            gm_hb_life_at_end(life); /* read after the last node */
            continue;
        }
        if (gm_hb_life_add(life, x.node) != GM_OK) return GM_ERR_NOMEM;
    }
    qsort(y->streams, y->n_streams, sizeof *y->streams, cmp_i64);
    size_t k = 0;
    for (size_t i = 0; i < y->n_streams; i++)
        if (k == 0 || y->streams[k - 1] != y->streams[i]) y->streams[k++] = y->streams[i];
    y->n_streams = k;
    /* packed on [first, release]: safe whatever the streams (happens_before.h); the bound is
     * taken on [first, last], the accesses themselves */
    gm_hb_span sp = gm_hb_life_span(life);
    y->first = sp.first, y->last = sp.release, y->last_use = sp.last, y->mem_type = mt;
    if (fixed) {
        /* lives the whole run */
        y->region = GM_PLAN_R_FIXED, y->first = 0, y->last = y->last_use = last_pos;
    } else if (dynamic) {
        y->region = GM_PLAN_R_DYNAMIC;
    } else {
        y->region = zero_copy ? GM_PLAN_R_ZERO_COPY : GM_PLAN_R_FEATURE_MAP;
    }
    if (y->region == GM_PLAN_R_DYNAMIC) y->offset = -1, y->size = -1;
    else y->offset = 0, y->size = align_up(size, align);
    return GM_OK;
}

/* ---- packing ------------------------------------------------------------------------------- */

/* A continuous group (GE's continuous_input / continuous_output): its members' symbols, in
 * anchor order, must be laid end to end. v0 packs the whole group as one DSA buffer whose
 * lifetime is the union of the members' and whose size is their sum, then deals the offsets
 * out in order; members have aligned sizes, so each gap is the member's padding (< align). */
typedef struct cgroup {
    const gm_node *node;
    bool out;
    size_t n;
    int32_t *members; /* plan symbol per anchor, -1 unknown */
    bool usable;      /* every member known, distinct, in one region, in no other group */
} cgroup;

typedef struct packer {
    cgroup *groups;
    size_t n_groups;
    int32_t *sym_group; /* plan symbol -> usable group, -1 none */
    const gm_plan_options *o;
    gm_plan *p;
    gm_dsa_buffer *buf; /* scratch, n_symbols long */
    int32_t *idx;       /* scratch: buffer -> symbol, or -(group + 1) */
    double ms[2];       /* time per strategy */
    int64_t bytes[2];   /* height per strategy, summed over regions packed */
} packer;

/* Gathers region (r, mt)'s symbols of non-zero size into the scratch buffers, a usable
 * continuous group as one buffer. Zero-size symbols sit at offset 0 and take no room. */
static size_t gather_on(packer *k, int r, int mt, bool accesses)
{
    size_t n = 0;
    for (size_t i = 0; i < k->p->n_symbols; i++) {
        gm_plan_symbol *y = &k->p->symbols[i];
        if ((int)y->region != r || (int)y->mem_type != mt) continue;
        if (k->sym_group[i] >= 0) continue;
        if (y->size <= 0) {
            y->offset = 0;
            continue;
        }
        int64_t last = accesses ? y->last_use : y->last;
        k->buf[n] = (gm_dsa_buffer){(int64_t)n, y->first, last + 1, y->size, k->p->align, -1, NULL};
        k->idx[n++] = (int32_t)i;
    }
    for (size_t g = 0; g < k->n_groups; g++) {
        const cgroup *c = &k->groups[g];
        if (!c->usable) continue;
        const gm_plan_symbol *y0 = &k->p->symbols[c->members[0]];
        if ((int)y0->region != r || (int)y0->mem_type != mt) continue;
        int64_t first = INT64_MAX, last = -1, size = 0;
        for (size_t j = 0; j < c->n; j++) {
            const gm_plan_symbol *y = &k->p->symbols[c->members[j]];
            if (y->first < first) first = y->first;
            if (y->last > last) last = y->last;
            size += y->size;
        }
        if (size <= 0) size = k->p->align; /* members of zero size still need a base address */
        k->buf[n] = (gm_dsa_buffer){(int64_t)n, first, last + 1, size, k->p->align, -1, NULL};
        k->idx[n++] = -(int32_t)g - 1;
    }
    return n;
}

/* The buffers to pack: lifetimes up to each symbol's release. */
static size_t gather(packer *k, int r, int mt) { return gather_on(k, r, mt, false); }

/* Offsets from the packed buffers: a group deals its base out to its members in order. */
static void scatter(packer *k, size_t n)
{
    for (size_t j = 0; j < n; j++) {
        if (k->idx[j] >= 0) {
            k->p->symbols[k->idx[j]].offset = k->buf[j].offset;
            continue;
        }
        const cgroup *c = &k->groups[-k->idx[j] - 1];
        int64_t at = k->buf[j].offset;
        for (size_t m = 0; m < c->n; m++) {
            k->p->symbols[c->members[m]].offset = at;
            at += k->p->symbols[c->members[m]].size;
        }
    }
}

/* Every symbol of the region at its own address, in symbol order: no reuse. */
static int64_t pack_no_reuse(packer *k, int r, int mt)
{
    int64_t top = 0;
    size_t n = gather(k, r, mt);
    for (size_t j = 0; j < n; j++) {
        k->buf[j].offset = top;
        top += k->buf[j].size;
    }
    scatter(k, n);
    return top;
}

/* Best fit, then the branch-and-bound search from it within the budget; keeps the lower.
 * Returns the height, -1 on failure (err set). */
static int64_t pack_region(packer *k, int r, int mt, gm_error *err)
{
    size_t n = gather(k, r, mt);
    if (n == 0) return 0;
    int64_t h_fit = 0, h_search = 0;
    double t0 = now_ms();
    if (gm_dsa_best_fit(k->buf, n, &h_fit, err) != GM_OK) return -1;
    double t1 = now_ms();
    int64_t *fit_off = gm_malloc(n * sizeof *fit_off);
    if (!fit_off) return gm_error_set(err, GM_ERR_NOMEM, "out of memory"), -1;
    for (size_t j = 0; j < n; j++) fit_off[j] = k->buf[j].offset;
    gm_dsa_search_opts so = {k->o->search_budget_s, k->o->search_node_limit};
    bool optimal = false;
    if (gm_dsa_search(k->buf, n, &so, &h_search, &optimal, err) != GM_OK) {
        gm_free(fit_off);
        return -1;
    }
    double t2 = now_ms();
    k->ms[0] += t1 - t0, k->ms[1] += t2 - t1;
    k->bytes[0] += h_fit, k->bytes[1] += h_search;
    int64_t h = h_search;
    if (h_fit < h_search) { /* the search starts from several greedy orders; never worse in
                               practice, but keep whichever is lower */
        for (size_t j = 0; j < n; j++) k->buf[j].offset = fit_off[j];
        h = h_fit;
    }
    gm_free(fit_off);
    scatter(k, n);
    return h;
}

/* The peak live total of the region's symbols between first and last access (the DSA's LOAD
 * there): symbols live at one position are unordered, so no valid plan is lower. */
static int64_t region_load(packer *k, int r, int mt)
{
    size_t n = gather_on(k, r, mt, true);
    return n ? gm_dsa_lower_bound(k->buf, n) : 0;
}

/* Extents and the summary numbers from the offsets as they stand. */
static void summarize(gm_plan *p)
{
    memset(p->region_bytes, 0, sizeof p->region_bytes);
    memset(p->region_used, 0, sizeof p->region_used);
    memset(p->by_memory_type, 0, sizeof p->by_memory_type);
    p->feature_map_bytes = p->no_reuse_bytes = p->zero_copy_bytes = p->fixed_bytes = 0;
    p->dynamic_symbols = 0;
    for (size_t i = 0; i < p->n_symbols; i++) {
        const gm_plan_symbol *y = &p->symbols[i];
        p->region_used[y->region][y->mem_type] = true;
        if (y->region == GM_PLAN_R_DYNAMIC) {
            p->dynamic_symbols++;
            continue;
        }
        int64_t e = y->offset + y->size;
        if (e > p->region_bytes[y->region][y->mem_type]) p->region_bytes[y->region][y->mem_type] = e;
        if (y->region == GM_PLAN_R_FEATURE_MAP) p->no_reuse_bytes += y->size;
    }
    for (int mt = 0; mt < GM_MEM_COUNT; mt++) {
        p->by_memory_type[mt] = p->region_bytes[GM_PLAN_R_FEATURE_MAP][mt];
        p->feature_map_bytes += p->region_bytes[GM_PLAN_R_FEATURE_MAP][mt];
        p->zero_copy_bytes += p->region_bytes[GM_PLAN_R_ZERO_COPY][mt];
        p->fixed_bytes += p->region_bytes[GM_PLAN_R_FIXED][mt];
    }
}

/* The regions the DSA packs: fixed is laid end to end, dynamic has no offsets. */
static bool reusable(int r) { return r == GM_PLAN_R_FEATURE_MAP || r == GM_PLAN_R_ZERO_COPY; }

/* Finds the continuous groups (not the no-padding kinds, which v0 does not plan) and marks
 * the usable ones in k->sym_group. */
static gm_status build_groups(packer *k, const gm_model *m)
{
    size_t nn = gm_model_node_count(m);
    int32_t *node_group[2]; /* [in/out] node topo id -> group, -1 none */
    node_group[0] = gm_malloc((nn ? nn : 1) * sizeof(int32_t));
    node_group[1] = gm_malloc((nn ? nn : 1) * sizeof(int32_t));
    k->groups = gm_calloc(2 * (nn ? nn : 1), sizeof *k->groups);
    if (!node_group[0] || !node_group[1] || !k->groups) goto nomem;
    for (size_t t = 0; t < nn; t++) {
        gm_node *x = gm_model_node_at(m, t);
        node_group[0][t] = node_group[1][t] = -1;
        for (int out = 0; out < 2; out++) {
            const gm_attr *a = gm_attr_find(*gm_node_attrs(x), out ? "continuous_output" : "continuous_input");
            if (!a || gm_attr_get_kind(a) != GM_ATTR_BOOL || !gm_attr_bool(a)) continue;
            size_t cnt = out ? gm_node_output_count(x) : gm_node_input_count(x);
            if (cnt == 0) continue;
            cgroup *c = &k->groups[k->n_groups];
            *c = (cgroup){x, out != 0, cnt, gm_malloc(cnt * sizeof(int32_t)), true};
            if (!c->members) goto nomem;
            for (size_t j = 0; j < cnt; j++) c->members[j] = -1;
            node_group[out][t] = (int32_t)k->n_groups++;
        }
    }
    for (size_t i = 0; i < k->p->n_symbols; i++) {
        const gm_plan_symbol *y = &k->p->symbols[i];
        for (size_t j = 0; j < y->n_anchors; j++) {
            const gm_plan_anchor *a = &y->anchors[j];
            int32_t g = node_group[a->out][gm_node_topo_id(a->node)];
            if (g >= 0) k->groups[g].members[a->index] = (int32_t)i;
        }
    }
    for (size_t g = 0; g < k->n_groups; g++) {
        cgroup *c = &k->groups[g];
        for (size_t j = 0; j < c->n && c->usable; j++) {
            int32_t y = c->members[j];
            const gm_plan_symbol *s0 = c->members[0] >= 0 ? &k->p->symbols[c->members[0]] : NULL;
            if (y < 0 || !s0 || k->sym_group[y] >= 0 || !reusable(k->p->symbols[y].region) ||
                k->p->symbols[y].region != s0->region || k->p->symbols[y].mem_type != s0->mem_type)
                c->usable = false;
            for (size_t i = 0; i < j && c->usable; i++)
                if (c->members[i] == y) c->usable = false;
        }
        /* claim the members only once the whole group is known usable */
        for (size_t j = 0; j < c->n && c->usable; j++) k->sym_group[c->members[j]] = (int32_t)g;
    }
    gm_free(node_group[0]);
    gm_free(node_group[1]);
    return GM_OK;
nomem:
    gm_free(node_group[0]);
    gm_free(node_group[1]);
    return GM_ERR_NOMEM;
}

static void free_groups(packer *k)
{
    for (size_t g = 0; g < k->n_groups; g++) gm_free(k->groups[g].members);
    gm_free(k->groups);
    gm_free(k->sym_group);
}

/* ---- self-check and repair ----------------------------------------------------------------- */

/* Writes and verifies the plan; *v is filled on GM_OK. */
static gm_status self_check(const gm_model *m, gm_plan *p, gm_plan_verdict *v, gm_error *err)
{
    summarize(p);
    char *text = NULL;
    size_t len = 0;
    gm_status st = gm_plan_write_json(m, p, &text, &len, err);
    if (st != GM_OK) return st;
    st = gm_plan_verify_json(m, text, len, "planner self-check", v, err);
    free(text);
    return st;
}

/* Merges the lifetimes of every overlapping pair in v; marks their regions dirty. Returns the
 * number of pairs merged. */
static size_t merge_overlaps(gm_plan *p, const gm_strmap *by_id, const gm_plan_verdict *v,
                             bool dirty[GM_PLAN_R_COUNT][GM_MEM_COUNT])
{
    size_t merged = 0;
    for (size_t i = 0; i < v->n_problems; i++) {
        const gm_plan_problem *q = &v->problems[i];
        if (q->kind != GM_PLAN_P_OVERLAP) continue;
        gm_plan_symbol *a = gm_strmap_get(by_id, q->sym_a), *b = gm_strmap_get(by_id, q->sym_b);
        if (!a || !b) continue;
        /* the union: neither can start before the other is done, so the packer keeps them apart */
        int64_t f = a->first < b->first ? a->first : b->first;
        int64_t l = a->last > b->last ? a->last : b->last;
        a->first = b->first = f;
        a->last = b->last = l;
        dirty[a->region][a->mem_type] = true;
        dirty[b->region][b->mem_type] = true;
        merged++;
    }
    return merged;
}

static gm_status pack_all(packer *k, bool only_dirty, bool dirty[GM_PLAN_R_COUNT][GM_MEM_COUNT],
                          gm_error *err)
{
    for (int r = 0; r < GM_PLAN_R_DYNAMIC; r++)
        for (int mt = 0; mt < GM_MEM_COUNT; mt++) {
            if (only_dirty && !dirty[r][mt]) continue;
            if (!reusable(r) || k->p->fallback[mt][r]) pack_no_reuse(k, r, mt);
            else if (pack_region(k, r, mt, err) < 0) return err->code ? err->code : GM_ERR_INTERNAL;
        }
    return GM_OK;
}

gm_status gm_plan_build(const gm_model *m, const gm_plan_options *o, gm_plan **out, gm_error *err)
{
    gm_error local;
    if (!err) err = &local;
    gm_error_clear(err);
    *out = NULL;
    gm_plan_options defaults;
    gm_plan_options_init(&defaults);
    if (!o) o = &defaults;
    if (o->align <= 0)
        return gm_error_set(err, GM_ERR_INPUT, "plan options: align must be positive (got %lld)",
                            (long long)o->align);

    gm_symbols *s = NULL;
    gm_status st = gm_symbols_build(m, &s, err);
    if (st != GM_OK) return st;
    gm_plan *p = gm_calloc(1, sizeof *p);
    gm_hb *hb = NULL;
    gm_hb_life *life = NULL;
    size_t ns = gm_symbols_count(s);
    gm_strmap by_id = {0};
    packer k = {.o = o, .p = p};
    if (!p) goto nomem;
    if ((st = gm_hb_build(m, &hb, err)) != GM_OK) goto fail;
    if (gm_hb_life_new(hb, &life) != GM_OK) goto nomem;
    p->align = o->align;
    p->symbols = gm_calloc(ns ? ns : 1, sizeof *p->symbols);
    k.buf = gm_malloc((ns ? ns : 1) * sizeof *k.buf);
    k.idx = gm_malloc((ns ? ns : 1) * sizeof *k.idx);
    k.sym_group = gm_malloc((ns ? ns : 1) * sizeof *k.sym_group);
    if (!p->symbols || !k.buf || !k.idx || !k.sym_group || gm_strmap_reserve(&by_id, ns)) goto nomem;
    for (size_t i = 0; i < ns; i++) {
        p->n_symbols = i + 1;
        if (describe_symbol(m, s, gm_symbols_at(s, i), life, o->align, &p->symbols[i]) != GM_OK) goto nomem;
        if (gm_strmap_put(&by_id, p->symbols[i].id, &p->symbols[i])) goto nomem;
        k.sym_group[i] = -1;
    }
    gm_symbols_free(s);
    s = NULL;

    /* the bound is taken on the lifetimes before any repair: repairs only lengthen them, and
     * the bound must hold for every valid plan, not just this one */
    for (int mt = 0; mt < GM_MEM_COUNT; mt++) p->lower_bound_bytes += region_load(&k, GM_PLAN_R_FEATURE_MAP, mt);
    /* groups after the bound: the bound is over symbols, each on its own lifetime */
    if (build_groups(&k, m) != GM_OK) goto nomem;

    bool dirty[GM_PLAN_R_COUNT][GM_MEM_COUNT] = {{false}};
    if ((st = pack_all(&k, false, dirty, err)) != GM_OK) goto fail;
    /* strategy figures describe the first full pack; repairs re-pack only parts */
    snprintf(p->strategies[0].name, sizeof p->strategies[0].name, "best_fit");
    snprintf(p->strategies[1].name, sizeof p->strategies[1].name, "dsa_search");
    for (int i = 0; i < 2; i++) p->strategies[i].bytes = k.bytes[i], p->strategies[i].ms = k.ms[i];
    p->n_strategies = 2;
    p->strategy = k.bytes[0] < k.bytes[1] ? p->strategies[0].name : p->strategies[1].name;

    for (uint32_t round = 0;; round++) {
        gm_plan_verdict v;
        if ((st = self_check(m, p, &v, err)) != GM_OK) goto fail;
        p->repair_rounds++;
        size_t overlaps = v.by_kind[GM_PLAN_P_OVERLAP];
        p->unresolved = v.n_problems + v.dropped;
        memset(dirty, 0, sizeof dirty);
        size_t merged = overlaps ? merge_overlaps(p, &by_id, &v, dirty) : 0;
        gm_plan_verdict_free(&v);
        if (overlaps == 0) break;
        if (merged == 0 || round >= o->repair_rounds) {
            /* out of rounds (or nothing we can merge): every region still overlapping loses reuse,
             * which no stream order can break */
            bool any = false;
            for (int r = 0; r < GM_PLAN_R_DYNAMIC; r++)
                for (int mt = 0; mt < GM_MEM_COUNT; mt++)
                    if ((merged ? dirty[r][mt] : reusable(r)) && !p->fallback[mt][r])
                        p->fallback[mt][r] = true, dirty[r][mt] = true, any = true;
            if (!any) break; /* already at no reuse: what is left is not an overlap we made */
        } else {
            p->repaired_pairs += merged;
        }
        if ((st = pack_all(&k, true, dirty, err)) != GM_OK) goto fail;
    }
    summarize(p);
    gm_strmap_free(&by_id);
    gm_hb_life_free(life);
    gm_hb_free(hb);
    gm_free(k.buf);
    gm_free(k.idx);
    free_groups(&k);
    *out = p;
    return GM_OK;

nomem:
    st = gm_error_set(err, GM_ERR_NOMEM, "out of memory planning '%s'", gm_model_name(m));
fail:
    gm_symbols_free(s);
    gm_strmap_free(&by_id);
    gm_hb_life_free(life);
    gm_hb_free(hb);
    gm_free(k.buf);
    gm_free(k.idx);
    free_groups(&k);
    gm_plan_free(p);
    return st;
}
