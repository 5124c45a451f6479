/*
 * verify.c — `graphmem verify`: checks a memory plan (docs/plan-format.md) against a model,
 * independently of the planner. It reads the plan with cJSON (verify_read.c: element by element
 * for the big arrays; verify_fast.c: the planner's own symbol form without cJSON) and the model
 * through the IR; it never builds the planner's symbol table (analysis/symbols.h), so a planner
 * bug cannot vouch for itself. What must share an address is asked of analysis/ref.h (GE's
 * IsRefFromInput), the same rules the model format defines.
 *
 * Checks, in order:
 *  1. anchors: symbol ids are unique; every anchor names a node/index of the model and lies in
 *     one symbol; every output of known non-zero size is placed; each consumer's in-anchor is
 *     in its producer's symbol; ref outputs (in-place, views, pass-through, subgraph
 *     Data/NetOutput, Merge and its NextIteration, GE's ref-from-RefData) share; and a symbol
 *     holds one tensor only: its anchors are joined by those rules (no-padding group members,
 *     views of the whole, may join it too);
 *  2. sizes: each tensor fits its symbol (an anchor with its own "offset" lies inside it); a
 *     tensor of unknown size lies in the dynamic region;
 *  3. alignment of symbol offsets to the region's "align";
 *  4. regions: known names, dynamic without offset, inside the region's size;
 *  5. address overlap vs happens-before (verify_order.c builds the event order);
 *  6. continuous groups;
 *  7. the claimed lower bound against its witness (verify_bound.c).
 *
 * Cost: O(V + E + anchors + S log S) for 1-4 and 6 (S symbols; ids are hashed); the overlap
 * check is a sweep over address boundaries, O(S log S) to sort plus, per symbol entering or
 * leaving the sweep, O(log S) in the active set and at most two happens-before tests of
 * O((accesses of both) x streams touched). See verify_order.c.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "analysis/ref.h"
#include "graphmem/io.h"
#include "graphmem/plan.h"
#include "ir/ir.h"
#include "ops/op_table.h"
#include "plan/verify_internal.h"
#include "util/alloc.h"
#include "util/parallel.h"

static const char *const kind_names[GM_PLAN_P_KIND_COUNT] = {
    "unknown-anchor", "bad-order", "unplaced", "duplicate", "split", "too-small",
    "misaligned", "region", "fixed-overlap", "overlap", "continuous", "unrelated", "bound", "race", "passes",
};

const char *gm_plan_problem_kind_name(gm_plan_problem_kind k)
{
    return (unsigned)k < GM_PLAN_P_KIND_COUNT ? kind_names[k] : "?";
}

void gm_plan_verdict_free(gm_plan_verdict *v)
{
    if (!v) return;
    gm_free(v->problems);
    memset(v, 0, sizeof *v);
}

/* ---- problems -------------------------------------------------------------------------- */

gm_status gm_vfy_problem(gm_vfy *c, gm_plan_problem_kind kind, int32_t a, int32_t b, const gm_node *n,
                         int32_t index, bool out, const char *fmt, ...)
{
    gm_plan_verdict *v = c->v;
    v->by_kind[kind]++;
    if (v->n_problems >= GM_PLAN_VERDICT_MAX_PROBLEMS) {
        v->dropped++;
        return GM_OK;
    }
    if (gm_grow((void **)&v->problems, sizeof *v->problems, v->n_problems + 1, &v->cap_problems)) return GM_ERR_NOMEM;
    gm_plan_problem *p = &v->problems[v->n_problems++];
    memset(p, 0, sizeof *p);
    p->kind = kind;
    p->index = n ? index : -1;
    p->out = out;
    if (a >= 0) snprintf(p->sym_a, sizeof p->sym_a, "%s", c->syms[a].id);
    if (b >= 0) snprintf(p->sym_b, sizeof p->sym_b, "%s", c->syms[b].id);
    if (n) snprintf(p->node, sizeof p->node, "%s", n->name);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->message, sizeof p->message, fmt, ap);
    va_end(ap);
    return GM_OK;
}

#define PROBLEM(...)                                                    \
    do {                                                                \
        if (gm_vfy_problem(__VA_ARGS__) != GM_OK) return GM_ERR_NOMEM;  \
    } while (0)

/* ---- anchors --------------------------------------------------------------------------- */

/* Per-node anchor slots: node topo id -> first out / in slot. */
static gm_status build_slots(gm_vfy *c)
{
    size_t n = c->n_nodes, no = 0, ni = 0;
    c->out_base = gm_malloc((n + 1) * sizeof *c->out_base);
    c->in_base = gm_malloc((n + 1) * sizeof *c->in_base);
    if (!c->out_base || !c->in_base) return GM_ERR_NOMEM;
    for (size_t i = 0; i < n; i++) {
        const gm_node *x = gm_model_node_at(c->m, i);
        c->out_base[i] = no;
        c->in_base[i] = ni;
        no += x->n_out;
        ni += x->n_in;
    }
    c->out_base[n] = no;
    c->in_base[n] = ni;
    c->out_sym = gm_malloc((no ? no : 1) * sizeof *c->out_sym);
    c->in_sym = gm_malloc((ni ? ni : 1) * sizeof *c->in_sym);
    c->out_anc = gm_malloc((no ? no : 1) * sizeof *c->out_anc);
    c->in_anc = gm_malloc((ni ? ni : 1) * sizeof *c->in_anc);
    if (!c->out_sym || !c->in_sym || !c->out_anc || !c->in_anc) return GM_ERR_NOMEM;
    for (size_t i = 0; i < no; i++) c->out_sym[i] = c->out_anc[i] = -1;
    for (size_t i = 0; i < ni; i++) c->in_sym[i] = c->in_anc[i] = -1;
    return GM_OK;
}

static int32_t *sym_slot(gm_vfy *c, const gm_node *n, bool out, uint32_t i)
{
    return out ? &c->out_sym[c->out_base[n->topo_id] + i] : &c->in_sym[c->in_base[n->topo_id] + i];
}

static int32_t anc_of(const gm_vfy *c, const gm_node *n, bool out, uint32_t i)
{
    return out ? c->out_anc[c->out_base[n->topo_id] + i] : c->in_anc[c->in_base[n->topo_id] + i];
}

/* Bytes of the tensor at an anchor: an output's desc; an input is its producer's output. */
int64_t gm_vfy_anchor_bytes(const gm_node *n, bool out, uint32_t i)
{
    if (out) return gm_desc_size(&n->out[i].desc);
    const gm_in_slot *s = &n->in[i];
    if (s->src) return gm_desc_size(&s->src->out[s->src_index].desc);
    return gm_desc_size(&n->in_desc[i]);
}

static gm_status resolve_anchors(gm_vfy *c)
{
    for (size_t k = 0; k < c->n_anc; k++) {
        gm_vfy_anchor *a = &c->anc[k];
        gm_node *n = a->node; /* looked up by name as the plan was read */
        uint32_t count = n ? (a->out ? n->n_out : n->n_in) : 0;
        a->node = NULL;
        if (!n || a->index >= count) {
            PROBLEM(c, GM_PLAN_P_UNKNOWN_ANCHOR, a->sym, -1, NULL, -1, a->out,
                    n ? "symbol '%s': node '%s' has no %s %u" : "symbol '%s': no node '%s' in the model%s",
                    c->syms[a->sym].id, a->name, n ? (a->out ? "output" : "input") : "", a->index);
            continue;
        }
        a->node = n;
        int32_t *slot = sym_slot(c, n, a->out, a->index);
        if (*slot >= 0 && *slot != a->sym) {
            PROBLEM(c, GM_PLAN_P_DUPLICATE, *slot, a->sym, n, (int32_t)a->index, a->out,
                    "%s:%s %u is in two symbols, '%s' and '%s'", n->name, a->out ? "out" : "in", a->index,
                    c->syms[*slot].id, c->syms[a->sym].id);
            continue;
        }
        *slot = a->sym;
        int32_t *as = a->out ? &c->out_anc[c->out_base[n->topo_id] + a->index]
                             : &c->in_anc[c->in_base[n->topo_id] + a->index];
        *as = (int32_t)k;
    }
    return GM_OK;
}

/* Union-find over the plan's anchors: which anchors of a symbol the graph makes one tensor. */
static int32_t uf_find(gm_vfy *c, int32_t a)
{
    while (c->uf[a] != a) {
        c->uf[a] = c->uf[c->uf[a]]; /* path halving */
        a = c->uf[a];
    }
    return a;
}

static void uf_union(gm_vfy *c, int32_t a, int32_t b)
{
    if (a < 0 || b < 0) return;
    a = uf_find(c, a);
    b = uf_find(c, b);
    if (a != b) c->uf[a > b ? a : b] = a > b ? b : a;
}

/* Two anchors that must be one address: the same symbol (then they are one tensor). */
static gm_status must_share(gm_vfy *c, const gm_node *x, bool xo, uint32_t xi, const gm_node *y, bool yo,
                            uint32_t yi, const char *why)
{
    int32_t sx = *sym_slot(c, x, xo, xi), sy = *sym_slot(c, y, yo, yi);
    if (sx < 0 || sy < 0) return GM_OK; /* an unplaced anchor is reported on its own */
    if (sx == sy) uf_union(c, anc_of(c, x, xo, xi), anc_of(c, y, yo, yi));
    if (sx != sy) {
        PROBLEM(c, GM_PLAN_P_SPLIT, sx, sy, y, (int32_t)yi, yo,
                "%s:%s %u (symbol '%s') and %s:%s %u (symbol '%s') must share one address: %s", x->name,
                xo ? "out" : "in", xi, c->syms[sx].id, y->name, yo ? "out" : "in", yi, c->syms[sy].id, why);
    }
    return GM_OK;
}

/* GE's "ref from other" (symbols are built the same way): an output naming a RefData of its
 * graph by ref_var_src_var_name, or a subgraph RefData ordered after a subgraph Data by a
 * control edge, is that node's output 0 — instead of the ref input rule. */
static const gm_node *ref_from_other(const gm_vfy *c, const gm_node *n, uint32_t k)
{
    const uint32_t refdata = GM_OP_VAR_LIKE | GM_OP_DATA;
    const char *var = gm_attrs_get_string(n->out[k].desc.attrs, "ref_var_src_var_name");
    if (var) {
        const gm_node *x = gm_model_find_node(c->m, var);
        if (x && x->graph == n->graph && (x->op->flags & refdata) == refdata && x->n_out > 0) return x;
    }
    if (n->graph->parent && (n->op->flags & refdata) == refdata) {
        for (uint32_t i = 0; i < n->ctrl_in.n; i++) {
            const gm_node *d = n->ctrl_in.v[i];
            if (gm_subgraph_data_parent_index(d) >= 0 && d->n_out > 0) return d;
        }
    }
    return NULL;
}

/* Each symbol must be one tensor: its anchors joined by the rules above. Two outputs with no
 * such tie in one symbol would share an address for their whole lives, which the overlap
 * check (between symbols) never sees. */
static gm_status check_unrelated(gm_vfy *c)
{
    for (size_t s = 0; s < c->n_syms; s++) {
        const gm_vfy_sym *y = &c->syms[s];
        int32_t root = -1, first = -1;
        for (uint32_t k = 0; k < y->n_anchors; k++) {
            int32_t a = (int32_t)(y->first_anchor + k);
            if (!c->anc[a].node || anc_of(c, c->anc[a].node, c->anc[a].out, c->anc[a].index) != a) continue;
            int32_t r = uf_find(c, a);
            if (root < 0) {
                root = r, first = a;
                continue;
            }
            if (r == root) continue;
            const gm_vfy_anchor *x = &c->anc[first], *z = &c->anc[a];
            PROBLEM(c, GM_PLAN_P_UNRELATED, (int32_t)s, -1, z->node, (int32_t)z->index, z->out,
                    "symbol '%s' joins %s:%s %u and %s:%s %u, which the graph does not make one tensor "
                    "(give each its own symbol; symbols may share addresses where liveness allows)",
                    y->id, x->node->name, x->out ? "out" : "in", x->index, z->node->name, z->out ? "out" : "in",
                    z->index);
            break;
        }
    }
    return GM_OK;
}

static gm_status check_anchors(gm_vfy *c)
{
    c->uf = gm_malloc((c->n_anc ? c->n_anc : 1) * sizeof *c->uf);
    if (!c->uf) return GM_ERR_NOMEM;
    for (size_t a = 0; a < c->n_anc; a++) c->uf[a] = (int32_t)a;
    for (size_t t = 0; t < c->n_nodes; t++) {
        const gm_node *n = gm_model_node_at(c->m, t);
        for (uint32_t k = 0; k < n->n_out; k++) {
            int64_t sz = gm_desc_size(&n->out[k].desc);
            if (*sym_slot(c, n, true, k) < 0 && sz > 0)
                PROBLEM(c, GM_PLAN_P_UNPLACED, -1, -1, n, (int32_t)k, true,
                        "output %s:out %u (%lld bytes) is in no symbol", n->name, k, (long long)sz);
        }
        for (uint32_t i = 0; i < n->n_in; i++) {
            const gm_in_slot *s = &n->in[i];
            if (!s->src) continue;
            int32_t ps = *sym_slot(c, s->src, true, (uint32_t)s->src_index);
            int32_t is = *sym_slot(c, n, false, i);
            if (ps >= 0 && is < 0)
                PROBLEM(c, GM_PLAN_P_UNPLACED, ps, -1, n, (int32_t)i, false,
                        "consumer anchor %s:in %u is missing from its producer %s:out %d's symbol '%s'", n->name, i,
                        s->src->name, s->src_index, c->syms[ps].id);
            else if (must_share(c, s->src, true, (uint32_t)s->src_index, n, false, i, "a data edge") != GM_OK)
                return GM_ERR_NOMEM;
        }
        /* ref outputs: in-place ops, views, pass-through, subgraph Data (its parent's input) */
        for (uint32_t k = 0; k < n->n_out; k++) {
            uint32_t in;
            const gm_node *other = ref_from_other(c, n, k);
            if (other) {
                if (must_share(c, other, true, 0, n, true, k, "the output refers to that RefData") != GM_OK)
                    return GM_ERR_NOMEM;
                continue;
            }
            if (!gm_ref_input_of_output(n, k, &in)) continue;
            int64_t pidx = gm_subgraph_data_parent_index(n);
            gm_status st;
            if (pidx >= 0) {
                const gm_node *p = n->graph->parent;
                if (pidx >= (int64_t)p->n_in) continue;
                st = must_share(c, p, false, (uint32_t)pidx, n, true, k, "a subgraph Data is its parent's input");
            } else {
                if (in >= n->n_in) continue;
                st = must_share(c, n, false, in, n, true, k, "the output is a ref of that input");
            }
            if (st != GM_OK) return st;
        }
        /* subgraph NetOutput: input with _parent_node_index p is the parent's output p, unless
         * the parent stacks it into output p (gm_body_output_is_stacked): two tensors, which
         * check_unrelated then refuses to see in one symbol */
        if (n->graph->parent && (n->op->flags & GM_OP_NETOUTPUT)) {
            const gm_node *p = n->graph->parent;
            for (uint32_t i = 0; i < n->n_in; i++) {
                const gm_attr *pa = gm_attr_find(n->in_desc[i].attrs, "_parent_node_index");
                if (!pa || pa->kind != GM_ATTR_INT || pa->u.i < 0 || pa->u.i >= (int64_t)p->n_out) continue;
                if (gm_body_output_is_stacked(n, i)) continue;
                if (must_share(c, p, true, (uint32_t)pa->u.i, n, false, i,
                               "a subgraph NetOutput input is its parent's output") != GM_OK)
                    return GM_ERR_NOMEM;
            }
        }
        if ((n->op->flags & GM_OP_MERGE) && n->n_in > 0) {
            for (uint32_t i = 1; i < n->n_in; i++)
                if (must_share(c, n, false, 0, n, false, i, "Merge inputs are one tensor") != GM_OK)
                    return GM_ERR_NOMEM;
            const char *ni = gm_attrs_get_string(n->attrs, "_next_iteration_node");
            const gm_node *nx = ni ? gm_model_find_node(c->m, ni) : NULL;
            if (nx && nx->n_out > 0 &&
                must_share(c, n, false, 0, nx, true, 0, "a NextIteration feeds its Merge across the loop edge") !=
                    GM_OK)
                return GM_ERR_NOMEM;
        }
        /* no-padding groups: the members are views of the whole, at their own offsets, and may
         * be anchors of its symbol (the planner's choice: not required) */
        bool nopad_in = gm_attrs_get_bool(n->attrs, "_no_padding_continuous_input", false);
        bool nopad_out = gm_attrs_get_bool(n->attrs, "_no_padding_continuous_output", false);
        for (uint32_t i = 0; nopad_in && n->n_out > 0 && i < n->n_in; i++)
            if (*sym_slot(c, n, false, i) >= 0 && *sym_slot(c, n, false, i) == *sym_slot(c, n, true, 0))
                uf_union(c, anc_of(c, n, false, i), anc_of(c, n, true, 0));
        for (uint32_t k = 0; nopad_out && n->n_in > 0 && k < n->n_out; k++)
            if (*sym_slot(c, n, true, k) >= 0 && *sym_slot(c, n, true, k) == *sym_slot(c, n, false, 0))
                uf_union(c, anc_of(c, n, true, k), anc_of(c, n, false, 0));
    }
    return GM_OK;
}

/* ---- sizes, alignment, regions ------------------------------------------------------------ */

static gm_status check_sizes(gm_vfy *c)
{
    for (size_t s = 0; s < c->n_syms; s++) {
        gm_vfy_sym *y = &c->syms[s];
        const gm_vfy_region *r = &c->regs[y->region];
        if (r->kind < 0) {
            PROBLEM(c, GM_PLAN_P_REGION, (int32_t)s, -1, NULL, -1, false,
                    "symbol '%s': unknown region '%s' (feature_map, zero_copy, fixed or dynamic)", y->id, r->name);
            continue;
        }
        if (r->kind == GM_VFY_R_DYN) {
            if (y->has_offset)
                PROBLEM(c, GM_PLAN_P_REGION, (int32_t)s, -1, NULL, -1, false,
                        "symbol '%s' is in the dynamic region but has an offset (%lld)", y->id,
                        (long long)y->offset);
            continue;
        }
        c->v->bytes += y->size;
        if (!y->has_offset) {
            PROBLEM(c, GM_PLAN_P_REGION, (int32_t)s, -1, NULL, -1, false,
                    "symbol '%s' in region '%s' has no offset", y->id, r->name);
            continue;
        }
        if (y->offset + y->size > c->regs[y->region].extent) c->regs[y->region].extent = y->offset + y->size;
        if (y->offset % r->align != 0)
            PROBLEM(c, GM_PLAN_P_MISALIGNED, (int32_t)s, -1, NULL, -1, false,
                    "symbol '%s': offset %lld is not a multiple of region '%s' alignment %lld", y->id,
                    (long long)y->offset, r->name, (long long)r->align);
        if (r->listed && r->size > 0 && y->offset + y->size > r->size)
            PROBLEM(c, GM_PLAN_P_REGION, (int32_t)s, -1, NULL, -1, false,
                    "symbol '%s' [%lld, %lld) runs past the end of region '%s' (%lld bytes)", y->id,
                    (long long)y->offset, (long long)(y->offset + y->size), r->name, (long long)r->size);
        /* the largest tensor that does not fit, named */
        int64_t worst = 0;
        const gm_vfy_anchor *wa = NULL, *dyn = NULL;
        for (uint32_t k = 0; k < y->n_anchors; k++) {
            const gm_vfy_anchor *a = &c->anc[y->first_anchor + k];
            if (!a->node) continue;
            int64_t b = gm_vfy_anchor_bytes(a->node, a->out, a->index);
            if (b < 0 && !dyn) dyn = a;
            if (b <= 0) continue;
            int64_t start = a->has_offset ? a->offset : y->offset;
            int64_t over = start + b - (y->offset + y->size);
            if (a->has_offset && a->offset < y->offset) over = y->offset - a->offset + (over > 0 ? over : 0);
            if (over > worst) worst = over, wa = a;
        }
        if (dyn)
            PROBLEM(c, GM_PLAN_P_REGION, (int32_t)s, -1, dyn->node, (int32_t)dyn->index, dyn->out,
                    "symbol '%s' in region '%s' holds %s:%s %u, whose size is known only at run time (dynamic region)",
                    y->id, r->name, dyn->node->name, dyn->out ? "out" : "in", dyn->index);
        if (wa)
            PROBLEM(c, GM_PLAN_P_TOO_SMALL, (int32_t)s, -1, wa->node, (int32_t)wa->index, wa->out,
                    "symbol '%s' (%lld bytes at %lld) does not hold %s:%s %u (%lld bytes%s): %lld bytes outside",
                    y->id, (long long)y->size, (long long)y->offset, wa->node->name, wa->out ? "out" : "in",
                    wa->index, (long long)gm_vfy_anchor_bytes(wa->node, wa->out, wa->index),
                    wa->has_offset ? " at its own offset" : "", (long long)worst);
    }
    return GM_OK;
}

/* ---- continuous groups --------------------------------------------------------------------- */

/* Address of an anchor: its own offset, else (for an input) its producer's own offset, else
 * its symbol's offset. -1 when it has none. */
static int64_t anchor_addr(const gm_vfy *c, const gm_node *n, bool out, uint32_t i, int32_t *sym)
{
    *sym = out ? c->out_sym[c->out_base[n->topo_id] + i] : c->in_sym[c->in_base[n->topo_id] + i];
    if (*sym < 0 || !c->syms[*sym].has_offset) return -1;
    int32_t a = anc_of(c, n, out, i);
    if (a >= 0 && c->anc[a].has_offset) return c->anc[a].offset;
    if (!out && n->in[i].src) {
        a = anc_of(c, n->in[i].src, true, (uint32_t)n->in[i].src_index);
        if (a >= 0 && c->anc[a].has_offset) return c->anc[a].offset;
    }
    return c->syms[*sym].offset;
}

static gm_status check_group(gm_vfy *c, const gm_node *n, bool out, bool nopad)
{
    uint32_t count = out ? n->n_out : n->n_in;
    int64_t prev_end = -1;
    int32_t prev_sym = -1;
    uint32_t prev = 0;
    for (uint32_t i = 0; i < count; i++) {
        if (!out && !n->in[i].src) return GM_OK;
        int32_t sym;
        int64_t addr = anchor_addr(c, n, out, i, &sym);
        int64_t b = gm_vfy_anchor_bytes(n, out, i);
        if (addr < 0 || b < 0) return GM_OK; /* unplaced or dynamic: reported elsewhere */
        const char *what = nopad ? (out ? "_no_padding_continuous_output" : "_no_padding_continuous_input")
                                 : (out ? "continuous_output" : "continuous_input");
        if (prev_sym >= 0) {
            const gm_vfy_sym *ys = &c->syms[sym], *yp = &c->syms[prev_sym];
            int64_t align = c->regs[ys->region].align;
            int64_t gap = addr - prev_end;
            if (ys->region != yp->region)
                PROBLEM(c, GM_PLAN_P_CONTINUOUS, prev_sym, sym, n, (int32_t)i, out,
                        "%s group of '%s': member %u (symbol '%s') and member %u (symbol '%s') are in "
                        "different regions",
                        what, n->name, prev, yp->id, i, ys->id);
            else if (gap < 0)
                PROBLEM(c, GM_PLAN_P_CONTINUOUS, prev_sym, sym, n, (int32_t)i, out,
                        "%s group of '%s': member %u (symbol '%s', at %lld) starts before member %u (symbol '%s') "
                        "ends at %lld: members out of order or overlapping",
                        what, n->name, i, ys->id, (long long)addr, prev, yp->id, (long long)prev_end);
            else if (nopad ? gap != 0 : gap >= align)
                PROBLEM(c, GM_PLAN_P_CONTINUOUS, prev_sym, sym, n, (int32_t)i, out,
                        "%s group of '%s': gap of %lld bytes between member %u (symbol '%s') and member %u "
                        "(symbol '%s'); %s",
                        what, n->name, (long long)gap, prev, yp->id, i, ys->id,
                        nopad ? "no-padding members must touch" : "must be under the alignment");
        }
        prev_end = addr + b;
        prev_sym = sym;
        prev = i;
    }
    return GM_OK;
}

static gm_status check_continuous(gm_vfy *c)
{
    for (size_t t = 0; t < c->n_nodes; t++) {
        const gm_node *n = gm_model_node_at(c->m, t);
        bool ci = gm_attrs_get_bool(n->attrs, "continuous_input", false);
        bool ni = gm_attrs_get_bool(n->attrs, "_no_padding_continuous_input", false);
        bool co = gm_attrs_get_bool(n->attrs, "continuous_output", false);
        bool no = gm_attrs_get_bool(n->attrs, "_no_padding_continuous_output", false);
        if ((ci || ni) && n->n_in > 1 && check_group(c, n, false, ni) != GM_OK) return GM_ERR_NOMEM;
        if ((co || no) && n->n_out > 1 && check_group(c, n, true, no) != GM_OK) return GM_ERR_NOMEM;
    }
    return GM_OK;
}

/* ---- entry points ---------------------------------------------------------------------------- */

static void vfy_free(gm_vfy *c)
{
    gm_vfy_read_free(c);
    gm_free(c->out_base);
    gm_free(c->in_base);
    gm_free(c->out_sym);
    gm_free(c->in_sym);
    gm_free(c->out_anc);
    gm_free(c->in_anc);
    gm_free(c->uf);
    gm_vfy_order_free(c);
}

/* The checks after the reading run in three groups: the anchors, sizes and groups; the order
 * with its overlaps and the bound; the race check of each buffer's accesses. On big plans they
 * run side by side, each group taken by the next free thread, the longest (the order's) first:
 * on two cores the race check follows the anchors, which end first (the order's group alone
 * was a second at a million symbols, half a second more than the anchors'). The order's first
 * steps (positions, events, clocks) need only the model and the "order" array, so they run
 * beside the anchors' resolution, before the groups. The groups share the read-only result of
 * the reading and write distinct fields (the order's own arrays and scratch; per symbol its
 * accesses), and each reports into its own verdict: they are joined as if the checks had run one
 * after the other, the races between the overlaps and the bound. */
typedef struct check_groups {
    gm_vfy *c;       /* the anchors' group's */
    gm_vfy order;    /* the order's: a copy of *c with its own verdict */
    gm_vfy race;     /* the races': a copy of the order's, events and clocks begun, own verdict */
    gm_plan_verdict v, v_race;
    size_t before_bound; /* the order group's problems before the bound's */
    gm_error err;
    gm_status st[3];
} check_groups;

/* Plans with fewer symbols check on one thread (a thread would cost more than it saves). */
enum { GROUPS_APART = 65536 };

/* The groups by index, the longest first (the order, the anchors, the races). */
enum { G_ORDER, G_ANCHORS, G_RACE, G_COUNT };

/* Before the groups: the anchors resolved (part 0, into the anchors' status), the order begun
 * (part 1, into the order's). */
static void resolve_group(void *ctx, unsigned part, unsigned parts)
{
    (void)parts;
    check_groups *g = ctx;
    if (part == 1) {
        g->st[G_ORDER] = gm_vfy_order_begin(&g->order, &g->err);
        return;
    }
    gm_status (*const steps[])(gm_vfy *) = {build_slots, gm_vfy_index_ids, resolve_anchors};
    g->st[G_ANCHORS] = GM_OK;
    for (size_t i = 0; g->st[G_ANCHORS] == GM_OK && i < sizeof steps / sizeof *steps; i++)
        if (steps[i](g->c) != GM_OK) g->st[G_ANCHORS] = GM_ERR_NOMEM;
}

static void run_one_group(check_groups *g, size_t which)
{
    if (which == G_ORDER) {
        gm_status st = gm_vfy_order_check(&g->order, &g->err);
        g->before_bound = g->v.n_problems;
        g->st[G_ORDER] = st == GM_OK ? gm_vfy_check_bound(&g->order, &g->err) : st;
    } else if (which == G_RACE) {
        g->st[G_RACE] = gm_vfy_access_check(&g->race);
    } else {
        gm_status (*const steps[])(gm_vfy *) = {check_anchors, check_unrelated, check_sizes, check_continuous};
        g->st[G_ANCHORS] = GM_OK;
        for (size_t i = 0; g->st[G_ANCHORS] == GM_OK && i < sizeof steps / sizeof *steps; i++)
            if (steps[i](g->c) != GM_OK) g->st[G_ANCHORS] = GM_ERR_NOMEM;
    }
}

static void run_groups(void *ctx, unsigned part, size_t begin, size_t end)
{
    (void)part;
    for (size_t i = begin; i < end; i++) run_one_group(ctx, i);
}

/* The first failure of a phase: in the order the checks ran one after the other (anchors,
 * order, races). */
static gm_status groups_status(const check_groups *g, gm_error *err)
{
    if (g->st[G_ANCHORS] != GM_OK) return gm_error_set(err, GM_ERR_NOMEM, "out of memory");
    if (g->st[G_ORDER] != GM_OK) {
        if (err) *err = g->err;
        return g->st[G_ORDER];
    }
    if (g->st[G_RACE] != GM_OK) return gm_error_set(err, GM_ERR_NOMEM, "out of memory");
    return GM_OK;
}

/* Problems [from, to) of w after v's, as long as v has room; the rest counted as dropped. */
static gm_status append_problems(gm_plan_verdict *v, const gm_plan_verdict *w, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++) {
        if (v->n_problems >= GM_PLAN_VERDICT_MAX_PROBLEMS) {
            v->dropped++;
            continue;
        }
        if (gm_grow((void **)&v->problems, sizeof *v->problems, v->n_problems + 1, &v->cap_problems))
            return GM_ERR_NOMEM;
        v->problems[v->n_problems++] = w->problems[i];
    }
    return GM_OK;
}

static void add_counts(gm_plan_verdict *v, const gm_plan_verdict *w)
{
    v->dropped += w->dropped;
    for (int k = 0; k < GM_PLAN_P_KIND_COUNT; k++) v->by_kind[k] += w->by_kind[k];
    v->overlap_checks += w->overlap_checks;
    v->order_nodes += w->order_nodes; /* the order is the order group's */
    v->order_unknown += w->order_unknown;
}

/* The order's and the races' verdicts after the anchors' (the races' between the order's
 * overlaps and its bound); their arrays and scratch freed. */
static gm_status join_groups(check_groups *g, gm_status st, gm_error *err)
{
    gm_plan_verdict *v = g->c->v;
    const size_t mid = g->before_bound < g->v.n_problems ? g->before_bound : g->v.n_problems;
    if (st == GM_OK && (append_problems(v, &g->v, 0, mid) != GM_OK ||
                        append_problems(v, &g->v_race, 0, g->v_race.n_problems) != GM_OK ||
                        append_problems(v, &g->v, mid, g->v.n_problems) != GM_OK))
        st = gm_error_set(err, GM_ERR_NOMEM, "out of memory");
    add_counts(v, &g->v);
    add_counts(v, &g->v_race);
    gm_plan_verdict_free(&g->v);
    gm_plan_verdict_free(&g->v_race);
    gm_vfy_order_free(&g->order); /* the races' copy shares these arrays and made none */
    gm_free(g->order.scratch);
    return st;
}

static gm_status check_all(gm_vfy *c, gm_error *err)
{
    check_groups g = {.c = c, .order = *c};
    g.order.v = &g.v;
    g.order.scratch = NULL; /* the order's elements are read beside the first group */
    g.order.cap_scratch = 0;
    gm_error_clear(&g.err);
    const bool apart = c->n_syms >= GROUPS_APART && gm_parallel_parts(0, 2) == 2;
    if (apart) {
        gm_parallel_run(2, resolve_group, &g);
    } else {
        resolve_group(&g, 0, 1);
        resolve_group(&g, 1, 1);
    }
    gm_status st = groups_status(&g, err);
    if (st == GM_OK) {
        /* the order's copy made again, now that the anchors are resolved */
        gm_vfy begun = g.order;
        g.order = *c;
        g.order.v = &g.v;
        g.order.scratch = begun.scratch;
        g.order.cap_scratch = begun.cap_scratch;
        gm_vfy_order_carry(&g.order, &begun);
        g.race = g.order;
        g.race.v = &g.v_race;
        g.race.scratch = NULL; /* the race check reads no element */
        g.race.cap_scratch = 0;
        gm_parallel_chunks(apart ? 2 : 1, G_COUNT, 1, run_groups, &g);
        st = groups_status(&g, err);
    }
    return join_groups(&g, st, err);
}

/* The scan done beforehand (gm_vfy_verify_scanned). */
typedef struct prescan {
    gm_json_split_result r;
    gm_json_split *split;
} prescan;

static gm_status verify_once(const gm_model *m, const char *text, size_t len, const char *src, bool split,
                             prescan *pre, gm_plan_verdict *v, bool *was_split, gm_error *err)
{
    memset(v, 0, sizeof *v);
    gm_vfy c;
    memset(&c, 0, sizeof c);
    if (pre && split) {
        c.scanned = true;
        c.scan_result = pre->r;
        c.split = *pre->split;
        memset(pre->split, 0, sizeof *pre->split);
    }
    c.m = m;
    c.src = src;
    c.v = v;
    c.n_nodes = gm_model_node_count(m);
    gm_status st = gm_vfy_read(&c, text, len, split, err);
    *was_split = c.is_split;
    const cJSON *model = st == GM_OK ? cJSON_GetObjectItemCaseSensitive(c.root, "model") : NULL;
    if (cJSON_IsString(model)) snprintf(v->plan_model, sizeof v->plan_model, "%s", model->valuestring);
    if (st == GM_OK) st = check_all(&c, err);
    for (size_t i = 0; st == GM_OK && i < c.n_regs; i++) v->extent_bytes += c.regs[i].extent;
    vfy_free(&c);
    if (st != GM_OK) gm_plan_verdict_free(v);
    return st;
}

static gm_status verify_text(const gm_model *m, const char *text, size_t len, const char *source, prescan *pre,
                             gm_plan_verdict *v, gm_error *err)
{
    const char *src = source ? source : "<plan>";
    memset(v, 0, sizeof *v);
    /* anchors are indexed by topological position: an edited, unsorted model has none */
    if (!m->sorted)
        return gm_error_set(err, GM_ERR_INTERNAL, "%s: the model must be finalized (sorted) before verifying",
                            gm_model_source(m));
    bool was_split;
    gm_status st = verify_once(m, text, len, src, true, pre, v, &was_split, err);
    /* a bad plan is told as the whole reading tells it (verify_read.c says why) */
    if (st == GM_ERR_INPUT && was_split) st = verify_once(m, text, len, src, false, NULL, v, &was_split, err);
    return st;
}

gm_status gm_plan_verify_json(const gm_model *m, const char *text, size_t len, const char *source,
                              gm_plan_verdict *v, gm_error *err)
{
    return verify_text(m, text, len, source, NULL, v, err);
}

gm_status gm_vfy_verify_scanned(const gm_model *m, const char *text, size_t len, const char *source,
                                gm_json_split_result r, gm_json_split *split, gm_plan_verdict *v, gm_error *err)
{
    prescan pre = {r, split};
    gm_status st = verify_text(m, text, len, source, &pre, v, err);
    gm_json_split_free(split); /* when the model was not sorted, nobody took it */
    return st;
}

gm_status gm_plan_verify_file(const gm_model *m, const char *plan_path, gm_plan_verdict *v, gm_error *err)
{
    char *text = NULL;
    size_t len = 0;
    memset(v, 0, sizeof *v);
    gm_status st = gm_read_file(plan_path, &text, &len, err);
    if (st != GM_OK) return st;
    st = gm_plan_verify_json(m, text, len, plan_path, v, err);
    free(text);
    return st;
}
