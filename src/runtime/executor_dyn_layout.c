/*
 * executor_dyn_layout.c — continuous groups in the dynamic executor (see "Continuous groups"
 * in graphmem/executor.h): which symbols share one allocator block, where in it each lies, and
 * the host-side check, before a node with a continuous attribute runs, that its members really
 * are adjacent.
 *
 * No-padding groups first, as the planner does (plan_nopad.c): a node's members become views
 * of its whole (input 0 for _no_padding_continuous_output, output 0 for _input) at the real
 * sizes of the members before them; a group that cannot be laid out so (a member of two
 * groups, a whole that is itself a member, a size known only at run time) is left alone. Then
 * continuous groups, on what the no-padding step left (plan_chains.c): each group links member
 * k to member k + 1; a group whose links agree with those taken (one successor, one
 * predecessor, no cycle) joins them, and each maximal chain becomes one block, its members at
 * their sizes rounded up to the planner's alignment. A group left out is not laid out at all —
 * the check then reports it, as the verifier would report the plan.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "analysis/symbols.h"
#include "ir/ir.h"
#include "runtime/executor_internal.h"
#include "util/alloc.h"

#define GM_DYN_ASSUMED_BYTES 4096 /* a buffer whose size no anchor declares */

static size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

/* The planner's alignment of feature-map symbols (gm_plan_options' default). */
static size_t plan_align(void)
{
    gm_plan_options o;
    gm_plan_options_init(&o);
    return o.align > 0 ? (size_t)o.align : 512;
}

/* Bytes of member i of n (side out): an output's desc, or the tensor an input reads; -1 unknown. */
static int64_t member_bytes(const gm_node *n, bool out, uint32_t i)
{
    if (out) return gm_desc_size(&n->out[i].desc);
    return n->in[i].src ? gm_desc_size(&n->in[i].src->out[n->in[i].src_index].desc) : -1;
}

static uint32_t member_count(const gm_node *n, bool out) { return out ? n->n_out : n->n_in; }

/* Memory type host? The producer's desc decides: the symbol's first output anchor. */
static bool symbol_on_host(const gm_symbols *sy, int32_t y)
{
    for (int32_t a = gm_symbol_first(sy, y); a >= 0; a = gm_symbols_next(sy, a)) {
        gm_anchor x = gm_symbols_anchor(sy, a);
        if (x.out) return gm_desc_mem_type(&x.node->out[x.index].desc) == GM_MEM_HOST;
    }
    return false;
}

/* Does an anchor of symbol y hold a tensor of run-time size (gm_desc_size_at_run_time)? An input
 * holds the tensor it reads. */
static bool symbol_at_run_time(const gm_symbols *sy, int32_t y)
{
    for (int32_t a = gm_symbol_first(sy, y); a >= 0; a = gm_symbols_next(sy, a)) {
        gm_anchor x = gm_symbols_anchor(sy, a);
        const gm_in_slot *in = x.out ? NULL : &x.node->in[x.index];
        const gm_tensor_desc *t = x.out     ? &x.node->out[x.index].desc
                                  : in->src ? &in->src->out[in->src_index].desc
                                            : NULL;
        if (t && gm_desc_size_at_run_time(t)) return true;
    }
    return false;
}

/* Sizes: the largest declared; a buffer no anchor gives bytes gets the assumed size: one of
 * run-time size (counted, once per symbol some task uses: what `graphmem run` reports as
 * assumed sizes), or an empty one (0 bytes, a size known before the run: a block all the same,
 * not counted). */
static void assume_sizes(gm_dyn *d)
{
    const gm_exec *x = &d->x;
    for (size_t u = 0; u < d->use_base[x->n_tasks]; u++) {
        int32_t y = d->uses[u];
        if (y < 0 || d->bytes[y]) continue;
        d->bytes[y] = GM_DYN_ASSUMED_BYTES;
        if (symbol_at_run_time(d->sy, y)) x->stats->alloc.assumed_sizes++;
    }
}

/* ---- no-padding groups ------------------------------------------------------------------- */

/* Claims n's no-padding group (members on side out, the whole the other side's anchor 0) when
 * every member can join: whole[y] / rel[y] for each member, is_whole for the whole. */
static void claim_nopad(gm_dyn *d, const gm_node *n, bool out, int32_t *whole, uint64_t *rel, bool *is_whole)
{
    uint32_t count = member_count(n, out);
    if (count < 2 || (out ? n->n_in : n->n_out) == 0) return;
    int32_t w = gm_symbols_find(d->sy, n, !out, 0);
    if (w < 0 || whole[w] >= 0) return;
    uint64_t at = 0;
    for (uint32_t i = 0; i < count; i++) { /* all or nothing */
        int32_t y = gm_symbols_find(d->sy, n, out, i);
        int64_t b = member_bytes(n, out, i);
        if (y < 0 || b <= 0 || d->host_mem[y] != d->host_mem[w]) return;
        if (y == w ? at != 0 : whole[y] >= 0 || is_whole[y]) return;
        for (uint32_t j = 0; j < i; j++)
            if (gm_symbols_find(d->sy, n, out, j) == y) return;
        at += (uint64_t)b;
    }
    at = 0;
    for (uint32_t i = 0; i < count; i++) {
        int32_t y = gm_symbols_find(d->sy, n, out, i);
        if (y != w) whole[y] = w, rel[y] = at;
        at += (uint64_t)member_bytes(n, out, i);
        if (at > d->bytes[w]) d->bytes[w] = at; /* the whole covers its members */
    }
    is_whole[w] = true;
}

/* ---- continuous groups -------------------------------------------------------------------- */

static int32_t uf_root(int32_t *uf, int32_t a)
{
    while (uf[a] != a) a = uf[a] = uf[uf[a]];
    return a;
}

/* Links group (n, out)'s members, if they are distinct whole symbols and agree with the links
 * taken; members are mapped through the no-padding step (a view inside a whole cannot start a
 * padded member). */
static void link_group(gm_dyn *d, const gm_node *n, bool out, const int32_t *whole, int32_t *next, int32_t *prev,
                       int32_t *uf)
{
    uint32_t count = member_count(n, out);
    if (count == 0) return;
    int32_t m0 = gm_symbols_find(d->sy, n, out, 0);
    for (uint32_t i = 0; i < count; i++) {
        int32_t y = gm_symbols_find(d->sy, n, out, i);
        if (y < 0 || whole[y] >= 0 || d->host_mem[y] != d->host_mem[m0]) return;
        for (uint32_t j = 0; j < i; j++)
            if (gm_symbols_find(d->sy, n, out, j) == y) return;
    }
    for (uint32_t i = 0; i + 1 < count; i++) {
        int32_t a = gm_symbols_find(d->sy, n, out, i), b = gm_symbols_find(d->sy, n, out, i + 1);
        if (next[a] == b) continue;
        if (next[a] >= 0 || prev[b] >= 0 || uf_root(uf, a) == uf_root(uf, b)) return;
    }
    for (uint32_t i = 0; i + 1 < count; i++) {
        int32_t a = gm_symbols_find(d->sy, n, out, i), b = gm_symbols_find(d->sy, n, out, i + 1);
        if (next[a] == b) continue;
        next[a] = b, prev[b] = a;
        uf[uf_root(uf, a)] = uf_root(uf, b);
    }
}

/* ---- the index ----------------------------------------------------------------------------- */

/* The groups each task's node checks, in task order (CSR over tasks). */
static gm_status index_groups(gm_dyn *d)
{
    const gm_exec *x = &d->x;
    size_t n = 0;
    if (!(d->group_base = gm_calloc(x->n_tasks + 1, sizeof *d->group_base))) return GM_ERR_NOMEM;
    for (int pass = 0; pass < 2; pass++) {
        n = 0;
        for (size_t t = 0; t < x->n_tasks; t++) {
            d->group_base[t] = n;
            if (x->task_exit[t]) continue;
            const gm_node *nd = x->task_node[t];
            static const char *const attr[2][2] = {{"continuous_input", "continuous_output"},
                                                   {"_no_padding_continuous_input", "_no_padding_continuous_output"}};
            for (int nopad = 0; nopad < 2; nopad++)
                for (int out = 0; out < 2; out++) {
                    if (!gm_attrs_get_bool(nd->attrs, attr[nopad][out], false)) continue;
                    if (member_count(nd, out) < (nopad ? 2u : 1u)) continue;
                    if (pass) d->groups[n] = (gm_dyn_group){nd, out != 0, nopad != 0};
                    n++;
                }
        }
        d->group_base[x->n_tasks] = n;
        if (!pass && !(d->groups = gm_malloc((n ? n : 1) * sizeof *d->groups))) return GM_ERR_NOMEM;
    }
    return GM_OK;
}

/* Roots, offsets and block sizes from the no-padding claims and the chains. */
static void place_members(gm_dyn *d, const int32_t *whole, const uint64_t *rel, const int32_t *next,
                          const int32_t *prev)
{
    size_t align = plan_align();
    uint64_t gap = d->fault == GM_RUN_FAULT_GAPPED_GROUPS ? align : 0;
    for (size_t y = 0; y < d->n_sym; y++) d->root[y] = (int32_t)y, d->off[y] = 0, d->unit_bytes[y] = d->bytes[y];
    for (size_t h = 0; h < d->n_sym; h++) { /* chains, from their heads */
        if (prev[h] >= 0 || next[h] < 0) continue;
        uint64_t at = 0;
        for (int32_t y = (int32_t)h; y >= 0; y = next[y]) {
            if (y != (int32_t)h) at += gap;
            d->root[y] = (int32_t)h, d->off[y] = at;
            at += align_up(d->bytes[y], align);
        }
        d->unit_bytes[h] = at;
    }
    for (size_t y = 0; y < d->n_sym; y++) { /* views inside wholes, wherever the whole lies */
        if (whole[y] < 0) continue;
        int32_t w = whole[y];
        uint64_t at = rel[y] ? rel[y] + gap : 0;
        d->root[y] = d->root[w], d->off[y] = d->off[w] + at;
        uint64_t end = d->off[y] + d->bytes[y];
        if (end > d->unit_bytes[d->root[y]]) d->unit_bytes[d->root[y]] = end;
    }
    for (size_t y = 0; y < d->n_sym; y++) { /* a whole grown by its members grows its block */
        uint64_t end = d->off[y] + d->bytes[y];
        if (end > d->unit_bytes[d->root[y]]) d->unit_bytes[d->root[y]] = end;
    }
}

/* CSR per root: the symbols its block holds. */
static gm_status index_units(gm_dyn *d)
{
    size_t ns = d->n_sym;
    d->unit_base = gm_calloc(ns + 1, sizeof *d->unit_base);
    d->unit_members = gm_malloc((ns ? ns : 1) * sizeof *d->unit_members);
    size_t *fill = gm_malloc((ns + 1) * sizeof *fill);
    if (!d->unit_base || !d->unit_members || !fill) return gm_free(fill), GM_ERR_NOMEM;
    for (size_t y = 0; y < ns; y++) d->unit_base[d->root[y] + 1]++;
    for (size_t y = 0; y < ns; y++) d->unit_base[y + 1] += d->unit_base[y];
    memcpy(fill, d->unit_base, (ns + 1) * sizeof *fill);
    for (size_t y = 0; y < ns; y++) d->unit_members[fill[d->root[y]]++] = (int32_t)y;
    gm_free(fill);
    return GM_OK;
}

gm_status gm_dyn_layout(gm_dyn *d)
{
    size_t ns = d->n_sym ? d->n_sym : 1;
    const gm_model *m = d->x.m;
    assume_sizes(d);
    d->root = gm_malloc(ns * sizeof *d->root);
    d->off = gm_malloc(ns * sizeof *d->off);
    d->unit_bytes = gm_malloc(ns * sizeof *d->unit_bytes);
    d->host_mem = gm_calloc(ns, sizeof *d->host_mem);
    int32_t *whole = gm_malloc(ns * sizeof *whole), *next = gm_malloc(ns * sizeof *next);
    int32_t *prev = gm_malloc(ns * sizeof *prev), *uf = gm_malloc(ns * sizeof *uf);
    uint64_t *rel = gm_calloc(ns, sizeof *rel);
    bool *is_whole = gm_calloc(ns, sizeof *is_whole);
    gm_status st = GM_ERR_NOMEM;
    if (!d->root || !d->off || !d->unit_bytes || !d->host_mem || !whole || !next || !prev || !uf || !rel || !is_whole)
        goto out;
    for (size_t y = 0; y < d->n_sym; y++) {
        whole[y] = next[y] = prev[y] = -1, uf[y] = (int32_t)y;
        d->host_mem[y] = symbol_on_host(d->sy, (int32_t)y);
    }
    size_t nn = gm_model_node_count(m);
    for (size_t t = 0; t < nn; t++) {
        const gm_node *n = gm_model_node_at(m, t);
        if (gm_attrs_get_bool(n->attrs, "_no_padding_continuous_output", false))
            claim_nopad(d, n, true, whole, rel, is_whole);
        if (gm_attrs_get_bool(n->attrs, "_no_padding_continuous_input", false))
            claim_nopad(d, n, false, whole, rel, is_whole);
    }
    for (size_t t = 0; t < nn; t++) {
        const gm_node *n = gm_model_node_at(m, t);
        if (gm_attrs_get_bool(n->attrs, "continuous_input", false)) link_group(d, n, false, whole, next, prev, uf);
        if (gm_attrs_get_bool(n->attrs, "continuous_output", false)) link_group(d, n, true, whole, next, prev, uf);
    }
    place_members(d, whole, rel, next, prev);
    st = index_units(d);
    if (st == GM_OK) st = index_groups(d);
out:
    gm_free(whole), gm_free(next), gm_free(prev), gm_free(uf), gm_free(rel), gm_free(is_whole);
    return st;
}

void *gm_dyn_addr(const gm_dyn *d, int32_t y)
{
    char *base = d->addr[d->root[y]];
    return base ? base + d->off[y] : NULL;
}

/* ---- the check -------------------------------------------------------------------------------- */

static void report(gm_dyn *d, const gm_dyn_group *g, uint32_t i, int64_t found, uint64_t want)
{
    gm_run_stats *s = d->x.stats;
    if (!s->contiguity_violations) {
        char name[160];
        int32_t y = gm_symbols_find(d->sy, g->node, g->out, i);
        snprintf(s->first_violation, sizeof s->first_violation,
                 "node '%s' %s %u ('%s') lies at %+" PRId64 " bytes from %s, not at %s%" PRIu64 " (iteration %u)",
                 gm_node_name(g->node), g->out ? "output" : "input", i, gm_symbol_name(d->sy, y, name, sizeof name),
                 found, i ? "the member before it" : "the whole", i ? "+" : "", want, d->x.iteration);
    }
    s->contiguity_violations++;
}

/* Member i must follow member i - 1 at its (aligned, or for no padding real) size; a
 * no-padding member 0 must start its whole. */
static void check_group(gm_dyn *d, const gm_dyn_group *g, size_t align)
{
    const gm_node *n = g->node;
    uint32_t count = member_count(n, g->out);
    const char *prev = NULL;
    uint64_t want = 0;
    if (g->nopad) {
        int32_t w = gm_symbols_find(d->sy, n, !g->out, 0);
        prev = w >= 0 ? gm_dyn_addr(d, w) : NULL;
    }
    for (uint32_t i = 0; i < count; i++) {
        int32_t y = gm_symbols_find(d->sy, n, g->out, i);
        const char *at = y >= 0 ? gm_dyn_addr(d, y) : NULL;
        if (at && prev && at != prev + want)
            report(d, g, i, (int64_t)(at - prev), want);
        else if (!at)
            report(d, g, i, 0, want); /* no memory at all: no layout either */
        if (!at) return;
        prev = at;
        int64_t b = member_bytes(n, g->out, i);
        want = g->nopad ? (uint64_t)(b > 0 ? b : 0) : align_up(d->bytes[y], align);
    }
}

void gm_dyn_check_groups(gm_dyn *d, size_t t)
{
    size_t align = d->group_base[t] < d->group_base[t + 1] ? plan_align() : 0;
    for (size_t g = d->group_base[t]; g < d->group_base[t + 1]; g++) check_group(d, &d->groups[g], align);
}
