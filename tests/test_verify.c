/*
 * test_verify.c — the plan verifier (src/plan/verify.c) on small graphs with plans written by
 * hand: a correct plan passes, and each kind of corruption is rejected naming its symbols.
 * JSON is written with ' for " to keep it readable; q() turns it back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "analysis/symbols.h"
#include "io_test_util.h"
#include "io/json_split.h"
#include "plan/verify_internal.h"
#include "util/alloc.h"
#include "graphmem/io.h"
#include "graphmem/plan.h"

static char *q(const char *s)
{
    char *t = strdup(s);
    for (char *p = t; *p; p++)
        if (*p == '\'') *p = '"';
    return t;
}

static gm_model *load(const char *json_sq)
{
    gm_model *m = NULL;
    gm_error err;
    char *j = q(json_sq);
    if (gm_model_read_json(j, strlen(j), "t.json", &m, &err) != GM_OK) fail_msg("%s", err.message);
    free(j);
    return m;
}

static void verify(const gm_model *m, const char *plan_sq, gm_plan_verdict *v)
{
    gm_error err;
    char *p = q(plan_sq);
    gm_status st = gm_plan_verify_json(m, p, strlen(p), "plan.json", v, &err);
    if (st != GM_OK) fail_msg("verify: %s\nplan: %s", err.message, p);
    free(p);
}

static void dump(const gm_plan_verdict *v)
{
    for (size_t i = 0; i < v->n_problems; i++)
        print_message("  %s: %s\n", gm_plan_problem_kind_name(v->problems[i].kind), v->problems[i].message);
}

/* A problem of this kind naming symbols a and b (either order; NULL: any). */
static bool has(const gm_plan_verdict *v, gm_plan_problem_kind k, const char *a, const char *b)
{
    for (size_t i = 0; i < v->n_problems; i++) {
        const gm_plan_problem *p = &v->problems[i];
        if (p->kind != k) continue;
        bool ab = (!a || !strcmp(p->sym_a, a)) && (!b || !strcmp(p->sym_b, b));
        bool ba = (!a || !strcmp(p->sym_b, a)) && (!b || !strcmp(p->sym_a, b));
        if (ab || ba) return true;
    }
    return false;
}

static void expect_ok(const gm_model *m, const char *plan)
{
    gm_plan_verdict v;
    verify(m, plan, &v);
    if (!gm_plan_verdict_ok(&v)) {
        dump(&v);
        fail_msg("a correct plan was rejected");
    }
    gm_plan_verdict_free(&v);
}

/* Exactly the problems of kind k (at least one, naming a and b), and no other kind — but races
 * as well when `races` (a symbol joining two tensors has two writers of one address). */
static void expect_kinds(const gm_model *m, const char *plan, gm_plan_problem_kind k, const char *a, const char *b,
                         bool races)
{
    gm_plan_verdict v;
    verify(m, plan, &v);
    bool other = false;
    for (size_t i = 0; i < v.n_problems; i++)
        other |= v.problems[i].kind != k && !(races && v.problems[i].kind == GM_PLAN_P_RACE);
    if (!has(&v, k, a, b) || other) {
        dump(&v);
        fail_msg("expected only %s naming %s/%s", gm_plan_problem_kind_name(k), a ? a : "-", b ? b : "-");
    }
    gm_plan_verdict_free(&v);
}

static void expect_only(const gm_model *m, const char *plan, gm_plan_problem_kind k, const char *a, const char *b)
{
    expect_kinds(m, plan, k, a, b, false);
}

/* ---- two streams ----------------------------------------------------------------------- */

#define F256 "'outputs':[{'dtype':'float32','shape':[256]}]"

/* a (stream 0) and b (stream 1) both read x; nothing orders them unless ctrl is given. */
static gm_model *two_streams(const char *ctrl)
{
    char buf[2048];
    snprintf(buf, sizeof buf,
             "{'graphmem':1,'name':'two','graphs':[{'name':'root','nodes':["
             "{'name':'x','type':'Data','attrs':{'index':0}," F256 "},"
             "{'name':'a','type':'Relu','inputs':['x:0'],%s" F256 "},"
             "{'name':'b','type':'Relu','inputs':['x:0'],'stream':1," F256 "},"
             "{'name':'a2','type':'Relu','inputs':['a:0']," F256 "},"
             "{'name':'b2','type':'Relu','inputs':['b:0'],'stream':1," F256 "},"
             "{'name':'out','type':'NetOutput','inputs':['a2:0','b2:0']}]}]}",
             ctrl);
    return load(buf);
}

static const char *plan_two(char *buf, size_t cap, int a_off, int a_size, int b_off, bool a2_anchor)
{
    snprintf(buf, cap,
             "{'graphmem_plan':1,'model':'two',"
             "'regions':[{'name':'feature_map','memory_type':'hbm','size':4096,'align':512},"
             "{'name':'zero_copy','memory_type':'hbm','size':3072,'align':512}],"
             "'symbols':["
             "{'id':'X','anchors':[{'node':'x','out':0},{'node':'a','in':0},{'node':'b','in':0}],"
             "'region':'zero_copy','memory_type':'hbm','offset':0,'size':1024},"
             "{'id':'A','anchors':[{'node':'a','out':0}%s],'region':'feature_map','offset':%d,'size':%d},"
             "{'id':'B','anchors':[{'node':'b','out':0},{'node':'b2','in':0}],'region':'feature_map',"
             "'offset':%d,'size':1024},"
             "{'id':'A2','anchors':[{'node':'a2','out':0},{'node':'out','in':0}],'region':'zero_copy',"
             "'offset':1024,'size':1024},"
             "{'id':'B2','anchors':[{'node':'b2','out':0},{'node':'out','in':1}],'region':'zero_copy',"
             "'offset':2048,'size':1024}]}",
             a2_anchor ? ",{'node':'a2','in':0}" : "", a_off, a_size, b_off);
    return buf;
}

static void test_correct_plan_passes(void **state)
{
    (void)state;
    char buf[4096];
    gm_model *m = two_streams("");
    expect_ok(m, plan_two(buf, sizeof buf, 0, 1024, 1024, true));
    gm_plan_verdict v;
    verify(m, buf, &v);
    assert_int_equal(v.symbols, 5);
    assert_int_equal(v.bytes, 5 * 1024);
    assert_int_equal(v.extent_bytes, 2048 + 3072); /* feature map + zero copy */
    gm_plan_verdict_free(&v);
    gm_model_free(m);
}

static void test_overlap_two_streams_rejected(void **state)
{
    (void)state;
    char buf[4096];
    gm_model *m = two_streams("");
    expect_only(m, plan_two(buf, sizeof buf, 0, 1024, 0, true), GM_PLAN_P_OVERLAP, "A", "B");
    /* partial overlap too */
    expect_only(m, plan_two(buf, sizeof buf, 512, 1024, 1024, true), GM_PLAN_P_OVERLAP,
                "A", "B");
    gm_model_free(m);
}

static void test_overlap_ordered_by_control_edge_accepted(void **state)
{
    (void)state;
    char buf[4096];
    /* b2 (stream 1) -> a (stream 0): the event that ends B's life before A starts */
    gm_model *m = two_streams("'control_inputs':['b2'],");
    expect_ok(m, plan_two(buf, sizeof buf, 0, 1024, 0, true));
    gm_model_free(m);
}

static void test_misaligned_offset(void **state)
{
    (void)state;
    char buf[4096];
    gm_model *m = two_streams("");
    expect_only(m, plan_two(buf, sizeof buf, 0, 1024, 1100, true), GM_PLAN_P_MISALIGNED, "B", NULL);
    gm_model_free(m);
}

static void test_consumer_anchor_missing(void **state)
{
    (void)state;
    char buf[4096];
    gm_model *m = two_streams("");
    gm_plan_verdict v;
    verify(m, plan_two(buf, sizeof buf, 0, 1024, 1024, false), &v);
    assert_true(has(&v, GM_PLAN_P_UNPLACED, "A", NULL));
    assert_string_equal(v.problems[0].node, "a2");
    gm_plan_verdict_free(&v);
    gm_model_free(m);
}

static void test_tensor_bigger_than_symbol(void **state)
{
    (void)state;
    char buf[4096];
    gm_model *m = two_streams("");
    expect_only(m, plan_two(buf, sizeof buf, 0, 512, 1024, true), GM_PLAN_P_TOO_SMALL, "A", NULL);
    gm_model_free(m);
}

static void test_unknown_and_duplicate_anchor(void **state)
{
    (void)state;
    gm_model *m = two_streams("");
    gm_plan_verdict v;
    verify(m,
           "{'graphmem_plan':1,'symbols':["
           "{'id':'X','anchors':[{'node':'x','out':0},{'node':'a','in':0},{'node':'b','in':0},{'node':'nope','out':0}],"
           "'region':'zero_copy','offset':0,'size':1024},"
           "{'id':'Y','anchors':[{'node':'x','out':0}],'region':'zero_copy','offset':1024,'size':1024}]}",
           &v);
    assert_true(has(&v, GM_PLAN_P_UNKNOWN_ANCHOR, "X", NULL));
    assert_true(has(&v, GM_PLAN_P_DUPLICATE, "X", "Y"));
    assert_true(has(&v, GM_PLAN_P_UNPLACED, NULL, NULL)); /* a's output, and the rest */
    gm_plan_verdict_free(&v);
    /* two symbols with one id */
    verify(m,
           "{'graphmem_plan':1,'symbols':["
           "{'id':'X','anchors':[{'node':'x','out':0}],'region':'zero_copy','offset':0,'size':1024},"
           "{'id':'X','anchors':[{'node':'a','out':0}],'region':'feature_map','offset':0,'size':1024}]}",
           &v);
    assert_true(has(&v, GM_PLAN_P_DUPLICATE, "X", "X"));
    gm_plan_verdict_free(&v);
    gm_model_free(m);
}

/* a's and b's outputs as one symbol: one address for both their lives, unseen by the
 * overlap check between symbols */
static void test_unrelated_tensors_in_one_symbol(void **state)
{
    (void)state;
    gm_model *m = two_streams("");
    expect_kinds(m,
                "{'graphmem_plan':1,'symbols':["
                "{'id':'X','anchors':[{'node':'x','out':0},{'node':'a','in':0},{'node':'b','in':0}],"
                "'region':'zero_copy','offset':0,'size':1024},"
                "{'id':'AB','anchors':[{'node':'a','out':0},{'node':'a2','in':0},{'node':'b','out':0},{'node':'b2','in':0}],"
                "'region':'feature_map','offset':0,'size':1024},"
                "{'id':'A2','anchors':[{'node':'a2','out':0},{'node':'out','in':0}],'region':'zero_copy',"
                "'offset':1024,'size':1024},"
                "{'id':'B2','anchors':[{'node':'b2','out':0},{'node':'out','in':1}],'region':'zero_copy',"
                "'offset':2048,'size':1024}]}",
                GM_PLAN_P_UNRELATED, "AB", NULL, true);
    gm_model_free(m);
}

/* One buffer E, read by clone on stream 1 and written in place by relu_ on stream 0; relu_
 * gets `extra` among its fields. */
static gm_model *race_model(const char *extra)
{
    char text[2048];
    snprintf(text, sizeof text,
             "{'graphmem':1,'name':'race','graphs':[{'name':'root','nodes':["
             "{'name':'x','type':'Data','attrs':{'index':0}," F256 "},"
             "{'name':'e','type':'Exp','inputs':['x:0']," F256 "},"
             "{'name':'clone','type':'Neg','stream':1,'inputs':['e:0']," F256 "},"
             "{'name':'relu_','type':'Relu','inputs':['e:0'],'input_names':['self'],'output_names':['self'],"
             "'attrs':{'reference':true}%s," F256 "},"
             "{'name':'out','type':'NetOutput','inputs':['relu_:0','clone:0']}]}]}",
             extra);
    return load(text);
}

/* race_model's symbols X, E and C (C at c_offset), after `head` (fields of the plan). */
static const char *race_plan(char *buf, size_t cap, const char *head, int c_offset)
{
    snprintf(buf, cap,
             "{'graphmem_plan':1,%s'symbols':["
             "{'id':'X','anchors':[{'node':'x','out':0},{'node':'e','in':0}],'region':'zero_copy','offset':0,'size':1024},"
             "{'id':'E','anchors':[{'node':'e','out':0},{'node':'clone','in':0},{'node':'relu_','in':0},"
             "{'node':'relu_','out':0},{'node':'out','in':0}],'region':'zero_copy','offset':1024,'size':1024},"
             "{'id':'C','anchors':[{'node':'clone','out':0},{'node':'out','in':1}],'region':'zero_copy',"
             "'offset':%d,'size':1024}]}",
             head, c_offset);
    return buf;
}

/* One buffer, a reader and an in-place writer on two streams that only the list orders: the
 * plan's symbols are right, but the result depends on which stream runs first. With the edge
 * the access-order pass would add (clone -> relu_), the same plan is sound. */
static void test_race_in_one_symbol(void **state)
{
    (void)state;
    static const char *const models[] = {"", ",'control_inputs':['clone']"};
    char buf[2048];
    for (int k = 0; k < 2; k++) {
        gm_model *m = race_model(models[k]);
        const char *plan = race_plan(buf, sizeof buf, "", 2048);
        if (k == 0) expect_only(m, plan, GM_PLAN_P_RACE, "E", NULL);
        else expect_ok(m, plan);
        gm_model_free(m);
    }
}

/* The race check runs in a group of its own, beside the order's (verify.c); its problems are
 * still told where one thread would tell them: after the overlaps, before the bound. */
static void test_race_between_overlaps_and_bound(void **state)
{
    (void)state;
    gm_model *m = race_model("");
    /* C lies on E (both live from clone to out), and the bound claims more than X */
    char buf[2048];
    char *plan = q(race_plan(buf, sizeof buf, "'summary':{'lower_bound_bytes':999999,'lower_bound_witness':['X']},", 1024));
    gm_plan_verdict v;
    gm_error err;
    if (gm_plan_verify_json(m, plan, strlen(plan), "p.json", &v, &err) != GM_OK) fail_msg("%s", err.message);
    assert_int_equal(v.n_problems, 4); /* the witness in no feature map, and it holds too little */
    assert_int_equal(v.problems[0].kind, GM_PLAN_P_OVERLAP);
    assert_int_equal(v.problems[1].kind, GM_PLAN_P_RACE);
    assert_string_equal(v.problems[1].sym_a, "E");
    assert_int_equal(v.problems[2].kind, GM_PLAN_P_BOUND);
    assert_int_equal(v.problems[3].kind, GM_PLAN_P_BOUND);
    assert_int_equal(v.by_kind[GM_PLAN_P_RACE], 1);
    gm_plan_verdict_free(&v);
    free(plan);
    gm_model_free(m);
}

/* ---- fixed, continuous ------------------------------------------------------------------- */

static gm_model *consts_and_concat(void)
{
    return load("{'graphmem':1,'name':'cc','graphs':[{'name':'root','nodes':["
                "{'name':'c1','type':'Const'," F256 "},"
                "{'name':'c2','type':'Const'," F256 "},"
                "{'name':'p','type':'Relu','inputs':['c1:0']," F256 "},"
                "{'name':'r','type':'Relu','inputs':['c2:0']," F256 "},"
                "{'name':'cat','type':'HcomAllGather','inputs':['p:0','r:0'],'attrs':{'continuous_input':true},"
                "'outputs':[{'dtype':'float32','shape':[512]}]},"
                "{'name':'out','type':'NetOutput','inputs':['cat:0']}]}]}");
}

static const char *plan_cc(char *buf, size_t cap, int c2_off, int p_off, int r_off)
{
    snprintf(buf, cap,
             "{'graphmem_plan':1,'order':['c1','c2','p','r','cat','out'],"
             "'regions':[{'name':'feature_map','memory_type':'hbm','size':8192,'align':512}],"
             "'symbols':["
             "{'id':'C1','anchors':[{'node':'c1','out':0},{'node':'p','in':0}],'region':'fixed','offset':0,'size':1024},"
             "{'id':'C2','anchors':[{'node':'c2','out':0},{'node':'r','in':0}],'region':'fixed','offset':%d,'size':1024},"
             "{'id':'P','anchors':[{'node':'p','out':0},{'node':'cat','in':0}],'region':'feature_map','offset':%d,'size':1024},"
             "{'id':'R','anchors':[{'node':'r','out':0},{'node':'cat','in':1}],'region':'feature_map','offset':%d,'size':1024},"
             "{'id':'CAT','anchors':[{'node':'cat','out':0},{'node':'out','in':0}],'region':'zero_copy','offset':0,'size':2048}]}",
             c2_off, p_off, r_off);
    return buf;
}

static void test_fixed_overlap(void **state)
{
    (void)state;
    char buf[4096];
    gm_model *m = consts_and_concat();
    expect_ok(m, plan_cc(buf, sizeof buf, 1024, 0, 1024));
    expect_only(m, plan_cc(buf, sizeof buf, 512, 0, 1024), GM_PLAN_P_FIXED_OVERLAP, "C1", "C2");
    gm_model_free(m);
}

static void test_continuous_group(void **state)
{
    (void)state;
    char buf[4096];
    gm_model *m = consts_and_concat();
    /* out of order */
    expect_only(m, plan_cc(buf, sizeof buf, 1024, 1024, 0), GM_PLAN_P_CONTINUOUS, "P", "R");
    /* a gap of a whole alignment block */
    expect_only(m, plan_cc(buf, sizeof buf, 1024, 0, 1536), GM_PLAN_P_CONTINUOUS, "P", "R");
    gm_model_free(m);
}

/* A no-padding concat: its inputs are views of its output, at their own anchor offsets. */
static void test_no_padding_concat(void **state)
{
    (void)state;
    gm_model *m = load("{'graphmem':1,'name':'np','graphs':[{'name':'root','nodes':["
                       "{'name':'x','type':'Data','attrs':{'index':0}," F256 "},"
                       "{'name':'p','type':'Relu','inputs':['x:0']," F256 "},"
                       "{'name':'r','type':'Relu','inputs':['x:0']," F256 "},"
                       "{'name':'pc','type':'PhonyConcat','inputs':['p:0','r:0'],"
                       "'attrs':{'_no_padding_continuous_input':true,'_output_reuse_input':true},"
                       "'outputs':[{'dtype':'float32','shape':[512]}]},"
                       "{'name':'y','type':'Relu','inputs':['pc:0'],'outputs':[{'dtype':'float32','shape':[512]}]},"
                       "{'name':'out','type':'NetOutput','inputs':['y:0']}]}]}");
    const char *tmpl = "{'graphmem_plan':1,'symbols':["
                       "{'id':'X','anchors':[{'node':'x','out':0},{'node':'p','in':0},{'node':'r','in':0}],"
                       "'region':'zero_copy','offset':0,'size':1024},"
                       "{'id':'S','anchors':[{'node':'pc','out':0},{'node':'y','in':0},{'node':'p','out':0},"
                       "{'node':'pc','in':0},{'node':'r','out':0,'offset':%d},{'node':'pc','in':1,'offset':%d}],"
                       "'region':'feature_map','offset':512,'size':2048},"
                       "{'id':'Y','anchors':[{'node':'y','out':0},{'node':'out','in':0}],"
                       "'region':'zero_copy','offset':1024,'size':2048}]}";
    char buf[2048];
    snprintf(buf, sizeof buf, tmpl, 1536, 1536);
    expect_ok(m, buf);
    /* the second member 512 bytes further: no-padding members must touch (and it overruns S) */
    snprintf(buf, sizeof buf, tmpl, 2048, 2048);
    gm_plan_verdict v;
    verify(m, buf, &v);
    assert_true(has(&v, GM_PLAN_P_CONTINUOUS, "S", "S"));
    assert_true(has(&v, GM_PLAN_P_TOO_SMALL, "S", NULL));
    gm_plan_verdict_free(&v);
    gm_model_free(m);
}

static void test_dynamic_region(void **state)
{
    (void)state;
    gm_model *m = load("{'graphmem':1,'name':'dyn','graphs':[{'name':'root','nodes':["
                       "{'name':'x','type':'Data','attrs':{'index':0},'outputs':[{'dtype':'float32','shape':[-1]}]},"
                       "{'name':'y','type':'Relu','inputs':['x:0'],'outputs':[{'dtype':'float32','shape':[-1]}]},"
                       "{'name':'out','type':'NetOutput','inputs':['y:0']}]}]}");
    const char *tmpl = "{'graphmem_plan':1,'symbols':["
                       "{'id':'X','anchors':[{'node':'x','out':0},{'node':'y','in':0}],'region':'dynamic',%s'size':0},"
                       "{'id':'Y','anchors':[{'node':'y','out':0},{'node':'out','in':0}],'region':'%s',"
                       "'offset':0,'size':1024}]}";
    char buf[1024];
    snprintf(buf, sizeof buf, tmpl, "", "zero_copy");
    expect_only(m, buf, GM_PLAN_P_REGION, "Y", NULL); /* unknown size outside the dynamic region */
    snprintf(buf, sizeof buf, tmpl, "'offset':512,", "zero_copy");
    gm_plan_verdict v;
    verify(m, buf, &v);
    assert_true(has(&v, GM_PLAN_P_REGION, "X", NULL)); /* dynamic with an offset */
    gm_plan_verdict_free(&v);
    snprintf(buf, sizeof buf, tmpl, "", "scratch");
    expect_only(m, buf, GM_PLAN_P_REGION, "Y", NULL); /* unknown region */
    gm_model_free(m);
}

/* ---- a While loop ------------------------------------------------------------------------ */

static gm_model *loop_model(void)
{
    return load("{'graphmem':1,'name':'loop','graphs':["
                "{'name':'root','nodes':["
                "{'name':'x','type':'Data','attrs':{'index':0}," F256 "},"
                "{'name':'v','type':'Relu','inputs':['x:0']," F256 "},"
                "{'name':'loop','type':'While','inputs':['v:0'],'subgraphs':['cond','body']," F256 "},"
                "{'name':'after','type':'Relu','inputs':['loop:0']," F256 "},"
                "{'name':'out','type':'NetOutput','inputs':['after:0']}]},"
                "{'name':'cond','parent':'loop','nodes':["
                "{'name':'cd','type':'Data','attrs':{'_parent_node_index':0}," F256 "},"
                "{'name':'cc','type':'ReduceAny','inputs':['cd:0'],'outputs':[{'dtype':'bool','shape':[]}]},"
                "{'name':'co','type':'NetOutput','inputs':['cc:0']}]},"
                "{'name':'body','parent':'loop','nodes':["
                "{'name':'d','type':'Data','attrs':{'_parent_node_index':0}," F256 "},"
                "{'name':'t1','type':'Relu','inputs':['d:0']," F256 "},"
                "{'name':'t2','type':'Relu','inputs':['t1:0']," F256 "},"
                "{'name':'t3','type':'Relu','inputs':['t2:0']," F256 "},"
                "{'name':'r','type':'Relu','inputs':['t3:0']," F256 "},"
                "{'name':'o','type':'NetOutput','inputs':['r:0'],'input_descs':[{'attrs':{'_parent_node_index':0}}]}]}]}");
}

static const char *plan_loop(char *buf, size_t cap, int t1_off, int t3_off)
{
    snprintf(buf, cap,
             "{'graphmem_plan':1,"
             "'regions':[{'name':'feature_map','memory_type':'hbm','size':8192,'align':512}],"
             "'symbols':["
             "{'id':'X','anchors':[{'node':'x','out':0},{'node':'v','in':0}],'region':'zero_copy','offset':0,'size':1024},"
             "{'id':'V','anchors':[{'node':'v','out':0},{'node':'loop','in':0},{'node':'loop','out':0},"
             "{'node':'cd','out':0},{'node':'cc','in':0},{'node':'d','out':0},{'node':'t1','in':0},"
             "{'node':'r','out':0},{'node':'o','in':0},{'node':'after','in':0}],"
             "'region':'feature_map','offset':0,'size':1024},"
             "{'id':'CC','anchors':[{'node':'cc','out':0},{'node':'co','in':0}],'region':'feature_map','offset':3072,'size':512},"
             "{'id':'T1','anchors':[{'node':'t1','out':0},{'node':'t2','in':0}],'region':'feature_map','offset':%d,'size':1024},"
             "{'id':'T2','anchors':[{'node':'t2','out':0},{'node':'t3','in':0}],'region':'feature_map','offset':2048,'size':1024},"
             "{'id':'T3','anchors':[{'node':'t3','out':0},{'node':'r','in':0}],'region':'feature_map','offset':%d,'size':1024},"
             "{'id':'AFTER','anchors':[{'node':'after','out':0},{'node':'out','in':0}],'region':'zero_copy','offset':1024,'size':1024}]}",
             t1_off, t3_off);
    return buf;
}

static void test_while_loop(void **state)
{
    (void)state;
    char buf[4096];
    gm_model *m = loop_model();
    /* T1 and T3 are ordered inside one iteration: they may share */
    expect_ok(m, plan_loop(buf, sizeof buf, 1024, 1024));
    /* V lives through the whole loop: a body temporary may not take its place */
    expect_only(m, plan_loop(buf, sizeof buf, 0, 1024), GM_PLAN_P_OVERLAP, "V", "T1");
    /* T2 and T3 both touched by t3: unordered */
    expect_only(m, plan_loop(buf, sizeof buf, 1024, 2048), GM_PLAN_P_OVERLAP, "T2", "T3");
    gm_model_free(m);
}

static void test_loop_split_symbol(void **state)
{
    (void)state;
    gm_model *m = loop_model();
    gm_plan_verdict v;
    /* the body Data in its own symbol: it must be the loop's input */
    char buf[4096];
    plan_loop(buf, sizeof buf, 1024, 1024);
    char *p = strstr(buf, "{'node':'d','out':0},{'node':'t1','in':0},");
    assert_non_null(p);
    memmove(p, p + strlen("{'node':'d','out':0},{'node':'t1','in':0},"),
            strlen(p + strlen("{'node':'d','out':0},{'node':'t1','in':0},")) + 1);
    char *e = strrchr(buf, ']');
    snprintf(e, sizeof buf - (size_t)(e - buf),
             ",{'id':'D','anchors':[{'node':'d','out':0},{'node':'t1','in':0}],'region':'feature_map','offset':4096,"
             "'size':1024}]}");
    verify(m, buf, &v);
    assert_true(has(&v, GM_PLAN_P_SPLIT, "V", "D"));
    gm_plan_verdict_free(&v);
    gm_model_free(m);
}

/* A symbol used before the loop and at the top of the body only (its loop anchors left out):
 * within one iteration it is dead before T2, but the next iteration reads it again, so it
 * must live through the whole loop and T2 may not share it. */
static void test_value_used_inside_and_outside_loop(void **state)
{
    (void)state;
    gm_model *m = loop_model();
    char buf[4096];
    plan_loop(buf, sizeof buf, 1024, 1024);
    const char *cut[] = {"{'node':'loop','in':0},{'node':'loop','out':0},",
                         ",{'node':'r','out':0},{'node':'o','in':0},{'node':'after','in':0}"};
    for (int i = 0; i < 2; i++) {
        char *p = strstr(buf, cut[i]);
        assert_non_null(p);
        memmove(p, p + strlen(cut[i]), strlen(p + strlen(cut[i])) + 1);
    }
    char *t2 = strstr(buf, "'offset':2048");
    assert_non_null(t2);
    memcpy(t2, "'offset':0   ", 13); /* T2 onto V (JSON allows the spaces) */
    gm_plan_verdict v;
    verify(m, buf, &v);
    assert_true(has(&v, GM_PLAN_P_OVERLAP, "V", "T2"));
    gm_plan_verdict_free(&v);
    gm_model_free(m);
}

/* ---- a loop's stacked output -------------------------------------------------------------------
 * tests/data/loop_stacked.json: loop:1 (symbol loop_out_1, 8 rows) stacks the body's row
 * (row_out_0, one row, read by b_out) — two tensors (ops/op_table.h). The loop writes loop:1
 * from its enter on and reads row once the body has run (at its exit). The planner's plan is
 * correct; merged into one symbol, or laid over each other, or row laid under `late` (a body
 * node after b_out, before the loop's exit), it is not. The verifier passed each of these before
 * the loop's outputs had a meaning of their own. */

static cJSON *plan_symbol(cJSON *plan, const char *id)
{
    cJSON *y;
    cJSON_ArrayForEach(y, cJSON_GetObjectItemCaseSensitive(plan, "symbols")) {
        if (!strcmp(cJSON_GetObjectItemCaseSensitive(y, "id")->valuestring, id)) return y;
    }
    fail_msg("the plan has no symbol %s", id);
    return NULL;
}

static void set_number(cJSON *o, const char *key, double v)
{
    cJSON_SetNumberValue(cJSON_GetObjectItemCaseSensitive(o, key), v);
}

static double number(const cJSON *o, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(o, key)->valuedouble;
}

/* The verdict on the planner's plan of m after edit(plan). */
static void verify_edited(const gm_model *m, const char *plan_text, void (*edit)(cJSON *), gm_plan_verdict *v)
{
    cJSON *plan = cJSON_Parse(plan_text);
    assert_non_null(plan);
    if (edit) edit(plan);
    char *text = cJSON_PrintUnformatted(plan);
    gm_error err;
    if (gm_plan_verify_json(m, text, strlen(text), "p.json", v, &err) != GM_OK) fail_msg("verify: %s", err.message);
    free(text);
    cJSON_Delete(plan);
}

/* row's anchors join loop_out_1, where loop_out_1 lies: one symbol for the two tensors */
static void merge_stacked(cJSON *plan)
{
    cJSON *row = plan_symbol(plan, "row_out_0"), *st = plan_symbol(plan, "loop_out_1");
    cJSON *from = cJSON_GetObjectItemCaseSensitive(row, "anchors"), *to = cJSON_GetObjectItemCaseSensitive(st, "anchors");
    while (cJSON_GetArraySize(from)) cJSON_AddItemToArray(to, cJSON_DetachItemFromArray(from, 0));
    cJSON *syms = cJSON_GetObjectItemCaseSensitive(plan, "symbols");
    for (int i = 0; i < cJSON_GetArraySize(syms); i++)
        if (cJSON_GetArrayItem(syms, i) == row) cJSON_DeleteItemFromArray(syms, i);
    /* the claimed lower bound was the old plan's, witnessed by row_out_0 among others */
    cJSON *summary = cJSON_GetObjectItemCaseSensitive(plan, "summary");
    cJSON_DeleteItemFromObjectCaseSensitive(summary, "lower_bound_witness");
    cJSON_DeleteItemFromObjectCaseSensitive(summary, "lower_bound_bytes");
}

/* row inside loop_out_1's bytes (it is smaller: nothing else is there) */
static void overlap_stacked(cJSON *plan)
{
    set_number(plan_symbol(plan, "row_out_0"), "offset", number(plan_symbol(plan, "loop_out_1"), "offset"));
}

/* late's output at row's offset: late runs after b_out read row, before the loop's exit */
static void late_over_row(cJSON *plan)
{
    set_number(plan_symbol(plan, "late_out_0"), "offset", number(plan_symbol(plan, "row_out_0"), "offset"));
}

static void test_loop_stacked_output(void **state)
{
    (void)state;
    gm_model *m = NULL;
    gm_error err;
    if (gm_model_read_file(GM_TEST_DATA_DIR "/loop_stacked.json", &m, &err) != GM_OK) fail_msg("%s", err.message);
    gm_plan *p = NULL;
    if (gm_plan_build(m, NULL, &p, &err) != GM_OK) fail_msg("plan: %s", err.message);
    char *text = NULL;
    size_t len = 0;
    if (gm_plan_write_json(m, p, &text, &len, &err) != GM_OK) fail_msg("write: %s", err.message);
    gm_plan_free(p);
    gm_plan_verdict v;
    verify_edited(m, text, NULL, &v);
    if (!gm_plan_verdict_ok(&v)) {
        dump(&v);
        fail_msg("the planner's plan of a loop with a stacked output was rejected");
    }
    gm_plan_verdict_free(&v);

    struct {
        void (*edit)(cJSON *);
        gm_plan_problem_kind kind;
        const char *a, *b;
    } bad[] = {
        {merge_stacked, GM_PLAN_P_UNRELATED, "loop_out_1", NULL},
        {overlap_stacked, GM_PLAN_P_OVERLAP, "loop_out_1", "row_out_0"},
        {late_over_row, GM_PLAN_P_OVERLAP, "late_out_0", "row_out_0"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        verify_edited(m, text, bad[i].edit, &v);
        bool other = false;
        for (size_t k = 0; k < v.n_problems; k++) other |= v.problems[k].kind != bad[i].kind;
        if (!has(&v, bad[i].kind, bad[i].a, bad[i].b) || other) {
            dump(&v);
            fail_msg("edit %zu: expected only %s naming %s", i, gm_plan_problem_kind_name(bad[i].kind), bad[i].a);
        }
        gm_plan_verdict_free(&v);
    }
    free(text);
    gm_model_free(m);
}

/* ---- GE's symbol table as a no-reuse plan -----------------------------------------------------
 * The planner's own symbol table (used here only to write a plan, never by the verifier) laid
 * out one symbol after another: the anchor rules of the two must agree, so it passes. The same
 * symbols all at offset 0 must be rejected for overlaps. */

static int64_t bytes_at(const gm_anchor *a)
{
    if (a->out) return gm_desc_size(gm_node_output_desc(a->node, a->index));
    int32_t k;
    gm_node *p = gm_node_input(a->node, a->index, &k);
    return p ? gm_desc_size(gm_node_output_desc(p, (size_t)k)) : 0;
}

static char *symbol_table_plan(const gm_model *m, bool stack_all)
{
    gm_symbols *s;
    gm_error err;
    if (gm_symbols_build(m, &s, &err) != GM_OK) fail_msg("%s", err.message);
    cJSON *root = cJSON_CreateObject(), *syms = cJSON_AddArrayToObject(root, "symbols");
    cJSON_AddNumberToObject(root, "graphmem_plan", 1);
    int64_t next[3] = {0, 0, 0}; /* feature_map, zero_copy, fixed */
    const char *names[3] = {"feature_map", "zero_copy", "fixed"};
    for (size_t i = 0; i < gm_symbols_count(s); i++) {
        int32_t y = gm_symbols_at(s, i);
        char name[256];
        cJSON *o = cJSON_CreateObject(), *anc = cJSON_CreateArray();
        cJSON_AddStringToObject(o, "id", gm_symbol_name(s, y, name, sizeof name));
        int64_t size = 0;
        int region = 0;
        bool dynamic = false;
        for (int32_t a = gm_symbol_first(s, y); a >= 0; a = gm_symbols_next(s, a)) {
            gm_anchor an = gm_symbols_anchor(s, a);
            cJSON *j = cJSON_CreateObject();
            cJSON_AddStringToObject(j, "node", gm_node_name(an.node));
            cJSON_AddNumberToObject(j, an.out ? "out" : "in", an.index);
            cJSON_AddItemToArray(anc, j);
            int64_t b = bytes_at(&an);
            if (b < 0) dynamic = true;
            if (b > size) size = b;
            const char *t = gm_node_type(an.node);
            bool in_root = gm_graph_is_root(gm_node_graph(an.node));
            if (an.out && (!strcmp(t, "Const") || !strcmp(t, "Variable"))) region = 2;
            else if (an.out && in_root && !strcmp(t, "Data") && region == 0) region = 1;
        }
        cJSON_AddItemToObject(o, "anchors", anc);
        size = (size + 511) / 512 * 512;
        cJSON_AddStringToObject(o, "region", dynamic ? "dynamic" : names[region]);
        if (!dynamic) {
            cJSON_AddNumberToObject(o, "offset", stack_all && region == 0 ? 0 : (double)next[region]);
            next[region] += size;
        }
        cJSON_AddNumberToObject(o, "size", (double)size);
        cJSON_AddItemToArray(syms, o);
    }
    gm_symbols_free(s);
    char *text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return text;
}

static void test_symbol_table_plan_of_example(void **state)
{
    (void)state;
    gm_model *m = NULL;
    gm_error err;
    if (gm_model_read_embedded_example(&m, &err) != GM_OK) fail_msg("%s", err.message);
    char *plan = symbol_table_plan(m, false);
    gm_plan_verdict v;
    assert_int_equal(gm_plan_verify_json(m, plan, strlen(plan), "p.json", &v, &err), GM_OK);
    /* before the passes, feat's continuous inputs are a user input and a feature-map tensor
     * (layout_conflict would copy one): that group is rightly rejected, nothing else is */
    if (v.n_problems != v.by_kind[GM_PLAN_P_CONTINUOUS] || v.dropped) {
        dump(&v);
        fail_msg("GE's symbols laid out without reuse were rejected");
    }
    assert_true(v.symbols > 10);
    gm_plan_verdict_free(&v);
    free(plan);
    plan = symbol_table_plan(m, true);
    assert_int_equal(gm_plan_verify_json(m, plan, strlen(plan), "p.json", &v, &err), GM_OK);
    assert_true(v.by_kind[GM_PLAN_P_OVERLAP] > 0);
    for (int k = 0; k < GM_PLAN_P_KIND_COUNT; k++)
        if (k != GM_PLAN_P_OVERLAP && k != GM_PLAN_P_CONTINUOUS) assert_int_equal(v.by_kind[k], 0);
    gm_plan_verdict_free(&v);
    free(plan);
    gm_model_free(m);
}


/* ---- reading the plan element by element (verify_read.c, verify_fast.c) ------------------ */

/* The scan finds the arrays at key paths from the root, and only those. */
static void test_split_scan_paths(void **state)
{
    (void)state;
    static const char *const paths[] = {"symbols", "order", "summary/lower_bound_witness"};
    char *t = q("{'x':{'symbols':[1,2]},'summary':{'a':[0],'lower_bound_witness':['A', 'B']},"
                "'symbols':[{'id':'A','anchors':[]} , {'id':'B,]'}],'order':[],'z':[{'order':[5]}]}");
    gm_json_split sp = {0};
    assert_int_equal(gm_json_split_scan_paths(t, strlen(t), paths, 3, &sp), GM_JSON_SPLIT_OK);
    assert_int_equal(sp.n_arrays, 3);
    assert_int_equal(sp.arrays[0].path, 2); /* the witness, first in the text */
    assert_int_equal(sp.arrays[0].count, 2);
    assert_int_equal(sp.arrays[1].path, 0);
    assert_int_equal(sp.arrays[1].count, 2);
    assert_int_equal(sp.arrays[2].path, 1);
    assert_int_equal(sp.arrays[2].count, 0);
    size_t b, e;
    gm_json_split_element(&sp, &sp.arrays[1], 1, &b, &e);
    assert_int_equal(e - b, strlen(" {'id':'B,]'}"));
    assert_memory_equal(t + b, " {\"id\":\"B,]\"}", e - b);
    gm_json_split_free(&sp);
    free(t);
    /* escapes inside strings: a backslash that ends a string, an escaped quote and bracket */
    const char *bs = "{\"symbols\":[{\"id\":\"B\\\\\"},{\"id\":\"q\\\"],\"}, 7]}";
    assert_int_equal(gm_json_split_scan_paths(bs, strlen(bs), paths, 3, &sp), GM_JSON_SPLIT_OK);
    assert_int_equal(sp.n_arrays, 1);
    assert_int_equal(sp.arrays[0].count, 3);
    gm_json_split_element(&sp, &sp.arrays[0], 1, &b, &e);
    assert_memory_equal(bs + b, "{\"id\":\"q\\\"],\"}", e - b);
    gm_json_split_free(&sp);
    /* a key on the path written with an escape: cJSON would unescape it, the scan cannot */
    const char *esc = "{\"sym\\u0062ols\":[1]}";
    assert_int_equal(gm_json_split_scan_paths(esc, strlen(esc), paths, 3, &sp), GM_JSON_SPLIT_GIVE_UP);
    gm_json_split_free(&sp);
    /* unbalanced */
    assert_int_equal(gm_json_split_scan_paths("{\"order\":[", 10, paths, 3, &sp), GM_JSON_SPLIT_GIVE_UP);
    gm_json_split_free(&sp);
}

/* Two splits found the same arrays and element ends. */
static void assert_same_split(const gm_json_split *a, const gm_json_split *b)
{
    assert_int_equal(a->n_arrays, b->n_arrays);
    for (size_t i = 0; i < a->n_arrays; i++) {
        assert_int_equal(a->arrays[i].open, b->arrays[i].open);
        assert_int_equal(a->arrays[i].close, b->arrays[i].close);
        assert_int_equal(a->arrays[i].first, b->arrays[i].first);
        assert_int_equal(a->arrays[i].count, b->arrays[i].count);
        assert_int_equal(a->arrays[i].path, b->arrays[i].path);
    }
    assert_int_equal(a->n_ends, b->n_ends);
    if (a->n_ends) assert_memory_equal(a->ends, b->ends, a->n_ends * sizeof *a->ends);
    assert_int_equal(a->removed, b->removed);
}

/* The scan in steps (the planner's, following the writer: verify_follow.c) stops at any byte,
 * inside a string, a key, an escape, and goes on from there, also in a copy of the text (the
 * writer's buffer moves): every way of cutting the text gives the one-go scan's answer. */
static void test_split_scan_in_steps(void **state)
{
    (void)state;
    static const char *const paths[] = {"symbols", "order", "summary/lower_bound_witness"};
    char *texts[] = {
        q("{'x':{'symbols':[1,2]},'summary':{'a':[0],'lower_bound_witness':['A', 'B']},"
          "'symbols':[{'id':'A','anchors':[]} , {'id':'B,]'}],'order':[],'z':[{'order':[5]}]}"),
        strdup("{\"symbols\":[{\"id\":\"B\\\\\"},{\"id\":\"q\\\"],\"}, 7]}"),
        strdup("{\"sym\\u0062ols\":[1]}"),
        strdup("{\"order\":[\"a\",\"b\""),
        strdup("{\"order\":[\"a\"]]}"),
    };
    for (size_t t = 0; t < sizeof texts / sizeof *texts; t++) {
        const char *x = texts[t];
        size_t len = strlen(x);
        gm_json_split whole = {0};
        gm_json_split_result want = gm_json_split_scan_paths(x, len, paths, 3, &whole);
        for (size_t step = 1; step <= len; step++) {
            gm_json_split_scanner sc;
            assert_true(gm_json_split_scanner_init(&sc, paths, 3));
            gm_json_split got = {0};
            gm_json_split_result r = GM_JSON_SPLIT_MORE;
            char *copy = NULL;
            for (size_t upto = step; r == GM_JSON_SPLIT_MORE; upto = upto + step < len ? upto + step : len) {
                if (upto >= len / 2 && !copy) copy = strdup(x); /* the text moved half way */
                r = gm_json_split_scanner_run(&sc, copy ? copy : x, upto, upto == len, &got);
                if (upto == len) break;
            }
            assert_int_equal(r, want);
            if (want == GM_JSON_SPLIT_OK) assert_same_split(&got, &whole);
            gm_json_split_free(&got);
            free(copy);
        }
        gm_json_split_free(&whole);
        free(texts[t]);
    }
    /* paths the one-go scan gives up on, the scanner refuses */
    gm_json_split_scanner sc;
    static const char *const bad[] = {"a//b"};
    assert_false(gm_json_split_scanner_init(&sc, bad, 1));
}

/* s with its first `from` replaced by `to` (malloc'd). */
static char *replaced(const char *s, const char *from, const char *to)
{
    const char *at = strstr(s, from);
    assert_non_null(at);
    size_t n = strlen(s) - strlen(from) + strlen(to) + 1;
    char *r = malloc(n);
    snprintf(r, n, "%.*s%s%s", (int)(at - s), s, to, at + strlen(from));
    return r;
}

/* Verdicts of one plan written several ways: counts per kind, and the first problem. */
static void same_verdict(const gm_model *m, const char *a_sq, const char *b_sq)
{
    gm_plan_verdict va, vb;
    verify(m, a_sq, &va);
    verify(m, b_sq, &vb);
    assert_int_equal(va.n_problems, vb.n_problems);
    assert_int_equal(va.symbols, vb.symbols);
    assert_int_equal(va.bytes, vb.bytes);
    assert_int_equal(va.extent_bytes, vb.extent_bytes);
    for (int k = 0; k < GM_PLAN_P_KIND_COUNT; k++) assert_int_equal(va.by_kind[k], vb.by_kind[k]);
    for (size_t i = 0; i < va.n_problems; i++) assert_string_equal(va.problems[i].message, vb.problems[i].message);
    gm_plan_verdict_free(&va);
    gm_plan_verdict_free(&vb);
}

/* The planner's compact form is read without cJSON; the same plan pretty-printed, with its
 * keys moved, extra fields, or numbers written as floats goes (in part) through cJSON, and
 * with an escaped root key it is read whole: the verdicts must not differ. */
static void test_fast_and_cjson_readers_agree(void **state)
{
    (void)state;
    char buf[4096];
    gm_model *m = two_streams("");
    for (int bad = 0; bad < 2; bad++) {
        const char *plan = plan_two(buf, sizeof buf, 0, 1024, bad ? 512 : 1024, true);
        /* pretty-printed by cJSON: tabs and new lines everywhere */
        char *dq = q(plan);
        cJSON *root = cJSON_Parse(dq);
        char *pretty = cJSON_Print(root);
        for (char *p = pretty; *p; p++)
            if (*p == '"') *p = '\'';
        same_verdict(m, plan, pretty);
        /* moved keys, an unknown field of every kind, null offsets, a float size, an escape */
        char *o1 = replaced(plan, "{'id':'X','anchors'", "{'extra':{'a':[1,-2,true,null,'s']},'anchors'");
        char *o2 = replaced(o1, "'offset':0,'size':1024}", "'offset':0,'size':1024.0,'id':'X'}");
        char *odd = replaced(o2, "{'node':'b','out':0}", "{'node':'\\u0062','out':0,'offset':null}");
        free(o1);
        free(o2);
        same_verdict(m, plan, odd);
        /* an escaped key in the root: the scan gives up and cJSON reads the whole text */
        char *whole = replaced(plan, "{'graphmem_plan'", "{'\\u0078':0,'graphmem_plan'");
        same_verdict(m, plan, whole);
        same_verdict(m, whole, odd);
        free(whole);
        free(odd);
        cJSON_free(pretty);
        cJSON_Delete(root);
        free(dq);
    }
    gm_model_free(m);
}

/* Errors inside a split array are told as the whole text's reading tells them: the file, the
 * byte, the symbol's number and id. */
static void test_errors_inside_split_arrays(void **state)
{
    (void)state;
    char buf[4096];
    gm_model *m = two_streams("");
    gm_plan_verdict v;
    gm_error err;
    /* a syntax error in the second symbol: the byte cJSON stops at in the whole text */
    char *p = q(plan_two(buf, sizeof buf, 0, 1024, 1024, true));
    char *s = strstr(p, "{\"id\":\"A\"");
    s[strlen("{\"id\":\"A\"")] = ';';
    assert_null(cJSON_ParseWithLength(p, strlen(p)));
    size_t at = (size_t)(cJSON_GetErrorPtr() - p);
    char want[128];
    snprintf(want, sizeof want, "p.json: not valid JSON (near byte %zu)", at);
    assert_int_equal(gm_plan_verify_json(m, p, strlen(p), "p.json", &v, &err), GM_ERR_INPUT);
    assert_string_equal(err.message, want);
    free(p);
    /* a wrong field of symbol 2 (B) behind a syntax error in the order: the order's comes first
     * in the text, and the whole reading reports it */
    char *p0 = q(plan_two(buf, sizeof buf, 0, 1024, 1024, true));
    p = replaced(p0, "\"size\":1024},{\"id\":\"A2\"", "\"size\":-1024},{\"id\":\"A2\"");
    free(p0);
    assert_int_equal(gm_plan_verify_json(m, p, strlen(p), "p.json", &v, &err), GM_ERR_INPUT);
    assert_non_null(strstr(err.message, "symbol 'B' (number 2): \"size\" must be a non-negative integer"));
    char *o = malloc(strlen(p) + 64);
    snprintf(o, strlen(p) + 64, "{\"order\":[\"x\",,\"a\"],%s", p + 1);
    assert_int_equal(gm_plan_verify_json(m, o, strlen(o), "p.json", &v, &err), GM_ERR_INPUT);
    assert_string_equal(err.message, "p.json: not valid JSON (near byte 14)");
    free(o);
    free(p);
    /* "symbols" twice: cJSON reads the first, so must the verifier */
    p = q("{'graphmem_plan':1,'symbols':5,'symbols':[]}");
    assert_int_equal(gm_plan_verify_json(m, p, strlen(p), "p.json", &v, &err), GM_ERR_INPUT);
    assert_non_null(strstr(err.message, "\"symbols\" is missing or not an array"));
    free(p);
    /* a witness entry that is no symbol, and one not a string */
    p = q(plan_two(buf, sizeof buf, 0, 1024, 1024, true));
    o = malloc(strlen(p) + 128);
    snprintf(o, strlen(p) + 128,
             "{\"summary\":{\"lower_bound_bytes\":0,\"lower_bound_witness\":[\"A\", \"nope\", 7]},%s", p + 1);
    assert_int_equal(gm_plan_verify_json(m, o, strlen(o), "p.json", &v, &err), GM_OK);
    assert_int_equal(v.by_kind[GM_PLAN_P_BOUND], 2);
    assert_non_null(strstr(v.problems[0].message, "names no symbol of the plan: nope"));
    assert_non_null(strstr(v.problems[1].message, "(not a string)"));
    gm_plan_verdict_free(&v);
    free(o);
    free(p);
    gm_model_free(m);
}

/* Batch labels run exclusively: symbols of two labels may overlap, of one label may not. */
static void test_batch_labels(void **state)
{
    (void)state;
    char buf[4096];
    gm_model *m = two_streams("");
    const char *plan = plan_two(buf, sizeof buf, 0, 1024, 512, true); /* A and B overlap, unordered */
    char *a1 = replaced(plan, "'offset':0,'size':1024},{'id':'B'",
                        "'offset':0,'size':1024,'batch_label':'b1'},{'id':'B'");
    char *two = replaced(a1, "'offset':512,'size':1024}", "'offset':512,'size':1024,'batch_label':'b2'}");
    char *one = replaced(a1, "'offset':512,'size':1024}", "'offset':512,'size':1024,'batch_label':'b1'}");
    expect_ok(m, two);
    expect_only(m, one, GM_PLAN_P_OVERLAP, "A", "B");
    free(a1);
    free(two);
    free(one);
    gm_model_free(m);
}

/* ---- bad files ------------------------------------------------------------------------- */

static void test_malformed_plan_file(void **state)
{
    (void)state;
    gm_model *m = two_streams("");
    char path[] = "/tmp/gm_verify_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "{ \"graphmem_plan\": 1, \"symbols\": [", 34), 34);
    close(fd);
    gm_plan_verdict v;
    gm_error err;
    assert_int_equal(gm_plan_verify_file(m, path, &v, &err), GM_ERR_INPUT);
    assert_non_null(strstr(err.message, path));
    /* valid JSON, wrong version */
    const char *v2 = "{\"graphmem_plan\": 2, \"symbols\": []}";
    assert_int_equal(gm_plan_verify_json(m, v2, strlen(v2), "p2.json", &v, &err), GM_ERR_INPUT);
    assert_non_null(strstr(err.message, "p2.json"));
    /* a symbol without a size */
    const char *ns = "{\"graphmem_plan\": 1, \"symbols\": [{\"id\":\"S\",\"anchors\":[],\"region\":\"fixed\"}]}";
    assert_int_equal(gm_plan_verify_json(m, ns, strlen(ns), "p3.json", &v, &err), GM_ERR_INPUT);
    assert_non_null(strstr(err.message, "'S'"));
    assert_int_equal(gm_plan_verify_file(m, "/nonexistent/plan.json", &v, &err), GM_ERR_IO);
    unlink(path);
    gm_model_free(m);
}

static void test_bad_order(void **state)
{
    (void)state;
    char buf[4096];
    gm_model *m = consts_and_concat();
    plan_cc(buf, sizeof buf, 1024, 0, 1024);
    char *o = strstr(buf, "'c1','c2','p','r','cat','out'");
    memcpy(o, "'c1','c2','cat','r','p','out'", strlen("'c1','c2','cat','r','p','out'"));
    expect_only(m, buf, GM_PLAN_P_BAD_ORDER, NULL, NULL);
    gm_model_free(m);
}

/* Every allocation failing in turn: a clean GM_ERR_NOMEM (ASan checks for leaks), then the
 * same verdict as without failures. */
static void test_allocation_failures(void **state)
{
    (void)state;
    char buf[4096];
    gm_model *m = loop_model();
    char *plan = q(plan_loop(buf, sizeof buf, 0, 1024));
    gm_error err;
    gm_plan_verdict v;
    for (long n = 0;; n++) {
        gm_alloc_fail_after(n);
        gm_status st = gm_plan_verify_json(m, plan, strlen(plan), "p.json", &v, &err);
        gm_alloc_fail_after(-1);
        if (st == GM_OK) break;
        assert_int_equal(st, GM_ERR_NOMEM);
        assert_true(n < 10000);
    }
    assert_true(has(&v, GM_PLAN_P_OVERLAP, "V", "T1"));
    gm_plan_verdict_free(&v);
    free(plan);
    gm_model_free(m);
}

/* A chain of 70,000 nodes and its plan (reproducible), big enough to be read in parts. */
static gm_plan *big_chain_plan(gm_model **m, gm_plan_options *o)
{
    char *t = chain_json(70000, 1024);
    gm_error err;
    if (gm_model_read_json(t, strlen(t), "chain.json", m, &err) != GM_OK) fail_msg("%s", err.message);
    free(t);
    gm_plan *p = NULL;
    gm_plan_options_init(o);
    o->reproducible = true;
    if (gm_plan_build(*m, o, &p, &err) != GM_OK) fail_msg("%s", err.message);
    assert_true(p->n_symbols > 65536);
    return p;
}

/* A plan of more than 65,536 symbols is read in parts and checked in groups on two threads
 * (verify_read.c, verify.c): the anchors and sizes; the order with its overlaps and the bound;
 * the races. Corrupted
 * in both, its verdict still lists the first group's problems first and counts every problem
 * once, and is the same when the symbols are read on one thread. */
static void test_big_plan_two_groups(void **state)
{
    (void)state;
    gm_model *m = NULL;
    gm_error err;
    gm_plan_options o;
    gm_plan *p = big_chain_plan(&m, &o);
    assert_int_equal(p->unresolved, 0);
    /* on one thread (the bound then taken before the items, not beside them; planner.c), the
     * same plan to the byte: bound, witness and all */
    o.threads = 1;
    gm_plan *one = NULL;
    if (gm_plan_build(m, &o, &one, &err) != GM_OK) fail_msg("%s", err.message);
    assert_int_equal(one->lower_bound_bytes, p->lower_bound_bytes);
    assert_int_equal(one->n_witness, p->n_witness);
    assert_int_equal(one->text_len, p->text_len);
    assert_memory_equal(one->text, p->text, p->text_len);
    gm_plan_free(one);
    /* the self-check scanned the text on a second thread as it was written (verify_follow.c):
     * the text is the writer's, byte for byte, and the verifier alone finds it clean */
    char *again = NULL;
    size_t again_len = 0;
    if (gm_plan_write_json(m, p, &again, &again_len, &err) != GM_OK) fail_msg("%s", err.message);
    assert_int_equal(again_len, p->text_len);
    assert_memory_equal(again, p->text, again_len);
    free(again);
    gm_plan_verdict clean;
    if (gm_plan_verify_json(m, p->text, p->text_len, "plan", &clean, &err) != GM_OK) fail_msg("%s", err.message);
    assert_int_equal(clean.n_problems, 0);
    gm_plan_verdict_free(&clean);
    /* every symbol at offset 0 (neighbours in the chain are live together: overlaps), and one
     * symbol 512 bytes long (its tensor no longer fits) */
    char *bad = malloc(p->text_len + 1);
    assert_non_null(bad);
    size_t k = 0;
    bool shrunk = false;
    for (const char *x = p->text; *x;) {
        if (!strncmp(x, "\"offset\":", 9)) {
            memcpy(bad + k, "\"offset\":0", 10), k += 10;
            for (x += 9; *x >= '0' && *x <= '9';) x++;
        } else if (!shrunk && !strncmp(x, "\"size\":4096,\"lifetime\"", 22)) {
            memcpy(bad + k, "\"size\":512,", 11), k += 11;
            x += 12;
            shrunk = true;
        } else {
            bad[k++] = *x++;
        }
    }
    bad[k] = '\0';
    assert_true(shrunk);
    /* and an anchor naming no node (found as the anchors are resolved, beside the order's first
     * steps), and an order entry naming no node (found by those steps) */
    char *at_anchor = strstr(bad, "{\"node\":\"n9\"");
    assert_non_null(at_anchor);
    memcpy(at_anchor + 9, "zz", 2);
    char *at_order = strstr(bad, "\"n7\"");
    assert_non_null(at_order);
    assert_true(at_order < strstr(bad, "\"symbols\""));
    memcpy(at_order + 1, "zz", 2);
    /* and a claimed bound more than its witness holds (the order group's last check, after the
     * races, which run in a group of their own) */
    char *at_bound = strstr(bad, "\"lower_bound_bytes\": ");
    assert_non_null(at_bound);
    at_bound += strlen("\"lower_bound_bytes\": ");
    assert_true(*at_bound >= '1' && *at_bound <= '8');
    *at_bound = '9';
    gm_plan_verdict v;
    if (gm_plan_verify_json(m, bad, k, "bad", &v, &err) != GM_OK) fail_msg("%s", err.message);
    assert_int_equal(v.by_kind[GM_PLAN_P_TOO_SMALL], 1);
    assert_int_equal(v.by_kind[GM_PLAN_P_UNKNOWN_ANCHOR], 1);
    assert_int_equal(v.by_kind[GM_PLAN_P_BAD_ORDER], 2); /* names no node; leaves one out */
    assert_int_equal(v.by_kind[GM_PLAN_P_BOUND], 1);
    assert_int_equal(v.by_kind[GM_PLAN_P_RACE], 0);
    assert_true(v.by_kind[GM_PLAN_P_OVERLAP] > 0);
    size_t total = 0;
    for (int kind = 0; kind < GM_PLAN_P_KIND_COUNT; kind++) total += v.by_kind[kind];
    assert_int_equal(v.n_problems + v.dropped, total);
    assert_true(v.n_problems > 4);
    /* as one thread would tell them: the anchors' resolution, the first group (the size), then
     * the second (the order, then its overlaps) */
    assert_int_equal(v.problems[0].kind, GM_PLAN_P_UNKNOWN_ANCHOR);
    size_t small = 0, first_order = 0;
    for (size_t i = 0; i < v.n_problems; i++) {
        if (v.problems[i].kind == GM_PLAN_P_TOO_SMALL) small = i;
        if (v.problems[i].kind == GM_PLAN_P_BAD_ORDER && !first_order) first_order = i;
    }
    assert_true(small > 0 && first_order > small);
    assert_int_equal(v.problems[first_order + 1].kind, GM_PLAN_P_BAD_ORDER);
    for (size_t i = first_order + 2; i < v.n_problems; i++) assert_int_equal(v.problems[i].kind, GM_PLAN_P_OVERLAP);
    /* The symbols are read in parts side by side when each is written as the planner writes
     * it; one id spelled with an escape (the same id) sends the whole array to the one-thread
     * reading: the same verdict, problem for problem. */
    const char *at = strstr(bad, "{\"id\":\"n5_out_0\"");
    assert_non_null(at);
    size_t pre = (size_t)(at - bad);
    char *esc = malloc(k + 16);
    assert_non_null(esc);
    memcpy(esc, bad, pre);
    size_t k2 = pre + (size_t)sprintf(esc + pre, "{\"id\":\"n5\\u005fout_0\"");
    strcpy(esc + k2, at + strlen("{\"id\":\"n5_out_0\""));
    gm_plan_verdict w;
    if (gm_plan_verify_json(m, esc, strlen(esc), "bad", &w, &err) != GM_OK) fail_msg("%s", err.message);
    assert_int_equal(w.n_problems, v.n_problems);
    assert_int_equal(w.dropped, v.dropped);
    for (int kind = 0; kind < GM_PLAN_P_KIND_COUNT; kind++) assert_int_equal(w.by_kind[kind], v.by_kind[kind]);
    for (size_t i = 0; i < v.n_problems; i++) assert_string_equal(w.problems[i].message, v.problems[i].message);
    gm_plan_verdict_free(&w);
    free(esc);
    gm_plan_verdict_free(&v);
    free(bad);
    gm_plan_free(p);
    gm_model_free(m);
}

/* The verdict on text, which must be clean, or (bad) hold one output anchor naming no node:
 * that anchor, and the output it should have placed. */
static gm_plan_verdict verdict_of(const gm_model *m, const char *text, bool bad)
{
    gm_plan_verdict v;
    gm_error err;
    if (gm_plan_verify_json(m, text, strlen(text), "plan", &v, &err) != GM_OK) fail_msg("%s", err.message);
    assert_int_equal(v.n_problems, bad ? 2 : 0);
    assert_int_equal(v.by_kind[GM_PLAN_P_UNKNOWN_ANCHOR], bad);
    assert_int_equal(v.by_kind[GM_PLAN_P_UNPLACED], bad);
    return v;
}

/* The symbols' parts write their anchors into one array, each part into a stretch as long as
 * the anchors its text opens with their node, counted beforehand (verify_read.c). A text the
 * count misjudges is still read right: an object opening with "node" that is no anchor leaves
 * its stretch a gap (closed as the parts are joined), and an anchor with its node last makes
 * its part find more than counted (the array is then read on one thread). Each is told as the
 * one-thread reading tells it: an anchor of the second part naming no node is reported on its
 * own symbol, and nothing else is. */
static void test_big_plan_parts_counted(void **state)
{
    (void)state;
    gm_model *m = NULL;
    gm_plan_options o;
    gm_plan *p = big_chain_plan(&m, &o);
    /* The first symbol (the first part's) as the planner wrote it, up to its first anchor:
     * {"id":"I","anchors":[{"node":"N","out":K} */
    const char *first = strstr(strstr(p->text, "\"symbols\""), "{\"id\":\"");
    assert_non_null(first);
    char id[64], node[64];
    int k = -1, len = 0;
    assert_int_equal(sscanf(first, "{\"id\":\"%63[^\"]\",\"anchors\":[{\"node\":\"%63[^\"]\",\"out\":%d}%n", id, node,
                            &k, &len),
                     3);
    assert_true(len > 0);
    char old[256], note[256], last[256], both[256];
    snprintf(old, sizeof old, "%.*s", len, first);
    /* a field holding an object that opens with "node" (counted, no anchor) */
    snprintf(note, sizeof note, "{\"note\":{\"node\":\"n1\"},%s", old + 1);
    /* its first anchor with its node last (an anchor not counted) */
    snprintf(last, sizeof last, "{\"id\":\"%s\",\"anchors\":[{\"out\":%d,\"node\":\"%s\"}", id, k, node);
    /* both, and an escape in the id ("\u0030" for its '0') that sends the whole array to the
     * one-thread reading */
    const char *zero = strchr(id, '0');
    assert_non_null(zero);
    snprintf(both, sizeof both, "{\"note\":{\"node\":\"n1\"},\"id\":\"%.*s\\u0030%s\",\"anchors\":[{\"out\":%d,\"node\":\"%s\"}",
             (int)(zero - id), id, zero + 1, k, node);
    const char *texts[] = {note, last, both};
    /* an anchor of the last symbol (the second part's) naming no node */
    const char *end = first, *at;
    while ((at = strstr(end + 1, "{\"id\":\"")) != NULL) end = at;
    char *late = strdup(p->text);
    assert_non_null(late);
    char *lost = strstr(late + (end - p->text), "{\"node\":\"");
    assert_non_null(lost);
    lost[9] = 'z'; /* "n..." becomes "z...": no node has that name */
    char lost_sym[64];
    assert_int_equal(sscanf(end, "{\"id\":\"%63[^\"]\"", lost_sym), 1);
    gm_plan_verdict clean = verdict_of(m, p->text, false), bad = verdict_of(m, late, true);
    assert_string_equal(bad.problems[0].sym_a, lost_sym);
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        char *good = replaced(p->text, old, texts[i]), *worse = replaced(late, old, texts[i]);
        gm_plan_verdict g = verdict_of(m, good, false), w = verdict_of(m, worse, true);
        assert_int_equal(g.symbols, clean.symbols);
        assert_int_equal(g.bytes, clean.bytes);
        assert_int_equal(g.overlap_checks, clean.overlap_checks);
        for (size_t q = 0; q < 2; q++) assert_string_equal(w.problems[q].message, bad.problems[q].message);
        gm_plan_verdict_free(&g);
        gm_plan_verdict_free(&w);
        free(good);
        free(worse);
    }
    gm_plan_verdict_free(&clean);
    gm_plan_verdict_free(&bad);
    free(late);
    gm_plan_free(p);
    gm_model_free(m);
}

/* The sweep orders by radix passes and by qsort agree record for record: negative keys, equal
 * keys, both ends and starts at one address (verify_sort.c). */
static void test_sweep_orders(void **state)
{
    (void)state;
    uint64_t x = 0xDA942042E4DD58B5ull;
    const size_t sizes[] = {1, 7, 1000, 70000};
    for (size_t t = 0; t < sizeof sizes / sizeof *sizes; t++) {
        size_t n = sizes[t];
        gm_vfy_key *r = malloc(n * sizeof *r), *q = malloc(n * sizeof *q);
        assert_true(r && q);
        for (int order = 0; order < 2; order++) {
            for (size_t i = 0; i < n; i++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                int64_t key = (int64_t)(x % 5000) - 2000;
                if (x >> 60 == 0) key = (int64_t)(x >> 8) - ((int64_t)1 << 54); /* far apart */
                int32_t a = order == GM_VFY_BY_ADDR ? (int32_t)(x >> 20 & 1) : (int32_t)(x >> 16); /* any int32 */
                r[i] = (gm_vfy_key){key, a, (int32_t)((x >> 32) % (n + 1))};
            }
            memcpy(q, r, n * sizeof *r);
            gm_vfy_sort_with(r, n, (gm_vfy_order)order, true);
            gm_vfy_sort_with(q, n, (gm_vfy_order)order, false);
            for (size_t i = 0; i < n; i++) {
                assert_int_equal(r[i].key, q[i].key);
                assert_int_equal(r[i].a, q[i].a);
                assert_int_equal(r[i].b, q[i].b);
            }
        }
        free(r);
        free(q);
    }
}

/* The dims a plan records: read back as written, none when absent, and a clear error when the
 * field is not a list of strings. */
static void test_plan_dims(void **state)
{
    (void)state;
    gm_error err;
    char **d = NULL;
    const char *ok = "{\"graphmem_plan\": 1, \"dims\": [\"N=1\", \"seq=128\"], \"symbols\": []}";
    assert_int_equal(gm_plan_json_dims(ok, strlen(ok), "p.json", &d, &err), GM_OK);
    assert_non_null(d);
    assert_string_equal(d[0], "N=1");
    assert_string_equal(d[1], "seq=128");
    assert_null(d[2]);
    free(d);
    const char *none = "{\"graphmem_plan\": 1, \"symbols\": []}";
    assert_int_equal(gm_plan_json_dims(none, strlen(none), "p.json", &d, &err), GM_OK);
    assert_null(d);
    const char *bad = "{\"dims\": [\"N=1\", 2]}";
    assert_int_equal(gm_plan_json_dims(bad, strlen(bad), "p.json", &d, &err), GM_ERR_INPUT);
    assert_null(d);
    assert_non_null(strstr(err.message, "p.json: \"dims\" entry 1 must be a string"));
    const char *notlist = "{\"dims\": \"N=1\"}";
    assert_int_equal(gm_plan_json_dims(notlist, strlen(notlist), "p.json", &d, &err), GM_ERR_INPUT);
    assert_non_null(strstr(err.message, "must be a list of strings"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_correct_plan_passes),
        cmocka_unit_test(test_overlap_two_streams_rejected),
        cmocka_unit_test(test_overlap_ordered_by_control_edge_accepted),
        cmocka_unit_test(test_misaligned_offset),
        cmocka_unit_test(test_consumer_anchor_missing),
        cmocka_unit_test(test_tensor_bigger_than_symbol),
        cmocka_unit_test(test_unknown_and_duplicate_anchor),
        cmocka_unit_test(test_unrelated_tensors_in_one_symbol),
        cmocka_unit_test(test_race_in_one_symbol),
        cmocka_unit_test(test_race_between_overlaps_and_bound),
        cmocka_unit_test(test_fixed_overlap),
        cmocka_unit_test(test_continuous_group),
        cmocka_unit_test(test_no_padding_concat),
        cmocka_unit_test(test_dynamic_region),
        cmocka_unit_test(test_while_loop),
        cmocka_unit_test(test_loop_split_symbol),
        cmocka_unit_test(test_value_used_inside_and_outside_loop),
        cmocka_unit_test(test_loop_stacked_output),
        cmocka_unit_test(test_symbol_table_plan_of_example),
        cmocka_unit_test(test_split_scan_paths),
        cmocka_unit_test(test_fast_and_cjson_readers_agree),
        cmocka_unit_test(test_errors_inside_split_arrays),
        cmocka_unit_test(test_batch_labels),
        cmocka_unit_test(test_malformed_plan_file),
        cmocka_unit_test(test_bad_order),
        cmocka_unit_test(test_allocation_failures),
        cmocka_unit_test(test_big_plan_two_groups),
        cmocka_unit_test(test_big_plan_parts_counted),
        cmocka_unit_test(test_split_scan_in_steps),
        cmocka_unit_test(test_sweep_orders),
        cmocka_unit_test(test_plan_dims),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
