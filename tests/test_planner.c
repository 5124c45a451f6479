/*
 * test_planner.c — planner v0 (src/plan/planner.c): every plan it makes passes the independent
 * verifier, its feature map is between the lower bound and no reuse, and symbols on streams
 * nothing orders never share memory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graphmem/io.h"
#include "graphmem/passes.h"
#include "graphmem/plan.h"
#include "random_graph.h"
#include "analysis/happens_before.h"
#include "ops/op_table.h"

/* Every field of every symbol in the plan's text is the plan's own (the writer's fast path
 * and its escaping path both). */
static void check_text_fields(const gm_plan *p, const char *text, const char *what)
{
    cJSON *root = cJSON_Parse(text);
    if (!root) fail_msg("%s: the plan text does not parse", what);
    const cJSON *syms = cJSON_GetObjectItemCaseSensitive(root, "symbols");
    assert_int_equal(cJSON_GetArraySize(syms), p->n_symbols);
    size_t i = 0;
    for (const cJSON *e = syms->child; e; e = e->next, i++) {
        const gm_plan_symbol *y = &p->symbols[i];
        assert_string_equal(cJSON_GetObjectItemCaseSensitive(e, "id")->valuestring, y->id);
        const cJSON *anchors = cJSON_GetObjectItemCaseSensitive(e, "anchors");
        assert_int_equal(cJSON_GetArraySize(anchors), y->n_anchors);
        size_t k = 0;
        for (const cJSON *a = anchors->child; a; a = a->next, k++) {
            const gm_plan_anchor *x = &y->anchors[k];
            assert_string_equal(cJSON_GetObjectItemCaseSensitive(a, "node")->valuestring, gm_node_name(x->node));
            const cJSON *idx = cJSON_GetObjectItemCaseSensitive(a, x->out ? "out" : "in");
            assert_non_null(idx);
            assert_int_equal(idx->valueint, x->index);
            const cJSON *off = cJSON_GetObjectItemCaseSensitive(a, "offset");
            if (x->offset >= 0 && y->region != GM_PLAN_R_DYNAMIC) assert_true(off && off->valuedouble == (double)(y->offset + x->offset));
            else assert_null(off);
        }
        assert_string_equal(cJSON_GetObjectItemCaseSensitive(e, "region")->valuestring, gm_plan_region_name(y->region));
        assert_string_equal(cJSON_GetObjectItemCaseSensitive(e, "memory_type")->valuestring, gm_mem_type_name(y->mem_type));
        const cJSON *off = cJSON_GetObjectItemCaseSensitive(e, "offset"), *size = cJSON_GetObjectItemCaseSensitive(e, "size");
        if (y->region == GM_PLAN_R_DYNAMIC) {
            assert_true(cJSON_IsNull(off));
            assert_true(size->valuedouble == 0);
        } else {
            assert_true(off->valuedouble == (double)y->offset);
            assert_true(size->valuedouble == (double)y->size);
        }
        const cJSON *life = cJSON_GetObjectItemCaseSensitive(e, "lifetime");
        assert_true(cJSON_GetArrayItem(life, 0)->valuedouble == (double)y->first);
        assert_true(cJSON_GetArrayItem(life, 1)->valuedouble == (double)y->last);
        const cJSON *streams = cJSON_GetObjectItemCaseSensitive(e, "streams");
        assert_int_equal(cJSON_GetArraySize(streams), y->n_streams);
        for (size_t t = 0; t < y->n_streams; t++)
            assert_true(cJSON_GetArrayItem(streams, (int)t)->valuedouble == (double)y->streams[t]);
        assert_string_equal(cJSON_GetObjectItemCaseSensitive(e, "batch_label")->valuestring,
                            y->batch_label ? y->batch_label : "");
    }
    cJSON_Delete(root);
}

/* Plans m, writes and verifies the plan, checks the bounds; returns the plan. */
static gm_plan *plan_and_check(gm_model *m, const char *what)
{
    gm_error err;
    gm_plan *p = NULL;
    if (gm_plan_build(m, NULL, &p, &err) != GM_OK) fail_msg("%s: plan: %s", what, err.message);
    char *text = NULL;
    size_t len = 0;
    if (gm_plan_write_json(m, p, &text, &len, &err) != GM_OK) fail_msg("%s: write: %s", what, err.message);
    assert_int_equal(strlen(text), len);
    check_text_fields(p, text, what);
    gm_plan_verdict v;
    if (gm_plan_verify_json(m, text, len, what, &v, &err) != GM_OK) fail_msg("%s: verify: %s", what, err.message);
    if (!gm_plan_verdict_ok(&v)) {
        for (size_t i = 0; i < v.n_problems && i < 20; i++)
            print_message("  %s: %s\n", gm_plan_problem_kind_name(v.problems[i].kind), v.problems[i].message);
        fail_msg("%s: the plan was rejected (%zu problems)", what, v.n_problems + v.dropped);
    }
    assert_int_equal(p->unresolved, 0);
    /* the verifier measures the same extents the plan reports */
    int64_t total = p->feature_map_bytes + p->zero_copy_bytes + p->fixed_bytes;
    assert_int_equal(v.extent_bytes, total);
    gm_plan_verdict_free(&v);
    free(text);
    assert_true(p->feature_map_bytes >= p->lower_bound_bytes);
    assert_true(p->feature_map_bytes <= p->no_reuse_bytes);
    print_message("  %-36s symbols %6zu  feature map %12lld  lower bound %12lld  ratio %.4f  no reuse %12lld  "
                  "dynamic %zu  repairs %zu\n",
                  what, p->n_symbols, (long long)p->feature_map_bytes, (long long)p->lower_bound_bytes,
                  p->lower_bound_bytes ? (double)p->feature_map_bytes / (double)p->lower_bound_bytes : 1.0,
                  (long long)p->no_reuse_bytes, p->dynamic_symbols, p->repaired_pairs);
    return p;
}

static void run_passes(gm_model *m, const char *what)
{
    gm_error err;
    gm_pass_report rep = {0};
    gm_pass_set avail = 0;
    if (gm_passes_run(m, GM_PASS_SET_ALL, &rep, &avail, &err) != GM_OK) fail_msg("%s: passes: %s", what, err.message);
    gm_pass_report_free(&rep);
}

static void test_embedded_example(void **state)
{
    (void)state;
    gm_model *m = NULL;
    gm_error err;
    assert_int_equal(gm_model_read_embedded_example(&m, &err), GM_OK);
    run_passes(m, "embedded example");
    gm_plan *p = plan_and_check(m, "embedded example");
    assert_true(p->n_symbols > 0);
    assert_true(p->feature_map_bytes > 0);
    gm_plan_free(p);
    gm_model_free(m);
}

static void check_model_file(const char *file, bool passes)
{
    char path[1024], what[256];
    snprintf(path, sizeof path, "%s/models/%s", GM_TEST_DATA_DIR, file);
    snprintf(what, sizeof what, "%s%s", file, passes ? " +passes" : "");
    gm_model *m = NULL;
    gm_error err;
    if (gm_model_read_file(path, &m, &err) != GM_OK) fail_msg("%s", err.message);
    if (passes) run_passes(m, what);
    gm_plan_free(plan_and_check(m, what));
    gm_model_free(m);
}

static const char *const k_models[] = {
    "control_flow.onnx",        "mlp_train_step.graphmem.json", "resnet18.onnx",
    "resnet18_train.onnx",      "resnet50.onnx",                "transformer_encoder.folded.onnx",
    "transformer_encoder.onnx", "transformer_lm_train_step.graphmem.json",
};

static void test_models_raw(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof k_models / sizeof *k_models; i++) check_model_file(k_models[i], false);
}

static void test_models_after_passes(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof k_models / sizeof *k_models; i++) check_model_file(k_models[i], true);
}

/* Two chains on two streams that share only their input: the model order runs one chain, then
 * the other, so their temporaries have disjoint accesses on it — yet nothing orders the
 * streams, so sharing would be a race. The lifetimes the planner packs end at the release
 * (happens_before.h), so no repair should be needed. */
#define F256 "\"outputs\":[{\"dtype\":\"float32\",\"shape\":[256]}]"
static const char k_two_streams[] =
    "{\"graphmem\":1,\"name\":\"two\",\"graphs\":[{\"name\":\"root\",\"nodes\":["
    "{\"name\":\"x\",\"type\":\"Data\",\"attrs\":{\"index\":0}," F256 "},"
    "{\"name\":\"a\",\"type\":\"Relu\",\"inputs\":[\"x:0\"]," F256 "},"
    "{\"name\":\"a2\",\"type\":\"Relu\",\"inputs\":[\"a:0\"]," F256 "},"
    "{\"name\":\"a3\",\"type\":\"Relu\",\"inputs\":[\"a2:0\"]," F256 "},"
    "{\"name\":\"a4\",\"type\":\"Relu\",\"inputs\":[\"a3:0\"]," F256 "},"
    "{\"name\":\"b\",\"type\":\"Relu\",\"inputs\":[\"x:0\"],\"stream\":1," F256 "},"
    "{\"name\":\"b2\",\"type\":\"Relu\",\"inputs\":[\"b:0\"],\"stream\":1," F256 "},"
    "{\"name\":\"b3\",\"type\":\"Relu\",\"inputs\":[\"b2:0\"],\"stream\":1," F256 "},"
    "{\"name\":\"b4\",\"type\":\"Relu\",\"inputs\":[\"b3:0\"],\"stream\":1," F256 "},"
    "{\"name\":\"out\",\"type\":\"NetOutput\",\"inputs\":[\"a4:0\",\"b4:0\"]}]}]}";

static bool only_stream(const gm_plan_symbol *y, int64_t s) { return y->n_streams == 1 && y->streams[0] == s; }

static void test_two_streams(void **state)
{
    (void)state;
    gm_model *m = NULL;
    gm_error err;
    if (gm_model_read_json(k_two_streams, strlen(k_two_streams), "two.json", &m, &err) != GM_OK)
        fail_msg("%s", err.message);
    gm_plan *p = plan_and_check(m, "two streams");
    /* the released lifetimes already keep the chains apart: nothing to repair */
    assert_int_equal(p->repaired_pairs, 0);
    assert_false(p->fallback[GM_MEM_HBM][GM_PLAN_R_FEATURE_MAP]);
    for (size_t i = 0; i < p->n_symbols; i++) {
        const gm_plan_symbol *y = &p->symbols[i];
        assert_true(y->first <= y->last_use && y->last_use <= y->last);
        /* stream 0 runs first on the model order; stream 1 never waits for it, so stream 0's
         * temporaries are released only at stream 1's last node */
        if (y->region == GM_PLAN_R_FEATURE_MAP && only_stream(y, 0)) assert_true(y->last > y->last_use);
    }
    size_t pairs = 0;
    for (size_t i = 0; i < p->n_symbols; i++)
        for (size_t j = 0; j < p->n_symbols; j++) {
            const gm_plan_symbol *a = &p->symbols[i], *b = &p->symbols[j];
            if (a->region != GM_PLAN_R_FEATURE_MAP || b->region != GM_PLAN_R_FEATURE_MAP) continue;
            if (!only_stream(a, 0) || !only_stream(b, 1)) continue;
            pairs++;
            bool overlap = a->offset < b->offset + b->size && b->offset < a->offset + a->size;
            if (overlap) fail_msg("%s and %s share memory across unordered streams", a->id, b->id);
        }
    assert_true(pairs > 0);
    /* within one stream the chain still reuses: a's output is dead once a2 has run */
    assert_true(p->feature_map_bytes < p->no_reuse_bytes);
    gm_plan_free(p);
    gm_model_free(m);
}

/* A Const that the order puts on stream 1 after a reader r there: the executors write Consts at
 * the start, so its edge to w on stream 0 orders nothing, and r's input a must not share memory
 * with w's output. The planner and the verifier once both took the edge as an event after r, and
 * `graphmem run --plan --streams 4` on transformer_encoder found w's write in a's bytes. */
static const char k_const_edge[] =
    "{\"graphmem\":1,\"name\":\"const_edge\",\"graphs\":[{\"name\":\"root\",\"nodes\":["
    "{\"name\":\"x\",\"type\":\"Data\",\"attrs\":{\"index\":0}," F256 "},"
    "{\"name\":\"a\",\"type\":\"Relu\",\"inputs\":[\"x:0\"]," F256 "},"
    "{\"name\":\"r\",\"type\":\"Relu\",\"inputs\":[\"a:0\"],\"stream\":1," F256 "},"
    "{\"name\":\"c\",\"type\":\"Const\",\"stream\":1," F256 "},"
    "{\"name\":\"w\",\"type\":\"Add\",\"inputs\":[\"c:0\",\"x:0\"]," F256 "},"
    "{\"name\":\"w2\",\"type\":\"Relu\",\"inputs\":[\"w:0\"]," F256 "},"
    "{\"name\":\"out\",\"type\":\"NetOutput\",\"inputs\":[\"r:0\",\"w2:0\"]}]}]}";

static const gm_plan_symbol *symbol_named(const gm_plan *p, const char *id)
{
    for (size_t i = 0; i < p->n_symbols; i++)
        if (!strcmp(p->symbols[i].id, id)) return &p->symbols[i];
    fail_msg("no symbol %s", id);
    return NULL;
}

static void test_const_edge_orders_nothing(void **state)
{
    (void)state;
    gm_model *m = NULL;
    gm_error err;
    if (gm_model_read_json(k_const_edge, strlen(k_const_edge), "const_edge.json", &m, &err) != GM_OK)
        fail_msg("%s", err.message);
    gm_plan *p = plan_and_check(m, "const edge");
    const gm_plan_symbol *a = symbol_named(p, "a_out_0"), *w = symbol_named(p, "w_out_0");
    if (a->offset < w->offset + w->size && w->offset < a->offset + a->size)
        fail_msg("a [%lld, +%lld) and w [%lld, +%lld) share memory, yet r may still read a while w writes",
                 (long long)a->offset, (long long)a->size, (long long)w->offset, (long long)w->size);
    /* and the verifier rejects the plan that shares them */
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(gm_plan_write_json(m, p, &text, &len, &err), GM_OK);
    char at[64], shared[64];
    snprintf(at, sizeof at, "\"offset\":%lld", (long long)w->offset);
    snprintf(shared, sizeof shared, "\"offset\":%lld", (long long)a->offset);
    char *sym = strstr(text, "\"id\":\"w_out_0\"");
    assert_non_null(sym);
    char *off = strstr(sym, at);
    assert_non_null(off);
    size_t n = strlen(at), k = strlen(shared);
    char *edited = malloc(len + k + 1);
    assert_non_null(edited);
    memcpy(edited, text, (size_t)(off - text));
    memcpy(edited + (off - text), shared, k);
    strcpy(edited + (off - text) + k, off + n);
    gm_plan_verdict v;
    assert_int_equal(gm_plan_verify_json(m, edited, strlen(edited), "edited", &v, &err), GM_OK);
    assert_false(gm_plan_verdict_ok(&v));
    assert_true(v.by_kind[GM_PLAN_P_OVERLAP] > 0);
    gm_plan_verdict_free(&v);
    free(edited);
    free(text);
    gm_plan_free(p);
    gm_model_free(m);
}

/* A partitioned graph's PlaceHolder standing for a weight (attr parentOpType Const or Variable)
 * is that weight: fixed memory for the whole run, not a short-lived feature-map tensor (GE's
 * dumps hold ~100 MB of them). One standing for a Data is an ordinary input of the partition. */
static const char k_placeholders[] =
    "{\"graphmem\":1,\"name\":\"partition\",\"graphs\":[{\"name\":\"root\",\"nodes\":["
    "{\"name\":\"w\",\"type\":\"PlaceHolder\",\"attrs\":{\"parentOpType\":\"Const\"}," F256 "},"
    "{\"name\":\"v\",\"type\":\"PlaceHolder\",\"attrs\":{\"parentOpType\":\"Variable\"}," F256 "},"
    "{\"name\":\"d\",\"type\":\"PlaceHolder\",\"attrs\":{\"parentOpType\":\"Data\"}," F256 "},"
    "{\"name\":\"a\",\"type\":\"Add\",\"inputs\":[\"w:0\",\"d:0\"]," F256 "},"
    "{\"name\":\"b\",\"type\":\"Mul\",\"inputs\":[\"a:0\",\"v:0\"]," F256 "},"
    "{\"name\":\"out\",\"type\":\"NetOutput\",\"inputs\":[\"b:0\"]}]}]}";

static void test_weight_placeholders_fixed(void **state)
{
    (void)state;
    gm_model *m = NULL;
    gm_error err;
    if (gm_model_read_json(k_placeholders, strlen(k_placeholders), "partition.json", &m, &err) != GM_OK)
        fail_msg("%s", err.message);
    gm_plan *p = plan_and_check(m, "placeholders");
    assert_int_equal(symbol_named(p, "w_out_0")->region, GM_PLAN_R_FIXED);
    assert_int_equal(symbol_named(p, "v_out_0")->region, GM_PLAN_R_FIXED);
    assert_int_equal(symbol_named(p, "d_out_0")->region, GM_PLAN_R_FEATURE_MAP);
    assert_int_equal(symbol_named(p, "a_out_0")->region, GM_PLAN_R_FEATURE_MAP);
    gm_model_stats st;
    gm_model_get_stats(m, &st);
    assert_int_equal(st.fixed_bytes, 2 * 1024); /* the two weights, as info counts them */
    gm_plan_free(p);
    gm_model_free(m);
}

/* Bad options are an input error, not a crash. */
static void test_bad_align(void **state)
{
    (void)state;
    gm_model *m = NULL;
    gm_error err;
    assert_int_equal(gm_model_read_json(k_two_streams, strlen(k_two_streams), "two.json", &m, &err), GM_OK);
    gm_plan_options o;
    gm_plan_options_init(&o);
    o.align = 0;
    gm_plan *p = NULL;
    assert_int_equal(gm_plan_build(m, &o, &p, &err), GM_ERR_INPUT);
    assert_null(p);
    gm_model_free(m);
}

/* Names the plan's text must escape (a quote, a backslash, a non-ASCII letter, DEL), a batch
 * label and a tensor of run-time size: every field of the text is still the plan's. */
static void test_text_escapes_and_labels(void **state)
{
    (void)state;
    static const char text[] =
        "{\"graphmem\":1,\"name\":\"odd\",\"graphs\":[{\"name\":\"root\",\"nodes\":["
        "{\"name\":\"x\",\"type\":\"Data\",\"attrs\":{\"index\":0}," F256 "},"
        "{\"name\":\"a\\\"q\",\"type\":\"Relu\",\"inputs\":[\"x:0\"]," F256 "},"
        "{\"name\":\"b\\\\s\",\"type\":\"Relu\",\"inputs\":[\"a\\\"q:0\"]," F256 "},"
        "{\"name\":\"\\u00fc\\u007f\",\"type\":\"Relu\",\"inputs\":[\"b\\\\s:0\"]," F256 "},"
        "{\"name\":\"lab\",\"type\":\"Relu\",\"inputs\":[\"\\u00fc\\u007f:0\"],\"attrs\":{\"_batch_label\":\"batch_0\"}," F256 "},"
        "{\"name\":\"dyn\",\"type\":\"Relu\",\"inputs\":[\"lab:0\"],\"outputs\":[{\"dtype\":\"float32\",\"shape\":[-1]}]},"
        "{\"name\":\"out\",\"type\":\"NetOutput\",\"inputs\":[\"dyn:0\",\"a\\\"q:0\"]}]}]}";
    gm_model *m = NULL;
    gm_error err;
    if (gm_model_read_json(text, strlen(text), "odd.json", &m, &err) != GM_OK) fail_msg("%s", err.message);
    gm_plan *p = plan_and_check(m, "odd names");
    bool quoted = false, labelled = false, dynamic = false;
    for (size_t i = 0; i < p->n_symbols; i++) {
        quoted = quoted || strchr(p->symbols[i].id, '"');
        labelled = labelled || (p->symbols[i].batch_label && *p->symbols[i].batch_label);
        dynamic = dynamic || p->symbols[i].region == GM_PLAN_R_DYNAMIC;
    }
    assert_true(quoted && labelled && dynamic); /* each case is in the plan */
    gm_plan_free(p);
    gm_model_free(m);
}

/* A graph big enough that the planner describes its symbols in parts on threads, and the
 * reader parses its nodes ahead (both run under ThreadSanitizer): the plan is the same text on
 * one thread and on four. */
static void test_threads_same_plan(void **state)
{
    (void)state;
    char *text = rg_graph(77, 12000, 3);
    gm_error err;
    gm_model *m = NULL;
    if (gm_model_read_json(text, strlen(text), "big.json", &m, &err) != GM_OK) fail_msg("read: %s", err.message);
    free(text);
    run_passes(m, "big");
    char *plans[2] = {NULL, NULL};
    const unsigned threads[2] = {1, 4};
    for (int k = 0; k < 2; k++) {
        gm_plan_options o;
        gm_plan_options_init(&o);
        o.threads = threads[k];
        o.reproducible = true;
        gm_plan *p = NULL;
        if (gm_plan_build(m, &o, &p, &err) != GM_OK) fail_msg("plan: %s", err.message);
        assert_int_equal(p->unresolved, 0);
        assert_true(p->n_symbols > 8192); /* more than one part */
        plans[k] = strdup(p->text);
        gm_plan_free(p);
    }
    assert_string_equal(plans[0], plans[1]);
    free(plans[0]);
    free(plans[1]);
    gm_model_free(m);
}

/* m's plan text, reproducible, built with the symbol table given (NULL: built by the planner). */
static char *plan_text(gm_model *m, gm_symbols *symbols, const char *what)
{
    gm_plan_options o;
    gm_plan_options_init(&o);
    o.reproducible = true;
    gm_plan *p = NULL;
    gm_error err;
    if (gm_plan_build_symbols(m, &o, symbols, &p, &err) != GM_OK) fail_msg("%s: plan: %s", what, err.message);
    assert_int_equal(p->unresolved, 0);
    char *text = strdup(p->text);
    gm_plan_free(p);
    return text;
}

/* The symbol table the passes leave goes to the planner, which then need not build it: every
 * real model gets one after all the passes, and plans the same with it as without. A table
 * the model no longer matches (a node added after the passes) is built again, so the new
 * node's output gets its symbol; passes that build no table leave none. */
static void test_passes_symbols_to_planner(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof k_models / sizeof *k_models; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/models/%s", GM_TEST_DATA_DIR, k_models[i]);
        gm_model *m = NULL;
        gm_error err;
        if (gm_model_read_file(path, &m, &err) != GM_OK) fail_msg("%s", err.message);
        gm_pass_report rep = {0};
        gm_symbols *sy = NULL;
        if (gm_passes_run_symbols(m, GM_PASS_SET_ALL, &rep, NULL, &sy, &err) != GM_OK)
            fail_msg("%s: passes: %s", k_models[i], err.message);
        gm_pass_report_free(&rep);
        assert_non_null(sy);
        char *with = plan_text(m, sy, k_models[i]), *without = plan_text(m, NULL, k_models[i]);
        assert_string_equal(with, without);
        free(with);
        free(without);

        if (i == 0) {
            if (gm_passes_run_symbols(m, GM_PASS_SET_ALL, &rep, NULL, &sy, &err) != GM_OK)
                fail_msg("passes: %s", err.message);
            gm_pass_report_free(&rep);
            gm_node *x = gm_graph_add_node(gm_model_root(m), "added_after_the_passes", "Const", &err);
            assert_non_null(x);
            gm_tensor_desc *d = gm_node_add_output(x);
            assert_non_null(d);
            gm_desc_set_dtype(d, GM_DT_FLOAT);
            const int64_t dims[1] = {1024};
            assert_int_equal(gm_desc_set_shape(d, dims, 1), GM_OK);
            assert_int_equal(gm_model_toposort(m, &err), GM_OK);
            with = plan_text(m, sy, "stale table");
            without = plan_text(m, NULL, "no table");
            assert_string_equal(with, without);
            assert_non_null(strstr(with, "added_after_the_passes_out_0"));
            free(with);
            free(without);

            sy = (gm_symbols *)1; /* must be overwritten */
            if (gm_passes_run_symbols(m, (gm_pass_set)1u << GM_PASS_LINT, &rep, NULL, &sy, &err) != GM_OK)
                fail_msg("lint: %s", err.message);
            gm_pass_report_free(&rep);
            assert_null(sy);
        }
        gm_model_free(m);
    }
}

/* The describe step notes per symbol what the packer's groups look for (an anchor of a
 * continuous node, an anchor an atomic-clean node zeroes), so that the groups are found
 * without visiting every symbol's nodes again: each flag is exactly the question asked of its
 * anchors, and both occur. */
static void test_symbol_group_flags(void **state)
{
    (void)state;
    static const char text[] =
        "{\"graphmem\":1,\"name\":\"flags\",\"graphs\":[{\"name\":\"root\",\"nodes\":["
        "{\"name\":\"x\",\"type\":\"Data\",\"attrs\":{\"index\":0}," F256 "},"
        "{\"name\":\"a\",\"type\":\"Relu\",\"inputs\":[\"x:0\"]," F256 "},"
        "{\"name\":\"b\",\"type\":\"Sigmoid\",\"inputs\":[\"x:0\"]," F256 "},"
        "{\"name\":\"concat\",\"type\":\"ConcatD\",\"inputs\":[\"a:0\",\"b:0\"],\"attrs\":{\"continuous_input\":true},"
        "\"outputs\":[{\"dtype\":\"float32\",\"shape\":[512]}]},"
        "{\"name\":\"s\",\"type\":\"UnsortedSegmentSum\",\"inputs\":[\"concat:0\"],\"attrs\":{\"atomic_output_index\":[0]},"
        F256 "},"
        "{\"name\":\"y\",\"type\":\"Relu\",\"inputs\":[\"s:0\"]," F256 "},"
        "{\"name\":\"out\",\"type\":\"NetOutput\",\"inputs\":[\"y:0\"]}]}]}";
    gm_model *m = NULL;
    gm_error err;
    if (gm_model_read_json(text, strlen(text), "flags.json", &m, &err) != GM_OK) fail_msg("%s", err.message);
    gm_pass_report rep;
    if (gm_passes_run(m, GM_PASS_SET_ALL, &rep, NULL, &err) != GM_OK) fail_msg("%s", err.message);
    gm_plan *p = plan_and_check(m, "flags");
    size_t continuous = 0, atomic = 0;
    for (size_t i = 0; i < p->n_symbols; i++) {
        const gm_plan_symbol *y = &p->symbols[i];
        bool want_cont = false, want_atomic = false;
        for (size_t j = 0; j < y->n_anchors; j++) {
            const gm_plan_anchor *a = &y->anchors[j];
            const gm_attr *c = gm_attr_find(gm_node_attr_list(a->node), a->out ? "continuous_output" : "continuous_input");
            want_cont |= c && gm_attr_get_kind(c) == GM_ATTR_BOOL && gm_attr_bool(c);
            want_atomic |= gm_anchor_clean_node(a->node, a->out, a->index) != NULL;
        }
        if (y->continuous != want_cont || y->atomic_clean != want_atomic)
            fail_msg("%s: continuous %d atomic_clean %d, its anchors say %d %d", y->id, y->continuous, y->atomic_clean,
                     want_cont, want_atomic);
        continuous += y->continuous;
        atomic += y->atomic_clean;
    }
    assert_int_equal(continuous, 2); /* a and b, concat's inputs */
    assert_int_equal(atomic, 1);     /* s's output */
    gm_plan_free(p);
    gm_pass_report_free(&rep);
    gm_model_free(m);
}

/* ---- release positions against reachability (src/analysis/happens_before.c) ---- */

/* A random chain of n Relu nodes after one Data node, over 3 streams, each reading an earlier
 * node and with a few control edges back to earlier nodes (JSON, malloc'd). */
static char *random_streams_json(uint64_t seed, int n, int (*src)[2], int *stream)
{
    rg g = {.state = seed};
    rg_put(&g, "{\"graphmem\":1,\"name\":\"hb\",\"graphs\":[{\"name\":\"root\",\"nodes\":["
               "{\"name\":\"x\",\"type\":\"Data\",\"attrs\":{\"index\":0}," F256 "}");
    for (int i = 1; i <= n; i++) {
        stream[i] = rg_pick(&g, 3);
        src[i][0] = rg_pick(&g, i);                           /* the data input */
        src[i][1] = i > 2 && rg_pick(&g, 3) == 0 ? 1 + rg_pick(&g, i - 1) : -1; /* a control input */
        char in[32];
        if (src[i][0]) snprintf(in, sizeof in, "n%d:0", src[i][0]);
        else snprintf(in, sizeof in, "x:0");
        rg_put(&g, ",{\"name\":\"n%d\",\"type\":\"Relu\",\"inputs\":[\"%s\"],\"stream\":%d,", i, in, stream[i]);
        if (src[i][1] > 0) rg_put(&g, "\"control_inputs\":[\"n%d\"],", src[i][1]);
        rg_put(&g, F256 "}");
    }
    rg_put(&g, "]}]}");
    return g.buf;
}

/* The release of a symbol accessed by some nodes is the last position of any node that does
 * not happen after all of them (happens_before.h); a node happens after another when a path of
 * data edges, control edges and per-stream program order leads there. The search for each
 * stream's first node after the accesses (galloping, then halving) must find exactly that, on
 * accesses whose answer lies next to them and far from them. */
static void test_release_against_reachability(void **state)
{
    (void)state;
    enum { N = 120 };
    for (uint64_t seed = 1; seed <= 12; seed++) {
        int src[N + 1][2], stream[N + 1];
        char *text = random_streams_json(seed, N, src, stream);
        gm_model *m = NULL;
        gm_error err;
        if (gm_model_read_json(text, strlen(text), "hb.json", &m, &err) != GM_OK) fail_msg("%s", err.message);
        free(text);
        gm_hb *hb = NULL;
        gm_hb_life *life = NULL;
        assert_int_equal(gm_hb_build(m, &hb, &err), GM_OK);
        assert_int_equal(gm_hb_life_new(hb, &life), GM_OK);
        /* node i of the chain is at model position pos[i] (the reader may not keep file order) */
        int pos[N + 1];
        const gm_node *node[N + 1];
        for (int i = 1; i <= N; i++) {
            char name[16];
            snprintf(name, sizeof name, "n%d", i);
            node[i] = gm_model_find_node(m, name);
            assert_non_null(node[i]);
            pos[i] = (int)gm_node_topo_id(node[i]);
        }
        /* reach[a][b]: b happens after a (or is a), by the edges alone */
        static bool reach[N + 1][N + 1];
        memset(reach, 0, sizeof reach);
        int by_pos[N + 1];
        for (int i = 1; i <= N; i++) by_pos[pos[i]] = i; /* x is position 0 */
        for (int p = N; p >= 1; p--) {
            int a = by_pos[p];
            reach[a][a] = true;
            for (int q = p + 1; q <= N; q++) {
                int b = by_pos[q];
                bool direct = src[b][0] == a || src[b][1] == a;
                if (!direct && stream[b] == stream[a]) { /* the next node of a's stream */
                    direct = true;
                    for (int r = p + 1; r < q && direct; r++) direct = stream[by_pos[r]] != stream[a];
                }
                if (direct)
                    for (int c = 1; c <= N; c++) reach[a][c] |= reach[b][c];
            }
        }
        rg pick = {.state = seed * 977};
        for (int trial = 0; trial < 200; trial++) {
            int k = 1 + rg_pick(&pick, 3), acc[3];
            gm_hb_life_reset(life);
            int last = 0;
            for (int j = 0; j < k; j++) {
                acc[j] = 1 + rg_pick(&pick, N);
                assert_int_equal(gm_hb_life_add(life, node[acc[j]]), GM_OK);
                if (pos[acc[j]] > last) last = pos[acc[j]];
            }
            int want = last;
            for (int q = last + 1; q <= N; q++) {
                bool after_all = true;
                for (int j = 0; j < k; j++) after_all &= reach[acc[j]][by_pos[q]];
                if (!after_all) want = q;
            }
            gm_hb_span sp = gm_hb_life_span(life);
            if (sp.release != want)
                fail_msg("seed %llu trial %d: release %lld, reachability says %d", (unsigned long long)seed, trial,
                         (long long)sp.release, want);
            assert_int_equal(sp.last, last);
        }
        gm_hb_life_free(life);
        gm_hb_free(hb);
        gm_model_free(m);
    }
}

/* The planner shows its text (gm_plan_options.on_text) once written, before the verifier judges
 * it, and withdraws it before it is released: the calls alternate text, NULL, text, ..., and the
 * last text shown is the plan's own, one per self-check round. A plan that fails before it is
 * written shows nothing. */
typedef struct text_calls {
    size_t shown, withdrawn;
    const char *last;
    size_t last_len;
    bool out_of_turn;
} text_calls;

static void record_text(const char *text, size_t len, void *ctx)
{
    text_calls *c = ctx;
    bool showing = c->shown > c->withdrawn; /* a text is out */
    if (text) {
        if (showing) c->out_of_turn = true;
        c->shown++;
        c->last = text;
        c->last_len = len;
    } else {
        if (!showing) c->out_of_turn = true;
        c->withdrawn++;
        c->last = NULL;
    }
}

static void test_text_shown_before_verifying(void **state)
{
    (void)state;
    char *big = rg_graph(77, 12000, 3);
    const char *texts[2] = {k_two_streams, big};
    for (int k = 0; k < 2; k++) {
        gm_error err;
        gm_model *m = NULL;
        if (gm_model_read_json(texts[k], strlen(texts[k]), "m.json", &m, &err) != GM_OK) fail_msg("read: %s", err.message);
        if (k) run_passes(m, "big");
        text_calls c = {0};
        gm_plan_options o;
        gm_plan_options_init(&o);
        o.on_text = record_text;
        o.text_ctx = &c;
        gm_plan *p = NULL;
        if (gm_plan_build(m, &o, &p, &err) != GM_OK) fail_msg("plan: %s", err.message);
        assert_false(c.out_of_turn);
        assert_int_equal(p->unresolved, 0);
        assert_int_equal(c.shown, c.withdrawn + 1);
        assert_int_equal(c.shown, p->repair_rounds);
        assert_ptr_equal(c.last, p->text);
        assert_int_equal(c.last_len, p->text_len);
        gm_plan_free(p);

        /* a failure before any text: nothing shown */
        text_calls none = {0};
        o.text_ctx = &none;
        o.align = 0;
        assert_int_equal(gm_plan_build(m, &o, &p, &err), GM_ERR_INPUT);
        assert_int_equal(none.shown + none.withdrawn, 0);
        gm_model_free(m);
    }
    free(big);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_embedded_example), cmocka_unit_test(test_two_streams),
        cmocka_unit_test(test_bad_align),        cmocka_unit_test(test_models_raw),
        cmocka_unit_test(test_models_after_passes), cmocka_unit_test(test_const_edge_orders_nothing),
        cmocka_unit_test(test_weight_placeholders_fixed),
        cmocka_unit_test(test_threads_same_plan),
        cmocka_unit_test(test_text_escapes_and_labels),
        cmocka_unit_test(test_passes_symbols_to_planner),
        cmocka_unit_test(test_release_against_reachability),
        cmocka_unit_test(test_symbol_group_flags),
        cmocka_unit_test(test_text_shown_before_verifying),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
