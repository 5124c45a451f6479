/*
 * test_json_io.c — the JSON reader and writer and the file helpers of io.h: exact round trips
 * (the shared real models and a hand-written model using every field and attribute kind),
 * the values read, every error the reader must report (with its message), and the safety
 * rules of gm_write_file (a failed write never damages the existing file or leaves litter).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "io_test_util.h"

#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "graphmem/io.h"
#include "io/json_emit.h"
#include "ir/ir.h"
#include "passes/pass_util2.h"
#include "io/json_split.h"
#include "util/alloc.h"

/* ---- helpers ------------------------------------------------------------------------------ */



/* write(read(text)); also checks that one more read+write gives the same bytes. */
static char *round_trip(const char *text)
{
    gm_model *m = read_json_ok(text);
    char *once = write_json_ok(m);
    gm_model_free(m);
    m = read_json_ok(once);
    char *twice = write_json_ok(m);
    gm_model_free(m);
    if (strcmp(once, twice) != 0) print_message("first write:\n%s\nsecond write:\n%s\n", once, twice);
    assert_string_equal(once, twice);
    free(twice);
    return once;
}

/* Reading must fail with GM_ERR_INPUT, no model, and a message that starts with the source
 * and holds every needle. */
static void expect_error(const char *json, size_t len, const char *n1, const char *n2, const char *n3)
{
    gm_model *m = NULL;
    gm_error err;
    gm_error_clear(&err);
    gm_status st = gm_model_read_json(json, len, "t.json", &m, &err);
    const char *needles[] = {n1, n2, n3};
    bool ok = st == GM_ERR_INPUT && err.code == GM_ERR_INPUT && strncmp(err.message, "t.json", 6) == 0;
    for (int i = 0; i < 3; i++) ok = ok && (!needles[i] || strstr(err.message, needles[i]));
    if (!ok) print_message("input: %.*s\nstatus %d, message: %s\n", (int)len, json, (int)st, err.message);
    assert_true(ok);
    assert_null(m);
}

#define ERR(json, ...) expect_error(json, strlen(json), __VA_ARGS__)

/* A one-graph model around the given node list text. */
#define MODEL(nodes) "{\"graphmem\": 1, \"name\": \"m\", \"graphs\": [{\"name\": \"root\", \"nodes\": [" nodes "]}]}"
/* A Relu node "n" with the given extra fields. */
#define NODE(extra) "{\"name\": \"n\", \"type\": \"Relu\"" extra "}"

static const gm_attr *node_attr(const gm_model *m, const char *node, const char *name)
{
    gm_node *n = gm_model_find_node(m, node);
    assert_non_null(n);
    const gm_attr *a = gm_attr_find(*gm_node_attrs(n), name);
    if (!a) print_message("node '%s' has no attribute '%s'\n", node, name);
    assert_non_null(a);
    return a;
}

static char *read_whole(const char *path)
{
    char *data = NULL;
    size_t len;
    gm_error err;
    gm_error_clear(&err);
    assert_int_equal(gm_read_file(path, &data, &len, &err), GM_OK);
    assert_int_equal(len, strlen(data));
    return data;
}

static char *make_temp_dir(void)
{
    char tmpl[] = "/tmp/gm_json_io_XXXXXX";
    char *d = mkdtemp(tmpl);
    assert_non_null(d);
    return strdup(d);
}

/* Number of entries in dir other than . and .. */
static int dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
    }
    closedir(d);
    return n;
}

static void put_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* ---- the shared real models ---------------------------------------------------------------- */

static void check_shared_model(const char *file, size_t want_nodes)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/models/%s", GM_TEST_DATA_DIR, file);
    if (access(path, R_OK) != 0) fail_msg("%s is missing (the tree's own copy)", path);
    char *orig = read_whole(path);
    gm_model *m = NULL;
    gm_error err;
    gm_error_clear(&err);
    assert_int_equal(gm_model_read_file(path, &m, &err), GM_OK);
    assert_string_equal(gm_model_source(m), path);
    assert_int_equal(gm_model_node_count(m), want_nodes);
    char *text = write_json_ok(m);
    /* The shared files are in the writer's own layout, minus the final newline: every byte,
     * field order and number must come back. */
    size_t n = strlen(orig);
    assert_int_equal(strlen(text), n + 1);
    assert_memory_equal(text, orig, n);
    assert_int_equal(text[n], '\n');
    gm_model_free(m);
    char *again = round_trip(text);
    assert_string_equal(again, text);
    free(again);
    free(text);
    free(orig);
}

static void test_shared_mlp_round_trip(void **state)
{
    (void)state;
    check_shared_model("mlp_train_step.graphmem.json", 82);

    /* Values, from the file: params_1 is a Variable float32[512, 784] of 1605632 bytes. */
    char path[1024];
    snprintf(path, sizeof path, "%s/models/mlp_train_step.graphmem.json", GM_TEST_DATA_DIR);
    gm_model *m = NULL;
    gm_error err;
    assert_int_equal(gm_model_read_file(path, &m, &err), GM_OK);
    assert_int_equal(gm_model_graph_count(m), 1);
    assert_string_equal(gm_model_name(m), "fx");
    gm_node *p = gm_model_find_node(m, "params_1");
    assert_non_null(p);
    assert_string_equal(gm_node_type(p), "Variable");
    assert_int_equal(gm_node_output_count(p), 1);
    const gm_tensor_desc *d = gm_node_output_desc(p, 0);
    assert_int_equal(gm_desc_dtype(d), GM_DT_FLOAT);
    assert_int_equal(gm_desc_ndims(d), 2);
    assert_int_equal(gm_desc_dims(d)[0], 512);
    assert_int_equal(gm_desc_dims(d)[1], 784);
    assert_true(gm_desc_size_given(d));
    assert_int_equal(gm_desc_size(d), 1605632);
    const gm_attr *a = node_attr(m, "y_1", "index");
    assert_int_equal(gm_attr_get_kind(a), GM_ATTR_INT);
    assert_int_equal(gm_attr_int(a), 1);
    gm_model_free(m);
}

static void test_shared_transformer_round_trip(void **state)
{
    (void)state;
    check_shared_model("transformer_lm_train_step.graphmem.json", 461);
}

/* ---- a hand-written model with every field and attribute kind ------------------------------ */

static const char k_full[] =
    "{\n"
    " \"graphmem\": 1, \"name\": \"everything\",\n"
    " \"options\": {\"ge.featureBaseRefreshable\": \"1\", \"ge.buildGraphMode\": \"online\"},\n"
    " \"graphs\": [\n"
    "  {\"name\": \"root\", \"attrs\": {\"_dynamic_shape_partitioned\": false, \"g_int\": 7},\n"
    "   \"nodes\": [\n"
    "    {\"name\": \"x\", \"type\": \"Data\", \"attrs\": {\"index\": 0},\n"
    "     \"outputs\": [{\"dtype\": \"DT_FLOAT\", \"shape\": [-1, 512], \"memory_type\": \"p2p\", \"layout\": \"NCHW\"}]},\n"
    "    {\"name\": \"v\", \"type\": \"Variable\",\n"
    "     \"outputs\": [{\"dtype\": \"float16\", \"shape\": [-2], \"size\": 9007199254740993, \"memory_type\": \"hbm\"}]},\n"
    "    {\"name\": \"c\", \"type\": \"Const\", \"outputs\": [{\"dtype\": \"int4\", \"shape\": []}]},\n"
    "    {\"name\": \"mm\", \"type\": \"MatMul\", \"inputs\": [\"x:0\", \"v:0\"], \"stream\": 2,\n"
    "     \"control_inputs\": [\"c\"],\n"
    "     \"input_descs\": [{}, {\"memory_type\": \"ts\", \"attrs\": {\"_special_input_size\": 64}}],\n"
    "     \"outputs\": [{\"dtype\": \"float32\", \"shape\": [8, 512],\n"
    "                  \"attrs\": {\"ref_var_src_var_name\": \"v\",\n"
    "                            \"td\": {\"tensor_desc\": {\"dtype\": \"int8\", \"shape\": [3], \"size\": 3}}}}],\n"
    "     \"attrs\": {\"b\": true, \"i\": -42, \"big\": 9223372036854775807, \"small\": -9223372036854775808,\n"
    "               \"huge\": 9223372036854775808, \"f1\": 1.0, \"f2\": 2.5e-3, \"f3\": 1E2, \"f4\": 0.1,\n"
    "               \"s\": \"h\\u00e9llo \\\"q\\\"\\n\", \"u\": \"\xe2\x82\xac\",\n"
    "               \"li\": [1, -2, 3], \"lf\": [1, 2.5], \"ls\": [\"a\", \"\"], \"lb\": [true, false],\n"
    "               \"lli\": [[0, 1], [], [2]], \"empty\": [], \"atomic_output_index\": [],\n"
    "               \"_output_inplace_ability\": [], \"raw\": {\"bytes_base64\": \"AAEC/w==\"},\n"
    "               \"continuous_input\": true, \"_input_memory_type\": [1, 0]}},\n"
    "    {\"name\": \"add\", \"type\": \"Add\", \"inputs\": [\"mm:0\", \"\"],\n"
    "     \"outputs\": [{\"dtype\": \"float32\", \"shape\": [8, 512]}]},\n"
    "    {\"name\": \"upd\", \"type\": \"Assign\", \"inputs\": [\"v:0\", \"add:0\"],\n"
    "     \"input_names\": [\"ref\", \"\"], \"output_names\": [\"ref\"],\n"
    "     \"outputs\": [{\"dtype\": \"float16\", \"shape\": [-2], \"reuse_input\": true, \"reuse_input_index\": 0}]},\n"
    "    {\"name\": \"loop\", \"type\": \"While\", \"inputs\": [\"add:0\"], \"subgraphs\": [\"cond\", \"body\"],\n"
    "     \"outputs\": [{\"dtype\": \"float32\", \"shape\": [8, 512]}]},\n"
    "    {\"name\": \"out\", \"type\": \"NetOutput\", \"inputs\": [\"loop:0\", \"upd:0\"]}\n"
    "   ]},\n"
    "  {\"name\": \"cond\", \"parent\": \"loop\", \"nodes\": [\n"
    "    {\"name\": \"cd\", \"type\": \"Data\", \"attrs\": {\"_parent_node_index\": 0},\n"
    "     \"outputs\": [{\"dtype\": \"float32\", \"shape\": [8, 512]}]},\n"
    "    {\"name\": \"co\", \"type\": \"NetOutput\", \"inputs\": [\"cd:0\"]}]},\n"
    "  {\"name\": \"body\", \"parent\": \"loop\", \"nodes\": [\n"
    "    {\"name\": \"bo\", \"type\": \"NetOutput\", \"inputs\": [\"r:0\"],\n"
    "     \"input_descs\": [{\"attrs\": {\"_parent_node_index\": 0}}]},\n"
    "    {\"name\": \"r\", \"type\": \"Relu\", \"inputs\": [\"bd:0\"],\n"
    "     \"outputs\": [{\"dtype\": \"float32\", \"shape\": [8, 512]}]},\n"
    "    {\"name\": \"bd\", \"type\": \"Data\", \"attrs\": {\"_parent_node_index\": 0},\n"
    "     \"outputs\": [{\"dtype\": \"float32\", \"shape\": [8, 512]}]}]}\n"
    " ]\n"
    "}\n";

static void check_full_values(const gm_model *m)
{
    assert_string_equal(gm_model_name(m), "everything");
    assert_int_equal(gm_model_option_count(m), 2);
    assert_string_equal(gm_model_option(m, "ge.featureBaseRefreshable"), "1");
    assert_int_equal(gm_model_graph_count(m), 3);
    assert_int_equal(gm_graph_node_count(gm_model_root(m)), 8);
    assert_int_equal(gm_model_node_count(m), 13);
    const gm_attr *ga = gm_attr_find(*gm_graph_attrs(gm_model_root(m)), "_dynamic_shape_partitioned");
    assert_non_null(ga);
    assert_int_equal(gm_attr_get_kind(ga), GM_ATTR_BOOL);
    assert_false(gm_attr_bool(ga));

    /* Descs: GE dtype names, unknown dims, memory types, layout, explicit sizes past 2^53. */
    const gm_tensor_desc *d = gm_node_output_desc(gm_model_find_node(m, "x"), 0);
    assert_int_equal(gm_desc_dtype(d), GM_DT_FLOAT);
    assert_int_equal(gm_desc_ndims(d), 2);
    assert_int_equal(gm_desc_dims(d)[0], -1);
    assert_int_equal(gm_desc_mem_type(d), GM_MEM_P2P);
    assert_string_equal(gm_desc_layout(d), "NCHW");
    assert_false(gm_desc_size_given(d));
    assert_int_equal(gm_desc_size(d), GM_SIZE_DYNAMIC);
    d = gm_node_output_desc(gm_model_find_node(m, "v"), 0);
    assert_int_equal(gm_desc_dtype(d), GM_DT_FLOAT16);
    assert_int_equal(gm_desc_dims(d)[0], -2);
    assert_true(gm_desc_size_given(d));
    assert_true(gm_desc_size(d) == INT64_C(9007199254740993));
    d = gm_node_output_desc(gm_model_find_node(m, "c"), 0);
    assert_int_equal(gm_desc_ndims(d), 0);
    assert_int_equal(gm_desc_size(d), 1); /* one int4 rounds up to a byte */

    /* Edges, streams, input descs, names. */
    gm_node *mm = gm_model_find_node(m, "mm");
    int32_t idx = -1;
    assert_int_equal(gm_node_stream(mm), 2);
    assert_int_equal(gm_node_input_count(mm), 2);
    assert_ptr_equal(gm_node_input(mm, 1, &idx), gm_model_find_node(m, "v"));
    assert_int_equal(idx, 0);
    assert_int_equal(gm_node_control_input_count(mm), 1);
    assert_ptr_equal(gm_node_control_input(mm, 0), gm_model_find_node(m, "c"));
    assert_int_equal(gm_desc_mem_type(gm_node_input_desc(mm, 1)), GM_MEM_TS);
    assert_int_equal(gm_attrs_get_int(*gm_desc_attrs(gm_node_input_desc(mm, 1)), "_special_input_size", 0), 64);
    gm_node *add = gm_model_find_node(m, "add");
    assert_null(gm_node_input(add, 1, &idx));
    gm_node *upd = gm_model_find_node(m, "upd");
    assert_string_equal(gm_node_input_name(upd, 0), "ref");
    assert_string_equal(gm_node_input_name(upd, 1), "value"); /* "" keeps the op default */
    int64_t ri = -1;
    assert_true(gm_desc_reuse_input(gm_node_output_desc(upd, 0), &ri));
    assert_int_equal(ri, 0);
    gm_node *loop = gm_model_find_node(m, "loop");
    assert_int_equal(gm_node_subgraph_count(loop), 2);
    assert_string_equal(gm_graph_name(gm_node_subgraph(loop, 1)), "body");
    assert_ptr_equal(gm_graph_parent(gm_model_find_graph(m, "body")), loop);

    /* Attribute kinds from the value's text. */
    const gm_attr *a;
    a = node_attr(m, "mm", "b");
    assert_int_equal(gm_attr_get_kind(a), GM_ATTR_BOOL);
    assert_true(gm_attr_bool(a));
    a = node_attr(m, "mm", "i");
    assert_int_equal(gm_attr_get_kind(a), GM_ATTR_INT);
    assert_int_equal(gm_attr_int(a), -42);
    a = node_attr(m, "mm", "big");
    assert_int_equal(gm_attr_get_kind(a), GM_ATTR_INT);
    assert_true(gm_attr_int(a) == INT64_MAX);
    a = node_attr(m, "mm", "small");
    assert_int_equal(gm_attr_get_kind(a), GM_ATTR_INT);
    assert_true(gm_attr_int(a) == INT64_MIN);
    a = node_attr(m, "mm", "huge"); /* past int64: a float */
    assert_int_equal(gm_attr_get_kind(a), GM_ATTR_FLOAT);
    assert_true(gm_attr_float(a) == 9223372036854775808.0);
    a = node_attr(m, "mm", "f1");
    assert_int_equal(gm_attr_get_kind(a), GM_ATTR_FLOAT);
    assert_true(gm_attr_float(a) == 1.0);
    a = node_attr(m, "mm", "f2");
    assert_int_equal(gm_attr_get_kind(a), GM_ATTR_FLOAT);
    assert_true(gm_attr_float(a) == 2.5e-3);
    a = node_attr(m, "mm", "f3");
    assert_int_equal(gm_attr_get_kind(a), GM_ATTR_FLOAT);
    assert_true(gm_attr_float(a) == 100.0);
    a = node_attr(m, "mm", "s");
    assert_int_equal(gm_attr_get_kind(a), GM_ATTR_STRING);
    assert_string_equal(gm_attr_string(a, NULL), "h\xc3\xa9llo \"q\"\n");
    a = node_attr(m, "mm", "li");
    assert_int_equal(gm_attr_get_kind(a), GM_ATTR_LIST_INT);
    assert_int_equal(gm_attr_list_len(a), 3);
    assert_int_equal(gm_attr_list_int(a, 1), -2);
    a = node_attr(m, "mm", "lf");
    assert_int_equal(gm_attr_get_kind(a), GM_ATTR_LIST_FLOAT);
    assert_true(gm_attr_list_float(a, 0) == 1.0 && gm_attr_list_float(a, 1) == 2.5);
    a = node_attr(m, "mm", "ls");
    assert_int_equal(gm_attr_get_kind(a), GM_ATTR_LIST_STRING);
    assert_string_equal(gm_attr_list_string(a, 1), "");
    a = node_attr(m, "mm", "lb");
    assert_int_equal(gm_attr_get_kind(a), GM_ATTR_LIST_BOOL);
    assert_true(gm_attr_list_bool(a, 0) && !gm_attr_list_bool(a, 1));
    a = node_attr(m, "mm", "lli");
    assert_int_equal(gm_attr_get_kind(a), GM_ATTR_LIST_LIST_INT);
    assert_int_equal(gm_attr_list_len(a), 3);
    assert_int_equal(gm_attr_list_list_len(a, 0), 2);
    assert_int_equal(gm_attr_list_list_len(a, 1), 0);
    assert_int_equal(gm_attr_list_list_int(a, 2, 0), 2);
    a = node_attr(m, "mm", "empty"); /* unknown attribute, []: list_int */
    assert_int_equal(gm_attr_get_kind(a), GM_ATTR_LIST_INT);
    assert_int_equal(gm_attr_list_len(a), 0);
    a = node_attr(m, "mm", "_output_inplace_ability"); /* known: its own list kind */
    assert_int_equal(gm_attr_get_kind(a), GM_ATTR_LIST_LIST_INT);
    a = node_attr(m, "mm", "raw");
    assert_int_equal(gm_attr_get_kind(a), GM_ATTR_BYTES);
    size_t blen = 0;
    const char *bytes = gm_attr_string(a, &blen);
    assert_int_equal(blen, 4);
    assert_memory_equal(bytes, "\x00\x01\x02\xff", 4);
    const gm_attr *td = gm_attr_find(*gm_desc_attrs(gm_node_output_desc(mm, 0)), "td");
    assert_non_null(td);
    assert_int_equal(gm_attr_get_kind(td), GM_ATTR_TENSOR_DESC);
    assert_int_equal(gm_desc_dtype(gm_attr_tensor_desc(td)), GM_DT_INT8);
    assert_int_equal(gm_desc_size(gm_attr_tensor_desc(td)), 3);
}

static void test_full_model(void **state)
{
    (void)state;
    gm_model *m = read_json_ok(k_full);
    check_full_values(m);
    gm_model_free(m);

    char *text = round_trip(k_full);
    /* Everything survives a write: read the written text back and check it all again. */
    m = read_json_ok(text);
    check_full_values(m);
    gm_model_free(m);

    /* The writer's choices: canonical dtype names, floats that stay floats, only non-default
     * fields, the subgraph's parent, the typed forms. */
    assert_non_null(strstr(text, "\"dtype\": \"float32\""));
    assert_null(strstr(text, "DT_FLOAT"));
    assert_non_null(strstr(text, "\"f1\": 1.0"));
    assert_non_null(strstr(text, "\"f3\": 100.0"));
    assert_non_null(strstr(text, "\"f4\": 0.1,"));
    assert_non_null(strstr(text, "\"size\": 9007199254740993"));
    assert_non_null(strstr(text, "\"stream\": 2"));
    assert_null(strstr(text, "\"stream\": 0"));
    assert_non_null(strstr(text, "\"parent\": \"loop\""));
    assert_non_null(strstr(text, "\"bytes_base64\": \"AAEC/w==\""));
    assert_non_null(strstr(text, "\"tensor_desc\": {"));
    assert_non_null(strstr(text, "\"memory_type\": \"hbm\"")); /* given explicitly: kept */
    assert_non_null(strstr(text, "\"s\": \"h\xc3\xa9llo \\\"q\\\"\\n\""));
    /* Nodes of each graph in topological order: body's Data first though written last. */
    assert_true(strstr(text, "\"name\": \"bd\"") < strstr(text, "\"name\": \"bo\""));
    free(text);
}

/* Values a model built in memory can hold that the text must still carry. */
static void test_writer_edge_values(void **state)
{
    (void)state;
    gm_error err;
    gm_error_clear(&err);
    gm_model *m = gm_model_new("built");
    gm_graph *g = gm_model_add_graph(m, "root", NULL, &err);
    assert_non_null(g);
    gm_node *n = gm_graph_add_node(g, "k", "Const", &err);
    assert_non_null(n);
    assert_non_null(gm_node_add_output(n));
    gm_attr **as = gm_node_attrs(n);
    assert_int_equal(gm_attr_set_float(as, "whole", 3.0), GM_OK);
    assert_int_equal(gm_attr_set_float(as, "inf", INFINITY), GM_OK);
    assert_int_equal(gm_attr_set_string(as, "latin1", "caf\xe9"), GM_OK); /* not UTF-8 */
    const char *none[1] = {NULL};
    assert_int_equal(gm_attr_set_list_string(as, "nostr", none, 0), GM_OK);
    const double fl[2] = {2.0, -0.5};
    assert_int_equal(gm_attr_set_list_float(as, "lf", fl, 2), GM_OK);
    assert_int_equal(gm_model_finalize(m, &err), GM_OK);

    char *text = write_json_ok(m);
    assert_non_null(strstr(text, "\"whole\": 3.0"));
    assert_non_null(strstr(text, "\"inf\": 1e999"));
    gm_model *back = read_json_ok(text);
    const gm_attr *a = node_attr(back, "k", "whole");
    assert_int_equal(gm_attr_get_kind(a), GM_ATTR_FLOAT);
    assert_true(gm_attr_float(a) == 3.0);
    a = node_attr(back, "k", "inf");
    assert_true(isinf(gm_attr_float(a)) && gm_attr_float(a) > 0);
    a = node_attr(back, "k", "latin1"); /* documented: such a string comes back as bytes */
    assert_int_equal(gm_attr_get_kind(a), GM_ATTR_BYTES);
    size_t len;
    assert_memory_equal(gm_attr_string(a, &len), "caf\xe9", 4);
    assert_int_equal(len, 4);
    a = node_attr(back, "k", "nostr"); /* documented: an empty list has no element type */
    assert_int_equal(gm_attr_get_kind(a), GM_ATTR_LIST_INT);
    a = node_attr(back, "k", "lf");
    assert_int_equal(gm_attr_get_kind(a), GM_ATTR_LIST_FLOAT);
    assert_true(gm_attr_list_float(a, 0) == 2.0);
    char *again = write_json_ok(back);
    assert_string_equal(again, text);
    free(again);
    gm_model_free(back);
    free(text);

    /* NaN has no JSON spelling: a clear error naming the attribute, no text. */
    assert_int_equal(gm_attr_set_float(as, "nan", NAN), GM_OK);
    char *t = (char *)"x";
    size_t tl = 7;
    assert_int_equal(gm_model_write_json(m, &t, &tl, &err), GM_ERR_INPUT);
    assert_null(t);
    assert_non_null(strstr(err.message, "node 'k'"));
    assert_non_null(strstr(err.message, "attribute 'nan'"));
    assert_non_null(strstr(err.message, "NaN"));
    gm_model_free(m);
}

/* Each allocation of a read and a write fails in turn: every failure must come back as a
 * clean GM_ERR_NOMEM with no model, no leak (LeakSanitizer) and no crash. */
static void test_alloc_failures(void **state)
{
    (void)state;
    long n;
    for (n = 0; n < 100000; n++) {
        gm_alloc_fail_after(n);
        gm_model *m = NULL;
        gm_error err;
        gm_error_clear(&err);
        gm_status st = gm_model_read_json(k_full, strlen(k_full), "t.json", &m, &err);
        if (st == GM_OK) {
            char *text = NULL;
            size_t len;
            st = gm_model_write_json(m, &text, &len, &err);
            gm_model_free(m);
            free(text);
            if (st == GM_OK) break;
            assert_null(text);
        } else {
            assert_null(m);
        }
        gm_alloc_fail_after(-1);
        if (st != GM_ERR_NOMEM) print_message("allocation %ld: status %d: %s\n", n, (int)st, err.message);
        assert_int_equal(st, GM_ERR_NOMEM);
        assert_non_null(strstr(err.message, "out of memory"));
    }
    gm_alloc_fail_after(-1);
    assert_true(n > 100); /* the loop really went through the allocations */
}

/* ---- reader errors --------------------------------------------------------------------------- */

static void test_error_malformed(void **state)
{
    (void)state;
    /* Truncated: the position is the end of the text. */
    ERR("{\n \"graphmem\": 1,\n \"graphs\": [", "t.json:3:", "malformed JSON", NULL);
    /* A bad token: its line and column. */
    ERR("{\n \"graphmem\": 1,\n   \"graphs\": [}\n}", "t.json:3:", "malformed JSON", NULL);
    ERR("", "t.json:1:1:", "empty", NULL);
    ERR(MODEL(NODE("")) " x", "malformed JSON", "after the end", NULL);
    ERR("[1]", "top level must be an object", NULL, NULL);
    ERR("{\"a\": \"abc", "t.json:1:11:", "unexpected end of text", NULL);
    /* Numbers JSON does not allow though strtod (inside cJSON) would. */
    ERR("{\"graphmem\": 01}", "t.json:1:14:", "bad number '01'", NULL);
    ERR("{\"graphmem\": 1.}", "t.json:1:14:", "bad number '1.'", NULL);
    /* Not UTF-8: line:col of the bad byte. */
    ERR("{\n \"graphmem\": 1, \"name\": \"a\xff\"}", "t.json:2:27:", "UTF-8", NULL);
    ERR("{\"name\": \"\xc0\xaf\"}", "t.json:1:11:", "UTF-8", NULL); /* overlong '/' */
    ERR("{\"name\": \"\xed\xa0\x80\"}", "UTF-8", NULL, NULL);        /* surrogate */
    /* Strings the IR cannot hold. */
    ERR("{\"name\": \"a\\u0000b\"}", "t.json:1:12:", "\\u0000", NULL);
    ERR("{\"name\": \"a\tb\"}", "t.json:1:12:", "control character", NULL);
    const char nul[] = "{\"name\": \"a\0b\"}";
    expect_error(nul, sizeof nul - 1, "t.json:1:12:", "control character", NULL);
}

static void test_error_keys_and_types(void **state)
{
    (void)state;
    ERR("{\"graphmem\": 1, \"graphs\": [], \"nmae\": \"x\"}", "unknown key 'nmae'", NULL, NULL);
    ERR(MODEL(NODE(", \"stram\": 1")), "graph 'root': node 'n': unknown key 'stram'", NULL, NULL);
    ERR("{\"graphmem\": 1, \"graphs\": [{\"name\": \"root\", \"node\": []}]}", "graph 'root': unknown key 'node'",
        NULL, NULL);
    ERR(MODEL(NODE(", \"outputs\": [{\"dtype\": \"float32\", \"shpe\": [1]}]")), "node 'n': output 0: unknown key 'shpe'",
        NULL, NULL);
    ERR(MODEL("{\"name\": \"a\", \"type\": \"Data\", \"outputs\": [{}]},"
              NODE(", \"inputs\": [\"a:0\"], \"input_descs\": [{\"memtype\": \"p2p\"}]")),
        "node 'n': input_descs[0]: unknown key 'memtype'", NULL, NULL);
    ERR(MODEL(NODE(", \"type\": \"Add\"")), "node 'n': duplicate key 'type'", NULL, NULL);
    ERR(MODEL(NODE(", \"attrs\": {\"a\": 1, \"b\": 2, \"a\": 3}")), "duplicate key 'a'", NULL, NULL);
    ERR("{\"graphmem\": 1, \"options\": {\"k\": \"1\", \"k\": \"2\"}, \"graphs\": [{\"name\": \"root\"}]}",
        "options", "duplicate key 'k'", NULL);
    ERR("{\"graphmem\": 1, \"graphmem\": 1, \"graphs\": []}", "duplicate key 'graphmem'", NULL, NULL);
    ERR(MODEL(NODE(", \"stream\": \"1\"")), "node 'n': field 'stream' must be an integer", NULL, NULL);
    ERR(MODEL(NODE(", \"stream\": 1.5")), "node 'n': field 'stream' must be an integer", NULL, NULL);
    ERR(MODEL(NODE(", \"inputs\": \"a:0\"")), "field 'inputs' must be an array", NULL, NULL);
    ERR(MODEL("{\"name\": 3, \"type\": \"Relu\"}"), "field 'name' must be a string", NULL, NULL);
    ERR(MODEL("{\"type\": \"Relu\"}"), "node 0", "missing field 'name'", NULL);
    ERR(MODEL(NODE(", \"outputs\": [{\"reuse_input\": 1}]")), "output 0", "'reuse_input' must be a bool", NULL);
    ERR("{\"graphmem\": 1, \"options\": {\"k\": 1}, \"graphs\": [{\"name\": \"root\"}]}", "option 'k' must be a string",
        NULL, NULL);
    ERR("{\"graphmem\": 2, \"graphs\": [{\"name\": \"root\"}]}", "version 2", NULL, NULL);
    ERR("{\"graphmem\": \"1\", \"graphs\": [{\"name\": \"root\"}]}", "version", NULL, NULL);
    ERR("{\"graphs\": [{\"name\": \"root\"}]}", "version", NULL, NULL);
    ERR("{\"graphmem\": 1, \"graphs\": []}", "'graphs' is empty", NULL, NULL);
    ERR("{\"graphmem\": 1, \"graphs\": [{\"name\": \"root\"}, {\"name\": \"sub\"}]}", "graph 'sub'",
        "subgraph without a parent", NULL);
}

static void test_error_desc_values(void **state)
{
    (void)state;
    ERR(MODEL(NODE(", \"outputs\": [{\"dtype\": \"float33\"}]")), "node 'n': output 0", "unknown dtype 'float33'", NULL);
    ERR(MODEL(NODE(", \"outputs\": [{\"memory_type\": \"ddr\"}]")), "output 0", "memory_type 'ddr'", NULL);
    ERR(MODEL(NODE(", \"outputs\": [{}, {\"size\": -4}]")), "output 1", "'size' is negative", NULL);
    ERR(MODEL(NODE(", \"outputs\": [{\"size\": 10.5}]")), "output 0", "'size' must be an integer", NULL);
    ERR(MODEL(NODE(", \"outputs\": [{\"size\": 1e3}]")), "output 0", "'size' must be an integer", NULL);
    ERR(MODEL(NODE(", \"outputs\": [{\"size\": 9223372036854775808}]")), "output 0", "'size' overflows", NULL);
    ERR(MODEL(NODE(", \"outputs\": [{\"size\": \"8\"}]")), "output 0", "'size' must be an integer", NULL);
    ERR(MODEL(NODE(", \"outputs\": [{\"shape\": [2, -3]}]")), "output 0", "dim 1 is -3", NULL);
    ERR(MODEL(NODE(", \"outputs\": [{\"shape\": [2.0]}]")), "output 0", "dim 0 must be an integer", NULL);
    ERR(MODEL(NODE(", \"outputs\": [{\"reuse_input\": true, \"reuse_input_index\": -1}]")), "reuse_input_index",
        "negative", NULL);
    /* The byte size of a shape overflowing 64 bits (checked by finalize). */
    ERR(MODEL(NODE(", \"outputs\": [{\"dtype\": \"int64\", \"shape\": [4294967296, 4294967296]}]")), "node 'n'",
        "overflow", NULL);
}

static void test_error_inputs(void **state)
{
    (void)state;
    ERR(MODEL("{\"name\": \"a\", \"type\": \"Data\", \"outputs\": [{}]}," NODE(", \"inputs\": [\"a:x\"]")),
        "graph 'root': node 'n': input 0 'a:x'", "bad output index", NULL);
    ERR(MODEL(NODE(", \"inputs\": [\"\", \"a\"]")), "node 'n': input 1 'a'", "producer:index", NULL);
    ERR(MODEL(NODE(", \"inputs\": [\":0\"]")), "input 0 ':0'", NULL, NULL);
    ERR(MODEL(NODE(", \"inputs\": [\"a:\"]")), "input 0 'a:'", "missing output index", NULL);
    ERR(MODEL(NODE(", \"inputs\": [\"a:-1\"]")), "input 0 'a:-1'", "bad output index", NULL);
    ERR(MODEL(NODE(", \"inputs\": [\"a:99999999999\"]")), "input 0", "too large", NULL);
    ERR(MODEL(NODE(", \"inputs\": [0]")), "input 0 must be a string", NULL, NULL);
    ERR(MODEL(NODE(", \"inputs\": [\"zz:0\"]")), "t.json: graph 'root': node 'n': input 0 names unknown node 'zz'",
        NULL, NULL);
    ERR(MODEL(NODE(", \"control_inputs\": [\"\"]")), "'control_inputs': entry 0 is empty", NULL, NULL);
    ERR(MODEL(NODE(", \"input_descs\": [{}]")), "'input_descs' has 1 entries but the node has 0 inputs", NULL, NULL);
    ERR(MODEL(NODE(", \"outputs\": [{}], \"output_names\": [\"y\", \"z\"]")), "'output_names' has 2 entries", NULL,
        NULL);
}

/* The reader notes, while each node's descs are fresh, which graphs hold an output of unknown
 * size, and sets every graph's known shape after finalize: the passes then find it cached, and
 * it is what they would find walking the graph themselves (a graph marked
 * _dynamic_shape_partitioned is not known either). */
static void test_known_shape_noted_while_reading(void **state)
{
    (void)state;
    static const char text[] =
        "{\"graphmem\":1,\"name\":\"ks\",\"graphs\":["
        "{\"name\":\"root\",\"nodes\":["
        "{\"name\":\"p\",\"type\":\"Data\",\"attrs\":{\"index\":0},\"outputs\":[{\"dtype\":\"bool\",\"shape\":[]}]},"
        "{\"name\":\"x\",\"type\":\"Data\",\"attrs\":{\"index\":1},\"outputs\":[{\"dtype\":\"float32\",\"shape\":[4]}]},"
        "{\"name\":\"iff\",\"type\":\"If\",\"inputs\":[\"p:0\",\"x:0\"],\"subgraphs\":[\"dyn\",\"part\"],"
        "\"outputs\":[{\"dtype\":\"float32\",\"shape\":[4]}]},"
        "{\"name\":\"out\",\"type\":\"NetOutput\",\"inputs\":[\"iff:0\"]}]},"
        "{\"name\":\"dyn\",\"parent\":\"iff\",\"nodes\":["
        "{\"name\":\"d_d\",\"type\":\"Data\",\"attrs\":{\"_parent_node_index\":1},\"outputs\":[{\"dtype\":\"float32\",\"shape\":[4]}]},"
        "{\"name\":\"d_u\",\"type\":\"Unique\",\"inputs\":[\"d_d:0\"],\"outputs\":[{\"dtype\":\"float32\",\"shape\":[-1]}]},"
        "{\"name\":\"d_o\",\"type\":\"NetOutput\",\"inputs\":[\"d_d:0\"],\"input_descs\":[{\"attrs\":{\"_parent_node_index\":0}}]}]},"
        "{\"name\":\"part\",\"parent\":\"iff\",\"attrs\":{\"_dynamic_shape_partitioned\":true},\"nodes\":["
        "{\"name\":\"e_d\",\"type\":\"Data\",\"attrs\":{\"_parent_node_index\":1},\"outputs\":[{\"dtype\":\"float32\",\"shape\":[4]}]},"
        "{\"name\":\"e_o\",\"type\":\"NetOutput\",\"inputs\":[\"e_d:0\"],\"input_descs\":[{\"attrs\":{\"_parent_node_index\":0}}]}]}]}";
    gm_model *m = NULL;
    gm_error err;
    if (gm_model_read_json(text, strlen(text), "ks.json", &m, &err) != GM_OK) fail_msg("%s", err.message);
    static const char *const names[] = {"root", "dyn", "part"};
    static const int8_t want[] = {1, 0, 0};
    for (size_t i = 0; i < 3; i++) {
        gm_graph *g = gm_model_find_graph(m, names[i]);
        assert_non_null(g);
        assert_int_equal(g->known_shape, want[i]); /* set by the reader, not left to compute */
        g->known_shape = -1;                        /* what a walk of the graph finds */
        assert_int_equal(gm_pass_graph_known_shape(g), want[i]);
    }
    gm_model_free(m);
}

/* The emitter shows a reader on another thread how far its text is final (json_emit.h): every
 * GM_JW_SHOW_EVERY bytes and, let go as done, all of it; before its buffer moves it lets the
 * reader go instead, and the reader is told so under the lock. */
static void test_jw_reader_shown_and_let_go(void **state)
{
    (void)state;
    for (int move = 0; move < 2; move++) {
        gm_jw_reader rd;
        memset(&rd, 0, sizeof rd);
        assert_int_equal(pthread_mutex_init(&rd.lock, NULL), 0);
        atomic_init(&rd.shown, 0);
        atomic_init(&rd.done, false);
        gm_jw w = {.wrap_depth = 2};
        const size_t total = 3 * GM_JW_SHOW_EVERY;
        assert_true(gm_jw_room(&w, move ? 64 : total + 64));
        gm_jw_attach(&w, &rd);
        assert_ptr_equal(rd.buf, w.buf);
        size_t seen = 0;
        bool grew = false;
        for (size_t k = 0; k < total / 16; k++) {
            gm_jw_put(&w, "0123456789abcdef", 16);
            size_t now = atomic_load(&rd.shown);
            assert_true(now >= seen && now <= w.len); /* never ahead of the text, never back */
            seen = now;
            grew |= rd.buf != w.buf;
        }
        assert_int_equal(w.len, total);
        if (move) {
            /* the buffer moved at once: the reader was let go, shown nothing more, not done */
            assert_true(grew);
            assert_true(rd.moving);
            assert_null(w.reader);
            assert_int_equal(atomic_load(&rd.shown), 0);
        } else {
            assert_false(rd.moving);
            assert_true(seen >= total - GM_JW_SHOW_EVERY);
            gm_jw_detach(&w, true);
            assert_int_equal(atomic_load(&rd.shown), total);
            assert_true(atomic_load(&rd.done));
        }
        gm_jw_detach(&w, true); /* let go already: nothing */
        assert_int_equal(atomic_load(&rd.done), !move);
        gm_jw_done(&w);
        gm_free(w.buf);
        pthread_mutex_destroy(&rd.lock);
    }
}

/* The reader connects an input naming a node given before it at once, and leaves the others to
 * finalize: a producer's consumers still stand in the order of the file (a consumer given
 * before its producer first), and what is wrong with an input is told as before — an index
 * the earlier node does not have, a node that names itself (a cycle, not a missing output). */
static void test_inputs_connected_in_order(void **state)
{
    (void)state;
    const char *text = MODEL("{\"name\": \"a\", \"type\": \"Relu\", \"inputs\": [\"p:0\"], \"outputs\": [{}]},"
                             "{\"name\": \"p\", \"type\": \"Data\", \"outputs\": [{}]},"
                             "{\"name\": \"b\", \"type\": \"Add\", \"inputs\": [\"p:0\", \"p:0\"], \"outputs\": [{}]},"
                             "{\"name\": \"c\", \"type\": \"Relu\", \"inputs\": [\"p:0\"], \"outputs\": [{}]},"
                             "{\"name\": \"d\", \"type\": \"Add\", \"inputs\": [\"c:0\", \"a:0\"], \"outputs\": [{}]}");
    gm_model *m = NULL;
    gm_error err;
    if (gm_model_read_json(text, strlen(text), "t.json", &m, &err) != GM_OK) fail_msg("%s", err.message);
    const gm_node *p = gm_model_find_node(m, "p");
    static const char *const want[][2] = {{"a", "0"}, {"b", "0"}, {"b", "1"}, {"c", "0"}};
    assert_int_equal(gm_node_consumer_count(p, 0), 4);
    for (size_t j = 0; j < 4; j++) {
        int32_t idx = -1;
        assert_string_equal(gm_node_name(gm_node_consumer(p, 0, j, &idx)), want[j][0]);
        assert_int_equal(idx, atoi(want[j][1]));
    }
    int32_t si = -1;
    assert_ptr_equal(gm_node_input(gm_model_find_node(m, "d"), 1, &si), gm_model_find_node(m, "a"));
    gm_model_free(m);

    ERR(MODEL("{\"name\": \"a\", \"type\": \"Data\", \"outputs\": [{}]}," NODE(", \"inputs\": [\"a:1\"]")),
        "t.json: graph 'root': node 'n': input 0 'a:1': output index out of range (node 'a' has 1 output)", NULL, NULL);
    ERR(MODEL(NODE(", \"inputs\": [\"n:0\"], \"outputs\": [{}]")), "node 'n' is on a cycle", NULL, NULL);
}

/* Control inputs naming nodes given before are connected as the node is read; once one names a
 * node not read yet, they and those of every later node go to finalize by name: each
 * producer's successors stand in the order of the file either way, a repeat says nothing new,
 * and what is wrong is told as before. */
static void test_control_inputs_connected_in_order(void **state)
{
    (void)state;
    const char *text = MODEL("{\"name\": \"p\", \"type\": \"Data\", \"outputs\": [{}]},"
                             "{\"name\": \"a\", \"type\": \"Relu\", \"control_inputs\": [\"p\"], \"outputs\": [{}]},"
                             "{\"name\": \"b\", \"type\": \"Relu\", \"control_inputs\": [\"p\", \"q\"], \"outputs\": [{}]},"
                             "{\"name\": \"q\", \"type\": \"Data\", \"outputs\": [{}]},"
                             "{\"name\": \"c\", \"type\": \"Relu\", \"control_inputs\": [\"q\", \"p\", \"q\"], \"outputs\": [{}]},"
                             "{\"name\": \"d\", \"type\": \"Relu\", \"control_inputs\": [\"p\"], \"outputs\": [{}]}");
    gm_model *m = NULL;
    gm_error err;
    if (gm_model_read_json(text, strlen(text), "t.json", &m, &err) != GM_OK) fail_msg("%s", err.message);
    static const char *const p_succ[] = {"a", "b", "c", "d"}, *const q_succ[] = {"b", "c"}, *const c_pred[] = {"q", "p"};
    const gm_node *p = gm_model_find_node(m, "p"), *q = gm_model_find_node(m, "q"), *c = gm_model_find_node(m, "c");
    assert_int_equal(gm_node_control_output_count(p), 4);
    for (size_t i = 0; i < 4; i++) assert_string_equal(gm_node_name(gm_node_control_output(p, i)), p_succ[i]);
    assert_int_equal(gm_node_control_output_count(q), 2);
    for (size_t i = 0; i < 2; i++) assert_string_equal(gm_node_name(gm_node_control_output(q, i)), q_succ[i]);
    assert_int_equal(gm_node_control_input_count(c), 2);
    for (size_t i = 0; i < 2; i++) assert_string_equal(gm_node_name(gm_node_control_input(c, i)), c_pred[i]);
    gm_model_free(m);

    ERR(MODEL("{\"name\": \"a\", \"type\": \"Data\", \"outputs\": [{}]}," NODE(", \"control_inputs\": [\"a\", \"zz\"]")),
        "t.json: graph 'root': node 'n': control input 1 names unknown node 'zz'", NULL, NULL);
    ERR(MODEL(NODE(", \"control_inputs\": [\"n\"], \"outputs\": [{}]")), "node 'n' is on a cycle", NULL, NULL);
}

static void test_error_attrs(void **state)
{
    (void)state;
    /* Known attributes must have their kind; a 0/1 is not a bool. */
    ERR(MODEL(NODE(", \"attrs\": {\"_parent_node_index\": \"0\"}")), "node 'n': attribute '_parent_node_index'",
        "wrong kind: expected int, found string", NULL);
    ERR(MODEL(NODE(", \"attrs\": {\"continuous_input\": 1}")), "node 'n': attribute 'continuous_input'",
        "kind: expected bool, found int", NULL);
    ERR(MODEL(NODE(", \"attrs\": {\"index\": 1.0}")), "attribute 'index'", "expected int, found float", NULL);
    ERR(MODEL(NODE(", \"attrs\": {\"continuous_input\": []}")), "attribute 'continuous_input'",
        "expected bool, found empty list", NULL);
    ERR(MODEL(NODE(", \"attrs\": {\"_input_memory_type\": [1.5]}")), "attribute '_input_memory_type'",
        "expected list of int, found list of float", NULL);
    ERR(MODEL(NODE(", \"outputs\": [{\"attrs\": {\"ref_var_src_var_name\": true}}]")),
        "node 'n': output 0: attribute 'ref_var_src_var_name'", "kind", NULL);
    ERR("{\"graphmem\": 1, \"graphs\": [{\"name\": \"root\", \"attrs\": {\"_dynamic_shape_partitioned\": 0}}]}",
        "graph 'root': attribute '_dynamic_shape_partitioned'", "kind", NULL);
    /* Values the format has no attribute kind for. */
    ERR(MODEL(NODE(", \"attrs\": {\"o\": {\"x\": 1}}")), "node 'n': attribute 'o'", "unsupported value", NULL);
    ERR(MODEL(NODE(", \"attrs\": {\"z\": null}")), "attribute 'z'", "unsupported value (null)", NULL);
    ERR(MODEL(NODE(", \"attrs\": {\"mix\": [1, \"a\"]}")), "attribute 'mix'", "unsupported value", NULL);
    ERR(MODEL(NODE(", \"attrs\": {\"mix\": [true, 0]}")), "attribute 'mix'", "unsupported value", NULL);
    ERR(MODEL(NODE(", \"attrs\": {\"ll\": [[1], [2.5]]}")), "attribute 'll'", "unsupported value", NULL);
    ERR(MODEL(NODE(", \"attrs\": {\"ll\": [[1], 2]}")), "attribute 'll'", "unsupported value", NULL);
    ERR(MODEL(NODE(", \"attrs\": {\"lo\": [{}]}")), "attribute 'lo'", "unsupported value", NULL);
    ERR(MODEL(NODE(", \"attrs\": {\"b64\": {\"bytes_base64\": \"abc\"}}")), "attribute 'b64'", "base64", NULL);
    ERR(MODEL(NODE(", \"attrs\": {\"td\": {\"tensor_desc\": {\"dtype\": \"nope\"}}}")),
        "node 'n': attribute 'td': tensor_desc", "unknown dtype 'nope'", NULL);
    ERR(MODEL(NODE(", \"attrs\": 3")), "field 'attrs' must be an object", NULL, NULL);
}

/* ---- node lists read one node at a time ------------------------------------------------------ */

/* The reader parses the text without the graphs' "nodes" arrays, then each node from its own
 * piece of the text, and falls back to parsing the whole text as one when the split cannot be
 * trusted. Which way a text was read must never show. */

/* The same model text read both ways: as given (split), and with the model's "name" key written
 * "n\u0061me", which makes the reader parse the whole text as one. The key comes last, so
 * positions before it are the same in both texts. Both must succeed with the same model, or
 * fail with the same message. */
static void expect_same_both_ways(const char *graphs)
{
    static const char fmt[] = "{\"graphmem\": 1, \"graphs\": [%s],\n \"%s\": \"m\"}";
    size_t cap = strlen(graphs) + sizeof fmt + 16;
    char *split = malloc(cap), *whole = malloc(cap);
    assert_non_null(split);
    assert_non_null(whole);
    snprintf(split, cap, fmt, graphs, "name");
    snprintf(whole, cap, fmt, graphs, "n\\u0061me");
    gm_model *ms = NULL, *mw = NULL;
    gm_error es, ew;
    gm_error_clear(&es);
    gm_error_clear(&ew);
    gm_status ss = gm_model_read_json(split, strlen(split), "t.json", &ms, &es);
    gm_status sw = gm_model_read_json(whole, strlen(whole), "t.json", &mw, &ew);
    if (ss != sw || strcmp(es.message, ew.message) != 0)
        print_message("graphs: %s\nsplit: %d %s\nwhole: %d %s\n", graphs, (int)ss, es.message, (int)sw, ew.message);
    assert_int_equal(ss, sw);
    assert_string_equal(es.message, ew.message);
    if (ss == GM_OK) {
        char *ts = write_json_ok(ms), *tw = write_json_ok(mw);
        assert_string_equal(ts, tw);
        free(ts);
        free(tw);
    }
    gm_model_free(ms);
    gm_model_free(mw);
    free(split);
    free(whole);
}

#define G_ROOT(nodes) "{\"name\": \"root\", \"nodes\": [" nodes "]}"
#define N_DATA(name) "{\"name\": \"" name "\", \"type\": \"Data\", \"outputs\": [{}]}"

static void test_split_empty_and_absent_nodes(void **state)
{
    (void)state;
    /* Empty, blank and absent "nodes", between graphs that have nodes: each graph must get its
     * own nodes (the recorded arrays are matched to the graphs in document order). */
    static const char text[] =
        "{\"graphmem\": 1, \"name\": \"m\", \"graphs\": [\n"
        " {\"name\": \"root\", \"nodes\": [\n"
        "  {\"name\": \"x\", \"type\": \"Data\", \"outputs\": [{}]},\n"
        "  {\"name\": \"w\", \"type\": \"While\", \"inputs\": [\"x:0\"], \"subgraphs\": [\"cond\", \"body\"],"
        "   \"outputs\": [{}]},\n"
        "  {\"name\": \"k\", \"type\": \"Case\", \"inputs\": [\"x:0\"], \"subgraphs\": [\"b0\", \"b1\"],\n"
        "   \"outputs\": [{}]}]},\n"
        " {\"name\": \"cond\", \"parent\": \"w\", \"nodes\": []},\n"
        " {\"name\": \"body\", \"parent\": \"w\"},\n"
        " {\"name\": \"b0\", \"parent\": \"k\", \"nodes\": [ \n\t ], \"attrs\": {\"a\": 1}},\n"
        " {\"nodes\": [{\"name\": \"bd\", \"type\": \"Data\", \"attrs\": {\"_parent_node_index\": 0},\n"
        "   \"outputs\": [{\"shape\": [2, 3]}]}], \"name\": \"b1\", \"parent\": \"k\"}\n"
        "]}\n";
    gm_model *m = read_json_ok(text);
    assert_int_equal(gm_model_graph_count(m), 5);
    const char *names[] = {"root", "cond", "body", "b0", "b1"};
    const size_t counts[] = {3, 0, 0, 0, 1};
    for (size_t i = 0; i < 5; i++) {
        gm_graph *g = gm_model_find_graph(m, names[i]);
        assert_non_null(g);
        assert_int_equal(gm_graph_node_count(g), counts[i]);
    }
    gm_node *bd = gm_model_find_node(m, "bd");
    assert_non_null(bd);
    assert_string_equal(gm_graph_name(gm_node_graph(bd)), "b1");
    assert_int_equal(gm_desc_dims(gm_node_output_desc(bd, 0))[1], 3);
    assert_int_equal(gm_attr_int(node_attr(m, "bd", "_parent_node_index")), 0);
    gm_model_free(m);
    char *once = round_trip(text);
    free(once);

    /* No graph has "nodes" at all. */
    m = read_json_ok("{\"graphmem\": 1, \"graphs\": [{\"name\": \"root\"}]}");
    assert_int_equal(gm_model_node_count(m), 0);
    gm_model_free(m);
}

static void test_split_syntax_errors(void **state)
{
    (void)state;
    /* A syntax error inside a node: the line:column of the text, in the node. */
    ERR("{\"graphmem\": 1, \"graphs\": [{\"name\": \"root\", \"nodes\": [\n"
        "  {\"name\": \"a\", \"type\": \"Data\", \"outputs\": [{}]},\n"
        "  {\"name\": \"b\", \"type\" \"Relu\"}\n"
        "]}]}",
        "t.json:3:24:", "malformed JSON near '\"Relu\"}'", NULL);
    ERR(MODEL(NODE(", \"attrs\": {\"a\": [1, 2,]}")), "t.json:1:119:", "malformed JSON near ']}}]}]}'", NULL);
    /* A missing comma between two nodes: at the second node. */
    ERR("{\"graphmem\": 1, \"graphs\": [{\"name\": \"root\", \"nodes\": [\n"
        "  {\"name\": \"a\", \"type\": \"Data\"}\n"
        "  {\"name\": \"b\", \"type\": \"Data\"}]}]}",
        "t.json:3:3:", "malformed JSON near '{\"name\": \"b\", \"t'", NULL);
    /* A trailing comma, and an empty element: where the missing value should start. */
    ERR("{\"graphmem\": 1, \"graphs\": [{\"name\": \"root\", \"nodes\": [\n"
        "  {\"name\": \"a\", \"type\": \"Data\"},\n"
        "]}]}",
        "t.json:3:1:", "malformed JSON near ']}]}'", NULL);
    ERR(MODEL(","), "t.json:1:68:", "malformed JSON near ',]}]}'", NULL);
    ERR(MODEL(NODE("") ", ," NODE("")), "t.json:1:99:", "malformed JSON near ',{\"name\": \"n\", \"'", NULL);
    /* A syntax error in a node comes before one later in the text outside the nodes, and
     * before any problem of the walk, however early. */
    ERR("{\"graphmem\": 1, \"graphs\": [{\"name\": \"root\", \"nodes\": [\n"
        "  {\"name\": \"a\", \"type\": \"Data\", \"stream\": \"bad\"},\n"
        "  {\"name\": \"b\", \"type\": \"Data\", \"outputs\": [{]}]}],\n"
        " \"options\": {\"x\": }}",
        "t.json:3:47:", "malformed JSON near '}]}],'", NULL);
    ERR("{\"graphmem\": 2, \"graphs\": [{\"name\": \"root\", \"nodes\": [\n"
        "  " N_DATA("a") ",\n"
        "  {\"name\": \"b\" \"type\": \"Data\"}]}]}",
        "t.json:3:16:", "malformed JSON near '\"type\": \"Data\"}]'", NULL);
    /* Then bad numbers and strings, before the walk's problems. */
    ERR("{\"graphmem\": 1, \"graphs\": [{\"name\": \"root\", \"nodes\": [\n"
        "  {\"name\": \"a\", \"type\": \"Data\", \"stream\": \"bad\"},\n"
        "  {\"name\": \"b\", \"type\": \"Data\", \"stream\": 01}]}]}",
        "t.json:3:43:", "bad number '01'", NULL);
    ERR("{\"graphmem\": 1, \"graphs\": [{\"name\": \"root\", \"nodes\": [\n"
        "  {\"name\": \"a\", \"type\": \"Data\", \"stream\": 01},\n"
        "  {\"name\": \"b\", \"type\": \"Data\", \"stream\": [}]}]}",
        "t.json:3:44:", "malformed JSON near '}]}]}'", NULL);
}

static void test_split_keys(void **state)
{
    (void)state;
    /* An escaped key on the path: the whole text is parsed as one, and reads the same. */
    gm_model *m = read_json_ok("{\"graphmem\": 1, \"graphs\": [{\"name\": \"root\", \"n\\u006fdes\": [" N_DATA("a") "]}]}");
    assert_int_equal(gm_model_node_count(m), 1);
    assert_non_null(gm_model_find_node(m, "a"));
    gm_model_free(m);
    m = read_json_ok("{\"graphmem\": 1, \"gr\\u0061phs\": [{\"name\": \"root\", \"nodes\": [" N_DATA("a") "]}]}");
    assert_int_equal(gm_model_node_count(m), 1);
    gm_model_free(m);
    /* A key spelt "nodes" after escaping next to a raw one is still a duplicate. */
    ERR("{\"graphmem\": 1, \"graphs\": [{\"name\": \"root\", \"nodes\": [], \"n\\u006fdes\": []}]}",
        "graph 'root': duplicate key 'nodes'", NULL, NULL);

    /* Two "nodes" arrays in one graph, then a graph after it that has nodes of its own. */
    ERR("{\"graphmem\": 1, \"graphs\": [{\"name\": \"root\", \"nodes\": [" N_DATA("a") "], \"nodes\": []},"
        " {\"name\": \"s\", \"nodes\": [" N_DATA("b") "]}]}",
        "graph 'root': duplicate key 'nodes'", NULL, NULL);
    /* "nodes" that is not an array. */
    ERR("{\"graphmem\": 1, \"graphs\": [{\"name\": \"root\", \"nodes\": {\"a\": " N_DATA("a") "}}]}",
        "graph 'root': field 'nodes' must be an array of nodes, not an object", NULL, NULL);
    ERR("{\"graphmem\": 1, \"graphs\": [{\"name\": \"root\", \"nodes\": 3}, {\"name\": \"s\", \"nodes\": []}]}",
        "graph 'root': field 'nodes' must be an array of nodes, not a number", NULL, NULL);
    /* A graph that is not an object, and "graphs" that is not an array, with "nodes" inside. */
    ERR("{\"graphmem\": 1, \"graphs\": [[{\"nodes\": []}], {\"name\": \"s\", \"nodes\": []}]}",
        "graph 0: must be an object, not an array", NULL, NULL);
    ERR("{\"graphmem\": 1, \"graphs\": {\"g\": {\"name\": \"root\", \"nodes\": []}}}",
        "field 'graphs' must be an array of graphs", NULL, NULL);
}

/* The scan itself: what it records, the skeleton, and when it gives up. */
static void expect_scan(const char *text, gm_json_split_result want)
{
    gm_json_split sp = {0};
    gm_json_split_result got = gm_json_split_scan(text, strlen(text), "graphs", "nodes", &sp);
    if (got != want) print_message("text: %s\nscan result %d, wanted %d\n", text, (int)got, (int)want);
    assert_int_equal(got, want);
    gm_json_split_free(&sp);
}

static void test_split_scan(void **state)
{
    (void)state;
    static const char text[] = "{\"graphs\": [{\"nodes\": [ {\"a\": [1, \"]\"]} , \"x,]\\\"\" ,3 ]}, {\"nodes\":[]},"
                               " {\"x\": {\"nodes\": [1]}, \"y\": [{\"nodes\": [2]}]}, {\"nodes\": [ \n ]},"
                               " [{\"nodes\": [4]}]],"
                               " \"nodes\": [5], \"name\": \"m\"}";
    gm_json_split sp = {0};
    assert_int_equal(gm_json_split_scan(text, strlen(text), "graphs", "nodes", &sp), GM_JSON_SPLIT_OK);
    assert_int_equal(sp.n_arrays, 3);
    const char *want[] = {" {\"a\": [1, \"]\"]} ", " \"x,]\\\"\" ", "3 "};
    assert_int_equal(sp.arrays[0].count, 3);
    for (size_t i = 0; i < 3; i++) {
        size_t b, e;
        gm_json_split_element(&sp, &sp.arrays[0], i, &b, &e);
        assert_int_equal(e - b, strlen(want[i]));
        assert_memory_equal(text + b, want[i], e - b);
    }
    assert_int_equal(sp.arrays[1].count, 0);
    assert_int_equal(sp.arrays[2].count, 0);
    assert_int_equal(text[sp.arrays[2].open], '[');
    assert_int_equal(text[sp.arrays[2].close], ']');
    size_t slen;
    char *sk = gm_json_split_skeleton(text, strlen(text), &sp, &slen);
    assert_non_null(sk);
    assert_int_equal(slen, strlen(sk));
    assert_string_equal(sk, "{\"graphs\": [{\"nodes\": []}, {\"nodes\":[]},"
                            " {\"x\": {\"nodes\": [1]}, \"y\": [{\"nodes\": [2]}]},"
                            " {\"nodes\": []}, [{\"nodes\": [4]}]], \"nodes\": [5], \"name\": \"m\"}");
    gm_free(sk);
    gm_json_split_free(&sp);

    /* Escapes in keys elsewhere do not matter; on the path they do. */
    expect_scan("{\"graphs\": [{\"nodes\": [{\"n\\u0061me\": 1}]}]}", GM_JSON_SPLIT_OK);
    expect_scan("{\"gr\\u0061phs\": [{\"nodes\": []}]}", GM_JSON_SPLIT_GIVE_UP);
    expect_scan("{\"graphs\": [{\"n\\u006fdes\": []}]}", GM_JSON_SPLIT_GIVE_UP);
    expect_scan("{\"graphs\": [{\"a\": 1, \"\\\\\": []}]}", GM_JSON_SPLIT_GIVE_UP);
    /* Unbalanced, mismatched, a string that does not end. */
    expect_scan("{\"graphs\": [{\"nodes\": []}]", GM_JSON_SPLIT_GIVE_UP);
    expect_scan("{\"graphs\": [{\"nodes\": []]]", GM_JSON_SPLIT_GIVE_UP);
    expect_scan("]", GM_JSON_SPLIT_GIVE_UP);
    expect_scan("{\"graphs\": [{\"nodes\": [\"a]}]}", GM_JSON_SPLIT_GIVE_UP);
    expect_scan("{\"graphs\": [{\"nodes\": [\"a\\\"]}]}", GM_JSON_SPLIT_GIVE_UP);
    /* After the root value the scan stops: the rest is the parser's to judge. */
    expect_scan("{\"graphs\": []} ]", GM_JSON_SPLIT_OK);
    expect_scan("", GM_JSON_SPLIT_OK);
    /* Nesting as deep as cJSON allows, and one level more. */
    char deep[2 * 1001 + 1];
    for (int levels = 1000; levels <= 1001; levels++) {
        memset(deep, '[', (size_t)levels);
        memset(deep + levels, ']', (size_t)levels);
        deep[2 * levels] = '\0';
        expect_scan(deep, levels <= 1000 ? GM_JSON_SPLIT_OK : GM_JSON_SPLIT_GIVE_UP);
    }
}

/* Split and whole readings agree, on texts that are right and texts that are wrong in the ways
 * cutting the text could change the answer. */
static void test_split_matches_whole(void **state)
{
    (void)state;
    static const char *const cases[] = {
        /* right */
        G_ROOT(N_DATA("a") "," N_DATA("b")),
        G_ROOT(""),
        G_ROOT(" \n "),
        G_ROOT(" " N_DATA("a") " \n, \r\n" N_DATA("b") "\t"),
        G_ROOT("\x01" N_DATA("a") "\x1f,\x7f" N_DATA("b")), /* cJSON skips every byte up to ' ' */
        G_ROOT("{\"name\": \"a,]}\\\"\\\\\", \"type\": \"Data\",\n"
               " \"outputs\": [{\"shape\": [1, [2], {\"x\": \"]\"}]}]}"),
        G_ROOT(N_DATA("a")) ", {\"name\": \"s\", \"parent\": \"a\", \"nodes\": [" N_DATA("b") "]}",
        "{\"name\": \"root\", \"attrs\": {\"nodes\": [1, 2]}, \"nodes\": [{\"name\": \"a\", \"type\": \"Data\", "
        "\"attrs\": {\"nodes\": [[1], []], \"graphs\": [{\"nodes\": [3]}]}}]}",
        /* syntax */
        G_ROOT(N_DATA("a") " " N_DATA("b")),
        G_ROOT(N_DATA("a") ","),
        G_ROOT(","),
        G_ROOT(N_DATA("a") ", ,"),
        G_ROOT(N_DATA("a") " x"),
        G_ROOT(N_DATA("a") " 1"),
        G_ROOT("\xef\xbb\xbf" N_DATA("a")),
        G_ROOT(N_DATA("a") ",\xef\xbb\xbf" N_DATA("b")),
        G_ROOT("nul"),
        G_ROOT("tru, 1"),
        G_ROOT("-"),
        G_ROOT("{\"name\": \"a\", \"type\": \"Data\", \"outputs\": [{\"shape\": [1 2]}]}"),
        G_ROOT("{\"name\": \"a\" : \"Data\"}"),
        G_ROOT("{\"name\": \"a\\x\"}"),
        G_ROOT("{\"name\": \"\\ud800\"}"),
        G_ROOT(N_DATA("a")) ", {\"name\": \"s\" \"nodes\": []}",
        G_ROOT(N_DATA("a") "," N_DATA("b,")),
        G_ROOT("{\"name\": \"a\", \"type\": \"Data\",}, " N_DATA("b")), /* cJSON reports the ',' after '}' */
        G_ROOT(N_DATA("a") ", {\"name\": \"b\",}"),
        G_ROOT(N_DATA("a") ", {\"name\": \"b\", \"type\": \"Data\", \"outputs\": [{\"shape\": [1,]}]}"),
        G_ROOT("{\"name\": \"a\", \"type\": \"Data\"},"
               " {\"name\": \"b\", \"type\": \"Data\", \"attrs\": {\"x\": 1,}}") ", 7",
        /* lexical, and their order against syntax and the walk */
        G_ROOT("{\"name\": \"a\", \"type\": \"Data\", \"stream\": -01}"),
        G_ROOT("{\"name\": \"a\", \"type\": \"Data\", \"attrs\": {\"f\": 1.}}"),
        G_ROOT("{\"name\": \"a\\u0000\", \"type\": \"Data\"}"),
        G_ROOT("{\"name\": \"a\x02\", \"type\": \"Data\"}"),
        G_ROOT("{\"name\": \"a\", \"type\": \"Nope\", \"stream\": 1} ," N_DATA("b")
               ", {\"name\": \"c\", \"type\": \"Data\", \"stream\": 01}"),
        G_ROOT("{\"name\": \"a\", \"type\": \"Data\", \"stream\": 01}, {\"name\": \"c\", \"type\": [}"),
        G_ROOT("{\"name\": \"a\", \"type\": \"Data\", \"stream\": 01}") ", {\"name\": 01, \"nodes\": []}",
        "{\"name\": 02, \"nodes\": [{\"name\": \"a\", \"type\": \"Data\", \"stream\": 01}]}",
        /* the walk: the first problem in the walk's order */
        G_ROOT("{\"name\": \"a\", \"type\": \"Data\", \"stream\": \"x\"}, {\"name\": \"b\"}"),
        G_ROOT(N_DATA("a") "," N_DATA("a")),
        G_ROOT("{\"name\": \"a\", \"type\": \"Data\", \"inputs\": [\"zz:0\"]}"),
        "{\"name\": \"root\", \"attrs\": {\"index\": 1.5},"
        " \"nodes\": [{\"name\": \"a\", \"type\": \"Data\", \"stream\": 1.5}]}",
        G_ROOT("3, {}"),
        /* outside the nodes: the skeleton stage hands these to the whole reading */
        G_ROOT(N_DATA("a")) ", {\"name\": \"s\", \"attrs\": {,}}",
        G_ROOT(N_DATA("a")) "] x [",
        G_ROOT(N_DATA("a")) ", {\"name\": 01}",
        G_ROOT(N_DATA("a")) ", {\"name\": \"\\u0000\"}",
        G_ROOT("{\"name\": \"a\", \"type\": \"Data\", \"stream\": 01}") ", {\"name\": 01}",
        G_ROOT("{\"name\": \"a\", \"type\": [}") ", {\"name\": 01}",
        G_ROOT("{\"name\": \"a\", \"type\": [}") ", {\"name\": }",
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) expect_same_both_ways(cases[i]);
}

/* A root graph of n nodes (Data d0, a chain of Relu after it) where node `at` is replaced by
 * `bad` and node `at2` by `bad2` (at2 < 0: none). Long enough that the reader parses the nodes
 * ahead on a second thread (io/json_read_ahead.c). */
static char *long_graph(int n, int at, const char *bad, int at2, const char *bad2)
{
    size_t cap = (size_t)n * 96 + strlen(bad) + (bad2 ? strlen(bad2) : 0) + 64, len = 0;
    char *g = malloc(cap);
    assert_non_null(g);
    len += (size_t)snprintf(g, cap, "{\"name\": \"root\", \"nodes\": [");
    for (int i = 0; i < n; i++) {
        const char *sep = i ? ",\n" : "";
        if (i == at) len += (size_t)snprintf(g + len, cap - len, "%s%s", sep, bad);
        else if (i == at2) len += (size_t)snprintf(g + len, cap - len, "%s%s", sep, bad2);
        else if (i == 0) len += (size_t)snprintf(g + len, cap - len, "{\"name\": \"d0\", \"type\": \"Data\", \"outputs\": [{}]}");
        else
            len += (size_t)snprintf(g + len, cap - len, "%s{\"name\": \"r%d\", \"type\": \"Relu\", \"inputs\": [\"d0:0\"], "
                                    "\"outputs\": [{\"shape\": [%d]}]}", sep, i, 1 + i % 7);
    }
    snprintf(g + len, cap - len, "]}");
    return g;
}

/* long_graph(5000, ...) read both ways (expect_same_both_ways). */
static void expect_long_graph_same(int at, const char *bad, int at2, const char *bad2)
{
    char *g = long_graph(5000, at, bad, at2, bad2);
    expect_same_both_ways(g);
    free(g);
}

/* Nodes parsed ahead on another thread: the same model, and on bad input the same message as
 * the whole reading, whichever of syntax, lexical and walk errors come where (the thread meets
 * the syntax error far ahead of the walk's). */
static void test_split_read_ahead(void **state)
{
    (void)state;
    static const char syntax[] = "{\"name\": \"s\", \"type\" \"Relu\"}";
    static const char lexical[] = "{\"name\": \"x\", \"type\": \"Data\", \"stream\": 01}";
    static const char walk[] = "{\"name\": \"w\", \"type\": \"Data\", \"nope\": 1}";
    static const char dangling[] = "{\"name\": \"q\", \"type\": \"Relu\", \"inputs\": [\"zz:0\"], \"outputs\": [{}]}";
    const struct {
        int at;
        const char *bad;
        int at2;
        const char *bad2;
    } cases[] = {
        {-1, "", -1, NULL},              /* a good model */
        {4900, syntax, -1, NULL},        /* syntax, late */
        {64, syntax, -1, NULL},          /* at a batch's first node */
        {10, walk, 4950, syntax},        /* the walk's error early, syntax late: syntax wins */
        {10, walk, 4990, lexical},       /* lexical late wins over the walk */
        {200, lexical, 4000, syntax},    /* syntax wins over lexical */
        {4999, walk, -1, NULL},          /* the walk's error at the last node */
        {3000, dangling, -1, NULL},      /* an input naming no node (finalize) */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        expect_long_graph_same(cases[i].at, cases[i].bad, cases[i].at2, cases[i].bad2);
}

/* The read-ahead thread reads most nodes straight from the text (io/json_read_fast.c) and the
 * rest with cJSON: whichever way a node goes, the model read, or the message, is the whole
 * reading's. Nodes of every field the fast way takes, and nodes just outside what it takes. */
static void test_split_read_fast(void **state)
{
    (void)state;
    static const char *const nodes[] = {
        /* the fast way: every field it reads */
        "{\"name\": \"f1\", \"type\": \"Split\", \"inputs\": [\"d0:0\", \"r5:0\"], \"control_inputs\": [\"r6\", \"r7\"], "
        "\"stream\": 2, \"input_names\": [\"x\", \"\"], \"outputs\": [{\"dtype\": \"float16\", \"shape\": [2, 3], "
        "\"reuse_input\": true, \"reuse_input_index\": 1}, {\"shape\": [], \"attrs\": {\"_k\": \"v\\u00e9\"}}, {}], "
        "\"output_names\": [\"y0\", \"\"], \"attrs\": {\"axis\": -1, \"f\": 1.5e-3, \"l\": [1, 2], \"b\": false, "
        "\"s\": \"a\\\"b\"}}",
        "{ \"type\" : \"Relu\" , \"name\" : \"f2:x\" , \"inputs\" : [ \"d0:0\" ] , \"outputs\" : [ { \"shape\" : [ 7 ] , "
        "\"reuse_input\" : false , \"reuse_input_index\" : 0 } ] , \"stream\" : -3 }",
        "{\"name\": \"f3\", \"type\": \"Relu\", \"inputs\": [\"f2:x:0\"], \"outputs\": [{\"shape\": [-1, 4]}]}",
        "{\"name\": \"f4\", \"type\": \"Relu\", \"inputs\": [\"d0:00\"], \"attrs\": {}, \"outputs\": []}",
        /* the cJSON way, read well */
        "{\"name\": \"s1\\u0041\", \"type\": \"Relu\", \"inputs\": [\"d0:0\"]}",             /* an escape */
        "{\"name\": \"s2\", \"type\": \"Relu\", \"inputs\": [\"\"], \"outputs\": [{}]}",             /* unconnected */
        "{\"name\": \"s3\", \"type\": \"Relu\", \"outputs\": [{\"shape\": [1], \"layout\": \"ND\"}]}", /* a desc field */
        "{\"name\": \"s4\", \"type\": \"Relu\", \"outputs\": [{\"size\": 64, \"memory_type\": \"hbm\"}]}",
        "{\"name\": \"s5\", \"type\": \"Relu\", \"stream\": 1e0}",                              /* 1e0 */
        "{\"name\": \"s6\", \"type\": \"Relu\", \"outputs\": [{\"shape\": [1.0]}]}",
        "{\"name\": \"s7\", \"type\": \"Relu\", \"inputs\": [\"d0:0\"], \"input_descs\": [{\"dtype\": \"int8\"}]}",
        /* the cJSON way, and the walk's message */
        "{\"name\": \"e1\", \"type\": \"Relu\", \"stream\": -0}",
        "{\"name\": \"e2\", \"type\": \"Relu\", \"name\": \"e2b\"}",                          /* a key twice */
        "{\"name\": \"e3\", \"type\": \"Relu\", \"outputs\": [{\"dtype\": \"float16\", \"dtype\": \"int8\"}]}",
        "{\"name\": \"e4\", \"type\": \"Relu\", \"outputs\": [{\"shape\": [-7]}]}",            /* a bad dim */
        "{\"name\": \"e5\", \"type\": \"Relu\", \"outputs\": [{}], \"output_names\": [\"a\", \"b\"]}",
        "{\"name\": \"e6\", \"type\": \"Relu\", \"inputs\": [\"d0:0\"], \"input_names\": [\"a\", \"b\"]}",
        "{\"name\": \"e7\", \"type\": \"Relu\", \"inputs\": [\"d0:99999999999\"]}",           /* index too large */
        "{\"name\": \"e8\", \"type\": \"Relu\", \"inputs\": [\":0\"]}",
        "{\"name\": \"e9\", \"type\": \"Relu\", \"control_inputs\": [\"\"]}",
        "{\"name\": \"e10\", \"type\": \"Relu\", \"attrs\": {\"a\": 1, \"a\": 2}}",          /* an attr twice */
        "{\"name\": \"e11\", \"type\": \"Relu\", \"attrs\": {\"a\": 01}}",                     /* lexical */
        "{\"name\": \"e12\", \"type\": \"Relu\", \"outputs\": [{\"reuse_input\": 1}]}",
        "{\"name\": \"e13\", \"type\": \"Relu\", \"outputs\": [{\"reuse_input_index\": -1}]}",
        "{\"name\": \"e14\", \"type\": \"\"}",
        "{\"name\": \"r9\", \"type\": \"Relu\", \"outputs\": [{}]}",                            /* a name taken */
        "{\"name\": \"e15\", \"type\": \"Relu\", \"outputs\": [{\"dtype\": \"nope\"}], \"inputs\": [3]}",
        "{\"name\": \"e16\", \"type\": \"Relu\", \"stream\": 99999999999999999999}",
        "{\"name\": \"e17\", \"type\": \"Relu\", \"outputs\": [{\"attrs\": {\"_x\": [1, \"a\"]}}]}",
    };
    for (size_t i = 0; i < sizeof nodes / sizeof *nodes; i++) expect_long_graph_same(2000 + (int)i, nodes[i], -1, NULL);
    /* names too long for the fast way's copies: a node's own, and its producer's in an input */
    char longname[301], a[400], b[400];
    memset(longname, 'x', 300);
    longname[300] = '\0';
    snprintf(a, sizeof a, "{\"name\": \"%s\", \"type\": \"Relu\", \"inputs\": [\"d0:0\"], \"outputs\": [{}]}", longname);
    snprintf(b, sizeof b, "{\"name\": \"after\", \"type\": \"Relu\", \"inputs\": [\"%s:0\"], \"outputs\": [{}]}", longname);
    expect_long_graph_same(1500, a, 1501, b);
    /* the first two good nodes side by side in one model, read the same both ways */
    expect_long_graph_same(2000, nodes[0], 2001, nodes[1]);
}

/* Random edits of real node shapes (a byte changed, added or removed, one to three times),
 * each read both ways inside a long graph: whatever the edit makes of the node, the fast way
 * reads it as the whole reading does or leaves it to cJSON. A fixed seed: the same edits on
 * every run (a throwaway run of 3,300 found no difference). */
static void test_split_read_fast_edits(void **state)
{
    (void)state;
    static const char *const shapes[] = {
        "{\"name\":\"t\",\"type\":\"Transpose\",\"inputs\":[\"r5:0\"],\"attrs\":{\"perm\":[2,0,3,1,4]},"
        "\"outputs\":[{\"dtype\":\"float16\",\"shape\":[3,8,16,1024,64],\"reuse_input\":true,\"reuse_input_index\":0}]}",
        "{\"name\":\"g/upd\",\"type\":\"AssignAdd\",\"inputs\":[\"r5:0\",\"r6:0\"],\"input_names\":[\"ref\",\"value\"],"
        "\"output_names\":[\"ref\"],\"outputs\":[{\"dtype\":\"float32\",\"shape\":[1024],\"attrs\":{\"k\":\"b1/w1\"}}]}",
        "{\"name\":\"x\",\"type\":\"LayerNorm\",\"inputs\":[\"r5:0\",\"r6:0\"],\"control_inputs\":[\"r8\"],\"stream\":1,"
        "\"attrs\":{\"epsilon\":1e-05},\"outputs\":[{\"dtype\":\"float16\",\"shape\":[8,1]},{\"shape\":[8]}]}",
    };
    static const char bytes[] = "{}[]\":,0123456789-.eE \\truefalsnul";
    uint32_t x = 12345;
    for (int it = 0; it < 48; it++) {
        char node[512];
        x = x * 1103515245u + 12345u;
        snprintf(node, sizeof node, "%s", shapes[(x >> 16) % 3]);
        for (int m = 0, edits = 1 + (int)((x >> 8) % 3); m < edits; m++) {
            x = x * 1103515245u + 12345u;
            size_t len = strlen(node), at = (x >> 8) % len;
            char c = bytes[(x >> 20) % (sizeof bytes - 1)];
            int op = (int)((x >> 4) % 3);
            if (op == 0) node[at] = c;
            else if (op == 1 && len + 1 < sizeof node) memmove(node + at + 1, node + at, len - at + 1), node[at] = c;
            else memmove(node + at, node + at + 1, len - at);
        }
        expect_long_graph_same(3000, node, -1, NULL);
    }
}

/* A big text (16 MB and more) is checked for UTF-8 and scanned for its node lists side by side:
 * the same message for a bad byte as in a small text, and a good big text reads. */
static void test_big_text_scans(void **state)
{
    (void)state;
    static const char head[] = "{\"graphmem\": 1, \"name\": \"a\xff\", ";
    static const char tail[] = "\"graphs\": [{\"name\": \"root\", \"nodes\": [{\"name\": \"x\", \"type\": \"Data\"}]}]}";
    size_t pad = (size_t)17 << 20, n = strlen(head) + pad + strlen(tail);
    char *big = malloc(n + 1), *small = malloc(strlen(head) + strlen(tail) + 2);
    assert_true(big && small);
    memcpy(big, head, strlen(head));
    memset(big + strlen(head), ' ', pad);
    memcpy(big + strlen(head) + pad, tail, strlen(tail) + 1);
    snprintf(small, strlen(head) + strlen(tail) + 2, "%s %s", head, tail);
    gm_model *m = NULL;
    gm_error eb, es;
    assert_int_equal(gm_model_read_json(big, n, "t.json", &m, &eb), GM_ERR_INPUT);
    assert_int_equal(gm_model_read_json(small, strlen(small), "t.json", &m, &es), GM_ERR_INPUT);
    assert_string_equal(eb.message, es.message);
    assert_non_null(strstr(eb.message, "not valid UTF-8 (byte 0xff)"));
    big[strlen(head) - 4] = 'b'; /* the name is "ab" now: valid */
    gm_error ok;
    assert_int_equal(gm_model_read_json(big, n, "t.json", &m, &ok), GM_OK);
    assert_int_equal(gm_model_node_count(m), 1);
    gm_model_free(m);
    free(big);
    free(small);
}

/* Unbalanced text, text ending in a string, mismatched brackets, and nesting deeper than
 * cJSON accepts: the split is not tried, and the messages are the whole reading's. */
static void test_split_gives_up(void **state)
{
    (void)state;
    ERR("{\"graphmem\": 1, \"graphs\": [{\"name\": \"root\", \"nodes\": [" N_DATA("a") ",\n" N_DATA("b"),
        "t.json:2:", "unexpected end of text", NULL);
    ERR("{\"graphmem\": 1, \"graphs\": [{\"name\": \"root\", \"nodes\": [{\"name\": \"a", "t.json:1:",
        "unexpected end of text (inside a string)", NULL);
    ERR("{\"graphmem\": 1, \"graphs\": [{\"name\": \"root\", \"nodes\": [" N_DATA("a") "}]}", "t.json:1:",
        "malformed JSON near '}]}'", NULL);
    /* 1000 levels are fine for cJSON, 1001 are not. */
    for (int levels = 999; levels <= 1001; levels++) {
        /* root, graphs, graph, nodes, node, attrs: 6 levels; the rest are lists. */
        size_t n = (size_t)levels - 6;
        const char pre[] =
            "{\"name\": \"root\", \"nodes\": [{\"name\": \"a\", \"type\": \"Data\", \"attrs\": {\"deep\": ";
        const char post[] = "}}]}";
        char *graph = malloc(sizeof pre + 2 * n + sizeof post), *p = graph;
        assert_non_null(graph);
        memcpy(p, pre, sizeof pre - 1);
        p += sizeof pre - 1;
        memset(p, '[', n);
        p += n;
        memset(p, ']', n);
        p += n;
        memcpy(p, post, sizeof post);
        size_t cap = strlen(graph) + 64;
        char *text = malloc(cap);
        assert_non_null(text);
        snprintf(text, cap, "{\"graphmem\": 1, \"graphs\": [%s]}", graph);
        /* Lists of lists of lists are no attribute kind, so the answer is an error either way;
         * what matters is which one. */
        if (levels <= 1000) ERR(text, "attribute 'deep'", "unsupported value", NULL);
        else ERR(text, "t.json:1:1097:", "malformed JSON near '[]]]]]]]]]]]]]]]'", NULL);
        expect_same_both_ways(graph);
        free(text);
        free(graph);
    }
}

/* ---- files --------------------------------------------------------------------------------- */

static void test_read_file_errors(void **state)
{
    (void)state;
    char *data = (char *)"x";
    size_t len = 9;
    gm_error err;
    gm_error_clear(&err);
    assert_int_equal(gm_read_file("/nonexistent/graphmem/model.json", &data, &len, &err), GM_ERR_IO);
    assert_null(data);
    assert_string_equal(err.message, "/nonexistent/graphmem/model.json: cannot open: No such file or directory");

    gm_model *m = NULL;
    assert_int_equal(gm_model_read_file("/nonexistent/graphmem/model.json", &m, &err), GM_ERR_IO);
    assert_null(m);

    /* Errors from a file name it first, with the line:col. */
    char *dir = make_temp_dir();
    char path[512];
    snprintf(path, sizeof path, "%s/bad.json", dir);
    put_file(path, "{\n \"graphmem\": 1,\n \"graphs\": [\n");
    assert_int_equal(gm_model_read_file(path, &m, &err), GM_ERR_INPUT);
    char want[600];
    snprintf(want, sizeof want, "%s:4:1: malformed JSON", path);
    assert_non_null(strstr(err.message, want));
    unlink(path);
    rmdir(dir);
    free(dir);
}

/* Files written together, all or none (gm_files): nothing shows before the commit, a failure
 * of a later file leaves the earlier ones unwritten, and no temporary file stays behind. */
static void test_file_set(void **state)
{
    (void)state;
    char *dir = make_temp_dir();
    char a[512], b[512];
    gm_error err;
    gm_error_clear(&err);
    snprintf(a, sizeof a, "%s/a.json", dir);
    snprintf(b, sizeof b, "%s/b.svg", dir);
    gm_files *fs = gm_files_new();
    assert_non_null(fs);
    assert_int_equal(gm_files_add(fs, a, "A", 1, &err), GM_OK);
    assert_int_equal(gm_files_add(fs, b, "B", 1, &err), GM_OK);
    assert_int_equal(access(a, F_OK), -1); /* staged, not there yet */
    assert_int_equal(gm_files_commit(fs, &err), GM_OK);
    gm_files_free(fs);
    char *got = read_whole(a);
    assert_string_equal(got, "A");
    free(got);
    got = read_whole(b);
    assert_string_equal(got, "B");
    free(got);
    assert_int_equal(dir_entries(dir), 2);

    /* The second output fails (its directory is missing): the first, staged, is never written
     * and the set removes its temporary file. */
    fs = gm_files_new();
    assert_int_equal(gm_files_add(fs, a, "new A", 5, &err), GM_OK);
    char missing[600];
    snprintf(missing, sizeof missing, "%s/none/c.dot", dir);
    assert_int_equal(gm_files_add(fs, missing, "C", 1, &err), GM_ERR_IO);
    assert_non_null(strstr(err.message, "cannot write: no directory"));
    gm_files_free(fs);
    got = read_whole(a);
    assert_string_equal(got, "A");
    free(got);
    assert_int_equal(dir_entries(dir), 2);

    /* A device is written at the commit, in place (/dev/zero: a sandbox's /dev/null may be a
     * plain file). */
    fs = gm_files_new();
    assert_int_equal(gm_files_add(fs, "/dev/zero", "x", 1, &err), GM_OK);
    assert_int_equal(gm_files_commit(fs, &err), GM_OK);
    gm_files_free(fs);
    /* A directory is not a file to write. */
    fs = gm_files_new();
    assert_int_equal(gm_files_add(fs, dir, "x", 1, &err), GM_ERR_IO);
    assert_non_null(strstr(err.message, "is a directory"));
    gm_files_free(fs);
    unlink(a);
    unlink(b);
    rmdir(dir);
    free(dir);
}

/* A big file goes to the disk past the page cache (file_set.c: O_DIRECT through an aligned
 * bounce buffer, the tail through the cache): the bytes are the caller's, whatever the
 * alignment of their start, a length on or off the block grid, one stretch of the bounce buffer
 * or several. */
static void test_file_set_big(void **state)
{
    (void)state;
    char *dir = make_temp_dir();
    char path[512];
    snprintf(path, sizeof path, "%s/big.json", dir);
    const size_t lens[] = {(8u << 20) + 4097, (17u << 20) + 8192, 8u << 20};
    unsigned char *mem = malloc((18u << 20) + 64);
    assert_non_null(mem);
    uint32_t x = 2463534242u;
    for (size_t i = 0; i < (18u << 20) + 64; i++) { /* xorshift: no stretch repeats */
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        mem[i] = (unsigned char)x;
    }
    for (size_t k = 0; k < sizeof lens / sizeof *lens; k++) {
        const unsigned char *data = mem + k * 7; /* 0, 7, 14 bytes past malloc's alignment */
        gm_error err;
        gm_error_clear(&err);
        assert_int_equal(gm_write_file(path, data, lens[k], &err), GM_OK);
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        unsigned char *got = malloc(lens[k] + 1);
        assert_non_null(got);
        assert_int_equal(fread(got, 1, lens[k] + 1, f), lens[k]);
        fclose(f);
        assert_memory_equal(got, data, lens[k]);
        free(got);
        assert_int_equal(dir_entries(dir), 1); /* staged and renamed: no temporary file left */
    }
    free(mem);
    unlink(path);
    rmdir(dir);
    free(dir);
}

static void test_write_file(void **state)
{
    (void)state;
    char *dir = make_temp_dir();
    char path[512];
    gm_error err;
    gm_error_clear(&err);
    snprintf(path, sizeof path, "%s/out.json", dir);

    /* New file, then a replacement that keeps the file's permissions. */
    assert_int_equal(gm_write_file(path, "first\n", 6, &err), GM_OK);
    char *got = read_whole(path);
    assert_string_equal(got, "first\n");
    free(got);
    assert_int_equal(chmod(path, 0640), 0);
    assert_int_equal(gm_write_file(path, "second", 6, &err), GM_OK);
    got = read_whole(path);
    assert_string_equal(got, "second");
    free(got);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0640);
    assert_int_equal(dir_entries(dir), 1); /* no temporary file left behind */

    /* A directory that does not exist: a clear error. */
    assert_int_equal(gm_write_file("/nonexistent/graphmem/out.json", "x", 1, &err), GM_ERR_IO);
    assert_string_equal(err.message, "/nonexistent/graphmem/out.json: cannot write: no directory '/nonexistent/graphmem'");

    /* A write that fails half-way (the file size limit: root is bound by it too) leaves the
     * old file whole and no temporary file. */
    struct rlimit old_lim, lim;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old_lim), 0);
    void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);
    lim = old_lim;
    lim.rlim_cur = 16;
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    static char big[4096];
    memset(big, 'z', sizeof big);
    gm_status st = gm_write_file(path, big, sizeof big, &err);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old_lim), 0);
    signal(SIGXFSZ, old_handler);
    assert_int_equal(st, GM_ERR_IO);
    assert_non_null(strstr(err.message, "cannot write"));
    got = read_whole(path);
    assert_string_equal(got, "second");
    free(got);
    assert_int_equal(dir_entries(dir), 1);

    /* A directory we may not write into (root may: then this part proves nothing). */
    if (geteuid() != 0) {
        assert_int_equal(chmod(dir, 0555), 0);
        st = gm_write_file(path, "third", 5, &err);
        assert_int_equal(chmod(dir, 0755), 0);
        assert_int_equal(st, GM_ERR_IO);
        assert_non_null(strstr(err.message, "Permission denied"));
        got = read_whole(path);
        assert_string_equal(got, "second");
        free(got);
    }

    /* A name near NAME_MAX still gets a temporary file beside it. */
    char longp[1024];
    int k = snprintf(longp, sizeof longp, "%s/", dir);
    memset(longp + k, 'n', 250);
    longp[k + 250] = '\0';
    assert_int_equal(gm_write_file(longp, "long", 4, &err), GM_OK);
    got = read_whole(longp);
    assert_string_equal(got, "long");
    free(got);
    unlink(longp);

    /* Writing a model: the format follows the name. */
    gm_model *m = read_json_ok(MODEL(NODE("")));
    assert_int_equal(gm_model_write_file(m, path, GM_FORMAT_UNKNOWN, &err), GM_OK);
    gm_model *back = NULL;
    assert_int_equal(gm_model_read_file(path, &back, &err), GM_OK);
    assert_non_null(gm_model_find_node(back, "n"));
    gm_model_free(back);
    snprintf(longp, sizeof longp, "%s/out.onnx", dir);
    assert_int_equal(gm_model_write_file(m, longp, GM_FORMAT_UNKNOWN, &err), GM_OK);
    assert_int_equal(gm_model_read_file(longp, &back, &err), GM_OK);
    assert_non_null(gm_model_find_node(back, "n"));
    gm_model_free(back);
    unlink(longp);
    gm_model_free(m);

    unlink(path);
    assert_int_equal(rmdir(dir), 0);
    free(dir);
}

/* ---- formats, dispatch, the embedded example ------------------------------------------------ */

static void test_formats(void **state)
{
    (void)state;
    assert_int_equal(gm_format_detect("  \n{\"graphmem\": 1}", 17), GM_FORMAT_JSON);
    assert_int_equal(gm_format_detect("\xEF\xBB\xBF{}", 5), GM_FORMAT_JSON);
    assert_int_equal(gm_format_detect("graph {\n  name: \"g\"\n}", 21), GM_FORMAT_GE_TEXT);
    assert_int_equal(gm_format_detect("name: \"m\"\n", 10), GM_FORMAT_GE_TEXT);
    assert_int_equal(gm_format_detect("# dump\n", 7), GM_FORMAT_GE_TEXT);
    assert_int_equal(gm_format_detect("\x08\x07\x12\x07pytorch", 11), GM_FORMAT_ONNX);
    assert_int_equal(gm_format_detect("", 0), GM_FORMAT_UNKNOWN);
    assert_int_equal(gm_format_detect("hello world", 11), GM_FORMAT_UNKNOWN);
    assert_int_equal(gm_format_from_path("a/b.graphmem.json"), GM_FORMAT_JSON);
    assert_int_equal(gm_format_from_path("m.ONNX"), GM_FORMAT_ONNX);
    assert_int_equal(gm_format_from_path("ge_proto_1.txt"), GM_FORMAT_GE_TEXT);
    assert_int_equal(gm_format_from_path("model"), GM_FORMAT_UNKNOWN);
    assert_int_equal(gm_format_from_name("ge"), GM_FORMAT_GE_TEXT);
    assert_int_equal(gm_format_from_name("txt"), GM_FORMAT_GE_TEXT);
    assert_int_equal(gm_format_from_name("json"), GM_FORMAT_JSON);
    assert_int_equal(gm_format_from_name("xml"), GM_FORMAT_UNKNOWN);
    assert_string_equal(gm_format_name(GM_FORMAT_ONNX), "onnx");

    gm_model *m = NULL;
    gm_error err;
    gm_error_clear(&err);
    /* Detected as ONNX and handed to its reader, which names the file. */
    assert_int_equal(gm_model_read_buffer("\x08\x07", 2, GM_FORMAT_UNKNOWN, "x.onnx", &m, &err), GM_ERR_INPUT);
    assert_true(strncmp(err.message, "x.onnx: ", 8) == 0);
    assert_int_equal(gm_model_read_buffer("hello", 5, GM_FORMAT_UNKNOWN, "h", &m, &err), GM_ERR_INPUT);
    assert_non_null(strstr(err.message, "unknown model format"));
    const char *j = MODEL(NODE(""));
    assert_int_equal(gm_model_read_buffer(j, strlen(j), GM_FORMAT_UNKNOWN, "buf", &m, &err), GM_OK);
    assert_string_equal(gm_model_source(m), "buf");
    gm_model_free(m);

    /* A real ONNX file reads through the same entry point. */
    assert_int_equal(gm_model_read_file(GM_TEST_DATA_DIR "/models/resnet18.onnx", &m, &err), GM_OK);
    assert_non_null(gm_model_find_graph(m, gm_graph_name(gm_model_root(m))));
    gm_model_free(m);
}

static void test_embedded_example(void **state)
{
    (void)state;
    gm_model *m = NULL;
    gm_error err;
    gm_error_clear(&err);
    assert_int_equal(gm_model_read_embedded_example(&m, &err), GM_OK);
    assert_string_equal(gm_model_source(m), GM_EMBEDDED_EXAMPLE_NAME);
    assert_true(gm_model_node_count(m) > 0);
    char *text = write_json_ok(m);
    gm_model_free(m);
    char *again = round_trip(text);
    assert_string_equal(again, text);
    free(again);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shared_mlp_round_trip),
        cmocka_unit_test(test_shared_transformer_round_trip),
        cmocka_unit_test(test_full_model),
        cmocka_unit_test(test_writer_edge_values),
        cmocka_unit_test(test_alloc_failures),
        cmocka_unit_test(test_error_malformed),
        cmocka_unit_test(test_error_keys_and_types),
        cmocka_unit_test(test_error_desc_values),
        cmocka_unit_test(test_error_inputs),
        cmocka_unit_test(test_inputs_connected_in_order),
        cmocka_unit_test(test_control_inputs_connected_in_order),
        cmocka_unit_test(test_jw_reader_shown_and_let_go),
        cmocka_unit_test(test_known_shape_noted_while_reading),
        cmocka_unit_test(test_error_attrs),
        cmocka_unit_test(test_split_scan),
        cmocka_unit_test(test_split_empty_and_absent_nodes),
        cmocka_unit_test(test_split_syntax_errors),
        cmocka_unit_test(test_split_keys),
        cmocka_unit_test(test_split_matches_whole),
        cmocka_unit_test(test_split_gives_up),
        cmocka_unit_test(test_split_read_ahead),
        cmocka_unit_test(test_split_read_fast),
        cmocka_unit_test(test_split_read_fast_edits),
        cmocka_unit_test(test_big_text_scans),
        cmocka_unit_test(test_read_file_errors),
        cmocka_unit_test(test_write_file),
        cmocka_unit_test(test_file_set),
        cmocka_unit_test(test_file_set_big),
        cmocka_unit_test(test_formats),
        cmocka_unit_test(test_embedded_example),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
