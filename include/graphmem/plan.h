/*
 * graphmem/plan.h — memory plans (docs/plan-format.md): the planner, which builds one, and the
 * verifier, which checks any plan file against a model on its own.
 *
 * Both only read the model (const): several plans or verdicts may be made from one model on
 * different threads at once, as long as nothing modifies it meanwhile. gm_plan_build itself
 * runs its strategies on gm_plan_options.threads threads and returns when they are done.
 * Plans and verdicts are the caller's (gm_plan_free, gm_plan_verdict_free); they point into the
 * model (anchors' nodes), so free them before the model.
 */
#ifndef GRAPHMEM_PLAN_H
#define GRAPHMEM_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graphmem/graph.h"
#include "graphmem/passes.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the verifier (src/plan/verify.c) ------------------------------------------------------
 * Checks a plan file against a model by the execution model of docs/plan-format.md, on its
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
    GM_PLAN_P_BOUND,              /* lower_bound_bytes not backed by its witness (members unknown,
                                     ordered, of two batch labels, or too small in sum) */
    GM_PLAN_P_RACE,               /* a write of a symbol and another access of it, unordered */
    GM_PLAN_P_PASSES,             /* the passes the plan records, run again on the model, insert
                                     other nodes or edges than the plan lists */
    GM_PLAN_P_KIND_COUNT
} gm_plan_problem_kind;

/* "unknown-anchor", "bad-order", "overlap" ... (a static string; "?" out of range). */
const char *gm_plan_problem_kind_name(gm_plan_problem_kind k);

/* One problem the verifier found. */
typedef struct gm_plan_problem {
    gm_plan_problem_kind kind;
    char sym_a[128], sym_b[128]; /* the symbols named ("" when none) */
    char node[128];              /* the anchor or group node named ("" when none) */
    int32_t index;               /* its anchor index, -1 when none */
    bool out;                    /* output anchor (else input) */
    char message[384];           /* says which and why */
} gm_plan_problem;

/* At most this many problems are kept (the array grows as they come); the rest are counted in
 * `dropped`. Large, because the planner repairs every reported pair of a round at once. */
#define GM_PLAN_VERDICT_MAX_PROBLEMS 16384

/* What the verifier found, and the plan's totals as it read them. */
typedef struct gm_plan_verdict {
    gm_plan_problem *problems; /* owned: free with gm_plan_verdict_free */
    size_t n_problems, cap_problems;
    size_t dropped;
    size_t by_kind[GM_PLAN_P_KIND_COUNT]; /* every problem found, kept or dropped */
    size_t symbols;            /* symbols in the plan */
    int64_t bytes;             /* sum of symbol sizes outside the dynamic region */
    int64_t extent_bytes;      /* memory the plan needs: per region its symbols' largest end */
    int64_t region_bytes;      /* sum of the regions' sizes */
    size_t overlap_checks;     /* address-overlapping pairs whose order was tested */
    char plan_model[256];      /* the model the plan names ("model"), "" when it names none */
    size_t order_nodes;        /* entries of the plan's "order" */
    size_t order_unknown;      /* of them, naming no node of the model: most of them, or another
                                  plan_model, is a plan for another model, told before its problems */
} gm_plan_verdict;

/* True when the plan has no problem at all. */
static inline bool gm_plan_verdict_ok(const gm_plan_verdict *v) { return v->n_problems + v->dropped == 0; }
/* Frees what the verdict holds (not v itself); NULL is a no-op. */
void gm_plan_verdict_free(gm_plan_verdict *v);

/* Verifies the plan JSON `text` (len bytes; `source` names it in messages) against m, which
 * must be finalized. *v is filled (and must be freed) when GM_OK is returned. */
gm_status gm_plan_verify_json(const gm_model *m, const char *text, size_t len, const char *source,
                              gm_plan_verdict *v, gm_error *err);
/* The same for a file: GM_ERR_IO when it cannot be read. */
gm_status gm_plan_verify_file(const gm_model *m, const char *plan_path, gm_plan_verdict *v, gm_error *err);

/* Verifies graphmem's plan against the user's own model, as it was before the compiler passes
 * (src/plan/verify_passes.c). A plan graphmem wrote records the passes that ran and the GE
 * options they read ("passes", "options"); they are deterministic, so they run again on m (the
 * options set on it first) and must insert what the plan lists ("inserted": the same nodes, in
 * the same graphs, and the same control edges: otherwise a GM_PLAN_P_PASSES problem), and the
 * plan is then verified against the graph they leave. A plan that records no passes (another
 * tool's), or an m that already holds the plan's inserted nodes (the graph --dump-graph
 * wrote), is verified against m as it is. m is edited by the passes: it is the caller's to
 * free. *rerun (when not NULL) says whether the passes ran. Errors as gm_plan_verify_json, and
 * a pass's own errors. */
typedef struct gm_plan_rerun {
    bool ran;                 /* the passes ran again on m */
    size_t passes;            /* how many of them */
    size_t nodes, edges;      /* what they inserted */
} gm_plan_rerun;
gm_status gm_plan_verify_json_original(gm_model *m, const char *text, size_t len, const char *source,
                                       gm_plan_verdict *v, gm_plan_rerun *rerun, gm_error *err);
gm_status gm_plan_verify_file_original(gm_model *m, const char *plan_path, gm_plan_verdict *v, gm_plan_rerun *rerun,
                                       gm_error *err);
/* The "NAME=VALUE" dims a plan records (the --dim values its model was read with), as a
 * NULL-terminated array in one malloc'ed block (free() it), or *dims NULL when it records none.
 * GM_ERR_INPUT, naming source, when "dims" is not a list of strings. */
gm_status gm_plan_json_dims(const char *text, size_t len, const char *source, char ***dims, gm_error *err);


/* ---- the planner v0 (src/plan/planner.c, src/plan/plan_write.c) ----------------------------
 * Symbols from GE's symbol table, one region per (kind, memory type), each feature-map and
 * zero-copy region packed by the DSA packer on lifetimes in the model order. Streams that run
 * side by side are made safe by checking the plan with gm_plan_verify_json in-process and
 * merging the lifetimes of every pair it reports as overlapping and unordered. */

typedef struct gm_plan_options {
    int64_t align;              /* region alignment and size granule (bytes, > 0); default 512 */
    double search_budget_s;     /* the packing's wall clock, every strategy and region together:
                                   the search stops where it is when it is spent (a region
                                   reached after that keeps best fit's answer) and GE's
                                   strategies not yet started are not run; <= 0: none (default:
                                   the node limit alone bounds the search, so plans are
                                   deterministic) */
    uint64_t search_node_limit; /* DSA search nodes per region pack; 0: none. Default 200000 */
    uint32_t repair_rounds;     /* verify-and-merge rounds before a region that still has
                                   unordered overlaps falls back to no reuse; default 32 */
    const gm_pass_report *report; /* the passes' report, written into the plan ("inserted",
                                     "warnings"); NULL: none. Must outlive gm_plan_build */
    bool reproducible;          /* write strategy times as 0, so equal inputs give equal bytes */
    unsigned threads;           /* strategies run side by side on this many threads; 0: as many
                                   as cores. The plan is the same whatever the number */
    const char *strategy;       /* one strategy by name; NULL or "auto": all, smallest wins, GE's
                                   skipped above GM_PACK_COMPARE_ITEMS items when graphmem's own
                                   packers reach the lower bound; "all": all, always */
    bool ge_padded_sizes;       /* size a tensor without an explicit size as GE's op compile
                                   usually does: ceil(bytes / 32) x 32 + 32 */
    const char *no_reuse_ops;   /* comma list of op names or types whose outputs are never reused
                                   (GE's OP_NO_REUSE_MEM environment variable); NULL: none.
                                   Nodes with no_reuse_mem_flag=true are never reused either, and
                                   the model option ge.exec.disableReuseMemory=1 turns reuse off */
    /* Told each stage as it begins ("lifetimes", "packing", "verifying": string literals),
     * from the calling thread; NULL: nobody. For progress displays. */
    void (*on_stage)(const char *stage, void *ctx);
    void *stage_ctx;
    /* Told the plan's text as soon as it is written, before the verifier has judged it, and
     * told (NULL, 0) before that text is released (a repair writes another; a failure frees
     * it); NULL: nobody. The caller may read the text on another thread meanwhile (the CLI
     * stages its -o file while the verifier runs) but must have stopped when the (NULL, 0)
     * call returns. The last text shown is the returned plan's p->text, alive until
     * gm_plan_free; only that of a plan returned with unresolved == 0 is verified. */
    void (*on_text)(const char *text, size_t len, void *ctx);
    void *text_ctx;
} gm_plan_options;

/* Zero-copy symbols (user inputs and outputs) are aligned to 32 bytes, as GE aligns them. */
#define GM_PLAN_ZERO_COPY_ALIGN 32

/* Is name "auto", "all" or a strategy's name? The names, comma separated, into buf (cap bytes with
 * the NUL, truncated to fit). */
bool gm_plan_strategy_known(const char *name);
void gm_plan_strategy_names(char *buf, size_t cap);

/* Fills *o with the defaults above. */
void gm_plan_options_init(gm_plan_options *o);

/* The regions a plan places symbols in (docs/plan-format.md). */
typedef enum gm_plan_region_kind {
    GM_PLAN_R_FEATURE_MAP = 0, /* reused memory, one per memory type */
    GM_PLAN_R_ZERO_COPY,       /* user inputs and outputs */
    GM_PLAN_R_FIXED,           /* Const, Variable, root RefData, _alloc_fixed_addr outputs: never
                                  reused */
    GM_PLAN_R_DYNAMIC,         /* unknown size: no offset */
    GM_PLAN_R_COUNT
} gm_plan_region_kind;

/* "feature_map", "zero_copy", "fixed", "dynamic". */
const char *gm_plan_region_name(gm_plan_region_kind r);

/* A tensor anchor of a symbol: output (out) or input `index` of node. */
typedef struct gm_plan_anchor {
    const gm_node *node;
    uint32_t index;
    bool out;
    int64_t offset;            /* bytes from its symbol's start where this anchor addresses it
                                  (a no-padding continuous member); -1: at the start */
} gm_plan_anchor;

/* A symbol: one block of memory that one or more tensors (its anchors) share (GE's symbol). */
typedef struct gm_plan_symbol {
    char *id;                  /* GE's symbol name: "<node>_out_<i>" */
    gm_plan_region_kind region;
    gm_mem_type mem_type;
    int64_t offset;            /* bytes from the region's start; -1 in the dynamic region */
    int64_t size;              /* aligned bytes reserved; -1 in the dynamic region */
    int64_t first, last;       /* lifetime in the model order as packed: first access to the
                                  release (after which everything follows every access; see
                                  src/analysis/happens_before.h), lengthened by any repair */
    int64_t last_use;          /* last access: [first, last_use] is what the lower bound sees */
    gm_plan_anchor *anchors;
    size_t n_anchors;
    int64_t *streams;          /* distinct streams of its anchors' nodes, ascending */
    size_t n_streams;
    char *batch_label;         /* the producer's _batch_label; NULL for none */
    int64_t real_size;         /* bytes before alignment (GE's strategies range by it) */
    int64_t stream;            /* the producer's stream (the first writer's) */
    bool no_reuse;             /* never shares (no_reuse_mem_flag, OP_NO_REUSE_MEM): packed as
                                  live the whole run; first/last stay its own */
    bool continuous;           /* an anchor's node keeps those inputs or outputs continuous */
    bool atomic_clean;         /* an anchor's memory is zeroed first by an atomic-clean node */
} gm_plan_symbol;

/* At most this many strategies are run and reported. */
#define GM_PLAN_MAX_STRATEGIES 16

/* One strategy's result (gm_plan.strategies). */
typedef struct gm_plan_strategy {
    char name[48];
    int64_t bytes;             /* feature-map bytes this packer reached (all memory types) */
    double ms;
} gm_plan_strategy;

/* Where planning time goes (gm_plan.stage_ms). */
typedef enum gm_plan_stage {
    GM_PLAN_STAGE_LIFETIMES = 0, /* symbols, happens-before, lifetimes, the bound */
    GM_PLAN_STAGE_PACK,          /* the strategies, repairs included */
    GM_PLAN_STAGE_VERIFY,        /* the in-process independent check, every round */
    GM_PLAN_STAGE_COUNT
} gm_plan_stage;

/* A memory plan. Everything in it is owned by the plan and freed by gm_plan_free, except the
 * nodes its anchors name (the model's) and `report` (the caller's). Read-only for the caller. */
typedef struct gm_plan {
    int64_t align;
    double stage_ms[GM_PLAN_STAGE_COUNT];
    gm_plan_symbol *symbols;   /* in the symbol table's order (by name) */
    size_t n_symbols;
    int64_t region_bytes[GM_PLAN_R_COUNT][GM_MEM_COUNT]; /* extents; 0 for dynamic */
    bool region_used[GM_PLAN_R_COUNT][GM_MEM_COUNT];
    int64_t feature_map_bytes; /* sum of the feature-map extents */
    int64_t lower_bound_bytes; /* sum over memory types of the peak live feature-map total */
    int64_t no_reuse_bytes;    /* sum of the feature-map symbols' sizes */
    int64_t zero_copy_bytes, fixed_bytes;
    int64_t by_memory_type[GM_MEM_COUNT]; /* feature-map extent per memory type */
    size_t dynamic_symbols;
    gm_plan_strategy strategies[GM_PLAN_MAX_STRATEGIES];
    size_t n_strategies;       /* the strategies that ran */
    size_t n_strategies_skipped; /* GE's, not run on a large plan: they won on none of the models
                                    measured (BENCHMARKS.md); --strategy all runs them */
    size_t n_strategies_out_of_budget; /* GE's, not started: the search_budget_s was spent */
    const char *strategy;      /* the winner's name (points into strategies) */
    size_t repaired_pairs;     /* symbol pairs whose lifetimes were merged for streams */
    size_t repair_rounds;      /* verifier rounds run */
    bool fallback[GM_MEM_COUNT][GM_PLAN_R_COUNT]; /* region without reuse (given up, or disabled) */
    size_t unresolved;         /* problems the final self-check still reports (0 when sound) */
    size_t *witness;           /* lower_bound_witness: symbol indices, pairwise unordered */
    size_t n_witness;
    const gm_pass_report *report; /* borrowed from the options: inserted nodes and warnings */
    bool reproducible;         /* strategy times written as 0 */
    char *text;                /* the plan JSON exactly as the final self-check verified it */
    size_t text_len;
} gm_plan;

/* The alignment of region r's offsets and sizes: the plan's, except zero copy (32 bytes, as
 * GE aligns user inputs and outputs). */
int64_t gm_plan_region_align(const gm_plan *p, gm_plan_region_kind r);

/* Plans m (finalized and sorted; run the passes first). o NULL: defaults. *out is freed with
 * gm_plan_free. A plan whose self-check still fails (p->unresolved > 0: something v0 does not
 * model, such as continuous groups) is returned with GM_OK; the caller decides. */
gm_status gm_plan_build(const gm_model *m, const gm_plan_options *o, gm_plan **out, gm_error *err);
/* The same with the symbol table gm_passes_run_symbols handed over, which it takes (frees,
 * whatever happens); NULL, or a table that no longer describes m, is built again. The plan is
 * the same either way. */
struct gm_symbols;
gm_status gm_plan_build_symbols(const gm_model *m, const gm_plan_options *o, struct gm_symbols *symbols,
                                gm_plan **out, gm_error *err);
/* Writes p as docs/plan-format.md JSON (malloc'd, NUL-terminated; *len without the NUL). */
gm_status gm_plan_write_json(const gm_model *m, const gm_plan *p, char **text, size_t *len, gm_error *err);
/* Frees the plan and everything it owns; NULL is a no-op. */
void gm_plan_free(gm_plan *p);

#ifdef __cplusplus
}
#endif
#endif
