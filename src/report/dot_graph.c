/*
 * dot_graph.c — the graph after the passes as Graphviz DOT (graphmem/report.h says what is
 * drawn). Node ids are "n<topological index>", so a name never has to be an id: names appear
 * only inside quoted labels and tooltips, escaped. Every node is declared inside its graph's
 * cluster before any edge is written, because Graphviz puts a node in the (sub)graph where it is
 * first mentioned.
 *
 * Laid out top to bottom and kept narrow: Const, Data and Variable nodes drawn small and their
 * edges weightless, so they sit by their reader without pulling it aside; the trunk
 * (dot_trunk.c) held in one straight column by invisible edges; a node with many control
 * edges (an AtomicAddrClean before every atomic writer) draws them as one bundle, an edge to a
 * junction point that fans out thinly; and the legend first, at the top left where a viewer
 * starts reading, in rows.
 */
#include <string.h>

#include "graphmem/report.h"
#include "report/dot_internal.h"
#include "report/report_text.h"
#include "util/alloc.h"
#include "util/strmap.h"

/* Outline colours per stream and fill colours per pass: distinct and light enough to read on. */
static const char *const k_stream_colours[] = {"#1f77b4", "#2ca02c", "#9467bd", "#8c564b",
                                               "#17becf", "#bcbd22", "#7f7f7f", "#e377c2"};
static const char *const k_pass_fills[GM_PASS_COUNT] = {
    "#ffd8b1", "#ffe680", "#b3e6ff", "#d9f2d9", "#ffcce0", "#e0ccff",
    "#ccf2ff", "#f2e6d9", "#ffb3b3", "#ffcc99", "#d6f5d6", "#e6e6e6", "#f2d9e6"};
#define N_STREAM_COLOURS (sizeof k_stream_colours / sizeof k_stream_colours[0])
#define BUNDLE_MIN 4     /* control edges out of one node drawn as a bundle from this many */
#define LEGEND_ROW 2     /* legend samples per row: a narrow legend, beside the graph */
#define TRUNK_WEIGHT 20  /* the trunk's invisible edges: straighter than any real edge pulls */
#define TRUNK_SPAN 8     /* trunk nodes tied when at most this many computing nodes lie between */

static const char *stream_colour(int64_t s)
{
    return k_stream_colours[(size_t)(s < 0 ? 0 : s) % N_STREAM_COLOURS];
}

typedef struct dot_ctx {
    const gm_model *m;
    gm_rtext *t;
    const gm_inserted_node **ins; /* per topological index: what inserted it, or NULL */
    const gm_pass_report *report;
    int32_t *edge_first, *edge_next; /* the report's added control edges, listed by target */
    size_t *bundled;                 /* per topological index: control edges in its bundle, or 0 */
    int64_t *trunk;                  /* per topological index: its place on the trunk, or -1 (dot_trunk) */
} dot_ctx;

/* The report's entry for the control edge src -> n that a pass added, or NULL. */
static const gm_inserted_edge *added_edge(const dot_ctx *c, const gm_node *src, const gm_node *n)
{
    if (!c->edge_first) return NULL;
    for (int32_t e = c->edge_first[gm_node_topo_id(n)]; e >= 0; e = c->edge_next[e])
        if (!strcmp(c->report->edges[e].from, gm_node_name(src))) return &c->report->edges[e];
    return NULL;
}

static const gm_inserted_node *inserted(const dot_ctx *c, const gm_node *n)
{
    int64_t id = gm_node_topo_id(n);
    return id >= 0 ? c->ins[id] : NULL;
}

static void declare_node(dot_ctx *c, const gm_node *n, const char *indent)
{
    gm_rtext *t = c->t;
    const gm_inserted_node *x = inserted(c, n);
    gm_rt_printf(t, "%sn%lld [label=\"", indent, (long long)gm_node_topo_id(n));
    gm_rt_dot(t, gm_node_name(n));
    gm_rt_puts(t, "\\n");
    gm_rt_dot(t, gm_node_type(n));
    gm_rt_printf(t, "\", color=\"%s\"", stream_colour(gm_node_stream(n)));
    if (dot_is_source(n)) gm_rt_puts(t, ", fontsize=8, height=0.25");
    if (c->trunk[gm_node_topo_id(n)] >= 0) gm_rt_puts(t, ", group=trunk");
    if (x) {
        gm_rt_printf(t, ", style=\"rounded,filled,bold\", penwidth=2.5, fillcolor=\"%s\", tooltip=\"inserted by %s ",
                     k_pass_fills[x->pass], gm_pass_name(x->pass));
        gm_rt_puts(t, x->before ? "before " : "after ");
        gm_rt_dot(t, x->anchor_node ? x->anchor_node : "");
        if (x->index >= 0) gm_rt_printf(t, ":%s%d", x->before ? "in" : "out", (int)x->index);
        gm_rt_puts(t, ": ");
        gm_rt_dot(t, x->reason ? x->reason : "");
        gm_rt_puts(t, "\"");
    } else {
        gm_rt_puts(t, ", tooltip=\"");
        gm_rt_dot(t, gm_node_name(n));
        gm_rt_puts(t, " (");
        gm_rt_dot(t, gm_node_type(n));
        gm_rt_printf(t, "), stream %lld\"", (long long)gm_node_stream(n));
    }
    gm_rt_puts(t, "];\n");
    size_t k = c->bundled[gm_node_topo_id(n)];
    if (k) /* the junction in the node's own (sub)graph, and the one edge into it */
        gm_rt_printf(t, "%sj%lld [shape=point, width=0.08, color=\"%s\", tooltip=\"%zu control edges\"];\n"
                        "%sn%lld -> j%lld [style=dashed, arrowhead=none, label=\" %zu control edges\", fontcolor=\"%s\", %s];\n",
                     indent, (long long)gm_node_topo_id(n), x ? "red" : "#888888", k, indent,
                     (long long)gm_node_topo_id(n), (long long)gm_node_topo_id(n), k, x ? "#d62728" : "#555555",
                     x ? "color=red, penwidth=2.5" : "color=\"#888888\", penwidth=1.5");
}

/* A subgraph's cluster: its nodes, labelled with its name and its parent. */
static void declare_cluster(dot_ctx *c, size_t gi)
{
    gm_rtext *t = c->t;
    const gm_graph *g = gm_model_graph(c->m, gi);
    const gm_node *parent = gm_graph_parent(g);
    gm_rt_printf(t, "  subgraph cluster_g%zu {\n    label=\"", gi);
    gm_rt_dot(t, gm_graph_name(g));
    if (parent) {
        gm_rt_puts(t, " (body of ");
        gm_rt_dot(t, gm_node_name(parent));
        gm_rt_puts(t, ")");
    }
    gm_rt_puts(t, "\";\n    style=\"rounded,dashed\"; color=\"#555555\"; fontcolor=\"#555555\";\n");
    size_t k = gm_graph_node_count(g);
    for (size_t i = 0; i < k; i++) declare_node(c, gm_graph_node(g, i), "    ");
    if (k == 0) gm_rt_printf(t, "    e%zu [label=\"(empty)\", shape=plaintext];\n", gi);
    gm_rt_puts(t, "  }\n");
}

/* The dotted edge from a node with subgraphs into each of its bodies. */
static void parent_edges(dot_ctx *c, size_t gi)
{
    const gm_graph *g = gm_model_graph(c->m, gi);
    const gm_node *parent = gm_graph_parent(g);
    if (!parent) return;
    if (gm_graph_node_count(g) == 0)
        gm_rt_printf(c->t, "  n%lld -> e%zu", (long long)gm_node_topo_id(parent), gi);
    else
        gm_rt_printf(c->t, "  n%lld -> n%lld", (long long)gm_node_topo_id(parent),
                     (long long)gm_node_topo_id(gm_graph_node(g, 0)));
    gm_rt_printf(c->t, " [lhead=cluster_g%zu, style=dotted, color=\"#555555\", arrowhead=odiamond, label=\"", gi);
    gm_rt_dot(c->t, gm_graph_name(g));
    gm_rt_puts(c->t, "\"];\n");
}

/* Data edges solid, control edges dashed; an edge into or out of an inserted node is one the
 * passes cut and rewired: red and bold. */
static void node_edges(dot_ctx *c, const gm_node *n)
{
    gm_rtext *t = c->t;
    long long to = (long long)gm_node_topo_id(n);
    for (size_t i = 0; i < gm_node_input_count(n); i++) {
        int32_t k = 0;
        const gm_node *src = gm_node_input(n, i, &k);
        if (!src) continue;
        bool hot = inserted(c, src) || inserted(c, n);
        gm_rt_printf(t, "  n%lld -> n%lld [%stooltip=\"", (long long)gm_node_topo_id(src), to,
                     dot_is_source(src) ? "weight=0, " : "");
        gm_rt_dot(t, gm_node_name(src));
        gm_rt_printf(t, ":out%d -> ", (int)k);
        gm_rt_dot(t, gm_node_name(n));
        gm_rt_printf(t, ":in%zu%s\"%s];\n", i, hot ? " (rewired by a pass)" : "",
                     hot ? ", color=red, penwidth=2.5" : "");
    }
    for (size_t i = 0; i < gm_node_control_input_count(n); i++) {
        const gm_node *src = gm_node_control_input(n, i);
        bool hot = inserted(c, src) || inserted(c, n);
        const gm_inserted_edge *added = added_edge(c, src, n);
        if (added) { /* a race removed: the order the graph's list implied, made an edge */
            gm_rt_printf(t, "  n%lld -> n%lld [style=dashed, color=red, penwidth=2.5, tooltip=\"added by %s: ",
                         (long long)gm_node_topo_id(src), to, gm_pass_name(added->pass));
            gm_rt_dot(t, added->reason);
            gm_rt_puts(t, "\"];\n");
            continue;
        }
        if (c->bundled[gm_node_topo_id(src)]) { /* from the bundle's junction, thin */
            gm_rt_printf(t, "  j%lld -> n%lld [style=dashed, arrowsize=0.5, penwidth=0.8, color=\"%s\", tooltip=\"",
                         (long long)gm_node_topo_id(src), to, hot ? "#d6272899" : "#88888899");
            gm_rt_dot(t, gm_node_name(src));
            gm_rt_puts(t, " -> ");
            gm_rt_dot(t, gm_node_name(n));
            gm_rt_puts(t, " (control)\"];\n");
            continue;
        }
        gm_rt_printf(t, "  n%lld -> n%lld [style=dashed, %s];\n", (long long)gm_node_topo_id(src), to,
                     hot ? "color=red, penwidth=2.5" : "color=\"#888888\"");
    }
}

/* Per node, its control edges that go in a bundle: all but those access_order added (each
 * keeps its own edge and reason), when they are BUNDLE_MIN or more. */
static void find_bundles(dot_ctx *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const gm_node *v = gm_model_node_at(c->m, i);
        for (size_t k = 0; k < gm_node_control_input_count(v); k++) {
            const gm_node *src = gm_node_control_input(v, k);
            if (!added_edge(c, src, v)) c->bundled[gm_node_topo_id(src)]++;
        }
    }
    for (size_t i = 0; i < n; i++)
        if (c->bundled[i] < BUNDLE_MIN) c->bundled[i] = 0;
}

/* Consecutive trunk nodes tied by invisible, heavy edges: Graphviz keeps them in one column.
 * Only across a short detour (a block beside the trunk): across a long one the tie would drag
 * what ends it (say the NetOutput) up beside what starts it. */
static void trunk_edges(dot_ctx *c, size_t n)
{
    size_t prev = n;
    for (size_t i = 0; i < n; i++) {
        if (c->trunk[i] < 0) continue;
        if (prev < n && c->trunk[i] - c->trunk[prev] <= TRUNK_SPAN + 1)
            gm_rt_printf(c->t, "  n%zu -> n%zu [style=invis, weight=%d];\n", prev, i, TRUNK_WEIGHT);
        prev = i;
    }
}

/* A row of the legend: on one rank, left to right in the order given (invisible edges between
 * neighbours), under the row before (an invisible edge from its first node). */
static void legend_row(gm_rtext *t, const char *const *ids, size_t n, const char *above)
{
    gm_rt_puts(t, "    { rank=same;");
    for (size_t i = 0; i < n; i++) gm_rt_printf(t, " %s;", ids[i]);
    gm_rt_puts(t, " }\n");
    for (size_t i = 1; i < n; i++) gm_rt_printf(t, "    %s -> %s [style=invis];\n", ids[i - 1], ids[i]);
    if (above) gm_rt_printf(t, "    %s -> %s [style=invis];\n", above, ids[0]);
}

static void legend(dot_ctx *c, const gm_pass_report *report)
{
    gm_rtext *t = c->t;
    gm_model_stats st;
    gm_model_get_stats(c->m, &st);
    gm_rt_puts(t, "  subgraph cluster_legend {\n    label=\"legend\"; style=rounded; color=\"#aaaaaa\"; fontsize=10;\n"
                  "    node [fontsize=8, height=0.25];\n");
    /* the node samples, LEGEND_ROW a row: streams, then the passes that inserted nodes */
    static const char *const k_ids[] = {"legend_s0", "legend_s1", "legend_s2", "legend_s3", "legend_s4", "legend_s5",
                                        "legend_s6", "legend_s7", "legend_p0", "legend_p1", "legend_p2", "legend_p3",
                                        "legend_p4", "legend_p5", "legend_p6", "legend_p7", "legend_p8", "legend_p9",
                                        "legend_p10", "legend_p11", "legend_p12"};
    _Static_assert(sizeof k_ids / sizeof k_ids[0] == N_STREAM_COLOURS + GM_PASS_COUNT, "a legend id per sample");
    const char *ids[N_STREAM_COLOURS + GM_PASS_COUNT];
    size_t n = 0;
    size_t shown = st.max_stream + 1 < (int64_t)N_STREAM_COLOURS ? (size_t)(st.max_stream + 1) : N_STREAM_COLOURS;
    for (size_t s = 0; s < shown; s++) {
        gm_rt_printf(t, "    legend_s%zu [label=\"stream %zu%s\", color=\"%s\"];\n", s, s,
                     st.max_stream >= (int64_t)N_STREAM_COLOURS ? " (and every 8th after)" : "", k_stream_colours[s]);
        ids[n++] = k_ids[s];
    }
    for (int p = 0; report && p < GM_PASS_COUNT; p++)
        if (report->inserted[p]) {
            gm_rt_printf(t, "    legend_p%d [label=\"inserted by %s (%zu)\", style=\"rounded,filled,bold\", fillcolor=\"%s\"];\n",
                         p, gm_pass_name((gm_pass_id)p), report->inserted[p], k_pass_fills[p]);
            ids[n++] = k_ids[N_STREAM_COLOURS + (size_t)p];
        }
    const char *above = NULL;
    for (size_t i = 0; i < n; i += LEGEND_ROW) {
        legend_row(t, ids + i, n - i < LEGEND_ROW ? n - i : LEGEND_ROW, above);
        above = ids[i];
    }
    /* the edge samples, one row */
    gm_rt_puts(t, "    node [width=0.3];\n"
                  "    legend_a [label=\"a\"]; legend_b [label=\"b\"]; legend_c [label=\"c\"]; legend_d [label=\"d\"];\n"
                  "    legend_e [label=\"e\"]; legend_f [label=\"f\"];\n"
                  "    legend_a -> legend_b [label=\"data\"];\n"
                  "    legend_c -> legend_d [label=\"control\", style=dashed, color=\"#888888\"];\n"
                  "    legend_e -> legend_f [label=\"rewired by a pass\", color=red, penwidth=2.5];\n");
    static const char *const k_edges[] = {"legend_a", "legend_b", "legend_c", "legend_d", "legend_e", "legend_f",
                                          "legend_g", "legend_h"};
    size_t ne = 6;
    if (report && report->n_edges) {
        gm_rt_printf(t, "    legend_g [label=\"g\"]; legend_h [label=\"h\"]; legend_g -> legend_h [label=\"ordered by access_order (%zu)\", "
                        "style=dashed, color=red, penwidth=2.5];\n",
                     report->n_edges);
        ne = 8;
    }
    for (size_t i = 0; i < ne; i += 2 * LEGEND_ROW) { /* a sample is two nodes */
        legend_row(t, k_edges + i, ne - i < 2 * LEGEND_ROW ? ne - i : 2 * LEGEND_ROW, above);
        above = k_edges[i];
    }
    bool bundles = false;
    for (size_t i = 0; i < gm_model_node_count(c->m) && !bundles; i++) bundles = c->bundled[i] > 0;
    if (bundles) {
        static const char *const k_bundle[] = {"legend_i", "legend_j", "legend_k"};
        gm_rt_puts(t, "    legend_i [label=\"i\"]; legend_j [shape=point, width=0.08, color=\"#888888\"]; legend_k [label=\"k\"];\n"
                      "    legend_i -> legend_j [label=\"control edges, bundled\", style=dashed, arrowhead=none, color=\"#888888\"];\n"
                      "    legend_j -> legend_k [style=dashed, arrowsize=0.5, penwidth=0.8, color=\"#88888899\"];\n");
        legend_row(t, k_bundle, 3, above);
    }
    gm_rt_puts(t, "  }\n");
}

gm_status gm_report_dot_graph(const gm_model *m, const gm_pass_report *report, char **dot, size_t *dot_len,
                              gm_error *err)
{
    *dot = NULL;
    size_t n = gm_model_node_count(m);
    gm_rtext t = {0};
    dot_ctx c = {.m = m, .t = &t, .ins = gm_calloc(n ? n : 1, sizeof *c.ins),
                 .bundled = gm_calloc(n ? n : 1, sizeof *c.bundled), .trunk = dot_trunk(m)};
    if (!c.ins || !c.bundled || !c.trunk) {
        gm_free(c.ins);
        gm_free(c.bundled);
        gm_free(c.trunk);
        return gm_error_set(err, GM_ERR_NOMEM, "dot: out of memory");
    }
    for (size_t i = 0; report && i < report->n_nodes; i++) {
        const gm_node *x = report->nodes[i].node ? gm_model_find_node(m, report->nodes[i].node) : NULL;
        if (x && gm_node_topo_id(x) >= 0 && (size_t)gm_node_topo_id(x) < n) c.ins[gm_node_topo_id(x)] = &report->nodes[i];
    }
    c.report = report;
    if (report && report->n_edges) {
        c.edge_first = gm_malloc((n ? n : 1) * sizeof *c.edge_first);
        c.edge_next = gm_malloc(report->n_edges * sizeof *c.edge_next);
        if (!c.edge_first || !c.edge_next) {
            gm_free(c.edge_first);
            gm_free(c.edge_next);
            gm_free(c.ins);
            gm_free(c.bundled);
            gm_free(c.trunk);
            return gm_error_set(err, GM_ERR_NOMEM, "dot: out of memory");
        }
        for (size_t i = 0; i < n; i++) c.edge_first[i] = -1;
        for (size_t i = report->n_edges; i-- > 0;) {
            const gm_node *to = gm_model_find_node(m, report->edges[i].to);
            c.edge_next[i] = -1;
            if (!to || gm_node_topo_id(to) < 0 || (size_t)gm_node_topo_id(to) >= n) continue;
            c.edge_next[i] = c.edge_first[gm_node_topo_id(to)];
            c.edge_first[gm_node_topo_id(to)] = (int32_t)i;
        }
    }
    gm_rt_puts(&t, "digraph \"");
    gm_rt_dot(&t, gm_model_name(m));
    gm_rt_puts(&t, "\" {\n  compound=true; rankdir=TB; ranksep=0.3; nodesep=0.25; fontname=\"Helvetica\";\n"
                   "  node [shape=box, style=rounded, fontname=\"Helvetica\", fontsize=10, penwidth=1.5, height=0.35, "
                   "margin=\"0.08,0.03\"];\n"
                   "  edge [fontname=\"Helvetica\", fontsize=8];\n  label=\"");
    gm_rt_dot(&t, gm_model_name(m));
    gm_rt_puts(&t, " after the passes\"; labelloc=t;\n");
    find_bundles(&c, n);
    legend(&c, report); /* first: Graphviz places it leftmost */
    const gm_graph *root = gm_model_root(m);
    for (size_t i = 0; i < gm_graph_node_count(root); i++) declare_node(&c, gm_graph_node(root, i), "  ");
    for (size_t gi = 1; gi < gm_model_graph_count(m); gi++) declare_cluster(&c, gi);
    for (size_t i = 0; i < n; i++) node_edges(&c, gm_model_node_at(m, i));
    for (size_t gi = 1; gi < gm_model_graph_count(m); gi++) parent_edges(&c, gi);
    trunk_edges(&c, n);
    gm_rt_puts(&t, "}\n");
    gm_free(c.ins);
    gm_free(c.bundled);
    gm_free(c.trunk);
    gm_free(c.edge_first);
    gm_free(c.edge_next);
    *dot = gm_rt_take(&t, dot_len);
    if (!*dot) {
        gm_rt_free(&t);
        return gm_error_set(err, GM_ERR_NOMEM, "dot: out of memory");
    }
    return GM_OK;
}

void gm_report_free(char *text) { gm_free(text); }
