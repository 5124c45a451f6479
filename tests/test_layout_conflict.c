/*
 * test_layout_conflict.c — GE's mem_layout_conflict_optimize (reference §2): the attributes,
 * the tables and the registry, the list comparisons of the checkers, the Identity GE makes,
 * the log lines, the check-only questions, and every tests/scenarios/layout_*.json.
 *
 * The scenario files run through a local runner (run_local) that calls the passes in GE's
 * order: a list of pass names runs those passes, this one included where listed; "all" runs
 * gm_passes_run and then gm_pass_layout_conflict unless the pipeline already ran it — so the
 * files are checked before pipeline.c registers the pass, and keep working after. Each file
 * must also FAIL when no pass runs, except the ones listed as absence-only (they pin that
 * nothing is inserted; each has a sibling scenario where the same pattern does insert).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "scenario_check.c"
#include "scenario_cmocka.h"

#include "analysis/symbols.h"
#include "conflict/layout_checkers.h"
#include "conflict/layout_conflict.h"
#include "conflict/rw_conflict.h"
#include "graphmem/log.h"
#include "graphmem/plan.h"
#include "ir/ir.h"
#include "passes/dedicated.h"
#include "util/alloc.h"

/* ---- running the passes ------------------------------------------------------------------ */

typedef gm_status (*pass_fn)(gm_pass_ctx *c);

static const struct {
    gm_pass_id id;
    pass_fn fn;
} k_order[] = {
    /* pipeline.c's steps (reference §0); HcclMemcpyPass runs twice. */
    {GM_PASS_HCCL_MEMCPY, gm_pass_hccl_memcpy},
    {GM_PASS_SUBGRAPH, gm_pass_subgraph},
    {GM_PASS_INPLACE_SUPPORT_CHECK, gm_pass_inplace_support_check},
    {GM_PASS_ATOMIC_ADDR_CLEAN, gm_pass_atomic_addr_clean},
    {GM_PASS_HCCL_MEMCPY, gm_pass_hccl_memcpy},
    {GM_PASS_HCCL_CONTINUOUS_MEMCPY, gm_pass_hccl_continuous_memcpy},
    {GM_PASS_MEMCPY_ADDR_ASYNC, gm_pass_memcpy_addr_async},
    {GM_PASS_MARK_SAME_ADDR, gm_pass_mark_same_addr},
    {GM_PASS_RW_CONFLICT, gm_pass_rw_conflict},
    {GM_PASS_LAYOUT_CONFLICT, gm_pass_layout_conflict},
    {GM_PASS_SET_IO_OFFSET, gm_pass_set_io_offset},
};

static gm_status run_layout(gm_model *m, gm_pass_report *rep, gm_error *err)
{
    gm_pass_ctx c = {m, rep, GM_PASS_LAYOUT_CONFLICT, err, NULL};
    gm_status st = gm_pass_layout_conflict(&c);
    if (st == GM_OK) st = gm_model_toposort(m, err);
    if (st == GM_OK) rep->ran[GM_PASS_LAYOUT_CONFLICT] = 1;
    return st;
}

static gm_status run_local(gm_model *m, gm_pass_set set, gm_pass_report *rep, gm_pass_set *available,
                           gm_error *err, void *ctx)
{
    (void)ctx;
    if (set == GM_PASS_SET_ALL) {
        /* Until pipeline.c registers the pass, "all" is the pipeline followed by this pass. */
        gm_status st = gm_passes_run(m, set, rep, available, err);
        if (st == GM_OK && !rep->ran[GM_PASS_LAYOUT_CONFLICT]) st = run_layout(m, rep, err);
        *available |= 1u << GM_PASS_LAYOUT_CONFLICT;
        return st;
    }
    memset(rep, 0, sizeof *rep);
    *available = 0;
    for (size_t i = 0; i < sizeof k_order / sizeof *k_order; i++) {
        *available |= 1u << k_order[i].id;
        if (!(set & (1u << k_order[i].id))) continue;
        gm_pass_ctx c = {m, rep, k_order[i].id, err, NULL};
        gm_status st = k_order[i].fn(&c);
        if (st == GM_OK) st = gm_model_toposort(m, err);
        if (st != GM_OK) return st;
        rep->ran[k_order[i].id] = 1;
    }
    return gm_model_toposort(m, err);
}

/* ---- the scenario files ------------------------------------------------------------------ */

/* Scenarios that pin an absence: they hold when nothing runs. Each names its positive sibling. */
static const char *const k_absence_only[] = {
    /* L3 L5 L6 L7 (no copy when layouts agree) <-> L9 L10 L11 L13 L14 */
    "layout_L03_cont_out_in_partial_same.json",
    "layout_L05_cont_out_in_tail.json",
    "layout_L06_cont_out_in_subset.json",
    "layout_L07_cont_out_subset_of_in.json",
    "layout_S27_cont_in_cont_out_partial_same.json",
    /* no-padding blocks that agree <-> L26 L30 L31 */
    "layout_L25_nopad_in_no_shared_producer.json",
    "layout_L27_nopad_concat_to_split.json",
    "layout_L29_nopad_in_sub_run.json",
    "layout_L33_nopad_in_hcom_ref_p2p.json",
    "layout_L34_nopad_in_slices_of_data.json",
    "layout_L35_nopad_in_slices_of_var.json",
    "layout_L37_nopad_out_alone.json",
    /* special memory of one type <-> L49 L54 L55 */
    "layout_L50_rts_in_same_type.json",
    "layout_L53_rts_in_normal_out.json",
    "layout_L57_rts_ref_chain_same_type.json",
    /* user inputs and outputs that may share <-> L63 L65 L73 L82 L85 L97 */
    "layout_L59_data_to_netoutput.json",
    "layout_L61_known_root_call_data_passthrough.json",
    "layout_L62_known_root_call_add.json",
    "layout_L73b_online_data_nopad_out.json",
    "layout_L79_one_output_twice_to_netoutput.json",
    "layout_L81_unknown_root_call_output_twice.json",
    "layout_L83_variable_to_netoutput.json",
    "layout_L86_unknown_root_call_const.json",
    "layout_L102_nopad_in_to_netoutput.json",
    "layout_L103_cont_in_to_netoutput.json",
    "layout_S15_refdata_to_phony_split.json",
    /* feature map fixed <-> the same graphs with FM (L106b L107b L115b L117b L118b) */
    "layout_L106_rts_out_to_switch.json",
    "layout_L107_add_to_switch.json",
    "layout_L115_switch_to_rts_in.json",
    "layout_L117_if_switch_and_rts_out.json",
    "layout_L118_if_switch_and_add.json",
    /* While bodies that need no copy <-> L135 L138 L141 */
    "layout_L134_while_body_pass_through.json",
    "layout_L137_while_body_call.json",
    "layout_L139_while_body_bypass.json",
    /* a dynamic root without static subgraph is skipped <-> L82 */
    "layout_F1_no_static_subgraph.json",
};

static bool absence_only(const char *name)
{
    for (size_t k = 0; k < sizeof k_absence_only / sizeof *k_absence_only; k++)
        if (strcmp(name, k_absence_only[k]) == 0) return true;
    return false;
}

static void test_layout_scenarios(void **state)
{
    (void)state;
    size_t n = 0, failed = 0, vacuous = 0, stale = 0;
    char **names = scn_list_files(GM_SCENARIO_DIR, "layout_", &n);
    if (n < 100) fail_msg("expected the layout_*.json scenarios in %s, found %zu", GM_SCENARIO_DIR, n);
    for (size_t i = 0; i < n; i++) {
        size_t len = 0;
        char *text = scn_slurp(GM_SCENARIO_DIR, names[i], &len);
        if (!text) fail_msg("cannot read %s", names[i]);
        scn_buf out = {0};
        if (scn_check_text(names[i], text, len, run_local, NULL, &out)) failed++;
        fputs(scn_buf_str(&out), stderr);
        scn_buf none = {0};
        bool holds_without = scn_check_text(names[i], text, len, run_nothing, NULL, &none) == 0;
        if (holds_without && !absence_only(names[i])) {
            fprintf(stderr, "VACUOUS %s: holds even when no pass runs\n", names[i]);
            vacuous++;
        } else if (!holds_without && absence_only(names[i])) {
            fprintf(stderr, "STALE %s: listed as absence-only but fails when no pass runs\n", names[i]);
            stale++;
        }
        scn_buf_free(&none);
        scn_buf_free(&out);
        free(text);
    }
    scn_free_list(names, n);
    print_message("layout scenarios: %zu run, %zu failed, %zu vacuous, %zu stale\n", n, failed, vacuous, stale);
    if (failed || vacuous || stale) fail_msg("%zu of %zu layout scenarios failed, %zu vacuous, %zu stale", failed, n, vacuous, stale);
    (void)scn_run_real; /* the real pipeline runs them in test_scenarios */
}

/* ---- helpers for the direct tests -------------------------------------------------------- */

static gm_node *node(const gm_model *m, const char *name)
{
    gm_node *n = gm_model_find_node(m, name);
    if (!n) fail_msg("no node '%s'", name);
    return n;
}

/* Runs the pass (and re-sorts) with the log at `level` captured into *log (free with free()). */
static gm_status run_logged(gm_model *m, gm_pass_report *rep, gm_log_level level, char **log)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    gm_log_level was = gm_log_get_level();
    gm_log_set_stream(f);
    gm_log_set_level(level);
    gm_error err;
    gm_error_clear(&err);
    gm_status st = run_layout(m, rep, &err);
    gm_log_set_level(was);
    gm_log_set_stream(NULL);
    fclose(f);
    if (log) *log = buf;
    else free(buf);
    return st;
}

static size_t count_type(const gm_model *m, const char *type)
{
    size_t n = 0;
    for (size_t i = 0; i < gm_model_node_count(m); i++) n += strcmp(gm_node_type(gm_model_node_at(m, i)), type) == 0;
    return n;
}

static void assert_contains(const char *hay, const char *needle)
{
    if (!strstr(hay, needle)) fail_msg("log lacks \"%s\"; log was:\n%s", needle, hay);
}

/* ---- the list comparisons of §2.6 -------------------------------------------------------- */

static gm_node k_dummy[32];

static size_t to_anchors(const int *v, size_t n, gm_anchor *out)
{
    for (size_t i = 0; i < n; i++) out[i] = (gm_anchor){&k_dummy[v[i]], 0, true};
    return n;
}

#define L(...) ((const int[]){__VA_ARGS__}), (sizeof((const int[]){__VA_ARGS__}) / sizeof(int))

static bool sps(const int *l, size_t nl, const int *r, size_t nr)
{
    gm_anchor a[16], b[16];
    return gm_lc_same_or_partial_same(a, to_anchors(l, nl, a), b, to_anchors(r, nr, b));
}

/* Two no-padding producer lists agree when one is a sub-vector of the other. */
static bool nopad_agree(const int *l, size_t nl, const int *r, size_t nr)
{
    gm_anchor a[16], b[16];
    to_anchors(l, nl, a);
    to_anchors(r, nr, b);
    return gm_lc_is_sub_vector(a, nl, b, nr) || gm_lc_is_sub_vector(b, nr, a, nl);
}

static void test_is_same_or_partial_same(void **state)
{
    (void)state;
    /* accepted: a subset at an aligned position, equal lists, overlapping tail/head */
    assert_true(sps(L(1, 2, 3, 4), L(2, 3)));
    assert_true(sps(L(1, 2, 3, 4), L(1, 2)));
    assert_true(sps(L(1, 2), L(0, 1, 2, 3)));
    assert_true(sps(L(1, 2, 3, 4), L(1, 2, 3, 4)));
    assert_true(sps(L(1, 2, 3, 4), L(2, 3, 4, 5)));
    assert_true(sps(L(10, 11), L(9, 10))); /* L3: split outs [s0 s1] vs concat ins [a s0] */
    /* rejected: gaps, reversed order, prefix mismatch on both sides, crossings, nothing common */
    assert_false(sps(L(1, 2, 3, 4), L(2, 9, 4)));
    assert_false(sps(L(1, 2), L(2, 1)));
    assert_false(sps(L(7, 8, 3, 4), L(5, 6, 3, 4)));
    assert_false(sps(L(1, 2, 3), L(3, 1)));
    assert_false(sps(L(1, 2), L(3, 4))); /* quirk 7: no common element is a conflict */
    assert_false(sps(L(10, 11, 12, 13), L(20, 11))); /* L13: [s0..s3] vs [d s1] */
    /* a concat reading one split output twice: the leftover of the inputs meets the outputs */
    assert_false(sps(L(1, 2), L(1, 2, 1)));
}

static void test_is_sub_vector(void **state)
{
    (void)state;
    /* the conflicts GE's comments list */
    assert_false(nopad_agree(L(1, 2), L(2, 1)));
    assert_false(nopad_agree(L(1, 2, 3, 4), L(2, 4)));
    assert_false(nopad_agree(L(1, 2, 3, 4), L(2, 5)));
    assert_false(nopad_agree(L(1, 2, 3, 4), L(5, 2)));
    assert_false(nopad_agree(L(20, 21, 1, 2, 3, 4), L(5, 6, 22, 23, 3, 4)));
    assert_false(nopad_agree(L(1, 2, 3, 4), L(2, 3, 4, 5))); /* overlap without gap: still a conflict */
    /* contiguous runs agree, in either order of the arguments */
    assert_true(nopad_agree(L(1, 2, 3, 4), L(3, 4)));
    assert_true(nopad_agree(L(2, 3), L(1, 2, 3, 4)));
    assert_true(nopad_agree(L(1, 2, 3, 4), L(1, 2, 3, 4)));
    gm_anchor a[4];
    to_anchors((const int[]){1, 2, 3, 4}, 4, a);
    assert_true(gm_lc_is_sub_vector(a, 4, a + 1, 2));
    assert_false(gm_lc_is_sub_vector(a + 1, 2, a, 4));
}

/* Membership answers for the symbol being evaluated only, whatever came before it. */
static void test_membership_per_symbol(void **state)
{
    (void)state;
    char text[8192] = "{'graphmem':1,'graphs':[{'name':'root','nodes':[";
    for (int i = 0; i < 40; i++) {
        char one[128];
        snprintf(one, sizeof one, "%s{'name':'n%d','type':'Relu','outputs':[{'dtype':'float32','shape':[4]}]}", i ? "," : "", i);
        strcat(text, one);
    }
    strcat(text, "]}]}");
    gm_model *m = load_q(text);
    gm_anchor big[40];
    for (int i = 0; i < 40; i++) big[i] = (gm_anchor){gm_model_node_at(m, (size_t)i), 0, true};
    gm_error err;
    gm_lc lc;
    gm_lc_init(&lc, gm_model_root(m), &err, true);
    assert_int_equal(gm_lc_eval_symbol(&lc, big, 40), GM_OK);
    for (int i = 0; i < 40; i++) assert_true(gm_lc_in_symbol(&lc, big[i].node, true, 0));
    assert_false(gm_lc_in_symbol(&lc, big[0].node, false, 0));
    assert_int_equal(gm_lc_eval_symbol(&lc, big + 5, 2), GM_OK);
    for (int i = 0; i < 40; i++) assert_int_equal(gm_lc_in_symbol(&lc, big[i].node, true, 0), i == 5 || i == 6);
    gm_lc_fini(&lc);
    gm_model_free(m);
}

/* ---- tables and registry ------------------------------------------------------------------ */

static void test_tables_symmetric(void **state)
{
    (void)state;
    size_t no = 0, conf = 0;
    for (int a = 0; a < GM_LT_COUNT; a++) {
        for (int b = 0; b < GM_LT_COUNT; b++) {
            bool n1 = gm_layout_abs_no_conflict((gm_lt)a, (gm_lt)b), c1 = gm_layout_abs_conflict((gm_lt)a, (gm_lt)b);
            assert_int_equal(n1, gm_layout_abs_no_conflict((gm_lt)b, (gm_lt)a));
            assert_int_equal(c1, gm_layout_abs_conflict((gm_lt)b, (gm_lt)a));
            assert_false(n1 && c1);
            if (a == GM_LT_REF_OUT || b == GM_LT_REF_OUT) assert_true(n1);
            if (a <= b && n1 && a != GM_LT_REF_OUT && b != GM_LT_REF_OUT) no++;
            if (a <= b && c1) conf++;
        }
    }
    assert_int_equal(no, 3);
    assert_int_equal(conf, 10);
    assert_true(gm_layout_abs_no_conflict(GM_LT_RTS_IN, GM_LT_NORMAL_OUT));
    assert_true(gm_layout_abs_no_conflict(GM_LT_USER_OUT, GM_LT_USER_OUT));
    assert_true(gm_layout_abs_no_conflict(GM_LT_USER_OUT, GM_LT_USER_IN));
    assert_true(gm_layout_abs_conflict(GM_LT_NOPAD_IN, GM_LT_CONT_OUT));
    assert_true(gm_layout_abs_conflict(GM_LT_CONT_IN, GM_LT_IMMUTABLE_OUT));
    assert_false(gm_layout_abs_conflict(GM_LT_CONT_IN, GM_LT_CONT_OUT));
}

static void test_registry_55_pairs(void **state)
{
    (void)state;
    assert_int_equal(gm_layout_registration_count(), 55);
    size_t pairs = 0, once = 0;
    for (int a = 0; a < GM_LT_COUNT; a++) {
        for (int b = a; b < GM_LT_COUNT; b++) {
            bool s1 = false, s2 = false;
            bool h = gm_layout_has_checker((gm_lt)a, (gm_lt)b, &s1);
            assert_int_equal(h, gm_layout_has_checker((gm_lt)b, (gm_lt)a, &s2));
            if (!h) continue;
            assert_int_equal(s1, s2);
            /* the tables answer first: a registration there would never run */
            assert_false(gm_layout_abs_no_conflict((gm_lt)a, (gm_lt)b) || gm_layout_abs_conflict((gm_lt)a, (gm_lt)b));
            pairs++;
            once += s1;
        }
    }
    assert_int_equal(pairs, 55); /* no pair registered twice */
    assert_int_equal(once, 6);
    static const gm_lt sym[][2] = {{GM_LT_CONT_IN, GM_LT_CONT_IN},     {GM_LT_CONT_IN, GM_LT_NOPAD_IN},
                                   {GM_LT_CONT_OUT, GM_LT_CONT_OUT},   {GM_LT_CONT_OUT, GM_LT_NOPAD_OUT},
                                   {GM_LT_NOPAD_IN, GM_LT_NOPAD_IN},   {GM_LT_NOPAD_OUT, GM_LT_NOPAD_OUT}};
    for (size_t i = 0; i < 6; i++) {
        bool s = false;
        assert_true(gm_layout_has_checker(sym[i][0], sym[i][1], &s));
        assert_true(s);
    }
    /* an unrefreshable input: #14's eleven partners and #21's user output (a user input is in
     * the absolute table); an unrefreshable output: #15's ten, #14's unrefreshable input, #18's
     * user input, #22's user output */
    size_t in = 0, out = 0;
    for (int t = 0; t < GM_LT_COUNT; t++) {
        in += gm_layout_has_checker(GM_LT_UNSUP_IN, (gm_lt)t, NULL);
        out += gm_layout_has_checker(GM_LT_UNSUP_OUT, (gm_lt)t, NULL);
    }
    assert_int_equal(in, 12);
    assert_int_equal(out, 13);
    assert_false(gm_layout_has_checker(GM_LT_NORMAL_IN, GM_LT_NORMAL_OUT, NULL));
    assert_false(gm_layout_has_checker(GM_LT_CONT_IN, GM_LT_NORMAL_OUT, NULL));
    assert_false(gm_layout_has_checker(GM_LT_USER_IN, GM_LT_IMMUTABLE_OUT, NULL));
}

static void test_check_error_text_quirk6(void **state)
{
    (void)state;
    const gm_lt ta[] = {GM_LT_USER_IN, GM_LT_IMMUTABLE_OUT}, tb[] = {GM_LT_CONT_IN, GM_LT_RTS_IN};
    char buf[512];
    /* j = 1 is meant, tb[i = 0] is printed */
    gm_layout_check_error_text(ta, 2, tb, 2, 0, 1, "x_out_0", "y_in_0", buf, sizeof buf);
    assert_string_equal(buf, "[MemConflict] check conflict failed, type: [USER_MEMORY_INPUT, CONTINUOUS_INPUT], "
                             "anchor: [x_out_0, y_in_0]");
    /* i past the end of tb: GE would read beyond the list */
    gm_layout_check_error_text(ta, 2, tb, 1, 1, 0, "x_out_0", "y_in_0", buf, sizeof buf);
    assert_non_null(strstr(buf, "type: [IMMUTABLE_ADDRESS_OUTPUT, RESERVED]"));
}

/* ---- marking and flags ---------------------------------------------------------------------- */

#define OUT4 "'outputs':[{'dtype':'float32','shape':[4]}]"
#define OUT4x2 "'outputs':[{'dtype':'float32','shape':[4]},{'dtype':'float32','shape':[4]}]"

static const char k_mark_graph[] =
    "{'graphmem':1,'graphs':[{'name':'root','nodes':["
    "{'name':'data','type':'Data','attrs':{'index':0}," OUT4 "},"
    "{'name':'refdata','type':'RefData','attrs':{'index':1}," OUT4 "},"
    "{'name':'c','type':'Const'," OUT4 "},"
    "{'name':'v','type':'Variable'," OUT4 "},"
    "{'name':'a','type':'Relu'," OUT4 "},"
    "{'name':'sw','type':'StreamSwitch','inputs':['data:0']," OUT4 "},"
    "{'name':'hc','type':'HcomAllReduce','inputs':['a:0']," OUT4 "},"
    "{'name':'cat','type':'ConcatD','inputs':['a:0','c:0'],'attrs':{'continuous_input':true,"
    "'_no_padding_continuous_input':true,'_input_memory_type':[17,0]}," OUT4 "},"
    "{'name':'one','type':'ConcatD','inputs':['a:0'],'attrs':{'continuous_input':true}," OUT4 "},"
    "{'name':'onep','type':'PhonyConcat','inputs':['a:0'],'attrs':{'_no_padding_continuous_input':true}," OUT4 "},"
    "{'name':'spl','type':'SplitD','inputs':['a:0'],'attrs':{'continuous_output':true,"
    "'_no_padding_continuous_output':true,'_output_reuse_input':true,'_output_memory_type':[0,64]}," OUT4x2 "},"
    "{'name':'asg','type':'Assign','inputs':['refdata:0','c:0'],'outputs':[{'dtype':'float32','shape':[4],"
    "'attrs':{'ref_var_src_var_name':'refdata'}}]},"
    "{'name':'pc','type':'PartitionedCall','inputs':['a:0'],'subgraphs':['f']," OUT4 "},"
    "{'name':'netout','type':'NetOutput','inputs':['pc:0']}]},"
    "{'name':'f','parent':'pc','nodes':["
    "{'name':'fd','type':'Data','attrs':{'_parent_node_index':0}," OUT4 "},"
    "{'name':'fo','type':'NetOutput','inputs':['fd:0'],'input_descs':[{'attrs':{'_parent_node_index':0}}]}]}]}";

static const char *types_of(const gm_graph *g, const gm_layout_flags *f, const gm_node *n, bool out, uint32_t i,
                            bool ref_var, char *buf)
{
    gm_lt_mask m = out ? gm_layout_out_types(g, f, n, i, ref_var) : gm_layout_in_types(g, f, n, i);
    return gm_lt_list_str(m, out, buf, 512);
}

static void test_attribute_marking(void **state)
{
    (void)state;
    gm_model *m = load_q(k_mark_graph);
    gm_graph *root = gm_model_root(m), *f = gm_model_find_graph(m, "f");
    gm_layout_flags fl = gm_layout_flags_for(root), fm = fl;
    fm.fm_refreshable = true;
    char b[512];
    assert_string_equal(types_of(root, &fl, node(m, "data"), true, 0, false, b), "[USER_MEMORY_INPUT]");
    /* RefData is a user input, not an immutable address */
    assert_string_equal(types_of(root, &fl, node(m, "refdata"), true, 0, false, b), "[USER_MEMORY_INPUT]");
    assert_string_equal(types_of(root, &fl, node(m, "c"), true, 0, false, b), "[IMMUTABLE_ADDRESS_OUTPUT]");
    assert_string_equal(types_of(root, &fl, node(m, "v"), true, 0, false, b), "[IMMUTABLE_ADDRESS_OUTPUT]");
    assert_string_equal(types_of(root, &fl, node(m, "a"), true, 0, false, b), "[NORMAL_OUTPUT]");
    assert_string_equal(types_of(root, &fl, node(m, "sw"), false, 0, false, b),
                        "[UNSUPPORTED_ADDRESS_REFRESH_OPERATOR_INPUT]");
    assert_string_equal(types_of(root, &fm, node(m, "sw"), true, 0, false, b),
                        "[UNSUPPORTED_ADDRESS_REFRESH_OPERATOR_OUTPUT]");
    /* a collective cannot refresh its addresses only while the feature map is fixed */
    assert_string_equal(types_of(root, &fl, node(m, "hc"), false, 0, false, b),
                        "[UNSUPPORTED_ADDRESS_REFRESH_OPERATOR_INPUT]");
    assert_string_equal(types_of(root, &fm, node(m, "hc"), false, 0, false, b), "[NORMAL_INPUT]");
    /* GE's push order: no-padding before continuous, special memory last */
    assert_string_equal(types_of(root, &fl, node(m, "cat"), false, 0, false, b),
                        "[NOPADDING_CONTINUOUS_INPUT, CONTINUOUS_INPUT, RTS_SPECIAL_TYPE_INPUT]");
    assert_string_equal(types_of(root, &fl, node(m, "cat"), false, 1, false, b),
                        "[NOPADDING_CONTINUOUS_INPUT, CONTINUOUS_INPUT]");
    /* one input: nothing to lay out next to it */
    assert_string_equal(types_of(root, &fl, node(m, "one"), false, 0, false, b), "[NORMAL_INPUT]");
    assert_string_equal(types_of(root, &fl, node(m, "onep"), false, 0, false, b), "[NORMAL_INPUT]");
    assert_string_equal(types_of(root, &fl, node(m, "spl"), true, 0, false, b),
                        "[NOPADDING_CONTINUOUS_OUTPUT, CONTINUOUS_OUTPUT, REFERENCE_OUTPUT]");
    assert_string_equal(types_of(root, &fl, node(m, "spl"), true, 1, false, b),
                        "[NOPADDING_CONTINUOUS_OUTPUT, CONTINUOUS_OUTPUT, REFERENCE_OUTPUT, RTS_SPECIAL_TYPE_OUTPUT]");
    assert_string_equal(types_of(root, &fl, node(m, "asg"), true, 0, true, b), "[REFERENCE_OUTPUT]");
    assert_ptr_equal(gm_layout_ref_var_node(node(m, "asg"), 0), node(m, "refdata"));
    assert_null(gm_layout_ref_var_node(node(m, "a"), 0));
    assert_string_equal(types_of(root, &fl, node(m, "netout"), false, 0, false, b), "[USER_MEMORY_OUTPUT]");
    /* a nested subgraph's Data and NetOutput are the parent's anchors ... */
    assert_string_equal(types_of(root, &fl, node(m, "fd"), true, 0, false, b), "[REFERENCE_OUTPUT]");
    assert_string_equal(types_of(root, &fl, node(m, "fo"), false, 0, false, b), "[NORMAL_INPUT]");
    /* ... but the user's when that subgraph is the graph processed */
    gm_layout_flags ff = gm_layout_flags_for(f);
    assert_string_equal(types_of(f, &ff, node(m, "fd"), true, 0, false, b), "[USER_MEMORY_INPUT]");
    assert_string_equal(types_of(f, &ff, node(m, "fo"), false, 0, false, b), "[USER_MEMORY_OUTPUT]");
    assert_string_equal(gm_lt_name(GM_LT_COUNT), "RESERVED");
    assert_string_equal(gm_lt_name(GM_LT_UNSUP_OUT), "UNSUPPORTED_ADDRESS_REFRESH_OPERATOR_OUTPUT");
    gm_model_free(m);
}

#define SUBG(name, parent, shape)                                                                      \
    "{'name':'" name "','parent':'" parent "','nodes':["                                               \
    "{'name':'" name "_d','type':'Data','attrs':{'_parent_node_index':0},'outputs':[{'dtype':'float32','shape':" shape "}]}," \
    "{'name':'" name "_o','type':'NetOutput','inputs':['" name "_d:0'],'input_descs':[{'attrs':{'_parent_node_index':0}}]}]}"

static void test_flags_and_top_graphs(void **state)
{
    (void)state;
    gm_graph **v = NULL;
    size_t n = 0;
    gm_error err;
    /* a static root is the only graph processed */
    gm_model *m = load_q(k_mark_graph);
    gm_layout_flags f = gm_layout_flags_for(gm_model_root(m));
    assert_true(f.root_static);
    assert_false(f.fm_refreshable);
    assert_true(f.user_in_nopad_cont_out);
    assert_false(f.physical_refreshable);
    assert_int_equal(gm_layout_top_static_graphs(m, &v, &n, &err), GM_OK);
    assert_int_equal(n, 1);
    assert_ptr_equal(v[0], gm_model_root(m));
    gm_free(v);
    assert_int_equal(gm_model_set_option(m, "ge.featureBaseRefreshable", "1"), GM_OK);
    assert_int_equal(gm_model_set_option(m, "ge.buildGraphMode", "offline"), GM_OK);
    assert_int_equal(gm_model_set_option(m, "ge.exec.staticMemoryPolicy", "4"), GM_OK);
    f = gm_layout_flags_for(gm_model_root(m));
    assert_true(f.fm_refreshable);
    assert_false(f.user_in_nopad_cont_out);
    assert_true(f.physical_refreshable);
    gm_model_free(m);

    /* a dynamic root: its outermost static subgraphs, not the ones nested in them */
    m = load_q("{'graphmem':1,'graphs':[{'name':'root','attrs':{'_dynamic_shape_partitioned':true},'nodes':["
               "{'name':'x','type':'Relu'," OUT4 "},"
               "{'name':'p1','type':'PartitionedCall','inputs':['x:0'],'subgraphs':['s1']," OUT4 "},"
               "{'name':'p2','type':'PartitionedCall','inputs':['x:0'],'subgraphs':['s2']," OUT4 "}]},"
               "{'name':'s1','parent':'p1','nodes':["
               "{'name':'s1_d','type':'Data','attrs':{'_parent_node_index':0}," OUT4 "},"
               "{'name':'p3','type':'PartitionedCall','inputs':['s1_d:0'],'subgraphs':['s3']," OUT4 "},"
               "{'name':'s1_o','type':'NetOutput','inputs':['p3:0'],'input_descs':[{'attrs':{'_parent_node_index':0}}]}]},"
               SUBG("s2", "p2", "[-1]") "," SUBG("s3", "p3", "[4]") "]}");
    assert_int_equal(gm_layout_top_static_graphs(m, &v, &n, &err), GM_OK);
    assert_int_equal(n, 1);
    assert_string_equal(gm_graph_name(v[0]), "s1");
    f = gm_layout_flags_for(v[0]);
    gm_free(v);
    assert_false(f.root_static);
    assert_true(f.fm_refreshable); /* a known subgraph of a dynamic root */
    assert_false(gm_layout_graph_is_static(gm_model_find_graph(m, "s2")));
    gm_model_free(m);

    /* _single_op_scene on the graph */
    m = load_q("{'graphmem':1,'graphs':[{'name':'root','attrs':{'_single_op_scene':true},'nodes':["
               "{'name':'x','type':'Relu'," OUT4 "}]}]}");
    assert_false(gm_layout_flags_for(gm_model_root(m)).user_in_nopad_cont_out);
    gm_model_free(m);
}

/* ---- symbols of one graph ------------------------------------------------------------------ */

static void test_symbols_of_one_graph(void **state)
{
    (void)state;
    gm_model *m = load_q("{'graphmem':1,'graphs':[{'name':'root','nodes':["
                         "{'name':'x','type':'Data','attrs':{'index':0}," OUT4 "},"
                         "{'name':'pc','type':'PartitionedCall','inputs':['x:0'],'subgraphs':['f']," OUT4 "},"
                         "{'name':'y','type':'Relu','inputs':['pc:0']," OUT4 "}]},"
                         "{'name':'f','parent':'pc','nodes':["
                         "{'name':'fd','type':'Data','attrs':{'_parent_node_index':0}," OUT4 "},"
                         "{'name':'r','type':'Relu','inputs':['fd:0']," OUT4 "},"
                         "{'name':'ic','type':'PartitionedCall','inputs':['r:0'],'subgraphs':['g']," OUT4 "},"
                         "{'name':'fo','type':'NetOutput','inputs':['ic:0'],'input_descs':[{'attrs':{'_parent_node_index':0}}]}]},"
                         "{'name':'g','parent':'ic','nodes':["
                         "{'name':'gd','type':'Data','attrs':{'_parent_node_index':0}," OUT4 "},"
                         "{'name':'go','type':'NetOutput','inputs':['gd:0'],'input_descs':[{'attrs':{'_parent_node_index':0}}]}]}]}");
    gm_error err;
    gm_symbols *s = NULL;
    assert_int_equal(gm_symbols_build_graph(m, gm_model_find_graph(m, "f"), &s, &err), GM_OK);
    char buf[128];
    /* f's own Data starts a symbol; the nested call's Data and NetOutput join the call's anchors;
     * f's own NetOutput is an ordinary reader */
    assert_int_equal(gm_symbols_count(s), 2);
    int32_t fd = gm_symbols_find(s, node(m, "fd"), true, 0), r = gm_symbols_find(s, node(m, "r"), true, 0);
    assert_string_equal(gm_symbol_name(s, fd, buf, sizeof buf), "fd_out_0");
    assert_int_equal(gm_symbols_find(s, node(m, "r"), false, 0), fd);
    assert_int_equal(gm_symbol_size(s, fd), 2);
    assert_int_equal(gm_symbols_find(s, node(m, "gd"), true, 0), r);
    assert_int_equal(gm_symbols_find(s, node(m, "ic"), true, 0), r);
    assert_int_equal(gm_symbols_find(s, node(m, "fo"), false, 0), r);
    assert_int_equal(gm_symbol_size(s, r), 6);
    /* nodes outside f have no symbol */
    assert_int_equal(gm_symbols_find(s, node(m, "x"), true, 0), -1);
    assert_int_equal(gm_symbols_find(s, node(m, "pc"), false, 0), -1);
    gm_symbols_free(s);
    /* for the root it is the model's table */
    gm_symbols *a = NULL, *b = NULL;
    assert_int_equal(gm_symbols_build(m, &a, &err), GM_OK);
    assert_int_equal(gm_symbols_build_graph(m, gm_model_root(m), &b, &err), GM_OK);
    assert_int_equal(gm_symbols_count(a), gm_symbols_count(b));
    for (size_t i = 0; i < gm_symbols_count(a); i++) {
        char n1[128], n2[128];
        assert_string_equal(gm_symbol_name(a, gm_symbols_at(a, i), n1, sizeof n1), gm_symbol_name(b, gm_symbols_at(b, i), n2, sizeof n2));
        assert_int_equal(gm_symbol_size(a, gm_symbols_at(a, i)), gm_symbol_size(b, gm_symbols_at(b, i)));
    }
    gm_symbols_free(a);
    gm_symbols_free(b);
    /* a node inserted since the last sort is not in the order: the table is refused, not
     * built without it */
    gm_graph *f = gm_model_find_graph(m, "f");
    assert_non_null(gm_edit_insert_before(node(m, "r"), 0, "copy", "Identity", &err));
    assert_int_equal(gm_symbols_build_graph(m, f, &s, &err), GM_ERR_INTERNAL);
    assert_null(s);
    assert_int_equal(gm_model_toposort(m, &err), GM_OK);
    assert_int_equal(gm_symbols_build_graph(m, f, &s, &err), GM_OK);
    assert_int_equal(gm_symbols_count(s), 3);
    gm_symbols_free(s);
    gm_model_free(m);
}

/* ---- the Identity (§2.7) ------------------------------------------------------------------ */

static void test_identity_name_and_attrs(void **state)
{
    (void)state;
    gm_model *m = load_q(
        "{'graphmem':1,'graphs':[{'name':'root','nodes':["
        "{'name':'x','type':'Data','attrs':{'index':0}," OUT4 "},"
        "{'name':'p','type':'Relu','inputs':['x:0'],'attrs':{'_batch_label':'b1','_is_connected_to_netoutput':[0]},"
        "'outputs':[{'dtype':'float32','shape':[4],'reuse_input':true,'reuse_input_index':0,"
        "'attrs':{'ref_var_src_var_name':'nothing','_keep':7}}]},"
        "{'name':'hcom','type':'HcomAllReduce','inputs':['p:0'],'attrs':{'_input_memory_type':[17],"
        "'_stream_label':'s1','_rts_label_node':'l1','_is_connected_to_data':[0]}," OUT4 "},"
        "{'name':'mc','type':'MemcpyAsync','inputs':['p:0'],'attrs':{'_input_memory_type':[64]}," OUT4 "}]}]}");
    gm_pass_report rep = {0};
    assert_int_equal(run_logged(m, &rep, GM_LOG_WARN, NULL), GM_OK);
    /* sorted by anchor key: hcom_in_0 before mc_in_0, the counter runs on */
    gm_node *id = node(m, "identity_0_hcom_MemLayoutConflict_0");
    assert_non_null(node(m, "identity_0_mc_MemLayoutConflict_1"));
    assert_string_equal(gm_node_type(id), "Identity");
    int32_t k = -1;
    assert_ptr_equal(gm_node_input(node(m, "hcom"), 0, &k), id);
    assert_ptr_equal(gm_node_input(id, 0, &k), node(m, "p"));
    assert_string_equal(gm_node_input_name(id, 0), "x");
    assert_string_equal(gm_node_output_name(id, 0), "y");
    gm_attr *at = *gm_node_attrs(id);
    assert_true(gm_attrs_get_bool(at, "_cannot_be_deleted", false));
    assert_non_null(gm_attr_find(at, "no_need_constant_folding"));
    assert_false(gm_attrs_get_bool(at, "no_need_constant_folding", true));
    assert_string_equal(gm_attrs_get_string(at, "_batch_label"), "b1");
    assert_string_equal(gm_attrs_get_string(at, "_stream_label"), "s1");
    assert_string_equal(gm_attrs_get_string(at, "_rts_label_node"), "l1");
    /* moved, not copied */
    assert_non_null(gm_attr_find(at, "_is_connected_to_data"));
    assert_null(gm_attr_find(*gm_node_attrs(node(m, "hcom")), "_is_connected_to_data"));
    assert_non_null(gm_attr_find(at, "_is_connected_to_netoutput"));
    assert_null(gm_attr_find(*gm_node_attrs(node(m, "p")), "_is_connected_to_netoutput"));
    /* descs: the producer's, reuse_input cleared, ref_var_src_var_name dropped, the rest kept */
    for (int io = 0; io < 2; io++) {
        gm_tensor_desc *d = io ? gm_node_output_desc(id, 0) : gm_node_input_desc(id, 0);
        assert_false(gm_desc_reuse_input(d, NULL));
        assert_null(gm_attr_find(*gm_desc_attrs(d), "ref_var_src_var_name"));
        assert_int_equal(gm_attrs_get_int(*gm_desc_attrs(d), "_keep", 0), 7);
    }
    /* the report */
    assert_int_equal(rep.inserted[GM_PASS_LAYOUT_CONFLICT], 2);
    assert_int_equal(rep.nodes[0].pass, GM_PASS_LAYOUT_CONFLICT);
    assert_string_equal(rep.nodes[0].anchor_node, "hcom");
    assert_true(rep.nodes[0].before);
    /* the first attribute pair that chose it (a collective's input is not refreshable first) */
    assert_string_equal(rep.nodes[0].reason, "[USER_MEMORY_INPUT, UNSUPPORTED_ADDRESS_REFRESH_OPERATOR_INPUT]");
    gm_pass_report_free(&rep);
    gm_model_free(m);
}

static void test_identity_after_and_multi(void **state)
{
    (void)state;
    /* after an output: named after its first reader */
    gm_model *m = load_scenario("layout_L51_rts_out_ts_to_in_p2p.json");
    gm_pass_report rep = {0};
    assert_int_equal(run_logged(m, &rep, GM_LOG_WARN, NULL), GM_OK);
    gm_node *id = node(m, "identity_0_hcomallreduce_MemLayoutConflict_0");
    int32_t k = -1;
    assert_ptr_equal(gm_node_input(id, 0, &k), node(m, "streamswitch"));
    assert_false(rep.nodes[0].before);
    assert_string_equal(rep.nodes[0].anchor_node, "streamswitch");
    gm_pass_report_free(&rep);
    gm_model_free(m);

    /* one k-input copy per While body output set, then one after the exchanged Data */
    m = load_scenario("layout_L138_while_body_exchange.json");
    memset(&rep, 0, sizeof rep);
    assert_int_equal(run_logged(m, &rep, GM_LOG_WARN, NULL), GM_OK);
    gm_node *out = node(m, "identity_0_netoutput1_MemLayoutConflict_0");
    assert_int_equal(gm_node_input_count(out), 2);
    assert_string_equal(gm_node_input_name(out, 1), "x1");
    assert_string_equal(gm_node_output_name(out, 0), "y0");
    /* the exchanged Data in body order (data4, then data5), each before its one reader: now
     * the output copy */
    gm_node *in = gm_node_input(out, 0, &k);
    assert_string_equal(gm_node_type(in), "Identity");
    assert_int_equal(k, 1);
    assert_string_equal(gm_node_name(in), "identity_1_identity_0_netoutput1_MemLayoutConflict_0_MemLayoutConflict_1");
    assert_ptr_equal(gm_node_input(in, 0, &k), node(m, "data4"));
    assert_ptr_equal(gm_node_input(in, 1, &k), node(m, "data5"));
    assert_ptr_equal(gm_node_input(out, 1, &k), in);
    assert_int_equal(k, 0);
    gm_pass_report_free(&rep);
    gm_model_free(m);
}

static void test_while_identity_batch_label(void **state)
{
    (void)state;
    gm_model *m = load_scenario("layout_L135_while_body_cast.json");
    assert_int_equal(gm_attr_set_string(gm_node_attrs(node(m, "cast")), "_batch_label", "batch_1"), GM_OK);
    gm_pass_report rep = {0};
    assert_int_equal(run_logged(m, &rep, GM_LOG_WARN, NULL), GM_OK);
    int32_t k = -1;
    gm_node *id = gm_node_input(node(m, "body_netoutput"), 0, &k);
    assert_string_equal(gm_node_type(id), "Identity");
    assert_string_equal(gm_attrs_get_string(*gm_node_attrs(id), "_batch_label"), "batch_1");
    gm_pass_report_free(&rep);
    gm_model_free(m);
}

/* ---- log lines (§2.9) ------------------------------------------------------------------------ */

static void test_log_lines(void **state)
{
    (void)state;
    gm_model *m = load_scenario("layout_L82_const_to_netoutput.json");
    gm_pass_report rep = {0};
    char *log = NULL;
    assert_int_equal(run_logged(m, &rep, GM_LOG_DEBUG, &log), GM_OK);
    assert_contains(log, "[MemConflict] Start to check memory of root graph root.");
    assert_contains(log, "[MemConflict] Start to check memory of static graph root, is_root_graph_static: 1, "
                         "is_feature_map_refreshable: 0, support_user_input_nopadding_continuous_output: 1, "
                         "is_physical_memory_refreshable: 0");
    assert_contains(log, "[MemConflict] anchor: const_Out_0, types: [IMMUTABLE_ADDRESS_OUTPUT]");
    assert_contains(log, "[MemConflict] anchor: netoutput_In_0, types: [USER_MEMORY_OUTPUT]");
    assert_contains(log, "[MemConflict][Conflict] type: [IMMUTABLE_ADDRESS_OUTPUT, USER_MEMORY_OUTPUT], "
                         "anchor: [const_out_0, netoutput_in_0], will insert before netoutput_in_0");
    assert_contains(log, "[MemConflict][INSERT][NODE] identity_0_netoutput_MemLayoutConflict_0 before netoutput_in_0");
    free(log);
    gm_pass_report_free(&rep);
    gm_model_free(m);

    /* info level: no per-anchor lines; warn level: nothing */
    m = load_scenario("layout_L82_const_to_netoutput.json");
    memset(&rep, 0, sizeof rep);
    assert_int_equal(run_logged(m, &rep, GM_LOG_INFO, &log), GM_OK);
    assert_null(strstr(log, "types: ["));
    free(log);
    gm_pass_report_free(&rep);
    gm_model_free(m);
    m = load_scenario("layout_L82_const_to_netoutput.json");
    memset(&rep, 0, sizeof rep);
    assert_int_equal(run_logged(m, &rep, GM_LOG_WARN, &log), GM_OK);
    assert_string_equal(log, "");
    free(log);
    gm_pass_report_free(&rep);
    gm_model_free(m);

    static const struct {
        const char *file, *line;
    } k_lines[] = {
        {"layout_L125_switch_chain.json", "[MemConflict] peer out is already Identity(identity_0_swt2_MemLayoutConflict_"},
        /* one symbol's anchors are solved in key order: swt1_out_0 before swt2_in_0 */
        {"layout_L125_switch_chain.json", "[MemConflict][INSERT][NODE] identity_0_swt2_MemLayoutConflict_1 after swt1_out_0, index: 0"},
        {"layout_L35_nopad_in_slices_of_var.json",
         "[MemConflict] reference by ref_var_src_var_name attr, skip. anchor: [var_out_0, assign_slice0_out_0]"},
        {"layout_F1_no_static_subgraph.json",
         "[MemConflict] Graph root does not have any static subgraph, skip memory check pass."},
        {"layout_L58_if_branch_data_to_netoutput.json", "[MemConflict][Conflict] Type[Data] node directly connect to netoutput."},
        {"layout_L58_if_branch_data_to_netoutput.json",
         "[MemConflict][INSERT][NODE] identity_0_netoutput1_MemLayoutConflict_0 between data3->netoutput1"},
        {"layout_S11_if_output_referenced_twice.json",
         "[MemConflict][Conflict] Node single output multiple references connect to netoutput"},
        {"layout_L135_while_body_cast.json",
         "[MemConflict][Conflict] To ensure execute order to avoid overwriting input, inserted identity "
         "node[identity_0_body_netoutput_MemLayoutConflict_0] at output of while_body[body]."},
    };
    for (size_t i = 0; i < sizeof k_lines / sizeof *k_lines; i++) {
        m = load_scenario(k_lines[i].file);
        memset(&rep, 0, sizeof rep);
        assert_int_equal(run_logged(m, &rep, GM_LOG_INFO, &log), GM_OK);
        assert_contains(log, k_lines[i].line);
        free(log);
        gm_pass_report_free(&rep);
        gm_model_free(m);
    }
}

static void test_unknown_shape_skips(void **state)
{
    (void)state;
    /* a static root; the branch's Data is of unknown shape: the branch NetOutput conflicts, but
     * no copy is made there */
    gm_model *m = load_q("{'graphmem':1,'graphs':[{'name':'root','nodes':["
                         "{'name':'x','type':'Data','attrs':{'index':0}," OUT4 "},"
                         "{'name':'iff','type':'If','inputs':['x:0','x:0'],'subgraphs':['t','e']," OUT4 "},"
                         "{'name':'o','type':'NetOutput','inputs':['iff:0']}]},"
                         SUBG("t", "iff", "[-1]") "," SUBG("e", "iff", "[-1]") "]}");
    gm_pass_report rep = {0};
    char *log = NULL;
    assert_int_equal(run_logged(m, &rep, GM_LOG_INFO, &log), GM_OK);
    assert_contains(log, "[MemConflict] unknown shape, skip insert identity, node[t_o], input[0].");
    assert_int_equal(count_type(m, "Identity"), 0);
    free(log);
    gm_pass_report_free(&rep);
    gm_model_free(m);
}

/* Rules of §2.5/§2.6 that no catalogue scenario isolates, on small inline graphs. */
static size_t identities_after_run(const char *text, const char *const *opts)
{
    gm_model *m = load_q(text);
    for (size_t i = 0; opts && opts[i]; i += 2) assert_int_equal(gm_model_set_option(m, opts[i], opts[i + 1]), GM_OK);
    gm_pass_report rep = {0};
    assert_int_equal(run_logged(m, &rep, GM_LOG_WARN, NULL), GM_OK);
    size_t n = rep.n_nodes;
    gm_pass_report_free(&rep);
    gm_model_free(m);
    return n;
}

static void test_rule_details(void **state)
{
    (void)state;
    /* IsSkip: a variable and the Assign output that names it by ref_var_src_var_name are one
     * buffer on purpose, even when the Assign's output is in special memory (#7 would fire) */
    assert_int_equal(identities_after_run("{'graphmem':1,'graphs':[{'name':'root','nodes':["
                                          "{'name':'var','type':'Variable'," OUT4 "},"
                                          "{'name':'val','type':'Relu'," OUT4 "},"
                                          "{'name':'asg','type':'Assign','inputs':['var:0','val:0'],'attrs':{'_output_memory_type':[17]},"
                                          "'outputs':[{'dtype':'float32','shape':[4],'attrs':{'ref_var_src_var_name':'var'}}]},"
                                          "{'name':'b','type':'Relu','inputs':['asg:0']," OUT4 "}]}]}",
                                          NULL),
                     0);
    /* the same graph without the attribute: the variable's output gets a copy (#7) */
    assert_int_equal(identities_after_run("{'graphmem':1,'graphs':[{'name':'root','nodes':["
                                          "{'name':'var','type':'Variable'," OUT4 "},"
                                          "{'name':'val','type':'Relu'," OUT4 "},"
                                          "{'name':'asg','type':'Assign','inputs':['var:0','val:0'],'attrs':{'_output_memory_type':[17]}," OUT4 "},"
                                          "{'name':'b','type':'Relu','inputs':['asg:0']," OUT4 "}]}]}",
                                          NULL),
                     1);
    /* CheckAbsoluteConflict, two inputs: not before a ref node's input (its output carries the
     * buffer on), so the NetOutput gets it although the ref node comes first */
    gm_model *m = load_q("{'graphmem':1,'graphs':[{'name':'root','nodes':["
                         "{'name':'a','type':'Relu'," OUT4 "},"
                         "{'name':'r','type':'Relu','inputs':['a:0'],'attrs':{'_input_memory_type':[17]},"
                         "'outputs':[{'dtype':'float32','shape':[4],'reuse_input':true,'reuse_input_index':0}]},"
                         "{'name':'c','type':'Relu','inputs':['r:0']," OUT4 "},"
                         "{'name':'o','type':'NetOutput','inputs':['a:0']}]}]}");
    gm_pass_report rep = {0};
    assert_int_equal(run_logged(m, &rep, GM_LOG_WARN, NULL), GM_OK);
    int32_t k = -1;
    assert_ptr_equal(gm_node_input(node(m, "r"), 0, &k), node(m, "a"));
    assert_string_equal(gm_node_type(gm_node_input(node(m, "o"), 0, &k)), "Identity");
    assert_int_equal(rep.n_nodes, 1);
    gm_pass_report_free(&rep);
    gm_model_free(m);
    /* #4: a continuous input that is itself in the special memory does not conflict with it */
    assert_int_equal(identities_after_run("{'graphmem':1,'graphs':[{'name':'root','nodes':["
                                          "{'name':'a','type':'Relu'," OUT4 "},{'name':'b','type':'Relu'," OUT4 "},"
                                          "{'name':'concat','type':'ConcatD','inputs':['a:0','b:0'],"
                                          "'attrs':{'continuous_input':true,'_input_memory_type':[17,17]}," OUT4 "},"
                                          "{'name':'h','type':'Relu','inputs':['b:0'],'attrs':{'_input_memory_type':[17]}," OUT4 "}]}]}",
                                          NULL),
                     0);
    /* #13: two outputs of one buffer in different special memory: after the earlier one */
    m = load_q("{'graphmem':1,'graphs':[{'name':'root','nodes':["
               "{'name':'a','type':'Relu','attrs':{'_output_memory_type':[64]}," OUT4 "},"
               "{'name':'r','type':'Relu','inputs':['a:0'],'attrs':{'_output_memory_type':[17]},"
               "'outputs':[{'dtype':'float32','shape':[4],'reuse_input':true,'reuse_input_index':0}]},"
               "{'name':'b','type':'Relu','inputs':['r:0']," OUT4 "}]}]}");
    memset(&rep, 0, sizeof rep);
    assert_int_equal(run_logged(m, &rep, GM_LOG_WARN, NULL), GM_OK);
    assert_int_equal(rep.n_nodes, 1);
    assert_string_equal(rep.nodes[0].anchor_node, "a");
    assert_false(rep.nodes[0].before);
    assert_string_equal(rep.nodes[0].reason, "[RTS_SPECIAL_TYPE_OUTPUT, RTS_SPECIAL_TYPE_OUTPUT]");
    gm_pass_report_free(&rep);
    gm_model_free(m);
}

/* Which side of an unrefreshable pair gets the copy: the same copies, told apart by where the
 * report says they went (before an input / after an output). */
static void assert_first_record(const char *text, const char *opt, const char *value, const char *anchor, bool before,
                                const char *not_anchor)
{
    gm_model *m = load_q(text);
    assert_int_equal(gm_model_set_option(m, opt, value), GM_OK);
    gm_pass_report rep = {0};
    assert_int_equal(run_logged(m, &rep, GM_LOG_WARN, NULL), GM_OK);
    bool found = false;
    for (size_t i = 0; i < rep.n_nodes && !found; i++)
        found = !strcmp(rep.nodes[i].anchor_node, anchor) && rep.nodes[i].before == before;
    if (!found) fail_msg("no copy %s %s", before ? "before" : "after", anchor);
    for (size_t i = 0; i < rep.n_nodes; i++)
        if (!strcmp(rep.nodes[i].anchor_node, not_anchor)) fail_msg("a copy next to %s", not_anchor);
    gm_pass_report_free(&rep);
    gm_model_free(m);
}

static void test_unrefreshable_sides(void **state)
{
    (void)state;
    /* #22: with the feature map refreshed, after the switch, not before the NetOutput */
    assert_first_record("{'graphmem':1,'graphs':[{'name':'root','nodes':["
                        "{'name':'a','type':'Relu'," OUT4 "},{'name':'swt','type':'StreamSwitch','inputs':['a:0']," OUT4 "},"
                        "{'name':'o','type':'NetOutput','inputs':['swt:0']}]}]}",
                        "ge.featureBaseRefreshable", "1", "swt", false, "o");
    /* #18: under policy 4 with a switch, after the switch, not after the Data */
    assert_first_record("{'graphmem':1,'graphs':[{'name':'root','nodes':["
                        "{'name':'data','type':'Data','attrs':{'index':0}," OUT4 "},"
                        "{'name':'swt','type':'StreamSwitch','inputs':['data:0'],"
                        "'outputs':[{'dtype':'float32','shape':[4],'reuse_input':true,'reuse_input_index':0}]},"
                        "{'name':'b','type':'Relu','inputs':['swt:0']," OUT4 "}]}]}",
                        "ge.exec.staticMemoryPolicy", "4", "swt", false, "data");
}

/* If/Case branches returning a constant: one copy in that branch (the other branch plain). */
static void test_branch_returns_const(void **state)
{
    (void)state;
    gm_model *m = load_q("{'graphmem':1,'graphs':[{'name':'root','nodes':["
                         "{'name':'x','type':'Data','attrs':{'index':0}," OUT4 "},"
                         "{'name':'iff','type':'If','inputs':['x:0'],'subgraphs':['t','e']," OUT4 "},"
                         "{'name':'r','type':'Relu','inputs':['iff:0']," OUT4 "}]},"
                         "{'name':'t','parent':'iff','nodes':[{'name':'c','type':'Const'," OUT4 "},"
                         "{'name':'t_o','type':'NetOutput','inputs':['c:0'],'input_descs':[{'attrs':{'_parent_node_index':0}}]}]},"
                         "{'name':'e','parent':'iff','nodes':[{'name':'q','type':'Relu'," OUT4 "},"
                         "{'name':'e_o','type':'NetOutput','inputs':['q:0'],'input_descs':[{'attrs':{'_parent_node_index':0}}]}]}]}");
    gm_error err;
    gm_error_clear(&err);
    assert_true(gm_layout_ctrl_has_conflict(gm_model_root(m), &err));
    gm_pass_report rep = {0};
    assert_int_equal(run_logged(m, &rep, GM_LOG_WARN, NULL), GM_OK);
    assert_int_equal(rep.n_nodes, 1);
    assert_string_equal(rep.nodes[0].graph, "t");
    assert_string_equal(rep.nodes[0].node, "identity_0_t_o_MemLayoutConflict_0");
    assert_false(gm_layout_ctrl_has_conflict(gm_model_root(m), &err));
    gm_pass_report_free(&rep);
    gm_model_free(m);
}

/* ---- continuous groups as a whole (layout_groups.c) ---------------------------------------- */

/* n splits in a ring: split k's second output and split k+1's first are one concat's inputs,
 * [s_k:1, s_{k+1}:0]. Every pair of groups agrees; together they are one cycle, or with
 * `open` the last concat is left out and they are one long chain. */
static char *split_ring(int n, bool open)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    fprintf(f, "{'graphmem':1,'graphs':[{'name':'root','nodes':[");
    for (int k = 0; k < n; k++)
        fprintf(f, "%s{'name':'r%d','type':'Relu',%s},{'name':'s%d','type':'SplitD','inputs':['r%d:0'],"
                   "'attrs':{'continuous_output':true}," OUT4x2 "}",
                k ? "," : "", k, OUT4, k, k);
    for (int k = 0; k < (open ? n - 1 : n); k++)
        fprintf(f, ",{'name':'c%d','type':'ConcatD','inputs':['s%d:1','s%d:0'],'attrs':{'continuous_input':true},"
                   "'outputs':[{'dtype':'float32','shape':[8]}]}",
                k, k, (k + 1) % n);
    fprintf(f, "]}]}");
    fclose(f);
    return buf;
}

static size_t unresolved_after_planning(const gm_model *m)
{
    gm_plan *p = NULL;
    gm_error err;
    assert_int_equal(gm_plan_build(m, NULL, &p, &err), GM_OK);
    size_t n = p->unresolved;
    gm_plan_free(p);
    return n;
}

static void test_continuous_groups_as_a_whole(void **state)
{
    (void)state;
    /* a ring of three: one copy, before the concat whose second input would close it, logged
     * and recorded like the pass's other copies; the plan then verifies */
    char *text = split_ring(3, false);
    gm_model *m = load_q(text);
    free(text);
    gm_pass_report rep = {0};
    char *log = NULL;
    assert_int_equal(run_logged(m, &rep, GM_LOG_INFO, &log), GM_OK);
    assert_int_equal(rep.n_nodes, 1);
    assert_string_equal(rep.nodes[0].anchor_node, "c2");
    assert_true(rep.nodes[0].before);
    assert_int_equal(rep.nodes[0].index, 1);
    assert_string_equal(rep.nodes[0].reason, "[CONTINUOUS_INPUT, CONTINUOUS_INPUT] continuous groups with no common layout");
    assert_contains(log, "[MemConflict][Conflict] continuous group of c2: member 1 (c2_in_1) cannot lie where the group "
                         "needs it (the group would close a cycle or hold one buffer twice), will insert before c2_in_1");
    assert_contains(log, "[MemConflict][INSERT][NODE] identity_1_c2_MemLayoutConflict_0 before c2_in_1");
    free(log);
    assert_int_equal(unresolved_after_planning(m), 0);
    /* a second run finds every group honoured */
    assert_int_equal(run_logged(m, &rep, GM_LOG_WARN, NULL), GM_OK);
    assert_int_equal(rep.n_nodes, 1);
    gm_pass_report_free(&rep);
    gm_model_free(m);

    /* without the pass the same ring has no plan: the copy is what makes one */
    text = split_ring(3, false);
    m = load_q(text);
    free(text);
    assert_true(unresolved_after_planning(m) > 0);
    gm_model_free(m);

    /* the ring left open is one chain a layout honours: no copy */
    text = split_ring(3, true);
    m = load_q(text);
    free(text);
    memset(&rep, 0, sizeof rep);
    assert_int_equal(run_logged(m, &rep, GM_LOG_WARN, NULL), GM_OK);
    assert_int_equal(rep.n_nodes, 0);
    assert_int_equal(unresolved_after_planning(m), 0);
    gm_pass_report_free(&rep);
    gm_model_free(m);

    /* a ring of 2,000 splits: still one copy (the check is near-linear: no pairwise matrix) */
    text = split_ring(2000, false);
    m = load_q(text);
    free(text);
    memset(&rep, 0, sizeof rep);
    assert_int_equal(run_logged(m, &rep, GM_LOG_WARN, NULL), GM_OK);
    assert_int_equal(rep.n_nodes, 1);
    assert_string_equal(rep.nodes[0].anchor_node, "c1999");
    assert_int_equal(unresolved_after_planning(m), 0);
    gm_pass_report_free(&rep);
    gm_model_free(m);

    /* a split's outputs [a b c] and a concat's inputs [b c d] overlap head to tail (GE accepts
     * it, §2.6); so does the check as a whole: one block [a b c d] */
    m = load_q("{'graphmem':1,'graphs':[{'name':'root','nodes':[{'name':'x','type':'Relu'," OUT4 "},"
               "{'name':'d','type':'Relu'," OUT4 "},"
               "{'name':'s','type':'SplitD','inputs':['x:0'],'attrs':{'continuous_output':true},'outputs':["
               "{'dtype':'float32','shape':[4]},{'dtype':'float32','shape':[4]},{'dtype':'float32','shape':[4]}]},"
               "{'name':'c','type':'ConcatD','inputs':['s:1','s:2','d:0'],'attrs':{'continuous_input':true},"
               "'outputs':[{'dtype':'float32','shape':[12]}]}]}]}");
    memset(&rep, 0, sizeof rep);
    assert_int_equal(run_logged(m, &rep, GM_LOG_WARN, NULL), GM_OK);
    assert_int_equal(rep.n_nodes, 0);
    assert_int_equal(unresolved_after_planning(m), 0);
    gm_pass_report_free(&rep);
    gm_model_free(m);

    /* a continuous output whose second member is, through a view and a ref, the first split's
     * second member: it would have two predecessors, which no pairwise checker sees (the
     * splits are not connected directly). Its buffer is its input's, so the copy goes before
     * that input */
    m = load_q("{'graphmem':1,'graphs':[{'name':'root','nodes':[{'name':'x','type':'Relu'," OUT4 "},"
               "{'name':'s1','type':'SplitD','inputs':['x:0'],'attrs':{'continuous_output':true}," OUT4x2 "},"
               "{'name':'v','type':'Reshape','inputs':['s1:1'],"
               "'outputs':[{'dtype':'float32','shape':[4],'reuse_input':true,'reuse_input_index':0}]},"
               "{'name':'s2','type':'SplitD','inputs':['v:0'],'attrs':{'continuous_output':true},'outputs':["
               "{'dtype':'float32','shape':[4]},{'dtype':'float32','shape':[4],'reuse_input':true,'reuse_input_index':0}]},"
               "{'name':'o','type':'Add','inputs':['s2:0','s2:1']," OUT4 "}]}]}");
    memset(&rep, 0, sizeof rep);
    assert_int_equal(run_logged(m, &rep, GM_LOG_INFO, &log), GM_OK);
    assert_int_equal(rep.n_nodes, 1);
    assert_string_equal(rep.nodes[0].anchor_node, "s2");
    assert_true(rep.nodes[0].before);
    assert_int_equal(rep.nodes[0].index, 0);
    assert_string_equal(rep.nodes[0].reason, "[CONTINUOUS_OUTPUT, CONTINUOUS_OUTPUT] continuous groups with no common layout");
    assert_contains(log, "member 1 (s2_out_1) cannot lie where the group needs it (its buffer already lies after "
                         "another one), will insert before s2_in_0");
    free(log);
    assert_int_equal(unresolved_after_planning(m), 0);
    gm_pass_report_free(&rep);
    gm_model_free(m);
}

/* The control-node phase builds each subgraph's symbols without sorting; a subgraph holding a
 * node made since the last sort is sorted first, then built. */
static void test_ctrl_after_unsorted_insert(void **state)
{
    (void)state;
    gm_model *m = load_scenario("layout_L58_if_branch_data_to_netoutput.json");
    gm_error err;
    gm_error_clear(&err);
    gm_pass_report rep = {0};
    gm_pass_ctx c = {m, &rep, GM_PASS_LAYOUT_CONFLICT, &err, NULL};
    gm_layout_run r = {&c, 0};
    assert_non_null(gm_edit_insert_before(node(m, "netoutput2"), 0, "late", "Relu", &err));
    assert_int_equal(gm_layout_ctrl_solve(&r, gm_model_root(m)), GM_OK);
    assert_int_equal(gm_model_toposort(m, &err), GM_OK);
    int32_t k = -1;
    assert_string_equal(gm_node_type(gm_node_input(node(m, "netoutput1"), 0, &k)), "Identity");
    /* the else branch now returns the Relu's output: its own, no copy */
    assert_ptr_equal(gm_node_input(node(m, "netoutput2"), 0, &k), node(m, "late"));
    assert_int_equal(rep.n_nodes, 1);
    gm_pass_report_free(&rep);
    gm_model_free(m);
}

/* The absence-only scenarios really were looked at, not skipped by accident. */
static void test_absence_scenarios_processed(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof k_absence_only / sizeof *k_absence_only; i++) {
        gm_model *m = load_scenario(k_absence_only[i]);
        gm_pass_report rep = {0};
        char *log = NULL;
        assert_int_equal(run_logged(m, &rep, GM_LOG_INFO, &log), GM_OK);
        bool skipped = strstr(k_absence_only[i], "_F1_") != NULL;
        if (!strstr(log, skipped ? "does not have any static subgraph" : "Start to check memory of static graph"))
            fail_msg("%s: the pass did not process it:\n%s", k_absence_only[i], log);
        free(log);
        gm_pass_report_free(&rep);
        gm_model_free(m);
    }
}

/* ---- questions without insertion (§2.10) ---------------------------------------------------- */

static const char k_const_relu[] = "{'graphmem':1,'graphs':[{'name':'root','nodes':["
                                   "{'name':'c','type':'%s'," OUT4 "},"
                                   "{'name':'r','type':'Relu','inputs':['c:0']," OUT4 "},"
                                   "{'name':'o','type':'NetOutput','inputs':['r:0']}]}]}";

static bool merged_conflict(const char *producer)
{
    char text[1024];
    snprintf(text, sizeof text, k_const_relu, producer);
    gm_model *m = load_q(text);
    gm_error err;
    gm_error_clear(&err);
    /* the real table: relu separates the constant from the user's output */
    gm_symbols *s = NULL;
    assert_int_equal(gm_symbols_build(m, &s, &err), GM_OK);
    assert_false(gm_layout_graph_has_conflict(gm_model_root(m), s, &err));
    gm_symbols_free(s);
    /* what if relu worked in place: one symbol from the producer to the NetOutput */
    gm_node *c = node(m, "c"), *r = node(m, "r"), *o = node(m, "o");
    const gm_anchor merged[] = {{c, 0, true}, {r, 0, false}, {r, 0, true}, {o, 0, false}};
    const gm_layout_symbol sym = {merged, 4};
    size_t before = gm_model_node_count(m);
    bool has = gm_layout_symbols_have_conflict(gm_model_root(m), &sym, 1, &err);
    assert_int_equal(err.code, GM_OK);
    assert_int_equal(gm_model_node_count(m), before);
    assert_int_equal(count_type(m, "Identity"), 0);
    gm_model_free(m);
    return has;
}

static void test_what_if_symbols(void **state)
{
    (void)state;
    assert_true(merged_conflict("Const"));     /* a constant returned to the user (#20) */
    assert_false(merged_conflict("Variable")); /* a variable is returned by reference */
    assert_false(merged_conflict("Relu"));

    /* one checker, many questions, each answered on its own */
    char text[1024];
    snprintf(text, sizeof text, k_const_relu, "Const");
    gm_model *m = load_q(text);
    gm_error err;
    gm_error_clear(&err);
    gm_layout_checker *chk = NULL;
    assert_int_equal(gm_layout_checker_new(gm_model_root(m), &chk, &err), GM_OK);
    gm_node *c = node(m, "c"), *r = node(m, "r"), *o = node(m, "o");
    const gm_anchor bad[] = {{c, 0, true}, {r, 0, false}, {r, 0, true}, {o, 0, false}};
    const gm_anchor fine[] = {{c, 0, true}, {r, 0, false}};
    const gm_layout_symbol q_bad = {bad, 4}, q_fine = {fine, 2}, both[] = {{fine, 2}, {bad, 4}};
    for (int round = 0; round < 3; round++) {
        assert_true(gm_layout_checker_conflict(chk, &q_bad, 1, &err));
        assert_false(gm_layout_checker_conflict(chk, &q_fine, 1, &err));
        assert_true(gm_layout_checker_conflict(chk, both, 2, &err));
        assert_false(gm_layout_checker_conflict(chk, both, 1, &err));
    }
    assert_int_equal(err.code, GM_OK);
    gm_layout_checker_free(chk);
    gm_model_free(m);
}

static void test_ctrl_check_only(void **state)
{
    (void)state;
    static const struct {
        const char *file;
        bool want;
    } k[] = {
        {"layout_L58_if_branch_data_to_netoutput.json", true}, {"layout_S11_if_output_referenced_twice.json", true},
        {"layout_L138_while_body_exchange.json", true},       {"layout_L135_while_body_cast.json", true},
        {"layout_L139_while_body_bypass.json", false},        {"layout_L134_while_body_pass_through.json", false},
        {"layout_L130_if_nested_call_data.json", true},       {"layout_L82_const_to_netoutput.json", false},
    };
    for (size_t i = 0; i < sizeof k / sizeof *k; i++) {
        gm_model *m = load_scenario(k[i].file);
        gm_error err;
        gm_error_clear(&err);
        size_t before = gm_model_node_count(m);
        /* a question, not a pass: nothing at info level */
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        gm_log_set_stream(f);
        gm_log_set_level(GM_LOG_INFO);
        bool has = gm_layout_ctrl_has_conflict(gm_model_root(m), &err);
        gm_log_set_level(GM_LOG_WARN);
        gm_log_set_stream(NULL);
        fclose(f);
        assert_string_equal(buf, "");
        free(buf);
        if (has != k[i].want) fail_msg("%s", k[i].file);
        assert_int_equal(err.code, GM_OK);
        assert_int_equal(gm_model_node_count(m), before);
        gm_model_free(m);
    }
}

/* ---- the pair loop against GE's all-pairs reference -------------------------------------- */

/* gm_lc_eval_symbol visits only the pairs whose attribute classes a table relates; with
 * brute_force it visits every pair i < j as GE's FindConflictNodes does. Both must give the
 * same conflicts, in the same order, chosen by the same attribute pair, with the same status
 * and the same log (debug level: marks, [Conflict] lines, ref_var_src_var_name skips). */

static uint64_t g_rng;
static uint32_t rnd(uint32_t n)
{
    g_rng = g_rng * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
    return (uint32_t)(g_rng >> 33) % n;
}

/* One evaluation of symbols syms[0..ns) of graph g, everything it decided written to f. */
static void eval_into(FILE *f, const gm_graph *g, const gm_layout_symbol *syms, size_t ns, bool check_only,
                      gm_layout_flags fl, bool brute)
{
    gm_error err;
    gm_error_clear(&err);
    gm_lc lc;
    gm_lc_init(&lc, g, &err, check_only);
    lc.fl = fl;
    lc.brute_force = brute;
    for (size_t s = 0; s < ns && !(check_only && lc.found); s++) {
        gm_status st = gm_lc_eval_symbol(&lc, syms[s].anchors, syms[s].n);
        fprintf(f, "symbol %zu: status %d found %d conflicts %zu\n", s, (int)st, (int)lc.found, lc.n_conf);
        for (size_t k = 0; k < lc.n_conf; k++) {
            char b[320];
            fprintf(f, "  %s [%s, %s]\n", gm_lc_anchor_str(lc.conf[k].at, b, sizeof b), gm_lt_name(lc.conf[k].ta),
                    gm_lt_name(lc.conf[k].tb));
        }
        if (st != GM_OK) {
            fprintf(f, "  error: %s\n", err.message);
            break;
        }
    }
    gm_lc_fini(&lc);
}

/* Compares the two evaluations; returns the number of conflicts the reference found. */
static size_t assert_same_as_all_pairs(const gm_graph *g, const gm_layout_symbol *syms, size_t ns, bool check_only,
                                       gm_layout_flags fl, const char *what)
{
    char *out[2] = {NULL, NULL};
    size_t len[2];
    gm_log_level was = gm_log_get_level();
    for (int brute = 0; brute < 2; brute++) {
        FILE *f = open_memstream(&out[brute], &len[brute]);
        assert_non_null(f);
        gm_log_set_stream(f);
        gm_log_set_level(GM_LOG_DEBUG);
        eval_into(f, g, syms, ns, check_only, fl, brute);
        gm_log_set_level(was);
        gm_log_set_stream(NULL);
        fclose(f);
    }
    if (strcmp(out[0], out[1]) != 0)
        fail_msg("%s (check_only %d): related pairs:\n%s\nall pairs:\n%s", what, check_only, out[0], out[1]);
    size_t n = 0;
    for (const char *p = out[1]; (p = strstr(p, "[MemConflict][Conflict]")); p++) n++;
    free(out[0]);
    free(out[1]);
    return n;
}

/* The symbols of a built table as gm_layout_symbol lists (free *store and *syms). */
static size_t table_symbols(const gm_symbols *s, gm_anchor **store, gm_layout_symbol **syms)
{
    size_t total = 0, ns = gm_symbols_count(s);
    for (size_t i = 0; i < ns; i++) total += gm_symbol_size(s, gm_symbols_at(s, i));
    *store = malloc((total ? total : 1) * sizeof **store);
    *syms = malloc((ns ? ns : 1) * sizeof **syms);
    assert_true(*store && *syms);
    size_t at = 0;
    for (size_t i = 0; i < ns; i++) {
        int32_t sym = gm_symbols_at(s, i);
        (*syms)[i].anchors = *store + at;
        size_t k = 0;
        for (int32_t a = gm_symbol_first(s, sym); a >= 0; a = gm_symbols_next(s, a)) (*store)[at + k++] = gm_symbols_anchor(s, a);
        (*syms)[i].n = k;
        at += k;
    }
    return ns;
}

/* Both ways over the model's own symbol table and, when shuffle, over every anchor of the
 * model dealt at random into a few made-up symbols (any attribute may meet any other). */
static size_t compare_model(gm_model *m, bool shuffle, const char *what)
{
    gm_graph *root = gm_model_root(m);
    gm_error err;
    gm_error_clear(&err);
    gm_symbols *s = NULL;
    assert_int_equal(gm_symbols_build(m, &s, &err), GM_OK);
    gm_anchor *store = NULL;
    gm_layout_symbol *syms = NULL;
    size_t ns = table_symbols(s, &store, &syms), found = 0;
    gm_layout_flags fl = gm_layout_flags_for(root);
    for (int variant = 0; variant < 2; variant++) {
        if (variant) { /* the refresh gates and the user-input rule, either way */
            fl.fm_refreshable = rnd(2);
            fl.physical_refreshable = rnd(2);
            fl.user_in_nopad_cont_out = rnd(2);
            fl.root_static = rnd(4) != 0;
        }
        found += assert_same_as_all_pairs(root, syms, ns, false, fl, what);
        assert_same_as_all_pairs(root, syms, ns, true, fl, what);
    }
    if (shuffle) {
        size_t n = 0;
        for (size_t i = 0; i < ns; i++) n += syms[i].n;
        gm_anchor *all = malloc((n ? n : 1) * sizeof *all);
        assert_non_null(all);
        n = 0;
        for (size_t i = 0; i < gm_model_node_count(m); i++) {
            gm_node *nd = gm_model_node_at(m, i);
            for (uint32_t k = 0; k < nd->n_out; k++) all[n++] = (gm_anchor){nd, k, true};
            for (uint32_t k = 0; k < nd->n_in; k++) all[n++] = (gm_anchor){nd, k, false};
        }
        for (size_t i = n; i > 1; i--) {
            size_t j = rnd((uint32_t)i);
            gm_anchor t = all[i - 1];
            all[i - 1] = all[j];
            all[j] = t;
        }
        gm_layout_symbol made[3];
        size_t parts = 1 + rnd(3), at = 0;
        for (size_t p = 0; p < parts; p++) {
            size_t take = p + 1 == parts ? n - at : rnd((uint32_t)(n - at + 1));
            made[p] = (gm_layout_symbol){all + at, take};
            at += take;
        }
        found += assert_same_as_all_pairs(root, made, parts, false, fl, what);
        assert_same_as_all_pairs(root, made, parts, true, fl, what);
        free(all);
    }
    free(store);
    free(syms);
    gm_symbols_free(s);
    return found;
}

/* A random graph of the node kinds that carry the 14 attributes. */
static char *random_graph(void)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    char outs[64][48];
    char vars[16][32];
    size_t n_outs = 0, n_vars = 0, n_nodes = 4 + rnd(12);
    static const int64_t mem[] = {0, 0, 17, 64};
#define PICK() (n_outs ? outs[rnd(4) ? n_outs - 1 - rnd(n_outs < 3 ? (uint32_t)n_outs : 3) : rnd((uint32_t)n_outs)] : "x:0")
    fprintf(f, "{'graphmem':1,'graphs':[{'name':'root','nodes':[");
    for (size_t i = 0; i < n_nodes; i++) {
        char name[24];
        snprintf(name, sizeof name, "n%zu", i);
        uint32_t kind = rnd(14);
        if (!n_outs && kind > 3) kind = rnd(4);
        uint32_t n_in = 0, n_out = 1;
        const char *type = "Relu";
        char attrs[256] = "", oattr[96] = "";
        switch (kind) {
        case 0: type = "Data"; snprintf(attrs, sizeof attrs, "'index':%zu", i); break;
        case 1: type = "RefData"; snprintf(attrs, sizeof attrs, "'index':%zu", i); break;
        case 2: type = rnd(2) ? "Const" : "Constant"; break;
        case 3: type = "Variable"; break;
        case 4: type = "Relu"; n_in = 1; break;
        case 5: type = rnd(3) ? "StreamSwitch" : "LabelSwitchByIndex"; n_in = 1; break;
        case 6:
            type = "HcomAllReduce"; n_in = 1 + rnd(2);
            snprintf(attrs, sizeof attrs, "'_input_memory_type':[%lld,%lld],'_output_memory_type':[%lld]",
                     (long long)mem[rnd(4)], (long long)mem[rnd(4)], (long long)mem[rnd(4)]);
            break;
        case 7:
            type = "ConcatD"; n_in = 2 + rnd(2);
            snprintf(attrs, sizeof attrs, "'continuous_input':true%s,'_input_memory_type':[%lld,%lld,%lld]",
                     rnd(4) ? "" : ",'_no_padding_continuous_input':true", (long long)mem[rnd(4)],
                     (long long)mem[rnd(4)], (long long)mem[rnd(4)]);
            if (rnd(3) == 0) {
                strcat(attrs, ",'_output_reuse_input':true");
                snprintf(oattr, sizeof oattr, ",'reuse_input':true,'reuse_input_index':0");
            }
            break;
        case 8:
            type = "PhonyConcat"; n_in = 2 + rnd(2);
            snprintf(attrs, sizeof attrs, "'_no_padding_continuous_input':true,'_output_reuse_input':true");
            snprintf(oattr, sizeof oattr, ",'reuse_input':true,'reuse_input_index':0");
            break;
        case 9:
            type = "SplitD"; n_in = 1; n_out = 2 + rnd(2);
            snprintf(attrs, sizeof attrs, "'continuous_output':true,'_output_memory_type':[%lld,%lld,%lld]%s",
                     (long long)mem[rnd(4)], (long long)mem[rnd(4)], (long long)mem[rnd(4)],
                     rnd(3) ? "" : ",'_output_reuse_input':true");
            break;
        case 10:
            type = "PhonySplit"; n_in = 1; n_out = 2;
            snprintf(attrs, sizeof attrs, "'_no_padding_continuous_output':true,'_output_reuse_input':true");
            break;
        case 11:
            if (!n_vars) { kind = 4; type = "Relu"; n_in = 1; break; }
            type = "Assign"; n_in = 2;
            break;
        case 12: type = rnd(2) ? "Identity" : "MemcpyAsync"; n_in = 1; break;
        default: type = "Relu"; n_in = 1; break;
        }
        fprintf(f, "%s{'name':'%s','type':'%s'", i ? "," : "", name, type);
        if (n_in) {
            fprintf(f, ",'inputs':[");
            const char *var = kind == 11 ? vars[rnd((uint32_t)n_vars)] : NULL;
            for (uint32_t k = 0; k < n_in; k++) {
                if (var && k == 0) fprintf(f, "'%s:0'", var);
                else fprintf(f, "%s'%s'", k ? "," : "", PICK());
            }
            fprintf(f, "]");
            if (var) snprintf(oattr, sizeof oattr, ",'attrs':{'ref_var_src_var_name':'%s'}", var);
        }
        fprintf(f, ",'outputs':[");
        for (uint32_t k = 0; k < n_out; k++)
            fprintf(f, "%s{'dtype':'float32','shape':[4]%s}", k ? "," : "", k == 0 ? oattr : "");
        fprintf(f, "]");
        if (attrs[0]) fprintf(f, ",'attrs':{%s}", attrs);
        fprintf(f, "}");
        for (uint32_t k = 0; k < n_out && n_outs < 64; k++) snprintf(outs[n_outs++], sizeof outs[0], "%s:%u", name, k);
        if ((kind == 1 || kind == 3) && n_vars < 16) snprintf(vars[n_vars++], sizeof vars[0], "%s", name);
    }
    fprintf(f, ",{'name':'netoutput','type':'NetOutput','inputs':[");
    uint32_t n_ret = 1 + rnd(3);
    for (uint32_t k = 0; k < n_ret; k++) fprintf(f, "%s'%s'", k ? "," : "", PICK());
    fprintf(f, "]}]}]}");
#undef PICK
    fclose(f);
    return buf;
}

static void test_related_pairs_random(void **state)
{
    (void)state;
    g_rng = 20240611;
    size_t loaded = 0, conflicts = 0;
    char why[1024] = "";
    for (int t = 0; t < 1000; t++) {
        char *text = random_graph();
        gm_model *m = scn_load_quoted(text, why, sizeof why);
        if (m) {
            char what[32];
            snprintf(what, sizeof what, "random graph %d", t);
            conflicts += compare_model(m, true, what);
            gm_model_free(m);
            loaded++;
        }
        free(text);
    }
    /* the graphs are valid models, and rich: many pairs decide something */
    if (loaded < 950) fail_msg("only %zu of 1000 random graphs loaded (last: %s)", loaded, why);
    assert_true(conflicts > 1000);
}

/* Large symbols: a tensor read by a thousand consumers of every kind, and a value threaded
 * through nested calls (one symbol of 3 anchors per level). */
static void test_related_pairs_large_symbols(void **state)
{
    (void)state;
    g_rng = 7;
    static const char *const readers[] = {
        "'type':'Relu','inputs':['a:0']",
        "'type':'ConcatD','inputs':['a:0','b:0'],'attrs':{'continuous_input':true}",
        "'type':'StreamSwitch','inputs':['a:0']",
        "'type':'HcomAllReduce','inputs':['a:0'],'attrs':{'_input_memory_type':[17]}",
        "'type':'PhonyConcat','inputs':['b:0','a:0'],'attrs':{'_no_padding_continuous_input':true}",
        "'type':'HcomAllReduce','inputs':['a:0'],'attrs':{'_input_memory_type':[64]}",
        "'type':'Relu','inputs':['a:0']",
    };
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    fprintf(f, "{'graphmem':1,'graphs':[{'name':'root','nodes':[{'name':'x','type':'Data','attrs':{'index':0},"
               "'outputs':[{'dtype':'float32','shape':[4]}]},"
               "{'name':'a','type':'Relu','inputs':['x:0'],'outputs':[{'dtype':'float32','shape':[4]}]},"
               "{'name':'b','type':'Relu','inputs':['x:0'],'outputs':[{'dtype':'float32','shape':[4]}]}");
    for (int i = 0; i < 1000; i++)
        fprintf(f, ",{'name':'r%d',%s,'outputs':[{'dtype':'float32','shape':[4]}]}", i, readers[i % 7]);
    fprintf(f, ",{'name':'o','type':'NetOutput','inputs':['a:0','r0:0']}]}]}");
    fclose(f);
    gm_model *m = load_q(buf);
    free(buf);
    assert_true(compare_model(m, false, "a tensor with 1000 readers") > 0);
    gm_model_free(m);

    /* the brief's nested calls, 150 deep */
    buf = NULL;
    f = open_memstream(&buf, &len);
    fprintf(f, "{'graphmem':1,'graphs':[{'name':'root','nodes':[{'name':'x','type':'Data','attrs':{'index':0},"
               "'outputs':[{'dtype':'float32','shape':[4]}]},{'name':'call0','type':'PartitionedCall','inputs':['x:0'],"
               "'subgraphs':['g0'],'outputs':[{'dtype':'float32','shape':[4]}]},"
               "{'name':'out','type':'NetOutput','inputs':['call0:0']}]}");
    for (int i = 0; i < 150; i++) {
        fprintf(f, ",{'name':'g%d','parent':'call%d','nodes':[{'name':'d%d','type':'Data','attrs':{'_parent_node_index':0},"
                   "'outputs':[{'dtype':'float32','shape':[4]}]},", i, i, i);
        if (i + 1 < 150)
            fprintf(f, "{'name':'call%d','type':'PartitionedCall','inputs':['d%d:0'],'subgraphs':['g%d'],"
                       "'outputs':[{'dtype':'float32','shape':[4]}]},{'name':'o%d','type':'NetOutput','inputs':['call%d:0'],",
                    i + 1, i, i + 1, i, i + 1);
        else
            fprintf(f, "{'name':'r%d','type':'StreamSwitch','inputs':['d%d:0'],'outputs':[{'dtype':'float32','shape':[4]}]},"
                       "{'name':'o%d','type':'NetOutput','inputs':['r%d:0'],", i, i, i, i);
        fprintf(f, "'input_descs':[{'attrs':{'_parent_node_index':0}}]}]}");
    }
    fprintf(f, "]}");
    fclose(f);
    m = load_q(buf);
    free(buf);
    compare_model(m, false, "150 nested calls");
    gm_model_free(m);
}

/* ---- robustness --------------------------------------------------------------------------- */

/* A second run finds every copy in place (IsSkipInsert, and copies that separate). */
static void test_second_run_inserts_nothing(void **state)
{
    (void)state;
    size_t n = 0;
    char **names = scn_list_files(GM_SCENARIO_DIR, "layout_", &n);
    for (size_t i = 0; i < n; i++) {
        if (strstr(names[i], "_S")) continue; /* whole-pipeline scenarios */
        gm_model *m = load_scenario(names[i]);
        gm_pass_report rep = {0};
        assert_int_equal(run_logged(m, &rep, GM_LOG_WARN, NULL), GM_OK);
        size_t first = rep.n_nodes;
        assert_int_equal(run_logged(m, &rep, GM_LOG_WARN, NULL), GM_OK);
        if (rep.n_nodes != first) fail_msg("%s: the second run inserted %zu more", names[i], rep.n_nodes - first);
        gm_pass_report_free(&rep);
        gm_model_free(m);
    }
    scn_free_list(names, n);
}

static void test_null_model(void **state)
{
    (void)state;
    gm_error err;
    gm_pass_report rep = {0};
    gm_pass_ctx c = {NULL, &rep, GM_PASS_LAYOUT_CONFLICT, &err, NULL};
    assert_int_equal(gm_pass_layout_conflict(&c), GM_ERR_INPUT);
}

static void test_allocation_failures(void **state)
{
    (void)state;
    static const char *const files[] = {
        "layout_L01_cont_in_shared_producers.json", "layout_L10_cont_out_in_crossed.json",
        "layout_L30_nopad_in_partial_same.json",    "layout_L46_var_assign_cont_out.json",
        "layout_L58_if_branch_data_to_netoutput.json", "layout_L125_switch_chain.json",
        "layout_L131_unknown_root_if_in_call.json", "layout_L138_while_body_exchange.json",
    };
    size_t failures_seen = 0;
    for (size_t f = 0; f < sizeof files / sizeof *files; f++)
        failures_seen += fail_each_allocation(files[f], GM_PASS_LAYOUT_CONFLICT, gm_pass_layout_conflict);
    assert_true(failures_seen > 100);
    /* the questions answer "conflict" when they cannot tell */
    gm_model *m = load_scenario("layout_L59_data_to_netoutput.json");
    gm_error err;
    gm_error_clear(&err);
    gm_node *d = node(m, "data"), *o = node(m, "netoutput");
    const gm_anchor a[] = {{d, 0, true}, {o, 0, false}};
    const gm_layout_symbol sym = {a, 2};
    assert_false(gm_layout_symbols_have_conflict(gm_model_root(m), &sym, 1, &err));
    gm_alloc_fail_after(0);
    bool has = gm_layout_symbols_have_conflict(gm_model_root(m), &sym, 1, &err);
    gm_alloc_fail_after(-1);
    assert_true(has);
    assert_int_equal(err.code, GM_ERR_NOMEM);
    gm_model_free(m);
}

/* A root of `relus` Relus on one Data (as many symbols), and Consts feeding the NetOutput
 * directly — a conflict each (a constant is the user's output) — named to sort `before` and
 * `after` the Relus' symbols, when asked. */
static gm_model *many_symbols(int relus, bool before, bool after, bool before_last)
{
    size_t cap = (size_t)relus * 96 + 1024, len = 0;
    char *t = malloc(cap);
    assert_non_null(t);
#define PUT(...) len += (size_t)snprintf(t + len, cap - len, __VA_ARGS__)
    PUT("{'graphmem':1,'graphs':[{'name':'root','nodes':[{'name':'d','type':'Data','attrs':{'index':0}," OUT4 "},");
    if (before && !before_last) PUT("{'name':'a_const','type':'Const'," OUT4 "},");
    if (after) PUT("{'name':'z_const','type':'Const'," OUT4 "},");
    for (int i = 0; i < relus; i++) PUT("{'name':'r%06d','type':'Relu','inputs':['d:0']," OUT4 "},", i);
    if (before && before_last) PUT("{'name':'a_const','type':'Const'," OUT4 "},");
    PUT("{'name':'o','type':'NetOutput','inputs':['r000000:0'%s%s]}]}]}", before ? ",'a_const:0'" : "",
        after ? ",'z_const:0'" : "");
#undef PUT
    assert_true(len < cap);
    gm_model *m = load_q(t);
    free(t);
    return m;
}

/* The model's nodes in order, with their inputs' producers. */
static char *order_text(const gm_model *m)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    for (size_t i = 0; i < gm_model_node_count(m); i++) {
        const gm_node *n = gm_model_node_at(m, i);
        fprintf(f, "%s:%s(", n->name, n->type);
        for (uint32_t k = 0; k < n->n_in; k++) fprintf(f, "%s ", n->in[k].src ? n->in[k].src->name : "-");
        fprintf(f, ")\n");
    }
    fclose(f);
    return buf;
}

/* Above 65,536 symbols the symbols before the first conflict are evaluated on two threads
 * (quiet log levels only), each taking its share of the symbol ids (the model's order); the
 * pass must do exactly what the one-thread loop in name order does (forced here by the info
 * level, which logs): no conflict, one first in the name order, one last, both; and both with
 * the first in name order made last (so the other thread finds it). */
static void test_many_symbols_in_parts(void **state)
{
    (void)state;
    const bool cases[5][3] = {{false, false, false}, {true, false, false}, {false, true, false},
                              {true, true, false}, {true, true, true}};
    for (int k = 0; k < 5; k++) {
        char *text[2];
        for (int serial = 0; serial < 2; serial++) {
            gm_model *m = many_symbols(70000, cases[k][0], cases[k][1], cases[k][2]);
            gm_pass_report rep = {0};
            gm_error err;
            gm_error_clear(&err);
            gm_log_level was = gm_log_get_level();
            gm_log_set_level(GM_LOG_WARN);
            gm_status st = serial ? run_logged(m, &rep, GM_LOG_INFO, NULL) : run_layout(m, &rep, &err);
            gm_log_set_level(was);
            assert_int_equal(st, GM_OK);
            assert_int_equal(count_type(m, "Identity"), (size_t)cases[k][0] + (size_t)cases[k][1]);
            text[serial] = order_text(m);
            gm_pass_report_free(&rep);
            gm_model_free(m);
        }
        assert_string_equal(text[0], text[1]);
        free(text[0]);
        free(text[1]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_is_same_or_partial_same),
        cmocka_unit_test(test_is_sub_vector),
        cmocka_unit_test(test_membership_per_symbol),
        cmocka_unit_test(test_tables_symmetric),
        cmocka_unit_test(test_registry_55_pairs),
        cmocka_unit_test(test_check_error_text_quirk6),
        cmocka_unit_test(test_attribute_marking),
        cmocka_unit_test(test_flags_and_top_graphs),
        cmocka_unit_test(test_symbols_of_one_graph),
        cmocka_unit_test(test_identity_name_and_attrs),
        cmocka_unit_test(test_identity_after_and_multi),
        cmocka_unit_test(test_while_identity_batch_label),
        cmocka_unit_test(test_log_lines),
        cmocka_unit_test(test_unknown_shape_skips),
        cmocka_unit_test(test_rule_details),
        cmocka_unit_test(test_unrefreshable_sides),
        cmocka_unit_test(test_branch_returns_const),
        cmocka_unit_test(test_ctrl_after_unsorted_insert),
        cmocka_unit_test(test_absence_scenarios_processed),
        cmocka_unit_test(test_what_if_symbols),
        cmocka_unit_test(test_ctrl_check_only),
        cmocka_unit_test(test_second_run_inserts_nothing),
        cmocka_unit_test(test_continuous_groups_as_a_whole),
        cmocka_unit_test(test_null_model),
        cmocka_unit_test(test_allocation_failures),
        cmocka_unit_test(test_related_pairs_random),
        cmocka_unit_test(test_related_pairs_large_symbols),
        cmocka_unit_test(test_many_symbols_in_parts),
        cmocka_unit_test(test_layout_scenarios),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
