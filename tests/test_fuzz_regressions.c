/*
 * test_fuzz_regressions.c — every input the fuzz targets (fuzz/, docs/FUZZING.md) found a bug
 * with, replayed through the same reader the way libFuzzer fed it: the exact bytes in a buffer
 * of exactly their length (no NUL after them, so ASan sees a read past the end). Each case pins
 * the outcome the fixed reader gives, so the fix cannot quietly turn into a different failure.
 * A new finding is one file in tests/data/fuzz/ and one line in the table below.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graphmem/dsa.h"
#include "graphmem/io.h"

#define FUZZ_DATA GM_TEST_DATA_DIR "/fuzz/"

typedef enum reader { R_JSON, R_ONNX, R_GE_TEXT, R_GE_OM, R_DSA_CSV } reader;

typedef struct fuzz_case {
    const char *file;   /* in tests/data/fuzz/ */
    reader via;
    gm_status expect;
    const char *why;    /* the bug it found, and where it was fixed */
} fuzz_case;

static const fuzz_case cases[] = {
    {"onnx_empty_graph.onnx", R_ONNX, GM_OK,
     "a graph with no nodes: memcpy to a NULL node array (UB), src/io/onnx_read.c order_nodes"},
    {"ge_om_empty_key.om", R_GE_OM, GM_ERR_INPUT,
     "an attribute key of no bytes: memchr on its NULL data (UB), src/io/ge_read.c read_attr_map"},
    {"ge_text_empty_key.txt", R_GE_TEXT, GM_ERR_INPUT,
     "the same in a text dump (key: \"\"), src/io/ge_read.c read_attr_map"},
};

static gm_status replay(const fuzz_case *c, const char *data, size_t len, gm_error *err)
{
    gm_model *m = NULL;
    gm_status st;
    switch (c->via) {
    case R_JSON: st = gm_model_read_json(data, len, c->file, &m, err); break;
    case R_ONNX: st = gm_model_read_onnx(data, len, c->file, NULL, &m, err); break;
    case R_GE_TEXT: st = gm_model_read_ge_text(data, len, c->file, &m, err); break;
    case R_GE_OM: st = gm_model_read_ge_om(data, len, c->file, &m, err); break;
    case R_DSA_CSV: {
        gm_dsa_buffer *b = NULL;
        size_t n = 0;
        st = gm_dsa_parse_csv(data, len, c->file, &b, &n, err);
        gm_dsa_free(b);
        return st;
    }
    default: fail_msg("unknown reader"); return GM_ERR_INTERNAL;
    }
    gm_model_free(m);
    return st;
}

static void test_fuzz_findings(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const fuzz_case *c = &cases[i];
        char path[512], *text = NULL;
        size_t len = 0;
        gm_error err;
        gm_error_clear(&err);
        snprintf(path, sizeof path, FUZZ_DATA "%s", c->file);
        if (gm_read_file(path, &text, &len, &err) != GM_OK) fail_msg("%s", err.message);
        /* Exactly len bytes, as libFuzzer passes them: gm_read_file's NUL would hide overreads. */
        char *exact = malloc(len ? len : 1);
        assert_non_null(exact);
        memcpy(exact, text, len);
        free(text);
        gm_status st = replay(c, exact, len, &err);
        free(exact);
        if (st != c->expect)
            fail_msg("%s (%s): got %s, expected %s: %s", c->file, c->why, gm_status_name(st),
                     gm_status_name(c->expect), err.message);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fuzz_findings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
