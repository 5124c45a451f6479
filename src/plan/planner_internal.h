/*
 * planner_internal.h — what the planner's files (src/plan/planner.c, plan_bound.c,
 * plan_write.c) share and nobody else needs.
 */
#ifndef GM_PLANNER_INTERNAL_H
#define GM_PLANNER_INTERNAL_H

#include "graphmem/dsa.h"
#include "graphmem/plan.h"
#include "io/json_emit.h"

/* gm_plan_write_json with a reader following the text on another thread (NULL: none): it is
 * shown the text as it is written and let go, done, at the end (plan_write.c). */
gm_status gm_plan_write_json_read(const gm_model *m, const gm_plan *p, char **text, size_t *len,
                                  gm_jw_reader *reader, gm_error *err);
/* Writes the plan's text into p->text and verifies it; on a big plan with a second core the
 * verifier's structural scan follows the writing on it (verify_follow.c). *v is filled on GM_OK. */
gm_status gm_plan_write_verify(const gm_model *m, gm_plan *p, const gm_plan_options *o, gm_plan_verdict *v,
                               gm_error *err);

/* Does n keep its outputs (out) or inputs continuous, as a group the packer lays end to end
 * (continuous_output / continuous_input set true; plan_items.c)? */
bool gm_plan_continuous_node(const gm_node *n, bool out);

/* Sets p->lower_bound_bytes and p->witness from the symbols' access spans [first, last_use],
 * batch labels overlaid (plan_bound.c). GM_ERR_NOMEM on allocation failure. */
gm_status gm_plan_compute_bound(gm_plan *p);
/* Batch labels numbered 1.. in sorted order (so numbers do not depend on symbol order), 0 for
 * none, one per symbol (gm_free it); *n the number of labels. NULL when out of memory. */
uint32_t *gm_plan_number_labels(const gm_plan *p, size_t *n);

/* Makes the members of every no-padding continuous group views of one symbol (plan_nopad.c):
 * joined symbols are removed, their anchors carry offsets. *remap (gm_free it) maps each old
 * symbol index to its new one. */
gm_status gm_plan_merge_nopad(const gm_model *m, gm_plan *p, int32_t **remap);
/* Has m a no-padding continuous group (one walk of the nodes)? Without one the merge leaves
 * every symbol as it is. */
bool gm_plan_nopad_any(const gm_model *m);
/* The remap of a merge that joins nothing: every symbol keeps its index. */
gm_status gm_plan_identity_remap(const gm_plan *p, int32_t **remap);
/* After gm_plan_merge_nopad: the witness names the symbols that now hold its tensors, and the
 * bound claims no more than they hold (plan_bound.c). */
gm_status gm_plan_remap_witness(gm_plan *p, const int32_t *remap);

/* ---- strategies side by side (plan_pack.c) ---- */

typedef enum gm_pack_strategy {
    GM_PACK_BEST_FIT = 0, /* size-descending best fit */
    GM_PACK_DSA_SEARCH,   /* best fit over several orders + branch and bound (dsa.h) */
    GM_PACK_GE_FIRST,     /* GE's six strategies (ge_strategy.h), in gm_ge_strategy's order */
    GM_PACK_COUNT = GM_PACK_GE_FIRST + 6
} gm_pack_strategy;

/* What GE's strategies know of an item besides its lifetime and size. */
typedef struct gm_pack_meta {
    int64_t real_size; /* bytes before alignment */
    int64_t stream;    /* the producer's */
    uint32_t nodes;    /* anchors served */
    bool no_reuse;     /* never shares */
    bool continuous;   /* a continuous group */
} gm_pack_meta;

const char *gm_pack_strategy_name(gm_pack_strategy s);
bool gm_pack_strategy_from_name(const char *name, gm_pack_strategy *out);

/* Items packed together: one region, memory type and batch label. */
typedef struct gm_pack_unit {
    gm_plan_region_kind region;
    gm_mem_type mem_type;
    uint32_t label;  /* 0: no batch label; a labelled unit is packed around its region's
                        unlabelled unit (the one just before it), and labels overlay each other */
    bool no_reuse;   /* every item at its own address (reuse disabled or given up) */
    size_t first, n; /* the unit's items: job->items[first .. first + n) */
} gm_pack_unit;

typedef struct gm_pack_job {
    const gm_dsa_buffer *items; /* read-only: strategies pack copies */
    const gm_pack_meta *meta;   /* per item */
    size_t n_items;
    const gm_pack_unit *units;
    size_t n_units;
    double search_budget_s;
    double deadline_ms;         /* when the budget is spent (now_ms clock); 0: no budget */
    uint64_t search_node_limit;
    int only;                   /* run this strategy alone; -1: all */
    int64_t lower_bound;        /* the feature map's lower bound (p->lower_bound_bytes); -1: none */
    bool compare_all;           /* run GE's strategies even where they cannot win (--strategy all) */
    size_t compare_items;       /* up to this many items GE's strategies always run, for
                                   comparison (GM_PACK_COMPARE_ITEMS) */
    bool memory_priority;       /* ge.exec.memoryOptimizationPolicy=MemoryPriority */
    const struct gm_pack_result *best_fit; /* best fit's result, once it ran: the search starts
                                              from it (its first order is best fit's) */
} gm_pack_job;

typedef struct gm_pack_result {
    int64_t *offsets;          /* per item, from the region's start */
    int64_t *heights;          /* per unit */
    int64_t feature_map_bytes; /* with batch units overlaid */
    double ms;
    gm_status st;
    gm_error err;
    bool skipped;              /* not run: it could not have won (see gm_pack_run) */
    bool out_of_budget;        /* not run: the budget was spent before it could start */
} gm_pack_result;

/* Plans of up to this many items run GE's strategies beside graphmem's for comparison even
 * when graphmem's own packers already reached the lower bound; larger ones skip them then. */
#define GM_PACK_COMPARE_ITEMS 20000

gm_status gm_pack_results_alloc(const gm_pack_job *job, gm_pack_result res[GM_PACK_COUNT]);
void gm_pack_results_free(gm_pack_result res[GM_PACK_COUNT]);
/* Runs every strategy on `threads` threads (0: as many as cores) and returns the winner: the
 * smallest feature map, ties to the lower strategy number — the same whatever the threads.
 * graphmem's own packers run first; GE's (numbered after them) run beside them only when the
 * plan is small (job->compare_items) or job->compare_all: on large plans they are skipped, as
 * they won on none of the models measured (BENCHMARKS.md, bench/run_ge_wins.sh). -1 when a
 * strategy failed (*err says why). */
int gm_pack_run(const gm_pack_job *job, unsigned threads, gm_pack_result res[GM_PACK_COUNT], gm_error *err);

/* ---- items (plan_items.c) ---- */

/* A continuous group: its members' symbols, in anchor order, lie end to end. */
typedef struct gm_plan_group {
    const gm_node *node;
    bool out;
    size_t n;
    int32_t *members; /* plan symbol per anchor, -1 unknown */
    bool usable;      /* every member known, distinct, in one region and label; its links agree */
} gm_plan_group;

typedef struct gm_plan_items {
    gm_plan_group *groups;
    size_t n_groups;
    int32_t *sym_group;   /* symbol -> usable group, -1 none */
    uint32_t *sym_label;  /* symbol -> batch label number, 0 none */
    size_t n_labels;
    gm_dsa_buffer *items; /* the job's items */
    gm_pack_meta *meta;   /* parallel to items */
    int32_t *idx;         /* item -> symbol, or -(group + 1) */
    size_t n_items;
    gm_pack_unit *units;
    size_t n_units;
    int64_t horizon;      /* the last position any symbol lives to */
} gm_plan_items;

/* Replaces it->groups (one per continuous node) by chains: groups overlapping head to tail
 * joined, those that cannot be honoured together marked unusable (plan_chains.c). */
gm_status gm_plan_chain_groups(gm_plan_items *it, const gm_plan *p);

/* Appends one group per atomic-clean node: the feature-map symbols it zeroes (plan_atomic.c). */
gm_status gm_plan_atomic_groups(gm_plan_items *it, const gm_plan *p);
/* Writes "atomic_clean": per clean node the merged address ranges it zeroes (plan_atomic.c). */
struct gm_jw;
gm_status gm_plan_write_atomic(struct gm_jw *w, const gm_plan *p);

/* Labels and continuous groups of p's symbols. */
gm_status gm_plan_items_init(gm_plan_items *it, const gm_model *m, const gm_plan *p);
/* Items and units from the symbols' current lifetimes and p->fallback (zero-size symbols get
 * offset 0 here). */
void gm_plan_items_build(gm_plan_items *it, gm_plan *p);
/* Offsets from a packing result: groups deal theirs out to their members. */
void gm_plan_items_apply(const gm_plan_items *it, gm_plan *p, const gm_pack_result *res);
void gm_plan_items_free(gm_plan_items *it);

#endif
