/*
 * test_ir.c — the IR without any reader: building, finalize (resolution, validation, order),
 * the edits passes make, tensor sizes, attributes, the op table and the name map.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graphmem/graph.h"
#include "ir/ir.h"
#include "ops/attr_table.h"
#include "ops/op_table.h"
#include "passes/pass_util2.h"
#include "util/alloc.h"
#include "util/strmap.h"
#include "util/utf8.h"

/* ---- helpers ---- */

static gm_node *add(gm_graph *g, const char *name, const char *type, int n_out)
{
    gm_error err;
    gm_node *n = gm_graph_add_node(g, name, type, &err);
    assert_non_null(n);
    for (int i = 0; i < n_out; i++) {
        gm_tensor_desc *d = gm_node_add_output(n);
        assert_non_null(d);
        gm_desc_set_dtype(d, GM_DT_FLOAT);
        int64_t dims[2] = {4, 8};
        assert_int_equal(gm_desc_set_shape(d, dims, 2), GM_OK);
    }
    return n;
}

static void in(gm_node *n, const char *src, int idx) { assert_int_equal(gm_node_add_input_by_name(n, src, idx), GM_OK); }

/* The names of the model order, space-separated. */
static void order_string(const gm_model *m, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < gm_model_node_count(m); i++) {
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? " " : "", gm_node_name(gm_model_node_at(m, i)));
    }
}

static gm_status finalize(gm_model *m, gm_error *err)
{
    gm_error_clear(err);
    return gm_model_finalize(m, err);
}

/* ---- order ---- */

static void test_topo_keeps_given_order(void **state)
{
    (void)state;
    gm_model *m = gm_model_new("t");
    gm_graph *g = gm_model_add_graph(m, "root", NULL, NULL);
    /* Given out of dependency order: c uses b, which comes later. Independent x stays put. */
    gm_node *c = add(g, "c", "Relu", 1);
    add(g, "a", "Data", 1);
    add(g, "x", "Const", 1);
    gm_node *b = add(g, "b", "Relu", 1);
    in(c, "b", 0);
    in(b, "a", 0);
    gm_error err;
    assert_int_equal(finalize(m, &err), GM_OK);
    char buf[256];
    order_string(m, buf, sizeof buf);
    assert_string_equal(buf, "a x b c");
    assert_int_equal(gm_node_topo_id(c), 3);
    assert_int_equal(gm_node_consumer_count(b, 0), 1);
    int32_t idx = -1;
    assert_ptr_equal(gm_node_consumer(b, 0, 0, &idx), c);
    assert_int_equal(idx, 0);
    gm_model_free(m);
}

static void test_order_inlines_subgraphs(void **state)
{
    (void)state;
    gm_model *m = gm_model_new("t");
    gm_error err;
    gm_graph *root = gm_model_add_graph(m, "root", NULL, &err);
    gm_graph *then_g = gm_model_add_graph(m, "then", "if", &err);
    gm_graph *else_g = gm_model_add_graph(m, "else", "if", &err);
    assert_non_null(then_g);
    assert_non_null(else_g);
    add(root, "p", "Data", 1);
    gm_node *iff = add(root, "if", "If", 1);
    in(iff, "p", 0);
    in(iff, "p", 0);
    assert_int_equal(gm_node_add_subgraph_by_name(iff, "then"), GM_OK);
    assert_int_equal(gm_node_add_subgraph_by_name(iff, "else"), GM_OK);
    gm_node *out = add(root, "out", "NetOutput", 0);
    in(out, "if", 0);
    gm_node *td = add(then_g, "td", "Data", 1);
    gm_attr_set_int(gm_node_attrs(td), "_parent_node_index", 1);
    gm_node *to = add(then_g, "to", "NetOutput", 0);
    in(to, "td", 0);
    gm_node *ed = add(else_g, "ed", "Data", 1);
    gm_attr_set_int(gm_node_attrs(ed), "_parent_node_index", 1);
    gm_node *eo = add(else_g, "eo", "NetOutput", 0);
    in(eo, "ed", 0);
    assert_int_equal(finalize(m, &err), GM_OK);
    char buf[256];
    order_string(m, buf, sizeof buf);
    assert_string_equal(buf, "p if td to ed eo out");
    assert_ptr_equal(gm_graph_parent(then_g), iff);
    assert_ptr_equal(gm_node_subgraph(iff, 1), else_g);
    assert_true(gm_graph_is_root(root));
    assert_false(gm_graph_is_root(then_g));
    gm_model_free(m);
}

/* ---- validation: each rule names the place ---- */

typedef void (*build_fn)(gm_model *m);

static void expect_error(build_fn build, const char *needle)
{
    gm_model *m = gm_model_new("t");
    gm_model_set_source(m, "bad.json");
    build(m);
    gm_error err;
    assert_int_equal(finalize(m, &err), GM_ERR_INPUT);
    if (!strstr(err.message, needle) || strncmp(err.message, "bad.json: ", 10) != 0) {
        fail_msg("expected '%s' in: %s", needle, err.message);
    }
    gm_model_free(m);
}

static void b_unknown_input(gm_model *m)
{
    gm_graph *g = gm_model_add_graph(m, "root", NULL, NULL);
    in(add(g, "a", "Relu", 1), "nope", 0);
}
static void b_index_range(gm_model *m)
{
    gm_graph *g = gm_model_add_graph(m, "root", NULL, NULL);
    add(g, "d", "Data", 1);
    in(add(g, "a", "Relu", 1), "d", 1);
}
static void b_cycle(gm_model *m)
{
    gm_graph *g = gm_model_add_graph(m, "root", NULL, NULL);
    add(g, "d", "Data", 1);
    gm_node *a = add(g, "a", "Add", 1), *b = add(g, "b", "Relu", 1);
    in(a, "d", 0);
    in(a, "b", 0);
    in(b, "a", 0);
}
static void b_ctrl_cycle(gm_model *m)
{
    gm_graph *g = gm_model_add_graph(m, "root", NULL, NULL);
    gm_node *a = add(g, "a", "Relu", 1), *b = add(g, "b", "Relu", 1);
    gm_node_add_control_input_by_name(a, "b");
    gm_node_add_control_input_by_name(b, "a");
}
static void b_not_listed(gm_model *m)
{
    gm_graph *g = gm_model_add_graph(m, "root", NULL, NULL);
    gm_model_add_graph(m, "body", "p", NULL);
    add(g, "p", "PartitionedCall", 1);
}
static void b_subgraph_data(gm_model *m)
{
    gm_graph *g = gm_model_add_graph(m, "root", NULL, NULL);
    gm_graph *s = gm_model_add_graph(m, "f", "p", NULL);
    gm_node_add_subgraph_by_name(add(g, "p", "PartitionedCall", 1), "f");
    add(s, "sd", "Data", 1);
}
static void b_subgraph_data_range(gm_model *m)
{
    gm_graph *g = gm_model_add_graph(m, "root", NULL, NULL);
    gm_graph *s = gm_model_add_graph(m, "f", "p", NULL);
    gm_node_add_subgraph_by_name(add(g, "p", "PartitionedCall", 1), "f");
    gm_attr_set_int(gm_node_attrs(add(s, "sd", "Data", 1)), "_parent_node_index", 0);
}
static void b_if_one_branch(gm_model *m)
{
    gm_graph *g = gm_model_add_graph(m, "root", NULL, NULL);
    gm_model_add_graph(m, "then", "if", NULL);
    gm_node_add_subgraph_by_name(add(g, "if", "If", 1), "then");
}
static void b_overflow(gm_model *m)
{
    gm_graph *g = gm_model_add_graph(m, "root", NULL, NULL);
    gm_node *a = add(g, "a", "Data", 0);
    gm_tensor_desc *d = gm_node_add_output(a);
    gm_desc_set_dtype(d, GM_DT_INT64);
    int64_t dims[3] = {1 << 30, 1 << 30, 1 << 30};
    gm_desc_set_shape(d, dims, 3);
}
static void b_negative_size(gm_model *m)
{
    gm_graph *g = gm_model_add_graph(m, "root", NULL, NULL);
    gm_desc_set_size(gm_node_output_desc(add(g, "a", "Data", 1), 0), -5);
}
static void b_attr_kind(gm_model *m)
{
    gm_graph *g = gm_model_add_graph(m, "root", NULL, NULL);
    gm_attr_set_int(gm_node_attrs(add(g, "a", "ConcatD", 1)), "continuous_input", 1);
}
static void b_reuse_range(gm_model *m)
{
    gm_graph *g = gm_model_add_graph(m, "root", NULL, NULL);
    gm_desc_set_reuse_input(gm_node_output_desc(add(g, "a", "Reshape", 1), 0), true, 0);
}
static void b_cross_graph(gm_model *m)
{
    gm_graph *g = gm_model_add_graph(m, "root", NULL, NULL);
    gm_graph *s = gm_model_add_graph(m, "f", "p", NULL);
    add(g, "d", "Data", 1);
    gm_node *p = add(g, "p", "PartitionedCall", 1);
    in(p, "d", 0);
    gm_node_add_subgraph_by_name(p, "f");
    in(add(s, "r", "Relu", 1), "d", 0);
}
static void b_nested_self(gm_model *m)
{
    gm_graph *g = gm_model_add_graph(m, "root", NULL, NULL);
    gm_graph *s = gm_model_add_graph(m, "f", "q", NULL);
    (void)g;
    gm_node_add_subgraph_by_name(add(s, "q", "PartitionedCall", 1), "f");
}

static void test_validation_errors(void **state)
{
    (void)state;
    expect_error(b_unknown_input, "input 0 names unknown node 'nope'");
    expect_error(b_index_range, "out of range");
    expect_error(b_cycle, "cycle");
    expect_error(b_ctrl_cycle, "cycle");
    expect_error(b_not_listed, "does not list");
    expect_error(b_subgraph_data, "_parent_node_index");
    expect_error(b_subgraph_data_range, "out of range");
    expect_error(b_if_one_branch, "then, else");
    expect_error(b_overflow, "overflow");
    expect_error(b_negative_size, "negative size");
    expect_error(b_attr_kind, "wrong kind");
    expect_error(b_reuse_range, "reuse_input_index");
    expect_error(b_cross_graph, "graph 'root'");
    expect_error(b_nested_self, "nested inside itself");
}

static void test_duplicates(void **state)
{
    (void)state;
    gm_model *m = gm_model_new("t");
    gm_error err;
    gm_graph *g = gm_model_add_graph(m, "root", NULL, &err);
    add(g, "a", "Data", 1);
    assert_null(gm_graph_add_node(g, "a", "Relu", &err));
    assert_int_equal(err.code, GM_ERR_INPUT);
    assert_non_null(strstr(err.message, "duplicate node name 'a'"));
    assert_null(gm_model_add_graph(m, "root", "a", &err));
    assert_non_null(strstr(err.message, "duplicate graph"));
    assert_null(gm_model_add_graph(m, "orphan", NULL, &err));
    assert_non_null(strstr(err.message, "without a parent"));
    gm_model_free(m);
}

/* ---- sizes ---- */

static void test_desc_sizes(void **state)
{
    (void)state;
    gm_tensor_desc d;
    gm_desc_init(&d);
    gm_desc_set_dtype(&d, GM_DT_FLOAT16);
    assert_int_equal(gm_desc_size(&d), 2); /* no shape = scalar */
    int64_t dims[] = {3, 5};
    gm_desc_set_shape(&d, dims, 2);
    assert_int_equal(gm_desc_size(&d), 30);
    gm_desc_set_dtype(&d, GM_DT_INT4);
    assert_int_equal(gm_desc_size(&d), 8); /* 15 nibbles round up to 8 bytes */
    int64_t dyn[] = {-1, 5};
    gm_desc_set_shape(&d, dyn, 2);
    assert_int_equal(gm_desc_size(&d), GM_SIZE_DYNAMIC);
    int64_t zero[] = {0, -1};
    gm_desc_set_shape(&d, zero, 2);
    assert_int_equal(gm_desc_size(&d), 0); /* a zero dim empties it, whatever the unknown dim */
    gm_desc_set_size(&d, 4096);
    assert_int_equal(gm_desc_size(&d), 4096);
    int64_t big[] = {INT64_MAX / 2, 3};
    gm_desc_fini(&d);
    gm_desc_set_dtype(&d, GM_DT_FLOAT);
    gm_desc_set_shape(&d, big, 2);
    assert_int_equal(gm_desc_size(&d), -2);
    gm_desc_fini(&d);
}

static void test_dtype_names(void **state)
{
    (void)state;
    gm_dtype dt;
    assert_true(gm_dtype_from_name("float32", &dt));
    assert_int_equal(dt, GM_DT_FLOAT);
    assert_true(gm_dtype_from_name("DT_BF16", &dt));
    assert_int_equal(dt, GM_DT_BF16);
    assert_true(gm_dtype_from_name("FLOAT16", &dt)); /* ONNX */
    assert_int_equal(dt, GM_DT_FLOAT16);
    assert_false(gm_dtype_from_name("float33", &dt));
    for (int i = 0; i < GM_DT_COUNT; i++) {
        assert_true(gm_dtype_from_name(gm_dtype_name((gm_dtype)i), &dt));
        assert_int_equal(dt, i);
        assert_true(gm_dtype_from_name(gm_dtype_ge_name((gm_dtype)i), &dt));
        assert_int_equal(dt, i);
    }
    gm_mem_type mt;
    assert_true(gm_mem_type_from_name("p2p", &mt));
    assert_true(gm_mem_type_is_special(mt));
    assert_false(gm_mem_type_from_name("l2", &mt));
}

/* ---- attributes ---- */

static void test_attrs(void **state)
{
    (void)state;
    gm_attr *list = NULL;
    assert_int_equal(gm_attr_set_int(&list, "a", 3), GM_OK);
    assert_int_equal(gm_attr_set_string(&list, "b", "x"), GM_OK);
    int64_t r0[] = {0, 1}, r1[] = {2};
    const int64_t *rows[] = {r0, r1};
    size_t lens[] = {2, 1};
    assert_int_equal(gm_attr_set_list_list_int(&list, "c", rows, lens, 2), GM_OK);
    assert_int_equal(gm_attr_set_bool(&list, "a", true), GM_OK); /* replaces in place */
    assert_int_equal(gm_attr_count(list), 3);
    assert_string_equal(gm_attr_name(list), "a");
    assert_int_equal(gm_attr_get_kind(list), GM_ATTR_BOOL);
    const gm_attr *c = gm_attr_find(list, "c");
    assert_int_equal(gm_attr_list_len(c), 2);
    assert_int_equal(gm_attr_list_list_int(c, 1, 0), 2);
    assert_int_equal(gm_attr_list_list_len(c, 0), 2);
    gm_attr *copy = NULL;
    assert_int_equal(gm_attr_copy_all(&copy, list), GM_OK);
    assert_true(gm_attr_remove(&list, "b"));
    assert_false(gm_attr_remove(&list, "b"));
    assert_string_equal(gm_attrs_get_string(copy, "b"), "x");
    assert_true(gm_attrs_get_bool(copy, "a", false));
    assert_int_equal(gm_attrs_get_int(copy, "zz", 7), 7);
    gm_attr_list_free(list);
    gm_attr_list_free(copy);

    /* Names alike in their first bytes, or shorter than two: each finds itself only. */
    static const char *const names[] = {"", "a", "ab", "abc", "abd", "_x", "_xy", "_y", "b"};
    const size_t nn = sizeof names / sizeof *names;
    list = NULL;
    for (size_t i = 0; i < nn; i++) assert_int_equal(gm_attr_set_int(&list, names[i], (int64_t)i), GM_OK);
    for (size_t i = 0; i < nn; i++) {
        char copy_name[8];
        snprintf(copy_name, sizeof copy_name, "%s", names[i]); /* not the stored pointer */
        assert_int_equal(gm_attrs_get_int(list, copy_name, -1), (int64_t)i);
    }
    assert_null(gm_attr_find(list, "_"));
    assert_null(gm_attr_find(list, "abcd"));
    gm_attr_list_free(list);
}

/* ---- tables ---- */

static void test_op_table(void **state)
{
    (void)state;
    for (size_t i = 1; i < gm_op_table_size(); i++) {
        if (strcmp(gm_op_table_at(i - 1)->type, gm_op_table_at(i)->type) >= 0)
            fail_msg("op table not sorted at %s", gm_op_table_at(i)->type);
    }
    assert_true(gm_op_lookup("RefData")->flags & GM_OP_VAR_LIKE);
    assert_true(gm_op_lookup("RefData")->flags & GM_OP_DATA);
    assert_false(gm_op_lookup("Variable")->flags & GM_OP_DATA);
    assert_int_equal(gm_op_lookup("While")->ctrl, GM_CTRL_WHILE);
    assert_int_equal(gm_op_lookup("SomethingNew")->flags, 0);

    gm_model *m = gm_model_new("t");
    gm_graph *g = gm_model_add_graph(m, "root", NULL, NULL);
    gm_node *var = add(g, "v", "Variable", 1), *val = add(g, "x", "Data", 1);
    gm_node *as = add(g, "as", "Assign", 1);
    in(as, "v", 0);
    in(as, "x", 0);
    (void)var;
    (void)val;
    gm_node *ar = add(g, "ar", "HcomAllReduce", 1);
    in(ar, "x", 0);
    gm_error err;
    assert_int_equal(finalize(m, &err), GM_OK);
    assert_string_equal(gm_node_input_name(as, 0), "ref");
    assert_string_equal(gm_node_input_name(as, 1), "value");
    assert_string_equal(gm_node_output_name(as, 0), "ref");
    assert_true(gm_node_is(as, GM_OP_REFERENCE));
    assert_true(gm_node_is(ar, GM_OP_INPUT_MUTABLE));
    /* GE's attribute decides over the table. */
    gm_attr_set_bool(gm_node_attrs(ar), "_input_mutable", false);
    assert_false(gm_node_is(ar, GM_OP_INPUT_MUTABLE));
    gm_node_set_input_name(as, 0, "self");
    assert_string_equal(gm_node_input_name(as, 0), "self");
    gm_model_free(m);
}

static void test_attr_table(void **state)
{
    (void)state;
    gm_attr_kind k;
    assert_true(gm_attr_known_kind("_parent_node_index", &k));
    assert_int_equal(k, GM_ATTR_INT);
    assert_true(gm_attr_known_kind("_output_inplace_ability", &k));
    assert_int_equal(k, GM_ATTR_LIST_LIST_INT);
    assert_true(gm_attr_known_kind("reference", &k));
    assert_false(gm_attr_known_kind("concat_dim", &k));
    assert_true(gm_attr_table_sorted());
}

/* ---- edits ---- */

/* d -> a -> {b, c}; e is a's control predecessor. */
static gm_model *edit_model(void)
{
    gm_model *m = gm_model_new("t");
    gm_graph *g = gm_model_add_graph(m, "root", NULL, NULL);
    add(g, "d", "Data", 1);
    add(g, "e", "NoOp", 0);
    gm_node *a = add(g, "a", "Relu", 1), *b = add(g, "b", "Relu", 1), *c = add(g, "c", "Add", 1);
    in(a, "d", 0);
    gm_node_add_control_input_by_name(a, "e");
    in(b, "a", 0);
    in(c, "a", 0);
    in(c, "d", 0);
    gm_error err;
    assert_int_equal(finalize(m, &err), GM_OK);
    return m;
}

static gm_node *N(gm_model *m, const char *name) { return gm_model_find_node(m, name); }

static void test_edit_insert_before_after(void **state)
{
    (void)state;
    gm_model *m = edit_model();
    gm_error err;
    gm_node *id = gm_edit_insert_before(N(m, "c"), 0, "id0", "Identity", &err);
    assert_non_null(id);
    int32_t si;
    assert_ptr_equal(gm_node_input(N(m, "c"), 0, &si), id);
    assert_ptr_equal(gm_node_input(id, 0, &si), N(m, "a"));
    assert_int_equal(gm_node_consumer_count(N(m, "a"), 0), 2); /* b and id0 */
    assert_int_equal(gm_desc_dtype(gm_node_output_desc(id, 0)), GM_DT_FLOAT);
    assert_null(gm_edit_insert_before(N(m, "d"), 0, "id1", "Identity", &err)); /* no input */
    assert_null(gm_edit_insert_before(N(m, "b"), 0, "id0", "Identity", &err)); /* name taken */
    assert_non_null(strstr(err.message, "duplicate"));

    gm_node *after = gm_edit_insert_after(N(m, "d"), 0, "cp", "MemcpyAsync", &err);
    assert_non_null(after);
    assert_int_equal(gm_node_consumer_count(N(m, "d"), 0), 1);
    assert_int_equal(gm_node_consumer_count(after, 0), 2); /* a and c:1 */
    assert_ptr_equal(gm_node_input(N(m, "c"), 1, &si), after);
    assert_int_equal(gm_model_toposort(m, &err), GM_OK);
    char buf[256];
    order_string(m, buf, sizeof buf);
    assert_string_equal(buf, "d cp e a b id0 c");
    gm_model_free(m);
}

static void test_edit_insert_many(void **state)
{
    (void)state;
    gm_model *m = edit_model();
    gm_error err;
    gm_node *dsts[2] = {N(m, "c"), N(m, "c")};
    size_t idx[2] = {0, 1};
    gm_node *idn = gm_edit_insert_before_many(dsts, idx, 2, "idn", "IdentityN", &err);
    assert_non_null(idn);
    assert_int_equal(gm_node_input_count(idn), 2);
    assert_int_equal(gm_node_output_count(idn), 2);
    int32_t si;
    assert_ptr_equal(gm_node_input(idn, 1, &si), N(m, "d"));
    assert_ptr_equal(gm_node_input(N(m, "c"), 1, &si), idn);
    assert_int_equal(si, 1);
    assert_int_equal(gm_model_toposort(m, &err), GM_OK);
    gm_model_free(m);
}

/* ---- the sort's shortcut against Kahn's algorithm ---- */

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Kahn's algorithm taking the ready node of least (order key, position), by brute force. */
static void reference_order(const gm_graph *g, char *buf, size_t cap)
{
    const uint32_t n = g->nodes.n;
    bool *done = calloc(n, 1);
    assert_non_null(done);
    size_t len = 0;
    buf[0] = '\0';
    for (uint32_t step = 0; step < n; step++) {
        int32_t best = -1;
        for (uint32_t i = 0; i < n; i++) {
            const gm_node *x = g->nodes.v[i];
            if (done[i]) continue;
            bool ready = true;
            for (uint32_t k = 0; k < x->n_in && ready; k++) {
                for (uint32_t j = 0; j < n; j++)
                    if (x->in[k].src == g->nodes.v[j] && !done[j]) ready = false;
            }
            for (uint32_t k = 0; k < x->ctrl_in.n && ready; k++)
                for (uint32_t j = 0; j < n; j++)
                    if (x->ctrl_in.v[k] == g->nodes.v[j] && !done[j]) ready = false;
            if (ready && (best < 0 || x->order_key < g->nodes.v[best]->order_key)) best = (int32_t)i;
        }
        assert_true(best >= 0);
        done[best] = true;
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", step ? " " : "", g->nodes.v[best]->name);
    }
    free(done);
}

/* Does a reach b over data and control edges? */
static bool reaches(const gm_node *a, const gm_node *b, int depth)
{
    if (a == b) return true;
    if (depth > 400) return true; /* as good as yes: the caller then adds no edge */
    for (uint32_t k = 0; k < a->n_out; k++)
        for (uint32_t j = 0; j < a->out[k].n_uses; j++)
            if (reaches(a->out[k].uses[j].node, b, depth + 1)) return true;
    for (uint32_t j = 0; j < a->ctrl_out.n; j++)
        if (reaches(a->ctrl_out.v[j], b, depth + 1)) return true;
    return false;
}

/* Random DAGs edited as the passes edit them (copies inserted before and after, control edges
 * forward and backward in key order): the sort always gives Kahn's order, whether the key order
 * already was topological (the shortcut) or not (the heap). */
static void test_sort_matches_kahn(void **state)
{
    (void)state;
    uint64_t seed = 0x9E3779B97F4A7C15ull;
    size_t sorts = 0, backward = 0;
    for (int trial = 0; trial < 30; trial++) {
        gm_model *m = gm_model_new("t");
        gm_graph *g = gm_model_add_graph(m, "root", NULL, NULL);
        char name[32];
        const int n0 = 20 + trial;
        for (int i = 0; i < n0; i++) {
            snprintf(name, sizeof name, "n%d", i);
            gm_node *x = add(g, name, i < 2 ? "Data" : "Foo", 1);
            if (i < 2) continue;
            for (int k = 0; k < 2; k++) {
                snprintf(name, sizeof name, "n%d", (int)(rng_next(&seed) % (uint64_t)i));
                in(x, name, 0);
            }
        }
        gm_error err;
        assert_int_equal(finalize(m, &err), GM_OK);
        for (int e = 0; e < 40; e++) {
            uint32_t n = g->nodes.n;
            gm_node *x = g->nodes.v[rng_next(&seed) % n], *y = g->nodes.v[rng_next(&seed) % n];
            snprintf(name, sizeof name, "e%d_%d", trial, e);
            switch (rng_next(&seed) % 3) {
            case 0:
                if (x->n_in) assert_non_null(gm_edit_insert_before(x, 0, name, "Identity", &err));
                break;
            case 1: assert_non_null(gm_edit_insert_after(x, 0, name, "Identity", &err)); break;
            default:
                if (x != y && !reaches(y, x, 0)) {
                    backward += x->order_key > y->order_key;
                    assert_int_equal(gm_edit_add_control_edge(x, y), GM_OK);
                }
            }
            char want[8192], got[8192];
            reference_order(g, want, sizeof want);
            assert_int_equal(gm_model_toposort(m, &err), GM_OK);
            order_string(m, got, sizeof got);
            assert_string_equal(got, want);
            sorts++;
        }
        gm_model_free(m);
    }
    assert_true(backward > 10); /* the heap ran too */
    print_message("sort: %zu sorts checked, %zu backward control edges\n", sorts, backward);
}

/* A big graph's re-sort checks its edges in parts side by side: an edge pointing backwards in
 * the last part, as in the first, still sends it to the full sort. */
static void test_sort_big_backward_edge(void **state)
{
    (void)state;
    enum { N = 70000 };
    for (int late = 0; late < 2; late++) {
        gm_model *m = gm_model_new("big");
        gm_graph *g = gm_model_add_graph(m, "root", NULL, NULL);
        char name[32], prev[32] = "";
        /* a chain given in order, but for one consumer given just before its producer: near
         * the start, or near the end */
        const int swap = late ? N - 10 : 10;
        for (int i = 0; i < N; i++) {
            int at = i == swap ? i + 1 : i == swap + 1 ? i - 1 : i;
            snprintf(name, sizeof name, "c%d", at);
            gm_node *nd = add(g, name, "Relu", 1);
            if (at > 0) {
                snprintf(prev, sizeof prev, "c%d", at - 1);
                in(nd, prev, 0);
            }
        }
        gm_error err;
        assert_int_equal(finalize(m, &err), GM_OK);
        for (int i = 1; i < N; i++) {
            snprintf(name, sizeof name, "c%d", i);
            snprintf(prev, sizeof prev, "c%d", i - 1);
            if (gm_node_topo_id(gm_model_find_node(m, prev)) >= gm_node_topo_id(gm_model_find_node(m, name)))
                fail_msg("%s sorted after %s", prev, name);
        }
        gm_model_free(m);
    }
}

static void test_edit_remove_and_control(void **state)
{
    (void)state;
    gm_model *m = edit_model();
    gm_error err;
    gm_node *a = N(m, "a"), *b = N(m, "b"), *e = N(m, "e");
    assert_int_equal(gm_edit_isolate_and_remove(a, &err), GM_OK);
    assert_null(gm_model_find_node(m, "a"));
    int32_t si;
    assert_ptr_equal(gm_node_input(b, 0, &si), N(m, "d"));
    assert_int_equal(gm_node_consumer_count(N(m, "d"), 0), 3);
    /* a's control predecessor now precedes a's consumers. */
    assert_int_equal(gm_node_control_input_count(b), 1);
    assert_ptr_equal(gm_node_control_input(b, 0), e);
    assert_int_equal(gm_model_toposort(m, &err), GM_OK);
    assert_int_equal(gm_model_node_count(m), 4);

    assert_int_equal(gm_edit_move_control_outputs(e, N(m, "d")), GM_OK);
    assert_int_equal(gm_node_control_output_count(e), 0);
    assert_int_equal(gm_node_control_input_count(N(m, "c")), 1);
    assert_ptr_equal(gm_node_control_input(N(m, "c"), 0), N(m, "d"));
    assert_int_equal(gm_edit_copy_control_inputs(N(m, "c"), b), GM_OK);
    assert_true(gm_edit_remove_control_edge(N(m, "d"), b));
    assert_int_equal(gm_edit_add_control_edge(b, b), GM_ERR_INPUT);
    assert_int_equal(gm_model_toposort(m, &err), GM_OK);
    gm_model_free(m);
}

/* A graph's cached "every output size known" (asked per node by several passes) follows the
 * edits across re-sorts, which look only at the nodes new since the last sort: a known copy
 * keeps the graph known; a new node of unknown size makes it unknown, also when an older node
 * died in the same round (the survivors shift, the new ones must still be found); and a graph
 * that lost its one unknown node is known again. */
static void test_known_shape_across_sorts(void **state)
{
    (void)state;
    gm_model *m = edit_model();
    gm_graph *g = gm_model_root(m);
    gm_error err;
    assert_true(gm_pass_graph_known_shape(g));
    assert_non_null(gm_edit_insert_after(N(m, "a"), 0, "id0", "Identity", &err));
    assert_int_equal(gm_model_toposort(m, &err), GM_OK);
    assert_true(gm_pass_graph_known_shape(g));

    assert_int_equal(gm_edit_isolate_and_remove(N(m, "b"), &err), GM_OK);
    gm_node *dyn = gm_edit_insert_after(N(m, "d"), 0, "dyn", "Identity", &err);
    assert_non_null(dyn);
    const int64_t unknown[2] = {-1, 8};
    assert_int_equal(gm_desc_set_shape(gm_node_output_desc(dyn, 0), unknown, 2), GM_OK);
    assert_int_equal(gm_model_toposort(m, &err), GM_OK);
    assert_false(gm_pass_graph_known_shape(g));

    assert_int_equal(gm_edit_isolate_and_remove(dyn, &err), GM_OK);
    assert_int_equal(gm_model_toposort(m, &err), GM_OK);
    assert_true(gm_pass_graph_known_shape(g));
    gm_model_free(m);
}

/* ---- allocation failures give clean errors, never crashes or leaks ---- */

static void test_alloc_failures(void **state)
{
    (void)state;
    for (long k = 0; k < 400; k++) {
        gm_alloc_fail_after(k);
        gm_model *m = gm_model_new("t");
        gm_error err;
        gm_status st = GM_ERR_NOMEM;
        if (m) {
            gm_graph *g = gm_model_add_graph(m, "root", NULL, &err);
            gm_node *a = g ? gm_graph_add_node(g, "a", "Data", &err) : NULL;
            gm_node *b = g ? gm_graph_add_node(g, "b", "Relu", &err) : NULL;
            if (a && b && gm_node_add_output(a) && gm_node_add_output(b) &&
                gm_node_add_input_by_name(b, "a", 0) == GM_OK && gm_attr_set_int(gm_node_attrs(b), "x", 1) == GM_OK)
                st = gm_model_finalize(m, &err);
        }
        gm_alloc_fail_after(-1);
        assert_true(st == GM_OK || st == GM_ERR_NOMEM);
        gm_model_free(m);
        if (st == GM_OK) return; /* k was past the last allocation */
    }
    fail_msg("still failing after 400 allocations");
}

static void test_strmap(void **state)
{
    (void)state;
    gm_strmap mp = {0};
    char keys[2000][8];
    for (int i = 0; i < 2000; i++) {
        snprintf(keys[i], sizeof keys[i], "k%d", i);
        assert_int_equal(gm_strmap_put(&mp, keys[i], &keys[i]), 0);
    }
    for (int i = 0; i < 2000; i += 2) assert_ptr_equal(gm_strmap_del(&mp, keys[i]), &keys[i]);
    for (int i = 0; i < 2000; i++) {
        void *v = gm_strmap_get(&mp, keys[i]);
        if (i % 2) assert_ptr_equal(v, &keys[i]);
        else assert_null(v);
    }
    assert_int_equal(mp.count, 1000);
    gm_strmap_free(&mp);
}

/* UTF-8 validity with the ASCII runs taken sixteen bytes a test: a bad byte, or a good
 * sequence, at every offset around those blocks is found where it lies. */
static void test_utf8_blocks(void **state)
{
    (void)state;
    char buf[64];
    static const char *const good[] = {"\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80"};
    static const char *const bad[] = {"\xFF", "\x80", "\xC0\xAF", "\xED\xA0\x80", "\xE2\x82"};
    for (size_t at = 0; at < 40; at++) {
        for (size_t g = 0; g < 3; g++) {
            size_t n = strlen(good[g]);
            memset(buf, 'a', sizeof buf);
            memcpy(buf + at, good[g], n);
            assert_true(gm_utf8_valid(buf, sizeof buf, NULL));
            assert_true(gm_utf8_valid(buf, at + n, NULL));
        }
        for (size_t b = 0; b < 5; b++) {
            size_t n = strlen(bad[b]), where = 99;
            memset(buf, 'a', sizeof buf);
            memcpy(buf + at, bad[b], n);
            /* a truncated sequence at the very end is bad too */
            size_t len = b == 4 ? at + n : sizeof buf;
            assert_false(gm_utf8_valid(buf, len, &where));
            assert_int_equal(where, at);
        }
    }
    assert_true(gm_utf8_valid("", 0, NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_topo_keeps_given_order),
        cmocka_unit_test(test_order_inlines_subgraphs),
        cmocka_unit_test(test_validation_errors),
        cmocka_unit_test(test_duplicates),
        cmocka_unit_test(test_desc_sizes),
        cmocka_unit_test(test_dtype_names),
        cmocka_unit_test(test_attrs),
        cmocka_unit_test(test_op_table),
        cmocka_unit_test(test_attr_table),
        cmocka_unit_test(test_edit_insert_before_after),
        cmocka_unit_test(test_edit_insert_many),
        cmocka_unit_test(test_sort_big_backward_edge),
        cmocka_unit_test(test_edit_remove_and_control),
        cmocka_unit_test(test_known_shape_across_sorts),
        cmocka_unit_test(test_sort_matches_kahn),
        cmocka_unit_test(test_alloc_failures),
        cmocka_unit_test(test_strmap),
        cmocka_unit_test(test_utf8_blocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
