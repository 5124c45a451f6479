/*
 * test_io_reuse_check.c — GE's IO address reuse check (reference §6.10): CheckIoReuseAddrPairs
 * with its exact message, the option text ge.exec.outputReuseInputMemIndexes, and the model
 * attribute output_reuse_input_mem_indexes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "conflict/inplace.h"
#include "graphmem/io.h"
#include "runtime/io_reuse_check.h"
#include "util/alloc.h"

static char g_in[4][16], g_out[4][16];

/* Buffers by index from an array of pointers (ctx). */
static const void *addr_of(void *ctx, size_t i) { return ((void **)ctx)[i]; }

static void test_check_pass_and_skip(void **state)
{
    (void)state;
    gm_error err;
    void *ins[2] = {g_in[0], g_in[1]};
    void *outs[3] = {g_out[0], g_in[1], g_in[0]};
    const gm_io_reuse_pair pairs[] = {{1, 1}, {0, 2}};
    gm_error_clear(&err);
    assert_int_equal(gm_io_reuse_check_pairs(pairs, 2, addr_of, ins, 2, addr_of, outs, 3, &err), GM_OK);
    /* No pairs, or no user buffers on a side: nothing to check, even with mismatched addresses. */
    void *bad[3] = {g_out[0], g_out[1], g_out[2]};
    assert_int_equal(gm_io_reuse_check_pairs(pairs, 0, addr_of, ins, 2, addr_of, bad, 3, &err), GM_OK);
    assert_int_equal(gm_io_reuse_check_pairs(pairs, 2, addr_of, ins, 2, NULL, NULL, 0, &err), GM_OK);
    assert_int_equal(gm_io_reuse_check_pairs(pairs, 2, addr_of, ins, 2, addr_of, bad, 0, &err), GM_OK);
    assert_int_equal(gm_io_reuse_check_pairs(pairs, 2, NULL, NULL, 0, addr_of, bad, 3, &err), GM_OK);
}

static void test_check_mismatch_message(void **state)
{
    (void)state;
    gm_error err;
    void *ins[2] = {g_in[0], g_in[1]};
    void *outs[2] = {g_in[0], g_out[1]};
    const gm_io_reuse_pair pairs[] = {{0, 0}, {1, 1}};
    assert_int_equal(gm_io_reuse_check_pairs(pairs, 2, addr_of, ins, 2, addr_of, outs, 2, &err), GM_ERR_INPUT);
    char want[1024];
    snprintf(want, sizeof want,
             "Output[1] address(%p) must be same as Input[1] address(%p) because the option "
             "'ge.exec.outputReuseInputMemIndexes' is set with value containing '1,1', addr reuse check not pass",
             (void *)g_out[1], (void *)g_in[1]);
    assert_string_equal(err.message, want);

    /* The pair's order is "in,out": output 0 must be input 1's buffer. */
    const gm_io_reuse_pair cross[] = {{1, 0}};
    assert_int_equal(gm_io_reuse_check_pairs(cross, 1, addr_of, ins, 2, addr_of, outs, 2, &err), GM_ERR_INPUT);
    assert_non_null(strstr(err.message, "Output[0] address"));
    assert_non_null(strstr(err.message, "as Input[1] address"));
    assert_non_null(strstr(err.message, "containing '1,0'"));
}

static void test_check_index_out_of_range(void **state)
{
    (void)state;
    gm_error err;
    void *ins[2] = {g_in[0], g_in[1]};
    void *outs[2] = {g_in[0], g_in[1]};
    const gm_io_reuse_pair bad_in[] = {{2, 0}};
    assert_int_equal(gm_io_reuse_check_pairs(bad_in, 1, addr_of, ins, 2, addr_of, outs, 2, &err), GM_ERR_INPUT);
    assert_string_equal(err.message, "param invalid: option 'ge.exec.outputReuseInputMemIndexes' pair '2,0': input "
                                     "index 2 is out of range (2 inputs)");
    const gm_io_reuse_pair bad_out[] = {{0, 0}, {1, 5}};
    assert_int_equal(gm_io_reuse_check_pairs(bad_out, 2, addr_of, ins, 2, addr_of, outs, 1, &err), GM_ERR_INPUT);
    assert_string_equal(err.message, "param invalid: option 'ge.exec.outputReuseInputMemIndexes' pair '1,5': output "
                                     "index 5 is out of range (1 output)");
}

static void parse_ok(const char *text, size_t want_n, const size_t *want)
{
    gm_io_reuse_pair *p = NULL;
    size_t n = 99;
    gm_error err;
    if (gm_io_reuse_parse_option(text, &p, &n, &err) != GM_OK) fail_msg("'%s': %s", text, err.message);
    assert_int_equal(n, want_n);
    for (size_t k = 0; k < n; k++) {
        assert_int_equal(p[k].in, want[2 * k]);
        assert_int_equal(p[k].out, want[2 * k + 1]);
    }
    gm_free(p);
}

static void test_parse_option(void **state)
{
    (void)state;
    parse_ok("0,0|1,1", 2, (const size_t[]){0, 0, 1, 1});
    parse_ok("3,0", 1, (const size_t[]){3, 0});
    parse_ok(" 2 , 1 | 0,3 ", 2, (const size_t[]){2, 1, 0, 3});
    parse_ok("", 0, NULL);
    parse_ok("  ", 0, NULL);

    static const char *const bad[] = {"0", "0,", ",1", "0,0|", "|0,0", "0,0||1,1", "a,1", "-1,0",
                                      "+1,0", "0,0,0", "1;1", "99999999999999999999999,0", "0 1,0"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        gm_io_reuse_pair *p = (gm_io_reuse_pair *)&p;
        size_t n = 7;
        gm_error err;
        if (gm_io_reuse_parse_option(bad[i], &p, &n, &err) != GM_ERR_INPUT) fail_msg("'%s' was accepted", bad[i]);
        assert_null(p);
        assert_int_equal(n, 0);
        assert_non_null(strstr(err.message, "option 'ge.exec.outputReuseInputMemIndexes'"));
        assert_non_null(strstr(err.message, "expected pairs like '0,0|1,1'"));
    }
    gm_io_reuse_pair *p;
    size_t n;
    gm_error err;
    assert_int_equal(gm_io_reuse_parse_option("0,0|1,x", &p, &n, &err), GM_ERR_INPUT);
    assert_string_equal(err.message, "option 'ge.exec.outputReuseInputMemIndexes': pair 1 '1,x' is not 'input "
                                     "index,output index' (value '0,0|1,x'; expected pairs like '0,0|1,1')");
}

static gm_model *load(const char *json_q)
{
    char *json = strdup(json_q);
    for (char *c = json; *c; c++)
        if (*c == '\'') *c = '"';
    gm_model *m = NULL;
    gm_error err;
    if (gm_model_read_json(json, strlen(json), "io.json", &m, &err) != GM_OK) fail_msg("%s", err.message);
    free(json);
    return m;
}

#define MODEL(OPTIONS, ROOT_ATTRS)                                                                                     \
    "{'graphmem':1,'options':{" OPTIONS "},'graphs':[{'name':'root','attrs':{" ROOT_ATTRS "},'nodes':["             \
    "{'name':'x','type':'Data','attrs':{'index':0},'outputs':[{'dtype':'float32','shape':[4]}]},"                    \
    "{'name':'out','type':'NetOutput','inputs':['x:0']}]}]}"

static void test_pairs_from_model(void **state)
{
    (void)state;
    gm_io_reuse_pair *p;
    size_t n;
    gm_error err;
    /* The attribute the compiler records wins over the option text. */
    gm_model *m = load(MODEL("'ge.exec.outputReuseInputMemIndexes':'5,5'", "'" GM_ATTR_OUTPUT_REUSE_INPUT_MEM_INDEXES
                                                                           "':[[0,0],[1,2]]"));
    assert_int_equal(gm_io_reuse_pairs_from_model(m, &p, &n, &err), GM_OK);
    assert_int_equal(n, 2);
    assert_int_equal(p[1].in, 1);
    assert_int_equal(p[1].out, 2);
    gm_free(p);
    gm_model_free(m);

    m = load(MODEL("'ge.exec.outputReuseInputMemIndexes':'5,4'", ""));
    assert_int_equal(gm_io_reuse_pairs_from_model(m, &p, &n, &err), GM_OK);
    assert_int_equal(n, 1);
    assert_int_equal(p[0].in, 5);
    assert_int_equal(p[0].out, 4);
    gm_free(p);
    gm_model_free(m);

    m = load(MODEL("", ""));
    assert_int_equal(gm_io_reuse_pairs_from_model(m, &p, &n, &err), GM_OK);
    assert_int_equal(n, 0);
    assert_null(p);
    gm_model_free(m);

    m = load(MODEL("'ge.exec.outputReuseInputMemIndexes':'5;4'", ""));
    assert_int_equal(gm_io_reuse_pairs_from_model(m, &p, &n, &err), GM_ERR_INPUT);
    gm_model_free(m);

    m = load(MODEL("", "'" GM_ATTR_OUTPUT_REUSE_INPUT_MEM_INDEXES "':[[0,0],[1]]"));
    assert_int_equal(gm_io_reuse_pairs_from_model(m, &p, &n, &err), GM_ERR_INPUT);
    assert_non_null(strstr(err.message, "row 1 is not [input index, output index]"));
    gm_model_free(m);

    m = load(MODEL("", "'" GM_ATTR_OUTPUT_REUSE_INPUT_MEM_INDEXES "':[[0,-1]]"));
    assert_int_equal(gm_io_reuse_pairs_from_model(m, &p, &n, &err), GM_ERR_INPUT);
    gm_model_free(m);

    m = load(MODEL("", "'" GM_ATTR_OUTPUT_REUSE_INPUT_MEM_INDEXES "':'0,0'"));
    assert_int_equal(gm_io_reuse_pairs_from_model(m, &p, &n, &err), GM_ERR_INPUT);
    assert_non_null(strstr(err.message, "expected a list of [input, output] pairs"));
    gm_model_free(m);
}

/* Every allocation failure gives GM_ERR_NOMEM and leaks nothing. */
static void test_parse_out_of_memory(void **state)
{
    (void)state;
    gm_io_reuse_pair *p;
    size_t n;
    gm_error err;
    gm_alloc_fail_after(0);
    gm_status st = gm_io_reuse_parse_option("0,0|1,1", &p, &n, &err);
    gm_alloc_fail_after(-1);
    assert_int_equal(st, GM_ERR_NOMEM);
    assert_null(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check_pass_and_skip),
        cmocka_unit_test(test_check_mismatch_message),
        cmocka_unit_test(test_check_index_out_of_range),
        cmocka_unit_test(test_parse_option),
        cmocka_unit_test(test_pairs_from_model),
        cmocka_unit_test(test_parse_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
