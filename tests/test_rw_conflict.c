/*
 * test_rw_conflict.c — GE's read/write conflict handling (reference §1): the two tables, the
 * RW types of outputs and inputs, the subgraph marking, the pass on every rw_*.json scenario
 * (run here directly, so the files are checked before the pass is registered in pipeline.c),
 * the details a scenario file cannot state (names, descs, attributes, control edges, logs),
 * CheckRWConflict with its quirks, failures and out-of-memory paths.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>


#include "scenario_check.c"

#include "conflict/rw_conflict.h"
#include "graphmem/log.h"
#include "ir/ir.h"
#include "util/alloc.h"

/* ---- helpers ---------------------------------------------------------------------------------- */


static gm_model *read_json(const char *text)
{
    gm_model *m = NULL;
    gm_error err;
    gm_error_clear(&err);
    gm_status st = gm_model_read_json(text, strlen(text), "inline.json", &m, &err);
    if (st != GM_OK) fail_msg("inline graph does not read: %s", err.message);
    return m;
}

/* The graph of a scenario file, read as a model (not yet run). */
static gm_model *read_scenario_graph(const char *file)
{
    char why[1024] = "";
    gm_model *m = scn_load_graph(GM_SCENARIO_DIR, file, why, sizeof why);
    if (!m) fail_msg("%s", why);
    return m;
}

static gm_status run_pass(gm_model *m, gm_pass_report *rep, gm_error *err)
{
    memset(rep, 0, sizeof *rep);
    gm_pass_ctx c = {m, rep, GM_PASS_RW_CONFLICT, err, NULL};
    gm_status st = gm_pass_rw_conflict(&c);
    if (st == GM_OK) rep->ran[GM_PASS_RW_CONFLICT] = 1;
    return st;
}

/* The scenario harness's run function, calling the pass directly. */
static gm_status run_rw_direct(gm_model *m, gm_pass_set set, gm_pass_report *rep, gm_pass_set *available,
                               gm_error *err, void *ctx)
{
    (void)ctx;
    *available = 1u << GM_PASS_RW_CONFLICT;
    if (set & ~(1u << GM_PASS_RW_CONFLICT)) fail_msg("rw scenarios run only rw_conflict");
    gm_status st = run_pass(m, rep, err);
    return st == GM_OK ? gm_model_toposort(m, err) : st;
}

/* Reads a scenario's graph and runs the pass on it; the caller frees model and report. */
static gm_model *run_scenario(const char *file, gm_pass_report *rep)
{
    gm_model *m = read_scenario_graph(file);
    gm_error err;
    gm_error_clear(&err);
    if (run_pass(m, rep, &err) != GM_OK) fail_msg("%s: the pass failed: %s", file, err.message);
    return m;
}

static gm_node *find(const gm_model *m, const char *name)
{
    gm_node *n = gm_model_find_node(m, name);
    if (!n) fail_msg("no node '%s'", name);
    return n;
}

static const char *producer_name(const gm_model *m, const char *node, size_t in)
{
    int32_t k = 0;
    const gm_node *p = gm_node_input(find(m, node), in, &k);
    return p ? gm_node_name(p) : "(none)";
}

static bool has_ctrl_in(const gm_node *n, const char *pred)
{
    for (size_t i = 0; i < gm_node_control_input_count(n); i++)
        if (!strcmp(gm_node_name(gm_node_control_input(n, i)), pred)) return true;
    return false;
}

static gm_rw_state *state_of(gm_model *m, bool mutate)
{
    gm_rw_state *st = NULL;
    gm_error err;
    gm_error_clear(&err);
    if (gm_rw_state_new(m, mutate, &st, &err) != GM_OK) fail_msg("state: %s", err.message);
    if (gm_rw_mark_subgraphs(st, NULL, NULL, &err) != GM_OK) fail_msg("mark: %s", err.message);
    return st;
}

/* ---- the tables ------------------------------------------------------------------------------- */

static void test_decision_matrix(void **state)
{
    (void)state;
    /* Rows ReadOnlyConst, ReadOnly, SoftRead, Writeable; columns ReadOnly, Writeable, ScopeWriteable. */
    static const gm_rw_result want[4][3] = {
        {GM_RW_DO_NOTHING, GM_RW_INSERT_IDENTITY, GM_RW_INSERT_IDENTITY},
        {GM_RW_DO_NOTHING, GM_RW_DO_NOTHING, GM_RW_INSERT_IDENTITY},
        {GM_RW_DO_NOTHING, GM_RW_DO_NOTHING, GM_RW_DO_NOTHING},
        {GM_RW_DO_NOTHING, GM_RW_DO_NOTHING, GM_RW_INSERT_IDENTITY},
    };
    for (int o = 0; o < GM_RW_OUT_COUNT; o++) {
        for (int i = 0; i < GM_RW_IN_COUNT; i++) {
            gm_rw_result r = gm_rw_conflict_result((gm_rw_out_type)o, (gm_rw_in_type)i);
            gm_rw_result w = (o == GM_RW_OUT_INVALID || i == GM_RW_IN_INVALID) ? GM_RW_WRONG_GRAPH : want[o][i];
            if (r != w)
                fail_msg("matrix(%s, %s) = %s, want %s", gm_rw_out_type_name((gm_rw_out_type)o),
                         gm_rw_in_type_name((gm_rw_in_type)i), gm_rw_result_name(r), gm_rw_result_name(w));
        }
    }
}

static void test_merge_table(void **state)
{
    (void)state;
    const unsigned RO = 1u << GM_RW_IN_READ_ONLY, W = 1u << GM_RW_IN_WRITEABLE,
                   SW = 1u << GM_RW_IN_SCOPE_WRITEABLE, INV = 1u << GM_RW_IN_INVALID;
    assert_int_equal(gm_rw_merge_input_types(0), GM_RW_IN_READ_ONLY); /* empty set */
    assert_int_equal(gm_rw_merge_input_types(RO), GM_RW_IN_READ_ONLY);
    assert_int_equal(gm_rw_merge_input_types(W), GM_RW_IN_WRITEABLE);
    assert_int_equal(gm_rw_merge_input_types(SW), GM_RW_IN_SCOPE_WRITEABLE);
    assert_int_equal(gm_rw_merge_input_types(RO | W), GM_RW_IN_WRITEABLE);
    assert_int_equal(gm_rw_merge_input_types(RO | SW), GM_RW_IN_SCOPE_WRITEABLE);
    assert_int_equal(gm_rw_merge_input_types(W | SW), GM_RW_IN_INVALID);
    assert_int_equal(gm_rw_merge_input_types(RO | W | SW), GM_RW_IN_INVALID);
    for (unsigned mask = 0; mask < 16; mask++)
        if (mask & INV) assert_int_equal(gm_rw_merge_input_types(mask), GM_RW_IN_INVALID);
}

static void test_type_names_and_log_quirk(void **state)
{
    (void)state;
    assert_string_equal(gm_rw_out_type_name(GM_RW_OUT_READ_ONLY_CONST), "ReadOnlyConst");
    assert_string_equal(gm_rw_out_type_name(GM_RW_OUT_WRITEABLE), "Writeable");
    assert_string_equal(gm_rw_in_type_name(GM_RW_IN_SCOPE_WRITEABLE), "ScopeWriteable");
    /* §9.4-1: GE's log prints every output type one name off. */
    assert_string_equal(gm_rw_out_type_log_name(GM_RW_OUT_READ_ONLY_CONST), "ReadOnly");
    assert_string_equal(gm_rw_out_type_log_name(GM_RW_OUT_READ_ONLY), "SoftRead");
    assert_string_equal(gm_rw_out_type_log_name(GM_RW_OUT_SOFT_READ), "Writeable");
    assert_string_equal(gm_rw_out_type_log_name(GM_RW_OUT_WRITEABLE), "InvalidRWType");
    assert_string_equal(gm_rw_out_type_log_name(GM_RW_OUT_INVALID), "InvalidRWType");
}

/* ---- the types on a graph ----------------------------------------------------------------------- */

#define F4 "\"outputs\":[{\"dtype\":\"float32\",\"shape\":[4]}]"
#define F4x2 "\"outputs\":[{\"dtype\":\"float32\",\"shape\":[4]},{\"dtype\":\"float32\",\"shape\":[4]}]"

/* Root nodes of many kinds, an If whose branches read/write, a PartitionedCall whose body
 * returns an Assign output, a While. */
static const char k_types_graph[] =
    "{\"graphmem\":1,\"graphs\":["
    "{\"name\":\"root\",\"nodes\":["
    "{\"name\":\"x\",\"type\":\"Data\",\"attrs\":{\"index\":0}," F4 "},"
    "{\"name\":\"rd\",\"type\":\"RefData\"," F4 "},"
    "{\"name\":\"var\",\"type\":\"Variable\"," F4 "},"
    "{\"name\":\"c\",\"type\":\"Const\"," F4 "},"
    "{\"name\":\"relu\",\"type\":\"Relu\",\"inputs\":[\"x:0\"]," F4 "},"
    "{\"name\":\"twice\",\"type\":\"Add\",\"inputs\":[\"relu:0\",\"relu:0\"]," F4 "},"
    "{\"name\":\"sig\",\"type\":\"Sigmoid\",\"inputs\":[\"twice:0\"]," F4 "},"
    "{\"name\":\"assign\",\"type\":\"Assign\",\"inputs\":[\"var:0\",\"c:0\"]," F4 "},"
    "{\"name\":\"named\",\"type\":\"MyRef\",\"inputs\":[\"sig:0\",\"c:0\"],\"input_names\":[\"a\",\"b\"],"
    "\"output_names\":[\"z\",\"b\"]," F4x2 "},"
    "{\"name\":\"fifo\",\"type\":\"Relu\",\"inputs\":[\"c:0\"],\"input_descs\":[{\"attrs\":{\"_special_input_size\":2}}]," F4 "},"
    "{\"name\":\"ar\",\"type\":\"HcomAllReduce\",\"inputs\":[\"c:0\"],\"attrs\":{\"_input_mutable\":true}," F4 "},"
    "{\"name\":\"ar_off\",\"type\":\"HcomAllReduce\",\"inputs\":[\"c:0\"],\"attrs\":{\"_input_mutable\":false}," F4 "},"
    "{\"name\":\"if\",\"type\":\"If\",\"inputs\":[\"x:0\",\"relu:0\",\"c:0\"],\"subgraphs\":[\"then\",\"else\"]," F4 "},"
    "{\"name\":\"r1\",\"type\":\"Relu\",\"inputs\":[\"if:0\"]," F4 "},"
    "{\"name\":\"r2\",\"type\":\"Relu\",\"inputs\":[\"if:0\"]," F4 "},"
    "{\"name\":\"call\",\"type\":\"PartitionedCall\",\"inputs\":[\"var:0\"],\"subgraphs\":[\"f\"]," F4 "},"
    "{\"name\":\"loop\",\"type\":\"While\",\"inputs\":[\"x:0\"],\"subgraphs\":[\"cond\",\"body\"]," F4 "},"
    "{\"name\":\"out\",\"type\":\"NetOutput\",\"inputs\":[\"call:0\",\"loop:0\",\"r1:0\",\"r2:0\",\"ar:0\"]}"
    "]},"
    "{\"name\":\"then\",\"parent\":\"if\",\"nodes\":["
    "{\"name\":\"t1\",\"type\":\"Data\",\"attrs\":{\"_parent_node_index\":1}," F4 "},"
    "{\"name\":\"t2\",\"type\":\"Data\",\"attrs\":{\"_parent_node_index\":2}," F4 "},"
    "{\"name\":\"t_ar\",\"type\":\"HcomAllReduce\",\"inputs\":[\"t1:0\"],\"attrs\":{\"_input_mutable\":true}," F4 "},"
    "{\"name\":\"t_relu\",\"type\":\"Relu\",\"inputs\":[\"t2:0\"]," F4 "},"
    "{\"name\":\"t_out\",\"type\":\"NetOutput\",\"inputs\":[\"t_relu:0\"],\"input_descs\":[{\"attrs\":{\"_parent_node_index\":0}}]}"
    "]},"
    "{\"name\":\"else\",\"parent\":\"if\",\"nodes\":["
    "{\"name\":\"e1\",\"type\":\"Data\",\"attrs\":{\"_parent_node_index\":1}," F4 "},"
    "{\"name\":\"e2\",\"type\":\"Data\",\"attrs\":{\"_parent_node_index\":2}," F4 "},"
    "{\"name\":\"e_relu\",\"type\":\"Relu\",\"inputs\":[\"e1:0\"]," F4 "},"
    "{\"name\":\"e_assign\",\"type\":\"Assign\",\"inputs\":[\"e2:0\",\"e1:0\"]," F4 "},"
    "{\"name\":\"e_out\",\"type\":\"NetOutput\",\"inputs\":[\"e_relu:0\"],\"input_descs\":[{\"attrs\":{\"_parent_node_index\":0}}]}"
    "]},"
    "{\"name\":\"f\",\"parent\":\"call\",\"nodes\":["
    "{\"name\":\"f_d\",\"type\":\"Data\",\"attrs\":{\"_parent_node_index\":0}," F4 "},"
    "{\"name\":\"f_c\",\"type\":\"Const\"," F4 "},"
    "{\"name\":\"f_assign\",\"type\":\"Assign\",\"inputs\":[\"f_d:0\",\"f_c:0\"]," F4 "},"
    "{\"name\":\"f_out\",\"type\":\"NetOutput\",\"inputs\":[\"f_assign:0\"],\"input_descs\":[{\"attrs\":{\"_parent_node_index\":0}}]}"
    "]},"
    "{\"name\":\"cond\",\"parent\":\"loop\",\"nodes\":["
    "{\"name\":\"c_d\",\"type\":\"Data\",\"attrs\":{\"_parent_node_index\":0}," F4 "},"
    "{\"name\":\"c_out\",\"type\":\"NetOutput\",\"inputs\":[\"c_d:0\"]}"
    "]},"
    "{\"name\":\"body\",\"parent\":\"loop\",\"nodes\":["
    "{\"name\":\"b_d\",\"type\":\"Data\",\"attrs\":{\"_parent_node_index\":0}," F4 "},"
    "{\"name\":\"b_out\",\"type\":\"NetOutput\",\"inputs\":[\"b_d:0\"],\"input_descs\":[{\"attrs\":{\"_parent_node_index\":0}}]}"
    "]}]}";

static gm_rw_out_type out_t(const gm_rw_state *st, const gm_model *m, const char *n, uint32_t k)
{
    return gm_rw_output_type(st, find(m, n), k);
}

static gm_rw_in_type in_t(const gm_rw_state *st, const gm_model *m, const char *n, uint32_t i)
{
    return gm_rw_input_type(st, find(m, n), i);
}

static void test_output_types(void **state)
{
    (void)state;
    gm_model *m = read_json(k_types_graph);
    gm_rw_state *st = state_of(m, false);
    assert_int_equal(out_t(st, m, "var", 0), GM_RW_OUT_WRITEABLE);    /* variable */
    assert_int_equal(out_t(st, m, "rd", 0), GM_RW_OUT_WRITEABLE);     /* RefData: var-like */
    assert_int_equal(out_t(st, m, "x", 0), GM_RW_OUT_WRITEABLE);      /* root Data */
    assert_int_equal(out_t(st, m, "c", 0), GM_RW_OUT_READ_ONLY_CONST);
    assert_int_equal(out_t(st, m, "assign", 0), GM_RW_OUT_WRITEABLE); /* ref output (table names) */
    /* Explicit IR names: output "b" pairs with input "b"; output "z" pairs with nothing. */
    assert_int_equal(out_t(st, m, "named", 1), GM_RW_OUT_WRITEABLE);
    assert_int_equal(out_t(st, m, "named", 0), GM_RW_OUT_SOFT_READ);
    /* §9.4-3: two in-anchors of one node make the output ReadOnly. */
    assert_int_equal(out_t(st, m, "relu", 0), GM_RW_OUT_READ_ONLY);
    assert_int_equal(out_t(st, m, "twice", 0), GM_RW_OUT_SOFT_READ);
    /* Subgraph Data: the parent's producer (relu is ReadOnly, c is ReadOnlyConst). */
    assert_int_equal(out_t(st, m, "t1", 0), GM_RW_OUT_READ_ONLY);
    assert_int_equal(out_t(st, m, "e2", 0), GM_RW_OUT_READ_ONLY_CONST);
    assert_int_equal(out_t(st, m, "f_d", 0), GM_RW_OUT_WRITEABLE);
    /* If: two subgraphs, inner types ignored; two consumer nodes make it ReadOnly. */
    assert_int_equal(out_t(st, m, "if", 0), GM_RW_OUT_READ_ONLY);
    /* PartitionedCall: one NetOutput, which recorded the Assign's Writeable. */
    assert_int_equal(out_t(st, m, "call", 0), GM_RW_OUT_WRITEABLE);
    assert_int_equal(out_t(st, m, "loop", 0), GM_RW_OUT_SOFT_READ); /* While: always */
    assert_int_equal(gm_rw_single_output_type(st, find(m, "sig"), 5), GM_RW_OUT_INVALID); /* no such output */

    /* A subgraph Data whose parent index points nowhere is Invalid. */
    gm_rw_state_free(st);
    assert_int_equal(gm_attr_set_int(gm_node_attrs(find(m, "t1")), "_parent_node_index", -1), GM_OK);
    st = state_of(m, false);
    assert_int_equal(out_t(st, m, "t1", 0), GM_RW_OUT_INVALID);
    gm_rw_state_free(st);
    gm_model_free(m);
}

static void test_input_types(void **state)
{
    (void)state;
    gm_model *m = read_json(k_types_graph);
    gm_rw_state *st = state_of(m, false);
    assert_int_equal(in_t(st, m, "relu", 0), GM_RW_IN_READ_ONLY);
    assert_int_equal(in_t(st, m, "assign", 0), GM_RW_IN_WRITEABLE);
    assert_int_equal(in_t(st, m, "assign", 1), GM_RW_IN_READ_ONLY);
    assert_int_equal(in_t(st, m, "named", 1), GM_RW_IN_WRITEABLE);
    assert_int_equal(in_t(st, m, "named", 0), GM_RW_IN_READ_ONLY);
    assert_int_equal(in_t(st, m, "fifo", 0), GM_RW_IN_SCOPE_WRITEABLE); /* _special_input_size */
    assert_int_equal(in_t(st, m, "ar", 0), GM_RW_IN_SCOPE_WRITEABLE);
    assert_int_equal(in_t(st, m, "ar_off", 0), GM_RW_IN_READ_ONLY); /* the attribute overrides the table */
    assert_int_equal(in_t(st, m, "loop", 0), GM_RW_IN_SCOPE_WRITEABLE);
    /* If inputs: the branch Data types merged. i0: no Data reads it; i1: ScopeWriteable (then) +
     * ReadOnly (else); i2: ReadOnly (then) + Writeable (else). */
    assert_int_equal(in_t(st, m, "if", 0), GM_RW_IN_READ_ONLY);
    assert_int_equal(in_t(st, m, "if", 1), GM_RW_IN_SCOPE_WRITEABLE);
    assert_int_equal(in_t(st, m, "if", 2), GM_RW_IN_WRITEABLE);
    assert_int_equal(in_t(st, m, "call", 0), GM_RW_IN_WRITEABLE);
    /* MarkRefRelations: refs by name only; the check does not set `reference`. */
    assert_int_equal(gm_rw_ref_output_of_input(st, find(m, "named"), 1), 1);
    assert_int_equal(gm_rw_ref_input_of_output(st, find(m, "named"), 1), 1);
    assert_int_equal(gm_rw_ref_output_of_input(st, find(m, "named"), 0), -1);
    assert_false(gm_attrs_get_bool(*gm_node_attrs(find(m, "named")), "reference", false));
    gm_rw_state_free(st);
    st = state_of(m, true);
    assert_true(gm_attrs_get_bool(*gm_node_attrs(find(m, "named")), "reference", false));
    assert_true(gm_attrs_get_bool(*gm_node_attrs(find(m, "assign")), "reference", false));
    assert_false(gm_attr_find(*gm_node_attrs(find(m, "relu")), "reference") != NULL);
    gm_rw_state_free(st);
    gm_model_free(m);
}

static void test_need_check_skip_and_judge(void **state)
{
    (void)state;
    gm_model *m = read_json(k_types_graph);
    gm_rw_state *st = state_of(m, false);
    assert_true(gm_rw_need_check_skip(st, GM_RW_OUT_READ_ONLY, find(m, "relu"), 0));
    assert_false(gm_rw_need_check_skip(st, GM_RW_OUT_READ_ONLY_CONST, find(m, "c"), 0));
    assert_false(gm_rw_need_check_skip(st, GM_RW_OUT_SOFT_READ, find(m, "sig"), 0));
    /* var is read by assign and call: more than one reader on the chain. */
    assert_false(gm_rw_need_check_skip(st, GM_RW_OUT_WRITEABLE, find(m, "var"), 0));
    /* assign's ref chain leads to var, which has two readers. */
    assert_false(gm_rw_need_check_skip(st, GM_RW_OUT_WRITEABLE, find(m, "assign"), 0));
    /* A subgraph Data ends the walk with false; f_assign (single reader) leads to f_d. */
    assert_false(gm_rw_need_check_skip(st, GM_RW_OUT_WRITEABLE, find(m, "f_assign"), 0));
    /* named:1 leads through input "b" to c, a non-ref owner with... several readers. */
    assert_false(gm_rw_need_check_skip(st, GM_RW_OUT_WRITEABLE, find(m, "named"), 1));
    /* rd (a RefData, so a Data type) has no reader at all and no parent index: a root input. */
    assert_true(gm_rw_need_check_skip(st, GM_RW_OUT_WRITEABLE, find(m, "rd"), 0));

    /* Judge: PartitionedCall always; If output read by two ReadOnly Relus: true; a parent
     * index beyond the outputs: true. */
    assert_true(gm_rw_judge_optimizable_by_parent(st, find(m, "call"), 0));
    assert_true(gm_rw_judge_optimizable_by_parent(st, find(m, "if"), 0));
    assert_true(gm_rw_judge_optimizable_by_parent(st, find(m, "if"), 7));
    gm_rw_state_free(st);
    gm_model_free(m);
}

/* ---- every rw_*.json through the pass directly ------------------------------------------------- */

static void test_rw_scenario_files(void **state)
{
    (void)state;
    size_t n = 0;
    char **names = scn_list_files(GM_SCENARIO_DIR, "rw_", &n);
    if (n < 20) fail_msg("expected the rw_*.json scenarios, found %zu", n);
    size_t failed = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = 0;
        char *text = scn_slurp(GM_SCENARIO_DIR, names[i], &len);
        assert_non_null(text);
        scn_buf out = {0};
        size_t f = scn_check_text(names[i], text, len, run_rw_direct, NULL, &out);
        if (f) failed++;
        fputs(scn_buf_str(&out), stderr);
        scn_buf_free(&out);
        free(text);
    }
    scn_free_list(names, n);
    print_message("rw scenarios: %zu run, %zu failed\n", n, failed);
    if (failed) fail_msg("%zu of %zu rw scenarios failed", failed, n);
}

/* ---- what the scenario files cannot state ------------------------------------------------------- */

static const gm_inserted_node *report_entry(const gm_pass_report *rep, const char *node)
{
    for (size_t i = 0; i < rep->n_nodes; i++)
        if (!strcmp(rep->nodes[i].node, node)) return &rep->nodes[i];
    fail_msg("report has no inserted node '%s'", node);
    return NULL;
}

static void test_rw2_split_details(void **state)
{
    (void)state;
    gm_pass_report rep;
    gm_model *m = run_scenario("rw_02_identity_split.json", &rep);
    assert_null(gm_model_find_node(m, "identity"));
    gm_node *id = find(m, "var_Identity0");
    assert_string_equal(producer_name(m, "allreduce", 0), "var_Identity0");
    assert_string_equal(producer_name(m, "var_Identity0", 0), "var");
    assert_string_equal(producer_name(m, "cast1", 0), "var");
    assert_string_equal(producer_name(m, "if", 0), "var");
    assert_true(has_ctrl_in(id, "const1"));
    assert_true(has_ctrl_in(find(m, "allreduce"), "const1"));
    const gm_inserted_node *r = report_entry(&rep, "var_Identity0");
    assert_string_equal(r->reason, "SplitIdentity -> ScopeWriteable");
    assert_string_equal(r->anchor_node, "allreduce");
    assert_int_equal(r->index, 0);
    assert_true(r->before);
    assert_int_equal(r->pass, GM_PASS_RW_CONFLICT);
    assert_int_equal(rep.inserted[GM_PASS_RW_CONFLICT], 1);
    gm_pass_report_free(&rep);
    gm_model_free(m);
}

static void test_split_control_edges(void **state)
{
    (void)state;
    gm_pass_report rep;
    gm_model *m = run_scenario("rw_split_identity_control.json", &rep);
    /* id1: dissolved in the split; its readers inherit its ctrl input, relu1 its ctrl output. */
    assert_null(gm_model_find_node(m, "id1"));
    assert_string_equal(producer_name(m, "cast1", 0), "relu1");
    assert_string_equal(producer_name(m, "sig1", 0), "relu1");
    assert_true(has_ctrl_in(find(m, "cast1"), "c1"));
    assert_true(has_ctrl_in(find(m, "sig1"), "c1"));
    assert_true(has_ctrl_in(find(m, "after1"), "relu1"));
    /* id2: the allreduce's copy keeps the allreduce's ctrl input; id2 then goes, its ctrl
     * input handed to its successor. */
    assert_null(gm_model_find_node(m, "id2"));
    gm_node *cp = find(m, "relu2_Identity0");
    assert_string_equal(producer_name(m, "allreduce2", 0), "relu2_Identity0");
    assert_string_equal(producer_name(m, "relu2_Identity0", 0), "relu2");
    assert_string_equal(producer_name(m, "cast2", 0), "relu2");
    assert_true(has_ctrl_in(cp, "c3"));
    assert_true(has_ctrl_in(cp, "c2"));
    assert_true(has_ctrl_in(find(m, "cast2"), "c2"));
    gm_pass_report_free(&rep);
    gm_model_free(m);
}

static void test_remove_no_use_details(void **state)
{
    (void)state;
    gm_pass_report rep;
    gm_model *m = run_scenario("rw_remove_no_use_identity.json", &rep);
    assert_null(gm_model_find_node(m, "id_a"));
    assert_string_equal(producer_name(m, "relu_a", 0), "var");
    static const char *const kept[] = {"id_b", "id_c", "id_d", "id_e", "id_g"};
    for (size_t i = 0; i < sizeof kept / sizeof *kept; i++) assert_non_null(gm_model_find_node(m, kept[i]));
    /* id_c was split first: each allreduce got a copy named after id_c's producer. */
    assert_string_equal(producer_name(m, "allreduce_c1", 0), "x_Identity0");
    assert_string_equal(producer_name(m, "allreduce_c2", 0), "x_Identity1");
    assert_string_equal(producer_name(m, "x_Identity0", 0), "id_c");
    gm_pass_report_free(&rep);
    gm_model_free(m);
}

/* An Identity that orders other nodes through control edges stays (our reading of
 * IsIdentityUsefulForRWControl). */
static void test_identity_with_control_output_kept(void **state)
{
    (void)state;
    gm_model *m = read_json("{\"graphmem\":1,\"graphs\":[{\"name\":\"root\",\"nodes\":["
                            "{\"name\":\"var\",\"type\":\"Variable\"," F4 "},"
                            "{\"name\":\"id\",\"type\":\"Identity\",\"inputs\":[\"var:0\"]," F4 "},"
                            "{\"name\":\"relu\",\"type\":\"Relu\",\"inputs\":[\"id:0\"]," F4 "},"
                            "{\"name\":\"c\",\"type\":\"Const\"," F4 "},"
                            "{\"name\":\"assign\",\"type\":\"Assign\",\"inputs\":[\"var:0\",\"c:0\"],"
                            "\"control_inputs\":[\"id\"]," F4 "}]}]}");
    gm_pass_report rep;
    gm_error err;
    assert_int_equal(run_pass(m, &rep, &err), GM_OK);
    assert_non_null(gm_model_find_node(m, "id"));
    assert_int_equal(rep.n_nodes, 0);
    gm_pass_report_free(&rep);
    gm_model_free(m);
}

static void test_identity_naming_and_descs(void **state)
{
    (void)state;
    gm_pass_report rep;
    gm_model *m = run_scenario("rw_identity_naming.json", &rep);
    assert_string_equal(producer_name(m, "allreduce1", 0), "const1_Identity0");
    assert_string_equal(producer_name(m, "allreduce2", 0), "const1_Identity1");
    /* c2_Identity2 is a user node: the third copy falls back to a unique name. */
    assert_string_equal(producer_name(m, "allreduce3", 0), "c2_Identity2_1");
    assert_string_equal(gm_node_type(find(m, "c2_Identity2")), "Relu");
    gm_node *id = find(m, "const1_Identity0");
    assert_string_equal(gm_node_type(id), "Identity");
    assert_string_equal(gm_node_input_name(id, 0), "x");
    assert_string_equal(gm_node_output_name(id, 0), "y");
    const gm_attr *attrs = *gm_node_attrs(id);
    assert_string_equal(gm_attrs_get_string(attrs, "_batch_label"), "batch_1");
    assert_true(gm_attrs_get_bool(attrs, "_cannot_be_deleted", false));
    assert_null(gm_attrs_get_string(*gm_node_attrs(find(m, "c2_Identity2_1")), "_batch_label"));
    /* Both descs are the producer's desc (dtype, shape) without its desc attrs. */
    for (int side = 0; side < 2; side++) {
        gm_tensor_desc *d = side ? gm_node_output_desc(id, 0) : gm_node_input_desc(id, 0);
        assert_int_equal(gm_desc_dtype(d), GM_DT_FLOAT16);
        assert_int_equal(gm_desc_ndims(d), 2);
        assert_int_equal(gm_desc_dims(d)[1], 3);
        assert_int_equal(gm_attr_count(*gm_desc_attrs(d)), 0);
    }
    /* The producer keeps its own desc attrs. */
    assert_non_null(gm_attr_find(*gm_desc_attrs(gm_node_output_desc(find(m, "const1"), 0)), "ref_var_src_var_name"));
    assert_string_equal(report_entry(&rep, "const1_Identity0")->reason, "ReadOnlyConst -> ScopeWriteable");
    gm_pass_report_free(&rep);
    gm_model_free(m);
}

static void test_rw15_drops_ref_var_src_var_name(void **state)
{
    (void)state;
    gm_pass_report rep;
    gm_model *m = run_scenario("rw_15_mul_ref_to_scope_write.json", &rep);
    gm_node *id = find(m, "mul_ref_Identity0");
    assert_null(gm_attr_find(*gm_desc_attrs(gm_node_input_desc(id, 0)), "ref_var_src_var_name"));
    assert_null(gm_attr_find(*gm_desc_attrs(gm_node_output_desc(id, 0)), "ref_var_src_var_name"));
    assert_true(gm_attrs_get_bool(*gm_node_attrs(find(m, "mul_ref")), "reference", false));
    assert_string_equal(report_entry(&rep, "mul_ref_Identity0")->reason, "Writeable -> ScopeWriteable");
    gm_pass_report_free(&rep);
    gm_model_free(m);
}

static void test_rw16_clears_reuse_input(void **state)
{
    (void)state;
    gm_pass_report rep;
    gm_model *m = run_scenario("rw_16_identity_clears_reuse_input.json", &rep);
    gm_node *id = find(m, "source_Identity0");
    int64_t idx = 99;
    assert_false(gm_desc_reuse_input(gm_node_input_desc(id, 0), &idx));
    assert_int_equal(idx, 0);
    idx = 99;
    assert_false(gm_desc_reuse_input(gm_node_output_desc(id, 0), &idx));
    assert_int_equal(idx, 0);
    /* The producer's own desc is untouched. */
    assert_true(gm_desc_reuse_input(gm_node_output_desc(find(m, "source"), 0), &idx));
    assert_int_equal(idx, 2);
    gm_pass_report_free(&rep);
    gm_model_free(m);
}

static void test_netoutput_identity_details(void **state)
{
    (void)state;
    gm_pass_report rep;
    gm_model *m = run_scenario("rw_08_subgraphs.json", &rep);
    gm_node *id = find(m, "else_assign_Identity0");
    assert_string_equal(gm_graph_name(gm_node_graph(id)), "else_branch");
    assert_string_equal(producer_name(m, "else_out", 0), "else_assign_Identity0");
    const gm_inserted_node *r = report_entry(&rep, "else_assign_Identity0");
    assert_string_equal(r->reason, "Writeable -> subgraph NetOutput");
    assert_string_equal(r->graph, "else_branch");
    assert_non_null(gm_model_find_node(m, "id1"));
    gm_pass_report_free(&rep);
    gm_model_free(m);
}

/* A root Data read through two ScopeWriteable inputs of one node: its ref chain is a root
 * input read by one node, so (as for a ReadOnly buffer) only the first edge gets a copy. This
 * pins our reading of NeedCheckSkipIdentiy (readers counted as nodes). */
static void test_writeable_last_edge_skip(void **state)
{
    (void)state;
    gm_model *m = read_json("{\"graphmem\":1,\"graphs\":[{\"name\":\"root\",\"nodes\":["
                            "{\"name\":\"x\",\"type\":\"Data\",\"attrs\":{\"index\":0}," F4 "},"
                            "{\"name\":\"ar\",\"type\":\"HcomAllReduce\",\"inputs\":[\"x:0\",\"x:0\"],"
                            "\"attrs\":{\"_input_mutable\":true}," F4 "},"
                            "{\"name\":\"v\",\"type\":\"Variable\"," F4 "},"
                            "{\"name\":\"ar2\",\"type\":\"HcomAllReduce\",\"inputs\":[\"v:0\"],"
                            "\"attrs\":{\"_input_mutable\":true}," F4 "},"
                            "{\"name\":\"y\",\"type\":\"Data\",\"attrs\":{\"index\":1}," F4 "},"
                            "{\"name\":\"ar3\",\"type\":\"HcomAllReduce\",\"inputs\":[\"y:0\"],"
                            "\"attrs\":{\"_input_mutable\":true}," F4 "},"
                            "{\"name\":\"r3\",\"type\":\"Relu\",\"inputs\":[\"y:0\"]," F4 "}]}]}");
    gm_pass_report rep;
    gm_error err;
    assert_int_equal(run_pass(m, &rep, &err), GM_OK);
    assert_string_equal(producer_name(m, "ar", 0), "x_Identity0");
    assert_string_equal(producer_name(m, "ar", 1), "x");
    assert_string_equal(producer_name(m, "ar2", 0), "v"); /* a variable read only by ar2 */
    /* y is read by two nodes: no skipping, ar3 gets its copy. */
    assert_string_equal(producer_name(m, "ar3", 0), "y_Identity1");
    assert_int_equal(rep.n_nodes, 2);
    gm_pass_report_free(&rep);
    gm_model_free(m);
}

static void test_log_lines(void **state)
{
    (void)state;
    FILE *f = tmpfile();
    assert_non_null(f);
    gm_log_level old = gm_log_get_level();
    gm_log_set_stream(f);
    gm_log_set_level(GM_LOG_INFO);
    gm_pass_report rep;
    gm_model *m = run_scenario("rw_17_const_to_scope_write.json", &rep);
    gm_log_set_stream(NULL);
    gm_log_set_level(old);
    fflush(f);
    rewind(f);
    char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    if (!strstr(buf, "Start to handle memory read/write conflict of root graph root."))
        fail_msg("no start line:\n%s", buf);
    /* The Const's output is ReadOnlyConst; GE's shifted table prints it as ReadOnly. */
    if (!strstr(buf, "insert identity: const_out_0 [ReadOnly] -> allreduce_in_0 [ScopeWriteable]"))
        fail_msg("no insert line with the shifted name:\n%s", buf);
    if (!strstr(buf, "[MemConflict][INSERT][NODE] const_Identity0 before allreduce_in_0"))
        fail_msg("no INSERT line:\n%s", buf);
    gm_pass_report_free(&rep);
    gm_model_free(m);
}

/* ---- CheckRWConflict --------------------------------------------------------------------------- */

static void test_check_rw6(void **state)
{
    (void)state;
    gm_model *m = read_scenario_graph("rw_01_readonly_scope_write.json");
    size_t before = gm_model_node_count(m);
    bool has = false;
    gm_error err;
    gm_error_clear(&err);
    assert_int_equal(gm_rw_check_conflict(m, &has, &err), GM_OK);
    assert_false(has);
    assert_int_equal(gm_model_node_count(m), before); /* the check never edits */
    gm_model_free(m);
}

static const char k_rw7_graph[] =
    "{\"graphmem\":1,\"graphs\":["
    "{\"name\":\"root\",\"nodes\":["
    "{\"name\":\"var\",\"type\":\"Variable\"," F4 "},"
    "{\"name\":\"const1\",\"type\":\"Const\"," F4 "},"
    "{\"name\":\"pc\",\"type\":\"PartitionedCall\",\"inputs\":[\"var:0\",\"const1:0\"],\"subgraphs\":[\"sub\"]," F4 "},"
    "{\"name\":\"out\",\"type\":\"NetOutput\",\"inputs\":[\"pc:0\"]}]},"
    "{\"name\":\"sub\",\"parent\":\"pc\",\"nodes\":["
    "{\"name\":\"data0\",\"type\":\"Data\",\"attrs\":{\"_parent_node_index\":0}," F4 "},"
    "{\"name\":\"data1\",\"type\":\"Data\",\"attrs\":{\"_parent_node_index\":1}," F4 "},"
    "{\"name\":\"assign\",\"type\":\"Assign\",\"inputs\":[\"data0:0\",\"data1:0\"]," F4 "},"
    "{\"name\":\"sub_out\",\"type\":\"NetOutput\",\"inputs\":[\"assign:0\"],"
    "\"input_descs\":[{\"attrs\":{\"_parent_node_index\":0}}]}]}]}";

static void test_check_rw7(void **state)
{
    (void)state;
    gm_model *m = read_json(k_rw7_graph);
    bool has = false;
    gm_error err;
    gm_error_clear(&err);
    assert_int_equal(gm_rw_check_conflict(m, &has, &err), GM_OK);
    assert_false(has);
    assert_false(gm_attrs_get_bool(*gm_node_attrs(find(m, "assign")), "reference", false));
    /* data0 no longer names a parent input: its type is Invalid, a wrong graph. */
    assert_int_equal(gm_attr_set_int(gm_node_attrs(find(m, "data0")), "_parent_node_index", -1), GM_OK);
    assert_int_equal(gm_rw_check_conflict(m, &has, &err), GM_OK);
    assert_true(has);
    gm_model_free(m);
}

static void test_check_quirks(void **state)
{
    (void)state;
    /* No subgraph: returns at once, *has_conflict untouched either way. */
    gm_model *m = read_json("{\"graphmem\":1,\"graphs\":[{\"name\":\"root\",\"nodes\":["
                            "{\"name\":\"c\",\"type\":\"Const\"," F4 "},"
                            "{\"name\":\"ar\",\"type\":\"HcomAllReduce\",\"inputs\":[\"c:0\"]," F4 "}]}]}");
    bool has = true;
    gm_error err;
    assert_int_equal(gm_rw_check_conflict(m, &has, &err), GM_OK);
    assert_true(has);
    gm_model_free(m);

    /* RW7's wrong graph, behind a node without data consumers (the unused Const `first`,
     * sorted first): the scan stops there and reports nothing (§9.4-2). */
    char *text = strdup(k_rw7_graph);
    assert_non_null(text);
    const char *anchor = "{\"name\":\"var\"";
    char *at = strstr(text, anchor);
    assert_non_null(at);
    const char *extra = "{\"name\":\"first\",\"type\":\"Const\"," F4 "},";
    size_t need = strlen(text) + strlen(extra) + 1;
    char *t2 = malloc(need);
    assert_non_null(t2);
    snprintf(t2, need, "%.*s%s%s", (int)(at - text), text, extra, at);
    m = read_json(t2);
    assert_int_equal(gm_attr_set_int(gm_node_attrs(find(m, "data0")), "_parent_node_index", -1), GM_OK);
    has = false;
    assert_int_equal(gm_rw_check_conflict(m, &has, &err), GM_OK);
    assert_false(has);
    gm_model_free(m);
    free(t2);
    free(text);
}

/* ---- failures ----------------------------------------------------------------------------------- */

/* Two Data nodes of one subgraph reading the same parent input: GE's pass fails, which GE
 * only warns about; the check reports the error. */
static void test_duplicate_parent_index(void **state)
{
    (void)state;
    static const char text[] =
        "{\"graphmem\":1,\"graphs\":["
        "{\"name\":\"root\",\"nodes\":["
        "{\"name\":\"c\",\"type\":\"Const\"," F4 "},"
        "{\"name\":\"ar\",\"type\":\"HcomAllReduce\",\"inputs\":[\"c:0\"],\"attrs\":{\"_input_mutable\":true}," F4 "},"
        "{\"name\":\"pc\",\"type\":\"PartitionedCall\",\"inputs\":[\"c:0\"],\"subgraphs\":[\"f\"]," F4 "}]},"
        "{\"name\":\"f\",\"parent\":\"pc\",\"nodes\":["
        "{\"name\":\"d0\",\"type\":\"Data\",\"attrs\":{\"_parent_node_index\":0}," F4 "},"
        "{\"name\":\"d1\",\"type\":\"Data\",\"attrs\":{\"_parent_node_index\":0}," F4 "},"
        "{\"name\":\"f_out\",\"type\":\"NetOutput\",\"inputs\":[\"d0:0\"],"
        "\"input_descs\":[{\"attrs\":{\"_parent_node_index\":0}}]}]}]}";
    gm_model *m = read_json(text);
    size_t before = gm_model_node_count(m);
    gm_pass_report rep;
    gm_error err;
    gm_error_clear(&err);
    gm_log_level old = gm_log_get_level();
    gm_log_set_level(GM_LOG_ERROR); /* the warning is expected */
    assert_int_equal(run_pass(m, &rep, &err), GM_OK);
    gm_log_set_level(old);
    assert_int_equal(err.code, GM_OK);
    assert_int_equal(gm_model_node_count(m), before);
    assert_int_equal(rep.n_nodes, 0);
    gm_pass_report_free(&rep);
    bool has = false;
    assert_int_equal(gm_rw_check_conflict(m, &has, &err), GM_ERR_INPUT);
    assert_non_null(strstr(err.message, "_parent_node_index must be unique"));
    assert_non_null(strstr(err.message, "d1"));
    gm_model_free(m);
}

/* Every allocation failure gives a clean GM_ERR_NOMEM (no crash, no leak: ASan checks). */
static void test_out_of_memory(void **state)
{
    (void)state;
    static const char *const files[] = {"rw_judge_if_branches.json", "rw_02_identity_split.json",
                                        "rw_split_identity_control.json"};
    for (size_t fi = 0; fi < sizeof files / sizeof *files; fi++) {
        bool done = false;
        for (long k = 0; k < 100000 && !done; k++) {
            gm_model *m = read_scenario_graph(files[fi]);
            gm_pass_report rep;
            gm_error err;
            gm_error_clear(&err);
            gm_alloc_fail_after(k);
            gm_status st = run_pass(m, &rep, &err);
            gm_alloc_fail_after(-1);
            if (st == GM_OK) {
                done = true;
                /* The pass allocates (state, names, nodes): success at once means the
                 * injection never reached it and the test proved nothing. */
                if (k < 5) fail_msg("%s: succeeded with allocation %ld failing", files[fi], k);
            } else if (st != GM_ERR_NOMEM) {
                fail_msg("%s: allocation %ld failing gave %s: %s", files[fi], k, gm_status_name(st), err.message);
            }
            gm_pass_report_free(&rep);
            gm_model_free(m);
        }
        if (!done) fail_msg("%s: never succeeded", files[fi]);
    }
}

/* The same input gives the same result: node names and order after the run. */
static void test_deterministic(void **state)
{
    (void)state;
    char first[8192] = "";
    for (int run = 0; run < 2; run++) {
        gm_pass_report rep;
        gm_model *m = run_scenario("rw_remove_no_use_identity.json", &rep);
        char buf[8192];
        size_t len = 0;
        buf[0] = '\0';
        for (size_t i = 0; i < gm_model_node_count(m); i++)
            len += (size_t)snprintf(buf + len, sizeof buf - len, "%s ", gm_node_name(gm_model_node_at(m, i)));
        if (run == 0)
            strcpy(first, buf);
        else
            assert_string_equal(first, buf);
        gm_pass_report_free(&rep);
        gm_model_free(m);
    }
}

int main(void)
{
    (void)scn_run_real; /* the shared harness's runner: this program calls the pass directly */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decision_matrix),
        cmocka_unit_test(test_merge_table),
        cmocka_unit_test(test_type_names_and_log_quirk),
        cmocka_unit_test(test_output_types),
        cmocka_unit_test(test_input_types),
        cmocka_unit_test(test_need_check_skip_and_judge),
        cmocka_unit_test(test_rw_scenario_files),
        cmocka_unit_test(test_rw2_split_details),
        cmocka_unit_test(test_split_control_edges),
        cmocka_unit_test(test_remove_no_use_details),
        cmocka_unit_test(test_identity_with_control_output_kept),
        cmocka_unit_test(test_identity_naming_and_descs),
        cmocka_unit_test(test_rw15_drops_ref_var_src_var_name),
        cmocka_unit_test(test_rw16_clears_reuse_input),
        cmocka_unit_test(test_netoutput_identity_details),
        cmocka_unit_test(test_writeable_last_edge_skip),
        cmocka_unit_test(test_log_lines),
        cmocka_unit_test(test_check_rw6),
        cmocka_unit_test(test_check_rw7),
        cmocka_unit_test(test_check_quirks),
        cmocka_unit_test(test_duplicate_parent_index),
        cmocka_unit_test(test_out_of_memory),
        cmocka_unit_test(test_deterministic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
