/*
 * svg_timeline.c — the memory timeline picture (graphmem/report.h says what is drawn): panels
 * per region with one box per symbol, continuous groups, the lower bound and the peak, then
 * the stream lanes (svg_lanes.c) and a legend. Large panels bin their small boxes into coverage
 * cells (svg_aggregate below) so the file is bounded by the pixel grid.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/svg_internal.h"
#include "util/alloc.h"

#define MARGIN_LEFT 110.0
#define MARGIN_RIGHT 40.0
#define TOP 64.0
#define FM_HEIGHT 320.0    /* a feature-map panel */
#define OTHER_HEIGHT 120.0 /* zero copy, fixed */
#define PANEL_GAP 58.0     /* label above, position labels below */
#define CELL 2             /* aggregation cell, pixels square */
#define ANCHORS_SHOWN 8
#define FM_LABELS 12   /* the largest boxes named in a panel, at most */
#define OTHER_LABELS 6

/* Base colours: feature map per memory type (hbm, p2p, ts, host, other), zero copy, fixed. */
static const char *const k_fm_colours[] = {"#4e79a7", "#f28e2b", "#76b7b2", "#b07aa1", "#edc948"};
#define ZERO_COPY_COLOUR "#59a14f"
#define FIXED_COLOUR "#9c755f"

void gm_svg_options_init(gm_svg_options *o)
{
    o->width = 1200;
    o->aggregate_above = 2000;
    o->max_boxes = 1500;
}

static const char *region_colour(const tl_region *g)
{
    if (!strcmp(g->name, "zero_copy")) return ZERO_COPY_COLOUR;
    if (!strcmp(g->name, "fixed")) return FIXED_COLOUR;
    static const char *const mems[] = {"hbm", "p2p", "ts", "host"};
    for (size_t i = 0; i < 4; i++)
        if (!strcmp(g->mem, mems[i])) return k_fm_colours[i];
    return k_fm_colours[4];
}

/* "#rrggbb" mixed with white by f in [0, 1]. */
static void lighten(const char *hex, double f, char out[8])
{
    unsigned v = (unsigned)strtoul(hex + 1, NULL, 16);
    unsigned c[3] = {(v >> 16) & 255u, (v >> 8) & 255u, v & 255u};
    for (int i = 0; i < 3; i++) c[i] = (unsigned)((double)c[i] + (255.0 - (double)c[i]) * f + 0.5);
    snprintf(out, 8, "#%02x%02x%02x", c[0], c[1], c[2]);
}

typedef struct tl_ctx {
    gm_rtext *t;
    const tl_plan *p;
    const gm_model *m;
    const gm_svg_options *o;
    tl_layout l;
} tl_ctx;

static void header(tl_ctx *c, double total_w, double total_h)
{
    gm_rtext *t = c->t;
    gm_rt_printf(t, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                    "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%.0f\" height=\"%.0f\" "
                    "viewBox=\"0 0 %.0f %.0f\">\n",
                 total_w, total_h, total_w, total_h);
    gm_rt_puts(t, "<title>memory timeline of ");
    gm_rt_xml(t, c->p->model);
    gm_rt_puts(t, "</title>\n<style type=\"text/css\"><![CDATA[\n"
                  "text{font-family:Helvetica,Arial,sans-serif;font-size:11px;fill:#222}\n"
                  ".h{font-size:13px;font-weight:bold} .t{font-size:16px;font-weight:bold} .ax{font-size:10px;fill:#555}\n"
                  ".frame{fill:#fafafa;stroke:#bbb;stroke-width:1} .grid{stroke:#e4e4e4;stroke-width:1} .axl{stroke:#888;stroke-width:1}\n"
                  ".b{stroke:#fff;stroke-width:0.4} .ins{fill:url(#hatch);stroke:#d62728;stroke-width:1.2}\n"
                  ".grp{fill:none;stroke:#222;stroke-width:1.2;stroke-dasharray:4,2}\n"
                  ".lb{stroke:#e15759;stroke-width:1.5;stroke-dasharray:6,3} .peak{stroke:#222;stroke-width:1.2;stroke-dasharray:2,2}\n"
                  ".a1{fill-opacity:0.3} .a2{fill-opacity:0.5} .a3{fill-opacity:0.75} .a4{fill-opacity:1}\n"
                  ".n{fill:#8cb4d9} .ni{fill:#d62728}\n"
                  ".label{pointer-events:none} .lbg{fill:#fff;fill-opacity:0.85} .lbo{stroke:#888;stroke-width:0.6} .lbl{font-size:10px;fill:#111} .lsz{font-weight:bold}\n");
    char shade[8];
    for (size_t r = 0; r < c->p->n_regions; r++) {
        const char *base = region_colour(&c->p->regions[r]);
        for (int s = 0; s < 3; s++) {
            lighten(base, 0.2 * s, shade);
            gm_rt_printf(t, ".k%zus%d{fill:%s} ", r, s, shade);
        }
        gm_rt_printf(t, ".g%zu{fill:%s}\n", r, base);
    }
    gm_rt_puts(t, "]]></style>\n<defs><pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
                  "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#f7c5c5\"/>"
                  "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#d62728\" stroke-width=\"3\"/></pattern></defs>\n"
                  "<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n");
}

static void title_block(tl_ctx *c)
{
    gm_rtext *t = c->t;
    const tl_plan *p = c->p;
    gm_rt_printf(t, "<text class=\"t\" x=\"%.0f\" y=\"24\">memory timeline: ", MARGIN_LEFT);
    gm_rt_xml(t, p->model);
    gm_rt_printf(t, "</text>\n<text x=\"%.0f\" y=\"44\">", MARGIN_LEFT);
    if (p->feature_map >= 0) {
        gm_rt_puts(t, "feature map ");
        gm_rt_bytes(t, p->feature_map);
    }
    if (p->lower_bound > 0) {
        gm_rt_puts(t, ", lower bound ");
        gm_rt_bytes(t, p->lower_bound);
        if (p->feature_map >= 0) gm_rt_printf(t, " (ratio %.4f)", (double)p->feature_map / (double)p->lower_bound);
    }
    gm_rt_printf(t, "; %zu symbols, %zu of run-time size (not drawn); %lld positions", p->n_syms + p->n_dynamic,
                 p->n_dynamic, (long long)p->npos);
    if (p->n_folded) gm_rt_printf(t, ", %zu of them Const/Data/Variable, folded", p->n_folded);
    if (p->strategy) {
        gm_rt_puts(t, "; strategy ");
        gm_rt_xml(t, p->strategy);
    }
    gm_rt_puts(t, "</text>\n");
}

/* Address ticks at powers of two, labelled in human units, with grid lines across. */
static void address_axis(tl_ctx *c, const tl_region *g)
{
    gm_rtext *t = c->t;
    int64_t step = 1;
    while (g->scale / step > 4) step *= 2;
    for (int64_t a = 0; a <= g->scale; a += step) {
        double y = tl_addr_y(g, (double)a);
        gm_rt_printf(t, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                        "<text class=\"ax\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">",
                     c->l.left, y, c->l.left + c->l.width, y, c->l.left - 6, y + 3);
        gm_rt_bytes(t, a);
        gm_rt_puts(t, "</text>\n");
    }
}

static void anchor_text(gm_rtext *t, const cJSON *anchors)
{
    size_t n = 0, total = (size_t)cJSON_GetArraySize(anchors);
    gm_rt_puts(t, "\nanchors:");
    for (const cJSON *a = anchors ? anchors->child : NULL; a && n < ANCHORS_SHOWN; a = a->next, n++) {
        const cJSON *node = cJSON_GetObjectItemCaseSensitive(a, "node");
        const cJSON *out = cJSON_GetObjectItemCaseSensitive(a, "out"), *in = cJSON_GetObjectItemCaseSensitive(a, "in");
        gm_rt_puts(t, n ? ", " : " ");
        gm_rt_xml(t, cJSON_IsString(node) ? node->valuestring : "?");
        if (cJSON_IsNumber(out)) gm_rt_printf(t, ":out%d", out->valueint);
        if (cJSON_IsNumber(in)) gm_rt_printf(t, ":in%d", in->valueint);
    }
    if (total > n) gm_rt_printf(t, " (+%zu more)", total - n);
}

static const char *order_name(const tl_plan *p, int64_t pos)
{
    return pos >= 0 && (size_t)pos < p->n_order ? p->order[pos] : "?";
}

static void sym_title(tl_ctx *c, const tl_sym *y)
{
    gm_rtext *t = c->t;
    const tl_region *g = &c->p->regions[y->region];
    gm_rt_puts(t, "<title>");
    gm_rt_xml(t, y->id);
    gm_rt_printf(t, "\n%s (%s): offset %lld, size %lld (", g->name, g->mem, (long long)y->off, (long long)y->size);
    gm_rt_bytes(t, y->size);
    gm_rt_printf(t, ")\nlifetime [%lld, %lld]: ", (long long)y->first, (long long)y->last);
    gm_rt_xml(t, order_name(c->p, y->first));
    gm_rt_puts(t, " .. ");
    gm_rt_xml(t, order_name(c->p, y->last));
    if (cJSON_IsArray(y->streams)) {
        gm_rt_puts(t, "\nstreams");
        for (const cJSON *s = y->streams->child; s; s = s->next) gm_rt_printf(t, " %lld", (long long)s->valuedouble);
    }
    anchor_text(t, y->anchors);
    if (y->inserted) {
        const cJSON *pass = cJSON_GetObjectItemCaseSensitive(y->inserted, "pass");
        const cJSON *why = cJSON_GetObjectItemCaseSensitive(y->inserted, "reason");
        gm_rt_puts(t, "\ninserted copy, by ");
        gm_rt_xml(t, cJSON_IsString(pass) ? pass->valuestring : "a pass");
        gm_rt_puts(t, ": ");
        gm_rt_xml(t, cJSON_IsString(why) ? why->valuestring : "");
    }
    gm_rt_puts(t, "</title>");
}

/* One box; tiny ones are drawn at least a pixel (or half) so none disappears. */
static void draw_box(tl_ctx *c, const tl_sym *y, size_t index)
{
    tl_box b = tl_sym_box(c->p, &c->l, y);
    double w = b.x1 - b.x0, h = b.y1 - b.y0;
    if (w < 1) w = 1;
    if (h < 1) h = 1, b.y0 = b.y1 - 1;
    if (y->inserted) gm_rt_printf(c->t, "<rect class=\"b ins\"");
    else gm_rt_printf(c->t, "<rect class=\"b k%zus%zu\"", y->region, index % 3);
    gm_rt_printf(c->t, " x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\">", b.x0, b.y0, w, h);
    sym_title(c, y);
    gm_rt_puts(c->t, "</rect>\n");
}

typedef struct area_rank {
    double key, area;
    size_t sym;
} area_rank;

static int by_key_desc(const void *a, const void *b)
{
    const area_rank *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? 1 : -1;
    if (x->area != y->area) return x->area < y->area ? 1 : -1;
    return (x->sym > y->sym) - (x->sym < y->sym);
}

size_t *tl_syms_ranked(const tl_plan *p, const tl_layout *l, size_t r, bool by_bytes, size_t *n)
{
    *n = 0;
    area_rank *rank = gm_malloc((p->regions[r].n_syms ? p->regions[r].n_syms : 1) * sizeof *rank);
    size_t *out = gm_malloc((p->regions[r].n_syms ? p->regions[r].n_syms : 1) * sizeof *out);
    if (!rank || !out) {
        gm_free(rank);
        gm_free(out);
        *n = p->regions[r].n_syms;
        return NULL;
    }
    size_t k = 0;
    for (size_t i = 0; i < p->n_syms; i++) {
        if (p->syms[i].region != r) continue;
        tl_box b = tl_sym_box(p, l, &p->syms[i]);
        double area = (b.x1 - b.x0) * (b.y1 - b.y0);
        rank[k++] = (area_rank){by_bytes ? (double)p->syms[i].size : area, area, i};
    }
    qsort(rank, k, sizeof *rank, by_key_desc);
    for (size_t j = 0; j < k; j++) out[j] = rank[j].sym;
    gm_free(rank);
    *n = k;
    return out;
}

/* Adds the box's overlap with each cell to the cells' coverage (fractions of a cell). */
static void bin_box(float *cov, size_t cols, size_t rows, double x0, double x1, double y0, double y1)
{
    if (x1 - x0 < 0.05) x1 = x0 + 0.05; /* a sliver still counts a little */
    if (y1 - y0 < 0.05) y1 = y0 + 0.05;
    size_t c0 = (size_t)fmax(0, x0 / CELL), c1 = (size_t)fmin((double)cols - 1, (x1 - 1e-9) / CELL);
    size_t r0 = (size_t)fmax(0, y0 / CELL), r1 = (size_t)fmin((double)rows - 1, (y1 - 1e-9) / CELL);
    for (size_t r = r0; r <= r1; r++) {
        double oy = fmin(y1, (double)(r + 1) * CELL) - fmax(y0, (double)r * CELL);
        for (size_t k = c0; k <= c1; k++) {
            double ox = fmin(x1, (double)(k + 1) * CELL) - fmax(x0, (double)k * CELL);
            if (ox > 0 && oy > 0) cov[r * cols + k] += (float)(ox * oy / (CELL * CELL));
        }
    }
}

/* Coverage in four levels; per column, runs of one level are one rect. */
static void emit_cells(tl_ctx *c, const tl_region *g, size_t gi, const float *cov, size_t cols, size_t rows)
{
    gm_rt_printf(c->t, "<g class=\"g%zu\">\n", gi);
    for (size_t k = 0; k < cols; k++) {
        for (size_t r = 0; r < rows;) {
            float v = cov[r * cols + k];
            int level = v <= 0 ? 0 : v >= 0.75f ? 4 : v >= 0.5f ? 3 : v >= 0.25f ? 2 : 1;
            size_t e = r + 1;
            while (e < rows) {
                float w = cov[e * cols + k];
                int l2 = w <= 0 ? 0 : w >= 0.75f ? 4 : w >= 0.5f ? 3 : w >= 0.25f ? 2 : 1;
                if (l2 != level) break;
                e++;
            }
            if (level)
                gm_rt_printf(c->t, "<rect class=\"a%d\" x=\"%.0f\" y=\"%.0f\" width=\"%d\" height=\"%zu\"/>\n", level,
                             c->l.left + (double)(k * CELL), g->y + (double)(r * CELL), CELL, (e - r) * CELL);
            r = e;
        }
    }
    gm_rt_puts(c->t, "</g>\n");
}

/* A panel with many symbols: its largest boxes one by one, the rest as coverage cells. */
static gm_status draw_aggregated(tl_ctx *c, size_t gi, size_t *drawn, size_t *binned)
{
    const tl_region *g = &c->p->regions[gi];
    size_t n = 0;
    size_t *rank = tl_syms_ranked(c->p, &c->l, gi, false, &n);
    size_t cols = (size_t)ceil(c->l.width / CELL), rows = (size_t)ceil(g->h / CELL);
    float *cov = gm_calloc(cols * rows, sizeof *cov);
    if (!rank || !cov) {
        gm_free(rank);
        gm_free(cov);
        return GM_ERR_NOMEM;
    }
    for (size_t j = 0; j < n; j++) {
        const tl_sym *y = &c->p->syms[rank[j]];
        tl_box b = tl_sym_box(c->p, &c->l, y);
        if (*drawn < c->o->max_boxes && b.x1 - b.x0 >= 2 && b.y1 - b.y0 >= 2) {
            draw_box(c, y, rank[j]);
            (*drawn)++;
        } else {
            bin_box(cov, cols, rows, b.x0 - c->l.left, b.x1 - c->l.left, b.y0 - g->y, b.y1 - g->y);
            (*binned)++;
        }
    }
    emit_cells(c, g, gi, cov, cols, rows);
    gm_free(rank);
    gm_free(cov);
    return GM_OK;
}

static void draw_groups(tl_ctx *c, size_t gi)
{
    const tl_region *g = &c->p->regions[gi];
    for (size_t i = 0; i < c->p->n_groups; i++) {
        const tl_group *q = &c->p->groups[i];
        if (q->region != (long)gi || q->members < 2) continue;
        double x0 = tl_x(&c->l, (double)c->p->col[q->first]), x1 = tl_x(&c->l, (double)c->p->col[q->last + 1]);
        double y0 = tl_addr_y(g, (double)q->hi), y1 = tl_addr_y(g, (double)q->lo);
        gm_rt_printf(c->t, "<rect class=\"grp\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"><title>continuous %s of ",
                     x0, y0, x1 - x0, fmax(1, y1 - y0), q->out ? "outputs" : "inputs");
        gm_rt_xml(c->t, q->node);
        gm_rt_printf(c->t, " (%zu members, offsets %lld .. %lld)</title></rect>\n", q->members, (long long)q->lo,
                     (long long)q->hi);
    }
}

/* The position where the most bytes of the panel are live (lifetimes as packed); a folded
 * position has no column to draw it in, and what lives there lives on into the next one. */
static gm_status draw_peak(tl_ctx *c, size_t gi)
{
    const tl_region *g = &c->p->regions[gi];
    int64_t *d = gm_calloc((size_t)c->p->npos + 1, sizeof *d);
    if (!d) return GM_ERR_NOMEM;
    for (size_t i = 0; i < c->p->n_syms; i++) {
        const tl_sym *y = &c->p->syms[i];
        if (y->region != gi) continue;
        d[y->first] += y->size;
        d[y->last + 1] -= y->size;
    }
    int64_t live = 0, best = -1, at = 0;
    for (int64_t pos = 0; pos < c->p->npos; pos++) {
        live += d[pos];
        if (live > best && !tl_folded(c->p, pos)) best = live, at = pos;
    }
    gm_free(d);
    double x = tl_x(&c->l, (double)c->p->col[at] + 0.5);
    gm_rt_printf(c->t, "<line class=\"peak\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"><title>peak</title></line>\n",
                 x, g->y, x, g->y + g->h);
    gm_rt_printf(c->t, "<text class=\"ax\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">peak ", x, g->y - 4,
                 x > c->l.left + c->l.width * 0.6 ? "end" : "start");
    gm_rt_bytes(c->t, best);
    gm_rt_printf(c->t, " live at %lld (", (long long)at);
    gm_rt_xml(c->t, order_name(c->p, at));
    gm_rt_puts(c->t, ")</text>\n");
    return GM_OK;
}

static void draw_bound(tl_ctx *c, const tl_region *g)
{
    double y = tl_addr_y(g, (double)g->bound);
    gm_rt_printf(c->t, "<line class=\"lb\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"><title>lower bound %lld bytes</title></line>\n",
                 c->l.left, y, c->l.left + c->l.width, y, (long long)g->bound);
    gm_rt_printf(c->t, "<text class=\"ax\" x=\"%.1f\" y=\"%.1f\">lower bound ", c->l.left + c->l.width + 3, y + 3);
    gm_rt_bytes(c->t, g->bound);
    gm_rt_puts(c->t, "</text>\n");
}

static gm_status draw_panel(tl_ctx *c, size_t gi)
{
    const tl_region *g = &c->p->regions[gi];
    gm_rtext *t = c->t;
    gm_rt_printf(t, "<g class=\"panel\">\n<text class=\"h\" x=\"%.0f\" y=\"%.1f\">", c->l.left, g->y - 22);
    gm_rt_xml(t, g->name);
    gm_rt_puts(t, " (");
    gm_rt_xml(t, g->mem);
    gm_rt_puts(t, "): ");
    gm_rt_bytes(t, g->size);
    gm_rt_printf(t, ", %zu symbols", g->n_syms);
    bool agg = g->n_syms > c->o->aggregate_above;
    gm_rt_printf(t, "%s</text>\n<rect class=\"frame\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>\n",
                 agg ? " (small boxes binned into coverage cells)" : "", c->l.left, g->y, c->l.width, g->h);
    address_axis(c, g);
    size_t drawn = 0, binned = 0;
    if (agg) {
        if (draw_aggregated(c, gi, &drawn, &binned) != GM_OK) return GM_ERR_NOMEM;
    } else {
        for (size_t i = 0; i < c->p->n_syms; i++)
            if (c->p->syms[i].region == gi) draw_box(c, &c->p->syms[i], i);
    }
    draw_groups(c, gi);
    if (g->feature_map && g->n_syms && draw_peak(c, gi) != GM_OK) return GM_ERR_NOMEM;
    if (g->feature_map && g->bound >= 0) draw_bound(c, g);
    tl_draw_labels(t, c->p, &c->l, gi, g->feature_map ? FM_LABELS : OTHER_LABELS); /* on top: read, not covered */
    tl_draw_position_axis(t, c->p, &c->l, g->y + g->h);
    gm_rt_puts(t, "</g>\n");
    return GM_OK;
}

static double legend(tl_ctx *c, double y)
{
    gm_rtext *t = c->t;
    double x = c->l.left;
    gm_rt_printf(t, "<g class=\"legend\">\n<text class=\"h\" x=\"%.0f\" y=\"%.1f\">legend</text>\n", x, y + 12);
    y += 22;
    for (size_t r = 0; r < c->p->n_regions; r++, x += 150) {
        if (r && r % 6 == 0) x = c->l.left, y += 20;
        gm_rt_printf(t, "<rect class=\"k%zus0 key\" x=\"%.0f\" y=\"%.0f\" width=\"14\" height=\"12\"/><text x=\"%.0f\" y=\"%.0f\">", r, x,
                     y, x + 18, y + 10);
        gm_rt_xml(t, c->p->regions[r].name);
        gm_rt_puts(t, " (");
        gm_rt_xml(t, c->p->regions[r].mem);
        gm_rt_puts(t, ")</text>\n");
    }
    x = c->l.left, y += 20;
    gm_rt_printf(t, "<rect class=\"ins key\" x=\"%.0f\" y=\"%.0f\" width=\"14\" height=\"12\"/><text x=\"%.0f\" y=\"%.0f\">copy a pass inserted</text>\n"
                    "<rect class=\"grp key\" x=\"%.0f\" y=\"%.0f\" width=\"14\" height=\"12\"/><text x=\"%.0f\" y=\"%.0f\">continuous group</text>\n"
                    "<line class=\"lb key\" x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\"/><text x=\"%.0f\" y=\"%.0f\">lower bound</text>\n"
                    "<line class=\"peak key\" x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\"/><text x=\"%.0f\" y=\"%.0f\">peak live bytes</text>\n"
                    "<rect class=\"g0 a2 key\" x=\"%.0f\" y=\"%.0f\" width=\"14\" height=\"12\"/><text x=\"%.0f\" y=\"%.0f\">binned small boxes</text>\n"
                    "<rect class=\"n key\" x=\"%.0f\" y=\"%.0f\" width=\"14\" height=\"12\"/><text x=\"%.0f\" y=\"%.0f\">node</text>\n"
                    "<rect class=\"ni key\" x=\"%.0f\" y=\"%.0f\" width=\"14\" height=\"12\"/><text x=\"%.0f\" y=\"%.0f\">inserted node</text>\n</g>\n",
                 x, y, x + 18, y + 10, x + 170, y, x + 188, y + 10, x + 320, y + 6, x + 340, y + 6, x + 344, y + 10,
                 x + 440, y + 6, x + 460, y + 6, x + 464, y + 10, x + 580, y, x + 598, y + 10, x + 730, y, x + 748,
                 y + 10, x + 800, y, x + 818, y + 10);
    return y + 24;
}

/* Places the panels one under another; returns where the lanes start. */
static double layout(tl_ctx *c, tl_plan *p)
{
    double y = TOP + 28;
    for (size_t r = 0; r < p->n_regions; r++) {
        tl_region *g = &p->regions[r];
        if (g->bound > g->scale) g->scale = g->bound;
        g->y = y;
        g->h = g->feature_map ? FM_HEIGHT : OTHER_HEIGHT;
        y += g->h + PANEL_GAP;
    }
    (void)c;
    return y;
}

gm_status gm_report_svg_timeline(const gm_model *m, const char *plan, size_t len, const char *source,
                                 const gm_svg_options *o, char **svg, size_t *svg_len, gm_error *err)
{
    *svg = NULL;
    gm_svg_options dflt;
    gm_svg_options_init(&dflt);
    if (!o) o = &dflt;
    if (!source) source = "<plan>";
    tl_plan p;
    gm_status st = tl_plan_read(&p, m, plan, len, source, err);
    if (st != GM_OK) {
        tl_plan_free(&p);
        return st;
    }
    gm_rtext t = {0};
    tl_ctx c = {.t = &t, .p = &p, .m = m, .o = o};
    c.l.left = MARGIN_LEFT;
    c.l.width = o->width < 200 ? 200 : o->width > 20000 ? 20000 : o->width; /* the grids scale with it */
    c.l.px_per_pos = c.l.width / (double)p.ncols;
    double y = layout(&c, &p);
    /* The lanes' height is known before drawing: count the streams the same way. */
    gm_rtext body = {0};
    c.t = &body;
    for (size_t r = 0; r < p.n_regions && st == GM_OK; r++) st = draw_panel(&c, r);
    y += tl_draw_lanes(&body, &p, m, &c.l, y);
    tl_draw_position_axis(&body, &p, &c.l, y + 4);
    y = legend(&c, y + 44);
    c.t = &t;
    header(&c, MARGIN_LEFT + c.l.width + MARGIN_RIGHT + 80, y + 10);
    title_block(&c);
    gm_rt_put(&t, body.buf ? body.buf : "", body.len);
    gm_rt_puts(&t, "</svg>\n");
    if (body.failed) t.failed = true;
    gm_rt_free(&body);
    tl_plan_free(&p);
    if (st == GM_OK) *svg = gm_rt_take(&t, svg_len);
    gm_rt_free(&t);
    if (st != GM_OK || !*svg) return gm_error_set(err, GM_ERR_NOMEM, "%s: out of memory drawing the timeline", source);
    return GM_OK;
}
