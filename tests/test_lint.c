/*
 * test_lint.c — GraphLint::Verify (W18888, reference §4.2) and the reachability queries it
 * stands on (src/analysis/reach.c).
 *
 *  - every tests/scenarios/lint_*.json runs through a local runner that calls the lint pass
 *    directly (so they are checked whether or not pipeline.c registers it). None may pass
 *    vacuously: a file expecting warnings must fail when no pass runs, and a file expecting
 *    none must produce warnings under one of the lint's test mutations (every pair unordered,
 *    or every input a writer), which shows it depends on the order check or on the types;
 *  - what the format cannot say (message text, which pair is named, Verify on a subgraph, that
 *    the graph is untouched, allocation failures) is asserted here;
 *  - reachability is compared with a brute-force transitive closure on random DAGs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "scenario_check.c"
#include "scenario_cmocka.h"

#include "analysis/reach.h"
#include "conflict/lint.h"
#include "graphmem/log.h"
#include "ir/ir.h"
#include "util/alloc.h"

/* ---- running the pass -------------------------------------------------------------------- */

/* ctx: NULL = the pass as pipeline.c runs it; else a pointer to gm_lint_verify flags. */
static gm_status run_lint_local(gm_model *m, gm_pass_set set, gm_pass_report *rep, gm_pass_set *available,
                                gm_error *err, void *ctx)
{
    memset(rep, 0, sizeof *rep);
    *available = 1u << GM_PASS_LINT;
    if (set & (1u << GM_PASS_LINT)) {
        gm_pass_ctx c = {m, rep, GM_PASS_LINT, err, NULL};
        gm_status st;
        if (ctx) {
            st = gm_lint_verify(&c, gm_model_root(m), *(const unsigned *)ctx, NULL);
            if (st == GM_ERR_PROBLEM) st = GM_OK;
        } else {
            st = gm_pass_lint(&c);
        }
        if (st != GM_OK) return st;
        rep->ran[GM_PASS_LINT] = 1;
    }
    return gm_model_toposort(m, err);
}

/* ---- the scenario files ------------------------------------------------------------------ */

/* Does the file expect warnings ("lint" non-empty)? */
static bool expects_warnings(const char *text, size_t len)
{
    cJSON *root = cJSON_ParseWithLength(text, len);
    assert_non_null(root);
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "expect"), "lint");
    assert_true(cJSON_IsArray(l));
    bool any = cJSON_GetArraySize(l) > 0;
    cJSON_Delete(root);
    return any;
}

/* Scenarios that pin an absence no mutation can turn into a warning: their point is that
 * nothing is checked at all. */
static const char *const k_absence_only[] = {
    "lint_single_consumer.json", /* one consumer per output: never a pair to check */
};

static void test_lint_scenarios(void **state)
{
    (void)state;
    size_t n = 0, failed = 0, vacuous = 0;
    char **names = scn_list_files(GM_SCENARIO_DIR, "lint_", &n);
    if (n < 24) fail_msg("expected the lint_*.json scenarios in %s, found %zu", GM_SCENARIO_DIR, n);
    for (size_t i = 0; i < n; i++) {
        size_t len = 0;
        char *text = slurp_scenario(names[i], &len);
        scn_buf out = {0};
        if (scn_check_text(names[i], text, len, run_lint_local, NULL, &out)) failed++;
        fputs(scn_buf_str(&out), stderr);
        scn_buf_free(&out);

        bool exempt = false;
        for (size_t k = 0; k < sizeof k_absence_only / sizeof *k_absence_only; k++)
            exempt |= strcmp(names[i], k_absence_only[k]) == 0;
        bool can_fail;
        scn_buf tmp = {0};
        if (expects_warnings(text, len)) {
            can_fail = scn_check_text(names[i], text, len, run_nothing, NULL, &tmp) > 0;
        } else {
            static const unsigned mutations[] = {GM_LINT_TEST_UNORDERED, GM_LINT_TEST_ALL_WRITABLE};
            can_fail = false;
            for (size_t k = 0; k < 2 && !can_fail; k++)
                can_fail = scn_check_text(names[i], text, len, run_lint_local, (void *)&mutations[k], &tmp) > 0;
        }
        scn_buf_free(&tmp);
        if (!can_fail && !exempt) {
            fprintf(stderr, "VACUOUS %s: holds even without the behaviour it pins\n", names[i]);
            vacuous++;
        }
        if (can_fail && exempt) {
            fprintf(stderr, "STALE EXEMPTION %s: a mutation does break it; drop it from k_absence_only\n", names[i]);
            vacuous++;
        }
        free(text);
    }
    scn_free_list(names, n);
    print_message("lint scenarios: %zu run, %zu failed, %zu vacuous\n", n, failed, vacuous);
    if (failed || vacuous) fail_msg("%zu of %zu lint scenarios failed, %zu vacuous", failed, n, vacuous);
    (void)scn_run_real; /* the real pipeline runs them in test_scenarios */
}

/* ---- helpers for the direct tests -------------------------------------------------------- */

/* Runs the pass; it must succeed whatever it finds. */
static void lint_ok(gm_model *m, gm_pass_report *rep)
{
    gm_error err;
    gm_error_clear(&err);
    gm_pass_ctx c = {m, rep, GM_PASS_LINT, &err, NULL};
    gm_status st = gm_pass_lint(&c);
    if (st != GM_OK) fail_msg("lint: %s: %s", gm_status_name(st), err.message);
}

#define MSG_TAIL ". Please check graph make it valid, sometimes it may cause problem (precision problem)."

static void assert_warning(const gm_pass_report *rep, size_t i, const char *want)
{
    if (i >= rep->n_warnings) fail_msg("warning %zu missing (%zu reported)", i, rep->n_warnings);
    assert_string_equal(rep->warnings[i].code, "W18888");
    assert_string_equal(rep->warnings[i].message, want);
}

#define OUT4 "'outputs':[{'dtype':'float32','shape':[4]}]"

/* ---- messages ---------------------------------------------------------------------------- */

static void test_messages_read_and_write(void **state)
{
    (void)state;
    gm_pass_report rep = {0};
    gm_model *m = load_scenario("lint_read_write_no_control.json");
    lint_ok(m, &rep);
    assert_int_equal(rep.n_warnings, 1);
    assert_int_equal(rep.n_warnings, 1);
    assert_warning(&rep, 0, "There is no control relation between write node[assign] and read node[relu]" MSG_TAIL);
    gm_pass_report_free(&rep);
    gm_model_free(m);

    m = load_scenario("lint_two_writers.json");
    lint_ok(m, &rep);
    assert_int_equal(rep.n_warnings, 1);
    assert_warning(&rep, 0,
                   "There is no control relation between write node[assign1] and other write node[assign2]" MSG_TAIL);
    gm_pass_report_free(&rep);
    gm_model_free(m);
}

/* One warning per output: its first violation (writers before readers, consumer order); the
 * outputs in GetAllNodes order, so the root's come before a subgraph's. */
static void test_first_violation_per_output(void **state)
{
    (void)state;
    gm_pass_report rep = {0};
    gm_model *m = load_scenario("lint_one_per_output.json");
    lint_ok(m, &rep);
    assert_int_equal(rep.n_warnings, 2);
    assert_warning(&rep, 0, "There is no control relation between write node[assign] and read node[r1]" MSG_TAIL);
    assert_warning(&rep, 1,
                   "There is no control relation between write node[assign2] and other write node[assign3]" MSG_TAIL);
    gm_pass_report_free(&rep);
    gm_model_free(m);

    m = load_scenario("lint_root_and_subgraph.json");
    lint_ok(m, &rep);
    assert_int_equal(rep.n_warnings, 2);
    assert_warning(&rep, 0, "There is no control relation between write node[assign] and read node[relu]" MSG_TAIL);
    assert_warning(&rep, 1, "There is no control relation between write node[f_assign] and read node[f_relu]" MSG_TAIL);
    gm_pass_report_free(&rep);
    gm_model_free(m);

    /* The writer propagated out of two nested subgraphs is named by its root node. */
    m = load_scenario("lint_nested_refresh.json");
    lint_ok(m, &rep);
    assert_int_equal(rep.n_warnings, 1);
    assert_warning(&rep, 0, "There is no control relation between write node[outer] and read node[relu]" MSG_TAIL);
    gm_pass_report_free(&rep);
    gm_model_free(m);
}

/* A writer is checked against every other consumer, wherever it stands in the list: a writer
 * listed after an ordered reader, with an unordered reader after it. */
static void test_writer_in_the_middle(void **state)
{
    (void)state;
    gm_model *m = load_q("{'graphmem':1,'graphs':[{'name':'root','nodes':["
                         "{'name':'var','type':'Variable'," OUT4 "},"
                         "{'name':'c','type':'Const'," OUT4 "},"
                         "{'name':'r0','type':'Relu','inputs':['var:0']," OUT4 "},"
                         "{'name':'w','type':'Assign','inputs':['var:0','c:0'],'control_inputs':['r0']," OUT4 "},"
                         "{'name':'r1','type':'Relu','inputs':['var:0']," OUT4 "},"
                         "{'name':'out','type':'NetOutput','inputs':['w:0','r1:0']}]}]}");
    gm_pass_report rep = {0};
    lint_ok(m, &rep);
    assert_int_equal(rep.n_warnings, 1);
    assert_warning(&rep, 0, "There is no control relation between write node[w] and read node[r1]" MSG_TAIL);
    gm_pass_report_free(&rep);
    gm_model_free(m);
}

/* GE's Cmo rule looks at the original type: a FrameworkOp wrapping a Cmo is ignorable too,
 * one wrapping anything else keeps the name rule (here: input x = output x, a writer). */
static void test_cmo_wrapped_in_framework_op(void **state)
{
    (void)state;
    static const char *const orig[] = {"Cmo", "Other"};
    for (size_t k = 0; k < 2; k++) {
        char text[2048];
        snprintf(text, sizeof text,
                 "{'graphmem':1,'graphs':[{'name':'root','nodes':["
                 "{'name':'var','type':'Variable'," OUT4 "},"
                 "{'name':'c','type':'Const'," OUT4 "},"
                 "{'name':'fw','type':'FrameworkOp','inputs':['var:0'],'input_names':['x'],'output_names':['x'],"
                 "'attrs':{'original_type':'%s'}," OUT4 "},"
                 "{'name':'assign','type':'Assign','inputs':['var:0','c:0']," OUT4 "},"
                 "{'name':'out','type':'NetOutput','inputs':['fw:0','assign:0']}]}]}",
                 orig[k]);
        gm_model *m = load_q(text);
        gm_pass_report rep = {0};
        lint_ok(m, &rep);
        assert_int_equal(rep.n_warnings, k);
        gm_pass_report_free(&rep);
        gm_model_free(m);
    }
}

/* ---- Verify's contract ------------------------------------------------------------------- */

static void test_verify_on_subgraph_fails(void **state)
{
    (void)state;
    gm_model *m = load_scenario("lint_root_and_subgraph.json");
    gm_pass_report rep = {0};
    gm_error err;
    gm_error_clear(&err);
    gm_pass_ctx c = {m, &rep, GM_PASS_LINT, &err, NULL};
    gm_lint_stats v = {.violations = 99};
    /* GE: Verify on a subgraph is not supported, a failure with nothing checked. */
    assert_int_equal(gm_lint_verify(&c, gm_model_find_graph(m, "f"), 0, &v), GM_ERR_INPUT);
    assert_non_null(strstr(err.message, "subgraph"));
    assert_int_equal(v.violations, 0);
    assert_int_equal(rep.n_warnings, 0);
    /* On the root it fails with the problems found, each reported. */
    gm_error_clear(&err);
    assert_int_equal(gm_lint_verify(&c, gm_model_root(m), 0, &v), GM_ERR_PROBLEM);
    assert_int_equal(v.violations, 2);
    assert_int_equal(v.outputs_checked, 2);
    assert_int_equal(v.pairs, 2);
    assert_int_equal(rep.n_warnings, 2);
    assert_non_null(strstr(err.message, "2 tensors"));
    gm_pass_report_free(&rep);
    /* The pass ignores the result, as GE's caller does: GM_OK and a clean error. */
    gm_error_clear(&err);
    assert_int_equal(gm_pass_lint(&c), GM_OK);
    assert_int_equal(err.code, GM_OK);
    assert_int_equal(rep.n_warnings, 2);
    gm_pass_report_free(&rep);
    /* A clean graph verifies. */
    gm_model_free(m);
    m = load_scenario("lint_subgraph_ok.json");
    c.m = m;
    assert_int_equal(gm_lint_verify(&c, gm_model_root(m), 0, &v), GM_OK);
    assert_int_equal(v.violations, 0);
    /* Root: the If (writer) against relu and neg; then-branch: t_assign against t_relu. */
    assert_int_equal(v.outputs_checked, 2);
    assert_int_equal(v.pairs, 3);
    assert_int_equal(v.reach.queries, 3);
    gm_pass_report_free(&rep);
    gm_model_free(m);
}

/* The pass reads the graph only: the JSON written before and after is the same byte for byte. */
static void test_graph_unchanged(void **state)
{
    (void)state;
    static const char *const files[] = {"lint_root_and_subgraph.json", "lint_nested_refresh.json",
                                        "lint_while_ok.json", "lint_one_per_output.json"};
    for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
        gm_model *m = load_scenario(files[f]);
        gm_error err;
        char *before = NULL, *after = NULL;
        size_t lb = 0, la = 0;
        assert_int_equal(gm_model_write_json(m, &before, &lb, &err), GM_OK);
        size_t nodes = gm_model_node_count(m);
        gm_pass_report rep = {0};
        lint_ok(m, &rep);
        assert_true(m->sorted);
        assert_int_equal(gm_model_node_count(m), nodes);
        assert_int_equal(rep.n_nodes, 0);
        assert_int_equal(gm_model_write_json(m, &after, &la, &err), GM_OK);
        assert_int_equal(la, lb);
        assert_memory_equal(before, after, lb);
        gm_free(before);
        gm_free(after);
        gm_pass_report_free(&rep);
        gm_model_free(m);
    }
}

/* Every allocation may fail: the pass returns GM_ERR_NOMEM (never crashes or leaks). */
static void test_alloc_failures(void **state)
{
    (void)state;
    static const char *const files[] = {"lint_root_and_subgraph.json", "lint_nested_refresh.json",
                                        "lint_control_path_reader.json"};
    size_t failures_seen = 0;
    for (size_t f = 0; f < sizeof files / sizeof *files; f++)
        failures_seen += fail_each_allocation(files[f], GM_PASS_LINT, gm_pass_lint);
    assert_true(failures_seen >= 10);
}

/* ---- reachability ------------------------------------------------------------------------ */

static uint32_t rng_next(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

/* Adds a random DAG of n nodes named <prefix><i> to g: node i takes data inputs and control
 * inputs only from nodes j < i (some near i, for long chains; some anywhere), and the nodes are
 * added in a shuffled order so the topological sort has work to do. With `data_parent`, node
 * 0 is a subgraph Data for parent input 0. */
static void random_dag(gm_graph *g, const char *prefix, size_t n, uint32_t *seed, unsigned density,
                       bool data_parent)
{
    size_t *perm = malloc(n * sizeof *perm);
    assert_non_null(perm);
    for (size_t i = 0; i < n; i++) perm[i] = i;
    for (size_t i = n; i > 1; i--) {
        size_t j = rng_next(seed) % i, t = perm[i - 1];
        perm[i - 1] = perm[j];
        perm[j] = t;
    }
    gm_error err;
    for (size_t p = 0; p < n; p++) {
        size_t i = perm[p];
        char name[64], src[64];
        snprintf(name, sizeof name, "%s%zu", prefix, i);
        gm_node *nd = gm_graph_add_node(g, name, (i == 0 && data_parent) ? "Data" : "Op", &err);
        assert_non_null(nd);
        if (i == 0 && data_parent) assert_int_equal(gm_attr_set_int(gm_node_attrs(nd), "_parent_node_index", 0), GM_OK);
        assert_non_null(gm_node_add_output(nd));
        assert_non_null(gm_node_add_output(nd));
        if (i == 0) continue;
        unsigned n_data = rng_next(seed) % (density + 1), n_ctrl = rng_next(seed) % (density + 1);
        for (unsigned e = 0; e < n_data + n_ctrl; e++) {
            size_t j = rng_next(seed) % 4 ? i - 1 - rng_next(seed) % (i < 4 ? i : 4) : rng_next(seed) % i;
            snprintf(src, sizeof src, "%s%zu", prefix, j);
            if (e < n_data)
                assert_int_equal(gm_node_add_input_by_name(nd, src, (int32_t)(rng_next(seed) % 2)), GM_OK);
            else
                assert_int_equal(gm_node_add_control_input_by_name(nd, src), GM_OK);
        }
    }
    free(perm);
}

/* closure[a * n + b]: a reaches b, computed the slow obvious way (reverse topo order, union of
 * the successors' rows). */
static bool *brute_closure(const gm_model *m)
{
    size_t n = gm_model_node_count(m);
    bool *c = calloc(n * n, 1);
    assert_non_null(c);
    for (size_t t = n; t-- > 0;) {
        const gm_node *a = gm_model_node_at(m, t);
        c[t * n + t] = true;
        for (uint32_t k = 0; k < a->n_out; k++)
            for (uint32_t j = 0; j < a->out[k].n_uses; j++) {
                size_t s = (size_t)a->out[k].uses[j].node->topo_id;
                for (size_t b = 0; b < n; b++) c[t * n + b] |= c[s * n + b];
            }
        for (uint32_t j = 0; j < a->ctrl_out.n; j++) {
            size_t s = (size_t)a->ctrl_out.v[j]->topo_id;
            for (size_t b = 0; b < n; b++) c[t * n + b] |= c[s * n + b];
        }
    }
    return c;
}

static void test_reach_matches_closure(void **state)
{
    (void)state;
    gm_reach_stats total = {0};
    uint32_t seed = 12345;
    for (int round = 0; round < 40; round++) {
        gm_model *m = gm_model_new("random");
        gm_error err;
        gm_graph *root = gm_model_add_graph(m, "root", NULL, &err);
        assert_non_null(root);
        unsigned density = 1 + (unsigned)round % 3;
        random_dag(root, "r", 60 + (size_t)round * 3, &seed, density, false);
        /* A subgraph: its own DAG, whose nodes sit between the root's in the model order. */
        gm_node *call = gm_graph_add_node(root, "call", "PartitionedCall", &err);
        assert_non_null(call);
        assert_int_equal(gm_node_add_input_by_name(call, "r5", 0), GM_OK);
        assert_int_equal(gm_node_add_subgraph_by_name(call, "sub"), GM_OK);
        gm_node *after = gm_graph_add_node(root, "after", "Op", &err);
        assert_int_equal(gm_node_add_control_input_by_name(after, "call"), GM_OK);
        assert_int_equal(gm_node_add_control_input_by_name(after, "r3"), GM_OK);
        assert_non_null(gm_model_add_graph(m, "sub", "call", &err));
        random_dag(gm_model_find_graph(m, "sub"), "s", 40, &seed, density, true);
        if (gm_model_finalize(m, &err) != GM_OK) fail_msg("%s", err.message);

        bool *c = brute_closure(m);
        gm_reach *r = NULL;
        assert_int_equal(gm_reach_new(m, &r), GM_OK);
        size_t n = gm_model_node_count(m);
        for (size_t a = 0; a < n; a++)
            for (size_t b = 0; b < n; b++) {
                const gm_node *na = gm_model_node_at(m, a), *nb = gm_model_node_at(m, b);
                bool want = c[a * n + b];
                if (gm_reach_path(r, na, nb) != want)
                    fail_msg("round %d: reach(%s, %s) should be %d", round, na->name, nb->name, want);
                if (gm_reach_connected(r, na, nb) != (want || c[b * n + a]))
                    fail_msg("round %d: connected(%s, %s) wrong", round, na->name, nb->name);
            }
        gm_reach_stats st;
        gm_reach_get_stats(r, &st);
        total.by_label += st.by_label;
        total.searched += st.searched;
        total.visited += st.visited;
        gm_reach_free(r);
        free(c);
        gm_model_free(m);
    }
    /* Every way of answering was exercised, so each of them was checked against the closure. */
    assert_true(total.by_label > 0);
    assert_true(total.searched > 0);
    assert_true(total.visited > 0);
}

/* A long chain (no recursion in the labelling) with a side branch per node: the far end is
 * reached by the labels alone, and the way back is refused without a search. */
static void test_reach_long_chain(void **state)
{
    (void)state;
    enum { N = 100000 };
    gm_model *m = gm_model_new("chain");
    gm_error err;
    gm_graph *g = gm_model_add_graph(m, "root", NULL, &err);
    char name[32], prev[32];
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "c%d", i);
        gm_node *nd = gm_graph_add_node(g, name, "Op", &err);
        assert_non_null(nd);
        assert_non_null(gm_node_add_output(nd));
        if (i) assert_int_equal(gm_node_add_input_by_name(nd, prev, 0), GM_OK);
        if (i % 100 == 0) {
            char side[32];
            snprintf(side, sizeof side, "side%d", i);
            gm_node *s = gm_graph_add_node(g, side, "Op", &err);
            assert_int_equal(gm_node_add_input_by_name(s, name, 0), GM_OK);
        }
        memcpy(prev, name, sizeof prev);
    }
    if (gm_model_finalize(m, &err) != GM_OK) fail_msg("%s", err.message);
    gm_reach *r = NULL;
    assert_int_equal(gm_reach_new(m, &r), GM_OK);
    const gm_node *first = gm_model_find_node(m, "c0"), *last = gm_model_find_node(m, "c99999");
    const gm_node *side = gm_model_find_node(m, "side500"), *mid = gm_model_find_node(m, "c700");
    assert_true(gm_reach_path(r, first, last));
    assert_false(gm_reach_path(r, last, first));
    assert_true(gm_reach_path(r, first, side));
    assert_false(gm_reach_path(r, side, mid));
    assert_true(gm_reach_connected(r, last, first));
    assert_false(gm_reach_connected(r, side, mid));
    gm_reach_stats st;
    gm_reach_get_stats(r, &st);
    assert_int_equal(st.queries, 6);
    assert_int_equal(st.searched, 0);
    gm_reach_free(r);
    gm_model_free(m);
}

/* Above 65,536 nodes lint builds its reachability index on a second thread while it marks the
 * types: the verdicts are those of a small model (test_writer_in_the_middle: the writer ordered
 * after one reader, not before the other), and an index built for a model without any writer
 * is let go. */
static void test_big_model_reach_ahead(void **state)
{
    (void)state;
    for (int writer = 0; writer < 2; writer++) {
        gm_model *m = gm_model_new("big");
        gm_error err;
        gm_graph *g = gm_model_add_graph(m, "root", NULL, &err);
        static const char *const heads[][2] = {{"var", "Variable"}, {"c", "Const"}, {"r0", "Relu"}, {"r1", "Relu"}};
        for (size_t i = 0; i < 4; i++) {
            gm_node *nd = gm_graph_add_node(g, heads[i][0], heads[i][1], &err);
            assert_non_null(nd);
            assert_non_null(gm_node_add_output(nd));
            if (i >= 2) assert_int_equal(gm_node_add_input_by_name(nd, "var", 0), GM_OK);
        }
        if (writer) {
            gm_node *w = gm_graph_add_node(g, "w", "Assign", &err);
            assert_non_null(w);
            assert_non_null(gm_node_add_output(w));
            assert_int_equal(gm_node_add_input_by_name(w, "var", 0), GM_OK);
            assert_int_equal(gm_node_add_input_by_name(w, "c", 0), GM_OK);
            assert_int_equal(gm_node_add_control_input_by_name(w, "r0"), GM_OK);
        }
        char name[32], prev[32] = "c";
        for (int i = 0; i < 70000; i++) { /* the bulk: a chain off the constant */
            snprintf(name, sizeof name, "k%d", i);
            gm_node *nd = gm_graph_add_node(g, name, "Relu", &err);
            assert_non_null(nd);
            assert_non_null(gm_node_add_output(nd));
            assert_int_equal(gm_node_add_input_by_name(nd, prev, 0), GM_OK);
            memcpy(prev, name, sizeof prev);
        }
        if (gm_model_finalize(m, &err) != GM_OK) fail_msg("%s", err.message);
        gm_pass_report rep = {0};
        lint_ok(m, &rep);
        assert_int_equal(rep.n_warnings, (size_t)writer);
        if (writer)
            assert_warning(&rep, 0, "There is no control relation between write node[w] and read node[r1]" MSG_TAIL);
        gm_pass_report_free(&rep);
        gm_model_free(m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lint_scenarios),
        cmocka_unit_test(test_messages_read_and_write),
        cmocka_unit_test(test_first_violation_per_output),
        cmocka_unit_test(test_writer_in_the_middle),
        cmocka_unit_test(test_big_model_reach_ahead),
        cmocka_unit_test(test_cmo_wrapped_in_framework_op),
        cmocka_unit_test(test_verify_on_subgraph_fails),
        cmocka_unit_test(test_graph_unchanged),
        cmocka_unit_test(test_alloc_failures),
        cmocka_unit_test(test_reach_matches_closure),
        cmocka_unit_test(test_reach_long_chain),
    };
    gm_log_set_level(GM_LOG_ERROR); /* the warnings are asserted from the report, not read from stderr */
    return cmocka_run_group_tests(tests, NULL, NULL);
}
