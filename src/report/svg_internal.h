/*
 * svg_internal.h — the memory timeline's view of a plan: the plan JSON read into what the
 * picture needs (svg_plan_read.c), then drawn (svg_timeline.c, svg_lanes.c).
 */
#ifndef GM_SVG_INTERNAL_H
#define GM_SVG_INTERNAL_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "graphmem/report.h"
#include "report/report_text.h"
#include "util/strmap.h"

typedef struct tl_region {
    const char *name, *mem;   /* "feature_map", "hbm" */
    int64_t size;             /* as the plan lists it */
    int64_t scale;            /* the address axis spans [0, scale): size, or more if a symbol ends past it */
    int64_t bound;            /* the lower-bound line (feature maps), -1 none */
    bool feature_map;
    size_t n_syms;
    double y, h;              /* the plot area, set by the layout */
} tl_region;

typedef struct tl_sym {
    const char *id;
    size_t region;
    int64_t off, size, first, last;
    const cJSON *anchors, *streams;
    const cJSON *inserted;    /* the plan's "inserted" entry of its producer, or NULL */
} tl_sym;

typedef struct tl_group {     /* a continuous group: the box around its members */
    const char *node;
    bool out;                 /* continuous outputs (else inputs) */
    size_t members;
    long region;              /* -1 none yet, -2 members in several regions */
    int64_t lo, hi, first, last;
} tl_group;

typedef struct tl_plan {
    cJSON *root;
    const char *model, *strategy;
    const char **order;       /* node names by position (borrowed from root) */
    size_t n_order;
    int64_t npos;             /* the order's positions (at least 1) */
    /* The columns across (svg_columns.c): position i is drawn over columns [col[i], col[i + 1]),
     * one column for a node that computes, none for a folded Const, Data or Variable; column c
     * is position col_pos[c] (col_pos[ncols] = npos). */
    int64_t *col, *col_pos, ncols;
    size_t n_folded;
    int64_t lower_bound, feature_map, zero_copy, fixed;
    tl_region *regions;
    size_t n_regions;
    tl_sym *syms;
    size_t n_syms, n_dynamic;
    tl_group *groups;
    size_t n_groups;
    gm_strmap inserted;       /* node name -> its "inserted" entry */
} tl_plan;

/* Reads the plan JSON; m (may be NULL) gives the continuous groups. GM_ERR_INPUT names source. */
gm_status tl_plan_read(tl_plan *p, const gm_model *m, const char *text, size_t len, const char *source,
                       gm_error *err);
void tl_plan_free(tl_plan *p);

/* Gives the positions their columns: m NULL, every position one. GM_ERR_NOMEM. */
gm_status tl_columns_build(tl_plan *p, const gm_model *m);
static inline bool tl_folded(const tl_plan *p, int64_t pos) { return p->col[pos + 1] == p->col[pos]; }

/* The geometry shared by the drawing parts. */
typedef struct tl_layout {
    double left, width;       /* plot area across */
    double px_per_pos;        /* per column */
} tl_layout;

/* The left edge of column `col` (a column, not a position: p->col maps one to the other). */
static inline double tl_x(const tl_layout *l, double col) { return l->left + col * l->px_per_pos; }
static inline double tl_addr_y(const tl_region *g, double a) { return g->y + g->h - a * g->h / (double)g->scale; }

typedef struct tl_box {
    double x0, x1, y0, y1; /* pixels; y0 the top */
} tl_box;

/* A symbol's box: across its lifetime's columns, up its addresses. */
static inline tl_box tl_sym_box(const tl_plan *p, const tl_layout *l, const tl_sym *y)
{
    const tl_region *g = &p->regions[y->region];
    tl_box b = {tl_x(l, (double)p->col[y->first]), tl_x(l, (double)p->col[y->last + 1]),
                tl_addr_y(g, (double)(y->off + y->size)), tl_addr_y(g, (double)y->off)};
    return b;
}

/* Region r's symbols, largest first: by bytes, or by their box's area, then area (gm_malloc'd;
 * *n of them). NULL: out of memory. */
size_t *tl_syms_ranked(const tl_plan *p, const tl_layout *l, size_t r, bool by_bytes, size_t *n);
/* Names and sizes of the largest boxes of region r, written in the boxes that have room for
 * them (svg_labels.c), at most `max`; returns how many. */
size_t tl_draw_labels(gm_rtext *t, const tl_plan *p, const tl_layout *l, size_t r, size_t max);

/* Stream lanes beneath the panels, from y; returns the height used. */
double tl_draw_lanes(gm_rtext *t, const tl_plan *p, const gm_model *m, const tl_layout *l, double y);
/* Position ticks (labels below y). */
void tl_draw_position_axis(gm_rtext *t, const tl_plan *p, const tl_layout *l, double y);

#endif
