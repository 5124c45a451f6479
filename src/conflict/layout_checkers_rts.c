/*
 * layout_checkers_rts.c — the checkers of reference §2.6 about special memory and fixed
 * addresses (#4 #5 #6 #7 #11 #12 #13) and AssignVarInsertIdentity, which #5 #7 and the
 * user-input checkers try first.
 *
 * Special memory (p2p, ts) lives in its own pool: one buffer cannot be special for one user
 * and ordinary (or differently special) for another. Constants and variables have addresses
 * fixed at load time: a user that needs the buffer elsewhere needs a copy, placed where the
 * variable can still be updated in place by whoever owns it.
 */
#include "conflict/layout_checkers.h"
#include "analysis/ref.h"
#include "ir/ir.h"
#include "ops/op_table.h"

gm_status gm_lc_assign_var_insert(gm_lc *lc, const gm_lc_pair *p, gm_lt var_type, bool *found)
{
    *found = false;
    /* The anchor without the variable's attribute belongs to the node that reads the var. */
    size_t ref = gm_lc_has(lc, p->ia, var_type) ? p->ib : p->ia;
    gm_node *r = lc->a[ref].node;
    for (uint32_t i = 0; i < r->n_in; i++) {
        const gm_node *src = r->in[i].src;
        if (!src || !gm_node_is(src, GM_OP_ASSIGN_LIKE) || !gm_lc_in_symbol(lc, r, false, i)) continue;
        /* Between the Assign and its reader: the Assign still updates the variable in place. */
        gm_status st = gm_lc_add(lc, p, (gm_anchor){r, i, false});
        if (st != GM_OK) return st;
        *found = true;
    }
    return GM_OK;
}

/* #4: a continuous block over special memory. */
gm_status gm_lc_cont_rts(gm_lc *lc, const gm_lc_pair *p)
{
    bool a_special = p->ta == GM_LT_RTS_IN || p->ta == GM_LT_RTS_OUT;
    size_t sp = a_special ? p->ia : p->ib, ct = gm_lc_other(p, sp);
    gm_anchor c = lc->a[ct];
    if (gm_layout_mem_type_special(gm_layout_mem_type(c.node, c.out, c.index))) return GM_OK;
    /* Before a ref node's input would not separate anything: copy at the special side. */
    if (!c.out && gm_lc_node_out_in_symbol(lc, c.node)) return gm_lc_add(lc, p, lc->a[sp]);
    return gm_lc_add(lc, p, c);
}

/* #5: a constant or variable inside a continuous output block. Never a copy after the
 * variable itself: it may feed an optimizer (ApplyMomentum) that must update it in place. */
gm_status gm_lc_immutable_cont_out(gm_lc *lc, const gm_lc_pair *p)
{
    bool found = false;
    gm_status st = gm_lc_assign_var_insert(lc, p, GM_LT_IMMUTABLE_OUT, &found);
    if (st != GM_OK || found) return st;
    gm_anchor c = lc->a[gm_lc_other(p, gm_lc_role(p, GM_LT_IMMUTABLE_OUT))];
    uint32_t in;
    if (gm_ref_input_of_output(c.node, c.index, &in) && in < c.node->n_in && gm_lc_in_symbol(lc, c.node, false, in))
        return gm_lc_add(lc, p, (gm_anchor){c.node, in, false});
    for (uint32_t i = 0; i < c.node->n_in; i++)
        if (gm_lc_in_symbol(lc, c.node, false, i)) return gm_lc_add(lc, p, (gm_anchor){c.node, i, false});
    return GM_OK;
}

/* #6: a constant or variable in a no-padding input block: fine when the block is made of
 * slices of that one variable. */
gm_status gm_lc_immutable_nopad_in(gm_lc *lc, const gm_lc_pair *p)
{
    gm_anchor np = lc->a[gm_lc_role(p, GM_LT_NOPAD_IN)];
    if (gm_lc_inputs_one_producer(np.node)) return GM_OK;
    return gm_lc_add(lc, p, np);
}

/* #7: a constant or variable in special memory: the copy goes after it (unless an Assign
 * stands between). */
gm_status gm_lc_immutable_rts_out(gm_lc *lc, const gm_lc_pair *p)
{
    bool found = false;
    gm_status st = gm_lc_assign_var_insert(lc, p, GM_LT_IMMUTABLE_OUT, &found);
    if (st != GM_OK || found) return st;
    return gm_lc_add(lc, p, lc->a[gm_lc_role(p, GM_LT_IMMUTABLE_OUT)]);
}

static bool same_mem_type(const gm_lc *lc, const gm_lc_pair *p)
{
    gm_anchor a = gm_lc_a(lc, p), b = gm_lc_b(lc, p);
    return gm_layout_mem_type(a.node, a.out, a.index) == gm_layout_mem_type(b.node, b.out, b.index);
}

/* #11: two readers wanting different special memory: the earlier one gets the copy unless it
 * is a ref node whose output continues the buffer. */
gm_status gm_lc_rts_in_rts_in(gm_lc *lc, const gm_lc_pair *p)
{
    if (same_mem_type(lc, p)) return GM_OK;
    gm_anchor a = gm_lc_a(lc, p), b = gm_lc_b(lc, p);
    bool pick_a = a.node->topo_id < b.node->topo_id && !gm_lc_node_out_in_symbol(lc, a.node);
    return gm_lc_add(lc, p, pick_a ? a : b);
}

/* #12: a special reader of a differently special output: copy after the output. */
gm_status gm_lc_rts_in_rts_out(gm_lc *lc, const gm_lc_pair *p)
{
    if (same_mem_type(lc, p)) return GM_OK;
    return gm_lc_add(lc, p, lc->a[gm_lc_role(p, GM_LT_RTS_OUT)]);
}

/* #13: two outputs of different special memory: copy after the earlier one. */
gm_status gm_lc_rts_out_rts_out(gm_lc *lc, const gm_lc_pair *p)
{
    if (same_mem_type(lc, p)) return GM_OK;
    gm_anchor a = gm_lc_a(lc, p), b = gm_lc_b(lc, p);
    return gm_lc_add(lc, p, a.node->topo_id < b.node->topo_id ? a : b);
}
