/*
 * graphmem/report.h — pictures of a plan and of a graph, for people rather than programs:
 * the memory timeline as SVG (`graphmem plan --svg`) and the graph after the passes as
 * Graphviz DOT (`graphmem plan|check --dot`).
 *
 * Both return a malloc'd, NUL-terminated text (free it with gm_report_free); the caller writes
 * it where it wants (gm_write_file). Neither changes the model.
 */
#ifndef GRAPHMEM_REPORT_H
#define GRAPHMEM_REPORT_H

#include <stddef.h>

#include "graphmem/graph.h"
#include "graphmem/passes.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the memory timeline (src/report/svg_timeline.c) ----------------------------------------
 * What it draws, as standalone SVG 1.1:
 *  - one panel per region of the plan that has addresses (feature map per memory type, zero
 *    copy, fixed; the dynamic region has none and is only counted), labelled with its name,
 *    memory type, size and symbol count. In a panel the execution positions run across, one
 *    column each except the Const, Data and Variable nodes', which are folded (they compute
 *    nothing, and in a model with weights they would take half the width; the title says how
 *    many, the ticks keep the plan's position numbers), and the address up (0 .. the region's
 *    size);
 *    <rect class="frame"> is the plot area, so address a of a panel whose frame is at y, height
 *    h and whose region has size S is drawn at y + h - a * h / S;
 *  - one box per symbol (<rect class="b ...">): x from its lifetime's first position to past
 *    its last, y its [offset, offset + size); coloured by region and memory type; a copy that a
 *    pass inserted (the symbol's producer is in the plan's "inserted") is hatched and outlined;
 *    each box has a <title> naming the symbol, its region, offset, size, lifetime (positions
 *    and nodes), streams and anchors; the largest boxes (up to 12 a feature-map panel, 6 in the
 *    others, none under 1/32 of the largest) carry a tag with their name and size, inside the
 *    box or beside it, so that a screenshot says which box is which;
 *  - continuous groups (nodes with continuous_input/_output or their no-padding forms) as a
 *    dashed outline around their members (<rect class="grp">);
 *  - in each feature-map panel, the lower bound as a horizontal line (<line class="lb">): the
 *    plan's lower_bound_bytes when there is one feature map, else the part of the lower-bound
 *    witness of that memory type; and the peak (the position where the most bytes are live,
 *    <line class="peak">) with its position, node and bytes;
 *  - address ticks in human units (B, KiB, MiB, GiB) and a position axis;
 *  - beneath, one lane per stream: which node runs at each position (inserted nodes marked);
 *  - a legend.
 * Large plans stay readable and small: a panel with more than aggregate_above symbols draws at
 * most max_boxes of its largest boxes one by one and bins every other into coverage cells of
 * 2 x 2 pixels (<rect class="a1".."a4">, darker where more of the cell is covered); stream
 * lanes bin positions per pixel column when there are more positions than half the width. The
 * size of the file is then bounded by the pixel grid, not by the number of symbols.
 */
typedef struct gm_svg_options {
    int width;               /* plot width in pixels; default 1200 (>= 200) */
    size_t aggregate_above;  /* a panel with more symbols than this aggregates; default 2000 */
    size_t max_boxes;        /* boxes drawn one by one in an aggregated panel; default 1500 */
} gm_svg_options;

void gm_svg_options_init(gm_svg_options *o);

/* Draws the plan JSON `plan` (len bytes, docs/plan-format.md; normally gm_plan.text, the plan
 * the planner verified) against m, the model after the passes (node types, streams,
 * continuous groups; NULL: drawn without stream lanes and groups). o NULL: defaults.
 * Errors: GM_ERR_INPUT naming `source` and the field when the plan is not plan JSON version 1
 * or a symbol lacks its region, offset, size or lifetime; GM_ERR_NOMEM. */
gm_status gm_report_svg_timeline(const gm_model *m, const char *plan, size_t len, const char *source,
                                 const gm_svg_options *o, char **svg, size_t *svg_len, gm_error *err);

/* ---- the graph (src/report/dot_graph.c) --------------------------------------------------------
 * What it draws, as a Graphviz digraph laid out top to bottom: every node labelled with its
 * name and type (Const and Data small), its outline coloured by its stream (a legend, declared
 * first so that it sits at the top left, names the streams); the nodes every data path passes
 * through in one straight column; data edges solid, control edges dashed, and a node with 4 or
 * more control edges (a clean node's) drawn as one edge to a junction labelled with their count
 * that fans out; each subgraph (a While/If/Case body) as a cluster, with a dotted edge from its parent
 * node into it; the nodes the passes inserted filled with one colour per pass, their tooltip
 * the pass and its reason; the edges those insertions cut and rewired (into and out of an
 * inserted node) red and bold. Names are quoted and escaped, so any name is safe.
 * report: the passes' report (NULL: nothing is highlighted). Errors: GM_ERR_NOMEM. */
gm_status gm_report_dot_graph(const gm_model *m, const gm_pass_report *report, char **dot, size_t *dot_len,
                              gm_error *err);

/* The two pictures written to a file (src/report/report_files.c): as above, then
 * gm_write_file. Errors as above, and GM_ERR_IO naming the path and the reason. The SVG's
 * messages name the plan as "<the plan>". */
gm_status gm_report_write_svg_file(const gm_model *m, const char *plan, size_t len, const char *path, gm_error *err);
gm_status gm_report_write_dot_file(const gm_model *m, const gm_pass_report *report, const char *path, gm_error *err);

/* Frees a text returned above (NULL is fine). */
void gm_report_free(char *text);

#ifdef __cplusplus
}
#endif
#endif
