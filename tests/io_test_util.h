/*
 * io_test_util.h — what the reader/writer tests share: reading and writing models, failing the
 * cmocka test with the library's message when that goes wrong. Include after <cmocka.h>.
 */
#ifndef GM_IO_TEST_UTIL_H
#define GM_IO_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graphmem/io.h"

/* A whole file, NUL-terminated (free it; *len its bytes): the test fails when it cannot be read. */
static inline char *slurp(const char *path, size_t *len)
{
    char *data = NULL;
    gm_error err;
    gm_error_clear(&err);
    if (gm_read_file(path, &data, len, &err) != GM_OK) fail_msg("%s", err.message);
    return data;
}

/* graphmem JSON of a chain: Data n0, then Relu n1 .. n(N-1), each output float32 [dim]
 * (free it). Big chains reach the paths that start at a size: the read-ahead, the planner's
 * and the verifier's threads. */
static inline char *chain_json(int nodes, int dim)
{
    size_t cap = (size_t)nodes * 160 + 256, len = 0;
    char *t = malloc(cap);
    assert_non_null(t);
    len += (size_t)snprintf(t, cap, "{\"graphmem\": 1, \"name\": \"chain\", \"graphs\": [{\"name\": \"root\", \"nodes\": [\n"
                            "{\"name\": \"n0\", \"type\": \"Data\", \"attrs\": {\"index\": 0}, "
                            "\"outputs\": [{\"dtype\": \"float32\", \"shape\": [%d]}]}", dim);
    for (int i = 1; i < nodes; i++)
        len += (size_t)snprintf(t + len, cap - len, ",\n{\"name\": \"n%d\", \"type\": \"Relu\", \"inputs\": [\"n%d:0\"], "
                                "\"outputs\": [{\"dtype\": \"float32\", \"shape\": [%d]}]}", i, i - 1, dim);
    snprintf(t + len, cap - len, "]}]}\n");
    return t;
}

/* A model from graphmem JSON text (source "t.json"). */
static inline gm_model *read_json_ok(const char *json)
{
    gm_model *m = NULL;
    gm_error err;
    gm_error_clear(&err);
    gm_status st = gm_model_read_json(json, strlen(json), "t.json", &m, &err);
    if (st != GM_OK) print_message("unexpected error: %s\n", err.message);
    assert_int_equal(st, GM_OK);
    assert_non_null(m);
    return m;
}

/* A model from a file of any format. */
static inline gm_model *read_file_ok(const char *path)
{
    gm_model *m = NULL;
    gm_error err;
    gm_error_clear(&err);
    gm_status st = gm_model_read_file(path, &m, &err);
    if (st != GM_OK) print_message("%s\n", err.message);
    assert_int_equal(st, GM_OK);
    return m;
}

/* The model as graphmem JSON (free with free()); the length matches the text. */
static inline char *write_json_ok(const gm_model *m)
{
    char *text = NULL;
    size_t len = 0;
    gm_error err;
    gm_error_clear(&err);
    gm_status st = gm_model_write_json(m, &text, &len, &err);
    if (st != GM_OK) print_message("unexpected error: %s\n", err.message);
    assert_int_equal(st, GM_OK);
    assert_non_null(text);
    assert_int_equal(len, strlen(text));
    return text;
}

#endif
