/*
 * verify_internal.h — what verify.c (anchors, sizes, regions, groups) and verify_order.c
 * (happens-before, overlap sweep) share. Not part of the library's API.
 */
#ifndef GM_VERIFY_INTERNAL_H
#define GM_VERIFY_INTERNAL_H

#include <cjson/cJSON.h>

#include "graphmem/plan.h"

enum { GM_VFY_R_FM, GM_VFY_R_ZC, GM_VFY_R_FIXED, GM_VFY_R_DYN };

typedef struct gm_vfy_region {
    const char *name; /* points into the parsed plan */
    gm_mem_type mt;
    int64_t size, align;
    int kind;         /* GM_VFY_R_*, -1 for an unknown name */
    bool listed;      /* in the plan's "regions" (else defaults: align 512, no bound) */
    int64_t extent;   /* the largest offset + size of its symbols */
} gm_vfy_region;

typedef struct gm_vfy_sym {
    const char *id, *label;
    int32_t region;
    int64_t offset, size;
    bool has_offset;
    uint32_t first_anchor, n_anchors;
    /* accesses (verify_order.c): events [acc_first, acc_first + n_acc) of the access array */
    uint32_t acc_first, n_acc;
    bool at_start, at_end;     /* written before everything / read after everything */
    int32_t min_ev, max_ev;    /* first and last real access event */
} gm_vfy_sym;

typedef struct gm_vfy_anchor {
    const char *name;
    gm_node *node;    /* NULL when the name or index is unknown */
    uint32_t index;
    bool out, has_offset;
    int64_t offset;
    int32_t sym;
} gm_vfy_anchor;

typedef struct gm_vfy {
    const gm_model *m;
    const char *src;
    gm_plan_verdict *v;
    size_t n_nodes;
    gm_vfy_sym *syms;
    size_t n_syms;
    gm_vfy_anchor *anc;
    size_t n_anc;
    gm_vfy_region *regs;
    size_t n_regs, cap_regs;
    size_t *out_base, *in_base;  /* node topo id -> first slot */
    int32_t *out_sym, *in_sym;   /* slot -> symbol, -1 none */
    int32_t *out_anc, *in_anc;   /* slot -> plan anchor, -1 none */
    int32_t *uf;                 /* plan anchor -> union-find parent (one tensor) */
    /* verify_order.c */
    int64_t *pos;                /* node topo id -> planning position */
    int32_t *ev_enter, *ev_exit; /* node topo id -> events */
    const gm_node **ev_node;     /* event -> its node */
    int32_t *ev_stream;          /* event -> dense stream */
    int32_t *ev_sidx;            /* event -> index among its stream's events */
    size_t n_ev, n_streams;
    int32_t *vc;                 /* event x stream: last event of that stream before it */
    int32_t *acc;                /* access events of all symbols */
    size_t n_acc, cap_acc;
    int32_t *last, *touched;     /* per-stream scratch of the happens-before test */
    uint64_t *seen;              /* symbol pairs already reported (open addressing) */
    int32_t *loop_up;            /* node topo id -> nearest enclosing While, -1 none */
    size_t seen_n, seen_cap;
} gm_vfy;

gm_status gm_vfy_problem(gm_vfy *c, gm_plan_problem_kind kind, int32_t a, int32_t b, const gm_node *n,
                         int32_t index, bool out, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 8, 9)))
#endif
    ;
int64_t gm_vfy_anchor_bytes(const gm_node *n, bool out, uint32_t i);
/* The order, happens-before and overlap checks; `order` is the plan's "order" or NULL. */
gm_status gm_vfy_order_check(gm_vfy *c, const cJSON *order, gm_error *err);
void gm_vfy_order_free(gm_vfy *c);
/* Does every access of a strictly happen before every access of b? (after gm_vfy_order_check) */
bool gm_vfy_happens_before(gm_vfy *c, const gm_vfy_sym *a, const gm_vfy_sym *b);
/* The lower bound against its witness (verify_bound.c), after gm_vfy_order_check. */
gm_status gm_vfy_check_bound(gm_vfy *c, const cJSON *summary);

#endif
