/*
 * test_ge_text.c — GE text dumps: the generic protobuf text-format parser and printer
 * (src/io/pbtext.c) and the GE reader and writer (src/io/ge_read.c, ge_write.c).
 *
 * Covered: the hand-written dumps of tests/data/ge (every AttrDef kind, streams, control
 * edges, offsets; If/While subgraphs; a fusion-stage-shaped dump) read value by value; the
 * parser on every scalar type, list and map form, on a proto2 schema (ONNX) as well as
 * GE's proto3 one, and print -> parse -> print stability; JSON -> GE -> JSON keeping
 * everything memory needs, compared modulo the format's documented losses (see
 * normalize()); every error the parser and reader must report with its line:column; and
 * random bytes, truncations and allocation failures giving clean errors without leaks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "io_test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ge_ir.pb-c.h"
#include "graphmem/io.h"
#include "io/pbtext.h"
#include "ir/ir.h"
#include "onnx.pb-c.h"
#include "util/alloc.h"

/* ---- helpers ------------------------------------------------------------------------------ */

static char *read_data(const char *rel, size_t *len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", GM_TEST_DATA_DIR, rel);
    char *data = NULL;
    size_t n = 0;
    gm_error err;
    gm_error_clear(&err);
    gm_status st = gm_read_file(path, &data, &n, &err);
    if (st != GM_OK) print_message("%s\n", err.message);
    assert_int_equal(st, GM_OK);
    if (len) *len = n;
    return data;
}

static gm_model *ge_ok(const char *text, size_t len, const char *source)
{
    gm_model *m = NULL;
    gm_error err;
    gm_error_clear(&err);
    gm_status st = gm_model_read_ge_text(text, len, source, &m, &err);
    if (st != GM_OK) print_message("unexpected error: %s\n", err.message);
    assert_int_equal(st, GM_OK);
    assert_non_null(m);
    return m;
}

static gm_model *ge_file(const char *rel)
{
    size_t len;
    char *text = read_data(rel, &len);
    gm_model *m = ge_ok(text, len, rel);
    free(text);
    return m;
}

static char *ge_write_ok(const gm_model *m)
{
    char *text = NULL;
    size_t len = 0;
    gm_error err;
    gm_error_clear(&err);
    gm_status st = gm_model_write_ge_text(m, &text, &len, &err);
    if (st != GM_OK) print_message("unexpected error: %s\n", err.message);
    assert_int_equal(st, GM_OK);
    assert_non_null(text);
    assert_int_equal(len, strlen(text));
    return text;
}


static const gm_attr *attr_of(const gm_attr *list, const char *name)
{
    const gm_attr *a = gm_attr_find(list, name);
    if (!a) print_message("no attribute '%s'\n", name);
    assert_non_null(a);
    return a;
}

static gm_node *node(const gm_model *m, const char *name)
{
    gm_node *n = gm_model_find_node(m, name);
    if (!n) print_message("no node '%s'\n", name);
    assert_non_null(n);
    return n;
}

static void check_shape(const gm_tensor_desc *d, int32_t nd, const int64_t *dims)
{
    assert_int_equal(gm_desc_ndims(d), nd);
    for (int32_t i = 0; i < nd; i++) assert_int_equal(gm_desc_dims(d)[i], dims[i]);
}

/* Reading must fail with GM_ERR_INPUT, no model, a message starting with "t.txt" and holding
 * every needle (the first is usually the line:column). */
static void expect_error_len(const char *text, size_t len, const char *n1, const char *n2)
{
    gm_model *m = NULL;
    gm_error err;
    gm_error_clear(&err);
    gm_status st = gm_model_read_ge_text(text, len, "t.txt", &m, &err);
    bool ok = st == GM_ERR_INPUT && err.code == GM_ERR_INPUT && strncmp(err.message, "t.txt", 5) == 0 &&
              (!n1 || strstr(err.message, n1)) && (!n2 || strstr(err.message, n2));
    if (!ok) print_message("input:\n%.*s\nstatus %d, message: %s\n", (int)len, text, (int)st, err.message);
    assert_true(ok);
    assert_null(m);
}

static void expect_error(const char *text, const char *n1, const char *n2)
{
    expect_error_len(text, strlen(text), n1, n2);
}

/* ---- the hand-written dumps --------------------------------------------------------------- */

static void test_small_all_kinds(void **state)
{
    (void)state;
    gm_model *m = ge_file("ge/small_all_kinds.txt");
    assert_string_equal(gm_model_name(m), "small");
    assert_int_equal(gm_model_graph_count(m), 1);
    assert_int_equal(gm_model_node_count(m), 6);
    /* Options: the string model attrs under ge.*; memory_size and soc_version are not. */
    assert_int_equal(gm_model_option_count(m), 2);
    assert_string_equal(gm_model_option(m, "ge.exec.memoryOptimizationPolicy"), "MemoryPriority");
    assert_string_equal(gm_model_option(m, "ge.featureBaseRefreshable"), "0");
    assert_null(gm_model_option(m, "soc_version"));
    gm_graph *g = gm_model_root(m);
    assert_string_equal(gm_graph_name(g), "main");
    assert_false(gm_attr_bool(attr_of(*gm_graph_attrs(g), "_dynamic_shape_partitioned")));

    gm_node *x = node(m, "x");
    assert_int_equal(gm_node_input_count(x), 0);
    assert_int_equal(gm_node_output_count(x), 1);
    assert_string_equal(gm_node_output_name(x, 0), "y");
    const gm_tensor_desc *d = gm_node_output_desc(x, 0);
    assert_int_equal(gm_desc_dtype(d), GM_DT_FLOAT16);
    check_shape(d, 2, (const int64_t[]){8, 64});
    assert_string_equal(gm_desc_layout(d), "ND");
    assert_true(gm_desc_size_given(d));
    assert_int_equal(gm_desc_size(d), 1024);
    assert_int_equal(gm_attr_int(attr_of(*gm_node_attrs(x), "index")), 0);
    const gm_attr *a = attr_of(*gm_node_attrs(x), "_gm_output_offsets");
    assert_int_equal(gm_attr_list_len(a), 1);
    assert_int_equal(gm_attr_list_int(a, 0), 0);

    /* w: shape from the `[64, 64]` list inside `< ... >`; the size is derived. */
    d = gm_node_output_desc(node(m, "w"), 0);
    check_shape(d, 2, (const int64_t[]){64, 64});
    assert_false(gm_desc_size_given(d));
    assert_int_equal(gm_desc_size(d), 8192);

    gm_node *mm = node(m, "mm");
    assert_int_equal(gm_node_stream(mm), 1);
    assert_int_equal(gm_node_input_count(mm), 2);
    assert_string_equal(gm_node_input_name(mm, 0), "x1");
    assert_string_equal(gm_node_input_name(mm, 1), "x2");
    int32_t idx = -1;
    assert_ptr_equal(gm_node_input(mm, 1, &idx), node(m, "w"));
    assert_int_equal(idx, 0);
    assert_int_equal(gm_desc_mem_type(gm_node_input_desc(mm, 1)), GM_MEM_P2P);
    assert_null(gm_attr_find(*gm_desc_attrs(gm_node_input_desc(mm, 1)), "_gm_memory_type"));
    assert_int_equal(gm_desc_mem_type(gm_node_input_desc(mm, 0)), GM_MEM_HBM);
    assert_string_equal(gm_attrs_get_string(*gm_desc_attrs(gm_node_output_desc(mm, 0)), "ref_var_src_var_name"), "w");

    gm_attr *at = *gm_node_attrs(mm);
    a = attr_of(at, "s_text");
    assert_int_equal(gm_attr_get_kind(a), GM_ATTR_STRING);
    assert_string_equal(gm_attr_string(a, NULL), "hello\tworld and 'more'");
    size_t n;
    a = attr_of(at, "s_bytes"); /* not UTF-8 and holding a NUL: bytes */
    assert_int_equal(gm_attr_get_kind(a), GM_ATTR_BYTES);
    assert_memory_equal(gm_attr_string(a, &n), "\377\000ab", 4);
    assert_int_equal(n, 4);
    assert_int_equal(gm_attr_int(attr_of(at, "i_val")), -42);
    a = attr_of(at, "f_val");
    assert_int_equal(gm_attr_get_kind(a), GM_ATTR_FLOAT);
    assert_true(gm_attr_float(a) == 0.5);
    assert_true(gm_attr_bool(attr_of(at, "b_val")));
    a = attr_of(at, "bt_val");
    assert_int_equal(gm_attr_get_kind(a), GM_ATTR_BYTES);
    assert_memory_equal(gm_attr_string(a, &n), "\001\002\003", 3);
    assert_int_equal(n, 3);
    a = attr_of(at, "dt_val");
    assert_int_equal(gm_attr_get_kind(a), GM_ATTR_INT);
    assert_int_equal(gm_attr_int(a), 7);
    a = attr_of(at, "list_s");
    assert_int_equal(gm_attr_get_kind(a), GM_ATTR_LIST_STRING);
    assert_int_equal(gm_attr_list_len(a), 2);
    assert_string_equal(gm_attr_list_string(a, 1), "b");
    a = attr_of(at, "list_i");
    assert_int_equal(gm_attr_get_kind(a), GM_ATTR_LIST_INT);
    assert_int_equal(gm_attr_list_len(a), 3);
    assert_int_equal(gm_attr_list_int(a, 2), 16);
    a = attr_of(at, "list_f");
    assert_int_equal(gm_attr_get_kind(a), GM_ATTR_LIST_FLOAT);
    assert_true(gm_attr_list_float(a, 0) == 1.5 && gm_attr_list_float(a, 1) == -2.0);
    a = attr_of(at, "list_b");
    assert_int_equal(gm_attr_get_kind(a), GM_ATTR_LIST_BOOL);
    assert_true(gm_attr_list_bool(a, 0));
    assert_false(gm_attr_list_bool(a, 1));
    a = attr_of(at, "list_dt");
    assert_int_equal(gm_attr_get_kind(a), GM_ATTR_LIST_INT);
    assert_int_equal(gm_attr_list_int(a, 1), 8);
    /* Empty lists: val_type, else list of int, but the attribute table wins. */
    assert_int_equal(gm_attr_get_kind(attr_of(at, "empty_strings")), GM_ATTR_LIST_STRING);
    assert_int_equal(gm_attr_get_kind(attr_of(at, "empty_none")), GM_ATTR_LIST_INT);
    a = attr_of(at, "_input_memory_type");
    assert_int_equal(gm_attr_get_kind(a), GM_ATTR_LIST_INT);
    assert_int_equal(gm_attr_list_len(a), 0);
    a = attr_of(at, "_output_inplace_ability");
    assert_int_equal(gm_attr_get_kind(a), GM_ATTR_LIST_LIST_INT);
    assert_int_equal(gm_attr_list_len(a), 2);
    assert_int_equal(gm_attr_list_list_len(a, 0), 2);
    assert_int_equal(gm_attr_list_list_len(a, 1), 0);
    a = attr_of(at, "td_val");
    assert_int_equal(gm_attr_get_kind(a), GM_ATTR_TENSOR_DESC);
    d = gm_attr_tensor_desc(a);
    assert_int_equal(gm_desc_dtype(d), GM_DT_INT32);
    check_shape(d, 1, (const int64_t[]){4});
    assert_string_equal(gm_desc_layout(d), "NCHW");
    assert_int_equal(gm_desc_size(d), 16);
    /* What the IR cannot hold is skipped. */
    const char *skipped[] = {"func_val", "g_val", "t_val", "llf_val", "expr_val", "list_bt"};
    for (size_t i = 0; i < sizeof skipped / sizeof *skipped; i++) assert_null(gm_attr_find(at, skipped[i]));
    /* Post-build offsets under the reserved names. */
    a = attr_of(at, "_gm_input_offsets");
    assert_int_equal(gm_attr_list_len(a), 2);
    assert_int_equal(gm_attr_list_int(a, 1), 1024);
    assert_int_equal(gm_attr_list_int(attr_of(at, "_gm_output_offsets"), 0), 9216);
    assert_int_equal(gm_attr_list_int(attr_of(at, "_gm_workspace_offsets"), 0), 10240);
    assert_int_equal(gm_attr_list_int(attr_of(at, "_gm_workspace_bytes"), 0), 512);

    int64_t ri = -1;
    assert_true(gm_desc_reuse_input(gm_node_output_desc(node(m, "relu"), 0), &ri));
    assert_int_equal(ri, 0);

    /* sum: "relu:0", "", "x:0" and the control input "mm:-1"; two streams. */
    gm_node *sum = node(m, "sum");
    assert_int_equal(gm_node_stream(sum), 1);
    assert_int_equal(gm_node_stream(node(m, "relu")), 0);
    assert_int_equal(gm_node_input_count(sum), 3);
    assert_ptr_equal(gm_node_input(sum, 0, &idx), node(m, "relu"));
    assert_null(gm_node_input(sum, 1, &idx));
    assert_ptr_equal(gm_node_input(sum, 2, &idx), x);
    assert_int_equal(gm_node_control_input_count(sum), 1);
    assert_ptr_equal(gm_node_control_input(sum, 0), mm);
    gm_node *out = node(m, "out");
    assert_int_equal(gm_node_input_count(out), 1);
    assert_int_equal(gm_node_control_input_count(out), 2);
    assert_ptr_equal(gm_node_control_input(out, 0), node(m, "relu"));
    assert_ptr_equal(gm_node_control_input(out, 1), x);
    gm_model_free(m);
}

static void test_control_flow(void **state)
{
    (void)state;
    gm_model *m = ge_file("ge/control_flow.txt");
    assert_int_equal(gm_model_graph_count(m), 5);
    assert_int_equal(gm_model_node_count(m), 6 + 3 + 3 + 5 + 4);
    gm_node *branch = node(m, "branch"), *loop = node(m, "loop");
    assert_int_equal(gm_node_subgraph_count(branch), 2);
    assert_string_equal(gm_graph_name(gm_node_subgraph(branch, 0)), "then_branch");
    assert_string_equal(gm_graph_name(gm_node_subgraph(branch, 1)), "else_branch");
    /* subgraph_name order, not file order, gives While's cond and body. */
    assert_string_equal(gm_graph_name(gm_node_subgraph(loop, 0)), "loop_cond");
    assert_string_equal(gm_graph_name(gm_node_subgraph(loop, 1)), "loop_body");
    assert_ptr_equal(gm_graph_parent(gm_model_find_graph(m, "loop_body")), loop);
    assert_ptr_equal(gm_graph_parent(gm_model_find_graph(m, "then_branch")), branch);
    assert_string_equal(gm_graph_name(gm_model_graph(m, 3)), "loop_body");
    assert_int_equal(gm_attrs_get_int(*gm_node_attrs(node(m, "body_n")), "_parent_node_index", -1), 1);
    assert_int_equal(gm_attrs_get_int(*gm_node_attrs(node(m, "then_x")), "_parent_node_index", -1), 1);
    gm_node *bo = node(m, "body_out");
    assert_int_equal(gm_node_input_count(bo), 2);
    assert_int_equal(gm_attrs_get_int(*gm_desc_attrs(gm_node_input_desc(bo, 0)), "_parent_node_index", -1), 0);
    assert_int_equal(gm_attrs_get_int(*gm_desc_attrs(gm_node_input_desc(bo, 1)), "_parent_node_index", -1), 1);
    /* A scalar: `shape { }` is a shape of no dims, not a missing one. */
    assert_int_equal(gm_desc_ndims(gm_node_output_desc(node(m, "pred"), 0)), 0);
    /* GetAllNodes order: a node with subgraphs, then its subgraphs' nodes. */
    assert_true(gm_node_topo_id(branch) < gm_node_topo_id(node(m, "then_x")));
    assert_true(gm_node_topo_id(node(m, "else_out")) < gm_node_topo_id(loop));
    gm_model_free(m);
}

static void test_fusion_stage(void **state)
{
    (void)state;
    gm_model *m = ge_file("ge/fusion_stage.txt");
    assert_int_equal(gm_model_graph_count(m), 1);
    assert_int_equal(gm_model_node_count(m), 8);
    /* The Data op's input_desc has no `input` string: no input. */
    assert_int_equal(gm_node_input_count(node(m, "input_0")), 0);
    assert_int_equal(gm_attr_get_kind(attr_of(*gm_node_attrs(node(m, "input_0")), "_datadump_original_op_names")),
                     GM_ATTR_LIST_STRING);
    /* conv1: bias (DT_UNDEFINED) left out in the middle; offset_w is the third input. */
    gm_node *conv = node(m, "conv1");
    assert_int_equal(gm_node_input_count(conv), 3);
    const gm_tensor_desc *d = gm_node_input_desc(conv, 2);
    assert_int_equal(gm_desc_dtype(d), GM_DT_INT8);
    check_shape(d, 1, (const int64_t[]){64});
    assert_string_equal(gm_node_input_name(conv, 2), "offset_w");
    assert_int_equal(gm_desc_dtype(gm_node_input_desc(conv, 1)), GM_DT_INT8);
    d = gm_node_output_desc(conv, 0);
    assert_string_equal(gm_desc_layout(d), "NHWC");
    assert_true(gm_desc_size_given(d));
    assert_int_equal(gm_desc_size(d), 1605664); /* padded beyond 1x112x112x64 halves */
    const gm_attr *a = attr_of(*gm_node_attrs(conv), "continuous_input");
    assert_int_equal(gm_attr_get_kind(a), GM_ATTR_BOOL);
    assert_false(gm_attr_bool(a));
    assert_false(gm_attr_bool(attr_of(*gm_node_attrs(conv), "continuous_output")));
    a = attr_of(*gm_node_attrs(conv), "strides");
    assert_int_equal(gm_attr_list_len(a), 4);
    assert_int_equal(gm_attr_list_int(a, 1), 2);
    assert_string_equal(gm_attrs_get_string(*gm_node_attrs(conv), "data_format"), "NHWC");
    /* Input names: input_name, else the input_desc's name. */
    assert_string_equal(gm_node_input_name(node(m, "output_0"), 0), "x");
    /* add1: a trailing optional input left out. */
    assert_int_equal(gm_node_input_count(node(m, "add1")), 2);
    assert_int_equal(gm_node_consumer_count(conv, 0), 2);
    gm_model_free(m);
}

/* ---- pbtext ------------------------------------------------------------------------------- */

static ProtobufCMessage *pb_ok(const ProtobufCMessageDescriptor *desc, const char *text)
{
    ProtobufCMessage *msg = NULL;
    gm_error err;
    gm_error_clear(&err);
    gm_status st = gm_pbtext_parse(desc, text, strlen(text), "p.txt", NULL, &msg, &err);
    if (st != GM_OK) print_message("unexpected error: %s\n", err.message);
    assert_int_equal(st, GM_OK);
    assert_non_null(msg);
    return msg;
}

static char *pb_print(const ProtobufCMessage *msg)
{
    char *text = NULL;
    size_t len = 0;
    gm_error err;
    gm_error_clear(&err);
    assert_int_equal(gm_pbtext_print(msg, &text, &len, &err), GM_OK);
    assert_int_equal(len, strlen(text));
    return text;
}

/* parse -> print -> parse -> print gives the same text twice; returns the first print. */
static char *pb_round_trip(const ProtobufCMessageDescriptor *desc, const char *text)
{
    ProtobufCMessage *msg = pb_ok(desc, text);
    char *once = pb_print(msg);
    protobuf_c_message_free_unpacked(msg, NULL);
    msg = pb_ok(desc, once);
    char *twice = pb_print(msg);
    protobuf_c_message_free_unpacked(msg, NULL);
    if (strcmp(once, twice) != 0) print_message("first:\n%s\nsecond:\n%s\n", once, twice);
    assert_string_equal(once, twice);
    free(twice);
    return once;
}

static void expect_pb_error(const ProtobufCMessageDescriptor *desc, const char *text, const char *n1, const char *n2)
{
    ProtobufCMessage *msg = NULL;
    gm_error err;
    gm_error_clear(&err);
    gm_status st = gm_pbtext_parse(desc, text, strlen(text), "p.txt", NULL, &msg, &err);
    bool ok = st == GM_ERR_INPUT && (!n1 || strstr(err.message, n1)) && (!n2 || strstr(err.message, n2));
    if (!ok) print_message("input: %s\nstatus %d, message: %s\n", text, (int)st, err.message);
    assert_true(ok);
    assert_null(msg);
}

static void test_pbtext_data_files_round_trip(void **state)
{
    (void)state;
    const char *files[] = {"ge/small_all_kinds.txt", "ge/control_flow.txt", "ge/fusion_stage.txt"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char *text = read_data(files[i], NULL);
        char *once = pb_round_trip(&ge__proto__model_def__descriptor, text);
        free(once);
        free(text);
    }
}

static void test_pbtext_scalars(void **state)
{
    (void)state;
    /* Every integer width and base, bool spellings, floats with inf/nan/suffix, maps keyed by
     * int64 and string, a proto3 `uint64`, and separators. */
    const char *text =
        "symbol_to_value { key: \"s0\" value: -9223372036854775808 }\n"
        "symbol_to_value { key: \"s1\" value: 0x7fffffffffffffff }\n"
        "value_to_symbol { key: 017 value { symbols: [\"a\", 'b'] } }\n"
        "symbol_to_source < key: \"s0\" value: < input_data_idx: -2147483648 dim_idx: 3 > >\n"
        "replacements: { key: \"r\" value: { replace_expr: \"x\" \"+\" 'y' rank: 2147483647 } }\n"
        "symbol_check_infos { expr: \"\\x41\\102\\u00e9\\U0001F600\\a\\b\\f\\v\\?\\\"\" line: 7 }, \n"
        "shape_setting { specialize_zero_one: t dynamic_mode: 0x10 };\n"
        "unique_sym_id: 18446744073709551615\n";
    ProtobufCMessage *msg = pb_ok(&ge__proto__shape_env_attr_groups_def__descriptor, text);
    const Ge__Proto__ShapeEnvAttrGroupsDef *s = (const Ge__Proto__ShapeEnvAttrGroupsDef *)msg;
    assert_int_equal(s->n_symbol_to_value, 2);
    assert_true(s->symbol_to_value[0]->value == INT64_MIN);
    assert_true(s->symbol_to_value[1]->value == INT64_MAX);
    assert_int_equal(s->value_to_symbol[0]->key, 15);
    assert_int_equal(s->value_to_symbol[0]->value->n_symbols, 2);
    assert_string_equal(s->value_to_symbol[0]->value->symbols[1], "b");
    assert_int_equal(s->symbol_to_source[0]->value->input_data_idx, INT32_MIN);
    assert_string_equal(s->replacements[0]->value->replace_expr, "x+y");
    assert_int_equal(s->replacements[0]->value->rank, INT32_MAX);
    assert_string_equal(s->symbol_check_infos[0]->expr, "AB\xc3\xa9\xf0\x9f\x98\x80\a\b\f\v?\"");
    assert_true(s->shape_setting->specialize_zero_one);
    assert_int_equal(s->shape_setting->dynamic_mode, 16);
    assert_true(s->unique_sym_id == UINT64_MAX);
    char *out = pb_print(msg);
    protobuf_c_message_free_unpacked(msg, NULL);
    /* The printed form: field-number order, 2-space indent, map entries as key/value. */
    const char *want =
        "symbol_to_value {\n  key: \"s0\"\n  value: -9223372036854775808\n}\n"
        "symbol_to_value {\n  key: \"s1\"\n  value: 9223372036854775807\n}\n"
        "value_to_symbol {\n  key: 15\n  value {\n    symbols: \"a\"\n    symbols: \"b\"\n  }\n}\n"
        "symbol_to_source {\n  key: \"s0\"\n  value {\n    input_data_idx: -2147483648\n    dim_idx: 3\n  }\n}\n"
        "replacements {\n  key: \"r\"\n  value {\n    replace_expr: \"x+y\"\n    rank: 2147483647\n  }\n}\n"
        "symbol_check_infos {\n  expr: \"AB\xc3\xa9\xf0\x9f\x98\x80\\007\\010\\014\\013?\\\"\"\n  line: 7\n}\n"
        "shape_setting {\n  specialize_zero_one: true\n  dynamic_mode: 16\n}\n"
        "unique_sym_id: 18446744073709551615\n";
    assert_string_equal(out, want);
    free(out);
    free(pb_round_trip(&ge__proto__shape_env_attr_groups_def__descriptor, text));

    /* Floats and bools in AttributeDef / AttrDef. */
    const char *floats[][2] = {
        {"f: inf", "f: inf\n"},       {"f: -Infinity", "f: -inf\n"}, {"f: nan", "f: nan\n"},
        {"f: 1.5f", "f: 1.5\n"},      {"f: .25", "f: 0.25\n"},       {"f: 1e-3", "f: 0.001\n"},
        {"f: - 2", "f: -2\n"},        {"f: 3.4e38", "f: 3.4e+38\n"}, {"f: 0.1", "f: 0.1\n"},
        {"f: 3.4028235e+38", "f: 3.4028235e+38\n"}, /* FLT_MAX's shortest form: above it, rounds to it */
        {"f: -3.40282356e38", "f: -3.4028235e+38\n"},
        {"b: True", "b: true\n"},     {"b: 0", "b: false\n"},        {"b: f", "b: false\n"},
        {"i: 0", "i: 0\n"}, /* a set oneof member prints even at its default */
        {"s: \"\"", "s: \"\"\n"},
    };
    for (size_t i = 0; i < sizeof floats / sizeof *floats; i++) {
        msg = pb_ok(&ge__proto__attribute_def__descriptor, floats[i][0]);
        out = pb_print(msg);
        if (strcmp(out, floats[i][1]) != 0) print_message("input %s\n", floats[i][0]);
        assert_string_equal(out, floats[i][1]);
        free(out);
        protobuf_c_message_free_unpacked(msg, NULL);
    }
    /* Bytes that are not UTF-8 print as octal escapes; UTF-8 text stays readable. */
    msg = pb_ok(&ge__proto__attr_def__descriptor, "bt: \"\\377\\0001\\n\"");
    out = pb_print(msg);
    assert_string_equal(out, "bt: \"\\377\\0001\\n\"\n");
    free(out);
    protobuf_c_message_free_unpacked(msg, NULL);
    /* Proto3 defaults are omitted; an empty message that is set prints as a block. */
    msg = pb_ok(&ge__proto__tensor_descriptor__descriptor,
                "name: \"\" dtype: DT_UNDEFINED size: 0 shape {} reuse_input: false layout: 'ND'");
    out = pb_print(msg);
    assert_string_equal(out, "shape {\n}\nlayout: \"ND\"\n");
    free(out);
    protobuf_c_message_free_unpacked(msg, NULL);
    /* Enums by number, the unknown ones printed as numbers. */
    msg = pb_ok(&ge__proto__tensor_descriptor__descriptor, "dtype: 27");
    out = pb_print(msg);
    assert_string_equal(out, "dtype: DT_BF16\n");
    free(out);
    protobuf_c_message_free_unpacked(msg, NULL);
    msg = pb_ok(&ge__proto__tensor_descriptor__descriptor, "dtype: 1000");
    out = pb_print(msg);
    assert_string_equal(out, "dtype: 1000\n");
    free(out);
    protobuf_c_message_free_unpacked(msg, NULL);
}

/* A proto2 schema: has_ flags for optional scalars, strings without a default. */
static void test_pbtext_proto2(void **state)
{
    (void)state;
    const char *text = "ir_version: 7\n"
                       "producer_name: \"graphmem\"\n"
                       "graph {\n"
                       "  node { input: \"x\" output: \"y\" name: \"r\" op_type: \"Relu\" }\n"
                       "  node { input: [\"y\", \"y\"] output: \"z\" op_type: \"Add\"\n"
                       "         attribute { name: \"alpha\" f: 0 type: FLOAT } }\n"
                       "  name: \"g\"\n"
                       "}\n"
                       "opset_import { version: 17 }\n";
    ProtobufCMessage *msg = pb_ok(&onnx__model_proto__descriptor, text);
    const Onnx__ModelProto *mp = (const Onnx__ModelProto *)msg;
    assert_true(mp->has_ir_version);
    assert_int_equal(mp->ir_version, 7);
    assert_int_equal(mp->graph->n_node, 2);
    assert_int_equal(mp->graph->node[1]->n_input, 2);
    assert_true(mp->graph->node[1]->attribute[0]->has_f);
    assert_null(mp->graph->node[1]->name); /* proto2: absent */
    char *out = pb_print(msg);
    protobuf_c_message_free_unpacked(msg, NULL);
    /* f: 0 was given, so it prints (a has_ flag, not a proto3 default). */
    assert_non_null(strstr(out, "      f: 0\n"));
    assert_non_null(strstr(out, "ir_version: 7\n"));
    assert_null(strstr(out, "model_version"));
    free(out);
    free(pb_round_trip(&onnx__model_proto__descriptor, text));
    expect_pb_error(&onnx__model_proto__descriptor, "ir_version: 1 ir_version: 2", "p.txt:1:15:", "given twice");
    expect_pb_error(&onnx__model_proto__descriptor, "graph { node { attribute { type: FLOATY } } }",
                    "p.txt:1:34:", "unknown value 'FLOATY' of enum onnx.AttributeProto.AttributeType");
}

static void test_pbtext_errors(void **state)
{
    (void)state;
    const ProtobufCMessageDescriptor *ad = &ge__proto__attr_def__descriptor;
    const ProtobufCMessageDescriptor *sd = &ge__proto__shape_env_attr_groups_def__descriptor;
    expect_pb_error(ad, "i: 9223372036854775808", "p.txt:1:4:", "out of range for int64");
    expect_pb_error(ad, "i: -9223372036854775809", "p.txt:1:4:", "out of range for int64");
    expect_pb_error(ad, "i: 99999999999999999999", "p.txt:1:4:", "out of range");
    expect_pb_error(sd, "unique_sym_id: -1", "p.txt:1:16:", "out of range for uint64");
    expect_pb_error(sd, "shape_setting { dynamic_mode: 2147483648 }", "p.txt:1:31:", "out of range for int32");
    expect_pb_error(&ge__proto__model_def__descriptor, "version: 4294967296", "p.txt:1:10:", "out of range for uint32");
    expect_pb_error(ad, "i: 1.5", "p.txt:1:4:", "expected an integer");
    expect_pb_error(ad, "i: 08", "p.txt:1:4:", "expected an integer");
    expect_pb_error(ad, "i: \"1\"", "p.txt:1:4:", "found a string");
    expect_pb_error(ad, "f: 1e39", "p.txt:1:4:", "out of range for float");
    expect_pb_error(ad, "f: 1.5.2", "p.txt:1:4:", "expected a number");
    expect_pb_error(ad, "b: yes", "p.txt:1:4:", "expected a bool");
    expect_pb_error(ad, "b: 2", "p.txt:1:4:", "expected a bool");
    expect_pb_error(ad, "i: 1 s: \"x\"", "p.txt:1:6:", "of the same oneof is already set");
    expect_pb_error(ad, "list { val_type: VT_LIST_INT val_type: VT_LIST_INT }", "p.txt:1:30:", "given twice");
    expect_pb_error(ad, "s: [\"a\"]", "p.txt:1:4:", "not repeated");
    expect_pb_error(ad, "list { i: [1, 2 }", "p.txt:1:17:", "expected ',' or ']'");
    expect_pb_error(ad, "list { i 1 }", "p.txt:1:10:", "expected ':'");
    expect_pb_error(ad, "list: 1", "p.txt:1:7:", "expected '{'");
    expect_pb_error(ad, "[ext.field]: 1", "p.txt:1:1:", "not supported");
    expect_pb_error(ad, "}", "p.txt:1:1:", "expected a field name of ge.proto.AttrDef");
    expect_pb_error(ad, "list { i: 1 >", "p.txt:1:13:", "or '}'");
    expect_pb_error(ad, "list < i: 1 }", "p.txt:1:13:", "or '>'");
    expect_pb_error(ad, "s: \"a\\qb\"", "p.txt:1:6:", "bad escape '\\q'");
    expect_pb_error(ad, "s: \"\\400\"", "p.txt:1:5:", "above \\377");
    expect_pb_error(ad, "s: \"\\x\"", "p.txt:1:5:", "hex digits");
    expect_pb_error(ad, "s: \"\\ud800\"", "p.txt:1:5:", "Unicode");
    expect_pb_error(ad, "s: \"abc\n\"", "p.txt:1:4:", "unterminated string");
    expect_pb_error(ad, "s: 'abc", "p.txt:1:4:", "unterminated string");
    expect_pb_error(ad, "s: x", "p.txt:1:4:", "expected a string");
    expect_pb_error(ad, "# only a comment\n  @", "p.txt:2:3:", "unexpected character '@'");
    expect_pb_error(&ge__proto__op_def__descriptor, "name: \"a\\000b\"", "p.txt:1:7:", "NUL");
    expect_pb_error(&ge__proto__op_def__descriptor, "name: \"\\377\"", "p.txt:1:7:", "not valid UTF-8");
    expect_pb_error(&ge__proto__op_def__descriptor, "name: \"x\"\nnmae: \"y\"", "p.txt:2:1:",
                    "ge.proto.OpDef has no field named 'nmae'");
    /* Nesting: 100 levels are fine, 101 are not. AttrDef (0) -> td (1) -> attr entry (2) ->
     * value (3) -> td (4) ...: three levels a round. */
    char nest[4096] = "";
    for (int i = 0; i < 33; i++) strcat(nest, "td { attr { value { ");
    size_t head = strlen(nest);
    strcat(nest, "td { }"); /* level 100 */
    for (int i = 0; i < 33; i++) strcat(nest, " } } }");
    ProtobufCMessage *msg = pb_ok(ad, nest);
    protobuf_c_message_free_unpacked(msg, NULL);
    strcpy(nest + head, "td { attr { } }"); /* level 101 */
    expect_pb_error(ad, nest, "p.txt:1:", "nested deeper than 100 levels");
}

/* ---- JSON -> GE -> JSON ------------------------------------------------------------------- */

static void normalize_desc(gm_tensor_desc *d);

/* The format's losses, applied to the original so that it compares with what comes back:
 * float attributes are 32-bit in AttrDef; every known non-zero size is written (a derived one
 * comes back explicit, an explicit 0 comes back derived). */
static double as_float32(double v)
{
    if (fabs(v) >= 3.4028235677973366e38) return v > 0 ? INFINITY : -INFINITY;
    return fabs(v) > 3.4028234663852886e38 ? copysign(3.4028234663852886e38, v) : (double)(float)v;
}

static void normalize_attrs(gm_attr *list)
{
    for (gm_attr *a = list; a; a = a->next) {
        if (a->kind == GM_ATTR_FLOAT) a->u.f = as_float32(a->u.f);
        if (a->kind == GM_ATTR_LIST_FLOAT) {
            for (size_t i = 0; i < a->u.lf.n; i++) a->u.lf.v[i] = as_float32(a->u.lf.v[i]);
        }
        if (a->kind == GM_ATTR_TENSOR_DESC) normalize_desc(a->u.td);
    }
}

static void normalize_desc(gm_tensor_desc *d)
{
    if (d->size_given && d->size == 0) d->size_given = false; /* 0 is proto3's "unset" */
    else if (!d->size_given && gm_desc_size(d) > 0) gm_desc_set_size(d, gm_desc_size(d));
    normalize_attrs(d->attrs);
}

static void normalize(gm_model *m)
{
    for (size_t gi = 0; gi < m->n_graphs; gi++) {
        gm_graph *g = m->graphs[gi];
        normalize_attrs(g->attrs);
        for (uint32_t i = 0; i < g->nodes.n; i++) {
            gm_node *n = g->nodes.v[i];
            normalize_attrs(n->attrs);
            for (uint32_t k = 0; k < n->n_in; k++) normalize_desc(gm_node_input_desc(n, k));
            for (uint32_t k = 0; k < n->n_out; k++) normalize_desc(&n->out[k].desc);
        }
    }
}

/* m -> GE text -> model: the JSON of both agrees modulo normalize(), and the model read back
 * writes the very text it was read from (its residual keeps what the IR does not hold, such as
 * a size the text left out), so a second trip changes nothing. `exact`: m has nothing the
 * format loses, so the normalized original writes that text too. */
static void check_ge_round_trip(gm_model *m, bool exact)
{
    char *ge = ge_write_ok(m);
    gm_model *back = ge_ok(ge, strlen(ge), "back.txt");
    char *ge2 = ge_write_ok(back);
    assert_string_equal(ge, ge2);
    normalize(m);
    char *ge_norm = ge_write_ok(m);
    if (exact) assert_string_equal(ge, ge_norm);
    char *j1 = write_json_ok(m), *j2 = write_json_ok(back);
    if (strcmp(j1, j2) != 0) print_message("original:\n%s\nback:\n%s\n", j1, j2);
    assert_string_equal(j1, j2);
    free(j1);
    free(j2);
    free(ge);
    free(ge_norm);
    free(ge2);
    gm_model_free(back);
}

static void check_json_file(const char *path)
{
    gm_model *m = read_file_ok(path);
    check_ge_round_trip(m, true);
    gm_model_free(m);
}

static void test_json_ge_json_models(void **state)
{
    (void)state;
    check_json_file(GM_SOURCE_DIR "/examples/train_step.json");
    check_json_file(GM_TEST_DATA_DIR "/models/mlp_train_step.graphmem.json");
    check_json_file(GM_TEST_DATA_DIR "/models/transformer_lm_train_step.graphmem.json");
}

/* Every IR attribute kind, edge values, memory types, names, streams, offsets. */
static const char k_full[] =
    "{\"graphmem\": 1, \"name\": \"full\", \"options\": {\"ge.exec.disableReuseMemory\": \"1\"},\n"
    " \"graphs\": [{\"name\": \"root\", \"attrs\": {\"_dynamic_shape_partitioned\": true, \"gf\": 0.1},\n"
    "  \"nodes\": [\n"
    "  {\"name\": \"a\", \"type\": \"Data\", \"attrs\": {\"index\": 0},\n"
    "   \"outputs\": [{\"dtype\": \"int4\", \"shape\": [3, 5], \"layout\": \"NCHW\"}]},\n"
    "  {\"name\": \"v\", \"type\": \"Variable\", \"outputs\": [{\"dtype\": \"float32\", \"shape\": [-1, 4]},\n"
    "   {\"dtype\": \"float32\", \"shape\": [2], \"size\": 0}]},\n"
    "  {\"name\": \"n\", \"type\": \"Custom\", \"inputs\": [\"a:0\", \"\", \"v:1\"], \"control_inputs\": [\"v\"],\n"
    "   \"stream\": 3, \"input_names\": [\"\", \"opt\", \"\"], \"output_names\": [\"\", \"second\"],\n"
    "   \"input_descs\": [{\"memory_type\": \"ts\", \"attrs\": {\"_special_input_size\": 64}}, {},\n"
    "                   {\"dtype\": \"float32\", \"shape\": [2], \"memory_type\": \"hbm\"}],\n"
    "   \"outputs\": [{\"dtype\": \"float32\", \"shape\": [], \"reuse_input\": true, \"reuse_input_index\": 2,\n"
    "                  \"memory_type\": \"p2p\"},\n"
    "                 {\"dtype\": \"bool\", \"shape\": [7], \"size\": 4096, \"attrs\": {\"x\": [true]}}],\n"
    "   \"attrs\": {\"b\": false, \"i\": -9223372036854775808, \"f\": 3.141592653589793, \"s\": \"t\\u00e9xt\\n\\\"q\\\"\",\n"
    "     \"by\": {\"bytes_base64\": \"AP8=\"}, \"li\": [1, -2], \"lf\": [0.1, 1e30, -1e300, 3.4028235e38], \"ls\": [\"x\", \"\"],\n"
    "     \"lb\": [false, true], \"lli\": [[1], [], [2, 3]], \"e_li\": [], \"_input_memory_type\": [],\n"
    "     \"td\": {\"tensor_desc\": {\"dtype\": \"float16\", \"shape\": [2, 2], \"attrs\": {\"inner\": 1.5}}},\n"
    "     \"_gm_input_offsets\": [0, 64, 128], \"_gm_output_offsets\": [256, 512],\n"
    "     \"_gm_workspace_offsets\": [1024], \"_gm_workspace_bytes\": [32]}},\n"
    "  {\"name\": \"out\", \"type\": \"NetOutput\", \"inputs\": [\"n:0\", \"n:1\"], \"stream\": -1}\n"
    " ]}]}\n";

static void test_json_ge_json_every_kind(void **state)
{
    (void)state;
    gm_model *m = NULL;
    gm_error err;
    gm_error_clear(&err);
    gm_status st = gm_model_read_json(k_full, strlen(k_full), "full.json", &m, &err);
    if (st != GM_OK) print_message("%s\n", err.message);
    assert_int_equal(st, GM_OK);
    check_ge_round_trip(m, false); /* it has an explicit size 0 and float attributes */
    gm_model_free(m);
}

/* The exact text of a small model: GE's layout. */
static void test_writer_layout(void **state)
{
    (void)state;
    const char *json = "{\"graphmem\": 1, \"name\": \"tiny\", \"options\": {\"ge.buildGraphMode\": \"offline\"},\n"
                       " \"graphs\": [{\"name\": \"g\", \"nodes\": [\n"
                       "  {\"name\": \"d\", \"type\": \"Data\", \"outputs\": [{\"dtype\": \"float32\", \"shape\": [2]}]},\n"
                       "  {\"name\": \"r\", \"type\": \"Relu\", \"inputs\": [\"d:0\"], \"control_inputs\": [\"d\"],\n"
                       "   \"stream\": 1, \"outputs\": [{\"dtype\": \"float32\", \"shape\": [2],\n"
                       "   \"attrs\": {\"k\": \"v\"}}]}]}]}";
    gm_model *m = NULL;
    gm_error err;
    gm_error_clear(&err);
    assert_int_equal(gm_model_read_json(json, strlen(json), "t.json", &m, &err), GM_OK);
    char *text = ge_write_ok(m);
    const char *want = "name: \"tiny\"\n"
                       "graph {\n"
                       "  name: \"g\"\n"
                       "  op {\n"
                       "    name: \"d\"\n"
                       "    type: \"Data\"\n"
                       "    has_out_attr: true\n"
                       "    output_desc {\n"
                       "      dtype: DT_FLOAT\n"
                       "      shape {\n"
                       "        dim: 2\n"
                       "      }\n"
                       "      size: 8\n"
                       "      real_dim_cnt: 1\n"
                       "    }\n"
                       "  }\n"
                       "  op {\n"
                       "    name: \"r\"\n"
                       "    type: \"Relu\"\n"
                       "    input: \"d:0\"\n"
                       "    input: \"d:-1\"\n"
                       "    has_out_attr: true\n"
                       "    id: 1\n"
                       "    stream_id: 1\n"
                       "    input_desc {\n"
                       "    }\n"
                       "    output_desc {\n"
                       "      dtype: DT_FLOAT\n"
                       "      shape {\n"
                       "        dim: 2\n"
                       "      }\n"
                       "      attr {\n"
                       "        key: \"k\"\n"
                       "        value {\n"
                       "          s: \"v\"\n"
                       "        }\n"
                       "      }\n"
                       "      has_out_attr: true\n"
                       "      size: 8\n"
                       "      real_dim_cnt: 1\n"
                       "    }\n"
                       "  }\n"
                       "}\n"
                       "attr {\n"
                       "  key: \"ge.buildGraphMode\"\n"
                       "  value {\n"
                       "    s: \"offline\"\n"
                       "  }\n"
                       "}\n";
    assert_string_equal(text, want);
    free(text);
    gm_model_free(m);
}

/* ---- reader errors ------------------------------------------------------------------------ */

#define OP(extra) "op { name: \"a\" type: \"Data\" output_desc { dtype: DT_FLOAT } " extra " }"

static void test_errors_syntax(void **state)
{
    (void)state;
    expect_error("graph {\n  name: \"g\"\n", "t.txt:3:1:", "expected '}' to close ge.proto.GraphDef");
    expect_error("graph {\n  name:\n}\n", "t.txt:3:1:", "expected a string");
    expect_error("graph {\n  name: \"a\\qb\"\n}\n", "t.txt:2:11:", "bad escape");
    expect_error("graph {\n  name: \"abc\n}\n", "t.txt:2:9:", "unterminated string");
    expect_error("graph {\n  nmae: \"g\"\n}\n", "t.txt:2:3:", "ge.proto.GraphDef has no field named 'nmae'");
    expect_error("graph { name: \"g\" " OP("stream_id: \"1\"") " }", "t.txt:1:90:", "expected an integer (int64)");
    expect_error("graph { name: \"g\"\n op { name: \"a\" type: \"Data\"\n output_desc { dtype: DT_FLOATY } } }",
                 "t.txt:3:23:", "unknown value 'DT_FLOATY' of enum ge.proto.DataType");
    expect_error("version: 4294967296", "t.txt:1:10:", "out of range for uint32");
    expect_error("graph { name: \"g\" op { id: 9223372036854775808 } }", "t.txt:1:28:", "out of range for int64");
    expect_error("graph { name: \"g\" op { name: \"a\" name: \"b\" } }", "t.txt:1:34:", "given twice");
    expect_error("graph { name: \"g\" } \x01", "t.txt:1:21:", "unexpected byte 0x01");
    expect_error_len("graph { name: \"g\" }\0", 20, "t.txt:1:20:", "unexpected byte 0x00");
    /* Deeper than the limit: graph (1), then op / attr / value / g per round. */
    char deep[8192] = "graph { name: \"g\" ";
    for (int i = 0; i < 25; i++) strcat(deep, "op { attr { value { g { ");
    expect_error(deep, "t.txt:1:", "nested deeper than 100 levels");
}

static void test_errors_model(void **state)
{
    (void)state;
    expect_error("", "t.txt", "the model has no graph");
    expect_error("graph { name: \"g\"\n " OP("") "\n op { name: \"b\" type: \"Relu\"\n  input: \"a:abc\" } }",
                 "t.txt:4:3:", "input 0 'a:abc': bad output index 'abc'");
    expect_error("graph { name: \"g\"\n " OP("") "\n op { name: \"b\" type: \"Relu\"\n  input: \"a:0\"\n  input: \"zz:0\" } }",
                 "t.txt:5:3:", "graph 'g': op 'b': input 1 'zz:0' names unknown op 'zz'");
    expect_error("graph { name: \"g\" " OP("") " op { name: \"b\" type: \"Relu\" input: \"a:1\" } }", "t.txt:1:110:",
                 "output index out of range (op 'a' has 1 output_desc)");
    expect_error("graph { name: \"g\" " OP("") " op { name: \"b\" type: \"Relu\" input: \"a\" } }", "t.txt:1:110:",
                 "expected \"op:index\"");
    expect_error("graph { name: \"g\" " OP("") " op { name: \"b\" type: \"Relu\" input: \"a:\" } }", "t.txt:1:110:",
                 "missing output index");
    expect_error("graph { name: \"g\" " OP("") " op { name: \"b\" type: \"Relu\" input: \"a:99999999999\" } }",
                 "t.txt:1:110:", "output index too large");
    expect_error("graph { name: \"g\" " OP("") "}\ngraph {\n  name: \"orphan\" op { name: \"o\" type: \"Data\" } }",
                 "t.txt:2:1:",
                 "graph 'orphan' is not the subgraph of any op");
    expect_error("graph { name: \"g\" " OP("subgraph_name: \"nope\"") " }", "t.txt:1:79:",
                 "subgraph_name 'nope' names no graph");
    expect_error("graph { name: \"g\" " OP("subgraph_name: \"g\"") " }", "t.txt:1:79:", "names the root graph");
    expect_error("graph { name: \"g\" op { name: \"i1\" type: \"If\" subgraph_name: \"s\" }\n"
                 " op { name: \"i2\" type: \"If\" subgraph_name: \"s\" } }\ngraph { name: \"s\" }",
                 "t.txt:2:29:", "graph 's' is already the subgraph of op 'i1'");
    expect_error("graph { name: \"g\" " OP("") "\n" OP("") " }", "t.txt:2:6:", "duplicate op name 'a'");
    expect_error("graph { name: \"g\" }\ngraph { name: \"g\" }", "t.txt:2:9:", "duplicate graph name 'g'");
    expect_error("graph { op { name: \"a\" type: \"Data\" } }", "t.txt:1:1:", "graph 0 has no name");
    expect_error("graph { name: \"g\" op { type: \"Data\" } }", "t.txt:1:19:", "op 0 has no name");
    expect_error("graph { name: \"g\" op { name: \"a\" } }", "t.txt:1:19:", "op 'a': the op has no type");
    expect_error("graph { name: \"g\" op { name: \"a\" type: \"Data\" output_desc { dtype: 99 } } }", "t.txt:1:61:",
                 "unknown dtype 99");
    expect_error("graph { name: \"g\" op { name: \"a\" type: \"Data\" output_desc { shape { dim: -3 } } } }",
                 "t.txt:1:69:", "dim 0 is -3");
    /* The one dim rule of every reader: -2 only alone (an unknown rank), in any position. */
    expect_error("graph { name: \"g\" op { name: \"a\" type: \"Data\" output_desc { shape { dim: -2 dim: 3 } } } }",
                 "t.txt:1:69:", "dim 0 is -2 (dims are >= 0, -1 unknown, or [-2] alone for an unknown rank)");
    expect_error("graph { name: \"g\" op { name: \"a\" type: \"Data\" output_desc { shape { dim: 4 dim: -2 dim: 8 } } } }",
                 "t.txt:1:76:", "dim 1 is -2");
    expect_error("graph { name: \"g\" op { name: \"a\" type: \"Data\" output_desc { dtype: DT_FLOAT } }\n"
                 " op { name: \"b\" type: \"Relu\" input: \"a:0\" input_desc { shape { dim: -1 dim: -7 } } } }",
                 "op 'b'", "dim 1 is -7");
    /* A ref pair (Assign's op table names input 0 and output 0 'ref') larger than its Variable:
     * finalize refuses it for every reader, naming both anchors and sizes. */
    expect_error("graph { name: \"g\"\n"
                 " op { name: \"var\" type: \"Variable\" output_desc { dtype: DT_FLOAT shape { dim: 512 } } }\n"
                 " op { name: \"v\" type: \"Const\" output_desc { dtype: DT_FLOAT shape { dim: 4096 } } }\n"
                 " op { name: \"upd\" type: \"Assign\" input: \"var:0\" input: \"v:0\"\n"
                 "  output_desc { dtype: DT_FLOAT shape { dim: 4096 } } } }",
                 "graph 'g': node 'upd'",
                 "ref output upd_out_0 (16384 bytes) is larger than its referent upd_in_0 (2048 bytes");
    expect_error("graph { name: \"g\" op { name: \"a\" type: \"Data\" output_desc { reuse_input_index: -1 } } }",
                 "t.txt:1:61:", "reuse_input_index is negative");
    expect_error("graph { name: \"g\" op { name: \"a\" type: \"Data\"\n attr { key: \"\" value { i: 1 } } } }",
                 "t.txt:2:2:", "an attribute has an empty key");
    expect_error("graph { name: \"g\" op { name: \"a\" type: \"Data\"\n attr { key: \"k\" value { list { i: 1 f: 2 } } } } }",
                 "t.txt:2:2:", "the list holds values of several kinds");
    expect_error("graph { name: \"g\" op { name: \"a\" type: \"Data\" output_desc {\n"
                 " attr { key: \"_gm_memory_type\" value { s: \"nvram\" } } } } }",
                 "t.txt:2:2:", "_gm_memory_type");
    /* What the dim rule lets through: [-2] alone (unknown rank), -1 anywhere. */
    {
        const char *ok = "graph { name: \"g\" op { name: \"a\" type: \"Data\" output_desc { dtype: DT_FLOAT shape { dim: -2 } }"
                         " output_desc { dtype: DT_FLOAT shape { dim: -1 dim: 3 } } } }";
        gm_model *m = NULL;
        gm_error err;
        assert_int_equal(gm_model_read_ge_text(ok, strlen(ok), "t.txt", &m, &err), GM_OK);
        const gm_node *a = gm_model_find_node(m, "a");
        assert_non_null(a);
        check_shape(gm_node_output_desc(a, 0), 1, (const int64_t[]){-2});
        check_shape(gm_node_output_desc(a, 1), 2, (const int64_t[]){-1, 3});
        gm_model_free(m);
    }
    /* Errors found by finalize name the graph and node. */
    expect_error("graph { name: \"g\" op { name: \"a\" type: \"Data\" attr { key: \"index\" value { s: \"0\" } } } }",
                 "graph 'g': node 'a'", "attribute 'index' has the wrong kind");
    expect_error("graph { name: \"g\" op { name: \"w\" type: \"While\" subgraph_name: \"b\" } }\ngraph { name: \"b\" }",
                 "node 'w'", "a While node owns 2 subgraphs");
}

/* ---- hostile input ------------------------------------------------------------------------ */

static uint64_t g_rand = 0x9E3779B97F4A7C15ull;
static uint32_t next_rand(void)
{
    g_rand ^= g_rand << 13;
    g_rand ^= g_rand >> 7;
    g_rand ^= g_rand << 17;
    return (uint32_t)(g_rand >> 11);
}

/* Must not crash or leak; a failure is a clean GM_ERR_INPUT with no model. */
static void read_anything(const char *text, size_t len)
{
    gm_model *m = NULL;
    gm_error err;
    gm_error_clear(&err);
    gm_status st = gm_model_read_ge_text(text, len, "fuzz.txt", &m, &err);
    if (st == GM_OK) {
        assert_non_null(m);
        gm_model_free(m);
        return;
    }
    if (st != GM_ERR_INPUT) print_message("status %d: %s\n", (int)st, err.message);
    assert_int_equal(st, GM_ERR_INPUT);
    assert_null(m);
    assert_true(strncmp(err.message, "fuzz.txt", 8) == 0);
}

static void test_truncated(void **state)
{
    (void)state;
    const char *files[] = {"ge/small_all_kinds.txt", "ge/control_flow.txt"};
    for (size_t f = 0; f < 2; f++) {
        size_t len;
        char *text = read_data(files[f], &len);
        for (size_t n = 0; n < len; n += (f ? 7 : 1)) {
            char *copy = malloc(n ? n : 1); /* exactly n bytes: ASan catches reads past the end */
            memcpy(copy, text, n);
            read_anything(copy, n);
            free(copy);
        }
        free(text);
    }
}

static void test_random_bytes(void **state)
{
    (void)state;
    /* Pure noise, noise drawn from the format's own alphabet, and mutated real dumps. */
    static const char alphabet[] = "{}<>[]:,;-#\"'\\\n abtfinxe0189.graph op name input attr key value list s i ";
    size_t len;
    char *real = read_data("ge/small_all_kinds.txt", &len);
    for (int round = 0; round < 3000; round++) {
        size_t n = round < 2000 ? next_rand() % 200 : len;
        char *buf = malloc(n ? n : 1);
        for (size_t i = 0; i < n; i++) {
            if (round < 1000) buf[i] = (char)next_rand();
            else if (round < 2000) buf[i] = alphabet[next_rand() % (sizeof alphabet - 1)];
            else buf[i] = real[i];
        }
        if (round >= 2000) {
            for (int k = 0; k < 4; k++) buf[next_rand() % n] = (char)next_rand();
        }
        read_anything(buf, n);
        free(buf);
    }
    free(real);
}

/* Each allocation of a read and a write fails in turn: a clean GM_ERR_NOMEM each time. */
static void test_alloc_failures(void **state)
{
    (void)state;
    size_t len;
    char *text = read_data("ge/small_all_kinds.txt", &len);
    long n;
    for (n = 0; n < 1000000; n++) {
        gm_alloc_fail_after(n);
        gm_model *m = NULL;
        gm_error err;
        gm_error_clear(&err);
        gm_status st = gm_model_read_ge_text(text, len, "t.txt", &m, &err);
        if (st == GM_OK) {
            char *out = NULL;
            size_t olen;
            st = gm_model_write_ge_text(m, &out, &olen, &err);
            gm_model_free(m);
            free(out);
            if (st == GM_OK) break;
            assert_null(out);
        } else {
            assert_null(m);
        }
        gm_alloc_fail_after(-1);
        if (st != GM_ERR_NOMEM) print_message("allocation %ld: status %d: %s\n", n, (int)st, err.message);
        assert_int_equal(st, GM_ERR_NOMEM);
        assert_non_null(strstr(err.message, "out of memory"));
    }
    gm_alloc_fail_after(-1);
    assert_true(n > 100);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_all_kinds),
        cmocka_unit_test(test_control_flow),
        cmocka_unit_test(test_fusion_stage),
        cmocka_unit_test(test_pbtext_data_files_round_trip),
        cmocka_unit_test(test_pbtext_scalars),
        cmocka_unit_test(test_pbtext_proto2),
        cmocka_unit_test(test_pbtext_errors),
        cmocka_unit_test(test_json_ge_json_models),
        cmocka_unit_test(test_json_ge_json_every_kind),
        cmocka_unit_test(test_writer_layout),
        cmocka_unit_test(test_errors_syntax),
        cmocka_unit_test(test_errors_model),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_random_bytes),
        cmocka_unit_test(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
