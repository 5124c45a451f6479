/*
 * svg_lanes.c — beneath the memory panels: one lane per stream saying which node runs at each
 * column (a pass's inserted nodes in red; folded Const/Data positions have none), and the
 * position axis. With more columns than half the plot's pixels a lane is binned per pixel
 * column, so its size is bounded by the width.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/svg_internal.h"
#include "util/alloc.h"

#define LANE_H 14.0
#define LANE_GAP 3.0
#define MAX_LANES 32 /* more streams than this share the last lane */

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The distinct streams of the order's drawn nodes, ascending, at most MAX_LANES. */
static size_t lane_streams(const tl_plan *p, const gm_model *m, int64_t *out)
{
    size_t n = 0;
    for (size_t i = 0; i < p->n_order; i++) {
        if (tl_folded(p, (int64_t)i)) continue;
        const gm_node *node = gm_model_find_node(m, p->order[i]);
        int64_t s = node ? gm_node_stream(node) : 0;
        bool seen = false;
        for (size_t k = 0; k < n && !seen; k++) seen = out[k] == s;
        if (!seen && n < MAX_LANES) out[n++] = s;
    }
    qsort(out, n, sizeof *out, cmp_i64);
    return n;
}

static size_t lane_of(const int64_t *streams, size_t n, int64_t s)
{
    for (size_t k = 0; k < n; k++)
        if (streams[k] == s) return k;
    return n - 1;
}

/* One rect per position, with a title naming the node. */
static void lane_nodes(gm_rtext *t, const tl_plan *p, const gm_model *m, const tl_layout *l, const int64_t *streams,
                       size_t n, double y)
{
    for (size_t i = 0; i < p->n_order; i++) {
        if (tl_folded(p, (int64_t)i)) continue;
        const gm_node *node = gm_model_find_node(m, p->order[i]);
        size_t k = lane_of(streams, n, node ? gm_node_stream(node) : 0);
        bool ins = gm_strmap_get(&p->inserted, p->order[i]) != NULL;
        double w = l->px_per_pos > 1.5 ? l->px_per_pos - 0.5 : l->px_per_pos;
        gm_rt_printf(t, "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" height=\"%.0f\"><title>%zu: ",
                     ins ? "ni" : "n", tl_x(l, (double)p->col[i]), y + (double)k * (LANE_H + LANE_GAP), w, LANE_H, i);
        gm_rt_xml(t, p->order[i]);
        if (node) {
            gm_rt_puts(t, " (");
            gm_rt_xml(t, gm_node_type(node));
            gm_rt_printf(t, "), stream %lld", (long long)gm_node_stream(node));
        }
        if (ins) gm_rt_puts(t, ", inserted by a pass");
        gm_rt_puts(t, "</title></rect>\n");
    }
}

/* Per lane and pixel column: 1 a node runs there, 2 an inserted one; runs of equal columns
 * become one rect. */
static gm_status lane_binned(gm_rtext *t, const tl_plan *p, const gm_model *m, const tl_layout *l,
                             const int64_t *streams, size_t n, double y)
{
    size_t cols = (size_t)ceil(l->width);
    unsigned char *cell = gm_calloc(cols * n, 1);
    if (!cell) return GM_ERR_NOMEM;
    for (size_t i = 0; i < p->n_order; i++) {
        if (tl_folded(p, (int64_t)i)) continue;
        const gm_node *node = gm_model_find_node(m, p->order[i]);
        size_t k = lane_of(streams, n, node ? gm_node_stream(node) : 0);
        size_t c = (size_t)((double)p->col[i] * l->px_per_pos);
        if (c >= cols) c = cols - 1;
        unsigned char v = gm_strmap_get(&p->inserted, p->order[i]) ? 2 : 1;
        if (cell[k * cols + c] < v) cell[k * cols + c] = v;
    }
    for (size_t k = 0; k < n; k++) {
        for (size_t c = 0; c < cols;) {
            unsigned char v = cell[k * cols + c];
            size_t e = c + 1;
            while (e < cols && cell[k * cols + e] == v) e++;
            if (v)
                gm_rt_printf(t, "<rect class=\"%s\" x=\"%.0f\" y=\"%.1f\" width=\"%zu\" height=\"%.0f\"/>\n",
                             v == 2 ? "ni" : "n", l->left + (double)c, y + (double)k * (LANE_H + LANE_GAP), e - c, LANE_H);
            c = e;
        }
    }
    gm_free(cell);
    return GM_OK;
}

double tl_draw_lanes(gm_rtext *t, const tl_plan *p, const gm_model *m, const tl_layout *l, double y)
{
    if (!m || p->n_order == 0) return 0;
    int64_t streams[MAX_LANES];
    size_t n = lane_streams(p, m, streams);
    gm_rt_printf(t, "<text class=\"h\" x=\"%.0f\" y=\"%.1f\">streams: the node at each position%s</text>\n", l->left,
                 y + 12, l->px_per_pos < 2 ? " (binned per pixel column)" : "");
    y += 20;
    for (size_t k = 0; k < n; k++)
        gm_rt_printf(t, "<text class=\"ax\" x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">stream %lld%s</text>\n", l->left - 6,
                     y + (double)k * (LANE_H + LANE_GAP) + LANE_H - 3, (long long)streams[k],
                     k + 1 == MAX_LANES ? "+" : "");
    gm_rt_puts(t, "<g class=\"lanes\">\n");
    if (l->px_per_pos >= 2) lane_nodes(t, p, m, l, streams, n, y);
    else if (lane_binned(t, p, m, l, streams, n, y) != GM_OK) t->failed = true;
    gm_rt_puts(t, "</g>\n");
    return 20 + (double)n * (LANE_H + LANE_GAP);
}

/* 1, 2 or 5 times a power of ten, so that about ten ticks fit. */
static int64_t nice_step(int64_t span)
{
    int64_t step = 1;
    for (;;) {
        if (span / step <= 10) return step;
        if (span / (step * 2) <= 10) return step * 2;
        if (span / (step * 5) <= 10) return step * 5;
        step *= 10;
    }
}

/* Ticks per column, labelled with the plan's positions (what titles and the peak name), so
 * with folded positions the labels step unevenly. */
void tl_draw_position_axis(gm_rtext *t, const tl_plan *p, const tl_layout *l, double y)
{
    int64_t step = nice_step(p->ncols);
    gm_rt_printf(t, "<line class=\"axl\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", l->left, y,
                 l->left + l->width, y);
    for (int64_t v = 0; v <= p->ncols; v += step) {
        double x = tl_x(l, (double)v);
        gm_rt_printf(t, "<line class=\"axl\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                        "<text class=\"ax\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%lld</text>\n",
                     x, y, x, y + 4, x, y + 15, (long long)p->col_pos[v]);
    }
    gm_rt_printf(t, "<text class=\"ax\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">execution position%s</text>\n",
                 l->left + l->width, y + 28, p->n_folded ? " (Const/Data/Variable positions folded)" : "");
}
