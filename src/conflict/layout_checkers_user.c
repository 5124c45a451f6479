/*
 * layout_checkers_user.c — the checkers of reference §2.6 about addresses the runtime sets
 * or cannot move (#14 .. #22): the user's inputs (root Data outputs, given by the caller at
 * run time), the user's outputs (the NetOutput's inputs, written to the caller's buffers),
 * and the anchors of nodes whose addresses cannot be refreshed (StreamSwitch,
 * LabelSwitchByIndex, and collectives that cannot refresh when the feature map is fixed).
 *
 * An address that the runtime refreshes cannot be shared with one it cannot: when the
 * feature-map base is re-set every run (fm_refreshable), or under static memory policy 4 with
 * a switch involved, the unrefreshable side gets the copy; otherwise the user's side does.
 */
#include "conflict/layout_checkers.h"
#include "ir/ir.h"
#include "ops/op_table.h"

/* The gate of the unrefreshable checkers. */
static bool refresh_matters(const gm_lc *lc, const gm_lc_pair *p)
{
    return lc->fl.fm_refreshable || gm_lc_phys_refresh_node(lc, p);
}

/* #14: an unrefreshable input shares the buffer: copy before it. */
gm_status gm_lc_unrefresh_in(gm_lc *lc, const gm_lc_pair *p)
{
    if (!refresh_matters(lc, p)) return GM_OK;
    return gm_lc_add(lc, p, gm_lc_has(lc, p->ib, GM_LT_UNSUP_IN) ? gm_lc_b(lc, p) : gm_lc_a(lc, p));
}

/* #15: an unrefreshable output shares the buffer: copy after it. */
gm_status gm_lc_unrefresh_out(gm_lc *lc, const gm_lc_pair *p)
{
    if (!refresh_matters(lc, p)) return GM_OK;
    return gm_lc_add(lc, p, gm_lc_has(lc, p->ia, GM_LT_UNSUP_OUT) ? gm_lc_a(lc, p) : gm_lc_b(lc, p));
}

/* The user-input (Data) output of the pair. */
static gm_anchor data_out(const gm_lc *lc, const gm_lc_pair *p)
{
    return gm_lc_has(lc, p->ib, GM_LT_USER_IN) ? gm_lc_b(lc, p) : gm_lc_a(lc, p);
}

/* AssignVarInsertIdentity, else a copy right after the user's Data. */
static gm_status after_data(gm_lc *lc, const gm_lc_pair *p)
{
    bool found = false;
    gm_status st = gm_lc_assign_var_insert(lc, p, GM_LT_USER_IN, &found);
    if (st != GM_OK || found) return st;
    return gm_lc_add(lc, p, data_out(lc, p));
}

/* #16: a user input inside a continuous block: the caller's buffer cannot be placed in it. */
gm_status gm_lc_user_in_cont(gm_lc *lc, const gm_lc_pair *p)
{
    size_t other = gm_lc_other(p, gm_lc_role(p, GM_LT_USER_IN));
    gm_lt t = other == p->ia ? p->ta : p->tb;
    /* Slices of one user buffer concatenated back in place need no copy. */
    if (t == GM_LT_NOPAD_IN && gm_lc_inputs_one_producer(lc->a[other].node)) return GM_OK;
    /* A no-task split of a user input is fine where its outputs' addresses are refreshed at
     * load (not offline, not a single-op scene). */
    if (t == GM_LT_NOPAD_OUT && lc->fl.user_in_nopad_cont_out) return GM_OK;
    return after_data(lc, p);
}

/* #17: a user input in special memory. */
gm_status gm_lc_user_in_rts_out(gm_lc *lc, const gm_lc_pair *p) { return after_data(lc, p); }

/* #18: a user input through an unrefreshable output. */
gm_status gm_lc_user_in_unrefresh_out(gm_lc *lc, const gm_lc_pair *p)
{
    bool found = false;
    gm_status st = gm_lc_assign_var_insert(lc, p, GM_LT_USER_IN, &found);
    if (st != GM_OK || found) return st;
    if (refresh_matters(lc, p)) return gm_lc_add(lc, p, lc->a[gm_lc_role(p, GM_LT_UNSUP_OUT)]);
    return gm_lc_add(lc, p, data_out(lc, p));
}

/* The NetOutput input of the pair. */
static gm_anchor netoutput_in(const gm_lc *lc, const gm_lc_pair *p) { return lc->a[gm_lc_role(p, GM_LT_USER_OUT)]; }

/* #19: a user output in a continuous input block, unless the block node's own (ref) output
 * is what the NetOutput reads. */
gm_status gm_lc_user_out_cont_in(gm_lc *lc, const gm_lc_pair *p)
{
    gm_anchor u = netoutput_in(lc, p);
    const gm_node *block = lc->a[gm_lc_other(p, gm_lc_role(p, GM_LT_USER_OUT))].node;
    if (u.index < u.node->n_in && u.node->in[u.index].src == block) return GM_OK;
    return gm_lc_add(lc, p, u);
}

/* #20: a constant returned to the user (static root only): the caller's buffer gets a copy.
 * A variable is returned by reference. */
gm_status gm_lc_user_out_immutable(gm_lc *lc, const gm_lc_pair *p)
{
    if (!lc->fl.root_static) return GM_OK;
    if (gm_node_is(lc->a[gm_lc_role(p, GM_LT_IMMUTABLE_OUT)].node, GM_OP_VAR_LIKE)) return GM_OK;
    return gm_lc_add(lc, p, netoutput_in(lc, p));
}

/* #21: a user output shared with an unrefreshable input. */
gm_status gm_lc_user_out_unrefresh_in(gm_lc *lc, const gm_lc_pair *p)
{
    if (refresh_matters(lc, p)) return gm_lc_add(lc, p, lc->a[gm_lc_role(p, GM_LT_UNSUP_IN)]);
    return gm_lc_add(lc, p, netoutput_in(lc, p));
}

/* #22: a user output shared with an unrefreshable output. */
gm_status gm_lc_user_out_unrefresh_out(gm_lc *lc, const gm_lc_pair *p)
{
    if (refresh_matters(lc, p)) return gm_lc_add(lc, p, lc->a[gm_lc_role(p, GM_LT_UNSUP_OUT)]);
    return gm_lc_add(lc, p, netoutput_in(lc, p));
}
