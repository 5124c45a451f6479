/*
 * plan_nopad.c — no-padding continuous groups (_no_padding_continuous_input / _output): the
 * members lie end to end with no gap at all, at their real sizes, which no aligned packing of
 * separate symbols can give. So the members become views of one symbol: a no-padding output
 * node's outputs join its input 0's symbol, a no-padding input node's inputs join its output
 * 0's symbol, member k addressing it at the real sizes of the members before it (the plan
 * writes these as the anchors' own offsets, docs/plan-format.md). Only the symbol's start is
 * aligned. A group that cannot be laid out this way (a member in two groups, a nested whole, a
 * size known only at run time) is left alone, and the verifier says what is wrong.
 *
 * An output member may already be in the whole's symbol: GE's "nopadding reuse" rule (a
 * no-padding node with `_output_reuse_input`: EVERY output is input 0, reference §2.2 rule 5)
 * puts them all there, and graphmem's symbols follow GE so that the layout checkers see what
 * GE sees. GE's continuous assignment still places output k after the ones before it (out1 =
 * out0 + size, S13); graphmem does the same by giving such a member's anchors their own offset
 * inside the symbol instead of moving them (fix_inside). Input members stay as they were: one
 * tensor fed to two positions cannot lie at both.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/ref.h"
#include "ir/ir.h"
#include "plan/planner_internal.h"
#include "util/alloc.h"

typedef struct claim {
    int32_t whole; /* symbol this one joins, -1 none */
    int64_t rel;   /* where in it */
} claim;

/* An output member already inside its whole's symbol, to be placed at rel there. */
typedef struct inside {
    const gm_node *n;
    uint32_t k;
    int32_t whole;
    int64_t rel;
} inside;

typedef struct inside_vec {
    inside *v;
    size_t n, cap;
} inside_vec;

typedef struct anchor_map {
    size_t *base[2];  /* [in/out] node topo id -> first slot */
    int32_t *sym[2];  /* [in/out] slot -> plan symbol, -1 none */
    size_t *pos[2];   /* [in/out] slot -> index in that symbol's anchor list (joins only append,
                         so it stays right for the anchors a symbol held from the start) */
    size_t n_slots[2];
} anchor_map;

static void map_free(anchor_map *a)
{
    for (int k = 0; k < 2; k++) gm_free(a->base[k]), gm_free(a->sym[k]), gm_free(a->pos[k]);
}

static gm_status map_build(anchor_map *a, const gm_model *m, const gm_plan *p)
{
    size_t nn = gm_model_node_count(m), cnt[2] = {0, 0};
    for (int k = 0; k < 2; k++) a->base[k] = gm_malloc((nn + 1) * sizeof *a->base[k]);
    if (!a->base[0] || !a->base[1]) return GM_ERR_NOMEM;
    for (size_t t = 0; t < nn; t++) {
        const gm_node *x = gm_model_node_at(m, t);
        a->base[0][t] = cnt[0], a->base[1][t] = cnt[1];
        cnt[0] += gm_node_input_count(x), cnt[1] += gm_node_output_count(x);
    }
    for (int k = 0; k < 2; k++) {
        a->n_slots[k] = cnt[k];
        a->sym[k] = gm_malloc((cnt[k] ? cnt[k] : 1) * sizeof *a->sym[k]);
        a->pos[k] = gm_malloc((cnt[k] ? cnt[k] : 1) * sizeof *a->pos[k]);
        if (!a->sym[k] || !a->pos[k]) return GM_ERR_NOMEM;
        for (size_t i = 0; i < cnt[k]; i++) a->sym[k][i] = -1;
    }
    for (size_t s = 0; s < p->n_symbols; s++)
        for (size_t j = 0; j < p->symbols[s].n_anchors; j++) {
            const gm_plan_anchor *x = &p->symbols[s].anchors[j];
            size_t slot = a->base[x->out][gm_node_topo_id(x->node)] + x->index;
            a->sym[x->out][slot] = (int32_t)s;
            a->pos[x->out][slot] = j;
        }
    return GM_OK;
}

static int32_t sym_of(const anchor_map *a, const gm_node *n, bool out, size_t i)
{
    return a->sym[out][a->base[out][gm_node_topo_id(n)] + i];
}

/* Bytes of member i: an output's desc, or the tensor an input reads. -1 unknown. */
static int64_t member_bytes(const gm_node *n, bool out, uint32_t i)
{
    if (out) return gm_desc_size(gm_node_output_desc(n, i));
    int32_t src_index = 0;
    const gm_node *src = gm_node_input(n, i, &src_index);
    return src ? gm_desc_size(gm_node_output_desc(src, (size_t)src_index)) : -1;
}

/* Claims node n's group (members on side `out`, the whole on the other side's anchor 0) when
 * every member can join it. Output members already in the whole's symbol are noted in *ins
 * (GM_ERR_NOMEM when that fails). */
static gm_status claim_group(const anchor_map *a, const gm_plan *p, const gm_node *n, bool out, claim *c,
                             inside_vec *ins)
{
    size_t count = out ? gm_node_output_count(n) : gm_node_input_count(n);
    int32_t whole = sym_of(a, n, !out, 0);
    if (count < 2 || whole < 0 || p->symbols[whole].region == GM_PLAN_R_DYNAMIC || c[whole].whole >= 0) return GM_OK;
    int64_t rel = 0;
    for (size_t i = 0; i < count; i++) { /* all or nothing */
        int32_t y = sym_of(a, n, out, i);
        int64_t b = member_bytes(n, out, (uint32_t)i);
        if (y < 0 || b < 0 || p->symbols[y].region == GM_PLAN_R_DYNAMIC) return GM_OK;
        if (y == whole) {
            if (rel != 0 && !out) return GM_OK;
            rel += b;
            continue;
        }
        if (c[y].whole >= 0) return GM_OK;
        for (size_t j = 0; j < i; j++)
            if (sym_of(a, n, out, j) == y) return GM_OK;
        rel += b;
    }
    rel = 0;
    for (size_t i = 0; i < count; i++) {
        int32_t y = sym_of(a, n, out, i);
        if (y != whole) {
            c[y] = (claim){whole, rel};
        } else if (out) {
            /* at the start too: a member is a view of its own real size, whichever symbol held
             * it (joined members carry their offsets the same way) */
            if (ins->n == ins->cap) {
                size_t cap = ins->cap ? ins->cap * 2 : 8;
                inside *v = gm_realloc(ins->v, cap * sizeof *v);
                if (!v) return GM_ERR_NOMEM;
                ins->v = v, ins->cap = cap;
            }
            ins->v[ins->n++] = (inside){n, (uint32_t)i, whole, rel};
        }
        rel += member_bytes(n, out, (uint32_t)i);
    }
    return GM_OK;
}

/* Gives anchor (x, out, i) the offset rel if it is one of symbol w's; false when it is not. */
static bool set_anchor_offset(const anchor_map *a, gm_plan *p, int32_t w, const gm_node *x, bool out, uint32_t i,
                              int64_t rel)
{
    if (sym_of(a, x, out, i) != w) return false;
    p->symbols[w].anchors[a->pos[out][a->base[out][gm_node_topo_id(x)] + i]].offset = rel;
    return true;
}

/* An output to visit in fix_inside. */
typedef struct out_at {
    const gm_node *n;
    uint32_t k;
} out_at;

/* Output k of n is in symbol w but lies rel bytes into it: so do its readers' input anchors,
 * and, through views, in-place and pass-through ops reading it (gm_ref_input_of_output), their
 * outputs and readers — this member's tensor wherever it goes in w. The walk stops at anchors
 * not in w and at subgraph boundaries (gm_ref_input_of_output does not cross them from an
 * input). It keeps its own stack (a chain of in-place ops may be as long as the graph), one
 * entry per output slot of the model at most: a ref output has one input, so each output is
 * reached once. The whole's size covers what it places. */
static void fix_inside(const anchor_map *a, gm_plan *p, int32_t w, const gm_node *n, uint32_t k, int64_t rel,
                       out_at *stack)
{
    size_t top = 0;
    gm_plan_symbol *y = &p->symbols[w];
    int64_t align = gm_plan_region_align(p, y->region);
    stack[top++] = (out_at){n, k};
    while (top) {
        out_at cur = stack[--top];
        if (!set_anchor_offset(a, p, w, cur.n, true, cur.k, rel)) continue;
        int64_t b = gm_desc_size(&cur.n->out[cur.k].desc);
        if (b >= 0) {
            int64_t end = (rel + b + align - 1) / align * align;
            if (end > y->size) y->size = end;
            if (rel + b > y->real_size) y->real_size = rel + b;
        }
        const gm_out_slot *o = &cur.n->out[cur.k];
        for (uint32_t u = 0; u < o->n_uses; u++) {
            const gm_node *r = o->uses[u].node;
            uint32_t ri = (uint32_t)o->uses[u].index, in;
            if (!set_anchor_offset(a, p, w, r, false, ri, rel)) continue;
            for (uint32_t rk = 0; rk < r->n_out && top < a->n_slots[1]; rk++)
                if (gm_ref_input_of_output(r, rk, &in) && in == ri) stack[top++] = (out_at){r, rk};
        }
    }
}

/* Moves symbol y's anchors into w at rel bytes; w's lifetime, streams, size and region cover y. */
static gm_status join(gm_plan *p, gm_plan_symbol *w, gm_plan_symbol *y, int64_t rel)
{
    gm_plan_anchor *an = gm_realloc(w->anchors, (w->n_anchors + y->n_anchors) * sizeof *an);
    if (!an) return GM_ERR_NOMEM;
    w->anchors = an;
    for (size_t j = 0; j < y->n_anchors; j++) {
        an[w->n_anchors] = y->anchors[j];
        an[w->n_anchors++].offset = rel;
    }
    int64_t *st = gm_realloc(w->streams, (w->n_streams + y->n_streams) * sizeof *st);
    if (!st) return GM_ERR_NOMEM;
    w->streams = st;
    for (size_t j = 0; j < y->n_streams; j++) {
        size_t k = 0;
        while (k < w->n_streams && st[k] < y->streams[j]) k++;
        if (k < w->n_streams && st[k] == y->streams[j]) continue;
        memmove(st + k + 1, st + k, (w->n_streams - k) * sizeof *st);
        st[k] = y->streams[j], w->n_streams++;
    }
    if (y->first < w->first) w->first = y->first;
    if (y->last > w->last) w->last = y->last;
    w->continuous |= y->continuous;
    w->atomic_clean |= y->atomic_clean;
    if (y->last_use > w->last_use) w->last_use = y->last_use;
    int64_t align = gm_plan_region_align(p, w->region);
    int64_t end = (rel + y->real_size + align - 1) / align * align;
    if (end > w->size) w->size = end;
    if (rel + y->real_size > w->real_size) w->real_size = rel + y->real_size;
    /* the stricter region wins: feature map < zero copy < fixed (the enum's order) */
    if (y->region > w->region) w->region = y->region;
    w->no_reuse = w->no_reuse || y->no_reuse;
    return GM_OK;
}

bool gm_plan_nopad_any(const gm_model *m)
{
    for (size_t t = 0; t < gm_model_node_count(m); t++) {
        const gm_attr *list = gm_node_attr_list(gm_model_node_at(m, t));
        if (gm_attrs_get_bool(list, "_no_padding_continuous_output", false) ||
            gm_attrs_get_bool(list, "_no_padding_continuous_input", false))
            return true;
    }
    return false;
}

gm_status gm_plan_identity_remap(const gm_plan *p, int32_t **remap)
{
    *remap = gm_malloc((p->n_symbols ? p->n_symbols : 1) * sizeof **remap);
    if (!*remap) return GM_ERR_NOMEM;
    for (size_t s = 0; s < p->n_symbols; s++) (*remap)[s] = (int32_t)s;
    return GM_OK;
}

gm_status gm_plan_merge_nopad(const gm_model *m, gm_plan *p, int32_t **remap_out)
{
    *remap_out = NULL;
    /* nothing to join: every symbol is its own (no anchor map to build) */
    if (!gm_plan_nopad_any(m)) return gm_plan_identity_remap(p, remap_out);
    anchor_map a = {{NULL, NULL}, {NULL, NULL}, {NULL, NULL}, {0, 0}};
    inside_vec ins = {NULL, 0, 0};
    claim *c = gm_malloc((p->n_symbols ? p->n_symbols : 1) * sizeof *c);
    int32_t *remap = gm_malloc((p->n_symbols ? p->n_symbols : 1) * sizeof *remap);
    gm_status st = GM_ERR_NOMEM;
    if (!c || !remap) goto out;
    if (map_build(&a, m, p) != GM_OK) goto out;
    for (size_t s = 0; s < p->n_symbols; s++) c[s] = (claim){-1, 0};
    size_t nn = gm_model_node_count(m);
    for (size_t t = 0; t < nn; t++) {
        gm_node *x = gm_model_node_at(m, t);
        const gm_attr *list = gm_node_attr_list(x);
        if (gm_attrs_get_bool(list, "_no_padding_continuous_output", false) &&
            (st = claim_group(&a, p, x, true, c, &ins)) != GM_OK)
            goto out;
        if (gm_attrs_get_bool(list, "_no_padding_continuous_input", false) &&
            (st = claim_group(&a, p, x, false, c, &ins)) != GM_OK)
            goto out;
    }
    for (size_t s = 0; s < p->n_symbols; s++) {
        if (c[s].whole < 0) continue;
        if ((st = join(p, &p->symbols[c[s].whole], &p->symbols[s], c[s].rel)) != GM_OK) goto out;
    }
    if (ins.n) {
        out_at *stack = gm_malloc(a.n_slots[1] * sizeof *stack); /* ins.n > 0: there are outputs */
        if (!stack) {
            st = GM_ERR_NOMEM;
            goto out;
        }
        for (size_t i = 0; i < ins.n; i++)
            fix_inside(&a, p, ins.v[i].whole, ins.v[i].n, ins.v[i].k, ins.v[i].rel, stack);
        gm_free(stack);
    }
    /* compact: a joined symbol's index maps to its whole's new index */
    size_t k = 0;
    for (size_t s = 0; s < p->n_symbols; s++) {
        if (c[s].whole >= 0) {
            gm_plan_symbol *y = &p->symbols[s];
            gm_free(y->id), gm_free(y->anchors), gm_free(y->streams), gm_free(y->batch_label);
            continue;
        }
        remap[s] = (int32_t)k;
        p->symbols[k++] = p->symbols[s];
    }
    for (size_t s = 0; s < p->n_symbols; s++)
        if (c[s].whole >= 0) remap[s] = remap[c[s].whole];
    p->n_symbols = k;
    st = GM_OK;
out:
    map_free(&a);
    gm_free(ins.v);
    gm_free(c);
    if (st != GM_OK) gm_free(remap), remap = NULL;
    *remap_out = remap;
    return st;
}
