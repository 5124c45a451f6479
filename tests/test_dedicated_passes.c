/*
 * test_dedicated_passes.c — GE's dedicated memory-conflict passes (reference §3): HcclMemcpy,
 * HcclContinuousMemcpy, Subgraph, InplaceSupportCheck, AtomicAddrClean, MemcpyAddrAsync,
 * MarkSameAddr, SetInputOutputOffset.
 *
 * Two parts:
 *  - every tests/scenarios/pass_*.json runs through a local runner that calls these passes in
 *    GE's order (so they are checked before and whether or not pipeline.c registers them), and
 *    each of those files must FAIL when no pass runs, so none passes vacuously;
 *  - what the scenario format cannot say (names, attributes, control edges, the report, errors)
 *    is asserted here on graphs given inline (single quotes stand for double quotes) or taken
 *    from the scenario files.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "scenario_check.c"
#include "scenario_cmocka.h"

#include "conflict/rw_conflict.h"
#include "ir/ir.h"
#include "passes/dedicated.h"
#include "util/alloc.h"

/* ---- running the passes ------------------------------------------------------------------ */

typedef gm_status (*pass_fn)(gm_pass_ctx *c);

static const struct {
    gm_pass_id id;
    pass_fn fn;
} k_order[] = {
    /* GE's order (reference §0); HcclMemcpyPass runs twice. */
    {GM_PASS_HCCL_MEMCPY, gm_pass_hccl_memcpy},
    {GM_PASS_SUBGRAPH, gm_pass_subgraph},
    {GM_PASS_INPLACE_SUPPORT_CHECK, gm_pass_inplace_support_check},
    {GM_PASS_ATOMIC_ADDR_CLEAN, gm_pass_atomic_addr_clean},
    {GM_PASS_HCCL_CONTINUOUS_MEMCPY, gm_pass_hccl_continuous_memcpy},
    {GM_PASS_HCCL_MEMCPY, gm_pass_hccl_memcpy},
    {GM_PASS_MEMCPY_ADDR_ASYNC, gm_pass_memcpy_addr_async},
    {GM_PASS_MARK_SAME_ADDR, gm_pass_mark_same_addr},
    {GM_PASS_SET_IO_OFFSET, gm_pass_set_io_offset},
};

static gm_status run_local(gm_model *m, gm_pass_set set, gm_pass_report *rep, gm_pass_set *available,
                           gm_error *err, void *ctx)
{
    (void)ctx;
    memset(rep, 0, sizeof *rep);
    *available = 0;
    for (size_t i = 0; i < sizeof k_order / sizeof *k_order; i++) {
        *available |= 1u << k_order[i].id;
        if (!(set & (1u << k_order[i].id))) continue;
        gm_pass_ctx c = {m, rep, k_order[i].id, err, NULL};
        gm_status st = k_order[i].fn(&c);
        if (st != GM_OK) return st;
        rep->ran[k_order[i].id] = 1;
    }
    return gm_model_toposort(m, err);
}

/* ---- the scenario files ------------------------------------------------------------------ */

/* Scenarios that pin an absence (nothing inserted where a pass must not act); what their pass
 * does instead is asserted by the test named beside them. */
static const char *const k_absence_only[] = {
    "pass_atomic_addr_clean_policy_separate.json", /* test_atomic_policy_separately */
};

static void test_pass_scenarios(void **state)
{
    (void)state;
    size_t n = 0, failed = 0, vacuous = 0;
    char **names = scn_list_files(GM_SCENARIO_DIR, "pass_", &n);
    if (n < 40) fail_msg("expected the pass_*.json scenarios in %s, found %zu", GM_SCENARIO_DIR, n);
    for (size_t i = 0; i < n; i++) {
        size_t len = 0;
        char *text = slurp_scenario(names[i], &len);
        scn_buf out = {0};
        if (scn_check_text(names[i], text, len, run_local, NULL, &out)) failed++;
        fputs(scn_buf_str(&out), stderr);
        /* Without the passes the same file must fail, or it tests nothing. */
        bool exempt = false;
        for (size_t k = 0; k < sizeof k_absence_only / sizeof *k_absence_only; k++)
            exempt |= strcmp(names[i], k_absence_only[k]) == 0;
        scn_buf none = {0};
        if (!exempt && scn_check_text(names[i], text, len, run_nothing, NULL, &none) == 0) {
            fprintf(stderr, "VACUOUS %s: holds even when no pass runs\n", names[i]);
            vacuous++;
        }
        scn_buf_free(&none);
        scn_buf_free(&out);
        free(text);
    }
    scn_free_list(names, n);
    print_message("pass scenarios: %zu run, %zu failed, %zu vacuous\n", n, failed, vacuous);
    if (failed || vacuous) fail_msg("%zu of %zu pass scenarios failed, %zu vacuous", failed, n, vacuous);
    (void)scn_run_real; /* the real pipeline runs them in test_scenarios */
}

/* ---- helpers for the direct tests -------------------------------------------------------- */

/* Runs one pass directly, as pipeline.c will, and re-sorts (a cycle would fail here). */
static gm_status run_pass(gm_model *m, gm_pass_id id, pass_fn fn, gm_pass_report *rep, gm_error *err)
{
    gm_pass_ctx c = {m, rep, id, err, NULL};
    gm_error_clear(err);
    gm_status st = fn(&c);
    return st == GM_OK ? gm_model_toposort(m, err) : st;
}

static void run_ok(gm_model *m, gm_pass_id id, pass_fn fn, gm_pass_report *rep)
{
    gm_error err;
    if (run_pass(m, id, fn, rep, &err) != GM_OK) fail_msg("%s: %s", gm_pass_name(id), err.message);
}

static gm_node *node(const gm_model *m, const char *name)
{
    gm_node *n = gm_model_find_node(m, name);
    if (!n) fail_msg("no node '%s'", name);
    return n;
}

static bool ctrl_edge(const gm_model *m, const char *from, const char *to)
{
    const gm_node *a = node(m, from), *b = node(m, to);
    return gm_node_vec_contains(&b->ctrl_in, a) && gm_node_vec_contains(&a->ctrl_out, b);
}

static void assert_fed_by(const gm_model *m, const char *dst, size_t in, const char *src, int32_t idx)
{
    int32_t k = -1;
    const gm_node *p = gm_node_input(node(m, dst), in, &k);
    if (!p || strcmp(p->name, src) != 0 || k != idx)
        fail_msg("%s:%zu is fed by %s:%d, wanted %s:%d", dst, in, p ? p->name : "(none)", (int)k, src, (int)idx);
}

static bool battr(const gm_node *n, const char *name, bool *v)
{
    const gm_attr *a = gm_attr_find(n->attrs, name);
    if (!a || a->kind != GM_ATTR_BOOL) return false;
    *v = a->u.b;
    return true;
}

static void assert_battr(const gm_model *m, const char *n, const char *attr, bool want)
{
    bool v;
    if (!battr(node(m, n), attr, &v)) fail_msg("'%s' has no bool attribute %s", n, attr);
    if (v != want) fail_msg("'%s'.%s is %d, wanted %d", n, attr, v, want);
}

static void assert_no_attr(const gm_model *m, const char *n, const char *attr)
{
    if (gm_attr_find(node(m, n)->attrs, attr)) fail_msg("'%s' should not carry %s", n, attr);
}

static size_t node_count(const gm_model *m)
{
    return gm_model_node_count(m);
}

#define OUT4 "'outputs':[{'dtype':'float32','shape':[4]}]"

/* ---- HcclMemcpyPass (§3.1) --------------------------------------------------------------- */

static void test_hccl_var_assign_control(void **state)
{
    (void)state;
    gm_model *m = load_scenario("pass_hccl_memcpy_var_assign.json");
    gm_pass_report rep = {0};
    run_ok(m, GM_PASS_HCCL_MEMCPY, gm_pass_hccl_memcpy, &rep);
    const char *id = "allreduce_HcclMemcpyPass_Identity0";
    assert_string_equal(node(m, id)->type, "Identity");
    assert_fed_by(m, "allreduce", 0, id, 0);
    assert_fed_by(m, id, 0, "var", 0);
    /* §7.2: the Identity's in-control node is "assign". */
    assert_int_equal(node(m, id)->ctrl_in.n, 1);
    assert_true(ctrl_edge(m, "assign", id));
    assert_battr(m, id, "no_need_constant_folding", false);
    assert_no_attr(m, id, "_cannot_be_deleted");
    /* The report names the node, its pass, where and why. */
    assert_int_equal(rep.n_nodes, 1);
    assert_int_equal(rep.inserted[GM_PASS_HCCL_MEMCPY], 1);
    assert_string_equal(rep.nodes[0].node, id);
    assert_string_equal(rep.nodes[0].anchor_node, "allreduce");
    assert_int_equal(rep.nodes[0].index, 0);
    assert_true(rep.nodes[0].before);
    assert_non_null(strstr(rep.nodes[0].reason, "variable"));
    gm_pass_report_free(&rep);
    gm_model_free(m);
}

/* Writers in two graphs are visited graph by graph, the root first, as GE walks them: the
 * root's writer (after the If) gets its copy before the branch's writer, which comes first in
 * the model's order (the pass collects the writers in one walk of the model). */
static void test_hccl_writers_in_graph_order(void **state)
{
    (void)state;
    gm_model *m = load_scenario("pass_hccl_memcpy_graph_order.json");
    assert_true(gm_node_topo_id(node(m, "t_w")) < gm_node_topo_id(node(m, "root_w")));
    gm_pass_report rep = {0};
    run_ok(m, GM_PASS_HCCL_MEMCPY, gm_pass_hccl_memcpy, &rep);
    assert_int_equal(rep.n_nodes, 2);
    assert_string_equal(rep.nodes[0].anchor_node, "root_w");
    assert_string_equal(rep.nodes[1].anchor_node, "t_w");
    assert_fed_by(m, "root_w", 0, "root_w_HcclMemcpyPass_Identity0", 0);
    assert_fed_by(m, "t_w", 0, "t_w_HcclMemcpyPass_Identity0", 0);
    gm_pass_report_free(&rep);
    gm_model_free(m);
}

/* A writer of the variable fed by the broadcast itself: ordering the copy after it would be a
 * cycle, so no edge; and the variable has an Assign already, so no write-back is added. */
static void test_hccl_var_writer_after_hccl(void **state)
{
    (void)state;
    gm_model *m = load_q("{'graphmem':1,'graphs':[{'name':'root','nodes':["
                         "{'name':'var','type':'Variable'," OUT4 "},"
                         "{'name':'bc','type':'HcomBroadcast','inputs':['var:0']," OUT4 "},"
                         "{'name':'assign','type':'Assign','inputs':['var:0','bc:0']," OUT4 "},"
                         "{'name':'out','type':'NetOutput','inputs':['assign:0']}]}]}");
    gm_pass_report rep = {0};
    run_ok(m, GM_PASS_HCCL_MEMCPY, gm_pass_hccl_memcpy, &rep);
    assert_int_equal(node(m, "bc_HcclMemcpyPass_Identity0")->ctrl_in.n, 0);
    assert_null(gm_model_find_node(m, "bc_Assign_0"));
    assert_int_equal(node_count(m), 5);
    gm_pass_report_free(&rep);
    gm_model_free(m);
}

static void test_hccl_broadcast_assign_edges(void **state)
{
    (void)state;
    gm_model *m = load_q("{'graphmem':1,'graphs':[{'name':'root','nodes':["
                         "{'name':'var','type':'Variable'," OUT4 "},"
                         "{'name':'bc','type':'HcomBroadcast','inputs':['var:0']," OUT4 "},"
                         "{'name':'r1','type':'Relu','inputs':['bc:0']," OUT4 "},"
                         "{'name':'r2','type':'Relu','inputs':['bc:0']," OUT4 "},"
                         "{'name':'after','type':'NoOp','control_inputs':['bc']},"
                         "{'name':'out','type':'NetOutput','inputs':['r1:0','r2:0']}]}]}");
    gm_pass_report rep = {0};
    run_ok(m, GM_PASS_HCCL_MEMCPY, gm_pass_hccl_memcpy, &rep);
    const gm_node *a = node(m, "bc_Assign_0");
    assert_string_equal(a->type, "Assign");
    assert_int_equal(a->n_in, 2);
    assert_fed_by(m, "bc_Assign_0", 0, "var", 0);
    assert_fed_by(m, "bc_Assign_0", 1, "bc", 0);
    assert_string_equal(gm_node_input_name(a, 0), "ref");
    assert_string_equal(gm_node_input_name(a, 1), "value");
    assert_int_equal(a->n_out, 1);
    assert_int_equal(gm_desc_size(&a->out[0].desc), 16);
    /* Readers of the broadcast result and its control successor wait for the write-back. */
    assert_true(ctrl_edge(m, "bc_Assign_0", "r1"));
    assert_true(ctrl_edge(m, "bc_Assign_0", "r2"));
    assert_true(ctrl_edge(m, "bc_Assign_0", "after"));
    assert_int_equal(a->ctrl_out.n, 3);
    assert_int_equal(rep.n_nodes, 2);
    assert_string_equal(rep.nodes[1].node, "bc_Assign_0");
    assert_string_equal(rep.nodes[1].type, "Assign");
    /* The second run (GE's OptimizeStage1_3) finds nothing more to do. */
    size_t before = node_count(m);
    run_ok(m, GM_PASS_HCCL_MEMCPY, gm_pass_hccl_memcpy, &rep);
    assert_int_equal(node_count(m), before);
    assert_int_equal(rep.n_nodes, 2);
    gm_pass_report_free(&rep);
    gm_model_free(m);
}

static void test_hccl_second_run_idempotent(void **state)
{
    (void)state;
    static const char *const files[] = {"pass_hccl_memcpy_data_control.json",
                                        "pass_hccl_memcpy_avoid_too_many_identity.json",
                                        "pass_hccl_memcpy_const_subgraph.json"};
    for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
        gm_model *m = load_scenario(files[f]);
        gm_pass_report rep = {0};
        run_ok(m, GM_PASS_HCCL_MEMCPY, gm_pass_hccl_memcpy, &rep);
        size_t n = node_count(m);
        assert_true(rep.n_nodes > 0);
        run_ok(m, GM_PASS_HCCL_MEMCPY, gm_pass_hccl_memcpy, &rep);
        assert_int_equal(node_count(m), n);
        gm_pass_report_free(&rep);
        gm_model_free(m);
    }
}

/* §7.2: after HcclMemcpyPass marks the allreduce _skip_rw_conflict (its other reader is only a
 * shape computation), HandleMemoryRWConflict adds nothing either: 5 nodes stay 5. */
static void test_hccl_shape_sibling_then_rw_conflict(void **state)
{
    (void)state;
    gm_model *m = load_scenario("pass_hccl_memcpy_shape_sibling.json");
    gm_pass_report rep = {0};
    run_ok(m, GM_PASS_HCCL_MEMCPY, gm_pass_hccl_memcpy, &rep);
    assert_battr(m, "allreduce", "_skip_rw_conflict", true);
    run_ok(m, GM_PASS_RW_CONFLICT, gm_pass_rw_conflict, &rep);
    assert_int_equal(node_count(m), 5);
    gm_pass_report_free(&rep);
    gm_model_free(m);
}

/* ---- HcclContinuousMemcpyPass (§3.2) ----------------------------------------------------- */

static void test_hccl_continuous_names_attrs(void **state)
{
    (void)state;
    gm_model *m = load_q("{'graphmem':1,'graphs':[{'name':'root','nodes':["
                         "{'name':'c','type':'Const'," OUT4 "},"
                         "{'name':'h1','type':'HcomAllGather','inputs':['c:0','c:0'],'attrs':{'continuous_input':true}," OUT4 "},"
                         "{'name':'out','type':'NetOutput','inputs':['h1:0']}]}]}");
    gm_pass_report rep = {0};
    run_ok(m, GM_PASS_HCCL_CONTINUOUS_MEMCPY, gm_pass_hccl_continuous_memcpy, &rep);
    assert_fed_by(m, "h1", 0, "c_HcclContinuousMemcpyPass_Identity", 0);
    assert_fed_by(m, "h1", 1, "c_HcclContinuousMemcpyPass_Identity_1", 0);
    assert_battr(m, "c_HcclContinuousMemcpyPass_Identity", "_cannot_be_deleted", true);
    assert_battr(m, "c_HcclContinuousMemcpyPass_Identity_1", "no_need_constant_folding", false);
    assert_int_equal(rep.inserted[GM_PASS_HCCL_CONTINUOUS_MEMCPY], 2);
    gm_pass_report_free(&rep);
    gm_model_free(m);
}

static void test_hccl_continuous_broadcast_assign(void **state)
{
    (void)state;
    gm_model *m = load_scenario("pass_hccl_continuous_memcpy_broadcast_assign.json");
    gm_pass_report rep = {0};
    run_ok(m, GM_PASS_HCCL_CONTINUOUS_MEMCPY, gm_pass_hccl_continuous_memcpy, &rep);
    assert_fed_by(m, "broadcast_Assign_0", 0, "var", 0);
    assert_fed_by(m, "broadcast_Assign_1", 0, "var2", 0);
    assert_fed_by(m, "broadcast_Assign_1", 1, "broadcast", 1);
    assert_true(ctrl_edge(m, "broadcast_Assign_0", "add"));
    gm_pass_report_free(&rep);
    gm_model_free(m);
}

/* ---- SubgraphPass (§3.3) ----------------------------------------------------------------- */

/* Runs SubgraphPass on a scenario and checks that `copy` exists as an Identity with GE's
 * protection attributes. */
static gm_model *subgraph_run(const char *file, const char *const *copies, size_t n)
{
    gm_model *m = load_scenario(file);
    gm_pass_report rep = {0};
    run_ok(m, GM_PASS_SUBGRAPH, gm_pass_subgraph, &rep);
    assert_int_equal(rep.n_nodes, n);
    for (size_t i = 0; i < n; i++) {
        const gm_node *x = node(m, copies[i]);
        assert_string_equal(x->type, "Identity");
        assert_battr(m, copies[i], "_cannot_be_deleted", true);
        assert_battr(m, copies[i], "no_need_constant_folding", false);
        for (uint32_t k = 0; k < x->n_out; k++) assert_false(x->out[k].desc.reuse_input);
        assert_int_equal(rep.nodes[i].pass, GM_PASS_SUBGRAPH);
        assert_string_equal(rep.nodes[i].node, copies[i]);
    }
    gm_pass_report_free(&rep);
    return m;
}

static void test_subgraph_names(void **state)
{
    (void)state;
    static const struct {
        const char *file;
        const char *copies[2];
        size_t n;
    } k[] = {
        {"pass_subgraph_case_const_data.json", {"b0_o_input_0_Memcpy", "b1_o_input_0_Memcpy"}, 2},
        {"pass_subgraph_while_shared_input.json", {"loop_input_0_Memcpy"}, 1},
        {"pass_subgraph_while_const_input.json", {"loop_input_0_Memcpy"}, 1},
        {"pass_subgraph_data_continuous.json", {"t_d_output_0_Memcpy", "e_d_output_0_Memcpy"}, 2},
        {"pass_subgraph_while_body.json", {"body_input_Memcpy", "body_output_Memcpy"}, 2},
        {"pass_subgraph_while_dynamic_cond.json", {"cond_input_Memcpy"}, 1},
        {"pass_subgraph_if_separate_outputs.json", {"t_r_output_0_Memcpy"}, 1},
        {"pass_subgraph_while_const_through_call.json", {"w_input_0_Memcpy"}, 1},
    };
    for (size_t i = 0; i < sizeof k / sizeof *k; i++) gm_model_free(subgraph_run(k[i].file, k[i].copies, k[i].n));
}

/* The body copies are multi-input: input j <-> output j, every reader of a Data moved over. */
static void test_subgraph_while_body_multi_io(void **state)
{
    (void)state;
    gm_model *m = load_q(
        "{'graphmem':1,'graphs':[{'name':'root','nodes':["
        "{'name':'x','type':'Data'," OUT4 "},{'name':'y','type':'Data'," OUT4 "},{'name':'z','type':'Data'," OUT4 "},"
        "{'name':'loop','type':'While','inputs':['x:0','y:0','z:0'],'subgraphs':['cond','body'],"
        "'outputs':[{'dtype':'float32','shape':[4]},{'dtype':'float32','shape':[4]},{'dtype':'float32','shape':[4]}]},"
        "{'name':'out','type':'NetOutput','inputs':['loop:0','loop:1','loop:2']}]},"
        "{'name':'cond','parent':'loop','nodes':[{'name':'cd','type':'Data','attrs':{'_parent_node_index':0}," OUT4 "},"
        "{'name':'ca','type':'ReduceAll','inputs':['cd:0'],'outputs':[{'dtype':'bool','shape':[]}]},"
        "{'name':'co','type':'NetOutput','inputs':['ca:0']}]},"
        "{'name':'body','parent':'loop','nodes':["
        "{'name':'d0','type':'Data','attrs':{'_parent_node_index':0}," OUT4 "},"
        "{'name':'d1','type':'Data','attrs':{'_parent_node_index':1}," OUT4 "},"
        "{'name':'d2','type':'Data','attrs':{'_parent_node_index':2}," OUT4 "},"
        "{'name':'a','type':'Add','inputs':['d0:0','d1:0']," OUT4 "},"
        "{'name':'n','type':'Neg','inputs':['d1:0']," OUT4 "},"
        "{'name':'bo','type':'NetOutput','inputs':['a:0','n:0','d2:0'],'input_descs':["
        "{'attrs':{'_parent_node_index':0}},{'attrs':{'_parent_node_index':1}},{'attrs':{'_parent_node_index':2}}]}]}]}");
    gm_pass_report rep = {0};
    run_ok(m, GM_PASS_SUBGRAPH, gm_pass_subgraph, &rep);
    const gm_node *in = node(m, "body_input_Memcpy"), *out = node(m, "body_output_Memcpy");
    assert_int_equal(in->n_in, 2);
    assert_int_equal(in->n_out, 2);
    assert_fed_by(m, "body_input_Memcpy", 0, "d0", 0);
    assert_fed_by(m, "body_input_Memcpy", 1, "d1", 0);
    assert_fed_by(m, "a", 0, "body_input_Memcpy", 0);
    assert_fed_by(m, "a", 1, "body_input_Memcpy", 1);
    assert_fed_by(m, "n", 0, "body_input_Memcpy", 1);
    assert_int_equal(out->n_in, 2);
    assert_fed_by(m, "bo", 0, "body_output_Memcpy", 0);
    assert_fed_by(m, "bo", 1, "body_output_Memcpy", 1);
    assert_fed_by(m, "bo", 2, "d2", 0); /* the bypass */
    assert_fed_by(m, "body_output_Memcpy", 0, "a", 0);
    assert_fed_by(m, "body_output_Memcpy", 1, "n", 0);
    assert_int_equal(rep.n_nodes, 2);
    assert_int_equal(rep.nodes[0].index, -1);
    gm_pass_report_free(&rep);
    gm_model_free(m);
}

static void test_subgraph_batch_label_and_reuse(void **state)
{
    (void)state;
    gm_model *m = load_q(
        "{'graphmem':1,'graphs':[{'name':'root','nodes':["
        "{'name':'x','type':'Data'," OUT4 "},"
        "{'name':'call','type':'PartitionedCall','inputs':['x:0'],'subgraphs':['f']," OUT4 "},"
        "{'name':'out','type':'NetOutput','inputs':['call:0']}]},"
        "{'name':'f','parent':'call','nodes':[{'name':'fx','type':'Data','attrs':{'_parent_node_index':0}," OUT4 "},"
        "{'name':'sp','type':'SplitD','inputs':['fx:0'],'attrs':{'continuous_output':true,'_batch_label':'b1'},"
        "'outputs':[{'dtype':'float32','shape':[4],'reuse_input':true,'reuse_input_index':0}]},"
        "{'name':'fo','type':'NetOutput','inputs':['sp:0'],'input_descs':[{'attrs':{'_parent_node_index':0}}]}]}]}");
    gm_pass_report rep = {0};
    run_ok(m, GM_PASS_SUBGRAPH, gm_pass_subgraph, &rep);
    const gm_node *c = node(m, "fo_input_0_Memcpy");
    assert_string_equal(gm_attrs_get_string(c->attrs, "_batch_label"), "b1");
    assert_false(c->out[0].desc.reuse_input);
    assert_int_equal(gm_desc_size(&c->out[0].desc), 16);
    gm_pass_report_free(&rep);
    gm_model_free(m);
}

static void test_subgraph_body_needs_one_netoutput(void **state)
{
    (void)state;
    gm_model *m = load_q(
        "{'graphmem':1,'graphs':[{'name':'root','nodes':["
        "{'name':'x','type':'Data'," OUT4 "},"
        "{'name':'loop','type':'While','inputs':['x:0'],'subgraphs':['cond','body']," OUT4 "},"
        "{'name':'out','type':'NetOutput','inputs':['loop:0']}]},"
        "{'name':'cond','parent':'loop','nodes':[{'name':'cd','type':'Data','attrs':{'_parent_node_index':0}," OUT4 "},"
        "{'name':'co','type':'NetOutput','inputs':['cd:0']}]},"
        "{'name':'body','parent':'loop','nodes':[{'name':'bd','type':'Data','attrs':{'_parent_node_index':0}," OUT4 "},"
        "{'name':'br','type':'Relu','inputs':['bd:0']," OUT4 "}]}]}");
    gm_pass_report rep = {0};
    gm_error err;
    assert_int_equal(run_pass(m, GM_PASS_SUBGRAPH, gm_pass_subgraph, &rep, &err), GM_ERR_INPUT);
    assert_non_null(strstr(err.message, "exactly one NetOutput"));
    assert_non_null(strstr(err.message, "'body'"));
    gm_pass_report_free(&rep);
    gm_model_free(m);
}

/* ---- InplaceSupportCheckPass (§3.4) ------------------------------------------------------ */

static int64_t inplace_index(const gm_model *m, const char *n)
{
    const gm_node *x = node(m, n);
    const gm_attr *a = gm_attr_find(x->out[0].desc.attrs, "_inplace_support_input_index");
    return a ? gm_attr_int(a) : -1;
}

static void test_inplace_support_check(void **state)
{
    (void)state;
    gm_model *m = load_q(
        "{'graphmem':1,'graphs':[{'name':'root','nodes':["
        "{'name':'x','type':'Data'," OUT4 "},"
        "{'name':'c','type':'Const'," OUT4 "},"
        "{'name':'v','type':'Variable'," OUT4 "},"
        "{'name':'r1','type':'Relu','inputs':['x:0']," OUT4 "},"             /* Data input: no */
        "{'name':'r2','type':'Relu','inputs':['r1:0']," OUT4 "},"            /* single reader: 0 */
        "{'name':'sh','type':'Relu','inputs':['x:0']," OUT4 "},"
        "{'name':'add','type':'Add','inputs':['c:0','sh:0','r2:0']," OUT4 "},"/* Const skipped, sh shared: 2 */
        "{'name':'sig','type':'Sigmoid','inputs':['sh:0']," OUT4 "},"
        "{'name':'h','type':'Cast','inputs':['sig:0'],'outputs':[{'dtype':'float16','shape':[4]}]}," /* dtype */
        "{'name':'w','type':'Reshape2','inputs':['h:0'],'outputs':[{'dtype':'float16','shape':[2,2]}]}," /* shape */
        "{'name':'two','type':'Split2','inputs':['w:0'],'outputs':[{'dtype':'float16','shape':[2,2]},"
        "{'dtype':'float16','shape':[2,2]}]},"                                /* two outputs: no */
        "{'name':'vv','type':'Relu','inputs':['v:0']," OUT4 "},"            /* variable: no */
        "{'name':'out','type':'NetOutput','inputs':['add:0','two:0','two:1','vv:0']}]}]}");
    gm_pass_report rep = {0};
    run_ok(m, GM_PASS_INPLACE_SUPPORT_CHECK, gm_pass_inplace_support_check, &rep);
    assert_int_equal(inplace_index(m, "r1"), -1);
    assert_int_equal(inplace_index(m, "r2"), 0);
    assert_int_equal(inplace_index(m, "add"), 2);
    assert_int_equal(inplace_index(m, "sig"), -1); /* sh has two readers */
    assert_int_equal(inplace_index(m, "h"), -1);
    assert_int_equal(inplace_index(m, "w"), -1);
    assert_int_equal(inplace_index(m, "two"), -1);
    assert_null(gm_attr_find(node(m, "two")->out[1].desc.attrs, "_inplace_support_input_index"));
    assert_int_equal(inplace_index(m, "vv"), -1);
    assert_int_equal(rep.n_nodes, 0);
    gm_pass_report_free(&rep);
    gm_model_free(m);
}

/* ---- AtomicAddrCleanPass (§3.5) ---------------------------------------------------------- */

static void test_atomic_acyclic_edges(void **state)
{
    (void)state;
    gm_model *m = load_q(
        "{'graphmem':1,'graphs':[{'name':'root','nodes':["
        "{'name':'x','type':'Data'," OUT4 "},{'name':'y','type':'Data'," OUT4 "},"
        "{'name':'a1','type':'UnsortedSegmentSum','inputs':['x:0'],'attrs':{'atomic_output_index':[0]}," OUT4 "},"
        "{'name':'ry','type':'Relu','inputs':['y:0']," OUT4 "},"
        "{'name':'a2','type':'UnsortedSegmentSum','inputs':['ry:0'],'attrs':{'atomic_input_index':[0]}," OUT4 "},"
        "{'name':'out','type':'NetOutput','inputs':['a1:0','a2:0','y:0']}]}]}");
    gm_pass_report rep = {0};
    run_ok(m, GM_PASS_ATOMIC_ADDR_CLEAN, gm_pass_atomic_addr_clean, &rep);
    const gm_node *cl = node(m, "atomic_addr_clean");
    assert_string_equal(cl->type, "AtomicAddrClean");
    assert_int_equal(cl->n_in, 0);
    assert_int_equal(cl->n_out, 0);
    assert_true(ctrl_edge(m, "atomic_addr_clean", "a1"));
    assert_true(ctrl_edge(m, "atomic_addr_clean", "a2"));
    assert_true(ctrl_edge(m, "atomic_addr_clean", "ry")); /* first reader of source y */
    assert_int_equal(cl->ctrl_out.n, 3);                  /* not NetOutput */
    assert_int_equal(gm_node_topo_id(cl), 0);              /* at the head */
    assert_battr(m, "a1", "is_atomic_node", true);
    assert_battr(m, "a2", "is_atomic_node", true);
    assert_int_equal(rep.n_nodes, 1);
    assert_int_equal(rep.nodes[0].pass, GM_PASS_ATOMIC_ADDR_CLEAN);
    gm_pass_report_free(&rep);
    gm_model_free(m);
}

static void test_atomic_loop_graph(void **state)
{
    (void)state;
    gm_model *m = load_q(
        "{'graphmem':1,'graphs':[{'name':'root','nodes':["
        "{'name':'x','type':'Data'," OUT4 "},{'name':'p','type':'Data','outputs':[{'dtype':'bool','shape':[]}]},"
        "{'name':'lc','type':'LoopCond','inputs':['p:0'],'outputs':[{'dtype':'bool','shape':[]}]},"
        "{'name':'a1','type':'UnsortedSegmentSum','inputs':['x:0'],'stream':3,"
        "'attrs':{'atomic_output_index':[0],'_stream_label':'s3'}," OUT4 "},"
        "{'name':'r','type':'Relu','inputs':['a1:0']," OUT4 "},"
        "{'name':'a2','type':'UnsortedSegmentSum','inputs':['r:0'],'attrs':{'atomic_output_index':[0]}," OUT4 "},"
        "{'name':'a3','type':'UnsortedSegmentSum','inputs':['r:0'],'attrs':{'atomic_output_index':[0]}," OUT4 "},"
        "{'name':'ar','type':'HcomAllReduce','inputs':['a3:0']," OUT4 "},"
        "{'name':'out','type':'NetOutput','inputs':['a2:0','ar:0','lc:0']}]}]}");
    gm_pass_report rep = {0};
    run_ok(m, GM_PASS_ATOMIC_ADDR_CLEAN, gm_pass_atomic_addr_clean, &rep);
    assert_true(ctrl_edge(m, "atomic_addr_clean0", "a1"));
    assert_true(ctrl_edge(m, "atomic_addr_clean1", "a2"));
    /* a3 only feeds the atomic HCCL op, which has its own clean node. */
    assert_true(ctrl_edge(m, "atomic_addr_clean2", "ar"));
    assert_int_equal(node(m, "a3")->ctrl_in.n, 0);
    assert_string_equal(gm_attrs_get_string(node(m, "atomic_addr_clean0")->attrs, "_stream_label"), "s3");
    assert_int_equal(node(m, "atomic_addr_clean0")->stream, 3);
    assert_null(gm_attr_find(node(m, "atomic_addr_clean1")->attrs, "_stream_label"));
    assert_int_equal(rep.n_nodes, 3);
    gm_pass_report_free(&rep);
    gm_model_free(m);
}

static void test_atomic_dispersed_and_hcom_peers(void **state)
{
    (void)state;
    gm_model *m = load_q(
        "{'graphmem':1,'graphs':[{'name':'root','nodes':["
        "{'name':'x','type':'Data'," OUT4 "},"
        "{'name':'a1','type':'UnsortedSegmentSum','inputs':['x:0'],'attrs':{'atomic_output_index':[0]}," OUT4 "},"
        "{'name':'r','type':'Relu','inputs':['a1:0']," OUT4 "},"
        "{'name':'a2','type':'UnsortedSegmentSum','inputs':['r:0'],"
        "'attrs':{'atomic_output_index':[0],'_is_connected_to_netoutput':true}," OUT4 "},"
        "{'name':'a3','type':'UnsortedSegmentSum','inputs':['r:0'],'attrs':{'atomic_output_index':[0]}," OUT4 "},"
        "{'name':'ar','type':'HcomAllReduce','inputs':['a3:0']," OUT4 "},"
        "{'name':'out','type':'NetOutput','inputs':['a2:0','ar:0']}]}]}");
    gm_pass_report rep = {0};
    run_ok(m, GM_PASS_ATOMIC_ADDR_CLEAN, gm_pass_atomic_addr_clean, &rep);
    assert_true(ctrl_edge(m, "atomic_addr_clean", "a1"));
    assert_true(ctrl_edge(m, "atomic_addr_clean_0", "a2"));
    assert_false(ctrl_edge(m, "atomic_addr_clean", "a2"));
    /* a3 feeds only the atomic HCCL op: not linked; both clean nodes precede that op's input
     * producer (LinkToHcomPeerInNode). */
    assert_true(ctrl_edge(m, "atomic_addr_clean", "a3"));
    assert_true(ctrl_edge(m, "atomic_addr_clean_0", "a3"));
    assert_int_equal(node(m, "atomic_addr_clean_0")->ctrl_out.n, 2);
    assert_int_equal(rep.n_nodes, 2);
    gm_pass_report_free(&rep);
    gm_model_free(m);
}

static void test_atomic_policy_separately(void **state)
{
    (void)state;
    gm_model *m = load_scenario("pass_atomic_addr_clean_policy_separate.json");
    size_t n = node_count(m);
    gm_pass_report rep = {0};
    run_ok(m, GM_PASS_ATOMIC_ADDR_CLEAN, gm_pass_atomic_addr_clean, &rep);
    assert_battr(m, "a1", "need_gentask_atomic", true);
    assert_battr(m, "a1", "is_atomic_node", true);
    assert_int_equal(node_count(m), n);
    assert_int_equal(rep.n_nodes, 0);
    gm_pass_report_free(&rep);
    gm_model_free(m);
}

static void test_atomic_gentask_not_linked(void **state)
{
    (void)state;
    gm_model *m = load_q(
        "{'graphmem':1,'graphs':[{'name':'root','nodes':["
        "{'name':'x','type':'Data'," OUT4 "},"
        "{'name':'a1','type':'UnsortedSegmentSum','inputs':['x:0'],'attrs':{'atomic_output_index':[0]}," OUT4 "},"
        "{'name':'nt','type':'ConcatD','inputs':['a1:0'],'attrs':{'_no_task':true}," OUT4 "},"
        "{'name':'a2','type':'UnsortedSegmentSum','inputs':['x:0'],'attrs':{'atomic_output_index':[0]},"
        "'outputs':[{'dtype':'float32','shape':[4],'attrs':{'ref_var_src_var_name':'v'}}]},"
        "{'name':'out','type':'NetOutput','inputs':['nt:0','a2:0']}]}]}");
    gm_pass_report rep = {0};
    run_ok(m, GM_PASS_ATOMIC_ADDR_CLEAN, gm_pass_atomic_addr_clean, &rep);
    assert_battr(m, "a1", "need_gentask_atomic", true);
    assert_battr(m, "a2", "need_gentask_atomic", true);
    assert_null(gm_model_find_node(m, "atomic_addr_clean"));
    assert_int_equal(rep.n_nodes, 0);
    gm_pass_report_free(&rep);
    gm_model_free(m);
}

/* An HCCL op fed by a Data is no atomic HCCL op: nothing is ordered before its producer. */
static void test_atomic_hcom_fed_by_data(void **state)
{
    (void)state;
    gm_model *m = load_scenario("pass_atomic_addr_clean_hcom_data_input.json");
    gm_pass_report rep = {0};
    run_ok(m, GM_PASS_ATOMIC_ADDR_CLEAN, gm_pass_atomic_addr_clean, &rep);
    assert_true(ctrl_edge(m, "atomic_addr_clean", "a1"));
    assert_true(ctrl_edge(m, "atomic_addr_clean", "ar")); /* first reader of the source Data */
    assert_false(ctrl_edge(m, "atomic_addr_clean", "x"));
    assert_int_equal(node(m, "atomic_addr_clean")->ctrl_out.n, 2);
    gm_pass_report_free(&rep);
    gm_model_free(m);
}

static void test_atomic_subgraph_name(void **state)
{
    (void)state;
    gm_model *m = load_scenario("pass_atomic_addr_clean_unknown_graph.json");
    gm_pass_report rep = {0};
    run_ok(m, GM_PASS_ATOMIC_ADDR_CLEAN, gm_pass_atomic_addr_clean, &rep);
    assert_true(ctrl_edge(m, "f_atomic_addr_clean", "a1"));
    assert_battr(m, "a0", "is_atomic_node", true); /* detected, but no node: unknown shape */
    assert_int_equal(node(m, "a0")->ctrl_in.n, 0);
    gm_pass_report_free(&rep);
    gm_model_free(m);
}

/* ---- MemcpyAddrAsyncPass (§3.6) ---------------------------------------------------------- */

static void test_memcpy_addr_async_node(void **state)
{
    (void)state;
    gm_model *m = load_scenario("pass_memcpy_addr_async_const_output.json");
    gm_pass_report rep = {0};
    run_ok(m, GM_PASS_MEMCPY_ADDR_ASYNC, gm_pass_memcpy_addr_async, &rep);
    const gm_node *x = node(m, "out_input_0_MemcpyAddrAsync");
    assert_string_equal(x->type, "MemcpyAddrAsync");
    assert_fed_by(m, "out", 0, "out_input_0_MemcpyAddrAsync", 0);
    assert_fed_by(m, "out_input_0_MemcpyAddrAsync", 0, "c", 0);
    assert_battr(m, "out_input_0_MemcpyAddrAsync", "_cannot_be_deleted", true);
    assert_int_equal(rep.inserted[GM_PASS_MEMCPY_ADDR_ASYNC], 1);
    gm_pass_report_free(&rep);
    gm_model_free(m);
}

/* ---- MarkSameAddrPass (§3.7) ------------------------------------------------------------- */

static void test_mark_same_addr(void **state)
{
    (void)state;
    gm_pass_report rep = {0};
    gm_model *m = load_q(
        "{'graphmem':1,'graphs':[{'name':'root','nodes':["
        "{'name':'x','type':'Data'," OUT4 "},"
        "{'name':'sp','type':'Split2','inputs':['x:0'],'output_names':['y0','y1'],"
        "'outputs':[{'dtype':'int32','shape':[1]},{'dtype':'int32','shape':[1]}]},"
        "{'name':'r','type':'Relu','inputs':['x:0']," OUT4 "},"
        "{'name':'sw','type':'StreamSwitch','inputs':['sp:1','r:0']},"
        "{'name':'q','type':'Neg','inputs':['x:0']," OUT4 "},"
        "{'name':'lb','type':'LabelSwitchByIndex','inputs':['q:0']},"
        "{'name':'out','type':'NetOutput','inputs':['sp:0']}]}]}");
    run_ok(m, GM_PASS_MARK_SAME_ADDR, gm_pass_mark_same_addr, &rep);
    assert_int_equal(gm_attrs_get_int(node(m, "q")->attrs, "_alloc_fixed_addr_index", -1), 0);
    assert_string_equal(gm_attrs_get_string(node(m, "sp")->attrs, "_alloc_fixed_addr"), "y1");
    assert_int_equal(gm_attrs_get_int(node(m, "sp")->attrs, "_alloc_fixed_addr_index", -1), 1);
    assert_string_equal(gm_attrs_get_string(node(m, "r")->attrs, "_alloc_fixed_addr"), "__output0");
    assert_int_equal(gm_attrs_get_int(node(m, "r")->attrs, "_alloc_fixed_addr_index", -1), 0);
    assert_no_attr(m, "x", "_alloc_fixed_addr");
    assert_int_equal(rep.n_nodes, 0);
    gm_model_free(m);
    /* An unknown-shape graph is left alone. */
    m = load_q("{'graphmem':1,'graphs':[{'name':'root','nodes':["
               "{'name':'x','type':'Data','outputs':[{'dtype':'float32','shape':[-1]}]},"
               "{'name':'r','type':'Relu','inputs':['x:0'],'outputs':[{'dtype':'int32','shape':[1]}]},"
               "{'name':'sw','type':'StreamSwitch','inputs':['r:0']}]}]}");
    run_ok(m, GM_PASS_MARK_SAME_ADDR, gm_pass_mark_same_addr, &rep);
    assert_no_attr(m, "r", "_alloc_fixed_addr");
    gm_pass_report_free(&rep);
    gm_model_free(m);
}

/* ---- SetInputOutputOffsetPass (§3.8) ----------------------------------------------------- */

static void assert_list(const gm_model *m, const char *n, const char *attr, const int64_t *want, size_t k)
{
    const gm_attr *a = gm_attr_find(node(m, n)->attrs, attr);
    if (!k) {
        if (a) fail_msg("'%s' should not carry %s", n, attr);
        return;
    }
    if (!a || a->kind != GM_ATTR_LIST_INT) fail_msg("'%s' has no list %s", n, attr);
    assert_int_equal(a->u.li.n, k);
    for (size_t i = 0; i < k; i++)
        if (a->u.li.v[i] != want[i]) fail_msg("'%s'.%s[%zu] = %lld, wanted %lld", n, attr, i, (long long)a->u.li.v[i], (long long)want[i]);
}

static void test_set_io_offset(void **state)
{
    (void)state;
    gm_model *m = load_q(
        "{'graphmem':1,'graphs':[{'name':'root','nodes':["
        "{'name':'x','type':'Data','attrs':{'_gm_output_offsets':[100]}," OUT4 "},"
        "{'name':'y','type':'Data','attrs':{'_gm_output_offsets':[200]}," OUT4 "},"
        "{'name':'z','type':'Data','attrs':{'_gm_output_offsets':[300]}," OUT4 "},"
        /* Data -> Hcom with continuous input: only the input moved away from its Data. */
        "{'name':'h','type':'HcomAllGather','inputs':['x:0','y:0'],"
        "'attrs':{'continuous_input':true,'_is_connected_to_data':true,'_gm_input_offsets':[100,264]}," OUT4 "},"
        /* memory types: input 1 is in L1 (1<<16) and skipped. */
        "{'name':'f','type':'FusedOp','inputs':['z:0','x:0'],"
        "'attrs':{'_input_memory_type':[0,65536],'_is_connected_to_data':true,'_gm_input_offsets':[332,900]}," OUT4 "},"
        /* PhonyConcat -> NetOutput: its inputs relative to its output. */
        "{'name':'a','type':'Relu','inputs':['h:0'],'attrs':{'_gm_output_offsets':[1000]}," OUT4 "},"
        "{'name':'b','type':'Relu','inputs':['f:0'],'attrs':{'_gm_output_offsets':[1032]}," OUT4 "},"
        "{'name':'pc','type':'PhonyConcat','inputs':['a:0','b:0'],"
        "'attrs':{'_is_connected_to_netoutput':true,'_gm_output_offsets':[1000]}," OUT4 "},"
        /* HCCL continuous outputs relative to the first that goes out. */
        "{'name':'hc','type':'HcomReduceScatter','inputs':['x:0'],"
        "'attrs':{'continuous_output':true,'_is_connected_to_netoutput':true,'_gm_output_offsets':[500,564]},"
        "'outputs':[{'dtype':'float32','shape':[4]},{'dtype':'float32','shape':[4]}]},"
        /* no offsets: nothing */
        "{'name':'q','type':'HcomAllGather','inputs':['y:0'],'attrs':{'continuous_input':true,'_is_connected_to_data':true}," OUT4 "},"
        "{'name':'out','type':'NetOutput','inputs':['pc:0','hc:0','hc:1','q:0']}]}]}");
    gm_pass_report rep = {0};
    run_ok(m, GM_PASS_SET_IO_OFFSET, gm_pass_set_io_offset, &rep);
    static const int64_t y_basic[] = {200}, y_rel[] = {64};
    assert_list(m, "y", "zero_copy_basic_offset", y_basic, 1);
    assert_list(m, "y", "zero_copy_relative_offset", y_rel, 1);
    static const int64_t z_basic[] = {300}, z_rel[] = {32};
    assert_list(m, "z", "zero_copy_basic_offset", z_basic, 1);
    assert_list(m, "z", "zero_copy_relative_offset", z_rel, 1);
    assert_list(m, "x", "zero_copy_basic_offset", NULL, 0);
    static const int64_t o_basic[] = {1000, 1000, 500, 500}, o_rel[] = {0, 32, 0, 64};
    assert_list(m, "out", "zero_copy_basic_offset", o_basic, 4);
    assert_list(m, "out", "zero_copy_relative_offset", o_rel, 4);
    assert_int_equal(rep.n_nodes, 0);
    gm_pass_report_free(&rep);
    gm_model_free(m);
}

static void test_set_io_offset_without_offsets(void **state)
{
    (void)state;
    gm_model *m = load_q(
        "{'graphmem':1,'graphs':[{'name':'root','nodes':["
        "{'name':'x','type':'Data'," OUT4 "},"
        "{'name':'h','type':'HcomAllGather','inputs':['x:0'],'attrs':{'continuous_input':true,'_is_connected_to_data':true}," OUT4 "},"
        "{'name':'pc','type':'PhonyConcat','inputs':['h:0'],'attrs':{'_is_connected_to_netoutput':true}," OUT4 "},"
        "{'name':'out','type':'NetOutput','inputs':['pc:0']}]}]}");
    gm_pass_report rep = {0};
    run_ok(m, GM_PASS_SET_IO_OFFSET, gm_pass_set_io_offset, &rep);
    assert_no_attr(m, "x", "zero_copy_basic_offset");
    assert_no_attr(m, "out", "zero_copy_basic_offset");
    gm_pass_report_free(&rep);
    gm_model_free(m);
}

/* ---- allocation failures ---------------------------------------------------------------- */

/* Every allocation a pass makes may fail: the pass must return GM_ERR_NOMEM (never crash or
 * leak), leaving a model that can still be freed. */
static void test_passes_survive_allocation_failures(void **state)
{
    (void)state;
    static const char *const files[] = {
        "pass_hccl_memcpy_broadcast_assign.json", "pass_hccl_memcpy_var_assign.json",
        "pass_hccl_memcpy_graph_order.json",
        "pass_hccl_continuous_memcpy_broadcast_assign.json", "pass_subgraph_while_body.json",
        "pass_subgraph_data_continuous.json", "pass_subgraph_if_separate_outputs.json",
        "pass_subgraph_while_dynamic_cond.json", "pass_atomic_addr_clean_dispersed.json",
        "pass_atomic_addr_clean_loop.json", "pass_memcpy_addr_async_stream_merge_subgraph.json",
    };
    size_t failures_seen = 0;
    for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
        for (size_t p = 0; p < sizeof k_order / sizeof *k_order; p++)
            failures_seen += fail_each_allocation(files[f], k_order[p].id, k_order[p].fn);
    }
    assert_true(failures_seen > 100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hccl_var_assign_control),
        cmocka_unit_test(test_hccl_writers_in_graph_order),
        cmocka_unit_test(test_hccl_var_writer_after_hccl),
        cmocka_unit_test(test_hccl_broadcast_assign_edges),
        cmocka_unit_test(test_hccl_second_run_idempotent),
        cmocka_unit_test(test_hccl_shape_sibling_then_rw_conflict),
        cmocka_unit_test(test_hccl_continuous_names_attrs),
        cmocka_unit_test(test_hccl_continuous_broadcast_assign),
        cmocka_unit_test(test_subgraph_names),
        cmocka_unit_test(test_subgraph_while_body_multi_io),
        cmocka_unit_test(test_subgraph_batch_label_and_reuse),
        cmocka_unit_test(test_subgraph_body_needs_one_netoutput),
        cmocka_unit_test(test_inplace_support_check),
        cmocka_unit_test(test_atomic_acyclic_edges),
        cmocka_unit_test(test_atomic_loop_graph),
        cmocka_unit_test(test_atomic_dispersed_and_hcom_peers),
        cmocka_unit_test(test_atomic_policy_separately),
        cmocka_unit_test(test_atomic_gentask_not_linked),
        cmocka_unit_test(test_atomic_hcom_fed_by_data),
        cmocka_unit_test(test_atomic_subgraph_name),
        cmocka_unit_test(test_memcpy_addr_async_node),
        cmocka_unit_test(test_mark_same_addr),
        cmocka_unit_test(test_set_io_offset),
        cmocka_unit_test(test_set_io_offset_without_offsets),
        cmocka_unit_test(test_passes_survive_allocation_failures),
        cmocka_unit_test(test_pass_scenarios),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
