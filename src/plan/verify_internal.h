/*
 * verify_internal.h — what verify.c (anchors, sizes, regions, groups), verify_read.c (the plan
 * text into compact structs), verify_order.c (happens-before, overlap sweep) and
 * verify_bound.c share. Not part of the library's API.
 */
#ifndef GM_VERIFY_INTERNAL_H
#define GM_VERIFY_INTERNAL_H

#include <cjson/cJSON.h>

#include "graphmem/plan.h"
#include "io/json_split.h"

enum { GM_VFY_R_FM, GM_VFY_R_ZC, GM_VFY_R_FIXED, GM_VFY_R_DYN };

typedef struct gm_vfy_region {
    const char *name; /* a copy in the verifier's string store */
    gm_mem_type mt;
    int64_t size, align;
    int kind;         /* GM_VFY_R_*, -1 for an unknown name */
    bool listed;      /* in the plan's "regions" (else defaults: align 512, no bound) */
    int64_t extent;   /* the largest offset + size of its symbols */
} gm_vfy_region;

typedef struct gm_vfy_sym {
    const char *id, *label; /* copies in the verifier's string store (label "" when none) */
    uint32_t id_hash;
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
    const char *name; /* the node's name, or a copy of the unknown name */
    gm_node *node;    /* NULL when the name or index is unknown */
    uint32_t index;
    bool out, has_offset;
    int64_t offset;
    int32_t sym;
} gm_vfy_anchor;

/* One of the plan's big arrays: `item` is the value in the parsed tree (NULL when absent);
 * when the text was split, the tree holds it emptied and `split` says where its elements lie
 * in the text, parsed one at a time by gm_vfy_each. */
typedef struct gm_vfy_array {
    const cJSON *item;
    const gm_json_array_split *split;
} gm_vfy_array;

/* Blocks of copied strings: what the verifier keeps of the plan's text (ids, labels, names). */
typedef struct gm_vfy_strings {
    char **blocks;
    size_t n_blocks, cap_blocks;
    size_t used, room; /* in the last block */
} gm_vfy_strings;

typedef struct gm_vfy {
    const gm_model *m;
    const char *src;
    gm_plan_verdict *v;
    size_t n_nodes;
    /* the plan text (verify_read.c) */
    const char *text;
    size_t len;
    cJSON *root;                 /* the whole text's tree, or the skeleton's when split */
    gm_json_split split;
    bool is_split;
    bool scanned;                /* split already holds the scan's findings, scan_result its answer */
    gm_json_split_result scan_result;
    gm_vfy_array symbols, order, witness;
    const cJSON *summary;
    char *scratch;               /* a split string element, NUL-terminated */
    size_t cap_scratch;
    gm_vfy_strings strs;
    int32_t *id_tab;             /* open addressing: symbol ids -> symbol, -1 empty */
    size_t id_cap;
    gm_vfy_sym *syms;
    size_t n_syms, cap_syms;
    size_t n_syms_planned;       /* the symbols array's count, when read in parts */
    gm_vfy_anchor *anc;
    size_t n_anc, cap_anc;
    bool anc_fixed;              /* a part's stretch of a shared array (verify_read.c): no growth */
    gm_vfy_region *regs;
    size_t n_regs, cap_regs;
    bool regs_fixed;             /* a part of the symbols read side by side: no region added */
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

/* Every write of a symbol ordered with its other accesses (verify_access.c), after the events
 * (gm_vfy_order_begin), beside the order's other checks (it reads only the events and the
 * anchors' symbols); races are GM_PLAN_P_RACE problems. GM_ERR_NOMEM when out of memory. */
gm_status gm_vfy_access_check(gm_vfy *c);

/* A scanner for the plan text's big arrays, the ones gm_vfy_read splits (verify_read.c). */
bool gm_vfy_scanner_init(gm_json_split_scanner *sc);
/* gm_plan_verify_json on a text that such a scanner has gone through: r is its answer and
 * *split (taken over and zeroed, whatever the outcome) what it found (verify.c). */
gm_status gm_vfy_verify_scanned(const gm_model *m, const char *text, size_t len, const char *source,
                                gm_json_split_result r, gm_json_split *split, gm_plan_verdict *v, gm_error *err);

/* Reads the plan text (whole, or split when `split` and the text allows) into c: regions and
 * symbols now, the order and the witness later through gm_vfy_each. */
gm_status gm_vfy_read(gm_vfy *c, const char *text, size_t len, bool split, gm_error *err);
void gm_vfy_read_free(gm_vfy *c);
/* Calls fn on each element of a, in order; an element of a split array is parsed for the call
 * and freed after it. A bad element is a GM_ERR_INPUT error. */
typedef gm_status (*gm_vfy_elem_fn)(gm_vfy *c, const cJSON *e, size_t i, void *ctx);
gm_status gm_vfy_each(gm_vfy *c, const gm_vfy_array *a, gm_vfy_elem_fn fn, void *ctx, gm_error *err);
size_t gm_vfy_count(const gm_vfy_array *a);
/* Helpers of the readers (verify_read.c, verify_fast.c). */
const char *gm_vfy_keep(gm_vfy *c, const char *s, size_t n); /* a lasting copy, NULL: no memory */
char *gm_vfy_scratch(gm_vfy *c, const char *s, size_t n);    /* a passing copy, NUL-terminated */
gm_vfy_anchor *gm_vfy_new_anchor(gm_vfy *c);                  /* room for c->anc[c->n_anc] */
int32_t gm_vfy_find_region(gm_vfy *c, const char *name, gm_mem_type mt); /* -2: no memory; -3: new, regs_fixed */
/* Symbol i read straight from text[b, e) when it is written as the planner writes it: 1 done,
 * 0 not that simple (nothing kept: read it with cJSON), -1 out of memory. */
int gm_vfy_fast_symbol(gm_vfy *c, size_t b, size_t e, size_t i);
/* Asks the memory for the model's name-map slots of the anchor nodes named in text[b, e) (a
 * symbol to be read soon): a look only, with no effect on what is read. */
void gm_vfy_fast_prefetch(const gm_vfy *c, size_t b, size_t e);

/* The symbol with this id (the first, if two share it), -1 for none; after gm_vfy_index_ids. */
int32_t gm_vfy_find_sym(const gm_vfy *c, const char *id);
/* Indexes the symbol ids; reports duplicates. */
gm_status gm_vfy_index_ids(gm_vfy *c);

gm_status gm_vfy_problem(gm_vfy *c, gm_plan_problem_kind kind, int32_t a, int32_t b, const gm_node *n,
                         int32_t index, bool out, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 8, 9)))
#endif
    ;
int64_t gm_vfy_anchor_bytes(const gm_node *n, bool out, uint32_t i);
/* The order, happens-before and overlap checks (the plan's "order": c->order). The first steps,
 * the planning positions and the events with their clocks, read only the model and the order;
 * gm_vfy_order_begin runs them alone (before the anchors are resolved, beside them on a big
 * plan), gm_vfy_order_carry moves what they made into a newer copy of the verifier, and
 * gm_vfy_order_check runs them when nobody has, then the accesses and the overlaps (the race
 * check, gm_vfy_access_check, is the caller's). */
gm_status gm_vfy_order_begin(gm_vfy *c, gm_error *err);
void gm_vfy_order_carry(gm_vfy *to, const gm_vfy *from);
gm_status gm_vfy_order_check(gm_vfy *c, gm_error *err);
void gm_vfy_order_free(gm_vfy *c);
/* Does every access of a strictly happen before every access of b? (after gm_vfy_order_check) */
bool gm_vfy_happens_before(gm_vfy *c, const gm_vfy_sym *a, const gm_vfy_sym *b);
/* A sort key held by value, so that comparisons read no symbol (cache misses dominated the
 * sorts when they compared through c->syms). */
typedef struct gm_vfy_key {
    int64_t key;
    int32_t a, b;
} gm_vfy_key;

typedef enum gm_vfy_order {
    GM_VFY_BY_A_KEY_B, /* by (a, key, b) */
    /* Bounds: key the address, a 0 for an end and 1 for a start, b the symbol's rank in (first
     * access, id) order. By address, ends before starts (half-open intervals); at one address
     * starts by rank and ends the other way round (one symbol's interval nested in the other's
     * when both meet there). */
    GM_VFY_BY_ADDR,
} gm_vfy_order;

/* verify_sort.c: v in that order (radix passes on long arrays, qsort on short ones; the same
 * order either way: gm_vfy_sort_with chooses, for the tests). */
void gm_vfy_sort(gm_vfy_key *v, size_t n, gm_vfy_order order);
void gm_vfy_sort_with(gm_vfy_key *v, size_t n, gm_vfy_order order, bool use_radix);

/* The lower bound against its witness (verify_bound.c), after gm_vfy_order_check. */
gm_status gm_vfy_check_bound(gm_vfy *c, gm_error *err);

#endif
