/*
 * test_bg_condition.c — the runtime graph builder's If/Case preparation (reference §6.9):
 * CalcChainConflictSolvePolicy with its PointFromInputs, and CalcSubgraphGuardersPolicy with the
 * guarders moved out and IdentityAddr plus-refs, on GE's unit-test cases (bg_condition_unittest).
 *
 * Graphs are JSON (single quotes stand for double quotes). A branch is given as its node list;
 * build() wraps the branches in a root graph whose If/Case `if` reads Data d0..d3 and feeds a
 * NetOutput with all its outputs. The scenario format checks copies and memory, not the
 * runtime builder's nodes, so the assertions are here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "graphmem/io.h"
#include "ir/ir.h"
#include "runtime/bg_condition.h"
#include "util/alloc.h"

/* ---- building graphs ---------------------------------------------------------------------- */

#define T "'outputs':[{'dtype':'float32','shape':[4]}]"
#define T2 "'outputs':[{'dtype':'float32','shape':[4]},{'dtype':'float32','shape':[4]}]"
#define IDATA(name, idx) "{'name':'" name "','type':'InnerData','attrs':{'index':" #idx "}," T "},"
#define NODE(name, type, ins) "{'name':'" name "','type':'" type "','inputs':[" ins "]," T "},"
#define NODE2(name, type, ins) "{'name':'" name "','type':'" type "','inputs':[" ins "]," T2 "},"
#define FREE(name, in)                                                                                                 \
    "{'name':'" name "','type':'FreeMemory','inputs':['" in "'],'attrs':{'_release_resource_index':0}},"
#define NOUT(name, ins) "{'name':'" name "','type':'InnerNetOutput','inputs':[" ins "]}"
#define DEFAULT_INPUTS "'d0:0','d1:0','d2:0','d3:0'"

static char *unquote(const char *q)
{
    char *s = strdup(q);
    for (char *p = s; *p; p++)
        if (*p == '\'') *p = '"';
    return s;
}

static void append(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int need = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (*len + (size_t)need + 1 > *cap) {
        *cap = (*len + (size_t)need + 1) * 2;
        *buf = realloc(*buf, *cap);
        assert_non_null(*buf);
    }
    va_start(ap, fmt);
    vsnprintf(*buf + *len, *cap - *len, fmt, ap);
    va_end(ap);
    *len += (size_t)need;
}

typedef struct spec {
    const char *type;        /* If / Case */
    size_t n_out;
    const char *const *branches;
    size_t nb;
    bool frame;              /* GE's execute-graph shape: subgraph 0 is a control frame */
    const char *inputs;      /* the If's inputs; DEFAULT_INPUTS when NULL */
    const char *root_nodes;  /* extra root nodes, each ending in ',' */
    const char *graphs;      /* extra graphs, each starting with ',' */
} spec;

static gm_model *load(const char *json_q)
{
    char *json = unquote(json_q);
    gm_model *m = NULL;
    gm_error err;
    gm_error_clear(&err);
    if (gm_model_read_json(json, strlen(json), "bg.json", &m, &err) != GM_OK) fail_msg("%s\n%s", err.message, json);
    free(json);
    return m;
}

static gm_model *build(const spec *s)
{
    char *b = NULL;
    size_t len = 0, cap = 0;
    append(&b, &len, &cap, "{'graphmem':1,'graphs':[{'name':'root','nodes':[");
    for (int i = 0; i < 4; i++)
        append(&b, &len, &cap, "{'name':'d%d','type':'Data','attrs':{'index':%d}," T "},", i, i);
    append(&b, &len, &cap, "%s{'name':'if','type':'%s','inputs':[%s],'subgraphs':[", s->root_nodes ? s->root_nodes : "",
           s->type, s->inputs ? s->inputs : DEFAULT_INPUTS);
    if (s->frame) append(&b, &len, &cap, "'frame',");
    for (size_t k = 0; k < s->nb; k++) append(&b, &len, &cap, "%s'b%zu'", k ? "," : "", k);
    append(&b, &len, &cap, "],'outputs':[");
    for (size_t i = 0; i < s->n_out; i++) append(&b, &len, &cap, "%s{'dtype':'float32','shape':[4]}", i ? "," : "");
    append(&b, &len, &cap, "]},{'name':'out','type':'NetOutput','inputs':[");
    for (size_t i = 0; i < s->n_out; i++) append(&b, &len, &cap, "%s'if:%zu'", i ? "," : "", i);
    append(&b, &len, &cap, "]}]}");
    if (s->frame) /* a control frame: no output node */
        append(&b, &len, &cap, ",{'name':'frame','parent':'if','nodes':[{'name':'ctl','type':'ControlFrame'}]}");
    for (size_t k = 0; k < s->nb; k++)
        append(&b, &len, &cap, ",{'name':'b%zu','parent':'if','nodes':[%s]}", k, s->branches[k]);
    append(&b, &len, &cap, "%s]}", s->graphs ? s->graphs : "");
    gm_model *m = load(b);
    free(b);
    return m;
}

static gm_node *node(const gm_model *m, const char *name)
{
    gm_node *n = gm_model_find_node(m, name);
    if (!n) fail_msg("no node '%s'", name);
    return n;
}

static size_t count_type(const gm_graph *g, const char *type)
{
    size_t k = 0;
    for (size_t i = 0; i < gm_graph_node_count(g); i++) k += strcmp(gm_node_type(gm_graph_node(g, i)), type) == 0;
    return k;
}

static size_t count_model_type(const gm_model *m, const char *type)
{
    size_t k = 0;
    for (size_t g = 0; g < gm_model_graph_count(m); g++) k += count_type(gm_model_graph(m, g), type);
    return k;
}

/* Asserts dst:in is fed by src:out. */
static void assert_edge(const gm_model *m, const char *src, int32_t out, const char *dst, size_t in)
{
    int32_t idx = -1;
    gm_node *p = gm_node_input(node(m, dst), in, &idx);
    if (!p || strcmp(gm_node_name(p), src) != 0 || idx != out) {
        fail_msg("%s:%zu is fed by %s:%d, expected %s:%d", dst, in, p ? gm_node_name(p) : "(nothing)", idx, src, out);
    }
}

static void assert_io(const gm_model *m, const char *name, const char *type, size_t k)
{
    gm_node *n = node(m, name);
    assert_string_equal(gm_node_type(n), type);
    assert_int_equal(gm_node_input_count(n), k);
    assert_int_equal(gm_node_output_count(n), k);
}

static void prepare_ok(gm_model *m)
{
    gm_error err;
    gm_error_clear(&err);
    if (gm_bg_condition_prepare_model(m, GM_BG_SHAPE_AUTO, &err) != GM_OK) fail_msg("%s", err.message);
}

static gm_graph *graph(const gm_model *m, const char *name)
{
    gm_graph *g = gm_model_find_graph(m, name);
    assert_non_null(g);
    return g;
}

/* ---- the branch view ---------------------------------------------------------------------- */

static void test_view_shapes(void **state)
{
    (void)state;
    const char *br[] = {IDATA("a_d0", 0) NOUT("a_o", "'a_d0:0'"), IDATA("b_d0", 0) NOUT("b_o", "'b_d0:0'")};
    spec s = {"Case", 1, br, 2, true, NULL, NULL, NULL};
    gm_model *m = build(&s);
    gm_bg_cond c;
    gm_error err;
    assert_int_equal(gm_bg_cond_view(node(m, "if"), GM_BG_SHAPE_AUTO, &c, &err), GM_OK);
    assert_int_equal(c.first_branch, 1);
    assert_int_equal(c.n_branches, 2);
    assert_int_equal(gm_bg_cond_view(node(m, "if"), GM_BG_SHAPE_CONTROL_FRAME, &c, &err), GM_OK);
    assert_int_equal(c.first_branch, 1);
    /* Taken as a branch, the control frame lacks an output node. */
    assert_int_equal(gm_bg_cond_view(node(m, "if"), GM_BG_SHAPE_BRANCHES, &c, &err), GM_ERR_INPUT);
    assert_non_null(strstr(err.message, "branch 'frame' has 0 output nodes"));
    assert_int_equal(gm_bg_cond_view(node(m, "d0"), GM_BG_SHAPE_AUTO, &c, &err), GM_ERR_INPUT);
    assert_non_null(strstr(err.message, "not an If/Case node"));
    gm_model_free(m);

    s.frame = false;
    s.type = "If";
    m = build(&s);
    assert_int_equal(gm_bg_cond_view(node(m, "if"), GM_BG_SHAPE_AUTO, &c, &err), GM_OK);
    assert_int_equal(c.first_branch, 0);
    assert_int_equal(c.n_branches, 2);
    assert_int_equal(c.n_outputs, 1);
    gm_model_free(m);
}

/* ---- CalcChainConflictSolvePolicy --------------------------------------------------------- */

static void calc_chain(gm_model *m, gm_bg_chain_policy *p)
{
    gm_bg_cond c;
    gm_error err;
    assert_int_equal(gm_bg_cond_view(node(m, "if"), GM_BG_SHAPE_AUTO, &c, &err), GM_OK);
    if (gm_bg_calc_chain_conflict_policy(&c, p, &err) != GM_OK) fail_msg("%s", err.message);
}

/* then {data1, Foo1(data1,data2)}, else {data0, Foo1(data0,data1)}: output 0 comes from input 1
 * in one branch and input 0 in the other; output 1 is computed in both. */
static void test_chain_conflict_index0(void **state)
{
    (void)state;
    const char *br[] = {
        IDATA("t_d1", 1) IDATA("t_d2", 2) NODE("t_foo", "Foo1", "'t_d1:0','t_d2:0'") NOUT("t_o", "'t_d1:0','t_foo:0'"),
        IDATA("e_d0", 0) IDATA("e_d1", 1) NODE("e_foo", "Foo1", "'e_d0:0','e_d1:0'") NOUT("e_o", "'e_d0:0','e_foo:0'"),
    };
    spec s = {"If", 2, br, 2, false, NULL, NULL, NULL};
    gm_model *m = build(&s);
    gm_bg_chain_policy p;
    calc_chain(m, &p);
    assert_int_equal(p.n_conflicts, 1);
    assert_int_equal(p.conflicts[0], 0);
    assert_int_equal(p.kind[0], GM_BG_CHAIN_CONFLICT);
    assert_int_equal(p.kind[1], GM_BG_CHAIN_NORMAL);
    gm_bg_chain_policy_free(&p);

    prepare_ok(m);
    assert_io(m, "if_PointFrom_0", "PointFromInputs", 1);
    assert_io(m, "if_PointFrom_1", "PointFromInputs", 1);
    assert_ptr_equal(gm_node_graph(node(m, "if_PointFrom_0")), graph(m, "b0"));
    assert_ptr_equal(gm_node_graph(node(m, "if_PointFrom_1")), graph(m, "b1"));
    assert_edge(m, "t_d1", 0, "if_PointFrom_0", 0);
    assert_edge(m, "if_PointFrom_0", 0, "t_o", 0);
    assert_edge(m, "t_foo", 0, "t_o", 1);
    assert_edge(m, "e_d0", 0, "if_PointFrom_1", 0);
    assert_edge(m, "if_PointFrom_1", 0, "e_o", 0);
    assert_edge(m, "e_foo", 0, "e_o", 1);
    assert_int_equal(count_model_type(m, "PointFromInputs"), 2);
    assert_int_equal(count_model_type(m, "IdentityAddr"), 0);
    gm_model_free(m);
}

/* Both branches return data1 at output 0: "all same", nothing inserted. */
static void test_chain_all_same(void **state)
{
    (void)state;
    const char *br[] = {
        IDATA("t_d1", 1) NODE("t_foo", "Foo", "'t_d1:0'") NOUT("t_o", "'t_d1:0','t_foo:0'"),
        IDATA("e_d1", 1) NODE("e_bar", "Bar", "'e_d1:0'") NOUT("e_o", "'e_d1:0','e_bar:0'"),
    };
    spec s = {"If", 2, br, 2, false, NULL, NULL, NULL};
    gm_model *m = build(&s);
    gm_bg_chain_policy p;
    calc_chain(m, &p);
    assert_int_equal(p.n_conflicts, 0);
    assert_int_equal(p.kind[0], GM_BG_CHAIN_ALL_SAME);
    assert_int_equal(p.same_input[0], 1);
    assert_int_equal(p.kind[1], GM_BG_CHAIN_NORMAL);
    assert_int_equal(p.same_input[1], -1);
    gm_bg_chain_policy_free(&p);
    size_t before = gm_model_node_count(m);
    prepare_ok(m);
    assert_int_equal(gm_model_node_count(m), before);
    assert_int_equal(count_model_type(m, "PointFromInputs"), 0);
    gm_model_free(m);
}

/* then {data1, foo1, foo2[0], foo2[1]} vs else {data1, data2, foo3, data0}: conflicts at 1 and
 * 3, one PointFromInputs with two inputs/outputs per branch. */
static void test_chain_two_conflicts_one_node(void **state)
{
    (void)state;
    const char *br[] = {
        IDATA("t_d1", 1) NODE("t_foo1", "Foo", "'t_d1:0'") NODE2("t_foo2", "Foo2", "'t_d1:0'")
            NOUT("t_o", "'t_d1:0','t_foo1:0','t_foo2:0','t_foo2:1'"),
        IDATA("e_d0", 0) IDATA("e_d1", 1) IDATA("e_d2", 2) NODE("e_foo3", "Foo", "'e_d0:0'")
            NOUT("e_o", "'e_d1:0','e_d2:0','e_foo3:0','e_d0:0'"),
    };
    spec s = {"If", 4, br, 2, false, NULL, NULL, NULL};
    gm_model *m = build(&s);
    gm_bg_chain_policy p;
    calc_chain(m, &p);
    assert_int_equal(p.n_conflicts, 2);
    assert_int_equal(p.conflicts[0], 1);
    assert_int_equal(p.conflicts[1], 3);
    assert_int_equal(p.kind[0], GM_BG_CHAIN_ALL_SAME);
    assert_int_equal(p.kind[2], GM_BG_CHAIN_NORMAL);
    gm_bg_chain_policy_free(&p);

    prepare_ok(m);
    assert_io(m, "if_PointFrom_0", "PointFromInputs", 2);
    assert_io(m, "if_PointFrom_1", "PointFromInputs", 2);
    assert_edge(m, "t_foo1", 0, "if_PointFrom_0", 0);
    assert_edge(m, "t_foo2", 1, "if_PointFrom_0", 1);
    assert_edge(m, "if_PointFrom_0", 0, "t_o", 1);
    assert_edge(m, "if_PointFrom_0", 1, "t_o", 3);
    assert_edge(m, "t_d1", 0, "t_o", 0);
    assert_edge(m, "t_foo2", 0, "t_o", 2);
    assert_edge(m, "e_d2", 0, "if_PointFrom_1", 0);
    assert_edge(m, "e_d0", 0, "if_PointFrom_1", 1);
    assert_edge(m, "if_PointFrom_1", 0, "e_o", 1);
    assert_edge(m, "if_PointFrom_1", 1, "e_o", 3);
    assert_edge(m, "e_foo3", 0, "e_o", 2);
    assert_int_equal(count_model_type(m, "PointFromInputs"), 2);
    gm_model_free(m);
}

/* Case with three branches in GE's execute-graph shape (subgraph 0 the control frame): output 0
 * is data0 everywhere, output 1 is computed in two branches and data1 in the third. */
static void test_chain_case_three_branches(void **state)
{
    (void)state;
    const char *br[] = {
        IDATA("a_d0", 0) NODE("a_foo", "Foo", "'a_d0:0'") NOUT("a_o", "'a_d0:0','a_foo:0'"),
        IDATA("b_d0", 0) IDATA("b_d1", 1) NOUT("b_o", "'b_d0:0','b_d1:0'"),
        IDATA("c_d0", 0) NODE("c_foo", "Foo", "'c_d0:0'") NOUT("c_o", "'c_d0:0','c_foo:0'"),
    };
    spec s = {"Case", 2, br, 3, true, NULL, NULL, NULL};
    gm_model *m = build(&s);
    gm_bg_chain_policy p;
    calc_chain(m, &p);
    assert_int_equal(p.n_conflicts, 1);
    assert_int_equal(p.conflicts[0], 1);
    assert_int_equal(p.kind[0], GM_BG_CHAIN_ALL_SAME);
    gm_bg_chain_policy_free(&p);

    prepare_ok(m);
    /* Named after the subgraph index: 1..3, the frame being 0; the frame is left alone. */
    assert_io(m, "if_PointFrom_1", "PointFromInputs", 1);
    assert_io(m, "if_PointFrom_2", "PointFromInputs", 1);
    assert_io(m, "if_PointFrom_3", "PointFromInputs", 1);
    assert_edge(m, "a_foo", 0, "if_PointFrom_1", 0);
    assert_edge(m, "if_PointFrom_1", 0, "a_o", 1);
    assert_edge(m, "b_d1", 0, "if_PointFrom_2", 0);
    assert_edge(m, "if_PointFrom_2", 0, "b_o", 1);
    assert_edge(m, "c_foo", 0, "if_PointFrom_3", 0);
    assert_edge(m, "if_PointFrom_3", 0, "c_o", 1);
    assert_int_equal(gm_graph_node_count(graph(m, "frame")), 1);
    assert_int_equal(count_model_type(m, "PointFromInputs"), 3);
    gm_model_free(m);
}

/* graphmem's model form: subgraph Data with _parent_node_index, NetOutput routing its inputs
 * to parent outputs by the input desc's _parent_node_index. */
static void test_chain_model_form(void **state)
{
    (void)state;
    gm_model *m = load(
        "{'graphmem':1,'graphs':[{'name':'root','nodes':["
        "{'name':'c','type':'Data','attrs':{'index':0}," T "},{'name':'x','type':'Data','attrs':{'index':1}," T "},"
        "{'name':'if','type':'If','inputs':['c:0','x:0'],'subgraphs':['then','else']," T2 "},"
        "{'name':'out','type':'NetOutput','inputs':['if:0','if:1']}]},"
        "{'name':'then','parent':'if','nodes':["
        "{'name':'t_d','type':'Data','attrs':{'_parent_node_index':1}," T "}," NODE("t_r", "Relu", "'t_d:0'")
        "{'name':'t_o','type':'NetOutput','inputs':['t_r:0','t_d:0'],"
        "'input_descs':[{'attrs':{'_parent_node_index':1}},{'attrs':{'_parent_node_index':0}}]}]},"
        "{'name':'else','parent':'if','nodes':["
        "{'name':'e_d','type':'Data','attrs':{'_parent_node_index':1}," T "}," NODE("e_r", "Relu", "'e_d:0'")
        "{'name':'e_o','type':'NetOutput','inputs':['e_r:0','e_r:0'],"
        "'input_descs':[{'attrs':{'_parent_node_index':0}},{'attrs':{'_parent_node_index':1}}]}]}]}");
    prepare_ok(m);
    /* Output 0: then returns x (t_o input 1), else computes it. */
    assert_io(m, "if_PointFrom_0", "PointFromInputs", 1);
    assert_edge(m, "t_d", 0, "if_PointFrom_0", 0);
    assert_edge(m, "if_PointFrom_0", 0, "t_o", 1);
    assert_edge(m, "t_r", 0, "t_o", 0);
    assert_edge(m, "e_r", 0, "if_PointFrom_1", 0);
    assert_edge(m, "if_PointFrom_1", 0, "e_o", 0);
    assert_edge(m, "e_r", 0, "e_o", 1);
    gm_model_free(m);
}

/* ---- CalcSubgraphGuardersPolicy ----------------------------------------------------------- */

static void assert_outer_guarder(const gm_model *m, const char *name, size_t out_idx)
{
    gm_node *g = node(m, name);
    assert_string_equal(gm_node_type(g), "FreeMemory");
    assert_ptr_equal(gm_node_graph(g), gm_model_root(m));
    assert_int_equal(gm_node_input_count(g), 1);
    assert_edge(m, "if", (int32_t)out_idx, name, 0);
    assert_int_equal(gm_attrs_get_int(gm_node_attr_list(g), GM_ATTR_RELEASE_RESOURCE_INDEX, -1), 0);
}

#define GUARDED(p) IDATA(p "_d0", 0) NODE(p "_foo", "Foo", "'" p "_d0:0'") FREE(p "_free", p "_foo:0")
#define PLAIN(p) IDATA(p "_d0", 0) NODE(p "_bar", "Bar", "'" p "_d0:0'")

static void test_if_move_guarder_out_all_branches_have_guarders(void **state)
{
    (void)state;
    const char *br[] = {GUARDED("t") NOUT("t_o", "'t_foo:0'"), GUARDED("e") NOUT("e_o", "'e_foo:0'")};
    spec s = {"If", 1, br, 2, false, NULL, NULL, NULL};
    gm_model *m = build(&s);
    prepare_ok(m);
    assert_int_equal(count_type(graph(m, "b0"), "FreeMemory"), 0);
    assert_int_equal(count_type(graph(m, "b1"), "FreeMemory"), 0);
    assert_int_equal(count_model_type(m, "IdentityAddr"), 0);
    assert_int_equal(count_type(gm_model_root(m), "FreeMemory"), 1);
    assert_outer_guarder(m, "if_FreeMemory_0", 0);
    assert_edge(m, "t_foo", 0, "t_o", 0);
    assert_edge(m, "e_foo", 0, "e_o", 0);
    assert_null(gm_model_find_node(m, "t_free"));
    gm_model_free(m);
}

static void test_if_else_plus_and_then_move_out_only_then_has_guarder(void **state)
{
    (void)state;
    const char *br[] = {GUARDED("t") NOUT("t_o", "'t_foo:0'"), PLAIN("e") NOUT("e_o", "'e_bar:0'")};
    spec s = {"If", 1, br, 2, false, NULL, NULL, NULL};
    gm_model *m = build(&s);
    prepare_ok(m);
    assert_int_equal(count_type(graph(m, "b0"), "FreeMemory"), 0);
    assert_int_equal(count_type(graph(m, "b0"), "IdentityAddr"), 0);
    assert_io(m, "if_Subgraph_1_AddResRef_", "IdentityAddr", 1);
    assert_ptr_equal(gm_node_graph(node(m, "if_Subgraph_1_AddResRef_")), graph(m, "b1"));
    assert_edge(m, "e_bar", 0, "if_Subgraph_1_AddResRef_", 0);
    assert_edge(m, "if_Subgraph_1_AddResRef_", 0, "e_o", 0);
    assert_outer_guarder(m, "if_FreeMemory_0", 0);
    assert_int_equal(count_model_type(m, "FreeMemory"), 1);
    gm_model_free(m);
}

static void test_if_then_plus_and_else_move_out_only_else_has_multiple_guarders(void **state)
{
    (void)state;
    const char *br[] = {
        PLAIN("t") NODE("t_bar2", "Bar", "'t_d0:0'") NOUT("t_o", "'t_bar:0','t_bar2:0'"),
        GUARDED("e") NODE("e_foo2", "Foo", "'e_d0:0'") FREE("e_free2", "e_foo2:0") NOUT("e_o", "'e_foo:0','e_foo2:0'"),
    };
    spec s = {"If", 2, br, 2, false, NULL, NULL, NULL};
    gm_model *m = build(&s);
    prepare_ok(m);
    assert_int_equal(count_type(graph(m, "b1"), "FreeMemory"), 0);
    assert_int_equal(count_type(graph(m, "b1"), "IdentityAddr"), 0);
    assert_io(m, "if_Subgraph_0_AddResRef_", "IdentityAddr", 2);
    assert_edge(m, "t_bar", 0, "if_Subgraph_0_AddResRef_", 0);
    assert_edge(m, "t_bar2", 0, "if_Subgraph_0_AddResRef_", 1);
    assert_edge(m, "if_Subgraph_0_AddResRef_", 0, "t_o", 0);
    assert_edge(m, "if_Subgraph_0_AddResRef_", 1, "t_o", 1);
    assert_outer_guarder(m, "if_FreeMemory_0", 0);
    assert_outer_guarder(m, "if_FreeMemory_1", 1);
    assert_int_equal(count_type(gm_model_root(m), "FreeMemory"), 2);
    gm_model_free(m);
}

static void assert_inner_data_branch(const gm_model *m, const char *g, const char *p, const char *name)
{
    const gm_graph *b = graph(m, g);
    assert_int_equal(gm_graph_node_count(b), 4);
    assert_int_equal(count_type(b, "InnerData"), 1);
    assert_int_equal(count_type(b, "Bar"), 1);
    assert_int_equal(count_type(b, "IdentityAddr"), 1);
    assert_int_equal(count_type(b, "InnerNetOutput"), 1);
    char d[64], o[64];
    snprintf(d, sizeof d, "%s_d0", p);
    snprintf(o, sizeof o, "%s_o", p);
    assert_io(m, name, "IdentityAddr", 1);
    assert_edge(m, d, 0, name, 0);
    assert_edge(m, name, 0, o, 0);
}

/* A branch returns its input, whose guarder is outside (GE marks the InnerData with
 * kNodeWithGuarderOutside): a reference inside, a guarder on the If output. */
static void test_if_inner_data_with_guarder_outside(void **state)
{
    (void)state;
#define OUTSIDE(p)                                                                                                     \
    "{'name':'" p "_d0','type':'InnerData','attrs':{'index':0,'_node_with_guarder_outside':'FreeMemory'}," T "},"     \
    NODE(p "_bar", "Bar", "'" p "_d0:0'") NOUT(p "_o", "'" p "_d0:0'")
    const char *br[] = {OUTSIDE("t"), OUTSIDE("e")};
    spec s = {"If", 1, br, 2, false, NULL, NULL, NULL};
    gm_model *m = build(&s);
    prepare_ok(m);
    assert_inner_data_branch(m, "b0", "t", "if_Subgraph_0_AddResRef_");
    assert_inner_data_branch(m, "b1", "e", "if_Subgraph_1_AddResRef_");
    assert_outer_guarder(m, "if_FreeMemory_0", 0);
    gm_model_free(m);

    /* Without the attribute, graphmem finds the guarder on the parent input's producer. */
    const char *plain[] = {PLAIN("t") NOUT("t_o", "'t_d0:0'"), PLAIN("e") NOUT("e_o", "'e_d0:0'")};
    spec s2 = {"If", 1, plain, 2, false, "'p:0'", NODE("p", "Foo", "'d0:0'") FREE("p_free", "p:0"), NULL};
    m = build(&s2);
    prepare_ok(m);
    assert_inner_data_branch(m, "b0", "t", "if_Subgraph_0_AddResRef_");
    assert_inner_data_branch(m, "b1", "e", "if_Subgraph_1_AddResRef_");
    assert_outer_guarder(m, "if_FreeMemory_0", 0);
    assert_edge(m, "p", 0, "p_free", 0); /* the outside guarder stays */
    gm_model_free(m);
#undef OUTSIDE
}

/* One guarded tensor returned twice: its guarder moves out as two (one per If output), and the
 * second output takes a reference inside for the second free. */
static void test_if_free_two_out_plus_one_inside_one_guarder_connect_to_out(void **state)
{
    (void)state;
    const char *br[] = {GUARDED("t") NOUT("t_o", "'t_foo:0','t_foo:0'"), PLAIN("e") NOUT("e_o", "'e_bar:0','e_bar:0'")};
    spec s = {"If", 2, br, 2, false, NULL, NULL, NULL};
    gm_model *m = build(&s);
    gm_bg_cond c;
    gm_bg_guarder_policy p;
    gm_error err;
    assert_int_equal(gm_bg_cond_view(node(m, "if"), GM_BG_SHAPE_AUTO, &c, &err), GM_OK);
    assert_int_equal(gm_bg_calc_subgraph_guarders_policy(&c, &p, &err), GM_OK);
    assert_int_equal(p.n_moved, 1);
    assert_string_equal(gm_node_name(p.moved[0]), "t_free");
    assert_string_equal(p.guarder_type[0], "FreeMemory");
    assert_string_equal(p.guarder_type[1], "FreeMemory");
    assert_false(p.plus_ref[0 * 2 + 0]);
    assert_true(p.plus_ref[0 * 2 + 1]);
    assert_true(p.plus_ref[1 * 2 + 0]);
    assert_true(p.plus_ref[1 * 2 + 1]);
    gm_bg_guarder_policy_free(&p);

    prepare_ok(m);
    assert_int_equal(count_type(graph(m, "b0"), "FreeMemory"), 0);
    assert_io(m, "if_Subgraph_0_AddResRef_", "IdentityAddr", 1);
    assert_edge(m, "t_foo", 0, "t_o", 0);
    assert_edge(m, "t_foo", 0, "if_Subgraph_0_AddResRef_", 0);
    assert_edge(m, "if_Subgraph_0_AddResRef_", 0, "t_o", 1);
    assert_io(m, "if_Subgraph_1_AddResRef_", "IdentityAddr", 2);
    assert_outer_guarder(m, "if_FreeMemory_0", 0);
    assert_outer_guarder(m, "if_FreeMemory_1", 1);
    assert_int_equal(count_model_type(m, "FreeMemory"), 2);
    gm_model_free(m);
}

/* An If inside the then branch of another: the inner guarder moves onto the inner If's output,
 * inside the outer then branch, and from there onto the outer If's output. */
static void test_if_nested_subgraph_guarder_moves_out_twice(void **state)
{
    (void)state;
    const char *br[] = {
        IDATA("t_d0", 0) "{'name':'inner','type':'If','inputs':['t_d0:0'],'subgraphs':['tt','te']," T "},"
        NOUT("t_o", "'inner:0'"),
        PLAIN("e") NOUT("e_o", "'e_bar:0'"),
    };
    spec s = {"If", 1, br, 2, false, NULL, NULL,
              ",{'name':'tt','parent':'inner','nodes':[" GUARDED("tt") NOUT("tt_o", "'tt_foo:0'") "]}"
              ",{'name':'te','parent':'inner','nodes':[" PLAIN("te") NOUT("te_o", "'te_bar:0'") "]}"};
    gm_model *m = build(&s);
    prepare_ok(m);
    assert_int_equal(count_type(graph(m, "tt"), "FreeMemory"), 0);
    assert_int_equal(count_type(graph(m, "tt"), "IdentityAddr"), 0);
    assert_io(m, "inner_Subgraph_1_AddResRef_", "IdentityAddr", 1);
    assert_edge(m, "if_Subgraph_1_AddResRef_", 0, "e_o", 0);
    assert_edge(m, "te_bar", 0, "inner_Subgraph_1_AddResRef_", 0);
    /* The guarder made on the inner If's output moved on: the outer then branch keeps none. */
    assert_null(gm_model_find_node(m, "inner_FreeMemory_0"));
    assert_int_equal(count_type(graph(m, "b0"), "FreeMemory"), 0);
    assert_int_equal(count_type(graph(m, "b0"), "IdentityAddr"), 0);
    assert_io(m, "if_Subgraph_1_AddResRef_", "IdentityAddr", 1);
    assert_outer_guarder(m, "if_FreeMemory_0", 0);
    assert_int_equal(count_model_type(m, "FreeMemory"), 1);
    gm_model_free(m);
}

/* Chain conflicts and guarders on one If: PointFromInputs then IdentityAddr before the output. */
static void test_chain_and_guarders_together(void **state)
{
    (void)state;
    const char *br[] = {GUARDED("t") NOUT("t_o", "'t_foo:0'"), PLAIN("e") NOUT("e_o", "'e_d0:0'")};
    spec s = {"If", 1, br, 2, false, NULL, NULL, NULL};
    gm_model *m = build(&s);
    prepare_ok(m);
    assert_edge(m, "t_foo", 0, "if_PointFrom_0", 0);
    assert_edge(m, "if_PointFrom_0", 0, "t_o", 0);
    assert_edge(m, "e_d0", 0, "if_PointFrom_1", 0);
    assert_edge(m, "if_PointFrom_1", 0, "if_Subgraph_1_AddResRef_", 0);
    assert_edge(m, "if_Subgraph_1_AddResRef_", 0, "e_o", 0);
    assert_outer_guarder(m, "if_FreeMemory_0", 0);
    assert_int_equal(count_model_type(m, "FreeMemory"), 1);
    gm_model_free(m);
}

/* ---- errors ------------------------------------------------------------------------------- */

static void test_errors(void **state)
{
    (void)state;
    gm_error err;
    /* Two guarder types on one output: one outer guarder cannot free both. */
    const char *br[] = {
        GUARDED("t") NOUT("t_o", "'t_foo:0'"),
        IDATA("e_d0", 0) NODE("e_foo", "Foo", "'e_d0:0'")
            "{'name':'e_free','type':'FreeFixed','inputs':['e_foo:0'],'attrs':{'_release_resource_index':0}},"
            NOUT("e_o", "'e_foo:0'"),
    };
    spec s = {"If", 1, br, 2, false, NULL, NULL, NULL};
    gm_model *m = build(&s);
    size_t before = gm_model_node_count(m);
    assert_int_equal(gm_bg_condition_prepare_model(m, GM_BG_SHAPE_AUTO, &err), GM_ERR_INPUT);
    assert_non_null(strstr(err.message, "guarded by a FreeFixed here and by a FreeMemory in another branch"));
    assert_int_equal(gm_model_node_count(m), before); /* policies fail before any edit */
    gm_model_free(m);

    /* A branch that returns nothing for an output. */
    const char *br2[] = {IDATA("t_d0", 0) NOUT("t_o", "'t_d0:0'"), IDATA("e_d0", 0) NOUT("e_o", "'e_d0:0'")};
    spec s2 = {"If", 2, br2, 2, false, NULL, NULL, NULL};
    m = build(&s2);
    assert_int_equal(gm_bg_condition_prepare_model(m, GM_BG_SHAPE_AUTO, &err), GM_ERR_INPUT);
    assert_non_null(strstr(err.message, "returns nothing for output 1 of 'if'"));
    gm_model_free(m);

    /* An unconnected output-node input. */
    const char *br3[] = {IDATA("t_d0", 0) NOUT("t_o", "''"), IDATA("e_d0", 0) NOUT("e_o", "'e_d0:0'")};
    spec s3 = {"If", 1, br3, 2, false, NULL, NULL, NULL};
    m = build(&s3);
    assert_int_equal(gm_bg_condition_prepare_model(m, GM_BG_SHAPE_AUTO, &err), GM_ERR_INPUT);
    assert_non_null(strstr(err.message, "is unconnected"));
    gm_model_free(m);
}

/* Every allocation failure during the preparation gives GM_ERR_NOMEM, never a crash or a leak
 * (the model may be left partly edited, as after any failed edit). */
static void test_out_of_memory(void **state)
{
    (void)state;
    const char *br[] = {GUARDED("t") NOUT("t_o", "'t_foo:0','t_foo:0'"), PLAIN("e") NOUT("e_o", "'e_d0:0','e_bar:0'")};
    spec s = {"If", 2, br, 2, false, NULL, NULL, NULL};
    gm_status st = GM_ERR_NOMEM;
    long k = 0;
    for (; st == GM_ERR_NOMEM && k < 10000; k++) {
        gm_model *m = build(&s);
        gm_error err;
        gm_alloc_fail_after(k);
        st = gm_bg_condition_prepare_model(m, GM_BG_SHAPE_AUTO, &err);
        gm_alloc_fail_after(-1);
        if (st != GM_OK && st != GM_ERR_NOMEM) fail_msg("failure %ld: %s", k, err.message);
        gm_model_free(m);
    }
    assert_int_equal(st, GM_OK);
    assert_true(k > 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_view_shapes),
        cmocka_unit_test(test_chain_conflict_index0),
        cmocka_unit_test(test_chain_all_same),
        cmocka_unit_test(test_chain_two_conflicts_one_node),
        cmocka_unit_test(test_chain_case_three_branches),
        cmocka_unit_test(test_chain_model_form),
        cmocka_unit_test(test_if_move_guarder_out_all_branches_have_guarders),
        cmocka_unit_test(test_if_else_plus_and_then_move_out_only_then_has_guarder),
        cmocka_unit_test(test_if_then_plus_and_else_move_out_only_else_has_multiple_guarders),
        cmocka_unit_test(test_if_inner_data_with_guarder_outside),
        cmocka_unit_test(test_if_free_two_out_plus_one_inside_one_guarder_connect_to_out),
        cmocka_unit_test(test_if_nested_subgraph_guarder_moves_out_twice),
        cmocka_unit_test(test_chain_and_guarders_together),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
