/*
 * layout_checkers_cont.c — the continuous-memory checkers of reference §2.6 (#1 #2 #3 #8 #9
 * #10) and the list comparisons they rest on. A continuous-input node wants its inputs laid
 * out back to back in one block; a continuous-output node produces its outputs so. Sharing a
 * buffer with such a block is fine only when the block's layout and the other user's layout
 * agree; where two blocks would have to overlap differently, one side gets its own copy.
 */
#include "conflict/layout_checkers.h"
#include "analysis/ref.h"
#include "ir/ir.h"

/* Two list entries are the same output; an unconnected input equals nothing. */
static bool same(gm_anchor x, gm_anchor y) { return x.node && gm_lc_anchor_eq(x, y); }

static bool contains(const gm_anchor *v, size_t lo, size_t hi, const gm_anchor *other, size_t n_other)
{
    for (size_t i = lo; i < hi; i++)
        for (size_t j = 0; j < n_other; j++)
            if (same(v[i], other[j])) return true;
    return false;
}

bool gm_lc_same_or_partial_same(const gm_anchor *lh, size_t nl, const gm_anchor *rh, size_t nr)
{
    size_t i = 0, j = 0;
    bool hit = false;
    for (i = 0; i < nl && !hit; i++)
        for (j = 0; j < nr && !hit; j++) hit = same(lh[i], rh[j]);
    /* GE: nothing in common counts as a conflict too (quirk 7). */
    if (!hit) return false;
    i--, j--;
    /* The common run must start at the head of one of the lists. */
    if (i != 0 && j != 0) return false;
    size_t k = 0;
    for (; i + k < nl && j + k < nr; k++)
        if (!same(lh[i + k], rh[j + k])) return false;
    /* What is left on either side must not reappear on the other (a crossing like [a1 a2] vs
     * [a2 a1] matches one element, then meets the other in the leftovers). */
    if (contains(lh, 0, i, rh, nr) || contains(lh, i + k, nl, rh, nr)) return false;
    if (contains(rh, 0, j, lh, nl) || contains(rh, j + k, nr, lh, nl)) return false;
    return true;
}

bool gm_lc_is_sub_vector(const gm_anchor *vec, size_t nv, const gm_anchor *sub, size_t ns)
{
    if (ns == 0) return true;
    size_t p = 0;
    while (p < nv && !same(vec[p], sub[0])) p++;
    if (p == nv || nv - p < ns) return false;
    for (size_t k = 0; k < ns; k++)
        if (!same(vec[p + k], sub[k])) return false;
    return true;
}

gm_anchor gm_lc_real_producer(const gm_node *n, uint32_t i)
{
    gm_anchor x = {NULL, 0, true};
    if (i >= n->n_in || !n->in[i].src) return x;
    gm_node *p = n->in[i].src;
    uint32_t k = (uint32_t)n->in[i].src_index, j;
    /* A ref chain cannot be longer than the model (a guard against malformed cycles). */
    for (size_t guard = 0; guard < n->graph->model->order.n + 1; guard++) {
        if (!gm_ref_input_of_output(p, k, &j) || j >= p->n_in || !p->in[j].src) break;
        k = (uint32_t)p->in[j].src_index;
        p = p->in[j].src;
    }
    x.node = p;
    x.index = k;
    return x;
}

bool gm_lc_inputs_one_producer(const gm_node *n)
{
    if (n->n_in == 0) return false;
    gm_anchor first = gm_lc_real_producer(n, 0);
    for (uint32_t i = 1; i < n->n_in; i++)
        if (!same(first, gm_lc_real_producer(n, i))) return false;
    return first.node != NULL;
}

/* The direct producers of n's inputs, in input order, into scratch v. */
static gm_status producers(gm_lc *lc, const gm_node *n, gm_anchor **v, size_t *cap, size_t *len)
{
    gm_status st = gm_lc_scratch(lc, v, cap, n->n_in);
    if (st != GM_OK) return st;
    for (uint32_t i = 0; i < n->n_in; i++)
        (*v)[i] = (gm_anchor){n->in[i].src, n->in[i].src ? (uint32_t)n->in[i].src_index : 0, true};
    *len = n->n_in;
    return GM_OK;
}

typedef bool (*node_pred)(const gm_node *n);

static bool cont_or_nopad_in(const gm_node *n) { return gm_layout_needs_cont_in(n) || gm_layout_needs_nopad_in(n); }
static bool cont_or_nopad_out(const gm_node *n) { return gm_layout_needs_cont_out(n) || gm_layout_needs_nopad_out(n); }

/* Every reader of the symbol after the first that wants its inputs in a block of its own
 * conflicts: one buffer cannot sit in two blocks. GE counts per output anchor, so two block
 * readers reaching one buffer through a view (x -> Reshape -> concat2, x -> concat1) pass its
 * check and leave a layout no plan can satisfy; graphmem counts over the whole symbol (a
 * deliberate difference: it finds the random graphs of tests/test_property.c that GE's rule
 * leaves unplannable). */
static gm_status later_block_readers(gm_lc *lc, const gm_lc_pair *p, node_pred wants)
{
    size_t seen = 0;
    for (size_t s = 0; s < lc->n; s++) {
        gm_anchor x = lc->a[s];
        if (!x.out || x.index >= x.node->n_out) continue;
        const gm_out_slot *o = &x.node->out[x.index];
        for (uint32_t u = 0; u < o->n_uses; u++) {
            if (!wants(o->uses[u].node)) continue;
            if (seen++ == 0) continue;
            gm_status st = gm_lc_add(lc, p, (gm_anchor){o->uses[u].node, (uint32_t)o->uses[u].index, false});
            if (st != GM_OK) return st;
        }
    }
    return GM_OK;
}

/* The distinct nodes of the symbol that satisfy pred, in symbol order, into scratch v1 (as
 * anchors; only .node is used). */
static gm_status symbol_nodes(gm_lc *lc, node_pred pred, size_t *len)
{
    *len = 0;
    for (size_t s = 0; s < lc->n; s++) {
        gm_node *nd = lc->a[s].node;
        if (!pred(nd)) continue;
        bool dup = false;
        for (size_t k = 0; k < *len && !dup; k++) dup = lc->v1[k].node == nd;
        if (dup) continue;
        gm_status st = gm_lc_scratch(lc, &lc->v1, &lc->cap1, *len + 1);
        if (st != GM_OK) return st;
        lc->v1[(*len)++] = (gm_anchor){nd, 0, false};
    }
    return GM_OK;
}

static bool in_nodes(const gm_lc *lc, size_t len, const gm_node *nd)
{
    for (size_t k = 0; k < len; k++)
        if (lc->v1[k].node == nd) return true;
    return false;
}

/* #1 (as symbol): two continuous-input blocks over one buffer. */
gm_status gm_lc_cont_in_cont_in(gm_lc *lc, const gm_lc_pair *p)
{
    gm_status st = later_block_readers(lc, p, cont_or_nopad_in);
    size_t len = 0;
    if (st == GM_OK) st = symbol_nodes(lc, cont_or_nopad_in, &len);
    /* Cascade: a block node reading another block node's output cannot be placed inside it. */
    for (size_t k = 0; st == GM_OK && k < len; k++) {
        gm_node *y = lc->v1[k].node;
        for (uint32_t i = 0; st == GM_OK && i < y->n_in; i++) {
            const gm_node *x = y->in[i].src;
            if (x && x != y && in_nodes(lc, len, x)) st = gm_lc_add(lc, p, (gm_anchor){y, i, false});
        }
    }
    return st;
}

/* #2: a continuous-output node feeding a continuous-input node agrees only when the outputs
 * and the inputs' real producers line up (IsContinuousOutAndInConflict). */
gm_status gm_lc_cont_out_cont_in(gm_lc *lc, const gm_lc_pair *p)
{
    const gm_node *on = lc->a[gm_lc_role(p, GM_LT_CONT_OUT)].node;
    const gm_node *in = lc->a[gm_lc_role(p, GM_LT_CONT_IN)].node;
    gm_status st = gm_lc_scratch(lc, &lc->v1, &lc->cap1, on->n_out);
    if (st == GM_OK) st = gm_lc_scratch(lc, &lc->v2, &lc->cap2, in->n_in);
    if (st != GM_OK) return st;
    for (uint32_t k = 0; k < on->n_out; k++) lc->v1[k] = (gm_anchor){(gm_node *)on, k, true};
    for (uint32_t i = 0; i < in->n_in; i++) lc->v2[i] = gm_lc_real_producer(in, i);
    if (gm_lc_same_or_partial_same(lc->v1, on->n_out, lc->v2, in->n_in)) return GM_OK;
    return gm_lc_add(lc, p, gm_lc_a(lc, p));
}

/* #3 / #10 (as symbol): a block-output node fed by another block-output node of the same
 * buffer: the upstream output gets the copy. */
static gm_status cascaded_outputs(gm_lc *lc, const gm_lc_pair *p, node_pred pred)
{
    size_t len = 0;
    gm_status st = symbol_nodes(lc, pred, &len);
    for (size_t k = 0; st == GM_OK && k < len; k++) {
        gm_node *x = lc->v1[k].node;
        for (uint32_t i = 0; st == GM_OK && i < x->n_in; i++) {
            gm_node *y = x->in[i].src;
            if (y && y != x && in_nodes(lc, len, y))
                st = gm_lc_add(lc, p, (gm_anchor){y, (uint32_t)x->in[i].src_index, true});
        }
    }
    return st;
}

gm_status gm_lc_cont_out_cont_out(gm_lc *lc, const gm_lc_pair *p) { return cascaded_outputs(lc, p, cont_or_nopad_out); }

gm_status gm_lc_nopad_out_nopad_out(gm_lc *lc, const gm_lc_pair *p)
{
    return cascaded_outputs(lc, p, gm_layout_needs_nopad_out);
}

/* #8 (as symbol): two no-padding input blocks agree when they share no producer or one's
 * producer list is a contiguous run of the other's (IsNoPaddingContinuousNodeConflict). The
 * allocator anchors a no-padding block at its first input, so overlapping runs conflict. */
gm_status gm_lc_nopad_in_nopad_in(gm_lc *lc, const gm_lc_pair *p)
{
    size_t n1 = 0, n2 = 0;
    gm_status st = producers(lc, gm_lc_a(lc, p).node, &lc->v1, &lc->cap1, &n1);
    if (st == GM_OK) st = producers(lc, gm_lc_b(lc, p).node, &lc->v2, &lc->cap2, &n2);
    if (st != GM_OK) return st;
    bool shared = false;
    for (size_t i = 0; i < n1 && !shared; i++)
        for (size_t j = 0; j < n2 && !shared; j++) shared = same(lc->v1[i], lc->v2[j]);
    if (!shared || gm_lc_is_sub_vector(lc->v1, n1, lc->v2, n2) || gm_lc_is_sub_vector(lc->v2, n2, lc->v1, n1))
        return GM_OK;
    return later_block_readers(lc, p, gm_layout_needs_nopad_in);
}

/* #9: a no-padding concat feeding a no-padding split directly is one block seen twice. */
gm_status gm_lc_nopad_in_nopad_out(gm_lc *lc, const gm_lc_pair *p)
{
    gm_anchor in = lc->a[gm_lc_role(p, GM_LT_NOPAD_IN)];
    const gm_node *out = lc->a[gm_lc_role(p, GM_LT_NOPAD_OUT)].node;
    if (out->n_in > 0 && out->in[0].src == in.node && out->in[0].src_index == 0) return GM_OK;
    return gm_lc_add(lc, p, in);
}
