/*
 * io_reuse_check.c — CheckIoReuseAddrPairs and where its pairs come from (reference §6.10):
 * the option text ge.exec.outputReuseInputMemIndexes and the model attribute
 * output_reuse_input_mem_indexes the compiler derives from it.
 */
#include <ctype.h>
#include <stdint.h>
#include <string.h>

#include "conflict/inplace.h"
#include "ir/ir.h"
#include "runtime/io_reuse_check.h"
#include "util/alloc.h"

gm_status gm_io_reuse_check_pairs(const gm_io_reuse_pair *pairs, size_t n_pairs, gm_io_addr_getter in_addr,
                                  void *in_ctx, size_t n_in, gm_io_addr_getter out_addr, void *out_ctx, size_t n_out,
                                  gm_error *err)
{
    /* Without user buffers the executor allocates the outputs where the pairs say. */
    if (n_pairs == 0 || !in_addr || !out_addr || n_in == 0 || n_out == 0) return GM_OK;
    for (size_t k = 0; k < n_pairs; k++) {
        size_t i = pairs[k].in, o = pairs[k].out;
        if (i >= n_in || o >= n_out) {
            return gm_error_set(err, GM_ERR_INPUT,
                                "param invalid: option '%s' pair '%zu,%zu': %s index %zu is out of range (%zu %s%s)",
                                GM_OPTION_OUTPUT_REUSE_INPUT_MEM_INDEXES, i, o, i >= n_in ? "input" : "output",
                                i >= n_in ? i : o, i >= n_in ? n_in : n_out, i >= n_in ? "input" : "output",
                                (i >= n_in ? n_in : n_out) == 1 ? "" : "s");
        }
        const void *ia = in_addr(in_ctx, i), *oa = out_addr(out_ctx, o);
        if (ia != oa) {
            return gm_error_set(err, GM_ERR_INPUT,
                                "Output[%zu] address(%p) must be same as Input[%zu] address(%p) because the option "
                                "'ge.exec.outputReuseInputMemIndexes' is set with value containing '%zu,%zu', addr "
                                "reuse check not pass",
                                o, oa, i, ia, i, o);
        }
    }
    return GM_OK;
}

/* ---- the option text ---------------------------------------------------------------------- */

static const char *skip_spaces(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t')) p++;
    return p;
}

/* One decimal index in [p, end), spaces around it allowed; false on anything else. */
static bool parse_index(const char *p, const char *end, size_t *v)
{
    p = skip_spaces(p, end);
    while (end > p && (end[-1] == ' ' || end[-1] == '\t')) end--;
    if (p == end) return false;
    size_t x = 0;
    for (; p < end; p++) {
        if (!isdigit((unsigned char)*p)) return false;
        unsigned d = (unsigned)(*p - '0');
        if (x > (SIZE_MAX - d) / 10) return false;
        x = x * 10 + d;
    }
    *v = x;
    return true;
}

gm_status gm_io_reuse_parse_option(const char *text, gm_io_reuse_pair **pairs, size_t *n, gm_error *err)
{
    *pairs = NULL;
    *n = 0;
    const char *end = text + strlen(text);
    if (skip_spaces(text, end) == end) return GM_OK;
    size_t count = 1;
    for (const char *p = text; *p; p++) count += *p == '|';
    gm_io_reuse_pair *v = gm_calloc(count, sizeof *v);
    if (!v) return gm_error_set(err, GM_ERR_NOMEM, "out of memory");
    const char *p = text;
    for (size_t k = 0; k < count; k++) {
        const char *bar = memchr(p, '|', (size_t)(end - p));
        const char *stop = bar ? bar : end;
        const char *comma = memchr(p, ',', (size_t)(stop - p));
        if (!comma || !parse_index(p, comma, &v[k].in) || !parse_index(comma + 1, stop, &v[k].out)) {
            gm_free(v);
            return gm_error_set(err, GM_ERR_INPUT,
                                "option '%s': pair %zu '%.*s' is not 'input index,output index' (value '%s'; "
                                "expected pairs like '0,0|1,1')",
                                GM_OPTION_OUTPUT_REUSE_INPUT_MEM_INDEXES, k, (int)(stop - p), p, text);
        }
        p = stop + 1;
    }
    *pairs = v;
    *n = count;
    return GM_OK;
}

/* ---- the model attribute ------------------------------------------------------------------ */

gm_status gm_io_reuse_pairs_from_model(const gm_model *m, gm_io_reuse_pair **pairs, size_t *n, gm_error *err)
{
    *pairs = NULL;
    *n = 0;
    const gm_graph *root = m->n_graphs ? m->graphs[0] : NULL;
    const gm_attr *a = root ? gm_attr_find(root->attrs, GM_ATTR_OUTPUT_REUSE_INPUT_MEM_INDEXES) : NULL;
    if (!a) {
        const char *opt = gm_model_option(m, GM_OPTION_OUTPUT_REUSE_INPUT_MEM_INDEXES);
        return opt ? gm_io_reuse_parse_option(opt, pairs, n, err) : GM_OK;
    }
    if (a->kind != GM_ATTR_LIST_LIST_INT) {
        return gm_error_set(err, GM_ERR_INPUT,
                            "%s: graph '%s': attribute %s is a %s, expected a list of [input, output] pairs", m->source, root->name, GM_ATTR_OUTPUT_REUSE_INPUT_MEM_INDEXES,
                            gm_attr_kind_name(a->kind));
    }
    size_t rows = a->u.lli.n;
    if (rows == 0) return GM_OK;
    gm_io_reuse_pair *v = gm_calloc(rows, sizeof *v);
    if (!v) return gm_error_set(err, GM_ERR_NOMEM, "%s: out of memory", m->source);
    for (size_t r = 0; r < rows; r++) {
        const int64_t *row = a->u.lli.rows[r];
        if (a->u.lli.lens[r] != 2 || row[0] < 0 || row[1] < 0) {
            gm_free(v);
            return gm_error_set(err, GM_ERR_INPUT, "%s: graph '%s': attribute %s row %zu is not [input index, output "
                                "index] (two non-negative ints)", m->source, root->name,
                                GM_ATTR_OUTPUT_REUSE_INPUT_MEM_INDEXES, r);
        }
        v[r].in = (size_t)row[0];
        v[r].out = (size_t)row[1];
    }
    *pairs = v;
    *n = rows;
    return GM_OK;
}
