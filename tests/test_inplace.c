/*
 * test_inplace.c — GE's ProcessInplace (reference §4.1, scenarios §7.3): which outputs end up
 * in one of their inputs' buffers.
 *
 * The scenario format has no key for "output k reuses input i", so:
 *  - every tests/scenarios/inplace_*.json runs here through gm_pass_inplace directly (whether
 *    or not pipeline.c registers it) and must hold;
 *  - the table k_want says, per file, which outputs must reuse which input (or none) after
 *    the pass, and that each "reuses" was not so before — every file with reuse facts is in
 *    it, so a new scenario cannot go unchecked;
 *  - what else the pass promises (logs, the rollback, errors that leave the model alone, the
 *    model input/output attribute, allocation failures) is asserted on those graphs or on
 *    graphs given inline (single quotes stand for double quotes).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "scenario_check.c"
#include "scenario_cmocka.h"

#include "analysis/symbols.h"
#include "conflict/inplace.h"
#include "graphmem/log.h"
#include "ir/ir.h"
#include "util/alloc.h"

/* ---- running the pass -------------------------------------------------------------------- */

static gm_status run_inplace(gm_model *m, gm_pass_set set, gm_pass_report *rep, gm_pass_set *available,
                             gm_error *err, void *ctx)
{
    (void)ctx;
    memset(rep, 0, sizeof *rep);
    *available = 1u << GM_PASS_INPLACE;
    if (set & (1u << GM_PASS_INPLACE)) {
        gm_pass_ctx c = {m, rep, GM_PASS_INPLACE, err, NULL};
        gm_status st = gm_pass_inplace(&c);
        if (st != GM_OK) return st;
        rep->ran[GM_PASS_INPLACE] = 1;
    }
    return gm_model_toposort(m, err);
}

static gm_node *node(const gm_model *m, const char *name)
{
    gm_node *n = gm_model_find_node(m, name);
    if (!n) fail_msg("no node '%s'", name);
    return n;
}

/* Runs the pass as pipeline.c would; the report must stay empty (nothing is inserted). */
static gm_status run_pass(gm_model *m, gm_error *err)
{
    gm_pass_report rep;
    memset(&rep, 0, sizeof rep);
    gm_error_clear(err);
    gm_pass_ctx c = {m, &rep, GM_PASS_INPLACE, err, NULL};
    gm_status st = gm_pass_inplace(&c);
    if (rep.n_nodes || rep.inserted[GM_PASS_INPLACE] || rep.n_warnings)
        fail_msg("inplace recorded %zu node(s) / %zu warning(s) in the report", rep.n_nodes, rep.n_warnings);
    gm_pass_report_free(&rep);
    return st == GM_OK ? gm_model_toposort(m, err) : st;
}

static void run_ok(gm_model *m)
{
    gm_error err;
    if (run_pass(m, &err) != GM_OK) fail_msg("inplace: %s", err.message);
}

/* The input output k of n reuses, -1 for none. */
static int reuse_of(const gm_model *m, const char *n, uint32_t k)
{
    const gm_tensor_desc *d = gm_node_output_desc(node(m, n), k);
    if (!d) fail_msg("'%s' has no output %u", n, k);
    int64_t idx = -1;
    return gm_desc_reuse_input(d, &idx) ? (int)idx : -1;
}

static void assert_reuse(const gm_model *m, const char *n, uint32_t k, int want)
{
    int got = reuse_of(m, n, k);
    if (got != want) fail_msg("%s:%u reuses input %d, wanted %d", n, k, got, want);
}

/* ---- the scenario files ------------------------------------------------------------------ */

static void test_scenario_files(void **state)
{
    (void)state;
    size_t n = 0, failed = 0;
    char **names = scn_list_files(GM_SCENARIO_DIR, "inplace_", &n);
    if (n < 20) fail_msg("expected the inplace_*.json scenarios in %s, found %zu", GM_SCENARIO_DIR, n);
    for (size_t i = 0; i < n; i++) {
        size_t len = 0;
        char *text = scn_slurp(GM_SCENARIO_DIR, names[i], &len);
        if (!text) fail_msg("cannot read %s", names[i]);
        scn_buf out = {0};
        if (scn_check_text(names[i], text, len, run_inplace, NULL, &out)) failed++;
        fputs(scn_buf_str(&out), stderr);
        scn_buf_free(&out);
        free(text);
    }
    scn_free_list(names, n);
    print_message("inplace scenarios: %zu run, %zu failed\n", n, failed);
    if (failed) fail_msg("%zu of %zu inplace scenarios failed", failed, n);
    (void)scn_run_real; /* the real pipeline runs them in test_scenarios */
}

/* The error scenario must fail only because the pass ran. */
static void test_error_scenario_not_vacuous(void **state)
{
    (void)state;
    size_t len = 0;
    char *text = scn_slurp(GM_SCENARIO_DIR, "inplace_entry_size.json", &len);
    assert_non_null(text);
    scn_buf out = {0};
    assert_int_not_equal(scn_check_text("inplace_entry_size.json", text, len, run_nothing, NULL, &out), 0);
    scn_buf_free(&out);
    free(text);
}

/* ---- who reuses what, per scenario -------------------------------------------------------- */

typedef struct want {
    const char *file, *node;
    uint32_t out;
    int in; /* -1: reuses nothing */
} want;

static const want k_want[] = {
    {"inplace_I1_data_input.json", "foo", 0, -1},
    {"inplace_I2_invalid_input.json", "condition_calc", 0, -1},
    {"inplace_I2_invalid_input.json", "calc2", 0, -1},
    {"inplace_I3_continuous_output.json", "cont", 0, -1},
    {"inplace_I3_continuous_output.json", "cont", 1, -1},
    {"inplace_I3_continuous_output.json", "nopad", 0, -1},
    {"inplace_I3_continuous_output.json", "nopad", 1, -1},
    {"inplace_I3_continuous_output.json", "plain", 0, 0},
    {"inplace_I3_continuous_output.json", "plain", 1, 1},
    {"inplace_I4_ref_var_src_var_name.json", "w", 0, -1},
    {"inplace_I4_ref_var_src_var_name.json", "w", 1, 1},
    {"inplace_I5_size_differs.json", "f", 0, -1},
    {"inplace_I5_size_differs.json", "g", 0, 1},
    {"inplace_I8_not_last_reader.json", "add0", 0, -1},
    {"inplace_I9_variable_input.json", "foo", 0, -1},
    {"inplace_I10_reuse_of_data.json", "swt2", 0, -1},
    {"inplace_I12_continuous_block.json", "a", 0, -1},
    {"inplace_I13_while_rollback.json", "b_b", 0, -1},
    {"inplace_I13_while_rollback.json", "q", 0, -1},
    {"inplace_last_reader.json", "a", 0, -1},
    {"inplace_last_reader.json", "b", 0, 0},
    {"inplace_same_stream.json", "n1", 0, -1},
    {"inplace_same_stream.json", "n2", 0, 0},
    {"inplace_same_stream.json", "n3", 0, -1},
    {"inplace_same_stream.json", "n4", 0, 0},
    {"inplace_reference_consumer.json", "n", 0, -1},
    {"inplace_reference_consumer.json", "n2", 0, 0},
    {"inplace_read_only.json", "nd", 0, -1},
    {"inplace_read_only.json", "nr", 0, -1},
    {"inplace_read_only.json", "nv", 0, -1},
    {"inplace_read_only.json", "nc", 0, -1},
    {"inplace_read_only.json", "n2", 0, 0},
    {"inplace_same_symbol.json", "rs", 0, -1},
    {"inplace_same_symbol.json", "n2", 0, 0},
    {"inplace_choose.json", "n", 0, 0},
    {"inplace_choose.json", "n", 1, 1},
    {"inplace_choose.json", "m", 0, 0},
    {"inplace_choose.json", "m", 1, -1},
    {"inplace_one_buffer_twice.json", "n", 0, 0},
    {"inplace_one_buffer_twice.json", "n", 1, -1},
    {"inplace_reader_through_view.json", "w1", 0, -1},
    {"inplace_reader_through_view.json", "w2", 0, -1},
    {"inplace_reader_through_view.json", "w3", 0, 0},
    {"inplace_reader_through_view.json", "w4", 0, 0},
};

/* Files whose facts are asserted by their own tests below, not by k_want. */
static const char *const k_own_tests[] = {
    "inplace_I15_empty_graph.json",     /* test_null_and_empty */
    "inplace_entry_size.json",          /* test_entry_size_leaves_model_alone */
    "inplace_io_reuse_indexes.json",    /* test_io_reuse_indexes */
};

static bool listed(const char *file)
{
    for (size_t i = 0; i < sizeof k_want / sizeof *k_want; i++)
        if (!strcmp(k_want[i].file, file)) return true;
    for (size_t i = 0; i < sizeof k_own_tests / sizeof *k_own_tests; i++)
        if (!strcmp(k_own_tests[i], file)) return true;
    return false;
}

static void test_reuse_facts(void **state)
{
    (void)state;
    size_t n = 0;
    char **names = scn_list_files(GM_SCENARIO_DIR, "inplace_", &n);
    for (size_t i = 0; i < n; i++)
        if (!listed(names[i])) fail_msg("%s has no reuse facts in k_want and no test of its own", names[i]);
    scn_free_list(names, n);

    size_t checked = 0, reused = 0;
    for (size_t i = 0; i < sizeof k_want / sizeof *k_want;) {
        const char *file = k_want[i].file;
        gm_model *m = load_scenario(file);
        size_t j = i;
        /* Before: nothing the table expects has been decided already. */
        for (; j < sizeof k_want / sizeof *k_want && !strcmp(k_want[j].file, file); j++)
            if (reuse_of(m, k_want[j].node, k_want[j].out) != -1)
                fail_msg("%s: %s:%u reuses an input before the pass", file, k_want[j].node, k_want[j].out);
        run_ok(m);
        for (size_t k = i; k < j; k++) {
            int got = reuse_of(m, k_want[k].node, k_want[k].out);
            if (got != k_want[k].in)
                fail_msg("%s: %s:%u reuses input %d, wanted %d", file, k_want[k].node, k_want[k].out, got, k_want[k].in);
            checked++;
            reused += k_want[k].in >= 0;
        }
        gm_model_free(m);
        i = j;
    }
    print_message("inplace facts: %zu checked, %zu reuses\n", checked, reused);
    assert_true(reused >= 10);
}

/* ---- symbol counts (I1, I2, I5) ----------------------------------------------------------- */

static size_t symbol_count(const gm_model *m, size_t *anchors)
{
    gm_symbols *s = NULL;
    gm_error err;
    if (gm_symbols_build(m, &s, &err) != GM_OK) fail_msg("symbols: %s", err.message);
    size_t n = gm_symbols_count(s);
    *anchors = 0;
    for (size_t i = 0; i < n; i++) *anchors += gm_symbol_size(s, gm_symbols_at(s, i));
    gm_symbols_free(s);
    return n;
}

static void test_symbol_counts(void **state)
{
    (void)state;
    size_t anchors = 0;
    gm_model *m = load_scenario("inplace_I1_data_input.json");
    run_ok(m);
    assert_int_equal(symbol_count(m, &anchors), 2);
    assert_int_equal(anchors, 4);
    gm_model_free(m);

    static const char *const unchanged[] = {"inplace_I2_invalid_input.json", "inplace_I8_not_last_reader.json",
                                            "inplace_I12_continuous_block.json", "inplace_I13_while_rollback.json"};
    for (size_t i = 0; i < sizeof unchanged / sizeof *unchanged; i++) {
        m = load_scenario(unchanged[i]);
        size_t a0 = 0, a1 = 0, before = symbol_count(m, &a0);
        run_ok(m);
        if (symbol_count(m, &a1) != before) fail_msg("%s: the symbol count changed", unchanged[i]);
        assert_int_equal(a0, a1);
        gm_model_free(m);
    }

    /* I5: f stays alone, g's output joins its input 1: one symbol fewer. */
    m = load_scenario("inplace_I5_size_differs.json");
    size_t a0 = 0, a1 = 0, before = symbol_count(m, &a0);
    run_ok(m);
    assert_int_equal(symbol_count(m, &a1), before - 1);
    assert_int_equal(a0, a1);
    gm_model_free(m);
}

/* ---- what decides ------------------------------------------------------------------------- */

/* I12's refusal comes from the layout what-if: without continuous_output on split2, a keeps
 * its pair. */
static void test_what_if_decides_I12(void **state)
{
    (void)state;
    gm_model *m = load_scenario("inplace_I12_continuous_block.json");
    assert_true(gm_attr_remove(gm_node_attrs(node(m, "split2")), "continuous_output"));
    run_ok(m);
    assert_reuse(m, "a", 0, 0);
    gm_model_free(m);
}

/* I13: q is undone because of the body; without b_b's offer q keeps its pair, and b_b alone
 * is still refused. */
static void test_rollback_is_all_or_nothing(void **state)
{
    (void)state;
    gm_model *m = load_scenario("inplace_I13_while_rollback.json");
    assert_true(gm_attr_remove(gm_node_attrs(node(m, "b_b")), "_output_inplace_ability"));
    run_ok(m);
    assert_reuse(m, "q", 0, 0);
    gm_model_free(m);

    m = load_scenario("inplace_I13_while_rollback.json");
    assert_true(gm_attr_remove(gm_node_attrs(node(m, "q")), "_output_inplace_ability"));
    run_ok(m);
    assert_reuse(m, "b_b", 0, -1);
    gm_model_free(m);
}

/* An If branch: t_b in t_a's buffer would return, through the branch's NetOutput, a buffer
 * that t_a writes into a variable (ref_var_src_var_name), which §2.8 separates: undone. The
 * same branch with an ordinary t_a keeps the pair — unless the other branch already needs an
 * Identity (it returns its Data): the check is on the whole model, as in GE, where the layout
 * pass has separated such outputs before memory assignment. */
#define IF_GRAPH(A_ATTRS, ELSE_NODES)                                                                                              \
    "{'graphmem':1,'graphs':["                                                                                         \
    "{'name':'root','nodes':["                                                                                         \
    "{'name':'x','type':'Data','attrs':{'index':0},'outputs':[{'dtype':'float32','shape':[4]}]},"                    \
    "{'name':'c','type':'Data','attrs':{'index':1},'outputs':[{'dtype':'bool','shape':[]}]},"                        \
    "{'name':'r','type':'Relu','inputs':['x:0'],'outputs':[{'dtype':'float32','shape':[4]}]},"                       \
    "{'name':'if','type':'If','inputs':['c:0','r:0'],'subgraphs':['then','else'],"                                   \
    "'outputs':[{'dtype':'float32','shape':[4]}]},"                                                                    \
    "{'name':'out','type':'NetOutput','inputs':['if:0']}]},"                                                          \
    "{'name':'then','parent':'if','nodes':["                                                                           \
    "{'name':'t_d','type':'Data','attrs':{'_parent_node_index':1},'outputs':[{'dtype':'float32','shape':[4]}]},"     \
    "{'name':'t_a','type':'Foo','inputs':['t_d:0'],'outputs':[{'dtype':'float32','shape':[4]" A_ATTRS "}]},"         \
    "{'name':'t_b','type':'Foo','inputs':['t_a:0'],'attrs':{'_output_inplace_ability':[[0,0]]},"                     \
    "'outputs':[{'dtype':'float32','shape':[4]}]},"                                                                    \
    "{'name':'t_o','type':'NetOutput','inputs':['t_b:0'],'input_descs':[{'attrs':{'_parent_node_index':0}}]}]},"     \
    "{'name':'else','parent':'if','nodes':["                                                                           \
    "{'name':'e_d','type':'Data','attrs':{'_parent_node_index':1},'outputs':[{'dtype':'float32','shape':[4]}]},"     \
    ELSE_NODES "]}]}"
#define ELSE_RELU                                                                                                      \
    "{'name':'e_a','type':'Relu','inputs':['e_d:0'],'outputs':[{'dtype':'float32','shape':[4]}]},"                   \
    "{'name':'e_o','type':'NetOutput','inputs':['e_a:0'],'input_descs':[{'attrs':{'_parent_node_index':0}}]}"
#define ELSE_DATA "{'name':'e_o','type':'NetOutput','inputs':['e_d:0'],'input_descs':[{'attrs':{'_parent_node_index':0}}]}"

static void test_rollback_if_branch(void **state)
{
    (void)state;
    gm_model *m = load_q(IF_GRAPH(",'attrs':{'ref_var_src_var_name':'v'}", ELSE_RELU));
    run_ok(m);
    assert_reuse(m, "t_b", 0, -1);
    gm_model_free(m);

    m = load_q(IF_GRAPH("", ELSE_RELU));
    run_ok(m);
    assert_reuse(m, "t_b", 0, 0);
    gm_model_free(m);

    m = load_q(IF_GRAPH("", ELSE_DATA));
    run_ok(m);
    assert_reuse(m, "t_b", 0, -1);
    gm_model_free(m);
}

/* The deviation of choose: the same tensor on two inputs is one buffer. Fed by two different
 * producers, both outputs are kept. */
static void test_one_buffer_twice_control(void **state)
{
    (void)state;
    gm_model *m = load_q("{'graphmem':1,'graphs':[{'name':'root','nodes':["
                         "{'name':'x','type':'Data','attrs':{'index':0},'outputs':[{'dtype':'float32','shape':[4]}]},"
                         "{'name':'p','type':'Relu','inputs':['x:0'],'outputs':[{'dtype':'float32','shape':[4]}]},"
                         "{'name':'p2','type':'Relu','inputs':['x:0'],'outputs':[{'dtype':'float32','shape':[4]}]},"
                         "{'name':'n','type':'Foo2','inputs':['p:0','p2:0'],'attrs':{'_output_inplace_ability':[[0,0],[1,1]]},"
                         "'outputs':[{'dtype':'float32','shape':[4]},{'dtype':'float32','shape':[4]}]},"
                         "{'name':'out','type':'NetOutput','inputs':['n:0','n:1']}]}]}");
    run_ok(m);
    assert_reuse(m, "n", 0, 0);
    assert_reuse(m, "n", 1, 1);
    gm_model_free(m);
}

/* graphmem: an output that already refers to another input keeps that reference. */
static void test_output_already_a_reference(void **state)
{
    (void)state;
    gm_model *m = load_q("{'graphmem':1,'graphs':[{'name':'root','nodes':["
                         "{'name':'x','type':'Data','attrs':{'index':0},'outputs':[{'dtype':'float32','shape':[4]}]},"
                         "{'name':'p0','type':'Relu','inputs':['x:0'],'outputs':[{'dtype':'float32','shape':[4]}]},"
                         "{'name':'p1','type':'Relu','inputs':['x:0'],'outputs':[{'dtype':'float32','shape':[4]}]},"
                         "{'name':'n','type':'Foo','inputs':['p0:0','p1:0'],'attrs':{'_output_inplace_ability':[[0,0]]},"
                         "'outputs':[{'dtype':'float32','shape':[4],'reuse_input':true,'reuse_input_index':1}]},"
                         "{'name':'out','type':'NetOutput','inputs':['n:0']}]}]}");
    run_ok(m);
    assert_reuse(m, "n", 0, 1);
    gm_model_free(m);
}

/* A second run changes nothing: the kept pairs are now one symbol each. */
static void test_second_run_idempotent(void **state)
{
    (void)state;
    gm_model *m = load_scenario("inplace_choose.json");
    run_ok(m);
    run_ok(m);
    assert_reuse(m, "n", 0, 0);
    assert_reuse(m, "n", 1, 1);
    assert_reuse(m, "m", 0, 0);
    assert_reuse(m, "m", 1, -1);
    gm_model_free(m);
}

/* ---- logs --------------------------------------------------------------------------------- */

/* Runs the pass on a scenario with the log at info level into a buffer; returns the text. */
static char *logged_run(const char *file)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    gm_log_level old = gm_log_get_level();
    gm_log_set_level(GM_LOG_INFO);
    gm_log_set_stream(f);
    gm_model *m = load_scenario(file);
    gm_error err;
    gm_status st = run_pass(m, &err);
    gm_log_set_stream(NULL);
    gm_log_set_level(old);
    gm_model_free(m);
    if (st != GM_OK) fail_msg("%s: %s", file, err.message);
    long len = ftell(f);
    rewind(f);
    char *text = calloc(1, (size_t)len + 1);
    assert_non_null(text);
    assert_int_equal(fread(text, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    return text;
}

static void test_log_lines(void **state)
{
    (void)state;
    char *text = logged_run("inplace_choose.json");
    if (!strstr(text, "Node n can inplace, output[0] can reuse input[0]\n") ||
        !strstr(text, "Node n can inplace, output[1] can reuse input[1]\n") ||
        !strstr(text, "Node m can inplace, output[0] can reuse input[0]\n") || strstr(text, "output[1] can reuse input[0]"))
        fail_msg("log:\n%s", text);
    free(text);

    text = logged_run("inplace_I13_while_rollback.json");
    if (strstr(text, "can inplace") || !strstr(text, "undone")) fail_msg("log:\n%s", text);
    free(text);
}

/* ---- errors ------------------------------------------------------------------------------- */

static void test_null_and_empty(void **state)
{
    (void)state;
    gm_error err;
    gm_error_clear(&err);
    gm_pass_report rep;
    memset(&rep, 0, sizeof rep);
    gm_pass_ctx c = {NULL, &rep, GM_PASS_INPLACE, &err, NULL};
    assert_int_equal(gm_pass_inplace(&c), GM_ERR_INPUT);
    assert_int_equal(gm_pass_inplace(NULL), GM_ERR_INPUT);

    gm_model *m = load_scenario("inplace_I15_empty_graph.json");
    run_ok(m);
    assert_int_equal(gm_model_node_count(m), 0);
    assert_null(gm_attr_find(*gm_graph_attrs(gm_model_root(m)), GM_ATTR_OUTPUT_REUSE_INPUT_MEM_INDEXES));
    gm_model_free(m);
}

/* A malformed entry fails the pass naming the node, and no pair is applied — not even one
 * decided on an earlier node. */
static void test_entry_size_leaves_model_alone(void **state)
{
    (void)state;
    gm_model *m = load_q("{'graphmem':1,'graphs':[{'name':'root','nodes':["
                         "{'name':'x','type':'Data','attrs':{'index':0},'outputs':[{'dtype':'float32','shape':[4]}]},"
                         "{'name':'p','type':'Relu','inputs':['x:0'],'outputs':[{'dtype':'float32','shape':[4]}]},"
                         "{'name':'good','type':'Foo','inputs':['p:0'],'attrs':{'_output_inplace_ability':[[0,0]]},"
                         "'outputs':[{'dtype':'float32','shape':[4]}]},"
                         "{'name':'bad','type':'Foo','inputs':['good:0'],'attrs':{'_output_inplace_ability':[[0,0,1]]},"
                         "'outputs':[{'dtype':'float32','shape':[4]}]},"
                         "{'name':'out','type':'NetOutput','inputs':['bad:0']}]}]}");
    gm_error err;
    assert_int_equal(run_pass(m, &err), GM_ERR_INPUT);
    if (!strstr(err.message, "'bad'") || !strstr(err.message, "entry 0 has 3 values"))
        fail_msg("message: %s", err.message);
    assert_reuse(m, "good", 0, -1);
    /* Without the bad node's entry the good one is kept: the error is what stopped it. */
    assert_true(gm_attr_remove(gm_node_attrs(node(m, "bad")), "_output_inplace_ability"));
    run_ok(m);
    assert_reuse(m, "good", 0, 0);
    gm_model_free(m);
}

/* The attribute must be a list of pairs; an empty list of any kind offers nothing. */
static void test_attr_kind(void **state)
{
    (void)state;
    gm_model *m = load_scenario("inplace_last_reader.json");
    gm_attr **a = gm_node_attrs(node(m, "b"));
    const int64_t pair[2] = {0, 0};
    assert_int_equal(gm_attr_set_list_int(a, "_output_inplace_ability", pair, 2), GM_OK);
    gm_error err;
    assert_int_equal(run_pass(m, &err), GM_ERR_INPUT);
    if (!strstr(err.message, "'b'") || !strstr(err.message, "pairs")) fail_msg("message: %s", err.message);
    assert_int_equal(gm_attr_set_list_int(a, "_output_inplace_ability", NULL, 0), GM_OK);
    run_ok(m);
    assert_reuse(m, "b", 0, -1);
    gm_model_free(m);
}

/* ---- output_reuse_input_mem_indexes ------------------------------------------------------- */

static void assert_io_rows(const gm_model *m, const int64_t (*rows)[2], size_t n)
{
    const gm_attr *a = gm_attr_find(*gm_graph_attrs(gm_model_root(m)), GM_ATTR_OUTPUT_REUSE_INPUT_MEM_INDEXES);
    if (n == 0) {
        if (a) fail_msg("the root carries " GM_ATTR_OUTPUT_REUSE_INPUT_MEM_INDEXES);
        return;
    }
    if (!a || gm_attr_get_kind(a) != GM_ATTR_LIST_LIST_INT) fail_msg("no list-list-int " GM_ATTR_OUTPUT_REUSE_INPUT_MEM_INDEXES);
    assert_int_equal(gm_attr_list_len(a), n);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(gm_attr_list_list_len(a, i), 2);
        assert_int_equal(gm_attr_list_list_int(a, i, 0), rows[i][0]);
        assert_int_equal(gm_attr_list_list_int(a, i, 1), rows[i][1]);
    }
}

static void test_io_reuse_indexes(void **state)
{
    (void)state;
    gm_model *m = load_scenario("inplace_io_reuse_indexes.json");
    run_ok(m);
    static const int64_t rows1[][2] = {{1, 1}};
    assert_io_rows(m, rows1, 1);
    gm_model_free(m);

    /* Without an `index` attribute a Data counts by its position among the root's Data; two
     * outputs of one input both appear, ordered by output. */
    m = load_q("{'graphmem':1,'graphs':[{'name':'root','nodes':["
               "{'name':'a','type':'Data','outputs':[{'dtype':'float32','shape':[4]}]},"
               "{'name':'b','type':'Data','outputs':[{'dtype':'float32','shape':[4]}]},"
               "{'name':'rs','type':'Reshape','inputs':['b:0'],'outputs':[{'dtype':'float32','shape':[4]}]},"
               "{'name':'r','type':'Relu','inputs':['a:0'],'outputs':[{'dtype':'float32','shape':[4]}]},"
               "{'name':'out','type':'NetOutput','inputs':['rs:0','r:0','b:0']}]}]}");
    run_ok(m);
    static const int64_t want2[][2] = {{1, 0}, {1, 2}};
    assert_io_rows(m, want2, 2);
    gm_model_free(m);

    /* A stale attribute goes when no output is a model input any more. */
    m = load_scenario("inplace_choose.json");
    const int64_t row[2] = {0, 0};
    const int64_t *rows[1] = {row};
    const size_t lens[1] = {2};
    assert_int_equal(gm_attr_set_list_list_int(gm_graph_attrs(gm_model_root(m)), GM_ATTR_OUTPUT_REUSE_INPUT_MEM_INDEXES,
                                               rows, lens, 1),
                     GM_OK);
    run_ok(m);
    assert_io_rows(m, NULL, 0);
    gm_model_free(m);
}

/* ---- allocation failures ------------------------------------------------------------------ */

/* Every allocation may fail: the pass returns GM_ERR_NOMEM and leaves every output desc and
 * the root's attributes as they were. */
static void test_allocation_failures(void **state)
{
    (void)state;
    static const char *const files[] = {"inplace_choose.json", "inplace_I13_while_rollback.json",
                                        "inplace_I12_continuous_block.json", "inplace_io_reuse_indexes.json",
                                        "inplace_same_stream.json"};
    size_t failures_seen = 0;
    for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
        for (long n = 0;; n++) {
            gm_model *m = load_scenario(files[f]);
            size_t attrs_before = gm_attr_count(*gm_graph_attrs(gm_model_root(m)));
            gm_pass_report rep = {0};
            gm_error err;
            gm_error_clear(&err);
            gm_pass_ctx c = {m, &rep, GM_PASS_INPLACE, &err, NULL};
            gm_alloc_fail_after(n);
            gm_status st = gm_pass_inplace(&c);
            gm_alloc_fail_after(-1);
            if (st != GM_OK) {
                if (st != GM_ERR_NOMEM) fail_msg("%s, allocation %ld: %s", files[f], n, err.message);
                failures_seen++;
                for (size_t t = 0; t < gm_model_node_count(m); t++) {
                    const gm_node *x = gm_model_node_at(m, t);
                    for (size_t k = 0; k < gm_node_output_count(x); k++)
                        if (gm_desc_reuse_input(gm_node_output_desc(x, k), NULL))
                            fail_msg("%s, allocation %ld: %s:%zu reuses an input after a failed run", files[f], n,
                                     x->name, k);
                }
                assert_int_equal(gm_attr_count(*gm_graph_attrs(gm_model_root(m))), attrs_before);
            }
            gm_pass_report_free(&rep);
            gm_model_free(m);
            if (st == GM_OK) break;
        }
    }
    print_message("inplace: %zu allocation failures survived\n", failures_seen);
    assert_true(failures_seen > 20);
}

/* The layout pass hands its symbol table to the inplace pass when it changed nothing after
 * building it (pass_util.h): the passes run in one call must leave the same model as layout
 * and inplace run in two calls, where inplace builds its own table. */
static void test_handoff_same_result(void **state)
{
    (void)state;
    static const char *const models[] = {"mlp_train_step.graphmem.json", "transformer_lm_train_step.graphmem.json",
                                         "resnet18_train.onnx", "transformer_encoder.onnx"};
    const gm_pass_set later = ((gm_pass_set)1u << GM_PASS_INPLACE) | ((gm_pass_set)1u << GM_PASS_SET_IO_OFFSET);
    for (size_t i = 0; i < sizeof models / sizeof *models; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/models/%s", GM_TEST_DATA_DIR, models[i]);
        char *text[2] = {NULL, NULL};
        size_t kept[2] = {0, 0};
        for (int way = 0; way < 2; way++) {
            gm_model *m = NULL;
            gm_error err;
            if (gm_model_read_file(path, &m, &err) != GM_OK) fail_msg("%s", err.message);
            gm_pass_report rep = {0}, rep2 = {0};
            if (way == 0) {
                assert_int_equal(gm_passes_run(m, GM_PASS_SET_ALL, &rep, NULL, &err), GM_OK);
            } else {
                assert_int_equal(gm_passes_run(m, GM_PASS_SET_ALL & ~later, &rep, NULL, &err), GM_OK);
                assert_int_equal(gm_passes_run(m, later, &rep2, NULL, &err), GM_OK);
            }
            size_t len = 0;
            assert_int_equal(gm_model_write_json(m, &text[way], &len, &err), GM_OK);
            for (size_t t = 0; t < gm_model_node_count(m); t++) {
                const gm_node *n = gm_model_node_at(m, t);
                for (uint32_t k = 0; k < n->n_out; k++) kept[way] += n->out[k].desc.reuse_input;
            }
            gm_pass_report_free(&rep);
            gm_pass_report_free(&rep2);
            gm_model_free(m);
        }
        assert_string_equal(text[0], text[1]);
        assert_int_equal(kept[0], kept[1]);
        print_message("  %-42s %zu outputs reuse an input either way\n", models[i], kept[0]);
        free(text[0]);
        free(text[1]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scenario_files),
        cmocka_unit_test(test_error_scenario_not_vacuous),
        cmocka_unit_test(test_reuse_facts),
        cmocka_unit_test(test_symbol_counts),
        cmocka_unit_test(test_what_if_decides_I12),
        cmocka_unit_test(test_rollback_is_all_or_nothing),
        cmocka_unit_test(test_rollback_if_branch),
        cmocka_unit_test(test_one_buffer_twice_control),
        cmocka_unit_test(test_output_already_a_reference),
        cmocka_unit_test(test_second_run_idempotent),
        cmocka_unit_test(test_log_lines),
        cmocka_unit_test(test_null_and_empty),
        cmocka_unit_test(test_entry_size_leaves_model_alone),
        cmocka_unit_test(test_attr_kind),
        cmocka_unit_test(test_io_reuse_indexes),
        cmocka_unit_test(test_allocation_failures),
        cmocka_unit_test(test_handoff_same_result),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
