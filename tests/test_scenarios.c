/*
 * test_scenarios.c — runs every JSON file in tests/scenarios (docs/scenario-format.md), checks its
 * expectations, then tests the harness itself (unknown keys, types, each kind of expectation)
 * with inline scenarios and a fake pass run that edits the graph, so that a harness bug cannot
 * make the scenario suite pass vacuously.
 *
 * All scenario files run even when some fail; each failure is printed with its file, scenario
 * name, the expectation and what was found, and the test fails at the end with the count.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>


#include "scenario_check.c"

/* ---- the scenario files ------------------------------------------------------------------ */




static void test_scenario_files(void **state)
{
    (void)state;
    size_t n = 0;
    char **names = scn_list_files(GM_SCENARIO_DIR, "", &n);
    if (n == 0) fail_msg("no scenario files in %s", GM_SCENARIO_DIR);
    size_t failed = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = 0;
        char *text = scn_slurp(GM_SCENARIO_DIR, names[i], &len);
        scn_buf out = {0};
        size_t f;
        if (!text) {
            scn_buf_printf(&out, "FAIL %s: cannot read the file\n", names[i]);
            f = 1;
        } else {
            f = scn_check_text(names[i], text, len, scn_run_real, NULL, &out);
        }
        if (f) failed++;
        fputs(scn_buf_str(&out), stderr); /* failures, and with GM_SCENARIO_VERBOSE the passes */
        scn_buf_free(&out);
        free(text);
    }
    scn_free_list(names, n);
    print_message("scenarios: %zu run, %zu passed, %zu failed\n", n, n - failed, failed);
    if (failed) fail_msg("%zu of %zu scenarios failed (details above)", failed, n);
}

/* ---- the harness's own tests ------------------------------------------------------------- */

/* A fake pass run: applies a list of edits the way a pass would, then re-sorts. */
typedef struct fake_edit {
    char kind; /* 'b' insert before, 'a' insert after, 's' mark _skip_rw_conflict */
    const char *node;
    size_t idx;
    const char *name;
} fake_edit;

typedef struct fake_run {
    const fake_edit *edits;
    size_t n;
    size_t lint;
} fake_run;

static gm_status run_fake(gm_model *m, gm_pass_set set, gm_pass_report *rep, gm_pass_set *available,
                          gm_error *err, void *ctx)
{
    (void)set;
    const fake_run *f = ctx;
    memset(rep, 0, sizeof *rep);
    *available = GM_PASS_SET_ALL;
    for (size_t i = 0; f && i < f->n; i++) {
        const fake_edit *e = &f->edits[i];
        gm_node *n = gm_model_find_node(m, e->node);
        assert_non_null(n);
        if (e->kind == 'b')
            assert_non_null(gm_edit_insert_before(n, e->idx, e->name, "Identity", err));
        else if (e->kind == 'a')
            assert_non_null(gm_edit_insert_after(n, e->idx, e->name, "Identity", err));
        else
            assert_int_equal(gm_attr_set_bool(gm_node_attrs(n), "_skip_rw_conflict", true), GM_OK);
    }
    /* The fake's lint findings are all GraphLint's W18888. */
    size_t n_lint = f ? f->lint : 0;
    rep->warnings = n_lint ? calloc(n_lint, sizeof *rep->warnings) : NULL;
    for (size_t i = 0; i < n_lint; i++) {
        strcpy(rep->warnings[i].code, "W18888");
        rep->warnings[i].message = strdup("fake warning");
    }
    rep->n_warnings = rep->cap_warnings = n_lint;
    return gm_model_toposort(m, err);
}

/* x -> r -> {s, t} -> out: r:0 has two consumers, x:0 one. */
#define SMALL_GRAPH                                                                            \
    "{\"graphmem\":1,\"graphs\":[{\"name\":\"root\",\"nodes\":["                              \
    "{\"name\":\"x\",\"type\":\"Data\",\"attrs\":{\"index\":0},"                               \
    "\"outputs\":[{\"dtype\":\"float32\",\"shape\":[4]}]},"                                    \
    "{\"name\":\"r\",\"type\":\"Relu\",\"inputs\":[\"x:0\"],"                                  \
    "\"outputs\":[{\"dtype\":\"float32\",\"shape\":[4]}]},"                                    \
    "{\"name\":\"s\",\"type\":\"Sigmoid\",\"inputs\":[\"r:0\"],"                               \
    "\"outputs\":[{\"dtype\":\"float32\",\"shape\":[4]}]},"                                    \
    "{\"name\":\"t\",\"type\":\"Tanh\",\"inputs\":[\"r:0\"],"                                  \
    "\"outputs\":[{\"dtype\":\"float32\",\"shape\":[4]}]},"                                    \
    "{\"name\":\"out\",\"type\":\"NetOutput\",\"inputs\":[\"s:0\",\"t:0\"]}]}]}"

/* Checks an inline scenario; returns the failure count and keeps the report in *out. */
static size_t check(const char *text, const fake_run *f, scn_buf *out)
{
    out->len = 0;
    if (out->s) out->s[0] = '\0';
    return scn_check_text("inline.json", text, strlen(text), run_fake, (void *)f, out);
}

static void expect_report(const scn_buf *out, const char *needle)
{
    if (!strstr(scn_buf_str(out), needle))
        fail_msg("report lacks \"%s\":\n%s", needle, scn_buf_str(out));
}

static void test_harness_rejects_unknown_keys(void **state)
{
    (void)state;
    scn_buf out = {0};
    assert_int_equal(check("{\"scenario\":\"k\",\"run\":\"all\",\"graph\":" SMALL_GRAPH
                           ",\"expect\":{\"inserted\":0},\"expectt\":{}}", NULL, &out), 1);
    expect_report(&out, "inline.json");
    expect_report(&out, "unknown key \"expectt\"");
    assert_int_equal(check("{\"scenario\":\"k\",\"run\":\"all\",\"graph\":" SMALL_GRAPH
                           ",\"expect\":{\"copy_befor\":[\"s:0\"]}}", NULL, &out), 1);
    expect_report(&out, "unknown key \"copy_befor\"");
    assert_int_equal(check("{\"scenario\":\"k\",\"run\":\"all\",\"graph\":" SMALL_GRAPH
                           ",\"expect\":{\"inserted\":0,\"inserted\":1}}", NULL, &out), 1);
    expect_report(&out, "appears twice");
    scn_buf_free(&out);
}

static void test_harness_checks_types(void **state)
{
    (void)state;
    scn_buf out = {0};
    /* Each of these breaks one rule of the file format. */
    static const char *const bad[] = {
        "{\"scenario\":\"t\",\"run\":\"everything\",\"graph\":" SMALL_GRAPH ",\"expect\":{\"inserted\":0}}",
        "{\"scenario\":\"t\",\"run\":[\"no_such_pass\"],\"graph\":" SMALL_GRAPH ",\"expect\":{\"inserted\":0}}",
        "{\"scenario\":\"t\",\"run\":\"all\",\"graph\":" SMALL_GRAPH ",\"expect\":{\"inserted\":\"0\"}}",
        "{\"scenario\":\"t\",\"run\":\"all\",\"graph\":" SMALL_GRAPH ",\"expect\":{\"inserted\":-1}}",
        "{\"scenario\":\"t\",\"run\":\"all\",\"graph\":" SMALL_GRAPH ",\"expect\":{\"copy_before\":[\"s\"]}}",
        "{\"scenario\":\"t\",\"run\":\"all\",\"graph\":" SMALL_GRAPH ",\"expect\":{\"copy_after\":\"s:0\"}}",
        "{\"scenario\":\"t\",\"run\":\"all\",\"graph\":" SMALL_GRAPH ",\"expect\":{\"inserted_in\":{\"root\":true}}}",
        "{\"scenario\":\"t\",\"run\":\"all\",\"graph\":" SMALL_GRAPH ",\"expect\":{\"same_offset\":[[\"s:0\"]]}}",
        "{\"scenario\":\"t\",\"run\":\"all\",\"graph\":" SMALL_GRAPH ",\"expect\":{\"lint\":[1]}}",
        "{\"scenario\":\"t\",\"run\":\"all\",\"graph\":" SMALL_GRAPH ",\"expect\":{\"error\":\"x\",\"inserted\":0}}",
        "{\"scenario\":\"t\",\"run\":\"all\",\"graph\":" SMALL_GRAPH ",\"expect\":{}}",
        "{\"scenario\":\"t\",\"run\":\"all\",\"options\":{\"a\":1},\"graph\":" SMALL_GRAPH ",\"expect\":{\"inserted\":0}}",
        "{\"scenario\":\"t\",\"run\":\"all\",\"graph\":[],\"expect\":{\"inserted\":0}}",
        "{\"run\":\"all\",\"graph\":" SMALL_GRAPH ",\"expect\":{\"inserted\":0}}",
        "{\"scenario\":\"t\",\"graph\":" SMALL_GRAPH ",\"expect\":{\"inserted\":0}}",
        "{\"scenario\":\"t\",\"run\":\"all\",\"graph\":" SMALL_GRAPH ",\"expect\":{\"inserted\":0}",
        "[]",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        if (check(bad[i], NULL, &out) == 0) fail_msg("bad scenario %zu was accepted: %s", i, bad[i]);
    }
    check(bad[1], NULL, &out);
    expect_report(&out, "unknown pass \"no_such_pass\"");
    scn_buf_free(&out);
}

static void test_harness_error_expectation(void **state)
{
    (void)state;
    scn_buf out = {0};
    /* A valid graph cannot satisfy an error expectation. */
    assert_int_equal(check("{\"scenario\":\"e\",\"run\":\"all\",\"graph\":" SMALL_GRAPH
                           ",\"expect\":{\"error\":\"cycle\"}}", NULL, &out), 1);
    expect_report(&out, "succeeded");
    /* The word is matched case-insensitively in the reader's message. */
    static const char *const v2 =
        "{\"scenario\":\"e\",\"run\":\"all\",\"graph\":{\"graphmem\":2,\"graphs\":[{\"name\":\"g\","
        "\"nodes\":[]}]},\"expect\":{\"error\":\"%s\"}}";
    char text[512];
    snprintf(text, sizeof text, v2, "VERSION");
    assert_int_equal(check(text, NULL, &out), 0);
    snprintf(text, sizeof text, v2, "zebra");
    assert_int_equal(check(text, NULL, &out), 1);
    expect_report(&out, "without that word");
    scn_buf_free(&out);
}

static void test_harness_plan_facts(void **state)
{
    (void)state;
    /* s and t both reach the NetOutput, so they live to the end and cannot share: the planner
     * lays them one after the other (s at 0, t at 512 in the zero-copy region). */
    scn_buf out = {0};
    assert_int_equal(check("{\"scenario\":\"p\",\"about\":\"plan\",\"run\":[],\"graph\":" SMALL_GRAPH
                           ",\"expect\":{\"same_offset\":[[\"s:0\",\"t:0\"]],\"follows\":[[\"s:0\",\"t:0\"]]}}",
                           NULL, &out), 2);
    expect_report(&out, "expect.same_offset [s:0, t:0]");
    expect_report(&out, "expect.follows [s:0, t:0]");
    expect_report(&out, "scenario \"p\": plan");
    scn_buf_free(&out);
    assert_int_equal(check("{\"scenario\":\"p\",\"run\":[],\"graph\":" SMALL_GRAPH
                           ",\"expect\":{\"follows\":[[\"t:0\",\"s:0\"]]}}",
                           NULL, &out), 0);
    scn_buf_free(&out);
}

static const char k_copy_scn[] =
    "{\"scenario\":\"c\",\"run\":[\"rw_conflict\"],\"graph\":" SMALL_GRAPH ",\"expect\":{"
    "\"copy_before\":[\"s:0\"],\"no_copy_before\":[\"t:0\"],\"copy_after\":[\"x:0\"],"
    "\"inserted\":2,\"inserted_in\":{\"root\":2}}}";

static void test_harness_copy_expectations(void **state)
{
    (void)state;
    scn_buf out = {0};
    static const fake_edit edits[] = {
        {'b', "s", 0, "s_copy"},
        {'a', "x", 0, "x_copy"},
    };
    fake_run f = {edits, 2, 0};
    if (check(k_copy_scn, &f, &out) != 0) fail_msg("%s", scn_buf_str(&out));

    /* Nothing inserted: copy_before, copy_after, inserted and inserted_in each fail. */
    assert_int_equal(check(k_copy_scn, NULL, &out), 4);
    expect_report(&out, "expect.copy_before \"s:0\"");
    expect_report(&out, "expect.copy_after \"x:0\"");

    /* A copy where none is expected fails no_copy_before, and the wrong input fails copy_before. */
    static const fake_edit wrong[] = {
        {'b', "t", 0, "t_copy"},
        {'a', "x", 0, "x_copy"},
    };
    f.edits = wrong;
    assert_int_equal(check(k_copy_scn, &f, &out), 2);
    expect_report(&out, "expect.no_copy_before \"t:0\"");
    expect_report(&out, "inserted Identity 't_copy'");

    /* Expectations naming nodes or inputs the graph does not have are failures, not passes. */
    assert_int_equal(check("{\"scenario\":\"c\",\"run\":[],\"graph\":" SMALL_GRAPH ",\"expect\":{"
                           "\"no_copy_before\":[\"nope:0\",\"s:3\"],\"copy_after\":[\"out:0\"],"
                           "\"inserted_in\":{\"nograph\":0}}}", NULL, &out), 4);
    scn_buf_free(&out);
}

static void test_harness_marks_and_lint(void **state)
{
    (void)state;
    scn_buf out = {0};
    static const fake_edit edits[] = {{'s', "r", 0, NULL}};
    fake_run f = {edits, 1, 1};
    assert_int_equal(check("{\"scenario\":\"m\",\"run\":\"all\",\"graph\":" SMALL_GRAPH ",\"expect\":{"
                           "\"skip_rw_conflict\":[\"r\"],\"lint\":[\"W18888\"]}}", &f, &out), 0);
    /* An unlisted mark and a wrong warning count both fail. */
    assert_int_equal(check("{\"scenario\":\"m\",\"run\":\"all\",\"graph\":" SMALL_GRAPH ",\"expect\":{"
                           "\"skip_rw_conflict\":[],\"lint\":[]}}", &f, &out), 2);
    expect_report(&out, "'r' carries _skip_rw_conflict=true but is not listed");
    scn_buf_free(&out);
}

/* Scenario options are applied on top of the graph's (checked through the model they reach). */
static gm_status run_check_option(gm_model *m, gm_pass_set set, gm_pass_report *rep,
                                  gm_pass_set *available, gm_error *err, void *ctx)
{
    (void)set;
    (void)err;
    (void)ctx;
    memset(rep, 0, sizeof *rep);
    *available = GM_PASS_SET_ALL;
    const char *v = gm_model_option(m, "ge.featureBaseRefreshable");
    assert_non_null(v);
    assert_string_equal(v, "1");
    return GM_OK;
}

static void test_harness_options_override(void **state)
{
    (void)state;
    scn_buf out = {0};
    const char *text =
        "{\"scenario\":\"o\",\"options\":{\"ge.featureBaseRefreshable\":\"1\"},\"run\":\"all\","
        "\"graph\":{\"graphmem\":1,\"options\":{\"ge.featureBaseRefreshable\":\"0\"},\"graphs\":"
        "[{\"name\":\"g\",\"nodes\":[{\"name\":\"x\",\"type\":\"Data\",\"attrs\":{\"index\":0},"
        "\"outputs\":[{\"dtype\":\"float32\",\"shape\":[4]}]}]}]},\"expect\":{\"inserted\":0}}";
    out.len = 0;
    assert_int_equal(scn_check_text("inline.json", text, strlen(text), run_check_option, NULL, &out), 0);
    scn_buf_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_harness_rejects_unknown_keys),
        cmocka_unit_test(test_harness_checks_types),
        cmocka_unit_test(test_harness_error_expectation),
        cmocka_unit_test(test_harness_plan_facts),
        cmocka_unit_test(test_harness_copy_expectations),
        cmocka_unit_test(test_harness_marks_and_lint),
        cmocka_unit_test(test_harness_options_override),
        cmocka_unit_test(test_scenario_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
