/*
 * graphmem/plan.h — memory plans (spec/plan-format.md).
 */
#ifndef GRAPHMEM_PLAN_H
#define GRAPHMEM_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graphmem/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the verifier (src/plan/verify.c) ------------------------------------------------------
 * Checks a plan file against a model by the execution model of spec/plan-format.md, on its
 * own: it shares only the model reader with the planner (it never builds the planner's
 * symbol table), so a planner bug cannot hide itself. A plan that parses but is wrong is a
 * verdict with problems, not an error; a file that is not JSON or not plan-format version 1 is
 * GM_ERR_INPUT naming the file. */

typedef enum gm_plan_problem_kind {
    GM_PLAN_P_UNKNOWN_ANCHOR = 0, /* an anchor names a node or index the model does not have */
    GM_PLAN_P_BAD_ORDER,          /* "order": unknown/duplicate/missing node, or against an edge */
    GM_PLAN_P_UNPLACED,           /* an output of known non-zero size (or a consumer's in-anchor)
                                     is in no symbol */
    GM_PLAN_P_DUPLICATE,          /* an anchor is in two symbols, or two symbols share an id */
    GM_PLAN_P_SPLIT,              /* anchors that must share (edge, in-place, subgraph) differ */
    GM_PLAN_P_TOO_SMALL,          /* a tensor does not fit its symbol */
    GM_PLAN_P_MISALIGNED,         /* a symbol's offset breaks its region's alignment */
    GM_PLAN_P_REGION,             /* unknown region, dynamic with an offset, outside the region */
    GM_PLAN_P_FIXED_OVERLAP,      /* two fixed symbols overlap in address */
    GM_PLAN_P_OVERLAP,            /* two symbols overlap in address, both live and unordered */
    GM_PLAN_P_CONTINUOUS,         /* a continuous group is out of order or not contiguous */
    GM_PLAN_P_UNRELATED,          /* a symbol joins tensors the graph does not make one (two
                                     outputs at one address for their whole lives) */
    GM_PLAN_P_KIND_COUNT
} gm_plan_problem_kind;

const char *gm_plan_problem_kind_name(gm_plan_problem_kind k);

typedef struct gm_plan_problem {
    gm_plan_problem_kind kind;
    char sym_a[128], sym_b[128]; /* the symbols named ("" when none) */
    char node[128];              /* the anchor or group node named ("" when none) */
    int32_t index;               /* its anchor index, -1 when none */
    bool out;                    /* output anchor (else input) */
    char message[384];           /* says which and why */
} gm_plan_problem;

/* At most this many problems are kept; the rest are counted in `dropped`. */
#define GM_PLAN_VERDICT_MAX_PROBLEMS 256

typedef struct gm_plan_verdict {
    gm_plan_problem *problems; /* owned: free with gm_plan_verdict_free */
    size_t n_problems;
    size_t dropped;
    size_t by_kind[GM_PLAN_P_KIND_COUNT]; /* every problem found, kept or dropped */
    size_t symbols;            /* symbols in the plan */
    int64_t bytes;             /* sum of symbol sizes outside the dynamic region */
    int64_t extent_bytes;      /* memory the plan needs: per region its symbols' largest end */
    int64_t region_bytes;      /* sum of the regions' sizes */
    size_t overlap_checks;     /* address-overlapping pairs whose order was tested */
} gm_plan_verdict;

static inline bool gm_plan_verdict_ok(const gm_plan_verdict *v) { return v->n_problems + v->dropped == 0; }
void gm_plan_verdict_free(gm_plan_verdict *v);

/* Verifies the plan JSON `text` (len bytes; `source` names it in messages) against m, which
 * must be finalized. *v is filled (and must be freed) when GM_OK is returned. */
gm_status gm_plan_verify_json(const gm_model *m, const char *text, size_t len, const char *source,
                              gm_plan_verdict *v, gm_error *err);
/* The same for a file: GM_ERR_IO when it cannot be read. */
gm_status gm_plan_verify_file(const gm_model *m, const char *plan_path, gm_plan_verdict *v, gm_error *err);

#ifdef __cplusplus
}
#endif
#endif
