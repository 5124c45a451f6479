/*
 * pass_util.h — what every compiler pass shares: the pass context, inserting a protected copy
 * node with GE's desc rules and recording it in the report, GE's [MemConflict] log lines, and
 * unique names. Each pass is one file named after GE's pass; its entry point is declared here
 * and registered in pipeline.c.
 */
#ifndef GM_PASS_UTIL_H
#define GM_PASS_UTIL_H

#include "graphmem/passes.h"
#include "ir/ir.h"

typedef struct gm_symbols gm_symbols;

typedef struct gm_pass_ctx {
    gm_model *m;
    gm_pass_report *report;
    gm_pass_id pass;
    gm_error *err;
    /* The root's symbol table, current for the model, that a pass leaves for the ones after it
     * and finally the planner: a million-node build saved each time. layout_conflict leaves the
     * one it built when it inserted nothing after; inplace takes it and leaves its own last one.
     * The pipeline keeps it past a pass only while gm_symbols_current and only if the pass is
     * known to write no attribute the table reads (pipeline.c); else it frees it. NULL: no
     * hand-off (a pass run alone). */
    gm_symbols **handoff;
} gm_pass_ctx;

/* How an inserted copy node's descs and attributes are made (GE differs per pass). */
typedef struct gm_copy_opts {
    bool keep_desc_attrs;      /* false: the desc attrs are dropped (GE's TensorDesc round trip) */
    bool cannot_be_deleted;    /* _cannot_be_deleted = true */
    int no_const_fold;         /* -1: not set; 0/1: no_need_constant_folding = false/true */
    bool copy_batch_label;     /* _batch_label copied from the producer */
} gm_copy_opts;

/* The options most passes use: protected, descs cleaned, batch label kept. */
extern const gm_copy_opts gm_copy_default;

/* Inserts a copy node before dst:in (producer -> new -> dst:in), names it `name` (made unique
 * with a _<k> suffix if taken), applies opts, records it in the report with `reason`, and logs
 * "[MemConflict][INSERT][NODE] <name> before <dst>_in_<i>". */
gm_node *gm_pass_insert_before(gm_pass_ctx *c, gm_node *dst, size_t in, const char *name, const char *type,
                               const gm_copy_opts *opts, const char *reason);
/* The same after src:out (feeding all its consumers). */
gm_node *gm_pass_insert_after(gm_pass_ctx *c, gm_node *src, size_t out, const char *name, const char *type,
                              const gm_copy_opts *opts, const char *reason);
/* One k-input/k-output copy node before k anchors of one graph. */
gm_node *gm_pass_insert_before_many(gm_pass_ctx *c, gm_node *const *dsts, const size_t *in, size_t k,
                                    const char *name, const char *type, const gm_copy_opts *opts,
                                    const char *reason);

/* Records an inserted node in the report: `anchor` is the node it was put before (an input
 * `index`) or after (an output), index -1 when it serves a node as a whole. */
gm_status gm_pass_record(gm_pass_ctx *c, const gm_node *n, const gm_node *anchor, bool before, int32_t index,
                         const char *reason);

/* Records a control edge from -> to that the pass added, with why. */
gm_status gm_pass_record_edge(gm_pass_ctx *c, const gm_node *from, const gm_node *to, const char *reason);

/* Records a lint warning in the report (and logs it at warn level). */
gm_status gm_pass_warn(gm_pass_ctx *c, const char *code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* A node name not yet used in the model: base, else base_1, base_2 ... into buf. */
const char *gm_pass_unique_name(const gm_model *m, const char *base, char *buf, size_t cap);

/* GE's anchor key "<node>_in_<i>" / "<node>_out_<i>" into buf. */
const char *gm_anchor_key(const gm_node *n, bool out, uint32_t index, char *buf, size_t cap);

#endif
