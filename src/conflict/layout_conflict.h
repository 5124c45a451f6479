/*
 * layout_conflict.h — GE's mem_layout_conflict_optimize (reference §2): anchors that would
 * share one address (a symbol) but carry memory attributes that cannot live in one buffer —
 * a user's input and a continuous block, a constant and special memory, a NetOutput and an
 * address the runtime cannot refresh, ... — are separated by an Identity.
 *
 * Files: anchor_attrs.c (the 14 attributes and the graph flags), layout_conflict.c (the pass,
 * the tables, the pair evaluation, the solving), layout_checkers_{cont,rts,user}.c (the 22
 * checkers by family), ctrl_node_conflict.c (If/Case/While subgraph outputs, run first),
 * layout_groups.c (graphmem, run last: the continuous groups checked as a whole).
 */
#ifndef GM_LAYOUT_CONFLICT_H
#define GM_LAYOUT_CONFLICT_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis/symbols.h"
#include "conflict/anchor_attrs.h"
#include "passes/pass_util.h"

/* MemLayoutConflictOptimizer::Run (§2.1) on the whole model: picks the top static graphs,
 * solves the control-node conflicts of each (§2.8), re-sorts, then Process(g) each: builds
 * g's symbol table once, marks the anchors, evaluates every pair within each symbol (in
 * symbol-name order) and inserts Identities, without rebuilding the symbols in between
 * (§9.3). Then (graphmem, not GE) the continuous groups of each graph are checked as a whole:
 * groups that agree pair by pair but together ask for no layout (a cycle, one buffer twice
 * through a view) get a copy before the offending input (layout_groups.c). Logs GE's
 * [MemConflict] lines at info level. Leaves the model sorted.
 *
 * The Identity counter in the names (identity_<i>_<dst>_MemLayoutConflict_<n>) counts from 0
 * per run of this function; GE's is process-wide, which would make a second model's names
 * depend on the first. */
gm_status gm_pass_layout_conflict(gm_pass_ctx *c);

/* ---- questions without insertion (for the in-place pass, §2.10, §4.1) ---------------------- */

/* One symbol of a caller's table: its anchors in list order (the order decides which anchor
 * of a pair is "a"). The anchors must belong to g or the graphs below it. */
typedef struct gm_layout_symbol {
    const gm_anchor *anchors;
    size_t n;
} gm_layout_symbol;

/* IsGraphExistMemConflictSymbol on a possibly hypothetical table: true when some pair of
 * anchors within one of the symbols conflicts, marking and checking exactly as the pass does
 * for graph g (its flags, its Data/NetOutput as the user's). Nothing is inserted; conflicts
 * are logged at debug level. The graph must be sorted (topological ids decide some pairs).
 * On failure (out of memory) it answers true — "do not merge" is the safe answer — and sets
 * *err when err is not NULL. Works the graph flags out afresh (O(|g|)): for repeated questions
 * use a gm_layout_checker. */
bool gm_layout_symbols_have_conflict(const gm_graph *g, const gm_layout_symbol *syms, size_t n_syms,
                                     gm_error *err);
/* For many questions about one graph (the in-place pass asks one per candidate): the graph
 * flags — an O(|g|) walk — are worked out once and the scratch buffers kept, so each question
 * costs only the pairs of its symbols. The graph may change between questions (the flags
 * depend on options, graph attributes and shapes, which passes do not change). */
typedef struct gm_layout_checker gm_layout_checker;
gm_status gm_layout_checker_new(const gm_graph *g, gm_layout_checker **out, gm_error *err);
/* gm_layout_symbols_have_conflict with the checker's graph and flags. */
bool gm_layout_checker_conflict(gm_layout_checker *c, const gm_layout_symbol *syms, size_t n_syms, gm_error *err);
void gm_layout_checker_free(gm_layout_checker *c);

/* The same for every symbol of a table built by gm_symbols_build / gm_symbols_build_graph. */
bool gm_layout_graph_has_conflict(const gm_graph *g, const gm_symbols *s, gm_error *err);

/* IsCtrlNodeSubgraphExistMemConflictSymbol: true when the control-node handling of §2.8 would
 * insert an Identity for some If/Case/While node of g or below. Same failure rule. */
bool gm_layout_ctrl_has_conflict(const gm_graph *g, gm_error *err);

/* ---- the tables (exposed for tests) ---------------------------------------------------------- */

/* The absolute no-conflict / conflict sets of §2.5 (symmetric; REFERENCE_OUTPUT with anything
 * is "no conflict"). */
bool gm_layout_abs_no_conflict(gm_lt a, gm_lt b);
bool gm_layout_abs_conflict(gm_lt a, gm_lt b);
/* The number of checker registrations (GE's REGISTER_FUNC lines: 55). */
size_t gm_layout_registration_count(void);
/* Whether a checker is registered for (a, b) and whether it runs once per symbol. */
bool gm_layout_has_checker(gm_lt a, gm_lt b, bool *as_symbol);

/* The error text CheckConflict reports when a checker fails for the pair of attribute lists
 * ta[0..na) x tb[0..nb) at position (i, j). GE prints tb[i] where it means tb[j] (quirk 6 of
 * §9.4); graphmem keeps that, printing "RESERVED" where GE would read past the list. */
const char *gm_layout_check_error_text(const gm_lt *ta, size_t na, const gm_lt *tb, size_t nb, size_t i, size_t j,
                                       const char *anchor_a, const char *anchor_b, char *buf, size_t cap);

#endif
