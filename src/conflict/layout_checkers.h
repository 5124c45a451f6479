/*
 * layout_checkers.h — what the layout-conflict files share (reference §2.5–§2.8): the state
 * of evaluating one symbol, the checker signature and registry, the helpers the 22 checkers
 * of §2.6 are built from, and the Identity insertion of §2.7. Internal to src/conflict.
 *
 * A symbol is evaluated from a plain list of anchors, so the same code serves the pass (the
 * symbols of gm_symbols_build*) and the what-if questions of the in-place pass (a list the
 * caller made up). Membership in the symbol is a small hash set built per symbol; the
 * attributes of its anchors are marked once per symbol; the checkers read the graph as it is
 * now, which after earlier insertions of the same Process may differ from the graph the
 * symbols were built on (GE does the same, §9.3).
 */
#ifndef GM_LAYOUT_CHECKERS_H
#define GM_LAYOUT_CHECKERS_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/symbols.h"
#include "conflict/anchor_attrs.h"
#include "graphmem/log.h"
#include "passes/pass_util.h"

/* One anchor chosen for an Identity, and the attribute pair that chose it first. */
typedef struct gm_lc_conflict {
    gm_anchor at;
    gm_lt ta, tb;
} gm_lc_conflict;

typedef struct gm_lc {
    const gm_graph *g;   /* the graph processed (its Data/NetOutput are the user's) */
    gm_layout_flags fl;
    gm_error *err;
    bool check_only;     /* IsGraphExistMemConflictSymbol: stop at the first conflict, log at debug */
    gm_log_level log_level;

    /* The symbol under evaluation. */
    const gm_anchor *a;
    size_t n;
    gm_lt_mask *mask;    /* per anchor */
    gm_node **ref_src;   /* per out anchor: the node IsRefFromVar found (GE's ref_map_), or NULL */
    size_t cap;
    size_t *hash;        /* open addressing over anchor keys: position + 1, 0 = empty */
    size_t hash_cap;     /* allocated slots */
    size_t hash_mask;    /* slots in use for this symbol, minus one (sized to the symbol) */
    bool visited[GM_LT_COUNT][GM_LT_COUNT]; /* as-symbol checkers already run for this symbol */
    uint8_t table[GM_LT_COUNT][GM_LT_COUNT]; /* the tables and registry flattened: see gm_lc_init */

    /* The symbol's anchors by class — one class per distinct attribute list (direction and
     * mask), so the lists are made once per class, and only pairs of classes the tables
     * relate are visited (see gm_lc_eval_symbol). */
    uint16_t *cls;       /* per anchor: its class */
    size_t *by_cls;      /* anchor positions grouped by class, each group in symbol order */
    size_t cap_cls;
    struct gm_lc_class *classes;
    size_t n_classes, cap_classes;
    uint8_t *rel;        /* n_classes x n_classes: some attribute pair has a table entry */
    size_t *heads;       /* per row: (class, next member) of the classes being merged */
    size_t cap_rel;
    size_t *skips;       /* the ref_var_src_var_name pairs IsSkip logs, as (i, j) i < j, sorted */
    size_t n_skips, cap_skips;
    bool brute_force;    /* the reference: every pair i < j, as GE's FindConflictNodes (tests) */

    /* What the symbol's pairs decided. */
    gm_lc_conflict *conf;
    size_t n_conf, cap_conf;
    size_t *conf_hash;   /* over conf once it grows: position + 1, 0 = empty */
    size_t conf_hash_cap, conf_hash_mask; /* mask 0: not in use */
    bool found;          /* some conflict in any symbol so far */
    bool groups_shared;  /* some symbol so far holds two members of continuous groups (two
                            anchors marked CONTINUOUS_INPUT/OUTPUT): see layout_groups.c */

    /* Scratch anchor lists for the checkers (producer lists). */
    gm_anchor *v1, *v2;
    size_t cap1, cap2;
} gm_lc;

/* The pair a checker is asked about: anchors a[ia] (earlier in the symbol) and a[ib], with the
 * attribute of each that selected the checker. */
typedef struct gm_lc_pair {
    size_t ia, ib;
    gm_lt ta, tb;
} gm_lc_pair;

typedef gm_status (*gm_lc_checker)(gm_lc *lc, const gm_lc_pair *p);

/* ---- the evaluation (layout_conflict.c) ---------------------------------------------------- */

void gm_lc_init(gm_lc *lc, const gm_graph *g, gm_error *err, bool check_only);
void gm_lc_fini(gm_lc *lc);
/* Marks the symbol's anchors and evaluates every unordered pair (§2.5). lc->conf receives the
 * conflicting anchors (each once), in the order GE's pair loop finds them. Pairs no table
 * relates are not visited (the result, logs included, is that of visiting all of them; with
 * lc->brute_force set every pair is visited, as the reference the tests compare with). */
gm_status gm_lc_eval_symbol(gm_lc *lc, const gm_anchor *a, size_t n);

/* Is (node, out, index) in the symbol under evaluation? */
bool gm_lc_in_symbol(const gm_lc *lc, const gm_node *node, bool out, uint32_t index);
/* Does node have an output / an input in the symbol? */
bool gm_lc_node_out_in_symbol(const gm_lc *lc, const gm_node *node);
/* Adds x to the conflict set for pair p and logs GE's [Conflict] line. */
gm_status gm_lc_add(gm_lc *lc, const gm_lc_pair *p, gm_anchor x);
/* The anchors of the pair, and whether an anchor has attribute t. */
static inline gm_anchor gm_lc_a(const gm_lc *lc, const gm_lc_pair *p) { return lc->a[p->ia]; }
static inline gm_anchor gm_lc_b(const gm_lc *lc, const gm_lc_pair *p) { return lc->a[p->ib]; }
static inline bool gm_lc_has(const gm_lc *lc, size_t i, gm_lt t) { return (lc->mask[i] & GM_LT_BIT(t)) != 0; }
/* The position of the pair's anchor whose selecting attribute is t (a's when both are t). */
static inline size_t gm_lc_role(const gm_lc_pair *p, gm_lt t) { return p->ta == t ? p->ia : p->ib; }
/* The other anchor of the pair. */
static inline size_t gm_lc_other(const gm_lc_pair *p, size_t i) { return i == p->ia ? p->ib : p->ia; }
/* GE's anchor string: "<name>_in_<i>" / "<name>_out_<i>", names over 200 characters cut and
 * suffixed "...TopoId_<id>". */
const char *gm_lc_anchor_str(gm_anchor x, char *buf, size_t cap);
/* HasNotSupportPhysicalMemoryRefreshNode for the pair. */
bool gm_lc_phys_refresh_node(const gm_lc *lc, const gm_lc_pair *p);
/* Grows a scratch anchor list (v1 or v2) to hold n. */
gm_status gm_lc_scratch(gm_lc *lc, gm_anchor **v, size_t *cap, size_t n);

/* The checker registered for (ta, tb) and whether it runs once per symbol; NULL when none. */
gm_lc_checker gm_lc_registry(gm_lt ta, gm_lt tb, bool *as_symbol);

/* ---- helpers (layout_checkers_cont.c) --------------------------------------------------------- */

/* IsSameOrPartialSame(lh, rh) and IsSubVector(vec, sub) of §2.6 on anchor lists. */
bool gm_lc_same_or_partial_same(const gm_anchor *lh, size_t nl, const gm_anchor *rh, size_t nr);
bool gm_lc_is_sub_vector(const gm_anchor *vec, size_t nv, const gm_anchor *sub, size_t ns);
/* The real producer of n's input i: the producer's output, followed backwards while it is
 * one of its node's inputs (IsRefFromInput) and that input is connected. {NULL} when
 * unconnected. */
gm_anchor gm_lc_real_producer(const gm_node *n, uint32_t i);
/* Every input of n has the same real producer (var -> assign_slice0/1 -> PhonyConcat). */
bool gm_lc_inputs_one_producer(const gm_node *n);
static inline bool gm_lc_anchor_eq(gm_anchor x, gm_anchor y)
{
    return x.node == y.node && x.index == y.index && x.out == y.out;
}

/* AssignVarInsertIdentity (layout_checkers_rts.c): of the pair, the anchor without attribute
 * var_type belongs to the "ref node"; each of that node's inputs in the symbol that an
 * assign-like node feeds conflicts. *found = true when there was one. */
gm_status gm_lc_assign_var_insert(gm_lc *lc, const gm_lc_pair *p, gm_lt var_type, bool *found);

/* ---- the 22 checkers of §2.6 ---------------------------------------------------------------------- */

/* layout_checkers_cont.c */
gm_status gm_lc_cont_in_cont_in(gm_lc *lc, const gm_lc_pair *p);       /* #1, as symbol */
gm_status gm_lc_cont_out_cont_in(gm_lc *lc, const gm_lc_pair *p);      /* #2 */
gm_status gm_lc_cont_out_cont_out(gm_lc *lc, const gm_lc_pair *p);     /* #3, as symbol */
gm_status gm_lc_nopad_in_nopad_in(gm_lc *lc, const gm_lc_pair *p);     /* #8, as symbol */
gm_status gm_lc_nopad_in_nopad_out(gm_lc *lc, const gm_lc_pair *p);    /* #9 */
gm_status gm_lc_nopad_out_nopad_out(gm_lc *lc, const gm_lc_pair *p);   /* #10, as symbol */
/* layout_checkers_rts.c */
gm_status gm_lc_cont_rts(gm_lc *lc, const gm_lc_pair *p);             /* #4 */
gm_status gm_lc_immutable_cont_out(gm_lc *lc, const gm_lc_pair *p);    /* #5 */
gm_status gm_lc_immutable_nopad_in(gm_lc *lc, const gm_lc_pair *p);    /* #6 */
gm_status gm_lc_immutable_rts_out(gm_lc *lc, const gm_lc_pair *p);     /* #7 */
gm_status gm_lc_rts_in_rts_in(gm_lc *lc, const gm_lc_pair *p);         /* #11 */
gm_status gm_lc_rts_in_rts_out(gm_lc *lc, const gm_lc_pair *p);        /* #12 */
gm_status gm_lc_rts_out_rts_out(gm_lc *lc, const gm_lc_pair *p);       /* #13 */
/* layout_checkers_user.c */
gm_status gm_lc_unrefresh_in(gm_lc *lc, const gm_lc_pair *p);          /* #14 */
gm_status gm_lc_unrefresh_out(gm_lc *lc, const gm_lc_pair *p);         /* #15 */
gm_status gm_lc_user_in_cont(gm_lc *lc, const gm_lc_pair *p);          /* #16 */
gm_status gm_lc_user_in_rts_out(gm_lc *lc, const gm_lc_pair *p);       /* #17 */
gm_status gm_lc_user_in_unrefresh_out(gm_lc *lc, const gm_lc_pair *p); /* #18 */
gm_status gm_lc_user_out_cont_in(gm_lc *lc, const gm_lc_pair *p);      /* #19 */
gm_status gm_lc_user_out_immutable(gm_lc *lc, const gm_lc_pair *p);    /* #20 */
gm_status gm_lc_user_out_unrefresh_in(gm_lc *lc, const gm_lc_pair *p); /* #21 */
gm_status gm_lc_user_out_unrefresh_out(gm_lc *lc, const gm_lc_pair *p); /* #22 */

/* ---- solving (layout_conflict.c) -------------------------------------------------------------- */

/* One run of the pass: the context and GE's Identity counter (per run, see layout_conflict.h). */
typedef struct gm_layout_run {
    gm_pass_ctx *c;
    unsigned counter;
} gm_layout_run;

/* IsSkipInsert (§2.7) for an anchor, logging why at `level` when it skips. */
bool gm_layout_skip_insert(gm_anchor x, gm_log_level level);
/* One Identity with k inputs before k in-anchors of one graph (k = 1: before one anchor),
 * named and dressed as CreateIdentityOpDesc does (§2.7). NULL on failure (error set). */
gm_node *gm_layout_insert_before(gm_layout_run *r, gm_node *const *dsts, const size_t *in, size_t k,
                                 const char *reason);
/* One Identity after src:out feeding all its readers, named after the first of them (§2.7). */
gm_node *gm_layout_insert_after(gm_layout_run *r, gm_node *src, uint32_t out, const char *reason);

/* ---- continuous groups as a whole (layout_groups.c) ------------------------------------------ */

/* Gives a copy to every member of a continuous group of g (and below) whose place in its block
 * no layout can honour together with the groups before it (another neighbour fixed already, a
 * cycle, one buffer twice). Worth calling only where Process found a symbol holding two
 * members (gm_lc.groups_shared): otherwise the groups cannot disagree, and the solves of a
 * Process only split symbols, so they cannot make them disagree. The model must be sorted. *table: a current symbol table of g, or
 * NULL to build one; on return the function has taken it, and *table is a current table of g
 * when nothing was inserted (the caller's to free), NULL otherwise. */
gm_status gm_layout_groups_solve(gm_layout_run *r, gm_graph *g, gm_symbols **table);

/* ---- control nodes (ctrl_node_conflict.c) ---------------------------------------------------- */

/* SolveCtrlNodeSubGraphConflict (§2.8) for every If/Case/While node of g and below. */
gm_status gm_layout_ctrl_solve(gm_layout_run *r, gm_graph *g);

#endif
