/*
 * test_limits.c — inputs at the edge: subgraphs nested 20,000 deep go through the passes, the
 * planner and the verifier without recursion eating the stack, and near-linearly.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "graphmem/io.h"
#include "graphmem/passes.h"
#include "graphmem/plan.h"

/* x -> call0{ d0 -> call1{ d1 -> ... { d(D-1) -> relu } } } -> out: one value threaded through
 * D nested PartitionedCall bodies. */
static char *deep_model(int depth)
{
    size_t cap = (size_t)depth * 700 + 1024, len = 0;
    char *t = malloc(cap);
    assert_non_null(t);
#define PUT(...) len += (size_t)snprintf(t + len, cap - len, __VA_ARGS__)
    PUT("{\"graphmem\":1,\"name\":\"deep\",\"graphs\":[{\"name\":\"root\",\"nodes\":["
        "{\"name\":\"x\",\"type\":\"Data\",\"attrs\":{\"index\":0},\"outputs\":[{\"dtype\":\"float32\",\"shape\":[4]}]},"
        "{\"name\":\"call0\",\"type\":\"PartitionedCall\",\"inputs\":[\"x:0\"],\"subgraphs\":[\"g0\"],"
        "\"outputs\":[{\"dtype\":\"float32\",\"shape\":[4]}]},"
        "{\"name\":\"out\",\"type\":\"NetOutput\",\"inputs\":[\"call0:0\"]}]}");
    for (int i = 0; i < depth; i++) {
        PUT(",{\"name\":\"g%d\",\"parent\":\"call%d\",\"nodes\":[{\"name\":\"d%d\",\"type\":\"Data\",\"attrs\":"
            "{\"_parent_node_index\":0},\"outputs\":[{\"dtype\":\"float32\",\"shape\":[4]}]},",
            i, i, i);
        if (i + 1 < depth)
            PUT("{\"name\":\"call%d\",\"type\":\"PartitionedCall\",\"inputs\":[\"d%d:0\"],\"subgraphs\":[\"g%d\"],"
                "\"outputs\":[{\"dtype\":\"float32\",\"shape\":[4]}]},{\"name\":\"o%d\",\"type\":\"NetOutput\","
                "\"inputs\":[\"call%d:0\"],\"input_descs\":[{\"attrs\":{\"_parent_node_index\":0}}]}]}",
                i + 1, i, i + 1, i, i + 1);
        else
            PUT("{\"name\":\"r\",\"type\":\"Relu\",\"inputs\":[\"d%d:0\"],\"outputs\":[{\"dtype\":\"float32\",\"shape\":"
                "[4]}]},{\"name\":\"o%d\",\"type\":\"NetOutput\",\"inputs\":[\"r:0\"],\"input_descs\":[{\"attrs\":"
                "{\"_parent_node_index\":0}}]}]}",
                i, i);
    }
    PUT("]}");
#undef PUT
    return t;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* A progress line on stderr: the stage just done and its time (a stage that went quadratic
 * shows here; at 20,000 levels every stage takes under a second under the sanitizers). */
static double stage_done(const char *stage, double t0)
{
    double t = now_s();
    fprintf(stderr, "test_limits: 20,000-deep nesting: %-8s done (%.2f s)\n", stage, t - t0);
    return t;
}

static void test_deep_nesting(void **state)
{
    (void)state;
    double t = now_s();
    char *text = deep_model(20000);
    gm_model *m = NULL;
    gm_error err;
    if (gm_model_read_json(text, strlen(text), "deep.json", &m, &err) != GM_OK) fail_msg("%s", err.message);
    t = stage_done("read", t);
    gm_pass_report rep = {0};
    gm_pass_set avail = 0;
    if (gm_passes_run(m, GM_PASS_SET_ALL, &rep, &avail, &err) != GM_OK) fail_msg("%s", err.message);
    gm_pass_report_free(&rep);
    t = stage_done("passes", t);
    gm_plan *p = NULL;
    if (gm_plan_build(m, NULL, &p, &err) != GM_OK) fail_msg("%s", err.message); /* verifies the plan too */
    assert_int_equal(p->unresolved, 0);
    assert_non_null(p->text);
    stage_done("plan", t);
    gm_plan_free(p);
    gm_model_free(m);
    free(text);
}

/* A graph nested inside itself is refused with a message, not a loop or a crash. */
static void test_nesting_cycle(void **state)
{
    (void)state;
    static const char k_cycle[] =
        "{\"graphmem\":1,\"name\":\"c\",\"graphs\":[{\"name\":\"root\",\"nodes\":[{\"name\":\"x\",\"type\":\"Data\","
        "\"attrs\":{\"index\":0},\"outputs\":[{\"dtype\":\"float32\",\"shape\":[4]}]}]},"
        "{\"name\":\"a\",\"parent\":\"cb\",\"nodes\":[{\"name\":\"ca\",\"type\":\"PartitionedCall\",\"subgraphs\":[\"b\"]}]},"
        "{\"name\":\"b\",\"parent\":\"ca\",\"nodes\":[{\"name\":\"cb\",\"type\":\"PartitionedCall\",\"subgraphs\":[\"a\"]}]}]}";
    gm_model *m = NULL;
    gm_error err;
    assert_int_equal(gm_model_read_json(k_cycle, strlen(k_cycle), "cycle.json", &m, &err), GM_ERR_INPUT);
    assert_null(m);
}

/* Sizes near 2^63 are refused with a message, never wrapped: one huge tensor, and tensors that
 * are each fine but together exceed what one region can address. */
static void test_huge_sizes(void **state)
{
    (void)state;
    static const char *const models[] = {
        "{\"graphmem\":1,\"name\":\"h\",\"graphs\":[{\"name\":\"root\",\"nodes\":["
        "{\"name\":\"x\",\"type\":\"Data\",\"attrs\":{\"index\":0},\"outputs\":[{\"dtype\":\"float32\","
        "\"shape\":[1],\"size\":9223372036854775807}]},"
        "{\"name\":\"o\",\"type\":\"NetOutput\",\"inputs\":[\"x:0\"]}]}]}",
        "{\"graphmem\":1,\"name\":\"h\",\"graphs\":[{\"name\":\"root\",\"nodes\":["
        "{\"name\":\"x\",\"type\":\"Data\",\"attrs\":{\"index\":0},\"outputs\":[{\"dtype\":\"float32\",\"shape\":[1]}]},"
        "{\"name\":\"a\",\"type\":\"Relu\",\"inputs\":[\"x:0\"],\"outputs\":[{\"dtype\":\"float32\",\"shape\":[1],"
        "\"size\":3458764513820540928}]},"
        "{\"name\":\"b\",\"type\":\"Relu\",\"inputs\":[\"x:0\"],\"outputs\":[{\"dtype\":\"float32\",\"shape\":[1],"
        "\"size\":3458764513820540928}]},"
        "{\"name\":\"c\",\"type\":\"Add\",\"inputs\":[\"a:0\",\"b:0\"],\"outputs\":[{\"dtype\":\"float32\","
        "\"shape\":[1]}]},"
        "{\"name\":\"o\",\"type\":\"NetOutput\",\"inputs\":[\"c:0\"]}]}]}",
    };
    for (size_t i = 0; i < 2; i++) {
        gm_model *m = NULL;
        gm_error err;
        if (gm_model_read_json(models[i], strlen(models[i]), "huge.json", &m, &err) != GM_OK) continue; /* refused early: fine */
        gm_plan *p = NULL;
        assert_int_equal(gm_plan_build(m, NULL, &p, &err), GM_ERR_INPUT);
        assert_null(p);
        assert_non_null(strstr(err.message, "too large to plan"));
        gm_model_free(m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_deep_nesting), cmocka_unit_test(test_nesting_cycle),
                                       cmocka_unit_test(test_huge_sizes)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
