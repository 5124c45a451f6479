/*
 * test_symbols.c — GE's symbol table (reference §2.2): which anchors share one address; a loop's
 * carried outputs are its body's, its stacked ones tensors of their own.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ref.h"
#include "analysis/symbols.h"
#include "graphmem/io.h"
#include "ops/op_table.h"

typedef struct fixture {
    gm_model *m;
    gm_symbols *s;
} fixture;

static fixture load(const char *json)
{
    fixture f = {0};
    gm_error err;
    if (gm_model_read_json(json, strlen(json), "t.json", &f.m, &err) != GM_OK) fail_msg("%s", err.message);
    if (gm_symbols_build(f.m, &f.s, &err) != GM_OK) fail_msg("%s", err.message);
    return f;
}

static void drop(fixture *f)
{
    gm_symbols_free(f->s);
    gm_model_free(f->m);
}

/* "node:out:k" or "node:in:k" -> its symbol */
static int32_t sym(const fixture *f, const char *node, const char *io, uint32_t k)
{
    gm_node *n = gm_model_find_node(f->m, node);
    if (!n) fail_msg("no node %s", node);
    return gm_symbols_find(f->s, n, !strcmp(io, "out"), k);
}

#define G(nodes) "{\"graphmem\":1,\"graphs\":[{\"name\":\"root\",\"nodes\":[" nodes "]}]}"
#define OUT "\"outputs\":[{\"dtype\":\"float32\",\"shape\":[4]}]"
#define N(name, type, inputs) "{\"name\":\"" name "\",\"type\":\"" type "\",\"inputs\":[" inputs "]," OUT "}"

static void test_producer_and_consumers(void **state)
{
    (void)state;
    fixture f = load(G(N("x", "Data", "") "," N("a", "Relu", "\"x:0\"") "," N("b", "Add", "\"x:0\",\"a:0\"") ","
                       "{\"name\":\"o\",\"type\":\"NetOutput\",\"inputs\":[\"b:0\",\"\"]}"));
    int32_t x = sym(&f, "x", "out", 0);
    assert_int_equal(sym(&f, "a", "in", 0), x);
    assert_int_equal(sym(&f, "b", "in", 0), x);
    assert_int_equal(gm_symbol_size(f.s, x), 3);
    assert_int_not_equal(sym(&f, "a", "out", 0), x);
    assert_int_equal(sym(&f, "b", "in", 1), sym(&f, "a", "out", 0));
    /* An unconnected input has a symbol of its own. */
    int32_t lone = sym(&f, "o", "in", 1);
    assert_true(lone >= 0);
    assert_int_equal(gm_symbol_size(f.s, lone), 1);
    char buf[64];
    assert_string_equal(gm_symbol_name(f.s, x, buf, sizeof buf), "x_out_0");
    /* Name order: GE keeps symbols in a map keyed by name. */
    assert_int_equal(gm_symbols_count(f.s), 4);
    assert_string_equal(gm_symbol_name(f.s, gm_symbols_at(f.s, 0), buf, sizeof buf), "a_out_0");
    assert_string_equal(gm_symbol_name(f.s, gm_symbols_at(f.s, 3), buf, sizeof buf), "x_out_0");
    /* Anchors in the order they joined. */
    gm_anchor first = gm_symbols_anchor(f.s, gm_symbol_first(f.s, x));
    assert_string_equal(gm_node_name(first.node), "x");
    assert_true(first.out);
    drop(&f);
}

static void test_ref_chains(void **state)
{
    (void)state;
    /* Assign's output "ref" is its input "ref" (op-table names); reuse_input and views share too. */
    fixture f = load(G(N("v", "Variable", "") "," N("x", "Data", "") ","
                       N("as", "Assign", "\"v:0\",\"x:0\"") ","
                       "{\"name\":\"mul\",\"type\":\"aten.mul_\",\"inputs\":[\"as:0\"],\"input_names\":[\"self\"],"
                       "\"output_names\":[\"self\"],\"attrs\":{\"reference\":true}," OUT "},"
                       "{\"name\":\"view\",\"type\":\"aten.view\",\"inputs\":[\"mul:0\"],"
                       "\"outputs\":[{\"dtype\":\"float32\",\"shape\":[2,2],\"reuse_input\":true,\"reuse_input_index\":0}]},"
                       N("sq", "Squeeze", "\"view:0\"") "," N("r", "Relu", "\"sq:0\"")));
    int32_t v = sym(&f, "v", "out", 0);
    assert_int_equal(sym(&f, "as", "out", 0), v);
    assert_int_equal(sym(&f, "mul", "out", 0), v);
    assert_int_equal(sym(&f, "view", "out", 0), v);
    assert_int_equal(sym(&f, "sq", "out", 0), v);
    assert_int_equal(sym(&f, "r", "in", 0), v);
    assert_int_not_equal(sym(&f, "r", "out", 0), v);
    assert_int_not_equal(sym(&f, "x", "out", 0), v);
    /* The `reference` attribute decides: without it same names are not a ref pair. */
    uint32_t in;
    assert_true(gm_ref_input_of_output(gm_model_find_node(f.m, "mul"), 0, &in));
    assert_false(gm_ref_input_of_output(gm_model_find_node(f.m, "r"), 0, &in));
    drop(&f);
}

/* If with two branches: both branch outputs and the If output are one symbol; each branch's
 * Data joins the symbol of what feeds the If's input. */
static void test_if_subgraphs(void **state)
{
    (void)state;
    fixture f = load("{\"graphmem\":1,\"graphs\":["
                     "{\"name\":\"root\",\"nodes\":[" N("c", "Data", "") "," N("x", "Data", "") ","
                     "{\"name\":\"if\",\"type\":\"If\",\"inputs\":[\"c:0\",\"x:0\"],\"subgraphs\":[\"t\",\"e\"]," OUT "},"
                     N("y", "Relu", "\"if:0\"") "]},"
                     "{\"name\":\"t\",\"parent\":\"if\",\"nodes\":["
                     "{\"name\":\"td\",\"type\":\"Data\",\"attrs\":{\"_parent_node_index\":1}," OUT "},"
                     N("ts", "Sigmoid", "\"td:0\"") ","
                     "{\"name\":\"to\",\"type\":\"NetOutput\",\"inputs\":[\"ts:0\"],"
                     "\"input_descs\":[{\"attrs\":{\"_parent_node_index\":0}}]}]},"
                     "{\"name\":\"e\",\"parent\":\"if\",\"nodes\":["
                     "{\"name\":\"ed\",\"type\":\"Data\",\"attrs\":{\"_parent_node_index\":1}," OUT "},"
                     "{\"name\":\"eo\",\"type\":\"NetOutput\",\"inputs\":[\"ed:0\"],"
                     "\"input_descs\":[{\"attrs\":{\"_parent_node_index\":0}}]}]}]}");
    int32_t x = sym(&f, "x", "out", 0), out = sym(&f, "if", "out", 0);
    assert_int_equal(sym(&f, "td", "out", 0), x);
    assert_int_equal(sym(&f, "ts", "in", 0), x);
    assert_int_equal(sym(&f, "to", "in", 0), out);
    assert_int_equal(sym(&f, "y", "in", 0), out);
    assert_int_equal(sym(&f, "ts", "out", 0), out);
    /* The else branch returns its Data: the If's output and input become one symbol. */
    assert_int_equal(sym(&f, "eo", "in", 0), x);
    assert_int_equal(out, x);
    drop(&f);
}

/* While is pass-through: out i is in i, and the body's outputs join them. */
static void test_while_pass_through(void **state)
{
    (void)state;
    fixture f = load("{\"graphmem\":1,\"graphs\":["
                     "{\"name\":\"root\",\"nodes\":[" N("x", "Data", "") ","
                     "{\"name\":\"w\",\"type\":\"While\",\"inputs\":[\"x:0\"],\"subgraphs\":[\"c\",\"b\"]," OUT "},"
                     N("y", "Relu", "\"w:0\"") "]},"
                     "{\"name\":\"c\",\"parent\":\"w\",\"nodes\":["
                     "{\"name\":\"cd\",\"type\":\"Data\",\"attrs\":{\"_parent_node_index\":0}," OUT "},"
                     N("cl", "Less", "\"cd:0\"") ","
                     "{\"name\":\"co\",\"type\":\"NetOutput\",\"inputs\":[\"cl:0\"]}]},"
                     "{\"name\":\"b\",\"parent\":\"w\",\"nodes\":["
                     "{\"name\":\"bd\",\"type\":\"Data\",\"attrs\":{\"_parent_node_index\":0}," OUT "},"
                     N("bt", "Tanh", "\"bd:0\"") ","
                     "{\"name\":\"bo\",\"type\":\"NetOutput\",\"inputs\":[\"bt:0\"],"
                     "\"input_descs\":[{\"attrs\":{\"_parent_node_index\":0}}]}]}]}");
    int32_t x = sym(&f, "x", "out", 0);
    assert_int_equal(sym(&f, "w", "out", 0), x);
    assert_int_equal(sym(&f, "bd", "out", 0), x);
    assert_int_equal(sym(&f, "bt", "out", 0), x);
    assert_int_equal(sym(&f, "y", "in", 0), x);
    assert_int_not_equal(sym(&f, "cl", "out", 0), x); /* the cond's bool is its own */
    drop(&f);
}

static void test_merge_and_refdata(void **state)
{
    (void)state;
    fixture f = load(G(N("a", "Data", "") "," N("b", "Data", "") "," N("m", "Merge", "\"a:0\",\"b:0\"") ","
                       "{\"name\":\"rd\",\"type\":\"RefData\"," OUT "},"
                       "{\"name\":\"upd\",\"type\":\"Add\",\"inputs\":[\"rd:0\",\"a:0\"],"
                       "\"outputs\":[{\"dtype\":\"float32\",\"shape\":[4],\"attrs\":{\"ref_var_src_var_name\":\"rd\"}}]}"));
    int32_t a = sym(&f, "a", "out", 0);
    assert_int_equal(sym(&f, "b", "out", 0), a);
    assert_int_equal(sym(&f, "m", "out", 0), a);
    assert_int_equal(sym(&f, "m", "in", 1), a);
    assert_int_equal(sym(&f, "upd", "out", 0), sym(&f, "rd", "out", 0));
    drop(&f);
}

static void test_real_training_step(void **state)
{
    (void)state;
    gm_model *m = NULL;
    gm_error err;
    if (gm_model_read_file(GM_TEST_DATA_DIR "/models/mlp_train_step.graphmem.json", &m, &err) != GM_OK)
        fail_msg("%s", err.message);
    gm_symbols *s = NULL;
    assert_int_equal(gm_symbols_build(m, &s, &err), GM_OK);
    /* Every anchor is in exactly one symbol, and the sizes add up. */
    size_t anchors = 0, total = 0;
    for (size_t t = 0; t < gm_model_node_count(m); t++) {
        gm_node *n = gm_model_node_at(m, t);
        anchors += gm_node_output_count(n) + gm_node_input_count(n);
        for (size_t k = 0; k < gm_node_output_count(n); k++) assert_true(gm_symbols_find(s, n, true, (uint32_t)k) >= 0);
    }
    for (size_t i = 0; i < gm_symbols_count(s); i++) total += gm_symbol_size(s, gm_symbols_at(s, i));
    assert_int_equal(total, anchors);
    /* The SGD update writes the parameter in place: params_1 and its add_ share a symbol. */
    gm_node *p = gm_model_find_node(m, "params_1");
    int32_t ps = gm_symbols_find(s, p, true, 0);
    size_t writers = 0;
    for (int32_t a = gm_symbol_first(s, ps); a >= 0; a = gm_symbols_next(s, a)) {
        gm_anchor x = gm_symbols_anchor(s, a);
        writers += x.out;
    }
    assert_true(writers >= 2);
    gm_symbols_free(s);
    gm_model_free(m);
}

/* A Loop (tests/data/loop_stacked.json) with one loop-carried output and one stacked (a scan
 * output): the carried one is its body's output, one symbol; the stacked one is a tensor of its
 * own, which the loop writes, apart from the body output it stacks (ops/op_table.h). */
static void test_loop_carried_and_stacked(void **state)
{
    (void)state;
    fixture f = {0};
    gm_error err;
    if (gm_model_read_file(GM_TEST_DATA_DIR "/loop_stacked.json", &f.m, &err) != GM_OK) fail_msg("%s", err.message);
    if (gm_symbols_build(f.m, &f.s, &err) != GM_OK) fail_msg("%s", err.message);
    const gm_node *loop = gm_model_find_node(f.m, "loop"), *bo = gm_model_find_node(f.m, "b_out");
    /* the one definition, as every module asks it */
    assert_false(gm_subgraph_output_is_stacked(loop, 0));
    assert_true(gm_subgraph_output_is_stacked(loop, 1));
    assert_false(gm_body_output_is_stacked(bo, 0)); /* the condition: no parent output */
    assert_false(gm_body_output_is_stacked(bo, 1));
    assert_true(gm_body_output_is_stacked(bo, 2));
    assert_false(gm_node_writes_output(loop, 0));
    assert_true(gm_node_writes_output(loop, 1));
    /* carried: loop:0 is the body's step, which sum reads after the loop */
    int32_t step = sym(&f, "step", "out", 0);
    assert_int_equal(sym(&f, "loop", "out", 0), step);
    assert_int_equal(sym(&f, "b_out", "in", 1), step);
    assert_int_equal(sym(&f, "sum", "in", 0), step);
    /* stacked: loop:1 (8 rows) and the body's row (one) are two tensors */
    int32_t row = sym(&f, "row", "out", 0), stacked = sym(&f, "loop", "out", 1);
    assert_int_equal(sym(&f, "b_out", "in", 2), row);
    assert_int_not_equal(stacked, row);
    assert_int_equal(sym(&f, "post", "in", 0), stacked);
    assert_int_equal(gm_symbol_size(f.s, stacked), 2); /* loop:1 and post:0 */
    assert_int_equal(gm_symbol_size(f.s, row), 2);     /* row:0 and b_out:2 */
    drop(&f);

    /* GE's While passes every output through, whatever the attribute would say: refused */
    static const char k_while[] =
        "{\"graphmem\":1,\"graphs\":[{\"name\":\"root\",\"nodes\":["
        "{\"name\":\"x\",\"type\":\"Data\",\"attrs\":{\"index\":0}," OUT "},"
        "{\"name\":\"w\",\"type\":\"While\",\"inputs\":[\"x:0\"],\"subgraphs\":[\"c\",\"b\"],"
        "\"attrs\":{\"_gm_carried_outputs\":0}," OUT "},"
        "{\"name\":\"o\",\"type\":\"NetOutput\",\"inputs\":[\"w:0\"]}]},"
        "{\"name\":\"c\",\"parent\":\"w\",\"nodes\":["
        "{\"name\":\"cd\",\"type\":\"Data\",\"attrs\":{\"_parent_node_index\":0}," OUT "},"
        "{\"name\":\"co\",\"type\":\"NetOutput\",\"inputs\":[\"cd:0\"]}]},"
        "{\"name\":\"b\",\"parent\":\"w\",\"nodes\":["
        "{\"name\":\"bd\",\"type\":\"Data\",\"attrs\":{\"_parent_node_index\":0}," OUT "},"
        "{\"name\":\"bo\",\"type\":\"NetOutput\",\"inputs\":[\"bd:0\"],"
        "\"input_descs\":[{\"attrs\":{\"_parent_node_index\":0}}]}]}]}";
    gm_model *m = NULL;
    assert_int_equal(gm_model_read_json(k_while, strlen(k_while), "w.json", &m, &err), GM_ERR_INPUT);
    assert_null(m);
    assert_non_null(strstr(err.message, "_gm_carried_outputs"));
}

/* Symbols are listed in name order (GE's); past 65,536 symbols the sort is a radix sort on
 * 8-byte prefixes, the names made and the runs of one prefix sorted in parts on two cores:
 * names sharing long prefixes, of every length around 8, and a million-ish mix must come out
 * as strcmp orders them; and so must names that all share one prefix (one run: no cut between
 * the parts). */
static void test_name_order_many(void **state)
{
    (void)state;
    for (int one_run = 0; one_run < 2; one_run++) {
        gm_model *m = gm_model_new("many");
        gm_error err;
        gm_graph *g = gm_model_add_graph(m, "root", NULL, &err);
        assert_non_null(g);
        enum { N = 70000 };
        char name[64], prev[64];
        for (int i = 0; i < N; i++) {
            uint32_t x = (uint32_t)i * 2654435761u;
            switch (one_run ? 4 : i % 4) {
            case 0: snprintf(name, sizeof name, "blk%u/attn/q%d", x % 97, i); break;
            case 1: snprintf(name, sizeof name, "b%u", x % 100000 + (uint32_t)i * 100000u); break;
            case 2: snprintf(name, sizeof name, "blk%u/ffn/%d", x % 97, i); break;
            case 3: snprintf(name, sizeof name, "n%07d", i); break; /* exactly 8 bytes */
            default: snprintf(name, sizeof name, "samepref/%u", x); break;
            }
            gm_node *n = gm_graph_add_node(g, name, "Relu", &err);
            assert_non_null(n);
            assert_non_null(gm_node_add_output(n));
        }
        assert_int_equal(gm_model_finalize(m, &err), GM_OK);
        gm_symbols *s = NULL;
        assert_int_equal(gm_symbols_build(m, &s, &err), GM_OK);
        assert_int_equal(gm_symbols_count(s), N);
        prev[0] = '\0';
        for (size_t i = 0; i < gm_symbols_count(s); i++) {
            gm_symbol_name(s, gm_symbols_at(s, i), name, sizeof name);
            if (i && strcmp(prev, name) >= 0) fail_msg("symbol %zu '%s' after '%s'", i, name, prev);
            memcpy(prev, name, sizeof prev);
        }
        gm_symbols_free(s);
        gm_model_free(m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_producer_and_consumers), cmocka_unit_test(test_ref_chains),
        cmocka_unit_test(test_if_subgraphs),           cmocka_unit_test(test_while_pass_through),
        cmocka_unit_test(test_merge_and_refdata),      cmocka_unit_test(test_real_training_step),
        cmocka_unit_test(test_name_order_many),        cmocka_unit_test(test_loop_carried_and_stacked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
