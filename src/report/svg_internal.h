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
    int64_t npos;             /* positions drawn: the order, or past the last lifetime */
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

/* The geometry shared by the drawing parts. */
typedef struct tl_layout {
    double left, width;       /* plot area across */
    double px_per_pos;
} tl_layout;

static inline double tl_x(const tl_layout *l, double pos) { return l->left + pos * l->px_per_pos; }

/* Stream lanes beneath the panels, from y; returns the height used. */
double tl_draw_lanes(gm_rtext *t, const tl_plan *p, const gm_model *m, const tl_layout *l, double y);
/* Position ticks (labels below y). */
void tl_draw_position_axis(gm_rtext *t, const tl_plan *p, const tl_layout *l, double y);

#endif
