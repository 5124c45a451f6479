/*
 * test_plan_options.c — what the planner promises beyond "a valid plan": no-reuse flags and
 * options, batch labels laid over each other, the lower-bound witness, one strategy by name,
 * and the same plan whatever the thread count.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graphmem/io.h"
#include "graphmem/passes.h"
#include "graphmem/plan.h"
#include "plan/planner_internal.h"
#include "util/alloc.h"

#define F256 "\"outputs\":[{\"dtype\":\"float32\",\"shape\":[256]}]"
#define HEAD "{\"graphmem\":1,\"name\":\"t\",\"graphs\":[{\"name\":\"root\",\"nodes\":["

/* x -> a -> b -> c -> d -> out: a and c may share (b lies between them). */
static const char k_chain[] = HEAD
    "{\"name\":\"x\",\"type\":\"Data\",\"attrs\":{\"index\":0}," F256 "},"
    "{\"name\":\"a\",\"type\":\"Relu\",\"inputs\":[\"x:0\"]%s," F256 "},"
    "{\"name\":\"b\",\"type\":\"Relu\",\"inputs\":[\"a:0\"]," F256 "},"
    "{\"name\":\"c\",\"type\":\"Sigmoid\",\"inputs\":[\"b:0\"]," F256 "},"
    "{\"name\":\"d\",\"type\":\"Relu\",\"inputs\":[\"c:0\"]," F256 "},"
    "{\"name\":\"out\",\"type\":\"NetOutput\",\"inputs\":[\"d:0\"]}]}]}";

static gm_model *read_model(const char *text)
{
    gm_model *m = NULL;
    gm_error err;
    if (gm_model_read_json(text, strlen(text), "t.json", &m, &err) != GM_OK) fail_msg("%s", err.message);
    return m;
}

static gm_model *chain(const char *a_attrs)
{
    char text[4096];
    snprintf(text, sizeof text, k_chain, a_attrs);
    return read_model(text);
}

/* Plans with o, checks that the plan the planner kept is the one the verifier accepts. */
static gm_plan *plan(const gm_model *m, const gm_plan_options *o)
{
    gm_error err;
    gm_plan *p = NULL;
    if (gm_plan_build(m, o, &p, &err) != GM_OK) fail_msg("plan: %s", err.message);
    assert_non_null(p->text);
    gm_plan_verdict v;
    if (gm_plan_verify_json(m, p->text, p->text_len, "kept text", &v, &err) != GM_OK) fail_msg("%s", err.message);
    assert_true(gm_plan_verdict_ok(&v));
    gm_plan_verdict_free(&v);
    assert_int_equal(p->unresolved, 0);
    assert_true(p->feature_map_bytes >= p->lower_bound_bytes);
    return p;
}

static const gm_plan_symbol *sym(const gm_plan *p, const char *id)
{
    for (size_t i = 0; i < p->n_symbols; i++)
        if (!strcmp(p->symbols[i].id, id)) return &p->symbols[i];
    fail_msg("no symbol %s", id);
    return NULL;
}

/* No other feature-map symbol touches y's addresses. */
static void assert_alone(const gm_plan *p, const gm_plan_symbol *y)
{
    for (size_t i = 0; i < p->n_symbols; i++) {
        const gm_plan_symbol *z = &p->symbols[i];
        if (z == y || z->region != y->region) continue;
        if (z->offset < y->offset + y->size && y->offset < z->offset + z->size)
            fail_msg("%s shares memory with %s", z->id, y->id);
    }
}

static void test_reuse_by_default(void **state)
{
    (void)state;
    gm_model *m = chain("");
    gm_plan *p = plan(m, NULL);
    /* a [1,2], b [2,3], c [3,4]: two slots of 1024 bytes */
    assert_int_equal(p->feature_map_bytes, 2048);
    assert_int_equal(p->lower_bound_bytes, 2048);
    assert_int_equal(sym(p, "a_out_0")->offset, sym(p, "c_out_0")->offset);
    gm_plan_free(p);
    gm_model_free(m);
}

static void test_no_reuse_mem_flag(void **state)
{
    (void)state;
    gm_model *m = chain(",\"attrs\":{\"no_reuse_mem_flag\":true}");
    gm_plan *p = plan(m, NULL);
    assert_alone(p, sym(p, "a_out_0"));
    assert_int_equal(p->feature_map_bytes, 3072);
    /* the bound is over the graph's tensors as they run: the flag costs 1024 bytes above it */
    assert_int_equal(p->lower_bound_bytes, 2048);
    gm_plan_free(p);
    gm_model_free(m);
}

static void test_op_no_reuse_mem(void **state)
{
    (void)state;
    gm_model *m = chain("");
    gm_plan_options o;
    gm_plan_options_init(&o);
    o.no_reuse_ops = "Gelu,Sigmoid"; /* by type: c */
    gm_plan *p = plan(m, &o);
    assert_alone(p, sym(p, "c_out_0"));
    gm_plan_free(p);
    o.no_reuse_ops = "a"; /* by name */
    p = plan(m, &o);
    assert_alone(p, sym(p, "a_out_0"));
    gm_plan_free(p);
    gm_model_free(m);
}

static void test_disable_reuse_memory(void **state)
{
    (void)state;
    gm_model *m = chain("");
    assert_int_equal(gm_model_set_option(m, "ge.exec.disableReuseMemory", "1"), GM_OK);
    gm_plan *p = plan(m, NULL);
    assert_int_equal(p->feature_map_bytes, p->no_reuse_bytes);
    assert_true(p->fallback[GM_MEM_HBM][GM_PLAN_R_FEATURE_MAP]);
    gm_plan_free(p);
    gm_model_free(m);
}

/* Two batch branches (labels b0, b1) whose tensors are live at the same positions of the
 * order; they never run together, so they overlay. m joins them without a label. */
static const char k_batches[] = HEAD
    "{\"name\":\"x\",\"type\":\"Data\",\"attrs\":{\"index\":0}," F256 "},"
    "{\"name\":\"p0\",\"type\":\"Relu\",\"inputs\":[\"x:0\"],\"attrs\":{\"_batch_label\":\"b0\"}," F256 "},"
    "{\"name\":\"q0\",\"type\":\"Relu\",\"inputs\":[\"p0:0\"],\"attrs\":{\"_batch_label\":\"b0\"}," F256 "},"
    "{\"name\":\"p1\",\"type\":\"Relu\",\"inputs\":[\"x:0\"],\"attrs\":{\"_batch_label\":\"b1\"}," F256 "},"
    "{\"name\":\"q1\",\"type\":\"Relu\",\"inputs\":[\"p1:0\"],\"attrs\":{\"_batch_label\":\"b1\"}," F256 "},"
    "{\"name\":\"m\",\"type\":\"Add\",\"inputs\":[\"q0:0\",\"q1:0\"]," F256 "},"
    "{\"name\":\"n\",\"type\":\"Relu\",\"inputs\":[\"m:0\"]," F256 "},"
    "{\"name\":\"out\",\"type\":\"NetOutput\",\"inputs\":[\"n:0\"]}]}]}";

static void test_batch_labels_overlay(void **state)
{
    (void)state;
    gm_model *m = read_model(k_batches);
    gm_plan *p = plan(m, NULL);
    const gm_plan_symbol *q0 = sym(p, "q0_out_0"), *q1 = sym(p, "q1_out_0");
    assert_string_equal(q0->batch_label, "b0");
    assert_string_equal(q1->batch_label, "b1");
    assert_null(sym(p, "m_out_0")->batch_label);
    /* without labels q0, p1 and q1 are live together (3 slots); with them each batch needs 2
     * and m, unlabelled, lives after both: 2 slots in all */
    assert_int_equal(p->feature_map_bytes, 2048);
    assert_int_equal(p->lower_bound_bytes, 2048);
    assert_non_null(strstr(p->text, "\"batch_label\":\"b1\""));
    gm_plan_free(p);
    gm_model_free(m);
}

static void test_witness_proves_the_bound(void **state)
{
    (void)state;
    gm_model *m = read_model(k_batches);
    gm_plan *p = plan(m, NULL);
    int64_t sum = 0;
    assert_true(p->n_witness > 0);
    for (size_t i = 0; i < p->n_witness; i++) {
        const gm_plan_symbol *a = &p->symbols[p->witness[i]];
        sum += a->size;
        /* pairwise: spans meet, and never two different batch labels */
        for (size_t j = 0; j < i; j++) {
            const gm_plan_symbol *b = &p->symbols[p->witness[j]];
            assert_true(a->first <= b->last_use && b->first <= a->last_use);
            if (a->batch_label && b->batch_label) assert_string_equal(a->batch_label, b->batch_label);
        }
    }
    assert_int_equal(sum, p->lower_bound_bytes);
    assert_non_null(strstr(p->text, "\"lower_bound_witness\""));
    gm_plan_free(p);
    gm_model_free(m);
}

static void test_one_strategy_by_name(void **state)
{
    (void)state;
    gm_model *m = chain("");
    gm_plan_options o;
    gm_plan_options_init(&o);
    o.strategy = "best_fit";
    gm_plan *p = plan(m, &o);
    assert_int_equal(p->n_strategies, 1);
    assert_string_equal(p->strategy, "best_fit");
    gm_plan_free(p);
    o.strategy = "no_such_packer";
    gm_error err;
    p = NULL;
    assert_int_equal(gm_plan_build(m, &o, &p, &err), GM_ERR_USAGE);
    assert_null(p);
    assert_non_null(strstr(err.message, "no_such_packer"));
    gm_model_free(m);
}

/* GE's strategies are skipped only where they cannot win: graphmem's own packers reached the
 * lower bound on a plan above the comparison size, and neither "all" nor a name asked for them. */
static void test_strategies_skipped_at_the_bound(void **state)
{
    (void)state;
    /* a and c live apart, b beside both: best fit reaches the bound, 512 + 512 */
    gm_dsa_buffer items[3] = {{.id = 0, .lower = 0, .upper = 2, .size = 512, .align = 512, .offset = -1},
                              {.id = 1, .lower = 1, .upper = 4, .size = 512, .align = 512, .offset = -1},
                              {.id = 2, .lower = 3, .upper = 5, .size = 512, .align = 512, .offset = -1}};
    gm_pack_meta meta[3] = {{512, 0, 1, false, false}, {512, 0, 1, false, false}, {512, 0, 1, false, false}};
    gm_pack_unit unit = {.region = GM_PLAN_R_FEATURE_MAP, .mem_type = GM_MEM_HBM, .first = 0, .n = 3};
    struct {
        int64_t bound;
        size_t compare_items;
        bool all;
        int only;
        unsigned ran;
    } cases[] = {
        {1024, 0, false, -1, GM_PACK_GE_FIRST},   /* at the bound, large: GE's skipped */
        {1024, 100, false, -1, GM_PACK_COUNT},    /* small: all run for comparison */
        {1024, 0, true, -1, GM_PACK_COUNT},       /* --strategy all */
        {512, 0, false, -1, GM_PACK_GE_FIRST},    /* large, the bound not reached: GE's skipped too
                                                     (they won on no model measured) */
        {-1, 0, false, -1, GM_PACK_GE_FIRST},     /* no bound known: the same */
        {512, 100, false, -1, GM_PACK_COUNT},     /* small and not at the bound: all run */
        {1024, 0, false, GM_PACK_GE_FIRST + 1, 1}, /* one of GE's by name */
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        for (unsigned threads = 1; threads <= 3; threads += 2) {
            gm_pack_job job = {.items = items, .meta = meta, .n_items = 3, .units = &unit, .n_units = 1,
                               .search_node_limit = 1000, .only = cases[c].only, .lower_bound = cases[c].bound,
                               .compare_all = cases[c].all, .compare_items = cases[c].compare_items};
            gm_pack_result res[GM_PACK_COUNT];
            memset(res, 0, sizeof res);
            assert_int_equal(gm_pack_results_alloc(&job, res), GM_OK);
            gm_error err;
            int best = gm_pack_run(&job, threads, res, &err);
            unsigned ran = 0;
            for (int s = 0; s < GM_PACK_COUNT; s++) ran += !res[s].skipped;
            assert_int_equal(ran, cases[c].ran);
            assert_int_equal(best, cases[c].only >= 0 ? cases[c].only : GM_PACK_BEST_FIT);
            assert_int_equal(res[best].feature_map_bytes, 1024);
            gm_pack_results_free(res);
        }
    }
}

/* One budget bounds every strategy: spent before GE's strategies start, none of them runs (each
 * is counted as such), the search keeps best fit's answer, and the plan still verifies; with
 * time to spare all eight run. A budget of a nanosecond is spent before best fit ends. */
static void test_budget_bounds_every_strategy(void **state)
{
    (void)state;
    gm_model *m = NULL;
    gm_error err;
    assert_int_equal(gm_model_read_embedded_example(&m, &err), GM_OK);
    gm_plan_options o;
    gm_plan_options_init(&o);
    o.strategy = "all";
    o.search_budget_s = 1e-9;
    gm_plan *p = plan(m, &o);
    assert_int_equal(p->n_strategies_out_of_budget, GM_PACK_COUNT - GM_PACK_GE_FIRST);
    assert_int_equal(p->n_strategies, GM_PACK_GE_FIRST);
    assert_string_equal(p->strategy, "best_fit");
    gm_plan_free(p);
    o.search_budget_s = 600;
    p = plan(m, &o);
    assert_int_equal(p->n_strategies_out_of_budget, 0);
    assert_int_equal(p->n_strategies, GM_PACK_COUNT);
    gm_plan_free(p);
    gm_model_free(m);
}

/* The plan text (times written as 0) is the same byte for byte on 1, 2 and 8 threads. */
static void test_same_plan_any_threads(void **state)
{
    (void)state;
    static const char *const files[] = {"resnet18.onnx", "transformer_lm_train_step.graphmem.json"};
    for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/models/%s", GM_TEST_DATA_DIR, files[f]);
        gm_model *m = NULL;
        gm_error err;
        if (gm_model_read_file(path, &m, &err) != GM_OK) fail_msg("%s", err.message);
        gm_plan_options o;
        gm_plan_options_init(&o);
        o.reproducible = true;
        o.threads = 1;
        gm_plan *one = plan(m, &o);
        static const unsigned counts[] = {2, 8};
        for (size_t k = 0; k < 2; k++) {
            o.threads = counts[k];
            gm_plan *many = plan(m, &o);
            assert_int_equal(one->text_len, many->text_len);
            assert_memory_equal(one->text, many->text, one->text_len);
            gm_plan_free(many);
        }
        gm_plan_free(one);
        gm_model_free(m);
    }
}

/* c accumulates atomically into its output, which the clean node the passes put at the head
 * zeroes first: c's output is in use from the clean node on, so it may not take a's memory,
 * although a is dead before c runs. */
static const char k_atomic[] = HEAD
    "{\"name\":\"x\",\"type\":\"Data\",\"attrs\":{\"index\":0}," F256 "},"
    "{\"name\":\"a\",\"type\":\"Relu\",\"inputs\":[\"x:0\"]," F256 "},"
    "{\"name\":\"b\",\"type\":\"Relu\",\"inputs\":[\"a:0\"]," F256 "},"
    "{\"name\":\"c\",\"type\":\"ReduceSumD\",\"inputs\":[\"b:0\"],\"attrs\":{\"atomic_output_index\":[0]}," F256 "},"
    "{\"name\":\"d\",\"type\":\"Relu\",\"inputs\":[\"c:0\"]," F256 "},"
    "{\"name\":\"out\",\"type\":\"NetOutput\",\"inputs\":[\"d:0\"]}]}]}";

static void test_atomic_output_lives_from_its_clean(void **state)
{
    (void)state;
    gm_model *m = read_model(k_atomic);
    gm_error err;
    gm_pass_report rep = {0};
    gm_pass_set avail = 0;
    if (gm_passes_run(m, GM_PASS_SET_ALL, &rep, &avail, &err) != GM_OK) fail_msg("%s", err.message);
    assert_true(rep.inserted[GM_PASS_ATOMIC_ADDR_CLEAN] > 0);
    gm_pass_report_free(&rep);
    gm_plan *p = plan(m, NULL);
    gm_plan_symbol *a = (gm_plan_symbol *)sym(p, "a_out_0"), *c = (gm_plan_symbol *)sym(p, "c_out_0");
    assert_true(c->first < a->first); /* from the clean node at the head */
    assert_true(c->offset + c->size <= a->offset || a->offset + a->size <= c->offset);
    /* and the verifier knows it too: put c over a and it must say no */
    c->offset = a->offset;
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(gm_plan_write_json(m, p, &text, &len, &err), GM_OK);
    gm_plan_verdict v;
    assert_int_equal(gm_plan_verify_json(m, text, len, "moved", &v, &err), GM_OK);
    assert_true(v.by_kind[GM_PLAN_P_OVERLAP] > 0);
    gm_plan_verdict_free(&v);
    free(text);
    gm_plan_free(p);
    gm_model_free(m);
}

static void test_ge_padded_sizes(void **state)
{
    (void)state;
    gm_model *m = chain("");
    gm_plan_options o;
    gm_plan_options_init(&o);
    o.ge_padded_sizes = true;
    gm_plan *p = plan(m, &o);
    /* 1024 bytes -> 1024 + 32 -> two 512-byte blocks */
    assert_int_equal(sym(p, "a_out_0")->real_size, 1056);
    assert_int_equal(sym(p, "a_out_0")->size, 1536);
    gm_plan_free(p);
    gm_model_free(m);
}

static void test_fixed_address_output(void **state)
{
    (void)state;
    gm_model *m = chain(",\"attrs\":{\"_alloc_fixed_addr\":\"y\",\"_alloc_fixed_addr_index\":0}");
    gm_plan *p = plan(m, NULL);
    assert_int_equal(sym(p, "a_out_0")->region, GM_PLAN_R_FIXED);
    assert_int_equal(sym(p, "b_out_0")->region, GM_PLAN_R_FEATURE_MAP);
    gm_plan_free(p);
    gm_model_free(m);
}

/* Replaces the first `from` in text by `to` (the plan text is small here). */
static char *edited(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    assert_non_null(at);
    size_t n = strlen(text) + strlen(to) + 1;
    char *out = malloc(n);
    snprintf(out, n, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    return out;
}

static size_t bound_problems(const gm_model *m, const char *text)
{
    gm_plan_verdict v;
    gm_error err;
    if (gm_plan_verify_json(m, text, strlen(text), "edited", &v, &err) != GM_OK) fail_msg("%s", err.message);
    size_t n = v.by_kind[GM_PLAN_P_BOUND];
    gm_plan_verdict_free(&v);
    return n;
}

/* The verifier checks the claimed bound against its witness. */
static void test_verifier_checks_the_bound(void **state)
{
    (void)state;
    gm_model *m = chain("");
    gm_plan *p = plan(m, NULL);
    assert_int_equal(bound_problems(m, p->text), 0);
    char *t = edited(p->text, "\"lower_bound_bytes\": 2048", "\"lower_bound_bytes\": 4096");
    assert_true(bound_problems(m, t) > 0); /* more than the witness holds */
    free(t);
    /* a and c are ordered (b lies between them): no witness of anything */
    const char *w = strstr(p->text, "\"lower_bound_witness\"");
    assert_non_null(w);
    const char *end = strchr(w, ']');
    char from[256];
    snprintf(from, sizeof from, "%.*s", (int)(end - w + 1), w);
    t = edited(p->text, from, "\"lower_bound_witness\": [\"a_out_0\",\"c_out_0\"]");
    assert_true(bound_problems(m, t) > 0);
    free(t);
    t = edited(p->text, from, "\"lower_bound_witness\": [\"no_such_symbol\"]");
    assert_true(bound_problems(m, t) > 0);
    free(t);
    gm_plan_free(p);
    gm_model_free(m);
}

/* Every allocation of the planner fails in turn: a clean GM_ERR_NOMEM each time, no leak (ASan),
 * and the plan once none fails. One thread, so the n-th allocation is the same every run. */
static void test_every_allocation_may_fail(void **state)
{
    (void)state;
    static const char *const texts[] = {k_batches, k_atomic};
    for (size_t t = 0; t < 2; t++) {
        gm_model *m = read_model(texts[t]);
        gm_plan_options o;
        gm_plan_options_init(&o);
        o.threads = 1;
        for (long n = 0;; n++) {
            gm_plan *p = NULL;
            gm_error err;
            gm_alloc_fail_after(n);
            gm_status st = gm_plan_build(m, &o, &p, &err);
            gm_alloc_fail_after(-1);
            if (st == GM_OK) {
                assert_int_equal(p->unresolved, 0);
                gm_plan_free(p);
                break;
            }
            assert_int_equal(st, GM_ERR_NOMEM);
            assert_null(p);
            assert_true(n < 100000);
        }
        gm_model_free(m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reuse_by_default),      cmocka_unit_test(test_no_reuse_mem_flag),
        cmocka_unit_test(test_op_no_reuse_mem),       cmocka_unit_test(test_disable_reuse_memory),
        cmocka_unit_test(test_batch_labels_overlay),  cmocka_unit_test(test_witness_proves_the_bound),
        cmocka_unit_test(test_one_strategy_by_name),  cmocka_unit_test(test_same_plan_any_threads),
        cmocka_unit_test(test_strategies_skipped_at_the_bound),
        cmocka_unit_test(test_budget_bounds_every_strategy),
        cmocka_unit_test(test_atomic_output_lives_from_its_clean), cmocka_unit_test(test_ge_padded_sizes),
        cmocka_unit_test(test_fixed_address_output), cmocka_unit_test(test_verifier_checks_the_bound),
        cmocka_unit_test(test_every_allocation_may_fail),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
