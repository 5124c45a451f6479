/*
 * graphmem/passes.h — the compiler side: GE's memory-conflict passes, run in GE's order
 * (reference §0). A pass set names which ones run; the order is always GE's.
 *
 * The passes edit the model in place and need exclusive access to it; different models may be
 * processed on different threads at once. Names returned here are static strings.
 */
#ifndef GRAPHMEM_PASSES_H
#define GRAPHMEM_PASSES_H

#include "graphmem/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The passes, in GE's order. lint runs on the user graph before the others do (GraphPrepare). */
typedef enum gm_pass_id {
    GM_PASS_LINT = 0,
    GM_PASS_HCCL_MEMCPY,
    GM_PASS_SUBGRAPH,
    GM_PASS_INPLACE_SUPPORT_CHECK,
    GM_PASS_ATOMIC_ADDR_CLEAN,
    GM_PASS_HCCL_CONTINUOUS_MEMCPY,
    GM_PASS_MEMCPY_ADDR_ASYNC,
    GM_PASS_MARK_SAME_ADDR,
    GM_PASS_RW_CONFLICT,
    GM_PASS_LAYOUT_CONFLICT,
    GM_PASS_INPLACE,
    GM_PASS_SET_IO_OFFSET,
    GM_PASS_ACCESS_ORDER, /* graphmem's own: conflicting accesses of one buffer ordered (after inplace) */
    GM_PASS_COUNT
} gm_pass_id;

/* A set of passes: bit (1u << id). */
typedef uint32_t gm_pass_set;
#define GM_PASS_SET_ALL ((gm_pass_set)((1u << GM_PASS_COUNT) - 1u))
#define GM_PASS_SET_NONE ((gm_pass_set)0)

/* The name used on the command line and in scenario files ("hccl_memcpy" ...). */
const char *gm_pass_name(gm_pass_id id);
/* The inverse of gm_pass_name; false for an unknown name (*out untouched). */
bool gm_pass_from_name(const char *name, gm_pass_id *out);
/* A comma list, left to right: "all", "none", a pass name (added), "-name" (taken out); an
 * unknown name is GM_ERR_USAGE naming it. */
gm_status gm_pass_set_parse(const char *list, gm_pass_set *out, gm_error *err);

/* One node a pass inserted, and why (the plan's "inserted" list, docs/plan-format.md). */
typedef struct gm_inserted_node {
    char *node, *type, *graph;
    gm_pass_id pass;
    char *anchor_node;   /* the node it was inserted before (an input) or after (an output) */
    bool before;
    int32_t index;       /* that input's or output's index; -1 for a multi-anchor node */
    char *reason;        /* e.g. "[CONTINUOUS_INPUT, CONTINUOUS_INPUT]" or "Writeable -> ScopeWriteable" */
} gm_inserted_node;

/* A control edge a pass added (the plan's "inserted" list, as an "edge" entry): from must run
 * before to, both of one graph. */
typedef struct gm_inserted_edge {
    char *from, *to, *graph;
    gm_pass_id pass;
    char *reason;        /* e.g. "read node[clone] before write node[relu_] of mm_out_0" */
} gm_inserted_edge;

/* A lint finding about the user graph (GE's warning code and its message). */
typedef struct gm_lint_warning {
    char code[8];        /* "W18888" */
    char *message;
} gm_lint_warning;

/* What a run of the passes did. Free with gm_pass_report_free. */
typedef struct gm_pass_report {
    size_t inserted[GM_PASS_COUNT];   /* nodes inserted, by pass */
    size_t ran[GM_PASS_COUNT];        /* 1 when the pass ran */
    double ms[GM_PASS_COUNT];         /* wall time of the pass with its re-sort, every step summed */
    double sort_ms;                   /* of which the re-sorts (the model's topological order) */
    gm_inserted_node *nodes;          /* every inserted node, in insertion order */
    size_t n_nodes, cap_nodes;
    gm_inserted_edge *edges;          /* every control edge added, in order */
    size_t n_edges, cap_edges;
    gm_lint_warning *warnings;
    size_t n_warnings, cap_warnings;
} gm_pass_report;

/* Frees what the report holds (not r itself) and leaves it empty; a zeroed report is fine. */
void gm_pass_report_free(gm_pass_report *r);

/* Runs the passes of `set` that this version implements, in GE's order; *available (when not
 * NULL) receives the set of implemented passes. The model is re-sorted after the passes. m must
 * be finalized (readers return it so). *report is overwritten (not freed first) and is the
 * caller's: free it with gm_pass_report_free, whether or not the passes succeed. A graph a pass
 * cannot handle is an error whose message names the node; the model may then be half edited
 * and is fit only for gm_model_free. */
gm_status gm_passes_run(gm_model *m, gm_pass_set set, gm_pass_report *report,
                        gm_pass_set *available, gm_error *err);

/* The root graph's symbol table (GE's GetRefMapping), opaque: the layout and inplace passes
 * build it, and the planner needs the same one. */
typedef struct gm_symbols gm_symbols;
/* gm_passes_run, also handing over the symbol table the passes leave when it still describes
 * the model (no node or edge changed since it was built), else *symbols = NULL. Give it to
 * gm_plan_build_symbols, which takes it: a million-node build saved. */
gm_status gm_passes_run_symbols(gm_model *m, gm_pass_set set, gm_pass_report *report,
                                gm_pass_set *available, gm_symbols **symbols, gm_error *err);
/* Frees a table not handed to the planner; NULL is a no-op. */
void gm_symbols_free(gm_symbols *s);

#ifdef __cplusplus
}
#endif
#endif
