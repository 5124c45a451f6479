/*
 * layout_checkers.c — evaluating one symbol (reference §2.5): mark its anchors (§2.3), then
 * for every unordered pair of anchors and every pair of their attributes ask the absolute
 * tables and, failing those, the checker registered for the two attributes (§2.6). The
 * checkers themselves live in layout_checkers_{cont,rts,user}.c by family.
 *
 * Cost: GE visits all k(k-1)/2 pairs of a symbol of k anchors; a symbol can be large (a value
 * threaded through thousands of nested calls, a tensor with thousands of readers) while most
 * pairs (NORMAL x NORMAL, REFERENCE_OUTPUT x anything) have no table entry and do nothing.
 * So the anchors are grouped into classes of equal attribute lists, and row i of GE's loop
 * (pairs (i, j), j > i ascending) visits only the anchors j of classes that some attribute
 * pair relates to i's class — merged in ascending j, so every pair that can decide something
 * is visited in GE's order and the conflicts, the first pair to find each, the once-per-symbol
 * checkers and the logs come out as GE's. An as-symbol checker, once run, drops the class
 * pairs it alone related. The one thing an unrelated pair can do is log IsSkip's
 * ref_var_src_var_name line: those pairs are listed directly and merged in. The cost is the
 * marks, plus the related pairs, plus k times the number of classes (a handful).
 * Membership questions use a hash set built per symbol, so no checker scans the symbol for
 * each question.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conflict/layout_checkers.h"
#include "conflict/layout_conflict.h"
#include "graphmem/log.h"
#include "ir/ir.h"
#include "ops/op_table.h"
#include "util/alloc.h"

/* ---- the absolute tables (§2.5) ---- */

typedef struct lt_pair {
    gm_lt a, b;
} lt_pair;

static const lt_pair k_abs_no[] = {
    {GM_LT_RTS_IN, GM_LT_NORMAL_OUT},
    {GM_LT_USER_OUT, GM_LT_USER_OUT},
    {GM_LT_USER_IN, GM_LT_USER_OUT},
};

static const lt_pair k_abs_conf[] = {
    {GM_LT_USER_IN, GM_LT_UNSUP_IN},       {GM_LT_USER_IN, GM_LT_RTS_IN},
    {GM_LT_USER_OUT, GM_LT_RTS_IN},        {GM_LT_USER_OUT, GM_LT_RTS_OUT},
    {GM_LT_USER_OUT, GM_LT_CONT_OUT},      {GM_LT_USER_OUT, GM_LT_NOPAD_OUT},
    {GM_LT_IMMUTABLE_OUT, GM_LT_RTS_IN},   {GM_LT_IMMUTABLE_OUT, GM_LT_CONT_IN},
    {GM_LT_CONT_IN, GM_LT_NOPAD_OUT},      {GM_LT_CONT_OUT, GM_LT_NOPAD_IN},
};

static bool in_pairs(const lt_pair *v, size_t n, gm_lt a, gm_lt b)
{
    for (size_t i = 0; i < n; i++)
        if ((v[i].a == a && v[i].b == b) || (v[i].a == b && v[i].b == a)) return true;
    return false;
}

bool gm_layout_abs_no_conflict(gm_lt a, gm_lt b)
{
    return a == GM_LT_REF_OUT || b == GM_LT_REF_OUT || in_pairs(k_abs_no, sizeof k_abs_no / sizeof *k_abs_no, a, b);
}

bool gm_layout_abs_conflict(gm_lt a, gm_lt b)
{
    return in_pairs(k_abs_conf, sizeof k_abs_conf / sizeof *k_abs_conf, a, b);
}

/* ---- the registry (§2.6): GE's REGISTER_FUNC lines, each filling [a][b] and [b][a] ---- */

typedef struct lt_reg {
    gm_lt a, b;
    gm_lc_checker fn;
    bool as_symbol;
} lt_reg;

#define REG(a, b, fn, sym) {GM_LT_##a, GM_LT_##b, fn, sym}
static const lt_reg k_reg[] = {
    /* #1 #2 #3 */
    REG(CONT_IN, CONT_IN, gm_lc_cont_in_cont_in, true), REG(CONT_IN, NOPAD_IN, gm_lc_cont_in_cont_in, true),
    REG(CONT_IN, CONT_OUT, gm_lc_cont_out_cont_in, false),
    REG(CONT_OUT, CONT_OUT, gm_lc_cont_out_cont_out, true), REG(CONT_OUT, NOPAD_OUT, gm_lc_cont_out_cont_out, true),
    /* #4 */
    REG(CONT_IN, RTS_IN, gm_lc_cont_rts, false), REG(CONT_IN, RTS_OUT, gm_lc_cont_rts, false),
    REG(CONT_OUT, RTS_IN, gm_lc_cont_rts, false), REG(CONT_OUT, RTS_OUT, gm_lc_cont_rts, false),
    REG(NOPAD_IN, RTS_IN, gm_lc_cont_rts, false), REG(NOPAD_IN, RTS_OUT, gm_lc_cont_rts, false),
    REG(NOPAD_OUT, RTS_IN, gm_lc_cont_rts, false), REG(NOPAD_OUT, RTS_OUT, gm_lc_cont_rts, false),
    /* #5 #6 #7 */
    REG(IMMUTABLE_OUT, CONT_OUT, gm_lc_immutable_cont_out, false),
    REG(IMMUTABLE_OUT, NOPAD_OUT, gm_lc_immutable_cont_out, false),
    REG(IMMUTABLE_OUT, NOPAD_IN, gm_lc_immutable_nopad_in, false),
    REG(IMMUTABLE_OUT, RTS_OUT, gm_lc_immutable_rts_out, false),
    /* #8 #9 #10 */
    REG(NOPAD_IN, NOPAD_IN, gm_lc_nopad_in_nopad_in, true),
    REG(NOPAD_IN, NOPAD_OUT, gm_lc_nopad_in_nopad_out, false),
    REG(NOPAD_OUT, NOPAD_OUT, gm_lc_nopad_out_nopad_out, true),
    /* #11 #12 #13 */
    REG(RTS_IN, RTS_IN, gm_lc_rts_in_rts_in, false), REG(RTS_IN, RTS_OUT, gm_lc_rts_in_rts_out, false),
    REG(RTS_OUT, RTS_OUT, gm_lc_rts_out_rts_out, false),
    /* #14 */
    REG(UNSUP_IN, IMMUTABLE_OUT, gm_lc_unrefresh_in, false), REG(UNSUP_IN, UNSUP_IN, gm_lc_unrefresh_in, false),
    REG(UNSUP_IN, UNSUP_OUT, gm_lc_unrefresh_in, false), REG(UNSUP_IN, CONT_IN, gm_lc_unrefresh_in, false),
    REG(UNSUP_IN, CONT_OUT, gm_lc_unrefresh_in, false), REG(UNSUP_IN, NOPAD_IN, gm_lc_unrefresh_in, false),
    REG(UNSUP_IN, NOPAD_OUT, gm_lc_unrefresh_in, false), REG(UNSUP_IN, RTS_IN, gm_lc_unrefresh_in, false),
    REG(UNSUP_IN, RTS_OUT, gm_lc_unrefresh_in, false), REG(UNSUP_IN, NORMAL_IN, gm_lc_unrefresh_in, false),
    REG(UNSUP_IN, NORMAL_OUT, gm_lc_unrefresh_in, false),
    /* #15 */
    REG(UNSUP_OUT, IMMUTABLE_OUT, gm_lc_unrefresh_out, false), REG(UNSUP_OUT, UNSUP_OUT, gm_lc_unrefresh_out, false),
    REG(UNSUP_OUT, CONT_IN, gm_lc_unrefresh_out, false), REG(UNSUP_OUT, CONT_OUT, gm_lc_unrefresh_out, false),
    REG(UNSUP_OUT, NOPAD_IN, gm_lc_unrefresh_out, false), REG(UNSUP_OUT, NOPAD_OUT, gm_lc_unrefresh_out, false),
    REG(UNSUP_OUT, RTS_OUT, gm_lc_unrefresh_out, false), REG(UNSUP_OUT, RTS_IN, gm_lc_unrefresh_out, false),
    REG(UNSUP_OUT, NORMAL_IN, gm_lc_unrefresh_out, false), REG(UNSUP_OUT, NORMAL_OUT, gm_lc_unrefresh_out, false),
    /* #16 .. #22 */
    REG(USER_IN, CONT_OUT, gm_lc_user_in_cont, false), REG(USER_IN, CONT_IN, gm_lc_user_in_cont, false),
    REG(USER_IN, NOPAD_IN, gm_lc_user_in_cont, false), REG(USER_IN, NOPAD_OUT, gm_lc_user_in_cont, false),
    REG(USER_IN, RTS_OUT, gm_lc_user_in_rts_out, false),
    REG(USER_IN, UNSUP_OUT, gm_lc_user_in_unrefresh_out, false),
    REG(USER_OUT, CONT_IN, gm_lc_user_out_cont_in, false), REG(USER_OUT, NOPAD_IN, gm_lc_user_out_cont_in, false),
    REG(USER_OUT, IMMUTABLE_OUT, gm_lc_user_out_immutable, false),
    REG(USER_OUT, UNSUP_IN, gm_lc_user_out_unrefresh_in, false),
    REG(USER_OUT, UNSUP_OUT, gm_lc_user_out_unrefresh_out, false),
};
#undef REG

size_t gm_layout_registration_count(void) { return sizeof k_reg / sizeof *k_reg; }

gm_lc_checker gm_lc_registry(gm_lt ta, gm_lt tb, bool *as_symbol)
{
    for (size_t i = 0; i < sizeof k_reg / sizeof *k_reg; i++) {
        const lt_reg *r = &k_reg[i];
        if ((r->a == ta && r->b == tb) || (r->a == tb && r->b == ta)) {
            if (as_symbol) *as_symbol = r->as_symbol;
            return r->fn;
        }
    }
    return NULL;
}

bool gm_layout_has_checker(gm_lt a, gm_lt b, bool *as_symbol) { return gm_lc_registry(a, b, as_symbol) != NULL; }

/* ---- state ---- */

/* lc->table: 0 nothing, 1 absolutely no conflict, 2 absolute conflict, 3 + k registration k.
 * Filled per evaluation state (no global mutable state: passes may run in parallel). */
enum { T_NONE = 0, T_NO, T_CONF, T_REG };

void gm_lc_init(gm_lc *lc, const gm_graph *g, gm_error *err, bool check_only)
{
    memset(lc, 0, sizeof *lc);
    for (int a = 0; a < GM_LT_COUNT; a++) {
        for (int b = 0; b < GM_LT_COUNT; b++) {
            if (gm_layout_abs_no_conflict((gm_lt)a, (gm_lt)b)) lc->table[a][b] = T_NO;
            else if (gm_layout_abs_conflict((gm_lt)a, (gm_lt)b)) lc->table[a][b] = T_CONF;
        }
    }
    for (size_t k = 0; k < sizeof k_reg / sizeof *k_reg; k++) {
        if (lc->table[k_reg[k].a][k_reg[k].b] != T_NONE) continue; /* the tables come first */
        lc->table[k_reg[k].a][k_reg[k].b] = lc->table[k_reg[k].b][k_reg[k].a] = (uint8_t)(T_REG + k);
    }
    lc->g = g;
    lc->fl = gm_layout_flags_for(g);
    lc->err = err;
    lc->check_only = check_only;
    lc->log_level = check_only ? GM_LOG_DEBUG : GM_LOG_INFO;
}

void gm_lc_fini(gm_lc *lc)
{
    gm_free(lc->cls);
    gm_free(lc->by_cls);
    gm_free(lc->classes);
    gm_free(lc->rel);
    gm_free(lc->heads);
    gm_free(lc->skips);
    gm_free(lc->conf_hash);
    gm_free(lc->mask);
    gm_free(lc->ref_src);
    gm_free(lc->hash);
    gm_free(lc->conf);
    gm_free(lc->v1);
    gm_free(lc->v2);
    memset(lc, 0, sizeof *lc);
}

static gm_status lc_oom(gm_lc *lc)
{
    return gm_error_set(lc->err, GM_ERR_NOMEM, "%s: out of memory", lc->g->model->source);
}

gm_status gm_lc_scratch(gm_lc *lc, gm_anchor **v, size_t *cap, size_t n)
{
    return gm_grow((void **)v, sizeof **v, n ? n : 1, cap) ? lc_oom(lc) : GM_OK;
}

static uint64_t anchor_hash(const gm_node *n, bool out, uint32_t index)
{
    uint64_t h = (uint64_t)(uintptr_t)n * UINT64_C(0x9E3779B97F4A7C15);
    h ^= ((uint64_t)index << 1 | (out ? 1u : 0u)) * UINT64_C(0xC2B2AE3D27D4EB4F);
    return h ^ (h >> 29);
}

/* Slots hold anchor position + 1 (0 = empty). The table is sized to each symbol, so clearing
 * it costs the symbol's size, not the largest symbol's. */
static gm_status build_hash(gm_lc *lc)
{
    size_t want = 16;
    while (want < 2 * lc->n) want *= 2;
    if (want > lc->hash_cap) {
        gm_free(lc->hash);
        lc->hash = gm_malloc(want * sizeof *lc->hash);
        if (!lc->hash) {
            lc->hash_cap = lc->hash_mask = 0;
            return lc_oom(lc);
        }
        lc->hash_cap = want;
    }
    lc->hash_mask = want - 1;
    memset(lc->hash, 0, want * sizeof *lc->hash);
    for (size_t i = 0; i < lc->n; i++) {
        size_t s = (size_t)anchor_hash(lc->a[i].node, lc->a[i].out, lc->a[i].index) & lc->hash_mask;
        while (lc->hash[s]) s = (s + 1) & lc->hash_mask;
        lc->hash[s] = i + 1;
    }
    return GM_OK;
}

bool gm_lc_in_symbol(const gm_lc *lc, const gm_node *node, bool out, uint32_t index)
{
    if (!lc->hash_cap || !node) return false;
    size_t s = (size_t)anchor_hash(node, out, index) & lc->hash_mask;
    for (; lc->hash[s]; s = (s + 1) & lc->hash_mask) {
        gm_anchor x = lc->a[lc->hash[s] - 1];
        if (x.node == node && x.out == out && x.index == index) return true;
    }
    return false;
}

bool gm_lc_node_out_in_symbol(const gm_lc *lc, const gm_node *node)
{
    for (uint32_t k = 0; k < node->n_out; k++)
        if (gm_lc_in_symbol(lc, node, true, k)) return true;
    return false;
}

const char *gm_lc_anchor_str(gm_anchor x, char *buf, size_t cap)
{
    const char *io = x.out ? "out" : "in";
    if (strlen(x.node->name) > 200)
        snprintf(buf, cap, "%.200s...TopoId_%lld_%s_%u", x.node->name, (long long)x.node->topo_id, io, x.index);
    else
        snprintf(buf, cap, "%s_%s_%u", x.node->name, io, x.index);
    return buf;
}

bool gm_lc_phys_refresh_node(const gm_lc *lc, const gm_lc_pair *p)
{
    return lc->fl.physical_refreshable &&
           (!gm_layout_phys_refreshable(lc->a[p->ia].node) || !gm_layout_phys_refreshable(lc->a[p->ib].node));
}

/* The conflict set: a list (its order is the order of the [Conflict] lines), with a hash over
 * it once it passes a few entries, so a symbol with thousands of conflicts stays linear. */
enum { CONF_LINEAR = 16 };

static bool conf_has(const gm_lc *lc, gm_anchor x)
{
    if (!lc->conf_hash_mask) {
        for (size_t i = 0; i < lc->n_conf; i++)
            if (gm_lc_anchor_eq(lc->conf[i].at, x)) return true;
        return false;
    }
    size_t s = (size_t)anchor_hash(x.node, x.out, x.index) & lc->conf_hash_mask;
    for (; lc->conf_hash[s]; s = (s + 1) & lc->conf_hash_mask)
        if (gm_lc_anchor_eq(lc->conf[lc->conf_hash[s] - 1].at, x)) return true;
    return false;
}

static void conf_hash_put(gm_lc *lc, size_t i)
{
    gm_anchor x = lc->conf[i].at;
    size_t s = (size_t)anchor_hash(x.node, x.out, x.index) & lc->conf_hash_mask;
    while (lc->conf_hash[s]) s = (s + 1) & lc->conf_hash_mask;
    lc->conf_hash[s] = i + 1;
}

/* Keeps the hash over conf[0, n_conf) at most half full. */
static gm_status conf_hash_fit(gm_lc *lc)
{
    if (lc->n_conf <= CONF_LINEAR) return GM_OK;
    if (lc->conf_hash_mask && 2 * lc->n_conf <= lc->conf_hash_mask + 1) {
        conf_hash_put(lc, lc->n_conf - 1);
        return GM_OK;
    }
    size_t want = 4 * CONF_LINEAR;
    while (want < 4 * lc->n_conf) want *= 2;
    lc->conf_hash_mask = 0;
    if (want > lc->conf_hash_cap) {
        gm_free(lc->conf_hash);
        lc->conf_hash = gm_malloc(want * sizeof *lc->conf_hash);
        lc->conf_hash_cap = lc->conf_hash ? want : 0;
        if (!lc->conf_hash) return lc_oom(lc);
    }
    memset(lc->conf_hash, 0, want * sizeof *lc->conf_hash);
    lc->conf_hash_mask = want - 1;
    for (size_t i = 0; i < lc->n_conf; i++) conf_hash_put(lc, i);
    return GM_OK;
}

gm_status gm_lc_add(gm_lc *lc, const gm_lc_pair *p, gm_anchor x)
{
    lc->found = true;
    if (conf_has(lc, x)) return GM_OK;
    if (gm_grow((void **)&lc->conf, sizeof *lc->conf, lc->n_conf + 1, &lc->cap_conf)) return lc_oom(lc);
    lc->conf[lc->n_conf++] = (gm_lc_conflict){x, p->ta, p->tb};
    gm_status st = conf_hash_fit(lc);
    if (st != GM_OK) {
        lc->n_conf--; /* as if never added: the error stops the evaluation */
        return st;
    }
    if (gm_log_get_level() >= lc->log_level) {
        char sa[320], sb[320], sx[320];
        gm_log(lc->log_level, "[MemConflict][Conflict] type: [%s, %s], anchor: [%s, %s], will insert %s %s",
               gm_lt_name(p->ta), gm_lt_name(p->tb), gm_lc_anchor_str(lc->a[p->ia], sa, sizeof sa),
               gm_lc_anchor_str(lc->a[p->ib], sb, sizeof sb), x.out ? "after" : "before",
               gm_lc_anchor_str(x, sx, sizeof sx));
    }
    return GM_OK;
}

const char *gm_layout_check_error_text(const gm_lt *ta, size_t na, const gm_lt *tb, size_t nb, size_t i, size_t j,
                                       const char *anchor_a, const char *anchor_b, char *buf, size_t cap)
{
    (void)j; /* GE indexes the second list with i (quirk 6) */
    snprintf(buf, cap, "[MemConflict] check conflict failed, type: [%s, %s], anchor: [%s, %s]",
             gm_lt_name(i < na ? ta[i] : GM_LT_COUNT), gm_lt_name(i < nb ? tb[i] : GM_LT_COUNT), anchor_a, anchor_b);
    return buf;
}

/* ---- marking ---- */

static gm_status mark(gm_lc *lc)
{
    bool debug = gm_log_get_level() >= GM_LOG_DEBUG;
    const gm_lt_mask member = GM_LT_BIT(GM_LT_CONT_IN) | GM_LT_BIT(GM_LT_CONT_OUT);
    size_t members = 0;
    for (size_t i = 0; i < lc->n; i++) {
        gm_anchor x = lc->a[i];
        lc->ref_src[i] = NULL;
        if (!x.out) {
            lc->mask[i] = gm_layout_in_types(lc->g, &lc->fl, x.node, x.index);
        } else {
            /* IsRefFromVar: the named node's output 0 shares this buffer. */
            gm_node *var = gm_layout_ref_var_node(x.node, x.index);
            bool from_var = var && var->n_out > 0 && gm_lc_in_symbol(lc, var, true, 0);
            lc->mask[i] = gm_layout_out_types(lc->g, &lc->fl, x.node, x.index, from_var);
            if (from_var && (lc->mask[i] & GM_LT_BIT(GM_LT_REF_OUT))) lc->ref_src[i] = var;
        }
        members += (lc->mask[i] & member) != 0;
        if (debug) {
            char types[512];
            gm_log(GM_LOG_DEBUG, "[MemConflict] anchor: %s_%s_%u, types: %s", x.node->name, x.out ? "Out" : "In", x.index,
                   gm_lt_list_str(lc->mask[i], x.out, types, sizeof types));
        }
    }
    if (members > 1) lc->groups_shared = true;
    return GM_OK;
}

/* ---- pairs ---- */

/* IsSkip: one node's own anchors; two outputs one of which is a ref_var_src_var_name copy of
 * the other's node (a variable and the Assign that writes it). */
static bool skip_pair(const gm_lc *lc, size_t i, size_t j)
{
    gm_anchor a = lc->a[i], b = lc->a[j];
    if (a.node == b.node) return true;
    if (!a.out || !b.out || gm_lc_has(lc, i, GM_LT_CONT_OUT) || gm_lc_has(lc, j, GM_LT_CONT_OUT)) return false;
    if ((lc->ref_src[i] && lc->ref_src[i] == b.node) || (lc->ref_src[j] && lc->ref_src[j] == a.node)) {
        if (gm_log_get_level() >= lc->log_level) {
            char sa[320], sb[320];
            gm_log(lc->log_level, "[MemConflict] reference by ref_var_src_var_name attr, skip. anchor: [%s, %s]",
                   gm_lc_anchor_str(a, sa, sizeof sa), gm_lc_anchor_str(b, sb, sizeof sb));
        }
        return true;
    }
    return false;
}

/* CheckAbsoluteConflict: the Identity goes before an input, never after two outputs. */
static gm_status check_absolute(gm_lc *lc, const gm_lc_pair *p)
{
    gm_anchor a = gm_lc_a(lc, p), b = gm_lc_b(lc, p);
    if (a.out && b.out)
        return gm_error_set(lc->err, GM_ERR_INTERNAL, "absolute conflict between two outputs is not supported");
    if (!a.out && !b.out) {
        /* Before a ref node's input would not separate anything: its output goes on with the buffer. */
        bool pick_a = a.node->topo_id < b.node->topo_id && !gm_lc_node_out_in_symbol(lc, a.node);
        return gm_lc_add(lc, p, pick_a ? a : b);
    }
    return gm_lc_add(lc, p, a.out ? b : a);
}

static gm_status pair_failed(gm_lc *lc, size_t i, size_t j, const gm_lt *ta, size_t na, const gm_lt *tb, size_t nb,
                             size_t ii, size_t jj)
{
    char sa[320], sb[320], text[1024], was[1024];
    snprintf(was, sizeof was, "%s", lc->err ? lc->err->message : "");
    gm_layout_check_error_text(ta, na, tb, nb, ii, jj, gm_lc_anchor_str(lc->a[i], sa, sizeof sa),
                               gm_lc_anchor_str(lc->a[j], sb, sizeof sb), text, sizeof text);
    gm_status code = lc->err && lc->err->code != GM_OK ? lc->err->code : GM_ERR_INTERNAL;
    if (code != GM_ERR_NOMEM) gm_log(GM_LOG_ERROR, "%s", text); /* out of memory says so itself */
    return gm_error_set(lc->err, code, "%s: graph '%s': %s: %s", lc->g->model->source, lc->g->name, text, was);
}

/* Every (ta, tb) of the pair's attribute lists, in GE's order. */
static gm_status eval_pair(gm_lc *lc, size_t i, size_t j, const gm_lt *ta, size_t na, const gm_lt *tb, size_t nb)
{
    for (size_t ii = 0; ii < na; ii++) {
        for (size_t jj = 0; jj < nb; jj++) {
            gm_lc_pair p = {i, j, ta[ii], tb[jj]};
            uint8_t t = lc->table[p.ta][p.tb];
            if (t == T_NONE || t == T_NO) continue;
            gm_status st = GM_OK;
            if (t == T_CONF) {
                st = check_absolute(lc, &p);
            } else {
                const lt_reg *r = &k_reg[t - T_REG];
                bool once = r->as_symbol;
                gm_lc_checker fn = r->fn;
                if (once) {
                    /* As-symbol checkers look at the whole symbol: once per symbol. */
                    if (lc->visited[p.ta][p.tb]) continue;
                    lc->visited[p.ta][p.tb] = lc->visited[p.tb][p.ta] = true;
                }
                st = fn(lc, &p);
            }
            if (st != GM_OK) return pair_failed(lc, i, j, ta, na, tb, nb, ii, jj);
            if (lc->check_only && lc->found) return GM_OK;
        }
    }
    return GM_OK;
}

/* GE's FindConflictNodes as it is written: every pair i < j. The reference (brute_force). */
static gm_status eval_all_pairs(gm_lc *lc)
{
    gm_status st = GM_OK;
    for (size_t i = 0; st == GM_OK && i < lc->n; i++) {
        for (size_t j = i + 1; st == GM_OK && j < lc->n; j++) {
            if (skip_pair(lc, i, j)) continue;
            gm_lt ta[8], tb[8];
            size_t na = gm_lt_list(lc->mask[i], lc->a[i].out, ta, 8), nb = gm_lt_list(lc->mask[j], lc->a[j].out, tb, 8);
            st = eval_pair(lc, i, j, ta, na, tb, nb);
            if (lc->check_only && lc->found) return st;
        }
    }
    return st;
}

/* ---- classes ---- */

/* Anchors with one attribute list. Members are by_cls[start, start + count), ascending;
 * `seen` of them lie at or before the row being evaluated. */
struct gm_lc_class {
    gm_lt_mask mask;
    bool out;
    uint8_t nt;
    gm_lt lt[8];
    size_t start, count, seen;
};

/* Can table entry t decide anything under the graph's flags? The unrefreshable checkers (#14,
 * #15) return at once, for every pair, unless the feature map or the physical memory is
 * refreshable; a tensor read by thousands of switches would otherwise cost all their pairs. */
static bool entry_acts(const gm_lc *lc, uint8_t t)
{
    if (t == T_CONF) return true;
    if (t < T_REG) return false;
    gm_lc_checker fn = k_reg[t - T_REG].fn;
    if (fn == gm_lc_unrefresh_in || fn == gm_lc_unrefresh_out) return lc->fl.fm_refreshable || lc->fl.physical_refreshable;
    return true;
}

/* Could a pair of an anchor of class x (first) and one of class y decide anything now? The
 * static answer (some attribute pair has an entry that acts) is in rel; an as-symbol checker
 * already run decides nothing more. */
static bool class_live(const gm_lc *lc, size_t x, size_t y)
{
    if (!lc->rel[x * lc->n_classes + y]) return false;
    const struct gm_lc_class *cx = &lc->classes[x], *cy = &lc->classes[y];
    for (size_t ii = 0; ii < cx->nt; ii++) {
        for (size_t jj = 0; jj < cy->nt; jj++) {
            uint8_t t = lc->table[cx->lt[ii]][cy->lt[jj]];
            if (!entry_acts(lc, t)) continue;
            if (t == T_CONF || !k_reg[t - T_REG].as_symbol || !lc->visited[cx->lt[ii]][cy->lt[jj]]) return true;
        }
    }
    return false;
}

static gm_status classify(gm_lc *lc)
{
    size_t n = lc->n;
    if (n > lc->cap_cls) {
        gm_free(lc->cls);
        gm_free(lc->by_cls);
        lc->cls = gm_malloc(n * sizeof *lc->cls);
        lc->by_cls = gm_malloc(n * sizeof *lc->by_cls);
        lc->cap_cls = lc->cls && lc->by_cls ? n : 0;
        if (!lc->cap_cls) return lc_oom(lc);
    }
    lc->n_classes = 0;
    size_t last = 0;
    for (size_t i = 0; i < n; i++) {
        gm_lt_mask m = lc->mask[i];
        bool out = lc->a[i].out;
        size_t c = last;
        if (!lc->n_classes || lc->classes[c].mask != m || lc->classes[c].out != out) {
            for (c = 0; c < lc->n_classes; c++)
                if (lc->classes[c].mask == m && lc->classes[c].out == out) break;
            if (c == lc->n_classes) {
                if (gm_grow((void **)&lc->classes, sizeof *lc->classes, c + 1, &lc->cap_classes)) return lc_oom(lc);
                struct gm_lc_class *k = &lc->classes[c];
                memset(k, 0, sizeof *k);
                k->mask = m;
                k->out = out;
                k->nt = (uint8_t)gm_lt_list(m, out, k->lt, 8);
                lc->n_classes++;
            }
        }
        last = c;
        lc->cls[i] = (uint16_t)c; /* at most 2^6 input and 2^8 output lists */
        lc->classes[c].count++;
    }
    size_t k = lc->n_classes, at = 0;
    for (size_t c = 0; c < k; c++) {
        lc->classes[c].start = at;
        at += lc->classes[c].count;
    }
    for (size_t i = 0; i < n; i++) {
        struct gm_lc_class *c = &lc->classes[lc->cls[i]];
        lc->by_cls[c->start + c->seen++] = i;
    }
    if (k * k > lc->cap_rel) {
        gm_free(lc->rel);
        gm_free(lc->heads);
        lc->rel = gm_malloc(k * k);
        lc->heads = gm_malloc(2 * k * sizeof *lc->heads);
        lc->cap_rel = lc->rel && lc->heads ? k * k : 0;
        if (!lc->cap_rel) return lc_oom(lc);
    }
    for (size_t x = 0; x < k; x++) {
        lc->classes[x].seen = 0;
        for (size_t y = 0; y < k; y++) {
            const struct gm_lc_class *cx = &lc->classes[x], *cy = &lc->classes[y];
            bool rel = false;
            for (size_t ii = 0; ii < cx->nt && !rel; ii++)
                for (size_t jj = 0; jj < cy->nt && !rel; jj++) rel = entry_acts(lc, lc->table[cx->lt[ii]][cy->lt[jj]]);
            lc->rel[x * k + y] = rel;
        }
    }
    return GM_OK;
}

/* ---- the pairs IsSkip logs ---- */

static int by_pair(const void *pa, const void *pb)
{
    const size_t *a = pa, *b = pb;
    if (a[0] != b[0]) return a[0] < b[0] ? -1 : 1;
    return a[1] < b[1] ? -1 : a[1] > b[1];
}

/* The pairs skip_pair calls a reference by ref_var_src_var_name: two outputs of different
 * nodes, neither continuous, one naming the other's node. Only wanted for the log line. */
static gm_status collect_skips(gm_lc *lc)
{
    lc->n_skips = 0;
    if (gm_log_get_level() < lc->log_level) return GM_OK;
    for (size_t x = 0; x < lc->n; x++) {
        const gm_node *v = lc->ref_src[x];
        if (!v || v == lc->a[x].node || gm_lc_has(lc, x, GM_LT_CONT_OUT)) continue;
        for (uint32_t k = 0; k < v->n_out; k++) {
            size_t s = (size_t)anchor_hash(v, true, k) & lc->hash_mask;
            for (; lc->hash[s]; s = (s + 1) & lc->hash_mask) {
                size_t y = lc->hash[s] - 1;
                gm_anchor b = lc->a[y];
                if (b.node != v || !b.out || b.index != k || gm_lc_has(lc, y, GM_LT_CONT_OUT)) continue;
                if (gm_grow((void **)&lc->skips, 2 * sizeof *lc->skips, lc->n_skips + 1, &lc->cap_skips))
                    return lc_oom(lc);
                lc->skips[2 * lc->n_skips] = x < y ? x : y;
                lc->skips[2 * lc->n_skips + 1] = x < y ? y : x;
                lc->n_skips++;
            }
        }
    }
    if (lc->n_skips > 1) qsort(lc->skips, lc->n_skips, 2 * sizeof *lc->skips, by_pair);
    size_t u = 0;
    for (size_t k = 0; k < lc->n_skips; k++) {
        if (u && by_pair(&lc->skips[2 * (u - 1)], &lc->skips[2 * k]) == 0) continue;
        lc->skips[2 * u] = lc->skips[2 * k];
        lc->skips[2 * u + 1] = lc->skips[2 * k + 1];
        u++;
    }
    lc->n_skips = u;
    return GM_OK;
}

/* GE's loop with the unrelated pairs left out: row i merges, in ascending j > i, the members
 * of the classes live with i's class and the logged skips of row i. */
static gm_status eval_related_pairs(gm_lc *lc)
{
    gm_status st = collect_skips(lc);
    size_t k = lc->n_classes, sk = 0;
    for (size_t i = 0; st == GM_OK && i < lc->n; i++) {
        size_t x = lc->cls[i];
        const struct gm_lc_class *cx = &lc->classes[x];
        lc->classes[x].seen++;
        size_t nh = 0;
        for (size_t y = 0; y < k; y++) {
            const struct gm_lc_class *cy = &lc->classes[y];
            if (cy->seen == cy->count || !class_live(lc, x, y)) continue;
            lc->heads[2 * nh] = y;
            lc->heads[2 * nh + 1] = cy->start + cy->seen;
            nh++;
        }
        for (;;) {
            size_t j = SIZE_MAX, h_at = SIZE_MAX;
            for (size_t h = 0; h < nh; h++) {
                const struct gm_lc_class *cy = &lc->classes[lc->heads[2 * h]];
                size_t at = lc->heads[2 * h + 1];
                if (at < cy->start + cy->count && lc->by_cls[at] < j) {
                    j = lc->by_cls[at];
                    h_at = h;
                }
            }
            bool logged = sk < lc->n_skips && lc->skips[2 * sk] == i;
            if (logged && lc->skips[2 * sk + 1] <= j) {
                if (lc->skips[2 * sk + 1] < j) h_at = SIZE_MAX; /* a skip alone */
                j = lc->skips[2 * sk + 1];
                sk++;
            }
            if (j == SIZE_MAX) break;
            if (h_at != SIZE_MAX) lc->heads[2 * h_at + 1]++;
            if (skip_pair(lc, i, j) || h_at == SIZE_MAX) continue;
            if (!class_live(lc, x, lc->cls[j])) {
                /* an as-symbol checker ran: the rest of this class has nothing to say to i */
                lc->heads[2 * h_at + 1] = SIZE_MAX;
                continue;
            }
            st = eval_pair(lc, i, j, cx->lt, cx->nt, lc->classes[lc->cls[j]].lt, lc->classes[lc->cls[j]].nt);
            if (st != GM_OK || (lc->check_only && lc->found)) return st;
        }
    }
    return st;
}

gm_status gm_lc_eval_symbol(gm_lc *lc, const gm_anchor *a, size_t n)
{
    lc->a = a;
    lc->n = n;
    lc->n_conf = 0;
    lc->conf_hash_mask = 0;
    memset(lc->visited, 0, sizeof lc->visited);
    if (n > lc->cap) {
        gm_free(lc->mask);
        gm_free(lc->ref_src);
        lc->mask = gm_malloc(n * sizeof *lc->mask);
        lc->ref_src = gm_malloc(n * sizeof *lc->ref_src);
        lc->cap = lc->mask && lc->ref_src ? n : 0;
        if (!lc->cap) return lc_oom(lc);
    }
    gm_status st = build_hash(lc);
    if (st == GM_OK) st = mark(lc);
    if (st != GM_OK) return st;
    /* Stopping at the first conflict when one was found before: GE's loop stops after the first pair. */
    if (lc->brute_force || (lc->check_only && lc->found)) return eval_all_pairs(lc);
    st = classify(lc);
    return st == GM_OK ? eval_related_pairs(lc) : st;
}
