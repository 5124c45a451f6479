/*
 * test_executor.c — the static-plan executor (src/runtime/executor*.c) on the host backend: a
 * correct plan runs clean on 1 to 8 streams, and a plan that overlays tensors still in use is
 * caught by the pattern checks (a loop's stacked output and the body output it stacks too).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graphmem/executor.h"
#include "graphmem/io.h"
#include "graphmem/passes.h"
#include "graphmem/plan.h"
#include "exec_test_util.h"

static void passes(gm_model *m)
{
    gm_error err;
    gm_pass_report rep = {0};
    gm_pass_set avail = 0;
    if (gm_passes_run(m, GM_PASS_SET_ALL, &rep, &avail, &err) != GM_OK) fail_msg("passes: %s", err.message);
    gm_pass_report_free(&rep);
}

/* Assigns streams, plans, runs; returns the statistics. */
static gm_run_stats run(gm_model *m, unsigned streams, unsigned iterations, const char *what)
{
    gm_error err;
    gm_run_assign_streams(m, streams);
    gm_plan *p = NULL;
    if (gm_plan_build(m, NULL, &p, &err) != GM_OK) fail_msg("%s: plan: %s", what, err.message);
    assert_int_equal(p->unresolved, 0);
    gm_run_options o;
    gm_run_options_init(&o);
    o.streams = streams, o.iterations = iterations;
    gm_run_stats s;
    if (gm_run_static(m, p, &o, &s, &err) != GM_OK) fail_msg("%s: run: %s", what, err.message);
    gm_plan_free(p);
    print_message("  %-40s streams %u  tasks %6llu  reads %6llu  events %5llu  corrupted %llu %s\n", what, streams,
                  (unsigned long long)s.tasks, (unsigned long long)s.reads_checked, (unsigned long long)s.events,
                  (unsigned long long)s.corrupted_reads, s.first_corruption);
    return s;
}

/* GM_EXEC_QUICK=1 (set for the ThreadSanitizer build): fewer models and stream counts. */
static bool quick(void)
{
    const char *q = getenv("GM_EXEC_QUICK");
    return q && *q == '1';
}

static void test_embedded_example_clean(void **state)
{
    (void)state;
    static const unsigned counts[] = {1, 2, 4, 8};
    for (size_t i = 0; i < 4; i++) {
        if (quick() && counts[i] != 1 && counts[i] != 4) continue;
        gm_model *m = NULL;
        gm_error err;
        assert_int_equal(gm_model_read_embedded_example(&m, &err), GM_OK);
        passes(m);
        gm_run_stats s = run(m, counts[i], 3, "embedded example");
        assert_true(s.reads_checked > 0);
        assert_int_equal(s.corrupted_reads, 0);
        assert_true(s.first_iteration_ns > 0 && s.median_iteration_ns > 0); /* timed, never compared */
        if (counts[i] > 1) assert_true(s.events > 0);
        gm_model_free(m);
    }
}

static void test_shared_models_clean(void **state)
{
    (void)state;
    static const char *const files[] = {"resnet18.onnx", "control_flow.onnx", "mlp_train_step.graphmem.json",
                                        "transformer_lm_train_step.graphmem.json"};
    for (size_t f = 0; f < (quick() ? 2 : sizeof files / sizeof *files); f++)
        for (unsigned streams = 1; streams <= 4; streams *= quick() ? 4 : 2) {
            char path[1024];
            snprintf(path, sizeof path, "%s/models/%s", GM_TEST_DATA_DIR, files[f]);
            gm_model *m = NULL;
            gm_error err;
            if (gm_model_read_file(path, &m, &err) != GM_OK) fail_msg("%s", err.message);
            passes(m);
            gm_run_stats s = run(m, streams, 2, files[f]);
            assert_true(s.reads_checked > 0);
            assert_int_equal(s.corrupted_reads, 0);
            gm_model_free(m);
        }
}


/* A plan that overlays a and b is caught at run time: c reads a's memory after b wrote it. */
static void test_bad_plan_is_caught(void **state)
{
    (void)state;
    gm_model *m = NULL;
    gm_error err;
    assert_int_equal(gm_model_read_json(k_diamond, strlen(k_diamond), "d.json", &m, &err), GM_OK);
    gm_plan *p = NULL;
    assert_int_equal(gm_plan_build(m, NULL, &p, &err), GM_OK);
    for (size_t i = 0; i < p->n_symbols; i++)
        if (p->symbols[i].region == GM_PLAN_R_FEATURE_MAP) p->symbols[i].offset = 0; /* everything overlaid */
    gm_run_options o;
    gm_run_options_init(&o);
    gm_run_stats s;
    assert_int_equal(gm_run_static(m, p, &o, &s, &err), GM_OK);
    assert_true(s.corrupted_reads > 0);
    assert_non_null(strstr(s.first_corruption, "node 'c'"));
    gm_plan_free(p);
    gm_model_free(m);
}

/* A Loop with a stacked output (tests/data/loop_stacked.json, ops/op_table.h): the loop writes
 * loop:1 from its enter on and reads the body's row at its exit. The planner's plan runs clean on
 * 1 to 8 streams; row laid inside loop:1 is caught when post reads loop:1, and row laid under
 * late (a body node after b_out, before the loop's exit) when the loop reads row at its exit. */
static void test_loop_stacked_output(void **state)
{
    (void)state;
    static const char path[] = GM_TEST_DATA_DIR "/loop_stacked.json";
    gm_error err;
    for (unsigned streams = 1; streams <= 8; streams *= 2) {
        if (quick() && streams != 1 && streams != 4) continue;
        gm_model *m = NULL;
        if (gm_model_read_file(path, &m, &err) != GM_OK) fail_msg("%s", err.message);
        passes(m);
        gm_run_stats s = run(m, streams, 3, "loop_stacked.json");
        assert_true(s.reads_checked > 0);
        assert_int_equal(s.corrupted_reads, 0);
        gm_model_free(m);
    }
    static const struct {
        const char *moved, *onto, *reader;
    } bad[] = {
        {"row_out_0", "loop_out_1", "node 'post' read 'loop_out_1'"},
        {"late_out_0", "row_out_0", "node 'loop' read 'row_out_0'"},
    };
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
        gm_model *m = NULL;
        if (gm_model_read_file(path, &m, &err) != GM_OK) fail_msg("%s", err.message);
        gm_plan *p = NULL;
        assert_int_equal(gm_plan_build(m, NULL, &p, &err), GM_OK);
        gm_plan_symbol *moved = NULL, *onto = NULL;
        for (size_t i = 0; i < p->n_symbols; i++) {
            if (!strcmp(p->symbols[i].id, bad[b].moved)) moved = &p->symbols[i];
            if (!strcmp(p->symbols[i].id, bad[b].onto)) onto = &p->symbols[i];
        }
        assert_non_null(moved);
        assert_non_null(onto);
        assert_int_equal(moved->region, onto->region);
        moved->offset = onto->offset;
        gm_run_options o;
        gm_run_options_init(&o);
        gm_run_stats s;
        assert_int_equal(gm_run_static(m, p, &o, &s, &err), GM_OK);
        assert_true(s.corrupted_reads > 0);
        if (!strstr(s.first_corruption, bad[b].reader)) fail_msg("%s: %s", bad[b].reader, s.first_corruption);
        gm_plan_free(p);
        gm_model_free(m);
    }
}

/* A While runs its cond, then its body: the cond reads the loop state that the body's output
 * copy (SubgraphPass) writes back, on another stream. Without the body waiting for the cond,
 * the copy lands while the cond reads (every run of 20 iterations saw it). Static and dynamic. */
static void test_while_cond_before_body(void **state)
{
    (void)state;
    static const char path[] = GM_TEST_DATA_DIR "/while_cond_reads_state.json";
    for (unsigned streams = 2; streams <= 8; streams *= 2) {
        gm_model *m = NULL;
        gm_error err;
        if (gm_model_read_file(path, &m, &err) != GM_OK) fail_msg("%s", err.message);
        passes(m);
        gm_run_stats s = run(m, streams, quick() ? 4 : 20, "while_cond_reads_state.json");
        assert_true(s.reads_checked > 0);
        assert_int_equal(s.corrupted_reads, 0);
        gm_run_options o;
        gm_run_options_init(&o);
        o.streams = streams, o.iterations = quick() ? 4 : 20;
        if (gm_run_dynamic(m, &o, &s, &err) != GM_OK) fail_msg("dynamic: %s", err.message);
        if (s.corrupted_reads) fail_msg("dynamic on %u streams: %s", streams, s.first_corruption);
        gm_model_free(m);
    }
}

/* What a static run reports of itself: each region's bytes as the plan sized it, the device
 * peak (at least the regions), events recorded for every cross-stream wait. */
static void test_static_stats(void **state)
{
    (void)state;
    gm_model *m = NULL;
    gm_error err;
    if (gm_model_read_json(k_diamond, strlen(k_diamond), "d.json", &m, &err) != GM_OK) fail_msg("%s", err.message);
    gm_run_assign_streams(m, 2);
    gm_plan *p = NULL;
    if (gm_plan_build(m, NULL, &p, &err) != GM_OK) fail_msg("plan: %s", err.message);
    gm_run_options o;
    gm_run_options_init(&o);
    o.streams = 2, o.iterations = 2;
    gm_run_stats s;
    if (gm_run_static(m, p, &o, &s, &err) != GM_OK) fail_msg("run: %s", err.message);
    uint64_t sum = 0;
    for (int r = 0; r < GM_PLAN_R_DYNAMIC; r++)
        for (int mt = 0; mt < GM_MEM_COUNT; mt++) {
            assert_int_equal(s.region_bytes[r][mt], p->region_bytes[r][mt] > 0 ? (uint64_t)p->region_bytes[r][mt] : 0);
            sum += s.region_bytes[r][mt];
        }
    assert_true(sum > 0);
    assert_int_equal(s.device_bytes, sum);
    assert_true(s.device_peak_bytes >= s.device_bytes);
    assert_true(s.events > 0);
    assert_true(s.events_recorded >= s.events); /* every wait is for a recorded event */
    assert_int_equal(s.copies[GM_COPY_H2D] + s.copies[GM_COPY_D2H] + s.copies[GM_COPY_P2P], 0);
    assert_false(s.dynamic);
    gm_plan_free(p);
    gm_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_embedded_example_clean),
        cmocka_unit_test(test_shared_models_clean),
        cmocka_unit_test(test_bad_plan_is_caught),
        cmocka_unit_test(test_loop_stacked_output),
        cmocka_unit_test(test_while_cond_before_body),
        cmocka_unit_test(test_static_stats),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
