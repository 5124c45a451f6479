/*
 * lint.h — GE's GraphLint::Verify (reference §4.2): warning W18888 for a tensor whose writers
 * and readers are not ordered by the graph. GE runs it first, on the user's root graph
 * (GraphPrepare::NormalizeGraph), and ignores its result: it only warns.
 *
 * For every output with at least two consumer inputs (every graph, each graph's own nodes),
 * every consumer input that writes the tensor must be connected — one node reaches the other
 * over data + control edges of that graph — with every other writer and every reader. Which
 * inputs write is decided by IR names (an input named like one of the op's outputs is written
 * in place); inputs of a Cmo op are ignored; a node with subgraphs takes the types its
 * subgraphs' Data consumers gave it, through nested subgraphs.
 *
 * graphmem reports each violating output once (its first violation, in GE's order), where GE
 * stops at the first violation of the whole graph; and it answers "connected" with
 * src/analysis/reach.c instead of GE's N x N bit matrix.
 */
#ifndef GM_LINT_H
#define GM_LINT_H

#include "analysis/reach.h"
#include "passes/pass_util.h"

/* The pass: gm_lint_verify on the root graph. Violations are W18888 entries in the report and
 * warn-level log lines; the graph is never changed and the pass returns GM_OK whatever it
 * finds. Out of memory returns GM_ERR_NOMEM (what was reported so far stays). */
gm_status gm_pass_lint(gm_pass_ctx *c);

/* Flags for gm_lint_verify. The two GM_LINT_TEST_ ones are mutations for tests only: they show
 * that a scenario without warnings depends on the order check (every pair of distinct nodes
 * taken as unconnected) or on the read/write types (every input taken as a writer). */
enum {
    GM_LINT_TEST_UNORDERED = 1u << 0,
    GM_LINT_TEST_ALL_WRITABLE = 1u << 1,
};

/* What one verification did (for tests and benchmarks). */
typedef struct gm_lint_stats {
    size_t violations;      /* outputs reported */
    size_t outputs_checked; /* outputs with >= 2 consumers and a writer */
    size_t pairs;           /* writer/other-consumer pairs whose order was asked */
    gm_reach_stats reach;   /* how the reachability queries were answered */
} gm_lint_stats;

/* GraphLint::Verify(g). g must be the model's root graph (as in GE; a subgraph gets a warning
 * log line and GM_ERR_INPUT, with nothing checked). Returns GM_OK when every writer is ordered
 * with the other users of its tensor, GM_ERR_PROBLEM when not (each violating output reported
 * once through gm_pass_warn, and c->err says how many), GM_ERR_NOMEM when out of memory.
 * *stats (may be NULL) receives what was done. */
gm_status gm_lint_verify(gm_pass_ctx *c, const gm_graph *g, unsigned flags, gm_lint_stats *stats);

#endif
