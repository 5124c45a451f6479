/*
 * test_onnx.c — the ONNX reader, writer and shape inference: every shared model reads and
 * finalizes with the expected structure and static shapes; shape inference alone (value_info
 * stripped) agrees with what the exporter declared; control flow becomes GE subgraphs with
 * parent indices; JSON -> ONNX -> JSON and ONNX -> IR -> ONNX -> IR are exact; the written file
 * is ordinary ONNX; bad and random bytes give clean errors; every allocation failure is clean;
 * and unit tests of the inference rules.
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

#include "graphmem/io.h"
#include "io/onnx_internal.h"
#include "onnx.pb-c.h"
#include "ops/op_table.h"
#include "util/alloc.h"

#define MODELS GM_TEST_DATA_DIR "/models/"

/* ---- helpers ------------------------------------------------------------------------------- */

static gm_model *read_onnx_buf(const void *data, size_t len, const char *src, const char *const *dims)
{
    gm_model *m = NULL;
    gm_error err;
    gm_error_clear(&err);
    gm_status st = gm_model_read_onnx(data, len, src, dims, &m, &err);
    if (st != GM_OK) print_message("unexpected error: %s\n", err.message);
    assert_int_equal(st, GM_OK);
    assert_non_null(m);
    return m;
}

static gm_model *read_model(const char *name, const char *const *dims)
{
    char path[512];
    snprintf(path, sizeof path, MODELS "%s", name);
    size_t len;
    char *data = slurp(path, &len);
    gm_model *m = read_onnx_buf(data, len, path, dims);
    free(data);
    return m;
}

static void *write_onnx(const gm_model *m, size_t *len)
{
    void *data = NULL;
    gm_error err;
    gm_error_clear(&err);
    gm_status st = gm_model_write_onnx(m, &data, len, &err);
    if (st != GM_OK) print_message("unexpected error: %s\n", err.message);
    assert_int_equal(st, GM_OK);
    assert_non_null(data);
    return data;
}


static size_t count_type(const gm_model *m, const char *type)
{
    size_t n = 0;
    for (size_t i = 0; i < gm_model_node_count(m); i++) n += strcmp(gm_node_type(gm_model_node_at(m, i)), type) == 0;
    return n;
}

/* Outputs whose size is not static (or whose dtype is unknown). */
static size_t unknown_tensors(const gm_model *m, size_t *total)
{
    size_t n = 0, t = 0;
    for (size_t i = 0; i < gm_model_node_count(m); i++) {
        const gm_node *x = gm_model_node_at(m, i);
        for (size_t k = 0; k < gm_node_output_count(x); k++) {
            const gm_tensor_desc *d = gm_node_output_desc(x, k);
            t++;
            n += gm_desc_size(d) < 0 || gm_desc_dtype(d) == GM_DT_UNDEFINED;
        }
    }
    if (total) *total = t;
    return n;
}

static void assert_shape(const gm_node *n, size_t k, gm_dtype dt, int32_t rank, ...)
{
    assert_non_null(n);
    const gm_tensor_desc *d = gm_node_output_desc(n, k);
    assert_non_null(d);
    assert_int_equal(gm_desc_dtype(d), dt);
    assert_int_equal(gm_desc_ndims(d), rank);
    va_list ap;
    va_start(ap, rank);
    for (int32_t i = 0; i < rank; i++) assert_int_equal(gm_desc_dims(d)[i], va_arg(ap, int));
    va_end(ap);
}

static int64_t iattr(const gm_node *n, const char *name)
{
    const gm_attr *a = gm_attr_find(*gm_node_attrs((gm_node *)n), name);
    assert_non_null(a);
    return gm_attr_int(a);
}

static int64_t in_parent_index(const gm_node *n, size_t i)
{
    const gm_attr *a = gm_attr_find(*gm_desc_attrs(gm_node_input_desc(n, i)), "_parent_node_index");
    return a ? gm_attr_int(a) : -1;
}

/* ONNX -> IR -> ONNX -> IR: the same IR, and the second write is byte-identical. */
static void check_stable(gm_model *m)
{
    size_t l1, l2;
    void *b1 = write_onnx(m, &l1);
    gm_model *m2 = read_onnx_buf(b1, l1, "again.onnx", NULL);
    char *j1 = write_json_ok(m), *j2 = write_json_ok(m2);
    assert_string_equal(j1, j2);
    void *b2 = write_onnx(m2, &l2);
    assert_int_equal(l1, l2);
    assert_memory_equal(b1, b2, l1);
    free(j1);
    free(j2);
    free(b1);
    free(b2);
    gm_model_free(m2);
}

/* ---- the shared models --------------------------------------------------------------------- */

static void test_resnet18(void **state)
{
    (void)state;
    gm_model *m = read_model("resnet18.onnx", NULL);
    assert_int_equal(gm_model_graph_count(m), 1);
    assert_int_equal(gm_model_node_count(m), 93);
    assert_int_equal(count_type(m, "Conv"), 20);
    assert_int_equal(count_type(m, "Const"), 42);
    assert_int_equal(count_type(m, "Data"), 1);
    assert_int_equal(count_type(m, "NetOutput"), 1);
    size_t total;
    assert_int_equal(unknown_tensors(m, &total), 0);
    assert_int_equal(total, 92);
    const gm_node *x = gm_model_find_node(m, "input.1");
    assert_string_equal(gm_node_type(x), "Data");
    assert_int_equal(iattr(x, "index"), 0);
    assert_shape(x, 0, GM_DT_FLOAT, 4, 1, 3, 224, 224);
    /* The first Conv: stride 2, pads 3, kernel 7. */
    const gm_node *conv = gm_model_find_node(m, "/conv1/Conv");
    assert_shape(conv, 0, GM_DT_FLOAT, 4, 1, 64, 112, 112);
    assert_int_equal(gm_desc_size(gm_node_output_desc(conv, 0)), 64 * 112 * 112 * 4);
    assert_shape(gm_model_find_node(m, "/maxpool/MaxPool"), 0, GM_DT_FLOAT, 4, 1, 64, 56, 56);
    /* Weights are Const nodes with their dims; their data was never needed. */
    assert_shape(gm_model_find_node(m, "fc.weight"), 0, GM_DT_FLOAT, 2, 1000, 512);
    const gm_node *out = gm_model_find_node(m, "NetOutput");
    assert_int_equal(gm_node_input_count(out), 1);
    int32_t idx;
    assert_string_equal(gm_node_type(gm_node_input(out, 0, &idx)), "Gemm");
    assert_shape(gm_node_input(out, 0, &idx), 0, GM_DT_FLOAT, 2, 1, 1000);
    check_stable(m);
    gm_model_free(m);
}

static void test_resnet50_and_train(void **state)
{
    (void)state;
    gm_model *m = read_model("resnet50.onnx", NULL);
    assert_int_equal(count_type(m, "Conv"), 53);
    assert_int_equal(gm_model_node_count(m), 232);
    assert_int_equal(unknown_tensors(m, NULL), 0);
    check_stable(m);
    gm_model_free(m);

    m = read_model("resnet18_train.onnx", NULL);
    assert_int_equal(count_type(m, "BatchNormalization"), 20);
    size_t total;
    assert_int_equal(unknown_tensors(m, &total), 0);
    assert_int_equal(total, 212);
    /* Training-mode BatchNormalization: Y plus running mean and variance of [C]. */
    for (size_t i = 0; i < gm_model_node_count(m); i++) {
        const gm_node *n = gm_model_node_at(m, i);
        if (strcmp(gm_node_type(n), "BatchNormalization") != 0) continue;
        assert_int_equal(gm_node_output_count(n), 3);
        const gm_tensor_desc *y = gm_node_output_desc(n, 0), *mean = gm_node_output_desc(n, 1);
        assert_int_equal(gm_desc_ndims(mean), 1);
        assert_int_equal(gm_desc_dims(mean)[0], gm_desc_dims(y)[1]);
    }
    check_stable(m);
    gm_model_free(m);
}

static void check_transformer(const char *name, size_t nodes)
{
    gm_model *m = read_model(name, NULL);
    assert_int_equal(gm_model_node_count(m), nodes);
    assert_int_equal(count_type(m, "MatMul"), 30);
    assert_int_equal(unknown_tensors(m, NULL), 0);
    for (size_t i = 0; i < gm_model_node_count(m); i++) {
        const gm_node *n = gm_model_node_at(m, i);
        if (strcmp(gm_node_type(n), "MatMul") == 0) assert_true(gm_desc_size(gm_node_output_desc(n, 0)) > 0);
    }
    /* Attention: [8 heads, 128, 128] scores. */
    assert_shape(gm_model_find_node(m, "/layers.0/self_attn/MatMul_1"), 0, GM_DT_FLOAT, 3, 8, 128, 128);
    check_stable(m);
    gm_model_free(m);
}

static void test_transformer(void **state)
{
    (void)state;
    check_transformer("transformer_encoder.onnx", 374);
    check_transformer("transformer_encoder.folded.onnx", 320);
}

static void test_control_flow(void **state)
{
    (void)state;
    gm_model *m = read_model("control_flow.onnx", NULL);
    /* 51 ONNX nodes (22 top level) plus the Data, Const and NetOutput nodes of the mapping. */
    assert_int_equal(gm_model_graph_count(m), 7);
    assert_int_equal(gm_model_node_count(m), 83);
    assert_int_equal(gm_model_node_count(m) - count_type(m, "Data") - count_type(m, "Const") - count_type(m, "NetOutput"),
                     51);
    assert_int_equal(count_type(m, "NetOutput"), 7);
    assert_int_equal(count_type(m, "Loop"), 2);
    assert_int_equal(count_type(m, "If"), 2);
    assert_int_equal(gm_graph_node_count(gm_model_root(m)) - 1 - 1 - 6, 22); /* less x, NetOutput, 6 Const */

    /* Loop: (M, cond, v_initial, captured outer values...); body Data read them by index. */
    const gm_node *loop = gm_model_find_node(m, "/Loop");
    assert_int_equal(gm_node_subgraph_count(loop), 1);
    assert_int_equal(gm_node_input_count(loop), 9);
    const gm_graph *body = gm_node_subgraph(loop, 0);
    assert_string_equal(gm_graph_name(body), "/Loop/body");
    assert_int_equal(iattr(gm_model_find_node(m, "t.1"), "_parent_node_index"), 0);
    assert_int_equal(iattr(gm_model_find_node(m, "cond.1"), "_parent_node_index"), 1);
    assert_int_equal(iattr(gm_model_find_node(m, "h.47"), "_parent_node_index"), 2);
    const gm_node *cx = gm_model_find_node(m, "/Loop/body/x");
    assert_int_equal(iattr(cx, "_parent_node_index"), 3);
    int32_t idx;
    assert_string_equal(gm_node_name(gm_node_input(loop, 3, &idx)), "x");
    assert_shape(cx, 0, GM_DT_FLOAT, 3, -1, 4, 64);
    /* Body outputs (cond_out, h): cond_out has no parent output, h is output 0. */
    const gm_node *bo = gm_model_find_node(m, "/Loop/body/NetOutput");
    assert_int_equal(gm_node_input_count(bo), 2);
    assert_int_equal(in_parent_index(bo, 0), -1);
    assert_int_equal(in_parent_index(bo, 1), 0);
    /* The loop-carried value is [4, 128] in every iteration (found by the fixpoint). */
    assert_shape(loop, 0, GM_DT_FLOAT, 2, 4, 128);
    assert_shape(gm_model_find_node(m, "h.47"), 0, GM_DT_FLOAT, 2, 4, 128);

    /* If inside the body: cond, then the value both branches read. */
    const gm_node *iff = gm_model_find_node(m, "/If");
    assert_int_equal(gm_node_input_count(iff), 2);
    assert_string_equal(gm_node_name(gm_node_input(iff, 0, &idx)), "/Cast");
    assert_string_equal(gm_node_name(gm_node_input(iff, 1, &idx)), "/Tanh");
    assert_string_equal(gm_graph_name(gm_node_subgraph(iff, 0)), "/If/then_branch");
    assert_string_equal(gm_graph_name(gm_node_subgraph(iff, 1)), "/If/else_branch");
    assert_int_equal(iattr(gm_model_find_node(m, "/If/then_branch//Tanh_output_0"), "_parent_node_index"), 1);
    assert_int_equal(in_parent_index(gm_model_find_node(m, "/If/then_branch/NetOutput"), 0), 0);

    /* A value two levels out: If_1 (in Loop_1's body) reads a root Constant, so Loop_1 takes
     * it as input 4 and its body hands it on as If_1's input 2. */
    const gm_node *loop1 = gm_model_find_node(m, "/Loop_1"), *if1 = gm_model_find_node(m, "/If_1");
    assert_int_equal(gm_node_input_count(loop1), 5);
    assert_string_equal(gm_node_name(gm_node_input(loop1, 4, &idx)), "/Constant_3");
    assert_int_equal(gm_node_input_count(if1), 3);
    const gm_node *cap = gm_node_input(if1, 2, &idx);
    assert_string_equal(gm_node_type(cap), "Data");
    assert_int_equal(iattr(cap, "_parent_node_index"), 4);
    assert_int_equal(iattr(gm_model_find_node(m, "/If_1/else_branch//Constant_3_output_0"), "_parent_node_index"), 2);
    assert_int_equal(gm_node_output_count(loop1), 2);
    assert_shape(loop1, 1, GM_DT_INT64, 0);

    /* Only the symbolic input dim "T" stays unknown (x and its copy in the body), and the
     * model says so: the input's dims left open, not the names inference derives. */
    assert_int_equal(unknown_tensors(m, NULL), 2);
    assert_string_equal(gm_model_unfixed_dims(m), "T");
    check_stable(m);
    gm_model_free(m);

    /* --dims fixes it: then everything is static, and nothing is open. */
    const char *dims[] = {"T=5", NULL};
    m = read_model("control_flow.onnx", dims);
    assert_shape(gm_model_find_node(m, "x"), 0, GM_DT_FLOAT, 3, 5, 4, 64);
    assert_int_equal(unknown_tensors(m, NULL), 0);
    assert_null(gm_model_unfixed_dims(m));
    gm_model_free(m);

    /* A name the model lacks is refused, naming those it has; a name it has on an output
     * (one inference derives) is accepted. */
    char path[512];
    snprintf(path, sizeof path, MODELS "control_flow.onnx");
    gm_error err;
    const char *misspelt[] = {"T=5", "TT=5", NULL};
    m = NULL;
    assert_int_equal(gm_model_read_file_dims(path, misspelt, &m, &err), GM_ERR_INPUT);
    assert_null(m);
    assert_non_null(strstr(err.message, "dim 'TT=5': the model has no symbolic dim 'TT' (its symbolic dims: T, "));
    const char *derived[] = {"T=5", "Gemm67_dim_0=3", NULL};
    m = read_model("control_flow.onnx", derived);
    assert_null(gm_model_unfixed_dims(m));
    gm_model_free(m);
    /* Other formats have no symbolic dims: a dim given for one is an error, not ignored. */
    const char *t5[] = {"T=5", NULL};
    assert_int_equal(gm_model_read_file_dims(GM_TEST_DATA_DIR "/models/mlp_train_step.graphmem.json", t5, &m, &err),
                     GM_ERR_INPUT);
    assert_non_null(strstr(err.message, "a json model has no symbolic dims"));
}

/* ---- shape inference on its own: the exporter's value_info removed ------------------------- */

static void strip_value_info(Onnx__GraphProto *g)
{
    for (size_t i = 0; i < g->n_value_info; i++) onnx__value_info_proto__free_unpacked(g->value_info[i], NULL);
    g->n_value_info = 0;
    for (size_t i = 0; i < g->n_output; i++) {
        if (g->output[i]->type) onnx__type_proto__free_unpacked(g->output[i]->type, NULL);
        g->output[i]->type = NULL;
    }
    for (size_t i = 0; i < g->n_node; i++) {
        for (size_t a = 0; a < g->node[i]->n_attribute; a++) {
            if (g->node[i]->attribute[a]->g) strip_value_info(g->node[i]->attribute[a]->g);
        }
    }
}

static void check_inference_alone(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, MODELS "%s", name);
    size_t len;
    char *data = slurp(path, &len);
    gm_model *declared = read_onnx_buf(data, len, path, NULL);
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, (const uint8_t *)data);
    assert_non_null(mp);
    strip_value_info(mp->graph);
    size_t n = onnx__model_proto__get_packed_size(mp);
    uint8_t *buf = malloc(n);
    onnx__model_proto__pack(mp, buf);
    onnx__model_proto__free_unpacked(mp, NULL);
    gm_model *inferred = read_onnx_buf(buf, n, "stripped.onnx", NULL);
    assert_int_equal(gm_model_node_count(declared), gm_model_node_count(inferred));
    for (size_t i = 0; i < gm_model_node_count(declared); i++) {
        const gm_node *a = gm_model_node_at(declared, i), *b = gm_model_find_node(inferred, gm_node_name(a));
        assert_non_null(b);
        for (size_t k = 0; k < gm_node_output_count(a); k++) {
            const gm_tensor_desc *da = gm_node_output_desc(a, k), *db = gm_node_output_desc(b, k);
            bool same = gm_desc_dtype(da) == gm_desc_dtype(db) && gm_desc_ndims(da) == gm_desc_ndims(db);
            for (int32_t j = 0; same && j < gm_desc_ndims(da); j++) same = gm_desc_dims(da)[j] == gm_desc_dims(db)[j];
            if (!same) print_message("%s: %s output %zu differs\n", name, gm_node_name(a), k);
            assert_true(same);
        }
    }
    gm_model_free(declared);
    gm_model_free(inferred);
    free(buf);
    free(data);
}

static void test_inference_matches_exporter(void **state)
{
    (void)state;
    check_inference_alone("resnet18.onnx");
    check_inference_alone("resnet50.onnx");
    check_inference_alone("resnet18_train.onnx");
    check_inference_alone("transformer_encoder.onnx"); /* Shape -> Gather -> Div -> Slice/Reshape */
    check_inference_alone("transformer_encoder.folded.onnx");
    check_inference_alone("control_flow.onnx"); /* through Loop and If, with a symbolic dim */
}

/* ---- JSON -> ONNX -> JSON -------------------------------------------------------------------- */

static void check_json_round_trip(gm_model *m)
{
    size_t len;
    void *bytes = write_onnx(m, &len);
    gm_model *back = read_onnx_buf(bytes, len, "back.onnx", NULL);
    char *a = write_json_ok(m), *b = write_json_ok(back);
    if (strcmp(a, b) != 0) print_message("direct:\n%s\nthrough ONNX:\n%s\n", a, b);
    assert_string_equal(a, b);
    /* And once more: the written bytes are stable. */
    size_t len2;
    void *bytes2 = write_onnx(back, &len2);
    assert_int_equal(len, len2);
    assert_memory_equal(bytes, bytes2, len);
    free(a);
    free(b);
    free(bytes);
    free(bytes2);
    gm_model_free(back);
}

static void json_file_round_trip(const char *path)
{
    gm_model *m = read_file_ok(path);
    check_json_round_trip(m);
    gm_model_free(m);
}

static void test_json_round_trip_shared(void **state)
{
    (void)state;
    json_file_round_trip(MODELS "mlp_train_step.graphmem.json");
    json_file_round_trip(MODELS "transformer_lm_train_step.graphmem.json");
    json_file_round_trip(GM_SOURCE_DIR "/examples/train_step.json");
    gm_model *m = NULL;
    gm_error err;
    assert_int_equal(gm_model_read_embedded_example(&m, &err), GM_OK);
    check_json_round_trip(m);
    gm_model_free(m);
}

/* Every field and attribute kind of the JSON format (as in test_json_io.c), plus the cases the
 * ONNX mapping must take care of: dtypes ONNX lacks, unknown ranks, sizes past 2^53, doubles
 * float32 cannot hold, names that clash with graphmem's keys or subgraph attributes, several
 * NetOutputs, Data and Const nodes that cannot be graph inputs or initializers. */
static const char k_full[] =
    "{\"graphmem\": 1, \"name\": \"everything\",\n"
    " \"options\": {\"ge.featureBaseRefreshable\": \"1\", \"ge.buildGraphMode\": \"online\"},\n"
    " \"graphs\": [\n"
    "  {\"name\": \"root\", \"attrs\": {\"_dynamic_shape_partitioned\": false, \"g_int\": 7, \"g_l\": [[1], []]},\n"
    "   \"nodes\": [\n"
    "    {\"name\": \"x\", \"type\": \"Data\", \"attrs\": {\"index\": 0},\n"
    "     \"outputs\": [{\"dtype\": \"DT_FLOAT\", \"shape\": [-1, 512], \"memory_type\": \"p2p\", \"layout\": \"NCHW\"}]},\n"
    "    {\"name\": \"v\", \"type\": \"Variable\", \"stream\": 3,\n"
    "     \"outputs\": [{\"dtype\": \"float16\", \"shape\": [-2], \"size\": 9007199254740993, \"memory_type\": \"hbm\"}]},\n"
    "    {\"name\": \"c\", \"type\": \"Const\", \"outputs\": [{\"dtype\": \"int4\", \"shape\": []}]},\n"
    "    {\"name\": \"q\", \"type\": \"Const\", \"outputs\": [{\"dtype\": \"qint8\", \"shape\": [2, 3]}]},\n"
    "    {\"name\": \"ns\", \"type\": \"Data\", \"attrs\": {\"index\": 1}, \"outputs\": [{}]},\n"
    "    {\"name\": \"mm\", \"type\": \"MatMul\", \"inputs\": [\"x:0\", \"v:0\"], \"stream\": 2,\n"
    "     \"control_inputs\": [\"c\", \"ns\"],\n"
    "     \"input_descs\": [{}, {\"memory_type\": \"ts\", \"attrs\": {\"_special_input_size\": 64}}],\n"
    "     \"outputs\": [{\"dtype\": \"float32\", \"shape\": [8, 512],\n"
    "                  \"attrs\": {\"ref_var_src_var_name\": \"v\",\n"
    "                            \"td\": {\"tensor_desc\": {\"dtype\": \"int8\", \"shape\": [3], \"size\": 3,\n"
    "                              \"attrs\": {\"deep\": {\"tensor_desc\": {\"shape\": [-2]}}}}}}}],\n"
    "     \"attrs\": {\"b\": true, \"i\": -42, \"big\": 9223372036854775807, \"small\": -9223372036854775808,\n"
    "               \"huge\": 9223372036854775808, \"f1\": 1.0, \"f2\": 2.5e-3, \"f3\": 1E2, \"f4\": 0.1,\n"
    "               \"s\": \"h\\u00e9llo \\\"q\\\"\\n\", \"u\": \"\xe2\x82\xac\",\n"
    "               \"li\": [1, -2, 3], \"lf\": [1, 2.5], \"lf2\": [0.1, 1e300], \"ls\": [\"a\", \"\"], \"lb\": [true, false],\n"
    "               \"lli\": [[0, 1], [], [2]], \"empty\": [], \"atomic_output_index\": [],\n"
    "               \"_output_inplace_ability\": [], \"raw\": {\"bytes_base64\": \"AAEC/w==\"},\n"
    "               \"continuous_input\": true, \"_input_memory_type\": [1, 0],\n"
    "               \"graphmem.stream\": 5, \"domain\": 3}},\n"
    "    {\"name\": \"add\", \"type\": \"Add\", \"inputs\": [\"mm:0\", \"\", \"mm:0\", \"\"],\n"
    "     \"outputs\": [{\"dtype\": \"float32\", \"shape\": [8, 512]}, {\"dtype\": \"complex128\"}, {}]},\n"
    "    {\"name\": \"upd\", \"type\": \"Assign\", \"inputs\": [\"v:0\", \"add:0\"],\n"
    "     \"input_names\": [\"ref\", \"\"], \"output_names\": [\"ref\"],\n"
    "     \"outputs\": [{\"dtype\": \"float16\", \"shape\": [-2], \"reuse_input\": true, \"reuse_input_index\": 0}]},\n"
    "    {\"name\": \"odd\", \"type\": \"Data\", \"attrs\": {\"index\": 2},\n"
    "     \"outputs\": [{\"dtype\": \"bool\", \"shape\": [1]}, {\"dtype\": \"bool\", \"shape\": [2]}]},\n"
    "    {\"name\": \"fed\", \"type\": \"Const\", \"inputs\": [\"odd:1\"], \"outputs\": [{\"dtype\": \"bool\"}]},\n"
    "    {\"name\": \"cm\", \"type\": \"CustomOp\", \"inputs\": [\"add:0\"], \"attrs\": {\"domain\": \"com.example\"},\n"
    "     \"outputs\": [{\"dtype\": \"float32\", \"shape\": [8, 512]}]},\n"
    "    {\"name\": \"loop\", \"type\": \"While\", \"inputs\": [\"add:0\"], \"subgraphs\": [\"body\", \"cond\"],\n"
    "     \"attrs\": {\"cond\": \"clash\"},\n"
    "     \"outputs\": [{\"dtype\": \"float32\", \"shape\": [8, 512]}]},\n"
    "    {\"name\": \"out\", \"type\": \"NetOutput\", \"inputs\": [\"loop:0\", \"\", \"upd:0\", \"x:0\"],\n"
    "     \"control_inputs\": [\"fed\"], \"input_descs\": [{}, {\"attrs\": {\"k\": \"v\"}}],\n"
    "     \"outputs\": [{\"dtype\": \"float32\"}]},\n"
    "    {\"name\": \"out2\", \"type\": \"NetOutput\", \"inputs\": [\"cm:0\"]}\n"
    "   ]},\n"
    "  {\"name\": \"cond\", \"parent\": \"loop\", \"nodes\": [\n"
    "    {\"name\": \"cd\", \"type\": \"Data\", \"attrs\": {\"_parent_node_index\": 0},\n"
    "     \"outputs\": [{\"dtype\": \"float32\", \"shape\": [8, 512]}]},\n"
    "    {\"name\": \"co\", \"type\": \"NetOutput\", \"inputs\": [\"cd:0\"]}]},\n"
    "  {\"name\": \"body\", \"parent\": \"loop\", \"attrs\": {\"b_attr\": \"x\"}, \"nodes\": [\n"
    "    {\"name\": \"bo\", \"type\": \"NetOutput\", \"inputs\": [\"r:0\"],\n"
    "     \"input_descs\": [{\"attrs\": {\"_parent_node_index\": 0}}]},\n"
    "    {\"name\": \"r\", \"type\": \"Relu\", \"inputs\": [\"bd:0\"],\n"
    "     \"outputs\": [{\"dtype\": \"float32\", \"shape\": [8, 512]}]},\n"
    "    {\"name\": \"bd\", \"type\": \"Data\", \"attrs\": {\"_parent_node_index\": 0},\n"
    "     \"outputs\": [{\"dtype\": \"float32\", \"shape\": [8, 512]}]}]}\n"
    " ]\n"
    "}\n";

static void test_json_round_trip_every_field(void **state)
{
    (void)state;
    gm_model *m = NULL;
    gm_error err;
    gm_error_clear(&err);
    gm_status st = gm_model_read_json(k_full, strlen(k_full), "full.json", &m, &err);
    if (st != GM_OK) print_message("%s\n", err.message);
    assert_int_equal(st, GM_OK);
    check_json_round_trip(m);

    /* The file is plain ONNX where ONNX can say it: graph inputs, initializers, the first
     * NetOutput's outputs, native attributes, domains. */
    size_t len;
    void *bytes = write_onnx(m, &len);
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, bytes);
    assert_non_null(mp);
    const Onnx__GraphProto *g = mp->graph;
    assert_int_equal(g->n_input, 2); /* x, ns (odd has two outputs) */
    assert_string_equal(g->input[0]->name, "x");
    assert_int_equal(g->n_initializer, 3); /* v, c, q (fed has an input) */
    assert_int_equal(g->n_output, 4);
    assert_string_equal(g->output[0]->name, "loop:0");
    assert_string_equal(g->output[1]->name, "");
    bool saw_custom = false;
    for (size_t i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *np = g->node[i];
        if (strcmp(np->name, "cm") == 0) {
            assert_string_equal(np->domain, "com.example");
            saw_custom = true;
        }
        if (strcmp(np->name, "mm") == 0) {
            assert_true(np->domain == NULL || !*np->domain);
            assert_non_null(gm_onnx_attr(np, "i"));
            assert_int_equal(gm_onnx_attr(np, "i")->type, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
            assert_non_null(gm_onnx_attr(np, "__graphmem.attr.f2"));     /* 2.5e-3 is no float32 */
            assert_non_null(gm_onnx_attr(np, "__graphmem.attr.b"));      /* bool: encoded */
            assert_non_null(gm_onnx_attr(np, "__graphmem.attr.f4"));     /* 0.1 is no float32 */
            assert_non_null(gm_onnx_attr(np, "f1"));                   /* 1.0 is */
            assert_non_null(gm_onnx_attr(np, "__graphmem.attr.graphmem.stream"));
            assert_int_equal(gm_onnx_attr_int(np, "__graphmem.stream", 0), 2);
        }
        if (strcmp(np->name, "loop") == 0) {
            assert_string_equal(np->domain, GM_ONNX_DOMAIN);
            assert_non_null(gm_onnx_attr(np, "__graphmem.attr.cond")); /* clashes with the subgraph */
            assert_non_null(gm_onnx_attr(np, "cond")->g);
            assert_string_equal(gm_onnx_attr(np, "cond")->g->name, "body"); /* as the node lists them */
        }
    }
    assert_true(saw_custom);
    onnx__model_proto__free_unpacked(mp, NULL);
    free(bytes);
    gm_model_free(m);
}

/* Values JSON cannot carry (NaN) still survive ONNX; and a model built in memory. */
static void test_round_trip_edge_values(void **state)
{
    (void)state;
    gm_error err;
    gm_error_clear(&err);
    gm_model *m = gm_model_new("built");
    gm_graph *g = gm_model_add_graph(m, "r\"oot\xc3\xa9", NULL, &err);
    gm_node *k = gm_graph_add_node(g, "k \"quoted\" \\", "Const", &err);
    assert_non_null(gm_node_add_output(k));
    gm_attr **as = gm_node_attrs(k);
    assert_int_equal(gm_attr_set_float(as, "nan", NAN), GM_OK);
    assert_int_equal(gm_attr_set_float(as, "inf", -INFINITY), GM_OK);
    assert_int_equal(gm_attr_set_float(as, "tiny", 4.9e-324), GM_OK);
    assert_int_equal(gm_attr_set_string(as, "latin1", "caf\xe9"), GM_OK);
    assert_int_equal(gm_attr_set_bytes(as, "nul", "a\0b", 3), GM_OK);
    const char *none[1] = {NULL};
    assert_int_equal(gm_attr_set_list_string(as, "nostr", none, 0), GM_OK);
    assert_int_equal(gm_attr_set_list_float(as, "nofloat", NULL, 0), GM_OK);
    assert_int_equal(gm_attr_set_list_bool(as, "nobool", NULL, 0), GM_OK);
    assert_int_equal(gm_attr_set_int(as, "", 7), GM_OK); /* ONNX attributes need a name */
    gm_node *o = gm_graph_add_node(g, "o", "NetOutput", &err);
    assert_int_equal(gm_node_add_input_by_name(o, "k \"quoted\" \\", 0), GM_OK);
    assert_int_equal(gm_model_finalize(m, &err), GM_OK);

    size_t len;
    void *bytes = write_onnx(m, &len);
    gm_model *back = read_onnx_buf(bytes, len, "edge.onnx", NULL);
    const gm_node *kb = gm_model_find_node(back, "k \"quoted\" \\");
    assert_non_null(kb);
    const gm_attr *list = *gm_node_attrs((gm_node *)kb);
    assert_true(isnan(gm_attr_float(gm_attr_find(list, "nan"))));
    assert_true(isinf(gm_attr_float(gm_attr_find(list, "inf"))));
    assert_true(gm_attr_float(gm_attr_find(list, "tiny")) == 4.9e-324);
    assert_int_equal(gm_attr_get_kind(gm_attr_find(list, "latin1")), GM_ATTR_STRING);
    assert_string_equal(gm_attr_string(gm_attr_find(list, "latin1"), NULL), "caf\xe9");
    size_t blen;
    assert_int_equal(gm_attr_get_kind(gm_attr_find(list, "nul")), GM_ATTR_BYTES);
    assert_memory_equal(gm_attr_string(gm_attr_find(list, "nul"), &blen), "a\0b", 3);
    assert_int_equal(blen, 3);
    /* Empty lists keep their element kind (ONNX attributes carry a type). */
    assert_int_equal(gm_attr_get_kind(gm_attr_find(list, "nostr")), GM_ATTR_LIST_STRING);
    assert_int_equal(gm_attr_get_kind(gm_attr_find(list, "nofloat")), GM_ATTR_LIST_FLOAT);
    assert_int_equal(gm_attr_get_kind(gm_attr_find(list, "nobool")), GM_ATTR_LIST_BOOL);
    assert_int_equal(gm_attr_int(gm_attr_find(list, "")), 7);
    assert_string_equal(gm_graph_name(gm_model_root(back)), "r\"oot\xc3\xa9");
    free(bytes);
    gm_model_free(back);
    gm_model_free(m);
}

/* A pass's inserted node is an ordinary node of the written file (what Netron shows). */
static void test_inserted_node_visible(void **state)
{
    (void)state;
    gm_model *m = read_model("resnet18.onnx", NULL);
    gm_error err;
    gm_node *fc = gm_model_find_node(m, "/fc/Gemm");
    gm_node *copy = gm_edit_insert_before(fc, 0, "fc_in_copy", "Identity", &err);
    assert_non_null(copy);
    assert_int_equal(gm_attr_set_bool(gm_node_attrs(copy), "_cannot_be_deleted", true), GM_OK);
    assert_int_equal(gm_model_toposort(m, &err), GM_OK);
    size_t len;
    void *bytes = write_onnx(m, &len);
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, bytes);
    const Onnx__NodeProto *id = NULL, *gemm = NULL;
    size_t id_pos = 0, gemm_pos = 0;
    for (size_t i = 0; i < mp->graph->n_node; i++) {
        if (strcmp(mp->graph->node[i]->name, "fc_in_copy") == 0) id = mp->graph->node[id_pos = i];
        if (strcmp(mp->graph->node[i]->name, "/fc/Gemm") == 0) gemm = mp->graph->node[gemm_pos = i];
    }
    assert_non_null(id);
    assert_non_null(gemm);
    assert_string_equal(id->op_type, "Identity");
    assert_string_equal(gemm->input[0], id->output[0]);
    assert_true(id_pos < gemm_pos); /* topological order */
    onnx__model_proto__free_unpacked(mp, NULL);
    gm_model *back = read_onnx_buf(bytes, len, "passed.onnx", NULL);
    assert_true(gm_attrs_get_bool(*gm_node_attrs(gm_model_find_node(back, "fc_in_copy")), "_cannot_be_deleted", false));
    gm_model_free(back);
    free(bytes);
    gm_model_free(m);
}

/* What the writer produces for a plain model: ONNX conventions, the model's own IR version and
 * operator sets, its weights where they were, and still readable as plain ONNX when a tool
 * drops the graphmem metadata. */
static void test_written_file_is_onnx(void **state)
{
    (void)state;
    gm_model *m = read_model("resnet18.onnx", NULL);
    size_t len;
    void *bytes = write_onnx(m, &len);
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, bytes);
    assert_non_null(mp);
    assert_int_equal(mp->ir_version, 8);
    assert_string_equal(mp->producer_name, "graphmem");
    assert_true(mp->n_opset_import >= 1);
    assert_string_equal(mp->opset_import[0]->domain, "");
    assert_int_equal(mp->opset_import[0]->version, 17);
    const Onnx__GraphProto *g = mp->graph;
    assert_int_equal(g->n_input, 1);
    assert_int_equal(g->n_initializer, 42);
    assert_int_equal(g->n_node, 49);
    assert_int_equal(g->n_output, 1);
    assert_int_equal(g->n_value_info, 48);
    /* the weights stay where they were: inline data inline, an external file the model names
     * the same reference (the file has both kinds) */
    size_t external = 0, inline_ = 0;
    for (size_t i = 0; i < g->n_initializer; i++) {
        const Onnx__TensorProto *t = g->initializer[i];
        if (t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
            external++;
            assert_int_equal(t->raw_data.len, 0);
            assert_string_equal(t->external_data[0]->key, "location");
            assert_string_equal(t->external_data[0]->value, "resnet18.weights.bin");
        } else {
            inline_++;
            assert_true(t->raw_data.len > 0 || t->n_float_data > 0 || t->n_int64_data > 0 || t->n_int32_data > 0);
        }
    }
    assert_true(external > 0);
    assert_true(inline_ > 0);
    /* Metadata dropped: the graph reads as plain ONNX, with the same shapes. */
    for (size_t i = 0; i < mp->n_metadata_props; i++) onnx__string_string_entry_proto__free_unpacked(mp->metadata_props[i], NULL);
    mp->n_metadata_props = 0;
    size_t n = onnx__model_proto__get_packed_size(mp);
    uint8_t *plain = malloc(n);
    onnx__model_proto__pack(mp, plain);
    onnx__model_proto__free_unpacked(mp, NULL);
    gm_model *p = read_onnx_buf(plain, n, "plain.onnx", NULL);
    assert_int_equal(gm_model_node_count(p), gm_model_node_count(m));
    assert_int_equal(unknown_tensors(p, NULL), 0);
    assert_shape(gm_model_find_node(p, "/conv1/Conv"), 0, GM_DT_FLOAT, 4, 1, 64, 112, 112);
    gm_model_free(p);
    free(plain);
    free(bytes);
    gm_model_free(m);
}

/* ---- models built here: control flow and naming cases -------------------------------------- */

static void expect_bad(const void *data, size_t len, const char *needle);

#include "onnx_build.h"

/* Scan: one state (a running sum) and one scan input of 5 rows. */
static void test_scan(void **state)
{
    (void)state;
    Onnx__GraphProto *body = scan_sum_body();
    Onnx__GraphProto *g = bgraph("main");
    g_in(g, vinfo("init", 1, 2));
    g_in(g, vinfo("xs", 2, 5, 2));
    Onnx__NodeProto *scan = bnode("Scan", "scan", "init,xs", "final,rows");
    battr_int(scan, "num_scan_inputs", 1);
    battr_graph(scan, "body", body);
    g_node(g, scan);
    g_out(g, vinfo("final", -1));
    g_out(g, vinfo("rows", -1));
    size_t len;
    uint8_t *bytes = pack_model(g, &len);
    gm_model *m = read_onnx_buf(bytes, len, "scan.onnx", NULL);
    const gm_node *sn = gm_model_find_node(m, "scan");
    assert_string_equal(gm_node_type(sn), "Scan");
    assert_int_equal(gm_node_input_count(sn), 2);
    assert_string_equal(gm_graph_name(gm_node_subgraph(sn, 0)), "scan/body");
    assert_int_equal(iattr(gm_model_find_node(m, "s_in"), "_parent_node_index"), 0);
    assert_int_equal(iattr(gm_model_find_node(m, "x_i"), "_parent_node_index"), 1);
    const gm_node *bo = gm_model_find_node(m, "scan/body/NetOutput");
    assert_int_equal(in_parent_index(bo, 0), 0);
    assert_int_equal(in_parent_index(bo, 1), 1);
    assert_shape(gm_model_find_node(m, "x_i"), 0, GM_DT_FLOAT, 1, 2); /* a row of xs */
    assert_shape(sn, 0, GM_DT_FLOAT, 1, 2);
    assert_shape(sn, 1, GM_DT_FLOAT, 2, 5, 2); /* the rows stacked again */
    /* the state is carried, the rows stacked (ops/op_table.h) */
    assert_int_equal(iattr(sn, "_gm_carried_outputs"), 1);
    assert_false(gm_subgraph_output_is_stacked(sn, 0));
    assert_true(gm_subgraph_output_is_stacked(sn, 1));
    check_stable(m);
    gm_model_free(m);
    free_kept();
}

/* Scan before opset 9: input 0 is sequence_lens (here absent), then the states and the scan
 * inputs, each with a batch axis 0; the body sees one batch entry, so its input k is the Scan's
 * input k + 1, and every output, the state too, gathers one body value per batch entry: none is
 * carried. */
static void test_scan_opset8(void **state)
{
    (void)state;
    for (int64_t opset = 8; opset <= 9; opset++) {
        Onnx__GraphProto *g = bgraph("main");
        g_in(g, vinfo("init", 2, 3, 2));
        g_in(g, vinfo("xs", 3, 3, 5, 2));
        Onnx__NodeProto *scan = bnode("Scan", "scan", opset == 8 ? ",init,xs" : "init,xs", "final,rows");
        battr_int(scan, "num_scan_inputs", 1);
        battr_graph(scan, "body", scan_sum_body());
        g_node(g, scan);
        g_out(g, vinfo("final", -1));
        g_out(g, vinfo("rows", -1));
        size_t len;
        uint8_t *bytes = pack_model_opset(g, opset, &len);
        gm_model *m = read_onnx_buf(bytes, len, "scan8.onnx", NULL);
        const gm_node *sn = gm_model_find_node(m, "scan"), *s_in = gm_model_find_node(m, "s_in");
        const gm_node *x_i = gm_model_find_node(m, "x_i");
        if (opset == 8) {
            assert_int_equal(iattr(s_in, "_parent_node_index"), 1);
            assert_int_equal(iattr(x_i, "_parent_node_index"), 2);
            assert_shape(s_in, 0, GM_DT_FLOAT, 1, 2);         /* one batch entry of init */
            assert_shape(x_i, 0, GM_DT_FLOAT, 1, 2);          /* one row of one batch entry */
            assert_shape(sn, 0, GM_DT_FLOAT, 2, 3, 2);        /* a final state per batch entry */
            assert_shape(sn, 1, GM_DT_FLOAT, 3, 3, 5, 2);     /* batch, rows, row */
            assert_int_equal(iattr(sn, "_gm_carried_outputs"), 0);
            assert_true(gm_subgraph_output_is_stacked(sn, 0));
        } else { /* the same shapes read as opset 9: no batch axis, init's rows are the state */
            assert_int_equal(iattr(s_in, "_parent_node_index"), 0);
            assert_int_equal(iattr(x_i, "_parent_node_index"), 1);
            assert_shape(x_i, 0, GM_DT_FLOAT, 2, 5, 2);
            assert_int_equal(iattr(sn, "_gm_carried_outputs"), 1);
            assert_false(gm_subgraph_output_is_stacked(sn, 0));
        }
        assert_true(gm_subgraph_output_is_stacked(sn, 1));
        check_stable(m);
        gm_model_free(m);
        free_kept();
    }
}

/* If whose branches disagree on a dim; Loop whose state grows every iteration; a generic op
 * with a body that reads an outer value. */
static void test_flow_inference(void **state)
{
    (void)state;
    Onnx__GraphProto *then_g = bgraph("then"), *else_g = bgraph("else"), *body = bgraph("grow");
    g_node(then_g, bnode("Identity", "t_id", "x", "t_out"));
    g_out(then_g, vinfo("t_out", -1));
    Onnx__NodeProto *cat = bnode("Concat", "e_cat", "x,x", "e_out");
    battr_int(cat, "axis", 0);
    g_node(else_g, cat);
    g_out(else_g, vinfo("e_out", -1));
    g_in(body, vinfo("it", -1));
    g_in(body, vinfo("c_in", -1));
    g_in(body, vinfo("h", -1));
    Onnx__NodeProto *grow = bnode("Concat", "l_cat", "h,one", "h2");
    battr_int(grow, "axis", 0);
    g_node(body, bnode("Identity", "l_cond", "c_in", "c_out"));
    g_node(body, grow);
    g_node(body, bnode("Relu", "l_scan", "h", "per_iter"));
    g_out(body, vinfo("c_out", -1));
    g_out(body, vinfo("h2", -1));
    g_out(body, vinfo("per_iter", -1));
    Onnx__GraphProto *custom_body = bgraph("custom_body");
    g_node(custom_body, bnode("Neg", "c_neg", "x", "c_out2"));
    g_out(custom_body, vinfo("c_out2", -1));

    Onnx__GraphProto *g = bgraph("main");
    g_in(g, vinfo("x", 2, 2, 3));
    g_in(g, vinfo("c", 0));
    g_in(g, vinfo("one", 1, 1));
    Onnx__NodeProto *iff = bnode("If", "iff", "c", "y");
    battr_graph(iff, "else_branch", else_g); /* listed before then: the IR order is then, else */
    battr_graph(iff, "then_branch", then_g);
    g_node(g, iff);
    Onnx__NodeProto *loop = bnode("Loop", "loop", ",c,one", "h_final,stacked");
    battr_graph(loop, "body", body);
    g_node(g, loop);
    Onnx__NodeProto *cust = bnode("MyMap", "cust", "", "z");
    cust->domain = kstr("com.example");
    battr_graph(cust, "fn", custom_body);
    g_node(g, cust);
    g_out(g, vinfo("y", -1));
    g_out(g, vinfo("h_final", -1));
    g_out(g, vinfo("stacked", -1));
    g_out(g, vinfo("z", -1));
    g_out(g, vinfo("x", -1)); /* a graph input as an output */
    size_t len;
    uint8_t *bytes = pack_model(g, &len);
    gm_model *m = read_onnx_buf(bytes, len, "flow.onnx", NULL);
    const gm_node *in = gm_model_find_node(m, "iff");
    assert_string_equal(gm_graph_name(gm_node_subgraph(in, 0)), "iff/then_branch");
    assert_int_equal(gm_node_input_count(in), 2);
    assert_shape(in, 0, GM_DT_FLOAT, 2, -1, 3); /* [2, 3] or [4, 3] */
    const gm_node *ln = gm_model_find_node(m, "loop");
    assert_null(gm_node_input(ln, 0, NULL)); /* M absent */
    assert_shape(ln, 0, GM_DT_FLOAT, 1, -1);     /* [1], [2], [3] ... */
    assert_shape(ln, 1, GM_DT_FLOAT, 2, -1, -1); /* per iteration [k], iterations unknown */
    assert_int_equal(iattr(ln, "_gm_carried_outputs"), 1); /* h carried, per_iter stacked */
    const gm_node *cn = gm_model_find_node(m, "cust");
    assert_string_equal(gm_attrs_get_string(*gm_node_attrs((gm_node *)cn), "domain"), "com.example");
    {
        /* written back, the domain is the NodeProto's field, not also an attribute (which its
         * schema does not know: onnx.checker refuses that) */
        void *wbytes = NULL;
        size_t wlen = 0;
        gm_error werr;
        assert_int_equal(gm_model_write_onnx(m, &wbytes, &wlen, &werr), GM_OK);
        Onnx__ModelProto *wm = onnx__model_proto__unpack(NULL, wlen, wbytes);
        assert_non_null(wm);
        const Onnx__NodeProto *wn = NULL;
        for (size_t i = 0; i < wm->graph->n_node; i++)
            if (!strcmp(wm->graph->node[i]->name, "cust")) wn = wm->graph->node[i];
        assert_non_null(wn);
        assert_string_equal(wn->domain, "com.example");
        for (size_t i = 0; i < wn->n_attribute; i++) assert_string_not_equal(wn->attribute[i]->name, "domain");
        onnx__model_proto__free_unpacked(wm, NULL);
        free(wbytes);
    }
    assert_int_equal(gm_node_input_count(cn), 1); /* the captured x */
    assert_int_equal(iattr(gm_model_find_node(m, "cust/fn/x"), "_parent_node_index"), 0);
    const gm_node *out = gm_model_find_node(m, "NetOutput");
    int32_t idx;
    assert_string_equal(gm_node_name(gm_node_input(out, 4, &idx)), "x");
    check_stable(m);
    gm_model_free(m);

    /* An If without else_branch. */
    Onnx__GraphProto *g2 = bgraph("main");
    g_in(g2, vinfo("c", 0));
    Onnx__NodeProto *half = bnode("If", "half", "c", "y");
    battr_graph(half, "then_branch", then_g);
    g_node(g2, half);
    g_in(then_g, vinfo("x", 2, 2, 3)); /* no outer x here: give the branch its own */
    bytes = pack_model(g2, &len);
    expect_bad(bytes, len, "node 'half' (If): missing subgraph attribute else_branch");
    free_kept();
}

/* ---- captured values: ONNX bodies read the values around them by name ----------------------- */

/* The values of a graph (inputs, initializers, node outputs), chained to the graphs around it. */
typedef struct names_in_scope {
    const struct names_in_scope *outer;
    const char **v;
    size_t n;
} names_in_scope;

static bool in_scope(const names_in_scope *s, const char *name)
{
    for (; s; s = s->outer)
        for (size_t i = 0; i < s->n; i++)
            if (!strcmp(s->v[i], name)) return true;
    return false;
}

static const Onnx__GraphProto *graph_attr(const Onnx__NodeProto *n, const char *name)
{
    for (size_t i = 0; i < n->n_attribute; i++)
        if (!strcmp(n->attribute[i]->name, name)) return n->attribute[i]->g;
    return NULL;
}

static const Onnx__NodeProto *node_named(const Onnx__GraphProto *g, const char *name)
{
    for (size_t i = 0; i < g->n_node; i++)
        if (!strcmp(g->node[i]->name, name)) return g->node[i];
    return NULL;
}

static bool reads(const Onnx__GraphProto *g, const char *value)
{
    for (size_t i = 0; i < g->n_node; i++)
        for (size_t k = 0; k < g->node[i]->n_input; k++)
            if (!strcmp(g->node[i]->input[k], value)) return true;
    return false;
}

static void assert_in_scope(const names_in_scope *s, const Onnx__GraphProto *g, const char *name)
{
    if (*name && !in_scope(s, name)) print_message("graph '%s' reads '%s', no value in its scope\n", g->name, name);
    assert_true(!*name || in_scope(s, name));
}

/* What ONNX asks of a written graph's bodies: an If has its cond alone and branches without
 * inputs; a Loop's body has an input per Loop input (iteration, cond, carried values), a Scan's
 * one per Scan input; every value a node or an output reads is one of its graph or of a graph
 * around it. Returns the bodies seen. */
static size_t assert_scopes(const Onnx__GraphProto *g, const names_in_scope *outer)
{
    size_t cap = g->n_input + g->n_initializer, bodies = 0;
    for (size_t i = 0; i < g->n_node; i++) cap += g->node[i]->n_output;
    names_in_scope s = {outer, malloc((cap ? cap : 1) * sizeof(char *)), 0};
    assert_non_null(s.v);
    for (size_t i = 0; i < g->n_input; i++) s.v[s.n++] = g->input[i]->name;
    for (size_t i = 0; i < g->n_initializer; i++) s.v[s.n++] = g->initializer[i]->name;
    for (size_t i = 0; i < g->n_node; i++)
        for (size_t k = 0; k < g->node[i]->n_output; k++) s.v[s.n++] = g->node[i]->output[k];
    for (size_t i = 0; i < g->n_output; i++) assert_in_scope(&s, g, g->output[i]->name);
    for (size_t i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *np = g->node[i];
        for (size_t k = 0; k < np->n_input; k++) assert_in_scope(&s, g, np->input[k]);
        bool std = !np->domain || !*np->domain;
        if (std && !strcmp(np->op_type, "If")) {
            assert_int_equal(np->n_input, 1);
            assert_int_equal(graph_attr(np, "then_branch")->n_input, 0);
            assert_int_equal(graph_attr(np, "else_branch")->n_input, 0);
        }
        if (std && (!strcmp(np->op_type, "Loop") || !strcmp(np->op_type, "Scan")))
            assert_int_equal(graph_attr(np, "body")->n_input, np->n_input);
        for (size_t a = 0; a < np->n_attribute; a++)
            if (np->attribute[a]->g) bodies += 1 + assert_scopes(np->attribute[a]->g, &s);
    }
    free(s.v);
    return bodies;
}

/* The written model's root graph, unpacked (free with onnx__model_proto__free_unpacked). */
static Onnx__ModelProto *written(const gm_model *m)
{
    size_t len;
    void *bytes = write_onnx(m, &len);
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, bytes);
    free(bytes);
    assert_non_null(mp);
    return mp;
}

static gm_model *read_path(const char *path)
{
    size_t len;
    char *data = slurp(path, &len);
    gm_model *m = read_onnx_buf(data, len, path, NULL);
    free(data);
    return m;
}

/* A convert keeps what ONNX tools read the model by: the graph's output names (they were
 * "Relu_0:0" and the like, the IR node's), and node attributes of kinds the IR lacks (a
 * ConstantOfShape's TENSOR value was dropped, so the written model filled with float zeros
 * whatever the original said). Read back, they are kept again. */
static void test_names_and_kept_attrs(void **state)
{
    (void)state;
    gm_model *m = read_path(GM_TEST_DATA_DIR "/models/control_flow.onnx");
    Onnx__ModelProto *mp = written(m);
    assert_int_equal(mp->graph->n_output, 1);
    assert_string_equal(mp->graph->output[0]->name, "67");
    const Onnx__NodeProto *cos = NULL;
    for (size_t i = 0; i < mp->graph->n_node; i++)
        if (!strcmp(mp->graph->node[i]->op_type, "ConstantOfShape")) cos = mp->graph->node[i];
    assert_non_null(cos);
    assert_int_equal(cos->n_attribute, 1);
    assert_string_equal(cos->attribute[0]->name, "value");
    assert_int_equal(cos->attribute[0]->type, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);
    assert_non_null(cos->attribute[0]->t);
    /* JSON and GE dumps leave both out: they are ONNX's alone. */
    char *json = write_json_ok(m);
    assert_null(strstr(json, GM_ATTR_ONNX_VALUES));
    assert_null(strstr(json, GM_ATTR_ONNX_ATTR_PREFIX));
    free(json);
    onnx__model_proto__free_unpacked(mp, NULL);
    check_stable(m);
    gm_model_free(m);
}

/* The outer values a body reads are the IR's inputs of the node owning it, past the operator's
 * own; written to ONNX they are captures again, read by name: no input of the node nor of the
 * body (test_loop16_seq_none had its If take the Loop body's value its else_branch reads as a
 * second input, and that branch a graph input, which onnx.checker refuses; a Loop's captured
 * values became carried ones, changing what it computes). Read back, the IR is the same. */
static void test_captures(void **state)
{
    (void)state;
    /* an If in a Loop body reading a value of that body */
    gm_model *m = read_path(GM_TEST_DATA_DIR "/onnx_loops/loop16_seq_none.onnx");
    const gm_node *iff = gm_model_find_node(m, "If_0");
    assert_int_equal(gm_node_input_count(iff), 2); /* cond, the captured opt_seq_in */
    Onnx__ModelProto *mp = written(m);
    assert_int_equal(assert_scopes(mp->graph, NULL), 3);
    const Onnx__GraphProto *body = graph_attr(node_named(mp->graph, "Loop_0"), "body");
    const Onnx__NodeProto *wif = node_named(body, "If_0");
    assert_non_null(wif);
    assert_int_equal(body->n_input, 3);
    assert_true(reads(graph_attr(wif, "else_branch"), body->input[2]->name));
    onnx__model_proto__free_unpacked(mp, NULL);
    check_stable(m);
    gm_model_free(m);

    /* a Loop whose body reads a root input: the Loop has (M, cond, start), the body reads delta */
    m = read_path(GM_TEST_DATA_DIR "/onnx_loops/range_float_type_positive_delta_expanded.onnx");
    mp = written(m);
    assert_int_equal(assert_scopes(mp->graph, NULL), 1);
    const Onnx__NodeProto *loop = NULL;
    for (size_t i = 0; i < mp->graph->n_node; i++)
        if (!strcmp(mp->graph->node[i]->op_type, "Loop")) loop = mp->graph->node[i];
    assert_non_null(loop);
    assert_int_equal(loop->n_input, 3);
    assert_true(reads(graph_attr(loop, "body"), "delta"));
    onnx__model_proto__free_unpacked(mp, NULL);
    check_stable(m);
    gm_model_free(m);

    /* two levels: If_1, in Loop_1's body, reads a root Constant by the root's name for it, and
     * each body keeps the record of its Data on a value_info of that name */
    m = read_model("control_flow.onnx", NULL);
    mp = written(m);
    assert_int_equal(assert_scopes(mp->graph, NULL), 6);
    const Onnx__NodeProto *l1 = node_named(mp->graph, "/Loop_1");
    assert_int_equal(l1->n_input, gm_node_input_count(gm_model_find_node(m, "/Loop_1")) - 1);
    const char *c3 = node_named(mp->graph, "/Constant_3")->output[0];
    const Onnx__GraphProto *b1 = graph_attr(l1, "body");
    const Onnx__GraphProto *e1 = graph_attr(node_named(b1, "/If_1"), "else_branch");
    assert_true(reads(e1, c3));
    const Onnx__GraphProto *both[] = {b1, e1};
    for (size_t k = 0; k < 2; k++) {
        bool kept = false;
        for (size_t i = 0; i < both[k]->n_value_info; i++)
            kept |= !strcmp(both[k]->value_info[i]->name, c3) &&
                    !strncmp(both[k]->value_info[i]->doc_string, GM_ONNX_RECORD_MAGIC, strlen(GM_ONNX_RECORD_MAGIC));
        assert_true(kept);
    }
    onnx__model_proto__free_unpacked(mp, NULL);
    gm_model_free(m); /* check_stable: test_control_flow */

    /* a GE If (examples/train_step.json): its data input read in the branches by name */
    m = read_file_ok(GM_SOURCE_DIR "/examples/train_step.json");
    mp = written(m);
    assert_true(assert_scopes(mp->graph, NULL) >= 2);
    assert_int_equal(node_named(mp->graph, "act")->n_input, 1);
    onnx__model_proto__free_unpacked(mp, NULL);
    gm_model_free(m);

    /* a Scan whose body reads an outer value: the Scan has its state and scan input */
    Onnx__GraphProto *sb = bgraph("shift_body");
    g_in(sb, vinfo("s_in", -1));
    g_in(sb, vinfo("x_i", -1));
    g_node(sb, bnode("Add", "acc", "s_in,x_i", "s_out"));
    g_node(sb, bnode("Add", "shift", "s_out,bias", "row"));
    g_out(sb, vinfo("s_out", -1));
    g_out(sb, vinfo("row", -1));
    Onnx__GraphProto *g = bgraph("main");
    g_in(g, vinfo("init", 1, 2));
    g_in(g, vinfo("xs", 2, 5, 2));
    g_in(g, vinfo("bias", 1, 2));
    Onnx__NodeProto *scan = bnode("Scan", "scan", "init,xs", "final,rows");
    battr_int(scan, "num_scan_inputs", 1);
    battr_graph(scan, "body", sb);
    g_node(g, scan);
    g_out(g, vinfo("final", -1));
    g_out(g, vinfo("rows", -1));
    size_t len;
    uint8_t *bytes = pack_model(g, &len);
    m = read_onnx_buf(bytes, len, "scan_bias.onnx", NULL);
    assert_int_equal(gm_node_input_count(gm_model_find_node(m, "scan")), 3);
    mp = written(m);
    assert_int_equal(assert_scopes(mp->graph, NULL), 1);
    assert_int_equal(node_named(mp->graph, "scan")->n_input, 2);
    assert_true(reads(graph_attr(node_named(mp->graph, "scan"), "body"), "bias"));
    onnx__model_proto__free_unpacked(mp, NULL);
    check_stable(m);
    gm_model_free(m);
    free_kept();
}

/* A sequence no declaration names: the reader keeps no type for it, and its desc says nothing
 * (no element type, no rank). Its value_info goes without a type: written as a tensor of
 * UNDEFINED elements, onnx.checker's shape inference refused it against the sequence its
 * producer makes (16 converted backend models failed so, with onnx 1.12). The graph's own
 * input and output keep theirs, and the round trip is stable. */
static void test_undeclared_sequence(void **state)
{
    (void)state;
    Onnx__GraphProto *g = bgraph("seq");
    g_in(g, vinfo("x", 1, 4));
    g_node(g, bnode("SequenceConstruct", "make", "x", "s"));
    Onnx__NodeProto *cat = bnode("ConcatFromSequence", "cat", "s", "y");
    battr_int(cat, "axis", 0);
    g_node(g, cat);
    g_out(g, vinfo("y", 1, 4));
    size_t len;
    uint8_t *bytes = pack_model_opset(g, 11, &len);
    gm_model *m = read_onnx_buf(bytes, len, "undeclared_sequence.onnx", NULL);
    Onnx__ModelProto *mp = written(m);
    bool seen = false;
    for (size_t i = 0; i < mp->graph->n_value_info; i++) {
        if (strcmp(mp->graph->value_info[i]->name, "s")) continue;
        seen = true;
        assert_null(mp->graph->value_info[i]->type);
    }
    assert_true(seen);
    assert_int_equal(mp->graph->n_input, 1);
    assert_non_null(mp->graph->input[0]->type);
    assert_int_equal(mp->graph->n_output, 1);
    assert_non_null(mp->graph->output[0]->type);
    assert_int_equal(mp->graph->output[0]->type->value_case, ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE);
    onnx__model_proto__free_unpacked(mp, NULL);
    check_stable(m);
    gm_model_free(m);
    free_kept();
}

/* Names: an ONNX name is kept when unique and no value's name; otherwise "<op>_<k>". */
static void test_names(void **state)
{
    (void)state;
    Onnx__GraphProto *g = bgraph("");
    g_in(g, vinfo("x", 1, 4));
    g_node(g, bnode("Relu", "x", "x", "a"));        /* clashes with the Data of input x */
    g_node(g, bnode("Relu", "dup", "a", "b"));      /* used twice */
    g_node(g, bnode("Relu", "dup", "b", "c"));
    g_node(g, bnode("Relu", "", "c", "d"));         /* no name */
    g_node(g, bnode("Relu", "Relu_0", "d", "e"));   /* unique: kept, so generated names skip it */
    g_node(g, bnode("Dropout", "drop", "e", "f,")); /* an optional output not produced */
    g_out(g, vinfo("f", -1));
    size_t len;
    uint8_t *bytes = pack_model(g, &len);
    gm_model *m = read_onnx_buf(bytes, len, "names.onnx", NULL);
    assert_string_equal(gm_graph_name(gm_model_root(m)), "main");
    assert_string_equal(gm_node_type(gm_model_find_node(m, "x")), "Data");
    assert_string_equal(gm_node_type(gm_model_find_node(m, "Relu_0")), "Relu");
    const char *gen[] = {"Relu_1", "Relu_2", "Relu_3", "Relu_4"}; /* x, dup, dup, "" in order */
    for (int i = 0; i < 4; i++) assert_non_null(gm_model_find_node(m, gen[i]));
    assert_null(gm_model_find_node(m, "dup"));
    int32_t idx;
    assert_string_equal(gm_node_name(gm_node_input(gm_model_find_node(m, "Relu_0"), 0, &idx)), "Relu_4");
    const gm_node *drop = gm_model_find_node(m, "drop");
    assert_int_equal(gm_node_output_count(drop), 2);
    assert_shape(drop, 1, GM_DT_BOOL, 1, 4); /* the mask, inferred though nothing reads it */
    check_stable(m);
    gm_model_free(m);
    free_kept();
}

/* ---- bad input ----------------------------------------------------------------------------- */

static void expect_bad(const void *data, size_t len, const char *needle)
{
    gm_model *m = (gm_model *)1;
    gm_error err;
    gm_error_clear(&err);
    gm_status st = gm_model_read_onnx(data, len, "bad.onnx", NULL, &m, &err);
    if (st != GM_ERR_INPUT || !strstr(err.message, needle)) print_message("got %d: %s\n", st, err.message);
    assert_int_equal(st, GM_ERR_INPUT);
    assert_null(m);
    assert_true(strncmp(err.message, "bad.onnx: ", 10) == 0);
    assert_non_null(strstr(err.message, needle));
}

static size_t put_varint(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    do {
        p[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    return n;
}

/* A small plain model built field by field: one graph input x [2, 3] and the given node. */
static uint8_t *tiny_model(const char *op, const char *in0, int32_t elem_type, size_t *len)
{
    Onnx__ModelProto mp = ONNX__MODEL_PROTO__INIT;
    Onnx__GraphProto gp = ONNX__GRAPH_PROTO__INIT;
    Onnx__NodeProto np = ONNX__NODE_PROTO__INIT, *nps[1] = {&np};
    Onnx__ValueInfoProto in = ONNX__VALUE_INFO_PROTO__INIT, out = ONNX__VALUE_INFO_PROTO__INIT;
    Onnx__ValueInfoProto *ins[1] = {&in}, *outs[1] = {&out};
    Onnx__TypeProto tp = ONNX__TYPE_PROTO__INIT;
    Onnx__TypeProto__Tensor tt = ONNX__TYPE_PROTO__TENSOR__INIT;
    char *node_in[1] = {(char *)in0}, *node_out[1] = {"y"};
    mp.has_ir_version = 1;
    mp.ir_version = 8;
    mp.graph = &gp;
    gp.name = "g";
    gp.n_node = 1;
    gp.node = nps;
    gp.n_input = 1;
    gp.input = ins;
    gp.n_output = 1;
    gp.output = outs;
    in.name = "x";
    in.type = &tp;
    tp.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp.tensor_type = &tt;
    tt.has_elem_type = 1;
    tt.elem_type = elem_type;
    out.name = "y";
    np.op_type = (char *)op;
    np.name = "n";
    np.n_input = 1;
    np.input = node_in;
    np.n_output = 1;
    np.output = node_out;
    *len = onnx__model_proto__get_packed_size(&mp);
    uint8_t *buf = malloc(*len);
    onnx__model_proto__pack(&mp, buf);
    return buf;
}

static void test_bad_inputs(void **state)
{
    (void)state;
    expect_bad("", 0, "not a valid ONNX model");
    /* Truncated in the middle of a field. */
    size_t len;
    char *data = slurp(MODELS "resnet18.onnx", &len);
    expect_bad(data, len / 2, "protobuf does not decode");
    expect_bad(data, len - 1, "protobuf does not decode");
    free(data);
    /* A length of 2^40 for the graph field. */
    uint8_t huge[16] = {0x08, 0x08, 0x3a};
    size_t n = 3 + put_varint(huge + 3, UINT64_C(1) << 40);
    expect_bad(huge, n, "protobuf does not decode");
    /* The graph field (7) with a varint wire type; a group wire type. */
    const uint8_t wrong[] = {0x08, 0x08, 0x38, 0x01};
    expect_bad(wrong, sizeof wrong, "protobuf does not decode");
    const uint8_t group[] = {0x0b, 0x0c};
    expect_bad(group, sizeof group, "protobuf does not decode");
    /* Decodes, but holds no graph. */
    const uint8_t nograph[] = {0x08, 0x08};
    expect_bad(nograph, sizeof nograph, "no graph");
    /* A node input naming no value; an unknown element type; no op type. */
    uint8_t *b = tiny_model("Relu", "nope", 1, &len);
    expect_bad(b, len, "node 'n' (Relu): input 0 names unknown value 'nope'");
    free(b);
    b = tiny_model("Relu", "x", 99, &len);
    expect_bad(b, len, "unknown ONNX element type 99");
    free(b);
    b = tiny_model("", "x", 1, &len);
    expect_bad(b, len, "has no op_type");
    free(b);
    /* A sound tiny model reads. */
    b = tiny_model("Relu", "x", 1, &len);
    gm_model *m = read_onnx_buf(b, len, "tiny.onnx", NULL);
    assert_int_equal(gm_model_node_count(m), 3);
    gm_model_free(m);
    /* graphmem's own file, damaged: a newer format, a record that does not parse. */
    gm_model *tm = read_onnx_buf(b, len, "tiny.onnx", NULL);
    size_t wlen;
    void *w = write_onnx(tm, &wlen);
    gm_model_free(tm);
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, wlen, w);
    assert_non_null(mp);
    assert_string_equal(mp->metadata_props[0]->key, GM_ONNX_FORMAT_KEY);
    char *saved_value = mp->metadata_props[0]->value, *saved_doc = mp->graph->input[0]->doc_string;
    mp->metadata_props[0]->value = "2";
    uint8_t *d1 = malloc(onnx__model_proto__get_packed_size(mp));
    size_t l1 = onnx__model_proto__pack(mp, d1);
    mp->metadata_props[0]->value = saved_value;
    mp->graph->input[0]->doc_string = "graphmem:{n \"x\" t";
    uint8_t *d2 = malloc(onnx__model_proto__get_packed_size(mp));
    size_t l2 = onnx__model_proto__pack(mp, d2);
    mp->graph->input[0]->doc_string = saved_doc;
    onnx__model_proto__free_unpacked(mp, NULL);
    expect_bad(d1, l1, "written by a newer graphmem");
    expect_bad(d2, l2, "graph 'g': input 'x': bad graphmem record");
    free(d1);
    free(d2);
    free(w);
    /* Bad --dims entries. */
    const char *dims[] = {"T5", NULL};
    gm_error err;
    m = NULL;
    assert_int_equal(gm_model_read_onnx(b, len, "tiny.onnx", dims, &m, &err), GM_ERR_INPUT);
    assert_non_null(strstr(err.message, "dim 'T5': expected NAME=VALUE, VALUE a whole number >= 0"));
    assert_null(m);
    free(b);
}

/* A float value whose dims are the given dim_values, negative ones included (vinfo leaves a
 * negative dim without a value). */
static Onnx__ValueInfoProto *vinfo_dims(const char *name, size_t n, const int64_t *dims)
{
    Onnx__ValueInfoProto *vi = vinfo(name, 0);
    Onnx__TensorShapeProto *sh = vi->type->tensor_type->shape;
    sh->dim = keep(calloc(n + 1, sizeof *sh->dim));
    for (size_t i = 0; i < n; i++) {
        Onnx__TensorShapeProto__Dimension *d = keep(calloc(1, sizeof *d));
        onnx__tensor_shape_proto__dimension__init(d);
        d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        d->dim_value = dims[i];
        sh->dim[sh->n_dim++] = d;
    }
    return vi;
}

static Onnx__TensorProto *float_tensor(const char *name, size_t n, const int64_t *dims)
{
    Onnx__TensorProto *t = keep(calloc(1, sizeof *t));
    onnx__tensor_proto__init(t);
    if (name) t->name = kstr(name);
    t->has_data_type = 1;
    t->data_type = 1;
    t->dims = keep(calloc(n + 1, sizeof *t->dims));
    memcpy(t->dims, dims, n * sizeof *dims);
    t->n_dims = n;
    return t;
}

/* x -> Relu -> y, x and y declared with the given dims. */
static uint8_t *relu_model(size_t nx, const int64_t *x, size_t ny, const int64_t *y, size_t *len)
{
    Onnx__GraphProto *g = bgraph("main");
    g_in(g, vinfo_dims("x", nx, x));
    g_node(g, bnode("Relu", "r", "x", "y"));
    g_out(g, vinfo_dims("y", ny, y));
    return pack_model(g, len);
}

/* The one dim rule of every reader (ir.h): -1 unknown, [-2] alone an unknown rank, any other
 * negative dim bad input — in declared values, initializers and tensor attributes. */
static void test_bad_dims(void **state)
{
    (void)state;
    size_t len;
    const int64_t ok[] = {4}, minus2_first[] = {-2, 3}, minus2_inside[] = {4, -2, 8}, minus5[] = {2, -5};
    uint8_t *b = relu_model(2, minus2_first, 1, ok, &len);
    expect_bad(b, len, "graph 'main': value 'x': shape dim 0 is -2 (dims are >= 0, -1 unknown, or [-2] alone for an unknown rank)");
    b = relu_model(1, ok, 3, minus2_inside, &len);
    expect_bad(b, len, "value 'y': shape dim 1 is -2");
    b = relu_model(2, minus5, 1, ok, &len);
    expect_bad(b, len, "value 'x': shape dim 1 is -5");

    /* An initializer and a Constant's value tensor. */
    Onnx__GraphProto *g = bgraph("main");
    g_in(g, vinfo("x", 1, 4));
    g->initializer = keep(calloc(2, sizeof *g->initializer));
    g->initializer[g->n_initializer++] = float_tensor("w", 1, (const int64_t[]){-3});
    g_node(g, bnode("Add", "add", "x,w", "y"));
    g_out(g, vinfo("y", -1));
    b = pack_model(g, &len);
    expect_bad(b, len, "graph 'main': initializer 'w': dim 0 is -3");
    g = bgraph("main");
    Onnx__NodeProto *c = bnode("Constant", "c", "", "y");
    battr(c, "value", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR)->t = float_tensor(NULL, 2, (const int64_t[]){2, -4});
    g_node(g, c);
    g_out(g, vinfo("y", -1));
    b = pack_model(g, &len);
    expect_bad(b, len, "graph 'main': node 'c': attribute 'value': dim 1 is -4");

    /* What the rule lets through: [-2] alone is an unknown rank, -1 an unknown dim. */
    const int64_t rank_unknown[] = {-2}, dim_unknown[] = {-1, 3};
    b = relu_model(1, rank_unknown, 2, dim_unknown, &len);
    gm_model *m = read_onnx_buf(b, len, "dims.onnx", NULL);
    const gm_tensor_desc *xd = gm_node_output_desc(gm_model_find_node(m, "x"), 0);
    assert_int_equal(gm_desc_ndims(xd), 1);
    assert_int_equal(gm_desc_dims(xd)[0], -2);
    assert_shape(gm_model_find_node(m, "r"), 0, GM_DT_FLOAT, 2, -1, 3);
    gm_model_free(m);
    free_kept();
}

/* Messages nested 50,000 deep (TypeProto -> sequence -> TypeProto ...) would overflow the
 * stack of a recursive decoder; they are refused before decoding. */
static void test_deep_nesting(void **state)
{
    (void)state;
    size_t depth = 50000, cap = depth * 16 + 64;
    uint8_t *a = malloc(cap), *b = malloc(cap);
    size_t n = 0; /* the innermost TypeProto is empty */
    for (size_t i = 0; i < depth; i++) {
        /* Sequence { elem_type (1) = a } */
        size_t m = 0;
        b[m++] = 0x0a;
        m += put_varint(b + m, n);
        memcpy(b + m, a, n);
        m += n;
        /* TypeProto { sequence_type (4) = b } */
        n = 0;
        a[n++] = 0x22;
        n += put_varint(a + n, m);
        memcpy(a + n, b, m);
        n += m;
    }
    /* ValueInfo { name "x", type (2) }, Graph { input (11) }, Model { graph (7) } */
    size_t m = 0;
    b[m++] = 0x0a, b[m++] = 1, b[m++] = 'x', b[m++] = 0x12;
    m += put_varint(b + m, n);
    memcpy(b + m, a, n);
    m += n;
    n = 0;
    a[n++] = 0x5a;
    n += put_varint(a + n, m);
    memcpy(a + n, b, m);
    n += m;
    m = 0;
    b[m++] = 0x3a;
    m += put_varint(b + m, n);
    memcpy(b + m, a, n);
    m += n;
    expect_bad(b, m, "protobuf does not decode");
    free(a);
    free(b);
}

static uint64_t rng(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Random bytes and damaged real models: a clean error or a model, never a crash or a leak. */
static void test_garbage(void **state)
{
    (void)state;
    uint64_t seed = 0x9e3779b97f4a7c15u;
    uint8_t buf[4096];
    gm_error err;
    for (int it = 0; it < 400; it++) {
        size_t len = 1 + rng(&seed) % sizeof buf;
        for (size_t i = 0; i < len; i++) buf[i] = (uint8_t)rng(&seed);
        gm_model *m = NULL;
        gm_status st = gm_model_read_onnx(buf, len, "random.onnx", NULL, &m, &err);
        assert_true(st == GM_OK || st == GM_ERR_INPUT);
        if (st == GM_OK) gm_model_free(m);
        else assert_true(strncmp(err.message, "random.onnx: ", 13) == 0);
    }
    static const char *const names[] = {"control_flow.onnx", "resnet18_train.onnx"};
    for (size_t f = 0; f < 2; f++) {
        char path[512];
        snprintf(path, sizeof path, MODELS "%s", names[f]);
        size_t len;
        char *orig = slurp(path, &len);
        char *copy = malloc(len);
        for (int it = 0; it < 150; it++) {
            memcpy(copy, orig, len);
            int flips = 1 + (int)(rng(&seed) % 4);
            for (int k = 0; k < flips; k++) copy[rng(&seed) % len] = (char)rng(&seed);
            gm_model *m = NULL;
            gm_status st = gm_model_read_onnx(copy, len, "damaged.onnx", NULL, &m, &err);
            assert_true(st == GM_OK || st == GM_ERR_INPUT);
            if (st == GM_OK) gm_model_free(m);
        }
        free(copy);
        free(orig);
    }
}

/* Every allocation of a read (plain and graphmem's own file) and of a write fails in turn:
 * each failure is a clean GM_ERR_NOMEM, no model, no leak. */
static void test_alloc_failures(void **state)
{
    (void)state;
    size_t len, wlen;
    char *data = slurp(MODELS "control_flow.onnx", &len);
    gm_model *m = read_onnx_buf(data, len, "cf.onnx", NULL);
    void *written = write_onnx(m, &wlen);
    gm_error err;
    for (int which = 0; which < 3; which++) {
        long n;
        for (n = 0; n < 100000; n++) {
            gm_alloc_fail_after(n);
            gm_model *x = NULL;
            void *out = NULL;
            size_t olen;
            gm_status st = which == 0   ? gm_model_read_onnx(data, len, "cf.onnx", NULL, &x, &err)
                           : which == 1 ? gm_model_read_onnx(written, wlen, "w.onnx", NULL, &x, &err)
                                        : gm_model_write_onnx(m, &out, &olen, &err);
            gm_alloc_fail_after(-1);
            if (st == GM_OK) {
                gm_model_free(x);
                free(out);
                break;
            }
            if (st != GM_ERR_NOMEM) print_message("step %ld of %d: %s\n", n, which, err.message);
            assert_int_equal(st, GM_ERR_NOMEM);
            assert_null(x);
            assert_null(out);
        }
        assert_true(n > 100);
    }
    free(written);
    free(data);
    gm_model_free(m);
}

/* ---- shape inference rules ----------------------------------------------------------------- */

/* A node built in the test: op type and attributes. */
typedef struct tnode {
    Onnx__NodeProto n;
    Onnx__AttributeProto a[8];
    Onnx__AttributeProto *ap[8];
    int64_t ints[8][8];
} tnode;

static void tn_init(tnode *t, const char *op)
{
    memset(t, 0, sizeof *t);
    onnx__node_proto__init(&t->n);
    t->n.op_type = (char *)op;
    t->n.attribute = t->ap;
}

static Onnx__AttributeProto *tn_attr(tnode *t, const char *name, Onnx__AttributeProto__AttributeType type)
{
    Onnx__AttributeProto *a = &t->a[t->n.n_attribute];
    onnx__attribute_proto__init(a);
    a->name = (char *)name;
    a->has_type = 1;
    a->type = type;
    t->ap[t->n.n_attribute++] = a;
    return a;
}

static void tn_int(tnode *t, const char *name, int64_t v)
{
    Onnx__AttributeProto *a = tn_attr(t, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    a->has_i = 1;
    a->i = v;
}

static void tn_ints(tnode *t, const char *name, size_t n, ...)
{
    size_t slot = t->n.n_attribute;
    Onnx__AttributeProto *a = tn_attr(t, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
    va_list ap;
    va_start(ap, n);
    for (size_t i = 0; i < n; i++) t->ints[slot][i] = va_arg(ap, int64_t);
    va_end(ap);
    a->ints = t->ints[slot];
    a->n_ints = n;
}

static void tn_str(tnode *t, const char *name, const char *s)
{
    Onnx__AttributeProto *a = tn_attr(t, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
    a->has_s = 1;
    a->s.data = (uint8_t *)s;
    a->s.len = strlen(s);
}

/* A tensor of known dtype and shape (rank < 0: unknown rank). */
static gm_onnx_info T(gm_dtype dt, int32_t rank, ...)
{
    gm_onnx_info t;
    memset(&t, 0, sizeof t);
    gm_onnx_info_unknown(&t);
    t.dtype = dt;
    t.rank = rank;
    va_list ap;
    va_start(ap, rank);
    for (int32_t i = 0; i < rank; i++) t.dims[i] = va_arg(ap, int);
    va_end(ap);
    return t;
}

/* A 1-D int64 tensor with known values. */
static gm_onnx_info V(int32_t n, ...)
{
    gm_onnx_info t = T(GM_DT_INT64, 1, n);
    va_list ap;
    va_start(ap, n);
    for (int32_t i = 0; i < n; i++) t.ival[i] = va_arg(ap, int64_t);
    va_end(ap);
    t.vkind = GM_ONNX_VAL_INT;
    t.nval = n;
    return t;
}

static gm_onnx_info out_[4];

/* Infers output k of the node from the inputs (NULL = absent). */
static const gm_onnx_info *infer(tnode *t, size_t n_out, size_t n_in, ...)
{
    const gm_onnx_info *in[8];
    va_list ap;
    va_start(ap, n_in);
    for (size_t i = 0; i < n_in; i++) in[i] = va_arg(ap, const gm_onnx_info *);
    va_end(ap);
    gm_onnx_infer(&t->n, in, n_in, out_, n_out);
    return out_;
}

static void expect(const gm_onnx_info *o, gm_dtype dt, int32_t rank, ...)
{
    if (o->rank != rank) print_message("rank %d, expected %d\n", o->rank, rank);
    assert_int_equal(o->dtype, dt);
    assert_int_equal(o->rank, rank);
    va_list ap;
    va_start(ap, rank);
    for (int32_t i = 0; i < rank; i++) {
        int e = va_arg(ap, int);
        if (o->dims[i] != e) print_message("dim %d: %lld, expected %d\n", i, (long long)o->dims[i], e);
        assert_int_equal(o->dims[i], e);
    }
    va_end(ap);
}

static void expect_values(const gm_onnx_info *o, int32_t n, ...)
{
    assert_int_equal(o->vkind, GM_ONNX_VAL_INT);
    assert_int_equal(o->nval, n);
    va_list ap;
    va_start(ap, n);
    for (int32_t i = 0; i < n; i++) assert_true(o->ival[i] == va_arg(ap, int64_t));
    va_end(ap);
}

#define F GM_DT_FLOAT
#define I64 GM_DT_INT64

static void test_infer_broadcast(void **state)
{
    (void)state;
    tnode t;
    tn_init(&t, "Add");
    gm_onnx_info a = T(F, 3, 8, 1, 5), b = T(F, 2, 4, 1), c = T(F, 0), u = T(F, 2, -1, 5);
    expect(infer(&t, 1, 2, &a, &b), F, 3, 8, 4, 5);
    expect(infer(&t, 1, 2, &c, &b), F, 2, 4, 1);
    expect(infer(&t, 1, 2, &a, &u), F, 3, 8, -1, 5); /* 1 vs unknown: unknown */
    gm_onnx_info p = T(F, 2, 3, 4), q = T(F, 2, -1, 4);
    expect(infer(&t, 1, 2, &p, &q), F, 2, 3, 4); /* unknown vs 3: 3 (or the model is wrong) */
    tn_init(&t, "Equal");
    expect(infer(&t, 1, 2, &p, &q), GM_DT_BOOL, 2, 3, 4);
    tn_init(&t, "Where");
    gm_onnx_info cond = T(GM_DT_BOOL, 1, 4), y = T(GM_DT_INT32, 2, 3, 1);
    expect(infer(&t, 1, 3, &cond, &y, &y), GM_DT_INT32, 2, 3, 4);
    gm_onnx_info r = T(F, -1);
    tn_init(&t, "Mul");
    expect(infer(&t, 1, 2, &p, &r), F, -1);
    tn_init(&t, "Cast");
    tn_int(&t, "to", 7);
    expect(infer(&t, 1, 1, &p), I64, 2, 3, 4);
    tn_init(&t, "Dropout");
    const gm_onnx_info *o = infer(&t, 2, 1, &p);
    expect(&o[0], F, 2, 3, 4);
    expect(&o[1], GM_DT_BOOL, 2, 3, 4);
    /* Values: shape arithmetic. */
    gm_onnx_info s = V(3, INT64_C(2), INT64_C(6), INT64_C(4)), two = V(1, INT64_C(2));
    tn_init(&t, "Div");
    expect_values(infer(&t, 1, 2, &s, &two), 3, INT64_C(1), INT64_C(3), INT64_C(2));
    tn_init(&t, "Mul");
    expect_values(infer(&t, 1, 2, &s, &two), 3, INT64_C(4), INT64_C(12), INT64_C(8));
}

static void test_infer_conv_pool(void **state)
{
    (void)state;
    tnode t;
    gm_onnx_info x = T(F, 4, 1, 3, 224, 224), w = T(F, 4, 64, 3, 7, 7);
    tn_init(&t, "Conv");
    tn_ints(&t, "strides", 2, INT64_C(2), INT64_C(2));
    tn_ints(&t, "pads", 4, INT64_C(3), INT64_C(3), INT64_C(3), INT64_C(3));
    expect(infer(&t, 1, 2, &x, &w), F, 4, 1, 64, 112, 112);
    /* Dilation 2, asymmetric pads, kernel from the attribute. */
    tn_init(&t, "Conv");
    tn_ints(&t, "dilations", 2, INT64_C(2), INT64_C(2));
    tn_ints(&t, "pads", 4, INT64_C(0), INT64_C(1), INT64_C(2), INT64_C(3));
    tn_ints(&t, "kernel_shape", 2, INT64_C(3), INT64_C(3));
    gm_onnx_info x2 = T(F, 4, 2, 8, 10, 10), w2 = T(F, 4, 16, 4, 3, 3);
    expect(infer(&t, 1, 2, &x2, &w2), F, 4, 2, 16, 8, 10); /* (10+2-5)/1+1, (10+4-5)+1 */
    tn_init(&t, "Conv");
    tn_str(&t, "auto_pad", "SAME_UPPER");
    tn_ints(&t, "strides", 2, INT64_C(2), INT64_C(3));
    expect(infer(&t, 1, 2, &x2, &w2), F, 4, 2, 16, 5, 4);
    tn_init(&t, "Conv");
    tn_str(&t, "auto_pad", "VALID");
    expect(infer(&t, 1, 2, &x2, &w2), F, 4, 2, 16, 8, 8);
    gm_onnx_info xu = T(F, 4, -1, 8, -1, 10);
    tn_init(&t, "Conv");
    expect(infer(&t, 1, 2, &xu, &w2), F, 4, -1, 16, -1, 8);
    /* 1-D conv with groups. */
    gm_onnx_info x1 = T(F, 3, 1, 8, 100), w1 = T(F, 3, 8, 1, 5);
    tn_init(&t, "Conv");
    tn_int(&t, "group", 8);
    tn_ints(&t, "strides", 1, INT64_C(4));
    expect(infer(&t, 1, 2, &x1, &w1), F, 3, 1, 8, 24);
    /* ConvTranspose: stride 2 doubles, output_padding adds. */
    tn_init(&t, "ConvTranspose");
    tn_ints(&t, "strides", 2, INT64_C(2), INT64_C(2));
    tn_ints(&t, "pads", 4, INT64_C(1), INT64_C(1), INT64_C(1), INT64_C(1));
    tn_ints(&t, "output_padding", 2, INT64_C(1), INT64_C(1));
    gm_onnx_info xt = T(F, 4, 1, 16, 7, 7), wt = T(F, 4, 16, 4, 3, 3);
    tn_int(&t, "group", 2);
    expect(infer(&t, 1, 2, &xt, &wt), F, 4, 1, 8, 14, 14);
    /* Pools: ceil_mode, Indices, global. */
    gm_onnx_info xp = T(F, 4, 1, 64, 112, 112);
    tn_init(&t, "MaxPool");
    tn_ints(&t, "kernel_shape", 2, INT64_C(3), INT64_C(3));
    tn_ints(&t, "strides", 2, INT64_C(2), INT64_C(2));
    tn_ints(&t, "pads", 4, INT64_C(1), INT64_C(1), INT64_C(1), INT64_C(1));
    const gm_onnx_info *o = infer(&t, 2, 1, &xp);
    expect(&o[0], F, 4, 1, 64, 56, 56);
    expect(&o[1], I64, 4, 1, 64, 56, 56);
    gm_onnx_info xc = T(F, 4, 1, 1, 6, 6);
    tn_init(&t, "AveragePool");
    tn_ints(&t, "kernel_shape", 2, INT64_C(3), INT64_C(3));
    tn_ints(&t, "strides", 2, INT64_C(2), INT64_C(2));
    expect(infer(&t, 1, 1, &xc), F, 4, 1, 1, 2, 2);
    tn_int(&t, "ceil_mode", 1);
    expect(infer(&t, 1, 1, &xc), F, 4, 1, 1, 3, 3);
    tn_init(&t, "GlobalAveragePool");
    expect(infer(&t, 1, 1, &xp), F, 4, 1, 64, 1, 1);
}

static void test_infer_matmul_gemm(void **state)
{
    (void)state;
    tnode t;
    tn_init(&t, "MatMul");
    gm_onnx_info a = T(F, 4, 2, 1, 5, 3), b = T(F, 3, 7, 3, 4);
    expect(infer(&t, 1, 2, &a, &b), F, 4, 2, 7, 5, 4);
    gm_onnx_info v = T(F, 1, 3), m = T(F, 2, 3, 6);
    expect(infer(&t, 1, 2, &v, &m), F, 1, 6);
    gm_onnx_info m2 = T(F, 3, 9, 5, 3);
    expect(infer(&t, 1, 2, &m2, &v), F, 2, 9, 5);
    expect(infer(&t, 1, 2, &v, &v), F, 0);
    gm_onnx_info au = T(F, 3, -1, 128, 512), w = T(F, 2, 512, 2048);
    expect(infer(&t, 1, 2, &au, &w), F, 3, -1, 128, 2048);
    tn_init(&t, "Gemm");
    tn_int(&t, "transB", 1);
    gm_onnx_info x = T(F, 2, 4, 512), wb = T(F, 2, 1000, 512);
    expect(infer(&t, 1, 2, &x, &wb), F, 2, 4, 1000);
    tn_init(&t, "Gemm");
    tn_int(&t, "transA", 1);
    gm_onnx_info xa = T(F, 2, 512, 4), wa = T(F, 2, 512, 10);
    expect(infer(&t, 1, 2, &xa, &wa), F, 2, 4, 10);
}

static void test_infer_reshape_family(void **state)
{
    (void)state;
    tnode t;
    gm_onnx_info x = T(F, 3, 2, 3, 4);
    tn_init(&t, "Reshape");
    gm_onnx_info s1 = V(2, INT64_C(0), INT64_C(-1));
    expect(infer(&t, 1, 2, &x, &s1), F, 2, 2, 12);
    gm_onnx_info s2 = V(3, INT64_C(-1), INT64_C(2), INT64_C(2));
    expect(infer(&t, 1, 2, &x, &s2), F, 3, 6, 2, 2);
    tn_int(&t, "allowzero", 1);
    gm_onnx_info s3 = V(2, INT64_C(0), INT64_C(5));
    expect(infer(&t, 1, 2, &x, &s3), F, 2, 0, 5);
    tn_init(&t, "Reshape");
    gm_onnx_info unknown_target = T(I64, 1, 4);
    expect(infer(&t, 1, 2, &x, &unknown_target), F, 4, -1, -1, -1, -1);
    gm_onnx_info xu = T(F, 3, -1, 3, 4);
    expect(infer(&t, 1, 2, &xu, &s1), F, 2, -1, -1);
    gm_onnx_info s4 = V(2, INT64_C(-1), INT64_C(12));
    expect(infer(&t, 1, 2, &xu, &s4), F, 2, -1, 12);

    tn_init(&t, "Flatten");
    expect(infer(&t, 1, 1, &x), F, 2, 2, 12);
    tn_int(&t, "axis", 0);
    expect(infer(&t, 1, 1, &x), F, 2, 1, 24);

    gm_onnx_info y = T(F, 4, 1, 3, 1, 5);
    tn_init(&t, "Squeeze");
    expect(infer(&t, 1, 1, &y), F, 2, 3, 5);
    tn_ints(&t, "axes", 1, INT64_C(-2));
    expect(infer(&t, 1, 1, &y), F, 3, 1, 3, 5);
    tn_init(&t, "Squeeze");
    gm_onnx_info ax = V(1, INT64_C(0));
    expect(infer(&t, 1, 2, &y, &ax), F, 3, 3, 1, 5);
    gm_onnx_info yu = T(F, 2, -1, 3);
    expect(infer(&t, 1, 1, &yu), F, -1); /* which dims are 1 is unknown */

    tn_init(&t, "Unsqueeze");
    gm_onnx_info ax2 = V(2, INT64_C(0), INT64_C(-1));
    expect(infer(&t, 1, 2, &x, &ax2), F, 5, 1, 2, 3, 4, 1);
    tn_init(&t, "Unsqueeze");
    tn_ints(&t, "axes", 1, INT64_C(1));
    expect(infer(&t, 1, 1, &x), F, 4, 2, 1, 3, 4);

    tn_init(&t, "Transpose");
    tn_ints(&t, "perm", 3, INT64_C(1), INT64_C(0), INT64_C(2));
    expect(infer(&t, 1, 1, &x), F, 3, 3, 2, 4);
    tn_init(&t, "Transpose");
    expect(infer(&t, 1, 1, &x), F, 3, 4, 3, 2);
}

static void test_infer_cut_and_join(void **state)
{
    (void)state;
    tnode t;
    gm_onnx_info x = T(F, 3, 2, 10, 4);
    tn_init(&t, "Concat");
    tn_int(&t, "axis", 1);
    gm_onnx_info y = T(F, 3, 2, 5, 4), u = T(F, 3, 2, -1, 4);
    expect(infer(&t, 1, 2, &x, &y), F, 3, 2, 15, 4);
    expect(infer(&t, 1, 3, &x, &y, &u), F, 3, 2, -1, 4);
    tn_init(&t, "Concat");
    gm_onnx_info v1 = V(1, INT64_C(-1)), v2 = V(2, INT64_C(8), INT64_C(64));
    const gm_onnx_info *o = infer(&t, 1, 2, &v1, &v2);
    expect(o, I64, 1, 3);
    expect_values(o, 3, INT64_C(-1), INT64_C(8), INT64_C(64));

    tn_init(&t, "Split");
    tn_int(&t, "axis", 1);
    tn_ints(&t, "split", 2, INT64_C(3), INT64_C(7));
    o = infer(&t, 2, 1, &x);
    expect(&o[0], F, 3, 2, 3, 4);
    expect(&o[1], F, 3, 2, 7, 4);
    tn_init(&t, "Split");
    tn_int(&t, "axis", 1);
    gm_onnx_info sizes = V(3, INT64_C(2), INT64_C(2), INT64_C(6));
    o = infer(&t, 3, 2, &x, &sizes);
    expect(&o[2], F, 3, 2, 6, 4);
    tn_init(&t, "Split");
    tn_int(&t, "axis", -1);
    o = infer(&t, 2, 1, &x);
    expect(&o[0], F, 3, 2, 10, 2);
    expect(&o[1], F, 3, 2, 10, 2);

    /* Slice: known bounds (negative, clamped, stepped), unknown bounds. */
    tn_init(&t, "Slice");
    gm_onnx_info st = V(2, INT64_C(1), INT64_C(-3)), en = V(2, (int64_t)INT64_MAX, INT64_C(-1)),
                 axes = V(2, INT64_C(1), INT64_C(2)), steps = V(2, INT64_C(3), INT64_C(1));
    expect(infer(&t, 1, 5, &x, &st, &en, &axes, &steps), F, 3, 2, 3, 2);
    gm_onnx_info rs = V(1, INT64_C(-1)), re = V(1, (int64_t)(INT64_MIN + 1)), ra = V(1, INT64_C(1)), rstep = V(1, INT64_C(-2));
    expect(infer(&t, 1, 5, &x, &rs, &re, &ra, &rstep), F, 3, 2, 5, 4);
    gm_onnx_info unknown_end = T(I64, 1, 1);
    expect(infer(&t, 1, 4, &x, &rs, &unknown_end, &ra), F, 3, 2, -1, 4);
    expect(infer(&t, 1, 3, &x, &rs, &unknown_end), F, 3, -1, -1, -1);

    /* Gather: axis, scalar and 2-D indices, values. */
    tn_init(&t, "Gather");
    tn_int(&t, "axis", 1);
    gm_onnx_info scalar = T(I64, 0), idx2 = T(I64, 2, 5, 6);
    expect(infer(&t, 1, 2, &x, &scalar), F, 2, 2, 4);
    expect(infer(&t, 1, 2, &x, &idx2), F, 4, 2, 5, 6, 4);
    tn_init(&t, "Gather");
    gm_onnx_info shape = V(3, INT64_C(7), INT64_C(8), INT64_C(9)), pick = V(2, INT64_C(-1), INT64_C(0));
    o = infer(&t, 1, 2, &shape, &pick);
    expect_values(o, 2, INT64_C(9), INT64_C(7));

    /* Reductions: keepdims, axes attribute or input, all axes, noop. */
    tn_init(&t, "ReduceMean");
    tn_ints(&t, "axes", 1, INT64_C(-1));
    expect(infer(&t, 1, 1, &x), F, 3, 2, 10, 1);
    tn_int(&t, "keepdims", 0);
    expect(infer(&t, 1, 1, &x), F, 2, 2, 10);
    tn_init(&t, "ReduceSum");
    tn_int(&t, "keepdims", 0);
    gm_onnx_info rax = V(2, INT64_C(0), INT64_C(2));
    expect(infer(&t, 1, 2, &x, &rax), F, 1, 10);
    expect(infer(&t, 1, 1, &x), F, 0);
    tn_init(&t, "ReduceSum");
    gm_onnx_info unknown_axes = T(I64, 1, 1);
    expect(infer(&t, 1, 2, &x, &unknown_axes), F, 3, -1, -1, -1);
    tn_init(&t, "ReduceMax");
    tn_int(&t, "noop_with_empty_axes", 1);
    expect(infer(&t, 1, 1, &x), F, 3, 2, 10, 4);
    tn_init(&t, "ArgMax");
    tn_int(&t, "axis", 1);
    tn_int(&t, "keepdims", 0);
    expect(infer(&t, 1, 1, &x), I64, 2, 2, 4);
    tn_init(&t, "TopK");
    gm_onnx_info k = V(1, INT64_C(3));
    o = infer(&t, 2, 2, &x, &k);
    expect(&o[0], F, 3, 2, 10, 3);
    expect(&o[1], I64, 3, 2, 10, 3);
}

/* Shape -> Gather -> Unsqueeze -> Concat -> Reshape, the exporters' way of computing targets,
 * including a symbolic dim that stays unknown while the others propagate. */
static void test_infer_shape_values(void **state)
{
    (void)state;
    tnode t;
    gm_onnx_info x = T(F, 3, -1, 128, 512);
    tn_init(&t, "Shape");
    gm_onnx_info shp = *infer(&t, 1, 1, &x);
    expect(&shp, I64, 1, 3);
    assert_int_equal(shp.vkind, GM_ONNX_VAL_INT);
    assert_true(shp.ival[0] == GM_ONNX_UNKNOWN_VALUE && shp.ival[1] == 128);
    tn_init(&t, "Gather");
    gm_onnx_info one = T(I64, 0);
    one.vkind = GM_ONNX_VAL_INT;
    one.nval = 1;
    one.ival[0] = 1;
    gm_onnx_info d1 = *infer(&t, 1, 2, &shp, &one);
    expect(&d1, I64, 0);
    expect_values(&d1, 1, INT64_C(128));
    tn_init(&t, "Unsqueeze");
    gm_onnx_info ax = V(1, INT64_C(0));
    gm_onnx_info u = *infer(&t, 1, 2, &d1, &ax);
    expect(&u, I64, 1, 1);
    tn_init(&t, "Concat");
    gm_onnx_info minus1 = V(1, INT64_C(-1)), heads = V(2, INT64_C(8), INT64_C(64));
    gm_onnx_info target = *infer(&t, 1, 3, &minus1, &u, &heads);
    expect_values(&target, 4, INT64_C(-1), INT64_C(128), INT64_C(8), INT64_C(64));
    tn_init(&t, "Reshape");
    gm_onnx_info y = T(F, 3, 2, 128, 512);
    expect(infer(&t, 1, 2, &y, &target), F, 4, 2, 128, 8, 64);
    expect(infer(&t, 1, 2, &x, &target), F, 4, -1, 128, 8, 64);
    /* The unknown element itself: a dim -1, never "infer this one". */
    tn_init(&t, "Reshape");
    expect(infer(&t, 1, 2, &y, &shp), F, 3, -1, 128, 512);
    /* Size, ConstantOfShape, Expand, Range from values. */
    tn_init(&t, "Size");
    expect_values(infer(&t, 1, 1, &y), 1, INT64_C(2 * 128 * 512));
    tn_init(&t, "ConstantOfShape");
    gm_onnx_info s = V(2, INT64_C(4), INT64_C(128));
    expect(infer(&t, 1, 1, &s), F, 2, 4, 128);
    tn_init(&t, "Expand");
    gm_onnx_info small = T(F, 2, 1, 128), es = V(3, INT64_C(3), INT64_C(1), INT64_C(1));
    expect(infer(&t, 1, 2, &small, &es), F, 3, 3, 1, 128);
    tn_init(&t, "Range");
    gm_onnx_info a = V(1, INT64_C(0)), b = V(1, INT64_C(10)), c = V(1, INT64_C(3));
    a.rank = b.rank = c.rank = 0;
    expect(infer(&t, 1, 3, &a, &b, &c), I64, 1, 4);
    tn_init(&t, "LayerNormalization");
    tn_int(&t, "axis", -1);
    const gm_onnx_info *o = infer(&t, 3, 1, &y);
    expect(&o[0], F, 3, 2, 128, 512);
    expect(&o[1], F, 3, 2, 128, 1);
    tn_init(&t, "Pad");
    gm_onnx_info pads = V(6, INT64_C(0), INT64_C(1), INT64_C(2), INT64_C(0), INT64_C(1), INT64_C(2));
    expect(infer(&t, 1, 2, &y, &pads), F, 3, 2, 130, 516);
    tn_init(&t, "Tile");
    gm_onnx_info reps = V(3, INT64_C(2), INT64_C(1), INT64_C(2));
    expect(infer(&t, 1, 2, &y, &reps), F, 3, 4, 128, 1024);
    tn_init(&t, "NonZero");
    expect(infer(&t, 1, 1, &y), I64, 2, 3, -1);
    tn_init(&t, "SomeCustomOp");
    expect(infer(&t, 1, 1, &y), GM_DT_UNDEFINED, -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resnet18),
        cmocka_unit_test(test_resnet50_and_train),
        cmocka_unit_test(test_transformer),
        cmocka_unit_test(test_control_flow),
        cmocka_unit_test(test_inference_matches_exporter),
        cmocka_unit_test(test_json_round_trip_shared),
        cmocka_unit_test(test_json_round_trip_every_field),
        cmocka_unit_test(test_round_trip_edge_values),
        cmocka_unit_test(test_inserted_node_visible),
        cmocka_unit_test(test_written_file_is_onnx),
        cmocka_unit_test(test_undeclared_sequence),
        cmocka_unit_test(test_scan),
        cmocka_unit_test(test_scan_opset8),
        cmocka_unit_test(test_flow_inference),
        cmocka_unit_test(test_captures),
        cmocka_unit_test(test_names_and_kept_attrs),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_bad_inputs),
        cmocka_unit_test(test_bad_dims),
        cmocka_unit_test(test_deep_nesting),
        cmocka_unit_test(test_garbage),
        cmocka_unit_test(test_alloc_failures),
        cmocka_unit_test(test_infer_broadcast),
        cmocka_unit_test(test_infer_conv_pool),
        cmocka_unit_test(test_infer_matmul_gemm),
        cmocka_unit_test(test_infer_reshape_family),
        cmocka_unit_test(test_infer_cut_and_join),
        cmocka_unit_test(test_infer_shape_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
