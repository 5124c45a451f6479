/*
 * test_report.c — the pictures (graphmem/report.h): the memory timeline SVG of the embedded
 * example has one box per symbol with its title, the lower-bound line and the peak sit where
 * the geometry says, a 50,000-symbol plan is aggregated into a bounded file, bad plans are
 * refused naming the place, and the DOT graph has its clusters, highlights and escapes. Issue
 * 26: Const/Data/Variable positions get no column, the largest tensors are labelled in their
 * boxes (or beside them), and the DOT draws a clean node's control edges as one bundle, its
 * legend first and its trunk straight.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "graphmem/io.h"
#include "graphmem/passes.h"
#include "graphmem/plan.h"
#include "graphmem/report.h"

/* Occurrences of needle (one pass: strstr in a loop is quadratic under ASan, which measures
 * the whole haystack on every call). */
static size_t count(const char *hay, const char *needle)
{
    size_t n = 0, h = strlen(hay), k = strlen(needle);
    for (size_t i = 0; i + k <= h; i++)
        if (hay[i] == needle[0] && memcmp(hay + i, needle, k) == 0) n++;
    return n;
}

/* The number after `attr="` in the first element that starts with `start`. */
static double attr_after(const char *text, const char *start, const char *attr)
{
    const char *e = strstr(text, start);
    if (!e) fail_msg("'%s' not found", start);
    char key[64];
    snprintf(key, sizeof key, " %s=\"", attr);
    const char *a = strstr(e, key);
    const char *end = strchr(e, '>');
    if (!a || a > end) fail_msg("'%s' has no %s", start, attr);
    return strtod(a + strlen(key), NULL);
}

typedef struct planned {
    gm_model *m;
    gm_pass_report rep;
    gm_plan *plan;
} planned;

static void plan_embedded(planned *p)
{
    gm_error err;
    memset(p, 0, sizeof *p);
    if (gm_model_read_embedded_example(&p->m, &err) != GM_OK) fail_msg("%s", err.message);
    gm_pass_set avail = 0;
    if (gm_passes_run(p->m, GM_PASS_SET_ALL, &p->rep, &avail, &err) != GM_OK) fail_msg("%s", err.message);
    gm_plan_options o;
    gm_plan_options_init(&o);
    o.report = &p->rep;
    o.threads = 1;
    if (gm_plan_build(p->m, &o, &p->plan, &err) != GM_OK) fail_msg("%s", err.message);
    assert_non_null(p->plan->text);
}

static void planned_free(planned *p)
{
    gm_plan_free(p->plan);
    gm_pass_report_free(&p->rep);
    gm_model_free(p->m);
}

static char *svg_of(const gm_model *m, const char *plan, const gm_svg_options *o, size_t *len)
{
    gm_error err;
    char *svg = NULL;
    size_t n = 0;
    if (gm_report_svg_timeline(m, plan, strlen(plan), "test.plan.json", o, &svg, &n, &err) != GM_OK)
        fail_msg("svg: %s", err.message);
    assert_int_equal(strlen(svg), n);
    if (len) *len = n;
    return svg;
}

/* One box per symbol of the embedded example, each with a title naming it; inserted copies
 * hatched; the root element standalone SVG 1.1. */
static void test_svg_embedded_boxes(void **state)
{
    (void)state;
    planned p;
    plan_embedded(&p);
    char *svg = svg_of(p.m, p.plan->text, NULL, NULL);
    assert_non_null(strstr(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\""));
    assert_non_null(strstr(svg, "</svg>\n"));
    cJSON *j = cJSON_Parse(p.plan->text);
    const cJSON *syms = cJSON_GetObjectItem(j, "symbols");
    size_t boxes = 0;
    for (const cJSON *s = syms->child; s; s = s->next) {
        const char *id = cJSON_GetObjectItem(s, "id")->valuestring;
        if (!strcmp(cJSON_GetObjectItem(s, "region")->valuestring, "dynamic")) continue;
        char title[256];
        snprintf(title, sizeof title, "<title>%s\n", id);
        if (count(svg, title) != 1) fail_msg("symbol %s: %zu titles", id, count(svg, title));
        boxes++;
    }
    assert_int_equal(boxes, 32);
    assert_int_equal(count(svg, "<rect class=\"b "), boxes);
    /* a title says region, offset, size, lifetime and anchors */
    assert_non_null(strstr(svg, "<title>mm1_out_0\nfeature_map (hbm): offset "));
    assert_non_null(strstr(svg, "anchors: mm1:out0, relu1:in0</title>"));
    /* the copy the subgraph pass put before the While is hatched and says why */
    const char *copy = strstr(svg, "<title>refine_input_0_Memcpy_out_0\n");
    assert_non_null(copy);
    const char *rect = copy;
    while (rect > svg && strncmp(rect, "<rect ", 6) != 0) rect--;
    assert_int_equal(strncmp(rect, "<rect class=\"b ins\"", 19), 0);
    assert_non_null(strstr(copy, "inserted copy, by subgraph: While input shared with other readers</title>"));
    /* three panels (feature map, zero copy, fixed), one bound line, two stream lanes */
    assert_int_equal(count(svg, "<rect class=\"frame\""), 3);
    assert_int_equal(count(svg, "<line class=\"lb\""), 1);
    assert_non_null(strstr(svg, ">stream 0</text>"));
    assert_non_null(strstr(svg, ">stream 1</text>"));
    assert_true(count(svg, "<rect class=\"ni\"") == p.rep.n_nodes); /* every inserted node in its lane */
    cJSON_Delete(j);
    gm_report_free(svg);
    planned_free(&p);
}

/* A plan written by hand: the bound line and the peak where the documented geometry puts them. */
static const char *k_small_plan =
    "{\"graphmem_plan\":1,\"model\":\"m&<1>\",\"summary\":{\"feature_map_bytes\":4096,\"lower_bound_bytes\":2048},"
    "\"order\":[\"n0\",\"n1\",\"n2\",\"n&3\"],"
    "\"regions\":[{\"name\":\"feature_map\",\"memory_type\":\"hbm\",\"size\":4096,\"align\":512}],"
    "\"symbols\":["
    "{\"id\":\"a\",\"anchors\":[{\"node\":\"n0\",\"out\":0}],\"region\":\"feature_map\",\"memory_type\":\"hbm\","
    "\"offset\":0,\"size\":1024,\"lifetime\":[0,1],\"streams\":[0]},"
    "{\"id\":\"q\\\"&<x>\",\"anchors\":[{\"node\":\"n1\",\"out\":0}],\"region\":\"feature_map\",\"memory_type\":\"hbm\","
    "\"offset\":1024,\"size\":2048,\"lifetime\":[1,2],\"streams\":[0]},"
    "{\"id\":\"d\",\"anchors\":[],\"region\":\"dynamic\",\"memory_type\":\"hbm\",\"offset\":null,\"size\":0,"
    "\"lifetime\":[0,3]}]}";

static void test_svg_bound_and_peak(void **state)
{
    (void)state;
    char *svg = svg_of(NULL, k_small_plan, NULL, NULL);
    double fy = attr_after(svg, "<rect class=\"frame\"", "y"), fh = attr_after(svg, "<rect class=\"frame\"", "height");
    double fx = attr_after(svg, "<rect class=\"frame\"", "x"), fw = attr_after(svg, "<rect class=\"frame\"", "width");
    assert_true(fh > 100 && fw == 1200);
    /* address a is at y + h - a * h / 4096: the bound (2048) half way up */
    assert_true(fabs(attr_after(svg, "<line class=\"lb\"", "y1") - (fy + fh / 2)) < 0.06);
    assert_true(fabs(attr_after(svg, "<line class=\"lb\"", "y2") - (fy + fh / 2)) < 0.06);
    /* box a: positions [0, 2) of 4 across, addresses [0, 1024) */
    const char *a = strstr(svg, "<title>a\n");
    assert_non_null(a);
    while (strncmp(a, "<rect ", 6) != 0) a--;
    assert_true(fabs(attr_after(a, "<rect", "x") - fx) < 0.06);
    assert_true(fabs(attr_after(a, "<rect", "width") - fw / 2) < 0.06);
    assert_true(fabs(attr_after(a, "<rect", "y") - (fy + fh * 3 / 4)) < 0.06);
    assert_true(fabs(attr_after(a, "<rect", "height") - fh / 4) < 0.06);
    /* the peak: 3 KiB live at position 1, in the middle of that position */
    assert_non_null(strstr(svg, ">peak 3 KiB live at 1 (n1)</text>"));
    assert_true(fabs(attr_after(svg, "<line class=\"peak\"", "x1") - (fx + fw * 1.5 / 4)) < 0.06);
    /* the dynamic symbol is counted, not drawn; no model: no lanes */
    assert_int_equal(count(svg, "<rect class=\"b "), 2);
    assert_non_null(strstr(svg, "3 symbols, 1 of run-time size (not drawn)"));
    assert_null(strstr(svg, "streams: the node"));
    /* names escaped */
    assert_non_null(strstr(svg, "<title>q&quot;&amp;&lt;x&gt;\n"));
    assert_non_null(strstr(svg, "memory timeline: m&amp;&lt;1&gt;</text>"));
    assert_null(strstr(svg, "q\"&<x>"));
    gm_report_free(svg);
}

/* Two feature maps: each gets the witness of its memory type as its bound. */
static void test_svg_bound_per_memory_type(void **state)
{
    (void)state;
    const char *plan =
        "{\"graphmem_plan\":1,\"model\":\"two\",\"summary\":{\"lower_bound_bytes\":3072,"
        "\"lower_bound_witness\":[\"h\",\"p\"]},\"order\":[\"a\",\"b\"],"
        "\"regions\":[{\"name\":\"feature_map\",\"memory_type\":\"hbm\",\"size\":4096},"
        "{\"name\":\"feature_map\",\"memory_type\":\"p2p\",\"size\":2048}],\"symbols\":["
        "{\"id\":\"h\",\"region\":\"feature_map\",\"memory_type\":\"hbm\",\"offset\":0,\"size\":1024,\"lifetime\":[0,1]},"
        "{\"id\":\"p\",\"region\":\"feature_map\",\"memory_type\":\"p2p\",\"offset\":0,\"size\":2048,\"lifetime\":[0,1]}]}";
    char *svg = svg_of(NULL, plan, NULL, NULL);
    assert_int_equal(count(svg, "<line class=\"lb\""), 2);
    assert_non_null(strstr(svg, "<title>lower bound 1024 bytes</title>"));
    assert_non_null(strstr(svg, "<title>lower bound 2048 bytes</title>"));
    gm_report_free(svg);
}

/* A plan of n symbols: random lifetimes and offsets, deterministic. */
static char *big_plan(size_t n)
{
    size_t cap = n * 200 + 4096, len = 0;
    char *b = malloc(cap);
    assert_non_null(b);
    len += (size_t)snprintf(b + len, cap - len,
                            "{\"graphmem_plan\":1,\"model\":\"big\",\"summary\":{\"lower_bound_bytes\":%zu},\"order\":[",
                            (size_t)60 << 20);
    for (size_t i = 0; i < n; i++) len += (size_t)snprintf(b + len, cap - len, "%s\"n%zu\"", i ? "," : "", i);
    len += (size_t)snprintf(b + len, cap - len,
                            "],\"regions\":[{\"name\":\"feature_map\",\"memory_type\":\"hbm\",\"size\":%zu}],\"symbols\":[",
                            (size_t)64 << 20);
    uint64_t s = 12345;
    for (size_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        size_t first = (size_t)(s >> 33) % n, life = 1 + (size_t)(s >> 20) % 40, size = 512 * (1 + (s >> 50) % 16);
        if (i % 500 == 0) life = n / 4, size = (size_t)1 << 20; /* some large ones */
        size_t last = first + life < n ? first + life : n - 1;
        size_t off = ((size_t)(s >> 8) % ((64u << 20) - size)) & ~(size_t)511;
        len += (size_t)snprintf(b + len, cap - len,
                                "%s{\"id\":\"s%zu\",\"anchors\":[{\"node\":\"n%zu\",\"out\":0}],\"region\":\"feature_map\","
                                "\"memory_type\":\"hbm\",\"offset\":%zu,\"size\":%zu,\"lifetime\":[%zu,%zu]}",
                                i ? "," : "", i, first, off, size, first, last);
    }
    snprintf(b + len, cap - len, "]}");
    return b;
}

static void test_svg_aggregates_50k(void **state)
{
    (void)state;
    char *plan = big_plan(50000);
    gm_svg_options o;
    gm_svg_options_init(&o);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    size_t len = 0;
    char *svg = svg_of(NULL, plan, &o, &len);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    size_t boxes = count(svg, "<rect class=\"b ");
    size_t cells = count(svg, "<rect class=\"a");
    print_message("  50,000 symbols: %zu bytes, %zu boxes, %zu coverage rects, %.0f ms\n", len, boxes, cells,
                  (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
    assert_non_null(strstr(svg, "50000 symbols (small boxes binned into coverage cells)"));
    assert_true(boxes >= 50 && boxes <= o.max_boxes); /* the large ones stay boxes with titles */
    assert_true(cells > 100);
    /* bounded by the pixel grid: 600 x 160 cells at most, well under the symbols' count */
    assert_true(cells <= 600 * 160);
    assert_true(len < 2u * 1024 * 1024);
    /* without aggregation the same plan is many times larger: aggregation is what bounds it */
    o.aggregate_above = 1000000;
    size_t full = 0;
    char *svg2 = svg_of(NULL, plan, &o, &full);
    assert_int_equal(count(svg2, "<rect class=\"b "), 50000);
    assert_true(full > 3 * len);
    gm_report_free(svg2);
    gm_report_free(svg);
    free(plan);
}

static void expect_svg_error(const char *plan, const char *needle)
{
    gm_error err;
    char *svg = (char *)"untouched";
    assert_int_equal(gm_report_svg_timeline(NULL, plan, strlen(plan), "bad.plan.json", NULL, &svg, NULL, &err),
                     GM_ERR_INPUT);
    assert_null(svg);
    if (!strstr(err.message, "bad.plan.json") || !strstr(err.message, needle))
        fail_msg("message '%s' lacks '%s'", err.message, needle);
}

static void test_svg_bad_plans(void **state)
{
    (void)state;
    expect_svg_error("not json", "not a graphmem plan");
    expect_svg_error("{\"graphmem_plan\":2}", "not a graphmem plan");
    expect_svg_error("{\"graphmem_plan\":1,\"order\":[],\"regions\":[]}", "\"symbols\" missing");
    expect_svg_error("{\"graphmem_plan\":1,\"order\":[],\"regions\":[],\"symbols\":[{\"id\":\"s\",\"region\":"
                     "\"feature_map\",\"memory_type\":\"hbm\"}]}",
                     "symbol 's' is in region feature_map (hbm), which \"regions\" does not list");
    expect_svg_error("{\"graphmem_plan\":1,\"order\":[],\"regions\":[{\"name\":\"fixed\",\"memory_type\":\"hbm\","
                     "\"size\":8}],\"symbols\":[{\"id\":\"s\",\"region\":\"fixed\",\"memory_type\":\"hbm\",\"offset\":0}]}",
                     "symbol 's' needs offset, size and lifetime");
    expect_svg_error("{\"graphmem_plan\":1,\"order\":[],\"regions\":[{\"name\":\"fixed\",\"memory_type\":\"hbm\","
                     "\"size\":8}],\"symbols\":[{\"id\":\"s\",\"region\":\"fixed\",\"memory_type\":\"hbm\",\"offset\":0,"
                     "\"size\":8,\"lifetime\":[3,1]}]}",
                     "symbol 's' has lifetime [3, 1]");
    expect_svg_error("{\"graphmem_plan\":1,\"order\":[\"a\"],\"regions\":[{\"name\":\"fixed\",\"memory_type\":\"hbm\","
                     "\"size\":8}],\"symbols\":[{\"id\":\"s\",\"region\":\"fixed\",\"memory_type\":\"hbm\",\"offset\":0,"
                     "\"size\":8,\"lifetime\":[0,1e15]}]}",
                     "symbol 's' lives to position 1000000000000000, past the order's 1");
    expect_svg_error("{\"graphmem_plan\":1,\"order\":[\"a\"],\"regions\":[{\"name\":\"fixed\",\"memory_type\":\"hbm\","
                     "\"size\":8}],\"symbols\":[{\"id\":\"s\",\"region\":\"fixed\",\"memory_type\":\"hbm\",\"offset\":1e300,"
                     "\"size\":8,\"lifetime\":[0,0]}]}",
                     "symbol 's' needs offset, size and lifetime");
}

/* A structural parse check of DOT: strings closed, braces and brackets balanced outside them,
 * every statement line ending in ';', '{' or '}'. */
static void dot_parse_check(const char *dot)
{
    int braces = 0, brackets = 0;
    bool in_str = false;
    for (const char *c = dot; *c; c++) {
        if (in_str) {
            if (*c == '\\' && c[1]) c++;
            else if (*c == '"') in_str = false;
            else if (*c == '\n') fail_msg("newline inside a DOT string at offset %td", c - dot);
            continue;
        }
        if (*c == '"') in_str = true;
        else if (*c == '{') braces++;
        else if (*c == '}') braces--;
        else if (*c == '[') brackets++;
        else if (*c == ']') brackets--;
        else if (*c == '\n' && c > dot && !strchr(";{}", c[-1])) fail_msg("statement not ended at offset %td", c - dot);
        if (braces < 0 || brackets < 0) fail_msg("unbalanced at offset %td", c - dot);
    }
    assert_false(in_str);
    assert_int_equal(braces, 0);
    assert_int_equal(brackets, 0);
}

static void test_dot_embedded(void **state)
{
    (void)state;
    planned p;
    plan_embedded(&p);
    gm_error err;
    char *dot = NULL;
    size_t len = 0;
    assert_int_equal(gm_report_dot_graph(p.m, &p.rep, &dot, &len, &err), GM_OK);
    assert_int_equal(strlen(dot), len);
    dot_parse_check(dot);
    assert_int_equal(strncmp(dot, "digraph \"train_step\" {", 22), 0);
    /* the four bodies (While cond and body, If then and else) as clusters, entered from their parents */
    assert_int_equal(gm_model_graph_count(p.m), 5);
    assert_int_equal(count(dot, "subgraph cluster_g"), 4);
    assert_non_null(strstr(dot, "label=\"refine_body (body of refine)\""));
    assert_int_equal(count(dot, "[lhead=cluster_g"), 4);
    /* every inserted node filled, with its pass and reason as tooltip */
    assert_true(p.rep.n_nodes >= 5);
    for (size_t i = 0; i < p.rep.n_nodes; i++) {
        char want[512];
        snprintf(want, sizeof want, "label=\"%s\\n%s\"", p.rep.nodes[i].node, p.rep.nodes[i].type);
        const char *decl = strstr(dot, want);
        if (!decl) fail_msg("inserted node %s not declared", p.rep.nodes[i].node);
        const char *eol = strchr(decl, '\n');
        const char *style = strstr(decl, "style=\"rounded,filled,bold\"");
        snprintf(want, sizeof want, "tooltip=\"inserted by %s ", gm_pass_name(p.rep.nodes[i].pass));
        const char *tip = strstr(decl, want);
        assert_true(style && style < eol && tip && tip < eol);
    }
    assert_non_null(strstr(dot, "While input shared with other readers\""));
    /* the edges those insertions rewired: red and bold; plain ones are not */
    assert_true(count(dot, ", color=red, penwidth=2.5];") >= p.rep.n_nodes + 1); /* + the legend's */
    assert_non_null(strstr(dot, "mm1:out0 -> relu1:in0\"];"));
    assert_non_null(strstr(dot, "[style=dashed, color=\"#888888\"];")); /* a plain control edge */
    gm_report_free(dot);
    planned_free(&p);
}

static void test_dot_escapes(void **state)
{
    (void)state;
    const char *json =
        "{\"graphmem\":1,\"name\":\"q\\\"m\",\"graphs\":[{\"name\":\"root\",\"nodes\":["
        "{\"name\":\"a\\\"b\",\"type\":\"Data\",\"attrs\":{\"index\":0},\"outputs\":[{\"dtype\":\"float32\",\"shape\":[4]}]},"
        "{\"name\":\"c\\\\d&e\",\"type\":\"Relu\",\"inputs\":[\"a\\\"b:0\"],\"outputs\":[{\"dtype\":\"float32\",\"shape\":[4]}]},"
        "{\"name\":\"out\",\"type\":\"NetOutput\",\"inputs\":[\"c\\\\d&e:0\"]}]}]}";
    gm_error err;
    gm_model *m = NULL;
    if (gm_model_read_json(json, strlen(json), "esc.json", &m, &err) != GM_OK) fail_msg("%s", err.message);
    char *dot = NULL;
    assert_int_equal(gm_report_dot_graph(m, NULL, &dot, NULL, &err), GM_OK);
    dot_parse_check(dot);
    assert_non_null(strstr(dot, "digraph \"q\\\"m\" {"));
    assert_non_null(strstr(dot, "label=\"a\\\"b\\nData\""));
    assert_non_null(strstr(dot, "label=\"c\\\\d&e\\nRelu\""));
    assert_non_null(strstr(dot, "tooltip=\"a\\\"b:out0 -> c\\\\d&e:in0\"];"));
    assert_int_equal(count(dot, "color=red"), 1); /* no report: nothing highlighted but the legend's sample */
    gm_report_free(dot);
    gm_model_free(m);
}

static gm_model *model_of(const char *json)
{
    gm_error err;
    gm_model *m = NULL;
    if (gm_model_read_json(json, strlen(json), "test.json", &m, &err) != GM_OK) fail_msg("%s", err.message);
    return m;
}

static bool is_source_type(const char *type)
{
    return !strcmp(type, "Data") || !strcmp(type, "Const") || !strcmp(type, "Variable") || !strcmp(type, "RefData");
}

/* The embedded example's 15 Const/Data/Variable positions (7 in the root, 8 in its bodies) get
 * no column: its lanes show the 33 computing nodes only; without the model nothing is folded. */
static void test_svg_folds_sources(void **state)
{
    (void)state;
    planned p;
    plan_embedded(&p);
    cJSON *j = cJSON_Parse(p.plan->text);
    size_t order = 0, computing = 0;
    for (const cJSON *e = cJSON_GetObjectItem(j, "order")->child; e; e = e->next, order++) {
        const gm_node *n = gm_model_find_node(p.m, e->valuestring);
        assert_non_null(n);
        computing += !is_source_type(gm_node_type(n));
    }
    assert_int_equal(order, 48);
    assert_int_equal(computing, 33);
    char *svg = svg_of(p.m, p.plan->text, NULL, NULL);
    assert_non_null(strstr(svg, "48 positions, 15 of them Const/Data/Variable, folded"));
    assert_int_equal(count(svg, "<rect class=\"n\" x=") + count(svg, "<rect class=\"ni\" x="), computing);
    assert_null(strstr(svg, " (Data), stream"));
    assert_null(strstr(svg, " (Const), stream"));
    assert_null(strstr(svg, " (Variable), stream"));
    assert_non_null(strstr(svg, "execution position (Const/Data/Variable positions folded)"));
    gm_report_free(svg);
    svg = svg_of(NULL, p.plan->text, NULL, NULL);
    assert_null(strstr(svg, "folded"));
    gm_report_free(svg);
    cJSON_Delete(j);
    planned_free(&p);
}

/* A weight, an input, then three computing nodes: the boxes span the computing nodes' columns
 * (a third of the width each), a tensor a source hands over starting at the next computing
 * node's column; the axis names plan positions. */
static void test_svg_fold_geometry(void **state)
{
    (void)state;
    gm_model *m = model_of("{\"graphmem\":1,\"name\":\"fold\",\"graphs\":[{\"name\":\"root\",\"nodes\":["
                           "{\"name\":\"w\",\"type\":\"Const\",\"outputs\":[{\"dtype\":\"float32\",\"shape\":[4]}]},"
                           "{\"name\":\"x\",\"type\":\"Data\",\"attrs\":{\"index\":0},\"outputs\":[{\"dtype\":\"float32\",\"shape\":[4]}]},"
                           "{\"name\":\"a\",\"type\":\"Add\",\"inputs\":[\"x:0\",\"w:0\"],\"outputs\":[{\"dtype\":\"float32\",\"shape\":[4]}]},"
                           "{\"name\":\"b\",\"type\":\"Relu\",\"inputs\":[\"a:0\"],\"outputs\":[{\"dtype\":\"float32\",\"shape\":[4]}]},"
                           "{\"name\":\"o\",\"type\":\"NetOutput\",\"inputs\":[\"b:0\"]}]}]}");
    const char *plan =
        "{\"graphmem_plan\":1,\"model\":\"fold\",\"order\":[\"w\",\"x\",\"a\",\"b\",\"o\"],"
        "\"regions\":[{\"name\":\"feature_map\",\"memory_type\":\"hbm\",\"size\":4096}],\"symbols\":["
        "{\"id\":\"x_out_0\",\"region\":\"feature_map\",\"memory_type\":\"hbm\",\"offset\":0,\"size\":1024,\"lifetime\":[1,2]},"
        "{\"id\":\"a_out_0\",\"region\":\"feature_map\",\"memory_type\":\"hbm\",\"offset\":1024,\"size\":1024,\"lifetime\":[2,3]},"
        "{\"id\":\"b_out_0\",\"region\":\"feature_map\",\"memory_type\":\"hbm\",\"offset\":2048,\"size\":1024,\"lifetime\":[3,4]}]}";
    char *svg = svg_of(m, plan, NULL, NULL);
    double fx = attr_after(svg, "<rect class=\"frame\"", "x"), fw = attr_after(svg, "<rect class=\"frame\"", "width");
    struct {
        const char *title;
        double x, w;
    } want[] = {{"<title>x_out_0\n", 0, 1}, {"<title>a_out_0\n", 0, 2}, {"<title>b_out_0\n", 1, 2}};
    for (size_t i = 0; i < 3; i++) {
        const char *r = strstr(svg, want[i].title);
        assert_non_null(r);
        while (strncmp(r, "<rect ", 6) != 0) r--;
        assert_true(fabs(attr_after(r, "<rect", "x") - (fx + fw * want[i].x / 3)) < 0.06);
        assert_true(fabs(attr_after(r, "<rect", "width") - fw * want[i].w / 3) < 0.06);
    }
    assert_non_null(strstr(svg, "5 positions, 2 of them Const/Data/Variable, folded"));
    assert_int_equal(count(svg, "<rect class=\"n\" x="), 3); /* a, b, o */
    assert_non_null(strstr(svg, "<title>2: a (Add), stream 0</title>"));
    /* the first tick is column 0, position 2 (a) */
    assert_non_null(strstr(svg, "text-anchor=\"middle\">2</text>"));
    assert_null(strstr(svg, "text-anchor=\"middle\">0</text>"));
    gm_report_free(svg);
    gm_model_free(m);
}

/* The largest tensors by bytes get a label in their box, name (less "_out_0") and size; a long
 * name is cut from the left; one 32 times smaller than the largest gets none. */
static void test_svg_labels(void **state)
{
    (void)state;
    const char *plan =
        "{\"graphmem_plan\":1,\"model\":\"labels\",\"order\":[\"a\",\"b\",\"c\",\"d\"],"
        "\"regions\":[{\"name\":\"feature_map\",\"memory_type\":\"hbm\",\"size\":4096}],\"symbols\":["
        "{\"id\":\"tiny_out_0\",\"region\":\"feature_map\",\"memory_type\":\"hbm\",\"offset\":3072,\"size\":16,\"lifetime\":[1,3]},"
        "{\"id\":\"a/very/long/path/of/modules/that/goes/on/and/on/and/on/and/on/and/on/and/on/and/on/and/on/&end_out_0\","
        "\"region\":\"feature_map\",\"memory_type\":\"hbm\",\"offset\":2048,\"size\":1024,\"lifetime\":[0,0]},"
        "{\"id\":\"big_tensor_out_0\",\"region\":\"feature_map\",\"memory_type\":\"hbm\",\"offset\":0,\"size\":2048,"
        "\"lifetime\":[0,3]}]}";
    char *svg = svg_of(NULL, plan, NULL, NULL);
    assert_int_equal(count(svg, "<g class=\"label\">"), 2);
    /* the largest first: two lines in its box, at its top left */
    const char *g = strstr(svg, "<g class=\"label\">");
    assert_non_null(strstr(g, ">big_tensor</text><text class=\"lbl\""));
    assert_true(strstr(g, "<tspan class=\"lsz\">2 KiB</tspan>") < strstr(g, "</g>"));
    const char *box = strstr(svg, "<title>big_tensor_out_0\n");
    while (strncmp(box, "<rect ", 6) != 0) box--;
    double bx = attr_after(box, "<rect", "x"), by = attr_after(box, "<rect", "y");
    double bw = attr_after(box, "<rect", "width"), bh = attr_after(box, "<rect", "height");
    double tx = attr_after(g, "<rect class=\"lbg\"", "x"), ty = attr_after(g, "<rect class=\"lbg\"", "y");
    double tw = attr_after(g, "<rect class=\"lbg\"", "width"), th = attr_after(g, "<rect class=\"lbg\"", "height");
    assert_true(tx > bx && ty > by && tx + tw < bx + bw && ty + th < by + bh);
    /* the long name: its end, escaped, after an ellipsis */
    const char *cut = strstr(svg, ">\xe2\x80\xa6");
    assert_non_null(cut);
    assert_non_null(strstr(cut, "/&amp;end"));
    assert_null(strstr(svg, "\">a/very/long")); /* only in its title */
    assert_null(strstr(svg, "\">tiny"));
    assert_int_equal(count(svg, "<rect class=\"b "), 3); /* labels are no boxes */
    gm_report_free(svg);
}

/* The clean node's 13 control edges: one edge to a junction point, which fans out to each; the
 * legend before the first node, so Graphviz puts it at the left. */
static void test_dot_bundle_and_legend(void **state)
{
    (void)state;
    planned p;
    plan_embedded(&p);
    gm_error err;
    char *dot = NULL;
    assert_int_equal(gm_report_dot_graph(p.m, &p.rep, &dot, NULL, &err), GM_OK);
    dot_parse_check(dot);
    const gm_node *clean = gm_model_find_node(p.m, "atomic_addr_clean");
    assert_non_null(clean);
    size_t k = gm_node_control_output_count(clean);
    assert_int_equal(k, 13);
    char want[128];
    long long id = (long long)gm_node_topo_id(clean);
    snprintf(want, sizeof want, "  n%lld -> ", id);
    assert_int_equal(count(dot, want), 1);
    snprintf(want, sizeof want, "  n%lld -> j%lld [style=dashed, arrowhead=none, label=\" 13 control edges\"", id, id);
    assert_non_null(strstr(dot, want));
    snprintf(want, sizeof want, "  j%lld [shape=point", id);
    assert_non_null(strstr(dot, want));
    snprintf(want, sizeof want, "  j%lld -> n", id);
    assert_int_equal(count(dot, want), k);
    assert_non_null(strstr(dot, "rankdir=TB"));
    assert_true(strstr(dot, "subgraph cluster_legend") < strstr(dot, "  n0 [label="));
    assert_non_null(strstr(dot, "label=\"control edges, bundled\""));
    gm_report_free(dot);
    planned_free(&p);
}

/* A residual block: the nodes every path passes (a, add, r, out) are the trunk, in one group
 * and tied by invisible edges; the branch (b, c) and the Data are not. */
static void test_dot_trunk(void **state)
{
    (void)state;
#define T4 "\"outputs\":[{\"dtype\":\"float32\",\"shape\":[4]}]"
    gm_model *m = model_of("{\"graphmem\":1,\"name\":\"res\",\"graphs\":[{\"name\":\"root\",\"nodes\":["
                           "{\"name\":\"x\",\"type\":\"Data\",\"attrs\":{\"index\":0}," T4 "},"
                           "{\"name\":\"a\",\"type\":\"Relu\",\"inputs\":[\"x:0\"]," T4 "},"
                           "{\"name\":\"b\",\"type\":\"Relu\",\"inputs\":[\"a:0\"]," T4 "},"
                           "{\"name\":\"c\",\"type\":\"Relu\",\"inputs\":[\"b:0\"]," T4 "},"
                           "{\"name\":\"add\",\"type\":\"Add\",\"inputs\":[\"c:0\",\"a:0\"]," T4 "},"
                           "{\"name\":\"r\",\"type\":\"Relu\",\"inputs\":[\"add:0\"]," T4 "},"
                           "{\"name\":\"out\",\"type\":\"NetOutput\",\"inputs\":[\"r:0\"]}]}]}");
#undef T4
    gm_error err;
    char *dot = NULL;
    assert_int_equal(gm_report_dot_graph(m, NULL, &dot, NULL, &err), GM_OK);
    dot_parse_check(dot);
    static const char *const names[] = {"x", "a", "b", "c", "add", "r", "out"};
    static const bool trunk[] = {false, true, false, false, true, true, true};
    for (size_t i = 0; i < 7; i++) {
        char want[64];
        snprintf(want, sizeof want, "  n%lld [label=\"", (long long)gm_node_topo_id(gm_model_find_node(m, names[i])));
        const char *decl = strstr(dot, want);
        assert_non_null(decl);
        const char *grp = strstr(decl, "group=trunk"), *eol = strchr(decl, '\n');
        if ((grp && grp < eol) != trunk[i]) fail_msg("%s: trunk %d expected", names[i], trunk[i]);
    }
    char want[96];
    snprintf(want, sizeof want, "  n%lld -> n%lld [style=invis", (long long)gm_node_topo_id(gm_model_find_node(m, "a")),
             (long long)gm_node_topo_id(gm_model_find_node(m, "add")));
    assert_non_null(strstr(dot, want));
    assert_int_equal(count(dot, "[style=invis, weight="), 3); /* a-add, add-r, r-out */
    /* the Data's edge pulls nothing; the Data is drawn small */
    assert_non_null(strstr(dot, "[weight=0, tooltip=\"x:out0 -> a:in0\"]"));
    assert_non_null(strstr(dot, "label=\"x\\nData\", color=\"#1f77b4\", fontsize=8"));
    gm_report_free(dot);
    gm_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_svg_embedded_boxes),
        cmocka_unit_test(test_svg_bound_and_peak),
        cmocka_unit_test(test_svg_bound_per_memory_type),
        cmocka_unit_test(test_svg_aggregates_50k),
        cmocka_unit_test(test_svg_bad_plans),
        cmocka_unit_test(test_dot_embedded),
        cmocka_unit_test(test_dot_escapes),
        cmocka_unit_test(test_svg_folds_sources),
        cmocka_unit_test(test_svg_fold_geometry),
        cmocka_unit_test(test_svg_labels),
        cmocka_unit_test(test_dot_bundle_and_legend),
        cmocka_unit_test(test_dot_trunk),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
